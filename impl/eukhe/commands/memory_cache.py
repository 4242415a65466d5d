"""``eukhe memory simulate --cache``: the prompt-cache shares of turns and compactions (issue
12 item 9; OPTCHAT.md "Why the prompt cache holds": 98.6% and 96.2% over 3,000 messages).

A chat of synthetic messages with the note's sizes (``eukhe.memory.simulate.note_size``; the
kinds follow the sizes: user words, replies, tool calls, tool output) runs against the loopback
server (``spec.loopback``) speaking Anthropic Messages, whose ``PromptCache`` accounts each
request's cache reads and writes at its cache marks. The live compactor builds every node over
HTTP (lines of 400-512 bytes); each user message is a turn: the turn waits for its view to
settle, renders it, logs the message and sends ``[tools] [system] [view] [Turn: message]``. The
shares are the bytes read from cache over all input bytes, for turns and for compactions; lines
rewritten per message count the view lines from a batch's first change to its end.
"""

from __future__ import annotations

import asyncio
import random
import socket
from dataclasses import dataclass
from typing import Any

import httpx

from eukhe.inference.wire import client_for, collect
from eukhe.inference.wire.events import Usage
from eukhe.inference.wire.plan import Message, WireModel
from eukhe.memory import NODE
from eukhe.memory.chat import Chat, Config
from eukhe.memory.compactor import RETRY, Compactor
from eukhe.memory.durable import DurableChat
from eukhe.memory.prompts import turn_text
from eukhe.memory.records import Kind
from eukhe.memory.request import Layers, build_request
from eukhe.memory.simulate import note_size
from eukhe.memory.view import render_lines

WORDS = ("alpha", "build", "cache", "delta", "error", "field", "graph", "index", "judge", "kernel", "lemma", "merge")


def kind_of(length: int, roll: float) -> Kind:
    """The kind the note's size classes stand for."""
    if roll < 0.30:
        return Kind.USER
    if roll < 0.55:
        return Kind.EUKHE
    if roll < 0.80:
        return Kind.TOOL
    return Kind.ECHO


def text_of(rng: random.Random, length: int) -> str:
    words: list[str] = []
    total = 0
    while total < length:
        word = rng.choice(WORDS)
        words.append(word)
        total += len(word) + 1
    return " ".join(words)[:length]


@dataclass
class Shares:
    messages: int
    turns: int
    compactions: int
    turn_input: int
    turn_read: int
    compaction_input: int
    compaction_read: int
    rewritten: int
    failures: int = 0

    def stats(self) -> dict[str, Any]:
        def share(read: int, total: int) -> float:
            return round(100.0 * read / total, 1) if total else 0.0

        return {
            "messages": self.messages,
            "turns": self.turns,
            "compactions": self.compactions,
            "turn_cache_read_percent": share(self.turn_read, self.turn_input),
            "compaction_cache_read_percent": share(self.compaction_read, self.compaction_input),
            "rewritten_lines_per_message": round(self.rewritten / self.messages, 2) if self.messages else 0.0,
            "failed_calls": self.failures,
        }


def _total(usage: Usage) -> int:
    return usage.input + usage.cache_read + usage.cache_write


async def _run(messages: int, seed: int, config: Config) -> Shares:
    from spec.loopback import LoopbackServer, PromptCache, Recorded, Script, Stream, Text, base_url

    def respond(recorded: Recorded) -> Script | None:
        body = recorded.body if isinstance(recorded.body, dict) else {}
        last = body.get("messages", [{}])[-1].get("content", [])
        text = "".join(b.get("text", "") for b in last) if isinstance(last, list) else str(last)
        if "Compaction:" in text:
            size = 400 + len(text) % 113
            return Stream([Text(("summary " * 80)[:min(NODE, size)])])
        return Stream([Text("ok")])

    rng = random.Random(seed)
    with LoopbackServer() as server:
        server.cache = PromptCache()
        server.responder = respond
        api = "anthropic-messages"
        wire = WireModel("anthropic", "claude-haiku-4-5", api, base_url(server, api), "sk-sim", reasoning=False, max_tokens=4096)
        nodelay = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
        async with httpx.AsyncClient(timeout=60.0, transport=httpx.AsyncHTTPTransport(socket_options=nodelay)) as http:
            client = client_for(wire, timeout=60.0, http=http)
            sink = _Sink()
            durable = DurableChat(Chat(config), sink, lambda: "2026-11-30T12:00:00")
            layers = Layers.of()
            now = [0.0]
            compactor = Compactor(durable, client, layers, clock=lambda: now[0])
            turns: list[Usage] = []
            rewritten = 0
            for _ in range(messages):
                roll = rng.random()
                length = note_size(random.Random(rng.random()))
                kind = kind_of(length, roll)
                text = text_of(rng, length)
                view: list[str] | None = None
                if kind is Kind.USER:
                    compactor.wait()
                    while not compactor.settled:
                        compactor.changed.clear()
                        try:
                            await asyncio.wait_for(compactor.changed.wait(), 5.0)
                        except asyncio.TimeoutError:  # a failed node: its retry is due (D5)
                            now[0] += RETRY
                            compactor.poll()
                    compactor.go()
                    chat = durable.chat
                    view = render_lines(chat.view.nodes, chat.text)
                compactor.message(text, kind.value)
                chat = durable.chat
                if chat.batch > 0:
                    rewritten += len(chat.view) - max(0, chat.view.first_change)
                if view is not None:
                    reply = await collect(client.stream(build_request(layers, view, [Message("user", turn_text(text))])))
                    if reply.usage is not None:
                        turns.append(reply.usage)
            await compactor.idle()
            return Shares(
                messages,
                len(turns),
                len(compactor.usage),
                sum(_total(u) for u in turns),
                sum(u.cache_read for u in turns),
                sum(_total(u) for u in compactor.usage),
                sum(u.cache_read for u in compactor.usage),
                rewritten,
                sum(1 for row in compactor.rows if row.event in ("failed", "capped")),
            )


class _Sink:
    def message(self, record: Any) -> None:
        pass

    def node(self, record: Any) -> None:
        pass

    def merge(self, record: Any) -> None:
        pass

    def view(self, nodes: Any) -> None:
        pass


def measure(messages: int = 3_000, seed: int = 2026, config: Config = Config()) -> Shares:
    """The shares over ``messages`` synthetic messages against the loopback server."""
    return asyncio.run(_run(messages, seed, config))


def register(sub: Any) -> None:
    """Nothing to add: ``eukhe memory simulate --cache`` (``eukhe.commands.memory``) runs ``measure``."""
