"""Dictation recorders (S9 Dictation 3; the seed's SubprocessRecorder): the first on PATH of
pw-record, parec, arecord records raw 16 kHz mono 16-bit audio to its stdout, which becomes a
temporary WAV. A recorder that fails fails the take with its stderr; no next program is tried.
A recorder that does not end within STOP_DEADLINE of its stop is killed and fails the take.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import wave
from dataclasses import dataclass
from pathlib import Path

RATE = 16_000
STOP_DEADLINE = 10.0  # seconds: a recorder's end after SIGINT (or by itself) before it is killed
RECORDERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("pw-record", ("--rate", "16000", "--channels", "1", "--format", "s16", "-")),
    ("parec", ("--rate=16000", "--channels=1", "--format=s16le", "--raw")),
    ("arecord", ("-q", "-t", "raw", "-r", "16000", "-c", "1", "-f", "S16_LE")),
)


class RecorderError(Exception):
    """The take failed: no recorder on PATH, the recorder's failure (its stderr), or no audio."""


@dataclass(frozen=True)
class Recorder:
    program: str
    argv: tuple[str, ...]


def find_recorder(path: str | None = None) -> Recorder:
    for name, args in RECORDERS:
        found = shutil.which(name, path=path if path is not None else os.environ.get("PATH"))
        if found:
            return Recorder(name, (found, *args))
    raise RecorderError("no recorder on PATH: install pw-record, parec or arecord")


def wav_bytes_to(path: Path, pcm: bytes) -> None:
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(RATE)
        out.writeframes(pcm)


class Take:
    """One recording: started, then stopped (the WAV) or cancelled (the file removed)."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder
        self.process = subprocess.Popen(recorder.argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def stop(self, *, interrupt: bool = True, deadline: float = STOP_DEADLINE) -> Path:
        """End the take (SIGINT to the recorder, or with ``interrupt=False`` wait for it to end
        by itself) and return the WAV. A recorder still running ``deadline`` seconds later is
        killed and the take fails, saying so."""
        if interrupt and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        try:
            pcm, err = self.process.communicate(timeout=deadline)
        except subprocess.TimeoutExpired:
            self._kill(deadline)
            how = f"within {deadline:g} s of SIGINT" if interrupt else f"by itself within {deadline:g} s"
            raise RecorderError(f"{self.recorder.program} did not end {how} (killed)") from None
        code = self.process.returncode
        if code not in (0, -signal.SIGINT, 130):
            raise RecorderError(f"{self.recorder.program} failed (exit {code}): {err.decode('utf-8', 'replace').strip()}")
        if not pcm:
            raise RecorderError(f"{self.recorder.program} recorded no audio: {err.decode('utf-8', 'replace').strip()}".rstrip(": "))
        handle, name = tempfile.mkstemp(prefix="eukhe-dictation-", suffix=".wav")
        os.close(handle)
        wav_bytes_to(Path(name), pcm[: len(pcm) - len(pcm) % 2])
        return Path(name)

    def cancel(self, deadline: float = STOP_DEADLINE) -> None:
        self._kill(deadline)

    def _kill(self, deadline: float) -> None:
        """Kill the recorder and reap it; its pipes are read for at most ``deadline`` seconds
        (a child it left may hold them)."""
        if self.process.poll() is None:
            self.process.kill()
        try:
            self.process.communicate(timeout=deadline)
        except subprocess.TimeoutExpired:
            self.process.wait()
