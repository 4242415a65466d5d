"""The planner's refusals to the letter (memory.md rules 12, 39, 52, 53): the texts its errors
say, written here by hand from the rules and the documented messages."""

from __future__ import annotations

from array import array
from pathlib import Path

import pytest

from eukhe.memory import COMPACTION_CEILING, COMPACTION_FLOOR, JOBS, NODE, VIEW_CEILING, VIEW_FLOOR
from eukhe.memory.chat import Chat, Config, TextsNotKept, ZoomError
from eukhe.memory.records import StoreError
from eukhe.memory.store import Store


def test_the_defaults_are_the_seeds() -> None:
    assert (JOBS, NODE, VIEW_CEILING, VIEW_FLOOR, COMPACTION_CEILING, COMPACTION_FLOOR) == (8, 512, 128_000, 64_000, 32_000, 16_000)
    assert Config() == Config(jobs=8, ceiling=128_000, floor=64_000, cceiling=32_000, cfloor=16_000)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"jobs": 0}, "jobs must be 1..8 (rule 39), not 0"),
        ({"jobs": 9}, "jobs must be 1..8 (rule 39), not 9"),
        ({"floor": -1}, "the view's floor -1 must be between 0 and its ceiling 128000"),
        ({"floor": 10, "ceiling": 9}, "the view's floor 10 must be between 0 and its ceiling 9"),
        ({"cfloor": -1}, "the compaction view's floor -1 must be between 0 and its ceiling 32000"),
        ({"cfloor": 5, "cceiling": 4}, "the compaction view's floor 5 must be between 0 and its ceiling 4"),
    ],
)
def test_a_config_out_of_its_range_says_which_bound(config: dict[str, int], message: str) -> None:
    with pytest.raises(ValueError) as caught:
        Config(**config)
    assert str(caught.value) == message


@pytest.mark.parametrize("config", [{"jobs": 1}, {"jobs": 8}, {"floor": 0, "ceiling": 0}, {"cfloor": 7, "cceiling": 7}])
def test_a_config_on_its_bounds_is_taken(config: dict[str, int]) -> None:
    Config(**config)


@pytest.mark.parametrize(
    ("ident", "n", "message"),
    [
        (0, 3, "n=3 is not a power of 2"),
        (0, 0, "n=0 is not a power of 2"),
        (2, 4, "id=2 is not a multiple of n=4"),
        (-2, 2, "id=-2 is not a multiple of n=2"),
        (8, 1, "8+1 runs past the chat's 8 messages"),
        (0, 16, "0+16 runs past the chat's 8 messages"),
    ],
)
def test_a_zoom_that_names_no_node_says_why(ident: int, n: int, message: str) -> None:
    chat = Chat()
    for i in range(8):
        chat.message(f"m{i}")
    with pytest.raises(ZoomError) as caught:
        chat.zoom(ident, n)
    assert str(caught.value) == message


def test_a_line_out_of_its_size_says_the_size() -> None:
    chat = Chat(Config(jobs=1))
    chat.message("a")
    for line, message in [("", "a compactor's line is 1-512 bytes, not 0"), (513, "a compactor's line is 1-512 bytes, not 513"),
                          (0, "a compactor's line is 1-512 bytes, not 0")]:
        with pytest.raises(ValueError) as caught:
            chat.done(0, line)
        assert str(caught.value) == message


def test_a_planner_without_texts_says_which_node_needs_its_input() -> None:
    chat = Chat(keep_texts=False)
    with pytest.raises(TextsNotKept) as caught:
        chat.source((2, 1))
    assert str(caught.value) == "node 4+4 needs its input, and texts are not kept"


def test_restore_refuses_a_planner_with_messages() -> None:
    chat = Chat()
    chat.message("a")
    with pytest.raises(ValueError) as caught:
        chat.restore_rows(1, [[1]], [array("i", [0])], 1, [(0, 0)], False, False, lambda i: "a")
    assert str(caught.value) == "restore takes a new planner, not one with messages or built nodes"


@pytest.mark.parametrize("name", ["", ".hidden", "a/b"])
def test_an_image_name_that_is_not_a_plain_file_name_is_refused_by_name(tmp_path: Path, name: str) -> None:
    store = Store(tmp_path / "chat")
    try:
        with pytest.raises(StoreError) as caught:
            store.save_image(0, name, b"png")
        assert str(caught.value) == f"an image name is a plain file name, not {name!r}"
    finally:
        store.close()
