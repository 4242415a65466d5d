"""Tiny models to the letter: what a wrong value, a dropped argument or a changed message in
eukhe/tiny would change, each seen from outside (written for the survivors of the seed-47
mutation sample, drawn before these tests)."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from tokenizers import Tokenizer as Reference

from eukhe.tiny import download, engine, paths, tasks, uses, whisper, worker
from eukhe.tiny.client import Crashed, TinyClient
from eukhe.tiny.tokenizer import Tokenizer, TokenizerError
from tests.tiny.conftest import LIMIT, MODEL, install_echo
from tests.tiny.tokenizer_files import train


def test_a_first_line_that_is_not_utf8_is_a_failed_launch(tmp_path: Path) -> None:
    """The launched worker's first line is read leniently: bytes that are not UTF-8 are no
    ready and no live, so the launch failed (the election ends crashed), never a decode error."""
    install_echo(tmp_path)

    def launcher(*_: Any) -> subprocess.Popen[bytes]:
        return subprocess.Popen([sys.executable, "-c", "import sys; sys.stdout.buffer.write(b'\\xffready\\n')"], stdout=subprocess.PIPE)

    client = TinyClient(tmp_path, MODEL, launcher=launcher, answer_deadline=LIMIT)
    with pytest.raises(Crashed, match="did not come up"):
        client.ensure()


def test_a_transcription_without_text_is_empty(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    client = TinyClient(tmp_path, MODEL)
    monkeypatch.setattr(client, "request", lambda message: {"ok": True})
    assert client.transcribe(b"RIFF") == ""


def test_an_install_onto_an_existing_model_names_both_the_error_and_the_target(tmp_path: Path) -> None:
    stage, target = tmp_path / "stage", tmp_path / "target"
    stage.mkdir()
    target.mkdir()
    (target / "engine.json").write_text("{}", encoding="utf-8")
    with pytest.raises(OSError) as caught:
        download._rename_noreplace(stage, target)
    assert caught.value.errno in (errno.EEXIST, errno.ENOTEMPTY)
    assert caught.value.strerror == os.strerror(caught.value.errno)
    assert caught.value.filename == str(target)


def test_the_echo_engine_holds_a_chat_until_released(tmp_path: Path) -> None:
    """The test seam of the worker tests: ``hold:DIR`` writes DIR/received, then reads
    DIR/release (a fifo the test opens when it lets the chat go; here a file already there)."""
    (tmp_path / "release").write_text("go", encoding="utf-8")
    answer = engine.EchoEngine().chat([{"role": "user", "content": f"hold:{tmp_path}"}], "> ", [], 8)
    assert (tmp_path / "received").exists() and answer == f"> hold:{tmp_path}"


def test_a_transcription_the_model_refuses_says_why() -> None:
    class Refusing:
        def transcribe(self, audio: object, language: str) -> str:
            raise whisper.WhisperError("audio longer than the model reads")

    with pytest.raises(engine.RequestError, match="^audio longer than the model reads$"):
        engine.WhisperEngine(Refusing()).transcribe(engine.write_wav(engine.Audio(engine.np.zeros(16, engine.np.float32), 16000)), "en")
    with pytest.raises(engine.RequestError, match="WAV"):
        engine.WhisperEngine(Refusing()).transcribe(b"not a wav", "en")


def test_added_tokens_match_longest_first_as_tokenizers_does(tmp_path: Path) -> None:
    reference = train("gpt2")
    reference.add_tokens(["<x", "<x-y>"])
    path = tmp_path / "tokenizer.json"
    reference.save(str(path))
    ours = Tokenizer.from_file(path)
    loaded = Reference.from_file(str(path))
    for text in ("<x-y>", "a <x-y> b <x c", "<x<x-y>"):
        assert ours.encode(text) == loaded.encode(text, add_special_tokens=False).ids, text


def test_a_model_other_than_bpe_is_refused_by_its_type() -> None:
    document = train("gpt2").to_str()
    with pytest.raises(TokenizerError, match='model "WordPiece" is not supported'):
        Tokenizer.from_document(json.loads(document) | {"model": {"type": "WordPiece", "vocab": {}}})


def test_whisper_vocabulary_that_is_no_map_says_so(tmp_path: Path) -> None:
    path = tmp_path / "tokenizer.json"
    path.write_text('{"model": {"vocab": {"a": "1"}}}', encoding="utf-8")
    with pytest.raises(whisper.WhisperError, match=r"tokenizer.json: model.vocab is not a map of strings to ids$"):
        whisper.decoding_tokenizer(path)


class _Recording:
    """A client standing in for TinyClient: it records each call's arguments."""

    def __init__(self, *_: object, **__: object) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def __enter__(self) -> _Recording:
        return self

    def __exit__(self, *_: object) -> None:
        return None

    def chat(self, messages: object, **kwargs: Any) -> str:
        self.calls.append(("chat", kwargs))
        return ""

    def speak(self, text: str, **kwargs: Any) -> bytes:
        self.calls.append(("speak", kwargs))
        return b""


def test_the_eval_sends_each_requests_token_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[_Recording] = []
    monkeypatch.setattr(uses, "TinyClient", lambda *a, **k: made.append(_Recording()) or made[-1])
    uses.eval_on_local(tmp_path, MODEL)
    want = tasks.translate_request(tasks.EVAL_LANGUAGES[0], "x").max_tokens
    assert made[0].calls and all(kwargs.get("max_tokens") == want for _, kwargs in made[0].calls)


def test_speech_sends_its_speed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    client = _Recording()
    monkeypatch.setattr(uses, "resolve", lambda *a, **k: "kokoro")
    monkeypatch.setattr(uses, "client_for", lambda *a: client)
    uses.speak(tmp_path, "hello", voice="bf_emma", speed=1.5)
    assert client.calls == [("speak", {"voice": "bf_emma", "speed": 1.5})]


@pytest.mark.parametrize("reply", ["Title:Fixing the parser", "title: Fixing the parser", "**Title:** Fixing the parser"])
def test_a_title_loses_its_label(reply: str) -> None:
    assert uses.parse_title(reply) == "Fixing the parser"


def test_the_build_id_carries_the_installed_version() -> None:
    from importlib import metadata

    assert worker.build_id().startswith(metadata.version("eukhe") + "+")


def test_speech_without_a_voice_speaks_af_heart(tmp_path: Path) -> None:
    voices: list[str] = []

    class Speaking:
        def speak(self, text: str, voice: str, speed: float) -> bytes:
            voices.append(voice)
            return b""

    served = worker.Worker(tmp_path, MODEL, "cpu", "q4", 600000)
    served.engine = Speaking()
    assert served._speak({"text": "hi"})["ok"] is True
    assert voices == ["af_heart"]


def test_an_idle_worker_removes_its_socket_and_returns(tmp_path: Path) -> None:
    install_echo(tmp_path)
    served = worker.Worker(tmp_path, MODEL, "cpu", "q4", 20)
    assert served.take_seat()
    serving = threading.Thread(target=served.serve_forever, daemon=True)
    serving.start()
    serving.join(LIMIT)  # LIMIT only stops a hung test; an idle worker returns after 20 ms
    assert not serving.is_alive()
    assert not paths.socket_path(tmp_path, MODEL).exists()
