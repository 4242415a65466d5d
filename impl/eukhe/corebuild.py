"""Build the compiled form of the planner core: ``eukhe.memory.core`` compiled with mypyc (which
ships inside mypy, a dev dependency) into ``eukhe.memory.core_c``, beside the pure module.

    python -m eukhe.corebuild [--force] [--check]

The source is copied as ``core_c.py`` into ``build/mypyc/`` with ``SOURCE`` set to the sha256 of
``core.py``; the compiled core is used only while that digest matches the source
(``eukhe.memory.view.compiled``), so a stale build falls back to the pure form. ``make`` runs
this before the laws, the tests and the benchmark; the pure form stays importable and tested.
(Build tooling, outside the memory area's modules: it is not production code of the planner.)
``--check`` exits 1 when the compiled core is missing or stale.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent / "memory"
SOURCE = HERE / "core.py"
NAME = "core_c"
_SETUP = """
from mypyc.build import mypycify
from setuptools import setup
setup(name="eukhe-core-c", ext_modules=mypycify(["eukhe/memory/core_c.py"], opt_level="3"),
      script_args=["build_ext", "--inplace", "--build-temp", "tmp"])
"""


def digest() -> str:
    return hashlib.sha256(SOURCE.read_bytes()).hexdigest()


def current() -> bool:
    """The compiled core beside the source was built from it (checked in a fresh interpreter,
    so a loaded module does not hide a rebuild). The interpreter runs in the tree that holds the
    source: ``python -c`` puts its working directory first on its path, where another ``eukhe``
    (a checkout, a mutation workspace) would be imported in its place."""
    probe = f"import eukhe.memory.{NAME} as c; print(c.SOURCE)"
    tree = HERE.parent.parent
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tree), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, cwd=tree, check=False)
    return done.returncode == 0 and done.stdout.strip() == digest()


def build(out: Path) -> list[Path]:
    """Compile into ``out`` and copy the extension modules beside the source; returns them."""
    tree = out / "eukhe" / "memory"
    if out.exists():
        shutil.rmtree(out)
    tree.mkdir(parents=True)
    (out / "eukhe" / "__init__.py").write_text("")
    (tree / "__init__.py").write_text("")
    text = SOURCE.read_text(encoding="utf-8")
    marker = 'SOURCE = ""'
    if text.count(marker) != 1:
        raise SystemExit(f"{SOURCE}: expected one line {marker!r}")
    (tree / f"{NAME}.py").write_text(text.replace(marker, f'SOURCE = "{digest()}"'), encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", _SETUP], cwd=out, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"mypyc build of {SOURCE} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    built = sorted(tree.glob(f"{NAME}*.so"))
    if not built:
        raise SystemExit(f"mypyc build of {SOURCE} made no extension module in {tree}")
    for old in HERE.glob(f"{NAME}*.so"):
        old.unlink()
    copied = []
    for path in built:
        target = HERE / path.name
        shutil.copy2(path, target)
        copied.append(target)
    return copied


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eukhe.corebuild", description=__doc__.splitlines()[0])
    parser.add_argument("--force", action="store_true", help="rebuild even when current")
    parser.add_argument("--check", action="store_true", help="only check: exit 1 when missing or stale")
    parser.add_argument("--out", default=str(HERE.parent.parent.parent / "build" / "mypyc"), help="build directory")
    args = parser.parse_args(argv)
    if args.check:
        ok = current()
        print(f"eukhe.memory.{NAME}: {'current' if ok else 'missing or stale'}")
        return 0 if ok else 1
    if not args.force and current():
        print(f"eukhe.memory.{NAME}: current")
        return 0
    for path in build(Path(args.out)):
        print(f"built {path}")
    if not current():
        print(f"eukhe.memory.{NAME}: built, but it does not import with the current digest", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    # The code runs as the module of its name, not as __main__ (see eukhe.agent.child).
    from eukhe.corebuild import main as entry

    raise SystemExit(entry())
