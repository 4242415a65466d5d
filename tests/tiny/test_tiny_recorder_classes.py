"""Dictation takes to the letter (S9 Dictation 3): the exits a take accepts, each failure's
exact text, and the temporary WAV: private (0600, DESIGN: every file holding conversation
content), named as eukhe's, whole 16-bit frames only. With real /bin/sh recorders on a PATH of
their own (tests/tiny/test_uses.py)."""

from __future__ import annotations

import os
import stat
import tempfile
import wave
from pathlib import Path

import pytest

from eukhe.tiny import recorder
from tests.tiny.conftest import Holding
from tests.tiny.test_uses import _recorders


def _take(tmp_path: Path, body: str, name: str = "arecord") -> recorder.Take:
    return recorder.Take(recorder.find_recorder(_recorders(tmp_path, {name: body})))


@pytest.mark.parametrize("code", [0, 130], ids=["zero", "sigint-shell"])
def test_a_recorder_ending_well_gives_a_private_wav_of_whole_frames(tmp_path: Path, code: int) -> None:
    wav = _take(tmp_path, f"printf 'ABC'; exit {code}\n").stop(interrupt=False)
    try:
        assert wav.parent == Path(tempfile.gettempdir())
        assert wav.name.startswith("eukhe-dictation-") and wav.suffix == ".wav"
        assert stat.S_IMODE(wav.stat().st_mode) == 0o600
        with wave.open(str(wav)) as audio:
            assert (audio.getframerate(), audio.getnchannels(), audio.getsampwidth(), audio.getnframes()) == (16000, 1, 2, 1)
            assert audio.readframes(2) == b"AB"  # the odd byte is no frame
    finally:
        os.unlink(wav)


def test_a_recorder_stopped_by_sigint_gives_its_audio(tmp_path: Path) -> None:
    """Stopped with SIGINT (the default stop), a recorder that dies of it (-SIGINT) ended well."""
    os.mkfifo(tmp_path / "recording")
    take = _take(tmp_path, f"printf 'AB'\n: > {tmp_path / 'recording'}\nexec sleep 100000\n")
    recording = Holding(tmp_path, "recording")
    recording.wait()  # its audio is out: it records on until stopped
    wav = take.stop()
    try:
        assert take.process.returncode == -2
        with wave.open(str(wav)) as audio:
            assert audio.readframes(4) == b"AB"
    finally:
        os.unlink(wav)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("echo 'no such device' >&2; exit 1\n", "arecord failed (exit 1): no such device"),
        ("printf 'AB'; echo ' busy ' >&2; exit 2\n", "arecord failed (exit 2): busy"),
        ("printf 'AB'; exit 129\n", "arecord failed (exit 129): "),
        ("exit 0\n", "arecord recorded no audio"),
        ("echo 'silence' >&2\n", "arecord recorded no audio: silence"),
    ],
    ids=["stderr", "stderr-stripped", "other-exit", "no-audio", "no-audio-stderr"],
)
def test_a_failed_take_says_exactly_why(tmp_path: Path, body: str, message: str) -> None:
    with pytest.raises(recorder.RecorderError) as caught:
        _take(tmp_path, body).stop(interrupt=False)
    assert str(caught.value) == message


def test_no_recorder_names_the_three(tmp_path: Path) -> None:
    with pytest.raises(recorder.RecorderError) as caught:
        recorder.find_recorder(_recorders(tmp_path, {}))
    assert str(caught.value) == "no recorder on PATH: install pw-record, parec or arecord"
