"""The law registry: every executable law with its seed name, area, section and strength.

A law is a zero-argument check that either raises (the law fails, the message says the
counterexample) or returns its evidence: a sentence saying what it covered
("4,374 maps x 7 levels", "2,000 examples", "z3: unsat"). The evidence helpers in
``spec.evidence`` build both at once.

Laws are registered by importing ``spec.laws.<area>``; ``spec.registry.load()`` imports every
area module that exists, so the report, pytest and ``eukhe laws`` see one and the same set.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spec.evidence import Evidence


class Strength(str, Enum):
    """How strong the evidence of a law is, strongest first.

    ``proved``: for every input, about the real function. ``proved-for-encoding``: a z3 proof
    about an encoding written in a law file whose equality with the real function is only
    bounded or sampled: shown apart, never counted as proved. ``bounded``: exactly computed on
    a stated finite part of the inputs. ``tested``: Hypothesis."""

    PROVED = "proved"
    PROVED_FOR_ENCODING = "proved-for-encoding"
    BOUNDED = "bounded"
    TESTED = "tested"


PROVED = Strength.PROVED
PROVED_FOR_ENCODING = Strength.PROVED_FOR_ENCODING
BOUNDED = Strength.BOUNDED
TESTED = Strength.TESTED
STRENGTHS = tuple(Strength)  # strongest first

Check = Callable[[], "Evidence"]


@dataclass(frozen=True)
class Law:
    area: str
    name: str
    section: str
    says: str
    strength: Strength
    check: Check
    derivation: str = ""

    @property
    def key(self) -> str:
        return f"{self.area}/{self.name}"

    def admit(self, evidence: object) -> Evidence:
        """The evidence the check returned, if it supports the label: a label stronger than the
        evidence (proved on an enumeration within a bound we chose) is refused."""
        from spec.evidence import Evidence, at_least

        if not isinstance(evidence, Evidence):
            raise StrengthError(f"law {self.key} returned {type(evidence).__name__}, not Evidence")
        if not evidence.sentence:
            raise StrengthError(f"law {self.key} returned no evidence")
        if not at_least(evidence.strength, self.strength):
            raise StrengthError(
                f"law {self.key} is labelled {self.strength.value} but its evidence is {evidence.strength.value}: "
                f"{evidence.sentence}"
            )
        if self.strength in (PROVED, PROVED_FOR_ENCODING) and all(p.lemma for p in evidence.proofs):
            raise StrengthError(
                f"law {self.key} is labelled {self.strength.value} but no proof of its evidence is about the code: {evidence.sentence}"
            )
        return evidence


class RegistryError(Exception):
    """A law registered twice, or registered with a bad name."""


class StrengthError(RegistryError):
    """A law labelled stronger than the evidence its check returned."""


_LAWS: dict[str, Law] = {}


def law(
    name: str,
    section: str,
    says: str,
    strength: Strength,
    *,
    area: str | None = None,
    derivation: str = "",
) -> Callable[[Check], Check]:
    """Register the decorated check as the law ``name``.

    The area defaults to the module's name (``spec.laws.effort`` registers area ``effort``).
    ``derivation`` says where a law the seed does not state in a table comes from.
    """

    def register(check: Check) -> Check:
        where = area or check.__module__.rsplit(".", 1)[-1]
        entry = Law(where, name, section, says, strength, check, derivation)
        if entry.key in _LAWS:
            raise RegistryError(f"law {entry.key} is registered twice")
        if not name or not name.replace("_", "").isalnum():
            raise RegistryError(f"law name {name!r} is not a seed-style identifier")
        _LAWS[entry.key] = entry
        return check

    return register


def load() -> list[Law]:
    """Import every area module under spec.laws and return the laws, in registration order."""
    import spec.laws as package

    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if not info.name.startswith("_"):
            importlib.import_module(f"spec.laws.{info.name}")
    return list(_LAWS.values())
