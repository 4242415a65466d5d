"""The judge of the effort laws: inference.md S10 (and S6.9 item 9) transcribed as data.

Nothing here imports ``bend.effort`` or ``eukhe.effort``: the laws judge the model and
production with these functions, written from the seed's sentences, not with the functions
under test. Each rule quotes the sentence it transcribes.
"""

from __future__ import annotations

# S10: "Ladder order: off, minimal, low, medium, high, xhigh, max."
LADDER: tuple[str, ...] = ("off", "minimal", "low", "medium", "high", "xhigh", "max")
OFF = "off"

# S6.9 item 9: "Defaults (thinking_defaults) fill missing entries: reasoning = off to high;
# plain (no reasoning) = off."  S10 ladder 3: "shipped: off to high, so xhigh/max need entries".
REASONING_DEFAULT: frozenset[str] = frozenset(("off", "minimal", "low", "medium", "high"))
PLAIN_DEFAULT: tuple[str, ...] = ("off",)

# S10 session 1: "stored, else default (defaultThinkingLevel, else medium)".
NO_DEFAULT_SETTING = "medium"

# The shape of one entry of a thinkingLevelMap (S10 free inputs: "entries missing, null, wire string").
MISSING, NULL, WIRE = "missing", "null", "wire string"
SHAPES: tuple[str, ...] = (MISSING, NULL, WIRE)


def position(level: str) -> int:
    """Where a level stands on the ladder (0 = off)."""
    for at, name in enumerate(LADDER):
        if name == level:
            return at
    raise ValueError(f"{level!r} is not a thinking level")


def offered(reasoning: bool, shapes: dict[str, str]) -> tuple[str, ...]:
    """S10 ladder 2-3: "No reasoning -> plain default (shipped: off only); map ignored.
    Reasoning, per entry: null removes; wire string keeps ...; missing -> default ladder."
    "Offered levels keep ladder order"."""
    if not reasoning:
        return PLAIN_DEFAULT
    keep: list[str] = []
    for level in LADDER:
        shape = shapes.get(level, MISSING)
        if shape == WIRE or (shape == MISSING and level in REASONING_DEFAULT):
            keep.append(level)
    return tuple(keep)


def clamp(offer: tuple[str, ...], level: str) -> str:
    """S10 clamp: "1. Offered -> unchanged. 2. Else first offered above; none -> first offered
    below. 3. None offered -> off." (written with ranks, unlike the model's ladder walk)."""
    if not offer:
        return OFF
    if level in offer:
        return level
    here = position(level)
    above = [position(x) for x in offer if position(x) > here]
    if above:
        return LADDER[min(above)]
    return LADDER[max(position(x) for x in offer if position(x) < here)]


def following(offer: tuple[str, ...], level: str) -> str | None:
    """The offered level just above ``level`` (None: ``level`` is the last offered)."""
    above = [x for x in offer if position(x) > position(level)]
    return min(above, key=position) if above else None


def preceding(offer: tuple[str, ...], level: str) -> str | None:
    """The offered level just below ``level`` (None: ``level`` is the first offered)."""
    below = [x for x in offer if position(x) < position(level)]
    return max(below, key=position) if below else None


def cycle(offer: tuple[str, ...], current: str, forward: bool) -> str | None:
    """S10 cycle: "< 2 offered -> no change (null). Else from clamp of current. Forward: next,
    last -> first. Backward: previous, first -> last."""
    if len(offer) < 2:
        return None
    start = clamp(offer, current)
    if forward:
        step = following(offer, start)
        return step if step is not None else min(offer, key=position)
    step = preceding(offer, start)
    return step if step is not None else max(offer, key=position)


def default_level(default: str | None) -> str:
    return NO_DEFAULT_SETTING if default is None else default


def settled(stored: str | None, default: str | None, offer: tuple[str, ...] | None) -> str:
    """S10 session 1: "Open settles: stored, else default ...; clamped if the session model is in
    the catalog, else kept."  Session 4: shown = "stored clamped to the model (unclamped without
    catalog model)"; "Unset shows default"."""
    level = stored if stored is not None else default_level(default)
    return level if offer is None else clamp(offer, level)


def sent(stored: str | None, offer: tuple[str, ...] | None) -> str:
    """S10 session 3: "Sent: stored level, else off; each provider clamps before sending."""
    level = stored if stored is not None else OFF
    return level if offer is None else clamp(offer, level)
