"""Regression tests named after the seed's (inference.md S10: eukhe-core durable::open::tests,
eukhe-daemon setting_switches::tests), on the production session, and the effort CLI."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from bend import effort as model
from eukhe import effort
from eukhe.cli import main

# The shipped qwen-3.8 rulebook ladder of S6.9 item 9: off (wire none), low, medium, xhigh.
QWEN_3_8 = {"off": "none", "minimal": None, "low": "low", "medium": "medium", "high": None, "xhigh": "xhigh"}


def test_open_settles_an_unset_thinking_level_on_the_clamped_default() -> None:
    # default xhigh is not offered by the default ladder: it clamps down to high.
    session = effort.ThinkingSession(effort.CatalogModel("m", True), stored=None, default="xhigh")
    assert session.open() == "high"
    assert session.stored == "high"
    # no default setting: medium, clamped to the first offered above (high) on this map.
    session = effort.ThinkingSession(effort.CatalogModel("m", True, {"medium": None, "low": None}))
    assert session.open() == "high"
    # a session model outside the catalog keeps the default as it is.
    session = effort.ThinkingSession(None, default="max")
    assert session.open() == "max"


def test_cycle_thinking_level_without_reasoning_answers_null() -> None:
    session = effort.ThinkingSession(effort.CatalogModel("plain", False, QWEN_3_8), stored="off")
    session.open()
    assert session.cycle(True) is None
    assert session.cycle(False) is None
    assert session.stored == "off"
    # a reasoning model offering off alone does not step either
    off_only = {level: (None if level != "off" else "none") for level in effort.LEVELS}
    assert effort.ThinkingSession(effort.CatalogModel("r", True, off_only), stored="off").cycle(True) is None


def test_steps_wrap_both_ways() -> None:
    session = effort.ThinkingSession(effort.CatalogModel("q", True, QWEN_3_8), stored="xhigh")
    session.open()
    assert session.cycle(True) == "off"
    assert session.cycle(False) == "xhigh"
    assert [session.cycle(True) for _ in range(4)] == ["off", "low", "medium", "xhigh"]


def test_unset_shows_default() -> None:
    session = effort.ThinkingSession(effort.CatalogModel("m", True), stored=None, default="low")
    assert session.shown == "low"
    assert session.sent == "off"  # unset sends off, and is never shown as off
    assert effort.ThinkingSession(effort.CatalogModel("m", True)).shown == "medium"


def test_custom_qwen_3_8_without_a_map_offers_its_family_ladder() -> None:
    chosen = model.chosen_map(None, tuple(QWEN_3_8.items()), reasoning=True, custom_provider=True)
    assert model.offered(model.Model(True, chosen)) == ("off", "low", "medium", "xhigh")
    # built-in providers keep catalog ladders: no family ladder, the default ladder applies
    builtin = model.chosen_map(None, tuple(QWEN_3_8.items()), reasoning=True, custom_provider=False)
    assert model.offered(model.Model(True, builtin)) == ("off", "minimal", "low", "medium", "high")


def test_a_wire_string_is_sent_as_is() -> None:
    qwen = effort.CatalogModel("q", True, QWEN_3_8)
    assert qwen.wire("off") == "none"
    assert qwen.wire("minimal") is None


def test_set_rejects_an_unknown_level() -> None:
    with pytest.raises(effort.EffortError, match="unknown thinking level 'ultra'"):
        effort.ThinkingSession(None).set("ultra")


def test_cli_answers_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["effort", "offered", "--map", json.dumps(QWEN_3_8), "--reasoning"]) == 0
    assert json.loads(capsys.readouterr().out) == ["off", "low", "medium", "xhigh"]
    assert main(["effort", "cycle", "--map", "{}", "--level", "high"]) == 0
    assert capsys.readouterr().out.strip() == "null"
    assert main(["effort", "cycle", "--map", "{}", "--reasoning", "--level", "off", "--backward"]) == 0
    assert json.loads(capsys.readouterr().out) == "high"


@pytest.mark.parametrize(
    ("argv", "names"),
    [
        (["effort", "clamp", "--map", "{not json", "--level", "low"], "not JSON"),
        (["effort", "clamp", "--map", "{}", "--level", "ultra"], "unknown thinking level 'ultra'"),
        (["effort", "offered", "--map", '{"huge": "x"}'], "unknown thinking level 'huge'"),
        (["effort", "offered", "--map", '{"low": 3}'], "wire string or null"),
    ],
)
def test_cli_bad_input_is_one_line_and_status_2(argv: list[str], names: str) -> None:
    done = subprocess.run([sys.executable, "-m", "eukhe", *argv], capture_output=True, text=True, check=False)
    assert done.returncode == 2
    assert names in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_every_bad_map_error_names_its_problem() -> None:
    # each refusal says what was wrong, as the CLI prints it on one line (status 2)
    with pytest.raises(effort.EffortError, match=r"^a thinking-level map is a JSON object, not list$"):
        effort.parse_map(["low"])
    with pytest.raises(effort.EffortError, match=r"^thinking level 'low': an entry is a wire string or null, not 3$"):
        effort.parse_map({"low": 3})
    with pytest.raises(effort.EffortError, match=r"^the map is not JSON: Expecting property name enclosed in double quotes at column 2$"):
        effort.parse_map_json("{not json")
    levels = "off, minimal, low, medium, high, xhigh, max"
    with pytest.raises(effort.EffortError, match=rf"^unknown thinking level 'ultra' \(levels: {levels}\)$"):
        effort.parse_level("ultra")


def test_cycle_steps_from_the_shown_level_of_an_unset_session() -> None:
    # S10 cycle 2: from the clamp of the current level; unset shows the default (session 4)
    default_ladder = effort.CatalogModel("m", True)
    assert effort.ThinkingSession(default_ladder, stored=None, default="low").cycle(True) == "medium"
    assert effort.ThinkingSession(default_ladder, stored=None).cycle(False) == "low"
    # the default clamps to the model before the step: xhigh is not offered, high is
    assert effort.ThinkingSession(default_ladder, stored=None, default="xhigh").cycle(True) == "off"


def test_a_switch_puts_the_session_on_the_new_model() -> None:
    qwen = effort.CatalogModel("q", True, QWEN_3_8)
    session = effort.ThinkingSession(effort.CatalogModel("m", True), stored="high")
    session.open()
    assert session.switch(qwen) == "xhigh"  # high is not offered by qwen: the first above
    assert session.model is qwen
    assert session.offer == ("off", "low", "medium", "xhigh")
    assert session.switch(None) == "xhigh"  # outside the catalog the level is kept
    assert session.model is None and session.offer is None


def test_a_map_read_as_json_is_the_map() -> None:
    # a thinkingLevelMap as models.json holds it (S10 ladder 1): level -> wire string or null
    assert effort.parse_map_json('{"off": "none", "minimal": null, "low": "lo"}') == {"off": "none", "minimal": None, "low": "lo"}


def test_sent_is_clamped_by_the_provider() -> None:
    # S10 session 3: the stored level, else off; each provider clamps before sending
    no_off = effort.CatalogModel("m", True, {"off": None})
    assert effort.ThinkingSession(no_off, stored=None).sent == "minimal"
    assert effort.ThinkingSession(effort.CatalogModel("m", True), stored="max").sent == "high"
    assert effort.ThinkingSession(None, stored="max").sent == "max"  # outside the catalog: as stored


def test_a_switch_settles_an_unset_level_on_the_default() -> None:
    # S10 session 1, 2: the current level of an unset session is the default; a switch clamps it
    session = effort.ThinkingSession(None, stored=None, default="low")
    assert session.switch(effort.CatalogModel("m", True)) == "low"
    assert effort.ThinkingSession(None, stored=None, default="xhigh").switch(effort.CatalogModel("m", True)) == "high"
