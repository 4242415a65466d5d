"""The seed documents as HTML pages with an anchor per section, and a law's section resolved to
one of those anchors.

The seeds live outside the repository (``../shared/seeds``, or ``EUKHE_SEEDS``); the report
copies them into build/report/seeds/. Anchors: a heading line (``S4. Settings ... #``) is its
label (``S4``, ``S4b``, ``S5.8``, ``§3``, or the heading's words for ``S6 the built-in model
catalog``); a numbered item of a section is ``S4.1``; a numbered item under a lead word of a
section (``Cycle (...)``, then ``  2. ...``) is ``S10-cycle-2``; a rule row of memory.md is
``rule-37``; a fix or a deliberate difference is ``F1`` or ``D5``.
"""

from __future__ import annotations

import html
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# The seed files by their names in the design (DESIGN.md): the file and the page it becomes.
DOCUMENTS: dict[str, str] = {
    "control": "000_f7323c157e80a40d.txt",
    "memory": "003_bdb197ba90f97028.txt",
    "inference": "004_cf1da0cad29d7f64.txt",
}


def directory() -> Path | None:
    """Where the seed texts are: EUKHE_SEEDS, else shared/seeds beside the checkout or beside
    one of its parents (a worktree under /work/wt finds /work/shared/seeds)."""
    nearby = [str(parent / "shared" / "seeds") for parent in ROOT.parents]
    for candidate in (os.environ.get("EUKHE_SEEDS"), *nearby):
        if candidate and Path(candidate, DOCUMENTS["control"]).exists():
            return Path(candidate)
    return None


def document_of(section: str) -> str:
    """The seed document a law's section is in: S4/S5 control, S6/S9/S10 inference, memory."""
    head = section.strip().split(" ")[0] if section.strip() else ""
    if head == "memory" or head.startswith("§"):
        return "memory"
    if head.startswith(("S4", "S5")):
        return "control"
    if head.startswith(("S6", "S9", "S10")):
        return "inference"
    return ""


_HEADING = re.compile(r"^(?P<text>\S.*?) #$")
_LABEL = re.compile(r"^(?P<label>S\d+[a-z]?(?:\.\d+)*)\.?(?:\s|$)|^(?P<para>§\d+)(?:\s|$)")
_ITEM = re.compile(r"^\s+(?P<n>\d+)\.\s")
_RULE = re.compile(r"^(?P<n>\d+) \S")
_NOTE = re.compile(r"^\s*(?:•\s*)?(?P<id>[DF]\d+)\.\s")
_LEAD = re.compile(r"^(?P<word>[A-Z][a-z]+)\b[^#]*$")


def slug(text: str) -> str:
    return re.sub(r"[^\w§.]+", "-", text.strip()).strip("-")


@dataclass
class Seed:
    name: str
    lines: list[str]
    anchors: dict[str, int] = field(default_factory=dict)  # anchor -> line index (first wins)
    headings: list[tuple[str, str]] = field(default_factory=list)  # (anchor, heading text)

    @classmethod
    def parse(cls, name: str, text: str) -> Seed:
        seed = cls(name, text.splitlines())
        section, lead, last, offset = "", "", 0, 0
        for index, line in enumerate(seed.lines):
            heading = _HEADING.match(line)
            if heading:
                words = heading["text"]
                label = _LABEL.match(words)
                section = (label["label"] or label["para"]) if label else ""
                if label and label["label"] and words[label.end():].strip() and not words.startswith(f"{section}."):
                    section = slug(words)  # "S6 tool-call argument repair": the heading's words
                anchor = section or slug(words)
                seed.anchors[anchor] = index  # a heading wins over a numbered item of the same label
                seed.headings.append((anchor, words))
                lead, last, offset = "", 0, 0
                continue
            note = _NOTE.match(line)
            if note:
                seed._add(note["id"], index)
                continue
            item = _ITEM.match(line)
            if item and section:
                number = int(item["n"])
                if number <= last:  # the numbering of a section runs on across its lists (S4.4 is the 1. after the table)
                    offset += last
                last = number
                seed._add(f"{section}.{offset + number}", index)
                if lead:
                    seed._add(f"{section}-{lead}-{number}", index)
                continue
            rule = _RULE.match(line)
            if rule and section.startswith("§"):
                seed._add(f"rule-{rule['n']}", index)
                continue
            lead_word = _LEAD.match(line)
            if lead_word and section and line.strip():
                lead = lead_word["word"].lower()
                seed._add(f"{section}-{lead}", index)
            for mark in re.findall(r"\(([A-Z]\d+)[;)]", line):  # "Laws: ... (C1; model ...)"
                seed._add(mark, index)
        return seed

    def _add(self, anchor: str, index: int) -> None:
        self.anchors.setdefault(anchor, index)

    def resolve(self, section: str) -> str:
        """The anchor of a law's section ('S10 cycle 2', 'memory rule 37 / D9', 'S4b.3'), the
        nearest one that exists; '' when none does."""
        words = section.replace("memory", "", 1).replace("/", " ").replace(",", " ").split()
        if not words:
            return ""
        first = words[0]
        candidates: list[str] = []
        if first == "rule" and len(words) > 1:
            candidates.append(f"rule-{words[1]}")
        if first.startswith("§"):
            candidates += [first, first.split(".")[0]]
        if len(words) >= 3 and words[2].split("-")[0].isdigit():
            candidates.append(f"{first}-{words[1].lower()}-{words[2].split('-')[0]}")
        if len(words) >= 2:
            candidates.append(f"{first}-{words[1].lower()}")
        candidates.append(first)
        parts = first.split(".")
        candidates += [".".join(parts[:n]) for n in range(len(parts) - 1, 0, -1)]
        if len(words) >= 2:  # "S6 models.json": the heading that starts so; "S6 catalog C1": the mark C1
            candidates.insert(0, words[-1]) if first.startswith("S") and re.fullmatch(r"[A-Z]\d+", words[-1]) else None
            for anchor, _ in self.headings:
                if anchor.startswith(slug(f"{first} {words[1]}")):
                    candidates.insert(0, anchor)
        for candidate in candidates:
            if candidate in self.anchors:
                return candidate
        return ""

    def page(self) -> str:
        """The seed as one HTML page: each anchored line carries its id."""
        by_line: dict[int, list[str]] = {}
        for anchor, index in self.anchors.items():
            by_line.setdefault(index, []).append(anchor)
        body = []
        for index, line in enumerate(self.lines):
            ids = by_line.get(index, [])
            marks = "".join(f"<span class='anchor' id='{html.escape(a, quote=True)}'></span>" for a in ids[1:])
            attr = f" id='{html.escape(ids[0], quote=True)}'" if ids else ""
            text = html.escape(line)
            if _HEADING.match(line):
                body.append(f"<h2{attr}>{marks}{text[:-2]}</h2>")
            elif line.strip():
                body.append(f"<p{attr}>{marks}{text}</p>")
        return (
            "<!doctype html><meta charset='utf-8'>"
            f"<title>{html.escape(self.name)} (seed)</title><link rel='stylesheet' href='../style.css'>\n"
            f"<p class='crumbs'><a href='../index.html'>report</a> / seed {html.escape(self.name)}</p>\n"
            + "\n".join(body)
            + "\n"
        )


def load() -> dict[str, Seed]:
    """Every seed document that is on this machine, parsed."""
    where = directory()
    if where is None:
        return {}
    return {name: Seed.parse(name, (where / file).read_text(encoding="utf-8")) for name, file in DOCUMENTS.items()}


def link(seeds: dict[str, Seed], section: str) -> str:
    """The report-relative address of a law's section ('seeds/control.html#S4.1'), or ''."""
    name = document_of(section)
    if name not in seeds:
        return ""
    anchor = seeds[name].resolve(section)
    return f"seeds/{name}.html" + (f"#{anchor}" if anchor else "")
