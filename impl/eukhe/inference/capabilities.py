"""Provider operations beyond chat (inference.md S6.7): the eight capabilities.

A capability directive names the endpoint dialect of the operation, or false. ``capabilities_of``
answers all eight for a provider; ``require`` raises the typed ``Unsupported`` before any auth
or request is made (callers that want the local token estimate ask for it explicitly: a missing
operation never falls to another provider).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from eukhe.inference.quirks import CAPABILITIES, ModelKey, Rulebook

T = TypeVar("T")


class Unsupported(Exception):
    """Unsupported { capability, provider }."""

    def __init__(self, capability: str, provider: str) -> None:
        super().__init__(f"Unsupported {{ capability: {capability}, provider: {provider} }}")
        self.capability = capability
        self.provider = provider


@dataclass(frozen=True)
class Capability:
    name: str
    dialect: str | None  # None: unsupported (false, or no rule)
    layer: str


def capabilities_of(book: Rulebook, key: ModelKey) -> list[Capability]:
    out = []
    for name in CAPABILITIES:
        answer = book.query(key, name)
        dialect = answer.value if answer.known and isinstance(answer.value, str) else None
        out.append(Capability(name, dialect, answer.layer if answer.known else "unknown"))
    return out


def require(book: Rulebook, key: ModelKey, capability: str) -> str:
    """The dialect of ``capability`` for the provider, or Unsupported."""
    if capability not in CAPABILITIES:
        raise ValueError(f"unknown capability {capability!r} (capabilities: {', '.join(CAPABILITIES)})")
    answer = book.query(key, capability)
    if not answer.known or not isinstance(answer.value, str):
        raise Unsupported(capability, key.provider)
    return answer.value


def perform(book: Rulebook, key: ModelKey, capability: str, authenticate: Callable[[], None], call: Callable[[str], T]) -> T:
    """Run an operation: support is checked first, so Unsupported comes before auth or request."""
    dialect = require(book, key, capability)
    authenticate()
    return call(dialect)
