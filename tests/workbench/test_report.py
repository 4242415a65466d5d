"""The report joins manifest, registry and results: missing, pending, families, derived."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from spec import manifest, report
from spec.registry import PROVED, Law

ENTRIES = manifest.parse(
    "# area\tlaw\tsection\tseed strength\twhere\n"
    "effort\teffort_a\tS10\tuniversal\ttable\n"
    "effort\teffort_fam_*\tS10\tuniversal\ttext\n"
    "effort\teffort_b\tS10\tuniversal\tderive (x)\n"
    "tiny\ttiny_a\tS9\tuniversal\ttable\n"
)


def _law(name: str, area: str = "effort") -> Law:
    return Law(area, name, "S10", "says", PROVED, lambda: "ok")


def test_rows_mark_missing_pending_family_and_derived() -> None:
    laws = [_law("effort_a"), _law("effort_fam_one"), _law("effort_fam_two"), _law("session_x", "session")]
    results = {law.key: report.Result(law.key, report.PASS, "ok", 0.0) for law in laws}
    table = {(r.area, r.name): r for r in report.rows(ENTRIES, laws, results)}
    assert table[("effort", "effort_a")].status == report.PASS
    assert table[("effort", "effort_fam_one")].status == table[("effort", "effort_fam_two")].status == report.PASS
    assert table[("effort", "effort_b")].status == report.MISSING  # effort is built
    assert table[("tiny", "tiny_a")].status == report.PENDING
    assert table[("session", "session_x")].origin == "derived"


def test_a_family_with_no_member_is_missing() -> None:
    table = report.rows(ENTRIES, [_law("effort_a")], {})
    assert [r.status for r in table if r.name == "effort_fam_*"] == [report.MISSING]


def test_run_fails_on_assertion_crash_and_no_evidence() -> None:
    def fails() -> str:
        raise AssertionError("fails for 3")

    def crashes() -> str:
        raise KeyError("k")

    assert report.run(Law("a", "x", "", "", PROVED, fails)).evidence == "fails for 3"
    assert report.run(Law("a", "x", "", "", PROVED, crashes)).evidence == "KeyError: 'k'"
    assert report.run(Law("a", "x", "", "", PROVED, lambda: "")).status == report.FAIL


def test_write_gives_json_and_html(tmp_path: Path) -> None:
    table = report.rows(ENTRIES, [_law("effort_a")], {"effort/effort_a": report.Result("effort/effort_a", report.PASS, "7 cases", 0.1)})
    report.write(table, tmp_path)
    document = json.loads((tmp_path / "laws.json").read_text())
    assert {"area", "name", "section", "strength", "status", "evidence"} <= set(document["laws"][0])
    assert "<table>" in (tmp_path / "laws.html").read_text()


def test_eukhe_laws_prints_the_table_and_writes_the_report(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "eukhe", "laws", "--area", "effort", "--laws-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    assert "effort_shown_is_sent" in done.stdout
    rows = json.loads((tmp_path / "laws.json").read_text())["laws"]
    assert len(rows) == 19 and {r["status"] for r in rows} == {"pass"} and {r["strength"] for r in rows} == {"proved"}
