"""`eukhe directors simulate` at the front door (issue 10): scripts that are binary, not UTF-8,
out of order, hold NaN or bad statuses; limit flags typed as the cvars they stand for. A script
that is refused leaves no session behind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import InProcess, RunProcess

from eukhe.session import Store


def _script(tmp_path: Path, content: bytes | str, name: str = "script.jsonl") -> Path:
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return path


GOOD = '{"input": "hi"}\n{"reply": {"text": "ok"}}\n'


def _refused(done: object, agent: Path) -> str:
    line: str = done.one_error_line()  # type: ignore[attr-defined]
    assert done.status == 2, done  # type: ignore[attr-defined]
    assert line.startswith("eukhe directors simulate: "), line
    assert Store(agent / "sessions").ids() == [], "a refused script made a session"
    return line


def test_a_binary_script_is_refused_naming_the_line(inproc: InProcess, agent: Path, tmp_path: Path) -> None:
    script = _script(tmp_path, bytes(range(256)) * 4)
    done = inproc("directors", "simulate", "--script", str(script))
    assert _refused(done, agent) == f"eukhe directors simulate: {script}:2: not UTF-8 text (byte 128: b'\\x80')"


def test_a_non_utf8_script_names_the_line_and_byte(inproc: InProcess, agent: Path, tmp_path: Path) -> None:
    script = _script(tmp_path, b'{"input": "hi"}\n{"goal": "caf\xe9"}\n')
    done = inproc("directors", "simulate", "--script", str(script))
    assert _refused(done, agent) == f"eukhe directors simulate: {script}:2: not UTF-8 text (byte 29: b'\\xe9')"


def test_a_script_with_a_bom_reads(inproc: InProcess, agent: Path, tmp_path: Path) -> None:
    script = _script(tmp_path, "\ufeff" + GOOD)
    done = inproc("directors", "simulate", "--script", str(script))
    assert done.status == 0 and "line 2: step" in done.out


def test_a_goal_status_line_before_any_goal_is_refused(run: RunProcess, inproc: InProcess, agent: Path, tmp_path: Path) -> None:
    script = _script(tmp_path, '{"input": "hi"}\n{"goal_status": "paused"}\n{"goal": "x"}\n')
    for runner in (inproc, run):
        done = runner("directors", "simulate", "--script", str(script))
        assert _refused(done, agent) == f"eukhe directors simulate: {script}:2: goal_status before any goal (a goal line must come first)"


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_in_a_script_is_refused(inproc: InProcess, agent: Path, tmp_path: Path, constant: str) -> None:
    script = _script(tmp_path, '{"input": "x"}\n{"reply": {"text": "a", "tool_calls": [{"name": "b", "arguments": {"x": %s}}]}}\n' % constant)
    done = inproc("directors", "simulate", "--script", str(script))
    assert _refused(done, agent) == f"eukhe directors simulate: {script}:2: the line is not JSON: {constant} is not a JSON number"


def test_a_bogus_goal_status_in_a_script_is_refused(inproc: InProcess, agent: Path, tmp_path: Path) -> None:
    script = _script(tmp_path, '{"goal": "x"}\n{"goal_status": "bogus"}\n')
    done = inproc("directors", "simulate", "--script", str(script))
    line = _refused(done, agent)
    assert line.startswith(f"eukhe directors simulate: {script}:2: goal_status: Input should be 'active'"), line


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ('{"reply": {"text": 3}}\n', "reply.text: Input should be a valid string"),
        ('{"reply": {"tool_calls": [{"result": "r"}]}}\n', "reply.tool_calls.0.name: Field required"),
        ('{"reply": {"tool_calls": [{"name": ""}]}}\n', "reply.tool_calls.0.name: String should have at least 1 character"),
        ('{"reply": {"bogus": 1}}\n', "reply.bogus: Extra inputs are not permitted"),
        ('{"autonomous": "yes"}\n', "autonomous: Input should be a valid boolean"),
        ('{"input": "a", "goal": "b"}\n', "expected an object with exactly one of the keys"),
        ("[1, 2]\n", "expected an object with exactly one of the keys"),
        ('{"input": "\\ud800"}\n', "a string in the line is not UTF-8 text"),
        ("[" * 5000 + "]" * 5000 + "\n", "the line is nested more than 100 brackets deep"),
        ('{"input": "x"\n', "the line is not JSON"),
    ],
)
def test_malformed_script_lines_are_named(inproc: InProcess, agent: Path, tmp_path: Path, content: str, says: str) -> None:
    script = _script(tmp_path, '{"goal": "g"}\n\n' + content)
    done = inproc("directors", "simulate", "--script", str(script))
    line = _refused(done, agent)
    assert line.startswith(f"eukhe directors simulate: {script}:3: {says}"), line


def test_a_missing_or_directory_script_is_bad_input(inproc: InProcess, agent: Path, tmp_path: Path) -> None:
    for path in (tmp_path / "nosuch.jsonl", tmp_path, tmp_path / "nosuch" / "x.jsonl"):
        done = inproc("directors", "simulate", "--script", str(path))
        assert "--script" in _refused(done, agent)
    empty = _script(tmp_path, "\n\n")
    assert "the script has no lines" in _refused(inproc("directors", "simulate", "--script", str(empty)), agent)


@pytest.mark.parametrize("flag", ["--max-steps", "--stack-cap", "--stall-steps"])
@pytest.mark.parametrize("value", ["-1", "x", "1.5", ""])
def test_limit_flags_have_the_type_of_their_cvar(inproc: InProcess, agent: Path, tmp_path: Path, flag: str, value: str) -> None:
    script = _script(tmp_path, GOOD)
    done = inproc("directors", "simulate", "--script", str(script), flag, value)
    line = _refused(done, agent)
    assert f"argument {flag}: directors." in line and "is a Nat" in line, line


def test_a_28_digit_max_steps_is_refused(inproc: InProcess, agent: Path, tmp_path: Path) -> None:
    script = _script(tmp_path, GOOD)
    done = inproc("directors", "simulate", "--script", str(script), "--max-steps", "9" * 28)
    assert done.status == 2 and "Traceback" not in done.err
    assert done.one_error_line().startswith("eukhe directors simulate: ")


def test_a_28_digit_stack_cap_is_refused(inproc: InProcess, agent: Path, tmp_path: Path) -> None:
    script = _script(tmp_path, GOOD)
    done = inproc("directors", "simulate", "--script", str(script), "--stack-cap", "9" * 28)
    assert done.status == 2 and done.one_error_line().startswith("eukhe directors simulate: ")


def test_every_document_written_by_a_simulation_reads_back(inproc: InProcess, agent: Path, tmp_path: Path) -> None:
    """Nothing lost: a run with odd but valid limits writes only documents that read back."""
    from eukhe.directors.document import DIRECTORS_DOC, from_document

    script = _script(tmp_path, '{"goal": "g"}\n{"input": "x"}\n{"command": "/force bash --tries 3"}\n{"reply": {"text": "t"}}\n')
    for limits in (["--max-steps", "0"], ["--stack-cap", "0"], ["--stall-steps", "0"], ["--stack-cap", "1", "--max-steps", "1"]):
        done = inproc("directors", "simulate", "--script", str(script), *limits)
        assert done.status == 0, (limits, done)
    for session_id in Store(agent / "sessions").ids():
        with Store(agent / "sessions").open(session_id, writer=False) as session:
            main = session.conversation()
            for entry in main.entries():
                value = main.documents_at(entry.id).get(DIRECTORS_DOC)
                if value is not None:
                    from_document(value)
            json.dumps(main.documents())


def test_the_help_describes_the_script_format(inproc: InProcess) -> None:
    done = inproc("directors", "simulate", "--help")
    assert done.status == 0
    for key in ('{"input"', '{"goal"', '{"goal_status"', '{"autonomous"', '{"command"', '{"reply"', "NaN", "FILE:LINE"):
        assert key in done.out, key


def test_an_endless_script_device_is_read_to_a_bound(inproc: InProcess, agent: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from eukhe.commands import directors

    monkeypatch.setattr(directors, "MAX_SCRIPT_BYTES", 4096)
    done = inproc("directors", "simulate", "--script", "/dev/zero")
    assert _refused(done, agent) == "eukhe directors simulate: /dev/zero: a script is at most 4,096 bytes"


def test_the_project_of_the_working_dir_sets_the_limits(inproc: InProcess, agent: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The run reads the settings of the project it runs in (its working dir): a trusted project's
    config.cfg lowering directors.stackCap refuses the second push; untrusted, it is not applied
    (S4b.5) and both layers go on the stack."""
    project = tmp_path / "project"
    (project / ".eukhe").mkdir(parents=True)
    (project / ".eukhe" / "config.cfg").write_text("set directors.stackCap 1\n", encoding="utf-8")
    script = _script(tmp_path, '{"input": "hi"}\n{"command": "/remind a"}\n{"command": "/remind b"}\n')
    monkeypatch.chdir(project)
    done = inproc("directors", "simulate", "--script", str(script))
    assert done.status == 0 and done.out.splitlines()[-1] == "line 3: /remind b -> stack [reminder:1, reminder:1]", done
    agent.mkdir(exist_ok=True)
    (agent / "settings.json").write_text(json.dumps({"trustedProjects": [str(project)]}), encoding="utf-8")
    done = inproc("directors", "simulate", "--script", str(script))
    assert done.status == 0, done
    assert done.out.splitlines()[-1] == "line 3: /remind b refused: the Director stack is full: 1 pushed layers, directors.stackCap 1", done
