"""Tests aimed at the first-pass survivors of the memory area's seed-73 sample (written after the
draw, while it ran):

- ``Memory.close`` 20: the owner lock's descriptor number kept after it was closed (``+1``), so a
  second close unlocked and closed descriptor 1, another file of the process;
- ``view._pick`` 14: the break switch read under another name, so a named break (which patches
  the pure core's source) would run against the compiled core and never show.
"""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path

import pytest

from eukhe.memory import core as pure
from eukhe.memory import view as V
from eukhe.memory.owner import Memory


def test_a_second_close_closes_no_descriptor_of_the_process(tmp_path: Path) -> None:
    memory = Memory(tmp_path / "chat")
    assert memory.is_owner
    memory.close()
    saved = os.dup(1)  # the descriptor a stale number would name: kept, to be put back whatever happens
    try:
        before = sorted(os.listdir("/proc/self/fd"))
        memory.close()
        assert sorted(os.listdir("/proc/self/fd")) == before
    finally:
        os.dup2(saved, 1)
        os.close(saved)


@pytest.fixture
def current_compiled(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """A stand-in compiled core built from the current source, and neither switch set."""
    module = types.ModuleType(V.COMPILED)
    module.SOURCE = V.source_digest()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, V.COMPILED, module)
    monkeypatch.delenv("EUKHE_BREAK", raising=False)
    monkeypatch.delenv("COVERAGE_RUN", raising=False)
    return module


def test_unasked_the_current_compiled_core_is_picked(current_compiled: types.ModuleType) -> None:
    assert V._pick("") is current_compiled


@pytest.mark.parametrize("switch", ["EUKHE_BREAK", "COVERAGE_RUN"])
def test_under_a_break_or_coverage_the_pure_core_is_picked(current_compiled: types.ModuleType, monkeypatch: pytest.MonkeyPatch, switch: str) -> None:
    monkeypatch.setenv(switch, "1")
    assert V._pick("") is pure
    assert V._pick("compiled") is current_compiled  # asked for by name, the compiled core it is
