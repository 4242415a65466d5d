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

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import linecache
import os
import pkgutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import CodeType, ModuleType

ENV = "EUKHE_BREAK"


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


def install(name: str) -> Break:
    brk = find(name)
    if brk.module in sys.modules:
        raise BreakError(f"break {name}: {brk.module} was imported before the break was installed")
    sys.meta_path.insert(0, _Finder(brk))
    return brk


def install_from_env() -> Break | None:
    name = os.environ.get(ENV)
    return install(name) if name else None
