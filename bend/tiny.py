"""Local tiny models (inference.md S9) as a model: the role chains and their pick, each choice
of one process's worker election, and the world of workers and needs over time.

Read beside S9 "Roles" and "Worker". The seed's model is bend/tiny.bend; its free inputs are
"chain, available set, needs of any processes and tags, worker exits, any order".

Roles (S9 roles 1-3):
- ``chain``: ``modelRoles.<role>`` (if set) first, then ``retry.fallbackChains.<role>``; an
  explicit ``[]`` fallback means the primary only; an unset fallback means the role's catalog
  models, then the session provider model (text roles only). Derived where the seed is terse:
  an unset fallback with a primary set gives primary + defaults; a candidate named twice keeps
  its first place ("a candidate crosses as the index of its first equal one").
- ``pick``: the first available chain model; none available is Unavailable (None here); a
  pick is never outside the chain.

One process's election (S9 worker 1-4). The production client runs these choices and nothing
else decides; it connects, pings, shuts down, launches and reports:
- ``on_ping``: the answer to the first ping: no live socket → start; the same launch tag →
  join; another tag → replace (send shutdown); a worker that is closing (it removed its
  socket and refuses new requests) counts as no live worker → start.
- ``on_shutdown``: bye, or the connection gone, → start a new worker (the need is replaced).
- ``on_launch``: a spawned worker → check it; a launch that failed → Crashed.
- ``on_check``: the ping after a start: the same tag → use it (this need's outcome stands:
  started, or replaced if it shut a worker down); nothing → Crashed; another tag (another
  process's worker won the seat) → replace it, a closing worker → start again, while the
  election has launched fewer than ``ATTEMPTS`` workers, else Contended (derived: the seed
  does not bound the rounds; the bound keeps every election finite).
- ``seat``: a started worker, holding the bind lock: a live worker answers → exit (the client
  uses the live one); a stale socket file → remove it and bind; none → bind.

The world (laws tiny_every_need_served, tiny_worker_current, tiny_same_tag_joins, and the
bridge of interleavings): one seat (the socket), workers numbered in start order; a need
from any process with any tag is served by exactly one of started, joined, replaced; a
replaced worker finishes the in-flight requests it holds, then exits; a worker exits at any
time it holds none (idle exit, killed).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace

# ------------------------------------------------------------------ roles (S9 roles 1-3)

TEXT_ROLES: tuple[str, ...] = ("tiny", "judge", "translate")
ROLES: tuple[str, ...] = ("tiny", "judge", "translate", "speech", "dictation")

# The catalog models of each role, in chain order (S9: translate prefers lfm2.5-350m).
ROLE_MODELS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("tiny", ("lfm2.5-230m", "lfm2.5-350m")),
    ("judge", ("lfm2.5-230m", "lfm2.5-350m")),
    ("translate", ("lfm2.5-350m", "lfm2.5-230m")),
    ("speech", ("kokoro",)),
    ("dictation", ("whisper-base", "whisper-small")),
)


def role_models(role: str) -> tuple[str, ...]:
    for name, models in ROLE_MODELS:
        if name == role:
            return models
    return ()


def chain(
    role: str,
    primary: str | None,
    fallback: tuple[str, ...] | None,
    session_model: str | None,
) -> tuple[str, ...]:
    """The chain of ``role``: the primary (modelRoles.<role>), then the fallback chain, or when
    the fallback is unset the role's catalog models and the session model (text roles)."""
    head: tuple[str, ...] = () if primary is None else (primary,)
    if fallback is not None:
        rest = fallback
    else:
        rest = role_models(role)
        if role in TEXT_ROLES and session_model is not None:
            rest = (*rest, session_model)
    return first_each(head + rest)


def first_each(names: tuple[str, ...]) -> tuple[str, ...]:
    """Each name at its first place only."""
    kept: tuple[str, ...] = ()
    for name in names:
        if name not in kept:
            kept = (*kept, name)
    return kept


def pick(candidates: tuple[str, ...], available: frozenset[str]) -> str | None:
    """Roles 3: the first available candidate; None is Unavailable."""
    if not candidates:
        return None
    if candidates[0] in available:
        return candidates[0]
    return pick(candidates[1:], available)


# ------------------------------------------------------------- one process's election

# Answers a client can get to a ping (the first one, or the check after a start).
NONE = "none"  # no socket, connection refused, or the connection closed without an answer
SAME = "same"  # a launch tag equal to the one the need wants
OTHER = "other"  # a different launch tag
CLOSING = "closing"  # the worker is shutting down and refuses new requests
PING_ANSWERS: tuple[str, ...] = (NONE, SAME, OTHER, CLOSING)

BYE = "bye"
GONE = "gone"
SHUTDOWN_ANSWERS: tuple[str, ...] = (BYE, GONE)

SPAWNED = "spawned"
FAILED = "failed"
LAUNCH_OUTCOMES: tuple[str, ...] = (SPAWNED, FAILED)

LIVE = "live"  # a live worker answered the seat's ping
STALE = "stale"  # a socket file nobody answers on
ABSENT = "absent"  # no socket file
SEAT_PROBES: tuple[str, ...] = (LIVE, STALE, ABSENT)

# Choices
START = "start"
JOIN = "join"
REPLACE = "replace"
CHECK = "check"
USE = "use"
CRASHED = "crashed"
CONTENDED = "contended"
EXIT = "exit"
BIND = "bind"
CLEAR_AND_BIND = "clear_and_bind"

# Outcomes of a need
STARTED = "started"
JOINED = "joined"
REPLACED = "replaced"
OUTCOMES: tuple[str, ...] = (STARTED, JOINED, REPLACED)
ERRORS: tuple[str, ...] = (CRASHED, CONTENDED)

ATTEMPTS = 3  # workers one election may launch (derived bound, see the docstring)


def on_ping(answer: str) -> str:
    if answer == SAME:
        return JOIN
    if answer == OTHER:
        return REPLACE
    return START


def on_shutdown(answer: str) -> str:
    return START


def on_launch(outcome: str) -> str:
    return CHECK if outcome == SPAWNED else CRASHED


def on_check(answer: str, launches: int) -> str:
    """The check after a start; ``launches`` is how many workers this election launched."""
    if answer == SAME:
        return USE
    if answer == NONE:
        return CRASHED
    if launches >= ATTEMPTS:
        return CONTENDED
    return REPLACE if answer == OTHER else START


def seat(probe: str) -> str:
    if probe == LIVE:
        return EXIT
    if probe == STALE:
        return CLEAR_AND_BIND
    return BIND


def outcome_of(joined: bool, replaces: int) -> str:
    if joined:
        return JOINED
    return REPLACED if replaces > 0 else STARTED


PHASES: tuple[str, ...] = ("ping", "shutdown", "launch", "check")


@dataclass(frozen=True)
class Election:
    """One process's election: the phase it waits in, the shutdowns it sent and the workers it
    launched so far."""

    phase: str  # one of PHASES while running; an outcome or an error when done
    replaces: int = 0
    launches: int = 0

    @property
    def done(self) -> bool:
        return self.phase in OUTCOMES or self.phase in ERRORS


def elect_step(state: Election, answer: str) -> Election | None:
    """One step of an election on the answer of the phase it waits in (None: that answer does
    not belong to the phase, or the election is over)."""
    if state.done:
        return None
    if state.phase == "ping":
        if answer not in PING_ANSWERS:
            return None
        choice = on_ping(answer)
        if choice == JOIN:
            return Election(JOINED, state.replaces, state.launches)
        if choice == REPLACE:
            return Election("shutdown", state.replaces + 1, state.launches)
        return Election("launch", state.replaces, state.launches + 1)
    if state.phase == "shutdown":
        if answer not in SHUTDOWN_ANSWERS:
            return None
        on_shutdown(answer)
        return Election("launch", state.replaces, state.launches + 1)
    if state.phase == "launch":
        if answer not in LAUNCH_OUTCOMES:
            return None
        if on_launch(answer) == CHECK:
            return Election("check", state.replaces, state.launches)
        return Election(CRASHED, state.replaces, state.launches)
    if answer not in PING_ANSWERS:
        return None
    choice = on_check(answer, state.launches)
    if choice == USE:
        return Election(outcome_of(False, state.replaces), state.replaces, state.launches)
    if choice == REPLACE:
        return Election("shutdown", state.replaces + 1, state.launches)
    if choice == START:
        return Election("launch", state.replaces, state.launches + 1)
    return Election(choice, state.replaces, state.launches)


# --------------------------------------------------------------------- the world over time


@dataclass(frozen=True)
class Worker:
    number: int
    tag: str
    inflight: tuple[str, ...] = ()  # processes whose request this worker holds
    seated: bool = True  # it owns the socket; a replaced worker drains unseated


@dataclass(frozen=True)
class World:
    workers: tuple[Worker, ...] = ()  # live workers, in start order
    started: int = 0  # workers started so far
    last: str | None = None  # the tag of the last need since the last exit of the seated worker
    holds: tuple[tuple[str, int], ...] = ()  # (process, worker number) of each held request


def current(world: World) -> Worker | None:
    for worker in world.workers:
        if worker.seated:
            return worker
    return None


def serve(running: str | None, tag: str) -> tuple[str, str]:
    """S9 worker 1-4 on the seat alone: the outcome of a need with ``tag`` when the seated
    worker runs ``running`` (None: no live worker), and the seated tag after it."""
    if running is None:
        return STARTED, tag
    if running == tag:
        return JOINED, tag
    return REPLACED, tag


def need(world: World, tag: str) -> tuple[World, str, int, tuple[int, ...]]:
    """A need from any process: the world after it, its outcome, the worker that serves it,
    and the workers that exited because of it (a replaced worker holding nothing)."""
    seated = current(world)
    outcome, _ = serve(None if seated is None else seated.tag, tag)
    if outcome == JOINED:
        assert seated is not None
        return replace(world, last=tag), JOINED, seated.number, ()
    workers = world.workers
    exited: tuple[int, ...] = ()
    if seated is not None:
        kept: tuple[Worker, ...] = ()
        for worker in workers:
            if worker.number != seated.number:
                kept = (*kept, worker)
            elif worker.inflight:
                kept = (*kept, replace(worker, seated=False))
            else:
                exited = (worker.number,)
        workers = kept
    number = world.started + 1
    after = World((*workers, Worker(number, tag)), number, tag, world.holds)
    return after, outcome, number, exited


def hold(world: World, process: str) -> World | None:
    """``process`` sends a request the seated worker holds in flight (None: no seated worker,
    or the process already holds one)."""
    seated = current(world)
    if seated is None or any(p == process for p, _ in world.holds):
        return None
    workers = tuple(replace(w, inflight=(*w.inflight, process)) if w.number == seated.number else w for w in world.workers)
    return replace(world, workers=workers, holds=(*world.holds, (process, seated.number)))


def release(world: World, process: str) -> tuple[World, int, tuple[int, ...]] | None:
    """The held request of ``process`` is answered in full by the worker holding it; a replaced
    worker with nothing left in flight exits."""
    found = [n for p, n in world.holds if p == process]
    if not found:
        return None
    number = found[0]
    workers: tuple[Worker, ...] = ()
    exited: tuple[int, ...] = ()
    for worker in world.workers:
        if worker.number == number:
            left = tuple(p for p in worker.inflight if p != process)
            if not left and not worker.seated:
                exited = (number,)
                continue
            worker = replace(worker, inflight=left)
        workers = (*workers, worker)
    return replace(world, workers=workers, holds=tuple(h for h in world.holds if h[0] != process)), number, exited


def exit_worker(world: World) -> tuple[World, int] | None:
    """The seated worker exits (idle exit, or killed) while it holds nothing in flight."""
    seated = current(world)
    if seated is None or seated.inflight:
        return None
    return replace(world, workers=tuple(w for w in world.workers if w.number != seated.number), last=None), seated.number


def _exits(numbers: tuple[int, ...]) -> str:
    return "".join(f"; worker {n} exited" for n in numbers)


def transcript(events: list[dict[str, object]]) -> list[str]:
    """The model side of the election bridge: one line after each event.

    Events: {"do": "need", "proc": P, "tag": T} (P elects; with "hold": true it then sends a
    request the worker holds), {"do": "release", "proc": P}, {"do": "exit"}.
    """
    world = World()
    lines = []
    for number, event in enumerate(events):
        kind = event["do"]
        if kind == "need":
            process = str(event["proc"])
            world, outcome, serving, exited = need(world, str(event["tag"]))
            line = f"{number} need {process} {event['tag']} -> {outcome} worker {serving}{_exits(exited)}"
            if event.get("hold"):
                held = hold(world, process)
                if held is None:
                    raise ValueError(f"event {number}: {process} cannot hold a request")
                world = held
                line += "; held"
        elif kind == "release":
            done = release(world, str(event["proc"]))
            if done is None:
                raise ValueError(f"event {number}: {event['proc']} holds no request")
            world, serving, exited = done
            line = f"{number} release {event['proc']} -> answered by worker {serving}{_exits(exited)}"
        elif kind == "exit":
            gone = exit_worker(world)
            if gone is None:
                raise ValueError(f"event {number}: no idle seated worker to exit")
            world, serving = gone
            line = f"{number} exit -> worker {serving} exited"
        else:
            raise ValueError(f"event {number}: unknown action {kind!r}")
        lines.append(line)
    return lines


if __name__ == "__main__":
    from bend import scenario

    raise SystemExit(scenario.main(transcript, sys.argv[1:]))
