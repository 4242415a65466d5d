"""The optchat bridge's live runs (issue 12 item 7): the real chat and its live Compactor over
loopback HTTP, the calls' order taken from what happened live, replayed through the model.

test_bridge.py replays them with the other optchat scenarios (byte for byte, digests, the
regeneration check, the external model). Here: every live input class is reached; a run gives
the recorded sequence again; a recorded sequence that production no longer follows is marked on
the production side; and a named production break makes the live runs differ."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from bridge import core, optchat

LIVE = [optchat.BRIDGE.file(i) for i in range(optchat.LIVE_FIRST, optchat.LIVE_FIRST + optchat.LIVE_COUNT)]
SHORT_LIVE = [optchat.BRIDGE.file(i) for i in range(optchat.SHORT_FIRST, optchat.COUNT) if core.read(optchat.BRIDGE.file(i))[0].get("live")]


def test_there_are_forty_live_runs_on_both_apis() -> None:
    assert len(LIVE) == optchat.LIVE_COUNT == 40 and all(path.exists() for path in LIVE)
    apis = {core.read(path)[0]["live"]["api"] for path in LIVE}
    assert apis == set(optchat.LIVE_APIS)


def test_live_runs_reach_every_live_class() -> None:
    """Concurrent calls, a waiting turn stopping merges, failures (HTTP, cut, deadline) and
    retries, the third failure's cap, over-long replies and the five calls, turns settled and
    at their deadline: each reached by some committed live run (as production recorded it)."""
    reached: set[str] = set()
    for path in LIVE:
        reached |= optchat.RECORDED.reached(core.read(path))
    assert optchat.LIVE_CASES <= optchat.CASES
    missing = optchat.LIVE_CASES - reached
    assert not missing, f"no live run reaches {sorted(missing)}"


def test_short_live_runs_reach_every_live_class_too() -> None:
    """The short live runs (each fourth short scenario, both APIs) alone reach every live class."""
    assert len(SHORT_LIVE) == (optchat.COUNT - optchat.SHORT_FIRST) // 4
    assert {core.read(path)[0]["live"]["api"] for path in SHORT_LIVE} == set(optchat.LIVE_APIS)
    reached: set[str] = set()
    for path in SHORT_LIVE:
        reached |= optchat.RECORDED.reached(core.read(path))
    missing = optchat.LIVE_CASES - reached
    assert not missing, f"no short live run reaches {sorted(missing)}"


def test_a_live_run_records_the_committed_sequence_again() -> None:
    """The script run live again gives the committed events (the calls' order is the script's,
    not the machine's) and the model's transcript of them, byte for byte."""
    events = core.read(LIVE[1])
    lines, _cases, recorded = optchat._Live(events[0], None).run()
    assert recorded == events
    assert lines == optchat._model(events)


def test_a_sequence_production_does_not_follow_is_marked() -> None:
    """Replaying, production marks each live event that differs from the recorded one, so a
    change in what the live compactor does cannot hide behind an equal status line."""
    events = core.read(LIVE[0])
    number = next(k for k, event in enumerate(events) if event["e"] == "done")
    changed = [dict(event) for event in events]
    changed[number]["size"] = int(changed[number]["size"]) - 1
    lines, _cases = optchat.run(changed)
    marked = [line for line in lines if " live {" in line]
    assert marked and marked[0].startswith(f"{number} done ")
    assert core.compare("optchat", LIVE[0], optchat._model(changed), lines) is not None


def test_a_production_break_makes_the_live_runs_differ() -> None:
    """Under a named break of production (the planner never retries a failed node at the next
    message; the compactor making a sixth call) the live runs' replays differ from the model's."""
    if os.environ.get("EUKHE_BREAK"):
        return  # already under a break: the replay tests report it
    root = Path(core.ROOT)
    script = "from spec import breaks; breaks.install_from_env(); from bridge.__main__ import main; import sys; raise SystemExit(main(sys.argv[1:]))"
    files = [str(path) for path in LIVE[:8]]
    for name in ("optchat_retry_never_production", "compactor_live_six_tries"):
        environment = {**os.environ, "EUKHE_BREAK": name, "PYTHONPATH": f"{root / 'impl'}{os.pathsep}{root}"}
        done = subprocess.run([sys.executable, "-c", script, "replay", "optchat", *files], capture_output=True, text=True, cwd=root, env=environment, timeout=600)
        assert done.returncode == 1, f"{name}: {done.stdout[-800:]} {done.stderr[-800:]}"
        found = re.search(r"(\d+) scenarios replayed, (\d+) differ", done.stdout)
        assert found is not None and int(found.group(2)) > 0, done.stdout[-800:]
