"""The cvar bridge (control.md S4 Ties: 300 generated scenarios).

Each scenario declares a registry (some with duplicate ids or wrong defaults), then works on
values over a config and a family (wrong types, Global cvars, undeclared ids, profiles and
sets), toggles of the last agent of a family (a subagent toggling a value it inherits),
global toggles, the written sets (persist and replicate) and a save read back from a real
agents/<name>.cfg file, alias tables and lines with cycles and unknown aliases, and key
presses. The production side drives ``eukhe.settings`` only; the model side is
``bend.cvar.transcript``.
"""

from __future__ import annotations

import json
import math
import random
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bend import cvar as model
from bridge.core import Bridge, Event
from spec.oracles import cvar as oracle
from eukhe.settings import binds as bindfiles
from eukhe.settings import cfg as cfgfiles
from eukhe.settings.cvar import (
    AgentLayers,
    Aliases,
    Binds,
    Cvar,
    CvarError,
    Cvars,
    CvarType,
    ExpandError,
    Layer,
    ParseError,
    Registry,
    RegistryError,
    canonical,
    format_list,
    parse_list,
)

IDS = ("retry.enabled", "retry.maxRetries", "stt.enabled", "transport", "providerMaxInFlight", "memory.model",
       "compaction.enabled", "trustedProjects", "temperature", "idleEvictionMinutes")
TYPES: tuple[Any, ...] = ("Bool", "Bool", "Bool", "Int", "Nat", "NatOrOff", "Float", "String",
                          ["Enum", ["auto", "sse", "websocket"]], ["List", "String"], ["Map", "Nat"])
SOURCES = (("global settings.json", False), ("project settings.json", True), ("global config.cfg", False), ("project config.cfg", True))
KEYS = ("ctrl+a", "ctrl+b", "f8", "escape")


# Input classes of a value (issue 9): huge integers, huge and tiny floats, the empty string,
# strings with a line end or non-ASCII; non-finite floats are never a value of a type (BAD).
HUGE_INTS = (10**30, -(10**30), 2**64)
ODD_FLOATS = (1e300, -1e300, 5e-324, 1e-07, -0.0)
NON_FINITE = (math.nan, math.inf, -math.inf)
STRINGS = ("", "x", "a b", 'q"t', "a\nb", "a\rb", "\u2028", "d\u00e9j\u00e0 \u6df1\u3044", "\xa0", "back\\", "; toggle x")
# value words of a `set` line that no Float reads: a decimal past the largest float, nan, inf
BAD_FLOAT_WORDS = ("1" * 400 + ".5", "nan", "inf", "-inf", "1e5")


def _value_of(rng: random.Random, t: Any) -> Any:
    kind = t if isinstance(t, str) else t[0]
    if kind == "Bool":
        return rng.random() < 0.5
    if kind == "Int":
        return rng.randrange(-5, 6) if rng.random() < 0.8 else rng.choice(HUGE_INTS)
    if kind == "Nat":
        return rng.randrange(0, 9) if rng.random() < 0.9 else 10**30
    if kind == "NatOrOff":
        return rng.choice((0, 3, 12, "off", "none"))
    if kind == "Float":
        return rng.choice((0.5, 1.0, 2, -1.25)) if rng.random() < 0.7 else rng.choice(ODD_FLOATS + HUGE_INTS)
    if kind == "String":
        return str(rng.choice(STRINGS))
    if kind == "Enum":
        return rng.choice(t[1])
    if kind == "List":
        return rng.choice(([], ["a"], ["a", "b c"]))
    return rng.choice(({}, {"p": 1}, {"p": 2, "q": 0}))


def _any_value(rng: random.Random) -> Any:
    if rng.random() < 0.1:
        return rng.choice(NON_FINITE)
    return _value_of(rng, rng.choice(TYPES))


def _shipped() -> list[dict[str, Any]]:
    """The declarations of the settings table (every setting id), from the oracle's rows."""

    def raw(t: Any) -> Any:
        if t[0] == "Enum":
            return ["Enum", list(t[1])]
        if t[0] in ("List", "Map"):
            return [t[0], raw(t[1])]
        return t[0]

    return [{"id": cvar, "type": raw(t), "scope": scope, "persist": persist, "replicate": replicate, "default": default}
            for cvar, t, scope, persist, replicate, default, _ in oracle.TABLE]


def _decls(rng: random.Random) -> list[dict[str, Any]]:
    ids = rng.sample(IDS, rng.randrange(3, 8))
    decls = []
    for cvar in ids:
        t = rng.choice(TYPES)
        decls.append({"id": cvar, "type": t, "scope": rng.choice(("Global", "Local", "Local")),
                      "persist": rng.random() < 0.6, "replicate": rng.random() < 0.5, "default": _value_of(rng, t)})
    return decls


def _broken(rng: random.Random) -> list[dict[str, Any]]:
    decls = _decls(rng)
    if rng.random() < 0.5:
        decls.insert(rng.randrange(len(decls) + 1), dict(rng.choice(decls)))
    else:
        victim = rng.randrange(len(decls))
        bad = {"Bool": 1, "Int": "1", "Nat": -1, "NatOrOff": "never", "Float": "x", "String": 3}
        t = decls[victim]["type"]
        decls[victim] = dict(decls[victim], default=bad.get(t, 7) if isinstance(t, str) else (7 if t[0] != "Enum" else "nope"))
    return decls


def _set(rng: random.Random, decls: list[dict[str, Any]]) -> list[Any]:
    roll = rng.random()
    if roll < 0.1:
        return ["undeclared." + rng.choice("xyz"), _any_value(rng)]
    d = rng.choice(decls)
    return [d["id"], _value_of(rng, d["type"]) if roll < 0.8 else _any_value(rng)]


def _sets(rng: random.Random, decls: list[dict[str, Any]], most: int) -> list[list[Any]]:
    return [_set(rng, decls) for _ in range(rng.randrange(0, most + 1))]


def _bool_ids(decls: list[dict[str, Any]]) -> list[str]:
    return [d["id"] for d in decls if d["type"] == "Bool"]


def _word(rng: random.Random, decls: list[dict[str, Any]], names: list[str]) -> str:
    roll = rng.random()
    if roll < 0.35 and names:
        return rng.choice(names + ["nosuch"])
    if roll < 0.55:
        ids = _bool_ids(decls) or [d["id"] for d in decls]
        return "toggle " + rng.choice(ids)
    if roll < 0.7:
        return "action app." + rng.choice(("stt.toggle", "interrupt", "clear"))
    d = rng.choice(decls)
    roll = rng.random()
    if d["type"] == "Float" and roll < 0.3:
        value = rng.choice(BAD_FLOAT_WORDS)
    elif roll < 0.85:
        value = model.format_value(model.from_json(_value_of(rng, d["type"])))
    else:
        value = "bogus"
    return "set " + str(d["id"]) + " " + model.quote(value)


def _body(rng: random.Random, decls: list[dict[str, Any]], names: list[str]) -> str:
    return "; ".join(_word(rng, decls, names) for _ in range(rng.randrange(0, 4)))


def _aliases(rng: random.Random, decls: list[dict[str, Any]]) -> list[list[str]]:
    names = [f"a{i}" for i in range(rng.randrange(1, 5))]
    table = []
    for i, name in enumerate(names):
        roll = rng.random()
        if roll < 0.15:
            body = name  # runs itself
        elif roll < 0.6:
            body = _body(rng, decls, names[i + 1 :])  # nests downward: no cycle
        else:
            body = _body(rng, decls, names)
        table.append([name, body])
    if rng.random() < 0.05:
        table.append(["broken", '"unterminated'])
    return table


DEFAULT_BINDS = [["ctrl+c", "action app.interrupt; action editor.clear"], ["escape", "action app.interrupt"], ["f8", "action app.stt.toggle"]]
KEYBINDINGS: tuple[Any, ...] = (
    None, "<<broken>>", [1, 2], {},
    # keys in sorted order: a scenario file is written with sorted keys, and import order is key order
    {"app.v": ["ctrl a", 7], "app.w": "", "app.x": "ctrl+a", "app.y": ["ctrl+a", "f8"], "app.z": 3},
    {"app.stt.toggle": "ctrl+b", "editor.clear": ["escape"]},
)


def _cfg_line(rng: random.Random, decls: list[dict[str, Any]], names: list[str]) -> str:
    roll = rng.random()
    if roll < 0.45:
        return _word(rng, decls, names) if rng.random() < 0.3 else "set " + rng.choice([d["id"] for d in decls] + ["undeclared.c"]) + " " + model.quote(
            model.format_value(model.from_json(_value_of(rng, rng.choice(decls)["type"]))))
    return rng.choice((
        "", "   ", "# a comment", "// another", "\t# indented comment", 'set "unterminated', 'alias q "set x 1"', 'alias bad "\\"oops"',
        "toggle x", "action app.x", "nosuch", 'set x "\\u12"', "set a b c", 'alias q "set a"', "nosuch arg", 'set x "trailing\\',
        'set memory.model "a\\nb\\u2028c"',
    ))


def _cfg_text(rng: random.Random, decls: list[dict[str, Any]], names: list[str]) -> str:
    ending = rng.choice(("\n", "\n", "\r\n"))
    return ending.join(_cfg_line(rng, decls, names) for _ in range(rng.randrange(0, 6))) + rng.choice(("", ending))


def _binds_text(rng: random.Random, decls: list[dict[str, Any]], names: list[str]) -> str:
    lines = []
    for _ in range(rng.randrange(0, 5)):
        roll = rng.random()
        if roll < 0.6:
            lines.append(f"bind {rng.choice(KEYS)} {model.quote(_body(rng, decls, names))}")
        else:
            lines.append(rng.choice(('bind f8 ""', "set x 1", 'bind ctrl+a "\\"open"', "# note", "", 'bind escape "action a"; toggle y', "bind")))
    return "\n".join(lines) + "\n"


def generate(index: int) -> list[Event]:
    rng = random.Random(f"cvar-{index}")
    events: list[Event] = []
    if rng.random() < 0.2:
        events.append({"do": "registry", "decls": _broken(rng)})
    decls = _shipped() if index % 10 == 3 else _decls(rng)
    events.append({"do": "registry", "decls": decls})
    if rng.random() < 0.85:
        agents = [{"name": n, "profile": _sets(rng, decls, 2), "sets": _sets(rng, decls, 2)}
                  for n in ("main", "reviewer", "grep")[: rng.randrange(1, 4)]]
        events.append({"do": "family", "agents": agents})
    names: list[str] = []
    for _ in range(rng.randrange(6, 22)):
        roll = rng.random()
        if roll < 0.1:
            layers = []
            for source, project in SOURCES:
                if rng.random() < 0.7:
                    layers.append({"source": source, "project": project, "sets": _sets(rng, decls, 3)})
            events.append({"do": "config", "layers": layers})
        elif roll < 0.2:
            agents = [{"name": n, "profile": _sets(rng, decls, 2), "sets": _sets(rng, decls, 2)}
                      for n in ("main", "reviewer", "grep")[: rng.randrange(1, 4)]]
            events.append({"do": "family", "agents": agents})
        elif roll < 0.25:
            events.append({"do": "spawn", "name": rng.choice(("sub", "helper")), "profile": _sets(rng, decls, 2)})
        elif roll < 0.33:
            events.append({"do": "value", "id": rng.choice(decls)["id"] if rng.random() < 0.9 else "undeclared.x"})
        elif roll < 0.43:
            events.append({"do": "set", "id": (s := _set(rng, decls))[0], "value": s[1]})
        elif roll < 0.53:
            ids = _bool_ids(decls)
            cvar = rng.choice(ids) if ids and rng.random() < 0.75 else rng.choice([d["id"] for d in decls] + ["undeclared.t"])
            events.append({"do": "toggle", "id": cvar})
        elif roll < 0.57:
            ids = _bool_ids(decls)
            events.append({"do": "gtoggle", "id": rng.choice(ids) if ids and rng.random() < 0.85 else rng.choice([d["id"] for d in decls] + ["undeclared.g"])})
        elif roll < 0.62:
            events.append({"do": "written"})
        elif roll < 0.67:
            events.append({"do": "save"})
        elif roll < 0.74:
            table = _aliases(rng, decls)
            names = [n for n, _ in table if n != "broken"]
            events.append({"do": "aliases", "table": table})
        elif roll < 0.82:
            events.append({"do": "expand", "text": _body(rng, decls, names) if rng.random() < 0.93 else 'set "x'})
        elif roll < 0.86:
            events.append({"do": "line", "text": _body(rng, decls, names) + ("; alias z \"toggle x\"" if rng.random() < 0.1 else ""),
                           "id": rng.choice(decls)["id"]})
        elif roll < 0.9:
            if rng.random() < 0.5:
                event: Event = {"do": "cfgtext", "text": _cfg_text(rng, decls, names), "local": rng.random() < 0.5}
                if rng.random() < 0.05:
                    event["unreadable"] = True
            else:
                event = {"do": "bindsfile", "binds": None if rng.random() < 0.4 else _binds_text(rng, decls, names),
                         "keybindings": rng.choice(KEYBINDINGS), "defaults": DEFAULT_BINDS, "key": rng.choice(KEYS + ("ctrl+c", "ctrl b"))}
                if rng.random() < 0.05:
                    event["unreadable"] = True
            events.append(event)
        else:
            binds = []
            for _ in range(rng.randrange(0, 5)):
                binds.append([rng.choice(KEYS), "" if rng.random() < 0.15 else _body(rng, decls, names)])
            events.append({"do": "press", "binds": binds, "key": rng.choice(KEYS)})
    return events


# tmpfs when there is one: the production code still fsyncs, and fsync there is cheap
_FAST_TMP = "/dev/shm" if Path("/dev/shm").is_dir() else None

# -- the production side ------------------------------------------------------------------------


def _ctype(raw: Any) -> CvarType:
    if isinstance(raw, list):
        if raw[0] == "Enum":
            return CvarType("Enum", tuple(raw[1]))
        return CvarType(raw[0], item=_ctype(raw[1]))
    return CvarType(raw)


def _pairs(raw: Any) -> list[tuple[str, Any]]:
    return [(str(p[0]), p[1]) for p in raw]


def _show_sets(sets: Sequence[tuple[str, Any]]) -> str:
    return "[" + ", ".join(f"{k}={canonical(v)}" for k, v in sets) + "]"


class _Run:
    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.registry = Registry([])
        self.layers: list[Layer] = []
        self.family: list[AgentLayers] = []
        self.aliases = Aliases()
        self.saves = 0

    @property
    def cvars(self) -> Cvars:
        return Cvars(self.registry, self.layers)

    def values(self, cvar: str) -> str:
        cvars = self.cvars
        declared = cvar in self.registry
        if not self.family:
            return f"config={canonical(cvars.value([], cvar)) if declared else '-'}"
        return " ".join(
            f"{a.name}={canonical(cvars.value(self.family[: i + 1], cvar)) if declared else '-'}" for i, a in enumerate(self.family)
        )

    def errors(self, kind: str) -> str:
        found = self.cvars.errors(self.family)
        return f"{kind} errors [" + ", ".join(f"{where}: {e.show()}" for where, e in found) + "]"

    def set_last(self, cvar: str, value: Any) -> CvarError | None:
        error = self.cvars.check(cvar, value, True)
        if error is None and self.family:
            self.family[-1].sets.append((cvar, value))
        return error

    def run_line(self, text: str) -> str:
        try:
            commands = self.aliases.expand(parse_list(text))
        except ParseError as error:
            return f"ParseError({error})"
        except ExpandError as error:
            return error.show()
        results = []
        for c in commands:
            outcome = "ok"
            try:
                if c.verb == "set":
                    value = self.cvars.parse_set(c.args[0], c.args[1], local_only=True)
                    refused = self.set_last(c.args[0], value)
                    if refused is not None:
                        raise refused
                elif c.verb == "toggle":
                    new = self.cvars.toggled(self.family, c.args[0])
                    if self.family:
                        self.family[-1].sets.append((c.args[0], new))
                elif c.verb == "alias":
                    self.aliases.define(c.args[0], c.args[1])
                else:
                    outcome = "client-only"
            except CvarError as error:
                answer = error.data()  # the daemon's answer to a refused command: {kind, id, message}
                outcome = f"CvarError::{answer['kind']}({answer['id']})"
            except ParseError as error:
                outcome = f"ParseError({error})"
            results.append(f"{c} -> {outcome}")
        return "ran [" + "; ".join(results) + "]"

    def step(self, event: Event) -> str:
        kind = event["do"]
        if kind == "registry":
            try:
                self.registry = Registry(
                    Cvar(d["id"], _ctype(d["type"]), d["scope"], d["persist"], d["replicate"], d["default"]) for d in event["decls"]
                )
            except RegistryError as error:
                self.registry, self.layers, self.family, self.aliases = Registry([]), [], [], Aliases()
                return f"RegistryError::{error.kind}({error.id})"
            self.layers, self.family, self.aliases = [], [], Aliases()
            return f"registry {len(self.registry)} cvars"
        if kind == "config":
            self.layers = [Layer(l["source"], l["project"], _pairs(l["sets"])) for l in event["layers"]]
            return self.errors(kind)
        if kind == "family":
            self.family = [AgentLayers(a["name"], _pairs(a["profile"]), _pairs(a["sets"])) for a in event["agents"]]
            return self.errors(kind)
        if kind == "spawn":
            self.family.append(AgentLayers(event["name"], _pairs(event["profile"]), []))
            return self.errors(kind)
        if kind == "value":
            return f"value {event['id']} {self.values(event['id'])}"
        if kind == "set":
            refused = self.set_last(event["id"], event["value"])
            return f"set {'ok' if refused is None else refused.show()} {self.values(event['id'])}"
        if kind == "toggle":
            try:
                new = self.cvars.toggled(self.family, event["id"])
                if self.family:
                    self.family[-1].sets.append((event["id"], new))
                said = "ok"
            except CvarError as error:
                said = error.show()
            return f"toggle {said} {self.values(event['id'])}"
        if kind == "gtoggle":
            try:
                new = self.cvars.global_toggled(event["id"])
            except CvarError as error:
                return "gtoggle " + error.show()
            target = next((l for l in self.layers if l.source == "global config.cfg"), None)
            if target is None:
                target = Layer("global config.cfg", False, [])
                self.layers.append(target)
            target.sets.append((event["id"], new))
            return f"gtoggle {event['id']}={canonical(new)} {self.values(event['id'])}"
        if kind == "written":
            if not self.family:
                return "written [] replicated []"
            cvars = self.cvars
            return f"written {_show_sets(cvars.written(self.family[-1]))} replicated {_show_sets(cvars.replicated(self.family))}"
        if kind == "save":
            if not self.family:
                return "saved []"
            cvars = self.cvars
            before = {d.id: cvars.value(self.family, d.id) for d in self.registry}
            self.saves += 1
            path = self.workdir / "agents" / f"{self.saves}-{self.family[-1].name}.cfg"
            cfgfiles.write_sets(path, cvars.written(self.family[-1]))
            read = cfgfiles.read_cfg(path, cvars, local_only=True)
            assert not read.errors, read.errors
            last = self.family[-1]
            self.family[-1] = AgentLayers(last.name, last.profile + read.sets, [])
            same = [d.id for d in self.registry if d.persist and cvars.value(self.family, d.id) == before[d.id]]
            return f"saved {_show_sets(self.family[-1].profile)} same {','.join(same)}"
        if kind == "aliases":
            table = Aliases()
            for name, text in event["table"]:
                try:
                    table.define(name, text)
                except ParseError as error:
                    return f"alias {name} ParseError({error})"
            self.aliases = table
            return "aliases " + ",".join(name for name, _ in table.as_json())
        if kind == "line":
            said = self.run_line(event["text"])
            return f"line {said} {self.values(event['id'])}"
        if kind == "expand":
            try:
                return "expand [" + format_list(self.aliases.expand(parse_list(event["text"]))) + "]"
            except ParseError as error:
                return f"expand ParseError({error})"
            except ExpandError as error:
                return "expand " + error.show()
        if kind == "cfgtext":
            path = self.workdir / f"cfg-{self.saves}.cfg"
            self.saves += 1
            if event.get("unreadable"):
                path.mkdir()
            else:
                path.write_text(event["text"], encoding="utf-8", newline="")
            read = cfgfiles.read_cfg(path, self.cvars, local_only=event.get("local", False))
            if not read.readable:
                return "cfgtext unreadable sets [] errors [0: unreadable]"
            shown = [e.show().split(": ", 1) for e in read.errors]  # "<path>:<line>: <message>"
            errors = [f"{where.rsplit(':', 1)[1]}: {_error_word(message)}" for where, message in shown]
            return f"cfgtext sets {_show_sets(read.sets)} errors [{', '.join(errors)}]"
        if kind == "bindsfile":
            folder = self.workdir / f"binds-{self.saves}"
            self.saves += 1
            folder.mkdir()
            if event.get("unreadable"):
                (folder / bindfiles.BINDS_FILE).mkdir()
            elif event.get("binds") is not None:
                (folder / bindfiles.BINDS_FILE).write_text(event["binds"], encoding="utf-8", newline="")
            source = event.get("keybindings")
            if source is not None:
                raw = "{not json" if source == "<<broken>>" else json.dumps(source)
                (folder / bindfiles.KEYBINDINGS_FILE).write_text(raw, encoding="utf-8")
            loaded = bindfiles.load(folder, tuple((k, b) for k, b in event["defaults"]))
            warned = []
            for warning in loaded.warnings:
                if "could not be imported" in warning:
                    warned.append("import")
                elif "cannot be read" in warning:
                    warned.append("unreadable")
                else:
                    warned.append(warning.rsplit(":", 2)[-2])
            try:
                pressed = loaded.binds.press(event["key"], self.aliases)
                said = "unbound" if pressed is None else f"session [{format_list(pressed.session)}] client [{','.join(pressed.client)}]"
            except ExpandError as error:
                said = error.show()
            listed = "; ".join(f"{k}={format_list(b)}" for k, b in loaded.binds.order)
            keys = ",".join(loaded.binds.keys())
            return f"bindsfile warnings [{','.join(warned)}] binds [{listed}] keys [{keys}] press {event['key']} {said}"
        if kind == "press":
            binds = Binds()
            for key, text in event["binds"]:
                try:
                    binds.add(key, text)
                except ParseError:
                    binds.add(key, [])
            try:
                pressed = binds.press(event["key"], self.aliases)
            except ExpandError as error:
                return f"press {event['key']} {error.show()}"
            if pressed is None:
                return f"press {event['key']} unbound"
            return f"press {event['key']} session [{format_list(pressed.session)}] client [{','.join(pressed.client)}]"
        raise ValueError(f"unknown event {kind!r}")


def _error_word(message: str) -> str:
    """A cfg settings error as the transcript names it."""
    if message.startswith("CvarError::"):
        return message.split(": ", 1)[0]
    if message.startswith("does not parse: "):
        return f"ParseError({message[len('does not parse: '):]})"
    return message


def production(events: Sequence[Event]) -> list[str]:
    with tempfile.TemporaryDirectory(dir=_FAST_TMP, prefix="eukhe-cvar-bridge-") as tmp:
        run = _Run(Path(tmp))
        return [f"{number} {run.step(event)}" for number, event in enumerate(events)]


# -- coverage ---------------------------------------------------------------------------------

CASES = frozenset({
    "registry accepted", "registry duplicate id", "registry wrong default",
    "config set applies", "project file sets a Global cvar", "undeclared id", "wrong type",
    "Global cvar in a profile or sets", "profile set applies", "agent set wins over parent",
    "subagent inherits", "toggle of an inherited value", "toggle NotBool", "toggle Global",
    "global toggle with a project layer", "written persist sets", "replicated values", "save read back",
    "expand plain", "expand nested alias", "expand cycle", "expand unknown", "parse error",
    "line runs an alias", "press bound", "press unbound", "press empty bind", "press first bind wins",
    "press action to the client", "press expand error",
    # input classes
    "every setting id of the table", *(f"a cvar of kind {kind}" for kind in oracle.KINDS), "a huge integer", "a huge or tiny float", "a non-finite float",
    "an empty string", "a string with a newline, CR or U+2028", "a non-ASCII string", "a decimal word past the largest float",
    "a save of a value that needs quotes or escapes",
    # files
    "a cfg file with sets, comments and errors", "an unreadable cfg file", "a cfg file with CRLF line ends",
    "a binds.cfg with a line that is not a bind", "an unreadable binds.cfg", "binds imported from keybindings.json",
    "a keybindings.json that cannot be imported",
})


def _values_in(event: Event) -> list[Any]:
    """Every value an event carries (sets of layers and agents, a set's value, defaults)."""
    found: list[Any] = []
    for layer in event.get("layers", []):
        found.extend(v for _, v in layer["sets"])
    for agent in event.get("agents", []):
        found.extend(v for _, v in agent["profile"] + agent["sets"])
    found.extend(v for _, v in event.get("profile", []))
    if "value" in event:
        found.append(event["value"])
    found.extend(d["default"] for d in event.get("decls", []))
    return found


def _classes(value: Any) -> set[str]:
    out: set[str] = set()
    if isinstance(value, bool):
        return out
    if isinstance(value, int) and abs(value) >= 2**63:
        out.add("a huge integer")
    if isinstance(value, float):
        if not math.isfinite(value):
            out.add("a non-finite float")
        elif value != 0 and (abs(value) >= 1e16 or abs(value) < 1e-4):
            out.add("a huge or tiny float")
    if isinstance(value, str):
        if value == "":
            out.add("an empty string")
        if any(ch in value for ch in "\n\r\u2028"):
            out.add("a string with a newline, CR or U+2028")
        if not value.isascii():
            out.add("a non-ASCII string")
    return out


def reached(events: Sequence[Event]) -> set[str]:
    cases: set[str] = set()
    states = [model.State((), (), (), ())]
    for event in events:
        state = states[-1]
        kind = event["do"]
        for value in _values_in(event):
            cases |= _classes(value)
        if kind in ("line", "expand") and any(w in event["text"] for w in BAD_FLOAT_WORDS[:1]):
            cases.add("a decimal word past the largest float")
        if kind == "cfgtext":
            if event.get("unreadable"):
                cases.add("an unreadable cfg file")
            else:
                sets, errs = model.read_cfg(state.reg, event["text"], event["local"])
                if sets and errs and "#" in event["text"]:
                    cases.add("a cfg file with sets, comments and errors")
                if "\r\n" in event["text"]:
                    cases.add("a cfg file with CRLF line ends")
        if kind == "bindsfile":
            if event.get("unreadable"):
                cases.add("an unreadable binds.cfg")
            elif event["binds"] is None:
                source = event["keybindings"]
                if isinstance(source, dict) and source:
                    cases.add("binds imported from keybindings.json")
                elif source is not None and not isinstance(source, dict):
                    cases.add("a keybindings.json that cannot be imported")
            elif model.binds_file(event["binds"], ())[1]:
                cases.add("a binds.cfg with a line that is not a bind")
        if kind == "save" and state.family:
            for s in model.written(state.reg, state.family[-1]):
                if isinstance(s.value, (str, float)) and model.quote(model.format_value(s.value)) != model.format_value(s.value):
                    cases.add("a save of a value that needs quotes or escapes")
        if kind == "registry":
            decls = tuple(model.decl_of(d) for d in event["decls"])
            if {d.id for d in decls} >= set(oracle.IDS):
                cases.add("every setting id of the table")
            cases |= {f"a cvar of kind {d.type.kind}" for d in decls}
            reg = model.registry(decls)
            cases.add("registry accepted" if not isinstance(reg, model.RegistryError)
                      else "registry duplicate id" if reg.kind == "duplicate" else "registry wrong default")
        new, _ = model._step(state, event)
        if kind in ("config", "family", "spawn"):
            for where, e in model.errors(new.reg, new.config, new.family):
                cases.add({"Undeclared": "undeclared id", "BadValue": "wrong type"}.get(
                    e.kind, "project file sets a Global cvar" if "project" in where else "Global cvar in a profile or sets"))
            for layer in new.config:
                if any(model.check(new.reg, s, layer.project) is None for s in layer.sets):
                    cases.add("config set applies")
            for agent in new.family:
                if any(model.check(new.reg, s, True) is None for s in agent.profile):
                    cases.add("profile set applies")
            if len(new.family) > 1:
                for d in new.reg:
                    parent = model.value(new.reg, new.config, new.family[:-1], d.id)
                    if model.layer_value(new.reg, new.family[-1].sets, True, d.id)[0] and parent != model.value(new.reg, new.config, new.family, d.id):
                        cases.add("agent set wins over parent")
                    if not new.family[-1].profile and not new.family[-1].sets:
                        cases.add("subagent inherits")
        if kind == "toggle":
            decl = model.lookup(state.reg, event["id"])
            if decl is not None and decl.type.kind != model.BOOL:
                cases.add("toggle NotBool")
            elif decl is not None and decl.scope == model.GLOBAL:
                cases.add("toggle Global")
            elif decl is not None and len(state.family) > 1 and not model.layer_value(state.reg, state.family[-1].sets, True, decl.id)[0]:
                cases.add("toggle of an inherited value")
        if kind == "gtoggle" and any(l.project for l in state.config) and not isinstance(model.global_toggle(state.reg, state.config, event["id"]), model.CvarError):
            cases.add("global toggle with a project layer")
        if kind == "written" and state.family:
            if model.written(state.reg, state.family[-1]):
                cases.add("written persist sets")
            if model.replicated(state.reg, state.config, state.family):
                cases.add("replicated values")
        if kind == "save" and state.family and model.written(state.reg, state.family[-1]):
            cases.add("save read back")
        if kind in ("expand", "line"):
            parsed = model.parse_list(event["text"])
            if isinstance(parsed, model.ParseError):
                cases.add("parse error")
            else:
                expanded = model.expand(state.aliases, parsed)
                if isinstance(expanded, model.ExpandError):
                    cases.add("expand cycle" if expanded.kind == "Cycle" else "expand unknown")
                elif any(c.verb == model.RUN for c in parsed):
                    cases.add("line runs an alias" if kind == "line" else "expand nested alias")
                elif kind == "expand":
                    cases.add("expand plain")
        if kind == "press":
            keys = [k for k, _ in event["binds"]]
            key = event["key"]
            if key not in keys:
                cases.add("press unbound")
            else:
                body = event["binds"][keys.index(key)][1]
                cases.add("press empty bind" if body == "" else "press bound")
                if keys.count(key) > 1:
                    cases.add("press first bind wins")
                binds = tuple((k, p if not isinstance(p := model.parse_list(t), model.ParseError) else ()) for k, t in event["binds"])
                pressed = model.press(binds, state.aliases, key)
                if isinstance(pressed, model.ExpandError):
                    cases.add("press expand error")
                elif pressed is not None and pressed[1]:
                    cases.add("press action to the client")
        states.append(new)
    return cases


BRIDGE = Bridge(
    area="cvar",
    count=300,
    generate=generate,
    model=model.transcript,
    production=production,
    cases=CASES,
    reached=reached,
)

