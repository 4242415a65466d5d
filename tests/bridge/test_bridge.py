"""Every bridge: the committed scenarios replay byte for byte on both sides and match their
digests, regeneration gives the committed files, there are at least 300 of them, and they reach
every rule case and input class (the short ones of a bridge that has them alone too)."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest

from bridge import core

BRIDGES = core.bridges()
IDS = [b.area for b in BRIDGES]
LEAST = 300  # scenarios every bridge replays (issue 26)

# The sha256 of each production transcript the replay test printed, by area and scenario text:
# the external-model test compares the external model's transcript with it and with the committed
# digest instead of running production again (the tiny bridge's real processes, the optchat live
# runs); it runs production itself for a scenario the replay test did not run in this process.
PRINTED: dict[tuple[str, str], str] = {}


def _key(area: str, events: Sequence[core.Event]) -> tuple[str, str]:
    return area, core.digest([core.dumps(events)])


def _recording(b: core.Bridge) -> core.Bridge:
    def production(events: Sequence[core.Event]) -> list[str]:
        lines = b.production(events)
        PRINTED[_key(b.area, list(events))] = core.digest(lines)
        return lines

    return replace(b, production=production)


@pytest.mark.parametrize("b", BRIDGES, ids=IDS)
def test_bridge_replays_byte_for_byte(b: core.Bridge) -> None:
    count, mismatches = core.replay_all(_recording(b))
    assert count == b.count, f"{b.area}: {count} scenario files, expected {b.count}"
    assert not mismatches, "\n".join(str(m) for m in mismatches[:3])


@pytest.mark.parametrize("b", BRIDGES, ids=IDS)
def test_bridge_has_at_least_300_scenarios(b: core.Bridge) -> None:
    files = sorted(p.name for p in b.directory.glob("*.jsonl"))
    assert b.count >= LEAST, f"{b.area}: {b.count} scenarios, fewer than {LEAST}"
    assert files == [b.file(i).name for i in range(b.count)], f"{b.area}: the committed files are not 0000..{b.count - 1:04d}"
    assert sorted(core.read_digests(b.directory)) == files, f"{b.area}: {core.DIGESTS} does not name every scenario once"


@pytest.mark.parametrize("b", BRIDGES, ids=IDS)
def test_bridge_scenarios_are_current(b: core.Bridge) -> None:
    assert core.stale(b) == [], f"{b.area}: committed scenarios differ from regeneration; run `make scenarios`"


@pytest.mark.parametrize("b", BRIDGES, ids=IDS)
def test_bridge_reaches_every_case(b: core.Bridge) -> None:
    """Every rule case and input class the bridge declares (its CASES; the classes follow the
    ``# input classes`` mark) is reached by some committed scenario."""
    missing = b.cases - core.coverage(b)
    assert not missing, f"{b.area}: no scenario reaches {sorted(missing)}"


SHORT = [b for b in BRIDGES if hasattr(importlib.import_module(f"bridge.{b.area}"), "SHORT_FIRST")]


@pytest.mark.parametrize("b", SHORT, ids=[b.area for b in SHORT])
def test_bridge_short_scenarios_alone_reach_every_case(b: core.Bridge) -> None:
    """A bridge whose first scenarios are long and the rest short (SHORT_FIRST..): the short
    ones alone reach every rule case and input class, so none rests on the long ones only."""
    first = int(getattr(importlib.import_module(f"bridge.{b.area}"), "SHORT_FIRST"))
    assert 0 < first <= b.count - LEAST // 2, f"{b.area}: SHORT_FIRST {first}"
    reached: set[str] = set()
    for index in range(first, b.count):
        reached |= b.reached(core.read(b.file(index)))
    missing = b.cases - reached
    assert not missing, f"{b.area}: no short scenario ({first}..) reaches {sorted(missing)}"


@pytest.mark.parametrize("b", BRIDGES, ids=IDS)
def test_bridge_through_an_external_model(b: core.Bridge, monkeypatch: pytest.MonkeyPatch) -> None:
    """BRIDGE_MODEL_CMD runs the model side as a subprocess: python -m bend.<area> FILE. Its
    transcript must have the committed digest and the digest of the production transcript."""
    if os.environ.get("EUKHE_BREAK"):
        pytest.skip("a break patches the in-process model only")
    monkeypatch.setenv(core.MODEL_CMD_ENV, f"{sys.executable} -m bend.{b.area} {{scenario}}")
    files = sorted(b.directory.glob("*.jsonl"))
    digests = core.read_digests(b.directory)

    def check(path: Path) -> core.Mismatch | None:
        events = core.read(path)
        printed = PRINTED.get(_key(b.area, events))
        if printed is None:
            return core.replay(b, path, digests[path.name])
        model = core.digest(core.model_lines(b, path, events))
        if model == printed == digests[path.name]:
            return None
        return core.replay(b, path, digests[path.name])  # the lines where they differ

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:  # one model process per file
        found = [m for m in pool.map(check, files) if m is not None]
    assert len(files) == b.count
    assert not found, "\n".join(str(m) for m in found[:3])
