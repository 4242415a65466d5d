"""The optchat laws (memory.md "The laws and their strength", D5), as properties of the model
``bend.optchat``.

Universal laws are proved exhaustively where a finite bound makes that possible (every history
of a small event alphabet up to a number of messages; every view of a chat of up to 10
messages with every set of built parents; every count up to 2^16 for push_agrees_always) and
hunted by Hypothesis over arbitrary event histories (messages of any sizes, calls that end
and fail in any order, waits, ticks, deadlines, budgets and job counts). Collections are
capped (``CAP``) so the hunt-crosshair profile stays usable.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

from hypothesis import strategies as st

from bend.optchat import agree, push as P
from bend.optchat import chat as C
from bend.optchat.node import Node, first, last, name, parent, siblings
from bend.optchat.text import NODE, cut, filler, size
from bend.optchat.view import (
    PLACEHOLDER_BYTES,
    View,
    fit,
    merge_step,
    mergeable,
    more_due_first,
    view_bytes,
)
from spec.evidence import Evidence, all_of, also, bounded, examples
from spec.registry import BOUNDED, TESTED, law

CAP = 40
FAILURES = 3  # the seed's number (D5), not the model's constant: a break there must show
SECTION = "memory §3"

# -- the vocabulary: covers, summarized ---------------------------------------------------------


def covers(nodes: tuple[Node, ...], t: int) -> bool:
    """The lines cover 0..t-1, each message once, contiguous, oldest first, each a tree node."""
    start = 0
    for level, i in nodes:
        if level < 0 or i < 0 or first((level, i)) != start:
            return False
        start = last((level, i)) + 1
    return start == t


def nodes_of(view: View) -> tuple[Node, ...]:
    return tuple(n for n, _ in view)


def summarized(chat: C.Chat, view: View) -> bool:
    """Every merged line is built; only a message's own line may wait; each size is the built
    line's or the placeholder's."""
    for node, length in view:
        built = C.built_size(chat, node)
        if built is None and (node[0] > 0 or length != PLACEHOLDER_BYTES):
            return False
        if built is not None and length != built:
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
sizes = st.one_of(st.integers(1, 512), st.integers(513, 3_000), st.sampled_from([1, 511, 512, 513]))
events = st.lists(
    st.one_of(
        st.tuples(st.just("m"), sizes),
        st.tuples(st.just("m"), sizes),
        st.tuples(st.just("done"), st.integers(0, 7), st.integers(1, NODE)),
        st.tuples(st.just("done"), st.integers(0, 7), st.integers(1, NODE)),
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


def both(transition: Any) -> Evidence:
    """Proved on every transition of the finite domain, then hunted by Hypothesis."""
    edges, _states = explored()
    proved = bounded(edges, lambda e: transition(*e), label=_label())

    def hunt(config: C.Config, history: list[Event]) -> bool:
        return all(transition(*step) for step in steps(config, history))

    return also(proved, examples(hunt, config=configs, history=events))


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


@law("view_covers", SECTION, "After any event history the view covers 0..T-1: each message once, contiguous, oldest first, each line a tree node.", TESTED)
def view_covers() -> Evidence:
    return both(lambda before, event, after: covers(nodes_of(after.view), after.t))


@law("cview_covers", "memory §4", "After any event history the compaction view covers 0..T-1 the same way.", TESTED)
def cview_covers() -> Evidence:
    return both(lambda before, event, after: covers(nodes_of(after.cview), after.t))


def _appends(before: C.Chat, event: Event, after: C.Chat) -> bool:
    if event[0] != "m" or after.batch >= 0:
        return True
    return nodes_of(after.view) == nodes_of(before.view) + ((0, before.t),)


@law("message_appends", "memory §3.2", "A message that starts no batch appends only its line: the old view is a prefix of the new.", TESTED)
def message_appends() -> Evidence:
    return both(_appends)


def _merges_nothing(before: C.Chat, event: Event, after: C.Chat) -> bool:
    old, new = nodes_of(before.view), nodes_of(after.view)
    if event[0] == "m":
        return after.batch >= 0 or (len(new) == len(old) + 1 and set(old) <= set(new))
    return new == old


@law("message_merges_nothing", "memory §3.2", "A message with no batch merges nothing, and no other event changes the view's lines.", TESTED)
def message_merges_nothing() -> Evidence:
    return both(_merges_nothing)


def _one_pair(view: View, t: int, built: frozenset[Node]) -> bool:
    after = merge_step(view, t, lookup(built))
    if after == view:
        return all(not mergeable(view, k, lookup(built)) for k in range(len(view) - 1))
    if len(after) != len(view) - 1:
        return False
    k = next(k for k in range(len(after)) if after[k] != view[k])
    a, b = view[k][0], view[k + 1][0]
    return siblings(a, b) and after[k][0] == parent(a) and parent(a) in built and after[k + 1 :] == view[k + 2 :]


@law("merge_is_one_pair", "memory §3.1", "A merge replaces two sibling lines with their built parent, or changes nothing when no pair can merge.", TESTED)
def merge_is_one_pair() -> Evidence:
    return views_both(_one_pair, "every view of a chat of 1..10 messages x every set of built pair parents")


@law("merge_covers", "memory §3.1", "A merge keeps the view covering 0..T-1.", TESTED)
def merge_covers() -> Evidence:
    return views_both(
        lambda view, t, built: covers(nodes_of(merge_step(view, t, lookup(built))), t),
        "every view of a chat of 1..10 messages x every set of built pair parents",
    )


def _budgets(view: View) -> tuple[int, ...]:
    total = view_bytes(view)
    return (0, total // 3, total // 2, total - 1, total)


def _reaches(view: View, t: int, built: frozenset[Node]) -> bool:
    for budget in _budgets(view):
        after, _merges = fit(view, t, lookup(built), budget)
        stuck = all(not mergeable(after, k, lookup(built)) for k in range(len(after) - 1))
        if not (view_bytes(after) <= budget or stuck):
            return False
    return True


@law("fit_reaches_budget", "memory §3.2", "A batch ends at or under its budget unless no pair can merge (their parents unbuilt).", TESTED)
def fit_reaches_budget() -> Evidence:
    return views_both(_reaches, "every view of a chat of 1..10 messages x every set of built pair parents x 5 budgets")


def _merges_built(view: View, t: int, built: frozenset[Node]) -> bool:
    for budget in _budgets(view):
        after, _merges = fit(view, t, lookup(built), budget)
        if any(line not in view and line[0] not in built for line in after):
            return False
    return True


@law("fit_merges_built", "memory §3.2", "A batch merges only into built parents.", TESTED)
def fit_merges_built() -> Evidence:
    return views_both(_merges_built, "every view of a chat of 1..10 messages x every set of built pair parents x 5 budgets")


@law("view_summarized", SECTION, "After any history every merged view line is built; only a message's own line waits for its summary.", TESTED)
def view_summarized() -> Evidence:
    return both(lambda before, event, after: summarized(after, after.view))


@law("cview_summarized", "memory §4", "After any history every merged compaction view line is built; only a message's own line waits.", TESTED)
def cview_summarized() -> Evidence:
    return both(lambda before, event, after: summarized(after, after.cview))


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


def _digit_step(total: int) -> bool:
    """From the state the digits of ``total`` stand for, one message: push's list and the fitted
    view are those of the digits of ``total + 1`` (the seed's proof, step by step)."""
    ds = P.digits(total)
    view = tuple((node, 1) for node in P.digit_view(ds))
    fitted, entries = agree.step(view, P.from_digits(ds), total)
    want = P.digits(total + 1)
    return entries == P.from_digits(want) and nodes_of(fitted) == P.digit_view(want)


def _correspondence() -> Iterator[int]:
    """Every t up to 20,000: push's list is the bijective binary counter of T = t + 1 (entry j is
    one line of level j + d_j) and the fitted view is the digits' view."""
    view: View = ()
    entries: P.Push = ()
    for t in range(PUSH_STEPS):
        view, entries = agree.step(view, entries, t)
        ds = P.digits(t + 1)
        total = sum((1 + d) << j for j, d in enumerate(ds))
        if total != t + 1 or entries != P.from_digits(ds) or nodes_of(view) != P.digit_view(ds):
            raise AssertionError(f"digit correspondence fails at t = {t}")
        yield t


@law("push_agrees_always", "memory §3.1-3.2", "The due order makes push's merges at every t of any number of pushes: each step takes the digit state of T to that of T + 1.", TESTED)
def push_agrees_always() -> Evidence:
    corr = bounded(_correspondence(), lambda t: True, label="digit correspondence T = sum (1 + d_j) 2^j, entry j one line of level j + d_j, for every t <= 20,000")
    steps_ = bounded(range(0, 1 << 16), _digit_step, label="the step from every digit state T = 0..65,535")
    hunt = examples(_digit_step, total=st.integers(0, 1 << 62))
    return also(all_of(corr, steps_), hunt)


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
            if last(line) > bound or C.text_of(after, line) is None:
                return False
    return True


@law("context_ends_at_node", "memory §4", "A compaction's view ends at its node (before the message; for a merge at its last message) and holds only built lines.", TESTED)
def context_ends_at_node() -> Evidence:
    return both(_ends_at_node)


def _is_prefix(before: C.Chat, event: Event, after: C.Chat) -> bool:
    lines = nodes_of(after.cview)
    for node in _targets(after):
        ctx = C.context(after, node)
        if lines[: len(ctx)] != ctx:
            return False
        rest = lines[len(ctx) :]
        bound = first(node) - 1 if node[0] == 0 else last(node)
        if rest and last(rest[0]) <= bound and C.text_of(after, rest[0]) is not None:
            return False
    return True


@law("context_is_prefix", "memory §4", "A compaction's view is a prefix of the compaction view, stopping at the first line past the node or unbuilt.", TESTED)
def context_is_prefix() -> Evidence:
    return both(_is_prefix)


# -- D5: the waiting turn ---------------------------------------------------------------------------


def _view_lines_unbuilt(chat: C.Chat) -> set[Node]:
    return {n for n, _ in chat.view if C.text_of(chat, n) is None}


def _need_first(before: C.Chat, event: Event, after: C.Chat) -> bool:
    if not after.waiting:
        return True
    started = [n for n in after.running if n not in before.running]
    need = _view_lines_unbuilt(after)
    return all(n in need for n in started) and all(n in need for n in after.running)


@law("need_first", "memory D5 / rule 40,47", "While a turn waits only the view's unbuilt lines start.", TESTED, derivation="memory.md D5: while a turn waits only the view's unbuilt lines start; ready merges wait for settle")
def need_first() -> Evidence:
    return both(_need_first)


def _need_first_running(before: C.Chat, event: Event, after: C.Chat) -> bool:
    if event[0] != "wait":
        return True
    need = _view_lines_unbuilt(after)
    stopped = [n for n in before.running if n not in need]
    kept = not after.waiting or all(n in need for n in after.running)
    queued = all(n in after.merges or n in after.running or C.text_of(after, n) is not None for n in stopped)
    unchanged = all(C.failures(after, n) == C.failures(before, n) for n in stopped)
    return kept and queued and unchanged


@law("need_first_running", "memory D5", "When a turn starts waiting, calls for other nodes stop: back in their queue, with no failure counted.", TESTED, derivation="memory.md D5: calls for other nodes stop when the wait starts (no failure)")
def need_first_running() -> Evidence:
    return both(_need_first_running)


def _fail_cap(before: C.Chat, event: Event, after: C.Chat) -> bool:
    if any(count >= FAILURES for _n, count in after.fails):
        return False
    if event[0] != "fail" or not before.running:
        return True
    node = before.running[event[1] % len(before.running)]
    if C.failures(before, node) + 1 < FAILURES:
        return C.text_of(after, node) is None and C.failures(after, node) == C.failures(before, node) + 1
    line = C.text_of(after, node)
    return line is not None and line == cut(C.source(before, node), NODE) and 0 < size(line) <= NODE


@law("fail_cap_builds", "memory D5 / rule 38", "The third failed call builds the node from its input cut to 512 bytes at a character boundary.", TESTED, derivation="memory.md D5: the 3rd failed call builds the node from its input cut to 512 bytes (FAILURES)")
def fail_cap_builds() -> Evidence:
    return both(_fail_cap)


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


@law("settle_reached", "memory D5 / rule 47", "A waiting turn's view settles after a bounded number of compactor outcomes, whatever they are.", TESTED, derivation="memory.md D5 and rule 47: the view settles after bounded compactor outcomes (docs/harness.md H2, derived)")
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

