"""The one JSON reader (and writer) of eukhe: every document, argument and event that eukhe parses
goes through ``loads``, every document it writes through ``dumps`` (issue 30).

``loads`` is ``json.loads`` made safe for what comes from outside:

- a text nested deeper than ``limit`` brackets (``MAX_DEPTH``, 100, for what a person or a
  server hands eukhe: an argument, a settings document, models.json, a catalog, a bundle, a
  server's event, a tool call's arguments) is refused before any parser recurses into it (a
  20,000-deep event would otherwise end in a RecursionError); brackets inside strings do not
  count. eukhe's own logs and protocol lines are read with ``RECORD_DEPTH``, deeper than
  anything eukhe writes (what it writes comes from texts capped at ``MAX_DEPTH``);
- ``NaN``, ``Infinity``, ``-Infinity`` (which RFC 8259 does not have), a number past the largest
  float (``1e999``, which Python reads as infinity) and an integer of more digits than Python
  converts are refused (``finite=False`` keeps Python's reading of the first three, for eukhe's
  own logs, whose older lines may hold them).

A refusal is ``JsonRefused``, a ``json.JSONDecodeError`` (so a ValueError): every handler that
catches a text that is not JSON catches it. It names the document (``what``, when the caller
gives one), what was wrong, and for a text too deep the depth reached and where.

``dumps`` is ``json.dumps`` with ``allow_nan=False``: eukhe never writes NaN or Infinity, which
are not JSON and which a strict reader (this one included) refuses.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

MAX_DEPTH = 100  # brackets: an argument, a document, an event
RECORD_DEPTH = 512  # brackets: eukhe's own log lines and protocol lines

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)  # a string, or the rest of the text after an unpaired quote
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


class JsonRefused(json.JSONDecodeError):
    """A JSON text refused: nested deeper than the cap, or a number JSON does not have."""

    def __init__(self, reason: str, doc: str, pos: int, *, what: str = "", depth: int | None = None) -> None:
        self.reason = reason
        self.what = what
        self.depth = depth
        super().__init__(f"{what}: {reason}" if what else reason, doc, pos)

    def __reduce__(self) -> Any:  # pragma: no cover - pickling keeps the keyword fields
        return (_rebuild, (self.reason, self.doc, self.pos, self.what, self.depth))


def _rebuild(reason: str, doc: str, pos: int, what: str, depth: int | None) -> JsonRefused:  # pragma: no cover
    return JsonRefused(reason, doc, pos, what=what, depth=depth)


class _Constant(ValueError):
    def __init__(self, reason: str, literal: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.literal = literal


def _text(data: str | bytes | bytearray) -> str:
    if isinstance(data, str):
        return data
    raw = bytes(data)
    return raw.decode(json.detect_encoding(raw), "surrogatepass")  # as json.loads reads bytes


def too_deep(text: str, limit: int = MAX_DEPTH) -> int | None:
    """The index of the first bracket (outside strings) that opens level ``limit + 1``; None
    when ``text`` nests at most ``limit`` deep."""
    if text.count("[") + text.count("{") <= limit:
        return None
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    depth = deepest = 0
    for char in brackets:
        if char in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    break
        elif depth:
            depth -= 1
    if deepest <= limit:
        return None
    depth = 0
    for found in _TOKEN.finditer(text):  # the place, for the message: stops at the first bracket too deep
        char = found.group()
        if char in "[{":
            depth += 1
            if depth > limit:
                return found.start()
        elif char in "]}" and depth:
            depth -= 1
    return None  # pragma: no cover - the two scans agree


def loads(data: str | bytes | bytearray, what: str = "", *, limit: int = MAX_DEPTH, finite: bool = True) -> Any:
    """The value of the JSON text ``data``; JsonRefused (naming ``what``) when it nests deeper
    than ``limit`` or holds a number JSON does not have; json.JSONDecodeError when it is not
    JSON; UnicodeDecodeError for bytes that are not text (as json.loads)."""
    text = _text(data)
    at = too_deep(text, limit)
    if at is not None:
        raise JsonRefused(f"nested more than {limit} brackets deep", text, at, what=what, depth=limit + 1)
    try:
        if finite:
            return json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
        return json.loads(text)
    except _Constant as refused:
        at = max(text.find(refused.literal), 0)
        raise JsonRefused(refused.reason, text, at, what=what) from None
    except json.JSONDecodeError:
        raise
    except ValueError as error:  # an integer of more digits than Python converts
        raise JsonRefused(str(error).split(";")[0], text, 0, what=what) from None
    except RecursionError:  # a deep stack under a text within the cap: refused all the same
        raise JsonRefused("nested too deep to read here", text, 0, what=what) from None


def _refuse_constant(name: str) -> Any:
    raise _Constant(f"{name} is not a JSON number", name)


def _finite_float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise _Constant(f"{literal[:40]} is past the largest JSON number", literal)
    return value


def dumps(value: Any, **options: Any) -> str:
    """``json.dumps`` that refuses NaN and Infinity (ValueError): what eukhe writes is JSON."""
    options["allow_nan"] = False
    return json.dumps(value, **options)
