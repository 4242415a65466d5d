"""The report joins manifest, registry and results: missing, pending, families, derived."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from spec import manifest, report
from spec.evidence import Evidence, boolean, domain, exhaust
from spec.registry import BOUNDED, PROVED, TESTED, Law

ENTRIES = manifest.parse(
    "# area\tlaw\tsection\tseed strength\twhere\n"
    "effort\teffort_a\tS10\tuniversal\ttable\n"
    "effort\teffort_fam_*\tS10\tuniversal\ttext\n"
    "effort\teffort_b\tS10\tuniversal\tderive (x)\n"
    "unbuilt\tunbuilt_a\tS0\tuniversal\ttable\n"
)


def _law(name: str, area: str = "effort") -> Law:
    return Law(area, name, "S10", "says", PROVED, _proved)


def _proved() -> Evidence:
    return exhaust(domain(boolean("flag")), lambda flag: True)


def test_rows_mark_missing_pending_family_and_derived() -> None:
    laws = [_law("effort_a"), _law("effort_fam_one"), _law("effort_fam_two"), _law("session_x", "session")]
    results = {law.key: report.Result(law.key, report.PASS, "ok", 0.0) for law in laws}
    table = {(r.area, r.name): r for r in report.rows(ENTRIES, laws, results)}
    assert table[("effort", "effort_a")].status == report.PASS
    assert table[("effort", "effort_fam_one")].status == table[("effort", "effort_fam_two")].status == report.PASS
    assert table[("effort", "effort_b")].status == report.MISSING  # effort is built
    assert table[("unbuilt", "unbuilt_a")].status == report.PENDING
    assert table[("session", "session_x")].origin == "derived"


def test_a_family_with_no_member_is_missing() -> None:
    table = report.rows(ENTRIES, [_law("effort_a")], {})
    assert [r.status for r in table if r.name == "effort_fam_*"] == [report.MISSING]


def test_run_fails_on_assertion_crash_and_no_evidence() -> None:
    def fails() -> Evidence:
        raise AssertionError("fails for 3")

    def crashes() -> Evidence:
        raise KeyError("k")

    assert report.run(Law("a", "x", "", "", PROVED, fails)).evidence == "fails for 3"
    assert report.run(Law("a", "x", "", "", PROVED, crashes)).evidence == "KeyError: 'k'"
    assert report.run(Law("a", "x", "", "", TESTED, lambda: Evidence(TESTED, ""))).status == report.FAIL
    assert report.run(Law("a", "x", "", "", TESTED, lambda: "a bare sentence")).status == report.FAIL  # type: ignore[arg-type,return-value]


def test_a_label_stronger_than_its_evidence_is_refused() -> None:
    bounded = Law("a", "x", "", "", PROVED, lambda: Evidence(BOUNDED, "bounded: stacks of <= 3 layers (9 cases)"))
    result = report.run(bounded)
    assert result.status == report.FAIL
    assert "labelled proved but its evidence is bounded" in result.evidence
    tested = Law("a", "x", "", "", BOUNDED, lambda: Evidence(TESTED, "hypothesis: 300 examples"))
    assert "labelled bounded but its evidence is tested" in report.run(tested).evidence


def test_a_label_weaker_than_its_evidence_is_admitted() -> None:
    assert report.run(Law("a", "x", "", "", TESTED, _proved)).status == report.PASS


def test_rows_carry_the_seed_strength_and_production() -> None:
    law = _law("effort_a")
    results = {law.key: report.Result(law.key, report.PASS, "ok", 0.0, "bounded")}
    row = next(r for r in report.rows(ENTRIES, [law], results) if r.name == "effort_a")
    assert (row.seed_strength, row.production) == ("universal", "bounded")


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
    assert re.search(r"^effort 1/19 \w+ pass \(\d+\.\d\d s\)$", done.stdout, re.M), "not a terminal: a plain line per law"
    rows = json.loads((tmp_path / "laws.json").read_text())["laws"]
    assert len(rows) == 19 and {r["status"] for r in rows} == {"pass"} and {r["strength"] for r in rows} <= {"proved", "bounded"}


def test_a_law_a_later_part_builds_is_pending_not_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(manifest, "LATER", {"effort": {"effort_b": "issue 14"}})
    table = {(r.area, r.name): r for r in report.rows(ENTRIES, [_law("effort_a")], {})}
    assert table[("effort", "effort_b")].status == report.PENDING
    assert table[("effort", "effort_b")].evidence == "built in issue 14"
    assert table[("effort", "effort_fam_*")].status == report.MISSING  # the rest of the area is due now


def _on_a_terminal(argv: list[str], columns: int) -> tuple[int, str]:
    """Run a command with its stdout on a pseudo-terminal of the given width; its exit status
    and everything it printed."""
    import fcntl
    import pty
    import struct
    import termios

    parent, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "TERM")} | {"TERM": "xterm-256color"}
    process = subprocess.Popen(argv, stdout=child, stderr=child, stdin=subprocess.DEVNULL, env=env)
    os.close(child)
    chunks = []
    while True:
        try:
            chunk = os.read(parent, 65536)
        except OSError:  # the child closed its end
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(parent)
    return process.wait(), b"".join(chunks).decode("utf-8", "replace")


def test_eukhe_laws_on_a_terminal_shows_a_bar_per_area_and_fits_the_width(tmp_path: Path) -> None:
    status, shown = _on_a_terminal(
        [sys.executable, "-m", "eukhe", "laws", "--area", "tiny", "--laws-dir", str(tmp_path)], columns=100
    )
    assert status == 0, shown[-2000:]
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown).replace("\r", "\n")
    assert "━" in plain and re.search(r"\b(\d+)/\1\b", plain), "a rich progress bar for the area, run to its end"
    table = [line for line in plain.splitlines() if "│" in line or "┃" in line]
    assert table and max(len(line) for line in table) <= 100, "the table fits the 100 columns of the terminal"
