"""`eukhe session ...` and the writer lock at the front door (issue 10): a missing entry, bytes
that are not UTF-8, a sessions dir that is a regular file, concurrent writers."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from eukhe.session import Store, user
from eukhe.session.lock import LOCK_FILE, RECORD_WIDTH

from cli_support import Done, InProcess, RunProcess, eukhe_env


@pytest.fixture
def session(agent: Path) -> str:
    with Store(agent / "sessions").create("s1") as made:
        made.conversation().commit([user("hello")])
    return "s1"


def test_session_fork_of_a_missing_entry_is_one_line_exit_2(run: RunProcess, inproc: InProcess, agent: Path, session: str) -> None:
    for entry in ("999", "0", "-1", "99999999999999999999999999"):
        done = inproc("session", "fork", session, entry)
        assert done.status == 2, done
        assert done.one_error_line() == f"eukhe session fork: conversation 'main' has no entry {entry}"
    done = run("session", "fork", session, "999")  # the same as a real process
    assert (done.status, done.one_error_line()) == (2, "eukhe session fork: conversation 'main' has no entry 999")
    assert Store(agent / "sessions").ids() == [session]  # nothing was made


def test_session_fork_of_an_entry_that_is_not_a_number(inproc: InProcess, session: str) -> None:
    for entry in ("two", "1" * 40, "1.5"):
        done = inproc("session", "fork", session, entry)
        assert done.status == 2 and "an entry id is a whole number" in done.one_error_line()


def test_session_rewind_and_show_of_missing_things_exit_2(inproc: InProcess, session: str) -> None:
    assert inproc("session", "rewind", session, "7").status == 2
    done = inproc("session", "show", "nosuch")
    assert done.status == 2 and "no session at" in done.one_error_line()
    done = inproc("session", "show", "../etc")
    assert done.status == 2 and "session id" in done.one_error_line()
    done = inproc("session", "show", session, "--conversation", "main.none")
    assert done.status == 2 and "has no conversation 'main.none'" in done.one_error_line()


def test_a_non_utf8_argument_is_refused_and_the_lock_file_keeps_its_holder(run: RunProcess, agent: Path, session: str) -> None:
    lock = agent / "sessions" / session / LOCK_FILE
    assert run("set", "retry.maxRetries", "4", "--session", session).status == 0
    before = lock.read_bytes()
    done = run("set", "defaultModel", b"bad\xff", "--session", session)
    assert done.status == 2
    assert done.one_error_line() == "eukhe set: the argument VALUE is not UTF-8 text (at character 3): b'bad\\xff'"
    assert lock.read_bytes() == before  # refused at the front door, before any lock



def test_every_text_argument_must_be_utf8(inproc: InProcess, session: str) -> None:
    """In process the same bytes arrive as sys.argv holds them: surrogate escapes."""
    for argv in (["set", "retry.maxRetries", "\udcff\udcfe", "--session", session], ["session", "show", "s\udcff1"],
                 ["cvar", "set transport \udcc3", "--session", session], ["mcp", "add", "g\udcffit", "{}"],
                 ["effort", "clamp", "--level", "hi\udcffgh"], ["set", "defaultModel", "x", "--global", "--session", "\udcff"]):
        done = inproc(*argv)
        assert done.status == 2, argv
        assert "is not UTF-8 text" in done.one_error_line(), argv


def test_the_lock_file_holds_the_command_words_and_no_values(inproc: InProcess, run: RunProcess, agent: Path, session: str) -> None:
    lock = agent / "sessions" / session / LOCK_FILE
    for runner in (inproc, run):
        assert runner("set", "retry.maxRetries", "31337", "--session", session).status == 0
        record = lock.read_bytes()
        assert len(record) == RECORD_WIDTH and record.endswith(b"\n")  # one fixed-width record, never empty
        text = record.decode("utf-8").strip()
        assert "(eukhe set)" in text and text.startswith("pid ")
        assert "31337" not in text and "retry" not in text and session not in text


def test_a_holder_record_is_utf8_of_a_fixed_width_whatever_the_program(monkeypatch: pytest.MonkeyPatch) -> None:
    from eukhe.session import lock

    for argv0 in ("/usr/bin/eukhe", "/tmp/\udcff\udcfe/x", "é" * 400):
        monkeypatch.setattr(sys, "argv", [argv0, "set", "secret"])
        record = lock.holder_record()
        assert len(record) == RECORD_WIDTH and record.endswith(b"\n")
        assert "secret" not in record.decode("utf-8")


@pytest.mark.parametrize("cut", range(RECORD_WIDTH - 4, RECORD_WIDTH + 1))
def test_a_holder_record_cut_inside_a_character_is_still_utf8(monkeypatch: pytest.MonkeyPatch, cut: int) -> None:
    """The record's width falls inside a 2-, 3- or 4-byte character at every offset (the real
    text's length depends on the pid and the host: the test above failed only sometimes)."""
    from eukhe.session import lock

    for char in ("é", "€", "😀"):
        monkeypatch.setattr(lock, "holder_text", lambda: "p" * cut + char * 8)
        record = lock.holder_record()
        assert len(record) == RECORD_WIDTH and record.endswith(b"\n")
        assert record.decode("utf-8").rstrip().startswith("p" * min(cut, RECORD_WIDTH - 1))


def test_a_cli_writer_waits_for_the_holder_in_process(inproc: InProcess, agent: Path, session: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Deterministic: the holder lets go at the waiter's first pause (no clock in the test)."""
    from eukhe.session import lock

    holder = Store(agent / "sessions").open(session, writer=True)
    pauses: list[float] = []

    def pause(seconds: float) -> None:
        pauses.append(seconds)
        holder.close()

    monkeypatch.setattr(lock.time, "sleep", pause)
    done = inproc("set", "retry.maxRetries", "7", "--session", session)
    assert done.status == 0 and len(pauses) == 1, done
    holder = Store(agent / "sessions").open(session, writer=True)
    monkeypatch.setenv("EUKHE_LOCK_TIMEOUT", "0")
    try:
        done = inproc("set", "retry.maxRetries", "8", "--session", session)
    finally:
        holder.close()
    assert done.status == 1 and "is locked for writing by pid" in done.one_error_line()


def test_a_path_argument_may_hold_any_bytes(run: RunProcess, agent: Path, tmp_path: Path) -> None:
    sessions = tmp_path / "sess\udcffions"  # a directory whose name is not UTF-8
    done = run("session", "--session-dir", bytes(sessions), "new")  # type: ignore[arg-type]
    assert done.status == 0, done
    assert Store(sessions).ids() == [done.out.strip()]
    listed = run("session", "--session-dir", bytes(sessions), "list")  # type: ignore[arg-type]
    assert listed.status == 0 and done.out.strip() in listed.out


def test_session_new_makes_an_empty_session(inproc: InProcess, agent: Path) -> None:
    done = inproc("session", "new")
    assert done.status == 0 and done.err == ""
    (made,) = Store(agent / "sessions").ids()
    assert done.out == made + "\n"
    assert inproc("session", "show", made).status == 0


def test_a_sessions_dir_that_is_a_regular_file_exits_1(inproc: InProcess, run: RunProcess, tmp_path: Path) -> None:
    regular = tmp_path / "a-file"
    regular.write_text("not a dir\n")
    for action in (["list"], ["new"], ["show", "s1"], ["fork", "s1", "1"], ["rewind", "s1", "1"]):
        for where in (regular, regular / "below"):
            done = inproc("session", "--session-dir", str(where), *action)
            assert done.status == 1, (action, done)
            assert "not a directory" in done.one_error_line()
    done = run("session", "--session-dir", str(regular / "below"), "new")
    assert done.status == 1 and "not a directory" in done.one_error_line()
    assert regular.read_text() == "not a dir\n"


def test_session_list_of_etc_passwd_exits_1(inproc: InProcess) -> None:
    done = inproc("session", "--session-dir", "/etc/passwd", "list")
    assert done.status == 1
    assert done.one_error_line() == "eukhe session list: the sessions dir (from --session-dir) /etc/passwd is not a directory"


def test_an_agent_dir_that_is_a_regular_file_exits_1(inproc: InProcess, tmp_path: Path) -> None:
    regular = tmp_path / "agent-file"
    regular.write_text("x")
    for argv in (["session", "new"], ["session", "list"], ["set", "defaultModel", "m", "--global"], ["mcp", "add", "git", "{}"],
                 ["settings", "show"], ["toggle", "retry.enabled", "--global"]):
        done = inproc("--agent-dir", str(regular), *argv)
        assert done.status == 1, (argv, done)
        assert "not a directory" in done.one_error_line(), argv
    assert regular.read_text() == "x"


def test_a_read_only_sessions_dir_exits_1(inproc: InProcess, run: RunProcess, tmp_path: Path, freeze: object) -> None:
    sessions = tmp_path / "frozen-sessions"
    with Store(sessions).create("s1") as made:
        made.conversation().commit([user("hi")])
    freeze(sessions)  # type: ignore[operator]
    for argv in (["new"], ["fork", "s1", "1"]):
        done = inproc("session", "--session-dir", str(sessions), *argv)
        assert done.status == 1, done
        assert "read-only" in done.one_error_line()
    done = run("session", "--session-dir", str(sessions), "new")
    assert done.status == 1 and "read-only" in done.one_error_line()
    assert inproc("session", "--session-dir", str(sessions), "show", "s1").status == 0  # reading still works


def test_a_second_writer_waits_for_the_lock_then_names_the_holder(run: RunProcess, agent: Path, session: str) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(agent / "sessions"), session],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=eukhe_env(agent),
    )
    assert holder.stdout is not None and holder.stdin is not None
    try:
        assert holder.stdout.readline() == "holding\n"
        done = run("set", "retry.maxRetries", "5", "--session", session, EUKHE_LOCK_TIMEOUT="0.2")
        assert done.status == 1
        line = done.one_error_line()
        assert f"is locked for writing by pid {holder.pid} on " in line and "waited 0.2 s" in line
        waiting = subprocess.Popen(
            [sys.executable, "-m", "eukhe", "set", "retry.maxRetries", "6", "--session", session],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=eukhe_env(agent, EUKHE_LOCK_TIMEOUT="60"),
        )
        holder.stdin.write("go\n")
        holder.stdin.close()
        assert holder.wait(timeout=60) == 0
        out, err = waiting.communicate(timeout=60)
        assert waiting.returncode == 0 and err == "", err  # it waited, then wrote
    finally:
        holder.kill()
    with Store(agent / "sessions").open(session, writer=False) as opened:
        assert opened.conversation().document("eukhe.cvar.agent")["sets"][-1] == ["retry.maxRetries", 6]  # type: ignore[index]


HOLD = """
import sys
from pathlib import Path
from eukhe.session import Store, user
session = Store(Path(sys.argv[1])).open(sys.argv[2], writer=True)
print("holding", flush=True)
sys.stdin.readline()
session.conversation().commit([user("from the holder")])
session.close()
"""


def test_concurrent_cli_writers_all_land(run: RunProcess, agent: Path, session: str) -> None:
    """4 processes x 10 sets on one session: every set waits its turn, none is refused."""
    script = (
        "import sys\nfrom eukhe.cli import main\n"
        "for i in range(10):\n"
        "    status = main(['set', 'retry.maxRetries', str(int(sys.argv[1]) * 100 + i), '--session', sys.argv[2]])\n"
        "    assert status == 0, status\n"
    )
    workers = [
        subprocess.Popen([sys.executable, "-c", script, str(n), session], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True, env=eukhe_env(agent, EUKHE_LOCK_TIMEOUT="60"))
        for n in range(4)
    ]
    for worker in workers:
        _, err = worker.communicate(timeout=300)
        assert worker.returncode == 0 and err == "", err
    with Store(agent / "sessions").open(session, writer=False) as opened:
        commits = [e for e in opened.conversation().entries() if opened.conversation().changes(e.id)]
    assert len(commits) == 40


def test_done_helper_refuses_two_lines() -> None:
    with pytest.raises(AssertionError):
        Done(1, "", "a\nb\n").one_error_line()


@pytest.mark.parametrize(("raw", "seconds"), [("", 5.0), ("0", 0.0), ("0.25", 0.25), ("3600", 3600.0), ("-1", 5.0), ("nan", 5.0),
                                              ("inf", 5.0), ("1e400", 5.0), ("abc", 5.0), ("7200", 5.0)])
def test_the_lock_timeout_of_the_environment(monkeypatch: pytest.MonkeyPatch, agent: Path, raw: str, seconds: float) -> None:
    from eukhe import cli

    monkeypatch.setenv("EUKHE_LOCK_TIMEOUT", raw)
    assert cli.lock_timeout() == seconds


@pytest.mark.parametrize(
    ("cfg", "env", "seconds"),
    [("", None, 5.0), ("set session.lockTimeoutMs 250\n", None, 0.25), ("set session.lockTimeoutMs 0\n", None, 0.0),
     ("set session.lockTimeoutMs 250\n", "2", 2.0), ("set session.lockTimeoutMs 250\n", "bogus", 0.25),
     ("set session.lockTimeoutMs " + "9" * 400 + "\n", None, 3600.0), ("set session.lockTimeoutMs -5\n", None, 5.0),
     ("set session.lockTimeoutMs 1.5\n", None, 5.0), (b"\xff", None, 5.0)],
    ids=["default", "setting", "zero", "env-over-setting", "bad-env", "huge-capped", "negative-refused", "fraction-refused",
         "unreadable-cfg"],
)
def test_the_lock_timeout_setting(monkeypatch: pytest.MonkeyPatch, agent: Path, cfg: str | bytes, env: str | None, seconds: float) -> None:
    """session.lockTimeoutMs of the global config (eukhe's own Global cvar) is the wait; a valid
    EUKHE_LOCK_TIMEOUT overrides it; a refused set or an unreadable file leaves the default."""
    from eukhe import cli

    agent.mkdir()
    (agent / "config.cfg").write_bytes(cfg if isinstance(cfg, bytes) else cfg.encode())
    if env is not None:
        monkeypatch.setenv("EUKHE_LOCK_TIMEOUT", env)
    assert cli.lock_timeout() == seconds
    assert cli.lock_timeout(str(agent.parent / "elsewhere")) == (seconds if env not in (None, "bogus") else 5.0)


def test_a_project_file_never_sets_the_lock_timeout(monkeypatch: pytest.MonkeyPatch, agent: Path, tmp_path: Path) -> None:
    from eukhe import cli

    (tmp_path / ".eukhe").mkdir()
    (tmp_path / ".eukhe" / "config.cfg").write_text("set session.lockTimeoutMs 1\n")
    monkeypatch.chdir(tmp_path)
    assert cli.lock_timeout() == 5.0


def _without_lock_env(agent: Path) -> dict[str, str]:
    env = eukhe_env(agent)
    del env["EUKHE_LOCK_TIMEOUT"]
    return env


def _has_open(pid: int, path: Path) -> bool:
    """Whether process ``pid`` has ``path`` open (its /proc fd table)."""
    fds = Path(f"/proc/{pid}/fd")
    try:
        return any(os.path.realpath(fd) == str(path) for fd in fds.iterdir())
    except OSError:
        return False


def test_two_writers_wait_by_the_lock_timeout_setting(run: RunProcess, agent: Path, session: str) -> None:
    """Two real processes: a holder keeps the session's lock; `eukhe set` waits as long as the
    session.lockTimeoutMs setting says (no EUKHE_LOCK_TIMEOUT), then names the holder; with a long
    setting it waits for the release and writes after the holder's commit. Synchronised on the
    holder's pipes and on the second writer's open lock file, never on a clock."""
    assert run("set", "session.lockTimeoutMs", "250", "--global").status == 0
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(agent / "sessions"), session],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=eukhe_env(agent),
    )
    assert holder.stdout is not None and holder.stdin is not None
    try:
        assert holder.stdout.readline() == "holding\n"
        argv = [sys.executable, "-m", "eukhe", "set", "retry.maxRetries", "6", "--session", session]
        refused = subprocess.run(argv, capture_output=True, text=True, env=_without_lock_env(agent), timeout=120, check=False)
        line = Done(refused.returncode, refused.stdout, refused.stderr).one_error_line()
        assert refused.returncode == 1 and f"by pid {holder.pid} on " in line and line.endswith("; waited 0.25 s"), line
        refused = subprocess.run(argv, capture_output=True, text=True, env=dict(_without_lock_env(agent), EUKHE_LOCK_TIMEOUT="0"),
                                 timeout=120, check=False)
        assert refused.returncode == 1 and refused.stderr.strip().endswith("; waited 0 s"), refused.stderr  # the override
        assert run("set", "session.lockTimeoutMs", "600000", "--global").status == 0
        waiting = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_without_lock_env(agent))
        lock = (agent / "sessions" / session / LOCK_FILE).resolve()
        while not _has_open(waiting.pid, lock):  # the second writer is at the lock the holder keeps
            assert waiting.poll() is None, waiting.communicate()
            time.sleep(0.01)  # a poll for a state, not a timing: no assertion depends on how long
        holder.stdin.write("go\n")
        holder.stdin.close()
        assert holder.wait(timeout=120) == 0
        out, err = waiting.communicate(timeout=120)
        assert waiting.returncode == 0 and err == "", err
    finally:
        holder.kill()
    with Store(agent / "sessions").open(session, writer=False) as opened:
        conversation = opened.conversation()
        assert conversation.document("eukhe.cvar.agent")["sets"][-1] == ["retry.maxRetries", 6]  # type: ignore[index]
        entries = list(conversation.entries())
        held = [i for i, e in enumerate(entries) if e.content == "from the holder"]
        sets = [i for i, e in enumerate(entries) if conversation.changes(e.id)]
        assert len(held) == 1 and sets and held[0] < sets[-1]  # the holder committed first, under its lock; the waiter after
