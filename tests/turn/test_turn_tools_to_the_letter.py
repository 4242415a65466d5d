"""The chat tools' answers to the letter (memory.md rules 52-54): what zoom and date say back to
the model when a call is wrong, each text written here by hand from the documented messages."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from eukhe.inference.wire.events import ToolCall
from eukhe.memory.owner import Memory
from eukhe.memory.turn import Result, run_tool


@pytest.fixture
def memory(chat_dir: Path) -> Iterator[Memory]:
    with Memory(chat_dir) as owned:
        for i in range(4):
            owned.append(f"message {i}")
        yield owned


ERRORS = [
    ("arguments cut short", "zoom", '{"id":', "the arguments of zoom are not JSON: Expecting value at column 7"),
    ("arguments a list", "zoom", "[1, 2]", "the arguments of zoom are a JSON object, not '[1, 2]'"),
    ("n in words", "zoom", '{"id": 0, "n": "two"}', 'n is a whole number, not "two"'),
    ("an id with a fraction", "zoom", '{"id": 1.5}', "id is a whole number, not 1.5"),
    ("an id of true", "zoom", '{"id": true}', "id is a whole number, not true"),
    ("no id", "zoom", "{}", "id is a whole number, not null"),
    ("a date without an id", "date", "", "id is a whole number, not null"),
    ("an id that is no multiple", "zoom", '{"id": 1, "n": 2}', "id=1 is not a multiple of n=2"),
    ("an id past the chat", "zoom", '{"id": "4"}', "4+1 runs past the chat's 4 messages"),
    ("an unknown agent", "zoom", '{"id": "Nobody"}', "no agent named 'Nobody' in this chat"),
    ("no agent's name", "zoom", '{"id": "9lives"}', "'9lives' is not an agent's name (a letter, then letters, digits, _ or -)"),
    ("an unknown tool", "grep", '{"id": 0}', "no tool named 'grep' (tools: zoom, date)"),
]


@pytest.mark.parametrize(("name", "arguments", "message"), [c[1:] for c in ERRORS], ids=[c[0] for c in ERRORS])
def test_a_wrong_tool_call_is_answered_with_an_error_result_naming_what_was_wrong(
    memory: Memory, name: str, arguments: str, message: str
) -> None:
    assert run_tool(memory, ToolCall(0, "call-1", name, arguments)) == Result(f"error: {message}", True)


@pytest.mark.parametrize("arguments", ['{"id": 2}', '{"id": "2"}', '{"id": 2.0, "n": 1}', '{"id": "2", "n": "1"}'])
def test_a_zoom_reads_ids_as_numbers_or_digits(memory: Memory, arguments: str) -> None:
    assert run_tool(memory, ToolCall(0, "call-1", "zoom", arguments)) == Result("2+1|message 2")


def test_a_zoom_of_two_lines_answers_each_on_its_own_line(memory: Memory) -> None:
    assert run_tool(memory, ToolCall(0, "call-1", "zoom", '{"id": 0, "n": 4}')).text == "0+2|message 0 message 1\n2+2|message 2 message 3"
