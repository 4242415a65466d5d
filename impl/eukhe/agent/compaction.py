"""Session compaction (inference.md S6.6) for the turn loop.

Before each request the loop asks ``Compaction.before_request`` with the request's input-token
estimate. The verdict is the compaction threshold's (``eukhe.inference.threshold``: limit =
contextWindow - reserve, threshold = limit - 10% of the window for an eukhe session):

- over the threshold: a background compaction starts, unless one runs or a summary waits to be
  placed (S6.6: a queued summary starts no new one). It summarizes the model view up to the kept
  tail: the newest ``keep`` tokens (compaction.keepRecentTokens, at most half the threshold),
  widened back to the user entry that starts them, so a tool call is never cut from its result.
  A summary placed before is sent first, so the new summary keeps the history it held (what it
  covers is no longer in the view). Its summary is queued, and placed at the next run boundary
  (the start of the next run).
- over the limit: the request waits for the compaction (started if none runs) and the summary is
  placed at once, since the request cannot be sent as it is.

A placed summary is the conversation's ``eukhe.compaction`` row (``{"summary", "first_kept"}``):
the model view from then on is the summary as a user message, then the entries from
``first_kept`` on (``view``). Each placement is a ``compaction`` row to the clients
(compaction_end). A compaction whose request fails leaves nothing queued; a later request over
the threshold starts another. compaction.enabled false compacts nothing.

Derived, where the seeds are silent: the local estimate is the request's JSON bytes over 4 (a
token is about 4 bytes of English text); the reserve is the model's maxTokens (the reply's
room); a queued summary lives in the agent process (a restart forgets it, and the next request
over the threshold compacts again).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from eukhe.inference import threshold
from eukhe.session import Entry, Kind

COMPACTION_ROW = "eukhe.compaction"
SUMMARY_PROMPT = (
    "Summarize the conversation above for whoever continues the work: the task, what was done, what was found, "
    "and what is left. Answer with the summary only."
)
SUMMARY_INTRO = "The conversation before this point, summarized:\n\n"
BYTES_PER_TOKEN = 4


@dataclass(frozen=True)
class Summary:
    text: str
    first_kept: int  # the id of the first entry the summary does not cover


def estimate(value: Any) -> int:
    """The local input-token estimate of a request's parts (JSON bytes over 4, rounded up)."""
    size = len(json.dumps(value, ensure_ascii=False, default=repr).encode("utf-8"))
    return -(-size // BYTES_PER_TOKEN)


def compacted(entries: Sequence[Entry]) -> tuple[str | None, list[Entry]]:
    """The model view after the last placed summary: its text (None when none was placed) and
    the entries from its ``first_kept`` on."""
    for place in range(len(entries) - 1, -1, -1):
        entry = entries[place]
        if entry.kind is Kind.CUSTOM and entry.custom_type == COMPACTION_ROW and isinstance(entry.content, dict):
            kept = entry.content.get("first_kept")
            first = kept if isinstance(kept, int) else 0
            return str(entry.content.get("summary", "")), [e for e in entries[:place] if e.id >= first] + list(entries[place + 1 :])
    return None, list(entries)


def kept_from(entries: Sequence[Entry], keep: int) -> int | None:
    """The place of the first kept entry: at most the newest ``keep`` tokens, from the first user
    entry among them (a turn is never cut, so a call keeps its result); None when no user entry
    starts such a tail after something to summarize."""
    tokens = 0
    cut = len(entries)
    while cut > 0 and tokens + estimate(entries[cut - 1].content) <= keep:
        cut -= 1
        tokens += estimate(entries[cut].content)
    while cut < len(entries) and entries[cut].kind is not Kind.USER:
        cut += 1
    return cut if 0 < cut < len(entries) else None


class Compaction:
    """The compaction of one session's agent process (the module's docstring)."""

    def __init__(
        self, policy: threshold.Policy, summarize: Callable[[str | None, list[Entry]], Awaitable[str]], told: Callable[[str], None]
    ) -> None:
        self.policy = policy
        self.summarize = summarize  # the summary of (the placed summary, the model view's entries before the kept tail)
        self.told = told  # a compaction row for the clients
        self.task: asyncio.Task[Summary | None] | None = None
        self.queued: Summary | None = None

    async def before_request(self, tokens: int, entries: Sequence[Entry]) -> Summary | None:
        """The summary to place before this request (over the limit), else None."""
        verdict = threshold.over(self.policy, tokens)
        if verdict == threshold.NONE:
            return None
        if self.task is None and self.queued is None:
            self._start(entries)
        if verdict != threshold.BLOCKING:
            return None
        if self.task is not None:
            await asyncio.shield(self.task)
        return self.take()

    def take(self) -> Summary | None:
        """The queued summary, to place now (a run boundary); None when none waits."""
        summary, self.queued = self.queued, None
        return summary

    def _start(self, entries: Sequence[Entry]) -> None:
        placed, view = compacted(entries)
        keep = threshold.threshold_for(self.policy).keep
        cut = kept_from(view, keep)
        if cut is None:
            return
        self.task = asyncio.ensure_future(self._run(placed, view[:cut], view[cut].id))

    async def _run(self, placed: str | None, covered: list[Entry], first_kept: int) -> Summary | None:
        try:
            text = (await self.summarize(placed, covered)).strip()
        except Exception as error:  # a failed compaction queues nothing; a later request starts another
            self.told(f"compaction failed: {error}")
            return None
        finally:
            self.task = None
        if not text:
            self.told("compaction failed: the summary is empty")
            return None
        self.queued = Summary(text, first_kept)
        self.told(f"compaction ready: {len(covered)} entries summarized; the summary is placed at the next run boundary")
        return self.queued
