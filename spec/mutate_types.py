"""The type check of a mutation run: mypy --strict, with the project's configuration, on each
mutant applied to its module, as `make test`'s mypy would see the module if the mutant were
the code. A mutant mypy refuses is "caught by type check" (mutmut's exit code 37, counted
killed) and its judges do not run.

mutmut runs this as its ``type_check_command`` (``python -m spec.mutate_types mypy``: the word
"mypy" also tells mutmut to read the output as mypy's JSON lines), in a workspace's mutants/
directory, once per ``mutmut run`` and before any mutant's judges. It checks the mutants that run
will judge (spec.mutate.run_mutmut names them in the workspace's TYPE_CHECK_NAMES; none named:
every mutant not judged yet, mutmut's whole run) and prints, for each refused mutant, one error
on the line of the mutant's function in mutants/, which mutmut attributes to that mutant.

Why not mypy over mutmut's mutated files, which hold every mutant beside a trampoline that calls
one of them: the trampoline's decorator changes what a caller sees of a function. A function
returning ``TypeGuard[int]`` (eukhe/session/records.py's ``_nat``) loses its narrowing, so the
original ``decode`` and every mutant of it fail to type-check: errors outside any mutant (which
stop mutmut's run) and inside every mutant of such a function (each counted caught, none
rightly). Here the mutant is written into a copy of its module and nothing else changes.

Affordable: mypy checks the mutated module alone (a mutant changes a function's body, never a
signature, so no other module's view of it changes), read through ``--shadow-file`` with the
workspace's incremental cache (.mypy_cache), in this one process (mypy.api): a few tenths of a
second a mutant. Verdicts are kept in the workspace (TYPE_CHECK_CACHE) by the mutant's module
text, under a key of mypy's version and every source mypy may read; a module whose own code
mypy refuses (a tree that does not pass `make types`) has none of its mutants counted caught.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import sys
import time
from importlib.metadata import version
from pathlib import Path

TYPE_CHECK_NAMES = "type_check_names.json"  # the mutants a mutmut run judges (null: every one not judged yet)
TYPE_CHECK_CACHE = "type_check.json"


def command() -> list[str]:
    """mutmut's type_check_command (run in the workspace's mutants/ directory)."""
    return [sys.executable, "-m", "spec.mutate_types", "mypy"]


def split_name(mutant: str) -> tuple[str, str, str | None, str]:
    """A mutant's module, its function in mutants/ and the class and name of the function it
    mutates: "eukhe.effort.xǁThinkingSessionǁcycle__mutmut_11" -> ("eukhe.effort",
    "xǁThinkingSessionǁcycle__mutmut_11", "ThinkingSession", "cycle")."""
    module, _, function = mutant.rpartition(".")
    mangled = function.rsplit("__mutmut_", 1)[0]
    if mangled.startswith("xǁ"):
        _, owner, name = mangled.split("ǁ", 2)
        return module, function, owner, name
    return module, function, None, mangled.removeprefix("x_")


def _functions(tree: ast.Module) -> dict[tuple[str | None, str], ast.FunctionDef | ast.AsyncFunctionDef]:
    """The module's functions and its classes' methods, by (class or None, name)."""
    found: dict[tuple[str | None, str], ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found[(None, node.name)] = node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    found[(node.name, item.name)] = item
    return found


class Module:
    """One mutated module: its original text and mutmut's mutants file, read once."""

    def __init__(self, original: Path, mutants: Path) -> None:
        self.lines = original.read_text(encoding="utf-8").splitlines(keepends=True)
        self.mutant_lines = mutants.read_text(encoding="utf-8").splitlines(keepends=True)
        self.originals = _functions(ast.parse("".join(self.lines)))
        self.mutants = _functions(ast.parse("".join(self.mutant_lines)))

    def apply(self, function: str, owner: str | None, name: str) -> str | None:
        """The module's text with one mutant in place of the function it mutates (the original's
        decorators kept), or None if either cannot be found."""
        original, mutant = self.originals.get((owner, name)), self.mutants.get((owner, function))
        if original is None or mutant is None or mutant.end_lineno is None or original.end_lineno is None:
            return None
        body = self.mutant_lines[mutant.lineno - 1 : mutant.end_lineno]
        renamed = body[0].replace(f"def {function}(", f"def {name}(", 1)
        if renamed == body[0]:
            return None
        start = original.lineno - 1  # the def line: the decorators above it stay
        return "".join(self.lines[:start] + [renamed] + body[1:] + self.lines[original.end_lineno :])

    def line_of(self, function: str, owner: str | None) -> int:
        """The line of the mutant's function in mutants/ (where mutmut looks for the mutant)."""
        return self.mutants[(owner, function)].lineno


def _base_key(space: Path) -> str:
    """What every verdict depends on besides the mutant's module: mypy, the configuration and
    every source mypy may read."""
    digest = hashlib.sha256(version("mypy").encode())
    digest.update((space / "pyproject.toml").read_bytes())
    for folder in ("impl", "bend"):
        for path in sorted((space / folder).rglob("*.py")):
            digest.update(str(path.relative_to(space)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _refusal(space: Path, module_path: str, text: str) -> str | None:
    """mypy's first error on the module ``module_path`` (under impl/) read as ``text``; None if
    it passes."""
    from mypy import api

    shadow = space / "type_check_shadow.py"
    before = int(shadow.stat().st_mtime) if shadow.exists() else 0
    shadow.write_text(text, encoding="utf-8")
    # mypy takes a module whose size and whole-second mtime match its cache as unchanged, without
    # reading it: every text gets a later second, so mypy compares its hash.
    stamp = max(int(time.time()), before + 1)
    os.utime(shadow, (stamp, stamp))
    out, err, _ = api.run(["--shadow-file", module_path, str(shadow), "--output", "json", module_path])
    errors = []
    for line in out.splitlines():
        if line.strip().startswith("{"):
            found = json.loads(line)
            if found.get("severity") == "error" and found.get("file") == module_path:
                errors.append(f"line {found['line']}: {found['message']}")
    if not errors and not out.strip() and err.strip():
        raise RuntimeError(f"mypy could not check {module_path}: {err.strip()[-2000:]}")
    return errors[0] if errors else None


def chosen(space: Path) -> dict[str, Path]:
    """The mutants the current mutmut run judges, each with the mutants/ file holding it."""
    named_file = space / TYPE_CHECK_NAMES
    named = json.loads(named_file.read_text(encoding="utf-8")) if named_file.exists() else None
    found: dict[str, Path] = {}
    for meta in sorted((space / "mutants").rglob("*.py.meta")):
        codes = json.loads(meta.read_text(encoding="utf-8")).get("exit_code_by_key", {})
        source = meta.with_suffix("")  # mutants/eukhe/x.py.meta -> mutants/eukhe/x.py
        for name, code in codes.items():
            if (named is None and code is None) or (named is not None and name in named):
                found[name] = source
    return found


def check(space: Path) -> dict[str, tuple[Path, int, str]]:
    """The chosen mutants mypy refuses: mutants/ file, line of the mutant's function there, and
    mypy's first error. Verdicts are kept in the workspace between runs."""
    cache_path = space / TYPE_CHECK_CACHE
    key = _base_key(space)
    cache = json.loads(cache_path.read_text(encoding="utf-8")) if cache_path.exists() else {}
    verdicts: dict[str, dict[str, str | None]] = cache.get("verdicts", {}) if cache.get("key") == key else {}
    modules: dict[Path, Module | None] = {}
    refused: dict[str, tuple[Path, int, str]] = {}

    def verdict(entry: str, module_path: str, text: str) -> str | None:
        digest = hashlib.sha256(text.encode()).hexdigest()
        kept = verdicts.get(entry)
        if kept is None or kept.get("source") != digest:
            kept = {"source": digest, "error": _refusal(space, module_path, text)}
            verdicts[entry] = kept
        return kept["error"]

    for name, mutants_file in sorted(chosen(space).items()):
        module_path = f"impl/{mutants_file.relative_to(space / 'mutants')}"  # impl/eukhe/x.py
        if mutants_file not in modules:
            read = Module(space / module_path, mutants_file)
            refusal = verdict(module_path, module_path, "".join(read.lines))
            if refusal is not None:  # the module itself fails: none of its mutants is counted caught
                print(f"{module_path}: mypy refuses the module itself ({refusal}); its mutants go to the judges", file=sys.stderr)
            modules[mutants_file] = read if refusal is None else None
        module = modules[mutants_file]
        if module is None:
            continue
        _, function, owner, original = split_name(name)
        text = module.apply(function, owner, original)
        if text is None:
            print(f"{name}: its function was not found in {module_path}; it goes to the judges", file=sys.stderr)
            continue
        error = verdict(name, module_path, text)
        if error is not None:
            refused[name] = (mutants_file, module.line_of(function, owner), error)
    cache_path.write_text(json.dumps({"key": key, "verdicts": verdicts}, indent=1) + "\n", encoding="utf-8")
    return refused


def main(argv: list[str] | None = None) -> int:
    """Run by mutmut in <workspace>/mutants: print mypy's JSON line for each refused mutant."""
    space = Path.cwd().parent
    os.chdir(space)  # mypy reads the project's configuration (the workspace's pyproject.toml) here
    for name, (mutants_file, line, error) in sorted(check(space).items()):
        record = {"file": str(mutants_file.relative_to(space / "mutants")), "line": line, "column": 0,
                  "message": error, "hint": None, "code": "mutant", "severity": "error", "mutant": name}
        print(json.dumps(record))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
