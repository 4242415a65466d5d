"""Dictation's takes at their edges (S9 Dictation rules 2, 3 and 5), as the seed's own
dictation::tests run them: a fake recorder and a fake transcriber that the test holds and lets go,
and a screen that records what the client would show. The takes in real terminals and with the
real recorder code are in test_tui_dictation.py and test_tui_terminal.py.

Nothing waits on a clock: each step waits for a condition, with a deadline that only a failing
run reaches; push-to-talk's gaps are not used here (a clock the test never moves)."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest

from eukhe.tiny.recorder import RecorderError
from eukhe.tui.dictation import CANCELLED, PUSH_TO_TALK, TOGGLE, Dictation
from eukhe.tui.status import Phase

WAIT = 30.0


class Shown:
    """The client's side: the rows, errors, inserted texts and phases dictation gave it."""

    def __init__(self) -> None:
        self.rows: list[str] = []
        self.errors: list[str] = []
        self.inserted: list[str] = []
        self.phases: list[Phase | None] = []

    def stt_enabled(self) -> bool:
        return True

    def dictation_phase(self, phase: Phase | None) -> None:
        self.phases.append(phase)

    def insert(self, text: str) -> None:
        self.inserted.append(text)

    async def row(self, text: str) -> None:
        self.rows.append(text)

    async def error(self, text: str) -> None:
        self.errors.append(text)


class HeldTake:
    """A recording whose ``stop`` blocks until the test lets it go, then gives a real WAV file
    (or fails, as a recorder with no audio does)."""

    def __init__(self, wav: Path, fails: str | None = None) -> None:
        self.wav = wav
        self.fails = fails
        self.go = threading.Event()
        self.stopping = threading.Event()
        self.cancelled = False

    def stop(self) -> Path:
        self.stopping.set()
        assert self.go.wait(WAIT), "the test never let the recorder stop"
        if self.fails is not None:
            raise RecorderError(self.fails)
        self.wav.write_bytes(b"RIFF")
        return self.wav

    def cancel(self) -> None:
        self.cancelled = True


class HeldTranscriber:
    def __init__(self, text: str = "hello", fails: bool = False) -> None:
        self.text = text
        self.fails = fails
        self.go = threading.Event()
        self.started = threading.Event()

    def __call__(self, path: Path) -> str:
        self.started.set()
        assert self.go.wait(WAIT), "the test never let the transcriber go"
        if self.fails:
            raise RuntimeError("the model is not installed")
        return self.text


async def eventually(condition: object, what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"waited {WAIT:g} s for {what}"
        await asyncio.sleep(0.01)


def dictation_of(shown: Shown, take: HeldTake, transcriber: HeldTranscriber | None) -> Dictation:
    return Dictation(shown, lambda: take, transcriber, clock=lambda: 0.0)


async def toggled(dictating: Dictation) -> None:
    """A take by toggle: the first press records, the second stops it."""
    await dictating.press(TOGGLE)
    await dictating.press(TOGGLE)


def test_the_phase_is_rec_then_stt_and_a_press_while_transcribing_does_nothing(tmp_path: Path) -> None:
    shown, take, heard = Shown(), HeldTake(tmp_path / "take.wav"), HeldTranscriber("  dictated text \n")

    async def main() -> None:
        dictating = dictation_of(shown, take, heard)
        assert dictating.phase is None
        await dictating.press(TOGGLE)
        assert dictating.phase == "REC"
        await dictating.press(TOGGLE)  # stops the take
        take.go.set()
        await eventually(heard.started.is_set, "the transcriber")
        assert dictating.phase == "STT" and take.wav.exists()
        await dictating.press(TOGGLE)  # transcribing: nothing starts, nothing shows
        await dictating.press(PUSH_TO_TALK)
        heard.go.set()
        await eventually(lambda: dictating.phase is None, "the take's end")
        await dictating.close()

    asyncio.run(main())
    assert shown.inserted == ["dictated text"]  # stripped, inserted once
    assert shown.phases == ["REC", "STT", None] and shown.rows == [] and shown.errors == []
    assert not take.wav.exists()  # the WAV goes once read


@pytest.mark.parametrize("cancelled", [False, True])
def test_a_recorder_that_fails_at_its_stop_is_an_error_row_unless_the_take_was_cancelled(tmp_path: Path, cancelled: bool) -> None:
    shown, take = Shown(), HeldTake(tmp_path / "take.wav", fails="pw-record: no audio was recorded")

    async def main() -> None:
        dictating = dictation_of(shown, take, HeldTranscriber())
        await toggled(dictating)
        await eventually(take.stopping.is_set, "the recorder's stop")
        if cancelled:
            assert await dictating.cancel() is True
        take.go.set()
        await eventually(lambda: not dictating.tasks, "the take's end")
        assert dictating.phase is None

    asyncio.run(main())
    assert shown.errors == ([] if cancelled else ["dictation: pw-record: no audio was recorded"])
    assert shown.rows == ([CANCELLED] if cancelled else []) and shown.inserted == []
    assert take.cancelled is False  # stopping already: the recorder is not killed a second time


def test_a_take_cancelled_while_its_recorder_stops_is_never_transcribed(tmp_path: Path) -> None:
    shown, take, heard = Shown(), HeldTake(tmp_path / "take.wav"), HeldTranscriber()

    async def main() -> None:
        dictating = dictation_of(shown, take, heard)
        await toggled(dictating)
        await eventually(take.stopping.is_set, "the recorder's stop")
        assert await dictating.cancel() is True
        take.go.set()
        await eventually(lambda: not dictating.tasks, "the take's end")

    asyncio.run(main())
    assert not heard.started.is_set() and shown.inserted == [] and shown.errors == []
    assert shown.rows == [CANCELLED] and shown.phases == ["REC", None]
    assert not take.wav.exists()  # written by the recorder, removed unread


def test_a_client_with_no_transcriber_says_so_and_removes_the_wav(tmp_path: Path) -> None:
    shown, take = Shown(), HeldTake(tmp_path / "take.wav")
    take.go.set()

    async def main() -> None:
        dictating = dictation_of(shown, take, None)
        await toggled(dictating)
        await eventually(lambda: dictating.phase is None and not dictating.tasks, "the take's end")

    asyncio.run(main())
    assert shown.errors == ["dictation: this client has no transcriber"] and shown.phases == ["REC", "STT", None]
    assert not take.wav.exists()


def test_a_transcriber_that_fails_after_a_cancel_shows_only_the_cancel(tmp_path: Path) -> None:
    shown, take, heard = Shown(), HeldTake(tmp_path / "take.wav"), HeldTranscriber(fails=True)
    take.go.set()

    async def main() -> None:
        dictating = dictation_of(shown, take, heard)
        await toggled(dictating)
        await eventually(heard.started.is_set, "the transcriber")
        assert await dictating.cancel() is True
        assert not take.wav.exists()  # transcribing: the file goes at the cancel
        heard.go.set()
        await eventually(lambda: not dictating.tasks, "the take's end")
        assert await dictating.cancel() is False  # no take any more

    asyncio.run(main())
    assert shown.errors == [] and shown.inserted == [] and shown.rows == [CANCELLED]


def test_push_to_talk_cancelled_while_recording_kills_the_recorder_and_its_watcher(tmp_path: Path) -> None:
    shown, take = Shown(), HeldTake(tmp_path / "take.wav")

    async def main() -> None:
        dictating = Dictation(shown, lambda: take, HeldTranscriber(), clock=lambda: 0.0, first_gap=WAIT * 10)
        await dictating.press(PUSH_TO_TALK)
        run = dictating.run
        assert run is not None and run.watcher is not None and dictating.phase == "REC"
        assert await dictating.cancel() is True
        await eventually(lambda: run.watcher is not None and run.watcher.done(), "the watcher's end")
        assert run.watcher.cancelled()

    asyncio.run(main())
    assert take.cancelled is True and not take.stopping.is_set()
    assert shown.rows == [CANCELLED] and shown.phases == ["REC", None] and shown.errors == []


def test_a_client_that_ends_mid_take_cancels_it_quietly_and_ends_its_tasks(tmp_path: Path) -> None:
    shown, take, heard = Shown(), HeldTake(tmp_path / "take.wav"), HeldTranscriber()
    take.go.set()

    async def main() -> None:
        dictating = dictation_of(shown, take, heard)
        await toggled(dictating)
        await eventually(heard.started.is_set, "the transcriber")
        await dictating.close()  # the take's task is cancelled and awaited; the thread goes on
        assert not dictating.tasks and dictating.phase is None
        heard.go.set()

    asyncio.run(main())
    assert shown.rows == [] and shown.errors == [] and shown.inserted == []  # quiet: no row
    assert not take.wav.exists()


def test_the_recorder_lookup_is_the_default_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """S9 dictation rule 3: the default start looks the recorder up on PATH at the take; none there is an error row."""
    monkeypatch.setenv("PATH", str(tmp_path))
    shown = Shown()

    async def main() -> None:
        await Dictation(shown).press(TOGGLE)

    asyncio.run(main())
    assert shown.errors == ["dictation: no recorder on PATH: install pw-record, parec or arecord"] and shown.phases == []


def test_a_wav_the_transcriber_took_away_is_no_error(tmp_path: Path) -> None:
    """The take's WAV goes once read; one the transcriber already moved away is no error."""
    shown, take = Shown(), HeldTake(tmp_path / "take.wav")

    def taking(path: Path) -> str:
        path.unlink()  # the transcriber keeps the take itself
        return "kept"

    async def main() -> None:
        dictating = Dictation(shown, lambda: take, taking, clock=lambda: 0.0)
        take.go.set()
        await toggled(dictating)
        await eventually(lambda: dictating.phase is None, "the take's end")
        await dictating.close()

    asyncio.run(main())
    assert shown.inserted == ["kept"] and shown.errors == []
