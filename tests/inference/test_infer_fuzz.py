"""Fuzzing the relaxed JSON reader and the leak scanner (issue 14 item 9) over random and
adversarial input: no crash; every parse is an object or the parse-error form; every scan gives
leaks inside the text whose calls carry object arguments; every classification is one of the
seed's outcomes. 300 examples per test under ``laws`` (CI), 10^5 under ``make hunt``
(EUKHE_HUNT=1 or HYPOTHESIS_PROFILE=hunt)."""

from __future__ import annotations

import json
import math
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eukhe.inference import repair, toolcalls

HUNTING = os.environ.get("EUKHE_HUNT") == "1" or os.environ.get("HYPOTHESIS_PROFILE", "").startswith("hunt")
EXAMPLES = 100_000 if HUNTING else 300
FUZZ = settings(max_examples=EXAMPLES, suppress_health_check=list(HealthCheck))

JSON_TOKENS = [
    "{", "}", "[", "]", '"', "'", ":", ",", "\\", "\\u", "\\ud800", "\\uZZZZ", "\\q", "/*", "*/", "//", "#",
    "True", "False", "None", "true", "null", "NaN", "Infinity", "-Infinity", "0x", "0x1F", "0b", "0b102", "1e999",
    "-", "+", ".", "1.2.3", "007", "9" * 50, "\n", "\t", "\x00", "\x1f", "\u2028", "\ufeff", "a", "key", "é", "😀",
    "\ud800", " ", "{a:", "{'a': 'b'}", '{"a": 1}', "[1, 2,]", ",,", "{,}", "x y", "x:y", "\"a\"", "'''",
]
MARKUP_TOKENS = [
    "<tool_call>", "</tool_call>", "<function=read>", "</function>", "<parameter=path>", "</parameter>",
    "✿FUNCTION✿:", "✿ARGS✿:", "✿RESULT✿", "✿RETURN✿", "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>",
    "<|tool_call_begin|>", "functions.read:0", "<|tool_call_argument_begin|>", "<|tool_call_end|>",
    "<｜DSML｜function_calls>", "</｜DSML｜function_calls>", '<｜DSML｜invoke name="read">', "</｜DSML｜invoke>",
    '<｜DSML｜parameter name="path" string="true">', '<｜DSML｜parameter name="n" string="false">', "</｜DSML｜parameter>",
    '{"name": "read", "arguments": {"path": "a"}}', '{"name": "edit", "arguments": "{\\"x\\": 1}"}', "read", "\n", "```", "`", "~~~",
    " ", "text", "{", "}", '"', "<", ">", "|", "｜",
]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@st.composite
def broken_json(draw: st.DrawFn) -> str:
    """A JSON document, then cut, spliced or salted with adversarial tokens."""
    text = json.dumps(draw(json_values), ensure_ascii=draw(st.booleans()))
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(text)))
        how = draw(st.sampled_from(["cut", "insert", "drop"]))
        if how == "cut":
            text = text[:at]
        elif how == "insert":
            text = text[:at] + draw(st.sampled_from(JSON_TOKENS)) + text[at:]
        else:
            text = text[:at] + text[at + 1 :]
    return text


json_inputs = st.one_of(
    st.text(),
    st.lists(st.sampled_from(JSON_TOKENS), max_size=40).map("".join),
    broken_json(),
    st.integers(0, 2000).map(lambda n: "[" * n + "]" * n),
    st.integers(0, 2000).map(lambda n: "{a:" * n + "1" + "}" * n),
)
markup_inputs = st.one_of(
    st.lists(st.sampled_from(MARKUP_TOKENS) | st.text(max_size=6), max_size=40).map("".join),
    st.text(),
)


def _is_object_or_parse_error(got: object, text: str) -> bool:
    if not isinstance(got, dict):
        return False
    if repair.PARSE_ERROR in got:
        return set(got) == {repair.PARSE_ERROR, repair.RAW_JSON} and isinstance(got[repair.PARSE_ERROR], str) and got[repair.RAW_JSON] == text[:512]
    return True


@FUZZ
@given(json_inputs)
def test_infer_fuzz_the_relaxed_reader_gives_an_object_or_the_parse_error(text: str) -> None:
    got = repair.parse_tool_call_arguments(text)
    assert _is_object_or_parse_error(got, text)
    if repair.PARSE_ERROR not in got:
        fixed = repair.repair_arguments(got, {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "array", "items": {"type": "string"}}}})
        assert isinstance(fixed.arguments, dict)
    try:
        value = repair.parse_json_with_repair(text)
    except ValueError:
        return
    assert not isinstance(value, float) or math.isfinite(value)


@FUZZ
@given(json_values.filter(lambda v: isinstance(v, dict)))
def test_infer_fuzz_strict_json_objects_read_as_themselves(value: dict[str, object]) -> None:
    text = json.dumps(value)
    assert repair.parse_tool_call_arguments(text) == json.loads(text)


@FUZZ
@given(markup_inputs, st.sampled_from(["stop", "length", "toolUse"]), st.integers(0, 3))
def test_infer_fuzz_the_leak_scanner_never_crashes_and_rebuilds_only_good_calls(text: str, stop: str, notes: int) -> None:
    leaks = toolcalls.scan(text)
    for leak in leaks:
        assert 0 <= leak.start < leak.end <= len(text) and leak.family in toolcalls.FAMILIES
        if leak.call is not None:
            assert isinstance(leak.call.name, str) and isinstance(json.loads(leak.call.arguments), dict)
    out = toolcalls.read_reply(text, [], stop, ["read", "edit"], notes)
    assert out.kind in (toolcalls.RUN_CALLS, toolcalls.TRUNCATED, toolcalls.LEAK_RETRY, toolcalls.ANSWER, toolcalls.LENGTH_NOTE, toolcalls.NO_ANSWER)
    if out.calls:
        assert out.rebuilt and all(c.name in ("read", "edit") for c in out.calls) and len(out.calls) == len(leaks)
    if out.kind == toolcalls.LEAK_RETRY:
        assert leaks and out.leak_notes == notes + 1 <= toolcalls.LEAK_NOTES
