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
- Each call's outcome kind (ok, or the error kind of its result) is given by the scenario:
  the argument repair and the tools are judged by their own laws and tests; the work of the
  session (S5.8) counts each distinct call, keyed by the scenario's act key.

Scenario events (JSON objects, one per line):

  {"setup": {"max_steps", "stack_cap", "stall_steps", "max_continuations", "max_tool_rounds",
             "max_retries", "steering_mode", "follow_up_mode"}}
  {"goal": {"id", "objective"}}     an active goal
  {"autonomous": true|false}        enable or disable the autonomous run
  {"remind": text}                  /remind text
  {"force": {"tool", "tries"}}      /force tool --tries n
  {"input": text, "replies": [reply, ...]}   a user turn; its requests take the replies in
                                    order, then the default reply (text "done.")

  reply: {"text": str, "calls": [call], "leaks": [call], "stop": "stop"|"length"|"toolUse"|"refusal",
          "fault": ""|"fail"|"cut"|"loop", "steer": [text], "follow_up": [text]}
          (steer and follow_up: the messages sent while the reply's request runs)
  call:  {"name": str, "args": str, "act": str, "kind": "ok"|error kind}
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, replace

from bend import director, progress
from bend.infer import flag

MAX_NOTES = 8
LEAK_NOTES = 2
OFFERED: tuple[str, ...] = ("read", "write", "edit", "ls", "glob", "grep", "bash")
DEFAULT_REPLY_TEXT = "done."
NO_REASON = "(the provider gave no reason)"  # a refusal's row when the provider said nothing
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


@dataclass(frozen=True)
class Reply:
    text: str
    calls: tuple[Call, ...]
    leaks: tuple[Call, ...]
    stop: str
    fault: str
    steer: tuple[str, ...] = ()  # messages steered while its request runs
    follow_up: tuple[str, ...] = ()  # messages queued to run after the turn while its request runs


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
    sent: tuple[str, ...] = ()  # the conversation the next request sends, one token a message
    steering: tuple[str, ...] = ()  # steered messages waiting to join
    follow_ups: tuple[str, ...] = ()  # messages waiting to run as the next turns


@dataclass(frozen=True)
class Replies:
    """The replies of one input and how many were taken."""

    items: tuple[Reply, ...]
    taken: int


def take(world: World, replies: Replies) -> tuple[World, Reply, Replies]:
    """The next reply; the messages sent while its request ran wait in their queues."""
    if replies.taken < len(replies.items):
        reply = replies.items[replies.taken]
        waiting = replace(world, steering=world.steering + reply.steer, follow_ups=world.follow_ups + reply.follow_up)
        return waiting, reply, Replies(replies.items, replies.taken + 1)
    return world, Reply(DEFAULT_REPLY_TEXT, (), (), "stop", ""), replies


def first_of(waiting: tuple[str, ...], every: bool) -> tuple[str, tuple[str, ...]]:
    """The message a queue gives next (its mode: the first, or all of them as one) and the rest;
    "" when none waits."""
    if not waiting:
        return "", waiting
    count = len(waiting) if every else 1
    return "\n\n".join(waiting[:count]), waiting[count:]


def join_steering(world: World) -> tuple[World, tuple[str, ...]]:
    """The steered message joins the run as a user message (a ``joined`` row), if one waits."""
    text, rest = first_of(world.steering, world.limits.steering_all)
    if text == "":
        return world, ()
    return said(replace(world, steering=rest), f"u{len(text)}"), (f"row joined: {text}",)


# -- begin and the entry points (S5.6, S5.7) ---------------------------------------------------


def pushed_count(stack: tuple[Layer, ...]) -> int:
    return len([layer for layer in stack if layer.kind in (REMINDER, FORCED)])


def push(world: World, layer: Layer) -> tuple[World, bool]:
    if pushed_count(world.stack) >= world.limits.stack_cap:
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


def request_line(world: World, note: str) -> str:
    sent = " ".join(world.sent) or "-"
    place = forced_place(world.stack)
    if place < 0:
        return f"request forced=- note={note} sent={sent}"
    layer = world.stack[place]
    how = "native" if flag(layer.misses, True, False) else "soft"
    return f"request forced={layer.tool}/{how} note={note} sent={sent}"


def said(world: World, *tokens: str) -> World:
    """The conversation with the messages a step added: ``u<length>`` a user message or a
    continuation, ``a`` a reply, ``a:NAME,NAME`` a reply with its calls, ``t`` a result."""
    return replace(world, sent=world.sent + tokens)


def run_calls(world: World, calls: tuple[Call, ...], truncated: bool) -> tuple[World, tuple[str, ...]]:
    lines: tuple[str, ...] = ()
    world = said(world, "a:" + ",".join(call.name for call in calls), *("t" for _ in calls))
    ledger = world.ledger
    for call in calls:
        kind = "truncated" if truncated else call.kind
        lines = lines + (f"call {call.name} {kind}",)
        ledger = progress.record_act(ledger, progress.call_act(call.name, call.act, kind, kind != "ok"))
    return replace(world, ledger=ledger), lines


def generation(world: World, replies: Replies) -> tuple[World, Replies, Final, tuple[str, ...]]:
    lines: tuple[str, ...] = ()
    notes = 0
    leak_notes = 0
    rounds = 0
    note = "-"
    while True:
        lines = lines + (request_line(world, note),)
        world, reply, replies = take(world, replies)
        retries = 0
        while reply.fault == "fail":
            if retries >= world.limits.max_retries:
                return world, replies, Final("", "failed"), lines
            retries += 1
            lines = lines + (f"retry {retries}/{world.limits.max_retries}", request_line(world, note))
            world, reply, replies = take(world, replies)
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
            world, joined = join_steering(said(world, "a"))
            if joined:  # a message that came as the answer ended joins: the run goes on with it
                lines = lines + joined
                continue
            return world, replies, Final(reply.text, ""), lines
        if rounds >= world.limits.max_tool_rounds:
            return world, replies, Final("", "max_tool_rounds"), lines
        rounds += 1
        if rebuilt:
            lines = lines + (f"row note: rebuilt {len(calls)} leaked tool call(s)",)
        world, ran = run_calls(world, calls, reply.stop == "length")
        world, joined = join_steering(world)
        lines = lines + ran + joined


def turn(world: World, run: str, text: str, replies: Replies) -> tuple[World, tuple[str, ...]]:
    """A user input to the end of its run; then a steered message left waiting when the run
    ended (it could not join) runs next, then the follow-ups, each a run of its own."""
    lines: tuple[str, ...] = ()
    runs = 0
    while text != "":
        world, replies, done = one_run(world, run if runs == 0 else f"{run}+{runs}", text, replies)
        lines = lines + done
        runs += 1
        text, steering = first_of(world.steering, world.limits.steering_all)
        world = replace(world, steering=steering)
        if text == "":
            text, follow_ups = first_of(world.follow_ups, world.limits.follow_up_all)
            world = replace(world, follow_ups=follow_ups)
    return world, lines


def one_run(world: World, run: str, text: str, replies: Replies) -> tuple[World, Replies, tuple[str, ...]]:
    """One run: the input's requests and the Director stack's steps to its end."""
    world = said(begin(world, run), f"u{len(text)}")
    lines: tuple[str, ...] = ()
    while True:
        world, replies, final, done = generation(world, replies)
        lines = lines + done
        if final.end != "":
            return world, replies, lines + (f"end {final.end}",)
        world, decided, continuation, rows, error = step(world, final.text)
        lines = lines + (f"step {decided}",)
        if decided.startswith("continue "):
            lines = lines + ("continuation " + json.dumps(continuation, ensure_ascii=False),)
            world = said(world, f"u{len(continuation)}") if continuation != "" else world
        lines = lines + tuple(f"row director: {row}" for row in rows)
        if decided.startswith("continue "):
            continue
        end = "answered" if decided.startswith("yield ") else "failed"
        return world, replies, lines + (f"end {end}",)


# -- the bridge transcript -----------------------------------------------------------------------


def call_of(value: object) -> Call:
    assert isinstance(value, dict)
    return Call(str(value["name"]), str(value["act"]), str(value["kind"]))


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
    )


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
    )


def transcript(events: list[dict[str, object]]) -> list[str]:
    world = World(Limits(), (), None, None, (), 0, "", "")
    lines: list[str] = []
    for number, event in enumerate(events):
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
        elif "input" in event:
            items = event.get("replies", [])
            assert isinstance(items, list)
            lines.append(f"input {event['input']}")
            world, done = turn(world, f"input-{number}", str(event["input"]), Replies(tuple(reply_of(r) for r in items), 0))
            lines.extend(done)
    return lines


if __name__ == "__main__":
    from bend.scenario import main

    sys.exit(main(transcript, sys.argv[1:]))
