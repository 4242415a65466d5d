"""The command line's bug classes: session.lockTimeoutMs read from a config file and then
ignored; the defaults `eukhe settings show` prints; --agent-dir against EUKHE_AGENT_DIR; the
fsync of `eukhe mcp add`'s write."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_support import InProcess

from eukhe import cli, paths
from tests.bug_classes import Fsyncs, seed_defaults


def test_the_lock_timeout_set_in_config_cfg_is_the_wait(agent: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Caught: lock_timeout read ms = 5000 in place of the session.lockTimeoutMs setting."""
    monkeypatch.delenv(cli.LOCK_TIMEOUT_ENV, raising=False)
    agent.mkdir()
    (agent / "config.cfg").write_text("set session.lockTimeoutMs 1500\n", encoding="utf-8")
    assert cli.lock_timeout() == 1.5
    assert cli.lock_timeout(str(agent)) == 1.5


def test_settings_show_prints_the_seeds_defaults(inproc: InProcess) -> None:
    """Caught: the table declared directors.maxSteps with default 100 (the seed: "default 200")."""
    done = inproc("settings", "show")
    assert done.status == 0, done
    shown = dict(re.findall(r"^(\S+) = (.*?)  \[default\]$", done.out, re.M))
    stated = seed_defaults()
    assert {cvar: shown.get(cvar) for cvar in stated} == {cvar: json.dumps(value) for cvar, value in stated.items()}


def test_the_agent_dir_flag_wins_over_the_variable(tmp_path: Path, inproc: InProcess) -> None:
    """Caught: paths.agent_dir read EUKHE_AGENT_DIR before the --agent-dir flag."""
    env = {"EUKHE_AGENT_DIR": str(tmp_path / "from-env"), "HOME": str(tmp_path)}
    assert paths.agent_dir(str(tmp_path / "from-flag"), env=env, cwd=tmp_path) == tmp_path / "from-flag"
    assert paths.agent_dir(None, env=env, cwd=tmp_path) == tmp_path / "from-env"
    assert paths.agent_dir(None, env={"HOME": str(tmp_path)}, cwd=tmp_path) == tmp_path / ".eukhe"
    done = inproc("--agent-dir", str(tmp_path / "flagged"), "mcp", "add", "x", '{"command": "true"}')
    assert done.status == 0 and (tmp_path / "flagged" / "settings.json").is_file(), done


def test_mcp_add_writes_settings_json_whole_and_fsynced(agent: Path, inproc: InProcess, monkeypatch: pytest.MonkeyPatch) -> None:
    """Caught: write_atomic left out the fsync of the temporary file before its rename."""
    synced = Fsyncs(monkeypatch)
    done = inproc("mcp", "add", "x", '{"command": "true"}')
    assert done.status == 0, done
    assert synced.written_whole(agent / "settings.json"), synced.paths
