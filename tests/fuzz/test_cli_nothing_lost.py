"""Nothing lost (issue 10, DESIGN "Production code"): every writing command in every agent dir
state, the whole product of the two lists (not a sample): exit 0, 1 or 2 with one line, and no
document that read before reads worse after, none that could not be read is written over.
In the populated state every command succeeds, so each one really writes."""

from __future__ import annotations

import contextlib
import io

import pytest
from cli_world import STATES, check, environment, judge, snapshot, world

from eukhe import cli

SCRIPT = b'{"goal": "g"}\n{"input": "hi"}\n{"command": "/remind r"}\n{"reply": {"text": "ok", "tool_calls": [{"name": "bash"}]}}\n'

WRITERS = (
    ("set", "retry.maxRetries", "5", "--session", "s1"),
    ("set", "defaultModel", "m2", "--global"),
    ("set", "retry.fallbackChains", '{"a": ["b"]}', "--global"),
    ("toggle", "retry.enabled", "--global"),
    ("toggle", "retry.enabled", "--session", "s1"),
    ("cvar", "set transport sse; toggle retry.enabled", "--session", "s1"),
    ("cvar", "save", "--session", "s1"),
    ("mcp", "add", "db", '{"command": "d"}'),
    ("mcp", "remove", "git"),
    ("session", "new"),
    ("session", "fork", "s1", "2"),
    ("session", "rewind", "s1", "1"),
    ("directors", "simulate", "--script", "{tmp}/script.jsonl"),
    ("settings", "show", "--session", "s1"),
    ("session", "list"),
    ("session", "show", "s1"),
)


@pytest.mark.parametrize("state", STATES)
@pytest.mark.parametrize("argv", WRITERS, ids=[" ".join(w[:3]) for w in WRITERS])
def test_no_command_loses_a_document_in_any_state(state: str, argv: tuple[str, ...]) -> None:
    with world(state, SCRIPT, freeze_spare=False) as here, environment(here):
        full = [here.fill(word) for word in argv]
        before = snapshot(here.agent)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = cli.main(full)
        check(status, err.getvalue(), full)
        if state == "populated":
            assert status == 0, (full, err.getvalue())
        problems = judge(before, snapshot(here.agent))
        assert not problems, f"{full!r} in state {state}: " + "; ".join(problems)
