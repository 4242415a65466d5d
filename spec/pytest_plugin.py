"""pytest side of the law machinery: record each law's result, print the law table at the end
of a run that ran laws, and write build/laws.json and build/laws.html.

``--laws-dir`` moves the output (``make mutants`` gives each break its own); the names of
failed tests are written there too (failures.json), so a mutant run can say what caught it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from spec import manifest, registry, report

_RESULTS: dict[str, report.Result] = {}
_FAILED: list[str] = []


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--laws-dir", default="build", help="where laws.json, laws.html and failures.json go")


def record(result: report.Result) -> None:
    _RESULTS[result.key] = result


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.failed:
        _FAILED.append(report.nodeid)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    directory = Path(config.getoption("--laws-dir"))
    if _FAILED or _RESULTS:
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "failures.json").write_text(json.dumps(_FAILED, indent=1) + "\n", encoding="utf-8")
    if not _RESULTS:
        return
    table = report.rows(manifest.load(), registry.load(), _RESULTS)
    if len(_RESULTS) < len(registry.load()):  # a selection (-k): report only the laws that ran
        table = [r for r in table if f"{r.area}/{r.name}" in _RESULTS]
    report.print_table(table)
    report.write(table, directory)
    terminalreporter.write_line(f"law report written to {directory}/laws.json and {directory}/laws.html")
    if len(_RESULTS) == len(registry.load()) and not os.environ.get(report.BREAK_ENV):
        # every law ran (not a -k selection, not a break run of `make mutants`): the review pages
        index = report.review(directory)
        terminalreporter.write_line(f"review report written to {index}")
