"""Fixtures shared by the workbench's tests."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from spec import evidence


@pytest.fixture
def z3_checks() -> Iterator[list[tuple[str, float]]]:
    """Every z3 check spec.evidence makes while the test runs, with how long it took."""
    made: list[tuple[str, float]] = []
    real = evidence.check

    def timed(terms: Any, ms: int | None) -> Any:
        start = time.perf_counter()
        try:
            return real(terms, ms)
        finally:
            made.append((" ".join(str(t)[:60] for t in terms[-1:]), time.perf_counter() - start))

    evidence.check = timed
    try:
        yield made
    finally:
        evidence.check = real
