"""The review report: build/report/index.html, one page per area, the seeds and the sources.

``build(laws_dir)`` reads what the runs wrote in ``laws_dir`` (laws.json from `make laws`;
coverage.json from `make test`; mutation.json from `make mutate`; mutants.json from `make
mutants`; bench.json from `make bench`; hunt.json from `make fuzz`), joins it with the law
registry (each property's source and what it speaks of), the seeds and the bridges, and writes
static pages under ``laws_dir/report``: no server is needed, file:// shows them.
"""

from __future__ import annotations

import ast
import html
import json
import pprint
import re
import shutil
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spec import registry
from spec.report import mutation_measure, recorded_mutation
from spec.review import bridges, plots, seeds, sources

STATUSES = ("pass", "fail", "missing", "pending")
STRENGTHS = tuple(s.value for s in registry.STRENGTHS)  # strongest first, proved-for-encoding included
# Law areas and the production area whose coverage and mutation score speak for them.
PRODUCTION_AREA: dict[str, str] = {
    "effort": "effort",
    "cvar": "settings",
    "config": "settings",
    "director": "directors",
    "progress": "directors",
    "session": "session",
    "optchat": "memory",
    "compactor": "memory",
    "chat_store": "memory",
    "infer": "inference",
    "catalog_union": "inference",
    "default_model": "inference",
}


def e(text: object) -> str:
    return html.escape(str(text), quote=True)


def law_id(name: str) -> str:
    return "law-" + re.sub(r"[^\w-]", "_", name)


def area_page(area: str) -> str:
    return f"area-{area}.html"


def replay_command(key: str, brk: str = "") -> str:
    """The one command that replays a law (Hypothesis replays a failure from its database)."""
    prefix = f"EUKHE_BREAK={brk} " if brk else ""
    return f"{prefix}.venv/bin/python -m pytest -q -p no:randomly 'tests/laws/test_laws.py::test_law[{key}]'"


def pretty(detail: str) -> str:
    """A failure message with every Python literal in it (a counterexample tuple, a dict of
    settings) laid out by pprint on lines of its own."""
    out = []
    for line in detail.splitlines():
        done = False
        for match in re.finditer(r"[\(\[\{]", line):
            start = match.start()
            for stop in range(len(line), start + 1, -1):
                chunk = line[start:stop]
                if chunk[-1] not in ")]}":
                    continue
                try:
                    value = ast.literal_eval(chunk)
                except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                    continue
                if isinstance(value, (tuple, list, dict, set)) and len(chunk) > 40:
                    laid = pprint.pformat(value, width=88, sort_dicts=False)
                    out.append(f"{line[:start].rstrip()}\n{laid}\n{line[stop:].strip()}".rstrip())
                    done = True
                break
            if done:
                break
        if not done:
            out.append(line)
    return "\n".join(out)


@dataclass
class LawView:
    row: dict[str, Any]
    key: str
    seed_href: str = ""
    refs: list[sources.Ref] = field(default_factory=list)
    source: str = ""  # highlighted property
    source_href: str = ""
    doc: str = ""  # the property's docstring: what it checks
    breaks: list[str] = field(default_factory=list)
    shared: list[str] = field(default_factory=list)  # laws whose evidence shares a part with this one


def _parts(sentence: str) -> set[str]:
    return {p.strip() for p in sentence.split("; ") if len(p.strip()) > 40}


def _shared(rows: list[dict[str, Any]]) -> dict[str, list[str]]:
    """For each law, the other laws whose evidence has a part in common with its own (a shared
    enumeration or search, run once and judged by several laws)."""
    holders: dict[str, list[str]] = {}
    for r in rows:
        for part in _parts(r["evidence"]):
            holders.setdefault(part, []).append(r["name"])
    out: dict[str, list[str]] = {}
    for r in rows:
        names = {n for part in _parts(r["evidence"]) for n in holders[part] if n != r["name"]}
        out[r["name"]] = sorted(names)
    return out


def _read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


CSS = """
body{font-family:system-ui,sans-serif;margin:1.2em 2em;color:#222;max-width:1400px}
table{border-collapse:collapse;margin:.5em 0}td,th{padding:3px 8px;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}
th{background:#f4f4f4}.num{text-align:right}
.pass .st,.st.pass{color:#17702a}.fail .st,.missing .st,.st.fail,.st.missing{color:#b00;font-weight:bold}.pending{color:#888}
.strength{display:inline-block;padding:0 6px;border-radius:8px;font-size:.85em;border:1px solid #999}
.strength.proved{background:#dff3e3}.strength.proved-for-encoding{background:#e3e9fb}.strength.bounded{background:#fff3d6}.strength.tested{background:#fde2e2}
.filters{margin:.6em 0}.filters span{margin-right:1.2em}
button.filter{border:1px solid #888;background:#fff;border-radius:4px;margin:1px;cursor:pointer}
button.filter[aria-pressed=true]{background:#2d5fa8;color:#fff}
details.law{border:1px solid #ccc;border-radius:6px;margin:.4em 0;padding:.3em .7em}
details.law>summary{cursor:pointer;font-weight:600}details.law[open]{background:#fbfbfb}
details.law dl{display:grid;grid-template-columns:12em minmax(0,1fr);gap:.25em 1em}dt{color:#555}dd{margin:0;min-width:0;overflow-x:auto}
pre.counterexample,pre.cmd{background:#fff4f4;border:1px solid #e5b5b5;padding:.5em;white-space:pre-wrap}
pre.cmd{background:#f4f4ff;border-color:#b5b5e5}
.crumbs{color:#666}.plots img{max-width:100%;border:1px solid #ddd}
.hidden{display:none}
.highlight pre{font-size:.85em;line-height:1.3}
"""

JS = """
// Filters: buttons with data-key (area, status, strength) and data-value ('' = all). A law
// row or law box shows when it matches every pressed filter. The state rides in the hash
// (#f:status=fail&strength=proved) so a filtered view can be linked.
(function(){
  const state = {};
  function apply(){
    let shown = 0;
    document.querySelectorAll('[data-law]').forEach(function(el){
      let ok = true;
      for (const k in state){ if (state[k] && el.dataset[k] !== state[k]) ok = false; }
      el.classList.toggle('hidden', !ok);
      if (ok) shown++;
    });
    const count = document.getElementById('shown-count');
    if (count) count.textContent = shown;
    document.querySelectorAll('button.filter').forEach(function(b){
      b.setAttribute('aria-pressed', String((state[b.dataset.key] || '') === b.dataset.value));
    });
  }
  document.addEventListener('click', function(ev){
    const b = ev.target.closest('button.filter');
    if (!b) return;
    state[b.dataset.key] = b.dataset.value;
    apply();
  });
  function openFromHash(){
    const id = decodeURIComponent(location.hash.slice(1));
    const el = id && document.getElementById(id);
    if (el && el.tagName === 'DETAILS'){ el.open = true; el.scrollIntoView(); }
  }
  window.addEventListener('hashchange', openFromHash);
  document.addEventListener('DOMContentLoaded', function(){ apply(); openFromHash(); });
})();
"""


def _filters(keys: Iterable[tuple[str, Iterable[str]]]) -> str:
    groups = []
    for key, values in keys:
        buttons = f"<button class='filter' data-key='{key}' data-value=''>all</button>" + "".join(
            f"<button class='filter' data-key='{key}' data-value='{e(v)}'>{e(v or 'none')}</button>" for v in values
        )
        groups.append(f"<span class='group' data-group='{key}'>{key}: {buttons}</span>")
    return f"<div class='filters'>{''.join(groups)} <span>showing <b id='shown-count'></b></span></div>"


def _head(title: str, depth: str = "") -> str:
    return (
        f"<!doctype html><html lang='en'><meta charset='utf-8'><title>{e(title)}</title>"
        f"<link rel='stylesheet' href='{depth}style.css'><script src='{depth}report.js'></script>\n"
    )


def _counts(counter: dict[str, int], order: Iterable[str]) -> str:
    return ", ".join(f"<span class='st {k}'>{k} {counter[k]}</span>" for k in order if counter.get(k))


def _strength_pair(row: dict[str, Any]) -> str:
    ours = row["strength"]
    ours_html = f"<span class='strength {e(ours)}'>{e(ours)}</span>" if ours else "none"
    seed = row.get("seed_strength") or "not stated"
    return f"seed asks <b>{e(seed)}</b>; ours {ours_html}" + (
        f"; production {e(row['production'])}" if row.get("production") else ""
    )


CLAIM_CHARS = 4000  # a z3 claim longer than this is clipped on the page (laws.json keeps it whole)


def _proofs(proofs: list[dict[str, Any]]) -> str:
    """Each proof's object (the whole domain, the encoding and its tie to the code, the function
    unfolded by induction), its z3 claim as text and the non-vacuity checks it passed."""
    parts = []
    for proof in proofs:
        claim = str(proof.get("claim") or "")
        clipped = claim if len(claim) <= CLAIM_CHARS else claim[:CLAIM_CHARS] + f" ... ({len(claim):,} characters)"
        parts.append(
            f"<li><span class='proof-object'>{e(str(proof['object']))}</span>"
            + (f"<details><summary>z3 claim</summary><pre class='claim'>{e(clipped)}</pre></details>" if claim else "")
            + (f"<br>checks passed: {e('; '.join(proof.get('checks') or []))}" if proof.get("checks") else "")
            + "</li>"
        )
    return f"<ul class='proofs'>{''.join(parts)}</ul>"


class Report:
    def __init__(self, laws_dir: Path) -> None:
        self.laws_dir = laws_dir
        self.out = laws_dir / "report"
        document = _read(laws_dir / "laws.json")
        if document is None:
            raise FileNotFoundError(f"no {laws_dir / 'laws.json'}: run `make laws` (or `eukhe laws`) first")
        self.document: dict[str, Any] = document
        self.rows: list[dict[str, Any]] = document["laws"]
        self.coverage = document.get("coverage") or _read(laws_dir / "coverage.json")
        # a run of `make mutate` on this machine, else the scores recorded in spec/mutation_scores.json
        self.mutation = document.get("mutation") or _read(laws_dir / "mutation.json")
        self.mutation_recorded: dict[str, Any] | None = recorded_mutation() or document.get("mutation_recorded")
        self.mutants = _read(laws_dir / "mutants.json")
        self.brk: str = document.get("break") or ""
        self.modules: set[str] = set()

    # -- joining ------------------------------------------------------------------------------

    def views(self) -> list[LawView]:
        from spec import registry

        laws = {law.key: law for law in registry.load()}
        seed_docs = seeds.load()
        shared = _shared([r for r in self.rows if r["status"] != "pending"])
        caught: dict[str, list[str]] = {}
        for brk in (self.mutants or {}).get("breaks", []):
            for name in brk.get("caught_by", []):
                caught.setdefault(name, []).append(brk["name"])
        out = []
        for row in self.rows:
            key = f"{row['area']}/{row['name']}"
            view = LawView(row, key, seeds.link(seed_docs, row["section"]))
            view.breaks = sorted(caught.get(row["name"], []))
            view.shared = shared.get(row["name"], [])
            law = laws.get(key)
            if law is not None:
                module, text, start = sources.property_source(law.check)
                view.source = sources.highlighted(text, start)
                view.source_href = f"src/{sources.page_name(module)}#L-{start}"
                view.doc = (law.check.__doc__ or "").strip()
                view.refs = sources.spoken_of(law.check)
                self.modules.add(module)
                self.modules.update(r.module for r in view.refs)
            out.append(view)
        self.seed_docs = seed_docs
        return out

    # -- pages --------------------------------------------------------------------------------

    def area_rows(self) -> dict[str, list[dict[str, Any]]]:
        by_area: dict[str, list[dict[str, Any]]] = {}
        for r in self.rows:
            by_area.setdefault(r["area"], []).append(r)
        return by_area

    def _binding(self, area: str) -> tuple[str, str]:
        production = PRODUCTION_AREA.get(area, area)
        cov = next((a for a in (self.coverage or {}).get("areas", []) if a["area"] == production), None)
        mut = next((a for a in (self.mutation or {}).get("areas", []) if a["area"] == production), None)
        recorded = next((a for a in (self.mutation_recorded or {}).get("areas", []) if a["area"] == production), None)
        cov_text = f"{cov['percent']}% ({production})" if cov else "not measured"
        if mut:
            mut_text = f"{mutation_measure(mut)} ({production}: {mut['killed']} killed, {mut['survived']} survived)"
        elif recorded:
            mut_text = (
                f"{mutation_measure(recorded)} ({production}: {recorded['killed']} killed, {recorded['survived']} survived; "
                f"recorded at {recorded['commit']})"
            )
        else:
            mut_text = "not measured"
        return cov_text, mut_text

    def _area_table(self, found: dict[str, bridges.BridgeView]) -> str:
        head = (
            "<table class='areas'><tr><th>area</th><th>laws by status</th><th>by strength (ours)</th>"
            "<th>seed's universal laws proved</th><th>coverage</th><th>mutation score</th><th>bridge</th><th class='num'>run time</th></tr>\n"
        )
        body = []
        areas = self.document.get("areas", {})
        for area, rows in self.area_rows().items():
            status = Counter(r["status"] for r in rows)
            strength = Counter(r["strength"] for r in rows if r["strength"])
            info = areas.get(area, {})
            cov, mut = self._binding(area)
            bridge = bridges.of(area, found)
            seconds = sum(float(r["seconds"]) for r in rows)
            body.append(
                f"<tr><td><a href='{area_page(area)}'>{e(area)}</a></td><td>{_counts(status, STATUSES)}</td>"
                f"<td>{e(', '.join(f'{k} {strength[k]}' for k in STRENGTHS if strength.get(k)))}</td>"
                f"<td>{info.get('universal_proved', 0)} of {info.get('universal', 0)}</td><td>{e(cov)}</td><td>{e(mut)}</td>"
                f"<td>{e(bridge.summary if bridge else 'none')}</td><td class='num'>{seconds:.1f} s</td></tr>"
            )
        return head + "\n".join(body) + "</table>\n"

    def _law_box(self, view: LawView, found: dict[str, bridges.BridgeView]) -> str:
        r = view.row
        seed_link = (
            f"<a class='seed' href='{e(view.seed_href)}'>{e(r['section'])}</a>" if view.seed_href else e(r["section"])
        )
        items = [
            ("statement", e(r.get("says") or "(no statement: the law is not built)")),
            ("seed section", seed_link),
            ("strength", _strength_pair(r)),
            ("origin", e(r.get("origin", ""))),
            ("evidence", f"<span class='evidence'>{e(r['evidence'])}</span>"),
        ]
        if r.get("proofs"):
            items.append(("what each proof covers", _proofs(r["proofs"])))
        if r.get("unproved"):
            items.append(("why not proved", e(r["unproved"])))
        if view.shared:
            what = e(view.doc.split("\n\n")[0]) if view.doc else e(r.get("says", ""))
            items.append(
                (
                    "shared evidence",
                    f"parts of this evidence are one run judged by several laws ({e(', '.join(view.shared))}); "
                    f"this law checks in it: {what}",
                )
            )
        elif view.doc:
            items.append(("what it checks", e(view.doc.split("\n\n")[0])))
        if view.source:
            items.append(
                (
                    "property",
                    f"<details class='source'><summary>source (<a href='{e(view.source_href)}'>in its file</a>)</summary>"
                    f"{view.source}</details>",
                )
            )
        for side, label in ((sources.MODEL, "model functions"), (sources.PRODUCTION, "production functions")):
            refs = [x for x in view.refs if x.side == side]
            if refs:
                items.append(
                    (label, ", ".join(f"<a class='ref {side}' href='{e(x.href())}'>{e(x.module)}.{e(x.name)}</a>" for x in refs))
                )
        bridge = bridges.of(r["area"], found)
        if bridge:
            missing = [c for c in bridge.rules + bridge.classes if c not in bridge.rules_reached + bridge.classes_reached]
            items.append(
                (
                    "bridge",
                    f"bridge/{e(bridge.area)}.py: {e(bridge.summary)}"
                    + (f"; not reached: {e(', '.join(missing))}" if missing else "")
                    + f"<details><summary>cases</summary>rule cases: {e(', '.join(bridge.rules))}"
                    + (f"<br>input classes: {e(', '.join(bridge.classes))}" if bridge.classes else "")
                    + "</details>",
                )
            )
        if self.mutants is not None:
            items.append(
                ("caught breaks", e(", ".join(view.breaks)) if view.breaks else "none in the last `make mutants`")
            )
        if r["status"] == "fail":
            detail = r.get("detail") or r["evidence"]
            items.append(("counterexample", f"<pre class='counterexample'>{e(pretty(detail))}</pre>"))
            items.append(("replay", f"<pre class='cmd'>{e(replay_command(view.key, self.brk))}</pre>"))
        items.append(("run time", f"{float(r['seconds']):.2f} s"))
        body = "".join(f"<dt>{label}</dt><dd class='f-{label.replace(' ', '-')}'>{value}</dd>" for label, value in items)
        strength = r["strength"] or ""
        return (
            f"<details class='law {e(r['status'])}' id='{law_id(r['name'])}' data-law='1' data-status='{e(r['status'])}' "
            f"data-strength='{e(strength)}'><summary>{e(r['name'])} <span class='st'>{e(r['status'])}</span> "
            f"<span class='strength {e(strength)}'>{e(strength or 'no strength')}</span> "
            f"<span class='sec'>{e(r['section'])}</span></summary><dl>{body}</dl></details>"
        )

    def write(self) -> Path:
        started = time.perf_counter()
        if self.out.exists():
            for child in self.out.iterdir():
                if child.name not in {"screens", "bridges.json"}:
                    shutil.rmtree(child) if child.is_dir() else child.unlink()
        self.out.mkdir(parents=True, exist_ok=True)
        (self.out / "style.css").write_text(CSS + sources.FORMATTER_CSS, encoding="utf-8")
        (self.out / "report.js").write_text(JS, encoding="utf-8")
        views = self.views()
        found = bridges.views(self.out / "bridges.json", set(self.area_rows()))
        drawn = plots.draw(self.laws_dir, self.out / "plots")
        (self.out / "seeds").mkdir(exist_ok=True)
        for name, seed in self.seed_docs.items():
            (self.out / "seeds" / f"{name}.html").write_text(seed.page(), encoding="utf-8")
        (self.out / "src").mkdir(exist_ok=True)
        for module in sorted(self.modules):
            page = sources.module_page(module)
            if page is not None:
                (self.out / "src" / sources.page_name(module)).write_text(page, encoding="utf-8")
        by_area: dict[str, list[LawView]] = {}
        for view in views:
            by_area.setdefault(view.row["area"], []).append(view)
        for area, members in by_area.items():
            self._write_area(area, members, found)
        self._write_index(views, found, drawn, time.perf_counter() - started)
        return self.out / "index.html"

    def _write_area(self, area: str, members: list[LawView], found: dict[str, bridges.BridgeView]) -> None:
        rows = [v.row for v in members]
        status = Counter(r["status"] for r in rows)
        strength = Counter(r["strength"] for r in rows if r["strength"])
        seed_strength = Counter(r.get("seed_strength") or "not stated" for r in rows)
        cov, mut = self._binding(area)
        bridge = bridges.of(area, found)
        seconds = sum(float(r["seconds"]) for r in rows)
        page = (
            _head(f"eukhe laws: {area}")
            + f"<p class='crumbs'><a href='index.html'>report</a> / {e(area)}</p><h1>{e(area)}: {len(rows)} laws</h1>\n"
            + "<table class='area-summary'>"
            + f"<tr><th>by status</th><td>{_counts(status, STATUSES)}</td></tr>"
            + f"<tr><th>by strength: ours</th><td>{e(', '.join(f'{k} {strength[k]}' for k in STRENGTHS if strength.get(k)))}</td></tr>"
            + f"<tr><th>by strength: the seed asks</th><td>{e(', '.join(f'{k} {v}' for k, v in sorted(seed_strength.items())))}</td></tr>"
            + f"<tr><th>coverage (laws and bridges alone)</th><td>{e(cov)}</td></tr>"
            + f"<tr><th>mutation score</th><td>{e(mut)}</td></tr>"
            + f"<tr><th>bridge</th><td>{e(bridge.summary if bridge else 'none')}</td></tr>"
            + f"<tr><th>run time</th><td>{seconds:.1f} s</td></tr></table>\n"
            + _filters([("status", [s for s in STATUSES if status.get(s)]), ("strength", [s for s in STRENGTHS if strength.get(s)])])
            + "\n".join(self._law_box(v, found) for v in members)
            + "\n</html>\n"
        )
        (self.out / area_page(area)).write_text(page, encoding="utf-8")

    def _write_index(self, views: list[LawView], found: dict[str, bridges.BridgeView], drawn: list[plots.Plot], took: float) -> None:
        rows = [v.row for v in views]
        status = Counter(r["status"] for r in rows)
        strengths = [s for s in STRENGTHS if any(r["strength"] == s for r in rows)]
        table = "".join(
            f"<tr class='{e(v.row['status'])}' data-law='1' data-area='{e(v.row['area'])}' data-status='{e(v.row['status'])}' "
            f"data-strength='{e(v.row['strength'])}'><td>{e(v.row['area'])}</td>"
            f"<td><a class='law-link' href='{area_page(v.row['area'])}#{law_id(v.row['name'])}'>{e(v.row['name'])}</a></td>"
            f"<td>{(f'<a href={chr(39)}{e(v.seed_href)}{chr(39)}>' + e(v.row['section']) + '</a>') if v.seed_href else e(v.row['section'])}</td>"
            f"<td>{e(v.row.get('seed_strength', ''))}</td><td><span class='strength {e(v.row['strength'])}'>{e(v.row['strength'])}</span></td>"
            f"<td class='st'>{e(v.row['status'])}</td><td class='num'>{float(v.row['seconds']):.2f}</td></tr>\n"
            for v in views
        )
        figures = "".join(
            f"<figure><figcaption><b>{e(p.title)}</b>: {e(p.note)}</figcaption>"
            + (f"<img src='plots/{e(p.file)}' alt='{e(p.title)}'>" if p.file else "")
            + "</figure>"
            for p in drawn
        )
        seeds_line = (
            " ".join(f"<a href='seeds/{n}.html'>{n}.md</a>" for n in self.seed_docs)
            if self.seed_docs
            else "the seed texts were not found (EUKHE_SEEDS or ../shared/seeds): sections are not linked"
        )
        mutants_line = (
            f"{sum(1 for b in self.mutants['breaks'] if b['caught_by'])} of {len(self.mutants['breaks'])} named breaks caught in the last `make mutants`"
            if self.mutants
            else "no build/mutants.json: run `make mutants` to see which laws catch which break"
        )
        page = (
            _head("eukhe laws: review")
            + "<h1>eukhe laws: review</h1>\n"
            + f"<p>Hypothesis profile {e(self.document.get('profile', ''))}: {_counts(status, STATUSES)}. "
            + f"Seeds: {seeds_line}. {e(mutants_line)}.</p>\n"
            + "<h2>Areas</h2>\n"
            + self._area_table(found)
            + "<h2>Plots</h2><div class='plots'>"
            + figures
            + "</div>\n<h2>Laws</h2>\n"
            + _filters(
                [
                    ("area", list(self.area_rows())),
                    ("status", [s for s in STATUSES if status.get(s)]),
                    ("strength", strengths),
                ]
            )
            + "<table class='laws'><tr><th>area</th><th>law</th><th>seed section</th><th>seed asks</th><th>ours</th>"
            + "<th>result</th><th class='num'>s</th></tr>\n"
            + table
            + "</table>\n"
            + f"<p class='crumbs'>written in {took:.1f} s from {e(self.laws_dir / 'laws.json')}</p></html>\n"
        )
        (self.out / "index.html").write_text(page, encoding="utf-8")


def build(laws_dir: Path) -> Path:
    """Write the report from laws_dir/laws.json and whatever else is there; the index's path."""
    return Report(laws_dir).write()


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m spec.review", description="write build/report/ from build/laws.json")
    parser.add_argument("--laws-dir", default="build", type=Path)
    args = parser.parse_args(argv)
    try:
        index = build(args.laws_dir)
    except FileNotFoundError as error:
        print(f"report: {error}")
        return 2
    print(f"report written to {index}")
    return 0
