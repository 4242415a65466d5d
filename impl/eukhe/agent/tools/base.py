"""What every tool shares: its description (``Tool``), what it is run with (``ToolContext``),
what it gives (``ToolResult``), its typed refusals (``ToolError``), the path policy and the
clipping of its output.

``Tool.run`` is the one way a tool runs: the arguments are repaired (inference.md S6 argument
repair: ``repair_arguments``, its ``argument_repaired`` warnings kept on the result), checked
against the tool's schema (``schema.check``) and for text UTF-8 cannot write, and only then
handed to the tool's body. A bad argument, a refusal (``ToolError``) or a failing file
operation (``OSError``) becomes an error result whose text starts with its kind; nothing escapes
as an exception but a cancellation of the task itself.

Path policy (decided here): a path is resolved against the working directory, symlinks
included, and must stay inside it; an absolute path is taken only when it names something
inside. No setting widens this: the config has no such key, and one would be a key of the
kind an untrusted project may not set (control.md S4b.5). The check is made when the call
starts: the tools keep a model's paths inside, they are not a sandbox against a symlink swapped
in meanwhile, and bash, a shell in the working directory, is not confined at all.

Clipping (memory.md rule 9): output longer than ``CAP`` characters keeps its head and its tail,
by the memory's own ``cap_text``.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from eukhe.agent.tools import schema as schemamod
from eukhe.inference.repair import ArgumentError, repair_arguments
from eukhe.inference.wire.plan import Image, Tool as WireTool
from eukhe.memory.lines import CAP, cap_text

DEFAULT_BASH_TIMEOUT_MS = 120_000  # toolBlockingBudgetMs's default (control.md S4b.5 names it a limit)
DEFAULT_KILL_GRACE_MS = 2_000  # from SIGTERM to SIGKILL of a bash call's process group

# The kinds of error results, each the first word of the result's text.
INVALID_ARGUMENTS = "invalid_arguments"
OUTSIDE_WORKDIR = "outside_workdir"
NOT_FOUND = "not_found"
NOT_A_FILE = "not_a_file"
NOT_A_DIRECTORY = "not_a_directory"
IS_DIRECTORY = "is_directory"
BINARY_FILE = "binary_file"
TOO_LARGE = "too_large"
BAD_RANGE = "bad_range"
OLD_NOT_FOUND = "old_not_found"
OLD_NOT_UNIQUE = "old_not_unique"
UNCHANGED = "unchanged"
BAD_PATTERN = "bad_pattern"
IO_ERROR = "io_error"
EXIT_STATUS = "exit_status"
TIMEOUT = "timeout"
CANCELLED = "cancelled"


class ToolError(Exception):
    """A tool's typed refusal: ``kind`` names what was wrong, the message where and why."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


@dataclass(frozen=True)
class ToolResult:
    """What the model is given back: the text, whether it is an error (and its kind), and the
    argument repairs made before the tool ran (rule 5 of the argument repair)."""

    text: str
    is_error: bool = False
    kind: str = ""
    warnings: tuple[str, ...] = ()
    images: tuple[Image, ...] = ()  # a zoomed message's images (memory.md rule 53), for a model that takes images

    @staticmethod
    def error(kind: str, message: str) -> ToolResult:
        return ToolResult(f"{kind}: {message}", True, kind)


@dataclass(frozen=True)
class ToolContext:
    """What a tool runs with: the session's working directory, the bash timeout and the grace
    of a kill as numbers (no clock: the tool measures them itself), and the cancellation hook the
    turn sets to stop a running call."""

    workdir: Path
    bash_timeout_ms: int = DEFAULT_BASH_TIMEOUT_MS
    kill_grace_ms: int = DEFAULT_KILL_GRACE_MS
    cancel: asyncio.Event = field(default_factory=asyncio.Event)

    def resolve(self, path: str) -> Path:
        """The real path ``path`` names, refused when it leads outside the working directory."""
        if not path:
            raise ToolError(INVALID_ARGUMENTS, "path: empty")
        if "\x00" in path:
            raise ToolError(INVALID_ARGUMENTS, "path: holds a NUL character")
        root = Path(os.path.realpath(self.workdir))
        real = Path(os.path.realpath(root / path))  # an absolute path replaces the root
        if real != root and not real.is_relative_to(root):
            raise ToolError(OUTSIDE_WORKDIR, f"{path} is outside the working directory {root}")
        return real

    def shown(self, real: Path) -> str:
        """A path as the results show it: relative to the working directory, '/'-separated."""
        relative = real.relative_to(os.path.realpath(self.workdir)).as_posix()
        return relative or "."


Body = Callable[[Mapping[str, Any], ToolContext], Awaitable[ToolResult]]


def clip(text: str, cap: int = CAP) -> str:
    """Tool output as memory.md rule 9 logs it: head and tail, ``cap`` characters in all."""
    return cap_text(text, cap)


def unwritable(arguments: Mapping[str, Any]) -> list[ArgumentError]:
    """The string arguments no file, path or command can hold: JSON can carry a lone surrogate
    (``"\\ud800"``), UTF-8 cannot encode one."""
    errors = []
    for name, value in arguments.items():
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as error:
                errors.append(ArgumentError(INVALID_ARGUMENTS, f"{name}: holds {error.object[error.start:error.end]!r}, which UTF-8 cannot encode"))
    return errors


@dataclass(frozen=True)
class Tool:
    """A tool as offered to the model (name, one line of description, the JSON schema of its
    arguments) and its body, run only through ``run``."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    body: Body

    @property
    def wire(self) -> WireTool:
        """The tool as every wire client offers it (eukhe.inference.wire.plan.Tool)."""
        return WireTool(self.name, self.description, self.parameters)

    async def run(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        """Repair, check, run; every refusal an error result naming what was wrong."""
        repaired = repair_arguments(arguments, self.parameters)
        errors = repaired.errors or schemamod.check(repaired.arguments, self.parameters) or unwritable(repaired.arguments)
        warnings = tuple(repaired.warnings)
        if errors:
            return replace(ToolResult.error(errors[0].kind, "; ".join(e.message for e in errors)), warnings=warnings)
        if context.cancel.is_set():
            return replace(ToolResult.error(CANCELLED, f"{self.name} did not run: the turn was cancelled"), warnings=warnings)
        try:
            result = await self.body(repaired.arguments, context)
        except ToolError as error:
            result = ToolResult.error(error.kind, error.message)
        except OSError as error:
            result = ToolResult.error(IO_ERROR, f"{error.strerror or error}" + (f": {error.filename}" if error.filename else ""))
        return replace(result, warnings=warnings)
