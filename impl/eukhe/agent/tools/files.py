"""read, write and edit: the files of the working directory (paths as ``ToolContext.resolve``
decides).

- read shows a text file's lines numbered as ``cat -n`` does, from ``offset`` (1-based) for
  ``limit`` lines, clipped to head and tail (memory.md rule 9). A file holding a NUL byte or
  bytes that are not UTF-8 is refused as binary. A file over ``MAX_READ_BYTES`` is read only a
  part at a time (``limit``), so one call never loads a huge file whole.
- write replaces a file atomically: the content goes to a new file in the same directory, is
  fsynced and renamed over the target, and the directory is fsynced; a failure at any step
  removes the new file and leaves the old one as it was. Parent directories are made. A
  replaced file keeps its permission bits; a new one gets the umask's.
- edit replaces text exactly. ``old`` must occur once, counting overlapping occurrences, so
  an edit never guesses which of two places was meant; with ``all`` every (non-overlapping,
  left to right) occurrence is replaced, as ``str.replace`` does. The result is written as write
  writes, so a failed edit leaves the file whole.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from eukhe.agent.tools.base import (
    BAD_RANGE,
    BINARY_FILE,
    IS_DIRECTORY,
    NOT_A_DIRECTORY,
    NOT_A_FILE,
    NOT_FOUND,
    OLD_NOT_FOUND,
    OLD_NOT_UNIQUE,
    TOO_LARGE,
    UNCHANGED,
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
    clip,
)
from eukhe.session.private import fsync_dir

MAX_READ_BYTES = 32 * 1024 * 1024
SNIFF_BYTES = 8192  # a NUL in a file's first bytes marks it binary, as grep and git decide


def existing_file(context: ToolContext, path: str) -> Path:
    """The real path of an existing regular file inside the working directory."""
    real = context.resolve(path)
    if not real.exists():
        raise ToolError(NOT_FOUND, f"{path} does not exist")
    if real.is_dir():
        raise ToolError(IS_DIRECTORY, f"{path} is a directory (ls lists it)")
    if not real.is_file():
        raise ToolError(NOT_A_FILE, f"{path} is not a regular file")
    return real


def decode(data: bytes, path: str) -> str:
    """UTF-8 text, or the binary_file refusal."""
    if b"\x00" in data:
        raise ToolError(BINARY_FILE, f"{path} is binary (it holds a NUL byte)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ToolError(BINARY_FILE, f"{path} is not UTF-8 text (byte {error.start})") from None


def read_text(context: ToolContext, path: str) -> tuple[Path, str]:
    real = existing_file(context, path)
    if real.stat().st_size > MAX_READ_BYTES:
        raise ToolError(TOO_LARGE, f"{path} is over {MAX_READ_BYTES} bytes")
    return real, decode(real.read_bytes(), path)


def write_atomic(real: Path, data: bytes) -> None:
    """Replace ``real`` with ``data`` whole, or leave it untouched (see the module's docstring)."""
    try:
        real.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise ToolError(NOT_A_DIRECTORY, f"a parent of {real} is not a directory") from None
    try:
        mode: int | None = stat.S_IMODE(real.stat().st_mode)
    except FileNotFoundError:
        mode = None
    temp = real.with_name(f".{real.name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        try:
            if mode is not None:
                os.fchmod(fd, mode)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.replace(temp, real)
        except IsADirectoryError:
            raise ToolError(IS_DIRECTORY, f"{real} is a directory") from None
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    fsync_dir(real.parent)


# -- read ----------------------------------------------------------------------------------------


def _read(context: ToolContext, path: str, offset: int, limit: int | None) -> str:
    real = existing_file(context, path)
    if limit is None and real.stat().st_size > MAX_READ_BYTES:
        raise ToolError(TOO_LARGE, f"{path} is over {MAX_READ_BYTES} bytes: read a part with offset and limit")
    lines: list[str] = []
    count = 0
    with open(real, "rb") as file:
        if b"\x00" in file.read(SNIFF_BYTES):  # refused before any line is shown
            raise ToolError(BINARY_FILE, f"{path} is binary (it holds a NUL byte)")
        file.seek(0)
        for count, raw in enumerate(file, 1):
            if count >= offset:
                if limit is not None and len(lines) == limit:
                    break
                text = decode(raw, f"{path} (line {count})").removesuffix("\n")
                lines.append(f"{count:6}\t{text}")
    if not lines:
        if count == 0:
            return "(empty file)"
        raise ToolError(BAD_RANGE, f"offset {offset} is past the end of {path} ({count} lines)")
    return clip("\n".join(lines))


async def read(arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
    limit = arguments.get("limit")
    text = await asyncio.to_thread(_read, context, arguments["path"], int(arguments.get("offset", 1)), None if limit is None else int(limit))
    return ToolResult(text)


# -- write and edit ------------------------------------------------------------------------------


async def write(arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
    path: str = arguments["path"]
    real = context.resolve(path)
    data = arguments["content"].encode("utf-8")
    await asyncio.to_thread(write_atomic, real, data)
    return ToolResult(f"wrote {len(data)} bytes to {context.shown(real)}")


def occurrences(text: str, old: str, at_most: int) -> int:
    """How many places ``old`` starts at in ``text`` (overlapping ones too), up to ``at_most``."""
    found, start = 0, text.find(old)
    while start >= 0 and found < at_most:
        found += 1
        start = text.find(old, start + 1)
    return found


def replaced(text: str, old: str, new: str, every: bool, path: str) -> tuple[str, int]:
    """The edited text and the number of replacements, or the edit's refusal."""
    if old == new:
        raise ToolError(UNCHANGED, "old and new are the same text: the edit would change nothing")
    if every:
        count = text.count(old)
        if count == 0:
            raise ToolError(OLD_NOT_FOUND, f"old does not occur in {path}")
        return text.replace(old, new), count
    places = occurrences(text, old, 2)
    if places == 0:
        raise ToolError(OLD_NOT_FOUND, f"old does not occur in {path}: read the file and copy the text exactly")
    if places > 1:
        raise ToolError(OLD_NOT_UNIQUE, f"old occurs more than once in {path}: add context to make it unique, or set all")
    return text.replace(old, new, 1), 1


def _edit(context: ToolContext, path: str, old: str, new: str, every: bool) -> str:
    real, text = read_text(context, path)
    edited, count = replaced(text, old, new, every, path)
    write_atomic(real, edited.encode("utf-8"))
    return f"replaced {count} occurrence{'s' if count != 1 else ''} in {context.shown(real)}"


async def edit(arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
    every = bool(arguments.get("all", False))
    return ToolResult(await asyncio.to_thread(_edit, context, arguments["path"], arguments["old"], arguments["new"], every))


PATH_SCHEMA = {"type": "string", "minLength": 1, "description": "a path relative to the working directory (or absolute, inside it)"}

READ = Tool(
    "read",
    "Read a text file of the working directory, its lines numbered; offset and limit read a part.",
    {
        "type": "object",
        "properties": {
            "path": PATH_SCHEMA,
            "offset": {"type": "integer", "minimum": 1, "description": "the first line to show (1-based; default 1)"},
            "limit": {"type": "integer", "minimum": 1, "description": "how many lines to show (default: to the end)"},
        },
        "required": ["path"],
        "additionalProperties": False,
    },
    read,
)

WRITE = Tool(
    "write",
    "Create or overwrite a file with the given content (parent directories are made).",
    {
        "type": "object",
        "properties": {"path": PATH_SCHEMA, "content": {"type": "string", "description": "the whole new content of the file"}},
        "required": ["path", "content"],
        "additionalProperties": False,
    },
    write,
)

EDIT = Tool(
    "edit",
    "Replace an exact text in a file: old must occur exactly once, unless all is true.",
    {
        "type": "object",
        "properties": {
            "path": PATH_SCHEMA,
            "old": {"type": "string", "minLength": 1, "description": "the exact text to replace, whitespace included"},
            "new": {"type": "string", "description": "the text to put in its place"},
            "all": {"type": "boolean", "description": "replace every occurrence (default false)"},
        },
        "required": ["path", "old", "new"],
        "additionalProperties": False,
    },
    edit,
)
