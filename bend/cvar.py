"""Settings as console variables: the model of control.md S4 (bend/cvar.bend: registry,
value, written, toggle, expand, press).

Read it next to 000_f7323c157e80a40d.txt, S4. Values are immutable: a JSON list is a tuple, a
JSON object an ``Obj`` of sorted pairs; numbers, strings and booleans are themselves.

- Registry (S4.1): each id once, each default of its type, else RegistryError.
- Value (S4 layers): default < config (each layer of the config in order) < each agent of
  the family, root first: its profile < its own sets. In each layer the last valid set of a
  cvar wins. A set is valid when its cvar is declared and its value has the type of the
  cvar; in a project file, a profile or an agent's sets the cvar must also be Local.
  Checks run in the order Undeclared, Global, BadValue (NotBool for a toggle).
- Toggle (S4): the opposite of the agent's value, with the values it inherits; the new value
  is a set of the agent. A global toggle (/set --global) reads the global layers only.
- Written (S4.3, S4.6): the last valid set of each persist cvar among the agent's own sets, in
  declaration order; read back after the agent's profile, they give the same values.
- Command language (S4 table, S4.4, S4.5): ``;``-separated commands, a double-quoted word keeps
  its spaces (``\\"`` and ``\\\\`` escape inside quotes, and so do ``\\n``, ``\\r`` and ``\\uXXXX`` for the
  characters that end a line, so a value word never breaks the line of a cfg file); expansion nests at most one level per
  alias of the table and one more, deeper is ExpandError::Cycle; an unknown alias is
  ExpandError::Unknown; a failing expansion runs nothing. A press runs the first bind of its
  key: set, toggle and alias commands go to the session, action commands to the client.
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass
from decimal import Decimal

# -- types and values ----------------------------------------------------------------------

BOOL, INT, NAT, NAT_OR_OFF, FLOAT, STRING, ENUM, LIST, MAP = (
    "Bool", "Int", "Nat", "NatOrOff", "Float", "String", "Enum", "List", "Map",
)
KINDS: tuple[str, ...] = (BOOL, INT, NAT, NAT_OR_OFF, FLOAT, STRING, ENUM, LIST, MAP)
GLOBAL, LOCAL = "Global", "Local"
OFF_WORDS: tuple[str, ...] = ("off", "none")


@dataclass(frozen=True)
class Obj:
    """A JSON object as sorted (key, value) pairs (and, apart, in the document's order)."""

    pairs: tuple[tuple[str, "Value"], ...]
    order: tuple[tuple[str, "Value"], ...] | None = None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Obj) and self.pairs == other.pairs

    def __hash__(self) -> int:
        return hash(self.pairs)

    @property
    def pairs_in_order(self) -> tuple[tuple[str, "Value"], ...]:
        return self.pairs if self.order is None else self.order


Value = bool | int | float | str | tuple["Value", ...] | Obj | None


@dataclass(frozen=True)
class Type:
    kind: str
    choices: tuple[str, ...] = ()  # Enum
    item: "Type | None" = None  # List, Map


@dataclass(frozen=True)
class Decl:
    id: str
    type: Type
    scope: str
    persist: bool
    replicate: bool
    default: Value


def from_json(value: object) -> Value:
    """The immutable value of a parsed JSON value."""
    if isinstance(value, list):
        return tuple(from_json(v) for v in value)
    if isinstance(value, dict):
        items = tuple((str(k), from_json(v)) for k, v in value.items())
        return Obj(tuple(sorted(items)), items)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def to_json(value: Value) -> object:
    if isinstance(value, tuple):
        return [to_json(v) for v in value]
    if isinstance(value, Obj):
        return {k: to_json(v) for k, v in value.pairs}
    return value


def show(value: Value) -> str:
    """The canonical text of a value in a transcript: compact JSON, keys sorted."""
    return json.dumps(to_json(value), sort_keys=True, separators=(",", ":"))


def is_int(value: Value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def has_type(t: Type, value: Value) -> bool:
    if t.kind == BOOL:
        return isinstance(value, bool)
    if t.kind == INT:
        return is_int(value)
    if t.kind == NAT:
        return is_int(value) and value >= 0  # type: ignore[operator]
    if t.kind == NAT_OR_OFF:
        return (is_int(value) and value >= 0) or value in OFF_WORDS  # type: ignore[operator]
    if t.kind == FLOAT:
        return is_int(value) or (isinstance(value, float) and math.isfinite(value))
    if t.kind == STRING:
        return isinstance(value, str)
    if t.kind == ENUM:
        return isinstance(value, str) and value in t.choices
    if t.kind == LIST:
        return isinstance(value, tuple) and t.item is not None and all(has_type(t.item, v) for v in value)
    if t.kind == MAP:
        return isinstance(value, Obj) and t.item is not None and all(has_type(t.item, v) for _, v in value.pairs)
    return False


def _digits(text: str) -> bool:
    if text == "":
        return False
    for ch in text:
        if ch not in "0123456789":
            return False
    return True


def _decimal(text: str) -> bool:
    """-?digits(.digits)?"""
    body = text[1:] if text.startswith("-") else text
    whole, dot, frac = body.partition(".")
    return _digits(whole) and (dot == "" or _digits(frac))


def parse_value(t: Type, text: str) -> tuple[bool, Value]:
    """(ok, value) of a value word of the command language for a cvar of type ``t``."""
    if t.kind == BOOL:
        if text in ("true", "false"):
            return True, text == "true"
        return False, None
    if t.kind in (INT, NAT, NAT_OR_OFF):
        if t.kind == NAT_OR_OFF and text in OFF_WORDS:
            return True, text
        negative = text.startswith("-") and t.kind == INT
        body = text[1:] if negative else text
        if not _digits(body):
            return False, None
        try:
            number = int(body)
        except ValueError:  # more digits than Python converts
            return False, None
        return True, -number if negative else number
    if t.kind == FLOAT:
        if not _decimal(text):
            return False, None
        if "." not in text:
            try:
                return True, int(text)
            except ValueError:  # more digits than Python converts
                return False, None
        real = float(text)
        if not math.isfinite(real):  # a decimal too large for a float reads as inf: not a Float
            return False, None
        return True, real
    if t.kind == STRING:
        return True, text
    if t.kind == ENUM:
        return (True, text) if text in t.choices else (False, None)
    try:
        parsed = from_json(json.loads(text))
    except ValueError:
        return False, None
    return (True, parsed) if has_type(t, parsed) else (False, None)


def format_value(value: Value) -> str:
    """The value word that parse_value reads back as ``value``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if is_int(value):
        return str(value)
    if isinstance(value, float):
        return positional(value)
    return show(value)


def positional(number: float) -> str:
    """A finite float as the decimal word parse_value reads back to it: the shortest digits that
    round-trip, written without an exponent (1e+300 is written as 1 and 300 zeros, then .0)."""
    text = format(Decimal(repr(number)), "f")
    return text if "." in text else text + ".0"


# -- registry (S4.1) -------------------------------------------------------------------------


@dataclass(frozen=True)
class RegistryError:
    kind: str  # "duplicate" or "default"
    id: str


def admit(state: tuple[Decl, ...] | RegistryError, decl: Decl, declared: bool, typed: bool) -> tuple[Decl, ...] | RegistryError:
    """One declaration: a registry that failed stays failed; an id already declared is a
    duplicate; a default not of its type is refused; else the declaration joins."""
    if isinstance(state, RegistryError):
        return state
    if declared:
        return RegistryError("duplicate", decl.id)
    if not typed:
        return RegistryError("default", decl.id)
    return state + (decl,)


def registry(decls: tuple[Decl, ...]) -> tuple[Decl, ...] | RegistryError:
    """The registry of the declarations, or the first RegistryError in declaration order: the
    left fold of ``admit`` over the declarations."""
    state: tuple[Decl, ...] | RegistryError = ()
    for decl in decls:
        declared = not isinstance(state, RegistryError) and lookup(state, decl.id) is not None
        state = admit(state, decl, declared, has_type(decl.type, decl.default))
    return state


def lookup(reg: tuple[Decl, ...], cvar: str) -> Decl | None:
    for decl in reg:
        if decl.id == cvar:
            return decl
    return None


# -- layers and values (S4, S4.2) ------------------------------------------------------------


@dataclass(frozen=True)
class Set:
    id: str
    value: Value


@dataclass(frozen=True)
class Layer:
    """One file of the config: its name, whether it is a project file, its sets in order."""

    source: str
    project: bool
    sets: tuple[Set, ...]


@dataclass(frozen=True)
class Agent:
    name: str
    profile: tuple[Set, ...]
    sets: tuple[Set, ...]


@dataclass(frozen=True)
class CvarError:
    kind: str  # Undeclared, BadValue, Global, NotBool
    id: str


UNDECLARED, BAD_VALUE, GLOBAL_ERR, NOT_BOOL = "Undeclared", "BadValue", "Global", "NotBool"


def check(reg: tuple[Decl, ...], s: Set, local_only: bool) -> CvarError | None:
    """Why a set is not valid in its layer (None: it is valid). ``local_only``: a project
    file, a profile or an agent's sets, where a Global cvar is refused."""
    return check_decl(lookup(reg, s.id), s.id, s.value, local_only)


def check_decl(decl: Decl | None, cvar: str, value: Value, local_only: bool) -> CvarError | None:
    """``check`` once the declaration of the set's id is looked up (None: undeclared)."""
    if decl is None:
        return CvarError(UNDECLARED, cvar)
    if local_only and decl.scope == GLOBAL:
        return CvarError(GLOBAL_ERR, cvar)
    if not has_type(decl.type, value):
        return CvarError(BAD_VALUE, cvar)
    return None


def pick(found: tuple[bool, Value], matches: bool, valid: bool, value: Value) -> tuple[bool, Value]:
    """One set of a layer: a valid set of the cvar replaces what the layer had found."""
    if matches and valid:
        return (True, value)
    return found


def layer_value(reg: tuple[Decl, ...], sets: tuple[Set, ...], local_only: bool, cvar: str) -> tuple[bool, Value]:
    """(set, value): the last valid set of ``cvar`` in one layer: the left fold of ``pick``."""
    found: tuple[bool, Value] = (False, None)
    for s in sets:
        found = pick(found, s.id == cvar, s.id == cvar and check(reg, s, local_only) is None, s.value)
    return found


def over(below: Value, found: tuple[bool, Value]) -> Value:
    """A layer over the layers below it: its value when it sets the cvar, else theirs."""
    if found[0]:
        return found[1]
    return below


def config_value(reg: tuple[Decl, ...], config: tuple[Layer, ...], cvar: str, global_only: bool) -> Value:
    """default < each layer of the config (the global layers only when ``global_only``)."""
    decl = lookup(reg, cvar)
    if decl is None:
        return None
    value = decl.default
    for layer in config:
        if global_only and layer.project:
            continue
        value = over(value, layer_value(reg, layer.sets, layer.project, cvar))
    return value


def value(reg: tuple[Decl, ...], config: tuple[Layer, ...], family: tuple[Agent, ...], cvar: str) -> Value:
    """The value of ``cvar`` in the last agent of ``family`` (None: undeclared)."""
    if lookup(reg, cvar) is None:
        return None
    result = config_value(reg, config, cvar, False)
    for agent in family:
        result = agent_value(reg, result, agent, cvar)
    return result


def agent_value(reg: tuple[Decl, ...], below: Value, agent: Agent, cvar: str) -> Value:
    """One agent over the values it inherits: its profile, then its own sets."""
    for sets in (agent.profile, agent.sets):
        below = over(below, layer_value(reg, sets, True, cvar))
    return below


def errors(reg: tuple[Decl, ...], config: tuple[Layer, ...], family: tuple[Agent, ...]) -> tuple[tuple[str, CvarError], ...]:
    """Every refused set, with the layer it is in: the settings errors."""
    found: tuple[tuple[str, CvarError], ...] = ()
    for layer in config:
        for s in layer.sets:
            e = check(reg, s, layer.project)
            if e is not None:
                found = found + ((layer.source, e),)
    for agent in family:
        for where, sets in (("profile " + agent.name, agent.profile), ("sets " + agent.name, agent.sets)):
            for s in sets:
                e = check(reg, s, True)
                if e is not None:
                    found = found + ((where, e),)
    return found


def set_last(reg: tuple[Decl, ...], family: tuple[Agent, ...], s: Set) -> tuple[tuple[Agent, ...], CvarError | None]:
    """A runtime set of the last agent: kept when valid, else refused and nothing changes."""
    e = check(reg, s, True)
    if e is not None or not family:
        return family, e
    last = family[-1]
    return family[:-1] + (Agent(last.name, last.profile, last.sets + (s,)),), None


def toggle(reg: tuple[Decl, ...], config: tuple[Layer, ...], family: tuple[Agent, ...], cvar: str) -> tuple[tuple[Agent, ...], CvarError | None]:
    """Toggle in the last agent: the opposite of its value with what it inherits."""
    decl = lookup(reg, cvar)
    if decl is None:
        return family, CvarError(UNDECLARED, cvar)
    if decl.type.kind != BOOL:
        return family, CvarError(NOT_BOOL, cvar)
    if decl.scope == GLOBAL:
        return family, CvarError(GLOBAL_ERR, cvar)
    return set_last(reg, family, Set(cvar, not value(reg, config, family, cvar)))


def global_toggle(reg: tuple[Decl, ...], config: tuple[Layer, ...], cvar: str) -> Set | CvarError:
    """/set --global toggle: the opposite of the global layers' value (the global
    settings.json, then the global config.cfg); project files never change what it flips.
    The set goes to the global config.cfg."""
    decl = lookup(reg, cvar)
    if decl is None:
        return CvarError(UNDECLARED, cvar)
    if decl.type.kind != BOOL:
        return CvarError(NOT_BOOL, cvar)
    return Set(cvar, not config_value(reg, config, cvar, True))


def written(reg: tuple[Decl, ...], agent: Agent) -> tuple[Set, ...]:
    """/cvar save (S4.6): the last valid set of each persist cvar among the agent's own sets."""
    out: tuple[Set, ...] = ()
    for decl in reg:
        out = keep(out, decl.id, decl.persist, layer_value(reg, agent.sets, True, decl.id))
    return out


def keep(out: tuple[Set, ...], cvar: str, flag: bool, found: tuple[bool, Value]) -> tuple[Set, ...]:
    """One declaration of ``written``: its last valid set joins when the cvar is flagged."""
    if flag and found[0]:
        return out + (Set(cvar, found[1]),)
    return out


def cfg_text(sets: tuple[Set, ...]) -> str:
    """The text of the cfg file /cvar save writes (S4.6): one ``set <id> <value>`` line a set,
    the value a word the command language reads back (quoted and escaped as it needs)."""
    text = ""
    for s in sets:
        text = text + "set " + quote(s.id) + " " + quote(format_value(s.value)) + "\n"
    return text


def read_cfg(reg: tuple[Decl, ...], text: str, local_only: bool) -> tuple[tuple[Set, ...], tuple[tuple[int, str], ...]]:
    """A cfg file as a layer (S4): the sets of its ``set`` lines that are valid, in order, and the
    settings errors by line number. A line ends at a line feed (a CR before it is whitespace);
    a blank line or one starting with ``#`` or ``//`` is a comment. A line that does not parse,
    a refused set and a command with no meaning in a file are errors; the rest still applies.
    ``alias`` lines are the file's aliases (a body that does not parse is an error; the aliases
    themselves are not modelled here: they give no set)."""
    sets: tuple[Set, ...] = ()
    errs: tuple[tuple[int, str], ...] = ()
    number = 0
    for line in text.split("\n"):
        number = number + 1
        stripped = line.strip(WHITESPACE)
        if stripped == "" or stripped.startswith("#") or stripped.startswith("//"):
            continue
        parsed = parse_list(stripped)
        if isinstance(parsed, ParseError):
            errs = errs + ((number, show_error(parsed)),)
            continue
        for c in parsed:
            if c.verb == SET:
                decl = lookup(reg, c.args[0])
                if decl is None:
                    errs = errs + ((number, show_error(CvarError(UNDECLARED, c.args[0]))),)
                elif local_only and decl.scope == GLOBAL:
                    errs = errs + ((number, show_error(CvarError(GLOBAL_ERR, c.args[0]))),)
                else:
                    ok, v = parse_value(decl.type, c.args[1])
                    if ok:
                        sets = sets + (Set(c.args[0], v),)
                    else:
                        errs = errs + ((number, show_error(CvarError(BAD_VALUE, c.args[0]))),)
            elif c.verb == ALIAS:
                body = parse_list(c.args[1])
                if isinstance(body, ParseError):
                    errs = errs + ((number, f"alias {c.args[0]} does not parse: {body.message}"),)
            else:
                errs = errs + ((number, f"{format_command(c)} has no meaning in a cfg file"),)
    return sets, errs


def saved(reg: tuple[Decl, ...], agent: Agent) -> Agent:
    """The agent read back after a save: the cfg text of its written sets, read back as the last
    file of its profile (agents/<name>.cfg), and no runtime sets."""
    back, _ = read_cfg(reg, cfg_text(written(reg, agent)), True)
    return Agent(agent.name, agent.profile + back, ())


def replicated(reg: tuple[Decl, ...], config: tuple[Layer, ...], family: tuple[Agent, ...]) -> tuple[Set, ...]:
    """What clients see (S4.3): the values of the replicate cvars, in declaration order."""
    return tuple(Set(d.id, value(reg, config, family, d.id)) for d in reg if d.replicate)


# -- the command language (S4.4, S4.5) ------------------------------------------------------

SET, TOGGLE, ALIAS, BIND, ACTION, RUN = "set", "toggle", "alias", "bind", "action", "run"
ARITY: tuple[tuple[str, int], ...] = ((SET, 2), (TOGGLE, 1), (ALIAS, 2), (BIND, 2), (ACTION, 1))


@dataclass(frozen=True)
class Command:
    verb: str
    args: tuple[str, ...]


@dataclass(frozen=True)
class ParseError:
    message: str


@dataclass(frozen=True)
class ExpandError:
    kind: str  # Cycle or Unknown
    name: str


# The characters that end a line of a file (str.splitlines): a quoted word writes them as escapes.
LINE_ENDS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
WHITESPACE = " \t\r\n"
HEX = "0123456789abcdefABCDEF"


def words(text: str) -> tuple[tuple[tuple[str, ...], ...], ParseError | None]:
    """Split a line into commands of words: ``;`` ends a command outside quotes. In quotes a
    backslash escapes: ``\\n`` is a line feed, ``\\r`` a carriage return, ``\\uXXXX`` (4 hex digits)
    that character, and a backslash before any other character is that character."""
    commands: tuple[tuple[str, ...], ...] = ()
    current: tuple[str, ...] = ()
    word = ""
    in_word = False
    quoted = False
    at = 0
    while at < len(text):
        ch = text[at]
        at += 1
        if quoted:
            if ch == "\\":
                if at >= len(text):
                    return (), ParseError("unterminated quote")
                escaped = text[at]
                at += 1
                if escaped == "n":
                    word = word + "\n"
                elif escaped == "r":
                    word = word + "\r"
                elif escaped == "u":
                    digits = text[at : at + 4]
                    if len(digits) != 4 or any(d not in HEX for d in digits):
                        return (), ParseError("\\u takes 4 hex digits")
                    word, at = word + chr(int(digits, 16)), at + 4
                else:
                    word = word + escaped
            elif ch == '"':
                quoted = False
            else:
                word = word + ch
        elif ch == '"':
            quoted, in_word = True, True
        elif ch == ";":
            if in_word:
                current, word, in_word = current + (word,), "", False
            commands, current = commands + (current,), ()
        elif ch in WHITESPACE:
            if in_word:
                current, word, in_word = current + (word,), "", False
        else:
            word, in_word = word + ch, True
    if quoted:
        return (), ParseError("unterminated quote")
    if in_word:
        current = current + (word,)
    commands = commands + (current,)
    return tuple(c for c in commands if c), None


def parse_list(text: str) -> tuple[Command, ...] | ParseError:
    """A line of the command language as commands."""
    split, error = words(text)
    if error is not None:
        return error
    out: tuple[Command, ...] = ()
    for ws in split:
        verb, args = ws[0], ws[1:]
        arity = -1
        for name, n in ARITY:
            if name == verb:
                arity = n
        if arity == -1:
            if args:
                return ParseError(f"unknown command {verb}")
            out = out + (Command(RUN, (verb,)),)
        elif len(args) != arity:
            return ParseError(f"{verb} takes {arity} words, not {len(args)}")
        else:
            out = out + (Command(verb, args),)
    return out


def quote(word: str) -> str:
    """The word as the command language reads it back: bare when it can be, else in double
    quotes with ``"`` and ``\\`` escaped and each character that ends a line written as an escape,
    so the word never breaks a line. A word with any whitespace is quoted."""
    plain = word != ""
    for ch in word:
        if ch in ';"\\' or ch in LINE_ENDS or ch.isspace():
            plain = False
    if plain:
        return word
    body = ""
    for ch in word:
        if ch in '"\\':
            body = body + "\\" + ch
        elif ch == "\n":
            body = body + "\\n"
        elif ch == "\r":
            body = body + "\\r"
        elif ch in LINE_ENDS:
            body = body + "\\u" + format(ord(ch), "04x")
        else:
            body = body + ch
    return '"' + body + '"'


def format_command(c: Command) -> str:
    if c.verb == RUN:
        return c.args[0]
    return " ".join((c.verb,) + tuple(quote(a) for a in c.args))


def format_list(commands: tuple[Command, ...]) -> str:
    return "; ".join(format_command(c) for c in commands)


Aliases = tuple[tuple[str, tuple[Command, ...]], ...]


def alias_body(aliases: Aliases, name: str) -> tuple[Command, ...] | None:
    found: tuple[Command, ...] | None = None
    for n, body in aliases:
        if n == name:
            found = body
    return found


def define(aliases: Aliases, name: str, body: tuple[Command, ...]) -> Aliases:
    return tuple(a for a in aliases if a[0] != name) + ((name, body),)


def names(aliases: Aliases) -> tuple[str, ...]:
    out: tuple[str, ...] = ()
    for n, _ in aliases:
        if n not in out:
            out = out + (n,)
    return out


def expand(aliases: Aliases, commands: tuple[Command, ...]) -> tuple[Command, ...] | ExpandError:
    """S4.4: replace each run of an alias with its commands, at most len(table) + 1 levels deep."""
    return _expand(aliases, commands, 0, len(names(aliases)) + 1)


def _expand(aliases: Aliases, commands: tuple[Command, ...], depth: int, limit: int) -> tuple[Command, ...] | ExpandError:
    out: tuple[Command, ...] = ()
    for c in commands:
        if c.verb != RUN:
            out = out + (c,)
            continue
        body = alias_body(aliases, c.args[0])
        if body is None:
            return ExpandError("Unknown", c.args[0])
        if depth + 1 > limit:
            return ExpandError("Cycle", c.args[0])
        inner = _expand(aliases, body, depth + 1, limit)
        if isinstance(inner, ExpandError):
            return inner
        out = out + inner
    return out


Binds = tuple[tuple[str, tuple[Command, ...]], ...]


def press(binds: Binds, aliases: Aliases, key: str) -> tuple[tuple[Command, ...], tuple[str, ...]] | ExpandError | None:
    """S4.5: the first bind of the key; None when no bind has it (it runs nothing). The
    expansion's set, toggle and alias commands go to the session, its actions to the client."""
    bound: tuple[Command, ...] | None = None
    for k, body in binds:
        bound = first(bound, k == key, body)
    if bound is None:
        return None
    expanded = expand(aliases, bound)
    if isinstance(expanded, ExpandError):
        return expanded
    session = tuple(c for c in expanded if c.verb != ACTION)
    client = tuple(c.args[0] for c in expanded if c.verb == ACTION)
    return session, client


def first(bound: tuple[Command, ...] | None, matches: bool, body: tuple[Command, ...]) -> tuple[Command, ...] | None:
    """One bind of the list: the first bind of the key stays bound; a later one changes nothing."""
    if bound is None and matches:
        return body
    return bound


def import_binds(keybindings: object) -> tuple[str, ...] | None:
    """S4.5: the binds.cfg lines eukhe writes once from keybindings.json ({action: key or
    [keys]}): each key with the actions it was given, in the order keys first appear; None when
    the document is not a JSON object (a warning, nothing written)."""
    if not isinstance(keybindings, Obj):
        return None
    keys: tuple[str, ...] = ()
    actions: tuple[tuple[str, ...], ...] = ()
    for action, given in keybindings.pairs_in_order:
        listed = (given,) if isinstance(given, str) else given if isinstance(given, tuple) else ()
        for key in listed:
            if isinstance(key, str) and key != "":
                if key in keys:
                    at = keys.index(key)
                    actions = actions[:at] + (actions[at] + (action,),) + actions[at + 1 :]
                else:
                    keys, actions = keys + (key,), actions + ((action,),)
    return tuple(
        "bind " + quote(key) + " " + quote("; ".join("action " + a for a in acts)) for key, acts in zip(keys, actions)
    )


def binds_file(text: str, defaults: Binds) -> tuple[Binds, tuple[int, ...]]:
    """S4.5: the binds of binds.cfg (the user's, in order), then the defaults; and the numbers of
    the lines that gave a warning. A line runs its bind commands in order until one that is not
    a bind, or a bind whose body does not parse: that is a warning, and the rest of the line is
    dropped. Blank lines and comments (# or //) are skipped."""
    binds: Binds = ()
    warned: tuple[int, ...] = ()
    number = 0
    for line in text.split("\n"):
        number = number + 1
        stripped = line.strip(WHITESPACE)
        if stripped == "" or stripped.startswith("#") or stripped.startswith("//"):
            continue
        parsed = parse_list(stripped)
        if isinstance(parsed, ParseError):
            warned = warned + (number,)
            continue
        for c in parsed:
            body = parse_list(c.args[1]) if c.verb == BIND else ParseError("not a bind")
            if isinstance(body, ParseError):
                warned = warned + (number,)
                break
            binds = binds + ((c.args[0], body),)
    return binds + defaults, warned


# -- the bridge transcript -------------------------------------------------------------------


def type_of(raw: object) -> Type:
    """A type from a scenario: "Bool", ["Enum", [choices]], ["List", item], ["Map", item]."""
    if isinstance(raw, list):
        if raw[0] == ENUM:
            return Type(ENUM, tuple(str(c) for c in raw[1]))
        return Type(str(raw[0]), (), type_of(raw[1]))
    return Type(str(raw))


def decl_of(raw: dict[str, object]) -> Decl:
    return Decl(str(raw["id"]), type_of(raw["type"]), str(raw["scope"]), bool(raw["persist"]), bool(raw["replicate"]), from_json(raw["default"]))


def sets_of(raw: object) -> tuple[Set, ...]:
    return tuple(Set(str(pair[0]), from_json(pair[1])) for pair in raw)  # type: ignore[attr-defined]


def show_error(e: CvarError | ExpandError | ParseError) -> str:
    if isinstance(e, CvarError):
        return f"CvarError::{e.kind}({e.id})"
    if isinstance(e, ExpandError):
        return f"ExpandError::{e.kind}({e.name})"
    return f"ParseError({e.message})"


def show_sets(sets: tuple[Set, ...]) -> str:
    return "[" + ", ".join(f"{s.id}={show(s.value)}" for s in sets) + "]"


@dataclass(frozen=True)
class State:
    reg: tuple[Decl, ...]
    config: tuple[Layer, ...]
    family: tuple[Agent, ...]
    aliases: Aliases


def run_line(state: State, text: str) -> tuple[State, str]:
    """A session line (/set, /toggle, /alias, /cvar): parse, expand with the agent's aliases,
    then run each command on the last agent. Binds and actions need a client: refused."""
    parsed = parse_list(text)
    if isinstance(parsed, ParseError):
        return state, show_error(parsed)
    expanded = expand(state.aliases, parsed)
    if isinstance(expanded, ExpandError):
        return state, show_error(expanded)
    results: tuple[str, ...] = ()
    for c in expanded:
        if c.verb == SET:
            decl = lookup(state.reg, c.args[0])
            if decl is None:
                outcome: str = show_error(CvarError(UNDECLARED, c.args[0]))
            elif decl.scope == GLOBAL:
                outcome = show_error(CvarError(GLOBAL_ERR, c.args[0]))
            else:
                ok, v = parse_value(decl.type, c.args[1])
                if not ok:
                    outcome = show_error(CvarError(BAD_VALUE, c.args[0]))
                else:
                    family, e = set_last(state.reg, state.family, Set(c.args[0], v))
                    state = State(state.reg, state.config, family, state.aliases)
                    outcome = "ok" if e is None else show_error(e)
        elif c.verb == TOGGLE:
            family, e = toggle(state.reg, state.config, state.family, c.args[0])
            state = State(state.reg, state.config, family, state.aliases)
            outcome = "ok" if e is None else show_error(e)
        elif c.verb == ALIAS:
            body = parse_list(c.args[1])
            if isinstance(body, ParseError):
                outcome = show_error(body)
            else:
                state = State(state.reg, state.config, state.family, define(state.aliases, c.args[0], body))
                outcome = "ok"
        else:
            outcome = "client-only"
        results = results + (f"{format_command(c)} -> {outcome}",)
    return state, "ran [" + "; ".join(results) + "]"


def _values(state: State, cvar: str) -> str:
    parts: tuple[str, ...] = ()
    for i in range(len(state.family)):
        v = value(state.reg, state.config, state.family[: i + 1], cvar)
        parts = parts + (f"{state.family[i].name}={'-' if lookup(state.reg, cvar) is None else show(v)}",)
    if not parts:
        parts = (f"config={'-' if lookup(state.reg, cvar) is None else show(config_value(state.reg, state.config, cvar, False))}",)
    return " ".join(parts)


def _step(state: State, event: dict[str, object]) -> tuple[State, str]:
    kind = event["do"]
    if kind == "registry":
        decls = tuple(decl_of(d) for d in event["decls"])  # type: ignore[attr-defined]
        reg = registry(decls)
        if isinstance(reg, RegistryError):
            return State((), (), (), ()), f"RegistryError::{reg.kind}({reg.id})"
        return State(reg, (), (), ()), f"registry {len(reg)} cvars"
    if kind == "config":
        layers = tuple(Layer(str(l["source"]), bool(l["project"]), sets_of(l["sets"])) for l in event["layers"])  # type: ignore[attr-defined]
        state = State(state.reg, layers, state.family, state.aliases)
    elif kind == "family":
        agents = tuple(Agent(str(a["name"]), sets_of(a["profile"]), sets_of(a["sets"])) for a in event["agents"])  # type: ignore[attr-defined]
        state = State(state.reg, state.config, agents, state.aliases)
    elif kind == "spawn":
        agent = Agent(str(event["name"]), sets_of(event["profile"]), ())
        state = State(state.reg, state.config, state.family + (agent,), state.aliases)
    elif kind == "value":
        return state, "value " + str(event["id"]) + " " + _values(state, str(event["id"]))
    elif kind == "set":
        family, e = set_last(state.reg, state.family, Set(str(event["id"]), from_json(event["value"])))
        state = State(state.reg, state.config, family, state.aliases)
        return state, "set " + ("ok" if e is None else show_error(e)) + " " + _values(state, str(event["id"]))
    elif kind == "toggle":
        family, e = toggle(state.reg, state.config, state.family, str(event["id"]))
        state = State(state.reg, state.config, family, state.aliases)
        return state, "toggle " + ("ok" if e is None else show_error(e)) + " " + _values(state, str(event["id"]))
    elif kind == "gtoggle":
        result = global_toggle(state.reg, state.config, str(event["id"]))
        if isinstance(result, CvarError):
            return state, "gtoggle " + show_error(result)
        config: tuple[Layer, ...] = ()
        placed = False
        for layer in state.config:
            if layer.source == "global config.cfg":
                layer, placed = Layer(layer.source, layer.project, layer.sets + (result,)), True
            config = config + (layer,)
        if not placed:
            config = config + (Layer("global config.cfg", False, (result,)),)
        state = State(state.reg, config, state.family, state.aliases)
        return state, f"gtoggle {result.id}={show(result.value)} " + _values(state, result.id)
    elif kind == "written":
        if not state.family:
            return state, "written [] replicated []"
        w = written(state.reg, state.family[-1])
        return state, "written " + show_sets(w) + " replicated " + show_sets(replicated(state.reg, state.config, state.family))
    elif kind == "save":
        if not state.family:
            return state, "saved []"
        before = tuple(value(state.reg, state.config, state.family, d.id) for d in state.reg)
        family = state.family[:-1] + (saved(state.reg, state.family[-1]),)
        after = tuple(value(state.reg, state.config, family, d.id) for d in state.reg)
        same = tuple(d.id for d, b, a in zip(state.reg, before, after) if d.persist and b == a)
        state = State(state.reg, state.config, family, state.aliases)
        return state, "saved " + show_sets(family[-1].profile) + " same " + ",".join(same)
    elif kind == "aliases":
        table: Aliases = ()
        for name, text in event["table"]:  # type: ignore[attr-defined]
            body = parse_list(str(text))
            if isinstance(body, ParseError):
                return state, f"alias {name} " + show_error(body)
            table = define(table, str(name), body)
        state = State(state.reg, state.config, state.family, table)
        return state, "aliases " + ",".join(names(table))
    elif kind == "line":
        state, said = run_line(state, str(event["text"]))
        return state, "line " + said + " " + _values(state, str(event["id"]))
    elif kind == "expand":
        parsed = parse_list(str(event["text"]))
        if isinstance(parsed, ParseError):
            return state, "expand " + show_error(parsed)
        expanded = expand(state.aliases, parsed)
        if isinstance(expanded, ExpandError):
            return state, "expand " + show_error(expanded)
        return state, "expand [" + format_list(expanded) + "]"
    elif kind == "cfgtext":
        if event.get("unreadable"):
            return state, "cfgtext unreadable sets [] errors [0: unreadable]"
        sets, problems = read_cfg(state.reg, str(event["text"]), bool(event["local"]))
        return state, "cfgtext sets " + show_sets(sets) + " errors [" + ", ".join(f"{n}: {e}" for n, e in problems) + "]"
    elif kind == "bindsfile":
        warnings: tuple[str, ...] = ()
        text = event.get("binds")
        if event.get("unreadable"):
            warnings, text = ("unreadable",), ""
        elif text is None:
            source = event.get("keybindings")
            lines_: tuple[str, ...] | None = ()
            if source == "<<broken>>":
                lines_ = None
            elif source is not None:
                lines_ = import_binds(from_json(source))
            if lines_ is None:
                warnings = ("import",)
                text = ""
            else:
                text = "".join(line + "\n" for line in lines_)
        defaults = tuple((str(k), body) for k, b in event["defaults"] if not isinstance(body := parse_list(str(b)), ParseError))  # type: ignore[attr-defined]
        got, warned = binds_file(str(text), defaults)
        pressed = press(got, state.aliases, str(event["key"]))
        said = "unbound" if pressed is None else show_error(pressed) if isinstance(pressed, ExpandError) else (
            "session [" + format_list(pressed[0]) + "] client [" + ",".join(pressed[1]) + "]")
        return state, (
            "bindsfile warnings [" + ",".join(warnings + tuple(str(n) for n in warned)) + "] binds ["
            + "; ".join(k + "=" + format_list(b) for k, b in got) + "] keys [" + ",".join(names(got)) + f"] press {event['key']} {said}"
        )
    elif kind == "press":
        binds: Binds = ()
        for key, text in event["binds"]:  # type: ignore[attr-defined]
            body = parse_list(str(text))
            binds = binds + ((str(key), () if isinstance(body, ParseError) else body),)
        pressed = press(binds, state.aliases, str(event["key"]))
        if pressed is None:
            return state, f"press {event['key']} unbound"
        if isinstance(pressed, ExpandError):
            return state, f"press {event['key']} " + show_error(pressed)
        return state, f"press {event['key']} session [" + format_list(pressed[0]) + "] client [" + ",".join(pressed[1]) + "]"
    else:
        raise ValueError(f"unknown event {kind!r}")
    errs = errors(state.reg, state.config, state.family)
    return state, str(kind) + " errors [" + ", ".join(f"{w}: {show_error(e)}" for w, e in errs) + "]"


def transcript(events: list[dict[str, object]]) -> list[str]:
    """The model side of the cvar bridge: one line after each event."""
    state = State((), (), (), ())
    lines = []
    for number, event in enumerate(events):
        state, said = _step(state, event)
        lines.append(f"{number} {said}")
    return lines


if __name__ == "__main__":
    from bend import scenario

    raise SystemExit(scenario.main(transcript, sys.argv[1:]))
