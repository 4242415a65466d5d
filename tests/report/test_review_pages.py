"""The review report's pages, read as files: what each law box holds, the links, the seeds'
anchors, the counterexample laid out with its replay command, and laws.json's shape kept."""

from __future__ import annotations

import json
import re
from pathlib import Path

from review_support import FAILING

from spec.review import pages, seeds


def test_the_index_links_every_area_and_law(built: Path) -> None:
    index = (built / "index.html").read_text(encoding="utf-8")
    for area in ("effort", "director"):
        assert f"href='area-{area}.html'" in index
        assert (built / f"area-{area}.html").exists()
    assert "area-effort.html#law-effort_clamp_offered" in index
    assert "data-key='strength' data-value='proved'" in index  # the filters
    assert "<img src='plots/sawtooth.png'" in index and (built / "plots" / "sawtooth.png").stat().st_size > 1000
    assert "make bench" in index  # no bench.json here: the report says how to get the curve


def test_a_law_box_links_its_source_model_production_and_seed(built: Path) -> None:
    page = (built / "area-effort.html").read_text(encoding="utf-8")
    box = page[page.index("id='law-effort_clamp_keeps'") :]
    box = box[: box.index("</details><details class='law") if "</details><details class='law" in box else len(box)]
    assert "An offered level clamps to itself." in box
    assert "seed asks <b>universal</b>" in box
    source = re.search(r"href='(src/spec\.laws\.effort\.html#L-\d+)'", box)
    assert source, "the property links to its line in the law file"
    target = (built / source.group(1).split("#")[0]).read_text(encoding="utf-8")
    assert f"id=\"{source.group(1).split('#')[1]}\"" in target
    assert "class='ref bend' href='src/bend.effort.html#L-" in box
    assert "class='ref eukhe' href='src/eukhe.effort.html#L-" in box
    assert "<details class='source'>" in box and "class=\"highlight\"" in box  # pygments, folded
    assert "bridge/effort.py: 300 scenarios; rule cases" in box


def test_a_failed_law_shows_its_counterexample_laid_out_and_the_replay_command(built: Path) -> None:
    page = (built / "area-effort.html").read_text(encoding="utf-8")
    box = page[page.index("id='law-effort_clamp_offered'") :]
    assert "class='counterexample'" in box
    laid = re.search(r"<pre class='counterexample'>(.*?)</pre>", box, re.S)
    assert laid and "\n" in laid.group(1), "the tuple is laid out on lines of its own"
    assert pages.e(pages.replay_command(FAILING)) in box
    assert f"test_laws.py::test_law[{FAILING}]" in pages.replay_command(FAILING)
    assert "caught breaks</dt><dd class='f-caught-breaks'>clamp_above_first" in box


def test_the_seeds_are_copied_with_an_anchor_per_section(built: Path) -> None:
    if not seeds.load():
        import pytest

        pytest.skip("the seed texts are not on this machine (EUKHE_SEEDS or ../shared/seeds)")
    control = (built / "seeds" / "control.html").read_text(encoding="utf-8")
    assert "id='S4.1'" in control and "id='S5.8'" in control
    page = (built / "area-director.html").read_text(encoding="utf-8")
    assert "href='seeds/control.html#S5.1'" in page


def test_a_seed_section_resolves_to_the_nearest_anchor() -> None:
    seed = seeds.Seed.parse(
        "t",
        "S4. Settings #\n\n  1. one\n  2. two\nCommand Does\n  1. three\n\nS10. Depth #\n\nCycle (both ways):\n\n  1. a\n  2. b\n"
        "§3 The view #\n\n37 A rule row\n  • D9. A difference\n",
    )
    assert seed.resolve("S4.2") == "S4.2"
    assert seed.resolve("S4.3") == "S4.3"  # numbering runs on across the section's lists
    assert seed.resolve("S4.9") == "S4"
    assert seed.resolve("S10 cycle 2") == "S10-cycle-2"
    assert seed.resolve("memory rule 37 / D9") == "rule-37"
    assert seed.resolve("memory §3.2") == "§3"
    assert seed.resolve("memory D9") == "D9"


def test_pretty_lays_out_literals_and_keeps_plain_text() -> None:
    assert pages.pretty("no literal here") == "no literal here"
    laid = pages.pretty("fails for ({'a': 1, 'b': [1, 2, 3]}, 'a long enough string to be laid out', 12345)")
    assert laid.splitlines()[0] == "fails for"
    assert "'a long enough string to be laid out'" in laid


def test_laws_json_keeps_its_shape(built: Path) -> None:
    document = json.loads((built.parent / "laws.json").read_text(encoding="utf-8"))
    assert {"laws", "summary", "profile", "built_areas", "areas", "coverage", "mutation"} <= set(document)
    row = document["laws"][0]
    assert {"area", "name", "section", "strength", "status", "evidence", "says", "origin", "seconds", "seed_strength", "production"} <= set(row)
