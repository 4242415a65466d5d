"""Private files, made durable (DESIGN.md "Production code": private by default; memory.md rule 6).

Every file that holds the user's conversations (session logs, the chat memory's day files, tree
files, view.json, index.bin, images, the subagents' logs) is created 0600 in directories created
0700: the mode is given to ``os.open`` and ``os.mkdir`` themselves, never set by a chmod after
the write (a umask only takes bits away, so what is made is at most that). A directory that
already exists keeps its bits.

Durability: a directory made here, and a file created by ``open_append`` or ``create_new``, has
the directory that holds its entry fsynced before the call returns, so an acknowledged line is
never lost with its file's name. ``replace`` writes a new file and renames it over the old one
with no fsync at all: it is for the files that are a check or a cache (view.json and index.bin,
memory.md D1), whose loss in a crash costs nothing; no log is ever renamed.

Used by ``eukhe.session`` and ``eukhe.memory`` (the memory imports sessions already).
"""

from __future__ import annotations

import os
from pathlib import Path

FILE_MODE = 0o600
DIR_MODE = 0o700


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def make_dirs(path: Path) -> bool:
    """``path`` and any missing parent made 0700, each new entry's directory fsynced; whether
    ``path`` was made. An existing directory is left as it is; a file in the way is an OSError."""
    if path.is_dir():
        return False
    missing: list[Path] = []
    at = path
    while not at.is_dir():
        missing.append(at)
        if at.parent == at:
            break
        at = at.parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, DIR_MODE)
        except FileExistsError:
            if not directory.is_dir():
                raise
            continue
        fsync_dir(directory.parent)
    return True


def open_append(path: Path) -> int:
    """A descriptor appending to ``path``; a new file is made 0600 and its directory fsynced."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        return os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        fsync_dir(path.parent)
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_all(fd: int, data: bytes) -> None:
    """The whole of ``data`` (one write, repeated only if the kernel took part of it)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def create_new(path: Path, data: bytes) -> None:
    """A new file (FileExistsError when it exists) holding ``data``: 0600, fsynced, its directory
    fsynced."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    try:
        write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    fsync_dir(path.parent)


def replace(path: Path, data: bytes, temporary: Path) -> None:
    """Replace ``path`` whole, for a file that is a check or a cache (view.json, index.bin: memory.md
    D1): ``data`` in a new file ``temporary`` (0600; a file of that name a crash left is removed
    first, never reused with its bits), renamed over ``path``, with no fsync (a crash leaves the
    old content or the new one, or none: the readers take any)."""
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:  # left by a crash: removed, never reused with its bits
        os.unlink(temporary)
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    try:
        try:
            write_all(fd, data)
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
