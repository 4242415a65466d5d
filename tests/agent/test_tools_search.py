"""ls, glob and grep over a real tree: sorted results, hidden entries and symlinks out of the
working directory skipped, each refusal, clipping by the memory's cap_text."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from eukhe.agent.tools import ToolResult
from eukhe.agent.tools.search import matches
from eukhe.memory.lines import CAP, cap_text

Call = Callable[..., ToolResult]


@pytest.fixture
def tree(workdir: Path, tmp_path: Path) -> Path:
    """src/{b.py, a.py, pkg/c.py, notes.txt}, README.md, .hidden/h.py, .env, a binary, a symlink
    to a directory outside and one to a file outside."""
    for path, text in {
        "src/b.py": "import os\nprint('b')\n",
        "src/a.py": "def main():\n    print('a')\n",
        "src/pkg/c.py": "PRINT = 1\nprint(PRINT)\n",
        "src/notes.txt": "print nothing\n",
        "README.md": "# print me\n",
        ".hidden/h.py": "print('hidden')\n",
        ".env": "print=secret\n",
    }.items():
        (workdir / path).parent.mkdir(parents=True, exist_ok=True)
        (workdir / path).write_text(text)
    (workdir / "src" / "blob.bin").write_bytes(b"print\x00\x01")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "o.py").write_text("print('outside')\n")
    (workdir / "out").symlink_to(outside)
    (workdir / "src" / "o_link.py").symlink_to(outside / "o.py")
    return workdir


# -- ls --------------------------------------------------------------------------------------------


def test_ls_lists_sorted_with_directories_marked(call: Call, tree: Path) -> None:
    assert call("ls").text == "\n".join([".env", ".hidden/", "README.md", "out/", "src/"])
    assert call("ls", path="src").text == "\n".join(["a.py", "b.py", "blob.bin", "notes.txt", "o_link.py", "pkg/"])


def test_ls_refusals(call: Call, tree: Path) -> None:
    assert call("ls", path="README.md").kind == "not_a_directory"
    assert call("ls", path="nope").kind == "not_found"
    assert call("ls", path="..").kind == "outside_workdir"
    assert call("ls", path="out").kind == "outside_workdir"  # a symlink to a directory outside


def test_ls_of_an_empty_directory_says_so(call: Call, workdir: Path) -> None:
    (workdir / "empty").mkdir()
    assert call("ls", path="empty").text == "(empty directory)"


# -- glob ------------------------------------------------------------------------------------------


def test_glob_matches_at_any_depth_sorted(call: Call, tree: Path) -> None:
    assert call("glob", pattern="**/*.py").text == "\n".join(["src/a.py", "src/b.py", "src/pkg/c.py"])
    assert call("glob", pattern="src/*").text == "\n".join(["src/a.py", "src/b.py", "src/blob.bin", "src/notes.txt", "src/pkg/"])
    assert call("glob", pattern="*.md").text == "README.md"


def test_glob_skips_hidden_unless_named(call: Call, tree: Path) -> None:
    assert ".hidden" not in call("glob", pattern="**").text
    assert call("glob", pattern=".hidden/*.py").text == ".hidden/h.py"
    assert call("glob", pattern=".*").text == "\n".join([".env", ".hidden/"])


def test_glob_never_leaves_the_working_directory(call: Call, tree: Path) -> None:
    everything = call("glob", pattern="**").text.split("\n")
    assert "out/" not in everything and not any(p.startswith("out/") for p in everything)
    assert "src/o_link.py" not in everything
    for pattern in ("../*", "/etc/*", "src/../../*"):
        assert call("glob", pattern=pattern).kind == "outside_workdir", pattern


def test_glob_with_no_match_says_so(call: Call, tree: Path) -> None:
    result = call("glob", pattern="**/*.rs")
    assert (result.text, result.is_error) == ("no path matches **/*.rs", False)


@pytest.mark.parametrize(
    ("path", "pattern", "expected"),
    [
        ("a/b/c.py", "**/*.py", True),
        ("c.py", "**/*.py", True),
        ("a/b/c.py", "a/**", True),
        ("a/b/c.py", "*.py", False),
        ("a/.b/c.py", "**/*.py", False),
        ("a/.b/c.py", "a/.b/*.py", True),
        ("a/b/c.py", "a/*/c.py", True),
        ("a/b/x/c.py", "a/*/c.py", False),
        ("A.PY", "*.py", False),
    ],
)
def test_glob_matching_segment_by_segment(path: str, pattern: str, expected: bool) -> None:
    assert matches(path.split("/"), pattern.split("/")) is expected


# -- grep ------------------------------------------------------------------------------------------


def test_grep_prints_path_line_text_in_path_order(call: Call, tree: Path) -> None:
    assert call("grep", pattern=r"print\(").text == "\n".join([
        "src/a.py:2:    print('a')",
        "src/b.py:2:print('b')",
        "src/pkg/c.py:2:print(PRINT)",
    ])


def test_grep_narrows_by_glob_on_name_or_path(call: Call, tree: Path) -> None:
    assert call("grep", pattern="print", glob="*.txt").text == "src/notes.txt:1:print nothing"
    assert call("grep", pattern="print", glob="src/pkg/*").text == "src/pkg/c.py:2:print(PRINT)"
    assert call("grep", pattern="(?i)PRINT", path="src/pkg").text == "src/pkg/c.py:1:PRINT = 1\nsrc/pkg/c.py:2:print(PRINT)"


def test_grep_searches_one_file(call: Call, tree: Path) -> None:
    assert call("grep", pattern="me", path="README.md").text == "README.md:1:# print me"


def test_grep_skips_hidden_binary_and_outside(call: Call, tree: Path) -> None:
    found = call("grep", pattern="print").text
    for absent in (".hidden", ".env", "blob.bin", "outside", "o_link"):
        assert absent not in found
    assert call("grep", pattern="print", path=".hidden").text == ".hidden/h.py:1:print('hidden')"


def test_grep_numbers_lines_as_read_does(call: Call, workdir: Path) -> None:
    (workdir / "gaps.txt").write_text("a\n\nb\n")
    assert call("grep", pattern="^$").text == "gaps.txt:2:"  # the final newline ends line 3, it starts no line 4
    assert call("read", path="gaps.txt").text == "     1\ta\n     2\t\n     3\tb"


def test_grep_refusals(call: Call, tree: Path) -> None:
    bad = call("grep", pattern="(unclosed")
    assert bad.kind == "bad_pattern" and "missing )" in bad.text
    assert call("grep", pattern="x", path="nope").kind == "not_found"
    assert call("grep", pattern="x", path="../").kind == "outside_workdir"
    none = call("grep", pattern="zebra")
    assert (none.text, none.is_error) == ("no line matches zebra", False)


def test_grep_output_is_clipped_head_and_tail(call: Call, workdir: Path) -> None:
    lines = [f"match {i:05}" for i in range(5000)]
    (workdir / "many.txt").write_text("\n".join(lines))
    whole = "\n".join(f"many.txt:{i + 1}:{line}" for i, line in enumerate(lines))
    result = call("grep", pattern="match")
    assert len(whole) > CAP and result.text == cap_text(whole)
    assert result.text.startswith("many.txt:1:match 00000") and result.text.endswith("many.txt:5000:match 04999")
