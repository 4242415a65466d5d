"""The bridge that ties each law area to production: scenario count, and which rule cases and
input classes the committed scenarios reach.

Reaching is read from every scenario file (seconds for the memory bridges), so the result is
kept in build/report/bridges.json under a key of the scenario digests and the bridge's source;
a report run after no change to either reads it back.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from dataclasses import asdict, dataclass
from pathlib import Path

# Law areas whose bridge has another name; an area absent here and from bridge/ has none.
BRIDGE_OF: dict[str, str] = {"chat_store": "optchat_store"}
CLASS_MARK = "# input classes"


@dataclass(frozen=True)
class BridgeView:
    area: str
    scenarios: int
    rules: list[str]
    rules_reached: list[str]
    classes: list[str]
    classes_reached: list[str]

    @property
    def summary(self) -> str:
        text = f"{self.scenarios} scenarios; rule cases {len(self.rules_reached)} of {len(self.rules)}"
        if self.classes:
            text += f"; input classes {len(self.classes_reached)} of {len(self.classes)}"
        return text


def _split(area: str, cases: frozenset[str]) -> tuple[list[str], list[str]]:
    """Rule cases and input classes: the bridge's CASES list marks its input classes with a
    comment; a case built by a comprehension after the mark is a class too."""
    found = importlib.util.find_spec(f"bridge.{area}")
    source = Path(found.origin).read_text(encoding="utf-8") if found and found.origin else ""
    start = source.find("CASES = frozenset(")
    if start < 0:
        return sorted(cases), []
    ends = [x for x in (source.find("\n)", start), source.find("})", start)) if x >= 0]
    end = min(ends) if ends else len(source)
    mark = source.find(CLASS_MARK, start, end)
    if mark < 0:
        return sorted(cases), []
    rules: list[str] = []
    classes: list[str] = []
    for case in sorted(cases):
        at = source.find(f'"{case}"', start)
        (classes if at < 0 or at > mark else rules).append(case)
    return rules, classes


def _key(area: str) -> str:
    from bridge import core

    digest = hashlib.sha256()
    digests = core.SCENARIOS / area / core.DIGESTS
    if digests.exists():
        digest.update(digests.read_bytes())
    found = importlib.util.find_spec(f"bridge.{area}")
    if found and found.origin:
        digest.update(Path(found.origin).read_bytes())
    return digest.hexdigest()


def views(cache: Path, law_areas: set[str] | None = None) -> dict[str, BridgeView]:
    """Every bridge's view (only those of ``law_areas`` when given), by bridge area."""
    from bridge import core

    kept: dict[str, dict[str, object]] = json.loads(cache.read_text(encoding="utf-8")) if cache.exists() else {}
    out: dict[str, BridgeView] = {}
    fresh: dict[str, dict[str, object]] = {}
    wanted = None if law_areas is None else {BRIDGE_OF.get(a, a) for a in law_areas}
    for b in core.bridges():
        if wanted is not None and b.area not in wanted:
            if b.area in kept:
                fresh[b.area] = kept[b.area]
            continue
        key = _key(b.area)
        entry = kept.get(b.area)
        if entry and entry.get("key") == key:
            view = BridgeView(**entry["view"])  # type: ignore[arg-type]
        else:
            reached = core.coverage(b)
            rules, classes = _split(b.area, b.cases)
            scenarios = len(list(b.directory.glob("*.jsonl")))
            view = BridgeView(
                b.area, scenarios, rules, [c for c in rules if c in reached], classes, [c for c in classes if c in reached]
            )
        out[b.area] = view
        fresh[b.area] = {"key": key, "view": asdict(view)}
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(fresh, indent=1) + "\n", encoding="utf-8")
    return out


def of(law_area: str, found: dict[str, BridgeView]) -> BridgeView | None:
    return found.get(BRIDGE_OF.get(law_area, law_area))
