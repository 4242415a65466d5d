"""The evidence helpers find counterexamples, say what they covered, and claim no more than
they ran: whole finite domains and z3 are proved, anything we bounded is bounded,
Hypothesis is tested."""

from __future__ import annotations

import pytest
import z3
from hypothesis import strategies as st

from spec import evidence
from spec.evidence import Bound, Evidence, Finite, boolean, domain, encoding
from spec.registry import BOUNDED, PROVED, PROVED_FOR_ENCODING, TESTED

SEVEN = Finite("levels", tuple(range(7)))

# Two stand-ins for functions of the code: an encoding (by the name of a function it does not
# have to match here, as prove never looks the function up; tie does) and a real function to watch.
square = encoding("bend.effort.square")(lambda x: x * x)
LEVEL = f"{__name__}.level"


def level(flag: bool) -> int:
    return 1 if flag else 0


def test_exhaust_over_a_whole_domain_is_proved() -> None:
    found = evidence.exhaust(domain(SEVEN, boolean("flag")), lambda n, b: n < 7)
    assert (found.strength, found.sentence) == (PROVED, "exhaustive: 7 levels x 2 flag (14 cases)")
    assert [p.object for p in found.proofs] == ["whole domain: 7 levels x 2 flag"]


def test_exhaust_over_a_bound_is_bounded_and_says_the_bound() -> None:
    stacks = Bound("stacks", tuple(range(4)), bound="at most 3 layers")
    found = evidence.exhaust(domain(SEVEN, stacks), lambda n, s: True)
    assert found.strength == BOUNDED
    assert found.sentence == "bounded: 7 levels x 4 stacks; bound: at most 3 layers (28 cases)"


def test_a_restricted_domain_says_what_it_keeps() -> None:
    found = evidence.exhaust(domain(SEVEN, where=lambda n: n % 2 == 0, where_says="even"), lambda n: n % 2 == 0)
    assert (found.strength, found.sentence) == (PROVED, "exhaustive: 7 levels (even) (4 cases)")
    with pytest.raises(ValueError, match="must say"):
        domain(SEVEN, where=lambda n: True)


def test_finite_types_are_whole_and_bounds_say_what_they_bound() -> None:
    with pytest.raises(ValueError, match="repeats"):
        Finite("x", (1, 1))
    with pytest.raises(ValueError, match="no value"):
        Finite("x", ())
    with pytest.raises(ValueError, match="does not say"):
        Bound("x", (1,))


def test_exhaust_names_the_failing_case() -> None:
    with pytest.raises(evidence.LawFailed, match=r"fails for \(5,\)"):
        evidence.exhaust(domain(SEVEN), lambda n: n != 5)


def test_an_empty_domain_proves_nothing() -> None:
    with pytest.raises(evidence.LawFailed, match="no point"):
        evidence.exhaust(domain(SEVEN, where=lambda n: False, where_says="none"), lambda n: True)


def test_bounded_says_bounded() -> None:
    found = evidence.bounded(range(3), lambda n: True, label="t = 0..2")
    assert (found.strength, found.sentence) == (BOUNDED, "bounded: t = 0..2 (3 cases)")


def test_reachable_over_whole_domains_is_proved_and_counts_states_and_edges() -> None:
    # a counter modulo 5 with +1 and +2: 5 states, 10 transitions
    found = evidence.reachable(
        domain(Finite("start", (0,))),
        domain(Finite("step", (1, 2))),
        lambda s, a: ((s[0] + a[0]) % 5,),
        lambda s: 0 <= s[0] < 5,
        label="mod 5",
    )
    assert found.strength == PROVED
    assert found.sentence.endswith("(5 reachable states, 10 transitions)")


def test_reachable_with_a_bound_is_bounded() -> None:
    found = evidence.reachable(
        domain(Bound("start", (0,), bound="one start of many")),
        domain(Finite("step", (1,))),
        lambda s, a: ((s[0] + a[0]) % 3,),
        lambda s: True,
        label="mod 3",
    )
    assert found.strength == BOUNDED


def test_reachable_finds_a_bad_state_and_a_bad_transition() -> None:
    start, plus_one = domain(Finite("start", (0,))), domain(Finite("step", (1,)))
    with pytest.raises(evidence.LawFailed, match=r"reachable state \(3,\)"):
        evidence.reachable(start, plus_one, lambda s, a: ((s[0] + 1) % 5,), lambda s: s[0] != 3, label="mod 5")
    with pytest.raises(evidence.LawFailed, match=r"\(4,\) --\(1,\)--> \(0,\)"):
        evidence.reachable(
            start, plus_one, lambda s, a: ((s[0] + 1) % 5,), lambda s: True, transition=lambda a, _, b: b > a, label="up"
        )


def test_explore_is_bounded() -> None:
    found = evidence.explore([0], lambda s: [("+1", (s + 1) % 5)], lambda s: True, label="mod 5 from 0")
    assert (found.strength, found.sentence) == (BOUNDED, "bounded: mod 5 from 0 (5 reachable states, 5 transitions)")


def test_prove_by_unsat_and_counterexample_by_sat() -> None:
    x = z3.Int("x")
    found = evidence.prove(lambda: square(x) >= x, label="squares")
    assert (found.strength, found.sentence) == (PROVED_FOR_ENCODING, "z3: unsat (squares); not tied: bend.effort.square")
    assert found.about == {"bend.effort.square"}
    with pytest.raises(evidence.LawFailed, match="z3 counterexample"):
        evidence.prove(lambda: square(x) > 0, label="positive", assumptions=[x < 10])


def test_a_proof_from_contradictory_assumptions_is_refused() -> None:
    x = z3.Int("x")
    with pytest.raises(evidence.LawFailed, match="vacuous"):
        evidence.prove(lambda: square(x) > 100, label="anything", assumptions=[x > 1, x < 0])


def test_induction_is_as_strong_as_its_weaker_half_and_about_its_function() -> None:
    x = z3.Int("x")
    proved = evidence.exhaust(domain(boolean("b")), lambda b: level(b) in (0, 1), about=[level])
    encoded = evidence.prove(lambda: square(x) >= x, label="squares")
    bounded = evidence.bounded([1], lambda n: level(n == 1) == 1, label="one")
    assert evidence.induction(proved, proved, of=LEVEL, label="n").strength == PROVED
    assert evidence.induction(proved, proved, of=LEVEL, label="n").sentence.startswith("induction on n (unfolding " + LEVEL)
    with pytest.raises(evidence.LawFailed, match="the step is not about"):
        evidence.induction(proved, bounded, of=LEVEL, label="n")
    with pytest.raises(evidence.LawFailed, match="the base is not about"):
        evidence.induction(encoded, proved, of=LEVEL, label="n")


def test_all_of_takes_the_weakest_and_also_the_first() -> None:
    proved = evidence.exhaust(domain(boolean("b")), lambda b: True)
    tested = evidence.examples(lambda n: True, n=st.integers(0, 3))
    assert evidence.all_of(proved, tested).strength == TESTED
    assert evidence.also(tested, proved).strength == TESTED  # a stronger added part proves nothing of the whole
    assert evidence.also(proved, tested).strength == PROVED


def test_production_evidence_rides_beside_the_model() -> None:
    proved = evidence.exhaust(domain(boolean("b")), lambda b: True)
    found = proved.with_production(Evidence(BOUNDED, "9 cases"))
    assert (found.strength, found.sentence, found.production) == (PROVED, "exhaustive: 2 b (2 cases); production: 9 cases", BOUNDED)
    assert evidence.all_of(found, proved).production == BOUNDED


def test_examples_counts_what_the_profile_ran() -> None:
    found = evidence.examples(lambda n: n + 0 == n, n=st.integers())
    assert found.strength == TESTED
    assert found.sentence.startswith("hypothesis: ") and "examples (profile laws)" in found.sentence
    assert int(found.sentence.split()[1].replace(",", "")) > 50


def test_examples_finds_a_counterexample() -> None:
    with pytest.raises(evidence.LawFailed, match="977"):
        evidence.examples(lambda n: n != 977, n=st.sampled_from(range(900, 1000)))
