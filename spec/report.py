"""Running laws and the law-by-law report: the table, build/laws.json and build/laws.html.

``run`` executes one law and turns its outcome into a ``Result``; ``rows`` joins the
manifest, the registry and the results into one row per law; ``print_table`` and ``write``
render those rows. pytest (tests/laws) and ``eukhe laws`` both go through here, so they
print the same table.
"""

from __future__ import annotations

import functools

import html
import json
import os
import time
import traceback
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from spec import manifest, profiles
from spec.binding import FLOOR, LAWS_AND_BRIDGES
from spec.registry import STRENGTHS, Law, Strength, StrengthError

BREAK_ENV = "EUKHE_BREAK"  # spec.breaks.ENV, named here so the report needs no break machinery
PASS, FAIL, MISSING, PENDING = "pass", "fail", "missing", "pending"


@dataclass(frozen=True)
class Result:
    key: str
    status: str
    evidence: str
    seconds: float
    production: str = ""  # the strength of the same law run on production, when it is
    detail: str = ""  # on failure: the whole message (counterexample, Hypothesis' falsifying example)
    proofs: tuple[dict[str, object], ...] = ()  # what each proof covers: object, z3 claim, non-vacuity checks


def _detail(error: BaseException) -> str:
    """The whole failure message with the notes Hypothesis adds (the falsifying example)."""
    text = str(error).strip()
    notes = [str(n) for n in getattr(error, "__notes__", ()) or ()]
    return "\n".join([text, *notes]).strip() or traceback.format_exc(limit=-3)


def run(law: Law) -> Result:
    """Run one law: pass with its evidence, or fail with the counterexample or error."""
    from spec.evidence import running

    running(law.name)
    start = time.perf_counter()
    try:
        evidence = law.admit(law.check())
    except StrengthError as refused:
        return Result(law.key, FAIL, str(refused), time.perf_counter() - start, detail=str(refused))
    except AssertionError as failure:
        detail = str(failure).strip() or traceback.format_exc(limit=-3)
        return Result(
            law.key, FAIL, detail.splitlines()[0] if detail else "failed", time.perf_counter() - start, detail=_detail(failure)
        )
    except Exception as error:  # a law that crashes fails; the report names the error
        return Result(
            law.key, FAIL, f"{type(error).__name__}: {error}", time.perf_counter() - start,
            detail=f"{type(error).__name__}: {_detail(error)}",
        )
    production = evidence.production.value if evidence.production else ""
    proofs: tuple[dict[str, object], ...] = tuple(
        {"object": p.object, "claim": p.claim, "checks": list(p.checks)} for p in evidence.proofs
    )
    return Result(law.key, PASS, evidence.sentence, time.perf_counter() - start, production, proofs=proofs)


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
    detail: str = ""  # on failure: the whole message, counterexample included
    proofs: tuple[dict[str, object], ...] = ()  # what each proof covers (Result.proofs)
    unproved: str = ""  # a universal law not proved: why a proof about the code is out of reach (spec/unproved.tsv)


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
        area_built = area in manifest.BUILT or area not in manifest.areas(entries)
        for entry in (e for e in entries if e.area == area):
            built = area_built and manifest.is_built(area, entry.name) if area in manifest.BUILT else area_built
            members = [law for law in by_area.get(area, []) if entry.covers(area, law.name)]
            for law in members:
                placed.add(law.key)
                out.append(_row(law, results, "derived" if entry.derived else entry.origin, built, entry.seed_strength))
            if not members:
                status = MISSING if built else PENDING
                later = manifest.LATER.get(area, {}).get(entry.name)
                detail = "no property registered" if built else (f"built in {later}" if later else "area not built yet")
                out.append(
                    Row(area, entry.name, entry.section, "", status, detail, "", entry.origin, 0.0, entry.seed_strength)
                )
        for law in by_area.get(area, []):
            if law.key not in placed:
                placed.add(law.key)
                out.append(_row(law, results, "derived", area_built, ""))
    return out


def _row(law: Law, results: dict[str, Result], origin: str, built: bool, seed_strength: str) -> Row:
    result = results.get(law.key)
    proofs: tuple[dict[str, object], ...] = ()
    if result is None:
        status, evidence, seconds, production, detail = (PENDING if not built else MISSING), "not run", 0.0, "", ""
    else:
        status, evidence, seconds, production, detail, proofs = (
            result.status, result.evidence, result.seconds, result.production, result.detail, tuple(result.proofs)
        )
    if law.derivation:
        origin = f"derived: {law.derivation}"
    return Row(
        law.area, law.name, law.section, law.strength.value, status, evidence, law.says, origin, seconds,
        seed_strength, production, detail, proofs, _UNPROVED().get((law.area, law.name), ""),
    )


@functools.cache
def _UNPROVED() -> dict[tuple[str, str], str]:  # noqa: N802 (read once, like a constant)
    return manifest.unproved()


def failed(table: list[Row]) -> list[Row]:
    return [r for r in table if r.status in (FAIL, MISSING)]


def summary(table: list[Row]) -> dict[str, int]:
    return dict(sorted(Counter(r.status for r in table).items()))


_STYLE = {PASS: "green", FAIL: "bold red", MISSING: "bold red", PENDING: "dim"}


def make_console() -> Console:
    """On a terminal, its width; otherwise (a log, a pipe, CI) 160 columns."""
    import sys

    return Console() if sys.stdout.isatty() else Console(width=160)


def print_table(table: list[Row], console: Console | None = None) -> None:
    console = console or make_console()
    view = Table(title=f"eukhe laws (Hypothesis profile {profiles.active()})", show_lines=False)
    for column in ("area", "law", "seed asks", "strength", "evidence", "result"):
        view.add_column(column, overflow="fold")
    for r in table:
        view.add_row(r.area, r.name, r.seed_strength, r.strength, r.evidence, f"[{_STYLE[r.status]}]{r.status}[/]")
    console.print(view)
    console.print(", ".join(f"{status} {count}" for status, count in summary(table).items()))
    for area, entry in area_counts(table).items():
        strengths = entry["strength"]
        assert isinstance(strengths, dict)
        line = f"{area}: " + ", ".join(f"{STRENGTH_NAMES[s]} {strengths.get(s.value, 0)}" for s in STRENGTHS)
        if entry["universal"]:
            line += f"; {entry['universal_proved']} of {entry['universal']} universal laws proved"
        console.print(line)
    universal = [r for r in table if r.seed_strength == "universal" and r.status != PENDING]
    proved = sum(1 for r in universal if r.strength == Strength.PROVED.value and r.status == PASS)
    console.print(
        f"universal laws: {proved} of {len(universal)} proved about the code; each of the other "
        f"{len(universal) - proved} says why a proof is out of reach today (spec/unproved.tsv, its page: why not proved)"
    )


# How the table and the report name each strength (the per-area counts of `make laws`).
STRENGTH_NAMES = {
    Strength.PROVED: "honest proofs",
    Strength.PROVED_FOR_ENCODING: "proofs for an encoding",
    Strength.BOUNDED: "bounded",
    Strength.TESTED: "tested",
}


def area_counts(table: list[Row]) -> dict[str, dict[str, object]]:
    """Per area: laws by status and by strength, and how many of the seed's universal laws
    are proved (the seed's strength beside ours)."""
    areas: dict[str, dict[str, object]] = {}
    for r in table:
        entry = areas.setdefault(r.area, {"status": Counter(), "strength": Counter(), "universal": 0, "universal_proved": 0})
        entry["status"][r.status] += 1  # type: ignore[index]
        if r.strength:
            entry["strength"][r.strength] += 1  # type: ignore[index]
        if r.seed_strength == "universal" and r.status != PENDING:
            entry["universal"] = int(entry["universal"]) + 1  # type: ignore[call-overload]
            if r.strength == Strength.PROVED.value and r.status == PASS:
                entry["universal_proved"] = int(entry["universal_proved"]) + 1  # type: ignore[call-overload]
    return {a: {k: dict(sorted(v.items())) if isinstance(v, Counter) else v for k, v in e.items()} for a, e in areas.items()}


def _measure(directory: Path, name: str) -> dict[str, object] | None:
    path = directory / name
    if not path.exists():
        return None
    loaded: dict[str, object] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


RECORDED_MUTATION = Path(__file__).resolve().parent / "mutation_scores.json"


def recorded_mutation() -> dict[str, object] | None:
    """The mutation scores measured by `make mutate` and committed (spec/mutation_scores.json),
    each area marked with the commit it was measured at: make mutate is not part of CI."""
    if not RECORDED_MUTATION.exists():
        return None
    loaded: dict[str, object] = json.loads(RECORDED_MUTATION.read_text(encoding="utf-8"))
    return loaded


def mutation_measure(area: dict[str, object]) -> str:
    """An area's mutation score, the estimate of a whole run ended by a draw from the rest, or the
    kill rate of a seeded sample named as a sample (plain text)."""
    if "score" in area:
        return f"{area['score']}%"
    estimated = area.get("estimate")
    if isinstance(estimated, dict):
        low, high = estimated["score_wilson95_percent"]
        census, rest = estimated["census"], estimated["rest"]
        return (
            f"estimated {estimated['score_estimate']}%, 95% interval {low}-{high}% (exact over the {census['judged']} "
            f"judged, {census['killed']} killed; the other {rest['mutants']} from a uniform draw of {rest['drawn']}, "
            f"{rest['killed']} of {rest['judged']} killed: {area.get('rest', '')})"
        )
    interval = area.get("sample_wilson95_percent")
    wilson = f", 95% Wilson interval {interval[0]}-{interval[1]}%" if isinstance(interval, list) else ""
    caveat = f"; {area['sample_caveat']}" if area.get("sample_caveat") else ""
    return f"sample: {area['sample_killed_percent']}% killed{wilson} ({area['sample']}{caveat})"


def _mutation_measure(area: dict[str, object]) -> str:
    return html.escape(mutation_measure(area))


def _modules_below(coverage: dict[str, object], area: str) -> str:
    """The area's modules under the coverage floor, each with its percentage ("none" when every
    module meets it; "" for a record written before modules were measured)."""
    modules = coverage.get("modules")
    if not isinstance(modules, list):
        return ""
    floor = coverage.get("floor", FLOOR)
    below = [f"{m['module']} {m['percent']}%" for m in modules if m["area"] == area and m["percent"] < floor]
    return ", ".join(below) or "none"


def write(table: list[Row], directory: Path, profile: str | None = None) -> None:
    """Write build/laws.json and build/laws.html, with the binding measures when present
    (build/coverage.json from `make test`, build/mutation.json from `make mutate`)."""
    directory.mkdir(parents=True, exist_ok=True)
    coverage, mutation = _measure(directory, "coverage.json"), _measure(directory, "mutation.json")
    recorded = recorded_mutation()
    areas = area_counts(table)
    document = {
        "laws": [asdict(r) for r in table],
        "summary": summary(table),
        "profile": profile or profiles.active(),
        "built_areas": sorted(manifest.BUILT),
        "areas": areas,
        "coverage": coverage,
        "mutation": mutation,
        "mutation_recorded": recorded,
    }
    if os.environ.get(BREAK_ENV):  # a run under a named break: the report's replay command names it
        document["break"] = os.environ[BREAK_ENV]
    (directory / "laws.json").write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    cells = "".join(
        "<tr class='{s}'><td>{a}</td><td title='{t}'>{n}</td><td>{sec}</td><td>{seed}</td><td>{st}</td><td>{p}</td>"
        "<td>{e}</td><td>{o}</td><td>{s}</td></tr>\n".format(
            s=r.status,
            a=html.escape(r.area),
            t=html.escape(r.says, quote=True),
            n=html.escape(r.name),
            sec=html.escape(r.section),
            seed=html.escape(r.seed_strength),
            st=html.escape(r.strength),
            p=html.escape(r.production),
            e=html.escape(r.evidence),
            o=html.escape(r.origin),
        )
        for r in table
    )
    area_cells = "".join(
        "<tr><td>{a}</td><td>{st}</td><td>{sg}</td><td>{p} of {u}</td></tr>\n".format(
            a=html.escape(area),
            st=html.escape(", ".join(f"{k} {v}" for k, v in e["status"].items())),  # type: ignore[attr-defined]
            sg=html.escape(", ".join(f"{k} {v}" for k, v in e["strength"].items())),  # type: ignore[attr-defined]
            p=e["universal_proved"],
            u=e["universal"],
        )
        for area, e in areas.items()
    )
    binding = ""
    if coverage:
        binding += "<h2>Coverage of production by its judges: laws and bridges alone, or (an area the seeds give no model) its own</h2>"
        binding += "<table><tr><th>area</th><th>branch coverage</th><th>judged by</th><th>modules below the floor</th></tr>"
        binding += "".join(
            f"<tr><td>{html.escape(str(a['area']))}</td><td>{a['percent']}%</td><td>{html.escape(str(a.get('judges', LAWS_AND_BRIDGES)))}</td>"
            f"<td>{html.escape(_modules_below(coverage, str(a['area'])))}</td></tr>"
            for a in coverage["areas"]  # type: ignore[attr-defined]
        )
        binding += "</table>\n"
    if mutation:
        binding += "<h2>Mutation score (mutmut)</h2><table><tr><th>area</th><th>killed</th><th>survived</th><th>equivalent</th><th>score</th></tr>"
        binding += "".join(
            f"<tr><td>{html.escape(str(a['area']))}</td><td>{a['killed']}</td><td>{a['survived']}</td>"
            f"<td>{a['equivalent']}</td><td>{_mutation_measure(a)}</td></tr>"
            for a in mutation["areas"]  # type: ignore[attr-defined]
        )
        binding += "</table>\n"
    if recorded:
        binding += (
            "<h2>Mutation score recorded (spec/mutation_scores.json)</h2>"
            f"<p>{html.escape(str(recorded.get('note', '')))}</p>"
            "<table><tr><th>area</th><th>modules</th><th>measured at commit</th><th>judges</th><th>mutants</th><th>killed</th>"
            "<th>survived</th><th>equivalent</th><th>no tests</th><th>score</th></tr>"
        )
        binding += "".join(
            f"<tr><td>{html.escape(str(a['area']))}</td><td>{html.escape(', '.join(a.get('modules', [])))}</td>"
            f"<td>{html.escape(str(a['commit']))}</td><td>{html.escape(str(a['judges']))}</td><td>{a['mutants']}</td>"
            f"<td>{a['killed']}</td><td>{a['survived']}</td><td>{a['equivalent']}</td><td>{a['no_tests']}</td>"
            f"<td>{_mutation_measure(a)}</td></tr>"
            for a in recorded["areas"]  # type: ignore[attr-defined]
        )
        binding += "</table>\n"
    counts = html.escape(", ".join(f"{k} {v}" for k, v in summary(table).items()))
    (directory / "laws.html").write_text(
        "<!doctype html><meta charset='utf-8'><title>eukhe laws</title>\n"
        "<style>body{font-family:sans-serif}td{padding:2px 8px;border-bottom:1px solid #ddd}"
        ".pass td:last-child{color:green}.fail td:last-child,.missing td:last-child{color:red;font-weight:bold}"
        ".pending{color:#999}</style>\n"
        f"<h1>eukhe laws</h1><p>Hypothesis profile {html.escape(profile or profiles.active())}: {counts}</p>\n"
        "<h2>Areas</h2><table><tr><th>area</th><th>laws</th><th>our strength</th><th>universal laws proved</th></tr>\n"
        f"{area_cells}</table>\n{binding}"
        "<h2>Laws</h2><table><tr><th>area</th><th>law</th><th>section</th><th>seed asks</th><th>strength</th>"
        f"<th>production</th><th>evidence</th><th>origin</th><th>result</th></tr>\n{cells}</table>\n",
        encoding="utf-8",
    )


def review(directory: Path) -> Path:
    """The law-by-law review report (directory/report/index.html and its pages) from
    directory/laws.json and the measures beside it (spec.review)."""
    from spec.review import build

    return build(directory)


def refresh(directory: Path) -> None:
    """Rewrite laws.json and laws.html from the rows already there, picking up binding
    measures written since; the review report too when there is one."""
    path = directory / "laws.json"
    if not path.exists():
        return
    document = json.loads(path.read_text(encoding="utf-8"))
    write([Row(**{**r, "proofs": tuple(r.get("proofs", ()))}) for r in document["laws"]], directory, document.get("profile"))
    if (directory / "report" / "index.html").exists():
        review(directory)
