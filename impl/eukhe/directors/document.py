"""The conversation document eukhe.directors (S5.8): the stack as a JSON value.

{"layers": [{"budget": b, "kind": "goal" | "autonomous" | "reminder" | "forced",
"data": {...}}, ...bottom first], "version": 1}; "data" (the kind data) is written only when
a layer has some. Parsing is strict (pydantic at the I/O boundary): an unknown key, a
negative or non-integer budget, an unknown kind or another version is a DocumentError,
and nothing is guessed.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError

from eukhe.directors.stack import Layer, LayerKind

DIRECTORS_DOC = "eukhe.directors"
LOOP_DOC = "eukhe.directors.loop"
VERSION = 1


class DocumentError(ValueError):
    """An eukhe.directors value that is not a sound tree."""


class _LayerDoc(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    budget: StrictInt = Field(ge=0)
    kind: Literal["goal", "autonomous", "reminder", "forced"]
    data: dict[str, Any] = Field(default_factory=dict)


class _StackDoc(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    layers: list[_LayerDoc]
    version: Literal[1]


def to_document(stack: list[Layer]) -> dict[str, Any]:
    layers: list[dict[str, Any]] = []
    for layer in stack:
        entry: dict[str, Any] = {"budget": layer.budget, "kind": layer.kind.value}
        if layer.data:
            entry["data"] = dict(layer.data)
        layers.append(entry)
    return {"layers": layers, "version": VERSION}


def from_document(value: Any) -> list[Layer]:
    """The stack a document holds; DocumentError when it is not sound."""
    if not isinstance(value, dict) or set(value) != {"layers", "version"}:
        raise DocumentError("eukhe.directors: expected an object with exactly 'layers' and 'version'")
    try:
        parsed = _StackDoc.model_validate(value)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise DocumentError(f"eukhe.directors: {where}: {first['msg']}") from None
    return [Layer(LayerKind(item.kind), item.budget, dict(item.data)) for item in parsed.layers]


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
