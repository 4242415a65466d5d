"""``python -m eukhe.corebuild --check``: the compiled core it checks is the one beside the source."""

from __future__ import annotations

from pathlib import Path

import pytest

from eukhe import corebuild


def _package(root: Path, core_c: str) -> Path:
    """``root/eukhe/memory`` with a core_c.py whose SOURCE is ``core_c`` (only that is read: it
    stands for the compiled form)."""
    tree = root / "eukhe" / "memory"
    tree.mkdir(parents=True)
    (tree.parent / "__init__.py").write_text("")
    (tree / "__init__.py").write_text("")
    (tree / f"{corebuild.NAME}.py").write_text(f"SOURCE = {core_c!r}\n")
    return tree


def test_the_core_beside_the_source_is_checked_from_any_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tree = _package(tmp_path / "checkout" / "impl", "")
    (tree / "core.py").write_text("def step(x: int) -> int:\n    return x + 1\n")
    monkeypatch.setattr(corebuild, "HERE", tree)
    monkeypatch.setattr(corebuild, "SOURCE", tree / "core.py")
    (tree / f"{corebuild.NAME}.py").write_text(f"SOURCE = {corebuild.digest()!r}\n")
    decoy = _package(tmp_path / "elsewhere", corebuild.digest() + "-not")  # another eukhe where the check runs
    monkeypatch.chdir(decoy.parent.parent)
    assert corebuild.current()
    (tree / f"{corebuild.NAME}.py").write_text('SOURCE = "an older source"\n')
    _package(tmp_path / "third", corebuild.digest())  # a current-looking eukhe elsewhere does not stand in for it
    monkeypatch.chdir(tmp_path / "third")
    assert not corebuild.current()
