"""Named deliberate breaks patch exactly one snippet, before import, and mutants sees what caught them."""

from __future__ import annotations

import subprocess
import sys

import pytest

from spec import breaks, mutants


def test_every_break_applies_to_exactly_one_snippet() -> None:
    for brk in breaks.all_breaks():
        mutants._check_applies(brk)  # raises BreakError if the snippet is gone or repeated


def test_a_snippet_that_is_not_unique_is_refused() -> None:
    brk = breaks.Break("x", "effort", "bend.effort", "return", "return", "")
    with pytest.raises(breaks.BreakError, match="occurs"):
        breaks.patched_source(brk, "return 1\nreturn 2\n")


def test_a_break_changes_the_module_it_names() -> None:
    code = (
        "from spec import breaks; breaks.install('effort_backward_steps_forward');"
        "import bend.effort as e; print(e.cycle(('off', 'low', 'high'), 'low', False))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "high"  # unbroken: off


def test_a_broken_module_shows_its_patched_source() -> None:
    # spec.z3gen encodes a model function from inspect.getsource: under a break it must read the
    # patched text, or a generated proof would judge the unbroken code.
    code = (
        "from spec import breaks; breaks.install('effort_backward_steps_forward');"
        "import inspect, bend.effort as e; print(inspect.getsource(e) == breaks.patched_source("
        "breaks.find('effort_backward_steps_forward'), open(e.__file__).read()))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "True"


def test_installing_after_import_is_refused() -> None:
    import bend.effort  # noqa: F401

    with pytest.raises(breaks.BreakError, match="imported before"):
        breaks.install("effort_backward_steps_forward")


def test_mutants_reports_what_caught_a_break() -> None:
    outcome = mutants.run_one(breaks.find("effort_backward_steps_forward"))
    assert "effort_cycle_prev" in outcome.caught_by
    assert any(name.startswith("test_bridge_replays_byte_for_byte") for name in outcome.caught_by)
