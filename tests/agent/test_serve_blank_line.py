"""``eukhe agent serve`` reads its requests from stdin: a blank line there is a line that is not
a request (answered ``not_json``, as the agent's socket answers it), never the end of the input.

Found by the daemon bridge (scenario 0078 once a blank raw line reached a serving terminal): the
relay took the blank line for the end of stdin and read no request after it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agent_support import Agent, agents, home, of_type, server  # noqa: F401 (fixtures)


def test_a_blank_line_on_stdin_is_answered_and_the_requests_after_it_are_read(home: Path, agents: Callable[[], Agent]) -> None:
    agent = agents()
    agent.until(of_type("state"))
    assert agent.process.stdin is not None
    agent.process.stdin.write(b"\n")
    agent.process.stdin.flush()
    assert agent.until(of_type("error"))["kind"] == "not_json"
    agent.send({"v": 1, "type": "status", "id": "after"})
    assert agent.until(lambda e: e.get("re") == "after")["type"] == "state"
    assert agent.end() == 0
