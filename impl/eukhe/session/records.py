"""The record format of a conversation log: one JSON object per line, one line per commit.

    {"op":"commit","seq":3,"entries":[{"id":4,"parent":3,"kind":"user","content":"hi"},
                                      {"id":5,"parent":4,"kind":"custom","custom_type":"eukhe.director",
                                       "display_only":true,"content":"...","documents":{"eukhe.directors":[]}}]}
    {"op":"fork","seq":1,"from":{"session":"S","conversation":"main","entry":9},"entries":[...]}
    {"op":"move","seq":4,"head":2}
    {"op":"torn","lines":[7,8]}

``seq`` counts the state records (commit, fork, move) of the log from 1. The document
values an entry carries are the values as of that entry (a commit puts them on its last
entry). ``torn`` is written by the store, never by a caller: it says that lines ``a..b``
before it are a torn write that was terminated and is skipped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from eukhe import strict_json
from eukhe.session.entries import Entry, EntryId, Json, Kind, check_json
from eukhe.session.errors import InvalidCommit


class RecordError(ValueError):
    """A line that is not a well-formed record; the log names its file and line."""


@dataclass(frozen=True)
class Stored:
    entry: Entry
    documents: dict[str, Json] = field(default_factory=dict)


@dataclass(frozen=True)
class Origin:
    session: str
    conversation: str
    entry: EntryId


@dataclass(frozen=True)
class Append:
    """A commit (``origin`` None) or the first record of a fork (``origin`` set)."""

    seq: int
    entries: tuple[Stored, ...]
    origin: Origin | None = None


@dataclass(frozen=True)
class Move:
    seq: int
    head: EntryId


@dataclass(frozen=True)
class Torn:
    first: int
    last: int


Record = Append | Move | Torn


def encode(record: Record) -> bytes:
    """One line, newline included. ASCII only, so a line's bytes and characters agree."""
    body: dict[str, Any]
    if isinstance(record, Append):
        body = {"op": "commit" if record.origin is None else "fork", "seq": record.seq}
        if record.origin is not None:
            o = record.origin
            body["from"] = {"session": o.session, "conversation": o.conversation, "entry": o.entry}
        body["entries"] = [_encode_stored(s) for s in record.entries]
    elif isinstance(record, Move):
        body = {"op": "move", "seq": record.seq, "head": record.head}
    else:
        body = {"op": "torn", "lines": [record.first, record.last]}
    return (json.dumps(body, separators=(",", ":"), allow_nan=False) + "\n").encode("ascii")


def _encode_stored(stored: Stored) -> dict[str, Any]:
    e = stored.entry
    out: dict[str, Any] = {"id": e.id, "parent": e.parent, "kind": e.kind.value, "content": e.content}
    if e.custom_type is not None:
        out["custom_type"] = e.custom_type
    if e.display_only:
        out["display_only"] = True
    if stored.documents:
        out["documents"] = stored.documents
    return out


def decode(line: bytes) -> Record:
    """Parse one line (without its newline); RecordError says what is wrong."""
    try:
        body = strict_json.loads(line, limit=strict_json.RECORD_DEPTH, finite=False)
    except (ValueError, UnicodeDecodeError) as error:
        raise RecordError(f"not JSON: {error}") from None
    if not isinstance(body, dict):
        raise RecordError("not a JSON object")
    op = body.get("op")
    if op == "torn":
        _keys(body, {"op", "lines"})
        lines = body["lines"]
        if not (isinstance(lines, list) and len(lines) == 2 and all(_nat(x) for x in lines) and 1 <= lines[0] <= lines[1]):
            raise RecordError("torn: lines is not [first, last]")
        return Torn(lines[0], lines[1])
    seq = body.get("seq")
    if not _nat(seq) or seq < 1:
        raise RecordError("seq is not a whole number from 1")
    if op == "move":
        _keys(body, {"op", "seq", "head"})
        if not _nat(body["head"]):
            raise RecordError("move: head is not an entry id")
        return Move(seq, body["head"])
    if op == "commit":
        _keys(body, {"op", "seq", "entries"})
        origin = None
    elif op == "fork":
        _keys(body, {"op", "seq", "from", "entries"})
        origin = _origin(body["from"])
    else:
        raise RecordError(f"unknown op {op!r}")
    entries = body["entries"]
    if not isinstance(entries, list) or not entries:
        raise RecordError(f"{op}: entries is not a non-empty list")
    return Append(seq, tuple(_stored(item) for item in entries), origin)


def _origin(value: object) -> Origin:
    if not isinstance(value, dict):
        raise RecordError("fork: from is not an object")
    _keys(value, {"session", "conversation", "entry"})
    session, conversation, entry = value["session"], value["conversation"], value["entry"]
    if not (isinstance(session, str) and isinstance(conversation, str) and _nat(entry)):
        raise RecordError("fork: from is not {session, conversation, entry}")
    return Origin(session, conversation, entry)


def _stored(item: object) -> Stored:
    if not isinstance(item, dict):
        raise RecordError("an entry is not an object")
    _keys(item, {"id", "parent", "kind", "content"}, {"custom_type", "display_only", "documents"})
    entry_id, parent = item["id"], item["parent"]
    if not _nat(entry_id) or not (parent is None or _nat(parent)):
        raise RecordError("an entry id or parent is not a whole number")
    try:
        kind = Kind(item["kind"])
    except ValueError:
        raise RecordError(f"entry {entry_id}: unknown kind {item['kind']!r}") from None
    custom_type = item.get("custom_type")
    display_only = item.get("display_only", False)
    documents = item.get("documents", {})
    if (kind is Kind.CUSTOM) != isinstance(custom_type, str) or not isinstance(display_only, bool):
        raise RecordError(f"entry {entry_id}: custom_type or display_only does not fit kind {kind.value}")
    if display_only and kind is not Kind.CUSTOM:
        raise RecordError(f"entry {entry_id}: a {kind.value} entry is display-only")
    if not isinstance(documents, dict):
        raise RecordError(f"entry {entry_id}: documents is not an object")
    try:
        check_json(item["content"], "content")
        check_json(documents, "documents")
    except InvalidCommit as error:
        raise RecordError(f"entry {entry_id}: {error}") from None
    entry = Entry(entry_id, parent, kind, item["content"], custom_type, bool(display_only))
    return Stored(entry, documents)


def _keys(body: dict[str, Any], required: set[str], optional: frozenset[str] | set[str] = frozenset()) -> None:
    missing = required - body.keys()
    extra = body.keys() - required - optional
    if missing or extra:
        raise RecordError(f"keys missing {sorted(missing)} or unknown {sorted(extra)}")


def _nat(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
