"""Every registered law is one test; the manifest check fails on a missing law of a built area."""

from __future__ import annotations

import pytest

from spec import manifest, registry, report
from spec.pytest_plugin import record

LAWS = registry.load()


@pytest.mark.parametrize("law", LAWS, ids=[law.key for law in LAWS])
def test_law(law: registry.Law) -> None:
    result = report.run(law)
    record(result)
    assert result.status == report.PASS, f"{law.key}: {result.evidence}"


def test_every_law_of_a_built_area_has_a_property() -> None:
    table = report.rows(manifest.load(), LAWS, {law.key: report.Result(law.key, report.PASS, "x", 0) for law in LAWS})
    missing = [f"{r.area}/{r.name}" for r in table if r.status == report.MISSING]
    assert not missing, f"laws with no property: {missing}"


def test_manifest_matches_the_shared_table() -> None:
    from pathlib import Path

    shared = Path(__file__).resolve().parents[2].parent / "shared" / "laws.tsv"
    if not shared.exists():
        pytest.skip(f"no shared table at {shared} to compare with")
    assert manifest.parse(shared.read_text(encoding="utf-8")) == manifest.load()
