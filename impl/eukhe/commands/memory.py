"""`eukhe memory simulate --messages N [--png FILE] [--cache [--plot FILE.svg]]`: run the planner
on synthetic sizes and print view and compaction view statistics (lines, bytes, merges per batch,
rewritten lines per message); ``--png`` draws the sawtooth of both views' bytes against messages;
``--cache`` also measures the prompt-cache shares against the loopback server
(``eukhe.commands.memory_cache``) and ``--plot`` draws them."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the cache measure is imported only when asked for (--cache)
    from eukhe.commands.memory_cache import Shares
    from eukhe.commands.memory_simulate import Run

MAX_MESSAGES = 10_000_000


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--messages wants a whole number, not {text!r}") from None
    if not 1 <= value <= MAX_MESSAGES:
        raise argparse.ArgumentTypeError(f"--messages must be between 1 and {MAX_MESSAGES:,}, not {value}")
    return value


def _seed(text: str) -> int:
    body = text[1:] if text.startswith("-") else text
    if not (body.isascii() and body.isdigit()) or len(body) > 100:
        raise argparse.ArgumentTypeError(f"--seed wants a whole number of at most 100 digits, not {text[:40]!r}")
    return int(text)


def register(sub: Any) -> None:
    memory = sub.add_parser("memory", help="the chat memory")
    verbs = memory.add_subparsers(dest="verb", required=False, parser_class=type(memory), metavar="VERB")
    memory.set_defaults(verbs=verbs)  # eukhe.commands.memory_store adds the store's verbs here
    simulate = verbs.add_parser("simulate", help="run the planner on synthetic message sizes")
    simulate.add_argument("--messages", type=_count, required=True, help=f"how many messages (1 to {MAX_MESSAGES:,})")
    simulate.add_argument("--png", help="draw the sawtooth to this .png file (needs matplotlib)")
    simulate.add_argument("--seed", type=_seed, default=2026, help="the seed of the synthetic sizes (a whole number, default 2026)")
    simulate.add_argument(
        "--cache",
        action="store_true",
        help="also run the chat against a loopback model server that accounts prompt-cache reads at the cache marks "
        "(live compactor, a turn per user message) and print the shares of input read from cache and why the rest was not",
    )
    simulate.add_argument("--plot", help="with --cache: draw the cache-read shares and rewritten lines per message to this .svg file")
    simulate.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from eukhe.cli import EnvironmentFault, UsageError, show_path
    from eukhe.commands.memory_simulate import PictureError, picture, require_matplotlib, simulate
    from eukhe.commands.progress_bar import step, terminal_bar

    png = None if args.png is None else Path(args.png)  # a str until checked: "" is refused, never "."
    if png is not None:
        shown = show_path(png)
        if png.is_dir():
            raise UsageError(f"--png {shown} is a directory; name a .png file")
        if png.suffix.lower() != ".png":
            raise UsageError(f"--png wants a .png file, not {shown!r}")
        if not png.parent.resolve().is_dir():
            raise UsageError(f"--png: no directory {show_path(png.parent)!r}")
        try:
            require_matplotlib()
        except PictureError as error:
            raise EnvironmentFault(f"--png: {error}") from None
    plot = None if getattr(args, "plot", None) is None else Path(args.plot)
    if plot is not None:
        shown = show_path(plot)
        if not getattr(args, "cache", False):
            raise UsageError("--plot draws the cache measure; add --cache")
        if plot.is_dir() or plot.suffix.lower() != ".svg":
            raise UsageError(f"--plot wants an .svg file, not {shown!r}")
        if not plot.parent.resolve().is_dir():
            raise UsageError(f"--plot: no directory {show_path(plot.parent)!r}")
    cache = bool(getattr(args, "cache", False))
    shares: Shares | None = None
    with terminal_bar() as bar:  # on a terminal only: a pipe gets the same bytes as without it
        result = simulate(args.messages, args.seed, step=step(bar, bar.add_task("simulate", total=args.messages)))
        if cache:
            from eukhe.commands.memory_cache import MeasureError, measure

            try:
                shares = measure(args.messages, args.seed, step=step(bar, bar.add_task("cache", total=args.messages)))
            except MeasureError as error:
                raise EnvironmentFault(f"--cache: {error}") from None
    # What follows the measure runs in a call of its own: under Python 3.11's tracing, the cache
    # measure's event loop (a cancellation thrown into anyio's connect) leaves the frames that
    # called it unmeasured by coverage for the rest of their run.
    return _report(result, shares, plot, png, args.seed)


def _report(result: Run, shares: Shares | None, plot: Path | None, png: Path | None, seed: int) -> int:
    """Print the statistics (with the cache measure's, when ``shares``), draw ``plot`` and ``png``."""
    from eukhe.cli import EnvironmentFault, show_path
    from eukhe.commands.memory_simulate import PictureError, picture

    stats = result.stats()
    if shares is not None:
        from eukhe.commands.memory_cache import svg

        stats["cache"] = shares.stats()
        if plot is not None:
            try:
                plot.write_text(svg(shares, seed), encoding="utf-8")
            except OSError as error:
                raise EnvironmentFault(f"--plot: cannot write {show_path(plot)}: {error.strerror or error}") from None
    print(json.dumps(stats, indent=1))
    if plot is not None:
        print(f"cache shares drawn to {plot}")
    if png is not None:
        try:
            picture(result, str(png))
        except PictureError as error:
            raise EnvironmentFault(f"--png: {error}") from None
        print(f"sawtooth written to {png}")
    return 0
