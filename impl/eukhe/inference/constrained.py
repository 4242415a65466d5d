"""Constrained sampling (inference.md S6.4): constrained_sampling::strict_budget.

At most ``strict_cap`` strict schemas per request, highest priority first (Tool::priority,
default 0; ties: the earlier tool); the rest loose (the client validates and repairs their
arguments); none dropped. The plan runs as the compiled model ``bend.infer.strict_plan``
(bend/ffi_infer: no copy here).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bend import infer as compiled


class StrictBudgetError(Exception):
    """A strict-required tool past the cap (the highest-priority one is named)."""

    def __init__(self, tool: str, cap: int) -> None:
        super().__init__(f"tool {tool!r} requires a strict schema but the strict cap ({cap}) is spent on higher-priority tools")
        self.tool = tool


@dataclass(frozen=True)
class ToolSpec:
    name: str
    priority: int = 0
    strict_required: bool = False


@dataclass(frozen=True)
class StrictPlan:
    """The tools, in the order given, each strict or loose."""

    tools: tuple[ToolSpec, ...]
    strict: tuple[bool, ...]

    @property
    def strict_names(self) -> tuple[str, ...]:
        return tuple(t.name for t, s in zip(self.tools, self.strict) if s)


def strict_budget(tools: Sequence[ToolSpec], cap: int) -> StrictPlan:
    if cap < 0:
        raise ValueError("strict_cap is a natural")
    plan = compiled.strict_plan(tuple(compiled.Tool(t.name, t.priority, t.strict_required) for t in tools), cap)
    if plan.error is not None:
        raise StrictBudgetError(plan.error, cap)
    return StrictPlan(tuple(tools), tuple(mode == compiled.STRICT for mode in plan.modes))
