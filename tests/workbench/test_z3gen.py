"""The encodings spec.z3gen builds from the models' code compute what the functions compute, and
every construct outside the translated subset is refused by name, never guessed."""

from __future__ import annotations

from collections.abc import Callable

import z3
from hypothesis import given
from hypothesis import strategies as st

import bend.infer as m
import bend.default_model as default_model
import bend.director as director
import bend.progress as progress
import pytest
from spec import evidence
from spec.registry import PROVED
from spec.z3gen import Unsupported, _Translator, applied, concrete, facts, fresh, generated, item, same, same_items

FLAG, AFTER, OVER = generated(m.flag), generated(m.after), generated(m.over)
naturals = st.integers(0, 10**12)


def _value(term: z3.ExprRef) -> object:
    return evidence._read(term)


@given(attempt=naturals, supported=st.booleans(), free=st.booleans())
def test_flag_is_translated_exactly(attempt: int, supported: bool, free: bool) -> None:
    assert _value(FLAG(z3.IntVal(attempt), z3.BoolVal(supported), z3.BoolVal(free))) == m.flag(attempt, supported, free)


@given(attempt=naturals, retries=naturals, called=st.booleans())
def test_after_is_translated_exactly(attempt: int, retries: int, called: bool) -> None:
    assert _value(AFTER(z3.IntVal(attempt), z3.IntVal(retries), z3.BoolVal(called))) == m.after(attempt, retries, called)


@given(enabled=st.booleans(), window=naturals, reserve=naturals, margin=naturals, tokens=naturals)
def test_over_is_translated_exactly(enabled: bool, window: int, reserve: int, margin: int, tokens: int) -> None:
    term = OVER(z3.BoolVal(enabled), z3.IntVal(window), z3.IntVal(reserve), z3.IntVal(margin), z3.IntVal(tokens))
    assert _value(term) == m.over(enabled, window, reserve, margin, tokens)


CHECK = generated(progress.check)
records = st.none() | st.builds(
    progress.Record, st.sampled_from(["r1", "r2"]), st.sampled_from(["g1", "g2"]), naturals, st.integers(0, 40)
)


@given(record=records, run=st.sampled_from(["r1", "r2"]), goal=st.sampled_from(["g1", "g2"]), now=naturals, stall=st.integers(0, 40))
def test_check_with_its_optional_record_is_translated_exactly(record: progress.Record | None, run: str, goal: str, now: int, stall: int) -> None:
    out = CHECK(concrete(record, progress.Record | None), z3.StringVal(run), z3.StringVal(goal), z3.IntVal(now), z3.IntVal(stall))
    got = progress.Check(progress.Record(*(_value(t) for t in out.record)), _value(out.verdict), _value(out.count))  # type: ignore[arg-type]
    assert got == progress.check(record, run, goal, now, stall)


FIRST_OVER, FIRST_AT = generated(m.first_over), generated(m.first_at)
runs = st.lists(st.integers(0, 40), max_size=8).map(tuple)
small = st.integers(0, 40)


def _maybe(term: object) -> object:
    none, value = term  # type: ignore[misc]
    return None if _value(none) else _value(value)


@given(enabled=st.booleans(), window=small, reserve=small, margin=small, run=runs, blocking=st.booleans())
def test_a_loop_over_a_tuple_is_translated_exactly(enabled: bool, window: int, reserve: int, margin: int, run: tuple[int, ...], blocking: bool) -> None:
    got = FIRST_OVER(z3.BoolVal(enabled), z3.IntVal(window), z3.IntVal(reserve), z3.IntVal(margin), concrete(run, tuple[int, ...]), z3.BoolVal(blocking))
    assert _maybe(got) == m.first_over(enabled, window, reserve, margin, run, blocking)


@given(run=runs, at=small, start=st.integers(0, 9))
def test_a_loop_entered_midway_is_the_rest_of_the_loop(run: tuple[int, ...], at: int, start: int) -> None:
    got = FIRST_AT.loop(run=concrete(run, tuple[int, ...]), at=z3.IntVal(at), i=z3.IntVal(start))  # type: ignore[attr-defined]
    assert _maybe(got) == next((k for k in range(start, len(run)) if run[k] >= at), None)


def _skips(t: tuple[int, ...]) -> int:
    i = 0
    total = 0
    while i < len(t):
        i += 1
        if t[i - 1] < 0:
            continue
        if t[i - 1] == 99:
            break
        total = total + t[-i]
    return total


@given(t=st.lists(st.sampled_from([-3, -1, 0, 2, 5, 99]), max_size=7).map(tuple))
def test_continue_break_and_negative_subscripts_are_pythons(t: tuple[int, ...]) -> None:
    assert _value(_Translator(_skips)([concrete(t, tuple[int, ...])])) == _skips(t)


RECORD_ACT = generated(progress.record_act)
acts = st.builds(progress.Act, st.sampled_from(["call", "note"]), st.sampled_from(["t", "u"]), st.sampled_from(["1", "2"]), st.just("r"), st.booleans())


def _acts_of(items: object) -> tuple[progress.Act, ...]:
    array, length = items  # type: ignore[misc]
    return tuple(progress.Act(*(_value(z3.Select(field, k)) for field in array)) for k in range(_value(length)))  # type: ignore[arg-type, call-overload]


@given(ledger=st.lists(acts, max_size=5).map(tuple), act=acts)
def test_a_for_loop_over_a_tuple_of_dataclasses_is_translated_exactly(ledger: tuple[progress.Act, ...], act: progress.Act) -> None:
    got = RECORD_ACT(concrete(ledger, progress.Ledger), concrete(act, progress.Act))
    assert _acts_of(got) == progress.record_act(ledger, act)


def _shortest(t: tuple[int, ...]) -> int | None:
    best: int | None = None
    kept: tuple[int, ...] = ()
    for x in t:
        if best is None or x < best:
            best = x
            kept = kept + (x, x)
    if best is None:
        return None
    return best + len(kept) + kept[-1]


def _prepended(t: tuple[int, ...], x: int) -> int:
    u = (x,) + t + (x,)
    return u[0] * 100 + u[-1] * 10 + len(u) + (u[1] if len(u) > 2 else 0)


@given(t=st.lists(st.integers(-5, 5), max_size=6).map(tuple), x=st.integers(-5, 5))
def test_a_tuple_literal_joined_in_front_is_pythons(t: tuple[int, ...], x: int) -> None:
    got = _Translator(_prepended)([concrete(t, tuple[int, ...]), z3.IntVal(x)])
    assert _entailed(got == _prepended(t, x))


def _entailed(claim: object) -> bool:
    """z3 finds the claim true of the closed terms (simplify leaves a recursive function over
    joined tuples unevaluated; the solver unfolds it)."""
    solver = z3.Solver()
    solver.add(z3.Not(claim))
    return bool(solver.check() == z3.unsat)


@given(t=st.lists(st.integers(-5, 5), max_size=6).map(tuple))
def test_optional_locals_and_joined_tuples_are_pythons(t: tuple[int, ...]) -> None:
    got = _Translator(_shortest)([concrete(t, tuple[int, ...])])
    want = _shortest(t)
    assert _entailed(got.none if want is None else z3.And(z3.Not(got.none), got.value == want))


def test_an_opaque_callee_is_one_uninterpreted_function_of_its_arguments() -> None:
    """What a claim says over an opaque callee holds whatever it computes: build_line makes at
    least one call whatever strip and size do; a claim that needs more of them (that strip removes
    a trailing space) gets a counterexample."""
    import bend.compactor as compactor

    encoded = generated(compactor.build_line, opaque=(compactor.size, compactor.cut, compactor.follow_up, "str.strip"))
    assert "uninterpreted" in encoded.tie.sentence
    replies, source = fresh(tuple[compactor.Reply, ...], "replies"), z3.String("source")
    calls = lambda: encoded(source, replies).calls.length >= 1  # noqa: E731
    assert evidence.prove(calls, label="a call at least", assumptions=facts(replies), ties=[encoded.tie]).strength == PROVED
    first = item(replies, 0).text
    stripped = lambda: z3.Implies(z3.And(replies.length == 1, first == z3.StringVal("x ")), encoded(source, replies).line == applied(compactor.cut, z3.StringVal("x")))  # noqa: E731
    with pytest.raises(evidence.LawFailed, match="counterexample"):
        evidence.prove(stripped, label="a trailing space is stripped", assumptions=facts(replies), ties=[encoded.tie])


def _spins(n: int) -> int:
    i = 0
    while i < n:
        i = i + 0
    return i


def _counts_down_wrongly(n: int) -> int:
    while n > 0:
        if n == 5:
            n = n + 1
        else:
            n = n - 1
    return n


@pytest.mark.parametrize("fn", [_spins, _counts_down_wrongly])
def test_a_loop_that_may_not_end_is_refused(fn: Callable[..., object]) -> None:
    """A recursive definition that does not end could make z3 prove anything: refused."""
    with pytest.raises(Unsupported, match="the loop cannot be shown to end"):
        translate = _Translator(fn)
        translate([fresh(kind, name) for name, kind in zip(translate.parameters, translate.sorts)])


def test_a_generated_encoding_is_tied_to_its_function() -> None:
    assert FLAG.of == "bend.infer.flag"  # type: ignore[attr-defined]
    assert FLAG.tie.strength == PROVED and FLAG.tie.of == "bend.infer.flag"  # type: ignore[attr-defined]
    a, s, f = z3.Int("a"), z3.Bool("s"), z3.Bool("f")
    proof = evidence.prove(lambda: z3.Implies(a > 0, FLAG(a, s, f) == s), label="a retry flags iff supported", ties=[FLAG.tie])  # type: ignore[attr-defined]
    assert proof.strength == PROVED


# Functions outside the subset, each refused naming what it uses.
def _loops(n: int) -> int:
    total = 0
    for i in range(0, n, 2):
        total = total + i
    return total


def _divides(n: int, d: int) -> int:
    return n // d


def _truthy(n: int) -> bool:
    if n:
        return True
    return False


def _falls_off(n: int) -> int:
    if n > 0:
        return 1


def _nested(n: tuple[tuple[int, ...], ...]) -> int:
    return len(n)


def _fixed_at(n: tuple[int, int], i: int) -> int:
    return n[i]


def _while_test(n: int) -> int:
    while n != 0:
        n = n - 1
    return n


def _reads_maybe(r: progress.Record | None) -> int:
    return r.count  # type: ignore[union-attr]


def _orders_text(a: str, b: str) -> bool:
    return a < b


def _calls_out(n: int) -> int:
    return abs(n)


def _in_other_items(t: tuple[int, ...], s: str) -> bool:
    return s in t  # type: ignore[comparison-overlap]  # refused by the translation, not by Python


UNDECLARED = (1, 2, 3)  # a module constant without a declared type: its items' type is not read


def _walks_undeclared(n: int) -> int:
    total = n
    for x in UNDECLARED:
        total = total + x
    return total


@pytest.mark.parametrize(
    ("fn", "says"),
    [
        (_loops, r"only `for name in tuple_name:` \(or `for a, b in tuple_name:`, `for x in name.field:`, `for i in range\(...\)`\) without else is translated"),
        (_divides, "the operator FloorDiv by other than a positive int constant is not translated"),
        (_truthy, "a condition that is not a boolean"),
        (_falls_off, "a path ends without a return"),
        (_nested, "parameter n: a tuple of tuple"),
        (_fixed_at, "a subscript of a fixed tuple other than a constant index"),
        (_while_test, "a loop whose test is not an order of two ints"),
        (_reads_maybe, "r.count where r may be None"),
        (_orders_text, "an order of String values is not translated"),
        (_calls_out, "a call of abs"),
        (_in_other_items, "`in` of a value that is not of the tuple's items"),
        (_walks_undeclared, r"the module constant UNDECLARED is not declared a tuple of int, bool or str"),
    ],
)
def test_what_is_not_translated_is_refused(fn: Callable[..., object], says: str) -> None:
    with pytest.raises(Unsupported, match=says):
        translate = _Translator(fn)
        translate([fresh(kind, name) for name, kind in zip(translate.parameters, translate.sorts)])


def test_only_functions_of_the_code_are_generated() -> None:
    with pytest.raises(ValueError, match="stands for a function of bend/ or impl/"):
        generated(_divides)


def _same_verdict(a: director.Verdict, b: director.Verdict) -> bool:
    return a == b


verdicts = st.builds(director.Verdict, st.sampled_from([director.DEFER, director.STACK]), st.none() | st.builds(director.Layer, st.integers(0, 1), st.integers(0, 1)))


@given(a=verdicts, b=verdicts)
def test_dataclass_equality_with_optional_fields_is_pythons(a: director.Verdict, b: director.Verdict) -> None:
    """Two None fields are equal whatever an encoding holds beside the flag; None never equals a value."""
    translate = _Translator(_same_verdict)
    assert _value(translate([concrete(a, director.Verdict), concrete(b, director.Verdict)])) == (a == b)


def _sliced(t: tuple[int, ...], a: int, b: int) -> int:
    head = t[:a]
    tail = t[b:]
    both = t[a:b]
    return len(head) * 10000 + len(tail) * 100 + len(both) + (head[-1] if len(head) > 0 else 0) * 7 + (tail[0] if len(tail) > 0 else 0) * 3


@given(t=st.lists(st.integers(-5, 5), max_size=6).map(tuple), a=st.integers(-8, 8), b=st.integers(-8, 8))
def test_slices_are_pythons(t: tuple[int, ...], a: int, b: int) -> None:
    got = _Translator(_sliced)([concrete(t, tuple[int, ...]), z3.IntVal(a), z3.IntVal(b)])
    assert _entailed(got == _sliced(t, a, b))


def _paired(x: int, y: str) -> tuple[int, str]:
    if x > 0:
        return x, y
    pair = (0, "none")
    return pair[0] - 1, pair[-1]


@given(x=st.integers(-3, 3), y=st.sampled_from(["", "a"]))
def test_fixed_tuples_are_pythons(x: int, y: str) -> None:
    got = _Translator(_paired)([z3.IntVal(x), z3.StringVal(y)])
    assert (_value(got[0]), _value(got[1])) == _paired(x, y)


DECIDE = generated(director.decide)
layers_st = st.builds(director.Layer, st.integers(0, 3), st.integers(0, 2))
verdicts_st = st.one_of(
    st.builds(director.Verdict, st.sampled_from([director.DEFER, director.AGAIN, director.GIVE_BACK, director.LEAVE, director.ABORT])),
    st.builds(director.Verdict, st.just(director.STACK), st.none() | layers_st),
)


@given(stack=st.lists(layers_st, max_size=4).map(tuple), verdicts=st.lists(verdicts_st, max_size=5).map(tuple), cap=st.integers(0, 6))
def test_a_loop_with_slices_and_an_optional_field_shown_not_none_is_translated_exactly(
    stack: director.Stack, verdicts: tuple[director.Verdict, ...], cap: int
) -> None:
    """decide: slices of the stack, verdict.pushed used where a test showed it is not None, a
    tuple joined in front, returns inside the loop."""
    got = DECIDE(concrete(stack, director.Stack), concrete(verdicts, tuple[director.Verdict, ...]), z3.IntVal(cap))
    want = director.decide(stack, verdicts, cap)
    layers = [z3.And(item(got.stack, k).kind == layer.kind, item(got.stack, k).budget == layer.budget) for k, layer in enumerate(want.stack)]
    assert _entailed(z3.And(got.stack.length == len(want.stack), got.outcome == z3.StringVal(want.outcome), got.rule == z3.StringVal(want.rule), *layers))


def test_the_successors_of_a_loop_are_the_states_its_unfolding_calls() -> None:
    """Each state ``successors`` gives is the one the loop's recursive function is applied to on
    that path: the loop's value there equals its value at the successor."""
    t, i = fresh(tuple[int, ...], "t"), z3.Int("i")
    over = generated(m.first_over)
    names = {"i": i, "enabled": z3.Bool("enabled"), "window": z3.Int("window"), "reserve": z3.Int("reserve"), "margin": z3.Int("margin"), "run": t, "blocking": z3.Bool("blocking")}
    found = over.successors(**names)
    assert found
    for conditions, after in found:
        assert _entailed(z3.Implies(z3.And(*facts(t), *conditions), same(over.loop(**names), over.loop(**after))))


ENTRY_OF, CHOSEN_LADDER = generated(m.entry_of), generated(m.chosen_ladder)
level_maps = st.lists(st.tuples(st.sampled_from(["off", "low", "high"]), st.none() | st.sampled_from(["l", "h"])), max_size=4).map(tuple)


@given(ladder=level_maps, level=st.sampled_from(["off", "low", "high", "max"]))
def test_pairs_in_tuples_unpacked_by_a_for_loop_are_pythons(ladder: m.LevelMap, level: str) -> None:
    """entry_of: a tuple of (str, str | None) pairs (its annotation quoted), walked by `for name,
    value in ladder`, returning a pair whose second item may be None."""
    got = ENTRY_OF(concrete(ladder, m.LevelMap), z3.StringVal(level))
    present, value = m.entry_of(ladder, level)
    said = got.item1.none if value is None else z3.And(z3.Not(got.item1.none), got.item1.value == z3.StringVal(value))
    assert _entailed(z3.And(got.item0 == present, said))


@given(explicit=st.none() | level_maps, rule=st.none() | level_maps)
def test_optional_tuples_and_an_empty_tuple_returned_are_pythons(explicit: m.LevelMap | None, rule: m.LevelMap | None) -> None:
    got = CHOSEN_LADDER(concrete(explicit, m.LevelMap | None), concrete(rule, m.LevelMap | None))
    assert _entailed(same_items(got, concrete(m.chosen_ladder(explicit, rule), m.LevelMap)))


def _ranges(t: tuple[int, ...], a: int) -> int:
    total = 0
    for i in range(len(t)):
        if i == a:
            continue
        total = total * 3 + t[i]
    for i in range(a, len(t) + a):
        total = total + i
    return total


@given(t=st.lists(st.integers(-5, 5), max_size=6).map(tuple), a=st.integers(-3, 4))
def test_for_loops_over_ranges_are_pythons(t: tuple[int, ...], a: int) -> None:
    assert _entailed(_Translator(_ranges)([concrete(t, tuple[int, ...]), z3.IntVal(a)]) == _ranges(t, a))


def _arithmetic(a: int, b: int) -> int:
    return a // 4 * 1000 + a % 3 * 100 + (-a) // 7 + max(1, a // 4) * 10 + min(a, b) - max(b, a % 5)


@given(a=st.integers(-50, 50), b=st.integers(-50, 50))
def test_floor_division_modulo_min_and_max_are_pythons(a: int, b: int) -> None:
    assert _value(_Translator(_arithmetic)([z3.IntVal(a), z3.IntVal(b)])) == _arithmetic(a, b)


def _built(t: tuple[int, ...], x: int) -> tuple[int, int] | None:
    kept: tuple[int, ...] = (x, x + 1)
    for i in range(min(len(t), 3)):
        kept = kept + (t[i],)
    if len(kept) > 4:
        return kept[-1], len(kept)
    return None


@given(t=st.lists(st.integers(-5, 5), max_size=6).map(tuple), x=st.integers(-5, 5))
def test_a_declared_tuple_literal_and_an_optional_pair_returned_are_pythons(t: tuple[int, ...], x: int) -> None:
    got = _Translator(_built)([concrete(t, tuple[int, ...]), z3.IntVal(x)])
    want = _built(t, x)
    assert _entailed(got.none if want is None else z3.And(z3.Not(got.none), got.value.item0 == want[0], got.value.item1 == want[1]))


def test_the_guard_is_generated_and_its_loop_entered_past_an_early_return() -> None:
    """guard_start builds a Guard of empty tuples; guard_feed returns early for window 0 and is
    entered at its loop otherwise; guard_run returns a pair or None."""
    feed, run = generated(m.guard_feed), generated(m.guard_run)
    for k, stream in ((0, (1, 1)), (1, (5,)), (4, (1, 1, 1, 1)), (8, (1, 2) * 4), (9, (1, 2, 3, 1, 2, 3))):
        got, want = run(z3.IntVal(k), concrete(stream, tuple[int, ...])), m.guard_run(k, stream)
        assert _entailed(got.none if want is None else z3.And(z3.Not(got.none), got.value.item0 == want[0], got.value.item1 == want[1]))
    g, c = fresh(m.Guard, "g"), z3.Int("c")
    entered = feed.entered(g, c)  # type: ignore[attr-defined]
    assert entered["_index"].eq(z3.IntVal(1)) and entered["verdict"].eq(z3.IntVal(m.KEPT))
    got, looped = feed(g, c), feed.loop(**entered)  # type: ignore[attr-defined]
    equal = [same_items(a, b) for a, b in ((got.item0.ids, looped.item0.ids), (got.item0.counts, looped.item0.counts))]
    assert _entailed(z3.Implies(z3.And(g.limit >= 1, *facts(g)), z3.And(*equal, got.item0.limit == looped.item0.limit, got.item1 == looped.item1)))


def _members(t: tuple[int, ...], x: int) -> int:
    if x in t and x + 1 not in t:
        return 1
    if x not in t:
        return 2
    return 3


@given(t=st.lists(st.integers(-3, 3), max_size=6).map(tuple), x=st.integers(-4, 4))
def test_in_and_not_in_a_tuple_are_pythons(t: tuple[int, ...], x: int) -> None:
    assert _entailed(_Translator(_members)([concrete(t, tuple[int, ...]), z3.IntVal(x)]) == _members(t, x))


USABLE, STARTUP = generated(default_model.usable), generated(default_model.startup)
dm_keys = st.tuples(st.sampled_from(["p", "q"]), st.sampled_from(["a", "b"]))
dm_key_tuples = st.lists(dm_keys, max_size=4).map(tuple)
dm_worlds = st.builds(default_model.World, dm_key_tuples, st.none() | dm_key_tuples, st.lists(st.sampled_from(["p", "q"]), max_size=2).map(tuple), dm_key_tuples)


@given(world=dm_worlds, key=dm_keys)
def test_in_a_tuple_of_pairs_and_a_for_loop_over_a_field_are_pythons(world: default_model.World, key: default_model.Key) -> None:
    """usable: a pair in a tuple of pairs, a str in a tuple of strs, an optional tuple field
    shown not None; startup: `for key in world.chain` (a field), returning an optional pair."""
    w = concrete(world, default_model.World)
    assert _entailed(USABLE(w, concrete(key, default_model.Key)) == default_model.usable(world, key))
    got, want = STARTUP(w), default_model.startup(world)
    assert _entailed(got.none if want is None else z3.And(z3.Not(got.none), got.value.item0 == want[0], got.value.item1 == want[1]))


OFFERED = generated(m.offered)
SIGNS: tuple[int, ...] = (3, -1, 4, -1, 5)


def _over_constant(t: tuple[int, ...], x: int) -> int:
    total = 0
    for sign in SIGNS:
        if sign in t:
            total = total * 2 + sign
        if sign == x:
            continue
        total = total + len(SIGNS) + SIGNS[-1]
    return total


@given(t=st.lists(st.integers(-2, 5), max_size=4).map(tuple), x=st.integers(-2, 5))
def test_a_for_loop_over_a_declared_module_constant_is_pythons(t: tuple[int, ...], x: int) -> None:
    """A module constant declared a tuple of ints: walked by a for loop, subscripted, its len."""
    assert _entailed(_Translator(_over_constant)([concrete(t, tuple[int, ...]), z3.IntVal(x)]) == _over_constant(t, x))


level_subsets = st.lists(st.sampled_from(m.LEVELS), unique=True, max_size=7).map(lambda ls: tuple(x for x in m.LEVELS if x in ls))
any_levels = st.lists(st.sampled_from([*m.LEVELS, "other"]), max_size=4).map(tuple)  # any tuple, repeats and strangers too
any_maps = st.lists(st.tuples(st.sampled_from([*m.LEVELS, "other"]), st.none() | st.sampled_from(["w", "x"])), max_size=5).map(tuple)


@given(reasoning=st.booleans(), ladder=any_maps, reasoning_default=level_subsets | any_levels, plain=level_subsets | any_levels)
def test_offered_a_loop_over_levels_calling_a_loop_is_pythons(reasoning: bool, ladder: m.LevelMap, reasoning_default: tuple[str, ...], plain: tuple[str, ...]) -> None:
    """offered: `for level in LEVELS` (a declared module constant), entry_of's loop called in its
    body, a tuple grown by `kept = kept + (level,)`."""
    defaults = m.ThinkingDefaults(reasoning_default, plain)
    got, want = OFFERED(z3.BoolVal(reasoning), concrete(ladder, m.LevelMap), concrete(defaults, m.ThinkingDefaults)), m.offered(reasoning, ladder, defaults)
    assert _entailed(z3.And(got.length == len(want), *(item(got, k) == z3.StringVal(level) for k, level in enumerate(want))))
