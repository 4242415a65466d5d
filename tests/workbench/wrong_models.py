"""Wrong models for the tests of the proofs: a model's function with small edits of its source,
compiled under a file name of its own whose text linecache holds (a proof that reads the
function's source, spec.proofs.stateless_loop, reads the edited text) and run in the module's own
names (the stubs a proof puts in the module reach the wrong function's callees and recursion)."""

from __future__ import annotations

import __future__
import inspect
import linecache
import textwrap
import types
from collections.abc import Callable
from typing import Any


def edited(function: Callable[..., Any], *edits: tuple[str, str]) -> Callable[..., Any]:
    """``function`` with each edit's text (found once in its source) replaced."""
    module = inspect.getmodule(function)
    assert module is not None
    source = textwrap.dedent(inspect.getsource(function))
    for before, after in edits:
        assert source.count(before) == 1, f"the model changed: {before!r} is not in {function.__qualname__} once"
        source = source.replace(before, after)
    filename = f"<wrong model of {module.__name__}.{function.__name__}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    space = dict(vars(module))
    exec(compile(source, filename, "exec", flags=__future__.annotations.compiler_flag, dont_inherit=True), space)
    return types.FunctionType(space[function.__name__].__code__, vars(module), function.__name__)
