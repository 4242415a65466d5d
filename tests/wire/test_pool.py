"""One pooled HTTP client per provider for a chat or an ask (eukhe.inference.wire.pool): the
loopback server counts the TCP connections it accepted (``LoopbackServer.connections``).

Requests through one pool reuse one kept-alive connection; without a pool each request had a
client, and a connection, of its own. `eukhe chat` (a real process on a pseudo-terminal: several
turns, one with a tool round) and `eukhe ask` (with a retried 429) each use one connection.
Proxies come from the environment (a second loopback server plays the proxy)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from loopback_models import write_loopback_models
from wire_support import APIS, ask, model

from eukhe.inference.wire import client_for, collect
from eukhe.inference.wire.plan import WireModel
from eukhe.inference.wire.pool import Pool, PoolClosed, http2_available
from spec.loopback import Call, Fail, LoopbackServer, Stream, Text

PROVIDERS = {"loop-chat": "openai-completions", "loop-ant": "anthropic-messages"}


def replies(wire: WireModel, n: int, pool: Pool | None) -> list[str]:
    async def go() -> list[str]:
        client = client_for(wire, timeout=10.0, pool=pool)
        return [(await collect(client.stream(ask(f"q{k}")))).text for k in range(n)]

    return asyncio.run(go())


@pytest.mark.parametrize("api", APIS)
def test_three_calls_through_a_pool_use_one_connection(server: LoopbackServer, api: str) -> None:
    server.script(*(Stream([Text(f"a{k}")]) for k in range(3)))

    async def go() -> list[str]:
        async with Pool() as pool:
            client = client_for(model(server, api), timeout=10.0, pool=pool)
            return [(await collect(client.stream(ask(f"q{k}")))).text for k in range(3)]

    assert asyncio.run(go()) == ["a0", "a1", "a2"]
    assert len(server.requests) == 3 and server.connections == 1


def test_without_a_pool_each_call_has_a_connection_of_its_own(server: LoopbackServer) -> None:
    server.script(*(Stream([Text(f"a{k}")]) for k in range(3)))
    assert replies(model(server, "openai-completions"), 3, None) == ["a0", "a1", "a2"]
    assert server.connections == 3


def test_one_client_per_provider(server: LoopbackServer) -> None:
    server.script(*(Stream([Text(f"a{k}")]) for k in range(4)))

    async def go() -> tuple[bool, bool]:
        async with Pool() as pool:
            first = client_for(model(server, "openai-completions", provider="one"), timeout=10.0, pool=pool)
            again = client_for(model(server, "openai-completions", provider="one", model_id="other"), timeout=10.0, pool=pool)
            second = client_for(model(server, "anthropic-messages", provider="two"), timeout=10.0, pool=pool)
            for client in (first, again, second, first):
                await collect(client.stream(ask()))
            return pool.client("one") is pool.client("one"), pool.client("one") is not pool.client("two")

    same, apart = asyncio.run(go())
    assert same and apart
    assert len(server.requests) == 4 and server.connections == 2  # one per provider's client


def test_a_closed_pool_takes_no_request(server: LoopbackServer) -> None:
    async def go() -> None:
        pool = Pool()
        client = pool.client("one")
        await pool.aclose()
        assert client.is_closed and pool.closed
        with pytest.raises(PoolClosed, match="closed: no request to one"):
            pool.client("one")

    asyncio.run(go())


def test_http2_is_asked_for_when_h2_is_installed() -> None:
    """HTTP/2 is negotiated per server (ALPN over TLS); the loopback speaks HTTP/1.1 in the clear,
    so what is checked here is only that the pool asks for it when httpx can speak it."""
    assert Pool().http2 is http2_available()
    assert Pool(http2=False).http2 is False


def test_proxies_come_from_the_environment(server: LoopbackServer, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", server.url)  # the loopback server plays the proxy
    server.script(Stream([Text("via the proxy")]), Stream([Text("again")]))
    wire = WireModel("far", "m", "openai-completions", "http://provider.invalid/v1", "k")

    async def go() -> list[str]:
        async with Pool() as pool:
            client = client_for(wire, timeout=10.0, pool=pool)
            return [(await collect(client.stream(ask()))).text for _ in range(2)]

    assert asyncio.run(go()) == ["via the proxy", "again"]
    assert [r.headers["host"] for r in server.requests] == ["provider.invalid", "provider.invalid"]
    assert server.connections == 1


# -- the commands: `eukhe chat` and `eukhe ask` ------------------------------------------------------


@pytest.fixture
def agent(tmp_path: Path, server: LoopbackServer) -> Path:
    return write_loopback_models(tmp_path / "agent", server, PROVIDERS)


@pytest.mark.parametrize("provider", list(PROVIDERS))
def test_a_chat_of_several_turns_and_a_tool_round_uses_one_connection(server: LoopbackServer, agent: Path, provider: str) -> None:
    from cli.cli_support import Screen, eukhe_env

    server.script(
        Stream([Text("Hello there.")]),
        Stream([Call("zoom", '{"id": 0, "n": 1}', "z1")], stop="toolUse"),
        Stream([Text("You said hello.")]),
        Stream([Text("Third answer.")]),
    )
    screen = Screen(["chat", "--provider", provider], eukhe_env(agent), agent.parent)
    try:
        screen.expect(r"> ")
        screen.type("hello")
        screen.expect(r"Hello there\.\n")
        screen.expect(r"> ")
        screen.type("what did I say?")
        screen.expect(r"\[tool\] zoom")
        screen.expect(r"You said hello\.\n")
        screen.expect(r"> ")
        screen.type("and now?")
        screen.expect(r"Third answer\.\n")
        screen.expect(r"> ")
        screen.type("/quit")
    finally:
        status = screen.close()
    assert status == 0
    assert len(server.requests) == 4
    assert server.connections == 1, f"{server.connections} connections for {len(server.requests)} requests"


def test_an_ask_with_a_retry_uses_one_connection(server: LoopbackServer, agent: Path) -> None:
    from cli.cli_support import run_process

    server.script(Fail(429, '{"error": {"type": "rate_limit_error", "message": "slow down"}}', (("retry-after", "0"),)), Stream([Text("ok")]))
    done = run_process(["ask", "--provider", "loop-chat", "hi"], agent)
    assert (done.status, done.out) == (0, "ok\n"), done
    assert done.err == "eukhe ask: retry 1/3: loop-chat: HTTP 429 rate_limit_error; waiting 0.0 s\n"
    assert len(server.requests) == 2 and server.connections == 1
