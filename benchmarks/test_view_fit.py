"""pytest-benchmark suite for `make bench` (never part of `make test`): the product path
(``Chat.message`` on the h stream, with the compaction view), the planner core's loop and the
model, in each form of the core, on the same streams (benchmarks/bench_view_fit.py has the
one-run JSON with the targets)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from eukhe.memory import view

_spec = importlib.util.spec_from_file_location("bench_view_fit", Path(__file__).with_name("bench_view_fit.py"))
assert _spec and _spec.loader
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

FORMS = ["pure"] + (["compiled"] if view.compiled() is not None else [])


@pytest.mark.parametrize("form", FORMS)
def test_chat_message_h_stream_100000(benchmark: Any, form: str) -> None:
    sizes = bench.h_sizes(100_000)
    before = view.use(form)
    try:
        check = benchmark.pedantic(bench.chat_h, args=(100_000, sizes), rounds=3, iterations=1)
    finally:
        view.CORE = before
    assert check > 0


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("mode", ["main", "cview"])
def test_core_h_stream_100000(benchmark: Any, form: str, mode: str) -> None:
    before = view.use(form)
    try:
        check = benchmark.pedantic(bench.core_h, args=(view.CORE, 100_000, mode == "cview"), rounds=3, iterations=1)
    finally:
        view.CORE = before
    assert check > 0


def test_model_h_stream_2000(benchmark: Any) -> None:
    assert benchmark.pedantic(bench.model_h, args=(2_000, True), rounds=3, iterations=1) > 0


@pytest.mark.parametrize("form", FORMS)
def test_production_note_stream_20000(benchmark: Any, form: str) -> None:
    before = view.use(form)
    try:
        check = benchmark.pedantic(bench.production_note, args=(20_000,), rounds=3, iterations=1)
    finally:
        view.CORE = before
    assert check > 0


def test_model_note_stream_2000(benchmark: Any) -> None:
    assert benchmark.pedantic(bench.model_note, args=(2_000,), rounds=3, iterations=1) > 0
