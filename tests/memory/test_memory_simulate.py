"""`eukhe memory simulate`: statistics, the sawtooth picture, and bad input (one line, exit 2)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from eukhe.cli import main
from eukhe.memory.simulate import note_message


def test_simulate_prints_the_sawtooth_statistics(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["memory", "simulate", "--messages", "2000"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["messages"] == 2000
    assert stats["batches"] >= 5
    assert stats["view_bytes"]["max"] <= 128_000 + 30_000
    assert 64_000 <= stats["view_bytes"]["mean"] <= 128_000
    assert stats["cview_bytes"]["max"] <= 32_000 + 512 and stats["cview_bytes"]["mean"] >= 16_000
    assert stats["merges_per_batch"] > 10
    assert 0 < stats["rewritten_lines_per_message"] < 20


def test_simulate_draws_the_png(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "saw.png"
    assert main(["memory", "simulate", "--messages", "400", "--png", str(target)]) == 0
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "sawtooth written" in capsys.readouterr().out


def test_the_sawtooth_draws_each_view_against_messages_with_the_four_budgets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the picture holds, read from its figure: the view's and the compaction view's bytes at
    messages 1..n, and the four budgets as lines across."""
    import matplotlib.pyplot as plt

    from eukhe.commands.memory_simulate import picture, simulate
    from eukhe.memory.chat import Config

    drawn: list[Any] = []
    monkeypatch.setattr(plt, "close", drawn.append)
    run = simulate(300)
    picture(run, str(tmp_path / "saw.png"))
    (axes,) = drawn[0].axes
    lines = {line.get_label(): line for line in axes.get_lines()}
    for label, values in (("view bytes", run.view_bytes), ("compaction view bytes", run.cview_bytes)):
        assert list(lines[label].get_xdata()) == list(range(1, 301)) and list(lines[label].get_ydata()) == list(values), label
    config = Config()
    across = sorted(line.get_ydata()[0] for name, line in lines.items() if name not in ("view bytes", "compaction view bytes"))
    assert across == sorted([config.ceiling, config.floor, config.cceiling, config.cfloor])
    assert len(set(run.cview_bytes)) > 1  # a sawtooth, not a constant


def test_simulate_cache_prints_the_shares_and_why_and_draws_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import xml.etree.ElementTree as ET

    target = tmp_path / "shares.svg"
    assert main(["memory", "simulate", "--messages", "40", "--cache", "--plot", str(target)]) == 0
    out = capsys.readouterr().out
    body, _nl, last = out.rstrip("\n").rpartition("\n")
    assert last == f"cache shares drawn to {target}"
    cache = json.loads(body)["cache"]
    assert {"turn_cache_read_percent", "turn_prefix_read_percent", "compaction_prefix_read_percent"} <= set(cache)
    assert set(cache["why"]) == {"turns", "compactions"}
    ids = {p.get("id") for p in ET.parse(target).getroot().iter("{http://www.w3.org/2000/svg}polyline")}
    assert ids == {"turns", "compactions", "turns_prefix", "compactions_prefix", "rewritten"}


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--messages", "0"], "between 1 and"),
        (["--messages", "many"], "whole number"),
        (["--messages", "-5"], "between 1 and"),
        ([], "required"),
        (["--messages", "10", "--png", "/no/such/dir/x.png"], "no directory"),
        (["--messages", "10", "--png", "picture.jpg"], ".png"),
        (["--messages", "10", "--plot", "shares.svg"], "add --cache"),
        (["--messages", "10", "--cache", "--plot", "shares.png"], ".svg file"),
        (["--messages", "10", "--cache", "--plot", "/no/such/dir/x.svg"], "no directory"),
    ],
)
def test_bad_arguments_get_one_line_and_status_2(argv: list[str], says: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["memory", "simulate", *argv]) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1


class _Drawn(random.Random):
    """A generator whose draws are given: ``random()`` the class, ``randint`` its bounds."""

    def __init__(self, kind: float) -> None:
        super().__init__(0)
        self.kind = kind

    def random(self) -> float:
        return self.kind

    def randint(self, a: int, b: int) -> int:
        return a * 100_000 + b  # both bounds, read back below


NOTE_CLASSES = [  # the note's shares: user words 30%, replies 25%, tool calls 25%, tool output 20%
    (0.0, "user", 20, 400),
    (0.2999, "user", 20, 400),
    (0.30, "reply", 300, 2_500),
    (0.5499, "reply", 300, 2_500),
    (0.55, "call", 80, 600),
    (0.7999, "call", 80, 600),
    (0.80, "output", 1_000, 30_000),
    (0.9999, "output", 1_000, 30_000),
]


@pytest.mark.parametrize(("kind", "name", "low", "high"), NOTE_CLASSES)
def test_a_note_message_draws_its_class_then_its_size(kind: float, name: str, low: int, high: int) -> None:
    assert note_message(_Drawn(kind)) == (name, low * 100_000 + high)
