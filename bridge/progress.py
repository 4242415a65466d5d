"""The progress bridge (S5.8 tie): the work ledger and the stall check of
impl/eukhe/directors/progress.py against bend/progress.py, over generated transcripts of tool
calls (calls with ids, timestamps and text around them, repeats, error flags, progress notes,
continuations of runs and goals, new inputs and resumes), byte for byte.

The production printer commits each event as entries of a real session (tool calls, their
results with error flags, parallel calls answered out of order, results of unknown calls,
notes) and reads the work with hooks.work_of; it never imports bend.
"""

from __future__ import annotations

import math
import random
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bend.progress import transcript as model_transcript
from bridge.core import Bridge, Event
from eukhe.directors.hooks import PROGRESS_NOTE_CUSTOM_TYPE, work_of
from eukhe.session import NewEntry, Store, assistant, row, tool_call, tool_result, user
from eukhe.directors.progress import (
    NOTE,
    PAUSE,
    StallRecord,
    WorkLedger,
    continuation_note,
    pause_reason,
    stall_check,
)

TOOLS = ["bash", "read", "edit", "", "ツール"]
ARGS: list[Any] = [{"cmd": "make"}, {"path": "a.py"}, {"path": "b.py", "line": 3}, {"cmd": "make", "j": 2}, ["x", 1], 10**30, -1,
                   {"n": -(10**30)}, {}, None]
RESULTS = ["ok", "", "error: no such file", "3 passed", "é\n"]
NOTES = ["tests pass", "step two done"]

# Scenarios WIDE_FIRST.. draw from wider tables too (scenarios before it are as first generated):
# tool names long and namespaced, arguments of every JSON kind, results and notes that are
# empty, non-ASCII or several lines.
WIDE_FIRST = 200
WIDE_TOOLS = TOOLS + ["mcp__fs__read_file", "t" * 200]
WIDE_ARGS: list[Any] = ARGS + [
    "make -j2",
    "",
    "ツール ✓ é",
    True,
    False,
    0,
    0.5,
    -0.0,
    1e308,
    5e-324,
    -(2**63),
    [],
    [[[["deep"]]]],
    {"a": {"b": {"c": [1, 2.5, None, True, "x"]}}},
    {"path": "é/ツ.py", "n": 2**64},
    {"": ""},
]
WIDE_RESULTS = RESULTS + ["ok\nline two\r\nline three", "結果: ✓", "x" * 5_000]
WIDE_NOTES = NOTES + ["", "テスト済み ✓", "step three\ndone"]
ARG_KINDS = (
    "null",
    "a boolean",
    "an integer",
    "a float",
    "a string",
    "a list",
    "an object",
    "an empty string",
    "an empty list",
    "an empty object",
    "a huge integer",
    "a negative number",
    "negative zero",
    "a huge or tiny float",
    "a non-ASCII string",
    "nesting 3 deep",
)


def _tool_label(tool: str) -> str:
    return "(empty)" if not tool else tool if len(tool) <= 40 else f"of {len(tool)} characters"


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
        "parallel_calls_out_of_order",
        "result_of_unknown_call",
        "error_result",
        # input classes (``classes``): every tool name of the tables (empty and non-ASCII among
        # them), arguments of every JSON kind (huge, negative, tiny, -0.0, empty, nested,
        # non-ASCII; a session holds no non-finite number), results and notes that are empty,
        # non-ASCII or multi-line, every cap 0..5
        "huge_or_negative_arguments",
        "unicode_or_empty_name",
        *(f"tool {_tool_label(tool)}" for tool in WIDE_TOOLS),
        *(f"arguments hold {kind}" for kind in ARG_KINDS),
        "result empty",
        "result non-ASCII",
        "result multi-line",
        "note empty",
        "note non-ASCII",
        "note multi-line",
        *(f"cap {cap}" for cap in range(6)),
    }
)


def _kinds(value: Any, depth: int = 0) -> set[str]:
    """The ARG_KINDS a JSON value holds, its nested values included."""
    found: set[str] = set()
    if depth >= 3:
        found.add("nesting 3 deep")
    if value is None:
        found.add("null")
    elif isinstance(value, bool):
        found.add("a boolean")
    elif isinstance(value, int):
        found.add("an integer")
        if abs(value) >= 2**63:
            found.add("a huge integer")
        if value < 0:
            found.add("a negative number")
    elif isinstance(value, float):
        found.add("a float")
        if value == 0 and math.copysign(1.0, value) < 0:
            found.add("negative zero")
        elif value < 0:
            found.add("a negative number")
        if value != 0 and (abs(value) >= 1e300 or abs(value) < 1e-300):
            found.add("a huge or tiny float")
    elif isinstance(value, str):
        found.add("a string")
        if not value:
            found.add("an empty string")
        if not value.isascii():
            found.add("a non-ASCII string")
    elif isinstance(value, list):
        found.add("a list" if value else "an empty list")
        for item in value:
            found |= _kinds(item, depth + 1)
    elif isinstance(value, dict):
        found.add("an object" if value else "an empty object")
        for key, item in value.items():
            found |= _kinds(key, depth + 1) - {"a string"} | _kinds(item, depth + 1)
    return found


def _text_classes(what: str, text: str) -> set[str]:
    found = set()
    if not text:
        found.add(f"{what} empty")
    if not text.isascii():
        found.add(f"{what} non-ASCII")
    if "\n" in text.rstrip("\n") or "\r" in text:
        found.add(f"{what} multi-line")
    return found


def classes(events: Sequence[Event]) -> set[str]:
    """The input classes a scenario's events hold."""
    found: set[str] = set()
    for event in events:
        op = event["op"]
        for call in event["calls"] if op == "calls" else [event] if op == "call" else []:
            found.add(f"tool {_tool_label(str(call['tool']))}")
            found |= {f"arguments hold {kind}" for kind in _kinds(call["args"])}
            found |= _text_classes("result", str(call["result"]))
        if op == "note":
            found |= _text_classes("note", str(event["text"]))
        elif op == "continue":
            found.add(f"cap {event['cap']}")
    return found


_FAST_TMP = "/dev/shm" if Path("/dev/shm").is_dir() else None


def _entries(event: Event) -> list[NewEntry]:
    """The session entries the agent loop commits for one event of a transcript."""
    op = event["op"]
    if op == "call":
        out = [assistant({"text": event["text"], "thinking": "...", "at": event["at"]})] if event.get("text") else []
        out.append(tool_call({"id": event["id"], "name": event["tool"], "arguments": event["args"], "at": event["at"]}))
        out.append(tool_result({"call_id": event["id"], "text": event["result"], "is_error": event["error"], "at": event["at"]}))
        return out
    if op == "calls":
        calls = [tool_call({"id": c["id"], "name": c["tool"], "arguments": c["args"]}) for c in event["calls"]]
        return calls + [tool_result({"call_id": c["id"], "text": c["result"], "is_error": c["error"]}) for c in reversed(event["calls"])]
    if op == "orphan":
        return [tool_result({"call_id": event["id"], "text": event["result"], "is_error": event["error"]})]
    if op == "note":
        return [row(PROGRESS_NOTE_CUSTOM_TYPE, {"text": event["text"], "accepted": event.get("accepted") is True})]
    if op == "text":
        return [assistant({"text": event["text"], "thinking": "hmm"})]
    return [user("next")] if op == "input" else []


def production(events: Sequence[Event]) -> list[str]:
    """The work is read by hooks.work_of from a real session: each event committed as entries."""
    lines: list[str] = []
    record: StallRecord | None = None
    with tempfile.TemporaryDirectory(dir=_FAST_TMP, prefix="eukhe-progress-bridge-") as root:
        with Store(Path(root)).create("progress") as session:
            main = session.conversation("main")
            work = 0
            for number, event in enumerate(events):
                op = event["op"]
                before = work
                entries = _entries(event)
                if entries:
                    main.commit(entries)
                work = work_of(main.model_view()).work
                if op in ("call", "note"):
                    lines.append(f"{number} {op} work={work} new={'yes' if work > before else 'no'}")
                elif op == "calls":
                    lines.append(f"{number} calls work={work} new={work - before}")
                elif op in ("text", "orphan"):
                    lines.append(f"{number} {op} work={work}")
                elif op == "continue":
                    cap = int(event["cap"])
                    checked = stall_check(record, str(event["run"]), str(event["goal"]), work, cap)
                    record = checked.record
                    line = f"{number} continue work={work} count={checked.count} verdict={checked.verdict}"
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
            if event["error"]:
                found.add("error_result")
            if event["args"] in (10**30, -1, {"n": -(10**30)}):
                found.add("huge_or_negative_arguments")
            if event["tool"] in ("", "ツール"):
                found.add("unicode_or_empty_name")
        elif op == "note":
            accepted = event.get("accepted") is True
            ledger.note(str(event["text"]), accepted=accepted)
            found.add("note_accepted" if accepted else "note_refused")
        elif op == "text":
            found.add("text_is_no_work")
        elif op == "calls":
            found.add("parallel_calls_out_of_order")
            for c in reversed(event["calls"]):
                ledger.call(str(c["tool"]), c["args"], str(c["result"]), bool(c["error"]))
        elif op == "orphan":
            found.add("result_of_unknown_call")
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
    return found | classes(events)


def generate(index: int) -> list[Event]:
    rng = random.Random(f"progress-{index}")
    wide = index >= WIDE_FIRST
    tools, args, results, notes = (WIDE_TOOLS, WIDE_ARGS, WIDE_RESULTS, WIDE_NOTES) if wide else (TOOLS, ARGS, RESULTS, NOTES)
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
                    "tool": rng.choice(tools),
                    "args": rng.choice(args),
                    "result": rng.choice(results),
                    "error": rng.random() < 0.25,
                }
                calls.append(call)
            events.append({"op": "call", "id": f"call_{step}", "at": clock, "text": rng.choice(["", "let me run it", "again"]), **call})
        elif roll < 0.31 and len(calls) >= 2:
            pair = [dict(rng.choice(calls)) for _ in range(2)]
            events.append({"op": "calls", "calls": [dict(c, id=f"p{step}-{i}") for i, c in enumerate(pair)]})
        elif roll < 0.33:
            events.append({"op": "orphan", "id": f"gone_{step}", "result": rng.choice(results), "error": rng.random() < 0.5})
        elif roll < 0.36:
            events.append({"op": "text", "text": rng.choice(["thinking...", "waiting for the build", "the plan: 1. 2. 3."])})
        elif roll < 0.42:
            events.append({"op": "note", "text": rng.choice(notes), "accepted": rng.random() < 0.7})
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
    count=300,
    generate=generate,
    model=model_transcript,
    production=production,
    cases=CASES,
    reached=reached,
)
