"""The typed errors of the session store. Each names what was wrong: the file and record,
the session and its lock holder, the entry or the conversation."""

from __future__ import annotations

from pathlib import Path


class SessionError(Exception):
    """Base of every error of the session store."""


class CorruptRecord(SessionError):
    """A record that is not the last one of its log does not parse or does not fit the tree.

    Nothing is written when this is raised: the log stays as it was found."""

    def __init__(self, path: Path, record: int, reason: str) -> None:
        self.path = path
        self.record = record  # 1-based line number of the record in the log
        self.reason = reason
        super().__init__(f"corrupt record: {path} record {record} (line {record}): {reason}")


class SessionLocked(SessionError):
    """A second writer: another open handle already writes this session."""

    def __init__(self, session_dir: Path, holder: str) -> None:
        self.session_dir = session_dir
        self.holder = holder
        super().__init__(f"session {session_dir} is locked for writing by {holder}")


class SessionNotFound(SessionError):
    def __init__(self, session_dir: Path) -> None:
        self.session_dir = session_dir
        super().__init__(f"no session at {session_dir}")


class SessionExists(SessionError):
    def __init__(self, session_dir: Path) -> None:
        self.session_dir = session_dir
        super().__init__(f"a session already exists at {session_dir}")


class UnknownConversation(SessionError):
    def __init__(self, session_dir: Path, name: str) -> None:
        self.name = name
        super().__init__(f"session {session_dir} has no conversation {name!r}")


class UnknownEntry(SessionError):
    def __init__(self, conversation: str, entry_id: int) -> None:
        self.conversation = conversation
        self.entry_id = entry_id
        super().__init__(f"conversation {conversation!r} has no entry {entry_id}")


class InvalidCommit(SessionError):
    """A commit (or a name) the store refuses before writing anything."""


class ReadOnly(SessionError):
    """A change through a session opened for reading."""
