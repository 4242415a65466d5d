"""The optchat bridge: the production planner (eukhe.memory) and the model (bend.optchat) run
the same scenarios and print, after each event, the same line (memory.md "The bridge").

Scenarios (the seed's list): 0 = 3,000 messages with the note's sizes and a compactor never
late; 1 = 4,000 messages with small budgets (view 6,000/3,000 bytes, compaction view
2,000/1,000) for a deep tree; 2 and 3 = 1,500 and 2,500 messages with a late compactor whose
calls start, fail and end in any order, with turns waiting, ticks and deadlines; 4..27 = 24
runs with random sizes, budgets and job counts 1..8. Every scenario is compared at every T.

This printer drives eukhe code only: it never imports the model. The scenario texts
(``filler``) are decoded here on their own, as the model decodes them on its side.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Sequence
from typing import Protocol

from bridge.core import Bridge, Event, dumps
from eukhe.memory import BLOCK, NODE
from eukhe.memory.chat import Chat, Config, ZoomError
from eukhe.memory.simulate import note_size
from eukhe.memory.view import Node, name, render_lines

COUNT = 28
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


def _random(r: random.Random) -> list[Event]:
    ceiling = r.randint(1_500, 24_000)
    cceiling = r.randint(600, max(700, ceiling // 2))
    config = {
        "e": "config",
        "jobs": r.randint(1, 8),
        "ceiling": ceiling,
        "floor": r.randint(ceiling // 4, ceiling * 3 // 4),
        "cceiling": cceiling,
        "cfloor": r.randint(cceiling // 4, cceiling * 3 // 4),
        "base": r.randint(1, 480),
        "spread": r.randint(1, 300),
    }
    events: list[Event] = [config]
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


def generate(index: int) -> list[Event]:
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
    """The production transcript of a scenario, and the rule cases it reached."""
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
