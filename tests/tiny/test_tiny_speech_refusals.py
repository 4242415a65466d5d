"""Speech and transcription refusals to the letter (S9 engine: CPU only; typed errors that name
what was wrong): each refusal of the kokoro and whisper pipelines says exactly what and where,
so a refusal for the wrong reason (a check that no longer holds, caught by a later one) cannot
pass for the right one; and each ONNX session the tiny engines open runs on the CPU provider
alone, silently. On small real ONNX graphs of the documented signatures (spec.oracles.tiny)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from eukhe.tiny.kokoro import Kokoro, SpeechError, read_voice
from eukhe.tiny.text import TextRunner
from eukhe.tiny.whisper import Whisper, WhisperError
from spec.oracles import tiny as oracle
from tests.tiny import graphs
from tests.tiny.test_speech import _install_kokoro, _install_whisper


def _message(error: type[Exception], call: object, *args: object) -> str:
    assert callable(call)
    with pytest.raises(error) as caught:
        call(*args)
    return str(caught.value)


# ----------------------------------------------------------------------------- kokoro


@pytest.mark.parametrize("name", ["", "a/b", "/abs", ".hidden", "../x", "."], ids=["empty", "slash", "absolute", "dot-file", "parent", "dot"])
def test_a_voice_name_that_is_no_file_name_is_refused_as_such(tmp_path: Path, name: str) -> None:
    _install_kokoro(tmp_path, 1, rows=3)
    (tmp_path / "voices" / ".hidden.bin").write_bytes(b"\0" * 4 * 256)  # there, and refused all the same
    (tmp_path / "voices" / "a").mkdir()
    (tmp_path / "voices" / "a" / "b.bin").write_bytes(b"\0" * 4 * 256)
    kokoro = Kokoro.load(tmp_path)
    assert _message(SpeechError, kokoro.voice, name) == f"bad voice name {name!r}"


def test_a_voice_file_that_is_absent_or_not_rows_of_styles_says_so(tmp_path: Path) -> None:
    _install_kokoro(tmp_path, 1, rows=3)
    kokoro = Kokoro.load(tmp_path)
    absent = tmp_path / "voices" / "absent.bin"
    assert _message(SpeechError, kokoro.voice, "absent") == f"no voice file {absent}: [Errno 2] No such file or directory: '{absent}'"
    for size in (0, 10, 4 * 256 + 4):
        odd = tmp_path / "voices" / "odd.bin"
        odd.write_bytes(b"\0" * size)
        assert _message(SpeechError, read_voice, odd) == f"{odd}: {size} bytes is not rows of 256 float32"
    odd.write_bytes(b"\0" * 4 * 256 * 2)
    assert read_voice(odd).shape == (2, 256)


@pytest.mark.parametrize("speed", [0.0, -1.0, float("nan"), float("inf"), float("-inf")], ids=["zero", "negative", "nan", "inf", "minus-inf"])
def test_a_speed_that_is_no_positive_number_is_refused_naming_it(tmp_path: Path, speed: float) -> None:
    _install_kokoro(tmp_path, 1, rows=3)
    kokoro = Kokoro.load(tmp_path)
    assert _message(SpeechError, kokoro.speak, "hello", "af_heart", speed) == f"speed must be a positive number, got {speed}"


def test_more_phonemes_than_the_voice_has_styles_names_both(tmp_path: Path) -> None:
    _install_kokoro(tmp_path, 1, rows=3)
    kokoro = Kokoro.load(tmp_path)
    assert _message(SpeechError, kokoro.speak, "hello") == "5 phonemes: the voice has styles for at most 2"  # həlˈO


def test_a_graph_of_another_signature_names_its_inputs(tmp_path: Path) -> None:
    _install_kokoro(tmp_path, 1)
    where = _install_whisper(tmp_path / "w", 1)
    decoder = where / "onnx" / "decoder_model.onnx"
    kokoro = Kokoro.load(tmp_path)
    assert _message(SpeechError, Kokoro, decoder, tmp_path / "voices", kokoro.lexicon) == (
        f"{decoder}: inputs ['encoder_hidden_states', 'input_ids'] are not the documented signature ['input_ids', 'speed', 'style']"
    )
    (tmp_path / "onnx" / "second.onnx").write_bytes(b"")
    assert _message(SpeechError, Kokoro.load, tmp_path) == f"{tmp_path}/onnx: 2 graphs, want exactly one"


# ---------------------------------------------------------------------------- whisper


def test_whisper_graphs_of_another_signature_name_their_inputs(tmp_path: Path) -> None:
    where = _install_whisper(tmp_path / "m", 1)
    whisper = Whisper.load(where)
    encoder, decoder = where / "onnx" / "encoder_model.onnx", where / "onnx" / "decoder_model.onnx"
    assert _message(WhisperError, Whisper, decoder, decoder, whisper.tokenizer) == (
        f"{decoder}: inputs ['encoder_hidden_states', 'input_ids'] are not the documented encoder signature"
    )
    assert _message(WhisperError, Whisper, encoder, encoder, whisper.tokenizer) == (
        f"{encoder}: inputs ['input_features'] are not the documented decoder signature"
    )
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a graph")
    assert _message(WhisperError, Whisper, bad, decoder, whisper.tokenizer).startswith(f"{bad}: cannot load: ")
    assert _message(WhisperError, whisper.prompt, "xx") == "no language token <|xx|> in the tokenizer"
    assert whisper.prompt("en") == [257, 258, 260, 261]


def test_a_whisper_tokenizer_without_its_special_tokens_names_each(tmp_path: Path) -> None:
    where = _install_whisper(tmp_path / "m", 1)
    doc = oracle.whisper_tokenizer_document()
    gone = {"<|notimestamps|>", "<|endoftext|>"}
    doc["added_tokens"] = [t for t in doc["added_tokens"] if t["content"] not in gone]
    (where / "tokenizer.json").write_text(json.dumps(doc), encoding="utf-8")
    assert _message(WhisperError, Whisper.load, where) == "the tokenizer lacks <|endoftext|>, <|notimestamps|>"


# ------------------------------------------------------------------- ONNX sessions: CPU only


def test_every_tiny_session_runs_on_the_cpu_provider_alone_and_says_nothing(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """S9 engine: CPU only. A provider name onnxruntime does not know is not an error there: it
    prints an "EP Error" and falls back; so the sessions are checked silent as well as CPU."""
    _install_kokoro(tmp_path / "k", 1)
    where = _install_whisper(tmp_path / "w", 1)
    capfd.readouterr()
    text = TextRunner(graphs.build(tmp_path / "t.onnx", 64, 16, 1))
    kokoro = Kokoro.load(tmp_path / "k")
    whisper = Whisper.load(where)
    for session in (text.session, kokoro.session, whisper.encoder, whisper.decoder):
        assert session.get_providers() == ["CPUExecutionProvider"]
    assert capfd.readouterr() == ("", "")
    assert np.isfinite(text.logits([1, 2])).all()
