"""z3 encodings generated from the model's own code, so a proof over one is a proof about the code.

``generated(fn)`` reads the source of a model function written in the restricted style of bend/
(parameters of type int, bool or str, a frozen dataclass of such fields, or such a dataclass or
None; a body of assignments to names, ``if``/``else`` and ``return``; integer arithmetic + - *,
comparisons, ``and``/``or``/``not`` on booleans, ``is None`` tests, fields of dataclasses,
conditional expressions, module constants, dataclass constructors and calls of other such
functions) and builds its z3 term by walking every path of the body: an ``if`` becomes ``z3.If``
over the two paths it opens, a name the value it was last given on that path, a dataclass a
named tuple of its fields' terms, an optional one a ``Maybe`` (a flag for None, and the fields).
A field of an optional value is read only where a test on that path has shown it is not None,
as Python itself requires. Anything outside that subset (a loop, a subscript, division, a call
of anything else) is refused with the construct and its line, so no function is encoded by a
guess. ``fresh(type, name)`` makes a symbolic value of a parameter's type for a claim.

Python's int is z3's Int (both unbounded), its bool z3's Bool and its str z3's String, and the
operations kept are the ones on which the two agree for every value; ``and``/``or`` are allowed
on booleans alone, where Python's value is the boolean z3 computes. The encoding carries its tie
(``.tie``), of strength proved: it is the function's code, not a restatement of it.
tests/workbench/test_z3gen.py checks the translation against the functions on sampled inputs and
every refusal.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import textwrap
import types
import typing
from collections import namedtuple
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any, NamedTuple, Protocol, cast

import z3

from spec.evidence import _SEAL, Tie, _as_z3, encoding
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


class Maybe(NamedTuple):
    """A value of a dataclass or None: ``none`` is its flag, ``value`` its fields otherwise."""

    none: Any
    value: Any


@cache
def _struct(cls: type) -> type:
    """The named tuple that stands for a frozen dataclass: one z3 term per field."""
    if not (dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen):  # type: ignore[attr-defined]
        raise Unsupported(f"{cls.__qualname__} is not a frozen dataclass")
    return namedtuple(f"{cls.__name__}Terms", [f.name for f in dataclasses.fields(cls)])


def _kind(hint: Any) -> Any:
    """int, bool, str, a frozen dataclass, or ("optional", dataclass); refused otherwise."""
    if hint in _SORTS:
        return hint
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        _struct(hint)
        return hint
    parts = typing.get_args(hint)
    if typing.get_origin(hint) in (typing.Union, types.UnionType) and len(parts) == 2 and type(None) in parts:
        (inner,) = [p for p in parts if p is not type(None)]
        if isinstance(inner, type) and dataclasses.is_dataclass(inner):
            _struct(inner)
            return ("optional", inner)
    raise Unsupported(f"the type {hint} is not int, bool, str, a frozen dataclass of them, or one of those or None")


def fresh(hint: Any, name: str) -> Any:
    """A symbolic value of a parameter's type: z3 constants named after ``name`` and its fields."""
    kind = _kind(hint)
    if kind in _SORTS:
        return _SORTS[kind](name)
    if isinstance(kind, tuple):
        return Maybe(z3.Bool(f"{name} is None"), fresh(kind[1], name))
    hints = typing.get_type_hints(kind)
    return _struct(kind)(*(fresh(hints[f.name], f"{name}.{f.name}") for f in dataclasses.fields(kind)))


def struct(cls: type, *fields: Any) -> Any:
    """The terms of a dataclass value with the given field terms (a record a claim builds)."""
    return _struct(cls)(*(_term(f) for f in fields))


def concrete(value: Any, hint: Any) -> Any:
    """The z3 value of a Python value of a parameter's type (for checks on concrete inputs)."""
    kind = _kind(hint)
    if kind in _SORTS:
        return _term(value)
    if isinstance(kind, tuple):
        if value is None:
            return Maybe(z3.BoolVal(True), fresh(kind[1], "unread"))
        return Maybe(z3.BoolVal(False), concrete(value, kind[1]))
    hints = typing.get_type_hints(kind)
    return _struct(kind)(*(concrete(getattr(value, f.name), hints[f.name]) for f in dataclasses.fields(kind)))


def _ite(condition: Any, then: Any, otherwise: Any) -> Any:
    """``z3.If`` over terms, field by field over dataclasses and Maybes of the same shape."""
    if isinstance(then, tuple) and isinstance(otherwise, tuple):
        if type(then) is not type(otherwise):
            raise Unsupported(f"the two paths return {type(then).__name__} and {type(otherwise).__name__}")
        return type(then)(*(_ite(condition, a, b) for a, b in zip(then, otherwise, strict=True)))
    if isinstance(then, tuple) or isinstance(otherwise, tuple):
        raise Unsupported("one path returns a dataclass and the other a plain value")
    return z3.If(condition, then, otherwise)


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
        self.optional: set[str] = set()
        for parameter in arguments.args:
            try:
                kind = _kind(hints.get(parameter.arg))
            except Unsupported as refused:
                raise Unsupported(f"{fn.__qualname__}: parameter {parameter.arg}: {refused}") from None
            if isinstance(kind, tuple):
                self.optional.add(parameter.arg)
            self.parameters.append(parameter.arg)
        self.sorts = [hints[p] for p in self.parameters]
        self.body = definition.body
        self.first_line = fn.__code__.co_firstlineno - 1

    def __call__(self, args: Sequence[Any]) -> Any:
        if len(args) != len(self.parameters):
            raise Unsupported(f"{self.fn.__qualname__} takes {len(self.parameters)} arguments, not {len(args)}")
        env = {name: value if isinstance(value, tuple) else _term(value) for name, value in zip(self.parameters, args, strict=True)}
        return self._block(self.body, env, frozenset())

    def _where(self, node: ast.AST) -> str:
        return f"{self.fn.__module__}.{self.fn.__qualname__} line {self.first_line + getattr(node, 'lineno', 1)}"

    def _block(self, statements: list[ast.stmt], env: dict[str, Any], known: frozenset[str]) -> Any:
        """The value of the first return on every path through ``statements``; ``known`` holds
        the optional names a test on this path has shown are not None."""
        for index, statement in enumerate(statements):
            if isinstance(statement, ast.Return):
                if statement.value is None:
                    raise Unsupported(f"{self._where(statement)}: a bare return")
                return self._expr(statement.value, env, known)
            if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) and isinstance(statement.value.value, str):
                continue  # a docstring
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
                if statement.targets[0].id in self.optional:
                    raise Unsupported(f"{self._where(statement)}: an optional parameter is assigned")
                env = {**env, statement.targets[0].id: self._expr(statement.value, env, known)}
                continue
            if isinstance(statement, ast.If):
                rest = statements[index + 1:]
                condition = self._boolean(statement.test, env, known)
                then = self._block(statement.body + rest, env, known | _not_none(statement.test, True))
                otherwise = self._block(statement.orelse + rest, env, known | _not_none(statement.test, False))
                return _ite(condition, then, otherwise)
            raise Unsupported(f"{self._where(statement)}: {type(statement).__name__} is not translated")
        raise Unsupported(f"{self.fn.__module__}.{self.fn.__qualname__}: a path ends without a return")

    def _boolean(self, node: ast.expr, env: dict[str, Any], known: frozenset[str]) -> Any:
        value = self._expr(node, env, known)
        if not isinstance(value, z3.ExprRef) or not z3.is_bool(value):
            raise Unsupported(f"{self._where(node)}: a condition that is not a boolean (Python's truth of other values is not translated)")
        return value

    def _expr(self, node: ast.expr, env: dict[str, Any], known: frozenset[str]) -> Any:
        if isinstance(node, ast.Constant):
            return _term(node.value, self._where(node))
        if isinstance(node, ast.Name):
            if node.id in env:
                return env[node.id]
            return self._global(node)
        if isinstance(node, ast.BoolOp):
            parts, shown = [], known
            for value in node.values:  # Python reads each operand only where the ones before let it
                parts.append(self._boolean(value, env, shown))
                shown = shown | _not_none(value, isinstance(node.op, ast.And))
            return z3.And(*parts) if isinstance(node.op, ast.And) else z3.Or(*parts)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            holder = self._expr(node.value, env, known)
            if isinstance(holder, Maybe):
                if node.value.id not in known:
                    raise Unsupported(f"{self._where(node)}: {node.value.id}.{node.attr} where {node.value.id} may be None")
                holder = holder.value
            if not isinstance(holder, tuple) or node.attr not in getattr(holder, "_fields", ()):
                raise Unsupported(f"{self._where(node)}: the field {node.attr} of {node.value.id}")
            return getattr(holder, node.attr)
        if (
            isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Is, ast.IsNot))
            and isinstance(node.comparators[0], ast.Constant) and node.comparators[0].value is None
        ):
            held = self._expr(node.left, env, known)
            if not isinstance(held, Maybe):
                raise Unsupported(f"{self._where(node)}: an `is None` test of a value that cannot be None")
            return held.none if isinstance(node.ops[0], ast.Is) else z3.Not(held.none)
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.Not):
                return z3.Not(self._boolean(node.operand, env, known))
            if isinstance(node.op, ast.USub):
                return -self._integer(node.operand, env, known)
            raise Unsupported(f"{self._where(node)}: the operator {type(node.op).__name__} is not translated")
        if isinstance(node, ast.BinOp):
            operation = _BINARY.get(type(node.op))
            if operation is None:
                raise Unsupported(f"{self._where(node)}: the operator {type(node.op).__name__} is not translated")
            return operation(self._integer(node.left, env, known), self._integer(node.right, env, known))
        if isinstance(node, ast.Compare):
            terms = [self._expr(node.left, env, known)] + [self._expr(c, env, known) for c in node.comparators]
            pairs = []
            for op, left, right in zip(node.ops, terms, terms[1:], strict=False):
                compare = _COMPARE.get(type(op))
                if compare is None:
                    raise Unsupported(f"{self._where(node)}: the comparison {type(op).__name__} is not translated")
                if not isinstance(left, z3.ExprRef) or not isinstance(right, z3.ExprRef):
                    raise Unsupported(f"{self._where(node)}: a comparison of dataclass values is not translated")
                if left.sort() != right.sort():
                    raise Unsupported(f"{self._where(node)}: a comparison of {left.sort()} with {right.sort()}")
                if isinstance(op, _ORDERED) and not z3.is_int(left):
                    raise Unsupported(f"{self._where(node)}: an order of {left.sort()} values is not translated")
                pairs.append(compare(left, right))
            return z3.And(*pairs) if len(pairs) > 1 else pairs[0]
        if isinstance(node, ast.IfExp):
            test = node.test
            return _ite(
                self._boolean(test, env, known),
                self._expr(node.body, env, known | _not_none(test, True)),
                self._expr(node.orelse, env, known | _not_none(test, False)),
            )
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
            callee = self.fn.__globals__.get(node.func.id)
            arguments = [self._expr(a, env, known) for a in node.args]
            if isinstance(callee, type) and dataclasses.is_dataclass(callee) and callee.__module__ == self.fn.__module__:
                fields = dataclasses.fields(callee)
                if len(arguments) != len(fields) or any(isinstance(a, Maybe) for a in arguments):
                    raise Unsupported(f"{self._where(node)}: {node.func.id}(...) with other than one plain value per field")
                return _struct(callee)(*arguments)
            if not inspect.isfunction(callee) or callee.__module__ != self.fn.__module__:
                raise Unsupported(f"{self._where(node)}: a call of {node.func.id}, not a function of {self.fn.__module__}")
            return _Translator(callee, self.depth + 1)(arguments)
        raise Unsupported(f"{self._where(node)}: {type(node).__name__} is not translated")

    def _integer(self, node: ast.expr, env: dict[str, Any], known: frozenset[str]) -> Any:
        value = self._expr(node, env, known)
        if not isinstance(value, z3.ExprRef) or not z3.is_int(value):
            raise Unsupported(f"{self._where(node)}: arithmetic on a value that is not an int is not translated")
        return value

    def _global(self, node: ast.Name) -> Any:
        if node.id not in self.fn.__globals__:
            raise Unsupported(f"{self._where(node)}: the name {node.id} is not defined")
        return _term(self.fn.__globals__[node.id], self._where(node))


def _not_none(test: ast.expr, truth: bool) -> frozenset[str]:
    """The names ``test`` shows are not None when it evaluates to ``truth``."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name):
        right = test.comparators[0]
        if isinstance(right, ast.Constant) and right.value is None:
            if (isinstance(test.ops[0], ast.Is) and not truth) or (isinstance(test.ops[0], ast.IsNot) and truth):
                return frozenset({test.left.id})
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or) and not truth:
        return frozenset().union(*(_not_none(v, False) for v in test.values))
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) and truth:
        return frozenset().union(*(_not_none(v, True) for v in test.values))
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _not_none(test.operand, not truth)
    return frozenset()


def _term(value: Any, where: str = "an argument") -> Any:
    made = _as_z3(value)
    if made is None:
        raise Unsupported(f"{where}: the value {value!r} is not an int, bool or str")
    return made
