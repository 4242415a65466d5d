"""The compactor line laws (memory.md rule 37, D9), over the pure model of the line-building
conversation ``bend.compactor`` driven by arbitrary model replies.

Why the proofs cover every reply: the conversation reads a reply only through its line (the
text, ends stripped), whether the line is empty, the line's byte size compared with 512 and with
the best line so far, and the cut and follow-up it makes of a line. ``bend.compactor.build_line``'s
encoding is generated from its code (spec.z3gen: its loop a z3 recursive function) with the strip,
the size, the cut and the follow-up left uninterpreted, so z3 proves each claim for every input,
every sequence of replies of any length, and whatever those four compute: for the real ones too.
The claims restate the seed's rules over the lines and their sizes. The family of replies, the
other inputs and Hypothesis's replies (unicode, whitespace, thinking, empty) judge the model and
production by the seed's rules (``rules``, the judge's cut) beside the proofs.

line_fits is bounded: its line is the kept reply cut at a character boundary, and the cut reads
the text's bytes, which no encoding here states; ``bend.compactor.cut`` is checked to keep the
judge's prefix at every multi-byte boundary around byte 512, and the line of every reply of the
family is judged.

The judges (how many calls, which reply is kept, the cut) are written here from the seed's
text; no law calls the model to decide what the model should have done.
"""

from __future__ import annotations

import asyncio
import json
import functools
import itertools
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import z3
from hypothesis import strategies as st

from bend.compactor import Outcome, Reply, build_line
from bend.compactor import cut as model_cut
from bend.compactor import follow_up as model_follow_up
from bend.compactor import size as model_size
from eukhe.memory import compactor as production
from eukhe.memory.text import cut as production_cut
from spec import profiles
from spec.evidence import Evidence, LawFailed, all_of, also, bounded, examples, prove
from spec.registry import BOUNDED, PROVED, law
from spec.z3gen import applied, facts, fresh, generated, item

SECTION = "memory rule 37"
TRIES = 5  # the seed's number (rule 37), not the model's constant: a break there must show
NODE = 512  # docs/harness.md H1 as the seed uses it: every line 1-512 bytes


def size(text: str) -> int:
    return len(text.encode("utf-8"))


def cut(text: str, limit: int = NODE) -> str:
    """The judge's cut: the longest prefix of whole characters within ``limit`` bytes, walked
    character by character."""
    total = 0
    for index, char in enumerate(text):
        total += len(char.encode("utf-8"))
        if total > limit:
            return text[:index]
    return text


# -- the conversation's encoding, generated from build_line's code -----------------------------
#
# The conversation reads a reply only through its line (its text, ends stripped), the line's byte
# size, and the cut and follow-up it makes of a line. Those four stay uninterpreted in the
# encoding (spec.z3gen ``opaque``): a claim proved over it holds whatever they compute, so it holds
# for the real ones. The claims restate the seed's rules over the lines and their sizes.

BUILD_LINE = generated(build_line, opaque=(model_size, model_cut, model_follow_up, "str.strip"))
REPLIES = fresh(tuple[Reply, ...], "replies")
SOURCE = z3.String("source")


def line_of(k: int) -> Any:
    """The line of call k: the text of reply k, ends stripped; a missing reply is an empty one."""
    text = z3.If(k < REPLIES.length, item(REPLIES, k).text, z3.StringVal(""))
    return applied("str.strip", text)


LINES = [line_of(k) for k in range(TRIES)]
SIZES = [applied(model_size, line) for line in LINES]


def conversation() -> tuple[Any, Any]:
    """(calls made, the outcome) of build_line on the symbolic input and replies."""
    out = BUILD_LINE(SOURCE, REPLIES)
    return out.calls.length, out


def kept(out: Any, k: int) -> Any:
    """The outcome keeps the line of call k (cut to 512 bytes)."""
    return z3.And(out.source == z3.StringVal("reply"), out.line == applied(model_cut, LINES[k]))


def kept_input(out: Any) -> Any:
    return z3.And(out.source == z3.StringVal("input"), out.line == applied(model_cut, SOURCE))


def rules(sizes: Sequence[int]) -> tuple[int, int]:
    """The judge: the seed's rules (rule 37, D9) read on concrete line sizes, call by call:
    (calls made, index of the kept reply or -1)."""
    calls, kept = 0, -1
    for k in range(TRIES):
        calls += 1
        line = sizes[k]
        if line == 0:  # an empty or thinking-only reply is the last try
            break
        if kept >= 0 and line >= sizes[kept]:  # not shorter than the best line: the tries end
            break
        kept = k
        if line <= NODE:  # it fits: it is the line
            break
    return calls, kept


# -- the claims, proved by z3 over every input, every sequence of replies ----------------------------
#
# Each claim is a function that builds the formula: it calls the encoding, so ``prove`` knows what
# it is about (and replaces it by an uninterpreted function to check that the claim depends on it).


def shortest_before(k: int) -> Any:
    """The size of the shortest of the lines of calls 0..k-1 (k >= 1)."""
    best = SIZES[0]
    for j in range(1, k):
        best = z3.If(SIZES[j] < best, SIZES[j], best)
    return best


def _kept_is_earlier_shortest(out: Any, k: int) -> Any:
    return z3.Or(*[z3.And(kept(out, j), SIZES[j] == shortest_before(k)) for j in range(k)])


def _empty(k: int) -> Any:
    return LINES[k] == z3.StringVal("")


def claim_calls() -> Any:
    """The calls: 1, and one more after each reply that asks for a follow-up (its line is not
    empty, over 512 bytes, and the first or shorter than the one before), as long as every reply
    before did; so at most 5."""
    calls, _ = conversation()
    asks = [z3.And(z3.Not(_empty(j)), SIZES[j] > NODE, *([SIZES[j] < SIZES[j - 1]] if j else [])) for j in range(TRIES - 1)]
    follow_ups = z3.Sum([z3.If(z3.And(*asks[: k + 1]), 1, 0) for k in range(TRIES - 1)])
    return z3.And(calls == 1 + follow_ups, calls >= 1, calls <= TRIES)


def claim_first_fit() -> Any:
    calls, out = conversation()
    cases = []
    for k in range(TRIES):
        shorter = [SIZES[k] < SIZES[j] for j in range(k)]
        fits = z3.And(calls > k, z3.Not(_empty(k)), SIZES[k] <= NODE, *shorter)
        cases.append(z3.Implies(fits, z3.And(kept(out, k), calls == k + 1)))
    return z3.And(*cases)


def claim_stops() -> Any:
    calls, out = conversation()
    cases = []
    for k in range(1, TRIES):
        not_shorter = z3.And(calls > k, z3.Not(_empty(k)), SIZES[k] >= shortest_before(k))
        cases.append(z3.Implies(not_shorter, z3.And(calls == k + 1, _kept_is_earlier_shortest(out, k))))
    return z3.And(*cases)


def claim_empty() -> Any:
    calls, out = conversation()
    cases = [z3.Implies(_empty(0), z3.And(calls == 1, kept_input(out)))]
    for k in range(1, TRIES):
        empty = z3.And(calls > k, _empty(k))
        cases.append(z3.Implies(empty, z3.And(calls == k + 1, _kept_is_earlier_shortest(out, k))))
    return z3.And(*cases)


def claim_shortest() -> Any:
    """The kept line is the nonempty line of a call made no longer than any nonempty line of a
    call made; the input is kept exactly when the first line is empty."""
    calls, out = conversation()
    some = []
    for k in range(TRIES):
        no_longer = [z3.Implies(z3.And(calls > j, z3.Not(_empty(j))), SIZES[k] <= SIZES[j]) for j in range(TRIES)]
        some.append(z3.And(calls > k, z3.Not(_empty(k)), kept(out, k), *no_longer))
    return z3.And(_empty(0) == kept_input(out), z3.Implies(z3.Not(_empty(0)), z3.Or(*some)))


def _proof(claim: Callable[[], Any], label: str) -> Evidence:
    return prove(claim, label=f"{label}, for every input and every sequence of replies", assumptions=facts(REPLIES), ties=[BUILD_LINE.tie])


# -- the cut: bounded (it reads the text's bytes: no finite domain holds every text) -------------------


def boundary_texts() -> Iterator[str]:
    """Every text of a run of ASCII ending 0-6 bytes short of 512 followed by three characters
    of every width: every way a character can straddle the cut."""
    chars = ("a", "é", "€", "𝄞")
    for short in range(7):
        for tail in itertools.product(chars, repeat=3):
            yield "x" * (NODE - short) + "".join(tail)
    yield ""
    yield "𝄞" * 200
    yield "é" * 256 + "z"


@functools.lru_cache(maxsize=None)
def cut_check() -> Evidence:
    return bounded(
        boundary_texts(),
        lambda text: model_cut(text) == cut(text),
        label="bend.compactor.cut keeps the judge's prefix for every character of width 1-4 straddling byte 512",
    )


def cut_evidence() -> Evidence:
    return cut_check()


@functools.lru_cache(maxsize=None)
def production_cut_check() -> Evidence:
    return bounded(
        boundary_texts(),
        lambda text: production_cut(text) == cut(text),
        label="eukhe.memory.text.cut keeps the judge's prefix for every character of width 1-4 straddling byte 512",
    )


# -- the family of replies, the judge on the model ----------------------------------------------------


def text_of(length: int, style: int) -> str:
    """A line of exactly ``length`` bytes: ASCII, or multi-byte characters (style 1), wrapped
    in whitespace the strip removes (style 2)."""
    if style == 0 or length < 9:
        body = "x" * length
    else:
        body = "é€" + "𝄞" * ((length - 5) // 4) + "y" * ((length - 5) % 4)
    assert size(body) == length, (length, size(body))
    return body if style != 2 or not body else "  \n" + body + "\t "


def lines(replies: Sequence[Reply]) -> list[int]:
    """The judge's line sizes: each reply's text, its ends stripped, in bytes; missing = 0."""
    out = [size(r.text.strip()) for r in replies[:TRIES]]
    return out + [0] * (TRIES - len(out))


def agrees(source: str, replies: Sequence[Reply]) -> bool:
    """The model's conversation is the judge's rules': as many calls, the kept reply (or the input)
    cut at a character boundary by the judge's cut."""
    calls, kept = rules(lines(replies))
    out: Outcome = build_line(source, replies)
    origin = replies[kept].text.strip() if kept >= 0 else source
    if len(out.calls) != calls or out.line != cut(origin) or out.source != ("reply" if kept >= 0 else "input"):
        raise LawFailed(
            f"the model's conversation differs from the seed's rules: {len(out.calls)} calls, line of "
            f"{size(out.line)} bytes from {out.source}; the rules: {calls} calls, kept reply {kept}"
        )
    return True


def agrees_in_production(source: str, replies: Sequence[Reply]) -> bool:
    """Production's line builder (``eukhe.memory.compactor.LineBuild``, which reads a reply's
    text: the compactor drops thinking) holds the same conversation as the judge's rules."""
    calls, kept = rules(lines(replies))
    out = production.build_line(source, [r.text for r in replies])
    origin = replies[kept].text.strip() if kept >= 0 else source
    if len(out.calls) != calls or out.line != cut(origin) or out.origin != ("reply" if kept >= 0 else "input"):
        raise LawFailed(
            f"production's conversation differs from the seed's rules: {len(out.calls)} calls, line of "
            f"{size(out.line)} bytes from {out.origin}; the rules: {calls} calls, kept reply {kept}"
        )
    return True


SOURCES = ("the input " * 80 + "ü" * 50, "tiny input", "")
BOUNDARY = (0, 1, 511, 512, 513, 514, 600)


def reply_family() -> Iterator[tuple[str, tuple[Reply, ...]]]:
    """Every sequence of 0-3 replies over boundary sizes (ASCII, multi-byte, padded), each
    input; every chain of 0-6 strictly shorter over-limit replies ending every way (nothing
    more, empty, whitespace, thinking only, as long, longer, shorter but over, 512, 1)
    followed by one more reply that must not be read."""
    for source in SOURCES:
        for length in range(4):
            for sizes in itertools.product(BOUNDARY, repeat=length):
                for style in range(3):
                    yield source, tuple(Reply(text_of(n, style)) for n in sizes)
        for chain in range(7):
            over = [1000 - 37 * k for k in range(chain)]
            last = over[-1] if over else 1100
            ends: list[tuple[Reply, ...]] = [
                (),
                (Reply(""),),
                (Reply(" \n\t "),),
                (Reply("", thinking="a long thought " * 50),),
                (Reply(text_of(last, 1)),),
                (Reply(text_of(last + 1, 2)),),
                (Reply(text_of(max(NODE + 1, last - 5), 1)),),
                (Reply(text_of(NODE, 1)),),
                (Reply("z"),),
            ]
            for end in ends:
                yield source, tuple(Reply(text_of(n, k % 3)) for k, n in enumerate(over)) + end + (Reply("late"),)


@functools.lru_cache(maxsize=None)
def family_check() -> Evidence:
    return bounded(
        reply_family(),
        lambda case: agrees(*case),
        label="the judge's rules = model: every sequence of 0-3 replies over sizes 0, 1, 511-514, 600 in 3 text styles and every "
        "chain of 0-6 over-limit replies ending 9 ways, x 3 inputs (long multi-byte, tiny, empty)",
    )


# Texts are collections too: under the CrossHair backend they stay short.
TEXT = 40 if profiles.is_crosshair() else 1_400
CAP = 8
texts = st.one_of(
    st.text(max_size=40),
    st.text(max_size=TEXT),
    st.text(alphabet=st.sampled_from(["é", "€", "𝄞", " ", "\n", "x"]), min_size=100, max_size=TEXT),
    st.just(""),
    st.sampled_from([" ", "\n\t", "x" * NODE, "x" * (NODE + 1), "é" * 256 + "z", "a" + "é" * 300]),
)
replies = st.lists(st.builds(Reply, texts, st.one_of(st.just(""), st.text(max_size=8))), max_size=CAP)
sources = st.one_of(st.just(""), st.text(max_size=TEXT), st.sampled_from(SOURCES))


@functools.lru_cache(maxsize=None)
def production_family() -> Evidence:
    return bounded(
        reply_family(),
        lambda case: agrees_in_production(*case),
        label="the judge's rules = production on the same family of reply sequences",
    )


@functools.lru_cache(maxsize=None)
def production_hunted() -> Evidence:
    return examples(lambda source, rs: agrees_in_production(source, tuple(rs)), source=sources, rs=replies)


def on_production(*more: Evidence) -> Evidence:
    return all_of(production_family(), production_hunted(), *more)


@functools.lru_cache(maxsize=None)
def hunted() -> Evidence:
    """Hypothesis's replies, once for the five laws: the model against the judge's rules."""
    return examples(lambda source, rs: agrees(source, tuple(rs)), source=sources, rs=replies)


def _law(claim: Callable[[], Any], label: str) -> Evidence:
    """The claim proved over build_line's encoding, generated from its code; the model and
    production judged by the seed's rules beside it."""
    return also(_proof(claim, label), family_check(), hunted()).with_production(on_production())


@law("line_calls_at_most_tries", SECTION, "Building one line makes at most 5 model calls.", PROVED, derivation="memory.md rule 37 (TRIES = 5)")
def line_calls_at_most_tries() -> Evidence:
    return _law(claim_calls, "calls = 1 + the follow-ups asked (a line over 512 bytes, the first or shorter than the last), so 1 <= calls <= 5")


@law("line_fits", SECTION, "The line is 1-512 bytes: the shortest reply (else the input) cut to 512 bytes at a character boundary.", BOUNDED, derivation="memory.md rule 37 and D9; docs/harness.md H1 (every line 1-512 bytes)")
def line_fits() -> Evidence:
    """Bounded: the line is the kept reply (or the input) cut by the judge's cut, computed on the
    family and the boundary texts; which line is kept is proved of build_line's code beside it
    (whatever the cut computes), but the cut reads the text's bytes, which no encoding here states."""
    whole = all_of(family_check(), cut_evidence())
    proof = _proof(claim_shortest, "the kept line is the shortest nonempty line of the calls made; none only when the first is empty")
    return also(whole, proof, hunted()).with_production(on_production(production_cut_check()))


@law("line_takes_first_fit", SECTION, "The first reply of at most 512 bytes (shorter than every earlier one) is the line, and no call follows it.", PROVED, derivation="memory.md rule 37")
def line_takes_first_fit() -> Evidence:
    return _law(claim_first_fit, "a call whose line is 1-512 bytes and shorter than every earlier one is kept and is the last")


@law("line_stops_when_not_shorter", "memory rule 37 / D9", "A follow-up whose reply is not shorter than the best line ends the tries; the best line is kept.", PROVED, derivation="memory.md D9")
def line_stops_when_not_shorter() -> Evidence:
    return _law(claim_stops, "a follow-up not shorter than the shortest earlier line is the last call and that line is kept")


@law("line_empty_is_a_try", "memory rule 37 / D9", "An empty or thinking-only reply counts as the last try: the conversation ends with the best line, else the input cut.", PROVED, derivation="memory.md D9")
def line_empty_is_a_try() -> Evidence:
    return _law(claim_empty, "an empty line is the last call; the shortest earlier line is kept, else none (the input)")


# == the live compactor and its requests, run on production ======================================
#
# These laws run production alone (there is no model of the wire): the live compactor over real
# HTTP against the loopback server, and the requests as each wire client spells them. Each is
# bounded: the family of runs is one we chose (both APIs, the clock offsets around each bound the
# seed names, the line counts around each block of 4). The judges are written here from the
# seed's text: the server's record of what was sent, the lines the chat logged, the byte sizes.

LIVE = "memory rules 30, 38 / D5, D9"
APIS = ("anthropic-messages", "openai-completions")
MARK = '"cache_control"'


class _Sink:
    def __init__(self) -> None:
        self.nodes: list[Any] = []

    def message(self, record: Any) -> None:
        pass

    def node(self, record: Any) -> None:
        self.nodes.append(record)

    def merge(self, record: Any) -> None:
        pass

    def view(self, nodes: Any) -> None:
        pass


class _Live:
    """One chat and its compactor speaking ``api`` to ``server``, on a clock the law drives."""

    def __init__(self, server: Any, api: str) -> None:
        from eukhe.inference.wire import client_for
        from eukhe.inference.wire.plan import WireModel
        from eukhe.memory.chat import Chat
        from eukhe.memory.durable import DurableChat
        from eukhe.memory.request import Layers
        from spec.loopback import base_url

        provider, ident = ("anthropic", "claude-haiku-4-5") if api == APIS[0] else ("openrouter", "anthropic/claude-haiku-4.5")
        wire = WireModel(provider, ident, api, base_url(server, api), "sk-law", reasoning=False, max_tokens=4096)
        self.server = server
        self.now = 0.0
        self.sink = _Sink()
        self.chat = DurableChat(Chat(), self.sink, lambda: "2026-11-30T12:00:00")
        self.compactor = production.Compactor(self.chat, client_for(wire, timeout=30.0), Layers.of(), clock=lambda: self.now)
        self.base = len(server.requests)

    @property
    def sent(self) -> int:
        return len(self.server.requests) - self.base

    async def until(self, predicate: Callable[[], bool]) -> None:
        changed = self.compactor.changed

        async def loop() -> None:
            while not predicate():
                changed.clear()
                await changed.wait()

        await asyncio.wait_for(loop(), 30.0)

    async def arrived(self, n: int) -> None:
        await asyncio.to_thread(self.server.wait_requests, self.base + n, 30.0)

    def events(self, event: str) -> int:
        return sum(1 for row in self.compactor.rows if row.event == event)

    def line(self, node: tuple[int, int]) -> str | None:
        found = [r.text for r in self.sink.nodes if r.node == node]
        return found[-1] if found else None


def _on_loopback(run: Callable[..., Any]) -> Callable[[Any], bool]:
    """A case runner: each case gets a fresh loopback server and its own event loop."""
    from spec.loopback import LoopbackServer

    def check(case: Any) -> bool:
        with LoopbackServer() as server:
            try:
                result = asyncio.run(asyncio.wait_for(run_case(server, case), 60.0))
            finally:
                server.release()
        return bool(result)

    async def run_case(server: Any, case: Any) -> Any:
        return await run(server, *case)

    return check


def _long(tag: str) -> str:
    return (tag + " ") * 200


async def _gate_case(server: Any, api: str, waiters: int, blocks: bool, fails: bool = False) -> bool:
    """A writer held before its first byte; ``waiters`` calls after it with the same marked
    prefix (``blocks``: 8 short lines before them) or with no whole block (nothing marked).
    ``fails``: the writer's call fails before any byte: nobody is held by it."""
    from spec.loopback import Stream, Text, Wait

    if fails:
        return await _gate_fails_case(server, api, waiters)
    live = _Live(server, api)
    begin = threading.Event()
    server.script(Stream([Wait(begin), Text("writer line")]), *[Stream([Text(f"waiter line {j}")]) for j in range(waiters)])
    c = live.compactor
    if blocks:
        for i in range(8):
            c.message(f"short {i}")
    c.message(_long("writer"))
    await live.arrived(1)
    for j in range(waiters):
        c.message(_long(f"waiter{j}"))
    try:
        if blocks:
            await live.until(lambda: live.events("wait") == waiters)
            if live.sent != 1:
                raise LawFailed(f"{api}: {live.sent} calls sent while the writer's response had not started")
        else:
            await live.arrived(1 + waiters)  # nothing is marked: nobody waits
        begin.set()
        await live.arrived(1 + waiters)
        await live.until(lambda: c.settled)
        await c.idle()
    finally:
        begin.set()
        await c.close()
    return live.events("built") == 1 + waiters


async def _gate_fails_case(server: Any, api: str, waiters: int) -> bool:
    from spec.loopback import Fail, Stream, Text

    live = _Live(server, api)
    server.script(Fail(500), *[Stream([Text(f"waiter line {j}")]) for j in range(waiters)])
    c = live.compactor
    for i in range(8):
        c.message(f"short {i}")
    c.message(_long("writer"))
    await live.until(lambda: live.events("failed") == 1)
    for j in range(waiters):
        c.message(_long(f"waiter{j}"))
    await live.arrived(1 + waiters)
    await live.until(lambda: live.events("built") == waiters)
    await c.close()
    built = sorted(r.render(detail=True).rsplit(": ", 1)[1] for r in c.rows if r.event == "built")
    return built == [f"waiter line {j}" for j in range(waiters)]  # the writer, retried at a message, may take one


@law("compactor_prefix_gate", "memory rule 30", "A compaction whose marked prefix another call is writing is sent only once that call's response starts; a call with nothing marked never waits.", BOUNDED, derivation="memory.md rule 30")
def compactor_prefix_gate() -> Evidence:
    cases = list(itertools.product(APIS, (1, 2, 3), (True, False), (False,))) + [(api, 2, True, True) for api in APIS]
    return bounded(cases, _on_loopback(_gate_case), label="both APIs x 1-3 waiting calls x a marked prefix or none, and a writer that fails before its first byte, over loopback")


RETRY_OFFSETS = (0.0, 5.0, 9.5, 10.0, 25.0)


async def _retry_case(server: Any, api: str, waiting: bool, offset: float) -> bool:
    """A failed node, the clock moved by ``offset`` with or without a waiting turn: it is tried
    again exactly when a turn waits and 10 s have passed; the next message tries it again; its
    third failure builds it from its input cut to 512 bytes."""
    from spec.loopback import Fail

    live = _Live(server, api)
    text = "a" + "ü" * 260 + " end"  # 525 bytes: the cut falls inside a 2-byte character
    server.script(Fail(500), Fail(503), Fail(429))
    c = live.compactor
    c.message(text)
    await live.until(lambda: live.events("failed") == 1)
    if waiting:
        c.wait()
    live.now += offset
    c.poll()
    retried = waiting and offset >= production.RETRY
    if retried:
        await live.until(lambda: live.events("failed") == 2)
    if live.sent != (2 if retried else 1):
        raise LawFailed(f"{api}: waiting={waiting}, {offset} s: {live.sent} calls (retried: {retried})")
    c.go()
    c.message("next")
    if not retried:
        await live.until(lambda: live.events("failed") == 2)
        c.message("again")
    await live.until(lambda: c.chat.chat.is_built((0, 0)))
    await c.idle()
    await c.close()
    starts = sum(1 for row in c.rows if row.event == "start" and row.node == (0, 0))
    capped = [r.render(detail=True) for r in c.rows if r.event == "capped"]
    if capped != [f"memory: capped 0+1 (failure 3: built from its input cut to 512 bytes): {cut(text)}"]:
        raise LawFailed(f"{api}: the capped row reads {capped}")
    if starts != 3 or live.line((0, 0)) != cut(text) or size(cut(text)) != 511:
        raise LawFailed(f"{api}: after 3 failures {starts} calls for message 0, line {live.line((0, 0))!r}")
    return True


@law("compactor_retries_only_for_a_waiting_turn", "memory rule 38 / D5", "A failed node is tried again at the next message, or every 10 s while a turn waits, never by the clock alone; its third failure builds it from its input cut to 512 bytes.", BOUNDED, derivation="memory.md rule 38, D5")
def compactor_retries_only_for_a_waiting_turn() -> Evidence:
    cases = itertools.product(APIS, (False, True), RETRY_OFFSETS)
    return bounded(cases, _on_loopback(_retry_case), label="both APIs x a turn waiting or not x clock offsets 0, 5, 9.5, 10, 25 s, over loopback")


async def _deadline_case(server: Any, api: str, offset: float) -> bool:
    from spec.loopback import Stall, Stream

    live = _Live(server, api)
    server.script(Stream([Stall()]))
    c = live.compactor
    c.message(_long("slow"))
    await live.arrived(1)
    live.now += offset
    c.poll()
    failed = live.events("failed")
    await c.close()
    if failed != (1 if offset >= production.CALL_DEADLINE else 0):
        raise LawFailed(f"{api}: a call {offset} s old: {failed} failures")
    return True


@law("compactor_call_deadline", "memory D9", "A model call past 10 minutes fails; one under it goes on.", BOUNDED, derivation="memory.md D9 (CALL_DEADLINE)")
def compactor_call_deadline() -> Evidence:
    cases = itertools.product(APIS, (0.0, 599.0, 600.0, 601.0))
    return bounded(cases, _on_loopback(_deadline_case), label="both APIs x call ages 0, 599, 600, 601 s, over loopback")


async def _idle_case(server: Any, api: str, messages: int, waits: bool) -> bool:
    live = _Live(server, api)
    c = live.compactor
    for i in range(messages):
        c.message(f"short message {i}")
    if waits:
        c.wait()
    for _ in range(4):
        live.now += production.RETRY
        c.poll()
    await c.idle()
    if live.sent or c.rows:
        raise LawFailed(f"{api}: an idle chat of {messages} short messages made {live.sent} calls")
    return True


@law("compactor_idle_makes_no_call", "memory Use / rule 12", "A chat whose messages are all their own lines makes no model call, however the clock runs or a turn waits.", BOUNDED, derivation="memory.md Use (idle chat: no model call), rule 12")
def compactor_idle_makes_no_call() -> Evidence:
    cases = itertools.product(APIS, (0, 1, 2, 9, 31), (False, True))
    return bounded(cases, _on_loopback(_idle_case), label="both APIs x 0-31 short messages (every merge of them free) x a turn waiting or not, over loopback")


async def _stop_case(server: Any, api: str) -> bool:
    """D5: a merge under way stops when a turn waits for an unbuilt line; it runs again once the
    view settled."""
    from spec.loopback import Stall, Stream, Text, Wait

    live = _Live(server, api)
    third = threading.Event()
    server.script(Stream([Text("a" * 300)]), Stream([Text("b" * 300)]), Stream([Stall()]), Stream([Wait(third), Text("c")]), Stream([Text("m" * 50)]))
    c = live.compactor
    c.message(_long("one"))
    c.message(_long("two"))
    await live.until(lambda: (1, 0) in c.tasks)
    await live.arrived(3)
    c.message(_long("three"))
    await live.arrived(4)
    c.wait()
    stopped = (1, 0) not in c.tasks and live.events("stopped") == 1 and c.waiting
    third.set()
    await live.until(lambda: c.chat.chat.is_built((1, 0)))
    await c.idle()
    await c.close()
    if not stopped or live.sent != 5 or live.line((1, 0)) != "m" * 50:
        raise LawFailed(f"{api}: stopped={stopped}, {live.sent} calls, merge line {live.line((1, 0))!r}")
    return True


@law("compactor_wait_runs_only_the_view", "memory D5", "While a turn waits only the view's unbuilt message lines run: a merge under way stops, and runs again once the view settled.", BOUNDED, derivation="memory.md D5")
def compactor_wait_runs_only_the_view() -> Evidence:
    return bounded(((api,) for api in APIS), _on_loopback(_stop_case), label="both APIs, over loopback")


# == the requests (rules 26, 29, 31, 32, 35, 44, D4, D6, D11), as each wire client spells them ==

REQUEST = "memory rules 26, 29, 31"
WIRES = ("anthropic", "openrouter-anthropic", "openrouter-other", "local")


def _wire_client(kind: str) -> Any:
    from eukhe.inference.wire import client_for
    from eukhe.inference.wire.plan import WireModel

    model = {
        "anthropic": ("anthropic", "claude-haiku-4-5", APIS[0], "https://api.anthropic.com"),
        "openrouter-anthropic": ("openrouter", "anthropic/claude-haiku-4.5", APIS[1], "https://openrouter.ai/api/v1"),
        "openrouter-other": ("openrouter", "qwen/qwen3-8b", APIS[1], "https://openrouter.ai/api/v1"),
        "local": ("llama-cpp", "qwen3-8b", APIS[1], "http://127.0.0.1:8080/v1"),
    }[kind]
    return client_for(WireModel(model[0], model[1], model[2], model[3], "sk-law", reasoning=False, max_tokens=4096))


def _request_case(kind: str, count: int, lead: int, steps: int) -> bool:
    """The body of a turn over a view of ``count`` lines, ``lead`` leading user texts, ``steps``
    later tool steps: the view opens the first user message with the leading texts joined
    behind it; marks sit at the end of the last whole block of 4 lines (when there is one) and
    at the request's end, for Anthropic and anthropic/ models on OpenRouter only; no ttl."""
    from eukhe.inference.wire.events import ToolCall
    from eukhe.inference.wire.plan import Message
    from eukhe.memory.request import Layers, build_request

    view = [f"{i}+1|line {i}" for i in range(count)]
    conversation = [Message("user", f"lead text {j}") for j in range(lead)]
    for k in range(steps):
        conversation += [
            Message("assistant", "", tool_calls=(ToolCall(0, f"c{k}", "date", '{"id": 0}'),)),
            Message("tool", f"result {k}", tool_call_id=f"c{k}", tool_name="date"),
        ]
    if not conversation:
        conversation = [Message("user", "task")]
        lead = 1
    client = _wire_client(kind)
    request = build_request(Layers.of(), view, conversation)
    _url, _headers, body = client.build(request, client.plan(request))
    messages = body["messages"][1:] if body["messages"][0]["role"] in ("system", "developer") else body["messages"]
    first = messages[0]
    content = first["content"]
    joined = "".join(b["text"] for b in content) if isinstance(content, list) else content
    texts = ["lead text %d" % j for j in range(lead)] if conversation[0].text != "task" else ["task"]
    expected = "<chat>\n" + "".join(line + "\n" for line in view) + "</chat>" + "".join("\n\n" + t for t in texts)
    if joined != expected:
        raise LawFailed(f"{kind}: the first user message is not the view with the leading texts behind it")
    dumped = json.dumps(body)
    if "ttl" in dumped:
        raise LawFailed(f"{kind}: a cache mark with a ttl (rule 31)")
    marked = kind in ("anthropic", "openrouter-anthropic")
    if not marked:
        if MARK in dumped:
            raise LawFailed(f"{kind}: cache marks where the API takes none")
        return True
    whole = count // 4 * 4
    view_mark = [b for b in content if "cache_control" in b][:1] if whole else []
    blocks = [b["text"] for b in content][: whole // 4]
    if whole and (
        not view_mark
        or not view_mark[0]["text"].endswith(view[whole - 1] + "\n")
        or [t.count("\n") for t in blocks] != [5] + [4] * (whole // 4 - 1)
    ):
        raise LawFailed(f"{kind}: {count} lines, the view is not in blocks of 4 marked at the end of line {whole}")
    last = messages[-1]["content"]
    if not isinstance(last, list) or "cache_control" not in last[-1]:
        raise LawFailed(f"{kind}: no mark at the request's end")
    if dumped.count(MARK) != (1 if whole else 0) + 1:
        raise LawFailed(f"{kind}: {dumped.count(MARK)} marks for {count} lines")
    return True


@law("memory_request_marks_the_last_whole_block", REQUEST, "A call sends [tools] [system] [view] [message]: the leading user texts join the view's message; cache marks sit at the last whole block of 4 view lines and at the request's end, only where the API takes them, never with a ttl.", BOUNDED, derivation="memory.md rules 26, 29, 31, 51, D11")
def memory_request_marks_the_last_whole_block() -> Evidence:
    cases = itertools.product(WIRES, range(0, 18), range(0, 3), range(0, 3))
    return bounded(cases, lambda case: _request_case(*case), label="4 wires x 0-17 view lines x 0-2 leading texts x 0-2 tool steps")


def _choice_case(memory_model: str, auxiliary: str | None, saved: str | None) -> bool:
    from eukhe.memory.request import MemoryModelUnset, choose_model

    reason = "provider has no credentials"
    try:
        chosen = choose_model(memory_model, "medium", auxiliary, saved, reason)
    except MemoryModelUnset as error:
        if memory_model.strip() or (auxiliary or "").strip():
            raise LawFailed(f"a failure although a model is set: {memory_model!r}, {auxiliary!r}") from None
        said = str(error)
        if (saved or "(none)") not in said or reason not in said or "memory.model" not in said:
            raise LawFailed(f"the failure does not name the saved default and the reason: {said}") from None
        return True
    except ValueError:
        given = memory_model if memory_model.strip() else auxiliary or ""
        if "/" in given.strip().strip("/") and not given.strip().startswith("/") and not given.strip().endswith("/"):
            raise LawFailed(f"{given!r} is a provider/id and was refused") from None
        return True
    want = memory_model if memory_model.strip() else auxiliary or ""
    provider, _, ident = want.strip().partition("/")
    source = "memory.model" if memory_model.strip() else "auxiliary"
    return (chosen.provider, chosen.id, chosen.thinking, chosen.source) == (provider, ident, "medium", source)


@law("memory_model_is_set_or_says_why", "memory D6", "The compactor's model is memory.model, else the auxiliary model, with memory.thinking; with neither the failure names the saved default and the reason.", BOUNDED, derivation="memory.md D6; inference.md S6 (memory compactor fails with saved default and reason)")
def memory_model_is_set_or_says_why() -> Evidence:
    values = ("", "  ", "anthropic/claude-haiku-4-5", "openrouter/anthropic/claude-haiku-4.5", "noslash", "/x", "x/")
    cases = itertools.product(values, (None,) + values, (None, "anthropic/claude-opus-4-6"))
    return bounded(cases, lambda case: _choice_case(*case), label="memory.model and auxiliary over empty, blank, provider/id, nested id, malformed x a saved default or none")


def _task_case(ceiling: int, count: int, long_every: int) -> bool:
    """Rules 32, 34, 35, 41 on production's compaction input: every running node's view holds
    built lines only, ends at the node, and its task starts Compaction:, shows the 512-dash
    ruler and the whole input (a message with its kind; a merge's two lines)."""
    from eukhe.memory.chat import Chat, Config
    from eukhe.memory.request import compaction_input

    chat = Chat(Config(ceiling=ceiling, floor=ceiling // 2, cceiling=ceiling // 4, cfloor=ceiling // 8))
    for i in range(count):
        chat.message(("long %d " % i) * 90 if i % long_every == 0 else "short %d" % i)
        for node in list(chat.running):
            view, task = compaction_input(chat, node, lambda j: "user" if j % 2 else "eukhe")
            level, ident = node
            bound = (ident << level) - 1 if level == 0 else ((ident + 1) << level) - 1
            for line in view:
                head = line.split("|", 1)[0]
                first, n = (int(x) for x in head.split("+"))
                if first + n - 1 > bound or "(not summarized yet" in line:
                    raise LawFailed(f"node {node}: view line {head} is past the node or unbuilt")
            if not task.startswith("Compaction:") or "-" * 512 not in task or "-" * 513 in task:
                raise LawFailed(f"node {node}: the task has no Compaction: head or no 512-dash ruler")
            if level == 0:
                want = f"<input>\n{'user' if ident % 2 else 'eukhe'}: {chat.message_text(ident)}\n</input>"
            else:
                left, right = chat.text((level - 1, 2 * ident)), chat.text((level - 1, 2 * ident + 1))
                a, b = f"{(2 * ident) << (level - 1)}+{1 << (level - 1)}", f"{(2 * ident + 1) << (level - 1)}+{1 << (level - 1)}"
                want = f"<input>\n{a}|{(left or '').replace(chr(10), ' ')}\n{b}|{(right or '').replace(chr(10), ' ')}\n</input>"
            if not task.endswith(want):
                raise LawFailed(f"node {node}: the task does not end with the whole input")
            chat.done(chat.running.index(node), ("line of %d.%d " % node) * (3 + ident % 5))
    return True


@law("compaction_tasks_carry_the_ruler_and_the_whole_input", "memory rules 32, 34, 35, 41", "Each compaction sends its compaction view (built lines only, ending at its node) and a task starting Compaction: with the 512-dash ruler and the whole input.", BOUNDED, derivation="memory.md rules 32, 34, 35, 41")
def compaction_tasks_carry_the_ruler_and_the_whole_input() -> Evidence:
    cases = itertools.product((4_000, 16_000), (10, 40, 90), (1, 2, 3))
    return bounded(cases, lambda case: _task_case(*case), label="view ceilings 4,000 and 16,000 bytes x 10-90 messages x every 1st-3rd message long")


def _prompt_case(notes: str, instructions: str, devices: bool) -> bool:
    from eukhe.memory.prompts import turn_text
    from eukhe.memory.request import Layers

    for message in ("", "hi", instructions, "Compaction: not a task\n\nsecond paragraph ☃"):
        turn = turn_text(message)
        if not turn.startswith("Turn:") or not turn.endswith("\n\n" + message) or turn.count("Turn:") != 1 + message.count("Turn:"):
            raise LawFailed(f"the turn's mark is not before the whole message (D11): {turn[:80]!r}")

    first = Layers.of(notes, instructions, devices=devices)
    again = Layers.of(notes, instructions, devices=devices)
    prompt = first.system
    if first != again:
        raise LawFailed("the same inputs gave another prompt or other tools (rule 27)")
    if [t.name for t in first.tools[:2]] != ["zoom", "date"] or "Compaction:" not in prompt or "Turn:" not in prompt:
        raise LawFailed("the prompt lacks a mark or the tools lack zoom and date")
    places = [prompt.index("## Compactions")]
    if notes.strip():
        places.append(prompt.index(notes.strip()))
    if instructions.strip():
        places.append(prompt.index(instructions.strip()))
    if places != sorted(places) or (("## The user's computers" in prompt) != devices):
        raise LawFailed("the layers are out of order (memory, tool notes, user instructions: D4, rule 44)")
    return True


@law("one_system_prompt_in_its_layers", "memory rules 27, 44 / D4", "One system prompt for turns and compactions: the memory layer, the static tool notes, the user's instructions; the same inputs give the same bytes; a turn's message follows its Turn: mark whole.", BOUNDED, derivation="memory.md rules 27, 44, D4, D11")
def one_system_prompt_in_its_layers() -> Evidence:
    cases = itertools.product(("", "  ", "Tool notes: read before edit."), ("", "Answer in French. ☃"), (False, True))
    return bounded(cases, lambda case: _prompt_case(*case), label="tool notes empty, blank or set x user instructions empty or set x device tools or none")
