"""The session store's answers to the letter: the texts its errors say, the lock's wait and its
holder line, and a planned fork that shares nothing with the tree it was planned from.

Each expected value is written here by hand from the documented behaviour (the docstrings of
eukhe.session.lock, store and tree), never computed by the code under test."""

from __future__ import annotations

import fcntl
import os
import re
import stat
import sys
import time
from pathlib import Path

import pytest

from eukhe.session import MAIN, CorruptRecord, InvalidCommit, Kind, NewEntry, ReadOnly, SessionError, SessionLocked, Store, user
from eukhe.session.entries import Entry, assistant, display, row, tool_call, tool_result
from eukhe.session.lock import HOLDER, LOCK_FILE, WriterLock, holder_text
from eukhe.session.records import Append, Move, Origin, Record, RecordError, Stored, decode
from eukhe.session.store import check_conversation_name
from eukhe.session.tree import Tree


def test_the_holder_line_names_the_process_host_program_and_the_start_time() -> None:
    text = holder_text()
    assert re.fullmatch(
        rf"pid {os.getpid()} on \S+ \(.+\) since \d{{4}}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{{4}}", text
    ), text


def _held(session_dir: Path) -> int:
    """The lock of ``session_dir`` taken through a descriptor of its own (flock locks belong to
    an open file description, so this process's WriterLock contends with it)."""
    fd = os.open(session_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.pwrite(fd, b"the first writer\n", 0)
    return fd


def test_an_explicit_timeout_wins_over_the_holders_wait(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``timeout`` given: ``HOLDER.timeout`` is not read, so a 0 fails at once even when the
    command line would wait (a short wait here: code that reads it would sleep through it)."""
    monkeypatch.setattr(HOLDER, "timeout", 0.2)
    fd = _held(tmp_path)
    try:
        with pytest.raises(SessionLocked) as caught:
            WriterLock.acquire(tmp_path, timeout=0)
    finally:
        os.close(fd)
    assert caught.value.holder == "the first writer; waited 0 s"
    assert str(caught.value) == f"session {tmp_path} is locked for writing by the first writer; waited 0 s"


def test_a_writer_waiting_under_a_second_gets_the_lock_the_first_one_lets_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A timeout under one second still waits: the first writer lets go during the second's
    first pause (no clock involved: the pause itself releases the lock)."""
    fd = _held(tmp_path)
    pauses: list[float] = []
    real_sleep = time.sleep

    def pause(seconds: float) -> None:
        if not pauses:
            os.close(fd)  # the first writer is gone
        pauses.append(seconds)
        real_sleep(0)

    monkeypatch.setattr(time, "sleep", pause)
    lock = WriterLock.acquire(tmp_path, timeout=0.9)
    try:
        assert pauses == [0.005]  # the backoff starts at 5 ms: a lock let go is taken promptly
        assert (tmp_path / LOCK_FILE).read_bytes().startswith(f"pid {os.getpid()} ".encode())
    finally:
        lock.release()


@pytest.mark.parametrize("name", ["", "Main", "main.", "main..a", "other.main", "main/a"])
def test_a_conversation_name_error_says_the_name_and_the_shape_it_must_have(name: str) -> None:
    with pytest.raises(InvalidCommit) as caught:
        check_conversation_name(name)
    assert str(caught.value) == f"conversation name {name!r}: 'main' or 'main.<child>[.<child>...]'"


def test_a_change_through_a_reader_says_the_session_is_open_for_reading(tmp_path: Path) -> None:
    store = Store(tmp_path)
    with store.create("s") as session:
        session.conversation().commit([user("one")])
    with store.open("s", writer=False) as reader:
        with pytest.raises(ReadOnly) as caught:
            reader.conversation().commit([user("two")])
    assert str(caught.value) == f"session {store.path('s')} is open for reading"


def test_a_session_says_whether_it_is_closed(tmp_path: Path) -> None:
    session = Store(tmp_path).create("s")
    assert session.closed is False
    session.close()
    assert session.closed is True


def test_conversations_lists_main_then_its_family_by_name(tmp_path: Path) -> None:
    store = Store(tmp_path)
    with store.create("s") as session:
        session.conversation().commit([user("one")])
        for name in ["main.b", "main.a.z", "main.a"]:
            session.conversation(name).commit([user(name)])
        assert session.conversations() == [MAIN, "main.a", "main.a.z", "main.b"]


def test_a_move_to_an_entry_the_tree_lacks_is_refused_by_name() -> None:
    tree = Tree(MAIN)
    with pytest.raises(RecordError) as caught:
        tree.apply(Move(1, 7))
    assert str(caught.value) == "move to entry 7, which the tree does not hold"


def test_a_planned_fork_shares_no_document_value_with_the_tree() -> None:
    """The fork record carries copies: a caller changing a nested value in it changes nothing
    the tree holds."""
    tree = Tree(MAIN)
    record = tree.plan_commit([user("one")], {"notes": {"items": [1, 2]}})
    assert record is not None
    tree.apply(record)
    fork = tree.plan_fork(1, Origin("s", MAIN, 1))
    planned = fork.entries[0].documents["notes"]
    assert isinstance(planned, dict) and isinstance(planned["items"], list)
    planned["items"].append(3)
    assert tree.changes(1) == {"notes": {"items": [1, 2]}}


def _session_of(tmp_path: Path, *texts: str) -> tuple[Store, Path]:
    """A closed session "s" whose main conversation holds one commit per text, and its log."""
    store = Store(tmp_path)
    with store.create("s") as session:
        for text in texts:
            session.conversation().commit([user(text)])
    return store, store.path("s") / "main.jsonl"


# -- every refusal, by its text ----------------------------------------------------------------

_USER = '{"id":1,"parent":null,"kind":"user","content":"hi"}'


def _commit(entry: str) -> bytes:
    return ('{"op":"commit","seq":1,"entries":[' + entry + "]}").encode()


RECORD_ERRORS = [
    ("not an object", b"[1]", "not a JSON object"),
    ("torn backwards", b'{"op":"torn","lines":[2,1]}', "torn: lines is not [first, last]"),
    ("torn from line 0", b'{"op":"torn","lines":[0,1]}', "torn: lines is not [first, last]"),
    ("torn of one number", b'{"op":"torn","lines":[1]}', "torn: lines is not [first, last]"),
    ("torn without lines", b'{"op":"torn"}', "keys missing ['lines'] or unknown []"),
    ("seq 0", b'{"op":"move","seq":0,"head":1}', "seq is not a whole number from 1"),
    ("seq true", b'{"op":"move","seq":true,"head":1}', "seq is not a whole number from 1"),
    ("seq missing", b'{"op":"move","head":1}', "seq is not a whole number from 1"),
    ("head negative", b'{"op":"move","seq":1,"head":-1}', "move: head is not an entry id"),
    ("move with an extra key", b'{"op":"move","seq":1,"head":1,"x":2}', "keys missing [] or unknown ['x']"),
    ("unknown op", b'{"op":"drop","seq":1}', "unknown op 'drop'"),
    ("no op", b'{"seq":1}', "unknown op None"),
    ("commit of nothing", b'{"op":"commit","seq":1,"entries":[]}', "commit: entries is not a non-empty list"),
    ("fork entries not a list", b'{"op":"fork","seq":1,"from":{"session":"s","conversation":"main","entry":1},"entries":{}}',
     "fork: entries is not a non-empty list"),
    ("fork from a number", ('{"op":"fork","seq":1,"from":1,"entries":[' + _USER + "]}").encode(), "fork: from is not an object"),
    ("fork from a text entry",
     ('{"op":"fork","seq":1,"from":{"session":"s","conversation":"main","entry":"1"},"entries":[' + _USER + "]}").encode(),
     "fork: from is not {session, conversation, entry}"),
    ("fork from without its session",
     ('{"op":"fork","seq":1,"from":{"conversation":"main","entry":1},"entries":[' + _USER + "]}").encode(),
     "keys missing ['session'] or unknown []"),
    ("an entry that is a number", _commit("1"), "an entry is not an object"),
    ("an entry id below 0", _commit('{"id":-1,"parent":null,"kind":"user","content":"hi"}'), "an entry id or parent is not a whole number"),
    ("a parent in text", _commit('{"id":1,"parent":"0","kind":"user","content":"hi"}'), "an entry id or parent is not a whole number"),
    ("an entry without content", _commit('{"id":1,"parent":null,"kind":"user"}'), "keys missing ['content'] or unknown []"),
    ("an entry with an unknown key", _commit('{"id":1,"parent":null,"kind":"user","content":"hi","x":1}'),
     "keys missing [] or unknown ['x']"),
    ("an unknown kind", _commit('{"id":1,"parent":null,"kind":"robot","content":"hi"}'), "entry 1: unknown kind 'robot'"),
    ("a user row with a custom type", _commit('{"id":1,"parent":null,"kind":"user","content":"hi","custom_type":"t"}'),
     "entry 1: custom_type or display_only does not fit kind user"),
    ("a custom row without one", _commit('{"id":1,"parent":null,"kind":"custom","content":"hi"}'),
     "entry 1: custom_type or display_only does not fit kind custom"),
    ("display_only not a bool", _commit('{"id":1,"parent":null,"kind":"custom","custom_type":"t","content":1,"display_only":1}'),
     "entry 1: custom_type or display_only does not fit kind custom"),
    ("a display-only user row", _commit('{"id":1,"parent":null,"kind":"user","content":"hi","display_only":true}'),
     "entry 1: a user entry is display-only"),
    ("documents as a list", _commit('{"id":1,"parent":null,"kind":"user","content":"hi","documents":[]}'),
     "entry 1: documents is not an object"),
    ("content NaN", _commit('{"id":1,"parent":null,"kind":"user","content":NaN}'),
     "entry 1: content holds the float nan, which JSON cannot hold"),
    ("a document of Infinity", _commit('{"id":1,"parent":null,"kind":"user","content":"hi","documents":{"d":[Infinity]}}'),
     "entry 1: documents holds the float inf, which JSON cannot hold"),
]


@pytest.mark.parametrize(("line", "message"), [(line, message) for _, line, message in RECORD_ERRORS],
                         ids=[name for name, _, _ in RECORD_ERRORS])
def test_a_record_that_is_not_well_formed_says_what_is_wrong(line: bytes, message: str) -> None:
    with pytest.raises(RecordError) as caught:
        decode(line)
    assert str(caught.value) == message


def test_a_line_that_is_not_json_says_so_with_the_parsers_words() -> None:
    with pytest.raises(RecordError) as caught:
        decode(b'{"op":')
    assert str(caught.value) == "not JSON: Expecting value: line 1 column 7 (char 6)"


COMMIT_ERRORS = [
    ("a state entry", [NewEntry(Kind.STATE)], {}, "state entries are made by the store, not committed"),
    ("a user row with a custom type", [NewEntry(Kind.USER, "x", "t")], {}, "a user entry has custom_type 't'"),
    ("a custom row without one", [NewEntry(Kind.CUSTOM, 1)], {}, "a custom entry has custom_type None"),
    ("an empty custom type", [NewEntry(Kind.CUSTOM, 1, "")], {}, "custom_type is empty"),
    ("a display-only tool result", [NewEntry(Kind.TOOL_RESULT, "x", display_only=True)], {}, "only a custom row can be display-only"),
    ("content of infinity", [NewEntry(Kind.USER, [1, float("inf")])], {}, "entry content holds the float inf, which JSON cannot hold"),
    ("a NaN before a string", [NewEntry(Kind.USER, [float("nan"), "x", None, True, 3])], {},
     "entry content holds the float nan, which JSON cannot hold"),
    ("content with a number key", [NewEntry(Kind.ASSISTANT, {"a": {1: 2}})], {}, "entry content holds the key 1, not a string"),
    ("content of a tuple", [NewEntry(Kind.USER, (1, 2))], {}, "entry content holds a tuple, not a JSON value"),
    ("an empty document name", [], {"": 1}, "document name '' is not a non-empty string"),
    ("a document of a set", [], {"d": {1}}, "document d holds a set, not a JSON value"),
]


@pytest.mark.parametrize(("new", "documents", "message"), [case[1:] for case in COMMIT_ERRORS],
                         ids=[case[0] for case in COMMIT_ERRORS])
def test_a_refused_commit_says_why_and_writes_nothing(
    tmp_path: Path, new: list[NewEntry], documents: dict[str, object], message: str
) -> None:
    store = Store(tmp_path)
    with store.create("s") as session:
        main = session.conversation()
        main.commit([user("kept")])
        log = store.path("s") / "main.jsonl"
        before = log.read_bytes()
        with pytest.raises(InvalidCommit) as caught:
            main.commit(new, documents)
        assert str(caught.value) == message
        assert log.read_bytes() == before


def _entry(entry_id: int, parent: int | None) -> Stored:
    return Stored(Entry(entry_id, parent, Kind.USER, "hi", None, False))


@pytest.mark.parametrize(
    ("records", "message"),
    [
        ([Move(2, 1)], "seq 2 does not follow 0"),
        ([Append(1, (_entry(1, None),)), Append(2, (_entry(2, 1),), Origin("s", MAIN, 1))], "a fork record after the first record"),
        ([Append(1, (_entry(1, 5),))], "entry 1 has parent 5, expected None"),
        ([Append(1, (_entry(1, None),)), Append(2, (_entry(1, 1),))], "entry id 1 is not new (next id is 2)"),
    ],
    ids=["a seq out of turn", "a fork record second", "a parent not the head", "an id not new"],
)
def test_a_record_that_does_not_fit_the_tree_says_how(records: list[Record], message: str) -> None:
    tree = Tree(MAIN)
    *fitting, last = records
    for record in fitting:
        tree.apply(record)
    with pytest.raises(RecordError) as caught:
        tree.apply(last)
    assert str(caught.value) == message


def test_a_log_with_a_bad_record_before_good_ones_names_its_line_and_is_left_as_found(tmp_path: Path) -> None:
    store, log = _session_of(tmp_path, "one", "two")
    lines = log.read_bytes().splitlines(keepends=True)
    broken = lines[0] + b'{"op":"torn","lines":[1,2]}\n' + lines[1]
    log.write_bytes(broken)
    with pytest.raises(CorruptRecord) as caught:
        store.open("s")
    assert caught.value.record == 2
    assert caught.value.reason == "a torn marker naming lines 1-2, not the lines before it"
    assert log.read_bytes() == broken


@pytest.mark.parametrize("session_id", ["", ".s", "a/b", "x" * 129])
def test_a_session_id_error_says_the_id_and_the_letters_it_may_have(tmp_path: Path, session_id: str) -> None:
    with pytest.raises(InvalidCommit) as caught:
        Store(tmp_path).create(session_id)
    assert str(caught.value) == (
        f"session id {session_id!r}: letters, digits, '.', '_' or '-', starting with a letter or digit"
    )


def test_a_closed_session_says_it_is_closed(tmp_path: Path) -> None:
    session = Store(tmp_path).create("s")
    session.close()
    with pytest.raises(SessionError) as caught:
        session.conversation()
    assert str(caught.value) == f"session {session.dir} is closed"


# -- the entries each builder makes, and what a writer leaves on disk ----------------------------


def test_each_builder_makes_its_kind_of_entry_with_what_it_was_given() -> None:
    content = {"name": "read", "arguments": {"path": "a"}}
    assert tool_call(content) == NewEntry(Kind.TOOL_CALL, content, None, False)
    assert tool_result("ok") == NewEntry(Kind.TOOL_RESULT, "ok", None, False)
    assert assistant(["hi"]) == NewEntry(Kind.ASSISTANT, ["hi"], None, False)
    assert row("eukhe.note", {"n": 1}) == NewEntry(Kind.CUSTOM, {"n": 1}, "eukhe.note", False)
    assert row("eukhe.note", 2, display_only=True) == NewEntry(Kind.CUSTOM, 2, "eukhe.note", True)
    assert display("eukhe.director", "x") == NewEntry(Kind.CUSTOM, "x", "eukhe.director", True)


def test_a_writer_lock_knows_its_file(tmp_path: Path) -> None:
    lock = WriterLock.acquire(tmp_path, timeout=0)
    try:
        assert lock.path == tmp_path / LOCK_FILE
    finally:
        lock.release()


def test_a_torn_last_line_that_has_its_newline_is_marked_right_after_it(tmp_path: Path) -> None:
    store, log = _session_of(tmp_path, "kept")
    with log.open("ab") as handle:
        handle.write(b'{"op":"comm\n')  # cut by a crash after its newline
    whole = log.read_bytes()
    with store.open("s"):
        assert log.read_bytes() == whole + b'{"op":"torn","lines":[2,2]}\n'


def test_a_short_write_is_continued_until_the_record_is_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """os.write may write less than asked (a signal, a full pipe); the appender writes the rest."""
    real_write = os.write

    def short(fd: int, data: bytes | memoryview) -> int:
        return real_write(fd, bytes(data[:7]))

    store = Store(tmp_path)
    with store.create("s") as session:
        monkeypatch.setattr(os, "write", short)
        session.conversation().commit([user("a message longer than seven bytes")])
        monkeypatch.undo()
    with store.open("s", writer=False) as reader:
        assert [e.content for e in reader.conversation().user_view()] == ["a message longer than seven bytes"]


def test_documents_as_of_an_entry_are_copies() -> None:
    tree = Tree(MAIN)
    record = tree.plan_commit([user("one")], {"notes": {"items": [1, 2]}})
    assert record is not None
    tree.apply(record)
    documents = tree.documents_at(1)
    notes = documents["notes"]
    assert isinstance(notes, dict) and isinstance(notes["items"], list)
    notes["items"].append(3)
    assert tree.documents_at(1) == {"notes": {"items": [1, 2]}}


def test_the_holder_line_names_the_program_the_cli_set_else_the_script_else_python(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(HOLDER, "program", "eukhe set")
    assert "(eukhe set) since " in holder_text()
    monkeypatch.setattr(HOLDER, "program", "")
    monkeypatch.setattr(sys, "argv", ["/usr/local/bin/eukhe-tool", "--flag"])
    assert "(eukhe-tool) since " in holder_text()
    monkeypatch.setattr(sys, "argv", [])
    assert f"({sys.executable}) since " in holder_text()


def test_a_timeout_of_zero_fails_at_once_without_a_pause(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With no time left (the clock held still here), the second writer never pauses to try
    again: a pause would free the lock, so a second attempt would wrongly get it."""
    fd = _held(tmp_path)
    pauses: list[float] = []

    def pause(seconds: float) -> None:
        pauses.append(seconds)
        os.close(fd)

    monkeypatch.setattr(time, "monotonic", lambda: 100.0)
    monkeypatch.setattr(time, "sleep", pause)
    try:
        with pytest.raises(SessionLocked) as caught:
            WriterLock.acquire(tmp_path, timeout=0)
    finally:
        if not pauses:
            os.close(fd)
    assert pauses == [] and caught.value.holder == "the first writer; waited 0 s"


def test_ids_lists_only_directories_that_hold_a_session(tmp_path: Path) -> None:
    store = Store(tmp_path)
    for session_id in ["20261201T090000-b", "20261130T090000-a"]:
        store.create(session_id).close()
    (tmp_path / "stray").mkdir()  # a name a session could have, without its main log
    (tmp_path / "notes.txt").write_text("not a session")
    (tmp_path / "bad name").mkdir()
    (tmp_path / "bad name" / "main.jsonl").write_text("")  # a log, under a name no session has
    assert store.ids() == ["20261130T090000-a", "20261201T090000-b"]


def test_a_record_that_does_not_fit_before_good_ones_is_named_with_the_trees_reason(tmp_path: Path) -> None:
    store, log = _session_of(tmp_path, "one", "two")
    first, second = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(first + b'{"op":"move","seq":3,"head":1}\n' + second)
    with pytest.raises(CorruptRecord) as caught:
        store.open("s")
    assert (caught.value.record, caught.value.reason) == (2, "seq 3 does not follow 1")


def test_after_a_failed_write_every_write_names_the_log_and_the_first_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(fd: int, data: bytes | memoryview) -> int:
        raise OSError(28, "No space left on device")

    store = Store(tmp_path)
    with store.create("s") as session:
        main = session.conversation()
        main.commit([user("one")])
        with monkeypatch.context() as patched:
            patched.setattr(os, "write", full)
            with pytest.raises(OSError):
                main.commit([user("two")])
        with pytest.raises(SessionError) as caught:
            main.commit([user("three")])
    log = store.path("s") / "main.jsonl"
    assert str(caught.value) == f"an earlier write to {log} failed ([Errno 28] No space left on device); reopen the session"


def test_a_conversation_log_is_made_private_to_the_owner(tmp_path: Path) -> None:
    """0600 in a 0700 session dir, even under the usual umask 022 (issue 30: the logs hold the
    user's conversations)."""
    old = os.umask(0o022)
    try:
        with Store(tmp_path).create("s") as session:
            session.conversation().commit([user("one")])
            session.conversation("main.child").commit([user("two")])
    finally:
        os.umask(old)
    logs = sorted((tmp_path / "s").glob("*.jsonl"))
    assert [p.name for p in logs] == ["main.child.jsonl", "main.jsonl"]
    assert [stat.S_IMODE(p.stat().st_mode) for p in logs] == [0o600, 0o600]
    assert stat.S_IMODE((tmp_path / "s").stat().st_mode) == 0o700
