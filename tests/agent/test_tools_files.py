"""read, write and edit on real files: each happy path, each refusal (the file left as it was),
clipping by the memory's cap_text, atomic writes that a failing rename cannot half-do, and edit's
exact replace against str.replace."""

from __future__ import annotations

import asyncio
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eukhe.agent.tools import ToolContext, ToolResult, files, run_call
from eukhe.agent.tools.base import DEFAULT_BASH_TIMEOUT_MS
from eukhe.memory.lines import CAP, cap_text

Call = Callable[..., ToolResult]


def numbered(lines: list[str], first: int = 1) -> str:
    return "\n".join(f"{n:6}\t{line}" for n, line in enumerate(lines, first))


def temp_files(directory: Path) -> list[str]:
    return [p.name for p in directory.iterdir() if p.name.endswith(".tmp")]


# -- read ------------------------------------------------------------------------------------------


def test_read_numbers_lines_as_cat_n(call: Call, workdir: Path) -> None:
    (workdir / "a.txt").write_text("one\ntwo\n\tthree\n")
    result = call("read", path="a.txt")
    assert not result.is_error
    assert result.text == "     1\tone\n     2\ttwo\n     3\t\tthree"


def test_read_offset_and_limit_read_a_part(call: Call, workdir: Path) -> None:
    (workdir / "a.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    assert call("read", path="a.txt", offset=4, limit=2).text == numbered(["line 4", "line 5"], 4)
    assert call("read", path="a.txt", offset=9).text == numbered(["line 9", "line 10"], 9)
    assert call("read", path="a.txt", limit=1).text == numbered(["line 1"])


def test_read_takes_an_absolute_path_inside_and_a_subdirectory(call: Call, workdir: Path) -> None:
    (workdir / "sub").mkdir()
    (workdir / "sub" / "b.txt").write_text("x")
    assert call("read", path=str(workdir / "sub" / "b.txt")).text == numbered(["x"])
    assert call("read", path="sub/../sub/b.txt").text == numbered(["x"])


def test_read_of_an_empty_file_says_so(call: Call, workdir: Path) -> None:
    (workdir / "empty").write_text("")
    result = call("read", path="empty")
    assert (result.text, result.is_error) == ("(empty file)", False)


def test_read_past_the_end_is_a_bad_range(call: Call, workdir: Path) -> None:
    (workdir / "a.txt").write_text("1\n2\n")
    result = call("read", path="a.txt", offset=3)
    assert result.is_error and result.kind == "bad_range"
    assert result.text == "bad_range: offset 3 is past the end of a.txt (2 lines)"


@pytest.mark.parametrize(
    ("content", "why"),
    [(b"text\x00more", "binary (it holds a NUL byte)"), (b"caf\xe9\n", "not UTF-8 text (byte 3)")],
)
def test_read_refuses_a_binary_file(call: Call, workdir: Path, content: bytes, why: str) -> None:
    (workdir / "blob").write_bytes(content)
    result = call("read", path="blob")
    assert result.is_error and result.kind == "binary_file"
    assert why in result.text


def test_read_refuses_a_nul_past_the_first_bytes_too(call: Call, workdir: Path) -> None:
    (workdir / "late").write_bytes(b"a\n" * 10_000 + b"\x00\n")
    result = call("read", path="late")
    assert result.kind == "binary_file" and "line 10001" in result.text


def test_read_refuses_what_is_missing_or_not_a_file(call: Call, workdir: Path) -> None:
    (workdir / "dir").mkdir()
    os.mkfifo(workdir / "fifo")
    assert call("read", path="nope").kind == "not_found"
    assert call("read", path="dir").kind == "is_directory"
    assert call("read", path="fifo").kind == "not_a_file"  # never opened: it would block


def test_read_refuses_paths_outside_the_working_directory(call: Call, workdir: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("no")
    (workdir / "link").symlink_to(secret)
    for path in ("../secret.txt", str(secret), "link", "/etc/passwd"):
        result = call("read", path=path)
        assert result.is_error and result.kind == "outside_workdir", path
        assert "no" not in result.text.split(": ", 1)[0]


def test_read_follows_a_symlink_that_stays_inside(call: Call, workdir: Path) -> None:
    (workdir / "real.txt").write_text("here")
    (workdir / "alias").symlink_to("real.txt")
    assert call("read", path="alias").text == numbered(["here"])


def test_read_clips_head_and_tail_with_the_memorys_cap_text(call: Call, workdir: Path) -> None:
    lines = [f"line {i} " + "x" * 40 for i in range(1, 2001)]
    (workdir / "big.txt").write_text("\n".join(lines) + "\n")
    whole = numbered(lines)
    assert len(whole) > CAP
    result = call("read", path="big.txt")
    assert result.text == cap_text(whole)
    assert len(result.text) == CAP
    assert result.text.startswith("     1\tline 1 ") and result.text.endswith("  2000\tline 2000 " + "x" * 40)
    assert "characters clipped" in result.text


def test_read_of_a_file_over_the_limit_needs_a_limit(call: Call, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "MAX_READ_BYTES", 50)
    (workdir / "big.txt").write_text("".join(f"{i}\n" for i in range(100)))
    refused = call("read", path="big.txt")
    assert refused.kind == "too_large" and "offset and limit" in refused.text
    assert call("read", path="big.txt", offset=50, limit=2).text == numbered(["49", "50"], 50)


# -- write -----------------------------------------------------------------------------------------


def test_write_creates_a_file_and_its_parents(call: Call, workdir: Path) -> None:
    result = call("write", path="a/b/c.txt", content="héllo\n")
    assert not result.is_error
    assert result.text == "wrote 7 bytes to a/b/c.txt"
    assert (workdir / "a" / "b" / "c.txt").read_bytes() == "héllo\n".encode()
    assert temp_files(workdir / "a" / "b") == []


def test_write_replaces_a_file_and_keeps_its_mode(call: Call, workdir: Path) -> None:
    target = workdir / "run.sh"
    target.write_text("old")
    target.chmod(0o750)
    assert not call("write", path="run.sh", content="new\r\nlines").is_error
    assert target.read_bytes() == b"new\r\nlines"
    assert stat.S_IMODE(target.stat().st_mode) == 0o750


def test_a_new_file_gets_the_umasks_mode(call: Call, workdir: Path) -> None:
    umask = os.umask(0o022)
    try:
        call("write", path="new.txt", content="x")
    finally:
        os.umask(umask)
    assert stat.S_IMODE((workdir / "new.txt").stat().st_mode) == 0o644


def test_write_through_a_symlink_inside_writes_its_target(call: Call, workdir: Path) -> None:
    (workdir / "real.txt").write_text("old")
    (workdir / "alias").symlink_to("real.txt")
    assert call("write", path="alias", content="new").text == "wrote 3 bytes to real.txt"
    assert (workdir / "alias").is_symlink() and (workdir / "real.txt").read_text() == "new"


def test_write_outside_the_working_directory_writes_nothing(call: Call, workdir: Path, tmp_path: Path) -> None:
    result = call("write", path="../escape.txt", content="x")
    assert result.kind == "outside_workdir"
    assert not (tmp_path / "escape.txt").exists()


def test_write_over_a_directory_fails_at_the_rename_and_keeps_it(call: Call, workdir: Path) -> None:
    (workdir / "d").mkdir()
    (workdir / "d" / "inside.txt").write_text("kept")
    result = call("write", path="d", content="x")
    assert result.is_error and result.kind == "is_directory"
    assert (workdir / "d" / "inside.txt").read_text() == "kept"
    assert temp_files(workdir) == []


def test_a_failing_rename_leaves_the_old_file_whole(call: Call, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = workdir / "keep.txt"
    target.write_text("old content")
    renames: list[object] = []

    def failing_replace(source: object, destination: object) -> None:
        renames.append(source)
        raise OSError(28, "No space left on device", str(destination))

    monkeypatch.setattr(os, "replace", failing_replace)
    result = call("write", path="keep.txt", content="new content")
    assert result.is_error and result.kind == "io_error"
    assert result.text == f"io_error: No space left on device: {target}"
    assert renames, "the write reached its rename"
    assert target.read_text() == "old content"
    assert temp_files(workdir) == []


def test_write_under_a_file_is_not_a_directory(call: Call, workdir: Path) -> None:
    (workdir / "file").write_text("x")
    assert call("write", path="file/inner.txt", content="y").kind == "not_a_directory"
    assert (workdir / "file").read_text() == "x"


# -- edit ------------------------------------------------------------------------------------------


def test_edit_replaces_the_one_occurrence(call: Call, workdir: Path) -> None:
    (workdir / "a.py").write_text("def f():\n    return 1\n")
    result = call("edit", path="a.py", old="return 1", new="return 2")
    assert (result.text, result.is_error) == ("replaced 1 occurrence in a.py", False)
    assert (workdir / "a.py").read_text() == "def f():\n    return 2\n"


def test_edit_with_all_replaces_every_occurrence(call: Call, workdir: Path) -> None:
    (workdir / "a.txt").write_text("x = 1; x = 1; x = 1")
    assert call("edit", path="a.txt", old="1", new="2", all=True).text == "replaced 3 occurrences in a.txt"
    assert (workdir / "a.txt").read_text() == "x = 2; x = 2; x = 2"


@pytest.mark.parametrize(
    ("content", "old", "new", "every", "kind"),
    [
        ("abc", "zzz", "y", False, "old_not_found"),
        ("abc", "zzz", "y", True, "old_not_found"),
        ("a b a", "a", "c", False, "old_not_unique"),
        ("aaa", "aa", "b", False, "old_not_unique"),  # two overlapping places: which was meant?
        ("abc", "b", "b", False, "unchanged"),
    ],
)
def test_edit_refusals_leave_the_file_as_it_was(call: Call, workdir: Path, content: str, old: str, new: str, every: bool, kind: str) -> None:
    target = workdir / "f.txt"
    target.write_text(content)
    before = target.stat()
    result = call("edit", path="f.txt", old=old, new=new, all=every)
    assert result.is_error and result.kind == kind
    assert target.read_text() == content
    assert (target.stat().st_ino, target.stat().st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_edit_refusal_texts_say_what_to_do(call: Call, workdir: Path) -> None:
    (workdir / "f.txt").write_text("a a")
    assert call("edit", path="f.txt", old="a", new="b").text == (
        "old_not_unique: old occurs more than once in f.txt: add context to make it unique, or set all"
    )
    assert call("edit", path="f.txt", old="q", new="b").text == (
        "old_not_found: old does not occur in f.txt: read the file and copy the text exactly"
    )


def test_edit_refuses_binary_missing_and_empty_old(call: Call, workdir: Path) -> None:
    (workdir / "blob").write_bytes(b"\x00abc")
    assert call("edit", path="blob", old="abc", new="x").kind == "binary_file"
    assert (workdir / "blob").read_bytes() == b"\x00abc"
    assert call("edit", path="none.txt", old="a", new="b").kind == "not_found"
    (workdir / "f.txt").write_text("abc")
    empty = call("edit", path="f.txt", old="", new="x")
    assert empty.kind == "invalid_arguments" and empty.text.startswith("invalid_arguments: old:")


def test_a_failing_edit_write_leaves_the_old_file_whole(call: Call, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = workdir / "f.txt"
    target.write_text("before")

    def failing_replace(source: object, destination: object) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "replace", failing_replace)
    assert call("edit", path="f.txt", old="before", new="after").kind == "io_error"
    assert target.read_text() == "before"
    assert temp_files(workdir) == []


text_pieces = st.text(alphabet="ab\né€ \t", max_size=30)


def edit_in_a_fresh_dir(content: str, old: str, new: str, every: bool) -> tuple[bool, str, str]:
    """(refused, the error's kind, the file afterwards), a real file in a new directory."""
    with tempfile.TemporaryDirectory() as directory:
        target = Path(directory) / "f.txt"
        target.write_bytes(content.encode())
        context = ToolContext(Path(directory), DEFAULT_BASH_TIMEOUT_MS)
        result = asyncio.run(run_call("edit", {"path": "f.txt", "old": old, "new": new, "all": every}, context))
        return result.is_error, result.kind, target.read_bytes().decode()


def places(text: str, old: str) -> int:
    return sum(1 for i in range(len(text)) if text.startswith(old, i))


@st.composite
def edits(draw: st.DrawFn) -> tuple[str, str, str]:
    """(content, old, new): old is often put into the content, so it occurs once or more."""
    old = draw(text_pieces.filter(bool))
    content = draw(text_pieces)
    if draw(st.booleans()):
        content = draw(text_pieces) + old + content
    return content, old, draw(text_pieces)


@settings(deadline=None)
@given(edits())
def test_edit_is_str_replace_once_exactly_when_old_occurs_once(edit: tuple[str, str, str]) -> None:
    content, old, new = edit
    refused, kind, after = edit_in_a_fresh_dir(content, old, new, False)
    count = places(content, old)
    if old == new:
        assert (refused, kind, after) == (True, "unchanged", content)
    elif count == 1:
        assert (refused, after) == (False, content.replace(old, new, 1))
    else:
        assert (refused, kind, after) == (True, "old_not_found" if count == 0 else "old_not_unique", content)


@settings(deadline=None)
@given(edits())
def test_edit_with_all_is_str_replace(edit: tuple[str, str, str]) -> None:
    content, old, new = edit
    refused, _, after = edit_in_a_fresh_dir(content, old, new, True)
    if old != new and old in content:
        assert (refused, after) == (False, content.replace(old, new))
    else:
        assert (refused, after) == (True, content)
