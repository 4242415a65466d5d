"""A new compaction's summary request keeps the history of the summary placed before it
(inference.md S6.6: compaction keeps the newest tokens "so history remains"): it is sent the
placed summary, then the entries it covers, and never the entries that summary replaced."""

from __future__ import annotations

import asyncio

from eukhe.agent.compaction import COMPACTION_ROW, Compaction
from eukhe.inference import threshold
from eukhe.session import Entry, Kind
from eukhe.session.entries import Json

POLICY = threshold.Policy(True, 100_000, 89_600, keep_recent=7)  # threshold 400 tokens, limit 10,400


def entry(number: int, kind: Kind, content: Json, custom_type: str | None = None) -> Entry:
    return Entry(number, number - 1 if number > 0 else None, kind, content, custom_type)


def test_a_second_compaction_is_sent_the_summary_placed_before_it() -> None:
    log = [
        entry(0, Kind.USER, "the first question, long enough"),
        entry(1, Kind.ASSISTANT, {"text": "the first answer"}),
        entry(2, Kind.USER, "task 1 of scenario 0001"),  # the first kept entry of the placed summary
        entry(3, Kind.ASSISTANT, {"text": "the second answer"}),
        entry(4, Kind.CUSTOM, {"summary": "the first question was answered", "first_kept": 2}, COMPACTION_ROW),
        entry(5, Kind.USER, "task 2 of scenario 0001"),  # 7 tokens: the kept tail of the new compaction
    ]
    asked: list[tuple[str | None, list[int]]] = []

    async def summarize(placed: str | None, covered: list[Entry]) -> str:
        asked.append((placed, [e.id for e in covered]))
        return "the first two questions were answered"

    async def run() -> None:
        compaction = Compaction(POLICY, summarize, lambda text: None)
        assert await compaction.before_request(1_000, log) is None  # over the threshold, under the limit
        assert compaction.task is not None
        await compaction.task
        summary = compaction.take()
        assert summary is not None and summary.first_kept == 5

    asyncio.run(run())
    assert asked == [("the first question was answered", [2, 3])]


def test_a_first_compaction_has_no_summary_before_it() -> None:
    log = [entry(0, Kind.USER, "the first question, long enough"), entry(1, Kind.ASSISTANT, {"text": "an answer"}), entry(2, Kind.USER, "task 1 of scenario 0001")]
    asked: list[tuple[str | None, list[int]]] = []

    async def summarize(placed: str | None, covered: list[Entry]) -> str:
        asked.append((placed, [e.id for e in covered]))
        return "a summary"

    async def run() -> None:
        compaction = Compaction(POLICY, summarize, lambda text: None)
        await compaction.before_request(1_000, log)
        assert compaction.task is not None
        await compaction.task

    asyncio.run(run())
    assert asked == [(None, [0, 1])]
