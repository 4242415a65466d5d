"""The progress bridge (S5.8 tie): the work ledger and the stall check of
impl/eukhe/directors/progress.py against bend/progress.py, over generated transcripts of tool
calls (calls with ids, timestamps and text around them, repeats, error flags, progress notes,
continuations of runs and goals, new inputs and resumes), byte for byte.

The production printer drives eukhe.directors.progress only (it never imports bend).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from bend.progress import transcript as model_transcript
from bridge.core import Bridge, Event
from eukhe.directors.progress import (
    NOTE,
    PAUSE,
    StallRecord,
    WorkLedger,
    continuation_note,
    pause_reason,
    stall_check,
)

CASES = frozenset(
    {
        "new_call",
        "repeated_call",
        "error_flag_is_work",
        "text_is_no_work",
        "note_accepted",
        "note_refused",
        "first_continuation",
        "work_grew",
        "stall_note",
        "stall_pause",
        "new_goal_restarts",
        "new_run_restarts",
        "input_full_cap",
        "resume_full_cap",
        "default_cap",
    }
)


def production(events: Sequence[Event]) -> list[str]:
    lines: list[str] = []
    ledger = WorkLedger()
    record: StallRecord | None = None
    for number, event in enumerate(events):
        op = event["op"]
        if op == "call":
            new = ledger.call(str(event["tool"]), event["args"], str(event["result"]), bool(event["error"]))
            lines.append(f"{number} call work={ledger.work} new={'yes' if new else 'no'}")
        elif op == "note":
            new = ledger.note(str(event["text"]), accepted=event.get("accepted") is True)
            lines.append(f"{number} note work={ledger.work} new={'yes' if new else 'no'}")
        elif op == "text":
            lines.append(f"{number} text work={ledger.work}")
        elif op == "continue":
            cap = int(event["cap"])
            checked = stall_check(record, str(event["run"]), str(event["goal"]), ledger.work, cap)
            record = checked.record
            line = f"{number} continue work={ledger.work} count={checked.count} verdict={checked.verdict}"
            if checked.verdict == NOTE:
                line += " note=" + continuation_note(checked.count, cap)
            elif checked.verdict == PAUSE:
                line += " reason=" + pause_reason(checked.count)
            lines.append(line)
        elif op in ("input", "resume"):
            record = None
            lines.append(f"{number} {op} full cap")
        else:
            raise ValueError(f"event {number}: unknown op {op!r}")
    return lines


def reached(events: Sequence[Event]) -> set[str]:
    found: set[str] = set()
    ledger = WorkLedger()
    record: StallRecord | None = None
    keys: dict[tuple[str, str, str], set[bool]] = {}
    reset_by = ""
    for event in events:
        op = event["op"]
        if op == "call":
            key = (str(event["tool"]), repr(event["args"]), str(event["result"]))
            flags = keys.setdefault(key, set())
            new = ledger.call(str(event["tool"]), event["args"], str(event["result"]), bool(event["error"]))
            if new and flags and bool(event["error"]) not in flags:
                found.add("error_flag_is_work")
            flags.add(bool(event["error"]))
            found.add("new_call" if new else "repeated_call")
        elif op == "note":
            accepted = event.get("accepted") is True
            ledger.note(str(event["text"]), accepted=accepted)
            found.add("note_accepted" if accepted else "note_refused")
        elif op == "text":
            found.add("text_is_no_work")
        elif op == "continue":
            run, goal, cap = str(event["run"]), str(event["goal"]), int(event["cap"])
            if record is None:
                found.add("first_continuation")
                if reset_by:
                    found.add(f"{reset_by}_full_cap")
            elif record.run != run:
                found.add("new_run_restarts")
            elif record.goal != goal:
                found.add("new_goal_restarts")
            elif ledger.work > record.work:
                found.add("work_grew")
            checked = stall_check(record, run, goal, ledger.work, cap)
            if checked.verdict == NOTE:
                found.add("stall_note")
            elif checked.verdict == PAUSE:
                found.add("stall_pause")
            if cap == 0:
                found.add("default_cap")
            record = checked.record
            reset_by = ""
        elif op in ("input", "resume"):
            reset_by = str(op)
            record = None
    return found


TOOLS = ["bash", "read", "edit"]
ARGS: list[Any] = [{"cmd": "make"}, {"path": "a.py"}, {"path": "b.py", "line": 3}, {"cmd": "make", "j": 2}, ["x", 1]]
RESULTS = ["ok", "", "error: no such file", "3 passed"]


def generate(index: int) -> list[Event]:
    rng = random.Random(f"progress-{index}")
    events: list[Event] = []
    cap = rng.choice([0, 1, 2, 3, 3, 4, 5])
    run, goal = 1, 1
    calls: list[dict[str, Any]] = []
    clock = 1_700_000_000 + index * 1000
    active_bias = rng.random()
    for step in range(rng.randint(8, 40)):
        clock += rng.randint(1, 30)
        roll = rng.random()
        if roll < 0.28 * (1 - active_bias / 2):
            if calls and rng.random() < 0.45:
                # the same act again: a new call id, a new timestamp, new text around it
                call = dict(rng.choice(calls))
            else:
                call = {
                    "tool": rng.choice(TOOLS),
                    "args": rng.choice(ARGS),
                    "result": rng.choice(RESULTS),
                    "error": rng.random() < 0.25,
                }
                calls.append(call)
            events.append({"op": "call", "id": f"call_{step}", "at": clock, "text": rng.choice(["", "let me run it", "again"]), **call})
        elif roll < 0.36:
            events.append({"op": "text", "text": rng.choice(["thinking...", "waiting for the build", "the plan: 1. 2. 3."])})
        elif roll < 0.42:
            events.append({"op": "note", "text": rng.choice(["tests pass", "step two done"]), "accepted": rng.random() < 0.7})
        elif roll < 0.90:
            events.append({"op": "continue", "run": f"run-{run}", "goal": f"goal-{goal}", "cap": cap})
        elif roll < 0.94:
            run += 1
            events.append({"op": rng.choice(["input", "input", "text"]), "text": "next"})
            if events[-1]["op"] == "input":
                del events[-1]["text"]
        elif roll < 0.97:
            events.append({"op": "resume"})
        else:
            goal += 1
    return events


BRIDGE = Bridge(
    area="progress",
    count=200,
    generate=generate,
    model=model_transcript,
    production=production,
    cases=CASES,
    reached=reached,
)
