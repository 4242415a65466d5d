"""z3 encodings generated from the model's own code, so a proof over one is a proof about the code.

``generated(fn)`` reads the source of a model function written in the restricted style of bend/
(parameters of type int, bool or str, a frozen dataclass of such fields, a tuple of ints, bools,
strs, dataclasses or pairs of plain values, a pair, or one of those or None; a body of
assignments to names (a pair unpacked into names too), ``if``/``else``, ``while`` loops with
``break`` and ``continue``, ``for`` loops (their items unpacked or not) over a tuple, a record's
tuple field or a module constant the module declares a tuple of ints, bools or strs (``LEVELS:
tuple[str, ...] = (...)``: its items in a constant array, its length a constant), and
``return``; integer arithmetic + - *, ``//`` and ``%`` by a positive int constant (z3's div
and mod, which are Python's for a positive divisor), ``min`` and ``max`` of two ints, comparisons,
``and``/``or``/``not`` on booleans, ``is None`` tests, ``in`` and ``not in`` a tuple (``member``:
some index below its length holds an equal item), fields of dataclasses, ``len`` and
subscripts and slices of tuples, pairs (fixed tuples: a literal, a constant subscript),
conditional expressions, module constants, dataclass constructors and calls of other such
functions, ``()`` given to a tuple parameter or field, a tuple local declared with its type and
given a literal, an optional pair returned as a literal) and builds its z3 term by walking every path of the body: an
``if`` becomes ``z3.If`` over the two paths it opens, a name the value it was last given on that
path, a dataclass a named tuple of its fields' terms, an optional value a ``Maybe`` (a flag for
None, and the value), a tuple ``Items`` (a z3 array and its length; ``t[:k]`` the same array,
shorter), a pair a named tuple of its items. An optional value (a name, or a field of one) is
read only where a test on that path has shown it is not None, as Python itself requires.
Beyond those: a JSON value the model only carries (``object``: a catalog entry's optional field)
is a value of a z3 sort nothing constrains (``OBJECT``; None given as one is ``NONE``, some value),
so a proof holds whatever the values are; the code may bind, store and return one, and comparing
two (``==``, ``in``, a record holding one) is refused, as Python's ``==`` on JSON values is no
equivalence (NaN); a parameter or field of the model's JSON value type (``bend.cvar.Value``) is
such a value, and a frozen dataclass of another module of the package (``Obj`` of bend.cvar,
used by bend.config) is built as one of the function's own. ``sorted(t)`` of a tuple and
``tuple(x for x in t if c)`` (a filter: one ``for``, the item itself, any ``if``s) are, outside a
loop's body, items of their own (a z3 function of the index named by a digest of the arguments; a
filter's length a constant so named), defined by facts that ``side_facts(*terms, only=...)``
gives for the terms of a claim (to state beside it, as ``facts``), each builtin's in two ways:
forward, each item i of the result is the argument's item at perm(i) (sorted: perm(i) below n)
or sel(i) (a filter: an index below n whose item holds the condition); back, each item j of the
argument (a filter: that holds the condition) is the result's item at inv(j) (below n) or ins(j)
(below count). Only what the builtins guarantee whenever they return is encoded, not the order
sorted picks nor the filter's order, nor how often an item repeats (0 <= count <= n), so a proof
holds for the real ones. Both ways of a builtin together can feed each other new indices without
end (z3 then answers slowly or not at all): a claim states the ways its step reads, one
quantifier step at a time. Under a loop's body (a recursive function) either is refused: a name made outside
the loop's recursive function would not follow its names from one turn to the next. A dataclass
held in a tuple may have tuple fields (each item's tuple an array
of arrays and an array of lengths; a tuple of tuples stays refused). A local declared a list
(``out: list[Entry] = []``) is a tuple while no other name can see it: given ``[]`` once, then
only ``out.append(x)`` (a store at its length), ``len(out)`` and ``tuple(out)`` (a copy); any
other read, a second assignment or a list parameter's name is refused. A property of a frozen
dataclass of the function's module (``entry.key``) is its getter's code on the record.
Anything outside that subset (a ``for`` loop over a range with a step, division by a
variable, a call of anything else) is refused with the construct and its line, so no function is encoded by a guess. ``fresh(type,
name)`` makes a symbolic value of a parameter's type for a claim, ``facts`` what every such
value satisfies (a length is a natural).

A ``while`` loop becomes z3 recursive functions (``z3.RecFunction``, one per leaf of the
function's result) of the names bound before it: the loop's test, then its body, which ends by
calling them again on the names' new values, or leaves them by ``break`` or ``return``. Before
a loop is encoded, z3 proves that it ends: its test is a comparison ``a < b`` (or ``<=``, ``>``,
``>=``, or such a comparison first in an ``and``), whose distance (``b - a``, ...) is positive
while the loop runs and smaller on every path that runs it again. A loop that cannot be shown
to end is refused: a recursive definition that does not end could make z3 prove anything. z3 answers
that check within spec.proofs.LIMIT_MS (as every solver of the proof machinery does); no answer in
time refuses the function too (``Undecided``), never encodes it.
``loop(**names)`` of a generated encoding is its first loop entered with the names' values
(the unfolding an induction on the loop is about), and ``successors(**names)`` the states that
loop's body runs it again with, each with its path's conditions: built as the recursive
functions build their own calls, so an induction step assumes its hypothesis at exactly the
terms the unfolding reaches; ``entered(*args)`` the names the loop is entered with. ``_at=k`` among the names of
``loop`` and ``successors`` names the k-th loop of the body instead of the first (a loop after
another, reached from its exit: entered with the earlier for loops' positions too, ``_index@j``
of the j-th); only the recursive functions the translation of the whole function made are
called so, never new ones. A subscript ``t[i]`` reads the array at
``i``, or at ``len(t) + i`` for a negative ``i``, as Python does; where Python would raise
IndexError the encoding is some value, so a proof over it says what the function returns
whenever it returns.

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
import hashlib
import inspect
import sys
import textwrap
import types
import typing
import collections.abc
from collections import namedtuple
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any, NamedTuple, Protocol, cast

import z3

from spec.evidence import _SEAL, Tie, _as_z3, check, encoding
from spec.proofs import LIMIT_MS
from spec.registry import PROVED

# A JSON value the model only carries (``object``: a catalog entry's optional field): a z3 sort of
# its own that nothing constrains, so a proof over it holds whatever the values are. The code may
# carry one (bind it, store it in a tuple or a dataclass, return it) and nothing else: comparing
# two (Python's ``==`` on JSON values is not an equivalence: NaN) or reading one is refused.
OBJECT = z3.DeclareSort("object")
NONE = z3.Const("None", OBJECT)  # the value None given where an object is expected: some value


def _object(name: str) -> z3.ExprRef:
    return z3.Const(name, OBJECT)


_SORTS: dict[type, Callable[[str], z3.ExprRef]] = {int: z3.Int, bool: z3.Bool, str: z3.String, object: _object}
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

    def loop(self, **names: Any) -> Any:
        """The function's value from its first loop, entered with every name bound before it."""

    def successors(self, **names: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
        """The states its first loop, entered with ``names``, runs again with: each path's
        conditions (the loop's test first) and the names' values it passes on."""

    def entered(self, *args: Any) -> dict[str, Any]:
        """The names its first loop is entered with when the function is called on ``args``."""


class Unsupported(ValueError):
    """The function uses a construct outside the subset that is translated."""


class Undecided(Unsupported):
    """z3 gave no answer within its time limit on an obligation of the translation (that a loop
    ends): the function is not encoded, as if refused."""


class Maybe(NamedTuple):
    """A value or None: ``none`` is its flag, ``value`` the value (a dataclass's fields) otherwise."""

    none: Any
    value: Any


class Items(NamedTuple):
    """A tuple of ints, bools or strs: the z3 array of its items from index 0, and its length."""

    array: Any
    length: Any


_ITEM_SORTS: dict[type, Callable[[], z3.SortRef]] = {int: z3.IntSort, bool: z3.BoolSort, str: z3.StringSort, object: lambda: OBJECT}

# The dataclass each named tuple of ``_struct`` stands for (its properties are read through it).
_CLASSES: dict[type, type] = {}


@cache
def _fixed(size: int) -> type:
    """The named tuple that stands for a fixed tuple of ``size`` values (a function's pair)."""
    return namedtuple(f"Tuple{size}", [f"item{k}" for k in range(size)])


@cache
def _struct(cls: type) -> type:
    """The named tuple that stands for a frozen dataclass: one z3 term per field."""
    if not (dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen):  # type: ignore[attr-defined]
        raise Unsupported(f"{cls.__qualname__} is not a frozen dataclass")
    made = namedtuple(f"{cls.__name__}Terms", [f.name for f in dataclasses.fields(cls)])  # type: ignore[misc]
    _CLASSES[made] = cls
    return made


def _kind(hint: Any) -> Any:
    """int, bool, str, a frozen dataclass, ("items", item type) for a tuple of one of the
    three, or ("optional", one of those that is not optional); refused otherwise."""
    if isinstance(hint, typing.ForwardRef):
        hint = hint.__forward_arg__
    if isinstance(hint, str):  # a quoted annotation of builtins ("str | None")
        hint = eval(hint, {"__builtins__": {}}, {"int": int, "bool": bool, "str": str, "None": None})  # noqa: S307
    if hint in _SORTS:
        return hint
    if _is_json(hint):  # bend.cvar.Value: a JSON value the code only carries
        return object
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        _struct(hint)
        return hint
    parts = typing.get_args(hint)
    if typing.get_origin(hint) is tuple and len(parts) == 2 and parts[1] is Ellipsis:
        return ("items", _item_kind(parts[0]))
    if typing.get_origin(hint) is tuple and parts and Ellipsis not in parts:
        return ("fixed", tuple(_kind(p) for p in parts))
    if typing.get_origin(hint) is collections.abc.Sequence and len(parts) == 1:
        return ("items", _item_kind(parts[0]))
    if typing.get_origin(hint) in (typing.Union, types.UnionType) and len(parts) == 2 and type(None) in parts:
        (inner,) = [p for p in parts if p is not type(None)]
        kind = _kind(inner)
        return ("optional", kind)
    raise Unsupported(f"the type {hint} is not int, bool, str, a frozen dataclass of them, a tuple of int, bool or str, a pair (a fixed tuple) of those, or one of those or None")


def _package(module: str) -> str:
    """The package of a module (``bend``): a dataclass of the model may be built by any of its functions."""
    return module.split(".", 1)[0]


def _is_json(hint: Any) -> bool:
    """Whether ``hint`` is the model's JSON value (``bend.cvar.Value``: a recursive union of
    None, bool, int, float, str, tuples of values and objects), carried as ``object``."""
    cvar = sys.modules.get("bend.cvar")
    if cvar is None or typing.get_origin(hint) not in (typing.Union, types.UnionType):
        return False

    def parts(union: Any) -> tuple[Any, ...]:  # a quoted "Value" (as written, or as get_type_hints reads it) as itself
        def named(arg: Any) -> Any:
            inner = typing.get_args(arg)
            if typing.get_origin(arg) is tuple and len(inner) == 2 and inner[1] is Ellipsis:
                item = inner[0].__forward_arg__ if isinstance(inner[0], typing.ForwardRef) else inner[0]
                return ("tuple of", item)
            return arg
        return tuple(named(arg) for arg in typing.get_args(union))

    return parts(hint) == parts(cvar.Value) == (bool, int, float, str, ("tuple of", "Value"), cvar.Obj, type(None))


def _item_kind(hint: Any) -> Any:
    """The kind of a tuple's items: int, bool, str or a frozen dataclass (of such fields)."""
    kind = _kind(hint)
    if kind in _SORTS or (isinstance(kind, type) and dataclasses.is_dataclass(kind)):
        return kind
    if isinstance(kind, tuple) and kind[0] == "fixed" and all(_plain(part) for part in kind[1]):
        return kind
    raise Unsupported(f"a tuple of {hint} (its items must be int, bool, str, a frozen dataclass, or pairs of int, bool, str or those or None)")


def _plain(kind: Any) -> bool:
    """int, bool or str, or one of them or None."""
    return kind in _SORTS or (isinstance(kind, tuple) and kind[0] == "optional" and kind[1] in _SORTS)


def _arrays(kind: Any, name: str) -> Any:
    """The z3 arrays that hold a tuple's items of ``kind`` from index 0: one array of a plain
    kind, or a dataclass's named tuple of its fields' arrays."""
    if kind in _SORTS:
        return z3.Array(name, z3.IntSort(), _ITEM_SORTS[kind]())
    if isinstance(kind, tuple) and kind[0] == "optional":
        return Maybe(z3.Array(f"{name} is None", z3.IntSort(), z3.BoolSort()), _arrays(kind[1], name))
    if isinstance(kind, tuple) and kind[0] == "fixed":
        return _fixed(len(kind[1]))(*(_arrays(part, f"{name}[{k}]") for k, part in enumerate(kind[1])))
    if isinstance(kind, tuple) and kind[0] == "items" and isinstance(kind[1], tuple) and kind[1][0] == "items":
        raise Unsupported(f"a tuple of tuples ({name})")
    if isinstance(kind, tuple) and kind[0] == "items":  # a tuple field of a dataclass held in a tuple
        # each item's tuple: an array (by index) of its arrays and an array of its lengths
        return _map_leaves(lambda leaf: z3.Array(f"{name}|{leaf}", z3.IntSort(), leaf.sort()), _fresh(kind, name))
    if isinstance(kind, tuple):
        raise Unsupported(f"a tuple of tuples ({name})")
    hints = typing.get_type_hints(kind)
    return _struct(kind)(*(_arrays(_kind(hints[f.name]), f"{name}.{f.name}") for f in dataclasses.fields(kind)))


def _constant_arrays(kind: Any) -> Any:
    """Arrays holding some value of ``kind`` everywhere: an empty tuple's items."""
    return _map_leaves(lambda leaf: z3.K(z3.IntSort(), leaf), _default(kind))


def _map_leaves(fn: Callable[..., Any], *values: Any) -> Any:
    """``fn`` over the z3 terms of values of one shape (named tuples of terms), in that shape."""
    first = values[0]
    if isinstance(first, tuple):
        return type(first)(*(_map_leaves(fn, *parts) for parts in zip(*values, strict=True)))
    return fn(*values)


def fresh(hint: Any, name: str) -> Any:
    """A symbolic value of a parameter's type: z3 constants named after ``name`` and its fields."""
    return _fresh(_kind(hint), name)


def _fresh(kind: Any, name: str) -> Any:
    if kind in _SORTS:
        return _SORTS[kind](name)
    if isinstance(kind, tuple) and kind[0] == "items":
        return Items(_arrays(kind[1], name), z3.Int(f"len({name})"))
    if isinstance(kind, tuple) and kind[0] == "fixed":
        return _fixed(len(kind[1]))(*(_fresh(part, f"{name}[{k}]") for k, part in enumerate(kind[1])))
    if isinstance(kind, tuple):
        return Maybe(z3.Bool(f"{name} is None"), _fresh(kind[1], name))
    hints = typing.get_type_hints(kind)
    return _struct(kind)(*(fresh(hints[f.name], f"{name}.{f.name}") for f in dataclasses.fields(kind)))


def facts(value: Any) -> list[Any]:
    """What every value of the type of ``value`` (made by ``fresh``) satisfies: each tuple's
    length is a natural."""
    if isinstance(value, Items):
        return [value.length >= 0]
    if isinstance(value, tuple):
        return [fact for part in value for fact in facts(part)]
    return []


def item(items: Items, index: Any) -> Any:
    """The item at ``index`` (0 <= index < length) of a tuple's terms, for a claim."""
    return _selected(items.array, _term(index))


def same(left: Any, right: Any) -> Any:
    """Python's ``==`` of two values of one type (dataclasses field by field), for a claim."""
    return _equal(left, right)


def same_items(left: Items, right: Items) -> Any:
    """Two tuples of one item type hold the same items: equal lengths and equal arrays (which
    is more than Python's ``==`` asks, so a claim of it proves the tuples equal)."""
    return z3.And(left.length == right.length, *(a == b for a, b in zip(_leaves_of(left.array), _leaves_of(right.array), strict=True)))


# The recursive function of ``in`` for each shape of a tuple's items: z3 takes one definition of it.
_MEMBERS: dict[tuple[str, ...], Any] = {}


def member(items: Items, value: Any) -> Any:
    """Python's ``value in items`` for a tuple of ints, bools, strs, pairs or dataclasses of them:
    some index below its length holds an item equal to ``value`` (``==``, field by field), as
    the recursive function ``in(t, n, x, i) = i < n and (t[i] == x or in(t, n, x, i + 1))`` from
    index 0, which ends (``n - i`` falls by one on each call while it is positive). A recursive
    function, not an ``Exists``, so that a loop's recursive function may call it (z3 takes no
    quantifier in a recursive definition); a claim states ``in`` with it too (``x in t``)."""
    arrays, values = _leaves_of(items.array), _leaves_of(value)
    if _shape(_selected(items.array, z3.IntVal(0))) != _shape(value):
        raise Unsupported("`in` of a value that is not of the tuple's items")
    key = tuple(str(a.sort()) for a in arrays)
    function = _MEMBERS.get(key)
    if function is None:
        held = [z3.Const(f"in@t{n}", a.sort()) for n, a in enumerate(arrays)]
        sought = [z3.Const(f"in@x{n}", v.sort()) for n, v in enumerate(values)]
        length, at = z3.Int("in@n"), z3.Int("in@i")
        function = z3.RecFunction(f"in:{'|'.join(key)}", *(a.sort() for a in arrays), z3.IntSort(), *(v.sort() for v in values), z3.IntSort(), z3.BoolSort())
        here = _equal(_selected(_rebuilt(items.array, held), at), _rebuilt(value, sought))
        z3.RecAddDefinition(function, [*held, length, *sought, at], z3.If(at < length, z3.Or(here, function(*held, length, *sought, at + 1)), z3.BoolVal(False)))
        _MEMBERS[key] = function
    return function(*arrays, items.length, *values, z3.IntVal(0))


# Python's sorted() and a filtering generator over a tuple of n items: each application's items are
# a z3 function of the index of its own (``sorted@out``, ``filter@out``; the result's array a lambda
# of it; a filter's length a constant ``filter@count``) named by a digest of its arguments (the same
# arguments, the same result: both are deterministic), and the facts that define them are kept by
# that digest (``side_facts``): a filter's ground facts (0 <= count <= n) and, for each builtin, two
# quantified facts, each over one index: ``forward`` (item i of the result is the argument's item
# at perm(i) below n, or sel(i), an index below n whose item holds the condition) and ``back``
# (item j of the argument, one the condition keeps, is the result's item at inv(j) or ins(j)
# below its length). The argument's items are read through its stores and lambdas down to reads
# of array constants and functions of the index (``_read_at``), and each fact's patterns are the
# terms that read its index (a result's items, an argument's reads, the map), so z3 instantiates
# a fact at the indices a claim reads; no array is read under a quantifier where a function can
# be, so z3 also builds models of the facts (it finds a claim's premises satisfiable) at once.
# The two ways together can feed each other new indices without end (the maps are not inverses
# of each other: a weaker encoding, for which z3 builds models readily): a claim takes the ways
# its step reads (``side_facts(..., only=...)``). Not translated in a loop's body (the names
# would not follow the loop's names from one turn to the next).
WAYS = ("sorted forward", "sorted back", "filter forward", "filter back")
_SIDE: dict[str, dict[str, list[Any]]] = {}  # by digest: "ground", "forward" and "back" facts
_SIDE_KIND: dict[str, str] = {}  # sorted or filter, by digest
_LOOPING: list[int] = [0]  # how many loop definitions (recursive functions) are being translated
_FILTERING: list[int] = [0]  # how many filters' conditions are being translated


def _digest(*parts: Any) -> str:
    text = "\n".join(f"{p.sexpr()} : {p.sort()}" if isinstance(p, z3.ExprRef) else str(p) for p in parts)
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def _index_map(name: str) -> Callable[[Any], Any]:
    """A map from indices to indices: an uninterpreted function of an int."""
    function = z3.Function(name, z3.IntSort(), z3.IntSort())
    return lambda at: function(at)


def permuted(items: Items) -> Items:
    """``sorted(t)``: the items of ``t`` in some order, the same length: items of its own
    (``sorted@out``), item i the argument's item perm(i) and item j of the argument the result's
    item inv(j), perm and inv maps of 0..n-1 into itself (``side_facts``). Only what sorted
    guarantees whenever it returns is encoded (the result's items are its argument's and the
    argument's are the result's), not the order it picks, so a proof over it holds whatever order
    that is (equal keys ordered by their values, which the code only carries, included)."""
    arrays, n = _leaves_of(items.array), items.length
    digest = _digest("sorted", n, *arrays)
    made = [_read_by(f"sorted@out{k}#{digest}", a) for k, a in enumerate(arrays)]
    if digest not in _SIDE:
        perm, inv = (_index_map(f"sorted@{what}#{digest}") for what in ("perm", "inv"))
        _SIDE_KIND[digest] = "sorted"
        _SIDE[digest] = {"ground": [], **_mapped(perm, inv, n, n, made, arrays, None)}
    return Items(_rebuilt(items.array, [_as_array(o) for o in made]), n)


def filtered(items: Items, at: Any, condition: Any) -> Items:
    """``tuple(x for x in t if c)``: items of its own (``filter@out``) and a length ``count``
    between 0 and len(t), item i the argument's item sel(i), sel mapping 0..count-1 into the
    indices ``at`` below len(t) whose ``condition`` holds, and each such item j of the argument
    the result's item ins(j) (``side_facts``). Their order is not encoded, nor how often one
    repeats (the items as a set), so a proof over it holds for the real ones."""
    arrays, n = _leaves_of(items.array), items.length
    digest = _digest("filter", n, at, condition, *arrays)
    made = [_read_by(f"filter@out{k}#{digest}", a) for k, a in enumerate(arrays)]
    count = z3.Int(f"filter@count#{digest}")
    if digest not in _SIDE:
        sel, ins = (_index_map(f"filter@{what}#{digest}") for what in ("sel", "ins"))
        _SIDE_KIND[digest] = "filter"
        _SIDE[digest] = {"ground": [count >= 0, z3.Or(count <= n, n < 0)], **_mapped(sel, ins, n, count, made, arrays, (at, condition))}
    return Items(_rebuilt(items.array, [_as_array(o) for o in made]), count)


def _read_by(name: str, like: Any) -> Any:
    """The items of a result as a function of the index (an array read is its application: z3
    builds a model of a function under a quantifier where it often fails to for an array)."""
    return z3.Function(name, z3.IntSort(), like.sort().range())


def _as_array(function: Any) -> Any:
    at = z3.Int("side@at")
    return z3.Lambda([at], function(at))


def _mapped(there: Callable[[Any], Any], back: Callable[[Any], Any], n: Any, count: Any,
            made: list[Any], arrays: list[Any], kept: tuple[Any, Any] | None) -> dict[str, list[Any]]:
    """The two quantified facts of a result (functions ``made`` of the index, ``count`` items)
    read from an argument (``arrays``, ``n`` items) through ``there``, a map of 0..count-1 onto
    the indices below n whose condition (``kept``: the index it reads and the condition; None:
    every index) holds, ``back`` its inverse: ``forward`` at each index i of the result (patterns:
    the result's items at i, there(i)), ``back`` at each index j of the argument (the terms that
    read its items at j, back(j)). The argument's items are read through its stores and lambdas
    (``_read_at``), so no array is read under a quantifier where a function can be."""
    i, j = z3.Ints("side@i side@j")
    s, r = there(i), back(j)

    def holds(index: Any) -> Any:
        return z3.BoolVal(True) if kept is None else z3.substitute(kept[1], (kept[0], index))

    reads = [_read_at(a, j) for a in arrays]
    return {
        "forward": [z3.ForAll([i], z3.Implies(z3.And(0 <= i, i < count), z3.And(
            0 <= s, s < n, holds(s), *(o(i) == _read_at(a, s) for o, a in zip(made, arrays, strict=True)))),
            patterns=[s, *(o(i) for o in made)])],
        "back": [z3.ForAll([j], z3.Implies(z3.And(0 <= j, j < n, holds(j)), z3.And(
            0 <= r, r < count, *(o(r) == read for o, read in zip(made, reads, strict=True)))),
            patterns=[r, *_triggers(reads, j)])],
    }


def _read_at(array: Any, index: Any) -> Any:
    """``array[index]`` with the stores, lambdas, constant arrays and conditionals it is built
    from read through (an ``If`` for a store; a lambda's body at the index), down to reads of
    array constants and applications of functions."""
    if z3.is_store(array):
        return z3.If(index == array.arg(1), array.arg(2), _read_at(array.arg(0), index))
    if z3.is_quantifier(array) and array.is_lambda() and array.num_vars() == 1:
        return z3.substitute_vars(array.body(), index)
    if z3.is_K(array):
        return array.arg(0)
    if z3.is_app_of(array, z3.Z3_OP_ITE):
        return z3.If(array.arg(0), _read_at(array.arg(1), index), _read_at(array.arg(2), index))
    return z3.Select(array, index)


def _triggers(terms: list[Any], var: Any) -> list[Any]:
    """The subterms of ``terms`` that read ``var`` directly (a function applied to it, an array
    constant read at it): a quantifier's patterns over ``var``."""
    found: dict[int, Any] = {}
    todo = list(terms)
    while todo:
        term = todo.pop()
        if not z3.is_app(term):
            continue
        kind = term.decl().kind()
        if (kind == z3.Z3_OP_UNINTERPRETED or (kind == z3.Z3_OP_SELECT and z3.is_const(term.arg(0)))) and any(arg.eq(var) for arg in term.children()):
            found.setdefault(term.get_id(), term)
        todo.extend(term.children())
    return list(found.values())


def side_facts(*terms: Any, only: str | Sequence[str] | None = None) -> list[Any]:
    """The facts that define each result of sorted() and of a filtering generator in ``terms``
    (values of an encoding, named tuples of terms), and in those facts in turn: what the encoding
    of those builtins is, given with a claim over it as its premises (as ``facts`` are). Every
    ground fact, and the quantified facts of the ways ``only`` names (``WAYS``: "sorted forward",
    "filter back", ...; "sorted" or "filter" for both of a builtin's; None for all): fewer true
    facts, a weaker premise, so a claim proved from them holds all the more; z3 decides a step
    that needs no more sooner, and finds its premises satisfiable."""
    wanted = WAYS if only is None else (only,) if isinstance(only, str) else tuple(only)
    unknown = [w for w in wanted if not any(way == w or way.startswith(f"{w} ") for way in WAYS)]
    if unknown:
        raise ValueError(f"side_facts: no such way {unknown[0]!r} (one of {', '.join(WAYS)}, sorted or filter)")
    found: dict[str, dict[str, list[Any]]] = {}
    seen: set[int] = set()
    todo = [t for t in _leaves_of(list(terms)) if isinstance(t, z3.ExprRef)]
    while todo:
        term = todo.pop()
        if term.get_id() in seen:
            continue
        seen.add(term.get_id())
        if z3.is_quantifier(term):
            todo.append(term.body())
            continue
        if not z3.is_app(term):
            continue
        name = term.decl().name()
        if name.startswith(("sorted@", "filter@")) and "#" in name:
            digest = name.rsplit("#", 1)[1]
            if digest in _SIDE and digest not in found:
                found[digest] = _SIDE[digest]
                todo.extend(fact for made in _SIDE[digest].values() for fact in made)
        todo.extend(term.children())

    def chosen(digest: str, part: str) -> bool:
        way = f"{_SIDE_KIND[digest]} {part}"
        return part == "ground" or any(way == w or way.startswith(f"{w} ") for w in wanted)

    return [fact for digest, made in found.items() for part, facts_of in made.items() if chosen(digest, part) for fact in facts_of]


def _selected(arrays: Any, index: Any) -> Any:
    """The item at ``index`` of a tuple's arrays (a dataclass's fields read together)."""
    return _map_leaves(lambda array: z3.Select(array, index), arrays)


def _stored(arrays: Any, index: Any, item: Any) -> Any:
    return _map_leaves(lambda array, leaf: z3.Store(array, index, leaf), arrays, item)


def _joined(first: Items, second: Items) -> Items:
    """``first + second``: the items of ``first``, then those of ``second``."""
    k = z3.Int("k")

    def join(a: Any, b: Any) -> Any:
        return z3.Lambda([k], z3.If(k < first.length, z3.Select(a, k), z3.Select(b, k - first.length)))

    return Items(_map_leaves(join, first.array, second.array), first.length + second.length)


def _default(kind: Any) -> Any:
    """Some value of ``kind``: what an encoding holds beside a None flag (never read)."""
    if kind is object:
        return z3.Const("object@unread", OBJECT)
    if kind in _SORTS:
        return _term(kind())
    if isinstance(kind, tuple) and kind[0] == "items":
        return Items(_constant_arrays(kind[1]), z3.IntVal(0))
    if isinstance(kind, tuple) and kind[0] == "fixed":
        return _fixed(len(kind[1]))(*(_default(part) for part in kind[1]))
    if isinstance(kind, tuple):
        return Maybe(z3.BoolVal(True), _default(kind[1]))
    hints = typing.get_type_hints(kind)
    return _struct(kind)(*(_default(_kind(hints[f.name])) for f in dataclasses.fields(kind)))


def struct(cls: type, *fields: Any) -> Any:
    """The terms of a dataclass value with the given field terms (a record a claim builds)."""
    return _struct(cls)(*(_term(f) for f in fields))


def concrete(value: Any, hint: Any) -> Any:
    """The z3 value of a Python value of a parameter's type (for checks on concrete inputs)."""
    return _concrete(value, _kind(hint))


def _concrete(value: Any, kind: Any) -> Any:
    if kind is object:  # a carried value: a constant named by its repr (None: NONE)
        return NONE if value is None else z3.Const(f"object {value!r}", OBJECT)
    if kind in _SORTS:
        return _term(value)
    if isinstance(kind, tuple) and kind[0] == "items":
        arrays = _constant_arrays(kind[1])
        for index, item in enumerate(value):
            arrays = _stored(arrays, z3.IntVal(index), _concrete(item, kind[1]))
        return Items(arrays, z3.IntVal(len(value)))
    if isinstance(kind, tuple) and kind[0] == "fixed":
        return _fixed(len(kind[1]))(*(_concrete(part, part_kind) for part, part_kind in zip(value, kind[1], strict=True)))
    if isinstance(kind, tuple):
        if value is None:
            return Maybe(z3.BoolVal(True), _fresh(kind[1], "unread"))
        return Maybe(z3.BoolVal(False), _concrete(value, kind[1]))
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


def generated(fn: Callable[..., Any], *, opaque: Sequence[Callable[..., Any] | str] = ()) -> Generated:
    """The z3 encoding of ``fn`` built from its code, as an ``@encoding`` of ``fn`` with its tie.

    ``opaque`` names callees left uninterpreted: functions of ``fn``'s module (``size``) and pure
    methods of str (``"str.strip"``). Each call of one is an application of a z3 function of its
    arguments that nothing constrains, so a proof over the encoding holds whatever the callee
    computes, the real one included (``applied`` builds the same application for a claim). A
    callee taking or giving records, tuples, pairs or optional values is one such function per
    term of its result (``_applied_leaves``). The loops of an encoding with opaque callees are
    recursive functions of their own, never those of the encoding with the callees inlined."""
    name = f"{fn.__module__}.{fn.__qualname__}"
    names = frozenset(o if isinstance(o, str) else o.__name__ for o in opaque)
    translate = _Translator(fn, opaque=names)

    @encoding(name)
    def encoded(*args: Any) -> Any:
        return translate(args)

    @encoding(name)
    def loop(**names: Any) -> Any:
        return translate.loop(names)

    encoded.__name__ = encoded.__qualname__ = f"generated_{fn.__name__}"
    loop.__name__ = loop.__qualname__ = f"generated_{fn.__name__}_loop"
    kept = f"; {', '.join(sorted(names))} uninterpreted (whatever they compute)" if names else ""
    tied = Tie(name, PROVED, f"generated from the code of {name} (spec.z3gen: every path of its body{kept})", _SEAL)
    encoded.tie = tied  # type: ignore[attr-defined]
    encoded.loop = loop  # type: ignore[attr-defined]
    encoded.successors = translate.successors  # type: ignore[attr-defined]
    encoded.entered = translate.entered  # type: ignore[attr-defined]
    return cast(Generated, encoded)


_STR_METHODS = frozenset({"strip", "lstrip", "rstrip", "lower", "upper", "casefold"})  # pure, str -> str


def applied(callee: Callable[..., Any] | str, *args: Any) -> Any:
    """The application of an opaque callee (a function, or ``"str.strip"``) to terms, as a
    generated encoding that leaves it uninterpreted calls it."""
    if not isinstance(callee, str) and any(isinstance(a, tuple) for a in args):
        return _applied_leaves(callee, args)
    terms = [_term(a) for a in args]
    if isinstance(callee, str):
        kind, method = callee.split(".", 1)
        if kind != "str" or method not in _STR_METHODS:
            raise Unsupported(f"{callee} is not a pure method of str")
        if len(terms) != 1 or not z3.is_string(terms[0]):
            raise Unsupported(f"{callee} of other than one str")
        return z3.Function(f"{callee}/1", z3.StringSort(), z3.StringSort())(*terms)
    returns = _kind(typing.get_type_hints(callee).get("return"))
    if returns not in _SORTS:
        return _applied_leaves(callee, args)
    symbol = z3.Function(f"{callee.__module__}.{callee.__qualname__}/{len(terms)}", *(t.sort() for t in terms), _SORTS[returns]("sort").sort())
    return symbol(*terms)


def _applied_leaves(callee: Callable[..., Any], args: Sequence[Any]) -> Any:
    """An opaque callee taking or giving a record, a tuple, a pair or an optional value: each
    z3 term of its result (the leaves of its type's shape: a record's fields, a tuple's arrays
    and length, an optional value's flag) an uninterpreted function of every z3 term of its
    arguments, so the same call gives the same result and nothing else is known of it."""
    hints = typing.get_type_hints(callee)
    returns = _kind(hints.get("return"))
    given = [a if isinstance(a, tuple) else _term(a) for a in args]
    terms = _leaves_of(given)
    if any(z3.is_quantifier(t) or not isinstance(t, z3.ExprRef) for t in terms):
        raise Unsupported(f"{callee.__qualname__} left opaque given a value that is not z3 terms")
    shape = _leaves_of(_fresh(returns, "result"))
    sorts = [t.sort() for t in terms]
    arity = ",".join(str(t) for t in sorts)
    made = [z3.Function(f"{callee.__module__}.{callee.__qualname__}/{len(terms)}:{k}[{arity}]", *sorts, leaf.sort())(*terms) for k, leaf in enumerate(shape)]
    return _rebuilt(_fresh(returns, "result"), made)


class _Translator:
    def __init__(self, fn: Callable[..., Any], depth: int = 0, opaque: frozenset[str] = frozenset(), owner: type | None = None) -> None:
        """``owner``: the frozen dataclass whose property ``fn`` is the getter of (its ``self``)."""
        if depth > 8:
            raise Unsupported(f"{fn.__qualname__}: calls nested deeper than 8 (recursion is not translated)")
        self.fn, self.depth, self.opaque = fn, depth, opaque
        source = textwrap.dedent(inspect.getsource(fn))
        tree = ast.parse(source)
        definition = tree.body[0]
        getter = owner is not None and isinstance(definition, ast.FunctionDef) and [ast.dump(d) for d in definition.decorator_list] == [ast.dump(ast.Name("property", ast.Load()))]
        if not isinstance(definition, ast.FunctionDef) or (definition.decorator_list and not getter):
            raise Unsupported(f"{fn.__qualname__}: not a plain function definition")
        arguments = definition.args
        if arguments.vararg or arguments.kwarg or arguments.kwonlyargs or arguments.defaults or arguments.posonlyargs:
            raise Unsupported(f"{fn.__qualname__}: only plain positional parameters are translated")
        hints = typing.get_type_hints(fn)
        if getter and arguments.args:
            hints[arguments.args[0].arg] = owner  # a property's self: the record it is read on
        self.parameters: list[str] = []
        self.optional: set[str] = set()
        for parameter in arguments.args:
            try:
                kind = _kind(hints.get(parameter.arg))
            except Unsupported as refused:
                raise Unsupported(f"{fn.__qualname__}: parameter {parameter.arg}: {refused}") from None
            if isinstance(kind, tuple) and kind[0] == "optional":
                self.optional.add(parameter.arg)
            self.parameters.append(parameter.arg)
        self.sorts = [hints[p] for p in self.parameters]
        try:
            self.returns = _kind(hints.get("return"))
        except Unsupported as refused:
            raise Unsupported(f"{fn.__qualname__}: its result: {refused}") from None
        self.body = definition.body
        self.first_line = fn.__code__.co_firstlineno - 1
        self.declared: dict[str, Any] = {}  # locals declared with a type: their kinds
        self.lists: set[str] = set()  # locals declared lists: given [] once, then only appended to, measured or copied

    def __call__(self, args: Sequence[Any]) -> Any:
        return self._block(self.body, self._arguments(args), frozenset(), _Path((), _ends))

    def _arguments(self, args: Sequence[Any]) -> dict[str, Any]:
        if len(args) != len(self.parameters):
            raise Unsupported(f"{self.fn.__qualname__} takes {len(self.parameters)} arguments, not {len(args)}")
        out: dict[str, Any] = {}
        for name, hint, value in zip(self.parameters, self.sorts, args, strict=True):
            if type(value) is tuple and not value:  # an empty tuple literal given
                kind = _kind(hint)
                if not (isinstance(kind, tuple) and kind[0] == "items"):
                    raise Unsupported(f"{self.fn.__qualname__}: parameter {name} given an empty tuple")
                value = Items(_constant_arrays(kind[1]), z3.IntVal(0))
            if value is None and _kind(hint) is object:
                out[name] = NONE
            elif name in self.optional and value is None:
                out[name] = Maybe(z3.BoolVal(True), _default(_kind(hint)[1]))
            elif name in self.optional and not isinstance(value, Maybe):  # a value given for an optional parameter: not None
                out[name] = Maybe(z3.BoolVal(False), value if isinstance(value, tuple) else _term(value))
            else:
                out[name] = value if isinstance(value, tuple) else _term(value)
        return out

    def loop(self, names: dict[str, Any]) -> Any:
        """The function's value from its first loop (a statement of its body, not nested),
        entered with ``names``: every name bound before the loop, with its value, and for a
        ``for`` loop ``_index``, the position of the item it takes next. ``_at=k`` (k > 0) names
        the k-th loop of the body instead (a loop after another: reached from the earlier loop's
        exit, entered with the earlier for loops' hidden names too, ``_index@j`` of the j-th):
        the recursive function the translation of the whole function made for it, never a new one."""
        names = dict(names)
        at = names.pop("_at", 0)
        index, node, env, _given_names = self._entered(names, at)
        return self._while(node, {}, self.body[index + 1:], env, frozenset(self.optional & set(names)), _Path((), _ends), define=not at)

    def successors(self, **names: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
        """Each path of the first loop's body, entered with ``names``, that runs the loop again:
        its conditions (the test first) and the values it passes on, built as the loop's
        recursive functions build their own calls (so the terms are the ones an unfolding
        gives): the instances an induction on the loop assumes its hypothesis at."""
        at = names.pop("_at", 0)
        _index, node, env, given = self._entered(names, at)
        known = _forget(frozenset(self.optional & set(names)), _assigned_names(node.body))
        order = sorted(env)
        found: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

        def again(env_now: dict[str, Any], path: _Path) -> Any:
            found.append((path.conditions, {given.get(n, n): env_now[n] for n in order}))
            return _default(self.returns)

        def ends(_translator: _Translator, env_now: dict[str, Any], _known: frozenset[str], path: _Path) -> Any:
            return again(env_now, path)

        def jump(statement: ast.stmt, env_now: dict[str, Any], _known: frozenset[str], path: _Path) -> Any:
            return again(env_now, path) if isinstance(statement, ast.Continue) else _default(self.returns)

        self._block(node.body, env, known, _Path((self._boolean(node.test, env, known),), ends, jump))
        return found

    def entered(self, *args: Any) -> dict[str, Any]:
        """The names the first loop is entered with when the function is called on ``args``: the
        parameters and what the assignments before the loop bind (``_index`` 0 for a ``for``
        loop), as ``loop`` takes them: the state an induction on the loop ends at. An ``if``
        before the loop whose body returns (an early exit, no ``else``) is passed on the path
        that reaches the loop, where its test is false: a claim about that path states it."""
        index, node = next(((i, n) for i, n in enumerate(self.body) if isinstance(n, (ast.While, ast.For))), (None, None))
        if node is None or index is None:
            raise Unsupported(f"{self.fn.__module__}.{self.fn.__qualname__} has no loop in its body")
        env, known = self._arguments(args), frozenset[str]()
        for statement in self.body[:index]:
            if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) and isinstance(statement.value.value, str):
                continue
            if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) and statement.value is not None:
                self.declared[statement.target.id] = self._declared(statement)
                env, known = self._assigned(statement, statement.target.id, statement.value, env, known)
            elif isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
                env, known = self._assigned(statement, statement.targets[0].id, statement.value, env, known)
            elif isinstance(statement, ast.If) and not statement.orelse and statement.body and isinstance(statement.body[-1], ast.Return):
                self._boolean(statement.test, env, known)  # translated (so refused if outside the subset), then passed
                known = known | _not_none(statement.test, False)
            else:
                raise Unsupported(f"{self._where(statement)}: only assignments and early returns before the loop are read for its entry")
        if isinstance(node, ast.For):
            _loop, setup = self._as_while(node)
            env = {**env, **{given: self._integer(start, env, known) for given, start in zip(_HIDDEN, setup.values(), strict=False)}}
        return env

    def _entered(self, names: dict[str, Any], at: int = 0) -> tuple[int, ast.While, dict[str, Any], dict[str, str]]:
        """The ``at``-th loop of the body (as a while loop), its place, the names it is entered
        with, and the given names of the hidden ones (its own ``_index`` and ``_stop``, those of
        the for loops before it ``_index@j`` and ``_stop@j``)."""
        if at:  # the whole function translated first: its later loops as the code reaches them
            self([_fresh(_kind(hint), name) for name, hint in zip(self.parameters, self.sorts, strict=True)])
        loops = [(i, n) for i, n in enumerate(self.body) if isinstance(n, (ast.While, ast.For))]
        if len(loops) <= at:
            raise Unsupported(f"{self.fn.__module__}.{self.fn.__qualname__} has no loop {at} in its body")
        index, node = loops[at]
        given: dict[str, str] = {}
        for j, (_place, earlier) in enumerate(loops[:at]):
            if isinstance(earlier, ast.For):
                given.update({hidden: f"{name}@{j}" for hidden, name in zip(self._as_while(earlier)[1], _HIDDEN, strict=False)})
        own: dict[str, str] = {}
        if isinstance(node, ast.For):
            node, setup = self._as_while(node)
            own = {hidden: name for hidden, name in zip(setup, _HIDDEN, strict=False)}
        hidden_names = {*_HIDDEN, *given.values()}
        env = {name: value if isinstance(value, tuple) else _term(value) for name, value in names.items() if name not in hidden_names}
        for hidden, name in {**given, **own}.items():
            if name not in names:
                raise Unsupported(f"{self._where(node)}: a loop entered midway needs {', '.join(sorted({**given, **own}.values()))}: the position each for loop takes next (and where a range stops)")
            env[hidden] = _term(names[name])
        return index, node, env, {**given, **own}

    def _where(self, node: ast.AST) -> str:
        return f"{self.fn.__module__}.{self.fn.__qualname__} line {self.first_line + getattr(node, 'lineno', 1)}"

    def _block(self, statements: list[ast.stmt], env: dict[str, Any], known: frozenset[str], path: _Path) -> Any:
        """The value of the first return on every path through ``statements``; ``known`` holds
        the optional names a test on this path has shown are not None; ``path`` the conditions
        that led here and what follows when the statements end (inside a loop: run it again)."""
        for index, statement in enumerate(statements):
            if isinstance(statement, ast.Return):
                if statement.value is None:
                    raise Unsupported(f"{self._where(statement)}: a bare return")
                return self._result(statement.value, env, known)
            if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) and isinstance(statement.value.value, str):
                continue  # a docstring
            if isinstance(statement, ast.Expr) and self._appends(statement.value):
                env = self._appended(statement.value, env, known)
                continue
            if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) and statement.value is not None:
                self.declared[statement.target.id] = self._declared(statement)
                env, known = self._assigned(statement, statement.target.id, statement.value, env, known)
                continue
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
                env, known = self._assigned(statement, statement.targets[0].id, statement.value, env, known)
                continue
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Tuple):
                env, known = self._unpacked(statement, statement.targets[0], statement.value, env, known)
                continue
            if isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
                value = ast.BinOp(ast.Name(statement.target.id, ast.Load()), statement.op, statement.value)
                env, known = self._assigned(statement, statement.target.id, ast.copy_location(value, statement), env, known)
                continue
            if isinstance(statement, ast.For):
                return self._while(*self._as_while(statement), statements[index + 1:], env, known, path)
            if isinstance(statement, ast.If):
                rest = statements[index + 1:]
                condition = self._boolean(statement.test, env, known)
                then = self._block(statement.body + rest, env, known | _not_none(statement.test, True), path.taking(condition))
                otherwise = self._block(statement.orelse + rest, env, known | _not_none(statement.test, False), path.taking(z3.Not(condition)))
                return _ite(condition, then, otherwise)
            if isinstance(statement, ast.While):
                return self._while(statement, {}, statements[index + 1:], env, known, path)
            if isinstance(statement, (ast.Continue, ast.Break)):
                if path.loop is None:
                    raise Unsupported(f"{self._where(statement)}: {type(statement).__name__.lower()} outside a loop")
                return path.loop(statement, env, known, path)
            raise Unsupported(f"{self._where(statement)}: {type(statement).__name__} is not translated")
        return path.ends(self, env, known, path)

    def _appends(self, node: ast.expr) -> bool:
        """``name.append(x)`` of a local list."""
        return (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "append"
            and isinstance(node.func.value, ast.Name) and node.func.value.id in self.lists and len(node.args) == 1 and not node.keywords
        )

    def _appended(self, node: ast.expr, env: dict[str, Any], known: frozenset[str]) -> dict[str, Any]:
        """The names after ``name.append(x)``: ``x`` stored at the list's length, one longer."""
        assert isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)
        name = node.func.value.id
        items = env[name]
        kind = self.declared[name][1]
        given = node.args[0]
        held = self._as_kind(given, kind, env, known) if not (isinstance(given, ast.Tuple) and isinstance(kind, tuple) and kind[0] == "fixed") else (
            _fixed(len(given.elts))(*(self._as_kind(e, part, env, known) for e, part in zip(given.elts, kind[1], strict=True)))
            if len(given.elts) == len(kind[1]) else None
        )
        if held is None or _shape(_selected(items.array, z3.IntVal(0))) != _shape(held):
            raise Unsupported(f"{self._where(node)}: {name}.append of a value that is not of the list's items")
        return {**env, name: Items(_stored(items.array, items.length, held), items.length + 1)}

    def _listed(self, node: ast.expr, env: dict[str, Any], known: frozenset[str]) -> Any:
        """The argument of ``len()`` or ``tuple()``: a local list read there (a copy or its length), else the value."""
        if isinstance(node, ast.Name) and node.id in self.lists and node.id in env:
            return env[node.id]
        return self._expr(node, env, known)

    def _unpacked(self, statement: ast.stmt, target: ast.Tuple, value: ast.expr, env: dict[str, Any], known: frozenset[str]) -> tuple[dict[str, Any], frozenset[str]]:
        """``a, b = pair``: each name the pair's item at its place."""
        pair = self._expr(value, env, known)
        if not all(isinstance(e, ast.Name) for e in target.elts) or not _is_fixed(pair) or len(pair) != len(target.elts):
            raise Unsupported(f"{self._where(statement)}: an unpacking of other than a pair into as many names")
        names = frozenset(e.id for e in target.elts if isinstance(e, ast.Name))
        if names & self.optional:
            raise Unsupported(f"{self._where(statement)}: an optional parameter is assigned")
        out = {**env, **{e.id: part for e, part in zip(target.elts, pair, strict=True) if isinstance(e, ast.Name)}}
        return out, _forget(known, names)

    def _declared(self, statement: ast.AnnAssign) -> Any:
        """The kind of a local declared with a type (``best: str | None = None``)."""
        namespace = {**self.fn.__globals__, **vars(typing)}
        try:
            hint = eval(compile(ast.Expression(statement.annotation), "<annotation>", "eval"), namespace)  # noqa: S307 (the model's own annotation)
            if typing.get_origin(hint) is list and len(typing.get_args(hint)) == 1 and isinstance(statement.target, ast.Name):
                # A local list: a value while no other name can see it (given [] here, then only
                # appended to, or read by len() and tuple(), which copies): a tuple of its items.
                if not isinstance(statement.value, ast.List) or statement.value.elts:
                    raise Unsupported(f"the list {statement.target.id} is declared with other than []")
                if statement.target.id in self.parameters:
                    raise Unsupported(f"the list {statement.target.id} has a parameter's name")
                self.lists.add(statement.target.id)
                return ("items", _item_kind(typing.get_args(hint)[0]))
            return _kind(hint)
        except Unsupported as refused:
            raise Unsupported(f"{self._where(statement)}: {refused}") from None

    def _assigned(
        self, statement: ast.stmt, name: str, value: ast.expr, env: dict[str, Any], known: frozenset[str]
    ) -> tuple[dict[str, Any], frozenset[str]]:
        """The names after ``name = value``, and which optional names are known not None."""
        if name in self.optional:
            raise Unsupported(f"{self._where(statement)}: an optional parameter is assigned")
        kind = self.declared.get(name)
        if kind is not None and isinstance(kind, tuple) and kind[0] == "optional":
            if isinstance(value, ast.Constant) and value.value is None:
                return {**env, name: Maybe(z3.BoolVal(True), _default(kind[1]))}, known - {name}
            held = self._expr(value, env, known)
            if isinstance(held, Maybe):
                return {**env, name: held}, known - {name}
            return {**env, name: Maybe(z3.BoolVal(False), held)}, known | {name}
        if name in self.lists and not (isinstance(statement, ast.AnnAssign) and isinstance(value, ast.List) and not value.elts):
            raise Unsupported(f"{self._where(statement)}: the list {name} is given another value (a list is given [] once, then appended to)")
        if kind is not None and isinstance(kind, tuple) and kind[0] == "items" and isinstance(value, (ast.Tuple, ast.List)):
            arrays = _constant_arrays(kind[1])
            for position, element in enumerate(value.elts):  # a literal's items stored from index 0
                held = self._expr(element, env, known)
                if _shape(_selected(arrays, z3.IntVal(0))) != _shape(held):
                    raise Unsupported(f"{self._where(statement)}: a tuple literal whose items are not the declared tuple's")
                arrays = _stored(arrays, z3.IntVal(position), held)
            return {**env, name: Items(arrays, z3.IntVal(len(value.elts)))}, _forget(known, frozenset({name}))
        return {**env, name: self._expr(value, env, known)}, _forget(known, frozenset({name}))

    def _as_while(self, node: ast.For) -> tuple[ast.While, dict[str, ast.expr]]:
        """``for x in t: body`` as ``i = 0; while i < len(t): x = t[i]; i += 1; body``, and ``for x
        in range(a, b): body`` as ``i = a; s = b; while i < s: x = i; i += 1; body``, with names no
        code can name (the tuple ``t`` a name the body does not assign); the hidden names and the
        expressions they start from (``_index`` and ``_stop`` to ``loop``)."""
        target = node.target
        names_only = isinstance(target, ast.Name) or (isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts))
        ranged = (
            isinstance(node.iter, ast.Call) and isinstance(node.iter.func, ast.Name) and node.iter.func.id == "range"
            and "range" not in self.fn.__globals__ and 1 <= len(node.iter.args) <= 2 and not node.iter.keywords
        )
        walked = node.iter.value if isinstance(node.iter, ast.Attribute) else node.iter  # a tuple, or a field of a record
        if node.orelse or not names_only or not (isinstance(walked, ast.Name) or (ranged and isinstance(target, ast.Name))):
            raise Unsupported(f"{self._where(node)}: only `for name in tuple_name:` (or `for a, b in tuple_name:`, `for x in name.field:`, `for i in range(...)`) without else is translated")
        if isinstance(walked, ast.Name) and walked.id in _assigned_names(node.body):
            raise Unsupported(f"{self._where(node)}: the loop assigns the tuple it walks")
        index = ast.Name(f"for@{self._where(node)}", ast.Load())
        if isinstance(node.iter, ast.Call):
            stop = ast.Name(f"stop@{self._where(node)}", ast.Load())
            bounds = node.iter.args
            setup: dict[str, ast.expr] = {index.id: bounds[0] if len(bounds) == 2 else ast.Constant(0), stop.id: bounds[-1]}
            test = ast.Compare(index, [ast.Lt()], [stop])
            item = ast.Assign([target], ast.Name(index.id, ast.Load()))
        else:
            setup = {index.id: ast.Constant(0)}
            test = ast.Compare(index, [ast.Lt()], [ast.Call(ast.Name("len", ast.Load()), [node.iter], [])])
            item = ast.Assign([target], ast.Subscript(node.iter, index, ast.Load()))
        step = ast.AugAssign(ast.Name(index.id, ast.Store()), ast.Add(), ast.Constant(1))
        loop = ast.While(test, [item, step, *node.body], [])
        for made in (index, test, item, step, loop, *setup.values()):
            ast.copy_location(made, node)
            ast.fix_missing_locations(made)
        return loop, setup

    def _result(self, node: ast.expr, env: dict[str, Any], known: frozenset[str]) -> Any:
        """A returned value, as the declared result holds it (a value of an optional result is
        a Maybe that is not None)."""
        optional = isinstance(self.returns, tuple) and self.returns[0] == "optional"
        fixed = isinstance(self.returns, tuple) and self.returns[0] == "fixed"
        if isinstance(node, ast.Tuple) and not node.elts and isinstance(self.returns, tuple) and self.returns[0] == "items":
            return Items(_constant_arrays(self.returns[1]), z3.IntVal(0))
        if optional and isinstance(node, ast.Tuple) and isinstance(self.returns[1], tuple) and self.returns[1][0] == "fixed" and len(node.elts) == len(self.returns[1][1]):
            inner = self.returns[1][1]
            return Maybe(z3.BoolVal(False), _fixed(len(node.elts))(*(self._as_kind(e, kind, env, known) for e, kind in zip(node.elts, inner, strict=True))))
        if isinstance(node, ast.Tuple) and not fixed:
            raise Unsupported(f"{self._where(node)}: a tuple literal returned where the result is not a fixed tuple")
        if isinstance(node, ast.Tuple) and len(node.elts) == len(self.returns[1]):
            return _fixed(len(node.elts))(*(self._as_kind(e, kind, env, known) for e, kind in zip(node.elts, self.returns[1], strict=True)))
        if optional and isinstance(node, ast.Constant) and node.value is None:
            return Maybe(z3.BoolVal(True), _default(self.returns[1]))
        value = self._expr(node, env, known)
        if optional and not isinstance(value, Maybe):
            return Maybe(z3.BoolVal(False), value)
        return value

    def _as_kind(self, node: ast.expr, kind: Any, env: dict[str, Any], known: frozenset[str]) -> Any:
        """A value of a declared ``kind`` (an optional kind's value a Maybe, None its flag; None
        given as an object: ``NONE``)."""
        if kind is object and isinstance(node, ast.Constant) and node.value is None:
            return NONE
        if isinstance(kind, tuple) and kind[0] == "optional":
            if isinstance(node, ast.Constant) and node.value is None:
                return Maybe(z3.BoolVal(True), _default(kind[1]))
            value = self._expr(node, env, known)
            return value if isinstance(value, Maybe) else Maybe(z3.BoolVal(False), value)
        return self._expr(node, env, known)

    def _while(self, node: ast.While, setup: dict[str, ast.expr], rest: list[ast.stmt], env: dict[str, Any], known: frozenset[str], path: _Path, define: bool = True) -> Any:
        """The loop as z3 recursive functions of the names bound before it, entered with ``env``
        (and, for a ``for`` loop, its hidden names at the values of their ``setup`` expressions);
        ``define`` False: only the functions already made for it (else refused)."""
        if node.orelse:
            raise Unsupported(f"{self._where(node)}: a while loop with an else")
        env = {**env, **{name: self._integer(start, env, known) for name, start in setup.items()}}
        known = _forget(known, _assigned_names(node.body))  # a name the body may set to None is tested again each turn
        names = sorted(env)
        leaves = _leaves_of([env[n] for n in names])
        key = (self.fn.__module__, self.fn.__qualname__, self.first_line + node.lineno, tuple(names), tuple(str(t.sort()) for t in leaves),
               tuple(sorted(self.opaque)))  # a loop translated with callees left opaque is another function
        functions = _LOOPS.get(key)
        if functions is None and not define:
            raise Unsupported(f"{self._where(node)}: the code does not reach this loop with the names {', '.join(names)}")
        if functions is None:
            functions = self._define(node, rest, names, env, known, path, key)
        shape = _fresh(self.returns, "result")
        return _rebuilt(shape, [f(*leaves) for f in functions])

    def _define(
        self, node: ast.While, rest: list[ast.stmt], names: list[str], env: dict[str, Any], known: frozenset[str], outer: _Path,
        key: tuple[Any, ...],
    ) -> list[Any]:
        where = self._where(node)
        template = [env[n] for n in names]
        symbols = [z3.Const(f"{n}@{where}", t.sort()) for n, t in zip(_leaf_names(names, template), _leaves_of(template), strict=True)]
        start = dict(zip(names, _rebuilt(template, symbols), strict=True))
        shape = _leaves_of(_fresh(self.returns, "result"))
        kept = f"[{','.join(key[5])} opaque]" if key[5] else ""
        functions = [z3.RecFunction(f"{key[0]}.{key[1]}:loop@{key[2]}{kept}:{k}", *[t.sort() for t in symbols], leaf.sort()) for k, leaf in enumerate(shape)]
        _LOOPS[key] = functions
        test = self._boolean(node.test, start, known)
        distance = self._distance(node.test, start, known)
        obligations: list[Any] = []

        def again(env_after: dict[str, Any], path: _Path) -> Any:
            after = [env_after[n] for n in names]
            obligations.append(z3.Implies(z3.And(test, *path.conditions), self._distance(node.test, dict(zip(names, after, strict=True)), known) < distance))
            return _rebuilt(_fresh(self.returns, "result"), [f(*_leaves_of(after)) for f in functions])

        def ends(_translator: _Translator, env_now: dict[str, Any], _known: frozenset[str], path: _Path) -> Any:
            return again({n: env_now[n] for n in names}, path)

        def jump(statement: ast.stmt, env_now: dict[str, Any], known_now: frozenset[str], path: _Path) -> Any:
            if isinstance(statement, ast.Continue):
                return again({n: env_now[n] for n in names}, path)
            return self._block(rest, {n: env_now[n] for n in names}, known_now, outer_path)

        outer_path = _Path((), outer.ends, outer.loop)
        _LOOPING[0] += 1
        try:
            inside = self._block(node.body, start, known, _Path((test,), ends, jump))
            after = self._block(rest, start, known, _Path((z3.Not(test),), outer.ends, outer.loop))
        finally:
            _LOOPING[0] -= 1
        body = _ite(test, inside, after)
        for function, leaf in zip(functions, _leaves_of(body), strict=True):
            z3.RecAddDefinition(function, symbols, leaf)
        for obligation in obligations:
            verdict, solver = check([z3.Not(obligation)], LIMIT_MS)
            if verdict != z3.unsat:
                del _LOOPS[key]
                if verdict == z3.unknown:
                    raise Undecided(f"{where}: z3 gave no answer within its limit of {LIMIT_MS:,} ms ({solver.reason_unknown()}) on whether the loop ends: it is not encoded")
                raise Unsupported(f"{where}: the loop cannot be shown to end (its test's distance does not fall on every path that runs it again)")
        return functions

    def _distance(self, test: ast.expr, env: dict[str, Any], known: frozenset[str]) -> Any:
        """The natural measure of a loop test ``a < b`` (``b - a``; ``a <= b``: ``b - a + 1``;
        and so on), positive while the test holds; the first operand of an ``and``."""
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            test = test.values[0]
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], _ORDERED):
            a, b = self._integer(test.left, env, known), self._integer(test.comparators[0], env, known)
            op = test.ops[0]
            return b - a if isinstance(op, ast.Lt) else b - a + 1 if isinstance(op, ast.LtE) else a - b if isinstance(op, ast.Gt) else a - b + 1
        raise Unsupported(f"{self._where(test)}: a loop whose test is not an order of two ints (first in an `and`) is not translated")

    def _boolean(self, node: ast.expr, env: dict[str, Any], known: frozenset[str]) -> Any:
        value = self._expr(node, env, known)
        if not isinstance(value, z3.ExprRef) or not z3.is_bool(value):
            raise Unsupported(f"{self._where(node)}: a condition that is not a boolean (Python's truth of other values is not translated)")
        return value

    def _expr(self, node: ast.expr, env: dict[str, Any], known: frozenset[str]) -> Any:
        if isinstance(node, ast.Constant):
            return _term(node.value, self._where(node))
        if isinstance(node, ast.Name):
            if node.id in self.lists:
                raise Unsupported(f"{self._where(node)}: the list {node.id} read other than by len(), tuple() or append (another name could see it change)")
            if node.id in env:
                held = env[node.id]
                if isinstance(held, Maybe) and node.id in known:
                    return held.value  # an optional value shown not None on this path
                return held
            return self._global(node)
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
            return self._sliced(node, node.slice, env, known)
        if isinstance(node, ast.Subscript):
            items = self._expr(node.value, env, known)
            if _is_fixed(items):
                at = _constant_int(node.slice)
                if at is None or not -len(items) <= at < len(items):
                    raise Unsupported(f"{self._where(node)}: a subscript of a fixed tuple other than a constant index within it")
                return items[at]
            if not isinstance(items, Items):
                raise Unsupported(f"{self._where(node)}: a subscript of a value that is not a tuple of ints, bools or strs")
            index = self._integer(node.slice, env, known)
            return _selected(items.array, z3.If(index < 0, index + items.length, index))
        if isinstance(node, ast.BoolOp):
            parts, shown = [], known
            for value in node.values:  # Python reads each operand only where the ones before let it
                parts.append(self._boolean(value, env, shown))
                shown = shown | _not_none(value, isinstance(node.op, ast.And))
            return z3.And(*parts) if isinstance(node.op, ast.And) else z3.Or(*parts)
        if isinstance(node, ast.Attribute):
            named = node.value.id if isinstance(node.value, ast.Name) else None
            what = named or "a value"
            holder = self._expr(node.value, env, known)
            if isinstance(holder, Maybe):
                if named not in known:
                    raise Unsupported(f"{self._where(node)}: {what}.{node.attr} where {what} may be None")
                holder = holder.value
            owner = _CLASSES.get(type(holder))
            getter = getattr(owner, node.attr, None) if owner is not None and node.attr not in holder._fields else None
            if isinstance(getter, property) and getter.fget is not None and owner is not None and owner.__module__ == self.fn.__module__:
                return _Translator(getter.fget, self.depth + 1, self.opaque, owner=owner)([holder])  # a property: its getter's code
            if not _is_record(holder) or _is_fixed(holder) or node.attr not in getattr(holder, "_fields", ()):
                raise Unsupported(f"{self._where(node)}: the field {node.attr} of {what}")
            field = getattr(holder, node.attr)
            if isinstance(field, Maybe) and f"{named}.{node.attr}" in known:
                return field.value  # an optional field shown not None on this path
            return field
        if (
            isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Is, ast.IsNot))
            and isinstance(node.comparators[0], ast.Constant) and node.comparators[0].value is None
        ):
            held = env[node.left.id] if isinstance(node.left, ast.Name) and node.left.id in env else self._expr(node.left, env, _forget(known, _dotted_names(node.left)))
            if not isinstance(held, Maybe):
                raise Unsupported(f"{self._where(node)}: an `is None` test of a value that cannot be None")
            return held.none if isinstance(node.ops[0], ast.Is) else z3.Not(held.none)
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.Not):
                return z3.Not(self._boolean(node.operand, env, known))
            if isinstance(node.op, ast.USub):
                return -self._integer(node.operand, env, known)
            raise Unsupported(f"{self._where(node)}: the operator {type(node.op).__name__} is not translated")
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and (isinstance(node.left, ast.Tuple) or isinstance(node.right, ast.Tuple)):
            return self._concatenated(node, env, known)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left = self._expr(node.left, env, known)
            if isinstance(left, Items):
                right = self._expr(node.right, env, known)
                if not isinstance(right, Items) or _shape(right.array) != _shape(left.array):
                    raise Unsupported(f"{self._where(node)}: a tuple joined with something that is not a tuple of the same items")
                return _joined(left, right)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.FloorDiv, ast.Mod)):
            divisor = _constant_int(node.right)
            if divisor is None or divisor <= 0:
                raise Unsupported(f"{self._where(node)}: the operator {type(node.op).__name__} by other than a positive int constant is not translated")
            dividend = self._integer(node.left, env, known)
            return dividend / divisor if isinstance(node.op, ast.FloorDiv) else dividend % divisor  # z3's div and mod: Python's for a positive divisor
        if isinstance(node, ast.BinOp):
            operation = _BINARY.get(type(node.op))
            if operation is None:
                raise Unsupported(f"{self._where(node)}: the operator {type(node.op).__name__} is not translated")
            return operation(self._integer(node.left, env, known), self._integer(node.right, env, known))
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)):
            found = self._member(node, self._expr(node.left, env, known), self._expr(node.comparators[0], env, known))
            return found if isinstance(node.ops[0], ast.In) else z3.Not(found)
        if isinstance(node, ast.Compare):
            terms = [self._expr(node.left, env, known)] + [self._expr(c, env, known) for c in node.comparators]
            pairs = []
            for op, left, right in zip(node.ops, terms, terms[1:], strict=False):
                compare = _COMPARE.get(type(op))
                if compare is None:
                    raise Unsupported(f"{self._where(node)}: the comparison {type(op).__name__} is not translated")
                if isinstance(op, (ast.Eq, ast.NotEq)) and _is_record(left) and _is_record(right):
                    if _shape(left) != _shape(right):
                        raise Unsupported(f"{self._where(node)}: a comparison of values of two dataclasses")
                    if _carries_object(left):
                        raise Unsupported(f"{self._where(node)}: {_OBJECT_EQUALITY}")
                    same = _equal(left, right)
                    pairs.append(same if isinstance(op, ast.Eq) else z3.Not(same))
                    continue
                if not isinstance(left, z3.ExprRef) or not isinstance(right, z3.ExprRef):
                    raise Unsupported(f"{self._where(node)}: a comparison of a dataclass, tuple or optional value is not translated")
                if left.sort() != right.sort():
                    raise Unsupported(f"{self._where(node)}: a comparison of {left.sort()} with {right.sort()}")
                if left.sort() == OBJECT:
                    raise Unsupported(f"{self._where(node)}: {_OBJECT_EQUALITY}")
                if isinstance(op, _ORDERED) and not z3.is_int(left):
                    raise Unsupported(f"{self._where(node)}: an order of {left.sort()} values is not translated")
                pairs.append(compare(left, right))
            return z3.And(*pairs) if len(pairs) > 1 else pairs[0]
        if isinstance(node, ast.Tuple) and node.elts:
            return _fixed(len(node.elts))(*(self._expr(e, env, known) for e in node.elts))
        if isinstance(node, ast.IfExp):
            test = node.test
            return _ite(
                self._boolean(test, env, known),
                self._expr(node.body, env, known | _not_none(test, True)),
                self._expr(node.orelse, env, known | _not_none(test, False)),
            )
        if (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args and not node.keywords
            and f"str.{node.func.attr}" in self.opaque
        ):
            return applied(f"str.{node.func.attr}", self._expr(node.func.value, env, known))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
            if node.func.id == "tuple" and "tuple" not in self.fn.__globals__ and len(node.args) == 1 and isinstance(node.args[0], ast.GeneratorExp):
                return self._filtered(node.args[0], env, known)
            if node.func.id == "sorted" and "sorted" not in self.fn.__globals__ and len(node.args) == 1:
                items = self._expr(node.args[0], env, known)
                if not isinstance(items, Items):
                    raise Unsupported(f"{self._where(node)}: sorted() of a value that is not a tuple")
                if _LOOPING[0]:
                    raise Unsupported(f"{self._where(node)}: sorted() in a loop (or a function a loop calls) is not translated")
                return permuted(items)
            if node.func.id == "tuple" and "tuple" not in self.fn.__globals__ and len(node.args) == 1:
                items = self._listed(node.args[0], env, known)
                if not isinstance(items, Items):
                    raise Unsupported(f"{self._where(node)}: tuple() of a value that is not a tuple")
                return items
            if node.func.id in ("min", "max") and node.func.id not in self.fn.__globals__ and len(node.args) == 2:
                a, b = (self._integer(arg, env, known) for arg in node.args)
                return z3.If(b < a, b, a) if node.func.id == "min" else z3.If(b > a, b, a)  # Python's: the first of equals
            if node.func.id == "len" and "len" not in self.fn.__globals__ and len(node.args) == 1:
                items = self._listed(node.args[0], env, known)
                if not isinstance(items, Items):
                    raise Unsupported(f"{self._where(node)}: len of a value that is not a tuple of ints, bools or strs")
                return items.length
            callee = self.fn.__globals__.get(node.func.id)
            arguments = [
                None if isinstance(a, ast.Constant) and a.value is None else () if isinstance(a, ast.Tuple) and not a.elts else self._expr(a, env, known)
                for a in node.args
            ]  # None and () are read by the parameter or field they are given to
            if isinstance(callee, type) and dataclasses.is_dataclass(callee) and _package(callee.__module__) == _package(self.fn.__module__):
                return self._constructed(node, callee, arguments)
            if not inspect.isfunction(callee) or callee.__module__ != self.fn.__module__:
                raise Unsupported(f"{self._where(node)}: a call of {node.func.id}, not a function of {self.fn.__module__}")
            if node.func.id in self.opaque:
                return applied(callee, *arguments)
            return _Translator(callee, self.depth + 1, self.opaque)(arguments)
        raise Unsupported(f"{self._where(node)}: {type(node).__name__} is not translated")

    def _filtered(self, node: ast.GeneratorExp, env: dict[str, Any], known: frozenset[str]) -> Items:
        """``tuple(x for x in t if c)``: the items of ``t`` whose condition holds, in order
        (``filtered``); one ``for`` over a tuple, the item itself given, any number of ``if``s."""
        if len(node.generators) != 1:
            raise Unsupported(f"{self._where(node)}: a generator with more than one for")
        loop = node.generators[0]
        if loop.is_async or not isinstance(loop.target, ast.Name) or not isinstance(node.elt, ast.Name) or node.elt.id != loop.target.id:
            raise Unsupported(f"{self._where(node)}: a generator other than `x for x in t if ...` (its own items, filtered)")
        items = self._expr(loop.iter, env, known)
        if not isinstance(items, Items):
            raise Unsupported(f"{self._where(node)}: a generator over a value that is not a tuple")
        if _LOOPING[0]:
            raise Unsupported(f"{self._where(node)}: a filtering generator in a loop (or a function a loop calls) is not translated")
        at = z3.Int(f"filter@at{_FILTERING[0]}")  # the index a condition is read at (one name per nesting: a digest names the result)
        inner = {**env, loop.target.id: _selected(items.array, at)}
        inner_known = _forget(known, frozenset({loop.target.id}))
        _FILTERING[0] += 1
        try:
            tests = [self._boolean(test, inner, inner_known) for test in loop.ifs]
        finally:
            _FILTERING[0] -= 1
        return filtered(items, at, z3.And(*tests) if tests else z3.BoolVal(True))

    def _member(self, node: ast.Compare, value: Any, items: Any) -> Any:
        """``value in t`` for a tuple ``t`` of such values: ``member``."""
        if not isinstance(items, Items) or isinstance(value, (Items, Maybe)):
            raise Unsupported(f"{self._where(node)}: `in` of other than a value that is not None and a tuple of such values")
        if _shape(_selected(items.array, z3.IntVal(0))) != _shape(value):
            raise Unsupported(f"{self._where(node)}: `in` of a value that is not of the tuple's items")
        if _carries_object(value):
            raise Unsupported(f"{self._where(node)}: {_OBJECT_EQUALITY}")
        return member(items, value)

    def _sliced(self, node: ast.Subscript, bounds: ast.Slice, env: dict[str, Any], known: frozenset[str]) -> Items:
        """``t[a:b]`` as Python reads it: a negative bound counts from the end, then each is
        clipped to 0..len(t); ``t[:b]`` keeps ``t``'s arrays (only the length changes)."""
        items = self._expr(node.value, env, known)
        if not isinstance(items, Items) or bounds.step is not None:
            raise Unsupported(f"{self._where(node)}: a slice of a value that is not a tuple, or with a step")
        n = items.length

        def bound(given: ast.expr | None, otherwise: Any) -> Any:
            if given is None:
                return otherwise
            at = self._integer(given, env, known)
            at = z3.If(at < 0, at + n, at)
            return z3.If(at < 0, 0, z3.If(at > n, n, at))

        start, end = bound(bounds.lower, z3.IntVal(0)), bound(bounds.upper, n)
        length = z3.If(end > start, end - start, 0)
        if bounds.lower is None:
            return Items(items.array, length)
        k = z3.Int("k")
        return Items(_map_leaves(lambda array: z3.Lambda([k], z3.Select(array, k + start)), items.array), length)

    def _constructed(self, node: ast.Call, cls: type, arguments: list[Any]) -> Any:
        """``cls(...)``: each field its argument, else its default; an optional field holds a
        value as a Maybe that is not None."""
        fields = dataclasses.fields(cls)
        hints = typing.get_type_hints(cls)
        if len(arguments) > len(fields):
            raise Unsupported(f"{self._where(node)}: {cls.__name__}(...) with more arguments than fields")
        values = []
        for position, field in enumerate(fields):
            kind = _kind(hints[field.name])
            if position < len(arguments):
                value = arguments[position]
            elif field.default is not dataclasses.MISSING:
                value = None if field.default is None else () if field.default == () else _term(field.default, self._where(node))
            else:
                raise Unsupported(f"{self._where(node)}: {cls.__name__}(...) without its field {field.name}")
            optional = isinstance(kind, tuple) and kind[0] == "optional"
            if isinstance(value, tuple) and not value:  # an empty tuple literal
                if not (isinstance(kind, tuple) and kind[0] == "items"):
                    raise Unsupported(f"{self._where(node)}: {cls.__name__}.{field.name} given an empty tuple")
                value = Items(_constant_arrays(kind[1]), z3.IntVal(0))
            if kind is object and value is None:
                value = NONE
            elif optional and value is None:
                value = Maybe(z3.BoolVal(True), _default(kind[1]))
            elif optional and not isinstance(value, Maybe):
                value = Maybe(z3.BoolVal(False), value)
            elif isinstance(value, Maybe) and not optional:
                raise Unsupported(f"{self._where(node)}: {cls.__name__}.{field.name} given a value that may be None")
            values.append(value)
        return _struct(cls)(*values)

    def _concatenated(self, node: ast.BinOp, env: dict[str, Any], known: frozenset[str]) -> Any:
        """``t + (a, b)`` or ``(a,) + t``: a tuple literal joined with a tuple of the same items."""
        sides: list[Any] = []
        for side in (node.left, node.right):
            sides.append([self._expr(e, env, known) for e in side.elts] if isinstance(side, ast.Tuple) else self._expr(side, env, known))
        tuples = [side for side in sides if isinstance(side, Items)]
        if not tuples:
            raise Unsupported(f"{self._where(node)}: two tuple literals joined (a fixed tuple is not translated)")
        template = tuples[0].array
        if isinstance(sides[0], Items) and isinstance(sides[1], list) and all(_shape(_selected(template, z3.IntVal(0))) == _shape(i) for i in sides[1]):
            arrays, length = sides[0].array, sides[0].length  # appended: stores, which z3 evaluates where it cannot a lambda
            for position, appended in enumerate(sides[1]):
                arrays = _stored(arrays, length + position, appended)
            return Items(arrays, length + len(sides[1]))
        joined: list[Items] = []
        for side in sides:
            if isinstance(side, list):
                arrays = template
                for position, item in enumerate(side):
                    if _shape(_selected(template, z3.IntVal(0))) != _shape(item):
                        raise Unsupported(f"{self._where(node)}: a tuple literal whose items are not the tuple's")
                    arrays = _stored(arrays, z3.IntVal(position), item)
                joined.append(Items(arrays, z3.IntVal(len(side))))
            elif isinstance(side, Items) and _shape(side.array) == _shape(template):
                joined.append(side)
            else:
                raise Unsupported(f"{self._where(node)}: a tuple joined with something that is not a tuple of the same items")
        return _joined(joined[0], joined[1])

    def _integer(self, node: ast.expr, env: dict[str, Any], known: frozenset[str]) -> Any:
        value = self._expr(node, env, known)
        if not isinstance(value, z3.ExprRef) or not z3.is_int(value):
            raise Unsupported(f"{self._where(node)}: arithmetic on a value that is not an int is not translated")
        return value

    def _global(self, node: ast.Name) -> Any:
        if node.id not in self.fn.__globals__:
            raise Unsupported(f"{self._where(node)}: the name {node.id} is not defined")
        value = self.fn.__globals__[node.id]
        if type(value) is tuple:
            return self._constant_tuple(node, value)
        return _term(value, self._where(node))

    def _constant_tuple(self, node: ast.Name, value: tuple[Any, ...]) -> Items:
        """A module constant that is a tuple (``LEVELS``): its items stored from index 0 in an
        array of the item type its annotation declares (``tuple[str, ...]``), its length a
        constant, so a loop over it is one of a known number of turns. Refused unless the module
        declares it a tuple of ints, bools or strs and every item is one."""
        declared = getattr(inspect.getmodule(self.fn), "__annotations__", {}).get(node.id)
        try:
            kind = _kind(eval(declared, self.fn.__globals__) if isinstance(declared, str) else declared)  # noqa: S307 (the module's own annotation)
        except (Unsupported, NameError, SyntaxError, TypeError):
            kind = None
        if not (isinstance(kind, tuple) and kind[0] == "items" and kind[1] in _SORTS and all(type(v) is kind[1] for v in value)):
            raise Unsupported(f"{self._where(node)}: the module constant {node.id} is not declared a tuple of int, bool or str (`{node.id}: tuple[str, ...] = ...`)")
        return cast(Items, _concrete(value, kind))


class _Path(NamedTuple):
    """The conditions a path took to get here, what follows when its statements end, and what
    ``continue`` and ``break`` do (inside a loop)."""

    conditions: tuple[Any, ...]
    ends: Callable[[_Translator, dict[str, Any], frozenset[str], _Path], Any]
    loop: Callable[[ast.stmt, dict[str, Any], frozenset[str], _Path], Any] | None = None

    def taking(self, condition: Any) -> _Path:
        return self._replace(conditions=(*self.conditions, condition))


def _ends(translator: _Translator, _env: dict[str, Any], _known: frozenset[str], _path: _Path) -> Any:
    raise Unsupported(f"{translator.fn.__module__}.{translator.fn.__qualname__}: a path ends without a return")


_HIDDEN = ("_index", "_stop")  # a for loop's hidden names as ``loop`` and ``entered`` give them: the next position, a range's stop


# Each loop's recursive functions, by function, line, names and their sorts: z3 takes one
# definition of a recursive function, so a loop is defined once and called from then on.
_LOOPS: dict[tuple[Any, ...], list[Any]] = {}


def _leaves_of(value: Any) -> list[Any]:
    """The z3 terms of a value: a term itself, or those of each part of a named tuple."""
    if isinstance(value, (tuple, list)):
        return [leaf for part in value for leaf in _leaves_of(part)]
    return [value]


def _leaf_names(names: list[str], values: list[Any]) -> list[str]:
    return [f"{name}.{k}" if isinstance(value, tuple) else name for name, value in zip(names, values, strict=True) for k in range(len(_leaves_of(value)))]


def _rebuilt(shape: Any, leaves: list[Any]) -> Any:
    """``shape`` (a term, a named tuple of them, or a list) with its terms replaced in order."""
    queue = iter(leaves)

    def build(part: Any) -> Any:
        if isinstance(part, list):
            return [build(p) for p in part]
        if isinstance(part, tuple):
            return type(part)(*(build(p) for p in part))
        return next(queue)

    return build(shape)


def _assigned_names(statements: list[ast.stmt]) -> frozenset[str]:
    """Every name the statements assign, at any depth."""
    names: set[str] = set()
    for statement in statements:
        for node in ast.walk(statement):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
    return frozenset(names)


def _shape(value: Any) -> Any:
    """The structure of a value's terms: the named tuple types and the leaves' sorts."""
    if isinstance(value, tuple):
        return (type(value).__name__, tuple(_shape(part) for part in value))
    return str(value.sort()) if isinstance(value, z3.ExprRef) else type(value).__name__


_OBJECT_EQUALITY = "a comparison of object (JSON) values is not translated (Python's == on them is not an equivalence: NaN)"


def _carries_object(value: Any) -> bool:
    """Whether a value holds an object (a JSON value carried), at any depth."""
    return any(isinstance(leaf, z3.ExprRef) and _holds_object(leaf.sort()) for leaf in _leaves_of(value))


def _holds_object(sort: z3.SortRef) -> bool:
    return bool(sort == OBJECT or (isinstance(sort, z3.ArraySortRef) and _holds_object(sort.range())))


def _is_record(value: Any) -> bool:
    return isinstance(value, tuple) and not isinstance(value, (Items, Maybe))


def _constant_int(node: ast.expr) -> int | None:
    """The value of an int literal (``2``, ``-1``), else None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _constant_int(node.operand)
        return None if inner is None else -inner
    value = node.value if isinstance(node, ast.Constant) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _is_fixed(value: Any) -> bool:
    return isinstance(value, tuple) and type(value).__name__.startswith("Tuple") and type(value) is _fixed(len(value))


def _equal(left: Any, right: Any) -> Any:
    """Python's ``==`` of two values of one dataclass: field by field; two optional fields are
    equal when both are None, or neither is and their values are equal."""
    if isinstance(left, Maybe):
        return z3.If(left.none, right.none, z3.And(z3.Not(right.none), _equal(left.value, right.value)))
    if isinstance(left, Items):
        raise Unsupported("a comparison of tuples is not translated")
    if isinstance(left, tuple):
        return z3.And(*(_equal(a, b) for a, b in zip(left, right, strict=True)))
    return left == right


def _dotted_names(node: ast.expr) -> frozenset[str]:
    """``name`` or ``name.field`` as one string (the values a None test can be about); else none."""
    if isinstance(node, ast.Name):
        return frozenset({node.id})
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return frozenset({f"{node.value.id}.{node.attr}"})
    return frozenset()


def _forget(known: frozenset[str], names: frozenset[str]) -> frozenset[str]:
    """``known`` without ``names`` and the fields of them (a name given a new value is tested again)."""
    return frozenset(k for k in known if k not in names and k.split(".", 1)[0] not in names)


def _not_none(test: ast.expr, truth: bool) -> frozenset[str]:
    """The names (and ``name.field``s) ``test`` shows are not None when it evaluates to ``truth``."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        right = test.comparators[0]
        if isinstance(right, ast.Constant) and right.value is None:
            if (isinstance(test.ops[0], ast.Is) and not truth) or (isinstance(test.ops[0], ast.IsNot) and truth):
                return _dotted_names(test.left)
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
