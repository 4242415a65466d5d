"""What "proved" means: each hole a reviewer found in the evidence helpers is refused, with the
reason in one line; a proof over an encoding is proved about the code only through a tie over
the function's whole domain, and proved-for-encoding otherwise."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import z3
from hypothesis import strategies as st

import bend.effort as effort
import bend.infer as m
from spec import evidence
from spec.evidence import Evidence, EvidenceError, Finite, LawFailed, boolean, domain, encoding
from spec.registry import BOUNDED, PROVED, PROVED_FOR_ENCODING, TESTED, Law, StrengthError

ROOT = Path(__file__).resolve().parents[2]


@encoding("bend.infer.flag")
def flag(attempt: z3.ArithRef, supported: z3.BoolRef, free: z3.BoolRef) -> z3.BoolRef:
    """The z3 encoding of bend.infer.flag, as a law file writes one."""
    return z3.If(attempt == 0, z3.And(supported, free), supported)


@encoding("bend.infer.after")
def after(attempt: z3.ArithRef, retries: z3.ArithRef, called: z3.BoolRef) -> z3.ArithRef:
    return z3.If(called, 0, z3.If(attempt + 1 <= retries, 1, 2))


@encoding("bend.effort.rank")
def rank(level: z3.SeqRef) -> z3.ArithRef:
    term: z3.ArithRef = z3.IntVal(-1)
    for position, name in enumerate(effort.LADDER):
        term = z3.If(level == z3.StringVal(name), position, term)
    return term


A, SUPPORTED, FREE = z3.Int("attempt"), z3.Bool("supported"), z3.Bool("free")


def a_retry_flags_iff_supported() -> z3.BoolRef:
    return z3.Implies(A > 0, flag(A, SUPPORTED, FREE) == SUPPORTED)


# -- the six holes ---------------------------------------------------------------------------------------


def test_proved_evidence_built_directly_is_refused() -> None:
    with pytest.raises(EvidenceError, match="made only by the evidence helpers"):
        Evidence(PROVED, "production runs bend.tiny.pick itself")
    with pytest.raises(EvidenceError):
        Evidence(PROVED_FOR_ENCODING, "z3: unsat")
    with pytest.raises(EvidenceError):
        Evidence(BOUNDED, "9 cases", production=PROVED)
    with pytest.raises(EvidenceError, match="a tie of strength proved is made only by"):
        evidence.Tie("bend.infer.flag", PROVED, "trust me")
    assert Evidence(BOUNDED, "9 cases").strength == BOUNDED  # what ran, said plainly, needs no helper


def test_a_proof_of_true_beside_examples_proves_nothing() -> None:
    with pytest.raises(LawFailed, match="calls no encoding"):
        evidence.also(evidence.prove(lambda: z3.BoolVal(True), label="nothing"), evidence.examples(lambda n: True, n=st.integers()))
    tested = evidence.examples(lambda n: True, n=st.integers(0, 3))
    proved = evidence.exhaust(domain(boolean("b")), lambda b: True)
    assert evidence.also(tested, proved).strength == TESTED  # a stronger part added after never lifts the claim


def test_an_expression_equal_to_itself_is_refused() -> None:
    with pytest.raises(LawFailed, match="simplifies to True"):
        evidence.prove(lambda: flag(A, SUPPORTED, FREE) == flag(A, SUPPORTED, FREE), label="E == E")
    with pytest.raises(LawFailed, match="simplifies to True"):
        # the reviewer's form: the encoding, and the seed's rule written again as the same term
        evidence.prove(lambda: flag(A, SUPPORTED, FREE) == z3.If(A == 0, z3.And(SUPPORTED, FREE), SUPPORTED), label="flag")


def test_a_contradictory_premise_is_refused() -> None:
    x = z3.Int("x")
    with pytest.raises(LawFailed, match="premises are unsatisfiable together"):
        evidence.prove(lambda: z3.Implies(z3.And(x > 0, x < 0), flag(x, SUPPORTED, FREE)), label="x > 0 and x < 0")
    with pytest.raises(LawFailed, match=r"premise x\*x \+ 1 == 0 is unsatisfiable"):
        evidence.prove(lambda: z3.Implies(x * x + 1 == 0, flag(x, SUPPORTED, FREE)), label="x * x = -1")
    with pytest.raises(LawFailed, match="vacuous"):
        evidence.prove(a_retry_flags_iff_supported, label="assumed away", assumptions=[A > 1, A < 1])
    with pytest.raises(LawFailed, match="vacuous"):  # under a quantifier too
        evidence.prove(lambda: z3.ForAll([x], z3.Implies(z3.And(x > 1, x < 1), flag(x, SUPPORTED, FREE))), label="forall")


def test_a_claim_assumed_in_its_premises_is_refused() -> None:
    y = z3.Int("y")
    with pytest.raises(LawFailed, match="calls no encoding"):
        evidence.prove(lambda: y == 1, label="y", assumptions=[y == 1])
    with pytest.raises(LawFailed, match="holds with bend.infer.flag uninterpreted: it would hold for any code"):
        evidence.prove(
            lambda: flag(A, SUPPORTED, FREE) == SUPPORTED,
            label="writes iff not fails",
            assumptions=lambda: [flag(A, SUPPORTED, FREE) == SUPPORTED],
        )
    r, c = z3.Int("retries"), z3.Bool("called")
    with pytest.raises(LawFailed, match="would hold for any code"):
        evidence.prove(
            lambda: z3.Implies(z3.And(after(A, r, c) > r, r > 0), after(A, r, c) > 0), label="above a positive is positive"
        )


def test_an_induction_whose_halves_are_not_about_its_function_is_refused() -> None:
    x = z3.Int("x")
    with pytest.raises(LawFailed, match="calls no encoding"):
        evidence.induction(evidence.prove(lambda: z3.BoolVal(True), label="base"), evidence.prove(lambda: x == x, label="step"), of="bend.infer.flag", label="n")
    unrelated = evidence.exhaust(domain(boolean("b")), lambda b: True)
    step = evidence.prove(a_retry_flags_iff_supported, label="step")
    with pytest.raises(LawFailed, match="the base is not about bend.infer.flag"):
        evidence.induction(unrelated, step, of="bend.infer.flag", label="n")
    base = evidence.exhaust(domain(boolean("s"), boolean("f")), lambda s, f: m.flag(0, s, f) == (s and f), about=[m.flag])
    with pytest.raises(LawFailed, match="is not about bend.infer.after"):
        evidence.induction(base, step, of="bend.infer.after", label="n")
    found = evidence.induction(base, step, of="bend.infer.flag", label="attempts")
    assert found.strength == PROVED_FOR_ENCODING  # the step's encoding is not tied to the code
    assert found.about == {"bend.infer.flag"}


# -- what a proof is about ------------------------------------------------------------------------------------


def test_a_property_that_never_calls_the_function_it_names_is_refused() -> None:
    with pytest.raises(LawFailed, match="never called bend.infer.flag"):
        evidence.exhaust(domain(boolean("b")), lambda b: True, about=[m.flag])


def test_a_proof_is_about_the_code_only_through_a_tie_over_the_whole_domain() -> None:
    untied = evidence.prove(a_retry_flags_iff_supported, label="retries")
    assert untied.strength == PROVED_FOR_ENCODING
    assert untied.sentence == "z3: unsat (retries); not tied: bend.infer.flag"
    cases = ((a, s, f) for a in range(9) for s in (False, True) for f in (False, True))
    bounded_tie = evidence.tie(flag, m.flag, (cases, "attempts 0..8, every flag"))
    assert bounded_tie.strength == BOUNDED
    assert evidence.prove(a_retry_flags_iff_supported, label="retries", ties=[bounded_tie]).strength == PROVED_FOR_ENCODING
    # A whole domain: bend.effort.rank takes a level of the ladder (its precondition), seven values.
    whole_tie = evidence.tie(rank, effort.rank, domain(Finite("levels", effort.LADDER)))
    assert whole_tie.strength == PROVED
    level = z3.String("level")
    on_ladder = z3.Or([level == z3.StringVal(name) for name in effort.LADDER])
    proof = evidence.prove(lambda: z3.Implies(on_ladder, z3.And(rank(level) >= 0, rank(level) < 7)), label="ranks", ties=[whole_tie])
    assert proof.strength == PROVED
    (covers,) = proof.proofs
    assert covers.object.startswith("z3 encoding of bend.effort.rank; tied to bend.effort.rank: exhaustive: 7 levels")
    assert covers.claim and "fails with bend.effort.rank uninterpreted" in covers.checks


def test_a_tie_checks_the_encoding_against_the_function_it_names() -> None:
    wrong = encoding("bend.infer.flag")(lambda a, s, f: z3.And(s, f))
    with pytest.raises(LawFailed, match="gives False where the function gives True"):
        evidence.tie(wrong, m.flag, (((1, True, False),), "one retry"))
    with pytest.raises(LawFailed, match="tied to bend.infer.after, another function"):
        evidence.tie(flag, m.after, (((0, True, True),), "one"))
    with pytest.raises(LawFailed, match="is not an @encoding"):
        evidence.tie(lambda a, s, f: s, m.flag, (((0, True, True),), "one"))


def test_an_encoding_names_a_function_of_the_code() -> None:
    with pytest.raises(ValueError, match="not 'spec.oracles.x'"):
        encoding("spec.oracles.x")


def test_a_built_term_is_not_a_claim() -> None:
    with pytest.raises(LawFailed, match="as a function"):
        evidence.prove(flag(A, SUPPORTED, FREE), label="eager")


def test_identical_proves_that_production_runs_the_model() -> None:
    assert evidence.identical(m.flag, m.flag, label="the flag").strength == PROVED
    with pytest.raises(LawFailed, match="is not the model's bend.infer.flag"):
        evidence.identical(m.after, m.flag, label="the flag")


def test_the_registry_refuses_proved_labels_on_proofs_for_an_encoding() -> None:
    law = Law("a", "x", "", "", PROVED, lambda: evidence.prove(a_retry_flags_iff_supported, label="retries"))
    with pytest.raises(StrengthError, match="labelled proved but its evidence is proved-for-encoding"):
        law.admit(law.check())
    assert Law("a", "x", "", "", PROVED_FOR_ENCODING, law.check).admit(law.check()).strength == PROVED_FOR_ENCODING


def test_only_the_evidence_module_holds_the_seal() -> None:
    """No other file of the workbench reaches for the helpers' seal to make proved evidence."""
    for path in [*(ROOT / "spec").rglob("*.py"), *(ROOT / "bridge").rglob("*.py"), *(ROOT / "tests").rglob("*.py")]:
        if path.parent.name == "spec" and path.name in ("evidence.py", "z3gen.py"):
            continue  # the helpers, and the encodings generated from the code
        names = {n.attr for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(n, ast.Attribute)}
        names |= {n.id for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(n, ast.Name)}
        assert not {"_SEAL", "_made"} & names, f"{path.relative_to(ROOT)} makes evidence with the helpers' seal"


def test_an_unfinished_domain_is_a_bound_not_a_finite_type() -> None:
    """The convention a tie relies on, restated: a range we chose is a Bound and gives bounded evidence."""
    part = evidence.Bound("attempts", tuple(range(3)), bound="attempts 0..2")
    found = evidence.exhaust(domain(part, boolean("s")), lambda a, s: True)
    assert found.strength == BOUNDED
    assert Finite("levels", (0, 1)).values == (0, 1)


def test_the_judges_import_no_code_they_judge() -> None:
    """The oracles restate the seeds' rules from the seeds' text: none imports the model (bend/) or
    production (eukhe), so no law judged by an oracle judges with the function it checks."""
    for path in sorted((ROOT / "spec" / "oracles").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            for name in names:
                assert name.split(".")[0] not in {"bend", "eukhe"}, f"{path.relative_to(ROOT)}:{node.lineno} imports {name}"


def test_a_lemma_is_mathematics_and_proves_no_law_alone() -> None:
    d, n = z3.Ints("d n")
    fact = evidence.lemma(lambda: z3.Implies(z3.And(d >= 0, n >= 0, d + 1 > n + 1), d >= n + 1), label="past the limit")
    assert fact.strength == PROVED and fact.proofs[0].lemma
    with pytest.raises(LawFailed, match="it is about code"):
        evidence.lemma(a_retry_flags_iff_supported, label="retries")
    with pytest.raises(LawFailed, match="simplifies to True"):
        evidence.lemma(lambda: d == d, label="d")
    alone = Law("a", "x", "", "", PROVED, lambda: fact)
    with pytest.raises(StrengthError, match="no proof of its evidence is about the code"):
        alone.admit(alone.check())
    code = evidence.exhaust(domain(boolean("s"), boolean("f")), lambda s, f: m.flag(0, s, f) == (s and f), about=[m.flag])
    beside = Law("a", "x", "", "", PROVED, lambda: evidence.all_of(code, fact))
    assert beside.admit(beside.check()).strength == PROVED
    assert Law("a", "x", "", "", BOUNDED, lambda: fact).admit(fact).strength == PROVED  # a weaker label asks for no proof
