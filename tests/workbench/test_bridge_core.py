"""The bridge framework reports a difference where it is, and runs an external model."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from bridge import core


def test_compare_names_the_event_and_both_lines(tmp_path: Path) -> None:
    found = core.compare("effort", tmp_path / "0001.jsonl", ["0 a", "1 b", "2 c"], ["0 a", "1 B", "2 c"])
    assert found is not None and found.event == "1"
    text = str(found)
    assert "bridge effort" in text and "event 1" in text and "1 b" in text and "1 B" in text
    assert "-m bridge replay effort" in text


def test_compare_sees_a_transcript_that_ends_early(tmp_path: Path) -> None:
    found = core.compare("effort", tmp_path / "x.jsonl", ["0 a", "1 b"], ["0 a"])
    assert found is not None and found.event == "1" and found.production == "(transcript ended)"
    assert core.compare("effort", tmp_path / "x.jsonl", ["0 a"], ["0 a"]) is None


def test_a_changed_digest_is_a_difference(tmp_path: Path) -> None:
    b = core.by_area("effort")
    path = b.file(0)
    assert core.replay(b, path, "0" * 64) is not None
    assert core.replay(b, path, core.read_digests(b.directory)[path.name]) is None


def test_a_failing_external_model_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    b = core.by_area("effort")
    monkeypatch.setenv(core.MODEL_CMD_ENV, f"{sys.executable} -c 'import sys; sys.exit(3)' {{scenario}}")
    with pytest.raises(core.BridgeError, match="exited 3"):
        core.replay(b, b.file(0))


def test_an_external_model_that_differs_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    b = core.by_area("effort")
    monkeypatch.setenv(core.MODEL_CMD_ENV, f"{sys.executable} -c \"print('0 stored=nonsense')\" {{scenario}}")
    found = core.replay(b, b.file(0))
    assert found is not None and found.event == "0" and found.model == "0 stored=nonsense"


def test_a_scenario_file_that_is_not_json_lines_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"do": "open"}\n[1, 2]\n')
    with pytest.raises(core.BridgeError, match="bad.jsonl:2"):
        core.read(bad)


@pytest.mark.parametrize("stop", [False, True])
def test_a_replay_stops_at_its_first_mismatch_only_when_told(monkeypatch: pytest.MonkeyPatch, stop: bool) -> None:
    """Under a mutant (spec.mutate's plugin sets the flag) the replay ends at the first scenario
    that differs; otherwise every scenario runs and every difference is reported."""
    effort = core.by_area("effort")
    seen: list[int] = []

    def production(events: object) -> list[str]:
        seen.append(len(seen))
        return ["0 nonsense"]

    b = dataclasses.replace(effort, production=production)
    monkeypatch.setattr(core, "STOP_AT_FIRST_MISMATCH", stop)
    count, mismatches = core.replay_all(b)
    assert count == effort.count
    assert len(mismatches) == len(seen) == (1 if stop else effort.count)
