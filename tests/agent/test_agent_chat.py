"""The chat served by the agent (eukhe.agent.chat.ChatMemory): it logs what a run committed, each
message of its kind (memory.md rule 48; the kinds of rule 1's log: user, eukhe, tool, echo, work),
read back from the log files on disk as the seed lays them out (spec/oracles/turn.py); its live
compactor calls the memory role's model at memory.thinking (D6), over HTTP to the loopback server."""

from __future__ import annotations

import asyncio
from pathlib import Path

from loopback_models import write_loopback_models

from eukhe.agent.chat import ChatMemory
from eukhe.agent.loop import WORK_ROW
from eukhe.memory.chat import Config
from eukhe.memory.owner import Memory
from eukhe.memory.records import Kind
from eukhe.session.entries import assistant, row, tool_call, tool_result, user
from eukhe.settings.agent import EukheSettings
from spec.loopback import LoopbackServer, Stream, Text
from spec.oracles.turn import messages

SMALL = Config(jobs=3, ceiling=3_000, floor=1_500, cceiling=1_200, cfloor=600)  # a few messages make work for the compactor


def test_a_runs_entries_are_logged_each_of_its_kind(tmp_path: Path) -> None:
    chat = tmp_path / "chat"
    with Memory(chat) as memory:
        ChatMemory(memory, lambda text: None).log(
            [
                user("and the other file?"),
                tool_call({"name": "read", "arguments": {"path": "a.txt"}}),
                tool_result({"text": "alpha"}),
                assistant({"text": "It says alpha."}),
                row(WORK_ROW, {"text": "[Reviewer] looks fine"}),
                row("eukhe.title", {"text": "a row of the session alone"}),
            ]
        )
    assert [(kind, text) for kind, text, _ in messages(chat)] == [
        ("user", "and the other file?"),
        ("tool", 'read {"path": "a.txt"}'),
        ("echo", "alpha"),
        ("eukhe", "It says alpha."),
        ("work", "[Reviewer] looks fine"),
    ]


def test_the_compactor_calls_the_memory_model_at_memory_thinking(tmp_path: Path) -> None:
    with LoopbackServer() as server:
        agent = write_loopback_models(tmp_path / "agent", server, {"loop": "openai-completions"}, reasoning=True)
        (agent / "config.cfg").write_text("set memory.model loop/loop-model\nset memory.thinking high\n", encoding="utf-8")
        server.responder = lambda recorded: Stream([Text("a line of the memory")])
        rows: list[str] = []

        async def main() -> None:
            with Memory(tmp_path / "chat", SMALL) as memory:
                chat = ChatMemory(memory, rows.append)
                for number in range(12):
                    memory.append(f"message {number} " + "x" * 300, Kind.USER)
                chat.start_compactor(agent, EukheSettings(agent).cvars, 30.0)
                try:
                    [first, *_] = await asyncio.to_thread(server.wait_requests, 1, 60.0)
                finally:
                    await chat.close()
                assert first.body["model"] == "loop-model" and first.body.get("reasoning_effort") == "high"

        asyncio.run(main())
    assert "memory: compactor on loop/loop-model (memory.model, thinking high)" in rows
