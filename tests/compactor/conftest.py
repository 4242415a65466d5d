"""Fixtures of the wire tests: a real loopback server per test (spec/loopback.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from spec.loopback import LoopbackServer


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as running:
        yield running
