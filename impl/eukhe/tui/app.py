"""The terminal UI: a full-screen client of the agent of one session (issue 29), on Textual.

The app is a client of the agent's protocol only (``eukhe.agent.protocol``): it reaches the
session's agent (``eukhe.agent.reach``: connect, or start ``eukhe agent serve``), shows the
agent's ``state`` first (the rows so far and the turn under way, so a client that attaches
mid-turn catches up), then every event in order, and sends requests. Every client of a session
sees the same turn stream; the app keeps nothing the agent does not send.

Keys go through binds.cfg only (control.md S4.5, ``eukhe.tui.keys``): a bound key's set, toggle
and alias commands go to the session as a ``cvar`` line; its ``action`` commands run here (the
screen that gets the key runs its own action); a key with no bind goes to the draft. The
warnings of binds.cfg show at startup and at /reload. Slash commands (``eukhe.tui.commands``)
are sent as the session's requests (S4 cvar lines, S5.7 /remind and /force, S10 /effort,
/model, and /rewind, which the agent answers with a ``state`` for every client). ``/new`` and
``/fork [ENTRY]`` make a session in the client (``Store.create``; ``Store.fork`` reads this one
as a reader, at ENTRY or at the head of a fresh ``state``) and then ``switch`` to it, the one
way to another session: the old connection closes, the transcript is cleared to a row naming
the session, and the new session's agent is reached (or started) and its ``state`` shown. An
agent this app started ends by itself once its last client has gone. The status line
is ``eukhe.tui.status``: it shows the session's switches (the service tier, autonomous) as the
agent sends them, in its ``state`` and in each ``switches`` event. Dictation (S9, five rules)
is ``eukhe.tui.dictation``: ``app.stt.pushToTalk`` and ``app.stt.toggle`` record into the
draft while the session's ``stt.enabled`` is on, and ``app.interrupt`` (Esc) mid-take cancels
the take before it aborts a turn. The recorder and the transcriber can be given (the tests give
a ``/bin/sh`` recorder on PATH and a function); by default they are the first recorder on PATH
and the dictation role's model.

``run_tui`` runs the app in the terminal and returns the exit code.
"""

from __future__ import annotations

import asyncio
import itertools
import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, ClassVar

from textual import events
from textual.app import App, ComposeResult
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Static

from eukhe.agent import protocol as p
from eukhe.agent.client import AgentClient
from eukhe.agent import reach
from eukhe.session import SessionError, Store
from eukhe.tui import commands, dictation, keys
from eukhe.tui.editor import Draft, Hints
from eukhe.tui.picker import ModelPicker
from eukhe.tui.status import Phase, Status, line
from eukhe.tui.transcript import Transcript

Reach = Callable[[str], Awaitable[tuple[AgentClient, "subprocess.Popen[bytes] | None"]]]  # a session id -> its agent
SESSION_ONLY_LINE = "client-only"  # a cvar outcome: the command is the client's (an action)


def stack_kinds(layers: list[dict[str, Any]]) -> list[str]:
    """The Director stack as the status line names it: each layer's kind, top first (``?``: a
    layer the agent sent without one)."""
    return [str(layer.get("kind", "?")) for layer in layers]


class BindPressed(Message):
    """A key's bind, on its way through the focused widget's queue to the app."""

    def __init__(self, pressed: keys.Pressed) -> None:
        super().__init__()
        self.pressed = pressed


class EukheApp(App[None], inherit_bindings=False):
    """The client of one session's agent (see the module docstring)."""

    ENABLE_COMMAND_PALETTE: ClassVar[bool] = False
    TITLE = "eukhe"
    CSS: ClassVar[str] = """
    Screen { layout: vertical; }
    #status { height: 1; background: $panel; color: $text; padding: 0 1; }
    """

    def __init__(
        self,
        agent_dir: Path,
        session_dir: Path,
        session: str,
        project_dir: Path,
        *,
        reach: Reach | None = None,
        recorder: dictation.StartTake = dictation.start_recorder,
        transcriber: dictation.Transcriber | None = None,
    ) -> None:
        super().__init__()
        self.agent_dir = Path(agent_dir)
        self.session_dir = Path(session_dir)
        self.session = session
        self.project_dir = Path(project_dir)
        self._reach = reach
        self.keys = keys.load(self.agent_dir)
        self.status = Status()
        self.client: AgentClient | None = None
        self.started: subprocess.Popen[bytes] | None = None  # the agent this app started, if it did
        self.model: p.ModelRef | None = None
        self.head: int | None = None  # the head of main, as the agent's last state had it
        self.attached = False  # whether this connection's first state has come
        self.switching = asyncio.Lock()  # one switch of session at a time
        self.asked: dict[str, str] = {}  # request id -> what it was sent for
        self.ids = itertools.count(1)
        self.seen: list[p.Event] = []  # every event of the agent, in order (for a reader and the tests)
        self.switches: dict[str, Any] = {}  # the session's switches, as the agent last sent them
        heard = transcriber if transcriber is not None else dictation.role_transcriber(self.agent_dir, self.project_dir)
        self.dictation = dictation.Dictation(_DictationScreen(self), recorder, heard)

    # -- layout ------------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Transcript()
        hints = Hints(markup=False, id="hints")
        hints.display = False
        yield hints
        yield Draft()
        yield Static(line(self.status), id="status", markup=False)

    @property
    def main_screen(self) -> Screen[Any]:
        """The screen of the transcript, the draft and the status line (under a picker too)."""
        stack = self.screen_stack
        return stack[0] if stack else self.screen

    @property
    def transcript(self) -> Transcript:
        return self.main_screen.query_one(Transcript)

    @property
    def draft(self) -> Draft:
        return self.main_screen.query_one(Draft)

    @property
    def status_text(self) -> str:
        return line(self.status)

    def show_status(self) -> None:
        if not self.screen_stack:  # the app is torn down
            return
        for shown in self.main_screen.query("#status").results(Static):
            shown.update(self.status_text)

    async def on_mount(self) -> None:
        self.draft.focus()
        for warning in self.keys.warnings:
            await self.transcript.error(warning)
        self.run_worker(self._pump(), group="agent", exclusive=True)

    async def on_unmount(self) -> None:
        """The client's connection ends with the app (an agent it started then ends once it has
        no client left: ``agent serve --idle-exit``). A take under way is cancelled."""
        await self.dictation.close()
        if self.client is not None:
            await self.client.close()

    def on_text_area_changed(self, event: Draft.Changed) -> None:
        if not self.screen_stack:  # the app is torn down
            return
        for hints in self.main_screen.query(Hints).results(Hints):
            hints.show_for(event.text_area.text)

    # -- the agent -----------------------------------------------------------------------------------

    async def _reach_agent(self) -> tuple[AgentClient, subprocess.Popen[bytes] | None]:
        if self._reach is not None:
            return await self._reach(self.session)
        return await reach.reach(self.agent_dir, self.session_dir, self.session, self.project_dir)

    async def _pump(self) -> None:
        try:
            client, self.started = await self._reach_agent()
        except (OSError, reach.AgentUnreachable) as error:
            await self.transcript.error(f"cannot reach the agent of session {self.session}: {error}")
            return
        self.client = client
        self.attached = False
        self.status.connected = True
        async for event in client.events():
            self.seen.append(event)
            await self.take(event)
            self.show_status()
        self.status.connected = False
        self.status.running = False
        self.show_status()
        await self.transcript.error("the agent's connection ended")

    async def ask(self, request: p.Request, purpose: str = "") -> str | None:
        """Send a request (its id remembers ``purpose``); None when there is no agent."""
        if self.client is None or self.client.gone:
            await self.transcript.error("not connected to the agent: nothing was sent")
            return None
        ident = f"tui-{next(self.ids)}"
        self.asked[ident] = purpose or request.type
        await self.client.send(request.model_copy(update={"id": ident}))
        return ident

    async def take(self, event: p.Event) -> None:
        """One event of the agent, onto the screen."""
        re = getattr(event, "re", None)
        purpose = self.asked.pop(re, "") if isinstance(re, str) else ""
        if isinstance(event, p.StateEvent):
            await self._state(event, first=not self.attached)
            self.attached = True
            if purpose == "fork":  # /fork with no entry: at the head the agent has now
                self.run_worker(self.fork(event.head))
        elif isinstance(event, p.ModelEvent):
            self._model(event.model, event.thinking_level, event.offered_levels)
        elif isinstance(event, p.ThinkingLevelEvent):
            if event.level is None:
                await self.transcript.row("the thinking level stays: the model offers fewer than two levels")
            else:
                self.status.thinking, self.status.offered = event.level, event.offered_levels
                if purpose == "command":
                    await self.transcript.row(f"thinking level {event.level}")
        elif isinstance(event, p.DirectorsEvent):
            self.status.stack = stack_kinds(event.stack)
        elif isinstance(event, p.SwitchesEvent):
            self._switches(event.switches)
        elif isinstance(event, p.CvarResultEvent):
            await self._cvar_result(event, purpose)
        elif isinstance(event, p.CvarSavedEvent):
            written = ", ".join(f"{s.cvar}={s.value}" for s in event.written) or "no sets"
            await self.transcript.row(f"/cvar save: {written} -> {event.path}")
        elif isinstance(event, p.ModelCatalogEvent):
            if purpose == "picker":
                await self.push_screen(ModelPicker(event, self.model), self._picked)
        elif isinstance(event, p.MemoryEvent):
            self.status.mem_used, self.status.mem_limit = event.view_bytes, event.ceiling
            for line in ([event.text] if event.text else []) + event.lines:
                await self.transcript.row(line)
        elif isinstance(event, p.OkEvent):
            if event.request not in ("turn", "status"):
                await self.transcript.row(event.text or f"{event.request}: done")
        elif isinstance(event, p.ErrorEvent):
            await self.transcript.error(f"{event.kind}: {event.message}")
        else:
            if isinstance(event, p.TurnStartEvent):
                self.status.running = True
            elif isinstance(event, p.TurnEndEvent):
                self.status.running = False
            await self.transcript.event(event)

    async def _state(self, state: p.StateEvent, *, first: bool) -> None:
        self.head = state.head
        self._model(state.model, state.thinking_level, state.offered_levels)
        self.status.goal = state.goal
        self.status.stack = stack_kinds(state.directors)
        self.status.running = state.running
        self._switches(state.switches)
        if first:  # what happened before this client: the agent's rows and the turn under way
            for row in state.rows:
                await self.transcript.event(row)
            for event in state.turn:
                await self.transcript.event(event)

    def _switches(self, switches: dict[str, Any]) -> None:
        """The session's switches (an agent that sends none leaves the tier unknown)."""
        self.switches = dict(switches)
        tier = switches.get(commands.TIER_CVAR)
        self.status.tier = tier if isinstance(tier, str) else None
        self.status.autonomous = switches.get("autonomous.enabled") is True

    def stt_enabled(self) -> bool:
        """S9 dictation rule 1: the session's stt.enabled, as the agent last sent it."""
        return self.switches.get(dictation.STT_CVAR) is True

    def _model(self, model: p.ModelRef | None, thinking: str, offered: list[str] | None) -> None:
        self.model = model
        self.status.model = None if model is None else f"{model.provider}/{model.id}"
        self.status.thinking, self.status.offered = thinking, offered

    async def _cvar_result(self, event: p.CvarResultEvent, purpose: str) -> None:
        for outcome in event.outcomes:
            if outcome.outcome == SESSION_ONLY_LINE and outcome.command.startswith("action "):
                if purpose == "press-aliased":
                    await self.run_actions([outcome.command.removeprefix("action ").strip()])
                continue
            where = " (global)" if event.global_ else ""
            text = f"{outcome.command}{where}: {outcome.outcome}"
            await (self.transcript.error(text) if outcome.refused else self.transcript.row(text))

    def _picked(self, choice: str | None) -> None:
        if choice is not None:
            self.run_worker(self.ask(p.CommandRequest(line=f"/model {choice}")))

    # -- keys ----------------------------------------------------------------------------------------

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and not event.is_forwarded:
            pressed = self.keys.press(event.key)
            if pressed is not None:
                # The keys before this one were forwarded to the focused widget's queue: the
                # bind goes through that queue too (and bubbles back here), so Enter sends a
                # draft that holds every key typed before it, however fast they came.
                (self.focused or self.screen).post_message(BindPressed(pressed))
                return
        await super().on_event(event)

    async def on_bind_pressed(self, message: BindPressed) -> None:
        message.stop()
        await self.run_pressed(message.pressed)

    async def run_pressed(self, pressed: keys.Pressed) -> None:
        """Run a bind: its session commands as one cvar line, its actions here."""
        if pressed.line:
            await self.ask(p.cvar_request(pressed.line), "press-aliased" if pressed.aliased else "press")
        await self.run_actions(list(pressed.actions))

    async def run_actions(self, actions: list[str]) -> None:
        screen = self.screen
        for action in actions:
            if isinstance(screen, ModelPicker):  # the picker runs its own actions only
                if action == "app.interrupt":
                    screen.dismiss(None)
                elif action == "editor.submit":
                    screen.choose()
                continue
            await self.action(action)

    async def action(self, action: str) -> None:
        """One client action of a bind (``keys.ACTIONS``)."""
        if action == "editor.submit":
            await self.submit()
        elif action == "editor.followUp":
            await self.submit(follow_up=True)
        elif action == "editor.newline":
            self.draft.newline()
        elif action == "editor.clear":
            self.draft.clear()
        elif action == "editor.complete":
            self.draft.complete_draft()
        elif action == "app.interrupt":
            if await self.dictation.cancel():  # Esc mid-take cancels the take (S9 dictation rule 5)
                return
            if self.status.running:
                await self.ask(p.AbortRequest())
        elif action == "app.model.select":
            await self.ask(p.GetModelCatalogRequest(), "picker")
        elif action == "app.thinking.cycle":
            await self.ask(p.CycleThinkingLevelRequest())
        elif action == "app.thinking.toggle":
            shown = self.transcript.toggle_thinking()
            await self.transcript.row("thinking shown" if shown else "thinking hidden")
        elif action == "app.tools.expand":
            self.transcript.toggle_tools()
        elif action == "app.quit":
            self.exit()
        elif action in dictation.ACTIONS:
            await self.dictation.press(action)
        else:
            await self.transcript.error(f"action {action}: no such action (the actions: {', '.join(keys.ACTIONS)})")

    # -- the draft -----------------------------------------------------------------------------------

    async def submit(self, *, follow_up: bool = False) -> None:
        text = self.draft.text
        if not text.strip():
            return
        self.draft.clear()
        if text.startswith("/"):
            await self.slash(text.strip())
        elif follow_up and self.status.running:
            await self.ask(p.FollowUpRequest(text=text))
        elif self.status.running:
            await self.ask(p.SteerRequest(text=text))
        else:
            await self.ask(p.TurnRequest(text=text))

    async def slash(self, text: str) -> None:
        planned = commands.plan(text)
        if isinstance(planned, commands.Refuse):
            await self.transcript.error(planned.message)
        elif isinstance(planned, commands.Send):
            await self.ask(planned.request, "command")
        elif planned.verb == "picker":
            await self.ask(p.GetModelCatalogRequest(), "picker")
        elif planned.verb == "reload":
            self.keys = keys.load(self.agent_dir)
            for warning in self.keys.warnings:
                await self.transcript.error(warning)
            await self.transcript.row(f"binds.cfg read: {len(self.keys.binds.keys())} keys bound, {len(self.keys.warnings)} warnings")
            await self.ask(p.StatusRequest())
        elif planned.verb == "quit":
            self.exit()
        elif planned.verb == "new":
            self.run_worker(self.new_session())
        elif planned.verb == "fork":
            if planned.entry is not None:
                self.run_worker(self.fork(planned.entry))
            elif self.client is not None and not self.client.gone:
                await self.ask(p.StatusRequest(), "fork")  # the head as the agent has it now
            else:
                self.run_worker(self.fork(self.head))  # the head of the last state
        elif planned.verb == "tier_shown":
            known = self.status.tier or "not known (this agent sends no switches)"
            await self.transcript.row(f"service tier: {known}; /tier {'|'.join(commands.TIERS)} sets it")
        else:
            for help_line in commands.COMMANDS.values():
                await self.transcript.row(help_line)
            for action, does in keys.ACTIONS.items():
                bound = ", ".join(self.keys.keys_of(action)) or "no key"
                await self.transcript.row(f"{action} ({bound}): {does}")

    # -- sessions ------------------------------------------------------------------------------------

    @property
    def store(self) -> Store:
        return Store(self.session_dir.parent)

    async def new_session(self) -> None:
        """/new: a new empty session, then a switch to it."""

        def create() -> str:
            with self.store.create() as created:
                return created.id

        try:
            made = await asyncio.to_thread(create)
        except (SessionError, OSError) as error:
            await self.transcript.error(f"/new: {error}")
            return
        await self.switch(made, "a new session")

    async def fork(self, entry: int | None) -> None:
        """/fork [ENTRY]: a new session whose main is this session's branch up to ``entry``
        (``Store.fork``, as a reader: the agent goes on writing), then a switch to it."""
        source = self.session
        if entry is None:
            await self.transcript.error(f"/fork: session {source} has no entries: nothing to fork")
            return
        try:
            forked = await asyncio.to_thread(self.store.fork, source, entry)
        except (SessionError, OSError) as error:
            await self.transcript.error(f"/fork {entry}: {error}")
            return
        await self.switch(forked, f"forked from session {source} at entry {entry}")

    async def switch(self, session_id: str, why: str) -> None:
        """Become a client of session ``session_id``'s agent: the old connection closes, what
        the app showed of the old session goes, a row names the new one, and its agent is
        reached (or started) and its state shown."""
        async with self.switching:
            self.workers.cancel_group(self, "agent")  # the old connection's pump: it shows nothing more
            old, self.client = self.client, None
            if old is not None:
                await old.close()
            self.session = session_id
            self.session_dir = self.session_dir.parent / session_id
            self.started = None
            self.model, self.head, self.attached = None, None, False
            self.asked.clear()
            self.seen.clear()
            self.switches = {}
            self.status = Status(dictation=self.status.dictation)
            self.show_status()
            await self.transcript.clear()
            await self.transcript.row(f"session {session_id}: {why}")
            self.run_worker(self._pump(), group="agent", exclusive=True)


class _DictationScreen:
    """What dictation does on the screen of the app (``dictation.Screen``)."""

    def __init__(self, app: EukheApp) -> None:
        self.app = app

    def stt_enabled(self) -> bool:
        return self.app.stt_enabled()

    def dictation_phase(self, phase: Phase | None) -> None:
        self.app.status.dictation = phase
        self.app.show_status()

    def insert(self, text: str) -> None:
        self.app.draft.insert(text)

    async def row(self, text: str) -> None:
        await self.app.transcript.row(text)

    async def error(self, text: str) -> None:
        await self.app.transcript.error(text)


def run_tui(agent_dir: Path, session_dir: Path, session: str, project_dir: Path) -> int:
    """The terminal UI on the session's agent, in the foreground; its exit code."""
    app = EukheApp(agent_dir, session_dir, session, project_dir)
    app.run()
    return app.return_code or 0  # 1 when the app failed (Textual prints the error)
