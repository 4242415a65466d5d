"""`make crosshair`: CrossHair on the models and on model/production pairs.

1. ``crosshair check`` on every bend/ module: the PEP 316 contracts (``pre:``/``post:`` in
   docstrings) with a per-condition time budget (a correct function spends all of it).
2. ``crosshair diffbehavior`` on each registered pair (an area's law module lists them as
   ``CROSSHAIR_PAIRS``), with an explicit timeout: its default gives up after well under a
   second and misses real differences.

Never part of `make test`. python -m spec.crosshair [--timeout SECONDS] [--area AREA]
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def pairs(areas: list[str] | None) -> list[tuple[str, str]]:
    import spec.laws as package

    found: list[tuple[str, str]] = []
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if areas and info.name not in areas:
            continue
        found.extend(getattr(importlib.import_module(f"spec.laws.{info.name}"), "CROSSHAIR_PAIRS", ()))
    return found


def models(areas: list[str] | None) -> list[str]:
    import bend

    found = []
    for info in pkgutil.walk_packages(bend.__path__, "bend."):
        parts = info.name.split(".")
        if any(part.startswith("_") for part in parts) or (areas and parts[1] not in areas):
            continue  # __main__ modules run on import: they are entry points, not models
        found.append(info.name)
    return sorted(found)


def _crosshair(*args: str) -> tuple[int, str]:
    done = subprocess.run([sys.executable, "-m", "crosshair", *args], cwd=ROOT, capture_output=True, text=True, check=False)
    return done.returncode, (done.stdout + done.stderr).strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m spec.crosshair", description=__doc__)
    parser.add_argument("--timeout", type=float, default=5.0, help="per-condition timeout in seconds")
    parser.add_argument("--area", action="append", help="only this area (repeatable)")
    args = parser.parse_args(argv)
    budget = f"--per_condition_timeout={args.timeout}"
    failed = 0
    for module in models(args.area):
        code, out = _crosshair("check", budget, "--report_all", module)
        confirmed = out.count("Confirmed over all paths")
        unconfirmed = out.count("Not confirmed")
        errors = [line for line in out.splitlines() if ": error:" in line]
        verdict = "counterexample" if code == 1 else ("error" if code else "no counterexample")
        print(f"check {module}: {verdict}; {confirmed} conditions confirmed over all paths, {unconfirmed} unrefuted within {args.timeout}s")
        for line in errors:
            print(f"  {line}")
        failed += code != 0
    for model_fn, production_fn in pairs(args.area):
        code, out = _crosshair("diffbehavior", budget, model_fn, production_fn)
        print(f"diffbehavior {model_fn} vs {production_fn}: {out.splitlines()[0] if out else code}")
        if code != 0:
            print("  " + out.replace("\n", "\n  "))
        failed += code != 0
    print(f"crosshair: {failed} finding(s)")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
