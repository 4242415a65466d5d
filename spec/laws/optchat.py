"""The optchat laws (memory.md "The laws and their strength", D5), as properties of the model
``bend.optchat``, judged by spec.oracles.optchat (node arithmetic, cut, context, the built store
read by the seed's trie layout, the digit counter), never by the model's own functions.

No law here is proved about the code: merge_is_one_pair, merge_covers, fit_reaches_budget,
fit_merges_built and push_agrees_always speak of loops over views of any length (most_due's walk,
fit's merges, agree.step from any digit state) whose steps are no functions of bend.optchat an
encoding could be tied to. They are computed exactly on every view of a chat of 1..10 messages
with every set of built parents (and 5 budgets), at every t up to 20,000, and hunted by
Hypothesis; the z3 proofs that remain are about encodings of bend.optchat's node arithmetic (first,
last, parent) and of view.more_due, each tied to its function on a finite family (proved for the
encoding), and stand beside the bounded laws, never as their strength.

The history laws (view_covers ... settle_reached) speak of the planner after
any event history: its state (the view, the cview, the queues, failures, the built store) is
unbounded in T, sizes and outcomes, and an inductive invariant strong enough for z3 would have
to restate the whole planner. They are checked exactly on every history of a finite alphabet
(bounded: at most 4 messages, fixed budgets) and hunted by Hypothesis over arbitrary histories
(sizes 1..3,000 with the 511/512/513 boundary, 1..8 jobs, any budgets); the same histories drive
production's Chat (eukhe.memory) and the law's check on it. Collections are capped (``CAP``) so the hunt-crosshair profile stays usable.
"""

from __future__ import annotations

import functools
from array import array
from collections.abc import Iterator
from typing import Any

import z3
from hypothesis import strategies as st

from bend.optchat import agree, push as P
from bend.optchat import node as N
from bend.optchat import chat as C
from bend.optchat.node import Node
from bend.optchat.text import NODE, filler
from bend.optchat.view import (
    PLACEHOLDER_BYTES,
    View,
    fit,
    merge_step,
    mergeable,
    more_due,
    more_due_first,
    most_due,
    view_bytes,
)
from eukhe.memory.chat import Chat as ProdChat
from eukhe.memory.chat import Config as ProdConfig
from eukhe.memory.view import View as ProdView
from spec.evidence import Evidence, LawFailed, Tie, all_of, also, bounded, encoding, examples, prove, tie
from spec.oracles import optchat as O
from spec.proofs import timed
from spec.registry import BOUNDED, law

first, last, name, parent, siblings, cut, size = O.first, O.last, O.name, O.parent, O.siblings, O.cut, O.size

CAP = 40
FAILURES = 3  # the seed's number (D5), not the model's constant: a break there must show
SECTION = "memory §3"

# -- the vocabulary: covers, summarized ---------------------------------------------------------


covers = O.covers


def nodes_of(view: View) -> tuple[Node, ...]:
    return tuple(n for n, _ in view)


def text_of(chat: C.Chat, node: Node) -> str | None:
    """The judge's reading of the model's built store (spec.oracles: the seed's trie layout)."""
    return O.built_line(chat.built, node)


def message_of(chat: C.Chat, i: int) -> str:
    found = O.trie_get(chat.messages, i)
    return found if isinstance(found, str) else ""


def source_of(chat: C.Chat, node: Node) -> str:
    """A node's input (rule 12): its message, or its two halves' lines joined with a newline."""
    if node[0] == 0:
        return message_of(chat, node[1])
    left, right = (node[0] - 1, 2 * node[1]), (node[0] - 1, 2 * node[1] + 1)
    return (text_of(chat, left) or "") + "\n" + (text_of(chat, right) or "")


def summarized(chat: C.Chat, view: View) -> bool:
    """Every merged line is built; only a message's own line may wait; each size is the built
    line's or the placeholder's."""
    for node, length in view:
        line = text_of(chat, node)
        if line is None and (node[0] > 0 or length != O.PLACEHOLDER_BYTES):
            return False
        if line is not None and length != size(line):
            return False
    return True


# -- histories ------------------------------------------------------------------------------------

Event = tuple[Any, ...]


def line_for(chat: C.Chat, k: int, length: int) -> str:
    node = chat.running[k % len(chat.running)] if chat.running else (0, 0)
    return filler(name(node), length)


def apply(chat: C.Chat, event: Event) -> C.Chat:
    kind = event[0]
    if kind == "m":
        return C.message(chat, filler(f"m{chat.t}", event[1]))
    if kind == "done":
        return C.done(chat, event[1], line_for(chat, event[1], event[2]))
    if kind == "fail":
        return C.fail(chat, event[1])
    if kind == "wait":
        return C.wait(chat)
    if kind == "go":
        return C.go(chat)
    if kind == "tick":
        return C.tick(chat)
    raise ValueError(f"unknown event {event!r}")


Step = tuple[C.Chat, Event, C.Chat]


def steps(config: C.Config, events: list[Event]) -> Iterator[Step]:
    chat = C.Chat(config=config)
    for event in events:
        nxt = apply(chat, event)
        yield chat, event, nxt
        chat = nxt


configs = st.builds(
    lambda jobs, ceiling, f, cceiling, cf: C.Config(jobs, ceiling, ceiling * f // 4, cceiling, cceiling * cf // 4),
    st.integers(1, 8),
    st.integers(0, 6_000),
    st.integers(0, 4),
    st.integers(0, 3_000),
    st.integers(0, 4),
)
# Input classes: every size around the 512-byte cut, long messages, and huge ones (past every
# budget the configs draw); compactor lines of 1 and 512 bytes.
sizes = st.one_of(st.integers(1, 512), st.integers(513, 3_000), st.sampled_from([1, 2, 511, 512, 513, 514, 100_000]))
line_sizes = st.one_of(st.integers(1, NODE), st.sampled_from([1, NODE]))
events = st.lists(
    st.one_of(
        st.tuples(st.just("m"), sizes),
        st.tuples(st.just("m"), sizes),
        st.tuples(st.just("done"), st.integers(0, 7), line_sizes),
        st.tuples(st.just("done"), st.integers(0, 7), line_sizes),
        st.tuples(st.just("fail"), st.integers(0, 7)),
        st.tuples(st.just("wait")),
        st.tuples(st.just("go")),
        st.tuples(st.just("tick")),
    ),
    max_size=CAP,
)

# The finite domain: every history of this alphabet with at most MESSAGES messages (the state
# space is finite: T <= MESSAGES, at most 3 failures per node, sizes from a finite set).
MESSAGES = 4
SMALL = C.Config(jobs=2, ceiling=700, floor=350, cceiling=350, cfloor=150)
ALPHABET: tuple[Event, ...] = (
    ("m", 100),
    ("m", 700),
    ("done", 0, 300),
    ("fail", 0),
    ("wait",),
    ("go",),
    ("tick",),
)


@functools.lru_cache(maxsize=None)
def explored(messages: int = MESSAGES) -> tuple[tuple[Step, ...], int]:
    """Every transition of every state reachable from the empty chat under ALPHABET with at
    most ``messages`` messages; and the number of states."""
    start = C.Chat(config=SMALL)
    seen = {start}
    frontier = [start]
    edges: list[Step] = []
    while frontier:
        later = []
        for chat in frontier:
            for event in ALPHABET:
                if event[0] == "m" and chat.t >= messages:
                    continue
                nxt = apply(chat, event)
                edges.append((chat, event, nxt))
                if nxt not in seen:
                    seen.add(nxt)
                    later.append(nxt)
        frontier = later
    return tuple(edges), len(seen)


def _label(messages: int = MESSAGES) -> str:
    _edges, states = explored(messages)
    return (
        f"every history of {len(ALPHABET)} events (messages of 100 and 700 bytes, the oldest call "
        f"ending or failing, wait, go, tick) with at most {messages} messages, 2 jobs, budgets "
        f"700/350 and 350/150: {states:,} reachable states"
    )


def both(transition: Any, production: Any = None) -> Evidence:
    """Proved on every transition of the finite domain, then hunted by Hypothesis; with
    ``production``, the same histories also drive eukhe.memory's Chat and the law's check on it."""
    edges, _states = explored()
    proved = bounded(edges, lambda e: transition(*e), label=_label())

    def hunt(config: C.Config, history: list[Event]) -> bool:
        return all(transition(*step) for step in steps(config, history))

    evidence = also(proved, examples(hunt, config=configs, history=events))
    if production is None:
        return evidence

    def hunt_production(config: C.Config, history: list[Event]) -> bool:
        chat = ProdChat(ProdConfig(config.jobs, config.ceiling, config.floor, config.cceiling, config.cfloor))
        for event in history:
            before = (list(chat.view.nodes), list(chat.running))
            apply_production(chat, event)
            if not production(before, event, chat):
                raise LawFailed(f"production fails after {event!r} in {history!r}")
        return True

    return evidence.with_production(examples(hunt_production, config=configs, history=events))


def apply_production(chat: ProdChat, event: Event) -> None:
    kind = event[0]
    if kind == "m":
        chat.message(filler(f"m{chat.t}", event[1]))
    elif kind == "done":
        if chat.running:
            node = chat.running[event[1] % len(chat.running)]
            chat.done(event[1], filler(name(node), event[2]))
    elif kind == "fail":
        chat.fail(event[1])
    elif kind == "wait":
        chat.wait()
    elif kind == "go":
        chat.go()
    elif kind == "tick":
        chat.tick()


def prod_summarized(chat: ProdChat, nodes: list[Node], sizes: list[int]) -> bool:
    for node, length in zip(nodes, sizes):
        line = chat.texts.get(node)
        if line is None and (node[0] > 0 or length != O.PLACEHOLDER_BYTES):
            return False
        if line is not None and length != size(line):
            return False
    return True


def prod_targets(chat: ProdChat) -> list[Node]:
    return list(chat.running) + ([(0, chat.t - 1)] if chat.t else [])


def prod_context(chat: ProdChat) -> bool:
    for node in prod_targets(chat):
        want = O.context(chat.cview.nodes, node, lambda n: n in chat.texts)
        if tuple(chat.context(node)) != want:
            return False
    return True


def prod_need_first(chat: ProdChat) -> bool:
    if not chat.waiting:
        return True
    unbuilt = {n for n in chat.view.nodes if n not in chat.texts}
    return all(n in unbuilt for n in chat.running)


def prod_appends(before: tuple[list[Node], list[Node]], event: Event, chat: ProdChat) -> bool:
    old, new = before[0], list(chat.view.nodes)
    if event[0] == "m":
        return chat.batch >= 0 or new == old + [(0, chat.t - 1)]
    return new == old


# -- views: every cover of a small chat with every set of built parents ---------------------------


def all_covers(start: int, t: int) -> Iterator[tuple[Node, ...]]:
    if start == t:
        yield ()
        return
    level = 0
    while start % (1 << level) == 0 and start + (1 << level) <= t:
        for rest in all_covers(start + (1 << level), t):
            yield ((level, start >> level),) + rest
        level += 1


def node_size(node: Node) -> int:
    return 20 + (node[1] * 37 + node[0] * 11) % 90


def small_views() -> Iterator[tuple[View, int, frozenset[Node]]]:
    """Every view of a chat of 1..10 messages, with every subset of its pairs' parents built and
    every message line built or waiting on a fixed pattern."""
    for t in range(1, 11):
        for cover in all_covers(0, t):
            parents = sorted({parent(a) for a, b in zip(cover, cover[1:]) if siblings(a, b)})
            for mask in range(1 << len(parents)):
                built = frozenset(p for bit, p in enumerate(parents) if mask >> bit & 1)
                built |= frozenset(n for n in cover if n[0] > 0 or n[1] % 3 != 2)
                view = tuple((n, node_size(n) if n in built else PLACEHOLDER_BYTES) for n in cover)
                yield view, t, built


def lookup(built: frozenset[Node]) -> Any:
    return lambda n: node_size(n) if n in built else None


@st.composite
def any_view(draw: Any) -> tuple[View, int, frozenset[Node]]:
    t = draw(st.integers(1, 200))
    cover: list[Node] = []
    start = 0
    while start < t and len(cover) < CAP:
        top = 0
        while start % (2 << top) == 0 and start + (2 << top) <= t:
            top += 1
        level = draw(st.integers(0, top))
        cover.append((level, start >> level))
        start += 1 << level
    t = start
    parents = [parent(a) for a, b in zip(cover, cover[1:]) if siblings(a, b)]
    chosen = draw(st.lists(st.booleans(), min_size=len(parents), max_size=len(parents)))
    built = frozenset(p for p, keep in zip(parents, chosen) if keep) | frozenset(
        n for n in cover if n[0] > 0 or draw(st.booleans())
    )
    view = tuple((n, node_size(n) if n in built else PLACEHOLDER_BYTES) for n in cover)
    return view, t, built


def views_both(prop: Any, label: str) -> Evidence:
    proved = bounded(small_views(), lambda c: prop(*c), label=label)
    return also(proved, examples(lambda case: prop(*case), case=any_view()))


# -- §3 the view ----------------------------------------------------------------------------------


@law("view_covers", SECTION, "After any event history the view covers 0..T-1: each message once, contiguous, oldest first, each line a tree node.", BOUNDED)
def view_covers() -> Evidence:
    return both(lambda before, event, after: covers(nodes_of(after.view), after.t), lambda b, e, chat: covers(chat.view.nodes, chat.t))


@law("cview_covers", "memory §4", "After any event history the compaction view covers 0..T-1 the same way.", BOUNDED)
def cview_covers() -> Evidence:
    return both(lambda before, event, after: covers(nodes_of(after.cview), after.t), lambda b, e, chat: covers(chat.cview.nodes, chat.t))


def _appends(before: C.Chat, event: Event, after: C.Chat) -> bool:
    if event[0] != "m" or after.batch >= 0:
        return True
    return nodes_of(after.view) == nodes_of(before.view) + ((0, before.t),)


@law("message_appends", "memory §3.2", "A message that starts no batch appends only its line: the old view is a prefix of the new.", BOUNDED)
def message_appends() -> Evidence:
    return both(_appends, prod_appends)


def _merges_nothing(before: C.Chat, event: Event, after: C.Chat) -> bool:
    old, new = nodes_of(before.view), nodes_of(after.view)
    if event[0] == "m":
        return after.batch >= 0 or (len(new) == len(old) + 1 and set(old) <= set(new))
    return new == old


@law("message_merges_nothing", "memory §3.2", "A message with no batch merges nothing, and no other event changes the view's lines.", BOUNDED)
def message_merges_nothing() -> Evidence:
    return both(_merges_nothing, prod_appends)


def _one_pair(view: View, t: int, built: frozenset[Node]) -> bool:
    after = merge_step(view, t, lookup(built))
    if after == view:
        return _stuck(view, built)
    if len(after) != len(view) - 1:
        return False
    k = next(k for k in range(len(after)) if after[k] != view[k])
    a, b = view[k][0], view[k + 1][0]
    return siblings(a, b) and after[k][0] == parent(a) and parent(a) in built and after[k + 1 :] == view[k + 2 :]


# -- merge_step: bounded; the node arithmetic proved for its encoding --------------------------------
#
# Not proved: merge_step walks the pairs of a view of any length (most_due's loop) and splices one
# pair; neither the walk's step nor the splice is a function of bend.optchat that an encoding could
# be tied to, so the laws are computed exactly on every view of a chat of 1..10 messages with every
# set of built parents, and hunted by Hypothesis. Beside them, the node arithmetic the merge relies
# on (the parent of two siblings spans exactly both, and the judge's covers step over the siblings
# and over their parent agree) is proved by z3 for every level and index, over the encodings of
# bend.optchat.node's first, last and parent, each tied to its function on every node of levels
# 0..8 and indexes 0..64 (bounded: proved for the encoding).


@encoding("bend.optchat.node.first")
def first_encoding(level: Any, index: Any, power: Any) -> Any:
    """The node's first message; ``power`` is 2^level."""
    return index * power


@encoding("bend.optchat.node.last")
def last_encoding(level: Any, index: Any, power: Any) -> Any:
    """The node's last message; ``power`` is 2^level."""
    return (index + 1) * power - 1


@encoding("bend.optchat.node.parent")
def parent_encoding(level: Any, index: Any) -> tuple[Any, Any]:
    return level + 1, index / 2  # z3's integer division: the floor, for an index >= 0


TIE_NODES = [((level, index),) for level in range(9) for index in range(65)]
TIE_NODES_LABEL = "every node of levels 0..8 and indexes 0..64"


def _node_args(node: Node) -> tuple[Any, ...]:
    return z3.IntVal(node[0]), z3.IntVal(node[1]), z3.IntVal(1 << node[0])


@functools.lru_cache(maxsize=None)
def node_ties() -> tuple[Tie, ...]:
    return (
        tie(first_encoding, N.first, (TIE_NODES, TIE_NODES_LABEL), args=_node_args),
        tie(last_encoding, N.last, (TIE_NODES, TIE_NODES_LABEL), args=_node_args),
        tie(parent_encoding, N.parent, (TIE_NODES, TIE_NODES_LABEL), args=lambda node: (z3.IntVal(node[0]), z3.IntVal(node[1]))),
    )


def _node_facts() -> tuple[dict[str, Any], list[Any]]:
    """Siblings a = (l, 2j), b = (l, 2j+1) of any level and index (the judge's siblings), 2^l = P, and
    their parent by the encoding of node.parent, whose level is l + 1 (so its power is 2P)."""
    lv, j, pw = z3.Ints("l j 2^l")
    a_i, b_i = 2 * j, 2 * j + 1
    up_l, up_i = parent_encoding(lv, a_i)
    nodes = {
        "a_first": first_encoding(lv, a_i, pw), "a_last": last_encoding(lv, a_i, pw),
        "b_first": first_encoding(lv, b_i, pw), "b_last": last_encoding(lv, b_i, pw),
        "p_first": first_encoding(up_l, up_i, 2 * pw), "p_last": last_encoding(up_l, up_i, 2 * pw),
        "p_level": up_l, "p_index": up_i, "a_level": lv,
    }
    return nodes, [lv >= 0, j >= 0, pw >= 1]


@functools.lru_cache(maxsize=None)
def parent_lemma() -> Evidence:
    """The parent of siblings a, b is a node one level up (level and index >= 0), starts at a's
    first message and ends at b's last."""

    def claim() -> Any:
        nd, facts = _node_facts()
        return z3.Implies(z3.And(*facts), z3.And(
            nd["p_level"] == nd["a_level"] + 1, nd["p_index"] >= 0, nd["p_first"] == nd["a_first"],
            nd["p_last"] == nd["b_last"], nd["b_first"] == nd["a_last"] + 1,
        ))

    return timed(claim, label="siblings (l, 2j), (l, 2j+1) of every level and index: their parent spans exactly both", ties=node_ties())


@functools.lru_cache(maxsize=None)
def covers_step() -> Evidence:
    """The judge's covers is the left fold of ``ok(line, start)`` (a node starting at start) and
    ``start := last + 1``: from any start s, the two siblings pass and end at s', exactly when
    their parent passes and ends at s'."""
    s = z3.Int("start")

    def claim() -> Any:
        nd, facts = _node_facts()
        two = z3.And(nd["a_first"] == s, nd["b_first"] == nd["a_last"] + 1)
        one = nd["p_first"] == s
        return z3.Implies(z3.And(*facts), z3.And(two == one, nd["p_last"] + 1 == nd["b_last"] + 1))

    return timed(claim, label="the judge's covers step over the two siblings and over their parent, from any start", ties=node_ties())


MERGE_LABEL = "every view of a chat of 1..10 messages x every set of built pair parents"


@law("merge_is_one_pair", "memory §3.1", "A merge replaces two sibling lines with their built parent, or changes nothing when no pair can merge.", BOUNDED)
def merge_is_one_pair() -> Evidence:
    """Bounded: every view of up to 10 messages with every set of built parents, and Hypothesis's
    views; the node arithmetic proved for its encoding beside it."""
    return also(views_both(_one_pair, MERGE_LABEL), parent_lemma())


@law("merge_covers", "memory §3.1", "A merge keeps the view covering 0..T-1.", BOUNDED)
def merge_covers() -> Evidence:
    """Bounded as merge_is_one_pair; the judge's covers step over a merged pair proved for the
    encoding of the node arithmetic beside it."""
    return also(
        views_both(lambda view, t, built: covers(nodes_of(merge_step(view, t, lookup(built))), t), MERGE_LABEL),
        all_of(parent_lemma(), covers_step()),
    )


def _budgets(view: View) -> tuple[int, ...]:
    total = sum(length for _n, length in view)
    return (0, total // 3, total // 2, total - 1, total)


def _judge_mergeable(view: View, k: int, built: frozenset[Node]) -> bool:
    """Rule 19, 24 as the seed says it: two sibling lines whose parent is built."""
    a, b = view[k][0], view[k + 1][0]
    return O.siblings(a, b) and O.parent(a) in built


def _stuck(view: View, built: frozenset[Node]) -> bool:
    return not any(_judge_mergeable(view, k, built) for k in range(len(view) - 1))


# -- fit: bounded --------------------------------------------------------------------------------
#
# Not proved: fit loops over merges of a view of any length, and its loop body (most_due, then
# merge_at, the total updated) is no function an encoding could be tied to. The laws are computed
# exactly on every view of a chat of 1..10 messages with every set of built parents x 5 budgets,
# and on Hypothesis's views, on the model and on production's View.fit; beside them, each
# iteration of the model's fit is judged (``_fit_agrees``): most_due picks a pair the judge finds
# mergeable, -1 only when none is; the merge is that pair replaced by its parent; the total is
# the view's bytes; fit's view and merge count are the loop's.


def _fit_agrees(view: View, t: int, built: frozenset[Node]) -> bool:
    look = lookup(built)
    for budget in _budgets(view):
        current = view
        total = sum(length for _n, length in view)
        merges = 0
        while total > budget:
            k = most_due(current, t, look)
            if k < 0:
                if not _stuck(current, built):
                    raise LawFailed(f"most_due finds no pair in {current!r} though one can merge")
                break
            if not _judge_mergeable(current, k, built):
                raise LawFailed(f"most_due chose pair {k} of {current!r}, which cannot merge")
            up = O.parent(current[k][0])
            merged = current[:k] + ((up, node_size(up)),) + current[k + 2 :]
            if merge_step(current, t, look) != merged:
                raise LawFailed(f"a merge of pair {k} of {current!r} is not that pair replaced by its parent")
            total += node_size(up) - current[k][1] - current[k + 1][1]
            current = merged
            merges += 1
        if fit(view, t, look, budget) != (current, merges):
            raise LawFailed(f"fit of {view!r} to {budget} is not the judged loop's {current!r} after {merges} merges")
    return True


@functools.lru_cache(maxsize=None)
def _fit_check() -> Evidence:
    return also(
        bounded(small_views(), lambda c: _fit_agrees(*c), label="the judge on each merge of the model's fit: every view of a chat of 1..10 messages x every set of built pair parents x 5 budgets"),
        examples(lambda case: _fit_agrees(*case), case=any_view()),
    )


def _prod_fit(view: View, t: int, built: frozenset[Node], budget: int) -> tuple[tuple[Node, ...], int, int]:
    """Production's fit (eukhe.memory.view.View.fit) on the same view: its lines, bytes, merges."""
    depth = max((n[0] for n in built), default=0) + 2
    levels = [array("H") for _ in range(depth)]
    for node in built:
        row = levels[node[0]]
        if len(row) <= node[1]:
            row.extend([0] * (node[1] + 1 - len(row)))
        row[node[1]] = node_size(node)
    prod = ProdView()
    for node, length in view:
        prod.append(node, length)
    merges = prod.fit(t, levels, budget)
    return tuple(prod.nodes), prod.total, merges


def _prod_case(check: Any) -> Any:
    def run(view: View, t: int, built: frozenset[Node]) -> bool:
        for budget in _budgets(view):
            nodes, total, merges = _prod_fit(view, t, built, budget)
            after = tuple((n, node_size(n) if n in built else PLACEHOLDER_BYTES) for n in nodes)
            if total != sum(length for _n, length in after) or len(nodes) != len(view) - merges:
                raise LawFailed(f"production's fit of {view!r} to {budget}: total {total} or {merges} merges do not match its lines")
            if not check(view, after, built, budget):
                return False
        return True

    return run


def _production(check: Any, label: str) -> Evidence:
    run = _prod_case(check)
    return also(
        bounded(small_views(), lambda c: run(*c), label=f"eukhe.memory View.fit: {label}"),
        examples(lambda case: run(*case), case=any_view()),
    )


def _reaches_after(view: View, after: View, built: frozenset[Node], budget: int) -> bool:
    return sum(length for _n, length in after) <= budget or _stuck(after, built)


def _built_after(view: View, after: View, built: frozenset[Node], budget: int) -> bool:
    original = {n for n, _ in view}
    return all(n in original or n in built for n, _ in after)


def _model(check: Any, label: str) -> Evidence:
    """The law's check on the model's fit, at each of 5 budgets of every view."""

    def run(view: View, t: int, built: frozenset[Node]) -> bool:
        return all(check(view, fit(view, t, lookup(built), budget)[0], built, budget) for budget in _budgets(view))

    return also(
        bounded(small_views(), lambda c: run(*c), label=f"bend.optchat.view.fit: {label}"),
        examples(lambda case: run(*case), case=any_view()),
    )


FIT_LABEL = "every view of a chat of 1..10 messages x every set of built pair parents x 5 budgets"


@law("fit_reaches_budget", "memory §3.2", "A batch ends at or under its budget unless no pair can merge (their parents unbuilt).", BOUNDED)
def fit_reaches_budget() -> Evidence:
    return also(_model(_reaches_after, FIT_LABEL), _fit_check()).with_production(_production(_reaches_after, FIT_LABEL))


@law("fit_merges_built", "memory §3.2", "A batch merges only into built parents.", BOUNDED)
def fit_merges_built() -> Evidence:
    return also(_model(_built_after, FIT_LABEL), _fit_check()).with_production(_production(_built_after, FIT_LABEL))


@law("view_summarized", SECTION, "After any history every merged view line is built; only a message's own line waits for its summary.", BOUNDED)
def view_summarized() -> Evidence:
    return both(lambda before, event, after: summarized(after, after.view), lambda b, e, chat: prod_summarized(chat, chat.view.nodes, chat.view.sizes))


@law("cview_summarized", "memory §4", "After any history every merged compaction view line is built; only a message's own line waits.", BOUNDED)
def cview_summarized() -> Evidence:
    return both(lambda before, event, after: summarized(after, after.cview), lambda b, e, chat: prod_summarized(chat, chat.cview.nodes, chat.cview.sizes))


# -- push ------------------------------------------------------------------------------------------

PUSH_STEPS = 20_001


def _chain(order: Any) -> Iterator[tuple[int, bool]]:
    view: View = ()
    entries: P.Push = ()
    for t in range(PUSH_STEPS):
        view, entries = agree.step(view, entries, t, order) if order else agree.step(view, entries, t)
        yield t, agree.lines_of(view) == P.ranges(entries, t)


@law("push_agrees", "memory §3.2", "With push's list length as the budget, the due order makes exactly push's merges at every step t = 0..20,000.", BOUNDED)
def push_agrees() -> Evidence:
    return bounded(_chain(None), lambda case: case[1], label="t = 0..20,000, the gist's check")


# -- push_agrees_always: bounded ------------------------------------------------------------------
#
# memory.md: "under push alone Taelin's list is a bijective binary counter. Keep bits d_j (newest
# first): T = sum (1 + d_j) 2^j; entry j = one line of level j + d_j ... each step takes both to the
# next count." The seed's proof is arithmetic over digit states, about no function of bend.optchat:
# the step of agree.step from a digit state is no function an encoding could be tied to. So the law
# is computed exactly at every t up to 20,000 (``_step_agrees``: from the digit state of t, the grown
# view's mergeable pairs, the most due, the one merge or none, push's list and the view are the
# judge's, spec.oracles), and Hypothesis runs one step from the digit state of totals up to 2^62.
# Beside it, the model's due comparison is proved equal to the seed's due order for every T, pair
# and level, over the encoding of view.more_due (tied on left lines of levels 0-3, T = 0..23).


@encoding("bend.optchat.view.more_due")
def more_due_encoding(a_index: Any, a_power: Any, b_index: Any, b_power: Any, t: Any) -> Any:
    """The cross-multiplied comparison of view.more_due, a level as its power 2^l (x << l = x * 2^l)."""
    ea, eb = (a_index + 2) * a_power, (b_index + 2) * b_power
    return (t + 1) * b_power + eb * a_power > (t + 1) * a_power + ea * b_power


DUE_GRID = [(lv, i) for lv in range(4) for i in range(0, 8, 2)]
DUE_TIMES = range(24)


@functools.lru_cache(maxsize=None)
def more_due_tie() -> Tie:
    return tie(
        more_due_encoding, more_due,
        (((a, b, t) for a in DUE_GRID for b in DUE_GRID for t in DUE_TIMES),
         f"every pair of left lines of levels 0-3, indexes 0-6, T = {DUE_TIMES.start}..{DUE_TIMES.stop - 1}"),
        args=lambda a, b, t: (z3.IntVal(a[1]), z3.IntVal(1 << a[0]), z3.IntVal(b[1]), z3.IntVal(1 << b[0]), z3.IntVal(t)),
    )


@functools.lru_cache(maxsize=None)
def lemma_due() -> Evidence:
    """view.more_due is the seed's due order (rule 19): (T - last_a) / 2^la > (T - last_b) / 2^lb,
    last = the pair's last message ((i + 2) * 2^l - 1 for the left line (l, i)), cross-multiplied by
    the positive powers."""
    t, a1, b1, pa, pb = z3.Ints("T a b Pa Pb")
    last_a, last_b = (a1 + 2) * pa - 1, (b1 + 2) * pb - 1
    return prove(
        lambda: more_due_encoding(a1, pa, b1, pb, t) == ((t - last_a) * pb > (t - last_b) * pa),
        label="more_due is the due order, for every T, pair and level", assumptions=[pa >= 1, pb >= 1], ties=[more_due_tie()],
    )


def _step_agrees() -> Iterator[int]:
    """At every t = 0..20,000, from the digit state of the count t: the grown view's mergeable pairs
    are the judge's (digits j+1, j with d_j = 1, d_j+1 = 0; digit 0 and the new line when d_0 = 0),
    the most due is the judge's winner (-1 with no 0), agree.step makes one merge or none and gives
    push's list and the view of the incremented digits (the judge's, spec.oracles)."""
    view: View = ()
    entries: P.Push = ()
    for t in range(PUSH_STEPS):
        ds = O.digits(t)
        n = len(ds)
        c = next((j for j, d in enumerate(ds) if d == 0), n)
        zero = c < n
        grown = view + (((0, t), 1),)
        pairs = {k for k in range(len(grown) - 1) if mergeable(grown, k, agree.every_node)}
        want = {n - 2 - j for j in range(n - 1) if ds[j] == 1 and ds[j + 1] == 0} | ({n - 1} if n and ds[0] == 0 else set())
        winner = n - 1 - c if zero else -1
        fitted, after = agree.step(view, entries, t)
        nxt = O.increment(ds)
        ok = (
            nodes_of(view) == O.view(ds)
            and O.value(nxt) == t + 1
            and pairs == want
            and most_due(grown, t + 1, agree.every_node) == winner
            and len(grown) - len(fitted) == (1 if zero else 0)
            and after == O.entries(nxt)
            and nodes_of(fitted) == O.view(nxt)
        )
        if not ok:
            raise LawFailed(f"the model's step differs from the judge's digit state at t = {t} (digits {ds})")
        yield t
        view, entries = fitted, after


def _digit_step(total: int) -> bool:
    """From the digit state of ``total`` (the judge's), one message: push's list and the fitted view
    are those of the incremented digits."""
    ds = O.digits(total)
    view = tuple((node, 1) for node in O.view(ds))
    fitted, entries = agree.step(view, O.entries(ds), total)
    nxt = O.increment(ds)
    return entries == O.entries(nxt) and nodes_of(fitted) == O.view(nxt)


@law("push_agrees_always", "memory §3.1-3.2", "The due order makes push's merges at every t of any number of pushes: each step takes the digit state of T to that of T + 1.", BOUNDED)
def push_agrees_always() -> Evidence:
    steps_ = bounded(_step_agrees(), lambda t: True, label="the step's pairs, winner, merge, push's list and view are the judge's digit state's at every t = 0..20,000")
    hunt = examples(_digit_step, total=st.one_of(st.integers(0, 1 << 62), st.sampled_from([(1 << j) - 2 for j in range(1, 63)] + [(1 << j) - 1 for j in range(1, 63)])))
    return also(steps_, hunt, lemma_due())


T10: View = (((2, 0), 1), ((2, 1), 1), ((0, 8), 1), ((0, 9), 1))


def _t10(order: Any) -> tuple[Node, ...]:
    fitted, _merges = fit(T10, 10, agree.every_node, 3, order) if order else fit(T10, 10, agree.every_node, 3)
    return nodes_of(fitted)


@law("last_merges_8_9", "memory §3.2", "T = 10, view 0+4, 4+4, 8+1, 9+1, budget 3: due from last merges 8-9, as push.", BOUNDED)
def last_merges_8_9() -> Evidence:
    return bounded([_t10(None)], lambda v: v == ((2, 0), (2, 1), (1, 4)), label="the gist's T = 10 example")


@law("first_merges_0_7", "memory §3.2", "T = 10, same view and budget: due from first merges 0-7.", BOUNDED)
def first_merges_0_7() -> Evidence:
    return bounded([_t10(more_due_first)], lambda v: v == ((3, 0), (0, 8), (0, 9)), label="the gist's T = 10 example")


@law("first_is_not_last", "memory §3.2 §7.1", "At T = 10 the first and last orders merge different pairs.", BOUNDED)
def first_is_not_last() -> Evidence:
    return bounded([(_t10(None), _t10(more_due_first))], lambda c: c[0] != c[1], label="the gist's T = 10 example")


@law("first_leaves_push", "memory §3.2 §7.1", "Due from first leaves push's merges within the steps t = 0..10.", BOUNDED)
def first_leaves_push() -> Evidence:
    view: View = ()
    entries: P.Push = ()
    agreed = []
    for t in range(11):
        view, entries = agree.step(view, entries, t, more_due_first)
        agreed.append(agree.lines_of(view) == P.ranges(entries, t))
    return bounded([agreed], lambda a: not all(a), label=f"t = 0..10 (first disagreement at t = {agreed.index(False) if False in agreed else 'none'})")


@law(
    "first_agrees_481_of_20001",
    "memory (push_agrees proof notes)",
    "Due from first, run from t = 0, agrees with push's list at exactly 481 of the 20,001 steps t = 0..20,000.",
    BOUNDED,
    derivation="the seed's proof notes: first agrees with push at 481 of 20,001 steps, as the gist says",
)
def first_agrees_481_of_20001() -> Evidence:
    count = sum(1 for _t, ok in _chain(more_due_first) if ok)
    return bounded([count], lambda c: c == 481, label=f"t = 0..20,000: {count} agreeing steps")


# -- §4 compactions ---------------------------------------------------------------------------------


def _targets(chat: C.Chat) -> tuple[Node, ...]:
    """The nodes a compaction could be for now: running and queued ones and the newest message."""
    newest = ((0, chat.t - 1),) if chat.t else ()
    return chat.running + C.queue(chat, False, 16) + newest


def _ends_at_node(before: C.Chat, event: Event, after: C.Chat) -> bool:
    for node in _targets(after):
        bound = first(node) - 1 if node[0] == 0 else last(node)
        for line in C.context(after, node):
            if last(line) > bound or text_of(after, line) is None:
                return False
    return True


@law("context_ends_at_node", "memory §4", "A compaction's view ends at its node (before the message; for a merge at its last message) and holds only built lines.", BOUNDED)
def context_ends_at_node() -> Evidence:
    return both(_ends_at_node, lambda b, e, chat: prod_context(chat))


def _is_prefix(before: C.Chat, event: Event, after: C.Chat) -> bool:
    lines = nodes_of(after.cview)
    for node in _targets(after):
        ctx = C.context(after, node)
        if ctx != O.context(lines, node, lambda n: text_of(after, n) is not None):
            return False
    return True


@law("context_is_prefix", "memory §4", "A compaction's view is a prefix of the compaction view, stopping at the first line past the node or unbuilt.", BOUNDED)
def context_is_prefix() -> Evidence:
    return both(_is_prefix, lambda b, e, chat: prod_context(chat))


# -- D5: the waiting turn ---------------------------------------------------------------------------


def _view_lines_unbuilt(chat: C.Chat) -> set[Node]:
    return {n for n, _ in chat.view if text_of(chat, n) is None}


def _need_first(before: C.Chat, event: Event, after: C.Chat) -> bool:
    if not after.waiting:
        return True
    started = [n for n in after.running if n not in before.running]
    need = _view_lines_unbuilt(after)
    return all(n in need for n in started) and all(n in need for n in after.running)


@law("need_first", "memory D5 / rule 40,47", "While a turn waits only the view's unbuilt lines start.", BOUNDED, derivation="memory.md D5: while a turn waits only the view's unbuilt lines start; ready merges wait for settle")
def need_first() -> Evidence:
    return both(_need_first, lambda b, e, chat: prod_need_first(chat))


def _need_first_running(before: C.Chat, event: Event, after: C.Chat) -> bool:
    if event[0] != "wait":
        return True
    need = _view_lines_unbuilt(after)
    stopped = [n for n in before.running if n not in need]
    kept = not after.waiting or all(n in need for n in after.running)
    queued = all(n in after.merges or n in after.running or text_of(after, n) is not None for n in stopped)
    unchanged = all(C.failures(after, n) == C.failures(before, n) for n in stopped)
    return kept and queued and unchanged


@law("need_first_running", "memory D5", "When a turn starts waiting, calls for other nodes stop: back in their queue, with no failure counted.", BOUNDED, derivation="memory.md D5: calls for other nodes stop when the wait starts (no failure)")
def need_first_running() -> Evidence:
    return both(_need_first_running)


def _fail_cap(before: C.Chat, event: Event, after: C.Chat) -> bool:
    if any(count >= FAILURES for _n, count in after.fails):
        return False
    if event[0] != "fail" or not before.running:
        return True
    node = before.running[event[1] % len(before.running)]
    if C.failures(before, node) + 1 < FAILURES:
        return text_of(after, node) is None and C.failures(after, node) == C.failures(before, node) + 1
    line = text_of(after, node)
    return line is not None and line == cut(source_of(before, node), O.NODE) and 0 < size(line) <= O.NODE


@law("fail_cap_builds", "memory D5 / rule 38", "The third failed call builds the node from its input cut to 512 bytes at a character boundary.", BOUNDED, derivation="memory.md D5: the 3rd failed call builds the node from its input cut to 512 bytes (FAILURES)")
def fail_cap_builds() -> Evidence:
    return both(_fail_cap, lambda b, e, chat: all(count < FAILURES for count in chat.fails.values()))


def settles(chat: C.Chat, outcomes: list[tuple[bool, int]]) -> bool:
    """A turn waits; the compactor answers each running call in any order, failing as the
    adversary likes, and every 10 s failed nodes are retried: the view settles after at most
    3 outcomes per unbuilt view line (the third failure builds), and never stalls."""
    chat = C.wait(chat)
    bound = FAILURES * len(_view_lines_unbuilt(chat))
    used = 0
    ticks = 0
    while chat.waiting:
        if chat.running:
            ok, k = outcomes[used % len(outcomes)] if outcomes else (False, 0)
            node = chat.running[k % len(chat.running)]
            chat = C.done(chat, k, filler(name(node), 100)) if ok else C.fail(chat, k)
            used += 1
            if used > bound:
                return False
        else:
            before = chat
            chat = C.tick(chat)
            ticks += 1
            if chat == before or ticks > bound + 1:
                return False
    return not _view_lines_unbuilt(chat)


@law("settle_reached", "memory D5 / rule 47", "A waiting turn's view settles after a bounded number of compactor outcomes, whatever they are.", BOUNDED, derivation="memory.md D5 and rule 47: the view settles after bounded compactor outcomes (docs/harness.md H2, derived)")
def settle_reached() -> Evidence:
    edges, _states = explored(3)
    adversaries = [[(False, 0)], [(True, 0)], [(False, 1), (False, 0), (True, 0)]]
    states = {after for (_b, _e, after) in edges}
    cases = [(chat, adv) for chat in states for adv in adversaries]
    proved = bounded(cases, lambda c: settles(*c), label=_label(3) + " x 3 adversaries (always fail, always succeed, fail twice then succeed)")

    def hunt(config: C.Config, history: list[Event], outcomes: list[tuple[bool, int]]) -> bool:
        chat = C.Chat(config=config)
        for event in history:
            chat = apply(chat, event)
        return settles(chat, outcomes)

    return also(
        proved,
        examples(hunt, config=configs, history=events, outcomes=st.lists(st.tuples(st.booleans(), st.integers(0, 7)), max_size=CAP)),
    )



# -- the production planner core's own paths, on each form it ships ------------------------------
#
# The seed: "Bridge test: Rust planner and Bend model run the same scenarios; output equal byte for
# byte". The planner core (eukhe.memory.core, pure and compiled with mypyc) has paths the chat
# does not take on every message: ``push`` (a message built at once, then the fit: the whole
# per-message path), ``store`` of parents as issue 16's stream builds them, views of
# their own (``View.append`` / ``resize`` / ``copy`` / ``fit``, both views). The law runs them
# against the model (bend.optchat: grow, resize, fit, batch, compact), on every form of the core
# that is built (``eukhe.memory.view.use``): the pure form always, the compiled one when built
# from the current source (CI builds it).

import random as _random  # noqa: E402
from dataclasses import replace as _replace  # noqa: E402

from bend.optchat import store as _mstore  # noqa: E402
from bend.optchat.view import grow as _grow  # noqa: E402
from bend.optchat.view import resize as _resize  # noqa: E402
from eukhe.memory import view as _V  # noqa: E402
from eukhe.memory.simulate import note_sizes as _note_sizes  # noqa: E402

CORE_HISTORIES = 10
H_STREAM = ((600, (4_000, 3_900, 1_000, 100)), (900, (12_800, 6_400, 3_200, 1_600)))


def _forms() -> list[str]:
    """The forms of the core to run: pure, and compiled when it is built and current."""
    return ["pure"] + (["compiled"] if _V.compiled() is not None else [])


class CoreModel:
    """The model's side of a core history (also the differential test's, tests/memory): a model Chat whose built lines are texts of the sizes
    given, stepped by the model's own batch and compact."""

    def __init__(self, budgets: tuple[int, int, int, int]) -> None:
        ceiling, floor, cceiling, cfloor = budgets
        self.chat = C.Chat(config=C.Config(ceiling=ceiling, floor=floor, cceiling=cceiling, cfloor=cfloor))

    def build(self, node: Node, length: int) -> None:
        chat = self.chat
        level = node[0]
        tries = chat.built + (None,) * (level + 1 - len(chat.built))
        tries = tries[:level] + (_mstore.insert(tries[level], node[1], "x" * length),) + tries[level + 1 :]
        chat = _replace(chat, built=tries)
        if level == 0:
            chat = _replace(chat, view=_resize(chat.view, node, length), cview=_resize(chat.cview, node, length))
        self.chat = chat

    def message(self, length: int) -> None:
        chat = self.chat
        node = (0, chat.t)
        self.chat = _replace(chat, t=chat.t + 1, view=_grow(chat.view, node, PLACEHOLDER_BYTES), cview=_grow(chat.cview, node, PLACEHOLDER_BYTES), batch=-1, cmerge="-")
        if length:
            self.build(node, length)
        self.chat = C.compact(C.batch(self.chat))


def _core_history(seed: int, word: int = 63) -> bool:
    """Messages built at once (``push``) or late (``add`` then ``step``), parents built late in
    any order, small budgets; after each message both views, totals, the batch and shrinking
    flags equal the model's; each view copied, and a view of its own rebuilt line by line and
    fitted, equals the model's fit of it. ``word``: the bits the fit's heap may pack an entry
    in (0: no room, every fit of the history on the wide heap)."""
    r = _random.Random(9_000 + seed)
    ceiling = r.randint(300, 4_000)
    budgets = (ceiling, r.randint(0, ceiling), r.randint(100, 2_000), 0)
    budgets = budgets[:3] + (r.randint(0, budgets[2]),)
    model = CoreModel(budgets)
    core = _V.planner(*budgets)
    core.scratch.word = word
    built: dict[Node, int] = {}
    waiting: list[Node] = []
    late = r.random() * 0.6
    cmerges = {"-": 0, "view": 1, "ceiling": 2}
    sizes = _note_sizes(400, seed)

    def build(node: Node, length: int) -> None:
        built[node] = length
        model.build(node, length)
        core.build(node[0], node[1], length)
        if (node[0], node[1] ^ 1) in built:
            waiting.append((node[0] + 1, node[1] >> 1))

    for _ in range(r.randint(40, 160)):
        while waiting and r.random() < 0.7:
            build(waiting.pop(r.randrange(len(waiting)) if r.random() < 0.5 else 0), r.randint(1, 512))
        t = core.t
        length = min(next(sizes), 512) if r.random() >= late else 0
        model.message(length)
        if length:
            core.push(length)
            built[(0, t)] = length
            if (0, t ^ 1) in built:
                waiting.append((1, t >> 1))
        else:
            core.add(0)
            core.step()
            waiting.append((0, t))
        chat = model.chat
        for compaction, view in ((False, chat.view), (True, chat.cview)):
            prod = ProdView(core, compaction)
            if list(zip(prod.nodes, prod.sizes)) != list(view) or prod.total != view_bytes(view) or list(prod) != prod.nodes:
                raise LawFailed(f"core history {seed}, T={core.t}, {'compaction view' if compaction else 'view'}: {list(zip(prod.nodes, prod.sizes))} where the model has {list(view)}")
            copy = prod.copy()
            if list(zip(copy.nodes, copy.sizes)) != list(view):
                raise LawFailed(f"core history {seed}, T={core.t}: a copy of the {'compaction ' if compaction else ''}view differs from it")
        if (core.open, core.batch, core.cmerge) != (chat.open, chat.batch, cmerges[chat.cmerge]):
            raise LawFailed(f"core history {seed}, T={core.t}: shrinking, batch, cmerge {(core.open, core.batch, core.cmerge)} where the model has {(chat.open, chat.batch, chat.cmerge)}")
    # a view of its own, line by line (each view in turn), its unbuilt message lines resized as
    # built, then fitted to a budget: the model's fit of the same view
    chat = model.chat
    levels = [[built.get((level, i), 0) for i in range((chat.t >> level) + 1)] for level in range(chat.t.bit_length() + 1)]
    for compaction, view in ((False, chat.view), (True, chat.cview)):
        planner = _V.planner(0, 0, 0 if compaction else -1, 0)
        planner.scratch.word = word
        own = ProdView(planner, compaction)
        for node, length in view:
            own.append(node, PLACEHOLDER_BYTES if node[0] == 0 else length)
            own.resize(node, length)
        budget = view_bytes(view) // 2
        merges = own.fit(chat.t, levels, budget)
        want, count = fit(view, chat.t, lambda n: built.get(n), budget)
        if list(zip(own.nodes, own.sizes)) != list(want) or merges != count or (own.first_change >= 0) != (count > 0):
            raise LawFailed(f"core history {seed}: production's fit of its own {'compaction ' if compaction else ''}view to {budget} differs from the model's")
    return True


def mix(level: int, i: int) -> int:
    """Issue 16's 32-bit mix ``h(l, i)``, the sizes of the stream both drivers below feed."""
    x = ((i * 0x9E3779B1) % 2**32) ^ (((level + 1) * 0x85EBCA77) % 2**32) ^ 12345
    x ^= x >> 16
    x = x * 0x85EBCA6B % 2**32
    x ^= x >> 13
    x = x * 0xC2B2AE35 % 2**32
    return x ^ (x >> 16)


def model_h_stream(count: int, budgets: tuple[int, int, int, int]) -> int:
    """Issue 16's stream on the model's fit and batch/compact rule: message ``t`` is
    ``200 + h(0, t) % 313`` bytes, a parent ``300 + h(l, i) % 213``, built once its second
    child exists; the sum of the view's bytes after each message."""
    ceiling, floor, cceiling, cfloor = budgets
    rows: list[dict[int, int]] = []

    def put(node: Node, length: int) -> None:
        while len(rows) <= node[0]:
            rows.append({})
        rows[node[0]][node[1]] = length

    built = lambda n: rows[n[0]].get(n[1]) if n[0] < len(rows) else None  # noqa: E731
    view: View = ()
    cview: View = ()
    shrinking = False
    check = 0
    for t in range(count):
        put((0, t), 200 + mix(0, t) % 313)
        level, i = 0, t
        while i & 1:
            level, i = level + 1, i >> 1
            put((level, i), 300 + mix(level, i) % 213)
        view, cview = _grow(view, (0, t), rows[0][t]), _grow(cview, (0, t), rows[0][t])
        merges = -1
        if shrinking or view_bytes(view) > ceiling:
            view, merges = fit(view, t + 1, built, floor)
            shrinking = view_bytes(view) > floor
        if merges > 0:
            cview, _ = fit(view, t + 1, built, cfloor)
        elif view_bytes(cview) > cceiling:
            cview, _ = fit(cview, t + 1, built, cfloor)
        check += view_bytes(view)
    return check


def core_h_stream(planner: Any, count: int) -> int:
    """Issue 16's stream on a production planner core, through its own API: each parent
    ``store``d as soon as its second child exists, then the message ``push``ed (appended and
    fitted); the sum of the view's bytes after each message (``model_h_stream``'s check)."""

    check = 0
    for t in range(count):
        level, i = 0, t
        while i & 1:
            level, i = level + 1, i >> 1
            planner.store(level, i, 300 + mix(level, i) % 213)
        planner.push(200 + mix(0, t) % 313)
        check += int(planner.total)
    return check


def _h_stream(case: tuple[int, tuple[int, int, int, int]]) -> bool:
    count, budgets = case
    want = model_h_stream(count, budgets)
    both = core_h_stream(_V.planner(*budgets), count)
    main = core_h_stream(_V.planner(budgets[0], budgets[1], -1, 0), count)
    return bool(both == want and main == want)


def _on_each_form(case: Any, check: Any) -> bool:
    for form in _forms():
        before = _V.use(form)
        try:
            if _V.form() != form or not check(case):
                return False
        finally:
            _V.CORE = before
    return True


def _unknown_form() -> bool:
    """A form that is neither pure nor compiled is refused (EUKHE_MEMORY_FORM)."""
    try:
        _V.use("fast")
    except ValueError:
        return True
    return False


# The choice of the core's form (eukhe.memory.view._pick), judged by the rule view.py documents and
# corebuild keeps: "pure" is the pure core; "compiled" is the compiled module when it was built from
# the current source (its SOURCE is the sha256 of core.py), else an error; any other form is refused;
# unset, the compiled module when current, except under a named break or a coverage run (pure).
# The compiled module is the real one, or one of three stand-ins: a module recording the current
# source, one recording another, and a name nothing provides (the import fails).
_FORM_NAMES = ("", "pure", "compiled", "fast")
_FORM_ENVIRONS: tuple[dict[str, str], ...] = ({}, {"EUKHE_BREAK": "optchat_any"}, {"COVERAGE_RUN": "true"}, {"EUKHE_BREAK": ""}, {"HOME": "/"})
_CURRENT, _STALE, _ABSENT = "spec_laws_optchat_core_current", "spec_laws_optchat_core_stale", "eukhe.memory.core_absent"


def _current_source() -> str:
    """The sha256 of the pure core's source file, read here (corebuild records it as SOURCE)."""
    import hashlib
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("eukhe.memory.core")
    assert spec is not None and spec.origin is not None
    return hashlib.sha256(Path(spec.origin).read_bytes()).hexdigest()


def _form_wanted(form: str, environ: dict[str, str], module: str) -> str:
    """The rule's outcome: "pure", the compiled module's name, or the error's type."""
    import importlib

    try:
        current = getattr(importlib.import_module(module), "SOURCE", None) == _current_source()
    except ImportError:
        current = False
    if form == "pure":
        return "pure"
    if form == "compiled":
        return module if current else "RuntimeError"
    if form:
        return "ValueError"
    if environ.get("EUKHE_BREAK", "") != "" or environ.get("COVERAGE_RUN", "") != "":
        return "pure"
    return module if current else "pure"


def _form_cases() -> Iterator[tuple[str, dict[str, str], str]]:
    for module in (_V.COMPILED, _CURRENT, _STALE, _ABSENT):
        for form in _FORM_NAMES:
            for environ in _FORM_ENVIRONS:
                yield form, environ, module


def _form_chosen(case: tuple[str, dict[str, str], str]) -> bool:
    """``view._pick`` on one form, environment and compiled module gives the rule's outcome (the very
    module object when it gives a compiled one)."""
    import importlib
    import sys
    import types

    form, environ, module = case
    stand_ins = {_CURRENT: _current_source(), _STALE: "0" * 64}
    for stand_in, source in stand_ins.items():
        made = types.ModuleType(stand_in)
        made.SOURCE = source  # type: ignore[attr-defined]
        sys.modules[stand_in] = made
    try:
        want = _form_wanted(form, environ, module)
        try:
            got = _V._pick(form, environ, module)
        except (RuntimeError, ValueError) as error:
            return type(error).__name__ == want
        if want == "pure":
            return got is importlib.import_module("eukhe.memory.core")
        return want == module and got is importlib.import_module(module)
    finally:
        for stand_in in stand_ins:
            sys.modules.pop(stand_in, None)


@law(
    "core_agrees_with_model",
    "memory: The Bend model; rules 19, 22-24, 33",
    "The production planner core on each of its forms (pure, compiled when built): messages pushed built at once or "
    "added unbuilt, views copied and fitted on their own, and issue 16's stream, give the model's views, batches and totals.",
    BOUNDED,
    derivation="memory.md 'Bridge test: Rust planner and Bend model run the same scenarios'; the judge is the model bend.optchat",
)
def core_agrees_with_model() -> Evidence:
    forms = " and ".join(_forms())
    return all_of(
        bounded(range(CORE_HISTORIES), lambda seed: _on_each_form(seed, _core_history), label=f"{CORE_HISTORIES} seeded histories of 40-160 messages (the note's sizes, up to 60% late), parents built late in any order, budgets 300-4,000 bytes, on the {forms} core"),
        bounded(range(CORE_HISTORIES), lambda seed: _on_each_form(seed, lambda n: _core_history(n, 0)), label=f"the same {CORE_HISTORIES} histories with no room to pack a heap entry (the planner's scratch word 0): every fit on the wide heap, on the {forms} core"),
        bounded(H_STREAM, lambda case: _on_each_form(case, _h_stream), label=f"issue 16's stream of 600 and 900 messages at two budget sets, both views and the main view alone, on the {forms} core"),
        bounded([0], lambda _n: _unknown_form(), label="an unknown form is refused"),
        bounded(_form_cases(), _form_chosen, label="the choice of the form (view._pick): forms unset, pure, compiled, unknown x environments plain, "
                "under a break, under coverage, with an empty break, unrelated x the compiled module the real one (built or not), current, stale, absent"),
    )


# -- the rendered view and the due order of production's view module ------------------------------

_TEXTS: tuple[str | None, ...] = (None, "plain words", "a\nb", "a\r\nb\rc", "ζ𝄞 | 0+1|x", "", "\n\n", "<chat>")


def _render_case(case: tuple[View, int, frozenset[Node]]) -> bool:
    """Production's render, its lines and its pieces (blocks of 1-5 lines) against the oracle, on
    a view with each text class in turn on its lines (unbuilt lines show the placeholder)."""
    from eukhe.memory.view import pieces, render, render_lines

    view, _t, _built = case
    nodes = [n for n, _ in view]
    for shift in range(len(_TEXTS)):
        texts = {n: _TEXTS[(k + shift) % len(_TEXTS)] for k, n in enumerate(nodes)}
        text = texts.get
        if render(nodes, text) != O.rendered(nodes, text) or render_lines(nodes, text) != O.rendered_lines(nodes, text):
            return False
        for block in range(1, 6):
            head, rest = pieces(nodes, text, block)
            if head != O.marked(nodes, text, block) or head + rest != O.rendered(nodes, text):
                return False
    return True


def _due_order(case: tuple[Node, Node, int]) -> bool:
    """Production's due key orders two pairs as the seed's due (T - last) / 2^l does; its node
    arithmetic is the tree's."""
    from eukhe.memory import view as V

    a, b, t = case
    (na, da), (nb, db) = O.due(a, t), O.due(b, t)
    seed = (na * db > nb * da) - (na * db < nb * da)
    ka, kb = V.due_key(a, t), V.due_key(b, t)
    ours = (ka > kb) - (ka < kb)
    return seed == ours and V.parent(a) == O.parent(a) and (V.first(a), V.last(a), V.name(a)) == (O.first(a), O.last(a), O.name(a))


def _pairs(levels: int = 4, t_max: int = 40) -> Iterator[tuple[Node, Node, int]]:
    lefts = [(level, i) for level in range(levels) for i in range(0, t_max >> level, 2)]
    for t in range(2, t_max + 1):
        inside = [n for n in lefts if O.first(n) + 2 * 2 ** n[0] <= t]
        for a in inside:
            for b in inside:
                yield a, b, t


@law(
    "view_renders_as_the_seed",
    "memory rules 15, 16, 18, 19, 29",
    "Production's view renders as <chat>, one id+n|text line per node with newlines as spaces and the placeholder for an "
    "unbuilt line, </chat>; its cache mark ends the last whole block; its due key orders pairs as (T - last) / 2^l.",
    BOUNDED,
    derivation="memory.md rules 15, 16, 18, 19 and 29; judged by spec.oracles.optchat (rendered, marked, due)",
)
def view_renders_as_the_seed() -> Evidence:
    return all_of(
        bounded(small_views(), _render_case, label=f"every view of a chat of 1..10 messages x every set of built pair parents, each with {len(_TEXTS)} text classes (unbuilt, plain, newlines \\n \\r\\n \\r, unicode and bars, empty, tags) x blocks of 1-5 lines"),
        bounded(_pairs(), _due_order, label="every two pairs of levels 0-3 inside a chat of 2..40 messages"),
    )


# -- the planner's inputs: settings, messages, lines (rules 12, 23, 33, 39; D9) ---------------------


def _config_case(case: tuple[int, int, int]) -> bool:
    """Production's Config accepts exactly the settings the oracle allows."""
    from eukhe.memory.chat import Config as Settings

    jobs, floor_at, cfloor_at = case
    ceiling, cceiling = 1_000, 300
    floor, cfloor = ceiling + floor_at, cceiling + cfloor_at
    try:
        Settings(jobs, ceiling, floor, cceiling, cfloor)
        accepted = True
    except ValueError:
        accepted = False
    return accepted == O.config_ok(jobs, ceiling, floor, cceiling, cfloor)


def _inputs_case(length: int) -> bool:
    """A message of ``length`` bytes (0: none) and a compactor line of ``length`` bytes: refused
    exactly when the seed has no such message or line; a line with no call running ends nothing;
    a parent's input is its halves joined with a newline (rule 12) and its size theirs + 1; a
    planner that keeps no texts cannot cut a line from its input."""
    from eukhe.memory.chat import Chat as Planner, TextsNotKept

    chat = Planner(ProdConfig(jobs=2, ceiling=5_000, floor=2_000, cceiling=1_000, cfloor=500))
    if chat.done(0, "x") is not None or chat.fail(0) is not None:
        return False  # no call runs
    try:
        chat.message("m" * length if length else "")
        took = True
    except ValueError:
        took = False
    if took != (length >= 1):
        return False
    chat.message("n" * 600)
    chat.message("o" * 700)
    line = "l" * length
    try:
        node = chat.done(0, line)
        ended = True
    except ValueError:
        node, ended = None, False
    if ended != O.line_ok(length) or (ended and node is None):
        return False
    last = chat.t - 1  # the 700-byte message: its line waits for a call
    if chat.is_built((0, last)) or chat.built_size((0, last)) != 0 or chat.source_size((0, last)) != 700:
        return False
    if ended and (node is None or chat.built_size(node) != length):
        return False
    pair = (1, 0)
    if chat.is_built((0, 0)) and chat.is_built((0, 1)):
        halves = chat.built_size((0, 0)) + 1 + chat.built_size((0, 1))
        if chat.source_size(pair) != halves or size(chat.source(pair)) != halves or chat.source(pair) != f"{chat.text((0, 0))}\n{chat.text((0, 1))}":
            return False
    try:
        chat.build((0, last), None)
        return False
    except ValueError:
        pass
    blind = Planner(ProdConfig(jobs=1, ceiling=5_000, floor=2_000, cceiling=1_000, cfloor=500), keep_texts=False)
    blind.message(900)
    try:
        for _ in range(O.FAILURES):
            blind.fail(0)  # the third failure cuts the line from its input (D5)
            blind.message(1)  # a failed call is tried again at the next message (rule 38)
        return False
    except TextsNotKept:
        return True


@law(
    "planner_takes_the_seeds_inputs",
    "memory rules 12, 23, 33, 39; D9",
    "The planner's settings are 1..8 calls and floors between 0 and their ceilings, by default the seed's 128,000/64,000 and "
    "32,000/16,000 bytes; a message has at least one byte; a compactor's line is 1-512 bytes; a parent's input is its halves joined by a newline.",
    BOUNDED,
    derivation="memory.md rules 23, 33 and 39 (the numbers), D9 and H1 (lines of 1-512 bytes), rule 12 (a node's input); judged by spec.oracles.optchat",
)
def planner_takes_the_seeds_inputs() -> Evidence:
    default = ProdConfig()

    def defaults(_n: int) -> bool:
        return (default.jobs, default.ceiling, default.floor, default.cceiling, default.cfloor) == (O.JOBS, O.VIEW_CEILING, O.VIEW_FLOOR, O.COMPACTION_CEILING, O.COMPACTION_FLOOR)

    return all_of(
        bounded([0], defaults, label="the default settings are the seed's"),
        bounded(((j, f, c) for j in range(-1, O.JOBS + 3) for f in (-1001, -1000, -1, 0, 1) for c in (-301, -300, -1, 0, 1)), _config_case, label="jobs -1..10 x view floors -1, 0, ceiling - 1, ceiling, ceiling + 1 x the same for the compaction view"),
        bounded([0, 1, 2, O.NODE - 1, O.NODE, O.NODE + 1, 3 * O.NODE], _inputs_case, label="messages and lines of 0, 1, 2, 511, 512, 513 and 1,536 bytes"),
    )
