"""The fold law of the chat memory on disk (area optchat; derived: memory.md D1, D8, F1, rule 25;
issue 11 item 7). Registered here beside spec/laws/optchat.py with ``area="optchat"``.

fold_is_live: for every history of messages, calls that end or fail, turns that wait and
restarts, and for every crash point (every prefix of the lines the history wrote), the chat
reopened from the log has the live chat's view and shrinking flag at that point: the live chat
after the event whose lines the prefix cuts when its message line is in the prefix, before it
otherwise; except D8's case, where the cut loses the batch line of a message that passed the
ceiling from a view that was not shrinking: then the reopened view is the view before it with
the message's line appended, not shrinking (the batch runs at the next message).

Why bounded: the histories are unbounded and the fold's claim is about sequences of batches of
any length; no finite type covers them. Evidence: every history of the alphabet below up to
``LENGTH`` events (each crash point of its last event; the crash points of earlier events are
those of its prefixes, also enumerated), then Hypothesis over long histories of any sizes,
budgets and job counts with a crash at any line. Production (``eukhe.memory.durable``, its lines
encoded and decoded by ``eukhe.memory.records``, reopened by ``eukhe.memory.fold``) runs the same
histories under the same law, and its reopened view must also equal the model's.

The judge is the live chat, never the fold: the fold is checked against a chat that never
restarted through its own log.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterator
from typing import Any

from hypothesis import strategies as st

from bend.optchat import chat as C
from bend.optchat.fold import Log, Msg, logged, restart
from bend.optchat.node import name
from bend.optchat.text import filler
from eukhe.memory.chat import Config
from eukhe.memory.durable import DurableChat
from eukhe.memory.records import MergeLine, Message, NodeLine, decode, encode
from eukhe.memory.view import Node
from spec.evidence import Evidence, also, bounded, examples
from spec.registry import BOUNDED, law

SMALL = C.Config(jobs=2, ceiling=150, floor=100, cceiling=100, cfloor=50)
ALPHABET: tuple[tuple[Any, ...], ...] = (("m", 60), ("m", 700), ("done", 0, 90), ("fail", 0), ("wait",), ("restart",))
LENGTH = 4
CAP = 40
CLOCK = "2026-11-30T12:00:00+00:00"

Nodes = tuple[Node, ...]
Case = tuple[C.Config, tuple[tuple[Any, ...], ...]]


def _prod_config(config: C.Config) -> Config:
    return Config(config.jobs, config.ceiling, config.floor, config.cceiling, config.cfloor)


def _step(chat: C.Chat, log: Log, event: tuple[Any, ...]) -> tuple[C.Chat, Log]:
    kind = event[0]
    if kind == "restart":
        return restart(chat, log)
    if kind == "m":
        after = C.message(chat, filler(f"m{chat.t}", event[1]))
    elif kind == "done":
        node = chat.running[event[1] % len(chat.running)] if chat.running else (0, 0)
        after = C.done(chat, event[1], filler(name(node), event[2]))
    elif kind == "fail":
        after = C.fail(chat, event[1])
    else:
        after = C.wait(chat)
    return after, log + logged(chat, after)


def expected(before: C.Chat, after: C.Chat, new: Log, cut: int) -> tuple[Nodes, bool]:
    """The live view and shrinking flag a crash after ``cut`` of an event's ``new`` lines must
    reopen to (the law's statement, D8)."""
    if not new or not isinstance(new[0], Msg) or cut == 0:
        full = cut == len(new)
        chat = after if full else before
        return tuple(n for n, _ in chat.view), chat.open
    lost_batch = cut < len(new) and not isinstance(new[-1], NodeLine) and not isinstance(new[-1], Msg)
    if lost_batch and not before.open:
        return tuple(n for n, _ in before.view) + ((0, before.t),), False
    return tuple(n for n, _ in after.view), after.open


# -- the model ---------------------------------------------------------------------------------


def model_holds(case: Case, cuts: str = "last") -> bool:
    """The law on the model for one history: crash points of the last event (``last``) or of
    every event (``all``)."""
    config, history = case
    chat: C.Chat = C.Chat(config=config)
    log: Log = ()
    for number, event in enumerate(history):
        before, start = chat, len(log)
        chat, log = _step(chat, log, event)
        if event[0] == "restart" or (cuts == "last" and number < len(history) - 1):
            continue
        new = log[start:]
        for cut in range(len(new) + 1):
            reopened, _ = restart(before, log[: start + cut])
            got = (tuple(n for n, _ in reopened.view), reopened.open)
            if got != expected(before, chat, new, cut):
                return False
    return True


# -- production ----------------------------------------------------------------------------------


class Lines:
    """A sink keeping every line as the store would write it (bytes), in order."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, bytes]] = []

    def message(self, record: Message) -> None:
        self.lines.append(("main", encode(record)))

    def node(self, record: NodeLine) -> None:
        self.lines.append(("tree", encode(record)))

    def merge(self, record: MergeLine) -> None:
        self.lines.append(("tree", encode(record)))

    def view(self, nodes: Any) -> None:
        pass


def reopen_lines(config: Config, lines: list[tuple[str, bytes]], sink: Lines) -> DurableChat:
    """Production reopened from the lines (decoded as the store decodes its files)."""
    messages = [decode(data[:-1], tree=False) for where, data in lines if where == "main"]
    tree = [decode(data[:-1], tree=True) for where, data in lines if where == "tree"]
    assert all(isinstance(m, Message) for m in messages) and all(isinstance(t, (NodeLine, MergeLine)) for t in tree)
    return DurableChat.open(config, messages, tree, sink, lambda: CLOCK)  # type: ignore[arg-type]


def production_holds(case: Case, cuts: str = "last") -> bool:
    """The law on production, and production's reopened view equal to the model's."""
    config, history = case
    pconfig = _prod_config(config)
    sink = Lines()
    durable = DurableChat.open(pconfig, [], [], sink, lambda: CLOCK)
    model: C.Chat = C.Chat(config=config)
    log: Log = ()
    for number, event in enumerate(history):
        chat = durable.chat
        before_view, before_open, start = tuple(chat.view.nodes), chat.open, len(sink.lines)
        kind = event[0]
        if kind == "restart":
            durable = reopen_lines(pconfig, sink.lines, sink)
        elif kind == "m":
            durable.message(filler(f"m{chat.t}", event[1]))
        elif kind == "done":
            if chat.running:
                node = chat.running[event[1] % len(chat.running)]
                durable.done(event[1], filler(name(node), event[2]))
        elif kind == "fail":
            durable.fail(event[1])
        else:
            durable.wait()
        model_before = model
        model, log = _step(model, log, event)
        after = durable.chat
        if (tuple(after.view.nodes), after.open) != (tuple(n for n, _ in model.view), model.open):
            return False
        if kind == "restart" or (cuts == "last" and number < len(history) - 1):
            continue
        new = sink.lines[start:]
        for cut in range(len(new) + 1):
            reopened = reopen_lines(pconfig, sink.lines[: start + cut], Lines()).chat
            got = (tuple(reopened.view.nodes), reopened.open)
            full = cut == len(new)
            if not new or new[0][0] != "main" or cut == 0:
                want = (tuple(after.view.nodes), after.open) if full else (before_view, before_open)
            elif cut < len(new) and b'"merge"' in new[-1][1] and not before_open:
                want = (before_view + ((0, model_before.t),), False)
            else:
                want = (tuple(after.view.nodes), after.open)
            if got != want:
                return False
    return True


# -- the domain ------------------------------------------------------------------------------------


def histories(length: int = LENGTH) -> Iterator[Case]:
    for size in range(1, length + 1):
        for history in itertools.product(ALPHABET, repeat=size):
            yield SMALL, history


@functools.lru_cache(maxsize=None)
def _label() -> str:
    count = sum(len(ALPHABET) ** k for k in range(1, LENGTH + 1))
    return (
        f"every history of {len(ALPHABET)} events (messages of 60 and 700 bytes, the oldest call ending with a 90-byte line or failing, "
        f"a turn waiting, a restart) of 1..{LENGTH} events ({count:,} histories), 2 jobs, budgets 150/100 and 100/50, "
        f"every crash point of each history's last event"
    )


configs = st.builds(
    lambda jobs, ceiling, f, cceiling, cf: C.Config(jobs, ceiling, ceiling * f // 4, cceiling, cceiling * cf // 4),
    st.integers(1, 8),
    st.integers(0, 6_000),
    st.integers(0, 4),
    st.integers(0, 3_000),
    st.integers(0, 4),
)
events = st.lists(
    st.one_of(
        st.tuples(st.just("m"), st.one_of(st.integers(1, 512), st.integers(513, 3_000), st.sampled_from([1, 512, 513]))),
        st.tuples(st.just("m"), st.integers(1, 900)),
        st.tuples(st.just("done"), st.integers(0, 7), st.integers(1, 512)),
        st.tuples(st.just("done"), st.integers(0, 7), st.integers(1, 512)),
        st.tuples(st.just("fail"), st.integers(0, 7)),
        st.tuples(st.just("wait"),),
        st.tuples(st.just("restart"),),
    ),
    max_size=CAP,
)


@law(
    "fold_is_live",
    "memory D1, D8, F1, rule 25",
    "For every history and every crash point the chat reopened from its log (view folded from the logged merges, "
    "shrinking flag from the last merge line) has the live view, except D8's deferred batch.",
    BOUNDED,
    area="optchat",
    derivation="memory.md D1 (the view folded from messages and merge lines, same parts, same bytes), F1, D8; issue 11",
)
def fold_is_live() -> Evidence:
    model = also(
        bounded(histories(), model_holds, label=_label()),
        examples(lambda config, history: model_holds((config, tuple(history)), "all"), config=configs, history=events),
    )
    production = also(
        bounded(histories(), production_holds, label=_label()),
        examples(lambda config, history: production_holds((config, tuple(history)), "all"), config=configs, history=events),
    )
    return model.with_production(production)
