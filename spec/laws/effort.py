"""The 19 effort laws of inference.md S10, proved over whole finite domains.

Judges: ``spec.oracles.effort`` (S10 transcribed); no law judges with the function it checks.

Why each domain is the whole input domain:
- A thinking-level map has one entry per ladder level, each of 3 SHAPES: missing, null or a
  wire string (S10 free inputs). The wire strings are *opaque tokens*: ``str`` values that
  raise on every inspection but identity (no ``==``, ``len``, truthiness, hashing, slicing,
  methods). A run on them that does not raise shows the rules never read a wire string's
  text, so the outcome for a shape is the outcome for every map of that shape: the 3^7 shapes
  x reasoning are the whole type of models (parametricity). The laws also check that a kept
  level is sent as the very token of its entry ("sent as is"), so an empty wire string
  (``""``) cannot be dropped or read as missing: a check of its text would raise.
- Clamp and cycle read a model only through its offered levels: a subset of the 7-level
  ladder. ``OFFERS`` is all 128 subsets (in ladder order), the whole type; with the 7 levels
  and the 2 directions, a whole finite domain.
- The session rules read the session model only through its offer (``bend.effort.step``
  calls settle, switch, set_level and cycle_step with ``offer_of(model)``): a session is a
  stored level (unset or 7) x a default setting (unset or 7) x an offer (none, or one of 128
  subsets). The states reachable from every opened session under every action (switch to
  every offer, set every level, cycle both ways) are searched whole.

Production runs every law on the same domain (``with_production``): ``CatalogModel`` (the
catalog map compile and its offered levels and wire strings), ``eukhe.effort.clamp``/``cycle``
and ``ThinkingSession`` (open, switch, set, cycle, sent, shown).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

from bend import effort as m
from eukhe import effort as prod
from spec.evidence import Domain, Evidence, Finite, LawFailed, all_of, boolean, bounded, domain, exhaust, reachable
from spec.oracles import effort as o
from spec.registry import PROVED, law


class Inspected(LawFailed):
    """A rule read the text of a wire string (it should only keep it and send it as is)."""


def _refuse(name: str) -> Callable[..., NoReturn]:
    def refuse(self: Opaque, *args: object, **kwargs: object) -> NoReturn:
        raise Inspected(f"the rule read the text of the wire string of {self.level} ({name})")

    return refuse


class Opaque(str):
    """A wire string whose text no rule may read: every operation but identity raises."""

    level: str

    def __new__(cls, level: str) -> Opaque:
        token = super().__new__(cls, f"wire-of-{level}")
        token.level = level
        return token

    def __repr__(self) -> str:
        return f"<opaque wire string of {self.level}>"


_READS = (
    "__eq__ __ne__ __lt__ __le__ __gt__ __ge__ __hash__ __len__ __iter__ __getitem__ __contains__ __add__ __radd__ "
    "__mul__ __rmul__ __mod__ __rmod__ __format__ __str__ __bool__ __reversed__ __getnewargs__ capitalize casefold "
    "center count encode endswith expandtabs find format format_map index isalnum isalpha isascii isdecimal isdigit "
    "isidentifier islower isnumeric isprintable isspace istitle isupper join ljust lower lstrip partition removeprefix "
    "removesuffix replace rfind rindex rjust rpartition rsplit rstrip split splitlines startswith strip swapcase title "
    "translate upper zfill"
).split()
for _name in _READS:
    setattr(Opaque, _name, _refuse(_name))

TOKENS: dict[str, Opaque] = {level: Opaque(level) for level in o.LADDER}

# -- the finite types ----------------------------------------------------------------------

SHAPE_FACTORS = tuple(Finite(f"{level} entry shapes", o.SHAPES) for level in o.LADDER)
REASONING = boolean("reasoning")
LEVEL = Finite("levels", o.LADDER)
STORED = Finite("stored levels or unset", (None, *o.LADDER))
DEFAULT = Finite("default settings or unset", (None, *o.LADDER))
FORWARD = boolean("directions")
OFFERS = Finite(
    "offered sets (every subset of the ladder)",
    tuple(tuple(x for x, keep in zip(o.LADDER, bits) if keep) for bits in itertools.product((False, True), repeat=len(o.LADDER))),
)
OFFER_OR_NONE = Finite("offers or no catalog model", (None, *OFFERS.values))


def _shapes(point: tuple[str, ...]) -> dict[str, str]:
    return dict(zip(o.LADDER, point))


def _model_map(shapes: dict[str, str]) -> m.LevelMap:
    return tuple((level, None if shape == o.NULL else TOKENS[level]) for level, shape in shapes.items() if shape != o.MISSING)


def _catalog_map(shapes: dict[str, str]) -> dict[str, str | None]:
    return {level: (None if shape == o.NULL else TOKENS[level]) for level, shape in shapes.items() if shape != o.MISSING}


def _model(reasoning: bool, shapes: dict[str, str]) -> m.Model:
    return m.Model(reasoning, _model_map(shapes))


def _catalog(reasoning: bool, shapes: dict[str, str]) -> prod.CatalogModel:
    """Production's catalog model of this shape: the map parsed and compiled by production."""
    return prod.CatalogModel("shape", reasoning, prod.parse_map(_catalog_map(shapes)))


def _models(prop: Callable[[Any, bool, dict[str, str]], bool], *, plain_only: bool = False, where: str = "") -> Evidence:
    """``prop(side, reasoning, shapes)`` over every model shape, on the model then production;
    ``side`` offers ``offered`` and ``wire`` of the shape."""

    class Bend:
        @staticmethod
        def offered(reasoning: bool, shapes: dict[str, str]) -> tuple[str, ...]:
            return m.offered(_model(reasoning, shapes))

        @staticmethod
        def wire(reasoning: bool, shapes: dict[str, str], level: str) -> str | None:
            return m.wire(_model(reasoning, shapes), level)

    class Prod:
        @staticmethod
        def offered(reasoning: bool, shapes: dict[str, str]) -> tuple[str, ...]:
            return _catalog(reasoning, shapes).offered()

        @staticmethod
        def wire(reasoning: bool, shapes: dict[str, str], level: str) -> str | None:
            return _catalog(reasoning, shapes).wire(level)

    factors: tuple[Finite[Any], ...] = SHAPE_FACTORS if plain_only else (REASONING, *SHAPE_FACTORS)

    def space() -> Domain:
        return domain(*factors)

    def run(side: Any) -> Callable[..., bool]:
        if plain_only:
            return lambda *point: prop(side, False, _shapes(point))
        return lambda reasoning, *point: prop(side, reasoning, _shapes(point))

    label = " (no reasoning)" if plain_only else ""
    model_ev = exhaust(space(), run(Bend))
    prod_ev = exhaust(space(), run(Prod))
    tokens = "wire strings are opaque tokens: no rule read their text, so each shape stands for every map of it"
    return model_ev.reworded(f"{model_ev.sentence}{label}; {tokens}{where}").with_production(prod_ev)


# -- the ladder (S10 ladder 1-3) ---------------------------------------------------------------


@law("effort_offered_plain", "S10 ladder 1", "A model without reasoning offers off alone, whatever its map.", PROVED)
def effort_offered_plain() -> Evidence:
    return _models(lambda side, r, shapes: side.offered(r, shapes) == o.PLAIN_DEFAULT and side.wire(r, shapes, o.OFF) is None, plain_only=True)


@law("effort_offered_null", "S10 ladder 2", "A reasoning model never offers a level its map sets to null.", PROVED)
def effort_offered_null() -> Evidence:
    def null(side: Any, reasoning: bool, shapes: dict[str, str]) -> bool:
        offer = side.offered(reasoning, shapes)
        return not reasoning or all(level not in offer for level in o.LADDER if shapes[level] == o.NULL)

    return _models(null)


@law("effort_offered_ext", "S10 ladder 2", "xhigh and max are offered only by a map entry holding a wire string.", PROVED)
def effort_offered_ext() -> Evidence:
    def ext(side: Any, reasoning: bool, shapes: dict[str, str]) -> bool:
        offer = side.offered(reasoning, shapes)
        return all(level not in offer or (reasoning and shapes[level] == o.WIRE) for level in ("xhigh", "max"))

    return _models(ext)


@law(
    "effort_offered_kept",
    "S10 ladder 2",
    "A reasoning model offers every level with a wire entry (sent as is), and every missing level below xhigh.",
    PROVED,
)
def effort_offered_kept() -> Evidence:
    def kept(side: Any, reasoning: bool, shapes: dict[str, str]) -> bool:
        offer = side.offered(reasoning, shapes)
        if offer != o.offered(reasoning, shapes):
            return False
        # a kept wire entry is sent as is: the very token of its entry, never dropped or rewritten
        return all(side.wire(reasoning, shapes, level) is TOKENS[level] for level in o.LADDER if reasoning and shapes[level] == o.WIRE)

    proof = _models(kept, where="; offered = the S10 ladder of the oracle, each kept wire entry sent as the token itself")
    return proof.with_production(_malformed())


# Input that is not a thinking-level map or a level (S10 free inputs are missing, null or a wire
# string per level): production refuses each with EffortError, never a crash or a guess.
MALFORMED_MAPS: tuple[object, ...] = (
    [], "off", 3, None, {"ultra": "x"}, {"low": 3}, {"low": True}, {"low": ["x"]}, {"low": {}}, {"Off": "x"}, {"": None}, {"low": 1.5},
)
MALFORMED_JSON: tuple[str, ...] = ("{not json", "", "[", '{"low": }', '{"low": 3}', '["low"]', '{"max": "x", "ultra": null}')
MALFORMED_LEVELS: tuple[str, ...] = ("", "ultra", "Off", "HIGH", " low", "off\n", "x-high", "\u6df1")


def _malformed() -> Evidence:
    def refused(kind: str, value: object) -> bool:
        try:
            if kind == "map":
                prod.parse_map(value)
            elif kind == "json":
                prod.parse_map_json(str(value))
            else:
                prod.ThinkingSession(None).set(str(value))
        except prod.EffortError:
            return True
        return False

    cases = [("map", v) for v in MALFORMED_MAPS] + [("json", v) for v in MALFORMED_JSON] + [("level", v) for v in MALFORMED_LEVELS]
    return bounded(cases, lambda case: refused(*case), label="malformed maps, map documents and levels production refuses (EffortError)")


@law("effort_offered_asc", "S10 ladder", "Offered levels are strictly ascending in ladder order, no repeats.", PROVED)
def effort_offered_asc() -> Evidence:
    def ascending(side: Any, reasoning: bool, shapes: dict[str, str]) -> bool:
        ranks = [o.position(level) for level in side.offered(reasoning, shapes)]
        return all(a < b for a, b in zip(ranks, ranks[1:]))

    return _models(ascending)


# -- clamp (S10 clamp 1-3) ---------------------------------------------------------------------

CLAMP = {"model": m.clamp, "production": prod.clamp}
CYCLE = {"model": m.cycle, "production": prod.cycle}


def _both(space: Callable[[], Domain], prop: Callable[[str], Callable[..., bool]]) -> Evidence:
    """The same property over the same whole domain, on the model then on production."""
    return exhaust(space(), prop("model")).with_production(exhaust(space(), prop("production")))


def _nonempty(offer: tuple[str, ...], *rest: object) -> bool:
    return bool(offer)


@law(
    "effort_clamp_offered",
    "S10 clamp 2, session 2",
    "With something offered every clamp is offered (the first above, else the first below), and a switch lands on one.",
    PROVED,
)
def effort_clamp_offered() -> Evidence:
    def clamps(side: str) -> Callable[..., bool]:
        return lambda offer, level: CLAMP[side](offer, level) in offer and CLAMP[side](offer, level) == o.clamp(offer, level)

    def switches(side: str) -> Callable[..., bool]:
        if side == "model":
            return lambda stored, default, offer: m.switch(stored, default, offer) in offer
        return lambda stored, default, offer: _prod_session(stored, default, None, ("switch", offer)).stored in offer

    return all_of(
        _both(lambda: domain(OFFERS, LEVEL, where=_nonempty, where_says="something offered"), clamps),
        _both(lambda: domain(STORED, DEFAULT, OFFERS, where=lambda s, d, offer: bool(offer), where_says="switches to a model offering something"), switches),
    )


@law("effort_clamp_keeps", "S10 clamp 1", "An offered level clamps to itself.", PROVED)
def effort_clamp_keeps() -> Evidence:
    return _both(
        lambda: domain(OFFERS, LEVEL, where=lambda offer, level: level in offer, where_says="the level is offered"),
        lambda side: lambda offer, level: CLAMP[side](offer, level) == level,
    )


@law("effort_clamp_idem", "S10 clamp 3", "Clamping twice is clamping once, even with nothing offered (off).", PROVED)
def effort_clamp_idem() -> Evidence:
    def idem(side: str) -> Callable[..., bool]:
        def check(offer: tuple[str, ...], level: str) -> bool:
            once = CLAMP[side](offer, level)
            return CLAMP[side](offer, once) == once and (bool(offer) or once == o.OFF)

        return check

    return _both(lambda: domain(OFFERS, LEVEL), idem)


# -- cycle (S10 cycle 1-3): each law over the direction it names -----------------------------


@law("effort_cycle_still", "S10 cycle 1", "With fewer than two levels offered a cycle changes nothing (null), either way.", PROVED)
def effort_cycle_still() -> Evidence:
    return _both(
        lambda: domain(OFFERS, LEVEL, FORWARD, where=lambda offer, level, fw: len(offer) < 2, where_says="fewer than two offered"),
        lambda side: lambda offer, level, forward: CYCLE[side](offer, level, forward) is None,
    )


def _from(where: Callable[[tuple[str, ...], str], bool], says: str) -> Callable[[], Domain]:
    return lambda: domain(OFFERS, LEVEL, where=lambda offer, level: len(offer) >= 2 and where(offer, level), where_says=f"two or more offered, {says}")


def _is_last(offer: tuple[str, ...], level: str) -> bool:
    return o.following(offer, o.clamp(offer, level)) is None


def _is_first(offer: tuple[str, ...], level: str) -> bool:
    return o.preceding(offer, o.clamp(offer, level)) is None


@law("effort_cycle_next", "S10 cycle 2", "Forward steps to the next offered level above the clamp of the current one.", PROVED)
def effort_cycle_next() -> Evidence:
    return _both(
        _from(lambda offer, level: not _is_last(offer, level), "the clamp of the level is not the last offered; forward"),
        lambda side: lambda offer, level: CYCLE[side](offer, level, True) == o.following(offer, o.clamp(offer, level)),
    )


@law("effort_cycle_wrap", "S10 cycle 2", "Forward from the last offered level goes to the first.", PROVED)
def effort_cycle_wrap() -> Evidence:
    return _both(
        _from(_is_last, "the clamp of the level is the last offered; forward"),
        lambda side: lambda offer, level: CYCLE[side](offer, level, True) == offer[0],
    )


@law("effort_cycle_prev", "S10 cycle 2", "Backward steps to the previous offered level below the clamp of the current one.", PROVED)
def effort_cycle_prev() -> Evidence:
    return _both(
        _from(lambda offer, level: not _is_first(offer, level), "the clamp of the level is not the first offered; backward"),
        lambda side: lambda offer, level: CYCLE[side](offer, level, False) == o.preceding(offer, o.clamp(offer, level)),
    )


@law("effort_cycle_wrap_back", "S10 cycle 2", "Backward from the first offered level goes to the last.", PROVED)
def effort_cycle_wrap_back() -> Evidence:
    return _both(
        _from(_is_first, "the clamp of the level is the first offered; backward"),
        lambda side: lambda offer, level: CYCLE[side](offer, level, False) == offer[-1],
    )


def _cancels(first: bool) -> Callable[[str], Callable[..., bool]]:
    def side_prop(side: str) -> Callable[..., bool]:
        def check(offer: tuple[str, ...], level: str) -> bool:
            there = CYCLE[side](offer, level, first)
            return there is not None and there != level and CYCLE[side](offer, there, not first) == level

        return check

    return side_prop


def _laps(side: str) -> Callable[..., bool]:
    def lap(offer: tuple[str, ...]) -> bool:
        """S10 cycle 3: forward visits each offered level once per lap, in ladder order."""
        visited = [offer[0]]
        for _ in range(len(offer)):
            step = CYCLE[side](offer, visited[-1], True)
            if step is None:
                return False
            visited.append(step)
        return tuple(visited[:-1]) == offer and visited[-1] == offer[0]

    return lap


@law("effort_cycle_inverse", "S10 cycle 3", "From an offered level, a backward step cancels a forward one; forward laps the offer in order.", PROVED)
def effort_cycle_inverse() -> Evidence:
    return all_of(
        _both(lambda: domain(OFFERS, LEVEL, where=lambda offer, level: len(offer) >= 2 and level in offer,
                             where_says="two or more offered, from an offered level: forward then backward"), _cancels(True)),
        _both(lambda: domain(OFFERS, where=lambda offer: len(offer) >= 2, where_says="two or more offered: one forward lap"), _laps),
    )


@law("effort_cycle_inverse_back", "S10 cycle 3", "From an offered level, a forward step cancels a backward one.", PROVED)
def effort_cycle_inverse_back() -> Evidence:
    return _both(
        lambda: domain(OFFERS, LEVEL, where=lambda offer, level: len(offer) >= 2 and level in offer,
                       where_says="two or more offered, from an offered level: backward then forward"),
        _cancels(False),
    )


# -- the session (S10 session 1-4) -------------------------------------------------------------


@dataclass(frozen=True)
class _Offering(prod.CatalogModel):
    """A production catalog model whose offered levels production computed once (the session
    laws switch between the same 129 models half a million times)."""

    known: tuple[str, ...] = ()

    def offered(self) -> tuple[str, ...]:
        return self.known


@functools.cache
def _catalog_offering(offer: tuple[str, ...] | None) -> prod.CatalogModel | None:
    """A production catalog model that offers exactly ``offer`` (None: outside the catalog)."""
    if offer is None:
        return None
    level_map = {level: (TOKENS[level] if level in offer else None) for level in o.LADDER}
    known = prod.CatalogModel("offers", True, level_map).offered()
    return _Offering("offers", True, level_map, known)


def _prod_session(stored: str | None, default: str | None, offer: tuple[str, ...] | None, action: tuple[str, object] | None) -> prod.ThinkingSession:
    session = prod.ThinkingSession(_catalog_offering(offer), stored, default)
    if session.offer != offer:
        raise LawFailed(f"production's catalog model offers {session.offer}, not {offer}")
    if action is not None:
        kind, argument = action
        if kind == "switch":
            session.switch(_catalog_offering(argument))
        elif kind == "set":
            session.set(str(argument))
        elif kind == "cycle":
            session.cycle(argument == "forward")
        elif kind == "open":
            session.open()
    return session


@law("effort_unset_default", "S10 session 4", "An unset level shows the default (as open would settle it), never off.", PROVED)
def effort_unset_default() -> Evidence:
    def shows_default(side: str) -> Callable[..., bool]:
        if side == "model":
            return lambda default, offer: m.shown(None, default, offer) == o.settled(None, default, offer)
        return lambda default, offer: _prod_session(None, default, offer, None).shown == o.settled(None, default, offer)

    def never_off(side: str) -> Callable[..., bool]:
        """Checked on its own: an unset level shows off only when the default setting is off, or
        the model offers nothing but off (clamp 3 / clamp 2), never because it is unset."""

        def check(default: str | None, offer: tuple[str, ...] | None) -> bool:
            shown = m.shown(None, default, offer) if side == "model" else _prod_session(None, default, offer, None).shown
            return shown != o.OFF or default == o.OFF or (offer is not None and set(offer) <= {o.OFF})

        return check

    return all_of(_both(lambda: domain(DEFAULT, OFFER_OR_NONE), shows_default), _both(lambda: domain(DEFAULT, OFFER_OR_NONE), never_off))


@law("effort_settle_offered", "S10 session 1", "With something offered, open settles on an offered level.", PROVED)
def effort_settle_offered() -> Evidence:
    def settles(side: str) -> Callable[..., bool]:
        if side == "model":
            return lambda stored, default, offer: m.settle(stored, default, offer) in offer
        return lambda stored, default, offer: _prod_session(stored, default, offer, ("open", None)).stored in offer

    return _both(lambda: domain(STORED, DEFAULT, OFFERS, where=lambda s, d, offer: bool(offer), where_says="the session model offers something"), settles)


ACTIONS = Finite(
    "actions (switch to each offer, set each level, cycle both ways)",
    tuple(("switch", offer) for offer in OFFER_OR_NONE.values)
    + tuple(("set", level) for level in o.LADDER)
    + (("cycle", "forward"), ("cycle", "backward")),
)

State = tuple[str | None, str | None, tuple[str, ...] | None]


def _model_offering(offer: tuple[str, ...] | None) -> m.Model | None:
    """A model that offers exactly ``offer`` (None: outside the catalog)."""
    if offer is None:
        return None
    return m.Model(True, tuple((level, TOKENS[level] if level in offer else None) for level in o.LADDER))


def _model_open(stored: str | None, default: str | None, offer: tuple[str, ...] | None) -> State:
    """The model's own open (``bend.effort.step``), on a model offering ``offer``."""
    session, _ = m.step(m.Session(stored, default, _model_offering(offer)), "open", None)
    if m.offer_of(session.model) != offer:
        raise LawFailed(f"the model offering {offer} offers {m.offer_of(session.model)}")
    return (session.stored, default, offer)


def _model_step(state: State, action: tuple[Any, ...]) -> State:
    stored, default, offer = state
    kind, argument = action[0]
    if kind == "switch":
        return (m.switch(stored, default, argument), default, argument)
    if kind == "set":
        return (m.set_level(argument, offer), default, offer)
    step = m.cycle_step(stored, default, offer, argument == "forward")
    return (stored if step is None else step, default, offer)


def _prod_open(stored: str | None, default: str | None, offer: tuple[str, ...] | None) -> State:
    session = _prod_session(stored, default, offer, ("open", None))
    return (session.stored, default, session.offer)


def _prod_step(state: State, action: tuple[Any, ...]) -> State:
    stored, default, offer = state
    session = _prod_session(stored, default, offer, action[0])
    return (session.stored, default, session.offer)


def _sessions(model_inv: Callable[[State], bool], prod_inv: Callable[[State], bool], what: str) -> Evidence:
    initial = domain(STORED, DEFAULT, OFFER_OR_NONE)
    label = f"every session after open, under every action ({what})"
    model_ev = reachable(initial, domain(ACTIONS), _model_step, model_inv, start=_model_open, label=label)
    prod_ev = reachable(initial, domain(ACTIONS), _prod_step, prod_inv, start=_prod_open, label=label + ", production's ThinkingSession")
    return model_ev.with_production(prod_ev)


@law("effort_stored_is_sent", "S10 session 1-3", "After open and any actions, the stored level is the level sent.", PROVED)
def effort_stored_is_sent() -> Evidence:
    return _sessions(
        lambda s: s[0] is not None and m.sent(s[0], s[2]) == s[0] and o.sent(s[0], s[2]) == s[0],
        lambda s: s[0] is not None and _prod_session(*s, None).sent == s[0] and o.sent(s[0], s[2]) == s[0],
        "stored is set, and sent = stored",
    )


@law("effort_shown_is_sent", "S10 session 4", "After open and any actions, the level shown is the level sent.", PROVED)
def effort_shown_is_sent() -> Evidence:
    return _sessions(
        lambda s: m.shown(*s) == m.sent(s[0], s[2]) == o.settled(*s),
        lambda s: _prod_session(*s, None).shown == _prod_session(*s, None).sent == o.settled(*s),
        "shown = sent = the oracle's stored level clamped to the model",
    )


# Production's own session rules against the model's, for `crosshair diffbehavior` (make crosshair).
CROSSHAIR_PAIRS = [
    ("bend.effort.settle", "eukhe.effort.settled_level"),
    ("bend.effort.shown", "eukhe.effort.settled_level"),
    ("bend.effort.set_level", "eukhe.effort.requested_level"),
    ("bend.effort.sent", "eukhe.effort.sent_level"),
]
