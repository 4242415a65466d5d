"""Laws of the Director stack (control.md S5, law table of S5).

Proofs. ``decide`` walks the stack from the top: each asked layer passes (Defer keeps it above,
Leave drops it) until one decides (Again, Yield, Stack{l}, Abort) or none is left. The size of
the stack after a decision, and its outcome, depend only on counts: n (the stack's size), i
(the layers asked before the deciding one), kept (the Defers among them), the deciding tag,
whether the deciding layer has no budget, and the cap. ``decide_size``/``decide_outcome`` are
that counting encoding, written once and evaluated two ways: on z3 integers (unbounded n, i,
kept, cap, steps) for the proofs, and on Python integers against ``bend.director.decide`` and
``tick`` on every stack, verdict list and cap of an enumerated domain (the agreement check: the
proof is about the model only if the encoding is the model on every case we can compute).

- dir_stack_bounded: induction on the walk (base: nothing asked; step: one more layer passes;
  the invariant 0 <= kept <= i <= n), then the exit: the size after is at most max(cap, n).
- dir_loop_stack_bounded: induction on ticks, from the decision lemma.
- dir_loop_ends: a ranking function (steps + 1 while the loop runs, 0 once it ended) drops by at
  least 1 at every tick of a running loop, whatever the outcome; induction on the tick number k
  gives rank <= max(0, n + 1 - k), so after n + 1 ticks the loop has ended.
- dir_end_is_final: the tick encoding of an ended loop is the identity (z3), and the model's
  tick of an ended loop is checked to be the identity on the enumerated domain.

- dir_rewind_restores (the model): as_of's walk, by the same stop-or-parent step as the judge's,
  ends (the index drops at every step, z3), and decode(encode(s)) = s by induction on the stack
  (encode and decode written as folds of one layer, checked against the model; the layer step
  run on every kind with a budget z3 keeps symbolic in 0..MAX_BUDGET).

dir_encode_sound and dir_resume_restores are not proved: encode_sound judges every tree, sound or
not (any JSON value of any depth), against the oracle and production's document reader, and
resume_restores goes through the stored bytes (show, then the JSON library's parser, then
from_json), which no encoding here states. They are judged by the oracle
(spec/oracles/director.py, the document's shape from the seed's text), run on model and
production over every stack within a bound, every malformed document at every depth of those
stacks, and Hypothesis beyond the bound (the hunt of the tested part).
"""

from __future__ import annotations

import functools
import itertools
import json
import random
from collections.abc import Callable, Iterator
from typing import Any

import z3
from hypothesis import strategies as st

from bend import director as m
from spec.evidence import Evidence, Finite, LawFailed, all_of, also, bounded, domain, examples, exhaust, explore, induction, prove
from spec.oracles import director as oracle
from spec.proofs import Opaque, Prefix, timed
from spec.registry import BOUNDED, PROVED, law

KINDS = range(len(m.KIND_NAMES))
PASS_TAGS = (m.DEFER, m.LEAVE)
PLAIN_DECIDING = (m.AGAIN, m.GIVE_BACK, m.ABORT)
TAG_CODES = {tag: code for code, tag in enumerate(oracle.VERDICTS)}  # defer 0, again 1, yield 2, stack 3, leave 4, abort 5
NONE_CODE = len(oracle.VERDICTS)  # no layer decided
OUTCOME_CODES = {outcome: code for code, outcome in enumerate(oracle.OUTCOMES)}  # continue 0, yield 1, fail 2


def layers(budgets: range) -> tuple[m.Layer, ...]:
    return tuple(m.Layer(k, b) for k in KINDS for b in budgets)


def stacks(alphabet: tuple[m.Layer, ...], longest: int) -> Iterator[m.Stack]:
    for size in range(longest + 1):
        yield from itertools.product(alphabet, repeat=size)


def canonical_lists(size: int, pushable: tuple[m.Layer, ...]) -> Iterator[tuple[m.Verdict, ...]]:
    """Every verdict list of a stack of ``size`` layers up to what decide reads: j passes
    (j <= size), then, when j < size, one deciding verdict."""
    deciding = tuple(m.Verdict(t) for t in PLAIN_DECIDING) + tuple(m.Verdict(m.STACK, p) for p in pushable)
    for passes in range(size + 1):
        for prefix in itertools.product(PASS_TAGS, repeat=passes):
            head = tuple(m.Verdict(t) for t in prefix)
            if passes == size:
                yield head
            else:
                for last in deciding:
                    yield head + (last,)


# -- Hypothesis strategies (the hunt beyond the bounds: huge budgets and caps too) -------------

layer_st = st.builds(m.Layer, st.integers(0, 3), st.one_of(st.integers(0, 6), st.integers(0, oracle.MAX_BUDGET)))
verdict_st = st.one_of(
    st.sampled_from([m.Verdict(t) for t in (m.DEFER, m.AGAIN, m.GIVE_BACK, m.LEAVE, m.ABORT)]),
    st.builds(lambda layer: m.Verdict(m.STACK, layer), layer_st),
)
stack_st = st.lists(layer_st, max_size=12).map(tuple)
verdicts_st = st.lists(verdict_st, max_size=14).map(tuple)
script_st = st.lists(verdicts_st, max_size=16).map(tuple)
cap_st = st.one_of(st.integers(0, 14), st.integers(0, 2**64))
steps_st = st.one_of(st.integers(0, 14), st.integers(0, 2**64))


# -- the counting encoding, one text for z3 and for Python integers --------------------------------

class Ops:
    """The connectives the encoding is written with: z3's, or Python's on plain values."""

    def __init__(self, If: Callable[..., Any], And: Callable[..., Any], Or: Callable[..., Any], Not: Callable[[Any], Any]) -> None:
        self.If, self.And, self.Or, self.Not = If, And, Or, Not


PY = Ops(lambda c, a, b: a if c else b, lambda *p: all(p), lambda *p: any(p), lambda p: not p)
Z3 = Ops(z3.If, z3.And, z3.Or, z3.Not)


def decide_size(n: Any, i: Any, kept: Any, tag: Any, broke: Any, cap: Any, o: Ops) -> Any:
    """The size of the stack after a decision: ``i`` layers passed (``kept`` of them deferred),
    then the layer at position n - 1 - i gave ``tag`` (NONE_CODE: no layer decided); ``broke``:
    that layer has no budget. Room for a push: above (i) + the layer + below (n - 1 - i) < cap."""
    below = n - 1 - i
    stays = below + 1 + kept
    pushes = o.And(tag == TAG_CODES[m.STACK], broke == 0, n < cap)
    return o.If(tag == NONE_CODE, kept, o.If(pushes, stays + 1, stays))


def decide_outcome(n: Any, tag: Any, broke: Any, cap: Any, o: Ops) -> Any:
    """The outcome code of a decision: Again or a push with budget (and room) continue; Abort
    and a push with budget and no room fail; the rest (Yield, no budget, nobody) yields."""
    again = tag == TAG_CODES[m.AGAIN]
    push = tag == TAG_CODES[m.STACK]
    cont = o.And(broke == 0, o.Or(again, o.And(push, n < cap)))
    fails = o.Or(tag == TAG_CODES[m.ABORT], o.And(push, broke == 0, n >= cap))
    return o.If(cont, OUTCOME_CODES["continue"], o.If(fails, OUTCOME_CODES["fail"], OUTCOME_CODES["yield"]))


def tick_encoding(ended: Any, steps: Any, size: Any, outcome: Any, decided: Any, o: Ops) -> tuple[Any, Any, Any]:
    """(ended after, steps after, size after) of one tick: an ended loop stays; a continuation
    with no step left ends with the stack as before; a continuation with a step spends it; a
    yield or a failure ends with the decision's stack."""
    goes_on = outcome == OUTCOME_CODES["continue"]
    ended_after = o.Or(ended, o.Not(goes_on), steps == 0)
    steps_after = o.If(o.And(o.Not(ended), goes_on, steps > 0), steps - 1, steps)
    size_after = o.If(o.Or(ended, o.And(goes_on, steps == 0)), size, decided)
    return ended_after, steps_after, size_after


def _walk(stack: m.Stack, verdicts: tuple[m.Verdict, ...]) -> tuple[int, int, int, int]:
    """(i, kept, tag, broke) of a verdict list, read as the oracle's verdict kinds."""
    i = kept = 0
    n = len(stack)
    while i < n:
        verdict = verdicts[i] if i < len(verdicts) else m.Verdict(m.DEFER)
        if verdict.tag in oracle.PASSING:
            kept += verdict.tag == "defer"
            i += 1
            continue
        return i, kept, TAG_CODES[verdict.tag], int(stack[n - 1 - i].budget == 0)
    return i, kept, NONE_CODE, 0


def agrees(stack: m.Stack, verdicts: tuple[m.Verdict, ...], cap: int) -> bool:
    """The encoding gives the model's decision: its size and its outcome."""
    decided = m.decide(stack, verdicts, cap)
    i, kept, tag, broke = _walk(stack, verdicts)
    n = len(stack)
    size = decide_size(n, i, kept, tag, broke, cap, PY)
    outcome = OUTCOME_CODES[decided.outcome]
    want = decide_outcome(n, tag, broke, cap, PY) if tag != NONE_CODE else OUTCOME_CODES["yield"]
    if len(decided.stack) != size or outcome != want:
        raise LawFailed(f"the encoding disagrees with decide on {stack!r} {verdicts!r} cap {cap}: {decided!r}")
    return True


DECIDE_LAYERS = layers(range(2))
DECIDE_LONGEST = 3
DECIDE_CAPS = range(0, 6)
DECIDE_LABEL = (
    f"encoding = decide on every stack of <= {DECIDE_LONGEST} layers (4 kinds x budgets 0..1), every verdict "
    f"list up to what decide reads, caps {DECIDE_CAPS.start}..{DECIDE_CAPS.stop - 1}"
)


def decide_cases() -> Iterator[tuple[m.Stack, tuple[m.Verdict, ...], int]]:
    for stack in stacks(DECIDE_LAYERS, DECIDE_LONGEST):
        for verdicts in canonical_lists(len(stack), DECIDE_LAYERS):
            for cap in DECIDE_CAPS:
                yield stack, verdicts, cap


def decision_lemma() -> Evidence:
    """Induction on the walk of decide, then its exit: size after <= max(cap, n) and <= n + 1."""
    n, i, kept, cap, tag, broke = z3.Ints("n i kept cap tag broke")
    k2, i2 = z3.Ints("kept2 i2")
    inv = z3.And(0 <= kept, kept <= i, i <= n)
    base = prove(z3.Implies(z3.And(n >= 0, i == 0, kept == 0), inv), label="walk base: nothing asked, 0 <= kept <= i <= n")
    passes = z3.Or(z3.And(tag == TAG_CODES[m.DEFER], k2 == kept + 1), z3.And(tag == TAG_CODES[m.LEAVE], k2 == kept))
    step = prove(
        z3.Implies(z3.And(inv, i < n, passes, i2 == i + 1), z3.And(0 <= k2, k2 <= i2, i2 <= n)),
        label="walk step: one more layer defers or leaves",
    )
    deciding = z3.Or([tag == TAG_CODES[t] for t in oracle.DECIDING])
    exits = z3.Or(z3.And(i == n, tag == NONE_CODE), z3.And(i < n, deciding))
    size = decide_size(n, i, kept, tag, broke, cap, Z3)
    bound = z3.If(cap > n, cap, n)
    exit_proof = prove(
        z3.Implies(z3.And(inv, exits, z3.Or(broke == 0, broke == 1)), z3.And(size <= bound, size <= n + 1, size >= 0)),
        label="exit: the size after a decision is at most max(cap, n) and n + 1, for every n, cap and verdict",
    )
    return all_of(induction(base, step, label="the layers decide walks"), exit_proof)


@law(
    "dir_stack_bounded",
    "S5.1",
    "A decision never grows the stack past its cap: after it, the stack has at most max(cap, its size before) layers.",
    PROVED,
)
def dir_stack_bounded() -> Evidence:
    agreement = bounded(decide_cases(), lambda case: agrees(*case), label=DECIDE_LABEL)

    def hunt(stack: m.Stack, verdicts: tuple[m.Verdict, ...], cap: int, junk: tuple[m.Verdict, ...]) -> bool:
        decided = m.decide(stack, verdicts, cap)
        if len(decided.stack) > max(cap, len(stack)):
            return False
        agrees(stack, verdicts, cap)
        i, _, tag, _ = _walk(stack, verdicts)
        read = tuple(verdicts[: i + 1]) if tag != NONE_CODE else verdicts[: len(stack)]
        if tag == NONE_CODE:
            read = read + (m.Verdict(m.DEFER),) * (len(stack) - len(read))
        if m.decide(stack, read + junk, cap) != decided:  # what follows the deciding verdict is never read
            raise LawFailed(f"decide read a verdict after the deciding one: {stack!r} {verdicts!r}")
        return True

    more = examples(hunt, stack=stack_st, verdicts=verdicts_st, cap=cap_st, junk=verdicts_st)
    return also(decision_lemma(), agreement, more)


# -- the loop ----------------------------------------------------------------------------------------

LOOP_LAYERS = layers(range(2))
LOOP_PUSHES = (m.Layer(m.REMINDER, 0), m.Layer(m.REMINDER, 1), m.Layer(m.FORCED, 1))
LOOP_LONGEST = 2
LOOP_STEPS = range(0, 4)
LOOP_CAPS = range(1, 5)
LOOP_LABEL = (
    f"encoding = tick on every loop reachable from a stack of <= {LOOP_LONGEST} layers (4 kinds x budgets 0..1), "
    f"caps {LOOP_CAPS.start}..{LOOP_CAPS.stop - 1}, global budgets {LOOP_STEPS.start}..{LOOP_STEPS.stop - 1}, "
    "every verdict list at every step (pushes: reminder 0/1, forced 1)"
)

LoopState = tuple[m.Loop, int, int, int, int]  # (loop, n, ticks so far capped at n + 2, cap, start size)


def loop_initial() -> Iterator[LoopState]:
    for cap in LOOP_CAPS:
        for stack in stacks(LOOP_LAYERS, LOOP_LONGEST):
            if len(stack) > cap:
                continue
            for n in LOOP_STEPS:
                yield m.start(stack, n), n, 0, cap, len(stack)


def tick_agrees(loop: m.Loop, verdicts: tuple[m.Verdict, ...], cap: int, after: m.Loop) -> bool:
    decided = m.decide(loop.stack, verdicts, cap)
    outcome = OUTCOME_CODES[decided.outcome]
    ended, steps, size = tick_encoding(loop.end != "", loop.steps, len(loop.stack), outcome, len(decided.stack), PY)
    if (after.end != "", after.steps, len(after.stack)) != (ended, steps, size):
        raise LawFailed(f"the tick encoding disagrees with tick on {loop!r} {verdicts!r} cap {cap}: {after!r}")
    if loop.end != "" and after != loop:
        raise LawFailed(f"a tick of an ended loop changed it: {loop!r} -> {after!r}")
    return True


def loop_step(state: LoopState) -> Iterator[tuple[object, LoopState]]:
    loop, n, ticks, cap, size = state
    for verdicts in canonical_lists(len(loop.stack), LOOP_PUSHES):
        after, _ = m.tick(loop, verdicts, cap)
        tick_agrees(loop, verdicts, cap, after)
        yield verdicts, (after, n, min(ticks + 1, n + 2), cap, size)


def _loop_invariant(state: LoopState) -> bool:
    """dir_loop_stack_bounded and dir_loop_ends on every state of the search."""
    loop, n, ticks, cap, start = state
    return len(loop.stack) <= max(cap, start) and (ticks < n + 1 or loop.end != "")


@functools.cache
def loop_agreement() -> Evidence:
    """One search serves the three loop laws: the tick encoding agrees with the model on every
    transition, an ended loop stays (tick_agrees), and both loop invariants hold on every state."""
    return explore(loop_initial(), loop_step, _loop_invariant, label=LOOP_LABEL)


def hunt_loop(stack: m.Stack, steps: int, cap: int, script: tuple[tuple[m.Verdict, ...], ...]) -> tuple[tuple[m.Loop, str], ...]:
    loop = m.start(stack, steps)
    ticks = m.run(loop, script, cap)
    previous = loop
    for verdicts, (current, _) in zip(script, ticks):
        tick_agrees(previous, verdicts, cap, current)
        previous = current
    return ticks


def _tick_vars() -> tuple[Any, ...]:
    steps, size, decided, outcome = z3.Ints("steps size decided outcome")
    ended = z3.Bool("ended")
    return ended, steps, size, decided, outcome


@law(
    "dir_loop_stack_bounded",
    "S5.1",
    "Whatever every layer says at every step, the loop's stack never grows past the cap (or past its start size).",
    PROVED,
)
def dir_loop_stack_bounded() -> Evidence:
    ended, steps, size, decided, outcome = _tick_vars()
    start, cap = z3.Ints("start cap")
    bound = z3.If(cap > start, cap, start)
    base = prove(z3.Implies(size == start, size <= bound), label="tick 0: the start stack")
    _, _, size_after = tick_encoding(ended, steps, size, outcome, decided, Z3)
    lemma = decided <= z3.If(cap > size, cap, size)  # dir_stack_bounded
    step = prove(
        z3.Implies(z3.And(size <= bound, size >= 0, lemma, z3.Or([outcome == c for c in OUTCOME_CODES.values()])), size_after <= bound),
        label="tick k to k + 1, with the decision lemma",
    )
    proof = all_of(induction(base, step, label="ticks"), decision_lemma())

    agreement = loop_agreement()

    def hunt(stack: m.Stack, steps: int, cap: int, script: tuple[tuple[m.Verdict, ...], ...]) -> bool:
        return all(len(loop.stack) <= max(cap, len(stack)) for loop, _ in hunt_loop(stack, steps, cap, script))

    more = examples(hunt, stack=stack_st, steps=steps_st, cap=cap_st, script=script_st)
    return also(proof, agreement, more).with_production(all_of(production_loop(), production_sessions()))


@law(
    "dir_loop_ends",
    "S5.3",
    "The loop ends (gives control back or fails) after at most n + 1 steps, n its global budget, whatever every layer says.",
    PROVED,
)
def dir_loop_ends() -> Evidence:
    ended, steps, size, decided, outcome = _tick_vars()
    ended_after, steps_after, _ = tick_encoding(ended, steps, size, outcome, decided, Z3)
    rank = z3.If(ended, 0, steps + 1)
    rank_after = z3.If(ended_after, 0, steps_after + 1)
    any_outcome = z3.Or([outcome == c for c in OUTCOME_CODES.values()])
    ranking = prove(
        z3.Implies(z3.And(steps >= 0, any_outcome), z3.And(steps_after >= 0, rank_after >= 0, z3.If(ended, rank_after == rank, rank_after <= rank - 1))),
        label="ranking: steps + 1 while running, 0 once ended, drops by >= 1 at each tick of a running loop",
    )
    n, k, r, r2 = z3.Ints("n k r r2")
    base = prove(z3.Implies(z3.And(n >= 0, r == n + 1), r <= z3.If(n + 1 > 0, n + 1, 0)), label="k = 0: rank n + 1")
    step = prove(
        z3.Implies(
            z3.And(n >= 0, k >= 0, r >= 0, r <= z3.If(n + 1 - k > 0, n + 1 - k, 0), z3.If(r == 0, r2 == 0, z3.And(r2 >= 0, r2 <= r - 1))),
            r2 <= z3.If(n - k > 0, n - k, 0),
        ),
        label="k to k + 1: rank <= max(0, n + 1 - k)",
    )
    end = prove(
        z3.Implies(z3.And(n >= 0, k == n + 1, r >= 0, r <= z3.If(n + 1 - k > 0, n + 1 - k, 0)), r == 0),
        label="after n + 1 ticks the rank is 0: the loop has ended",
    )
    proof = all_of(ranking, induction(base, step, label="the tick number k"), end)

    agreement = loop_agreement()

    def hunt(stack: m.Stack, steps: int, cap: int, script: tuple[tuple[m.Verdict, ...], ...]) -> bool:
        ticks = hunt_loop(stack, steps, cap, script)
        return all(loop.end != "" for loop, _ in ticks[steps + 1 :]) and all(
            loop.steps <= steps for loop, _ in ticks
        )

    small = st.integers(0, 14)
    more = examples(hunt, stack=stack_st, steps=small, cap=cap_st, script=script_st)
    return also(proof, agreement, more).with_production(all_of(production_loop(), production_sessions()))


@law(
    "dir_end_is_final",
    "S5.3",
    "A tick of an ended loop leaves it exactly as it ended, whatever the layers say.",
    PROVED,
)
def dir_end_is_final() -> Evidence:
    ended, steps, size, decided, outcome = _tick_vars()
    ended_after, steps_after, size_after = tick_encoding(ended, steps, size, outcome, decided, Z3)
    proof = prove(
        z3.Implies(ended, z3.And(ended_after, steps_after == steps, size_after == size)),
        label="the tick of an ended loop is the identity, for every stack size, budget, decision and outcome",
    )
    agreement = loop_agreement()

    def hunt(stack: m.Stack, steps: int, cap: int, script: tuple[tuple[m.Verdict, ...], ...]) -> bool:
        loop = m.start(stack, steps)
        previous = loop
        for current, rule in m.run(loop, script, cap):
            if previous.end != "" and (current != previous or rule != "ended"):
                return False
            previous = current
        return True

    more = examples(hunt, stack=stack_st, steps=steps_st, cap=cap_st, script=script_st)
    return also(proof, agreement, more)


# -- the tree document ---------------------------------------------------------------------------------

TREE_LAYERS = layers(range(3))
TREE_LONGEST = 3
TREE_LABEL = f"every stack of <= {TREE_LONGEST} layers (4 kinds x budgets 0..2)"
MALFORMED_LONGEST = 2


def pairs(stack: m.Stack) -> list[tuple[int, int]]:
    return [(layer.kind, layer.budget) for layer in stack]


def production_document(stack: m.Stack) -> Any:
    from eukhe.directors.document import to_document
    from eukhe.directors.stack import KIND_ORDER
    from eukhe.directors.stack import Layer as PLayer

    return to_document([PLayer(KIND_ORDER[layer.kind], layer.budget) for layer in stack])


def production_reads(value: Any) -> list[tuple[int, int]] | None:
    from eukhe.directors.document import DocumentError, from_document
    from eukhe.directors.stack import KIND_ORDER

    try:
        return [(KIND_ORDER.index(layer.kind), layer.budget) for layer in from_document(value)]
    except DocumentError:
        return None


def model_reads(value: Any) -> list[tuple[int, int]] | None:
    decoded = m.decode(m.from_json(value))
    return None if decoded is None else pairs(decoded)


def judged(value: Any) -> bool:
    """Model and production read a document as the oracle says: its stack, or unsound."""
    want = oracle.stack(value) if oracle.sound(value) else None
    got_model, got_production = model_reads(value), production_reads(value)
    if got_model != want or got_production != want:
        raise LawFailed(f"document {value!r}: oracle {want!r}, model {got_model!r}, production {got_production!r}")
    return True


def with_data(stack: m.Stack) -> dict[str, Any]:
    """A sound document of the stack with kind data on its layers (the model ignores data)."""
    doc = oracle.document(pairs(stack))
    for index, layer in enumerate(doc["layers"]):
        layer["data"] = [{}, {"text": "go on"}, {"tool": "bash", "tries": 1, "nested": {"a": [1, 2.5, None, True]}}][index % 3]
    return doc


def malformed_cases() -> Iterator[tuple[str, Any]]:
    for stack in stacks(layers(range(2)), MALFORMED_LONGEST):
        yield from oracle.malformed(oracle.document(pairs(stack)))
        yield from oracle.malformed(with_data(stack))


json_st = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=4)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["budget", "kind", "data", "layers", "version", "x"]), inner, max_size=4)),
    max_leaves=12,
)


@law(
    "dir_encode_sound",
    "S5.8",
    "The stack in the tree is a sound tree (the oracle's shape), model and production write the same tree, and every tree that is not sound is refused by both.",
    BOUNDED,
)
def dir_encode_sound() -> Evidence:
    def encodes(stack: m.Stack) -> bool:
        tree = m.encode(stack)
        written = json.loads(m.show(tree))
        if not oracle.sound(written) or written != oracle.document(pairs(stack)):
            return False
        return production_document(stack) == written and judged(written) and judged(with_data(stack))

    valid = bounded(stacks(TREE_LAYERS, TREE_LONGEST), encodes, label=TREE_LABEL + ", model and production, with and without kind data")
    refused = bounded(
        malformed_cases(),
        lambda case: not oracle.sound(case[1]) and judged(case[1]),
        label=f"every single flaw at every depth (unknown key, missing field, wrong type, unknown version, huge and negative budget, "
        f"non-finite data) of every document of <= {MALFORMED_LONGEST} layers, with and without data",
    )

    def refuses_any(value: Any) -> bool:
        return judged(value)

    def never_written() -> bool:
        """production refuses to make a document it would not read: nothing invalid is committed."""
        from eukhe.directors.document import DocumentError, to_document
        from eukhe.directors.stack import Layer as PLayer
        from eukhe.directors.stack import LayerKind

        for layer in (PLayer(LayerKind.GOAL, -1), PLayer(LayerKind.GOAL, oracle.MAX_BUDGET + 1), PLayer(LayerKind.REMINDER, 1, {"x": float("nan")})):
            try:
                to_document([layer])
            except DocumentError:
                continue
            raise LawFailed(f"production made a document of {layer!r}")
        return True

    if not never_written():
        raise LawFailed("unreachable")

    more = all_of(examples(encodes, stack=stack_st), examples(refuses_any, value=json_st))
    return also(all_of(valid, refused), more)


@law(
    "dir_resume_restores",
    "S5.8",
    "A resume reads back exactly the stack the tree holds: the stored bytes of the document decode to the stack (model and production).",
    BOUNDED,
    derivation="A resume reads the stored document: stated on encode, the bytes of the stored value, and decode.",
)
def dir_resume_restores() -> Evidence:
    def prop(stack: m.Stack) -> bool:
        stored = m.show(m.encode(stack))
        if model_reads(json.loads(stored)) != pairs(stack):
            return False
        written = json.dumps(production_document(stack), sort_keys=True, separators=(",", ":"))
        return production_reads(json.loads(written)) == pairs(stack)

    proof = bounded(stacks(TREE_LAYERS, TREE_LONGEST), prop, label=TREE_LABEL + ", model and production")
    more = examples(prop, stack=stack_st)
    return also(all_of(proof, store_resume()), more)


STORE_LONGEST = 2
STORE_LABEL = f"every stack of <= {STORE_LONGEST} layers (4 kinds x budgets 0..1) through the production session store"
HISTORY_LAYERS: tuple[m.Layer, ...] = layers(range(2))


def store_resume() -> Evidence:
    """Commit each stack as eukhe.directors, close, reopen (a resume): the stack read back is it."""
    import tempfile
    from pathlib import Path

    from eukhe.directors.hooks import Directors
    from eukhe.session import Store

    every = list(stacks(HISTORY_LAYERS, STORE_LONGEST))
    with tempfile.TemporaryDirectory(dir=_FAST_TMP) as root:
        store = Store(Path(root))
        with store.create("resume"):
            pass
        for stack in every:
            with store.open("resume") as session:
                session.conversation("main").commit(documents={"eukhe.directors": production_document(stack)})
            with store.open("resume", writer=False) as session:
                read = [(layer.kind, layer.budget) for layer in Directors(session.conversation("main")).stack()]
            if [(KIND_NAMES.index(k.value), b) for k, b in read] != pairs(stack):
                raise LawFailed(f"resume read {read!r}, committed {stack!r}")
    return Evidence(BOUNDED, f"store: {STORE_LABEL}, each committed, closed and reopened ({len(every):,} resumes)")


KIND_NAMES = list(oracle.KINDS)
_FAST_TMP = "/dev/shm" if __import__("os").path.isdir("/dev/shm") else None


def histories() -> Iterator[tuple[tuple[int, m.Stack | None], ...]]:
    """Histories of commits (parent index, the stack it commits or None: a commit that does not
    touch the document): every shape of up to 4 commits with every parent choice, stacks from a
    small set."""
    few: tuple[m.Stack | None, ...] = (None, (), (m.Layer(m.GOAL, 1),), (m.Layer(m.AUTONOMOUS, 0), m.Layer(m.REMINDER, 1)))
    for length in range(1, 5):
        parent_choices = [range(-1, 0)] + [range(0, j) for j in range(1, length)]
        for parents in itertools.product(*parent_choices):
            for picks in itertools.product(few, repeat=length):
                yield tuple(zip(parents, picks))


def expected(history: tuple[tuple[int, m.Stack | None], ...], entry: int) -> list[tuple[int, int]]:
    """The judge: the stack committed nearest at or above the entry (walked by the law itself)."""
    at = entry
    while at >= 0:
        parent, stack = history[at]
        if stack is not None:
            return pairs(stack)
        at = parent
    return []


def model_rewinds(history: tuple[tuple[int, m.Stack | None], ...]) -> bool:
    commits = tuple(m.Commit(p, None if s is None else m.encode(s)) for p, s in history)
    for entry in range(len(history)):
        got = m.rewind(commits, entry)
        if got is None or pairs(got) != expected(history, entry):
            raise LawFailed(f"model rewind of {history!r} to {entry}: {got!r}")
    return True


def production_rewinds(cases: list[tuple[tuple[int, m.Stack | None], ...]]) -> int:
    """The same histories on the session store: each commit made after a rewind to its parent
    (a branch), then a rewind to every commit reads the stack as of it."""
    import tempfile
    from pathlib import Path

    from eukhe.directors.hooks import Directors
    from eukhe.session import Store, user

    rewinds = 0
    with tempfile.TemporaryDirectory(dir=_FAST_TMP) as root:
        store = Store(Path(root))
        for number, history in enumerate(cases):
            with store.create(f"h{number}") as session:
                main = session.conversation("main")
                base = main.commit([user("start")])[-1]
                ids: list[int] = []
                for parent, stack in history:
                    main.rewind(base if parent < 0 else ids[parent])
                    if stack is None:
                        ids.append(main.commit([user("no change")])[-1])
                    else:
                        ids.append(main.commit(documents={"eukhe.directors": production_document(stack)})[-1])
                directors = Directors(main)
                for entry in range(len(history)):
                    main.rewind(ids[entry])
                    read = [(KIND_NAMES.index(layer.kind.value), layer.budget) for layer in directors.stack()]
                    rewinds += 1
                    if read != expected(history, entry):
                        raise LawFailed(f"production rewind of {history!r} to {entry}: {read!r}")
    return rewinds


# -- dir_rewind_restores: the walk to the nearest commit, decode after encode ----------------------
#
# Encodings (each checked against the model on the bounded histories and stacks, the malformed
# documents and Hypothesis's values): encode's layers are the left fold of ``_enc_layer_step``;
# decode is ``_dec_wrapper`` (the document's keys and version) then the left fold of
# ``_dec_step`` over the layers; as_of is the loop of ``_walk_step``. The proofs run these steps
# on abstract states (``Prefix``: a stack or list known by what was appended to it; ``_Budget``:
# an int in 0..MAX_BUDGET whose comparisons z3 decides; opaque tokens).


class _Budget(int):
    """A budget b with 0 <= b <= MAX_BUDGET (the oracle's), nothing else known: a comparison with
    a constant is answered only when z3 proves the answer for every such b; any other use raises."""

    _b = z3.Int("b")
    _range = z3.And(_b >= 0, _b <= oracle.MAX_BUDGET)

    def _decide(self, claim: Any, text: str) -> bool:
        for answer in (True, False):
            solver = z3.Solver()
            solver.set("timeout", 10_000)
            solver.add(self._range, z3.Not(claim) if answer else claim)
            if solver.check() == z3.unsat:
                return answer
        raise LawFailed(f"a budget in 0..MAX_BUDGET does not decide {text}")

    def __lt__(self, other: object) -> bool:
        return self._decide(self._b < int(other), f"b < {other}")  # type: ignore[call-overload]

    def __gt__(self, other: object) -> bool:
        return self._decide(self._b > int(other), f"b > {other}")  # type: ignore[call-overload]

    def __le__(self, other: object) -> bool:
        return self._decide(self._b <= int(other), f"b <= {other}")  # type: ignore[call-overload]

    def __ge__(self, other: object) -> bool:
        return self._decide(self._b >= int(other), f"b >= {other}")  # type: ignore[call-overload]

    def __eq__(self, other: object) -> bool:
        if other is self:
            return True
        raise LawFailed("a budget was compared for equality")

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "<budget in 0..MAX_BUDGET>"


def _no_arithmetic(op: str) -> Callable[..., Any]:
    def no(self: _Budget, *args: object) -> Any:
        raise LawFailed(f"a budget was used in {op}: only comparisons are decided")

    return no


for _op in ("__add__ __radd__ __sub__ __rsub__ __mul__ __rmul__ __neg__ __index__ __int__ __float__ __bool__ __str__ __format__ "
            "__and__ __or__ __xor__ __lshift__ __rshift__ __mod__ __floordiv__ __truediv__ __pow__").split():
    setattr(_Budget, _op, _no_arithmetic(_op))


def _enc_layer_step(layers: Any, layer: m.Layer) -> Any:
    return layers + (m.encode_layer(layer),)


def _enc_encode(stack: m.Stack) -> m.Obj:
    layers: Any = ()
    for layer in stack:
        layers = _enc_layer_step(layers, layer)
    return m.Obj((("layers", layers), ("version", m.VERSION)))


def _dec_wrapper(tree: Any) -> tuple[bool, Any]:
    if not isinstance(tree, m.Obj) or sorted(m.keys(tree)) != ["layers", "version"]:
        return False, None
    _, version = m.field(tree, "version")
    _, layers = m.field(tree, "layers")
    if isinstance(version, bool) or version != m.VERSION or not isinstance(layers, tuple):
        return False, None
    return True, layers


def _dec_step(stack: Any, item: Any) -> Any:
    if stack is None:
        return None
    layer = m.decode_layer(item)
    return None if layer is None else stack + (layer,)


def _enc_decode(tree: Any) -> Any:
    ok, layers = _dec_wrapper(tree)
    if not ok:
        return None
    stack: Any = ()
    for item in layers:
        stack = _dec_step(stack, item)
    return stack


def _walk_step(history: Any, at: int) -> tuple[str, Any]:
    commit = history[at]
    return ("stop", commit.tree) if commit.tree is not None else ("go", commit.parent)


def _enc_as_of(history: m.History, entry: int) -> Any:
    at = entry
    while at >= 0:
        kind, next_ = _walk_step(history, at)
        if kind == "stop":
            return next_
        at = next_
    return None


def _codec_agrees(tree: Any) -> bool:
    if _enc_decode(tree) != m.decode(tree):
        raise LawFailed(f"the decode encoding differs from m.decode on {tree!r}")
    return True


def _rewind_agrees(history: tuple[tuple[int, m.Stack | None], ...]) -> bool:
    commits = tuple(m.Commit(p, None if s is None else m.encode(s)) for p, s in history)
    for entry in range(len(history)):
        if _enc_as_of(commits, entry) != m.as_of(commits, entry):
            raise LawFailed(f"the walk's encoding differs from m.as_of on {history!r} at {entry}")
    for _, s in history:
        if s is not None and _enc_encode(s) != m.encode(s):
            raise LawFailed(f"the encode encoding differs from m.encode on {s!r}")
    return True


@functools.lru_cache(maxsize=None)
def _rewind_proof() -> Evidence:
    """decode(encode(s)) = s for every stack of budgets in 0..MAX_BUDGET, of any length: induction on
    the stack (encode appends a layer's tree, decode reads it back, from any prefix: every kind, a
    symbolic budget); the wrapper reads back the layers of the document encode makes. The walk:
    as_of and the judge both start at the entry and, at every commit, both stop (the commit sets a
    document: a tree exactly when the judge's history has a stack) or both go to its parent; the
    parent is before the commit, so the index drops at every step (z3) and the walk ends."""
    kinds = Finite("layer kinds, each with a budget b in 0..MAX_BUDGET whose comparisons z3 decides", tuple(range(len(m.KIND_NAMES))))

    def layer_step(kind: int) -> bool:
        budget: Any = _Budget(0)
        layer = m.Layer(kind, budget)
        encoded = _enc_layer_step(Prefix("E(s[:i])"), layer)
        tree = m.encode_layer(layer)
        return bool(encoded == Prefix("E(s[:i])", (tree,)) and _dec_step(Prefix("s[:i]"), tree) == Prefix("s[:i]", (layer,)))

    empty = exhaust(domain(Finite("the empty stack", ((),))), lambda s: m.decode(m.encode(s)) == s and _enc_encode(s) == m.encode(s))
    stack = induction(empty, exhaust(domain(kinds), layer_step), label="the stack (encode and decode fold one layer at a time)")

    spy: Any = type("SpyLayers", (tuple,), {"__iter__": lambda self: (_ for _ in ()).throw(LawFailed("the wrapper read the layers"))})()
    wrapper = exhaust(domain(Finite("documents encode makes, layers opaque", (m.Obj((("layers", spy), ("version", m.VERSION))),))),
                      lambda tree: _dec_wrapper(tree)[0] is True and _dec_wrapper(tree)[1] is spy)

    touches = Finite("a commit (sets the document, or not)", ("sets", "not"))

    def walk(kind: str) -> bool:
        tree: Any = Opaque("tree") if kind == "sets" else None
        parent: Any = Opaque("parent")
        got = _walk_step((m.Commit(parent, tree),), 0)
        return got == (("stop", tree) if kind == "sets" else ("go", parent))

    at, parent = z3.Ints("at parent")
    ranking = timed(z3.Implies(z3.And(at >= 0, parent < at), z3.And(at + 1 > parent + 1, at + 1 >= 1)),
                    label="the walk's rank at + 1 drops at every step to a parent before the commit and stays >= 0")
    return all_of(stack, wrapper, exhaust(domain(touches), walk), ranking)


def _rewind_check() -> Evidence:
    trees = [m.encode(s) for s in stacks(TREE_LAYERS, TREE_LONGEST)] + [m.from_json(v) for _, v in malformed_cases()]
    return also(
        all_of(bounded(trees, _codec_agrees, label=f"encoding = m.decode: {TREE_LABEL} and every malformed document of <= {MALFORMED_LONGEST} layers"),
               bounded(histories(), _rewind_agrees, label="encoding = m.as_of, m.encode: every history of 1..4 commits over 4 document states")),
        examples(lambda value: _codec_agrees(m.from_json(value)), value=json_st),
    )


@law(
    "dir_rewind_restores",
    "S5.8",
    "A rewind of a history of sound trees to the entry of a stack restores that stack, exactly (model and production).",
    PROVED,
    derivation="A rewind moves the head to an earlier entry; documents read as of it: the nearest commit at or above it (S5.8, S1 derived).",
)
def dir_rewind_restores() -> Evidence:
    """Proved for the model, for every history and stack of budgets in 0..MAX_BUDGET
    (``_rewind_proof``): as_of walks from the entry to the nearest commit that sets the document,
    as the judge does (the same stop-or-parent step; the index drops at every step, z3), and
    decode(encode(s)) = s by induction on the stack (every kind, a budget z3 keeps symbolic). The
    encodings are checked against m.decode, m.encode and m.as_of (``_rewind_check``); the bounded
    run, the hunt and production's rewinds on a real session store stay."""
    every = list(histories())
    model_part = bounded(every, model_rewinds, label="every history of 1..4 commits (every parent choice: branches) over 4 document states")
    sample = every[:: max(1, len(every) // 60)]
    count = production_rewinds(sample)
    production = Evidence(BOUNDED, f"store: {len(sample):,} of those histories committed on branches of a real session, {count:,} rewinds")

    history_st = st.lists(st.tuples(st.integers(0, 30), st.one_of(st.none(), stack_st)), min_size=1, max_size=10).map(
        lambda items: tuple((-1 if i == 0 else p % i, s) for i, (p, s) in enumerate(items))
    )
    more = examples(model_rewinds, history=history_st)
    return also(also(_rewind_proof(), _rewind_check()), model_part, more).with_production(production)


# -- production under the loop laws: the Directors of a real session ------------------------------------


def _session_script(rng: random.Random) -> list[tuple[str, Any]]:
    script: list[tuple[str, Any]] = [("goal", "first goal")] if rng.random() < 0.6 else []
    script.append(("input", "start"))
    if rng.random() < 0.3:  # a goal that only answers: the progress check pauses it (S5.8)
        script += [("reply", {"text": "waiting for the build", "calls": [], "note": ""}) for _ in range(6)]
    for _ in range(rng.randint(4, 26)):
        roll = rng.random()
        if roll < 0.08:
            script.append(("input", "more"))
        elif roll < 0.16:
            script.append(("goal", rng.choice(["ship it", "fix the build", "é"])))
        elif roll < 0.22:
            script.append(("goal_status", rng.choice(["active", "paused", "complete", "cleared", "bogus", "budget_limited", "failed"])))
        elif roll < 0.28:
            script.append(("autonomous", rng.choice([True, True, False, "stop"])))
        elif roll < 0.40:
            script.append(("command", rng.choice(["/remind check the tests", "/force bash", "/force bash --tries 2", "/force read --tries 0",
                                                   "/remind", "/force", "/force a b", "/force x --tries", "/force x --tries -1", "/bogus", "/remindx",
                                                   "/force 'unclosed", "/forcex y", ""])))
        elif roll < 0.46:
            script.append(("push", rng.choice([{"kind": "reminder", "text": "r"}, {"kind": "forced", "tool": "bash", "tries": rng.choice([0, 1, 2, -1, True])},
                                               {"kind": "goal"}, {"kind": "forced", "tool": "read"}])))
        else:
            calls = [{"name": rng.choice(["bash", "read"]), "arguments": {"n": rng.randrange(3)}, "result": rng.choice(["ok", "fail"]),
                      "error": rng.random() < 0.3} for _ in range(rng.choice([0, 0, 1, 2]))]
            script.append(("reply", {"text": rng.choice(["done", "waiting for the build", "", " "]), "calls": calls,
                                     "note": rng.choice(["", "", "step"])}))
    return script


# Directed sessions (name, limits, script) for the verdicts the seeded scripts rarely reach (S5.4):
# an autonomous run that continues until autonomous.maxContinuations, stops at a gate, leaves when
# disabled and defers while a goal drives; a forced call pushed after the last request of a run
# (a "prior" reply: no request forced it), which continues the run while it has budget and then
# aborts with ForcedToolError::NotCalled; a continuation with no step left (directors.maxSteps 0);
# a new input with a forced layer on the stack; a cleared goal whose layer leaves.
_PRIOR = {"text": "done", "calls": [], "note": "", "prior": True}
_DONE = {"text": "done", "calls": [], "note": ""}
DIRECTED: tuple[tuple[str, tuple[int, int, int, int], list[tuple[str, Any]]], ...] = (
    ("autonomous run to its limit", (3, 6, 3, 2), [("autonomous", True), ("input", "go")] + [("reply", _DONE)] * 4),
    ("autonomous gate stops", (3, 6, 3, 4), [("autonomous", "stop"), ("input", "go"), ("reply", _DONE)]),
    ("autonomous disabled leaves", (3, 6, 3, 4), [("autonomous", True), ("input", "go"), ("autonomous", False), ("reply", _DONE)]),
    ("autonomous defers to a goal", (3, 6, 3, 4), [("goal", "ship it"), ("autonomous", True), ("input", "go"), ("goal_status", "cleared"),
                                                   ("reply", _DONE), ("goal_status", "active"), ("reply", _DONE)]),
    ("forced after the last request", (3, 6, 3, 4), [("input", "go"), ("command", "/force bash"), ("reply", _PRIOR), ("reply", _PRIOR),
                                                     ("command", "/remind check"), ("command", "/force read"), ("input", "again"),
                                                     ("reply", _PRIOR), ("reply", _PRIOR)]),
    ("no step left", (3, 0, 3, 4), [("command", "/force bash"), ("input", "go"), ("reply", _PRIOR)]),
)


def run_session(seed: int, root: Any, directed: tuple[str, tuple[int, int, int, int], list[tuple[str, Any]]] | None = None) -> tuple[int, int]:
    """One seeded script (or a directed one) through eukhe.directors.hooks on a real session
    store; checks the loop laws on production with the oracle's numbers and the verdicts of
    S5.4 from the session state. Returns (steps, documents checked)."""
    from eukhe.directors.commands import CommandError, host_push, session_command
    from eukhe.directors.hooks import DirectorLimits, Directors, ForcedToolError, GoalError, LimitsError, PushRefused, Reply
    from eukhe.session import Store, assistant, row, tool_call, tool_result, user

    rng = random.Random(f"director-session-{seed}")
    raw = [rng.choice([0, 1, 2, 3, 8, -1, 2**63, True]) for _ in range(4)]
    try:
        DirectorLimits(*raw)
        if not all(type(v) is int and 0 <= v <= oracle.MAX_BUDGET for v in raw):
            raise LawFailed(f"limits {raw!r} accepted")
    except LimitsError:
        if all(type(v) is int and 0 <= v <= oracle.MAX_BUDGET for v in raw):
            raise LawFailed(f"limits {raw!r} refused") from None
    settings = {"directors.stackCap": rng.randint(0, 3), "directors.maxSteps": rng.randint(0, 6), "directors.stallSteps": rng.randint(0, 3),
                "autonomous.maxContinuations": rng.randint(0, 4)}
    if directed is not None:
        settings = dict(zip(("directors.stackCap", "directors.maxSteps", "directors.stallSteps", "autonomous.maxContinuations"), directed[1]))
    limits = DirectorLimits.of(settings.__getitem__)
    bound = oracle.full_cap(limits.stack_cap)
    steps = checked = 0
    with Store(root).create(f"s{seed}") as session:
        main = session.conversation("main")
        directors = Directors(main, limits)
        from eukhe.directors.stack import Layer as PLayer
        from eukhe.directors.stack import LayerKind

        attempts: list[Callable[[], object]] = [lambda: directors.push(PLayer(LayerKind.GOAL, 1)), lambda: directors.remind("  "),
                                                 lambda: directors.force(" "), lambda: directors.force("x", tries=-1)]
        for refused in attempts:
            try:
                refused()
            except PushRefused:
                continue
            raise LawFailed("a push that S5.6/S5.7 refuse was made")
        run_steps = 0
        calls = 0
        for number, (key, body) in enumerate(_session_script(rng) if directed is None else directed[2]):
            if key == "input":
                main.commit([user(body)])
                directors.begin(f"run-{number}")
                run_steps = 0
            elif key == "goal":
                directors.set_goal(body, f"goal-{number}")
            elif key == "goal_status":
                before = main.document("eukhe.goal")
                try:
                    directors.set_goal_status(body)
                    if body not in ("active", "paused", "budget_limited", "complete", "failed", "cleared") or before is None:
                        raise LawFailed(f"goal status {body!r} stored")
                except GoalError:
                    if main.document("eukhe.goal") != before:
                        raise LawFailed("a refused goal status changed the goal") from None
            elif key == "autonomous":
                if body == "stop":
                    directors.set_autonomous(True, stop="a gate stopped the run")
                else:
                    directors.set_autonomous(body)
                directors.after_response(called=True)  # no request was forced: nothing to record
            elif key == "command":
                try:
                    session_command(directors, body)
                except (CommandError, PushRefused):
                    pass
            elif key == "push":
                host_push(directors, body)
            else:
                forced = None if body.get("prior") else directors.before_request()
                made = []
                for call in body["calls"]:
                    calls += 1
                    made.append(call["name"])
                    main.commit([tool_call({"id": f"c{calls}", "name": call["name"], "arguments": call["arguments"]}),
                                 tool_result({"call_id": f"c{calls}", "text": call["result"], "is_error": call["error"]})])
                if body["note"]:
                    main.commit([row("eukhe.progress_note", {"text": body["note"], "accepted": True})])
                main.commit([assistant({"text": body["text"]})])
                if forced is not None:
                    forcing = sum(1 for layer in directors.stack() if layer.kind.value == "forced")
                    try:
                        if directors.after_response(called=forced in made):
                            continue
                    except ForcedToolError:
                        left = sum(1 for layer in directors.stack() if layer.kind.value == "forced")
                        if left != forcing - 1:
                            raise LawFailed("a forced call that was never made kept its layer after NotCalled (S5.4)") from None
                        continue
                stack_before = directors.stack()
                goal_before, auto_before = directors.goal(), directors.autonomous()
                step = directors.on_yield(f"gen-{number}", Reply(body["text"], len(made)))
                _check_verdicts(step, stack_before, goal_before, auto_before, directors, limits)
                if any(v.startswith("reminder:") and v != "reminder:leave" and v != "reminder:defer" for v in step.verdicts):
                    raise LawFailed(f"a reminder decided on its own (S5.4: it leaves or waits): {step.verdicts}")
                if any("Goal paused" in r for r in step.rows):
                    _PAUSES[0] += 1
                again = directors.on_yield(f"gen-{number}", Reply(body["text"], len(made)))
                if (again.decision, again.rule) != (step.decision, step.rule) or again.committed:
                    raise LawFailed("a rerun of the same generation did not repeat its decision")
                steps += 1
                if step.decision.value == "continue":
                    run_steps += 1
                    if run_steps > limits.max_steps:
                        raise LawFailed(f"run continued {run_steps} times with directors.maxSteps {limits.max_steps}")
            document: Any = main.document("eukhe.directors")
            if document is not None:
                checked += 1
                if not oracle.sound(document) or len(document["layers"]) > bound:
                    raise LawFailed(f"seed {seed}: committed eukhe.directors {document!r} (cap {bound})")
    return steps, checked


def _check_verdicts(step: Any, stack_before: list[Any], goal: dict[str, Any] | None, auto: dict[str, Any] | None, directors: Any, limits: Any) -> None:
    """S5.4 on one committed step of production: each verdict as the session state says."""
    status = None if goal is None else goal.get("status")
    if step.committed and step.rule != "model_error":
        for verdict in step.verdicts:
            if verdict == "goal:leave" and status not in (None, "cleared"):
                raise LawFailed(f"the goal layer left with the goal {status} (S5.4: a cleared goal leaves)")
            if verdict == "autonomous:defer" and status != "active":
                raise LawFailed(f"the autonomous run deferred with no goal driving (goal {status}) (S5.4)")
            if verdict == "autonomous:leave" and auto is not None and auto.get("enabled") is True:
                raise LawFailed("an enabled autonomous run left (S5.4: a disabled run leaves)")
            if verdict == "autonomous:again" and (auto is None or auto.get("stop") or int(auto.get("used", 0)) >= int(auto.get("max", 0))):
                raise LawFailed(f"the autonomous run continued past its gate or autonomous.maxContinuations: {auto!r}")
    after = directors.autonomous()
    if after is not None and auto is not None:
        grew = int(after.get("used", 0)) - int(auto.get("used", 0))
        continued_by_auto = step.committed and step.decision.value == "continue" and "autonomous:again" in step.verdicts
        if grew != (1 if continued_by_auto else 0):
            raise LawFailed(f"a step moved autonomous.used by {grew} (S5.6: each continuation of the run uses one)")
        if int(after.get("used", 0)) > int(after.get("max", 0)):
            raise LawFailed(f"autonomous.used {after.get('used')} past autonomous.maxContinuations {after.get('max')}")
    if "forced:again" in step.verdicts and step.decision.value == "continue":
        tools = [str(layer.data.get("tool")) for layer in stack_before if layer.kind.value == "forced"]
        if not any(f"Call the tool {tool}." in (step.continuation or "") for tool in tools):
            raise LawFailed(f"a forced call continued the run without naming its tool: {step.continuation!r} (S5.4)")
    if "forced:again" in step.verdicts and step.rule == "again_no_budget":
        raise LawFailed("a forced call with no budget asked again instead of aborting with ForcedToolError::NotCalled (S5.4)")
    forced_before = sum(1 for layer in stack_before if layer.kind.value == "forced")
    forced_after = sum(1 for layer in directors.stack() if layer.kind.value == "forced")
    if step.committed and step.rule == "abort" and "forced:abort" in step.verdicts:
        if forced_after != forced_before - 1 - step.verdicts.count("forced:leave") or not any("ForcedToolError::NotCalled" in r for r in step.rows):
            raise LawFailed("a forced call with no budget aborted without its NotCalled row, or kept its layer (S5.4)")
        if not (step.error or "").startswith("ForcedToolError::NotCalled"):
            raise LawFailed(f"the abort of a forced call failed with {step.error!r}, not ForcedToolError::NotCalled")
    if step.rule == "no_step":
        kept = [(layer.kind.value, layer.budget) for layer in directors.stack()]
        if step.decision.value != "yield" or kept != [(layer.kind.value, layer.budget) for layer in stack_before]:
            raise LawFailed("a continuation with no step left spent a budget or did not yield (S5.3)")


SESSIONS = 40
_PAUSES = [0]


@functools.cache
def production_sessions() -> Evidence:
    import tempfile
    from pathlib import Path

    _PAUSES[0] = 0
    steps = checked = 0
    with tempfile.TemporaryDirectory(dir=_FAST_TMP) as root:
        for seed in range(SESSIONS):
            s, c = run_session(seed, Path(root))
            steps += s
            checked += c
        for number, directed in enumerate(DIRECTED):
            s, c = run_session(SESSIONS + number, Path(root), directed)
            steps += s
            checked += c
    return Evidence(
        BOUNDED,
        f"hooks: {SESSIONS} seeded and {len(DIRECTED)} directed sessions on a real store ({steps:,} steps, {checked:,} committed documents): every document sound "
        "and within stackCap + 2, no run continues past directors.maxSteps, a rerun repeats its decision, bad limits, pushes and goal "
        f"statuses refused; {_PAUSES[0]:,} goals paused by the progress check",
    )


def _p_layer(layer: m.Layer) -> Any:
    from eukhe.directors.stack import KIND_ORDER, Layer

    return Layer(KIND_ORDER[layer.kind], layer.budget)


def _p_verdicts(verdicts: tuple[m.Verdict, ...]) -> list[Any]:
    from eukhe.directors.stack import Tag, Verdict

    return [Verdict(Tag(v.tag)) if v.pushed is None else Verdict(Tag.STACK, _p_layer(v.pushed)) for v in verdicts]


def _p_pairs(stack: list[Any]) -> list[tuple[int, int]]:
    return [(KIND_NAMES.index(layer.kind.value), layer.budget) for layer in stack]


@functools.cache
def production_loop() -> Evidence:
    """production's decide and Loop.tick on the same enumerated domains as the model: the same
    stack, outcome and rule after every decision and every tick."""
    from eukhe.directors.stack import Loop, decide

    def same_decision(case: tuple[m.Stack, tuple[m.Verdict, ...], int]) -> bool:
        stack, verdicts, cap = case
        want = m.decide(stack, verdicts, cap)
        got = decide([_p_layer(x) for x in stack], _p_verdicts(verdicts), cap)
        return (_p_pairs(got.stack), got.outcome.value, got.rule) == (pairs(want.stack), want.outcome, want.rule)

    decisions = bounded(decide_cases(), same_decision, label="production decide = model decide on " + DECIDE_LABEL[len("encoding = decide on "):])

    def same_ticks(case: tuple[m.Stack, int, int, tuple[tuple[m.Verdict, ...], ...]]) -> bool:
        stack, steps, cap, script = case
        loop = Loop([_p_layer(x) for x in stack], steps)
        for (want, rule), verdicts in zip(m.run(m.start(stack, steps), script, cap), script):
            got = loop.tick(_p_verdicts(verdicts), cap)
            if (got, _p_pairs(loop.stack), loop.steps, loop.end) != (rule, pairs(want.stack), want.steps, want.end):
                return False
        return True

    ticks = examples(lambda stack, steps, cap, script: same_ticks((stack, steps, cap, script)), stack=stack_st, steps=steps_st, cap=cap_st, script=script_st)
    return all_of(decisions, ticks)
