"""The 19 effort laws of inference.md S10, each proved by exhaustive enumeration.

What makes each domain finite:
- A thinking-level map has 7 entries, each missing, null or a wire string, so 3^7 = 2,187
  maps; with and without reasoning, 4,374 models. The rules never read a wire string's
  text (they keep it and send it as is), so one wire string stands for all.
- Clamp and cycle see a model only through its offered levels; we take them from all
  4,374 models, across 7 levels and both directions.
- The session rules read the session model only through ``offer``: its offered levels, or
  None outside the catalog. Over the 4,374 models the offered sets are all 128 subsets of
  the ladder (``OFFERS`` checks that), so every session is one of: stored level (unset or 7),
  default setting (unset or 7), and one of 129 offers. The reachable space under open,
  switch (to any of the 129), set (any of 7 levels) and cycle (both ways) is enumerated
  whole by breadth-first search.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from functools import cache

from bend import effort as m
from spec.evidence import Evidence, LawFailed, all_of, also, bounded, explore
from spec.registry import BOUNDED, law

PropML = Callable[["m.Model", str], bool]
PropCycle = Callable[[tuple[str, ...], str, bool], bool]
PropSession = Callable[[str | None, str | None, tuple[str, ...] | None], bool]

WIRE = "wire-value"
ENTRY_CHOICES: tuple[tuple[bool, str | None], ...] = ((False, None), (True, None), (True, WIRE))


def _level_map(choice: tuple[tuple[bool, str | None], ...]) -> m.LevelMap:
    return tuple((level, value) for level, (present, value) in zip(m.LADDER, choice) if present)


MAPS: tuple[m.LevelMap, ...] = tuple(_level_map(c) for c in itertools.product(ENTRY_CHOICES, repeat=len(m.LADDER)))
MODELS: tuple[m.Model, ...] = tuple(m.Model(r, lm) for r in (False, True) for lm in MAPS)
LEVEL_OR_UNSET: tuple[str | None, ...] = (None, *m.LADDER)
MODEL_LABEL = f"{len(MAPS):,} maps x reasoning or not"


@cache
def _offers() -> tuple[tuple[str, ...], ...]:
    found = tuple(sorted({m.offered(model) for model in MODELS}, key=lambda o: [m.rank(x) for x in o]))
    if len(found) != 2 ** len(m.LADDER):
        raise LawFailed(f"expected the models to offer all 128 subsets of the ladder, found {len(found)}")
    return found


def _entry(model: m.Model, level: str) -> tuple[bool, str | None]:
    return m.entry(model.level_map or (), level)


def _over_models_and_levels(prop: PropML, label: str) -> Evidence:
    return bounded(itertools.product(MODELS, m.LADDER), lambda case: prop(*case), label=f"{MODEL_LABEL} x 7 levels{label}")


@law("effort_offered_plain", "S10 ladder 1", "A model without reasoning offers off alone, whatever its map.", BOUNDED)
def effort_offered_plain() -> Evidence:
    return bounded(MAPS, lambda lm: m.offered(m.Model(False, lm)) == (m.OFF,), label=f"{len(MAPS):,} maps, no reasoning")


@law("effort_offered_null", "S10 ladder 2", "A reasoning model never offers a level its map sets to null.", BOUNDED)
def effort_offered_null() -> Evidence:
    return _over_models_and_levels(
        lambda model, level: not model.reasoning or _entry(model, level) != (True, None) or level not in m.offered(model),
        "",
    )


@law("effort_offered_ext", "S10 ladder 2", "xhigh and max are offered only by a map entry holding a wire string.", BOUNDED)
def effort_offered_ext() -> Evidence:
    return bounded(
        ((model, level) for model in MODELS for level in (m.XHIGH, m.MAX)),
        lambda case: case[1] not in m.offered(case[0]) or (case[0].reasoning and isinstance(_entry(*case)[1], str)),
        label=f"{MODEL_LABEL} x {{xhigh, max}}",
    )


@law(
    "effort_offered_kept",
    "S10 ladder 2",
    "A reasoning model offers every level with a wire entry, and every missing level below xhigh.",
    BOUNDED,
)
def effort_offered_kept() -> Evidence:
    def kept(model: m.Model, level: str) -> bool:
        present, value = _entry(model, level)
        should = value is not None if present else m.rank(level) < m.rank(m.XHIGH)
        return not model.reasoning or (level in m.offered(model)) == should

    return _over_models_and_levels(kept, "")


@law("effort_offered_asc", "S10 ladder", "Offered levels are strictly ascending in ladder order, no repeats.", BOUNDED)
def effort_offered_asc() -> Evidence:
    def ascending(model: m.Model) -> bool:
        ranks = [m.rank(level) for level in m.offered(model)]
        return all(a < b for a, b in zip(ranks, ranks[1:]))

    return bounded(MODELS, ascending, label=MODEL_LABEL)


@law(
    "effort_clamp_offered",
    "S10 clamp 2, session 2",
    "With something offered every clamp is offered (the nearest above, else the nearest below), and a switch lands on one.",
    BOUNDED,
)
def effort_clamp_offered() -> Evidence:
    def nearest(offer: tuple[str, ...], level: str) -> bool:
        above = [x for x in offer if m.rank(x) >= m.rank(level)]
        below = [x for x in offer if m.rank(x) < m.rank(level)]
        want = min(above, key=m.rank) if above else max(below, key=m.rank)
        return m.clamp(offer, level) == want

    clamps = bounded(
        ((o, level) for o in _offers() if o for level in m.LADDER),
        lambda case: nearest(*case),
        label="127 non-empty offered sets x 7 levels",
    )
    switches = bounded(
        ((s, d, o) for s in m.LADDER for d in LEVEL_OR_UNSET for o in _offers() if o),
        lambda case: m.switch(case[0], case[1], case[2]) in case[2],
        label="switches: 7 stored x 8 defaults x 127 offered sets",
    )
    return all_of(clamps, switches)


@law("effort_clamp_keeps", "S10 clamp 1", "An offered level clamps to itself.", BOUNDED)
def effort_clamp_keeps() -> Evidence:
    return bounded(
        ((o, level) for o in _offers() for level in o),
        lambda case: m.clamp(*case) == case[1],
        label="128 offered sets x each offered level",
    )


@law("effort_clamp_idem", "S10 clamp 3", "Clamping twice is clamping once, even with nothing offered (off).", BOUNDED)
def effort_clamp_idem() -> Evidence:
    return bounded(
        ((o, level) for o in _offers() for level in m.LADDER),
        lambda case: m.clamp(case[0], m.clamp(*case)) == m.clamp(*case) and (bool(case[0]) or m.clamp(*case) == m.OFF),
        label="128 offered sets (the empty one included) x 7 levels",
    )


def _cycles(prop: PropCycle, which: str) -> Evidence:
    return bounded(
        ((o, level, forward) for o in _offers() for level in m.LADDER for forward in (True, False)),
        lambda case: prop(*case),
        label=f"128 offered sets x 7 levels x both directions ({which})",
    )


@law("effort_cycle_still", "S10 cycle 1", "With fewer than two levels offered a cycle changes nothing (null).", BOUNDED)
def effort_cycle_still() -> Evidence:
    return _cycles(lambda o, level, fw: len(o) >= 2 or m.cycle(o, level, fw) is None, "cycles with < 2 offered")


@law("effort_cycle_next", "S10 cycle 2", "Forward steps to the next offered level above the clamp of the current one.", BOUNDED)
def effort_cycle_next() -> Evidence:
    def nxt(o: tuple[str, ...], level: str, forward: bool) -> bool:
        start = m.clamp(o, level)
        higher = [x for x in o if m.rank(x) > m.rank(start)]
        return not forward or len(o) < 2 or not higher or m.cycle(o, level, True) == min(higher, key=m.rank)

    return _cycles(nxt, "forward, not from the last")


@law("effort_cycle_wrap", "S10 cycle 2", "Forward from the last offered level goes to the first.", BOUNDED)
def effort_cycle_wrap() -> Evidence:
    def wrap(o: tuple[str, ...], level: str, forward: bool) -> bool:
        return len(o) < 2 or m.clamp(o, level) != o[-1] or m.cycle(o, level, True) == o[0]

    return _cycles(wrap, "forward from the last")


@law("effort_cycle_prev", "S10 cycle 2", "Backward steps to the previous offered level below the clamp of the current one.", BOUNDED)
def effort_cycle_prev() -> Evidence:
    def prev(o: tuple[str, ...], level: str, forward: bool) -> bool:
        start = m.clamp(o, level)
        lower = [x for x in o if m.rank(x) < m.rank(start)]
        return len(o) < 2 or not lower or m.cycle(o, level, False) == max(lower, key=m.rank)

    return _cycles(prev, "backward, not from the first")


@law("effort_cycle_wrap_back", "S10 cycle 2", "Backward from the first offered level goes to the last.", BOUNDED)
def effort_cycle_wrap_back() -> Evidence:
    def wrap(o: tuple[str, ...], level: str, forward: bool) -> bool:
        return len(o) < 2 or m.clamp(o, level) != o[0] or m.cycle(o, level, False) == o[-1]

    return _cycles(wrap, "backward from the first")


def _inverse(first: bool) -> Evidence:
    def cancels(o: tuple[str, ...], level: str, forward: bool) -> bool:
        if len(o) < 2 or level not in o:
            return True
        there = m.cycle(o, level, first)
        return there is not None and m.cycle(o, there, not first) == level

    return _cycles(cancels, "from each offered level")


@law("effort_cycle_inverse", "S10 cycle 3", "From an offered level, a backward step cancels a forward one.", BOUNDED)
def effort_cycle_inverse() -> Evidence:
    laps = bounded(
        (o for o in _offers() if len(o) >= 2),
        lambda o: _lap(o) == o,
        label="every offered set of 2+ levels: forward visits each once per lap in ladder order",
    )
    return all_of(_inverse(True), laps)


def _lap(o: tuple[str, ...]) -> tuple[str, ...]:
    visited = [o[0]]
    for _ in range(len(o) - 1):
        step = m.cycle(o, visited[-1], True)
        assert step is not None
        visited.append(step)
    return tuple(visited)


@law("effort_cycle_inverse_back", "S10 cycle 3", "From an offered level, a forward step cancels a backward one.", BOUNDED)
def effort_cycle_inverse_back() -> Evidence:
    return _inverse(False)


# -- the session laws: every reachable session --------------------------------------------

@cache
def _representatives() -> tuple[m.Model | None, ...]:
    """One catalog model per offered set (128), and no catalog model."""
    first: dict[tuple[str, ...], m.Model] = {}
    for model in MODELS:
        first.setdefault(m.offered(model), model)
    if len(first) != len(_offers()):
        raise LawFailed("a representative model is missing for some offered set")
    return (None, *first.values())


def _all_offers() -> tuple[tuple[str, ...] | None, ...]:
    return (None, *_offers())


def _opened() -> list[m.Session]:
    return [
        m.step(m.Session(s, d, model), "open", None)[0]
        for s in LEVEL_OR_UNSET
        for d in LEVEL_OR_UNSET
        for model in _representatives()
    ]


def _actions(session: m.Session) -> list[tuple[object, m.Session]]:
    moves: list[tuple[object, m.Session]] = [(("switch", model), m.step(session, "switch", model)[0]) for model in _representatives()]
    moves += [(("set", level), m.step(session, "set", level)[0]) for level in m.LADDER]
    moves += [(("cycle", way), m.step(session, "cycle", way)[0]) for way in ("forward", "backward")]
    return moves


def _sessions(invariant: PropSession, what: str) -> Evidence:
    return explore(
        _opened(),
        _actions,
        lambda s: invariant(s.stored, s.default, m.offer_of(s.model)),
        label=f"sessions after open under switch, set and cycle, 129 models (one per offered set) x 8 defaults ({what})",
    )


@law("effort_unset_default", "S10 session 4", "An unset level shows the default (as open would settle it), never off.", BOUNDED)
def effort_unset_default() -> Evidence:
    def shows_default(default: str | None, offer: tuple[str, ...] | None) -> bool:
        want = m.default_level(default)
        shown = m.shown(None, default, offer)
        in_reach = want if offer is None else m.clamp(offer, want)
        return shown == in_reach and (shown != m.OFF or in_reach == m.OFF)

    return bounded(
        itertools.product(LEVEL_OR_UNSET, _all_offers()),
        lambda case: shows_default(*case),
        label="8 defaults x 129 offers, stored unset",
    )


@law("effort_settle_offered", "S10 session 1", "With something offered, open settles on an offered level.", BOUNDED)
def effort_settle_offered() -> Evidence:
    return bounded(
        ((s, d, o) for s in LEVEL_OR_UNSET for d in LEVEL_OR_UNSET for o in _offers() if o),
        lambda case: m.settle(*case) in case[2],
        label="8 stored x 8 defaults x 127 non-empty offers",
    )


@law("effort_stored_is_sent", "S10 session 1-3", "After open and any actions, the stored level is the level sent.", BOUNDED)
def effort_stored_is_sent() -> Evidence:
    return _sessions(lambda stored, default, offer: stored is not None and m.sent(stored, offer) == stored, "sent = stored")


@law("effort_shown_is_sent", "S10 session 4", "After open and any actions, the level shown is the level sent.", BOUNDED)
def effort_shown_is_sent() -> Evidence:
    return _sessions(lambda stored, default, offer: m.shown(stored, default, offer) == m.sent(stored, offer), "shown = sent")


# Production's own session rules against the model's, for `crosshair diffbehavior` (make crosshair).
CROSSHAIR_PAIRS = [
    ("bend.effort.settle", "eukhe.effort.settled_level"),
    ("bend.effort.shown", "eukhe.effort.settled_level"),
    ("bend.effort.set_level", "eukhe.effort.requested_level"),
    ("bend.effort.sent", "eukhe.effort.sent_level"),
]
