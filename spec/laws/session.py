"""Laws of the durable session state tree (area ``session``), run on the production store
``eukhe.session`` against ``ModelTree``, a plain in-memory tree.

Derivation (the state tree S1 is not in the seeds; these laws are derived from where the
seeds use it): control.md S4 (the sets of an agent are the conversation document
eukhe.cvar.agent, committed on each change; "a rewind or a fork restores them"), S4 (the
eukhe.settings_error row is display-only: "the model does not see it"), S5.4 (the
eukhe.director row, "not in the model context", written with the stack change "in one
commit"), and S5.8 (the stack is the document eukhe.directors: "a fork or a branch move
starts from the stack as of its fork entry ... A resume reads the stored stack";
dir_resume_restores and dir_rewind_restores state the same of the model's encoding).

The state machine drives real session directories (files, fsync, flock) through any
sequence of commits (entries and documents), rewinds (branch moves), forks (new sessions),
reopens, torn writes (a crash that leaves an unterminated last line) and second writers.
"""

from __future__ import annotations

import array
import copy
import errno
import fcntl
import os
import resource
import time
from collections.abc import Callable, Iterator
import shutil
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from eukhe.session import (
    MAIN,
    Conversation,
    CorruptRecord,
    Entry,
    InvalidCommit,
    Json,
    Kind,
    NewEntry,
    ReadOnly,
    Session,
    SessionError,
    SessionExists,
    SessionLocked,
    SessionNotFound,
    Store,
    UnknownConversation,
    UnknownEntry,
    assistant,
    display,
    row,
    tool_call,
    tool_result,
    user,
)
from eukhe.session import lock as session_lock
from eukhe.session.private import replace
from spec.evidence import Evidence, LawFailed, all_of, also, bounded, examples, machine
from spec.registry import BOUNDED, TESTED, law

DERIVATION = "derived from control.md S4 (eukhe.cvar.agent; settings_error rows) and S5.4/S5.8 (eukhe.directors; the director row); state tree S1"
DOC_NAMES = ("eukhe.cvar.agent", "eukhe.directors", "eukhe.goal")
CONVERSATIONS = (MAIN, "main.worker")
MAX_SESSIONS = 4
# The laws check the logic of the store, not the disk: their session dirs go on tmpfs when
# there is one, so thousands of fsyncs cost nothing. The crash test (tests/session) runs on disk.
SCRATCH = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None

# -- the plain in-memory model ---------------------------------------------------------


@dataclass(frozen=True)
class ModelEntry:
    id: int
    parent: int | None
    kind: str
    content: object
    custom_type: str | None
    display_only: bool
    documents: dict[str, Json]


@dataclass
class ModelTree:
    """A conversation as the plain tree it stands for: entries by id, each with its parent
    and the document values it sets; a head; nothing cached. Documents at an entry: for each
    name, the value set nearest above it on the way to the root."""

    entries: dict[int, ModelEntry] = field(default_factory=dict)
    head: int | None = None
    next_id: int = 1
    records: int = 0  # the state records of the log: commits, rewinds, the fork
    origin: tuple[str, str, int] | None = None

    def commit(self, new: list[NewEntry], documents: dict[str, Json]) -> list[int]:
        items = list(new)
        if not items and documents:
            items = [NewEntry(Kind.STATE)]
        if items:
            self.records += 1
        ids = []
        for index, item in enumerate(items):
            last = index == len(items) - 1
            entry = ModelEntry(
                self.next_id,
                self.head,
                item.kind.value,
                copy.deepcopy(item.content),
                item.custom_type,
                item.display_only,
                copy.deepcopy(documents) if last else {},
            )
            self.entries[entry.id] = entry
            self.head = entry.id
            self.next_id += 1
            ids.append(entry.id)
        return ids

    def rewind(self, entry_id: int) -> None:
        self.head = entry_id
        self.records += 1

    def fork(self, entry_id: int, origin: tuple[str, str, int]) -> ModelTree:
        path = self.path(entry_id)
        return ModelTree({e.id: e for e in path}, entry_id, entry_id + 1, 1, origin)

    def path(self, entry_id: int | None) -> list[ModelEntry]:
        path = []
        while entry_id is not None:
            path.append(self.entries[entry_id])
            entry_id = self.entries[entry_id].parent
        return list(reversed(path))

    def documents_at(self, entry_id: int | None) -> dict[str, Json]:
        found: dict[str, Json] = {}
        for entry in self.path(entry_id):
            found.update(entry.documents)
        return found

    def documents(self) -> dict[str, Json]:
        return self.documents_at(self.head)

    def user_view(self) -> list[int]:
        return [e.id for e in self.path(self.head) if e.kind != "state"]

    def model_view(self) -> list[int]:
        return [e.id for e in self.path(self.head) if e.kind != "state" and not e.display_only]


def _row(entry: Entry) -> tuple[object, ...]:
    return (entry.id, entry.parent, entry.kind.value, entry.content, entry.custom_type, entry.display_only)


def _model_row(entry: ModelEntry) -> tuple[object, ...]:
    return (entry.id, entry.parent, entry.kind, entry.content, entry.custom_type, entry.display_only)


def differences(conversation: Conversation, model: ModelTree, *, every_entry: bool) -> list[str]:
    """What differs between a store conversation and the model (empty when they agree)."""
    found = []
    if conversation.head != model.head:
        found.append(f"head {conversation.head} != model {model.head}")
    if conversation.documents() != model.documents():
        found.append(f"documents at head {conversation.documents()!r} != model {model.documents()!r}")
    if [e.id for e in conversation.model_view()] != model.model_view():
        found.append(f"model view {[e.id for e in conversation.model_view()]} != model {model.model_view()}")
    if [e.id for e in conversation.user_view()] != model.user_view():
        found.append(f"user view {[e.id for e in conversation.user_view()]} != model {model.user_view()}")
    if conversation.seq != model.records:
        found.append(f"seq {conversation.seq} != model {model.records}")
    origin = conversation.origin
    if (None if origin is None else (origin.session, origin.conversation, origin.entry)) != model.origin:
        found.append(f"origin {origin} != model {model.origin}")
    branch = [e.id for e in model.path(model.head)] if model.head is not None else []
    if [e.id for e in conversation.branch()] != branch or [e.id for e in conversation] != branch:
        found.append(f"branch {[e.id for e in conversation.branch()]} != model {branch}")
    for name in DOC_NAMES:
        if conversation.document(name, "absent") != model.documents().get(name, "absent"):
            found.append(f"document {name} at head differs")
    expected_parent = None if "." not in conversation.name else conversation.name.rsplit(".", 1)[0]
    if conversation.parent != expected_parent:
        found.append(f"parent {conversation.parent} != {expected_parent}")
    if every_entry:
        for entry_id, entry in model.entries.items():
            if _row(conversation.entry(entry_id)) != _model_row(entry) or conversation.changes(entry_id) != entry.documents:
                found.append(f"entry {entry_id} or the documents it sets differ")
        rows = [_row(e) for e in conversation.entries()]
        if rows != [_model_row(model.entries[i]) for i in sorted(model.entries)]:
            found.append(f"entries {rows!r} != model {sorted(model.entries.items())!r}")
        for entry_id in model.entries:
            if conversation.documents_at(entry_id) != model.documents_at(entry_id):
                found.append(f"documents at entry {entry_id}: {conversation.documents_at(entry_id)!r} != model {model.documents_at(entry_id)!r}")
    return found


# -- strategies ------------------------------------------------------------------------

# Input classes: None, booleans, small and huge integers (past 64 bits), finite floats with the
# extremes, empty and unicode strings (multi-byte, astral, newlines, quotes), nested lists and
# objects with unicode keys.
scalars: st.SearchStrategy[Json] = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.sampled_from([2**64, -(2**70) - 1, 10**30]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([1.7976931348623157e308, 5e-324, -0.0]),
    st.text(max_size=4),
    st.sampled_from(["", "é𝄞\n\"'\u2028", "\x00\x7f"]),
)
json_values: st.SearchStrategy[Json] = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=6,
)
new_entries = st.one_of(
    st.builds(NewEntry, st.sampled_from([Kind.USER, Kind.ASSISTANT, Kind.TOOL_CALL, Kind.TOOL_RESULT]), json_values),
    st.builds(user, st.text(max_size=6)),
    st.builds(lambda make, value: make(value), st.sampled_from([assistant, tool_call, tool_result]), json_values),
    st.builds(lambda kind, value, shown: row(kind, value, display_only=shown), st.sampled_from(["eukhe.director", "eukhe.goal_context"]), json_values, st.booleans()),
    st.builds(display, st.just("eukhe.settings_error"), json_values),
    st.builds(
        NewEntry,
        st.just(Kind.CUSTOM),
        json_values,
        st.sampled_from(["eukhe.director", "eukhe.settings_error", "eukhe.goal_context"]),
        st.booleans(),
    ),
)
commits = st.tuples(st.lists(new_entries, max_size=3), st.dictionaries(st.sampled_from(DOC_NAMES), json_values, max_size=2))
torn_bytes = st.binary(min_size=1, max_size=40).map(lambda b: b.replace(b"\n", b" "))


# -- the state machine -----------------------------------------------------------------


class SessionMachine(RuleBasedStateMachine):
    """Any sequence of commits, rewinds, forks, reopens, torn writes and second writers."""

    check_reader = False  # each step, also read every session again from disk

    def __init__(self) -> None:
        super().__init__()
        self.root = Path(tempfile.mkdtemp(prefix="eukhe-session-law-", dir=SCRATCH))
        self.store = Store(self.root)
        self.open: dict[str, Session] = {"s0": self.store.create("s0")}
        self.models: dict[str, dict[str, ModelTree]] = {"s0": {MAIN: ModelTree()}}

    def _session(self, pick: int) -> str:
        ids = sorted(self.models)
        return ids[pick % len(ids)]

    def _model(self, session_id: str, name: str) -> ModelTree:
        return self.models[session_id].setdefault(name, ModelTree())

    @rule(pick=st.integers(0, 7), name=st.sampled_from(CONVERSATIONS), commit=commits)
    def commit(self, pick: int, name: str, commit: tuple[list[NewEntry], dict[str, Json]]) -> None:
        session_id = self._session(pick)
        entries, documents = commit
        got = self.open[session_id].conversation(name).commit(entries, documents)
        want = self._model(session_id, name).commit(entries, documents)
        assert got == want, f"commit gave ids {got}, the model {want}"

    @rule(pick=st.integers(0, 7), name=st.sampled_from(CONVERSATIONS), which=st.integers(0, 1000))
    def rewind(self, pick: int, name: str, which: int) -> None:
        session_id = self._session(pick)
        model = self._model(session_id, name)
        if not model.entries:
            return
        target = sorted(model.entries)[which % len(model.entries)]
        self.open[session_id].conversation(name).rewind(target)
        model.rewind(target)

    @precondition(lambda self: len(self.models) < MAX_SESSIONS)
    @rule(pick=st.integers(0, 7), name=st.sampled_from(CONVERSATIONS), which=st.integers(0, 1000))
    def fork(self, pick: int, name: str, which: int) -> None:
        session_id = self._session(pick)
        model = self._model(session_id, name)
        if not model.entries:
            return
        target = sorted(model.entries)[which % len(model.entries)]
        new_id = f"s{len(self.models)}"
        if which % 3 == 0:
            forked = self.open[session_id].conversation(name).fork(target, new_id=new_id)
        elif which % 3 == 1:
            forked = self.open[session_id].fork(target, conversation=name, new_id=new_id)
        else:  # through the store: a reader of the source session (the writer holds its lock)
            forked = self.store.fork(session_id, target, conversation=name, new_id=new_id)
        assert forked == new_id, f"the fork is {forked}, not {new_id}"
        self.open[forked] = self.store.open(forked)
        self.models[forked] = {MAIN: model.fork(target, (session_id, name, target))}

    @rule(pick=st.integers(0, 7))
    def reopen(self, pick: int) -> None:
        session_id = self._session(pick)
        self.open[session_id].close()
        self.open[session_id] = self.store.open(session_id)

    @rule(pick=st.integers(0, 7), name=st.sampled_from(CONVERSATIONS), torn=torn_bytes)
    def torn_write(self, pick: int, name: str, torn: bytes) -> None:
        """A crash in the middle of a write: the writer dies, its last line has no newline."""
        session_id = self._session(pick)
        self.open[session_id].close()
        path = self.store.path(session_id) / f"{name}.jsonl"
        if path.exists():
            with path.open("ab") as handle:
                handle.write(torn)
        with self.store.open(session_id, writer=False) as reader:  # a reader skips the torn tail
            self._compare(reader, session_id, every_entry=False)
        self.open[session_id] = self.store.open(session_id)

    @rule(pick=st.integers(0, 7))
    def second_writer(self, pick: int) -> None:
        session_id = self._session(pick)
        try:
            second = self.store.open(session_id, writer=True)
        except SessionLocked as error:
            assert f"pid {os.getpid()} " in error.holder, f"the lock error does not name the holder: {error}"
            return
        second.close()
        raise LawFailed(f"a second writer opened session {session_id}")

    def _compare(self, session: Session, session_id: str, *, every_entry: bool) -> None:
        names = session.conversations()
        stored = sorted(n for n in names if session.conversation(n).entries())
        modelled = sorted(n for n, m in self.models[session_id].items() if m.entries)
        assert stored == modelled, f"session {session_id} has conversations {stored}, the model {modelled}"
        for name in modelled:
            found = differences(session.conversation(name), self.models[session_id][name], every_entry=every_entry)
            assert not found, f"session {session_id} conversation {name}: " + "; ".join(found)

    @invariant()
    def agrees_with_the_model(self) -> None:
        assert self.store.ids() == sorted(self.models), f"the store lists {self.store.ids()}, the model {sorted(self.models)}"
        for session_id, session in self.open.items():
            self._compare(session, session_id, every_entry=True)
            if self.check_reader:
                with self.store.open(session_id, writer=False) as reader:
                    self._compare(reader, session_id, every_entry=True)

    def teardown(self) -> None:
        for session in self.open.values():
            session.close()
        shutil.rmtree(self.root, ignore_errors=True)


class ReopenMachine(SessionMachine):
    check_reader = True


@law(
    "session_documents_at_head",
    "S1 (derived); S4; S5.8",
    "After any commits, rewinds, forks, reopens and torn writes, every document at the head (and as of every entry), "
    "the head, the entries and both views equal those of a plain in-memory tree.",
    TESTED,
    derivation=DERIVATION,
)
def session_documents_at_head() -> Evidence:
    return machine(SessionMachine)


@law(
    "session_reopen_same",
    "S1 (derived); S5.8",
    "After each step, a session read again from disk gives exactly the state of the open session and of the model, head included.",
    TESTED,
    derivation=DERIVATION,
)
def session_reopen_same() -> Evidence:
    return machine(ReopenMachine)


# -- a corrupt record ------------------------------------------------------------------


@dataclass(frozen=True)
class Damage:
    line: int  # 0-based index of a line that is not the last
    mode: str  # cut (a strict prefix of the line), drop (the line removed), twice (the line repeated)
    cut: int


def _corrupt_case(plan: list[tuple[list[NewEntry], dict[str, Json]]], damage: Damage) -> bool:
    root = Path(tempfile.mkdtemp(prefix="eukhe-session-corrupt-", dir=SCRATCH))
    try:
        store = Store(root)
        with store.create("s") as session:
            main = session.conversation(MAIN)
            for entries, documents in plan:
                main.commit(entries, documents)
            main.rewind(1)
        path = store.path("s") / "main.jsonl"
        lines = path.read_bytes().splitlines(keepends=True)
        line = damage.line % (len(lines) - 1)
        if damage.mode == "cut":
            lines[line] = lines[line][: damage.cut % (len(lines[line]) - 1)] + b"\n"
        elif damage.mode == "drop":
            del lines[line]
        else:
            lines.insert(line, lines[line])
        damaged = b"".join(lines)
        path.write_bytes(damaged)
        for writer in (False, True):
            try:
                store.open("s", writer=writer).close()
            except CorruptRecord as error:
                assert error.path == path, f"the error names {error.path}, not {path}"
                assert str(path) in str(error) and f"record {error.record}" in str(error), str(error)
                if damage.mode == "cut":
                    assert error.record == line + 1, f"the error names record {error.record}, the cut one is {line + 1}"
                else:
                    assert line + 1 <= error.record <= len(lines), f"record {error.record} outside the damage"
            else:
                raise LawFailed(f"a log damaged by {damage} at line {line + 1} opened (writer={writer})")
            assert path.read_bytes() == damaged, "opening a corrupt log modified it"
        return True
    finally:
        shutil.rmtree(root, ignore_errors=True)


# Malformed records at every depth of the record format (records.py's docstring): not JSON, not
# an object, an unknown op, a bad seq, unknown or missing keys at the top, in "from" and in an
# entry, a bad entry id, parent, kind, custom_type, display_only, documents or content, a torn
# marker naming other lines, and records that do not fit the tree (seq, parent, id, move, fork).
_E = '{"id":3,"parent":2,"kind":"user","content":"x"}'
MALFORMED: tuple[str, ...] = (
    "not json",
    "[1,2]",
    '{"op":"drop","seq":3,"entries":[' + _E + "]}",
    '{"op":"commit","seq":0,"entries":[' + _E + "]}",
    '{"op":"commit","seq":true,"entries":[' + _E + "]}",
    '{"op":"commit","seq":3,"entries":[' + _E + '],"extra":1}',
    '{"op":"commit","seq":3}',
    '{"op":"commit","seq":3,"entries":[]}',
    '{"op":"commit","seq":3,"entries":{}}',
    '{"op":"commit","seq":3,"entries":[1]}',
    '{"op":"commit","seq":3,"entries":[{"id":3,"parent":2,"kind":"user"}]}',
    '{"op":"commit","seq":3,"entries":[{"id":3,"parent":2,"kind":"user","content":"x","more":1}]}',
    '{"op":"commit","seq":3,"entries":[{"id":-3,"parent":2,"kind":"user","content":"x"}]}',
    '{"op":"commit","seq":3,"entries":[{"id":3,"parent":"2","kind":"user","content":"x"}]}',
    '{"op":"commit","seq":3,"entries":[{"id":3,"parent":2,"kind":"robot","content":"x"}]}',
    '{"op":"commit","seq":3,"entries":[{"id":3,"parent":2,"kind":"custom","content":"x"}]}',
    '{"op":"commit","seq":3,"entries":[{"id":3,"parent":2,"kind":"user","custom_type":"t","content":"x"}]}',
    '{"op":"commit","seq":3,"entries":[{"id":3,"parent":2,"kind":"user","display_only":true,"content":"x"}]}',
    '{"op":"commit","seq":3,"entries":[{"id":3,"parent":2,"kind":"custom","custom_type":"t","display_only":1,"content":"x"}]}',
    '{"op":"commit","seq":3,"entries":[{"id":3,"parent":2,"kind":"user","content":"x","documents":[]}]}',
    '{"op":"commit","seq":3,"entries":[{"id":3,"parent":2,"kind":"user","content":NaN}]}',
    '{"op":"commit","seq":3,"entries":[{"id":3,"parent":2,"kind":"user","content":"x","documents":{"d":Infinity}}]}',
    '{"op":"fork","seq":3,"from":[],"entries":[' + _E + "]}",
    '{"op":"fork","seq":3,"from":{"session":"s"},"entries":[' + _E + "]}",
    '{"op":"fork","seq":3,"from":{"session":1,"conversation":"main","entry":1},"entries":[' + _E + "]}",
    '{"op":"move","seq":3,"head":"1"}',
    '{"op":"move","seq":3,"head":1,"x":0}',
    '{"op":"torn","lines":[2]}',
    '{"op":"torn","lines":[5,9]}',
    '{"op":"commit","seq":9,"entries":[' + _E + "]}",
    '{"op":"commit","seq":3,"entries":[{"id":3,"parent":1,"kind":"user","content":"x"}]}',
    '{"op":"commit","seq":3,"entries":[{"id":1,"parent":2,"kind":"user","content":"x"}]}',
    '{"op":"move","seq":3,"head":77}',
    '{"op":"fork","seq":3,"from":{"session":"s","conversation":"main","entry":1},"entries":[' + _E + "]}",
)


def _malformed_case(line: str) -> bool:
    """Between two good records the line fails the open, for a reader and a writer, naming record
    2 and leaving the log as it was; as the last line it is a torn tail a reader skips."""
    root = Path(tempfile.mkdtemp(prefix="eukhe-session-malformed-", dir=SCRATCH))
    try:
        store = Store(root)
        with store.create("s") as session:
            main = session.conversation(MAIN)
            main.commit([NewEntry(Kind.USER, "a")])
            main.commit([NewEntry(Kind.USER, "b")], {"eukhe.goal": 1})
            main.commit([NewEntry(Kind.USER, "c")])
        path = store.path("s") / "main.jsonl"
        good = path.read_bytes().splitlines(keepends=True)
        damaged = b"".join(good[:2]) + line.encode("utf-8") + b"\n" + good[2]
        path.write_bytes(damaged)
        for writer in (False, True):
            try:
                store.open("s", writer=writer).close()
            except CorruptRecord as error:
                if error.record != 3 or error.path != path:
                    raise LawFailed(f"{line!r}: the error names record {error.record} of {error.path}, not record 3") from None
            else:
                raise LawFailed(f"a log with {line!r} as its third record opened (writer={writer})")
            if path.read_bytes() != damaged:
                raise LawFailed(f"opening a log with {line!r} modified it")
        path.write_bytes(b"".join(good[:2]) + line.encode("utf-8"))
        with store.open("s", writer=False) as reader:
            if [e.content for e in reader.conversation(MAIN).entries()] != ["a", "b"]:
                raise LawFailed(f"{line!r} as a torn last line was not skipped")
        return True
    finally:
        shutil.rmtree(root, ignore_errors=True)


# A crash cuts one line; the writer that finds the cut terminates it with a torn marker, and a crash
# in that write cuts the marker too (log.py: the tail of a crash is its one cut line, then at most
# the cut writes of the markers terminating it). The oracle is built from that sentence, not from
# the reader: a cut write of a marker is a non-empty strict start of {"op":"torn","lines":[a,b]}
# (whole, it would be a record); every other line after the cut one is no crash's.
_CUT_RECORD = b'{"op":"commit","seq":4,"entries":[{"id":4,"par'


def _marker_starts(first: int, last: int) -> list[bytes]:
    whole = b'{"op":"torn","lines":[%d,%d]}' % (first, last)
    return [whole[:k] for k in range(1, len(whole))]


# (the lines after the cut record, whether the last one has its newline, whether a crash leaves it)
TAILS: tuple[tuple[tuple[bytes, ...], bool, bool], ...] = (
    *(((start,), terminated, True) for start in _marker_starts(4, 4) for terminated in (False, True)),
    ((b'{"op":"to', b'{"op":"torn","lines":[4,5'), False, True),
    ((b'{"op":"torn","lines":[4,4]', b'{"op":"torn","lines":[4,5]', b"{"), True, True),
    ((b'{"op":"torn","lines":[123,4567',), False, True),
    ((b"garbage",), True, False),
    ((b"garbage",), False, False),
    ((b"",), True, False),
    ((b" ",), False, False),
    ((b'{"op":"torn","lines":[4,4]}x',), False, False),
    ((b'{"op":"torn","lines":[4,4,5',), False, False),
    ((b'{"op":"torn","lines":[4,4]}}',), True, False),
    ((b'{"op":"torn","lines":[a',), False, False),
    ((b'{"op":"torn","lines":[-4',), False, False),
    ((b'{"op":"torn","lines":[,',), False, False),
    ((b'{"op":"torn", "lines":[4',), False, False),
    ((b'{"op":"commit","seq":5,"entries":[',), False, False),
    ((b'{"op":"to', b"garbage"), False, False),
    ((b"garbage", b'{"op":"to'), False, False),
    ((b'{"op":"to', b'{"op":"torn","lines":[4,4]}x', b'{"op"'), True, False),
)


def _tail_case(case: tuple[tuple[bytes, ...], bool, bool]) -> bool:
    """Three good records, a cut one, then ``lines``: a crash's tail opens (a reader has the good
    records; a writer terminates the tail and appends after it, rewriting no byte); any other tail
    fails the open for a reader and a writer with CorruptRecord naming the file, the cut record and
    the first line that no crash leaves, and the log stays as it was."""
    lines, terminated, crash = case
    root = Path(tempfile.mkdtemp(prefix="eukhe-session-tail-", dir=SCRATCH))
    try:
        store = Store(root)
        with store.create("s") as session:
            main = session.conversation(MAIN)
            for text in ("a", "b", "c"):
                main.commit([NewEntry(Kind.USER, text)])
        path = store.path("s") / "main.jsonl"
        good = path.read_bytes()
        damaged = good + b"\n".join((_CUT_RECORD, *lines)) + (b"\n" if terminated else b"")
        path.write_bytes(damaged)
        if crash:
            with store.open("s", writer=False) as reader:
                if [e.content for e in reader.conversation(MAIN).entries()] != ["a", "b", "c"]:
                    raise LawFailed(f"the tail {lines!r} of a crash was not skipped")
            if path.read_bytes() != damaged:
                raise LawFailed(f"a reader of a log with the tail {lines!r} modified it")
            with store.open("s") as session:
                session.conversation(MAIN).commit([NewEntry(Kind.USER, "d")])
            with store.open("s", writer=False) as reader:
                if [e.content for e in reader.conversation(MAIN).entries()] != ["a", "b", "c", "d"]:
                    raise LawFailed(f"a commit after the tail {lines!r} of a crash did not read back")
            if not path.read_bytes().startswith(damaged):
                raise LawFailed(f"a writer rewrote the tail {lines!r} of a crash")
            return True
        cut_line = good.count(b"\n") + 1
        first_bad = cut_line + 1 + next(k for k, line in enumerate(lines) if line not in _marker_starts(4, 4) + _marker_starts(4, 5) + _marker_starts(123, 4567))
        for writer in (False, True):
            try:
                store.open("s", writer=writer).close()
            except CorruptRecord as error:
                if error.path != path or error.record != cut_line or f"line {first_bad} " not in error.reason:
                    raise LawFailed(f"the tail {lines!r}: the error names record {error.record} of {error.path} ({error.reason}), "
                                    f"not record {cut_line} of {path} and line {first_bad}") from None
            else:
                raise LawFailed(f"a log with the tail {lines!r} after its cut record opened (writer={writer}): no crash leaves it")
            if path.read_bytes() != damaged:
                raise LawFailed(f"opening a log with the tail {lines!r} modified it")
        return True
    finally:
        shutil.rmtree(root, ignore_errors=True)


@law(
    "session_corrupt_record_named",
    "S1 (derived); S4b.1",
    "A log with a bad record before its last one fails to open, for a reader and a writer, with an error naming the file "
    "and the record, and the log is not modified.",
    BOUNDED,
    derivation="derived from control.md S4b (no input is lost in silence; a document that failed to parse is never written)",
)
def session_corrupt_record_named() -> Evidence:
    malformed = bounded(MALFORMED, _malformed_case, label=f"every malformed record at every depth of the format ({len(MALFORMED)} kinds) between good records and as a torn last line")
    tails = bounded(TAILS, _tail_case, label=f"a cut record followed by {len(TAILS)} tails: every cut write of a torn marker, "
                    "several of them, and lines no crash leaves (garbage, empty, a marker with more, a record start)")
    return also(all_of(malformed, tails), examples(
        _corrupt_case,
        plan=st.lists(commits.filter(lambda c: bool(c[0])), min_size=2, max_size=5),
        damage=st.builds(Damage, st.integers(0, 100), st.sampled_from(["cut", "drop", "twice"]), st.integers(0, 10_000)),
    ))


# -- what the store cannot hold exactly is refused -----------------------------------------------


def _nested(value: object, depth: int) -> object:
    for level in range(depth):
        value = [value] if level % 2 == 0 else {"k": value}
    return value


BAD_VALUES: tuple[tuple[str, object], ...] = (
    ("nan", float("nan")),
    ("inf", float("inf")),
    ("-inf", float("-inf")),
    ("a non-string key", {1: "x"}),
    ("a tuple", ("x",)),
    ("bytes", b"x"),
    ("a set", {"x"}),
)


def _attempt(case: str, value: object, depth: int, root: Path) -> None:
    """Commit ``value`` nested ``depth`` deep as ``case`` on a session with one commit (derived from
    control.md S4b: bad input gets a typed error naming what was wrong, and nothing is written)."""
    store = Store(root)
    with store.create("s") as session:
        main = session.conversation(MAIN)
        main.commit([NewEntry(Kind.USER, "hi")], {"eukhe.goal": 1})
    session = store.open("s")
    try:
        main = session.conversation(MAIN)
        bad = _nested(value, depth)
        if case == "content":
            main.commit([NewEntry(Kind.ASSISTANT, bad)])
            return
        if case == "document":
            main.commit(documents={"eukhe.goal": bad})
            return
        raise AssertionError(case)
    finally:
        session.close()


def _refused(case: str, value: object, depth: int) -> bool:
    root = Path(tempfile.mkdtemp(prefix="eukhe-session-bad-", dir=SCRATCH))
    try:
        log = root / "s" / "main.jsonl"
        try:
            _attempt(case, value, depth, root)
        except InvalidCommit as error:
            if "JSON" not in str(error) and "key" not in str(error) and "float" not in str(error):
                raise LawFailed(f"the error does not say what JSON cannot hold: {error}") from None
        else:
            raise LawFailed(f"{case} holding {value!r} at depth {depth} was committed")
        with Store(root).open("s", writer=False) as reader:
            main = reader.conversation(MAIN)
            if [e.content for e in main.entries()] != ["hi"] or main.documents() != {"eukhe.goal": 1}:
                raise LawFailed(f"a refused commit of {case} changed the log")
        if log.read_bytes().count(b"\n") != 1:
            raise LawFailed(f"a refused commit of {case} wrote to the log")
        return True
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _misuse(root: Path) -> Iterator[tuple[str, Callable[[], object], type[Exception]]]:
    """Every other misuse of the store's API, each with the typed error it must raise."""
    store = Store(root)
    session = store.create("s")
    main = session.conversation(MAIN)
    main.commit([NewEntry(Kind.USER, "hi")])
    yield "a state entry committed", lambda: main.commit([NewEntry(Kind.STATE)]), InvalidCommit
    yield "a custom row without a type", lambda: main.commit([NewEntry(Kind.CUSTOM, "x")]), InvalidCommit
    yield "a user entry with a custom type", lambda: main.commit([NewEntry(Kind.USER, "x", "t")]), InvalidCommit
    yield "an empty custom type", lambda: main.commit([NewEntry(Kind.CUSTOM, "x", "")]), InvalidCommit
    yield "a display-only user entry", lambda: main.commit([NewEntry(Kind.USER, "x", None, True)]), InvalidCommit
    yield "an empty document name", lambda: main.commit(documents={"": 1}), InvalidCommit
    yield "a rewind to an unknown entry", lambda: main.rewind(99), UnknownEntry
    yield "a fork of an unknown entry", lambda: main.fork(99), UnknownEntry
    yield "documents as of an unknown entry", lambda: main.documents_at(99), UnknownEntry
    yield "a conversation named outside main", lambda: session.conversation("other"), InvalidCommit
    yield "a conversation with an empty segment", lambda: session.conversation("main..x"), InvalidCommit
    yield "a session id with a slash", lambda: store.open("../s"), InvalidCommit
    yield "an empty session id", lambda: store.create(""), InvalidCommit
    yield "a session that does not exist", lambda: store.open("nope"), SessionNotFound
    yield "a session that exists already", lambda: store.create("s"), SessionExists
    yield "a second writer", lambda: store.open("s"), SessionLocked
    yield "a second writer that waits for the lock", lambda: _waiting_writer(store), SessionLocked
    (root / "file").write_bytes(b"kept")
    yield "a store under a file", lambda: _in_the_way(Store(root / "file" / "sessions"), root / "file"), FileExistsError
    (root / "link").symlink_to(root / "nowhere")
    yield "a store under a dangling link", lambda: _in_the_way(Store(root / "link" / "sessions"), root / "link"), FileExistsError
    reader = store.open("s", writer=False)
    yield "a commit through a reader", lambda: reader.conversation(MAIN).commit([NewEntry(Kind.USER, "x")]), ReadOnly
    yield "a rewind through a reader", lambda: reader.conversation(MAIN).rewind(1), ReadOnly
    yield "a reader asking for a conversation with no log", lambda: reader.conversation("main.none"), UnknownConversation
    reader.close()
    session.close()
    yield "a commit on a closed session", lambda: main.commit([NewEntry(Kind.USER, "x")]), SessionError


WAIT = 0.03  # seconds a second writer waits for the lock before it fails


def _waiting_writer(store: Store) -> None:
    """A second writer of "s" whose process waits WAIT seconds for a taken lock (``HOLDER.timeout``,
    a function the lock calls only when it finds the lock taken, as the command line sets it): it
    fails with SessionLocked naming the holder and the wait, no sooner than WAIT seconds."""
    before = session_lock.HOLDER.timeout
    session_lock.HOLDER.timeout = lambda: WAIT
    started = time.monotonic()
    try:
        store.open("s").close()
    except SessionLocked as error:
        waited = time.monotonic() - started
        if waited < WAIT or f"waited {WAIT:g} s" not in str(error):
            raise LawFailed(f"a second writer told to wait {WAIT} s failed after {waited:.3f} s: {error}") from None
        raise
    finally:
        session_lock.HOLDER.timeout = before


FS_IOC_GETFLAGS, FS_IOC_SETFLAGS, FS_APPEND_FL = 0x80086601, 0x40086602, 0x20  # linux/fs.h (chattr +a)


def _append_only(folder: Path, on: bool) -> None:
    """Set or clear the append-only attribute of a directory (root may: CAP_LINUX_IMMUTABLE): files
    are created in it and written, but no entry is renamed or removed, a file system refusing both."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        flags = array.array("i", [0])
        fcntl.ioctl(fd, FS_IOC_GETFLAGS, flags, True)
        flags[0] = flags[0] | FS_APPEND_FL if on else flags[0] & ~FS_APPEND_FL
        fcntl.ioctl(fd, FS_IOC_SETFLAGS, flags)
    finally:
        os.close(fd)


def _append_only_allowed() -> bool:
    """Whether this process may set the append-only attribute of a scratch directory (root with
    CAP_LINUX_IMMUTABLE, on a file system that has the attribute)."""
    probe = Path(tempfile.mkdtemp(prefix="eukhe-session-probe-", dir=SCRATCH))
    try:
        _append_only(probe, True)
        _append_only(probe, False)
        return True
    except OSError:
        return False
    finally:
        shutil.rmtree(probe, ignore_errors=True)


def _replace_refused() -> bool:
    """``private.replace`` (view.json, index.bin: memory.md D1) where the file system refuses the
    rename and the removal of the temporary file (an append-only directory): the error raised is
    the rename's, naming both files (the failed clean-up does not hide it), and the old file is
    whole. Once the directory allows it again, the temporary file left is removed, never reused
    with its bits, and the new content lands 0600."""
    root = Path(tempfile.mkdtemp(prefix="eukhe-session-replace-", dir=SCRATCH))
    path, temporary = root / "view.json", root / ".view.json.tmp"
    try:
        path.write_bytes(b"[]")
        _append_only(root, True)
        try:
            replace(path, b"[[1,0]]", temporary)
        except OSError as error:
            if (error.filename, error.filename2) != (str(temporary), str(path)):
                raise LawFailed(f"a refused replace raised {error!r}, not the rename's error naming {temporary} and {path}") from None
        else:
            raise LawFailed("a replace in a directory that refuses renames succeeded")
        finally:
            _append_only(root, False)
        if path.read_bytes() != b"[]" or not temporary.exists():
            raise LawFailed("a refused replace changed the old file (or its temporary file could be removed after all)")
        temporary.chmod(0o644)
        replace(path, b"[[2,0]]", temporary)
        if path.read_bytes() != b"[[2,0]]" or temporary.exists() or stat.S_IMODE(path.stat().st_mode) != 0o600:
            raise LawFailed(f"a replace after a refused one left {sorted(p.name for p in root.iterdir())}, mode {oct(path.stat().st_mode)}")
        return True
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _through_dotdot() -> bool:
    """A store root written through a directory that does not exist yet and ``..`` (an agent dir
    given as ``new/../sessions``): the missing directories are made 0700, ``new/..`` is the
    existing root (no error for it), and the session lands in ``root/sessions``."""
    root = Path(tempfile.mkdtemp(prefix="eukhe-session-dotdot-", dir=SCRATCH))
    try:
        Store(root / "new" / ".." / "sessions").create("x").close()
        made = [root / "new", root / "sessions", root / "sessions" / "x"]
        modes = [oct(p.stat().st_mode & 0o777) if p.is_dir() else None for p in made]
        if modes != [oct(0o700)] * 3 or not (root / "sessions" / "x" / "main.jsonl").is_file():
            raise LawFailed(f"a store root through new/.. made {dict(zip(map(str, made), modes))}")
        return True
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _in_the_way(store: Store, blocker: Path) -> None:
    """Creating a session where a file (or a dangling link) stands in the way of the store's root:
    FileExistsError naming it (private.make_dirs: a file in the way is an OSError), and the thing in
    the way untouched."""
    kept = os.readlink(blocker) if blocker.is_symlink() else blocker.read_bytes()
    try:
        store.create("x")
    except FileExistsError as error:
        if error.filename != str(blocker):
            raise LawFailed(f"the error names {error.filename!r}, not what is in the way ({blocker})") from None
        raise
    finally:
        if (os.readlink(blocker) if blocker.is_symlink() else blocker.read_bytes()) != kept:
            raise LawFailed(f"creating a store under {blocker} changed it")


def _names_what_was_wrong(what: str, caught: Exception, root: Path) -> None:
    """S4b: a typed error names what was wrong (eukhe.session.errors: the session and its lock
    holder, the entry or the conversation), in its fields and in its message; every misuse of
    _misuse is on session "s", conversation main, entry 99."""
    session_dir = root / "s"
    fields: dict[str, object] = {}
    if isinstance(caught, UnknownEntry):
        fields = {"conversation": MAIN, "entry_id": 99}
    elif isinstance(caught, UnknownConversation):
        fields = {"name": "main.none"}
    elif isinstance(caught, (SessionExists, SessionLocked)):
        fields = {"session_dir": session_dir}
    elif isinstance(caught, SessionNotFound):
        fields = {"session_dir": root / "nope"}
    found = {k: getattr(caught, k, None) for k in fields}
    if found != fields:
        raise LawFailed(f"{what}: {type(caught).__name__} names {found}, not {fields}")
    words = [str(v) for v in fields.values()]
    if isinstance(caught, SessionLocked):
        words.append(str(caught.holder))
    if not all(w in str(caught) for w in words):
        raise LawFailed(f"{what}: the message {str(caught)!r} does not name {words}")


def _misuse_refused(case: tuple[str, Callable[[], object], type[Exception]], root: Path | None = None) -> bool:
    what, act, error = case
    try:
        act()
    except error as caught:
        if root is not None:
            _names_what_was_wrong(what, caught, root)
        return True
    except Exception as other:  # noqa: BLE001 - the wrong error is the failure reported
        raise LawFailed(f"{what}: {type(other).__name__} ({other}), not {error.__name__}") from None
    raise LawFailed(f"{what} was accepted")


# -- what the system refuses: a write the file system cuts, a log whose directory cannot be synced ----------
# Derived from control.md S4b (nothing is lost; an error is returned, never swallowed) and the log's rule
# (log.py: an acknowledged line is fsynced, a torn tail is skipped and terminated, no byte is rewritten).
# The failures are the kernel's own: the file size limit (RLIMIT_FSIZE; Python ignores SIGXFSZ, so the
# write returns EFBIG) and the descriptor limit (RLIMIT_NOFILE), each set for one call and restored.


def with_limit(which: int, soft: int, act: Callable[[], object]) -> OSError | None:
    """The OSError ``act`` raised with the soft ``which`` limit at ``soft`` (None: it raised nothing)."""
    before = resource.getrlimit(which)
    caught: OSError | None = None
    resource.setrlimit(which, (soft, before[1]))
    try:
        act()
    except OSError as error:
        caught = error
    finally:
        resource.setrlimit(which, before)
    return caught


def _contents(store: Store, name: str) -> list[object]:
    with store.open("s", writer=False) as reader:
        return [e.content for e in reader.conversation(name).entries()]


def _cut_by_the_disk(room: int) -> bool:
    """A commit whose line the file system takes only ``room`` bytes of: the commit raises the
    file system's error (EFBIG) and is not in the conversation; every later write of that session
    is refused (SessionError naming the log: the writer no longer knows where its log ends); the
    log reopened holds what was acknowledged, and a new commit lands after the cut line."""
    root = Path(tempfile.mkdtemp(prefix="eukhe-session-cut-", dir=SCRATCH))
    try:
        store = Store(root)
        path = store.path("s") / "main.jsonl"
        session = store.create("s")
        try:
            main = session.conversation(MAIN)
            main.commit([NewEntry(Kind.USER, "a")], {"eukhe.goal": 1})
            size = path.stat().st_size
            caught = with_limit(resource.RLIMIT_FSIZE, size + room, lambda: main.commit([NewEntry(Kind.USER, "b" * 200)]))
            if caught is None or caught.errno != errno.EFBIG:
                raise LawFailed(f"a commit the file system cut after {room} bytes gave {caught!r}, not EFBIG")
            if [e.content for e in main.entries()] != ["a"] or main.documents() != {"eukhe.goal": 1}:
                raise LawFailed(f"a commit the file system refused is in the conversation: {[e.content for e in main.entries()]}")
            if path.stat().st_size != size + room:
                raise LawFailed(f"the log holds {path.stat().st_size - size} bytes of the cut commit, not {room}")
            try:
                main.commit([NewEntry(Kind.USER, "c")])
            except SessionError as error:
                if str(path) not in str(error) or isinstance(error, OSError):
                    raise LawFailed(f"the write after a failed one is refused without naming its log: {error}") from None
            else:
                raise LawFailed("a commit after a failed write of the same log was accepted")
        finally:
            session.close()
        before = path.read_bytes()
        if _contents(store, MAIN) != ["a"]:
            raise LawFailed(f"the log reopened after a cut commit holds {_contents(store, MAIN)}")
        with store.open("s") as again:
            again.conversation(MAIN).commit([NewEntry(Kind.USER, "c")])
        if _contents(store, MAIN) != ["a", "c"] or not path.read_bytes().startswith(before):
            raise LawFailed("a commit after a cut one did not land after it, or rewrote the log")
        return True
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _no_descriptor_for_the_directory() -> bool:
    """The first commit of a conversation makes its log and fsyncs the directory before it returns;
    when the directory cannot be opened to sync (no descriptor left, EMFILE), the commit raises that
    error, leaves no descriptor open and is not in the conversation; a later commit lands."""
    root = Path(tempfile.mkdtemp(prefix="eukhe-session-fd-", dir=SCRATCH))
    try:
        store = Store(root)
        with store.create("s") as session:
            session.conversation(MAIN).commit([NewEntry(Kind.USER, "a")])
            worker = session.conversation("main.worker")  # its log is made by its first commit
            fds = sorted(os.listdir("/proc/self/fd"))
            free = os.open(os.devnull, os.O_RDONLY)  # the lowest free descriptor: the log takes it, the directory finds none
            os.close(free)
            caught = with_limit(resource.RLIMIT_NOFILE, free + 1, lambda: worker.commit([NewEntry(Kind.USER, "w")]))
            if caught is None or caught.errno != errno.EMFILE:
                raise LawFailed(f"a log whose directory could not be synced gave {caught!r}, not EMFILE")
            if sorted(os.listdir("/proc/self/fd")) != fds:
                raise LawFailed("a log whose directory could not be synced left its descriptor open")
            if worker.entries():
                raise LawFailed("a commit whose log could not be made durable is in the conversation")
            worker.commit([NewEntry(Kind.USER, "w2")])
        if _contents(store, "main.worker") != ["w2"] or _contents(store, MAIN) != ["a"]:
            raise LawFailed(f"after a failed first commit the logs hold {_contents(store, 'main.worker')} and {_contents(store, MAIN)}")
        return True
    finally:
        shutil.rmtree(root, ignore_errors=True)


_disk_cases: dict[str, Callable[[], bool]] = {
    "descriptors": _no_descriptor_for_the_directory,
    "dotdot": _through_dotdot,
    "append-only": _replace_refused,
}


@law(
    "session_refuses_bad_input",
    "S1 (derived); S4b",
    "A value JSON cannot hold exactly (nan, infinities, non-string keys, tuples, bytes, sets) at any depth of an entry "
    "or a document, a malformed entry, name or id, an unknown entry, a write through a reader or a closed session, a "
    "second writer: each gets its typed error, and the log is not written.",
    BOUNDED,
    derivation="derived from control.md S4b (bad input gets a typed error naming what was wrong; nothing is lost) and S4 (documents are JSON)",
)
def session_refuses_bad_input() -> Evidence:
    root = Path(tempfile.mkdtemp(prefix="eukhe-session-misuse-", dir=SCRATCH))
    try:
        misuse = bounded(
            _misuse(root), lambda case: _misuse_refused(case, root),
            label="every misuse of the store's API the seed's errors name (23 kinds: a second writer failing at once and after its wait, a "
                  "store under a file or a dangling link), each error naming its session, entry, conversation or what is in the way",
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    values = bounded(
        [(case, value, depth) for case in ("content", "document") for _what, value in BAD_VALUES for depth in range(4)],
        lambda c: _refused(*c),
        label="every value JSON cannot hold (7 kinds) at depths 0-3 in an entry and in a document",
    )
    append_only = _append_only_allowed()
    disk = bounded(
        [("cut", room) for room in (0, 1, 17, 60)] + [("descriptors", 0), ("dotdot", 0)] + ([("append-only", 0)] if append_only else []),
        lambda c: _cut_by_the_disk(c[1]) if c[0] == "cut" else _disk_cases[c[0]](),
        label="a commit the file system cuts after 0, 1, 17 and 60 bytes (EFBIG), a first commit whose directory cannot be synced (EMFILE), "
              "a store root through a directory not yet made and .. (made 0700), a view.json replace the file system refuses "
              + ("(an append-only directory: the rename's error, the old file whole; then the temporary file removed, not reused)" if append_only
                 else "(not run here: an append-only directory needs CAP_LINUX_IMMUTABLE on a file system with the attribute)"),
    )
    return all_of(misuse, values, disk)
