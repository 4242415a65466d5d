"""Whisper-style transcription around its ONNX graphs (S9 dictation, the seed's whisper.rs),
CPU only.

Audio features (as Whisper computes them): 16 kHz mono, padded or cut to 30 s chunks (480000
samples); a short-time Fourier transform with a periodic Hann window of 400 samples, hop 160,
centred (reflect padding of 200 on each side), the last frame dropped (3000 frames); the power
spectrum through the Slaney mel filter bank (librosa's ``filters.mel`` with ``htk=False`` and
Slaney area normalisation); ``log10`` of it clamped at 1e-10; values below (max - 8) raised to
it; then ``(x + 4) / 4``.

The graphs' documented signature (onnx-community's Whisper exports, ``decoder_model.onnx``,
without key/value caches):
- encoder: input ``input_features`` float ``[1, n_mels, 3000]``; output ``last_hidden_state``
  float ``[1, frames, d]``;
- decoder: inputs ``input_ids`` int64 ``[1, sequence]`` and ``encoder_hidden_states`` float
  ``[1, frames, d]``; output ``logits`` float ``[1, sequence, vocab]`` (other outputs, such as
  ``present.*``, are not read). Any other input fails to load.

The decoder loop: the prompt ``<|startoftranscript|> <|LANG|> <|transcribe|> <|notimestamps|>``,
then greedy steps (the highest logit, the lowest id on a tie) until ``<|endoftext|>`` or 448
tokens in all; the text is the new tokens decoded without the special ones, stripped. Audio
longer than 30 s is transcribed chunk by chunk, the texts joined by a space.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from eukhe import strict_json
from eukhe.tiny.audio import WHISPER_RATE, Audio, resample
from eukhe.tiny.tokenizer import Tokenizer

N_FFT = 400
HOP = 160
CHUNK_SAMPLES = 30 * WHISPER_RATE
FRAMES = CHUNK_SAMPLES // HOP
MAX_TOKENS = 448
ENCODER_INPUTS = frozenset({"input_features"})
DECODER_INPUTS = frozenset({"input_ids", "encoder_hidden_states"})


class WhisperError(Exception):
    """A graph, tokenizer or request the transcription pipeline cannot run."""


def _hz_to_mel(f: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Slaney's mel scale: linear below 1 kHz (3 mels per 200 Hz), logarithmic above."""
    f = np.asarray(f, dtype=np.float64)
    step = 200.0 / 3
    logstep = np.log(6.4) / 27.0
    linear = f / step
    return np.where(f >= 1000.0, 1000.0 / step + np.log(np.maximum(f, 1e-10) / 1000.0) / logstep, linear)


def _mel_to_hz(m: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    m = np.asarray(m, dtype=np.float64)
    step = 200.0 / 3
    logstep = np.log(6.4) / 27.0
    start = 1000.0 / step
    return np.where(m >= start, 1000.0 * np.exp(logstep * (m - start)), step * m)


def mel_filters(n_mels: int, rate: int = WHISPER_RATE, n_fft: int = N_FFT) -> np.ndarray[Any, Any]:
    """The Slaney mel filter bank, ``[n_mels, 1 + n_fft // 2]``, area-normalised."""
    fft_freqs = np.linspace(0.0, rate / 2, 1 + n_fft // 2)
    mel_points = _mel_to_hz(np.linspace(_hz_to_mel(np.array(0.0)), _hz_to_mel(np.array(rate / 2)), n_mels + 2))
    widths = np.diff(mel_points)
    ramps = mel_points[:, None] - fft_freqs[None, :]
    lower = -ramps[:-2] / widths[:-1, None]
    upper = ramps[2:] / widths[1:, None]
    weights = np.maximum(0.0, np.minimum(lower, upper))
    weights *= (2.0 / (mel_points[2:] - mel_points[:-2]))[:, None]
    return weights.astype(np.float32)


def log_mel_spectrogram(samples: np.ndarray[Any, Any], n_mels: int = 80) -> np.ndarray[Any, Any]:
    """Whisper's input features of one 30 s chunk: ``[n_mels, 3000]`` float32."""
    audio = np.zeros(CHUNK_SAMPLES, dtype=np.float32)
    chunk = np.asarray(samples, dtype=np.float32)[:CHUNK_SAMPLES]
    audio[: len(chunk)] = chunk
    padded = np.pad(audio, N_FFT // 2, mode="reflect")
    window = (0.5 - 0.5 * np.cos(2.0 * np.pi * np.arange(N_FFT) / N_FFT)).astype(np.float32)
    frames = np.lib.stride_tricks.sliding_window_view(padded, N_FFT)[::HOP]
    power = np.abs(np.fft.rfft(frames * window, axis=1)) ** 2  # [FRAMES + 1, 1 + N_FFT // 2]
    mel = mel_filters(n_mels) @ power[:-1].T
    log = np.log10(np.maximum(mel, 1e-10))
    log = np.maximum(log, log.max() - 8.0)
    return np.asarray((log + 4.0) / 4.0, dtype=np.float32)


def chunks(audio: Audio) -> list[np.ndarray[Any, Any]]:
    """The 16 kHz samples in 30 s chunks (one, empty, for no audio)."""
    samples = resample(audio, WHISPER_RATE).samples
    if len(samples) == 0:
        return [samples]
    return [samples[i : i + CHUNK_SAMPLES] for i in range(0, len(samples), CHUNK_SAMPLES)]


def _session(graph: Path) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    try:
        return ort.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])
    except Exception as error:  # onnxruntime raises its own exception types
        raise WhisperError(f"{graph}: cannot load: {error}") from error


def decoding_tokenizer(path: Path) -> Tokenizer:
    """Whisper's tokenizer.json read for decoding only: its vocabulary and added tokens (its
    post-processor template, which encoding would need, is not used)."""
    try:
        doc = strict_json.loads(Path(path).read_text(encoding="utf-8"))
        vocab = doc["model"]["vocab"]
        added = [(int(t["id"]), str(t["content"]), bool(t.get("special"))) for t in doc.get("added_tokens") or []]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise WhisperError(f"{path}: not a tokenizer.json with a vocabulary: {error}") from error
    if not isinstance(vocab, dict) or not all(isinstance(k, str) and isinstance(v, int) for k, v in vocab.items()):
        raise WhisperError(f"{path}: model.vocab is not a map of strings to ids")
    return Tokenizer(vocab, [], added, None, False, False)


class Whisper:
    def __init__(self, encoder: Path, decoder: Path, tokenizer: Tokenizer) -> None:
        self.encoder = _session(encoder)
        self.decoder = _session(decoder)
        enc_inputs = {i.name: i for i in self.encoder.get_inputs()}
        dec_inputs = {i.name for i in self.decoder.get_inputs()}
        if set(enc_inputs) != ENCODER_INPUTS or "last_hidden_state" not in {o.name for o in self.encoder.get_outputs()}:
            raise WhisperError(f"{encoder}: inputs {sorted(enc_inputs)} are not the documented encoder signature")
        if dec_inputs != DECODER_INPUTS or "logits" not in {o.name for o in self.decoder.get_outputs()}:
            raise WhisperError(f"{decoder}: inputs {sorted(dec_inputs)} are not the documented decoder signature")
        mels = enc_inputs["input_features"].shape[1] if len(enc_inputs["input_features"].shape) == 3 else None
        self.n_mels = mels if isinstance(mels, int) else 80
        self.tokenizer = tokenizer
        special = {name: tokenizer.token_id(name) for name in ("<|startoftranscript|>", "<|transcribe|>", "<|notimestamps|>", "<|endoftext|>")}
        missing = sorted(name for name, value in special.items() if value is None)
        if missing:
            raise WhisperError(f"the tokenizer lacks {', '.join(missing)}")
        self.sot, self.task, self.no_timestamps, self.eot = (int(special[n] or 0) for n in special)

    @classmethod
    def load(cls, model_dir: Path) -> Whisper:
        return cls(model_dir / "onnx" / "encoder_model.onnx", model_dir / "onnx" / "decoder_model.onnx", decoding_tokenizer(model_dir / "tokenizer.json"))

    def prompt(self, language: str) -> list[int]:
        lang = self.tokenizer.token_id(f"<|{language}|>")
        if lang is None:
            raise WhisperError(f"no language token <|{language}|> in the tokenizer")
        return [self.sot, lang, self.task, self.no_timestamps]

    def encode(self, features: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        (hidden,) = self.encoder.run(["last_hidden_state"], {"input_features": features[None, :, :]})
        return np.asarray(hidden)

    def decode(self, hidden: np.ndarray[Any, Any], prompt: list[int], max_tokens: int = MAX_TOKENS) -> list[int]:
        ids = list(prompt)
        new: list[int] = []
        while len(ids) < max_tokens:
            (logits,) = self.decoder.run(["logits"], {"input_ids": np.array([ids], dtype=np.int64), "encoder_hidden_states": hidden})
            token = int(np.argmax(logits[0, -1, :]))
            if token == self.eot:
                break
            new.append(token)
            ids.append(token)
        return new

    def transcribe(self, audio: Audio, language: str = "en") -> str:
        prompt = self.prompt(language)
        texts = []
        for chunk in chunks(audio):
            tokens = self.decode(self.encode(log_mel_spectrogram(chunk, self.n_mels)), prompt)
            texts.append(self.tokenizer.decode(tokens).strip())
        return " ".join(t for t in texts if t)
