"""The config bridge (control.md S4b Ties: 360 generated scenarios).

Each scenario puts the documents (global and project settings.json, mcp-connections.json,
auth.json) and the config.cfg files in states (missing, valid, invalid, unreadable, of another
version, not an object), runs every writer over them (mcp add and remove, the connection
records, auth set and remove, settings setters with a stale loaded copy after another writer
changed the file), loads documents with good, wrong-typed and undeclared leaves, reads
providerMaxInFlight values, and reads the effective config of a project under each trust with
global and project mcpServers entries. The production side works on real files in a temporary
agent dir through ``eukhe.settings`` only; the model side is ``bend.config.transcript``.
"""

from __future__ import annotations

import json
import random
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bend import config as model
from bridge.core import Bridge, Event
from eukhe.settings import cfg as cfgfiles
from eukhe.settings import config
from eukhe.settings.cvar import CvarError, Cvars, canonical
from eukhe.settings.cvar_table import registry
from eukhe.settings.files import DocumentError, read_document, write_atomic


def show_document(path: Path) -> str:
    """How a transcript shows a document file: missing, unreadable, invalid, or its JSON."""
    if not path.exists():
        return "missing"
    if path.is_dir():
        return "unreadable"
    try:
        return canonical(json.loads(path.read_text(encoding="utf-8")))
    except ValueError:
        return "invalid"


GOOD: dict[str, list[Any]] = {
    "retry.enabled": [True, False], "retry.maxRetries": [0, 5], "retry.failover.maxRetries": [1],
    "transport": ["sse", "websocket"], "compaction.keepRecentTokens": [1000], "directors.maxSteps": [10, 50],
    "autonomous.enabled": [True], "maxToolRounds": [7, 99], "subagentMaxConcurrency": [2], "thinkingBudgets": [{"low": 128}],
    "defaultModel": ["m-1", "m 2"], "providerMaxInFlight": [{"openai": 2}, {"a": 1, "b": 3}], "idleEvictionMinutes": [0, 30, "off", "none"],
    "trustedProjects": [["PROJECT"], ["elsewhere"], []], "kernelTransport": [{"kind": "socket"}, {}],
    "subagentStallMs": [1000, 10**30], "toolBlockingBudgetMs": [0, 5000], "directors.stackCap": [0, 3], "directors.stallSteps": [0, 5],
    "autonomous.maxContinuations": [1, 99], "sessionArchive.maxAgeDays": [7, "off"], "sessionArchive.maxCount": [100, "none"],
}
# wrong types at every depth: negative and huge negative numbers, fractions, text, unicode, lists, nested objects, null
BAD: list[Any] = [-1, -(10**30), "bogus", "", "ß", 2.5, True, [1], {"x": "y"}, {"a": {"b": {"c": 1}}}, None]
IDS = sorted(GOOD)
UNDECLARED = ["bogus", "retry.bogus", "thing.other", "ß", "directors.bogus.deep"]
PROVIDERS = ("openai", "anthropic", "a", "b")
WRITERS = ("mcp add", "mcp remove", "connection", "auth set", "auth remove")
STATES = ("missing", "valid", "invalid", "unreadable", "other-version")


def _nest(flat: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in flat.items():
        parts = key.split(".")
        at = out
        for part in parts[:-1]:
            nxt = at.get(part)
            if not isinstance(nxt, dict):
                nxt = {}
                at[part] = nxt
            at = nxt
        at[parts[-1]] = value
    return out


def _server(rng: random.Random, where: str) -> dict[str, Any]:
    entry: dict[str, Any] = {"command": rng.choice(("srv", "tool-srv"))}
    if rng.random() < 0.5:
        entry["url"] = f"https://{where}.example/{rng.randrange(3)}"
    if rng.random() < 0.4:
        entry["headers"] = {"Authorization": f"Bearer {where}-{rng.randrange(9)}"}
    return entry


def _settings(rng: random.Random, where: str) -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for cvar in rng.sample(IDS, rng.randrange(0, 6)):
        flat[cvar] = rng.choice(GOOD[cvar]) if rng.random() < 0.75 else rng.choice(BAD)
    if rng.random() < 0.3:
        flat[rng.choice(UNDECLARED)] = rng.choice((1, "x", True))
    if where == "settings" and rng.random() < 0.35:
        flat["trustedProjects"] = ["PROJECT"]
    doc = _nest(flat)
    if rng.random() < 0.5:
        doc["mcpServers"] = {n: _server(rng, where) for n in rng.sample(("git", "web", "db"), rng.randrange(1, 3))}
        if rng.random() < 0.1:
            doc["mcpServers"]["broken"] = "not an entry"
    if rng.random() < 0.2:
        doc["version"] = 1
    return doc


def _file(rng: random.Random, doc: str) -> Event:
    state = rng.choice(STATES + ("valid", "valid"))
    content: Any = _settings(rng, doc) if doc in ("settings", "project") else {"p" + str(rng.randrange(3)): {"key": "k"}}
    if rng.random() < 0.05:
        content = [1, 2]
    return {"do": "file", "doc": doc, "state": state, "content": content}


def _cfg_sets(rng: random.Random) -> list[list[Any]]:
    sets = []
    for _ in range(rng.randrange(0, 4)):
        cvar = rng.choice(IDS)
        bad = cvar != "defaultModel" and rng.random() < 0.2
        sets.append([cvar, "bogus" if bad else rng.choice(GOOD[cvar])])
    return sets


def generate(index: int) -> list[Event]:
    rng = random.Random(f"config-{index}")
    events: list[Event] = []
    for doc in model.DOCS:
        if rng.random() < 0.6:
            events.append(_file(rng, doc))
    for _ in range(rng.randrange(5, 16)):
        roll = rng.random()
        if roll < 0.18:
            events.append(_file(rng, rng.choice(model.DOCS)))
        elif roll < 0.25:
            events.append({"do": "cfg", "which": rng.choice(("global config.cfg", "project config.cfg")), "sets": _cfg_sets(rng)})
        elif roll < 0.45:
            writer = rng.choice(WRITERS)
            event: Event = {"do": "write", "writer": writer, "name": rng.choice(("git", "web", "p0", "p1", "openai"))}
            if writer in ("mcp add", "connection", "auth set"):
                event["entry"] = _server(rng, "w") if writer == "mcp add" else {"key": f"k{rng.randrange(9)}"}
            events.append(event)
        elif roll < 0.62:
            cvar = rng.choice(IDS) if rng.random() < 0.9 else rng.choice(UNDECLARED)
            value = rng.choice(GOOD[cvar]) if cvar in GOOD and rng.random() < 0.8 else rng.choice(BAD)
            events.append({"do": "setter", "id": cvar, "value": value, "loaded": _file(rng, "settings")})
        elif roll < 0.74:
            events.append({"do": "load", "doc": rng.choice(("settings", "project"))})
        elif roll < 0.84:
            event = {"do": "limits", "providers": list(PROVIDERS)}
            pick = rng.random()
            if pick < 0.8:
                event["value"] = rng.choice(({}, {"openai": 3}, {"openai": "3"}, {"openai": 2.5, "anthropic": 0}, {"a": -1, "b": 4},
                                             {"a": None}, 5, "many", [2], {"openai": True}))
            events.append(event)
        else:
            prompts = [p for p in ("SYSTEM.md", "APPEND_SYSTEM.md") if rng.random() < 0.5]
            events.append({"do": "effective", "prompts": prompts, "ids": rng.sample(IDS, 5)})
    return events


# tmpfs when there is one: the production code still fsyncs, and fsync there is cheap
_FAST_TMP = "/dev/shm" if Path("/dev/shm").is_dir() else None

# -- the production side -----------------------------------------------------------------------


class _Run:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.agent = root / "agent"
        self.project = self.agent / "PROJECT"
        self.paths = config.Paths(self.agent, self.project)
        assert self.paths.project_settings is not None and self.paths.project_cfg is not None
        self.files = {"settings": self.paths.global_settings, "project": self.paths.project_settings,
                      "mcp": self.paths.mcp_connections, "auth": self.paths.auth}
        self.cfgs = {"global config.cfg": self.paths.global_cfg, "project config.cfg": self.paths.project_cfg}
        self.names = {self.paths.global_cfg: "global config.cfg", self.paths.project_settings: "project settings.json",
                      self.paths.project_cfg: "project config.cfg"}
        self.registry = registry()
        self.limits = 0

    def place(self, path: Path, event: Event) -> None:
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
        state = event["state"]
        if state == "unreadable":
            path.mkdir(parents=True)  # a directory: reading it fails with EISDIR
        elif state == "invalid":
            write_atomic(path, '{"not json')
        elif state in ("valid", "other-version"):
            content = event["content"]
            if state == "other-version" and isinstance(content, dict):
                content = dict(content, version=2)
            write_atomic(path, json.dumps(content, indent=2))

    def step(self, event: Event) -> str:
        kind = event["do"]
        if kind == "file":
            self.place(self.files[event["doc"]], event)
            return f"file {event['doc']} {show_document(self.files[event['doc']])}"
        if kind == "cfg":
            write_atomic(self.cfgs[event["which"]], "".join(cfgfiles.set_line(k, v) + "\n" for k, v in event["sets"]))
            return f"cfg {event['which']}"
        if kind == "write":
            writer, name = event["writer"], event["name"]
            doc = {"mcp add": "settings", "mcp remove": "settings", "connection": "mcp"}.get(writer, "auth")
            try:
                if writer == "mcp add":
                    config.mcp_add(self.paths.global_settings, name, event["entry"])
                elif writer == "mcp remove":
                    config.mcp_remove(self.paths.global_settings, name)
                elif writer == "connection":
                    config.record_connection(self.paths.mcp_connections, name, event["entry"])
                elif writer == "auth set":
                    config.AuthStorage(self.paths.auth).set(name, event["entry"])
                else:
                    config.AuthStorage(self.paths.auth).remove(name)
                said = "written"
            except DocumentError as error:
                said = f"refused: {error.kind}"
            return f"{writer} {said} {doc}={show_document(self.files[doc])}"
        if kind == "setter":
            loaded = event["loaded"].get("content") if event["loaded"]["state"] in ("valid", "other-version") else {}
            manager = config.SettingsManager(self.registry, self.paths, loaded if isinstance(loaded, dict) else {}, self.names)
            try:
                said = manager.set(event["id"], event["value"]).show()
            except CvarError as error:
                said = error.show()
            except DocumentError as error:
                said = f"refused: {error.kind}"
            return f"setter {event['id']} {said} settings={show_document(self.paths.global_settings)}"
        if kind == "load":
            try:
                document = read_document(self.files[event["doc"]])
            except DocumentError as error:
                return f"load {event['doc']} error {error.kind}"
            found = config.leaves(self.registry, document, project=event["doc"] == "project")
            named = sorted(f"{p}: {e.kind}" for p, e in found.named)
            return f"load {event['doc']} applied [{', '.join(sorted(found.applied))}] named [{', '.join(named)}]"
        if kind == "limits":
            self.limits += 1
            agent = self.root / f"limits-{self.limits}"
            document = {"providerMaxInFlight": event["value"]} if "value" in event else {}
            write_atomic(agent / "settings.json", json.dumps(document))
            loaded = config.load(self.registry, config.Paths(agent))
            shown = []
            for p in event["providers"]:
                limit = loaded.limit(p)
                shown.append(f"{p}={'none' if limit is None else limit}")
            return "limits " + " ".join(shown)
        if kind == "effective":
            prompt_dir = self.project / ".eukhe"
            for name in ("SYSTEM.md", "APPEND_SYSTEM.md"):
                target = prompt_dir / name
                if name in event["prompts"]:
                    write_atomic(target, f"# {name}\n")
                elif target.exists():
                    target.unlink()
            loaded = config.load(self.registry, self.paths)
            cvars = Cvars(self.registry, loaded.layers)
            values = " ".join(f"{i}={canonical(cvars.value([], i))}" for i in sorted(event["ids"]))
            servers = " ".join(f"mcpServers.{k}={canonical(v)}" for k, v in loaded.servers.items())
            prompts = ",".join(p for p in ("SYSTEM.md", "APPEND_SYSTEM.md") if p in loaded.prompts)
            return (f"effective trusted={'yes' if loaded.trusted else 'no'} {values}" + (f" {servers}" if servers else "")
                    + f" prompts [{prompts}] withheld [{','.join(loaded.withheld)}]")
        raise ValueError(f"unknown event {kind!r}")


def production(events: Sequence[Event]) -> list[str]:
    with tempfile.TemporaryDirectory(dir=_FAST_TMP, prefix="eukhe-config-bridge-") as tmp:
        run = _Run(Path(tmp))
        return [f"{number} {run.step(event)}" for number, event in enumerate(events)]


# -- coverage ---------------------------------------------------------------------------------

CASES = frozenset(
    {f"{w} over a {s} file" for w in WRITERS + ("setter",) for s in ("missing", "valid", "invalid", "unreadable", "other-version")}
    | {"setter after another writer changed the file", "setter refuses a bad value", "setter shadowed",
       "good leaf", "wrong-typed leaf", "undeclared leaf", "Global leaf in a project file",
       "limit number", "limit entry malformed", "limit not a map", "no limit",
       "trusted project applies", "untrusted project withholds", "untrusted prompt withheld",
       "project mcp entry replaces global", "global mcp entry kept"}
    | {f"setter of {i}" for i in IDS}
)


def _state(f: model.File) -> str:
    if f.kind == model.TEXT:
        doc = model.read(f)
        return "other-version" if doc == model.UNKNOWN_VERSION else "valid"
    return {model.MISSING: "missing", model.UNREADABLE: "unreadable", model.INVALID: "invalid"}[f.kind]


def reached(events: Sequence[Event]) -> set[str]:
    cases: set[str] = set()
    files = {d: model.File(model.MISSING) for d in model.DOCS}
    cfgs: dict[str, tuple[model.Set, ...]] = {"global config.cfg": (), "project config.cfg": ()}
    for event in events:
        kind = event["do"]
        if kind == "file":
            files[event["doc"]] = model.file_of(event)
        elif kind == "cfg":
            cfgs[event["which"]] = tuple(model.Set(k, model.from_json(v)) for k, v in event["sets"])
        elif kind == "write":
            doc, change = model._change(event)
            cases.add(f"{event['writer']} over a {_state(files[doc])} file")
            files[doc], _ = model.rmw(files[doc], change)
        elif kind == "setter":
            disk = files["settings"]
            decl = model.lookup(model.SETTINGS, event["id"])
            ok = decl is not None and model.check(model.SETTINGS, model.Set(event["id"], model.from_json(event["value"])), False) is None
            if not ok:
                cases.add("setter refuses a bad value")
            else:
                cases.add(f"setter over a {_state(disk)} file")
                if model.file_of(event["loaded"]) != disk and not isinstance(model.read(disk), str):
                    cases.add("setter after another writer changed the file")
            higher = (("g", False, cfgs["global config.cfg"]), ("p", True, model._sets_of_doc(files["project"])),
                      ("pc", True, cfgs["project config.cfg"]))
            files["settings"], result = model.setter(model.SETTINGS, disk, model.file_of(event["loaded"]), event["id"],
                                                     model.from_json(event["value"]), higher)
            if "Shadowed" in result:
                cases.add("setter shadowed")
            if ok:
                cases.add(f"setter of {event['id']}")
        elif kind == "load":
            loaded_doc = model.read(files[event["doc"]])
            if not isinstance(loaded_doc, str):
                applied, named = model.leaves(model.SETTINGS, loaded_doc, event["doc"] == "project")
                if applied:
                    cases.add("good leaf")
                for _, k in named:
                    cases.add({"BadValue": "wrong-typed leaf", "Undeclared": "undeclared leaf", "Global": "Global leaf in a project file"}[k])
        elif kind == "limits":
            if "value" not in event:
                cases.add("no limit")
            elif not isinstance(event["value"], dict):
                cases.add("limit not a map")
            else:
                for v in event["value"].values():
                    cases.add("limit number" if type(v) is int and v >= 0 else "limit entry malformed")
        elif kind == "effective":
            g_read = model.read(files["settings"])
            p_read = model.read(files["project"])
            g = model.Obj(()) if isinstance(g_read, str) else g_read
            p = model.Obj(()) if isinstance(p_read, str) else p_read
            gsets = tuple(model.Set(k, v) for k, v in model.leaves(model.SETTINGS, g, False)[0])
            trusted = model.trusted("PROJECT", (gsets, cfgs["global config.cfg"]))
            _, prompts, withheld = model.effective(model.SETTINGS, g, p, cfgs["global config.cfg"], cfgs["project config.cfg"],
                                                   tuple(event["prompts"]), trusted)
            p_applied = model.leaves(model.SETTINGS, p, True)[0]
            if trusted and p_applied:
                cases.add("trusted project applies")
            if withheld:
                cases.add("untrusted project withholds")
            if any(w.endswith(".md") for w in withheld):
                cases.add("untrusted prompt withheld")
            g_names = {k for k, _ in model.leaves(model.SETTINGS, g, False)[0] if k.startswith("mcpServers.")}
            p_names = {k for k, _ in p_applied if k.startswith("mcpServers.")}
            if trusted and g_names & p_names:
                cases.add("project mcp entry replaces global")
            if g_names - (p_names if trusted else set()):
                cases.add("global mcp entry kept")
    return cases


BRIDGE = Bridge(
    area="config",
    count=360,
    generate=generate,
    model=model.transcript,
    production=production,
    cases=CASES,
    reached=reached,
)
