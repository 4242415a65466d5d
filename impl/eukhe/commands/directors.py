"""`eukhe directors simulate --script FILE`: run the Director loop (S5, S5.8) over a scripted
sequence of model replies in a real session directory, and print each step's verdicts,
decision, continuation and display rows.

The script is JSON Lines; each line is one object with exactly one of these keys:

    {"input": "text"}             a new first input: a user entry and a new loop (begin)
    {"goal": "objective"}         set an active goal
    {"goal_status": "paused"}     set the goal's status (active resumes with the full cap)
    {"autonomous": true}          enable (or disable) the autonomous run
    {"command": "/remind text"}   a session slash command: /remind, /force <tool> [--tries n]
    {"reply": {"text": "...", "tool_calls": [{"name": "bash", "arguments": {...},
               "result": "...", "error": false}], "note": "accepted progress note"}}
                                  one generation: its forced request, its calls and results,
                                  then the step of its final answer

A line that is not such an object is a usage error naming the line (exit status 2).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

KEYS = ("input", "goal", "goal_status", "autonomous", "command", "reply")


def register(sub: Any) -> None:
    top = sub.add_parser("directors", help="the Director stack: simulate the loop over a script")
    actions = top.add_subparsers(dest="action", required=True)
    simulate = actions.add_parser("simulate", help="run the loop over scripted model replies in a real session")
    simulate.add_argument("--script", required=True, type=Path, help="JSON Lines script of inputs, commands and replies")
    simulate.add_argument("--session-dir", help="the sessions dir (else EUKHE_SESSION_DIR, sessionDir, <agent dir>/sessions)")
    simulate.add_argument("--max-steps", type=int, default=None, help="directors.maxSteps (default 200)")
    simulate.add_argument("--stack-cap", type=int, default=None, help="directors.stackCap (default 8)")
    simulate.add_argument("--stall-steps", type=int, default=None, help="directors.stallSteps (default 3)")
    simulate.set_defaults(run=run_simulate)


def _parse(path: Path) -> list[tuple[int, str, Any]]:
    from eukhe.cli import UsageError

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise UsageError(f"eukhe directors simulate: cannot read {path}: {error.strerror}") from None
    steps: list[tuple[int, str, Any]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            raise UsageError(f"{path}:{number}: not JSON: {error.msg}") from None
        if not isinstance(value, dict) or len(value) != 1 or next(iter(value)) not in KEYS:
            raise UsageError(f"{path}:{number}: expected an object with one of the keys {', '.join(KEYS)}")
        key, body = next(iter(value.items()))
        problem = _check(key, body)
        if problem:
            raise UsageError(f"{path}:{number}: {problem}")
        steps.append((number, key, body))
    return steps


def _check(key: str, body: Any) -> str:
    if key in ("input", "goal", "goal_status", "command"):
        return "" if isinstance(body, str) else f"{key} must be a string"
    if key == "autonomous":
        return "" if isinstance(body, bool) else "autonomous must be true or false"
    if not isinstance(body, dict) or not set(body) <= {"text", "tool_calls", "note"}:
        return "reply must be an object with text, tool_calls and note"
    if not isinstance(body.get("text", ""), str) or not isinstance(body.get("note", ""), str):
        return "reply text and note must be strings"
    calls = body.get("tool_calls", [])
    if not isinstance(calls, list):
        return "tool_calls must be a list"
    for call in calls:
        if not isinstance(call, dict) or not isinstance(call.get("name"), str) or not isinstance(call.get("result", ""), str):
            return "each tool call needs a name and a string result"
        if not isinstance(call.get("error", False), bool):
            return "a tool call's error must be true or false"
    return ""


def run_simulate(args: argparse.Namespace) -> int:
    from eukhe.cli import UsageError
    from eukhe.directors.commands import CommandError, session_command
    from eukhe.directors.hooks import DirectorLimits, Directors, ForcedToolError, PushRefused, Reply
    from eukhe.paths import agent_dir, session_dir
    from eukhe.settings.agent import CvarAgent, EukheSettings
    from eukhe.session import Store, assistant, row, tool_call, tool_result, user

    script = _parse(args.script)
    if not script:
        raise UsageError(f"{args.script}: the script has no lines")
    store = Store(session_dir(args.session_dir, agent_dir_flag=getattr(args, "agent_dir", None)))
    runs = 0
    generations = 0
    calls = 0
    with store.create() as session:
        main = session.conversation("main")
        settings = EukheSettings(agent_dir(getattr(args, "agent_dir", None)), Path.cwd())
        configured = DirectorLimits.of(CvarAgent(settings, main).value)
        limits = replace(
            configured,
            stack_cap=configured.stack_cap if args.stack_cap is None else args.stack_cap,
            max_steps=configured.max_steps if args.max_steps is None else args.max_steps,
            stall_steps=configured.stall_steps if args.stall_steps is None else args.stall_steps,
        )
        directors = Directors(main, limits)
        print(f"session {session.id} in {session.dir}")
        for number, key, body in script:
            if key == "input":
                runs += 1
                main.commit([user(body)])
                stack = directors.begin(f"run-{runs}")
                print(f"line {number}: input -> new loop run-{runs}, stack {_show(stack)}")
            elif key == "goal":
                directors.set_goal(body, f"goal-{number}")
                print(f"line {number}: goal set: {body}")
            elif key == "goal_status":
                directors.set_goal_status(body)
                print(f"line {number}: goal {body}")
            elif key == "autonomous":
                directors.set_autonomous(body)
                print(f"line {number}: autonomous {'enabled' if body else 'disabled'}")
            elif key == "command":
                try:
                    session_command(directors, body)
                except (CommandError, PushRefused) as error:
                    print(f"line {number}: {body} refused: {error}")
                else:
                    print(f"line {number}: {body} -> stack {_show(directors.stack())}")
            else:
                generations += 1
                forced = directors.before_request()
                made = []
                for call in body.get("tool_calls", []):
                    calls += 1
                    call_id = f"call-{calls}"
                    made.append(call["name"])
                    main.commit(
                        [
                            tool_call({"id": call_id, "name": call["name"], "arguments": call.get("arguments", {})}),
                            tool_result({"call_id": call_id, "text": call.get("result", ""), "is_error": call.get("error", False)}),
                        ]
                    )
                if body.get("note"):
                    main.commit([row("eukhe.progress_note", {"text": body["note"], "accepted": True})])
                main.commit([assistant({"text": body.get("text", "")})])
                if forced is not None:
                    try:
                        retry = directors.after_response(called=forced in made)
                    except ForcedToolError as error:
                        print(f"line {number}: forced {forced}: {error}")
                        _rows(main, number)
                        continue
                    print(f"line {number}: forced {forced}: {'called' if forced in made else 'missed, retried' if retry else 'missed'}")
                    if retry:
                        continue
                step = directors.on_yield(f"gen-{generations}", Reply(body.get("text", ""), len(made)))
                print(
                    f"line {number}: step verdicts=[{', '.join(step.verdicts)}] decision={step.decision.value} "
                    f"rule={step.rule} stack {_show(directors.stack())}"
                )
                if step.continuation:
                    print("  continuation: " + " / ".join(part for part in step.continuation.splitlines() if part))
                if step.error:
                    print(f"  error: {step.error}")
                for text in step.rows:
                    print(f"  row eukhe.director: {text}")
    return 0


def _show(stack: list[Any]) -> str:
    return "[" + ", ".join(f"{layer.kind.value}:{layer.budget}" for layer in stack) + "]"


def _rows(main: Any, number: int) -> None:
    last = main.user_view()[-1]
    if last.display_only:
        print(f"  row {last.custom_type}: {last.content.get('message') if isinstance(last.content, dict) else last.content}")
