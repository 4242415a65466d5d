"""The manifest: every law of every seed table (spec/manifest.tsv, a copy of ../shared/laws.tsv),
and which areas are built.

A row whose name ends in ``*`` stands for a family the area names itself (``infer_entry_*``):
every registered law of the area with that prefix belongs to it, and a built area with none
is missing the family. A law of a pending area shows as pending until the area is built; a
missing or failing law of a built area fails ``make laws``.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

# Areas whose laws must all be present and pass. Every other area of the manifest is pending.
BUILT: frozenset[str] = frozenset(
    {"effort", "cvar", "config", "director", "progress", "optchat", "compactor", "infer", "catalog_union", "default_model", "tiny"}
)

# Laws of a built area that a later part of the work builds (name or family row, mapped to the
# part that brings them): they show as pending, not missing, until that part is built.
LATER: dict[str, dict[str, str]] = {}


def is_built(area: str, name: str) -> bool:
    """True when the law ``name`` of ``area`` must exist and pass now."""
    return area in BUILT and name not in LATER.get(area, {})


@dataclass(frozen=True)
class Entry:
    area: str
    name: str
    section: str
    seed_strength: str
    origin: str

    @property
    def is_family(self) -> bool:
        return self.name.endswith("*")

    @property
    def prefix(self) -> str:
        return self.name.rstrip("*")

    @property
    def derived(self) -> bool:
        return self.origin.startswith("derive")

    def covers(self, area: str, name: str) -> bool:
        if area != self.area:
            return False
        return name.startswith(self.prefix) if self.is_family else name == self.name


def parse(text: str) -> list[Entry]:
    entries = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 5:
            raise ValueError(f"manifest line {number}: expected 5 tab-separated fields, got {len(fields)}")
        entries.append(Entry(*fields))
    return entries


def load() -> list[Entry]:
    return parse(resources.files("spec").joinpath("manifest.tsv").read_text(encoding="utf-8"))


def areas(entries: list[Entry]) -> list[str]:
    return list(dict.fromkeys(e.area for e in entries))


def unproved() -> dict[tuple[str, str], str]:
    """Why each universal law that is not proved is not (spec/unproved.tsv): (area, law) -> reason."""
    reasons: dict[tuple[str, str], str] = {}
    text = resources.files("spec").joinpath("unproved.tsv").read_text(encoding="utf-8")
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 3 or not fields[2].strip():
            raise ValueError(f"unproved.tsv line {number}: expected area, law and a reason, tab-separated")
        if (fields[0], fields[1]) in reasons:
            raise ValueError(f"unproved.tsv line {number}: {fields[0]}/{fields[1]} twice")
        reasons[(fields[0], fields[1])] = fields[2]
    return reasons

