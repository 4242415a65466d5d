"""The optchat bridge: the production planner (eukhe.memory) and the model (bend.optchat) run
the same scenarios and print, after each event, the same line (memory.md "The bridge").

Scenarios (the seed's list): 0 = 3,000 messages with the note's sizes and a compactor never
late; 1 = 4,000 messages with small budgets (view 6,000/3,000 bytes, compaction view
2,000/1,000) for a deep tree; 2 and 3 = 1,500 and 2,500 messages with a late compactor whose
calls start, fail and end in any order, with turns waiting, ticks and deadlines; 4..27 = 24
runs with random sizes, budgets and job counts 1..8; 28..67 = 40 live runs, where the calls'
timings come from the live compactor against the scripted loopback server (the section "live
runs" below); 68..299 = short runs (``short``, ``short_live_generate``: tens of events, small budgets,
every job count, the sizes at the 512-byte cut), each fourth of them live, so that the short
runs alone reach every rule case and input class. Every scenario is compared at every T.

This printer drives eukhe code only: it never imports the model. The scenario texts
(``filler``) are decoded here on their own, as the model decodes them on its side.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import re
import socket
import threading
from collections.abc import Callable, Sequence
from typing import Protocol

import httpx

from bridge.core import Bridge, Event, dumps
from eukhe.inference.wire import client_for
from eukhe.inference.wire.base import tls
from eukhe.inference.wire.plan import WireModel
from eukhe.memory import BLOCK, NODE, records
from eukhe.memory.chat import Chat, Config, ZoomError
from eukhe.memory.compactor import CALL_DEADLINE, RETRY, Compactor, PrefixGate, Row
from eukhe.memory.durable import DurableChat
from eukhe.memory.request import Layers
from eukhe.memory.simulate import note_size
from eukhe.memory.view import Node, name, render_lines
from spec import loopback

COUNT = 300  # 28 planner runs, 40 live runs (LIVE_FIRST..), then short runs (SHORT_FIRST..)
SHORT_FIRST = 68
QUEUE_SHOWN = 8

_PATTERN = "alpha beta\r\ngamma\rdelta\nepsilon ζήτα ø — «ok»; 𝄞 end. "
_BASE = _PATTERN * (40_000 // len(_PATTERN.encode("utf-8")) + 2)


def filler(tag: str, length: int) -> str:
    """The scenario text of exactly ``length`` bytes, starting with ``tag``."""
    text = (tag + " " + _BASE).encode("utf-8")[:length].decode("utf-8", errors="ignore")
    return text + "." * (length - len(text.encode("utf-8")))


def line_size(node: Node, base: int, spread: int) -> int:
    """The size of a never-late compactor's line for ``node`` (the scenario's rule)."""
    return max(1, min(NODE, base + (node[1] * 7 + node[0] * 13) % max(1, spread)))


# -- scenarios ---------------------------------------------------------------------------------


def _late(r: random.Random, messages: int, config: Event) -> list[Event]:
    """A late compactor: in slow phases fewer calls end than messages need (message nodes go
    first, merges fall behind, batches stop above the floor), in fast phases it catches up;
    calls end, fail, turns wait, ticks pass and deadlines come in any order."""
    events: list[Event] = [config]
    left = 0
    slow = True
    for _ in range(messages):
        if left == 0:
            slow = not slow
            left = r.randint(220, 420) if slow else r.randint(60, 200)
        left -= 1
        events.append({"e": "m", "size": r.randint(600, 6_000) if slow else note_size(r)})
        for _ in range(r.choice([0, 1, 1, 1, 1, 2] if slow else [2, 3, 4, 5, 6, 8])):
            roll = r.random()
            if roll < 0.80:
                events.append({"e": "done", "k": r.randrange(8), "size": r.randint(150, NODE)})
            elif roll < 0.90:
                events.append({"e": "fail", "k": r.randrange(8)})
            elif roll < 0.92:
                events.append({"e": "wait"})
            elif roll < 0.95:
                events.append({"e": "tick"})
            elif roll < 0.99:
                events.append({"e": "go"})
            else:
                events.append({"e": "idle"})
    events.append({"e": "idle"})
    return events


def planner_config(r: random.Random, ceiling_most: int, jobs: int | None = None) -> Event:
    """A run's config event: ceilings and floors of the view and of the compaction view, the
    compactor's line sizes, and the job count (drawn 1..8 unless given)."""
    ceiling = r.randint(1_500, ceiling_most)
    cceiling = r.randint(600, max(700, ceiling // 2))
    return {
        "e": "config",
        "jobs": r.randint(1, 8) if jobs is None else jobs,
        "ceiling": ceiling,
        "floor": r.randint(ceiling // 4, ceiling * 3 // 4),
        "cceiling": cceiling,
        "cfloor": r.randint(cceiling // 4, cceiling * 3 // 4),
        "base": r.randint(1, 480),
        "spread": r.randint(1, 300),
    }


def _random(r: random.Random) -> list[Event]:
    events: list[Event] = [planner_config(r, 24_000)]
    small = r.random() < 0.5
    for _ in range(r.randint(150, 500)):
        roll = r.random()
        if roll < 0.42:
            events.append({"e": "m", "size": r.randint(1, 900) if small else r.randint(1, 6_000)})
        elif roll < 0.72:
            events.append({"e": "done", "k": r.randrange(8), "size": r.randint(1, NODE)})
        elif roll < 0.80:
            events.append({"e": "fail", "k": r.randrange(8)})
        elif roll < 0.84:
            events.append({"e": "wait"})
        elif roll < 0.87:
            events.append({"e": "tick"})
        elif roll < 0.90:
            events.append({"e": "go"})
        elif roll < 0.95:
            events.append({"e": "idle"})
        else:
            n = 1 << r.randint(0, 5)
            events.append({"e": "zoom", "id": r.randint(0, 40) * r.choice([n, 1]), "n": r.choice([n, n, 3])})
    events.append({"e": "idle"})
    return events


def message_size(r: random.Random) -> int:
    """A short run's message size: the 512-byte cut from both sides, huge, or any."""
    roll = r.random()
    if roll < 0.12:
        return r.choice([1, 511, NODE, NODE + 1])
    if roll < 0.17:
        return r.randint(6_000, 9_000)
    return r.randint(1, 900) if roll < 0.7 else r.randint(1, 3_000)


def short(r: random.Random, jobs: int) -> list[Event]:
    """A short planner run: tens of events on small budgets (a batch after a few messages), with
    calls that end (lines of 1 and 512 bytes among them), fail, waiting turns, ticks, deadlines
    and zooms."""
    events: list[Event] = [planner_config(r, 5_000, jobs)]
    for _ in range(r.randint(20, 70)):
        roll = r.random()
        if roll < 0.40:
            events.append({"e": "m", "size": message_size(r)})
        elif roll < 0.64:
            size = r.choice([1, NODE]) if r.random() < 0.15 else r.randint(1, NODE)
            events.append({"e": "done", "k": r.randrange(8), "size": size})
        elif roll < 0.76:
            k = r.randrange(8)  # failures of one call in a row: the third builds from the input
            events.extend({"e": "fail", "k": k} for _ in range(r.choice([1, 1, 2, 3])))
        elif roll < 0.81:
            events.append({"e": "wait"})
        elif roll < 0.85:
            events.append({"e": "tick"})
        elif roll < 0.88:
            events.append({"e": "go"})
        elif roll < 0.93:
            events.append({"e": "idle"})
        else:
            n = 1 << r.randint(0, 4)
            events.append({"e": "zoom", "id": r.randint(0, 24) * r.choice([n, 1]), "n": r.choice([n, n, 3])})
    events.append({"e": "idle"})
    return events


def generate(index: int) -> list[Event]:
    if index >= SHORT_FIRST:
        if index % 4 == 3:
            return short_live_generate(index)
        return short(random.Random(4_100_004 + index), 1 + (index // 4) % 8)
    if index >= LIVE_FIRST:
        return live_generate(index)
    r = random.Random(4_000_004 + index)
    if index == 0:
        events: list[Event] = [{"e": "config", "jobs": 8}]
        for _ in range(3_000):
            events += [{"e": "m", "size": note_size(r)}, {"e": "idle"}]
        return events
    if index == 1:
        events = [{"e": "config", "jobs": 8, "ceiling": 6_000, "floor": 3_000, "cceiling": 2_000, "cfloor": 1_000, "base": 180, "spread": 200}]
        for _ in range(4_000):
            events += [{"e": "m", "size": r.randint(40, 1_500)}, {"e": "idle"}]
        return events
    if index == 2:
        return _late(r, 1_500, {"e": "config", "jobs": 8})
    if index == 3:
        return _late(r, 2_500, {"e": "config", "jobs": 5})
    return _random(r)


# -- the production printer --------------------------------------------------------------------


def _names(nodes: Sequence[Node]) -> str:
    return ",".join(name(n) for n in nodes)


def _status(chat: Chat) -> str:
    view, cview = chat.view, chat.cview
    newest = name(view.nodes[-1]) if view.nodes else "-"
    return (
        f"T={chat.t} v={len(view)}/{view.total}@{newest} c={len(cview)}/{cview.total}"
        f" open={int(chat.open)} batch={chat.batch if chat.batch >= 0 else '-'} cm={chat.cmerge}"
        f" run={_names(chat.running)} q={_names(chat.queue(chat.waiting, QUEUE_SHOWN))}"
        f" wait={int(chat.waiting)} wq=n{chat.unbuilt}:{_names(chat.queue(True, QUEUE_SHOWN))}"
    )


def _rendered(chat: Chat, nodes: list[Node]) -> list[str]:
    lines = render_lines(nodes, chat.text)
    whole = len(lines) // BLOCK * BLOCK
    return ["<chat>"] + lines[:whole] + (["<mark>"] if whole else []) + lines[whole:] + ["</chat>"]


def _show(number: int, chat: Chat) -> list[str]:
    out = [f"{number} | {line}" for line in _rendered(chat, chat.view.nodes)]
    targets = chat.running[:2] if chat.running else ([(0, chat.t - 1)] if chat.t else [])
    for node in targets:
        out.append(f"{number} ctx {name(node)}")
        out.extend(f"{number} : {line}" for line in _rendered(chat, chat.context(node)))
    return out


def _zoom(chat: Chat, ident: int, n: int) -> str:
    try:
        lines = chat.zoom(ident, n)
    except ZoomError as error:
        chat.cases.add("zoom_error")
        return f"zoom error: {error}"
    chat.cases.add("zoom")
    if n == 1:
        return f"zoom {ident}+1 message {lines[0].split('|', 1)[1]}"
    return f"zoom {ident}+{n} " + " || ".join(lines)


class Driver(Protocol):
    """What the printer drives: ``chat``, the planner it reads, and ``act``, the object the events
    go to (the planner itself, or the planner on its store: ``bridge.optchat_store``)."""

    cases: set[str]

    @property
    def chat(self) -> Chat: ...

    @property
    def act(self) -> Acting: ...

    def configure(self, config: Config) -> None: ...

    def other(self, kind: object, event: Event) -> str | None:
        """The text an event this printer does not know adds to its line (None: unknown)."""


class Acting(Protocol):
    def message(self, text: str) -> object: ...
    def done(self, k: int, line: str) -> Node | None: ...
    def fail(self, k: int) -> Node | None: ...
    def wait(self) -> None: ...
    def go(self) -> None: ...
    def tick(self) -> None: ...


class _Planner:
    """The planner alone: this bridge's production side."""

    def __init__(self) -> None:
        self.chat = Chat()
        self.cases: set[str] = set()

    @property
    def act(self) -> Chat:
        return self.chat

    def configure(self, config: Config) -> None:
        self.chat = Chat(config)

    def other(self, kind: object, event: Event) -> str | None:
        return None


def play(events: Sequence[Event], driver: Driver, shown: frozenset[str] = frozenset()) -> tuple[list[str], set[str]]:
    """The production transcript of a scenario, and the rule cases it reached; the views are
    shown after each batch and after the events named in ``shown``."""
    base, spread = 400, 113
    out: list[str] = []
    cases: set[str] = set()
    for number, event in enumerate(events):
        kind = event.get("e")
        extra = ""
        chat, act = driver.chat, driver.act
        if kind == "config":
            cases |= chat.cases
            driver.configure(
                Config(
                    jobs=int(event.get("jobs", 8)),
                    ceiling=int(event.get("ceiling", 128_000)),
                    floor=int(event.get("floor", 64_000)),
                    cceiling=int(event.get("cceiling", 32_000)),
                    cfloor=int(event.get("cfloor", 16_000)),
                )
            )
            base, spread = int(event.get("base", 400)), int(event.get("spread", 113))
        elif kind == "m":
            act.message(filler(f"m{chat.t}", int(event["size"])))
        elif kind == "done":
            if chat.running:
                node = chat.running[int(event["k"]) % len(chat.running)]
                act.done(int(event["k"]), filler(name(node), int(event["size"])))
        elif kind == "fail":
            act.fail(int(event["k"]))
        elif kind == "idle":
            while chat.running:
                node = chat.running[0]
                act.done(0, filler(name(node), line_size(node, base, spread)))
        elif kind == "wait":
            act.wait()
        elif kind == "go":
            act.go()
        elif kind == "tick":
            act.tick()
        elif kind == "zoom":
            extra = " " + _zoom(chat, int(event["id"]), int(event["n"]))
        else:
            cases |= chat.cases
            said = driver.other(kind, event)
            extra = f" unknown event {kind!r}" if said is None else said
        chat = driver.chat
        out.append(f"{number} {kind} {_status(chat)}{extra}")
        if kind in shown or (kind == "m" and chat.batch > 0):
            out.extend(_show(number, chat))
    out.extend(_show(len(events), driver.chat))
    return out, cases | driver.chat.cases | driver.cases


def run(events: Sequence[Event]) -> tuple[list[str], set[str]]:
    """The production transcript of a scenario, and the rule cases it reached (a live scenario
    runs its script live again)."""
    if events and isinstance(events[0].get("live"), dict):
        lines, cases, _events = _Live(events[0], events).run()
        return lines, cases
    return play(events, _Planner())


class Recorded:
    """A production printer whose rule cases are kept per scenario, for the coverage check."""

    def __init__(self, run: Callable[[Sequence[Event]], tuple[list[str], set[str]]], classes: Callable[[Sequence[Event]], set[str]] | None = None) -> None:
        self.run = run
        self.classes = classes
        self.cases: dict[str, frozenset[str]] = {}

    def production(self, events: Sequence[Event]) -> list[str]:
        lines, cases = self.run(events)
        self.cases[hashlib.sha256(dumps(events).encode("utf-8")).hexdigest()] = frozenset(cases)
        return lines

    def reached(self, events: Sequence[Event]) -> set[str]:
        """The rule cases a scenario reaches, as the production planner records them, and the
        input classes its events hold."""
        key = hashlib.sha256(dumps(events).encode("utf-8")).hexdigest()
        if key not in self.cases:
            self.production(events)
        return set(self.cases[key]) | (self.classes(events) if self.classes is not None else set())


def classes(events: Sequence[Event]) -> set[str]:
    """The input classes of a scenario, read from its events: message sizes at the 512-byte cut
    (1, 511, 512, 513 bytes) and huge ones, compactor lines of 1 and 512 bytes, every job count."""
    found: set[str] = set()
    for event in events:
        kind = event.get("e")
        if kind == "m":
            length = int(event["size"])
            if length in (1, 511, 512, 513):
                found.add(f"message_{length}_bytes")
            if length >= 6_000:
                found.add("message_huge")
        elif kind == "done" and int(event["size"]) in (1, NODE):
            found.add(f"line_{event['size']}_bytes")
        elif kind == "config":
            found.add(f"jobs_{event.get('jobs', 8)}")
    return found


LIVE_CASES: frozenset[str] = frozenset(  # annotated, so the report finds the input classes of CASES below
    {
        # live runs (the compactor over loopback HTTP), their input classes:
        "live_http_calls",  # real requests reached the loopback server
        "live_concurrent_calls",  # two or more calls held at the server at once (rule 39)
        "live_prefix_wait",  # a call parked until the writer of its prefix answered (rule 30)
        "live_wait_stops_merge",  # a turn started waiting and a merge call was stopped (D5)
        "live_turn_settled",  # a waiting turn went on once its view settled (rule 47)
        "live_turn_deadline",  # a waiting turn went on at its deadline (D10)
        "live_http_failure",  # an HTTP error failed a node (rule 38)
        "live_cut_stream",  # a reply cut mid-body failed a node
        "live_call_deadline",  # a call past 10 minutes failed (D9)
        "live_retry_built",  # a node that failed was built by a later call (rule 38)
        "live_fail_cap",  # the third failure built the node from its input (D5)
        "live_over_long",  # an over-long reply brought the follow-up (rule 36)
        "live_five_calls",  # a line that took the five calls (D9)
        "live_repeated_reply",  # a follow-up answered with the same line: the tries end (D9)
        "live_merge_built",  # a merge node built by a call (rule 40)
        *(f"live_api_{api}" for api in ("anthropic-messages", "openai-completions")),
    }
)


CASES = frozenset(
    {
        "grow",  # rule 22: a message appends its line, no batch
        "batch",  # rule 23: past the ceiling, one batch
        "batch_short",  # rule 24: the batch stops above the floor (unbuilt parents)
        "batch_resumed",  # rule 24, F1: while shrinking, a later message merges more
        "batch_open_empty",  # F1: while shrinking, a batch that merges nothing
        "cview_from_view",  # rule 33: the chat view merged, the compaction view is merged again from it
        "cview_ceiling",  # rule 33: past its ceiling, the compaction view merges further
        "free_message",  # rule 12: a message of at most 512 bytes is its own node
        "free_merge",  # rule 12: two short lines joined make their parent
        "message_call",  # rule 40: a message node starts
        "merge_call",  # rule 40: a merge starts once both halves are built
        "window_full",  # rule 40: 8 unbuilt message lines hold the next message node back
        "jobs_full",  # rule 39: every job slot busy while work is ready
        "fail",  # rule 38: a call fails
        "fail_cap",  # D5: the third failure builds the node from its input cut to 512 bytes
        "retry_at_message",  # rule 38: failed nodes are retried at the next message
        "retry_at_tick",  # D5: every 10 s while a turn waits
        "retry_started",  # a retried node starts again
        "wait_stopped",  # D5: a waiting turn stops calls for other nodes
        "wait_settled",  # rule 47: the view settled, the turn goes
        "go_deadline",  # D10: the turn takes the view at its deadline
        "zoom",  # rule 52
        "zoom_error",  # rule 52: not a power of 2, not a multiple, past the chat
        # input classes (``classes``): the 512-byte cut from both sides, huge messages, the
        # shortest and longest compactor lines, every job count (rule 39)
        "message_1_bytes",
        "message_511_bytes",
        "message_512_bytes",
        "message_513_bytes",
        "message_huge",
        "line_1_bytes",
        "line_512_bytes",
        *(f"jobs_{n}" for n in range(1, 9)),
        *LIVE_CASES,
    }
)


def _model(events: Sequence[Event]) -> list[str]:
    from bend.optchat import transcript  # the model side of the bridge, never used by production

    return transcript(events)


RECORDED = Recorded(run, classes)

BRIDGE = Bridge(
    area="optchat",
    count=COUNT,
    generate=generate,
    model=_model,
    production=RECORDED.production,
    cases=CASES,
    reached=RECORDED.reached,
)


# -- live runs: the compactor's timings from real HTTP (issue 12 item 7) ------------------------
#
# Scenarios LIVE_FIRST.. are live runs. Their first event is a ``config`` whose ``live`` key holds
# a driver script; the events after it are what happened when production ran that script: the
# real chat (``DurableChat``) and its live ``Compactor``, making real HTTP calls to the loopback
# server (``spec.loopback``), which holds every compaction request until the script answers it.
# The script says, step by step: a message arrives; the k-th held call (in the planner's running
# order) gets its reply (a line, an over-long line that brings the follow-up, an empty or
# thinking-only reply, an HTTP failure, a stream cut mid-body); a turn starts waiting for its view
# (it ends when the view settled, or at its deadline); the clock moves 10 s (retries while a turn
# waits) or past 10 minutes (a call's deadline). Between steps the run waits until every call is
# held at the server or parked at the prefix gate, so the order in which calls finish is the
# script's, and the run is the same every time (no sleeps; the clock is the run's own).
#
# Which call finished or failed when, relative to messages and turns, is recorded from the
# planner's own entry points (``done(k, line)``, ``fail(k)``, ``message``, ``wait``, ``go``,
# ``tick``) as model events, and those are the scenario's events: the model replays them
# (``bend.optchat.transcript``, unchanged) and its transcript must equal the production
# transcript printed live, byte for byte. Replies are the node's ``filler`` text cut at a
# character (``_reply_text``), so a built line of n bytes is ``filler(name(node), n)`` on the
# model side. A replay runs the script live again and marks every event that differs from the
# recorded one (`` live {...}``), so a change in what production does live shows.
#
# Generating these scenarios runs production live (the timings are its); the committed files
# are the regression record, and replay checks production still does exactly that.

LIVE_FIRST = 28
LIVE_COUNT = 40
LIVE_APIS = ("anthropic-messages", "openai-completions")
SETTLE_SECONDS = 20.0  # memory.settleTimeoutMs by default (D10)
STUCK = 20.0  # wall seconds without any progress: a hang guard, never part of a result
CLOCK = "2026-11-30T12:00:00+00:00"
REPLIES = ("line", "long", "fail", "cut", "empty", "think", "again")  # and "shrink" (one call's chain)

_TASK = re.compile(r"Compaction: (?:compress message (\d+) into|merge lines (\d+)\+(\d+) and)")
_CALLS = re.compile(r", (\d+) calls?\)?$")


def _reply_text(node: Node, length: int) -> str:
    """At most ``length`` bytes of the text ``filler(name(node), ...)`` starts with, cut at a
    character: stripped or cut again, it stays such a prefix, which the model side rebuilds."""
    return (name(node) + " " + _BASE).encode("utf-8")[:length].decode("utf-8", errors="ignore")


def _node_of(raw: bytes) -> Node:
    """The node a compaction request builds, read from its task (rule 35)."""
    found = _TASK.search(raw.decode("utf-8", errors="replace"))
    if found is None:
        raise ValueError("not a compaction request")
    if found.group(1) is not None:
        return (0, int(found.group(1)))
    first, n = int(found.group(2)), int(found.group(3))
    return (n.bit_length(), first // (2 * n))


def live_size(r: random.Random) -> int:
    roll = r.random()
    if roll < 0.08:
        return r.choice([1, 511, 512, 513])
    if roll < 0.35:
        return r.randint(1, NODE)
    if roll < 0.95:
        return r.randint(NODE + 1, 4_000)
    return r.randint(6_000, 9_000)


def _reply_step(r: random.Random) -> Event:
    kind = r.choices(REPLIES, weights=[60, 16, 11, 4, 5, 4, 4])[0]
    if kind in ("long", "again"):
        length = r.randint(NODE + 1, 2_500)
    elif kind == "fail":
        length = r.choice([500, 503, 429])
    else:
        length = r.choice([r.randint(1, NODE), NODE, r.randint(60, 480)])
    return {"do": "r", "k": r.randrange(8), "a": kind, "s": length}


def live_script(r: random.Random, phases: tuple[int, int] = (4, 6), lengths: tuple[int, int] = (8, 22)) -> list[Event]:
    """A driver script: phases that pile up work (messages, few replies) and phases that answer."""
    steps: list[Event] = []
    for _ in range(r.randint(*phases)):
        busy = r.random() < 0.5
        for _ in range(r.randint(*lengths)):
            roll = r.random()
            if roll < (0.45 if busy else 0.18):
                steps.append({"do": "m", "s": live_size(r)})
            elif roll < 0.815:
                steps.append(_reply_step(r))
            elif roll < 0.84:  # one call's conversation: over-long replies, each shorter (D9)
                k = r.randrange(8)
                steps.extend({"do": "r", "k": k, "a": "shrink", "s": r.randint(100, 400)} for _ in range(r.randint(2, 6)))
            elif roll < 0.89:
                steps.append({"do": "turn", "s": live_size(r)})
            elif roll < 0.94:
                steps.append({"do": "tick"})
            elif roll < 0.985:
                steps.append({"do": "go"})
            else:
                steps.append({"do": "late"})
    return steps


def live_generate(index: int) -> list[Event]:
    """Live scenario ``index`` (LIVE_FIRST..): the script, run live, and what happened."""
    r = random.Random(9_000_012 + index)
    ceiling = r.randint(2_500, 9_000)
    cceiling = r.randint(800, max(900, ceiling // 2))
    config: Event = {
        "e": "config",
        "jobs": 8 if index % 4 == 0 else r.randint(1, 8),
        "ceiling": ceiling,
        "floor": r.randint(ceiling // 4, ceiling * 3 // 4),
        "cceiling": cceiling,
        "cfloor": r.randint(cceiling // 4, cceiling * 3 // 4),
        "live": {"api": LIVE_APIS[index % 2], "steps": live_script(r)},
    }
    return _Live(config, None).run()[2]


def short_live_generate(index: int) -> list[Event]:
    """A short live run (SHORT_FIRST.., each fourth): a script of one or two short phases on
    small budgets."""
    r = random.Random(9_100_012 + index)
    ceiling = r.randint(1_500, 5_000)
    cceiling = r.randint(600, max(700, ceiling // 2))
    steps = live_script(r, (1, 2), (6, 16))
    if r.random() < 0.4:  # one call failing three times, a message between (D5: the third builds)
        k, at = r.randrange(2), r.randint(0, len(steps))
        chain: list[Event] = [{"do": "r", "k": k, "a": "fail", "s": r.choice([500, 503, 429])}, {"do": "m", "s": live_size(r)}] * 3
        steps[at:at] = [{"do": "m", "s": live_size(r)}, *chain[:-1]]
    if r.random() < 0.3:  # an over-long reply, then the same line again: the tries end (D9)
        k, at = r.randrange(2), r.randint(0, len(steps))
        steps[at:at] = [{"do": "r", "k": k, "a": kind, "s": r.randint(NODE + 1, 2_500)} for kind in ("long", "again")]
    config: Event = {
        "e": "config",
        "jobs": 1 + (index // 4) % 8,
        "ceiling": ceiling,
        "floor": r.randint(ceiling // 4, ceiling * 3 // 4),
        "cceiling": cceiling,
        "cfloor": r.randint(cceiling // 4, cceiling * 3 // 4),
        "live": {"api": LIVE_APIS[(index // 4) % 2], "steps": steps},
    }
    return _Live(config, None).run()[2]


class _Sink:
    def message(self, record: records.Message) -> None:
        pass

    def node(self, record: records.NodeLine) -> None:
        pass

    def merge(self, record: records.MergeLine) -> None:
        pass

    def view(self, nodes: Sequence[Node]) -> None:
        pass


class _Tap(DurableChat):
    """The chat as production has it; each change also goes to the run's record (the planner's
    entry points are where the compactor's calls end, fail, and turns wait)."""

    live: _Live

    def message(self, text: str, kind: records.Kind = records.Kind.USER, key: str | None = None) -> int:
        i = super().message(text, kind, key)
        self.live.record({"e": "m", "size": len(text.encode("utf-8"))})
        return i

    def done(self, k: int, line: str) -> Node | None:
        node = super().done(k, line)
        self.live.record({"e": "done", "k": k, "size": len(line.encode("utf-8")), "node": name(node) if node else "-"})
        return node

    def fail(self, k: int) -> Node | None:
        node = super().fail(k)
        self.live.record({"e": "fail", "k": k, "node": name(node) if node else "-"})
        return node

    def wait(self) -> None:
        super().wait()
        self.live.record({"e": "wait"})

    def go(self) -> None:
        super().go()
        self.live.record({"e": "go"})

    def tick(self) -> None:
        super().tick()
        self.live.record({"e": "tick"})


class _Gate(PrefixGate):
    """The compactor's prefix gate, counting the calls parked behind a prefix being written (the
    run waits for calls to be held or parked; a call whose writer's response started is moving)."""

    def __init__(self, moved: Callable[[], None]) -> None:
        super().__init__()
        self.parked: dict[str, int] = {}
        self.moved = moved

    async def enter(self, key: str) -> bool:
        parked = key in self.writing
        if parked:
            self.parked[key] = self.parked.get(key, 0) + 1
        try:
            return await super().enter(key)
        except asyncio.CancelledError:
            if parked and self.parked.get(key):
                self.parked[key] -= 1
            self.moved()
            raise

    def started(self, key: str) -> None:
        self.parked.pop(key, None)
        super().started(key)
        self.moved()


class _Held:
    """A compaction request the server holds until the run answers it."""

    def __init__(self, node: Node, attempt: int) -> None:
        self.node = node
        self.attempt = attempt  # 1 for the task, 2.. for follow-ups
        self.answer: loopback.Script = loopback.Stream([])
        self.ready = threading.Event()


class _Served:
    """The loopback server of one live run: every request is held until answered."""

    def __init__(self, loop: asyncio.AbstractEventLoop, kick: asyncio.Event) -> None:
        self.loop = loop
        self.kick = kick
        self.lock = threading.Lock()
        self.held: list[_Held] = []
        self.requests = 0
        self.server = loopback.LoopbackServer().start()
        self.server.responder = self.respond

    def respond(self, request: loopback.Recorded) -> loopback.Script | None:
        body = request.body if isinstance(request.body, dict) else {}
        attempt = 1 + sum(1 for m in body.get("messages", []) if isinstance(m, dict) and m.get("role") == "assistant")
        held = _Held(_node_of(request.raw), attempt)
        with self.lock:
            self.held.append(held)
            self.requests += 1
        self.loop.call_soon_threadsafe(self.kick.set)
        held.ready.wait(loopback.STALL_CAP)
        return held.answer

    def answer(self, held: _Held, script: loopback.Script) -> None:
        with self.lock:
            if held in self.held:
                self.held.remove(held)
        held.answer = script
        held.ready.set()

    def waiting(self) -> list[_Held]:
        with self.lock:
            return list(self.held)

    def close(self) -> None:
        for held in self.waiting():
            self.answer(held, loopback.Stream([]))
        self.server.close()


class LiveStuck(Exception):
    """A live run where calls neither ended nor reached the server (a hang guard)."""


def _http() -> httpx.AsyncClient:
    nodelay = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
    return httpx.AsyncClient(timeout=600.0, transport=httpx.AsyncHTTPTransport(verify=tls(), socket_options=nodelay))


class _Live:
    """One live run of a driver script (``config["live"]``); ``expected`` are the recorded events
    of a replay (each event that differs is marked on its line)."""

    def __init__(self, config: Event, expected: Sequence[Event] | None) -> None:
        self.config = config
        self.expected = expected
        self.events: list[Event] = [config]
        self.lines: list[str] = []
        self.cases: set[str] = set()
        self.now = 1_000.0
        self.turn: tuple[int, float] | None = None  # the waiting turn: its message size, its deadline
        self.fails: set[Node] = set()  # nodes that failed once
        self.played: dict[Node, str] = {}  # the last reply each node's call got
        self.lengths: dict[Node, int] = {}  # the length of the last line each node's call got
        self.kick = asyncio.Event()

    # -- the record ------------------------------------------------------------------------------

    def record(self, event: Event) -> None:
        number = len(self.events)
        self.events.append(event)
        chat = self.durable.chat
        extra = ""
        if self.expected is not None and (number >= len(self.expected) or self.expected[number] != event):
            extra = " live " + json.dumps(event, sort_keys=True)
        self.lines.append(f"{number} {event['e']} {_status(chat)}{extra}")
        if event["e"] == "m" and chat.batch > 0:
            self.lines.extend(_show(number, chat))
        self.kick.set()

    def row(self, row: Row) -> None:
        """The compactor's ``memory:`` rows: what they say about the live calls."""
        node = row.node
        if row.event in ("stopped", "failed", "capped"):
            for held in self.served.waiting():
                if held.node == node:  # the call is gone: its request is answered into the void
                    self.served.answer(held, loopback.Stream([]))
        if row.event == "stopped":
            self.cases.add("live_wait_stops_merge")
        elif row.event == "wait":
            self.cases.add("live_prefix_wait")
        elif row.event in ("failed", "capped"):
            self.fails.add(node)
            said = self.played.get(node)
            if "no line within" in row.note:
                self.cases.add("live_call_deadline")
            elif said == "fail":
                self.cases.add("live_http_failure")
            elif said == "cut":
                self.cases.add("live_cut_stream")
            if row.event == "capped":
                self.cases.add("live_fail_cap")
        elif row.event == "built":
            found = _CALLS.search(row.note)
            calls = int(found.group(1)) if found else 1
            if calls > 1:
                self.cases.add("live_over_long")
            if calls == 5:
                self.cases.add("live_five_calls")
            if node in self.fails:
                self.cases.add("live_retry_built")
            if node[0] > 0:
                self.cases.add("live_merge_built")
        self.kick.set()

    # -- waiting for the calls to rest -------------------------------------------------------------

    def _held(self) -> list[_Held]:
        """The held requests of calls under way, in the planner's running order."""
        running = self.durable.chat.running
        tasks = self.compactor.tasks
        out = []
        for held in self.served.waiting():
            if held.node in tasks and held.node in running:
                out.append(held)
            else:  # a call that is gone (a hang guard: stopped calls are answered at their row)
                self.served.answer(held, loopback.Stream([]))
        return sorted(out, key=lambda h: running.index(h.node))

    def _quiet(self) -> bool:
        held = {h.node for h in self._held()}
        moving = [n for n in self.compactor.tasks if n not in held]
        return len(moving) == sum(self.gate.parked.values())

    async def _rest(self) -> None:
        while True:
            self.kick.clear()
            if self._quiet():
                return
            try:
                await asyncio.wait_for(self.kick.wait(), STUCK)
            except TimeoutError:
                held = [(h.node, h.attempt) for h in self.served.waiting()]
                raise LiveStuck(
                    f"calls {sorted(self.compactor.tasks)} neither ended nor reached the server"
                    f" (held {held}, parked {self.gate.parked}, running {self.durable.chat.running}, waiting {self.gate.waiting}, writing {len(self.gate.writing)}, {len(self.events)} events)"
                ) from None

    # -- the script ----------------------------------------------------------------------------------

    def _answer(self, held: _Held, kind: str, length: int) -> None:
        node = held.node
        if kind in ("empty", "think") and held.attempt == 1:
            kind = "line"  # a first reply that is empty builds from the input: not a filler line
        script: loopback.Script
        last = self.lengths.get(node, 0) if held.attempt > 1 else 0
        if kind == "shrink":  # shorter than the call's last reply, still over the limit
            kind, length = "long", max(NODE + 1, (last or 2_600) - length)
        elif kind == "again":  # the call's last reply repeated: not shorter, the tries end (D9)
            if last:
                self.cases.add("live_repeated_reply")
            kind, length = "long", last or length
        if kind in ("line", "long"):
            self.lengths[node] = length
            script = loopback.Stream([loopback.Text(_reply_text(node, length))])
        elif kind == "empty":
            script = loopback.Stream([loopback.Text(" \n")])
        elif kind == "think":
            script = loopback.Stream([loopback.Thinking("nothing to add")])
        elif kind == "fail":
            script = loopback.Fail(length)
        else:
            script = loopback.Stream([loopback.Text(_reply_text(node, 40)), loopback.Cut()])
        self.played[node] = kind
        self.served.answer(held, script)

    def _start_turn(self, length: int) -> None:
        chat = self.durable.chat
        if any(not chat.is_built(n) for n in chat.view.nodes):
            self.compactor.wait()
            self.turn = (length, self.now + SETTLE_SECONDS)
        else:
            self.compactor.message(filler(f"m{chat.t}", length))

    def _end_turn(self, settled: bool) -> None:
        assert self.turn is not None
        length, _deadline = self.turn
        self.turn = None
        self.cases.add("live_turn_settled" if settled else "live_turn_deadline")
        self.compactor.go()
        self.compactor.message(filler(f"m{self.durable.chat.t}", length))

    def _step(self, step: Event) -> None:
        kind = step["do"]
        compactor = self.compactor
        if kind == "m":
            compactor.message(filler(f"m{self.durable.chat.t}", int(step["s"])))
        elif kind == "r":
            held = self._held()
            if len(held) >= 2:
                self.cases.add("live_concurrent_calls")
            if held:
                self._answer(held[int(step["k"]) % len(held)], str(step["a"]), int(step["s"]))
        elif kind == "turn":
            if self.turn is None:
                self._start_turn(int(step["s"]))
        elif kind == "tick":
            self.now += RETRY
            compactor.poll()
        elif kind == "go":
            self.now = max(self.now, self.turn[1]) if self.turn is not None else self.now + SETTLE_SECONDS
            compactor.poll()
            if self.turn is not None:
                self._end_turn(settled=False)
        elif kind == "late":
            self.now += CALL_DEADLINE
            compactor.poll()
        else:
            raise ValueError(f"unknown live step {kind!r}")

    async def _drive(self) -> None:
        live = self.config["live"]
        api = str(live["api"])
        self.cases.add(f"live_api_{api}")
        self.served = _Served(asyncio.get_running_loop(), self.kick)
        try:
            async with _http() as http:
                chat = Chat(
                    Config(
                        jobs=int(self.config.get("jobs", 8)),
                        ceiling=int(self.config.get("ceiling", 128_000)),
                        floor=int(self.config.get("floor", 64_000)),
                        cceiling=int(self.config.get("cceiling", 32_000)),
                        cfloor=int(self.config.get("cfloor", 16_000)),
                    )
                )
                self.durable = _Tap(chat, _Sink(), lambda: CLOCK)
                self.durable.live = self
                self.lines.append(f"0 config {_status(chat)}")
                provider = "anthropic" if api == "anthropic-messages" else "openrouter"
                model_id = "claude-live" if api == "anthropic-messages" else "anthropic/claude-live"
                wire = WireModel(provider, model_id, api, loopback.base_url(self.served.server, api), "sk-live", reasoning=False, max_tokens=4096)
                self.compactor = Compactor(self.durable, client_for(wire, timeout=600.0, http=http), Layers.of(), clock=lambda: self.now, rows=self.row)
                self.gate = self.compactor.gate = _Gate(self.kick.set)
                try:
                    for step in live["steps"]:
                        await self._rest()
                        self._step(step)
                        await self._settle_turn()
                    if self.turn is not None:
                        await self._rest()
                        self._step({"do": "go"})
                    await self._drain()
                finally:
                    await self.compactor.close()
        finally:
            self.served.close()

    async def _settle_turn(self) -> None:
        """A waiting turn whose view settled goes on (rule 47), as ``eukhe.memory.turn.pin``."""
        await self._rest()
        chat = self.durable.chat
        if self.turn is not None and all(chat.is_built(n) for n in chat.view.nodes):
            self._end_turn(settled=True)
            await self._rest()
        elif self.turn is not None and self.now >= self.turn[1]:
            self._end_turn(settled=False)
            await self._rest()

    async def _drain(self) -> None:
        """At the end the compactor is never late: each call under way gets a fitting line."""
        while True:
            await self._rest()
            held = self._held()
            if not held:
                return
            node = held[0].node
            self._answer(held[0], "line", line_size(node, 400, 113))

    def run(self) -> tuple[list[str], set[str], list[Event]]:
        asyncio.run(self._drive())
        self.lines.extend(_show(len(self.events), self.durable.chat))
        if self.served.requests:
            self.cases.add("live_http_calls")
        return self.lines, self.cases | self.durable.chat.cases, self.events
