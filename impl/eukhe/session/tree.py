"""The in-memory index of one conversation: its entries, its head, and the documents at the
head, kept up to date as records are applied (no rescan per read).

``Tree`` does no I/O. The log builds each record with ``plan_*``, writes it, and only then
``apply``s it, so memory never runs ahead of the disk; on open the log ``apply``s every
record it reads, and a record that does not fit the tree raises ``RecordError``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import cast

from eukhe.session.entries import Entry, EntryId, Json, Kind, NewEntry, check_json
from eukhe.session.errors import InvalidCommit, UnknownEntry
from eukhe.session.records import Append, Move, Origin, Record, RecordError, Stored, Torn


class Tree:
    def __init__(self, name: str) -> None:
        self.name = name
        self.seq = 0  # state records applied
        self.head: EntryId | None = None
        self.origin: Origin | None = None
        self._entries: dict[EntryId, Entry] = {}
        self._changes: dict[EntryId, dict[str, Json]] = {}
        self._next: EntryId = 1
        self._path: list[EntryId] = []  # root .. head
        self._docs: dict[str, Json] = {}  # documents at head

    # -- reading ----------------------------------------------------------------------
    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._entries

    def entry(self, entry_id: EntryId) -> Entry:
        try:
            return self._entries[entry_id]
        except KeyError:
            raise UnknownEntry(self.name, entry_id) from None

    def entries(self) -> list[Entry]:
        """Every entry of the tree, every branch, in id order."""
        return [self._entries[i] for i in sorted(self._entries)]

    def changes(self, entry_id: EntryId) -> dict[str, Json]:
        """The document values this entry itself sets."""
        self.entry(entry_id)
        return copy.deepcopy(self._changes.get(entry_id, {}))

    def branch(self) -> list[Entry]:
        """The entries from the root to the head."""
        return [self._entries[i] for i in self._path]

    def model_view(self) -> list[Entry]:
        return [e for e in self.branch() if e.in_model_view]

    def user_view(self) -> list[Entry]:
        return [e for e in self.branch() if e.in_user_view]

    def document(self, name: str, default: Json = None) -> Json:
        return copy.deepcopy(self._docs.get(name, default))

    def documents(self) -> dict[str, Json]:
        return copy.deepcopy(self._docs)

    def documents_at(self, entry_id: EntryId) -> dict[str, Json]:
        """Every document as of ``entry_id``: for each name, the value set nearest above it."""
        self.entry(entry_id)
        return copy.deepcopy(self._docs_at(entry_id))

    def path_to(self, entry_id: EntryId) -> list[Entry]:
        self.entry(entry_id)
        return [self._entries[i] for i in self._walk(entry_id)]

    # -- planning the next record ---------------------------------------------------------
    def plan_commit(self, new: Sequence[NewEntry], documents: Mapping[str, object]) -> Append | None:
        for item in new:
            item.check()
        for name, value in documents.items():
            if not isinstance(name, str) or not name:
                raise InvalidCommit(f"document name {name!r} is not a non-empty string")
            check_json(value, f"document {name}")
        items = list(new)
        if not items and documents:
            items = [NewEntry(Kind.STATE)]
        if not items:
            return None
        stored: list[Stored] = []
        parent = self.head
        for offset, item in enumerate(items):
            content = cast(Json, copy.deepcopy(item.content))  # checked above
            entry = Entry(self._next + offset, parent, item.kind, content, item.custom_type, item.display_only)
            last = offset == len(items) - 1
            values = cast(dict[str, Json], copy.deepcopy(dict(documents)))  # checked above
            stored.append(Stored(entry, values if last else {}))
            parent = entry.id
        return Append(self.seq + 1, tuple(stored))

    def plan_move(self, entry_id: EntryId) -> Move:
        self.entry(entry_id)
        return Move(self.seq + 1, entry_id)

    def plan_fork(self, entry_id: EntryId, origin: Origin) -> Append:
        """The first record of a new conversation holding the path to ``entry_id``, each entry
        with the document values it sets, so every document as of every entry is kept.
        UnknownEntry when the tree has no such entry."""
        self.entry(entry_id)  # an unknown entry is UnknownEntry, not a KeyError
        path = self._walk(entry_id)
        stored = tuple(Stored(self._entries[i], copy.deepcopy(self._changes.get(i, {}))) for i in path)
        return Append(1, stored, origin)

    # -- applying a record ----------------------------------------------------------------
    def apply(self, record: Record) -> None:
        if isinstance(record, Torn):
            return
        if record.seq != self.seq + 1:
            raise RecordError(f"seq {record.seq} does not follow {self.seq}")
        if isinstance(record, Move):
            if record.head not in self._entries:
                raise RecordError(f"move to entry {record.head}, which the tree does not hold")
            self.head = record.head
            self._path = self._walk(record.head)
            self._docs = self._docs_at(record.head)
            self.seq = record.seq
            return
        if record.origin is not None and self.seq != 0:
            raise RecordError("a fork record after the first record")
        parent = self.head
        low = self._next
        for stored in record.entries:
            entry = stored.entry
            if entry.parent != parent:
                raise RecordError(f"entry {entry.id} has parent {entry.parent}, expected {parent}")
            if entry.id < low:
                raise RecordError(f"entry id {entry.id} is not new (next id is {low})")
            parent, low = entry.id, entry.id + 1
        for stored in record.entries:
            self._entries[stored.entry.id] = stored.entry
            if stored.documents:
                self._changes[stored.entry.id] = stored.documents
                self._docs.update(stored.documents)
            self._path.append(stored.entry.id)
        self._next = low
        self.head = parent
        self.origin = record.origin if record.origin is not None else self.origin
        self.seq = record.seq

    # -- helpers --------------------------------------------------------------------------
    def _walk(self, entry_id: EntryId) -> list[EntryId]:
        path: list[EntryId] = []
        at: EntryId | None = entry_id
        while at is not None:
            path.append(at)
            at = self._entries[at].parent
        path.reverse()
        return path

    def _docs_at(self, entry_id: EntryId) -> dict[str, Json]:
        found: dict[str, Json] = {}
        for at in reversed(self._walk(entry_id)):
            for name, value in self._changes.get(at, {}).items():
                found.setdefault(name, value)
        return found
