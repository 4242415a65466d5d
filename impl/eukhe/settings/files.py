"""Locked reads and writes of the config files (control.md S4, S4b.1).

Every read-modify-write holds an exclusive ``fcntl.flock`` on ``<file>.lock`` beside the file
for its read, its change and its write, so two processes that write at once both land. A
write goes to a temporary file in the same directory, is fsynced, renamed over the file, and
the directory is fsynced: a crash leaves the old file or the new one, never a torn one (the
lock lives on the sidecar because the rename replaces the file's inode).

A file that is missing reads as empty; a file that exists and cannot be read (or parsed) is
an error and is never written.
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

KNOWN_VERSIONS = frozenset({1})
UNREADABLE, NOT_JSON, NOT_OBJECT, UNKNOWN_VERSION = "unreadable", "not JSON", "not an object", "unknown version"


class DocumentError(Exception):
    """A config file that cannot be used: it is reported and never written over."""

    def __init__(self, path: Path, kind: str, detail: str = "") -> None:
        self.path = Path(path)
        self.kind = kind
        self.detail = detail
        super().__init__(f"{path}: {kind}" + (f" ({detail})" if detail else ""))


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold the exclusive OS lock of ``path`` (on ``<path>.lock``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path.with_name(path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def read_text(path: Path) -> str | None:
    """The file's text; None when it does not exist; DocumentError when it cannot be read."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise DocumentError(path, UNREADABLE, error.strerror or str(error)) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise DocumentError(path, UNREADABLE, f"not UTF-8 at byte {error.start}") from None


def write_atomic(path: Path, text: str) -> None:
    """Replace the file with ``text``: temporary file, fsync, rename, fsync of the directory."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def parse_document(path: Path, text: str | None) -> dict[str, Any]:
    """A JSON document: {} when missing; DocumentError when not JSON, not an object, or of a
    version eukhe does not know (absent or 1)."""
    if text is None:
        return {}
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as error:
        raise DocumentError(path, NOT_JSON, str(error)[:200]) from None
    if not isinstance(value, dict):
        raise DocumentError(path, NOT_OBJECT)
    version = value.get("version")
    if "version" in value and (type(version) is not int or version not in KNOWN_VERSIONS):
        raise DocumentError(path, UNKNOWN_VERSION, json.dumps(version)[:50])
    return value


def read_document(path: Path) -> dict[str, Any]:
    return parse_document(path, read_text(path))


def dumps_document(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def update_document(path: Path, change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """S4b.1: under the lock, read the document on disk, apply ``change`` to it, write it.
    A read failure raises DocumentError and writes nothing; keys the change does not touch
    keep their values. Returns the document written."""
    with locked(path):
        document = read_document(path)
        change(document)
        write_atomic(path, dumps_document(document))
        return document


def update_text(path: Path, change: Callable[[str], str]) -> str:
    """Under the lock, read the text file (missing: empty), change it, write it; a file that
    exists and cannot be read raises DocumentError and is not written."""
    with locked(path):
        text = read_text(path)
        new = change(text or "")
        write_atomic(path, new)
        return new
