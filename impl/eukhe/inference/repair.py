"""Tool-call argument repair (inference.md "S6 tool-call argument repair"): json_parse
(parse_json_with_repair, parse_tool_call_arguments, relaxed) and tool::arguments
(repair_arguments), tool::result (tool_unavailable_message).

Before validation the client repairs arguments that are not strict JSON or spell a declared
type differently:

1. The final parse: strict JSON; else raw control characters in strings escaped and invalid
   string escapes kept as literal backslashes, and retried; else the relaxed dialect (single
   quotes, unquoted keys, comments, True/False/None, stray and trailing commas, 0x/0b numbers,
   unquoted values). The relaxed reader rejects truncation, trailing characters, non-finite
   numbers and unquoted values that could hide the next field (one holding a ``:`` or a quote).
2. Unparsable or not an object: ``{__parseError, __rawJson}`` (the error, the first 512
   characters), so a half-formed call never runs: invalid_arguments.
3. A JSON-string key (``"\\"path\\""``) becomes the plain key unless the plain key is present.
4. Alternate spellings become the declared type: a JSON string for an object or array, a single
   string for a string array, a number or boolean for a string; string booleans and numbers to
   the value.
5. Each repair is an ``argument_repaired`` warning on the result. An unknown key in a closed
   schema stays an error.
6. An unavailable tool: tool_unavailable naming up to 3 offered tools, those at a small edit
   distance first (nearest first), then names ending with the called name's last ``__`` or
   ``_`` segment.

Derived (the seed names the rules, not these details): "small" edit distance is at most 3 and
at most half the called name's length; a repair's warning names the key and the repair.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from eukhe import strict_json

PARSE_ERROR, RAW_JSON = "__parseError", "__rawJson"
RAW_KEPT = 512
MAX_NAMED = 3
RELAXED_DEPTH = 200  # brackets: the relaxed reader's cap (_Relaxed.value); the strict reading takes the same


class RelaxedError(ValueError):
    """The relaxed reader refused the text (with the offset)."""


# -- the three readings -----------------------------------------------------------------------------


def _refuse(name: str) -> Any:
    """Refuse the non-finite numbers Python's JSON reader accepts (NaN, Infinity)."""
    raise ValueError(f"non-finite number {name}")


def _float(token: str) -> float:
    value = float(token)
    if not math.isfinite(value):
        raise ValueError(f"non-finite number {token}")
    return value


def strict(text: str) -> Any:
    at = strict_json.too_deep(text, RELAXED_DEPTH)  # the relaxed reader's cap: both readings take the same depths
    if at is not None:
        raise strict_json.JsonRefused(f"nested more than {RELAXED_DEPTH} brackets deep", text, at, depth=RELAXED_DEPTH + 1)
    return json.loads(text, parse_constant=_refuse, parse_float=_float)


_ESCAPES = set('"\\/bfnrtu')


def escape_strings(text: str) -> str:
    """Escape raw control characters inside strings; an invalid escape keeps its backslash as
    a literal one (``\\q`` reads as backslash and q)."""
    out: list[str] = []
    in_string = False
    i = 0
    while i < len(text):
        ch = text[i]
        if not in_string:
            if ch == '"':
                in_string = True
            out.append(ch)
        elif ch == "\\":
            nxt = text[i + 1] if i + 1 < len(text) else ""
            if nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", text[i + 2 : i + 6]):
                out.append(text[i : i + 6])
                i += 6
                continue
            if nxt in _ESCAPES and nxt != "u":
                out.append(ch + nxt)
                i += 2
                continue
            out.append("\\\\")
        elif ch == '"':
            in_string = False
            out.append(ch)
        elif ord(ch) < 0x20:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
        i += 1
    return "".join(out)


class _Relaxed:
    """The relaxed dialect: a recursive-descent reader of one value."""

    _WORDS = {"true": True, "false": False, "null": None, "True": True, "False": False, "None": None}
    _BARE = re.compile(r"[A-Za-z_$][A-Za-z0-9_$\-.]*")
    _NUMBER = re.compile(r"[+-]?(?:0[xX][0-9a-fA-F]+|0[bB][01]+|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)")

    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0
        self.depth = 0

    def fail(self, why: str) -> RelaxedError:
        return RelaxedError(f"{why} at offset {self.at}")

    def skip(self) -> None:
        text = self.text
        while self.at < len(text):
            ch = text[self.at]
            if ch in " \t\r\n\ufeff":
                self.at += 1
            elif text.startswith("//", self.at) or text.startswith("#", self.at):
                end = text.find("\n", self.at)
                self.at = len(text) if end < 0 else end + 1
            elif text.startswith("/*", self.at):
                end = text.find("*/", self.at + 2)
                if end < 0:
                    raise self.fail("unterminated comment")
                self.at = end + 2
            else:
                return

    def document(self) -> Any:
        value = self.value()
        self.skip()
        if self.at != len(self.text):
            raise self.fail("trailing characters")
        return value

    def value(self) -> Any:
        self.skip()
        if self.at >= len(self.text):
            raise self.fail("truncated")
        ch = self.text[self.at]
        if ch in "{[":
            self.depth += 1
            if self.depth > 200:
                raise self.fail("nested too deeply")
            found = self.obj() if ch == "{" else self.arr()
            self.depth -= 1
            return found
        if ch in "\"'":
            return self.string()
        number = self._NUMBER.match(self.text, self.at)
        if number is not None and number.group():
            return self.number(number.group())
        word = self._BARE.match(self.text, self.at)
        if word is not None:
            self.at = word.end()
            if word.group() in self._WORDS:
                return self._WORDS[word.group()]
            if word.group() in ("NaN", "Infinity"):
                raise self.fail("non-finite number")
            return self.unquoted(word.group())
        raise self.fail(f"unexpected {ch!r}")

    def unquoted(self, word: str) -> str:
        """An unquoted value runs to the next delimiter; one that could hide the next field (a
        quote or a colon before the delimiter) is refused."""
        end = self.at
        text = self.text
        while end < len(text) and text[end] not in ",}]\n":
            if text[end] in "\"':{[":
                raise self.fail("an unquoted value that could hide the next field")
            end += 1
        value = (word + text[self.at : end]).strip()
        self.at = end
        return value

    def number(self, token: str) -> int | float:
        self.at += len(token)
        after = self.text[self.at : self.at + 1]
        if after and (after.isalnum() or after in "_$."):
            raise self.fail("malformed number")
        sign = -1 if token.startswith("-") else 1
        body = token.lstrip("+-")
        if body[:2].lower() == "0x":
            return sign * int(body[2:], 16)
        if body[:2].lower() == "0b":
            return sign * int(body[2:], 2)
        if re.fullmatch(r"[0-9]+", body):
            if len(body) > 4000:
                raise self.fail("number too long")
            return sign * int(body)
        value = float(token)
        if not math.isfinite(value):
            raise self.fail("non-finite number")
        return value

    def string(self) -> str:
        quote = self.text[self.at]
        self.at += 1
        out: list[str] = []
        text = self.text
        while True:
            if self.at >= len(text):
                raise self.fail("truncated string")
            ch = text[self.at]
            if ch == quote:
                self.at += 1
                return "".join(out)
            if ch == "\\":
                nxt = text[self.at + 1 : self.at + 2]
                if not nxt:
                    raise self.fail("truncated string")
                simple = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "/": "/", "\\": "\\", '"': '"', "'": "'"}
                if nxt in simple:
                    out.append(simple[nxt])
                    self.at += 2
                    continue
                digits = text[self.at + 2 : self.at + 6]
                if nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", digits):
                    out.append(chr(int(digits, 16)))
                    self.at += 6
                    continue
                out.append("\\")
                self.at += 1
                continue
            out.append(ch)
            self.at += 1

    def key(self) -> str:
        self.skip()
        if self.at < len(self.text) and self.text[self.at] in "\"'":
            return self.string()
        word = self._BARE.match(self.text, self.at)
        if word is None:
            number = re.compile(r"[0-9]+").match(self.text, self.at)
            if number is None:
                raise self.fail("truncated" if self.at >= len(self.text) else "a key expected")
            self.at = number.end()
            return number.group()
        self.at = word.end()
        return word.group()

    def obj(self) -> dict[str, Any]:
        self.at += 1
        found: dict[str, Any] = {}
        while True:
            self.skip()
            if self.at >= len(self.text):
                raise self.fail("truncated object")
            ch = self.text[self.at]
            if ch == "}":
                self.at += 1
                return found
            if ch == ",":  # a stray comma
                self.at += 1
                continue
            name = self.key()
            self.skip()
            if self.at >= len(self.text) or self.text[self.at] != ":":
                raise self.fail("truncated object" if self.at >= len(self.text) else "':' expected")
            self.at += 1
            found[name] = self.value()
            self.skip()
            if self.at < len(self.text) and self.text[self.at] not in ",}":
                raise self.fail("',' or '}' expected")

    def arr(self) -> list[Any]:
        self.at += 1
        found: list[Any] = []
        while True:
            self.skip()
            if self.at >= len(self.text):
                raise self.fail("truncated array")
            ch = self.text[self.at]
            if ch == "]":
                self.at += 1
                return found
            if ch == ",":
                self.at += 1
                continue
            found.append(self.value())
            self.skip()
            if self.at < len(self.text) and self.text[self.at] not in ",]":
                raise self.fail("',' or ']' expected")


def relaxed(text: str) -> Any:
    """Read ``text`` in the relaxed dialect (RelaxedError when it refuses)."""
    try:
        return _Relaxed(text).document()
    except RecursionError as error:  # pragma: no cover - depth is capped at 200 first
        raise RelaxedError("nested too deeply") from error


def parse_json_with_repair(text: str) -> Any:
    """Strict JSON; else with strings escaped; else the relaxed dialect. Raises ValueError
    (the first reading's error) when none reads it."""
    try:
        return strict(text)
    except (ValueError, RecursionError) as error:
        first = error
    try:
        return strict(escape_strings(text))
    except (ValueError, RecursionError):
        pass
    try:
        return relaxed(text)
    except RelaxedError as error:
        raise ValueError(f"{first}; relaxed: {error}") from error


def parse_tool_call_arguments(text: str) -> dict[str, Any]:
    """The final parse of a call's arguments: an object, or ``{__parseError, __rawJson}``."""
    if not text.strip():
        return {}
    try:
        value = parse_json_with_repair(text)
    except ValueError as error:
        return {PARSE_ERROR: str(error), RAW_JSON: text[:RAW_KEPT]}
    if not isinstance(value, dict):
        return {PARSE_ERROR: f"the arguments are a JSON {type(value).__name__}, not an object", RAW_JSON: text[:RAW_KEPT]}
    return value


# -- repair against the declared schema -----------------------------------------------------------------


@dataclass(frozen=True)
class ArgumentError:
    """invalid_arguments (a parse error, with the raw text) or an unknown key of a closed schema."""

    kind: str
    message: str


@dataclass
class Repaired:
    arguments: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    errors: list[ArgumentError] = field(default_factory=list)


def _types(schema: Mapping[str, Any]) -> tuple[str, ...]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return (kind,)
    if isinstance(kind, list):
        return tuple(k for k in kind if isinstance(k, str))
    return ()


def _fits(value: Any, kind: str) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":  # 1.0 is an integer to JSON Schema (and to the schema check): no repair
        return (isinstance(value, int) and not isinstance(value, bool)) or (isinstance(value, float) and value.is_integer())
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "array":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, dict)
    return kind == "null" and value is None


def _from_string(text: str, kind: str) -> tuple[bool, Any]:
    """A string spelling ``kind``: a JSON string for an object or array; "true"/"false" for a
    boolean; a numeral for a number or integer."""
    stripped = text.strip()
    if kind in ("object", "array"):
        try:
            value = strict(stripped)
        except (ValueError, RecursionError):
            return False, None
        return _fits(value, kind), value
    if kind == "boolean" and stripped.lower() in ("true", "false"):
        return True, stripped.lower() == "true"
    if kind == "integer" and re.fullmatch(r"[+-]?[0-9]{1,4000}", stripped):
        return True, int(stripped)
    if kind == "number" and re.fullmatch(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", stripped) and len(stripped) <= 4000:
        number = float(stripped)
        if math.isfinite(number):
            return True, int(stripped) if re.fullmatch(r"[+-]?[0-9]+", stripped) else number
    return False, None


def coerce(value: Any, schema: Mapping[str, Any]) -> tuple[bool, Any, str]:
    """The value in the declared type: (repaired, value, what was done)."""
    kinds = _types(schema)
    if not kinds or any(_fits(value, k) for k in kinds):
        return False, value, ""
    for kind in kinds:
        if isinstance(value, str):
            ok, got = _from_string(value, kind)
            if ok:
                return True, got, f"a string spelling {kind}"
        if kind == "array" and isinstance(value, str) and _types(schema.get("items", {})) == ("string",):
            return True, [value], "a single string for a string array"
        if kind == "string" and (isinstance(value, bool) or isinstance(value, (int, float))):
            text = ("true" if value else "false") if isinstance(value, bool) else json.dumps(value)
            return True, text, f"the {'boolean' if isinstance(value, bool) else 'number'} {text} read as a string"
    return False, value, ""


def repair_arguments(arguments: Mapping[str, Any], schema: Mapping[str, Any]) -> Repaired:
    """Repair parsed arguments against the tool's declared (object) schema."""
    if PARSE_ERROR in arguments:
        raw = arguments.get(RAW_JSON, "")
        return Repaired(dict(arguments), [], [ArgumentError("invalid_arguments", f"the arguments are not JSON: {arguments[PARSE_ERROR]}; raw: {raw}")])
    properties: Mapping[str, Any] = schema.get("properties", {}) or {}
    out: dict[str, Any] = {}
    warnings: list[str] = []
    errors: list[ArgumentError] = []
    for key, value in arguments.items():
        plain = key
        if len(key) >= 2 and key.startswith('"') and key.endswith('"'):
            try:
                unquoted = json.loads(key)
            except ValueError:
                unquoted = None
            if isinstance(unquoted, str) and unquoted not in arguments:
                plain = unquoted
                warnings.append(f"argument_repaired: key {key} read as {json.dumps(plain)}")
        out[plain] = value
    for key in list(out):
        if key in properties and isinstance(properties[key], Mapping):
            repaired, value, how = coerce(out[key], properties[key])
            if repaired:
                out[key] = value
                warnings.append(f"argument_repaired: {key}: {how}")
        elif schema.get("additionalProperties") is False:
            errors.append(ArgumentError("unknown_key", f"unknown argument {key!r} (the tool takes: {', '.join(sorted(properties)) or 'none'})"))
    return Repaired(out, warnings, errors)


# -- tool_unavailable --------------------------------------------------------------------------------


def edit_distance(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def last_segment(name: str) -> str:
    """The called name's last ``__`` segment, else its last ``_`` segment, else nothing."""
    if "__" in name:
        return name.rsplit("__", 1)[1]
    if "_" in name:
        return name.rsplit("_", 1)[1]
    return ""


def suggestions(name: str, offered: Sequence[str]) -> list[str]:
    """Up to 3 offered tools: small edit distance, nearest first (ties: offered order); then
    names ending with the called name's last segment."""
    small = min(3, max(1, len(name) // 2))
    near = sorted(
        ((edit_distance(name, tool), i, tool) for i, tool in enumerate(offered) if tool != name),
        key=lambda t: (t[0], t[1]),
    )
    found = [tool for distance, _, tool in near if distance <= small]
    segment = last_segment(name)
    if segment:
        found += [tool for tool in offered if tool.endswith(segment) and tool not in found and tool != name]
    unique: list[str] = []
    for tool in found:
        if tool not in unique:
            unique.append(tool)
    return unique[:MAX_NAMED]


def tool_unavailable(name: str, offered: Sequence[str]) -> str:
    """The tool_unavailable message of a call naming a tool that was not offered."""
    named = suggestions(name, offered)
    hint = f" Did you mean: {', '.join(named)}?" if named else ""
    return f"tool_unavailable: no tool named {name!r} is available.{hint}"
