"""The HTTP clients of one chat or one ask: one pooled ``httpx.AsyncClient`` per provider.

A wire client given a ``Pool`` sends every request of its provider through the pool's client
for that provider, so the requests of a chat (its turns, their tool rounds, its compactor's
calls on the same provider) and of an ask (its retries) reuse their connections: keep-alive for
``KEEPALIVE_SECONDS`` between requests, HTTP/2 where the provider's server offers it (ALPN over
TLS) when the ``h2`` package is installed, proxies and the CA bundle from the environment
(HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, NO_PROXY; SSL_CERT_FILE, SSL_CERT_DIR). The timeouts are
each request's own (the client's ``timeout``: the seeds name none; `eukhe ask` and `eukhe chat`
take --timeout, 120 s by default).

A pool lives in one event loop: make it and close it (``aclose``, or ``async with``) there; a
client is made on the first request of its provider. A closed pool takes no request: asked for a
client, it raises ``PoolClosed`` (nothing is sent; the error names the provider).
"""

from __future__ import annotations

import importlib.util
from types import TracebackType

import httpx

from eukhe.inference.wire.base import tls

KEEPALIVE_SECONDS = 60.0  # an idle connection is kept this long (httpx's 5 s would not span a chat's pause)
MAX_CONNECTIONS = 32  # per provider: the turn, the compactor's calls, subagents at once


def http2_available() -> bool:
    """Whether httpx can speak HTTP/2 here (the ``h2`` package, httpx[http2])."""
    return importlib.util.find_spec("h2") is not None


class PoolClosed(RuntimeError):
    """A request through a pool that was closed (its chat or ask is over): a fault of the caller,
    never retried; ``provider`` is the provider the request was for."""

    def __init__(self, provider: str) -> None:
        super().__init__(f"the HTTP pool of this chat or ask is closed: no request to {provider}")
        self.provider = provider


class Pool:
    """One ``httpx.AsyncClient`` per provider for the life of a chat or an ask."""

    def __init__(self, *, http2: bool | None = None, limits: httpx.Limits | None = None) -> None:
        self.http2 = http2_available() if http2 is None else http2
        self.limits = limits if limits is not None else httpx.Limits(max_connections=MAX_CONNECTIONS, keepalive_expiry=KEEPALIVE_SECONDS)
        self._clients: dict[str, httpx.AsyncClient] = {}
        self.closed = False

    def client(self, provider: str) -> httpx.AsyncClient:
        """The provider's client, made on first use; ``PoolClosed`` once the pool is closed."""
        if self.closed:
            raise PoolClosed(provider)
        found = self._clients.get(provider)
        if found is None:
            found = self._clients[provider] = httpx.AsyncClient(verify=tls(), http2=self.http2, limits=self.limits, trust_env=True)
        return found

    async def aclose(self) -> None:
        """Close every client (their connections); the pool takes no request after."""
        self.closed = True
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.aclose()

    async def __aenter__(self) -> Pool:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        await self.aclose()
