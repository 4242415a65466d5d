"""quirk_ladder_shipped_is_s10 is proved over the whole type of models (3^7 entry shapes with
opaque wire strings, x reasoning): it holds of bend.infer.offered and refuses the same function
with one token changed."""

from __future__ import annotations

import pytest

from bend import infer as m
from bend.infer import LEVELS, LevelMap, ThinkingDefaults, entry_of
from spec import evidence
from spec.laws import infer as laws
from spec.proofs import callees
from spec.registry import PROVED


# bend.infer.offered with one token changed: a level with no entry falls to the plain default.
def wrong_offered(reasoning: bool, ladder: LevelMap, defaults: ThinkingDefaults) -> tuple[str, ...]:
    kept: tuple[str, ...] = ()
    for level in LEVELS:
        if not reasoning:
            if level in defaults.plain:
                kept = kept + (level,)
            continue
        present, value = entry_of(ladder, level)
        if present:
            if value is not None:
                kept = kept + (level,)
        elif level in defaults.plain:
            kept = kept + (level,)
    return kept


def test_the_shipped_ladder_is_proved_of_offered_and_refused_for_a_wrong_one() -> None:
    assert laws.quirk_ladder_shipped_is_s10().strength is PROVED
    with callees(m, offered=wrong_offered), pytest.raises(evidence.LawFailed, match="fails for"):
        laws.quirk_ladder_shipped_is_s10()
