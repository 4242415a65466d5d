"""The proofs of the quirk-rulebook laws (spec.laws.infer: quirk_unknown_when_none,
quirk_known_when_some, quirk_highest_wins, quirk_order_free, quirk_unknown_rejected,
quirk_clash_rejected, quirk_compile_order_free; exhaustion with abstraction on bend.infer's own
code) hold of the model as it is, and refuse it with a small, plausible bug: each wrong model
below is one edit of one function of bend.infer (lookup, setting, compile_book, _least,
_error_key, value_type, canonical), run in the module's own names, and the proof of each law the
bug breaks raises LawFailed on it.

Only the proofs run here: the bounded parts beside them (the lookup universe, the pools of rules
on the model and on production, the Hypothesis hunt) are replaced by a stand-in, so a refusal is
the proof's own and the module stays fast (the laws run whole in tests/laws).

Nine of these wrong models were once accepted by the proofs (marked "once accepted" below): a
rule's target read by a prefix (the searches' strings could be read beyond ``==``), compat read
after the rules (lookup's compat step did not look at the calls made), an unknown directive
singled out by identity (canonical's problem was only a token), _least comparing with the
list's first error (its step read a real list), _error_key without the kind (nothing checked
that a key names one error), and four loops that count the items they have read (the step
runs on a head alone and cannot see a count: the premise that the loop carries no state is
now checked on the source, spec.proofs.stateless_loop)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from bend import infer as m
from spec.evidence import Evidence, LawFailed
from spec.laws import infer as laws
from spec.registry import BOUNDED, PROVED
from wrong_models import edited

UNKNOWN_WHEN_NONE = "quirk_unknown_when_none"
KNOWN_WHEN_SOME = "quirk_known_when_some"
HIGHEST_WINS = "quirk_highest_wins"
ORDER_FREE = "quirk_order_free"
UNKNOWN_REJECTED = "quirk_unknown_rejected"
CLASH_REJECTED = "quirk_clash_rejected"
COMPILE_ORDER_FREE = "quirk_compile_order_free"
LAWS = (UNKNOWN_WHEN_NONE, KNOWN_WHEN_SOME, HIGHEST_WINS, ORDER_FREE, UNKNOWN_REJECTED, CLASH_REJECTED, COMPILE_ORDER_FREE)


class Wrong:
    """A wrong model: ``function`` of bend.infer with each edit's text (found once in its source)
    replaced; ``refused_by`` names the laws whose statement the bug breaks."""

    def __init__(self, function: str, refused_by: tuple[str, ...], *edits: tuple[str, str]) -> None:
        self.function, self.refused_by, self.edits = function, refused_by, edits


SLOTS = "((HOST, host), (MODEL, query.model_id), (FAMILY, family))"
COMPAT_FIRST = "    for name, value in query.compat:\n        if name == directive:\n            return Answer(True, value, COMPAT)\n"
NO_RULE = "            return answer\n    return UNKNOWN"

WRONG: dict[str, Wrong] = {
    # lookup: the order of the layers, explicit compat, the end of the search and its default
    "the lowest layer wins (family > model > host)": Wrong(
        "lookup", (HIGHEST_WINS,), (SLOTS, "((FAMILY, family), (MODEL, query.model_id), (HOST, host))")),
    "the model layer above the host": Wrong(
        "lookup", (HIGHEST_WINS,), (SLOTS, "((MODEL, query.model_id), (HOST, host), (FAMILY, family))")),
    "the slot search stops one early (the family never asked)": Wrong(
        "lookup", (KNOWN_WHEN_SOME, HIGHEST_WINS), (SLOTS, "((HOST, host), (MODEL, query.model_id))")),
    "explicit compat ignored": Wrong(
        "lookup", (KNOWN_WHEN_SOME, HIGHEST_WINS), (COMPAT_FIRST, "")),
    "explicit compat read after the rules": Wrong(  # once accepted
        "lookup", (HIGHEST_WINS,), (COMPAT_FIRST, ""), (NO_RULE, "            return answer\n" + COMPAT_FIRST + "    return UNKNOWN")),
    "a compat entry of another directive answers (== typed !=)": Wrong(
        "lookup", (UNKNOWN_WHEN_NONE, HIGHEST_WINS), ("        if name == directive:\n", "        if name != directive:\n")),
    "a compat entry of false ignored (read by its truth)": Wrong(
        "lookup", (KNOWN_WHEN_SOME, HIGHEST_WINS), ("        if name == directive:\n", "        if name == directive and value:\n")),
    "a setting of false read as no setting": Wrong(
        "lookup", (KNOWN_WHEN_SOME, HIGHEST_WINS), ("        if answer.known:\n", "        if answer.known and answer.value:\n")),
    "no rule: a known default (false, at the family layer)": Wrong(
        "lookup", (UNKNOWN_WHEN_NONE,), (NO_RULE, "            return answer\n    return Answer(True, False, FAMILY)")),
    "the host found for the wire scope whatever the directive": Wrong(
        "lookup", (KNOWN_WHEN_SOME, HIGHEST_WINS), ("scope_of(directive))", "WIRE)")),
    # setting: the search of the compiled settings
    "setting answers at the compat layer (copied from lookup's compat search)": Wrong(
        "setting", (HIGHEST_WINS,), ("return Answer(True, value, layer)", "return Answer(True, value, COMPAT)")),
    "setting ignores the layer": Wrong(
        "setting", (UNKNOWN_WHEN_NONE, HIGHEST_WINS), ("(at, where, name) == (layer, target, directive)", "(where, name) == (target, directive)")),
    "setting ignores the directive": Wrong(
        "setting", (UNKNOWN_WHEN_NONE, HIGHEST_WINS), ("(at, where, name) == (layer, target, directive)", "(at, where) == (layer, target)")),
    "a rule's target applies to every id it begins": Wrong(  # once accepted
        "setting", (UNKNOWN_WHEN_NONE, HIGHEST_WINS),
        ("(at, where, name) == (layer, target, directive)", "at == layer and target.startswith(where) and name == directive")),
    # compile_book: names outside the table, rules of no layer, clashes, order
    "an unknown directive skipped (a newer rulebook read leniently)": Wrong(  # once accepted
        "compile_book", (UNKNOWN_REJECTED,),
        ("            if problem is not None:\n", "            if problem is UNKNOWN_DIRECTIVE:\n                continue\n            if problem is not None:\n")),
    "a clash not rejected (the first value kept)": Wrong(
        "compile_book", (CLASH_REJECTED, ORDER_FREE), ("                    if held != value:\n                        errors.append(QuirksError(CLASH, where))\n", "")),
    "a clash not rejected (the last value wins)": Wrong(
        "compile_book", (CLASH_REJECTED, ORDER_FREE),
        ("                    if held != value:\n                        errors.append(QuirksError(CLASH, where))\n", ""),
        ("            if not already:\n                settings.append(",
         "            settings[:] = [s for s in settings if s[:3] != (rule.layer, rule.target, directive)]\n            if True:\n                settings.append(")),
    "equal values compared by identity (a clash of equal values)": Wrong(
        "compile_book", (CLASH_REJECTED,), ("if held != value:", "if held is not value:")),
    "the clash scan stops one early": Wrong(
        "compile_book", (CLASH_REJECTED,), ("in settings:\n", "in settings[:-1]:\n")),
    "a clash across the targets of a layer": Wrong(
        "compile_book", (CLASH_REJECTED,), ("(layer, target, name) == (rule.layer, rule.target, directive)", "(layer, name) == (rule.layer, directive)")),
    "compile stops at the first error": Wrong(
        "compile_book", (COMPILE_ORDER_FREE,), ("                errors.append(QuirksError(problem, where))\n                continue\n", "                return QuirksError(problem, where)\n")),
    "the first error reported, not the least": Wrong(
        "compile_book", (COMPILE_ORDER_FREE,), ("least = _least(errors)", "least = errors[0] if errors else None")),
    "_least compares each error with the first, not the least so far": Wrong(  # once accepted
        "_least", (COMPILE_ORDER_FREE,), ("_error_key(error) < _error_key(best)", "_error_key(error) < _error_key(errors[0])")),
    "_least's search stops one early": Wrong(
        "_least", (UNKNOWN_REJECTED, CLASH_REJECTED, COMPILE_ORDER_FREE), ("for error in errors:", "for error in errors[:-1]:")),
    "_error_key without the kind (ties broken by rule order)": Wrong(  # once accepted
        "_error_key", (COMPILE_ORDER_FREE,), ("(error.where, ERROR_KINDS.index(error.kind))", "(error.where, 0)")),
    # the table's reader: names outside Directive::ALL
    "directive names matched without case": Wrong(
        "value_type", (UNKNOWN_REJECTED,), ("if name == directive:", "if name.lower() == directive.lower():")),
    "a directive matched by its prefix": Wrong(
        "value_type", (UNKNOWN_REJECTED,), ("if name == directive:", "if directive.startswith(name):")),
    "a name outside the table read as a bool directive": Wrong(
        "value_type", (UNKNOWN_REJECTED,), ("    return None", "    return BOOL")),
    "the table's search stops one early (its last directive unknown)": Wrong(
        "value_type", (UNKNOWN_REJECTED,), ("in DIRECTIVES:", "in DIRECTIVES[:-1]:")),
    "canonical lets an unknown name's value through": Wrong(
        "canonical", (UNKNOWN_REJECTED,), ("        return None, UNKNOWN_DIRECTIVE", "        return value, None")),
    # a search that counts: the step on a head alone cannot see it, the premise checked on the source does
    "setting gives up after its first entry (a counter)": Wrong(  # once accepted
        "setting", (UNKNOWN_WHEN_NONE, KNOWN_WHEN_SOME, HIGHEST_WINS),
        ("    for at, where, name, value in compiled.settings:\n", "    count = 0\n    for at, where, name, value in compiled.settings:\n        count += 1\n        if count > 1:\n            break\n")),
    "setting searches only the first entries (enumerate)": Wrong(  # once accepted
        "setting", (KNOWN_WHEN_SOME,),
        ("    for at, where, name, value in compiled.settings:\n", "    for i, (at, where, name, value) in enumerate(compiled.settings):\n        if i > 4:\n            break\n")),
    "compat read up to its second entry (a list of those seen)": Wrong(  # once accepted
        "lookup", (HIGHEST_WINS,),
        ("    for name, value in query.compat:\n", "    seen: list[str] = []\n    for name, value in query.compat:\n        seen.append(name)\n        if len(seen) > 2:\n            break\n")),
    "a rule's directives read up to the second (a count)": Wrong(  # once accepted
        "compile_book", (UNKNOWN_REJECTED, CLASH_REJECTED, COMPILE_ORDER_FREE),
        ("        for directive, raw in rule.directives:\n", "        count = 0\n        for directive, raw in rule.directives:\n            count += 1\n            if count > 2:\n                break\n")),
    "_least looks at the first three errors only": Wrong(
        "_least", (COMPILE_ORDER_FREE,), ("for error in errors:", "for error in errors[:3]:")),
}


def _skipped(*args: object, **kwargs: object) -> Evidence:
    return Evidence(BOUNDED, "not run here: the bounded part beside the proof")


# compile_book's step (spec.laws.infer._compile_step, the costly part of the compile proofs: about
# 10^5 abstract runs) runs compile_book alone, its callees stubbed: its outcome, evidence or
# refusal, is the same for every test of one compile_book, and is computed once for each.
THE_MODEL = "the model"
_COMPILE_STEP = laws._compile_step
_STEPS: dict[str, Evidence | LawFailed] = {}
_COMPILE_BOOK_OF = [THE_MODEL]  # the compile_book the test runs: the model's, or a wrong one's name


def _shared_step() -> Evidence:
    key = _COMPILE_BOOK_OF[0]
    if key not in _STEPS:
        try:
            _STEPS[key] = _COMPILE_STEP()
        except LawFailed as refused:
            _STEPS[key] = refused
    got = _STEPS[key]
    if isinstance(got, LawFailed):
        raise LawFailed(str(got))
    return got


@pytest.fixture(autouse=True)
def _proofs_alone(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The laws run with their bounded parts (the lookup universe, the pools on the model and on
    production, the Hypothesis hunt) left out: what refuses is the proof."""
    for helper in ("_over_lookups", "_both", "bounded", "examples"):
        monkeypatch.setattr(laws, helper, _skipped)
    monkeypatch.setattr(laws, "_compile_step", _shared_step)
    _COMPILE_BOOK_OF[0] = THE_MODEL
    yield
    _COMPILE_BOOK_OF[0] = THE_MODEL


def _install(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    wrong = WRONG[name]
    function = edited(getattr(m, wrong.function), *wrong.edits)
    monkeypatch.setattr(m, wrong.function, function)
    if wrong.function == "compile_book":
        monkeypatch.setattr(laws, "_COMPILE_BOOK", function)  # the proofs keep the real one while they stub its callees
        _COMPILE_BOOK_OF[0] = name


def _run(law: str) -> Evidence:
    check: Callable[[], Evidence] = getattr(laws, law)
    return check()


@pytest.mark.parametrize("law", LAWS)
def test_the_model_is_proved(law: str) -> None:
    evidence = _run(law)
    assert evidence.strength is PROVED
    assert evidence.proofs


CASES = [(name, law) for name, wrong in WRONG.items() for law in wrong.refused_by]


def test_each_law_has_wrong_models() -> None:
    assert {law for _name, law in CASES} == set(LAWS)
    assert len(WRONG) >= 20


@pytest.mark.parametrize(("name", "law"), CASES, ids=[f"{law}: {name}" for name, law in CASES])
def test_a_wrong_model_is_refused(name: str, law: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _install(name, monkeypatch)
    with pytest.raises(LawFailed):
        _run(law)
