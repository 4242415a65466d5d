"""The report's plots (matplotlib, PNG): the view-fit benchmark curve (from build/bench.json,
drawn by the benchmark's own picture), the sawtooth of `eukhe memory simulate`, and the hunt's
examples over time (from build/hunt.json, written by `make fuzz`). A plot whose data is absent
is left out and the report says how to get it."""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SAWTOOTH_MESSAGES = 6_000  # enough for several batches of both views, under a second or two


@dataclass(frozen=True)
class Plot:
    file: str  # under report/plots/, '' when not drawn
    title: str
    note: str  # what it shows, or how to get it when absent


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def bench(laws_dir: Path, out: Path) -> Plot:
    title = "View fit: microseconds a message against messages"
    source = laws_dir / "bench.json"
    if not source.exists():
        return Plot("", title, "no build/bench.json: run `make bench` to draw the benchmark curve")
    found = importlib.util.spec_from_file_location("_bench_view_fit", ROOT / "benchmarks" / "bench_view_fit.py")
    if found is None or found.loader is None:
        return Plot("", title, "benchmarks/bench_view_fit.py is missing")
    module = importlib.util.module_from_spec(found)
    found.loader.exec_module(module)
    summary = json.loads(source.read_text(encoding="utf-8"))
    try:
        module.picture(summary, out / "bench.png")
    except (KeyError, TypeError, ValueError) as error:
        return Plot("", title, f"build/bench.json could not be drawn ({type(error).__name__}: {error})")
    return Plot("bench.png", title, "from build/bench.json (`make bench`): CPU time a message of each form, log scales")


def sawtooth(out: Path) -> Plot:
    from eukhe.commands.memory_simulate import PictureError, picture, simulate

    title = f"The sawtooth: view bytes over {SAWTOOTH_MESSAGES:,} synthetic messages"
    try:
        picture(simulate(SAWTOOTH_MESSAGES, 2026), str(out / "sawtooth.png"))
    except PictureError as error:
        return Plot("", title, str(error))
    return Plot(
        "sawtooth.png", title, f"`eukhe memory simulate --messages {SAWTOOTH_MESSAGES} --png FILE` (seed 2026): both views' bytes"
    )


def hunt(laws_dir: Path, out: Path) -> Plot:
    title = "The hunt: examples run over time"
    source = laws_dir / "hunt.json"
    if not source.exists():
        return Plot("", title, "no build/hunt.json: run `make fuzz SECONDS=N` to record a hunt")
    document = json.loads(source.read_text(encoding="utf-8"))
    samples: list[dict[str, Any]] = document.get("samples", [])
    if not samples:
        return Plot("", title, "build/hunt.json holds no samples")
    plt = _pyplot()
    figure, ax = plt.subplots(figsize=(8, 4))
    ax.plot([s["seconds"] for s in samples], [s["examples"] for s in samples], "-", color="tab:blue", label="examples")
    finds = [s for s in samples if s.get("failures")]
    if finds:
        ax.scatter([s["seconds"] for s in finds], [s["examples"] for s in finds], color="tab:red", label="failures found", zorder=3)
    ax.set_xlabel("seconds since the hunt started")
    ax.set_ylabel("examples run (all targets)")
    ax.set_title(title)
    ax.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(out / "hunt.png", dpi=90)
    plt.close(figure)
    return Plot("hunt.png", title, f"from build/hunt.json ({document.get('database', 'example database')})")


def draw(laws_dir: Path, out: Path) -> list[Plot]:
    out.mkdir(parents=True, exist_ok=True)
    return [bench(laws_dir, out), sawtooth(out), hunt(laws_dir, out)]
