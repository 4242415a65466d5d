"""The conversation document eukhe.directors (S5.8): the stack as a JSON value.

{"layers": [{"budget": b, "kind": "goal" | "autonomous" | "reminder" | "forced",
"data": {...}}, ...bottom first], "version": 1}; "data" (the kind data) is written only when
a layer has some. Parsing is strict (pydantic at the I/O boundary): an unknown key at any
depth, a missing field, a negative, non-integer or out-of-range budget (more than
``MAX_BUDGET``), an unknown kind, another version (``true`` is not 1), data that is not an
object of finite JSON values is a DocumentError naming where, and nothing is guessed.

``to_document`` checks the document it makes with the same parser, so an invalid stack (a
negative budget, kind data that is not JSON) is refused before anything is committed: no
invalid eukhe.directors value is ever written.
"""

from __future__ import annotations

import json
import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError, field_validator

from eukhe.directors.stack import Layer, LayerKind

DIRECTORS_DOC = "eukhe.directors"
LOOP_DOC = "eukhe.directors.loop"
VERSION = 1
MAX_BUDGET = 2**63 - 1  # a budget is read into a signed 64-bit integer (the seed's Rust)


class DocumentError(ValueError):
    """An eukhe.directors value that is not a sound tree; the message names where."""


def _finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_finite(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _finite(v) for k, v in value.items())
    return value is None or isinstance(value, (str, int))


class _LayerDoc(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    budget: StrictInt = Field(ge=0, le=MAX_BUDGET)
    kind: Literal["goal", "autonomous", "reminder", "forced"]
    data: dict[str, Any] = Field(default_factory=dict)

    @field_validator("data")
    @classmethod
    def _json_data(cls, value: dict[str, Any]) -> dict[str, Any]:
        if not _finite(value):
            raise ValueError("kind data holds a value that is not finite JSON")
        return value


class _StackDoc(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    layers: list[_LayerDoc]
    version: StrictInt

    @field_validator("version")
    @classmethod
    def _known(cls, value: int) -> int:
        if value != VERSION:
            raise ValueError(f"unknown version {value} (eukhe knows {VERSION})")
        return value


def _parse(value: Any) -> _StackDoc:
    if not isinstance(value, dict):
        raise DocumentError(f"{DIRECTORS_DOC}: expected an object with 'layers' and 'version', not {type(value).__name__}")
    try:
        return _StackDoc.model_validate(value)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top)"
        raise DocumentError(f"{DIRECTORS_DOC}: {where}: {first['msg']}") from None


def to_document(stack: list[Layer]) -> dict[str, Any]:
    """The document of a stack; DocumentError (nothing to commit) when it would not be sound."""
    layers: list[dict[str, Any]] = []
    for layer in stack:
        entry: dict[str, Any] = {"budget": layer.budget, "kind": layer.kind.value}
        if layer.data:
            entry["data"] = dict(layer.data)
        layers.append(entry)
    document = {"layers": layers, "version": VERSION}
    _parse(document)
    return document


def from_document(value: Any) -> list[Layer]:
    """The stack a document holds; DocumentError when it is not sound."""
    parsed = _parse(value)
    return [Layer(LayerKind(item.kind), item.budget, dict(item.data)) for item in parsed.layers]


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
