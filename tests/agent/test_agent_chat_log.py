"""The chat served by the agent logs what a run committed, each message of its kind
(memory.md rule 48; the kinds of rule 1's log: user, eukhe, tool, echo, work), read back from the
log files on disk as the seed lays them out (spec/oracles/turn.py)."""

from __future__ import annotations

from pathlib import Path

from eukhe.agent.chat import ChatMemory
from eukhe.agent.loop import WORK_ROW
from eukhe.memory.owner import Memory
from eukhe.session.entries import assistant, row, tool_call, tool_result, user
from spec.oracles.turn import messages


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
