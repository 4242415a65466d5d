"""What a law's property speaks of, read from its source, and the highlighted source pages.

``spoken_of(check)`` walks the property's syntax tree (and the helpers of its own module that
it calls, a few levels deep) for the model functions (``bend``) and production functions
(``eukhe``) it names: ``m.clamp`` where ``m`` is ``bend.effort``, ``prod.CatalogModel`` where
``prod`` is ``eukhe.effort``, or a name imported from them. Each is a ``Ref`` with its module,
name and line, so the report links it to the line of its highlighted source page.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import html
import inspect
import textwrap
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

ROOT = Path(__file__).resolve().parents[2]
MODEL, PRODUCTION = "bend", "eukhe"
DEPTH = 3  # how many levels of the law module's own helpers are followed


@dataclass(frozen=True, order=True)
class Ref:
    module: str
    name: str
    line: int

    @property
    def side(self) -> str:
        return MODEL if self.module.split(".")[0] == MODEL else PRODUCTION

    def page(self) -> str:
        return page_name(self.module)

    def href(self) -> str:
        return f"src/{self.page()}#L-{self.line}"


def page_name(module: str) -> str:
    return f"{module}.html"


@functools.cache
def _index(module: str) -> tuple[dict[int, ast.AST], dict[str, int]]:
    """A module parsed once: its function and class definitions by first line (decorators
    included), and its classes' lines by qualified name."""
    try:
        found = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        found = None
    if found is None or not found.origin or not found.origin.endswith(".py"):
        return {}, {}
    tree = ast.parse(Path(found.origin).read_text(encoding="utf-8"))
    by_line: dict[int, ast.AST] = {}
    classes: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                by_line[first] = child
                by_line.setdefault(child.lineno, child)
                name = f"{prefix}{child.name}"
                if isinstance(child, ast.ClassDef):
                    classes[name] = child.lineno
                visit(child, f"{name}.")

    visit(tree, "")
    return by_line, classes


def _line(obj: object) -> int | None:
    code = getattr(inspect.unwrap(obj), "__code__", None) if callable(obj) else None
    if isinstance(code, types.CodeType):
        node = _index(str(getattr(obj, "__module__", "")))[0].get(code.co_firstlineno)
        return getattr(node, "lineno", code.co_firstlineno)
    if isinstance(obj, type):
        return _index(obj.__module__)[1].get(obj.__qualname__)
    return None


def _ref(obj: object) -> Ref | None:
    module = getattr(obj, "__module__", None)
    if isinstance(obj, types.ModuleType) or not isinstance(module, str):
        return None
    if module.split(".")[0] not in (MODEL, PRODUCTION):
        return None
    line = _line(obj)
    if line is None:
        return None
    return Ref(module, getattr(obj, "__qualname__", getattr(obj, "__name__", "?")), line)


def _tree(function: Callable[..., Any]) -> ast.AST | None:
    code = getattr(function, "__code__", None)
    if not isinstance(code, types.CodeType):
        return None
    by_line, _ = _index(str(getattr(function, "__module__", "")))
    return by_line.get(code.co_firstlineno)


def spoken_of(check: Callable[..., Any]) -> list[Ref]:
    """The model and production functions and classes a property names, its helpers included."""
    found: set[Ref] = set()
    seen: set[int] = set()
    home = getattr(inspect.unwrap(check), "__module__", "")

    def walk(function: Callable[..., Any], depth: int) -> None:
        function = inspect.unwrap(function)
        if id(function) in seen or depth > DEPTH:
            return
        seen.add(id(function))
        tree = _tree(function)
        if tree is None:
            return
        scope: dict[str, Any] = dict(getattr(function, "__globals__", {}))
        for node in ast.walk(tree):
            obj: object = None
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                base = scope.get(node.value.id)
                if isinstance(base, types.ModuleType) and base.__name__.split(".")[0] in (MODEL, PRODUCTION):
                    obj = getattr(base, node.attr, None)
            elif isinstance(node, ast.Name):
                obj = scope.get(node.id)
                if callable(obj) and getattr(obj, "__module__", None) == home:
                    if depth < DEPTH:
                        walk(obj, depth + 1)  # a helper of the law's own module
                    continue
            ref = _ref(obj) if obj is not None else None
            if ref is not None:
                found.add(ref)

    walk(check, 0)
    return sorted(found, key=lambda r: (r.side != MODEL, r.module, r.line))


def property_source(check: Callable[..., Any]) -> tuple[str, str, int]:
    """The property's module, its source text (decorators included) and its first line."""
    target = inspect.unwrap(check)
    node = _tree(target)
    module = target.__module__
    found = importlib.util.find_spec(module)
    if node is None or found is None or not found.origin:
        lines, start = inspect.getsourcelines(target)
        return module, "".join(lines), start
    first = min([getattr(node, "lineno", 1), *(d.lineno for d in getattr(node, "decorator_list", []))])
    text = Path(found.origin).read_text(encoding="utf-8").splitlines(keepends=True)
    return module, "".join(text[first - 1 : getattr(node, "end_lineno", first)]), first


FORMATTER_CSS: str = HtmlFormatter(style="friendly").get_style_defs(".highlight")  # type: ignore[no-untyped-call]


def highlighted(source: str, start: int = 1) -> str:
    return highlight(source, PythonLexer(), HtmlFormatter(linenos="inline", linenostart=start, style="friendly"))


def module_page(module: str) -> str | None:
    """The whole module highlighted, each line with the anchor L-<n>; None when it has no file."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    path = Path(spec.origin)
    body = highlight(
        path.read_text(encoding="utf-8"),
        PythonLexer(),
        HtmlFormatter(linenos="inline", lineanchors="L", anchorlinenos=True, style="friendly"),
    )
    try:
        shown = path.resolve().relative_to(ROOT)
    except ValueError:
        shown = path
    return (
        "<!doctype html><meta charset='utf-8'>"
        f"<title>{html.escape(module)}</title><link rel='stylesheet' href='../style.css'>\n"
        f"<p class='crumbs'><a href='../index.html'>report</a> / {html.escape(str(shown))}</p>\n{body}"
    )
