"""The 16 cvar laws of control.md S4: the layering, bind, toggle and alias laws proved by
induction on the code of the model, the rest bounded and hunted, every one judged by
``spec.oracles.cvar`` and run on production too.

Proofs. The model computes each list rule as a loop of a function of bend/cvar.py over a list:
``registry`` folds ``admit`` over the declarations, ``lookup`` searches the registry,
``layer_value`` folds ``pick`` over the sets of a layer, ``config_value`` folds ``over`` over the
layers of the config, ``value`` folds ``agent_value`` over the family, ``written`` folds ``keep``
over the registry, ``replicated`` filters it, ``press`` folds ``first`` over the binds and
``_expand`` walks the commands and calls itself on an alias's body. A law about lists of any
length is an induction on the list, ``of`` that function (``spec.evidence.induction``): the base
runs the function on the empty list, and the step runs the function itself on a list of two
items, its callees abstracted (``spec.proofs.callees``) so that the state its loop carries after
the first item is an opaque token, and checks that the loop's body applies the step function to
that state and the last item; the step functions are then run on every abstract state. Both are
``exhaust(..., about=[fn])`` over whole finite domains of abstract states: the tie between the
fold and its step is checked on the code, not read from it. Values, bodies and ids are *opaque
tokens* that raise on any use but identity: a function that ran on them read nothing but the
booleans it is given, so its outcome for a token is its outcome for every value.

The expansion is checked the same way on ``_expand`` itself: one command from any state (an
opaque sequence so far), every verb, a missing or found body, past the limit or not, and each
outcome of the nested expansion (its recursive call abstracted; the depth a token whose
comparison with the limit answers each way), and ``expand`` is ``_expand`` at depth 0 with the
limit len(names) + 1 (``len`` answering any natural number). The toggles run ``toggle``,
``set_last``, ``agent_value`` and ``global_toggle`` themselves on opaque worlds, and a Bool cvar's
value is a bool because ``check_decl`` reads only a value's class (run on spies of every class a
value has). What the induction principle and the cycle arguments add is said in words in each
law's docstring; the pigeonhole step of alias_expands_fully's judge and alias_unknown_reported
(a nest past len(names) + 1 levels repeats a name, so the table has a cycle) is mathematics,
proved by z3 as ``lemma``s about no code (``_cycle_lemmas``). Validity of a set in the layering
proofs is the model's ``check``; its typing is proved apart (cvar_value_typed).

The typing of values (cvar_registry_typed, cvar_value_typed) is proved by induction on the value,
of ``has_type`` (``_typing_lemma``): has_type itself and the oracle's holds run on one spy of each
class of value (its content answering only the reads its class decides: an int's sign, a float's
finiteness, whether a str is an off word, the choices' membership; a container's iteration one
arbitrary item), their recursion and ``all`` abstracted, every type kind; it holds for every value
whose objects name each key once. Not proved, and why: cvar_persist_roundtrip rests on the cfg
text (``format_value``, ``parse_value``, the word grammar, quoting) read back over all strings:
no encoding of those rules was written. It is judged by the oracle on every type kind x every
input class (bounded) and hunted with Hypothesis (tested). The alias chains and cycles of 1..12
aliases (which alias a cycle of n names) stay bounded beside the proofs.
"""

from __future__ import annotations

import functools
import itertools
import math
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

from hypothesis import strategies as st

from bend import cvar as m
from eukhe.settings import cfg as pcfg
from eukhe.settings import cvar as p
from eukhe.settings import cvar_table
from spec.evidence import Bound, Evidence, Finite, LawFailed, all_of, also, boolean, bounded, domain, examples, exhaust, induction
from spec.oracles import cvar as o
from spec.proofs import Cons, Opaque, Prefix, Rest, callees, lemma, stateless_loop
from spec.registry import BOUNDED, PROVED, law

# -- opaque values (spec.proofs.Opaque) ----------------------------------------------------------


def _token(name: str) -> Any:
    """An opaque token (spec.proofs.Opaque) typed as anything, to stand in a model's dataclass."""
    return Opaque(name)


A: Any = Opaque("value a")
B: Any = Opaque("value b")
REG: Any = Opaque("registry")

# -- conversions: the oracle's types and JSON values to the model's and production's ----------


def m_type(t: o.Type) -> m.Type:
    if t[0] == "Enum":
        return m.Type(m.ENUM, tuple(t[1]))
    if t[0] in ("List", "Map"):
        return m.Type(t[0], (), m_type(t[1]))
    return m.Type(t[0])


def p_type(t: o.Type) -> p.CvarType:
    if t[0] == "Enum":
        return p.CvarType(p.ENUM, tuple(t[1]))
    if t[0] in ("List", "Map"):
        return p.CvarType(t[0], item=p_type(t[1]))
    return p.CvarType(t[0])


def o_type(t: p.CvarType | m.Type) -> o.Type:
    if t.kind == "Enum":
        return ("Enum", t.choices)  # a tuple already (both types say so): its own object, so a spy of it stays one
    if t.item is not None:
        return (t.kind, o_type(t.item))
    return (t.kind,)


def same(a: Any, b: Any) -> bool:
    """Equal JSON values, a float and an int told apart (1.0 is not 1 in a transcript)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if type(a) is not type(b) and not (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple))):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return bool(a == b)


# Every type kind, and the item kinds List and Map take.
TYPES: tuple[o.Type, ...] = (
    ("Bool",), ("Int",), ("Nat",), ("NatOrOff",), ("Float",), ("String",), ("Enum", ("auto", "sse", "off")),
    ("List", ("String",)), ("List", ("Nat",)), ("List", ("List", ("Bool",))), ("Map", ("Nat",)), ("Map", ("Float",)), ("Map", ("String",)),
)
# The input classes of a value: each kind's own, the wrong ones, non-finite and huge floats, huge
# integers, empty strings, strings with a line end or non-ASCII, nested and mixed containers.
VALUES: tuple[Any, ...] = (
    True, False, 0, 1, -1, 7, 10**30, -(10**30), 2**64, 0.0, -0.0, 0.5, -1.25, 2.0, 1e300, -1e300, 5e-324, 1e-7,
    math.nan, math.inf, -math.inf, "", "off", "none", "auto", "sse", "x", "a b", "d\u00e9j\u00e0 \u6df1\u3044", "a\nb", "a\rb",
    "\u2028", "\xa0", 'q"t', "back\\", ";", "1", "true", "never", [], ["a"], [1, 2], [True], [[True], []], ["a", 1], [-1],
    {}, {"p": 1}, {"p": 1.5}, {"p": "x"}, {"p": -1}, {"p": ["a"]}, {"p": math.inf}, None,
)
TYPE_DOMAIN = Bound("types", TYPES, bound="the 9 kinds, List and Map of some items")

SCALAR = (
    st.none() | st.booleans() | st.integers(min_value=-(10**40), max_value=10**40)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=4) | st.sampled_from(["off", "none", "auto", "sse", ""])
)
JSON = SCALAR | st.lists(SCALAR, max_size=3) | st.dictionaries(st.text(max_size=2), SCALAR, max_size=2) | st.lists(st.lists(SCALAR, max_size=2), max_size=2)


# The input classes of a value word of a `set` line: each kind's words, signs, leading zeros,
# decimals and malformed decimals, exponents, nan and inf, a decimal past the largest float,
# huge integers, non-ASCII digits, the off words, choices, JSON (good, bad, non-finite), text.
WORDS: tuple[str, ...] = (
    "true", "false", "True", "0", "7", "-3", "-0", "007", "+1", "1.5", "-1.25", "1.", ".5", "1e5", "1E5", "nan", "inf", "-inf",
    "Infinity", "1" * 400 + ".5", "-" + "1" * 400 + ".0", "9" * 50, "-" + "9" * 50, "\u0661\u0662", "\u00b2", "off", "none", "Off",
    "auto", "sse", "", "x", "a b", "d\u00e9j\u00e0", "a\nb", "[]", '["a"]', "[1,2]", "[1.5]", "[[true],[]]", '{"p":1}', '{"p":1.5}',
    '{"p":"x"}', "{", "NaN", "[NaN]", '{"p":Infinity}', "1e400", "[1e400]", "null",
)


def _word_agrees(t: o.Type, word: str) -> bool:
    """``set <id> <word>``: the model's parse_value and production's CvarType.parse read the
    word exactly when the oracle's word grammar does, and give a value of the oracle's type."""
    want = o.word_reads(t, word)
    ok, value = m.parse_value(m_type(t), word)
    if ok != want or (ok and not o.holds(t, m.to_json(value))):
        return False
    try:
        parsed = p_type(t).parse(word)
    except ValueError:
        return not want
    return want and o.holds(t, parsed) and same(parsed, m.to_json(value))


def _typing_agrees(t: o.Type, value: Any) -> bool:
    want = o.holds(t, value)
    return m.has_type(m_type(t), m.from_json(value)) == want and p_type(t).holds(value) == want


@law("cvar_value_typed", "S4", "Each value has the type of its cvar in each agent; an undeclared cvar has no value.", PROVED)
def cvar_value_typed() -> Evidence:
    """Proved for every accepted registry (``registry`` gave it), config and family whose values'
    objects name each key once: an undeclared cvar has no value (``_value_fold``); a declared one's
    value is its default or the value of a set of it that ``check`` accepted, each fold keeping or
    replacing it (``_value_fold``, ``_agent_layers``, ``_config_fold``, ``_over_step``,
    ``_layer_fold``: the last valid set); check is check_decl of lookup of the set's id, the id the
    cvar's (``_check_lemma``; lookup returns the first declaration of the id, ``_lookup_search``),
    and check_decl accepts a value only when has_type(the declaration's type, it)
    (``_valid_typed``); an accepted registry's defaults pass has_type (``_registry_fold``); and
    has_type is the oracle's holds (``_typing_lemma``). Beside it: the typing on every kind x
    input class and the value words (parse_value) judged by the oracle, on production too, hunted;
    the worlds computed, on production too."""
    typing = also(
        exhaust(domain(TYPE_DOMAIN, _values_bound()), _typing_agrees),
        examples(lambda t, value: _typing_agrees(t, value), t=st.sampled_from(TYPES), value=JSON),
    )
    words = also(
        exhaust(domain(TYPE_DOMAIN, Bound("value words", WORDS, bound="the input classes of a value word we chose")), _word_agrees),
        examples(lambda t, word: _word_agrees(t, word), t=st.sampled_from(TYPES), word=st.text(max_size=6) | st.from_regex(r"-?[0-9]{1,400}(\.[0-9]{1,3})?", fullmatch=True)),
    )

    def typed(world: World) -> bool:
        reg, config, family = world
        for i in range(1, len(family) + 1):
            for decl in reg:
                if not o.holds(o_type(decl.type), m.to_json(m.value(reg, config, family[:i], decl.id))):
                    return False
            if m.value(reg, config, family[:i], U) is not None:
                return False
        return True

    def prod_typed(world: World) -> bool:
        reg, config, family = world
        cvars, pfamily = _production(world)
        for i in range(1, len(family) + 1):
            for decl in reg:
                if not o.holds(o_type(decl.type), cvars.value(pfamily[:i], decl.id)):
                    return False
            if cvars.value(pfamily[:i], U) is not None:
                return False
        return True

    worlds = bounded(_worlds(), typed, label=WORLD_LABEL).with_production(bounded(_worlds(), prod_typed, label=WORLD_LABEL))
    proof = all_of(_value_fold(), _agent_layers(), _config_fold(), _over_step(), _layer_fold(), _check_lemma(), _lookup_search(),
                   _valid_typed(), _registry_fold(), _typing_lemma())
    return also(proof, typing, words, worlds)


def _valid_typed() -> Evidence:
    """check_decl accepts a value (None) only when has_type(the declaration's type, the value)
    answered True: check_decl itself on a declaration of tokens, has_type abstracted to each
    outcome, every scope and layer."""
    scopes = Finite("scopes", (m.GLOBAL, m.LOCAL))

    def case(scope: str, local_only: bool, typed: bool) -> bool:
        kind: Any = Opaque("the declaration's type")
        decl = m.Decl("c", kind, scope, False, False, B)
        asked: list[tuple[Any, Any]] = []

        def has_type(t: Any, value: Any) -> bool:
            asked.append((t, value))
            return typed

        with callees(m, has_type=has_type):
            got = m.check_decl(decl, "c", A, local_only)
        if got is None:
            return typed and len(asked) == 1 and asked[0][0] is kind and asked[0][1] is A
        return isinstance(got, m.CvarError)

    return exhaust(domain(scopes, boolean("local only"), boolean("has_type answers True")), case, about=[m.check_decl])


def _values_bound() -> Finite[Any]:
    return Bound("values", VALUES, bound="the input classes of a value we chose (JSON values are infinite)")


# -- the registry (S4.1) --------------------------------------------------------------------

IDS = ("x", "y")
DEFAULTS: tuple[m.Value, ...] = (True, 1, "s", math.inf, 0.5, ())
DECL_TYPES = tuple(m_type(t) for t in (("Bool",), ("Nat",), ("Float",), ("String",), ("List", ("Nat",))))
DECLS = tuple(m.Decl(i, t, s, False, False, d) for i in IDS for t in DECL_TYPES for s in (m.GLOBAL,) for d in DEFAULTS)


def _decl_lists() -> Iterator[tuple[m.Decl, ...]]:
    for n in range(3):
        yield from itertools.product(DECLS, repeat=n)


DECL_LABEL = f"declaration lists of length 0..2 over {len(DECLS)} declarations (2 ids x 5 types x 6 defaults)"


def _p_registry(decls: tuple[m.Decl, ...]) -> p.Registry | p.RegistryError:
    try:
        return p.Registry(p.Cvar(d.id, p_type(o_type(d.type)), d.scope, d.persist, d.replicate, m.to_json(d.default)) for d in decls)
    except p.RegistryError as error:
        return error


@law("cvar_registry_unique", "S4.1", "The registry holds each id once: a second declaration is a RegistryError.", PROVED)
def cvar_registry_unique() -> Evidence:
    """Induction on the declaration list, of registry (its loop checked on its code): the empty
    registry is empty (base); a step refuses an id the registry holds (lookup finds it: induction
    on the registry, of lookup) and keeps a failed registry failed, so an accepted registry never
    holds an id twice and the first duplicate is the error."""
    def unique(decls: tuple[m.Decl, ...]) -> bool:
        ids = [d.id for d in decls]
        typed = all(o.holds(o_type(d.type), m.to_json(d.default)) for d in decls)
        reg = m.registry(decls)
        if len(set(ids)) == len(ids) and typed:
            return reg == decls
        return isinstance(reg, m.RegistryError) and (reg.kind == "duplicate") == _dup_first(decls)

    def prod_unique(decls: tuple[m.Decl, ...]) -> bool:
        ids = [d.id for d in decls]
        typed = all(o.holds(o_type(d.type), m.to_json(d.default)) for d in decls)
        reg = _p_registry(decls)
        if len(set(ids)) == len(ids) and typed:
            return isinstance(reg, p.Registry) and [c.id for c in reg] == ids
        return isinstance(reg, p.RegistryError) and (reg.kind == "duplicate") == _dup_first(decls)

    proof = all_of(_registry_fold(), _lookup_search())
    composed = bounded(_decl_lists(), unique, label=DECL_LABEL)
    return also(proof, composed).with_production(all_of(bounded(_decl_lists(), prod_unique, label=DECL_LABEL), _shipped_table()))


def _dup_first(decls: tuple[m.Decl, ...]) -> bool:
    """Whether the first refused declaration (oracle: a repeated id or an untyped default) is a repeat."""
    seen: set[str] = set()
    for d in decls:
        if d.id in seen:
            return True
        if not o.holds(o_type(d.type), m.to_json(d.default)):
            return False
        seen.add(d.id)
    return False


def _shipped_table() -> Evidence:
    """Production's declarations are the oracle's table, row by row: every setting id, its type,
    scope, flags and default (the seeds' rows and eukhe's own, ``o.OWN``, told apart in the
    domain's name); and the registry of them starts."""
    reg = cvar_table.registry()
    rows = {c.id: (c.id, o_type(c.type), c.scope, c.persist, c.replicate, c.default) for c in reg}

    def row(entry: o.Row) -> bool:
        cvar, t, scope, persist, replicate, default, _ = entry
        got = rows.get(cvar)
        return got is not None and got[:5] == (cvar, t, scope, persist, replicate) and same(got[5], default) and o.holds(t, default)

    if set(rows) != set(o.SHIPPED_IDS) or len(reg) != len(o.SHIPPED):
        raise LawFailed(f"the shipped table's ids differ from the oracle's: {sorted(set(rows) ^ set(o.SHIPPED_IDS))}")
    return exhaust(domain(Finite(f"settings of the table (every id: {len(o.TABLE)} from the seeds, {len(o.OWN)} of eukhe's own)",
                                 o.SHIPPED)), row)


@law("cvar_registry_typed", "S4.1", "Each default of an accepted registry has the type of its cvar.", PROVED)
def cvar_registry_typed() -> Evidence:
    """Proved for every declaration list whose defaults' objects name each key once (the keys of a
    JSON object): registry is the left fold of admit with typed = has_type(its type, its default)
    (``_registry_fold``, checked on its code), admit joins a declaration only when typed and else
    fails with "default" (``_registry_step``), and has_type is the oracle's holds for every type and
    every such value (``_typing_lemma``, induction on the value, of has_type): so an accepted
    registry's defaults are typed by the oracle, and a failed one had an untyped default or a
    repeated id. The declaration lists of length 0..2 and every type x value class stay beside it,
    on production too."""
    def typed(decls: tuple[m.Decl, ...]) -> bool:
        reg = m.registry(decls)
        all_typed = all(o.holds(o_type(d.type), m.to_json(d.default)) for d in decls)
        if isinstance(reg, m.RegistryError):
            return not all_typed or reg.kind == "duplicate"
        return all_typed

    def prod_typed(decls: tuple[m.Decl, ...]) -> bool:
        reg = _p_registry(decls)
        all_typed = all(o.holds(o_type(d.type), m.to_json(d.default)) for d in decls)
        return (not all_typed or reg.kind == "duplicate") if isinstance(reg, p.RegistryError) else all_typed

    def one(t: o.Type, default: Any) -> bool:
        reg = m.registry((m.Decl("x", m_type(t), m.LOCAL, False, False, m.from_json(default)),))
        return isinstance(reg, tuple) == o.holds(t, default)

    def prod_one(t: o.Type, default: Any) -> bool:
        return isinstance(_p_registry((m.Decl("x", m_type(t), m.LOCAL, False, False, m.from_json(default)),)), p.Registry) == o.holds(t, default)

    proof = all_of(_registry_fold(), _typing_lemma())
    model_ev = also(proof, bounded(_decl_lists(), typed, label=DECL_LABEL), exhaust(domain(TYPE_DOMAIN, _values_bound()), one))
    prod_ev = all_of(bounded(_decl_lists(), prod_typed, label=DECL_LABEL), exhaust(domain(TYPE_DOMAIN, _values_bound()), prod_one), _shipped_table())
    return model_ev.with_production(prod_ev)


# -- layers and values (S4, S4.2) ---------------------------------------------------------------

B_ID, N_ID, F_ID, U = "b", "n", "f", "u"
SETS = (m.Set(B_ID, True), m.Set(B_ID, 2), m.Set(N_ID, 2), m.Set(U, True), m.Set(F_ID, math.inf))
SLOT: tuple[tuple[m.Set, ...], ...] = ((),) + tuple((s,) for s in SETS)


def _registry(b_scope: str, n_scope: str, bp: bool = False, br: bool = False, np: bool = False, nr: bool = False) -> tuple[m.Decl, ...]:
    return (
        m.Decl(B_ID, m.Type(m.BOOL), b_scope, bp, br, False),
        m.Decl(N_ID, m.Type(m.NAT), n_scope, np, nr, 0),
        m.Decl(F_ID, m.Type(m.FLOAT), m.LOCAL, np, nr, 1.0),
    )


REGISTRIES = tuple(_registry(b, n) for b in (m.GLOBAL, m.LOCAL) for n in (m.GLOBAL, m.LOCAL))
FLAGGED = tuple(
    _registry(b, n, *flags) for b in (m.GLOBAL, m.LOCAL) for n in (m.GLOBAL, m.LOCAL) for flags in itertools.product((False, True), repeat=4)
)

World = tuple[tuple[m.Decl, ...], tuple[m.Layer, ...], tuple[m.Agent, ...]]


def _worlds() -> Iterator[World]:
    for reg in REGISTRIES:
        for g, pr in itertools.product(SLOT, repeat=2):
            config = (m.Layer("global settings.json", False, g), m.Layer("project settings.json", True, pr))
            for rp, rs in itertools.product((SLOT[0], SLOT[2]), SLOT):
                root = m.Agent("main", rp, rs)
                yield reg, config, (root,)
                for sp, ss in itertools.product((SLOT[0], SLOT[3]), SLOT):
                    yield reg, config, (root, m.Agent("sub", sp, ss))


WORLD_LABEL = ("4 registries x a config of a global and a project file, each 0..1 of 5 sets x a root (profile 0..1 of 1 set, "
               "sets 0..1 of 5) and at most one subagent (profile 0..1 of 1 set, sets 0..1 of 5)")


def _p_sets(sets: tuple[m.Set, ...]) -> list[tuple[str, Any]]:
    return [(s.id, m.to_json(s.value)) for s in sets]


_P_REGISTRIES: dict[int, p.Registry | p.RegistryError] = {}


def _production(world: World) -> tuple[p.Cvars, list[p.AgentLayers]]:
    reg, config, family = world
    # the world registries are module constants: one production registry each (a cache keyed by
    # value would take a default of 1 for one of True, as 1 == True)
    preg = _P_REGISTRIES.setdefault(id(reg), _p_registry(reg))
    assert isinstance(preg, p.Registry)
    cvars = p.Cvars(preg, [p.Layer(l.source, l.project, _p_sets(l.sets)) for l in config])
    return cvars, [p.AgentLayers(a.name, _p_sets(a.profile), _p_sets(a.sets)) for a in family]


FOUND = Finite("what a layer found (nothing, a value)", ("nothing", "a value"))


def _found(kind: str) -> tuple[bool, Any]:
    return (False, None) if kind == "nothing" else (True, A)


# -- the folds, checked on their code -----------------------------------------------------------
#
# Each list rule of the model is a loop of a function of bend/cvar.py over a list (registry over the
# declarations, layer_value over the sets of a layer, config_value over the layers of the config,
# value over the family, written over the registry, press over the binds). A law about lists of
# any length is an induction on the list, ``of`` that function: the base runs the function on the
# empty list; the step runs the function itself on a list of two items with its callees abstracted
# so that the state the loop carries after the first item is an opaque token (any state the items
# before could have made), and checks that the loop's body applies the step function (admit, pick,
# over, agent_value, keep, first) to that state and the last item, and returns its result. Both
# run the real function (``exhaust(..., about=[fn])``): the tie between the fold and its step is
# checked, not read. The step functions are then checked on every abstract state.


@functools.lru_cache(maxsize=None)
def _lookup_search() -> Evidence:
    """``lookup`` returns the first declaration of the id, else None: induction on the registry.
    Base: the empty registry holds nothing. Step: lookup itself on a registry known by its head:
    a head of the id is returned without reading the rest; any other head sends the search on to
    the rest and does nothing else (the loop carries no state: checked on its source,
    ``stateless_loop``)."""
    real = m.lookup
    stateless_loop(real, "reg")
    base = exhaust(domain(Finite("an empty registry", ((),))), lambda reg: real(reg, "c") is None, about=[real])

    def step(matches: bool) -> bool:
        head = m.Decl("c" if matches else "other", REG, m.LOCAL, False, False, A)
        try:
            got = real(Cons(head), "c")  # type: ignore[arg-type]
        except Rest:
            return not matches
        return matches and got is head

    return induction(base, exhaust(domain(boolean("the head's id is the id looked up")), step, about=[real]),
                     of="bend.cvar.lookup", label="the registry searched (lookup returns the first declaration of the id)")


def _registry_step() -> Evidence:
    """The step of ``registry`` (``admit``) on every abstract state: a failed registry (a token
    error), or an accepted one (a token list), with the id declared or not, typed or not."""
    failed = m.RegistryError("duplicate", "earlier")
    states = Finite("registry states (failed, accepted)", ("failed", "accepted"))

    def step(state: str, declared: bool, typed: bool) -> bool:
        decl = m.Decl("id", m.Type(m.BOOL), m.LOCAL, False, False, True)
        before: tuple[m.Decl, ...] | m.RegistryError = failed if state == "failed" else (m.Decl("other", m.Type(m.BOOL), m.LOCAL, False, False, False),)
        after = m.admit(before, decl, declared, typed)
        if state == "failed":
            return after is failed
        if declared:
            return after == m.RegistryError("duplicate", "id")
        if not typed:
            return after == m.RegistryError("default", "id")
        return isinstance(before, tuple) and after == before + (decl,)

    return exhaust(domain(states, boolean("id already declared"), boolean("default typed")), step, about=[m.admit])


@functools.lru_cache(maxsize=None)
def _registry_fold() -> Evidence:
    """``registry`` is the left fold of ``admit``: induction on the declarations. Base: registry(())
    is the empty registry. Step: registry itself on two declarations, its callees abstracted so
    that the state after the first is any registry (failed, or an accepted token): the second is
    admitted with declared = (the state is accepted and lookup finds its id) and typed = has_type
    of its default, and admit's result is the registry; then admit on every abstract state."""
    real = m.registry
    base = exhaust(domain(Finite("an empty declaration list", ((),))), lambda decls: real(decls) == (), about=[real])
    states = Finite("the registry before the declaration (failed, accepted)", ("failed", "accepted"))

    def body(state: str, found: bool, typed: bool) -> bool:
        before: Any = m.RegistryError("duplicate", _token("an earlier id")) if state == "failed" else _token("the accepted registry")
        result: Any = Opaque("admit's result")
        first = m.Decl(_token("first id"), REG, m.LOCAL, False, False, B)
        decl = m.Decl(_token("id"), REG, m.LOCAL, False, False, A)
        calls: list[tuple[Any, ...]] = []

        def lookup(reg: Any, cvar: Any) -> Any:
            calls.append(("lookup", reg, cvar))
            if isinstance(reg, tuple) and not reg:
                return None
            return Opaque("a declaration") if found else None

        def has_type(t: Any, value: Any) -> bool:
            calls.append(("has_type", t, value))
            return typed if value is A else True

        def admit(st: Any, d: Any, declared: bool, ok: bool) -> Any:
            calls.append(("admit", st, d, declared, ok))
            return before if d is first else result

        with callees(m, lookup=lookup, has_type=has_type, admit=admit):
            got = real((first, decl))
        want: list[tuple[Any, ...]] = [] if state == "failed" else [("lookup", before, decl.id)]
        want += [("has_type", REG, A), ("admit", before, decl, state == "accepted" and found, typed)]
        return got is result and _same_calls(calls[3:], want)

    step = all_of(exhaust(domain(states, boolean("lookup finds the id"), boolean("has_type accepts the default")), body, about=[real]),
                  _registry_step())
    return induction(base, step, of="bend.cvar.registry", label="the declaration list (registry is the left fold of admit)")


def _same_calls(got: list[tuple[Any, ...]], want: list[tuple[Any, ...]]) -> bool:
    """Two call records alike: the same names, each argument the same object (a bool or a text equal)."""
    return len(got) == len(want) and all(
        len(g) == len(w) and all(x is y or (isinstance(y, (bool, str)) and type(x) is type(y) and x == y) for x, y in zip(g, w))
        for g, w in zip(got, want))


@functools.lru_cache(maxsize=None)
def _layer_fold() -> Evidence:
    """layer_value = the last valid set of the cvar, for sets of any length: induction on the
    sets, of layer_value. Base: no set finds nothing (without reading the registry). Step:
    layer_value itself on two sets, pick and check abstracted, the first set leaving any found
    state: the second set is picked with (it is of the cvar, it is of the cvar and check accepts
    it, its value), check asked only for a set of the cvar; then ``pick`` on every state: a valid
    set of the cvar replaces it, any other set keeps it."""
    real = m.layer_value
    base = exhaust(domain(boolean("project file, profile or sets")), lambda local: real(REG, (), local, "c") == (False, None), about=[real])

    def body(matches: bool, valid: bool, local: bool) -> bool:
        before: Any = Opaque("found by the sets before")
        result: Any = Opaque("pick's result")
        value: Any = Opaque("the set's value")
        first = m.Set("other", B)
        s = m.Set("c" if matches else "other", value)
        calls: list[tuple[Any, ...]] = []

        def check(reg: Any, st: Any, local_only: bool) -> Any:
            calls.append(("check", reg, st, local_only))
            return None if valid else m.CvarError(m.BAD_VALUE, "c")

        def pick(found: Any, is_of: bool, ok: bool, v: Any) -> Any:
            calls.append(("pick", found, is_of, ok, v))
            return before if v is B else result

        with callees(m, check=check, pick=pick):
            got = real(REG, (first, s), local, "c")
        want: list[tuple[Any, ...]] = [("check", REG, s, local)] if matches else []
        want.append(("pick", before, matches, matches and valid, value))
        return got is result and _same_calls(calls[1:], want)

    def step(kind: str, matches: bool, valid: bool) -> bool:
        before = _found(kind)
        after = m.pick(before, matches, valid, B)
        if matches and valid:
            return after[0] is True and after[1] is B
        return after[0] is before[0] and after[1] is before[1]

    return induction(base, all_of(exhaust(domain(boolean("the set is of the cvar"), boolean("check accepts it"), boolean("project file, profile or sets")), body, about=[real]),
                                  exhaust(domain(FOUND, boolean("the set is of the cvar"), boolean("the set is valid")), step, about=[m.pick])),
                     of="bend.cvar.layer_value", label="the sets of a layer (layer_value is the left fold of pick)")


def _over_step() -> Evidence:
    """``over`` on every state: a layer's value when it found one, else the value below."""

    def step(kind: str) -> bool:
        found = (False, None) if kind == "nothing" else (True, B)
        return m.over(A, found) is (B if found[0] else A)

    return exhaust(domain(FOUND), step, about=[m.over])


@functools.lru_cache(maxsize=None)
def _config_fold() -> Evidence:
    """config_value is the default, then the left fold of over(value, layer_value of the layer) over
    the layers of the config, a project file skipped when only the global layers are read;
    undeclared, None: induction on the layers, of config_value, its callees abstracted (lookup to
    each outcome, layer_value to a token, the state after the first layer any value)."""
    real = m.config_value
    default: Any = Opaque("default")
    decl = m.Decl("c", REG, m.LOCAL, False, False, default)

    def lookup_of(found: bool) -> Callable[..., Any]:
        def lookup(reg: Any, cvar: str) -> Any:
            if reg is not REG or cvar != "c":
                raise LawFailed("config_value looked up something else")
            return decl if found else None

        return lookup

    def empty(found: bool, global_only: bool) -> bool:
        with callees(m, lookup=lookup_of(found)):
            got = real(REG, (), "c", global_only)
        return got is (default if found else None)

    def body(found: bool, project: bool, global_only: bool) -> bool:
        before: Any = Opaque("the value of the layers before")
        result: Any = Opaque("over's result")
        layer_found: Any = Opaque("the layer's found value")
        sets: Any = Opaque("the layer's sets")
        first = m.Layer("first", False, _token("the first layer's sets"))
        layer = m.Layer("next", project, sets)
        calls: list[tuple[Any, ...]] = []

        def layer_value(reg: Any, ss: Any, local_only: bool, cvar: str) -> Any:
            calls.append(("layer_value", reg, ss, local_only, cvar))
            return layer_found

        def over(below: Any, f: Any) -> Any:
            calls.append(("over", below, f))
            return before if below is default else result

        with callees(m, lookup=lookup_of(found), layer_value=layer_value, over=over):
            got = real(REG, (first, layer), "c", global_only)
        if not found:
            return got is None and calls == []
        if global_only and project:
            return got is before and len(calls) == 2
        return got is result and _same_calls(calls[2:], [("layer_value", REG, sets, project, "c"), ("over", before, layer_found)])

    base = exhaust(domain(boolean("lookup finds the cvar"), boolean("the global layers only")), empty, about=[real])
    step = all_of(exhaust(domain(boolean("lookup finds the cvar"), boolean("the layer is a project file"), boolean("the global layers only")), body, about=[real]),
                  _over_step())
    return induction(base, step, of="bend.cvar.config_value", label="the layers of the config (config_value folds over over them)")


@functools.lru_cache(maxsize=None)
def _value_fold() -> Evidence:
    """value is config_value (all layers), then the left fold of agent_value over the family, root
    first; undeclared, None: induction on the family, of value, its callees abstracted."""
    real = m.value
    config: Any = Opaque("config")
    configured: Any = Opaque("the config's value")
    decl: Any = Opaque("declaration")

    def lookup_of(found: bool) -> Callable[..., Any]:
        def lookup(reg: Any, cvar: str) -> Any:
            if reg is not REG or cvar != "c":
                raise LawFailed("value looked up something else")
            return decl if found else None

        return lookup

    def config_value(reg: Any, c: Any, cvar: str, global_only: bool) -> Any:
        if reg is not REG or c is not config or cvar != "c" or global_only is not False:
            raise LawFailed("value read another config value")
        return configured

    def empty(found: bool) -> bool:
        with callees(m, lookup=lookup_of(found), config_value=config_value):
            got = real(REG, config, (), "c")
        return got is (configured if found else None)

    def body(found: bool) -> bool:
        before: Any = Opaque("the value of the agents before")
        result: Any = Opaque("agent_value's result")
        first: Any = Opaque("an earlier agent")
        agent: Any = Opaque("the agent")
        calls: list[tuple[Any, ...]] = []

        def agent_value(reg: Any, below: Any, a: Any, cvar: str) -> Any:
            calls.append(("agent_value", reg, below, a, cvar))
            return before if a is first else result

        with callees(m, lookup=lookup_of(found), config_value=config_value, agent_value=agent_value):
            got = real(REG, config, (first, agent), "c")
        if not found:
            return got is None and calls == []
        return got is result and _same_calls(calls, [("agent_value", REG, configured, first, "c"), ("agent_value", REG, before, agent, "c")])

    base = exhaust(domain(boolean("lookup finds the cvar")), empty, about=[real])
    step = exhaust(domain(boolean("lookup finds the cvar")), body, about=[real])
    return induction(base, step, of="bend.cvar.value", label="the family, root first (value folds agent_value over it)")


@functools.lru_cache(maxsize=None)
def _agent_layers() -> Evidence:
    """agent_value itself, over any inherited value (a token), layer_value abstracted to each
    outcome for the profile and for the sets (the real over): the sets' value when they found
    one, else the profile's, else the inherited value."""
    real = m.agent_value

    def case(in_profile: str, in_sets: str) -> bool:
        profile: Any = Opaque("profile")
        sets: Any = Opaque("sets")
        from_profile: Any = Opaque("the profile's value")
        from_sets: Any = Opaque("the sets' value")
        agent = m.Agent(_token("name"), profile, sets)

        def layer_value(reg: Any, layer: Any, local_only: bool, cvar: str) -> Any:
            if reg is not REG or local_only is not True or cvar != "c":
                raise LawFailed("agent_value read a layer of something else")
            if layer is profile:
                return (True, from_profile) if in_profile == "a value" else (False, None)
            if layer is sets:
                return (True, from_sets) if in_sets == "a value" else (False, None)
            raise LawFailed(f"agent_value read the layer {layer!r}")

        with callees(m, layer_value=layer_value):
            got = real(REG, A, agent, "c")
        return got is (from_sets if in_sets == "a value" else from_profile if in_profile == "a value" else A)

    return exhaust(domain(Finite("what the profile found", FOUND.values), Finite("what the sets found", FOUND.values)), case, about=[real])


def _check_lemma() -> Evidence:
    """``check`` is ``check_decl`` of the set's declaration (lookup abstracted to each outcome);
    ``check_decl`` refuses a Global cvar in a project file, a profile or sets before it reads the
    value or the type (both tokens), and an undeclared id before anything."""
    scopes = Finite("scopes", (m.GLOBAL, m.LOCAL))

    def refused(scope: str) -> bool:
        decl = m.Decl("c", REG, scope, False, False, None)
        if scope == m.GLOBAL:
            return m.check_decl(decl, "c", A, True) == m.CvarError(m.GLOBAL_ERR, "c")
        return True

    def wraps(found: bool, local_only: bool) -> bool:
        decl: Any = Opaque("declaration") if found else None
        verdict: Any = Opaque("check_decl's verdict")
        s = m.Set("c", A)
        seen: list[tuple[Any, ...]] = []

        def lookup(reg: Any, cvar: str) -> Any:
            seen.append(("lookup", reg, cvar))
            return decl

        def check_decl(d: Any, cvar: str, value: Any, lo: bool) -> Any:
            seen.append(("check_decl", d, cvar, value, lo))
            return verdict

        with callees(m, lookup=lookup, check_decl=check_decl):
            got = m.check(REG, s, local_only)
        return got is verdict and _same_calls(seen, [("lookup", REG, "c"), ("check_decl", decl, "c", A, local_only)])

    return all_of(
        exhaust(domain(boolean("lookup finds the declaration"), boolean("local only")), wraps, about=[m.check]),
        exhaust(domain(scopes), refused, about=[m.check_decl]),
        exhaust(domain(boolean("local only")), lambda local: m.check_decl(None, "c", A, local) == m.CvarError(m.UNDECLARED, "c"), about=[m.check_decl]),
    )


@functools.lru_cache(maxsize=None)
def _written_fold() -> Evidence:
    """``written`` is the left fold of keep(out, id, persist, layer_value of the agent's sets) over
    the registry: induction on the registry, of written. Base: an empty registry writes nothing
    (without reading the agent). Step: written itself on two declarations, keep and layer_value
    abstracted, the sets kept after the first any token; then ``keep`` on every state: the cvar's
    last valid set is added exactly when the cvar is persist and the agent set it."""
    real = m.written
    base = exhaust(domain(Finite("an empty registry", ((),))), lambda reg: real(reg, A) == (), about=[real])

    def body(flag: bool) -> bool:
        before: Any = Opaque("the sets kept before")
        result: Any = Opaque("keep's result")
        last: Any = Opaque("what layer_value found")
        sets: Any = Opaque("the agent's sets")
        agent = m.Agent(_token("name"), _token("profile"), sets)
        reg = (m.Decl("first", REG, m.LOCAL, False, False, B), m.Decl("c", REG, m.LOCAL, flag, False, A))
        calls: list[tuple[Any, ...]] = []

        def layer_value(r: Any, ss: Any, local_only: bool, cvar: str) -> Any:
            calls.append(("layer_value", r, ss, local_only, cvar))
            return last

        def keep(out: Any, cvar: str, persist: bool, found: Any) -> Any:
            calls.append(("keep", out, cvar, persist, found))
            return before if cvar == "first" else result

        with callees(m, layer_value=layer_value, keep=keep):
            got = real(reg, agent)
        return got is result and _same_calls(calls[2:], [("layer_value", reg, sets, True, "c"), ("keep", before, "c", flag, last)])

    def step(kind: str, flag: bool) -> bool:
        found = _found(kind)
        out = (m.Set("earlier", B),)
        after = m.keep(out, "c", flag, found)
        if flag and found[0]:
            return len(after) == 2 and after[0] is out[0] and after[1].id == "c" and after[1].value is A
        return after is out

    step_ev = all_of(exhaust(domain(boolean("persist")), body, about=[real]), exhaust(domain(FOUND, boolean("persist")), step, about=[m.keep]))
    return induction(base, step_ev, of="bend.cvar.written", label="the registry (written is the left fold of keep)")


@functools.lru_cache(maxsize=None)
def _replicated_filter() -> Evidence:
    """``replicated`` keeps, in declaration order, the set (id, value) of each replicate declaration
    and nothing of the others: induction on the registry, of replicated. Base: an empty registry
    replicates nothing. Step: replicated itself (a comprehension: each declaration is kept or
    dropped by its own flag alone, no state carried between them) on two declarations with every
    pair of flags, value abstracted: the sets of the flagged ones, in order."""
    real = m.replicated
    base = exhaust(domain(Finite("an empty registry", ((),))), lambda reg: real(reg, REG, B) == (), about=[real])

    def step(first: bool, last: bool) -> bool:
        config: Any = Opaque("config")
        family: Any = Opaque("family")
        values: dict[str, Any] = {"x": Opaque("x's value"), "y": Opaque("y's value")}
        reg = (m.Decl("x", REG, m.LOCAL, False, first, A), m.Decl("y", REG, m.LOCAL, False, last, A))

        def value(r: Any, c: Any, f: Any, cvar: str) -> Any:
            if r is not reg or c is not config or f is not family:
                raise LawFailed("replicated read another value")
            return values[cvar]

        with callees(m, value=value):
            got = real(reg, config, family)
        want = [cvar for cvar, flag in (("x", first), ("y", last)) if flag]
        return len(got) == len(want) and all(isinstance(s, m.Set) and s.id == w and s.value is values[w] for s, w in zip(got, want))

    return induction(base, exhaust(domain(boolean("an earlier declaration is replicate"), boolean("the declaration is replicate")), step, about=[real]),
                     of="bend.cvar.replicated", label="the registry (replicated filters it by the replicate flag)")


@law("cvar_inherits", "S4", "A subagent with no profile and no sets has its parent's values.", PROVED)
def cvar_inherits() -> Evidence:
    def inherits(world: World) -> bool:
        reg, config, family = world
        child = family + (m.Agent("child", (), ()),)
        return all(same(m.value(reg, config, child, c), m.value(reg, config, family, c)) for c in (B_ID, N_ID, F_ID, U))

    def prod_inherits(world: World) -> bool:
        cvars, family = _production(world)
        child = family + [p.AgentLayers("child")]
        return all(same(cvars.value(child, c), cvars.value(family, c)) for c in (B_ID, N_ID, F_ID, U))

    # value(family + (child,)) = agent_value(value(family), child) (the fold of value, checked on its
    # code), and an agent of empty layers over any inherited value keeps it: agent_value itself,
    # with the real layer_value and over, on a token
    empty = exhaust(domain(Finite("agents with no profile and no sets", (m.Agent("child", (), ()),))),
                    lambda agent: m.agent_value(REG, A, agent, "c") is A, about=[m.agent_value])
    proof = all_of(_value_fold(), empty)
    return also(proof, bounded(_worlds(), inherits, label=WORLD_LABEL)).with_production(bounded(_worlds(), prod_inherits, label=WORLD_LABEL))


def _last_valid(reg: tuple[m.Decl, ...], sets: tuple[m.Set, ...], cvar: str) -> tuple[bool, Any]:
    """The oracle's last valid set: declared, Local, of the oracle's type."""
    found: tuple[bool, Any] = (False, None)
    for s in sets:
        decl = next((d for d in reg if d.id == s.id), None)
        if s.id == cvar and decl is not None and decl.scope == m.LOCAL and o.holds(o_type(decl.type), m.to_json(s.value)):
            found = (True, s.value)
    return found


@law("cvar_set_wins", "S4", "The last valid set of a subagent wins over its parent's value.", PROVED)
def cvar_set_wins() -> Evidence:
    two = tuple(itertools.product(SETS, repeat=2)) + tuple((s,) for s in SETS) + ((),)

    def cases() -> Iterator[tuple[World, tuple[m.Set, ...]]]:
        for reg in REGISTRIES:
            for g in SLOT:
                config = (m.Layer("global settings.json", False, g),)
                for rp, rs, sp in itertools.product((SLOT[0], SLOT[1], SLOT[3]), repeat=3):
                    for ss in two:
                        yield (reg, config, (m.Agent("main", rp, rs), m.Agent("sub", sp, ss))), ss

    def wins(case: tuple[World, tuple[m.Set, ...]]) -> bool:
        (reg, config, family), sets = case
        for cvar in (B_ID, N_ID, F_ID):
            found, want = _last_valid(reg, sets, cvar)
            if found and not same(m.value(reg, config, family, cvar), want):
                return False
        return True

    def prod_wins(case: tuple[World, tuple[m.Set, ...]]) -> bool:
        (reg, config, family), sets = case
        cvars, pfamily = _production((reg, config, family))
        for cvar in (B_ID, N_ID, F_ID):
            found, want = _last_valid(reg, sets, cvar)
            if found and not same(cvars.value(pfamily, cvar), m.to_json(want)):
                return False
        return True

    label = "4 registries x 6 configs x root profile, root sets, sub profile 0..1 of 2 sets x sub sets 0..2 of 5 sets"
    # the last agent's value is agent_value over its parent's (the fold of value), the sets' value
    # when they found one (agent_value), which is the last set check accepts (the fold of
    # layer_value): validity is the model's check, whose typing is judged by cvar_value_typed
    proof = all_of(_value_fold(), _agent_layers(), _layer_fold())
    return also(proof, bounded(cases(), wins, label=label)).with_production(bounded(cases(), prod_wins, label=label))


def _o_decls(reg: tuple[m.Decl, ...]) -> tuple[o.Decl, ...]:
    """The declarations as the oracle reads them: id, type, scope, default (JSON)."""
    return tuple((d.id, o_type(d.type), d.scope, m.to_json(d.default)) for d in reg)


def _o_layers(config: tuple[m.Layer, ...]) -> tuple[o.Layer, ...]:
    return tuple((layer.project, tuple((s.id, m.to_json(s.value)) for s in layer.sets)) for layer in config)


@law("cvar_global_uniform", "S4.2", "A Global cvar has one value in each agent: the config's, on the default.", PROVED)
def cvar_global_uniform() -> Evidence:
    """Proved: a set of a Global cvar in a project file, a profile or an agent's sets is refused
    (check is check_decl of its declaration, which refuses Global there), so layer_value finds
    nothing there (its fold), over keeps the value below, and the value in each agent (the folds
    of value, agent_value and config_value, on their code) is the fold over the global files
    alone. The bounded worlds are judged by the oracle's value of the global layers (S4, S4.2),
    never by the model's config_value."""

    def uniform(world: World) -> bool:
        reg, config, family = world
        for decl in reg:
            if decl.scope == m.GLOBAL:
                want = o.global_layers_value(_o_decls(reg), _o_layers(config), decl.id)
                if not same(m.to_json(m.config_value(reg, config, decl.id, False)), want):
                    return False
                if any(not same(m.to_json(m.value(reg, config, family[:i], decl.id)), want) for i in range(1, len(family) + 1)):
                    return False
        return True

    def prod_uniform(world: World) -> bool:
        reg, config, family = world
        cvars, pfamily = _production(world)
        for decl in reg:
            if decl.scope == m.GLOBAL:
                want = o.global_layers_value(_o_decls(reg), _o_layers(config), decl.id)
                if not same(cvars.config_value(decl.id), want):
                    return False
                if any(not same(cvars.value(pfamily[:i], decl.id), want) for i in range(1, len(family) + 1)):
                    return False
        return True

    proof = all_of(_check_lemma(), _layer_fold(), _config_fold(), _value_fold(), _agent_layers())
    return also(proof, bounded(_worlds(), uniform, label=WORLD_LABEL)).with_production(bounded(_worlds(), prod_uniform, label=WORLD_LABEL))


TWO_SETS = ((),) + tuple((s,) for s in SETS) + tuple(itertools.product(SETS, repeat=2))


def _agents() -> Iterator[tuple[tuple[m.Decl, ...], m.Agent, m.Agent]]:
    for reg in FLAGGED:
        for pp in SLOT[:3]:
            for ap, sets in itertools.product(SLOT[:3], TWO_SETS):
                yield reg, m.Agent("main", pp, ()), m.Agent("sub", ap, sets)


AGENT_LABEL = "64 flagged registries x parent profile 0..1 set x agent profile 0..1 set x agent sets 0..2 sets"


@law("cvar_written_flagged", "S4.3", "An agent writes to its cfg only persist cvars and replicates only replicate cvars.", PROVED)
def cvar_written_flagged() -> Evidence:
    """Induction on the registry, of written (its loop checked on its code): it folds ``keep`` over
    the declarations; a step adds the cvar's last valid set (the fold of layer_value) exactly when
    the cvar is persist and the agent set it. And replicated keeps exactly the replicate cvars
    (induction on the registry, of replicated)."""
    proof = all_of(_written_fold(), _layer_fold(), _replicated_filter())

    def flagged(case: tuple[tuple[m.Decl, ...], m.Agent, m.Agent]) -> bool:
        reg, parent, agent = case
        persist = [d.id for d in reg if d.persist and _last_valid(reg, agent.sets, d.id)[0]]
        w = m.written(reg, agent)
        r = m.replicated(reg, (), (parent, agent))
        return [s.id for s in w] == persist and [s.id for s in r] == [d.id for d in reg if d.replicate]

    def prod_flagged(case: tuple[tuple[m.Decl, ...], m.Agent, m.Agent]) -> bool:
        reg, parent, agent = case
        cvars, family = _production((reg, (), (parent, agent)))
        persist = [d.id for d in reg if d.persist and _last_valid(reg, agent.sets, d.id)[0]]
        return [c for c, _ in cvars.written(family[-1])] == persist and [c for c, _ in cvars.replicated(family)] == [d.id for d in reg if d.replicate]

    return also(proof, bounded(_agents(), flagged, label=AGENT_LABEL)).with_production(bounded(_agents(), prod_flagged, label=AGENT_LABEL))


# -- /cvar save and the cfg file (S4.6) -------------------------------------------------------

# Persist cvars of every kind with values of every input class: the words that need quotes,
# escapes (a newline, a CR, U+2028, U+0085, a no-break space), the empty string, non-ASCII,
# huge and tiny floats (never written as 1e+300 or inf), huge integers.
SAVE_VALUES: tuple[tuple[o.Type, Any], ...] = tuple(
    (t, v) for t in TYPES for v in VALUES if o.holds(t, v)
) + tuple((("String",), s) for s in ("a\u0085b", "\x0b\x0c\x1c\x1d\x1e\u2029", "tab\there", " lead", "trail ", "#hash", "//x", "\\u2028", "\\n", '"', "\\"))


def _saved_back(t: o.Type, value: Any) -> tuple[bool, str]:
    """The model: a persist cvar set to ``value``, saved and read back as the profile."""
    reg = (m.Decl("s.v", m_type(t), m.LOCAL, True, False, m.from_json(_default(t))),)
    agent = m.Agent("main", (), (m.Set("s.v", m.from_json(value)),))
    text = m.cfg_text(m.written(reg, agent))
    back, errs = m.read_cfg(reg, text, True)
    ok = not errs and len(text.splitlines()) == 1 and same(m.to_json(m.value(reg, (), (m.saved(reg, agent),), "s.v")), value)
    return ok, text


def _default(t: o.Type) -> Any:
    return {"Bool": False, "Int": 0, "Nat": 0, "NatOrOff": "off", "Float": 0, "String": "", "Enum": t[1][0] if len(t) > 1 else "", "List": [], "Map": {}}[t[0]]


def _prod_saved_back(t: o.Type, value: Any, workdir: Path) -> bool:
    """Production: ``write_sets`` writes agents/<name>.cfg over a file that already holds a
    comment, an alias, a refused set (an undeclared cvar) and an earlier set of the cvar (the
    writer keeps every line but the earlier set), and ``read_cfg`` reads it back. (A file with a
    line that does not parse is refused by the writer, issue 10: tests/settings/test_writers.py.)"""
    registry = p.Registry([p.Cvar("s.v", p_type(t), p.LOCAL, True, False, _default(t))])
    cvars = p.Cvars(registry)
    agent = p.AgentLayers("main", [], [("s.v", value)])
    path = workdir / "main.cfg"
    kept = ["# kept", 'alias k "toggle s.v"', "set nosuch.cvar 1"]
    path.write_text("\n".join([kept[0], pcfg.set_line("s.v", _default(t)), *kept[1:]]) + "\n", encoding="utf-8")
    pcfg.write_sets(path, cvars.written(agent))
    text = path.read_text(encoding="utf-8")
    read = pcfg.read_cfg(path, cvars, local_only=True)
    saved = [p.AgentLayers("main", read.sets, [])]
    lines = text.splitlines()
    return (
        lines[:3] == kept and len(lines) == 4 and [e.source.rsplit(":", 1)[1] for e in read.errors] == ["3"]
        and same(cvars.value(saved, "s.v"), value)
    )


@law("cvar_persist_roundtrip", "S4.6", "The written cfg, read back as the profile, gives the same value of each persist cvar.", BOUNDED)
def cvar_persist_roundtrip() -> Evidence:
    def roundtrip(case: tuple[tuple[m.Decl, ...], m.Agent, m.Agent]) -> bool:
        reg, parent, agent = case
        before = (parent, agent)
        after = (parent, m.saved(reg, agent))
        return all(same(m.value(reg, (), before, d.id), m.value(reg, (), after, d.id)) for d in reg if d.persist)

    save_label = f"every type kind x every input class of its values, {len(SAVE_VALUES)} persist values, one line each"
    model_ev = all_of(
        bounded(_agents(), roundtrip, label=AGENT_LABEL),
        also(
            bounded(SAVE_VALUES, lambda case: _saved_back(*case)[0], label=save_label),
            examples(lambda text: _saved_back(("String",), text)[0], text=st.text(max_size=12)),
        ),
    )
    with tempfile.TemporaryDirectory(prefix="eukhe-cvar-law-", dir="/dev/shm" if Path("/dev/shm").is_dir() else None) as tmp:
        workdir = Path(tmp)
        prod_ev = also(
            bounded(SAVE_VALUES, lambda case: _prod_saved_back(*case, workdir), label=save_label + ", a real file written over a comment, an alias, a refused set and an earlier set"),
            examples(lambda text: _prod_saved_back(("String",), text, workdir), text=st.text(max_size=12)),
            examples(lambda number: _prod_saved_back(("Float",), number, workdir),
                     number=st.floats(allow_nan=False, allow_infinity=False) | st.integers(min_value=-(10**40), max_value=10**40)),
        )
    return model_ev.with_production(prod_ev)


def _global_value(reg: tuple[m.Decl, ...], config: tuple[m.Layer, ...], cvar: str) -> Any:
    """The oracle's value of the global layers (S4: "/set --global ... flips the value of the
    global layer only ... A project file never changes what it flips")."""
    return o.global_layers_value(_o_decls(reg), _o_layers(config), cvar)


def _global_twice(world: World) -> bool:
    """Two global toggles (``/set --global toggle``) flip the global layers' value and give it back."""
    reg, config, _ = world
    for decl in reg:
        first = m.global_toggle(reg, config, decl.id)
        if decl.type.kind != m.BOOL:
            if first != m.CvarError(m.NOT_BOOL, decl.id):
                return False
            continue
        if not isinstance(first, m.Set) or first.value is not (not _global_value(reg, config, decl.id)):
            return False
        after = config + (m.Layer("global config.cfg", False, (first,)),)
        second = m.global_toggle(reg, after, decl.id)
        if not isinstance(second, m.Set) or second.value != _global_value(reg, config, decl.id):
            return False
    return True


def _prod_global_twice(world: World) -> bool:
    reg, config, _ = world
    cvars, _ = _production(world)
    for decl in reg:
        try:
            first = cvars.global_toggled(decl.id)
        except p.CvarError as error:
            if decl.type.kind == m.BOOL or error.kind != p.NOT_BOOL:
                return False
            continue
        if decl.type.kind != m.BOOL or first is not (not _global_value(reg, config, decl.id)):
            return False
        layers = [*cvars.config, p.Layer("global config.cfg", False, [(decl.id, first)])]
        preg = _P_REGISTRIES[id(reg)]
        assert isinstance(preg, p.Registry)
        if p.Cvars(preg, layers).global_toggled(decl.id) != _global_value(reg, config, decl.id):
            return False
    return True


# -- toggles: the toggle's own code on opaque worlds, its callees abstracted -----------------------


def _spy(base: type, name: str, *args: Any) -> Any:
    """A value of class ``base`` whose content no code may read (comparisons, truth, length,
    items, hashing, arithmetic raise): a check that ran on it read only its class."""

    def refuse(op: str) -> Callable[..., NoReturn]:
        def no(self: Any, *a: object, **k: object) -> NoReturn:
            raise LawFailed(f"the content of a {name} was read ({op})")

        return no

    ops = ("__eq__ __ne__ __lt__ __le__ __gt__ __ge__ __bool__ __len__ __iter__ __getitem__ __contains__ __hash__ __add__ "
           "__radd__ __sub__ __rsub__ __index__ __int__ __float__ __format__ __str__").split()
    spy = type(f"Spy{base.__name__}", (base,), {op: refuse(op) for op in ops if hasattr(base, op) or op == "__bool__"})
    return spy(*args)


def _value_classes() -> Finite[Any]:
    return Finite("values, by class (the two bools, None, and a spy of every other class a value has)", (
        True, False, None, _spy(int, "int", 7), _spy(float, "float", 0.5), _spy(str, "str", "x"),
        _spy(tuple, "tuple", (1,)), _spy(m.Obj, "Obj", (("p", 1),)),
    ))


def _bool_lemma() -> Evidence:
    """A set of a Bool cvar is valid only with a bool (and every bool is valid where the scope
    allows): check_decl, run on each class of value, reads only the value's class; a class with
    content it does not read stands for every value of the class. With the registry's typed
    default (admit refuses a default has_type refuses: the same check) and the folds of the layers
    (a value is the default or a valid set's), every value of a Bool cvar is a bool."""
    scopes = Finite("scopes", (m.GLOBAL, m.LOCAL))

    def typed(scope: str, local_only: bool, x: Any) -> bool:
        decl = m.Decl("c", m.Type(m.BOOL), scope, False, False, True)
        valid = m.check_decl(decl, "c", x, local_only) is None
        allowed = not (local_only and scope == m.GLOBAL)
        return valid == (allowed and isinstance(x, bool)) and m.has_type(m.Type(m.BOOL), x) == isinstance(x, bool)

    return exhaust(domain(scopes, boolean("a project file, profile or sets"), _value_classes()), typed, about=[m.check_decl, m.has_type])


# -- the typing of values: has_type against the oracle, by induction on the value -------------------
#
# has_type(t, v) == o.holds(o_type(t), to_json(v)) for every type t (a kind of the S4 table; a List
# or Map names its item's type) and every value v whose objects name each key once (the keys of a
# JSON object): structural induction on v (and t), of has_type. Each run is has_type itself, the
# oracle itself, to_json and o_type themselves, on one value of each class, their recursive calls
# abstracted: the item of a container is a token X whose type is a token T, to_json(X) a token, the
# item's verdict a token V that has_type(T, X) and holds(o_type(T), to_json(X)) both answer (the
# hypothesis of the induction), and ``all`` (both modules') a stub that takes the verdicts a
# generator yields and answers a token standing for "all of them". A value's content is a spy that
# answers only the reads its class decides (an int: ``>= 0``; a float: math.isfinite; a str: whether
# it equals "off" or "none"; a container: its iteration, one arbitrary item; every value: that it
# is not equal to a str, where its class decides that) and raises on every other read, so a run on
# it holds for every value of its class. A container's iteration yields one arbitrary item X: both
# sides map each item to its verdict (the one yield X gives) and stop when the items stop, so they
# feed ``all`` the same verdicts in the same order for a container of any length; an object's keys
# named once, to_json's dict holds one item per pair, in order (Python's dict comprehension).


class _Read(LawFailed):
    """A spy's content read beyond what its class decides."""


def _no(name: str, op: str) -> Callable[..., NoReturn]:
    def no(self: Any, *a: object, **k: object) -> NoReturn:
        raise _Read(f"the content of {name} was read ({op})")

    return no


_READS = ("__ne__ __lt__ __le__ __gt__ __ge__ __bool__ __len__ __iter__ __getitem__ __contains__ __hash__ __add__ __radd__ "
          "__sub__ __rsub__ __mul__ __rmul__ __neg__ __abs__ __index__ __int__ __float__ __format__ __str__ __mod__ __rmod__").split()


def _class_spy(base: type, name: str, content: Any, **answers: Callable[..., Any]) -> Any:
    """A value of class ``base`` (``content`` behind it, never read but where ``answers`` says how)
    that raises on every read but its class, ``answers``, and ``==`` with a str (answered False for a
    base that is not str: no int, float or container equals a text)."""

    def eq(self: Any, other: object) -> bool:
        if type(other) is str and base is not str:
            return False
        raise _Read(f"the content of {name} was compared with {other!r}")

    def getattribute(self: Any, attr: str) -> Any:
        if attr in ("__class__", "_spy_name") or attr in answers:
            return object.__getattribute__(self, attr)
        raise _Read(f"the content of {name} was read (.{attr})")

    ns: dict[str, Any] = {op: _no(name, op) for op in _READS if hasattr(base, op) or op == "__bool__"}
    ns.update(__eq__=eq, __getattribute__=getattribute, __repr__=lambda self: f"<{name}>", _spy_name=name)
    ns.update(answers)
    return type(f"Spy{base.__name__}", (base,), ns)(content)


def _int_spy(negative: bool) -> Any:
    def ge(self: Any, other: object) -> bool:
        if type(other) is not int or other != 0:
            raise _Read(f"an int was compared with {other!r}")
        return not negative

    return _class_spy(int, f"an int {'< 0' if negative else '>= 0'}", -1 if negative else 1, __ge__=ge)


def _float_spy(finite: bool) -> Any:
    # math.isfinite reads a float's value itself (no method of the spy runs): the one read answered
    return _class_spy(float, f"a {'finite' if finite else 'non-finite'} float", 0.5 if finite else math.inf)


def _str_spy(equals: str | None) -> Any:
    def eq(self: Any, other: object) -> bool:
        if type(other) is str and other in m.OFF_WORDS:
            return other == equals
        raise _Read(f"a str was compared with {other!r}")

    name = "a str equal to neither off nor none" if equals is None else f"a str equal to {equals!r}"
    return _class_spy(str, name, "", __eq__=eq)


class _Choices(tuple):  # type: ignore[type-arg]
    """An Enum's choices: whether they hold the value is all anything may ask."""

    member: bool

    def __new__(cls, member: bool) -> _Choices:
        made = super().__new__(cls, ())
        made.member = member
        return made

    def __contains__(self, x: object) -> bool:
        if type(x).__name__ != "Spystr":
            raise _Read(f"the choices were asked about {x!r}")
        return self.member

    def __repr__(self) -> str:
        return f"<choices {'holding' if self.member else 'not holding'} the value>"


for _op in ("__iter__", "__len__", "__getitem__", "__eq__", "__ne__", "__hash__", "__add__", "__bool__"):
    setattr(_Choices, _op, _no("the choices", _op))

_ITEM: Any = Opaque("an item X")
_ITEM_TYPE: Any = Opaque("the item's type T")
_ITEM_JSON: Any = Opaque("to_json(X)")
_ITEM_OTYPE: Any = Opaque("o_type(T)")
_VERDICT: Any = Opaque("the verdict V of X: has_type(T, X) = holds(o_type(T), to_json(X))")
_ALL: Any = Opaque("all of the items' verdicts")


def _key_hash(self: Any) -> int:
    return id(self)  # a dict of one pair hashes its key, whatever it is


_KEY = _class_spy(str, "a key", "", __hash__=_key_hash)


def _container(kind: str) -> Any:
    items: Any = _class_spy(tuple, f"the {kind}'s items", (), __iter__=lambda self: iter(((_KEY, _ITEM),) if kind == "object" else (_ITEM,)))
    return m.Obj(items) if kind == "object" else items


VALUE_CLASSES: Finite[Any] = Finite(
    "values, by class (None, the two bools, an int < 0 and >= 0, a finite and a non-finite float, a str equal to off, "
    "to none, to neither; a tuple and an object of any items)",
    (None, True, False, _int_spy(True), _int_spy(False), _float_spy(True), _float_spy(False), _str_spy("off"), _str_spy("none"),
     _str_spy(None), _container("tuple"), _container("object")),
)
_KINDS = Finite("type kinds (S4)", (m.BOOL, m.INT, m.NAT, m.NAT_OR_OFF, m.FLOAT, m.STRING, m.ENUM, m.LIST, m.MAP))


def _typing_case(kind: str, has_item: bool, member: bool, v: Any) -> bool:
    """has_type(t, v) and holds(o_type(t), to_json(v)) on one class of v, their recursion abstracted."""
    has_type, to_json, holds, otype = m.has_type, m.to_json, o.holds, o_type
    choices: Any = _Choices(member) if kind == m.ENUM else Opaque("the choices of a kind that has none")
    t = m.Type(kind, choices, _ITEM_TYPE if has_item else None)

    def item_has_type(ti: Any, x: Any) -> Any:
        if ti is not _ITEM_TYPE or x is not _ITEM:
            raise LawFailed(f"has_type recursed on ({ti!r}, {x!r}), not on the item's type and an item")
        return _VERDICT

    def item_holds(ti: Any, x: Any) -> Any:
        if ti is not _ITEM_OTYPE or x is not _ITEM_JSON:
            raise LawFailed(f"the oracle recursed on ({ti!r}, {x!r}), not on the item's type and an item")
        return _VERDICT

    def item_to_json(x: Any) -> Any:
        if x is not _ITEM:
            raise LawFailed(f"to_json recursed on {x!r}, not on an item")
        return _ITEM_JSON

    def item_o_type(ti: Any) -> Any:
        if ti is not _ITEM_TYPE:
            raise LawFailed(f"o_type recursed on {ti!r}")
        return _ITEM_OTYPE

    def every_checked(verdicts: Any) -> Any:
        seen = list(verdicts)
        if len(seen) != 1 or seen[0] is not _VERDICT:
            raise LawFailed(f"all was given {seen!r}, not the one item's verdict")
        return _ALL

    with _globals(m, has_type=item_has_type, to_json=item_to_json, all=every_checked), \
            _globals(o, holds=item_holds, all=every_checked), _globals(sys.modules[__name__], o_type=item_o_type):
        got = has_type(t, v)
        want = holds(otype(t), to_json(v))
    if got is want or (type(got) is bool and type(want) is bool and got == want):
        return True
    raise LawFailed(f"has_type({t!r}, {v!r}) is {got!r}, the oracle says {want!r}")


@contextmanager
def _globals(module: Any, **names: Any) -> Iterator[None]:
    """``callees`` for names a module may not define (a builtin it calls, such as ``all``)."""
    missing = object()
    saved = {name: module.__dict__.get(name, missing) for name in names}
    module.__dict__.update(names)
    try:
        yield
    finally:
        for name, was in saved.items():
            if was is missing:
                del module.__dict__[name]
            else:
                module.__dict__[name] = was


@functools.lru_cache(maxsize=None)
def _typing_lemma() -> Evidence:
    """has_type(t, v) is the oracle's holds(o_type(t), to_json(v)) for every type and every value
    whose objects name each key once: structural induction on the value, of has_type (base: the
    classes that hold no value; step: a tuple and an object, the hypothesis at their item)."""
    kinds = (_KINDS, boolean("the type names an item type"), boolean("an Enum's choices hold the value"))

    def well_formed(kind: str, has_item: bool, member: bool, v: Any) -> bool:
        return has_item or kind not in (m.LIST, m.MAP)

    says = "a List or Map type names its item's type"
    scalars = Finite(VALUE_CLASSES.name + ": the classes that hold no value", VALUE_CLASSES.values[:-2])
    containers = Finite(VALUE_CLASSES.name + ": a tuple and an object", VALUE_CLASSES.values[-2:])
    base = exhaust(domain(*kinds, scalars, where=well_formed, where_says=says), _typing_case, about=[m.has_type, m.to_json])
    step = exhaust(domain(*kinds, containers, where=well_formed, where_says=says), _typing_case, about=[m.has_type, m.to_json])
    return induction(base, step, of="bend.cvar.has_type", label="the value (has_type against the oracle's holds, of every type)")


class _Family(Prefix):
    """A family of one or more agents, known by its last agent: [:-1] and [-1] are all set_last may read."""

    def __init__(self, last: m.Agent) -> None:
        super().__init__("family")
        self.last = last

    def __bool__(self) -> bool:
        return True

    def __getitem__(self, index: object) -> Any:
        if index == -1:
            return self.last
        if index == slice(None, -1):
            return Prefix("family[:-1]")
        raise LawFailed(f"set_last read family[{index!r}]")


FOUND_KINDS = Finite("what the layer below found (nothing, a value)", ("nothing", "a value"))


def _found_of(kind: str, token: Any) -> tuple[bool, Any]:
    return (False, None) if kind == "nothing" else (True, token)


def _toggle_proof() -> Evidence:
    """Session toggle: on opaque config and family, with value and set_last abstracted, toggle
    refuses (family unchanged, no callee run) unless the cvar is a declared Local Bool, and then
    sets the opposite of the value in the last agent; set_last on a family of any length (known
    only by its last agent) appends a valid set to the last agent's sets; the value of a family
    is the left fold of agent_value over it, and agent_value over a last layer that ends with a
    valid set of the cvar is that set's value (layer_value is the left fold of pick), whatever
    was below. A value of a Bool cvar is a bool (``_bool_lemma``), so two toggles give not v,
    then not not v = v. Global toggle: the same with config_value and one global layer appended."""
    kinds = Finite("declarations (undeclared, or each kind x each scope)", (None,) + tuple((k, s) for k in m.KINDS for s in (m.GLOBAL, m.LOCAL)))
    config: Any = Opaque("config")
    family: Any = Opaque("family")
    result: Any = Opaque("set_last's result")

    def reg_of(decl: tuple[str, str] | None) -> tuple[m.Decl, ...]:
        default: Any = Opaque("default")
        return () if decl is None else (m.Decl("c", m.Type(decl[0]), decl[1], False, False, default),)

    def session(decl: tuple[str, str] | None, v: bool) -> bool:
        calls: list[Any] = []
        reg = reg_of(decl)

        def value(r: Any, c: Any, f: Any, cvar: str) -> Any:
            calls.append("value")
            if r is not reg or c is not config or f is not family or cvar != "c":
                raise LawFailed("toggle asked the value of something else")
            return v

        def set_last(r: Any, f: Any, s: m.Set) -> Any:
            calls.append(s)
            if r is not reg or f is not family:
                raise LawFailed("toggle set in another family")
            return result

        with callees(m, value=value, set_last=set_last):
            got = m.toggle(reg, config, family, "c")
        if decl is None or decl[0] != m.BOOL or decl[1] == m.GLOBAL:
            kind = m.UNDECLARED if decl is None else m.NOT_BOOL if decl[0] != m.BOOL else m.GLOBAL_ERR
            return got[0] is family and got[1] == m.CvarError(kind, "c") and calls == []
        return got is result and calls == ["value", m.Set("c", not v)]

    def appended(v: bool) -> bool:
        reg = reg_of((m.BOOL, m.LOCAL))
        name: Any = Opaque("name")
        sets: Any = Prefix("sets")
        profile: Any = Opaque("profile")
        last = m.Agent(name, profile, sets)
        s = m.Set("c", not v)
        family_: Any = _Family(last)
        got, error = m.set_last(reg, family_, s)
        after: Any = Prefix("sets", (s,))
        return error is None and got == Prefix("family[:-1]", (m.Agent(last.name, last.profile, after),))

    def last_wins(v: bool, found_p: str, found_s: str) -> bool:
        reg = reg_of((m.BOOL, m.LOCAL))
        s = m.Set("c", not v)
        profile: Any = Opaque("profile")
        name: Any = Opaque("name")
        sets: Any = Prefix("sets", (s,))
        agent = m.Agent(name, profile, sets)
        below: Any = Opaque("inherited value")

        def layer_value(r: Any, sets: Any, local_only: bool, cvar: str) -> Any:
            if sets is profile:
                return _found_of(found_p, Opaque("profile's value"))
            if sets == Prefix("sets", (s,)):  # the left fold of pick: the sets before s, then s
                return m.pick(_found_of(found_s, Opaque("earlier set")), s.id == cvar, s.id == cvar and m.check(r, s, local_only) is None, s.value)
            raise LawFailed(f"agent_value read the layer {sets!r}")

        with callees(m, layer_value=layer_value):
            return m.agent_value(reg, below, agent, "c") is s.value

    def twice(v: bool) -> bool:
        once = not v
        return once != v and (not once) is v

    def global_toggle(decl: tuple[str, str] | None, v: bool) -> bool:
        reg = reg_of(decl)

        def config_value(r: Any, c: Any, cvar: str, global_only: bool) -> Any:
            if r is not reg or c is not config or cvar != "c" or global_only is not True:
                raise LawFailed("global_toggle read another value")
            return v

        with callees(m, config_value=config_value):
            first = m.global_toggle(reg, config, "c")
        if decl is None or decl[0] != m.BOOL:
            return first == m.CvarError(m.UNDECLARED if decl is None else m.NOT_BOOL, "c")
        if first != m.Set("c", not v):
            return False
        # config_value over config + (the global config.cfg with first): the left fold of over,
        # the appended layer is global (read with global_only) and its one set is valid
        below: Any = Opaque("config's value")
        after = m.over(below, m.layer_value(reg, (first,), False, "c"))
        return after is (not v) and (not after) is v

    return all_of(
        _bool_lemma(), _registry_fold(), _layer_fold(), _config_fold(), _value_fold(), _agent_layers(),
        exhaust(domain(kinds, boolean("the value v")), session, about=[m.toggle]),
        exhaust(domain(boolean("the value v")), appended, about=[m.set_last]),
        exhaust(domain(boolean("the value v"), Finite("the profile found", FOUND_KINDS.values), Finite("the sets before found", FOUND_KINDS.values)), last_wins,
                about=[m.agent_value]),
        exhaust(domain(boolean("the value v")), twice),
        exhaust(domain(kinds, boolean("the value v")), global_toggle, about=[m.global_toggle]),
    )


@law("cvar_toggle_twice", "S4", "Two toggles give back the value (a session's toggle, and a global toggle of the global layers).", PROVED)
def cvar_toggle_twice() -> Evidence:
    """Proved for every accepted registry, config and family of at least one agent (``_toggle_proof``):
    toggle runs on opaque worlds with its callees abstracted; it refuses (nothing changes) unless the
    cvar is a declared Local Bool, else appends the opposite of the value to the last agent's sets,
    which then is the value (the last valid set wins, induction on the layers); a Bool cvar's value
    is a bool (check_decl reads only a value's class), so not not v = v. The same for the global
    toggle. The bounded run on the worlds, judged from the table, stays, on production too."""
    def twice(world: World) -> bool:
        if not _global_twice(world):
            return False
        reg, config, family = world
        for cvar in (B_ID, N_ID, U):
            once, e1 = m.toggle(reg, config, family, cvar)
            again, e2 = m.toggle(reg, config, once, cvar)
            decl = next((d for d in reg if d.id == cvar), None)
            should = decl is not None and decl.type.kind == m.BOOL and decl.scope == m.LOCAL  # judged from the table
            if (e1 is None) != should:
                return False
            if e1 is None:
                if e2 is not None or same(m.value(reg, config, once, cvar), m.value(reg, config, family, cvar)):
                    return False
                if not same(m.value(reg, config, again, cvar), m.value(reg, config, family, cvar)):
                    return False
            elif once != family:  # a refused toggle changes nothing
                return False
        return True

    def prod_twice(world: World) -> bool:
        if not _prod_global_twice(world):
            return False
        reg, _, family = world
        cvars, pfamily = _production(world)
        for cvar in (B_ID, N_ID, U):
            decl = next((d for d in reg if d.id == cvar), None)
            should = decl is not None and decl.type.kind == m.BOOL and decl.scope == m.LOCAL
            before = cvars.value(pfamily, cvar)
            try:
                first = cvars.toggled(pfamily, cvar)
            except p.CvarError:
                if should:
                    return False
                continue
            if not should:
                return False
            pfamily[-1].sets.append((cvar, first))
            second = cvars.toggled(pfamily, cvar)
            pfamily[-1].sets.append((cvar, second))
            if first == before or cvars.value(pfamily, cvar) != before:
                return False
        return True

    checked = bounded(_worlds(), twice, label=WORLD_LABEL + " x 3 ids")
    return also(_toggle_proof(), checked).with_production(bounded(_worlds(), prod_twice, label=WORLD_LABEL + " x 3 ids"))


# -- aliases (S4.4) -------------------------------------------------------------------------------

PLAIN = m.Command(m.SET, ("n", "1"))
NAMES = ("a", "b", "c")
RUN = {name: m.Command(m.RUN, (name,)) for name in (*NAMES, "z")}
BODIES: tuple[tuple[m.Command, ...], ...] = (
    (), (PLAIN,), (RUN["a"],), (RUN["b"],), (RUN["c"],), (RUN["z"],), (RUN["a"], RUN["b"]), (PLAIN, RUN["c"]), (RUN["b"], PLAIN),
)


def _tables() -> Iterator[m.Aliases]:
    slot: tuple[tuple[m.Command, ...] | None, ...] = (None, *BODIES)
    for bodies in itertools.product(slot, repeat=len(NAMES)):
        yield tuple((name, body) for name, body in zip(NAMES, bodies) if body is not None)


TABLE_LABEL = f"{len(BODIES) + 1}^3 tables over 3 names (each missing or one of {len(BODIES)} bodies)"
LINES = (*BODIES, (RUN["a"], PLAIN, RUN["c"]))


def chain(n: int, cycle: bool) -> m.Aliases:
    """a0 -> a1 -> ... -> a(n-1) -> (a plain set, or a0 again): nests n levels, or cycles."""
    table: m.Aliases = ()
    for i in range(n):
        nxt = (m.Command(m.RUN, (f"a{i + 1}",)),) if i + 1 < n else ((m.Command(m.RUN, ("a0",)),) if cycle else (PLAIN,))
        table = table + ((f"a{i}", nxt),)
    return table


CHAINS = tuple((n, c) for n in range(1, 13) for c in (False, True))
CHAIN_LABEL = "chains of 1..12 aliases, ending in a plain set or running the first again"


def _to_p(table: m.Aliases) -> p.Aliases:
    return p.Aliases({name: [p.Command(c.verb, c.args) for c in body] for name, body in table})


def _p_expand(table: m.Aliases, line: tuple[m.Command, ...]) -> tuple[m.Command, ...] | m.ExpandError:
    try:
        return tuple(m.Command(c.verb, c.args) for c in _to_p(table).expand([p.Command(c.verb, c.args) for c in line]))
    except p.ExpandError as error:
        return m.ExpandError(error.kind, error.name)


EXPANDERS: dict[str, Callable[[m.Aliases, tuple[m.Command, ...]], tuple[m.Command, ...] | m.ExpandError]] = {"model": m.expand, "production": _p_expand}


def _reach(table: m.Aliases, name: str) -> tuple[set[str], bool]:
    """The names a run of ``name`` reaches (graph search, independent of expand), and whether a
    missing name is among them."""
    seen: set[str] = set()
    todo = [name]
    missing = False
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        body = dict(table).get(current)
        if body is None:
            missing = True
            continue
        todo.extend(c.args[0] for c in body if c.verb == m.RUN)
    return seen, missing


def _cycles(table: m.Aliases, name: str) -> bool:
    body = dict(table).get(name)
    return body is not None and any(name in _reach(table, c.args[0])[0] for c in body if c.verb == m.RUN)


def _hunt_tables() -> Any:
    names = st.sampled_from([f"a{i}" for i in range(6)])
    command = st.one_of(st.just(PLAIN), names.map(lambda n: m.Command(m.RUN, (n,))), st.just(m.Command(m.ACTION, ("app.x",))))
    return st.lists(st.tuples(names, st.lists(command, max_size=3).map(tuple)), max_size=6).map(tuple)


def _both_expand(check: Callable[[str], Callable[..., bool]], cases: Callable[[], Iterator[Any]], label: str) -> Evidence:
    return bounded(cases(), check("model"), label=label).with_production(bounded(cases(), check("production"), label=label))


# -- the expansion, checked on its code: one level of _expand, its recursion abstracted ------------
#
# ``expand`` calls ``_expand(table, commands, 0, len(names(table)) + 1)``; ``_expand`` walks the
# commands with an accumulator ``out``, returns at the first error, and expands a run of a found
# alias under the limit by calling itself on the alias's body at depth + 1. The proofs run the real
# ``_expand`` with its callees abstracted (``spec.proofs.callees``): ``alias_body`` gives a missing
# body or a body token, the nested ``_expand`` (its own recursive call) gives each outcome (a Cycle,
# an Unknown, an expansion), the depth is a token whose ``depth + 1 > limit`` answers each way, and
# the state of the loop before the command is any sequence (a first run of an alias whose nested
# expansion is that sequence). What one command does from any state is then checked on the code for
# every verb and outcome (``_expand_table``), and a law about tables and lines of any size is an
# induction on the commands (the loop) within an induction on limit - depth (the recursion), of
# ``bend.cvar._expand``.

VERBS = Finite("verbs of the command language", (m.SET, m.TOGGLE, m.ALIAS, m.BIND, m.ACTION, m.RUN))
LIMIT: Any = Opaque("the limit")


class RunFree:
    """Any sequence with no run in it: appending a run-free tuple or another one keeps it so
    (the concatenation of run-free sequences has no run), appending a run does not."""

    def __add__(self, more: object) -> Any:
        if isinstance(more, RunFree):
            return self
        if isinstance(more, tuple) and all(isinstance(c, m.Command) and c.verb != m.RUN for c in more):
            return self
        return ("has a run", more)

    __radd__ = __add__

    def __repr__(self) -> str:
        return "<run-free>"


class _Seq:
    """Any sequence, known by a name and what was appended to it in order; () + it is itself."""

    def __init__(self, name: str, parts: tuple[Any, ...] = ()) -> None:
        self.name, self.parts = name, parts

    def __add__(self, more: object) -> _Seq:
        if not isinstance(more, (tuple, _Seq)):
            raise LawFailed(f"a step appended {more!r} to {self!r}")
        return _Seq(self.name, self.parts + (more,))

    def __radd__(self, before: object) -> _Seq:
        if before != ():
            raise LawFailed(f"a step put {before!r} before {self!r}")
        return self

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Seq) and (self.name, self.parts) == (other.name, other.parts)

    def __hash__(self) -> int:
        return hash((self.name, self.parts))

    def __repr__(self) -> str:
        return f"{self.name} + {self.parts!r}"


class _Depth:
    """The depth of an expansion, a token: ``depth + 1`` is a ``_Deeper`` of it, whose comparison
    with the limit gives the next answer of a script (each answer is enumerated)."""

    def __init__(self, script: list[bool]) -> None:
        self.script = script

    def __add__(self, one: object) -> _Deeper:
        if one != 1:
            raise LawFailed(f"the depth was added {one!r}")
        return _Deeper(self)


class _Deeper:
    def __init__(self, of: _Depth) -> None:
        self.of = of

    def __gt__(self, limit: object) -> bool:
        if limit is not LIMIT or not self.of.script:
            raise LawFailed("the depth was compared with something else, or twice for one run")
        return self.of.script.pop(0)


def _command(verb: str) -> m.Command:
    return m.Command(verb, ("a0",) if verb in (m.RUN, m.ACTION, m.TOGGLE) else ("a0", "1"))


def _expand_once(before: Any, verb: str, body: str, over: bool, inner: Any) -> tuple[Any, list[tuple[Any, ...]], Any, Any]:
    """The real ``_expand`` on one command ``_command(verb)`` from the state ``before`` (None: the
    command is the first; else the loop's ``out`` after a first run whose nested expansion was
    ``before``): alias_body gives a missing or found body for a0, ``depth + 1 > limit`` answers
    ``over``, the nested expansion of a0's body gives ``inner``. Returns the result, the calls made
    for the command, the table and the body token."""
    real = m._expand
    table: Any = Opaque("alias table")
    first_body: Any = Opaque("the first alias's body")
    found_body: Any = Opaque("a0's body")
    depth = _Depth([False, over] if before is not None else [over])
    calls: list[tuple[Any, ...]] = []

    def alias_body(t: Any, name: str) -> Any:
        if t is not table:
            raise LawFailed("_expand looked in another table")
        if name == "x0":
            return first_body
        calls.append(("alias_body", name))
        return found_body if body == "found" else None

    def nested(t: Any, commands: Any, d: Any, limit: Any) -> Any:
        if t is not table or not isinstance(d, _Deeper) or d.of is not depth or limit is not LIMIT:
            raise LawFailed("_expand nested with another table, depth or limit")
        if commands is first_body:
            return before
        calls.append(("nested", commands))
        return inner

    c = _command(verb)
    commands = (c,) if before is None else (m.Command(m.RUN, ("x0",)), c)
    with callees(m, alias_body=alias_body, _expand=nested):
        got = real(table, commands, depth, LIMIT)  # type: ignore[arg-type]
    return got, calls, table, found_body


@functools.lru_cache(maxsize=None)
def _expand_base() -> Evidence:
    """No command: nothing, without reading the table, the depth or the limit."""
    real = m._expand
    return exhaust(domain(Finite("empty command lists", ((),))), lambda commands: real(REG, commands, A, B) == (), about=[real])


INNERS = Finite("the nested expansion (a Cycle, an Unknown, an expansion)", ("a Cycle", "an Unknown", "an expansion"))


@functools.lru_cache(maxsize=None)
def _expand_table() -> Evidence:
    """One command of ``_expand`` from any state, every verb and outcome, on its code: a command that
    is no run is appended; a run of a missing alias is Unknown named by the run (before the limit is
    read); a run of a found alias past the limit is a Cycle named by the run; under the limit the
    body is expanded once, at depth + 1 with the same table and limit, and its error is the result
    as it is, else its expansion is appended. (An error returns: nothing after it runs.)"""
    states = Finite("the state before the command (the start, any sequence so far)", ("start", "a sequence"))
    errors = {"a Cycle": m.ExpandError("Cycle", "deeper"), "an Unknown": m.ExpandError("Unknown", "deeper")}

    def row(state: str, verb: str, body: str, over: bool, nested: str) -> bool:
        before = None if state == "start" else _Seq("before")
        inner: Any = errors.get(nested, _Seq("inner"))
        got, calls, _, found_body = _expand_once(before, verb, body, over, inner)
        c = _command(verb)
        if verb != m.RUN:
            return calls == [] and (got == (c,) if before is None else got == before + (c,))
        if body == "missing":
            return got == m.ExpandError("Unknown", "a0") and calls == [("alias_body", "a0")]
        if over:
            return got == m.ExpandError("Cycle", "a0") and calls == [("alias_body", "a0")]
        if len(calls) != 2 or calls[1][1] is not found_body:
            return False
        if nested != "an expansion":
            return got is inner
        return got is inner if before is None else got == before + inner

    return exhaust(domain(states, VERBS, Finite("the alias's body (missing, found)", ("missing", "found")), boolean("past the limit"), INNERS),
                   row, about=[m._expand])


@functools.lru_cache(maxsize=None)
def _run_free_step() -> Evidence:
    """The invariant of the run-free induction on the code: from the start or a run-free sequence,
    with a nested expansion that is an error or run-free, a command gives an error or a run-free
    sequence."""
    states = Finite("the state before the command (the start, a run-free sequence)", ("start", "run-free"))

    def step(state: str, verb: str, body: str, over: bool, nested: str) -> bool:
        inner: Any = m.ExpandError("Cycle", "deeper") if nested == "an error" else RunFree()
        got, _, _, _ = _expand_once(None if state == "start" else RunFree(), verb, body, over, inner)
        if isinstance(got, (m.ExpandError, RunFree)):
            return True
        return isinstance(got, tuple) and all(isinstance(c, m.Command) and c.verb != m.RUN for c in got)

    return exhaust(domain(states, VERBS, Finite("the alias's body (missing, found)", ("missing", "found")), boolean("past the limit"),
                          Finite("the nested expansion (an error, run-free)", ("an error", "run-free"))), step, about=[m._expand])


class _Nat:
    """A natural number known only as len(something) + offset: comparisons the offset decides."""

    def __init__(self, offset: int = 0) -> None:
        self.offset = offset

    def __add__(self, k: object) -> _Nat:
        if type(k) is not int:
            raise LawFailed(f"a length was added {k!r}")
        return _Nat(self.offset + k)

    def __lt__(self, k: object) -> bool:  # self < k: false when k <= the least self can be
        if type(k) is int and k <= self.offset:
            return False
        raise LawFailed(f"len(...) + {self.offset} < {k!r} is not decided")

    def __repr__(self) -> str:
        return f"len(names) + {self.offset}"


@contextmanager
def _len_of_names() -> Iterator[None]:
    """Run bend.cvar with ``len`` answering a ``_Nat`` (any natural number): a name of the module
    shadows the builtin while it is set."""
    setattr(m, "len", lambda seq: _Nat(0))
    try:
        yield
    finally:
        delattr(m, "len")


@functools.lru_cache(maxsize=None)
@functools.lru_cache(maxsize=None)
def _cycle_lemmas() -> Evidence:
    """The mathematics between a nest past the limit and a cycle of the table (S4.4: "A deeper
    nest repeats an alias"), each a z3 lemma about no code: the pigeonhole principle by induction
    on n (an injection from [0, d) into [0, n) has d <= n), a Cycle past the limit len(names) + 1
    has a chain of at least len(names) + 2 found names, and a name repeated on a chain runs an
    alias that reaches it back (induction along the chain, then the repeat)."""
    import z3

    f = z3.Function("f", z3.IntSort(), z3.IntSort())
    d, n, i, j = z3.Ints("d n i j")

    def inj(g: Any, size: Any) -> Any:
        return z3.ForAll([i, j], z3.Implies(z3.And(0 <= i, i < size, 0 <= j, j < size, i != j), g(i) != g(j)))

    def into(g: Any, size: Any, bound: Any) -> Any:
        return z3.ForAll([i], z3.Implies(z3.And(0 <= i, i < size), z3.And(0 <= g(i), g(i) < bound)))

    def g(x: Any) -> Any:
        return z3.If(f(x) == n, f(d - 1), f(x))

    ms = 20_000
    pigeonhole = all_of(
        lemma(lambda: z3.Implies(z3.And(d >= 0, into(f, d, 0)), d <= 0), label="pigeonhole by induction on n, n = 0: nothing maps into [0, 0)", ms=ms),
        lemma(lambda: z3.Implies(z3.And(d >= 1, n >= 0, inj(f, d), into(f, d, n + 1)), z3.And(inj(g, d - 1), into(g, d - 1, n))),
              label="pigeonhole, n to n + 1: f injective into [0, n + 1) gives g injective from [0, d - 1) into [0, n)", ms=ms),
    )
    depth, names = z3.Ints("len(path) len(names)")
    too_deep = lemma(lambda: z3.Implies(z3.And(depth + 1 > names + 1, names >= 0), depth + 1 >= names + 2),
                     label="a Cycle past the limit len(names) + 1: the chain path + (c,) has at least len(names) + 2 names", ms=ms)
    p_ = z3.Function("p", z3.IntSort(), z3.IntSort())
    r = z3.Function("R", z3.IntSort(), z3.IntSort(), z3.BoolSort())
    reach = z3.Function("reach", z3.IntSort(), z3.IntSort(), z3.BoolSort())
    a, b, c, k, length = z3.Ints("a b c k L")
    closure = [z3.ForAll([a], reach(a, a)), z3.ForAll([a, b, c], z3.Implies(z3.And(reach(a, b), r(b, c)), reach(a, c)))]
    chain_ = z3.ForAll([k], z3.Implies(z3.And(0 <= k, k + 1 < length), r(p_(k), p_(k + 1))))
    along = all_of(
        lemma(lambda: z3.Implies(z3.And(*closure), reach(p_(i + 1), p_(i + 1))), label="along a chain by induction on j, base: p(i+1) reaches itself", ms=ms),
        lemma(lambda: z3.Implies(z3.And(*closure, chain_, 0 <= i, i + 1 <= j, j + 1 < length, reach(p_(i + 1), p_(j))), reach(p_(i + 1), p_(j + 1))),
              label="along a chain, step: p(i+1) reaches p(j) and p(j) runs p(j+1)", ms=ms),
    )
    repeat = lemma(lambda: z3.Implies(z3.And(*closure, chain_, 0 <= i, i < j, j < length, p_(i) == p_(j), reach(p_(i + 1), p_(j))),
                                      z3.And(r(p_(i), p_(i + 1)), reach(p_(i + 1), p_(i)))),
                   label="a name repeated on a chain runs an alias that reaches it back: it is on a cycle", ms=ms)
    return all_of(pigeonhole, too_deep, along, repeat)


def _expand_wrapper() -> Evidence:
    """``expand`` itself on an opaque table and line, names, len and _expand abstracted: it is
    _expand of the line at depth 0 with the limit len(names of the table) + 1, and its result."""
    real = m.expand
    table: Any = Opaque("alias table")
    line: Any = Opaque("line")
    names_of: Any = Opaque("the table's names")
    result: Any = Opaque("_expand's result")
    seen: list[tuple[Any, ...]] = []

    def names(t: Any) -> Any:
        if t is not table:
            raise LawFailed("expand counted another table")
        return names_of

    def expand_(t: Any, commands: Any, depth: Any, limit: Any) -> Any:
        seen.append((t, commands, depth, limit))
        return result

    def case(_: str) -> bool:
        seen.clear()
        with _len_of_names(), callees(m, names=names, _expand=expand_):
            got = real(table, line)
        if got is not result or len(seen) != 1:
            return False
        t, commands, depth, limit = seen[0]
        return t is table and commands is line and type(depth) is int and depth == 0 and isinstance(limit, _Nat) and limit.offset == 1

    return exhaust(domain(Finite("a table and a line (opaque)", ("any",))), case, about=[real])


@functools.lru_cache(maxsize=None)
def _top_under_limit() -> Evidence:
    """At depth 0 (a real 0) a run of a found alias is under every limit expand passes (len(names) +
    1 >= 1): its body is expanded at depth 1 and the result is that expansion (or its error)."""
    real = m._expand
    table: Any = Opaque("alias table")
    body: Any = Opaque("the alias's body")

    def case(nested: str) -> bool:
        inner: Any = m.ExpandError("Cycle", "deeper") if nested == "an error" else _Seq("the body's expansion")
        seen: list[tuple[Any, ...]] = []

        def nested_(t: Any, commands: Any, depth: Any, limit: Any) -> Any:
            seen.append((t, commands, depth, limit))
            return inner

        limit = _Nat(1)
        with callees(m, alias_body=lambda t, name: body if t is table and name == "a0" else None, _expand=nested_):
            got = real(table, (m.Command(m.RUN, ("a0",)),), 0, limit)  # type: ignore[arg-type]
        return got is inner and len(seen) == 1 and seen[0][0] is table and seen[0][1] is body and seen[0][2] == 1 and seen[0][3] is limit

    return exhaust(domain(Finite("the body's expansion (an error, an expansion)", ("an error", "an expansion"))), case, about=[real])


def _expand_induction(step: Evidence, label: str) -> Evidence:
    return induction(_expand_base(), step, of="bend.cvar._expand", label=label)


@law(
    "alias_expands_fully",
    "S4.4",
    "An expansion leaves no alias to run, or reports a cycle or an unknown alias; a nest stops at len(table) + 1 levels.",
    PROVED,
)
def alias_expands_fully() -> Evidence:
    """Proved for every table and line, on the code of _expand (its recursion abstracted): an
    expansion that is no error has no run (induction on the commands within an induction on limit -
    depth, the invariant checked on every abstract state: ``_run_free_step``); the only errors are
    Unknown (a run of a missing alias) and Cycle (a run of a found alias past the limit), and the
    body of a run is expanded only under the limit, at depth + 1 (``_expand_table``), and expand
    starts at depth 0 with the limit len(names) + 1 (``_expand_wrapper``): so a nest stops at
    len(table) + 1 levels. That a Cycle then repeats an alias, so the table has a cycle, is the
    seed's own argument (S4.4: "A deeper nest repeats an alias"): the pigeonhole principle over the
    chain of found names the nesting follows (the chain is the table's rows), mathematics, proved
    by z3 as lemmas about no code (``_cycle_lemmas``). The bounded judge
    (Cycle only with a cycle, Unknown only with a missing alias reached), the chains and cycles of
    1..12 aliases and the hunt stay, on production too."""
    def full(side: str) -> Callable[..., bool]:
        def check(case: tuple[m.Aliases, tuple[m.Command, ...]]) -> bool:
            table, line = case
            out = EXPANDERS[side](table, line)
            if isinstance(out, m.ExpandError):
                if out.kind == "Cycle":
                    return any(_cycles(table, n) for n in dict(table))
                return out.kind == "Unknown" and any(_reach(table, c.args[0])[1] for c in line if c.verb == m.RUN)
            return all(c.verb != m.RUN for c in out)

        return check

    def chains(side: str) -> Callable[..., bool]:
        """A chain of n aliases nests n levels: it expands (the bound n + 1 is never too small);
        a cycle of n aliases is a Cycle named at the run past the bound."""

        def check(case: tuple[int, bool]) -> bool:
            n, cycle = case
            out = EXPANDERS[side](chain(n, cycle), (m.Command(m.RUN, ("a0",)),))
            if cycle:
                return out == m.ExpandError("Cycle", f"a{(n + 1) % n}")
            return out == (PLAIN,)

        return check

    def hunt(side: str) -> Callable[..., bool]:
        return lambda table, start: full(side)((table, (m.Command(m.RUN, (start,)),)))

    main = all_of(
        _both_expand(full, lambda: itertools.product(_tables(), LINES), f"{TABLE_LABEL} x {len(LINES)} lines"),
        _both_expand(chains, lambda: iter(CHAINS), CHAIN_LABEL),
    )
    # more evidence for production beyond the bound (also: the bounded evidence stays its strength)
    hunted = examples(hunt("production"), table=_hunt_tables(), start=st.sampled_from(["a0", "a1", "zz"]))
    checked = main.reworded(f"{main.sentence}; production hunted on tables of up to 6 names: {hunted.sentence}")
    proof = all_of(_expand_induction(all_of(_run_free_step(), _expand_table()), "the commands, within limit - depth (an expansion is an error or run-free)"),
                   _expand_wrapper(), _cycle_lemmas())
    return also(proof, checked)


@law("alias_self_cycle", "S4.4", "An alias that runs itself (and reaches no missing alias) is a cycle.", PROVED)
def alias_self_cycle() -> Evidence:
    """Proved for every table, on the code of _expand (``_expand_table``: one command from any state,
    every verb and outcome): by downward induction on the depth d from the limit, a run of an
    alias on a cycle errs at every depth. Past the limit its run is a Cycle (a row of the table);
    below it the body is expanded at d + 1, and that body holds a run of the next alias of the
    cycle, which errs at d + 1 (hypothesis): each command before it either goes on or returns an
    error (rows), so the body's expansion is an error, and the run returns it as it is (a row). The
    error is a Cycle: an Unknown is made only by a run of a missing alias (a row), and every run the
    expansion makes is of an alias the first one reaches (the body expanded is the found body of
    the run), none missing. expand is _expand at depth 0 (``_expand_wrapper``). The bounded checks
    on tables and cycles of 1..12 aliases stay, on production too."""
    def cycle(side: str) -> Callable[..., bool]:
        def check(table: m.Aliases) -> bool:
            for name in dict(table):
                if _cycles(table, name) and not _reach(table, name)[1]:
                    out = EXPANDERS[side](table, (m.Command(m.RUN, (name,)),))
                    if not (isinstance(out, m.ExpandError) and out.kind == "Cycle"):
                        return False
            return True

        return check

    def cycles(side: str) -> Callable[..., bool]:
        return lambda n: isinstance(out := EXPANDERS[side](chain(n, True), (m.Command(m.RUN, ("a0",)),)), m.ExpandError) and out.kind == "Cycle"

    checked = all_of(_both_expand(cycle, _tables, TABLE_LABEL), _both_expand(cycles, lambda: iter(range(1, 13)), "cycles of 1..12 aliases"))
    proof = all_of(_expand_induction(_expand_table(), "the depth, down from the limit (a run of an alias on a cycle errs at every depth)"),
                   _expand_wrapper())
    return also(proof, checked)


@law("alias_unknown_reported", "S4.4", "A run of an alias that does not exist is reported as Unknown, and runs nothing.", PROVED)
def alias_unknown_reported() -> Evidence:
    """Proved for every table and line, on the code of _expand (``_expand_table``): the commands
    before the line's first run go on, and a run of a missing alias is Unknown named by it, whatever
    the depth (its body is looked up before the limit is read), returned at once: nothing after it
    runs. A missing alias reached from a run of the line makes some error (upward along the reach
    path: its run is Unknown, and a run whose body holds an erring run errs, as in
    alias_self_cycle); with no cycle in the table that error is no Cycle, since a Cycle nests past
    len(names) + 1 levels along a chain of found names, which then repeats a name (pigeonhole:
    mathematics, the z3 lemmas of ``_cycle_lemmas``), so it is Unknown. expand is _expand at depth
    0 (``_expand_wrapper``). The bounded check stays, on production too."""
    def unknown(side: str) -> Callable[..., bool]:
        def check(case: tuple[m.Aliases, tuple[m.Command, ...]]) -> bool:
            table, line = case
            runs = [c.args[0] for c in line if c.verb == m.RUN]
            out = EXPANDERS[side](table, line)
            if runs and runs[0] not in dict(table):
                return out == m.ExpandError("Unknown", runs[0])
            if any(_reach(table, r)[1] for r in runs) and not any(_cycles(table, n) for n in dict(table)):
                return isinstance(out, m.ExpandError) and out.kind == "Unknown"
            return True

        return check

    checked = _both_expand(unknown, lambda: itertools.product(_tables(), LINES), f"{TABLE_LABEL} x {len(LINES)} lines")
    proof = all_of(_expand_induction(_expand_table(), "the commands, within limit - depth (a missing alias reached is Unknown)"), _expand_wrapper(),
                   _cycle_lemmas())
    return also(proof, checked)


@law("alias_runs_body", "S4.4", "An alias of plain commands runs exactly its commands.", PROVED)
def alias_runs_body() -> Evidence:
    """Proved for every table and body, on the code: expand is _expand at depth 0 with the limit
    len(names) + 1 (``_expand_wrapper``); at depth 0 a run of an alias the table holds is under
    every such limit, so its body is expanded at depth 1 and that is the result
    (``_top_under_limit``); and a body with no run expands to itself (induction on its commands, of
    _expand: a command that is no run is appended to any state, reading no body, depth or limit:
    ``_expand_table``). The bounded law stays, on production too."""
    def runs(side: str) -> Callable[..., bool]:
        def check(table: m.Aliases) -> bool:
            for name, body in dict(table).items():
                if all(c.verb != m.RUN for c in body) and EXPANDERS[side](table, (m.Command(m.RUN, (name,)),)) != body:
                    return False
            return True

        return check

    big = tuple(chain(n, False) + (("plain", (PLAIN, m.Command(m.ACTION, ("app.x",)))),) for n in range(0, 13))
    checked = all_of(_both_expand(runs, _tables, TABLE_LABEL), _both_expand(runs, lambda: iter(big), "chains of 0..12 aliases beside a plain alias"))
    proof = all_of(_expand_induction(_expand_table(), "the commands of a body with no run (each is appended)"), _top_under_limit(), _expand_wrapper())
    return also(proof, checked)


# -- binds (S4.5) -------------------------------------------------------------------------------

KEYS = ("k1", "k2")
BIND_BODIES: tuple[tuple[m.Command, ...], ...] = ((), (PLAIN,), (m.Command(m.ACTION, ("app.x",)),), (RUN["a"],), (PLAIN, RUN["b"]))
SMALL_TABLES: tuple[m.Aliases, ...] = ((), (("a", (PLAIN,)),), (("a", (RUN["a"],)),), (("a", (RUN["b"],)), ("b", (PLAIN,))),
                                      (("b", (m.Command(m.ACTION, ("app.y",)),)),), (("a", (PLAIN, RUN["b"])),), (("a", ()), ("b", ())), (("b", (RUN["c"],)),))


def _presses() -> Iterator[tuple[m.Binds, m.Aliases, str]]:
    binds = tuple((k, b) for k in KEYS for b in BIND_BODIES)
    for n in range(4):
        for chosen in itertools.product(binds, repeat=n):
            for table in SMALL_TABLES:
                for key in (*KEYS, "k3"):
                    yield chosen, table, key


BIND_LABEL = "bind lists of length 0..3 over 2 keys x 5 bodies, x 8 alias tables x 3 keys"
Pressed = tuple[tuple[m.Command, ...], tuple[str, ...]] | m.ExpandError | None


def _p_press(binds: m.Binds, table: m.Aliases, key: str) -> Pressed:
    pb = p.Binds()
    for k, body in binds:
        pb.add(k, [p.Command(c.verb, c.args) for c in body])
    try:
        out = pb.press(key, _to_p(table))
    except p.ExpandError as error:
        return m.ExpandError(error.kind, error.name)
    if out is None:
        return None
    return tuple(m.Command(c.verb, c.args) for c in out.session), tuple(out.client)


PRESSERS: dict[str, Callable[[m.Binds, m.Aliases, str], Pressed]] = {"model": m.press, "production": _p_press}


@functools.lru_cache(maxsize=None)
def _first_lemma() -> Evidence:
    """``press`` folds ``first`` over the binds, then runs the expansion of what is bound: induction
    on the binds, of press. Base: no bind, nothing bound: None. Step: press itself on two binds,
    first and expand abstracted, the state after the first bind any (nothing or a body token): the
    second bind goes to first with (that state, its key is the key, its body); what first gives is
    the press's bound body: nothing runs nothing (no expansion), a body is expanded with the table
    and an expansion error is the press's result as it is; then ``first`` on every state: a bound
    body stays, and with nothing bound a bind of the key binds it."""
    real = m.press
    states = Finite("bound so far (nothing, a body)", ("nothing", "a body"))
    base = exhaust(domain(Finite("empty bind lists", ((),))), lambda binds: real(binds, REG, "k") is None, about=[real])

    def body(matches: bool, bound: str, outcome: str) -> bool:
        table: Any = Opaque("alias table")
        before: Any = Opaque("bound by the binds before")
        body_: Any = Opaque("the bind's body")
        result: Any = Opaque("first's result") if bound == "a body" else None
        error = m.ExpandError("Cycle", "a")
        plain = (m.Command(m.SET, ("n", "1")), m.Command(m.ACTION, ("app.x",)))
        binds = (("k0", B), ("k" if matches else "k2", body_))
        calls: list[tuple[Any, ...]] = []

        def first(b: Any, is_key: bool, bd: Any) -> Any:
            calls.append(("first", b, is_key, bd))
            return before if bd is B else result

        def expand(t: Any, commands: Any) -> Any:
            calls.append(("expand", t, commands))
            return error if outcome == "an error" else plain

        with callees(m, first=first, expand=expand):
            got = real(binds, table, "k")
        want: list[tuple[Any, ...]] = [("first", before, matches, body_)]
        if result is None:
            return got is None and _same_calls(calls[1:], want)
        want.append(("expand", table, result))
        done = got is error if outcome == "an error" else got == ((plain[0],), ("app.x",))
        return done and _same_calls(calls[1:], want)

    def step(kind: str, matches: bool) -> bool:
        before = None if kind == "nothing" else A
        after = m.first(before, matches, B)
        return after is (B if before is None and matches else before)

    step_ev = all_of(
        exhaust(domain(boolean("the bind is of the key"), Finite("what first gives (nothing, a body)", ("nothing", "a body")),
                       Finite("expand's outcome (an error, an expansion)", ("an error", "an expansion"))), body, about=[real]),
        exhaust(domain(states, boolean("the bind is of the key")), step, about=[m.first]),
    )
    return induction(base, step_ev, of="bend.cvar.press", label="the binds (press folds first over them)")


@law("bind_press_plain", "S4.5", "A key press runs only plain commands: actions go to the client, the rest to the session.", PROVED)
def bind_press_plain() -> Evidence:
    """Proved for every bind list, table and key, on the code: press takes the first bind of the
    key and expands it (induction on the binds, of press); expand is _expand at depth 0
    (``_expand_wrapper``), and an expansion that is no error has no run (induction on the commands
    within an induction on limit - depth, of _expand); press splits the expansion by two
    comprehensions, each command by its own verb (``_press_split``: press itself on expansions of
    two commands of every pair of verbs but run): actions go to the client, the rest to the
    session. The bounded law stays, on production too."""
    def plain(side: str) -> Callable[..., bool]:
        def check(case: tuple[m.Binds, m.Aliases, str]) -> bool:
            out = PRESSERS[side](*case)
            if out is None or isinstance(out, m.ExpandError):
                return True
            session, client = out
            expanded = m.expand(case[1], [b for k, b in case[0] if k == case[2]][0])
            assert not isinstance(expanded, m.ExpandError)
            actions = tuple(c.args[0] for c in expanded if c.verb == m.ACTION)
            return all(c.verb not in (m.RUN, m.ACTION) for c in session) and client == actions

        return check

    proof = all_of(_first_lemma(), _expand_induction(_run_free_step(), "the commands, within limit - depth (an expansion is an error or run-free)"),
                   _expand_wrapper(), _press_split())
    return also(proof, _both_expand(plain, _presses, BIND_LABEL))


def _press_split() -> Evidence:
    """press itself, the first bind's body and its expansion abstracted: an expansion of two commands
    of every pair of verbs but run (the comprehensions take each command by its own verb alone)
    gives a session with no run and no action, and the client the actions' ids in order."""
    real = m.press
    table: Any = Opaque("alias table")
    body: Any = Opaque("the first bind's body")
    plain = Finite("verbs of the command language but run", tuple(v for v in VERBS.values if v != m.RUN))

    def split(first: str, second: str) -> bool:
        expansion = (_command(first), _command(second))

        def expand(t: Any, commands: Any) -> Any:
            if t is not table or commands is not body:
                raise LawFailed("press expanded something else")
            return expansion

        with callees(m, expand=expand):
            got = real((("k", body),), table, "k")
        if not isinstance(got, tuple):
            return False
        session, client = got
        actions = tuple(c.args[0] for c in expansion if c.verb == m.ACTION)
        return all(c.verb not in (m.RUN, m.ACTION) for c in session) and client == actions

    return exhaust(domain(Finite("the first command's verb", plain.values), Finite("the second command's verb", plain.values)), split, about=[real])


@law("bind_unbound_runs_nothing", "S4.5", "A key with no bind runs nothing.", PROVED)
def bind_unbound_runs_nothing() -> Evidence:
    def nothing(side: str) -> Callable[..., bool]:
        def check(case: tuple[m.Binds, m.Aliases, str]) -> bool:
            binds, _, key = case
            out = PRESSERS[side](*case)
            if all(k != key for k, _ in binds):
                return out is None
            body = [b for k, b in binds if k == key][0]
            return body != () or out == ((), ())  # an empty bind runs nothing either

        return check

    return also(_first_lemma(), bounded(_presses(), nothing("model"), label=BIND_LABEL)).with_production(
        bounded(_presses(), nothing("production"), label=BIND_LABEL)
    )


@law("bind_first_wins", "S4.5", "A key press runs the commands of the first bind of the key.", PROVED)
def bind_first_wins() -> Evidence:
    def first(side: str) -> Callable[..., bool]:
        def check(case: tuple[m.Binds, m.Aliases, str]) -> bool:
            binds, table, key = case
            mine = [b for k, b in binds if k == key]
            if not mine:
                return True
            return PRESSERS[side](binds, table, key) == PRESSERS[side](((key, mine[0]),), table, key)

        return check

    return also(_first_lemma(), bounded(_presses(), first("model"), label=BIND_LABEL)).with_production(
        bounded(_presses(), first("production"), label=BIND_LABEL)
    )
