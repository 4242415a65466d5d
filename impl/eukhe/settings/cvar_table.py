"""The declarations: one per cvar (control.md S4.1; seed settings/cvar/table.rs).

The id is the dotted path of the key in settings.json. Types and defaults are the ones the
seeds give (control.md, memory.md, inference.md); where a seed names a setting without a
default, the default is the neutral value (an empty string for an unset name, an empty map,
``off`` for a NatOrOff). Scope Global: one value for every agent, set only by the global
config (limits shared by the process, the saved defaults, paths, trust). The session switches
(transport, steering mode, follow-up mode, auto retry, auto compaction, service tier) are Local,
persist and replicate: they are sets of the session's own agent and clients show them.

The declarations are built on first use (``table()``, cached; ``TABLE`` is the same tuple) and
checked by ``Registry`` when ``registry()`` is first called: a duplicate id or a mistyped
default stops eukhe at startup with RegistryError. Built by a function rather than at import so
that the declarations are code that runs when a caller asks for them (a mutation engine can
switch a changed declaration on; nothing of the table runs at import).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from eukhe.settings.cvar import (
    BOOL,
    ENUM,
    FLOAT,
    GLOBAL,
    LIST,
    LOCAL,
    MAP,
    NAT,
    NAT_OR_OFF,
    STRING,
    Cvar,
    CvarType,
    Registry,
)

LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh", "max")
ROLES = ("default", "smol", "slow", "plan", "memory", "tiny", "translate", "title", "commit", "judge", "speech", "dictation")

_Bool = CvarType(BOOL)
_Nat = CvarType(NAT)
_NatOrOff = CvarType(NAT_OR_OFF)
_String = CvarType(STRING)
_Float = CvarType(FLOAT)
_Level = CvarType(ENUM, LEVELS)
_Strings = CvarType(LIST, item=_String)
_NatMap = CvarType(MAP, item=_Nat)
_StringMap = CvarType(MAP, item=_String)
_Chains = CvarType(MAP, item=_Strings)


def _c(cvar: str, kind: CvarType, scope: str, default: Any, *, persist: bool = True, replicate: bool = False, doc: str = "") -> Cvar:
    return Cvar(cvar, kind, scope, persist, replicate, default, doc)


def _switch(cvar: str, kind: CvarType, default: Any, doc: str) -> Cvar:
    return _c(cvar, kind, LOCAL, default, persist=True, replicate=True, doc=doc)


def _declarations() -> tuple[Cvar, ...]:
    return (
        # the session switches (S4): sets of the session's own agent
        _switch("transport", CvarType(ENUM, ("auto", "sse", "websocket")), "auto", "transport of provider streams"),
        _switch("steeringMode", CvarType(ENUM, ("one-at-a-time", "all")), "one-at-a-time", "steering mode"),
        _switch("followUpMode", CvarType(ENUM, ("one-at-a-time", "all")), "one-at-a-time", "follow-up mode"),
        _switch("retry.enabled", _Bool, True, "auto retry"),
        _switch("compaction.enabled", _Bool, True, "auto compaction"),
        _switch("serviceTier", CvarType(ENUM, ("auto", "default", "flex", "priority")), "auto", "service tier"),
        # retry (inference.md S6)
        _c("retry.maxRetries", _Nat, LOCAL, 3),
        _c("retry.baseDelayMs", _Nat, LOCAL, 2000),
        _c("retry.failover.maxRetries", _Nat, LOCAL, 2),
        _c("retry.provider.streamRepeatLimit", _Nat, LOCAL, 64),
        _c("retry.fallbackChains", _Chains, GLOBAL, {}),
        # compaction (inference.md S6.8)
        _c("compaction.keepRecentTokens", _Nat, LOCAL, 40000),
        _c("compaction.providerTokenCount", _Bool, LOCAL, False),
        # the chat memory (memory.md D6, D10)
        _c("memory.model", _String, GLOBAL, ""),
        _c("memory.thinking", _Level, GLOBAL, "medium"),
        _c("memory.settleTimeoutMs", _Nat, LOCAL, 20000),
        # the Director stack (S5.6, S5.8)
        _c("directors.maxSteps", _Nat, LOCAL, 200),
        _c("directors.stackCap", _Nat, LOCAL, 8),
        _c("directors.stallSteps", _Nat, LOCAL, 3),
        _c("autonomous.enabled", _Bool, LOCAL, False, replicate=True),
        _c("autonomous.maxContinuations", _Nat, LOCAL, 20),
        # models (inference.md S6, S8, S10)
        _c("defaultProvider", _String, GLOBAL, ""),
        _c("defaultModel", _String, GLOBAL, ""),
        _c("defaultThinkingLevel", _Level, GLOBAL, "medium"),
        _c("thinkingBudgets", _NatMap, LOCAL, {}),
        *(_c(f"modelRoles.{role}", _String, GLOBAL, "") for role in ROLES),
        _c("titles.generate", _Bool, GLOBAL, True),
        _c("providers.tinyRuntimeLibrary", _String, GLOBAL, ""),
        _c("stt.enabled", _Bool, LOCAL, False, replicate=True),
        # limits (S4b.4, S4b.5)
        _c("providerMaxInFlight", _NatMap, GLOBAL, {}),
        _c("idleEvictionMinutes", _NatOrOff, GLOBAL, "off"),
        _c("sessionArchive.maxAgeDays", _NatOrOff, GLOBAL, "off"),
        _c("sessionArchive.maxCount", _NatOrOff, GLOBAL, "off"),
        _c("maxToolRounds", _Nat, LOCAL, 50),
        _c("subagentMaxConcurrency", _Nat, LOCAL, 4),
        _c("subagentStallMs", _Nat, LOCAL, 300000),
        _c("toolBlockingBudgetMs", _Nat, LOCAL, 120000),
        _c("temperature", _Float, LOCAL, 1.0, persist=False),
        # paths and trust (S4b.5, S4b.7)
        _c("sessionDir", _String, GLOBAL, ""),
        # eukhe's own, not in the seeds (issue 10): how long a CLI writer waits for a session another
        # writer holds (eukhe.cli.lock_timeout; EUKHE_LOCK_TIMEOUT seconds overrides it for one run)
        _c("session.lockTimeoutMs", _Nat, GLOBAL, 5000),
        # eukhe's own (issue 15): the tiny models' download base URL; "" = the catalog's host
        _c("tinyModels.baseUrl", _String, GLOBAL, ""),
        _c("trustedProjects", _Strings, GLOBAL, []),
        _c("kernelTransport", _StringMap, GLOBAL, {}),
    )


# The largest value a set takes, for each cvar that holds naturals (a Nat, the number of a
# NatOrOff, each value of a Map of Nat): the width its use reads it into (issue 30). A set past it
# is refused (``bound_error``) by the front door (`eukhe set`, `eukhe cvar`, /set), so a value a
# set accepts is one every use takes; a use that meets a larger value in a document the user
# edited reports it as a settings error. Retries, attempts and the repetition guard's window are
# u32 (inference.md S6, eukhe.inference.entry); the Director limits are read into a signed 64-bit
# integer (eukhe.directors.hooks.MAX_LIMIT); every other natural is a u64.
U32, I64, U64 = 2**32 - 1, 2**63 - 1, 2**64 - 1
_WIDTHS: dict[str, int] = {
    "retry.maxRetries": U32,
    "retry.failover.maxRetries": U32,
    "retry.provider.streamRepeatLimit": U32,
    "directors.maxSteps": I64,
    "directors.stackCap": I64,
    "directors.stallSteps": I64,
    "autonomous.maxContinuations": I64,
}
NAT_KINDS = (NAT, NAT_OR_OFF)


def largest(cvar: str) -> int | None:
    """The largest natural ``cvar`` holds, or None when it holds none (a Bool, a String...)."""
    decl = registry().get(cvar)
    if decl is None:
        return None
    kind = decl.type.kind
    if kind in NAT_KINDS or (kind == MAP and decl.type.item is not None and decl.type.item.kind in NAT_KINDS):
        return _WIDTHS.get(cvar, U64)
    return None


def bound_error(cvar: str, value: Any) -> str | None:
    """Why ``value`` of ``cvar`` is past the largest natural its use takes; None when it is not."""
    most = largest(cvar)
    if most is None:
        return None
    found = [("", value)] if not isinstance(value, dict) else [(f" at {key!r}", item) for key, item in value.items()]
    for where, item in found:
        if type(item) is int and item > most:
            shown = str(item) if item < 10**40 else f"a number of {len(str(item))} digits"
            return f"{shown}{where} is past the largest value of {cvar}, {most}"
    return None


@cache
def table() -> tuple[Cvar, ...]:
    """The declarations, built on the first call and kept."""
    return _declarations()


@cache
def registry() -> Registry:
    """The registry of the declarations (RegistryError stops startup)."""
    return Registry(table())


def __getattr__(name: str) -> tuple[Cvar, ...]:
    """``TABLE``: the declarations (``table()``), for the importers that name the tuple."""
    if name == "TABLE":  # pragma: no mutate
        return table()  # pragma: no mutate
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")  # pragma: no mutate
