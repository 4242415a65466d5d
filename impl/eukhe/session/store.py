"""Sessions on disk: ``Store`` (the sessions dir), ``Session`` (one session dir, its lock and
its conversations) and ``Conversation`` (one tree, its log and its documents)."""

from __future__ import annotations

import os
import re
import secrets
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType

from eukhe.session import log
from eukhe.session.entries import Entry, EntryId, Json, NewEntry
from eukhe.session.errors import (
    InvalidCommit,
    ReadOnly,
    SessionError,
    SessionExists,
    SessionNotFound,
    UnknownConversation,
)
from eukhe.session.lock import WriterLock
from eukhe.session.private import DIR_MODE, fsync_dir, make_dirs
from eukhe.session.records import Origin
from eukhe.session.tree import Tree

MAIN = "main"
SUFFIX = ".jsonl"
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_SEGMENT = re.compile(r"[A-Za-z0-9_-]{1,64}")


def check_session_id(session_id: str) -> str:
    if not _ID.fullmatch(session_id):
        raise InvalidCommit(f"session id {session_id!r}: letters, digits, '.', '_' or '-', starting with a letter or digit")
    return session_id


def check_conversation_name(name: str) -> str:
    """``main``, or a child: its parent's name, a dot, and its own (``main.reviewer``)."""
    parts = name.split(".")
    if parts[0] != MAIN or not all(_SEGMENT.fullmatch(p) for p in parts):
        raise InvalidCommit(f"conversation name {name!r}: 'main' or 'main.<child>[.<child>...]'")
    return name


def new_session_id() -> str:
    return time.strftime("%Y%m%dT%H%M%S") + "-" + secrets.token_hex(4)


class Store:
    """The sessions dir (see ``eukhe.paths.session_dir`` for which one)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def path(self, session_id: str) -> Path:
        return self.root / check_session_id(session_id)

    def ids(self) -> list[str]:
        """The sessions in the dir, oldest id first."""
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir() if _ID.fullmatch(p.name) and (p / (MAIN + SUFFIX)).is_file())

    def create(self, session_id: str | None = None) -> Session:
        """A new empty session, opened for writing."""
        session_dir = self.path(new_session_id() if session_id is None else session_id)
        make_dirs(self.root)  # 0700, like every session dir: the logs hold the conversations
        try:
            os.mkdir(session_dir, DIR_MODE)
        except FileExistsError:
            raise SessionExists(session_dir) from None
        fsync_dir(self.root)
        session = Session(self, session_dir, writer=True)
        session.conversation(MAIN)._ensure_file()
        return session

    def open(self, session_id: str, *, writer: bool = True) -> Session:
        session_dir = self.path(session_id)
        if not (session_dir / (MAIN + SUFFIX)).is_file():
            raise SessionNotFound(session_dir)
        return Session(self, session_dir, writer=writer)

    def fork(self, session_id: str, entry_id: EntryId, *, conversation: str = MAIN, new_id: str | None = None) -> str:
        """A new session whose main conversation is the branch of ``conversation`` up to
        ``entry_id``, every document as of each entry; returns its id."""
        with self.open(session_id, writer=False) as source:
            return source.conversation(conversation).fork(entry_id, new_id=new_id)


class Session:
    def __init__(self, store: Store, session_dir: Path, *, writer: bool) -> None:
        self.store = store
        self.dir = session_dir
        self.id = session_dir.name
        self.writer = writer
        self._lock = WriterLock.acquire(session_dir) if writer else None
        self._conversations: dict[str, Conversation] = {}
        self.closed = False
        try:
            self.conversation(MAIN)  # read main now: a corrupt log fails the open, not a later read
        except BaseException:
            self.close()
            raise

    def conversation(self, name: str = MAIN) -> Conversation:
        """The conversation ``name``, read from its log on first use. A writer gets a new empty
        conversation for a name with no log (its file is made by its first commit)."""
        self._check_open()
        if name not in self._conversations:
            path = self.dir / (check_conversation_name(name) + SUFFIX)
            if not self.writer and not path.is_file():
                raise UnknownConversation(self.dir, name)
            self._conversations[name] = Conversation(self, name, path)
        return self._conversations[name]

    def conversations(self) -> list[str]:
        """The names of the conversations of the session by name: main first, as every other
        name begins with ``main.``."""
        found = {p.name[: -len(SUFFIX)] for p in self.dir.glob("*" + SUFFIX)}
        found.update(self._conversations)
        names = [n for n in found if _is_name(n)]
        return sorted(names)

    def fork(self, entry_id: EntryId, *, conversation: str = MAIN, new_id: str | None = None) -> str:
        return self.conversation(conversation).fork(entry_id, new_id=new_id)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        for conversation in self._conversations.values():
            conversation._close()
        if self._lock is not None:
            self._lock.release()

    def _check_open(self) -> None:
        if self.closed:
            raise SessionError(f"session {self.dir} is closed")

    def __enter__(self) -> Session:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


def _is_name(name: str) -> bool:
    try:
        check_conversation_name(name)
    except InvalidCommit:
        return False
    return True


class Conversation:
    """One conversation of a session: a tree of entries, a head, documents at the head."""

    def __init__(self, session: Session, name: str, path: Path) -> None:
        self.session = session
        self.name = name
        self.path = path
        self._tree, tail = log.load(path, name)
        self._appender = log.Appender(path, tail) if session.writer and path.exists() else None
        self._tail = tail

    @property
    def parent(self) -> str | None:
        """The conversation this one is a child of (None for main)."""
        return self.name.rsplit(".", 1)[0] if "." in self.name else None

    @property
    def head(self) -> EntryId | None:
        return self._tree.head

    @property
    def seq(self) -> int:
        """How many state records (commits, the fork, rewinds) the log holds."""
        return self._tree.seq

    @property
    def origin(self) -> Origin | None:
        """Where this conversation was forked from, if it was."""
        return self._tree.origin

    # reading
    def entry(self, entry_id: EntryId) -> Entry:
        return self._tree.entry(entry_id)

    def entries(self) -> list[Entry]:
        return self._tree.entries()

    def branch(self) -> list[Entry]:
        return self._tree.branch()

    def model_view(self) -> list[Entry]:
        """The entries the model sees: the head's branch without display-only rows."""
        return self._tree.model_view()

    def user_view(self) -> list[Entry]:
        """The rows the user sees: the head's branch, display rows included."""
        return self._tree.user_view()

    def document(self, name: str, default: Json = None) -> Json:
        """The value of document ``name`` as of the head (a copy), or ``default``."""
        return self._tree.document(name, default)

    def documents(self) -> dict[str, Json]:
        return self._tree.documents()

    def documents_at(self, entry_id: EntryId) -> dict[str, Json]:
        return self._tree.documents_at(entry_id)

    def changes(self, entry_id: EntryId) -> dict[str, Json]:
        """The document values that ``entry_id`` itself sets."""
        return self._tree.changes(entry_id)

    # writing
    def commit(self, entries: Sequence[NewEntry] = (), documents: Mapping[str, object] | None = None) -> list[EntryId]:
        """Append ``entries`` after the head and set ``documents``, in one fsynced record;
        returns the new entry ids (the head is the last). A commit of documents alone gets
        one ``state`` entry; an empty commit writes nothing and returns []."""
        self._writable()
        record = self._tree.plan_commit(entries, documents or {})
        if record is None:
            return []
        self._ensure_file().append(record)
        self._tree.apply(record)
        return [stored.entry.id for stored in record.entries]

    def rewind(self, entry_id: EntryId) -> None:
        """Move the head to ``entry_id`` (a branch move): documents read as of it, and the next
        commit starts a new branch there. Nothing is deleted."""
        self._writable()
        record = self._tree.plan_move(entry_id)
        self._ensure_file().append(record)
        self._tree.apply(record)

    def fork(self, entry_id: EntryId, *, new_id: str | None = None) -> str:
        """A new session (id returned) whose main conversation is this branch up to
        ``entry_id``, with every document as of each entry; this session is not changed."""
        self.session._check_open()
        record = self._tree.plan_fork(entry_id, Origin(self.session.id, self.name, entry_id))
        with self.session.store.create(new_id) as forked:
            main = forked.conversation(MAIN)
            main._ensure_file().append(record)
            main._tree.apply(record)
            return forked.id

    def __iter__(self) -> Iterator[Entry]:
        return iter(self._tree.branch())

    # internals
    def _writable(self) -> None:
        self.session._check_open()
        if not self.session.writer:
            raise ReadOnly(f"session {self.session.dir} is open for reading")

    def _ensure_file(self) -> log.Appender:
        if self._appender is None:
            self._appender = log.Appender(self.path, self._tail)
        return self._appender

    def _close(self) -> None:
        if self._appender is not None:
            self._appender.close()
