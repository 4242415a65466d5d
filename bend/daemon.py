"""The agent process's requests: the model side of the daemon bridge (issue 28 item 6, issue 26
item 4). It composes the models of the rules each request runs, and restates only what joins
them; read it next to 000_f7323c157e80a40d.txt S4 and S5.6-S5.7, and 004_cf1da0cad29d7f64.txt
S10 (through ``bend.effort``).

A scenario opens a session with no model pinned and no saved default, over a catalog of a few
models of custom providers (models.json), then sends requests (no turn ever reaches a provider):

- ``cvar`` (a session line): parsed, expanded with the session agent's aliases (a line that
  does not parse, or whose expansion fails, runs nothing: the whole request is an error), then
  each command on the session's own agent (S4): ``set`` checks Undeclared, Global, BadValue in
  that order (``bend.cvar``), and also refuses a natural past the width its use reads it into
  (issue 30: a Director limit is a signed 64-bit integer, any other natural an unsigned one);
  ``toggle`` is ``bend.cvar.toggle``; ``alias`` defines (a body that does not parse: its
  ParseError); ``bind`` and ``action`` are client-only. ``global`` (``/set --global``, S4): no
  expansion; ``set`` and ``toggle`` (``bend.cvar.global_toggle``) go to the global config.cfg,
  a Global cvar too; any other command is refused. When the session's switches (serviceTier,
  autonomous.enabled, stt.enabled) change, every client gets them again.
- ``/remind TEXT`` and ``/force TOOL [--tries N]`` (S5.7): a reminder, or a forced call with 1
  unit of budget and tries 1 when not given, pushed on top; refused when the pushed layers
  (reminders and forced calls) already fill directors.stackCap (S5.6: the cap counts the pushed
  layers only). A push broadcasts the stack.
- ``/effort [LEVEL]``, ``cycle_thinking_level`` and ``/model [PROVIDER/ID]``: S10's session
  rules (``bend.effort``; a reasoning model of models.json with no thinkingLevelMap and of no
  family the rulebook knows is offered S10's default ladder, off to high): set clamps the request to the offered levels, a cycle steps from the
  clamp of the current level (null with fewer than two offered), a model switch clamps the
  stored level to the new model. A changed stored level is committed and broadcast with the
  model, with an effort row when the shown level changed; a switch also writes a note row.
- ``status``: the state (model, shown level, offered levels, the stack's kinds, switches).
- ``cvar_save`` (S4.6, ``bend.cvar.written``): the last valid set of each persist cvar among the
  session agent's own sets, written to its agents/NAME.cfg, in the registry's order.
- The turn loop. A scenario's agent either runs none (the bridge's in-process agent) or is the
  real agent process of ``eukhe agent serve`` (reached as a client starts it, or serving its
  terminal), or a second ``eukhe agent serve`` for a session whose agent runs already
  (``"agent": "serve-client"``: one writer per session, the design's agent; the second process
  becomes a client of that agent and relays it to its terminal, the same requests and answers),
  whose turns run the session's turn loop. Without a loop, ``turn``, ``steer``, ``follow_up``,
  ``abort``, ``/memory`` and ``/agent NAME TASK`` are refused ``no_loop``. With it (derived
  from control.md S5's loop and inference.md S6: a turn takes the session's model; a session
  with no model cannot run one): a turn (``steer`` and ``follow_up`` start one when none
  runs) is answered ``ok`` and then, with no model, starts and ends at once, failed, naming
  why; ``abort`` with no turn running is refused ``idle``; ``/memory`` outside the chat is
  refused ``not_chat``; ``/agent NAME TASK`` refuses a name that is not a letter then up to 63
  letters, digits, ``_`` or ``-`` (``invalid_name``), then a session with no model
  (``no_model``). The scenarios send turns and spawns to such an agent only while the session
  has no model (a model would send them to the network).
- ``raw``: a line that is not a request of the agent's protocol (JSON lines, typed and
  versioned: impl/eukhe/agent/protocol.py's docstring is the rule), answered with an error of its
  kind: an empty line or one that is not JSON ``not_json``; JSON that is not an object
  ``not_object``; no ``"v": 1`` (an integer, not a boolean) ``version``; no known ``type``
  ``unknown_type``; a field missing, of the wrong type, empty where a message must not be, or a
  key the type does not have ``invalid``. Sent on a connection of its own (a client that
  connects gets ``state`` first), or, to ``eukhe agent serve``, as a line of its stdin (its relay
  answers it). A raw line may also be a request with no id (``status``, ``get_model_catalog``):
  answered as any request (see ``raw``).
- The chat (memory.md "Use" and 003_bdb197ba90f97028.txt's command table; derived from
  production's eukhe.agent.chat where the seed is silent): a scenario whose agent serves the
  chat session (``"agent": "chat"``: the in-process agent with the session's turn loop, on the
  session marked as the chat) owns an empty chat memory. ``/memory`` answers its status (rule
  23's ceiling, 128,000 bytes; an empty chat: no message, no node, no view line) with the line
  ``mem 0K/128K  messages 0  nodes 0  view lines 0`` and the chat's directory; ``/memory view``
  every view line between ``<chat>`` and ``</chat>`` (none); ``/memory model`` the memory role,
  memory.model (unset: the auxiliary model) and memory.thinking (Global, default medium);
  ``/memory model PROVIDER/ID [LEVEL]`` saves them in the global config.cfg and starts the
  compactor on it (a ``memory`` row: on that model, or no compactor when models.json has no such
  provider). A name that is not PROVIDER/ID, a level not of the ladder, more words, or any other
  ``/memory`` word is a CommandError. A turn of the chat ends as any turn without a model, then
  every client gets the chat's status (a ``memory`` event). When another process owns the chat
  memory (``"agent": "chat-busy"``; rule 7: one owner), the agent serves the session without it:
  each turn ends failed, saying another chat owns it, and ``/memory`` is refused ``not_chat``.
- ``reopen`` (the in-process agent with no turn loop): a takeover of the session (see ``reopen``).
- ``get_model_catalog``: the catalog, of which the transcript shows the models of models.json
  (provider, id, the levels S10 offers each), in the file's order, and no models.json error.
- ``raw`` lines past the in-process agent's line limit (``LINE_LIMIT`` bytes, set for the
  scenarios; the agent process reads the protocol's 64 MiB, and so does the relay of ``eukhe agent
  serve``, which answers a line of its stdin past it: ``repeat`` gives such a line as a short event,
  its text that many times over) are ``too_long``; a raw line with no
  newline is read at the connection's end (a blank one is no line: only the greeting).
- ``/memory ...`` without a loop: refused ``no_loop``; ``/agent`` with no name or no task: a
  CommandError; ``/rewind ENTRY``: an entry that is not a whole number is a CommandError, one main does not
  have a SessionError (the scenarios name no entry their sessions reach); any other command is
  a CommandError.

- A terminal (``"agent": "serve-tty"``): ``eukhe agent serve`` whose stdin is a terminal serves it
  as it serves a pipe, the same requests and answers. ``"agent": "serve-held"``: first a serve for
  the session while a writer with no socket holds it, stopped while it claims
  (``STOPPED_WHILE_CLAIMING``); then, the session free, the serve of ``serve``.
- ``agents_file`` (the first event): the agent dir holds a file named ``agents`` where its agents
  directory would be (derived from production's eukhe.settings: a profile that cannot be read is a
  settings error, S4). The session agent's profile, agents/main.cfg, cannot be read: a settings error
  of the session (``settings_errors=1``, its row naming main.cfg, shown as that of ``global_cfg``);
  ``cvar_save`` cannot write it: the request fails ``OSError`` and nothing is written.
- ``broken_stack`` (the first event): main's Director stack document (eukhe.directors) does not
  parse (its ``layers`` no list: written by hand, or by another version), committed before the agent
  opens the session (so the head at open is entry 2). The state shows no layer; ``/remind`` and
  ``/force`` (once their own words are right) fail ``DocumentError``, nothing written (a document
  that failed to parse is never overwritten); nothing else changes.
- ``global_cfg`` (the first event): the agent dir's global config.cfg, one that does not parse.
  It is a settings error of the session (the state tells ``settings_errors=1``), shown as a
  ``settings_error`` row at open and again by the next cvar line (or at a takeover) once a
  ``/rewind`` took main's view back before it; a ``--global`` set of a valid value, and any
  ``--global`` toggle (it reads the file's value first), would write the file: the request fails
  ``DocumentError`` and nothing is written (a document that fails to parse is never overwritten);
  a set the registry refuses (Undeclared, BadValue) is refused as anywhere.

The catalog lookup of ``/model`` (derived from production's rule, the seed text at hand does not
spell it): PROVIDER/ID of a provider of the catalog; else a bare ID that names exactly one model
(several: refused, name the provider); a provider of models.json may name an id its file does
not list (the model is then outside the catalog: no offered levels, nothing clamps). The
scenarios use no name of the bundled catalog, so the scenario's catalog is all there is.

``foreign`` (the first event, with its ``lines``): the session's socket is served by no agent of
this protocol, and the client reads what it writes (``foreign``, below).

``"agent": "stubborn"`` and ``"agent": "stalled"`` (``stubborn``, below): the in-process agent with a
turn loop that breaks the loop's side of the protocol; ``"agent": "serve-closed"``: a second ``eukhe
agent serve`` started with its stdin closed (``CLOSED_CLIENT``); a ``reopen`` with ``asking`` (of a
``serve-client`` scenario, whose agent then runs no loop and is sent only ``status``): the relay's
request of that kind waits unread when the agent it follows ends, so it is never answered: the relay
tells it ``disconnected`` (impl/eukhe/agent/protocol.py's docstring, the relay's own errors: "a request
whose agent ended before answering"), then takes the session over as ``reopen`` does.

Every line of the transcript begins with the number of its request: the events broadcast while
the request ran, then its reply (of a ``foreign`` socket: the number of the line read).
"""

from __future__ import annotations

import json
import shlex
import sys
from dataclasses import dataclass, replace

from bend import cvar as cv
from bend import default_model as dm
from bend import director as dr
from bend import effort as ef

# -- the cvars the scenarios touch, restated from the S4 table (id, type, scope, flags, default)

_LEVEL = cv.Type(cv.ENUM, ef.LADDER)


def _switch(cvar: str, t: cv.Type, default: cv.Value) -> cv.Decl:
    """A session switch (S4): Local, persist and replicate."""
    return cv.Decl(cvar, t, cv.LOCAL, True, True, default)


DECLS: tuple[cv.Decl, ...] = (
    _switch("transport", cv.Type(cv.ENUM, ("auto", "sse", "websocket")), "auto"),
    _switch("retry.enabled", cv.Type(cv.BOOL), True),
    _switch("compaction.enabled", cv.Type(cv.BOOL), True),
    _switch("serviceTier", cv.Type(cv.ENUM, ("auto", "default", "flex", "priority")), "auto"),
    cv.Decl("retry.maxRetries", cv.Type(cv.NAT), cv.LOCAL, True, False, 3),
    cv.Decl("directors.stackCap", cv.Type(cv.NAT), cv.LOCAL, True, False, dr.DEFAULT_STACK_CAP),
    cv.Decl("directors.maxSteps", cv.Type(cv.NAT), cv.LOCAL, True, False, dr.DEFAULT_MAX_STEPS),
    cv.Decl("autonomous.enabled", cv.Type(cv.BOOL), cv.LOCAL, True, True, False),
    cv.Decl("defaultThinkingLevel", _LEVEL, cv.GLOBAL, True, False, ef.FALLBACK_DEFAULT),
    cv.Decl("titles.generate", cv.Type(cv.BOOL), cv.GLOBAL, True, False, True),
    cv.Decl("memory.model", cv.Type(cv.STRING), cv.GLOBAL, True, False, ""),
    cv.Decl("memory.thinking", _LEVEL, cv.GLOBAL, True, False, "medium"),
    cv.Decl("defaultProvider", cv.Type(cv.STRING), cv.GLOBAL, True, False, ""),
    cv.Decl("defaultModel", cv.Type(cv.STRING), cv.GLOBAL, True, False, ""),
    cv.Decl("stt.enabled", cv.Type(cv.BOOL), cv.LOCAL, True, True, False),
    cv.Decl("temperature", cv.Type(cv.FLOAT), cv.LOCAL, False, False, 1.0),
)
SWITCHES: tuple[str, ...] = ("serviceTier", "autonomous.enabled", "stt.enabled")
I64, U32, U64 = 2**63 - 1, 2**32 - 1, 2**64 - 1
WIDTHS: tuple[tuple[str, int], ...] = (("directors.stackCap", I64), ("directors.maxSteps", I64), ("retry.maxRetries", U32))
GLOBAL_CFG = "global config.cfg"
KINDS = {dr.REMINDER: "reminder", dr.FORCED: "forced"}


def width(cvar: str) -> int:
    for name, most in WIDTHS:
        if name == cvar:
            return most
    return U64


@dataclass(frozen=True)
class Entry:
    """A model of the catalog: its provider, its id, and what reasoning depth sees of it."""

    provider: str
    id: str
    model: ef.Model


@dataclass(frozen=True)
class World:
    cvars: cv.State
    stack: tuple[dr.Layer, ...]
    catalog: tuple[Entry, ...]
    model: tuple[str, str] | None  # the session's model (provider, id)
    effort: ef.Session  # the stored level, the default, the session model as S10 sees it
    loop: bool = False  # whether the agent runs the turn loop (the real agent process)
    terminal: bool = False  # whether requests are lines of the stdin of ``eukhe agent serve``
    chat: bool = False  # whether the session is the chat (its agent owns the chat memory)
    busy_chat: bool = False  # whether the session is the chat and another process owns the chat memory
    console: int = 0  # the requests with no id the relay of ``eukhe agent serve`` has numbered
    pinned: bool = False  # whether ``model`` is the session's own (``/model``), not the saved default
    broken_cfg: bool = False  # whether the global config.cfg the agent dir holds does not parse
    error_shown: bool = True  # whether main's view as of its head holds the settings_error row of it
    blocked: bool = False  # whether the agent dir's agents is a file: no agents/NAME.cfg can be read or written
    broken_stack: bool = False  # whether main's Director stack document (eukhe.directors) does not parse
    stale_socket: bool = False  # whether a takeover finds a directory where the session's socket would be
    deaf: bool = False  # whether a connection that does not read is dropped at once (the agent's limit of unsent events below its greeting)


def value(world: World, cvar: str) -> cv.Value:
    return cv.value(world.cvars.reg, world.cvars.config, world.cvars.family, cvar)


def offer(world: World) -> tuple[str, ...] | None:
    return ef.offer_of(world.effort.model)


def shown(world: World) -> str:
    return ef.shown(world.effort.stored, world.effort.default, offer(world))


# -- printing --------------------------------------------------------------------------------


def show_levels(levels: tuple[str, ...] | None) -> str:
    return "-" if levels is None else ",".join(levels) or "(none)"


def show_model(model: tuple[str, str] | None) -> str:
    return "-" if model is None else f"{model[0]}/{model[1]}"


def show_value(v: cv.Value) -> str:
    return json.dumps(cv.to_json(v), sort_keys=True, ensure_ascii=False)


def show_switches(world: World) -> str:
    return " ".join(f"{cvar}={show_value(value(world, cvar))}" for cvar in SWITCHES)


def model_line(world: World) -> str:
    return f"model {show_model(world.model)} level={shown(world)} offered={show_levels(offer(world))}"


def state_line(world: World) -> str:
    stack = ",".join(KINDS[layer.kind] for layer in world.stack) or "-"
    errors = " settings_errors=1" if world.broken_cfg or world.blocked else ""  # the config.cfg that does not parse, or agents/main.cfg
    return f"state model={show_model(world.model)} level={shown(world)} offered={show_levels(offer(world))} directors={stack} {show_switches(world)}{errors}"


# -- open --------------------------------------------------------------------------------------


def catalog_of(raw: object) -> tuple[Entry, ...]:
    assert isinstance(raw, list)
    entries = []
    for item in raw:
        assert isinstance(item, dict)
        level_map = item.get("map")
        pairs = None if level_map is None else tuple((k, level_map[k]) for k in ef.LADDER if k in level_map)
        entries.append(Entry(str(item["provider"]), str(item["id"]), ef.Model(bool(item["reasoning"]), pairs)))
    return tuple(entries)


def open_session(
    raw_catalog: object,
    loop: bool = False,
    terminal: bool = False,
    chat: bool = False,
    busy_chat: bool = False,
    global_cfg: str | None = None,
    blocked: bool = False,
    broken_stack: bool = False,
    stale_socket: bool = False,
    deaf: bool = False,
) -> World:
    """S10 session 1: no pinned model and no saved default, so no model; the stored level is
    unset and settles on defaultThinkingLevel (medium). ``global_cfg``: the text of the agent
    dir's global config.cfg, when it has one; the scenarios give only one that does not parse
    (S4: a config document that fails to parse is a settings error of the session, its sets
    left out, and it is never overwritten)."""
    reg = cv.registry(DECLS)
    assert not isinstance(reg, cv.RegistryError)
    broken = global_cfg is not None
    assert not broken or isinstance(cv.parse_list(str(global_cfg)), cv.ParseError), "a global config.cfg that parses: no scenario gives one"
    cvars = cv.State(reg, (), (cv.Agent("main", (), ()),), ())
    world = World(cvars, (), catalog_of(raw_catalog), None, ef.Session(None, None, None), loop, terminal, chat, busy_chat, broken_cfg=broken, blocked=blocked, broken_stack=broken_stack, stale_socket=stale_socket, deaf=deaf)
    default = value(world, "defaultThinkingLevel")
    opened, _ = ef.step(ef.Session(None, str(default), None), "open", None)
    return replace(world, effort=opened)


# -- cvar lines (S4) ---------------------------------------------------------------------------


def set_value(world: World, cvar: str, text: str, local_only: bool) -> cv.Value | cv.CvarError:
    """The value of a front-door set, or why it is refused: Undeclared, Global (from a session),
    BadValue (a word the type does not read, or a natural past its width)."""
    decl = cv.lookup(world.cvars.reg, cvar)
    if decl is None:
        return cv.CvarError(cv.UNDECLARED, cvar)
    if local_only and decl.scope == cv.GLOBAL:
        return cv.CvarError(cv.GLOBAL_ERR, cvar)
    ok, v = cv.parse_value(decl.type, text)
    if not ok or (isinstance(v, int) and not isinstance(v, bool) and decl.type.kind in (cv.NAT, cv.NAT_OR_OFF) and v > width(cvar)):
        return cv.CvarError(cv.BAD_VALUE, cvar)
    return v


def with_cvars(world: World, state: cv.State) -> World:
    return replace(world, cvars=state, effort=replace(world.effort, default=str(value(replace(world, cvars=state), "defaultThinkingLevel"))))


def local_line(world: World, text: str) -> tuple[World, str]:
    parsed = cv.parse_list(text)
    if isinstance(parsed, cv.ParseError):
        return world, "error ParseError"
    expanded = cv.expand(world.cvars.aliases, parsed)
    if isinstance(expanded, cv.ExpandError):
        return world, "error ExpandError " + cv.show_error(expanded)
    outcomes = []
    state = world.cvars
    for c in expanded:
        outcome = "ok"
        if c.verb == cv.SET:
            v = set_value(world, c.args[0], c.args[1], True)
            if isinstance(v, cv.CvarError):
                outcome = cv.show_error(v)
            else:
                family, _ = cv.set_last(state.reg, state.family, cv.Set(c.args[0], v))
                state = cv.State(state.reg, state.config, family, state.aliases)
        elif c.verb == cv.TOGGLE:
            family, e = cv.toggle(state.reg, state.config, state.family, c.args[0])
            state = cv.State(state.reg, state.config, family, state.aliases)
            outcome = "ok" if e is None else cv.show_error(e)
        elif c.verb == cv.ALIAS:
            body = cv.parse_list(c.args[1])
            if isinstance(body, cv.ParseError):
                outcome = "ParseError"
            else:
                state = cv.State(state.reg, state.config, state.family, cv.define(state.aliases, c.args[0], body))
        else:
            outcome = "client-only"
        world = with_cvars(world, state)
        outcomes.append(f"{cv.format_command(c)} -> {outcome}")
    return world, "cvar [" + "; ".join(outcomes) + "]"


def global_line(world: World, text: str) -> tuple[World, str]:
    parsed = cv.parse_list(text)
    if isinstance(parsed, cv.ParseError):
        return world, "error ParseError"
    outcomes = []
    for c in parsed:
        result: cv.Set | cv.CvarError | None = None
        if c.verb == cv.TOGGLE and world.broken_cfg:  # a toggle reads the file's value first: it cannot
            return world, "error DocumentError"
        if c.verb == cv.SET:
            v = set_value(world, c.args[0], c.args[1], False)
            result = v if isinstance(v, cv.CvarError) else cv.Set(c.args[0], v)
            if world.broken_cfg and not isinstance(result, cv.CvarError):  # a valid set would write over it: the request fails, nothing written
                return world, "error DocumentError"
        elif c.verb == cv.TOGGLE:
            result = cv.global_toggle(world.cvars.reg, world.cvars.config, c.args[0])
        if result is None:
            outcome = "refused"
        elif isinstance(result, cv.CvarError):
            outcome = cv.show_error(result)
        else:
            outcome = "ok"
            world = with_cvars(world, global_set(world.cvars, result))
        outcomes.append(f"{cv.format_command(c)} -> {outcome}")
    return world, "cvar --global [" + "; ".join(outcomes) + "]"


def global_set(state: cv.State, s: cv.Set) -> cv.State:
    """The set written to the global config.cfg (its layer, made when missing)."""
    layers = tuple(layer for layer in state.config if layer.source != GLOBAL_CFG)
    before = [layer for layer in state.config if layer.source == GLOBAL_CFG]
    sets = (before[0].sets if before else ()) + (s,)
    return cv.State(state.reg, layers + (cv.Layer(GLOBAL_CFG, False, sets),), state.family, state.aliases)


ERROR_ROW = "row settings_error config.cfg"  # S4: a settings error is a row of the session, shown once in it


def error_row(world: World) -> str:
    """The settings error's row: it names its document (agents/main.cfg when agents is a file)."""
    return "row settings_error main.cfg" if world.blocked else ERROR_ROW


def cvar_request(world: World, text: str, is_global: bool) -> tuple[World, list[str]]:
    """A cvar line; then, whatever it did, the settings errors main's view does not hold yet are
    shown (a row each, kept in main), and the switches again when they changed."""
    before = show_switches(world)
    world, said = (global_line if is_global else local_line)(world, text)
    rows = [error_row(world)] if (world.broken_cfg or world.blocked) and not world.error_shown else []
    world = replace(world, error_shown=True)
    lines = [] if show_switches(world) == before else ["switches " + show_switches(world)]
    return world, rows + lines + [said]


# -- /remind and /force (S5.6, S5.7) -------------------------------------------------------------


def push(world: World, layer: dr.Layer) -> tuple[World, list[str]]:
    if world.broken_stack:  # the stack cannot be read: nothing is pushed, nothing written
        return world, ["error DocumentError"]
    cap = value(world, "directors.stackCap")
    pushed = len([item for item in world.stack if item.kind in KINDS])
    if isinstance(cap, int) and pushed >= cap:
        return world, ["error PushRefused"]
    stack = world.stack + (layer,)
    world = replace(world, stack=stack)
    kinds = ",".join(KINDS[item.kind] for item in stack)
    return world, [f"directors {kinds}", f"ok {KINDS[layer.kind]} pushed: {len(stack)} layers"]


def remind(world: World, rest: str) -> tuple[World, list[str]]:
    if not rest.strip():
        return world, ["error CommandError"]
    return push(world, dr.Layer(dr.REMINDER, 1))


def force(world: World, line: str) -> tuple[World, list[str]]:
    try:
        words = shlex.split(line)
    except ValueError:
        return world, ["error CommandError"]
    args = words[1:]
    if "--tries" in args:
        at = args.index("--tries")
        if at + 1 >= len(args) or not (args[at + 1].isascii() and args[at + 1].isdigit()):
            return world, ["error CommandError"]
        del args[at : at + 2]
    if len(args) != 1:
        return world, ["error CommandError"]
    if not args[0].strip():
        return world, ["error PushRefused"]
    return push(world, dr.Layer(dr.FORCED, 1))


# -- /effort, cycle, /model (S10) ----------------------------------------------------------------


def level_changed(world: World, before_stored: str | None, before_shown: str) -> list[str]:
    """A stored level that changed: committed, a row when the shown level changed, the model."""
    if world.effort.stored == before_stored:
        return []
    row = [] if shown(world) == before_shown else [f"row effort thinking level {before_shown} -> {shown(world)}"]
    return row + [model_line(world)]


def set_effort(world: World, rest: str) -> tuple[World, list[str]]:
    level = rest.strip()
    if not level:
        return world, [f"thinking level={shown(world)} offered={show_levels(offer(world))}"]
    if level not in ef.LADDER:
        return world, ["error EffortError"]
    before = world.effort
    world = replace(world, effort=ef.step(world.effort, "set", level)[0])
    lines = level_changed(world, before.stored, ef.shown(before.stored, before.default, ef.offer_of(before.model)))
    return world, lines + [f"thinking level={shown(world)} offered={show_levels(offer(world))}"]


def cycle(world: World, backward: bool) -> tuple[World, list[str]]:
    before_stored, before_shown = world.effort.stored, shown(world)
    session, step = ef.step(world.effort, "cycle", "backward" if backward else "forward")
    world = replace(world, effort=session)
    lines = [] if step is None else level_changed(world, before_stored, before_shown)
    return world, lines + [f"thinking level={step or 'null'} offered={show_levels(offer(world))}"]


def find(world: World, text: str) -> tuple[tuple[str, str], ef.Model | None] | None:
    """The model /model names, and what S10 sees of it (None: outside the catalog)."""
    providers = {e.provider for e in world.catalog}
    provider, _, model_id = text.partition("/")
    if not (provider in providers and model_id):
        matches = [e for e in world.catalog if e.id == text]
        if len(matches) != 1:
            return None
        return (matches[0].provider, matches[0].id), matches[0].model
    for e in world.catalog:
        if (e.provider, e.id) == (provider, model_id):
            return (provider, model_id), e.model
    return (provider, model_id), None  # a provider of models.json: any id it names


def switch(world: World, rest: str) -> tuple[World, list[str]]:
    text = rest.strip()
    if not text:
        return world, [model_line(world)]
    found = find(world, text)
    if found is None:
        return world, ["error unknown_model"]
    before = shown(world)
    ref, model = found
    world = replace(world, model=ref, pinned=True, effort=ef.step(world.effort, "switch", model)[0])
    lines = [f"row note model {show_model(ref)}"]
    if shown(world) != before:
        lines.append(f"row effort thinking level {before} -> {shown(world)}")
    return world, lines + [model_line(world), f"ok model {show_model(ref)}"]


# -- cvar_save (S4.6) and the turn loop ---------------------------------------------------------


def save(world: World) -> tuple[World, list[str]]:
    """S4.6: the written sets go to agents/NAME.cfg, which keeps what it held for other cvars (a
    cvar written again: its new set, last). That file is the agent's profile (S4: the family's
    layers, then the agent's profile, then its own sets), beneath its own sets, so its values
    show once the session's own sets are gone (a /rewind to the head at open)."""
    if world.blocked:  # agents/NAME.cfg cannot be made: the OS's error, nothing written
        return world, ["error OSError"]
    agent = world.cvars.family[-1]
    written = cv.written(world.cvars.reg, agent)
    ids = {s.id for s in written}
    profile = tuple(s for s in agent.profile if s.id not in ids) + written
    family = world.cvars.family[:-1] + (cv.Agent(agent.name, profile, agent.sets),)
    world = with_cvars(world, cv.State(world.cvars.reg, world.cvars.config, family, world.cvars.aliases))
    return world, ["saved [" + ", ".join(f"{s.id}={show_value(s.value)}" for s in written) + "]"]


NO_MODEL = "the session has no model: pick one with /model"
CHAT_BUSY = "another eukhe chat owns AGENT/chat/main; one chat runs turns at a time"  # memory.md rule 7


def turn(world: World, kind: str, text: str) -> list[str]:
    """``turn``, ``steer``, ``follow_up`` (a message), ``abort``: between two requests no turn
    runs (a turn without a model ends at once), so each message starts one."""
    if not world.loop:
        return ["error no_loop"]
    if kind == "abort":
        return ["error idle"]
    if world.model is not None:
        raise ValueError("a turn with a model reaches the network: no scenario sends one")
    said = json.dumps(text, ensure_ascii=False)  # a message may hold a newline: the transcript line holds it quoted
    why = CHAT_BUSY if world.busy_chat else NO_MODEL
    ended = ["ok the turn starts", f"turn_start {said}", f"turn_end failed {json.dumps(why, ensure_ascii=False)}"]
    return ended + ([memory_line("", ())] if world.chat else [])  # the chat's status bar after its turn


# the requests of the protocol: type -> (field, JSON kind, required); every one may carry "id", a string
REQUESTS: tuple[tuple[str, tuple[tuple[str, str, bool], ...]], ...] = (
    ("turn", (("text", "message", True),)),
    ("steer", (("text", "message", True),)),
    ("follow_up", (("text", "message", True),)),
    ("abort", ()),
    ("cvar", (("line", "string", True), ("global", "boolean", False))),
    ("cvar_save", ()),
    ("command", (("line", "message", True),)),
    ("get_model_catalog", ()),
    ("cycle_thinking_level", (("backward", "boolean", False),)),
    ("status", ()),
)


def fits(kind: str, value: object) -> bool:
    if kind == "boolean":
        return isinstance(value, bool)
    return isinstance(value, str) and (kind == "string" or value != "")


def lone_surrogate(value: object) -> bool:
    """Whether a string or key of a JSON value holds a lone surrogate."""
    if isinstance(value, str):
        return any("\ud800" <= char <= "\udfff" for char in value)
    if isinstance(value, list):
        return any(lone_surrogate(item) for item in value)
    if isinstance(value, dict):
        return any(lone_surrogate(key) or lone_surrogate(item) for key, item in value.items())
    return False


def undecodable(line: str) -> bool:
    """Whether ``line`` holds bytes that are no UTF-8 (0x80 to 0xFF as U+DC80 to U+DCFF, Python's
    surrogateescape)."""
    return any("\udc80" <= char <= "\udcff" for char in line)


def raw_kind(line: str) -> str | None:
    """The error kind of a line that is not a request, None for a request. The JSON of the
    scenarios' raw lines is plain (no NaN, no key twice, shallow): where the protocol's strict
    JSON and ``json.loads`` differ, no scenario goes. A line is bytes: the characters U+DC80 to
    U+DCFF of ``line`` stand for the bytes 0x80 to 0xFF that are no UTF-8 (Python's
    surrogateescape). Text is Unicode: a JSON string or key holding a lone surrogate escape (``\\ud800``)
    is refused as not UTF-8 too, before its version is read."""
    if undecodable(line):
        return "not_utf8"
    if not line.strip():
        return "not_json"
    try:
        value = json.loads(line)
    except ValueError:
        return "not_json"
    if not isinstance(value, dict):
        return "not_object"
    if lone_surrogate(value):
        return "not_utf8"
    version = value.get("v")
    if not (isinstance(version, int) and not isinstance(version, bool) and version == 1):
        return "version"
    fields = [spec for name, spec in REQUESTS if name == value.get("type")]
    if not fields:
        return "unknown_type"
    allowed = {"v", "type", "id"} | {field for field, _, _ in fields[0]}
    ident = value.get("id")
    if any(key not in allowed for key in value) or not (ident is None or (isinstance(ident, str) and len(ident) <= 256)):
        return "invalid"
    for field, kind, required in fields[0]:
        if (required and field not in value) or (field in value and not fits(kind, value[field])):
            return "invalid"
    return None


# control.md: one writer per session; a second process claims it and, finding no agent to join,
# tries again until its time runs out. Stopped (SIGTERM) meanwhile, ``eukhe agent serve`` gives up
# the claim and ends as a stopped agent does: exit 0, nothing printed, and the session is not taken.
STOPPED_WHILE_CLAIMING = "stopped while it claimed the session: nothing printed, exit 0"
TERMINAL = ("serve", "serve-client", "serve-tty", "serve-held")  # the modes whose requests are lines of the stdin of ``eukhe agent serve``
LINE_LIMIT = 4096  # bytes of a line the in-process agents of the scenarios read (the bridge sets it)
PROTOCOL_LINE_LIMIT = 64 * 1024 * 1024  # the protocol's own: the agent process reads up to it


def raw(world: World, line: str, eol: bool = True) -> tuple[World, list[str]]:
    """A raw line, on a connection of its own (``eol``: ended by a newline, else by the end of
    what the client writes, where a blank rest is no line at all), or a line of the stdin of
    ``eukhe agent serve``: a line that is not a request is answered with its error; a request
    (the scenarios' raw requests ask ``status`` or ``get_model_catalog``, which change nothing)
    with its answer, which names the request's id. A request of the terminal that has no id
    gets one from the relay, so that its answer can be told apart (derived from production's
    eukhe.agent.daemon: ``console-1``, ``console-2``, ... in the order its stdin sends them);
    on a connection of its own it keeps none.

    ``deaf`` (the first event): the agent drops a client whose events wait unsent past its limit
    (one that does not read; it gets the state again when it connects again), and the scenario's
    limit is below the greeting itself: a connection of its own is dropped as it connects, before
    its line is read, so nothing answers it and nothing changes (derived from production's
    eukhe.agent.daemon, PENDING_LIMIT)."""
    if world.deaf and not world.terminal:
        return world, []
    greeting = [] if world.terminal else [state_line(world)]
    limit = LINE_LIMIT if world.chat or world.busy_chat or not world.loop else PROTOCOL_LINE_LIMIT
    if len(line.encode("utf-8", "surrogateescape")) > limit:
        return world, greeting + ["error too_long"]
    if not eol and not line.strip():
        return world, greeting
    kind = raw_kind(line)
    if kind is not None:
        return world, greeting + ["error " + kind]
    request = json.loads(line)
    ident = request.get("id")
    if ident is None and world.terminal:
        world = replace(world, console=world.console + 1)
        ident = f"console-{world.console}"
    if request["type"] == "status":
        answer = state_line(world)
    elif request["type"] == "get_model_catalog":
        answer = catalog(world)[0]
    else:
        raise ValueError(f"the raw request {line!r} changes the session: no scenario sends one")
    return world, greeting + [answer + ("" if ident is None else f" re={ident}")]


# -- the chat (memory.md "Use"; the module's docstring) ------------------------------------------

CEILING = 128_000  # rule 23: the view's ceiling, in bytes
EMPTY_STATUS = "mem 0K/128K  messages 0  nodes 0  view lines 0"


def memory_line(text: str, lines: tuple[str, ...]) -> str:
    """A ``memory`` event of the empty chat: its status, the reply's text and lines."""
    shown = json.dumps(text, ensure_ascii=False)
    return f"memory bytes=0/{CEILING} messages=0 nodes=0 view_lines=0 text={shown} lines={json.dumps(list(lines), ensure_ascii=False)}"


def is_model_name(name: str) -> bool:
    provider, slash, model_id = name.partition("/")
    return bool(slash and provider and model_id)


def memory_model(world: World, words: list[str]) -> tuple[World, list[str]]:
    """``/memory model [PROVIDER/ID [LEVEL]]``: show, or save the memory role (Global) and start
    the compactor on it."""
    if not words:
        current = str(value(world, "memory.model")) or "(unset: the auxiliary model)"
        return world, [memory_line(f"memory.model {current}  memory.thinking {value(world, 'memory.thinking')}", ())]
    if len(words) > 2 or not is_model_name(words[0]) or (len(words) == 2 and words[1] not in ef.LADDER):
        return world, ["error CommandError"]
    state = global_set(world.cvars, cv.Set("memory.model", words[0]))
    if len(words) == 2:
        state = global_set(state, cv.Set("memory.thinking", words[1]))
    world = with_cvars(world, state)
    thinking = value(world, "memory.thinking")
    providers = {e.provider for e in world.catalog}
    provider = words[0].partition("/")[0]
    row = f"row memory memory: compactor on {words[0]} (memory.model, thinking {thinking})" if provider in providers else "row memory memory: no compactor"
    return world, [row, memory_line(f"memory.model {words[0]}  memory.thinking {thinking} (saved)", ())]


def memory(world: World, rest: str) -> tuple[World, list[str]]:
    if not world.loop:
        return world, ["error no_loop"]
    if not world.chat:
        return world, ["error not_chat"]
    words = rest.split()
    if not words:
        return world, [memory_line(EMPTY_STATUS, ("chat AGENT/chat/main",))]
    if words == ["view"]:
        return world, [memory_line("", ("<chat>", "</chat>"))]
    if words[0] == "model":
        return memory_model(world, words[1:])
    return world, ["error CommandError"]


def catalog(world: World) -> list[str]:
    """get_model_catalog: the models of models.json (grouped by provider as the file holds them)."""
    providers = list(dict.fromkeys(e.provider for e in world.catalog))
    ordered = [e for provider in providers for e in world.catalog if e.provider == provider]
    shown = " ".join(f"{e.provider}/{e.id}[{show_levels(ef.offer_of(e.model))}]" for e in ordered)
    return [f"catalog {shown} errors=0"]


def is_name(name: str) -> bool:
    """A subagent's name: a letter, then at most 63 letters, digits, ``_`` or ``-`` (ASCII)."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    first = letters + letters.upper()
    rest = first + "0123456789_-"
    return 1 <= len(name) <= 64 and name[0] in first and all(c in rest for c in name[1:])


def spawn(world: World, rest: str) -> list[str]:
    name, _, task = rest.strip().partition(" ")
    if not name or not task.strip():
        return ["error CommandError"]
    if not world.loop:
        return ["error no_loop"]
    if not is_name(name):
        return ["error invalid_name"]
    if world.model is not None:
        raise ValueError("a spawn with a model starts a child process: no scenario sends one")
    return ["error no_model"]


def open_head(world: World) -> int:
    """The entry main's head is at once the agent has opened the session: the first commit of a
    session is entry 1, the stored thinking level settled at open (the chat: its mark first)."""
    return 2 if world.chat or world.busy_chat or world.broken_stack else 1


def saved_default(world: World) -> Entry | None:
    """The saved default (S6: defaultProvider and defaultModel, both set, Global) as an unpinned
    session takes it: a model of the catalog (every provider of models.json has its key), else
    none (never silently replaced; the scenarios' rows are not told)."""
    saved = (str(value(world, "defaultProvider")), str(value(world, "defaultModel")))
    if not (saved[0] and saved[1]):
        return None
    return next((e for e in world.catalog if (e.provider, e.id) == saved), None)


def rewind(world: World) -> tuple[World, list[str]]:
    """``/rewind`` to the head at open: main's documents as of it (no pinned model, no layer,
    none of the session agent's sets and aliases; the Global config stays, it is no document of
    main; nor is the agent's profile, agents/NAME.cfg, which cvar_save wrote), so the model is the
    saved default as it is now (S6), and the stored level as settled then is settled again on that
    model (the scenarios save defaults that offer it, so it stays);
    every client gets the state again before the asker's ``ok``."""
    opened = open_session([])
    family = tuple(cv.Agent(a.name, b.profile, a.sets) for a, b in zip(opened.cvars.family, world.cvars.family))  # agents/NAME.cfg stays
    cvars = cv.State(world.cvars.reg, world.cvars.config, family, opened.cvars.aliases)
    world = with_cvars(world, cvars)
    entry = saved_default(world)
    # the settings error's row came after the head at open: main's view as of it holds none
    world = replace(world, stack=(), model=None if entry is None else (entry.provider, entry.id), pinned=False, error_shown=False)
    session = ef.Session(opened.effort.stored, world.effort.default, None if entry is None else entry.model)
    settled, _ = ef.step(session, "open", None)
    if settled.stored != session.stored:
        raise ValueError("a saved default that settles the level otherwise: no scenario goes there")
    world = replace(world, effort=settled)
    return world, [state_line(world), f"ok rewound: the head of main is entry {open_head(world)}"]


def reopen(world: World) -> tuple[World, list[str]]:
    """A takeover (control.md: one agent per session; the bridge's in-process agent): a second
    claim of the session while its agent runs finds the writer lock taken and becomes a client
    (its greeting: the state); the agent then ends, and its clients' connections end (``gone``:
    nothing more comes, a request sent then fails); a claim while a writer with no socket holds
    the session (a command line's) finds no agent to join and, its time run out, is refused
    (``busy``: AgentBusy); the claim made again once that writer has gone takes the session and
    opens it as at the start, on what the session holds: its documents (the pinned model, the
    stored level, the stack, the session agent's sets and aliases) and the Global config as it
    is now. An unpinned session takes the saved default as ``bend.default_model.resolve`` settles
    it (S6: every provider of models.json has its key, apiKey being required; no startup chain),
    and a saved default it cannot honour is told as a ``default_model`` row (one of a provider of
    the compiled catalog, which has no credentials in the scenarios, is none of theirs: S6 uses no
    provider without credentials, and the row's reason is not told); the stored level is
    settled on the model as at open. The new agent's client's greeting is the state, with the kinds of the rows of open.
    ``stale_socket`` (the first event): before that claim, a claim while a directory sits where the
    session's socket would be takes the session, cannot put its socket there and fails with the OS's
    error, giving the session back (``claim refused OSError``: derived from production's
    eukhe.agent.daemon; a session is never left held by an agent that does not serve it).
    A relay of ``eukhe agent serve`` that follows the agent as its client tells none of the
    first part (no request of its stdin waits): it claims the session again and takes it over,
    and prints the state its client is greeted with."""
    said = [] if world.terminal else [state_line(world), "gone", "gone", "busy"] + (["claim refused OSError"] if world.stale_socket else [])
    rows: list[str] = []
    model, seen = world.model, world.effort.model
    if not world.pinned:
        provider, model_id = str(value(world, "defaultProvider")), str(value(world, "defaultModel"))
        saved = (provider, model_id) if provider and model_id else None
        keys = tuple((e.provider, e.id) for e in world.catalog)
        resolved = dm.resolve(saved, dm.World(keys, None, tuple(dict.fromkeys(e.provider for e in world.catalog)), ()))
        model = resolved.model
        seen = next((e.model for e in world.catalog if (e.provider, e.id) == model), None)
        rows = [] if resolved.row is None else ["default_model"]
    if (world.broken_cfg or world.blocked) and not world.error_shown:  # opened again: the settings error main's view lacks is shown
        rows = rows + ["settings_error"]
    settled, _ = ef.step(ef.Session(world.effort.stored, world.effort.default, seen), "open", None)
    world = replace(world, model=model, effort=settled, error_shown=True)
    return world, said + [f"{state_line(world)} rows={','.join(rows) or '-'}"]


def command(world: World, line: str) -> tuple[World, list[str]]:
    line = line.strip()
    word, _, rest = line.partition(" ")
    if word == "/remind":
        return remind(world, rest)
    if word == "/force":
        return force(world, line)
    if word == "/effort":
        return set_effort(world, rest)
    if word == "/model":
        return switch(world, rest)
    if word == "/memory":
        return memory(world, rest)
    if word == "/agent":
        return world, spawn(world, rest)
    if word == "/rewind":
        # an entry is a whole number (a minus sign allowed, 30 digits at most); the scenarios name
        # the head at open, or entries no session of theirs reaches, refused as unknown to main
        body = rest.strip()[1:] if rest.strip().startswith("-") else rest.strip()
        if not (body.isascii() and body.isdigit() and len(body) <= 30):
            return world, ["error CommandError"]
        if int(rest.strip()) == open_head(world):
            return rewind(world)
        return world, ["error SessionError"]
    return world, ["error CommandError"]


# -- the transcript --------------------------------------------------------------------------


def step(world: World, event: dict[str, object]) -> tuple[World, list[str]]:
    kind = event["request"]
    if kind == "cvar":
        return cvar_request(world, str(event["line"]), bool(event.get("global", False)))
    if kind == "command":
        return command(world, str(event["line"]))
    if kind == "cycle_thinking_level":
        return cycle(world, bool(event.get("backward", False)))
    if kind == "status":
        return world, [state_line(world)]
    if kind == "cvar_save":
        return save(world)
    if kind in ("turn", "steer", "follow_up", "abort"):
        return world, turn(world, str(kind), str(event.get("text", "")))
    if kind == "raw":  # its line, ``repeat`` times over (a line past the protocol's limit stays a short event)
        return raw(world, str(event["line"]) * int(str(event.get("repeat", 1))), bool(event.get("eol", True)))
    if kind == "get_model_catalog":
        return world, catalog(world)
    if kind == "reopen" and event.get("asking") is not None:  # a request of the relay its agent never answers
        if not world.terminal:
            raise ValueError("only the relay of eukhe agent serve is asked as its agent ends")
        world, said = reopen(world)
        return world, ["error disconnected", *said]
    if kind == "reopen":
        return reopen(world)
    raise ValueError(f"unknown request {kind!r}")


def foreign(lines: list[str]) -> list[str]:
    """A client of a socket served by no agent of this protocol, which writes ``lines`` (each
    ended by a newline) and closes: a line is read as the agent reads a request line (control.md's
    protocol is one for both ways: one JSON object a line, its version, its type), so a line past
    the client's limit is ``too_long`` and any other that is not an event gets its kind (the
    lines name no type of either table, so the request table's reading is the event table's);
    the client reads on, and the connection's end is the client's (``gone``). An error answers
    the ``re`` of a line that is a JSON object with a string ``re`` (the scenarios' are short plain
    text), unless the line is too long (dropped unread)."""
    told = []
    for number, line in enumerate(lines):
        kind = "too_long" if len(line.encode("utf-8", "surrogateescape")) > LINE_LIMIT else raw_kind(line)
        assert kind is not None, "a foreign line is an event"
        told.append(f"{number} error {kind} re={None if kind == 'too_long' else _named_re(line)}")
    return told + [f"{len(lines)} gone"]


def _named_re(line: str) -> str | None:
    """The ``re`` a line names, where it is a JSON object of readable text."""
    if undecodable(line):
        return None
    try:
        value = json.loads(line)
    except ValueError:
        return None
    named = value.get("re") if isinstance(value, dict) else None
    return named if isinstance(named, str) else None


# ``"agent": "serve-closed"``: a second ``eukhe agent serve`` for a session its agent serves (so a
# client, as ``serve-client``), started with no stdin at all: its input has ended before any request,
# and a client ends once its input has ended and its requests are answered (impl/eukhe/agent/daemon.py's
# module docstring): it ends by itself, exit 0, having printed at most its client's greeting, which
# its end may come before (so the greeting is not told).
CLOSED_CLIENT = "stdin closed: exit 0, printed at most its greeting"
STUBBORN_RUN = "stubborn-1"  # the run the stubborn loop's turn_start names
STUBBORN_ROW = "from a thread"  # the text of the row it emits from a thread of its own


# ``"agent": "stalled"``: the stubborn loop's agent (its line limit the protocol's), with ``stall``, a
# connection of the bridge's that never reads: it gets its greeting, then every broadcast event; a
# turn's text ``repeat`` times over (past what a socket holds unread) makes its turn_start an event
# the connection cannot take whole. ``close``: the agent ends every connection (Daemon.close: "the
# clients"), one that does not read too, once what was queued for it cannot be written in time; so
# that connection reads its greeting, then the line it was cut in, then its end.
STALLED = "a connection that does not read"
STALLED_END = "the connection that did not read: its greeting, then a line cut short, then its end"
SHORT_TEXT = 200  # a turn_start of a longer text is told by its size


def turn_start_line(text: str) -> str:
    if len(text) > SHORT_TEXT:
        return f"turn_start of {len(text.encode('utf-8'))} bytes"
    return f"turn_start {json.dumps(text, ensure_ascii=False)}"


def stubborn(world: World, events: list[dict[str, object]]) -> list[str]:
    """``"agent": "stubborn"``: the in-process agent with a turn loop of the bridge's (the Runner
    protocol is any loop's), one that breaks the loop's side of the protocol as the module
    docstring of impl/eukhe/agent/daemon.py says the agent survives it: its turn emits its
    turn_start, then a row from a thread of its own (``emit`` is safe from any thread: it reaches
    every client, in order), then an event the protocol does not have (dropped: every client gets
    an ``error`` of kind bad_event instead), then runs on, and its ``abort`` ends nothing. The
    agent's answers while the turn runs: ``turn`` refused ``busy``, ``steer`` joins it,
    ``follow_up`` runs after it, ``abort`` is told as done (the loop is asked; it is the loop's to
    end). ``close``, the agent ending (Daemon.close: the turn aborted, then, once its time is up,
    cancelled): the turn ends failed, "the turn was cancelled", which the clients still connected
    get, and then their connection ends (``gone``)."""
    lines = [f"0 {state_line(world)}"]
    running = False
    stalled = False
    for number, event in enumerate(events, 1):
        kind = event["request"]
        said: list[str]
        if kind == "stall":
            stalled = True
            said = [STALLED]
        elif kind == "turn" and running:
            said = ["error busy"]
        elif kind in ("turn", "steer", "follow_up") and not running:
            running = True
            said = ["ok the turn starts", turn_start_line(str(event["text"]) * int(str(event.get("repeat", 1)))), f"row note {STUBBORN_ROW}", "error bad_event"]
        elif kind == "steer":
            said = ["ok the message joins the running turn"]
        elif kind == "follow_up":
            said = ["ok the message runs after this turn"]
        elif kind == "abort":
            said = ["ok the turn is aborted"] if running else ["error idle"]
        elif kind == "status":
            said = [state_line(world)]
        elif kind == "close":
            said = (['turn_end failed "the turn was cancelled"'] if running else []) + ["gone"] + ([STALLED_END] if stalled else [])
            running = False
        else:
            raise ValueError(f"no stubborn scenario sends {kind!r}")
        lines.extend(f"{number} {line}" for line in said)
    return lines


def transcript(events: list[dict[str, object]]) -> list[str]:
    """The model side of the daemon bridge: the first event opens the session (its state), each
    next one is a request (what it broadcast, then its reply)."""
    mode = events[0].get("agent")
    if mode == "foreign":
        lines = events[0]["lines"]
        assert isinstance(lines, list)
        return foreign([str(line) for line in lines])
    if mode == "serve-closed":
        return [f"0 {CLOSED_CLIENT}"]
    if mode in ("stubborn", "stalled"):
        return stubborn(open_session(events[0]["catalog"], True), events[1:])
    cfg = events[0].get("global_cfg")
    world = open_session(events[0]["catalog"], mode is not None, mode in TERMINAL, mode == "chat", mode == "chat-busy", None if cfg is None else str(cfg), events[0].get("agents_file") is True, events[0].get("broken_stack") is True, events[0].get("stale_socket") is True, events[0].get("deaf") is True)
    lines = [f"0 {state_line(world)}"]
    if mode == "serve-held":  # first, a serve stopped while it claims a session a writer with no socket holds
        lines.insert(0, f"0 {STOPPED_WHILE_CLAIMING}")
    for number, event in enumerate(events[1:], 1):
        world, said = step(world, event)
        lines.extend(f"{number} {line}" for line in said)
    return lines


if __name__ == "__main__":
    from bend import scenario

    raise SystemExit(scenario.main(transcript, sys.argv[1:]))
