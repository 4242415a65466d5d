"""`make mutants`: apply every named deliberate break in turn, each in its own test run, and
print which laws, bridges or regression tests caught it. A break nothing catches fails the run.

python -m spec.mutants [--area AREA] [NAME ...]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from spec import breaks

ROOT = Path(__file__).resolve().parent.parent
# The laws, bridges and regression tests of a break's area: every test whose name (module
# and folder included) holds the area, as `pytest -k AREA` selects them.
SUITES = ["tests"]


@dataclass(frozen=True)
class Outcome:
    brk: breaks.Break
    caught_by: tuple[str, ...]
    problem: str = ""


def _check_applies(brk: breaks.Break) -> None:
    """The snippet must occur exactly once in the module's source, or the run would prove nothing."""
    found = importlib.util.find_spec(brk.module)
    if found is None or found.origin is None:
        raise breaks.BreakError(f"break {brk.name}: no module {brk.module}")
    breaks.patched_source(brk, Path(found.origin).read_text(encoding="utf-8"))


def _short(nodeid: str) -> str:
    match = re.search(r"\[(.+)\]$", nodeid)
    test = nodeid.split("::")[-1].split("[")[0]
    if "test_law[" in nodeid and match:
        return match.group(1).split("/", 1)[-1]
    return f"{test}[{match.group(1)}]" if match else test


def run_one(brk: breaks.Break) -> Outcome:
    try:
        _check_applies(brk)
    except breaks.BreakError as error:
        return Outcome(brk, (), str(error))
    with tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, **{breaks.ENV: brk.name})
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *SUITES, "-k", brk.area, "--laws-dir", out],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        failures_file = Path(out) / "failures.json"
        failed: list[str] = json.loads(failures_file.read_text()) if failures_file.exists() else []
    if done.returncode not in (0, 1):
        tail = (done.stdout + done.stderr).strip().splitlines()[-3:]
        return Outcome(brk, (), f"test run broke (exit {done.returncode}): {' | '.join(tail)}")
    return Outcome(brk, tuple(_short(n) for n in failed))


def write(outcomes: list[Outcome], path: Path) -> None:
    """build/mutants.json: each break run and the laws and tests that caught it (names as printed:
    a law by its name, a test as test[param]); the law report shows them beside each law."""
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "breaks": [
            {
                "name": o.brk.name,
                "area": o.brk.area,
                "module": o.brk.module,
                "why": o.brk.why,
                "caught_by": list(o.caught_by),
                "problem": o.problem,
            }
            for o in outcomes
        ]
    }
    if path.exists():  # a partial run (--area, names) keeps the other breaks' last results
        try:
            kept = [b for b in json.loads(path.read_text(encoding="utf-8"))["breaks"] if b["name"] not in {o.brk.name for o in outcomes}]
        except (ValueError, KeyError, TypeError):
            kept = []
        document["breaks"] = kept + document["breaks"]
    path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m spec.mutants", description=__doc__)
    parser.add_argument("--area", action="append", help="only breaks of this area (repeatable)")
    parser.add_argument("names", nargs="*", help="only these breaks")
    parser.add_argument("--out", default=str(ROOT / "build" / "mutants.json"), help="the result file the law report reads")
    args = parser.parse_args(argv)
    selected = [
        b for b in breaks.all_breaks() if (not args.area or b.area in args.area) and (not args.names or b.name in args.names)
    ]
    if not selected:
        print("mutants: no break selected", file=sys.stderr)
        return 2
    console = Console(width=160)
    outcomes = []
    for brk in selected:
        outcome = run_one(brk)
        outcomes.append(outcome)
        verdict = "caught" if outcome.caught_by else "NOT CAUGHT"
        console.print(f"{brk.area}/{brk.name}: {verdict} {', '.join(outcome.caught_by[:4])}{outcome.problem}")
    table = Table(title="named deliberate breaks")
    for column in ("area", "break", "what it breaks", "caught by"):
        table.add_column(column, overflow="fold")
    for o in outcomes:
        caught = ", ".join(o.caught_by) if o.caught_by else f"[bold red]NOT CAUGHT[/] {o.problem}"
        table.add_row(o.brk.area, o.brk.name, o.brk.why, caught)
    console.print(table)
    missed = [o for o in outcomes if not o.caught_by]
    write(outcomes, Path(args.out))
    from spec import report

    report.refresh(Path(args.out).parent)  # the review report shows which laws caught which break
    console.print(f"{len(outcomes) - len(missed)} of {len(outcomes)} breaks caught")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
