"""The chat memory's log lines to the letter (memory.md rules 1-8, D1-D3): every refusal of a
line by its text, for the message log and for the tree, and the records good lines decode to.

Each expected value is written here by hand from the format in eukhe.memory.records' docstring,
never computed by the code under test."""

from __future__ import annotations

from typing import Any

import pytest

from eukhe.memory.lines import entry_lines
from eukhe.memory.records import Kind, MergeLine, Message, NodeLine, Torn, decode, encode, kind_of

MESSAGE_ERRORS = [
    ("a list", b"[1]", "a line is a JSON object"),
    ("a number", b"7", "a line is a JSON object"),
    ("no date", b'{"i":0,"kind":"user","text":"hi","size":2}', "date must be a string, not None"),
    ("a date in numbers", b'{"i":0,"kind":"user","text":"hi","size":2,"date":20261201}', "date must be a string, not 20261201"),
    ("a key in numbers", b'{"i":0,"kind":"user","text":"hi","size":2,"date":"d","key":5}', "key must be a string, not 5"),
    ("an unknown field", b'{"i":0,"kind":"user","text":"hi","size":2,"date":"d","who":"me"}', "unknown fields ['who']"),
    ("i below 0", b'{"i":-1,"kind":"user","text":"hi","size":2,"date":"d"}', "i must be a whole number >= 0, not -1"),
    ("i true", b'{"i":true,"kind":"user","text":"hi","size":2,"date":"d"}', "i must be a whole number >= 0, not True"),
    ("i missing", b'{"kind":"user","text":"hi","size":2,"date":"d"}', "i must be a whole number >= 0, not None"),
    ("an unknown kind", b'{"i":0,"kind":"thought","text":"hi","size":2,"date":"d"}',
     "unknown kind 'thought' (kinds: user, eukhe, tool, echo, work, note; old talk)"),
    ("a kind in numbers", b'{"i":0,"kind":3,"text":"hi","size":2,"date":"d"}',
     "unknown kind 3 (kinds: user, eukhe, tool, echo, work, note; old talk)"),
    ("text in numbers", b'{"i":0,"kind":"user","text":5,"size":1,"date":"d"}', "text must be a string, not int"),
    ("no text", b'{"i":0,"kind":"user","size":1,"date":"d"}', "text must be a string, not NoneType"),
    ("a wrong size", b'{"i":0,"kind":"user","text":"h\xc3\xa9","size":2,"date":"d"}', "size 2 is not the text's 3 bytes"),
    ("no size", b'{"i":0,"kind":"user","text":"hi","date":"d"}', "size must be a whole number >= 0, not None"),
    ("a torn marker below 0", b'{"torn":-2}', "torn must be a whole number >= 0, not -2"),
]

TREE_ERRORS = [
    ("a list", b"[]", "a line is a JSON object"),
    ("a merge with an unknown field", b'{"merge":[[1,0]],"open":false,"t":2,"x":1}', "unknown fields ['x']"),
    ("a merge of a node in three", b'{"merge":[[1,0,0]],"open":false,"t":2}', "merge must be a list of [l, i] pairs of whole numbers"),
    ("a merge of a negative level", b'{"merge":[[-1,0]],"open":false,"t":2}', "merge must be a list of [l, i] pairs of whole numbers"),
    ("a merge of a bool", b'{"merge":[[true,0]],"open":false,"t":2}', "merge must be a list of [l, i] pairs of whole numbers"),
    ("a merge that is not a list", b'{"merge":{"l":1},"open":false,"t":2}', "merge must be a list of [l, i] pairs of whole numbers"),
    ("open in numbers", b'{"merge":[[1,0]],"open":1,"t":2}', "open must be true or false, not 1"),
    ("a merge without t", b'{"merge":[[1,0]],"open":false}', "t must be a whole number >= 0, not None"),
    ("a node with an unknown field", b'{"l":1,"i":0,"text":"x","size":1,"date":"d"}', "unknown fields ['date']"),
    ("a node of level -1", b'{"l":-1,"i":0,"text":"x","size":1}', "l must be a whole number >= 0, not -1"),
    ("a node of id -1", b'{"l":1,"i":-1,"text":"x","size":1}', "i must be a whole number >= 0, not -1"),
    ("a node of a wrong size", b'{"l":1,"i":0,"text":"xy","size":1}', "size 1 is not the text's 2 bytes"),
    ("a node of a float level", b'{"l":1.0,"i":0,"text":"x","size":1}', "l must be a whole number >= 0, not 1.0"),
]


@pytest.mark.parametrize(("line", "message"), [c[1:] for c in MESSAGE_ERRORS], ids=[c[0] for c in MESSAGE_ERRORS])
def test_a_message_line_that_is_not_well_formed_says_what_is_wrong(line: bytes, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        decode(line, tree=False)
    assert str(caught.value) == message


@pytest.mark.parametrize(("line", "message"), [c[1:] for c in TREE_ERRORS], ids=[c[0] for c in TREE_ERRORS])
def test_a_tree_line_that_is_not_well_formed_says_what_is_wrong(line: bytes, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        decode(line, tree=True)
    assert str(caught.value) == message


def test_a_line_that_is_not_json_says_so_with_the_parsers_words() -> None:
    with pytest.raises(ValueError) as caught:
        decode(b'{"i":', tree=False)
    assert str(caught.value) == "not JSON: Expecting value: line 1 column 6 (char 5)"
    with pytest.raises(ValueError) as caught:
        decode(b'{"text":"\xff"}', tree=True)
    assert str(caught.value).startswith("not JSON: 'utf-8' codec can't decode byte 0xff")


GOOD = [
    ("a message", b'{"i":3,"kind":"user","text":"h\xc3\xa9","size":3,"date":"2026-12-01"}', False,
     Message(3, Kind.USER, "h\u00e9", "2026-12-01")),
    ("an old talk line", b'{"i":0,"kind":"talk","text":"ok","size":2,"date":"d"}', False, Message(0, Kind.EUKHE, "ok", "d")),
    ("a message with a key", b'{"i":0,"kind":"tool","text":"","size":0,"date":"d","key":"k1"}', False,
     Message(0, Kind.TOOL, "", "d", "k1")),
    ("fields in another order", b'{"date":"d","size":1,"text":"x","kind":"note","i":9}', False, Message(9, Kind.NOTE, "x", "d")),
    ("a message torn marker", b'{"torn":4}', False, Torn(4)),
    ("a node", b'{"l":2,"i":4,"text":"sum","size":3}', True, NodeLine((2, 4), "sum")),
    ("a node of level 0 id 0", b'{"l":0,"i":0,"text":"","size":0}', True, NodeLine((0, 0), "")),
    ("a merge", b'{"merge":[[1,0],[2,4]],"open":true,"t":8}', True, MergeLine(((1, 0), (2, 4)), True, 8)),
    ("a merge closed by default", b'{"merge":[],"t":0}', True, MergeLine((), False, 0)),
    ("a tree torn marker", b'{"torn":0}', True, Torn(0)),
]


@pytest.mark.parametrize(("line", "tree", "record"), [c[1:] for c in GOOD], ids=[c[0] for c in GOOD])
def test_a_good_line_decodes_to_its_record(line: bytes, tree: bool, record: object) -> None:
    assert decode(line, tree=tree) == record


@pytest.mark.parametrize(
    ("line", "tree"),
    [
        (b'{"i":0,"kind":"user","text":"hi","size":3,"date":"d"}', False),
        (b'{"i":0,"kind":"user","text":"hi","size":true,"date":"d"}', False),
        (b'{"i":0,"kind":"user","text":"hi","size":2,"date":7}', False),
        (b'{"i":0,"kind":"robot","text":"hi","size":2,"date":"d"}', False),
        (b'{"l":1,"i":0,"text":"hi","size":3}', True),
        (b'{"l":true,"i":0,"text":"hi","size":2}', True),
        (b'{"l":1,"i":"0","text":"hi","size":2}', True),
        (b'{"l":1,"i":0,"text":"hi","size":2}', False),
        (b'{"i":0,"kind":"user","text":"hi","size":2,"date":"d"}', True),
    ],
)
def test_a_line_one_field_off_is_refused(line: bytes, tree: bool) -> None:
    with pytest.raises(ValueError):
        decode(line, tree=tree)


def test_lines_are_written_as_the_format_says() -> None:
    assert encode(Message(3, Kind.EUKHE, "h\u00e9", "2026-12-01")) == (
        b'{"i":3,"kind":"eukhe","text":"h\xc3\xa9","size":3,"date":"2026-12-01"}\n'
    )
    assert encode(Message(0, Kind.TOOL, "x", "d", "k")) == b'{"i":0,"kind":"tool","text":"x","size":1,"date":"d","key":"k"}\n'
    assert encode(NodeLine((1, 2), "ab")) == b'{"l":1,"i":2,"text":"ab","size":2}\n'
    assert encode(MergeLine(((1, 0), (2, 4)), False, 6)) == b'{"merge":[[1,0],[2,4]],"open":false,"t":6}\n'
    assert encode(Torn(5)) == b'{"torn":5}\n'


def test_kind_of_reads_every_kind_and_the_old_name() -> None:
    assert [kind_of(name) for name in ["user", "eukhe", "tool", "echo", "work", "note", "talk"]] == [
        Kind.USER, Kind.EUKHE, Kind.TOOL, Kind.ECHO, Kind.WORK, Kind.NOTE, Kind.EUKHE,
    ]


BLOCKS: list[tuple[dict[str, Any], list[tuple[Kind, str]]]] = [  # what one content block logs (lines.entry_lines), a missing text taken as empty
    ({"type": "thinking", "text": "never logged"}, []),
    ({"type": "tool_use", "name": "zoom", "input": {"n": 1, "id": "é"}}, [(Kind.TOOL, 'zoom {"id": "é", "n": 1}')]),
    ({"type": "tool_result", "text": "0+1|hi"}, [(Kind.ECHO, "0+1|hi")]),
    ({"type": "tool_result"}, [(Kind.ECHO, "")]),
    ({"type": "report", "name": "Helper", "text": "done"}, [(Kind.WORK, "[Helper] done")]),
    ({"type": "report", "name": "Helper"}, [(Kind.WORK, "[Helper] ")]),
    ({"type": "text", "text": "reply"}, [(Kind.EUKHE, "reply")]),
    ({"type": "text"}, []),
    ({"type": "user", "text": "asked"}, [(Kind.USER, "asked")]),
    ({"type": "user"}, []),
]


@pytest.mark.parametrize(("block", "logged"), BLOCKS, ids=[f"{b['type']} {sorted(b)}" for b, _ in BLOCKS])
def test_a_content_block_logs_its_lines(block: dict[str, object], logged: list[tuple[Kind, str]]) -> None:
    assert entry_lines(block) == logged


def test_an_unknown_content_block_is_named() -> None:
    with pytest.raises(ValueError, match=r"^unknown content block type 'image'$"):
        entry_lines({"type": "image"})
