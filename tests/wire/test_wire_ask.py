"""`eukhe ask` end to end: a real `python -m eukhe` process against the loopback server, the
provider's base URL pointed at it through the agent dir's models.json; errors are one line
naming the provider and the reason, with the exit status of the one error path (2 bad input,
1 environment)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from spec.loopback import Call, Fail, LoopbackServer, Stall, Stream, Text, Thinking, base_url

API_OF = {"loop-chat": "openai-completions", "loop-resp": "openai-responses", "loop-ant": "anthropic-messages", "loop-goo": "google-generative-ai"}


@dataclass(frozen=True)
class Done:
    status: int
    out: str
    err: str

    def error_line(self) -> str:
        lines = self.err.splitlines()
        assert len(lines) == 1 and "Traceback" not in self.err, self.err
        return lines[0]


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    path = tmp_path / "agent"
    path.mkdir()
    return path


def write_models(agent: Path, providers: dict[str, Any]) -> None:
    (agent / "models.json").write_text(json.dumps({"providers": providers}), encoding="utf-8")


def loop_providers(server: LoopbackServer) -> dict[str, Any]:
    return {
        name: {"baseUrl": base_url(server, api), "apiKey": f"key-{name}", "api": api, "models": [{"id": f"{name}-model", "reasoning": True}]}
        for name, api in API_OF.items()
    }


def ask(agent: Path, *argv: str, **env: str) -> Done:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("EUKHE_") and not k.endswith("_API_KEY")}
    environ.update({"EUKHE_AGENT_DIR": str(agent), "HOME": str(agent.parent), **env})
    done = subprocess.run([sys.executable, "-m", "eukhe", "ask", *argv], capture_output=True, env=environ, cwd=agent.parent, timeout=120, check=False)
    return Done(done.returncode, done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace"))


@pytest.mark.parametrize("provider", list(API_OF))
def test_ask_streams_one_reply_with_its_tool_calls(server: LoopbackServer, agent: Path, provider: str) -> None:
    write_models(agent, loop_providers(server))
    server.script(Stream([Thinking("pondering"), Text("Hello "), Text("there."), Call("read", '{"path": "a.txt"}', "call_1")], stop="toolUse"))
    done = ask(agent, "--provider", provider, "--thinking", "high", "--show-thinking", "say hi")
    assert (done.status, done.err) == (0, "")
    assert done.out == '[thinking] pondering\n[answer] Hello there.\n[tool call] read {"path": "a.txt"}\n[stop: toolUse]\n'
    got = server.wait_requests(1)[0]
    assert got.api == API_OF[provider]
    assert f"key-{provider}" in json.dumps(got.headers)
    assert "say hi" in json.dumps(got.body)


def test_ask_reads_the_saved_default_provider_and_model(server: LoopbackServer, agent: Path) -> None:
    providers = loop_providers(server)
    providers["loop-chat"]["models"].append({"id": "second"})
    write_models(agent, providers)
    (agent / "settings.json").write_text(json.dumps({"defaultProvider": "loop-chat", "defaultModel": "second"}), encoding="utf-8")
    server.script(Stream([Text("from the default")]))
    done = ask(agent, "hello")
    assert (done.status, done.out) == (0, "from the default\n")
    assert server.last.body["model"] == "second"


def test_a_built_in_provider_pointed_at_loopback_by_models_json(server: LoopbackServer, agent: Path) -> None:
    """models.json's providers.anthropic replaces the catalog entry's base URL for the models it
    lists; the provider's default model comes from the rulebook (provider_defaults)."""
    write_models(agent, {"anthropic": {"baseUrl": server.url, "apiKey": "sk-ant-loop", "api": "anthropic-messages",
                                       "models": [{"id": "claude-opus-4-6", "reasoning": True}]}})
    server.script(Stream([Text("adaptive")]))
    done = ask(agent, "--provider", "anthropic", "--thinking", "high", "hi")
    assert (done.status, done.out) == (0, "adaptive\n")
    body = server.last.body
    assert body["model"] == "claude-opus-4-6" and body["thinking"] == {"type": "adaptive"}
    assert server.last.headers["authorization"] == "Bearer sk-ant-loop"


def no_retries(agent: Path) -> None:
    """Auto retry off (retry.enabled): the request's own error is the one line (retries:
    tests/cli/test_cli_retry.py)."""
    (agent / "settings.json").write_text(json.dumps({"retry": {"enabled": False}}), encoding="utf-8")


def test_a_provider_error_names_the_provider_and_the_status(server: LoopbackServer, agent: Path) -> None:
    write_models(agent, loop_providers(server))
    no_retries(agent)
    server.script(Fail(503, '{"error": {"type": "overloaded", "message": "try later"}}'))
    done = ask(agent, "--provider", "loop-ant", "hi")
    assert done.status == 1
    assert done.error_line().startswith("eukhe ask: loop-ant: HTTP 503 overloaded: ")


def test_a_stall_past_the_timeout_is_an_environment_fault(server: LoopbackServer, agent: Path) -> None:
    write_models(agent, loop_providers(server))
    server.script(Stream([Text("partial"), Stall()]))
    done = ask(agent, "--provider", "loop-resp", "--timeout", "0.5", "hi")
    assert done.status == 1 and done.out == "partial\n"
    assert done.error_line().startswith("eukhe ask: loop-resp: no answer from http://127.0.0.1:")
    server.release()


def test_a_refused_connection_is_an_environment_fault(agent: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    write_models(agent, {"dead": {"baseUrl": f"http://127.0.0.1:{port}/v1", "apiKey": "k", "models": [{"id": "m"}]}})
    no_retries(agent)
    done = ask(agent, "--provider", "dead", "hi")
    assert done.status == 1
    assert done.error_line().startswith(f"eukhe ask: dead: cannot connect to http://127.0.0.1:{port}/v1/chat/completions")


def test_a_cut_stream_is_an_environment_fault(server: LoopbackServer, agent: Path) -> None:
    write_models(agent, loop_providers(server))
    server.script(Stream([Text("half")], end=False))
    done = ask(agent, "--provider", "loop-goo", "hi")
    assert done.status == 1 and done.error_line().startswith("eukhe ask: loop-goo: the stream ended before its end event")


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--provider", "nope", "hi"], "eukhe ask: unknown provider 'nope' (providers: "),
        (["hi"], "eukhe ask: no provider: pass --provider or set defaultProvider"),
        (["--provider", "loop-chat", "   "], "eukhe ask: the text is empty"),
        (["--provider", "loop-chat", "--thinking", "huge", "hi"], "eukhe ask: --thinking: "),
        (["--provider", "loop-chat", "--timeout", "0", "hi"], "eukhe ask: --timeout must be a positive number of seconds"),
        (["--provider", "anthropic", "--model", "claude-9", "hi"], "eukhe ask: provider anthropic has no model 'claude-9'"),
    ],
)
def test_bad_input_is_exit_2(server: LoopbackServer, agent: Path, argv: list[str], says: str,
                             monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """In process (the one error path of eukhe.cli.main), no request made."""
    from eukhe import cli

    write_models(agent, loop_providers(server))
    for name in [k for k in os.environ if k.startswith("EUKHE_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("EUKHE_AGENT_DIR", str(agent))
    monkeypatch.setenv("HOME", str(agent.parent))
    monkeypatch.chdir(agent.parent)
    status = cli.main(["ask", *argv])
    captured = capsys.readouterr()
    done = Done(status, captured.out, captured.err)
    assert done.status == 2 and done.error_line().startswith(says), done.err
    assert server.requests == []


def test_a_provider_without_credentials_fails_before_any_request(server: LoopbackServer, agent: Path,
                                                                   monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from eukhe import cli

    for name in [k for k in os.environ if k.startswith("EUKHE_") or k == "GOOGLE_API_KEY"]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("EUKHE_AGENT_DIR", str(agent))
    status = cli.main(["ask", "--provider", "google", "hi"])
    err = capsys.readouterr().err
    assert status == 1
    assert err == "eukhe ask: provider google has no credentials (auth.json, or GOOGLE_API_KEY); run `eukhe login google`\n"


def test_the_key_comes_from_auth_json_or_the_environment(server: LoopbackServer, agent: Path) -> None:
    write_models(agent, {"xai": {"baseUrl": base_url(server, "openai-completions"), "apiKey": "from-models", "api": "openai-completions",
                                 "models": [{"id": "grok-4.6", "reasoning": True}]}})
    server.script(Stream([Text("a")]))
    assert ask(agent, "--provider", "xai", "hi").status == 0
    assert server.last.headers["authorization"] == "Bearer from-models"
    # a catalog provider with no models.json entry: auth.json (a string or an object), else <PROVIDER>_API_KEY
    from eukhe.inference.resolve import _credential

    (agent / "auth.json").write_text(json.dumps({"openai": {"type": "api_key", "key": "from-auth"}, "xai": "plain"}), encoding="utf-8")
    assert _credential(agent, "openai", None) == "from-auth"
    assert _credential(agent, "xai", None) == "plain"
    os.environ.pop("OPENAI_CODEX_API_KEY", None)
    assert _credential(agent, "openai-codex", None) == ""
    os.environ["OPENAI_CODEX_API_KEY"] = "from-env"
    try:
        assert _credential(agent, "openai-codex", None) == "from-env"
    finally:
        del os.environ["OPENAI_CODEX_API_KEY"]


def test_a_looping_reply_is_cut_by_the_repetition_guard(server: LoopbackServer, agent: Path) -> None:
    """S6.5 through `eukhe ask`: one line k times is cut; the error names the provider."""
    pytest.importorskip("eukhe.inference.guard")
    write_models(agent, loop_providers(server))
    server.script(Stream([Text("same line\n")] * 100))
    done = ask(agent, "--provider", "loop-chat", "hi")
    assert done.status == 1
    assert done.error_line().startswith("eukhe ask: loop-chat: stream_repeating")
    assert done.out.count("same line") < 100  # the stream stopped at the cut (the delta that cut is not shown)


def test_the_loopback_server_runs_as_its_own_process(agent: Path, tmp_path: Path) -> None:
    """python -m spec.loopback: a script file, the URL on stdout, the requests recorded, stdin's
    end stops it; `eukhe ask` in another process talks to it."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"parts": [{"thinking": "t"}, {"text": "from afar"}, {"call": {"name": "read", "arguments": "{}", "id": "c9"}}], "stop": "toolUse"},
                                  {"fail": 418, "body": "{\"error\": {\"type\": \"teapot\"}}"}]), encoding="utf-8")
    record = tmp_path / "requests.jsonl"
    server = subprocess.Popen([sys.executable, "-m", "spec.loopback", "--script", str(script), "--record", str(record)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=Path(__file__).resolve().parents[2])
    try:
        assert server.stdout is not None and server.stdin is not None
        url = server.stdout.readline().decode().strip()
        assert url.startswith("http://127.0.0.1:")
        write_models(agent, {"far": {"baseUrl": url, "apiKey": "k", "api": "anthropic-messages", "models": [{"id": "m"}]}})
        done = ask(agent, "--provider", "far", "hello")
        assert (done.status, done.out) == (0, 'from afar\n[tool call] read {}\n[stop: toolUse]\n')
        failed = ask(agent, "--provider", "far", "again")
        assert failed.status == 1 and failed.error_line().startswith("eukhe ask: far: HTTP 418 teapot")
        lines = [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]
        assert [line["path"] for line in lines] == ["/v1/messages", "/v1/messages"]
        assert lines[0]["body"]["messages"][0]["content"][0]["text"] == "hello"
    finally:
        if server.stdin is not None:
            server.stdin.close()
        server.wait(timeout=30)
    assert server.returncode == 0
