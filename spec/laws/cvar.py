"""The 16 cvar laws of control.md S4, over the model ``bend.cvar``, each proved by exhaustion.

What makes each domain finite (the rules never read an id's text or a value beyond its type,
so a few ids and one value of each kind stand for all):
- Registries: declaration lists of length 0..3 over 2 ids x {Bool, Nat} x {Global, Local} x 3
  defaults (a Bool, a Nat, a String), persist and replicate off: 24 declarations, 14,425 lists.
- Worlds: 4 registries (a Bool cvar ``b`` and a Nat cvar ``n``, each Global or Local, plus the
  undeclared id ``u``); each layer holds no set or one of 4 sets ((b, true), (b, 2): wrong type,
  (n, 2), (u, true): undeclared); a config of a global and a project file; a family of a root
  and at most one subagent, each with a profile and sets. 4 x 25 x (25 + 625) = 65,000 worlds.
- Written and replicated: the 64 registries of those scopes x persist x replicate flags, an
  agent's sets of length 0..2 over the 4 sets, a parent with a profile of 0..1 set.
- Aliases: tables over the names {a, b}, each missing or one of 7 bodies (empty, a plain set, a
  run of a, of b, of the missing c, ``a; b``, ``set; a``): 64 tables x 7 lines.
- Binds: lists of 0..3 binds over keys {k1, k2} with 5 bodies, 8 alias tables, 3 keys pressed.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from bend import cvar as m
from spec.evidence import Evidence, all_of, also, bounded
from spec.registry import BOUNDED, law

IDS = ("x", "y")
DEFAULTS: tuple[m.Value, ...] = (True, 1, "s")
TYPES = (m.Type(m.BOOL), m.Type(m.NAT))
DECLS = tuple(m.Decl(i, t, s, False, False, d) for i in IDS for t in TYPES for s in (m.GLOBAL, m.LOCAL) for d in DEFAULTS)


def _decl_lists() -> Iterator[tuple[m.Decl, ...]]:
    for n in range(4):
        yield from itertools.product(DECLS, repeat=n)


DECL_LABEL = "declaration lists of length 0..3 over 24 declarations"

B, N, U = "b", "n", "u"
SETS = (m.Set(B, True), m.Set(B, 2), m.Set(N, 2), m.Set(U, True))
SLOT: tuple[tuple[m.Set, ...], ...] = ((),) + tuple((s,) for s in SETS)


def _registry(b_scope: str, n_scope: str, bp: bool = False, br: bool = False, np: bool = False, nr: bool = False) -> tuple[m.Decl, ...]:
    return (m.Decl(B, m.Type(m.BOOL), b_scope, bp, br, False), m.Decl(N, m.Type(m.NAT), n_scope, np, nr, 0))


REGISTRIES = tuple(_registry(b, n) for b in (m.GLOBAL, m.LOCAL) for n in (m.GLOBAL, m.LOCAL))
FLAGGED = tuple(
    _registry(b, n, *flags) for b in (m.GLOBAL, m.LOCAL) for n in (m.GLOBAL, m.LOCAL) for flags in itertools.product((False, True), repeat=4)
)

World = tuple[tuple[m.Decl, ...], tuple[m.Layer, ...], tuple[m.Agent, ...]]


def _worlds() -> Iterator[World]:
    for reg in REGISTRIES:
        for g, p in itertools.product(SLOT, repeat=2):
            config = (m.Layer("global settings.json", False, g), m.Layer("project settings.json", True, p))
            for rp, rs in itertools.product(SLOT, repeat=2):
                root = m.Agent("main", rp, rs)
                yield reg, config, (root,)
                for sp, ss in itertools.product(SLOT, repeat=2):
                    yield reg, config, (root, m.Agent("sub", sp, ss))


WORLD_LABEL = "65,000 worlds: 4 registries x config of 2 files x a root and at most one subagent, each layer 0..1 of 4 sets"


@law("cvar_registry_unique", "S4.1", "The registry holds each id once: a second declaration is a RegistryError.", BOUNDED)
def cvar_registry_unique() -> Evidence:
    def unique(decls: tuple[m.Decl, ...]) -> bool:
        reg = m.registry(decls)
        ids = [d.id for d in decls]
        if isinstance(reg, m.RegistryError):
            return len(set(ids)) < len(ids) or any(not m.has_type(d.type, d.default) for d in decls)
        return len(set(d.id for d in reg)) == len(reg) == len(decls)

    return bounded(_decl_lists(), unique, label=DECL_LABEL)


@law("cvar_registry_typed", "S4.1", "Each default of an accepted registry has the type of its cvar.", BOUNDED)
def cvar_registry_typed() -> Evidence:
    def typed(decls: tuple[m.Decl, ...]) -> bool:
        reg = m.registry(decls)
        if isinstance(reg, m.RegistryError):
            return any(not m.has_type(d.type, d.default) for d in decls) or reg.kind == "duplicate"
        return all(m.has_type(d.type, d.default) for d in reg)

    return bounded(_decl_lists(), typed, label=DECL_LABEL)


@law("cvar_value_typed", "S4", "Each value has the type of its cvar in each agent; an undeclared cvar has no value.", BOUNDED)
def cvar_value_typed() -> Evidence:
    def typed(world: World) -> bool:
        reg, config, family = world
        for i in range(1, len(family) + 1):
            for cvar in (B, N):
                decl = m.lookup(reg, cvar)
                assert decl is not None
                if not m.has_type(decl.type, m.value(reg, config, family[:i], cvar)):
                    return False
            if m.value(reg, config, family[:i], U) is not None:
                return False
        return True

    return bounded(_worlds(), typed, label=WORLD_LABEL)


@law("cvar_inherits", "S4", "A subagent with no profile and no sets has its parent's values.", BOUNDED)
def cvar_inherits() -> Evidence:
    def inherits(world: World) -> bool:
        reg, config, family = world
        child = family + (m.Agent("child", (), ()),)
        return all(m.value(reg, config, child, c) == m.value(reg, config, family, c) for c in (B, N, U))

    return bounded(_worlds(), inherits, label=WORLD_LABEL)


@law("cvar_set_wins", "S4", "The last valid set of a subagent wins over its parent's value.", BOUNDED)
def cvar_set_wins() -> Evidence:
    two = tuple(itertools.product(SETS, repeat=2)) + tuple((s,) for s in SETS) + ((),)

    def cases() -> Iterator[tuple[World, tuple[m.Set, ...]]]:
        for reg in REGISTRIES:
            for g in SLOT:
                config = (m.Layer("global settings.json", False, g),)
                for rp, rs, sp in itertools.product(SLOT, repeat=3):
                    for ss in two:
                        yield (reg, config, (m.Agent("main", rp, rs), m.Agent("sub", sp, ss))), ss

    def wins(case: tuple[World, tuple[m.Set, ...]]) -> bool:
        (reg, config, family), sets = case
        for cvar in (B, N):
            valid = [s for s in sets if s.id == cvar and m.check(reg, s, True) is None]
            if valid and m.value(reg, config, family, cvar) != valid[-1].value:
                return False
        return True

    return bounded(cases(), wins, label="4 registries x 5 configs x root profile, root sets, sub profile 0..1 set x sub sets 0..2 sets")


@law("cvar_global_uniform", "S4.2", "A Global cvar has one value in each agent: the config's, on the default.", BOUNDED)
def cvar_global_uniform() -> Evidence:
    def uniform(world: World) -> bool:
        reg, config, family = world
        for decl in reg:
            if decl.scope == m.GLOBAL:
                want = m.config_value(reg, config, decl.id, False)
                # the project file never sets it: the config's value is the global files' value
                if want != m.config_value(reg, config, decl.id, True):
                    return False
                if any(m.value(reg, config, family[:i], decl.id) != want for i in range(1, len(family) + 1)):
                    return False
        return True

    return bounded(_worlds(), uniform, label=WORLD_LABEL)


TWO_SETS = ((),) + tuple((s,) for s in SETS) + tuple(itertools.product(SETS, repeat=2))


def _agents() -> Iterator[tuple[tuple[m.Decl, ...], m.Agent, m.Agent]]:
    for reg in FLAGGED:
        for pp in SLOT:
            for ap, sets in itertools.product(SLOT, TWO_SETS):
                yield reg, m.Agent("main", pp, ()), m.Agent("sub", ap, sets)


AGENT_LABEL = "64 flagged registries x parent profile 0..1 set x agent profile 0..1 set x agent sets 0..2 sets"


@law("cvar_written_flagged", "S4.3", "An agent writes to its cfg only persist cvars and replicates only replicate cvars.", BOUNDED)
def cvar_written_flagged() -> Evidence:
    def flagged(case: tuple[tuple[m.Decl, ...], m.Agent, m.Agent]) -> bool:
        reg, parent, agent = case
        persist = {d.id for d in reg if d.persist}
        replicate = {d.id for d in reg if d.replicate}
        w = m.written(reg, agent)
        r = m.replicated(reg, (), (parent, agent))
        return all(s.id in persist for s in w) and [s.id for s in r] == [d.id for d in reg if d.id in replicate]

    return bounded(_agents(), flagged, label=AGENT_LABEL)


@law("cvar_persist_roundtrip", "S4.6", "The written cfg, read back as the profile, gives the same value of each persist cvar.", BOUNDED)
def cvar_persist_roundtrip() -> Evidence:
    def roundtrip(case: tuple[tuple[m.Decl, ...], m.Agent, m.Agent]) -> bool:
        reg, parent, agent = case
        before = (parent, agent)
        after = (parent, m.saved(reg, agent))
        return all(m.value(reg, (), before, d.id) == m.value(reg, (), after, d.id) for d in reg if d.persist)

    return bounded(_agents(), roundtrip, label=AGENT_LABEL)


@law("cvar_toggle_twice", "S4", "Two toggles give back the value.", BOUNDED)
def cvar_toggle_twice() -> Evidence:
    def twice(world: World) -> bool:
        reg, config, family = world
        for cvar in (B, N, U):
            once, e1 = m.toggle(reg, config, family, cvar)
            again, e2 = m.toggle(reg, config, once, cvar)
            if e1 is None:
                if e2 is not None or m.value(reg, config, once, cvar) == m.value(reg, config, family, cvar):
                    return False
                if m.value(reg, config, again, cvar) != m.value(reg, config, family, cvar):
                    return False
            elif once != family:  # a refused toggle changes nothing
                return False
        return True

    return bounded(_worlds(), twice, label=WORLD_LABEL + " x 3 ids")


# -- aliases ----------------------------------------------------------------------------------

PLAIN = m.Command(m.SET, ("n", "1"))
RUN_A, RUN_B, RUN_C = m.Command(m.RUN, ("a",)), m.Command(m.RUN, ("b",)), m.Command(m.RUN, ("c",))
BODIES: tuple[tuple[m.Command, ...], ...] = ((), (PLAIN,), (RUN_A,), (RUN_B,), (RUN_C,), (RUN_A, RUN_B), (PLAIN, RUN_A))


def _tables() -> Iterator[m.Aliases]:
    slot: tuple[tuple[m.Command, ...] | None, ...] = (None, *BODIES)
    for a, b in itertools.product(slot, repeat=2):
        table: m.Aliases = ()
        if a is not None:
            table = table + (("a", a),)
        if b is not None:
            table = table + (("b", b),)
        yield table


ALIAS_LABEL = "64 tables over {a, b} (each missing or one of 7 bodies) x 7 lines"


def _reach(table: m.Aliases, name: str) -> tuple[set[str], bool]:
    """The names a run of ``name`` reaches (graph search, independent of expand), and
    whether a missing name is among them."""
    seen: set[str] = set()
    todo = [name]
    missing = False
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        body = m.alias_body(table, current)
        if body is None:
            missing = True
            continue
        todo.extend(c.args[0] for c in body if c.verb == m.RUN)
    return seen, missing


def _cycles(table: m.Aliases, name: str) -> bool:
    body = m.alias_body(table, name)
    return body is not None and any(name in _reach(table, c.args[0])[0] for c in body if c.verb == m.RUN)


@law(
    "alias_expands_fully",
    "S4.4",
    "An expansion leaves no alias to run, or reports a cycle or an unknown alias; a chain stops at len(table) + 1 levels.",
    BOUNDED,
)
def alias_expands_fully() -> Evidence:
    def full(case: tuple[m.Aliases, tuple[m.Command, ...]]) -> bool:
        table, line = case
        out = m.expand(table, line)
        if isinstance(out, m.ExpandError):
            if out.kind not in ("Cycle", "Unknown"):
                return False
            if out.kind == "Cycle" and not any(_cycles(table, n) for n in m.names(table)):
                return False
            # a chain of single runs: the run past the bound (nest len + 2) is the one named
            if out.kind == "Cycle" and len(line) == 1 and line[0].verb == m.RUN:
                walk, name = 0, line[0].args[0]
                while True:
                    walk += 1
                    body = m.alias_body(table, name)
                    if walk > len(m.names(table)) + 1 or body is None or len(body) != 1 or body[0].verb != m.RUN:
                        break
                    name = body[0].args[0]
                if walk == len(m.names(table)) + 2 and out.name != name:
                    return False
            return True
        return all(c.verb != m.RUN for c in out)

    return bounded(itertools.product(_tables(), BODIES), full, label=ALIAS_LABEL)


@law("alias_self_cycle", "S4.4", "An alias that runs itself (and reaches no missing alias) is a cycle.", BOUNDED)
def alias_self_cycle() -> Evidence:
    def cycle(table: m.Aliases) -> bool:
        for name in m.names(table):
            if _cycles(table, name) and not _reach(table, name)[1]:
                out = m.expand(table, (m.Command(m.RUN, (name,)),))
                if not (isinstance(out, m.ExpandError) and out.kind == "Cycle"):
                    return False
        return True

    return bounded(_tables(), cycle, label="64 tables over {a, b}")


@law("alias_unknown_reported", "S4.4", "A run of an alias that does not exist is reported as Unknown, and runs nothing.", BOUNDED)
def alias_unknown_reported() -> Evidence:
    def unknown(case: tuple[m.Aliases, tuple[m.Command, ...]]) -> bool:
        table, line = case
        runs = [c.args[0] for c in line if c.verb == m.RUN]
        out = m.expand(table, line)
        if runs and m.alias_body(table, runs[0]) is None:
            return out == m.ExpandError("Unknown", runs[0])
        if any(_reach(table, r)[1] for r in runs) and not any(_cycles(table, n) for n in m.names(table)):
            return isinstance(out, m.ExpandError) and out.kind == "Unknown"
        return True

    return bounded(itertools.product(_tables(), BODIES), unknown, label=ALIAS_LABEL)


@law("alias_runs_body", "S4.4", "An alias of plain commands runs exactly its commands.", BOUNDED)
def alias_runs_body() -> Evidence:
    def runs(table: m.Aliases) -> bool:
        for name, body in table:
            if all(c.verb != m.RUN for c in body) and m.expand(table, (m.Command(m.RUN, (name,)),)) != body:
                return False
        return True

    return bounded(_tables(), runs, label="64 tables over {a, b}")


# -- binds ------------------------------------------------------------------------------------

KEYS = ("k1", "k2")
BIND_BODIES: tuple[tuple[m.Command, ...], ...] = ((), (PLAIN,), (m.Command(m.ACTION, ("app.x",)),), (RUN_A,), (PLAIN, RUN_B))
SMALL_TABLES: tuple[m.Aliases, ...] = ((), (("a", (PLAIN,)),), (("a", (RUN_A,)),), (("a", (RUN_B,)), ("b", (PLAIN,))),
                                      (("b", (m.Command(m.ACTION, ("app.y",)),)),), (("a", (PLAIN, RUN_B)),), (("a", ()), ("b", ())), (("b", (RUN_C,)),))


def _presses() -> Iterator[tuple[m.Binds, m.Aliases, str]]:
    binds = tuple((k, b) for k in KEYS for b in BIND_BODIES)
    for n in range(4):
        for chosen in itertools.product(binds, repeat=n):
            for table in SMALL_TABLES:
                for key in (*KEYS, "k3"):
                    yield chosen, table, key


BIND_LABEL = "bind lists of length 0..3 over 2 keys x 5 bodies, x 8 alias tables x 3 keys"


@law("bind_press_plain", "S4.5", "A key press runs only plain commands: actions go to the client, the rest to the session.", BOUNDED)
def bind_press_plain() -> Evidence:
    def plain(case: tuple[m.Binds, m.Aliases, str]) -> bool:
        out = m.press(*case)
        if out is None or isinstance(out, m.ExpandError):
            return True
        session, client = out
        return all(c.verb not in (m.RUN, m.ACTION) for c in session) and all(isinstance(a, str) for a in client)

    return bounded(_presses(), plain, label=BIND_LABEL)


@law("bind_unbound_runs_nothing", "S4.5", "A key with no bind runs nothing.", BOUNDED)
def bind_unbound_runs_nothing() -> Evidence:
    def nothing(case: tuple[m.Binds, m.Aliases, str]) -> bool:
        binds, _, key = case
        out = m.press(*case)
        if all(k != key for k, _ in binds):
            return out is None
        body = [b for k, b in binds if k == key][0]
        return body != () or out == ((), ())  # an empty bind runs nothing either

    return bounded(_presses(), nothing, label=BIND_LABEL)


@law("bind_first_wins", "S4.5", "A key press runs the commands of the first bind of the key.", BOUNDED)
def bind_first_wins() -> Evidence:
    def first(case: tuple[m.Binds, m.Aliases, str]) -> bool:
        binds, table, key = case
        mine = [b for k, b in binds if k == key]
        if not mine:
            return True
        return m.press(binds, table, key) == m.press(((key, mine[0]),), table, key)

    return bounded(_presses(), first, label=BIND_LABEL)
