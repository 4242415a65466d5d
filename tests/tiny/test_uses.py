"""Roles, translation and dictation recorders (the seed's eukhe-core tiny::tests, eukhe-tiny
tasks::tests and dictation::tests with /bin/sh recorders, under their names)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import wave
from pathlib import Path

import pytest

from eukhe.tiny import catalog, paths, recorder, roles, tasks, uses
from tests.tiny.conftest import Holding, joined

pytestmark = pytest.mark.usefixtures("idle_env")


def _install(agent_dir: Path, model_id: str) -> None:
    where = paths.model_dir(agent_dir, model_id)
    for f in catalog.find(model_id).files:
        (where / f.path).parent.mkdir(parents=True, exist_ok=True)
        (where / f.path).write_bytes(b"x")
    (where / "engine.json").write_text(json.dumps({"kind": "echo"}), encoding="utf-8")


def test_role_resolution(tmp_path: Path) -> None:
    with pytest.raises(roles.Unavailable) as caught:
        uses.resolve("tiny", tmp_path)
    assert "tiny" in str(caught.value) and "lfm2.5-230m" in str(caught.value)
    assert uses.resolve("tiny", tmp_path, session_model="prov/m", session_usable=True) == "prov/m"
    _install(tmp_path, "lfm2.5-350m")
    assert uses.resolve("tiny", tmp_path, session_model="prov/m", session_usable=True) == "lfm2.5-350m"
    assert uses.resolve("tiny", tmp_path, primary="prov/m", session_model="prov/m", session_usable=True) == "prov/m"
    with pytest.raises(roles.Unavailable):  # explicit [] = primary only
        uses.resolve("tiny", tmp_path, primary="absent", fallback=())
    with pytest.raises(roles.Unavailable):  # speech is not a text role: no session model
        uses.resolve("speech", tmp_path, session_model="prov/m", session_usable=True)
    assert roles.chain("judge", None, ("x",), "s") == ("x",)


def test_translate_prefers_lfm2_5_350m(tmp_path: Path) -> None:
    assert roles.chain("translate", None, None, None)[:2] == ("lfm2.5-350m", "lfm2.5-230m")
    _install(tmp_path, "lfm2.5-230m")
    assert uses.resolve("translate", tmp_path) == "lfm2.5-230m"
    _install(tmp_path, "lfm2.5-350m")
    assert uses.resolve("translate", tmp_path) == "lfm2.5-350m"


def test_translate_request() -> None:
    request = tasks.translate_request("German", "hello")
    assert request.messages == [{"role": "user", "content": "Translate from English to German.\nEnglish: hello"}]
    assert request.prefill == "German:" and request.stop == ["\n"]
    assert tasks.translate_request("French", "two\nlines").stop == []
    assert tasks.parse_translation("German", "hello", "German: Hallo\nmore") == "Hallo"
    assert tasks.parse_translation("German", "two\nlines", " zwei\nZeilen") == "zwei\nZeilen"


def test_echo_is_unchanged() -> None:
    with pytest.raises(tasks.TranslationError.Unchanged):
        tasks.parse_translation("German", "See you tomorrow.", "German: see you TOMORROW")
    with pytest.raises(tasks.TranslationError.Empty):
        tasks.parse_translation("German", "hello", "German:   \nHallo")
    assert tasks.parse_translation("German", "123 !", "German: 123 !") == "123 !"  # letterless input is exempt


def test_chrf() -> None:
    assert tasks.chrf("Hallo", "Hallo") == pytest.approx(100.0)
    assert tasks.chrf("", "Hallo") == 0.0
    assert 0 < tasks.chrf("Hallo Welt", "Hallo") < 100
    assert len(tasks.EVAL_SENTENCES) == 10 and len(tasks.EVAL_LANGUAGES) == 4


def test_cli_translate_echo_prints_nothing(agent_dir: Path) -> None:
    run = [sys.executable, "-m", "eukhe", "--agent-dir", str(agent_dir), "translate", "German", "hello"]
    none = subprocess.run(run, capture_output=True, text=True, timeout=60)
    assert none.returncode == 1 and none.stdout == "" and "Unavailable" in none.stderr
    _install(agent_dir, "lfm2.5-350m")
    echoed = subprocess.run(run, capture_output=True, text=True, timeout=120)  # its worker is stopped by agent_dir
    assert echoed.returncode == 1 and echoed.stdout == ""
    assert echoed.stderr.strip() == "eukhe translate: TranslationError::Unchanged: translation to German: the reply is the input unchanged"
    bad = subprocess.run([*run[:-2], "", "x"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2


def _recorders(tmp_path: Path, scripts: dict[str, str]) -> str:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, body in scripts.items():
        script = bin_dir / name
        script.write_text("#!/bin/sh\n" + body, encoding="utf-8")
        script.chmod(0o755)
    return str(bin_dir)


def test_first_found(tmp_path: Path) -> None:
    path = _recorders(tmp_path, {"parec": "printf 'AB' \n", "arecord": "exit 3\n"})
    found = recorder.find_recorder(path)
    assert found.program == "parec"
    take = recorder.Take(found)
    wav = take.stop(interrupt=False)
    with wave.open(str(wav)) as audio:
        assert (audio.getframerate(), audio.getnchannels(), audio.getsampwidth()) == (16000, 1, 2)
        assert audio.readframes(10) == b"AB"
    os.unlink(wav)


def test_stderr(tmp_path: Path) -> None:
    path = _recorders(tmp_path, {"pw-record": "echo 'no such device' >&2; exit 1\n", "arecord": "printf 'AB'\n"})
    take = recorder.Take(recorder.find_recorder(path))
    with pytest.raises(recorder.RecorderError, match="pw-record failed.*no such device"):
        take.stop(interrupt=False)  # no next program: arecord is never tried


def test_no_audio(tmp_path: Path) -> None:
    path = _recorders(tmp_path, {"arecord": "exit 0\n"})
    with pytest.raises(recorder.RecorderError, match="no audio"):
        recorder.Take(recorder.find_recorder(path)).stop(interrupt=False)


def test_no_program(tmp_path: Path) -> None:
    with pytest.raises(recorder.RecorderError, match="no recorder on PATH"):
        recorder.find_recorder(_recorders(tmp_path, {}))


def test_abort_stops_recorder(tmp_path: Path) -> None:
    path = _recorders(tmp_path, {"arecord": "exec cat\n"})
    take = recorder.Take(recorder.find_recorder(path))
    take.cancel()
    assert take.process.returncode is not None


def test_a_recorder_that_never_ends_fails_within_its_deadline(tmp_path: Path) -> None:
    """A recorder that ignores SIGINT (and one never asked to stop) does not hang the take: past
    its deadline it is killed and the take fails naming what it waited for."""
    os.mkfifo(tmp_path / "trapped")
    path = _recorders(tmp_path, {"arecord": f"trap '' INT\n: > {tmp_path / 'trapped'}\nexec sleep 100000\n"})
    trapped = Holding(tmp_path, "trapped")
    take = recorder.Take(recorder.find_recorder(path))
    trapped.wait()  # SIGINT is ignored from here on
    with pytest.raises(recorder.RecorderError, match=r"arecord did not end within 0.05 s of SIGINT"):
        take.stop(deadline=0.05)
    assert take.process.returncode is not None
    take = recorder.Take(recorder.find_recorder(path))  # no reader of trapped now: it never even gets to sleep
    with pytest.raises(recorder.RecorderError, match=r"arecord did not end by itself within 0.05 s"):
        take.stop(interrupt=False, deadline=0.05)
    assert take.process.returncode is not None


def test_judge_model_for_model_less_classify(tmp_path: Path) -> None:
    assert uses.local_classifiers() == ("local/lfm2.5-230m", "local/lfm2.5-350m")
    with pytest.raises(roles.Unavailable) as caught:
        uses.judge_model(tmp_path)
    assert "judge" in str(caught.value) and "local/lfm2.5-230m" in str(caught.value)
    assert uses.judge_model(tmp_path, primary="openai/gpt-x", provider_classifiers=frozenset({"openai/gpt-x"})) == "openai/gpt-x"
    _install(tmp_path, "lfm2.5-350m")
    assert uses.judge_model(tmp_path) == "local/lfm2.5-350m"
    assert uses.judge_model(tmp_path, primary="openai/gpt-x") == "local/lfm2.5-350m"  # no auth: not available


def test_titles_in_the_background(agent_dir: Path) -> None:
    import threading

    got: list[str | None] = []
    done = threading.Event()

    def on_title(title: str | None) -> None:
        got.append(title)
        done.set()

    assert uses.start_title(agent_dir, "x", on_title, generate=False) is None
    assert uses.start_title(agent_dir, "x", on_title, scripted=True) is None
    assert uses.start_title(agent_dir, "x", on_title, named=True) is None
    thread = uses.start_title(agent_dir, "fix the build", on_title)  # no tiny model installed here
    assert thread is not None
    joined(thread)
    assert got == [None]
    _install(agent_dir, "lfm2.5-230m")
    thread = uses.start_title(agent_dir, "fix the build", on_title)
    assert thread is not None
    joined(thread)
    assert got[1] is not None and got[1].startswith("Write a short title")  # the echo engine's reply, first line
    assert uses.parse_title('"Title: Fix the build"\nmore') == "Fix the build"
    assert uses.parse_title("  \n") is None


def test_eval_harness_counts_echoes_and_chrf() -> None:
    perfect = uses.run_eval(lambda lang, s: f"{lang}: " + uses.EVAL_REFERENCES[lang][tasks.EVAL_SENTENCES.index(s)])
    assert all(r["echoes"] == 0 and r["chrf"] == pytest.approx(100.0) for r in perfect.values())
    echo = uses.run_eval(lambda lang, s: f"{lang}: {s}\nmore")
    assert [r["echoes"] for r in echo.values()] == [10, 10, 10, 10]


def test_cli_translate_eval_on_an_echo_model(agent_dir: Path) -> None:
    run = [sys.executable, "-m", "eukhe", "--agent-dir", str(agent_dir), "translate-eval"]
    missing = subprocess.run([*run, "lfm2.5-230m"], capture_output=True, text=True, timeout=60)
    assert missing.returncode == 1 and "not installed" in missing.stderr
    assert subprocess.run([*run, "gpt-9"], capture_output=True, text=True, timeout=60).returncode == 2
    _install(agent_dir, "lfm2.5-230m")
    done = subprocess.run([*run, "lfm2.5-230m"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert sorted(result) == ["French", "German", "Portuguese", "Spanish"]
    assert all(r["echoes"] == 10 for r in result.values())  # the echo engine echoes every sentence
