"""`eukhe memory simulate --cache` when a call fails on the loopback server: the measure has no
figure for a turn whose view a failed compaction left unbuilt, nor for a turn that got no reply.
The measure raises its typed error (``MeasureError``) and the command says so in one line, a
fault of the environment (exit 1), as it does a drawing it cannot make (test_cli_memory.py),
with nothing on stdout. The server fails the calls for real: HTTP 500 to every compaction call,
or to every turn call."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from cli_support import InProcess

import spec.loopback as lb
from eukhe.commands.memory_cache import MeasureError, measure
from eukhe.memory.prompts import COMPACTION_MARK

MESSAGES, SEED = 40, 7


def _kind(recorded: lb.Recorded) -> str:
    """A call's kind, as the measure labels it: a compaction's first message holds its task
    behind the view (each of its calls, a follow-up ask too), a turn's does not."""
    body = recorded.body if isinstance(recorded.body, dict) else {}
    first = body.get("messages", [{}])[0].get("content", [])
    text = "".join(b.get("text", "") for b in first) if isinstance(first, list) else str(first)
    return "compaction" if f"\n\n{COMPACTION_MARK}" in text else "turn"


@pytest.fixture
def failing(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Make the loopback server of the measure answer HTTP 500 to the calls of the kind the test
    appends ("compaction" or "turn"); every other call as the measure scripts it."""
    fails: list[str] = []

    class Failing(lb.LoopbackServer):
        def _next(self, recorded: lb.Recorded) -> lb.Script | None:
            return lb.Fail(500) if _kind(recorded) in fails else super()._next(recorded)

    monkeypatch.setattr(lb, "LoopbackServer", Failing)
    yield fails


def test_the_measure_runs_with_the_server_as_it_is(failing: list[str]) -> None:
    shares = measure(MESSAGES, seed=SEED)
    assert shares.turns > 3 and shares.compactions > 0 and shares.failures == 0


def test_a_failed_compaction_is_a_measure_error(failing: list[str]) -> None:
    failing.append("compaction")
    with pytest.raises(MeasureError, match=r"^a call of the compactor failed on the loopback server, leaving a turn's view unbuilt \(failure 1: .*500"):
        measure(MESSAGES, seed=SEED)


def test_a_failed_turn_is_a_measure_error(failing: list[str]) -> None:
    failing.append("turn")
    with pytest.raises(MeasureError, match=r"^a turn's call failed on the loopback server \(.*500"):
        measure(MESSAGES, seed=SEED)


@pytest.mark.parametrize(("kind", "says"), [("compaction", "a call of the compactor failed on the loopback server"), ("turn", "a turn's call failed on the loopback server")])
def test_the_command_says_the_measure_failed_a_fault_of_the_environment(inproc: InProcess, failing: list[str], kind: str, says: str) -> None:
    failing.append(kind)
    done = inproc("memory", "simulate", "--messages", str(MESSAGES), "--seed", str(SEED), "--cache")
    assert done.status == 1
    assert done.one_error_line().startswith(f"eukhe memory simulate: --cache: {says}")
    assert done.out == ""
