"""Helpers of the wire tests: a model of each API pointed at the loopback server, one request
streamed to its end (or to its error) on a fresh event loop."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from eukhe.inference.wire import Reply, client_for, collect
from eukhe.inference.wire.events import Event, StreamFilter
from eukhe.inference.wire.plan import Message, Request, WireModel
from spec.loopback import LoopbackServer, base_url

APIS = ("openai-completions", "openai-responses", "anthropic-messages", "google-generative-ai")


def model(server: LoopbackServer, api: str, model_id: str = "test-model", *, provider: str = "loop", reasoning: bool = True,
          compat: Mapping[str, Any] | None = None, base: str | None = None, key: str = "sk-loop") -> WireModel:
    return WireModel(provider, model_id, api, base_url(server, api) if base is None else base, key, reasoning=reasoning, compat=compat, max_tokens=4096)


def ask(text: str = "hi", **fields: Any) -> Request:
    return Request((Message("user", text),), **fields)


def reply(wire: WireModel, request: Request | None = None, *, timeout: float = 10.0, filter: StreamFilter | None = None, **options: Any) -> Reply:
    client = client_for(wire, timeout=timeout, **options)
    return asyncio.run(collect(client.stream(request or ask(), filter)))


def events(wire: WireModel, request: Request | None = None, *, timeout: float = 10.0, **options: Any) -> list[Event]:
    client = client_for(wire, timeout=timeout, **options)

    async def run() -> list[Event]:
        return [event async for event in client.stream(request or ask())]

    return asyncio.run(run())
