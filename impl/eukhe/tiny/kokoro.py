"""Kokoro-style speech around its ONNX graph (S9 speech, the seed's kokoro.rs), CPU only.

Text to phonemes: the misaki lexicon (``misaki/us_gold.json``, then ``misaki/us_silver.json``
when present: a word maps to its phonemes, or to a map of part-of-speech tags to phonemes whose
``DEFAULT`` is taken). A word is looked up as written, lower-cased, then capitalised; a word
in no lexicon is an error naming it (this build has no fallback network). Punctuation that
Kokoro's vocabulary has is kept, attached to the word before it; words are joined by spaces.

Phonemes to ids: Kokoro's phoneme vocabulary (``VOCAB``; characters outside it are dropped),
in pieces of at most 510 phonemes cut at spaces, each piece framed by the pad id 0.

The graph's documented signature (onnx-community's Kokoro-82M export): inputs ``input_ids``
int64 ``[1, n + 2]``, ``style`` float ``[1, 256]`` and ``speed`` float ``[1]``; its first output
is the waveform, float ``[1, samples]`` at 24 kHz. The style is row ``n`` (the piece's phoneme
count) of the voice file ``voices/<voice>.bin``: float32 little-endian rows of 256. Any other
input fails to load.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import regex

from eukhe import strict_json
from eukhe.tiny.audio import KOKORO_RATE, Audio

MAX_PHONEMES = 510
STYLE = 256
INPUTS = frozenset({"input_ids", "style", "speed"})
DEFAULT_VOICE = "af_heart"
LEXICONS = ("misaki/us_gold.json", "misaki/us_silver.json")

# Kokoro's phoneme vocabulary, 114 entries: hexgrad/Kokoro-82M config.json "vocab", as
# transcribed in sjvrensburg/squigl crates/squigl-models/src/kokoro.rs (VOCAB, commit 3db0392a).
VOCAB: dict[str, int] = {
    ";": 1, ":": 2, ",": 3, ".": 4, "!": 5, "?": 6, "—": 9, "…": 10, '"': 11, "(": 12, ")": 13,
    "“": 14, "”": 15, " ": 16, "\u0303": 17, "ʣ": 18, "ʥ": 19, "ʦ": 20, "ʨ": 21, "ᵝ": 22, "ꭧ": 23,
    "A": 24, "I": 25, "O": 31, "Q": 33, "S": 35, "T": 36, "W": 39, "Y": 41, "ᵊ": 42,
    "a": 43, "b": 44, "c": 45, "d": 46, "e": 47, "f": 48, "h": 50, "i": 51, "j": 52, "k": 53,
    "l": 54, "m": 55, "n": 56, "o": 57, "p": 58, "q": 59, "r": 60, "s": 61, "t": 62, "u": 63,
    "v": 64, "w": 65, "x": 66, "y": 67, "z": 68, "ɑ": 69, "ɐ": 70, "ɒ": 71, "æ": 72, "β": 75,
    "ɔ": 76, "ɕ": 77, "ç": 78, "ɖ": 80, "ð": 81, "ʤ": 82, "ə": 83, "ɚ": 85, "ɛ": 86, "ɜ": 87,
    "ɟ": 90, "ɡ": 92, "ɥ": 99, "ɨ": 101, "ɪ": 102, "ʝ": 103, "ɯ": 110, "ɰ": 111, "ŋ": 112,
    "ɳ": 113, "ɲ": 114, "ɴ": 115, "ø": 116, "ɸ": 118, "θ": 119, "œ": 120, "ɹ": 123, "ɾ": 125,
    "ɻ": 126, "ʁ": 128, "ɽ": 129, "ʂ": 130, "ʃ": 131, "ʈ": 132, "ʧ": 133, "ʊ": 135, "ʋ": 136,
    "ʌ": 138, "ɣ": 139, "ɤ": 140, "χ": 142, "ʎ": 143, "ʒ": 147, "ʔ": 148, "ˈ": 156, "ˌ": 157,
    "ː": 158, "ʰ": 162, "ʲ": 164, "↓": 169, "→": 171, "↗": 172, "↘": 173, "ᵻ": 177,
}  # fmt: skip
PUNCTUATION = frozenset(";:,.!?—…\"()“”")
_TOKENS = regex.compile(r"[\p{L}\p{N}'’-]+|[^\s\p{L}\p{N}]")


class SpeechError(Exception):
    """Text, a voice or a graph the speech pipeline cannot run."""


class Lexicon:
    def __init__(self, tables: list[dict[str, Any]]) -> None:
        self.tables = tables

    @classmethod
    def load(cls, model_dir: Path) -> Lexicon:
        tables = []
        for name in LEXICONS:
            path = model_dir / name
            if not path.exists():
                continue
            try:
                table = strict_json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as error:
                raise SpeechError(f"{path}: not a JSON lexicon: {error}") from error
            if not isinstance(table, dict):
                raise SpeechError(f"{path}: not a JSON object")
            tables.append(table)
        if not tables:
            raise SpeechError(f"{model_dir}: no misaki lexicon ({LEXICONS[0]})")
        return cls(tables)

    def word(self, word: str) -> str | None:
        for table in self.tables:
            for form in (word, word.lower(), word.capitalize()):
                entry = table.get(form)
                if isinstance(entry, dict):
                    entry = entry.get("DEFAULT")
                if isinstance(entry, str):
                    return entry
        return None

    def phonemes(self, text: str) -> str:
        out: list[str] = []
        for token in _TOKENS.findall(text):
            if token in PUNCTUATION:
                if out:
                    out[-1] += token
                continue
            if not any(c.isalnum() for c in token):
                continue
            found = self.word(token)
            if found is None:
                raise SpeechError(f"no phonemes for {token!r}: it is in no lexicon")
            out.append(found)
        return " ".join(out)


def pieces(phonemes: str, limit: int = MAX_PHONEMES) -> list[list[int]]:
    """The ids of ``phonemes`` (characters outside the vocabulary dropped) in pieces of at most
    ``limit``, cut at spaces (a word longer than ``limit`` is cut where it must)."""
    out: list[list[int]] = []
    current: list[int] = []
    for word in phonemes.split(" "):
        ids = [VOCAB[c] for c in word if c in VOCAB]
        if not ids:
            continue
        joined = [*current, VOCAB[" "], *ids] if current else ids
        if len(joined) <= limit:
            current = joined
            continue
        if current:
            out.append(current)
        while len(ids) > limit:
            out.append(ids[:limit])
            ids = ids[limit:]
        current = ids
    if current:
        out.append(current)
    return out


def read_voice(path: Path) -> np.ndarray[Any, Any]:
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise SpeechError(f"no voice file {path}: {error}") from error
    if not raw or len(raw) % (4 * STYLE):
        raise SpeechError(f"{path}: {len(raw)} bytes is not rows of {STYLE} float32")
    return np.frombuffer(raw, dtype="<f4").reshape(-1, STYLE)


class Kokoro:
    def __init__(self, graph: Path, voices: Path, lexicon: Lexicon) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        try:
            self.session = ort.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])
        except Exception as error:  # onnxruntime raises its own exception types
            raise SpeechError(f"{graph}: cannot load: {error}") from error
        names = {i.name for i in self.session.get_inputs()}
        if names != INPUTS:
            raise SpeechError(f"{graph}: inputs {sorted(names)} are not the documented signature {sorted(INPUTS)}")
        self.output = self.session.get_outputs()[0].name
        self.voices = voices
        self.lexicon = lexicon

    @classmethod
    def load(cls, model_dir: Path) -> Kokoro:
        graphs = sorted((model_dir / "onnx").glob("*.onnx"))
        if len(graphs) != 1:
            raise SpeechError(f"{model_dir}/onnx: {len(graphs)} graphs, want exactly one")
        return cls(graphs[0], model_dir / "voices", Lexicon.load(model_dir))

    def voice(self, name: str) -> np.ndarray[Any, Any]:
        if not name or "/" in name or name.startswith("."):
            raise SpeechError(f"bad voice name {name!r}")
        return read_voice(self.voices / f"{name}.bin")

    def run(self, ids: list[int], style: np.ndarray[Any, Any], speed: float) -> np.ndarray[Any, Any]:
        if len(ids) >= len(style):
            raise SpeechError(f"{len(ids)} phonemes: the voice has styles for at most {len(style) - 1}")
        feed = {
            "input_ids": np.array([[0, *ids, 0]], dtype=np.int64),
            "style": np.asarray(style[len(ids)], dtype=np.float32)[None, :],
            "speed": np.array([speed], dtype=np.float32),
        }
        (wave,) = self.session.run([self.output], feed)
        return np.asarray(wave, dtype=np.float32).reshape(-1)

    def speak(self, text: str, voice: str = DEFAULT_VOICE, speed: float = 1.0) -> Audio:
        if not np.isfinite(speed) or speed <= 0:
            raise SpeechError(f"speed must be a positive number, got {speed}")
        style = self.voice(voice)
        parts = [self.run(ids, style, speed) for ids in pieces(self.lexicon.phonemes(text))]
        samples = np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)
        return Audio(samples, KOKORO_RATE)
