"""`eukhe memory simulate --cache --plot FILE.svg`: the drawing shows what it says it shows.

The judge is the drawing read back as SVG against itself and against the figures the command
prints: each line's points sit where its own data values fall on its panel's frame and axis (the
frame's rect, the axis read from its tick labels), every tick sits at its label's value, the
message axis is labelled at its fifths, and each line's legend ends with its last value, the
figure the command printed for that series."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from eukhe.cli import main

SVG = "{http://www.w3.org/2000/svg}"
MESSAGES = 40
SEED = 7
# each series: its legend's start, the printed figure it ends at, and its panel
LEGEND = {
    "turns": ("turns, of all input", "turn_cache_read_percent", "top"),
    "compactions": ("compactions, of all input", "compaction_cache_read_percent", "top"),
    "turns_prefix": ("turns, of the marked prefix", "turn_prefix_read_percent", "top"),
    "compactions_prefix": ("compactions, of the marked prefix", "compaction_prefix_read_percent", "top"),
    "rewritten": ("lines rewritten per message", "rewritten_lines_per_message", "bottom"),
}


@pytest.fixture(scope="module")
def drawn(tmp_path_factory: pytest.TempPathFactory) -> tuple[ET.Element, dict[str, float]]:
    target = tmp_path_factory.mktemp("plot") / "shares.svg"
    capture = tmp_path_factory.mktemp("out") / "stdout.txt"
    import contextlib

    with capture.open("w", encoding="utf-8") as out, contextlib.redirect_stdout(out):
        assert main(["memory", "simulate", "--messages", str(MESSAGES), "--seed", str(SEED), "--cache", "--plot", str(target)]) == 0
    body, _nl, last = capture.read_text(encoding="utf-8").rstrip("\n").rpartition("\n")
    assert last == f"cache shares drawn to {target}"
    return ET.parse(target).getroot(), json.loads(body)["cache"]


def frames(root: ET.Element) -> dict[str, tuple[float, float, float, float]]:
    """The two panels' frames (x, top, width, height): the outlined rects, top panel first."""
    rects = [r for r in root.iter(f"{SVG}rect") if r.get("fill") == "none"]
    assert len(rects) == 2
    boxes = [tuple(float(r.get(k, "nan")) for k in ("x", "y", "width", "height")) for r in rects]
    return {"top": boxes[0], "bottom": boxes[1]}  # type: ignore[dict-item]


def ticks(root: ET.Element, frame: tuple[float, float, float, float]) -> list[tuple[float, float]]:
    """A panel's axis: (value, the y its label is centred on), bottom tick first."""
    x, top, _w, height = frame
    found = []
    for text in root.iter(f"{SVG}text"):
        if text.get("text-anchor") == "end" and float(text.get("x", "nan")) < x and top - 1 <= float(text.get("y", "nan")) - 4 <= top + height + 1:
            found.append((float(text.text or "nan"), float(text.get("y", "nan")) - 4))
    return sorted(found)


def slack(root: ET.Element, panel: str, frame: tuple[float, float, float, float]) -> float:
    """How far (in px) a y may be from where the axis's labels put it: the top axis's labels are
    its whole percents, exact; the bottom's are rounded to two decimals, so a label (its top one
    too) may be half a hundredth from its tick's value. Plus the drawing's 0.1 px rounding."""
    if panel == "top":
        return 0.06
    axis = ticks(root, frame)
    return frame[3] * 0.005 / (axis[-1][0] - axis[0][0]) + 0.06


def test_the_title_counts_the_messages(drawn: tuple[ET.Element, dict[str, float]]) -> None:
    root, _ = drawn
    assert (root.findtext(f"{SVG}title") or "") == f"eukhe memory simulate --cache: {MESSAGES} messages, seed {SEED}"


def test_each_tick_sits_at_its_labels_value_and_the_top_axis_ends_at_100(drawn: tuple[ET.Element, dict[str, float]]) -> None:
    root, _ = drawn
    for panel, frame in frames(root).items():
        axis = ticks(root, frame)
        assert len(axis) >= 2, panel
        (lo, y_lo), (hi, y_hi) = axis[0], axis[-1]
        _x, top, _w, height = frame
        assert (y_lo, y_hi) == (top + height, top), panel  # the axis spans the frame
        gaps = {round(b[1] - a[1], 1) for a, b in zip(axis, axis[1:])}
        assert len(gaps) == 1, (panel, axis)  # evenly spaced
        for value, y in axis:
            assert y == pytest.approx(top + height - height * (value - lo) / (hi - lo), abs=slack(root, panel, frame)), (panel, value)
        if panel == "top":
            assert hi == 100.0 and lo % 5 == 0


def test_each_line_plots_its_values_on_its_panels_axis(drawn: tuple[ET.Element, dict[str, float]]) -> None:
    root, _ = drawn
    boxes = frames(root)
    lines = {p.get("id"): p for p in root.iter(f"{SVG}polyline")}
    assert set(lines) == set(LEGEND)
    for name, line in lines.items():
        x, top, width, height = boxes[LEGEND[name][2]]
        axis = ticks(root, boxes[LEGEND[name][2]])
        lo, hi = axis[0][0], axis[-1][0]
        messages = [int(m) for m in (line.get("data-messages") or "").split()]
        values = [float(v) for v in (line.get("data-values") or "").split()]
        points = [tuple(float(c) for c in point.split(",")) for point in (line.get("points") or "").split()]
        assert messages == list(range(1, MESSAGES + 1)) and len(values) == len(points) == MESSAGES, name
        for m, value, (px, py) in zip(messages, values, points):
            assert px == pytest.approx(x + width * (m - 1) / (MESSAGES - 1), abs=0.06), (name, m)
            shown = min(max(value, lo), hi)  # a value below the axis is drawn at its floor
            assert py == pytest.approx(top + height - height * (shown - lo) / (hi - lo), abs=slack(root, LEGEND[name][2], boxes[LEGEND[name][2]])), (name, m)


def test_the_message_axis_is_labelled_at_its_fifths(drawn: tuple[ET.Element, dict[str, float]]) -> None:
    root, _ = drawn
    for panel, (x, top, width, height) in frames(root).items():
        labels = [t for t in root.iter(f"{SVG}text") if t.get("text-anchor") == "middle" and float(t.get("y", "nan")) == top + height + 16]
        spots = [round((MESSAGES - 1) * k / 4) for k in range(5)]
        assert [int(t.text or "0") for t in labels] == [m + 1 for m in spots], panel
        assert [float(t.get("x", "nan")) for t in labels] == pytest.approx([x + width * m / (MESSAGES - 1) for m in spots], abs=0.06)


def test_each_legend_ends_with_the_lines_last_value_the_figure_printed(drawn: tuple[ET.Element, dict[str, float]]) -> None:
    root, cache = drawn
    legends = {(t.text or "").rpartition(": ")[0]: (t.text or "").rpartition(": ")[2] for t in root.iter(f"{SVG}text") if ": " in (t.text or "")}
    for name, (label, figure, _panel) in LEGEND.items():
        line = next(p for p in root.iter(f"{SVG}polyline") if p.get("id") == name)
        last = float((line.get("data-values") or "").split()[-1])
        said = legends[label]
        if name == "rewritten":
            assert said == f"{last:.2f}" and float(said) == pytest.approx(cache[figure], abs=0.005)
        else:
            assert said == f"{last:.1f}%" and float(said[:-1]) == pytest.approx(cache[figure], abs=0.05)
