"""Hardening from the outside (issue 30), the front door: what a hostile user found at the
command line, each case judged from the outside, with the README's exit statuses (2 bad input,
1 a fault of the environment) and its promises (a closed stdout ends quietly, paths may hold any
bytes, one error line)."""

from __future__ import annotations

import argparse
import json
import os
import re
import select
import signal
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cli_support import InProcess, RunProcess, Screen, eukhe_env, run_process
from loopback_models import write_loopback_models

from eukhe import cli
from eukhe.memory.owner import Memory
from eukhe.memory.records import Kind
from eukhe.memory.store import chat_dir
from eukhe.session import Store as Sessions
from eukhe.session import user
from eukhe.tiny.audio import Audio, write_wav
from spec.loopback import Fail, LoopbackServer, Stream, Text

ROOT = Path(__file__).resolve().parents[2]
U32 = 2**32 - 1
HUGE = "1" + "0" * 36


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as running:
        yield running


def _session(agent: Path) -> str:
    sessions = Sessions(agent / "sessions")
    with sessions.create("20260101T000000-abcd0001") as session:
        session.conversation().commit([user("hello")])
    return "20260101T000000-abcd0001"


# -- setting bounds: the bound a use takes is the bound a set takes ------------------------------------


def test_set_refuses_a_nat_past_the_bound_its_use_takes(inproc: InProcess, agent: Path) -> None:
    done = inproc("set", "retry.provider.streamRepeatLimit", "1" + "0" * 29, "--global")
    assert done.status == 2 and not (agent / "config.cfg").exists(), done
    assert done.one_error_line().startswith("CvarError::BadValue(retry.provider.streamRepeatLimit): ")
    assert str(U32) in done.one_error_line()
    assert inproc("set", "retry.provider.streamRepeatLimit", str(U32 + 1), "--global").status == 2
    done = inproc("set", "retry.provider.streamRepeatLimit", str(U32), "--global")
    assert done.status == 0 and done.out == f"retry.provider.streamRepeatLimit = {U32} (global config.cfg)\n"


@pytest.mark.parametrize("cvar, value", [
    ("retry.maxRetries", HUGE), ("compaction.keepRecentTokens", HUGE), ("directors.maxSteps", HUGE),
    ("idleEvictionMinutes", HUGE), ("thinkingBudgets", '{"high": ' + HUGE + "}"), ("providerMaxInFlight", '{"openai": ' + HUGE + "}"),
    ("session.lockTimeoutMs", HUGE), ("memory.settleTimeoutMs", HUGE),
])
def test_set_refuses_nats_of_10_to_the_36(inproc: InProcess, agent: Path, cvar: str, value: str) -> None:
    done = inproc("set", cvar, value, "--global")
    assert done.status == 2 and done.one_error_line().startswith(f"CvarError::BadValue({cvar}): "), done
    assert not (agent / "config.cfg").exists()


def test_cvar_refuses_nats_of_10_to_the_36(inproc: InProcess, agent: Path) -> None:
    session = _session(agent)
    done = inproc("cvar", f"set retry.maxRetries {HUGE}", "--session", session)
    assert done.status == 2 and "CvarError::BadValue(retry.maxRetries)" in done.out + done.err, done
    done = inproc("set", "compaction.keepRecentTokens", HUGE, "--session", session)
    assert done.status == 2 and done.one_error_line().startswith("CvarError::BadValue(compaction.keepRecentTokens): ")
    assert inproc("cvar", "set retry.maxRetries 5", "--session", session).status == 0
    shown = inproc("settings", "show", "--session", session)
    assert "retry.maxRetries = 5  [sets main]" in shown.out and "compaction.keepRecentTokens = 40000  [default]" in shown.out


def test_a_director_limit_flag_takes_the_bound_of_its_cvar(inproc: InProcess, tmp_path: Path) -> None:
    script = tmp_path / "script.jsonl"
    script.write_text('{"input": "hi"}\n', encoding="utf-8")
    done = inproc("directors", "simulate", "--script", str(script), "--max-steps", HUGE)
    assert done.status == 2 and "is past the largest value of directors.maxSteps, 9223372036854775807" in done.one_error_line(), done


@pytest.mark.parametrize("where", ["settings.json", "config.cfg"])
def test_ask_reads_a_setting_past_its_bound_as_bad_input(server: LoopbackServer, agent: Path, where: str) -> None:
    write_loopback_models(agent, server, {"loop": "openai-completions"})
    big = 10**29
    if where == "settings.json":
        (agent / "settings.json").write_text(json.dumps({"retry": {"provider": {"streamRepeatLimit": big}}}), encoding="utf-8")
    else:
        (agent / "config.cfg").write_text(f"set retry.provider.streamRepeatLimit {big}\n", encoding="utf-8")
    server.script(Stream([Text("never")]))
    done = run_process(["ask", "--provider", "loop", "hi"], agent)
    line = done.one_error_line()
    assert done.status == 2, done
    assert line.startswith("eukhe ask: settings: retry.provider.streamRepeatLimit") and str(U32) in line, line
    assert server.requests == []


@pytest.mark.parametrize("command", ["ask"])  # `eukhe chat` has no --timeout: the agent sends its requests
@pytest.mark.parametrize("timeout", ["inf", "-inf", "nan", "1e999", "0", "-1", "x"])
def test_timeout_must_be_a_finite_positive_number(inproc: InProcess, command: str, timeout: str) -> None:
    argv = [command, "--timeout", timeout] + (["hi"] if command == "ask" else [])
    done = inproc(*argv)
    line = done.one_error_line()
    assert done.status == 2 and line.startswith(f"eukhe {command}: ") and "--timeout" in line, done


# -- exit 2 for bad input, 1 for the environment ------------------------------------------------------


@pytest.mark.parametrize("argv", [["memory"], ["tiny-models", "list"], ["settings", "show"], ["session", "list"]])
def test_an_empty_agent_dir_is_bad_input(inproc: InProcess, argv: list[str]) -> None:
    done = inproc("--agent-dir", "", *argv)
    assert done.status == 2 and "--agent-dir is empty" in done.one_error_line(), done


@pytest.mark.parametrize(
    "argv",
    [
        ["directors", "simulate", "--script", ""],
        ["memory", "simulate", "--messages", "3", "--png", ""],
        ["memory", "simulate", "--messages", "3", "--cache", "--plot", ""],
        ["laws", "--laws-dir", ""],
    ],
)
def test_an_empty_path_flag_is_bad_input_never_the_working_dir(inproc: InProcess, argv: list[str]) -> None:
    # argparse's type=Path made "" into "." before the check (`--script ""` said ".: Is a directory")
    done = inproc(*argv)
    flag = argv[argv.index("") - 1]
    assert done.status == 2 and done.one_error_line() == f"eukhe {' '.join(argv[:2] if argv[0] != 'laws' else argv[:1])}: the argument {flag} is empty: name a path, or leave it out", done


def test_memory_import_from_a_missing_dir_a_file_or_nothing(inproc: InProcess, agent: Path, tmp_path: Path) -> None:
    done = inproc("memory", "import", "--session-dir", str(tmp_path / "nowhere"))
    assert done.status == 2 and done.one_error_line() == f"eukhe memory import: --session-dir {tmp_path / 'nowhere'} does not exist", done
    (tmp_path / "plain").write_text("x")
    done = inproc("memory", "import", "--session-dir", str(tmp_path / "plain"))
    assert done.status == 1 and done.one_error_line() == f"eukhe memory import: --session-dir {tmp_path / 'plain'} is not a directory", done
    done = inproc("memory", "import", "--session-dir", "")
    assert done.status == 2 and "--session-dir is empty" in done.one_error_line(), done
    done = inproc("memory", "import")  # the default sessions dir, not made yet: nothing to import
    assert done.status == 0 and done.out.startswith("imported 0 messages from 0 sessions"), done


def test_tiny_models_list_under_an_agent_dir_that_is_a_file(inproc: InProcess, agent: Path) -> None:
    agent.write_text("not a directory")
    done = inproc("tiny-models", "list")
    assert done.status == 1 and done.out == "", done
    assert done.one_error_line() == f"eukhe tiny-models list: the agent dir {agent} is not a directory"


@pytest.mark.parametrize("content", ["dir", "garbage", "latin1", "deep", "nan"])
def test_model_list_bundled_refuses_a_bundle_it_cannot_read(inproc: InProcess, tmp_path: Path, content: str) -> None:
    bundle = tmp_path / "models.bundled.json"
    if content == "dir":
        bundle.mkdir()
    else:
        data = {"garbage": b"{not json", "latin1": '{"version": 1, "providers": []}'.encode() + b"\xe9",
                "deep": b"[" * 20000 + b"]" * 20000, "nan": b'{"version": 1, "providers": [], "x": NaN}'}[content]
        bundle.write_bytes(data)
    done = inproc("model", "list", "--bundled", str(bundle))
    assert done.status == 2 and done.out == "", done
    assert done.one_error_line().startswith(f"eukhe model list: --bundled {bundle}: "), done


def test_model_list_bundled_unreadable_is_a_fault_of_the_environment(inproc: InProcess, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bundle = tmp_path / "models.bundled.json"
    bundle.write_text((ROOT / "impl/eukhe/inference/catalog.json").read_text(encoding="utf-8"), encoding="utf-8")
    real = Path.read_bytes

    def denied(self: Path) -> bytes:
        if self == bundle:
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", denied)
    done = inproc("model", "list", "--bundled", str(bundle))
    assert done.status == 1 and done.one_error_line().startswith(f"eukhe model list: --bundled {bundle}: "), done


def test_model_list_prefixes_every_warning(inproc: InProcess, agent: Path) -> None:
    agent.mkdir()
    (agent / "models.json").write_text("{not json", encoding="utf-8")
    done = inproc("model", "list")
    assert done.status == 0 and done.one_error_line().startswith(f"eukhe model list: {agent / 'models.json'}: not JSON"), done


def test_quirks_query_refuses_an_unknown_api(inproc: InProcess) -> None:
    done = inproc("quirks", "query", "gpt-5", "--api", "smoke-signals")
    assert done.status == 2 and done.out == "", done
    assert done.one_error_line().startswith("eukhe quirks query: --api 'smoke-signals' is not a wire API (")
    assert inproc("quirks", "query", "gpt-5", "--api", "openai-responses").status == 0


@pytest.mark.parametrize("url", ["ht!tp://x y", "ftp://example.com", "http://", "http://exa mple.com", "example.com"])
def test_tiny_download_refuses_a_base_url_that_is_no_http_url(inproc: InProcess, agent: Path, url: str) -> None:
    done = inproc("tiny-models", "download", "kokoro", "--base-url", url)
    assert done.status == 2 and done.one_error_line().startswith("eukhe tiny-models download: --base-url "), done
    assert not (agent / "models").exists()


def test_say_checks_the_voice_before_the_model(inproc: InProcess) -> None:
    for voice in ("../../x", "", ".hidden", "a/b"):
        done = inproc("say", "hi", "--voice", voice, "--out", "x.wav")
        assert done.status == 2 and done.one_error_line().startswith("eukhe say: --voice "), (voice, done)


def test_say_checks_the_out_file_before_the_model(inproc: InProcess, tmp_path: Path) -> None:
    done = inproc("say", "hi", "--out", str(tmp_path / "nowhere" / "x.wav"))
    assert done.status == 2 and done.one_error_line().startswith("eukhe say: --out "), done
    done = inproc("say", "hi", "--out", str(tmp_path))
    assert done.status == 2 and done.one_error_line().startswith("eukhe say: --out "), done


def test_transcribe_checks_the_wav_before_the_model(inproc: InProcess, tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.wav"
    garbage.write_bytes(b"RIFF....not a wav at all")
    done = inproc("transcribe", str(garbage))
    assert done.status == 2 and done.one_error_line().startswith(f"eukhe transcribe: {garbage}: not a PCM WAV file"), done
    done = inproc("transcribe", str(tmp_path))
    assert done.status == 2 and done.one_error_line().startswith(f"eukhe transcribe: cannot read {tmp_path}"), done


# -- a closed stdout ends quietly ------------------------------------------------------------------------


@pytest.mark.parametrize("argv", [["memory"], ["memory", "view"], ["settings", "show"], ["model", "list"], ["tiny-models", "list"],
                                  ["provider", "caps"], ["quirks", "query", "gpt-5"], ["effort", "offered", "--reasoning"], ["session", "show", "S"]])
def test_every_command_that_writes_stdout_ends_quietly_on_a_closed_pipe(agent: Path, argv: list[str]) -> None:
    agent.mkdir()
    argv = [_session(agent) if word == "S" else word for word in argv]
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([sys.executable, "-m", "eukhe", *argv], stdout=write, stderr=subprocess.PIPE,
                              env=eukhe_env(agent), cwd=agent.parent, timeout=120, check=False)
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (1, b""), (argv, done.stderr)


# -- one error line, clipped ---------------------------------------------------------------------------


def test_clip_keeps_a_short_line_and_cuts_a_long_one_to_300_characters() -> None:
    assert cli.clip("short") == "short"
    assert cli.clip("x" * 300) == "x" * 300
    long = "eukhe session show: no session " + "a" * 40_000 + " in /tmp/sessions"
    clipped = cli.clip(long)
    assert len(clipped) == 300 and clipped.startswith("eukhe session show: no session aaa") and clipped.endswith(" in /tmp/sessions")
    assert "characters cut" in clipped


@pytest.mark.parametrize("argv", [["session", "show", "a" * 40_000], ["set", "b" * 40_000, "1", "--global"], ["quirks", "query", "m", "--api", "c" * 40_000]])
def test_a_40_kb_argument_is_not_echoed_whole(run: RunProcess, argv: list[str]) -> None:
    done = run(*argv)
    line = done.one_error_line()
    assert done.status == 2 and len(line) <= 300, (len(line), line[:100])


# -- eukhe chat: a failed turn shows in the exit status ------------------------------------------------


def test_chat_exits_1_when_a_turn_failed(server: LoopbackServer, agent: Path) -> None:
    write_loopback_models(agent, server, {"loop": "openai-completions"})
    server.script(Fail(400, '{"error": {"type": "invalid_request_error", "message": "no"}}'))
    done = run_process(["chat", "--provider", "loop"], agent, stdin=b"first\n")
    assert done.err.startswith("eukhe chat: loop: HTTP 400 invalid_request_error"), done
    assert done.status == 1


def test_chat_exits_0_when_every_turn_was_answered(server: LoopbackServer, agent: Path) -> None:
    write_loopback_models(agent, server, {"loop": "openai-completions"})
    server.script(Stream([Text("one")]), Stream([Text("two")]))
    done = run_process(["chat", "--provider", "loop"], agent, stdin=b"first\n/nosuch\nsecond\n")
    assert "one" in done.out and "two" in done.out and "unknown command '/nosuch'" in done.err, done
    assert done.status == 0


def test_the_chat_docstring_and_the_readme_say_a_failed_turn_exits_1() -> None:
    from eukhe.commands import chat

    assert chat.__doc__ is not None and "exit status 1" in chat.__doc__
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    row = [line for line in readme.splitlines() if line.startswith("| `1` |")][0]
    assert "`eukhe chat`" in row and "turn" in row


# -- eukhe login ------------------------------------------------------------------------------------------


def test_the_no_credentials_hint_names_a_command_that_exists(inproc: InProcess, agent: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    done = inproc("ask", "--provider", "openai", "hi")
    assert done.status == 1 and "run `eukhe login openai`" in done.one_error_line()
    assert inproc("login", "--help").status == 0


def test_login_stores_the_key_at_0600_and_ask_finds_it(run: RunProcess, agent: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from eukhe.inference.resolve import resolve_model
    from eukhe.settings.agent import EukheSettings

    done = run_process(["login", "openai"], agent, stdin=b"sk-test-123\n")
    assert done.status == 0 and done.err == "" and "sk-test-123" not in done.out, done
    auth = agent / "auth.json"
    assert stat.S_IMODE(auth.stat().st_mode) == 0o600 and stat.S_IMODE(agent.stat().st_mode) == 0o700
    assert json.loads(auth.read_text(encoding="utf-8")) == {"openai": {"type": "api_key", "key": "sk-test-123"}}
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    model = resolve_model(agent, EukheSettings(agent).cvars, "openai", None)
    assert model.api_key == "sk-test-123"
    assert run_process(["login", "anthropic"], agent, stdin=b"sk-ant\n").status == 0
    assert json.loads(auth.read_text(encoding="utf-8")) == {"openai": {"type": "api_key", "key": "sk-test-123"},
                                                              "anthropic": {"type": "api_key", "key": "sk-ant"}}
    assert stat.S_IMODE(auth.stat().st_mode) == 0o600


@pytest.mark.parametrize("provider, key, says", [
    ("openai", b"\n", "the key is empty"), ("openai", b"", "the key is empty"), ("openai", b"sk a\n", "the key holds"),
    ("openai", b"\xff\xfe\n", "not UTF-8"), ("nosuch", b"sk\n", "unknown provider 'nosuch'"),
])
def test_login_refuses_bad_input_and_writes_nothing(agent: Path, provider: str, key: bytes, says: str) -> None:
    done = run_process(["login", provider], agent, stdin=key)
    assert done.status == 2 and done.one_error_line().startswith("eukhe login: ") and says in done.err, done
    assert not (agent / "auth.json").exists()


def test_login_names_the_providers_it_knows_when_refusing_one(agent: Path) -> None:
    done = run_process(["login", "nosuch"], agent, stdin=b"sk\n")
    line = done.one_error_line()
    assert re.fullmatch(r"eukhe login: unknown provider 'nosuch' \(providers: [^)]*\); nothing written", line), line
    listed = line.split("(providers: ", 1)[1].split(")", 1)[0].split(", ")
    assert listed == sorted(set(listed)) and {"anthropic", "google", "openai"} <= set(listed), listed
    assert all(re.fullmatch(r"[a-z0-9-]+", name) for name in listed), listed  # provider ids, one by one


def test_login_refuses_a_provider_of_models_json(server: LoopbackServer, agent: Path) -> None:
    write_loopback_models(agent, server, {"loop": "openai-completions"})
    done = run_process(["login", "loop"], agent, stdin=b"sk\n")
    assert done.status == 2 and "models.json" in done.one_error_line(), done


def test_login_on_a_terminal_reads_the_key_without_echo(agent: Path, tmp_path: Path) -> None:
    env = eukhe_env(agent)
    screen = Screen(["login", "openai"], env, tmp_path)
    try:
        screen.expect("key for openai: ")
        screen.type("sk-secret-on-a-tty")
        screen.expect("stored")
    finally:
        status = screen.close()
    assert status == 0 and "sk-secret-on-a-tty" not in screen.seen
    assert json.loads((agent / "auth.json").read_text(encoding="utf-8"))["openai"]["key"] == "sk-secret-on-a-tty"


def test_ctrl_c_ends_a_command_with_one_line_and_status_130(agent: Path, tmp_path: Path) -> None:
    screen = Screen(["login", "openai"], eukhe_env(agent), tmp_path)
    try:
        screen.expect("key for openai: ")  # reading the key: Ctrl-C now, the SIGINT a terminal sends
        screen.proc.send_signal(signal.SIGINT)
        screen.expect("eukhe: interrupted\n")
    finally:
        status = screen.close()
    assert status == 130 and "Traceback" not in screen.seen, screen.seen
    assert not (agent / "auth.json").exists()


# -- the lock socket fits for every agent dir length --------------------------------------------------------


def test_memory_works_for_every_agent_dir_length_from_60_to_120(capsys: pytest.CaptureFixture[str]) -> None:
    base = Path(tempfile.mkdtemp(prefix="s", dir="/tmp"))
    try:
        for length in range(60, 121):
            agent = base / ("d" * (length - len(str(base)) - 1))
            assert len(str(agent)) == length
            assert cli.main(["--agent-dir", str(agent), "memory"]) == 0, (length, capsys.readouterr().err)
            with Memory(chat_dir(agent)) as owner, Memory(chat_dir(agent)) as client:
                assert owner.is_owner and not client.is_owner
                assert client.status()["messages"] == 0
        capsys.readouterr()
    finally:
        subprocess.run(["rm", "-rf", str(base)], check=False)


# -- import counts are true ---------------------------------------------------------------------------------


def _sessions(root: Path, count: int, entries: int) -> None:
    sessions = Sessions(root)
    for s in range(count):
        with sessions.create(f"20260101T0000{s:02d}-abcd00{s:02d}") as session:
            session.conversation().commit([user(f"session {s} line {e}") for e in range(entries)])


def test_an_import_counts_only_what_it_appended(agent: Path, tmp_path: Path) -> None:
    from eukhe.memory.importer import import_sessions

    _sessions(tmp_path / "sessions", 2, 3)

    class Busy:
        """The chat while another importer writes to it: a foreign note lands before every call."""

        def __init__(self, memory: Memory) -> None:
            self.memory, self.n = memory, 0

        def __getattr__(self, name: str) -> Any:
            attr = getattr(self.memory, name)

            def call(*args: Any, **kwargs: Any) -> Any:
                self.n += 1
                self.memory.append(f"foreign {self.n}", Kind.NOTE, f"foreign:{self.n}")
                return attr(*args, **kwargs)

            return call if callable(attr) else attr

    with Memory(chat_dir(agent)) as memory:
        done = import_sessions(Busy(memory), Sessions(tmp_path / "sessions"))  # type: ignore[arg-type]
        assert (done.sessions, done.added, done.known) == (2, 6, 0)
        again = import_sessions(Busy(memory), Sessions(tmp_path / "sessions"))  # type: ignore[arg-type]
        assert (again.added, again.known) == (0, 6)


def test_concurrent_imports_report_what_each_appended(agent: Path, tmp_path: Path) -> None:
    _sessions(tmp_path / "sessions", 3, 20)
    argv = [sys.executable, "-m", "eukhe", "memory", "import", "--session-dir", str(tmp_path / "sessions")]
    runs = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=eukhe_env(agent), cwd=tmp_path) for _ in range(3)]
    said = [run.communicate(timeout=120) for run in runs]
    assert all(run.returncode == 0 for run in runs), said
    counts = [int(out.decode().split()[1]) for out, _ in said]
    status = run_process(["memory"], agent)
    assert sum(counts) == 60 and f"messages 60" in status.out, (counts, status.out)


# -- paths may hold any bytes ------------------------------------------------------------------------------------


def test_paths_may_hold_any_bytes(agent: Path, tmp_path: Path) -> None:
    odd = os.fsencode(tmp_path) + b"/\xff\xfe"
    os.mkdir(odd)
    wav = odd + b"/speech.wav"
    with open(wav, "wb") as out:
        out.write(write_wav(Audio(np.zeros(1600, dtype=np.float32), 16000)))
    done = run_process(["transcribe", wav], agent)
    assert done.status == 1 and done.one_error_line().startswith("eukhe transcribe: Unavailable"), done
    done = run_process(["say", "hi", "--out", odd + b"/out.wav"], agent)
    assert done.status == 1 and done.one_error_line().startswith("eukhe say: Unavailable"), done
    bundle = odd + b"/models.bundled.json"
    with open(bundle, "wb") as out:
        out.write((ROOT / "impl/eukhe/inference/catalog.json").read_bytes())
    done = run_process(["model", "list", "--bundled", bundle], agent)
    assert done.status == 0 and "anthropic/" in done.out, done
    done = run_process(["model", "list", "--bundled", odd + b"/missing.json"], agent)
    assert done.status == 2 and "\\udcff\\udcfe/missing.json" in done.one_error_line(), done


def _helps(node: argparse.ArgumentParser) -> Iterator[tuple[str, str]]:
    """Every help text of the command line: (the command's prog, a text) for each command's
    description and each argument's and subcommand's help."""
    for text in (node.description, node.epilog):
        if text:
            yield node.prog, text
    for action in node._actions:
        if action.help and action.help != argparse.SUPPRESS:
            yield node.prog, action.help
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                yield from _helps(child)
            for choice in action._choices_actions:
                if choice.help:
                    yield node.prog, choice.help


def test_help_spells_each_setting_as_the_seed_declares_it() -> None:
    """A setting a help text names (one whose id has a capital or a dot: defaultThinkingLevel,
    memory.model) is spelled as the seeds' table of cvars spells it (spec/oracles/cvar.py)."""
    from spec.oracles.cvar import TABLE

    declared = {row[0].lower(): row[0] for row in TABLE if row[0] != row[0].lower() or "." in row[0]}
    named = 0
    for prog, text in _helps(cli.parser()):
        for word in re.findall(r"[A-Za-z][A-Za-z0-9.]*[A-Za-z0-9]", text):
            if word.lower() in declared:
                named += 1
                assert word == declared[word.lower()], f"{prog}: the help says {word}, the setting is {declared[word.lower()]}: {text!r}"
    assert named >= 10  # the helps do name settings: defaultProvider, defaultModel, memory.model...


def test_every_command_and_every_argument_says_what_it_is() -> None:
    """`--help` explains each command and each of its arguments: none is listed bare. The one
    command left unlisted is the tiny worker, which eukhe launches itself (inference.md S9): its
    arguments are explained all the same."""

    def unexplained(node: argparse.ArgumentParser) -> Iterator[str]:
        for action in node._actions:
            if isinstance(action, argparse._SubParsersAction):
                helped = {choice.dest for choice in action._choices_actions if choice.help and choice.help != argparse.SUPPRESS}
                for name, child in action.choices.items():
                    if name not in helped:
                        yield f"{node.prog} {name}"
                    yield from unexplained(child)
            elif not action.help or action.help == argparse.SUPPRESS:
                yield f"{node.prog} {'/'.join(action.option_strings) or action.dest}"

    assert list(unexplained(cli.parser())) == ["eukhe tiny-worker"]


def test_agent_serve_takes_the_settings_of_the_project_it_runs_in(agent: Path, tmp_path: Path) -> None:
    """The agent's project is its working directory (control.md S4b: the project layer,
    .eukhe/settings.json): a setting there is the session's, and not elsewhere."""
    project = tmp_path / "project"
    (project / ".eukhe").mkdir(parents=True)
    (project / ".eukhe" / "settings.json").write_text('{"serviceTier": "flex"}', encoding="utf-8")
    with Sessions(agent / "sessions").create("s1"):
        pass
    for cwd, tier in ((project, "flex"), (tmp_path, "auto")):
        serving = subprocess.Popen(
            [sys.executable, "-m", "eukhe", "agent", "serve", "--session", "s1"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=eukhe_env(agent), cwd=cwd,
        )
        try:
            assert serving.stdout is not None
            ready, _, _ = select.select([serving.stdout], [], [], 60)  # its first line: the session's state, sent at once
            assert ready, "no state from the agent within 60 s"
            state = json.loads(serving.stdout.readline())
        finally:
            serving.terminate()
            assert serving.wait(60) == 0
        assert (state["type"], state["switches"]["serviceTier"]) == ("state", tier), state


def test_help_texts_read_as_argparses_own() -> None:
    """A command's or an argument's help is a phrase starting lower-case, as argparse's own ("show
    this help message and exit"); a command's description is sentences (or starts with the
    program's name); no help shouts (three capitalised words in a row)."""
    kinds = 0
    for prog, text in _helps(cli.parser()):
        described = text in (_description(prog),)
        if described:
            kinds |= 1
            assert text.startswith("eukhe") or re.match(r"[A-Z][a-z]", text), f"{prog}: {text!r}"
        else:
            kinds |= 2
            assert not text[0].isupper(), f"{prog}: {text!r}"
        assert not re.search(r"\b[A-Z]{2,}[A-Z.]*\s+[A-Z]{2,}[A-Z.]*\s+[A-Z]{2,}", text), f"{prog}: {text!r}"
    assert kinds == 3


def _description(prog: str) -> str | None:
    node = cli.parser()
    for word in prog.split()[1:]:
        node = next(a for a in node._actions if isinstance(a, argparse._SubParsersAction)).choices[word]
    return node.description
