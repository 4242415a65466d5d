"""Issue 30 (hardening from the outside), private data and durability calls, on real files.

Private by default (DESIGN.md "Production code"): every file that holds the user's conversations
(the chat's day files, tree files, view.json, index.bin, images, the subagents' logs, the session
logs) is 0600 in 0700 directories, created so: the tests forbid chmod and fchmod while the files
are made, and run under umask 0o022 and 0o000 (a umask only takes bits away: a file created 0600
is at most 0600 under any umask).

Durability is checked, not taken on trust: an instrumented file layer (``FileLayer``: os.open,
os.write, os.fsync, os.replace, os.mkdir wrapped, the real calls made) records which paths are
written and fsynced, and each write path is checked where it acknowledges: an append returns only
after its line is fsynced; a new day file, image or directory is followed by an fsync of the
directory that holds its entry; view.json and index.bin, which the design says are a check and a
cache (memory.md D1), are the only files renamed into place, without fsync; and a message costs
one fsync per log line it writes, no more.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from eukhe.memory.durable import DurableChat
from eukhe.memory.owner import Memory
from eukhe.memory.records import Kind
from eukhe.memory.store import INDEX_FILE, VIEW_FILE, Store, chat_dir
from eukhe.session import Store as Sessions
from eukhe.session import user
from spec.loopback import LoopbackServer, Stream, Text
from tests.memory_store.test_memory_store import SMALL, Clock
from tests.turn.turn_support import run, turns_for


@pytest.fixture
def no_chmod(monkeypatch: pytest.MonkeyPatch) -> None:
    """A file made public and narrowed afterwards is readable in between: no chmod at all."""

    def forbidden(*args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"chmod after the write: {args}")

    monkeypatch.setattr(os, "chmod", forbidden)
    monkeypatch.setattr(os, "fchmod", forbidden)


def _modes(root: Path) -> tuple[dict[str, int], dict[str, int]]:
    """Every file's and every directory's permission bits under ``root`` (sockets apart)."""
    files: dict[str, int] = {}
    dirs: dict[str, int] = {".": stat.S_IMODE(root.lstat().st_mode)}
    for path in root.rglob("*"):
        status = path.lstat()
        name = str(path.relative_to(root))
        if stat.S_ISDIR(status.st_mode):
            dirs[name] = stat.S_IMODE(status.st_mode)
        elif not stat.S_ISSOCK(status.st_mode):
            files[name] = stat.S_IMODE(status.st_mode)
    return files, dirs


def test_every_file_holding_the_conversations_is_0600_in_0700_directories(tmp_path: Path, umask: int, no_chmod: None) -> None:
    agent = tmp_path / "agent"
    chat = chat_dir(agent)
    with Memory(chat, SMALL) as memory:
        assert memory.is_owner
        memory.append("hello\nthere")  # a day file and a tree file (the message is its own node)
        memory.append("x" * 2_000)  # a message a model must summarize
        memory.save_image(0, "shot.png", b"\x89PNG")
        core = memory.core
        assert core is not None
        core.chat.done(0, "the summary of the long message")  # a node line built by a model
        for n in range(12):
            memory.append(f"message {n} " + "word " * 60)
        # the chat's socket lives in the chat directory, which nobody else may enter
        assert (chat / "lock").is_socket() and stat.S_IMODE(chat.stat().st_mode) == 0o700
        with LoopbackServer() as server:  # a subagent's own log (rule 54)
            server.script(Stream([Text("Done: the chore is done.")]))
            run(turns_for(memory, server, "openai-completions").subagent("Helper", "do the chore"))
    for _ in range(2):  # the first start indexes what the logs hold, a second finds the index
        store = Store(chat)
        DurableChat.open(SMALL, store.messages, store.tree, store, store.now)
        store.close()
    sessions = Sessions(agent / "sessions")
    with sessions.create("20260101T000000-abcd0001") as session:
        ids = session.conversation().commit([user("remember the milk")])
        session.conversation("main.reviewer").commit([user("a child conversation")])
    sessions.fork("20260101T000000-abcd0001", ids[0], new_id="20260101T000000-abcd0002")

    files, dirs = _modes(agent)
    for folder in ["chat/main", "chat/main/tree"]:  # day files, named by the local date
        assert any(Path(f).parent == Path(folder) and Path(f).stem[:4].isdigit() for f in files), folder
    for name in [
        f"chat/main/{VIEW_FILE}",
        f"chat/main/{INDEX_FILE}",
        "chat/main/images/0/shot.png",
        "chat/main/agents/Helper.jsonl",
        "sessions/20260101T000000-abcd0001/main.jsonl",
        "sessions/20260101T000000-abcd0001/main.reviewer.jsonl",
        "sessions/20260101T000000-abcd0002/main.jsonl",
    ]:
        assert name in files, f"{name} was not written"
    wrong_files = {name: oct(mode) for name, mode in files.items() if mode != 0o600}
    wrong_dirs = {name: oct(mode) for name, mode in dirs.items() if mode != 0o700}
    assert not wrong_files, f"files that are not 0600: {wrong_files}"
    assert not wrong_dirs, f"directories that are not 0700: {wrong_dirs}"
    for name in ["chat", "chat/main", "chat/main/tree", "chat/main/images", "chat/main/images/0", "chat/main/agents", "sessions", "sessions/20260101T000000-abcd0001"]:
        assert name in dirs, name


def test_the_files_a_chat_replaces_are_private_even_over_an_old_temporary_file(tmp_path: Path, umask: int, no_chmod: None) -> None:
    """view.json and index.bin are written to a new file renamed over the old: a temporary file a
    crash left behind (with the old 0644) is never reused with its bits."""
    clock = Clock()
    store = Store(tmp_path, now=clock)
    durable = DurableChat.open(SMALL, store.messages, store.tree, store, clock)
    for name in [f".{VIEW_FILE}.{os.getpid()}", f".{INDEX_FILE}.tmp"]:
        fd = os.open(tmp_path / name, os.O_WRONLY | os.O_CREAT, 0o644)
        os.write(fd, b"left by a crash")
        os.close(fd)
    durable.message("a message")
    store.close()
    Store(tmp_path, now=clock).close()
    for name in [VIEW_FILE, INDEX_FILE]:
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600, name


# -- the instrumented file layer ---------------------------------------------------------------------


class FileLayer:
    """The os calls of the file layer, recorded as they are made (the real calls run)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.events: list[tuple[str, str]] = []  # (call, absolute path)
        self.fds: dict[int, str] = {}
        self.dirty: set[str] = set()  # paths written since their last fsync
        self.root = ""  # the directory whose logs ``mark`` measures (set by the fixture)
        self.sizes: dict[int, dict[str, int]] = {}
        real_open, real_write, real_fsync, real_close = os.open, os.write, os.fsync, os.close
        real_replace, real_rename, real_mkdir = os.replace, os.rename, os.mkdir

        def _open(path: Any, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
            name = os.path.abspath(os.fspath(path))
            existed = os.path.lexists(name)
            fd = real_open(path, flags, mode, dir_fd=dir_fd)
            self.fds[fd] = name
            if flags & os.O_CREAT and not existed:
                self.events.append(("create", name))
            return fd

        def _write(fd: int, data: Any) -> int:
            written = real_write(fd, data)
            name = self.fds.get(fd)
            if name is not None:
                self.events.append(("write", name))
                self.dirty.add(name)
            return written

        def _fsync(fd: Any) -> None:
            real_fsync(fd)
            name = self.fds.get(fd if isinstance(fd, int) else fd.fileno(), "?")
            self.events.append(("fsync", name))
            self.dirty.discard(name)

        def _close(fd: int) -> None:
            real_close(fd)
            self.fds.pop(fd, None)

        def _replace(src: Any, dst: Any, **kwargs: Any) -> None:
            real_replace(src, dst, **kwargs)
            self.events.append(("replace", os.path.abspath(os.fspath(dst))))

        def _rename(src: Any, dst: Any, **kwargs: Any) -> None:
            real_rename(src, dst, **kwargs)
            self.events.append(("rename", os.path.abspath(os.fspath(dst))))

        def _mkdir(path: Any, mode: int = 0o777, *, dir_fd: int | None = None) -> None:
            real_mkdir(path, mode, dir_fd=dir_fd)
            self.events.append(("mkdir", os.path.abspath(os.fspath(path))))

        for name, wrapper in [("open", _open), ("write", _write), ("fsync", _fsync), ("close", _close), ("replace", _replace), ("rename", _rename), ("mkdir", _mkdir)]:
            monkeypatch.setattr(os, name, wrapper)

    def mark(self) -> int:
        """A point to check from; the sizes of the logs then (``acknowledged`` also sees lines
        written past this layer, through Python's file objects)."""
        self.sizes[len(self.events)] = {str(p): p.stat().st_size for p in Path(self.root).rglob("*.jsonl")} if self.root else {}
        return len(self.events)

    def since(self, mark: int, call: str, under: Path) -> list[str]:
        root = str(under)
        return [name for what, name in self.events[mark:] if what == call and (name == root or name.startswith(root + os.sep))]

    def acknowledged(self, mark: int, under: Path) -> None:
        """What an acknowledged operation must have made durable: every log line it wrote is
        fsynced; every file or directory it made has the directory holding its entry fsynced
        after it was made."""
        logs = sorted(name for name in self.dirty if name.endswith(".jsonl") and name.startswith(str(under)))
        assert not logs, f"written and not fsynced when the call returned: {logs}"
        events = self.events[mark:]
        before = self.sizes.get(mark, {})
        for path in under.rglob("*.jsonl"):
            if path.stat().st_size != before.get(str(path), 0):
                assert ("fsync", str(path)) in events, f"{path} grew and was not fsynced"
        for k, (what, name) in enumerate(events):
            if what == "mkdir" or (what == "create" and (name.endswith(".jsonl") or "/images/" in name)):
                parent = os.path.dirname(name)
                assert ("fsync", parent) in events[k + 1 :], f"{name} was made and {parent} not fsynced after it"


@pytest.fixture
def layer(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> FileLayer:
    files = FileLayer(monkeypatch)
    files.root = str(tmp_path)
    return files


def test_each_append_is_fsynced_before_it_returns_and_new_entries_have_their_directory_fsynced(tmp_path: Path, layer: FileLayer) -> None:
    chat = chat_dir(tmp_path / "agent")
    clock = Clock("2026-11-29")
    mark = layer.mark()
    store = Store(chat, now=clock)  # the agent dir, chat/, chat/main, images/ are made
    durable = DurableChat.open(SMALL, store.messages, store.tree, store, clock)
    layer.acknowledged(mark, tmp_path)
    made = layer.since(mark, "mkdir", tmp_path)
    assert str(chat) in made and str(chat.parent) in made
    for day in ["2026-11-29", "2026-11-29", "2026-11-30", "2026-11-30"]:  # a new day file each day
        clock.day = day
        for text in ["short", "x" * 700, "y" * 30]:
            mark = layer.mark()
            durable.message(text)
            layer.acknowledged(mark, tmp_path)
        while durable.chat.running:
            mark = layer.mark()
            durable.done(0, "a summary line")
            layer.acknowledged(mark, tmp_path)
            assert layer.since(mark, "fsync", tmp_path), "a built node is logged and fsynced"
    mark = layer.mark()
    store.save_image(1, "shot.png", b"\x89PNG")
    layer.acknowledged(mark, tmp_path)
    assert str(chat / "images" / "1" / "shot.png") in layer.since(mark, "fsync", tmp_path)
    store.close()
    creates = [n for what, n in layer.events if what == "create" and n.endswith(".jsonl")]
    assert sorted(creates) == sorted(str(p) for p in [chat / "2026-11-29.jsonl", chat / "2026-11-30.jsonl", chat / "tree" / "2026-11-29.jsonl", chat / "tree" / "2026-11-30.jsonl"])


def test_a_message_costs_one_fsync_per_line_it_logs_and_the_replaced_files_are_a_check_and_a_cache(tmp_path: Path, layer: FileLayer) -> None:
    clock = Clock()
    store = Store(tmp_path, now=clock)
    durable = DurableChat.open(SMALL, store.messages, store.tree, store, clock)
    durable.message("the first message")  # the day files and tree/ are made here
    for n in range(60):
        mark = layer.mark()
        lines_before = list(store.lines)
        durable.message(f"message {n} " + "word " * (n % 7 * 20))
        while durable.chat.running:
            durable.done(0, f"summary {n}")
        layer.acknowledged(mark, tmp_path)
        logged = sum(store.lines) - sum(lines_before)
        fsyncs = layer.since(mark, "fsync", tmp_path)
        assert len(fsyncs) == logged, f"message {n}: {logged} lines logged, fsynced {fsyncs}"
        assert all(name.endswith(".jsonl") for name in fsyncs)
        replaced = {os.path.basename(name) for name in layer.since(mark, "replace", tmp_path) + layer.since(mark, "rename", tmp_path)}
        assert replaced == {VIEW_FILE}, replaced  # D1: view.json is a check, replaced without fsync
    store.close()
    mark = layer.mark()
    store = Store(tmp_path, now=clock)  # the start indexes the logs: a cache, replaced without fsync
    assert store.index_written
    assert {os.path.basename(n) for n in layer.since(mark, "replace", tmp_path)} == {INDEX_FILE}
    assert not layer.since(mark, "fsync", tmp_path)
    store.close()


def test_the_owner_acknowledges_an_append_only_once_its_lines_are_fsynced(tmp_path: Path, layer: FileLayer) -> None:
    chat = chat_dir(tmp_path / "agent")
    with Memory(chat, SMALL) as owner:
        with Memory(chat, SMALL) as client:  # a client's append goes over the lock socket
            assert not client.is_owner
            for memory in (owner, client, owner):
                mark = layer.mark()
                memory.append("a line from " + ("the owner" if memory.is_owner else "a client"))
                layer.acknowledged(mark, tmp_path)
            mark = layer.mark()
            ids = client.append("z" * 70_000)  # a long text: several messages, one append call
            assert len(ids) > 1
            layer.acknowledged(mark, tmp_path)
    assert layer.since(0, "create", chat)


def test_a_subagents_log_line_is_fsynced_and_its_file_has_its_directory_fsynced(tmp_path: Path, layer: FileLayer) -> None:
    chat = chat_dir(tmp_path / "agent")
    with Memory(chat, SMALL) as memory, LoopbackServer() as server:
        memory.append("the chat's first message")  # the chat's day files and tree/ are made before
        server.script(Stream([Text("Done.")]))
        mark = layer.mark()
        run(turns_for(memory, server, "openai-completions").subagent("Helper", "do the chore"))
        layer.acknowledged(mark, tmp_path)
        log = str(chat / "agents" / "Helper.jsonl")
        assert log in layer.since(mark, "fsync", tmp_path) and str(chat / "agents") in layer.since(mark, "fsync", tmp_path)


def test_a_session_commit_is_fsynced_before_it_returns_and_new_sessions_have_their_directories_fsynced(tmp_path: Path, layer: FileLayer) -> None:
    root = tmp_path / "agent" / "sessions"
    sessions = Sessions(root)
    mark = layer.mark()
    with sessions.create("s1") as session:
        layer.acknowledged(mark, tmp_path)
        assert str(root) in layer.since(mark, "mkdir", tmp_path) and str(root / "s1") in layer.since(mark, "mkdir", tmp_path)
        for n in range(3):
            mark = layer.mark()
            session.conversation().commit([user(f"commit {n}")], {"note": n})
            layer.acknowledged(mark, tmp_path)
        mark = layer.mark()
        session.conversation("main.child").commit([user("a child")])
        layer.acknowledged(mark, tmp_path)
        assert str(root / "s1" / "main.child.jsonl") in layer.since(mark, "create", tmp_path)
    mark = layer.mark()
    forked = sessions.fork("s1", 1, new_id="s2")
    layer.acknowledged(mark, tmp_path)
    assert forked == "s2" and str(root / "s2" / "main.jsonl") in layer.since(mark, "fsync", tmp_path)


def test_kinds_survive_the_instrumented_layer(tmp_path: Path, layer: FileLayer) -> None:
    """The layer itself changes nothing: what is written reads back."""
    clock = Clock()
    store = Store(tmp_path, now=clock)
    durable = DurableChat.open(SMALL, store.messages, store.tree, store, clock)
    durable.message("one", Kind.USER)
    durable.message("two", Kind.EUKHE)
    store.close()
    again = Store(tmp_path, now=clock)
    assert [(m.kind, m.text) for m in again.messages] == [(Kind.USER, "one"), (Kind.EUKHE, "two")]
    again.close()
