"""The hunt takes each law's Hypothesis properties by running its check with spec.evidence
capturing (spec.hunt.capture), which swallows an error so that a law failing before its
properties still gives the ones it reached. Under capture no check may fail: every evidence
helper returns a placeholder at once, so an error there silently drops the law's properties
from `make fuzz` and from replaying a find (as the inductions did: their parts are placeholders
about no function)."""

from __future__ import annotations

import pytest

from spec import evidence, registry


@pytest.mark.parametrize("key", ["catalog_union/catalog_union_bundled_gives", "catalog_union/catalog_union_one_source_unchanged"])
def test_a_law_proved_by_induction_runs_whole_and_gives_its_hunted_property(key: str) -> None:
    law = next(x for x in registry.load() if x.key == key)
    evidence._CAPTURED = []
    try:
        law.check()  # raises nothing under capture
        found = list(evidence._CAPTURED)
    finally:
        evidence._CAPTURED = None
    assert [kind for kind, _, _ in found] == ["given"], found


@pytest.fixture(autouse=True)
def _no_capture_left() -> object:
    yield
    evidence._CAPTURED = None
