"""The daemon bridge (issue 28 item 6, issue 26 item 4): the agent process's requests
(impl/eukhe/agent/daemon.py, over its socket, from a real client) against the
model of those requests (bend/daemon.py), on 300 generated scenarios, byte for byte.

The production side is a real ``Daemon`` with no turn loop (factory None), serving its socket
inside an asyncio loop, on a real session in a temporary agent dir whose models.json holds the
scenario's catalog (custom providers on a loopback address no request ever reaches: no turn
runs). A real client (``eukhe.agent.client.AgentClient``) connects to the socket, reads the
state the agent sends first, and sends each request with its id; what the agent broadcasts while
it answers, then its answer, are read back from the socket in order. The transcript prints each of
those events: switches, the Director stack's kinds, rows, the model and its levels, cvar
outcomes, errors' kinds, thinking levels, the state.

The scenarios: cvar lines (sets, toggles and aliases of the session switches and other Local
cvars, bad values, naturals past their width, undeclared ids, Global cvars refused from a
session, ``--global`` sets and toggles), ``/remind``, ``/force`` (past the stack cap: refused;
directors.stackCap lowered by a set), ``/effort [LEVEL]``, ``/model`` (known, by bare id,
ambiguous, unknown, an unlisted id of a models.json provider), ``cycle_thinking_level`` both
ways, and ``status``.
"""

from __future__ import annotations

import asyncio
import json
import random
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bend import daemon as model
from bend import effort as ef
from bend.director import DEFAULT_STACK_CAP
from bridge.core import Bridge, Event
from eukhe.agent import daemon
from eukhe.agent import protocol as p
from eukhe.agent.client import AgentClient
from eukhe.session import Store

BASE_URL = "http://127.0.0.1:9/v1"  # never reached: no turn runs

# The catalog pool: provider, id, reasoning, thinkingLevelMap (every reasoning model has its
# own map, so no family ladder of the rulebook is needed). deep-1 is in two providers.
POOL: tuple[dict[str, Any], ...] = (
    {"provider": "lab", "id": "deep-1", "reasoning": True, "map": {"off": None, "low": "l", "high": "h", "xhigh": "xh"}},
    {"provider": "lab", "id": "plain-1", "reasoning": False, "map": None},
    {"provider": "den", "id": "tri-2", "reasoning": True, "map": {"minimal": None, "medium": None, "max": "m"}},
    {"provider": "den", "id": "deep-1", "reasoning": True, "map": {"minimal": "min", "xhigh": None}},
    {"provider": "den", "id": "mute-3", "reasoning": True, "map": {level: None for level in ef.LADDER}},
    {"provider": "lab", "id": "solo-4", "reasoning": True, "map": {lv: (None if lv != "high" else "hi") for lv in ef.LADDER}},
)


# -- the production side -----------------------------------------------------------------------


def _levels(levels: Any) -> str:
    return model.show_levels(None if levels is None else tuple(levels))


def _model(ref: Any) -> str:
    return "-" if ref is None else f"{ref['provider']}/{ref['id']}"


def _switches(switches: dict[str, Any]) -> str:
    return " ".join(f"{cvar}={json.dumps(switches[cvar], sort_keys=True, ensure_ascii=False)}" for cvar in model.SWITCHES)


def _outcome(outcome: str, is_global: bool) -> str:
    if outcome.startswith("ParseError"):
        return "ParseError"
    if is_global:
        return outcome.split(":", 1)[0] if outcome.startswith(("ok:", "refused:")) else outcome.split(": ", 1)[0]
    return outcome


def event_line(event: dict[str, Any]) -> str:
    """One event the daemon sent, as the transcript shows it."""
    kind = event["type"]
    if kind == "switches":
        return "switches " + _switches(event["switches"])
    if kind == "directors":
        return "directors " + (",".join(layer["kind"] for layer in event["stack"]) or "-")
    if kind == "row":
        return f"row {event['kind']} {event['text']}"
    if kind == "model":
        return f"model {_model(event['model'])} level={event['thinking_level']} offered={_levels(event['offered_levels'])}"
    if kind == "cvar_result":
        is_global = bool(event["global"])
        said = "; ".join(f"{o['command']} -> {_outcome(o['outcome'], is_global)}" for o in event["outcomes"])
        return ("cvar --global [" if is_global else "cvar [") + said + "]"
    if kind == "ok":
        return f"ok {event['text']}"
    if kind == "error":
        return f"error {event['kind']}" + (f" {event['message']}" if event["kind"] == "ExpandError" else "")
    if kind == "thinking_level":
        return f"thinking level={event['level'] or 'null'} offered={_levels(event['offered_levels'])}"
    if kind == "state":
        stack = ",".join(layer["kind"] for layer in event["directors"]) or "-"
        return (
            f"state model={_model(event['model'])} level={event['thinking_level']} offered={_levels(event['offered_levels'])} "
            f"directors={stack} {_switches(event['switches'])}"
        )
    return f"unexpected {kind}"


def request_of(event: Event) -> p.Request:
    kind = event["request"]
    if kind == "cvar":
        return p.cvar_request(str(event["line"]), bool(event.get("global", False)))
    if kind == "command":
        return p.CommandRequest(line=str(event["line"]))
    if kind == "cycle_thinking_level":
        return p.CycleThinkingLevelRequest(backward=bool(event.get("backward", False)))
    return p.StatusRequest()


def models_json(catalog: Sequence[dict[str, Any]]) -> dict[str, Any]:
    providers: dict[str, Any] = {}
    for entry in catalog:
        provider = providers.setdefault(entry["provider"], {"baseUrl": BASE_URL, "apiKey": "key-daemon", "models": []})
        item: dict[str, Any] = {"id": entry["id"], "reasoning": entry["reasoning"]}
        if entry["map"] is not None:
            item["thinkingLevelMap"] = entry["map"]
        provider["models"].append(item)
    return {"providers": providers}


def production(events: Sequence[Event]) -> list[str]:
    lines: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        agent = Path(tmp) / "agent"
        agent.mkdir()
        (agent / "models.json").write_text(json.dumps(models_json(events[0]["catalog"])), encoding="utf-8")
        with Store(agent / "sessions").create() as session:

            async def serve() -> None:
                agent_process = daemon.Daemon(agent, session, None)
                await agent_process.start()
                try:
                    client = await AgentClient.connect(agent_process.address)
                    lines.append("0 " + event_line(json.loads(p.encode(await client.next()))))  # the state, first
                    for number, event in enumerate(events[1:], 1):
                        request = request_of(event).model_copy(update={"id": f"r{number}"})
                        await client.send(request)
                        while True:  # what the agent broadcasts while it answers, then its answer
                            said = await client.next()
                            lines.append(f"{number} {event_line(json.loads(p.encode(said)))}")
                            if getattr(said, "re", None) == request.id:
                                break
                    await client.close()
                finally:
                    await agent_process.close()

            asyncio.run(serve())
    return lines


# -- the generator ---------------------------------------------------------------------------------

LOCAL_SETS = (
    "set serviceTier flex",
    "set serviceTier priority",
    "set serviceTier bogus",  # BadValue
    "set stt.enabled true",
    "set autonomous.enabled yes",  # BadValue
    "set transport sse",
    "set retry.maxRetries -1",  # BadValue
    "set retry.maxRetries 4294967296",  # past u32: BadValue
    "set directors.maxSteps 9223372036854775808",  # past i64: BadValue
    "set temperature 0.5",
    "set no.such.cvar 1",  # Undeclared
    "set defaultThinkingLevel high",  # Global from a session
    "set memory.model m",  # Global from a session
    "toggle autonomous.enabled",
    "toggle stt.enabled",
    "toggle serviceTier",  # NotBool
    "toggle titles.generate",  # Global
    "toggle ghost.flag",  # Undeclared
    "toggle defaultThinkingLevel",  # Global and not Bool: NotBool first
    'alias fast "set serviceTier priority; toggle stt.enabled"',
    'alias calm "set serviceTier default; set autonomous.enabled false"',
    'alias loop "loop"',
    'alias broken "set \\"x"',  # a body that does not parse
    "fast",
    "calm",
    "loop",  # ExpandError::Cycle
    "nosuchalias",  # ExpandError::Unknown
    'bind f1 "toggle stt.enabled"',  # client-only
    "action quit",  # client-only
    'set serviceTier "unclosed',  # ParseError
    "set serviceTier",  # ParseError (arity)
)
GLOBAL_SETS = (
    "set defaultThinkingLevel high",
    "set defaultThinkingLevel loud",  # BadValue
    "set serviceTier flex",  # a Local cvar in the global config: below the session's sets
    "set directors.stackCap 1",
    "set directors.stackCap 99999999999999999999",  # past i64
    "set no.such.cvar 2",
    "toggle titles.generate",
    "toggle stt.enabled",
    "toggle memory.model",  # NotBool
    'alias x "set serviceTier flex"',  # refused: only set and toggle
    "set serviceTier",  # ParseError
)
CAP_SETS = ("set directors.stackCap 0", "set directors.stackCap 1", "set directors.stackCap 2", "set directors.stackCap 3")
PUSHES = (
    "/remind Run the tests first.",
    "/remind   keep the diff small  ",
    "/remind",  # no text
    "/force read",
    "/force ls --tries 3",
    "/force grep --tries 0",
    "/force read --tries",  # no number
    "/force read --tries x",  # not a number
    "/force",  # no tool
    "/force read ls",  # two tools
    '/force ""',  # an empty tool: refused by the stack
    '/force "unclosed',  # does not split
)
EFFORT = ("/effort", "/effort off", "/effort minimal", "/effort low", "/effort medium", "/effort high", "/effort xhigh", "/effort max", "/effort turbo")
MODELS = (
    "/model",
    "/model lab/deep-1",
    "/model den/deep-1",
    "/model lab/plain-1",
    "/model den/tri-2",
    "/model den/mute-3",
    "/model lab/solo-4",
    "/model deep-1",  # a bare id: ambiguous when both providers list it
    "/model tri-2",
    "/model solo-4",
    "/model lab/unlisted-9",  # an id lab's models.json does not list: accepted, outside the catalog
    "/model nope/x",  # unknown provider
    "/model zz-none",  # unknown id
    "/model lab/",  # a provider and no id
)
OTHER = ("/agent", "/forget everything", "/remindme later", "/memory view", "/rewind 999999", "/rewind -3", "/rewind x")  # no loop for /agent, /memory; unknown entries


def _catalog(rng: random.Random) -> list[dict[str, Any]]:
    count = rng.choice([2, 3, 3, 4])
    return [dict(entry) for entry in rng.sample(POOL, count)]


def generate(index: int) -> list[Event]:
    rng = random.Random(f"daemon-{index}")
    catalog = _catalog(rng)
    names = [f"/model {e['provider']}/{e['id']}" for e in catalog]
    events: list[Event] = [{"catalog": catalog}]
    focus = index % 5  # each scenario leans on one kind of request, and mixes the rest
    for _ in range(rng.randint(6, 24)):
        roll = rng.random()
        bias = {0: "cvar", 1: "push", 2: "effort", 3: "model", 4: "mix"}[focus]
        pick = bias if roll < 0.4 and bias != "mix" else rng.choice(["cvar", "global", "push", "effort", "model", "cycle", "status", "other"])
        if pick == "cvar":
            line = rng.choice(LOCAL_SETS)
            if rng.random() < 0.2:
                line = line + "; " + rng.choice(LOCAL_SETS)
            events.append({"request": "cvar", "line": line})
        elif pick == "global":
            events.append({"request": "cvar", "line": rng.choice(GLOBAL_SETS), "global": True})
        elif pick == "push":
            if rng.random() < 0.15:
                events.append({"request": "cvar", "line": rng.choice(CAP_SETS)})
            for _ in range(rng.randint(1, 4)):
                events.append({"request": "command", "line": rng.choice(PUSHES)})
        elif pick == "effort":
            events.append({"request": "command", "line": rng.choice(EFFORT)})
        elif pick == "model":
            events.append({"request": "command", "line": rng.choice(names) if rng.random() < 0.5 else rng.choice(MODELS)})
        elif pick == "cycle":
            events.append({"request": "cycle_thinking_level", "backward": rng.random() < 0.4})
        elif pick == "status":
            events.append({"request": "status"})
        else:
            events.append({"request": "command", "line": rng.choice(OTHER)})
    events.append({"request": "status"})
    return events


# -- the cases a scenario reaches (read from the model's transcript, request by request) ----------

CASES = frozenset(
    {
        "cvar set ok",
        "cvar set bad value",
        "cvar set past its width",
        "cvar set undeclared",
        "cvar set of a Global cvar refused",
        "cvar toggle ok",
        "cvar toggle not bool",
        "cvar toggle of a Global cvar refused",
        "cvar alias defined",
        "cvar alias runs",
        "cvar alias body does not parse",
        "cvar client-only",
        "cvar line does not parse",
        "cvar expansion cycle",
        "cvar expansion unknown",
        "switches change",
        "global set ok",
        "global toggle ok",
        "global set refused",
        "global verb refused",
        "global line does not parse",
        "remind pushed",
        "force pushed",
        "push refused past the cap",
        "push refused at a cap the session set",
        "push command refused",
        "effort shown",
        "effort set keeps",
        "effort set clamps",
        "effort set without a catalog model",
        "effort unknown level",
        "model shown",
        "model switch",
        "model switch clamps",
        "model by bare id",
        "model id names several",
        "model unknown",
        "model outside the catalog",
        "a model that offers nothing",
        "cycle forward",
        "cycle backward",
        "cycle answers null",
        "status",
        "unknown command",
    }
)


def reached(events: Sequence[Event]) -> set[str]:
    cases: set[str] = set()
    world = model.open_session(events[0]["catalog"])
    for event in events[1:]:
        before = world
        world, said = model.step(world, dict(event))
        last = said[-1]
        kind = event["request"]
        line = str(event.get("line", ""))
        if any(s.startswith("switches ") for s in said):
            cases.add("switches change")
        if kind == "cvar" and not event.get("global"):
            outcomes = last
            checks = {
                "cvar set ok": "set " in line and "set " in outcomes and "-> ok" in outcomes,
                "cvar set bad value": "BadValue" in outcomes,
                "cvar set past its width": any(w in line for w in ("4294967296", "9223372036854775808")) and "BadValue" in outcomes,
                "cvar set undeclared": "Undeclared" in outcomes,
                "cvar set of a Global cvar refused": line.startswith("set ") and "CvarError::Global" in outcomes,
                "cvar toggle ok": any(s.startswith("toggle ") and s.endswith("-> ok") for s in outcomes[6:-1].split("; ")),
                "cvar toggle not bool": "NotBool" in outcomes,
                "cvar toggle of a Global cvar refused": "toggle titles.generate -> CvarError::Global" in outcomes,
                "cvar alias defined": outcomes.startswith("cvar [alias ") and "-> ok" in outcomes,
                "cvar alias runs": line.split(";")[0].strip() in ("fast", "calm") and last.startswith("cvar ["),
                "cvar alias body does not parse": "-> ParseError" in outcomes,
                "cvar client-only": "client-only" in outcomes,
                "cvar line does not parse": last == "error ParseError",
                "cvar expansion cycle": "ExpandError::Cycle" in last,
                "cvar expansion unknown": "ExpandError::Unknown" in last,
            }
            cases.update(name for name, hit in checks.items() if hit)
        elif kind == "cvar":
            checks = {
                "global set ok": "set " in last and "-> ok" in last,
                "global toggle ok": last.startswith("cvar --global [toggle") and last.endswith("-> ok]"),
                "global set refused": "CvarError" in last,
                "global verb refused": "-> refused" in last,
                "global line does not parse": last == "error ParseError",
            }
            cases.update(name for name, hit in checks.items() if hit)
        elif kind == "command":
            word = line.strip().split(" ")[0]
            if word in ("/remind", "/force"):
                if last.startswith("ok reminder"):
                    cases.add("remind pushed")
                elif last.startswith("ok forced"):
                    cases.add("force pushed")
                elif last == "error PushRefused" and line not in ('/force ""',):
                    cases.add("push refused past the cap")
                    if model.value(before, "directors.stackCap") != DEFAULT_STACK_CAP:
                        cases.add("push refused at a cap the session set")
                elif last.startswith("error"):
                    cases.add("push command refused")
            elif word == "/effort":
                level = line.strip()[len("/effort") :].strip()
                offered = model.offer(before)
                if not level:
                    cases.add("effort shown")
                elif level not in ef.LADDER:
                    cases.add("effort unknown level")
                elif offered is None:
                    cases.add("effort set without a catalog model")
                else:
                    cases.add("effort set keeps" if level in offered else "effort set clamps")
            elif word == "/model":
                text = line.strip()[len("/model") :].strip()
                if not text:
                    cases.add("model shown")
                elif last == "error unknown_model":
                    ids = [e for e in before.catalog if e.id == text]
                    cases.add("model id names several" if len(ids) > 1 else "model unknown")
                else:
                    cases.add("model switch")
                    if "/" not in text:
                        cases.add("model by bare id")
                    if model.offer(world) is None:
                        cases.add("model outside the catalog")
                    if any(s.startswith("row effort") for s in said):
                        cases.add("model switch clamps")
                    if model.offer(world) == ():
                        cases.add("a model that offers nothing")
            else:
                cases.add("unknown command")
        elif kind == "cycle_thinking_level":
            if last.startswith("thinking level=null"):
                cases.add("cycle answers null")
            else:
                cases.add("cycle backward" if event.get("backward") else "cycle forward")
        elif kind == "status":
            cases.add("status")
    return cases


BRIDGE = Bridge(
    area="daemon",
    count=300,
    generate=generate,
    model=model.transcript,
    production=production,
    cases=CASES,
    reached=reached,
)
