"""`eukhe set|toggle|cvar|settings|mcp` at the front door (issue 10): deep JSON, read-only and
regular-file agent dirs, mcp names, and nothing lost (a document that failed to parse is never
overwritten, a write keeps the file's mode, writes through a symlink, and a BOM is not text;
tests/settings/test_writers.py checks those rules on every writer)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_support import InProcess, RunProcess

from eukhe.session import Store

DEEP_OBJECT = '{"a":' * 20_000 + "1" + "}" * 20_000
DEEP_LIST = "[" * 20_000 + "]" * 20_000


@pytest.mark.parametrize(
    "argv",
    [
        ["mcp", "add", "git", DEEP_OBJECT],
        ["mcp", "add", "git", DEEP_LIST],
        ["set", "retry.fallbackChains", DEEP_OBJECT, "--global"],
        ["set", "providerMaxInFlight", DEEP_LIST, "--global"],
        ["effort", "offered", "--map", DEEP_OBJECT],
        ["effort", "clamp", "--map", DEEP_LIST, "--level", "high"],
        ["cvar", "set retry.fallbackChains " + DEEP_LIST, "--session", "s1"],
    ],
    ids=["mcp-object", "mcp-list", "set-global-object", "set-global-list", "effort-offered", "effort-clamp", "cvar-line"],
)
def test_twenty_thousand_deep_json_is_a_typed_error(inproc: InProcess, agent: Path, argv: list[str]) -> None:
    done = inproc(*argv)
    assert done.status == 2, done.err
    line = done.one_error_line()
    assert "nested more than 100 brackets deep" in line and "RecursionError" not in line
    assert not (agent / "settings.json").exists() and not (agent / "config.cfg").exists()


def test_deep_json_as_a_real_process(run: RunProcess) -> None:
    done = run("mcp", "add", "git", DEEP_OBJECT)
    assert (done.status, done.one_error_line()) == (2, "eukhe mcp add: the argument ENTRY is nested more than 100 brackets deep")


def test_json_just_under_the_depth_bound_is_taken(inproc: InProcess, agent: Path) -> None:
    entry = '{"a":' * 99 + "1" + "}" * 99
    assert inproc("mcp", "add", "git", entry).status == 0
    assert json.loads((agent / "settings.json").read_text())["mcpServers"]["git"]["a"]["a"]["a"] is not None


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        ('{"a": NaN}', "is not JSON: NaN is not a JSON number"),
        ('{"a": "\\ud800"}', "a string in the entry is not UTF-8 text"),
        ("[1]", "the entry is a JSON object, not list"),
        ("{", "the entry is not JSON"),
    ],
)
def test_mcp_add_takes_only_a_json_object(inproc: InProcess, agent: Path, entry: str, says: str) -> None:
    done = inproc("mcp", "add", "git", entry)
    assert done.status == 2 and says in done.one_error_line()
    assert not (agent / "settings.json").exists()


def test_mcp_add_with_an_empty_name_is_refused(inproc: InProcess, agent: Path) -> None:
    for name in ("", "  "):
        done = inproc("mcp", "add", name, "{}")
        assert (done.status, done.one_error_line()) == (2, "eukhe mcp add: a server name is not empty")
    assert not (agent / "settings.json").exists()


def test_mcp_remove_of_a_missing_entry_writes_nothing(inproc: InProcess, agent: Path) -> None:
    done = inproc("mcp", "remove", "nosuch")
    assert done.status == 2
    assert done.one_error_line() == f"eukhe mcp remove: {agent / 'settings.json'} has no mcpServers entry 'nosuch'; nothing written"
    assert not (agent / "settings.json").exists()
    assert inproc("mcp", "add", "git", '{"command": "g"}').status == 0
    before = (agent / "settings.json").read_bytes()
    assert inproc("mcp", "remove", "nosuch").status == 2
    assert (agent / "settings.json").read_bytes() == before
    assert inproc("mcp", "remove", "git").status == 0
    assert json.loads((agent / "settings.json").read_text())["mcpServers"] == {}


def test_a_settings_json_that_does_not_parse_is_never_overwritten(inproc: InProcess, run: RunProcess, agent: Path) -> None:
    agent.mkdir()
    broken = b'{"mcpServers": {"git": '
    (agent / "settings.json").write_bytes(broken)
    for argv in (["mcp", "add", "x", "{}"], ["mcp", "remove", "git"]):
        done = inproc(*argv)
        assert done.status == 2, (argv, done)
        assert "settings error" in done.one_error_line() and "nothing written" in done.one_error_line()
        assert (agent / "settings.json").read_bytes() == broken
    done = run("mcp", "add", "x", "{}")
    assert done.status == 2 and (agent / "settings.json").read_bytes() == broken


def test_a_read_only_agent_dir_exits_1_and_keeps_its_files(inproc: InProcess, run: RunProcess, agent: Path, freeze: Callable[[Path], Path]) -> None:
    assert inproc("set", "defaultModel", "before", "--global").status == 0
    assert inproc("mcp", "add", "git", "{}").status == 0
    files = {p.name: p.read_bytes() for p in agent.iterdir() if p.is_file()}
    freeze(agent)
    for argv in (["set", "defaultModel", "after", "--global"], ["toggle", "retry.enabled", "--global"], ["mcp", "add", "x", "{}"],
                 ["mcp", "remove", "git"], ["session", "new"]):
        done = inproc(*argv)
        assert done.status == 1, (argv, done)
        assert "read-only" in done.one_error_line(), argv
    done = run("set", "defaultModel", "after", "--global")
    assert done.status == 1 and "read-only" in done.one_error_line()
    assert {p.name: p.read_bytes() for p in agent.iterdir() if p.is_file()} == files
    shown = inproc("settings", "show")  # reading a read-only agent dir works
    assert shown.status == 0 and 'defaultModel = "before"' in shown.out


def test_a_session_set_needs_a_session(inproc: InProcess) -> None:
    done = inproc("set", "retry.maxRetries", "3")
    assert done.status == 2 and "needs --session" in done.one_error_line()
    done = inproc("set", "retry.maxRetries", "3", "--session", "nosuch")
    assert done.status == 2 and "no session at" in done.one_error_line()


def test_a_refused_set_prints_the_seed_form_exit_2(inproc: InProcess, agent: Path) -> None:
    with Store(agent / "sessions").create("s1"):
        pass
    done = inproc("set", "defaultModel", "m", "--session", "s1")
    assert (done.status, done.one_error_line()) == (2, "CvarError::Global(defaultModel): defaultModel is Global: only the global config sets it")
    done = inproc("set", "nosuch", "1", "--global")
    assert done.status == 2 and done.one_error_line().startswith("CvarError::Undeclared(nosuch)")


def test_a_project_dir_that_does_not_exist_is_bad_input(inproc: InProcess, tmp_path: Path) -> None:
    done = inproc("settings", "show", "--project", str(tmp_path / "nosuch"))
    assert done.status == 2 and "does not exist" in done.one_error_line()


# -- waiting for the settings writer's fix (helper A's branch) --------------------------------------

def _round_trips(inproc: InProcess, agent: Path, value: str) -> None:
    assert inproc("set", "defaultModel", value, "--global").status == 0
    shown = inproc("settings", "show")
    assert shown.status == 0 and "settings error" not in shown.err, shown.err
    from eukhe.settings.agent import EukheSettings

    assert EukheSettings(agent).cvars.sourced([], "defaultModel") == (value, "global config.cfg")


@pytest.mark.parametrize("value", ["tab\there", "\ufeffbom", "quote \" and ; semicolon", "unicode \u00e9\U0001f600"])
def test_a_string_value_round_trips_through_config_cfg(inproc: InProcess, agent: Path, value: str) -> None:
    _round_trips(inproc, agent, value)


@pytest.mark.parametrize("value", ["a\nb", "a\rb", "a\u2028b", "a\u2029b"], ids=["LF", "CR", "LS", "PS"])
def test_a_string_value_with_a_line_break_round_trips_through_config_cfg(inproc: InProcess, agent: Path, value: str) -> None:
    _round_trips(inproc, agent, value)


def test_a_huge_float_is_refused_not_written_as_inf(inproc: InProcess, agent: Path) -> None:
    done = inproc("set", "temperature", "1" + "0" * 400 + ".5", "--global")
    assert done.status == 2 and done.one_error_line().startswith("CvarError::BadValue(temperature)")
    assert not (agent / "config.cfg").exists() or "inf" not in (agent / "config.cfg").read_text()


def test_a_config_cfg_that_does_not_parse_is_never_overwritten(inproc: InProcess, agent: Path) -> None:
    agent.mkdir()
    broken = b'set defaultModel "unterminated\n'
    (agent / "config.cfg").write_bytes(broken)
    done = inproc("set", "retry.maxRetries", "4", "--global")
    assert done.status == 2 and "nothing written" in done.one_error_line()
    assert (agent / "config.cfg").read_bytes() == broken


def test_a_write_keeps_the_mode_of_config_cfg(inproc: InProcess, agent: Path) -> None:
    assert inproc("set", "defaultModel", "a", "--global").status == 0
    os.chmod(agent / "config.cfg", 0o664)
    assert inproc("set", "defaultModel", "b", "--global").status == 0
    assert (agent / "config.cfg").stat().st_mode & 0o777 == 0o664


def test_a_write_goes_through_a_symlinked_settings_json(inproc: InProcess, agent: Path, tmp_path: Path) -> None:
    agent.mkdir()
    target = tmp_path / "dotfiles-settings.json"
    target.write_text("{}\n")
    (agent / "settings.json").symlink_to(target)
    assert inproc("mcp", "add", "git", "{}").status == 0
    assert (agent / "settings.json").is_symlink()
    assert json.loads(target.read_text())["mcpServers"] == {"git": {}}


def test_a_bom_does_not_make_the_first_cfg_line_unknown(inproc: InProcess, agent: Path) -> None:
    agent.mkdir()
    (agent / "config.cfg").write_bytes("\ufeffset defaultModel m\n".encode("utf-8"))
    shown = inproc("settings", "show")
    assert "settings error" not in shown.err and 'defaultModel = "m"  [global config.cfg]' in shown.out
