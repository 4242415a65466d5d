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
# The sha256 of each model transcript the replay test computed in process, by area, then by the
# scenario file's text: the regeneration test takes it instead of running the model again.
MODELED: dict[str, dict[str, str]] = {}


def _key(area: str, events: Sequence[core.Event]) -> tuple[str, str]:
    return area, core.digest([core.dumps(events)])


def _recording(b: core.Bridge) -> core.Bridge:
    def production(events: Sequence[core.Event]) -> list[str]:
        lines = b.production(events)
        PRINTED[_key(b.area, list(events))] = core.digest(lines)
        return lines

    def model(events: list[core.Event]) -> list[str]:
        lines = b.model(events)
        MODELED.setdefault(b.area, {})[core.dumps(events)] = core.digest(lines)
        return lines

    return replace(b, production=production, model=model)


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
    assert core.stale(b, MODELED.get(b.area)) == [], f"{b.area}: committed scenarios differ from regeneration; run `make scenarios`"


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


EXTERNAL_STRIDE = 11


def external_sample(b: core.Bridge) -> list[Path]:
    """The scenarios the external model replays: every EXTERNAL_STRIDE-th from the first (11 is
    prime to the periods by which the generators vary their scenarios: 2, 3, 4, 5, 20, 25), and
    each that reaches a rule case or input class none before it reached; so together they reach
    every case the bridge declares (about 600 of the 3,960 scenarios)."""
    chosen: list[Path] = []
    reached: set[str] = set()
    for index in range(b.count):
        path = b.file(index)
        cases = b.reached(core.read(path))
        if index % EXTERNAL_STRIDE == 0 or cases - reached:
            chosen.append(path)
            reached |= cases
    assert b.cases <= reached, f"{b.area}: the sample misses {sorted(b.cases - reached)}"
    return chosen


@pytest.mark.parametrize("b", BRIDGES, ids=IDS)
def test_bridge_through_an_external_model(b: core.Bridge, monkeypatch: pytest.MonkeyPatch) -> None:
    """BRIDGE_MODEL_CMD runs the model side as a subprocess: python -m bend.<area> FILE. Its
    transcript must have the committed digest and the digest of the production transcript.

    The path (a scenario file in, a transcript out, a process per scenario) is checked on the
    scenarios external_sample picks: every rule case the bridge declares goes through it; the
    model itself is compared with production on every scenario by the replay above (a Python
    start per scenario, for all of them, cost make test about four minutes)."""
    if os.environ.get("EUKHE_BREAK"):
        pytest.skip("a break patches the in-process model only")
    monkeypatch.setenv(core.MODEL_CMD_ENV, f"{sys.executable} -m bend.{b.area} {{scenario}}")
    files = external_sample(b)
    digests = core.read_digests(b.directory)

    def agrees(path: Path) -> bool:
        model = core.digest(core.model_lines(b, path, core.read(path)))
        return model == PRINTED[_key(b.area, core.read(path))] == digests[path.name]

    printed = [path for path in files if _key(b.area, core.read(path)) in PRINTED]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:  # one model process per file
        differ = [path for path, same in zip(printed, pool.map(agrees, printed)) if not same]
    # production runs here, one scenario at a time (a bridge's production side is not thread-safe:
    # the command line's redirects its streams): where they differ, and what the replay test did not run
    again = differ + [path for path in files if path not in printed]
    found = [m for m in (core.replay(b, path, digests[path.name]) for path in again) if m is not None]
    assert not found, "\n".join(str(m) for m in found[:3])
