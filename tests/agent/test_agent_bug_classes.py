"""The agent's bug classes (issue 30 item 7; control.md S4, S4b.4, S4b.5; inference.md S6.6): a
limit read from settings.json and then ignored; a default the seed states; the precedence of a
session set over the config files and of trust over an untrusted project's file; the fsync of
the document a request writes. The turns run in ``eukhe agent serve`` against the loopback
model server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from agent_support import Agent, agents, home, of_type, server

from eukhe.agent.daemon import Daemon
from eukhe.agent.protocol import CvarRequest, CvarSaveRequest, encode
from eukhe.agent.runner import SessionRunner
from eukhe.session import MAIN, Store
from eukhe.settings.agent import CvarAgent, EukheSettings
from spec.loopback import Call, LoopbackServer, Stream, Text
from tests.bug_classes import Fsyncs, seed_defaults, table_default, write_json

__all__ = ["agents", "home", "server"]  # the fixtures, used by name

THREE_ROUNDS = (
    Stream([Call("read", '{"path": "a.txt"}')], stop="toolUse"),
    Stream([Call("ls", '{"path": "."}')], stop="toolUse"),
    Stream([Call("read", '{"path": "a.txt"}')], stop="toolUse"),
    Stream([Text("Done.")]),
)


def _turn(agent: Agent, text: str = "go", *, fresh: bool = True) -> str:
    if fresh:
        agent.until(of_type("state"))
    agent.send({"v": 1, "type": "turn", "text": text})
    return str(agent.until(of_type("turn_end"))["reason"])


def _settings(home: Path, **document: Any) -> None:
    write_json(home / "settings.json", {"titles": {"generate": False}, **document})


def test_max_tool_rounds_set_in_settings_json_ends_the_run(home: Path, server: LoopbackServer, agents: Callable[[], Agent]) -> None:
    """Caught: a loop that capped its rounds with its own constant, the setting read and ignored."""
    _settings(home, maxToolRounds=1)
    server.script(*THREE_ROUNDS)
    agent = agents()
    assert _turn(agent) == "max_tool_rounds"
    assert agent.end() == 0
    assert len(server.requests) == 2  # the second reply's calls are past the cap: neither run nor asked on


def test_a_session_set_wins_over_settings_json(home: Path, server: LoopbackServer, agents: Callable[[], Agent]) -> None:
    """Caught: the loop reading the config files' value, not the session agent's (a set of main
    is the top layer, control.md S4)."""
    _settings(home, maxToolRounds=1)
    server.script(*THREE_ROUNDS)
    agent = agents()
    agent.until(of_type("state"))
    agent.send({"v": 1, "type": "cvar", "line": "set maxToolRounds 3", "id": "c1"})
    assert agent.until(lambda e: e.get("re") == "c1")["outcomes"][0]["refused"] is False
    assert _turn(agent, fresh=False) == "answered"
    assert agent.end() == 0
    assert len(server.requests) == 4


def test_an_untrusted_projects_limit_is_withheld(home: Path, server: LoopbackServer, agents: Callable[[], Agent]) -> None:
    """Caught: the project's settings.json applied whole, trusted or not (control.md S4b.5:
    "An untrusted project does not change a limit ... maxToolRounds ... withheld")."""
    write_json(home.parent / ".eukhe" / "settings.json", {"maxToolRounds": 1})
    server.script(*THREE_ROUNDS)
    agent = agents()
    assert _turn(agent) == "answered"
    assert agent.end() == 0
    assert len(server.requests) == 4


def test_the_compaction_policy_keeps_the_seeds_default_and_the_value_set(home: Path) -> None:
    """Caught: a session compaction whose policy kept a token count of its own, the default
    (inference.md: "compaction.keepRecentTokens (eukhe default 40,000") or the value set ignored."""
    stated = seed_defaults()["compaction.keepRecentTokens"]
    assert table_default("compaction.keepRecentTokens") == stated
    model = SimpleNamespace(provider="loop", id="loop-model", max_tokens=4096)
    for document, kept in (({}, stated), ({"compaction": {"keepRecentTokens": 1234}}, 1234)):
        _settings(home, **document)
        with Store(home / "sessions").open("s1") as session:
            cvar = CvarAgent(EukheSettings(home, home.parent), session.conversation(MAIN))
            runner = SessionRunner(session, cvar, lambda event: None)
            assert runner._compaction(model).policy.keep_recent == kept


def test_cvar_save_writes_the_agents_config_whole_and_synced(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Caught: /cvar save writing agents/main.cfg in place, or without the fsync of the file and
    of its directory (a crash would leave half a file, or none)."""
    replies: list[dict[str, Any]] = []

    class Client:  # what the agent sends a client: one JSON line per event
        closed = False

        def send(self, line: bytes) -> None:
            replies.append(json.loads(line))

    client: Any = Client()

    async def requests() -> Fsyncs:
        with Store(home / "sessions").open("s1") as session:
            agent = Daemon(home, session, None, project_dir=home.parent)
            agent.clients.add(client)
            agent._line(client, encode(CvarRequest(line="set maxToolRounds 7", id="c1")).rstrip(b"\n"))
            fsyncs = Fsyncs(monkeypatch)
            agent._line(client, encode(CvarSaveRequest(id="c2")).rstrip(b"\n"))
            return fsyncs

    fsyncs = asyncio.run(requests())
    saved = [r for r in replies if r.get("re") == "c2"]
    assert saved and saved[-1]["type"] == "cvar_saved", replies
    target = home / "agents" / "main.cfg"
    assert "set maxToolRounds 7" in target.read_text(encoding="utf-8")
    assert fsyncs.written_whole(target), fsyncs.paths
