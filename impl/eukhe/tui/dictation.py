"""Dictation into the draft of the terminal UI (S9 Dictation, its five rules).

1. ``stt.enabled`` (default false) enables the keys. It is read from the session at each
   take-starting press: the client holds the session's switches as the agent sends them (the
   ``switches`` of its ``state``, and each ``switches`` event after a cvar line changed them).
   A press while it is false starts nothing and shows how to turn it on (``OFF_HINT``).
2. ``app.stt.pushToTalk`` and ``app.stt.toggle`` have no default key (``eukhe.tui.keys``): a
   bind of binds.cfg runs them (control.md S4.5). Push-to-talk records while the key is held: a
   terminal sends no release, only the key again on auto-repeat, so a gap with no press is the
   release: ``FIRST_GAP`` (800 ms) after the first press (the terminal's repeat delay), then
   ``REPEAT_GAP`` (300 ms) after a repeat. Toggle records until its next press. A press of
   either key while the take records stops it; a press while it is transcribing does nothing.
3. The recorder is the first on PATH of ``eukhe.tiny.recorder.RECORDERS`` (``find_recorder``,
   looked up at each take); its raw 16 kHz mono audio becomes a temporary WAV when the take
   stops (``eukhe.tiny.recorder.Take``). A recorder that fails (its stderr), none on PATH, or
   no audio fails the take: an error row; no next program is tried.
4. The dictation role reads the WAV as ``eukhe transcribe`` does (``role_transcriber``:
   ``eukhe.tiny.uses.transcribe``, local models only, the tiny settings of the agent dir and the
   project); the text is inserted at the draft's cursor; an empty text shows "Dictation heard
   no speech". The WAV is removed once read.
5. The status line's phase (``eukhe.tui.status``): ``[REC]`` while recording, then ``[STT]``
   while transcribing, leading the line. ``app.interrupt`` (Esc) mid-take (recording or
   transcribing) stops the recorder, removes the file and shows "Dictation cancelled"; a late
   transcription of a cancelled take is dropped. A failure is an error row.

The recorder (``StartTake``) and the transcriber (``Transcriber``) are given to ``Dictation``,
so a test runs the real recorder code on a ``/bin/sh`` program on PATH and a function as the
transcriber. The blocking calls (stopping the recorder, transcribing) run in a thread: the
screen stays live.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Protocol

from eukhe.tiny import recorder
from eukhe.tui.status import Phase

PUSH_TO_TALK: Final = "app.stt.pushToTalk"
TOGGLE: Final = "app.stt.toggle"
ACTIONS: Final = (PUSH_TO_TALK, TOGGLE)
STT_CVAR: Final = "stt.enabled"
FIRST_GAP: Final = 0.8  # seconds with no press after the first press of push-to-talk: released
REPEAT_GAP: Final = 0.3  # seconds with no press after an auto-repeated press: released
OFF_HINT: Final = "Dictation is off (stt.enabled is false): /set stt.enabled true turns it on"
NO_SPEECH: Final = "Dictation heard no speech"
CANCELLED: Final = "Dictation cancelled"


class Take(Protocol):  # pragma: no mutate block
    """A recording under way (``eukhe.tiny.recorder.Take``)."""

    def stop(self) -> Path:
        """End it: the WAV, or RecorderError."""

    def cancel(self) -> None:
        """End it and keep nothing."""


StartTake = Callable[[], Take]
Transcriber = Callable[[Path], str]


def start_recorder() -> Take:
    """A take on the first recorder on PATH (looked up now); RecorderError when none is."""
    return recorder.Take(recorder.find_recorder())


def role_transcriber(agent_dir: Path, project_dir: Path) -> Transcriber:
    """The dictation role's model reading a WAV file, as ``eukhe transcribe`` does."""

    def transcribe(path: Path) -> str:
        from eukhe.tiny import uses
        from eukhe.tiny.audio import read_wav
        from eukhe.tiny.settings import TinySettings

        wav = path.read_bytes()
        read_wav(wav)  # a file the worker cannot read fails here, before a model is looked up
        return uses.transcribe(agent_dir, wav, settings=TinySettings.load(agent_dir, project_dir))

    return transcribe


class Screen(Protocol):  # pragma: no mutate block
    """What dictation needs of the client."""

    def stt_enabled(self) -> bool: ...

    def dictation_phase(self, phase: Phase | None) -> None: ...

    def insert(self, text: str) -> None: ...

    async def row(self, text: str) -> None: ...

    async def error(self, text: str) -> None: ...


@dataclass(eq=False)
class _Run:
    """One take, from its first press to its text (or its failure, or its cancel)."""

    action: str
    take: Take
    last: float  # the clock at its latest press
    repeats: int = 0  # presses of push-to-talk after the first
    stopping: bool = False  # the recorder is being stopped, or the WAV transcribed
    cancelled: bool = False
    path: Path | None = None  # the WAV, once the recorder stopped
    watcher: asyncio.Task[None] | None = field(default=None, repr=False)


class Dictation:
    """The takes of one client (see the module docstring)."""

    def __init__(
        self,
        screen: Screen,
        start: StartTake = start_recorder,
        transcribe: Transcriber | None = None,
        *,
        first_gap: float = FIRST_GAP,
        repeat_gap: float = REPEAT_GAP,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.screen = screen
        self.start = start
        self.transcribe = transcribe
        self.first_gap = first_gap
        self.repeat_gap = repeat_gap
        self.clock = clock
        self.run: _Run | None = None
        self.tasks: set[asyncio.Task[None]] = set()

    @property
    def phase(self) -> Phase | None:
        run = self.run
        if run is None:
            return None
        return "STT" if run.path is not None else "REC"

    async def press(self, action: str) -> None:
        """A press of ``app.stt.pushToTalk`` or ``app.stt.toggle``."""
        run = self.run
        now = self.clock()
        if run is None:
            await self._begin(action, now)
        elif run.stopping:
            return  # the take is being stopped or transcribed: its end comes by itself
        elif action == PUSH_TO_TALK and run.action == PUSH_TO_TALK:
            run.last = now  # the terminal's auto-repeat: the key is still held
            run.repeats += 1
        else:
            self._spawn(self._finish(run))

    async def _begin(self, action: str, now: float) -> None:
        if not self.screen.stt_enabled():
            await self.screen.row(OFF_HINT)
            return
        try:
            take = self.start()
        except (recorder.RecorderError, OSError) as error:
            await self.screen.error(f"dictation: {error}")
            return
        run = _Run(action, take, now)
        self.run = run
        self.screen.dictation_phase("REC")
        if action == PUSH_TO_TALK:
            run.watcher = self._spawn(self._release(run))

    async def _release(self, run: _Run) -> None:
        """Push-to-talk: stop the take at the first gap with no press (the key's release)."""
        while True:
            gap = self.first_gap if run.repeats == 0 else self.repeat_gap
            wait = run.last + gap - self.clock()
            if wait <= 0:
                break
            await asyncio.sleep(wait)  # the rule is a time with no press: wait it out, then look again
        if self.run is run and not run.stopping:
            await self._finish(run)

    async def _finish(self, run: _Run) -> None:
        """Stop the recorder, transcribe the WAV, put the text in the draft."""
        run.stopping = True
        if run.watcher is not None and run.watcher is not asyncio.current_task():
            run.watcher.cancel()
        text: str | None = None
        try:
            try:
                path = await asyncio.to_thread(run.take.stop)
            except recorder.RecorderError as error:
                if not run.cancelled:
                    await self.screen.error(f"dictation: {error}")
                return
            run.path = path
            if run.cancelled:
                return
            self.screen.dictation_phase("STT")
            transcribe = self.transcribe
            if transcribe is None:
                await self.screen.error("dictation: this client has no transcriber")
                return
            try:
                text = await asyncio.to_thread(transcribe, path)
            except Exception as error:  # any failure of the role's model is the take's error row
                if not run.cancelled:
                    await self.screen.error(f"dictation: {type(error).__name__}: {error}")
                return
        finally:
            if run.path is not None:
                run.path.unlink(missing_ok=True)
            self._end(run)
        if run.cancelled or text is None:
            return
        if text.strip():
            self.screen.insert(text.strip())
        else:
            await self.screen.row(NO_SPEECH)

    def _end(self, run: _Run) -> None:
        if self.run is run:
            self.run = None
            self.screen.dictation_phase(None)

    async def cancel(self, *, quiet: bool = False) -> bool:
        """End the take under way (the recorder stopped, its file removed); whether one was."""
        run = self.run
        if run is None:
            return False
        run.cancelled = True
        self._end(run)
        if not run.stopping:  # still recording: the recorder is killed here
            if run.watcher is not None:
                run.watcher.cancel()
            await asyncio.to_thread(run.take.cancel)
        # else the take's end (``_finish``) is under way: it sees the cancel, removes the WAV and
        # drops the text
        if run.path is not None:  # transcribing: the file goes now; the text is dropped
            run.path.unlink(missing_ok=True)
        if not quiet:
            await self.screen.row(CANCELLED)
        return True

    async def close(self) -> None:
        """The client ends: a take under way is cancelled, its tasks end."""
        await self.cancel(quiet=True)
        for task in list(self.tasks):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def _spawn(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.ensure_future(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task
