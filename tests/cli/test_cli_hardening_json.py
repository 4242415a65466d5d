"""Hardening from the outside (issue 30), JSON: every JSON text eukhe reads (a server's event, a
document, an argument) passes through one reader, ``eukhe.strict_json.loads``, that refuses a
text nested deeper than its cap before any parser recurses into it, and NaN, Infinity and
numbers past the largest float; the refusal is a typed error naming the document and the depth.
What eukhe writes is JSON too: never NaN or Infinity.

Each command is judged from the outside: a 20,000-deep event makes `eukhe ask` exit 1 with one
line (not 70), `eukhe chat` show one line and exit 1 (not "a bug in eukhe", not 0); a deep or
non-finite models.json, settings.json or bundle is a diagnostic or a settings error."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import InProcess, run_process
from loopback_models import write_loopback_models

from eukhe import strict_json
from eukhe.settings import files
from spec.loopback import Body, LoopbackServer, event_frame

DEEP = 20_000
DEEP_TEXT = "[" * DEEP + "]" * DEEP
NESTED = f"nested more than {strict_json.MAX_DEPTH} brackets deep"


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as running:
        yield running


# -- the one reader ----------------------------------------------------------------------------------


def test_the_reader_takes_json_up_to_its_cap_and_refuses_one_bracket_more() -> None:
    cap = strict_json.MAX_DEPTH
    assert strict_json.loads("[" * cap + "]" * cap) == json.loads("[" * cap + "]" * cap)
    assert strict_json.loads('{"a": ' * cap + "1" + "}" * cap, "settings.json") is not None
    with pytest.raises(strict_json.JsonRefused) as refused:
        strict_json.loads('{"a": ' * (cap + 1) + "1" + "}" * (cap + 1), "settings.json")
    error = refused.value
    assert isinstance(error, json.JSONDecodeError) and isinstance(error, ValueError)  # every existing handler catches it
    assert error.what == "settings.json" and error.depth == cap + 1
    assert str(error).startswith(f"settings.json: {NESTED}") and error.colno == 6 * cap + 1  # the first bracket too deep


def test_the_reader_refuses_a_deep_text_without_recursing() -> None:
    for text in (DEEP_TEXT, "[" * DEEP, '{"a":' * DEEP, "[" * DEEP + "1"):
        with pytest.raises(strict_json.JsonRefused, match=NESTED):
            strict_json.loads(text, "event")


def test_brackets_inside_strings_do_not_count() -> None:
    text = json.dumps(["[" * 5000, "{" * 5000, '\\"[[[' * 100])
    assert strict_json.loads(text) == ["[" * 5000, "{" * 5000, '\\"[[[' * 100]
    assert strict_json.loads(b'["' + b"[" * 500 + b'"]') == ["[" * 500]  # bytes are read as json.loads reads them


@pytest.mark.parametrize("text", ["NaN", "[Infinity]", '{"a": -Infinity}', "1e999", "[-1e400]", "1" * 5000])
def test_the_reader_refuses_numbers_that_are_not_json(text: str) -> None:
    with pytest.raises(strict_json.JsonRefused) as refused:
        strict_json.loads(text, "models.json")
    assert str(refused.value).startswith("models.json: ")


def test_the_writer_refuses_nan_and_infinity() -> None:
    for value in (math.nan, [math.inf], {"a": -math.inf}):
        with pytest.raises(ValueError):
            strict_json.dumps(value)
    with pytest.raises(ValueError):
        files.dumps_document({"x": math.nan})
    assert strict_json.dumps({"a": 1.5}) == '{"a": 1.5}'


def test_a_deep_settings_document_is_a_settings_error(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"a": ' * DEEP + "1" + "}" * DEEP, encoding="utf-8")
    with pytest.raises(files.DocumentError) as refused:
        files.read_document(path)
    assert refused.value.kind == files.NOT_JSON and NESTED in str(refused.value)


# -- eukhe ask and eukhe chat on a deep event ----------------------------------------------------------


def _deep_body(api: str, payload: str) -> Body:
    if api == "bedrock-converse-stream":
        headers = {":event-type": "messageStart", ":content-type": "application/json", ":message-type": "event"}
        return Body(event_frame(headers, payload.encode()))  # type: ignore[arg-type]
    event = {"anthropic-messages": "event: message_start\n", "openai-responses": "event: response.created\n"}.get(api, "")
    return Body(f"{event}data: {payload}\n\n".encode())


@pytest.mark.parametrize("api", ["openai-completions", "openai-responses", "anthropic-messages", "google-generative-ai", "bedrock-converse-stream"])
def test_ask_refuses_a_server_event_nested_20000_deep(server: LoopbackServer, agent: Path, api: str) -> None:
    write_loopback_models(agent, server, {"loop": api})
    (agent / "settings.json").write_text(json.dumps({"retry": {"enabled": False}}), encoding="utf-8")
    server.script(_deep_body(api, DEEP_TEXT))
    done = run_process(["ask", "--provider", "loop", "hi"], agent)
    line = done.one_error_line()
    assert done.status == 1, done
    assert line.startswith("eukhe ask: loop: ") and NESTED in line, line


def test_ask_whose_server_sends_nan_content_fails(server: LoopbackServer, agent: Path) -> None:
    write_loopback_models(agent, server, {"loop": "openai-completions"})
    head = '{"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
    body = (f"data: {head}\"delta\":{{\"content\":NaN}}}}]}}\n\n"
            f"data: {head}\"delta\":{{}},\"finish_reason\":\"stop\"}}]}}\n\ndata: [DONE]\n\n")
    server.script(Body(body.encode()))
    done = run_process(["ask", "--provider", "loop", "hi"], agent)
    assert done.status == 1 and "NaN is not a JSON number" in done.one_error_line(), done


def test_chat_shows_a_deep_event_as_one_line_and_exits_1(server: LoopbackServer, agent: Path) -> None:
    write_loopback_models(agent, server, {"loop": "openai-completions"})
    (agent / "settings.json").write_text(json.dumps({"retry": {"enabled": False}}), encoding="utf-8")
    server.script(_deep_body("openai-completions", DEEP_TEXT))
    done = run_process(["chat", "--provider", "loop"], agent, stdin=b"hi\n")
    assert "a bug in eukhe" not in done.err and "Traceback" not in done.err, done.err
    errors = [line for line in done.err.splitlines() if line.startswith("eukhe chat: loop: ")]
    assert len(errors) == 1 and NESTED in errors[0], done.err
    assert done.status == 1, done


def test_chat_reports_deep_tool_arguments_as_a_tool_error_not_a_bug(server: LoopbackServer, agent: Path) -> None:
    from spec.loopback import Call, Stream, Text

    write_loopback_models(agent, server, {"loop": "openai-completions"})
    server.script(Stream([Call("date", DEEP_TEXT, id="c1")], stop="toolUse"), Stream([Text("fine")]))
    done = run_process(["chat", "--provider", "loop"], agent, stdin=b"hi\n")
    assert "a bug in eukhe" not in done.err and "Traceback" not in done.err, done.err
    assert "fine" in done.out and done.status == 0, done


# -- documents -------------------------------------------------------------------------------------


def test_model_list_names_a_deep_models_json_and_lists_the_catalog(agent: Path) -> None:
    agent.mkdir()
    (agent / "models.json").write_text('{"providers": ' + DEEP_TEXT + "}", encoding="utf-8")
    done = run_process(["model", "list"], agent)
    assert done.status == 0 and "Traceback" not in done.err, done
    assert done.one_error_line() == f"eukhe model list: {agent / 'models.json'}: not JSON: {NESTED} at line 1 column 114"
    assert "anthropic/" in done.out


@pytest.mark.parametrize("text", ['{"retry": {"maxRetries": NaN}}', '{"temperature": 1e999}', '{"a": ' * DEEP + "1" + "}" * DEEP])
def test_mcp_add_refuses_a_settings_json_that_is_not_json_and_writes_nothing(inproc: InProcess, agent: Path, text: str) -> None:
    agent.mkdir()
    (agent / "settings.json").write_text(text, encoding="utf-8")
    done = inproc("mcp", "add", "srv", '{"command": "x"}')
    assert done.status == 2, done
    line = done.one_error_line()
    assert line.startswith(f"eukhe mcp add: settings error: {agent / 'settings.json'}: not JSON") and line.endswith("nothing written"), line
    assert (agent / "settings.json").read_text(encoding="utf-8") == text
    shown = inproc("settings", "show")
    assert shown.status == 0 and f"settings error: {agent / 'settings.json'}: not JSON" in shown.err


def test_mcp_add_never_writes_nan(inproc: InProcess, agent: Path) -> None:
    done = inproc("mcp", "add", "srv", '{"command": "x", "timeout": NaN}')
    assert done.status == 2 and "NaN" in done.one_error_line()
    assert not (agent / "settings.json").exists()


@pytest.mark.parametrize("name, text", [("engine.json", DEEP_TEXT), ("engine.json", '{"kind": NaN}')])
def test_a_tiny_model_document_that_is_not_json_is_a_typed_error(tmp_path: Path, name: str, text: str) -> None:
    from eukhe.tiny import engine

    (tmp_path / name).write_text(text, encoding="utf-8")
    with pytest.raises(engine.EngineError, match="not JSON"):
        engine.load(tmp_path)


def test_a_deep_cvar_value_in_config_cfg_is_a_settings_error(inproc: InProcess, agent: Path) -> None:
    agent.mkdir()
    (agent / "config.cfg").write_text("set trustedProjects " + "[" * DEEP + "]" * DEEP + "\n", encoding="utf-8")
    done = inproc("settings", "show")
    assert done.status == 0 and "Traceback" not in done.err
    assert "trustedProjects = []  [default]" in done.out
    assert "CvarError::BadValue(trustedProjects)" in done.err


def test_the_protocol_lines_of_the_tiny_worker_refuse_deep_json() -> None:
    from eukhe.tiny import protocol

    assert protocol.decode(DEEP_TEXT.encode()) is None
    assert protocol.decode(b'{"op": NaN}') is None

