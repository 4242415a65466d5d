"""The typing proof of the cvar laws (spec.laws.cvar._typing_lemma: has_type against the oracle's
holds, by induction on the value, run on a spy of each class of value): it is proved for the model
as it is, and it refuses a has_type that is wrong in any way a class of value can show (a sign, a
finiteness, an off word, the choices, the items of a list or an object), or that reads a value
beyond what its class decides."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bend import cvar as m
from spec.evidence import LawFailed
from spec.laws import cvar as laws
from spec.registry import PROVED
from wrong_models import edited

WRONG = {
    "a Nat that must be positive (reads > 0)": ("value >= 0  # type: ignore[operator]\n    if t.kind == NAT_OR_OFF",
                                               "value > 0  # type: ignore[operator]\n    if t.kind == NAT_OR_OFF"),
    "a Float that may be infinite": ("(isinstance(value, float) and math.isfinite(value))", "isinstance(value, float)"),
    "an Enum that takes any str": ("return isinstance(value, str) and value in t.choices", "return isinstance(value, str)"),
    "a NatOrOff that forgets none": ("or value in OFF_WORDS", "or value == 'off'"),
    "an Int that takes a bool": ("    if t.kind == INT:\n        return is_int(value)", "    if t.kind == INT:\n        return isinstance(value, int)"),
    "a List that needs one good item": ("and all(has_type(t.item, v) for v in value)", "and any(has_type(t.item, v) for v in value)"),
    "a List that skips its first item": ("and all(has_type(t.item, v) for v in value)", "and all(has_type(t.item, v) for v in value[1:])"),
    "a List that adds a verdict": ("and all(has_type(t.item, v) for v in value)", "and all([has_type(t.item, v) for v in value] + [True])"),
    "a Map that checks no item": ("and all(has_type(t.item, v) for _, v in value.pairs)", "and True"),
    "a Map that skips a key": ("and all(has_type(t.item, v) for _, v in value.pairs)", "and all(has_type(t.item, v) for k, v in value.pairs if k != 'x')"),
    "a Map whose items are read as its own type": ("and all(has_type(t.item, v) for _, v in value.pairs)", "and all(has_type(t, v) for _, v in value.pairs)"),
}


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    laws._typing_lemma.cache_clear()
    yield
    laws._typing_lemma.cache_clear()


def test_the_typing_of_the_model_is_proved() -> None:
    evidence = laws._typing_lemma()
    assert evidence.strength == PROVED
    assert "bend.cvar.has_type" in evidence.about


@pytest.mark.parametrize("name", sorted(WRONG))
def test_a_wrong_has_type_is_refused(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(m, "has_type", edited(m.has_type, WRONG[name]))  # its recursion reaches the proof's stubs
    with pytest.raises(LawFailed):
        laws._typing_lemma()
