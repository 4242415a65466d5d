"""The Directors of a session (control.md S5.4 to S5.8): the map from session state to
verdicts, ``begin``, the step of each final answer (``on_yield``), the forced tool of each
request (``before_request``/``after_response``), and the entry points (``push``, ``remind``,
``force``).

State lives in documents of the conversation (eukhe.session), so a rewind, a fork or a
resume brings it back as of its entry:

- ``eukhe.directors``: the stack (see document.py).
- ``eukhe.directors.loop``: the loop of the current run: {"run", "steps", "end", "last"};
  "last" is the decision of the last step with its generation id, so a rerun of the same
  generation repeats the decision (S5.5).
- ``eukhe.goal``: {"id", "objective", "status", "reason", "stall"}; status is active,
  paused, budget_limited, complete, failed or cleared; "stall" is the progress check's
  record (S5.8) or null (the full cap).
- ``eukhe.autonomous``: {"enabled", "used", "max", "stop"}; "stop" is the reason a gate
  gave to stop the run, or null.

Display rows (``eukhe.director``, display-only: the user sees them, the model never does)
carry a forced call's NotCalled error and the goal's pause. The goal context row
(``eukhe.goal``, in the model context) carries the continuation text of a step.

The work the progress check counts is read from the head's branch: a ``tool_call`` entry
``{"id", "name", "arguments"}`` with its ``tool_result`` ``{"call_id", "text", "is_error"}``,
and an ``eukhe.progress_note`` row ``{"text", "accepted"}``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from eukhe.directors.document import DIRECTORS_DOC, LOOP_DOC, from_document, to_document
from eukhe.directors.progress import (
    NOTE,
    PAUSE,
    StallRecord,
    WorkLedger,
    continuation_note,
    pause_reason,
    pause_row,
    stall_check,
)
from eukhe.directors.stack import (
    ABORT,
    AGAIN,
    DEFAULT_MAX_STEPS,
    DEFAULT_STACK_CAP,
    DEFER,
    LEAVE,
    PUSHED_KINDS,
    YIELD,
    Layer,
    LayerKind,
    Loop,
    Outcome,
    Verdict,
    full_cap,
)
from eukhe.session import Conversation, Entry, Kind, NewEntry, display, row

GOAL_DOC = "eukhe.goal"
AUTONOMOUS_DOC = "eukhe.autonomous"
DIRECTOR_NOTICE_CUSTOM_TYPE = "eukhe.director"
GOAL_CONTEXT_CUSTOM_TYPE = "eukhe.goal"
CONTINUATION_CUSTOM_TYPE = "eukhe.continuation"
PROGRESS_NOTE_CUSTOM_TYPE = "eukhe.progress_note"
DEFAULT_MAX_CONTINUATIONS = 20  # autonomous.maxContinuations: owned by the settings table (S4)

ACTIVE, PAUSED, BUDGET_LIMITED, COMPLETE, FAILED, CLEARED = (
    "active",
    "paused",
    "budget_limited",
    "complete",
    "failed",
    "cleared",
)
GOAL_STATUSES = (ACTIVE, PAUSED, BUDGET_LIMITED, COMPLETE, FAILED, CLEARED)
MAX_LIMIT = 2**63 - 1  # a limit is read into a signed 64-bit integer (the seed's Rust)
LIMIT_IDS = ("directors.stackCap", "directors.maxSteps", "directors.stallSteps", "autonomous.maxContinuations")


class LimitsError(ValueError):
    """A Director limit that is not a whole number in 0..MAX_LIMIT; the message names the setting."""


class GoalError(ValueError):
    """A goal change that cannot be made: an unknown status, or a status with no goal."""


@dataclass(frozen=True)
class DirectorLimits:
    """directors.stackCap, directors.maxSteps, directors.stallSteps, autonomous.maxContinuations."""

    stack_cap: int = DEFAULT_STACK_CAP
    max_steps: int = DEFAULT_MAX_STEPS
    stall_steps: int = 3
    max_continuations: int = DEFAULT_MAX_CONTINUATIONS

    def __post_init__(self) -> None:
        values = (self.stack_cap, self.max_steps, self.stall_steps, self.max_continuations)
        for cvar, value in zip(LIMIT_IDS, values):
            if type(value) is not int or not 0 <= value <= MAX_LIMIT:
                raise LimitsError(f"{cvar} must be a whole number from 0 to {MAX_LIMIT}, not {value!r}")

    @property
    def bound(self) -> int:
        return full_cap(self.stack_cap)

    @classmethod
    def of(cls, value: Callable[[str], Any]) -> DirectorLimits:
        """The limits an agent's cvars give (``value``: an agent's effective value of a cvar id)."""
        stack_cap, max_steps, stall_steps, max_continuations = (value(cvar) for cvar in LIMIT_IDS)
        return cls(stack_cap=stack_cap, max_steps=max_steps, stall_steps=stall_steps, max_continuations=max_continuations)


class PushRefused(Exception):
    """A push past directors.stackCap (S5.6)."""


class ForcedToolError(Exception):
    """ForcedToolError::NotCalled (S6.3): the forced tool was never called."""

    kind = "NotCalled"

    def __init__(self, tool: str, requests: int) -> None:
        self.tool = tool
        self.requests = requests
        super().__init__(f"ForcedToolError::NotCalled: the forced tool {tool} was not called in {requests} request(s)")


class ModelError(Exception):
    """An empty reply: no text and no tool call (harness.md H4.7)."""


class Decided(str, enum.Enum):
    CONTINUE = "continue"
    YIELD = "yield"
    FAIL = "fail"


@dataclass
class Step:
    """What one step decided and wrote."""

    decision: Decided
    rule: str
    verdicts: list[str]
    continuation: str | None
    rows: list[str]
    error: str | None = None
    repeated: bool = False
    committed: bool = True


@dataclass
class Reply:
    """A final answer as the step sees it."""

    text: str = ""
    tool_calls: int = 0

    @property
    def empty(self) -> bool:
        return not self.text.strip() and self.tool_calls == 0


@dataclass
class _Pending:
    goal: dict[str, Any] | None = None
    autonomous: dict[str, Any] | None = None
    rows: list[dict[str, Any]] = field(default_factory=list)
    continuation: str | None = None
    error: str | None = None
    aborted_forced: set[int] = field(default_factory=set)


def notcalled_row(error: ForcedToolError) -> dict[str, Any]:
    return {"notice": "forced_tool_not_called", "error": "ForcedToolError::NotCalled", "tool": error.tool,
            "requests": error.requests, "message": str(error)}


def work_of(entries: list[Entry]) -> WorkLedger:
    """The work ledger of a branch (S5.8): calls with their results, accepted notes."""
    ledger = WorkLedger()
    calls: dict[str, dict[str, Any]] = {}
    for entry in entries:
        content = entry.content
        if entry.kind is Kind.TOOL_CALL and isinstance(content, dict):
            calls[str(content.get("id"))] = content
        elif entry.kind is Kind.TOOL_RESULT and isinstance(content, dict):
            call = calls.get(str(content.get("call_id")))
            if call is not None:
                ledger.call(str(call.get("name")), call.get("arguments"), str(content.get("text", "")), bool(content.get("is_error")))
        elif entry.kind is Kind.CUSTOM and entry.custom_type == PROGRESS_NOTE_CUSTOM_TYPE and isinstance(content, dict):
            ledger.note(str(content.get("text", "")), accepted=content.get("accepted") is True)
    return ledger


class Directors:
    """The Director stack of one conversation, on the session store."""

    def __init__(self, conversation: Conversation, limits: DirectorLimits | None = None) -> None:
        self.conversation = conversation
        self.limits = limits or DirectorLimits()
        self._forcing: int | None = None  # index of the layer that forced the current request

    # -- reading ----------------------------------------------------------------------------------

    def stack(self) -> list[Layer]:
        value = self.conversation.document(DIRECTORS_DOC)
        return [] if value is None else from_document(value)

    def loop_doc(self) -> dict[str, Any]:
        value = self.conversation.document(LOOP_DOC)
        return dict(value) if isinstance(value, dict) else {"run": None, "steps": 0, "end": "", "last": None}

    def goal(self) -> dict[str, Any] | None:
        value = self.conversation.document(GOAL_DOC)
        return dict(value) if isinstance(value, dict) else None

    def autonomous(self) -> dict[str, Any] | None:
        value = self.conversation.document(AUTONOMOUS_DOC)
        return dict(value) if isinstance(value, dict) else None

    # -- entry points (S5.7) ---------------------------------------------------------------------

    def push(self, layer: Layer) -> list[Layer]:
        """Push a reminder or a forced call on top; refused past directors.stackCap."""
        if layer.kind not in PUSHED_KINDS:
            raise PushRefused(f"only reminders and forced calls are pushed, not {layer.kind.value}")
        stack = self.stack()
        pushed = sum(1 for item in stack if item.kind in PUSHED_KINDS)
        if pushed >= self.limits.stack_cap:
            raise PushRefused(f"the Director stack is full: {pushed} pushed layers, directors.stackCap {self.limits.stack_cap}")
        stack.append(layer)
        self.conversation.commit(documents={DIRECTORS_DOC: to_document(stack)})
        return stack

    def remind(self, text: str) -> list[Layer]:
        if not text.strip():
            raise PushRefused("/remind needs a text")
        return self.push(Layer(LayerKind.REMINDER, 1, {"text": text}))

    def force(self, tool: str, tries: int = 1, budget: int = 1) -> list[Layer]:
        if not tool.strip():
            raise PushRefused("/force needs a tool name")
        if tries < 0:
            raise PushRefused("--tries must be a whole number")
        data = {"tool": tool, "tries": tries, "misses": 0, "requests": 0, "called": False}
        return self.push(Layer(LayerKind.FORCED, budget, data))

    def set_goal(self, objective: str, goal_id: str) -> None:
        self.conversation.commit(
            documents={GOAL_DOC: {"id": goal_id, "objective": objective, "status": ACTIVE, "reason": None, "stall": None}}
        )

    def set_goal_status(self, status: str, reason: str | None = None) -> None:
        if status not in GOAL_STATUSES:
            raise GoalError(f"unknown goal status {status!r} (one of {', '.join(GOAL_STATUSES)})")
        goal = self.goal()
        if goal is None:
            raise GoalError(f"no goal to set {status}: set a goal first")
        goal["status"] = status
        goal["reason"] = reason
        if status == ACTIVE:
            goal["stall"] = None  # a resume gives the goal the full cap again (S5.8)
        self.conversation.commit(documents={GOAL_DOC: goal})

    def set_autonomous(self, enabled: bool, stop: str | None = None) -> None:
        current = self.autonomous() or {"used": 0, "max": self.limits.max_continuations}
        current.update({"enabled": enabled, "stop": stop})
        self.conversation.commit(documents={AUTONOMOUS_DOC: current})

    # -- begin (S5.6) -----------------------------------------------------------------------------

    def begin(self, run: str) -> list[Layer]:
        """A run with a new first input: a new loop, budgets back, goal and autonomous placed."""
        stack = self.stack()
        goal = self.goal()
        auto = self.autonomous()
        goal_drives = goal is not None and goal.get("status") == ACTIVE
        auto_drives = auto is not None and auto.get("enabled") is True
        remaining = 0
        if auto is not None:
            remaining = max(0, int(auto.get("max", self.limits.max_continuations)) - int(auto.get("used", 0)))
        bottom: list[Layer] = []
        pushed: list[Layer] = []
        goal_layer: Layer | None = None
        auto_layer: Layer | None = None
        for layer in stack:
            if layer.kind is LayerKind.GOAL:
                goal_layer = layer
            elif layer.kind is LayerKind.AUTONOMOUS:
                auto_layer = layer
            else:
                pushed.append(layer)
        if auto_layer is None and auto_drives:
            auto_layer = Layer(LayerKind.AUTONOMOUS, 0)
        if auto_layer is not None:
            auto_layer.budget = remaining
            bottom.append(auto_layer)
        if goal_layer is None and goal_drives:
            goal_layer = Layer(LayerKind.GOAL, 0)
        if goal_layer is not None:
            goal_layer.budget = self.limits.max_steps
            bottom.append(goal_layer)
        for layer in pushed:
            if layer.kind is LayerKind.FORCED:
                layer.data["misses"] = 0
        stack = bottom + pushed
        documents: dict[str, Any] = {
            LOOP_DOC: {"run": run, "steps": self.limits.max_steps, "end": "", "last": None},
        }
        if stack or self.conversation.document(DIRECTORS_DOC) is not None:
            documents[DIRECTORS_DOC] = to_document(stack)
        if goal is not None and goal.get("stall") is not None:
            goal["stall"] = None  # a new user input gives the goal the full cap again
            documents[GOAL_DOC] = goal
        self.conversation.commit(documents=documents)
        return stack

    # -- the forced tool of a request (S5.4) ----------------------------------------------------

    def before_request(self) -> str | None:
        """The tool this request must force, or None. The top forced layer not yet called forces."""
        stack = self.stack()
        for index in range(len(stack) - 1, -1, -1):
            layer = stack[index]
            if layer.kind is LayerKind.FORCED and not layer.data.get("called"):
                self._forcing = index
                return str(layer.data["tool"])
        self._forcing = None
        return None

    def forced_attempt(self) -> int:
        """The attempt of the request ``before_request`` last forced: its layer's misses so far
        (0 when it forces none). S6.3's flag depends on it."""
        if self._forcing is None:
            return 0
        return int(self.stack()[self._forcing].data.get("misses", 0))

    def after_response(self, called: bool) -> bool:
        """The response to a forced request: the call, or a miss. Returns True when the
        request must be retried; raises ForcedToolError after the tries retries."""
        index = self._forcing
        self._forcing = None
        if index is None:
            return False
        stack = self.stack()
        layer = stack[index]
        layer.data["requests"] = int(layer.data.get("requests", 0)) + 1
        if called:
            layer.data["called"] = True
            self.conversation.commit(documents={DIRECTORS_DOC: to_document(stack)})
            return False
        layer.data["misses"] = int(layer.data.get("misses", 0)) + 1
        tries = int(layer.data.get("tries", 1))
        if layer.data["misses"] > tries:
            error = ForcedToolError(str(layer.data["tool"]), int(layer.data["requests"]))
            del stack[index]
            self.conversation.commit(
                [display(DIRECTOR_NOTICE_CUSTOM_TYPE, notcalled_row(error))],
                {DIRECTORS_DOC: to_document(stack)},
            )
            raise error
        self.conversation.commit(documents={DIRECTORS_DOC: to_document(stack)})
        return True

    # -- the step of a final answer (S5.4, S5.5, S5.8) -----------------------------------------

    def on_yield(self, generation: str, reply: Reply) -> Step:
        loop_doc = self.loop_doc()
        last = loop_doc.get("last")
        if isinstance(last, dict) and last.get("generation") == generation:
            return Step(
                Decided(last["decision"]),
                str(last["rule"]),
                list(last["verdicts"]),
                last.get("continuation"),
                [],
                last.get("error"),
                repeated=True,
                committed=False,
            )
        goal = self.goal()
        if reply.empty:
            message = "model error: an empty reply (no text and no tool call)"
            documents: dict[str, Any] = {}
            if goal is not None and goal.get("status") == ACTIVE:
                goal.update({"status": FAILED, "reason": message})
                documents[GOAL_DOC] = goal
            step = Step(Decided.FAIL, "model_error", [], None, [], message)
            loop_doc.update({"end": Decided.FAIL.value, "last": self._last(generation, step)})
            documents[LOOP_DOC] = loop_doc
            self.conversation.commit(documents=documents)
            return step
        stack = self.stack()
        if not stack:
            return Step(Decided.YIELD, "none", [], None, [], committed=False)
        if loop_doc.get("end"):
            return Step(Decided(loop_doc["end"]), "ended", [], None, [], committed=False)
        auto = self.autonomous()
        goal_drives = goal is not None and goal.get("status") == ACTIVE
        pending = _Pending()
        cache: dict[int, Verdict] = {}
        reminders: list[int] = []
        names: dict[int, str] = {}

        def judge(index: int, layer: Layer) -> Verdict:
            if index in cache:
                return cache[index]
            verdict = self._judge(index, layer, goal, goal_drives, auto, pending, reminders)
            cache[index] = verdict
            names[index] = verdict.tag.value
            return verdict

        cap = self.limits.bound
        first = Loop([item.copy() for item in stack], int(loop_doc.get("steps", 0)))
        rule, decision = first.tick_with(judge, cap)
        continues = decision is not None and rule != "no_step" and decision.outcome is Outcome.CONTINUE
        loop = first
        if reminders and not continues:
            # No continuation follows: the reminders defer and stay (S5.4).
            def waiting(index: int, layer: Layer) -> Verdict:
                return DEFER if index in reminders else judge(index, layer)

            loop = Loop([item.copy() for item in stack], int(loop_doc.get("steps", 0)))
            rule, decision = loop.tick_with(waiting, cap)
            for index in reminders:
                names[index] = "defer"
        asked = decision.asked if decision is not None else []
        verdicts = [f"{stack[i].kind.value}:{names.get(i, '?')}" for i in asked]
        if rule == "no_step":
            # The continuation does not happen: nothing of it is spent or written.
            step = Step(Decided.YIELD, rule, verdicts, None, [])
            loop_doc.update({"end": Decided.YIELD.value, "last": self._last(generation, step)})
            self.conversation.commit(documents={LOOP_DOC: loop_doc})
            return step
        outcome = Decided(decision.outcome.value) if decision is not None else Decided.YIELD
        new_stack = list(loop.stack)
        decider = decision.decider if decision is not None else None
        if decider is not None and decider in pending.aborted_forced:
            # A forced layer that aborted leaves with its NotCalled row (S5.4); decide keeps the
            # deciding layer at its own place, so it is new_stack[decider].
            del new_stack[decider]
        entries: list[NewEntry] = []
        continuation: str | None = None
        if outcome is Decided.CONTINUE:
            texts = [str(stack[i].data.get("text", "")) for i in reminders if i in asked]
            if pending.continuation:
                texts.append(pending.continuation)
            continuation = "\n\n".join(t for t in texts if t)
            kind = stack[decider].kind if decider is not None else None
            entries.append(
                row(GOAL_CONTEXT_CUSTOM_TYPE if kind is LayerKind.GOAL else CONTINUATION_CUSTOM_TYPE, {"text": continuation})
            )
            if kind is LayerKind.AUTONOMOUS and pending.autonomous is not None:
                pending.autonomous["used"] = int(pending.autonomous.get("used", 0)) + 1
        entries.extend(display(DIRECTOR_NOTICE_CUSTOM_TYPE, content) for content in pending.rows)
        step = Step(outcome, rule, verdicts, continuation, [str(r["message"]) for r in pending.rows], pending.error)
        loop_doc.update(
            {
                "steps": loop.steps,
                "end": "" if outcome is Decided.CONTINUE else outcome.value,
                "last": self._last(generation, step),
            }
        )
        documents = {DIRECTORS_DOC: to_document(new_stack), LOOP_DOC: loop_doc}
        if pending.goal is not None:
            documents[GOAL_DOC] = pending.goal
        if pending.autonomous is not None and outcome is Decided.CONTINUE:
            documents[AUTONOMOUS_DOC] = pending.autonomous
        self.conversation.commit(entries, documents)
        return step

    def _last(self, generation: str, step: Step) -> dict[str, Any]:
        return {
            "generation": generation,
            "decision": step.decision.value,
            "rule": step.rule,
            "verdicts": step.verdicts,
            "continuation": step.continuation,
            "error": step.error,
        }

    def _judge(
        self,
        index: int,
        layer: Layer,
        goal: dict[str, Any] | None,
        goal_drives: bool,
        auto: dict[str, Any] | None,
        pending: _Pending,
        reminders: list[int],
    ) -> Verdict:
        """S5.4: the verdict of one layer from the session state."""
        if layer.kind is LayerKind.GOAL:
            if goal is None or goal.get("status") == CLEARED:
                return LEAVE
            if goal.get("status") != ACTIVE:
                return YIELD
            loop_doc = self.loop_doc()
            run = str(loop_doc.get("run"))
            work = work_of(self.conversation.model_view()).work
            checked = stall_check(StallRecord.from_json(goal.get("stall")), run, str(goal.get("id")), work, self.limits.stall_steps)
            updated = dict(goal)
            updated["stall"] = checked.record.to_json()
            if checked.verdict == PAUSE:
                updated.update({"status": PAUSED, "reason": pause_reason(checked.count)})
                pending.goal = updated
                pending.rows.append({"notice": "goal_paused", "message": pause_row(checked.count)})
                return YIELD
            pending.goal = updated
            text = f"Continue working toward the goal: {goal.get('objective', '')}"
            if checked.verdict == NOTE:
                text += "\n" + continuation_note(checked.count, self.limits.stall_steps)
            pending.continuation = text
            return AGAIN
        if layer.kind is LayerKind.AUTONOMOUS:
            if goal_drives:
                return DEFER
            if auto is None or auto.get("enabled") is not True:
                return LEAVE
            if auto.get("stop"):
                return YIELD
            if int(auto.get("used", 0)) >= int(auto.get("max", self.limits.max_continuations)):
                return YIELD
            pending.autonomous = dict(auto)
            pending.continuation = "Continue the autonomous run."
            return AGAIN
        if layer.kind is LayerKind.REMINDER:
            reminders.append(index)
            return LEAVE
        # Forced tool call.
        if layer.data.get("called"):
            return LEAVE
        tool = str(layer.data.get("tool"))
        if layer.budget > 0:
            pending.continuation = f"Call the tool {tool}."
            return AGAIN
        error = ForcedToolError(tool, int(layer.data.get("requests", 0)))
        pending.error = str(error)
        pending.rows.append(notcalled_row(error))
        pending.aborted_forced.add(index)
        return ABORT
