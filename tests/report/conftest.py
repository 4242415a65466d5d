"""A review report built from a made-up run: the real laws of two areas (effort, director) with
made-up results, one of them a failure with a counterexample, and a made-up `make mutants`
result. Built once per session in a temporary build directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spec import manifest, registry, report
from spec.review import build

from review_support import AREAS, COUNTEREXAMPLE, FAILING


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("build")
    laws = [law for law in registry.load() if law.area in AREAS]
    assert any(law.key == FAILING for law in laws), f"no law {FAILING} to fail in the made-up run"
    results = {}
    for number, law in enumerate(laws):
        if law.key == FAILING:
            results[law.key] = report.Result(law.key, report.FAIL, COUNTEREXAMPLE, 0.25, detail=COUNTEREXAMPLE)
        else:
            results[law.key] = report.Result(law.key, report.PASS, f"{law.strength.value}: made up ({number} cases)", 0.01 * number)
    table = [r for r in report.rows(manifest.load(), registry.load(), results) if r.area in AREAS]
    report.write(table, directory)
    mutants = {
        "breaks": [
            {"name": "clamp_above_first", "area": "effort", "module": "eukhe.effort", "why": "made up",
             "caught_by": ["effort_clamp_offered", "test_something[x]"], "problem": ""},
        ]
    }
    (directory / "mutants.json").write_text(json.dumps(mutants), encoding="utf-8")
    build(directory)
    return directory / "report"
