"""The effort bridge: sessions of open, switch, set and cycle actions (inference.md S10 session).

Each scenario opens a session (a stored level or none, a default setting or none, a catalog
model or none) and then switches models, sets levels and cycles both ways. After each event
both sides print the stored, sent and shown levels, the offered levels and the answer of a
cycle. The production side drives ``eukhe.effort.ThinkingSession``; the model side is
``bend.effort.transcript``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from bend import effort as model
from bridge.core import Bridge, Event
from eukhe import effort

LEVELS = effort.LEVELS


def _random_model(rng: random.Random) -> dict[str, Any] | None:
    roll = rng.random()
    if roll < 0.12:
        return None
    if roll < 0.2:
        return {"reasoning": True, "map": None}
    if roll < 0.25:  # S10 ladder 4: a reasoning model that offers nothing, or off alone
        return {"reasoning": True, "map": {level: ("none" if level == "off" and roll < 0.225 else None) for level in LEVELS}}
    level_map: dict[str, str | None] = {}
    for level in LEVELS:
        pick = rng.random()
        if pick < 0.3:
            level_map[level] = None
        elif pick < 0.6:
            level_map[level] = _wire(rng, level)
    return {"reasoning": rng.random() < 0.8, "map": level_map}


# Input classes of a wire string (S10 ladder 3: "wire string keeps, sent as is"): the rules must
# never read its text, so every class must behave as any other wire string.
WIRE_CLASSES: tuple[tuple[str, str], ...] = (
    ("an empty wire string", ""),
    ("a wire string that names another level", "high"),
    ("a wire string spelling null", "null"),
    ("a unicode wire string", "d\u00e9j\u00e0-\u6df1\u3044"),
    ("a wire string with a newline, CR or U+2028", "a\nb\rc\u2028d"),
    ("a long wire string", "x" * 300),
)


def _wire(rng: random.Random, level: str) -> str:
    if rng.random() < 0.25:
        return rng.choice(WIRE_CLASSES)[1]
    return f"{level[:3]}-{rng.randrange(10)}"


def _maybe_level(rng: random.Random) -> str | None:
    return None if rng.random() < 0.4 else rng.choice(LEVELS)


def generate(index: int) -> list[Event]:
    rng = random.Random(f"effort-{index}")
    events: list[Event] = [
        {"do": "open", "stored": _maybe_level(rng), "default": _maybe_level(rng), "model": _random_model(rng)}
    ]
    for _ in range(rng.randrange(4, 30)):
        roll = rng.random()
        if roll < 0.2:
            events.append({"do": "switch", "model": _random_model(rng)})
        elif roll < 0.45:
            events.append({"do": "set", "level": rng.choice(LEVELS)})
        elif roll < 0.95:
            events.append({"do": "cycle", "direction": rng.choice(("forward", "backward"))})
        else:
            events.append({"do": "open", "stored": _maybe_level(rng), "default": _maybe_level(rng), "model": _random_model(rng)})
    return events


def _catalog_model(value: Any) -> effort.CatalogModel | None:
    if value is None:
        return None
    raw = value.get("map")
    return effort.CatalogModel("scenario-model", bool(value["reasoning"]), None if raw is None else effort.parse_map(raw))


def production(events: Sequence[Event]) -> list[str]:
    """The production side: a ThinkingSession driven by the events, printed by its own code."""
    session = effort.ThinkingSession(None)
    lines = []
    for number, event in enumerate(events):
        answer = "-"
        kind = event["do"]
        if kind == "open":
            session = effort.ThinkingSession(_catalog_model(event.get("model")), event.get("stored"), event.get("default"))
            session.open()
        elif kind == "switch":
            session.switch(_catalog_model(event.get("model")))
        elif kind == "set":
            session.set(event["level"])
        elif kind == "cycle":
            step = session.cycle(event["direction"] == "forward")
            answer = "null" if step is None else step
        offer = session.offer
        offered = "-" if offer is None else (",".join(offer) if offer else "(none)")
        lines.append(
            f"{number} stored={session.stored or '-'} sent={session.sent} shown={session.shown} "
            f"offered={offered} answer={answer}"
        )
    return lines


CASES = frozenset(
    {
        "open settles an unset level on the default",
        "open clamps a stored level",
        "open keeps a level without a catalog model",
        "switch clamps to the new model",
        "switch to a model outside the catalog keeps the level",
        "set keeps an offered level",
        "set clamps the request",
        "set without a catalog model keeps the request",
        "cycle forward",
        "cycle backward",
        "cycle wraps forward from the last",
        "cycle wraps backward from the first",
        "cycle with fewer than two offered answers null",
        "cycle without a catalog model answers null",
        "a reasoning model that offers nothing",
        "a model offering xhigh or max by a wire entry",
        *(name for name, _ in WIRE_CLASSES),
    }
)


def reached(events: Sequence[Event]) -> set[str]:
    """Which rule cases a scenario reaches, classified on the model's states."""
    cases: set[str] = set()
    session = model.Session(None, None, None)
    for event in events:
        kind = event["do"]
        offer_before = model.offer_of(session.model)
        if kind == "open":
            stored, default = event.get("stored"), event.get("default")
            opened = model.Session(stored, default, model.model_of(event.get("model")))
            offer = model.offer_of(opened.model)
            if offer is None:
                cases.add("open keeps a level without a catalog model")
            elif stored is None:
                cases.add("open settles an unset level on the default")
            elif stored not in offer:
                cases.add("open clamps a stored level")
            session, _ = model.step(opened, "open", None)
        elif kind == "switch":
            new = model.model_of(event.get("model"))
            new_offer = model.offer_of(new)
            if new_offer is None:
                cases.add("switch to a model outside the catalog keeps the level")
            elif session.stored not in new_offer:
                cases.add("switch clamps to the new model")
            session, _ = model.step(session, "switch", new)
        elif kind == "set":
            level = event["level"]
            if offer_before is None:
                cases.add("set without a catalog model keeps the request")
            elif level in offer_before:
                cases.add("set keeps an offered level")
            else:
                cases.add("set clamps the request")
            session, _ = model.step(session, "set", level)
        elif kind == "cycle":
            forward = event["direction"] == "forward"
            if offer_before is None:
                cases.add("cycle without a catalog model answers null")
            elif len(offer_before) < 2:
                cases.add("cycle with fewer than two offered answers null")
            else:
                start = model.settle(session.stored, session.default, offer_before)
                if forward:
                    cases.add("cycle wraps forward from the last" if start == offer_before[-1] else "cycle forward")
                else:
                    cases.add("cycle wraps backward from the first" if start == offer_before[0] else "cycle backward")
            session, _ = model.step(session, "cycle", event["direction"])
        for raw in (event.get("model"),):
            if isinstance(raw, dict) and isinstance(raw.get("map"), dict):
                for name, text in WIRE_CLASSES:
                    if text in raw["map"].values():
                        cases.add(name)
        offer = model.offer_of(session.model)
        if offer == () and session.model is not None and session.model.reasoning:
            cases.add("a reasoning model that offers nothing")
        if offer and (model.XHIGH in offer or model.MAX in offer):
            cases.add("a model offering xhigh or max by a wire entry")
    return cases


BRIDGE = Bridge(
    area="effort",
    count=300,
    generate=generate,
    model=model.transcript,
    production=production,
    cases=CASES,
    reached=reached,
)
