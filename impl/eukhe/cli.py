"""The `eukhe` command. Each module of eukhe.commands adds its own subcommands through
``register(subparsers)``, so an area's command line lives beside nothing else.

The command line has one error path (``main``): every failure becomes one line on stderr,
``eukhe <command>: <what was wrong and where>``, and an exit status:

- 0  the command did what was asked;
- 1  a fault of the environment: a directory that is read-only or is a regular file, a disk
     error, a session locked by another writer past the lock timeout, a corrupt session log,
     a fault of the provider, a stdout closed by its reader (``eukhe ... | head -1`` ends
     quietly with 1, whatever the command: every write to stdout goes through ``_Stdout``);
     ``eukhe laws`` also exits 1 when a law fails, ``eukhe chat`` when a turn failed;
- 2  bad input or usage: an argument (an empty path too), a flag value, a file an argument names
     that is not of its kind, a script line, a settings document (not JSON, deeper than 100
     brackets, NaN: ``eukhe.strict_json``), a setting past its bound, an unknown session,
     conversation or entry, a refused set;
- 3  ``eukhe ask``: the model refused to answer (its refusal is printed);
- 70 a bug in eukhe (an error no rule above names): one line asking for a report.

No traceback is printed unless ``EUKHE_DEBUG=1`` (then the traceback comes first, the line
after it). The line is at most ``MAX_LINE`` (300) characters (``clip``): a 40 KB argument is not
echoed whole. Arguments that hold text (values, names, JSON) must be UTF-8 and nested at most
``MAX_DEPTH`` brackets deep; paths may hold any bytes.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import functools
import importlib
import os
import pkgutil
import sys
import traceback
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import eukhe.commands as commands

EXIT_OK, EXIT_FAULT, EXIT_USAGE, EXIT_BUG = 0, 1, 2, 70
DEBUG_ENV = "EUKHE_DEBUG"
MAX_DEPTH = 100  # brackets: deeper JSON is refused before any parser recurses into it (eukhe.strict_json)

EPILOG = """exit status: 0 done; 1 a fault of the environment (read-only or missing directory,
a directory that is a file, a disk error, a locked session, a corrupt session log, a closed
stdout); 2 bad input or usage (an argument, a script line, a settings document, an unknown
session or entry, a refused set); 3 the model refused to answer (eukhe ask); 70 a bug in
eukhe. EUKHE_DEBUG=1 prints the traceback of a failure. A writer waits for a session another
writer holds: up to the session.lockTimeoutMs setting (milliseconds, default 5000, at most an
hour; `eukhe set session.lockTimeoutMs N --global`), or EUKHE_LOCK_TIMEOUT seconds when that
is set. The agent dir is --agent-dir, else
EUKHE_AGENT_DIR, else ~/.eukhe."""

# Destinations of arguments that are paths: they may hold any bytes (surrogate-escaped).
# Errors the seeds print in their own form (control.md S4): no command prefix.
SEED_FORMS = ("CvarError::", "ExpandError::", "ParseError")

PATH_DESTS = frozenset({"agent_dir", "session_dir", "project", "script", "png", "plot", "laws_dir", "file", "out", "bundled", "worker_agent_dir"})
UPPER_DESTS = ("id", "value", "line", "name", "entry", "file")  # positional arguments: named as in the usage line
MAX_LINE = 300  # characters of the one error line at most (a 40 KB argument is not echoed whole)


class CliError(Exception):
    """A failure the command line reports as one line with an exit status."""

    status = EXIT_USAGE


class UsageError(CliError):
    """Bad input on the command line: the message names what was wrong (exit 2)."""

    status = EXIT_USAGE


class EnvironmentFault(CliError):
    """A fault of the environment: the message names the path or the resource (exit 1)."""

    status = EXIT_FAULT


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message}")


@functools.cache
def parser() -> argparse.ArgumentParser:
    """The parser of every command (built once per process: argparse looks up translations for
    every parser it makes, tens of milliseconds; parsing never changes it)."""
    top = _Parser(
        prog="eukhe",
        description="eukhe: the harness core of a coding agent, and its law workbench",
        epilog=EPILOG,
    )
    top.add_argument("--agent-dir", help="the agent dir (default ~/.eukhe, or EUKHE_AGENT_DIR)")
    sub = top.add_subparsers(dest="command", required=True, parser_class=_Parser, metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        importlib.import_module(f"eukhe.commands.{info.name}").register(sub)
    _name_leaves(top)
    return top


def _name_leaves(node: argparse.ArgumentParser) -> None:
    """Every parser learns its ``prog`` (``eukhe session fork``) as the default ``_prog``, so an
    error names the command it came from; subparsers inherit the error path and the epilog."""
    node.set_defaults(_prog=node.prog)
    for action in node._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                child.epilog = EPILOG
                child.formatter_class = argparse.RawDescriptionHelpFormatter
                _name_leaves(child)


def nesting(text: str) -> int:
    """The deepest bracket nesting of ``text`` ([ and {, strings not told apart: a bound)."""
    depth = deepest = 0
    for char in text:
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}" and depth:
            depth -= 1
    return deepest


def check_utf8(text: str, what: str) -> str:
    """``text`` if it is UTF-8 text (no surrogates: undecodable argument bytes, lone escapes)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        shown = repr(text.encode("utf-8", "surrogateescape")) if _escaped_only(text) else ascii(text)
        raise UsageError(f"{what} is not UTF-8 text (at character {error.start}): {shown[:80]}") from None
    return text


def check_text(text: str, what: str) -> str:
    """``text`` as an argument that holds text: UTF-8 and at most MAX_DEPTH brackets deep."""
    check_utf8(text, what)
    if nesting(text) > MAX_DEPTH:
        raise UsageError(f"{what} is nested more than {MAX_DEPTH} brackets deep")
    return text


def load_json(text: str, what: str) -> Any:
    """Strict JSON of an argument or a script line: at most MAX_DEPTH deep, no NaN or Infinity,
    no lone surrogate escapes (a value must be storable as UTF-8); UsageError naming ``what``."""
    import json

    from eukhe import strict_json

    try:
        value = strict_json.loads(text, limit=MAX_DEPTH)
    except strict_json.JsonRefused as error:
        if error.depth is not None:
            raise UsageError(f"{what} is nested more than {MAX_DEPTH} brackets deep") from None
        raise UsageError(f"{what} is not JSON: {error.msg}") from None
    except json.JSONDecodeError as error:
        raise UsageError(f"{what} is not JSON: {error.msg} at column {error.colno}") from None
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            check_utf8(item, f"a string in {what}")
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
    return value


def _escaped_only(text: str) -> bool:
    return all(not "\ud800" <= c <= "\udfff" or "\udc80" <= c <= "\udcff" for c in text)


def _label(dest: str) -> str:
    if dest == "worker_agent_dir":
        return "--agent-dir"
    return dest.upper() if dest in UPPER_DESTS else "--" + dest.replace("_", "-")


def _check_arguments(args: argparse.Namespace) -> None:
    for dest, value in vars(args).items():
        if dest.startswith("_"):
            continue
        label = _label(dest)
        if dest in PATH_DESTS:
            if value == "":  # an empty path names nothing: never taken as "unset" or as the working dir
                raise UsageError(f"the argument {label} is empty: name a path, or leave it out")
            continue
        if isinstance(value, str):
            check_text(value, f"the argument {label}")
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, str):
                    check_text(item, f"the argument {label}")


def classify(error: BaseException) -> tuple[int, str]:
    """The exit status and the message (without the command's name) of a failure."""
    from eukhe.directors import document as directors_document
    from eukhe.directors.hooks import GoalError, LimitsError
    from eukhe.session import errors as session_errors
    from eukhe.settings.cvar import CvarError, ExpandError, ParseError
    from eukhe.settings.files import UNREADABLE, DocumentError

    if isinstance(error, CliError):
        return error.status, str(error)
    if isinstance(error, CvarError):  # the seed's own form of a refused set, printed as it is
        return EXIT_USAGE, f"CvarError::{error.kind}({error.id}): {error.message}"
    if isinstance(error, (ExpandError, ParseError, LimitsError, GoalError, directors_document.DocumentError)):
        return EXIT_USAGE, str(error)
    if isinstance(error, DocumentError):
        fault = error.kind == UNREADABLE and not error.detail.startswith("not UTF-8")
        return (EXIT_FAULT if fault else EXIT_USAGE), f"settings error: {error}; nothing written"
    if isinstance(error, (session_errors.SessionLocked, session_errors.CorruptRecord)):
        return EXIT_FAULT, str(error)
    if isinstance(
        error,
        (
            session_errors.SessionNotFound,
            session_errors.SessionExists,
            session_errors.UnknownConversation,
            session_errors.UnknownEntry,
            session_errors.InvalidCommit,
        ),
    ):
        return EXIT_USAGE, str(error)
    if isinstance(error, session_errors.SessionError):
        return EXIT_FAULT, str(error)
    if isinstance(error, OSError):
        return EXIT_FAULT, os_message(error)
    if isinstance(error, MemoryError):
        return EXIT_FAULT, "out of memory"
    return EXIT_BUG, (
        f"internal error: {type(error).__name__}: {error} "
        f"(a bug in eukhe: please report it; {DEBUG_ENV}=1 prints the traceback)"
    )


def os_message(error: OSError, doing: str = "") -> str:
    """``<doing> <path>: <reason>`` of an OSError (a read-only dir, a dir that is a file...)."""
    reason = error.strerror or str(error) or type(error).__name__
    names = [show_path(f) for f in (error.filename, error.filename2) if f is not None]
    hint = ""
    if error.errno in (errno.ENOTDIR, errno.EEXIST) and names:
        hint = " (a path on the way is a regular file, not a directory)"
    elif error.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        hint = " (the directory or file is read-only)"
    head = f"{doing} " if doing else ""
    return f"{head}{' -> '.join(names) + ': ' if names else ''}{reason}{hint}"


def show_path(path: object) -> str:
    """A path as one printable line: undecodable bytes and control characters escaped."""
    text = os.fsdecode(path) if isinstance(path, bytes) else str(path)
    if text.isprintable():  # no surrogate escape is printable, and only those are not UTF-8
        return text
    return ascii(text)[1:-1]


def require_dir(path: Path, what: str, *, missing_ok: bool = True) -> None:
    """A directory eukhe may use: one that exists, or (``missing_ok``) one it can make."""
    if path.is_dir():
        return
    if path.exists():
        raise EnvironmentFault(f"{what} {show_path(path)} is not a directory")
    if not missing_ok:
        raise UsageError(f"{what} {show_path(path)} does not exist")
    parent = next(up for up in path.parents if up.exists())  # "." or "/" at the latest
    if not parent.is_dir():
        raise EnvironmentFault(f"{what} {show_path(path)} is under {show_path(parent)}, which is not a directory")


def one_line(message: str) -> str:
    parts = [part.strip() for part in message.splitlines() if part.strip()]
    return "; ".join(parts) if parts else "failed"


def clip(line: str, limit: int = MAX_LINE) -> str:
    """``line`` as at most ``limit`` characters: a longer one keeps its start and its end (what was
    wrong and where) around a mark of how many characters were cut."""
    if len(line) <= limit:
        return line
    cut = len(line) - limit
    while True:  # the mark's own length depends on the number it shows
        mark = f" ...[{cut} characters cut]... "
        keep = limit - len(mark)
        if len(line) - keep == cut:
            break
        cut = len(line) - keep
    head = keep * 2 // 3
    return line[:head] + mark + line[len(line) - (keep - head) :]


class StdoutClosed(BaseException):
    """stdout's reader is gone (EPIPE): the command stops and eukhe ends quietly with exit 1. A
    BaseException, so that no command's own ``except OSError`` or ``except Exception`` takes it for
    a fault to report: every command that writes to stdout ends the same way, in ``main``."""


class _Stdout:
    """sys.stdout while a command runs: a write or flush that meets a closed pipe raises
    StdoutClosed; everything else is the stream's own."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return int(self._stream.write(text))
        except BrokenPipeError:
            raise StdoutClosed from None

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise StdoutClosed from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _prepare_streams() -> None:
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):  # a detached or closed stream: print() fails later, quietly
                pass


def _quiet_broken_pipe() -> int:
    """stdout was closed by its reader (``| head -1``): stop quietly, as Unix tools do. Point
    stdout at /dev/null so the interpreter's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # captured or already-closed stdout in tests
        pass
    return EXIT_FAULT


LOCK_TIMEOUT_ENV = "EUKHE_LOCK_TIMEOUT"
LOCK_TIMEOUT_SETTING = "session.lockTimeoutMs"  # eukhe's own Global cvar (cvar_table.py): milliseconds
DEFAULT_LOCK_TIMEOUT = 5.0  # seconds a CLI writer waits for a session another writer holds
MAX_LOCK_TIMEOUT = 3600.0  # seconds: a longer setting waits an hour


def lock_timeout(agent_dir_flag: str | None = None) -> float:
    """Seconds a CLI writer waits for a session another writer holds: ``EUKHE_LOCK_TIMEOUT``
    when it is a number of seconds from 0 to an hour (an override for one run: a script or a
    test that must not wait, without editing the user's config); else the
    ``session.lockTimeoutMs`` setting of the agent dir's global config (Global: a project file
    never sets it), capped at an hour; else the default. Never raises: a config that cannot be
    read is a settings error ``eukhe settings show`` reports, and the default applies."""
    try:
        value = float(os.environ.get(LOCK_TIMEOUT_ENV, ""))
    except ValueError:
        value = -1.0
    if 0 <= value <= MAX_LOCK_TIMEOUT:
        return value
    try:
        from eukhe import paths
        from eukhe.settings.agent import EukheSettings

        ms = EukheSettings(paths.agent_dir(agent_dir_flag)).cvars.value([], LOCK_TIMEOUT_SETTING)
    except OSError:
        return DEFAULT_LOCK_TIMEOUT
    if not isinstance(ms, int) or isinstance(ms, bool) or ms < 0:
        return DEFAULT_LOCK_TIMEOUT
    return min(ms, int(MAX_LOCK_TIMEOUT * 1000)) / 1000


@contextlib.contextmanager
def holding(*, program: str, timeout: float | Callable[[], float]) -> Iterator[None]:
    """Within the block, session locks name ``program`` and wait ``timeout`` seconds (a function:
    called when a lock is found taken); restored after."""
    from eukhe.session.lock import HOLDER

    before = (HOLDER.program, HOLDER.timeout)
    HOLDER.program, HOLDER.timeout = program, timeout
    try:
        yield
    finally:
        HOLDER.program, HOLDER.timeout = before


def _say(line: str) -> None:
    """Print the one line on stderr; a closed or broken stderr loses it, nothing more."""
    if sys.stderr is None:
        return
    try:
        print(line, file=sys.stderr)
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _with_default_command(argv: list[str]) -> list[str]:
    """``eukhe`` with no command (``--agent-dir D`` at most) on a terminal is ``eukhe tui``;
    elsewhere it stays a usage error."""
    bare = not argv or (len(argv) == 2 and argv[0] == "--agent-dir") or (len(argv) == 1 and argv[0].startswith("--agent-dir="))
    if bare and sys.stdin is not None and sys.stdin.isatty() and sys.stdout is not None and sys.stdout.isatty():
        return [*argv, "tui"]
    return argv


def main(argv: Sequence[str] | None = None) -> int:
    _prepare_streams()
    if sys.stdout is None:  # started with stdout closed (`>&-`): whatever it did would go unsaid
        _say("eukhe: stdout is closed; nothing done")
        return EXIT_FAULT
    stdout = sys.stdout
    sys.stdout = _Stdout(stdout)
    try:
        return _main(argv)
    finally:
        sys.stdout = stdout


def _main(argv: Sequence[str] | None) -> int:
    args: argparse.Namespace | None = None
    try:
        args = parser().parse_args(_with_default_command(sys.argv[1:] if argv is None else list(argv)))
        _check_arguments(args)
        # a writer's lock names the command, never its values, and waits for another writer
        with holding(program=args._prog, timeout=functools.partial(lock_timeout, args.agent_dir)):
            status: int = args.run(args)
        try:
            sys.stdout.flush()  # a closed pipe raises StdoutClosed, handled below
        except OSError as error:
            raise EnvironmentFault(f"cannot write stdout: {error.strerror or error}") from error
        return status
    except SystemExit as done:  # --help, or a command that exits itself
        code = done.code
        return code if isinstance(code, int) else (0 if code is None else EXIT_USAGE)
    except (BrokenPipeError, StdoutClosed):
        return _quiet_broken_pipe()
    except KeyboardInterrupt:
        _say("eukhe: interrupted")
        return 130
    except Exception as error:  # the one error path: every failure becomes one line
        status, message = classify(error)
        prog = args._prog if args is not None else "eukhe"  # every parser sets _prog (_name_leaves)
        if message.startswith(SEED_FORMS) or (isinstance(error, CliError) and message.startswith("eukhe")):
            line = one_line(message)
        else:
            line = f"{prog}: {one_line(message)}"
        if os.environ.get(DEBUG_ENV) == "1" and sys.stderr is not None:
            traceback.print_exc()
        _say(clip(line))
        try:
            sys.stdout.flush()
        except (BrokenPipeError, StdoutClosed):
            return _quiet_broken_pipe()
        except (OSError, ValueError):
            pass
        return status
