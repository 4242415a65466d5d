"""Tool calls at stream end (inference.md S6.10: generation leak scan and classify) and tool-call
argument repair (utils::json_parse::tests, json_parse::relaxed::tests, tool::arguments::tests,
tool::result::tests), on production."""

from __future__ import annotations

import json

import pytest

from eukhe.inference import repair, toolcalls

OFFERED = ["read", "edit", "bash"]
LEAKS = {
    "hermes-json": '<tool_call>\n{"name": "read", "arguments": {"path": "a.py"}}\n</tool_call>',
    "qwen3-coder-xml": "<tool_call>\n<function=read>\n<parameter=path>\na.py\n</parameter>\n</function>\n</tool_call>",
    "omp-qwen": '✿FUNCTION✿: read\n✿ARGS✿: {"path": "a.py"}\n✿RESULT✿',
    "kimi": '<|tool_calls_section_begin|><|tool_call_begin|>functions.read:0<|tool_call_argument_begin|>{"path": "a.py"}<|tool_call_end|><|tool_calls_section_end|>',
    "deepseek-dsml": '<｜DSML｜function_calls>\n<｜DSML｜invoke name="read">\n<｜DSML｜parameter name="path" string="true">a.py</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>',
}


def test_calls_are_read_at_stream_end_whatever_the_stop_reason() -> None:
    for stop in ("stop", "toolUse", "end_turn", "error"):
        out = toolcalls.read_reply("I'll read it.", [{"name": "read", "arguments": '{"path": "a"}', "id": "1"}], stop, OFFERED, 0)
        assert out.kind == toolcalls.RUN_CALLS and out.stop == stop and out.calls[0].name == "read" and not out.rebuilt


def test_a_length_reply_runs_no_call_and_each_is_truncated() -> None:
    calls: list[dict[str, object]] = [{"name": "edit", "arguments": '{"path": "a", "text": "lo'}, {"name": "read", "arguments": {"path": "b"}}]
    out = toolcalls.read_reply("", calls, "length", OFFERED, 0)
    assert out.kind == toolcalls.TRUNCATED and len(out.calls) == 2 and out.results == (toolcalls.TRUNCATED_RESULT,) * 2
    assert "repeat the call with complete arguments" in out.results[0].lower() and "minimal version first" in out.results[0]
    assert out.calls[1].arguments == '{"path": "b"}'


@pytest.mark.parametrize("family", toolcalls.FAMILIES)
def test_leaked_markup_of_each_family_is_rebuilt_into_calls(family: str) -> None:
    out = toolcalls.read_reply(f"Reading the file.\n{LEAKS[family]}", [], "stop", OFFERED, 1)
    assert out.kind == toolcalls.RUN_CALLS and out.rebuilt and out.stop == toolcalls.STOP_TOOL_USE
    assert [c.name for c in out.calls] == ["read"] and json.loads(out.calls[0].arguments) == {"path": "a.py"}
    assert out.text == "Reading the file." and out.leak_notes == 0
    assert [leak.family for leak in toolcalls.scan(LEAKS[family])] == [family]


def test_markup_in_quoted_code_is_not_a_leak() -> None:
    for family, markup in LEAKS.items():
        for text in (f"```\n{markup}\n```", f"`{markup}`", f"~~~xml\n{markup}", f"``{markup}``"):
            assert toolcalls.scan(text) == [], (family, text)
            assert toolcalls.read_reply(text, [], "stop", OFFERED, 0).kind == toolcalls.ANSWER


def test_a_leak_that_does_not_parse_or_names_no_offered_tool_is_retried_at_most_twice() -> None:
    bad = [LEAKS["hermes-json"].replace("read", "delete_everything"), LEAKS["kimi"][:-40], '<tool_call>{"name": "read", "arguments": {"path": </tool_call>']
    for text in bad:
        first = toolcalls.read_reply(text, [], "stop", OFFERED, 0)
        assert first.kind == toolcalls.LEAK_RETRY and first.leak_notes == 1 and first.note == toolcalls.LEAK_NOTE
        second = toolcalls.read_reply(text, [], "stop", OFFERED, first.leak_notes)
        assert second.kind == toolcalls.LEAK_RETRY and second.leak_notes == 2
        third = toolcalls.read_reply(text, [], "stop", OFFERED, second.leak_notes)
        assert third.kind == toolcalls.ANSWER and third.text == text and third.leak_notes == 0
    mixed = LEAKS["hermes-json"] + "\n" + LEAKS["kimi"].replace("read", "nope")
    assert toolcalls.read_reply(mixed, [], "stop", OFFERED, 0).kind == toolcalls.LEAK_RETRY  # every leaked call must be good


def test_no_text_and_no_call_is_no_answer() -> None:
    assert toolcalls.read_reply("  \n", [], "stop", OFFERED, 0).note == toolcalls.NO_ANSWER_NOTE
    assert toolcalls.read_reply("", [], "length", OFFERED, 0).kind == toolcalls.LENGTH_NOTE
    with pytest.raises(ValueError):
        toolcalls.read_reply("", [], "stop", OFFERED, -1)


def test_several_leaked_calls_keep_their_order() -> None:
    text = LEAKS["deepseek-dsml"].replace("</｜DSML｜function_calls>", '<｜DSML｜invoke name="bash">\n<｜DSML｜parameter name="n" string="false">[1, 2]</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>')
    out = toolcalls.read_reply("a " + LEAKS["omp-qwen"] + " b\n" + text, [], "stop", OFFERED, 0)
    assert [c.name for c in out.calls] == ["read", "read", "bash"] and json.loads(out.calls[2].arguments) == {"n": [1, 2]}


# -- utils::json_parse::tests, json_parse::relaxed::tests -------------------------------------------


@pytest.mark.parametrize(
    "text, value",
    [
        ('{"a": 1}', {"a": 1}),
        ('{"a": "x\ty\nz"}', {"a": "x\ty\nz"}),  # raw control characters escaped
        ('{"a": "C:\\dir\\quux"}', {"a": "C:\\dir\\quux"}),  # invalid escapes kept literally
        ("{'a': 'b'}", {"a": "b"}),
        ("{a: 1, b: [1, 2,],}", {"a": 1, "b": [1, 2]}),
        ("{a: True, b: False, c: None}", {"a": True, "b": False, "c": None}),
        ("{a: 0x1F, b: 0b101, c: -2.5e3}", {"a": 31, "b": 5, "c": -2500.0}),
        ("// comment\n{a: /* here */ 1, # and here\n b: 2}", {"a": 1, "b": 2}),
        ("{a: some text, b: 2}", {"a": "some text", "b": 2}),
        ("{,a: 1,, b: 2}", {"a": 1, "b": 2}),
    ],
)
def test_the_relaxed_reading_repairs(text: str, value: object) -> None:
    assert repair.parse_tool_call_arguments(text) == value


@pytest.mark.parametrize(
    "text",
    ['{"a": 1', "{a: 1} x", "{a: NaN}", "{a: Infinity}", '{"a": 1e999}', "{a: x: y}", "{a: b 'c'}", "[1, 2]", '"text"', "{a: /* open", "{a: 1.2.3}", "{" * 300 + "}" * 300],
)
def test_the_relaxed_reading_refuses(text: str) -> None:
    got = repair.parse_tool_call_arguments(text)
    assert set(got) == {repair.PARSE_ERROR, repair.RAW_JSON} and got[repair.RAW_JSON] == text[:512]
    fixed = repair.repair_arguments(got, {"type": "object", "properties": {}})
    assert [e.kind for e in fixed.errors] == ["invalid_arguments"] and repair.RAW_JSON not in fixed.errors[0].message


def test_the_raw_text_is_cut_at_512_characters() -> None:
    got = repair.parse_tool_call_arguments("{" + "x" * 2000)
    assert len(got[repair.RAW_JSON]) == 512
    assert repair.parse_tool_call_arguments("") == {}


# -- tool::arguments::tests --------------------------------------------------------------------------

SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "path": {"type": "string"},
        "edits": {"type": "array"},
        "options": {"type": "object"},
        "paths": {"type": "array", "items": {"type": "string"}},
        "count": {"type": "integer"},
        "ratio": {"type": "number"},
        "force": {"type": "boolean"},
        "label": {"type": "string"},
    },
}


def test_each_repair_gives_an_argument_repaired_warning() -> None:
    args = {'"path"': "a.py", "edits": '[{"old": "a"}]', "options": '{"deep": true}', "paths": "b.py", "count": "3", "ratio": "0.5", "force": "TRUE", "label": 7}
    fixed = repair.repair_arguments(args, SCHEMA)
    assert fixed.arguments == {"path": "a.py", "edits": [{"old": "a"}], "options": {"deep": True}, "paths": ["b.py"], "count": 3, "ratio": 0.5, "force": True, "label": "7"}
    assert len(fixed.warnings) == 8 and all(w.startswith("argument_repaired") for w in fixed.warnings)
    assert fixed.errors == []
    clean = repair.repair_arguments({"path": "a.py", "count": 3}, SCHEMA)
    assert clean.warnings == [] and clean.arguments == {"path": "a.py", "count": 3}


def test_a_json_string_key_keeps_a_plain_key_that_is_present() -> None:
    fixed = repair.repair_arguments({'"path"': "x", "path": "y"}, {"type": "object", "properties": {"path": {"type": "string"}}})
    assert fixed.arguments == {'"path"': "x", "path": "y"} and fixed.warnings == []


def test_an_unknown_key_in_a_closed_schema_stays_an_error() -> None:
    fixed = repair.repair_arguments({"path": "a", "colour": "red"}, SCHEMA)
    assert [e.kind for e in fixed.errors] == ["unknown_key"] and "colour" in fixed.errors[0].message
    open_schema = {"type": "object", "properties": {"path": {"type": "string"}}}
    assert repair.repair_arguments({"path": "a", "colour": "red"}, open_schema).errors == []


def test_a_spelling_that_is_not_the_type_is_left_for_validation() -> None:
    fixed = repair.repair_arguments({"count": "three", "force": "yes", "edits": "[1,", "ratio": "1e999"}, SCHEMA)
    assert fixed.warnings == [] and fixed.arguments == {"count": "three", "force": "yes", "edits": "[1,", "ratio": "1e999"}


# -- tool::result::tests -----------------------------------------------------------------------------


def test_tool_unavailable_names_up_to_three_offered_tools_nearest_first() -> None:
    offered = ["bash", "read_file", "write_file", "reed_file", "edit", "mcp__git__read_file", "grep"]
    assert repair.suggestions("read_fil", offered) == ["read_file", "reed_file"]
    assert repair.suggestions("rd_file", offered) == ["read_file", "reed_file", "write_file"]
    assert repair.suggestions("mcp__fs__read_file", offered) == ["mcp__git__read_file", "read_file"]
    assert repair.suggestions("search_grep", offered) == ["grep"]
    assert repair.suggestions("zzz", offered) == []
    message = repair.tool_unavailable("raed_file", offered)
    assert message.startswith("tool_unavailable") and "reed_file, read_file, write_file?" in message
    assert repair.tool_unavailable("zzz", offered) == "tool_unavailable: no tool named 'zzz' is available."
