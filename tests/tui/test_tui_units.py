"""The terminal UI's pure parts: the slash commands' plans and completion, the status line, and
key presses through binds.cfg (control.md S4.5), on real binds.cfg files in a temp agent dir."""

from __future__ import annotations

from pathlib import Path

import pytest

from eukhe.agent import protocol as p
from eukhe.tui import commands, keys
from eukhe.tui.picker import label
from eukhe.tui.status import Status, line, tokens
from eukhe.tui.transcript import one_line


def test_every_slash_command_has_a_plan() -> None:
    for name in commands.COMMANDS:
        planned = commands.plan(f"{name} x")
        assert not (isinstance(planned, commands.Refuse) and "unknown" in planned.message), name


@pytest.mark.parametrize(
    ("typed", "sent"),
    [
        ("/set retry.enabled false", p.cvar_request("set retry.enabled false")),
        ("/set retry.enabled false --global", p.cvar_request("set retry.enabled false", True)),
        ("/toggle --global retry.enabled", p.cvar_request("toggle retry.enabled", True)),
        ('/set defaultModel "a  b"', p.cvar_request('set defaultModel "a  b"')),  # a quoted value keeps its spaces
        ('/set --global defaultModel "a  b"', p.cvar_request('set defaultModel "a  b"', True)),
        ('/set defaultModel "a  b"  --global', p.cvar_request('set defaultModel "a  b"', True)),
        ("/set defaultModel --globalx", p.cvar_request("set defaultModel --globalx")),  # no flag: a word of its own
        ('/alias go "toggle retry.enabled"', p.cvar_request('alias go "toggle retry.enabled"')),
        ("/cvar set a 1; toggle b", p.cvar_request("set a 1; toggle b")),
        ("/cvar save", p.CvarSaveRequest()),
        ("/remind run the tests", p.CommandRequest(line="/remind run the tests")),
        ("/force read --tries 2", p.CommandRequest(line="/force read --tries 2")),
        ("/agent reviewer read a.txt", p.CommandRequest(line="/agent reviewer read a.txt")),
        ("/effort", p.CommandRequest(line="/effort")),
        ("/effort high", p.CommandRequest(line="/effort high")),
        ("/model loop/loop-model", p.CommandRequest(line="/model loop/loop-model")),
        ("/tier flex", p.cvar_request("set serviceTier flex")),
        ("/rewind 3", p.CommandRequest(line="/rewind 3")),
    ],
)
def test_session_commands_are_sent_as_the_protocols_requests(typed: str, sent: p.Request) -> None:
    assert commands.plan(typed) == commands.Send(sent)


def test_client_commands_and_refusals() -> None:
    assert commands.plan("/model") == commands.Client("picker")
    assert commands.plan("/reload") == commands.Client("reload")
    assert commands.plan("/quit") == commands.Client("quit")
    assert commands.plan("/help") == commands.Client("help")
    assert commands.plan("/tier") == commands.Client("tier_shown")
    assert commands.plan("/new") == commands.Client("new")
    assert commands.plan("/fork") == commands.Client("fork")
    assert commands.plan("/fork 12") == commands.Client("fork", 12)
    assert isinstance(commands.plan("/fork twelve"), commands.Refuse)  # an entry id is a whole number
    assert commands.plan("/fork " + "9" * 30) == commands.Client("fork", int("9" * 30))  # of at most 30 digits
    assert isinstance(commands.plan("/fork " + "9" * 31), commands.Refuse)
    assert isinstance(commands.plan("/new s2"), commands.Refuse)  # a new session takes no argument
    assert isinstance(commands.plan("/rewind"), commands.Refuse)  # a rewind needs its entry
    assert isinstance(commands.plan("/tier fast"), commands.Refuse)
    assert isinstance(commands.plan("/agent reviewer"), commands.Refuse)  # a name and no task
    assert isinstance(commands.plan("/remind"), commands.Refuse)  # a reminder needs its text
    refused = commands.plan("/mod x")
    assert isinstance(refused, commands.Refuse) and "/model" in refused.message


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        ("/tier fast", "/tier fast: the tiers are auto, default, flex, priority"),
        ("/fork twelve", "/fork twelve: an entry id is a whole number (/fork [ENTRY]: a new session from this one up to ENTRY (default: the head), and switch to it)"),
        ("/new s2", "/new: a new empty session, and switch to it"),
        ("/rewind", "/rewind ENTRY: move the head of the session to ENTRY (nothing is deleted)"),
        ("/remind", "/remind TEXT: a reminder on the Director stack (S5.7)"),
        ("/bogus", "unknown command /bogus: /help lists the commands"),
    ],
)
def test_a_refusal_says_what_the_command_takes(typed: str, message: str) -> None:
    assert commands.plan(typed) == commands.Refuse(message)


def test_completion_lists_what_a_prefix_can_become() -> None:
    assert commands.complete("/re") == ["/remind", "/rewind", "/reload"]
    assert commands.complete("/q") == ["/quit"]
    assert commands.complete("/quit now") == [] and commands.complete("hello") == [] and commands.complete("") == []
    assert all(name.startswith("/") and name == name.strip() and len(name.split()) == 1 for name in commands.COMMANDS)  # a name is one word


def test_the_status_line_shows_model_level_tier_mem_and_the_goal() -> None:
    status = Status(model="loop/m", thinking="high", tier="flex", mem_used=12_300, goal={"status": "active"}, stack=["autonomous", "goal", "reminder"], connected=True)
    assert line(status) == "model loop/m | thinking high | tier flex | mem 12.3K/128K | goal active | autonomous | directors reminder"
    assert line(Status(connected=True)) == "no model: /model"
    assert line(Status()) == "not connected | no model: /model"
    assert line(Status(goal={"text": "ship it"}, connected=True)) == "no model: /model | goal ?"  # a goal with no status
    assert tokens(128_000) == "128K" and tokens(999) == "999" and tokens(1_500_000) == "1.5M"


def test_a_count_is_shown_in_three_digits_and_the_next_unit_once_they_round_to_1000() -> None:
    shown = {n: tokens(n) for n in (999, 1000, 1500, 2049, 999_499, 999_500, 999_999, 1_000_000, 999_999_999, 12_345_678_901)}
    assert shown == {
        999: "999", 1000: "1K", 1500: "1.5K", 2049: "2.05K", 999_499: "999K", 999_500: "1M", 999_999: "1M",
        1_000_000: "1M", 999_999_999: "1G", 12_345_678_901: "12.3G",
    }  # fmt: skip


def test_the_status_line_puts_a_phase_first_and_autonomous_from_its_switch() -> None:
    """The line's parts (a real take's phase: test_tui_dictation's
    test_the_dictation_phase_leads_the_line)."""
    status = Status(model="loop/m", thinking="off", tier="auto", autonomous=True, connected=True)
    assert line(status) == "model loop/m | thinking off | tier auto | autonomous"
    for phase in ("REC", "STT"):
        status.dictation = phase  # type: ignore[assignment]
        assert line(status).startswith(f"[{phase}] | model loop/m")


def test_the_first_bind_wins_and_an_empty_bind_turns_a_default_off(tmp_path: Path) -> None:
    (tmp_path / "binds.cfg").write_text('bind ctrl+l "toggle retry.enabled"\nbind ctrl+l "action app.quit"\nbind ctrl+t ""\n', encoding="utf-8")
    bound = keys.load(tmp_path)
    assert bound.warnings == []
    assert bound.press("ctrl+l") == keys.Pressed("toggle retry.enabled", ())  # the user's bind, before the default
    assert bound.press("ctrl+t") == keys.Pressed("", ())  # turned off: runs nothing
    assert bound.press("ctrl+c") == keys.Pressed("", ("app.interrupt", "editor.clear"))  # a default
    assert bound.press("x") is None  # no bind: the key goes to the draft


def test_a_press_sends_session_commands_and_runs_actions_in_the_client(tmp_path: Path) -> None:
    (tmp_path / "binds.cfg").write_text('bind f5 "set serviceTier flex; action app.tools.expand; toggle retry.enabled"\nbind f6 "flip; action app.quit"\n', encoding="utf-8")
    bound = keys.load(tmp_path)
    assert bound.press("f5") == keys.Pressed("set serviceTier flex; toggle retry.enabled", ("app.tools.expand",))
    assert bound.press("f6") == keys.Pressed("flip", ("app.quit",), aliased=True)  # the session expands its alias


def test_binds_cfg_warnings_are_kept_for_startup_and_reload(tmp_path: Path) -> None:
    (tmp_path / "binds.cfg").write_text('set a 1\nbind f5 "toggle retry.enabled"\n', encoding="utf-8")
    bound = keys.load(tmp_path)
    assert len(bound.warnings) == 1 and "binds.cfg:1" in bound.warnings[0]
    assert bound.press("f5") == keys.Pressed("toggle retry.enabled", ())


def test_binds_cfg_is_written_once_from_keybindings_json(tmp_path: Path) -> None:
    (tmp_path / "keybindings.json").write_text('{"app.quit": ["f10"], "app.tools.expand": "f10"}', encoding="utf-8")
    assert keys.load(tmp_path).press("f10") == keys.Pressed("", ("app.quit", "app.tools.expand"))
    assert (tmp_path / "binds.cfg").read_text(encoding="utf-8") == 'bind f10 "action app.quit; action app.tools.expand"\n'


def test_the_picker_shows_each_models_levels_and_its_tiers_beyond_default() -> None:
    entry = p.CatalogEntry(
        provider="openrouter", id="m", name="M", api="openai-completions", reasoning=True, context_window=128_000, max_tokens=8_000,
        thinking_levels=["off", "high"], source="catalog", service_tiers=["default", "flex", "priority"],
    )  # fmt: skip
    assert label(entry, p.ModelRef(provider="openrouter", id="m")) == "* openrouter/m  [off, high]  128K ctx  tiers flex, priority"
    plain = entry.model_copy(update={"service_tiers": ["default"], "thinking_levels": []})
    assert label(plain, None) == "  openrouter/m  [no thinking levels]  128K ctx"


def test_every_slash_command_and_bind_action_is_run_by_a_test_of_the_client() -> None:
    """Each slash command is typed, and each action of the binds is run by its name or pressed
    by a default key, in some test of tests/tui other than this file."""
    import re

    text = "\n".join(f.read_text(encoding="utf-8") for f in Path(__file__).parent.glob("test_*.py") if f.name != Path(__file__).name)
    untyped = [c for c in commands.COMMANDS if not re.search(re.escape(c) + r"\b", text)]
    default_keys: dict[str, list[str]] = {}
    for key, bound in keys.DEFAULTS:
        for action in re.findall(r"action ([\w.]+)", bound):
            default_keys.setdefault(action, []).append(key)
    unrun = [a for a in keys.ACTIONS if a not in text and not any(f'press("{key}")' in text for key in default_keys.get(a, []))]
    assert untyped == [] and unrun == [], (untyped, unrun)


def test_one_line_flattens_and_cuts_only_past_its_width() -> None:
    assert one_line("a\n  b\tc") == "a b c"
    assert one_line("x" * 160) == "x" * 160  # a tool call's arguments of exactly 160 characters are whole
    assert one_line("x" * 161) == "x" * 157 + "..."
    assert one_line("abcdef", 5) == "ab..."
