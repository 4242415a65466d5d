"""Tool calls at stream end (inference.md S6.10): generation::leak scan, generation classify,
round start_tool_round.

Tool calls are read when the stream ends, whatever its stop reason: a reply with calls runs
them (vLLM, llama.cpp and Ollama stop with ``stop`` plus calls); a ``length`` reply runs none
(its arguments may be cut) and each call gets ``truncated``. Tool-call markup leaked into the
text of a call-less reply, in five families (Hermes and Qwen JSON, Qwen3-Coder XML, omp's
"qwen" form, Kimi section tokens, DeepSeek DSML; never inside quoted code), is rebuilt into
calls when every leaked call parses and names an offered tool: the markup leaves the text, the
stop reason becomes toolUse and the calls run as tool calls; otherwise the reply is retried with
a leak note, at most LEAK_NOTES (2) in a row, then it answers as text. No text and no call is no
answer: the no-answer note, or the length note after a length stop.

The wire side hands ``read_reply`` its stream's result as plain data: the assembled text, the
calls as dicts (``name``, ``arguments`` as text or object, optional ``id``) and the stop reason.

Derived: the markup of each family is the form its model's template writes (the seed names the
families, not their bytes); omp's "qwen" form is Qwen-Agent's ``✿FUNCTION✿: name`` /
``✿ARGS✿: {...}``. Quoted code runs from a run of backticks (or of 3 or more
tildes) to the next run like it; an unclosed fence runs to the end.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from eukhe.inference import repair

LEAK_NOTES = 2
RUN_CALLS, TRUNCATED, LEAK_RETRY, ANSWER, LENGTH_NOTE, NO_ANSWER = "run_calls", "truncated", "leak_retry", "answer", "length_note", "no_answer"
STOP_LENGTH, STOP_TOOL_USE = "length", "toolUse"
FAMILIES = ("hermes-json", "qwen3-coder-xml", "omp-qwen", "kimi", "deepseek-dsml")

TRUNCATED_RESULT = (
    "truncated: the reply hit its length limit, so this call's arguments may be cut and it did not run. "
    "Repeat the call with complete arguments; write large content as a minimal version first, then extend it with edits."
)
LEAK_NOTE = "Your last reply wrote tool-call markup as text. Call tools through the tool-calling interface, not in the text."
LENGTH_NOTE_TEXT = "Your last reply hit the length limit before it answered. Answer briefly, or call a tool."
NO_ANSWER_NOTE = "Your last reply had no text and no tool call. Answer, or call a tool."


@dataclass(frozen=True)
class Call:
    name: str
    arguments: str  # as text (JSON as the model wrote it)
    id: str = ""


@dataclass(frozen=True)
class Leak:
    family: str
    start: int
    end: int
    call: Call | None  # None: the markup does not parse


# -- the scan ------------------------------------------------------------------------------------


def quoted_spans(text: str) -> list[tuple[int, int]]:
    """The spans of quoted code: from a run of backticks (or of 3 or more tildes) to the next
    run of the same character and length; an unclosed fence (3 or more) runs to the end."""
    spans: list[tuple[int, int]] = []
    opening: re.Match[str] | None = None
    for run in re.finditer(r"`+|~{3,}", text):
        if opening is None:
            opening = run
        elif run.group() == opening.group():
            spans.append((opening.start(), run.end()))
            opening = None
    if opening is not None and len(opening.group()) >= 3:
        spans.append((opening.start(), len(text)))
    return spans


def _in(spans: list[tuple[int, int]], at: int) -> bool:
    return any(a <= at < b for a, b in spans)


_BAR = "[|｜]"
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("tool_call", re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.DOTALL)),
    ("omp-qwen", re.compile(r"✿FUNCTION✿\s*:\s*(.*?)(?:✿RESULT✿\s*:?|✿RETURN✿\s*:?|(?=✿FUNCTION✿)|\Z)", re.DOTALL)),
    ("kimi", re.compile(r"<\|tool_calls_section_begin\|>(.*?)(?:<\|tool_calls_section_end\|>|\Z)", re.DOTALL)),
    ("deepseek-dsml", re.compile(rf"<{_BAR}DSML{_BAR}function_calls>(.*?)(?:</{_BAR}DSML{_BAR}function_calls>|\Z)", re.DOTALL)),
)


def _json_call(body: str) -> Call | None:
    try:
        value = repair.parse_json_with_repair(body.strip())
    except ValueError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("name"), str) or not value["name"]:
        return None
    arguments = value.get("arguments", value.get("parameters", {}))
    if isinstance(arguments, str):
        parsed = repair.parse_tool_call_arguments(arguments)
        if repair.PARSE_ERROR in parsed:
            return None
        arguments = parsed
    if not isinstance(arguments, dict):
        return None
    return Call(value["name"], json.dumps(arguments, ensure_ascii=False))


def _coder_call(body: str) -> Call | None:
    found = re.fullmatch(r"\s*<function=([^>\n]+)>(.*?)</function>\s*", body, re.DOTALL)
    if found is None:
        return None
    arguments: dict[str, Any] = {}
    rest = found.group(2)
    for parameter in re.finditer(r"<parameter=([^>\n]+)>(.*?)</parameter>", rest, re.DOTALL):
        value = parameter.group(2)
        arguments[parameter.group(1).strip()] = value.removeprefix("\n").removesuffix("\n")
    if re.sub(r"<parameter=([^>\n]+)>(.*?)</parameter>", "", rest, flags=re.DOTALL).strip():
        return None
    return Call(found.group(1).strip(), json.dumps(arguments, ensure_ascii=False))


def _omp_call(body: str) -> Call | None:
    found = re.fullmatch(r"([^\n]+)\n\s*✿ARGS✿\s*:\s*(.*)", body.strip(), re.DOTALL)
    if found is None:
        return None
    arguments = repair.parse_tool_call_arguments(found.group(2).strip())
    if repair.PARSE_ERROR in arguments:
        return None
    return Call(found.group(1).strip(), json.dumps(arguments, ensure_ascii=False))


def _kimi_calls(body: str) -> list[Call | None]:
    calls: list[Call | None] = []
    pieces = re.split(r"<\|tool_call_begin\|>", body)
    if pieces[0].strip():
        calls.append(None)
    for piece in pieces[1:]:
        found = re.fullmatch(r"\s*(?:functions\.)?([^:<\s]+)(?::\d+)?\s*<\|tool_call_argument_begin\|>(.*?)<\|tool_call_end\|>\s*", piece, re.DOTALL)
        if found is None:
            calls.append(None)
            continue
        arguments = repair.parse_tool_call_arguments(found.group(2))
        calls.append(None if repair.PARSE_ERROR in arguments else Call(found.group(1), json.dumps(arguments, ensure_ascii=False)))
    return calls or [None]


def _dsml_calls(body: str) -> list[Call | None]:
    calls: list[Call | None] = []
    invoke = re.compile(rf'<{_BAR}DSML{_BAR}invoke\s+name="([^"]+)"\s*>(.*?)</{_BAR}DSML{_BAR}invoke>', re.DOTALL)
    parameter = re.compile(rf'<{_BAR}DSML{_BAR}parameter\s+name="([^"]+)"(?:\s+string="(true|false)")?\s*>(.*?)</{_BAR}DSML{_BAR}parameter>', re.DOTALL)
    if invoke.sub("", body).strip():
        calls.append(None)
    for found in invoke.finditer(body):
        arguments: dict[str, Any] = {}
        ok = not parameter.sub("", found.group(2)).strip()
        for p in parameter.finditer(found.group(2)):
            if p.group(2) == "false":
                try:
                    arguments[p.group(1)] = repair.parse_json_with_repair(p.group(3))
                except ValueError:
                    ok = False
            else:
                arguments[p.group(1)] = p.group(3)
        calls.append(Call(found.group(1), json.dumps(arguments, ensure_ascii=False)) if ok else None)
    return calls or [None]


def scan(text: str) -> list[Leak]:
    """Every leaked call in ``text`` outside quoted code, in text order (None: does not parse)."""
    quoted = quoted_spans(text)
    found: list[Leak] = []
    taken: list[tuple[int, int]] = []
    for kind, pattern in _PATTERNS:
        for match in pattern.finditer(text):
            if _in(quoted, match.start()) or _in(taken, match.start()):
                continue
            taken.append((match.start(), match.end()))
            body = match.group(1)
            if kind == "tool_call":
                is_xml = body.lstrip().startswith("<function=")
                family = "qwen3-coder-xml" if is_xml else "hermes-json"
                call = (_coder_call(body) if is_xml else _json_call(body)) if match.group(0).endswith("</tool_call>") else None
                found.append(Leak(family, match.start(), match.end(), call))
            elif kind == "omp-qwen":
                found.append(Leak("omp-qwen", match.start(), match.end(), _omp_call(body)))
            elif kind == "kimi":
                calls = _kimi_calls(body) if match.group(0).endswith("<|tool_calls_section_end|>") else [None]
                found.extend(Leak("kimi", match.start(), match.end(), c) for c in calls)
            else:
                calls = _dsml_calls(body) if re.search(rf"</{_BAR}DSML{_BAR}function_calls>$", match.group(0)) else [None]
                found.extend(Leak("deepseek-dsml", match.start(), match.end(), c) for c in calls)
    return sorted(found, key=lambda leak: leak.start)


def without(text: str, leaks: Sequence[Leak]) -> str:
    """The text with every leak's markup removed (the rest kept, trimmed)."""
    out: list[str] = []
    at = 0
    for start, end in sorted({(leak.start, leak.end) for leak in leaks}):
        if start >= at:
            out.append(text[at:start])
            at = end
    out.append(text[at:])
    return "".join(out).strip()


# -- the classification at stream end --------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """What the harness does with the reply: ``kind``, the calls it runs (or marks truncated,
    each with ``results``), the stop reason it records, the text it keeps, the leak notes spent
    in a row after it, whether the calls were rebuilt from leaked markup, the note of a retry."""

    kind: str
    calls: tuple[Call, ...]
    stop: str
    text: str
    leak_notes: int
    rebuilt: bool = False
    results: tuple[str, ...] = ()
    note: str = ""


def _call_of(raw: Mapping[str, Any]) -> Call:
    arguments = raw.get("arguments", "")
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return Call(str(raw.get("name", "")), arguments, str(raw.get("id", "")))


def _with_calls(calls: tuple[Call, ...], stop: str, text: str, rebuilt: bool) -> Outcome:
    if stop == STOP_LENGTH:
        return Outcome(TRUNCATED, calls, stop, text, 0, rebuilt, tuple(TRUNCATED_RESULT for _ in calls))
    return Outcome(RUN_CALLS, calls, STOP_TOOL_USE if rebuilt else stop, text, 0, rebuilt)


def read_reply(text: str, calls: Sequence[Mapping[str, Any]], stop: str, offered: Sequence[str], leak_notes: int) -> Outcome:
    """Classify a reply at stream end (``leak_notes``: the leak notes spent in a row before it)."""
    if leak_notes < 0:
        raise ValueError("leak_notes is a natural")
    native = tuple(_call_of(c) for c in calls)
    if native:
        return _with_calls(native, stop, text, False)
    leaks = scan(text)
    if leaks:
        if all(leak.call is not None and leak.call.name in offered for leak in leaks):
            rebuilt = tuple(leak.call for leak in leaks if leak.call is not None)
            return _with_calls(rebuilt, stop, without(text, leaks), True)
        if leak_notes < LEAK_NOTES:
            return Outcome(LEAK_RETRY, (), stop, text, leak_notes + 1, note=LEAK_NOTE)
        return Outcome(ANSWER, (), stop, text, 0)
    if text.strip():
        return Outcome(ANSWER, (), stop, text, 0)
    if stop == STOP_LENGTH:
        return Outcome(LENGTH_NOTE, (), stop, text, 0, note=LENGTH_NOTE_TEXT)
    return Outcome(NO_ANSWER, (), stop, text, 0, note=NO_ANSWER_NOTE)
