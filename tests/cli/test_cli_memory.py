"""`eukhe memory simulate --png` at the front door (issue 10): a directory, a missing
matplotlib, a file that cannot be written."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_support import InProcess, RunProcess


def test_png_of_a_directory_is_bad_input(inproc: InProcess, run: RunProcess, tmp_path: Path) -> None:
    named_like_a_png = tmp_path / "picture.png"
    named_like_a_png.mkdir()
    for target in (tmp_path, named_like_a_png):
        done = inproc("memory", "simulate", "--messages", "10", "--png", str(target))
        assert (done.status, done.one_error_line()) == (2, f"eukhe memory simulate: --png {target} is a directory; name a .png file")
        assert done.out == ""  # refused before the run
    done = run("memory", "simulate", "--messages", "10", "--png", str(named_like_a_png))
    assert done.status == 2 and "is a directory" in done.one_error_line()


def test_png_without_matplotlib_is_a_fault_of_the_environment(inproc: InProcess, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` now raises ModuleNotFoundError
    done = inproc("memory", "simulate", "--messages", "10", "--png", str(tmp_path / "saw.png"))
    assert done.status == 1
    line = done.one_error_line()
    assert line.startswith("eukhe memory simulate: --png: drawing needs matplotlib") and "pip install matplotlib" in line
    assert done.out == "" and not (tmp_path / "saw.png").exists()


def test_png_without_matplotlib_as_a_real_process(run: RunProcess, tmp_path: Path) -> None:
    shadow = tmp_path / "shadow"
    (shadow / "matplotlib").mkdir(parents=True)
    (shadow / "matplotlib" / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'matplotlib'\", name='matplotlib')\n")
    import os

    path = os.pathsep.join([str(shadow), os.environ.get("PYTHONPATH", "")])
    done = run("memory", "simulate", "--messages", "10", "--png", str(tmp_path / "saw.png"), PYTHONPATH=path)
    assert done.status == 1 and "drawing needs matplotlib" in done.one_error_line()


def test_png_into_a_read_only_dir_is_a_fault_of_the_environment(inproc: InProcess, tmp_path: Path, freeze: Callable[[Path], Path]) -> None:
    frozen = freeze(tmp_path / "frozen")
    done = inproc("memory", "simulate", "--messages", "10", "--png", str(frozen / "saw.png"))
    assert done.status == 1
    assert done.one_error_line().startswith(f"eukhe memory simulate: --png: cannot write {frozen / 'saw.png'}")


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--messages", "0"], "--messages must be between 1 and"),
        (["--messages", "-5"], "--messages must be between 1 and"),
        (["--messages", "9" * 30], "--messages must be between 1 and"),
        (["--messages", "ten"], "--messages wants a whole number"),
        (["--messages", "10", "--seed", "x"], "--seed wants a whole number"),
        (["--messages", "10", "--seed", "9" * 200], "--seed wants a whole number"),
        (["--messages", "10", "--png", "/no/such/dir/x.png"], "no directory"),
        (["--messages", "10", "--png", "picture.jpg"], "wants a .png file"),
    ],
)
def test_memory_simulate_bad_arguments(inproc: InProcess, argv: list[str], says: str) -> None:
    done = inproc("memory", "simulate", *argv)
    assert done.status == 2 and says in done.one_error_line()
