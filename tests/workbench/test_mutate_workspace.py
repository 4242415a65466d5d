"""What a mutation run needs of production: every value production keeps once built (a
functools cache) is forgotten before each test (spec.mutate.LAZY), and a module run as a process's
entry runs its code by its module's name. Else mutmut's parent would build the kept value before
any mutant is on, or a child process would run its module as ``__main__``: either way the mutants
of that code would be judged against the original."""

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


def test_a_module_run_with_python_m_runs_its_code_by_its_name() -> None:
    """A module production runs as a process's entry (``python -m eukhe.agent.child``) calls its
    code through the module of its name: run as ``__main__`` its functions would carry the name
    ``__main__``, and mutmut's trampolines, which switch a mutant on by its module's name, would run
    the original there (the seed-97 agent sample's child mutants survived so)."""
    entries = []
    for path in sorted((IMPL / "eukhe").rglob("*.py")):
        module = ".".join(path.relative_to(IMPL).with_suffix("").parts)
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.If) and ast.unparse(node.test) in ("__name__ == '__main__'", '__name__ == "__main__"'):
                entries.append(module)
                imports = [n for n in ast.walk(node) if isinstance(n, ast.ImportFrom)]
                assert any(i.module == module for i in imports), f"{module}: its __main__ block does not run the code of {module}"
    assert entries == ["eukhe.agent.child", "eukhe.corebuild"]
