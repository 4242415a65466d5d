"""The built-in model catalog: the union of the bundled and the compiled sources (inference.md
S6 "the built-in model catalog", rules 1-5).

Read it next to 004_cf1da0cad29d7f64.txt. A model is provider + id (its ``key``). An entry has
an api, a base URL, its data (name, reasoning, input, cost, contextWindow, maxTokens, kept as
they are) and optional fields (thinkingLevelMap, compat, featured, headers), each present or
absent.

1. Every model of either source, exactly once; neither hides the other's.
2. In both: the bundled entry gives api, baseUrl, data and its optional fields; the compiled
   entry fills missing optional fields only when its api is the same.
3. In one: unchanged.
4. Order: bundled, then the compiled-only models in compiled order.
5. Bundle missing or damaged (``None``) -> the compiled catalog.

``union`` states the rules plainly; ``union_fast`` is the compiled form the seed runs ("fast,
pinned to union by law union_fast"): it sees only each entry's key and api (the projection)
and answers, per model of the catalog, the place of its bundled and of its compiled entry.
Production calls ``union_fast`` and assembles the entries back itself.

Precondition (derived): within one source each key occurs once; a bundle that repeats a key
is damaged (rule 5), and the compiled tables are built with unique keys.
"""

from __future__ import annotations

from dataclasses import dataclass

OPTIONAL: tuple[str, ...] = ("thinkingLevelMap", "compat", "featured", "headers")

Key = tuple[str, str]


@dataclass(frozen=True)
class Entry:
    provider: str
    id: str
    api: str
    base_url: str
    data: tuple[tuple[str, object], ...] = ()
    optional: tuple[tuple[str, object], ...] = ()  # the present optional fields, in OPTIONAL order

    @property
    def key(self) -> Key:
        return (self.provider, self.id)


def find(entries: tuple[Entry, ...], key: Key) -> Entry | None:
    for entry in entries:
        if entry.key == key:
            return entry
    return None


def field_of(entry: Entry, name: str) -> tuple[bool, object]:
    for field, value in entry.optional:
        if field == name:
            return True, value
    return False, None


def merge(bundled: Entry, compiled: Entry) -> Entry:
    """Rule 2: the bundled entry, its missing optional fields filled from the compiled entry
    when both have the same api."""
    if bundled.api != compiled.api:
        return bundled
    fields: list[tuple[str, object]] = []
    for name in OPTIONAL:
        present, value = field_of(bundled, name)
        if present:
            fields.append((name, value))
        else:
            there, filled = field_of(compiled, name)
            if there:
                fields.append((name, filled))
    return Entry(bundled.provider, bundled.id, bundled.api, bundled.base_url, bundled.data, tuple(fields))


def union(bundled: tuple[Entry, ...] | None, compiled: tuple[Entry, ...]) -> tuple[Entry, ...]:
    """Rules 1-5."""
    if bundled is None:
        return compiled
    out: list[Entry] = []
    for entry in bundled:
        twin = find(compiled, entry.key)
        out.append(entry if twin is None else merge(entry, twin))
    for entry in compiled:
        if find(bundled, entry.key) is None:
            out.append(entry)
    return tuple(out)


# -- the compiled fast path --------------------------------------------------------------------

Projected = tuple[Key, str]  # an entry's key and api: all the fast path sees


@dataclass(frozen=True)
class Place:
    """One model of the catalog: the index of its bundled entry, of its compiled entry, and
    whether the compiled entry fills the bundled one's missing optional fields (same api)."""

    bundled: int | None
    compiled: int | None
    fill: bool


def union_fast(bundled: tuple[Projected, ...] | None, compiled: tuple[Projected, ...]) -> tuple[Place, ...]:
    """The union over the projection, with one index of the compiled keys."""
    if bundled is None:
        return tuple(Place(None, i, False) for i in range(len(compiled)))
    index: dict[Key, int] = {}
    for i, (key, _api) in enumerate(compiled):
        index.setdefault(key, i)
    seen: set[Key] = set()
    places: list[Place] = []
    for i, (key, api) in enumerate(bundled):
        seen.add(key)
        j = index.get(key)
        places.append(Place(i, j, j is not None and compiled[j][1] == api))
    for j, (key, _api) in enumerate(compiled):
        if key not in seen:
            places.append(Place(None, j, False))
    return tuple(places)


def assemble(bundled: tuple[Entry, ...] | None, compiled: tuple[Entry, ...], places: tuple[Place, ...]) -> tuple[Entry, ...]:
    """The entries of the places (the model's own assembly, for the law union_fast)."""
    out: list[Entry] = []
    for place in places:
        if place.bundled is None:
            assert place.compiled is not None
            out.append(compiled[place.compiled])
        elif place.compiled is None or not place.fill:
            assert bundled is not None
            out.append(bundled[place.bundled])
        else:
            assert bundled is not None
            out.append(merge(bundled[place.bundled], compiled[place.compiled]))
    return tuple(out)


def project(entries: tuple[Entry, ...]) -> tuple[Projected, ...]:
    return tuple((e.key, e.api) for e in entries)
