"""Every universal law of the seeds that is not labelled proved says why a proof about the code
is out of reach today (spec/unproved.tsv), and no other law has a reason: a law proved since, or
a row naming no law, fails here, so the list stays the list of what is not proved."""

from __future__ import annotations

from spec import manifest, registry
from spec.registry import PROVED


def _universal() -> dict[tuple[str, str], registry.Law]:
    entries = [e for e in manifest.load() if e.seed_strength == "universal"]
    return {(law.area, law.name): law for law in registry.load() if any(e.covers(law.area, law.name) for e in entries)}


def test_every_universal_law_not_proved_says_why() -> None:
    reasons = manifest.unproved()
    missing = sorted(f"{a}/{n}" for (a, n), law in _universal().items() if law.strength != PROVED and (a, n) not in reasons)
    assert not missing, f"universal laws not proved with no reason in spec/unproved.tsv: {missing}"


def test_no_reason_stands_for_a_proved_or_unknown_law() -> None:
    universal = _universal()
    stale = sorted(f"{a}/{n}" for (a, n) in manifest.unproved() if (a, n) not in universal or universal[(a, n)].strength == PROVED)
    assert not stale, f"spec/unproved.tsv gives reasons for laws that are proved or not universal laws: {stale}"


def test_a_reason_reaches_the_law_report() -> None:
    from spec import report

    law = next(law for key, law in _universal().items() if key in manifest.unproved())
    row = report._row(law, {}, "table", True, "universal")
    assert row.unproved == manifest.unproved()[(law.area, law.name)]
