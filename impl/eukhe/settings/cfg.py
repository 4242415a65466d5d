"""cfg files: config.cfg (global and project), subagent.cfg, agents/<name>.cfg (control.md S4).

A cfg file is lines of the command language. ``set`` lines give the layer's sets and
``alias`` lines its aliases; a blank line or one starting with ``#`` or ``//`` is a comment.
A line that does not parse, a refused set (CvarError), and a command that has no meaning in
a file (toggle, bind, action, a run of an alias) are settings errors naming the file and the
line; the rest of the file still applies. A file that exists and cannot be read is a settings
error, gives nothing, and is never written (``DocumentError`` from every writer). A file with a
line that does not parse (or an alias whose body does not parse) still applies its other lines
when read, but a writer (``set --global``, a global toggle, ``cvar save``) refuses it:
``DocumentError`` naming the file and the line, the file byte for byte as it was. A leading
UTF-8 byte order mark is dropped by the reader (``files.read_text``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eukhe.settings.cvar import ALIAS, SET, Command, CvarError, Cvars, ParseError, format_value, parse_list, quote
from eukhe.settings.files import NOT_PARSED, DocumentError, read_text, update_text


BLANK = " \t\r\n"  # the command language's whitespace: what a line is stripped of


def lines(text: str) -> list[str]:
    """The lines of a cfg file: each ends at a line feed (a CR before it is whitespace). Only a
    line feed ends a line, so a character such as U+2028 inside a word never splits it."""
    found = text.split("\n")
    return found[:-1] if found and found[-1] == "" else found


@dataclass(frozen=True)
class SettingsError:
    """One settings error: where it is and what is wrong (shown as an eukhe.settings_error row)."""

    source: str
    message: str

    def show(self) -> str:
        return f"{self.source}: {self.message}"


@dataclass
class CfgFile:
    path: Path
    sets: list[tuple[str, Any]] = field(default_factory=list)
    aliases: list[tuple[str, list[Command]]] = field(default_factory=list)
    errors: list[SettingsError] = field(default_factory=list)
    readable: bool = True


def parse_cfg(path: Path, text: str, cvars: Cvars, *, local_only: bool) -> CfgFile:
    out = CfgFile(path)
    for number, line in enumerate(lines(text), 1):
        stripped = line.strip(BLANK)
        if not stripped or stripped.startswith("#") or stripped.startswith("//"):
            continue
        where = f"{path}:{number}"
        try:
            commands = parse_list(stripped)
        except ParseError as error:
            out.errors.append(SettingsError(where, f"does not parse: {error}"))
            continue
        for command in commands:
            if command.verb == SET:
                try:
                    out.sets.append((command.args[0], cvars.parse_set(command.args[0], command.args[1], local_only=local_only)))
                except CvarError as error:
                    out.errors.append(SettingsError(where, f"{error.show()}: {error.message}"))
            elif command.verb == ALIAS:
                try:
                    out.aliases.append((command.args[0], parse_list(command.args[1])))
                except ParseError as error:
                    out.errors.append(SettingsError(where, f"alias {command.args[0]} does not parse: {error}"))
            else:
                out.errors.append(SettingsError(where, f"{command} has no meaning in a cfg file"))
    return out


def read_cfg(path: Path, cvars: Cvars, *, local_only: bool) -> CfgFile:
    """A cfg file as a layer; a missing file is empty; an unreadable one is one error."""
    try:
        text = read_text(path)
    except DocumentError as error:
        return CfgFile(path, errors=[SettingsError(str(path), f"cannot be read: {error.detail or error.kind}")], readable=False)
    return parse_cfg(path, text or "", cvars, local_only=local_only)


def set_line(cvar: str, value: Any) -> str:
    """One ``set`` line; the value word is quoted and escaped so it never breaks the line."""
    return f"set {quote(cvar)} {quote(format_value(value))}"


def _is_set_of(line: str, ids: set[str]) -> bool:
    try:
        commands = parse_list(line.strip(BLANK))
    except ParseError:
        return False
    return len(commands) == 1 and commands[0].verb == SET and commands[0].args[0] in ids


def unparsed(text: str) -> tuple[int, str] | None:
    """The first line of a cfg text that does not parse (its number and why), or None. A line
    parses when the command language reads it and the body of each alias on it reads too."""
    for number, line in enumerate(lines(text), 1):
        stripped = line.strip(BLANK)
        if not stripped or stripped.startswith("#") or stripped.startswith("//"):
            continue
        try:
            for command in parse_list(stripped):
                if command.verb == ALIAS:
                    parse_list(command.args[1])
        except ParseError as error:
            return number, str(error)
    return None


def check_parses(path: Path, text: str) -> None:
    """DocumentError naming the file and the line when ``text`` has a line that does not parse:
    a writer never writes over a cfg file it cannot read whole."""
    found = unparsed(text)
    if found is not None:
        raise DocumentError(path, NOT_PARSED, f"line {found[0]}: {found[1]}")


def rewrite(text: str, ids: set[str], pairs: list[tuple[str, Any]]) -> str:
    """``text`` without its single-set lines of ``ids``, then a ``set`` line for each pair."""
    kept = [line for line in lines(text) if not _is_set_of(line, ids)]
    return "".join(line + "\n" for line in kept + [set_line(c, v) for c, v in pairs])


def write_sets(path: Path, sets: Iterable[tuple[str, Any]]) -> str:
    """Under the file's lock: read it, drop the single-set lines of the ids written, append a
    ``set`` line for each. Every other line stays. DocumentError (nothing written) when the
    file exists and cannot be read, or has a line that does not parse."""
    pairs = list(sets)
    ids = {cvar for cvar, _ in pairs}

    def change(text: str) -> str:
        check_parses(path, text)
        return rewrite(text, ids, pairs)

    return update_text(path, change)
