"""Regression tests of the session store: torn tails, display rows, forks and rewinds of
documents, refused commits, readers that never write."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eukhe.session import (
    MAIN,
    InvalidCommit,
    Kind,
    NewEntry,
    ReadOnly,
    SessionExists,
    SessionNotFound,
    Store,
    UnknownConversation,
    UnknownEntry,
    assistant,
    display,
    row,
    user,
)


def test_a_torn_last_record_is_skipped_and_terminated_so_the_next_append_is_whole(tmp_path: Path) -> None:
    store = Store(tmp_path)
    with store.create("s") as session:
        session.conversation().commit([user("kept")], {"eukhe.directors": [1]})
    log = store.path("s") / "main.jsonl"
    torn = b'{"op":"commit","seq":2,"entries":[{"id":2,"par'
    with log.open("ab") as handle:
        handle.write(torn)
    whole = log.read_bytes()

    with store.open("s", writer=False) as reader:  # a reader skips it and writes nothing
        assert [e.content for e in reader.conversation().user_view()] == ["kept"]
    assert log.read_bytes() == whole

    with store.open("s") as session:  # a writer ends the torn line and marks it, appending only
        assert log.read_bytes() == whole + b'\n{"op":"torn","lines":[2,2]}\n'
        session.conversation().commit([user("next")], {"eukhe.directors": [2]})
    lines = log.read_bytes().splitlines()
    assert lines[1] == torn and json.loads(lines[3])["entries"][0]["content"] == "next"
    with store.open("s", writer=False) as reader:
        main = reader.conversation()
        assert [e.content for e in main.user_view()] == ["kept", "next"]
        assert main.document("eukhe.directors") == [2] and main.seq == 2


def test_a_torn_marker_that_is_itself_torn_is_covered_by_the_next_one(tmp_path: Path) -> None:
    store = Store(tmp_path)
    with store.create("s") as session:
        session.conversation().commit([user("kept")])
    log = store.path("s") / "main.jsonl"
    with log.open("ab") as handle:
        handle.write(b'{"op":"comm\n{"op":"tor')  # a torn record, then a torn marker
    with store.open("s") as session:
        session.conversation().commit([user("next")])
    assert log.read_bytes().splitlines()[3] == b'{"op":"torn","lines":[2,3]}'
    with store.open("s", writer=False) as reader:
        assert [e.content for e in reader.conversation().user_view()] == ["kept", "next"]


def test_settings_error_and_director_rows_reach_the_user_never_the_model(tmp_path: Path) -> None:
    with Store(tmp_path).create("s") as session:
        main = session.conversation()
        main.commit([user("go"), assistant("done")])
        main.commit([display("eukhe.settings_error", "settings.json: retry.enabled: BadValue")])
        main.commit([row("eukhe.goal_context", "goal: ship it"), display("eukhe.director", "goal paused")])
        main.commit(documents={"eukhe.directors": []})
        assert [e.content for e in main.model_view()] == ["go", "done", "goal: ship it"]
        assert [e.content for e in main.user_view()] == ["go", "done", "settings.json: retry.enabled: BadValue", "goal: ship it", "goal paused"]
        assert main.entry(main.head or 0).kind is Kind.STATE


def test_a_rewind_removes_directors_added_after_its_entry_and_brings_back_removed_ones(tmp_path: Path) -> None:
    store = Store(tmp_path)
    with store.create("s") as session:
        main = session.conversation()
        (first,) = main.commit([user("remind me")], {"eukhe.directors": [{"kind": "reminder"}]})
        main.commit([user("force")], {"eukhe.directors": [{"kind": "reminder"}, {"kind": "forced"}]})
        main.commit([assistant("ok")], {"eukhe.directors": []})
        main.rewind(first)
        assert main.document("eukhe.directors") == [{"kind": "reminder"}]
        (branch,) = main.commit([user("another way")])
        assert main.entry(branch).parent == first and len(main.entries()) == 4
    with store.open("s", writer=False) as reader:  # a resume reads the same state, head included
        assert reader.conversation().head == branch
        assert reader.conversation().document("eukhe.directors") == [{"kind": "reminder"}]


def test_a_fork_starts_from_the_document_state_at_its_fork_point(tmp_path: Path) -> None:
    store = Store(tmp_path)
    with store.create("s") as session:
        main = session.conversation()
        (a,) = main.commit([user("one")], {"eukhe.cvar.agent": {"sets": ["retry.enabled false"]}})
        (b,) = main.commit([user("two")], {"eukhe.directors": ["goal"]})
        main.commit([user("three")], {"eukhe.cvar.agent": {"sets": []}})
        forked = main.fork(b)
        assert main.document("eukhe.cvar.agent") == {"sets": []}  # the source is unchanged
    with store.open(forked, writer=False) as copy:
        fork_main = copy.conversation()
        assert fork_main.head == b and [e.content for e in fork_main.user_view()] == ["one", "two"]
        assert fork_main.documents() == {"eukhe.cvar.agent": {"sets": ["retry.enabled false"]}, "eukhe.directors": ["goal"]}
        assert fork_main.documents_at(a) == {"eukhe.cvar.agent": {"sets": ["retry.enabled false"]}}
        assert fork_main.origin is not None and (fork_main.origin.session, fork_main.origin.entry) == ("s", b)


def test_subagent_conversations_are_a_family_under_main(tmp_path: Path) -> None:
    store = Store(tmp_path)
    with store.create("s") as session:
        session.conversation("main.reviewer").commit([user("review")], {"eukhe.cvar.agent": {"sets": ["x"]}})
        session.conversation("main.reviewer.grep").commit([user("grep")])
        assert session.conversation("main.reviewer.grep").parent == "main.reviewer"
        with pytest.raises(InvalidCommit):
            session.conversation("reviewer")
    with store.open("s", writer=False) as reader:
        assert reader.conversations() == [MAIN, "main.reviewer", "main.reviewer.grep"]
        assert reader.conversation("main.reviewer").document("eukhe.cvar.agent") == {"sets": ["x"]}
        assert reader.conversation().entries() == []
        with pytest.raises(UnknownConversation):
            reader.conversation("main.other")


def test_bad_commits_are_refused_and_write_nothing(tmp_path: Path) -> None:
    store = Store(tmp_path)
    with store.create("s") as session:
        main = session.conversation()
        before = main.path.read_bytes()
        for entries, documents in (
            ([NewEntry(Kind.STATE)], {}),
            ([NewEntry(Kind.USER, "x", "eukhe.director")], {}),
            ([NewEntry(Kind.USER, "x", None, True)], {}),
            ([user("x")], {"doc": float("nan")}),
            ([user("x")], {"doc": {1: "not a string key"}}),
            ([NewEntry(Kind.USER, object())], {}),
            ([user("x")], {"": 1}),
        ):
            with pytest.raises(InvalidCommit):
                main.commit(entries, documents)
        assert main.commit([], {}) == []
        with pytest.raises(UnknownEntry):
            main.rewind(7)
        assert main.path.read_bytes() == before and main.entries() == []
    with store.open("s", writer=False) as reader, pytest.raises(ReadOnly):
        reader.conversation().commit([user("x")])
    with pytest.raises(SessionExists):
        store.create("s")
    with pytest.raises(SessionNotFound):
        store.open("nope")


def test_documents_read_are_copies(tmp_path: Path) -> None:
    with Store(tmp_path).create("s") as session:
        main = session.conversation()
        value = {"layers": [1]}
        main.commit([user("x")], {"eukhe.directors": value})
        value["layers"].append(2)
        read = main.document("eukhe.directors")
        assert read == {"layers": [1]}
        assert isinstance(read, dict)
        read["layers"] = []
        assert main.document("eukhe.directors") == {"layers": [1]}


def test_a_fork_of_an_unknown_entry_is_an_unknown_entry(tmp_path: Path) -> None:
    """Found by the law session_refuses_bad_input: the fork raised a bare KeyError."""
    with Store(tmp_path).create("s") as session:
        main = session.conversation("main")
        main.commit([user("hi")])
        with pytest.raises(UnknownEntry):
            main.fork(99)
    assert Store(tmp_path).ids() == ["s"]


def test_an_empty_session_id_is_refused(tmp_path: Path) -> None:
    """Found by the law session_refuses_bad_input: create('') made a session under a new id."""
    with pytest.raises(InvalidCommit):
        Store(tmp_path).create("")
    assert Store(tmp_path).ids() == []


@pytest.mark.parametrize(
    "line, reason",
    [
        (b'{"op":"fork","seq":1,"from":[],"entries":[]}', "fork: from is not an object"),
        (b'{"op":"fork","seq":1,"from":{"session":"S","conversation":"main","entry":"9"},"entries":[]}', "fork: from is not {session, conversation, entry}"),
        (b'{"op":"fork","seq":1,"from":{"session":7,"conversation":"main","entry":9},"entries":[]}', "fork: from is not {session, conversation, entry}"),
        (b'{"op":"torn","lines":[2,1]}', "torn: lines is not [first, last]"),
        (b'{"op":"move","seq":0,"head":1}', "seq is not a whole number from 1"),
        (b'{"op":"move","seq":1,"head":"x"}', "move: head is not an entry id"),
        (b'{"op":"mend","seq":1}', "unknown op 'mend'"),
        (b'{"op":"commit","seq":1,"entries":[]}', "commit: entries is not a non-empty list"),
        (b"[1]", "not a JSON object"),
        (b'{"op":"commit","seq":1,"entries":[{"id":0,"parent":null,"kind":"user","content":NaN}]}', "entry 0: content holds the float nan, which JSON cannot hold"),
    ],
    ids=["from-not-object", "from-entry-not-number", "from-session-not-string", "torn-lines", "seq-zero", "move-head", "unknown-op", "no-entries", "not-object", "content-nan"],
)
def test_a_malformed_record_says_what_is_wrong(line: bytes, reason: str) -> None:
    # A record that does not parse is named with its reason (CorruptRecord's reason): the reason
    # says which part of the record is wrong.
    from eukhe.session.records import RecordError, decode

    with pytest.raises(RecordError) as error:
        decode(line)
    assert str(error.value) == reason
