"""The goal progress check of control.md S5.8: the work ledger and the stall check.

Production twin of bend/progress.py (tied by the progress bridge, never importing it).

The ledger keeps the distinct acts of a session: a tool call with its result, keyed by
(tool name, canonical arguments, result text, error flag), or an accepted progress note.
Call ids, timestamps and the text and thinking around calls are not part of the key, so
they are no work. The stall check compares the work at each continuation of an active goal
with the work at the last continuation of the same run and goal (S5.8 item 1).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

DEFAULT_STALL_STEPS = 3


def canonical_args(args: Any) -> str:
    return json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class WorkLedger:
    """The distinct acts of a session; ``work`` is their number."""

    def __init__(self) -> None:
        self._acts: set[tuple[str, str, str, str, bool]] = set()

    def call(self, tool: str, args: Any, result: str, error: bool) -> bool:
        """Record a tool call with its result; True when it is a new act."""
        key = ("call", tool, canonical_args(args), result, bool(error))
        if key in self._acts:
            return False
        self._acts.add(key)
        return True

    def note(self, text: str, accepted: bool = True) -> bool:
        """Record a progress note; only an accepted note is an act."""
        if not accepted:
            return False
        key = ("note", "", "", text, False)
        if key in self._acts:
            return False
        self._acts.add(key)
        return True

    @property
    def work(self) -> int:
        return len(self._acts)


@dataclass(frozen=True)
class StallRecord:
    run: str
    goal: str
    work: int
    count: int

    def to_json(self) -> dict[str, Any]:
        return {"run": self.run, "goal": self.goal, "work": self.work, "count": self.count}

    @staticmethod
    def from_json(value: Any) -> StallRecord | None:
        if not isinstance(value, dict):
            return None
        return StallRecord(str(value["run"]), str(value["goal"]), int(value["work"]), int(value["count"]))


CONTINUE, NOTE, PAUSE = "continue", "note", "pause"


@dataclass(frozen=True)
class StallCheck:
    record: StallRecord
    verdict: str
    count: int


def stall_cap(stall_steps: int) -> int:
    """directors.stallSteps; 0 takes the default 3."""
    return stall_steps if stall_steps > 0 else DEFAULT_STALL_STEPS


def stall_check(record: StallRecord | None, run: str, goal: str, work: int, stall_steps: int) -> StallCheck:
    cap = stall_cap(stall_steps)
    if record is None or (record.run, record.goal) != (run, goal):
        return StallCheck(StallRecord(run, goal, work, 0), CONTINUE, 0)
    if work > record.work:
        return StallCheck(StallRecord(run, goal, work, 0), CONTINUE, 0)
    count = record.count + 1
    verdict = PAUSE if count >= cap else NOTE
    return StallCheck(StallRecord(run, goal, work, count), verdict, count)


def continuation_note(count: int, stall_steps: int) -> str:
    cap = stall_cap(stall_steps)
    noun = "continuation" if count == 1 else "continuations"
    return (
        f"Progress check: {count} goal {noun} in a row made no tool call with a new result. "
        f"The goal pauses at {cap}. Take one concrete step now."
    )


def pause_reason(count: int) -> str:
    return f"No progress: {count} goal continuations in a row made no tool call with a new result"


def pause_row(count: int) -> str:
    """The display row (eukhe.director) that tells the user why the goal paused and how to go on."""
    return (
        f"Goal paused. {pause_reason(count)}. "
        "Send a message or resume the goal to give it the full progress cap again."
    )
