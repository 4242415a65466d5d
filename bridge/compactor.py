"""The compactor bridge (memory.md "Compactor line: own bridge", rules 35-37, D9): one node's
line built over scripted model replies, the pure model against the live compactor.

A scenario is a list of node events: the node's input (a message over 512 bytes, so it needs the
model) and the replies the model gives, in order (empty, thinking-only, whitespace, over-long,
repeated, shrinking, longer, fitting, exactly 512 bytes, unicode straddling the 512-byte cut;
a conversation that asks for more replies than scripted gets empty ones).

- Model side: ``bend.compactor.transcript`` (``build_line`` on the replies).
- Production side: for each event a new chat (``DurableChat`` over an in-memory sink) gets the
  message; its ``Compactor`` builds the node over real HTTP against the loopback server
  (``spec.loopback``), which plays the replies (Anthropic Messages for even scenarios, OpenAI
  chat completions on OpenRouter's anthropic/ route for odd ones) and records the requests. The
  transcript is printed from what production did: each call's follow-up and the line it
  answered are read from the recorded request (the last user text and the assistant text
  before it), the line and its size from the node line the chat logged, its origin from the
  compactor's ``memory:`` row.

Both print, per event: ``n call k said=<line before> ask=<follow-up>`` for each call, ``n calls
C``, ``n line <reply|input> <bytes> <line>``; byte for byte.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import socket
import threading
from collections import deque
from collections.abc import Sequence
from typing import Any

import httpx

from bend import compactor as model
from bridge.core import Bridge, Event, Shared
from eukhe.inference.wire import client_for
from eukhe.inference.wire.base import tls
from eukhe.inference.wire.plan import WireModel
from eukhe.memory.chat import Chat, Config
from eukhe.memory.compactor import Compactor
from eukhe.memory.durable import DurableChat
from eukhe.memory.records import MergeLine, Message, NodeLine
from eukhe.memory.request import Layers
from eukhe.memory.view import Node
from spec.loopback import LoopbackServer, Recorded, Script, Stream, Text, Thinking, base_url

NODE = 512
APIS = ("anthropic-messages", "openai-completions")

# -- generation -------------------------------------------------------------------------------------

MULTI = ("é", "€", "𝄞")


def _text(rng: random.Random, length: int) -> str:
    """A line of about ``length`` bytes: ASCII words, or with multi-byte characters."""
    if rng.random() < 0.4:
        out = []
        total = 0
        while total < length:
            piece = rng.choice(("word ", "é", "€", "𝄞", "x", "ü "))
            out.append(piece)
            total += len(piece.encode("utf-8"))
        return "".join(out)
    return ("item " * (length // 5 + 1))[: max(1, length)]


def _straddle(rng: random.Random) -> str:
    """A line whose 512-byte cut falls inside a multi-byte character."""
    char = rng.choice(MULTI)
    pad = NODE - rng.randrange(1, len(char.encode("utf-8")))
    return "a" * pad + char * rng.randrange(1, 40)


def _source(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.3:
        return _straddle(rng)
    if roll < 0.5:
        return "input " * rng.randrange(90, 400)
    return _text(rng, rng.randrange(NODE + 1, 3000))


def _reply(rng: random.Random, previous: str | None) -> dict[str, str]:
    roll = rng.random()
    if roll < 0.08:
        return {"text": ""}
    if roll < 0.14:
        return {"text": "", "thinking": "thinking " * rng.randrange(1, 50)}
    if roll < 0.18:
        return {"text": rng.choice((" ", "\n\t ", "  \n"))}
    if roll < 0.28 and previous is not None:
        return {"text": previous}  # repeated: not shorter
    if roll < 0.34 and previous is not None:
        return {"text": previous + " more"}  # longer
    if roll < 0.52 and previous is not None and len(previous.encode("utf-8")) > 2:
        body = previous.strip()
        shorter = body.encode("utf-8")[: max(1, len(body.encode("utf-8")) - rng.randrange(1, 400))].decode("utf-8", errors="ignore")
        return {"text": shorter or "y"}  # shrinking
    if roll < 0.58:
        return {"text": "z" * NODE, "thinking": "fits exactly"}
    if roll < 0.62:
        return {"text": "z" * (NODE + 1)}
    if roll < 0.72:
        return {"text": _straddle(rng)}
    if roll < 0.82:
        return {"text": "  " + _text(rng, rng.randrange(1, NODE)) + "\n"}
    return {"text": _text(rng, rng.randrange(NODE + 1, 2500))}


def _chain(rng: random.Random) -> list[dict[str, str]]:
    """Over-long replies that shrink, then an ending."""
    start = rng.randrange(NODE + 200, 2600)
    replies = []
    for k in range(rng.randrange(1, 7)):
        replies.append({"text": _text(rng, start - k * rng.randrange(30, 150))})
    replies.append(_reply(rng, replies[-1]["text"]))
    return replies


def generate(index: int) -> list[Event]:
    rng = random.Random(f"compactor-{index}")
    events: list[Event] = []
    for _ in range(rng.randrange(1, 3)):
        if rng.random() < 0.35:
            replies = _chain(rng)
        else:
            replies = []
            previous: str | None = None
            for _k in range(rng.randrange(0, 6)):
                reply = _reply(rng, previous)
                replies.append(reply)
                previous = reply["text"].strip() or previous
        events.append({"do": "node", "source": _source(rng), "replies": replies})
    return events


# -- the production side -------------------------------------------------------------------------------


class _Sink:
    def __init__(self) -> None:
        self.nodes: list[NodeLine] = []

    def message(self, record: Message) -> None:
        pass

    def node(self, record: NodeLine) -> None:
        self.nodes.append(record)

    def merge(self, record: MergeLine) -> None:
        pass

    def view(self, nodes: Sequence[Node]) -> None:
        pass


class _Server:
    """One loopback server for every run in this process; each run's requests carry their own
    model id, and the responder plays that run's replies."""

    def __init__(self) -> None:
        self.server = LoopbackServer().start()
        self.lock = threading.Lock()
        self.queues: dict[str, deque[Script]] = {}
        self.seen: dict[str, list[Recorded]] = {}
        self.server.responder = self.respond

    def respond(self, recorded: Recorded) -> Script | None:
        run = recorded.body.get("model", "") if isinstance(recorded.body, dict) else ""
        with self.lock:
            self.seen.setdefault(run, []).append(recorded)
            queue = self.queues.get(run)
            return queue.popleft() if queue else Stream([])  # past the script: an empty reply


_SERVER: Shared[_Server] = Shared(_Server, lambda shared: shared.server.close())
_runs = itertools.count()


def _script(reply: dict[str, str]) -> Script:
    parts: list[Any] = []
    if reply.get("thinking"):
        parts.append(Thinking(reply["thinking"]))
    if reply["text"]:
        parts.append(Text(reply["text"]))
    return Stream(parts)


def _texts(request: Recorded) -> list[tuple[str, str]]:
    out = []
    for message in request.body["messages"]:
        content = message.get("content")
        text = "".join(block.get("text", "") for block in content) if isinstance(content, list) else (content or "")
        out.append((message["role"], text))
    return out


async def _node(shared: _Server, api: str, event: Event, http: httpx.AsyncClient) -> tuple[list[Recorded], str, str]:
    run = f"{'anthropic/' if api == 'openai-completions' else ''}claude-bridge-{next(_runs)}"
    with shared.lock:
        shared.queues[run] = deque(_script(r) for r in event["replies"])
    provider = "anthropic" if api == "anthropic-messages" else "openrouter"
    wire = WireModel(provider, run, api, base_url(shared.server, api), "sk-bridge", reasoning=False, max_tokens=4096)
    sink = _Sink()
    durable = DurableChat(Chat(Config()), sink, lambda: "2026-11-30T12:00:00")
    compactor = Compactor(durable, client_for(wire, timeout=30.0, http=http), LAYERS, clock=lambda: 0.0)
    compactor.message(event["source"])
    await compactor.idle()
    with shared.lock:
        seen = shared.seen.pop(run, [])
        shared.queues.pop(run, None)
    built = [row for row in compactor.rows if row.event == "built"]
    origin = "input" if built and "from the input" in built[0].note else "reply"
    line = sink.nodes[0].text if sink.nodes else ""
    return seen, origin, line


LAYERS = Layers.of()


def loopback_http() -> httpx.AsyncClient:
    """One HTTP client for a run, its sockets without Nagle's delay (the request's head and body
    go in two writes; the server's delayed acknowledgement would hold the body ~40 ms)."""
    nodelay = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
    return httpx.AsyncClient(timeout=30.0, transport=httpx.AsyncHTTPTransport(verify=tls(), socket_options=nodelay))


def production(events: Sequence[Event]) -> list[str]:
    shared = _SERVER.get()
    index = 0 if not events else sum(len(e["source"]) for e in events) % 2  # either API, fixed per scenario
    api = APIS[index]

    async def run() -> list[str]:
        lines: list[str] = []
        async with loopback_http() as http:
            for n, event in enumerate(events):
                seen, origin, line = await _node(shared, api, event, http)
                for k, request in enumerate(seen):
                    texts = _texts(request)
                    ask = texts[-1][1] if k else ""
                    said = json.dumps(texts[-2][1], ensure_ascii=False) if k else "-"
                    lines.append(f"{n} call {k} said={said} ask={json.dumps(ask, ensure_ascii=False)}")
                lines.append(f"{n} calls {len(seen)}")
                lines.append(f"{n} line {origin} {len(line.encode('utf-8'))} {json.dumps(line, ensure_ascii=False)}")
        return lines

    return asyncio.run(run())


# -- coverage --------------------------------------------------------------------------------------------

CASES = frozenset(
    {
        "the first reply fits",
        "a follow-up shorter and fitting",
        "a follow-up shorter but still over",
        "a repeated line ends the tries",
        "a longer line ends the tries",
        "an empty first reply builds from the input",
        "an empty later reply ends the tries",
        "a thinking-only reply",
        "a whitespace-only reply",
        "five calls",
        "a reply of exactly 512 bytes",
        "a reply of 513 bytes",
        "the kept line's cut falls inside a character",
        "the input's cut falls inside a character",
        "fewer replies than calls",
        "a line with multi-byte characters",
    }
)


def _inside(text: str) -> bool:
    data = text.encode("utf-8")
    return len(data) > NODE and (data[NODE] & 0xC0) == 0x80


def reached(events: Sequence[Event]) -> set[str]:
    """The cases a scenario reaches, classified on the replies and the model's conversation."""
    cases: set[str] = set()
    for event in events:
        replies = [model.Reply(r["text"], r.get("thinking", "")) for r in event["replies"]]
        out = model.build_line(event["source"], replies)
        calls = out.calls
        if len(calls) > len(replies):
            cases.add("fewer replies than calls")
        if len(calls) == model.TRIES:
            cases.add("five calls")
        for k, call in enumerate(calls):
            reply = replies[k] if k < len(replies) else model.Reply("")
            size = model.size(call.line)
            if not call.line:
                if reply.thinking:
                    cases.add("a thinking-only reply")
                elif reply.text:
                    cases.add("a whitespace-only reply")
                cases.add("an empty first reply builds from the input" if k == 0 else "an empty later reply ends the tries")
                continue
            if size == NODE:
                cases.add("a reply of exactly 512 bytes")
            if size == NODE + 1:
                cases.add("a reply of 513 bytes")
            if size != len(call.line):
                cases.add("a line with multi-byte characters")
            if k == 0:
                if size <= NODE:
                    cases.add("the first reply fits")
                continue
            best = min(model.size(c.line) for c in calls[:k] if c.line)
            if size > best:
                cases.add("a longer line ends the tries")
            elif size == best:
                cases.add("a repeated line ends the tries")
            else:
                cases.add("a follow-up shorter and fitting" if size <= NODE else "a follow-up shorter but still over")
        if out.source == "reply" and _inside(min((c.line for c in calls if c.line), key=model.size)):
            cases.add("the kept line's cut falls inside a character")
        if out.source == "input" and _inside(event["source"]):
            cases.add("the input's cut falls inside a character")
    return cases


BRIDGE = Bridge(
    area="compactor",
    count=300,
    generate=generate,
    model=model.transcript,
    production=production,
    cases=CASES,
    reached=reached,
    finish=_SERVER.close,
)
