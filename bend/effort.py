"""Reasoning depth: the model of inference.md S10, with the ladder part of S6.9.

Read it next to 004_cf1da0cad29d7f64.txt, S10. Levels are the ladder's names in ladder
order; a thinking-level map (``thinkingLevelMap``) is a tuple of ``(level, entry)`` pairs,
where an entry is a wire string or ``None`` (null) and a level with no pair is missing.

The seed ties ``offered``, ``clamp`` and ``cycle`` to production: they "run as the
compiled model (bend/ffi_effort.bend ...); no Rust copy of the rule", so impl/eukhe/effort.py
calls these three functions and holds no copy of them. The session rules (S10 session 1-4)
are modelled here too; production keeps its own form of those.

The session rules see the session model only through ``Offer``: the levels the model
offers, or ``None`` when the session model is not in the catalog (nothing to clamp to).
Every session rule of S10 reads the model only that way, which is what lets the session
laws enumerate every offered set instead of every map.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

OFF, MINIMAL, LOW, MEDIUM, HIGH, XHIGH, MAX = "off", "minimal", "low", "medium", "high", "xhigh", "max"
LADDER: tuple[str, ...] = (OFF, MINIMAL, LOW, MEDIUM, HIGH, XHIGH, MAX)

# Shipped thinking_defaults (S6.9 item 9): reasoning = off to high; plain = off.
DEFAULT_LADDER: tuple[str, ...] = (OFF, MINIMAL, LOW, MEDIUM, HIGH)
PLAIN_DEFAULT: tuple[str, ...] = (OFF,)
# S10 session 1: defaultThinkingLevel, else medium.
FALLBACK_DEFAULT = MEDIUM

LevelMap = tuple[tuple[str, "str | None"], ...]


@dataclass(frozen=True)
class Model:
    """A catalog model as far as reasoning depth sees it."""

    reasoning: bool
    level_map: LevelMap | None = None


def rank(level: str) -> int:
    """Position on the ladder.

    pre: level in LADDER
    post: 0 <= __return__ < 7
    """
    return LADDER.index(level)


def entry(level_map: LevelMap, level: str) -> tuple[bool, str | None]:
    """(present, value) of a level's entry; a missing level is (False, None)."""
    for name, value in level_map:
        if name == level:
            return True, value
    return False, None


def chosen_map(explicit: LevelMap | None, family: LevelMap | None, reasoning: bool, custom_provider: bool) -> LevelMap | None:
    """S10 ladder 1: the model's explicit map; else, for a reasoning model of a custom
    provider, its family's rulebook ladder; else none. Built-in providers keep catalog ladders."""
    if explicit is not None:
        return explicit
    if reasoning and custom_provider:
        return family
    return None


def offered(model: Model) -> tuple[str, ...]:
    """S10 ladder 2-3: the levels a model offers, in ladder order.

    No reasoning: the plain default, whatever the map. Reasoning, per level: null removes,
    a wire string keeps, missing falls to the default ladder (so xhigh and max need entries).

    post: all(LADDER.index(a) < LADDER.index(b) for a, b in zip(__return__, __return__[1:]))
    """
    if not model.reasoning:
        return PLAIN_DEFAULT
    kept = []
    for level in LADDER:
        present, value = entry(model.level_map or (), level)
        if present:
            if value is not None:
                kept.append(level)
        elif level in DEFAULT_LADDER:
            kept.append(level)
    return tuple(kept)


def wire(model: Model, level: str) -> str | None:
    """The wire string a kept level is sent as; None: the wire API's own form (S10 ladder 3)."""
    if not model.reasoning:
        return None
    return entry(model.level_map or (), level)[1]


def clamp(levels: tuple[str, ...], level: str) -> str:
    """S10 clamp: offered stays; else the first offered above; none above: the first offered
    below; none offered: off.

    pre: level in LADDER
    pre: all(x in LADDER for x in levels)
    post: __return__ in levels or (not levels and __return__ == "off")
    """
    if level in levels:
        return level
    for candidate in LADDER[rank(level) + 1 :]:
        if candidate in levels:
            return candidate
    for candidate in reversed(LADDER[: rank(level)]):
        if candidate in levels:
            return candidate
    return OFF


def cycle(levels: tuple[str, ...], current: str, forward: bool) -> str | None:
    """S10 cycle: one offered step from the clamp of the current level, wrapping at both ends;
    None (the daemon answers null) when fewer than two levels are offered.

    pre: current in LADDER
    pre: all(x in LADDER for x in levels)
    post: __return__ is None or __return__ in levels
    """
    if len(levels) < 2:
        return None
    at = levels.index(clamp(levels, current))
    step = 1 if forward else -1
    return levels[(at + step) % len(levels)]


# -- the session (S10 session 1-4) -----------------------------------------------------------


def default_level(default: str | None) -> str:
    """defaultThinkingLevel, else medium."""
    return default if default is not None else FALLBACK_DEFAULT


def settle(stored: str | None, default: str | None, offer: tuple[str, ...] | None) -> str:
    """Session 1, open: stored, else the default; clamped if the session model is in the
    catalog (``offer`` is not None), else kept."""
    level = stored if stored is not None else default_level(default)
    return level if offer is None else clamp(offer, level)


def switch(stored: str | None, default: str | None, offer: tuple[str, ...] | None) -> str:
    """Session 2: a model switch clamps the current level to the new model."""
    return settle(stored, default, offer)


def set_level(request: str, offer: tuple[str, ...] | None) -> str:
    """Session 2: set clamps the request; kept without a catalog model."""
    return request if offer is None else clamp(offer, request)


def cycle_step(stored: str | None, default: str | None, offer: tuple[str, ...] | None, forward: bool) -> str | None:
    """Session 2: cycle sets the step's result; None: no change, the daemon answers null.
    A session model outside the catalog offers no known levels, so it has no step either
    (derived from S10 cycle 1 and session 1: without a catalog model nothing is offered)."""
    if offer is None:
        return None
    return cycle(offer, stored if stored is not None else default_level(default), forward)


def sent(stored: str | None, offer: tuple[str, ...] | None) -> str:
    """Session 3: the stored level, else off; each provider clamps before sending."""
    level = stored if stored is not None else OFF
    return level if offer is None else clamp(offer, level)


def shown(stored: str | None, default: str | None, offer: tuple[str, ...] | None) -> str:
    """Session 4: the stored level clamped to the model (unclamped without a catalog model);
    unset shows the default (as open would settle it), never off."""
    return settle(stored, default, offer)


# -- sessions of actions, and the transcript the bridge compares ---------------------------


@dataclass(frozen=True)
class Session:
    stored: str | None
    default: str | None
    model: Model | None


def offer_of(model: Model | None) -> tuple[str, ...] | None:
    return None if model is None else offered(model)


def step(session: Session, kind: str, argument: object) -> tuple[Session, str | None]:
    """One session action; returns the new session and the daemon's answer for a cycle."""
    offer = offer_of(session.model)
    if kind == "open":
        return Session(settle(session.stored, session.default, offer), session.default, session.model), None
    if kind == "switch":
        model = argument if isinstance(argument, Model) or argument is None else None
        new_offer = offer_of(model)
        return Session(switch(session.stored, session.default, new_offer), session.default, model), None
    if kind == "set":
        return Session(set_level(str(argument), offer), session.default, session.model), None
    if kind == "cycle":
        result = cycle_step(session.stored, session.default, offer, argument == "forward")
        if result is None:
            return session, None
        return Session(result, session.default, session.model), result
    raise ValueError(f"unknown action {kind!r}")


def model_of(value: object) -> Model | None:
    """A scenario's model: null (not in the catalog) or {"reasoning": bool, "map": {...} | null}."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ValueError(f"a model is an object or null, not {value!r}")
    raw = value.get("map")
    level_map = None if raw is None else tuple((k, raw[k]) for k in LADDER if k in raw)
    return Model(bool(value["reasoning"]), level_map)


def line(number: int, session: Session, answer: str) -> str:
    offer = offer_of(session.model)
    return (
        f"{number} stored={session.stored or '-'} sent={sent(session.stored, offer)} "
        f"shown={shown(session.stored, session.default, offer)} "
        f"offered={'-' if offer is None else ','.join(offer) or '(none)'} answer={answer}"
    )


def transcript(events: list[dict[str, object]]) -> list[str]:
    """The model side of the effort bridge: one line after each event."""
    session = Session(None, None, None)
    lines = []
    for number, event in enumerate(events):
        kind = event["do"]
        answer = "-"
        if kind == "open":
            stored = event.get("stored")
            default = event.get("default")
            session = Session(
                None if stored is None else str(stored),
                None if default is None else str(default),
                model_of(event.get("model")),
            )
            session, _ = step(session, "open", None)
        elif kind == "switch":
            session, _ = step(session, "switch", model_of(event.get("model")))
        elif kind == "set":
            session, _ = step(session, "set", event["level"])
        elif kind == "cycle":
            session, result = step(session, "cycle", event["direction"])
            answer = "null" if result is None else result
        else:
            raise ValueError(f"event {number}: unknown action {kind!r}")
        lines.append(line(number, session, answer))
    return lines


if __name__ == "__main__":
    from bend import scenario

    raise SystemExit(scenario.main(transcript, sys.argv[1:]))
