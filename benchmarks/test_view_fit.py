"""pytest-benchmark suite for `make bench` (never part of `make test`): the view fit of the
model and of production on the same stream (benchmarks/bench_view_fit.py has the one-run JSON
with the issue's targets)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

_spec = importlib.util.spec_from_file_location("bench_view_fit", Path(__file__).with_name("bench_view_fit.py"))
assert _spec and _spec.loader
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def test_production_view_fit_20000(benchmark: Any) -> None:
    seconds = benchmark.pedantic(bench.run_production, args=(20_000,), rounds=3, iterations=1)
    assert seconds > 0


def test_model_view_fit_2000(benchmark: Any) -> None:
    seconds = benchmark.pedantic(bench.run_model, args=(2_000,), rounds=3, iterations=1)
    assert seconds > 0


def test_production_view_fit_200000(benchmark: Any) -> None:
    seconds = benchmark.pedantic(bench.run_production, args=(200_000,), rounds=1, iterations=1)
    assert seconds > 0
