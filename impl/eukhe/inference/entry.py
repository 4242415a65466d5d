"""The entries of the compiled inference models (inference.md S6 "Tie": bend/ffi_infer_force,
ffi_infer_guard, ffi_infer_threshold; laws infer_*_ffi_*, here infer_entry_*).

Numbers that reach the compiled forced call, guard and threshold from outside (a provider's
token count, a cvar, a request counter) pass through ``answer``: a request whose numbers fit
the wire (u32 attempts, retries, windows and chunk ids; u64 token counts) is answered as the
model answers; anything else is an ``EntryError`` naming the entry, the field and what is wrong
(Op: no such entry; Missing; Type: not a natural or not a boolean; Range: past the width;
Unknown: a field the entry does not have), checked in the entry's field order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bend import infer as compiled

U32, U64 = 2**32 - 1, 2**64 - 1

_FIELDS: dict[str, tuple[tuple[str, str], ...]] = {
    "force_flag": (("attempt", "u32"), ("supported", "bool"), ("free", "bool")),
    "force_after": (("attempt", "u32"), ("retries", "u32"), ("called", "bool")),
    "guard_start": (("limit", "u32"),),
    "guard_feed": (("limit", "u32"), ("ids", "u32s")),
    "threshold_over": (("enabled", "bool"), ("window", "u64"), ("reserve", "u64"), ("margin", "u64"), ("tokens", "u64")),
}


class EntryError(ValueError):
    def __init__(self, kind: str, where: str) -> None:
        super().__init__(f"EntryError::{kind}({where})")
        self.kind = kind
        self.where = where


def _natural(op: str, name: str, value: Any, width: int) -> None:
    if type(value) is not int or value < 0:
        raise EntryError("Type", f"{op}.{name}")
    if value > width:
        raise EntryError("Range", f"{op}.{name}")


def _check(op: str, name: str, kind: str, value: Any) -> None:
    if kind == "bool":
        if type(value) is not bool:
            raise EntryError("Type", f"{op}.{name}")
    elif kind == "u32s":
        if not isinstance(value, (list, tuple)):
            raise EntryError("Type", f"{op}.{name}")
        for item in value:
            _natural(op, name, item, U32)
    else:
        _natural(op, name, value, U32 if kind == "u32" else U64)


def answer(request: Mapping[str, Any]) -> Any:
    """The compiled model's answer to ``request`` (``op`` and the entry's fields)."""
    op = request.get("op")
    if not isinstance(op, str) or op not in _FIELDS:
        raise EntryError("Op", op if isinstance(op, str) else "?")
    for name, kind in _FIELDS[op]:
        if name not in request:
            raise EntryError("Missing", f"{op}.{name}")
        _check(op, name, kind, request[name])
    declared = {name for name, _ in _FIELDS[op]}
    for name in sorted(request):
        if name != "op" and name not in declared:
            raise EntryError("Unknown", f"{op}.{name}")
    if op == "force_flag":
        return compiled.flag(request["attempt"], request["supported"], request["free"])
    if op == "force_after":
        return compiled.after(request["attempt"], request["retries"], request["called"])
    if op == "guard_start":
        return compiled.guard_start(request["limit"])
    if op == "guard_feed":
        state = compiled.guard_start(request["limit"])
        for i, chunk in enumerate(request["ids"]):
            state, verdict = compiled.guard_feed(state, chunk)
            if verdict != compiled.KEPT:
                return i, verdict
        return None
    return compiled.over(request["enabled"], request["window"], request["reserve"], request["margin"], request["tokens"])
