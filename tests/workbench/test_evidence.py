"""The evidence helpers find counterexamples and say what they covered."""

from __future__ import annotations

import pytest
import z3
from hypothesis import strategies as st

from spec import evidence


def test_exhaust_counts_every_case() -> None:
    assert evidence.exhaust(range(7), lambda n: n < 7, label="7 numbers") == "exhaustive: 7 numbers (7 cases)"


def test_exhaust_names_the_failing_case() -> None:
    with pytest.raises(evidence.LawFailed, match="fails for 5"):
        evidence.exhaust(range(7), lambda n: n != 5, label="7 numbers")


def test_an_empty_domain_proves_nothing() -> None:
    with pytest.raises(evidence.LawFailed, match="no case"):
        evidence.exhaust([], lambda n: True, label="nothing")


def test_bounded_says_bounded() -> None:
    assert evidence.bounded(range(3), lambda n: True, label="t = 0..2").startswith("bounded: t = 0..2 (3 cases)")


def test_reachable_visits_each_state_once_and_counts_edges() -> None:
    # a counter modulo 5 with +1 and +2: 5 states, 10 transitions
    text = evidence.reachable([0], lambda s: [("+1", (s + 1) % 5), ("+2", (s + 2) % 5)], lambda s: 0 <= s < 5, label="mod 5")
    assert text == "exhaustive: mod 5 (5 reachable states, 10 transitions)"


def test_reachable_finds_a_bad_state_and_a_bad_transition() -> None:
    with pytest.raises(evidence.LawFailed, match="reachable state 3"):
        evidence.reachable([0], lambda s: [("+1", (s + 1) % 5)], lambda s: s != 3, label="mod 5")
    with pytest.raises(evidence.LawFailed, match="4 --'\\+1'--> 0"):
        evidence.reachable([0], lambda s: [("+1", (s + 1) % 5)], lambda s: True, transition=lambda a, _, b: b > a, label="up")


def test_prove_by_unsat_and_counterexample_by_sat() -> None:
    x = z3.Int("x")
    assert evidence.prove(x * x >= 0, label="squares") == "z3: unsat (squares)"
    with pytest.raises(evidence.LawFailed, match="z3 counterexample"):
        evidence.prove(x > 0, label="positive", assumptions=[x < 10])


def test_examples_counts_what_the_profile_ran() -> None:
    text = evidence.examples(lambda n: n + 0 == n, n=st.integers())
    assert text.startswith("hypothesis: ") and "examples (profile laws)" in text
    assert int(text.split()[1].replace(",", "")) > 50


def test_examples_finds_a_counterexample() -> None:
    with pytest.raises(evidence.LawFailed, match="977"):
        evidence.examples(lambda n: n != 977, n=st.sampled_from(range(900, 1000)))
