"""Two hunting processes in two checkouts share one Redis: what one finds, the other replays
without searching.

A local redis-server (Debian's package) on a free loopback port; two copies of this tree in a
temporary directory. In the first, a planted break (EUKHE_BREAK=catalog_union_fills_across_apis,
the spec/breaks mechanism) and the ``fuzz`` profile: Hypothesis searches the catalog_union
laws' properties, fails, and saves the shrunk counterexample to Redis. In the second, the same
break and the ``replay`` profile, which generates nothing (phases explicit and reuse only):
the same tests fail with the same counterexample, read from Redis. The same replay against an
empty database passes, so the failure came from the shared find and not from a search.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BREAK = "catalog_union_fills_across_apis"
LAW = "catalog_union/catalog_union_bundled_gives"
COPIED = ("impl", "bend", "spec", "bridge", "conftest.py", "pyproject.toml", "tests/hunt")


def _checkout(where: Path) -> Path:
    for part in COPIED:
        source = ROOT / part
        if source.is_dir():
            shutil.copytree(source, where / part, ignore=shutil.ignore_patterns("__pycache__", "*.so", "build"))
        else:
            where.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, where / part)
    return where


def _hunt(checkout: Path, profile: str, database: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EUKHE_", "HYPOTHESIS_"))}
    env |= {
        "PYTHONPATH": f"{checkout / 'impl'}{os.pathsep}{checkout}",
        "HYPOTHESIS_PROFILE": profile,
        "EUKHE_HUNT_DB": database,
        "EUKHE_BREAK": BREAK,
        "EUKHE_HUNT_LAWS": LAW,  # one law whose property the break fails: the search ends at its first find
    }
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider", "tests/hunt/test_hunt_targets.py"],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def _failed(done: subprocess.CompletedProcess[str]) -> set[str]:
    return set(re.findall(r"^FAILED \S+::(\w+)", done.stdout, re.M))


def _falsifying(done: subprocess.CompletedProcess[str]) -> list[str]:
    return sorted(re.findall(r"^Falsifying example: .*?(?=^\S|\Z)", done.stdout, re.M | re.S))


def test_a_find_of_one_hunter_is_replayed_by_the_other_without_searching(redis_url: str, tmp_path: Path) -> None:
    import redis

    first, second = _checkout(tmp_path / "first"), _checkout(tmp_path / "second")
    hunted = _hunt(first, "fuzz", redis_url)
    found = _failed(hunted)
    assert hunted.returncode == 1 and found, f"the planted break was not found:\n{hunted.stdout[-3000:]}"
    assert redis.Redis.from_url(redis_url).keys(b"eukhe-hunt:*"), "the find is in Redis"

    replayed = _hunt(second, "replay", redis_url)
    assert replayed.returncode == 1, replayed.stdout[-3000:]
    assert _failed(replayed) == found, "the other checkout fails the same tests"
    assert _falsifying(replayed) == _falsifying(hunted), "with the same counterexamples"

    alone = _hunt(second, "replay", str(tmp_path / "empty-db"))
    assert alone.returncode == 0, f"without the shared database nothing is searched, so nothing fails:\n{alone.stdout[-2000:]}"
