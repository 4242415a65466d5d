"""The view-fit benchmark (issue 4): one run feeds the same message stream to the model
(bend.optchat) and to production (eukhe.memory) and prints JSON: messages, seconds and
microseconds per message for each side and their ratio at T = 10,000 and 100,000, and
production alone at 1,000,000.

The stream: the note's sizes (short user words, replies, tool calls, clipped tool output, from
a fixed seed); the compactor is never late: after each message every call that is ready ends
at once with a line of 400-512 bytes. Production keeps no texts (the store holds them); the
model keeps its texts, as it always does.

    .venv/bin/python benchmarks/bench_view_fit.py [--model-max 100000] [--production-max 1000000]

Targets: production at least 30x faster than the model at 100,000; 1,000,000 messages in
under 30 s; production's cost per message at 1,000,000 at most twice that at 10,000.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "impl")]

from bend.optchat import chat as model  # noqa: E402
from bend.optchat.node import name  # noqa: E402
from bend.optchat.text import filler, line_size  # noqa: E402
from eukhe.memory.chat import Chat  # noqa: E402
from eukhe.memory.simulate import note_sizes  # noqa: E402

BASE, SPREAD = 400, 113


def stream(count: int, seed: int = 2026) -> Iterator[int]:
    """Message sizes after the note, from a fixed seed."""
    return note_sizes(count, seed)


def run_model(count: int) -> float:
    chat = model.Chat()
    start = time.perf_counter()
    for length in stream(count):
        chat = model.message(chat, filler(f"m{chat.t}", length))
        while chat.running:
            node = chat.running[0]
            chat = model.done(chat, 0, filler(name(node), line_size(node, BASE, SPREAD)))
    return time.perf_counter() - start


def run_production(count: int) -> float:
    chat = Chat(keep_texts=False)
    start = time.perf_counter()
    for length in stream(count):
        chat.message(length=length)
        while chat.running:
            node = chat.running[0]
            chat.done(0, length=line_size(node, BASE, SPREAD))
    return time.perf_counter() - start


def side(count: int, seconds: float) -> dict[str, float]:
    return {"messages": count, "seconds": round(seconds, 3), "us_per_message": round(seconds / count * 1e6, 2)}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-max", type=int, default=100_000)
    parser.add_argument("--production-max", type=int, default=1_000_000)
    args = parser.parse_args(argv)
    sizes = [n for n in (10_000, 100_000) if n <= args.model_max]
    out: dict[str, object] = {"model": {}, "production": {}, "ratio": {}}
    for count in sizes:
        m = side(count, run_model(count))
        p = side(count, run_production(count))
        out["model"][str(count)] = m  # type: ignore[index]
        out["production"][str(count)] = p  # type: ignore[index]
        out["ratio"][str(count)] = round(m["us_per_message"] / p["us_per_message"], 1)  # type: ignore[index]
    big = args.production_max
    p = side(big, run_production(big))
    out["production"][str(big)] = p  # type: ignore[index]
    small = out["production"]["10000"]  # type: ignore[index]
    growth = round(p["us_per_message"] / small["us_per_message"], 2)
    out["cost_per_message_1m_over_10k"] = growth
    ratio_100k = out["ratio"].get("100000")  # type: ignore[attr-defined]
    out["targets"] = {
        "production_30x_at_100000": ratio_100k is not None and ratio_100k >= 30,
        "million_under_30s": p["seconds"] < 30,
        "cost_growth_at_most_2x": growth <= 2,
    }
    print(json.dumps(out, indent=1))
    return 0 if all(out["targets"].values()) else 1  # type: ignore[attr-defined]


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
