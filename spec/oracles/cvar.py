"""The judge of the cvar laws: control.md S4 (and the settings the other seeds name) as data.

Nothing here imports ``bend.cvar`` or ``eukhe.settings``: the laws judge the model's
``has_type``, ``parse_value`` and registry, and production's ``CvarType.holds``/``parse`` and
shipped ``TABLE``, with these functions and rows, written from the seeds' sentences.

Types are tuples: ``("Bool",)``, ``("Enum", (choices...))``, ``("List", item)``, ``("Map", item)``.
Values are JSON values as Python reads them (bool, int, float, str, list, dict).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

# S4: "its id, its type, its scope, two flags and its default". The type kinds the seeds use:
# Bool (retry.enabled, toggles: "Sets a Bool cvar to the opposite"), whole numbers (Int, and Nat
# for counts and limits: "a providerMaxInFlight entry that is not a whole number"), NatOrOff
# (S4b.4: "a whole number, off or none (NatOrOff)"), Float (temperature), String (model ids,
# paths), Enum (a level of the S10 ladder, the session switches' modes), List and Map.
KINDS: tuple[str, ...] = ("Bool", "Int", "Nat", "NatOrOff", "Float", "String", "Enum", "List", "Map")
GLOBAL, LOCAL = "Global", "Local"
OFF_WORDS = ("off", "none")

Type = tuple[Any, ...]


def _whole(value: Any) -> bool:
    # a JSON integer: a bool is not a number here (true is not 1)
    return isinstance(value, int) and not isinstance(value, bool)


def holds(t: Type, value: Any) -> bool:
    """Whether ``value`` has type ``t`` (S4: "its value has the type of the cvar")."""
    kind = t[0]
    if kind == "Bool":
        return value is True or value is False
    if kind == "Int":
        return _whole(value)
    if kind == "Nat":
        return _whole(value) and value >= 0
    if kind == "NatOrOff":
        return (_whole(value) and value >= 0) or (isinstance(value, str) and value in OFF_WORDS)
    if kind == "Float":
        # a number; nan and inf are not (issue 9: `set temperature inf` no longer reads back)
        return _whole(value) or (isinstance(value, float) and math.isfinite(value))
    if kind == "String":
        return isinstance(value, str)
    if kind == "Enum":
        return isinstance(value, str) and value in t[1]
    if kind == "List":
        return isinstance(value, (list, tuple)) and all(holds(t[1], v) for v in value)
    if kind == "Map":
        return isinstance(value, dict) and all(isinstance(k, str) and holds(t[1], v) for k, v in value.items())
    raise ValueError(f"no type kind {kind!r}")


# The value words of the command language (``set <id> <value>``): the S4 table says a word in
# double quotes keeps its spaces; what a word of each kind reads as is ours (DESIGN: the model's
# docstring): true/false, -?digits, digits, digits|off|none, -?digits(.digits)? (finite), any
# text, a choice, and JSON for List and Map.
_PATTERNS = {
    "Bool": re.compile(r"(true|false)\Z"),
    "Int": re.compile(r"-?[0-9]+\Z"),
    "Nat": re.compile(r"[0-9]+\Z"),
    "NatOrOff": re.compile(r"([0-9]+|off|none)\Z"),
    "Float": re.compile(r"-?[0-9]+(\.[0-9]+)?\Z"),
}


def word_reads(t: Type, word: str) -> bool:
    """Whether ``set <id> <word>`` gives a value of type ``t``."""
    kind = t[0]
    if kind in _PATTERNS:
        if not _PATTERNS[kind].match(word):
            return False
        if kind == "Float" and "." in word:
            return math.isfinite(float(word))
        return True
    if kind == "String":
        return True
    if kind == "Enum":
        return word in t[1]
    try:
        value = json.loads(word)
    except ValueError:
        return False
    return holds(t, value)


# -- the settings table ------------------------------------------------------------------------
# One row per setting: id, type, scope, persist, replicate, default, guarded (S4b.5: an untrusted
# project does not change it). Where a seed gives a fact it is quoted; the rest is the design of
# the declarations (impl/eukhe/settings/cvar_table.py docstring: a setting a seed names without a
# default gets the neutral value, Global for what the process shares, persist on, replicate
# only for what clients show).
_BOOL: Type = ("Bool",)
_NAT: Type = ("Nat",)
_NAT_OR_OFF: Type = ("NatOrOff",)
_STRING: Type = ("String",)
_FLOAT: Type = ("Float",)
_LEVEL: Type = ("Enum", ("off", "minimal", "low", "medium", "high", "xhigh", "max"))  # inference.md S10 ladder
_MODE: Type = ("Enum", ("one-at-a-time", "all"))
_STRINGS: Type = ("List", _STRING)
_NAT_MAP: Type = ("Map", _NAT)

Row = tuple[str, Type, str, bool, bool, Any, bool]


def _switch(cvar: str, t: Type, default: Any) -> Row:
    # S4: "The session switches (transport, steering mode, follow-up mode, auto retry, auto
    # compaction, service tier) are sets of the session's own agent": Local; clients show them.
    return (cvar, t, LOCAL, True, True, default, False)


TABLE: tuple[Row, ...] = (
    _switch("transport", ("Enum", ("auto", "sse", "websocket")), "auto"),
    _switch("steeringMode", _MODE, "one-at-a-time"),
    _switch("followUpMode", _MODE, "one-at-a-time"),
    _switch("retry.enabled", _BOOL, True),  # S4: "retry.enabled"
    _switch("compaction.enabled", _BOOL, True),
    _switch("serviceTier", ("Enum", ("auto", "default", "flex", "priority")), "auto"),  # inference.md S6 item 8 tiers
    ("retry.maxRetries", _NAT, LOCAL, True, False, 3, True),  # S4b.5 guarded
    ("retry.baseDelayMs", _NAT, LOCAL, True, False, 2000, False),
    ("retry.failover.maxRetries", _NAT, LOCAL, True, False, 2, True),  # S4b.5 guarded
    ("retry.provider.streamRepeatLimit", _NAT, LOCAL, True, False, 64, False),  # inference.md S6.5 "default 64"
    ("retry.fallbackChains", ("Map", _STRINGS), GLOBAL, True, False, {}, False),
    ("compaction.keepRecentTokens", _NAT, LOCAL, True, False, 40000, False),  # S6.6 "eukhe default 40,000"
    ("compaction.providerTokenCount", _BOOL, LOCAL, True, False, False, False),  # S6.6 "(default off)"
    ("memory.model", _STRING, GLOBAL, True, False, "", False),
    ("memory.thinking", _LEVEL, GLOBAL, True, False, "medium", False),
    ("memory.settleTimeoutMs", _NAT, LOCAL, True, False, 20000, False),  # memory.md "(default 20 s)"
    ("directors.maxSteps", _NAT, LOCAL, True, False, 200, True),  # S5.6 "default 200"; S4b.5 directors
    ("directors.stackCap", _NAT, LOCAL, True, False, 8, True),  # S5.6 "(default 8)"
    ("directors.stallSteps", _NAT, LOCAL, True, False, 3, True),  # S5.8 "default 3"
    ("autonomous.enabled", _BOOL, LOCAL, True, True, False, True),  # S4b.5 autonomous
    ("autonomous.maxContinuations", _NAT, LOCAL, True, False, 20, True),
    ("defaultProvider", _STRING, GLOBAL, True, False, "", False),
    ("defaultModel", _STRING, GLOBAL, True, False, "", False),  # inference.md S6 models.json
    ("defaultThinkingLevel", _LEVEL, GLOBAL, True, False, "medium", False),  # S10 session 1 "else medium"
    ("thinkingBudgets", _NAT_MAP, LOCAL, True, False, {}, True),  # S4b.5 guarded
    *(
        (f"modelRoles.{role}", _STRING, GLOBAL, True, False, "", False)
        for role in ("default", "smol", "slow", "plan", "memory", "tiny", "translate", "title", "commit")
    ),
    *(  # inference.md S9 "On-machine models per role: ... judge, ... speech, ... dictation"
        (f"modelRoles.{role}", _STRING, GLOBAL, True, False, "", False)
        for role in ("judge", "speech", "dictation")
    ),
    ("providers.tinyRuntimeLibrary", _STRING, GLOBAL, True, False, "", False),  # inference.md S9 engine
    ("titles.generate", _BOOL, GLOBAL, True, False, True, False),  # inference.md S9 "titles.generate: false titles nothing"
    ("stt.enabled", _BOOL, LOCAL, True, True, False, False),  # inference.md S9
    ("providerMaxInFlight", _NAT_MAP, GLOBAL, True, False, {}, False),  # S4b.4
    ("idleEvictionMinutes", _NAT_OR_OFF, GLOBAL, True, False, "off", False),  # S4b.4 NatOrOff
    ("sessionArchive.maxAgeDays", _NAT_OR_OFF, GLOBAL, True, False, "off", False),  # S4b.4 archive rules
    ("sessionArchive.maxCount", _NAT_OR_OFF, GLOBAL, True, False, "off", False),
    ("maxToolRounds", _NAT, LOCAL, True, False, 50, True),  # S4b.5 guarded
    ("subagentMaxConcurrency", _NAT, LOCAL, True, False, 4, True),  # S4b.5 guarded
    ("subagentStallMs", _NAT, LOCAL, True, False, 300000, True),  # S4b.5 guarded
    ("toolBlockingBudgetMs", _NAT, LOCAL, True, False, 120000, True),  # S4b.5 guarded
    ("temperature", _FLOAT, LOCAL, False, False, 1.0, False),
    ("sessionDir", _STRING, GLOBAL, True, False, "", False),  # S4b.7
    ("trustedProjects", _STRINGS, GLOBAL, True, False, [], False),  # S4b.5 "from the global layer only"
    ("kernelTransport", ("Map", _STRING), GLOBAL, True, False, {}, True),  # S4b.5/6 guarded, a unit
)

IDS: tuple[str, ...] = tuple(row[0] for row in TABLE)

# eukhe's own settings: not in any seed, so no law draws its domain from them as if the seeds
# said so (the bridge's shipped declarations are TABLE alone). Production ships TABLE + OWN.
OWN: tuple[Row, ...] = (
    # issue 10: how long a CLI writer waits for a session another writer holds (the seeds name no
    # lock wait); a count of milliseconds, one value for the process: Global, persist, no replicate
    ("session.lockTimeoutMs", _NAT, GLOBAL, True, False, 5000, False),
    # issue 15: the tiny models' download base URL (inference.md S9 gives no key); "" = the
    # catalog's host
    ("tinyModels.baseUrl", _STRING, GLOBAL, True, False, "", False),
)
SHIPPED: tuple[Row, ...] = TABLE + OWN
SHIPPED_IDS: tuple[str, ...] = tuple(row[0] for row in SHIPPED)


# -- the global layers (S4, S4.2) -----------------------------------------------------------------
# S4.2: "A Global cvar has one value for every agent: only the global config sets it." S4: "The
# config is settings.json (global, then project) and then config.cfg (global ..., then project
# ...). A project file never sets a Global cvar." "In each layer, the last valid set of a cvar
# wins. A set is valid when its cvar is declared and its value has the type of the cvar. In a
# profile or an agent's sets, the cvar must also be Local." And the global toggle: "A toggle in
# /set --global flips the value of the global layer only (the global settings.json, then the
# global config.cfg). A project file never changes what it flips."

Decl = tuple[str, Type, str, Any]  # id, type, scope, default
Layer = tuple[bool, tuple[tuple[str, Any], ...]]  # a project file?, its sets (id, value) in order


def global_layers_value(decls: tuple[Decl, ...], layers: tuple[Layer, ...], cvar: str) -> Any:
    """The value of the global layers: the default, then in order each set of ``cvar`` in a file
    that is not a project file whose value has the cvar's type (the last wins). For a Global cvar
    this is its value in every agent (S4.2): no project file, profile or agent's sets sets it."""
    found = [d for d in decls if d[0] == cvar]
    if not found:
        raise ValueError(f"{cvar} is not declared")
    _, t, _, value = found[0]
    for project, sets in layers:
        if project:
            continue
        for set_id, set_value in sets:
            if set_id == cvar and holds(t, set_value):
                value = set_value
    return value
