"""WAV in and out with the standard library's ``wave`` (S9 speech and dictation).

Audio inside eukhe is mono float32 in [-1, 1] at a stated rate. WAV files read are PCM of 8, 16
or 32 bits, any number of channels (averaged to mono); written WAV files are 16-bit PCM mono.
``resample`` is linear interpolation (whisper wants 16 kHz; a recorder already gives 16 kHz).
"""

from __future__ import annotations

import io
import wave
from dataclasses import dataclass
from typing import Any

import numpy as np

WHISPER_RATE = 16000
KOKORO_RATE = 24000


class AudioError(Exception):
    """A WAV file eukhe cannot read."""


@dataclass(frozen=True)
class Audio:
    samples: np.ndarray[Any, Any]  # float32, mono, [-1, 1]
    rate: int


def read_wav(data: bytes) -> Audio:
    try:
        with wave.open(io.BytesIO(data), "rb") as w:
            channels, width, rate, frames = w.getnchannels(), w.getsampwidth(), w.getframerate(), w.getnframes()
            raw = w.readframes(frames)
    except (wave.Error, EOFError) as error:
        raise AudioError(f"not a PCM WAV file: {error}") from error
    if width == 1:
        values = (np.frombuffer(raw, dtype=np.uint8).astype(np.float32) - 128.0) / 128.0
    elif width == 2:
        values = np.frombuffer(raw, dtype="<i2").astype(np.float32) / 32768.0
    elif width == 4:
        values = (np.frombuffer(raw, dtype="<i4").astype(np.float64) / 2147483648.0).astype(np.float32)
    else:
        raise AudioError(f"{8 * width}-bit samples are not supported (8, 16 or 32)")
    usable = len(values) - len(values) % channels
    mono = values[:usable].reshape(-1, channels).mean(axis=1).astype(np.float32)
    return Audio(mono, rate)


def write_wav(audio: Audio) -> bytes:
    """16-bit PCM mono; samples outside [-1, 1] are clipped, NaN becomes silence."""
    clean = np.nan_to_num(np.asarray(audio.samples, dtype=np.float64), nan=0.0, posinf=1.0, neginf=-1.0)
    pcm = np.round(np.clip(clean, -1.0, 1.0) * 32767.0).astype("<i2")
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(audio.rate)
        w.writeframes(pcm.tobytes())
    return out.getvalue()


def resample(audio: Audio, rate: int) -> Audio:
    if audio.rate == rate or len(audio.samples) == 0:
        return Audio(np.asarray(audio.samples, dtype=np.float32), rate)
    count = int(round(len(audio.samples) * rate / audio.rate))
    times = np.arange(count, dtype=np.float64) * (audio.rate / rate)
    return Audio(np.interp(times, np.arange(len(audio.samples)), audio.samples).astype(np.float32), rate)
