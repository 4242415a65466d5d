"""judge_untraced (spec/mutate.py): the "no tests" mutants of a run get every judge of the area,
from the workspace's mutants/ with the mutant switched on, and their verdicts go into mutmut's
.meta files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spec import mutate

JUDGE = '''
import os


def test_the_mutant_is_told_apart() -> None:
    assert os.environ["MUTANT_UNDER_TEST"] != "eukhe.m.x_f__mutmut_1"
'''


def test_no_tests_mutants_are_judged_by_every_judge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    space = tmp_path / "build" / "mutate" / "x"
    mutants = space / "mutants"
    (mutants / "eukhe").mkdir(parents=True)
    (mutants / "spec").symlink_to(mutate.ROOT / "spec")  # the plugin (-p spec.mutate), as also_copy lays it
    (mutants / "test_judge.py").write_text(JUDGE, encoding="utf-8")
    codes = {"eukhe.m.x_f__mutmut_1": 33, "eukhe.m.x_f__mutmut_2": 33, "eukhe.m.x_g__mutmut_1": 1, "eukhe.m.x_h__mutmut_1": None}
    meta = mutants / "eukhe" / "m.py.meta"
    meta.write_text(json.dumps({"exit_code_by_key": codes}), encoding="utf-8")
    monkeypatch.setattr(mutate, "ROOT", tmp_path)

    outcomes = mutate.judge_untraced("x", ["test_judge.py"])

    assert outcomes == {"eukhe.m.x_f__mutmut_1": "killed", "eukhe.m.x_f__mutmut_2": "survived"}
    assert json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"] == codes | {"eukhe.m.x_f__mutmut_1": 1, "eukhe.m.x_f__mutmut_2": 0}
    assert json.loads((space / mutate.UNTRACED).read_text(encoding="utf-8")) == outcomes


def test_only_the_samples_mutants_are_judged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    space = tmp_path / "build" / "mutate" / "x"
    mutants = space / "mutants"
    (mutants / "eukhe").mkdir(parents=True)
    (mutants / "spec").symlink_to(mutate.ROOT / "spec")
    (mutants / "test_judge.py").write_text(JUDGE, encoding="utf-8")
    (mutants / "eukhe" / "m.py.meta").write_text(json.dumps({"exit_code_by_key": {"eukhe.m.x_f__mutmut_1": 33, "eukhe.m.x_f__mutmut_2": 33}}), encoding="utf-8")
    (space / "sample.json").write_text(json.dumps({"mutants": ["eukhe.m.x_f__mutmut_2"]}), encoding="utf-8")
    monkeypatch.setattr(mutate, "ROOT", tmp_path)

    assert mutate.judge_untraced("x", ["test_judge.py"]) == {"eukhe.m.x_f__mutmut_2": "survived"}


def test_with_survivors_the_survivors_are_judged_by_every_judge_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """mutmut ran against a survivor only the judges its stats pass tied to the function; every
    judge tells some apart. A mutant recorded as equivalent is left as it is."""
    space = tmp_path / "build" / "mutate" / "x"
    mutants = space / "mutants"
    (mutants / "eukhe").mkdir(parents=True)
    (mutants / "spec").symlink_to(mutate.ROOT / "spec")
    (mutants / "test_judge.py").write_text(JUDGE, encoding="utf-8")
    codes = {"eukhe.m.x_f__mutmut_1": 0, "eukhe.m.x_f__mutmut_2": 0, "eukhe.m.x_f__mutmut_3": 0, "eukhe.m.x_g__mutmut_1": 1}
    meta = mutants / "eukhe" / "m.py.meta"
    meta.write_text(json.dumps({"exit_code_by_key": codes}), encoding="utf-8")
    equivalent = tmp_path / "spec" / "equivalent_mutants.tsv"
    equivalent.parent.mkdir()
    equivalent.write_text("eukhe.m.x_f__mutmut_3\tthe same\n", encoding="utf-8")
    monkeypatch.setattr(mutate, "ROOT", tmp_path)
    monkeypatch.setattr(mutate, "EQUIVALENT", equivalent)

    assert mutate.judge_untraced("x", ["test_judge.py"]) == {}  # without survivors: no "no tests" mutant here
    outcomes = mutate.judge_untraced("x", ["test_judge.py"], survivors=True)

    assert outcomes == {"eukhe.m.x_f__mutmut_1": "killed", "eukhe.m.x_f__mutmut_2": "survived"}
    assert json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"] == codes | {"eukhe.m.x_f__mutmut_1": 1}
