"""``eukhe memory simulate --cache``: the prompt-cache shares of turns and compactions (issue
12 item 9; OPTCHAT.md "Why the prompt cache holds": 98.6% and 96.2% over 3,000 messages).

A chat of synthetic messages with the note's sizes (``eukhe.memory.simulate.note_message``: the
kind follows the size class drawn: short user words, replies, tool calls, clipped tool output)
runs against the loopback server (``spec.loopback``) speaking Anthropic Messages, whose
``PromptCache`` accounts each request's cache reads and writes at its cache marks. The live
compactor builds every node over HTTP (lines of 400-512 bytes); each user message is a turn: the
turn waits for its view to settle, renders it, logs the message and sends ``[tools] [system]
[view] [Turn: message]``. Lines rewritten per message count the view lines from a batch's first
change to its end.

The pace: the compactor keeps up. After each message every call it started (and the merges
those start) ends before the next message comes, so a turn finds its view settled unless a call
failed. Without a stated pace the figures followed the event loop's scheduling: messages come
with no time between them, so the merges that ran depended on how many loop steps a turn's
wait took (one step more or less moved lines rewritten per message from 0.6 to 13).

Three shares for each kind of call, each bytes read from cache over bytes:
- of all input (``*_cache_read_percent``): read / (read + written + plain input);
- of the marked prefix (``*_prefix_read_percent``, the note's "read X% of their prefix" read as
  rule 30's marked prefix): the prefix's bytes read over the bytes of tools, system prompt and
  view up to its marked last whole block; the view's 0-3 unmarked lines, ``</chat>`` and the
  message or task are the call's end;
- of all before the new message (``*_view_read_percent``, the note's prefix read as ``[tools]
  [system] [view]``): the same bytes read over the marked prefix, the view's unmarked lines and
  ``</chat>``.
``*_cache_read_percent`` and ``compactions`` count the usage the clients received; the prefix
shares, ``why`` (in percent of each kind's input: where every byte not read from cache went,
``CAUSES``) and the plot come from the cache model's bookkeeping of every call the server got
(``spec.loopback.Account``), which also holds the compactions stopped while a turn waits (D5:
``compaction_calls_sent``): they send their input but receive no usage.
"""

from __future__ import annotations

import asyncio
import json
import random
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpx

from eukhe.inference.wire import client_for, collect
from eukhe.inference.wire.events import Usage, WireError
from eukhe.inference.wire.plan import Message, WireModel
from eukhe.memory import JOBS, NODE
from eukhe.memory.chat import Chat, Config
from eukhe.memory.compactor import Compactor
from eukhe.memory.durable import DurableChat
from eukhe.memory.prompts import COMPACTION_MARK, turn_text
from eukhe.memory.records import Kind
from eukhe.memory.request import Layers, build_request
from eukhe.memory.simulate import note_message
from eukhe.memory.view import render_lines

if TYPE_CHECKING:
    from spec.loopback import Account

WORDS = ("alpha", "build", "cache", "delta", "error", "field", "graph", "index", "judge", "kernel", "lemma", "merge")


KINDS = {"user": Kind.USER, "reply": Kind.EUKHE, "call": Kind.TOOL, "output": Kind.ECHO}


def _message(r: random.Random) -> tuple[Kind, int]:
    """A message's kind and size: the kind the note's size class stands for (user words are
    short; tool output is up to 30,000 bytes)."""
    size_class, length = note_message(r)
    return KINDS[size_class], length


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
    accounts: list[Account] = field(default_factory=list)  # every call, as the cache model accounted it
    trace: list[tuple[int, int]] = field(default_factory=list)  # after each message: calls accounted, lines rewritten
    view_end: list[int] = field(default_factory=list)  # per account: bytes of the view's unmarked lines and </chat>

    def stats(self) -> dict[str, Any]:
        def share(read: int, total: int) -> float:
            return round(100.0 * read / total, 1) if total else 0.0

        turns = [a for a in self.accounts if a.label.startswith("turn")]
        compactions = [a for a in self.accounts if a.label.startswith("compaction")]
        ends = dict(zip(map(id, self.accounts), self.view_end))

        def view_share(accounts: list[Account]) -> float:
            read, prefix = _prefix_read(accounts)
            return share(read, prefix + sum(ends.get(id(a), 0) for a in accounts))
        return {
            "messages": self.messages,
            "turns": self.turns,
            "compactions": self.compactions,
            "compaction_calls_sent": len(compactions),
            "turn_cache_read_percent": share(self.turn_read, self.turn_input),
            "compaction_cache_read_percent": share(self.compaction_read, self.compaction_input),
            "turn_prefix_read_percent": share(*_prefix_read(turns)),
            "compaction_prefix_read_percent": share(*_prefix_read(compactions)),
            "turn_view_read_percent": view_share(turns),
            "compaction_view_read_percent": view_share(compactions),
            "rewritten_lines_per_message": round(self.rewritten / self.messages, 2) if self.messages else 0.0,
            "failed_calls": self.failures,
            "why": {"turns": why(turns), "compactions": why(compactions)},
        }


class MeasureError(Exception):
    """The measure cannot be taken: a call failed on the loopback server (its scripted model
    answers every call, so the measure has no figure for a turn whose view a failed compaction
    left unbuilt, nor for a turn that got no reply). ``eukhe memory simulate --cache`` reports it
    as a fault of the environment (exit 1), as it does a drawing it cannot make."""


def _transport(options: list[tuple[int, int, int]]) -> httpx.AsyncHTTPTransport:
    """The simulation's HTTP transport: a pool of as many connections as calls can run at once
    (the compactor's JOBS and the turn's), so a connection the wire client failed to give back
    would stop the run with a PoolTimeout rather than pass unseen."""
    return httpx.AsyncHTTPTransport(socket_options=options, limits=httpx.Limits(max_connections=JOBS + 1, max_keepalive_connections=JOBS + 1))


def _total(usage: Usage) -> int:
    return usage.input + usage.cache_read + usage.cache_write


def scripted_reply(task: str) -> str:
    """The scripted model's answer to a call whose last message is ``task``: to a compaction
    task, a summary of 400 to 512 bytes (a line as full as a real model's, so the views measured
    are as long as real ones); to a turn, ``ok``."""
    if COMPACTION_MARK in task:
        return ("summary " * 80)[:min(NODE, 400 + len(task) % 113)]
    return "ok"


async def _run(messages: int, seed: int, config: Config, step: Callable[[int], None] | None = None) -> Shares:
    from spec.loopback import LoopbackServer, PromptCache, Recorded, Script, Stream, Text, base_url

    def respond(recorded: Recorded) -> Script | None:
        body = recorded.body if isinstance(recorded.body, dict) else {}
        last = body.get("messages", [{}])[-1].get("content", [])
        text = "".join(b.get("text", "") for b in last) if isinstance(last, list) else str(last)
        return Stream([Text(scripted_reply(text))])

    rng = random.Random(seed)
    with LoopbackServer() as server:
        labels = Labels()
        server.cache = cache = PromptCache(label=labels)
        trace: list[tuple[int, int]] = []  # after each message: the calls accounted, the lines rewritten
        server.responder = respond
        api = "anthropic-messages"
        wire = WireModel("anthropic", "claude-haiku-4-5", api, base_url(server, api), "sk-sim", reasoning=False, max_tokens=4096)
        nodelay = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
        async with httpx.AsyncClient(timeout=60.0, transport=_transport(nodelay)) as http:
            client = client_for(wire, timeout=60.0, http=http)
            sink = _Sink()
            durable = DurableChat(Chat(config), sink, lambda: "2026-11-30T12:00:00")
            layers = Layers.of()
            compactor = Compactor(durable, client, layers, clock=lambda: 0.0)  # a clock that stands: no deadline passes
            turns: list[Usage] = []
            rewritten = 0
            for _ in range(messages):
                rng.random()  # the draw that once gave the kind apart from the size (kept: same texts)
                kind, length = _message(random.Random(rng.random()))
                text = text_of(rng, length)
                view: list[str] | None = None
                if kind is Kind.USER:
                    compactor.wait()
                    await compactor.idle()  # the view's unbuilt lines, built (D5)
                    if not compactor.settled:  # the scripted model answers every call with a line
                        raise MeasureError(  # naming the last failure the compactor said
                            "a call of the compactor failed on the loopback server, leaving a turn's view unbuilt ("
                            + next((row.note for row in reversed(compactor.rows) if row.event == "failed"), "no failure said")
                            + ")"
                        )
                    compactor.go()
                    chat = durable.chat
                    view = render_lines(chat.view.nodes, chat.text)
                compactor.message(text, kind.value)
                chat = durable.chat
                if chat.batch > 0:
                    rewritten += len(chat.view) - max(0, chat.view.first_change)
                if view is not None:
                    try:
                        reply = await collect(client.stream(build_request(layers, view, [Message("user", turn_text(text))])))
                    except WireError as error:
                        await compactor.idle()  # the compactor's calls under way end first, as at the measure's end
                        raise MeasureError(f"a turn's call failed on the loopback server ({error})") from error
                    if reply.usage is not None:
                        turns.append(reply.usage)
                await compactor.idle()  # the compactor keeps up: every call this message started ends before the next
                trace.append((len(cache.accounts), rewritten))
                if step is not None:
                    step(len(trace))
            await compactor.idle()
            if trace:  # the calls still under way at the last message count at it
                trace[-1] = (len(cache.accounts), rewritten)
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
                list(cache.accounts),
                trace,
                list(labels.view_end),
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


def measure(messages: int = 3_000, seed: int = 2026, config: Config = Config(), step: Callable[[int], None] | None = None) -> Shares:
    """The shares over ``messages`` synthetic messages against the loopback server; ``step`` (if
    any) gets the messages done after each."""
    return asyncio.run(_run(messages, seed, config, step))


def register(sub: Any) -> None:
    """Nothing to add: ``eukhe memory simulate --cache`` (``eukhe.commands.memory``) runs ``measure``."""


# -- why a byte was not read (the cache model's bookkeeping, named for the chat) ------------------

# Each call's relation to the call of its kind before it, from the views both sent (``Labels``):
RELATIONS = ("first", "grown", "shorter", "rewritten")

# The causes of the bytes not read, in ``why`` (percent of the kind's input; with "read", 100):
CAUSES = {
    "read": "read from cache",
    "end": "the call's own end, after its marked prefix: the view's 0-3 unmarked lines, </chat>, the message or task (written at the end mark)",
    "lookback": "the prefix had an entry, but more than 20 blocks before every mark",
    "grown": "view lines new since the call before (the view grew at its end past that call's mark)",
    "rewritten": "view lines rewritten since the call before (a batch of the chat view, a merge of the compaction view) and all after them",
    "kept": "the unchanged start of a rewritten view: sent before, but no entry ends within it (the entries lie near the old end)",
    "shorter": "view ends before the call before's (a compaction's view ends at its own node): its entries lie past this one's end",
    "first": "the first call of its kind",
    "unmarked": "sent before, but no entry ends within it on this call's chain",
}


def _first_text(body: dict[str, Any]) -> str:
    """The text of a whole request's first message: the text blocks the Anthropic client sends
    (``eukhe.memory.request``), the view's first."""
    return "".join(block["text"] for block in body["messages"][0]["content"])


def view_of(text: str) -> list[str]:
    """The view lines a request's first message opens with (between ``<chat>`` and ``</chat>``:
    every turn and compaction sends the view first)."""
    body, _sep, _rest = text.removeprefix("<chat>\n").partition("</chat>")
    return body.splitlines()


def relation(before: list[str] | None, now: list[str]) -> str:
    """How a view stands to the one the call before of its kind sent (``RELATIONS``)."""
    if before is None:
        return "first"
    common = 0
    for a, b in zip(before, now):
        if a != b:
            break
        common += 1
    if common == len(before):
        return "grown"
    if common == len(now):
        return "shorter"
    return "rewritten"


class Labels:
    """The cache model's ``label`` for a request: ``turn:`` or ``compaction:`` (a task starting
    ``Compaction:`` behind the view), then its relation to the call before of its kind; ``other``
    for a body without messages (the server reads an empty or cut body of a call stopped while
    it was sent: it accounts no input)."""

    def __init__(self) -> None:
        self.before: dict[str, list[str]] = {}
        self.view_end: list[int] = []  # per call, in the order labelled: bytes of the view's block up to </chat>

    def __call__(self, body: Any) -> str:
        if not isinstance(body, dict) or not body.get("messages"):
            self.view_end.append(0)
            return "other"  # a body the server could not read whole (a call stopped while sending): no input
        text = _first_text(body)
        kind = "compaction" if f"\n\n{COMPACTION_MARK}" in text else "turn"
        now = view_of(text)
        label = f"{kind}:{relation(self.before.get(kind), now)}"
        self.before[kind] = now
        self.view_end.append(view_end(body))
        return label


def view_end(body: dict[str, Any]) -> int:
    """The bytes (as the cache model counts them: JSON text) of the view's unmarked lines and
    ``</chat>``: the block holding ``</chat>``, up to it."""
    text = next(block["text"] for block in body["messages"][0]["content"] if "</chat>" in block["text"])
    head = text[: text.index("</chat>") + len("</chat>")]
    return len(json.dumps(head, ensure_ascii=False).encode("utf-8")) - 2


def cause(label: str, region: str, kind: str) -> str:
    """The cause (``CAUSES``) of one (region, class) of a call's bytes."""
    if kind == "read":
        return "read"
    if region == "end":
        return "end"
    if kind == "lookback":
        return "lookback"
    related = label.partition(":")[2]
    if related == "grown":
        return "grown" if kind == "new" else "unmarked"
    if related == "rewritten" and kind == "unmarked":
        return "kept"
    return related


def why(accounts: list[Account]) -> dict[str, Any]:
    """Where the input of these calls went, in percent of it (``CAUSES``), and the calls by relation."""
    total = sum(a.total for a in accounts)
    out: dict[str, float] = {}
    for a in accounts:
        for (region, kind), n in a.bytes.items():
            name = cause(a.label, region, kind)
            out[name] = out.get(name, 0.0) + n
    shares = {name: round(100.0 * out[name] / total, 2) if total else 0.0 for name in CAUSES if name in out}
    calls: dict[str, int] = {}
    for a in accounts:
        related = a.label.partition(":")[2]
        calls[related] = calls.get(related, 0) + 1
    return {"percent": shares, "calls": calls, "input_bytes": total}


def _prefix_read(accounts: list[Account]) -> tuple[int, int]:
    """(bytes of the marked prefix read, bytes of the marked prefix) over these calls."""
    read = sum(a.bytes.get(("prefix", "read"), 0) for a in accounts)
    return read, sum(a.prefix for a in accounts)


# -- the picture (``eukhe memory simulate --cache --plot FILE.svg``) ---------------------------------

SERIES = ("turns", "compactions", "turns_prefix", "compactions_prefix", "rewritten")


def series(shares: Shares) -> dict[str, list[float]]:
    """After each message: the share of input read from cache so far, for turns and compactions,
    of all input and of the marked prefix (percent), and the lines rewritten per message so far."""
    out: dict[str, list[float]] = {name: [] for name in SERIES}
    sums = {name: [0, 0] for name in SERIES[:4]}
    done = 0
    for m, (count, rewritten) in enumerate(shares.trace, start=1):
        for a in shares.accounts[done:count]:
            kind = "turns" if a.label.startswith("turn") else "compactions"
            sums[kind][0] += a.usage.cache_read
            sums[kind][1] += a.total
            sums[kind + "_prefix"][0] += a.bytes.get(("prefix", "read"), 0)
            sums[kind + "_prefix"][1] += a.prefix
        done = max(done, count)
        for name, (read, total) in sums.items():
            out[name].append(round(100.0 * read / total, 3) if total else 0.0)
        out["rewritten"].append(round(rewritten / m, 4))
    return out


COLOURS = {"turns": "#1f77b4", "compactions": "#d62728", "turns_prefix": "#1f77b4", "compactions_prefix": "#d62728", "rewritten": "#2ca02c"}
NAMES = {
    "turns": "turns, of all input",
    "compactions": "compactions, of all input",
    "turns_prefix": "turns, of the marked prefix",
    "compactions_prefix": "compactions, of the marked prefix",
    "rewritten": "lines rewritten per message",
}
MAX_POINTS = 2_000  # points per line at most (a longer run is drawn at every k-th message)


def svg(shares: Shares, seed: int | None = None) -> str:
    """An SVG of ``series``: the cumulative cache-read shares per message (top) and the lines
    rewritten per message so far (bottom). Each line is a ``polyline`` whose ``id`` names its
    series and whose ``data-values`` hold the values drawn."""
    from xml.sax.saxutils import quoteattr

    data = series(shares)
    n = len(shares.trace)
    step = max(1, -(-n // MAX_POINTS))
    picked = list(range(step - 1, n, step)) if n else []
    if n and picked[-1] != n - 1:
        picked.append(n - 1)
    width, left, right = 900, 70, 20
    plot_w = width - left - right
    panels = {"top": (40, 300), "bottom": (360, 520)}
    shown = [v for name in SERIES[:4] for v in data[name][len(data[name]) // 20 :]] or [0.0]
    low = max(0.0, min(95.0, (min(shown) // 5) * 5))  # the first 5% of messages may fall below: drawn at the floor
    high_r = max([*data["rewritten"], 0.1])

    def x(m: int) -> float:
        return left + (plot_w * m / max(1, n - 1))

    def y(value: float, panel: str, lo: float, hi: float) -> float:
        top, bottom = panels[panel]
        return bottom - (bottom - top) * (min(max(value, lo), hi) - lo) / (hi - lo if hi > lo else 1.0)

    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="580" viewBox="0 0 {width} 580" font-family="sans-serif" font-size="12">',
        f"<title>eukhe memory simulate --cache: {n} messages{'' if seed is None else f', seed {seed}'}</title>",
        '<rect width="100%" height="100%" fill="white"/>',
        f'<text x="{left}" y="24" font-size="14">share of input read from prompt cache, cumulative (%), {n} messages</text>',
        f'<text x="{left}" y="350" font-size="14">lines rewritten per message, cumulative mean</text>',
    ]
    top_ticks = max(1, round((100.0 - low) / (5.0 if 100.0 - low <= 30.0 else 10.0)))
    for panel, lo, hi, ticks in (("top", low, 100.0, top_ticks), ("bottom", 0.0, high_r, 4)):
        top, bottom = panels[panel]
        out.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{bottom - top}" fill="none" stroke="#888"/>')
        for t in range(ticks + 1):
            value = lo + (hi - lo) * t / ticks
            ty = y(value, panel, lo, hi)
            out.append(f'<line x1="{left - 4}" y1="{ty:.1f}" x2="{left}" y2="{ty:.1f}" stroke="#888"/>')
            out.append(f'<text x="{left - 8}" y="{ty + 4:.1f}" text-anchor="end">{value:.{0 if panel == "top" else 2}f}</text>')
        for t in range(5):
            m = round((n - 1) * t / 4) if n else 0
            out.append(f'<text x="{x(m):.1f}" y="{bottom + 16}" text-anchor="middle">{m + 1}</text>')
    for k, name in enumerate(SERIES):
        panel, lo, hi = ("bottom", 0.0, high_r) if name == "rewritten" else ("top", low, 100.0)
        values = [data[name][m] for m in picked]
        points = " ".join(f"{x(m):.1f},{y(data[name][m], panel, lo, hi):.1f}" for m in picked)
        dash = ' stroke-dasharray="6 3"' if name.endswith("_prefix") else ""
        out.append(
            f'<polyline id="{name}" fill="none" stroke="{COLOURS[name]}" stroke-width="1.5"{dash} '
            f'points="{points}" data-messages={quoteattr(" ".join(str(m + 1) for m in picked))} '
            f'data-values={quoteattr(" ".join(f"{v:g}" for v in values))}/>'
        )
        last = f"{values[-1]:.1f}%" if values and name != "rewritten" else f"{values[-1]:.2f}" if values else "-"
        lx, ly = (left + 10, panels["bottom"][0] + 16) if name == "rewritten" else (left + plot_w - 330, panels["top"][1] - 12 - 16 * (3 - k))
        out.append(f'<line x1="{lx}" y1="{ly - 4}" x2="{lx + 30}" y2="{ly - 4}" stroke="{COLOURS[name]}" stroke-width="1.5"{dash}/>')
        out.append(f'<text x="{lx + 36}" y="{ly}">{NAMES[name]}: {last}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
