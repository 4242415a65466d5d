"""Locked reads and writes of the config files (control.md S4, S4b.1).

Every read-modify-write holds an exclusive ``fcntl.flock`` on ``<file>.lock`` beside the file
for its read, its change and its write, so two processes that write at once both land. A
write (``write_atomic``, the one writer of every config document: settings.json,
mcp-connections.json, auth.json, the cfg files) goes to a temporary file in the same
directory, is fsynced, renamed over the file, and the directory is fsynced: a crash leaves the
old file or the new one, never a torn one (the lock lives on the sidecar because the rename
replaces the file's inode). The replace keeps what the user set on the file:

- its mode (a 0664 config.cfg stays 0664) and, where the process may, its owner and group; a
  new file is 0600 (settings.json can hold an MCP server's environment, tokens included);
  auth.json is always 0600 (``private``), set on the temporary file before the rename, so no
  credential is ever readable by others, not even for a moment;
- a symlink: a file that is a symlink (settings.json linked from a dotfiles repository) is
  followed to its final target, the target is replaced (its temporary file in the target's
  directory, so the rename stays on one file system) and locked, and the symlink stays.

A file that is missing reads as empty; a file that exists and cannot be read (or parsed) is
an error and is never written. A document parses as ``eukhe.strict_json`` reads JSON: nested at
most 100 brackets deep, no NaN or Infinity; a document is written without them either. A UTF-8 byte order mark at the start of a file is not text:
the reader drops it (editors on Windows write one), and a rewrite writes the file without it
(a BOM carries nothing in UTF-8, RFC 8259 forbids it in JSON, and strict readers such as
``json.loads`` or an older eukhe would fail on the rewritten file if it stayed).
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from eukhe import strict_json
from eukhe.session.private import fsync_dir

KNOWN_VERSIONS = frozenset({1})
UNREADABLE, NOT_JSON, NOT_OBJECT, UNKNOWN_VERSION = "unreadable", "not JSON", "not an object", "unknown version"
NOT_PARSED = "does not parse"  # a cfg file with a line the command language cannot read
BOM = "\ufeff"
NEW_FILE_MODE = 0o600  # a file a writer creates; auth.json is always this


class DocumentError(Exception):
    """A config file that cannot be used: it is reported and never written over."""

    def __init__(self, path: Path, kind: str, detail: str = "") -> None:
        self.path = Path(path)
        self.kind = kind
        self.detail = detail
        super().__init__(f"{path}: {kind}" + (f" ({detail})" if detail else ""))


def target(path: Path) -> Path:
    """The file a write of ``path`` replaces: ``path`` itself, or the final target of the
    symlink it is (relative links resolved against the link's directory; a dangling link's
    target is created). A symlink loop is an OSError (ELOOP) naming ``path``."""
    path = Path(path)
    if not path.is_symlink():
        return path
    found = Path(os.path.realpath(path))
    if found.is_symlink():  # realpath stops at a loop and returns a link
        raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), str(path))
    return found


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold the exclusive OS lock of ``path`` (on ``<target>.lock`` beside the file a write
    replaces, so two links to one file share one lock)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path = target(path)
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
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise DocumentError(path, UNREADABLE, f"not UTF-8 at byte {error.start}") from None
    return text[1:] if text.startswith(BOM) else text


def write_atomic(path: Path, text: str, *, private: bool = False) -> None:
    """Replace the file with ``text`` (the one writer of the config files): temporary file in
    the target's directory, the old file's mode and owner on it (``private``: mode 0600), fsync,
    rename over the target (a symlink is followed, and stays), fsync of the directory."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path = target(path)
    try:
        old: os.stat_result | None = os.stat(path)
    except FileNotFoundError:
        old = None
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        if old is not None and not private:
            _keep_owner(fd, old)
        os.fchmod(fd, NEW_FILE_MODE if private or old is None else stat.S_IMODE(old.st_mode))
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def _keep_owner(fd: int, old: os.stat_result) -> None:
    """Give the temporary file the old file's owner and group where this process may (root, or
    a group the user is in): a group-writable 0664 file stays writable by its group."""
    now = os.fstat(fd)
    if (now.st_uid, now.st_gid) == (old.st_uid, old.st_gid):
        return
    for uid, gid in ((old.st_uid, old.st_gid), (-1, old.st_gid)):
        try:
            os.fchown(fd, uid, gid)
            return
        except PermissionError:
            continue


def parse_document(path: Path, text: str | None) -> dict[str, Any]:
    """A JSON document: {} when missing; DocumentError when not JSON, not an object, or of a
    version eukhe does not know (absent or 1)."""
    if text is None:
        return {}
    try:
        value = strict_json.loads(text)
    except ValueError as error:  # not JSON, nested deeper than strict_json.MAX_DEPTH, NaN or Infinity
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
    """The text of a document: JSON, never NaN or Infinity (ValueError)."""
    return strict_json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def update_document(path: Path, change: Callable[[dict[str, Any]], None], *, private: bool = False) -> dict[str, Any]:
    """S4b.1: under the lock, read the document on disk, apply ``change`` to it, write it
    (``private``: mode 0600). A read failure raises DocumentError and writes nothing; keys the
    change does not touch keep their values. Returns the document written."""
    with locked(path):
        document = read_document(path)
        change(document)
        write_atomic(path, dumps_document(document), private=private)
        return document


def update_text(path: Path, change: Callable[[str], str]) -> str:
    """Under the lock, read the text file (missing: empty), change it, write it; a file that
    exists and cannot be read raises DocumentError and is not written."""
    with locked(path):
        text = read_text(path)
        new = change(text or "")
        write_atomic(path, new)
        return new
