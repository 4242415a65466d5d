"""The command line: the model of a session of ``eukhe`` commands in a fresh agent dir and
project dir (control.md S4 cvars, S4b config documents, S5.8 the simulate command; memory.md
"Use"; inference.md S9 tiny models, S10 effort), with the output forms of the README and the
commands' help.

Read it next to 000_f7323c157e80a40d.txt (S4, S4b), 003_bdb197ba90f97028.txt and
004_cf1da0cad29d7f64.txt. The values, the layers and the command language are ``bend.cvar``'s;
the documents and their read-modify-write are ``bend.config``'s; the levels are
``bend.effort``'s. This module adds what the command line says about them:

- ``set ID VALUE --global`` checks the set (Undeclared, BadValue; a List or Map value is JSON
  first), then rewrites the global config.cfg: its single-set lines of ID go, one ``set`` line
  is appended; a file that cannot be read, or has a line that does not parse, is refused and
  nothing is written. ``toggle ID --global`` reads the file first, then flips the value of the
  global layers. A session set (``--session``) is a set of the session's agent ``main``: one
  new entry of the conversation, child of the head, holding the agent's document.
- ``settings show`` prints each cvar's value and the layer it came from (``sets main``,
  ``profile main``, a config file, ``default``), the mcpServers entries, the trust warning, and
  every settings error on stderr.
- ``mcp add|remove`` read-modify-write the global settings.json (S4b.1).
- ``session new|list|show|fork|rewind``: the state tree; a fork copies the branch of its entry.
- ``ask`` and ``chat`` run for real against the loopback server, whose scripted reply the event
  holds, on the provider ``lab`` of the scenario's models.json (``run_ask``, ``run_chat``: what
  is printed as the reply streams, refusals, faults, the chat's commands and prompt, the rows of
  its agent); ``tiny-models download`` from that server (every file 404: unpinned models are
  refused before any request, a pinned one fails at its first file); ``memory simulate`` (no
  --cache) over the OptChat model ``bend.optchat`` and the note's sizes (with --cache, the
  cache measure's shape: ``cache_measure``); ``laws pin``
  of a seed law with an empty hunt database.
- The other commands that need a model, a terminal, a network or a long run are modelled only as far
  as what they refuse before any of it (inference.md S6, S9; the commands' help): ``ask`` (an
  empty text, a --timeout that is no finite number above 0), ``quirks query`` (an empty model id,
  an --api that is no wire API), ``provider caps`` and ``login`` (an unknown provider; a key on
  stdin that is empty or holds spaces; a good key is stored in $A/auth.json), ``model list
  --bundled`` (no such file, a directory), ``tui`` (stdin is never a terminal here), ``agent
  serve`` (no --session), ``tiny-worker`` (a bad model id, a relative --agent-dir),
  ``tiny-models download --base-url`` (not an http(s) URL with a host), ``say`` (a bad --voice,
  an --out that is a directory or in none), ``transcribe`` (a file that is no PCM WAV; a PCM WAV
  with no model of the dictation role is Unavailable), ``memory simulate`` and ``directors simulate`` (their
  flags and the script's path), ``laws pin``/``laws --area`` (no such law, no such area).
- ``quirks query``, ``provider caps`` and ``model list`` (no --bundled) run for real, against
  the shipped rulebook (S6.1) and the compiled catalog, both read as data from
  impl/eukhe/inference/{rulebook,catalog}.json and answered by ``bend.infer`` (family, host,
  lookup, the thinking ladder's offered levels): each directive's JSON value and layer, each
  provider's eight capabilities (of its first catalog model), each catalog model's offered levels.
- Before any command: no command at all, a command group without its verb (the argument
  argparse names), an empty path argument, a text argument nested more than MAX_DEPTH brackets.
- Exit status 0 done, 1 a fault of the environment (a file that is a directory), 2 bad input.
- The command line's own settings (``how_run``, ``transcript``): ``--help`` prints the usage and
  exits 0; an argument that is not UTF-8 text (undecodable bytes, a lone escape) is refused;
  EUKHE_DEBUG=1 prints the traceback before the one error line; a stdout whose reader is gone
  ends the command quietly with exit 1, one on a full device is a fault once the command is done,
  a closed one (None) does nothing, one whose reader is gone found only at the final flush ends
  quietly (exit 1) after all else, the error line included; a closed stderr (or None) loses the
  error line, never the status; the
  agent dir from the flag, EUKHE_AGENT_DIR or $HOME/.eukhe, and refused when it is (or is under)
  a regular file, or is a place where no dir can be made (/sys: the OSError's line, ``PATH: REASON
  (the directory or file is read-only)``, exit 1); the sessions dir by S4b.7's precedence (the flag, ``~/`` read as $HOME,
  EUKHE_SESSION_DIR, the sessionDir setting, the default); a writer of a session another writer
  holds waits (EUKHE_LOCK_TIMEOUT, else session.lockTimeoutMs, else 5 s) and fails; a session
  log with a line that is no record is a fault where it is read; ``laws --area effort`` runs
  S10's table, every law holding; ``memory simulate --cache`` prints the cache measure's shape.
- On a terminal (``tty``: stdin and stdout a terminal, ``all``: stderr too, where long work draws
  its bars): ``eukhe`` alone is ``eukhe tui``; ``tui``
  refuses an unknown --session and a session whose log cannot be read before its client starts,
  takes the session written last, else makes one, and exits 0 when its client is left (Ctrl-D);
  ``laws --area effort`` draws its bars and table for the terminal and writes laws.json as in a
  pipe (``run_tui``, ``run_laws_on_terminal``).
- ``python -m eukhe.corebuild`` (build tooling of the compiled planner core) in a scratch checkout
  whose source the scenario writes: current, missing or stale, built, refused (``corebuild``).

A transcript line is ``N $ ARGV -> STATUS`` for a command, then ``N out LINE`` and ``N err
LINE``; an error's free text after a seed form (``CvarError::K(id)``), after ``is not JSON``
and after ``unreadable`` is not part of the line (the bridge cuts it on both sides), nor are the
lists an error offers (``(providers: ...)``, ``is not a wire API (...)``, ``; the areas are ...``).
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from functools import cache
from itertools import accumulate
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from bend import catalog_union as unions
from bend.agent import MAX_NOTES  # inference.md S6.5: the noted retries of one generation
from bend import effort as efforts
from bend import infer
from bend.optchat import chat as optchat
from bend.optchat.text import line_size
from bend.optchat.view import view_bytes
from bend.config import Change, File, apply, leaves, put, read, trusted, guarded
from bend.cvar import (
    ALIAS,
    BOOL,
    ENUM,
    FLOAT,
    GLOBAL,
    LIST,
    LOCAL,
    MAP,
    NAT,
    NAT_OR_OFF,
    SET,
    STRING,
    TOGGLE,
    Agent,
    Aliases,
    CvarError,
    Decl,
    ExpandError,
    Layer,
    Obj,
    ParseError,
    Set,
    Type,
    Value,
    check,
    config_value,
    define,
    expand,
    format_command,
    format_value,
    from_json,
    global_toggle,
    layer_value,
    lookup,
    parse_list,
    parse_value,
    quote,
    read_cfg,
    show,
    to_json,
    toggle,
    written,
)

LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh", "max")
_NAT = Type(NAT)
# The cvars the scenarios use, in the order of the seed's S4 table (a subset).
DECLS: tuple[Decl, ...] = (
    Decl("transport", Type(ENUM, ("auto", "sse", "websocket")), LOCAL, True, True, "auto"),
    Decl("retry.enabled", Type(BOOL), LOCAL, True, True, True),
    Decl("compaction.enabled", Type(BOOL), LOCAL, True, True, True),
    Decl("retry.maxRetries", _NAT, LOCAL, True, False, 3),
    Decl("compaction.keepRecentTokens", _NAT, LOCAL, True, False, 40000),
    Decl("memory.thinking", Type(ENUM, LEVELS), GLOBAL, True, False, "medium"),
    Decl("directors.maxSteps", _NAT, LOCAL, True, False, 200),
    Decl("autonomous.enabled", Type(BOOL), LOCAL, True, True, False),
    Decl("defaultModel", Type(STRING), GLOBAL, True, False, ""),
    Decl("thinkingBudgets", Type(MAP, (), _NAT), LOCAL, True, False, Obj(())),
    Decl("titles.generate", Type(BOOL), GLOBAL, True, False, True),
    Decl("stt.enabled", Type(BOOL), LOCAL, True, True, False),
    Decl("providerMaxInFlight", Type(MAP, (), _NAT), GLOBAL, True, False, Obj(())),
    Decl("idleEvictionMinutes", Type(NAT_OR_OFF), GLOBAL, True, False, "off"),
    Decl("maxToolRounds", _NAT, LOCAL, True, False, 50),
    Decl("temperature", Type(FLOAT), LOCAL, False, False, 1.0),
    Decl("trustedProjects", Type(LIST, (), Type(STRING)), GLOBAL, True, False, ()),
)
# inference.md S9: the catalog, in order, with each model's kind
CATALOG = (("lfm2.5-230m", "text"), ("lfm2.5-350m", "text"), ("whisper-base", "speech-to-text"),
           ("whisper-small", "speech-to-text"), ("kokoro", "text-to-speech"))
ROLE_CHAINS = {"translate": ("lfm2.5-350m", "lfm2.5-230m"), "speech": ("kokoro",), "dictation": ("whisper-base", "whisper-small")}
SCRIPT_KEYS = ("input", "goal", "goal_status", "autonomous", "command", "reply")
GOAL_STATUSES = ("active", "paused", "budget_limited", "complete", "failed", "cleared")
COMMANDS = ("agent", "chat", "directors", "effort", "model", "provider", "quirks", "ask", "laws", "login", "memory", "session", "set",
            "toggle", "cvar", "settings", "mcp", "tiny-models", "translate", "translate-eval", "say", "transcribe",
            "tiny-worker", "tui")

OK, FAULT, USAGE = 0, 1, 2
INTERRUPTED = 128 + 2  # ended by SIGINT (Ctrl-C), as a shell reports it
MAX_DEPTH = 100  # brackets an argument that holds text may nest
CHAT = "chat"  # the id of the chat's session in the sessions dir
# inference.md S6: the providers of the built-in catalog, and the wire APIs
PROVIDERS = ("amazon-bedrock", "anthropic", "azure-openai", "google", "google-vertex", "mistral", "openai", "openai-codex",
             "openrouter", "prime-inference", "xai")
WIRE_APIS = ("anthropic-messages", "azure-openai-responses", "bedrock-converse-stream", "google-generative-ai", "google-vertex",
             "mistral-conversations", "openai-codex-responses", "openai-completions", "openai-responses")
# a command group named alone: the argument argparse says is required (as the group's usage line names it)
VERB_OF = {"agent": "VERB", "directors": "ACTION", "effort": "VERB", "mcp": "VERB", "model": "verb", "provider": "verb",
           "quirks": "verb", "session": "ACTION", "settings": "VERB", "tiny-models": "verb"}
PATH_FLAGS = ("--session-dir", "--bundled", "--script", "--out", "--png", "--plot", "--laws-dir")
DIRS = ("$P", "$P/.eukhe", ".")  # the directories every scenario has (. is the working dir)
SETTINGS_JSON, PROJECT_JSON = "$A/settings.json", "$P/.eukhe/settings.json"
GLOBAL_CFG, PROJECT_CFG, AGENT_CFG = "$A/config.cfg", "$P/.eukhe/config.cfg", "$A/agents/main.cfg"


MAX_LINE = 300  # characters of the one error line at most (issue 30: a long argument is not echoed whole)


def clip(line: str) -> str:
    """A line over MAX_LINE characters keeps its first two thirds and its last third of the room
    around a mark ``...[N characters cut]...`` (N counts what the mark replaces)."""
    if len(line) <= MAX_LINE:
        return line
    cut = len(line) - MAX_LINE
    keep = MAX_LINE - len(f" ...[{cut} characters cut]... ")
    while len(line) - keep != cut:  # the mark's length depends on the number it shows
        cut = len(line) - keep
        keep = MAX_LINE - len(f" ...[{cut} characters cut]... ")
    head = keep * 2 // 3
    return line[:head] + f" ...[{cut} characters cut]... " + line[len(line) - (keep - head) :]


class Failed(Exception):
    """A command that ends with one line on stderr (clipped) and an exit status."""

    def __init__(self, status: int, line: str) -> None:
        super().__init__(line)
        self.status = status
        self.line = clip(line)


# -- files ------------------------------------------------------------------------------------


@dataclass
class Disk:
    """A file as the scenario made it: missing, a directory, bytes that are not UTF-8, or text."""

    state: str = "missing"
    text: str = ""


def document(disk: Disk) -> File:
    if disk.state == "missing":
        return File("missing")
    if disk.state != "text":
        return File("unreadable")
    try:
        return File("text", from_json(json.loads(disk.text)))
    except ValueError:
        return File("invalid")


def why_unread(disk: Disk) -> str | None:
    """Why a settings document cannot be read, as the error says it (None: it reads)."""
    f = document(disk)
    got = read(f)
    if not isinstance(got, str):
        return None
    if got == "unknown version":
        version = [v for k, v in f.value.pairs if k == "version"][0]  # type: ignore[union-attr]
        return f"unknown version ({show(version)})"
    return got


def fault_of(disk: Disk) -> int:
    """A directory where a file should be is a fault of the environment; bad bytes are bad input."""
    return FAULT if disk.state == "dir" else USAGE


def cfg_lines(text: str) -> list[str]:
    parts = text.split("\n")
    return parts[:-1] if parts and parts[-1] == "" else parts


def unparsed(text: str) -> str | None:
    for number, line in enumerate(cfg_lines(text), 1):
        stripped = line.strip(" \t\r\n")
        if stripped == "" or stripped.startswith("#") or stripped.startswith("//"):
            continue
        parsed = parse_list(stripped)
        if isinstance(parsed, ParseError):
            return f"line {number}: {parsed.message}"
    return None


def last_set(disk: Disk, cvar: str) -> str | None:
    """The value of the last ``set CVAR VALUE`` line of a cfg file, as its words give it."""
    found = [line.split()[2] for line in cfg_lines(disk.text) if line.split()[:2] == ["set", cvar]] if disk.state == "text" else []
    return found[-1] if found else None


def single_set_of(line: str, cvar: str) -> bool:
    parsed = parse_list(line.strip(" \t\r\n"))
    return not isinstance(parsed, ParseError) and len(parsed) == 1 and parsed[0].verb == SET and parsed[0].args[0] == cvar


def write_sets(disk: Disk, path: str, pairs: tuple[Set, ...]) -> None:
    """A cfg writer: the file's single-set lines of the ids written go, a set line each is appended."""
    if disk.state in ("dir", "badutf8"):
        raise Failed(fault_of(disk), f"settings error: {path}: unreadable; nothing written")
    problem = unparsed(disk.text if disk.state == "text" else "")
    if problem is not None:
        raise Failed(USAGE, f"settings error: {path}: does not parse ({problem}); nothing written")
    ids = {s.id for s in pairs}
    kept = [line for line in cfg_lines(disk.text if disk.state == "text" else "") if not any(single_set_of(line, c) for c in ids)]
    lines = kept + ["set " + quote(s.id) + " " + quote(format_value(s.value)) for s in pairs]
    disk.state, disk.text = "text", "".join(line + "\n" for line in lines)


# -- the config ----------------------------------------------------------------------------------


@dataclass
class World:
    # the documents, and $A/run (where the agents' sockets are)
    files: dict[str, Disk] = field(default_factory=lambda: {k: Disk() for k in ("settings", "project", "gcfg", "pcfg", "acfg", "run", "models", "chat",
                                                                                        "chat session")})
    sessions: dict[str, "Session"] = field(default_factory=dict)
    tiny: dict[str, str] = field(default_factory=dict)
    memory_opened: bool = False
    models_json: str | None = None  # $A/models.json as an ask event wrote it (none: no file)
    made: int = 0  # sessions made in the sessions dir (labels $S1, $S2, ...)
    simulated: int = 0  # sessions the simulate command made in its own sessions dir
    wav: bool = False  # $P/x.wav, a regular file, written by an event's ``wav``
    env: dict[str, str] = field(default_factory=dict)  # the environment of the command under way (an event's ``env``)
    terminal: bool = False  # the command under way has a terminal for stdin and stdout (an event's ``tty``)
    core: "Checkout" = field(default_factory=lambda: Checkout())  # the scratch checkout of ``python -m eukhe.corebuild``
    dangling: set[str] = field(default_factory=set)  # paths that are symbolic links to a place that is not there (an event's ``dangling``)
    chat_model: str | None = None  # the model of the chat's session, as the last chat that reached its agent set it (none yet)
    chat_level: str | None = None  # the thinking level the chat's session shows (None: it opens at AGENT_LEVEL)
    chat_corrupt: bool = False  # the chat's session log holds a line that is no record (a ``corrupt`` event of session ``chat``)
    chat_owned: bool = False  # another process owns the chat's memory and serves no lock socket (an ``own`` event)
    chat_messages: list[str] | None = field(default_factory=list)  # the chat memory's messages, logged by the chat's turns (None: not modelled)
    player: str | None = None  # $P/aplay, an audio player an event's ``player`` wrote: "ok" (exit 0) or "fails" (exit 3)


def cfg_sets(disk: Disk, path: str, local_only: bool) -> tuple[tuple[Set, ...], list[str]]:
    if disk.state == "missing":
        return (), []
    if disk.state != "text":
        return (), [f"{path}: cannot be read"]
    sets, problems = read_cfg(DECLS, disk.text, local_only)
    return sets, [f"{path}:{n}: {said_in_cfg(e)}" for n, e in problems]


def said_in_cfg(e: str) -> str:
    return "does not parse: " + e[len("ParseError("):-1] if e.startswith("ParseError(") else e


def doc_sets(disk: Disk, path: str, project: bool) -> tuple[tuple[tuple[str, Value], ...], list[str]]:
    why = why_unread(disk)
    if why is not None:
        return (), [f"{path}: {why}"]
    doc = read(document(disk))
    assert isinstance(doc, Obj)
    applied, named = leaves(DECLS, doc, project)
    return applied, [f"{path}: {p}: CvarError::{k}({p})" for p, k in named]


@dataclass(frozen=True)
class Config:
    layers: tuple[Layer, ...]
    errors: tuple[str, ...]
    servers: tuple[tuple[str, Value], ...]
    withheld: tuple[str, ...]


def config(world: World) -> Config:
    g_applied, g_errors = doc_sets(world.files["settings"], SETTINGS_JSON, False)
    p_applied, p_errors = doc_sets(world.files["project"], PROJECT_JSON, True)
    g_cfg, gc_errors = cfg_sets(world.files["gcfg"], GLOBAL_CFG, False)
    p_cfg, pc_errors = cfg_sets(world.files["pcfg"], PROJECT_CFG, True)
    g_sets = tuple(Set(k, v) for k, v in g_applied if k != "version" and not k.startswith("mcpServers."))
    is_trusted = trusted("$P", (g_sets, g_cfg))
    p_items = tuple(k for k, _ in p_applied if k != "version") + tuple(s.id for s in p_cfg)
    withheld = () if is_trusted else tuple(sorted({i for i in p_items if guarded(i)}))
    layers = (
        Layer("global settings.json", False, g_sets),
        Layer("project settings.json", True, tuple(Set(k, v) for k, v in p_applied if k != "version" and not k.startswith("mcpServers.") and k not in withheld)),
        Layer("global config.cfg", False, g_cfg),
        Layer("project config.cfg", True, tuple(s for s in p_cfg if s.id not in withheld)),
    )
    servers: Obj = Obj(())
    for k, v in g_applied + tuple(p for p in p_applied if p[0] not in withheld):
        if k.startswith("mcpServers."):
            servers = put(servers, k[len("mcpServers."):], v)
    return Config(layers, tuple(g_errors + p_errors + gc_errors + pc_errors), servers.pairs, withheld)


def sourced(conf: Config, family: tuple[Agent, ...], cvar: str) -> tuple[Value, str]:
    """(value, the layer it came from): the agent's sets, its profile, the config from the top."""
    for agent in reversed(family):
        for where, sets in (("sets " + agent.name, agent.sets), ("profile " + agent.name, agent.profile)):
            found = layer_value(DECLS, sets, True, cvar)
            if found[0]:
                return found[1], where
    for layer in reversed(conf.layers):
        found = layer_value(DECLS, layer.sets, layer.project, cvar)
        if found[0]:
            return found[1], layer.source
    decl = lookup(DECLS, cvar)
    assert decl is not None
    return decl.default, "default"


# -- sessions ------------------------------------------------------------------------------------

Doc = tuple[tuple[tuple[str, Value], ...], tuple[tuple[str, str], ...]]  # (sets, aliases)


@dataclass
class Session:
    entries: dict[int, tuple[int | None, Doc]] = field(default_factory=dict)
    head: int | None = None
    origin: tuple[str, int] | None = None
    corrupt: int | None = None  # the line of its log that is no record (the log's lines: one per entry)
    locked: bool = False  # another writer holds it

    def doc(self) -> Doc:
        return ((), ()) if self.head is None else self.entries[self.head][1]

    def commit(self, doc: Doc) -> None:
        new = max(self.entries, default=0) + 1
        self.entries[new] = (self.head, doc)
        self.head = new

    def branch(self, entry: int | None) -> list[int]:
        out: list[int] = []
        while entry is not None:
            out.insert(0, entry)
            entry = self.entries[entry][0]
        return out


def family_of(world: World, session: Session) -> tuple[Agent, ...]:
    profile, _ = cfg_sets(world.files["acfg"], AGENT_CFG, True)
    return (Agent("main", profile, tuple(Set(k, v) for k, v in session.doc()[0])),)


def doc_json(doc: Doc) -> str:
    text = json.dumps({"sets": [[k, to_json(v)] for k, v in doc[0]], "aliases": [[n, b] for n, b in doc[1]]}, ensure_ascii=False)
    return text if len(text) <= 200 else text[:197] + "..."


def session_of(world: World, label: str, prog: str) -> Session:
    if label not in world.sessions:
        raise Failed(USAGE, f"{prog}: no session at $A/sessions/nosuch")
    if world.sessions[label].corrupt is not None:  # a fault of the environment: the log cannot be read
        raise Failed(FAULT, f"{prog}: {corrupt_record(world, label)}")
    return world.sessions[label]


LOCK_TIMEOUT = 5.0  # seconds a writer waits for a session another writer holds, with nothing set
MAX_LOCK_TIMEOUT = 3600.0  # EUKHE_LOCK_TIMEOUT is taken from 0 to an hour


def held(world: World, label: str, prog: str) -> None:
    """A writer of a session another writer holds waits, then fails (a fault of the environment):
    EUKHE_LOCK_TIMEOUT seconds, else the global config's session.lockTimeoutMs, else 5 s. The
    holder's words (its pid, host, program and start) are cut."""
    if not world.sessions[label].locked:
        return
    try:
        wait = float(world.env.get("EUKHE_LOCK_TIMEOUT", ""))
    except ValueError:
        wait = -1.0
    if not 0 <= wait <= MAX_LOCK_TIMEOUT:
        given = last_set(world.files["gcfg"], "session.lockTimeoutMs")
        wait = int(given) / 1000 if given is not None and given.isdigit() else LOCK_TIMEOUT
    raise Failed(FAULT, f"{prog}: session $A/sessions/{label} is locked for writing by ...; waited {wait:g} s")


def corrupt_record(world: World, label: str) -> str:
    line = world.sessions[label].corrupt
    return f"corrupt record: $A/sessions/{label}/main.jsonl record {line} (line {line}): not JSON"


def show_session(world: World, label: str) -> list[str]:
    session = world.sessions[label]
    lines = [f"session {label}  conversation main  head {session.head}"]
    if session.origin is not None:
        lines.append(f"forked from session {session.origin[0]} conversation main entry {session.origin[1]}")
    lines.append("conversations: main")
    lines.append("entries (* on the head's branch, > the head; [display-only] rows never reach the model):")
    on_branch = session.branch(session.head)
    for entry in sorted(session.entries):
        mark = ">" if entry == session.head else "*" if entry in on_branch else " "
        parent = session.entries[entry][0]
        lines.append(f"{mark} {entry:>4} (parent {'-' if parent is None else str(parent):>4})  state  sets eukhe.cvar.agent")
    lines.append("documents at head:")
    lines.append("  (none)" if session.head is None else "  eukhe.cvar.agent = " + doc_json(session.doc()))
    return lines


# -- commands -------------------------------------------------------------------------------------


def flag(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else None


def cvar_error(e: CvarError | None) -> str:
    assert e is not None
    return f"CvarError::{e.kind}({e.id})"


def parse_set(cvar: str, text: str, local_only: bool, prog: str) -> Value:
    decl = lookup(DECLS, cvar)
    if decl is not None and decl.type.kind in (LIST, MAP):
        try:
            strict_loads(text)
        except ValueError:
            raise Failed(USAGE, f"{prog}: the value of {cvar} is not JSON") from None
    if decl is None:
        raise Failed(USAGE, cvar_error(CvarError("Undeclared", cvar)))
    if local_only and decl.scope == GLOBAL:
        raise Failed(USAGE, cvar_error(CvarError("Global", cvar)))
    ok, value = parse_value(decl.type, text)
    if not ok:
        raise Failed(USAGE, cvar_error(CvarError("BadValue", cvar)))
    return value


def run_set(world: World, argv: list[str], out: list[str]) -> None:
    verb, cvar = argv[0], argv[1]
    prog = f"eukhe {verb}"
    if "--global" in argv:
        if verb == "set":
            value = parse_set(cvar, argv[2], False, prog)
        else:
            disk = world.files["gcfg"]
            if disk.state in ("dir", "badutf8"):
                raise Failed(fault_of(disk), f"{prog}: settings error: {GLOBAL_CFG}: unreadable; nothing written")
            problem = unparsed(disk.text if disk.state == "text" else "")
            if problem is not None:
                raise Failed(USAGE, f"{prog}: settings error: {GLOBAL_CFG}: does not parse ({problem}); nothing written")
            flipped = global_toggle(DECLS, config(world).layers, cvar)
            if isinstance(flipped, CvarError):
                raise Failed(USAGE, cvar_error(flipped))
            value = flipped.value
        try:
            write_sets(world.files["gcfg"], GLOBAL_CFG, (Set(cvar, value),))
        except Failed as failed:
            raise Failed(failed.status, f"{prog}: {failed.line}") from None
        out.append(f"{cvar} = {show(value)} (global config.cfg)")
        return
    label = flag(argv, "--session")
    if label is None:
        raise Failed(USAGE, f"{prog}: a session set needs --session ID (or --global for the global config.cfg)")
    session = session_of(world, label, prog)
    family = family_of(world, session)
    if verb == "set":
        value = parse_set(cvar, argv[2], True, prog)
    else:
        family, e = toggle(DECLS, config(world).layers, family, cvar)
        if e is not None:
            raise Failed(USAGE, cvar_error(e))
        value = family[-1].sets[-1].value
    held(world, label, prog)
    sets, aliases = session.doc()
    session.commit((sets + ((cvar, value),), aliases))
    out.append(f"{cvar} = {show(value)} (session {label})")


def run_cvar(world: World, argv: list[str], out: list[str]) -> None:
    line, label = argv[1], flag(argv, "--session")
    if label is None:
        raise Failed(USAGE, "eukhe cvar: a session set needs --session ID (or --global for the global config.cfg)")
    session = session_of(world, label, "eukhe cvar")
    held(world, label, "eukhe cvar")
    family = family_of(world, session)
    if line.strip() == "save":
        saved = written(DECLS, family[-1])
        try:
            write_sets(world.files["acfg"], AGENT_CFG, saved)
        except Failed as failed:
            raise Failed(failed.status, f"eukhe cvar: {failed.line}") from None
        out.extend(f"saved {s.id} = {show(s.value)}" for s in saved)
        return
    parsed = parse_list(line)
    if isinstance(parsed, ParseError):
        raise Failed(USAGE, f"eukhe cvar: {parsed.message}")
    sets, aliases = session.doc()
    table: Aliases = ()
    for name, body in aliases:
        got = parse_list(body)
        if not isinstance(got, ParseError):
            table = define(table, name, got)
    commands = expand(table, parsed)
    if isinstance(commands, ExpandError):
        raise Failed(USAGE, f"ExpandError::{commands.kind}({commands.name})")
    conf = config(world)
    changed = False
    refused: list[str] = []
    for c in commands:
        shown = format_command(c)
        if c.verb == SET:
            try:
                value = parse_set(c.args[0], c.args[1], True, "")
            except Failed as failed:
                outcome = failed.line
            else:
                sets, outcome = sets + ((c.args[0], value),), "ok"
        elif c.verb == TOGGLE:
            agents, e = toggle(DECLS, conf.layers, (Agent("main", family[0].profile, tuple(Set(k, v) for k, v in sets)),), c.args[0])
            if e is not None:
                outcome = cvar_error(e)
            else:
                sets, outcome = sets + ((c.args[0], agents[-1].sets[-1].value),), "ok"
        elif c.verb == ALIAS:
            defined = parse_list(c.args[1])
            if isinstance(defined, ParseError):
                outcome = f"ParseError({defined.message})"
            else:
                aliases = tuple(a for a in aliases if a[0] != c.args[0]) + ((c.args[0], c.args[1]),)
                outcome = "ok"
        else:
            out.append(f"{shown} -> client-only")
            continue
        changed = changed or outcome == "ok"
        out.append(f"{shown} -> {outcome}")
        if outcome != "ok":
            refused.append(f"{shown} -> {outcome}")
    if changed:
        session.commit((sets, aliases))
    if refused:
        raise Failed(USAGE, f"eukhe cvar: {len(refused)} of {len(commands)} commands refused; the first: {refused[0]}")


def run_show(world: World, argv: list[str], ids: list[str], out: list[str], err: list[str]) -> None:
    conf = config(world)
    family: tuple[Agent, ...] = ()
    errors = list(conf.errors)
    label = flag(argv, "--session")
    if label is not None:
        session = session_of(world, label, "eukhe settings show")
        family = family_of(world, session)
        errors += cfg_sets(world.files["acfg"], AGENT_CFG, True)[1]
    for cvar in ids:
        value, where = sourced(conf, family, cvar)
        out.append(f"{cvar} = {show(value)}  [{where}]")
    out.extend(f"mcpServers.{name} = {show(entry)}" for name, entry in conf.servers)
    if conf.withheld:
        out.append("untrusted project: withheld " + ", ".join(conf.withheld))
    err.extend(sorted(f"settings error: {e}" for e in errors))


def run_mcp(world: World, argv: list[str], out: list[str]) -> None:
    verb, name = argv[1], argv[2]
    prog = f"eukhe mcp {verb}"
    if not name.strip():
        raise Failed(USAGE, f"{prog}: a server name is not empty")
    disk = world.files["settings"]
    if verb == "add":
        try:
            entry = from_json(strict_loads(argv[3]))
        except ValueError:
            raise Failed(USAGE, f"{prog}: the entry is not JSON") from None
        if not isinstance(entry, Obj):
            kind = "list" if isinstance(entry, tuple) else type(entry).__name__ if entry is not None else "NoneType"
            raise Failed(USAGE, f"{prog}: the entry is a JSON object, not {kind}")
    why = why_unread(disk)
    if why is not None:
        raise Failed(fault_of(disk), f"{prog}: settings error: {SETTINGS_JSON}: {why}; nothing written")
    doc = read(document(disk))
    assert isinstance(doc, Obj)
    if verb == "remove":
        servers = [v for k, v in doc.pairs if k == "mcpServers"]
        if not servers or not isinstance(servers[0], Obj) or name not in [k for k, _ in servers[0].pairs]:
            raise Failed(USAGE, f"{prog}: {SETTINGS_JSON} has no mcpServers entry {name!r}; nothing written")
        doc = apply(doc, Change(("mcpServers", name), None, True))
        said = "removed"
    else:
        doc = apply(doc, Change(("mcpServers", name), entry, False))
        said = "added"
    disk.state, disk.text = "text", json.dumps(to_json(doc))
    out.append(f"mcpServers.{name} {said} in {SETTINGS_JSON}")


def run_session(world: World, argv: list[str], out: list[str]) -> None:
    action = argv[1]
    prog = f"eukhe session {action}"
    if action == "new":
        world.made += 1
        label = f"$S{world.made}"
        world.sessions[label] = Session()
        out.append(label)
    elif action == "list" and flag(argv, "--session-dir") is not None:
        out.append(f"sessions in {flag(argv, '--session-dir')} (from --session-dir)")  # a dir no session was made in
    elif action == "list":
        named = last_set(world.files["gcfg"], "sessionDir")  # S4b.7: read against the agent dir, after the flag and the variable
        if named is not None and world.sessions:
            raise ValueError("sessions made in a sessionDir are not modelled")
        out.append(f"sessions in $A/{named} (from global config.cfg)" if named is not None else "sessions in $A/sessions (from default)")
        for label in sorted(world.sessions, key=lambda s: int(s[2:])):
            s = world.sessions[label]
            if s.corrupt is not None:  # named, and the others still listed
                out.append(f"{label}  error: {corrupt_record(world, label)}")
                continue
            out.append(f"{label}  entries {len(s.entries)}  head {s.head}  conversations main")
        unreadable = [label for label in world.sessions if world.sessions[label].corrupt is not None]
        if unreadable:
            raise Failed(FAULT, f"eukhe session list: {len(unreadable)} session(s) cannot be read")
    else:
        label = argv[2]
        conversation = flag(argv, "--conversation") or "main"
        if action in ("fork", "rewind"):
            text = argv[3]
            body = text[1:] if text.startswith("-") else text
            if not (body.isascii() and body.isdigit()) or len(body) > 30:
                raise Failed(USAGE, f"{prog}: argument entry: an entry id is a whole number of at most 30 digits, not {text[:40]!r}")
        session = session_of(world, label, prog)
        if conversation != "main":
            raise Failed(USAGE, f"{prog}: session $A/sessions/{label} has no conversation {conversation!r}")
        if action == "show":
            out.extend(show_session(world, label))
            return
        entry = int(argv[3])
        if entry not in session.entries:
            raise Failed(USAGE, f"{prog}: conversation 'main' has no entry {entry}")
        if action == "rewind":
            session.head = entry
            out.append(f"{label} main: head is now entry {entry}")
        else:
            world.made += 1
            new = f"$S{world.made}"
            kept = session.branch(entry)
            world.sessions[new] = Session({e: session.entries[e] for e in kept}, entry, (label, entry))
            out.append(new)


def run_effort(argv: list[str], out: list[str]) -> None:
    verb = argv[1]
    prog = f"eukhe effort {verb}"
    try:
        raw = strict_loads(flag(argv, "--map") or "null")
    except ValueError:
        raise Failed(USAGE, f"{prog}: --map is not JSON") from None
    if raw is not None and not isinstance(raw, dict):
        raise Failed(USAGE, f"{prog}: a thinking-level map is a JSON object, not {'list' if isinstance(raw, list) else type(raw).__name__}")
    level_map = None
    if raw is not None:
        for key, entry in raw.items():
            if key not in LEVELS:
                raise Failed(USAGE, f"{prog}: unknown thinking level {key!r} (levels: {', '.join(LEVELS)})")
            if entry is not None and not isinstance(entry, str):
                raise Failed(USAGE, f"{prog}: thinking level {key!r}: an entry is a wire string or null, not {entry!r}")
        level_map = tuple((k, raw[k]) for k in raw)
    offer = efforts.offered(efforts.Model("--reasoning" in argv, level_map))
    if verb == "offered":
        out.append(json.dumps(list(offer)))
        return
    level = flag(argv, "--level") or ""
    if level not in LEVELS:
        raise Failed(USAGE, f"{prog}: unknown thinking level {level!r} (levels: {', '.join(LEVELS)})")
    answer = efforts.clamp(offer, level) if verb == "clamp" else efforts.cycle(offer, level, "--backward" not in argv)
    out.append(json.dumps(answer))


# inference.md S9: the models whose files the catalog pins (repo commit, size and sha256 of each);
# the others have no pin, and a download refuses them before any request
PINNED = ("kokoro",)


def run_tiny(world: World, argv: list[str], out: list[str], err: list[str]) -> int:
    if argv[1] == "list":
        out.extend(f"{mid}\t{SHOWN_STATE.get(world.tiny.get(mid, 'missing'), world.tiny.get(mid, 'missing'))}\t{kind}" for mid, kind in CATALOG)
        return OK
    if argv[2] != "all" and argv[2] not in [m for m, _ in CATALOG]:
        raise Failed(USAGE, f"eukhe tiny-models download: unknown tiny model {argv[2]!r}; the catalog has {', '.join(m for m, _ in CATALOG)}")
    base = flag(argv, "--base-url")
    if base is not None and base != "$U":  # $U: the loopback server's base URL, http://127.0.0.1:PORT
        parts = urlsplit(base)
        try:
            parts.port  # noqa: B018 - a port that is not a number is no URL
        except ValueError:
            parts = urlsplit("")
        if parts.scheme not in ("http", "https") or not parts.hostname or any(c.isspace() or not c.isprintable() for c in base):
            raise Failed(USAGE, f"eukhe tiny-models download: --base-url {base[:200]!r} is not an http or https URL with a host")
    if base != "$U" or any(world.tiny.get(m, "missing") != "missing" for m, _ in CATALOG):
        raise ValueError("a download from anywhere but the loopback server, or over installed files, is not modelled")
    return download_refused([m for m, _ in CATALOG] if argv[2] == "all" else [argv[2]], err)


def download_refused(models: list[str], err: list[str]) -> int:
    """``tiny-models download`` from a server that answers every file 404 (the loopback server, $U):
    each model in catalog order fails alone, one line each, exit 1: an unpinned one before any
    request (Unpinned), a pinned one at its first file (BrokenTransfer naming the file's URL under
    the base URL, whose path the bridge cuts, and the status)."""
    prog = "eukhe tiny-models download"
    for model in models:
        if model in PINNED:
            err.append(f"{prog}: BrokenTransfer: $U/...: HTTP 404")
        else:
            err.append(f"{prog}: Unpinned: {model}: not pinned: the catalog has no commit, size and sha256 for its files (no pin was "
                       "found from a public source in the environment this build was made in, and none is guessed); nothing downloaded")
    return FAULT


# A model dir of the scenario's ``tiny`` event: installed, incomplete, missing, or ``echo``: installed,
# its engine the fake one of the seed's bridge ("real serve, fake engine": the worker is real, its
# engine answers a chat with its input unchanged, as a failing tiny model does; it speaks a WAV and
# transcribes one to some text). ``tiny-models list`` shows an echo model as installed.
SHOWN_STATE = {"echo": "installed"}
# inference.md S9's eval: ten short English sentences into each of four languages; echoes count the
# replies equal to their input (each of a model that echoes), chrF the mean score (cut: ``#``)
EVAL_LANGUAGES, EVAL_SENTENCES = ("French", "German", "Portuguese", "Spanish"), 10
PLAYER_FAILS = "no device"  # what the scenario's failing player ($P/aplay) says on stderr


def answering(world: World, role: str) -> bool:
    """Whether the role's model is found and answers (S9 roles: the first of the role's chain that
    is installed); False when none is installed. A first installed model without an engine that
    runs (no ``echo``) is not modelled."""
    found = [m for m in ROLE_CHAINS[role] if world.tiny.get(m) in ("installed", "echo")]
    if found and world.tiny[found[0]] != "echo":
        raise ValueError("an installed model without an engine that runs is not modelled")
    return bool(found)


def run_tiny_use(world: World, argv: list[str], wav: str, out: list[str]) -> None:
    """The uses of tiny models: with none of the role's models installed, or the role's model an
    echo model (``answering``): ``say`` writes --out, or plays the speech with the first player on
    PATH (one that fails: one line with what it said, exit 1); ``transcribe`` prints the text (the
    bridge cuts it: ``(text)``); ``translate-eval`` prints the eval's JSON (its chrF cut)."""
    verb = argv[0]
    prog = f"eukhe {verb}"
    if verb == "translate":
        if not argv[1].strip() or not argv[2].strip():
            raise Failed(USAGE, f"{prog}: the language and the text must not be empty")
        raise Failed(FAULT, f"{prog}: Unavailable: no model available for role translate: chain [{', '.join(ROLE_CHAINS['translate'])}]")
    if verb == "say":
        if not argv[1].strip():
            raise Failed(USAGE, f"{prog}: the text must not be empty")
        speed = float(flag(argv, "--speed") or "1")
        if speed <= 0:
            raise Failed(USAGE, f"{prog}: --speed must be a positive number, got {speed}")
        voice = flag(argv, "--voice") or "af_heart"
        if "/" in voice or voice.startswith(".") or not voice.isprintable():
            raise Failed(USAGE, f"{prog}: --voice {voice!r} is not a voice's name (a file voices/<voice>.bin of the model: no '/', not starting with '.')")
        target = flag(argv, "--out")
        if target in DIRS:
            raise Failed(USAGE, f"{prog}: --out {target} is a directory; name a .wav file")
        if target is not None and directory_of(target) not in DIRS:
            raise Failed(USAGE, f"{prog}: --out {target}: no directory {directory_of(target)}")
        if target is None and world.env.get("PATH") != "$P":
            raise ValueError("the audio players on the machine's PATH are not modelled")
        if target is None and world.player is None:  # no --out: played by the first of the players found on PATH ($P holds none)
            raise Failed(FAULT, f"{prog}: no audio player on PATH (pw-play, paplay, aplay); write a file with --out F.wav")
        if not answering(world, "speech"):
            raise Failed(FAULT, f"{prog}: Unavailable: no model available for role speech: chain [{', '.join(ROLE_CHAINS['speech'])}]")
        if target is None and world.player == "fails":  # $P/aplay, the one player on PATH, exits 3
            raise Failed(FAULT, f"{prog}: aplay failed: {PLAYER_FAILS}")
        if target in world.dangling:  # a link to a place that is not there: the speech cannot be written
            raise Failed(FAULT, f"{prog}: cannot write {target}: No such file or directory")
        return  # the speech is written to --out, or played: nothing printed
    if verb == "transcribe" and wav == "pcm" and answering(world, "dictation"):
        out.append("(text)")
        return
    if verb == "transcribe" and wav == "pcm":  # a PCM WAV file, no model of the role installed
        raise Failed(FAULT, f"{prog}: Unavailable: no model available for role dictation: chain [{', '.join(ROLE_CHAINS['dictation'])}]")
    if verb == "transcribe" and wav == "junk":
        raise Failed(USAGE, f"{prog}: {argv[1]}: not a PCM WAV file")
    if verb == "transcribe":
        raise Failed(USAGE, f"{prog}: cannot read {argv[1]}: No such file or directory")
    model = argv[1]
    if model not in [m for m, _ in CATALOG]:
        raise Failed(USAGE, f"{prog}: unknown tiny model {model!r}")
    if world.tiny.get(model) == "echo":
        out.append(json.dumps({language: {"chrf": "#", "echoes": EVAL_SENTENCES} for language in EVAL_LANGUAGES}).replace('"#"', "#"))
        return
    if world.tiny.get(model) == "installed":  # its files, but no engine its worker can load: the worker's error (its text cut)
        raise Failed(FAULT, f"{prog}: WorkerError")
    raise Failed(FAULT, f"{prog}: {model} is not installed")


def run_memory(world: World, argv: list[str], out: list[str]) -> None:
    verb = argv[1] if len(argv) > 1 else "status"
    if verb == "simulate":
        simulate_refused(argv)
        stats = simulated(int(flag(argv, "--messages") or 0), int(flag(argv, "--seed") or 2026))
        if "--cache" in argv:
            stats["cache"] = cache_measure(int(flag(argv, "--messages") or 0))
        text = json.dumps(stats, indent=1).replace('"#"', "#").replace('"{...}"', "{...}")
        drawn = {name: flag(argv, name) for name in ("--plot", "--png")}
        if drawn["--plot"] in world.dangling:  # a link to a place that is not there: the drawing cannot be written, before any output
            raise Failed(FAULT, f"eukhe memory simulate: --plot: cannot write {drawn['--plot']}: No such file or directory")
        out.extend(text.split("\n"))
        if drawn["--plot"] is not None:
            out.append(f"cache shares drawn to {drawn['--plot']}")
        if drawn["--png"] in world.dangling:  # the sawtooth is drawn after the statistics are printed
            raise Failed(FAULT, f"eukhe memory simulate: --png: cannot write {drawn['--png']}: No such file or directory")
        if drawn["--png"] is not None:  # the sawtooth drawn (matplotlib, of the dev extra)
            out.append(f"sawtooth written to {drawn['--png']}")
        return
    if verb in ("date", "zoom") and not all(a.isdigit() for a in argv[2:]):
        bad = [a for a in argv[2:] if not a.isdigit()][0]
        name = "id" if argv.index(bad) == 2 else "n"
        said = f"wants a whole number >= 0, not {int(bad)}" if bad.lstrip("-").isdigit() else f"wants a whole number, not {bad!r}"
        raise Failed(USAGE, f"eukhe memory {verb}: argument {name}: {said}")
    if world.files["chat"].state == "text" and verb in ("status", "view", "date", "zoom"):  # $A/chat a regular file: no chat dir
        raise Failed(FAULT, "eukhe memory: cannot make the chat directory $A/chat/main")
    opened, world.memory_opened = world.memory_opened, True
    held = world.chat_messages
    if held is None or (held and verb not in ("view", "date", "zoom")):
        raise ValueError("the memory after these chat turns is not modelled")
    if verb == "status":
        out.append("mem 0K/128K  messages 0  nodes 0  view lines 0")
        out.append(f"chat $A/chat/main  view.json at open: {'matches' if opened else 'missing'}  owner")
    elif verb == "view":  # rules 11, 15: with no compactor each message is its own node id+1, one line (short messages whole)
        if any(len(text.encode("utf-8")) > 512 or "\n" in text or not text for text in held):
            raise ValueError("a message's line other than the message itself is not modelled")
        out.extend(["<chat>", *(f"{k}+1|{text}" for k, text in enumerate(held)), "</chat>"])
    elif verb == "date" and int(argv[2]) < len(held):
        out.append("(date)")  # the local time it was logged: the bridge cuts it
    elif verb == "date":
        raise Failed(USAGE, f"eukhe memory: no message {int(argv[2])}: the chat has {len(held)}")
    elif verb == "zoom" and (int(argv[3]) != 1 or int(argv[2]) >= len(held)) and held:
        raise ValueError("a zoom other than into one message the chat holds is not modelled")
    elif verb == "zoom" and held:  # node id+1 opens to its message's line
        out.append(f"{int(argv[2])}+1|{held[int(argv[2])]}")
    elif verb == "zoom":
        raise Failed(USAGE, f"eukhe memory: {int(argv[2])}+{int(argv[3])} runs past the chat's 0 messages")
    elif flag(argv, "--session-dir") is not None:  # a dir to import that is not there is a mistake; a file, a fault
        root = str(flag(argv, "--session-dir"))
        if root == "$P/x.wav" and world.wav:
            raise Failed(FAULT, f"eukhe memory import: --session-dir {root} is not a directory")
        raise Failed(USAGE, f"eukhe memory import: --session-dir {root} does not exist")
    else:
        out.append(f"imported 0 messages from {len(world.sessions)} sessions in $A/sessions (from default); 0 entries already in the chat")


def simulate_refused(argv: list[str]) -> None:
    """``memory simulate`` with arguments it refuses before any run."""
    prog = "eukhe memory simulate"
    text = flag(argv, "--messages") or "0"
    if not text.lstrip("-").isdigit():
        raise Failed(USAGE, f"{prog}: argument --messages: --messages wants a whole number, not {text!r}")
    count = int(text)
    if not 1 <= count <= 10_000_000:
        raise Failed(USAGE, f"{prog}: argument --messages: --messages must be between 1 and 10,000,000, not {count}")
    seed = flag(argv, "--seed")
    if seed is not None and not (seed.lstrip("-").isascii() and seed.lstrip("-").isdigit()):
        raise Failed(USAGE, f"{prog}: argument --seed: --seed wants a whole number of at most 100 digits, not {seed[:40]!r}")
    png = flag(argv, "--png")
    if png in DIRS:
        raise Failed(USAGE, f"{prog}: --png {png} is a directory; name a .png file")
    if png is not None and not png.lower().endswith(".png"):
        raise Failed(USAGE, f"{prog}: --png wants a .png file, not {png!r}")
    if png is not None and directory_of(png) not in DIRS:
        raise Failed(USAGE, f"{prog}: --png: no directory {directory_of(png)!r}")
    plot = flag(argv, "--plot")
    if plot is not None and "--cache" not in argv:
        raise Failed(USAGE, f"{prog}: --plot draws the cache measure; add --cache")
    if plot is not None and (plot in DIRS or not plot.lower().endswith(".svg")):
        raise Failed(USAGE, f"{prog}: --plot wants an .svg file, not {plot!r}")
    if plot is not None and directory_of(plot) not in DIRS:
        raise Failed(USAGE, f"{prog}: --plot: no directory {directory_of(plot)!r}")


# ``memory simulate --cache``: the prompt-cache measure's figures (turns, compactions, shares,
# where unread bytes went) follow the live compactor's calls against the loopback server's cache
# model: not modelled. What is: the measure's keys in their order, every share a percent (0-100)
# and every count and rate not below 0 (the bridge prints each such figure as #), its messages
# (the run's), no failed call (the loopback server fails none), the unread bytes' causes by kind
# of call (``why``: its detail cut), and the plot's line.
CACHE_KEYS = ("messages", "turns", "compactions", "compaction_calls_sent", "turn_cache_read_percent", "compaction_cache_read_percent",
              "turn_prefix_read_percent", "compaction_prefix_read_percent", "turn_view_read_percent", "compaction_view_read_percent",
              "rewritten_lines_per_message", "failed_calls", "why")


def cache_measure(messages: int) -> dict[str, object]:
    said: dict[str, object] = {key: "#" for key in CACHE_KEYS}
    said.update(messages=messages, failed_calls=0, why="{...}")
    return said


def note_sizes(count: int, seed: int) -> list[int]:
    """The synthetic message sizes ``memory simulate`` feeds the planner: its input, not a rule
    under test. The seed names no distribution (memory.md cites the note's traffic: short user
    words, replies, tool calls, tool output clipped to 30,000); the classes and ranges are the
    command's own choice, restated here as data (user 20-400 bytes 30%, replies 300-2,500 25%,
    tool calls 80-600 25%, output 1,000-30,000 20%), each a draw of Python's seeded Mersenne Twister
    (``random.Random(seed)``: a pure function of the seed): the class's draw, then the size's.
    What the bridge judges is what the planner makes of them."""
    import random

    r = random.Random(seed)
    sizes = []
    for _ in range(count):
        kind = r.random()
        classes = ((0.30, 20, 400), (0.55, 300, 2_500), (0.80, 80, 600), (2.0, 1_000, 30_000))
        _, low, high = next(c for c in classes if kind < c[0])
        sizes.append(r.randint(low, high))
    return sizes


def spread(values: list[int]) -> dict[str, object]:
    if not values:
        return {"min": 0, "max": 0, "mean": 0.0, "last": 0}
    return {"min": min(values), "max": max(values), "mean": round(sum(values) / len(values), 1), "last": values[-1]}


def simulated(messages: int, seed: int) -> dict[str, object]:
    """``memory simulate --messages N [--seed S]``: the OptChat model (bend.optchat) over the note's
    sizes, every running call ended at once (first running first); after each message the bytes
    and lines of both views; the batches, their merges, the lines each batch rewrote (from the
    first line it changed to the end), the compaction view's merges and the model calls."""
    chat = optchat.Chat()
    bytes_, cbytes, lines, clines = [], [], [], []
    batches = merges = rewritten = cmerges = calls = 0
    for length in note_sizes(messages, seed):
        before = tuple(node for node, _ in chat.view) + ((0, chat.t),)
        chat = optchat.message(chat, "x" * length)
        if chat.batch > 0:
            batches += 1
            merges += chat.batch
            after = tuple(node for node, _ in chat.view)
            same = next((k for k, (a, b) in enumerate(zip(before, after)) if a != b), min(len(before), len(after)))
            rewritten += len(after) - same
        cmerges += chat.cmerge != "-"
        while chat.running:
            calls += 1
            # never late: each node built gets a line of 400-512 bytes, spread by its place (the command's help)
            chat = optchat.done(chat, 0, "y" * line_size(chat.running[0], 400, 113))
        bytes_.append(view_bytes(chat.view))
        cbytes.append(view_bytes(chat.cview))
        lines.append(len(chat.view))
        clines.append(len(chat.cview))
    return {"messages": messages, "view_lines": spread(lines), "view_bytes": spread(bytes_), "cview_lines": spread(clines),
            "cview_bytes": spread(cbytes), "batches": batches, "merges_per_batch": round(merges / batches, 1) if batches else 0.0,
            "rewritten_lines_per_message": round(rewritten / messages, 2), "cview_merges": cmerges, "model_calls": calls}


def directory_of(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else "."


def nesting(text: str) -> int:
    """How deep the brackets of ``text`` nest ([ and {; strings not told apart; a closing
    bracket with none open closes nothing): the most open at any point."""

    def after(depth: int, char: str) -> int:
        return depth + 1 if char in "[{" else max(0, depth - 1) if char in "]}" else depth

    return max(accumulate(text, after, initial=0))


def refused_arguments(argv: list[str]) -> None:
    """What every command refuses once its arguments are parsed: an empty path, a text argument
    nested too deep (the scenarios nest the VALUE of ``set`` and the ID of ``session show``)."""
    verb = argv[0] in VERB_OF or (argv[0] == "memory" and len(argv) > 1 and not argv[1].startswith("-"))  # memory's verbs: simulate, ...
    prog = "eukhe " + " ".join(argv[:2] if verb else argv[:1])
    for name in PATH_FLAGS:
        if flag(argv, name) == "":
            raise Failed(USAGE, f"{prog}: the argument {name} is empty: name a path, or leave it out")
    for index, text in enumerate(argv):
        escaped = [at for at, char in enumerate(text) if "\ud800" <= char <= "\udfff"]  # undecodable bytes of a real argv, lone escapes
        if escaped:
            label = {("set", 2): "VALUE", ("session", 2): "ID"}[(argv[0], index)]
            undecodable = all("\udc80" <= text[at] <= "\udcff" for at in escaped)  # shown as the bytes they were, else escaped
            shown = repr(text.encode("utf-8", "surrogateescape")) if undecodable else ascii(text)
            raise Failed(USAGE, f"{prog}: the argument {label} is not UTF-8 text (at character {escaped[0]}): {shown[:80]}")
        if nesting(text) > MAX_DEPTH:
            label = {("set", 2): "VALUE", ("session", 2): "ID"}[(argv[0], index)]
            raise Failed(USAGE, f"{prog}: the argument {label} is nested more than {MAX_DEPTH} brackets deep")


# Laws of the seeds' tables (control.md S4.1, S10; inference.md S6.1) the scenarios pin: each is
# registered under its seed name, also as AREA/NAME (a law of a table with no property fails `make laws`).
SEED_LAWS = (("effort", "effort_clamp_keeps"), ("effort", "effort_cycle_wrap"), ("cvar", "cvar_toggle_twice"),
             ("cvar", "alias_self_cycle"), ("progress", "goal_progress_continues"))
# inference.md S10's table of effort laws, in its order: what `laws --area effort` runs
EFFORT_LAWS = ("effort_offered_plain", "effort_offered_null", "effort_offered_ext", "effort_offered_kept", "effort_offered_asc",
               "effort_clamp_offered", "effort_clamp_keeps", "effort_clamp_idem", "effort_cycle_still", "effort_cycle_next",
               "effort_cycle_wrap", "effort_cycle_prev", "effort_cycle_wrap_back", "effort_cycle_inverse", "effort_cycle_inverse_back",
               "effort_unset_default", "effort_settle_offered", "effort_stored_is_sent", "effort_shown_is_sent")
HUNT_DB = "$P/hunt"  # the hunt's example database the scenarios run with (EUKHE_HUNT_DB): empty


def run_laws(argv: list[str], out: list[str]) -> int:
    """``laws`` refused before any law runs: an area with no laws, words that are no verb, no such
    law; ``laws pin LAW`` of a seed law pins nothing from an empty database: exit 1 (nothing new)."""
    if argv[1] == "--area" and argv[2] == "effort":  # the laws of S10's table run, and hold, one line each as it ends
        out.extend(f"effort {number}/{len(EFFORT_LAWS)} {name} pass" for number, name in enumerate(EFFORT_LAWS, 1))
        out.append(f"pass {len(EFFORT_LAWS)}")
        if "--report" in argv:
            out.append(f"review report written to {flag(argv, '--laws-dir')}/report/index.html")
        return OK
    if argv[1] == "--area":
        raise Failed(USAGE, f"eukhe laws: no laws in area {argv[2]!r}")
    if len(argv) != 3 or argv[1] != "pin":
        raise Failed(USAGE, f"eukhe laws: unknown words {' '.join(argv[1:])!r}: the only verb is `eukhe laws pin LAW`")
    if not any(argv[2] in (name, f"{area}/{name}") for area, name in SEED_LAWS):
        raise Failed(USAGE, f"eukhe laws: no law {argv[2]!r} (name or area/name)")
    out.append(f"{argv[2]}: no new failing example in {HUNT_DB}")
    return FAULT


def ask_refused(argv: list[str]) -> None:
    """What ``ask`` refuses before it reads anything: a --timeout that is no number, an empty
    text, a --timeout that is no finite number above 0."""
    text = flag(argv, "--timeout") or "120"
    try:
        seconds = float(text)
    except ValueError:
        raise Failed(USAGE, f"eukhe ask: argument --timeout: invalid float value: {text!r}") from None
    if not argv[1].strip():
        raise Failed(USAGE, "eukhe ask: the text is empty")
    if not 0 < seconds < float("inf"):
        raise Failed(USAGE, f"eukhe ask: --timeout must be a positive number of seconds, and finite, not {seconds}")


def run_inference(argv: list[str], stdin: str | None, out: list[str], bundle: str | None = None) -> None:
    """The inference commands as far as they go without a request (inference.md S6). ``stdin``
    None: Ctrl-C is pressed as ``login`` reads the key (nothing is written)."""
    head = argv[0]
    if head == "ask":
        ask_refused(argv)
        raise ValueError("a request with no models.json is not modelled")
    if head == "quirks":
        if not argv[2].strip():
            raise Failed(USAGE, "eukhe quirks query: the model id is empty")
        api = flag(argv, "--api")
        if api and api not in WIRE_APIS:
            raise Failed(USAGE, f"eukhe quirks query: --api {api!r} is not a wire API")
        out.extend(quirks_query(argv))
        return
    if head == "model":
        if "--bundled" not in argv:
            out.extend(model_list(None))
            return
        bundled = str(flag(argv, "--bundled"))
        if bundle is not None and bundle.endswith("\udcff"):  # its text, then a byte that is no UTF-8
            raise Failed(USAGE, f"eukhe model list: --bundled {bundled}: not UTF-8 at byte {len(bundle[:-1].encode('utf-8'))}")
        if bundled in DIRS:
            raise Failed(USAGE, f"eukhe model list: --bundled {bundled}: is a directory, not a models.bundled.json file")
        if bundled != BUNDLE or bundle is None:
            raise Failed(USAGE, f"eukhe model list: --bundled {bundled}: no such file")
        models = bundle_models(bundle)
        if models is None:
            raise Failed(USAGE, f"eukhe model list: --bundled {bundled}: not a catalog")
        out.extend(model_list(models))
        return
    if head == "provider" and len(argv) == 2:
        out.extend(provider_caps(None))
        return
    provider = argv[2] if head == "provider" else argv[1]
    if provider not in PROVIDERS:
        said = "; nothing written" if head == "login" else ""
        raise Failed(USAGE, f"eukhe {' '.join(argv[:2]) if head == 'provider' else head}: unknown provider {provider!r}{said}")
    if head == "provider":
        out.extend(provider_caps(provider))
        return
    if stdin is None:
        raise Failed(INTERRUPTED, "eukhe: interrupted")
    key = stdin.split("\n", 1)[0].strip("\r\n")
    if "\udcff" in key:  # a byte that is no UTF-8 (0xff) in the first line: the key is not text
        raise Failed(USAGE, f"eukhe login: the key is not UTF-8 text (at byte {len(key[: key.index(chr(0xDCFF))].encode('utf-8'))}); nothing written")
    if not key.strip():
        raise Failed(USAGE, f"eukhe login: the key is empty; nothing written for {provider}")
    if any(c.isspace() or not c.isprintable() for c in key):
        raise Failed(USAGE, "eukhe login: the key holds spaces or control characters (a key is one word); nothing written")
    out.append(f"the key of {provider} is stored in $A/auth.json")


# -- eukhe ask: one streamed reply (inference.md S6 wire APIs, S6.5 the guard, S6.10 refusals) --------

# The wire APIs' own stop value of a refusal, which the error line names: OpenAI chat completions
# has no refusal finish reason (the refusal is a delta field; the choice finishes with "stop"),
# Anthropic Messages stops with stop_reason "refusal".
REFUSAL_STOP = {"openai-completions": "stop", "anthropic-messages": "refusal"}
# Where each wire API's request goes, after the provider's base URL ($U in a transcript)
ENDPOINT = {"openai-completions": "/chat/completions", "anthropic-messages": "/v1/messages"}


def ask_model(world: World, argv: list[str], custom: dict[str, dict[str, object]]) -> tuple[str, str, str]:
    """(provider, model id, thinking level) of an ask, as the README's ask row and S6 "models.json
    and the saved default model" resolve them, or why there is none: the provider is --provider
    (no scenario sets defaultProvider); the model --model, else (defaultModel is of
    defaultProvider only) the provider's first model (the rulebook's provider defaults name
    built-in providers' models only); the key models.json's apiKey, else auth.json (no scenario
    logs in to the providers it asks), else <PROVIDER>_API_KEY (the bridge runs with none).
    A provider of models.json takes any model id; a built-in one only its catalog's."""
    provider = flag(argv, "--provider") or ""
    if not provider:
        raise Failed(USAGE, "eukhe ask: no provider: pass --provider or set defaultProvider")
    listed = [m.id for m in compiled_catalog() if m.provider == provider]
    if provider in custom:
        listed = [str(m["id"]) for m in custom[provider].get("models", [])]  # type: ignore[attr-defined]
    elif not listed:
        raise Failed(USAGE, f"eukhe ask: unknown provider {provider!r}")
    model_id = flag(argv, "--model") or (listed[0] if listed else "")
    if not model_id:
        raise Failed(USAGE, f"eukhe ask: provider {provider} lists no model: pass --model")
    if provider not in custom and model_id not in listed:
        raise Failed(USAGE, f"eukhe ask: provider {provider} has no model {model_id!r} (models: {', '.join(listed)})")
    if provider not in custom:
        variable = provider.upper().replace("-", "_") + "_API_KEY"
        raise Failed(FAULT, f"eukhe ask: provider {provider} has no credentials (auth.json, or {variable}); run `eukhe login {provider}`")
    level = flag(argv, "--thinking") or AGENT_LEVEL  # defaultThinkingLevel's default: no scenario sets it
    if level not in LEVELS:
        raise Failed(USAGE, f"eukhe ask: --thinking: unknown thinking level {level!r} (levels: {', '.join(LEVELS)})")
    return provider, model_id, level


RETRYABLE = (408, 409, 429, 529)  # and every 5xx (inference.md S6, the retry of a wire request)
MAX_WAIT = 60  # seconds: a provider that asks for a longer wait is not retried


def global_value(world: World, cvar: str) -> Value:
    """A setting as ``ask`` reads it: of no agent, from the agent dir's global layers (its project
    is the working directory, which has no .eukhe)."""
    conf = config(world)
    return sourced(Config(tuple(layer for layer in conf.layers if not layer.project), (), (), ()), (), cvar)[0]


def retried(world: World, provider: str, replies: list[dict[str, object]], err: list[str]) -> dict[str, object]:
    """The reply ``ask`` ends with: an HTTP error that is retryable (408, 409, 429, 5xx, 529),
    before any of the reply arrived, is sent again at most retry.maxRetries times while
    retry.enabled is on, each retry one line on stderr ``eukhe ask: retry N/MAX: PROVIDER: HTTP
    STATUS; waiting W s`` (W: the provider's Retry-After); a Retry-After past MAX_WAIT fails at once."""
    retries = global_value(world, "retry.maxRetries") if global_value(world, "retry.enabled") is True else 0
    assert isinstance(retries, int)
    for attempt, reply in enumerate(replies):
        status = reply.get("fail")
        if not isinstance(status, int) or not (status in RETRYABLE or 500 <= status <= 599) or attempt >= retries:
            return reply
        wait = int(dict(reply.get("headers", {}))["Retry-After"])  # type: ignore[call-overload]
        if wait > MAX_WAIT:
            body = str(reply.get("body", "")) or "(empty body)"
            raise Failed(FAULT, f"eukhe ask: {provider}: HTTP {status}: {body}; the provider asks to wait {wait} s, more than the "
                                f"{MAX_WAIT} s a retry waits: not retried")
        err.append(f"eukhe ask: retry {attempt + 1}/{retries}: {provider}: HTTP {status}; waiting {wait:.1f} s")
    raise ValueError("a retry with no reply scripted for it is not modelled")


def run_ask(world: World, argv: list[str], models: str, replies: list[dict[str, object]], out: list[str], err: list[str]) -> int:
    """``ask TEXT``: the scenario's models.json names the provider (its baseUrl the loopback
    server's, $U) and the server answers with the event's scripted reply. Printed, as it streams:
    the thinking only with --show-thinking (``[thinking] `` before it, ``[answer] `` on a new line
    before the text after it), the text, each tool call on a line of its own (``[tool call] NAME
    ARGS``), a refusal's text as ``[refused] TEXT`` (on a new line after what came before it),
    and at the stop a newline, then ``[stop: REASON]`` for a stop that is neither stop nor a
    refusal. --usage prints the reply's token counts on stderr. A refusal exits 3 with one line
    naming the API's stop value; a fault of the provider once the reply began (an HTTP error
    status that is not retried, an error event or a stream without its end event after text, so
    none is retried) ends the line under way and is one line naming the provider, exit 1."""
    world.models_json = models
    ask_refused(argv)
    custom = json.loads(models)["providers"]
    provider, _model_id, _level = ask_model(world, argv, custom)
    api = str(custom[provider].get("api", "openai-completions"))
    reply = retried(world, provider, replies, err)
    if "fail" in reply:
        body = str(reply.get("body", ""))
        raise Failed(FAULT, f"eukhe ask: {provider}: HTTP {reply['fail']}: {body or '(empty body)'}")
    show_thinking = "--show-thinking" in argv
    printed, thinking, text = "", False, False
    fault = None
    cut = repeating(reply)
    for number, part in enumerate(list(reply.get("parts", []))):  # type: ignore[call-overload]
        if cut is not None and number == cut[0]:  # the guard reads a delta before it is shown: the cut one is not
            out.extend((printed + "\n").splitlines())
            noun = "line" if cut[1] == 1 else "lines"
            raise Failed(FAULT, f"eukhe ask: {provider}: stream_repeating: the stream repeats a cycle of {cut[1]} {noun}; last line: {cut[2]!r}")
        if "thinking" in part and show_thinking:
            printed += ("" if thinking else "[thinking] ") + part["thinking"]
            thinking = True
        elif "text" in part:
            printed += ("\n[answer] " if thinking and not text else "") + part["text"]
            text = True
        elif "call" in part:
            printed += f"\n[tool call] {part['call']['name']} {part['call']['arguments']}"
        elif "refusal" in part and (part["refusal"] or api != "openai-completions"):  # OpenAI chat: an empty delta.refusal is none
            printed += ("\n" if text or thinking else "") + f"[refused] {part['refusal'] or '(the provider gave no reason)'}"
        elif "error" in part:
            fault = f"error event {part['error']['kind']}"
            break
    if fault is None and reply.get("end", True) is False:
        fault = "the stream ended before its end event (connection closed mid-reply)"
    if fault is not None:
        out.extend((printed + ("\n" if text or thinking else "")).splitlines())
        raise Failed(FAULT, f"eukhe ask: {provider}: {fault}")
    if "--usage" in argv:
        usage = {"input": 10, "output": 5, "cache_read": 0, "cache_write": 0, **reply.get("usage", {})}  # type: ignore[dict-item]
        err.append(f"tokens: input {usage['input']}, output {usage['output']}, cache read {usage['cache_read']}, cache write {usage['cache_write']}")
    refusals = [str(part["refusal"]) for part in reply.get("parts", []) if "refusal" in part]  # type: ignore[attr-defined]
    refused = bool(refusals) and (api != "openai-completions" or any(refusals))
    stop = "stop" if refusals and api == "openai-completions" else str(reply.get("stop", "stop"))  # OpenAI chat: finish_reason stop
    printed += "\n" + ("" if refused or stop == "stop" else f"[stop: {stop}]\n")
    out.extend(printed.splitlines())
    if refused:
        raise Failed(3, f"eukhe ask: {provider}: the model refused to answer (stop {REFUSAL_STOP[api]})")
    return OK


STREAM_REPEAT_LIMIT = 64  # S6.5: retry.provider.streamRepeatLimit's default, the guard's window (no scenario sets it)


def repeating(reply: dict[str, object]) -> tuple[int, int, str] | None:
    """S6.5's repetition guard over a reply's text (``bend.infer``'s compiled step): each complete
    non-blank line is a chunk, each distinct chunk an id; the first cut gives the part (a scripted
    part is one delta) in which it falls, the period and the last line; None when nothing is cut.
    The cut is retryable for the harness (H4.7); ``ask`` sends one request: it fails with the
    guard's message. Only replies whose text parts alone hold lines are modelled (thoughts are
    chunks too, of their own block)."""
    ids: list[int] = []
    seen: dict[str, int] = {}
    partial = ""
    parts = list(reply.get("parts", []))  # type: ignore[call-overload]
    for number, part in enumerate(parts):
        if "thinking" in part and "\n" in str(part["thinking"]):
            raise ValueError("thoughts of several lines are not modelled by the guard here")
        if "text" not in part:
            continue
        pieces = (partial + str(part["text"])).split("\n")
        partial = pieces.pop()
        for line in pieces:
            if len(line.encode("utf-8")) > 4096:
                raise ValueError("a line past the guard's chunk size is not modelled")
            if line.strip():
                ids.append(seen.setdefault(line, len(seen)))
                found = infer.guard_run(STREAM_REPEAT_LIMIT, tuple(ids))
                if found is not None:
                    return number, found[1], line
    return None


# -- eukhe chat: the client of the chat's agent (memory.md "Use", S6; the command's help) ------------

CHAT_COMMANDS = ("/memory", "/memory view", "/memory model", "/agent", "/help", "/quit")
AGENT_LEVEL = "medium"  # the level the chat's session opens at with no model: defaultThinkingLevel's default (no scenario sets it)


def chat_levels(model_id: str, custom: dict[str, dict[str, object]], level: str, opened: tuple[str | None, str] = (None, "medium")
                ) -> tuple[list[str], str]:
    """The rows the agent shows as the client sets the chat's model and level (S10 session 1, 2),
    and the level the session shows after: the session opens with the model and level the last
    chat left in it (``opened``; a new session: no model, AGENT_LEVEL); ``/model``, sent when the
    model differs from the one it opened with, is a row ``[note] model lab/ID`` and re-settles the
    stored level against the model's offered levels (effort_clamp); ``/effort LEVEL``, sent when
    the level asked differs from the one the session showed at open, sets it clamped; each change
    of the shown level is a row ``[effort] thinking level BEFORE -> AFTER``."""
    reasoning = any(m["id"] == model_id and m.get("reasoning") for m in custom["lab"]["models"])  # type: ignore[attr-defined]
    offer = efforts.offered(efforts.Model(bool(reasoning), None))
    rows, (before, at_open) = [], opened
    shown = at_open
    if before != model_id:
        rows.append(f"[note] model lab/{model_id}")
        shown = efforts.clamp(offer, at_open)
        if shown != at_open:
            rows.append(f"[effort] thinking level {at_open} -> {shown}")
    if level != at_open and efforts.clamp(offer, level) != shown:
        rows.append(f"[effort] thinking level {shown} -> {efforts.clamp(offer, level)}")
        shown = efforts.clamp(offer, level)
    return rows, shown


def chat_refusal(api: str, reply: dict[str, object]) -> str | None:
    refusals = [str(part["refusal"]) for part in reply.get("parts", []) if "refusal" in part]  # type: ignore[attr-defined]
    if not refusals or (api == "openai-completions" and not any(refusals)):
        return None
    return "".join(refusals) or "(the provider gave no reason)"


def chat_date_call(calls: list[dict[str, str]], parts: int) -> list[str]:
    """A turn's reply that is one call of the chat's ``date`` tool (memory.md: the agent's tools,
    zoom and date) of a message past the chat's: the rows ``[tool] date ARGS`` and ``[result]
    error: no message N: the chat has M``, where the chat holds the turn's text and the call (a
    fresh chat: M is 2)."""
    if len(calls) != 1 or parts != 1 or calls[0]["name"] != "date":
        raise ValueError("a reply other than one call of the date tool, alone, is not modelled")
    asked = json.loads(calls[0]["arguments"])["id"]
    held = 2
    if asked <= held:
        raise ValueError("a date of a message the chat holds is not modelled")
    return [f"[tool] date {calls[0]['arguments']}", f"[result] error: no message {asked}: the chat has {held}"]


def chat_task_call(calls: list[dict[str, str]], parts: int, failing: dict[str, object], provider: str) -> list[str]:
    """A turn's reply that is one call of the ``task`` tool (rules 57, 58: a subagent on the task,
    in a process of its own, whose report is the tool's result), alone, where the subagent's one
    request fails (the next reply, an HTTP fault the provider does not retry): the rows ``[tool]
    task ARGS``, the spawner's ``[subagent] NAME starts (pid N): TASK`` (its process id cut), the
    subagent's failed turn as the chat shows it, ``[NAME] failed: PROVIDER: HTTP CODE: BODY``, and
    the tool's result, the typed error ``subagent_failed`` naming the child's reason and text. A
    subagent that failed makes the chat's exit status 1, as a failed turn does."""
    if len(calls) != 1 or parts != 1:
        raise ValueError("a reply other than one call of the task tool, alone, is not modelled")
    arguments = json.loads(calls[0]["arguments"])
    name, task = str(arguments["name"]), str(arguments["task"])
    if set(failing) - {"fail", "body"} or failing.get("fail") in RETRYABLE or not failing.get("body"):
        raise ValueError("a subagent's reply other than one HTTP fault with a body, not retried, is not modelled")
    said = f"{provider}: HTTP {failing['fail']}: {failing['body']}"
    return [f"[tool] task {calls[0]['arguments']}", f"[subagent] {name} starts (pid N): {task.splitlines()[0][:200]}",
            f"[{name}] failed: {said}", f"[result] subagent_failed: subagent {name} ended without a report (failed): {said}"]


def chat_agent_killed(reply: dict[str, object], after: str) -> list[str]:
    """A turn whose agent process is killed (SIGKILL: it says nothing more) once the chat shows
    ``after``, the last text part of the reply before its ``wait`` (the loopback server holds the
    rest, which is never sent): the chat shows the text parts before the wait as they streamed,
    and, the input ended, waits for the turn; the agent's connection ends instead, so the line
    under way ends and the chat says on stderr that the chat's agent ended, exit 1 (the
    command's help: "when the agent cannot be reached or ended")."""
    parts: list[dict[str, object]] = list(reply.get("parts", []))  # type: ignore[call-overload]
    if set(reply) - {"parts"} or any(set(part) - {"text", "wait"} for part in parts) or not any("wait" in part for part in parts):
        raise ValueError("a killed turn's reply is modelled as text parts and a wait")
    before = [str(part["text"]) for part in parts[: [("wait" in part) for part in parts].index(True)]]
    if not before or after not in before[-1] or after in "".join(before)[: -len(before[-1])] or "".join(before).endswith("\n"):
        raise ValueError("a kill after the last text before the wait, shown once, not at a line's end, is modelled")
    return "".join(before).split("\n")


def chat_agent_during(replies: list[dict[str, object]], late: list[str | None], hold: str | None) -> list[str]:
    """``/agent NAME TASK`` typed while a turn runs (once its reply showed its first text, the rest
    of the reply held by the loopback server until the chat shows the subagent's report, the
    event's ``hold``): the command's answer, a row ``[agent] subagent NAME starts; its report comes
    as [NAME] ...`` (no prompt while a turn runs); the spawner's row ``[subagent] NAME starts (pid
    N): TASK`` (its process id cut); the subagent's one reply, answered, is its report: no row of
    its turn, then the report's row ``[subagent] [NAME] REPORT`` (rule 58); the report joins the
    run under way after its answer (no row: a work row of main), so the generation goes on with
    the next reply, which streams on a line of its own; then the prompt. The replies: the turn's
    (text, then the wait, last), the subagent's (text), the one after the report joined (text)."""
    if len(late) != 1 or late[0] is None:
        raise ValueError("one /agent line typed while a turn runs is modelled")
    name, _, task = late[0].strip().removeprefix("/agent ").partition(" ")
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]{0,63}", name) or not task.strip():
        raise ValueError("an /agent line the agent refuses is not modelled while a turn runs")
    first, report, answer = replies.pop(0), replies.pop(0), replies.pop(0)
    for reply in (first, report, answer):
        if set(reply) - {"parts"} or any(set(part) - {"text", "wait"} for part in reply["parts"]):  # type: ignore[attr-defined]
            raise ValueError("the replies of a turn that starts a subagent are modelled as text only")
    parts: list[dict[str, object]] = list(first["parts"])  # type: ignore[call-overload]
    if not parts or "wait" not in parts[-1] or any("wait" in part for part in parts[:-1]) or not parts[0].get("text"):
        raise ValueError("the turn's reply is modelled as text, then the wait, last")
    said = "".join(str(part.get("text", "")) for part in report["parts"])  # type: ignore[attr-defined]
    row = f"[subagent] [{name}] {said}"
    if "\n" in said or hold != row:
        raise ValueError("a report of one line, which the turn's reply is held for, is modelled")
    before = "".join(str(part["text"]) for part in parts[:-1])
    text = "".join(str(part.get("text", "")) for part in answer["parts"])  # type: ignore[attr-defined]
    return [*before.split("\n"), f"[agent] subagent {name} starts; its report comes as [{name}] ...",
            f"[subagent] {name} starts (pid N): {task.strip().splitlines()[0][:200]}", row, *text.split("\n")]


PROTOCOL_LINE_LIMIT = 64 * 1024 * 1024  # the bytes of a line the agent reads (its protocol's limit)
LONG_LINE = "$LONG"  # a scenario's line standing for PROTOCOL_LINE_LIMIT + 1 letters (the bridge types them)
QUEUED = "[queued: joins the running call]"  # the row of a line typed while a turn runs (the command's help: it joins the turn)


def run_chat(world: World, argv: list[str], models: str, replies: list[dict[str, object]], lines: list[str | None],
             out: list[str], err: list[str], steer: bool = False, late: list[str | None] | None = None, kill: str | None = None,
             hold: str | None = None) -> int:
    """``chat`` with standard input a file of lines: ``ask``'s checks of the flags and the model
    first (no agent is started when they fail), then the chat of $A/chat/main through its agent:
    a line naming the model and the chat, the agent's rows (its compactor has no model: no
    scenario sets memory.model; the model set; the level set), the prompt (the status bar ``[mem
    N/128K]`` on a line, then ``> ``); each line then: ``/help`` the commands; ``/memory`` the
    status (mem, messages, nodes, view lines) and the chat dir; ``/memory view`` the view;
    ``/memory model`` the memory role; an unknown command or ``/agent`` without a name and a task
    is one line on stderr; a line that is not UTF-8 is one line on stderr, and no prompt follows;
    so is a line whose request would be longer than the agent reads (``LONG_LINE``), nothing sent;
    a blank line is a prompt; ``/quit`` leaves; a text is a turn (the scenarios' last line): its
    reply streams (thoughts after ``[thinking] ``, the text on a line of its own), a refusal is
    a ``[refused] TEXT`` row, a fault one line on stderr (exit 1); a prompt follows. The end of
    input leaves once the turn under way ended. A chat whose agent cannot be reached ($A/run, where
    its socket goes, a regular file) is one line naming the agent dir, exit 1, before any prompt;
    so is one whose agent ends before serving (the chat's session log corrupt; or the chat's
    session's dir there with no log, which the chat takes as made by another client meanwhile,
    and its agent then finds no session: exit 2), naming its exit status and log. When another
    process owns the chat's memory and does not answer on its lock socket, the agent claims it in vain: the chat names the model and the chat, the agent shows
    the error as its memory row, the model and level rows follow, and the chat ends with the
    error (exit 1) before any prompt.
    A later chat of the same agent dir opens the chat's session as the last one left it (its model
    and level: ``chat_levels``); its memory holds the earlier turns, which no modelled line shows
    (``/memory`` and ``/memory view`` there are not modelled). An agent dir so deep that its
    socket's path is longer than a Unix socket address holds (the event's ``deep``) changes nothing.
    With ``steer`` (the event's), the line after a turn's is typed while that turn runs: it is
    queued (a ``QUEUED`` row), the reply streams, the line joins the run after its answer (a
    ``[joined] TEXT`` row, memory.md rule 46) and the generation goes on with it: the next reply
    streams, then the prompt. With ``late`` (the event's: lines typed once the turn's reply shows
    its first text), each line typed while the turn runs: ``/help`` shows the commands, a blank
    line nothing (no prompt while a turn runs), a text is queued and joins the run as above.
    A turn's reply that calls the ``task`` tool shows its subagent's rows (``chat_task_call``);
    a subagent that failed makes the exit status 1. With ``kill`` (the event's: a text), the
    chat's agent process is killed once the chat shows that text of the turn's reply (its
    connection ends mid-turn): ``chat_agent_killed``; killed as the chat shows a command's rows
    (``/help``), the request for the prompt that follows them meets the connection's end: the
    same line on stderr, exit 1, the lines after unread. A ``late`` line ``/agent NAME TASK``, typed
    while the turn runs, starts a subagent in the background (``chat_agent_during``)."""
    world.models_json = models
    prog = "eukhe chat"
    custom = json.loads(models)["providers"]
    try:
        provider, model_id, level = ask_model(world, ["ask", *argv[1:]], custom)
    except Failed as failed:
        raise Failed(failed.status, prog + failed.line[len("eukhe ask"):]) from None
    level = flag(argv, "--thinking") or AGENT_LEVEL
    if world.files["run"].state == "text":  # the agent's socket is under $A/run: a regular file there, no agent is reached
        raise Failed(FAULT, f"{prog}: cannot reach the chat's agent (agent dir $A): Not a directory")
    if world.files["chat session"].state == "dir" and world.chat_model is None:  # the chat's session's dir, with no log: the chat
        # takes it as made by another client meanwhile; the agent it starts finds no session there and ends before serving (bad input)
        raise Failed(FAULT, f"{prog}: the agent of session {CHAT} ended (exit {USAGE}) before serving: see $A/run/agent/{CHAT}-....log")
    if world.chat_corrupt:  # the agent the chat starts cannot read its session: it ends before serving, a fault
        raise Failed(FAULT, f"{prog}: the agent of session {CHAT} ended (exit {FAULT}) before serving: see $A/run/agent/{CHAT}-....log")
    api = str(custom[provider].get("api", "openai-completions"))
    bar = "[mem 0K/128K]"
    if world.chat_model is not None and (any(line in ("/memory", "/memory view") for line in lines)
                                         or any("call" in part for reply in replies for part in reply.get("parts", []))):  # type: ignore[attr-defined]
        raise ValueError("the memory of a chat after an earlier chat's turns is not modelled")
    rows, world.chat_level = chat_levels(model_id, custom, level, (world.chat_model, world.chat_level or AGENT_LEVEL))
    world.chat_model = model_id
    if world.chat_owned:  # the agent waits its claim out (memory.md rule 7) and answers the first /memory with the error
        busy = "$A/chat/main: the chat's owner holds its lock but does not answer on lock"
        out.extend([f"eukhe chat: {provider}/{model_id}, chat $A/chat/main; /help for commands", f"memory: {busy}", *rows])
        raise Failed(FAULT, f"{prog}: {busy}")
    printed = [f"eukhe chat: {provider}/{model_id}, chat $A/chat/main; /help for commands",
               "memory: no compactor: MemoryModelUnset", *rows, bar]
    status = OK
    prompt = "> "
    thinking = sourced(config(world), (), "memory.thinking")[0]
    typed = iter(lines)
    for line in typed:
        said = None if line is None else line.strip()
        shown: list[str] = []
        if said is None:
            err.append(f"{prog}: the line is not UTF-8 (byte 0); nothing was sent")
            continue
        if line == LONG_LINE:  # a text whose request would be past the line the agent reads: refused unsent, no prompt follows
            err.append(f"{prog}: the request is longer than the agent reads ({PROTOCOL_LINE_LIMIT} bytes): nothing was sent")
            continue
        if said in ("/quit", "/exit"):
            break
        if said == "/help":
            shown = ["commands: " + ", ".join(CHAT_COMMANDS)]
        elif said == "/memory":
            shown = ["mem 0K/128K  messages 0  nodes 0  view lines 0", "chat $A/chat/main"]
        elif said == "/memory view":
            shown = ["<chat>", "</chat>"]
        elif said == "/memory model":
            shown = [f"memory.model (unset: the auxiliary model)  memory.thinking {thinking}"]
        elif said == "/agent":
            err.append(f"{prog}: /agent NAME TASK: name the subagent and give it a task")
        elif said.startswith("/"):
            err.append(f"{prog}: unknown command {said.split()[0]!r} (commands: {', '.join(CHAT_COMMANDS)})")
        elif said and kill is not None:  # the chat's agent ends mid-turn: the chat ends with it
            if any(True for _ in typed):
                raise ValueError("lines after the turn whose agent is killed are not modelled")
            shown = chat_agent_killed(replies.pop(0), kill)
            printed.append(prompt + shown[0])
            printed.extend(shown[1:])
            err.append(f"{prog}: the chat's agent ended")
            out.extend(printed)
            return FAULT
        elif said and late is not None and any(typing is not None and typing.strip().startswith("/agent ") for typing in late):
            world.chat_messages = None  # what the turn and the report log is not modelled
            shown = chat_agent_during(replies, late, hold)
        elif said and (steer or late is not None):  # lines typed while this turn runs: a text joins the run (rule 46)
            during = late if late is not None else [next(typed)]  # typed as its reply shows its first text, or at once
            during_rows: list[str] = []
            joined: list[str] = []
            for typing in during:
                if typing is None or typing.strip() in ("/help", "") or typing.strip().startswith("/"):
                    if typing != "/help" and (typing is None or typing.strip()):
                        raise ValueError("lines typed while a turn runs are modelled as /help, blank or a text")
                    during_rows += ["commands: " + ", ".join(CHAT_COMMANDS)] if typing == "/help" else []  # no prompt while a turn runs
                else:
                    during_rows.append(QUEUED)
                    joined.append(typing)
            if len(joined) != 1:
                raise ValueError("one text joining a run is modelled")
            logged = [said]  # the chat's log (rule 48): the message, each reply, the message that joined
            first, second = replies.pop(0), replies.pop(0)  # the turn's reply, then the reply that follows the joined line
            for reply in (first, second):
                if set(reply) - {"parts"} or any(set(part) - {"text", "wait"} for part in reply["parts"]):  # type: ignore[attr-defined]
                    raise ValueError("a steered turn's replies are modelled as text only")
            parts = [str(part.get("text", "\0")) for part in first["parts"]]  # type: ignore[attr-defined]
            before, after = ("".join(parts[: parts.index("\0")]), "".join(parts[parts.index("\0") + 1 :])) if "\0" in parts else ("", "".join(parts))
            answer = "".join(str(part["text"]) for part in list(second["parts"]))  # type: ignore[call-overload]
            shown = (before.split("\n") if before else []) + during_rows + after.split("\n") + [f"[joined] {joined[0]}"] + answer.split("\n")
            logged += [before + after, joined[0], answer]
            if world.chat_messages is not None:
                world.chat_messages += logged
        elif said:
            world.chat_messages = None  # what the other turns log is not modelled
            reply = replies.pop(0)
            for attempt in range(1, 4):  # the agent's retries: retry.maxRetries' default, 3 (no chat scenario sets it)
                if reply.get("fail") not in RETRYABLE:
                    break
                shown.append(f"[retry {attempt}/3: {provider}: HTTP {reply['fail']}; waiting 0.0 s]")  # Retry-After: 0
                reply = replies.pop(0)
            notes = 0
            while reply == {"parts": []} and notes < MAX_NOTES:  # an empty reply: noted (no_answer) and asked again (S6.5)
                notes += 1
                shown.append(f"[note {notes}/{MAX_NOTES}: no_answer]")
                reply = replies.pop(0)
            calls = [part["call"] for part in reply.get("parts", []) if "call" in part]  # type: ignore[attr-defined]
            if calls and calls[0]["name"] == "task":  # a subagent on a task (the ``task`` tool), whose one reply fails
                shown += chat_task_call(calls, len(reply.get("parts", [])), replies.pop(0), provider)  # type: ignore[arg-type]
                status = FAULT
                reply = replies.pop(0)
            elif calls:  # one call of the chat's date tool, alone in its reply; its result, then the next reply
                shown += chat_date_call(calls, len(reply.get("parts", [])))  # type: ignore[arg-type]
                reply = replies.pop(0)
            faults = [part["error"] for part in reply.get("parts", []) if "error" in part]  # type: ignore[attr-defined]
            if "fail" in reply:
                err.append(f"{prog}: {provider}: HTTP {reply['fail']}: {reply.get('body') or '(empty body)'}")
                status = FAULT
            elif faults:  # an error event the provider does not retry, after some text: the line under way ends, one line
                if faults[0].get("kind") != "invalid_request_error" or any(set(part) - {"text", "error"} for part in reply["parts"]):  # type: ignore[attr-defined]
                    raise ValueError("an error event other than a request the provider refused, after text, is not modelled")
                fault_parts: list[dict[str, object]] = list(reply["parts"])  # type: ignore[call-overload]
                before = "".join(str(part["text"]) for part in fault_parts[: [("error" in part) for part in fault_parts].index(True)])
                shown += before.split("\n") if before else []
                err.append(f"{prog}: {provider}: error event {faults[0]['kind']}")  # its message after the kind: cut
                status = FAULT
            else:
                refusal = chat_refusal(api, reply)
                thoughts = "".join(str(part["thinking"]) for part in reply.get("parts", []) if "thinking" in part)  # type: ignore[attr-defined]
                text = "".join(str(part["text"]) for part in reply.get("parts", []) if "text" in part)  # type: ignore[attr-defined]
                streamed = ("[thinking] " + thoughts if thoughts else "") + ("\n" if thoughts and text else "") + text
                shown += streamed.split("\n") if streamed else []
                if refusal is not None:
                    shown.append(f"[refused] {refusal}")
        if kill is not None and any(kill in row for row in shown):  # the agent killed as the chat shows a command's rows: the
            printed.extend([prompt + shown[0], *shown[1:]])  # prompt's request after them meets the connection's end
            err.append(f"{prog}: the chat's agent ended")
            out.extend(printed)
            return FAULT
        printed.append(prompt + (shown[0] if shown else bar))
        printed.extend(shown[1:] + [bar] if shown else [])
    printed.append(prompt)
    out.extend(printed)
    return status


# inference.md S6.1: the shipped rulebook is data (impl/eukhe/inference/rulebook.json), read here
# as data and compiled by bend.infer; its rules hold "set" as an object, not as pairs.
RULEBOOK = Path(__file__).resolve().parent.parent / "impl" / "eukhe" / "inference" / "rulebook.json"


@cache
def shipped_book() -> infer.Compiled:
    data = json.loads(RULEBOOK.read_text(encoding="utf-8"))
    rules = [{**rule, "set": list(rule["set"].items())} for rule in data["rules"]]
    compiled = infer.compile_book(infer.book_of({"families": data["families"], "hosts": data["hosts"], "rules": rules}))
    if isinstance(compiled, infer.QuirksError):
        raise ValueError(f"the shipped rulebook does not compile: {compiled.text()}")
    return compiled


def json_text(value: object) -> str:
    """A directive's value as JSON text: a bool, a number, a string (non-ASCII kept), the four
    budgets as a list, a thinking ladder as an object (level -> wire string or null)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, tuple) and all(isinstance(v, tuple) for v in value):
        return "{" + ", ".join(f"{json_text(level)}: {json_text(wire)}" for level, wire in value) + "}"
    if isinstance(value, tuple):
        return "[" + ", ".join(json_text(v) for v in value) + "]"
    raise ValueError(f"no JSON form for {value!r}")


def quirks_query(argv: list[str]) -> list[str]:
    """``quirks query MODEL``: the family (or the families that overlap), the wire host, the
    capabilities host, then each directive's answer and the layer it came from (S6.1 lookup).
    A model of the built-in catalog (--provider and the id name one) gives the wire API when
    --api does not, and its compat answers first (the layer ``compat``)."""
    model_id = argv[2]
    provider = flag(argv, "--provider") or ""
    known = next((m for m in compiled_catalog() if (m.provider, m.id) == (provider, model_id)), None) if provider else None
    api = flag(argv, "--api") or (known.api if known is not None else "")
    compat = known.compat if known is not None else ()
    query = infer.Query(model_id, flag(argv, "--name"), provider, api, flag(argv, "--base-url") or "", compat)
    book = shipped_book()
    family = infer.family_of(book.families, query.model_id, query.name)
    shown = family.family or ("overlap: " + ", ".join(family.overlap) if family.overlap else "-")
    lines = [f"family\t{shown}"]
    for label, scope in (("host", infer.WIRE), ("capabilities host", infer.CAPS)):
        lines.append(f"{label}\t{infer.host_of(book.hosts, query.api, query.provider, query.base_url, scope) or '-'}")
    for directive, _ in infer.DIRECTIVES:
        answer = infer.lookup(book, query, directive)
        lines.append(f"{directive}\t{json_text(answer.value)}\t{answer.layer}" if answer.known else f"{directive}\tunknown\t-")
    return lines


# inference.md S6 "the built-in model catalog": with no bundle and no models.json (no scenario
# writes either) the catalog is the compiled one, catalog.json, read here as data.
INFERENCE_CATALOG = RULEBOOK.parent / "catalog.json"


@dataclass(frozen=True)
class CatalogModel:
    provider: str
    id: str
    name: str
    api: str
    base_url: str
    reasoning: bool
    level_map: tuple[tuple[str, str | None], ...] | None
    compat: tuple[tuple[str, object], ...] = ()


# model.compat keys that answer a directive explicitly (S6.1 "explicit model.compat beats both";
# the seed names these two, S6.7 and the adaptive_thinking quirk); other keys answer none.
COMPAT_DIRECTIVES = (("forceAdaptiveThinking", "adaptive_thinking"), ("supportsPromptProgress", "prompt_progress"))


def compat_answers(raw: dict[str, object] | None) -> tuple[tuple[str, object], ...]:
    answers = []
    for key, directive in COMPAT_DIRECTIVES:
        if raw is not None and key in raw:
            value, problem = infer.canonical(directive, raw[key])
            if problem is not None:
                raise ValueError(f"a catalog compat {key} of the wrong type is not modelled")
            answers.append((directive, value))
    return tuple(answers)


BUNDLE = "$P/bundle.json"  # the one bundle a scenario writes: an event's ``bundle`` text
MODEL_KEYS = {"id", "name", "reasoning", "input", "cost", "contextWindow", "maxTokens", "thinkingLevelMap", "compat", "featured",
              "headers"}


def bundle_models(text: str) -> tuple[CatalogModel, ...] | None:
    """A models.bundled.json's models, or None when it is not a catalog: not JSON, not an object
    of ``version`` 1 and ``providers``, a provider whose api is no wire API, a model that repeats
    a provider's key (the scenarios' bundles are otherwise of the catalog's form)."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict) or set(data) != {"version", "providers"} or data["version"] != 1:
        return None
    return catalog_models(data)


def catalog_models(data: dict[str, object]) -> tuple[CatalogModel, ...] | None:
    models: list[CatalogModel] = []
    for p in data["providers"]:  # type: ignore[attr-defined]
        if p["api"] not in WIRE_APIS:
            return None
        for m in p["models"]:
            if not set(m) <= MODEL_KEYS:
                raise ValueError("a bundle of another form is not modelled")
            raw = m.get("thinkingLevelMap")
            level_map = None if raw is None else tuple((level, raw[level]) for level in LEVELS if level in raw)
            name = m["name"] if m.get("name") is not None else m["id"]
            if any((c.provider, c.id) == (p["id"], m["id"]) for c in models):
                return None
            models.append(CatalogModel(p["id"], m["id"], name, p["api"], p["baseUrl"], bool(m.get("reasoning", False)), level_map,
                                       compat_answers(m.get("compat"))))
    return tuple(models)


@cache
def compiled_catalog() -> tuple[CatalogModel, ...]:
    models = catalog_models(json.loads(INFERENCE_CATALOG.read_text(encoding="utf-8")))
    if models is None:
        raise ValueError("the compiled catalog does not parse")
    return models


def catalog_query(m: CatalogModel) -> infer.Query:
    """The rulebook's key of a catalog model as the catalog views build it: no compat."""
    return infer.Query(m.id, m.name, m.provider, m.api, m.base_url)


def provider_caps(provider: str | None, custom: dict[str, infer.Query] | None = None) -> list[str]:
    """``provider caps [PROVIDER]``: each provider (sorted) with the dialect of each of the eight
    capabilities (S6.7), asked of its first catalog model, or for a provider of models.json
    (``custom``) of the provider itself (its api and base URL, no model); a false or absent one is
    unsupported."""
    firsts: dict[str, infer.Query] = {}
    for m in compiled_catalog():
        firsts.setdefault(m.provider, catalog_query(m))
    firsts.update(custom or {})
    book = shipped_book()
    lines = []
    for name in [provider] if provider is not None else sorted(firsts):
        query = firsts[name]
        dialects = []
        for capability in infer.CAPABILITIES:
            answer = infer.lookup(book, query, capability)
            dialects.append(f"{capability}={answer.value if answer.known and isinstance(answer.value, str) else 'unsupported'}")
        lines.append(name + "\t" + " ".join(dialects))
    return lines


def entry_of(m: CatalogModel) -> unions.Entry:
    optional = () if m.level_map is None else (("thinkingLevelMap", m.level_map),)
    return unions.Entry(m.provider, m.id, m.api, m.base_url, (("name", m.name), ("reasoning", m.reasoning)), optional)


def model_list(bundled: tuple[CatalogModel, ...] | None) -> list[str]:
    """``model list [--bundled FILE]``: every model of the catalog (the union of the bundle and the
    compiled catalog, ``bend.catalog_union``) with its api, name, offered thinking levels (S6.9:
    the explicit map, else the rulebook's ladder, over thinking_defaults) and source."""
    book = shipped_book()
    table = json.loads(RULEBOOK.read_text(encoding="utf-8"))["thinking_defaults"]
    defaults = infer.ThinkingDefaults(tuple(table["reasoning"]), tuple(table["plain"]))
    compiled = compiled_catalog()
    union = unions.union(None if bundled is None else tuple(entry_of(m) for m in bundled), tuple(entry_of(m) for m in compiled))
    keys = set() if bundled is None else {(m.provider, m.id) for m in bundled}
    lines = []
    for entry in union:
        data = dict(entry.data)
        present, level_map = unions.field_of(entry, "thinkingLevelMap")
        m = CatalogModel(entry.provider, entry.id, str(data["name"]), entry.api, entry.base_url, bool(data["reasoning"]),
                         level_map if present else None)  # type: ignore[arg-type]
        source = "bundled" if entry.key in keys else "compiled"
        rule = infer.lookup(book, catalog_query(m), "thinking_ladder")
        ladder = infer.chosen_ladder(m.level_map, rule.value if rule.known else None)  # type: ignore[arg-type]
        levels = infer.offered(m.reasoning, ladder, defaults)
        lines.append(f"{m.provider}/{m.id}\t{m.api}\t{m.name}\t{','.join(levels)}\t{source}")
    return lines


def models_json_catalog(world: World, argv: list[str], out: list[str], err: list[str]) -> None:
    """``model list`` and ``provider caps`` over $A/models.json as a ``file`` event wrote it (S6: the
    user's providers on top of the catalog). A file that is not JSON, or not an object, is a
    warning of ``model list`` naming the file (the reader's words after ``not JSON`` cut) and the
    catalog goes on without it; ``provider caps`` then knows no provider of it. A file whose
    providers each name their baseUrl, apiKey, api (a wire API) and models adds each provider:
    ``provider caps`` asks the rulebook of the provider itself (its api and base URL)."""
    disk = world.files["models"]
    if disk.state != "text":
        raise ValueError("a models.json that cannot be read is not modelled here")
    try:
        data = strict_loads(disk.text)
        problem = None if isinstance(data, dict) else "a JSON object is expected"
    except ValueError:
        data, problem = None, "not JSON"
    custom: dict[str, infer.Query] = {}
    if problem is None:
        assert isinstance(data, dict)
        for pid, entry in dict(data.get("providers", {})).items():
            if not isinstance(entry, dict) or set(entry) != {"baseUrl", "apiKey", "api", "models"} or entry["api"] not in WIRE_APIS:
                raise ValueError("a models.json provider other than a whole one is not modelled")
            custom[str(pid)] = infer.Query("", None, str(pid), str(entry["api"]), str(entry["baseUrl"]))
    if argv[:2] == ["model", "list"] and len(argv) == 2 and not custom:
        if problem is not None:
            err.append(f"eukhe model list: $A/models.json: {problem}")
        out.extend(model_list(None))
        return
    if argv[:2] != ["provider", "caps"] or len(argv) > 3:
        raise ValueError("this command over a models.json is not modelled")
    known = sorted(set(PROVIDERS) | set(custom))
    if len(argv) == 3 and argv[2] not in known:
        raise Failed(USAGE, f"eukhe provider caps: unknown provider {argv[2]!r}")
    out.extend(provider_caps(argv[2] if len(argv) == 3 else None, custom))


def run_client(argv: list[str]) -> None:
    """The clients and workers, refused before they start one (stdin is never a terminal here)."""
    head = argv[0]
    if head == "tui":
        raise Failed(USAGE, "eukhe tui: needs a terminal (stdin and stdout); for pipes use `eukhe agent serve`")
    if head == "agent":
        raise Failed(USAGE, "eukhe agent serve: the following arguments are required: --session")
    if "--backend" not in argv:
        raise Failed(USAGE, "eukhe tiny-worker: the following arguments are required: --backend, --agent-dir")
    model = argv[1]
    if not model or "/" in model or model.startswith("."):
        raise Failed(USAGE, f"eukhe tiny-worker: bad model id {model!r}")
    where = str(flag(argv, "--agent-dir"))
    if not where.startswith(("/", "$A", "$P")):
        raise Failed(USAGE, f"eukhe tiny-worker: --agent-dir must be absolute, got {where!r}")
    raise ValueError("a worker is not modelled")


STACK_CAP = 8  # directors.stackCap's default (no scenario sets it)


def not_a_number(word: str) -> object:
    raise ValueError(f"{word} is not a JSON number")


def json_number(literal: str) -> float:
    """A JSON number is finite: one past the largest float (1e999) is no JSON number either."""
    value = float(literal)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"{literal} is past the largest JSON number")
    return value


def strict_loads(text: str) -> Any:
    """The JSON value of an argument or a script line: no NaN or Infinity, no number past the
    largest float, no integer of more digits than a JSON reader converts (ValueError)."""
    return json.loads(text, parse_constant=not_a_number, parse_float=json_number)


def reply_refused(body: object) -> str | None:
    """Why a reply line is not of the script format (the first field named, as the format's
    validation says it), None when it is."""
    if not isinstance(body, dict):
        return "reply: Input should be a valid dictionary"
    if not isinstance(body.get("text", ""), str):
        return "reply.text: Input should be a valid string"
    for index, call in enumerate(body.get("tool_calls", [])):
        if isinstance(call, dict) and call.get("name") == "":
            return f"reply.tool_calls.{index}.name: String should have at least 1 character"
    return None


def empty_reply(body: object) -> bool:
    return isinstance(body, dict) and not body.get("text") and not body.get("tool_calls")


def forced_reply(number: int, forcing: list[object], body: object, stack: list[str], out: list[str]) -> None:
    """A reply to a request that forces the tool of the one forced layer on the stack (S5 "Forced
    tool call", S6.3): a reply that calls the tool is ``called``, and the layer leaves at that final
    answer (the step's verdict ``forced:leave``, the answer yields); a reply without the call is a
    miss: while misses do not exceed the layer's tries (``/force TOOL --tries N``, 1 when not
    given) the request is retried, no step; the miss after the tries fails the generation with
    ForcedToolError::NotCalled naming the tool and the real number of requests, removes the layer
    and shows the same text as a display row (eukhe.director), no step."""
    tool, tries, misses = str(forcing[0]), int(str(forcing[1])), int(str(forcing[2]))
    calls = body.get("tool_calls", []) if isinstance(body, dict) else []
    if any(isinstance(call, dict) and call.get("name") == tool for call in calls):
        out.append(f"line {number}: forced {tool}: called")
        stack.clear()
        out.append(f"line {number}: step verdicts=[forced:leave] decision=yield rule=none stack []")
    elif misses < tries:
        forcing[2] = misses + 1
        out.append(f"line {number}: forced {tool}: missed, retried")
    else:
        error = f"ForcedToolError::NotCalled: the forced tool {tool} was not called in {misses + 1} request(s)"
        stack.clear()
        out += [f"line {number}: forced {tool}: {error}", f"  row eukhe.director: {error}"]


def director_command(stack: list[str], line: str) -> str:
    """A session slash command of S5 (/remind TEXT, /force TOOL [--tries N]): one layer pushed
    (budget 1) onto the stack, or the reason it is refused."""
    words = line.split()
    if words[:1] == ["/remind"]:
        if len(words) < 2:
            return f"{line} refused: /remind needs a text: /remind <text>"
        layer = "reminder:1"
    elif words[:1] == ["/force"]:
        if len(words) not in (2, 4):
            return f"{line} refused: /force needs one tool: /force <tool> [--tries <n>]"
        layer = "forced:1"
    else:
        return f"{line} refused: not a Director command: {line}"
    if len(stack) >= STACK_CAP:
        return f"{line} refused: the Director stack is full: {len(stack)} pushed layers, directors.stackCap {STACK_CAP}"
    stack.append(layer)
    return f"{line} -> stack [{', '.join(stack)}]"


MAX_SCRIPT_BYTES = 64 * 1024 * 1024  # the largest script `directors simulate` reads (a device or a pipe may be endless)
DIRECTOR_LIMIT = 2**63 - 1  # S5: the Director limits (directors.maxSteps, stallSteps) are read into a signed 64-bit integer


def run_simulate(world: World, argv: list[str], script: str, out: list[str], bad_bytes: bool = False) -> None:
    """S5.8 over a script of goal, goal status and autonomous lines, or of inputs, session commands
    and replies (no goal: a loop under a goal is not modelled; a reply only with no Director on the
    stack and the autonomous run off), or a refused script."""
    prog, where = "eukhe directors simulate", "$P/script.jsonl"
    for name, cvar in (("--max-steps", "directors.maxSteps"), ("--stall-steps", "directors.stallSteps")):
        value = flag(argv, name)
        if value is not None and not (value.isascii() and value.isdigit()):
            raise Failed(USAGE, f"{prog}: argument {name}: {cvar} is a Nat, not {value[:40]!r}")
        if value is not None and int(value) > DIRECTOR_LIMIT:
            shown = str(int(value)) if int(value) < 10**40 else f"a number of {len(str(int(value)))} digits"
            raise Failed(USAGE, f"{prog}: argument {name}: {shown} is past the largest value of {cvar}, {DIRECTOR_LIMIT}")
    path = flag(argv, "--script")
    if path in DIRS:
        raise Failed(USAGE, f"{prog}: --script: {path}: Is a directory")
    if path is not None and path.startswith("$P/x.wav/") and world.wav:
        raise Failed(USAGE, f"{prog}: --script: {path}: Not a directory (a path on the way is a regular file, not a directory)")
    if path == "/dev/zero":  # a device that never ends: read up to the bound of a script, then refused
        raise Failed(USAGE, f"{prog}: /dev/zero: a script is at most {MAX_SCRIPT_BYTES:,} bytes")
    if path != where:  # a path is shown as one printable line: a control character escaped
        shown = str(path) if str(path).isprintable() else ascii(path)[1:-1]
        raise Failed(USAGE, f"{prog}: --script: {shown}: No such file or directory")
    if bad_bytes:  # the script's text, then a byte that is no UTF-8 (0xff) and a newline
        raise Failed(USAGE, f"{prog}: {where}:{script.count(chr(10)) + 1}: not UTF-8 text (byte {len(script.encode('utf-8'))}: b'\\xff')")
    steps: list[tuple[int, str, object]] = []
    goal_seen = False
    for number, line in enumerate(script.split("\n"), 1):
        if not line.strip():
            continue
        if nesting(line) > MAX_DEPTH:
            raise Failed(USAGE, f"{prog}: {where}:{number}: the line is nested more than {MAX_DEPTH} brackets deep")
        try:
            value = strict_loads(line)
        except ValueError:
            raise Failed(USAGE, f"{prog}: {where}:{number}: the line is not JSON") from None
        if not isinstance(value, dict) or len(value) != 1 or next(iter(value)) not in SCRIPT_KEYS:
            raise Failed(USAGE, f"{prog}: {where}:{number}: expected an object with exactly one of the keys {', '.join(SCRIPT_KEYS)}")
        key, body = next(iter(value.items()))
        if key == "goal_status" and body not in GOAL_STATUSES:
            raise ValueError("a goal status the script format does not name is not modelled")
        if key in ("goal", "input", "command") and not isinstance(body, str):
            raise Failed(USAGE, f"{prog}: {where}:{number}: {key}: Input should be a valid string")
        if key == "reply":
            refused = reply_refused(body)
            if refused is not None:
                raise Failed(USAGE, f"{prog}: {where}:{number}: {refused}")
        if key in ("input", "reply") and goal_seen:
            raise ValueError("a loop under a goal is not modelled")
        if key == "autonomous" and not isinstance(body, bool):
            raise Failed(USAGE, f"{prog}: {where}:{number}: autonomous: Input should be a valid boolean")
        if key == "goal_status" and not goal_seen:
            raise Failed(USAGE, f"{prog}: {where}:{number}: goal_status before any goal (a goal line must come first)")
        goal_seen = goal_seen or key == "goal"
        steps.append((number, key, body))
    if not steps:
        raise Failed(USAGE, f"{prog}: {where}: the script has no lines")
    if flag(argv, "--session-dir") == "$P/x.wav" and world.wav:
        raise Failed(FAULT, f"{prog}: the sessions dir $P/x.wav is not a directory")
    world.simulated += 1
    out.append(f"session $D{world.simulated} in $P/ds/$D{world.simulated}")
    stack: list[str] = []  # the pushed layers, bottom first
    runs, autonomous = 0, False
    forcing: list[object] = []  # the forced layer alone on the stack: its tool, its tries (retries), its misses so far
    for number, key, body in steps:
        if key == "input":
            runs += 1
            out.append(f"line {number}: input -> new loop run-{runs}, stack [{', '.join(stack)}]")
        elif key == "command":
            pushed = len(stack)
            out.append(f"line {number}: {director_command(stack, str(body))}")
            words = str(body).split()
            if stack == ["forced:1"] and pushed == 0:  # a /force TOOL [--tries N] pushed onto an empty stack
                forcing = [words[1], int(words[3]) if len(words) == 4 else 1, 0]
        elif key == "reply" and stack == ["forced:1"] and forcing and not autonomous:  # S5 forced tool call (derived: below)
            forced_reply(number, forcing, body, stack, out)
        elif key == "reply" and not stack and not autonomous and not empty_reply(body):  # no Director: the answer yields (S5)
            out.append(f"line {number}: step verdicts=[] decision=yield rule=none stack []")
        elif key == "reply" and not stack and not autonomous:  # no text and no tool call: a model error
            out.append(f"line {number}: step verdicts=[] decision=fail rule=model_error stack []")
            out.append("  error: model error: an empty reply (no text and no tool call)")
        elif key == "reply":
            raise ValueError("a step under a Director is not modelled")
        elif key == "goal":
            out.append(f"line {number}: goal set: {body}")
        elif key == "goal_status":
            out.append(f"line {number}: goal {body}")
        else:
            autonomous = bool(body)
            out.append(f"line {number}: autonomous {'enabled' if body else 'disabled'}")


def command(world: World, event: dict[str, object], out: list[str], err: list[str]) -> int:
    argv = [str(a) for a in event["argv"]]  # type: ignore[attr-defined]
    if not argv:
        raise Failed(USAGE, "eukhe: the following arguments are required: COMMAND")
    head = argv[0]
    if head not in COMMANDS:
        raise Failed(USAGE, f"eukhe: argument COMMAND: invalid choice: {head!r} (choose from {', '.join(map(repr, COMMANDS))})")
    if head in VERB_OF and len(argv) == 1:
        raise Failed(USAGE, f"eukhe {head}: the following arguments are required: {VERB_OF[head]}")
    refused_arguments(argv)
    project = flag(argv, "--project")
    if head in ("set", "toggle", "cvar", "settings") and project not in (None, "$P"):  # a project dir that is not there (S4b)
        if project != "$P/nosuch":
            raise ValueError("a --project other than $P and a dir that is not there is not modelled")
        raise Failed(USAGE, f"eukhe {head}{' show' if head == 'settings' else ''}: --project {project} does not exist")
    if head in ("set", "toggle"):
        if len(argv) < (3 if head == "set" else 2):
            raise Failed(USAGE, f"eukhe {head}: the following arguments are required: {'value' if len(argv) == 2 else 'id'}")
        run_set(world, argv, out)
    elif head == "cvar":
        run_cvar(world, argv, out)
    elif head == "settings":
        run_show(world, argv, [str(i) for i in event.get("ids", [])], out, err)  # type: ignore[attr-defined]
    elif head == "mcp":
        run_mcp(world, argv, out)
    elif head == "session":
        run_session(world, argv, out)
    elif head == "effort":
        run_effort(argv, out)
    elif head == "tiny-models":
        return run_tiny(world, argv, out, err)
    elif head in ("translate", "say", "transcribe", "translate-eval"):
        run_tiny_use(world, argv, str(event.get("wav", "")), out)
    elif head == "memory":
        run_memory(world, argv, out)
    elif head == "directors":
        run_simulate(world, argv, str(event.get("script", "")), out, bool(event.get("badutf8")))
    elif head == "laws" and world.terminal:
        return run_laws_on_terminal(argv, out)
    elif head == "laws":
        return run_laws(argv, out)
    elif head == "chat":
        return run_chat(world, argv, str(event["models"]), list(event.get("replies", [])), list(event["lines"]), out, err,  # type: ignore[call-overload]
                        bool(event.get("steer")), dict(event["late"])["lines"] if "late" in event else None,  # type: ignore[call-overload]
                        str(dict(event["kill"])["after"]) if "kill" in event else None,  # type: ignore[call-overload]
                        str(event["hold"]) if "hold" in event else None)
    elif head == "ask" and "models" in event:
        return run_ask(world, argv, str(event["models"]), list(event.get("replies", [])), out, err)  # type: ignore[call-overload]
    elif head in ("model", "provider") and world.files["models"].state != "missing":
        models_json_catalog(world, argv, out, err)
    elif head in ("ask", "quirks", "provider", "model", "login"):
        if world.models_json is not None and head != "login":
            raise ValueError("the catalog with a models.json on top is modelled for ask only")
        bundle = None if "bundle" not in event else str(event["bundle"]) + ("\udcff" if event.get("badutf8") else "")
        custom = {} if world.models_json is None else json.loads(world.models_json)["providers"]
        if head == "login" and argv[1] in custom:  # S6: a provider of models.json has its key there
            raise Failed(USAGE, f"eukhe login: {argv[1]} is a provider of models.json: its key is that file's apiKey; nothing written")
        typed = None if event.get("interrupt") else str(event.get("stdin", "")) + ("\udcff\n" if "stdin" in event and event.get("badutf8") else "")
        run_inference(argv, typed, out, bundle)
    elif head == "tui" and world.terminal:
        run_tui(world, argv, [str(k) for k in event.get("keys", [])])  # type: ignore[attr-defined]
    elif head in ("tui", "agent", "tiny-worker"):
        run_client(argv)
    else:
        raise ValueError(f"command {head!r} is not modelled")
    return OK


def how_run(world: World, event: dict[str, object], env: dict[str, str], out: list[str], err: list[str]) -> int:
    """A command as its event runs it: ``--help``; the agent dir named by the flag, by
    EUKHE_AGENT_DIR (the same dir) or by $HOME ($HOME/.eukhe), or a flag naming a path that is a
    regular file or under one, or a dir in /sys (no dir can be made there: the OSError's line,
    with its hint that the place is read-only); the sessions dir by EUKHE_SESSION_DIR, ``~/`` read as $HOME."""
    argv = [str(a) for a in event["argv"]]  # type: ignore[attr-defined]
    if not argv and world.terminal:  # `eukhe` alone on a terminal is `eukhe tui`
        return command(world, {**event, "argv": ["tui"]}, out, err)
    for name in ("-h", "--help"):
        if name in argv:  # argparse's help: its usage line names the command
            out.append(" ".join(["usage: eukhe", *argv[: argv.index(name)]]))
            return OK
    agent = str(event.get("agent", "flag"))
    if agent == "/sys/eukhe" and argv == ["session", "new"]:  # sysfs: no directory can be made there
        # an OSError is one line, ``<path>: <reason>`` with the hint of a read-only dir or file (the
        # command line's one error path: exit 1, a fault of the environment); the reason is cut
        raise Failed(FAULT, f"eukhe session new: {agent}: ... (the directory or file is read-only)")
    if agent not in ("flag", "env", "home"):
        if argv != ["session", "new"] or not world.wav or not agent.startswith("$P/x.wav"):
            raise ValueError("an agent dir flag naming a path is modelled for `session new` under $P/x.wav only")
        if agent == "$P/x.wav":
            raise Failed(FAULT, f"eukhe session new: the agent dir {agent} is not a directory")
        raise Failed(FAULT, f"eukhe session new: the agent dir {agent} is under $P/x.wav, which is not a directory")
    if argv[:2] == ["session", "list"] and (agent == "home" or env):
        where = flag(argv, "--session-dir")
        if where is not None:
            home = env.get("HOME", "$P/home" if agent == "home" else None)
            if home is None or not where.startswith("~/"):
                raise ValueError("a --session-dir of ~/ without $HOME is not modelled")
            out.append(f"sessions in {home}/{where[2:]} (from --session-dir)")
        elif "EUKHE_SESSION_DIR" in env:
            out.append(f"sessions in {env['EUKHE_SESSION_DIR']} (from EUKHE_SESSION_DIR)")
        elif agent == "home":
            out.append("sessions in $P/home/.eukhe/sessions (from default)")  # none made there
        else:
            return command(world, event, out, err)
        return OK
    return command(world, event, out, err)


def run_tui(world: World, argv: list[str], keys: list[str]) -> None:
    """``tui`` on a terminal (the command's help): ``--session ID`` must name a session, else the
    session written last is taken (modelled with one session made: that one), else, with none,
    a new one is made (as ``session new`` makes it: no entry); a session whose log cannot be read
    is a fault of the environment. A session that opens starts the full-screen client: what it
    draws is not compared; it is modelled only as far as it leaves on ``keys`` (the event's, typed
    once it reads keys): Ctrl-D, the key the client's default binds give ``action app.quit``
    ("leave the client": the editor's binds after the seed's S4.5 defaults, in the client's key
    table; no binds.cfg here), whatever it drew before; then the command exits 0 ("Exit 0 when the client quits")."""
    prog = "eukhe tui"
    if "--new" in argv:
        raise ValueError("a new session starts the client: not modelled")
    label = flag(argv, "--session")
    if label is None and not world.sessions:
        if keys[:1] != ["ctrl+d"]:
            raise ValueError("a client that is not left at once is not modelled")
        world.made += 1
        world.sessions[f"$S{world.made}"] = Session()
        return
    if label is None:
        if len(world.sessions) != 1:
            raise ValueError("the session written last is modelled with one session made")
        label = next(iter(world.sessions))
    session_of(world, label, prog)
    if keys[:1] != ["ctrl+d"]:
        raise ValueError("a session that opens starts the client: modelled only as it is left at once (Ctrl-D)")


def run_laws_on_terminal(argv: list[str], out: list[str]) -> int:
    """``laws --area effort`` on a terminal: a progress bar per area as the laws run, then the
    table, both drawn for the terminal (what the screen shows is not part of a transcript); the
    laws.json written to --laws-dir holds each law of S10's table with its verdict, every one
    holding (the bridge prints its rows ``laws.json AREA/NAME STATUS``)."""
    if argv[1:3] != ["--area", "effort"]:
        raise ValueError("laws on a terminal is modelled for --area effort")
    out.extend(f"laws.json effort/{name} pass" for name in EFFORT_LAWS)
    return OK


# -- python -m eukhe.corebuild: the compiled planner core, in a scratch checkout ---------------------


@dataclass
class Checkout:
    """The scratch checkout $P/checkout of ``python -m eukhe.corebuild``: the source
    impl/eukhe/memory/core.py (a kind of text: ``tiny`` a small typed module with the line
    ``SOURCE = ""``, ``edited`` the same with a line more, ``unmarked`` without that line,
    ``broken`` not Python, ``raising`` one that builds but raises ImportError when imported) and
    the source the extension modules beside it were built from (None: none built)."""

    source: str = "tiny"
    built: str | None = None


CORE = "$P/checkout/impl/eukhe/memory"
MARKED = ("tiny", "edited", "broken", "raising")  # the sources that hold the line SOURCE = "" once
COMPILES = ("tiny", "edited", "raising")  # the sources mypyc builds
IMPORTS = ("tiny", "edited")  # the built modules that import (``raising`` raises ImportError at its import)


def corebuild(world: World, argv: list[str], out: list[str], err: list[str]) -> int:
    """``python -m eukhe.corebuild [--force] [--check]`` (its help): the compiled core is current
    when extension modules beside the source were built from that very source (its sha256);
    ``--check`` says current (0) or missing or stale (1); without it a current core is left as it
    is (0), else (or with --force) the source is built with mypyc and the extension modules,
    ``core_c`` and its runtime ``core_c__mypyc`` (``$X``: the platform's extension suffix), replace
    those beside the source, each named on a line. A source without the line ``SOURCE = ""`` once,
    or one mypyc does not build, fails (exit 1, the reason on stderr: the compiler's own output
    is cut) and the modules beside the source stay as they were; built modules that do not import
    are said on stderr (exit 1)."""
    tree = world.core
    current = tree.built == tree.source and tree.source in IMPORTS
    name = "eukhe.memory.core_c"
    if "--check" in argv:
        out.append(f"{name}: {'current' if current else 'missing or stale'}")
        return OK if current else FAULT
    if current and "--force" not in argv:
        out.append(f"{name}: current")
        return OK
    if tree.source not in MARKED:
        err.append(f"{CORE}/core.py: expected one line 'SOURCE = \"\"'")
        return FAULT
    if tree.source not in COMPILES:
        err.append(f"mypyc build of {CORE}/core.py failed:")
        return FAULT
    tree.built = tree.source
    out.extend(f"built {CORE}/{module}$X" for module in ("core_c", "core_c__mypyc"))
    if tree.source not in IMPORTS:
        err.append(f"{name}: built, but it does not import with the current digest")
        return FAULT
    return OK


def transcript(events: list[dict[str, object]]) -> list[str]:
    """The model side of the command-line bridge."""
    world = World()
    lines: list[str] = []
    for number, event in enumerate(events):
        kind = event["do"]
        if kind == "file":
            disk = world.files[str(event["name"])]
            disk.state, disk.text = str(event["state"]), str(event.get("text", ""))
            lines.append(f"{number} file {event['name']} {disk.state}")
        elif kind == "own":  # another process takes the chat memory's owner lock, serves no lock socket, and keeps it
            world.chat_owned = True
            lines.append(f"{number} own chat")
        elif kind == "lock":  # another writer takes the session's lock, and keeps it
            world.sessions[str(event["session"])].locked = True
            lines.append(f"{number} lock {event['session']}")
        elif kind == "corrupt" and event["session"] == CHAT:  # the chat's session: its log is the chat's agent's to read
            if world.chat_model is None:
                raise ValueError("the chat's session has no log before a chat reached its agent")
            world.chat_corrupt = True
            lines.append(f"{number} corrupt {event['session']}")
        elif kind == "corrupt":  # a line that is no record, before the last line of a session's log (a torn last line is not)
            corrupted = world.sessions[str(event["session"])]
            if not corrupted.entries:
                raise ValueError("a log of no entries is not corrupted before its last line")
            corrupted.corrupt = len(corrupted.entries)
            lines.append(f"{number} corrupt {event['session']}")
        elif kind == "tiny":
            world.tiny[str(event["model"])] = str(event["state"])
            lines.append(f"{number} tiny {event['model']} {event['state']}")
        elif kind == "core":  # python -m eukhe.corebuild in the scratch checkout, its source written first
            world.core.source = str(event.get("source", world.core.source))
            said_out: list[str] = []
            said_err: list[str] = []
            flags = [str(a) for a in event["argv"]]  # type: ignore[attr-defined]
            status = corebuild(world, flags, said_out, said_err)
            lines.append(f"{number} $ {' '.join(['python -m eukhe.corebuild', *flags])} ({world.core.source}) -> {status}")
            lines.extend(f"{number} out {line}" for line in said_out)
            lines.extend(f"{number} err {line}" for line in said_err)
        elif kind == "run":
            out: list[str] = []
            err: list[str] = []
            world.wav = world.wav or "wav" in event
            world.player = str(event["player"]) if "player" in event else world.player
            if "dangling" in event:
                world.dangling.add(str(event["dangling"]))
            env = {str(k): str(v) for k, v in dict(event.get("env", {})).items()}  # type: ignore[call-overload]
            world.env = env
            world.terminal = bool(event.get("tty"))
            try:
                if event.get("stdout") == "none":  # started with stdout closed: whatever it did would go unsaid
                    raise Failed(FAULT, "eukhe: stdout is closed; nothing done")
                status = how_run(world, event, env, out, err)
            except Failed as failed:
                status = failed.status
                if env.get("EUKHE_DEBUG") == "1":  # the one error line, after the traceback (Python's text)
                    err.append("(traceback)")
                err.append(failed.line)
            if world.terminal and [str(a) for a in event["argv"]][:1] != ["laws"]:  # type: ignore[attr-defined]
                out.clear()  # what a terminal shows is not compared (of `laws`, laws.json's rows are)
            if event.get("stdout") == "closed" and out:  # its reader gone: the command stops at its first line, quietly
                out.clear()
                status = FAULT
            if event.get("stdout") == "full" and out and status == OK:  # done, but what it printed cannot be written
                out.clear()
                err.append(f"eukhe {' '.join(str(a) for a in event['argv'][:2])}: cannot write stdout: No space left on device")  # type: ignore[index]
                status = FAULT
            if event.get("stdout") == "full lines" and out and status == OK:  # each line written as printed: the first fails
                out.clear()
                err.append(f"eukhe {' '.join(str(a) for a in event['argv'][:2])}: No space left on device")  # type: ignore[index]
                status = FAULT
            if event.get("stdout") == "closed late" and out:  # its reader gone, found at the flush once all is printed: quietly,
                out.clear()  # after the one error line of a command that failed
                status = FAULT
            if event.get("stderr") in ("closed", "closed file", "none") or event.get("tty") == "all":  # the error line is lost (or drawn on
                err.clear()  # the terminal, not compared); the status stays
            said = " ".join(str(a) for a in event["argv"]).encode("utf-8", "backslashreplace").decode("utf-8")  # type: ignore[attr-defined]
            lines.append(f"{number} $ {said} -> {status}")
            lines.extend(f"{number} out {line}" for line in out)
            lines.extend(f"{number} err {line}" for line in err)
        else:
            raise ValueError(f"event {number}: unknown action {kind!r}")
    return lines


if __name__ == "__main__":
    from bend import scenario

    raise SystemExit(scenario.main(transcript, sys.argv[1:]))
