"""Laws of the Director stack (control.md S5, law table of S5).

Proofs, about the code: spec.z3gen generates the z3 encodings of ``bend.director.decide``, of
``deferred_above`` (the layers above the deciding one that deferred, which decide keeps) and of
``tick`` from their source, each loop a recursive function z3 proved ends. Each proof is an
induction on a loop of that code, its step assuming the hypothesis at the states the loop's body
runs it again with (``successors``), and holds for every stack, verdict list, cap and budget:

- deferred_above keeps at most the layers above its position (induction on its walk up);
- decide leaves at most max(cap, len(stack)) layers and an outcome that is not empty (induction
  on its walk down the stack, with the deferred_above fact at the positions it asks it of);
- dir_stack_bounded is the first of those facts;
- dir_loop_stack_bounded: induction on ticks, each tick the generated tick with decide's facts;
- dir_loop_ends: the rank (steps + 1 while the loop runs, 0 once it ended) after k ticks is at most
  max(0, n + 1 - k), by induction on k; the tick number n + 1 ends the loop.
- dir_end_is_final: proved on ``m.tick`` itself for every input: an ended loop (any nonempty end,
  every other input opaque: tick reads none of them) is returned as it is.

dir_rewind_restores is bounded: every history of up to 4 commits, with the layer codec proved for
every layer beside it (see its section).

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
from spec.proofs import Opaque
from spec.registry import BOUNDED, PROVED, law
from spec.z3gen import Generated, facts, fresh, generated

KINDS = range(len(m.KIND_NAMES))
PASS_TAGS = (m.DEFER, m.LEAVE)
PLAIN_DECIDING = (m.AGAIN, m.GIVE_BACK, m.ABORT)


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


# -- the proofs: z3 encodings generated from the code of decide, deferred_above and tick ----------

DECIDE, DEFERRED, TICK = generated(m.decide), generated(m.deferred_above), generated(m.tick)
STACK, VERDICTS, LOOP = fresh(m.Stack, "stack"), fresh(tuple[m.Verdict, ...], "verdicts"), fresh(m.Loop, "loop")
CAP, POSITION, ABOVE = z3.Ints("cap position above")
KEPT = fresh(m.Stack, "kept")
INPUTS = [*facts(STACK), *facts(VERDICTS), *facts(KEPT), *facts(LOOP)]  # every tuple's length is a natural


def _max(a: Any, b: Any) -> Any:
    return z3.If(a > b, a, b)


def _loop_induction(fn: Generated, state: dict[str, Any], test: Any, holds: Callable[[dict[str, Any]], Any], what: str, premises: Callable[[], list[Any]] = list) -> Evidence:
    """Induction on ``fn``'s loop (z3 proved it ends, spec.z3gen): ``holds`` of every state the
    loop may be at. Base: the loop's test fails; step: the test holds and ``holds`` of every state
    the body runs the loop again with (``successors``: the terms the unfolding reaches) gives
    ``holds`` here. ``premises``: facts proved elsewhere, instantiated at terms the body builds."""
    ties = [DECIDE.tie, DEFERRED.tie, TICK.tie]
    base = prove(lambda: z3.Implies(z3.And(z3.Not(test), *premises()), holds(state)), label=f"base: the loop's test fails ({what})", assumptions=INPUTS, ties=ties)
    step = prove(
        lambda: z3.Implies(z3.And(test, *premises(), *(holds(after) for _path, after in fn.successors(**state))), holds(state)),
        label=f"step: every state the body runs the loop again with ({what})", assumptions=INPUTS, ties=ties,
    )
    return induction(base, step, of=fn.of, label=f"{fn.of}'s loop ({what})")


def _entry(fn: Generated, args: tuple[Any, ...], holds: Callable[[dict[str, Any]], Any], claim: Any, what: str, premises: Callable[[], list[Any]] = list) -> Evidence:
    """The call ``fn(*args)`` enters its loop at the state ``entered`` gives: ``holds`` there gives the claim."""
    return prove(
        lambda: z3.Implies(z3.And(holds(fn.entered(*args)), *premises()), claim()),
        label=f"{fn.of} enters its loop ({what})", assumptions=INPUTS, ties=[DECIDE.tie, DEFERRED.tie, TICK.tie],
    )


def deferred_fact(position: Any) -> Any:
    """deferred_above(stack, verdicts, position) keeps at most the layers above position."""
    kept = DEFERRED(STACK, VERDICTS, position)
    return z3.And(kept.length >= 0, kept.length <= _max(0, STACK.length - 1 - position))


@functools.cache
def deferred_lemma() -> Evidence:
    """deferred_fact for every stack, verdict list and position: induction on its loop over
    ``above`` (from len(stack) down to position + 1), the kept layers at most the ones walked."""
    state = {"above": ABOVE, "kept": KEPT, "position": POSITION, "stack": STACK, "verdicts": VERDICTS}

    def holds(at: dict[str, Any]) -> Any:
        out = DEFERRED.loop(**at)
        return z3.Implies(at["kept"].length >= 0, z3.And(out.length >= at["kept"].length, out.length <= at["kept"].length + _max(0, STACK.length - at["above"])))

    loop = _loop_induction(DEFERRED, state, ABOVE < STACK.length, holds, "the layers kept are at most the layers walked")
    return all_of(loop, _entry(DEFERRED, (STACK, VERDICTS, POSITION), holds, lambda: deferred_fact(POSITION), "from above = position + 1, nothing kept"))


def decide_facts(stack: Any, cap: Any) -> Any:
    """What decide gives on every input: at most max(cap, len(stack)) layers, an outcome that is not empty."""
    decided = DECIDE(stack, VERDICTS, cap)
    return z3.And(decided.stack.length <= _max(cap, stack.length), decided.outcome != z3.StringVal(""))


@functools.cache
def decide_lemma() -> Evidence:
    """decide_facts for every stack, verdict list and cap: induction on decide's walk down the
    stack (position from len(stack) - 1 down to -1), with deferred_fact at the positions the body
    asks it of (the deciding layer's, and -1 when nobody decides)."""
    state = {"cap": CAP, "position": POSITION, "stack": STACK, "verdicts": VERDICTS}

    def holds(at: dict[str, Any]) -> Any:
        out = DECIDE.loop(**at)
        size = at["stack"].length
        within = z3.And(at["position"] >= -1, at["position"] <= size - 1)
        return z3.Implies(within, z3.And(out.stack.length <= _max(at["cap"], size), out.outcome != z3.StringVal("")))

    def deferred() -> list[Any]:
        return [deferred_fact(POSITION), deferred_fact(-z3.IntVal(1))]  # -1 as decide's code spells it

    loop = _loop_induction(DECIDE, state, POSITION >= 0, holds, "the stack after at most max(cap, len(stack)), an outcome", deferred)
    entry = _entry(DECIDE, (STACK, VERDICTS, CAP), holds, lambda: decide_facts(STACK, CAP), "from the top: position len(stack) - 1")
    return all_of(deferred_lemma(), loop, entry)


@law(
    "dir_stack_bounded",
    "S5.1",
    "A decision never grows the stack past its cap: after it, the stack has at most max(cap, its size before) layers.",
    PROVED,
)
def dir_stack_bounded() -> Evidence:
    agreement = bounded(decide_cases(), lambda case: len(m.decide(*case).stack) <= max(case[2], len(case[0])), label=DECIDE_LABEL)

    def hunt(stack: m.Stack, verdicts: tuple[m.Verdict, ...], cap: int, junk: tuple[m.Verdict, ...]) -> bool:
        decided = m.decide(stack, verdicts, cap)
        if len(decided.stack) > max(cap, len(stack)):
            return False
        read = verdicts[: len(stack)]
        if m.decide(stack, read + junk, cap) != decided and len(verdicts) >= len(stack):  # no verdict past the stack's size is read
            raise LawFailed(f"decide read a verdict past the stack's size: {stack!r} {verdicts!r}")
        return True

    more = examples(hunt, stack=stack_st, verdicts=verdicts_st, cap=cap_st, junk=verdicts_st)
    return also(decide_lemma(), agreement, more)


DECIDE_LAYERS = layers(range(2))
DECIDE_LONGEST = 3
DECIDE_CAPS = range(0, 6)
DECIDE_LABEL = (
    f"every stack of <= {DECIDE_LONGEST} layers (4 kinds x budgets 0..1), every verdict "
    f"list up to what decide reads, caps {DECIDE_CAPS.start}..{DECIDE_CAPS.stop - 1}"
)


def decide_cases(alphabet: tuple[m.Layer, ...] = DECIDE_LAYERS, pushable: tuple[m.Layer, ...] = DECIDE_LAYERS) -> Iterator[tuple[m.Stack, tuple[m.Verdict, ...], int]]:
    for stack in stacks(alphabet, DECIDE_LONGEST):
        for verdicts in canonical_lists(len(stack), pushable):
            for cap in DECIDE_CAPS:
                yield stack, verdicts, cap


# -- the loop ----------------------------------------------------------------------------------------

LOOP_LAYERS = layers(range(2))
LOOP_PUSHES = (m.Layer(m.REMINDER, 0), m.Layer(m.REMINDER, 1), m.Layer(m.FORCED, 1))
LOOP_LONGEST = 2
LOOP_STEPS = range(0, 4)
LOOP_CAPS = range(1, 5)
LOOP_LABEL = (
    f"every loop reachable from a stack of <= {LOOP_LONGEST} layers (4 kinds x budgets 0..1), "
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


def loop_step(state: LoopState) -> Iterator[tuple[object, LoopState]]:
    loop, n, ticks, cap, size = state
    for verdicts in canonical_lists(len(loop.stack), LOOP_PUSHES):
        after, _ = m.tick(loop, verdicts, cap)
        if loop.end != "" and after != loop:
            raise LawFailed(f"a tick of an ended loop changed it: {loop!r} -> {after!r}")
        yield verdicts, (after, n, min(ticks + 1, n + 2), cap, size)


def _loop_invariant(state: LoopState) -> bool:
    """dir_loop_stack_bounded and dir_loop_ends on every state of the search."""
    loop, n, ticks, cap, start = state
    return len(loop.stack) <= max(cap, start) and (ticks < n + 1 or loop.end != "")


@functools.cache
def loop_agreement() -> Evidence:
    """One search serves the three loop laws: an ended loop stays, and both loop invariants hold
    on every state."""
    return explore(loop_initial(), loop_step, _loop_invariant, label=LOOP_LABEL)


def hunt_loop(stack: m.Stack, steps: int, cap: int, script: tuple[tuple[m.Verdict, ...], ...]) -> tuple[tuple[m.Loop, str], ...]:
    return m.run(m.start(stack, steps), script, cap)


def _ticked() -> Any:
    """The loop after one tick of LOOP (tick's code, decide's inside it)."""
    return TICK(LOOP, VERDICTS, CAP).item0


def _ticks(what: str, base: Callable[[], Any], step: Callable[[], Any]) -> Evidence:
    """Induction on ticks: each tick is the generated tick (of="bend.director.tick") of a loop,
    with decide_facts of the decision it asks for (decide_lemma proves them for every input)."""
    ties = [DECIDE.tie, DEFERRED.tie, TICK.tie]

    def decided() -> list[Any]:
        return [decide_facts(LOOP.stack, CAP)]

    first = prove(lambda: z3.Implies(z3.And(*decided(), base()[0]), base()[1]), label=f"the first tick, from the start ({what})", assumptions=INPUTS, ties=ties)
    next_ = prove(lambda: z3.Implies(z3.And(*decided(), step()[0]), step()[1]), label=f"tick k to k + 1 ({what})", assumptions=INPUTS, ties=ties)
    return all_of(decide_lemma(), induction(first, next_, of=TICK.of, label=f"ticks ({what})"))


@law(
    "dir_loop_stack_bounded",
    "S5.1",
    "Whatever every layer says at every step, the loop's stack never grows past the cap (or past its start size).",
    PROVED,
)
def dir_loop_stack_bounded() -> Evidence:
    start = z3.Int("start")
    bound = _max(CAP, start)
    proof = _ticks(
        "at most max(cap, start size)",
        lambda: (z3.And(LOOP.end == z3.StringVal(""), LOOP.stack.length == start), _ticked().stack.length <= bound),
        lambda: (LOOP.stack.length <= bound, _ticked().stack.length <= bound),
    )
    agreement = loop_agreement()

    def hunt(stack: m.Stack, steps: int, cap: int, script: tuple[tuple[m.Verdict, ...], ...]) -> bool:
        return all(len(loop.stack) <= max(cap, len(stack)) for loop, _ in hunt_loop(stack, steps, cap, script))

    more = examples(hunt, stack=stack_st, steps=steps_st, cap=cap_st, script=script_st)
    return also(proof, agreement, more).with_production(all_of(production_loop(), production_sessions()))


def _at_most(x: Any) -> Any:
    return z3.If(x > 0, x, 0)


def _rank(loop: Any) -> Any:
    """steps + 1 while the loop runs, 0 once it ended."""
    return z3.If(loop.end != z3.StringVal(""), 0, loop.steps + 1)


@law(
    "dir_loop_ends",
    "S5.3",
    "The loop ends (gives control back or fails) after at most n + 1 steps, n its global budget, whatever every layer says.",
    PROVED,
)
def dir_loop_ends() -> Evidence:
    """Rank: steps + 1 while the loop runs, 0 once it ended. After k ticks from the start with n
    steps, the steps are >= 0 and the rank is at most max(0, n + 1 - k) (induction on k, each tick
    tick's own code with decide's facts); the tick number n + 1 ends the loop."""
    n, k = z3.Ints("n k")

    def after(bound: Any) -> Any:
        ticked = _ticked()
        return z3.And(ticked.steps >= 0, _rank(ticked) <= bound)

    proof = _ticks(
        "rank <= max(0, n + 1 - k) after k ticks",
        lambda: (z3.And(LOOP.end == z3.StringVal(""), n >= 0, LOOP.steps == n), after(n)),
        lambda: (z3.And(n >= 0, k >= 1, LOOP.steps >= 0, _rank(LOOP) <= _at_most(n + 1 - k)), after(_at_most(n - k))),
    )
    end = prove(
        lambda: z3.Implies(
            z3.And(decide_facts(LOOP.stack, CAP), n >= 0, k == n, LOOP.steps >= 0, _rank(LOOP) <= _at_most(n + 1 - k)),
            _ticked().end != z3.StringVal(""),
        ),
        label="the tick number n + 1 (from rank <= 1 after n ticks) ends the loop, whatever the layers say",
        assumptions=INPUTS, ties=[DECIDE.tie, DEFERRED.tie, TICK.tie],
    )
    agreement = loop_agreement()

    def hunt(stack: m.Stack, steps: int, cap: int, script: tuple[tuple[m.Verdict, ...], ...]) -> bool:
        ticks = hunt_loop(stack, steps, cap, script)
        return all(loop.end != "" for loop, _ in ticks[steps + 1 :]) and all(
            loop.steps <= steps for loop, _ in ticks
        )

    small = st.integers(0, 14)
    more = examples(hunt, stack=stack_st, steps=small, cap=cap_st, script=script_st)
    return also(all_of(proof, end), agreement, more).with_production(all_of(production_loop(), production_sessions()))


class _Ended(str):
    """The end of an ended loop: any nonempty string. Compared with "" it answers as every
    nonempty string does; any other use raises, so a run that used it holds for every one."""

    def __new__(cls) -> _Ended:
        return super().__new__(cls, "ended")

    def __eq__(self, other: object) -> bool:
        if other == "" and type(other) is str:
            return False
        raise LawFailed(f"the end of an ended loop was compared with {other!r}")

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "<any nonempty end>"


def _refuse_end(op: str) -> Callable[..., Any]:
    def refuse(self: _Ended, *args: object, **kwargs: object) -> Any:
        raise LawFailed(f"the end of an ended loop was read ({op})")

    return refuse


for _op in ("__len__ __iter__ __getitem__ __contains__ __bool__ __add__ __radd__ __mul__ __rmul__ __lt__ __le__ __gt__ __ge__ "
            "__str__ __format__ __mod__ startswith endswith split strip lower upper encode").split():
    setattr(_Ended, _op, _refuse_end(_op))


@law(
    "dir_end_is_final",
    "S5.3",
    "A tick of an ended loop leaves it exactly as it ended, whatever the layers say.",
    PROVED,
)
def dir_end_is_final() -> Evidence:
    """Proved on m.tick itself, for every input: the loop's stack and steps, the verdicts and the
    cap are opaque (any value: tick never reads them, reading one fails the law), the end any
    nonempty string (only compared with ""); the loop tick returns is the same loop."""

    def stays(stack: Any, steps: Any, end: Any, verdicts: Any, cap: Any) -> bool:
        loop = m.Loop(stack, steps, end)
        after, rule = m.tick(loop, verdicts, cap)
        return after is loop or (after.stack is stack and after.steps is steps and after.end is end)

    every = domain(
        Finite("stacks (opaque: any stack)", (Opaque("stack"),)),
        Finite("global budgets (opaque: any steps)", (Opaque("steps"),)),
        Finite("ends of an ended loop (any nonempty string)", (_Ended(),)),
        Finite("verdict lists (opaque: any verdicts)", (Opaque("verdicts"),)),
        Finite("caps (opaque: any cap)", (Opaque("cap"),)),
    )
    proof = exhaust(every, stays, about=[m.tick])
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
# Not proved: a rewind decodes the document as of an entry (as_of walks a history of any shape,
# encode and decode fold a stack of any length), and no encoding here is tied to those functions
# over their whole domains. The law is computed exactly on every history of up to 4 commits (every
# parent choice) over 4 document states, hunted by Hypothesis, and run on production's session
# store. One piece is proved on the model's functions themselves, for every layer: decode_layer
# reads back what encode_layer wrote, every kind with a budget b in 0..MAX_BUDGET (``_Budget``: an
# int whose comparisons z3 decides for every such b).


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


def _layer_codec() -> Evidence:
    """decode_layer(encode_layer(l)) = l for every layer: each of the 4 kinds of S5 with a budget z3
    keeps symbolic in 0..MAX_BUDGET (m.encode_layer and m.decode_layer run on it)."""
    kinds = Finite("layer kinds of S5, each with a budget b in 0..MAX_BUDGET whose comparisons z3 decides", tuple(range(len(m.KIND_NAMES))))

    def reads_back(kind: int) -> bool:
        layer = m.Layer(kind, _Budget(0))
        return bool(m.decode_layer(m.encode_layer(layer)) == layer)

    return exhaust(domain(kinds), reads_back, about=[m.encode_layer, m.decode_layer])


@law(
    "dir_rewind_restores",
    "S5.8",
    "A rewind of a history of sound trees to the entry of a stack restores that stack, exactly (model and production).",
    BOUNDED,
    derivation="A rewind moves the head to an earlier entry; documents read as of it: the nearest commit at or above it (S5.8, S1 derived).",
)
def dir_rewind_restores() -> Evidence:
    """Bounded: every history of 1..4 commits (every parent choice) over 4 document states, judged
    by the law's own walk to the nearest commit (``expected``); beside it, the layer codec proved
    for every layer (``_layer_codec``), Hypothesis's histories, and production's rewinds on a real
    session store."""
    every = list(histories())
    model_part = bounded(every, model_rewinds, label="every history of 1..4 commits (every parent choice: branches) over 4 document states")
    sample = every[:: max(1, len(every) // 60)]
    count = production_rewinds(sample)
    production = Evidence(BOUNDED, f"store: {len(sample):,} of those histories committed on branches of a real session, {count:,} rewinds")

    history_st = st.lists(st.tuples(st.integers(0, 30), st.one_of(st.none(), stack_st)), min_size=1, max_size=10).map(
        lambda items: tuple((-1 if i == 0 else p % i, s) for i, (p, s) in enumerate(items))
    )
    more = examples(model_rewinds, history=history_st)
    return also(model_part, _layer_codec(), more).with_production(production)


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

    decisions = bounded(decide_cases(), same_decision, label="production decide = model decide on " + DECIDE_LABEL)

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
