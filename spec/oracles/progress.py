"""The judge of the progress laws, transcribed from control.md S5.8 (never from bend/progress.py
or impl/eukhe/directors/progress.py).

S5.8 item 1: "the number of its distinct acts (a tool call with its result, by tool name,
arguments, result text and error flag; or an accepted progress note). Call ids, timestamps,
and the text and thinking around a call are no work." The check: the work grew -> the count
goes back to 0 and the goal continues; it did not grow -> the count grows by 1; under the cap
the goal continues with the note; at the cap (directors.stallSteps, default 3; 0 takes the
default) the goal pauses. The first continuation of a run, or of a new goal, starts the count.
"""

from __future__ import annotations

import json
from typing import Any

DEFAULT_STALL_STEPS = 3
VERDICTS = ("continue", "note", "pause")


def act_key(tool: str, arguments: Any, result: str, error: bool) -> tuple[Any, ...]:
    """A tool call with its result: what makes it one act (arguments compared as JSON values)."""
    return ("call", tool, json.dumps(arguments, sort_keys=True), result, error)


def note_key(text: str) -> tuple[Any, ...]:
    return ("note", text)


def work(acts: list[tuple[Any, ...]]) -> int:
    """The number of distinct acts."""
    return len(set(acts))


def cap(stall_steps: int) -> int:
    return DEFAULT_STALL_STEPS if stall_steps == 0 else stall_steps


def verdict(first: bool, grew: bool, count: int, stall_steps: int) -> tuple[str, int]:
    """(verdict, count after) of one continuation, from the count before it."""
    if first or grew:
        return "continue", 0
    after = count + 1
    return ("pause" if after >= cap(stall_steps) else "note"), after


def pause_reason(count: int) -> str:
    """S5.8, word for word."""
    return f"No progress: {count} goal continuations in a row made no tool call with a new result"
