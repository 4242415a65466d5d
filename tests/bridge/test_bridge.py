"""Every bridge: the committed scenarios replay byte for byte on both sides and match their
digests, regeneration gives the committed files, and the scenarios reach every rule case."""

from __future__ import annotations

import os
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from bridge import core

BRIDGES = core.bridges()
IDS = [b.area for b in BRIDGES]


@pytest.mark.parametrize("b", BRIDGES, ids=IDS)
def test_bridge_replays_byte_for_byte(b: core.Bridge) -> None:
    count, mismatches = core.replay_all(b)
    assert count == b.count, f"{b.area}: {count} scenario files, expected {b.count}"
    assert not mismatches, "\n".join(str(m) for m in mismatches[:3])


@pytest.mark.parametrize("b", BRIDGES, ids=IDS)
def test_bridge_scenarios_are_current(b: core.Bridge) -> None:
    assert core.stale(b) == [], f"{b.area}: committed scenarios differ from regeneration; run `make scenarios`"


@pytest.mark.parametrize("b", BRIDGES, ids=IDS)
def test_bridge_reaches_every_case(b: core.Bridge) -> None:
    missing = b.cases - core.coverage(b)
    assert not missing, f"{b.area}: no scenario reaches {sorted(missing)}"


@pytest.mark.parametrize("b", BRIDGES, ids=IDS)
def test_bridge_through_an_external_model(b: core.Bridge, monkeypatch: pytest.MonkeyPatch) -> None:
    """BRIDGE_MODEL_CMD runs the model side as a subprocess: python -m bend.<area> FILE."""
    if os.environ.get("EUKHE_BREAK"):
        pytest.skip("a break patches the in-process model only")
    monkeypatch.setenv(core.MODEL_CMD_ENV, f"{sys.executable} -m bend.{b.area} {{scenario}}")
    files = sorted(b.directory.glob("*.jsonl"))
    digests = core.read_digests(b.directory)
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:  # one model process per file
        found = [m for m in pool.map(lambda path: core.replay(b, path, digests[path.name]), files) if m is not None]
    assert len(files) == b.count
    assert not found, "\n".join(str(m) for m in found[:3])
