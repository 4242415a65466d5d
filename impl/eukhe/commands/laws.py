"""`eukhe laws`: run every law in process and print the same table as `make laws`. Exits 1
when a law fails, 2 for an unknown area."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def register(sub: Any) -> None:
    laws = sub.add_parser("laws", help="run every law and print the law table (as `make laws`)")
    laws.add_argument("--area", action="append", help="only the laws of this area, such as effort or session (repeatable)")
    laws.add_argument("--laws-dir", default="build", type=Path, help="where laws.json and laws.html go (default build)")
    laws.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    # The workbench, not the product: imported only when the command runs.
    from spec import manifest, profiles, registry, report

    from eukhe.cli import UsageError

    profiles.load()
    known = sorted({law.area for law in registry.load()} | {entry.area for entry in manifest.load()})
    unknown = [area for area in args.area or [] if area not in known]
    if unknown:
        raise UsageError(f"no laws in area {', '.join(map(repr, unknown))}; the areas are {', '.join(known)}")
    selected = [law for law in registry.load() if not args.area or law.area in args.area]
    results = {law.key: report.run(law) for law in selected}
    table = report.rows(manifest.load(), registry.load(), results)
    if args.area:
        table = [r for r in table if r.area in args.area]
    report.print_table(table)
    report.write(table, args.laws_dir)
    return 1 if report.failed(table) else 0
