"""The text an imported session entry becomes (memory.md rule 5: memories from before the chat),
to the letter: written here by hand from the importer's rule (text blocks joined, thinking left
out, anything else as sorted JSON)."""

from __future__ import annotations

import pytest

from eukhe.memory.importer import _text


@pytest.mark.parametrize(
    ("content", "text"),
    [
        ("plain words", "plain words"),
        ([{"type": "text", "text": "one"}, {"type": "thinking", "text": "hidden"}, "two"], "one\ntwo"),
        ([{"type": "thinking", "text": "only a thought"}], '[{"text": "only a thought", "type": "thinking"}]'),
        ({"zeta": 1, "alpha": "\u00e9t\u00e9"}, '{"alpha": "\u00e9t\u00e9", "zeta": 1}'),
        ({"name": "read", "input": {"path": "b", "mode": "r"}}, '{"input": {"mode": "r", "path": "b"}, "name": "read"}'),
        (None, "null"),
        ([], "[]"),
    ],
)
def test_an_entry_becomes_its_text_blocks_or_its_sorted_json(content: object, text: str) -> None:
    assert _text(content) == text
