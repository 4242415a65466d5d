"""The view-fit benchmark (issues 4 and 16): the chat memory's hot path, measured in one run for
the product path (``eukhe.memory.chat.Chat``), production's planner core (pure and compiled with
mypyc) and the model (bend.optchat), side by side.

The headline (the first lines printed, and ``headline`` in build/bench.json) is the product path:
``Chat.message`` a message on the peers' stream (``h``, below), with the compaction view (the
chat's default budgets, 128,000 -> 64,000 and 32,000 -> 16,000), at 10^5 and 10^6 messages, the
planner core pure and compiled, in us of CPU a message beside the targets (compiled at most 0.6,
pure at most 3.0). The timed loop is a user's code: ``chat.message(size)``, then the
compactor's answer to every call it started (``chat.done(0, size)``: the parents the
stream builds), so the figure is the whole product path a message; the sizes are drawn before
the loop (a user's input, not the product's work). Texts are not kept (``keep_texts=False``).

Streams:

- ``h`` (issue 16, the stream the peers quoted below are measured on): message ``t``'s line is
  ``200 + h(0, t) % 313`` bytes; a parent ``(l, i)``'s line is ``300 + h(l, i) % 213`` bytes.
  ``h`` is the issue's 32-bit mix. On the chat, a message is its own node (at most 512 bytes)
  and a parent is built by the compactor's answer once both halves are built (or at once when
  the two lines joined fit 512 bytes: rule 12). On the planner core (``core``, below the
  headline: the loop here in benchmarks/, calling the core's ``store`` and ``push``), a parent is
  built as soon as its second child exists, before the message is appended and the view fitted,
  and the sizes are computed inside the timed loop, as the peers' whole loop does; the model runs
  the same loop on ``bend.optchat.view`` (grow, fit) with the model chat's batch and compaction
  rule. Modes: ``main`` (the view alone) and ``cview`` (with the compaction view).
- ``note`` (the design note's sizes, eukhe.memory.simulate): the whole chat planner against the
  model's chat; the compactor is never late: after each message every ready call ends at once
  with a line of 400-512 bytes.

Peers (a Rust and a TypeScript implementation) are quoted only beside the figure measured with
their measure: the planner core's whole loop on the h stream, main view, us a message. They are
never set beside the headline (the product path, with the compaction view).

Each run is a fresh process (its peak resident memory is its own), and the runs are interleaved
in rounds: each round runs every size once, in one order (every other round reversed), so a
change of the machine's load falls on every size alike. The headline runs ``--headline-rounds``
processes a size and form (default 3); the compiled core loop ``--small-rounds`` (default 5) up
to 10^5 and ``--rounds`` (default 3) above; the slow forms ``--slow-rounds`` (default 1). In a
process, a run shorter than ``--repeat-s`` CPU seconds is repeated (a fresh chat or planner each
time, at least MEDIAN_RUNS times, at most REPEATS times) and the process's figure is its median
run (of two runs the median is their mean, which one slow run moves by half its excess; of three
it is the middle one); the first (cold) run is kept beside it. A size's figure is the median over its processes, with their min and max. Times
are CPU time (``time.process_time``: user + system, the process's own time, the fair figure on a
shared machine, where wall time is noisy); the system part and the page faults a message are
reported beside it, with the load average at each process's start and a calibration loop (10^6
additions in pure Python).

    .venv/bin/python benchmarks/bench_view_fit.py [--sizes 10000,100000,1000000,10000000]
        [--headline-sizes 100000,1000000] [--headline-rounds 3] [--rounds 3] [--small-rounds 5]
        [--slow-rounds 1] [--repeat-s 1.0] [--pure-max 1000000] [--model-max 100000]
        [--model-cview-max 100000] [--note-max 100000] [--headline-only]
        [--out build/bench.json] [--png build/bench.png]

Targets: the headline's (above). Below it, issue 16's for the planner core's loop: main view at
most 1.2 us a message at 10^4, 10^5, 10^6; with the compaction view at most 2.0; at least 300
times the model at 10^5; 10^7 messages within 1.1 times the cost a message at 10^5 and at most
1 GiB resident. The targets are reported, never asserted by `make test`.
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
from array import array
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "impl")]

# Public implementations, whole loop, main view, h stream (issue 16), us a message: quoted only
# beside the planner core's loop on the same stream and view (never beside the headline).
QUOTED = {"rust": {"10000": 1.44, "100000": 1.62, "1000000": 2.63}, "typescript-bun": {"10000": 3.17, "100000": 2.83, "1000000": 2.28}}
BUDGETS = (128_000, 64_000, 32_000, 16_000)
BASE, SPREAD = 400, 113
HEADLINE_SIZES = (100_000, 1_000_000)
HEADLINE_TARGETS = {"compiled": 0.6, "pure": 3.0}  # us of CPU a message, Chat.message with the compaction view
REPEAT_S, REPEATS = 1.0, 25  # a run shorter than REPEAT_S CPU seconds is repeated, at most REPEATS times
MEDIAN_RUNS = 3  # and at least this many times: a median that one slow run cannot move


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


def mix(level: int, i: int) -> int:
    """The issue's 32-bit mix ``h(l, i)``."""
    x = ((i * 0x9E3779B1) & 0xFFFFFFFF) ^ (((level + 1) * 0x85EBCA77) & 0xFFFFFFFF) ^ 12345
    x ^= x >> 16
    x = (x * 0x85EBCA6B) & 0xFFFFFFFF
    x ^= x >> 13
    x = (x * 0xC2B2AE35) & 0xFFFFFFFF
    return x ^ (x >> 16)


def core_h(core: Any, count: int, cview: bool) -> int:
    """The h stream's whole loop on the planner core, sizes computed in the loop (the peers'
    measure): each parent ``store``d as soon as its second child exists, then the message
    ``push``ed (appended and fitted). Returns the sum of the view's bytes after each message."""
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


# -- the headline: the product path (Chat.message) on the h stream ----------------------------


def h_sizes(count: int) -> list[array[int]]:
    """The h stream's line sizes, drawn before the timed loop: ``sizes[l][i]`` is node
    ``(l, i)``'s line (messages at level 0, parents above)."""
    rows = [array("H", (200 + mix(0, t) % 313 for t in range(count)))]
    level = 1
    while count >> level:
        rows.append(array("H", (300 + mix(level, i) % 213 for i in range(count >> level))))
        level += 1
    return rows


def chat_h(count: int, sizes: list[array[int]] | None = None) -> int:
    """The product path on the h stream: ``Chat.message`` a message, then the compactor's answer
    (``Chat.done``) to every call the chat started, each the node's line size. Returns the sum of
    the view's bytes after each message (a check value)."""
    from eukhe.memory.chat import Chat

    rows = sizes if sizes is not None else h_sizes(count)
    chat = Chat(keep_texts=False)
    message, done = chat.message, chat.done
    check = 0
    for length in rows[0]:
        message(length)
        while chat.running:
            level, i = chat.running[0]
            done(0, rows[level][i])
        check += chat.view.total
    return check


def model_chat_h(count: int) -> int:
    """``chat_h`` on the model's chat (bend.optchat.chat): texts of the same sizes."""
    from bend.optchat import chat as model
    from bend.optchat.node import name
    from bend.optchat.text import filler
    from bend.optchat.view import view_bytes

    rows = h_sizes(count)
    chat = model.Chat()
    check = 0
    for length in rows[0]:
        chat = model.message(chat, filler(f"m{chat.t}", length))
        while chat.running:
            node = chat.running[0]
            chat = model.done(chat, 0, filler(name(node), rows[node[0]][node[1]]))
        check += view_bytes(chat.view)
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
        chat.message(length)
        while chat.running:
            node = chat.running[0]
            chat.done(0, line_size(node, BASE, SPREAD))
        check += chat.view.total
    return check


# -- one run, in its own process ----------------------------------------------------------------


def _usage() -> tuple[float, float, int]:
    got = resource.getrusage(resource.RUSAGE_SELF)
    return got.ru_utime, got.ru_stime, got.ru_minflt


def one(stream: str, mode: str, form: str, count: int, repeat_s: float = REPEAT_S) -> dict[str, Any]:
    """One process's figure: the run repeated in this process (a fresh chat or planner each time)
    while it has used less than ``repeat_s`` CPU seconds (at most REPEATS times; at least
    MEDIAN_RUNS times when the first run took less than ``repeat_s``); the median run,
    its min and max, the first (cold) run, and the user/system split and page faults of each."""
    from eukhe.memory import view

    core: Any = None
    if form in ("pure", "compiled"):
        view.use(form)
        core = view.CORE
    cview = mode == "cview"
    sizes = h_sizes(count) if stream == "chat" and form != "model" else None  # drawn before the clock
    import bend.optchat.chat  # noqa: F401  (imports before the clock)
    import eukhe.memory.chat  # noqa: F401
    load = os.getloadavg()[0]
    calibration = calibrate()

    def once() -> int:
        if stream == "chat":
            return model_chat_h(count) if form == "model" else chat_h(count, sizes)
        if stream == "h":
            return model_h(count, cview) if form == "model" else core_h(core, count, cview)
        return model_note(count) if form == "model" else production_note(count)

    cpus: list[float] = []
    walls: list[float] = []
    systems: list[float] = []
    faults: list[int] = []
    checks: set[int] = set()
    while not cpus or (sum(cpus) < repeat_s and len(cpus) < REPEATS) or (cpus[0] < repeat_s and len(cpus) < MEDIAN_RUNS):
        user0, sys0, flt0 = _usage()
        start_cpu, start_wall = time.process_time(), time.perf_counter()
        checks.add(once())
        cpus.append(time.process_time() - start_cpu)
        walls.append(time.perf_counter() - start_wall)
        user1, sys1, flt1 = _usage()
        systems.append(sys1 - sys0)
        faults.append(flt1 - flt0)
    if len(checks) != 1:
        raise SystemExit(f"{stream} {mode} {form} {count}: repeated runs disagree: {sorted(checks)}")
    check = checks.pop()
    cpu, wall = statistics.median(cpus), statistics.median(walls)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    per = 1e6 / count
    return {
        "stream": stream,
        "mode": mode,
        "form": form,
        "messages": count,
        "cpu_s": round(cpu, 4),
        "us_per_message": round(cpu * per, 4),
        "repeats": len(cpus),
        "repeat_us_per_message": [round(c * per, 4) for c in cpus],
        "first_us_per_message": round(cpus[0] * per, 4),
        "wall_us_per_message": round(wall * per, 4),
        "sys_us_per_message": round(statistics.median(systems) * per, 4),
        "faults_per_message": round(statistics.median(faults) / count, 5),
        "first_faults_per_message": round(faults[0] / count, 5),
        "peak_rss_mib": round(peak, 1),
        "calibration_s": round(calibration, 4),
        "load": round(load, 2),
        "check": check,
    }


Job = tuple[str, str, str, int]


def spawn(job: Job, repeat_s: float, quiet: bool = False) -> dict[str, Any]:
    stream, mode, form, count = job
    done = subprocess.run(
        [sys.executable, __file__, "--one", stream, mode, form, str(count), "--repeat-s", str(repeat_s)],
        capture_output=True,
        text=True,
        check=False,
        env=dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "impl"), str(ROOT), os.environ.get("PYTHONPATH", "")])),
    )
    if done.returncode != 0:
        raise SystemExit(f"run {stream} {mode} {form} {count} failed:\n{done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    if not quiet:
        print(
            f"{stream:4} {mode:5} {form:8} {count:>10,}: {result['us_per_message']:8.3f} us/msg cpu (median of {result['repeats']},"
            f" first {result['first_us_per_message']:.3f}, sys {result['sys_us_per_message']:.3f}, faults {result['faults_per_message']:.4f}/msg),"
            f" {result['peak_rss_mib']:7.1f} MiB, calibration {result['calibration_s']:.3f} s, load {result['load']:.2f}",
            file=sys.stderr,
            flush=True,
        )
    return result


def headline_plan(sizes: list[int], compiled: bool) -> list[Job]:
    """The headline's runs: Chat.message with the compaction view, each form, each size."""
    return [("chat", "cview", form, count) for count in sizes for form in (("compiled", "pure") if compiled else ("pure",))]


def plan(sizes: list[int], pure_max: int, model_max: int, compiled: bool, model_cview_max: int, note_max: int, chat_max: int, headline: list[int]) -> list[Job]:
    """The runs below the headline: the chat at the other sizes (the model's chat at 10^4, for the
    check), the planner core's loop on the h stream, the note stream."""
    runs: list[Job] = []
    for count in sizes:
        if count <= chat_max and count not in headline:
            if count <= pure_max:
                runs.append(("chat", "cview", "pure", count))
            if compiled:
                runs.append(("chat", "cview", "compiled", count))
        if count <= min(model_max, 10_000):
            runs.append(("chat", "cview", "model", count))
    for count in sizes:
        for mode in ("main", "cview"):
            if count <= (model_max if mode == "main" else model_cview_max):
                runs.append(("h", mode, "model", count))
            if count <= pure_max:
                runs.append(("h", mode, "pure", count))
            if compiled:
                runs.append(("h", mode, "compiled", count))
    for count in sizes:
        if count <= min(model_max, 10_000):
            runs.append(("note", "chat", "model", count))
        if count <= min(pure_max, note_max):
            runs.append(("note", "chat", "pure", count))
            if compiled:
                runs.append(("note", "chat", "compiled", count))
    return runs


def rounds_of(jobs: list[Job], wanted: Any) -> list[list[Job]]:
    """The jobs in interleaved rounds, each job in the first ``wanted(job)`` rounds. Each round
    runs its jobs in one order, every other round in reverse, so a drift of the machine's load
    falls on every size alike."""
    out: list[list[Job]] = []
    most = max((wanted(job) for job in jobs), default=0)
    for r in range(most):
        todo = [job for job in jobs if r < wanted(job)]
        out.append(todo if r % 2 == 0 else todo[::-1])
    return out


def _spread(values: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(values), 4), "min": round(min(values), 4), "max": round(max(values), 4), "n": len(values)}


def merge_rounds(results: list[dict[str, Any]]) -> dict[str, Any]:
    """One job's processes as one entry: the median over the processes of each process's figure,
    with the spread (min, max) over the processes; the largest peak resident memory."""
    us = [r["us_per_message"] for r in results]
    entry = dict(results[0])
    entry.update(
        {
            "us_per_message": round(statistics.median(us), 4),
            "min_us_per_message": round(min(us), 4),
            "max_us_per_message": round(max(us), 4),
            "processes": len(results),
            "process_us_per_message": us,
            "first_us_per_message": round(statistics.median(r["first_us_per_message"] for r in results), 4),
            "wall_us_per_message": round(statistics.median(r["wall_us_per_message"] for r in results), 4),
            "sys_us_per_message": round(statistics.median(r["sys_us_per_message"] for r in results), 4),
            "faults_per_message": round(statistics.median(r["faults_per_message"] for r in results), 5),
            "peak_rss_mib": max(r["peak_rss_mib"] for r in results),
            "calibration_s": round(statistics.median(r["calibration_s"] for r in results), 4),
            "load": [r["load"] for r in results],
            "round": [r["round"] for r in results],
        }
    )
    for key in ("cpu_s", "repeat_us_per_message"):
        entry.pop(key, None)
    return entry


def headline_of(table: dict[str, Any], sizes: list[int]) -> dict[str, Any]:
    """The product path's figures beside the targets: Chat.message with the compaction view."""
    runs = table.get("chat/cview", {})
    rows: list[dict[str, Any]] = []
    for form, most in HEADLINE_TARGETS.items():
        for count in sizes:
            run = runs.get(form, {}).get(str(count))
            if run is None:
                continue
            rows.append(
                {
                    "form": form,
                    "messages": count,
                    "us_per_message": run["us_per_message"],
                    "min_us_per_message": run["min_us_per_message"],
                    "max_us_per_message": run["max_us_per_message"],
                    "processes": run["processes"],
                    "target_us_per_message": most,
                    "met": run["us_per_message"] <= most,
                    "peak_rss_mib": run["peak_rss_mib"],
                }
            )
    return {
        "path": "eukhe.memory.chat.Chat.message (with Chat.done for the calls it starts), compaction view, texts not kept",
        "stream": "h (issue 16; the peers' stream): messages 200 + h(0, t) % 313 bytes, parents 300 + h(l, i) % 213",
        "measure": "us of CPU a message (time.process_time), median over processes of each process's median run",
        "rows": rows,
        "all_met": bool(rows) and all(r["met"] for r in rows),
    }


def headline_lines(headline: dict[str, Any]) -> list[str]:
    out = [f"headline: {headline['path']}", f"  stream: {headline['stream']}", f"  measure: {headline['measure']}"]
    for r in headline["rows"]:
        out.append(
            f"  Chat.message {r['form']:8} {r['messages']:>10,}: {r['us_per_message']:7.3f} us/msg"
            f" [min {r['min_us_per_message']:.3f}, max {r['max_us_per_message']:.3f}, {r['processes']} processes]"
            f"  target <= {r['target_us_per_message']:.1f}: {'met' if r['met'] else 'MISSED'}"
        )
    return out


def summarize(results: list[dict[str, Any]], sizes: list[int], headline_sizes: list[int]) -> dict[str, Any]:
    grouped: dict[tuple[str, str, str, int], list[dict[str, Any]]] = {}
    for r in results:
        grouped.setdefault((r["stream"], r["mode"], r["form"], r["messages"]), []).append(r)
    table: dict[str, dict[str, dict[str, dict[str, Any]]]] = {}
    for (stream, mode, form, size), group in grouped.items():
        table.setdefault(f"{stream}/{mode}", {}).setdefault(form, {})[str(size)] = merge_rounds(group)
    checks_agree = all(len({r["check"] for r in group}) == 1 for group in grouped.values())
    for forms in table.values():
        for count in {c for runs in forms.values() for c in runs}:
            values = {runs[count]["check"] for runs in forms.values() if count in runs}
            checks_agree = checks_agree and len(values) == 1
    ratios: dict[str, Any] = {}
    for key, forms in table.items():
        model = forms.get("model", {})
        for form in ("pure", "compiled"):
            for count, run in forms.get(form, {}).items():
                entry = ratios.setdefault(key, {}).setdefault(form, {}).setdefault(count, {})
                if count in model:
                    entry["model_over_this"] = round(model[count]["us_per_message"] / run["us_per_message"], 1)
                if key == "h/main":  # the peers' measure: whole loop, h stream, main view
                    for name, quoted in QUOTED.items():
                        if count in quoted:
                            entry[f"{name}_over_this"] = round(quoted[count] / run["us_per_message"], 2)
    # growth of the core loop: the cost a message at each size over that at 10^5, as the ratio of
    # the medians and, round by round, the ratio of the two runs of the same round
    growth: dict[str, Any] = {}
    for mode in ("main", "cview"):
        by_size: dict[int, dict[int, float]] = {}
        for (stream, m, form, size), group in grouped.items():
            if stream == "h" and m == mode and form == "compiled":
                by_size[size] = {r["round"]: r["us_per_message"] for r in group}
        base = by_size.get(100_000)
        if not base:
            continue
        for size, by_round in sorted(by_size.items()):
            if size == 100_000:
                continue
            paired = [by_round[r] / base[r] for r in by_round if r in base]
            med = statistics.median(by_round.values()) / statistics.median(base.values())
            growth.setdefault(mode, {})[f"{size}_over_100000"] = {"ratio_of_medians": round(med, 3), "per_round": _spread(paired) if paired else None}
    targets: dict[str, Any] = {}
    for form in ("compiled", "pure"):
        got: dict[str, Any] = {}
        for mode, most in (("main", 1.2), ("cview", 2.0)):
            runs = table.get(f"h/{mode}", {}).get(form, {})
            for count in ("10000", "100000", "1000000"):
                if count in runs:
                    got[f"core_{mode}_at_most_{most}us_{count}"] = runs[count]["us_per_message"] <= most
            model = table.get(f"h/{mode}", {}).get("model", {})
            if "100000" in runs and "100000" in model:
                got[f"core_{mode}_model_300x_at_100000"] = model["100000"]["us_per_message"] / runs["100000"]["us_per_message"] >= 300
            if "10000000" in runs and "100000" in runs:
                got[f"core_{mode}_1e7_within_1.1x_of_1e5"] = runs["10000000"]["us_per_message"] <= 1.1 * runs["100000"]["us_per_message"]
                got[f"core_{mode}_1e7_at_most_1GiB"] = runs["10000000"]["peak_rss_mib"] <= 1024
        if got:
            targets[form] = got
    calibrations = [r["calibration_s"] for r in results]
    loads = [r["load"] for r in results]
    return {
        "headline": headline_of(table, headline_sizes),
        "sizes": sizes,
        "quoted_us_per_message": {"measure": "whole loop, h stream, main view (runs h/main here)", **QUOTED},
        "calibration_s": {"min": min(calibrations), "max": max(calibrations)},
        "load": {"min": min(loads), "max": max(loads)},
        "checks_agree": checks_agree,
        "runs": table,
        "ratios": ratios,
        "growth": growth,
        "targets": targets,
    }


def picture(summary: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 3, figsize=(18, 5), sharey=True)
    styles = {"model": "k", "pure": "tab:blue", "compiled": "tab:red"}
    panels = (("chat/cview", "Chat.message, with the compaction view (headline)"), ("h/main", "planner core loop, main view"), ("h/cview", "planner core loop, with the compaction view"))
    for ax, (key, title) in zip(axes, panels):
        for form, runs in summary["runs"].get(key, {}).items():
            xs = sorted(int(c) for c in runs)
            ax.plot(xs, [runs[str(x)]["us_per_message"] for x in xs], "o-", color=styles.get(form, "grey"), label=form)
        if key == "chat/cview":
            for form, most in HEADLINE_TARGETS.items():
                ax.axhline(most, color=styles[form], linestyle=":", linewidth=0.8, label=f"target {form}")
        elif key == "h/main":
            for name, quoted in QUOTED.items():
                xs = sorted(int(c) for c in quoted)
                ax.plot(xs, [quoted[str(x)] for x in xs], "s--", label=f"{name} (quoted)")
            ax.axhline(1.2, color="grey", linestyle=":", linewidth=0.8)
        else:
            ax.axhline(2.0, color="grey", linestyle=":", linewidth=0.8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("messages T")
        ax.set_title(f"h stream: {title}", fontsize=9)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
    axes[0].set_ylabel("us a message (CPU)")
    cal = summary["calibration_s"]
    figure.suptitle(f"View fit, CPU time (calibration loop {cal['min']:.3f}-{cal['max']:.3f} s in these runs)")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100)
    plt.close(figure)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--one", nargs=4, metavar=("STREAM", "MODE", "FORM", "COUNT"), help=argparse.SUPPRESS)
    parser.add_argument("--repeat-s", type=float, default=REPEAT_S, help="a process repeats a run while it has used less CPU than this")
    parser.add_argument("--headline-sizes", default=",".join(str(c) for c in HEADLINE_SIZES))
    parser.add_argument("--headline-rounds", type=int, default=3, help="processes a size and form of the headline (Chat.message)")
    parser.add_argument("--headline-only", action="store_true", help="run the headline alone")
    parser.add_argument("--sizes", default="10000,100000,1000000,10000000")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the compiled core loop above 10^5 (a fresh process each)")
    parser.add_argument("--small-rounds", type=int, default=5, help="rounds of the compiled core loop up to 10^5")
    parser.add_argument("--slow-rounds", type=int, default=1, help="rounds of the model, the pure form, the chat below the headline and the note stream")
    parser.add_argument("--pure-max", type=int, default=1_000_000)
    parser.add_argument("--model-max", type=int, default=100_000)
    parser.add_argument("--model-cview-max", type=int, default=100_000, help="the model with the compaction view up to this size")
    parser.add_argument("--note-max", type=int, default=100_000, help="the note stream (whole chat planner) up to this size")
    parser.add_argument("--chat-max", type=int, default=1_000_000, help="the chat on the h stream below the headline up to this size")
    parser.add_argument("--out", default=str(ROOT / "build" / "bench.json"))
    parser.add_argument("--png", default=str(ROOT / "build" / "bench.png"))
    args = parser.parse_args(argv)
    if args.one:
        stream, mode, form, count = args.one
        print(json.dumps(one(stream, mode, form, int(count), args.repeat_s)))
        return 0
    from eukhe.memory import view

    compiled = view.compiled() is not None
    if not compiled:
        print("the compiled core is not built (python -m eukhe.corebuild): pure form and model only", file=sys.stderr)
    headline_sizes = [int(s) for s in args.headline_sizes.split(",") if s]
    sizes = [int(s) for s in args.sizes.split(",") if s]
    results = []
    # the headline first, printed as soon as it is measured
    for number, todo in enumerate(rounds_of(headline_plan(headline_sizes, compiled), lambda job: args.headline_rounds)):
        for job in todo:
            results.append(dict(spawn(job, args.repeat_s, quiet=True), round=number))
    first = summarize(results, headline_sizes, headline_sizes)
    for line in headline_lines(first["headline"]):
        print(line, flush=True)
    if not args.headline_only:

        def wanted(job: Job) -> int:
            stream, _, form, count = job
            if stream == "h" and form == "compiled":
                return int(args.small_rounds if count <= 100_000 else args.rounds)
            return int(args.slow_rounds)

        jobs = plan(sizes, args.pure_max, args.model_max, compiled, args.model_cview_max, args.note_max, args.chat_max, headline_sizes)
        for number, todo in enumerate(rounds_of(jobs, wanted)):
            print(f"round {number + 1}: {len(todo)} runs", file=sys.stderr, flush=True)
            for job in todo:
                results.append(dict(spawn(job, args.repeat_s), round=100 + number))
    summary = summarize(results, sorted(set(sizes) | set(headline_sizes)), headline_sizes)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(summary, indent=1) + "\n")
    picture(summary, Path(args.png))
    for mode in ("main", "cview"):
        for count, run in sorted(summary["runs"].get(f"h/{mode}", {}).get("compiled", {}).items(), key=lambda kv: int(kv[0])):
            print(
                f"core loop, compiled, h {mode:5} {int(count):>10,}: median {run['us_per_message']:.3f} us/msg"
                f" [min {run['min_us_per_message']:.3f}, max {run['max_us_per_message']:.3f}] over {run['processes']} processes,"
                f" sys {run['sys_us_per_message']:.3f}, faults {run['faults_per_message']:.4f}/msg, peak {run['peak_rss_mib']:.0f} MiB",
                file=sys.stderr,
            )
    report = {key: summary[key] for key in ("headline", "checks_agree", "load", "growth", "ratios", "targets")}
    print(json.dumps(report, indent=1))
    print(f"wrote {out} and {args.png}", file=sys.stderr)
    return 0 if summary["checks_agree"] else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
