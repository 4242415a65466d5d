"""eukhe.session.private and the lock's holder record, each rule on its own (the session area's
judges; the chat memory's store is the other caller of ``create_new`` and ``replace``).

- ``create_new``: a new file 0600 holding the data, the file and then its directory fsynced; a
  file of that name is never overwritten (FileExistsError, its bytes kept).
- ``replace``: a file of the temporary's name that a crash left is removed, never reused with its
  bits (the new file is 0600 whatever mode the old one had); the temporary is renamed over the
  path with no fsync at all; a rename that fails leaves no temporary behind.
- The holder record: a host name or program name with bytes that are not UTF-8 (surrogate
  escapes) is written with those bytes escaped, never an encoding error, in the record's width.
"""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import pytest

from eukhe.session import lock
from eukhe.session.private import create_new, replace


def _fsynced(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Each path os.fsync is called on, in order (read from the descriptor as it is synced)."""
    synced: list[Path] = []
    real = os.fsync

    def recording(fd: int) -> None:
        synced.append(Path(os.readlink(f"/proc/self/fd/{fd}")))
        real(fd)

    monkeypatch.setattr(os, "fsync", recording)
    return synced


def test_create_new_writes_a_private_file_and_syncs_it_then_its_directory(tmp_path: Path, umask: int, monkeypatch: pytest.MonkeyPatch) -> None:
    synced = _fsynced(monkeypatch)
    path = tmp_path / "line.json"
    create_new(path, b'{"a": 1}\n')
    assert path.read_bytes() == b'{"a": 1}\n'
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert synced == [path, tmp_path]


def test_create_new_never_overwrites(tmp_path: Path) -> None:
    path = tmp_path / "line.json"
    path.write_bytes(b"kept")
    with pytest.raises(FileExistsError):
        create_new(path, b"new")
    assert path.read_bytes() == b"kept"


def test_replace_removes_what_a_crash_left_under_the_temporary_name(tmp_path: Path, umask: int, monkeypatch: pytest.MonkeyPatch) -> None:
    synced = _fsynced(monkeypatch)
    path, temporary = tmp_path / "view.json", tmp_path / "view.json.tmp"
    path.write_bytes(b"old")
    temporary.write_bytes(b"left by a crash, longer than what replaces it")
    os.chmod(temporary, 0o666)
    replace(path, b"new", temporary)
    assert path.read_bytes() == b"new"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert not temporary.exists()
    assert synced == []  # a check or a cache: no fsync


def test_replace_of_a_new_file(tmp_path: Path, umask: int) -> None:
    path, temporary = tmp_path / "index.bin", tmp_path / "index.bin.tmp"
    replace(path, b"\x00\x01", temporary)
    assert path.read_bytes() == b"\x00\x01"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index.bin"]


def test_a_replace_whose_rename_fails_leaves_no_temporary(tmp_path: Path) -> None:
    path, temporary = tmp_path / "view.json", tmp_path / "view.json.tmp"
    path.mkdir()
    (path / "inside").write_bytes(b"x")
    with pytest.raises(OSError):
        replace(path, b"new", temporary)
    assert not temporary.exists()
    assert (path / "inside").read_bytes() == b"x"


def test_the_holder_record_escapes_bytes_that_are_not_utf8(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket, "gethostname", lambda: "h\udcffst")
    monkeypatch.setattr(lock.HOLDER, "program", "eukhe set \udce9")
    record = lock.holder_record()
    assert len(record) == lock.RECORD_WIDTH and record.endswith(b"\n")
    text = record.decode("utf-8")
    assert "on h\\udcffst (eukhe set \\udce9) since " in text
