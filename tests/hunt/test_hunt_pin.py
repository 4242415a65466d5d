"""`eukhe laws pin LAW`: a counterexample the hunt found (through a planted break) becomes an
explicit example in the law's file, which the law then runs first every time.

In a copy of this tree: a hunting process under the break fills a directory database; `eukhe
laws pin` writes the find into spec/laws/catalog_union.py; the law run alone under the ``laws``
profile (derandomized, no database) fails under the break and passes without it, running the
pinned examples besides its 300 generated ones.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from test_hunt_redis import BREAK, LAW, _checkout, _failed, _hunt

SCRIPT = (
    "from spec import breaks; breaks.install_from_env()\n"
    "from spec import profiles, registry, report; profiles.load()\n"
    "law = next(x for x in registry.load() if x.key == {law!r})\n"
    "result = report.run(law)\n"
    "print(result.status, result.evidence)\n"
)


def _run(checkout: Path, *argv: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *argv], cwd=checkout, env=env, capture_output=True, text=True, timeout=600, check=False
    )


def test_a_find_is_pinned_into_the_law_file_and_run_first(tmp_path: Path) -> None:
    checkout = _checkout(tmp_path / "tree")
    database = str(tmp_path / "db")
    hunted = _hunt(checkout, "fuzz", database)
    assert hunted.returncode == 1 and _failed(hunted), hunted.stdout[-3000:]

    base = {k: v for k, v in os.environ.items() if not k.startswith(("EUKHE_", "HYPOTHESIS_"))}
    base["PYTHONPATH"] = f"{checkout / 'impl'}{os.pathsep}{checkout}"
    pinned = _run(checkout, "-m", "eukhe", "laws", "pin", LAW, env=base | {"EUKHE_HUNT_DB": database})
    assert pinned.returncode == 0, pinned.stdout + pinned.stderr
    text = (checkout / "spec" / "laws" / "catalog_union.py").read_text(encoding="utf-8")
    assert "PINNED.setdefault(('catalog_union_bundled_gives', 0), [])" in text

    broken = _run(checkout, "-c", SCRIPT.format(law=LAW), env=base | {"EUKHE_BREAK": BREAK})
    assert broken.stdout.startswith("fail"), broken.stdout + broken.stderr[-2000:]
    whole = _run(checkout, "-c", SCRIPT.format(law=LAW), env=base)
    assert whole.stdout.startswith("pass"), whole.stdout + whole.stderr[-2000:]
    count = int(re.search(r"pinned (\d+) example", pinned.stdout).group(1))  # type: ignore[union-attr]
    printed = pinned.stdout.splitlines()[1:]  # each line pinned, indented, as the law file holds it
    assert len(printed) == count and all(line.startswith("  ") and line[2:] in text for line in printed), pinned.stdout
    assert f"hypothesis: {300 + count:,} examples (profile laws)" in whole.stdout, "the pinned examples run besides the 300"
