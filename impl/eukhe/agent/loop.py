"""The turn loop of a session (issue 28 item 2; control.md S5, inference.md S6.3, S6.5, S6.10).

A user turn is one run. It commits the user entry, starts the Directors' loop (``begin``, S5.6)
and then runs generations until the stack gives control back:

1. **A generation** is the requests up to one final answer. Each request is built from the
   main conversation's model view (the user entries, the replies with their calls and results,
   the continuation rows), the system prompt and the tools. A forced tool (S5.4, the top forced
   layer not yet called) ends the request with the soft prompt naming it, and sets the native
   forced choice as S6.3 says (``bend.infer.flag``: the first request only when the API
   supports it and it is free, each retry when the API supports it). The stream goes through
   the repetition guard (S6.5), one per attempt.
2. **At stream end** (S6.10, ``eukhe.inference.toolcalls.read_reply``): a reply with calls runs
   them, in order, each through ``eukhe.agent.tools.registry.run_call`` (argument repair,
   ``tool_unavailable``, the schema check), and the results go back in the next request; a
   reply whose calls leaked into its text gets them rebuilt; a ``length`` reply runs none (each
   call gets ``truncated``). The reply, each call and each result is committed as it happens
   (the reply ``{"text", "thoughts"}``, its signed reasoning blocks that the provider wants back
   in the tool loop; ``tool_call`` ``{"id", "name", "arguments"}``, with Gemini's ``signature``
   when it has one, and ``tool_result`` ``{"call_id", "text", "is_error"}``, the entries the
   progress check counts, S5.8).
3. **Noted retries** (S6.5, S6.10, harness.md H4.7 and H4.8 as inference.md restates them): a
   stream the guard cut (``loop``), a stream cut after its reply began (``cut``), no text and
   no call (``no_answer``), a ``length`` stop with no answer (``length``) and leaked markup
   that does not rebuild (``leak``, at most LEAK_NOTES in a row, then the text is the answer)
   are sent again at once with a note that is never logged. Each spends one of the
   generation's MAX_NOTES (8) notes, not a retry. With no note left, an empty reply is the
   final answer (the step fails it as a model error, S5.4), and a cut or looping stream ends
   the run (``max_notes``).
4. **Forced calls** (S5.4, S6.3): the response to a forced request is a call of the tool or a
   miss (``Directors.after_response``). A miss is dropped (its reply is not kept and its calls
   do not run) and the request is sent again; the miss after the tries fails the generation
   with ForcedToolError::NotCalled and ends the run (``not_called``).
5. **Tool rounds**: a generation runs at most ``maxToolRounds`` replies with calls (S4b.4); a
   reply with calls past that ends the run (``max_tool_rounds``) with its calls not run.
6. **The step** (S5.4 to S5.8): the final answer goes to ``Directors.on_yield``; its decision
   continues the run (a new generation, the continuation row in the model view), yields
   (``answered``) or fails it (``failed``).

A refusal (the REFUSAL stop) ends the run (``refused``), its text kept and the provider's
words a ``refused`` row; it is never sent again and the stack is not asked.

The chat (``eukhe.agent.chat``): a session marked as the chat answers from the chat memory. Its
runs pin the view first (``ChatMemory.run``); each request is the pinned view, the state and
the ``Turn:`` message, then the run's own messages (``ChatRun.messages``), with the chat's one
system prompt and tool set; each committed step is logged to the chat as well (``_commit``).

Messages sent while a turn runs (``steer``) join it as a user entry after the results of the
tool calls under way, or after its answer, and the generation goes on with it (memory.md rule
46; each a ``joined`` row); one steered into a run that ended before it could join runs next; ``follow_up`` queues a message as the next turn. A background
subagent's report (``report``, memory.md rule 58) joins the same way, as one work row
(``WORK_ROW``, ``{"text": "[Name] report"}``, a user message of the model view); a report that
comes as the turn ends is committed then, so none is lost. The session
switches (control.md S4) say how many join at once: steeringMode and followUpMode
``one-at-a-time`` take the first waiting message, ``all`` every waiting one as one message;
serviceTier other than ``auto`` asks the provider for that tier when the model honours it
(``tiers``, S6.8), else sends none; retry.enabled switches the wire retries (``Retrying``'s
policy).

Compaction (S6.6, ``eukhe.agent.compaction``): each request's input-token estimate is checked
against the threshold; a background compaction's summary is placed at the next run boundary,
and a request over the limit waits for it and places it first.

A wire error the retries did not cure ends the run (``failed``), as does an error of the
session store. Derived, where the seeds are silent: the notes are counted per generation (a
final answer gives the next generation all of them again); the first forced request counts as
not free (the prompt cache of the provider is not known to the loop), so it carries the soft
prompt alone and its retries the native choice.

Every step is told to the clients as protocol events (``eukhe.agent.protocol``): ``emit``
gets plain dicts with a ``type``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from bend import infer as compiled
from eukhe.agent.compaction import COMPACTION_ROW, SUMMARY_INTRO, Compaction, Summary, compacted, estimate
from eukhe.agent.tools.base import Tool, ToolContext
from eukhe.agent.tools.registry import TOOLS, run_call
from eukhe.directors.hooks import Decided, DirectorLimits, Directors, ForcedToolError, Reply
from eukhe.inference import toolcalls
from eukhe.inference.force import ForcedRequest, maps_forced_tool_choice, soft_prompt
from eukhe.inference.guard import Guard, StreamRepeating
from eukhe.inference.repair import parse_tool_call_arguments
from eukhe.inference.wire import events
from eukhe.inference.wire.base import closing
from eukhe.inference.wire.plan import Message, Request, Thought
from eukhe.inference.wire.retry import Retry
from eukhe.inference.wire.thoughts import Thoughts
from eukhe.session import Conversation, Entry, Kind, assistant, row, tool_call, tool_result, user
from eukhe.session.entries import NewEntry

if TYPE_CHECKING:
    from eukhe.agent.chat import ChatMemory, ChatRun

WORK_ROW = "eukhe.work"  # a subagent's report in its parent's conversation (memory.md rule 58)
MAX_NOTES = 8  # noted retries of one generation (inference.md S6.5)
MAX_TOOL_ROUNDS_CVAR = "maxToolRounds"
STEERING_MODE_CVAR, FOLLOW_UP_MODE_CVAR, SERVICE_TIER_CVAR = "steeringMode", "followUpMode", "serviceTier"
SETTLE_CVAR = "memory.settleTimeoutMs"
SYSTEM = (
    "You are eukhe, a coding agent. You work in the user's project directory with the tools you are given: "
    "read, write and edit files, list, glob and grep them, and run bash. Act through the tools; answer briefly."
)
CUT_NOTE = "Your last reply was cut off before it ended (attempt {attempt}). Give the whole reply again."
LOOP_NOTE = (
    "Your last reply repeated itself (attempt {attempt}): a cycle of {period} line(s), the last one {last!r}. "
    "Answer again without repeating."
)

# The ends of a run (protocol turn_end.reason).
ANSWERED, FAILED, NOT_CALLED, MAX_TOOL_ROUNDS, MAX_NOTES_END, ABORTED, REFUSED = (
    "answered",
    "failed",
    "not_called",
    "max_tool_rounds",
    "max_notes",
    "aborted",
    "refused",
)

Emit = Callable[[dict[str, Any]], None]


class Model(Protocol):  # pragma: no mutate block
    """A wire client with retries (``eukhe.inference.wire.retry.Retrying``)."""

    def stream(self, request: Request, filter: events.StreamFilter | None = None) -> AsyncIterator[events.Event]: ...


@dataclass
class Streamed:
    """One reply as the stream gave it."""

    text: str = ""
    calls: list[events.ToolCall] = field(default_factory=list)
    stop: str = events.STOP
    thoughts: Thoughts = field(default_factory=Thoughts)
    refusal: str | None = None  # what the provider said of a refusal (REFUSAL stop), "" for nothing


@dataclass(frozen=True)
class Final:
    """A generation's end: its final answer, or the run's end without one."""

    text: str = ""
    end: str | None = None  # None: an answer for the step; else the run ends with this reason
    error: str = ""


def _json_text(value: object) -> str:
    """``value`` as JSON text to send again: as it was written where that is UTF-8; with ``\\u``
    escapes where it holds what UTF-8 cannot carry (a lone surrogate the model wrote as
    ``\\ud800`` in its arguments), so the next request can be sent."""
    text = json.dumps(value, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value)
    return text


def reply_content(text: str, streamed: Streamed) -> dict[str, Any]:
    """A reply as its assistant entry holds it: the text, and the signed reasoning blocks the
    provider wants back in the tool loop (each ``{"text", "signature", "redacted", "item"}``)."""
    content: dict[str, Any] = {"text": text}
    thoughts = streamed.thoughts.done()
    if thoughts:
        content["thoughts"] = [{"text": t.text, "signature": t.signature, "redacted": t.redacted, "item": t.item} for t in thoughts]
    return content


def _thoughts(content: object) -> tuple[Thought, ...]:
    found = content.get("thoughts") if isinstance(content, dict) else None
    if not isinstance(found, list):
        return ()
    return tuple(
        Thought(str(t.get("text", "")), str(t.get("signature", "")), bool(t.get("redacted")), str(t.get("item", "")))
        for t in found
        if isinstance(t, dict)
    )


def messages_of(entries: Sequence[Entry]) -> tuple[Message, ...]:
    """The model view of a conversation as wire messages: the placed summary of a compaction and
    what follows it (``compaction.compacted``), user entries and continuation rows as user
    messages, a reply with all of its calls as one assistant message (as the model gave it)
    followed by their results, one tool message each. The loop commits each call and then its
    result, so a reply's calls and results interleave in the log; they are regrouped here."""
    summary, entries = compacted(entries)
    out: list[Message] = [] if summary is None else [Message("user", SUMMARY_INTRO + summary)]
    calls: list[events.ToolCall] = []
    results: list[Message] = []
    text = ""
    thoughts: tuple[Thought, ...] = ()

    def flush() -> None:
        nonlocal calls, results, text, thoughts
        if text or calls or thoughts:
            out.append(Message("assistant", text, tool_calls=tuple(calls), thoughts=thoughts))
        out.extend(results)
        calls, results, text, thoughts = [], [], "", ()

    for entry in entries:
        content = entry.content
        if entry.kind is Kind.ASSISTANT:
            flush()
            text = str(content.get("text", "")) if isinstance(content, dict) else str(content)
            thoughts = _thoughts(content)
        elif entry.kind is Kind.TOOL_CALL and isinstance(content, dict):
            arguments = content.get("arguments")
            raw = arguments if isinstance(arguments, str) else _json_text(arguments)
            signature = str(content.get("signature", ""))
            calls.append(events.ToolCall(len(calls), str(content.get("id")), str(content.get("name")), raw, signature))
        elif entry.kind is Kind.TOOL_RESULT and isinstance(content, dict):
            call_id = str(content.get("call_id"))
            named = next((call.name for call in calls if call.id == call_id), None)  # Gemini's functionResponse names its call
            results.append(Message("tool", str(content.get("text", "")), tool_call_id=call_id, tool_name=named, is_error=bool(content.get("is_error"))))
        elif entry.kind is Kind.USER:
            flush()
            out.append(Message("user", str(content)))
        elif entry.kind is Kind.CUSTOM and isinstance(content, dict) and "text" in content:
            flush()
            out.append(Message("user", str(content["text"])))
    flush()
    return tuple(out)


class Agent:
    """The turn loop of one session's main conversation (the module's docstring)."""

    def __init__(
        self,
        conversation: Conversation,
        model: Model,
        api: str,
        context: ToolContext,
        value: Callable[[str], Any],
        emit: Emit,
        tools: Sequence[Tool] = TOOLS,
        system: str = SYSTEM,
        thinking: str | None = None,
        tiers: Sequence[str] = ("default",),
        compaction: Compaction | None = None,
        chat: ChatMemory | None = None,
    ) -> None:
        self.conversation = conversation
        self.model = model
        self.api = api
        self.context = context
        self.value = value
        self.emit = emit
        self.tools = tuple(tools)
        self.system = system
        self.thinking = thinking
        self.tiers = tuple(tiers)  # the service tiers the model honours (S6.8)
        self.compaction = compaction
        self.chat = chat  # the chat memory this session answers from (eukhe.agent.chat), else None
        self._chat_run: ChatRun | None = None
        self._run_entry: int | None = None
        self.directors = Directors(conversation, DirectorLimits.of(value))
        self._steering: list[str] = []
        self._follow_ups: list[str] = []
        self._reports: list[str] = []
        self._task: asyncio.Task[None] | None = None

    # -- the Runner of the daemon -----------------------------------------------------------------

    def steer(self, text: str) -> None:
        """A message that joins the running turn between tool calls, or after its answer (the
        turn then goes on with it: memory.md rule 46 for a turn's messages)."""
        self._steering.append(text)

    def follow_up(self, text: str) -> None:
        """A message that runs as the next turn once this one ended."""
        self._follow_ups.append(text)

    def report(self, text: str) -> None:
        """A background subagent's report, ``[Name] report``: it joins the running turn as a work
        row between tool calls or after its answer, like a steered message."""
        self._reports.append(text)

    def abort(self) -> None:
        self.context.cancel.set()
        if self._task is not None:
            self._task.cancel()

    async def turn(self, text: str) -> None:
        """A user turn to its end, then the follow-ups queued meanwhile, each a turn."""
        next_text: str | None = text
        while next_text is not None:
            self.context.cancel.clear()
            self._task = asyncio.ensure_future(self._run(next_text))
            try:
                await self._task
            except asyncio.CancelledError:
                self.emit({"type": "turn_end", "run": self._run_id, "reason": ABORTED, "text": "the turn was aborted"})
                self._follow_ups.clear()
                self._commit_reports()
                return
            finally:
                self._task = None
                self._chat_run = None
            # A message steered into a run that ended before it could join (a failure, a
            # refusal) is not lost: it runs next, before the follow-ups.
            next_text = self._take(self._steering, STEERING_MODE_CVAR) or self._take(self._follow_ups, FOLLOW_UP_MODE_CVAR)
        self._commit_reports()

    def _commit_reports(self) -> bool:
        """The reports that came meanwhile, committed as work rows; whether there were any."""
        reports, self._reports = self._reports, []
        if reports:
            self._commit([row(WORK_ROW, {"text": text}) for text in reports])
        return bool(reports)

    def _take(self, waiting: list[str], mode_cvar: str) -> str | None:
        """The next message of a queue, as its mode says: one at a time (the first), or all of
        them as one message (steeringMode, followUpMode)."""
        if not waiting:
            return None
        taken = waiting[:] if self.value(mode_cvar) == "all" else waiting[:1]
        del waiting[: len(taken)]
        return "\n\n".join(taken)

    # -- one run ----------------------------------------------------------------------------------

    _run_id = ""

    async def _run(self, text: str) -> None:
        if self.compaction is not None:
            self._place(self.compaction.take())  # a run boundary: a queued summary is placed (S6.6)
        if self.chat is not None:  # the view pinned, the message logged after it (memory.md rule 47)
            self._chat_run = await self.chat.run(text, int(self.value(SETTLE_CVAR)) / 1000.0)
        (entry,) = self.conversation.commit([user(text)])
        self._run_entry = entry
        run = f"run-{entry}"
        self._run_id = run
        self.directors.begin(run)
        self.emit({"type": "turn_start", "run": run, "text": text})
        generation = 0
        while True:
            generation += 1
            final = await self._generation()
            if final.end is not None:
                self.emit({"type": "turn_end", "run": run, "reason": final.end, "text": final.error})
                return
            step = self.directors.on_yield(f"{run}.{generation}", Reply(final.text, 0))
            self.emit(
                {"type": "step", "decision": step.decision.value, "rule": step.rule, "verdicts": list(step.verdicts), "continuation": step.continuation}
            )
            for shown in step.rows:
                self.emit({"type": "row", "kind": "director", "text": shown})
            if step.decision is Decided.CONTINUE:
                continue
            reason = ANSWERED if step.decision is Decided.YIELD else FAILED
            self.emit({"type": "turn_end", "run": run, "reason": reason, "text": step.error or ""})
            return

    async def _generation(self) -> Final:
        notes = 0
        leak_notes = 0
        rounds = 0
        note: str | None = None
        offered = [tool.name for tool in self.tools]
        max_rounds = int(self.value(MAX_TOOL_ROUNDS_CVAR))
        while True:
            forced = self.directors.before_request()
            attempt = self.directors.forced_attempt()
            request = self._request(note, forced, attempt)
            if self.compaction is not None:
                tokens = estimate([request.system, [tool.parameters for tool in request.tools], [(m.role, m.words, [(c.name, c.arguments) for c in m.tool_calls]) for m in request.messages]])
                if self._place(await self.compaction.before_request(tokens, self.conversation.model_view())):
                    request = self._request(note, forced, attempt)
            try:
                streamed = await self._stream(request)
            except (StreamRepeating, events.StreamCut) as cut:
                kind = "loop" if isinstance(cut, StreamRepeating) else "cut"
                if notes >= MAX_NOTES:
                    return Final(end=MAX_NOTES_END, error=str(cut))
                notes += 1
                note = self._note(kind, notes, cut)
                continue
            except events.WireError as error:
                return Final(end=FAILED, error=str(error))
            if streamed.stop == events.REFUSAL:
                return self._refused(streamed)
            if forced is not None:
                called = any(call.name == forced for call in streamed.calls)
                try:
                    again = self.directors.after_response(called)
                except ForcedToolError as error:
                    return Final(end=NOT_CALLED, error=str(error))
                if again:
                    note = None
                    continue
            outcome = toolcalls.read_reply(
                streamed.text, [{"name": c.name, "arguments": c.arguments, "id": c.id} for c in streamed.calls], streamed.stop, offered, leak_notes
            )
            leak_notes = outcome.leak_notes
            if outcome.kind in (toolcalls.LEAK_RETRY, toolcalls.NO_ANSWER, toolcalls.LENGTH_NOTE):
                if notes >= MAX_NOTES:
                    # No note left: leaked markup answers as text; an empty reply is the final
                    # answer, which the step fails as a model error (S5.4).
                    text = outcome.text if outcome.kind == toolcalls.LEAK_RETRY else ""
                    if text:
                        self._commit([assistant({"text": text})])
                    return Final(text)
                notes += 1
                note = self._note({toolcalls.LEAK_RETRY: "leak", toolcalls.NO_ANSWER: "no_answer"}.get(outcome.kind, "length"), notes, None, outcome.note)
                continue
            note = None
            if outcome.kind == toolcalls.ANSWER:
                self._commit([assistant(reply_content(outcome.text, streamed))])
                if not self._join_steering():
                    return Final(outcome.text)
                continue  # a message that came as the answer ended joins: the turn goes on with it
            if rounds >= max_rounds:
                return Final(end=MAX_TOOL_ROUNDS, error=f"{MAX_TOOL_ROUNDS_CVAR} {max_rounds}: a reply called tools once more; its calls did not run")
            rounds += 1
            if outcome.rebuilt:
                self.emit({"type": "row", "kind": "note", "text": f"rebuilt {len(outcome.calls)} leaked tool call(s)"})
            await self._run_calls(outcome, streamed)
            self._join_steering()

    def _refused(self, streamed: Streamed) -> Final:
        """A refusal ends the run (``refused``): its text so far is kept, the provider's words
        are a row; it is never sent again, and the stack is not asked (derived: the seeds are
        silent; a refusal answers, and a goal or a reminder must not press the model past it)."""
        if streamed.text:
            self._commit([assistant(reply_content(streamed.text, streamed))])
        said = streamed.refusal or "(the provider gave no reason)"
        self.emit({"type": "row", "kind": "refused", "text": said})
        return Final(end=REFUSED, error=said)

    def _commit(self, entries: list[NewEntry]) -> list[int]:
        """Commit to the session; in the chat, log to the chat memory too (memory.md rule 48)."""
        ids = self.conversation.commit(entries)
        if self.chat is not None:
            self.chat.log(entries)
        return ids

    def _messages(self) -> tuple[Message, ...]:
        """A request's messages: the session's model view, or in the chat the pinned view, the
        marked message and the run's own messages (``eukhe.agent.chat.ChatRun``)."""
        if self._chat_run is None:
            return messages_of(self.conversation.model_view())
        own: list[Entry] = []  # walked back from the head to the run's message: never the whole chat
        at = self.conversation.head
        while at is not None and at != self._run_entry:
            entry = self.conversation.entry(at)
            if entry.in_model_view:
                own.append(entry)
            at = entry.parent
        return self._chat_run.messages(messages_of(own[::-1]))

    def _place(self, summary: Summary | None) -> bool:
        """Place a compaction's summary in the conversation (compaction_end); whether one was."""
        if summary is None:
            return False
        self._commit([row(COMPACTION_ROW, {"summary": summary.text, "first_kept": summary.first_kept})])
        self.emit({"type": "row", "kind": "compaction", "text": f"compaction_end: the summary is placed; the view keeps the entries from {summary.first_kept} on"})
        return True

    def _join_steering(self) -> bool:
        """The message sent while the turn ran (steeringMode: the first, or all of them as one),
        a user entry now, after the reports of subagents that came meanwhile; whether anything
        joined."""
        reported = self._commit_reports()
        text = self._take(self._steering, STEERING_MODE_CVAR)
        if text is None:
            return reported
        self._commit([user(text)])
        self.emit({"type": "row", "kind": "joined", "text": text})
        return True

    def _note(self, kind: str, used: int, cut: BaseException | None, text: str = "") -> str:
        self.emit({"type": "note", "kind": kind, "used": used, "max": MAX_NOTES})
        if isinstance(cut, StreamRepeating):
            return LOOP_NOTE.format(attempt=used, period=cut.period, last=cut.last_line)
        if cut is not None:
            return CUT_NOTE.format(attempt=used)
        return text

    def _request(self, note: str | None, forced: str | None, attempt: int) -> Request:
        messages = self._messages()
        tier = self.value(SERVICE_TIER_CVAR)
        if note is not None:
            messages += (Message("user", note),)
        forcing: ForcedRequest | None = None
        if forced is not None:
            supported = maps_forced_tool_choice(self.api, manual_thinking=False)
            forcing = ForcedRequest(attempt, compiled.flag(attempt, supported, False), soft_prompt(forced))
        return Request(
            messages,
            system=self.system if self.chat is None else self.chat.layers.system,
            tools=tuple(tool.wire for tool in self.tools) if self.chat is None else self.chat.layers.tools,
            thinking=self.thinking,
            forced_tool=forced,
            forced=forcing,
            service_tier=tier if tier in self.tiers and tier != "auto" else None,
        )

    async def _stream(self, request: Request) -> Streamed:
        guard = Guard.from_settings(self.value)
        reply = Streamed()
        async with closing(self.model.stream(request, events.filter_of(guard.feed))) as stream:
            async for event in stream:
                if isinstance(event, events.TextDelta):
                    reply.text += event.text
                    self.emit({"type": "delta", "text": event.text})
                elif isinstance(event, events.ThinkingDelta):
                    reply.thoughts.text(event)
                    self.emit({"type": "thinking", "text": event.text})
                elif isinstance(event, events.ThinkingSignature):
                    reply.thoughts.sign(event)
                elif isinstance(event, events.ToolCall):
                    reply.calls.append(event)
                elif isinstance(event, events.Refusal):
                    reply.refusal = event.text
                elif isinstance(event, events.Stop):
                    reply.stop = event.reason
        return reply

    async def _run_calls(self, outcome: toolcalls.Outcome, streamed: Streamed) -> None:
        self._commit([assistant(reply_content(outcome.text, streamed))])
        signatures = {call.id: call.signature for call in streamed.calls if call.signature}
        for index, call in enumerate(outcome.calls):
            call_id = call.id or f"call-{index}"
            logged: dict[str, Any] = {"id": call_id, "name": call.name, "arguments": parse_tool_call_arguments(call.arguments)}
            if call.id in signatures:
                logged["signature"] = signatures[call.id]  # Gemini's thoughtSignature, sent back on the call
            self._commit([tool_call(logged)])
            self.emit({"type": "tool_call", "id": call_id, "name": call.name, "arguments": call.arguments})
            if outcome.kind == toolcalls.TRUNCATED:
                text, is_error, kind = outcome.results[index], True, "truncated"
            else:
                result = await run_call(call.name, call.arguments, self.context, self.tools)
                text, is_error, kind = result.text, result.is_error, result.kind
                if result.images and self._chat_run is not None:
                    self._chat_run.images[call_id] = result.images  # zoom(id, 1): the message with its images (rule 53)
            self._commit([tool_result({"call_id": call_id, "text": text, "is_error": is_error})])
            self.emit({"type": "tool_result", "id": call_id, "text": text, "is_error": is_error, "kind": kind or None})


def retry_event(retry: Retry) -> dict[str, Any]:
    """A wire retry (``Retrying``'s notify) as a protocol event."""
    from eukhe.inference.wire.retry import kind_of

    return {"type": "retry", "attempt": retry.attempt, "retries": retry.retries, "kind": kind_of(retry.error), "wait": retry.wait}
