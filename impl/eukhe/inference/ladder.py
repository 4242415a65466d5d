"""The thinking ladder (inference.md S6.9, S10 ladder): models::ladder.

The chosen map is the model's explicit thinkingLevelMap, else the family's rulebook ladder
(thinking_ladder), else no entries; the offered levels follow from it and the rulebook's
thinking_defaults. Both run as the compiled model (``bend.infer.chosen_ladder`` and
``bend.infer.offered``; bend/ffi_effort: no copy here). Budgets (S6.13) are read here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from bend import infer as compiled
from eukhe.inference.quirks import LEVELS, ModelKey, Rulebook

BUDGET_LEVELS: tuple[str, ...] = ("minimal", "low", "medium", "high")


def thinking_defaults(book: Rulebook) -> compiled.ThinkingDefaults:
    table = book.tables.get("thinking_defaults", {})
    return compiled.ThinkingDefaults(tuple(table.get("reasoning", ())), tuple(table.get("plain", ())))


def _pairs(level_map: Mapping[str, str | None] | None) -> compiled.LevelMap | None:
    if level_map is None:
        return None
    return tuple((level, level_map[level]) for level in LEVELS if level in level_map)


@dataclass(frozen=True)
class Ladder:
    """A model's chosen ladder, where it came from, and the levels it offers."""

    entries: compiled.LevelMap
    source: str  # explicit, rulebook, none
    offered: tuple[str, ...]

    def wire(self, level: str) -> str | None:
        """The wire string of an offered level; None: the wire API's own form."""
        return compiled.entry_of(self.entries, level)[1]


def ladder(book: Rulebook, key: ModelKey, reasoning: bool, explicit: Mapping[str, str | None] | None) -> Ladder:
    rule = book.query(key, "thinking_ladder")
    rule_map = rule.value if rule.known else None
    chosen = compiled.chosen_ladder(_pairs(explicit), rule_map)
    source = "explicit" if explicit is not None else ("rulebook" if rule_map is not None else "none")
    return Ladder(chosen, source, compiled.offered(reasoning, chosen, thinking_defaults(book)))


def thinking_budget(book: Rulebook, key: ModelKey, level: str, user: Mapping[str, int] | None, *, dynamic: bool) -> int:
    """The token budget of a level (S6.13): the user's thinkingBudgets wins, clamped to the rule's
    minimal..high; no rule: the user's budget, else -1 (dynamic: Google) or the
    thinking_defaults budgets (every other token-budget wire API)."""
    slot = BUDGET_LEVELS.index(level) if level in BUDGET_LEVELS else len(BUDGET_LEVELS) - 1
    rule = book.query(key, "thinking_budgets")
    wanted = None if user is None else user.get(BUDGET_LEVELS[slot])
    if rule.known:
        low, high = rule.value[0], rule.value[3]
        return max(low, min(high, wanted)) if wanted is not None else int(rule.value[slot])
    if wanted is not None:
        return wanted
    if dynamic:
        return -1
    return int(book.tables.get("thinking_defaults", {}).get("budgets", (1024, 2048, 8192, 16384))[slot])
