"""Retries of a wire request (eukhe.inference.wire.retry) over the loopback server: scripted 429,
500, 503 and 529 answers, error events and cut streams, through the real clients of the four
APIs. The clock is a fake that records each wait and returns at once (no test sleeps); the
jitter's random source is a seeded ``random.Random``, so the expected waits are computed from
the same seed."""

from __future__ import annotations

import asyncio
import email.utils
import random
import socket
import time
from typing import Any

import pytest
from wire_support import APIS, ask, model

from eukhe.inference.wire import client_for, collect
from eukhe.inference.wire.events import (
    ConnectFailed,
    Event,
    PromptBlocked,
    ProviderError,
    StreamCut,
    TextDelta,
    WireError,
)
from eukhe.inference.wire.plan import WireModel
from eukhe.inference.wire.pool import Pool
from eukhe.inference.wire.retry import MAX_DELAY_MS, Policy, Retry, Retrying, WaitTooLong
from spec.loopback import Body, Call, Cut, ErrorEvent, Fail, LoopbackServer, Progress, Stream, Text, Thinking

RATE = '{"error": {"type": "rate_limit_error", "message": "slow down"}}'
OVERLOADED = '{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}'
SEED = 7


class FakeClock:
    """Records each wait; sleeps not at all."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)


class Run:
    """One request through a Retrying client on a pool, to its reply or its error."""

    def __init__(self, wire: WireModel, policy: Policy | None = None, seed: int = SEED) -> None:
        self.wire = wire
        self.policy = policy or Policy()
        self.clock = FakeClock()
        self.retries: list[Retry] = []
        self.events: list[Event] = []
        self.seed = seed

    def __call__(self) -> Any:
        async def go() -> Any:
            async with Pool() as pool:
                client = Retrying(client_for(self.wire, timeout=10.0, pool=pool), self.policy, clock=self.clock,
                                  random=random.Random(self.seed).random, notify=self.retries.append)

                async def watched() -> Any:
                    async for event in client.stream(ask()):
                        self.events.append(event)
                        yield event

                return await collect(watched())

        return asyncio.run(go())

    def fails(self) -> WireError:
        with pytest.raises(WireError) as caught:
            self()
        return caught.value


def draws(n: int, seed: int = SEED) -> list[float]:
    source = random.Random(seed)
    return [source.random() for _ in range(n)]


@pytest.mark.parametrize("api", APIS)
def test_a_429_waits_the_seconds_of_its_retry_after(server: LoopbackServer, api: str) -> None:
    server.script(Fail(429, RATE, (("retry-after", "7"),)), Stream([Text("ok")]))
    run = Run(model(server, api))
    assert run().text == "ok"
    assert run.clock.waits == [7.0]
    assert len(server.requests) == 2 and server.requests[0].body == server.requests[1].body  # the same request again
    assert [r.line() for r in run.retries] == ["retry 1/3: loop: HTTP 429 rate_limit_error; waiting 7.0 s"]


def test_the_hint_in_milliseconds_and_as_a_date_is_honoured(server: LoopbackServer) -> None:
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    server.script(Fail(529, OVERLOADED, (("retry-after-ms", "1500"),)), Fail(429, RATE, (("retry-after", later),)), Stream([Text("ok")]))
    run = Run(model(server, "anthropic-messages"))
    assert run().text == "ok"
    assert run.clock.waits[0] == 1.5
    assert 27.0 < run.clock.waits[1] <= 30.0  # the date's seconds from now (whole seconds in the header)
    assert [r.error.status for r in run.retries if isinstance(r.error, ProviderError)] == [529, 429]


def test_googles_retry_info_is_the_hint(server: LoopbackServer) -> None:
    body = ('{"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "quota", "details": '
            '[{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "12.5s"}]}}')
    server.script(Fail(429, body), Stream([Text("ok")]))
    run = Run(model(server, "google-generative-ai"))
    assert run().text == "ok"
    assert run.clock.waits == [12.5]
    assert run.retries[0].line() == "retry 1/3: loop: HTTP 429 RESOURCE_EXHAUSTED; waiting 12.5 s"


@pytest.mark.parametrize("api", APIS)
def test_500_503_529_back_off_exponentially_with_jitter(server: LoopbackServer, api: str) -> None:
    server.script(Fail(500), Fail(503, '{"error": {"type": "unavailable"}}'), Fail(529, OVERLOADED), Stream([Text("at last")]))
    run = Run(model(server, api))
    assert run().text == "at last"
    r = draws(3)
    assert run.clock.waits == pytest.approx([2.0 * (1 - 0.25 * r[0]), 4.0 * (1 - 0.25 * r[1]), 8.0 * (1 - 0.25 * r[2])])
    for wait, full in zip(run.clock.waits, (2.0, 4.0, 8.0)):
        assert 0.75 * full <= wait <= full
    assert [r.attempt for r in run.retries] == [1, 2, 3] and len(server.requests) == 4
    assert [getattr(r.error, "status", None) for r in run.retries] == [500, 503, 529]


def test_the_jitter_stays_within_a_quarter_for_every_draw() -> None:
    policy = Policy()
    for draw in (0.0, 0.25, 0.5, 0.999999):
        for retry, full in ((1, 2.0), (2, 4.0), (3, 8.0), (10, 60.0), (200, 60.0)):
            wait = policy.backoff(retry, draw)
            assert 0.75 * full <= wait <= full
    assert policy.backoff(1, 0.0) == 2.0 and policy.backoff(1, 0.5) == 1.75


def test_the_backoff_is_capped(server: LoopbackServer) -> None:
    server.script(*[Fail(503)] * 5, Stream([Text("ok")]))
    run = Run(model(server, "openai-completions"), Policy(max_retries=5, base_delay_ms=20_000))
    assert run().text == "ok"
    cap = MAX_DELAY_MS / 1000
    assert 15.0 <= run.clock.waits[0] <= 20.0 and 30.0 <= run.clock.waits[1] <= 40.0
    assert all(0.75 * cap <= wait <= cap for wait in run.clock.waits[2:]) and len(run.clock.waits) == 5


def test_a_hint_over_the_cap_fails_at_once(server: LoopbackServer) -> None:
    server.script(Fail(429, RATE, (("retry-after", "3600"),)), Stream([Text("never")]))
    error = Run(model(server, "openai-responses")).fails()
    assert isinstance(error, WaitTooLong) and not error.retryable
    assert "asks to wait 3600 s, more than the 60 s a retry waits: not retried" in str(error)
    assert isinstance(error.error, ProviderError) and error.error.status == 429
    assert len(server.requests) == 1


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_a_client_error_is_never_retried(server: LoopbackServer, status: int) -> None:
    server.script(Fail(status, '{"error": {"type": "invalid_request_error", "message": "no"}}'), Stream([Text("never")]))
    run = Run(model(server, "anthropic-messages"))
    error = run.fails()
    assert isinstance(error, ProviderError) and error.status == status
    assert len(server.requests) == 1 and run.clock.waits == [] and run.retries == []


def test_a_blocked_prompt_is_never_retried(server: LoopbackServer) -> None:
    server.script(Body(b'data: {"promptFeedback": {"blockReason": "SAFETY"}}\r\n\r\n'), Stream([Text("never")]))
    run = Run(model(server, "google-generative-ai"))
    assert isinstance(run.fails(), PromptBlocked)
    assert len(server.requests) == 1 and run.clock.waits == []


def test_the_providers_x_should_retry_header_wins(server: LoopbackServer) -> None:
    server.script(Fail(500, headers=(("x-should-retry", "false"),)))
    run = Run(model(server, "openai-completions"))
    assert isinstance(run.fails(), ProviderError) and len(server.requests) == 1 and run.clock.waits == []
    server.script(Fail(400, headers=(("x-should-retry", "true"),)), Stream([Text("ok")]))
    run = Run(model(server, "openai-completions"))
    assert run().text == "ok" and len(server.requests) == 3 and len(run.clock.waits) == 1


@pytest.mark.parametrize("retries", [0, 1, 3, 5])
def test_the_retries_are_capped_by_the_setting(server: LoopbackServer, retries: int) -> None:
    server.script(*[Fail(503, '{"error": {"type": "unavailable"}}')] * 7)
    run = Run(model(server, "openai-completions"), Policy(max_retries=retries))
    error = run.fails()
    assert isinstance(error, ProviderError) and error.status == 503
    assert len(server.requests) == retries + 1 and len(run.clock.waits) == retries
    assert [r.line().split(":")[0] for r in run.retries] == [f"retry {n}/{retries}" for n in range(1, retries + 1)]


def test_auto_retry_off_sends_once(server: LoopbackServer) -> None:
    server.script(Fail(529, OVERLOADED), Stream([Text("never")]))
    run = Run(model(server, "anthropic-messages"), Policy(enabled=False))
    assert isinstance(run.fails(), ProviderError) and len(server.requests) == 1 and run.clock.waits == []


@pytest.mark.parametrize("api", APIS)
def test_a_stream_cut_before_any_content_is_retried(server: LoopbackServer, api: str) -> None:
    server.script(Stream([Cut()]), Stream([], end=False), Stream([Text("whole")]))
    run = Run(model(server, api))
    assert run().text == "whole"
    assert len(server.requests) == 3 and len(run.clock.waits) == 2
    assert all(isinstance(r.error, StreamCut) for r in run.retries)
    assert run.retries[0].line().startswith("retry 1/3: loop: stream cut; waiting ")


def test_prompt_progress_is_not_part_of_the_reply(server: LoopbackServer) -> None:
    server.script(Stream([Progress(100, 0, 50), Cut()]), Stream([Text("whole")]))
    run = Run(model(server, "openai-completions"))
    assert run().text == "whole" and len(run.clock.waits) == 1


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("first", [Text("half an ans"), Thinking("let me"), Call("read", '{"path": "a"}')], ids=["text", "thinking", "call"])
def test_a_stream_cut_after_content_is_not_replayed(server: LoopbackServer, api: str, first: Any) -> None:
    if api == "google-generative-ai" and isinstance(first, Call):
        first = Text("half")  # Google sends a call whole, in its last chunk: no part of it precedes a cut
    server.script(Stream([first, Cut()]), Stream([Text("a second reply")]))
    run = Run(model(server, api))
    error = run.fails()
    assert isinstance(error, StreamCut)
    assert len(server.requests) == 1 and run.clock.waits == [] and run.retries == []
    assert run.events, "the part of the reply that came was delivered before the error"
    assert not any(isinstance(e, TextDelta) and e.text == "a second reply" for e in run.events)


@pytest.mark.parametrize("api", ["anthropic-messages", "openai-responses"])
def test_an_error_event_before_content_is_retried_after_content_it_is_not(server: LoopbackServer, api: str) -> None:
    server.script(Stream([ErrorEvent("overloaded_error", "Overloaded")]), Stream([Text("ok")]))
    run = Run(model(server, api))
    assert run().text == "ok" and len(run.clock.waits) == 1
    assert run.retries[0].line().startswith("retry 1/3: loop: error event overloaded_error; waiting ")
    server.script(Stream([Text("so far"), ErrorEvent("overloaded_error", "Overloaded")]), Stream([Text("never")]))
    run = Run(model(server, api))
    error = run.fails()
    assert isinstance(error, ProviderError) and error.status is None and run.clock.waits == []


def test_a_refused_connection_is_retried_then_fails() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    wire = WireModel("dead", "m", "openai-completions", f"http://127.0.0.1:{port}/v1", "k")
    run = Run(wire, Policy(max_retries=2, base_delay_ms=100))
    assert isinstance(run.fails(), ConnectFailed)
    r = draws(2)
    assert run.clock.waits == pytest.approx([0.1 * (1 - 0.25 * r[0]), 0.2 * (1 - 0.25 * r[1])])
    assert [x.line().split(";")[0] for x in run.retries] == ["retry 1/2: dead: no connection", "retry 2/2: dead: no connection"]


def test_policy_reads_the_seeds_settings() -> None:
    values = {"retry.enabled": False, "retry.maxRetries": 5, "retry.baseDelayMs": 250}
    assert Policy.from_settings(values.__getitem__) == Policy(False, 5, 250)
    from eukhe.settings.cvar_table import table

    defaults = {c.id: c.default for c in table() if c.id.startswith("retry.")}
    assert Policy.from_settings(defaults.__getitem__) == Policy(True, 3, 2000)


def test_a_json_script_carries_the_failures_headers(server: LoopbackServer) -> None:
    """The loopback as its own process (``python -m spec.loopback --script``) reads the same form."""
    from spec.loopback import script_of

    server.script(script_of({"fail": 429, "body": RATE, "headers": {"retry-after": "3"}}), Stream([Text("ok")]))
    run = Run(model(server, "openai-completions"))
    assert run().text == "ok" and run.clock.waits == [3.0]
