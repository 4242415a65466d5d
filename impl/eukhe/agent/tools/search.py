"""ls, glob and grep: finding things in the working directory, in a deterministic order.

- ls lists one directory: its entries sorted by name, a directory marked with a trailing '/'.
- glob matches a pattern against the paths of the working directory, a segment at a time
  (``**``: any number of directories); the matches come sorted, as paths relative to it. A
  pattern cannot be absolute or climb out with '..'. The walk is ours, not ``glob.glob``'s,
  so a symlink to a directory is never entered (``glob`` would follow one to '/').
- grep searches files with Python's ``re`` (no external rg, so the same pattern means the
  same on every machine), line by line; it prints ``path:line:text`` for each matching line,
  the files in sorted path order. ``glob`` narrows the files: a pattern without '/' matches a
  file's name, one with '/' its path, as ``fnmatch`` matches (case-sensitive).

When glob and grep walk directories they skip hidden entries (names starting with '.'), as the
shell's glob does, so .git and virtual environments are not searched; name a hidden path
explicitly to search it. Nothing leads them outside the working directory: a symlink whose
target is outside is skipped. Binary and non-UTF-8 files are not searched, and files over
``MAX_READ_BYTES`` are named as skipped. Every result is clipped to head and tail
(memory.md rule 9).
"""

from __future__ import annotations

import asyncio
import fnmatch
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from eukhe.agent.tools.base import BAD_PATTERN, NOT_A_DIRECTORY, NOT_FOUND, OUTSIDE_WORKDIR, Tool, ToolContext, ToolError, ToolResult, clip
from eukhe.agent.tools.files import MAX_READ_BYTES, SNIFF_BYTES, PATH_SCHEMA


def _inside(context: ToolContext, path: Path) -> Path | None:
    """The real path of ``path``, or None when it leads outside the working directory."""
    try:
        return context.resolve(str(path))
    except ToolError:
        return None


def _ls(context: ToolContext, path: str) -> str:
    real = context.resolve(path)
    if not real.exists():
        raise ToolError(NOT_FOUND, f"{path} does not exist")
    if not real.is_dir():
        raise ToolError(NOT_A_DIRECTORY, f"{path} is not a directory (read reads a file)")
    with os.scandir(real) as entries:
        names = sorted(entry.name + ("/" if entry.is_dir() else "") for entry in entries)
    return clip("\n".join(names)) if names else "(empty directory)"


async def ls(arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
    return ToolResult(await asyncio.to_thread(_ls, context, arguments.get("path", ".")))


def matches(parts: Sequence[str], segments: Sequence[str]) -> bool:
    """Whether a path's parts match a pattern's segments: ``**`` any number of parts, any other
    segment one part (``fnmatch``, case-sensitive); as in the shell, a part starting with '.' is
    matched only by a segment starting with '.'."""
    if not segments:
        return not parts
    head, rest = segments[0], segments[1:]
    if head == "**":
        return matches(parts, rest) or (bool(parts) and not parts[0].startswith(".") and matches(parts[1:], segments))
    if not parts or (parts[0].startswith(".") and not head.startswith(".")):
        return False
    return fnmatch.fnmatchcase(parts[0], head) and matches(parts[1:], rest)


def _glob(context: ToolContext, pattern: str) -> str:
    segments = [s for s in pattern.split("/") if s not in ("", ".")]
    if pattern.startswith("/") or ".." in segments:
        raise ToolError(OUTSIDE_WORKDIR, f"the pattern {pattern!r} must stay inside the working directory (no absolute path, no '..')")
    root = context.resolve(".")
    hidden = any(s.startswith(".") for s in segments)  # else hidden directories are not even entered
    found = []
    for directory, subdirectories, names in os.walk(root):
        if not hidden:
            subdirectories[:] = [d for d in subdirectories if not d.startswith(".")]
        for name in subdirectories + names:
            real = _inside(context, Path(directory) / name)
            shown = (Path(directory) / name).relative_to(root)
            if real is not None and matches(shown.parts, segments):
                found.append(shown.as_posix() + ("/" if real.is_dir() else ""))
    return clip("\n".join(sorted(found))) if found else f"no path matches {pattern}"


async def glob(arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
    return ToolResult(await asyncio.to_thread(_glob, context, arguments["pattern"]))


def _files(context: ToolContext, top: Path) -> Iterator[Path]:
    """The regular files under ``top`` (itself, if a file), hidden entries skipped, unsorted."""
    if not top.is_dir():
        if top.is_file():
            yield top
        return
    for directory, subdirectories, names in os.walk(top):
        subdirectories[:] = [d for d in subdirectories if not d.startswith(".")]
        for name in names:
            if not name.startswith("."):
                real = _inside(context, Path(directory) / name)
                if real is not None and real.is_file():
                    yield real


def _wanted(shown: str, pattern: str | None) -> bool:
    if pattern is None:
        return True
    return fnmatch.fnmatchcase(shown if "/" in pattern else shown.rsplit("/", 1)[-1], pattern)


def _grep(context: ToolContext, pattern: str, path: str, only: str | None) -> str:
    try:
        regex = re.compile(pattern)
    except re.error as error:
        raise ToolError(BAD_PATTERN, f"{pattern!r} is not a Python regular expression: {error}") from None
    top = context.resolve(path)
    if not top.exists():
        raise ToolError(NOT_FOUND, f"{path} does not exist")
    files = sorted((context.shown(real), real) for real in _files(context, top))
    out: list[str] = []
    too_large: list[str] = []
    for shown, real in files:
        if not _wanted(shown, only):
            continue
        if real.stat().st_size > MAX_READ_BYTES:
            too_large.append(shown)
            continue
        data = real.read_bytes()
        if b"\x00" in data[:SNIFF_BYTES]:
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.removesuffix("\n").split("\n") if text else [], 1):  # read's lines
            if regex.search(line):
                out.append(f"{shown}:{number}:{line}")
    if too_large:
        out.append(f"(not searched, over {MAX_READ_BYTES} bytes: {', '.join(too_large)})")
    return clip("\n".join(out)) if out else f"no line matches {pattern}"


async def grep(arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
    text = await asyncio.to_thread(_grep, context, arguments["pattern"], arguments.get("path", "."), arguments.get("glob"))
    return ToolResult(text)


LS = Tool(
    "ls",
    "List a directory of the working directory (default: the working directory itself).",
    {"type": "object", "properties": {"path": PATH_SCHEMA}, "additionalProperties": False},
    ls,
)

GLOB = Tool(
    "glob",
    "Find paths matching a glob pattern (** for any depth), relative to the working directory.",
    {
        "type": "object",
        "properties": {"pattern": {"type": "string", "minLength": 1, "description": "a glob pattern, e.g. src/**/*.py"}},
        "required": ["pattern"],
        "additionalProperties": False,
    },
    glob,
)

GREP = Tool(
    "grep",
    "Search files for lines matching a Python regular expression; prints path:line:text.",
    {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "minLength": 1, "description": "a Python regular expression"},
            "path": {**PATH_SCHEMA, "description": "a file or directory to search (default: the working directory)"},
            "glob": {"type": "string", "minLength": 1, "description": "only files whose name (or, with '/', path) matches, e.g. *.py"},
        },
        "required": ["pattern"],
        "additionalProperties": False,
    },
    grep,
)
