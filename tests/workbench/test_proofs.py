"""A z3 proof that gets no answer in time is a failure, never a proof: spec.proofs' limit on every
solver call, its typed ProofTimeout, and the law report's verdict on a law whose proof timed out."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import z3

from spec import evidence, proofs, report
from spec.evidence import Evidence, LawFailed, encoding
from spec.registry import PROVED, Law


@encoding("bend.infer.flag")
def cube(x: z3.ArithRef) -> z3.ArithRef:
    """An encoding (of no real function's behaviour: the proof never reaches its tie) whose claim
    below z3 cannot decide quickly: nonlinear integer arithmetic."""
    return x * x * x


X, Y, Z = z3.Ints("x y z")


def three_cubes() -> z3.BoolRef:
    """No three cubes sum to 33: false (a solution with 16-digit numbers exists), which z3 neither
    refutes nor finds a counterexample for within a second."""
    return cube(X) + cube(Y) + cube(Z) != 33


@pytest.fixture
def short_global_limit() -> Iterator[int]:
    """z3's global timeout lowered for one test (the one spec.proofs sets, put back after)."""
    z3.set_param("timeout", 300)
    try:
        yield 300
    finally:
        z3.set_param("timeout", proofs.LIMIT_MS)


def test_importing_the_proof_machinery_limits_every_solver() -> None:
    from spec import z3gen  # the generated encodings' termination checks take the same limit

    assert z3.get_param("timeout") == str(proofs.LIMIT_MS)
    assert vars(z3gen)["LIMIT_MS"] == proofs.LIMIT_MS


def test_a_timeout_is_a_typed_failure_naming_the_claim_and_the_limit() -> None:
    start = time.perf_counter()
    with pytest.raises(proofs.ProofTimeout) as raised:
        proofs.prove(three_cubes, label="no three cubes make 33", ms=300)
    assert time.perf_counter() - start < 10
    failure = raised.value
    assert isinstance(failure, LawFailed)
    assert (failure.label, failure.ms) == ("no three cubes make 33", 300)
    assert "no three cubes make 33" in str(failure) and "300 ms" in str(failure) and "not proved" in str(failure)


def test_a_lemma_that_times_out_is_a_failure() -> None:
    a, b, c = z3.Ints("a b c")
    with pytest.raises(proofs.ProofTimeout, match="cubes, about no code"):
        proofs.lemma(lambda: a * a * a + b * b * b + c * c * c != 33, label="cubes, about no code", ms=300)


def test_a_proof_without_its_own_limit_still_gives_up(short_global_limit: int) -> None:
    """spec.evidence.prove with no ms: the global limit spec.proofs set ends it; unknown fails."""
    start = time.perf_counter()
    with pytest.raises(LawFailed, match="could not decide .*unknown"):
        evidence.prove(three_cubes, label="no three cubes make 33")
    assert time.perf_counter() - start < 10


def test_a_law_whose_proof_times_out_fails_in_the_report() -> None:
    def check() -> Evidence:
        return proofs.prove(three_cubes, label="no three cubes make 33", ms=300)

    law = Law("infer", "three_cubes_timeout", "S0", "A claim z3 cannot decide in time.", PROVED, check)
    result = report.run(law)
    assert result.status == report.FAIL
    assert "no three cubes make 33" in result.evidence and "300 ms" in result.evidence and "not proved" in result.evidence


def test_a_counterexample_is_still_a_counterexample_not_a_timeout() -> None:
    with pytest.raises(LawFailed, match="counterexample") as raised:
        proofs.prove(lambda: cube(X) != 8, label="no cube is 8", ms=5_000)
    assert not isinstance(raised.value, proofs.ProofTimeout)
