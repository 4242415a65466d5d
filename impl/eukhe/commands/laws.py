"""`eukhe laws`: run every law in process and print the same table as `make laws`. Exits 1
when a law fails, 2 for an unknown area.

On a terminal a progress bar per area (rich) shows each law as it runs and the table fits the
terminal's width; otherwise (a pipe, a log, CI) one plain line per law as it ends.
`--report` also writes the review pages (build/report/) as `make laws` does."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any


def register(sub: Any) -> None:
    laws = sub.add_parser("laws", help="run every law and print the law table (as `make laws`)")
    laws.add_argument("--area", action="append", help="only the laws of this area, such as effort or session (repeatable)")
    laws.add_argument("--laws-dir", default="build", help="where laws.json and laws.html go (default build)")
    laws.add_argument("--report", action="store_true", help="also write the review pages (LAWS_DIR/report/index.html)")
    laws.add_argument(
        "verb", nargs="*", metavar="pin LAW",
        help="pin LAW: write the failing examples the hunt's database holds for LAW into its file as explicit examples",
    )
    laws.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    # The workbench, not the product: imported only when the command runs.

    from spec import manifest, profiles, registry, report

    from eukhe.cli import UsageError
    from eukhe.commands.progress_bar import is_terminal

    profiles.load()
    if args.verb:
        return _pin(args.verb, UsageError)
    every = registry.load()
    known = sorted({law.area for law in every} | {entry.area for entry in manifest.load()})
    unknown = [area for area in args.area or [] if area not in known]
    if unknown:
        raise UsageError(f"no laws in area {', '.join(map(repr, unknown))}; the areas are {', '.join(known)}")
    selected = [law for law in every if not args.area or law.area in args.area]
    terminal = is_terminal(sys.stdout)
    console = report.make_console()
    results = _run_all(selected, console) if terminal else _run_plain(selected)
    table = report.rows(manifest.load(), every, results)
    if args.area:
        table = [r for r in table if r.area in args.area]
    report.print_table(table, console)
    report.write(table, Path(args.laws_dir))
    if args.report:
        print(f"review report written to {report.review(Path(args.laws_dir))}")
    return 1 if report.failed(table) else 0


def _pin(words: list[str], usage: Any) -> int:
    from spec import hunt

    if len(words) != 2 or words[0] != "pin":
        raise usage(f"unknown words {' '.join(words)!r}: the only verb is `eukhe laws pin LAW`")
    try:
        path, lines = hunt.pin(words[1])
    except KeyError:
        raise usage(f"no law {words[1]!r} (name or area/name)") from None
    where = os.environ.get(hunt.DB_ENV) or "the directory .hypothesis/examples"
    if not lines:
        print(f"{words[1]}: no new failing example in {where}")
        return 1
    print(f"{words[1]}: pinned {len(lines)} example(s) in {path}:")
    for line in lines:
        print(f"  {line}")
    return 0


def _by_area(laws: list[Any]) -> dict[str, list[Any]]:
    grouped: dict[str, list[Any]] = {}
    for law in laws:
        grouped.setdefault(law.area, []).append(law)
    return grouped


def _run_plain(laws: list[Any]) -> dict[str, Any]:
    """One line per law as it ends: area, count, name, status, seconds (for logs and pipes)."""
    from spec import report

    results = {}
    for area, members in _by_area(laws).items():
        for number, law in enumerate(members, 1):
            result = report.run(law)
            results[law.key] = result
            print(f"{area} {number}/{len(members)} {law.name} {result.status} ({result.seconds:.2f} s)", flush=True)
    return results


def _run_all(laws: list[Any], console: Any) -> dict[str, Any]:
    """A rich progress bar per area; the law running shows beside its area's bar."""
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

    from eukhe.commands.progress_bar import terminal_bar
    from spec import report

    results = {}
    columns = (
        TextColumn("{task.fields[area]:<14}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[now]}"),
    )
    with terminal_bar(*columns, console=console, transient=False) as progress:
        grouped = _by_area(laws)
        tasks = {area: progress.add_task(area, total=len(members), area=area, now="", start=False) for area, members in grouped.items()}
        for area, members in grouped.items():
            task = tasks[area]
            progress.start_task(task)
            failed = 0
            for law in members:
                progress.update(task, now=law.name)
                result = report.run(law)
                results[law.key] = result
                failed += result.status != report.PASS
                progress.advance(task)
            progress.update(task, now=f"[red]{failed} failed[/]" if failed else "[green]all pass[/]")
            progress.stop_task(task)
    return results
