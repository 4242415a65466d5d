"""The check of a call's arguments against its tool's JSON schema, by ``jsonschema`` (draft
2020-12), and the check of each tool's schema when the tool is declared.

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
import jsonschema.exceptions

from eukhe.inference.repair import ArgumentError

INVALID = "invalid_arguments"
UNKNOWN_KEY = "unknown_key"  # the argument repair's kind for a key the schema does not declare


class SchemaError(ValueError):
    """A tool's schema is not a valid draft 2020-12 schema, or requires a property it does not
    declare (a defect of the tool, found when it is declared)."""


def check_schema(schema: Mapping[str, Any], where: str = "the schema") -> None:
    """Raise SchemaError unless ``schema`` is a valid draft 2020-12 schema whose required names
    (at every level) are declared properties."""
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.exceptions.SchemaError as error:
        raise SchemaError(f"{where}: {error.message}") from None
    properties = schema.get("properties", {})
    missing = [name for name in schema.get("required", []) if name not in properties]
    if missing:
        raise SchemaError(f"{where}: required names undeclared properties {missing}")
    for name, inner in properties.items():
        check_schema(inner, f"{where}.properties.{name}")
    if isinstance(schema.get("items"), Mapping):
        check_schema(schema["items"], f"{where}.items")


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
