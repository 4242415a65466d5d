"""`eukhe memory simulate --messages N [--png FILE]`: run the planner on synthetic sizes and
print view and compaction view statistics (lines, bytes, merges per batch, rewritten lines per
message); ``--png`` draws the sawtooth of both views' bytes against messages."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

MAX_MESSAGES = 10_000_000


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--messages wants a whole number, not {text!r}") from None
    if not 1 <= value <= MAX_MESSAGES:
        raise argparse.ArgumentTypeError(f"--messages must be between 1 and {MAX_MESSAGES:,}, not {value}")
    return value


def register(sub: Any) -> None:
    memory = sub.add_parser("memory", help="the chat memory")
    verbs = memory.add_subparsers(dest="verb", required=False, parser_class=type(memory))
    memory.set_defaults(verbs=verbs)  # eukhe.commands.memory_store adds the store's verbs here
    simulate = verbs.add_parser("simulate", help="run the planner on synthetic message sizes")
    simulate.add_argument("--messages", type=_count, required=True, help="how many messages")
    simulate.add_argument("--png", type=Path, help="draw the sawtooth to this PNG file")
    simulate.add_argument("--seed", type=int, default=2026, help="the seed of the synthetic sizes")
    simulate.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from eukhe.cli import UsageError
    from eukhe.memory.simulate import picture, simulate

    png: Path | None = args.png
    if png is not None:
        if png.suffix.lower() != ".png":
            raise UsageError(f"eukhe memory simulate: --png wants a .png file, not {str(png)!r}")
        if not png.parent.resolve().is_dir():
            raise UsageError(f"eukhe memory simulate: --png: no directory {str(png.parent)!r}")
    result = simulate(args.messages, args.seed)
    print(json.dumps(result.stats(), indent=1))
    if png is not None:
        picture(result, str(png))
        print(f"sawtooth written to {png}")
    return 0
