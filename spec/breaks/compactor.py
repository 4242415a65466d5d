"""Deliberate breaks of the compactor line model (memory.md rule 37, D9). Each must be caught
by ``pytest tests/laws -k compactor``."""

from spec.breaks import Break

AREA = "compactor"
MODEL = "bend.compactor"

BREAKS = [
    Break("compactor_six_tries", AREA, MODEL, "TRIES = 5", "TRIES = 6", "six calls: line_calls_at_most_tries fails"),
    Break(
        "compactor_not_shorter_goes_on",
        AREA,
        MODEL,
        "if best is not None and size(line) >= size(best):\n            break",
        "if best is not None and size(line) >= size(best):\n            continue",
        "a follow-up not shorter does not end the tries: line_stops_when_not_shorter fails",
    ),
    Break(
        "compactor_empty_goes_on",
        AREA,
        MODEL,
        "if not line:\n            break",
        "if not line:\n            continue",
        "an empty or thinking-only reply is not the last try: line_empty_is_a_try fails",
    ),
    Break(
        "compactor_cut_splits_characters",
        AREA,
        MODEL,
        'return text.encode("utf-8")[:limit].decode("utf-8", errors="ignore")',
        'return text.encode("utf-8")[:limit].decode("utf-8", errors="replace")',
        "the cut splits a character (a replacement character, up to 514 bytes): line_fits fails",
    ),
    Break(
        "compactor_keeps_longest",
        AREA,
        MODEL,
        "        best = line\n",
        "        best = line if best is None or size(line) > size(best) else best\n",
        "the line kept is not the shortest (with the stop rule off by one): line_takes_first_fit fails",
    ),
]
