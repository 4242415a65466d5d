"""The judge of the Director laws, transcribed from control.md S5 (never from bend/director.py).

S5 (first paragraph): a layer has a kind and a budget; the kinds are the goal, the autonomous
run, a reminder and a forced tool call. S5.1: the six verdicts. S5.6: directors.stackCap
(default 8) caps the pushed layers, 2 more places for the goal and the autonomous run;
directors.maxSteps default 200. S5.8: the stack is the conversation document eukhe.directors.

The document's shape (ours, DESIGN and impl/eukhe/directors/document.py docstring, written
down here from the text, not from either implementation):
    {"layers": [{"budget": <whole number 0..2**63-1>, "kind": <kind name>,
                 "data"?: <object of finite JSON values>}, ...bottom first],
     "version": 1}
with no other key at either level, ``true`` not a number, and nothing missing.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterator
from typing import Any

KINDS = ("goal", "autonomous", "reminder", "forced")  # S5, in this order (the model's numbers)
VERDICTS = ("defer", "again", "yield", "stack", "leave", "abort")  # S5.1
DECIDING = ("again", "yield", "stack", "abort")  # S5.1: these end the walk down the stack
PASSING = ("defer", "leave")  # S5.1: "the next layer down decides"
OUTCOMES = ("continue", "yield", "fail")  # S5.1-S5.3: the loop continues, gives back, fails
DEFAULT_STACK_CAP = 8  # S5.6
RESERVED = 2  # S5.6
DEFAULT_MAX_STEPS = 200  # S5.6
MAX_BUDGET = 2**63 - 1
LAYER_KEYS = frozenset({"budget", "kind", "data"})
LAYER_REQUIRED = frozenset({"budget", "kind"})
TOP_KEYS = frozenset({"layers", "version"})


def whole(value: Any) -> bool:
    return type(value) is int


def finite_json(value: Any) -> bool:
    if type(value) is float:
        return math.isfinite(value)
    if type(value) is list:
        return all(finite_json(v) for v in value)
    if type(value) is dict:
        return all(type(k) is str and finite_json(v) for k, v in value.items())
    return value is None or type(value) in (str, int, bool)


def sound_layer(value: Any) -> bool:
    if type(value) is not dict or not set(value) <= LAYER_KEYS or not LAYER_REQUIRED <= set(value):
        return False
    budget, kind = value["budget"], value["kind"]
    if not whole(budget) or not 0 <= budget <= MAX_BUDGET:
        return False
    if type(kind) is not str or kind not in KINDS:
        return False
    return "data" not in value or (type(value["data"]) is dict and finite_json(value["data"]))


def sound(value: Any) -> bool:
    """S5.8: a sound eukhe.directors tree."""
    if type(value) is not dict or set(value) != TOP_KEYS:
        return False
    if not whole(value["version"]) or value["version"] != 1:
        return False
    return type(value["layers"]) is list and all(sound_layer(item) for item in value["layers"])


def document(stack: list[tuple[int, int]]) -> dict[str, Any]:
    """The document of a stack of (kind number, budget), bottom first, no kind data."""
    return {"layers": [{"budget": b, "kind": KINDS[k]} for k, b in stack], "version": 1}


def stack(value: dict[str, Any]) -> list[tuple[int, int]]:
    """The (kind number, budget) pairs of a sound document."""
    return [(KINDS.index(item["kind"]), item["budget"]) for item in value["layers"]]


def full_cap(stack_cap: int) -> int:
    return stack_cap + RESERVED


# -- malformed documents at every depth (the input classes of S5.8's document) ----------------------

WRONG_TYPES: tuple[Any, ...] = (None, True, 1, -1, 1.5, "1", [], {}, float("nan"))


def malformed(value: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """Every single flaw of a sound document, named: an unknown key, a missing field, a wrong
    type at each field, an unknown version, a negative or huge budget, an unknown kind, kind
    data that is not an object or holds a non-finite number; at the top and in each layer."""
    def edit(change: Any) -> Any:
        out = copy.deepcopy(value)
        change(out)
        return out

    yield "top: not an object", [value]
    yield "top: unknown key", edit(lambda d: d.__setitem__("head", 0))
    for key in sorted(TOP_KEYS):
        yield f"top: missing {key}", edit(lambda d, k=key: d.pop(k))
    for bad in WRONG_TYPES + (0, 2, 10**30):
        if not (whole(bad) and bad == 1):
            yield f"version: {bad!r}", edit(lambda d, b=bad: d.__setitem__("version", b))
    for bad in (None, 1, "layers", {"0": 1}):
        yield f"layers: {bad!r}", edit(lambda d, b=bad: d.__setitem__("layers", b))
    yield "layers: an item that is not an object", edit(lambda d: d["layers"].append("goal"))
    for index in range(len(value["layers"])):
        at = f"layers.{index}"
        yield f"{at}: unknown key", edit(lambda d, i=index: d["layers"][i].__setitem__("extra", 1))
        for key in sorted(LAYER_REQUIRED):
            yield f"{at}: missing {key}", edit(lambda d, i=index, k=key: d["layers"][i].pop(k))
        for bad in WRONG_TYPES + (MAX_BUDGET + 1, 10**30):
            if not (whole(bad) and 0 <= bad <= MAX_BUDGET):
                yield f"{at}.budget: {bad!r}", edit(lambda d, i=index, b=bad: d["layers"][i].__setitem__("budget", b))
        for bad in (None, 0, "boss", "Goal", "", ["goal"]):
            yield f"{at}.kind: {bad!r}", edit(lambda d, i=index, b=bad: d["layers"][i].__setitem__("kind", b))
        for bad in (None, 1, "text", ["text"], {"x": float("inf")}, {"x": [float("nan")]}):
            yield f"{at}.data: {bad!r}", edit(lambda d, i=index, b=bad: d["layers"][i].__setitem__("data", b))
