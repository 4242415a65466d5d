"""Every value production keeps once built (a functools cache) is forgotten before each test of a
mutation run (spec.mutate.LAZY): one left out would be built in mutmut's parent before any mutant is
on, and the mutants of the code that builds it would be judged against the original."""

from __future__ import annotations

import ast
from pathlib import Path

from spec import mutate

IMPL = Path(__file__).resolve().parents[2] / "impl"
CACHES = {"cache", "lru_cache"}


def _kept() -> set[str]:
    """``module:function`` of each module-level function of impl/eukhe decorated with a functools cache."""
    found = set()
    for path in sorted((IMPL / "eukhe").rglob("*.py")):
        module = ".".join(path.relative_to(IMPL).with_suffix("").parts)
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef):
                for decorator in node.decorator_list:
                    target = decorator.func if isinstance(decorator, ast.Call) else decorator
                    name = target.attr if isinstance(target, ast.Attribute) else target.id if isinstance(target, ast.Name) else ""
                    if name in CACHES:
                        found.add(f"{module}:{node.name}")
    return found


def test_every_kept_value_of_production_is_forgotten_under_mutation() -> None:
    kept = _kept()
    assert "eukhe.cli:parser" in kept  # the scan finds them
    assert kept == set(mutate.LAZY)


def test_forgetting_rebuilds_the_parser() -> None:
    from eukhe import cli

    before = cli.parser()
    mutate.forget_lazy_values()
    assert cli.parser() is not before
