"""The goal progress check: the model of control.md S5.8 (bend/progress.bend of the seed:
work, check, goal).

Read it next to 000_f7323c157e80a40d.txt, S5.8 item 1.

- ``work``: the session's work is the number of its distinct acts. An act is a tool call
  with its result, keyed by the tool name, the arguments, the result text and the error
  flag, or an accepted progress note. Call ids, timestamps and the text and thinking
  around a call are no work, so they are not part of the key. The ledger is the tuple of
  distinct acts in the order first seen.
- ``check``: at each continuation of an active goal, compare the work with the work at the
  last continuation of the same run and goal. The first continuation of a run, or of a new
  goal, starts the count (count 0: there is no earlier continuation of that run and goal to
  compare with). The work grew: the count goes back to 0 and the goal continues. It did
  not grow: the count grows by 1; under the cap the goal continues with the note (how many
  continuations in a row did no new work, and that the goal pauses at the cap); at the cap
  the goal pauses with the reason ``No progress: <n> goal continuations in a row made no
  tool call with a new result``.
- The cap is directors.stallSteps (default 3; 0 takes the default).
- ``goal``: a new user input or a resume gives the goal the full cap again: the record is
  dropped, so the next continuation starts the count.

The transcript printer is the model side of the progress bridge; ``__main__`` prints the
transcript of a scenario file (BRIDGE_MODEL_CMD).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass

DEFAULT_STALL_STEPS = 3  # directors.stallSteps (S4 table, S5.8)

CALL, NOTE = "call", "note"
GO_ON, NOTED, PAUSE = "continue", "note", "pause"


@dataclass(frozen=True)
class Act:
    """A distinct act: a call (tool, arguments as canonical JSON, result text, error flag) or
    an accepted progress note (its text in ``result``)."""

    kind: str
    tool: str
    args: str
    result: str
    error: bool


Ledger = tuple[Act, ...]


@dataclass(frozen=True)
class Record:
    """The stall record of a goal: the run and goal it counts for, the work at its last
    continuation, and the continuations in a row with no new work."""

    run: str
    goal: str
    work: int
    count: int


@dataclass(frozen=True)
class Check:
    record: Record
    verdict: str
    count: int


def call_act(tool: str, args: str, result: str, error: bool) -> Act:
    return Act(CALL, tool, args, result, error)


def note_act(text: str) -> Act:
    return Act(NOTE, "", "", text, False)


def record_act(ledger: Ledger, act: Act) -> Ledger:
    """The ledger after an act: it grows only by an act it does not hold."""
    for seen in ledger:
        if seen == act:
            return ledger
    return ledger + (act,)


def work(ledger: Ledger) -> int:
    return len(ledger)


def stall_cap(stall_steps: int) -> int:
    """directors.stallSteps; 0 takes the default."""
    if stall_steps <= 0:
        return DEFAULT_STALL_STEPS
    return stall_steps


def check(record: Record | None, run: str, goal: str, now: int, stall_steps: int) -> Check:
    """S5.8 item 1: one continuation of an active goal.

    post: (__return__.verdict == PAUSE) == (__return__.count >= stall_cap(stall_steps))
    post: __return__.count == 0 or (record is not None and now <= record.work)
    """
    cap = stall_cap(stall_steps)
    if record is None or record.run != run or record.goal != goal:
        return Check(Record(run, goal, now, 0), GO_ON, 0)
    if now > record.work:
        return Check(Record(run, goal, now, 0), GO_ON, 0)
    count = record.count + 1
    if count >= cap:
        return Check(Record(run, goal, now, count), PAUSE, count)
    return Check(Record(run, goal, now, count), NOTED, count)


def note_text(count: int, stall_steps: int) -> str:
    """The continuation note under the cap."""
    cap = stall_cap(stall_steps)
    plural = "" if count == 1 else "s"
    return (
        f"Progress check: {count} goal continuation{plural} in a row made no tool call with a new result. "
        f"The goal pauses at {cap}. Take one concrete step now."
    )


def pause_reason(count: int) -> str:
    """The pause reason at the cap (S5.8, exact words)."""
    return f"No progress: {count} goal continuations in a row made no tool call with a new result"


# -- the bridge transcript -------------------------------------------------------------------


def canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def transcript(events: list[dict[str, object]]) -> list[str]:
    """The model side of the progress bridge.

    Events: {"op": "call", "id", "at", "tool", "args", "result", "error", "text"} (a tool
    call with its result; id, at and text are no work); {"op": "text", "text"} (text or
    thinking around calls); {"op": "calls", "calls": [...]} (parallel calls whose results come
    back in the other order); {"op": "orphan", "id", "result", "error"} (a result of a call the
    transcript does not hold: no act); {"op": "note", "text", "accepted"}; {"op": "continue", "run",
    "goal", "cap"}; {"op": "input"} and {"op": "resume"} (the goal gets the full cap again).
    """
    lines: list[str] = []
    ledger: Ledger = ()
    record: Record | None = None
    for number, event in enumerate(events):
        op = event.get("op")
        if op == "call":
            before = work(ledger)
            act = call_act(str(event["tool"]), canonical(event["args"]), str(event["result"]), bool(event["error"]))
            ledger = record_act(ledger, act)
            lines.append(f"{number} call work={work(ledger)} new={'yes' if work(ledger) > before else 'no'}")
        elif op == "calls":
            before = work(ledger)
            calls = event["calls"]
            if not isinstance(calls, list):
                raise ValueError("calls is a list")
            for item in reversed(calls):  # the results come back in the other order
                ledger = record_act(ledger, call_act(str(item["tool"]), canonical(item["args"]), str(item["result"]), bool(item["error"])))
            lines.append(f"{number} calls work={work(ledger)} new={work(ledger) - before}")
        elif op == "orphan":
            lines.append(f"{number} orphan work={work(ledger)}")
        elif op == "note":
            before = work(ledger)
            if event.get("accepted") is True:
                ledger = record_act(ledger, note_act(str(event["text"])))
            lines.append(f"{number} note work={work(ledger)} new={'yes' if work(ledger) > before else 'no'}")
        elif op == "text":
            lines.append(f"{number} text work={work(ledger)}")
        elif op == "continue":
            stall_steps = int(str(event["cap"]))
            result = check(record, str(event["run"]), str(event["goal"]), work(ledger), stall_steps)
            record = result.record
            line = f"{number} continue work={work(ledger)} count={result.count} verdict={result.verdict}"
            if result.verdict == NOTED:
                line += " note=" + note_text(result.count, stall_steps)
            elif result.verdict == PAUSE:
                line += " reason=" + pause_reason(result.count)
            lines.append(line)
        elif op in ("input", "resume"):
            record = None
            lines.append(f"{number} {op} full cap")
        else:
            raise ValueError(f"event {number}: unknown op {op!r}")
    return lines


if __name__ == "__main__":
    from bend import scenario

    raise SystemExit(scenario.main(transcript, sys.argv[1:]))
