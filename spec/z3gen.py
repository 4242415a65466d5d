"""z3 encodings generated from the model's own code, so a proof over one is a proof about the code.

``generated(fn)`` reads the source of a model function written in the restricted style of bend/
(parameters of type int, bool or str; a body of assignments to names, ``if``/``else`` and
``return``; integer arithmetic + - *, comparisons, ``and``/``or``/``not`` on booleans,
conditional expressions, module constants and calls of other such functions) and builds its z3
term by walking every path of the body: an ``if`` becomes ``z3.If`` over the two paths it
opens, a name the value it was last given on that path. Anything outside that subset (a loop,
a subscript, division, a call of anything else) is refused with the construct and its line, so
no function is encoded by a guess.

Python's int is z3's Int (both unbounded), its bool z3's Bool and its str z3's String, and the
operations kept are the ones on which the two agree for every value; ``and``/``or`` are allowed
on booleans alone, where Python's value is the boolean z3 computes. The encoding carries its tie
(``.tie``), of strength proved: it is the function's code, not a restatement of it.
tests/workbench/test_z3gen.py checks the translation against the functions on sampled inputs and
every refusal.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import typing
from collections.abc import Callable, Sequence
from typing import Any, Protocol, cast

import z3

from spec.evidence import _SEAL, Tie, encoding
from spec.registry import PROVED

_SORTS: dict[type, Callable[[str], z3.ExprRef]] = {int: z3.Int, bool: z3.Bool, str: z3.String}
_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
}
_COMPARE: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
}
_ORDERED = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


class Generated(Protocol):
    """An encoding generated from a function's code: called like the function on z3 terms."""

    of: str
    tie: Tie

    def __call__(self, *args: Any) -> Any: ...


class Unsupported(ValueError):
    """The function uses a construct outside the subset that is translated."""


def generated(fn: Callable[..., Any]) -> Generated:
    """The z3 encoding of ``fn`` built from its code, as an ``@encoding`` of ``fn`` with its tie."""
    name = f"{fn.__module__}.{fn.__qualname__}"
    translate = _Translator(fn)

    @encoding(name)
    def encoded(*args: Any) -> Any:
        return translate(args)

    encoded.__name__ = encoded.__qualname__ = f"generated_{fn.__name__}"
    tied = Tie(name, PROVED, f"generated from the code of {name} (spec.z3gen: every path of its body)", _SEAL)
    encoded.tie = tied  # type: ignore[attr-defined]
    return cast(Generated, encoded)


class _Translator:
    def __init__(self, fn: Callable[..., Any], depth: int = 0) -> None:
        if depth > 8:
            raise Unsupported(f"{fn.__qualname__}: calls nested deeper than 8 (recursion is not translated)")
        self.fn, self.depth = fn, depth
        source = textwrap.dedent(inspect.getsource(fn))
        tree = ast.parse(source)
        definition = tree.body[0]
        if not isinstance(definition, ast.FunctionDef) or definition.decorator_list:
            raise Unsupported(f"{fn.__qualname__}: not a plain function definition")
        arguments = definition.args
        if arguments.vararg or arguments.kwarg or arguments.kwonlyargs or arguments.defaults or arguments.posonlyargs:
            raise Unsupported(f"{fn.__qualname__}: only plain positional parameters are translated")
        hints = typing.get_type_hints(fn)
        self.parameters: list[str] = []
        for parameter in arguments.args:
            kind = hints.get(parameter.arg)
            if kind not in _SORTS:
                raise Unsupported(f"{fn.__qualname__}: parameter {parameter.arg} is of type {kind}, not int, bool or str")
            self.parameters.append(parameter.arg)
        self.sorts = [hints[p] for p in self.parameters]
        self.body = definition.body
        self.first_line = fn.__code__.co_firstlineno - 1

    def __call__(self, args: Sequence[Any]) -> Any:
        if len(args) != len(self.parameters):
            raise Unsupported(f"{self.fn.__qualname__} takes {len(self.parameters)} arguments, not {len(args)}")
        env = {name: _term(value) for name, value in zip(self.parameters, args, strict=True)}
        return self._block(self.body, env)

    def _where(self, node: ast.AST) -> str:
        return f"{self.fn.__module__}.{self.fn.__qualname__} line {self.first_line + getattr(node, 'lineno', 1)}"

    def _block(self, statements: list[ast.stmt], env: dict[str, Any]) -> Any:
        for index, statement in enumerate(statements):
            if isinstance(statement, ast.Return):
                if statement.value is None:
                    raise Unsupported(f"{self._where(statement)}: a bare return")
                return self._expr(statement.value, env)
            if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) and isinstance(statement.value.value, str):
                continue  # a docstring
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
                env = {**env, statement.targets[0].id: self._expr(statement.value, env)}
                continue
            if isinstance(statement, ast.If):
                rest = statements[index + 1:]
                condition = self._boolean(statement.test, env)
                return z3.If(condition, self._block(statement.body + rest, env), self._block(statement.orelse + rest, env))
            raise Unsupported(f"{self._where(statement)}: {type(statement).__name__} is not translated")
        raise Unsupported(f"{self.fn.__module__}.{self.fn.__qualname__}: a path ends without a return")

    def _boolean(self, node: ast.expr, env: dict[str, Any]) -> Any:
        value = self._expr(node, env)
        if not z3.is_bool(value):
            raise Unsupported(f"{self._where(node)}: a condition that is not a boolean (Python's truth of other values is not translated)")
        return value

    def _expr(self, node: ast.expr, env: dict[str, Any]) -> Any:
        if isinstance(node, ast.Constant):
            return _term(node.value, self._where(node))
        if isinstance(node, ast.Name):
            if node.id in env:
                return env[node.id]
            return self._global(node)
        if isinstance(node, ast.BoolOp):
            parts = [self._boolean(value, env) for value in node.values]
            return z3.And(*parts) if isinstance(node.op, ast.And) else z3.Or(*parts)
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.Not):
                return z3.Not(self._boolean(node.operand, env))
            if isinstance(node.op, ast.USub):
                return -self._integer(node.operand, env)
            raise Unsupported(f"{self._where(node)}: the operator {type(node.op).__name__} is not translated")
        if isinstance(node, ast.BinOp):
            operation = _BINARY.get(type(node.op))
            if operation is None:
                raise Unsupported(f"{self._where(node)}: the operator {type(node.op).__name__} is not translated")
            return operation(self._integer(node.left, env), self._integer(node.right, env))
        if isinstance(node, ast.Compare):
            terms = [self._expr(node.left, env)] + [self._expr(c, env) for c in node.comparators]
            pairs = []
            for op, left, right in zip(node.ops, terms, terms[1:], strict=False):
                compare = _COMPARE.get(type(op))
                if compare is None:
                    raise Unsupported(f"{self._where(node)}: the comparison {type(op).__name__} is not translated")
                if left.sort() != right.sort():
                    raise Unsupported(f"{self._where(node)}: a comparison of {left.sort()} with {right.sort()}")
                if isinstance(op, _ORDERED) and not z3.is_int(left):
                    raise Unsupported(f"{self._where(node)}: an order of {left.sort()} values is not translated")
                pairs.append(compare(left, right))
            return z3.And(*pairs) if len(pairs) > 1 else pairs[0]
        if isinstance(node, ast.IfExp):
            return z3.If(self._boolean(node.test, env), self._expr(node.body, env), self._expr(node.orelse, env))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
            callee = self.fn.__globals__.get(node.func.id)
            if not inspect.isfunction(callee) or callee.__module__ != self.fn.__module__:
                raise Unsupported(f"{self._where(node)}: a call of {node.func.id}, not a function of {self.fn.__module__}")
            return _Translator(callee, self.depth + 1)([self._expr(a, env) for a in node.args])
        raise Unsupported(f"{self._where(node)}: {type(node).__name__} is not translated")

    def _integer(self, node: ast.expr, env: dict[str, Any]) -> Any:
        value = self._expr(node, env)
        if not z3.is_int(value):
            raise Unsupported(f"{self._where(node)}: arithmetic on {value.sort()} is not translated")
        return value

    def _global(self, node: ast.Name) -> Any:
        if node.id not in self.fn.__globals__:
            raise Unsupported(f"{self._where(node)}: the name {node.id} is not defined")
        return _term(self.fn.__globals__[node.id], self._where(node))


def _term(value: Any, where: str = "an argument") -> Any:
    if isinstance(value, z3.ExprRef):
        return value
    if isinstance(value, bool):
        return z3.BoolVal(value)
    if isinstance(value, int):
        return z3.IntVal(value)
    if isinstance(value, str):
        return z3.StringVal(value)
    raise Unsupported(f"{where}: the value {value!r} is not an int, bool or str")
