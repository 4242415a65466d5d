"""Laws of the Director stack (control.md S5, law table of S5).

The adversary of S5 picks every verdict of every layer of every step. ``decide`` reads the
verdicts only up to the first one that decides (Again, Yield, Stack{l}, Abort): the rest of
a list is never read, and a missing verdict defers. So every verdict list of a stack of L
layers behaves as one of its *canonical* lists: j verdicts from {Defer, Leave} (j <= L),
then, when j < L, one deciding verdict. The exhaustive checks enumerate every canonical
list, which is every behaviour of every list (``suffix_is_never_read`` checks that claim
with Hypothesis inside dir_stack_bounded). ``decide`` never reads a layer's kind (the model
keeps a number for it), so kinds range over all four but budgets over a few values.

Bounds of the exhaustive parts are in each law's evidence; Hypothesis hunts beyond them
with capped sizes (stacks <= 10 layers, budgets <= 6, caps <= 12, scripts <= 14 steps).
dir_encode_sound, dir_resume_restores and dir_rewind_restores also run the production
document code (impl/eukhe/directors/document.py) on every stack of their bound, since the
seed ties the persisted eukhe.directors value to the model (S5 tie).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator

from hypothesis import strategies as st

from bend import director as m
from spec.evidence import Evidence, LawFailed, all_of, also, bounded, examples, explore
from spec.registry import BOUNDED, law

KINDS = range(len(m.KIND_NAMES))
HISTORY_LAYERS: tuple[m.Layer, ...] = tuple(m.Layer(k, b) for k in KINDS for b in range(2))
PASS_TAGS = (m.DEFER, m.LEAVE)
PLAIN_DECIDING = (m.AGAIN, m.GIVE_BACK, m.ABORT)


def layers(budgets: range) -> tuple[m.Layer, ...]:
    return tuple(m.Layer(k, b) for k in KINDS for b in budgets)


def stacks(alphabet: tuple[m.Layer, ...], longest: int) -> Iterator[m.Stack]:
    for size in range(longest + 1):
        yield from itertools.product(alphabet, repeat=size)


def canonical_lists(size: int, pushable: tuple[m.Layer, ...]) -> Iterator[tuple[m.Verdict, ...]]:
    """Every canonical verdict list of a stack of ``size`` layers (module docstring)."""
    deciding = tuple(m.Verdict(t) for t in PLAIN_DECIDING) + tuple(m.Verdict(m.STACK, p) for p in pushable)
    for passes in range(size + 1):
        for prefix in itertools.product(PASS_TAGS, repeat=passes):
            head = tuple(m.Verdict(t) for t in prefix)
            if passes == size:
                yield head
            else:
                for last in deciding:
                    yield head + (last,)


# -- Hypothesis strategies (capped sizes) ------------------------------------------------------

layer_st = st.builds(m.Layer, st.integers(0, 3), st.integers(0, 6))
verdict_st = st.one_of(
    st.sampled_from([m.Verdict(t) for t in (m.DEFER, m.AGAIN, m.GIVE_BACK, m.LEAVE, m.ABORT)]),
    st.builds(lambda layer: m.Verdict(m.STACK, layer), layer_st),
)
stack_st = st.lists(layer_st, max_size=10).map(tuple)
verdicts_st = st.lists(verdict_st, max_size=12).map(tuple)
script_st = st.lists(verdicts_st, max_size=14).map(tuple)


# -- dir_stack_bounded -------------------------------------------------------------------------

DECIDE_LAYERS = layers(range(2))  # 4 kinds x budgets 0..1
DECIDE_PUSHES = layers(range(2))
DECIDE_LONGEST = 3
DECIDE_CAPS = range(0, 6)


def grows_within(before: m.Stack, after: m.Stack, cap: int) -> bool:
    return len(after) <= max(cap, len(before))


@law(
    "dir_stack_bounded",
    "S5.1",
    "A decision never grows the stack past its cap: after it, the stack has at most max(cap, its size before) layers.",
    BOUNDED,
)
def dir_stack_bounded() -> Evidence:
    def cases() -> Iterator[tuple[m.Stack, tuple[m.Verdict, ...], int]]:
        for stack in stacks(DECIDE_LAYERS, DECIDE_LONGEST):
            for verdicts in canonical_lists(len(stack), DECIDE_PUSHES):
                for cap in DECIDE_CAPS:
                    yield stack, verdicts, cap

    def prop(case: tuple[m.Stack, tuple[m.Verdict, ...], int]) -> bool:
        stack, verdicts, cap = case
        return grows_within(stack, m.decide(stack, verdicts, cap).stack, cap)

    proof = bounded(
        cases(),
        prop,
        label=(
            f"every stack of <= {DECIDE_LONGEST} layers (4 kinds x budgets 0..1), every canonical verdict list "
            f"(pushes of the same 8 layers), caps {DECIDE_CAPS.start}..{DECIDE_CAPS.stop - 1}"
        ),
    )

    def hunt(stack: m.Stack, verdicts: tuple[m.Verdict, ...], cap: int, junk: tuple[m.Verdict, ...]) -> bool:
        decided = m.decide(stack, verdicts, cap)
        if not grows_within(stack, decided.stack, cap):
            return False
        # suffix_is_never_read: verdicts after the deciding one change nothing; a missing one defers.
        first = next((i for i, v in enumerate(verdicts[: len(stack)]) if v.tag not in PASS_TAGS), None)
        if first is not None:
            read = verdicts[: first + 1]
        else:
            read = verdicts[: len(stack)] + (m.Verdict(m.DEFER),) * max(0, len(stack) - len(verdicts))
        if m.decide(stack, read + junk, cap) != decided:
            raise LawFailed(f"decide read a verdict after the deciding one: {stack!r} {verdicts!r}")
        return True

    more = examples(hunt, stack=stack_st, verdicts=verdicts_st, cap=st.integers(0, 12), junk=verdicts_st)
    return also(proof, more)


# -- the loop: dir_loop_stack_bounded, dir_loop_ends, dir_end_is_final ---------------------------

LOOP_LAYERS = layers(range(2))
LOOP_PUSHES = (m.Layer(m.REMINDER, 0), m.Layer(m.REMINDER, 1), m.Layer(m.FORCED, 1))
LOOP_LONGEST = 2
LOOP_STEPS = range(0, 4)
LOOP_CAPS = range(1, 5)
LOOP_LABEL = (
    f"every loop from a stack of <= {LOOP_LONGEST} layers (4 kinds x budgets 0..1) within caps "
    f"{LOOP_CAPS.start}..{LOOP_CAPS.stop - 1}, global budgets {LOOP_STEPS.start}..{LOOP_STEPS.stop - 1}, "
    "every canonical verdict list at every step (pushes: reminder 0/1, forced 1); finite because every "
    "continuation spends a step of the global budget and ticks are counted up to n + 2"
)

# A loop state of the search: (loop, initial global budget n, ticks so far (capped at n + 2), cap, initial size)
LoopState = tuple[m.Loop, int, int, int, int]


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
        yield verdicts, (after, n, min(ticks + 1, n + 2), cap, size)


def hunt_loop(stack: m.Stack, steps: int, cap: int, script: tuple[tuple[m.Verdict, ...], ...]) -> tuple[m.Loop, tuple[tuple[m.Loop, str], ...]]:
    loop = m.start(stack, steps)
    return loop, m.run(loop, script, cap)


@law(
    "dir_loop_stack_bounded",
    "S5.1",
    "Whatever every layer says at every step, the loop's stack never grows past the cap (or past its start size).",
    BOUNDED,
)
def dir_loop_stack_bounded() -> Evidence:
    def invariant(state: LoopState) -> bool:
        loop, _, _, cap, size = state
        return len(loop.stack) <= max(cap, size)

    proof = explore(loop_initial(), loop_step, invariant, label=LOOP_LABEL)

    def hunt(stack: m.Stack, steps: int, cap: int, script: tuple[tuple[m.Verdict, ...], ...]) -> bool:
        _, ticks = hunt_loop(stack, steps, cap, script)
        return all(len(loop.stack) <= max(cap, len(stack)) for loop, _ in ticks)

    more = examples(hunt, stack=stack_st, steps=st.integers(0, 12), cap=st.integers(0, 12), script=script_st)
    return also(proof, more)


@law(
    "dir_loop_ends",
    "S5.3",
    "The loop ends (gives control back or fails) after at most n + 1 steps, n its global budget, whatever every layer says.",
    BOUNDED,
)
def dir_loop_ends() -> Evidence:
    def invariant(state: LoopState) -> bool:
        loop, n, ticks, _, _ = state
        return ticks < n + 1 or loop.end != ""

    proof = explore(loop_initial(), loop_step, invariant, label=LOOP_LABEL)

    def hunt(stack: m.Stack, steps: int, cap: int, script: tuple[tuple[m.Verdict, ...], ...]) -> bool:
        _, ticks = hunt_loop(stack, steps, cap, script)
        return all(loop.end != "" for loop, _ in ticks[steps:])

    more = examples(hunt, stack=stack_st, steps=st.integers(0, 12), cap=st.integers(0, 12), script=script_st)
    return also(proof, more)


@law(
    "dir_end_is_final",
    "S5.3",
    "A tick of an ended loop leaves it exactly as it ended, whatever the layers say.",
    BOUNDED,
)
def dir_end_is_final() -> Evidence:
    def transition(before: LoopState, _: object, after: LoopState) -> bool:
        return before[0].end == "" or after[0] == before[0]

    proof = explore(loop_initial(), loop_step, lambda _: True, transition=transition, label=LOOP_LABEL)

    def hunt(stack: m.Stack, steps: int, cap: int, script: tuple[tuple[m.Verdict, ...], ...]) -> bool:
        loop, ticks = hunt_loop(stack, steps, cap, script)
        previous = loop
        for current, rule in ticks:
            if previous.end != "" and (current != previous or rule != "ended"):
                return False
            previous = current
        return True

    more = examples(hunt, stack=stack_st, steps=st.integers(0, 12), cap=st.integers(0, 12), script=script_st)
    return also(proof, more)


# -- the tree document: dir_encode_sound, dir_resume_restores, dir_rewind_restores --------------

TREE_LAYERS = layers(range(3))  # 4 kinds x budgets 0..2
TREE_LONGEST = 3
TREE_LABEL = f"every stack of <= {TREE_LONGEST} layers (4 kinds x budgets 0..2)"


def production_document(stack: m.Stack) -> object:
    from eukhe.directors.document import to_document
    from eukhe.directors.stack import KIND_ORDER
    from eukhe.directors.stack import Layer as PLayer

    return to_document([PLayer(KIND_ORDER[layer.kind], layer.budget) for layer in stack])


STORE_LONGEST = 2
STORE_LABEL = f"every stack of <= {STORE_LONGEST} layers (4 kinds x budgets 0..1) through the production session store"


def store_resume() -> Evidence:
    """Commit each stack as eukhe.directors, close, reopen (a resume): the stack read back is it."""
    import tempfile
    from pathlib import Path

    from eukhe.session import Store

    every = list(stacks(HISTORY_LAYERS, STORE_LONGEST))
    with tempfile.TemporaryDirectory() as root:
        store = Store(Path(root))
        with store.create("resume"):
            pass
        for stack in every:
            with store.open("resume") as session:
                session.conversation("main").commit(documents={"eukhe.directors": production_document(stack)})
            with store.open("resume", writer=False) as session:
                read = production_stack(session.conversation("main").document("eukhe.directors"))
            if read != stack:
                raise LawFailed(f"resume read {read!r}, committed {stack!r}")
    return Evidence(BOUNDED, f"store: {STORE_LABEL}, each committed, closed and reopened ({len(every):,} resumes)")


def store_rewind() -> Evidence:
    """Commit a history of stacks; a rewind to each commit reads that commit's stack, also
    after commits on a new branch made after an earlier rewind."""
    import tempfile
    from pathlib import Path

    from eukhe.session import Store

    every = list(stacks(HISTORY_LAYERS, STORE_LONGEST))
    rewinds = 0
    with tempfile.TemporaryDirectory() as root:
        with Store(Path(root)).create("rewind") as session:
            main = session.conversation("main")
            points: list[tuple[int, m.Stack]] = []
            for number, stack in enumerate(every):
                if number % 9 == 8 and points:
                    main.rewind(points[number % len(points)][0])  # later commits go on a new branch
                ids = main.commit(documents={"eukhe.directors": production_document(stack)})
                points.append((ids[-1], stack))
            for entry, stack in points:
                main.rewind(entry)
                rewinds += 1
                read = production_stack(main.document("eukhe.directors"))
                if read != stack:
                    raise LawFailed(f"rewind to {entry} read {read!r}, committed {stack!r}")
    return Evidence(BOUNDED, f"store: {STORE_LABEL}, committed on branches, every commit rewound to ({rewinds:,} rewinds)")


def production_stack(value: object) -> m.Stack:
    from eukhe.directors.document import from_document
    from eukhe.directors.stack import KIND_ORDER

    return tuple(m.Layer(KIND_ORDER.index(layer.kind), layer.budget) for layer in from_document(value))


@law(
    "dir_encode_sound",
    "S5.8",
    "The stack in the tree is a sound tree: encode gives a tree that decodes, and the production document is that same tree.",
    BOUNDED,
)
def dir_encode_sound() -> Evidence:
    def prop(stack: m.Stack) -> bool:
        tree = m.encode(stack)
        if not m.sound(tree) or m.decode(tree) != stack:
            return False
        written = production_document(stack)
        return m.from_json(written) == tree and m.show(tree) == json.dumps(written, sort_keys=True, separators=(",", ":"))

    proof = bounded(stacks(TREE_LAYERS, TREE_LONGEST), prop, label=TREE_LABEL + ", model and production")
    more = examples(prop, stack=stack_st)
    return also(proof, more)


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
        if m.decode(m.from_json(json.loads(stored))) != stack:
            return False
        written = json.dumps(production_document(stack), sort_keys=True, separators=(",", ":"))
        return production_stack(json.loads(written)) == stack

    proof = bounded(stacks(TREE_LAYERS, TREE_LONGEST), prop, label=TREE_LABEL + ", model and production")
    more = examples(prop, stack=stack_st)
    return also(all_of(proof, store_resume()), more)


@law(
    "dir_rewind_restores",
    "S5.8",
    "A rewind of a history of sound trees to the tree of a stack restores that stack, exactly.",
    BOUNDED,
    derivation="A rewind moves the head to an earlier commit; documents read as of it (S5.8, S1 derived).",
)
def dir_rewind_restores() -> Evidence:
    def rewound(history: tuple[m.Stack, ...], to: int) -> m.Stack | None:
        trees = tuple(m.encode(stack) for stack in history)
        head = trees[: to + 1][-1]
        return m.decode(head)

    def cases() -> Iterator[tuple[tuple[m.Stack, ...], int]]:
        few = tuple(stacks(HISTORY_LAYERS, 1))
        for length in range(1, 4):
            for history in itertools.product(few, repeat=length):
                for to in range(length):
                    yield history, to

    def prop(case: tuple[tuple[m.Stack, ...], int]) -> bool:
        history, to = case
        return rewound(history, to) == history[to]

    proof = bounded(cases(), prop, label="every history of 1..3 commits of stacks of <= 1 layer (4 kinds x budgets 0..1), every rewind point")

    def hunt(history: list[m.Stack], data: int) -> bool:
        to = data % len(history)
        return rewound(tuple(history), to) == history[to]

    more = examples(hunt, history=st.lists(stack_st, min_size=1, max_size=8), data=st.integers(0, 100))
    return also(all_of(proof, store_rewind()), more)
