"""The lines of the chat memory's log, encoded and decoded (memory.md rule 1, D1, D2, D3).

- message line (``<chat>/YYYY-MM-DD.jsonl``): ``{"i", "kind", "text", "size", "date"}`` and, D2,
  an optional ``"key"`` (an append carrying a key already logged is not logged again);
- node line (``tree/YYYY-MM-DD.jsonl``): ``{"l", "i", "text", "size"}``;
- merge line (``tree/``, F1, D1): ``{"merge": [[l, i], ...], "open", "t"}``: the view lines a batch
  made, oldest first (each a built parent replacing the lines it covers), whether the view stayed
  above its floor, and the message count. Old lines without ``open``/``t`` do not occur here: this
  store never wrote them (F1's old format is the seed's, before merge lines existed);
- torn marker (both): ``{"torn": N}``: line ``N`` of the file was cut by a crash and is skipped.

Kinds (rules 3-5, D3): user, eukhe (the agent's replies; old ``talk`` lines read as eukhe),
tool, echo, work, note. Thoughts are never logged (rule 8): there is no kind for them.
"""

from __future__ import annotations

import json
from typing import NamedTuple
from enum import Enum

from eukhe import strict_json
from eukhe.memory.text import size

Node = tuple[int, int]


class Kind(str, Enum):
    USER = "user"
    EUKHE = "eukhe"
    TOOL = "tool"
    ECHO = "echo"
    WORK = "work"
    NOTE = "note"


OLD_KINDS = {"talk": Kind.EUKHE}  # D3: lines from before the rename


def kind_of(value: object) -> Kind:
    """The kind a line's ``kind`` field names (``talk`` reads as eukhe), else ValueError."""
    if isinstance(value, str):
        if value in OLD_KINDS:
            return OLD_KINDS[value]
        try:
            return Kind(value)
        except ValueError:
            pass
    raise ValueError(f"unknown kind {value!r} (kinds: {', '.join(k.value for k in Kind)}; old talk)")


class StoreError(Exception):
    """The chat memory on disk cannot be used: the message names what and where."""


class CorruptLine(StoreError):
    """A line of the log that is not a good record, not the torn last line of a crash."""

    def __init__(self, path: object, line: int, why: str) -> None:
        super().__init__(f"{path}: line {line}: {why}")
        self.path = path
        self.line = line


class IdGap(CorruptLine):
    """Message ids must run 0, 1, 2, ... across the day files (rule 2)."""


class LostLines(CorruptLine):
    """Lines of the log are missing (a day file deleted, cut or replaced): what shows it, named by
    its file and line. Never a crash's: a crash loses at most the line it cut (rule 6)."""


class Message(NamedTuple):
    i: int
    kind: Kind
    text: str
    date: str
    key: str | None = None


class NodeLine(NamedTuple):
    node: Node
    text: str


class MergeLine(NamedTuple):
    lines: tuple[Node, ...]
    open: bool
    t: int


class Torn(NamedTuple):
    line: int


Record = Message | NodeLine | MergeLine | Torn


def encode(record: Record) -> bytes:
    """One whole line, newline included."""
    if isinstance(record, Message):
        body: dict[str, object] = {"i": record.i, "kind": record.kind.value, "text": record.text, "size": size(record.text), "date": record.date}
        if record.key is not None:
            body["key"] = record.key
    elif isinstance(record, NodeLine):
        body = {"l": record.node[0], "i": record.node[1], "text": record.text, "size": size(record.text)}
    elif isinstance(record, MergeLine):
        body = {"merge": [list(n) for n in record.lines], "open": record.open, "t": record.t}
    else:
        body = {"torn": record.line}
    return (json.dumps(body, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def _natural(body: dict[str, object], field: str) -> int:
    value = body.get(field)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{field} must be a whole number >= 0, not {value!r}")
    return value


def _text(body: dict[str, object]) -> str:
    text = body.get("text")
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, not {type(text).__name__}")
    stated = _natural(body, "size")
    if stated != size(text):
        raise ValueError(f"size {stated} is not the text's {size(text)} bytes")
    return text


def decode(line: bytes, *, tree: bool) -> Record:
    """The record of one line (without its newline); ValueError says what is wrong."""
    try:
        body = strict_json.loads(line, limit=strict_json.RECORD_DEPTH, finite=False)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"not JSON: {error}") from None
    return record_of(body, tree=tree)


_NODE_KEYS = {"l", "i", "text", "size"}
_MESSAGE_KEYS = {"i", "kind", "text", "size", "date"}
_KINDS = {k.value: k for k in Kind}


def record_of(body: object, *, tree: bool) -> Record:
    """The record a parsed line holds; ValueError says what is wrong."""
    if type(body) is dict:  # the fast path: a line as ``encode`` writes it
        text = body.get("text")
        if type(text) is str and type(body["size"] if "size" in body else None) is int and body["size"] == len(text.encode("utf-8")):
            if tree and body.keys() == _NODE_KEYS:
                level, i = body["l"], body["i"]
                if type(level) is int and type(i) is int and level >= 0 and i >= 0:
                    return NodeLine((level, i), text)
            elif not tree and body.keys() == _MESSAGE_KEYS:
                i, name, date = body["i"], body["kind"], body["date"]
                kind = _KINDS.get(name) if type(name) is str else None
                if type(i) is int and i >= 0 and kind is not None and type(date) is str:
                    return Message(i, kind, text, date)
    if not isinstance(body, dict):
        raise ValueError("a line is a JSON object")
    if "torn" in body and len(body) == 1:
        return Torn(_natural(body, "torn"))
    if not tree:
        date = body.get("date")
        if not isinstance(date, str):
            raise ValueError(f"date must be a string, not {date!r}")
        key = body.get("key")
        if key is not None and not isinstance(key, str):
            raise ValueError(f"key must be a string, not {key!r}")
        unknown = set(body) - {"i", "kind", "text", "size", "date", "key"}
        if unknown:
            raise ValueError(f"unknown fields {sorted(unknown)}")
        return Message(_natural(body, "i"), kind_of(body.get("kind")), _text(body), date, key)
    if "merge" in body:
        unknown = set(body) - {"merge", "open", "t"}
        if unknown:
            raise ValueError(f"unknown fields {sorted(unknown)}")
        lines = body["merge"]
        if not isinstance(lines, list) or not all(
            isinstance(n, list) and len(n) == 2 and all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in n) for n in lines
        ):
            raise ValueError("merge must be a list of [l, i] pairs of whole numbers")
        shrinking = body.get("open", False)
        if not isinstance(shrinking, bool):
            raise ValueError(f"open must be true or false, not {shrinking!r}")
        return MergeLine(tuple((int(n[0]), int(n[1])) for n in lines), shrinking, _natural(body, "t"))
    unknown = set(body) - {"l", "i", "text", "size"}
    if unknown:
        raise ValueError(f"unknown fields {sorted(unknown)}")
    return NodeLine((_natural(body, "l"), _natural(body, "i")), _text(body))

