"""The turn loop: a compact model of the agent's run (issue 28 item 6), the model side of the
loop bridge. Read it next to 000_f7323c157e80a40d.txt S5 (items 1 to 7), S5.8, and
004_cf1da0cad29d7f64.txt S6.3, S6.5 and S6.10.

What it models, and what it leaves to the models it calls:

- The stack decides with ``bend.director.tick`` (S5.1 to S5.3). A layer here carries its kind
  data (a reminder's text; a forced call's tool, tries, misses, requests, called); the
  director model keeps a number for the kind, so each layer goes to it with its place in the
  stack as that number, and comes back by it with the budget the decision gave.
- The verdict of each layer comes from the state (S5.4): an active goal continues unless its
  progress check (``bend.progress.check``, S5.8) pauses it; a paused, budget-limited, complete
  or failed goal yields; a cleared or missing goal leaves. The autonomous run defers while a
  goal drives, leaves when disabled, yields at its limit, else continues. A reminder leaves,
  and defers when the step does not continue (it stays until a continuation comes). A forced
  call that was called leaves; one never called continues while it has budget, else aborts
  with ForcedToolError::NotCalled and its display row, and leaves the stack.
- A step asks from the top until a layer decides; the asked layers are printed with their
  verdicts. A continuation with no step left yields and writes nothing of the step; an empty
  final answer fails the step as a model error and fails an active goal (S5.4). With no layer,
  a final answer writes nothing.
- ``begin`` (S5.6): a new input brings the global budget back, gives the goal layer that budget
  and the autonomous layer its remaining continuations, places them (when they drive and have
  no layer) below the pushed layers, the goal above the autonomous run, sets the misses of
  forced calls back to 0 and drops the goal's stall record (the full cap again).
- The requests of a generation (S6.3, S6.5, S6.10): each request is forced by the top forced
  layer not yet called; native forced choice is ``bend.infer.flag`` of the layer's misses (the
  first request counts as not free: derived, the loop does not know the provider's cache). A
  response without the forced tool is a miss: dropped, and sent again while misses <= tries,
  else the run ends not_called. A scripted HTTP failure is retried by the wire's retries
  (retry.maxRetries), each retry a new request; past them the run fails. A cut or looping
  stream, no answer, a length stop with no answer, and leaked markup that does not rebuild
  (at most LEAK_NOTES in a row) are sent again with a note: each spends one of MAX_NOTES (8)
  notes of the generation (derived: per generation). With no note left a leak answers as
  text, an empty reply is the final answer, a cut or loop ends the run (max_notes). Native
  calls run (all of them; a length stop runs none: each is ``truncated``); leaked calls that
  all name an offered tool are rebuilt and run. A generation runs at most maxToolRounds
  replies with calls; the next one ends the run (max_tool_rounds).
- What each request sends: the conversation (``said``) grows by the user input, each kept reply
  (a reply with calls as one message, then a result per call), and each non-empty
  continuation; a dropped forced miss, a noted retry and an empty final answer add nothing,
  and the note goes with the one request it is for.
- A refusal (stop ``refusal``) ends the run (``refused``): a reply text is kept, a refused row
  says the provider gave no reason (the scenarios send none), the stack is not asked.
- Messages sent while a request runs (a reply's ``steer`` and ``follow_up``; control.md S4's
  steeringMode and followUpMode switches, the agent's steer and follow_up requests): a steered message
  joins the run as a user message (a ``joined`` row) after the calls of the reply that ran, or
  after a final answer, which then does not end the run: the next request sends it (the stack
  is not asked). steeringMode one-at-a-time joins the first waiting, all joins every waiting
  one as one message (blank lines between). A steered message still waiting when its run ends
  (refused, failed, not called, out of notes or tool rounds, or a note's retry took the last
  reply) runs next as a run of its own, before the follow-ups; follow-ups run after the turn,
  each a run (followUpMode all: every waiting one as one), each from ``begin``.
- Session compaction (004_cf1da0cad29d7f64.txt S6.6; setup ``compaction`` and ``keep_recent``). The
  threshold check is ``bend.infer.over``'s, judged by its own laws: the scenario's window and
  reserve put every request over the threshold (``background``) or over the limit (``blocking``),
  and the scenario says so. Before each request of a generation (not a wire retry): with no summary
  queued and none being written (S6.6: "Summary queued ... no new background compaction"), a
  compaction starts when something is left to summarize before the kept tail. The tail is the
  newest keepRecentTokens tokens of the view, widened back to the user entry that starts them;
  its first entry is kept, what comes before it (after the placed summary, which the new summary
  request sends first) is summarized. The tokens are the local estimate (derived, as production
  counts: JSON bytes over 4, rounded up); every user message of the scenarios is at least keep
  tokens (checked), so the tail starts at a user entry only when that entry is the newest one
  and exactly keep tokens: the run's input at its first request, or a steered message just
  joined. The summary request takes the scenario's next summary reply: a text (ready: queued),
  an empty one or a failed request (nothing queued; a later request starts another). Over the
  threshold the request goes on at once and the summary is written meanwhile (the scenarios make
  it ready before that request's reply: its line follows the request's); the summary is placed at
  the next run boundary (a run's start: the next input, a steered message's own run, a follow-up),
  which is ``compaction_end``. Over the limit the request waits for the summary and places it
  first. A placed summary is the view's first message, then the entries from the first kept on.
- Subagents (000_f7323c157e80a40d.txt S4: subagentMaxConcurrency, "A subagent starts from the
  family of its parent"; derived from production's eukhe.agent.subagents where the seeds are
  silent). A child is a fresh run of the loop on its task alone, with the parent's limits and no
  layer of its own and no compaction; its final answer is its report, ``[Name] report``; a child
  that ends without one (refused, failed, out of tool rounds) gives ``subagent_failed``, naming
  how it ended and the run's words. The model's ``task`` call runs a child to its end; the report
  is the call's result (a call, so the calls of one reply run their children one after another).
  A task of no text (blanks) is refused before anything else is counted: ``subagent_failed``, and
  no child starts. subagentMaxConcurrency 0 refuses every other spawn (``no_slots``). ``/agent NAME TASK`` starts a
  child in the background: a bad name (``invalid_name``), a name that runs already
  (``agent_busy``) or no slots at all are refused at once; the children started together take the
  slots in order, each past subagentMaxConcurrency waits for one (a ``subagent`` row), and each
  report is a ``subagent`` row and, with no turn running, a work row of the conversation that the
  next request sends (the scenarios wait for the reports before the next event; the children end
  in the order they started). A report that comes while a turn runs joins that run where a
  steered message would (between tool calls, or after its answer, which the run then goes on
  from), before the steered message, as a work row; one that never joins is kept as the turn
  ends. The scenarios send such an ``/agent`` while a reply's request runs and let the child end
  before the reply is played. A child's lines are told as one block when it ends: its start, its
  requests, then its events (its requests and its events reach the parent by different ways).
- A turn sent while one runs is refused ``busy`` (control.md S4: steer and follow_up join a
  running turn; a turn does not). ``abort`` while a request runs ends the run there (``aborted``):
  that request's reply is never read, the stack is not asked, and the follow-ups waiting are
  dropped (derived: the seeds say abort cancels the turn; production's loop drops them, and the
  scenarios steer nothing into a turn they abort).
- The chat (``setup.chat``; memory.md rules 26, 47, 48, 57 and D11): each run's request opens with
  the chat's view as the run pinned it, the date and the turn's mark before the message (the token
  ``v<lines>+now+turn+u<length>``), then the run's own messages only: not the session's earlier
  runs, which the view holds. What the run commits is logged to the chat as it is committed, one
  line each (the message after the view, a reply's text, each call as it starts, each result), and
  so is a background report that comes with no turn running (not a message of the next request):
  each line is a line of the view (no compactor builds nodes of them). A child of the chat starts
  from the view as its spawn took it, then its task (``v<lines>+u<length>``); the children started
  together took it before any report. A refusal's row is the session's alone.
- A child whose request is never answered (its reply's ``fault`` ``hang``) sends nothing more; after
  subagentStallMs of silence (``stall_ms``) it is killed with its process group, and its outcome
  is ``stalled`` (derived from production's eukhe.agent.subagents: ``[Name] stalled: subagent Name
  sent nothing for N ms (subagentStallMs); its process group was killed``): its block is its start
  and its lines so far, nothing of its end; the run goes on.
- A reply's reasoning (its ``thinking``, streamed before its text and calls) reaches the clients
  as ``thinking`` events, one a piece, in order, once the reply is read (never for a reply whose
  request failed or was aborted); it is no message of any later request (derived from production's
  eukhe.agent.loop: a reasoning block is kept for the tool loop only when the provider signs it,
  and the openai-completions API of the scenarios signs none).
- A child whose process dies before it reports (a call of kind ``killed``: its bash call kills the
  child's own process, SIGKILL) ends there: its block is its start and its lines so far, nothing of
  that call or its end, and its outcome is ``subagent_failed``, ``subagent Name ended (exit -9)
  without a report`` (derived from production's eukhe.agent.subagents: the pipe ends, no ``done``
  came). A child whose agents/NAME.cfg does not parse (``broken_cfg`` names it) runs all the same,
  without that file's sets (S4: a settings error of the session, shown as a row): its first
  event is a ``settings_error`` row naming the file.
- ``/rewind`` (control.md S5.7; derived from production's eukhe.agent.daemon: a branch move that
  would leave a running turn's or a background child's lines on the old branch) is refused ``busy``
  while a turn runs (a reply's ``rewind``, sent while its request runs) and while a background
  child runs (an ``agent`` event's ``rewind``, sent as soon as that child has started).
- ``{"model": "PROVIDER/ID", "map": {level: wire}}`` pins the session to a model of the compiled
  catalog (a reasoning model with that thinkingLevelMap) whose provider the agent dir holds no
  credentials of (``/model`` takes it: a ``note`` row, an ``effort`` row when S10's switch changes
  the shown level, through ``bend.effort``, then the model): a turn then cannot resolve it and ends
  ``failed`` with no request and no message committed (inference.md S6: no credentials, no turn),
  and a child started by ``/agent`` cannot either: it ends at once, before any request,
  ``subagent_failed`` naming why (``provider P has no credentials (auth.json, or P_API_KEY); run
  `eukhe login P```), after the row of its agents/NAME.cfg when that does not parse.
- A reply's ``stop``: the agent process stops while its request runs (its socket closed, as
  ``eukhe agent stop`` or SIGTERM does; control.md: the agent owns the session until it ends): the
  background children are killed with their groups (no report of theirs comes), the turn is aborted
  (``aborted``: that request's reply is never read), and nothing more is served (the scenario ends
  there). An ``agent`` event with ``"wait": false`` leaves its child running (the scenario does not
  wait for its report before the next event).
- Messages sent as a turn starts (an input's ``early``: steer, follow_up and abort sent right after
  the turn request, before its run has begun; control.md S4: steer joins a running turn, follow_up
  runs after it, abort cancels it). A steered message waits to join as one sent while the run's
  first request runs would (after that reply's calls or its answer), a follow-up runs after the
  turn; an abort ends the turn there (``aborted``): no run begins, its message is never committed,
  no request is sent, and the messages sent with it are dropped (derived from production's
  eukhe.agent.runner: the turn ends before it has a loop to join).
- A reply's ``break_stack``: while its request runs, main's Director stack document is replaced by one
  that does not parse (as a damaged file would be). The loop reads the stack before each request,
  for a forced call after its reply, and at each step: the first such read fails the turn
  (``error turn_failed``, then ``end failed``: a failure of the loop itself, not a run's end, so
  nothing that waits runs after it and nothing is kept); from then on a push is refused, and a turn
  fails as its run begins (``error turn_failed``, with no end: the run never started). Derived from
  production's eukhe.agent.daemon (a turn that raises is told as turn_failed) and S5 item 8 (the
  stack is the document eukhe.directors) with the design's rule that a document that fails to
  parse is a typed error, never read as empty nor overwritten.
- ``slots_held`` ``"abort"``: every providerMaxInFlight slot is held elsewhere when the first input
  is sent, and the turn is aborted while its first request waits for one (control.md S4b.4 and S4:
  abort cancels the turn): the request is never sent, the run ends ``aborted`` (its message is
  committed, as any run's, before its first request), then the slots are let go.
- Each call's outcome kind (ok, or the error kind of its result) is given by the scenario:
  the argument repair and the tools are judged by their own laws and tests; the work of the
  session (S5.8) counts each distinct call, keyed by the scenario's act key.

Scenario events (JSON objects, one per line):

  {"setup": {"max_steps", "stack_cap", "stall_steps", "max_continuations", "max_tool_rounds",
             "max_retries", "steering_mode", "follow_up_mode", "compaction": "background"|"blocking",
             "keep_recent", "titles": "on"|"named", "title_reply": reply, "slots_held": bool, "chat": bool,
             "stall_ms": int, "broken_cfg": [name]}}
                                    (titles: titles.generate on, the session named by the user
                                    or not; the title request takes title_reply; the transcript
                                    ends with the title's line; slots_held: every
                                    providerMaxInFlight slot is held elsewhere when the first
                                    input is sent, and let go once its request waits for one;
                                    "abort": the turn is aborted while it waits, see above)
  {"goal": {"id", "objective"}}     an active goal
  {"autonomous": true|false}        enable or disable the autonomous run
  {"remind": text}                  /remind text
  {"force": {"tool", "tries"}}      /force tool --tries n
  {"model": "PROVIDER/ID", "map": {level: wire|null}}   /model PROVIDER/ID (no credentials)
  {"agent": {"name", "task", "replies": [reply, ...]}}   /agent NAME TASK (the agent events in a
                                    row start together; the child takes its replies)
  {"spawn_line": text | {"parent": pid, ...}}   a child process started with this spawn line
                                    by no agent (``spawn_refused``)
  {"input": text, "replies": [reply, ...], "summaries": [summary, ...],
   "children": {name: [reply, ...]},
   "early": {"steer": [text], "follow_up": [text], "abort": bool}}   a user turn (early: the
                                    messages and the abort sent as it starts, see above); its
                                    requests take the replies in order, then the default reply
                                    (text "done."); its compactions take the summaries in order,
                                    then the default summary

  summary: {"text": str, "fault": ""|"fail"}

  reply: {"text": str, "calls": [call], "leaks": [call], "stop": "stop"|"length"|"toolUse"|"refusal",
          "fault": ""|"fail"|"cut"|"loop"|"hang", "steer": [text], "follow_up": [text],
          "agents": [{"name", "task", "replies": [reply, ...]}], "busy": bool, "abort": bool,
          "thinking": [text]}
          (steer, follow_up, agents, busy and abort: the messages, /agent commands, a second
          turn and an abort sent while the reply's request runs, in that order; each child ends
          before the next is sent)
  call:  {"name": str, "args": str, "act": str, "kind": "ok"|error kind}; a ``task`` call names
         its child's "agent" ("" for the default name) and "task" (its kind is the child's); a
         ``seq 1 N`` bash call its "seq" (N) and "exit" (its exit code): its result is shown
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, replace

from bend import director, effort, progress
from bend.infer import flag

MAX_NOTES = 8
LEAK_NOTES = 2
ABORTED = "aborted"
STACK_UNREADABLE = "stack_unreadable"  # a run's end when a read of the Director stack fails
STACK_FAILURE = ("error turn_failed", "end failed")  # what the clients are told of it
HANG, STALLED = "hang", "stalled"  # a child's reply that never comes; how that child ends
KILLED, KILL_EXIT = "killed", -9  # a call that kills its child's process (SIGKILL); that child's exit
OFFERED: tuple[str, ...] = ("read", "write", "edit", "ls", "glob", "grep", "bash", "task")
NAME_FIRST = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
NAME_REST = NAME_FIRST + "0123456789_-"
DEFAULT_REPLY_TEXT = "done."
NO_REASON = "(the provider gave no reason)"  # a refusal's row when the provider said nothing
DEFAULT_SUMMARY = "The work so far."  # a compaction's summary when the scenario gives none
BACKGROUND, BLOCKING = "background", "blocking"  # every request over the threshold, over the limit
GOAL, AUTONOMOUS, REMINDER, FORCED = "goal", "autonomous", "reminder", "forced"
ACTIVE, PAUSED, FAILED, CLEARED = "active", "paused", "failed", "cleared"


@dataclass(frozen=True)
class Limits:
    max_steps: int = 200
    stack_cap: int = 8
    stall_steps: int = 3
    max_continuations: int = 20
    max_tool_rounds: int = 50
    max_retries: int = 3
    steering_all: bool = False  # steeringMode all: every waiting message joins as one (else the first)
    follow_up_all: bool = False  # followUpMode all
    compaction: str = ""  # "" (no request over the threshold), BACKGROUND or BLOCKING
    keep: int = 0  # compaction.keepRecentTokens (at most half the threshold in the scenarios)
    max_subagents: int = 4  # subagentMaxConcurrency
    chat: bool = False  # the session is the chat: each run answers from the chat's view (memory.md)
    stall_ms: int = 300_000  # subagentStallMs
    broken_cfg: tuple[str, ...] = ()  # the children whose agents/NAME.cfg does not parse


@dataclass(frozen=True)
class Layer:
    kind: str
    budget: int
    text: str = ""
    tool: str = ""
    tries: int = 1
    misses: int = 0
    requests: int = 0
    called: bool = False


@dataclass(frozen=True)
class Goal:
    id: str
    objective: str
    status: str
    record: progress.Record | None


@dataclass(frozen=True)
class Auto:
    enabled: bool
    used: int
    max: int


@dataclass(frozen=True)
class Call:
    name: str
    act: str
    kind: str
    agent: str = ""  # a task call: its child's name ("" for the default) and task
    task: str = ""
    seq: int = 0  # a bash call whose output is the lines 1..seq (``seq 1 N``), then exits ``exit``
    exit: int = 0


@dataclass(frozen=True)
class Reply:
    text: str
    calls: tuple[Call, ...]
    leaks: tuple[Call, ...]
    stop: str
    fault: str
    steer: tuple[str, ...] = ()  # messages steered while its request runs
    follow_up: tuple[str, ...] = ()  # messages queued to run after the turn while its request runs
    agents: tuple[Spawn, ...] = ()  # /agent commands sent while its request runs
    busy: bool = False  # a second turn sent while its request runs (refused busy)
    abort: bool = False  # the turn aborted while its request runs
    thinking: tuple[str, ...] = ()  # the reasoning streamed before its text and calls, piece by piece
    rewind: bool = False  # /rewind sent while its request runs (refused busy)
    stop_agent: bool = False  # the agent process stops while its request runs
    break_stack: bool = False  # main's Director stack document is made unreadable while its request runs


@dataclass(frozen=True)
class Spawn:
    """``/agent NAME TASK`` sent while a request runs; the child takes ``replies``."""

    name: str
    task: str
    replies: tuple[Reply, ...]


@dataclass(frozen=True)
class Sent:
    """A message of the view: its token (``u<length>`` a user message or a continuation, ``a`` a
    reply, ``a:NAME,NAME`` a reply with its calls, ``t`` a result) and, for a user entry, its
    local input-token estimate (0 for any other entry)."""

    token: str
    user: int = 0


@dataclass(frozen=True)
class SummaryReply:
    text: str
    fault: str  # "" or "fail": the summary request fails


@dataclass(frozen=True)
class Compacted:
    """A written summary waiting for a run boundary: its text, and the place in the view of the
    first entry it does not cover (the first kept)."""

    text: str
    first: int


@dataclass(frozen=True)
class World:
    limits: Limits
    stack: tuple[Layer, ...]
    goal: Goal | None
    auto: Auto | None
    ledger: progress.Ledger
    steps: int
    end: str
    run: str
    sent: tuple[Sent, ...] = ()  # the view after the placed summary: what the next request sends
    steering: tuple[str, ...] = ()  # steered messages waiting to join
    follow_ups: tuple[str, ...] = ()  # messages waiting to run as the next turns
    summary: str | None = None  # the placed summary, the view's first message
    queued: Compacted | None = None  # a written summary waiting for the next run boundary
    summaries: tuple[SummaryReply, ...] = ()  # the replies to this input's summary requests, in order
    children: tuple[tuple[str, tuple[Reply, ...]], ...] = ()  # the replies each child name takes next
    answer: str = ""  # the text of the last final answer (a child's report)
    batch: tuple[tuple[str, str], ...] = ()  # the /agent children started together: name, task
    reports: tuple[str, ...] = ()  # reports of children that ended while the run went on, waiting to join it
    logged: int = 0  # the chat: the lines its log holds (each one a line of the view, none yet built)
    lead: str = ""  # the chat: what the run's user message opens with (its view, the date, the turn's mark)
    unresolved: str = ""  # the pinned model with no credentials ("": the scenario's model)
    stopped: bool = False  # the agent process has stopped: nothing more is served
    broken_stack: bool = False  # main's Director stack document does not parse: pushes refused, a read of it fails the turn


@dataclass(frozen=True)
class Replies:
    """The replies of one input and how many were taken."""

    items: tuple[Reply, ...]
    taken: int


def take(world: World, replies: Replies) -> tuple[World, Reply, Replies, tuple[str, ...]]:
    """The next reply; the messages sent while its request ran wait in their queues, and the
    children started meanwhile end first (their reports wait to join), with their lines."""
    if replies.taken < len(replies.items):
        reply = replies.items[replies.taken]
        waiting, lines = spawned(world, reply.agents)
        waiting = replace(waiting, steering=waiting.steering + reply.steer, follow_ups=waiting.follow_ups + reply.follow_up)
        return waiting, reply, Replies(replies.items, replies.taken + 1), lines
    return world, Reply(DEFAULT_REPLY_TEXT, (), (), "stop", ""), replies, ()


def first_of(waiting: tuple[str, ...], every: bool) -> tuple[str, tuple[str, ...]]:
    """The message a queue gives next (its mode: the first, or all of them as one) and the rest;
    "" when none waits."""
    if not waiting:
        return "", waiting
    count = len(waiting) if every else 1
    return "\n\n".join(waiting[:count]), waiting[count:]


def join_steering(world: World) -> tuple[World, bool, tuple[str, ...]]:
    """The reports that came meanwhile join the run (work rows), then the steered message, if
    one waits, as a user message (a ``joined`` row); whether anything joined."""
    reported = world.reports != ()
    world = commit_reports(world)
    text, rest = first_of(world.steering, world.limits.steering_all)
    if text == "":
        return world, reported, ()
    return said_user(replace(world, steering=rest), text), True, ("row joined: " + text.replace("\n", "\\n"),)  # one transcript line


def commit_reports(world: World) -> World:
    """The reports waiting to join, each a work row the next request sends."""
    for text in world.reports:
        world = said(world, f"u{len(text)}")
    return replace(world, reports=())


# -- begin and the entry points (S5.6, S5.7) ---------------------------------------------------


def pushed_count(stack: tuple[Layer, ...]) -> int:
    return len([layer for layer in stack if layer.kind in (REMINDER, FORCED)])


def push(world: World, layer: Layer) -> tuple[World, bool]:
    if world.broken_stack or pushed_count(world.stack) >= world.limits.stack_cap:
        return world, False
    return replace(world, stack=world.stack + (layer,)), True


def begin(world: World, run: str) -> World:
    goal_drives = world.goal is not None and world.goal.status == ACTIVE
    auto_drives = world.auto is not None and world.auto.enabled
    remaining = 0 if world.auto is None else max(0, world.auto.max - world.auto.used)
    goal_layer = next((layer for layer in world.stack if layer.kind == GOAL), None)
    auto_layer = next((layer for layer in world.stack if layer.kind == AUTONOMOUS), None)
    pushed = tuple(
        replace(layer, misses=0) if layer.kind == FORCED else layer for layer in world.stack if layer.kind in (REMINDER, FORCED)
    )
    if auto_layer is None and auto_drives:
        auto_layer = Layer(AUTONOMOUS, 0)
    if goal_layer is None and goal_drives:
        goal_layer = Layer(GOAL, 0)
    bottom: tuple[Layer, ...] = ()
    if auto_layer is not None:
        bottom = bottom + (replace(auto_layer, budget=remaining),)
    if goal_layer is not None:
        bottom = bottom + (replace(goal_layer, budget=world.limits.max_steps),)
    goal = world.goal if world.goal is None else replace(world.goal, record=None)
    return replace(world, stack=bottom + pushed, goal=goal, steps=world.limits.max_steps, end="", run=run)


# -- the step (S5.4, S5.5, S5.8) ---------------------------------------------------------------


@dataclass(frozen=True)
class Judged:
    """The verdicts of the asked layers (by place) and what they would write: the goal, the
    autonomous run's continuation, display rows, the error of an abort, the asked reminders,
    the place of an aborted forced call, and the continuation text of the layer that
    continued."""

    tags: tuple[tuple[int, str], ...]
    goal: Goal | None
    auto_again: bool
    rows: tuple[str, ...]
    error: str
    reminders: tuple[int, ...]
    aborted: int
    continuation: str


def not_called(tool: str, requests: int) -> str:
    return f"ForcedToolError::NotCalled: the forced tool {tool} was not called in {requests} request(s)"


def pause_row(count: int) -> str:
    return f"Goal paused. {progress.pause_reason(count)}. Send a message or resume the goal to give it the full progress cap again."


@dataclass(frozen=True)
class Said:
    """One layer's verdict from the state: the tag, the goal it would write, a display row, an
    error, the continuation it asks for."""

    tag: str
    goal: Goal | None = None
    row: str = ""
    error: str = ""
    continuation: str = ""


def verdict(world: World, layer: Layer) -> Said:
    goal = world.goal
    if layer.kind == GOAL:
        if goal is None or goal.status == CLEARED:
            return Said(director.LEAVE)
        if goal.status != ACTIVE:
            return Said(director.GIVE_BACK)
        checked = progress.check(goal.record, world.run, goal.id, progress.work(world.ledger), world.limits.stall_steps)
        if checked.verdict == progress.PAUSE:
            return Said(director.GIVE_BACK, replace(goal, status=PAUSED, record=checked.record), pause_row(checked.count))
        text = f"Continue working toward the goal: {goal.objective}"
        if checked.verdict == progress.NOTED:
            text = text + "\n" + progress.note_text(checked.count, world.limits.stall_steps)
        return Said(director.AGAIN, replace(goal, record=checked.record), continuation=text)
    if layer.kind == AUTONOMOUS:
        auto = world.auto
        if goal is not None and goal.status == ACTIVE:
            return Said(director.DEFER)
        if auto is None or not auto.enabled:
            return Said(director.LEAVE)
        if auto.used >= auto.max:
            return Said(director.GIVE_BACK)
        return Said(director.AGAIN, continuation="Continue the autonomous run.")
    if layer.kind == REMINDER:
        return Said(director.LEAVE)
    if layer.called:
        return Said(director.LEAVE)
    if layer.budget > 0:
        return Said(director.AGAIN, continuation=f"Call the tool {layer.tool}.")
    error = not_called(layer.tool, layer.requests)
    return Said(director.ABORT, row=error, error=error)


def judge(world: World) -> Judged:
    """Ask from the top until a layer decides (Defer and Leave pass the decision down)."""
    tags: tuple[tuple[int, str], ...] = ()
    goal: Goal | None = None
    auto_again = False
    rows: tuple[str, ...] = ()
    error = ""
    reminders: tuple[int, ...] = ()
    aborted = -1
    place = len(world.stack) - 1
    while place >= 0:
        layer = world.stack[place]
        said = verdict(world, layer)
        tags = tags + ((place, said.tag),)
        if said.goal is not None:
            goal = said.goal
        if said.row:
            rows = rows + (said.row,)
        if said.error:
            error = said.error
            aborted = place
        if layer.kind == REMINDER:
            reminders = reminders + (place,)
        if layer.kind == AUTONOMOUS and said.tag == director.AGAIN:
            auto_again = True
        if said.tag != director.DEFER and said.tag != director.LEAVE:
            return Judged(tags, goal, auto_again, rows, error, reminders, aborted, said.continuation)
        place -= 1
    return Judged(tags, goal, auto_again, rows, error, reminders, aborted, "")


def verdict_list(judged: Judged, waiting: bool) -> tuple[director.Verdict, ...]:
    """The verdicts from the top down for ``director.tick`` (``waiting``: reminders defer)."""
    out: tuple[director.Verdict, ...] = ()
    for place, tag in judged.tags:
        out = out + (director.Verdict(director.DEFER if waiting and place in judged.reminders else tag),)
    return out


def shown(world: World, judged: Judged, waiting: bool) -> str:
    names = tuple(
        f"{world.stack[place].kind}:{'defer' if waiting and place in judged.reminders else tag}" for place, tag in judged.tags
    )
    return ",".join(names) if names else "-"


def step(world: World, text: str) -> tuple[World, str, str, tuple[str, ...], str]:
    """The step of a final answer: the world after it, its decision, rule, verdicts shown and
    display rows, and the error of a failed step."""
    if text.strip() == "":
        goal = world.goal
        if goal is not None and goal.status == ACTIVE:
            goal = replace(goal, status=FAILED)
        message = "model error: an empty reply (no text and no tool call)"
        return replace(world, goal=goal, end=director.FAIL), "fail model_error -", "", (), message
    if not world.stack:
        return world, "yield none -", "", (), ""
    if world.end != "":
        return world, f"{world.end} ended -", "", (), ""
    judged = judge(world)
    cap = director.full_cap(world.limits.stack_cap)
    numbered = tuple(director.Layer(place, layer.budget) for place, layer in enumerate(world.stack))
    loop, rule = director.tick(director.Loop(numbered, world.steps, ""), verdict_list(judged, False), cap)
    waiting = False
    if judged.reminders and not (rule != "no_step" and loop.end == ""):
        waiting = True
        loop, rule = director.tick(director.Loop(numbered, world.steps, ""), verdict_list(judged, True), cap)
    verdicts = shown(world, judged, waiting)
    if rule == "no_step":
        return replace(world, end=director.GIVE_BACK), f"yield no_step {verdicts}", "", (), ""
    outcome = director.CONTINUE if loop.end == "" else loop.end
    decider = judged.tags[-1][0] if judged.tags and judged.tags[-1][1] not in (director.DEFER, director.LEAVE) else -1
    stack = tuple(replace(world.stack[layer.kind], budget=layer.budget) for layer in loop.stack if layer.kind != judged.aborted or decider != judged.aborted)
    auto = world.auto
    if outcome == director.CONTINUE and auto is not None and decider >= 0 and world.stack[decider].kind == AUTONOMOUS:
        auto = replace(auto, used=auto.used + 1)
    goal = world.goal if judged.goal is None else judged.goal
    after = replace(world, stack=stack, goal=goal, auto=auto, steps=loop.steps, end=loop.end)
    continuation = ""
    if outcome == director.CONTINUE:
        texts = tuple(world.stack[place].text for place in judged.reminders) + (judged.continuation,)
        continuation = "\n\n".join(text for text in texts if text != "")
    return after, f"{outcome} {rule} {verdicts}", continuation, judged.rows, judged.error


# -- a generation (S6.3, S6.5, S6.10) ------------------------------------------------------------


@dataclass(frozen=True)
class Final:
    text: str
    end: str  # "": an answer for the step


def forced_place(stack: tuple[Layer, ...]) -> int:
    place = len(stack) - 1
    while place >= 0:
        if stack[place].kind == FORCED and not stack[place].called:
            return place
        place -= 1
    return -1


def tokens(world: World, sent: tuple[Sent, ...]) -> str:
    """The messages a request sends, one token each: the placed summary (``s<length>``) first."""
    first = () if world.summary is None else (f"s{len(world.summary)}",)
    return " ".join(first + tuple(item.token for item in sent)) or "-"


def request_line(world: World, note: str) -> str:
    sent = tokens(world, world.sent)
    place = forced_place(world.stack)
    if place < 0:
        return f"request forced=- note={note} sent={sent}"
    layer = world.stack[place]
    how = "native" if flag(layer.misses, True, False) else "soft"
    return f"request forced={layer.tool}/{how} note={note} sent={sent}"


def said(world: World, *tokens: str) -> World:
    """The conversation with the messages a step added: ``u<length>`` a continuation, ``a`` a
    reply, ``a:NAME,NAME`` a reply with its calls, ``t`` a result (no user entry among them)."""
    return replace(world, sent=world.sent + tuple(Sent(token) for token in tokens))


def estimate(text: str) -> int:
    """A user message's local input-token estimate: its JSON bytes over 4, rounded up (derived:
    the seed names a local estimate and no formula; production counts so)."""
    size = len(json.dumps(text, ensure_ascii=False).encode("utf-8"))
    return (size + 3) // 4


def said_user(world: World, text: str) -> World:
    """The conversation with a user entry: the run's input or a joined steered message."""
    assert world.limits.compaction == "" or estimate(text) >= world.limits.keep, "a user message shorter than keep"
    return replace(world, sent=world.sent + (Sent(f"{world.lead}u{len(text)}", estimate(text)),), lead="")


# -- session compaction (S6.6) -------------------------------------------------------------------


def entries_of(item: Sent) -> int:
    """The session entries a message stands for: a reply with calls is the reply and one entry a
    call; any other message one entry."""
    if item.token.startswith("a:"):
        return 1 + len(item.token[2:].split(","))
    return 1


def kept_from(world: World) -> int:
    """The place of the first kept entry, or -1 when nothing can be compacted: the newest keep
    tokens, widened back to the user entry that starts them, with something before it. Every user
    entry is at least keep tokens, so a tail starts at a user entry only when that entry is the
    newest and exactly keep tokens (the module's docstring)."""
    if not world.sent:
        return -1
    newest = world.sent[-1]
    if newest.user == 0 or newest.user > world.limits.keep or len(world.sent) < 2:
        return -1
    return len(world.sent) - 1


def next_summary(world: World) -> tuple[World, SummaryReply]:
    if world.summaries:
        return replace(world, summaries=world.summaries[1:]), world.summaries[0]
    return world, SummaryReply(DEFAULT_SUMMARY, "")


def compact(world: World) -> tuple[World, tuple[str, ...]]:
    """A compaction, started before a request when no summary is queued: the summary request
    (the placed summary, then the covered entries) and what became of it. Nothing starts when
    nothing is left to compact."""
    first = kept_from(world)
    if world.queued is not None or first < 0:
        return world, ()
    covered = world.sent[:first]
    world, reply = next_summary(world)
    lines = (f"summary sent={tokens(world, covered)}",)
    text = reply.text.strip()
    if reply.fault == "fail":
        return world, lines + ("row compaction: compaction failed: (the summary request failed)",)
    if text == "":
        return world, lines + ("row compaction: compaction failed: the summary is empty",)
    count = sum(entries_of(item) for item in covered)
    ready = f"row compaction: compaction ready: {count} entries summarized; the summary is placed at the next run boundary"
    return replace(world, queued=Compacted(text, first)), lines + (ready,)


def place(world: World) -> tuple[World, tuple[str, ...]]:
    """The queued summary placed (compaction_end): the view is the summary, then the entries from
    the first kept on."""
    queued = world.queued
    if queued is None:
        return world, ()
    placed = replace(world, summary=queued.text, sent=world.sent[queued.first :], queued=None)
    return placed, ("row compaction: compaction_end: the summary is placed",)


def before_request(world: World) -> tuple[World, tuple[str, ...], tuple[str, ...]]:
    """Compaction at a request of a generation: the world, the lines before the request's line
    and those after it. Over the threshold a started compaction is written while the request runs
    (its lines follow the request's); over the limit the request waits for it and places it."""
    if world.limits.compaction == "":
        return world, (), ()
    world, written = compact(world)
    if world.limits.compaction == BLOCKING:
        world, placed = place(world)
        return world, written + placed, ()
    return world, (), written


CAP = 30_000  # memory.md rule 9: a tool's output is clipped to head + tail, 30,000 characters in all


def long_output(seq: int, code: int) -> str:
    """A bash result past 1,000 characters as the transcript shows it: its length, its first and
    last output lines, its status line. The output (the lines 1..seq) is clipped to head + tail
    (memory.md rule 9) so that with the status line after it (``exit code N``, on a line of its
    own) the result stays within CAP characters (derived: the status is part of the result)."""
    output = "".join(f"{n}\n" for n in range(1, seq + 1))
    status = f"exit code {code}"
    kept = min(len(output), CAP - len(status) - 1)
    return f"[{kept + len(status)} chars, lines 1..{seq}, {status}]"


def logs(world: World, count: int) -> World:
    """The chat's log after ``count`` more lines (memory.md rule 48: what a run commits is logged
    to the chat as it is committed); outside the chat, the world as it is."""
    return replace(world, logged=world.logged + count) if world.limits.chat else world


def run_calls(world: World, calls: tuple[Call, ...], truncated: bool, text: str = "") -> tuple[World, tuple[str, ...]]:
    lines: tuple[str, ...] = ()
    world = logs(said(world, "a:" + ",".join(call.name for call in calls), *("t" for _ in calls)), 1 if text != "" else 0)
    ledger = world.ledger
    for call in calls:
        world = logs(world, 1)  # the call, logged as it is committed, before it runs
        kind = "truncated" if truncated else call.kind
        shown = f"call {call.name} {kind}"
        if call.name == "task" and not truncated:
            world, kind, report, block = task_call(world, call)
            shown = f"call task {kind}" + (f" {report}" if kind == "ok" else "")
            lines = lines + block
        if call.seq > 0 and not truncated:
            shown = shown + " " + long_output(call.seq, call.exit)
        lines = lines + (shown,)
        world = logs(world, 1)  # its result
        ledger = progress.record_act(ledger, progress.call_act(call.name, call.act, kind, kind != "ok"))
    return replace(world, ledger=ledger), lines


def generation(world: World, replies: Replies) -> tuple[World, Replies, Final, tuple[str, ...]]:
    lines: tuple[str, ...] = ()
    notes = 0
    leak_notes = 0
    rounds = 0
    note = "-"
    while True:
        if world.broken_stack:  # the stack is read before each request: the run fails there
            return world, replies, Final("", STACK_UNREADABLE), lines
        world, before, after = before_request(world)
        lines = lines + before + (request_line(world, note),) + after
        world, reply, replies, spawns = take(world, replies)
        lines = lines + spawns
        if reply.fault == HANG:  # a child's request never answered: it sends nothing more, and stalls
            return world, replies, Final("", STALLED), lines
        if reply.busy:  # one turn runs at a time: a turn sent meanwhile is refused
            lines = lines + ("turn refused busy",)
        if reply.rewind:  # no branch move while a turn runs
            lines = lines + ("rewind refused busy",)
        if reply.abort:  # the run ends where it is: its request's reply is never read
            return world, replies, Final("", ABORTED), lines + ("abort ok",)
        if reply.stop_agent:  # the agent stops: the background children are killed, then the turn aborted
            return replace(world, batch=(), stopped=True), replies, Final("", ABORTED), lines + ("agent stops",)
        if reply.break_stack:  # the stack document no longer parses: its next read fails the run
            world = replace(world, broken_stack=True)
        retries = 0
        while reply.fault == "fail":
            if retries >= world.limits.max_retries:
                return world, replies, Final("", "failed"), lines
            retries += 1
            lines = lines + (f"retry {retries}/{world.limits.max_retries}", request_line(world, note))
            world, reply, replies, spawns = take(world, replies)
            lines = lines + spawns
            if reply.busy:  # sent while the retry's request runs, as above
                lines = lines + ("turn refused busy",)
            if reply.rewind:
                lines = lines + ("rewind refused busy",)
            if reply.abort:
                return world, replies, Final("", ABORTED), lines + ("abort ok",)
        if reply.fault == "":  # the reply is read: its reasoning streams to the clients first
            lines = lines + tuple("thinking " + json.dumps(piece, ensure_ascii=False) for piece in reply.thinking)
        if reply.stop == "refusal":
            # a refusal ends the run: its text kept, a refused row, never sent again, the stack
            # not asked (derived: the seeds are silent on a refusal in the loop)
            world = said(world, "a") if reply.text != "" else world
            return world, replies, Final("", "refused"), lines + (f"row refused: {NO_REASON}",)
        if reply.fault == "cut" or reply.fault == "loop":
            if notes >= MAX_NOTES:
                return world, replies, Final("", "max_notes"), lines
            notes += 1
            note = reply.fault
            lines = lines + (f"note {note} {notes}/{MAX_NOTES}",)
            continue
        place = forced_place(world.stack)
        if place >= 0 and world.broken_stack:  # the forced call's layer is read from the stack
            return world, replies, Final("", STACK_UNREADABLE), lines
        if place >= 0:
            layer = world.stack[place]
            called = any(call.name == layer.tool for call in reply.calls)
            if called:
                world = replace(world, stack=world.stack[:place] + (replace(layer, requests=layer.requests + 1, called=True),) + world.stack[place + 1 :])
            else:
                missed = replace(layer, requests=layer.requests + 1, misses=layer.misses + 1)
                if missed.misses > missed.tries:
                    world = replace(world, stack=world.stack[:place] + world.stack[place + 1 :])
                    return world, replies, Final("", "not_called"), lines
                world = replace(world, stack=world.stack[:place] + (missed,) + world.stack[place + 1 :])
                note = "-"
                continue
        calls: tuple[Call, ...] = ()
        rebuilt = False
        noted = ""
        answer = False
        if reply.calls:
            calls = reply.calls
        elif reply.leaks and all(call.name in OFFERED for call in reply.leaks):
            calls = reply.leaks
            rebuilt = True
        elif reply.leaks and leak_notes < LEAK_NOTES:
            noted = "leak"
        elif reply.leaks or reply.text.strip() != "":
            answer = True
        elif reply.stop == "length":
            noted = "length"
        else:
            noted = "no_answer"
        leak_notes = leak_notes + 1 if noted == "leak" else 0
        if noted != "":
            if notes >= MAX_NOTES:
                if noted == "leak":
                    return said(world, "a"), replies, Final(reply.text, ""), lines
                return world, replies, Final("", ""), lines
            notes += 1
            note = noted
            lines = lines + (f"note {note} {notes}/{MAX_NOTES}",)
            continue
        note = "-"
        if answer:
            world, joined, rows = join_steering(said(world, "a"))
            if joined:  # a message that came as the answer ended joins: the run goes on with it
                lines = lines + rows
                continue
            return logs(world, 1 if reply.text != "" else 0), replies, Final(reply.text, ""), lines
        if rounds >= world.limits.max_tool_rounds:
            return world, replies, Final("", "max_tool_rounds"), lines
        rounds += 1
        if reply.stop != "length" and any(call.kind == KILLED for call in calls):  # the child's process dies
            return world, replies, Final("", KILLED), lines
        if rebuilt:
            lines = lines + (f"row note: rebuilt {len(calls)} leaked tool call(s)",)
        world, ran = run_calls(world, calls, reply.stop == "length", reply.text)
        world, _, rows = join_steering(world)
        lines = lines + ran + rows


def turn(world: World, run: str, text: str, replies: Replies) -> tuple[World, tuple[str, ...]]:
    """A user input to the end of its run; then a steered message left waiting when the run
    ended (it could not join) runs next, then the follow-ups, each a run of its own."""
    lines: tuple[str, ...] = ()
    runs = 0
    while text != "":
        world, replies, done = one_run(world, run if runs == 0 else f"{run}+{runs}", text, replies)
        lines = lines + done
        runs += 1
        if done[-1:] == (f"end {ABORTED}",):  # an aborted turn ends there: its follow-ups are dropped
            world = replace(world, follow_ups=())
            break
        if done[-2:] == STACK_FAILURE:  # the loop itself failed: nothing waiting runs, nothing is kept
            return replace(world, steering=(), follow_ups=(), reports=()), lines
        text, steering = first_of(world.steering, world.limits.steering_all)
        world = replace(world, steering=steering)
        if text == "":
            text, follow_ups = first_of(world.follow_ups, world.limits.follow_up_all)
            world = replace(world, follow_ups=follow_ups)
    return commit_reports(world), lines  # reports that never joined a run are kept as the turn ends


def one_run(world: World, run: str, text: str, replies: Replies) -> tuple[World, Replies, tuple[str, ...]]:
    """One run: a queued summary placed (a run boundary, S6.6), then the input's requests and the
    Director stack's steps to its end."""
    world, lines = place(world)
    if world.limits.chat:  # the run's request: the view pinned, the date, the turn's mark, the message (memory.md rules 26, 47; D11)
        world = replace(world, sent=(), lead=f"v{world.logged}+now+turn+")
    world = logs(said_user(begin(world, run), text), 1)  # the message, logged after the view
    while True:
        world, replies, final, done = generation(world, replies)
        lines = lines + done
        if final.end == STACK_UNREADABLE or (final.end == "" and world.broken_stack):  # the step reads the stack too
            return world, replies, lines + STACK_FAILURE
        if final.end != "":
            return world, replies, lines + (f"end {final.end}",)
        world, decided, continuation, rows, error = step(replace(world, answer=final.text), final.text)
        lines = lines + (f"step {decided}",)
        if decided.startswith("continue "):
            lines = lines + ("continuation " + json.dumps(continuation, ensure_ascii=False),)
            world = said(world, f"u{len(continuation)}") if continuation != "" else world
        lines = lines + tuple(f"row director: {row}" for row in rows)
        if decided.startswith("continue "):
            continue
        end = "answered" if decided.startswith("yield ") else "failed"
        return world, replies, lines + (f"end {end}",)


# -- subagents (control.md S4) -------------------------------------------------------------------


def valid_name(name: str) -> bool:
    """A letter, then letters, digits, _ or - (64 at most)."""
    return 0 < len(name) <= 64 and name[0] in NAME_FIRST and all(c in NAME_REST for c in name[1:])


def ended_words(end: str, limits: Limits) -> str:
    """What a run that ended without an answer said (the ends a child's scenario reaches)."""
    if end == "refused":
        return NO_REASON
    if end == "max_tool_rounds":
        return f"maxToolRounds {limits.max_tool_rounds}: a reply called tools once more; its calls did not run"
    if end == "failed":
        return "model error: an empty reply (no text and no tool call)"
    return ""


def child_replies(world: World, name: str) -> tuple[Reply, ...]:
    return next((replies for named, replies in world.children if named == name), ())


def with_child_replies(world: World, name: str, replies: tuple[Reply, ...]) -> World:
    rest = tuple((named, items) for named, items in world.children if named != name)
    return replace(world, children=rest + ((name, replies),))


def child(world: World, name: str, task: str) -> tuple[World, str, str, tuple[str, ...]]:
    """Child ``name`` on ``task`` to its end: the world (its replies taken), its outcome kind
    (ok or subagent_failed), the outcome's text, and its block of lines."""
    broken = (f"row settings_error: {name}.cfg",) if name in world.limits.broken_cfg else ()  # its first event
    if world.unresolved != "":  # its model cannot be resolved: it ends before any request
        provider = world.unresolved.partition("/")[0]
        why = f"provider {provider} has no credentials (auth.json, or {provider.upper().replace('-', '_')}_API_KEY); run `eukhe login {provider}`"
        text = f"[{name}] subagent_failed: subagent {name} ended without a report (failed): {why}"
        return world, "subagent_failed", text, (f"sub {name}: starts: {task}",) + tuple(f"sub {name}: {line}" for line in broken)
    lead = f"v{world.logged}+" if world.limits.chat else ""  # a chat's child starts from its view (rule 57)
    kid = World(replace(world.limits, compaction="", chat=False), (), None, None, (), 0, "", "", lead=lead)
    items = child_replies(world, name)
    kid, taken, done = one_run(kid, name, task, Replies(items, 0))
    world = with_child_replies(world, name, items[taken.taken :])
    block = (
        (f"sub {name}: starts: {task}",)
        + tuple(f"sub {name}: {line}" for line in done if line.startswith("request "))
        + tuple(f"sub {name}: {line}" for line in broken + done if not line.startswith("request "))
    )
    end = done[-1][len("end ") :]
    if end == KILLED:  # its pipe ended with no report: nothing of that call or its end is told
        return world, "subagent_failed", f"[{name}] subagent_failed: subagent {name} ended (exit {KILL_EXIT}) without a report", block[:-1]
    if end == STALLED:  # killed after subagentStallMs of silence: nothing of its end is told
        message = f"subagent {name} sent nothing for {world.limits.stall_ms} ms (subagentStallMs); its process group was killed"
        return world, STALLED, f"[{name}] {STALLED}: {message}", block[:-1]
    if end == "answered":
        return world, "ok", f"[{name}] {kid.answer}", block
    words = ended_words(end, world.limits)
    message = f"subagent {name} ended without a report ({end})" + (f": {words}" if words else "")
    return world, "subagent_failed", f"[{name}] subagent_failed: {message}", block


def task_call(world: World, call: Call) -> tuple[World, str, str, tuple[str, ...]]:
    """The model's task call: a child to its end; its report is the result. The calls of a reply
    run one after another, so no other child runs: the default name is agent1."""
    name = call.agent or "agent1"
    if not call.task.strip():  # no task: refused, no child starts, before the slots are counted
        return world, "subagent_failed", "", ()
    if world.limits.max_subagents == 0:
        return world, "no_slots", "", ()
    return child(world, name, call.task)


def agent_command(world: World, name: str, task: str) -> tuple[World, str]:
    """``/agent NAME TASK``: the child joins the children started together, or is refused."""
    if not valid_name(name):
        return world, f"agent {name} refused invalid_name"
    if any(named == name for named, _ in world.batch):
        return world, f"agent {name} refused agent_busy"
    if world.limits.max_subagents == 0:
        return world, f"agent {name} refused no_slots"
    return replace(world, batch=world.batch + ((name, task),)), f"agent {name} started"


def spawned(world: World, spawns: tuple[Spawn, ...]) -> tuple[World, tuple[str, ...]]:
    """The /agent commands sent while a request runs, each child to its end before the next is
    sent: its lines, and its report waiting to join the run."""
    lines: tuple[str, ...] = ()
    for spawn in spawns:
        world, line = agent_command(world, spawn.name, spawn.task)
        lines = lines + (line,)
        if line.endswith(" started"):
            world = replace(with_child_replies(world, spawn.name, spawn.replies), batch=())
            world, _, text, block = child(world, spawn.name, spawn.task)
            world = replace(world, reports=world.reports + (text,))
            lines = lines + block + (f"row subagent: {text}",)
    return world, lines


def background(world: World) -> tuple[World, tuple[str, ...]]:
    """The children started together, to their ends: each past the limit waits for a slot; each
    report a subagent row and a work row (a message of the next request)."""
    limit = world.limits.max_subagents
    lines = tuple(
        f"row subagent: {name} waits for a slot: {limit} of subagentMaxConcurrency {limit} run" for name, _ in world.batch[limit:]
    )
    batch = world.batch
    world = replace(world, batch=())
    viewed = world.logged  # the chat: each child took the view as its command came, before any report
    for number, (name, task) in enumerate(batch):
        world, _, text, block = child(replace(world, logged=viewed), name, task)
        # the chat logs each report (its view holds it); elsewhere it is a message of the next request
        world = replace(world, logged=viewed + number + 1) if world.limits.chat else said(world, f"u{len(text)}")
        lines = lines + block + (f"row subagent: {text}",)
    return world, lines


def spawn_refused(line: object) -> str:
    """A child process (``python -m eukhe.agent.child``) started with a spawn line of its own,
    not by an agent (derived from production's eukhe.agent.child: the agent writes the spawn as
    the child's first line). A line that is not a JSON object ends it, exit 2, with one line on
    stderr naming the spawn line (what the JSON reader said after it is Python's, left out); a
    spawn whose ``parent`` is not the process's parent ends it at once, exit 1, silent: the
    parent died before the child could ask to die with it."""
    if isinstance(line, dict):
        if line.get("parent") is None:
            raise ValueError("a spawn line with no parent of another process is not modelled")
        return "spawn exit 1"
    assert isinstance(line, str)
    try:
        parsed = json.loads(line)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        raise ValueError("a spawn line given as text is modelled as one that is not a JSON object")
    return "spawn exit 2: eukhe.agent.child: the spawn line is not a JSON object"


# -- the bridge transcript -----------------------------------------------------------------------


def call_of(value: object) -> Call:
    assert isinstance(value, dict)
    return Call(
        str(value["name"]), str(value["act"]), str(value["kind"]), str(value.get("agent", "")), str(value.get("task", "")),
        int(value.get("seq", 0)), int(value.get("exit", 0)),
    )  # fmt: skip


def reply_of(value: object) -> Reply:
    assert isinstance(value, dict)
    calls = value.get("calls", [])
    leaks = value.get("leaks", [])
    assert isinstance(calls, list) and isinstance(leaks, list)
    return Reply(
        str(value.get("text", "")),
        tuple(call_of(c) for c in calls),
        tuple(call_of(c) for c in leaks),
        str(value.get("stop", "stop")),
        str(value.get("fault", "")),
        tuple(str(t) for t in _texts(value.get("steer", []))),
        tuple(str(t) for t in _texts(value.get("follow_up", []))),
        tuple(spawn_of(a) for a in _texts(value.get("agents", []))),
        value.get("busy") is True,
        value.get("abort") is True,
        tuple(str(t) for t in _texts(value.get("thinking", []))),
        value.get("rewind") is True,
        value.get("stop_agent") is True,
        value.get("break_stack") is True,
    )


def spawn_of(value: object) -> Spawn:
    assert isinstance(value, dict)
    return Spawn(str(value["name"]), str(value["task"]), tuple(reply_of(r) for r in _texts(value.get("replies", []))))


def _texts(value: object) -> list[object]:
    assert isinstance(value, list)
    return value


def limits_of(value: object) -> Limits:
    assert isinstance(value, dict)
    base = Limits()
    return Limits(
        int(value.get("max_steps", base.max_steps)),
        int(value.get("stack_cap", base.stack_cap)),
        int(value.get("stall_steps", base.stall_steps)),
        int(value.get("max_continuations", base.max_continuations)),
        int(value.get("max_tool_rounds", base.max_tool_rounds)),
        int(value.get("max_retries", base.max_retries)),
        value.get("steering_mode", "one-at-a-time") == "all",
        value.get("follow_up_mode", "one-at-a-time") == "all",
        str(value.get("compaction", "")),
        int(value.get("keep_recent", 0)),
        int(value.get("max_subagents", base.max_subagents)),
        value.get("chat") is True,
        int(value.get("stall_ms", base.stall_ms)),
        tuple(str(n) for n in _texts(value.get("broken_cfg", []))),
    )


def summary_of(value: object) -> SummaryReply:
    assert isinstance(value, dict)
    return SummaryReply(str(value.get("text", "")), str(value.get("fault", "")))


def transcript(events: list[dict[str, object]]) -> list[str]:
    world = World(Limits(), (), None, None, (), 0, "", "")
    lines: list[str] = []
    first = next((e["setup"] for e in events if "setup" in e), {})
    held = isinstance(first, dict) and first.get("slots_held") in (True, "abort")
    aborting = isinstance(first, dict) and first.get("slots_held") == "abort"
    for number, event in enumerate(events):
        if world.stopped:  # the agent has ended: no event after it is served
            break
        if "setup" in event:
            world = replace(world, limits=limits_of(event["setup"]))
        elif "goal" in event:
            goal = event["goal"]
            assert isinstance(goal, dict)
            world = replace(world, goal=Goal(str(goal["id"]), str(goal["objective"]), ACTIVE, None))
            lines.append(f"goal {goal['id']}")
        elif "autonomous" in event:
            enabled = event["autonomous"] is True
            auto = world.auto if world.auto is not None else Auto(False, 0, world.limits.max_continuations)
            world = replace(world, auto=Auto(enabled, auto.used, auto.max))
            lines.append(f"autonomous {'on' if enabled else 'off'}")
        elif "remind" in event:
            world, ok = push(world, Layer(REMINDER, 1, text=str(event["remind"])))
            lines.append("remind " + ("pushed" if ok else "refused"))
        elif "force" in event:
            force = event["force"]
            assert isinstance(force, dict)
            world, ok = push(world, Layer(FORCED, 1, tool=str(force["tool"]), tries=int(force["tries"])))
            lines.append(f"force {force['tool']} " + ("pushed" if ok else "refused"))
        elif "agent" in event:
            agent = event["agent"]
            assert isinstance(agent, dict)
            world, line = agent_command(world, str(agent["name"]), str(agent["task"]))
            lines.append(line)
            if line.endswith(" started"):
                world = with_child_replies(world, str(agent["name"]), tuple(reply_of(r) for r in _texts(agent.get("replies", []))))
                if agent.get("rewind") is True:  # no branch move while a background child runs
                    lines.append("rewind refused busy")
            if agent.get("wait") is False:  # left running: no report comes before the next event
                continue
            if number + 1 == len(events) or "agent" not in events[number + 1]:
                world, done = background(world)
                lines.extend(done)
                world = replace(world, children=())
        elif "spawn_line" in event:
            lines.append(spawn_refused(event["spawn_line"]))
        elif "model" in event:  # pinned to a model with no credentials: a note row, the effort row, the model
            world = replace(world, unresolved=str(event["model"]))
            lines.extend((f"row note: model {event['model']}", *switched(event.get("map", {})), f"model {event['model']}"))
        elif "input" in event:
            items = event.get("replies", [])
            assert isinstance(items, list)
            lines.append(f"input {event['input']}")
            early = event.get("early", {})
            assert isinstance(early, dict)
            if early.get("abort") is True:  # aborted as it starts: no run begins, what came with it is dropped
                lines.extend(("abort ok", f"end {ABORTED}"))
                continue
            if world.unresolved != "":  # no usable model: the turn ends before it begins
                lines.append("end failed")
                continue
            if world.broken_stack:  # the run's begin reads the stack: the turn fails before its run starts
                lines.append(STACK_FAILURE[0])
                continue
            if held and aborting:  # aborted while its first request waits for a slot: never sent
                held = False
                lines.extend(("slots held: the turn was aborted while its request waited for one", "abort ok", "end aborted"))
                world = aborted_waiting(world, f"input-{number}", str(event["input"]))
                continue
            if held:  # control.md S4b.4: with every slot of the provider taken, the request waits
                lines.append("slots held: the request waited for one")
                held = False
            world = replace(world, summaries=tuple(summary_of(s) for s in _texts(event.get("summaries", []))))
            children = event.get("children", {})
            assert isinstance(children, dict)
            world = replace(world, children=tuple((str(n), tuple(reply_of(r) for r in _texts(rs))) for n, rs in children.items()))
            steered = tuple(str(t) for t in _texts(early.get("steer", [])))
            queued = tuple(str(t) for t in _texts(early.get("follow_up", [])))
            world = replace(world, steering=world.steering + steered, follow_ups=world.follow_ups + queued)  # they wait as the run begins
            world, done = turn(world, f"input-{number}", str(event["input"]), Replies(tuple(reply_of(r) for r in items), 0))
            lines.extend(done)
    setup = next((e["setup"] for e in events if "setup" in e), {})
    assert isinstance(setup, dict)
    if "titles" in setup:
        lines.append(titled(setup, any("input" in e for e in events)))
    return lines


def switched(level_map: object) -> tuple[str, ...]:
    """S10's switch (``bend.effort``) from the scenarios' model (no reasoning: the level settled at
    open is off) to a reasoning model with ``level_map``: the effort row when the shown level moves."""
    assert isinstance(level_map, dict)
    opened, _ = effort.step(effort.Session(None, effort.FALLBACK_DEFAULT, effort.Model(False, None)), "open", None)
    pairs = tuple((level, level_map[level]) for level in effort.LADDER if level in level_map)
    after, _ = effort.step(opened, "switch", effort.Model(True, pairs))
    before_shown = effort.shown(opened.stored, opened.default, effort.offer_of(opened.model))
    after_shown = effort.shown(after.stored, after.default, effort.offer_of(after.model))
    return () if before_shown == after_shown else (f"row effort: thinking level {before_shown} -> {after_shown}",)


def aborted_waiting(world: World, run: str, text: str) -> World:
    """A run aborted while its first request waits for a slot: begun, its message committed (and,
    in the chat, logged), no request sent; its follow-ups dropped as any aborted turn's."""
    world, _ = place(world)
    if world.limits.chat:
        world = replace(world, sent=(), lead=f"v{world.logged}+now+turn+")
    return replace(logs(said_user(begin(world, run), text), 1), follow_ups=())


MARKS = "\"'`*#"  # the marks a title's line may be wrapped in


def title_of(reply: str) -> str | None:
    """A title from its reply (derived: the prompt asks for the title only; a model may still
    wrap it): the first line with text, its blanks and marks (quotes, backquotes, stars, hashes)
    taken from its ends; a ``Title:`` label (any case) taken off, and the blanks and marks from
    the ends of what follows it ("Title: **Fix it**" and "**Title:** Fix it" are "Fix it"); at
    most 80 characters."""
    line = unwrapped(reply.strip().partition("\n")[0])
    if line[:6].lower() == "title:":
        line = unwrapped(line[6:])
    return line[:80] if line != "" else None


def unwrapped(line: str) -> str:
    """``line`` without the blanks and marks at its ends."""
    line = line.strip()
    while line[:1] != "" and line[0] in MARKS:
        line = line[1:]
    while line[-1:] != "" and line[-1] in MARKS:
        line = line[:-1]
    return line.strip()


def titled(setup: dict[object, object], inputs: bool) -> str:
    """inference.md S9 Uses: the first user message of a session starts its title in the
    background (titles.generate on); with no tiny model, one request to the session's own model;
    a failure is no title; a session the user named keeps its name (no request)."""
    requests = 1 if setup.get("titles") == "on" and inputs else 0
    reply = setup.get("title_reply", {})
    assert isinstance(reply, dict)
    title = title_of(str(reply.get("text", ""))) if requests and reply.get("fault", "") != "fail" else None
    shown = "-" if title is None else json.dumps(title, ensure_ascii=False)
    return f"title requests={requests} rows={0 if title is None else 1} title={shown}"


if __name__ == "__main__":
    from bend.scenario import main

    sys.exit(main(transcript, sys.argv[1:]))
