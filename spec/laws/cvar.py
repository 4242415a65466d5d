"""The 16 cvar laws of control.md S4: the layering, bind, toggle and alias laws proved by
induction, the rest bounded and hunted, every one judged by ``spec.oracles.cvar`` and run on production too.

Proofs. The model computes each list rule as a left fold of a small step (bend/cvar.py):
``registry`` folds ``admit`` over the declarations, ``layer_value`` folds ``pick`` over the sets
of a layer, ``config_value``/``agent_value``/``value`` fold ``over`` over the layers, ``written``
folds ``keep`` over the registry and ``press`` folds ``first`` over the binds. A law about lists
of any length is proved by induction on the list: the base (the empty list) and the step (the
step function on every abstract state) are each checked over a whole finite domain. The steps
pass values, bodies and ids through without reading them, so the values in a step are
*opaque tokens* that raise on any use but identity: a step that ran on them read nothing but
the booleans it is given, so its outcome for a token is its outcome for every value. Each
proved law also runs the composed function on a bounded domain of concrete worlds (``also``),
which ties the folds to the functions the transcripts use.

The expansion (``_expand``, recursive with an early return) is not a fold of a model function,
so its encoding ``_enc_expand`` is: the left fold of one step ``_expand_step`` over the commands,
the nested expansion passed as a thunk. It is checked to equal ``m.expand`` on every table of the
bounded domain, the chains and cycles and Hypothesis's tables; the proofs run the step on abstract
states (``RunFree``, ``Prefix``, opaque tokens). The toggles are proved by running ``toggle`` and
``global_toggle`` themselves on opaque worlds with their callees abstracted to each outcome
(``spec.proofs.callees``), and a Bool cvar's value is a bool because ``check_decl`` reads only a
value's class (run on spies of every class a value has).

Proved with those: alias_runs_body, alias_self_cycle, alias_unknown_reported, alias_expands_fully
(with the run path as a ghost of the encoding and pigeonhole over the table's names, proved by
induction on n in z3), bind_press_plain, cvar_toggle_twice.

Not proved, and why: cvar_value_typed, cvar_registry_typed and cvar_persist_roundtrip rest on the
typing of values (``has_type``, ``parse_value``, the word grammar, quoting) against the oracle's,
over all JSON values and all strings, recursive in List and Map and reading numbers and text: no
encoding of those rules was written. They are judged by the oracle on every type kind x every
input class (bounded) and hunted with Hypothesis (tested). The alias chains and cycles of 1..12
aliases (which alias a cycle of n names) stay bounded beside the proofs.
"""

from __future__ import annotations

import functools
import itertools
import math
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn

import z3
from hypothesis import strategies as st

from bend import cvar as m
from eukhe.settings import cfg as pcfg
from eukhe.settings import cvar as p
from eukhe.settings import cvar_table
from spec.evidence import Bound, Evidence, Finite, LawFailed, all_of, also, boolean, bounded, domain, examples, exhaust, induction
from spec.oracles import cvar as o
from spec.proofs import Opaque, Prefix, callees, timed
from spec.registry import BOUNDED, PROVED, law

# -- opaque values (spec.proofs.Opaque) ----------------------------------------------------------


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
        return ("Enum", tuple(t.choices))
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


@law("cvar_value_typed", "S4", "Each value has the type of its cvar in each agent; an undeclared cvar has no value.", BOUNDED)
def cvar_value_typed() -> Evidence:
    """The typing of values is judged by the oracle on every kind and input class and hunted;
    the layering is checked on the worlds (the value is a default or a valid set's value)."""
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
    return all_of(typing, words, worlds)


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

    return exhaust(domain(states, boolean("id already declared"), boolean("default typed")), step)


@law("cvar_registry_unique", "S4.1", "The registry holds each id once: a second declaration is a RegistryError.", PROVED)
def cvar_registry_unique() -> Evidence:
    """Induction on the declaration list: the empty registry is empty (base); a step refuses an
    id the registry holds and keeps a failed registry failed (step), so an accepted registry
    never holds an id twice and the first duplicate is the error."""
    base = exhaust(domain(Finite("empty declaration lists", ((),))), lambda decls: m.registry(decls) == ())

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

    proof = induction(base, _registry_step(), label="the declaration list (registry is the left fold of admit)")
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


@law("cvar_registry_typed", "S4.1", "Each default of an accepted registry has the type of its cvar.", BOUNDED)
def cvar_registry_typed() -> Evidence:
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

    model_ev = all_of(bounded(_decl_lists(), typed, label=DECL_LABEL), exhaust(domain(TYPE_DOMAIN, _values_bound()), one))
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


def _layer_lemma() -> Evidence:
    """layer_value = the last valid set of the cvar, for sets of any length: induction on the
    sets. Base: no set finds nothing (without reading the registry). Step: ``pick`` on every
    state and every set: a valid set of the cvar replaces it, any other set keeps it."""
    base = exhaust(domain(boolean("project file, profile or sets")), lambda local: m.layer_value(REG, (), local, "c") == (False, None))

    def step(kind: str, matches: bool, valid: bool) -> bool:
        before = _found(kind)
        after = m.pick(before, matches, valid, B)
        if matches and valid:
            return after[0] is True and after[1] is B
        return after[0] is before[0] and after[1] is before[1]

    return induction(base, exhaust(domain(FOUND, boolean("the set is of the cvar"), boolean("the set is valid")), step),
                     label="the sets of a layer (layer_value is the left fold of pick)")


def _layers_lemma() -> Evidence:
    """A layer over the layers below: its value when it found one, else theirs (``over``), for
    any number of layers: induction on the layers, the step over every state."""

    def step(kind: str) -> bool:
        found = (False, None) if kind == "nothing" else (True, B)
        after = m.over(A, found)
        return after is (B if found[0] else A)

    return induction(
        exhaust(domain(Finite("configs of no file and families of no agent", ((),))),
                lambda empty: m.config_value((m.Decl("c", m.Type(m.BOOL), m.LOCAL, False, False, True),), empty, "c", False) is True),
        exhaust(domain(FOUND), step),
        label="the layers, default < config < each agent's profile < its sets (value is the left fold of over)",
    )


def _check_lemma() -> Evidence:
    """``check_decl`` refuses a Global cvar in a project file, a profile or sets before it reads the
    value or the type (both tokens), and an undeclared id before anything."""
    scopes = Finite("scopes", (m.GLOBAL, m.LOCAL))

    def refused(scope: str) -> bool:
        decl = m.Decl("c", REG, scope, False, False, None)
        if scope == m.GLOBAL:
            return m.check_decl(decl, "c", A, True) == m.CvarError(m.GLOBAL_ERR, "c")
        return True

    return all_of(
        exhaust(domain(scopes), refused),
        exhaust(domain(boolean("local only")), lambda local: m.check_decl(None, "c", A, local) == m.CvarError(m.UNDECLARED, "c")),
    )


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

    # an agent of empty layers over any inherited value keeps it: agent_value(token) is the token
    empty = exhaust(domain(Finite("agents with no profile and no sets", (m.Agent("child", (), ()),))),
                    lambda agent: m.agent_value(REG, A, agent, "c") is A)
    proof = all_of(_layer_lemma(), _layers_lemma(), empty)
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
    proof = all_of(_layer_lemma(), _layers_lemma())
    return also(proof, bounded(cases(), wins, label=label)).with_production(bounded(cases(), prod_wins, label=label))


@law("cvar_global_uniform", "S4.2", "A Global cvar has one value in each agent: the config's, on the default.", PROVED)
def cvar_global_uniform() -> Evidence:
    def uniform(world: World) -> bool:
        reg, config, family = world
        for decl in reg:
            if decl.scope == m.GLOBAL:
                want = m.config_value(reg, config, decl.id, True)  # the global files only
                if not same(m.config_value(reg, config, decl.id, False), want):
                    return False
                if any(not same(m.value(reg, config, family[:i], decl.id), want) for i in range(1, len(family) + 1)):
                    return False
        return True

    def prod_uniform(world: World) -> bool:
        reg, _, family = world
        cvars, pfamily = _production(world)
        for decl in reg:
            if decl.scope == m.GLOBAL:
                want = cvars.config_value(decl.id, global_only=True)
                if not same(cvars.config_value(decl.id), want):
                    return False
                if any(not same(cvars.value(pfamily[:i], decl.id), want) for i in range(1, len(family) + 1)):
                    return False
        return True

    proof = all_of(_check_lemma(), _layer_lemma(), _layers_lemma())
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
    """Induction on the registry: ``written`` folds ``keep`` over the declarations; a step adds
    the cvar's last valid set exactly when the cvar is persist and the agent set it."""

    def step(kind: str, flag: bool) -> bool:
        found = _found(kind)
        out = (m.Set("earlier", B),)
        after = m.keep(out, "c", flag, found)
        if flag and found[0]:
            return len(after) == 2 and after[0] is out[0] and after[1].id == "c" and after[1].value is A
        return after is out

    proof = induction(exhaust(domain(Finite("an empty registry", ((),))), lambda reg: m.written(reg, A) == ()),
                      exhaust(domain(FOUND, boolean("persist")), step), label="the registry (written is the left fold of keep)")

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
    global layer only ... A project file never changes what it flips"): the default, then the
    last set of the global files that is declared and of the oracle's type."""
    decl = next(d for d in reg if d.id == cvar)
    value: Any = decl.default
    for layer in config:
        if not layer.project:
            for s in layer.sets:
                if s.id == cvar and o.holds(o_type(decl.type), m.to_json(s.value)):
                    value = s.value
    return value


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
    default (admit refuses a default has_type refuses: the same check) and the layer lemmas
    (a value is the default or a valid set's), every value of a Bool cvar is a bool."""
    scopes = Finite("scopes", (m.GLOBAL, m.LOCAL))

    def typed(scope: str, local_only: bool, x: Any) -> bool:
        decl = m.Decl("c", m.Type(m.BOOL), scope, False, False, True)
        valid = m.check_decl(decl, "c", x, local_only) is None
        allowed = not (local_only and scope == m.GLOBAL)
        return valid == (allowed and isinstance(x, bool)) and m.has_type(m.Type(m.BOOL), x) == isinstance(x, bool)

    return exhaust(domain(scopes, boolean("a project file, profile or sets"), _value_classes()), typed)


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
        _bool_lemma(), _layer_lemma(), _layers_lemma(),
        exhaust(domain(kinds, boolean("the value v")), session),
        exhaust(domain(boolean("the value v")), appended),
        exhaust(domain(boolean("the value v"), Finite("the profile found", FOUND_KINDS.values), Finite("the sets before found", FOUND_KINDS.values)), last_wins),
        exhaust(domain(boolean("the value v")), twice),
        exhaust(domain(kinds, boolean("the value v")), global_toggle),
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


# -- the expansion's encoding: a fold of one step, recursion on the depth ------------------------
#
# ``_expand`` (bend/cvar.py) walks the commands and returns at the first error; its encoding is the
# left fold of ``_expand_step`` over the commands, the error state kept to the end, and the nested
# expansion of an alias's body passed to the step as a thunk (run only for a found body under the
# limit). ``_enc_expand`` is checked to be ``m.expand`` on every table and line of the bounded
# domains below and on Hypothesis's tables; the proofs run the step itself on abstract states:
# ``Prefix`` (a sequence known only by what was appended to it), ``RunFree`` (any sequence with no
# run in it) and opaque tokens for what a step must not read.

VERBS = Finite("verbs of the command language", (m.SET, m.TOGGLE, m.ALIAS, m.BIND, m.ACTION, m.RUN))


def _expand_step(out: Any, c: m.Command, body: Any, over: Any, inner: Callable[[], Any]) -> Any:
    """One command of the expansion: an error stays; a command that is no run is kept; a run of a
    missing alias is Unknown, past the limit a Cycle, else its body's expansion (or its error)."""
    if isinstance(out, m.ExpandError):
        return out
    if c.verb != m.RUN:
        return out + (c,)
    if body is None:
        return m.ExpandError("Unknown", c.args[0])
    if over:
        return m.ExpandError("Cycle", c.args[0])
    got = inner()
    if isinstance(got, m.ExpandError):
        return got
    return out + got


def _enc_expand(table: m.Aliases, commands: tuple[m.Command, ...], depth: int = 0, limit: int | None = None) -> Any:
    top = len(m.names(table)) + 1 if limit is None else limit
    out: Any = ()
    for c in commands:
        body = m.alias_body(table, c.args[0]) if c.verb == m.RUN else None

        def nested(body: Any = body) -> Any:
            return _enc_expand(table, body, depth + 1, top)

        out = _expand_step(out, c, body, depth + 1 > top, nested)
    return out


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


def _command(verb: str) -> m.Command:
    return m.Command(verb, ("a0",) if verb in (m.RUN, m.ACTION, m.TOGGLE) else ("a0", "1"))


def _no_thunk() -> NoReturn:
    raise LawFailed("a step expanded a body it must not")


def _run_free_induction() -> Evidence:
    """Every expansion that is not an error has no run, for any table and commands: induction on
    the commands (the fold) inside an induction on limit - depth (the recursion: a run at the
    limit is a Cycle before any nested expansion; below it the nested expansion is, by the
    hypothesis, an error or run-free). The step is run on every abstract state: an error or a
    run-free sequence; every verb; a body missing or found (a token); past the limit or not; the
    nested expansion an error or run-free (a thunk that must not run past the limit)."""
    error = m.ExpandError("Cycle", "earlier")
    states = Finite("expansion so far (an error, run-free)", ("error", "run-free"))
    bodies = Finite("the alias's body (missing, found)", ("missing", "found"))
    nested = Finite("the nested expansion (an error, run-free)", ("error", "run-free"))

    def step(state: str, verb: str, body: str, over: bool, inner: str) -> bool:
        out: Any = error if state == "error" else RunFree()
        got: Any = m.ExpandError("Unknown", "deeper") if inner == "error" else RunFree()
        after = _expand_step(out, _command(verb), None if body == "missing" else REG, over, _no_thunk if over else (lambda: got))
        return isinstance(after, (m.ExpandError, RunFree))

    base = exhaust(domain(Finite("empty command lists", ((),))), lambda commands: _enc_expand(REG, commands, 0, 0) == ())
    return induction(base, exhaust(domain(states, VERBS, bodies, boolean("past the limit"), nested), step),
                     label="the commands expanded, within an induction on limit - depth (each step an error or run-free)")


def _expand_agrees(case: tuple[m.Aliases, tuple[m.Command, ...]]) -> bool:
    table, line = case
    if _enc_expand(table, line) != m.expand(table, line):
        raise LawFailed(f"the expansion's encoding differs from m.expand on {table!r}, {line!r}")
    return True


def _expand_check() -> Evidence:
    chains = tuple((chain(n, c), (m.Command(m.RUN, ("a0",)),)) for n, c in CHAINS)
    return also(
        all_of(bounded(itertools.product(_tables(), LINES), _expand_agrees, label=f"encoding = m.expand: {TABLE_LABEL} x {len(LINES)} lines"),
               bounded(chains, _expand_agrees, label=f"encoding = m.expand: {CHAIN_LABEL}")),
        examples(lambda table, start: _expand_agrees((table, (m.Command(m.RUN, (start,)),))), table=_hunt_tables(),
                 start=st.sampled_from(["a0", "a1", "zz"])),
    )


def _plain_lemma() -> Evidence:
    """An expansion of commands with no run is those commands, for any list: induction on the
    commands. Base: nothing expands to nothing. Step: from any sequence so far (symbolic), a
    command of any verb but run is appended, reading no body, limit or nested expansion."""
    base = exhaust(domain(Finite("empty command lists", ((),))), lambda commands: _enc_expand(REG, commands, 0, 0) == ())

    def step(verb: str) -> bool:
        c = _command(verb)
        return bool(_expand_step(Prefix("body[:i]"), c, A, B, _no_thunk) == Prefix("body[:i]", (c,)))

    plain = Finite("verbs of the command language but run", tuple(v for v in VERBS.values if v != m.RUN))
    return induction(base, exhaust(domain(plain), step), label="the commands of a body with no run (the fold appends each)")


@functools.lru_cache(maxsize=None)
def _runs_body_proof() -> Evidence:
    """A run of an alias in the table: the limit len(names) + 1 >= 2 is not passed at depth 0
    (z3, every table size); the step then gives the nested expansion of the body, which by
    ``_plain_lemma`` is the body itself."""
    n = z3.Int("len(names)")
    under = timed(z3.Not(z3.IntVal(0) + 1 > n + 1), label="a run at depth 0 is under the limit len(names) + 1 of every table that holds it",
                  assumptions=[n >= 1])
    top = exhaust(domain(Finite("a run of an alias found in the table", (m.Command(m.RUN, ("a0",)),))),
                  lambda c: _expand_step((), c, A, False, lambda: Prefix("body")) == Prefix("body"))
    return all_of(_plain_lemma(), under, top)


@functools.lru_cache(maxsize=None)
def _press_proof() -> Evidence:
    """A press runs the expansion of the first bind of the key (``_first_lemma``), or its error;
    a non-error expansion has no run (``_run_free_induction``); press splits it by a fold whose
    step sends an action to the client and any other command to the session: from a session of
    plain commands (no run, no action), every verb but run keeps it so."""

    def step(verb: str) -> bool:
        c = _command(verb)
        session, client = _split_step((PlainOnly(), Prefix("actions")), c)
        return isinstance(session, PlainOnly) and client == (Prefix("actions", (c.args[0],)) if verb == m.ACTION else Prefix("actions"))

    no_run = Finite("verbs of the command language but run", tuple(v for v in VERBS.values if v != m.RUN))
    split = induction(exhaust(domain(Finite("empty expansions", ((),))), lambda e: _split(e) == ((), ())),
                      exhaust(domain(no_run), step), label="the expansion's commands (press splits them by a fold)")
    return all_of(_first_lemma(), _run_free_induction(), split)


class PlainOnly:
    """Any session of plain commands (no run, no action)."""

    def __add__(self, more: object) -> Any:
        if isinstance(more, tuple) and all(isinstance(c, m.Command) and c.verb not in (m.RUN, m.ACTION) for c in more):
            return self
        return ("not plain", more)

    def __repr__(self) -> str:
        return "<plain session>"


def _split_step(state: tuple[Any, Any], c: m.Command) -> tuple[Any, Any]:
    session, client = state
    if c.verb == m.ACTION:
        return session, client + (c.args[0],)
    return session + (c,), client


def _split(expanded: tuple[m.Command, ...]) -> tuple[Any, Any]:
    state: tuple[Any, Any] = ((), ())
    for c in expanded:
        state = _split_step(state, c)
    return state


def _enc_press(binds: m.Binds, table: m.Aliases, key: str) -> Pressed:
    bound: tuple[m.Command, ...] | None = None
    for k, body in binds:
        bound = m.first(bound, k == key, body)
    if bound is None:
        return None
    expanded = _enc_expand(table, bound)
    if isinstance(expanded, m.ExpandError):
        return expanded
    session, client = _split(expanded)
    return tuple(session), tuple(client)


def _press_agrees(case: tuple[m.Binds, m.Aliases, str]) -> bool:
    if _enc_press(*case) != m.press(*case):
        raise LawFailed(f"the press encoding differs from m.press on {case!r}")
    return True


# -- the nest bound: a Cycle error needs a cycle (pigeonhole over the table's names) ---------------
#
# ``_enc_expand_path`` is ``_enc_expand`` with the run path as a ghost: depth = len(path), and the
# nested expansion of a run of c is made with path + (c,) on c's body (``_expand_step_path`` hands
# the body and the name to ``nested``; nothing else calls it). Invariant (induction on the nesting):
# the path is a chain of names found in the table, each run in the body of the one before it, the
# first run in the line. A Cycle is made past the limit len(names) + 1 with a found body, so the
# chain path + (c,) has len(names) + 2 found names: by pigeonhole two are the same name, and the
# chain between them makes that alias reach itself: a cycle. An Unknown is made only for a run
# of a missing alias, the last of such a chain: a missing alias reached from a run of the line.


def _expand_step_path(out: Any, c: m.Command, body: Any, over: Any, nested: Callable[[Any, str], Any]) -> Any:
    return _expand_step(out, c, body, over, lambda: nested(body, c.args[0]))


def _enc_expand_path(table: m.Aliases, commands: tuple[m.Command, ...], path: tuple[str, ...] = (), limit: int | None = None) -> Any:
    top = len(m.names(table)) + 1 if limit is None else limit
    out: Any = ()
    for c in commands:
        body = m.alias_body(table, c.args[0]) if c.verb == m.RUN else None

        def nested(inner: Any, name: str) -> Any:
            return _enc_expand_path(table, inner, path + (name,), top)

        out = _expand_step_path(out, c, body, len(path) + 1 > top, nested)
    return out


def _path_agrees(case: tuple[m.Aliases, tuple[m.Command, ...]]) -> bool:
    table, line = case
    if _enc_expand_path(table, line) != m.expand(table, line):
        raise LawFailed(f"the path encoding differs from m.expand on {table!r}, {line!r}")
    return True


@functools.lru_cache(maxsize=None)
def _path_check() -> Evidence:
    chains = tuple((chain(n, c), (m.Command(m.RUN, ("a0",)),)) for n, c in CHAINS)
    return also(
        all_of(bounded(itertools.product(_tables(), LINES), _path_agrees, label=f"path encoding = m.expand: {TABLE_LABEL} x {len(LINES)} lines"),
               bounded(chains, _path_agrees, label=f"path encoding = m.expand: {CHAIN_LABEL}")),
        examples(lambda table, start: _path_agrees((table, (m.Command(m.RUN, (start,)),))), table=_hunt_tables(),
                 start=st.sampled_from(["a0", "a1", "zz"])),
    )


@functools.lru_cache(maxsize=None)
def _nest_proof() -> Evidence:
    """A Cycle error means the table has a cycle; an Unknown error means a missing alias is reached
    from a run of the line (see the comment above; each piece proved here)."""
    states = Finite("expansion so far (an error, run-free)", ("error", "run-free"))
    bodies = Finite("the alias's body (missing, found)", ("missing", "found"))

    def hands(state: str, verb: str, body: str, over: bool) -> bool:
        """The step calls nested at most once, only for a run of a found body under the limit, with that body and the run's name."""
        calls: list[tuple[Any, str]] = []
        found: Any = A if body == "found" else None

        def nested(inner: Any, name: str) -> Any:
            calls.append((inner, name))
            return RunFree()

        out: Any = m.ExpandError("Cycle", "earlier") if state == "error" else RunFree()
        _expand_step_path(out, _command(verb), found, over, nested)
        if state == "run-free" and verb == m.RUN and body == "found" and not over:
            return len(calls) == 1 and calls[0][0] is found and calls[0][1] == "a0"
        return calls == []

    handing = exhaust(domain(states, VERBS, bodies, boolean("past the limit")), hands)

    # pigeonhole, by induction on n: an injective f from [0, d) into [0, n) has d <= n
    f = z3.Function("f", z3.IntSort(), z3.IntSort())
    d, n, i, j = z3.Ints("d n i j")

    def inj(g: Any, size: Any) -> Any:
        return z3.ForAll([i, j], z3.Implies(z3.And(0 <= i, i < size, 0 <= j, j < size, i != j), g(i) != g(j)))

    def into(g: Any, size: Any, bound: Any) -> Any:
        return z3.ForAll([i], z3.Implies(z3.And(0 <= i, i < size), z3.And(0 <= g(i), g(i) < bound)))

    def g(x: Any) -> Any:
        return z3.If(f(x) == n, f(d - 1), f(x))

    ph_base = timed(z3.Implies(z3.And(d >= 0, into(f, d, 0)), d <= 0), label="n = 0: nothing maps into [0, 0)")
    ph_step = timed(z3.Implies(z3.And(d >= 1, n >= 0, inj(f, d), into(f, d, n + 1)), z3.And(inj(g, d - 1), into(g, d - 1, n))),
                    label="n to n + 1: f injective into [0, n + 1) gives g injective from [0, d - 1) into [0, n), so d - 1 <= n")
    pigeonhole = induction(ph_base, ph_step, label="n (pigeonhole: an injection from [0, d) into [0, n) has d <= n)")

    # the Cycle: past the limit, the chain path + (c,) holds len(names) + 2 found names
    depth, names_ = z3.Ints("len(path) len(names)")
    too_deep = timed(z3.Implies(z3.And(depth + 1 > names_ + 1, names_ >= 0), depth + 1 >= names_ + 2),
                     label="a Cycle past the limit len(names) + 1: the chain path + (c,) has at least len(names) + 2 names")
    # a repeated name on a chain is an alias that reaches itself (R: run in the body of; reach: its closure)
    p = z3.Function("p", z3.IntSort(), z3.IntSort())
    r = z3.Function("R", z3.IntSort(), z3.IntSort(), z3.BoolSort())
    reach = z3.Function("reach", z3.IntSort(), z3.IntSort(), z3.BoolSort())
    a, b, c_, k, length = z3.Ints("a b c k L")
    closure = [z3.ForAll([a], reach(a, a)), z3.ForAll([a, b, c_], z3.Implies(z3.And(reach(a, b), r(b, c_)), reach(a, c_)))]
    chain_ = z3.ForAll([k], z3.Implies(z3.And(0 <= k, k + 1 < length), r(p(k), p(k + 1))))
    along_base = timed(z3.Implies(z3.And(*closure), reach(p(i + 1), p(i + 1))), label="along a chain, base: p(i+1) reaches itself")
    along_step = timed(z3.Implies(z3.And(*closure, chain_, 0 <= i, i + 1 <= j, j + 1 < length, reach(p(i + 1), p(j))), reach(p(i + 1), p(j + 1))),
                       label="along a chain, step: p(i+1) reaches p(j) and p(j) runs p(j+1)")
    along = induction(along_base, along_step, label="j along the chain (p(i+1) reaches every later p(j))")
    repeat = timed(z3.Implies(z3.And(*closure, chain_, 0 <= i, i < j, j < length, p(i) == p(j), reach(p(i + 1), p(j))),
                              z3.And(r(p(i), p(i + 1)), reach(p(i + 1), p(i)))),
                   label="a name repeated on a chain runs an alias that reaches it back: it is on a cycle")
    return all_of(handing, pigeonhole, too_deep, along, repeat)


@functools.lru_cache(maxsize=None)
def _unknown_steps() -> Evidence:
    """A run of a missing alias is Unknown, named by the run, at any depth and from any state but an
    earlier error (which stays): its body is looked up before the limit is read."""

    def missing(state: str) -> bool:
        out: Any = m.ExpandError("Cycle", "earlier") if state == "error" else RunFree()
        after = _expand_step(out, _command(m.RUN), None, B, _no_thunk)
        return after is out if state == "error" else after == m.ExpandError("Unknown", "a0")

    return exhaust(domain(Finite("expansion so far (an error, run-free)", ("error", "run-free"))), missing)


@law(
    "alias_expands_fully",
    "S4.4",
    "An expansion leaves no alias to run, or reports a cycle or an unknown alias; a nest stops at len(table) + 1 levels.",
    PROVED,
)
def alias_expands_fully() -> Evidence:
    """Proved for every table and line: an expansion that is no error has no run (induction on the
    commands within an induction on limit - depth); a Cycle needs a cycle (the run path as a ghost
    of the encoding is a chain of found names; past the limit it holds len(names) + 2 of them, so
    by pigeonhole, proved by induction on n in z3, a name repeats, and a repeated name on a chain
    reaches itself); an Unknown is a missing alias reached from the line. The encodings are
    checked against m.expand. The chains and cycles of 1..12 aliases (which alias a cycle names)
    and the hunt stay, on production too."""
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
    checked = Evidence(main.strength, f"{main.sentence}; production hunted on tables of up to 6 names: {hunted.sentence}", main.production)
    proof = also(all_of(_run_free_induction(), _nest_proof()), _expand_check(), _path_check())
    return also(proof, checked)


@functools.lru_cache(maxsize=None)
def _cycle_proof() -> Evidence:
    """A run of an alias on a cycle is an error at every depth: downward induction on the depth d
    from the limit. Base (d + 1 > limit, z3 for every d and limit): the step of the run is a Cycle.
    Step (d + 1 <= limit): the run expands its body at d + 1; the body holds a run of the next
    alias of the cycle, whose step errs (hypothesis), and an error, once made, stays to the end of
    the fold: so the body's expansion is an error and so is the run. The error is a Cycle: the
    step makes Unknown only for a run whose body is missing, and the alias reaches none. The steps
    are run on every abstract state (an error or run-free), every verb, body, limit and nested
    result; the encoding is checked against m.expand (``_expand_check``)."""
    d, limit = z3.Ints("depth limit")
    base_z3 = timed(z3.Implies(d >= limit, d + 1 > limit), label="a run at a depth at or past the limit is past it, for every depth and limit")
    step_z3 = timed(z3.Implies(d < limit, z3.Not(d + 1 > limit)), label="a run below the limit expands its body, for every depth and limit")
    error = m.ExpandError("Cycle", "earlier")
    states = Finite("expansion so far (an error, run-free)", ("error", "run-free"))
    bodies = Finite("the alias's body (missing, found)", ("missing", "found"))
    nested = Finite("the nested expansion (a Cycle, an Unknown, run-free)", ("cycle", "unknown", "run-free"))
    results = {"cycle": m.ExpandError("Cycle", "deeper"), "unknown": m.ExpandError("Unknown", "deeper")}

    def stays(verb: str, body: str, over: bool, inner: str) -> bool:
        return _expand_step(error, _command(verb), A if body == "found" else None, B, _no_thunk) is error

    def at_limit(state: str) -> bool:
        out: Any = error if state == "error" else RunFree()
        after = _expand_step(out, _command(m.RUN), A, True, _no_thunk)
        return after is error if state == "error" else after == m.ExpandError("Cycle", "a0")

    def below(state: str, inner: str) -> bool:
        out: Any = error if state == "error" else RunFree()
        got = results.get(inner, RunFree())
        after = _expand_step(out, _command(m.RUN), A, False, lambda: got)
        if state == "error":
            return after is error
        return after is got if inner != "run-free" else isinstance(after, RunFree)

    def unknown_only_missing(state: str, verb: str, body: str, over: bool, inner: str) -> bool:
        out: Any = error if state == "error" else RunFree()
        got = results.get(inner, RunFree())
        after = _expand_step(out, _command(verb), None if body == "missing" else A, over, (_no_thunk if over or body == "missing" else (lambda: got)))
        made = isinstance(after, m.ExpandError) and after is not error and after is not got
        if made and after.kind == "Unknown":
            return verb == m.RUN and body == "missing"
        return not made or after.kind == "Cycle"

    plain_or_run = VERBS
    steps = all_of(
        exhaust(domain(plain_or_run, bodies, boolean("past the limit"), nested), stays),
        exhaust(domain(states), at_limit),
        exhaust(domain(states, nested), below),
        exhaust(domain(states, plain_or_run, bodies, boolean("past the limit"), nested), unknown_only_missing),
    )
    return induction(all_of(base_z3, exhaust(domain(states), at_limit)), all_of(step_z3, steps),
                     label="the depth, down from the limit (a run of an alias on a cycle errs at every depth)")


@law("alias_self_cycle", "S4.4", "An alias that runs itself (and reaches no missing alias) is a cycle.", PROVED)
def alias_self_cycle() -> Evidence:
    """Proved for every table (``_cycle_proof``): by downward induction on the depth, a run of an
    alias on a cycle errs at every depth (past the limit the step is a Cycle; below it the body
    holds a run of the next alias of the cycle, which errs, and an error stays to the end of the
    fold); the error is a Cycle since Unknown needs a missing body. Encoding checked against
    m.expand; the bounded checks on tables and cycles of 1..12 aliases stay, on production too."""
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
    return also(also(_cycle_proof(), _expand_check()), checked)


@law("alias_unknown_reported", "S4.4", "A run of an alias that does not exist is reported as Unknown, and runs nothing.", PROVED)
def alias_unknown_reported() -> Evidence:
    """Proved for every table and line: the commands before the line's first run are kept (no
    error), and a run of a missing alias is Unknown named by it, which then stays (``_unknown_steps``,
    the run-free induction); a missing alias reached from the line makes some error (upward along
    the reach path: its run is Unknown at any depth, and a run whose body holds an erring run errs,
    the steps of ``_cycle_proof``), and with no cycle in the table that error is no Cycle
    (``_nest_proof``: pigeonhole), so it is Unknown. Encodings checked against m.expand; the
    bounded check stays, on production too."""
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
    proof = also(all_of(_run_free_induction(), _unknown_steps(), _cycle_proof(), _nest_proof()), _expand_check(), _path_check())
    return also(proof, checked)


@law("alias_runs_body", "S4.4", "An alias of plain commands runs exactly its commands.", PROVED)
def alias_runs_body() -> Evidence:
    """Proved for every table and body: a run at depth 0 of an alias the table holds is under the
    limit (z3, any table size), so the step gives its body's nested expansion, and a body with no
    run expands to itself (induction on its commands: the step appends every verb but run, from
    any symbolic prefix, reading nothing else). The encoding of the expansion is checked against
    m.expand on the bounded tables, the chains and Hypothesis's tables; the bounded law stays."""
    def runs(side: str) -> Callable[..., bool]:
        def check(table: m.Aliases) -> bool:
            for name, body in dict(table).items():
                if all(c.verb != m.RUN for c in body) and EXPANDERS[side](table, (m.Command(m.RUN, (name,)),)) != body:
                    return False
            return True

        return check

    big = tuple(chain(n, False) + (("plain", (PLAIN, m.Command(m.ACTION, ("app.x",)))),) for n in range(0, 13))
    checked = all_of(_both_expand(runs, _tables, TABLE_LABEL), _both_expand(runs, lambda: iter(big), "chains of 0..12 aliases beside a plain alias"))
    return also(also(_runs_body_proof(), _expand_check()), checked)


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


def _first_lemma() -> Evidence:
    """``press`` folds ``first`` over the binds: induction on the binds. Base: no bind, nothing
    bound. Step: the state keeps a bound body; with nothing bound, a bind of the key binds it."""
    states = Finite("bound so far (nothing, a body)", ("nothing", "a body"))

    def step(kind: str, matches: bool) -> bool:
        before = None if kind == "nothing" else A
        after = m.first(before, matches, B)
        return after is (B if before is None and matches else before)

    base = exhaust(domain(Finite("empty bind lists", ((),))), lambda binds: m.press(binds, (), "k") is None)
    return induction(base, exhaust(domain(states, boolean("the bind is of the key")), step), label="the binds (press folds first over them)")


@law("bind_press_plain", "S4.5", "A key press runs only plain commands: actions go to the client, the rest to the session.", PROVED)
def bind_press_plain() -> Evidence:
    """Proved for every bind list, table and key: press takes the first bind of the key (induction
    on the binds), an expansion that is no error has no run (induction on the commands within an
    induction on limit - depth, the step run on every abstract state), and press's split sends
    actions to the client and keeps the session plain (induction on the expansion, every verb).
    The encodings of expand and press are checked against the model on the bounded domains and
    Hypothesis's tables; the bounded law stays, on production too."""
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

    agrees = bounded(_presses(), _press_agrees, label=f"encoding = m.press: {BIND_LABEL}")
    return also(also(_press_proof(), _expand_check(), agrees), _both_expand(plain, _presses, BIND_LABEL))


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
