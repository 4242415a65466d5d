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
        'if line == "":\n            break',
        'if line == "":\n            continue',
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

# Production's line builder and its follow-up (eukhe.memory.compactor, eukhe.memory.prompts):
# caught by the compactor bridge (live compactor over loopback against bend.compactor) and by
# the line laws run on production.
PRODUCTION = "eukhe.memory.compactor"

BREAKS += [
    Break(
        "compactor_live_repeated_line_goes_on",
        AREA,
        PRODUCTION,
        "if not line or (best is not None and size(line) >= size(best)):",
        "if not line or (best is not None and size(line) > size(best)):",
        "production asks again after a repeated line: the bridge's repeated-line scenarios and line_stops_when_not_shorter on production fail",
    ),
    Break(
        "compactor_live_six_tries",
        AREA,
        PRODUCTION,
        "if size(line) <= NODE or len(self.calls) >= TRIES:",
        "if size(line) <= NODE or len(self.calls) > TRIES:",
        "production makes a sixth call: the bridge's five-call scenarios and line_calls_at_most_tries on production fail",
    ),
    Break(
        "compactor_follow_up_shows_511_bytes",
        AREA,
        "eukhe.memory.prompts",
        "cutting the least valuable items.\\n{cut(line)}{LIMIT_MARK}",
        "cutting the least valuable items.\\n{cut(line, NODE - 1)}{LIMIT_MARK}",
        "the follow-up shows 511 bytes before the marker: the bridge's follow-ups differ from the model's",
    ),
]

# The cache measure (issue 12 item 9: eukhe.commands.memory_cache) and the loopback server's
# prompt-cache model (spec.loopback): caught by tests/compactor/test_compactor_cache.py and
# tests/compactor/test_prompt_cache_model.py.
BREAKS += [
    Break(
        "compactor_cache_kind_apart_from_size",
        AREA,
        "eukhe.commands.memory_cache",
        "    return KINDS[size_class], length\n",
        "    return list(KINDS.values())[int(r.random() * 4)], length\n",
        "the simulated kind is drawn apart from the size (user words up to 30 KB): a_message_kind_follows_its_size_class fails",
    ),
    Break(
        "compactor_cache_bodyless_is_a_turn",
        AREA,
        "eukhe.commands.memory_cache",
        '            return "other"  #',
        '            return "turn:first"  #',
        "a body the server could not read counts as a turn: a_call_relates_to_the_call_before_of_its_kind fails",
    ),
    Break(
        "compactor_cache_no_minimum",
        AREA,
        "spec.loopback",
        "if marked and ends[k] >= self.minimum]",
        "if marked]",
        "a mark below the minimum cacheable length writes an entry: below_the_minimum_a_mark_writes_nothing fails",
    ),
    Break(
        "compactor_cache_lookback_21",
        AREA,
        "spec.loopback",
        "LOOKBACK = 20  #",
        "LOOKBACK = 21  #",
        "a mark looks 21 blocks back: the_lookback_is_twenty_blocks_counting_the_marks_own fails",
    ),
]

# The wire client's connections (issue 12: the 3,000-message simulation ran out of pooled
# connections): caught by tests/compactor/test_compactor_connections.py.
WIRE = "eukhe.inference.wire.base"

BREAKS += [
    Break(
        "compactor_wire_close_cancelled",
        AREA,
        WIRE,
        "    await asyncio.shield(task)\n",
        "    await task\n",
        "a call cancelled while its response closes cancels the close: the pool holds the connection for ever (PoolTimeout)",
    ),
    Break(
        "compactor_wire_body_not_drained",
        AREA,
        WIRE,
        "await _release(response, items if ended else None, items)",
        "await _release(response, None, items)",
        "the body after the end event is not read: each call closes its connection and opens a new one (no reuse)",
    ),
    Break(
        "compactor_wire_closing_leaves_stream_open",
        AREA,
        WIRE,
        '        close = getattr(events, "aclose", None)\n        if close is not None:\n            await close()\n',
        '        close = None\n',
        "a consumer leaving a stream early inside closing keeps the request open until garbage collection",
    ),
]
