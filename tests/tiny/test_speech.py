"""Speech and dictation (S9): WAV in and out, Whisper's audio features, the whisper-style
transcription and kokoro-style speech pipelines on small real ONNX graphs of the documented
signatures against their NumPy references (spec.oracles.tiny), and ``eukhe say`` /
``eukhe transcribe`` through a real worker. The tests on the catalog's real weights skip with
the reason when the weights are absent."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from eukhe.tiny import catalog, paths, uses
from eukhe.tiny.audio import KOKORO_RATE, WHISPER_RATE, Audio, AudioError, read_wav, resample, write_wav
from eukhe.tiny.kokoro import VOCAB, Kokoro, Lexicon, SpeechError, pieces, read_voice
from eukhe.tiny.whisper import CHUNK_SAMPLES, Whisper, WhisperError, log_mel_spectrogram, mel_filters
from spec.oracles import tiny as oracle

N_MELS, DIM, EOT = 80, 8, 256
VOCAB_SIZE = 256 + len(oracle.WHISPER_SPECIALS)
PROMPT = [257, 258, 260, 261]  # <|startoftranscript|> <|en|> <|transcribe|> <|notimestamps|>


def _tone(hz: float, seconds: float, rate: int = WHISPER_RATE) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return (0.5 * np.sin(2 * np.pi * hz * t)).astype(np.float32)


# ------------------------------------------------------------------------------------ WAV


def test_wav_round_trip_and_formats() -> None:
    samples = np.array([0.0, 0.5, -0.5, 1.0, -1.0, 2.0, np.nan], dtype=np.float32)
    back = read_wav(write_wav(Audio(samples, 24000)))
    assert back.rate == 24000
    np.testing.assert_allclose(back.samples, [0.0, 0.5, -0.5, 32767 / 32768, -32767 / 32768, 32767 / 32768, 0.0], atol=1 / 32768)
    import io
    import wave

    for width, raw in ((1, bytes([128, 255, 0, 128])), (4, np.array([0, 2**30, -(2**31), 0], "<i4").tobytes())):
        out = io.BytesIO()
        with wave.open(out, "wb") as w:
            w.setnchannels(2)
            w.setsampwidth(width)
            w.setframerate(8000)
            w.writeframes(raw)
        stereo = read_wav(out.getvalue())
        assert stereo.rate == 8000 and len(stereo.samples) == 2  # two channels averaged to mono
    with pytest.raises(AudioError):
        read_wav(b"RIFF not a wav")
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(3)
        w.setframerate(8000)
        w.writeframes(b"\0\0\0")
    with pytest.raises(AudioError):
        read_wav(out.getvalue())


def test_resample_keeps_length_and_tone() -> None:
    tone = Audio(_tone(440, 0.5, 48000), 48000)
    down = resample(tone, WHISPER_RATE)
    assert len(down.samples) == 8000 and down.rate == WHISPER_RATE
    np.testing.assert_allclose(down.samples[100:200], _tone(440, 0.5)[100:200], atol=1e-3)
    assert resample(Audio(np.zeros(0, np.float32), 8000), WHISPER_RATE).samples.size == 0


# ----------------------------------------------------------------------------- features


@pytest.mark.parametrize("n_mels", [80, 128])
def test_mel_filters_match_the_slaney_reference(n_mels: int) -> None:
    got = mel_filters(n_mels)
    assert got.shape == (n_mels, 201)
    np.testing.assert_allclose(got, oracle.reference_mel_filters(n_mels), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("kind", ["silence", "tone", "noise", "short", "long"])
def test_log_mel_matches_the_reference(kind: str) -> None:
    rng = np.random.default_rng(5)
    samples = {
        "silence": np.zeros(WHISPER_RATE, np.float32),
        "tone": _tone(440, 2.0),
        "noise": (rng.standard_normal(3 * WHISPER_RATE) * 0.1).astype(np.float32),
        "short": _tone(3000, 0.01),
        "long": (rng.standard_normal(CHUNK_SAMPLES + 500) * 0.1).astype(np.float32),
    }[kind]
    got = log_mel_spectrogram(samples)
    assert got.shape == (80, 3000) and got.dtype == np.float32
    np.testing.assert_allclose(got, oracle.reference_log_mel(samples), atol=2e-4)


def test_a_tone_peaks_in_its_mel_band() -> None:
    features = log_mel_spectrogram(_tone(1000, 1.0))
    centres = [oracle.slaney_mel_to_hz(oracle.slaney_hz_to_mel(8000) * (i + 1) / 81) for i in range(80)]
    assert int(np.argmax(features[:, 10:90].mean(axis=1))) == int(np.argmin([abs(c - 1000) for c in centres]))


# ---------------------------------------------------------------------------- whisper


def _install_whisper(where: Path, seed: int) -> Path:
    oracle.build_whisper(where, N_MELS, DIM, VOCAB_SIZE, EOT, seed)
    (where / "tokenizer.json").write_text(json.dumps(oracle.whisper_tokenizer_document()), encoding="utf-8")
    (where / "engine.json").write_text(json.dumps({"kind": "whisper"}), encoding="utf-8")
    return where


def _whisper_reference(samples: np.ndarray, seed: int) -> str:
    texts = []
    for start in range(0, max(len(samples), 1), CHUNK_SAMPLES):
        features = oracle.reference_log_mel(samples[start : start + CHUNK_SAMPLES])
        texts.append(oracle.reference_bytes_text(oracle.reference_whisper(features, PROMPT, N_MELS, DIM, VOCAB_SIZE, EOT, seed)))
    return " ".join(t for t in texts if t)


@pytest.mark.parametrize("seed", [1, 2])
def test_whisper_transcription_matches_the_numpy_reference(tmp_path: Path, seed: int) -> None:
    whisper = Whisper.load(_install_whisper(tmp_path, seed))
    samples = _tone(440 * seed, 1.5)
    features = log_mel_spectrogram(samples)
    tokens = whisper.decode(whisper.encode(features), whisper.prompt("en"))
    want = oracle.reference_whisper(oracle.reference_log_mel(samples), PROMPT, N_MELS, DIM, VOCAB_SIZE, EOT, seed)
    assert tokens == want and 0 < len(tokens) < 448 - len(PROMPT)  # ended by <|endoftext|>
    assert whisper.transcribe(Audio(samples, WHISPER_RATE)) == _whisper_reference(samples, seed)


def test_whisper_long_audio_goes_by_chunks_and_resamples(tmp_path: Path) -> None:
    whisper = Whisper.load(_install_whisper(tmp_path, 3))
    samples = (np.random.default_rng(9).standard_normal(CHUNK_SAMPLES + WHISPER_RATE) * 0.2).astype(np.float32)
    assert whisper.transcribe(Audio(samples, WHISPER_RATE)) == _whisper_reference(samples, 3)
    at_8k = Audio(samples[::2].copy(), 8000)
    assert whisper.transcribe(at_8k) == _whisper_reference(resample(at_8k, WHISPER_RATE).samples, 3)


def test_whisper_refuses_what_it_cannot_run(tmp_path: Path) -> None:
    where = _install_whisper(tmp_path / "m", 1)
    whisper = Whisper.load(where)
    with pytest.raises(WhisperError):
        whisper.prompt("xx")
    # the decoder in the encoder's place: not the documented signature
    with pytest.raises(WhisperError):
        Whisper(where / "onnx" / "decoder_model.onnx", where / "onnx" / "decoder_model.onnx", whisper.tokenizer)
    with pytest.raises(WhisperError):
        Whisper(where / "onnx" / "encoder_model.onnx", where / "onnx" / "encoder_model.onnx", whisper.tokenizer)
    (tmp_path / "bad.onnx").write_bytes(b"not a graph")
    with pytest.raises(WhisperError):
        Whisper(tmp_path / "bad.onnx", where / "onnx" / "decoder_model.onnx", whisper.tokenizer)
    doc = oracle.whisper_tokenizer_document()
    doc["added_tokens"] = [t for t in doc["added_tokens"] if t["content"] != "<|notimestamps|>"]
    (where / "tokenizer.json").write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(WhisperError, match="notimestamps"):
        Whisper.load(where)
    (where / "tokenizer.json").write_text("{}", encoding="utf-8")
    with pytest.raises(WhisperError):
        Whisper.load(where)
    (where / "tokenizer.json").write_text(json.dumps({"model": {"vocab": {"a": "b"}}}), encoding="utf-8")
    with pytest.raises(WhisperError):
        Whisper.load(where)


# ----------------------------------------------------------------------------- kokoro

LEXICON = {"hello": "həlˈO", "world": "wˈɜɹld", "the": {"DEFAULT": "ðə", "DT": "ði"}, "Paris": "pˈæɹɪs", "odd": 7}


def _install_kokoro(where: Path, seed: int, rows: int = 510) -> np.ndarray:
    oracle.build_kokoro(where / "onnx" / "model_fp16.onnx", seed)
    (where / "voices").mkdir(parents=True, exist_ok=True)
    voice = np.random.default_rng(seed).standard_normal((rows, 256)).astype("<f4")
    (where / "voices" / "af_heart.bin").write_bytes(voice.tobytes())
    (where / "misaki").mkdir(exist_ok=True)
    (where / "misaki" / "us_gold.json").write_text(json.dumps(LEXICON), encoding="utf-8")
    (where / "engine.json").write_text(json.dumps({"kind": "kokoro"}), encoding="utf-8")
    return voice


def test_lexicon_phonemes_and_pieces(tmp_path: Path) -> None:
    _install_kokoro(tmp_path, 1)
    (tmp_path / "misaki" / "us_silver.json").write_text(json.dumps({"world": "wɜːld", "moon": "mˈun"}), encoding="utf-8")
    lexicon = Lexicon.load(tmp_path)
    assert lexicon.phonemes("Hello, the WORLD!") == "həlˈO, ðə wˈɜɹld!"
    assert lexicon.phonemes("paris? moon…") == "pˈæɹɪs? mˈun…"
    assert lexicon.phonemes("  ") == "" and lexicon.phonemes("— hello") == "həlˈO"
    for unknown in ("hello zyzzyva", "odd"):
        with pytest.raises(SpeechError):
            lexicon.phonemes(unknown)
    assert pieces("ab cd") == [[VOCAB["a"], VOCAB["b"], VOCAB[" "], VOCAB["c"], VOCAB["d"]]]
    assert pieces("ab cd", limit=3) == [[VOCAB["a"], VOCAB["b"]], [VOCAB["c"], VOCAB["d"]]]
    assert pieces("abcdefh", limit=3) == [[VOCAB[c] for c in "abc"], [VOCAB[c] for c in "def"], [VOCAB["h"]]]
    assert pieces("#% ab") == [[VOCAB["a"], VOCAB["b"]]] and pieces("") == []
    assert len(VOCAB) == 114 and len(set(VOCAB.values())) == 114 and max(VOCAB.values()) < oracle.KOKORO_VOCAB
    for bad in ("[]", "{not json"):
        (tmp_path / "misaki" / "us_gold.json").write_text(bad, encoding="utf-8")
        with pytest.raises(SpeechError):
            Lexicon.load(tmp_path)
    with pytest.raises(SpeechError):
        Lexicon.load(tmp_path / "nowhere")


@pytest.mark.parametrize("speed", [1.0, 0.7])
def test_kokoro_speech_matches_the_numpy_reference(tmp_path: Path, speed: float) -> None:
    voice = _install_kokoro(tmp_path, 4)
    kokoro = Kokoro.load(tmp_path)
    text = "Hello, the world!"
    audio = kokoro.speak(text, "af_heart", speed)
    assert audio.rate == KOKORO_RATE
    (ids,) = pieces(Lexicon.load(tmp_path).phonemes(text))
    np.testing.assert_allclose(audio.samples, oracle.reference_kokoro(ids, voice[len(ids)], speed, 4), rtol=1e-5, atol=1e-5)
    assert kokoro.speak("", "af_heart", 1.0).samples.size == 0


def test_kokoro_long_text_goes_by_pieces(tmp_path: Path) -> None:
    voice = _install_kokoro(tmp_path, 6)
    kokoro = Kokoro.load(tmp_path)
    text = " ".join(["hello world"] * 60)  # 60 * 13 phonemes: two pieces
    parts = pieces(Lexicon.load(tmp_path).phonemes(text))
    assert len(parts) == 2
    want = np.concatenate([oracle.reference_kokoro(p, voice[len(p)], 1.0, 6) for p in parts])
    np.testing.assert_allclose(kokoro.speak(text).samples, want, rtol=1e-5, atol=1e-5)


def test_kokoro_refuses_what_it_cannot_run(tmp_path: Path) -> None:
    _install_kokoro(tmp_path, 1, rows=3)
    kokoro = Kokoro.load(tmp_path)
    with pytest.raises(SpeechError):
        kokoro.speak("hello world")  # more phonemes than the voice has styles
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(SpeechError):
            kokoro.speak("hello", speed=bad)
    for name in ("", "../x", ".hidden", "absent"):
        with pytest.raises(SpeechError):
            kokoro.voice(name)
    (tmp_path / "voices" / "odd.bin").write_bytes(b"\0" * 10)
    with pytest.raises(SpeechError):
        read_voice(tmp_path / "voices" / "odd.bin")
    oracle.build_whisper(tmp_path / "w", N_MELS, DIM, VOCAB_SIZE, EOT, 1)
    with pytest.raises(SpeechError):
        Kokoro(tmp_path / "w" / "onnx" / "decoder_model.onnx", tmp_path / "voices", kokoro.lexicon)
    (tmp_path / "bad.onnx").write_bytes(b"not a graph")
    with pytest.raises(SpeechError):
        Kokoro(tmp_path / "bad.onnx", tmp_path / "voices", kokoro.lexicon)
    (tmp_path / "onnx" / "second.onnx").write_bytes(b"")
    with pytest.raises(SpeechError):
        Kokoro.load(tmp_path)


# ------------------------------------------------- through the worker and the command line


@pytest.fixture
def speech_agent(agent_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An agent dir with whisper-base and kokoro installed as small graphs; the catalog's pins
    (kokoro's sizes) are lifted for the test's process so the small files count as installed."""
    _install_whisper(paths.model_dir(agent_dir, "whisper-base"), 2)
    _install_kokoro(paths.model_dir(agent_dir, "kokoro"), 3)
    unpinned = tuple(
        catalog.Model(m.id, m.kind, m.repo, None, tuple(catalog.File(f.path) for f in m.files), m.engine, m.dtype) for m in catalog.CATALOG
    )
    monkeypatch.setattr(catalog, "CATALOG", unpinned)
    return agent_dir


def test_speak_and_transcribe_through_the_worker(speech_agent: Path) -> None:
    wav = uses.speak(speech_agent, "hello world", voice="af_heart", speed=1.0)
    spoken = read_wav(wav)
    voice = read_voice(paths.model_dir(speech_agent, "kokoro") / "voices" / "af_heart.bin")
    (ids,) = pieces("həlˈO wˈɜɹld")
    want = np.round(np.clip(oracle.reference_kokoro(ids, voice[len(ids)], 1.0, 3), -1, 1) * 32767) / 32768
    assert spoken.rate == KOKORO_RATE
    np.testing.assert_allclose(spoken.samples, want, atol=2 / 32768)
    text = uses.transcribe(speech_agent, wav)
    assert text == _whisper_reference(resample(spoken, WHISPER_RATE).samples, 2)
    from eukhe.tiny.client import TinyClient, WorkerError

    with TinyClient(speech_agent, "whisper-base", dtype="fp32") as client:
        hears: list[dict[str, object]] = [{"op": "transcribe", "audio": "%%%"}, {"op": "transcribe", "audio": "UklGRg=="}, {"op": "transcribe"}, {"op": "speak", "text": "x"}, {"op": "chat", "messages": []}]
        for bad in hears:
            with pytest.raises(WorkerError):
                client.request(bad)
    with TinyClient(speech_agent, "kokoro", dtype="fp16") as client:
        speaks: list[dict[str, object]] = [{"op": "speak", "text": "zyzzyva"}, {"op": "speak", "text": "hello", "speed": 0}, {"op": "speak", "text": "hello", "speed": True}, {"op": "speak", "text": "hello", "voice": "nobody"}]
        for one in speaks:
            with pytest.raises(WorkerError):
                client.request(one)


def test_echo_engine_speaks_and_transcribes(agent_dir: Path) -> None:
    from tests.tiny.conftest import MODEL

    from eukhe.tiny.client import TinyClient, WorkerError

    with TinyClient(agent_dir, MODEL) as client:
        wav = client.speak("hey")
        assert read_wav(wav).samples.size == 300
        assert client.transcribe(wav) == f"300 samples at {KOKORO_RATE} Hz"
        with pytest.raises(WorkerError):
            client.transcribe(b"not a wav")


def test_cli_say_and_transcribe(speech_agent: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from eukhe.cli import main

    out = tmp_path / "said.wav"
    assert main(["--agent-dir", str(speech_agent), "say", "hello, world", "--out", str(out)]) == 0
    spoken = read_wav(out.read_bytes())
    assert spoken.rate == KOKORO_RATE and spoken.samples.size > 0
    capsys.readouterr()
    assert main(["--agent-dir", str(speech_agent), "transcribe", str(out)]) == 0
    assert capsys.readouterr().out == _whisper_reference(resample(spoken, WHISPER_RATE).samples, 2) + "\n"
    assert main(["--agent-dir", str(speech_agent), "say", "zyzzyva", "--out", str(out)]) == 1
    assert "WorkerError: bad_request" in capsys.readouterr().err
    assert main(["--agent-dir", str(speech_agent), "say", " ", "--out", str(out)]) == 2
    assert main(["--agent-dir", str(speech_agent), "say", "hello", "--speed", "0", "--out", str(out)]) == 2
    assert main(["--agent-dir", str(speech_agent), "transcribe", str(tmp_path / "absent.wav")]) == 2
    assert main(["--agent-dir", str(speech_agent), "say", "hello", "--out", str(tmp_path / "no" / "dir.wav")]) == 2  # bad input: --out in no directory
    assert "no directory" in capsys.readouterr().err


def test_cli_say_and_transcribe_without_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No model installed: Unavailable naming the role (exit 1); no player and no --out: exit 1."""
    wav = tmp_path / "a.wav"
    wav.write_bytes(write_wav(Audio(_tone(440, 0.1), WHISPER_RATE)))
    run = [sys.executable, "-m", "eukhe", "--agent-dir", str(tmp_path / "agent")]
    said = subprocess.run([*run, "say", "hello", "--out", str(tmp_path / "o.wav")], capture_output=True, text=True, timeout=60)
    assert said.returncode == 1 and "Unavailable: no model available for role speech" in said.stderr
    heard = subprocess.run([*run, "transcribe", str(wav)], capture_output=True, text=True, timeout=60)
    assert heard.returncode == 1 and "role dictation" in heard.stderr
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    from eukhe.cli import main

    assert main(["--agent-dir", str(tmp_path / "agent"), "say", "hello"]) == 1


def test_cli_say_plays_through_the_first_player(speech_agent: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    played = tmp_path / "played.wav"
    (bin_dir / "paplay").write_text(f"#!/bin/sh\ncp \"$1\" {played}\n", encoding="utf-8")
    (bin_dir / "aplay").write_text("#!/bin/sh\necho wrong player >&2\nexit 3\n", encoding="utf-8")
    for f in bin_dir.iterdir():
        f.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    from eukhe.cli import main

    assert main(["--agent-dir", str(speech_agent), "say", "hello"]) == 0
    assert read_wav(played.read_bytes()).rate == KOKORO_RATE
    (bin_dir / "paplay").unlink()
    assert main(["--agent-dir", str(speech_agent), "say", "hello"]) == 1


# ----------------------------------------------------------------- the catalog's real weights


def _real(model_id: str) -> Path:
    from eukhe import paths as agent_paths

    agent = agent_paths.agent_dir(None)
    if catalog.install_state(agent, catalog.find(model_id)) != catalog.INSTALLED:
        pytest.skip(f"{model_id} is not installed in {agent} (eukhe tiny-models download {model_id}): the real-weights test needs it")
    return agent


def test_real_kokoro_speaks_and_whisper_reads_back() -> None:
    """The seed's whisper::round_trip_tests: Kokoro speaks, Whisper reads it back."""
    agent = _real("kokoro")
    _real("whisper-base")
    wav = uses.speak(agent, "Hello world.")
    assert "hello" in uses.transcribe(agent, wav).lower()
