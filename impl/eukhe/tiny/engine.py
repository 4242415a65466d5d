"""What a worker runs requests on: an engine loaded from an installed model dir.

The model dir names its engine in ``engine.json`` (``{"kind": ...}``), written at install
time from the catalog entry:
- ``onnx-text``: the ONNX text decoder (``eukhe.tiny.text``) with our tokenizer;
- ``whisper``: transcription (``eukhe.tiny.whisper``): WAV bytes and a language to text;
- ``kokoro``: speech (``eukhe.tiny.kokoro``): text, voice and speed to WAV bytes;
- ``echo``: the fake engine of the election bridge and the worker tests (the seed's bridge
  ran "real serve, fake engine"): chat answers the last message's content; a content whose
  last line is ``hold:<dir>`` first meets the test at ``<dir>/received`` (a FIFO the test reads: the
  request has arrived) and then waits on ``<dir>/release`` (a FIFO the test writes), so a
  test holds a request in flight without any timing; ``crash`` ends the process mid-request; a translation request (``...\nEnglish: <text>``)
  is answered with its text, the echo of a failing tiny model; transcribe answers
  ``<samples> samples at <rate> Hz``; speak answers a silent 16-bit WAV at 24 kHz of 100
  samples per character.

An engine without an operation (a text model asked to speak) leaves it out: the worker answers
``unsupported``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from eukhe import strict_json
from eukhe.tiny.audio import KOKORO_RATE, Audio, AudioError, read_wav, write_wav


class EngineError(Exception):
    """The model dir holds no engine this build can run."""


class RequestError(Exception):
    """A request the engine refuses (bad audio, a word without phonemes, an unknown voice)."""


class EchoEngine:
    def transcribe(self, wav: bytes, language: str) -> str:
        try:
            audio = read_wav(wav)
        except AudioError as error:
            raise RequestError(str(error)) from error
        return f"{len(audio.samples)} samples at {audio.rate} Hz"

    def speak(self, text: str, voice: str, speed: float) -> bytes:
        return write_wav(Audio(np.zeros(100 * len(text), dtype=np.float32), KOKORO_RATE))

    def chat(self, messages: list[dict[str, Any]], prefill: str, stop: list[str], max_tokens: int) -> str:
        content = str(messages[-1].get("content", "")) if messages else ""
        last = content.rsplit("\n", 1)[-1]
        if last.startswith("hold:"):
            where = Path(last[5:])
            with open(where / "received", "w", encoding="utf-8"):
                pass
            with open(where / "release", encoding="utf-8") as release:
                release.read()
        if content == "crash":
            os._exit(70)
        if "\nEnglish: " in content:  # a translation request: echo its text, as failing tiny models do
            return prefill + " " + content.split("\nEnglish: ", 1)[1]
        return prefill + content


def load(model_dir: Path) -> Any:
    """The engine of an installed model dir: it has chat, transcribe or speak (or several)."""
    spec_file = model_dir / "engine.json"
    try:
        spec = strict_json.loads(spec_file.read_text(encoding="utf-8"))
    except FileNotFoundError as error:
        raise EngineError(f"{model_dir} is not installed (no engine.json)") from error
    except ValueError as error:
        raise EngineError(f"{spec_file}: not JSON: {error}") from error
    kind = spec.get("kind") if isinstance(spec, dict) else None
    if kind == "echo":
        return EchoEngine()
    if kind == "onnx-text":
        from eukhe.tiny.text import TextEngine, TextError
        from eukhe.tiny.tokenizer import TokenizerError

        try:
            return TextEngine.load(model_dir)
        except (OSError, ValueError, TextError, TokenizerError) as error:
            raise EngineError(f"{model_dir}: cannot load the text engine: {error}") from error
    if kind == "whisper":
        from eukhe.tiny.whisper import Whisper, WhisperError

        try:
            return WhisperEngine(Whisper.load(model_dir))
        except (OSError, WhisperError) as error:
            raise EngineError(f"{model_dir}: cannot load the transcription engine: {error}") from error
    if kind == "kokoro":
        from eukhe.tiny.kokoro import Kokoro, SpeechError

        try:
            return KokoroEngine(Kokoro.load(model_dir))
        except (OSError, SpeechError) as error:
            raise EngineError(f"{model_dir}: cannot load the speech engine: {error}") from error
    raise EngineError(f"{spec_file}: unknown engine kind {kind!r}")


class WhisperEngine:
    def __init__(self, whisper: Any) -> None:
        self.whisper = whisper

    def transcribe(self, wav: bytes, language: str) -> str:
        from eukhe.tiny.whisper import WhisperError

        try:
            return str(self.whisper.transcribe(read_wav(wav), language))
        except (AudioError, WhisperError) as error:
            raise RequestError(str(error)) from error


class KokoroEngine:
    def __init__(self, kokoro: Any) -> None:
        self.kokoro = kokoro

    def speak(self, text: str, voice: str, speed: float) -> bytes:
        from eukhe.tiny.kokoro import SpeechError

        try:
            return write_wav(self.kokoro.speak(text, voice, speed))
        except SpeechError as error:
            raise RequestError(str(error)) from error
