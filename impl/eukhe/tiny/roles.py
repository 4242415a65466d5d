"""Roles (S9 roles 1-3): each role names a chain; the first available model wins.

``chain`` and ``pick`` run as the model (the seed: "pick runs as the compiled model"): they are
``bend.tiny``'s functions themselves, with no copy here. This module adds what the model
leaves to the caller: the availability of each candidate and the typed Unavailable.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from bend.tiny import chain, pick, role_models

__all__ = ["Unavailable", "chain", "choose", "pick", "role_models"]


class Unavailable(Exception):
    """No model of the role's chain is available: names the role and the chain."""

    def __init__(self, role: str, candidates: Sequence[str]) -> None:
        self.role = role
        self.candidates = tuple(candidates)
        super().__init__(f"no model available for role {role}: chain [{', '.join(candidates)}]")


def choose(role: str, candidates: Sequence[str], available: Callable[[str], bool]) -> str:
    """The first available candidate of ``role``'s chain, or Unavailable."""
    found = pick(tuple(candidates), frozenset(c for c in candidates if available(c)))
    if found is None:
        raise Unavailable(role, candidates)
    return found
