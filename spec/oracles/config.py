"""The judge of the config laws, transcribed from control.md S4 and S4b (never from
bend/config.py or impl/eukhe/settings/config.py).

- S4b.5: the items an untrusted project does not change, word for word from the seed:
  "maxToolRounds, subagentMaxConcurrency, subagentStallMs, toolBlockingBudgetMs, autonomous,
  directors, thinkingBudgets, retry.maxRetries and retry.failover.maxRetries are withheld with
  the keys that run code, and so are the project SYSTEM.md and APPEND_SYSTEM.md". The keys that
  run code are the MCP server entries and the kernel transport (S4b.6 names both as units:
  "An mcpServers entry is a unit ... kernelTransport is a unit too"). "autonomous" and
  "directors" are groups: every setting under them.
- S4b.1: a document reads as empty only when the file is not there; a file that cannot be read,
  is not JSON, is not an object, or whose version is not known is an error (the known version:
  1, a whole number; absent reads as 1).
- S4b.3: a leaf is a value that is not an object, or the whole value of a setting; the known
  top-level keys besides the settings are version and mcpServers.
- S4b.4: providerMaxInFlight: a whole number >= 0 is the limit; an entry that is not a whole
  number limits to 1; a value that is not a map limits each provider to 1; no value, no limit.
- S4 (types of the settings the config laws use): Bool, Nat (a whole number >= 0, a Bool is
  not a number), NatOrOff (a Nat, "off" or "none"), String, Enum, List, Map.
"""

from __future__ import annotations

from typing import Any

GUARDED_SETTINGS = (
    "maxToolRounds",
    "subagentMaxConcurrency",
    "subagentStallMs",
    "toolBlockingBudgetMs",
    "autonomous",
    "directors",
    "thinkingBudgets",
    "retry.maxRetries",
    "retry.failover.maxRetries",
)
RUNS_CODE = ("mcpServers", "kernelTransport")
PROMPTS = ("SYSTEM.md", "APPEND_SYSTEM.md")
GUARDED = GUARDED_SETTINGS + RUNS_CODE + PROMPTS
GLOBAL_ONLY = ("trustedProjects",)  # S4b.5: from the global layers only

# S4b.4 and S5.6/S5.8: settings the seed names with their type and default
NAMED_SETTINGS: dict[str, tuple[str, Any]] = {
    "providerMaxInFlight": ("Map of Nat", {}),
    "idleEvictionMinutes": ("NatOrOff", None),
    "sessionArchive.maxAgeDays": ("NatOrOff", None),
    "sessionArchive.maxCount": ("NatOrOff", None),
    "directors.maxSteps": ("Nat", 200),
    "directors.stackCap": ("Nat", 8),
    "directors.stallSteps": ("Nat", 3),
    "autonomous.maxContinuations": ("Nat", None),
    "trustedProjects": ("List of String", None),
}

KNOWN_TOP = ("version", "mcpServers")
KNOWN_VERSION = 1


def guarded(item: str) -> bool:
    """S4b.5: the item is, or is under, one of the seed's guarded names."""
    return any(item == g or item.startswith(g + ".") for g in GUARDED)


def whole(value: Any) -> bool:
    return type(value) is int


def read(state: str, content: Any) -> tuple[bool, str]:
    """S4b.1: (readable, why not). ``state``: missing, unreadable, invalid (not JSON), text."""
    if state == "missing":
        return True, ""
    if state == "unreadable":
        return False, "unreadable"
    if state == "invalid":
        return False, "not JSON"
    if type(content) is not dict:
        return False, "not an object"
    if "version" in content and not (whole(content["version"]) and content["version"] == KNOWN_VERSION):
        return False, "unknown version"
    return True, ""


def in_flight(present: bool, raw: Any, provider: str) -> int | None:
    """S4b.4 word for word: None is no limit."""
    if not present:
        return None
    if type(raw) is not dict:
        return 1
    if provider not in raw:
        return None
    entry = raw[provider]
    return entry if whole(entry) and entry >= 0 else 1


def holds(kind: str, value: Any, choices: tuple[str, ...] = ()) -> bool:
    """S4: does ``value`` (plain JSON) have the type ``kind``?"""
    if kind == "Bool":
        return type(value) is bool
    if kind == "Nat":
        return whole(value) and value >= 0
    if kind == "NatOrOff":
        return (whole(value) and value >= 0) or value in ("off", "none")
    if kind == "String":
        return type(value) is str
    if kind == "Enum":
        return type(value) is str and value in choices
    if kind.startswith("List of "):
        return type(value) is list and all(holds(kind[len("List of "):], v) for v in value)
    if kind.startswith("Map of "):
        return type(value) is dict and all(holds(kind[len("Map of "):], v) for v in value.values())
    raise ValueError(f"no type {kind}")
