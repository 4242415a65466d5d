"""Issue 30 (hardening from the outside) on the session store: its logs hold the conversations.

- Private: the sessions dir and each session dir are made 0700, each conversation log and the
  writer lock 0600, with no chmod after the write, under umask 0o022 and 0o000.
- Garbage is never a silent loss: a crash cuts one line (then at most the cut markers of the
  writers that terminated it), so a log whose end holds more bad lines than that is refused,
  naming the file and the first bad line, and nothing is written to it. The crash case itself
  (a torn last record, a torn marker after it) still opens and is terminated.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from eukhe.session import CorruptRecord, Store, user


def test_session_dirs_and_logs_are_private_from_the_start(tmp_path: Path, umask: int, monkeypatch: pytest.MonkeyPatch) -> None:
    def forbidden(*args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"chmod after the write: {args}")

    monkeypatch.setattr(os, "chmod", forbidden)
    monkeypatch.setattr(os, "fchmod", forbidden)
    root = tmp_path / "agent" / "sessions"
    store = Store(root)
    with store.create("s1") as session:
        ids = session.conversation().commit([user("one")])
        session.conversation("main.child").commit([user("two")])
    store.fork("s1", ids[0], new_id="s2")
    for directory in [tmp_path / "agent", root, root / "s1", root / "s2"]:
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700, directory
    files = sorted(p for p in root.rglob("*") if p.is_file())
    assert [p.relative_to(root).as_posix() for p in files] == ["s1/main.child.jsonl", "s1/main.jsonl", "s1/writer.lock", "s2/main.jsonl", "s2/writer.lock"]
    assert {p.name: oct(stat.S_IMODE(p.stat().st_mode)) for p in files} == {p.name: oct(0o600) for p in files}


def _session(tmp_path: Path) -> tuple[Store, Path, bytes]:
    store = Store(tmp_path)
    with store.create("s") as session:
        for n in range(3):
            session.conversation().commit([user(f"commit {n}")], {"n": n})
    log = tmp_path / "s" / "main.jsonl"
    return store, log, log.read_bytes()


@pytest.mark.parametrize(
    "tail",
    [b"garbage\n" * 4, b'{"op":"commit","seq":4,"entr\n{"op":"commit","seq":5}\n', b"\x00" * 40 + b"\n" + b"junk"],
    ids=["garbage-lines", "two-cut-records", "zeros-then-junk"],
)
def test_a_log_ending_in_more_than_a_crash_leaves_is_refused_naming_its_line(tmp_path: Path, tail: bytes) -> None:
    store, log, whole = _session(tmp_path)
    log.write_bytes(whole + tail)
    for writer in (False, True):
        with pytest.raises(CorruptRecord) as caught:
            store.open("s", writer=writer)
        assert caught.value.path == log and caught.value.record == whole.count(b"\n") + 1, str(caught.value)
        assert "crash" in str(caught.value)
    assert log.read_bytes() == whole + tail  # nothing written


def test_a_log_replaced_by_garbage_is_refused_not_read_as_empty(tmp_path: Path) -> None:
    store, log, _whole = _session(tmp_path)
    log.write_bytes(b"this is not a log\nnor is this\n")
    with pytest.raises(CorruptRecord) as caught:
        store.open("s", writer=False)
    assert caught.value.record == 1 and f"{log}" in str(caught.value)


@pytest.mark.parametrize(
    "tail",
    [b'{"op":"commit","seq":4,"ent', b'{"op":"commit","seq":4,"ent\n{"op":"to', b'{"op":"commit","seq":4,"ent\n{"op":"torn","lines":[5,'],
    ids=["cut-record", "cut-record-and-cut-marker", "cut-record-and-longer-cut-marker"],
)
def test_what_a_crash_leaves_still_opens_and_is_terminated(tmp_path: Path, tail: bytes) -> None:
    store, log, whole = _session(tmp_path)
    log.write_bytes(whole + tail)
    with store.open("s") as session:
        assert [e.content for e in session.conversation().entries()] == ["commit 0", "commit 1", "commit 2"]
        session.conversation().commit([user("after the crash")])
    with store.open("s", writer=False) as session:
        assert [e.content for e in session.conversation().entries()][-1] == "after the crash"
    assert log.read_bytes().startswith(whole + tail)
