"""The command-line bridge: 300 generated sessions of ``eukhe`` commands, each in a fresh agent
dir and project dir, against bend/cli.py, transcript against transcript, byte for byte.

The production side calls ``eukhe.cli.main(argv)`` in this process (so a mutation test sees
every command it runs) with the agent dir as ``--agent-dir``, on real files in a temporary
directory, and records the exit status and the lines of stdout and stderr. Real paths and
session ids print as ``$A`` (the agent dir), ``$P`` (the project dir), ``$S1``... (the sessions,
in the order they were made) and ``$D1``... (the sessions ``directors simulate`` made); the free
text of an error after a seed form, after ``is not JSON`` and after ``unreadable`` is cut
(``cut``), and so are the lists an error offers (the providers, the wire APIs, the law areas).
``settings show`` keeps the lines of the cvars the event names. Standard input is never a
terminal: it holds the event's ``stdin`` text (the key ``eukhe login`` reads), else nothing; an
event's ``interrupt`` makes its first read meet Ctrl-C (a real SIGINT, under Python's own handler). An
event's ``wav`` writes $P/x.wav first: ``pcm`` a short PCM WAV file, ``junk`` bytes that are none;
its ``bundle`` writes that text to $P/bundle.json (``model list --bundled``), whose refusal as no
catalog is cut after ``not a catalog``.

An event with ``replies`` runs against a real loopback server (spec.loopback.LoopbackServer)
started for it, which answers with those scripted replies in order; its base URL prints as
``$U``. ``ask`` and ``chat`` events also write $A/models.json (``models``, whose ``$U`` is the
server's base URL for the event's ``api``): the provider ``lab``. A ``chat`` event's ``lines``
are its standard input, a regular file or (``pipe``) a pipe, the last line without its newline
when ``eol`` is false; the chat's agent is a process of
its own, and the event ends once it ended. Some chat scenarios run a later chat of the same agent
dir (the session as the first left it: its model and level), and some (an event's ``deep``) use
an agent dir whose name is so long that its sockets' paths pass the 107 bytes of a Unix socket
address (it prints as ``$A`` all the same). An error event's text after its kind, and the first
row of a chat's agent after the error's name, are cut; so is the path of a download's URL, and a
subagent's process id (``pid N``). No
``*_API_KEY`` variable is set while a scenario runs (no request leaves the loopback server), and
``EUKHE_HUNT_DB`` names an empty $P/hunt (``laws pin``).

Some commands run in a setting of their own (``SETTINGS``): an event's ``env`` is set while it
runs ($P and $A read as the real dirs); its ``agent`` names the agent dir by ``EUKHE_AGENT_DIR``
(``env``), by ``$HOME`` ($P/home, ``home``), or by ``--agent-dir`` of another path; its ``stdout``
is a real pipe whose reader is gone (``closed``), /dev/full (``full``) or None, as Python makes it
when started with stdout closed (``none``), or a block-buffered pipe whose reader is gone (``closed
late``: the first write to fail is the flush at the end); its ``stderr`` a pipe whose reader is gone
(``closed``) or None (``none``). A ``lock``
event takes the writer lock of a session as another writer would (held to the scenario's end); a
``corrupt`` event puts a line that is no record before the last line of a session's log (session
``chat``: the chat's, whose agent then ends before serving); an ``own`` event takes the chat
memory's owner lock as another owner would, serving no lock socket (held to the scenario's end). Of
``--help``, only the usage line's start (``usage: eukhe session``) is kept; of a traceback
(EUKHE_DEBUG=1), ``(traceback)`` and its one error line; the holder a locked session names is cut;
of ``laws --area``, each law's line without its seconds and the summary line (the table and the
strength counts are cut); of ``memory simulate --cache``, each figure of the cache measure that is
a count or rate not below 0, or a percent from 0 to 100, prints as ``#`` (any other as it is), and
the detail of its ``why`` is cut. An argument's undecodable bytes print escaped in the ``$`` line.

An event's ``tty`` runs it on a terminal: stdin and stdout (``all``: stderr too) are the slave end
of a pseudo-terminal (24 rows, 100 columns, TERM xterm-256color); what the command draws there is
not compared, but of ``laws`` the rows of the laws.json it wrote print as ``laws.json AREA/NAME
STATUS``. A ``core`` event runs ``python -m eukhe.corebuild ARGV`` (the real module, in this
process) on a scratch checkout $P/checkout whose impl/eukhe/memory/core.py the event's ``source``
writes first (``CORE_SOURCES``: a small typed module, the same edited, one without the line
``SOURCE = ""``, one that is no Python, one that builds but does not import), so the core of this
tree is never built or checked; the line is ``N $ python -m eukhe.corebuild ARGV (SOURCE) ->
STATUS``, the platform's extension suffix prints as ``$X`` and a failed build's compiler output
after ``failed:`` is cut.

The scenarios past the first 300 (``EDGES``) add input classes the drawn ones never reach. A
``tiny`` event's state ``echo`` installs a model whose engine.json names the echo engine (the
seed's "real serve, fake engine": a real worker serves it; a worker a scenario starts ends 10 s
after its last request); what ``transcribe`` prints is cut (``(text)``), and so are the chrF scores
of ``translate-eval`` (``#``) and the date ``memory date`` prints (``(date)``). An event's ``player``
writes $P/aplay, an audio player that plays (``ok``) or fails (``fails``). A chat event's ``steer``
types its last line while the turn of the line before runs; its ``late`` lines are typed (into the
pipe) once the chat shows the ``after`` text; a scripted reply's part ``{"wait": "queued"}`` holds
the reply until the chat shows the line queued to join the running call: the loopback server's own
gating, no timing; a part ``{"wait": "end"}`` holds the rest of the reply until the command ended,
and ``{"wait": "shown"}`` until the chat shows the event's ``hold`` text. A chat event's ``kill``
(``{"after": TEXT}``) SIGKILLs the chat's agent process (found by its command line) once the chat
shows TEXT, and the chat goes on once that process ended (a line of the bridge's own says so when
the text was never shown or no agent was found). A chat event's ``socket`` of ``reset`` makes its
standard input a Unix socket whose peer sent the lines, then closed with a byte unread: the chat's
read after the lines fails (ECONNRESET). ``file`` events may write $A/models.json (``models``),
$A/chat (``chat``) and $A/sessions/chat (``chat session``); a ``stderr`` of ``closed file`` is a
stream object already closed. An ``agent`` of /sys/eukhe names a
dir that cannot be made (sysfs): the reason its error gives (as root, as another user, or on a
read-only mount) prints as ``...``, the hint after it as it is. A ``tty`` event's ``keys`` (``ctrl+d``)
runs the full-screen client (Textual, in this process, which reads sys.__stdin__ and draws on
sys.__stderr__: both are the terminal while it runs) and types the keys once the client drew the
switch it writes after raw mode (``RAW_MODE``: the gate, no timing; a client not left within 120 s is
ended by Ctrl-C, and a line of the bridge's own says so: a transcript the model never prints);
a session ``tui`` made on a terminal gets the next ``$S`` label. ``login`` on a terminal (``tty`` ``all``)
runs as a process of its own in a session of its own (no controlling terminal: getpass reads the
terminal that is its stdin, whatever terminal the bridge runs under; a break named by EUKHE_BREAK is
installed there too), and its ``stdin`` text is typed once it drew its prompt (``LOGIN_PROMPT``: the
gate; the echo is off by then).
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import io
import json
import os
import random
import re
import runpy
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import sysconfig
import tempfile
import termios
import threading
import time
import warnings
import wave
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bend import cli as model
from bend import infer
from bend.cvar import parse_value, quote, to_json
from bridge.core import Bridge, Event
from spec.loopback import LoopbackServer, Stream, Wait, base_url, script_of
from eukhe import cli, corebuild
from eukhe.tiny import catalog
from eukhe.tiny import paths as tiny_paths

IDS = [d.id for d in model.DECLS]
BOOLS = [d.id for d in model.DECLS if d.type.kind == "Bool"]
LOCAL_PLAIN = ["transport", "retry.enabled", "compaction.enabled", "retry.maxRetries", "compaction.keepRecentTokens",
               "directors.maxSteps", "autonomous.enabled", "stt.enabled", "maxToolRounds", "temperature"]
UNDECLARED = ["bogus", "retry.bogus"]
GOOD: dict[str, list[str]] = {
    "transport": ["sse", "websocket", "auto"],
    "retry.enabled": ["true", "false"],
    "compaction.enabled": ["true", "false"],
    "retry.maxRetries": ["0", "5", "12"],
    "compaction.keepRecentTokens": ["100", "40000"],
    "memory.thinking": ["high", "off", "max"],
    "directors.maxSteps": ["7", "200"],
    "autonomous.enabled": ["true", "false"],
    "defaultModel": ["gpt-5", "a b", ""],
    "thinkingBudgets": ['{"high": 3}', "{}", '{"low": 1, "high": 9}'],
    "titles.generate": ["true", "false"],
    "stt.enabled": ["true", "false"],
    "providerMaxInFlight": ['{"openai": 2}', "{}"],
    "idleEvictionMinutes": ["off", "none", "15"],
    "maxToolRounds": ["1", "50"],
    "temperature": ["0.5", "2", "1.25"],
    "trustedProjects": ['["$P"]', "[]", '["/elsewhere"]'],
}
BAD: dict[str, list[str]] = {
    "Bool": ["yes", "1"], "Nat": ["-1", "x", "1.5"], "Enum": ["fast"], "String": [], "NatOrOff": ["never", "-2"],
    "Float": ["x", "1e5"], "Map": ['{"a": -1}', "[1]", "{"], "List": ["[1]", '"x"', "[,"],
}
CASES = frozenset(
    {f"command {c}" for c in (
        "set --global", "set --session", "toggle --global", "toggle --session", "cvar line", "cvar save", "settings show",
        "settings show --session", "mcp add", "mcp remove", "session new", "session list", "session show", "session fork",
        "session rewind", "effort offered", "effort clamp", "effort cycle", "tiny-models list", "tiny-models download",
        "translate", "translate-eval", "say", "transcribe", "memory status", "memory view", "memory date", "memory zoom",
        "memory import", "memory simulate", "directors simulate", "laws", "usage", "tui", "agent", "tiny-worker",
        "login", "ask", "quirks", "provider", "model", "chat")}
    | {f"error {e}" for e in (
        "CvarError::Undeclared", "CvarError::BadValue", "CvarError::Global", "CvarError::NotBool", "ExpandError::Unknown",
        "ExpandError::Cycle", "cvar refused", "cvar parse", "unreadable fault", "unreadable bytes", "not JSON", "not an object",
        "unknown version", "does not parse", "no session", "no entry", "no conversation", "entry id", "no mcpServers entry",
        "empty name", "entry not an object", "needs --session", "invalid choice", "required", "unknown level", "level map",
        "Unavailable", "not installed", "unknown tiny model", "cannot read", "no message", "runs past", "memory argument",
        "simulate argument", "script not JSON", "script keys", "script type", "script goal_status", "script empty",
        "laws words", "value not JSON", "no law", "no area", "no terminal", "unknown provider", "key refused",
        "timeout", "empty text", "wire API", "bundled", "bad model id", "base URL", "voice", "out path", "empty path",
        "too deep", "script path", "flag type", "group verb", "not a WAV", "bundle not a catalog")}
    | {"tiny installed", "tiny incomplete", "tiny missing", "trust warning", "settings errors", "trusted project",
       "project layer", "profile layer", "session layer", "mcp lines", "script input", "script command", "stack full",
       "command refused", "login stored", "script reply", "quirks family answer", "quirks host answer", "quirks catalog model",
       "quirks no family", "caps line", "model line", "bundled line", "ask answered", "ask thinking shown", "ask answer after thinking",
       "ask tool call", "ask stop reason", "ask refused", "ask refused no reason", "ask usage", "laws pinned nothing"}
    | {"memory simulated", "memory simulated batches"}
    | {"command help", "error argument bytes", "error argument escape", "debug traceback", "stdout closed", "agent dir from env",
       "agent dir from home", "session dir from env", "session dir from home", "error agent dir a file", "error agent dir under a file",
       "error import dir missing", "error import not a dir", "error path through a file", "error path escaped",
       "error bundle not UTF-8", "laws area ran", "laws report", "directors limits given", "error corrupt record", "corrupt listed",
       "fork shown", "error session locked", "lock timeout from config", "error no player", "error URL port",
       "error sessions dir a file", "cache measured", "cache plotted", "session dir from setting", "stdout full", "stdout none",
       "stderr closed", "error key bytes", "error login models.json provider", "stdout full at a line", "login interrupted"}
    | {"tui no session", "tui corrupt", "bare command on a terminal", "laws on a terminal", "chat agent unreachable",
       "chat agent ended before serving", "chat memory owned elsewhere"}
    | {"stdout closed late", "stdout closed after an error", "stderr none"}
    | {"error agent dir read-only", "tui new session left", "tui session written last left"}
    | {"error project dir missing", "chat again", "chat again same model", "chat deep agent dir", "error script endless"}
    | {"forced called", "forced retried", "forced not called", "error png not written", "error plot not written"}
    | {"tiny echo", "say written", "say played", "error player failed", "transcribed", "translate eval", "chat steered",
       "cache long run", "error integer too long", "memory view lines", "memory zoomed", "memory dated", "error speech not written",
       "error worker", "chat typed during a reply", "chat note", "stderr closed file", "stderr closed file, an error",
       "error number past the largest", "models.json warned", "models.json provider caps", "error stream repeating",
       "error chat dir a file", "chat turn failed after text", "chat subagent failed"}
    | {"chat input reset", "login on a terminal", "chat agent ended mid-turn", "chat subagent started",
       "chat agent ended before a prompt", "chat session made meanwhile", "chat line past the limit"}
    | {f"core {c}" for c in ("missing or stale", "current", "built", "unmarked", "build failed", "built, not importable")}
    | {f"chat {c}" for c in ("started", "help", "memory status", "memory view", "memory model", "unknown command", "agent refused",
                             "not UTF-8", "blank line", "quit", "turn answered", "thinking", "refused", "turn failed", "effort row",
                             "retried", "tool call", "tool result")}
    | {f"error {e}" for e in ("ask HTTP status", "ask error event", "ask no end event", "no provider", "lists no model", "no credentials",
                              "no such model", "refusal", "download unpinned", "download failed", "past the largest", "script not UTF-8",
                              "ask retried", "ask wait too long")}
)


# -- the generator ------------------------------------------------------------------------------


def _value(rng: random.Random, cvar: str) -> str:
    decl = [d for d in model.DECLS if d.id == cvar][0]
    bad = BAD[decl.type.kind]
    if bad and rng.random() < 0.25:
        return rng.choice(bad)
    return rng.choice(GOOD[cvar])


def _json_value(rng: random.Random, cvar: str) -> Any:
    text = rng.choice(GOOD[cvar])
    decl = [d for d in model.DECLS if d.id == cvar][0]
    if decl.type.kind in ("Map", "List"):
        return json.loads(text)
    ok, value = parse_value(decl.type, text)
    return to_json(value) if ok else text


def _nest(flat: dict[str, Any]) -> dict[str, Any]:
    doc: dict[str, Any] = {}
    for key, value in flat.items():
        parts = key.split(".")
        here = doc
        for part in parts[:-1]:
            here = here.setdefault(part, {})
            if not isinstance(here, dict):
                break
        else:
            here[parts[-1]] = value
    return doc


def _settings_doc(rng: random.Random, project: bool) -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for cvar in rng.sample(IDS, rng.randint(0, 4)):
        flat[cvar] = _json_value(rng, cvar) if rng.random() < 0.8 else rng.choice([-3, "x", [1], True])
    if not project and rng.random() < 0.3:
        flat["trustedProjects"] = ["$P"]
    if rng.random() < 0.2:
        flat[rng.choice(UNDECLARED)] = 1
    doc = _nest(flat)
    if rng.random() < 0.5:
        doc["mcpServers"] = {rng.choice("abc"): {"command": rng.choice(["srv", "x"])} for _ in range(rng.randint(1, 2))}
        if rng.random() < 0.2:
            doc["mcpServers"]["bad"] = 3
    if rng.random() < 0.3:
        doc["version"] = 1
    return doc


def _doc_file(rng: random.Random, name: str) -> Event:
    roll = rng.random()
    if roll < 0.7:
        return {"do": "file", "name": name, "state": "text", "text": json.dumps(_settings_doc(rng, name == "project"), sort_keys=True)}
    text = rng.choice(['{"version": 2}', "[1, 2]", '{"retry": ', "3"])
    state = rng.choice(["text", "text", "dir", "badutf8"])
    return {"do": "file", "name": name, "state": state, "text": text if state == "text" else ""}


def _cfg_line(rng: random.Random, local: bool) -> str:
    roll = rng.random()
    if roll < 0.7:
        cvar = rng.choice(IDS if not local or rng.random() < 0.3 else LOCAL_PLAIN)
        return f"set {cvar} {quote(_value(rng, cvar))}"
    if roll < 0.8:
        return "set " + rng.choice(UNDECLARED) + " 1"
    if roll < 0.87:
        return "bind f1 \"toggle retry.enabled\""
    if roll < 0.94:
        return "# a comment"
    return 'set "unterminated'


def _cfg_file(rng: random.Random, name: str) -> Event:
    if rng.random() < 0.12:
        return {"do": "file", "name": name, "state": rng.choice(["dir", "badutf8"]), "text": ""}
    lines = [_cfg_line(rng, name != "gcfg") for _ in range(rng.randint(1, 4))]
    if name == "gcfg" and rng.random() < 0.3:
        lines.append('set trustedProjects "[\\"$P\\"]"')
    return {"do": "file", "name": name, "state": "text", "text": "".join(line + "\n" for line in lines)}


SCRIPTS = [
    '{"goal": "fix it"}\n{"goal_status": "paused"}\n{"autonomous": true}\n',
    '{"autonomous": false}\n\n{"goal": "g"}\n{"goal_status": "complete"}\n',
    '{"goal_status": "paused"}\n',
    '{"goal": 1}\n',
    '{"autonomous": "yes"}\n',
    '{"goal": "a", "x": 1}\n',
    '[1]\n',
    '{"goal": \n',
    "\n\n",
    '{"reply": {"tool_calls": [{"name": ""}]}}\n',
    '{"reply": {"text": 3}}\n',
    '{"input": NaN}\n',
    '{"input": ' + "[" * 101 + "]" * 101 + "}\n",
    '{"command": 7}\n',
    '{"input": "hi"}\n' + '{"command": "/remind a"}\n' * 6 + '{"command": "/force bash"}\n' * 3,
]

# Scripts of a forced tool call (scenarios 15 and 16): missed and retried, then called (the layer
# leaves); never called within its tries (--tries 2, 0); called after misses (--tries 3).
FORCED = [
    '{"input": "hi"}\n{"command": "/force bash"}\n{"reply": {"text": "no"}}\n'
    '{"reply": {"text": "ran", "tool_calls": [{"name": "bash", "arguments": {"cmd": "ls"}, "result": "a"}]}}\n{"reply": {"text": "done"}}\n'
    '{"command": "/force read --tries 2"}\n{"reply": {"text": "x"}}\n{"reply": {"tool_calls": [{"name": "bash"}]}}\n{"reply": {}}\n'
    '{"reply": {"text": "after"}}\n',
    '{"command": "/force bash --tries 0"}\n{"reply": {"text": "x", "tool_calls": [{"name": "read", "error": true}]}}\n{"input": "go"}\n'
    '{"command": "/force bash --tries 3"}\n{"reply": {"text": ""}}\n{"reply": {"tool_calls": [{"name": "bash", "error": true}]}}\n',
]

COMMAND_LINES = ["/remind a", "/remind check the tests", "/force bash", "/force bash --tries 2", "/force", "/remind", "/bogus", "remind"]


REPLIES = [{"text": "done"}, {}, {"text": "ran it", "tool_calls": [{"name": "bash", "arguments": {"cmd": "ls"}, "result": "a b"}]},
           {"text": "x", "note": "half way", "tool_calls": [{"name": "read", "error": True}, {"name": "bash"}]}]


def _script(rng: random.Random) -> str:
    """A script of inputs and session commands (sometimes past the stack's cap of 8 layers), or
    of inputs and replies with no Director."""
    lines = []
    replies = rng.random() < 0.35
    for _ in range(rng.randint(1, 12)):
        if replies and rng.random() < 0.7:
            lines.append(json.dumps({"reply": rng.choice(REPLIES)}))
        elif replies or rng.random() < 0.25:
            lines.append(json.dumps({"input": rng.choice(["hi", "go on"])}))
        else:
            lines.append(json.dumps({"command": rng.choice(COMMAND_LINES)}))
    return "".join(line + "\n" for line in lines)


class Sessions:
    """The generator's guess of the sessions made so far (a fork may fail: then a label names none)."""

    def __init__(self) -> None:
        self.made = 0

    def pick(self, rng: random.Random) -> str:
        if self.made == 0 or rng.random() < 0.08:
            return "nosuch"
        return f"$S{rng.randint(1, self.made)}"


def _command(rng: random.Random, sessions: Sessions, tiny: dict[str, str]) -> Event:
    kind = rng.choices(
        ["set-global", "toggle-global", "set-session", "toggle-session", "cvar", "save", "show", "mcp", "session",
         "effort", "tiny", "memory", "directors", "usage", "refused", "quirks"],
        weights=[8, 4, 7, 4, 5, 2, 8, 5, 9, 4, 2, 3, 2, 3, 9, 6],
    )[0]
    where = ["--project", "$P"]
    if kind == "set-global":
        cvar = rng.choice(IDS + UNDECLARED[:1])
        return {"do": "run", "argv": ["set", cvar, _value(rng, cvar) if cvar in IDS else "1", "--global", *where]}
    if kind == "toggle-global":
        return {"do": "run", "argv": ["toggle", rng.choice(BOOLS + ["retry.maxRetries", "bogus"]), "--global", *where]}
    if kind in ("set-session", "toggle-session"):
        label = sessions.pick(rng)
        if kind == "set-session":
            cvar = rng.choice(LOCAL_PLAIN + ["defaultModel", "bogus"])
            argv = ["set", cvar, _value(rng, cvar) if cvar in IDS else "1"]
        else:
            argv = ["toggle", rng.choice(BOOLS + ["retry.maxRetries", "bogus"])]
        return {"do": "run", "argv": argv + ([] if rng.random() < 0.05 else ["--session", label]) + where}
    if kind == "cvar":
        parts = []
        for _ in range(rng.randint(1, 3)):
            roll = rng.random()
            if roll < 0.45:
                cvar = rng.choice(LOCAL_PLAIN + ["defaultModel", "bogus"])
                parts.append(f"set {cvar} {quote(_value(rng, cvar) if cvar in IDS else '1')}")
            elif roll < 0.65:
                parts.append("toggle " + rng.choice(BOOLS + ["retry.maxRetries"]))
            elif roll < 0.75:
                parts.append('alias go "toggle retry.enabled"')
            elif roll < 0.82:
                parts.append("go")
            elif roll < 0.87:
                parts.append('alias bad "set \\"x"')
            elif roll < 0.93:
                parts.append("action app.interrupt")
            else:
                parts.append('set "unterminated')
        if rng.random() < 0.08:
            parts = [rng.choice(['alias loop "loop"', "loop"])]
        return {"do": "run", "argv": ["cvar", "; ".join(parts), "--session", sessions.pick(rng), *where]}
    if kind == "save":
        return {"do": "run", "argv": ["cvar", "save", "--session", sessions.pick(rng), *where]}
    if kind == "show":
        argv = ["settings", "show", *where]
        if rng.random() < 0.4:
            argv += ["--session", sessions.pick(rng)]
        return {"do": "run", "argv": argv, "ids": rng.sample(IDS, 5)}
    if kind == "mcp":
        roll = rng.random()
        name = rng.choice("abcz") if rng.random() < 0.93 else " "
        if roll < 0.55:
            entry = rng.choice(['{"command": "srv"}', '{"url": "http://x"}', "[1]", "{", "3", "null"])
            return {"do": "run", "argv": ["mcp", "add", name, entry]}
        return {"do": "run", "argv": ["mcp", "remove", name]}
    if kind == "session":
        action = rng.choices(["new", "list", "show", "fork", "rewind"], weights=[5, 2, 3, 2, 2])[0]
        if action == "new":
            sessions.made += 1
            return {"do": "run", "argv": ["session", "new"]}
        if action == "list":
            return {"do": "run", "argv": ["session", "list"]}
        label = sessions.pick(rng)
        if action == "show":
            extra = ["--conversation", "main.sub"] if rng.random() < 0.1 else []
            return {"do": "run", "argv": ["session", "show", label, *extra]}
        entry = rng.choice(["1", "2", "3", "1", "x", "9"])
        if action == "fork":
            sessions.made += 1
        return {"do": "run", "argv": ["session", action, label, entry]}
    if kind == "effort":
        verb = rng.choice(["offered", "clamp", "cycle"])
        level_map = rng.choice(["null", "{}", '{"xhigh": "xhigh"}', '{"minimal": null, "max": "max"}', '{"low": null}',
                                "[1]", '{"huge": "x"}', '{"high": 3}'])
        argv = ["effort", verb, "--map", level_map]
        if rng.random() < 0.75:
            argv.append("--reasoning")
        if verb != "offered":
            argv += ["--level", rng.choice(list(model.LEVELS) + ["huge"])]
        if verb == "cycle" and rng.random() < 0.5:
            argv.append("--backward")
        return {"do": "run", "argv": argv}
    if kind == "tiny":
        translate_free = all(tiny.get(m) != "installed" for m in model.ROLE_CHAINS["translate"])
        speech_free = tiny.get("kokoro") != "installed"
        choices = [["tiny-models", "list"], ["tiny-models", "list"], ["tiny-models", "download", "nosuch"], ["transcribe", "$P/nosuch.wav"],
                   ["translate-eval", "nosuch"], ["translate", " ", "hi"], ["say", ""], ["say", "hi", "--speed", "0"]]
        missing = [m for m, _ in model.CATALOG if tiny.get(m) != "installed"]
        if missing:
            choices.append(["translate-eval", rng.choice(missing)])
        if translate_free:
            choices.append(["translate", "German", "hello"])
        if speech_free:
            choices.append(["say", "hello", "--out", "$P/x.wav"])
        if not tiny and rng.random() < 0.3:  # from the loopback server, which answers 404: no file installed
            chosen = rng.choice(["all", *[m for m, _ in model.CATALOG], "kokoro"])
            return {"do": "run", "argv": ["tiny-models", "download", chosen, "--base-url", "$U"], "replies": [{"fail": 404, "body": "nope"}]}
        if all(tiny.get(m) != "installed" for m in model.ROLE_CHAINS["dictation"]) and rng.random() < 0.4:
            return {"do": "run", "argv": ["transcribe", "$P/x.wav"], "wav": rng.choice(["pcm", "junk"])}
        return {"do": "run", "argv": rng.choice(choices)}
    if kind == "memory":
        argv = rng.choice([["memory"], ["memory", "view"], ["memory", "date", "0"], ["memory", "date", "-1"],
                           ["memory", "zoom", "0", "1"], ["memory", "zoom", "2", "x"], ["memory", "import"],
                           ["memory", "simulate", "--messages", "0"], ["memory", "simulate", "--messages", "3", "--png", "x.txt"],
                           ["memory", "simulate", "--messages", "3", "--plot", "x.svg"],
                           ["memory", "simulate", "--messages", rng.choice(["1", "3", "40", "700", "1200"])],
                           ["memory", "simulate", "--messages", rng.choice(["5", "600", "1500"]), "--seed", rng.choice(["7", "-3", "0"])],
                           ["memory", "simulate", "--messages", rng.choice(["2", "300"]), "--png", rng.choice(["$P/saw.png", "$P/.eukhe/Saw.PNG"])]])
        return {"do": "run", "argv": argv}
    if kind == "directors":
        if rng.random() < 0.1:  # a script whose last line is no UTF-8
            return {"do": "run", "argv": ["directors", "simulate", "--script", "$P/script.jsonl"], "script": rng.choice(["", '{"goal": "a"}\n']),
                    "badutf8": True}
        return {"do": "run", "argv": ["directors", "simulate", "--script", "$P/script.jsonl", "--session-dir", "$P/ds"],
                "script": rng.choice(SCRIPTS) if rng.random() < 0.5 else _script(rng)}
    if kind == "refused":
        return _refused(rng)
    if kind == "quirks":
        return _quirks(rng)
    if rng.random() < 0.15:
        area, name = rng.choice(model.SEED_LAWS)
        return {"do": "run", "argv": ["laws", "pin", rng.choice([name, f"{area}/{name}"])]}
    return {"do": "run", "argv": rng.choice([["bogus"], ["set", "retry.enabled"], ["toggle"], ["laws", "pin"], ["laws", "frob", "x"]])}


# `quirks query` against the shipped rulebook: model ids of every family (and of none), the signals
# of every host (wire API, provider id, URL fragments, capability hosts). A provider of the built-in
# catalog gets one of its catalog models (its api and compat join the query) or a ``lab/`` id (none);
# names never make two families match (the overlap is logged once per process, not part of a transcript).
QUIRK_MODELS = [
    "claude-opus-4-6", "claude-sonnet-4-6", "claude-sonnet-5", "anthropic.claude-haiku-5-1", "us.anthropic.claude-opus-4-1",
    "claude-3-5-sonnet-20240620", "claude-3-haiku", "claude-instant-1", "gpt-5", "gpt-5.1-chat", "gpt-5.4", "gpt-5.5",
    "gpt-5.4-mini", "gpt-5-mini", "gpt-oss-120b", "gemini-3-pro", "gemini-flash-latest", "gemini-2.5-pro", "gemini-2.5-flash",
    "gemini-2.5-flash-lite", "gemma-4-27b", "gemma-3", "qwen3.8", "qwen3.8-8b", "qwen3-8b", "qwq-32b", "grok-4.3", "grok-4.5",
    "grok-4.6", "grok-4.9", "llama-3", "Org/Gemini-3-Flash", "mistral-large", "qwen3.8-ünï",
]
QUIRK_NAMES: list[str | None] = [None, None, None, "GPT-5.4 Mini", "Claude-Opus-5", "gemini-2.5-pro", "Grok-4.6", "Qwen 2"]
QUIRK_PROVIDERS = ["", "", "openrouter", "openai", "google", "anthropic", "llama-cpp", "ollama", "local", "xai"]
QUIRK_APIS = ["", "", "", "anthropic-messages", "bedrock-converse-stream", "openai-codex-responses", "openai-completions",
              "google-generative-ai"]
QUIRK_URLS = ["", "", "https://openrouter.ai/api/v1", "http://localhost:8080/v1", "http://127.0.0.1:11434", "http://[::1]:80",
              "https://api.example.com", "HTTP://LOCALHOST.OpenRouter.ai", "http://0.0.0.0"]


BAD_BUNDLES = ["[1, 2]", "{", '{"version": 2, "providers": []}', '{"version": 1, "providers": [], "x": 1}',
               '{"version": 1, "providers": [{"id": "lab", "api": "bogus", "baseUrl": "http://x", "models": []}]}']
LEVEL_MAPS = [{"xhigh": "max"}, {"off": None, "high": "hi"}, {}, {"minimal": None, "low": None, "max": "max"}]


def _bundle(rng: random.Random) -> str:
    """A models.bundled.json: entries of the compiled catalog (the same api, so the compiled one
    fills a missing thinkingLevelMap, or another api), new models, sometimes a repeated key, or a
    document that is no catalog. Names match no family (a new one, or the compiled one)."""
    if rng.random() < 0.15:
        return rng.choice(BAD_BUNDLES)
    compiled = model.compiled_catalog()
    providers: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for _ in range(rng.randint(0, 5)):
        if rng.random() < 0.6:
            mapped = [m for m in compiled if m.level_map is not None]  # what a bundled entry of the same api is filled with
            twin = rng.choice(mapped if rng.random() < 0.6 else compiled)
            api = twin.api if rng.random() < 0.7 else rng.choice(model.WIRE_APIS)
            entry: dict[str, Any] = {"id": twin.id, "name": twin.name}
            provider = twin.provider
        else:
            provider, api = rng.choice([("lab", "openai-completions"), ("openai", "openai-responses"), ("anthropic", "anthropic-messages")])
            entry = {"id": rng.choice(["qwen3.8-lab", "grok-4.5-lab", "lab-model", "gemini-2.5-flash-lab", "claude-opus-5-lab"])}
            if rng.random() < 0.5:
                entry["name"] = rng.choice(["Lab Model", "Ünï Model"])
        entry["reasoning"] = rng.random() < 0.7
        if rng.random() < 0.4:
            entry["thinkingLevelMap"] = rng.choice(LEVEL_MAPS)
        models = providers.setdefault((provider, api, "https://lab.example/v1"), [])
        if rng.random() < 0.9 and any(m["id"] == entry["id"] for m in models):
            continue
        models.append(entry)
    document = {"version": 1, "providers": [{"id": p, "api": a, "baseUrl": u, "models": ms} for (p, a, u), ms in providers.items()]}
    return json.dumps(document, ensure_ascii=False)


def _quirks(rng: random.Random) -> Event:
    roll = rng.random()
    if roll < 0.15:
        return {"do": "run", "argv": ["provider", "caps", *rng.sample(model.PROVIDERS, 1)[: rng.randint(0, 1)]]}
    if roll < 0.2:
        return {"do": "run", "argv": ["model", "list"]}
    if roll < 0.38:
        return {"do": "run", "argv": ["model", "list", "--bundled", model.BUNDLE], "bundle": _bundle(rng)}
    model_id = rng.choice(QUIRK_MODELS)
    provider = rng.choice(QUIRK_PROVIDERS)
    if provider in model.PROVIDERS:
        ids = [m.id for m in model.compiled_catalog() if m.provider == provider]
        model_id = rng.choice(ids) if rng.random() < 0.5 else "lab/" + model_id
    name = rng.choice(QUIRK_NAMES) if infer.family_of(model.shipped_book().families, model_id, None).family is None else None
    argv = ["quirks", "query", model_id]
    for option, value in (("--provider", provider), ("--api", rng.choice(QUIRK_APIS)), ("--base-url", rng.choice(QUIRK_URLS)),
                          ("--name", name)):
        if value or (value == "" and rng.random() < 0.1):
            argv += [option, value]
    return {"do": "run", "argv": argv}


DEEP = "[" * (model.MAX_DEPTH + 1)
# Commands refused before they need a model, a network, a terminal or a long run (never one that
# would start any of them: a valid tiny-worker, download, ask or simulate is not generated).
REFUSED = [
    [], ["tui"], ["agent"], ["agent", "serve"], ["tiny-worker", "x"], ["tiny-worker", "../x", "--backend", "onnx", "--agent-dir", "$A"],
    ["tiny-worker", ".x", "--backend", "onnx", "--agent-dir", "$A"], ["tiny-worker", "x", "--backend", "onnx", "--agent-dir", "rel"],
    ["ask", " "], ["ask", "hi", "--timeout", "0"], ["ask", "hi", "--timeout", "-1"], ["ask", "hi", "--timeout", "x"],
    ["ask", "hi", "--timeout", "inf"], ["ask", "hi", "--timeout", "nan"], ["ask", "", "--timeout", "5"],
    ["quirks", "query", " "], ["quirks", "query", "gpt-5", "--api", "bogus"], ["provider", "caps", "nosuch"],
    ["model", "list", "--bundled", "$P/nosuch.json"], ["model", "list", "--bundled", "$P"], ["model", "list", "--bundled", "$P/.eukhe"],
    ["model", "list", "--bundled", ""], ["laws", "pin", "nosuch"], ["laws", "--area", "nosuch"],
    ["directors", "simulate", "--script", "$P/nosuch.jsonl"], ["directors", "simulate", "--script", "$P"],
    ["directors", "simulate", "--script", "$P/script.jsonl", "--max-steps", "x"],
    ["directors", "simulate", "--script", "$P/script.jsonl", "--stall-steps", "1.5"],
    ["directors", "simulate", "--script", "$P/script.jsonl", "--max-steps", str(2**63)],
    ["directors", "simulate", "--script", "$P/script.jsonl", "--stall-steps", "9" * 41], ["say", "hi", "--out", ""],
    ["session", "list", "--session-dir", "$P/sd"], ["session", "list", "--session-dir", ""], ["session", "show", DEEP],
    ["set", "retry.enabled", DEEP, "--global"], ["tiny-models", "download", "kokoro", "--base-url", "ftp://x"],
    ["tiny-models", "download", "all", "--base-url", "http://"], ["say", "hi", "--voice", "../x"], ["say", "hi", "--voice", ".x"],
    ["say", "hi", "--out", "$P"], ["say", "hi", "--out", "$P/no/x.wav"], ["memory", "simulate", "--messages", "x"],
    ["memory", "simulate", "--messages", "3", "--seed", "y"], ["memory", "simulate", "--messages", "3", "--png", "$P"],
    ["memory", "simulate", "--messages", "3", "--png", "$P/no/x.png"], ["memory", "simulate", "--messages", "3", "--cache", "--plot", "x.png"],
    ["memory", "simulate", "--messages", "3", "--cache", "--plot", "$P/no/x.svg"],
    ["directors", "simulate", "--script", ""], ["memory", "simulate", "--messages", "3", "--png", ""],
    ["memory", "simulate", "--messages", "3", "--cache", "--plot", ""], ["laws", "--laws-dir", ""],
    *([group] for group in model.VERB_OF),
]


def _refused(rng: random.Random) -> Event:
    if rng.random() < 0.3:
        key = rng.choice(["sk-abc", "", "  ", "a b", "sk-1\r"])
        return {"do": "run", "argv": ["login", rng.choice(["openai", "anthropic", "nosuch"])], "stdin": key + rng.choice(["", "\n", "\nmore\n"])}
    return {"do": "run", "argv": list(rng.choice(REFUSED))}


ASK_TEXTS = ["hi", "what is 2+2?", "ünï ☃", "go on"]
ASK_PARTS: list[dict[str, Any]] = [{"text": "Hello"}, {"text": " world"}, {"text": "line one\nline two"}, {"text": "ünï"},
                                   {"thinking": "hmm"}, {"thinking": "let me see"}, {"call": {"name": "read", "arguments": '{"path": "a"}'}},
                                   {"call": {"name": "ls", "arguments": "{}"}}]


def _reply(rng: random.Random) -> dict[str, Any]:
    """One scripted reply: parts, a stop, sometimes usage; a refusal (its text may be empty), an
    HTTP error status that is not retried, an error event or a stream without its end event after
    some text (a fault once the reply began is not retried), or no part at all."""
    roll = rng.random()
    if roll < 0.12:
        return {"fail": rng.choice([400, 401, 403, 404]), "body": rng.choice(["", "no key", '{"error": {"message": "bad"}}'])}
    drawn = [dict(rng.choice(ASK_PARTS)) for _ in range(rng.randint(0, 4))]
    parts = sorted(drawn, key=lambda part: ["thinking", "text", "call"].index(next(iter(part))))  # a reply's order: thinking, text, calls
    reply: dict[str, Any] = {"parts": parts}
    uncalled = [part for part in parts if "call" not in part]  # a fault ends a reply before its calls
    if roll < 0.22:
        reply["parts"] = uncalled + [{"text": "Hel"}, {"error": {"kind": rng.choice(["server_error", "overloaded_error"]), "message": "boom"}}]
    elif roll < 0.3:
        reply["parts"], reply["end"] = uncalled + [{"text": "Hel"}], False
    elif roll < 0.45:
        reply["parts"], reply["stop"] = parts + [{"refusal": rng.choice(["no", "I can't help with that", ""])}], "refusal"
    elif roll < 0.65:
        reply["stop"] = rng.choice(["length", "toolUse"])
    if rng.random() < 0.4:
        reply["usage"] = {"input": rng.randint(0, 99), "output": rng.randint(0, 99), **({"cache_read": 7, "cache_write": 3} if rng.random() < 0.3 else {})}
    return reply


def _ask(rng: random.Random) -> Event:
    """``ask`` against the loopback server: models.json names the provider ``lab`` of a wire API
    (its baseUrl $U: the server's), sometimes with no model; or a provider that is unknown, a
    built-in one with no key (login never stores one for these), or none."""
    api = rng.choice(list(model.ENDPOINT))
    models = [{"id": "m1"}, {"id": "m2", "reasoning": True}] if rng.random() < 0.85 else []
    document = {"providers": {"lab": {"baseUrl": "$U", "apiKey": "sk-lab", "api": api, "models": models}}}
    provider = rng.choices(["lab", "nosuch", "google", "xai", ""], weights=[20, 1, 1, 1, 1])[0]
    argv = ["ask", rng.choice(ASK_TEXTS)]
    if provider:
        argv += ["--provider", provider]
    if rng.random() < 0.3:
        argv += ["--model", rng.choice(["m2", "x", "gemini-2.5-pro"])]
    if rng.random() < 0.3:
        argv += ["--thinking", rng.choice(["high", "off", "max", "huge"])]
    for option in ("--show-thinking", "--usage"):
        if rng.random() < 0.4:
            argv.append(option)
    if rng.random() < 0.2:
        argv += ["--timeout", rng.choice(["5", "0.5"])]
    failed = []  # retryable statuses first, as many as retry.maxRetries takes at most (12), then the reply
    if rng.random() < 0.25:
        for _ in range(rng.choice([1, 1, 2, 4, 13])):
            failed.append({"fail": rng.choice([429, 500, 503, 529, 408]), "body": rng.choice(["", "busy"]),
                           "headers": {"Retry-After": "0" if rng.random() < 0.9 else "600"}})
    return {"do": "run", "argv": argv, "models": json.dumps(document), "api": api, "replies": failed + [_reply(rng)]}


CHAT_LINES: list[str | None] = ["/help", "/bogus", "/memory", "/memory view", "/memory model", "", "  ", None, "/agent", "/frob x"]
CHAT_REPLIES: list[dict[str, Any]] = [{"parts": [{"text": "Hi there"}]}, {"parts": [{"thinking": "hm"}, {"text": "Hi"}]},
                                      {"parts": [{"text": "line one\nline two"}]}, {"fail": 400, "body": "bad"}, {"fail": 401, "body": ""},
                                      {"parts": [{"refusal": "no"}], "stop": "refusal"}, {"parts": [{"text": "Hm."}, {"refusal": "I won't"}], "stop": "refusal"},
                                      {"parts": [{"call": {"name": "date", "arguments": '{"id": 7}'}}], "stop": "toolUse"}]


def _chat(rng: random.Random, turn: int) -> list[Event]:
    """``chat`` with standard input a file or a pipe of lines (None: a line that is not UTF-8): commands,
    blank lines, then sometimes one turn, last (a line typed while a turn runs joins it: which
    call it joins is a matter of timing), or ``/quit`` and lines it leaves unread; before it,
    sometimes a chat that cannot start (no provider, an unknown one, one with no key, a bad level)."""
    events: list[Event] = []
    api = rng.choice(list(model.ENDPOINT))
    document = json.dumps({"providers": {"lab": {"baseUrl": "$U", "apiKey": "sk-lab", "api": api,
                                                 "models": [{"id": "m1"}, {"id": "m2", "reasoning": True}]}}})
    if rng.random() < 0.5:
        thinking = rng.choice(["high", "off", "max", "low"])
        events.append({"do": "file", "name": "gcfg", "state": "text", "text": f"set memory.thinking {thinking}\n"})
    if rng.random() < 0.6:
        argv = rng.choice([["chat"], ["chat", "--provider", "nosuch"], ["chat", "--provider", "google"], ["chat", "--provider", "lab", "--thinking", "huge"],
                           ["chat", "--provider", "xai", "--model", "x"]])
        events.append({"do": "run", "argv": argv, "models": document, "api": api, "replies": [], "lines": ["/help"]})
    argv = ["chat", "--provider", "lab"]
    if rng.random() < 0.7:
        argv += ["--model", rng.choice(["m1", "m2", "m2"])]
    if rng.random() < 0.6:
        argv += ["--thinking", rng.choice(list(model.LEVELS))]
    lines = [rng.choice(CHAT_LINES) for _ in range(rng.randint(0, 4))]
    replies = []
    roll = rng.random()
    if roll < 0.65 or turn < len(CHAT_REPLIES):  # each reply in some scenario's turn
        lines.append(rng.choice(["hello", "what now?"]))
        if turn % 3 == 2:  # the agent retries a rate limit before any of the reply (Retry-After: 0)
            replies += [{"fail": 429, "body": "", "headers": {"Retry-After": "0"}}] * (1 + turn % 2)
        reply = CHAT_REPLIES[turn % len(CHAT_REPLIES)]
        replies.append(reply)
        if any("call" in part for part in reply.get("parts", [])):  # the tool's result goes back: the answer follows
            replies.append({"parts": [{"text": "done"}]})
        if rng.random() < 0.2:
            lines.append("/quit")
    elif roll < 0.8:
        lines += ["/quit", rng.choice(["/help", "hello"])]
    events.append({"do": "run", "argv": argv, "models": document, "api": api, "replies": replies, "lines": lines, "pipe": turn % 2 == 1,
                   "eol": turn % 4 != 3 or not lines or not lines[-1]})  # else its last line (text) ends the input, no newline
    if turn in AGAIN:  # a later chat of the same agent dir: the session as the first left it (its model and level)
        again = argv if not AGAIN[turn] else ["chat", "--provider", "lab", *AGAIN[turn]]
        typed: list[str | None] = ["/help"] if turn == 1 else ["/memory model", "hello"] if turn == 7 else ["hello"]
        events.append({"do": "run", "argv": again, "models": document, "api": api, "lines": typed, "pipe": turn == 7, "eol": True,
                       "replies": [{"parts": [{"text": "Hi again"}]}] if typed[-1] == "hello" else []})
    if turn % 5 == 4:  # an agent dir whose socket's path is longer than a Unix socket address holds
        for event in events:
            event["deep"] = True
    return events


AGAIN: dict[int, list[str]] = {1: [], 4: ["--model", "m2", "--thinking", "high"], 7: ["--model", "m1"]}  # []: the first chat's flags again


# Runs of a command in a setting of its own, each list in one scenario (index 7, 17, 27...: never a
# chat's), before its asks: --help; an argument with undecodable bytes or a lone escape; EUKHE_DEBUG
# (the traceback before the one line); stdout a pipe whose reader is gone; the agent dir named by
# EUKHE_AGENT_DIR, by $HOME, or by a flag naming a regular file or a path under one; the sessions
# dir by EUKHE_SESSION_DIR or ~/; `memory import` of a dir that is not there or a file; a path
# through a regular file or with a control character; a bundle that is no UTF-8; the effort laws run;
# ...; last, a --project dir that is not there, a script that is a device that never ends (/dev/zero),
# and drawings to a symbolic link to a place that is not there (``dangling``).
LAB = json.dumps({"providers": {"lab": {"baseUrl": "$U", "apiKey": "sk-lab", "api": "openai-completions", "models": [{"id": "m1"}]}}})
SETTINGS: list[list[Event]] = [
    [{"do": "run", "argv": ["--help"]}, {"do": "run", "argv": ["session", "--help"]}, {"do": "run", "argv": ["memory", "simulate", "-h"]},
     {"do": "run", "argv": ["directors", "simulate", "--help"]}],
    [{"do": "run", "argv": ["session", "show", "a\udcffb"]}, {"do": "run", "argv": ["set", "retry.enabled", "x\ud800", "--global"]}],
    [{"do": "run", "argv": ["session", "show", "nosuch"], "env": {"EUKHE_DEBUG": "1"}},
     {"do": "run", "argv": ["set", "bogus", "1", "--global"], "env": {"EUKHE_DEBUG": "1"}},
     {"do": "run", "argv": ["session", "list"], "env": {"EUKHE_DEBUG": "1"}}],
    [{"do": "run", "argv": ["session", "list"], "stdout": "closed"}, {"do": "run", "argv": ["model", "list"], "stdout": "closed"},
     {"do": "run", "argv": ["set", "retry.enabled", "true", "--global"], "stdout": "closed"}],
    [{"do": "run", "argv": ["session", "new"], "agent": "env"}, {"do": "run", "argv": ["session", "list"], "agent": "env"},
     {"do": "run", "argv": ["session", "list"], "agent": "home"}],
    [{"do": "run", "argv": ["session", "list"], "env": {"EUKHE_SESSION_DIR": "$P/sd"}},
     {"do": "run", "argv": ["session", "list", "--session-dir", "~/sd"], "env": {"HOME": "$P"}}],
    [{"do": "run", "argv": ["session", "new"], "agent": "$P/x.wav", "wav": "junk"},
     {"do": "run", "argv": ["session", "new"], "agent": "$P/x.wav/a", "wav": "junk"}],
    [{"do": "run", "argv": ["memory", "import", "--session-dir", "$P/nosuch"]},
     {"do": "run", "argv": ["memory", "import", "--session-dir", "$P/x.wav"], "wav": "junk"},
     {"do": "run", "argv": ["directors", "simulate", "--script", "$P/x.wav/s.jsonl"], "wav": "junk"},
     {"do": "run", "argv": ["directors", "simulate", "--script", "$P/a\tb.jsonl"]}],
    [{"do": "run", "argv": ["model", "list", "--bundled", "$P/bundle.json"], "bundle": '{"version": 1', "badutf8": True}],
    [{"do": "run", "argv": ["session", "new"]}, {"do": "run", "argv": ["session", "new"]},
     {"do": "run", "argv": ["set", "retry.enabled", "true", "--session", "$S2"]},
     {"do": "run", "argv": ["set", "retry.maxRetries", "5", "--session", "$S2"]}, {"do": "run", "argv": ["session", "fork", "$S2", "1"]},
     {"do": "run", "argv": ["session", "show", "$S3"]}, {"do": "corrupt", "session": "$S2"}, {"do": "run", "argv": ["session", "list"]},
     {"do": "run", "argv": ["session", "show", "$S2"]}, {"do": "run", "argv": ["set", "retry.enabled", "false", "--session", "$S2"]}],
    [{"do": "run", "argv": ["laws", "--area", "effort", "--laws-dir", "$P/build", "--report"]}],
    [{"do": "run", "argv": ["session", "new"]}, {"do": "lock", "session": "$S1"},
     {"do": "run", "argv": ["set", "retry.enabled", "true", "--session", "$S1"], "env": {"EUKHE_LOCK_TIMEOUT": "0"}},
     {"do": "run", "argv": ["cvar", "toggle retry.enabled", "--session", "$S1"], "env": {"EUKHE_LOCK_TIMEOUT": "0.0"}},
     {"do": "run", "argv": ["session", "show", "$S1"]}, {"do": "file", "name": "gcfg", "state": "text", "text": "set session.lockTimeoutMs 0\n"},
     {"do": "run", "argv": ["set", "retry.maxRetries", "4", "--session", "$S1"], "env": {"EUKHE_LOCK_TIMEOUT": "never"}}],
    [{"do": "run", "argv": ["laws", "--area", "effort", "--laws-dir", "$P/build"]}],
    [{"do": "run", "argv": ["memory", "simulate", "--messages", "3", "--cache"]},
     {"do": "run", "argv": ["memory", "simulate", "--messages", "40", "--seed", "7", "--cache", "--plot", "$P/cache.svg"]}],
    [{"do": "run", "argv": ["say", "hello", "--speed", "1.5"], "env": {"PATH": "$P"}},
     {"do": "run", "argv": ["tiny-models", "download", "kokoro", "--base-url", "http://x:abc"]},
     {"do": "run", "argv": ["directors", "simulate", "--script", "$P/script.jsonl", "--session-dir", "$P/x.wav"], "script": '{"input": "hi"}\n',
      "wav": "junk"}],
    [{"do": "run", "argv": ["directors", "simulate", "--script", "$P/script.jsonl", "--session-dir", "$P/ds", "--max-steps", "50",
                            "--stall-steps", "2"], "script": '{"input": "hi"}\n{"command": "/remind a"}\n'}],    [{"do": "run", "argv": ["session", "list"]}, {"do": "file", "name": "gcfg", "state": "text", "text": "set sessionDir sd2\n"},
     {"do": "run", "argv": ["session", "list"]}],    [{"do": "run", "argv": ["session", "new"]}, {"do": "run", "argv": ["session", "list"], "stdout": "full"},
     {"do": "run", "argv": ["session", "list"], "stdout": "full lines"},
     {"do": "run", "argv": ["session", "new"], "stdout": "none"}, {"do": "run", "argv": ["session", "list"]},
     {"do": "run", "argv": ["session", "show", "nosuch"], "stderr": "closed"}],    [{"do": "run", "argv": ["login", "openai"], "stdin": "", "badutf8": True},
     {"do": "run", "argv": ["ask", "hi", "--provider", "lab"], "models": LAB, "api": "openai-completions", "replies": [{"parts": [{"text": "ok"}]}]},
     {"do": "run", "argv": ["login", "lab"], "stdin": "sk-x\n"}],
    [{"do": "run", "argv": ["session", "new"]}, {"do": "run", "argv": ["tui", "--session", "nosuch"], "tty": True},
     {"do": "run", "argv": ["set", "retry.enabled", "true", "--session", "$S1"]},
     {"do": "run", "argv": ["set", "retry.maxRetries", "5", "--session", "$S1"]}, {"do": "corrupt", "session": "$S1"},
     {"do": "run", "argv": ["tui"], "tty": True}, {"do": "run", "argv": [], "tty": True},
     {"do": "run", "argv": ["tui", "--session", "$S1"], "tty": True},
     {"do": "run", "argv": ["laws", "--area", "effort", "--laws-dir", "$P/build"], "tty": True},
     {"do": "run", "argv": ["memory", "simulate", "--messages", "40", "--cache"], "tty": "all"},
     {"do": "run", "argv": ["directors", "simulate", "--script", "$P/script.jsonl", "--session-dir", "$P/ds"], "tty": "all",
      "script": '{"input": "hi"}\n{"command": "/remind a"}\n'}],
    [{"do": "file", "name": "run", "state": "text", "text": ""},
     {"do": "run", "argv": ["chat", "--provider", "lab"], "models": LAB, "api": "openai-completions", "replies": [], "lines": ["/help"]}],
    [{"do": "run", "argv": ["session", "new"]}, {"do": "run", "argv": ["session", "list"], "stdout": "closed late"},
     {"do": "run", "argv": ["set", "retry.enabled", "true", "--session", "$S1"]},
     {"do": "run", "argv": ["set", "retry.maxRetries", "5", "--session", "$S1"]}, {"do": "corrupt", "session": "$S1"},
     {"do": "run", "argv": ["session", "list"], "stdout": "closed late"}, {"do": "run", "argv": ["session", "show", "nosuch"], "stderr": "none"},
     {"do": "run", "argv": ["set", "bogus", "1", "--global"], "stderr": "none", "env": {"EUKHE_DEBUG": "1"}}],
    [{"do": "core", "argv": ["--check"]}, {"do": "core", "argv": []}, {"do": "core", "argv": ["--check"]}, {"do": "core", "argv": []},
     {"do": "core", "argv": ["--check"], "source": "edited"}, {"do": "core", "argv": ["--force"], "source": "unmarked"},
     {"do": "core", "argv": [], "source": "broken"}, {"do": "core", "argv": ["--check"], "source": "tiny"},
     {"do": "core", "argv": ["--force"]}, {"do": "core", "argv": [], "source": "raising"}, {"do": "core", "argv": ["--check"]}],
    [{"do": "run", "argv": ["set", "retry.enabled", "true", "--global", "--project", "$P/nosuch"]},
     {"do": "run", "argv": ["settings", "show", "--project", "$P/nosuch"], "ids": []},
     {"do": "run", "argv": ["toggle", "retry.enabled", "--session", "nosuch", "--project", "$P/nosuch"]},
     {"do": "run", "argv": ["cvar", "toggle retry.enabled", "--session", "nosuch", "--project", "$P/nosuch"]},
     {"do": "run", "argv": ["directors", "simulate", "--script", "/dev/zero", "--session-dir", "$P/ds"]},
     {"do": "run", "argv": ["memory", "simulate", "--messages", "3", "--png", "$P/link.png"], "dangling": "$P/link.png"},
     {"do": "run", "argv": ["memory", "simulate", "--messages", "3", "--cache", "--plot", "$P/link.svg"], "dangling": "$P/link.svg"}],
]


# Scenarios past the first 300 (``EDGES``), each of input classes the drawn ones never reach:
# tiny models whose engine answers (``echo``: the seed's "real serve, fake engine"; a real worker
# serves it): speech written and played through an audio player on PATH, one that fails, a WAV
# file transcribed, the seed's eval; a line typed into a chat while its turn runs (the turn's reply
# held by the loopback server until the chat shows the line queued: no timing); the cache measure
# over a run long enough for the view's batches and the compaction view's merges; JSON arguments
# holding an integer of more digits than a JSON reader converts; Ctrl-C as ``login`` reads its key;
# an agent dir in /sys, where no directory can be made (the error's reason, which the user and the
# mount decide, is cut: its hint is not); the full-screen client on a terminal, with no session (it
# makes one) and then with the one it made, left at once (Ctrl-D), its agent unreachable ($A/run a
# regular file: no agent process is started; what the client draws is not compared); a turn's call
# of the ``task`` tool whose subagent's one request fails (its failed turn a row of the chat, the
# tool's result its typed error, the chat's exit status 1; the subagent's process id is cut); a
# chat whose standard input is a Unix socket reset by its peer after the lines (the read that
# follows them fails: the end of input, the last line, without its newline, still a turn); ``login``
# on a terminal, its key typed without echo (a good one, one with a space, an empty one); a chat
# whose agent process is killed mid-turn, once the chat showed the reply's first text (the rest of
# the reply held by the loopback server): the line under way ends, the chat says its agent ended;
# ``/agent NAME TASK`` typed while a turn runs (no prompt races the subagent's rows), the turn's
# reply held until the chat shows the subagent's report, which then joins the turn; a chat whose
# agent is killed as it shows /help's row: the request for the prompt after it fails; a chat whose
# session's dir is there with no log (the chat takes it as made meanwhile; its agent ends before serving);
# a chat's line of PROTOCOL_LINE_LIMIT + 1 letters (``LONG_LINE`` in the scenario), whose request the
# agent would drop unanswered: refused unsent, the next line a turn.
HUGE = "1" + "0" * 4400
STEER = json.dumps({"providers": {"lab": {"baseUrl": "$U", "apiKey": "sk-lab", "api": "anthropic-messages",
                                          "models": [{"id": "m1"}, {"id": "m2", "reasoning": True}]}}})
EDGES: list[list[Event]] = [
    [{"do": "tiny", "model": "kokoro", "state": "echo"}, {"do": "tiny", "model": "whisper-base", "state": "echo"},
     {"do": "tiny", "model": "lfm2.5-230m", "state": "echo"}, {"do": "run", "argv": ["tiny-models", "list"]},
     {"do": "run", "argv": ["say", "hello", "--out", "$P/said.wav"]}, {"do": "run", "argv": ["transcribe", "$P/x.wav"], "wav": "pcm"},
     {"do": "run", "argv": ["say", "hello"], "env": {"PATH": "$P"}, "player": "fails"},
     {"do": "run", "argv": ["say", "hello, world", "--voice", "af_heart"], "env": {"PATH": "$P"}, "player": "ok"},
     {"do": "run", "argv": ["translate-eval", "lfm2.5-230m"]}, {"do": "run", "argv": ["translate-eval", "lfm2.5-350m"]},
     {"do": "run", "argv": ["say", "hi", "--out", "$P/link.wav"], "dangling": "$P/link.wav"},
     {"do": "tiny", "model": "lfm2.5-350m", "state": "installed"}, {"do": "run", "argv": ["translate-eval", "lfm2.5-350m"]}],
    [{"do": "run", "argv": ["chat", "--provider", "lab", "--model", "m1"], "models": STEER, "api": "anthropic-messages",
      "replies": [{"parts": [{"wait": "queued"}, {"text": "Hi there"}]}, {"parts": [{"text": "Joined."}]}], "lines": ["/help", "hello", "more"],
      "pipe": True, "eol": True, "steer": True},
     {"do": "run", "argv": ["memory", "view"]}, {"do": "run", "argv": ["memory", "zoom", "1", "1"]}, {"do": "run", "argv": ["memory", "date", "2"]},
     {"do": "run", "argv": ["memory", "date", "4"]}],
    [{"do": "run", "argv": ["chat", "--provider", "lab"], "models": STEER, "api": "anthropic-messages",
      "replies": [{"parts": [{"text": "Let me see"}, {"wait": "queued"}, {"text": " what you mean"}]}, {"parts": [{"text": "Joi"}, {"text": "ned."}]}],
      "lines": ["hello"], "pipe": True, "eol": True, "late": {"after": "Let me see", "lines": ["/help", "", "  ", "and more"]}}],
    [{"do": "run", "argv": ["chat", "--provider", "lab", "--model", "m2"], "models": STEER, "api": "anthropic-messages",
      "replies": [{"parts": []}, {"parts": []}, {"parts": [{"text": "Fi"}, {"text": "ne."}]}], "lines": ["hello"], "pipe": False, "eol": True}],
    [{"do": "run", "argv": ["memory", "import"], "stderr": "closed file"}, {"do": "run", "argv": ["session", "show", "nosuch"], "stderr": "closed file"},
     {"do": "run", "argv": ["memory", "simulate", "--messages", "3"], "stderr": "closed file"}],
    [{"do": "run", "argv": ["memory", "simulate", "--messages", "600", "--seed", "3", "--cache"]}],
    [{"do": "run", "argv": ["mcp", "add", "a", '{"command": "srv", "port": ' + HUGE + "}"]},
     {"do": "run", "argv": ["set", "thinkingBudgets", '{"high": ' + HUGE + "}", "--global"]},
     {"do": "run", "argv": ["directors", "simulate", "--script", "$P/script.jsonl", "--session-dir", "$P/ds"],
      "script": '{"goal": "a"}\n{"input": ' + HUGE + "}\n"},
     {"do": "run", "argv": ["mcp", "add", "a", '{"command": "x", "t": 1e999}']}, {"do": "run", "argv": ["mcp", "add", "b", "]" + "[]" * 101]},
     {"do": "run", "argv": ["effort", "offered", "--map", '{"high": "x", "max": -1E400}']},
     {"do": "run", "argv": ["directors", "simulate", "--script", "$P/script.jsonl", "--session-dir", "$P/ds"],
      "script": '{"goal": "a"}\n[[], ' + "[" * 101 + "]" * 101 + "]\n"},
     {"do": "run", "argv": ["directors", "simulate", "--script", "$P/script.jsonl", "--session-dir", "$P/ds"], "script": '{"input": 1e999}\n'}],
    [{"do": "file", "name": "models", "state": "text", "text": '{"providers": {'}, {"do": "run", "argv": ["model", "list"]},
     {"do": "run", "argv": ["provider", "caps", "lab"]}, {"do": "file", "name": "models", "state": "text", "text": "[1]"},
     {"do": "run", "argv": ["model", "list"]},
     {"do": "file", "name": "models", "state": "text", "text": json.dumps({"providers": {
         "lab": {"baseUrl": "https://lab.example/v1", "apiKey": "sk-lab", "api": "openai-completions", "models": [{"id": "m1"}]},
         "mine": {"baseUrl": "http://localhost:8080/v1", "apiKey": "k", "api": "anthropic-messages", "models": []}}})},
     {"do": "run", "argv": ["provider", "caps", "lab"]}, {"do": "run", "argv": ["provider", "caps", "mine"]}, {"do": "run", "argv": ["provider", "caps"]}],
    [{"do": "run", "argv": ["ask", "hi", "--provider", "lab"], "models": LAB, "api": "openai-completions", "replies": [{"parts": [{"text": "la\n" * 70}]}]},
     {"do": "run", "argv": ["ask", "go", "--provider", "lab"], "models": LAB, "api": "openai-completions",
      "replies": [{"parts": [{"text": "Sure:\n"}, {"text": "one\ntwo\n\n" * 40}]}]},
     {"do": "run", "argv": ["ask", "again", "--provider", "lab"], "models": LAB, "api": "openai-completions",
      "replies": [{"parts": [{"text": "a\nb\nc\n" * 5}, {"text": "done"}]}]},
     {"do": "file", "name": "chat", "state": "text", "text": ""}, {"do": "run", "argv": ["memory", "view"]}, {"do": "run", "argv": ["memory"]}],
    [{"do": "run", "argv": ["chat", "--provider", "lab"], "models": STEER, "api": "anthropic-messages",
      "replies": [{"parts": [{"text": "Hel"}, {"error": {"kind": "invalid_request_error", "message": "boom"}}]}], "lines": ["hello"]},
     {"do": "run", "argv": ["chat", "--provider", "lab"], "models": STEER, "api": "anthropic-messages",
      "replies": [{"parts": [{"text": ""}, {"text": "Hi"}]}], "lines": ["hello again"], "pipe": True}],
    [{"do": "run", "argv": ["login", "openai"], "interrupt": True}, {"do": "run", "argv": ["login", "openai"], "stdin": "sk-x\n"}],
    [{"do": "run", "argv": ["chat", "--provider", "lab"], "models": LAB, "api": "openai-completions", "replies": [{"parts": [{"text": "Hi"}]}], "lines": ["hello"]},
     {"do": "corrupt", "session": "chat"},
     {"do": "run", "argv": ["chat", "--provider", "lab"], "models": LAB, "api": "openai-completions", "replies": [], "lines": ["hello"]}],
    [{"do": "own"}, {"do": "run", "argv": ["chat", "--provider", "lab"], "models": LAB, "api": "openai-completions", "replies": [], "lines": ["hello"]}],
    [{"do": "run", "argv": ["session", "new"], "agent": "/sys/eukhe"}],
    [{"do": "file", "name": "run", "state": "text", "text": ""}, {"do": "run", "argv": ["tui"], "tty": True, "keys": ["ctrl+d"]},
     {"do": "run", "argv": ["session", "list"]}, {"do": "run", "argv": ["tui"], "tty": True, "keys": ["ctrl+d"]},
     {"do": "run", "argv": ["session", "list"]}],
    [{"do": "run", "argv": ["chat", "--provider", "lab"], "models": STEER, "api": "anthropic-messages",
      "replies": [{"parts": [{"call": {"name": "task", "arguments": '{"name": "scout", "task": "look around"}'}}], "stop": "toolUse"},
                  {"fail": 400, "body": "no tasks"}, {"parts": [{"text": "It failed."}]}], "lines": ["hello"]}],
    [{"do": "run", "argv": ["chat", "--provider", "lab"], "models": STEER, "api": "anthropic-messages",
      "replies": [{"parts": [{"text": "Hi"}]}], "lines": ["/help", "hello"], "eol": False, "socket": "reset"}],
    [{"do": "run", "argv": ["login", "openai"], "tty": "all", "stdin": "sk-typed\n"}, {"do": "run", "argv": ["login", "anthropic"], "tty": "all", "stdin": "sk typed\n"},
     {"do": "run", "argv": ["login", "openai"], "tty": "all", "stdin": "\n"}],
    [{"do": "run", "argv": ["chat", "--provider", "lab"], "models": STEER, "api": "anthropic-messages",
      "replies": [{"parts": [{"text": "Hm, "}, {"text": "let me look"}, {"wait": "end"}, {"text": " further"}]}], "lines": ["hello"],
      "kill": {"after": "let me look"}}],
    [{"do": "run", "argv": ["chat", "--provider", "lab"], "models": STEER, "api": "anthropic-messages",
      "replies": [{"parts": [{"text": "Let me see"}, {"wait": "shown"}]}, {"parts": [{"text": "All clear."}]}, {"parts": [{"text": "Noted."}]}],
      "lines": ["hello"], "pipe": True, "eol": True, "late": {"after": "Let me see", "lines": ["/agent scout look around"]},
      "hold": "[subagent] [scout] All clear."}],
    [{"do": "run", "argv": ["chat", "--provider", "lab"], "models": STEER, "api": "anthropic-messages", "replies": [],
      "lines": ["/help", "hello"], "kill": {"after": "commands: /memory"}}],
    [{"do": "file", "name": "chat session", "state": "dir"},
     {"do": "run", "argv": ["chat", "--provider", "lab"], "models": LAB, "api": "openai-completions", "replies": [], "lines": ["hello"]}],
    [{"do": "run", "argv": ["chat", "--provider", "lab"], "models": LAB, "api": "openai-completions", "replies": [{"parts": [{"text": "Short."}]}],
      "lines": [model.LONG_LINE, "hello"], "pipe": False, "eol": True}],
]


def generate(index: int) -> list[Event]:
    if index >= 300:
        edge: list[Event] = json.loads(json.dumps(EDGES[index - 300]))
        return edge
    rng = random.Random(f"cli-{index}")
    if index % 20 == 11:  # a chat's scenario: the chat's agent is a process of its own (seconds each)
        return _chat(rng, index // 20)
    events: list[Event] = []
    for name, chance in (("settings", 0.5), ("project", 0.35), ("gcfg", 0.45), ("pcfg", 0.3), ("acfg", 0.2)):
        if rng.random() < chance:
            events.append(_doc_file(rng, name) if name in ("settings", "project") else _cfg_file(rng, name))
    tiny: dict[str, str] = {}
    if index % 4 == 0:
        for mid, _ in rng.sample(model.CATALOG, rng.randint(1, 3)):
            tiny[mid] = rng.choice(["installed", "incomplete", "missing"])
            events.append({"do": "tiny", "model": mid, "state": tiny[mid]})
    sessions = Sessions()
    if rng.random() < 0.7:
        sessions.made += 1
        events.append({"do": "run", "argv": ["session", "new"]})
    for _ in range(rng.randint(6, 14)):
        events.append(_command(rng, sessions, tiny))
        if events[-1]["argv"][:2] == ["cvar", 'alias loop "loop"']:  # then the alias runs: a cycle
            events.append({"do": "run", "argv": ["cvar", "loop", *events[-1]["argv"][2:]]})
        if rng.random() < 0.06:
            events.append(_cfg_file(rng, "gcfg") if rng.random() < 0.6 else _doc_file(rng, "settings"))
    if index % 10 == 7 and index // 10 < len(SETTINGS):
        if SETTINGS[index // 10][0] in ({"do": "run", "argv": ["session", "new"]}, {"do": "run", "argv": ["session", "list"]}):  # a fresh agent dir
            events = []
        events.extend(SETTINGS[index // 10])
    if rng.random() < 0.4:  # last: models.json stays, and no later command lists the catalog
        events.extend(_ask(rng) for _ in range(rng.randint(1, 3)))
    fixed = SCRIPTS + FORCED
    if index < len(fixed):  # every fixed script once, whatever the draws above (some are rare)
        events.append({"do": "run", "argv": ["directors", "simulate", "--script", "$P/script.jsonl", "--session-dir", "$P/ds"],
                       "script": fixed[index]})
    return events


# -- the production side ------------------------------------------------------------------------

_CUTS = (
    (re.compile(r"(CvarError::\w+\([^()]*\)):.*$"), r"\1"),
    (re.compile(r"(not JSON) \(.*\)(; nothing written)$"), r"\1\2"),
    (re.compile(r"(not JSON)(?: \(.*\)|: .*)$"), r"\1"),
    (re.compile(r"(unreadable) \([^()]*\)"), r"\1"),
    (re.compile(r"(cannot be read): .*$"), r"\1"),
    (re.compile(r"(unknown provider '[^']*') \(providers: [^()]*\)"), r"\1"),
    (re.compile(r"(is not a wire API) \(.*\)$"), r"\1"),
    (re.compile(r"(no laws in area '[^']*'); the areas are .*$"), r"\1"),
    (re.compile(r"(not a PCM WAV file):.*$"), r"\1"),
    (re.compile(r"(--bundled \$P/bundle\.json: not a catalog): .*$"), r"\1"),
    (re.compile(r"(: error event \w+): .*$"), r"\1"),
    (re.compile(r"^(memory: no compactor: \w+): .*$"), r"\1"),
    (re.compile(r"(is locked for writing by) .*(; waited \S+ s)$"), r"\1 ...\2"),
    (re.compile(r"(BrokenTransfer: \$U/)\S+(: HTTP \d+)$"), r"\1...\2"),
    (re.compile(r"^(eukhe translate-eval: WorkerError): .*$"), r"\1"),
    (re.compile(r"^(eukhe memory: cannot make the chat directory \S+): .*$"), r"\1"),
    (re.compile(r"(see \$A/run/agent/chat)-[0-9a-f]+(\.log)$"), r"\1-...\2"),  # the socket's name holds a digest of the sessions dir
    (re.compile(r"^(\[subagent\] [\w-]+ starts) \(pid \d+\)(: .*)$"), r"\1 (pid N)\2"),  # a subagent's process id
    # a dir made in /sys: EPERM as root, EACCES as another user, EROFS where /sys is mounted read-only (the hint is the same)
    (re.compile(r"^(eukhe session new: /sys/eukhe): (?:Operation not permitted|Permission denied|Read-only file system)"
                r"( \(the directory or file is read-only\))$"), r"\1: ...\2"),
)


def cut(line: str) -> str:
    for pattern, keep in _CUTS:
        line = pattern.sub(keep, line)
    return line


class _Run:
    """One scenario's directories and the labels of the sessions it made."""

    def __init__(self, root: Path, deep: bool = False) -> None:
        self.agent = root / ("agent-" + "d" * 100 if deep else "agent")  # deep: its agents' sockets' paths pass 107 bytes
        self.project = root / "project"
        (self.project / ".eukhe").mkdir(parents=True)
        self.labels: dict[str, str] = {}  # real id -> label
        self.simulated: dict[str, str] = {}
        self.url = ""  # the loopback server's of the ask under way
        self.held: list[int] = []  # the session locks another writer holds (lock events)
        self.core_source = ""  # the source of the scratch checkout of corebuild (core events)
        self.queued = threading.Event()  # set once the chat under way shows a typed line queued to join the running call
        self.marker = ("", threading.Event())  # (a text, set once the chat under way shows it): when an event's ``late`` lines are typed
        self.ended = threading.Event()  # set once the command under way ended: a reply part ``{"wait": "end"}`` holds the rest till then
        self.kill = ""  # a text: once the chat under way shows it, its agent process is killed (an event's ``kill``)
        self.killed: list[int] = []  # the agent processes killed so far (their ids), or -1: none was found to kill
        self.hold = ("", threading.Event())  # (a text, set once the chat under way shows it): a reply part ``{"wait": "shown"}`` holds till then
        self.files = {
            "settings": self.agent / "settings.json",
            "project": self.project / ".eukhe" / "settings.json",
            "gcfg": self.agent / "config.cfg",
            "pcfg": self.project / ".eukhe" / "config.cfg",
            "acfg": self.agent / "agents" / "main.cfg",
            "run": self.agent / "run",  # where the agents' sockets go
            "models": self.agent / "models.json",  # the user's providers (a file event's; an ask's models writes it too)
            "chat": self.agent / "chat",  # the chat memory's dirs
            "chat session": self.agent / "sessions" / "chat",  # the chat's session's dir
        }

    def real(self, text: str) -> str:
        for real, label in self.labels.items():
            if text == label:
                return real
        if re.fullmatch(r"\$S\d+", text):
            return "nosuch"  # a label the generator guessed, of a fork that failed
        return text.replace("$P", str(self.project)).replace("$A", str(self.agent))

    def shown(self, line: str) -> str:
        for real, label in list(self.labels.items()) + list(self.simulated.items()):
            line = line.replace(real, label)
        if self.url:
            line = line.replace(self.url, "$U")
        return cut(line.replace(str(self.project), "$P").replace(str(self.agent), "$A"))

    def file(self, event: Event) -> None:
        path = self.files[str(event["name"])]
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
        path.parent.mkdir(parents=True, exist_ok=True)
        state = event["state"]
        if state == "dir":
            path.mkdir()
        elif state == "badutf8":
            path.write_bytes(b'{"a": "\xff"}\n')
        elif state == "text":
            path.write_text(self.real(str(event["text"])), encoding="utf-8")

    def tiny(self, event: Event) -> None:
        model_id = str(event["model"])
        where = tiny_paths.model_dir(self.agent, model_id)
        if where.exists():
            shutil.rmtree(where)
        if event["state"] == "missing":
            return
        where.mkdir(parents=True)
        if event["state"] == "incomplete":
            return
        for f in catalog.find(model_id).files:
            target = where / f.path
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "wb") as handle:
                handle.truncate(f.size if f.size is not None else 1)  # sparse: only the size is read
        if event["state"] == "echo":  # the fake engine of the seed's bridge: a real worker serves it
            (where / "engine.json").write_text(json.dumps({"kind": "echo"}), encoding="utf-8")

    def core(self, number: int, event: Event) -> list[str]:
        """``python -m eukhe.corebuild`` in the scratch checkout $P/checkout (its source written
        first): the real module run as ``__main__`` (runpy, as ``-m`` runs it), whose checkout (the
        imported module's ``HERE`` and ``SOURCE``, which its main block calls) is the scratch one
        while it runs, so the real core of this tree is never built nor checked. A SystemExit
        with a message ends it as the interpreter would: the message on stderr, exit 1."""
        tree = self.project / "checkout" / "impl" / "eukhe" / "memory"
        if not tree.exists():
            tree.mkdir(parents=True)
            (tree.parent / "__init__.py").write_text("")
            (tree / "__init__.py").write_text("")
            (tree / "core.py").write_text(CORE_SOURCES["tiny"])
            self.core_source = "tiny"
        if "source" in event:
            self.core_source = str(event["source"])
            (tree / "core.py").write_text(CORE_SOURCES[self.core_source])
        flags = [str(a) for a in event["argv"]]
        out, err = io.StringIO(), io.StringIO()
        before = (corebuild.HERE, corebuild.SOURCE, sys.argv)
        corebuild.HERE, corebuild.SOURCE = tree, tree / "core.py"
        sys.argv = ["python -m eukhe.corebuild", *flags]
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # runpy's: the module is imported already (it is: patched)
                try:
                    runpy.run_module("eukhe.corebuild", run_name="__main__", alter_sys=True)  # as `python -m` runs it
                    status = 0
                except SystemExit as done:
                    if isinstance(done.code, str):
                        print(done.code, file=sys.stderr)
                    status = done.code if isinstance(done.code, int) else 0 if done.code is None else 1
        finally:
            corebuild.HERE, corebuild.SOURCE, sys.argv = before
        suffix = str(sysconfig.get_config_var("EXT_SUFFIX"))
        said = [self.shown(line).replace(suffix, "$X") for line in out.getvalue().splitlines()]
        errs = [self.shown(line) for line in err.getvalue().splitlines()]
        if errs[:1] and errs[0].startswith("mypyc build of ") and errs[0].endswith(" failed:"):
            errs = errs[:1]  # the compiler's own output is cut
        lines = [f"{number} $ {' '.join(['python -m eukhe.corebuild', *flags])} ({self.core_source}) -> {status}"]
        return lines + [f"{number} out {line}" for line in said] + [f"{number} err {line}" for line in errs]

    def run(self, number: int, event: Event) -> list[str]:
        argv = [self.real(str(a)) for a in event["argv"]]
        self.kill = str(dict(event["kill"])["after"]) if "kill" in event else ""
        self.killed = []
        self.hold = (str(event.get("hold", "")), threading.Event())
        if "bundle" in event:
            (self.project / "bundle.json").write_bytes(str(event["bundle"]).encode("utf-8") + (b"\xff" if event.get("badutf8") else b""))
        if "script" in event:
            (self.project / "script.jsonl").write_bytes(str(event["script"]).encode("utf-8") + (b"\xff\n" if event.get("badutf8") else b""))
        if "wav" in event:
            (self.project / "x.wav").write_bytes(_wav() if event["wav"] == "pcm" else b"hello")
        if "player" in event:  # $P/aplay: an audio player that plays (exit 0) or fails (exit 3, a line on stderr)
            player = self.project / "aplay"
            player.write_text("#!/bin/sh\n" + ("exit 0\n" if event["player"] == "ok" else f"echo {model.PLAYER_FAILS} >&2\nexit 3\n"))
            player.chmod(0o755)
        if "dangling" in event:  # a symbolic link to a place that is not there
            link = Path(self.real(str(event["dangling"])))
            if not link.is_symlink():
                link.symlink_to(self.project / "nosuch" / link.name)
        if "replies" in event:  # the loopback server answers with the event's scripted replies
            with LoopbackServer() as server:
                if "models" in event:
                    (self.agent / "models.json").parent.mkdir(parents=True, exist_ok=True)
                    (self.agent / "models.json").write_text(str(event["models"]).replace("$U", base_url(server, str(event["api"]))), encoding="utf-8")
                self.queued, self.ended = threading.Event(), threading.Event()
                gates = {"queued": self.queued, "end": self.ended, "shown": self.hold[1]}
                server.script(*(_scripted(reply, gates) for reply in event["replies"]))
                self.url = server.url
                argv = [a.replace("$U", server.url) for a in argv]
                if "lines" not in event:
                    return self.command(number, event, argv)
                typed = b"".join((b"\xff\xfe" if line is None else b"a" * (model.PROTOCOL_LINE_LIMIT + 1) if line == model.LONG_LINE
                                  else str(line).encode("utf-8")) + b"\n" for line in event["lines"])
                if event.get("eol") is False and typed:  # the last line ends the input without its newline
                    typed = typed[:-1]
                saved = sys.stdin
                try:
                    if event.get("pipe"):  # a pipe: the chat reads it as it becomes readable
                        reading, writing = os.pipe()
                        os.write(writing, typed)  # a few lines: within the pipe's buffer
                        if "late" in event:  # typed once the chat shows the reply's first text (a thread: the chat runs here)
                            late = dict(event["late"])
                            self.marker = (str(late["after"]), threading.Event())
                            threading.Thread(target=_type_late, args=(writing, self.marker[1], late["lines"]), daemon=True).start()
                        else:
                            os.close(writing)
                        handle = os.fdopen(reading, encoding="utf-8")
                    elif event.get("socket") == "reset":  # a Unix socket whose peer typed the lines, then went with a byte of ours unread:
                        ours, peer = socket.socketpair()  # the chat's read after the lines meets ECONNRESET (no timing: all is queued first)
                        peer.sendall(typed)
                        ours.sendall(b"x")
                        peer.close()
                        handle = os.fdopen(ours.detach(), encoding="utf-8")
                    else:  # a regular file: the chat reads it whole
                        (self.project / "chat.in").write_bytes(typed)
                        handle = open(self.project / "chat.in", encoding="utf-8")
                    with handle as sys.stdin:
                        return self.command(number, event, argv)
                finally:
                    sys.stdin = saved
                    self.ended.set()  # a reply held to the end (its client gone) is let go, so the server can close
                    self.hold[1].set()
                    if self.killed:
                        _exited([pid for pid in self.killed if pid > 0])
                    else:
                        self.agent_gone()
        return self.command(number, event, argv)

    def kill_agent(self) -> None:
        """SIGKILL the chat's agent process (``eukhe --agent-dir $A agent serve``, found by its
        command line in /proc) and wait until it ended (called as the chat writes: the chat goes
        on once its agent's connection is closed); -1 recorded when none is found."""
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                words = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:  # gone meanwhile
                continue
            named = [w.decode("utf-8", "replace") for w in words]
            if "serve" in named and "--agent-dir" in named and named[named.index("--agent-dir") + 1 :][:2] == [str(self.agent), "agent"]:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(entry.name), signal.SIGKILL)
                    self.killed.append(int(entry.name))
        if not self.killed:
            self.killed.append(-1)
        _exited([pid for pid in self.killed if pid > 0])  # ended (its socket closed) before the chat goes on

    def agent_gone(self) -> None:
        """Wait (10 s at most) until the chat's agent ended: its socket goes when it does."""
        for _ in range(500):
            if not (self.agent / "run").exists() or not list((self.agent / "run").rglob("*.sock")):
                return
            time.sleep(0.02)

    def command(self, number: int, event: Event, argv: list[str]) -> list[str]:
        out, err = _Shown(self.queued, self.marker, (self.kill, self.kill_agent), self.hold), io.StringIO()
        stdin = sys.stdin
        interrupt = bool(event.get("interrupt"))
        handler = signal.signal(signal.SIGINT, signal.default_int_handler) if interrupt else None
        if "lines" not in event:
            typed = str(event.get("stdin", "")).encode("utf-8") + (b"\xff\n" if "stdin" in event and event.get("badutf8") else b"")
            sys.stdin = io.TextIOWrapper((_CtrlC if interrupt else io.BytesIO)(typed), encoding="utf-8")
        agent = str(event.get("agent", "flag"))  # how the agent dir is named: --agent-dir (of $A or a path), EUKHE_AGENT_DIR, $HOME
        head = [] if agent in ("env", "home") else ["--agent-dir", str(self.agent) if agent == "flag" else self.real(agent)]
        env = {str(k): self.real(str(v)) for k, v in dict(event.get("env", {})).items()}
        if agent == "env":
            env["EUKHE_AGENT_DIR"] = str(self.agent)
        elif agent == "home":
            env["HOME"] = str(self.project / "home")
        before = {name: os.environ.get(name) for name in env}
        os.environ.update(env)
        sink: Any = out
        if event.get("stdout") == "closed":  # a real pipe whose reader is gone: a write meets EPIPE
            reading, writing = os.pipe()
            os.close(reading)
            sink = open(writing, "w", buffering=1, encoding="utf-8")
        elif event.get("stdout") == "closed late":  # the same pipe, block-buffered: the flush at the end meets EPIPE
            reading, writing = os.pipe()
            os.close(reading)
            sink = open(writing, "w", encoding="utf-8")
        elif event.get("stdout") in ("full", "full lines"):  # a device with no room: the flush of what was written meets ENOSPC
            sink = open("/dev/full", "w", buffering=1 if event["stdout"] == "full lines" else -1, encoding="utf-8")
        elif event.get("stdout") == "none":  # started with stdout closed (`>&-`): Python's sys.stdout is None
            sink = None
        terminal = None
        if event.get("tty") == "all" and argv[:1] == ["login"]:  # the key typed once the prompt is drawn (its echo off by then)
            terminal = _Terminal(str(event.get("stdin", "")).encode("utf-8"), after=LOGIN_PROMPT)
        elif event.get("tty"):
            terminal = _Terminal(b"".join(KEYS[k] for k in event.get("keys", [])))
        dunders = (sys.__stdin__, sys.__stdout__, sys.__stderr__)
        if terminal is not None:  # a terminal for stdin and stdout: what is drawn on it is not compared
            sys.stdin, sink = terminal.reader, terminal.writer
            before.setdefault("TERM", os.environ.get("TERM"))
            os.environ["TERM"] = "xterm-256color"  # a terminal's own, whatever the bridge runs under
        said: Any = err
        if event.get("stderr") == "closed":
            reading, writing = os.pipe()
            os.close(reading)
            said = open(writing, "w", buffering=1, encoding="utf-8")
        elif event.get("stderr") == "closed file":  # a stream object already closed: each write or isatty raises ValueError
            said = open(os.devnull, "w", encoding="utf-8")
            said.close()
        elif event.get("stderr") == "none":  # started with stderr closed (`2>&-`): Python's sys.stderr is None
            said = None
        if terminal is not None and event["tty"] == "all":  # stderr too: the bars of long work are drawn there
            said = terminal.writer
        ended, late = threading.Event(), threading.Event()
        handlers = {signum: signal.getsignal(signum) for signum in CLIENT_SIGNALS}  # Textual leaves its own on some
        if terminal is not None and "keys" in event:  # the client's: Textual reads sys.__stdin__ and draws on sys.__stderr__
            sys.__stdin__, sys.__stdout__, sys.__stderr__ = terminal.reader, terminal.writer, terminal.writer  # type: ignore[misc]
        if terminal is not None and "keys" in event:
            threading.Thread(target=_deadline, args=(ended, late), daemon=True).start()
        elif argv[:1] == ["chat"]:  # a client that waits on its agent: a deadline too, its loop woken by a real SIGINT
            threading.Thread(target=_deadline, args=(ended, late, _sigint_main), daemon=True).start()
        try:
            with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(said):
                if terminal is not None and event["tty"] == "all" and argv[:1] == ["login"]:
                    status = terminal.run([*head, *argv], late)
                else:
                    status = cli.main([*head, *argv])
        finally:
            ended.set()
            sys.__stdin__, sys.__stdout__, sys.__stderr__ = dunders  # type: ignore[misc]
            for signum, was in handlers.items():
                if was is not None and signal.getsignal(signum) is not was:
                    signal.signal(signum, was)
            sys.stdin = stdin
            if interrupt:
                signal.signal(signal.SIGINT, signal.SIG_DFL if handler is None else handler)
            for name, value in before.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
            for stream in (sink, said):
                if stream not in (out, err, None):
                    with contextlib.suppress(OSError):
                        stream.close()
            if terminal is not None:
                terminal.close()
        printed = out.getvalue().splitlines()
        if terminal is not None:  # the screen is not compared; of `laws`, the verdicts laws.json holds
            printed = []
            written = Path(argv[argv.index("--laws-dir") + 1]) / "laws.json" if "--laws-dir" in argv else None
            if argv[:1] == ["laws"] and written is not None and written.exists():
                rows = json.loads(written.read_text(encoding="utf-8"))["laws"]
                printed = [f"laws.json {row['area']}/{row['name']} {row['status']}" for row in rows]
        helped = bool({"-h", "--help"} & set(argv))
        if helped:  # the help's text is argparse's: its usage line names the command
            printed = [printed[0].split(" [", 1)[0]]
        if "--cache" in argv and status == 0:
            printed = _cache_cut(printed)
        if argv[:2] == ["memory", "date"] and status == 0:  # the local time a message was logged: cut
            printed = ["(date)" for _ in printed]
        if argv[:1] == ["transcribe"] and status == 0:  # what a model heard: cut
            printed = ["(text)" for _ in printed]
        if argv[:1] == ["translate-eval"] and status == 0:  # the eval's chrF scores: cut
            printed = [_CHRF.sub(r"\1#", line) for line in printed]
        if argv[:1] == ["laws"] and "--area" in argv and terminal is None:  # the laws' lines as they end, without their seconds, and the summary
            printed = [_LAW_LINE.sub(r"\1", line) for line in printed if _LAW_LINE.match(line) or _SUMMARY.match(line)
                       or line.startswith("review report written to ")]
        if status == 0 and not helped and printed and argv[:2] in (["session", "new"], ["session", "fork"]):
            self.labels[printed[0]] = f"$S{len(self.labels) + 1}"
        if terminal is not None and argv[:1] in ([], ["tui"]) and (self.agent / "sessions").is_dir():
            for made in sorted(d.name for d in (self.agent / "sessions").iterdir() if d.name not in self.labels):  # the client's
                self.labels[made] = f"$S{len(self.labels) + 1}"
        if status == 0 and not helped and printed and argv[:2] == ["directors", "simulate"]:
            self.simulated[printed[0].split()[1]] = f"$D{len(self.simulated) + 1}"
        shown_out = [self.shown(line) for line in printed]
        if argv[:2] == ["session", "list"]:
            shown_out = shown_out[:1] + sorted(shown_out[1:], key=lambda line: int(line.split()[0][2:]))
        if argv[:2] == ["settings", "show"]:
            shown_out = _show_lines(shown_out, [str(i) for i in event["ids"]])
        echo = " ".join(str(a) for a in event["argv"]).encode("utf-8", "backslashreplace").decode("utf-8")  # an argument's undecodable bytes, escaped
        lines = [f"{number} $ {echo} -> {status}"]
        lines += [f"{number} out {line}" for line in shown_out]
        errs = [self.shown(line) for line in err.getvalue().splitlines()]
        if errs[:1] == ["Traceback (most recent call last):"]:  # EUKHE_DEBUG=1: the traceback's text is Python's
            errs = ["(traceback)", errs[-1]]
        lines += [f"{number} err {line}" for line in (sorted(errs) if argv[:2] == ["settings", "show"] else errs)]
        if late.is_set():  # the client was not left by its keys: whatever its status, the transcript tells
            lines.append(f"{number} bridge: the client did not end within {CLIENT_DEADLINE} s of starting; Ctrl-C ended it")
        if self.kill and self.killed in ([], [-1]):  # the chat never showed the text, or its agent was not found: the transcript tells
            lines.append(f"{number} bridge: the chat's agent was not killed ({'not found' if self.killed else 'the text never shown'})")
        return lines


QUEUED = "[queued: joins the running call]"


CLIENT_DEADLINE = 120  # seconds


def _interrupt_main() -> None:
    import _thread

    _thread.interrupt_main()


def _sigint_main() -> None:
    """A real SIGINT to the main thread: it wakes an event loop asleep in its selector (a simulated
    one waits for the loop's next step)."""
    main = threading.main_thread().ident
    assert main is not None
    signal.pthread_kill(main, signal.SIGINT)


def _deadline(ended: threading.Event, late: threading.Event, interrupt: Callable[[], None] = _interrupt_main) -> None:
    """The client of an event's ``keys``, or a chat, has CLIENT_DEADLINE s to end once started (a
    deadline, not a pace): else ``late`` is set (the transcript tells) and Ctrl-C is made in the
    main thread (asyncio's handler there cancels the client's task, and the client ends)."""
    if not ended.wait(CLIENT_DEADLINE):
        late.set()
        interrupt()


class _Shown(io.StringIO):
    """A command's stdout: ``queued`` is set once it shows QUEUED (a chat's line typed while a
    turn runs has joined it), the gate at which a scripted reply's ``wait`` part holds the reply;
    the marker's event once it shows the marker's text (then an event's ``late`` lines are typed)."""

    def __init__(self, queued: threading.Event, marker: tuple[str, threading.Event], kill: tuple[str, Any] = ("", None),
                 hold: tuple[str, threading.Event] = ("", threading.Event())) -> None:
        super().__init__()
        self.queued = queued
        self.marker = marker
        self.kill = kill
        self.hold = hold

    def write(self, text: str) -> int:
        written = super().write(text)
        if QUEUED in text:
            self.queued.set()
        if self.marker[0] and self.marker[0] in text:
            self.marker[1].set()
        if self.hold[0] and self.hold[0] in text:
            self.hold[1].set()
        if self.kill[0] and self.kill[0] in text:
            self.kill[1]()
            self.kill = ("", None)  # once
        return written


def _type_late(writing: int, shown: threading.Event, lines: list[str]) -> None:
    """Type ``lines`` into the chat's input once ``shown`` is set (a deadline, not a pace: after
    60 s they are typed all the same, and the transcript tells), then end the input."""
    shown.wait(60)
    try:
        os.write(writing, "".join(line + "\n" for line in lines).encode("utf-8"))
    finally:
        os.close(writing)


def _exited(pids: list[int]) -> None:
    """Wait (10 s at most) until each of ``pids`` ended (a pidfd turns readable when it does)."""
    for pid in pids:
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:  # ended and reaped
            continue
        try:
            select.select([fd], [], [], 10)
        finally:
            os.close(fd)


def _scripted(reply: dict[str, Any], gates: dict[str, threading.Event]) -> Any:
    """The loopback server's script of one reply: ``script_of``'s, where a part ``{"wait":
    GATE}`` holds the reply (no byte of what follows it is sent) until the gate's event is set
    (``queued``: the chat showed a line queued to join the running call; ``end``: the command
    ended; ``shown``: the chat showed the event's ``hold`` text)."""
    parts = list(reply.get("parts", []))
    if not any("wait" in part for part in parts):
        return script_of(reply)
    scripted = script_of({**reply, "parts": [part for part in parts if "wait" not in part]})
    assert isinstance(scripted, Stream)
    held = list(scripted.parts)
    at = next(k for k, part in enumerate(parts) if "wait" in part)
    held.insert(at, Wait(gates[str(parts[at]["wait"])]))
    return dataclasses.replace(scripted, parts=tuple(held))


class _CtrlC(io.BytesIO):
    """Standard input at whose first read Ctrl-C is pressed: the terminal's SIGINT, raised there
    (a background job of a shell starts with SIGINT ignored, so the event sets Python's handler)."""

    def readline(self, size: int | None = -1) -> bytes:
        signal.raise_signal(signal.SIGINT)
        return super().readline(size)


# What Textual writes once its terminal is in raw mode (it sets raw mode, then switches focus
# reporting on): from then a key typed is read as that key, not by the terminal's line discipline.
RAW_MODE = b"\x1b[?1004h"
LOGIN_PROMPT = b"API key for "  # what ``login`` draws as it reads the key without echo (getpass's prompt)
BREAK = os.environ.get("EUKHE_BREAK", "")  # the break this process runs under (spec.breaks), if any: a child runs under it too
_CHILD = "import sys\nfrom spec import breaks\nbreaks.install_from_env()\nfrom eukhe import cli\nraise SystemExit(cli.main(sys.argv[1:]))"
KEYS = {"ctrl+d": b"\x04"}  # an event's ``keys``: the bytes a terminal sends for them
CLIENT_SIGNALS = (signal.SIGTSTP, signal.SIGCONT, signal.SIGWINCH, signal.SIGTTOU, signal.SIGTTIN)  # restored after each command


class _Terminal:
    """A pseudo-terminal of 24 rows and 100 columns: its slave end is the command's stdin and
    stdout; what the command draws on it is read from the master end (and kept, not compared).
    ``keys``: typed once the client drew RAW_MODE, or ``after`` (the gate: no timing)."""

    def __init__(self, keys: bytes = b"", after: bytes = RAW_MODE) -> None:
        self.keys = keys
        self.after = after
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
        self.reader = open(slave, encoding="utf-8")
        self.writer = open(os.dup(slave), "w", buffering=1, encoding="utf-8")
        self.screen = bytearray()
        self.drained = threading.Thread(target=self._drain, daemon=True)
        self.drained.start()

    def _drain(self) -> None:
        while True:
            try:
                data = os.read(self.master, 65536)
            except OSError:  # EIO: every slave end is closed
                return
            if not data:
                return
            self.screen.extend(data)
            if self.keys and self.after in self.screen:
                os.write(self.master, self.keys)
                self.keys = b""

    def run(self, argv: list[str], late: threading.Event) -> int:
        """``eukhe ARGV`` in a process of its own whose stdin, stdout and stderr are this terminal,
        in a session of its own: it has no controlling terminal, so getpass, which tries /dev/tty
        first, reads this terminal (stdin) whatever terminal the bridge runs under. A break named
        by EUKHE_BREAK is installed there too. Not ended within CLIENT_DEADLINE s: killed, and
        ``late`` set (the transcript tells)."""
        tree = str(Path(__file__).resolve().parent.parent)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [tree, os.environ.get("PYTHONPATH", "")]))}
        if BREAK:  # production() keeps EUKHE_* variables out of the command's environment: the break's name goes on
            env["EUKHE_BREAK"] = BREAK
        slave = self.reader.fileno()
        child = subprocess.Popen([sys.executable, "-c", _CHILD, *argv], stdin=slave, stdout=slave, stderr=slave, env=env,
                                 start_new_session=True)
        try:
            return child.wait(CLIENT_DEADLINE)
        except subprocess.TimeoutExpired:
            late.set()
            child.kill()
            return child.wait()

    def close(self) -> None:
        for stream in (self.writer, self.reader):
            with contextlib.suppress(OSError):
                stream.close()
        self.drained.join(timeout=30)  # a deadline, not a pace: the read ends once the slave ends are closed
        os.close(self.master)


# The scratch checkout's source of corebuild: a small typed module with the line SOURCE = "", the
# same with a line more (another sha256), without that line, one that is no Python, and one that
# builds but raises ImportError when it is imported.
_TINY_CORE = 'SOURCE = ""  # the sha256 of the source the compiled form was built from\n\n\ndef step(x: int) -> int:\n    return x + 1\n'
CORE_SOURCES = {"tiny": _TINY_CORE, "edited": _TINY_CORE + "\n# edited\n", "unmarked": _TINY_CORE.replace('SOURCE = ""', 'SOURCE = "x"'),
                "broken": _TINY_CORE.replace("return x + 1", "return x +"),
                "raising": _TINY_CORE + '\n\nraise ImportError("this core does not import")\n'}


_CHRF = re.compile(r'("chrf": )-?[0-9][0-9.e+-]*')
_LAW_LINE = re.compile(r"^(\S+ \d+/\d+ \S+ \w+) \(\d+\.\d\d s\)$")
_SUMMARY = re.compile(r"^\w+ \d+(, \w+ \d+)*$")


_FIGURE = re.compile(r'(  "(\w+)": )(-?\d+(?:\.\d+)?)(,?)')


def _cache_cut(lines: list[str]) -> list[str]:
    """``memory simulate --cache``'s measure: each figure printed as # when it is a count or a rate
    not below 0, or a percent from 0 to 100 (else as it is), but its messages and failed calls;
    the detail of ``why`` cut."""
    shown: list[str] = []
    inside = why = False
    for line in lines:
        if why:
            why = line != "  }"
            continue
        if inside and line == '  "why": {':
            shown.append('  "why": {...}')
            why = True
            continue
        inside = (inside or line == ' "cache": {') and line != " }"
        figure = _FIGURE.fullmatch(line) if inside else None
        if figure and figure.group(2) not in ("messages", "failed_calls"):
            value = float(figure.group(3))
            if value >= 0 and (not figure.group(2).endswith("_percent") or value <= 100):
                line = f"{figure.group(1)}#{figure.group(4)}"
        shown.append(line)
    return shown


def _wav() -> bytes:
    """A tenth of a second of 16-bit mono silence, as a PCM WAV file."""
    data = io.BytesIO()
    with wave.open(data, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes(b"\0\0" * 1600)
    return data.getvalue()


def _show_lines(lines: list[str], ids: list[str]) -> list[str]:
    by_id = {line.split(" = ", 1)[0]: line for line in lines if " = " in line}
    picked = [by_id[i] for i in ids if i in by_id]
    servers = sorted(line for line in lines if line.startswith("mcpServers."))
    return picked + servers + [line for line in lines if " = " not in line]


def production(events: Sequence[Event]) -> list[str]:
    saved = {k: v for k, v in os.environ.items() if k.startswith("EUKHE_") or k.endswith("_API_KEY")}  # no key: no request leaves loopback
    for name in saved:
        del os.environ[name]
    try:
        with tempfile.TemporaryDirectory(prefix="eukhe-cli-bridge-") as tmp:
            run = _Run(Path(tmp).resolve(), deep=any(event.get("deep") for event in events))
            os.environ["EUKHE_HUNT_DB"] = str(run.project / "hunt")  # the hunt's example database: empty
            os.environ["EUKHE_TINY_WORKER_IDLE_MS"] = "10000"  # a tiny worker a scenario started ends 10 s after its last request
            lines: list[str] = []
            try:
                for number, event in enumerate(events):
                    if event["do"] == "file":
                        run.file(event)
                        lines.append(f"{number} file {event['name']} {event['state']}")
                    elif event["do"] == "lock":  # another writer holds the session: its lock file taken, no holder written
                        held = os.open(run.agent / "sessions" / run.real(str(event["session"])) / "writer.lock", os.O_RDWR | os.O_CREAT, 0o600)
                        run.held.append(held)
                        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        lines.append(f"{number} lock {event['session']}")
                    elif event["do"] == "own":  # another process owns the chat's memory: its owner lock taken, no lock socket served
                        (run.agent / "chat" / "main").mkdir(parents=True, exist_ok=True)
                        held = os.open(run.agent / "chat" / "main" / "owner", os.O_RDWR | os.O_CREAT, 0o600)
                        run.held.append(held)
                        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        lines.append(f"{number} own chat")
                    elif event["do"] == "corrupt":  # a line that is no record before the last of a session's log
                        log = run.agent / "sessions" / run.real(str(event["session"])) / "main.jsonl"
                        kept = log.read_bytes().splitlines(keepends=True)
                        log.write_bytes(b"".join(kept[:-1]) + b"{not a record\n" + b"".join(kept[-1:]))
                        lines.append(f"{number} corrupt {event['session']}")
                    elif event["do"] == "tiny":
                        run.tiny(event)
                        lines.append(f"{number} tiny {event['model']} {event['state']}")
                    elif event["do"] == "core":
                        lines += run.core(number, event)
                    else:
                        lines += run.run(number, event)
            finally:
                for held in run.held:
                    os.close(held)
            return lines
    finally:
        os.environ.pop("EUKHE_HUNT_DB", None)
        os.environ.pop("EUKHE_TINY_WORKER_IDLE_MS", None)
        os.environ.update(saved)


# -- coverage -------------------------------------------------------------------------------------

_ERRORS = (
    ("CvarError::Undeclared", "CvarError::Undeclared"), ("CvarError::BadValue", "CvarError::BadValue"),
    ("CvarError::Global", "CvarError::Global"), ("CvarError::NotBool", "CvarError::NotBool"),
    ("ExpandError::Unknown", "ExpandError::Unknown"), ("ExpandError::Cycle", "ExpandError::Cycle"),
    ("commands refused", "cvar refused"), ("eukhe cvar: unterminated", "cvar parse"), ("not JSON", "not JSON"),
    ("not an object", "not an object"), ("unknown version", "unknown version"), ("does not parse", "does not parse"),
    ("no session at", "no session"), ("has no entry", "no entry"), ("has no conversation", "no conversation"),
    ("an entry id is", "entry id"), ("no mcpServers entry", "no mcpServers entry"), ("name is not empty", "empty name"),
    ("the entry is a JSON object", "entry not an object"), ("needs --session", "needs --session"),
    ("invalid choice", "invalid choice"), ("arguments are required", "required"), ("unknown thinking level", "unknown level"),
    ("thinking-level map", "level map"), ("an entry is a wire string", "level map"), ("Unavailable", "Unavailable"),
    ("is not installed", "not installed"), ("unknown tiny model", "unknown tiny model"), ("cannot read", "cannot read"),
    ("no message", "no message"), ("runs past", "runs past"), ("eukhe memory date: argument", "memory argument"),
    ("eukhe memory zoom: argument", "memory argument"), ("eukhe memory simulate:", "simulate argument"),
    ("the line is not JSON", "script not JSON"), ("exactly one of the keys", "script keys"),
    ("Input should be", "script type"), ("goal_status before", "script goal_status"), ("has no lines", "script empty"),
    ("unknown words", "laws words"), ("the value of", "value not JSON"), ("no law ", "no law"), ("no laws in area", "no area"),
    ("needs a terminal", "no terminal"), ("unknown provider", "unknown provider"), ("the key ", "key refused"),
    ("--timeout", "timeout"), ("the text is empty", "empty text"), ("model id is empty", "empty text"),
    ("is not a wire API", "wire API"), ("--bundled", "bundled"), ("bad model id", "bad model id"),
    ("must be absolute", "bad model id"), ("URL with a host", "base URL"), ("--voice", "voice"), ("--out", "out path"),
    ("is empty: name a path", "empty path"), ("brackets deep", "too deep"), ("--script:", "script path"),
    ("is a Nat, not", "flag type"), ("--messages wants", "flag type"), ("--seed wants", "flag type"), ("--png", "flag type"),
    ("--plot", "flag type"), ("the following arguments are required: ", "group verb"),
    ("not a PCM WAV file", "not a WAV"), ("not a catalog", "bundle not a catalog"), ("eukhe ask: lab: HTTP ", "ask HTTP status"),
    (": error event ", "ask error event"), ("before its end event", "ask no end event"), ("no provider: pass", "no provider"),
    ("lists no model", "lists no model"), ("has no credentials", "no credentials"), ("has no model '", "no such model"),
    ("the model refused to answer", "refusal"), ("is past the largest value of", "past the largest"),
    ("eukhe ask: retry ", "ask retried"), ("a retry waits: not retried", "ask wait too long"),
    ("script.jsonl:1: not UTF-8 text", "script not UTF-8"), ("script.jsonl:2: not UTF-8 text", "script not UTF-8"), ("download: Unpinned: ", "download unpinned"), ("download: BrokenTransfer: ", "download failed"),
)


def _command_case(argv: list[str], ids_session: bool) -> str:
    if not argv or (argv[0] in model.VERB_OF and len(argv) == 1):
        return "usage"
    head = argv[0]
    if head in ("set", "toggle") and len(argv) > 1:
        return f"{head} --global" if "--global" in argv else f"{head} --session"
    if head == "cvar":
        return "cvar save" if argv[1] == "save" else "cvar line"
    if head == "settings":
        return "settings show --session" if ids_session else "settings show"
    if head in ("mcp", "session", "effort", "tiny-models", "directors"):
        return f"{head} {argv[1]}"
    if head == "memory":
        return f"memory {argv[1] if len(argv) > 1 else 'status'}"
    if head in ("translate", "translate-eval", "say", "transcribe", "laws", "tui", "agent", "tiny-worker", "login", "ask", "quirks",
                "provider", "model", "chat"):
        return head
    return "usage"


_CHAT_NEEDLES = (("out eukhe chat: lab/", "started"), ("out > commands: ", "help"), ("out > mem 0K/128K  messages", "memory status"),
                 ("out > <chat>", "memory view"), ("out > memory.model (unset", "memory model"), ("err eukhe chat: unknown command", "unknown command"),
                 ("err eukhe chat: /agent NAME TASK", "agent refused"), ("err eukhe chat: the line is not UTF-8", "not UTF-8"),
                 ("[refused] ", "refused"), ("err eukhe chat: lab: HTTP", "turn failed"), ("out [effort] thinking level", "effort row"),
                 ("out > [thinking] ", "thinking"), ("out > [retry 1/3: lab: HTTP 429; waiting 0.0 s]", "retried"),
                 ("out > [tool] date ", "tool call"), ("out [result] error: no message ", "tool result"), ("[note 1/", "note"))


def _chat_cases(event: Event, lines: list[str]) -> set[str]:
    """The chat's cases of one chat event, from its lines of the model's transcript."""
    found = {f"chat {name}" for needle, name in _CHAT_NEEDLES if any(line.startswith(needle) or needle in line for line in lines)}
    typed = [line for line in event["lines"] if line is not None]
    if any(not line.strip() for line in typed) and "chat started" in found:
        found.add("chat blank line")
    if "/quit" in typed and "chat started" in found:
        found.add("chat quit")
    if lines and lines[0].endswith("-> 0") and any(line.strip() and not line.startswith("/") for line in typed):
        found.add("chat turn answered")
    return found


_SETTING_NEEDLES = (
    ("is not UTF-8 text (at character 1): b'", "error argument bytes"), ("is not UTF-8 text (at character 1): '", "error argument escape"),
    ("err (traceback)", "debug traceback"), ("the agent dir $P/x.wav is not a directory", "error agent dir a file"),
    ("which is not a directory", "error agent dir under a file"), ("--session-dir $P/nosuch does not exist", "error import dir missing"),
    ("--session-dir $P/x.wav is not a directory", "error import not a dir"), ("(a path on the way is a regular file", "error path through a file"),
    ("$P/a\\tb.jsonl", "error path escaped"), ("--bundled $P/bundle.json: not UTF-8 at byte", "error bundle not UTF-8"),
    ("out sessions in $P/sd (from EUKHE_SESSION_DIR)", "session dir from env"), ("out sessions in $P/sd (from --session-dir)", "session dir from home"),
    ("out sessions in $P/home/.eukhe/sessions (from default)", "agent dir from home"), ("out pass 19", "laws area ran"),
    ("out review report written to ", "laws report"), ("err eukhe session show: corrupt record: ", "error corrupt record"),
    ("  error: corrupt record: ", "corrupt listed"), ("is locked for writing by ...; waited 0 s", "error session locked"), ("out forked from session ", "fork shown"),
    ("no audio player on PATH", "error no player"), ("'http://x:abc' is not an http", "error URL port"),
    ("the sessions dir $P/x.wav is not a directory", "error sessions dir a file"), ('out   "why": {...}', "cache measured"),
    ("out cache shares drawn to ", "cache plotted"), ("out sessions in $A/sd2 (from global config.cfg)", "session dir from setting"),
    ("cannot write stdout: No space left on device", "stdout full"), ("err eukhe session list: No space left on device", "stdout full at a line"), ("the key is not UTF-8 text (at byte", "error key bytes"),
    ("is a provider of models.json: its key is that file's apiKey", "error login models.json provider"), ("err eukhe: stdout is closed; nothing done", "stdout none"),
    ("err eukhe tui: no session at ", "tui no session"), ("err eukhe tui: corrupt record: ", "tui corrupt"),
    ("out laws.json effort/", "laws on a terminal"), ("err eukhe chat: cannot reach the chat's agent", "chat agent unreachable"),
    ("err eukhe chat: the agent of session chat ended (exit 1) before serving", "chat agent ended before serving"),
    ("err eukhe chat: the agent of session chat ended (exit 2) before serving", "chat session made meanwhile"),
    ("err eukhe chat: $A/chat/main: the chat's owner holds its lock", "chat memory owned elsewhere"),
    ("--project $P/nosuch does not exist", "error project dir missing"), ("/dev/zero: a script is at most ", "error script endless"),
    ("--png: cannot write $P/link.png: ", "error png not written"), ("--plot: cannot write $P/link.svg: ", "error plot not written"),
    ("err eukhe: interrupted", "login interrupted"),
    ("err eukhe session new: /sys/eukhe: ... (the directory or file is read-only)", "error agent dir read-only"),
)


def _setting_cases(number: int, event: Event, lines: list[str]) -> set[str]:
    """The cases of a command run in a setting of its own (SETTINGS), from the model's lines."""
    mine = [line for line in lines if line.split(" ", 1)[0] == str(number)]
    found = {name for needle, name in _SETTING_NEEDLES if any(needle in line for line in mine)}
    status = mine[0].rsplit(" ", 1)[1]
    argv = [str(a) for a in event["argv"]]
    if {"-h", "--help"} & set(argv) and status == "0":
        found.add("command help")
    if event.get("stdout") == "closed" and status == "1" and len(mine) == 1:
        found.add("stdout closed")
    if event.get("stdout") == "closed late" and status == "1":
        found.add("stdout closed after an error" if len(mine) > 1 else "stdout closed late")
    if event.get("stderr") == "none" and status == "2" and len(mine) == 1:
        found.add("stderr none")
    if event.get("stderr") == "closed" and status == "2" and len(mine) == 1:
        found.add("stderr closed")
    if event.get("stderr") == "closed file":
        found.add("stderr closed file" if status == "0" else "stderr closed file, an error")
    if event.get("agent") == "env" and status == "0":
        found.add("agent dir from env")
    if dict(event.get("env", {})).get("EUKHE_LOCK_TIMEOUT") == "never" and status == "1":
        found.add("lock timeout from config")
    if "--max-steps" in argv and status == "0":
        found.add("directors limits given")
    if event.get("tty") and not argv and any(line.split(" ", 1)[1].startswith("err eukhe tui: ") for line in mine):
        found.add("bare command on a terminal")
    return found


_CORE_NEEDLES = (("out eukhe.memory.core_c: missing or stale", "core missing or stale"), ("out eukhe.memory.core_c: current", "core current"),
                 ("out built $P/checkout/", "core built"), ("expected one line 'SOURCE", "core unmarked"), ("err mypyc build of ", "core build failed"),
                 ("but it does not import with the current digest", "core built, not importable"))


def reached(events: Sequence[Event]) -> set[str]:
    found: set[str] = set()
    chats = 0  # the chats so far that reached their agent
    made = False  # a session made so far (session new or fork, or the client's)
    lines = model.transcript(list(events))
    for number, event in enumerate(events):
        if event["do"] == "run":
            argv = [str(a) for a in event["argv"]]
            found |= _setting_cases(number, event, lines)
            found.add("command " + _command_case(argv, "--session" in argv))
            if "models" in event and argv[0] == "ask" and f"{number} $ {' '.join(argv)} -> 0" in lines:
                found.add("ask answered")
            said = [line.split(" ", 2)[2] for line in lines if line.startswith(f"{number} out ")]
            if argv[:2] == ["memory", "simulate"] and said[:1] == ["{"]:
                found.add("memory simulated")
                if any(line.startswith(' "batches": ') and line != ' "batches": 0,' for line in said):
                    found.add("memory simulated batches")
            if argv[:1] == ["chat"]:
                mine = [line.split(" ", 1)[1] for line in lines if line.split(" ", 1)[0] == str(number)]
                cases = _chat_cases(event, mine)
                if "chat started" in cases and chats:  # a later chat of the same agent dir
                    cases |= {"chat again"} | ({"chat again same model"} if not any("[note] model" in line for line in mine) else set())
                if "chat started" in cases and event.get("deep"):
                    cases.add("chat deep agent dir")
                chats += "chat started" in cases
                found |= cases
            status = next(line for line in lines if line.startswith(f"{number} $ ")).rsplit(" ", 1)[1]
            mine = [line.split(" ", 1)[1] for line in lines if line.split(" ", 1)[0] == str(number)]
            if event.get("tty") and event.get("keys") and argv[:1] in ([], ["tui"]) and status == "0":
                found.add("tui session written last left" if made else "tui new session left")
                made = True
            made = made or (argv[:2] in (["session", "new"], ["session", "fork"]) and status == "0")
            if argv[:1] == ["say"] and status == "0":
                found.add("say written" if "--out" in argv else "say played")
            if any(line.startswith("err eukhe say: aplay failed: ") for line in mine):
                found.add("error player failed")
            if argv[:2] == ["memory", "view"] and len(mine) > 3:
                found.add("memory view lines")
            if argv[:2] == ["memory", "zoom"] and status == "0":
                found.add("memory zoomed")
            if argv[:2] == ["memory", "date"] and status == "0":
                found.add("memory dated")
            if argv[:1] == ["say"] and any(line.startswith("err eukhe say: cannot write ") for line in mine):
                found.add("error speech not written")
            if argv[:1] == ["translate-eval"] and "err eukhe translate-eval: WorkerError" in mine:
                found.add("error worker")
            if argv[:2] == ["model", "list"] and any(line.startswith("err eukhe model list: $A/models.json: ") for line in mine):
                found.add("models.json warned")
            if argv[:2] == ["provider", "caps"] and any(line.startswith(("out lab\t", "out mine\t")) for line in mine):
                found.add("models.json provider caps")
            if any(": stream_repeating: the stream repeats a cycle of " in line for line in mine):
                found.add("error stream repeating")
            if argv[:1] == ["chat"] and any(line.startswith("err eukhe chat: lab: error event ") for line in mine):
                found.add("chat turn failed after text")
            if argv[:1] == ["chat"] and status == "1" and any(re.fullmatch(r"out \[[\w-]+\] failed: .+", line) for line in mine) \
                    and any(line.startswith("out [result] subagent_failed: ") for line in mine):
                found.add("chat subagent failed")
            if argv[:1] == ["login"] and event.get("tty") == "all" and status == "0":
                found.add("login on a terminal")
            if argv[:1] == ["chat"] and event.get("socket") == "reset" and status == "0" and "out [mem 0K/128K]" in mine:
                found.add("chat input reset")
            if argv[:1] == ["chat"] and model.LONG_LINE in list(event.get("lines", [])) and any("nothing was sent" in line for line in mine):
                found.add("chat line past the limit")
            if argv[:1] == ["chat"] and status == "0" and any(line.startswith("out [agent] subagent ") for line in mine) \
                    and any(line.startswith("out [subagent] [") for line in mine):
                found.add("chat subagent started")
            if argv[:1] == ["chat"] and status == "1" and "err eukhe chat: the chat's agent ended" in mine:
                shown_out = [line for line in mine if line.startswith("out ")]
                found.add("chat agent ended before a prompt" if shown_out[-1].startswith("out > commands: ") else "chat agent ended mid-turn")
            if "err eukhe memory: cannot make the chat directory $A/chat/main" in mine:
                found.add("error chat dir a file")
            if argv[:1] == ["transcribe"] and "out (text)" in mine:
                found.add("transcribed")
            if argv[:1] == ["translate-eval"] and any(line.startswith('out {"French": {"chrf": #') for line in mine):
                found.add("translate eval")
            if argv[:1] == ["chat"] and "out > " + QUEUED in mine and any(line.startswith("out [joined] ") for line in mine):
                found.add("chat steered")
            if argv[:1] == ["chat"] and "out " + QUEUED in mine and any(line.startswith("out commands: ") for line in mine):
                found.add("chat typed during a reply")
            if "--cache" in argv and int(argv[argv.index("--messages") + 1]) >= 600 and status == "0":
                found.add("cache long run")
            if status == "2" and any(re.search(r"\d{4301}", a) for a in [*argv, str(event.get("script", ""))]):
                found.add("error integer too long")
            if status == "2" and any(re.search(r"\d[eE]-?\d{3}\b", a) for a in [*argv, str(event.get("script", ""))]):
                found.add("error number past the largest")
            if argv[:2] == ["quirks", "query"] and "--provider" in argv:
                provider = argv[argv.index("--provider") + 1]
                if any((m.provider, m.id) == (provider, argv[2]) for m in model.compiled_catalog()):
                    found.add("quirks catalog model")
        elif event["do"] == "tiny":
            found.add(f"tiny {event['state']}")
        elif event["do"] == "core":
            mine = [line.split(" ", 1)[1] for line in lines if line.split(" ", 1)[0] == str(number)]
            found |= {name for needle, name in _CORE_NEEDLES if any(needle in line for line in mine)}
    for line in lines:
        body = line.split(" ", 2)[2] if line.count(" ") >= 2 else ""
        if " err " in f" {line.split(' ', 1)[1][:4]} " or line.split(" ", 2)[1] == "err":
            for needle, name in _ERRORS:
                if needle in body:
                    found.add(f"error {name}")
            if "settings error: " in body and "unreadable" in body:
                status = [x for x in lines if x.startswith(line.split(" ", 1)[0] + " $ ")][0].rsplit(" ", 1)[1]
                found.add("error unreadable fault" if status == "1" else "error unreadable bytes")
            if body.startswith("settings error: "):
                found.add("settings errors")
            if body.startswith("tokens: input "):
                found.add("ask usage")
        if line.split(" ", 2)[1] == "out":
            if body.startswith("untrusted project: withheld"):
                found.add("trust warning")
            if body.startswith("mcpServers.") and " = " in body:
                found.add("mcp lines")
            for layer, name in (("[project ", "project layer"), ("[profile main]", "profile layer"), ("[sets main]", "session layer")):
                if body.endswith("]") and layer in body:
                    found.add(name)
            for needle, name in ((": input -> new loop", "script input"), (" -> stack [", "script command"),
                                 ("the Director stack is full", "stack full"), ("refused: ", "command refused"),
                                 ("is stored in", "login stored"), (": step verdicts=", "script reply"),
                                 ("[thinking] ", "ask thinking shown"), ("[answer] ", "ask answer after thinking"),
                                 ("[tool call] ", "ask tool call"), ("[stop: ", "ask stop reason"), ("[refused] ", "ask refused"),
                                 ("(the provider gave no reason)", "ask refused no reason"),
                                 ("no new failing example in", "laws pinned nothing"), (": called", "forced called"),
                                 (": missed, retried", "forced retried"), ("ForcedToolError::NotCalled", "forced not called")):
                if needle in body:
                    found.add(name)
            fields = body.split("\t")
            if len(fields) == 3 and fields[2] in ("family", "host"):
                found.add(f"quirks {fields[2]} answer")
            if fields == ["family", "-"]:
                found.add("quirks no family")
            if len(fields) == 2 and fields[1].startswith("count_tokens="):
                found.add("caps line")
            if len(fields) == 5 and fields[4] in ("compiled", "bundled"):
                found.add("model line" if fields[4] == "compiled" else "bundled line")
            if body.startswith("trustedProjects = [\"$P\"]"):
                found.add("trusted project")
    return found


BRIDGE = Bridge(
    area="cli",
    count=300 + len(EDGES),
    generate=generate,
    model=model.transcript,
    production=production,
    cases=CASES,
    reached=reached,
)
