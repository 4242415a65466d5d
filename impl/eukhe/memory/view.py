"""The view and its batched fit, built for chats of millions of messages (memory.md §3).

Nodes ``(l, i)`` cover ``[i*2^l, (i+1)*2^l)`` and are named ``id+n`` (rule 11). The lines, the
built sizes and the fit live in the planner core (``eukhe.memory.core``, on plain ints); this
module picks the form of that core (``CORE``: compiled with mypyc when built and current, else
the pure-Python module), makes the public ``View`` (nodes as ``(l, i)`` tuples: the core's
``View``, of the form of its planner) and keeps the rendering.

``fit`` (rules 19, 23, 24) merges the most due pair whose parent is built until the view is at
most the budget. The message count ``T`` is fixed during a fit, so the due order is a number
per pair: ``(T + 1 - first) / 2^l`` (the seed's production form: the order of
``(T - last) / 2^l`` shifted by 2), kept exact as an integer (``core.due_key``).

Forms: ``EUKHE_MEMORY_FORM=pure`` selects the pure-Python core; ``=compiled`` requires the
compiled one; unset, the compiled core is used when it was built from the current source, except
under a named break (``EUKHE_BREAK``: breaks patch the source) or ``coverage run`` (it traces
the source), which get the pure core. ``use(form)`` switches for planners built
afterwards.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import sys
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, cast

from eukhe.memory import PLACEHOLDER
from eukhe.memory import core as pure
from eukhe.memory.text import flatten

Node = tuple[int, int]
Planner = pure.Planner
FORM_ENV = "EUKHE_MEMORY_FORM"
COMPILED = "eukhe.memory.core_c"


def first(node: Node) -> int:
    return node[1] << node[0]


def last(node: Node) -> int:
    return ((node[1] + 1) << node[0]) - 1


def name(node: Node) -> str:
    return f"{node[1] << node[0]}+{1 << node[0]}"


def parent(node: Node) -> Node:
    return (node[0] + 1, node[1] >> 1)


def due_key(left: Node, t: int) -> int:
    """The due of the pair whose left line is ``left``, as an exact integer at a fixed ``t``
    (the core's key, at depth 64)."""
    return pure.due_key(left[1] << 6 | left[0], t, 64)


def source_digest() -> str:
    """The sha256 of the pure core's source: the compiled core records the one it was built from."""
    return hashlib.sha256(Path(pure.__file__).read_bytes()).hexdigest()


def compiled(module: str = COMPILED) -> ModuleType | None:
    """The compiled core (the module named ``module``) when it is built and current, else None."""
    try:
        found = importlib.import_module(module)
    except ImportError:
        return None
    return found if getattr(found, "SOURCE", "") == source_digest() else None


def _pick(form: str, environ: Mapping[str, str] = os.environ, module: str = COMPILED) -> ModuleType:
    """The core of ``form`` ("pure", "compiled", or "" for the default under ``environ``), the
    compiled one being the module named ``module``: the one choice, at import and in ``use``."""
    if form == "pure":
        return pure
    found = compiled(module)
    if form == "compiled":
        if found is None:
            raise RuntimeError(f"{FORM_ENV}=compiled, but {module} is not built from the current source: run `python -m eukhe.corebuild`")
        return found
    if form:
        raise ValueError(f"{FORM_ENV} is pure or compiled, not {form!r}")
    if environ.get("EUKHE_BREAK") or environ.get("COVERAGE_RUN"):
        return pure  # a break patches the source; coverage traces the source only
    return found if found is not None else pure


CORE: ModuleType = _pick(os.environ.get(FORM_ENV, ""))


def use(form: str) -> ModuleType:
    """Planners built from now on use the ``form`` core ("pure", "compiled", or "" for the
    default); returns the previous core."""
    global CORE
    before = CORE
    CORE = _pick(form)
    return before


def form() -> str:
    return "pure" if CORE is pure else "compiled"


def rows_of(levels: Sequence[Sequence[int]]) -> pure.Sizes:
    """Built sizes (``levels[l][i]``, 0 when not built) as the current core form's rows."""
    return cast("pure.Sizes", CORE.rows_of(levels))


def planner(ceiling: int, floor: int, cceiling: int, cfloor: int) -> Planner:
    """A planner core of the form in use (``cceiling`` < 0: no compaction view)."""
    return cast(Planner, CORE.Planner(ceiling, floor, cceiling, cfloor))


def work(
    core: Planner,
    jobs: int,
    free: int,
    keep: bool,
    running: list[Node],
    merges: deque[Node],
    fresh: deque[int],
    retry: list[Node],
    failed: list[Node],
    fails: dict[Node, int],
    pending: dict[int, int],
    cases: set[str],
    before: Callable[[str | None, int], None],
    keep_line: Callable[[Node, str], None],
    leave: Callable[[int], None],
) -> pure.Work:
    """The work queue's per-message path (``core.Work``) on the planner ``core``, of its form."""
    module = sys.modules[type(core).__module__]
    return cast("pure.Work", module.Work(core, jobs, free, keep, running, merges, fresh, retry, failed, fails, pending, cases, before, keep_line, leave))


def _view(core: Planner | None = None, compaction: bool = False) -> pure.View:
    """A view (``core.View``) of ``core``'s form, or of the form in use for a view of its own."""
    module = CORE if core is None else sys.modules[type(core).__module__]
    return cast("pure.View", module.View(core, compaction))


if TYPE_CHECKING:
    View = pure.View
else:  # the planner core's own view (its ``total`` a compiled getter), of the core's form
    View = _view


def render_lines(nodes: Sequence[Node], text: Callable[[Node], str | None]) -> list[str]:
    """One ``id+n|text`` line per node, newlines flattened, the placeholder for an unbuilt node
    (rules 15, 16, 18)."""
    out = []
    for node in nodes:
        body = text(node)
        out.append(f"{name(node)}|{flatten(PLACEHOLDER if body is None else body)}")
    return out


def render(nodes: Sequence[Node], text: Callable[[Node], str | None]) -> str:
    """``<chat>``, the lines, ``</chat>`` (rule 15)."""
    return "<chat>\n" + "".join(line + "\n" for line in render_lines(nodes, text)) + "</chat>"


def pieces(nodes: Sequence[Node], text: Callable[[Node], str | None], block: int = 4) -> tuple[str, str]:
    """The rendered view split at its cache mark, the end of the last whole block of ``block``
    lines (rule 29): the marked piece, then the rest."""
    lines = render_lines(nodes, text)
    whole = len(lines) // block * block
    marked = "<chat>\n" + "".join(line + "\n" for line in lines[:whole])
    return marked, "".join(line + "\n" for line in lines[whole:]) + "</chat>"
