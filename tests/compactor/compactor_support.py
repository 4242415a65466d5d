"""Helpers of the compactor tests: models of each API pointed at the loopback server, one
request sent and read back as the server recorded it."""

from __future__ import annotations

import asyncio

from eukhe.inference.wire import Reply, client_for, collect
from eukhe.inference.wire.plan import Request, WireModel
from spec.loopback import LoopbackServer, Recorded, Stream, Text, base_url

CHAT = "openai-completions"
ANTHROPIC = "anthropic-messages"


def anthropic(server: LoopbackServer) -> WireModel:
    return WireModel("anthropic", "claude-haiku-4-5", ANTHROPIC, base_url(server, ANTHROPIC), "sk-loop", reasoning=False, max_tokens=4096)


def routed(server: LoopbackServer, model_id: str = "anthropic/claude-haiku-4.5") -> WireModel:
    return WireModel("openrouter", model_id, CHAT, base_url(server, CHAT), "sk-loop", reasoning=False, max_tokens=4096)


def local(server: LoopbackServer) -> WireModel:
    return WireModel("loop", "qwen3-8b", CHAT, base_url(server, CHAT), "sk-loop", reasoning=False, max_tokens=4096)


def send(server: LoopbackServer, wire: WireModel, request: Request, answer: str = "ok") -> tuple[Reply, Recorded]:
    server.script(Stream([Text(answer)]))
    before = len(server.requests)
    reply = asyncio.run(collect(client_for(wire, timeout=10.0).stream(request)))
    return reply, server.wait_requests(before + 1)[-1]
