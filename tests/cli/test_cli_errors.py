"""The one error path of `eukhe` (issue 10): one line, exit 2 for bad input, 1 for a fault of
the environment, 70 for a bug; a traceback only with EUKHE_DEBUG=1; a closed pipe ends quietly;
every command's --help describes every argument and the exit codes."""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import InProcess, RunProcess, eukhe_env

from eukhe import cli
from eukhe.session import Store, user

ROOT = Path(__file__).resolve().parents[2]


def _leaves(parser: argparse.ArgumentParser, words: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    found = [(words, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                found += _leaves(child, (*words, name))
    return found


def test_every_command_has_help_for_every_argument() -> None:
    for words, parser in _leaves(cli.parser()):
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            assert action.help, f"eukhe {' '.join(words)}: {action.dest} has no help"
        assert parser.epilog and "exit status: 0 done; 1 a fault of the environment" in parser.epilog, words


@pytest.mark.parametrize("words, name", [
    ((), "COMMAND"), (("agent",), "VERB"), (("effort",), "VERB"), (("memory",), "VERB"), (("settings",), "VERB"),
    (("mcp",), "VERB"), (("directors",), "ACTION"), (("session",), "ACTION"),
])  # fmt: skip
def test_a_command_of_verbs_names_them_in_its_usage(inproc: InProcess, words: tuple[str, ...], name: str) -> None:
    """One word for the verbs, not argparse's {a,b,...} list: the verbs are listed, each with its
    help, below the usage."""
    usage = inproc(*words, "--help").out.split("\n\n")[0]
    assert f" {name} ..." in usage and "{" not in usage, usage


def test_every_help_exits_0_and_shows_the_exit_codes(inproc: InProcess) -> None:
    for words, _ in _leaves(cli.parser()):
        done = inproc(*words, "--help")
        assert done.status == 0 and done.err == "", words
        assert "exit status: 0 done; 1 a fault of the environment" in done.out and "2 bad input" in done.out, words


def test_the_readme_documents_the_exit_codes_and_only_commands_that_exist() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for text in ("exit status", "`0`", "`1`", "`2`", "`70`", "EUKHE_DEBUG=1"):
        assert text in readme, text
    commands = {words[0] for words, _ in _leaves(cli.parser()) if words}
    for line in readme.splitlines():
        if line.startswith("| `eukhe "):
            word = line.split("`eukhe ", 1)[1].split()[0].split("\\|")[0].strip("`")
            assert word in commands, line


def test_usage_errors_exit_2_with_one_line(inproc: InProcess) -> None:
    for argv, says in (
        ([], "eukhe: the following arguments are required: COMMAND"),
        (["nosuch"], "eukhe: argument COMMAND: invalid choice: 'nosuch'"),
        (["session"], "eukhe session: the following arguments are required: ACTION"),
        (["session", "fork", "s1"], "eukhe session fork: the following arguments are required: entry"),
        (["laws", "--area", "nosuch"], "eukhe laws: no laws in area 'nosuch'; the areas are "),
        (["laws", "--area", "nosuch", "--area", "other"], "eukhe laws: no laws in area 'nosuch', 'other'; the areas are "),
        (["effort", "clamp", "--level", "huge"], "eukhe effort clamp: "),
        (["effort", "offered", "--map", "{"], "eukhe effort offered: --map is not JSON"),
    ):
        done = inproc(*argv)
        assert done.status == 2, (argv, done)
        assert done.one_error_line().startswith(says), (argv, done.err)


def test_laws_pin_prints_each_line_it_pinned(inproc: InProcess, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`eukhe laws pin LAW` names the file and prints each line it added there, indented (the
    lines hunt.pin gives: tests/hunt/test_hunt_pin.py pins real finds of a hunt end to end)."""
    from spec import hunt

    where = tmp_path / "laws.py"
    added = ["PINNED.setdefault(('a_law', 0), []).append((1,))", "PINNED.setdefault(('a_law', 0), []).append((2,))"]
    monkeypatch.setattr(hunt, "pin", lambda law: (where, added if law == "a_law" else []))
    monkeypatch.delenv(hunt.DB_ENV, raising=False)
    done = inproc("laws", "pin", "a_law")
    assert (done.status, done.out.splitlines()) == (0, [f"a_law: pinned 2 example(s) in {where}:", *(f"  {line}" for line in added)])
    done = inproc("laws", "pin", "other_law")
    assert (done.status, done.out.splitlines()[0]) == (1, "other_law: no new failing example in the directory .hypothesis/examples")


def test_an_unexpected_error_is_one_line_exit_70_and_a_traceback_only_with_debug(
    inproc: InProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    from eukhe import effort

    def broken(self: object) -> tuple[str, ...]:
        raise KeyError("planted")

    monkeypatch.setattr(effort.CatalogModel, "offered", broken)
    done = inproc("effort", "offered")
    assert done.status == 70
    assert done.one_error_line() == (
        "eukhe effort offered: internal error: KeyError: 'planted' (a bug in eukhe: please report it; EUKHE_DEBUG=1 prints the traceback)"
    )
    monkeypatch.setenv("EUKHE_DEBUG", "1")
    done = inproc("effort", "offered")
    assert done.status == 70
    assert done.err.startswith("Traceback (most recent call last):") and "KeyError: 'planted'" in done.err
    assert done.err.splitlines()[-1].startswith("eukhe effort offered: internal error: KeyError")


def test_debug_shows_the_traceback_of_a_typed_error_in_a_real_process(run: RunProcess) -> None:
    quiet = run("session", "--session-dir", "/etc/passwd", "list")
    assert quiet.status == 1 and "Traceback" not in quiet.err
    loud = run("session", "--session-dir", "/etc/passwd", "list", EUKHE_DEBUG="1")
    assert loud.status == 1
    assert "Traceback (most recent call last):" in loud.err and "EnvironmentFault" in loud.err
    assert loud.err.splitlines()[-1] == quiet.err.strip()


@pytest.fixture
def big_session(agent: Path) -> str:
    with Store(agent / "sessions").create("big") as session:
        main = session.conversation()
        for n in range(40):
            main.commit([user(f"message {n} " + "x" * 60) for _ in range(50)])
    return "big"


def test_a_closed_pipe_ends_quietly(agent: Path, big_session: str) -> None:
    """The reader is gone before the first write: EPIPE at once, no traceback, exit 1."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "eukhe", "session", "show", big_session],
            stdout=write, stderr=subprocess.PIPE, env=eukhe_env(agent), timeout=120, check=False,
        )
    finally:
        os.close(write)
    assert done.returncode == 1 and done.stderr == b""


def test_piped_into_head_ends_quietly(agent: Path, big_session: str) -> None:
    """A real shell pipe: `eukhe session show big | head -1` prints one line and no traceback."""
    script = f'{sys.executable} -m eukhe session show {big_session} | head -1; echo "status ${{PIPESTATUS[0]}}" >&2'
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=eukhe_env(agent), timeout=120, check=False)
    assert done.stdout == "session big  conversation main  head 2000\n"
    assert done.stderr == "status 1\n"


def test_a_closed_pipe_in_process_returns_1_without_output(agent: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    class Closed(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(sys, "stdout", Closed())
    assert cli.main(["effort", "offered"]) == 1
    assert capsys.readouterr().err == ""  # quiet: no line, no traceback


def test_bridge_replay_of_a_missing_file_in_process(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from bridge.__main__ import main as bridge_main

    assert bridge_main(["replay", "effort", str(tmp_path / "nonexistent")]) == 2
    assert capsys.readouterr().err == f"bridge: cannot read scenario {tmp_path / 'nonexistent'}: No such file or directory\n"


def test_bridge_replay_of_a_missing_file(tmp_path: Path) -> None:
    for area in ("effort", "cvar"):
        done = subprocess.run(
            [sys.executable, "-m", "bridge", "replay", area, str(tmp_path / "nonexistent")],
            capture_output=True, text=True, cwd=ROOT, timeout=120, check=False,
        )
        assert done.returncode == 2
        assert done.stderr == f"bridge: cannot read scenario {tmp_path / 'nonexistent'}: No such file or directory\n"
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\xff\xfe\n")
    done = subprocess.run([sys.executable, "-m", "bridge", "replay", "effort", str(bad)], capture_output=True, text=True,
                          cwd=ROOT, timeout=120, check=False)
    assert done.returncode == 2 and done.stderr == f"bridge: {bad}: not UTF-8 at byte 0\n"
    done = subprocess.run([sys.executable, "-m", "bridge", "replay", "nosuch"], capture_output=True, text=True,
                          cwd=ROOT, timeout=120, check=False)
    assert done.returncode == 2 and done.stderr.startswith("bridge: no bridge for area 'nosuch'")


def test_exit_status_classes() -> None:
    """The table of ``cli.classify``: which typed error is bad input and which is a fault."""
    from eukhe.session import errors as se
    from eukhe.settings.cvar import CvarError
    from eukhe.settings.files import DocumentError

    cases: list[tuple[BaseException, int]] = [
        (cli.UsageError("x"), 2),
        (cli.EnvironmentFault("x"), 1),
        (CvarError("BadValue", "retry.maxRetries", "m"), 2),
        (DocumentError(Path("s.json"), "not JSON"), 2),
        (DocumentError(Path("s.json"), "unreadable", "not UTF-8 at byte 3"), 2),
        (DocumentError(Path("s.json"), "unreadable", "Permission denied"), 1),
        (se.SessionNotFound(Path("s")), 2),
        (se.UnknownEntry("main", 3), 2),
        (se.UnknownConversation(Path("s"), "main.x"), 2),
        (se.InvalidCommit("bad id"), 2),
        (se.SessionExists(Path("s")), 2),
        (se.SessionLocked(Path("s"), "pid 1"), 1),
        (se.CorruptRecord(Path("s/main.jsonl"), 2, "not JSON"), 1),
        (se.SessionError("an earlier write failed"), 1),
        (PermissionError(13, "Permission denied", "/x"), 1),
        (NotADirectoryError(20, "Not a directory", "/x"), 1),
        (OSError(28, "No space left on device", "/x"), 1),
        (MemoryError(), 1),
        (RecursionError("deep"), 70),
        (KeyError(1), 70),
    ]
    for error, status in cases:
        assert cli.classify(error)[0] == status, error
    assert cli.classify(OSError(28, "No space left on device", "/x"))[1] == "/x: No space left on device"
    assert cli.classify(MemoryError()) == (1, "out of memory")  # MemoryError() says nothing of itself
    assert cli.classify(PermissionError(13, "Permission denied", "/x"))[1] == "/x: Permission denied (the directory or file is read-only)"


def test_a_closed_or_full_stdout_and_a_closed_stderr(agent: Path) -> None:
    base = [sys.executable, "-m", "eukhe"]
    env = eukhe_env(agent)
    closed_out = subprocess.run(["bash", "-c", 'exec "$@" >&-', "-", *base, "session", "new"], capture_output=False,
                                stderr=subprocess.PIPE, text=True, env=env, timeout=120, check=False)
    assert (closed_out.returncode, closed_out.stderr) == (1, "eukhe: stdout is closed; nothing done\n")
    assert not (agent / "sessions").exists()  # nothing done
    full = subprocess.run([*base, "effort", "offered"], stdout=open(os.devnull if not os.path.exists("/dev/full") else "/dev/full", "w"),
                          stderr=subprocess.PIPE, text=True, env=env, timeout=120, check=False)
    assert full.returncode == 1 and full.stderr.startswith("eukhe effort offered: ") and full.stderr.endswith("No space left on device\n")
    assert len(full.stderr.splitlines()) == 1
    closed_err = subprocess.run(["bash", "-c", 'exec "$@" 2>&-', "-", *base, "session", "--session-dir", "/etc/passwd", "list"],
                                capture_output=True, text=True, env=env, timeout=120, check=False)
    assert (closed_err.returncode, closed_err.stdout, closed_err.stderr) == (1, "", "")
