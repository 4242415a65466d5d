"""A Protocol class of production keeps its members in mutmut's copy of eukhe.

mutmut turns each mutated function into a trampoline and writes its original and every mutant
beside it, as methods of the same class. In a Protocol those copies are members too, which a
runtime_checkable Protocol then demands of every implementation: in the mutation workspace
``isinstance(runner, Remembers)`` was False for every runner, so the agent answered /memory
``no_loop`` where the model says ``not_chat`` (daemon scenario 0151) and the daemon bridge could
not judge the agent's mutants. A Protocol's body is declarations that never run (a mutant there
is equivalent), so each is marked ``# pragma: no mutate block``; this checks mutmut's own
generator leaves every Protocol of impl/eukhe as it is."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from mutmut import configuration
from mutmut.mutation.file_mutation import mutate_file_contents

PACKAGE = Path(__file__).resolve().parents[2] / "impl" / "eukhe"


def _protocols(code: str) -> dict[str, ast.ClassDef]:
    """Each Protocol class of a module."""
    return {
        node.name: node
        for node in ast.walk(ast.parse(code))
        if isinstance(node, ast.ClassDef) and any(isinstance(b, ast.Name) and b.id == "Protocol" for b in node.bases)
    }


def _members(code: str) -> dict[str, list[str]]:
    """The names each Protocol class of a module defines."""
    return {
        name: sorted(n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))
        for name, node in _protocols(code).items()
    }


MODULES = sorted(p for p in PACKAGE.rglob("*.py") if _protocols(p.read_text(encoding="utf-8")))


@pytest.fixture
def mutmut_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """mutmut reads its configuration from the working directory, as in the workspace."""
    (tmp_path / "eukhe").mkdir()
    (tmp_path / "pyproject.toml").write_text('[tool.mutmut]\nsource_paths = ["eukhe"]\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    configuration.reset_config()
    yield
    configuration.reset_config()


def test_production_has_protocols() -> None:
    assert any(path.name == "daemon.py" and path.parent.name == "agent" for path in MODULES)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_a_protocol_keeps_its_members_in_the_mutated_copy(path: Path, mutmut_config: None) -> None:
    """Each Protocol alone (mutmut only parses the code, so the rest of the module is not needed)."""
    text = path.read_text(encoding="utf-8")
    code = "from typing import Protocol\n\n\n" + "\n\n\n".join(
        ast.get_source_segment(text, node, padded=True) or "" for node in _protocols(text).values()
    )

    mutated = mutate_file_contents(str(path), code).code

    assert _members(mutated) == _members(code)


def test_without_the_pragma_a_protocol_gains_members(mutmut_config: None) -> None:
    """The check above can fail: the same Protocol without its pragma gets mutmut's copies."""
    code = 'from typing import Protocol\n\n\nclass Remembers(Protocol):\n    def memory_event(self, text: str = "") -> str:\n        """Doc."""\n'

    members = _members(mutate_file_contents("m.py", code).code)["Remembers"]

    assert members != ["memory_event"] and "memory_event" in members
