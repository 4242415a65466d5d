"""The compactor line laws (memory.md rule 37, D9), over the pure model of the line-building
conversation ``bend.compactor`` driven by arbitrary model replies.

Each law is proved exhaustively over every sequence of up to 6 replies drawn from a finite set
of reply shapes (empty, thinking only, whitespace, short, exactly 512 bytes, 513 bytes with a
multi-byte character across the cut, longer ones of decreasing and equal lengths), and hunted
by Hypothesis over arbitrary texts (capped lengths).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

from hypothesis import strategies as st

from bend.compactor import Outcome, Reply, build_line
from spec import profiles
from spec.evidence import Evidence, all_of, also, bounded, examples
from spec.registry import TESTED, law

SECTION = "memory rule 37"
TRIES = 5  # the seed's number (rule 37), not the model's constant: a break there must show
NODE = 512  # docs/harness.md H1 as the seed uses it


def size(text: str) -> int:
    return len(text.encode("utf-8"))


def cut(text: str, limit: int = NODE) -> str:
    """The longest prefix of whole characters within ``limit`` bytes (the law's own cut)."""
    total = 0
    for index, char in enumerate(text):
        total += len(char.encode("utf-8"))
        if total > limit:
            return text[:index]
    return text
CAP = 16

SHAPES: tuple[Reply, ...] = (
    Reply(""),
    Reply("", thinking="a long thought"),
    Reply("short line\n"),
    Reply("x" * 512),
    Reply("é" * 256 + "z"),  # 513 bytes: the cut falls inside no character
    Reply("q" * 520),
    Reply("a" + "é" * 300),  # 601 bytes, the cut at 512 would split an é
    Reply("y" * 700),
    Reply("y" * 700 + " "),  # the same length once stripped
    Reply("w" * 900),
)
SOURCES = ("the input " * 80 + "ü" * 50, "tiny input")
DEPTH = 5


def domain() -> Iterator[tuple[str, tuple[Reply, ...]]]:
    for source in SOURCES:
        for length in range(DEPTH + 1):
            for replies in itertools.product(SHAPES, repeat=length):
                yield source, replies


LABEL = f"every sequence of 0..{DEPTH} replies over {len(SHAPES)} reply shapes x {len(SOURCES)} inputs (finite: shapes^length)"

# Texts are collections too: under the CrossHair backend they stay short (the long reply
# shapes still come from SHAPES).
TEXT = 40 if profiles.is_crosshair() else 700
replies = st.lists(
    st.builds(
        Reply,
        st.one_of(st.text(max_size=40), st.text(max_size=TEXT), st.just(""), st.sampled_from([s.text for s in SHAPES])),
        st.text(max_size=8),
    ),
    max_size=CAP,
)
sources = st.one_of(st.text(min_size=1, max_size=TEXT), st.sampled_from(SOURCES))


def both(check: Callable[[str, tuple[Reply, ...]], bool]) -> Evidence:
    proved = bounded(domain(), lambda case: check(case[0], case[1]), label=LABEL)
    hunted = examples(lambda source, rs: check(source, tuple(rs)), source=sources, rs=replies)
    return also(proved, hunted)


def outcome(source: str, rs: tuple[Reply, ...]) -> Outcome:
    return build_line(source, rs)


@law("line_calls_at_most_tries", SECTION, "Building one line makes at most 5 model calls.", TESTED, derivation="memory.md rule 37 (TRIES = 5)")
def line_calls_at_most_tries() -> Evidence:
    return both(lambda source, rs: 1 <= len(outcome(source, rs).calls) <= TRIES)


def _fits(source: str, rs: tuple[Reply, ...]) -> bool:
    out = outcome(source, rs)
    origin = source if out.source == "input" else min((c.line for c in out.calls if c.line), key=size)
    ok_size = size(out.line) <= NODE and (size(out.line) >= 1 or origin == "")
    return ok_size and origin.startswith(out.line) and out.line == cut(origin)


@law("line_fits", SECTION, "The line is 1-512 bytes: the shortest reply (else the input) cut to 512 bytes at a character boundary.", TESTED, derivation="memory.md rule 37 and D9; docs/harness.md H1 (every line 1-512 bytes)")
def line_fits() -> Evidence:
    return both(_fits)


def _first_fit(source: str, rs: tuple[Reply, ...]) -> bool:
    out = outcome(source, rs)
    for number, call in enumerate(out.calls):
        if call.line and size(call.line) <= NODE:
            shorter = all(size(call.line) < size(c.line) for c in out.calls[:number])
            if shorter:
                return out.line == call.line and len(out.calls) == number + 1
    return True


@law("line_takes_first_fit", SECTION, "The first reply of at most 512 bytes (shorter than every earlier one) is the line, and no call follows it.", TESTED, derivation="memory.md rule 37")
def line_takes_first_fit() -> Evidence:
    return both(_first_fit)


def _stops(source: str, rs: tuple[Reply, ...]) -> bool:
    out = outcome(source, rs)
    best: str | None = None
    for number, call in enumerate(out.calls):
        if call.line and best is not None and size(call.line) >= size(best):
            return len(out.calls) == number + 1 and out.line == cut(best)
        if call.line:
            best = call.line
    return True


@law("line_stops_when_not_shorter", "memory rule 37 / D9", "A follow-up whose reply is not shorter than the best line ends the tries; the best line is kept.", TESTED, derivation="memory.md D9")
def line_stops_when_not_shorter() -> Evidence:
    return both(_stops)


def _empty(source: str, rs: tuple[Reply, ...]) -> bool:
    out = outcome(source, rs)
    for number, call in enumerate(out.calls):
        if not call.line:
            earlier = [c.line for c in out.calls[:number] if c.line]
            want = cut(min(earlier, key=size)) if earlier else cut(source)
            return len(out.calls) == number + 1 and out.line == want
    return True


@law("line_empty_is_a_try", "memory rule 37 / D9", "An empty or thinking-only reply counts as the last try: the conversation ends with the best line, else the input cut.", TESTED, derivation="memory.md D9")
def line_empty_is_a_try() -> Evidence:
    return both(_empty)

