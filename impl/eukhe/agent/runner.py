"""The turn runner of a session's agent process: the daemon's ``Runner`` over the turn loop.

Each turn takes the session's model as it is then (``eukhe.agent.daemon.session_model``: the
pinned ``eukhe.model`` document, else the saved default), its credentials and base URL as
``eukhe ask`` resolves them, and the stored thinking level (``eukhe.thinking_level``; off sends
none). Its requests are retried as the retry.* settings say (each retry an event), over one
HTTP pool kept for the agent's life (its turns reuse their connections), each attempt within the provider's providerMaxInFlight
(``eukhe.agent.inflight``); its tools work in the project directory with the session's tool budget
(``eukhe.agent.tools.registry.context_for``). A session with no usable model ends the turn at
once (``failed``), naming why.

Subagents (``eukhe.agent.subagents``): each turn offers the ``task`` tool besides the real tools,
and ``agent_command`` (``/agent NAME TASK``) starts a child in the background whose report joins
the turn under way, or is committed to main at once when none runs. ``close_subagents`` ends
them with the agent.

``steer`` and ``follow_up`` go to the turn under way; ``abort`` cancels it. The session's
compaction (``eukhe.agent.compaction``) lives across turns; its summaries come from the
session's model.

Titles (inference.md S9 Uses): the first user message of a session starts its title in the
background, so the turn never waits: the tiny role's model when one is installed (modelRoles.tiny,
its fallback chain, the catalog's tiny models), else one request to the session's own model.
The title is the ``eukhe.title`` document of main (``{"title", "by"}``) and a ``title`` row;
titles.generate false titles nothing, a session the user named keeps its name, and a failure
is no title.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from eukhe.agent.chat import CONTEXT_DOC, ChatBusy, ChatMemory, is_chat
from eukhe.agent.inflight import Gated, Slots
from eukhe.agent.compaction import SUMMARY_INTRO, SUMMARY_PROMPT, Compaction
from eukhe.agent.loop import ABORTED, FAILED, SYSTEM, Agent, Emit, messages_of, retry_event
from eukhe.agent.subagents import NO_MODEL, SubagentError, Subagents, report_row, spawn_of
from eukhe.agent.tools.registry import TOOLS, context_for
from eukhe.inference.tiers import model_tiers
from eukhe.memory.records import StoreError
from eukhe.session import MAIN, Kind, Session
from eukhe.settings.agent import CvarAgent, EukheSettings

THINKING_DOC = "eukhe.thinking_level"
TITLE_DOC = "eukhe.title"
DEFAULT_WINDOW = 128_000  # models.json's contextWindow default, for a model the catalog does not list
TIMEOUT_SECONDS = 120.0  # seconds without a byte before a request fails, as `eukhe chat` defaults


class NoUsableModel(Exception):
    """The session has no model a turn can use; the message says why."""


class SessionRunner:
    def __init__(self, session: Session, cvar: CvarAgent, emit: Emit) -> None:
        self.session = session
        self.cvar = cvar
        self.emit = emit
        self.main = session.conversation(MAIN)
        self._agent: Agent | None = None
        # What a client sent after the turn it asked for and before that turn's Agent exists (both
        # lines read in one go, before the turn's task ran): given to the Agent once it is made.
        self._early: list[tuple[Callable[[Agent, str], None], str]] = []
        self._aborted_early = False
        self._turns = 0
        self.titling: asyncio.Task[None] | None = None
        self.compaction: Compaction | None = None  # kept across turns: a queued summary waits for a run boundary
        self.subagents = Subagents(session, cvar, emit, self._spawn, self._deliver, self.workdir, self._steps)
        self.tools = (*TOOLS, self.subagents.tool())
        self.chat: ChatMemory | None = None  # the chat memory, when this session is the chat (eukhe.agent.chat)
        self.chat_error: str | None = None
        self.pool: Any = None  # the turns' HTTP pool (eukhe.inference.wire.pool.Pool), made at the first turn
        if is_chat(self.main.document(CONTEXT_DOC)):
            self._open_chat()

    def _open_chat(self) -> None:
        """Own the chat memory for the agent's life, and start its compactor; when another
        process owns it, every turn fails saying so."""
        from eukhe.memory.store import chat_dir

        try:
            self.chat = ChatMemory.open(chat_dir(self.agent_dir), lambda text: self.emit({"type": "row", "kind": "memory", "text": text}))
        except (ChatBusy, StoreError, OSError) as error:
            self.chat_error = str(error)
            self.emit({"type": "row", "kind": "memory", "text": f"memory: {error}"})
            return
        self.tools = (*self.chat.tools(), *self.tools)
        self.chat.offer(self.tools)
        self.chat.start_compactor(self.agent_dir, self.cvar.settings.cvars, TIMEOUT_SECONDS)

    @property
    def agent_dir(self) -> Path:
        return Path(self.cvar.settings.paths.agent_dir)

    @property
    def workdir(self) -> Path:
        project = self.cvar.settings.paths.project_dir
        return Path(project) if project is not None else Path.cwd()

    def _model(self) -> Any:
        from eukhe.agent.daemon import session_model
        from eukhe.inference.resolve import NoModel, resolve_model

        chosen = session_model(self.agent_dir, self.cvar)
        if chosen is None:
            raise NoUsableModel("the session has no model: pick one with /model")
        try:
            return resolve_model(self.agent_dir, self.cvar.settings.cvars, chosen.provider, chosen.id)
        except NoModel as error:
            raise NoUsableModel(str(error)) from error

    def _thinking(self) -> str | None:
        level = self.main.document(THINKING_DOC)
        return level if isinstance(level, str) and level != "off" else None

    async def turn(self, text: str) -> None:
        from eukhe.inference.wire.pool import Pool
        from eukhe.inference.wire.retry import Policy, Retrying

        self._turns += 1
        early, self._early = self._early, []
        if self._aborted_early:  # aborted before it began: the turn ends there, with what was sent into it
            self._aborted_early = False
            run = f"unstarted-{self._turns}"
            self.emit({"type": "turn_start", "run": run, "text": text})
            self.emit({"type": "turn_end", "run": run, "reason": ABORTED, "text": "the turn was aborted"})
            return
        try:
            if self.chat_error is not None:
                raise NoUsableModel(self.chat_error)
            model = self._model()
        except NoUsableModel as error:
            run = f"unstarted-{self._turns}"
            self.emit({"type": "turn_start", "run": run, "text": text})
            self.emit({"type": "turn_end", "run": run, "reason": FAILED, "text": str(error)})
            return
        if self._untitled():
            self.titling = asyncio.create_task(self._title(text, model))
        if self.pool is None:  # one HTTP client per provider for the agent's life (its turns reuse connections)
            self.pool = Pool()
        pool = self.pool
        try:
            client = Retrying(self._wire(model, pool), Policy.from_settings(self.cvar.value), notify=lambda r: self.emit(retry_event(r)))
            context = context_for(self.workdir, self.cvar.settings, self.cvar.family())
            self._agent = Agent(
                self.main, client, model.api, context, self.cvar.value, self.emit, tools=self.tools,
                thinking=self._thinking(), tiers=model_tiers(model), compaction=None if self.chat else self._compaction(model), chat=self.chat,
            )  # fmt: skip
            for send, message in early:
                send(self._agent, message)
            await self._agent.turn(text)
        finally:
            self._agent = None

    # -- the chat ---------------------------------------------------------------------------------

    def _chat(self) -> ChatMemory:
        """The chat memory; LookupError when this session is not the chat, or could not own it."""
        if self.chat is None:
            raise LookupError(self.chat_error or "/memory: this session is not the chat (`eukhe chat` serves it)")
        return self.chat

    def memory_event(self, re: str | None, text: str = "", lines: list[str] | None = None) -> dict[str, Any]:
        """The chat memory's use as a ``memory`` event (the status bar); LookupError outside the chat."""
        status = self._chat().status()
        keys = ("view_bytes", "ceiling", "messages", "nodes", "view_lines")
        return {"type": "memory", "re": re, **{key: status[key] for key in keys}, "text": text, "lines": lines or []}

    def memory_command(self, re: str | None, words: list[str]) -> dict[str, Any]:
        """``/memory [view | model ...]`` in the chat (ValueError names a bad line; LookupError
        when this session is not the chat)."""
        text, lines = self._chat().command(words, self.cvar.settings)
        if words[:1] == ["model"] and len(words) > 1:
            self._chat().start_compactor(self.agent_dir, self.cvar.settings.cvars, TIMEOUT_SECONDS)
        return self.memory_event(re, text, lines)

    async def close(self) -> None:
        """The agent's end: the chat memory goes, its compactor's calls ended; the turns' HTTP
        pool closes."""
        if self.chat is not None:
            chat, self.chat = self.chat, None
            await chat.close()
        if self.pool is not None:
            pool, self.pool = self.pool, None
            await pool.aclose()

    def _wire(self, model: Any, pool: Any) -> Any:
        """The model's wire client on ``pool``: every request of the session (a turn's, a title's,
        a compaction's) within the provider's providerMaxInFlight."""
        return wire_for(self.agent_dir, self.cvar.settings, model, pool)

    def _compaction(self, model: Any) -> Compaction:
        """The session's compaction, its policy from this turn's model and settings: the window
        the catalog gives the model, its maxTokens as the reserve (derived), the switch and
        compaction.keepRecentTokens."""
        from eukhe.inference import catalog, threshold

        found = catalog.registry(self.agent_dir).find(model.provider, model.id)
        window = found.context_window if found is not None and found.context_window > 0 else DEFAULT_WINDOW
        policy = threshold.Policy(
            bool(self.cvar.value(threshold.ENABLED_CVAR)), window, float(model.max_tokens), keep_recent=int(self.cvar.value(threshold.KEEP_CVAR))
        )
        if self.compaction is None:
            self.compaction = Compaction(policy, lambda placed, entries: self._summary(model, placed, entries), lambda text: self.emit({"type": "row", "kind": "compaction", "text": text}))
        self.compaction.policy = policy
        return self.compaction

    async def _summary(self, model: Any, placed: str | None, entries: list[Any]) -> str:
        """The summary of ``entries`` by the session's model, after the summary placed before
        them (``placed``, so the history it holds is kept), over an HTTP pool of its own (a
        compaction may outlive the turn that started it)."""
        from eukhe.inference.wire import Message, Request, collect
        from eukhe.inference.wire.pool import Pool

        before = () if placed is None else (Message("user", SUMMARY_INTRO + placed),)
        async with Pool() as pool:
            asked = Request(before + messages_of(entries) + (Message("user", SUMMARY_PROMPT),), system=SYSTEM)
            return (await collect(self._wire(model, pool).stream(asked))).text

    def _untitled(self) -> bool:
        """Whether this turn's message is the session's first, and no title is set yet. The chat
        is never titled: it is the one chat, not a session with a first prompt."""
        if self.chat is not None or self.chat_error is not None or self.main.parent is not None or self.main.document(TITLE_DOC) is not None:
            return False
        return not any(entry.kind is Kind.USER for entry in self.main.model_view())

    async def _title(self, first: str, model: Any) -> None:
        from eukhe.inference.wire import Message, Request, collect
        from eukhe.inference.wire.pool import Pool
        from eukhe.tiny import uses
        from eukhe.tiny.client import TinyClient
        from eukhe.tiny.settings import TinySettings

        settings = TinySettings.from_cvars(self.cvar.settings.cvars)
        if not settings.titles:
            return
        try:
            chosen = uses.resolve("tiny", self.agent_dir, session_model=model.id, session_usable=True, settings=settings)
            if chosen == model.id:
                by = "model"
                async with Pool() as pool:
                    asked = Request((Message("user", uses.TITLE_PROMPT + first),), max_tokens=uses.TITLE_TOKENS)
                    reply = await collect(self._wire(model, pool).stream(asked))
                title = uses.parse_title(reply.text)
            else:
                by = "tiny"

                def local() -> str | None:
                    with TinyClient(self.agent_dir, chosen) as client:
                        return uses.ask_title(client, first)

                title = await asyncio.get_running_loop().run_in_executor(None, local)
        except Exception:  # a title is best effort: any failure is no title (S9)
            return
        if title is None or self.main.document(TITLE_DOC) is not None:
            return
        self.main.commit(documents={TITLE_DOC: {"title": title, "by": by}})
        self.emit({"type": "row", "kind": "title", "text": title})

    # -- subagents ----------------------------------------------------------------------------------

    def _spawn(self, name: str, task: str) -> dict[str, Any]:
        """The spawn line of a child: the session's model as it is now."""
        from eukhe.agent.daemon import session_model

        chosen = session_model(self.agent_dir, self.cvar)
        if chosen is None:
            raise SubagentError(NO_MODEL, "the session has no model: pick one with /model")
        level = self.main.document(THINKING_DOC)
        spawn = spawn_of(self.cvar, self.agent_dir, self.workdir, name, task, chosen, level if isinstance(level, str) else None)
        if self.chat is not None:
            spawn["view"] = self.chat.memory.view()  # the chat's subagent starts from the view, then its task (rule 57)
        return spawn

    def _steps(self, name: str, entries: list[Any]) -> None:
        """A child's steps, in the chat: its own log, what zoom("Name") reads (rule 54)."""
        if self.chat is not None:
            self.chat.agent_steps(name, entries)

    def _deliver(self, text: str) -> None:
        """A background report: it joins the turn under way, else it is committed now."""
        if self._agent is not None:
            self._agent.report(text)
        else:
            entry = report_row(text)
            self.main.commit([entry])
            if self.chat is not None:
                self.chat.log([entry])

    def agent_command(self, name: str, task: str) -> None:
        """``/agent NAME TASK``; SubagentError when refused."""
        self.subagents.start(name, task)

    async def close_subagents(self) -> None:
        await self.subagents.close()

    def subagent_jobs(self) -> set[asyncio.Task[None]]:
        return set(self.subagents.background)

    def steer(self, text: str) -> None:
        if self._agent is not None:
            self._agent.steer(text)
        else:
            self._early.append((Agent.steer, text))

    def follow_up(self, text: str) -> None:
        if self._agent is not None:
            self._agent.follow_up(text)
        else:
            self._early.append((Agent.follow_up, text))

    def abort(self) -> None:
        if self._agent is not None:
            self._agent.abort()
        else:
            self._aborted_early = True


def wire_for(agent_dir: Path, settings: EukheSettings, model: Any, pool: Any) -> Any:
    """``model``'s wire client on ``pool``, each request within the provider's
    providerMaxInFlight across the processes of the agent dir (a subagent's too)."""
    from eukhe.inference.wire import client_for

    wire: Any = client_for(model, timeout=TIMEOUT_SECONDS, pool=pool)
    limit = settings.config.limit(model.provider)
    return wire if limit is None else Gated(wire, Slots(agent_dir, model.provider, limit))


def runner_factory(session: Session, cvar: CvarAgent, emit: Emit) -> SessionRunner:
    return SessionRunner(session, cvar, emit)
