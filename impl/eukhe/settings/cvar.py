"""Console variables in production (control.md S4): the registry, the layered values, the
command language (parse, alias expansion, binds) and the typed errors.

- ``Registry``: one declaration per id; a second declaration or a default of the wrong type
  raises ``RegistryError`` at startup (S4.1).
- ``Cvars``: the values over a config (its layers already read, see ``eukhe.settings.layers``)
  and a family of agents, root first (S4: default < config < each agent: profile < own sets).
  The config is folded once into a table; a family lookup scans the agents' sets from the
  newest back, so the last valid set wins without walking every layer.
- The command language: ``parse_list`` (``;`` between commands, a double-quoted word keeps its
  spaces, ``\\"`` and ``\\\\`` escape in quotes), ``Aliases.expand`` (S4.4: nests at most one level
  per alias of the table plus one, deeper is ``ExpandError`` Cycle, a missing alias Unknown,
  a failing expansion returns nothing) and ``Binds.press`` (S4.5).

Values are plain JSON values (bool, int, float, str, list, dict with str keys).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from eukhe import strict_json

BOOL, INT, NAT, NAT_OR_OFF, FLOAT, STRING, ENUM, LIST, MAP = (
    "Bool", "Int", "Nat", "NatOrOff", "Float", "String", "Enum", "List", "Map",
)
GLOBAL, LOCAL = "Global", "Local"
OFF_WORDS = frozenset({"off", "none"})
UNDECLARED, BAD_VALUE, GLOBAL_ERR, NOT_BOOL = "Undeclared", "BadValue", "Global", "NotBool"


def canonical(value: Any) -> str:
    """A value as compact JSON with sorted keys: how values print everywhere."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _whole(value: Any) -> bool:
    return type(value) is int


@dataclass(frozen=True)
class CvarType:
    kind: str
    choices: tuple[str, ...] = ()
    item: CvarType | None = None

    def holds(self, value: Any) -> bool:
        kind = self.kind
        if kind == BOOL:
            return value is True or value is False
        if kind == INT:
            return _whole(value)
        if kind == NAT:
            return _whole(value) and value >= 0
        if kind == NAT_OR_OFF:
            return (_whole(value) and value >= 0) or (isinstance(value, str) and value in OFF_WORDS)
        if kind == FLOAT:
            return _whole(value) or (type(value) is float and math.isfinite(value))
        if kind == STRING:
            return isinstance(value, str)
        if kind == ENUM:
            return isinstance(value, str) and value in self.choices
        item = self.item
        if kind == LIST:
            return item is not None and isinstance(value, list) and all(item.holds(v) for v in value)
        # Map (a kind the table does not know holds nothing)
        return kind == MAP and item is not None and isinstance(value, dict) and all(
            isinstance(k, str) and item.holds(v) for k, v in value.items()
        )

    def parse(self, text: str) -> Any:
        """The value of a value word of the command language; ValueError when it is none."""
        kind = self.kind
        if kind == BOOL:
            if text == "true":
                return True
            if text == "false":
                return False
        elif kind in (INT, NAT, NAT_OR_OFF):
            if kind == NAT_OR_OFF and text in OFF_WORDS:
                return text
            body = text[1:] if kind == INT and text[:1] == "-" else text
            if body and body.isascii() and body.isdigit():
                return int(text)
        elif kind == FLOAT:
            body = text[1:] if text[:1] == "-" else text
            whole, dot, frac = body.partition(".")
            if whole.isascii() and whole.isdigit() and (not dot or (frac.isascii() and frac.isdigit())):
                if not dot:
                    return int(text)
                number = float(text)
                if math.isfinite(number):  # a decimal past the largest float reads as inf: refused
                    return number
        elif kind in (STRING,):
            return text
        elif kind == ENUM:
            if text in self.choices:
                return text
        else:
            try:
                value = strict_json.loads(text)  # at most 100 deep, no NaN or Infinity
            except ValueError:
                raise ValueError(f"{text!r} is not JSON") from None
            if self.holds(value):
                return value
        raise ValueError(f"{text!r} is not a {self.describe()}")

    def describe(self) -> str:
        if self.kind == ENUM:
            return "one of " + "|".join(self.choices)
        if self.item is not None:
            return f"{self.kind} of {self.item.describe()}"
        return self.kind


def format_value(value: Any) -> str:
    """The value word that CvarType.parse reads back as ``value``."""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return value
    if type(value) is int:
        return str(value)
    if type(value) is float:
        return decimal_word(value)
    return canonical(value)


def decimal_word(number: float) -> str:
    """A finite float as a decimal word without an exponent, which reads back to the same float
    (repr's 1e+300 would not parse as a Float word)."""
    text = format(Decimal(repr(number)), "f")
    return text if "." in text else text + ".0"


@dataclass(frozen=True)
class Cvar:
    id: str
    type: CvarType
    scope: str
    persist: bool
    replicate: bool
    default: Any
    doc: str = ""


class RegistryError(Exception):
    """A declaration table that cannot start eukhe: a duplicate id or a mistyped default."""

    def __init__(self, kind: str, cvar: str) -> None:
        self.kind = kind
        self.id = cvar
        what = "is declared twice" if kind == "duplicate" else "has a default that is not of its type"
        super().__init__(f"RegistryError::{kind}: cvar {cvar} {what}")


class Registry:
    def __init__(self, decls: Iterable[Cvar]) -> None:
        self._table: dict[str, Cvar] = {}
        for decl in decls:
            if decl.id in self._table:
                raise RegistryError("duplicate", decl.id)
            if not decl.type.holds(decl.default):
                raise RegistryError("default", decl.id)
            self._table[decl.id] = decl

    def get(self, cvar: str) -> Cvar | None:
        return self._table.get(cvar)

    def __contains__(self, cvar: object) -> bool:
        return cvar in self._table

    def __iter__(self) -> Iterator[Cvar]:
        return iter(self._table.values())

    def __len__(self) -> int:
        return len(self._table)


class CvarError(Exception):
    """A refused set: Undeclared, BadValue, Global or NotBool, with the cvar's id."""

    def __init__(self, kind: str, cvar: str, message: str = "") -> None:
        self.kind = kind
        self.id = cvar
        self.message = message or {
            UNDECLARED: f"no cvar {cvar} is declared",
            BAD_VALUE: f"the value is not of the type of {cvar}",
            GLOBAL_ERR: f"{cvar} is Global: only the global config sets it",
            NOT_BOOL: f"{cvar} is not a Bool: it cannot be toggled",
        }.get(kind, kind)
        super().__init__(f"CvarError::{kind}({cvar}): {self.message}")

    def data(self) -> dict[str, str]:
        """The daemon's answer to a refused command: {kind, id, message}."""
        return {"kind": self.kind, "id": self.id, "message": self.message}

    def show(self) -> str:
        return f"CvarError::{self.kind}({self.id})"


# -- values over layers ------------------------------------------------------------------------


@dataclass
class Layer:
    """One file of the config: its name, whether it is a project file, its sets in order."""

    source: str
    project: bool
    sets: list[tuple[str, Any]] = field(default_factory=list)


@dataclass
class AgentLayers:
    """One agent of a family: its profile's sets and its own runtime sets."""

    name: str
    profile: list[tuple[str, Any]] = field(default_factory=list)
    sets: list[tuple[str, Any]] = field(default_factory=list)


class Cvars:
    """The values of a registry over a config."""

    def __init__(self, registry: Registry, config: Sequence[Layer] = ()) -> None:
        self.registry = registry
        self.config = list(config)
        self._base: dict[str, tuple[Any, str]] = {d.id: (d.default, "default") for d in registry}
        for layer in self.config:
            for cvar, value in layer.sets:
                if self.check(cvar, value, layer.project) is None:
                    self._base[cvar] = (value, layer.source)

    def check(self, cvar: str, value: Any, local_only: bool) -> CvarError | None:
        decl = self.registry.get(cvar)
        if decl is None:
            return CvarError(UNDECLARED, cvar)
        if local_only and decl.scope == GLOBAL:
            return CvarError(GLOBAL_ERR, cvar)
        if not decl.type.holds(value):
            return CvarError(BAD_VALUE, cvar, f"{canonical(value)} is not a {decl.type.describe()} ({cvar})")
        return None

    def sourced(self, family: Sequence[AgentLayers], cvar: str) -> tuple[Any, str] | None:
        """(value, the layer it came from) in the last agent of ``family``; None: undeclared."""
        if cvar not in self.registry:
            return None
        for agent in reversed(family):
            for where, sets in (("sets " + agent.name, agent.sets), ("profile " + agent.name, agent.profile)):
                for key, value in reversed(sets):
                    if key == cvar and self.check(key, value, True) is None:
                        return value, where
        return self._base[cvar]

    def value(self, family: Sequence[AgentLayers], cvar: str) -> Any:
        found = self.sourced(family, cvar)
        return None if found is None else found[0]

    def config_value(self, cvar: str, *, global_only: bool = False) -> Any:
        if not global_only:
            return self._base[cvar][0]
        decl = self.registry.get(cvar)
        assert decl is not None
        result = decl.default
        for layer in self.config:
            if not layer.project:
                for key, value in layer.sets:
                    if key == cvar and self.check(key, value, False) is None:
                        result = value
        return result

    def errors(self, family: Sequence[AgentLayers] = ()) -> list[tuple[str, CvarError]]:
        found: list[tuple[str, CvarError]] = []
        for layer in self.config:
            for cvar, value in layer.sets:
                error = self.check(cvar, value, layer.project)
                if error is not None:
                    found.append((layer.source, error))
        for agent in family:
            for where, sets in (("profile " + agent.name, agent.profile), ("sets " + agent.name, agent.sets)):
                for cvar, value in sets:
                    error = self.check(cvar, value, True)
                    if error is not None:
                        found.append((where, error))
        return found

    def toggled(self, family: Sequence[AgentLayers], cvar: str) -> bool:
        """The value a toggle in the last agent sets: the opposite of what the agent has."""
        decl = self.registry.get(cvar)
        if decl is None:
            raise CvarError(UNDECLARED, cvar)
        if decl.type.kind != BOOL:
            raise CvarError(NOT_BOOL, cvar)
        if decl.scope == GLOBAL:
            raise CvarError(GLOBAL_ERR, cvar)
        return not self.value(family, cvar)

    def global_toggled(self, cvar: str) -> bool:
        """/set --global toggle: the opposite of the global layers' value only."""
        decl = self.registry.get(cvar)
        if decl is None:
            raise CvarError(UNDECLARED, cvar)
        if decl.type.kind != BOOL:
            raise CvarError(NOT_BOOL, cvar)
        return not self.config_value(cvar, global_only=True)

    def written(self, agent: AgentLayers) -> list[tuple[str, Any]]:
        """/cvar save: the last valid set of each persist cvar among the agent's own sets."""
        last: dict[str, Any] = {}
        for cvar, value in agent.sets:
            if self.check(cvar, value, True) is None:
                last[cvar] = value
        return [(d.id, last[d.id]) for d in self.registry if d.persist and d.id in last]

    def replicated(self, family: Sequence[AgentLayers]) -> list[tuple[str, Any]]:
        return [(d.id, self.value(family, d.id)) for d in self.registry if d.replicate]

    def parse_set(self, cvar: str, text: str, *, local_only: bool) -> Any:
        """The value of ``set <cvar> <text>`` in a layer; CvarError when the set is refused."""
        decl = self.registry.get(cvar)
        if decl is None:
            raise CvarError(UNDECLARED, cvar)
        if local_only and decl.scope == GLOBAL:
            raise CvarError(GLOBAL_ERR, cvar)
        try:
            return decl.type.parse(text)
        except ValueError as error:
            raise CvarError(BAD_VALUE, cvar, f"{error} ({cvar})") from None


# -- the command language -------------------------------------------------------------------

SET, TOGGLE, ALIAS, BIND, ACTION, RUN = "set", "toggle", "alias", "bind", "action", "run"
ARITY = {SET: 2, TOGGLE: 1, ALIAS: 2, BIND: 2, ACTION: 1}
_SPECIAL = frozenset(';"\\')
# the characters that end a line (str.splitlines): a quoted word writes them as escapes
LINE_ENDS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
_ESCAPES = {"\n": "\\n", "\r": "\\r", '"': '\\"', "\\": "\\\\"}
_HEX = frozenset("0123456789abcdefABCDEF")


class ParseError(ValueError):
    """A line of the command language that does not parse."""


class ExpandError(Exception):
    """ExpandError::Cycle or ExpandError::Unknown, naming the alias."""

    def __init__(self, kind: str, name: str) -> None:
        self.kind = kind
        self.name = name
        super().__init__(f"ExpandError::{kind}({name})")

    def show(self) -> str:
        return f"ExpandError::{self.kind}({self.name})"


@dataclass(frozen=True)
class Command:
    verb: str
    args: tuple[str, ...]

    def __str__(self) -> str:
        if self.verb == RUN:
            return self.args[0]
        return " ".join([self.verb, *(quote(a) for a in self.args)])


def quote(word: str) -> str:
    """A word that reads back as itself: bare when it can be, else quoted; a quoted word escapes
    ``"`` and ``\\`` and writes each character that ends a line as an escape."""
    if word and not any(ch in _SPECIAL or ch in LINE_ENDS or ch.isspace() for ch in word):
        return word
    return '"' + "".join(_escape(ch) for ch in word) + '"'


def _escape(ch: str) -> str:
    if ch in _ESCAPES:
        return _ESCAPES[ch]
    if ch in LINE_ENDS:
        return f"\\u{ord(ch):04x}"
    return ch


def format_list(commands: Iterable[Command]) -> str:
    return "; ".join(str(c) for c in commands)


def split_words(text: str) -> list[list[str]]:
    """Commands of words. In quotes: ``\\n`` line feed, ``\\r`` carriage return, ``\\uXXXX`` that
    character, a backslash before any other character that character."""
    commands: list[list[str]] = [[]]
    word: list[str] = []
    in_word = quoted = False
    at, end = 0, len(text)
    while at < end:
        ch = text[at]
        at += 1
        if quoted:
            if ch == "\\":
                if at >= end:
                    break
                escaped = text[at]
                at += 1
                if escaped == "n":
                    word.append("\n")
                elif escaped == "r":
                    word.append("\r")
                elif escaped == "u":
                    digits = text[at : at + 4]
                    if len(digits) != 4 or not all(d in _HEX for d in digits):
                        raise ParseError("\\u takes 4 hex digits")
                    word.append(chr(int(digits, 16)))
                    at += 4
                else:
                    word.append(escaped)
            elif ch == '"':
                quoted = False
            else:
                word.append(ch)
            continue
        if ch == '"':
            quoted = in_word = True
        elif ch == ";" or ch in " \t\r\n":
            if in_word:
                commands[-1].append("".join(word))
                word.clear()
                in_word = False
            if ch == ";":
                commands.append([])
        else:
            word.append(ch)
            in_word = True
    if quoted:
        raise ParseError("unterminated quote")
    if in_word:
        commands[-1].append("".join(word))
    return [c for c in commands if c]


def parse_list(text: str) -> list[Command]:
    out: list[Command] = []
    for words in split_words(text):
        verb, args = words[0], tuple(words[1:])
        arity = ARITY.get(verb)
        if arity is None:
            if args:
                raise ParseError(f"unknown command {verb}")
            out.append(Command(RUN, (verb,)))
        elif len(args) != arity:
            raise ParseError(f"{verb} takes {arity} words, not {len(args)}")
        else:
            out.append(Command(verb, args))
    return out


class Aliases:
    """An alias table: name -> parsed commands (a later definition replaces an earlier one)."""

    def __init__(self, table: Mapping[str, Sequence[Command]] | None = None) -> None:
        self.table: dict[str, list[Command]] = {k: list(v) for k, v in (table or {}).items()}

    def define(self, name: str, body: str | Sequence[Command]) -> None:
        commands = parse_list(body) if isinstance(body, str) else list(body)
        self.table.pop(name, None)
        self.table[name] = commands

    def expand(self, commands: Sequence[Command]) -> list[Command]:
        """Every run of an alias replaced by its commands (S4.4); raises ExpandError."""
        limit = len(self.table) + 1
        out: list[Command] = []
        # an explicit stack of (commands, position, depth) frames
        stack: list[tuple[Sequence[Command], int, int]] = [(commands, 0, 0)]
        while stack:
            body, at, depth = stack.pop()
            if at >= len(body):
                continue
            command = body[at]
            stack.append((body, at + 1, depth))
            if command.verb != RUN:
                out.append(command)
                continue
            name = command.args[0]
            inner = self.table.get(name)
            if inner is None:
                raise ExpandError("Unknown", name)
            if depth + 1 > limit:
                raise ExpandError("Cycle", name)
            stack.append((inner, 0, depth + 1))
        return out

    def as_json(self) -> list[list[str]]:
        return [[name, format_list(body)] for name, body in self.table.items()]


@dataclass(frozen=True)
class Press:
    """What a key press runs: commands for the session and action ids for the client."""

    session: list[Command]
    client: list[str]


class Binds:
    """Key binds in order, the user's before the defaults: the first bind of a key wins."""

    def __init__(self) -> None:
        self._first: dict[str, list[Command]] = {}
        self.order: list[tuple[str, list[Command]]] = []

    def add(self, key: str, body: str | Sequence[Command]) -> None:
        commands = parse_list(body) if isinstance(body, str) else list(body)
        self.order.append((key, commands))
        self._first.setdefault(key, commands)

    def keys(self) -> list[str]:
        return list(self._first)

    def press(self, key: str, aliases: Aliases) -> Press | None:
        """None: no bind has the key, and the press runs nothing (an empty bind runs nothing too)."""
        body = self._first.get(key)
        if body is None:
            return None
        expanded = aliases.expand(body)
        return Press([c for c in expanded if c.verb != ACTION], [c.args[0] for c in expanded if c.verb == ACTION])
