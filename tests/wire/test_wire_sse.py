"""The one SSE reader: line ends, comments, multi-line data, events split anywhere, an event cut
at the end of the body discarded."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from hypothesis import given
from hypothesis import strategies as st

from eukhe.inference.wire.sse import SseEvent, SseParser, read_sse

BODY = "event: a\ndata: one\n\n: a comment\ndata: two\ndata: lines\r\n\r\nid: 7\nevent: b\ndata:three\r\rdata: cut"
EVENTS = [SseEvent("a", "one"), SseEvent("message", "two\nlines"), SseEvent("b", "three", "7")]


def test_fields_comments_and_line_ends() -> None:
    assert SseParser().feed(BODY) == EVENTS


@given(st.lists(st.integers(min_value=0, max_value=len(BODY)), max_size=12))
def test_an_event_split_anywhere_reads_the_same(cuts: list[int]) -> None:
    parser = SseParser()
    out: list[SseEvent] = []
    points = sorted(set(cuts))
    for start, end in zip([0, *points], [*points, len(BODY)]):
        out.extend(parser.feed(BODY[start:end]))
    assert out == EVENTS


def test_an_event_open_at_the_end_is_discarded() -> None:
    async def pieces() -> AsyncIterator[str]:
        for piece in ("data: whole\n\n", "data: half"):
            yield piece

    async def run() -> list[SseEvent]:
        return [e async for e in read_sse(pieces())]

    assert asyncio.run(run()) == [SseEvent("message", "whole")]


def test_an_event_with_no_data_is_not_dispatched() -> None:
    assert SseParser().feed("event: ping\n\nretry: 5\n\n") == []
