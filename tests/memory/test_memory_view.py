"""Regression tests of the production view (memory.md rules 11, 15, 16, 18, 19, 29)."""

from __future__ import annotations

from array import array

from eukhe.memory import PLACEHOLDER, PLACEHOLDER_BYTES
from eukhe.memory.chat import Chat, Config
from eukhe.memory.text import cut, flatten, size
from eukhe.memory.view import View, name, pieces, planner, render


def test_flatten_turns_every_newline_into_one_space() -> None:
    assert flatten("a\r\nb\rc\nd") == "a b c d"
    assert flatten("a\r\n\r\nb") == "a  b"
    assert flatten("\n\r") == "  "
    assert flatten("no newline") == "no newline"


def test_render_is_chat_tags_around_one_line_per_node() -> None:
    texts = {(1, 0): "first\r\nline", (0, 2): "third"}
    out = render([(1, 0), (0, 2), (0, 3)], texts.get)
    assert out == f"<chat>\n0+2|first line\n2+1|third\n3+1|{PLACEHOLDER}\n</chat>"


def test_placeholders_count_until_built() -> None:
    chat = Chat(Config(jobs=1))
    chat.message("x" * 600)
    assert chat.view.total == PLACEHOLDER_BYTES and chat.unbuilt == 1
    assert render(chat.view.nodes, chat.text).splitlines()[1] == f"0+1|{PLACEHOLDER}"
    chat.done(0, "a line of summary")
    assert chat.view.total == size("a line of summary") and chat.unbuilt == 0
    assert render(chat.view.nodes, chat.text).splitlines()[1] == "0+1|a line of summary"


def test_pieces_end_the_marked_piece_at_the_last_whole_block() -> None:
    nodes = [(0, i) for i in range(10)]
    texts = {n: f"t{n[1]}" for n in nodes}
    marked, rest = pieces(nodes, texts.get)
    assert marked.splitlines() == ["<chat>"] + [f"{i}+1|t{i}" for i in range(8)]
    assert rest.splitlines() == ["8+1|t8", "9+1|t9", "</chat>"]
    assert marked + rest == render(nodes, texts.get)
    marked, rest = pieces(nodes[:3], texts.get)
    assert marked == "<chat>\n" and rest.startswith("0+1|t0")


def test_names_are_first_message_and_count() -> None:
    assert name((3, 5)) == "40+8"
    assert name((0, 7)) == "7+1"


def test_the_cut_falls_at_a_character_boundary() -> None:
    text = "a" + "é" * 300
    line = cut(text)
    assert size(line) == 511 and text.startswith(line)
    assert cut("é" * 256) == "é" * 256


def test_fit_merges_the_most_due_pair_from_the_last_message() -> None:
    """The gist's T = 10 example, in bytes: view 0+4, 4+4, 8+1, 9+1; budget three lines."""
    view = View()
    for node in [(2, 0), (2, 1), (0, 8), (0, 9)]:
        view.append(node, 100)
    levels = [array("H", [100] * 10), array("H", [100] * 5), array("H", [100] * 3), array("H", [100])]
    merges = view.fit(10, levels, 300)
    assert merges == 1 and view.nodes == [(2, 0), (2, 1), (1, 4)] and view.total == 300


def test_fit_stops_when_no_parent_is_built() -> None:
    view = View()
    for i in range(4):
        view.append((0, i), 100)
    levels = [array("H", [100] * 4)]
    assert view.fit(4, levels, 0) == 0 and view.total == 400 and len(view) == 4


def test_fit_within_budget_rewrites_nothing() -> None:
    """Two pairs could merge (both parents built), but the lines are already within the budget:
    no merge, and no first rewritten line (-1)."""
    view = View()
    for node in [(2, 0), (2, 1), (0, 8), (0, 9)]:
        view.append(node, 100)
    levels = [array("H", [100] * 10), array("H", [100] * 5), array("H", [100] * 3), array("H", [100])]
    assert view.fit(10, levels, 400) == 0
    assert view.first_change == -1 and view.total == 400
    assert view.nodes == [(2, 0), (2, 1), (0, 8), (0, 9)]


def test_a_compaction_view_counts_the_lines_appended_to_it() -> None:
    """The two views of one planner keep their own lines and totals; a message line of the
    compaction view can be resized once built."""
    core = planner(1_000, 500, 1_000, 500)
    view, cview = View(core), View(core, compaction=True)
    cview.append((1, 0), 120)
    cview.append((0, 2), PLACEHOLDER_BYTES)
    assert cview.nodes == [(1, 0), (0, 2)] and cview.sizes == [120, PLACEHOLDER_BYTES]
    assert cview.total == 120 + PLACEHOLDER_BYTES and view.total == 0 and len(view) == 0
    cview.resize((0, 2), 45)
    assert cview.sizes == [120, 45] and cview.total == 165
