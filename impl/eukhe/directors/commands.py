"""The entry points of S5.7: the /remind and /force session slash commands and the kernel
host request directors.push (goal.remind(text), goal.force_tool(tool, tries=1))."""

from __future__ import annotations

import shlex
from typing import Any

from eukhe.directors.document import to_document
from eukhe.directors.hooks import Directors, PushRefused


class CommandError(ValueError):
    """A slash command or host request that does not parse; the message names what is wrong."""


def session_command(directors: Directors, line: str) -> dict[str, Any]:
    """Run /remind <text> or /force <tool> [--tries <n>]; returns the stack document."""
    text = line.strip()
    if text.startswith("/remind"):
        rest = text[len("/remind") :]
        if rest and not rest[0].isspace():
            raise CommandError(f"unknown command {text.split()[0]}")
        if not rest.strip():
            raise CommandError("/remind needs a text: /remind <text>")
        return to_document(directors.remind(rest.strip()))
    if text.startswith("/force"):
        try:
            words = shlex.split(text)
        except ValueError as error:
            raise CommandError(f"/force: {error}") from None
        if words[0] != "/force":
            raise CommandError(f"unknown command {words[0]}")
        args = words[1:]
        tries = 1
        if "--tries" in args:
            at = args.index("--tries")
            if at + 1 >= len(args):
                raise CommandError("/force: --tries needs a number")
            value = args[at + 1]
            if not (value.isascii() and value.isdigit()):  # "²" is a digit to isdigit, not to int()
                raise CommandError(f"/force: --tries {value!r} is not a whole number")
            tries = int(value)
            del args[at : at + 2]
        if len(args) != 1:
            raise CommandError("/force needs one tool: /force <tool> [--tries <n>]")
        return to_document(directors.force(args[0], tries=tries))
    raise CommandError(f"not a Director command: {text.split()[0] if text else '(empty)'}")


def host_push(directors: Directors, params: dict[str, Any]) -> dict[str, Any]:
    """The host request directors.push: {"kind": "reminder", "text"} or
    {"kind": "forced", "tool", "tries"?}; answers {"stack": <document>} or {"error": ...}."""
    kind = params.get("kind")
    try:
        if kind == "reminder" and isinstance(params.get("text"), str):
            return {"stack": to_document(directors.remind(params["text"]))}
        if kind == "forced" and isinstance(params.get("tool"), str):
            tries = params.get("tries", 1)
            if not isinstance(tries, int) or isinstance(tries, bool) or tries < 0:
                return {"error": {"kind": "BadParams", "message": "tries must be a whole number"}}
            return {"stack": to_document(directors.force(params["tool"], tries=tries))}
    except PushRefused as refused:
        return {"error": {"kind": "PushRefused", "message": str(refused)}}
    return {"error": {"kind": "BadParams", "message": "directors.push needs kind reminder with text, or forced with tool"}}
