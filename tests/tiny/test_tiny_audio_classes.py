"""WAV and resampling to the letter (eukhe.tiny.audio: "Audio inside eukhe is mono float32 in
[-1, 1] at a stated rate"; WAV files of 8, 16 or 32 bits, any channels, averaged to mono; written
16-bit PCM mono): a data chunk that ends mid-frame, the float32 promise on every path of
``resample``, each refusal's text."""

from __future__ import annotations

import io
import wave
from typing import Any

import numpy as np
import pytest

from eukhe.tiny.audio import Audio, AudioError, read_wav, resample, write_wav


def _wav(channels: int, width: int, rate: int, raw: bytes) -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(width)
        w.setframerate(rate)
        w.writeframes(raw)
    return out.getvalue()


@pytest.mark.parametrize("channels", [2, 3])
def test_a_data_chunk_that_ends_mid_frame_reads_as_its_whole_frames(channels: int) -> None:
    """A WAV cut short (a recording interrupted mid-write) keeps every whole frame; the samples
    of the cut frame are dropped, never averaged into a frame of their own."""
    frame = np.array([16384] * channels, "<i2").tobytes()
    whole = _wav(channels, 2, 8000, frame * 2)
    cut = whole[:-2]  # the last sample of the second frame is gone
    audio = read_wav(cut)
    assert audio.rate == 8000 and audio.samples.dtype == np.float32
    assert audio.samples.tolist() == [0.5]


def test_channels_are_averaged_sample_by_sample() -> None:
    raw = np.array([32767, -32768, 16384, 0], "<i2").tobytes()
    assert read_wav(_wav(2, 2, 16000, raw)).samples.tolist() == [(32767 - 32768) / 2 / 32768, 0.25]
    assert read_wav(_wav(1, 2, 16000, raw)).samples.tolist() == [32767 / 32768, -1.0, 0.5, 0.0]


@pytest.mark.parametrize("rate", [16000, 8000], ids=["same-rate", "other-rate"])
@pytest.mark.parametrize("dtype", [np.float64, np.int16, np.float32], ids=["float64", "int16", "float32"])
def test_resampled_audio_is_always_float32(rate: int, dtype: type) -> None:
    samples: np.ndarray[Any, Any] = np.array([0, 1, 0, -1], dtype=dtype)
    out = resample(Audio(samples, 16000), rate)
    assert out.rate == rate and out.samples.dtype == np.float32
    assert len(out.samples) == 4 * rate // 16000
    empty = resample(Audio(np.zeros(0, dtype=dtype), 8000), 16000)
    assert empty.samples.dtype == np.float32 and empty.samples.size == 0 and empty.rate == 16000


def test_a_written_wav_is_16_bit_pcm_mono_at_the_audios_rate() -> None:
    data = write_wav(Audio(np.array([0.0, 1.0, -1.0], np.float32), 24000))
    with wave.open(io.BytesIO(data)) as w:
        assert (w.getnchannels(), w.getsampwidth(), w.getframerate(), w.getnframes()) == (1, 2, 24000, 3)
        assert w.readframes(3) == np.array([0, 32767, -32767], "<i2").tobytes()


def test_each_wav_refusal_says_why() -> None:
    with pytest.raises(AudioError) as width:
        read_wav(_wav(1, 3, 8000, b"\0\0\0"))
    assert str(width.value) == "24-bit samples are not supported (8, 16 or 32)"
    with pytest.raises(AudioError) as garbage:
        read_wav(b"RIFF not a wav")
    assert str(garbage.value).startswith("not a PCM WAV file: ")
