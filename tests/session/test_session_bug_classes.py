"""The sessions' bug classes (control.md S4b.7; S1 as the session store keeps it): the sessionDir
setting read and then ignored; the sessions dir's default; the precedence of its four sources;
the fsyncs of a new session and of a commit."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from eukhe.paths import resolve_session_dir
from eukhe.session import Store, user
from tests.bug_classes import SEEDS, Fsyncs, write_json

ENV, LEGACY = "EUKHE_SESSION_DIR", "EUKHE_CODING_AGENT_SESSION_DIR"


def _seed_order() -> list[str]:
    """S4b.7's sources of the sessions dir, in its order, read from the seed's sentence."""
    if not SEEDS.is_dir():
        pytest.skip(f"the seeds are not at {SEEDS}")
    text = (SEEDS / "000_f7323c157e80a40d.txt").read_text(encoding="utf-8")
    found = re.search(r"settings::resolve_session_dir\): (.*?)\.\n", text)
    assert found is not None
    return [part.strip() for part in re.split(r", then |\bthen ", found.group(1)) if part.strip()]


def test_the_sessiondir_setting_is_the_sessions_dir(tmp_path: Path) -> None:
    """Caught: resolve_session_dir dropped the sessionDir setting (found = None): <agent dir>/sessions instead."""
    agent = tmp_path / "agent"
    write_json(agent / "settings.json", {"sessionDir": str(tmp_path / "kept")})
    assert resolve_session_dir(None, agent_dir_flag=agent, env={}, cwd=tmp_path) == (tmp_path / "kept", "global settings.json")
    (agent / "config.cfg").write_text(f'set sessionDir "{tmp_path / "cfg"}"\n', encoding="utf-8")
    assert resolve_session_dir(None, agent_dir_flag=agent, env={}, cwd=tmp_path) == (tmp_path / "cfg", "global config.cfg")


def test_the_sessions_dir_defaults_to_the_seeds(tmp_path: Path) -> None:
    """Caught: the default sessions dir spelled <agent dir>/session."""
    last = _seed_order()[-1]
    assert last.startswith("<agent dir>/"), last
    agent = tmp_path / "agent"
    assert resolve_session_dir(None, agent_dir_flag=agent, env={}, cwd=tmp_path) == (agent / last.removeprefix("<agent dir>/"), "default")


def test_the_sources_of_the_sessions_dir_win_in_the_seeds_order(tmp_path: Path) -> None:
    """Caught: the legacy variable read before EUKHE_SESSION_DIR."""
    order = _seed_order()
    assert order[0].startswith("the --session-dir flag") and order[1].startswith("EUKHE_SESSION_DIR") and "sessionDir" in order[2], order
    agent = tmp_path / "agent"
    write_json(agent / "settings.json", {"sessionDir": str(tmp_path / "setting")})
    env = {ENV: str(tmp_path / "env"), LEGACY: str(tmp_path / "legacy")}
    assert resolve_session_dir(str(tmp_path / "flag"), agent_dir_flag=agent, env=env, cwd=tmp_path) == (tmp_path / "flag", "--session-dir")
    assert resolve_session_dir(None, agent_dir_flag=agent, env=env, cwd=tmp_path) == (tmp_path / "env", ENV)
    assert resolve_session_dir(None, agent_dir_flag=agent, env={LEGACY: env[LEGACY]}, cwd=tmp_path) == (tmp_path / "legacy", LEGACY)
    assert resolve_session_dir(None, agent_dir_flag=agent, env={}, cwd=tmp_path) == (tmp_path / "setting", "global settings.json")


def test_a_new_session_and_a_commit_are_fsynced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Caught: Store.create left out the fsync of the sessions dir after making the session's directory."""
    synced = Fsyncs(monkeypatch)
    store = Store(tmp_path / "sessions")
    with store.create() as session:
        assert synced.of(tmp_path / "sessions") >= 1, "the new session's entry in the sessions dir is durable"
        assert synced.of(session.dir) >= 1, "the main log's entry in the session's dir is durable"
        log = next(session.dir.glob("*.jsonl"))
        count = synced.of(log)
        session.conversation().commit([user("remember this")])
        assert synced.of(log) > count, "the commit is fsynced before it returns"
