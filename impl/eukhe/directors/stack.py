"""The Director stack of control.md S5: layers, verdicts, ``decide`` and ``Loop.tick``.

Production twin of bend/director.py (tied by the director bridge, never importing it):
a list of layers, bottom first, top last; the top layer decides first (S5.1); a push needs
room in the full stack, counted over every layer the step saw (the layers above, also those
that deferred or left, the layer, and those below) against the cap, which is
directors.stackCap + 2 (S5.6); each continuation of a loop costs a step of the global
budget (S5.3), and with no step left a continuation yields with the stack as before the
step; an ended loop stays ended.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

DEFAULT_STACK_CAP = 8
RESERVED_PLACES = 2
DEFAULT_MAX_STEPS = 200


class LayerKind(str, enum.Enum):
    GOAL = "goal"
    AUTONOMOUS = "autonomous"
    REMINDER = "reminder"
    FORCED = "forced"


KIND_ORDER: tuple[LayerKind, ...] = (LayerKind.GOAL, LayerKind.AUTONOMOUS, LayerKind.REMINDER, LayerKind.FORCED)
PUSHED_KINDS = frozenset({LayerKind.REMINDER, LayerKind.FORCED})


@dataclass
class Layer:
    """One Director: its kind, its budget (loop steps it can still ask for), its kind data
    (a reminder's text; a forced call's tool, tries, misses, requests, called)."""

    kind: LayerKind
    budget: int
    data: dict[str, Any] = field(default_factory=dict)

    def copy(self) -> Layer:
        return Layer(self.kind, self.budget, dict(self.data))


class Tag(str, enum.Enum):
    DEFER = "defer"
    AGAIN = "again"
    YIELD = "yield"
    STACK = "stack"
    LEAVE = "leave"
    ABORT = "abort"


@dataclass(frozen=True)
class Verdict:
    tag: Tag
    pushed: Layer | None = None


DEFER = Verdict(Tag.DEFER)
AGAIN = Verdict(Tag.AGAIN)
YIELD = Verdict(Tag.YIELD)
LEAVE = Verdict(Tag.LEAVE)
ABORT = Verdict(Tag.ABORT)


class Outcome(str, enum.Enum):
    CONTINUE = "continue"
    YIELD = "yield"
    FAIL = "fail"


@dataclass
class Decision:
    stack: list[Layer]
    outcome: Outcome
    rule: str
    decider: int | None  # index (in the stack before the decision) of the layer that decided
    asked: list[int]  # indexes asked, top down, with the verdict each gave
    verdicts: list[Verdict]


def full_cap(stack_cap: int) -> int:
    """S5.6: directors.stackCap pushed layers plus the places of the goal and the autonomous run."""
    return stack_cap + RESERVED_PLACES


VerdictSource = Callable[[int, Layer], Verdict]


def decide_with(stack: Sequence[Layer], verdict_for: VerdictSource, cap: int) -> Decision:
    """S5.1/S5.2: ask ``verdict_for(index, layer)`` from the top down until one decides."""
    n = len(stack)
    left: set[int] = set()
    asked: list[int] = []
    given: list[Verdict] = []
    for index in range(n - 1, -1, -1):
        layer = stack[index]
        verdict = verdict_for(index, layer)
        asked.append(index)
        given.append(verdict)
        tag = verdict.tag
        if tag is Tag.DEFER:
            continue
        if tag is Tag.LEAVE:
            left.add(index)
            continue

        def rebuild(middle: list[Layer]) -> list[Layer]:
            above = [stack[j] for j in range(index + 1, n) if j not in left]
            return list(stack[:index]) + middle + above

        if tag is Tag.AGAIN:
            if layer.budget <= 0:
                return Decision(rebuild([layer]), Outcome.YIELD, "again_no_budget", index, asked, given)
            spent = layer.copy()
            spent.budget -= 1
            return Decision(rebuild([spent]), Outcome.CONTINUE, "again", index, asked, given)
        if tag is Tag.STACK and verdict.pushed is not None:
            if layer.budget <= 0:
                return Decision(rebuild([layer]), Outcome.YIELD, "push_no_budget", index, asked, given)
            # Room counts every layer the step saw: all n of them (above, this one, below).
            if n >= cap:
                return Decision(rebuild([layer]), Outcome.FAIL, "push_no_room", index, asked, given)
            spent = layer.copy()
            spent.budget -= 1
            return Decision(rebuild([spent, verdict.pushed]), Outcome.CONTINUE, "push", index, asked, given)
        if tag is Tag.ABORT:
            return Decision(rebuild([layer]), Outcome.FAIL, "abort", index, asked, given)
        return Decision(rebuild([layer]), Outcome.YIELD, "yield", index, asked, given)
    kept = [stack[j] for j in range(n) if j not in left]
    return Decision(kept, Outcome.YIELD, "none", None, asked, given)


def decide(stack: Sequence[Layer], verdicts: Sequence[Verdict], cap: int) -> Decision:
    """decide over a verdict list given from the top down (a missing verdict defers)."""
    n = len(stack)

    def by_list(index: int, layer: Layer) -> Verdict:
        k = n - 1 - index
        return verdicts[k] if k < len(verdicts) else DEFER

    return decide_with(stack, by_list, cap)


@dataclass
class Loop:
    """The loop of one run: stack, steps left of the global budget, end ("" while running)."""

    stack: list[Layer]
    steps: int
    end: str = ""

    def tick_with(self, verdict_for: VerdictSource, cap: int) -> tuple[str, Decision | None]:
        """One step (S5.3). Returns the rule that fired and the decision (None when ended)."""
        if self.end:
            return "ended", None
        decision = decide_with(self.stack, verdict_for, cap)
        if decision.outcome is Outcome.CONTINUE:
            if self.steps <= 0:
                self.end = Outcome.YIELD.value
                return "no_step", decision
            self.steps -= 1
            self.stack = decision.stack
            return decision.rule, decision
        self.stack = decision.stack
        self.end = decision.outcome.value
        return decision.rule, decision

    def tick(self, verdicts: Sequence[Verdict], cap: int) -> str:
        n = len(self.stack)

        def by_list(index: int, layer: Layer) -> Verdict:
            k = n - 1 - index
            return verdicts[k] if k < len(verdicts) else DEFER

        rule, _ = self.tick_with(by_list, cap)
        return rule
