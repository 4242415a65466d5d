"""Tests aimed at the first-pass survivors of the memory area's seed-73 sample (written after the
draw, while it ran):

- ``Memory.close`` 20: the owner lock's descriptor number kept after it was closed (``+1``), so a
  second close unlocked and closed descriptor 1, another file of the process;
- ``view._pick`` 14: the break switch read under another name, so a named break (which patches
  the pure core's source) would run against the compiled core and never show;
- ``fold.unreached`` 7: a saved line of the highest level, 62, taken for no evidence, so a view.json
  claiming 2^62 messages over a short log was not found to show lost lines;
- ``_Log._pieces`` 84: any record taken anywhere in a file with a torn marker sent the fast scan
  back to read the log again with its markers first (the same messages, read twice);
- ``fold.reopen`` 122: a view.json showing lines the logs lost was refused naming no file;
- ``Turns._converse`` 33: in tests/turn/test_turn.py (thoughts shown as ``thinking``).
"""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from eukhe.memory import core as pure
from eukhe.memory import fold, index
from eukhe.memory.chat import Config
from eukhe.memory.durable import DurableChat
from eukhe.memory.records import Kind, LostLines, Message
from eukhe.memory.store import Store
from eukhe.memory import view as V
from eukhe.memory.owner import Memory

DATE = "2026-11-30T09:00:00+00:00"


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


def test_a_saved_line_of_the_highest_level_is_evidence_and_one_above_it_none() -> None:
    view = [(0, i) for i in range(5)]  # a log of 5 messages, each on a line of its own
    assert fold.unreached([(62, 0)], view, 5, lambda node: True) == f"shows {1 << 62} messages, the log holds 5: message lines were lost"
    assert fold.unreached([(63, 0)], view, 5, lambda node: True) is None  # no level of a view: no evidence
    assert fold.unreached([(-1, 0)], view, 5, lambda node: True) is None


def test_a_torn_line_the_fast_scan_took_no_record_of_is_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A log whose torn tail was terminated (the torn line, its marker, then new messages) opens
    in one fast scan: the marker's lines hold no record it took, so no careful scan follows."""
    store = Store(tmp_path)
    for i, text in enumerate(("kept one", "kept two")):
        store.message(Message(i, Kind.USER, text, DATE))
    store.close()
    (day,) = tmp_path.glob("*.jsonl")
    day.write_bytes(day.read_bytes() + b'{"i":2,"kind":"user","text":"cut in the mid')
    store = Store(tmp_path)
    store.message(Message(2, Kind.USER, "after the crash", DATE))
    store.close()
    assert b'{"torn":3}' in day.read_bytes()
    for stale in tmp_path.glob("*index*"):
        stale.unlink()  # no index: the whole log is scanned
    careful: list[Path] = []
    markers = index._markers

    def counted(path: Path, *rest: Any) -> None:
        careful.append(path)
        markers(path, *rest)

    monkeypatch.setattr(index, "_markers", counted)
    again = Store(tmp_path)
    assert [m.text for m in again.messages] == ["kept one", "kept two", "after the crash"]
    again.close()
    assert careful == []


def test_a_saved_view_showing_lost_lines_is_refused_naming_view_json(tmp_path: Path) -> None:
    store = Store(tmp_path)
    durable = DurableChat.open(Config(), store.messages, store.tree, store, lambda: DATE)
    for i in range(3):
        durable.message(f"message {i}")
    store.close()
    view = tmp_path / "view.json"
    view.write_text("[" + ", ".join(f"[0, {i}]" for i in range(10)) + "]")  # ten messages' lines: seven were lost
    store = Store(tmp_path)
    try:
        with pytest.raises(LostLines) as refused:
            DurableChat.open(Config(), store.messages, store.tree, store, lambda: DATE)
    finally:
        store.close()
    assert (refused.value.path, refused.value.line) == (view, 1)
    assert str(refused.value).startswith(f"{view}: line 1: shows 10 messages, the log holds 3: message lines were lost")
