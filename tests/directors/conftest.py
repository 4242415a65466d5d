from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _own_agent_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test reads the settings of its own agent dir, never the user's ~/.eukhe."""
    agent = tmp_path / "agent-dir"
    agent.mkdir(exist_ok=True)
    monkeypatch.setenv("EUKHE_AGENT_DIR", str(agent))
