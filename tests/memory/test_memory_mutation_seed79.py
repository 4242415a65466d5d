"""Tests aimed at the first-pass survivors of the memory area's seed-79 sample (written after the
draw, while it ran):

- ``Row.render`` 7: a compactor row with no note rendered with a tail of its own (the chat shows
  these rows as they come: ``memory: start 4+2``);
- ``fold`` 103: the one merge line naming no merge of its messages, read past the end of the list
  of such lines when a later merge line is out of order, a crash instead of the FoldError naming it;
- ``TreeLog._halves_first`` 64: a node logged first in the log (record 0) without its halves
  taken for no finding, so the error named a later node, or the node's other half.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from eukhe.memory import fold
from eukhe.memory.compactor import Row
from eukhe.memory.index import TreeLog
from eukhe.memory.records import MergeLine, NodeLine, encode


@pytest.mark.parametrize(
    ("row", "shown", "detailed"),
    [
        (Row("start", (1, 2)), "memory: start 4+2", "memory: start 4+2"),
        (Row("built", (0, 5), text="the line"), "memory: built 5+1", "memory: built 5+1: the line"),
        (Row("failed", (2, 1), "no line within 60 s", "why"), "memory: failed 4+4 (no line within 60 s)", "memory: failed 4+4 (no line within 60 s): why"),
    ],
)
def test_a_row_renders_its_event_node_note_and_at_full_detail_its_line(row: Row, shown: str, detailed: str) -> None:
    assert row.render() == shown
    assert row.render(detail=True) == detailed


def test_the_one_merge_line_naming_no_merge_is_named_though_a_later_line_is_out_of_order() -> None:
    merges = [MergeLine(((5, 0),), False, 2), MergeLine(((1, 0),), False, 1)]
    with pytest.raises(fold.FoldError, match=r"^merge line 1 at t=2 names \(5, 0\), which is no merge of its messages$"):
        fold.fold(4, merges)


def _tree(directory: Path, records: list[NodeLine]) -> Path:
    tree = directory / "tree"
    tree.mkdir(parents=True)
    (tree / "2026-12-01.jsonl").write_bytes(b"".join(encode(record) for record in records))
    return tree


def test_a_node_logged_first_without_its_halves_is_the_loss_named(tmp_path: Path) -> None:
    records = [NodeLine((1, 0), "first, with no half"), NodeLine((0, 2), "m2"), NodeLine((1, 2), "later, with one half")]
    log = TreeLog(_tree(tmp_path, records), 6)
    assert log.lost_at == 0
    assert log.lost == "node (1, 0) is logged, its half (0, 0) not logged at all: tree lines were lost (a day file of tree/ deleted, cut or replaced)"
