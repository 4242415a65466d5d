"""Dictation in the terminal UI (S9 Dictation, five rules), headless on a mock agent as the seed's
tests run it: Textual's pilot presses the keys binds.cfg binds, the real recorder code
(eukhe.tiny.recorder) runs ``/bin/sh`` programs put alone on PATH, a function is the transcriber,
and the agent is the real agent of session s1 served in the test's event loop with no turn loop
(its switches, stt.enabled among them, come from its state and its switches events).

Nothing waits on a clock: each step waits for what the screen shows, with a deadline that only a
failing run reaches. Push-to-talk's gaps run on a clock the test moves."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tui_support import AUDIO, SILENT, attached, mock_agent, recorders, screen_text, screenshot, until

from eukhe.agent import protocol as p
from eukhe.agent.client import AgentClient
from eukhe.session import Store
from eukhe.tiny import recorder
from eukhe.tui import EukheApp, dictation, keys
from eukhe.tui.dictation import Take

SIZE = (100, 30)
TOGGLE_BIND = 'bind f8 "action app.stt.toggle"\nbind f9 "action app.stt.pushToTalk"\n'


class Heard:
    """A transcriber: what it was given, the text it says; ``hold`` keeps it transcribing until
    ``go`` is set."""

    def __init__(self, text: str = "hello world", *, hold: bool = False, fails: bool = False) -> None:
        self.text = text
        self.fails = fails
        self.go = threading.Event()
        if not hold:
            self.go.set()
        self.paths: list[Path] = []
        self.sizes: list[int] = []

    def __call__(self, path: Path) -> str:
        self.paths.append(path)
        self.sizes.append(path.stat().st_size)
        assert self.go.wait(30), "the test never let the transcriber go"
        if self.fails:
            raise RuntimeError("the model is not installed")
        return self.text


class Takes:
    """The real recorder (the first on PATH), counting its takes."""

    def __init__(self) -> None:
        self.started: list[recorder.Take] = []

    def __call__(self) -> Take:
        take = recorder.Take(recorder.find_recorder())
        self.started.append(take)
        return take


def app_of(home: Path, heard: Callable[[Path], str], takes: Takes | None = None) -> EukheApp:
    return EukheApp(home, Store(home / "sessions").path("s1"), "s1", home.parent, recorder=takes or Takes(), transcriber=heard)


def wavs(where: Path) -> list[Path]:
    return sorted((where / "tmp").glob("eukhe-dictation-*"))


def stt_on(agent: Any) -> None:
    """The session's stt.enabled set before the client attaches (its state carries it)."""
    agent.cvar.run_line("set stt.enabled true")


def run(scenario: Callable[[], Any]) -> None:
    asyncio.run(scenario())


def test_the_dictation_phase_leads_the_line(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """S9 dictation rule 5: [REC] while the recorder records, then [STT] while the dictation role
    transcribes, leading the status line; the text goes in at the cursor; the WAV is gone after."""
    (home / "binds.cfg").write_text(TOGGLE_BIND, encoding="utf-8")
    where = recorders(tmp_path / "bin", monkeypatch, {"pw-record": AUDIO})
    heard = Heard(hold=True)

    async def scenario() -> None:
        async with mock_agent(home) as agent:
            stt_on(agent)
            app = app_of(home, heard)
            async with app.run_test(size=SIZE) as pilot:
                await until(pilot, lambda: attached(app), "the agent's state")
                app.draft.insert("Note: ")
                await pilot.press("f8")
                await until(pilot, lambda: app.status_text.startswith("[REC] | model loop/loop-model"), "[REC] first")
                await until(pilot, lambda: "[REC] | model loop/loop-model" in screen_text(app), "[REC] on the screen")
                await pilot.press("f8")
                await until(pilot, lambda: app.status_text.startswith("[STT] | model loop/loop-model"), "[STT] first")
                await until(pilot, lambda: "[STT] | model loop/loop-model" in screen_text(app), "[STT] on the screen")
                assert app.status_text in screenshot(app, "dictation-stt")
                assert heard.paths and heard.paths[0].exists() and heard.sizes[0] == 44 + 3200  # the WAV of the recorded audio
                heard.go.set()
                await until(pilot, lambda: app.status.dictation is None, "the take's end")
                assert not app.status_text.startswith("[")
                assert app.draft.text == "Note: hello world"
                assert wavs(where) == []

    run(scenario)


def test_dictation_actions_bind_only_through_binds_cfg(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """S9 dictation rule 2: app.stt.pushToTalk and app.stt.toggle have no default key; a bind of
    binds.cfg runs them."""
    defaults = keys.load(home)
    for key in defaults.binds.keys():
        pressed = defaults.press(key)
        assert pressed is not None and not set(dictation.ACTIONS) & set(pressed.actions), key
    recorders(tmp_path / "bin", monkeypatch, {"pw-record": AUDIO})
    takes = Takes()

    async def scenario(bound: bool) -> None:
        async with mock_agent(home) as agent:
            stt_on(agent)
            app = app_of(home, Heard(), takes)
            async with app.run_test(size=SIZE) as pilot:
                await until(pilot, lambda: attached(app), "the agent's state")
                await pilot.press("f8")
                if bound:
                    await until(pilot, lambda: app.status.dictation == "REC", "the take")
                    await pilot.press("f8")
                    await until(pilot, lambda: app.draft.text == "hello world", "the text")
                else:
                    await pilot.press("x")  # a key after it: the press of f8 was taken before
                    await until(pilot, lambda: app.draft.text == "x", "the key after f8")
                    assert app.status.dictation is None and takes.started == []

    run(lambda: scenario(False))  # no binds.cfg: the defaults bind no dictation key
    (home / "binds.cfg").write_text(TOGGLE_BIND, encoding="utf-8")
    run(lambda: scenario(True))
    assert len(takes.started) == 1


def test_push_to_talk_records_while_the_key_repeats_and_a_gap_is_the_release(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """S9 dictation rule 2: the terminal resends a held key; no press within 800 ms of the first
    press, or within 300 ms of a repeat, is the release."""
    (home / "binds.cfg").write_text(TOGGLE_BIND, encoding="utf-8")
    recorders(tmp_path / "bin", monkeypatch, {"pw-record": AUDIO})
    takes = Takes()
    now = [100.0]

    async def scenario() -> None:
        async with mock_agent(home) as agent:
            stt_on(agent)
            app = app_of(home, Heard("pushed"), takes)
            app.dictation.clock = lambda: now[0]
            async with app.run_test(size=SIZE) as pilot:
                await until(pilot, lambda: attached(app), "the agent's state")
                await pilot.press("f9")
                await until(pilot, lambda: app.status.dictation == "REC", "the take")
                for step in (0.7, 0.25, 0.25):  # the repeat delay, then auto-repeats: the key is held
                    now[0] += step
                    await pilot.press("f9")
                    assert app.status.dictation == "REC"
                assert len(takes.started) == 1 and app.dictation.run is not None and app.dictation.run.repeats == 3
                now[0] += 0.31  # a gap longer than 300 ms after a repeat: released
                await until(pilot, lambda: app.draft.text == "pushed", "the text after the release")
                assert app.status.dictation is None and len(takes.started) == 1
                await pilot.press("f9")  # a new press: a new take
                await until(pilot, lambda: app.status.dictation == "REC", "the second take")
                now[0] += 0.8  # 800 ms to the instant with no repeat: released
                await until(pilot, lambda: app.draft.text == "pushedpushed", "the second text")
                assert len(takes.started) == 2

    run(scenario)


def test_no_speech_a_failure_and_no_audio_show_rows(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """S9 dictation rules 3-5: an empty text is "Dictation heard no speech"; the transcriber's
    failure, a recorder that records nothing, one that fails (its stderr) and none on PATH are
    error rows; the draft is untouched."""
    (home / "binds.cfg").write_text(TOGGLE_BIND, encoding="utf-8")
    where = recorders(tmp_path / "bin", monkeypatch, {"pw-record": AUDIO})
    heard = Heard("  ")

    async def take(pilot: Any, app: EukheApp, says: str) -> None:
        await pilot.press("f8")
        await until(pilot, lambda: app.status.dictation is not None or says in app.transcript.text, "the take")
        if says not in app.transcript.text:
            await pilot.press("f8")
        await until(pilot, lambda: says in app.transcript.text and app.status.dictation is None, repr(says))

    async def scenario() -> None:
        async with mock_agent(home) as agent:
            stt_on(agent)
            app = app_of(home, heard)
            async with app.run_test(size=SIZE) as pilot:
                await until(pilot, lambda: attached(app), "the agent's state")
                await take(pilot, app, dictation.NO_SPEECH)
                heard.fails = True
                await take(pilot, app, "error: dictation: RuntimeError: the model is not installed")
                (where / "pw-record").write_text(f"#!/bin/sh\n{SILENT}\n", encoding="utf-8")
                await take(pilot, app, "error: dictation: pw-record recorded no audio")
                (where / "pw-record").write_text("#!/bin/sh\necho 'no such device' >&2\nexit 3\n", encoding="utf-8")
                await take(pilot, app, "error: dictation: pw-record failed (exit 3): no such device")
                (where / "pw-record").unlink()
                await take(pilot, app, "error: dictation: no recorder on PATH")
                assert app.draft.text == "" and wavs(where) == []

    run(scenario)


def test_the_first_recorder_on_path_records(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """S9 dictation rule 3: pw-record, parec, arecord: the first found records; no next program."""
    (home / "binds.cfg").write_text(TOGGLE_BIND, encoding="utf-8")
    where = recorders(tmp_path / "bin", monkeypatch, {"parec": f": > {tmp_path}/parec-ran; {AUDIO}", "arecord": f": > {tmp_path}/arecord-ran; {AUDIO}"})
    assert where.exists()

    async def scenario() -> None:
        async with mock_agent(home) as agent:
            stt_on(agent)
            app = app_of(home, Heard("from parec"))
            async with app.run_test(size=SIZE) as pilot:
                await until(pilot, lambda: attached(app), "the agent's state")
                await pilot.press("f8")
                await until(pilot, lambda: app.status.dictation == "REC", "the take")
                await pilot.press("f8")
                await until(pilot, lambda: app.draft.text == "from parec", "the text")

    run(scenario)
    assert (tmp_path / "parec-ran").exists() and not (tmp_path / "arecord-ran").exists()


def test_escape_cancels_a_take_stops_the_recorder_and_removes_the_file(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """S9 dictation rule 5: Esc (app.interrupt) while recording stops the recorder; while
    transcribing it removes the WAV and drops the text; either shows "Dictation cancelled"."""
    (home / "binds.cfg").write_text(TOGGLE_BIND, encoding="utf-8")
    where = recorders(tmp_path / "bin", monkeypatch, {"pw-record": AUDIO})
    heard = Heard("too late", hold=True)
    takes = Takes()

    async def scenario() -> None:
        async with mock_agent(home) as agent:
            stt_on(agent)
            app = app_of(home, heard, takes)
            async with app.run_test(size=SIZE) as pilot:
                await until(pilot, lambda: attached(app), "the agent's state")
                await pilot.press("f8")
                await until(pilot, lambda: app.status.dictation == "REC", "the take")
                await pilot.press("escape")
                await until(pilot, lambda: dictation.CANCELLED in app.transcript.text, "the cancel")
                assert takes.started[0].process.poll() is not None  # the recorder was stopped
                assert app.status.dictation is None and heard.paths == [] and wavs(where) == []
                await pilot.press("f8")
                await until(pilot, lambda: app.status.dictation == "REC", "the second take")
                await pilot.press("f8")
                await until(pilot, lambda: app.status.dictation == "STT", "the transcription")
                assert wavs(where) == heard.paths and heard.paths[0].exists()
                await pilot.press("escape")
                await until(pilot, lambda: app.transcript.text.count(dictation.CANCELLED) == 2, "the second cancel")
                assert app.status.dictation is None and not heard.paths[0].exists() and wavs(where) == []
                heard.go.set()  # the transcription ends late: its text is dropped
                await until(pilot, lambda: not app.dictation.tasks, "the late transcription's end")
                assert app.draft.text == "" and "error" not in app.transcript.text

    run(scenario)


def test_stt_enabled_false_refuses_and_is_read_at_each_take_starting_press(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """S9 dictation rule 1: stt.enabled (default false) read from the session at each
    take-starting press; off, the key shows how to turn it on. Set by another client, the
    switch reaches this one."""
    (home / "binds.cfg").write_text(TOGGLE_BIND, encoding="utf-8")
    recorders(tmp_path / "bin", monkeypatch, {"pw-record": AUDIO})
    takes = Takes()

    async def scenario() -> None:
        async with mock_agent(home) as agent:
            app = app_of(home, Heard("on now"), takes)
            async with app.run_test(size=SIZE) as pilot:
                await until(pilot, lambda: attached(app), "the agent's state")
                await pilot.press("f8")
                await until(pilot, lambda: dictation.OFF_HINT in app.transcript.text, "the hint")
                assert takes.started == [] and app.status.dictation is None
                other = await AgentClient.connect(agent.address)  # another client of the session
                await other.request(p.cvar_request("set stt.enabled true"))
                await until(pilot, lambda: app.switches.get("stt.enabled") is True, "the switch")
                await pilot.press("f8")
                await until(pilot, lambda: app.status.dictation == "REC", "the take")
                await other.request(p.cvar_request("set stt.enabled false"))  # read at a take-starting press only
                await until(pilot, lambda: app.switches.get("stt.enabled") is False, "the switch off")
                await pilot.press("f8")
                await until(pilot, lambda: app.draft.text == "on now", "the text of the take under way")
                await pilot.press("f8")
                await until(pilot, lambda: app.transcript.text.count(dictation.OFF_HINT) == 2, "the hint again")
                assert len(takes.started) == 1
                await other.close()

    run(scenario)


def test_the_status_line_shows_the_tier_and_autonomous_switches_set_by_another_client(home: Path) -> None:
    """The session's switches (serviceTier, autonomous.enabled) come with the state and again
    when a cvar line changes them, whoever sent it."""

    async def scenario() -> None:
        async with mock_agent(home) as agent:
            app = app_of(home, Heard())
            async with app.run_test(size=SIZE) as pilot:
                await until(pilot, lambda: attached(app), "the agent's state")
                assert "tier auto" in app.status_text and "autonomous" not in app.status_text
                other = await AgentClient.connect(agent.address)
                await other.request(p.cvar_request("set serviceTier priority; toggle autonomous.enabled"))
                await until(pilot, lambda: "tier priority" in app.status_text, "the tier set elsewhere")
                assert app.status_text == "model loop/loop-model | thinking off | tier priority | autonomous"
                await other.close()

    run(scenario)
