"""The check of a call's arguments against its tool's JSON schema, by ``jsonschema`` (draft
2020-12). Each tool's schema is checked by the tests (tests/agent/test_tools_registry.py), as a
constant of the code: valid draft 2020-12, every required name a declared property.

The arguments are checked after the argument repair (inference.md S6 tool-call argument
repair, ``eukhe.inference.repair``, which also refuses unknown keys) and before a tool runs, so a
tool's body only ever sees arguments of the declared types. Each way the arguments break the
schema becomes one ``ArgumentError`` whose message names the field (``path``, ``xs[1]``; the
whole arguments as ``arguments``) before jsonschema's own words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

import jsonschema

from eukhe.inference.repair import ArgumentError

INVALID = "invalid_arguments"
UNKNOWN_KEY = "unknown_key"  # the argument repair's kind for a key the schema does not declare


@cache
def _validator(schema: Any) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(_thawed(schema))


def _frozen(value: Any) -> Any:
    """A hashable copy of a JSON value (the key a schema's validator is kept under)."""
    if isinstance(value, Mapping):
        return ("object", tuple((k, _frozen(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return ("array", tuple(_frozen(v) for v in value))
    return value


def _thawed(value: Any) -> Any:
    if isinstance(value, tuple) and len(value) == 2 and value[0] == "object":
        return {k: _thawed(v) for k, v in value[1]}
    if isinstance(value, tuple) and len(value) == 2 and value[0] == "array":
        return [_thawed(v) for v in value[1]]
    return value


def _field(path: Sequence[str | int], where: str) -> str:
    """The JSON path of an argument: ``name``, ``name.inner``, ``xs[1]``; the whole: ``where``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}" if out else part
    return out or where


def check(value: Any, schema: Mapping[str, Any], where: str = "arguments") -> list[ArgumentError]:
    """Every way ``value`` breaks ``schema`` (in the schema's order), each naming its field."""
    errors = _validator(_frozen(schema)).iter_errors(value)
    return [
        ArgumentError(UNKNOWN_KEY if error.validator == "additionalProperties" else INVALID, f"{_field(error.absolute_path, where)}: {error.message}")
        for error in errors
    ]
