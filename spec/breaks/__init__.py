"""Named deliberate breaks: small patches of a model (bend/) or of production code (impl/eukhe/)
that some law or bridge must catch.

A break replaces one exact snippet of one module's source, once. ``install`` puts an import
hook in front of the normal path finder so the named module is compiled from the patched
source; it must run before anything imports that module (the root conftest.py calls
``install_from_env`` first thing). ``make mutants`` (``python -m spec.mutants``) runs the laws
and bridges of a break's area with ``EUKHE_BREAK=<name>`` and reports what caught it.

Breaks are data: each area lists its own in ``spec/breaks/<area>.py`` as ``BREAKS``. This
package must never import the code the breaks patch.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import linecache
import os
import pkgutil
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import CodeType, ModuleType

ENV = "EUKHE_BREAK"
ROOT = Path(__file__).resolve().parent.parent.parent  # the checkout: where ``spec`` is imported from


@dataclass(frozen=True)
class Break:
    name: str
    area: str
    module: str
    old: str
    new: str
    why: str


class BreakError(Exception):
    """A break that cannot be applied: unknown name, module already imported, snippet not unique."""


def all_breaks() -> list[Break]:
    import spec.breaks as package

    found: list[Break] = []
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        module: ModuleType = importlib.import_module(f"spec.breaks.{info.name}")
        found.extend(getattr(module, "BREAKS", ()))
    names = [b.name for b in found]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        raise BreakError(f"break names used twice: {sorted(duplicates)}")
    return found


def find(name: str) -> Break:
    for candidate in all_breaks():
        if candidate.name == name:
            return candidate
    raise BreakError(f"no break named {name!r}")


def patched_source(brk: Break, source: str) -> str:
    count = source.count(brk.old)
    if count != 1:
        raise BreakError(f"break {brk.name}: the snippet occurs {count} times in {brk.module}, not once")
    return source.replace(brk.old, brk.new)


class _PatchedLoader(importlib.machinery.SourceFileLoader):
    def __init__(self, fullname: str, path: str, brk: Break) -> None:
        super().__init__(fullname, path)
        self.brk = brk

    def get_source(self, fullname: str) -> str:
        return patched_source(self.brk, Path(self.path).read_text(encoding="utf-8"))

    def get_code(self, fullname: str) -> CodeType:
        source = self.get_source(fullname)
        # What reads the module's source (inspect.getsource, and so spec.z3gen's encodings of the
        # model's functions; tracebacks) reads the patched text, not the file: an entry whose
        # mtime is None is never checked against the disk.
        linecache.cache[self.path] = (len(source), None, source.splitlines(keepends=True), self.path)
        return compile(source, self.path, "exec", dont_inherit=True)


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self, brk: Break) -> None:
        self.brk = brk

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.brk.module:
            return None
        found = importlib.machinery.PathFinder.find_spec(fullname, path)
        if found is None or found.origin is None:
            raise BreakError(f"break {self.brk.name}: module {fullname} not found")
        loader = _PatchedLoader(fullname, found.origin, self.brk)
        return importlib.util.spec_from_file_location(
            fullname, found.origin, loader=loader, submodule_search_locations=found.submodule_search_locations
        )


INSTALLED: list[Break] = []  # the breaks installed in this process, in order


def install(name: str) -> Break:
    brk = find(name)
    if brk.module in sys.modules:
        raise BreakError(f"break {name}: {brk.module} was imported before the break was installed")
    sys.meta_path.insert(0, _Finder(brk))
    INSTALLED.append(brk)
    return brk


def install_from_env() -> Break | None:
    name = os.environ.get(ENV)
    return install(name) if name else None


def child_path(site: Path, pythonpath: str | None) -> str | None:
    """Under a break installed in this process (``install``), the PYTHONPATH of a child Python
    process that installs the same breaks before anything else is imported: a sitecustomize naming
    them, written in ``site``, then the checkout, then ``pythonpath``. None when none is installed.
    The names are written in the file, so a child whose environment drops ``EUKHE_`` variables (or
    a process that dropped ``EUKHE_BREAK`` after installing it) passes them on too."""
    if not INSTALLED:
        return None
    site.mkdir(parents=True, exist_ok=True)
    lines = "".join(f"breaks.install({brk.name!r})\n" for brk in INSTALLED)
    (site / "sitecustomize.py").write_text(f"from spec import breaks\n{lines}", encoding="utf-8")
    return os.pathsep.join(x for x in (str(site), str(ROOT), pythonpath) if x)


@contextlib.contextmanager
def reaching_children(site: Path) -> Iterator[None]:
    """While it lasts, the processes started with ``os.environ`` get the breaks installed here
    (``child_path``); PYTHONPATH is put back after. Nothing changes when none is installed."""
    before = os.environ.get("PYTHONPATH")
    path = child_path(site, before)
    if path is None:
        yield
        return
    os.environ["PYTHONPATH"] = path
    try:
        yield
    finally:
        if before is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = before
