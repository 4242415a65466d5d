"""Helpers of the bug-class tests (tests/<area>/test_<area>_bug_classes.py): the defaults the seeds
state, read from the seeds' own text, and a record of the fsync calls a write makes.

The classes each area's tests cover: a value read from a settings file and then ignored; a
default in a table; the precedence of two sources of one fact; a durability call left out.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

SEEDS = Path(__file__).resolve().parents[2] / "shared" / "seeds"

# "directors.maxSteps, default 200", "directors.stackCap (default 8)", "memory.settleTimeoutMs
# (default 20 s)", "compaction.keepRecentTokens (eukhe default 40,000; ...)", "stt.enabled
# (default false)", "(defaultThinkingLevel, else medium)"
_STATED = re.compile(r"\b([a-z][A-Za-z]*(?:\.[a-z][A-Za-z]*)+),? \(?(?:eukhe )?default ([0-9][0-9,]*(?: s\b)?|[a-z]+)")
_ELSE = re.compile(r"\(([a-z][A-Za-z]*(?:\.[a-z][A-Za-z]*)*), else ([a-z]+)\)")


def _value(cvar: str, word: str) -> Any:
    if word in ("off", "false"):
        return False
    if word in ("on", "true"):
        return True
    if word[0].isdigit():
        seconds = word.endswith(" s")
        number = int(word.removesuffix(" s").replace(",", ""))
        return number * 1000 if seconds and cvar.endswith("Ms") else number
    return word


def seed_defaults() -> dict[str, Any]:
    """Every default a seed states in its text for a setting id, as a value (skips when the
    seeds are not beside the repository)."""
    if not SEEDS.is_dir():
        pytest.skip(f"the seeds are not at {SEEDS}")
    found: dict[str, Any] = {}
    for seed in sorted(SEEDS.glob("*.txt")):
        text = seed.read_text(encoding="utf-8")
        for pattern in (_STATED, _ELSE):
            for cvar, word in pattern.findall(text):
                value = _value(cvar, word)
                assert found.setdefault(cvar, value) == value, f"{seed.name}: {cvar} has two defaults"
    return found


class Fsyncs:
    """The paths of every os.fsync made while installed (the real call runs): a file's path as
    the descriptor names it when synced (a temporary file keeps its temporary name)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.paths: list[str] = []
        real = os.fsync

        def fsync(fd: Any) -> None:
            number = fd if isinstance(fd, int) else fd.fileno()
            real(number)
            self.paths.append(os.readlink(f"/proc/self/fd/{number}"))

        monkeypatch.setattr(os, "fsync", fsync)

    def of(self, path: Path) -> int:
        """How many fsyncs named ``path`` (a file or a directory)."""
        return self.paths.count(str(Path(path).resolve()))

    def written_whole(self, path: Path) -> bool:
        """Whether a temporary file for ``path`` (``.<name>.*.tmp`` beside it, the atomic
        writer's) was fsynced, and then the directory holding ``path``'s entry."""
        parent = Path(path).resolve().parent
        temp = re.compile(re.escape(str(parent / f".{Path(path).name}.")) + r".*\.tmp")
        at = [k for k, p in enumerate(self.paths) if temp.fullmatch(p)]
        return bool(at) and str(parent) in self.paths[at[-1] + 1 :]

    def under(self, directory: Path) -> list[str]:
        """The files (not the directory itself) synced inside ``directory``."""
        root = str(Path(directory).resolve())
        return [p for p in self.paths if os.path.dirname(p) == root]


def write_json(path: Path, document: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def table_default(cvar: str) -> Any:
    """The default production's table declares for ``cvar`` (fails when it declares none)."""
    from eukhe.settings.cvar_table import registry

    declared = registry().get(cvar)
    assert declared is not None, f"{cvar} is not declared"
    return declared.default
