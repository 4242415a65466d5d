"""The view-fit benchmark (issues 4 and 16): the chat memory's hot path, whole loop, measured in
one run for the model (bend.optchat), production's pure-Python core and production's core
compiled with mypyc, side by side, as ratios.

Streams:

- ``h`` (issue 16): message ``t``'s line is ``200 + h(0, t) % 313`` bytes; a parent ``(l, i)`` is
  ``300 + h(l, i) % 213`` bytes, built as soon as its second child exists, before the message is
  appended and the view fitted; budgets 128,000 -> 64,000 (compaction view 32,000 -> 16,000).
  ``h`` is the issue's 32-bit mix. Sizes are computed inside the timed loop. Production runs
  ``eukhe.memory.core.run_h_stream`` (the loop is part of the core, so the compiled form
  compiles the loop too); ``pyloop`` is the compiled core driven from a Python loop here.
  The model runs the same loop on ``bend.optchat.view`` (grow, fit) with the model chat's batch
  and compaction rule. Modes: ``main`` (the view alone) and ``cview`` (with the compaction view).
- ``note`` (the design note's sizes, eukhe.memory.simulate): the whole chat planner
  (``eukhe.memory.chat.Chat``, texts not kept, so with its work queue and compaction view)
  against the model's chat; the compactor is never late: after each message every ready call
  ends at once with a line of 400-512 bytes.

Each run is a fresh process (its peak resident memory is its own): CPU seconds (the process's
own time, the fair figure on a shared machine), wall seconds, microseconds a message of each,
peak RSS, and a check value that every side must agree on. A run under REPEAT_S CPU seconds is
repeated in its process (a fresh planner each time, at most REPEATS times) and gives its median,
with its min and max beside it. A calibration loop (10^6 additions
in pure Python) is timed in every run so figures from loaded and quiet machines can be compared.

    .venv/bin/python benchmarks/bench_view_fit.py [--sizes 10000,100000,1000000,10000000]
        [--pure-max 1000000] [--model-max 100000] [--model-cview-max 100000] [--note-max 100000]
        [--out build/bench.json] [--png build/bench.png]

Targets (issue 16; a quiet 2-core machine): main view at most 1.2 us a message at 10^4, 10^5,
10^6; with the compaction view at most 2.0; at least 300 times the model at 10^5 (the model's
main view over production's, in the same run; the compaction view's ratio is reported too);
10^7 messages within 1.1 times the cost a message at 10^5 and at most 1 GiB resident (checked
for both views). The targets are reported, never asserted by `make test`.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "impl")]

# Public implementations, whole loop, main view, h stream (issue 16), us a message.
QUOTED = {"rust": {"10000": 1.44, "100000": 1.62, "1000000": 2.63}, "typescript-bun": {"10000": 3.17, "100000": 2.83, "1000000": 2.28}}
BUDGETS = (128_000, 64_000, 32_000, 16_000)
BASE, SPREAD = 400, 113
REPEAT_S, REPEATS = 1.0, 25  # a run shorter than REPEAT_S CPU seconds is repeated, at most REPEATS times


def calibrate() -> float:
    """CPU seconds of 10^6 additions in a pure-Python loop: how fast the machine ran this run."""
    start = time.process_time()
    total = 0
    for k in range(1_000_000):
        total += k
    return time.process_time() - start


# -- the h stream ------------------------------------------------------------------------------


def model_h(count: int, cview: bool) -> int:
    """The h stream on the model: bend.optchat.view's grow and fit, the model chat's rule."""
    from bend.optchat.view import View, fit, grow, view_bytes

    ceiling, floor, cceiling, cfloor = BUDGETS
    rows: list[list[int]] = [[]]

    def built(node: tuple[int, int]) -> int | None:
        if node[0] >= len(rows):
            return None
        row = rows[node[0]]
        return row[node[1]] if node[1] < len(row) else None

    view: View = ()
    cv: View = ()
    shrinking = False
    check = 0
    for t in range(count):
        x = ((t * 0x9E3779B1) & 0xFFFFFFFF) ^ 0x85EBCA77 ^ 12345
        x ^= x >> 16
        x = (x * 0x85EBCA6B) & 0xFFFFFFFF
        x ^= x >> 13
        x = (x * 0xC2B2AE35) & 0xFFFFFFFF
        x ^= x >> 16
        length = 200 + x % 313
        rows[0].append(length)
        i, level = t, 0
        while i & 1:
            i >>= 1
            level += 1
            x = ((i * 0x9E3779B1) & 0xFFFFFFFF) ^ (((level + 1) * 0x85EBCA77) & 0xFFFFFFFF) ^ 12345
            x ^= x >> 16
            x = (x * 0x85EBCA6B) & 0xFFFFFFFF
            x ^= x >> 13
            x = (x * 0xC2B2AE35) & 0xFFFFFFFF
            x ^= x >> 16
            if len(rows) <= level:
                rows.append([])
            rows[level].append(300 + x % 213)
        view = grow(view, (0, t), length)
        merges = -1
        if shrinking or view_bytes(view) > ceiling:
            view, merges = fit(view, t + 1, built, floor)
            shrinking = view_bytes(view) > floor
        if cview:
            cv = grow(cv, (0, t), length)
            if merges > 0:
                cv, _ = fit(view, t + 1, built, cfloor)
            elif view_bytes(cv) > cceiling:
                cv, _ = fit(cv, t + 1, built, cfloor)
        check += view_bytes(view)
    return check


def production_h(core: Any, count: int, cview: bool) -> int:
    ceiling, floor, cceiling, cfloor = BUDGETS
    planner = core.Planner(ceiling, floor, cceiling if cview else -1, cfloor)
    return int(core.run_h_stream(planner, count))


def pyloop_h(core: Any, count: int, cview: bool) -> int:
    """The same loop in Python here, calling the core's store and push."""
    ceiling, floor, cceiling, cfloor = BUDGETS
    planner = core.Planner(ceiling, floor, cceiling if cview else -1, cfloor)
    store, push = planner.store, planner.push
    check = 0
    for t in range(count):
        x = ((t * 0x9E3779B1) & 0xFFFFFFFF) ^ 0x85EBCA77 ^ 12345
        x ^= x >> 16
        x = (x * 0x85EBCA6B) & 0xFFFFFFFF
        x ^= x >> 13
        x = (x * 0xC2B2AE35) & 0xFFFFFFFF
        x ^= x >> 16
        length = 200 + x % 313
        i, level = t, 0
        while i & 1:
            i >>= 1
            level += 1
            x = ((i * 0x9E3779B1) & 0xFFFFFFFF) ^ (((level + 1) * 0x85EBCA77) & 0xFFFFFFFF) ^ 12345
            x ^= x >> 16
            x = (x * 0x85EBCA6B) & 0xFFFFFFFF
            x ^= x >> 13
            x = (x * 0xC2B2AE35) & 0xFFFFFFFF
            x ^= x >> 16
            store(level, i, 300 + x % 213)
        push(length)
        check += planner.total
    return check


# -- the design note's stream through the whole chat planner ------------------------------------


def note_stream(count: int) -> Any:
    from eukhe.memory.simulate import note_sizes

    return note_sizes(count, 2026)


def model_note(count: int) -> int:
    from bend.optchat import chat as model
    from bend.optchat.node import name
    from bend.optchat.text import filler, line_size
    from bend.optchat.view import view_bytes

    chat = model.Chat()
    check = 0
    for length in note_stream(count):
        chat = model.message(chat, filler(f"m{chat.t}", length))
        while chat.running:
            node = chat.running[0]
            chat = model.done(chat, 0, filler(name(node), line_size(node, BASE, SPREAD)))
        check += view_bytes(chat.view)
    return check


def production_note(count: int) -> int:
    from bend.optchat.text import line_size
    from eukhe.memory.chat import Chat

    chat = Chat(keep_texts=False)
    check = 0
    for length in note_stream(count):
        chat.message(length=length)
        while chat.running:
            node = chat.running[0]
            chat.done(0, length=line_size(node, BASE, SPREAD))
        check += chat.view.total
    return check


# -- one run, in its own process ----------------------------------------------------------------


def one(stream: str, mode: str, form: str, count: int) -> dict[str, Any]:
    from eukhe.memory import view

    core: Any = None
    if form in ("pure", "compiled", "pyloop"):
        view.use("pure" if form == "pure" else "compiled")
        core = view.CORE
    cview = mode == "cview"
    calibration = calibrate()

    def once() -> int:
        if stream == "h":
            if form == "model":
                return model_h(count, cview)
            if form == "pyloop":
                return pyloop_h(core, count, cview)
            return production_h(core, count, cview)
        return model_note(count) if form == "model" else production_note(count)

    # A short run is repeated (a fresh planner each time) until it has used REPEAT_S of CPU
    # time or run REPEATS times; the figure is the median run (a loaded machine stretches some).
    cpus: list[float] = []
    walls: list[float] = []
    checks: set[int] = set()
    while not cpus or (sum(cpus) < REPEAT_S and len(cpus) < REPEATS):
        start_cpu, start_wall = time.process_time(), time.perf_counter()
        checks.add(once())
        cpus.append(time.process_time() - start_cpu)
        walls.append(time.perf_counter() - start_wall)
    if len(checks) != 1:
        raise SystemExit(f"{stream} {mode} {form} {count}: repeated runs disagree: {sorted(checks)}")
    check = checks.pop()
    cpu, wall = statistics.median(cpus), statistics.median(walls)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "stream": stream,
        "mode": mode,
        "form": form,
        "messages": count,
        "cpu_s": round(cpu, 3),
        "wall_s": round(wall, 3),
        "us_per_message": round(cpu / count * 1e6, 3),
        "runs": len(cpus),
        "min_us_per_message": round(min(cpus) / count * 1e6, 3),
        "max_us_per_message": round(max(cpus) / count * 1e6, 3),
        "wall_us_per_message": round(wall / count * 1e6, 3),
        "peak_rss_mib": round(peak, 1),
        "calibration_s": round(calibration, 4),
        "check": check,
    }


def spawn(stream: str, mode: str, form: str, count: int) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--one", stream, mode, form, str(count)],
        capture_output=True,
        text=True,
        check=False,
        env=dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "impl"), str(ROOT), os.environ.get("PYTHONPATH", "")])),
    )
    if done.returncode != 0:
        raise SystemExit(f"run {stream} {mode} {form} {count} failed:\n{done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    print(
        f"{stream:4} {mode:5} {form:8} {count:>10,}: {result['us_per_message']:8.3f} us/msg cpu (median of {result['runs']})"
        f" ({result['wall_us_per_message']:.3f} wall), {result['peak_rss_mib']:7.1f} MiB, calibration {result['calibration_s']:.3f} s",
        file=sys.stderr,
        flush=True,
    )
    return result


def plan(sizes: list[int], pure_max: int, model_max: int, compiled: bool, model_cview_max: int, note_max: int) -> list[tuple[str, str, str, int]]:
    runs: list[tuple[str, str, str, int]] = []
    for count in sizes:
        for mode in ("main", "cview"):
            if count <= (model_max if mode == "main" else model_cview_max):
                runs.append(("h", mode, "model", count))
            if count <= pure_max:
                runs.append(("h", mode, "pure", count))
            if compiled:
                runs.append(("h", mode, "compiled", count))
                if count <= pure_max:
                    runs.append(("h", mode, "pyloop", count))
    for count in sizes:
        if count <= min(model_max, 10_000):
            runs.append(("note", "chat", "model", count))
        if count <= min(pure_max, note_max):
            runs.append(("note", "chat", "pure", count))
            if compiled:
                runs.append(("note", "chat", "compiled", count))
    return runs


def summarize(results: list[dict[str, Any]], sizes: list[int]) -> dict[str, Any]:
    table: dict[str, dict[str, dict[str, dict[str, Any]]]] = {}
    for r in results:
        table.setdefault(f"{r['stream']}/{r['mode']}", {}).setdefault(r["form"], {})[str(r["messages"])] = r
    checks_agree = True
    for forms in table.values():
        for count in {c for runs in forms.values() for c in runs}:
            values = {runs[count]["check"] for runs in forms.values() if count in runs}
            checks_agree = checks_agree and len(values) == 1
    ratios: dict[str, Any] = {}
    for key, forms in table.items():
        model = forms.get("model", {})
        for form in ("pure", "compiled", "pyloop"):
            for count, run in forms.get(form, {}).items():
                entry = ratios.setdefault(key, {}).setdefault(form, {}).setdefault(count, {})
                if count in model:
                    entry["model_over_this"] = round(model[count]["us_per_message"] / run["us_per_message"], 1)
                if key == "h/main":
                    for name, quoted in QUOTED.items():
                        if count in quoted:
                            entry[f"{name}_over_this"] = round(quoted[count] / run["us_per_message"], 2)
    targets: dict[str, Any] = {}
    for form in ("compiled", "pure"):
        got: dict[str, Any] = {}
        for mode, most in (("main", 1.2), ("cview", 2.0)):
            runs = table.get(f"h/{mode}", {}).get(form, {})
            for count in ("10000", "100000", "1000000"):
                if count in runs:
                    got[f"{mode}_at_most_{most}us_{count}"] = runs[count]["us_per_message"] <= most
            # the issue: "at least 300 times the model at 10^5" (the model's main view over this
            # form's main view, both measured in this run); the compaction view's ratio is
            # reported beside it against the model with its compaction view
            model = table.get(f"h/{mode}", {}).get("model", {})
            if "100000" in runs and "100000" in model:
                got[f"{mode}_model_300x_at_100000"] = model["100000"]["us_per_message"] / runs["100000"]["us_per_message"] >= 300
            if "10000000" in runs and "100000" in runs:
                got[f"{mode}_1e7_within_1.1x_of_1e5"] = runs["10000000"]["us_per_message"] <= 1.1 * runs["100000"]["us_per_message"]
                got[f"{mode}_1e7_at_most_1GiB"] = runs["10000000"]["peak_rss_mib"] <= 1024
        if got:
            targets[form] = got
    calibrations = [r["calibration_s"] for r in results]
    return {
        "sizes": sizes,
        "quoted_us_per_message": QUOTED,
        "calibration_s": {"min": min(calibrations), "max": max(calibrations)},
        "checks_agree": checks_agree,
        "runs": table,
        "ratios": ratios,
        "targets": targets,
    }


def picture(summary: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 2, figsize=(13, 5), sharey=True)
    styles = {"model": "k", "pure": "tab:blue", "compiled": "tab:red", "pyloop": "tab:orange"}
    for ax, mode in zip(axes, ("main", "cview")):
        for form, runs in summary["runs"].get(f"h/{mode}", {}).items():
            xs = sorted(int(c) for c in runs)
            ax.plot(xs, [runs[str(x)]["us_per_message"] for x in xs], "o-", color=styles.get(form, "grey"), label=form)
        if mode == "main":
            for name, quoted in QUOTED.items():
                xs = sorted(int(c) for c in quoted)
                ax.plot(xs, [quoted[str(x)] for x in xs], "s--", label=f"{name} (quoted)")
            ax.axhline(1.2, color="grey", linestyle=":", linewidth=0.8)
        else:
            ax.axhline(2.0, color="grey", linestyle=":", linewidth=0.8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("messages T")
        ax.set_title(f"h stream, {'main view' if mode == 'main' else 'with the compaction view'}")
        ax.legend(fontsize=8)
    axes[0].set_ylabel("us a message (CPU)")
    cal = summary["calibration_s"]
    figure.suptitle(f"View fit, whole loop, CPU time (calibration loop {cal['min']:.3f}-{cal['max']:.3f} s in these runs)")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100)
    plt.close(figure)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--one", nargs=4, metavar=("STREAM", "MODE", "FORM", "COUNT"), help=argparse.SUPPRESS)
    parser.add_argument("--sizes", default="10000,100000,1000000,10000000")
    parser.add_argument("--pure-max", type=int, default=1_000_000)
    parser.add_argument("--model-max", type=int, default=100_000)
    parser.add_argument("--model-cview-max", type=int, default=100_000, help="the model with the compaction view up to this size")
    parser.add_argument("--note-max", type=int, default=100_000, help="the note stream (whole chat planner) up to this size")
    parser.add_argument("--out", default=str(ROOT / "build" / "bench.json"))
    parser.add_argument("--png", default=str(ROOT / "build" / "bench.png"))
    args = parser.parse_args(argv)
    if args.one:
        stream, mode, form, count = args.one
        print(json.dumps(one(stream, mode, form, int(count))))
        return 0
    from eukhe.memory import view

    compiled = view.compiled() is not None
    if not compiled:
        print("the compiled core is not built (python -m eukhe.corebuild): pure form and model only", file=sys.stderr)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    results = [spawn(*run) for run in plan(sizes, args.pure_max, args.model_max, compiled, args.model_cview_max, args.note_max)]
    summary = summarize(results, sizes)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(summary, indent=1) + "\n")
    picture(summary, Path(args.png))
    print(json.dumps({"checks_agree": summary["checks_agree"], "ratios": summary["ratios"], "targets": summary["targets"]}, indent=1))
    print(f"wrote {out} and {args.png}", file=sys.stderr)
    return 0 if summary["checks_agree"] else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
