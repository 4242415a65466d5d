"""The JSON Schema subset the tools declare, and the check of a call's arguments against it.

The arguments are checked after the argument repair (inference.md S6 tool-call argument
repair, ``eukhe.inference.repair``) and before a tool runs, so a tool's body only ever sees
arguments of the declared types. ``jsonschema`` is not a dependency of eukhe, so this checker is
ours and covers a stated subset of draft 2020-12 only: ``type`` (a name or a list of names),
``properties``, ``required``, ``additionalProperties`` (false only), ``items``, ``enum``,
``minimum``, ``minLength`` and ``description``. ``check_schema`` refuses a schema that uses any
other keyword, so no tool can declare a rule this checker would silently skip. Every wire API
takes the subset as it is (tests/agent check it against jsonschema's metaschema where
jsonschema is installed).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from eukhe.inference.repair import ArgumentError

KEYWORDS = frozenset({"type", "properties", "required", "additionalProperties", "items", "enum", "minimum", "minLength", "description"})
TYPES = ("string", "integer", "number", "boolean", "object", "array", "null")
INVALID = "invalid_arguments"


class SchemaError(ValueError):
    """A tool's schema leaves the subset (a defect of the tool, found when it is declared)."""


def check_schema(schema: Mapping[str, Any], where: str = "the schema") -> None:
    """Raise SchemaError unless ``schema`` (and every schema inside it) is in the subset."""
    unknown = sorted(set(schema) - KEYWORDS)
    if unknown:
        raise SchemaError(f"{where} uses {', '.join(unknown)}, outside the checked subset")
    kinds = _kinds(schema)
    if "type" in schema and (not kinds or any(k not in TYPES for k in kinds)):
        raise SchemaError(f"{where}: type {schema['type']!r} is not a type name or a list of them")
    if schema.get("additionalProperties", False) is not False:
        raise SchemaError(f"{where}: additionalProperties may only be false")
    properties = schema.get("properties", {})
    for name, inner in properties.items():
        check_schema(inner, f"{where}.properties.{name}")
    missing = [name for name in schema.get("required", []) if name not in properties]
    if missing:
        raise SchemaError(f"{where}: required names undeclared properties {missing}")
    if "items" in schema:
        check_schema(schema["items"], f"{where}.items")


def _kinds(schema: Mapping[str, Any]) -> tuple[str, ...]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return (kind,)
    if isinstance(kind, list) and all(isinstance(k, str) for k in kind):
        return tuple(kind)
    return ()


def _is(value: Any, kind: str) -> bool:
    """JSON's types over Python's values: a bool is no number, an integral float is an integer."""
    if kind == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (isinstance(value, float) and value.is_integer())
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, {"string": str, "boolean": bool, "object": dict, "array": list, "null": type(None)}[kind])


def _json_type(value: Any) -> str:
    for kind in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if _is(value, kind):
            return kind
    return type(value).__name__


def check(value: Any, schema: Mapping[str, Any], where: str = "arguments") -> list[ArgumentError]:
    """Every way ``value`` breaks ``schema``, each naming the field (``where``) it is about."""
    kinds = _kinds(schema)
    if kinds and not any(_is(value, k) for k in kinds):
        return [ArgumentError(INVALID, f"{where}: expected {' or '.join(kinds)}, got {_json_type(value)}")]
    errors: list[ArgumentError] = []
    if "enum" in schema and value not in schema["enum"]:
        errors.append(ArgumentError(INVALID, f"{where}: expected one of {schema['enum']}, got {value!r}"))
    if "minimum" in schema and _is(value, "number") and value < schema["minimum"]:
        errors.append(ArgumentError(INVALID, f"{where}: expected at least {schema['minimum']}, got {value}"))
    if "minLength" in schema and isinstance(value, str) and len(value) < schema["minLength"]:
        errors.append(ArgumentError(INVALID, f"{where}: expected at least {schema['minLength']} characters, got {len(value)}"))
    if isinstance(value, dict):
        properties: Mapping[str, Any] = schema.get("properties", {})
        for name in schema.get("required", []):
            if name not in value:
                errors.append(ArgumentError(INVALID, f"{name}: required, and missing"))
        for name, inner in value.items():
            if name in properties:
                errors += check(inner, properties[name], name if where == "arguments" else f"{where}.{name}")
            elif schema.get("additionalProperties", True) is False:
                errors.append(ArgumentError("unknown_key", f"unknown argument {name!r} (the tool takes: {', '.join(sorted(properties)) or 'none'})"))
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            errors += check(item, schema["items"], f"{where}[{i}]")
    return errors
