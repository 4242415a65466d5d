"""Tests aimed at the first-pass survivors of the memory area's seed-80 sample (written after the
draw, while it ran):

- ``Chat.restore_rows`` 2: the guard refusing a planner that is not new read both counts with
  ``and``, so a planner holding a message but no built node took a saved state over it.
"""

from __future__ import annotations

from array import array

import pytest

from eukhe.memory.chat import Chat


@pytest.mark.parametrize("size", [600, 10])  # a message waiting for its call (no node built), one built at once
def test_restore_refuses_a_planner_that_holds_a_message(size: int) -> None:
    chat = Chat()
    chat.message("x" * size)
    assert chat.t == 1 and chat.built_count == (1 if size <= 512 else 0)
    with pytest.raises(ValueError, match="^restore takes a new planner, not one with messages or built nodes$"):
        chat.restore_rows(0, [[]], [array("q")], 0, [], False, False, lambda i: "")
