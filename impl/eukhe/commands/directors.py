"""`eukhe directors simulate --script FILE`: run the Director loop (S5, S5.8) over a scripted
sequence of model replies in a real session directory, and print each step's verdicts,
decision, continuation and display rows.
"""

from __future__ import annotations

import argparse
import errno
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr, TypeAdapter, ValidationError

SCRIPT_FORMAT = """The script is JSON Lines (UTF-8); blank lines are skipped; each other line is one
object with exactly one of these keys:

  {"input": "text"}             a new first input: a user entry and a new loop (begin)
  {"goal": "objective"}         set an active goal
  {"goal_status": "paused"}     set the goal's status: active (resumes with the full cap),
                                paused, budget_limited, complete, failed or cleared;
                                only after a goal line
  {"autonomous": true}          enable (or disable) the autonomous run
  {"command": "/remind text"}   a session slash command: /remind <text>,
                                /force <tool> [--tries n]
  {"reply": {"text": "...", "tool_calls": [{"name": "bash", "arguments": {...},
             "result": "...", "error": false}], "note": "accepted progress note"}}
                                one generation: its forced request, its calls and results,
                                then the step of its final answer (every key but a call's
                                name may be left out)

JSON numbers are finite (no NaN or Infinity), nesting at most 100 deep. A line that is not
such an object is refused before anything runs, naming FILE:LINE (exit status 2)."""

MAX_SCRIPT_BYTES = 64 * 1024 * 1024
KEYS = ("input", "goal", "goal_status", "autonomous", "command", "reply")
GOAL_STATUSES = ("active", "paused", "budget_limited", "complete", "failed", "cleared")
LIMIT_FLAGS = {"max_steps": "directors.maxSteps", "stack_cap": "directors.stackCap", "stall_steps": "directors.stallSteps"}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class ToolCall(_Strict):
    name: StrictStr = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)
    result: StrictStr = ""
    error: StrictBool = False


class ReplyBody(_Strict):
    text: StrictStr = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    note: StrictStr = ""


class InputLine(_Strict):
    input: StrictStr


class GoalLine(_Strict):
    goal: StrictStr


class GoalStatusLine(_Strict):
    goal_status: Literal["active", "paused", "budget_limited", "complete", "failed", "cleared"]


class AutonomousLine(_Strict):
    autonomous: StrictBool


class CommandLine(_Strict):
    command: StrictStr


class ReplyLine(_Strict):
    reply: ReplyBody


ScriptLine = Union[InputLine, GoalLine, GoalStatusLine, AutonomousLine, CommandLine, ReplyLine]
_LINE_OF_KEY: dict[str, type[_Strict]] = {
    "input": InputLine,
    "goal": GoalLine,
    "goal_status": GoalStatusLine,
    "autonomous": AutonomousLine,
    "command": CommandLine,
    "reply": ReplyLine,
}


def _limit(cvar: str) -> Any:
    """A flag read with the type of the cvar it stands for (directors.* are Nat)."""

    def parse(text: str) -> Any:
        from eukhe.settings.cvar_table import bound_error, registry

        decl = registry().get(cvar)
        assert decl is not None, cvar
        try:
            value = decl.type.parse(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{cvar} is a {decl.type.describe()}, not {text[:40]!r}") from None
        why = bound_error(cvar, value)  # the bound a set of the cvar takes (issue 30)
        if why is not None:
            raise argparse.ArgumentTypeError(why)
        return value

    parse.__name__ = cvar
    return parse


def register(sub: Any) -> None:
    top = sub.add_parser("directors", help="the Director stack: simulate the loop over a script")
    actions = top.add_subparsers(dest="action", required=True, parser_class=type(top), metavar="ACTION")
    simulate = actions.add_parser(
        "simulate",
        help="run the loop over scripted model replies in a real session",
        description="Run the Director loop over a script of inputs, commands and model replies, in a new "
        "session of the sessions dir, and print each step.\n\n" + SCRIPT_FORMAT,
    )
    simulate.add_argument("--script", required=True, help="the JSON Lines script (format above)")
    simulate.add_argument("--session-dir", help="the sessions dir (else EUKHE_SESSION_DIR, sessionDir, <agent dir>/sessions)")
    simulate.add_argument("--max-steps", type=_limit("directors.maxSteps"), default=None, help="directors.maxSteps, a Nat (default: the agent's value, 200)")
    simulate.add_argument("--stack-cap", type=_limit("directors.stackCap"), default=None, help="directors.stackCap, a Nat (default: the agent's value, 8)")
    simulate.add_argument("--stall-steps", type=_limit("directors.stallSteps"), default=None, help="directors.stallSteps, a Nat (default: the agent's value, 3)")
    simulate.set_defaults(run=run_simulate)


def _read(path: Path) -> str:
    from eukhe.cli import EnvironmentFault, UsageError, os_message, show_path

    try:
        with open(path, "rb") as handle:  # a device or a pipe may be endless: read a bounded amount
            data = handle.read(MAX_SCRIPT_BYTES + 1)
    except OSError as error:
        if error.errno in (errno.ENOENT, errno.EISDIR, errno.ENOTDIR, errno.ENAMETOOLONG):
            raise UsageError(f"--script: {os_message(error)}") from None
        raise EnvironmentFault(f"--script: {os_message(error)}") from None
    if len(data) > MAX_SCRIPT_BYTES:
        raise UsageError(f"{show_path(path)}: a script is at most {MAX_SCRIPT_BYTES:,} bytes")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise UsageError(f"{show_path(path)}:{line}: not UTF-8 text (byte {error.start}: {data[error.start:error.start + 1]!r})") from None


def _parse(path: Path) -> list[tuple[int, str, Any]]:
    from eukhe.cli import UsageError, load_json, show_path

    where = show_path(path)
    steps: list[tuple[int, str, Any]] = []
    goal_seen = False
    for number, line in enumerate(_read(path).split("\n"), 1):
        if not line.strip():
            continue
        try:
            value = load_json(line, "the line")
        except UsageError as error:
            raise UsageError(f"{where}:{number}: {error}") from None
        if not isinstance(value, dict) or len(value) != 1 or next(iter(value)) not in KEYS:
            raise UsageError(f"{where}:{number}: expected an object with exactly one of the keys {', '.join(KEYS)}")
        key = next(iter(value))
        try:
            parsed = _LINE_OF_KEY[key].model_validate(value)
        except ValidationError as error:
            first = error.errors()[0]
            loc = ".".join(str(p) for p in first["loc"])
            raise UsageError(f"{where}:{number}: {loc}: {first['msg']}") from None
        if key == "goal_status" and not goal_seen:
            raise UsageError(f"{where}:{number}: goal_status before any goal (a goal line must come first)")
        goal_seen = goal_seen or key == "goal"
        body = getattr(parsed, key)
        steps.append((number, key, body.model_dump() if isinstance(body, BaseModel) else body))
    return steps


def run_simulate(args: argparse.Namespace) -> int:
    from eukhe.cli import UsageError, require_dir, show_path
    from eukhe.commands.progress_bar import step, terminal_bar
    from eukhe.directors.document import DocumentError as DirectorsDocumentError
    from eukhe.directors.hooks import DirectorLimits, Directors
    from eukhe.paths import agent_dir, session_dir
    from eukhe.session import Store
    from eukhe.settings.agent import CvarAgent, EukheSettings

    path = Path(args.script)  # a str until checked: "" is refused, never "."
    script = _parse(path)
    where = show_path(path)
    if not script:
        raise UsageError(f"{where}: the script has no lines")
    require_dir(agent_dir(args.agent_dir), "the agent dir")
    root = session_dir(args.session_dir, agent_dir_flag=args.agent_dir)
    require_dir(root, "the sessions dir")
    store = Store(root)
    with store.create() as session:
        main = session.conversation("main")
        settings = EukheSettings(agent_dir(args.agent_dir), Path.cwd())
        configured = DirectorLimits.of(CvarAgent(settings, main).value)
        limits = replace(
            configured,
            stack_cap=configured.stack_cap if args.stack_cap is None else args.stack_cap,
            max_steps=configured.max_steps if args.max_steps is None else args.max_steps,
            stall_steps=configured.stall_steps if args.stall_steps is None else args.stall_steps,
        )
        simulation = _Simulation(main, Directors(main, limits), where)
        print(f"session {session.id} in {session.dir}")
        with terminal_bar() as bar:  # on a terminal only: standard output keeps its bytes
            done = step(bar, bar.add_task("simulate", total=len(script)))
            for count, (number, key, body) in enumerate(script, 1):
                try:
                    simulation.line(number, key, body)
                except DirectorsDocumentError as error:
                    raise UsageError(f"{where}:{number}: {error}") from None
                if done is not None:
                    done(count)
    return 0


class _Simulation:
    """The state of one simulated run: the conversation, its Directors, and the counters."""

    def __init__(self, main: Any, directors: Any, where: str) -> None:
        self.main = main
        self.directors = directors
        self.where = where
        self.runs = self.generations = self.calls = 0

    def line(self, number: int, key: str, body: Any) -> None:
        from eukhe.directors.commands import CommandError, session_command
        from eukhe.directors.hooks import PushRefused
        from eukhe.session import user

        directors = self.directors
        if key == "input":
            self.runs += 1
            self.main.commit([user(body)])
            stack = directors.begin(f"run-{self.runs}")
            print(f"line {number}: input -> new loop run-{self.runs}, stack {_show(stack)}")
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
            self.reply(number, body)

    def reply(self, number: int, body: dict[str, Any]) -> None:
        from eukhe.directors.hooks import ForcedToolError, Reply
        from eukhe.session import assistant, row, tool_call, tool_result

        directors, main = self.directors, self.main
        self.generations += 1
        forced = directors.before_request()
        made = []
        for call in body["tool_calls"]:
            self.calls += 1
            call_id = f"call-{self.calls}"
            made.append(call["name"])
            main.commit(
                [
                    tool_call({"id": call_id, "name": call["name"], "arguments": call["arguments"]}),
                    tool_result({"call_id": call_id, "text": call["result"], "is_error": call["error"]}),
                ]
            )
        if body["note"]:
            main.commit([row("eukhe.progress_note", {"text": body["note"], "accepted": True})])
        main.commit([assistant({"text": body["text"]})])
        if forced is not None:
            try:
                retry = directors.after_response(called=forced in made)
            except ForcedToolError as error:
                print(f"line {number}: forced {forced}: {error}")
                _rows(main, number)
                return
            print(f"line {number}: forced {forced}: {'called' if forced in made else 'missed, retried' if retry else 'missed'}")
            if retry:
                return
        step = directors.on_yield(f"gen-{self.generations}", Reply(body["text"], len(made)))
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


def _show(stack: list[Any]) -> str:
    return "[" + ", ".join(f"{layer.kind.value}:{layer.budget}" for layer in stack) + "]"


def _rows(main: Any, number: int) -> None:
    last = main.user_view()[-1]
    if last.display_only:
        print(f"  row {last.custom_type}: {last.content.get('message') if isinstance(last.content, dict) else last.content}")
