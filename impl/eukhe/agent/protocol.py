"""The agent's protocol: JSON lines between the agent process of a session and its clients.

One agent process serves one session (``eukhe.agent.daemon``). It listens on a Unix socket in
the agent dir, ``<agent dir>/run/agent/<name>`` with ``<name>`` from ``socket_name`` (the
session's id, cut to 40 characters, and 12 hex digits of the sha256 of the session dir's real
path, so two sessions dirs never share a socket), reached through ``eukhe.paths.socket_address``.
The directory is made 0700: only the user connects. Any number of clients connect, at any time.

Framing. Each message is one line of UTF-8 JSON (one object), ended by ``\\n`` (a ``\\r``
before it is taken away). A line is at most ``LINE_LIMIT`` bytes (64 MiB) each way: a longer one
is discarded as it arrives, up to its newline, and answered with an error of kind ``too_long``;
the next line is read as usual. Every message carries ``"v": 1`` (``PROTOCOL_VERSION``) and a
``"type"``; no other key than those listed below is allowed (an unknown key is an error).
Strings are Unicode text: a lone surrogate escape (``"\\ud800"``) in a request is refused.

Requests (client to agent); each may carry ``"id"`` (a string of at most 256 characters, the
client's own), which every reply to it repeats as ``"re"``:

=======================  ===================================================================
``turn {text}``          a user turn (refused with ``busy`` while a turn runs)
``steer {text}``         a message that joins the running turn between tool calls (no turn
                         running: it starts one)
``follow_up {text}``     a message queued to run as the next turn after the running one (no
                         turn running: it starts one)
``abort {}``             cancel the running turn (``idle`` when none runs)
``cvar {line, global}``  a console line (control.md S4: ``set``, ``toggle``, ``alias``, ...,
                         ``;`` between commands) on the session's agent ``main``; with
                         ``"global": true`` its ``set`` and ``toggle`` commands go to the
                         global config.cfg (/set --global). ``global`` defaults to false
``cvar_save {}``         /cvar save: the agent's sets of persist cvars to agents/main.cfg
``command {line}``       a session slash command: ``/remind TEXT``, ``/force TOOL [--tries
                         N]`` (S5.7), ``/effort [LEVEL]`` (the thinking level, S10),
                         ``/model [PROVIDER/MODEL]`` (the session's model), ``/agent NAME
                         TASK`` (a subagent in the background: ``eukhe.agent.subagents``),
                         ``/memory [view | model [PROVIDER/MODEL [LEVEL]]]`` (the chat's
                         memory: ``eukhe.agent.chat``), ``/rewind ENTRY`` (the head of
                         main moves to ENTRY; refused with ``busy`` while a turn runs; every
                         client then gets ``state`` again, before the asker's ``ok``)
``get_model_catalog {}`` every model of the catalog (S6 catalog and models.json)
``cycle_thinking_level   one offered step of the thinking level (S10 cycle)
{backward}``             (``backward`` defaults to false)
``status {}``            the session's state (a ``state`` event)
=======================  ===================================================================

Events (agent to clients). A client that connects gets ``state`` first: the session id, the
agent's pid, the head of the main conversation, the Director stack (the layers of the
eukhe.directors document, bottom first), the goal (the eukhe.goal document), the settings
errors, the model and the thinking level (with the offered levels; null outside the catalog),
whether a turn runs and the events of the turn under way (consecutive deltas and thinking
joined), the rows the agent showed since it started, the number of clients, and ``switches``:
the session's values of the switches a client shows (``SWITCHES``: ``serviceTier``,
``autonomous.enabled``, ``stt.enabled``; an object from cvar id to value, empty from an agent
that sends none). Every event
the agent broadcasts after that reaches every client in the order it was made, so a client
that comes late, or comes back, misses nothing: what happened before it is in ``state`` and in
the session log.

Events of a turn, made by the turn loop and broadcast:

- ``turn_start {run, text}``; ``turn_end {run, reason, text}`` (reason: answered, failed,
  aborted, not_called, max_tool_rounds, max_notes, refused, ...);
- ``delta {text}``, ``thinking {text}``: the reply and the model's thoughts as they stream;
- ``tool_call {id, name, arguments}``, ``tool_result {id, text, is_error, kind}`` (``kind``
  may be null);
- ``row {kind, text}``: a row for the user; kind one of ``ROW_KINDS`` (settings_error, effort,
  default_model, progress_pause, memory, director, note, retry, compaction, title, subagent,
  refused: the model's refusal, with what the provider said of it; joined: a message sent
  while the turn ran, joining it);
- ``retry {attempt, retries, kind, wait}`` (``wait`` in seconds, finite, at least 0);
- ``note {kind, used, max}``: a noted retry spent one of the notes;
- ``step {decision, rule, verdicts, continuation}``: the Director stack's step after a final
  answer (decision continue, yield or fail; the asked layers as ``kind:verdict``, top first;
  the continuation text, or null);
- ``subagent {agent, event}``: an event of a subagent's own turn loop (one of the events
  above but ``subagent``), tagged with its name; its conversation is ``main.<agent>``.

Events the agent broadcasts itself: ``row`` (settings errors, the saved default model at open,
a changed thinking level or model), ``state`` (with no ``re``, after ``/rewind``: the session
as of its new head), ``directors {stack}`` (the stack after a change),
``model {re, model, thinking_level, offered_levels}`` (after a change of either; ``model`` is
``{provider, id}`` or null), ``switches {switches}`` (after a ``cvar`` request or a turn that
changed any of them: all of them, as in ``state``), and ``error`` of kind ``bad_event`` (the loop made an event this
protocol does not have: the event is dropped) or ``turn_failed`` (the turn ended with an
error; a ``turn_end`` with reason failed follows if the loop sent none).

Replies, to the client that asked only, each with ``re``:

- ``state`` (to ``status``);
- ``ok {re, request, text}``: the request was done (``request`` names its type; ``text`` says
  what was done);
- ``cvar_result {re, global, outcomes}``: each command of the line with its outcome
  (``{command, outcome, refused}``; a refused set's outcome is ``CvarError::<Kind>(<id>)``);
- ``cvar_saved {re, path, written}`` (``written``: ``{cvar, value}`` pairs);
- ``model_catalog {re, models, models_json_errors}`` (each model: ``{provider, id, name, api,
  reasoning, context_window, max_tokens, thinking_levels, source, service_tiers}``);
- ``thinking_level {re, level, offered_levels}`` (to ``cycle_thinking_level``, where ``level``
  is null when nothing changed, and to ``/effort``);
- ``model`` (to ``/model`` without an argument);
- ``memory {re, view_bytes, ceiling, messages, nodes, view_lines, text, lines}`` (to ``/memory``,
  ``/memory view`` and ``/memory model``, in the chat only: ``eukhe.agent.chat``); the same
  event without ``re`` and lines is broadcast after each turn of the chat;
- ``error {re, kind, message, cvar}``: the request was refused or failed; the connection stays
  open. ``cvar`` names the cvar of a CvarError, else null.

Error kinds of a line that is not a request (``ProtocolError``): ``not_utf8``, ``not_json``
(not JSON, nested more than 100 brackets deep, or a number JSON does not have such as NaN),
``not_object``, ``version`` (``v`` missing or not 1), ``unknown_type``, ``invalid`` (a field
missing, of the wrong type or unknown: the message names it), ``too_long``. Kinds of refused
requests: ``busy``, ``idle``, ``no_loop`` (turn loop not installed), ``CvarError``,
``ParseError``, ``ExpandError``, ``DocumentError`` (a settings file that cannot be read or
written: nothing is written), ``CommandError``, ``PushRefused``, ``LimitsError``,
``EffortError``, ``unknown_model``, ``not_chat`` (``/memory`` to an agent whose session is not
the chat, or whose chat memory another process owns), ``SessionError``, ``OSError``, ``internal`` (a bug: the
message names it). ``eukhe agent serve``, which relays between a terminal and the agent, adds
``disconnected`` (a request whose agent ended before answering) and ``output_dropped`` (lines
its stdout did not take in time).

Models are pydantic at this boundary only: ``decode_request`` and ``decode_event`` read a line
(``eukhe.strict_json``, then the model of its type), ``encode`` writes one, ``loop_event``
checks an event of the turn loop. Errors are ``ProtocolError`` naming the kind and what was
wrong.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Final, Literal, Union, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from eukhe import strict_json

PROTOCOL_VERSION: Final = 1
LINE_LIMIT: Final = 64 * 1024 * 1024  # bytes of one line, each way
MAX_REQUEST_ID: Final = 256  # characters of a request's id
SOCKET_DIR: Final = ("run", "agent")  # under the agent dir
RowKind = Literal[
    "settings_error", "effort", "default_model", "progress_pause", "memory", "director", "note", "retry", "compaction", "title", "subagent", "refused", "joined"
]
ROW_KINDS: Final = get_args(RowKind)
# the session's switches a client shows (the status line, dictation's stt.enabled): sent in
# ``state`` and in ``switches`` events
SWITCHES: Final = ("serviceTier", "autonomous.enabled", "stt.enabled")

# Kinds of a line that is not a message
NOT_UTF8, NOT_JSON, NOT_OBJECT, VERSION, UNKNOWN_TYPE, INVALID, TOO_LONG = (
    "not_utf8",
    "not_json",
    "not_object",
    "version",
    "unknown_type",
    "invalid",
    "too_long",
)


class ProtocolError(ValueError):
    """A line that is not a message of this protocol: its ``kind`` and what was wrong. ``re`` is
    the request's id when the line had a readable one (so the error can answer it)."""

    def __init__(self, kind: str, message: str, re: str | None = None) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message
        self.re = re


def socket_name(session_dir: Path) -> str:
    """The socket's file name for the session at ``session_dir`` (see the module docstring)."""
    real = os.path.realpath(session_dir)
    digest = hashlib.sha256(os.fsencode(real)).hexdigest()[:12]
    return f"{Path(real).name[:40]}-{digest}.sock"


def socket_path(agent_dir: Path, session_dir: Path) -> Path:
    return Path(agent_dir).joinpath(*SOCKET_DIR) / socket_name(session_dir)


# -- messages ------------------------------------------------------------------------------------


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    v: Literal[1] = 1  # PROTOCOL_VERSION


Said = Annotated[str, Field(min_length=1)]  # a user's message: never empty
JOINS_THE_TURN = "the message joins the running turn"  # the ok of a steer that joined a running turn (else: "the turn starts")


class _Request(_Message):
    id: Annotated[str, Field(max_length=MAX_REQUEST_ID)] | None = None


class TurnRequest(_Request):
    type: Literal["turn"] = "turn"
    text: Said


class SteerRequest(_Request):
    type: Literal["steer"] = "steer"
    text: Said


class FollowUpRequest(_Request):
    type: Literal["follow_up"] = "follow_up"
    text: Said


class AbortRequest(_Request):
    type: Literal["abort"] = "abort"


class CvarRequest(_Request):
    type: Literal["cvar"] = "cvar"
    line: str
    global_: bool = Field(default=False, alias="global")


def cvar_request(line: str, is_global: bool = False, id: str | None = None) -> CvarRequest:
    """A ``cvar`` request (its ``global`` key is a Python keyword: no argument can name it)."""
    return CvarRequest.model_validate({"line": line, "global": is_global, "id": id})


class CvarSaveRequest(_Request):
    type: Literal["cvar_save"] = "cvar_save"


class CommandRequest(_Request):
    type: Literal["command"] = "command"
    line: Annotated[str, Field(min_length=1)]


class GetModelCatalogRequest(_Request):
    type: Literal["get_model_catalog"] = "get_model_catalog"


class CycleThinkingLevelRequest(_Request):
    type: Literal["cycle_thinking_level"] = "cycle_thinking_level"
    backward: bool = False


class StatusRequest(_Request):
    type: Literal["status"] = "status"


Request = Union[
    TurnRequest,
    SteerRequest,
    FollowUpRequest,
    AbortRequest,
    CvarRequest,
    CvarSaveRequest,
    CommandRequest,
    GetModelCatalogRequest,
    CycleThinkingLevelRequest,
    StatusRequest,
]
REQUESTS: Final[dict[str, type[_Request]]] = {
    "turn": TurnRequest,
    "steer": SteerRequest,
    "follow_up": FollowUpRequest,
    "abort": AbortRequest,
    "cvar": CvarRequest,
    "cvar_save": CvarSaveRequest,
    "command": CommandRequest,
    "get_model_catalog": GetModelCatalogRequest,
    "cycle_thinking_level": CycleThinkingLevelRequest,
    "status": StatusRequest,
}

Natural = Annotated[int, Field(ge=0)]


# Events of a turn (the loop makes them)


class TurnStartEvent(_Message):
    type: Literal["turn_start"] = "turn_start"
    run: str
    text: str


class DeltaEvent(_Message):
    type: Literal["delta"] = "delta"
    text: str


class ThinkingEvent(_Message):
    type: Literal["thinking"] = "thinking"
    text: str


class ToolCallEvent(_Message):
    type: Literal["tool_call"] = "tool_call"
    id: str
    name: str
    arguments: str


class ToolResultEvent(_Message):
    type: Literal["tool_result"] = "tool_result"
    id: str
    text: str
    is_error: bool
    kind: str | None = None


class RowEvent(_Message):
    type: Literal["row"] = "row"
    kind: RowKind
    text: str


class RetryEvent(_Message):
    type: Literal["retry"] = "retry"
    attempt: Natural
    retries: Natural
    kind: str
    wait: Annotated[float, Field(ge=0, allow_inf_nan=False)]


class NoteEvent(_Message):
    type: Literal["note"] = "note"
    kind: str
    used: Natural
    max: Natural


class StepEvent(_Message):
    """The Director stack's step after a final answer (control.md S5.4, S5.5): its decision
    (continue, yield or fail), the rule that fired, the asked layers with their verdicts
    (``kind:verdict``, top first) and the continuation text of a continuing step."""

    type: Literal["step"] = "step"
    decision: Literal["continue", "yield", "fail"]
    rule: str
    verdicts: list[str]
    continuation: str | None = None


class TurnEndEvent(_Message):
    type: Literal["turn_end"] = "turn_end"
    run: str
    reason: str
    text: str


ChildEvent = Annotated[
    Union[
        TurnStartEvent,
        DeltaEvent,
        ThinkingEvent,
        ToolCallEvent,
        ToolResultEvent,
        RowEvent,
        RetryEvent,
        NoteEvent,
        StepEvent,
        TurnEndEvent,
    ],
    Field(discriminator="type"),
]


class SubagentEvent(_Message):
    """An event of a subagent's turn loop (``eukhe.agent.subagents``), tagged with the agent's
    name: its conversation is ``main.<agent>``."""

    type: Literal["subagent"] = "subagent"
    agent: str
    event: ChildEvent


LoopEvent = Annotated[Union[ChildEvent, SubagentEvent], Field(discriminator="type")]  # a child's events, and the subagent wrapper
LOOP_EVENTS: Final[dict[str, type[_Message]]] = {
    "turn_start": TurnStartEvent,
    "delta": DeltaEvent,
    "thinking": ThinkingEvent,
    "tool_call": ToolCallEvent,
    "tool_result": ToolResultEvent,
    "row": RowEvent,
    "retry": RetryEvent,
    "note": NoteEvent,
    "step": StepEvent,
    "turn_end": TurnEndEvent,
    "subagent": SubagentEvent,
}


# Events of the agent itself


class _Reply(_Message):
    re: str | None = None


class ModelRef(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    provider: str
    id: str


class StateEvent(_Reply):
    type: Literal["state"] = "state"
    session: str
    pid: int
    head: int | None
    directors: list[dict[str, Any]]
    goal: dict[str, Any] | None
    settings_errors: list[str]
    model: ModelRef | None
    thinking_level: str
    offered_levels: list[str] | None
    running: bool
    turn: list[LoopEvent]
    rows: list[RowEvent]
    clients: Natural
    switches: dict[str, Any] = Field(default_factory=dict)  # cvar id -> the session's value (SWITCHES)


class OkEvent(_Reply):
    type: Literal["ok"] = "ok"
    request: str
    text: str = ""


class MemoryEvent(_Reply):
    """The chat memory's use (the status bar's ``mem N/128K``): a reply to ``/memory`` with its
    text and lines, and broadcast after each turn of the chat (``re`` null, no lines)."""

    type: Literal["memory"] = "memory"
    view_bytes: Natural
    ceiling: Natural
    messages: Natural
    nodes: Natural
    view_lines: Natural
    text: str = ""
    lines: list[str] = Field(default_factory=list)


class ErrorEvent(_Reply):
    type: Literal["error"] = "error"
    kind: str
    message: str
    cvar: str | None = None


class CvarOutcome(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    command: str
    outcome: str
    refused: bool


class CvarResultEvent(_Reply):
    type: Literal["cvar_result"] = "cvar_result"
    global_: bool = Field(default=False, alias="global")
    outcomes: list[CvarOutcome]


class CvarSet(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    cvar: str
    value: Any


class CvarSavedEvent(_Reply):
    type: Literal["cvar_saved"] = "cvar_saved"
    path: str
    written: list[CvarSet]


class CatalogEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    provider: str
    id: str
    name: str
    api: str
    reasoning: bool
    context_window: Natural
    max_tokens: Natural
    thinking_levels: list[str]
    source: str
    service_tiers: list[str] = Field(default_factory=lambda: ["default"])  # the tiers the model honours (S6.8)


class ModelCatalogEvent(_Reply):
    type: Literal["model_catalog"] = "model_catalog"
    models: list[CatalogEntry]
    models_json_errors: list[str]


class ThinkingLevelEvent(_Reply):
    type: Literal["thinking_level"] = "thinking_level"
    level: str | None
    offered_levels: list[str] | None


class ModelEvent(_Reply):
    type: Literal["model"] = "model"
    model: ModelRef | None
    thinking_level: str
    offered_levels: list[str] | None


class DirectorsEvent(_Message):
    type: Literal["directors"] = "directors"
    stack: list[dict[str, Any]]


class SwitchesEvent(_Message):
    type: Literal["switches"] = "switches"
    switches: dict[str, Any]


Event = Union[
    TurnStartEvent,
    DeltaEvent,
    ThinkingEvent,
    ToolCallEvent,
    ToolResultEvent,
    RowEvent,
    RetryEvent,
    NoteEvent,
    StepEvent,
    TurnEndEvent,
    SubagentEvent,
    StateEvent,
    OkEvent,
    ErrorEvent,
    CvarResultEvent,
    CvarSavedEvent,
    ModelCatalogEvent,
    ThinkingLevelEvent,
    ModelEvent,
    DirectorsEvent,
    SwitchesEvent,
    MemoryEvent,
]
EVENTS: Final[dict[str, type[_Message]]] = {
    **LOOP_EVENTS,
    "state": StateEvent,
    "ok": OkEvent,
    "error": ErrorEvent,
    "cvar_result": CvarResultEvent,
    "cvar_saved": CvarSavedEvent,
    "model_catalog": ModelCatalogEvent,
    "thinking_level": ThinkingLevelEvent,
    "model": ModelEvent,
    "directors": DirectorsEvent,
    "switches": SwitchesEvent,
    "memory": MemoryEvent,
}


# -- encoding and decoding -----------------------------------------------------------------------


def encode(message: BaseModel) -> bytes:
    """One line: the message's JSON (``type`` first after ``v``), UTF-8, ``\\n`` at the end. A
    lone surrogate in an event's text (a provider's broken bytes) is written as ``?``."""
    data = message.model_dump(mode="json", by_alias=True)
    ordered = {"v": data.pop("v"), "type": data.pop("type"), **data}
    text = strict_json.dumps(ordered, ensure_ascii=False, separators=(",", ":"))
    return text.encode("utf-8", "replace") + b"\n"


def decode_request(line: bytes | bytearray | str) -> Request:
    """The request of one line (its newline may be there or not); ProtocolError otherwise."""
    message = _decode(line, REQUESTS, "request", strict_json.MAX_DEPTH)
    return message  # type: ignore[return-value]  # REQUESTS holds only the Request models


def decode_event(line: bytes | bytearray | str) -> Event:
    """The event of one line; ProtocolError otherwise."""
    message = _decode(line, EVENTS, "event", strict_json.RECORD_DEPTH)
    return message  # type: ignore[return-value]  # EVENTS holds only the Event models


def loop_event(event: Mapping[str, Any]) -> Event:
    """An event the turn loop made (a dict with a ``type``; ``v`` may be left out), checked:
    ProtocolError of kind ``invalid`` or ``unknown_type`` naming what was wrong."""
    if not isinstance(event, Mapping):
        raise ProtocolError(NOT_OBJECT, f"an event of the turn loop is a dict, not {type(event).__name__}")
    value = {"v": PROTOCOL_VERSION, **event}
    return _validate(value, LOOP_EVENTS, "event of the turn loop", None)  # type: ignore[return-value]


def _decode(line: bytes | bytearray | str, table: Mapping[str, type[_Message]], what: str, depth: int) -> _Message:
    if isinstance(line, (bytes, bytearray)):
        try:
            text = bytes(line).decode("utf-8")
        except UnicodeDecodeError as error:
            raise ProtocolError(NOT_UTF8, f"the {what} is not UTF-8 (byte {error.start})") from None
    else:
        text = line
    if text.endswith("\n"):
        text = text[:-1]
    if text.endswith("\r"):
        text = text[:-1]
    if not text.strip():
        raise ProtocolError(NOT_JSON, f"an empty line is not a {what}: send one JSON object per line")
    try:
        value = strict_json.loads(text, limit=depth)
    except strict_json.JsonRefused as error:
        raise ProtocolError(NOT_JSON, f"the {what} is refused: {error.reason}") from None
    except json.JSONDecodeError as error:
        raise ProtocolError(NOT_JSON, f"the {what} is not JSON: {error.msg} at column {error.colno}") from None
    except RecursionError:  # pragma: no cover - strict_json refuses deep texts first
        raise ProtocolError(NOT_JSON, f"the {what} is nested too deep") from None
    if not isinstance(value, dict):
        raise ProtocolError(NOT_OBJECT, f"a {what} is a JSON object, not {_json_kind(value)}")
    ident = value.get("id") if table is REQUESTS else value.get("re")
    re = ident if isinstance(ident, str) and len(ident) <= MAX_REQUEST_ID and _text_only(ident) else None
    where = _surrogate(value)
    if where is not None:
        raise ProtocolError(NOT_UTF8, f"the {what} holds a lone surrogate escape in {where}: strings must be Unicode text", re)
    version = value.get("v")
    if "v" not in value:
        raise ProtocolError(VERSION, f"the {what} has no \"v\": every line carries \"v\": {PROTOCOL_VERSION}", re)
    if type(version) is not int or version != PROTOCOL_VERSION:
        raise ProtocolError(VERSION, f"protocol version {_show(version)} is not known: this agent speaks {PROTOCOL_VERSION}", re)
    return _validate(value, table, what, re)


def _validate(value: dict[str, Any], table: Mapping[str, type[_Message]], what: str, re: str | None) -> _Message:
    kind = value.get("type")
    model = table.get(kind) if isinstance(kind, str) else None
    if model is None:
        known = ", ".join(table)
        shown = "no \"type\"" if "type" not in value else f"type {_show(kind)}"
        raise ProtocolError(UNKNOWN_TYPE, f"a {what} with {shown}: the types are {known}", re)
    try:
        return model.model_validate(value)
    except ValidationError as error:
        first = error.errors()[0]
        place = ".".join(str(part) for part in first["loc"]) or "(the object)"
        count = error.error_count()
        more = f" (and {count - 1} more)" if count > 1 else ""
        raise ProtocolError(INVALID, f"{kind} {place}: {first['msg']}{more}", re) from None


def _json_kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array"


def _show(value: object) -> str:
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= 40 else text[:37] + "..."


def _text_only(text: str) -> bool:
    return not any("\ud800" <= char <= "\udfff" for char in text)


def _surrogate(value: object) -> str | None:
    """Where a string (or key) of a JSON value holds a lone surrogate; None when none does."""
    stack: list[tuple[object, str]] = [(value, "(the object)")]
    while stack:
        item, place = stack.pop()
        if isinstance(item, str):
            if not _text_only(item):
                return place
        elif isinstance(item, list):
            stack.extend((inner, f"{place}[{index}]") for index, inner in enumerate(item))
        elif isinstance(item, dict):
            for key, inner in item.items():
                if not _text_only(key):
                    return f"a key of {place}"
                stack.append((inner, key if place == "(the object)" else f"{place}.{key}"))
    return None


class LineBuffer:
    """Lines from a byte stream: ``feed`` takes the bytes that came and gives the lines they
    complete, without their newline; a line longer than ``limit`` is never held (its bytes are
    dropped as they come) and is given as None once its newline arrives. ``rest`` is what came
    after the last newline (an unterminated last line at the end of the stream)."""

    def __init__(self, limit: int = LINE_LIMIT) -> None:
        self.limit = limit
        self.buffer = bytearray()
        self.scanned = 0  # bytes of the buffer known to hold no newline
        self.skipping = False  # inside a line past the limit

    def feed(self, data: bytes) -> list[bytes | None]:
        lines: list[bytes | None] = []
        self.buffer += data
        while True:
            end = self.buffer.find(b"\n", self.scanned)
            if end < 0:
                self.scanned = len(self.buffer)
                if len(self.buffer) > self.limit:
                    self.skipping = True
                    self.buffer.clear()
                    self.scanned = 0
                return lines
            if self.skipping or end > self.limit:
                lines.append(None)
                self.skipping = False
            else:
                lines.append(bytes(self.buffer[:end]))
            del self.buffer[: end + 1]
            self.scanned = 0

    def rest(self) -> bytes | None:
        """The unterminated last line: None when it was past the limit, b"" when there is none."""
        return None if self.skipping else bytes(self.buffer)
