"""Reasoning depth in production: a session's thinking level (inference.md S10).

Offer, clamp and cycle run as the model: the seed ties them to bend/ffi_effort.bend with "no
Rust copy of the rule", so this module calls ``bend.effort`` for those three and holds no
copy of them. The session rules (open settles, switch and set clamp, cycle stores its step,
sent and shown) are production's own, on a session object that keeps the offered levels of
its model so no action recomputes them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from bend import effort as compiled

from eukhe import strict_json

LEVELS: tuple[str, ...] = compiled.LADDER
OFF = compiled.OFF
MEDIUM = compiled.MEDIUM


class EffortError(ValueError):
    """Bad input for reasoning depth: an unknown level or a thinking-level map that is not one."""


def parse_level(text: str) -> str:
    if text not in LEVELS:
        raise EffortError(f"unknown thinking level {text!r} (levels: {', '.join(LEVELS)})")
    return text


def parse_map(value: object) -> dict[str, str | None]:
    """A thinkingLevelMap as read from models.json or the catalog: level -> wire string or null."""
    if not isinstance(value, Mapping):
        raise EffortError(f"a thinking-level map is a JSON object, not {type(value).__name__}")
    parsed: dict[str, str | None] = {}
    for level, wire in value.items():
        parse_level(str(level))
        if wire is not None and not isinstance(wire, str):
            raise EffortError(f"thinking level {level!r}: an entry is a wire string or null, not {wire!r}")
        parsed[str(level)] = wire
    return parsed


def parse_map_json(text: str) -> dict[str, str | None]:
    try:
        value = strict_json.loads(text)
    except json.JSONDecodeError as error:
        raise EffortError(f"the map is not JSON: {error.msg} at column {error.colno}") from error
    return parse_map(value)


@dataclass(frozen=True)
class CatalogModel:
    """A catalog model: whether it reasons and its thinking-level map (None: no map)."""

    id: str
    reasoning: bool
    thinking_level_map: Mapping[str, str | None] | None = None

    def offered(self) -> tuple[str, ...]:
        return compiled.offered(self._compiled())

    def wire(self, level: str) -> str | None:
        return compiled.wire(self._compiled(), level)

    def _compiled(self) -> compiled.Model:
        level_map = self.thinking_level_map
        pairs = None if level_map is None else tuple((k, level_map[k]) for k in LEVELS if k in level_map)
        return compiled.Model(self.reasoning, pairs)


def clamp(offer: tuple[str, ...], level: str) -> str:
    return compiled.clamp(offer, level)


def cycle(offer: tuple[str, ...], current: str, forward: bool) -> str | None:
    return compiled.cycle(offer, current, forward)


# The session rules, in production form. ``offer`` is None when the session model is not in
# the catalog: levels are then kept as they are, and there is nothing to cycle through.


def settled_level(stored: str | None, default: str | None, offer: tuple[str, ...] | None) -> str:
    """What open settles on, what a switch keeps, and what the session shows (S10 session 1, 2, 4)."""
    wanted = stored if stored is not None else (default if default is not None else MEDIUM)
    if offer is None:
        return wanted
    return clamp(offer, wanted)


def requested_level(request: str, offer: tuple[str, ...] | None) -> str:
    """What a set stores: the request clamped to the model, kept without a catalog model."""
    return request if offer is None else clamp(offer, request)


def sent_level(stored: str | None, offer: tuple[str, ...] | None) -> str:
    """What a request carries: the stored level, else off, clamped by the provider."""
    return requested_level(stored if stored is not None else OFF, offer)


@dataclass
class ThinkingSession:
    """The main conversation's thinking level, its session model and the default level setting."""

    model: CatalogModel | None
    stored: str | None = None
    default: str | None = None
    _offer: tuple[str, ...] | None = field(init=False, repr=False, default=None)

    def __post_init__(self) -> None:
        self._offer = None if self.model is None else self.model.offered()

    @property
    def offer(self) -> tuple[str, ...] | None:
        """The levels the session model offers (availableThinkingLevels); None outside the catalog."""
        return self._offer

    def open(self) -> str:
        self.stored = settled_level(self.stored, self.default, self._offer)
        return self.stored

    def switch(self, model: CatalogModel | None) -> str:
        self.model = model
        self._offer = None if model is None else model.offered()
        self.stored = settled_level(self.stored, self.default, self._offer)
        return self.stored

    def set(self, level: str) -> str:
        self.stored = requested_level(parse_level(level), self._offer)
        return self.stored

    def cycle(self, forward: bool) -> str | None:
        """One offered step; None (answered as null) when nothing changes."""
        if self._offer is None:
            return None
        step = cycle(self._offer, settled_level(self.stored, self.default, self._offer), forward)
        if step is not None:
            self.stored = step
        return step

    @property
    def sent(self) -> str:
        return sent_level(self.stored, self._offer)

    @property
    def shown(self) -> str:
        return settled_level(self.stored, self.default, self._offer)
