"""`eukhe session list / show / fork / rewind` on a real session dir made by the test."""

from __future__ import annotations

from pathlib import Path

import pytest

from eukhe import cli
from eukhe.session import Store, assistant, display, row, user


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = cli.main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture
def sessions(tmp_path: Path) -> Path:
    root = tmp_path / "sessions"
    with Store(root).create("s1") as session:
        main = session.conversation()
        main.commit([user("hello"), assistant("hi there")], {"eukhe.cvar.agent": {"sets": ["retry.enabled false"]}})
        main.commit([display("eukhe.settings_error", "config.cfg line 2: Undeclared foo")])
        main.commit([row("eukhe.goal_context", "goal: tests")], {"eukhe.directors": [{"kind": "goal"}]})
        session.conversation("main.worker").commit([user("sub task")])
    return root


def test_list_shows_each_session(sessions: Path, capsys: pytest.CaptureFixture[str]) -> None:
    Store(sessions).create("s2").close()
    status, out, _ = _run(capsys, "session", "--session-dir", str(sessions), "list")
    assert status == 0
    assert out.splitlines() == [
        f"sessions in {sessions} (from --session-dir)",
        "s1  entries 4  head 4  conversations main, main.worker",
        "s2  entries 0  head None  conversations main",
    ]


def test_show_gives_entries_documents_at_head_and_marks_display_rows(sessions: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _run(capsys, "session", "show", "s1", "--session-dir", str(sessions))
    assert status == 0
    lines = out.splitlines()
    assert lines[0] == "session s1  conversation main  head 4"
    assert lines[1] == "conversations: main, main.worker"
    assert lines[3] == '*    1 (parent    -)  user  "hello"'
    assert lines[4] == '*    2 (parent    1)  assistant  "hi there"  sets eukhe.cvar.agent'
    assert lines[5] == '*    3 (parent    2)  custom eukhe.settings_error [display-only]  "config.cfg line 2: Undeclared foo"'
    assert lines[6] == '>    4 (parent    3)  custom eukhe.goal_context  "goal: tests"  sets eukhe.directors'
    assert lines[7:] == [
        "documents at head:",
        '  eukhe.cvar.agent = {"sets": ["retry.enabled false"]}',
        '  eukhe.directors = [{"kind": "goal"}]',
    ]
    status, out, _ = _run(capsys, "session", "--session-dir", str(sessions), "show", "s1", "--conversation", "main.worker")
    assert status == 0 and '>    1 (parent    -)  user  "sub task"' in out.splitlines()


def test_rewind_moves_the_head_and_the_documents(sessions: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _run(capsys, "session", "--session-dir", str(sessions), "rewind", "s1", "2")
    assert (status, out) == (0, "s1 main: head is now entry 2\n")
    with Store(sessions).open("s1", writer=False) as session:
        main = session.conversation()
        assert main.head == 2 and main.documents() == {"eukhe.cvar.agent": {"sets": ["retry.enabled false"]}}
        assert len(main.entries()) == 4  # nothing deleted
    status, out, _ = _run(capsys, "session", "--session-dir", str(sessions), "show", "s1")
    assert "documents at head:" in out and "eukhe.directors" not in out.split("documents at head:")[1]
    assert "   4 (parent    3)" in out and ">    2 (parent    1)" in out


def test_fork_makes_a_new_session_from_an_entry(sessions: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _run(capsys, "session", "--session-dir", str(sessions), "fork", "s1", "3")
    assert status == 0
    forked = out.strip()
    status, out, _ = _run(capsys, "session", "--session-dir", str(sessions), "show", forked)
    assert status == 0
    assert "forked from session s1 conversation main entry 3" in out
    assert ">    3 (parent    2)  custom eukhe.settings_error [display-only]" in out
    assert out.endswith('documents at head:\n  eukhe.cvar.agent = {"sets": ["retry.enabled false"]}\n')


def test_bad_requests_fail_with_one_line(sessions: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = _run(capsys, "session", "--session-dir", str(sessions), "rewind", "s1", "99")
    assert (status, err) == (2, "eukhe session rewind: conversation 'main' has no entry 99\n")
    status, _, err = _run(capsys, "session", "--session-dir", str(sessions), "show", "nope")
    assert status == 2 and f"no session at {sessions / 'nope'}" in err
    status, _, err = _run(capsys, "session", "--session-dir", str(sessions), "show", "s1", "--conversation", "main.none")
    assert status == 2 and "has no conversation 'main.none'" in err
    status, _, err = _run(capsys, "session", "--session-dir", str(sessions), "fork", "s1", "two")
    assert status == 2 and "an entry id is a whole number" in err


def test_a_corrupt_record_in_the_middle_is_named_and_not_modified(sessions: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = sessions / "s1" / "main.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    lines[1] = lines[1][:25] + b"\n"  # record 2 of 3 cut short, as a bad disk would leave it
    damaged = b"".join(lines)
    log.write_bytes(damaged)
    expected = f"corrupt record: {log} record 2 (line 2)"
    for argv in (["show", "s1"], ["rewind", "s1", "1"], ["fork", "s1", "1"]):
        status, _, err = _run(capsys, "session", "--session-dir", str(sessions), *argv)
        assert status == 1 and err.startswith(f"eukhe session {argv[0]}: {expected}: not JSON"), err
        assert log.read_bytes() == damaged
    status, out, _ = _run(capsys, "session", "--session-dir", str(sessions), "list")
    assert status == 1 and f"s1  error: {expected}" in out
    assert log.read_bytes() == damaged
    assert Store(sessions).ids() == ["s1"]  # the failed fork left no session behind
