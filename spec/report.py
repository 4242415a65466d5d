"""Running laws and the law-by-law report: the table, build/laws.json and build/laws.html.

``run`` executes one law and turns its outcome into a ``Result``; ``rows`` joins the
manifest, the registry and the results into one row per law; ``print_table`` and ``write``
render those rows. pytest (tests/laws) and ``eukhe laws`` both go through here, so they
print the same table.
"""

from __future__ import annotations

import html
import json
import time
import traceback
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from spec import manifest, profiles
from spec.registry import Law, StrengthError

PASS, FAIL, MISSING, PENDING = "pass", "fail", "missing", "pending"


@dataclass(frozen=True)
class Result:
    key: str
    status: str
    evidence: str
    seconds: float
    production: str = ""  # the strength of the same law run on production, when it is


def run(law: Law) -> Result:
    """Run one law: pass with its evidence, or fail with the counterexample or error."""
    start = time.perf_counter()
    try:
        evidence = law.admit(law.check())
    except StrengthError as refused:
        return Result(law.key, FAIL, str(refused), time.perf_counter() - start)
    except AssertionError as failure:
        detail = str(failure).strip() or traceback.format_exc(limit=-3)
        return Result(law.key, FAIL, detail.splitlines()[0] if detail else "failed", time.perf_counter() - start)
    except Exception as error:  # a law that crashes fails; the report names the error
        return Result(law.key, FAIL, f"{type(error).__name__}: {error}", time.perf_counter() - start)
    production = evidence.production.value if evidence.production else ""
    return Result(law.key, PASS, evidence.sentence, time.perf_counter() - start, production)


@dataclass(frozen=True)
class Row:
    area: str
    name: str
    section: str
    strength: str
    status: str
    evidence: str
    says: str
    origin: str
    seconds: float
    seed_strength: str = ""  # what the seed asks: universal, or bounded with the inputs it names
    production: str = ""  # the strength of the same law run on production, when it is


def rows(entries: list[manifest.Entry], laws: Iterable[Law], results: dict[str, Result]) -> list[Row]:
    """One row per registered law and per manifest entry no law stands for.

    Registered laws appear in manifest order; laws of areas or names the manifest does not
    hold (derived by the project) follow their area with origin ``derived``.
    """
    by_area: dict[str, list[Law]] = {}
    for law in laws:
        by_area.setdefault(law.area, []).append(law)
    out: list[Row] = []
    placed: set[str] = set()
    area_order = manifest.areas(entries) + [a for a in by_area if a not in manifest.areas(entries)]
    for area in area_order:
        built = area in manifest.BUILT or area not in manifest.areas(entries)
        for entry in (e for e in entries if e.area == area):
            members = [law for law in by_area.get(area, []) if entry.covers(area, law.name)]
            for law in members:
                placed.add(law.key)
                out.append(_row(law, results, "derived" if entry.derived else entry.origin, built, entry.seed_strength))
            if not members:
                status = MISSING if built else PENDING
                detail = "no property registered" if built else "area not built yet"
                out.append(
                    Row(area, entry.name, entry.section, "", status, detail, "", entry.origin, 0.0, entry.seed_strength)
                )
        for law in by_area.get(area, []):
            if law.key not in placed:
                placed.add(law.key)
                out.append(_row(law, results, "derived", built, ""))
    return out


def _row(law: Law, results: dict[str, Result], origin: str, built: bool, seed_strength: str) -> Row:
    result = results.get(law.key)
    if result is None:
        status, evidence, seconds, production = (PENDING if not built else MISSING), "not run", 0.0, ""
    else:
        status, evidence, seconds, production = result.status, result.evidence, result.seconds, result.production
    if law.derivation:
        origin = f"derived: {law.derivation}"
    return Row(
        law.area, law.name, law.section, law.strength.value, status, evidence, law.says, origin, seconds,
        seed_strength, production,
    )


def failed(table: list[Row]) -> list[Row]:
    return [r for r in table if r.status in (FAIL, MISSING)]


def summary(table: list[Row]) -> dict[str, int]:
    return dict(sorted(Counter(r.status for r in table).items()))


_STYLE = {PASS: "green", FAIL: "bold red", MISSING: "bold red", PENDING: "dim"}


def print_table(table: list[Row], console: Console | None = None) -> None:
    console = console or Console(width=160)
    view = Table(title=f"eukhe laws (Hypothesis profile {profiles.active()})", show_lines=False)
    for column in ("area", "law", "strength", "evidence", "result"):
        view.add_column(column, overflow="fold")
    for r in table:
        view.add_row(r.area, r.name, r.strength, r.evidence, f"[{_STYLE[r.status]}]{r.status}[/]")
    console.print(view)
    console.print(", ".join(f"{status} {count}" for status, count in summary(table).items()))


def write(table: list[Row], directory: Path) -> None:
    """Write build/laws.json and build/laws.html."""
    directory.mkdir(parents=True, exist_ok=True)
    document = {
        "laws": [asdict(r) for r in table],
        "summary": summary(table),
        "profile": profiles.active(),
        "built_areas": sorted(manifest.BUILT),
    }
    (directory / "laws.json").write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    cells = "".join(
        "<tr class='{s}'><td>{a}</td><td title='{t}'>{n}</td><td>{sec}</td><td>{st}</td><td>{e}</td>"
        "<td>{o}</td><td>{s}</td></tr>\n".format(
            s=r.status,
            a=html.escape(r.area),
            t=html.escape(r.says, quote=True),
            n=html.escape(r.name),
            sec=html.escape(r.section),
            st=html.escape(r.strength),
            e=html.escape(r.evidence),
            o=html.escape(r.origin),
        )
        for r in table
    )
    counts = html.escape(", ".join(f"{k} {v}" for k, v in summary(table).items()))
    (directory / "laws.html").write_text(
        "<!doctype html><meta charset='utf-8'><title>eukhe laws</title>\n"
        "<style>body{font-family:sans-serif}td{padding:2px 8px;border-bottom:1px solid #ddd}"
        ".pass td:last-child{color:green}.fail td:last-child,.missing td:last-child{color:red;font-weight:bold}"
        ".pending{color:#999}</style>\n"
        f"<h1>eukhe laws</h1><p>Hypothesis profile {html.escape(profiles.active())}: {counts}</p>\n"
        "<table><tr><th>area</th><th>law</th><th>section</th><th>strength</th><th>evidence</th>"
        f"<th>origin</th><th>result</th></tr>\n{cells}</table>\n",
        encoding="utf-8",
    )
