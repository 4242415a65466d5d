"""The slash commands of the terminal UI: what each one sends, and their completion.

control.md S4: ``/set``, ``/toggle``, ``/alias`` and ``/cvar`` are console lines of the session's
agent, sent as ``cvar`` requests (``--global`` sends a set or toggle to the global config.cfg);
``/cvar save`` is ``cvar_save``. S5.7: ``/remind TEXT`` and ``/force TOOL [--tries N]`` are
session commands the client sends through the agent, as are ``/effort [LEVEL]`` (S10) and
``/model PROVIDER/MODEL``; ``/model`` alone opens the picker over the agent's catalog. ``/tier
NAME`` is the serviceTier session switch (S4). ``/reload``, ``/quit`` and ``/help`` run in the
client. ``/memory [view | model ...]`` asks the agent of the chat (``eukhe chat``'s session)
for its chat memory; another session's agent refuses it. ``/rewind ENTRY`` is a session command
(the agent, the one writer of the session's log, moves the head of main). ``/new`` and ``/fork
[ENTRY]`` run in the client: a new session needs no writer of this one (``Store.create``,
``Store.fork`` reads the session as a reader), and the client then switches to it.

``plan`` reads one line into what the client does (a ``Plan``); ``complete`` gives the commands
a typed prefix can still become. Pure functions: the app does the sending.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

from eukhe.agent import protocol as p

# name -> one line of help, in the order /help lists them
COMMANDS: Final[dict[str, str]] = {
    "/set": "/set ID VALUE [--global]: set a cvar of the session (S4)",
    "/toggle": "/toggle ID [--global]: flip a Bool cvar of the session (S4)",
    "/alias": '/alias NAME "CMDS": name a list of commands (S4)',
    "/cvar": "/cvar LINE | /cvar save: run a console line; save the agent's persist sets (S4)",
    "/remind": "/remind TEXT: a reminder on the Director stack (S5.7)",
    "/force": "/force TOOL [--tries N]: force a tool call (S5.7)",
    "/model": "/model [PROVIDER/MODEL]: pick or switch the session's model",
    "/effort": "/effort [LEVEL]: show or set the thinking level (S10)",
    "/tier": "/tier auto|default|flex|priority: the session's service tier",
    "/memory": "/memory [view | model [PROVIDER/MODEL [LEVEL]]]: the chat memory (the chat's session)",
    "/agent": "/agent NAME TASK: a subagent on TASK in the background; its report joins the session",
    "/new": "/new: a new empty session, and switch to it",
    "/fork": "/fork [ENTRY]: a new session from this one up to ENTRY (default: the head), and switch to it",
    "/rewind": "/rewind ENTRY: move the head of the session to ENTRY (nothing is deleted)",
    "/reload": "/reload: read binds.cfg again and show its warnings",
    "/help": "/help: these commands",
    "/quit": "/quit: leave (the agent goes on serving the session)",
}
TIERS: Final = ("auto", "default", "flex", "priority")
TIER_CVAR: Final = "serviceTier"
GLOBAL_FLAG: Final = re.compile(r"(?:^|\s+)--global(?=\s|$)")  # /set --global, /toggle --global: the flag as a word of its own

ClientVerb = Literal["picker", "reload", "quit", "help", "tier_shown", "new", "fork"]


@dataclass(frozen=True)
class Send:
    """A request for the agent."""

    request: p.Request


@dataclass(frozen=True)
class Client:
    """Something the client does itself (``entry``: the entry of ``/fork ENTRY``)."""

    verb: ClientVerb
    entry: int | None = None


@dataclass(frozen=True)
class Refuse:
    """An error row: the line is not a command the client can run."""

    message: str


Plan = Send | Client | Refuse


def complete(text: str) -> list[str]:
    """The commands the typed word ``text`` (starting with ``/``) can still become, in table order."""
    if not text.startswith("/"):  # an empty draft begins every name; no name holds a space or a newline
        return []
    return [name for name in COMMANDS if name.startswith(text)]


def plan(line: str) -> Plan:
    """What the slash command ``line`` does (see the module docstring)."""
    stripped = line.strip()
    word, _, rest = stripped.partition(" ")
    rest = rest.strip()
    if word not in COMMANDS:
        near = complete(word)
        hint = f" (did you mean {', '.join(near)}?)" if near else ": /help lists the commands"
        return Refuse(f"unknown command {word}{hint}")
    if word in ("/set", "/toggle"):
        body, flags = GLOBAL_FLAG.subn("", rest)  # the rest's own spacing kept: a quoted value keeps its spaces
        body, is_global = body.strip(), flags > 0
        if not body:
            return Refuse(COMMANDS[word])
        return Send(p.cvar_request(f"{word[1:]} {body}", is_global))
    if word == "/alias":
        return Send(p.cvar_request(f"alias {rest}")) if rest else Refuse(COMMANDS[word])
    if word == "/cvar":
        if rest == "save":
            return Send(p.CvarSaveRequest())
        return Send(p.cvar_request(rest)) if rest else Refuse(COMMANDS[word])
    if word in ("/remind", "/force"):
        return Send(p.CommandRequest(line=stripped)) if rest else Refuse(COMMANDS[word])
    if word == "/memory":
        return Send(p.CommandRequest(line=stripped))
    if word == "/agent":
        return Send(p.CommandRequest(line=stripped)) if len(rest.split(None, 1)) == 2 else Refuse(COMMANDS[word])
    if word == "/effort":
        return Send(p.CommandRequest(line=stripped))
    if word == "/model":
        return Send(p.CommandRequest(line=stripped)) if rest else Client("picker")
    if word == "/tier":
        if not rest:
            return Client("tier_shown")
        if rest not in TIERS:
            return Refuse(f"/tier {rest}: the tiers are {', '.join(TIERS)}")
        return Send(p.cvar_request(f"set {TIER_CVAR} {rest}"))
    if word == "/rewind":
        return Send(p.CommandRequest(line=stripped)) if rest else Refuse(COMMANDS[word])
    if word == "/new":
        return Refuse(COMMANDS[word]) if rest else Client("new")
    if word == "/fork":
        if not rest:
            return Client("fork")
        if not (rest.isascii() and rest.isdigit()) or len(rest) > 30:
            return Refuse(f"/fork {rest}: an entry id is a whole number ({COMMANDS[word]})")
        return Client("fork", int(rest))
    if word == "/reload":
        return Client("reload")
    if word == "/quit":
        return Client("quit")
    return Client("help")
