"""The tools as offered and as called: every declared tool's schema valid draft 2020-12 with its
required names declared, the wire form, tool_unavailable, the argument repair and check
before any tool runs (a bad argument names its field and runs nothing), and the bash budget a
project can set only when it is trusted (control.md S4b.5)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import jsonschema
import jsonschema.exceptions
import pytest

from eukhe.agent.tools import TOOLS, Tool, ToolResult, context_for, wire_tools
from eukhe.agent.tools import search
from eukhe.agent.tools.base import DEFAULT_BASH_TIMEOUT_MS
from eukhe.agent.subagents import TASK_SCHEMA
from eukhe.agent.tools.schema import check
from eukhe.memory.prompts import TOOLS as MEMORY_TOOLS
from eukhe.inference.wire.plan import Tool as WireTool
from eukhe.settings.agent import EukheSettings
from eukhe.settings.cvar import AgentLayers

Call = Callable[..., ToolResult]


def test_the_tools_offered() -> None:
    assert [t.name for t in TOOLS] == ["read", "write", "edit", "ls", "glob", "grep", "bash"]
    for tool in TOOLS:
        assert tool.description and "\n" not in tool.description
        assert tool.parameters["type"] == "object" and tool.parameters["additionalProperties"] is False


def schema_faults(schema: Mapping[str, Any], where: str = "the schema") -> list[str]:
    """What is wrong with a tool's schema: not valid draft 2020-12, or a required name (at any
    level) that is not a declared property."""
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.exceptions.SchemaError as error:
        return [f"{where}: {error.message}"]
    properties = schema.get("properties", {})
    faults = [f"{where}: requires undeclared {name!r}" for name in schema.get("required", []) if name not in properties]
    for name, inner in properties.items():
        faults += schema_faults(inner, f"{where}.properties.{name}")
    if isinstance(schema.get("items"), Mapping):
        faults += schema_faults(schema["items"], f"{where}.items")
    return faults


DECLARED = [*((t.name, t.parameters) for t in TOOLS), *((t.name, t.parameters) for t in MEMORY_TOOLS), ("task", TASK_SCHEMA)]


@pytest.mark.parametrize(("name", "schema"), DECLARED, ids=[name for name, _ in DECLARED])
def test_each_schema_is_valid_draft_2020_12(name: str, schema: Mapping[str, Any]) -> None:
    assert schema_faults(schema, name) == []


def test_the_schema_check_finds_each_fault() -> None:
    assert schema_faults({"type": "object", "properties": {"p": {"type": "text"}}})[0].startswith("the schema: ")
    assert schema_faults({"type": "object", "properties": {}, "required": ["p"]}) == ["the schema: requires undeclared 'p'"]
    assert schema_faults({"type": "object", "properties": {"p": {"type": "string", "minLength": -1}}}) == ["the schema: -1 is less than the minimum of 0"]
    nested = {"type": "object", "properties": {"xs": {"type": "array", "items": {"type": "object", "properties": {}, "required": ["q"]}}}}
    assert schema_faults(nested) == ["the schema.properties.xs.items: requires undeclared 'q'"]


def test_the_wire_form_is_the_plans_tool_unchanged() -> None:
    offered = wire_tools()
    assert all(isinstance(w, WireTool) for w in offered)
    assert [(w.name, w.description, dict(w.parameters)) for w in offered] == [(t.name, t.description, dict(t.parameters)) for t in TOOLS]
    json.dumps([dict(w.parameters) for w in offered])  # plain JSON, as every client sends it


def test_an_unknown_tool_is_unavailable_naming_the_nearest(call: Call) -> None:
    result = call("reed", {"path": "a"})
    assert (result.is_error, result.kind) == (True, "tool_unavailable")
    assert result.text == "tool_unavailable: no tool named 'reed' is available. Did you mean: read?"


def test_arguments_that_do_not_parse_run_nothing(call: Call, workdir: Path) -> None:
    result = call("write", '{"path": "a.txt", "content": "x"')
    assert result.kind == "invalid_arguments" and "the arguments are not JSON" in result.text
    assert not (workdir / "a.txt").exists()


def test_relaxed_arguments_are_read(call: Call, workdir: Path) -> None:
    assert not call("write", "{path: 'a.txt', content: 'x',}").is_error
    assert (workdir / "a.txt").read_text() == "x"


@pytest.mark.parametrize(
    ("name", "arguments", "text"),
    [
        ("read", {}, "invalid_arguments: arguments: 'path' is a required property"),
        ("read", {"path": ["a"]}, "invalid_arguments: path: ['a'] is not of type 'string'"),
        ("read", {"path": "a", "offset": 0}, "invalid_arguments: offset: 0 is less than the minimum of 1"),
        ("read", {"path": "a", "limit": "many"}, "invalid_arguments: limit: 'many' is not of type 'integer'"),
        ("edit", {"path": "a", "old": "x", "new": "y", "all": "maybe"}, "invalid_arguments: all: 'maybe' is not of type 'boolean'"),
        ("write", {"path": "", "content": "x"}, "invalid_arguments: path: '' should be non-empty"),
        ("bash", {"command": "true", "timeout_ms": 1.5}, "invalid_arguments: timeout_ms: 1.5 is not of type 'integer'"),
        ("read", {"path": "a", "mode": "fast"}, "unknown_key: unknown argument 'mode' (the tool takes: limit, offset, path)"),
        ("write", {}, "invalid_arguments: arguments: 'path' is a required property; arguments: 'content' is a required property"),
        ("write", '{"path": "a.txt", "content": "x\\ud800"}', "invalid_arguments: content: holds '\\ud800', which UTF-8 cannot encode"),
        ("bash", '{"command": "touch \\udcff"}', "invalid_arguments: command: holds '\\udcff', which UTF-8 cannot encode"),
    ],
)
def test_a_bad_argument_is_an_error_naming_its_field(call: Call, workdir: Path, name: str, arguments: str | dict[str, Any], text: str) -> None:
    result = call(name, arguments)
    assert (result.is_error, result.text) == (True, text)
    assert list(workdir.iterdir()) == []


def test_a_repaired_argument_runs_with_its_warning(call: Call, workdir: Path) -> None:
    (workdir / "a.txt").write_text("1\n2\n3\n")
    result = call("read", {"path": "a.txt", "offset": "2", "limit": "1"})
    assert (result.is_error, result.text) == (False, "     2\t2")
    assert result.warnings == ("argument_repaired: offset: a string spelling integer", "argument_repaired: limit: a string spelling integer")


def test_check_names_nested_fields() -> None:
    schema = {"type": "object", "properties": {"xs": {"type": "array", "items": {"type": "integer", "enum": [1, 2]}}}}
    assert [e.message for e in check({"xs": [1, "2", 3]}, schema)] == [
        "xs[1]: '2' is not of type 'integer'",
        "xs[1]: '2' is not one of [1, 2]",
        "xs[2]: 3 is not one of [1, 2]",
    ]
    assert check({"xs": [1, 2.0]}, schema) == []  # an integral number is an integer (draft 2020-12)
    assert [e.message for e in check(True, {"type": "number"})] == ["arguments: True is not of type 'number'"]


def test_grep_names_the_files_it_did_not_search(call: Call, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search, "MAX_READ_BYTES", 10)
    (workdir / "big.txt").write_text("needle " * 10)
    (workdir / "small.txt").write_text("needle")
    assert call("grep", pattern="needle").text == "small.txt:1:needle\n(not searched, over 10 bytes: big.txt)"


# -- the bash budget is a guarded setting (S4b.5) -------------------------------------------------------


def project_with_budget(tmp_path: Path, trusted: bool) -> EukheSettings:
    agent_dir, project = tmp_path / "agent", tmp_path / "project"
    (project / ".eukhe").mkdir(parents=True)
    agent_dir.mkdir()
    (project / ".eukhe" / "settings.json").write_text(json.dumps({"toolBlockingBudgetMs": 999_999_999}))
    if trusted:
        (agent_dir / "settings.json").write_text(json.dumps({"trustedProjects": [str(project)]}))
    return EukheSettings(agent_dir, project)


def test_an_untrusted_project_cannot_raise_the_bash_budget(tmp_path: Path) -> None:
    settings = project_with_budget(tmp_path, trusted=False)
    context = context_for(tmp_path / "project", settings)
    assert context.bash_timeout_ms == DEFAULT_BASH_TIMEOUT_MS
    assert context.workdir == tmp_path / "project"
    assert "toolBlockingBudgetMs" in (settings.config.trust_warning() or "")


def test_a_trusted_project_sets_the_bash_budget(tmp_path: Path) -> None:
    settings = project_with_budget(tmp_path, trusted=True)
    assert context_for(tmp_path / "project", settings).bash_timeout_ms == 999_999_999


def test_the_agents_own_set_of_the_budget_applies(tmp_path: Path) -> None:
    settings = project_with_budget(tmp_path, trusted=False)
    family = [AgentLayers("main", sets=[("toolBlockingBudgetMs", 5_000)])]
    assert context_for(tmp_path / "project", settings, family).bash_timeout_ms == 5_000
