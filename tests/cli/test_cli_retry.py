"""Retries on the command line: `eukhe ask` prints each retry as one line on stderr, `eukhe chat`
as one row, naming the attempt, the provider, the error's kind and the wait. The loopback server
scripts 429, 500, 503 and 529 answers and cut streams.

No test sleeps: the subprocess runs get hints of 0 s (Retry-After: 0, retry-after-ms: 0) or
retry.baseDelayMs 0 in the agent's settings.json; the in-process run of `eukhe ask` replaces the
retries' clock (``eukhe.inference.wire.retry.CLOCK``) with one that records the waits."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from loopback_models import write_loopback_models
from cli_support import InProcess, run_process

from eukhe.inference.wire import retry
from spec.loopback import Cut, Fail, LoopbackServer, Stream, Text

PROVIDERS = {"loop-chat": "openai-completions", "loop-ant": "anthropic-messages", "loop-goo": "google-generative-ai"}
RATE = '{"error": {"type": "rate_limit_error", "message": "slow down"}}'
OVERLOADED = '{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}'
NOW = (("retry-after", "0"),)
LINE = re.compile(r"^eukhe ask: retry (\d+)/(\d+): ([\w-]+): (.+); waiting (\d+\.\d) s$")


class FakeClock:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as running:
        yield running


@pytest.fixture
def loop_agent(agent: Path, server: LoopbackServer) -> Path:
    return write_loopback_models(agent, server, PROVIDERS)


def settings(agent: Path, **retry_settings: Any) -> None:
    (agent / "settings.json").write_text(json.dumps({"retry": retry_settings}), encoding="utf-8")


@pytest.mark.parametrize("provider", list(PROVIDERS))
def test_ask_prints_one_line_per_retry(server: LoopbackServer, loop_agent: Path, provider: str) -> None:
    server.script(Fail(429, RATE, NOW), Fail(503, '{"error": {"type": "unavailable"}}', (("retry-after-ms", "0"),)), Fail(529, OVERLOADED, NOW),
                  Stream([Text("at last")]))
    done = run_process(["ask", "--provider", provider, "hi"], loop_agent)
    assert (done.status, done.out) == (0, "at last\n"), done
    lines = done.err.splitlines()
    assert len(lines) == 3 and "Traceback" not in done.err
    shown = [LINE.match(line) for line in lines]
    assert all(shown), lines
    kinds = ["HTTP 429 rate_limit_error", "HTTP 503 unavailable", "HTTP 529 overloaded_error"]
    assert [m.groups() for m in shown if m] == [(str(n), "3", provider, kinds[n - 1], "0.0") for n in (1, 2, 3)]
    assert len(server.requests) == 4


def test_ask_shows_the_waits_it_takes(server: LoopbackServer, loop_agent: Path, inproc: InProcess, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = FakeClock()
    monkeypatch.setattr(retry, "CLOCK", clock)
    server.script(Fail(429, RATE, (("retry-after", "7"),)), Fail(529, OVERLOADED), Fail(500), Stream([Text("ok")]))
    done = inproc("ask", "--provider", "loop-ant", "hi")
    assert (done.status, done.out) == (0, "ok\n"), done
    assert clock.waits[0] == 7.0 and 3.0 <= clock.waits[1] <= 4.0 and 6.0 <= clock.waits[2] <= 8.0  # the hint; 2^n s less jitter
    assert done.err.splitlines() == [
        "eukhe ask: retry 1/3: loop-ant: HTTP 429 rate_limit_error; waiting 7.0 s",
        f"eukhe ask: retry 2/3: loop-ant: HTTP 529 overloaded_error; waiting {clock.waits[1]:.1f} s",
        f"eukhe ask: retry 3/3: loop-ant: HTTP 500 server_error; waiting {clock.waits[2]:.1f} s",
    ]


def test_ask_gives_up_after_the_set_retries(server: LoopbackServer, loop_agent: Path) -> None:
    settings(loop_agent, maxRetries=1, baseDelayMs=0)
    server.script(Fail(503), Fail(503, '{"error": {"type": "server_error", "message": "still down"}}'), Stream([Text("never")]))
    done = run_process(["ask", "--provider", "loop-chat", "hi"], loop_agent)
    assert done.status == 1 and done.out == ""
    assert done.err.splitlines() == [
        "eukhe ask: retry 1/1: loop-chat: HTTP 503 server_error; waiting 0.0 s",
        'eukhe ask: loop-chat: HTTP 503 server_error: {"error": {"type": "server_error", "message": "still down"}}',
    ]
    assert len(server.requests) == 2


def test_ask_with_auto_retry_off_does_not_retry(server: LoopbackServer, loop_agent: Path) -> None:
    settings(loop_agent, enabled=False)
    server.script(Fail(429, RATE, NOW), Stream([Text("never")]))
    done = run_process(["ask", "--provider", "loop-chat", "hi"], loop_agent)
    assert done.status == 1 and done.one_error_line().startswith("eukhe ask: loop-chat: HTTP 429 rate_limit_error")
    assert len(server.requests) == 1


@pytest.mark.parametrize("status", [400, 401])
def test_ask_never_retries_a_client_error(server: LoopbackServer, loop_agent: Path, status: int) -> None:
    server.script(Fail(status, '{"error": {"type": "invalid_request_error", "message": "no"}}'), Stream([Text("never")]))
    done = run_process(["ask", "--provider", "loop-chat", "hi"], loop_agent)
    assert done.status == 1 and done.one_error_line().startswith(f"eukhe ask: loop-chat: HTTP {status} invalid_request_error")
    assert len(server.requests) == 1


def test_ask_retries_a_cut_before_the_reply_but_not_after_it(server: LoopbackServer, loop_agent: Path) -> None:
    settings(loop_agent, baseDelayMs=0)
    server.script(Stream([Cut()]), Stream([Text("whole")]))
    done = run_process(["ask", "--provider", "loop-chat", "hi"], loop_agent)
    assert (done.status, done.out) == (0, "whole\n"), done
    assert done.err == "eukhe ask: retry 1/3: loop-chat: stream cut; waiting 0.0 s\n"
    server.script(Stream([Text("half"), Cut()]), Stream([Text("a second reply")]))
    done = run_process(["ask", "--provider", "loop-chat", "hi"], loop_agent)
    assert done.status == 1 and done.out == "half\n"
    assert done.one_error_line().startswith("eukhe ask: loop-chat: the connection to http://127.0.0.1:")
    assert len(server.requests) == 3


@pytest.mark.parametrize("provider", ["loop-chat", "loop-ant"])
def test_chat_shows_one_row_per_retry(server: LoopbackServer, loop_agent: Path, provider: str) -> None:
    settings(loop_agent, baseDelayMs=0)
    server.script(Fail(529, OVERLOADED, NOW), Fail(500), Stream([Text("Here I am.")]))
    done = run_process(["chat", "--provider", provider], loop_agent, stdin=b"hello\n/quit\n")
    assert done.status == 0, done
    # the input is a pipe, not echoed: the first row follows the prompt "> " on its line
    rows = [line.removeprefix("> ") for line in done.out.splitlines() if line.removeprefix("> ").startswith("[retry")]
    assert rows == [f"[retry 1/3: {provider}: HTTP 529 overloaded_error; waiting 0.0 s]", f"[retry 2/3: {provider}: HTTP 500 server_error; waiting 0.0 s]"]
    assert "Here I am." in done.out.split(rows[-1], 1)[1]
    assert done.err == "" and len(server.requests) == 3


def test_chat_sends_a_cut_after_content_again_with_a_note(server: LoopbackServer, loop_agent: Path) -> None:
    """A stream cut after its reply began is not a wire retry: the agent's loop sends the request
    again at once with a note (inference.md S6.5, S6.10), one of the generation's notes."""
    server.script(Stream([Text("half"), Cut()]), Stream([Text("whole")]))
    done = run_process(["chat", "--provider", "loop-chat"], loop_agent, stdin=b"hello\n/quit\n")
    assert done.status == 0, done
    assert "[retry" not in done.out and "half" in done.out and "[note 1/8: cut]" in done.out
    assert "whole" in done.out.split("[note 1/8: cut]", 1)[1] and done.err == ""
    first, noted = server.wait_requests(2)
    assert "cut off" in json.dumps(noted.body) and "cut off" not in json.dumps(first.body)
