"""The loop bridge (issue 28 item 6): the running agent's turn loop (impl/eukhe/agent/loop.py)
against the compact model of the loop (bend/agent.py), on 300 generated scenarios, transcript
against transcript, byte for byte.

The production side is the running agent on loopback: the agent process (``eukhe.agent.daemon.Daemon``
with the session runner, ``eukhe.agent.runner``) of a session in a temporary agent dir (every
commit fsynced) pinned to a model whose models.json provider speaks openai-completions to
``spec.loopback.LoopbackServer``, which plays each scenario's replies. Each step is a request
as a client sends it (the settings as one ``cvar`` line, ``/remind``, ``/force TOOL --tries N``,
the user's ``turn``, and ``steer`` and ``follow_up`` while a reply's request runs: its stream
waits at a gate until they are sent); the goal and the autonomous layer, which no request sets, are set on the
session the agent holds. The runner does the rest as for any turn: the model resolved from the
session, the wire client with its retries (the 429s say retry-after 0) within the provider's
providerMaxInFlight (2 here, so every request takes a slot), the real tools in the project
directory holding a few files, the Directors on the session's documents. Its transcript is what
the agent's clients are sent (the protocol events: notes, retries, tool calls and results, the
steps and rows of the Directors, the end of each run), with one line per HTTP request the server
received, read from the request's JSON body: the forced tool (native ``tool_choice``, else the
soft prompt alone), the note the request ends with and the conversation it sends, one token a
message (``message_tokens``: a dropped result, a reply sent twice or split, a note kept in the
conversation all show).

The generator aims its scenarios at the cases the issue names (a goal that completes, a goal
that pauses at the stall cap, a reminder, a forced call missed until NotCalled, a loop cut and
retried with a note, a leaked call rebuilt, broken arguments repaired and refused, a 429
retried) and at the rest of the loop's rules.
"""

from __future__ import annotations

import asyncio
import json
import random
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from bend.agent import transcript as model_transcript
from bridge.core import Bridge, Event, Shared
from eukhe.agent import daemon
from eukhe.agent import protocol as p
from eukhe.agent.daemon import MODEL_DOC
from eukhe.agent.runner import runner_factory
from eukhe.inference import toolcalls
from eukhe.inference.force import soft_prompt
from eukhe.session import MAIN, Store
from spec.loopback import Call, Cut, Fail, LoopbackServer, Recorded, Stream, Text, Wait, base_url

API = "openai-completions"
FILES = {"a.txt": "alpha\nfirst file\n", "b.txt": "beta\nsecond file\n", "src/c.py": "print('gamma')\n"}
LOOP_LINE = "I will check the file again.\n"
CUT_TEXT = "Let me look at"
FAIL_BODY = '{"error": {"type": "rate_limit_error", "message": "slow down"}}'

# Calls the scripts make: name, argument text, the act key (one per distinct call), the outcome
# kind the seed's rules give it (ok; tool_unavailable for a tool not offered, S6 repair rule 6;
# invalid_arguments for arguments no repair reads or a required key missing; the tools' own refusals).
POOL: tuple[tuple[str, str, str, str], ...] = (
    ("read", '{"path": "a.txt"}', "read-a", "ok"),
    ("read", '{"path": "b.txt",}', "read-b-trailing-comma", "ok"),
    ("read", "{'path': 'src/c.py'}", "read-c-single-quotes", "ok"),
    ("read", '{"path": "missing.txt"}', "read-missing", "not_found"),
    ("read", '{"path": "../outside.txt"}', "read-outside", "outside_workdir"),
    ("read", '{"path": ', "read-cut-json", "invalid_arguments"),
    ("read", "{}", "read-no-path", "invalid_arguments"),
    ("ls", '{"path": "."}', "ls-root", "ok"),
    ("ls", '{"path": "src"}', "ls-src", "ok"),
    ("glob", '{"pattern": "*.txt"}', "glob-txt", "ok"),
    ("grep", '{"pattern": "alpha"}', "grep-alpha", "ok"),
    ("read", '{"path": "src"}', "read-dir", "is_directory"),
    ("read", '{"path": "a.txt", "offset": 9}', "read-past-end", "bad_range"),
    ("grep", '{"pattern": "("}', "grep-bad-pattern", "bad_pattern"),
    # writes that leave the files as they were, so every call's result is the same whenever it runs
    ("write", '{"path": "src/c.py", "content": "print(\'gamma\')\\n"}', "write-same", "ok"),
    ("write", '{"path": "../outside.txt", "content": ""}', "write-outside", "outside_workdir"),
    ("edit", '{"path": "a.txt", "old": "alpha", "new": "alpha"}', "edit-unchanged", "unchanged"),
    ("edit", '{"path": "a.txt", "old": "omega", "new": "x"}', "edit-absent", "old_not_found"),
    ("edit", '{"path": "b.txt", "old": "e", "new": "E"}', "edit-not-unique", "old_not_unique"),
    ("bash", '{"command": "cat a.txt"}', "bash-cat", "ok"),
    ("bash", '{"command": "exit 3"}', "bash-exit", "exit_status"),
    ("bash", '{"command": "sleep 30", "timeout_ms": 50}', "bash-timeout", "timeout"),
    ("ghost", '{"path": "a.txt"}', "ghost", "tool_unavailable"),
    ("reed", '{"path": "a.txt"}', "reed", "tool_unavailable"),
)
LEAK_POOL: tuple[tuple[str, str, str, str], ...] = (
    ("read", '{"path": "a.txt"}', "read-a", "ok"),
    ("ls", '{"path": "src"}', "ls-src", "ok"),
    ("ghost", '{"path": "a.txt"}', "ghost", "tool_unavailable"),
)

CASES = frozenset(
    {
        "goal_completes",
        "goal_pauses_at_stall_cap",
        "goal_note_under_cap",
        "reminder_joins_continuation",
        "reminder_waits",
        "forced_called",
        "forced_native_retry",
        "forced_not_called",
        "autonomous_continues",
        "autonomous_limit",
        "push_refused",
        "note_loop",
        "note_cut",
        "note_no_answer",
        "note_length",
        "note_leak",
        "max_notes",
        "leak_rebuilt",
        "truncated_calls",
        "repaired_arguments",
        "tool_unavailable",
        "invalid_arguments",
        "retry_429",
        "retries_exhausted",
        "max_tool_rounds",
        "refused",
        "no_step",
        "model_error",
        "no_layer",
        # input classes
        "steer_joins",
        "steer_joins_as_one",
        "steer_runs_next",
        "follow_up_runs",
        "several_inputs",
        "default_reply",
        "parallel_calls",
    }
)


# -- the production side ---------------------------------------------------------------------------


class _Recording(LoopbackServer):
    """The loopback server, telling each request as a transcript line as it arrives."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] | None = None
        self.responder = lambda recorded: Stream([Text("done.")])

    def drop_scripts(self) -> None:
        """Forget the replies a turn did not take, and the requests recorded so far."""
        with self._lock:
            self._scripts.clear()
            self.requests.clear()

    def _record(self, recorded: Recorded) -> None:
        super()._record(recorded)
        if self.lines is not None:
            self.lines.append(request_line(recorded.body))


NOTES = (
    ("Your last reply repeated itself", "loop"),
    ("Your last reply was cut off", "cut"),
    (toolcalls.NO_ANSWER_NOTE, "no_answer"),
    (toolcalls.LENGTH_NOTE_TEXT, "length"),
    (toolcalls.LEAK_NOTE, "leak"),
)


def request_line(body: Any) -> str:
    """``request forced=TOOL/native|soft|- note=KIND|- sent=MESSAGES`` from the JSON body of a
    chat request: the forced tool, the note the request ends with, and the conversation it
    sends (``message_tokens``)."""
    messages = [m for m in body.get("messages", []) if isinstance(m, dict)]
    texts = [_text(m) for m in messages]
    forced = "-"
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        forced = f"{choice['function']['name']}/native"
    else:
        for name in SOFT_NAMES:
            if any(soft_prompt(name) in text for text in texts):
                forced = f"{name}/soft"
    note = "-"
    for text in texts:
        for mark, kind in NOTES:
            if mark in text:
                note = kind
    return f"request forced={forced} note={note} sent={message_tokens(messages)}"


SOFT_NAMES = ("read", "write", "edit", "ls", "glob", "grep", "bash", "ghost")


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


def message_tokens(messages: Sequence[dict[str, Any]]) -> str:
    """The conversation a request sends, one token a message: ``u<length>`` a user message (its
    text's length, the soft prompt left out), ``a`` a reply, ``a:NAME,NAME`` a reply with its
    calls, ``t`` a tool result; the system prompt and the note are left out (the note is
    ``note=``). ``-`` when nothing is left."""
    tokens: list[str] = []
    for message in messages:
        role, text = message.get("role"), _text(message)
        if role == "user":
            if any(mark in text for mark, _ in NOTES):
                continue
            for name in SOFT_NAMES:
                text = text.replace("\n\n" + soft_prompt(name), "").replace(soft_prompt(name), "")
            if text:
                tokens.append(f"u{len(text)}")
        elif role == "assistant":
            calls = [str(c.get("function", {}).get("name")) for c in message.get("tool_calls") or [] if isinstance(c, dict)]
            tokens.append("a:" + ",".join(calls) if calls else "a")
        elif role == "tool":
            tokens.append("t")
    return " ".join(tokens) or "-"


def _started() -> _Recording:
    server = _Recording()
    server.start()
    return server


_SERVER: Shared[_Recording] = Shared(_started, lambda server: server.close())
finish = _SERVER.close


def script_of(reply: dict[str, Any], gate: threading.Event | None = None) -> Any:
    """A scenario reply as the loopback server plays it; with a ``gate``, its stream first waits
    for it (the messages sent while its request runs are sent meanwhile)."""
    fault = reply.get("fault", "")
    held: list[Any] = [] if gate is None else [Wait(gate)]
    if fault == "fail":
        return Fail(429, FAIL_BODY, headers=(("retry-after", "0"),))
    if fault == "cut":
        return Stream([*held, Text(CUT_TEXT), Cut()])
    if fault == "loop":
        return Stream([*held, Text(LOOP_LINE * 80)])
    text = str(reply.get("text", ""))
    for leak in reply.get("leaks", []):
        text += "\n<tool_call>\n" + json.dumps({"name": leak["name"], "arguments": json.loads(leak["args"])}) + "\n</tool_call>"
    parts: list[Any] = [*held, *([Text(text)] if text else [])]
    parts += [Call(call["name"], call["args"]) for call in reply.get("calls", [])]
    return Stream(parts, stop=str(reply.get("stop", "stop")))


SETUP_CVARS = {
    "max_steps": "directors.maxSteps",
    "stack_cap": "directors.stackCap",
    "stall_steps": "directors.stallSteps",
    "max_continuations": "autonomous.maxContinuations",
    "max_tool_rounds": "maxToolRounds",
    "max_retries": "retry.maxRetries",
    "steering_mode": "steeringMode",
    "follow_up_mode": "followUpMode",
}
# The agent dir's settings: no titles (a title's request is no part of the loop), and at most two
# requests in flight to the provider (each request of a turn takes a slot, eukhe.agent.inflight).
SETTINGS = {"titles": {"generate": False}, "providerMaxInFlight": {"loop": 2}}


class _Printer:
    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.names: dict[str, str] = {}

    def emit(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind == "note":
            self.lines.append(f"note {event['kind']} {event['used']}/{event['max']}")
        elif kind == "retry":
            self.lines.append(f"retry {event['attempt']}/{event['retries']}")
        elif kind == "tool_call":
            self.names[event["id"]] = event["name"]
        elif kind == "tool_result":
            self.lines.append(f"call {self.names[event['id']]} {event['kind'] or 'ok'}")
        elif kind == "step":
            self.lines.append(f"step {event['decision']} {event['rule']} {','.join(event['verdicts']) or '-'}")
            if event["continuation"] is not None:
                self.lines.append("continuation " + json.dumps(event["continuation"], ensure_ascii=False))
        elif kind == "row":
            self.lines.append(f"row {event['kind']}: {event['text']}")
        elif kind == "turn_end":
            self.lines.append(f"end {event['reason']}")


class _Client:
    """A client of the agent process that hands each event it is sent to the printer."""

    def __init__(self, printer: _Printer) -> None:
        self.closed = False
        self.printer = printer
        self.replies: list[dict[str, Any]] = []

    def send(self, line: bytes) -> None:
        event = json.loads(line)
        if "re" in event:  # a reply to the request
            self.replies.append(event)
        self.printer.emit(event)


def production(events: Sequence[Event]) -> list[str]:
    server = _SERVER.get()
    lines: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        work = root / "work"
        for name, text in FILES.items():
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            (work / name).write_text(text, encoding="utf-8")
        (root / "outside.txt").write_text("outside\n", encoding="utf-8")
        agent_dir = root / "agent"
        agent_dir.mkdir()
        provider = {"baseUrl": base_url(server, API), "apiKey": "key-loop", "api": API, "models": [{"id": "loop-model"}]}
        (agent_dir / "models.json").write_text(json.dumps({"providers": {"loop": provider}}), encoding="utf-8")
        (agent_dir / "settings.json").write_text(json.dumps(SETTINGS), encoding="utf-8")
        with Store(agent_dir / "sessions").create() as session:
            session.conversation(MAIN).commit(documents={MODEL_DOC: {"provider": "loop", "id": "loop-model"}})
            asyncio.run(_serve(server, agent_dir, work, session, events, lines))
    return lines


async def _serve(server: _Recording, agent_dir: Path, work: Path, session: Any, events: Sequence[Event], lines: list[str]) -> None:
    """The scenario through the agent process: a ``Daemon`` with the session runner, each request
    as a client sends it. The goal and the autonomous layer have no request of their own (the
    Director stack takes them from the session's documents), so they are set on the session the
    agent holds."""
    from eukhe.directors.hooks import DirectorLimits, Directors

    agent = daemon.Daemon(agent_dir, session, runner_factory, project_dir=work)
    client = _Client(_Printer(lines))
    agent.clients.add(cast(Any, client))

    def ask(request: p.Request) -> dict[str, Any]:
        client.replies.clear()
        agent._line(cast(Any, client), p.encode(request).rstrip(b"\n"))
        return client.replies[-1]

    try:
        for event in events:
            if "setup" in event:
                sets = [f"set {SETUP_CVARS[k]} {v}" for k, v in dict(event["setup"]).items()]
                if sets:
                    ask(p.cvar_request("; ".join(sets)))
            elif "goal" in event:
                Directors(agent.main, DirectorLimits.of(agent.cvar.value)).set_goal(str(event["goal"]["objective"]), str(event["goal"]["id"]))
                lines.append(f"goal {event['goal']['id']}")
            elif "autonomous" in event:
                Directors(agent.main, DirectorLimits.of(agent.cvar.value)).set_autonomous(event["autonomous"] is True)
                lines.append(f"autonomous {'on' if event['autonomous'] is True else 'off'}")
            elif "remind" in event:
                reply = ask(p.CommandRequest(line=f"/remind {event['remind']}"))
                lines.append(f"remind {'refused' if reply['type'] == 'error' else 'pushed'}")
            elif "force" in event:
                force = event["force"]
                reply = ask(p.CommandRequest(line=f"/force {force['tool']} --tries {int(force['tries'])}"))
                lines.append(f"force {force['tool']} {'refused' if reply['type'] == 'error' else 'pushed'}")
            elif "input" in event:
                lines.append(f"input {event['input']}")
                scripts: list[Any] = []
                gates: list[tuple[int, threading.Event, list[p.SteerRequest | p.FollowUpRequest]]] = []
                for index, reply in enumerate(event.get("replies", [])):
                    sent: list[p.SteerRequest | p.FollowUpRequest] = [*(p.SteerRequest(text=t) for t in reply.get("steer", [])), *(p.FollowUpRequest(text=t) for t in reply.get("follow_up", []))]
                    gate = threading.Event() if sent else None
                    scripts.append(script_of(reply, gate))
                    if gate is not None:
                        gates.append((index, gate, sent))
                server.script(*scripts)
                server.lines = lines
                try:
                    ask(p.TurnRequest(text=str(event["input"])))
                    for index, gate, sent in gates:
                        # the request that plays reply ``index`` comes (it waits at the gate), or
                        # the turn ends without it
                        while len(server.requests) <= index and agent.task is not None:
                            await asyncio.sleep(0.001)
                        if len(server.requests) > index:
                            for request in sent:
                                ask(request)
                        gate.set()
                    while agent.task is not None:
                        await asyncio.shield(agent.task)
                finally:
                    server.lines = None
                    server.drop_scripts()
    finally:
        agent.clients.clear()
        await agent.close()


# -- the generator ---------------------------------------------------------------------------------


def call(rng: random.Random, pool: Sequence[tuple[str, str, str, str]] = POOL) -> dict[str, str]:
    name, args, act, kind = rng.choice(pool)
    return {"name": name, "args": args, "act": act, "kind": kind}


def answer(rng: random.Random) -> dict[str, Any]:
    return {"text": rng.choice(["Done.", "The file says alpha.", "All checked.", "Nothing to change."])}


def tools_reply(rng: random.Random, n: int = 0) -> dict[str, Any]:
    calls = [call(rng) for _ in range(n or rng.choice([1, 1, 1, 2, 3]))]
    reply: dict[str, Any] = {"calls": calls, "stop": "toolUse"}
    if rng.random() < 0.3:
        reply["text"] = "Let me look."
    return reply


def reply_of_kind(rng: random.Random, kind: str, forced: str = "") -> dict[str, Any]:
    if kind == "answer":
        return answer(rng)
    if kind == "tools":
        return tools_reply(rng)
    if kind == "forced_call":
        return {"calls": [call(rng, [entry for entry in POOL if entry[0] == forced])], "stop": "toolUse"}
    if kind in ("fail", "cut", "loop"):
        return {"fault": kind}
    if kind == "empty":
        return {"stop": rng.choice(["stop", "toolUse"])}
    if kind == "length_empty":
        return {"stop": "length"}
    if kind == "length_calls":
        return {"calls": [call(rng)], "stop": "length"}
    if kind == "refusal":
        return {"text": rng.choice(["", "", "I can't help with that part."]), "stop": "refusal"}
    if kind == "leak":
        return {"text": "Calling:", "leaks": [call(rng, LEAK_POOL[:2])]}
    if kind == "bad_leak":
        return {"text": "Calling:", "leaks": [call(rng, LEAK_POOL)]}
    raise ValueError(kind)


KINDS = ("answer", "tools", "tools", "fail", "cut", "loop", "empty", "length_empty", "length_calls", "leak", "bad_leak")

# Each aim: the setup it wants and a builder of its directing events and replies.
AIMS = (
    "goal_completes",
    "goal_stalls",
    "reminder",
    "forced_missed",
    "forced_called",
    "loop_note",
    "leak",
    "broken_arguments",
    "retry_429",
    "max_notes",
    "max_tool_rounds",
    "autonomous",
    "no_step",
    "full_stack",
    "refusal",
    "steering",
    "random",
    "random",
)


def replies(rng: random.Random, count: int, kinds: Sequence[str] = KINDS) -> list[dict[str, Any]]:
    return [reply_of_kind(rng, rng.choice(kinds)) for _ in range(count)]


def generate(index: int) -> list[Event]:
    rng = random.Random(f"agent-{index}")
    aim = AIMS[index % len(AIMS)]
    setup: dict[str, Any] = {
        "max_steps": rng.choice([200, 200, 3, 1, 0]),
        "stack_cap": rng.choice([8, 8, 2, 1]),
        "stall_steps": rng.choice([3, 3, 2, 1, 0]),
        "max_continuations": rng.choice([20, 2, 1]),
        "max_tool_rounds": rng.choice([50, 50, 2, 1]),
        "max_retries": rng.choice([3, 3, 1, 0]),
    }
    events: list[Event] = [{"setup": setup}]
    inputs = rng.choice([1, 1, 2, 3])
    for k in range(inputs):
        if aim in ("goal_completes", "goal_stalls") and k == 0:
            events.append({"goal": {"id": f"g{index}", "objective": "make the tests pass"}})
        if aim == "goal_completes":
            work = [tools_reply(rng) for _ in range(rng.randint(1, 3))]
            script = [r for w in work for r in (w, answer(rng))]
        elif aim == "goal_stalls":
            script = [answer(rng) for _ in range(rng.randint(2, 6))]
        elif aim == "reminder":
            events.append({"remind": "Run the tests before you answer."})
            if rng.random() < 0.5:
                events.append({"goal": {"id": f"g{index}-{k}", "objective": f"finish task {k}"}})
            script = replies(rng, rng.randint(1, 5), ("answer", "tools"))
        elif aim in ("forced_missed", "forced_called"):
            events.append({"force": {"tool": rng.choice(["read", "ls"]), "tries": rng.choice([0, 1, 2])}})
            tool = events[-1]["force"]["tool"]
            kinds = ("answer", "tools", "empty") if aim == "forced_missed" else ("forced_call", "answer", "tools")
            script = [reply_of_kind(rng, rng.choice(kinds), tool) for _ in range(rng.randint(1, 5))]
        elif aim == "loop_note":
            script = replies(rng, rng.randint(1, 4), ("loop", "cut", "answer"))
        elif aim == "leak":
            script = replies(rng, rng.randint(1, 5), ("leak", "bad_leak", "answer", "length_calls"))
        elif aim == "broken_arguments":
            script = [tools_reply(rng, rng.randint(1, 3)) for _ in range(rng.randint(1, 3))] + [answer(rng)]
        elif aim == "retry_429":
            script = replies(rng, rng.randint(1, 5), ("fail", "fail", "answer", "tools"))
        elif aim == "max_notes":
            script = replies(rng, rng.randint(8, 11), ("empty", "loop", "cut", "length_empty", "bad_leak"))
        elif aim == "max_tool_rounds":
            setup["max_tool_rounds"] = rng.choice([0, 1, 2])
            script = [tools_reply(rng) for _ in range(rng.randint(1, 4))] + [answer(rng)]
        elif aim == "autonomous":
            events.append({"autonomous": rng.random() < 0.8})
            script = replies(rng, rng.randint(1, 5), ("answer", "tools", "empty"))
        elif aim == "no_step":
            setup["max_steps"] = rng.choice([0, 1])
            events.append({"goal": {"id": f"g{index}-{k}", "objective": f"finish task {k}"}} if rng.random() < 0.6 else {"autonomous": True})
            script = replies(rng, rng.randint(1, 4), ("answer", "tools"))
        elif aim == "refusal":
            if rng.random() < 0.5:
                events.append(rng.choice([{"goal": {"id": f"g{index}-{k}", "objective": f"finish task {k}"}}, {"force": {"tool": "ls", "tries": 1}}]))
            script = replies(rng, rng.randint(1, 3), ("refusal", "answer", "tools"))
        elif aim == "steering":
            if k == 0:
                setup["steering_mode"] = rng.choice(["one-at-a-time", "all"])
                setup["follow_up_mode"] = rng.choice(["one-at-a-time", "all"])
            script = replies(rng, rng.randint(1, 5), ("answer", "tools", "tools", "cut", "empty", "refusal"))
            for number, reply in enumerate(script):
                if rng.random() < 0.6:
                    reply["steer"] = [f"also look at {rng.choice(list(FILES))} ({k}.{number}.{j})" for j in range(rng.choice([1, 1, 2]))]
                if rng.random() < 0.3:
                    reply["follow_up"] = [f"then sum up ({k}.{number}.{j})" for j in range(rng.choice([1, 2]))]
        elif aim == "full_stack":
            for _ in range(rng.randint(1, 4)):
                events.append(rng.choice([{"remind": "Keep the diff small."}, {"force": {"tool": "ls", "tries": 1}}]))
            script = replies(rng, rng.randint(1, 5))
        else:
            for _ in range(rng.randint(0, 2)):
                events.append(
                    rng.choice(
                        [
                            {"goal": {"id": f"g{index}-{k}", "objective": f"finish task {k}"}},
                            {"remind": "Note what you changed."},
                            {"force": {"tool": rng.choice(["read", "grep"]), "tries": rng.randint(0, 2)}},
                            {"autonomous": rng.random() < 0.5},
                        ]
                    )
                )
            script = replies(rng, rng.randint(0, 7))
        events.append({"input": f"task {k} of scenario {index}", "replies": script})
    return events


# -- the cases a scenario reaches (read from the model's transcript and the events) ------------------


def reached(events: Sequence[Event]) -> set[str]:
    lines = model_transcript([dict(e) for e in events])
    text = "\n".join(lines)
    found: set[str] = set()
    inputs = [e for e in events if "input" in e]
    checks = {
        "goal_completes": any(line.startswith("step continue again goal:again") for line in lines) and "end answered" in text,
        "goal_pauses_at_stall_cap": "Goal paused." in text,
        "reminder_joins_continuation": "reminder:leave" in text and "step continue" in text,
        "reminder_waits": "reminder:defer" in text,
        "forced_called": any("forced=" in line and "/" in line for line in lines) and "forced:leave" in text,
        "forced_native_retry": "/native" in text,
        "forced_not_called": "end not_called" in text,
        "goal_note_under_cap": "Progress check:" in text,
        "autonomous_continues": "autonomous:again" in text,
        "autonomous_limit": "autonomous:yield" in text,
        "push_refused": " refused" in text,
        "note_loop": "note loop" in text,
        "note_cut": "note cut" in text,
        "note_no_answer": "note no_answer" in text,
        "note_length": "note length" in text,
        "note_leak": "note leak" in text,
        "max_notes": "end max_notes" in text or "note no_answer 8/8" in text or "note length 8/8" in text,
        "leak_rebuilt": "rebuilt" in text,
        "truncated_calls": " truncated" in text,
        "tool_unavailable": "tool_unavailable" in text,
        "invalid_arguments": "invalid_arguments" in text,
        "retry_429": "retry 1/" in text,
        "retries_exhausted": "end failed" in text and "retry" in text,
        "max_tool_rounds": "end max_tool_rounds" in text,
        "refused": "end refused" in text,
        "no_step": "no_step" in text,
        "model_error": "model_error" in text,
        "no_layer": "step yield none -" in text,
        "several_inputs": len(inputs) > 1,
        "default_reply": any(len(lines) and len(e.get("replies", [])) == 0 for e in inputs),
        "steer_joins": "row joined: " in text,
        "steer_joins_as_one": any(line.startswith("row joined: ") and "\n\n" in line for line in lines),
        "steer_runs_next": any(a.startswith("end ") and a != "end answered" and b.startswith("request ") for a, b in zip(lines, lines[1:])),
        "follow_up_runs": sum(line.startswith("end ") for line in lines) > len(inputs) and any(r.get("follow_up") for e in inputs for r in e.get("replies", [])),
    }
    found.update(name for name, hit in checks.items() if hit)
    calls = [c for e in inputs for r in e.get("replies", []) for c in r.get("calls", [])]
    if any(c["act"] in ("read-b-trailing-comma", "read-c-single-quotes") for c in calls):
        found.add("repaired_arguments")
    if any(len(r.get("calls", [])) > 1 for e in inputs for r in e.get("replies", [])):
        found.add("parallel_calls")
    return found


BRIDGE = Bridge(
    area="agent",
    count=300,
    generate=generate,
    model=model_transcript,
    production=production,
    cases=CASES,
    reached=reached,
    finish=finish,
)
