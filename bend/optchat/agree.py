"""The view's merge order against the rollback push (memory.md rule 20; laws push_agrees,
push_agrees_always, first_agrees_481_of_20001, first_leaves_push).

Every line weighs 1 and every node is built, so the byte budget is a line budget: the budget
at step ``t`` is the length of push's list after pushing ``0..t``. One step appends message
``t``'s line and fits the view to that budget (memory.md, the seed's proof: "Fit makes exactly
the carry's merge").
"""

from __future__ import annotations

from bend.optchat.node import Node
from bend.optchat.push import Push, push
from bend.optchat.view import Order, View, fit, grow, more_due


def every_node(node: Node) -> int:
    """Every node built, each line one unit."""
    return 1


def budget(entries: Push) -> int:
    """The fit budget: the length of push's list (rule 20)."""
    return len(entries)


def step(view: View, entries: Push, t: int, order: Order = more_due) -> tuple[View, Push]:
    """Message ``t`` arrives: push's list takes the state ``t``; the view appends the line and
    fits to push's length."""
    after = push(entries, t)
    grown = grow(view, (0, t), 1)
    fitted, _merges = fit(grown, t + 1, every_node, budget(after), order)
    return fitted, after


def lines_of(view: View) -> tuple[tuple[int, int], ...]:
    """The view as ``(first, count)`` ranges, oldest first."""
    return tuple((node[1] << node[0], 1 << node[0]) for node, _size in view)
