"""Regression tests of the production planner (memory.md rules 12, 22-24, 33, 34, 38-42, 52; D5)."""

from __future__ import annotations

import pytest

from eukhe.memory.chat import Chat, Config, TextsNotKept, ZoomError
from eukhe.memory.text import cut


def test_zoom_opens_lines_and_messages() -> None:
    chat = Chat(Config(jobs=8))
    for i in range(8):
        chat.message(f"message {i}\nsecond line")
    assert chat.zoom(0, 1) == ["0+1|message 0 second line"]
    halves = chat.zoom(0, 4)
    assert [h.split("|")[0] for h in halves] == ["0+2", "2+2"]
    assert halves[0] == "0+2|message 0 second line message 1 second line"
    assert [h.split("|")[0] for h in chat.zoom(4, 2)] == ["4+1", "5+1"]


@pytest.mark.parametrize(
    ("ident", "n", "why"),
    [(0, 3, "not a power of 2"), (2, 4, "not a multiple"), (8, 8, "runs past"), (8, 1, "runs past"), (0, 0, "not a power"), (-2, 2, "not a multiple")],
)
def test_zoom_refuses_what_names_no_node(ident: int, n: int, why: str) -> None:
    chat = Chat()
    for i in range(8):
        chat.message(f"m{i}")
    with pytest.raises(ZoomError, match=why):
        chat.zoom(ident, n)


def test_a_nodes_input_is_its_message_or_its_children() -> None:
    chat = Chat(Config(jobs=8))
    chat.message("a" * 600)
    chat.message("b" * 600)
    assert chat.source((0, 0)) == "a" * 600
    chat.done(0, "line zero")
    chat.done(0, "line one")
    assert chat.source((1, 0)) == "line zero\nline one"


def test_free_nodes_need_no_model() -> None:
    chat = Chat(Config(jobs=8))
    chat.message("short one")
    chat.message("short two")
    assert chat.running == [] and chat.text((1, 0)) == "short one\nshort two"
    chat.message("x" * 513)
    assert chat.running == [(0, 2)]


def test_a_message_appends_only_its_line() -> None:
    chat = Chat(Config(jobs=1, ceiling=10_000, floor=5_000))
    for i in range(6):
        before = list(chat.view.nodes)
        chat.message("y" * 400)
        assert chat.view.nodes[:-1] == before and chat.view.nodes[-1] == (0, i)


def test_a_batch_merges_to_the_floor_and_a_short_one_stays_open() -> None:
    chat = Chat(Config(jobs=1, ceiling=1_200, floor=600, cceiling=600, cfloor=300))
    for _ in range(3):
        chat.message("z" * 400)
    assert chat.batch == -1 and chat.view.total == 1_200
    chat.message("z" * 400)  # 1,600 bytes: past the ceiling, but 0+2 (801 bytes joined) needs a call
    assert chat.batch == 0 and chat.open  # the parents wait for their calls: still shrinking
    assert chat.running == [(1, 0)]
    chat.done(0, "q" * 100)
    chat.done(0, "r" * 100)
    chat.message("w" * 10)
    assert not chat.open and chat.batch >= 1 and chat.view.total <= 600


def test_a_message_node_waits_for_fewer_than_8_unbuilt_lines_before_it() -> None:
    chat = Chat(Config(jobs=8))
    for _ in range(10):
        chat.message("m" * 600)
    assert len(chat.running) == 8 and list(chat.fresh) == [8, 9]
    chat.done(0, "built")
    assert (0, 8) in chat.running and list(chat.fresh) == [9]


def test_a_waiting_turn_stops_merges_and_starts_only_view_lines() -> None:
    chat = Chat(Config(jobs=2))
    chat.message("a" * 600)
    chat.message("b" * 600)
    chat.done(0, "x" * 300)
    chat.done(0, "y" * 300)
    assert chat.running == [(1, 0)]
    chat.message("c" * 600)
    chat.wait()
    assert chat.running == [(0, 2)] and list(chat.merges) == [(1, 0)] and chat.fails == {}
    chat.done(0, "z")
    assert not chat.waiting and chat.running == [(1, 0)]


def test_the_third_failure_builds_the_node_from_its_input_cut() -> None:
    chat = Chat(Config(jobs=1))
    chat.message("é" * 400)
    for _ in range(2):
        chat.fail(0)
        assert chat.running == []
        chat.message("s")  # the next message retries it
        assert chat.running == [(0, 0)]
    chat.fail(0)
    assert chat.text((0, 0)) == cut("é" * 400) and len(chat.text((0, 0)) or "") == 256


def test_a_context_ends_at_its_node_and_holds_built_lines_only() -> None:
    chat = Chat(Config(jobs=8))
    for i in range(6):
        chat.message(f"m{i}" if i != 3 else "l" * 600)
    assert chat.context((0, 5)) == [(0, 0), (0, 1), (0, 2)]  # 3 is unbuilt: the context stops there
    chat.done(0, "three")
    assert chat.context((0, 5)) == [(0, 0), (0, 1), (0, 2), (0, 3), (0, 4)]
    assert chat.context((0, 2)) == [(0, 0), (0, 1)]
    assert chat.context((1, 1)) == [(0, 0), (0, 1), (0, 2), (0, 3)]


def test_a_context_reads_the_merged_compaction_view() -> None:
    chat = Chat(Config(jobs=8, cceiling=60, cfloor=30))
    for i in range(12):
        chat.message(f"message {i}")
    assert chat.cview.nodes == [(3, 0), (2, 2)]  # merged further than the chat view
    assert len(chat.view) == 12
    assert chat.context((0, 11)) == [(3, 0)]  # 8+4 holds message 11 itself: it ends past the node
    assert chat.context((0, 8)) == [(3, 0)]
    assert chat.context((0, 7)) == []  # 0+8 holds message 7


def test_without_texts_a_capped_line_is_an_error() -> None:
    chat = Chat(Config(jobs=1), keep_texts=False)
    chat.message(900)
    chat.fail(0)
    chat.message(10)
    chat.fail(0)
    chat.message(10)
    with pytest.raises(TextsNotKept):
        chat.fail(0)


def test_bad_configs_are_refused() -> None:
    with pytest.raises(ValueError, match="jobs"):
        Config(jobs=0)
    with pytest.raises(ValueError, match="jobs"):
        Config(jobs=9)
    with pytest.raises(ValueError, match="floor"):
        Config(ceiling=10, floor=20)
    with pytest.raises(ValueError, match="at least one byte"):
        Chat().message(0)
    chat = Chat()
    chat.message("x" * 600)
    with pytest.raises(ValueError, match="1-512 bytes"):
        chat.done(0, "y" * 513)
    assert chat.running == [(0, 0)]
