"""The tiny laws of inference.md S9: role picks and the worker election.

How each is made strong:
- The pick laws (roles 3) hold for chains and available sets of any size: induction on the
  chain. ``bend.tiny.pick`` is structurally recursive (empty chain: Unavailable; else the head
  if available, else the pick of the rest), so the base and the step are each a z3 claim over
  unbounded sequences of strings and arrays of booleans, about the encoding of one unfolding of
  pick. That encoding is tied to pick's own code over every case of an unfolding: its recursive
  call abstracted to the rest's pick (``spec.proofs.callees``: none, or one of the rest's
  candidates), the candidates opaque (read, they would raise), the available set answering by
  identity whether it holds the head: a whole finite domain, so the proofs are about the code.
  The picks on every chain of at most 4 of 5 names are judged by the oracle besides.
- The seat laws (worker 1-4): the world of several processes, requests held in flight, replaced
  workers draining and exits is explored breadth first within a bound (3 processes, 3 tags, at
  most 4 workers started), each state and need judged by the seed's socket replayed from the
  actions alone (``spec.oracles.tiny.Seat``), never by the model's bookkeeping: bounded. The seat
  rule (``bend.tiny.serve``) is proved beside it for every tag (tags are tokens that serve may
  only compare), and tiny_same_tag_joins is proved on ``bend.tiny.need``'s own code for every
  world whose seated worker runs the need's tag.
- Each choice of one process's election (tiny_elect_*) is a function of finite answers (the
  kinds of ping answers, shutdown answers, launch outcomes, seat probes, and the launches an
  election has made, which tiny_elect_ends shows never exceed ATTEMPTS), so each is proved by
  enumerating its whole domain and judged by the seed's table in ``spec.oracles.tiny``.
  tiny_elect_ends searches every state of one election under every answer: proved.
"""

from __future__ import annotations

import itertools
import socket
import sys
import tempfile
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any, cast

from hypothesis.strategies import SearchStrategy

import z3

from bend import tiny as m
from spec.evidence import (
    Bound,
    Evidence,
    Finite,
    LawFailed,
    Tie,
    all_of,
    also,
    bounded,
    domain,
    encoding,
    examples,
    exhaust,
    explore,
    identical,
    induction,
    prove,
    reachable,
    tie,
)
from spec.oracles import tiny as oracle
from spec.proofs import Opaque, callees
from spec.registry import BOUNDED, PROVED, TESTED, law

NAMES: tuple[str, ...] = ("a", "b", "c", "d", "e")
TAGS: tuple[str, ...] = ("q4", "fp16", "fp32")
PROCESSES: tuple[str, ...] = ("p1", "p2", "p3")
MAX_STARTED = 4


# ------------------------------------------------------------------------------ picks


@cache
def _chains() -> tuple[tuple[str, ...], ...]:
    return tuple(c for n in range(5) for c in itertools.product(NAMES[:4], repeat=n))


@cache
def _availables() -> tuple[frozenset[str], ...]:
    return tuple(frozenset(s) for n in range(len(NAMES) + 1) for s in itertools.combinations(NAMES, n))


def _pick_cases() -> Iterator[tuple[tuple[str, ...], frozenset[str]]]:
    return itertools.product(_chains(), _availables())


S = z3.StringSort()
PICK_LABEL = "every chain of at most 4 candidates from 4 names (repeats included) x every available set of 5 names"


class _Available:
    """An available set that answers whether a candidate is in it by identity: pick may ask it
    about a candidate without reading the candidate's text."""

    def __init__(self, name: str, *members: object) -> None:
        self.name, self.members = name, members

    def __contains__(self, item: object) -> bool:
        return any(item is member for member in self.members)

    def __repr__(self) -> str:
        return f"<available: {self.name}>"


class _Rest:
    """The rest of a chain whose own pick is ``outcome`` (None, or one of its candidates): the
    recursive call on it is abstracted to that outcome."""

    def __init__(self, outcome: object) -> None:
        self.outcome = outcome

    def __repr__(self) -> str:
        return f"<rest picking {self.outcome!r}>"


HEAD, REST_PICK = Opaque("the head"), Opaque("the rest's pick")
CHAINS = Finite(
    "chains (empty, or an opaque head before a rest whose own pick is none or one of its candidates: every chain, pick reading only emptiness, the head and the rest)",
    ((), (HEAD, _Rest(None)), (HEAD, _Rest(REST_PICK))),
)
AVAILABLES = Finite(
    "available sets (the head in it or not: all pick asks of it; members by identity)",
    (_Available("without the head"), _Available("with the head", HEAD)),
)


def _rest_pick(candidates: tuple[object, ...], available: object) -> object:
    """The recursive call, abstracted: it must come from pick itself, on the rest of its chain alone
    and its own available set; it answers the rest's own pick."""
    caller = sys._getframe(1)
    if caller.f_code is not _PICK.__code__:
        raise LawFailed(f"the abstracted pick was called from {caller.f_code.co_name}, not from pick")
    chain_name, available_name = caller.f_code.co_varnames[:2]
    chain = caller.f_locals[chain_name]
    if type(candidates) is not tuple or len(candidates) != 1 or len(chain) != 2 or candidates[0] is not chain[1]:
        raise LawFailed(f"pick recursed on {candidates!r}, not on the rest of its chain {chain!r}")
    if available is not caller.f_locals[available_name]:
        raise LawFailed(f"pick recursed with {available!r}, not its own available set")
    assert isinstance(candidates[0], _Rest)
    return candidates[0].outcome


@encoding("bend.tiny.pick")
def _z3_pick(empty: Any, head_available: Any, rest_found: Any, rest_at: Any) -> tuple[Any, Any]:
    """The encoding of bend.tiny.pick, one unfolding: an empty chain picks nothing (-1); else the
    head (index 0) when available, else the rest's pick one place further (index + 1), if any."""
    found = z3.And(z3.Not(empty), z3.Or(head_available, rest_found))
    at = z3.If(empty, -1, z3.If(head_available, 0, z3.If(rest_found, rest_at + 1, -1)))
    return found, at


def _pick_args(chain: tuple[object, ...], available: _Available) -> tuple[Any, ...]:
    if not chain:
        return z3.BoolVal(True), z3.BoolVal(False), z3.BoolVal(False), z3.IntVal(-1)
    rest = chain[1]
    assert isinstance(rest, _Rest)
    found = rest.outcome is not None
    return z3.BoolVal(False), z3.BoolVal(any(HEAD is x for x in available.members)), z3.BoolVal(found), z3.IntVal(0 if found else -1)


def _pick_value(got: object) -> tuple[bool, int]:
    """pick's answer read as the encoding's: none, the head (index 0), the rest's pick (index 1,
    the rest's pick being the rest's first candidate in the tie)."""
    if got is None:
        return False, -1
    if got is HEAD:
        return True, 0
    if got is REST_PICK:
        return True, 1
    raise LawFailed(f"pick answered {got!r}, neither its head nor the rest's pick")


_PICK = m.pick  # the real function, kept while its recursive call is abstracted


@cache
def _pick_tie() -> Tie:
    """The unfolding of bend.tiny.pick on every chain and available set: its own code runs, its
    recursive call abstracted to the rest's pick (spec.proofs.callees), the candidates opaque."""
    with callees(m, pick=_rest_pick):
        return tie(_z3_pick, _PICK, domain(CHAINS, AVAILABLES), args=_pick_args, value=_pick_value)


def _pick_proof(name: str, property_of: str) -> Evidence:
    """Induction on the chain for one of the pick laws, by z3: a chain is an array of strings
    with a length (any length, any strings), the available set an array of booleans; each step is
    the encoding's unfolding of pick, tied to pick's own code on every chain and available set."""
    head = z3.String("head")
    rest = z3.Array("rest", z3.IntSort(), S)
    n = z3.Int("rest_length")
    available = z3.Array("available", S, z3.BoolSort())
    some = z3.Bool("rest_some")  # pick(rest) found a candidate
    at = z3.Int("rest_pick_index")  # ... at this index of the rest
    j = z3.Int("j")
    i = z3.Int("i")
    chain = z3.Lambda([i], z3.If(i == 0, head, rest[i - 1]))  # head : rest

    def none_before(seq: z3.ArrayRef, k: z3.ArithRef) -> z3.BoolRef:
        return z3.ForAll([j], z3.Implies(z3.And(j >= 0, j < k), z3.Not(available[seq[j]])))

    def picked(seq: z3.ArrayRef, length: Any, found: Any, k: Any) -> z3.BoolRef:
        if property_of == "in_chain":  # a pick is an available member of the chain
            return z3.Implies(found, z3.And(k >= 0, k < length, available[seq[k]]))
        if property_of == "first":  # ... and the first available one
            return z3.Implies(found, z3.And(k >= 0, k < length, available[seq[k]], none_before(seq, k)))
        # none available <-> Unavailable: a pick has an available witness, no pick has none
        return z3.And(
            z3.Implies(found, z3.And(k >= 0, k < length, available[seq[k]])),
            z3.Implies(z3.Not(found), none_before(seq, length)),
        )

    ties = [_pick_tie()]
    empty = z3.Bool("chain_empty")  # the unfolding's first question: is the chain empty? (here it is)

    def base_claim() -> Any:
        found, k = _z3_pick(empty, available[head], some, at)
        return z3.And(z3.Not(found), picked(rest, z3.IntVal(0), found, k))  # Unavailable, so the law holds

    base = prove(
        base_claim,
        label=f"{name}: the empty chain is Unavailable and satisfies the law",
        assumptions=[empty],
        ties=ties,
    )
    step = prove(
        lambda: z3.Implies(z3.And(n >= 0, picked(rest, n, some, at)), picked(chain, n + 1, *_z3_pick(z3.BoolVal(False), available[head], some, at))),
        label=f"{name}: the law for the rest (any length) implies the law for head : rest",
        ties=ties,
    )
    return induction(base, step, of="bend.tiny.pick", label="the chain")


def _judged(prop_name: str) -> Evidence:
    def judge(case: tuple[tuple[str, ...], frozenset[str]]) -> bool:
        chain, available = case
        got = m.pick(chain, available)
        want = oracle.first_available(chain, available)
        if prop_name == "in_chain":
            return got is None or (got in chain and got in available)
        if prop_name == "unavailable":
            return (got is None) == (want is None)
        return got == want

    return bounded(_pick_cases(), judge, label=f"judged by the oracle on {PICK_LABEL}")


def _production_pick() -> Evidence:
    from eukhe.tiny import roles

    return identical(roles.pick, m.pick, label="the seed: pick runs as the compiled model")


@law("tiny_pick_in_chain", "S9 roles 3", "A pick is an available model of the chain, never one outside it.", PROVED)
def tiny_pick_in_chain() -> Evidence:
    return also(_pick_proof("tiny_pick_in_chain", "in_chain"), _judged("in_chain")).with_production(_production_pick())


@law("tiny_pick_first", "S9 roles 3", "The pick is the first available model of the chain.", PROVED)
def tiny_pick_first() -> Evidence:
    return also(_pick_proof("tiny_pick_first", "first"), _judged("first")).with_production(_production_pick())


@law("tiny_pick_unavailable", "S9 roles 3", "With no chain model available the pick is Unavailable, and only then.", PROVED)
def tiny_pick_unavailable() -> Evidence:
    return also(_pick_proof("tiny_pick_unavailable", "unavailable"), _judged("unavailable")).with_production(
        _production_pick()
    )


@law(
    "tiny_role_chain",
    "S9 roles 1",
    "A role's chain: modelRoles, then the fallback chain, else the role's catalog models and (text roles) the session model.",
    BOUNDED,
    derivation="S9 roles 1; the order of an unset fallback with a primary set, and first places of repeats, derived",
)
def tiny_role_chain() -> Evidence:
    bound = "the settings' names are ours: only their kinds (unset, [], repeats, catalog or not) are chosen"
    primaries = Bound("primaries (unset, a catalog model, another model)", (None, "lfm2.5-350m", "x"), bound=bound)
    fallbacks = Bound(
        "fallback chains (unset, explicit [], one, two with a repeat)",
        (None, (), ("kokoro",), ("x", "lfm2.5-230m", "x")),
        bound=bound,
    )
    sessions = Bound("session models (none, one)", (None, "s"), bound=bound)
    roles = Finite("roles", m.ROLES)
    if set(m.ROLES) != set(oracle.ROLE_CATALOG):
        raise LawFailed(f"bend.tiny.ROLES {m.ROLES} are not the seed's roles {sorted(oracle.ROLE_CATALOG)}")

    def agrees(role: str, primary: str | None, fallback: tuple[str, ...] | None, session: str | None) -> bool:
        return list(m.chain(role, primary, fallback, session)) == oracle.expected_chain(role, primary, fallback, session)

    return exhaust(domain(roles, primaries, fallbacks, sessions), agrees)


# ------------------------------------------------------------------------- the seat

class _Tag(Opaque):
    """A launch tag that may be compared (==, by identity) and passed on: any other read raises."""

    def __eq__(self, other: object) -> bool:
        return self is other

    def __ne__(self, other: object) -> bool:
        return self is not other


TAG, OTHER_TAG = _Tag("the need's tag"), _Tag("another tag")
RUNNING = Finite(
    "running tags (none, the need's own, another: every case of ==, the only read serve makes of a tag)",
    (None, TAG, OTHER_TAG),
)
NEED_TAGS = Finite("need tags (a token: it stands for every tag)", (TAG,))


def _serve_proof() -> Evidence:
    """S9 worker 2-4 on the seat, for every running tag (or none) and every need's tag: bend.tiny.serve
    gives the seed's outcome and seats the need's tag."""

    def rule(running: object, tag: _Tag) -> bool:
        outcome, seated = m.serve(running, tag)  # type: ignore[arg-type]
        kind = "none" if running is None else "same" if running is tag else "other"
        after: object = seated
        return outcome == oracle.NEED_OUTCOME[kind] and after is tag

    return exhaust(domain(RUNNING, NEED_TAGS), rule, about=[m.serve])


def _joins_proof() -> Evidence:
    """bend.tiny.need's own code, on any world whose seated worker runs the need's tag (``current``
    abstracted to that worker; the world's fields opaque, so unread): the need joins, served by
    the seated worker, and the world keeps its workers."""
    world = m.World(Opaque("workers"), Opaque("started"), Opaque("last"), Opaque("holds"))  # type: ignore[arg-type]
    seated = m.Worker(Opaque("number"), TAG, Opaque("in flight"), True)  # type: ignore[arg-type]
    need = m.need

    def running(asked: m.World) -> m.Worker:
        if asked is not world:
            raise LawFailed(f"need asked current of {asked!r}, not of its world")
        return seated

    def joins(w: m.World, tag: _Tag) -> bool:
        with callees(m, current=running):
            after, outcome, serving, exited = need(w, tag)  # type: ignore[arg-type]
        return outcome == oracle.NEED_OUTCOME["same"] and serving is seated.number and exited == () and after.workers is w.workers

    worlds = Finite("worlds (fields opaque: any) whose seated worker, current(world), runs the need's tag", (world,))
    return exhaust(domain(worlds, NEED_TAGS), joins, about=[m.need, m.serve])


Pair = tuple[m.World, oracle.Seat]


def _pair_steps(pair: Pair) -> Iterator[tuple[object, Pair]]:
    """Each action on the model's world, beside the seed's socket replayed from the actions alone.
    A need's label: (action, outcome, serving worker) of the model, then (outcome, worker) of the seed."""
    world, seat = pair
    for tag in TAGS:
        if seat.started < MAX_STARTED or (seat.seated is not None and seat.seated[1] == tag):
            after, outcome, serving, _ = m.need(world, tag)
            seat_after, want, by = seat.need(tag)
            yield (("need", tag), outcome, serving, want, by), (after, seat_after)
            for process in PROCESSES:
                held = m.hold(after, process)
                if held is not None:
                    yield (("need+hold", process, tag), outcome, serving, want, by), (held, seat_after)
    for process in PROCESSES:
        done = m.release(world, process)
        if done is not None:
            yield (("release", process), done[1]), (done[0], seat)
    gone = m.exit_worker(world)
    if gone is not None:
        yield (("exit",), gone[1]), (gone[0], seat.exit())


def _seated(world: m.World) -> list[m.Worker]:
    return [w for w in world.workers if w.seated]


def _explore_world(name: str, invariant: Callable[[Pair], bool], transition: Callable[[Pair, Any, Pair], bool]) -> Evidence:
    def sane(pair: Pair) -> bool:
        world = pair[0]
        draining = [w for w in world.workers if not w.seated]
        return len(_seated(world)) <= 1 and all(w.inflight for w in draining) and invariant(pair)

    return explore(
        [(m.World(), oracle.Seat())],
        _pair_steps,
        sane,
        transition=transition,
        label=f"{name}: the world of {len(PROCESSES)} processes, {len(TAGS)} tags, held requests, exits, at most {MAX_STARTED} workers started, judged by the seed's socket replayed from the actions",
    )


def _is_need(action: Any) -> bool:
    return isinstance(action, tuple) and action[0][0] in ("need", "need+hold")


def _always(*_: object) -> bool:
    return True


@law("tiny_every_need_served", "S9 worker 1-4", "Each need is served by exactly one of started, joined, replaced.", BOUNDED)
def tiny_every_need_served() -> Evidence:
    """Bounded: the world (needs, held requests, exits of 3 processes over 3 tags) explored, each
    need's outcome and serving worker judged by the seed's socket replayed from the actions; the
    seat rule itself (bend.tiny.serve) is proved for every tag."""

    def served(before: Pair, action: Any, after: Pair) -> bool:
        if not _is_need(action):
            return True
        _, outcome, serving, want, by = action
        seated = _seated(after[0])
        return outcome == want and serving == by and len(seated) == 1 and seated[0].number == by

    return also(_explore_world("tiny_every_need_served", _always, served), _serve_proof())


@law("tiny_worker_current", "S9 worker 3", "The seated worker has the tag of the last need since the last exit.", BOUNDED)
def tiny_worker_current() -> Evidence:
    """Bounded: in every state of the explored world the seated worker is the one the seed's socket
    says, with the tag of the last need since the last exit (replayed from the actions, never read
    from the model's bookkeeping); an exit is the seated worker's."""

    def current(pair: Pair) -> bool:
        world, seat = pair
        seated = [(w.number, w.tag) for w in _seated(world)]
        if seat.seated is None:
            return seated == [] and seat.last is None
        return seated == [seat.seated] and seat.seated[1] == seat.last

    def exits(before: Pair, action: Any, after: Pair) -> bool:
        if isinstance(action, tuple) and action[0] == ("exit",):
            return before[1].seated is not None and action[1] == before[1].seated[0]
        return True

    return also(_explore_world("tiny_worker_current", current, exits), _serve_proof())


@law("tiny_same_tag_joins", "S9 worker 2", "A need with the running tag joins the running worker.", PROVED)
def tiny_same_tag_joins() -> Evidence:
    """Proved on bend.tiny.need's own code for every world and tag (its seated worker abstracted to
    one running the need's tag, the world opaque) with bend.tiny.serve run as is; the world is
    also explored, where a need joins exactly when the seed's socket runs its tag."""

    def joins(before: Pair, action: Any, after: Pair) -> bool:
        if not _is_need(action):
            return True
        seat = before[1]
        tag = action[0][-1]
        want_join = seat.seated is not None and seat.seated[1] == tag
        return (action[1] == m.JOINED) == want_join and (not want_join or action[2] == seat.seated[0])  # type: ignore[index]

    return also(_joins_proof(), _explore_world("tiny_same_tag_joins", _always, joins))


# ------------------------------------------------------------- one process's election


def _production_elect(choice: Callable[..., Any]) -> Evidence:
    """Production runs bend.tiny's election itself: the client steps ``bend.tiny.elect_step`` (which
    makes every choice of its phases), the worker seats with ``bend.tiny.seat``."""
    from eukhe.tiny import client, worker

    if choice is m.seat:
        return identical(getattr(worker, "model").seat, m.seat, label="the worker's seat choice (the seed: runs as the compiled model)")
    return identical(getattr(client, "model").elect_step, m.elect_step, label=f"the client's election, whose steps call {choice.__name__} (the seed: runs as the compiled model)")


PING = Finite("ping answers", m.PING_ANSWERS)
LAUNCHES = Finite("launches an election has made when it checks (1..ATTEMPTS, every value tiny_elect_ends reaches)", tuple(range(1, m.ATTEMPTS + 1)))


@law("tiny_elect_ping", "S9 worker 1-4", "From its first ping a process joins (same tag), replaces (other tag) or starts (none, closing).", PROVED)
def tiny_elect_ping() -> Evidence:
    return exhaust(domain(PING), lambda answer: m.on_ping(answer) == oracle.ON_PING[answer]).with_production(_production_elect(m.on_ping))


@law("tiny_elect_shutdown", "S9 worker 3", "A shutdown's answer (bye, or the connection gone) leads to a start.", PROVED)
def tiny_elect_shutdown() -> Evidence:
    return exhaust(domain(Finite("shutdown answers", m.SHUTDOWN_ANSWERS)), lambda a: m.on_shutdown(a) == oracle.ON_SHUTDOWN[a]).with_production(
        _production_elect(m.on_shutdown)
    )


@law("tiny_elect_launch", "S9 worker 4, 6", "A launched worker is checked; a launch that failed is Crashed.", PROVED)
def tiny_elect_launch() -> Evidence:
    return exhaust(domain(Finite("launch outcomes", m.LAUNCH_OUTCOMES)), lambda o: m.on_launch(o) == oracle.ON_LAUNCH[o]).with_production(
        _production_elect(m.on_launch)
    )


@law(
    "tiny_elect_check",
    "S9 worker 4",
    "After a start: same tag is used, nothing is Crashed, other tag replaced and closing restarted while launches remain.",
    PROVED,
    derivation="S9 worker 4; the bound of ATTEMPTS launches per election is derived",
)
def tiny_elect_check() -> Evidence:
    if m.ATTEMPTS != oracle.ATTEMPTS:
        raise LawFailed(f"bend.tiny.ATTEMPTS is {m.ATTEMPTS}, the oracle's {oracle.ATTEMPTS}")

    def judged(answer: str, launches: int) -> bool:
        table = oracle.ON_CHECK if launches < oracle.ATTEMPTS else oracle.ON_CHECK_EXHAUSTED
        return m.on_check(answer, launches) == table[answer]

    return exhaust(domain(PING, LAUNCHES), judged).with_production(_production_elect(m.on_check))


def _production_seats() -> Evidence:
    """Production's seat on a real run dir for each probe the seed's table names: a live worker
    serving on the socket, a socket file nobody answers on (a worker killed with SIGKILL leaves
    one), no socket file. What the started worker did is read from the outside (take_seat said
    it exits, or it bound: the socket file, there before or not, takes connections) and judged by the
    seed's table (oracle.SEAT)."""
    import shutil
    import socket
    import tempfile
    import threading
    from pathlib import Path

    from eukhe.tiny import paths
    from eukhe.tiny.worker import Worker, probe

    def seated(probed: str) -> bool:
        agent = Path(tempfile.mkdtemp(prefix="ekl", dir="/tmp"))
        where = paths.socket_path(agent, "echo")
        paths.ensure_run_dir(agent)
        first: Worker | None = None
        serving: threading.Thread | None = None
        try:
            if probed == m.LIVE:
                first = Worker(agent, "echo", "cpu", "fp16", 600000)
                if not first.take_seat():
                    return False
                serving = threading.Thread(target=first.serve_forever, daemon=True)
                serving.start()
            elif probed == m.STALE:
                dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                dead.bind(str(where))
                dead.close()  # the file stays; nobody listens on it
            def listening() -> bool:
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                    return sock.connect_ex(str(where)) == 0

            before = where.exists()
            if probed == m.STALE and listening():
                return False
            started = Worker(agent, "echo", "cpu", "q4", 600000)
            if not started.take_seat():
                did = m.EXIT
            else:
                bound = listening()  # it listens on the path (it does not serve yet)
                started.close()
                if not bound:
                    return False
                did = m.CLEAR_AND_BIND if before else m.BIND
            if first is not None and probe(where, 10.0).tag != first.tag:  # a live worker keeps its seat
                return False
            return did == oracle.SEAT[probed]
        finally:
            if first is not None:
                first.close()
            if serving is not None:
                serving.join(timeout=60)
            shutil.rmtree(agent, ignore_errors=True)

    return bounded(sorted(oracle.SEAT), seated, label="each seat probe on a real run dir: a live worker, a stale socket file, none")


@law("tiny_elect_seat", "S9 worker 4", "A started worker exits when a live worker answers, else binds (clearing a stale socket).", PROVED)
def tiny_elect_seat() -> Evidence:
    return exhaust(domain(Finite("seat probes", m.SEAT_PROBES)), lambda p: m.seat(p) == oracle.SEAT[p]).with_production(
        also(_production_elect(m.seat), _production_seats())
    )


def _potential(state: m.Election) -> int:
    rank = m.PHASES.index(state.phase) if state.phase in m.PHASES else len(m.PHASES)
    return 5 * (state.replaces + state.launches) + rank


@law(
    "tiny_elect_ends",
    "S9 worker 1-4",
    "Every election ends in exactly one of joined, started, replaced, or a typed error, and launches at most ATTEMPTS workers.",
    PROVED,
    derivation="S9 worker 1-4 (each need exactly one outcome) for one process under any answers",
)
def tiny_elect_ends() -> Evidence:
    answers = Finite("answers of every kind", (*m.PING_ANSWERS, *m.SHUTDOWN_ANSWERS, *m.LAUNCH_OUTCOMES))
    phases = Finite("first phase", ("ping",))

    def invariant(state: m.Election) -> bool:
        if state.launches > m.ATTEMPTS or state.replaces > m.ATTEMPTS:
            return False
        if state.phase == "check" and not 1 <= state.launches <= m.ATTEMPTS:
            return False
        if state.done:
            if state.phase == m.JOINED:
                return state.launches == 0 and state.replaces == 0
            if state.phase == m.STARTED:
                return state.replaces == 0 and state.launches >= 1
            if state.phase == m.REPLACED:
                return state.replaces >= 1 and state.launches >= 1
            return state.phase in m.ERRORS
        return state.phase in m.PHASES and any(m.elect_step(state, a) is not None for a in answers.values)

    def progress(before: m.Election, action: tuple[str], after: m.Election) -> bool:
        return _potential(after) > _potential(before)

    return reachable(
        domain(phases),
        domain(answers),
        lambda state, action: m.elect_step(state, action[0]),
        invariant,
        start=lambda phase: m.Election(phase),
        transition=progress,
        label="one election: a potential that every step raises and a bound on it, so no run is endless",
    )


# ------------------------------------------------------------------ production-only laws


class _Chunks:
    """A socket stand-in whose recv hands out a stream in the given chunk sizes."""

    def __init__(self, stream: bytes, sizes: list[int]) -> None:
        self.stream = stream
        self.sizes = sizes or [1]
        self.at = 0
        self.turn = 0

    def recv(self, most: int) -> bytes:
        size = min(most, self.sizes[self.turn % len(self.sizes)])
        self.turn += 1
        piece = self.stream[self.at : self.at + size]
        self.at += len(piece)
        return piece


def _read_all(stream: bytes, limit: int, sizes: list[int]) -> list[bytes | str]:
    from typing import cast

    from eukhe.tiny import protocol

    reader = protocol.LineReader(cast("Any", _Chunks(stream, sizes)), limit)
    out: list[bytes | str] = []
    while True:
        line = reader.read()
        if line is None:
            return out
        out.append(oracle.OVER if line is protocol.OVER_LIMIT else line)  # type: ignore[arg-type]


@law(
    "tiny_line_limit",
    "S9 worker 6",
    "Each line of at most the limit is read whole; a longer one is refused and skipped, and the next line is read.",
    BOUNDED,
    derivation="S9 worker 6 (lines of at most 256 MiB each side, bytes discarded), on production's reader",
)
def tiny_line_limit() -> Evidence:
    from hypothesis import strategies as st

    alphabet = (b"a", b"\n")
    streams = [b"".join(p) for n in range(9) for p in itertools.product(alphabet, repeat=n)]

    def agrees(case: tuple[bytes, int, int]) -> bool:
        stream, limit, size = case
        return _read_all(stream, limit, [size]) == oracle.lines_of(stream, limit)

    small = bounded(
        itertools.product(streams, range(4), (1, 2, 3, 1 << 20)),
        agrees,
        label="every stream of at most 8 bytes over {a, newline} x limits 0..3 x chunk sizes 1, 2, 3, 1 MiB",
    )
    hunted = examples(
        lambda stream, limit, sizes: _read_all(stream, limit, sizes) == oracle.lines_of(stream, limit),
        stream=st.binary(max_size=400).map(lambda b: b.replace(b"\x00", b"\n")),
        limit=st.integers(0, 64),
        sizes=st.lists(st.integers(1, 70), min_size=1, max_size=8),
    )
    return also(small, hunted)


@law(
    "tiny_translation_verdict",
    "S9 Translation",
    "A reply is Empty when nothing is left, Unchanged when it has the input's letters and digits (letterless input exempt).",
    TESTED,
    derivation="S9 Translation, on production's parser (eukhe.tiny.tasks)",
)
def tiny_translation_verdict() -> Evidence:
    from hypothesis import strategies as st

    from eukhe.tiny import tasks

    def verdict(language: str, text: str, reply: str) -> str:
        try:
            tasks.parse_translation(language, text, reply)
        except tasks.TranslationError.Empty:
            return "Empty"
        except tasks.TranslationError.Unchanged:
            return "Unchanged"
        return "ok"

    words = st.sampled_from(["hello", "See you tomorrow.", "123", "!", "", " ", "\n", "Straße", "İ", "ß", "Ⅻ", "٣", "Hallo"])
    text = st.one_of(st.text(max_size=20), st.lists(words, max_size=4).map(" ".join))

    @st.composite
    def replies(draw: st.DrawFn, source: SearchStrategy[str]) -> tuple[str, str]:
        t = draw(source)
        kind = draw(st.sampled_from(["echo", "upper", "punct", "free", "lines"]))
        if kind == "echo":
            r = t
        elif kind == "upper":
            r = t.upper()
        elif kind == "punct":
            r = "".join(c for c in t if c.isalnum()) + draw(st.sampled_from(["", ".", " !", "\n"]))
        elif kind == "lines":
            r = draw(st.text(max_size=5)) + "\n" + t
        else:
            r = draw(st.text(max_size=20))
        return t, draw(st.sampled_from(["", "German:", "German: "])) + r

    def agrees(language: str, pair: tuple[str, str]) -> bool:
        return verdict(language, *pair) == oracle.translation_verdict(language, *pair)

    return examples(agrees, language=st.sampled_from(["German", "French"]), pair=replies(text))


@law(
    "tiny_tokenizer_agrees",
    "S9 engine (tokenizer.rs)",
    "Our byte-level BPE gives the ids and the text `tokenizers` gives, on a file `tokenizers` trained.",
    TESTED,
    derivation="S9 engine: own tokenizer; judged by the Hugging Face tokenizers library itself",
)
def tiny_tokenizer_agrees() -> Evidence:
    import json

    from hypothesis import strategies as st
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    from eukhe.tiny.tokenizer import Tokenizer as Ours

    reference = Tokenizer(models.BPE())
    reference.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    reference.decoder = decoders.ByteLevel()
    syllables = ["ka", "lo", "mi", "ne", "sto", "ra", "ü", "ß", "你", "好", "1", "23", "'s", "😀", "ing", "the"]
    words = ["".join(syllables[(7 * i + 3 * k * k) % len(syllables)] for k in range(1 + i % 5)) for i in range(200)]
    corpus = [" ".join(words[i : i + 9]) + ("\n" if i % 3 else ", \t") for i in range(0, 200, 3)] * 3
    corpus += ["Hello world, it's a test: 12345 ÄÖÜ ñ 你好 😀 \n\t tabs", "Translate from English to German.\nEnglish: hi"]
    trainer = trainers.BpeTrainer(
        vocab_size=330, special_tokens=["<|im_end|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    reference.train_from_iterator(corpus, trainer)
    ours = Ours.from_document(json.loads(reference.to_str()))

    def agrees(text: str) -> bool:
        want = reference.encode(text, add_special_tokens=False).ids
        return ours.encode(text) == want and ours.decode(want, skip_special=False) == reference.decode(want, skip_special_tokens=False)

    pieces = st.sampled_from(["<|im_end|>", " ", "\n", "\u00a0", "\x1c", "e\u0301", *syllables, *words[:40]])
    letters = st.text(alphabet="kalominestrügß你好123' ", max_size=40)  # words the training never saw
    sampled = examples(agrees, text=st.one_of(letters, st.lists(pieces, max_size=20).map("".join), st.text()))

    # The other settings the tokenizer loads (S9: "added tokens, pre-tokenizer regex"; a model's
    # BOS comes from its post-processor), each set on the same trained file by `tokenizers` itself
    # and judged by it: add_prefix_space before each piece or each split, a Split on a plain
    # string, a TemplateProcessing post-processor alone or in a Sequence; with and without the
    # special tokens, decoded with and without them, an id outside the vocabulary, and an added
    # token whose characters are outside the byte-level alphabet.
    gpt2 = Regex(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")
    end = reference.token_to_id("<|im_end|>")
    variants: dict[str, Callable[[Any], None]] = {
        "ByteLevel with its regex and add_prefix_space": lambda t: setattr(t, "pre_tokenizer", pre_tokenizers.ByteLevel(add_prefix_space=True, use_regex=True)),
        "Split, then ByteLevel with add_prefix_space": lambda t: setattr(
            t, "pre_tokenizer", pre_tokenizers.Sequence([pre_tokenizers.Split(gpt2, behavior="isolated"), pre_tokenizers.ByteLevel(add_prefix_space=True, use_regex=False)])
        ),
        "Split on a plain string": lambda t: setattr(
            t, "pre_tokenizer", pre_tokenizers.Sequence([pre_tokenizers.Split(" ", behavior="isolated"), pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
        ),
        "TemplateProcessing": lambda t: setattr(
            t, "post_processor", processors.TemplateProcessing(single="<|im_end|> $A <|im_end|>", special_tokens=[("<|im_end|>", end)])
        ),
        "a Sequence of ByteLevel and TemplateProcessing": lambda t: setattr(
            t,
            "post_processor",
            processors.Sequence([processors.ByteLevel(trim_offsets=False), processors.TemplateProcessing(single="<|im_end|> $A", special_tokens=[("<|im_end|>", end)])]),
        ),
    }
    texts = ("", "hi", "Hello world, it's a test", " leading space", "x<|im_end|>y  z", "<|a b|>kalo mi\n\tne", "你好 😀 123", "a  b   c\n")

    def set_up(name: str) -> tuple[Any, Any]:
        variant = Tokenizer.from_str(reference.to_str())
        variant.add_tokens(["<|a b|>"])  # not special; a space is outside the byte-level alphabet
        variants[name](variant)
        return variant, Ours.from_document(json.loads(variant.to_str()))

    made = {name: set_up(name) for name in variants}

    def agrees_set(name: str, text: str) -> bool:
        theirs, mine = made[name]
        with_special = theirs.encode(text, add_special_tokens=True).ids
        plain = theirs.encode(text, add_special_tokens=False).ids
        if mine.encode(text, add_special_tokens=True) != with_special or mine.encode(text) != plain:
            return False
        ids = [*with_special, theirs.get_vocab_size() + 7]  # an id of no token: skipped
        return all(mine.decode(ids, skip_special=skip) == theirs.decode(ids, skip_special_tokens=skip) for skip in (False, True))

    settings = bounded(
        itertools.product(sorted(variants), texts),
        lambda case: agrees_set(*case),
        label=f"{len(variants)} other loadable settings x {len(texts)} texts, encoded and decoded with and without special tokens",
    )
    return all_of(sampled, settings)


@law(
    "tiny_text_greedy",
    "S9 engine (text.rs)",
    "The ONNX text runner's greedy tokens are the NumPy reference's, on real graphs of every documented signature.",
    BOUNDED,
    derivation="S9 engine: prefill, greedy, max tokens over a graph of the documented signature; judged by NumPy",
)
def tiny_text_greedy() -> Evidence:
    import tempfile
    from pathlib import Path

    import numpy as np

    from eukhe.tiny.text import TextRunner

    vocab, dim = 48, 8
    where = Path(tempfile.mkdtemp(prefix="eklaw"))
    variants = (("plain", False, False), ("optional inputs", True, False), ("num_logits_to_keep", False, True))
    runners = {
        (name, seed): TextRunner(oracle.build(where / f"{name}-{seed}.onnx", vocab, dim, seed, optional=o, keep=k))
        for name, o, k in variants
        for seed in (1, 2)
    }
    prompts = ([0], [7, 7, 7], [1, 2, 3, 4, 5, 6], [vocab - 1])

    def agrees(case: tuple[tuple[str, int], list[int]]) -> bool:
        (name, seed), prompt = case
        runner = runners[(name, seed)]
        close = np.allclose(runner.logits(prompt), oracle.reference_logits(prompt, vocab, dim, seed), rtol=1e-4, atol=1e-4)
        return close and list(runner.generate(prompt, max_tokens=6).ids) == oracle.reference_greedy(prompt, 6, vocab, dim, seed)

    def ends(case: tuple[tuple[str, int], list[int]]) -> bool:
        """Generation stops before an end token: the greedy tokens up to the first that is one."""
        (name, seed), prompt = case
        greedy = oracle.reference_greedy(prompt, 6, vocab, dim, seed)
        end = greedy[2]
        got = runners[(name, seed)].generate(prompt, max_tokens=6, end_ids=frozenset({end}))
        return list(got.ids) == greedy[: greedy.index(end)] and got.stopped == "end"

    def refused(name: str) -> bool:
        """A graph outside the documented signature fails to load, and a run of no tokens or of
        an id outside the vocabulary is refused, before the runtime sees it."""
        from onnx import TensorProto, helper

        from eukhe.tiny.text import TextError

        float_of = helper.make_node("Cast", ["input_ids"], ["as_float"], to=TensorProto.FLOAT)
        inputs = {
            "an unknown input": [("input_ids", TensorProto.INT64), ("token_type_ids", TensorProto.INT64)],
            "no logits output": [("input_ids", TensorProto.INT64)],
            "a cache input without its present output": [("input_ids", TensorProto.INT64), ("past_key_values.0.key", TensorProto.FLOAT)],
            "a cache input of int32": [("input_ids", TensorProto.INT64), ("past_conv.0", TensorProto.INT32)],
        }
        outputs = {"no logits output": ["scores"], "a cache input of int32": ["logits", "present_conv.0"]}
        graph = where / f"{name.replace(' ', '-')}.onnx"
        try:
            if name == "no tokens":
                runners[("plain", 1)].step([], 0, {})
            elif name == "an id outside the vocabulary":
                runners[("plain", 1)].step([vocab], 0, {})
            elif name == "a graph that is not ONNX":
                graph.write_bytes(b"not a graph")
                TextRunner(graph)
            else:
                nodes = [float_of] + [helper.make_node("Identity", ["as_float"], [out]) for out in outputs.get(name, ["logits"]) if out != "present_conv.0"]
                if "present_conv.0" in outputs.get(name, []):
                    nodes.append(helper.make_node("Identity", ["past_conv.0"], ["present_conv.0"]))
                made = helper.make_graph(
                    nodes,
                    "refused",
                    [helper.make_tensor_value_info(n, t, [1, "s"]) for n, t in inputs[name]],
                    [helper.make_tensor_value_info(out, TensorProto.INT32 if out == "present_conv.0" else TensorProto.FLOAT, [1, "s"]) for out in outputs.get(name, ["logits"])],
                )
                oracle._save(helper.make_model(made, opset_imports=[helper.make_opsetid("", 17)]), graph)
                TextRunner(graph)
        except TextError as error:
            return all(word in str(error) for word in CAUSES[name])
        return False

    CAUSES = {
        "no tokens": ("no tokens",),
        "an id outside the vocabulary": (f"vocabulary of {vocab}",),
        "a graph that is not ONNX": ("not-ONNX.onnx", "cannot load"),
        "an unknown input": ("token_type_ids",),
        "no logits output": ("no logits",),
        "a cache input without its present output": ("present.0.key", "missing"),
        "a cache input of int32": ("past_conv.0", "int32"),
    }
    return all_of(
        bounded(
            itertools.product(sorted(runners), prompts),
            agrees,
            label="3 graph signatures x 2 weight seeds x 4 prompts (edge ids included), 6 greedy tokens each",
        ),
        bounded(itertools.product(sorted(runners), prompts), ends, label="the same, with the third greedy token an end token"),
        bounded(sorted(CAUSES), refused, label=f"{len(CAUSES)} graphs and runs refused, each naming its cause"),
    )


@law(
    "tiny_role_resolution",
    "S9 roles 1-3",
    "Production picks the first model of the role's chain that is installed or the session's usable model, else Unavailable.",
    BOUNDED,
    derivation="S9 roles 1-3 on production (eukhe.tiny.uses.resolve), judged by the oracle's chain and first-available",
)
def tiny_role_resolution() -> Evidence:
    import tempfile
    from pathlib import Path

    from eukhe.tiny import catalog, paths, roles, uses

    root = Path(tempfile.mkdtemp(prefix="eklaw"))
    ids = sorted(oracle.CATALOG_IDS)
    installs = [frozenset(s) for n in range(len(ids) + 1) for s in itertools.combinations(ids, n)]
    dirs: dict[frozenset[str], Path] = {}
    for number, chosen in enumerate(installs):
        agent = root / str(number)
        for model_id in chosen:
            for f in catalog.find(model_id).files:
                target = paths.model_dir(agent, model_id) / f.path
                target.parent.mkdir(parents=True, exist_ok=True)
                with open(target, "wb") as out:  # a pinned file has its pinned size (sparse: no bytes written)
                    out.truncate(f.size or 1)
        dirs[chosen] = agent

    def agrees(case: tuple[str, str | None, tuple[str, ...] | None, bool, frozenset[str]]) -> bool:
        role, primary, fallback, usable, installed = case
        session = "prov/model"
        chain = oracle.expected_chain(role, primary, fallback, session)
        available = installed | ({session} if usable else set())
        want = oracle.first_available(chain, frozenset(available))
        try:
            got: str | None = uses.resolve(role, dirs[installed], primary=primary, fallback=fallback, session_model=session, session_usable=usable)
        except roles.Unavailable:
            got = None
        return got == want

    return bounded(
        itertools.product(
            sorted(oracle.ROLE_CATALOG),
            (None, "lfm2.5-350m", "prov/model"),
            (None, (), ("kokoro", "whisper-base")),
            (False, True),
            installs,
        ),
        agrees,
        label="5 roles x 3 primaries x 3 fallbacks x session usable or not x all 32 install sets of the catalog",
    )


@law(
    "tiny_download_complete_or_absent",
    "S9 download 1-3",
    "A download installs every pinned byte or nothing: on any fault the staging is gone and an earlier install untouched.",
    BOUNDED,
    derivation="S9 download 1-3 on production (eukhe.tiny.download) against a real loopback HTTP server",
)
def tiny_download_complete_or_absent() -> Evidence:
    import hashlib
    import http.server
    import resource
    import shutil
    import tempfile
    import threading
    from pathlib import Path

    import httpx

    from eukhe.tiny import download, paths
    from eukhe.tiny.catalog import File, Model
    from spec.laws.session import with_limit

    files = {"onnx/model.onnx": bytes(range(256)) * 40, "tokenizer.json": b'{"v":1}'}
    routes: dict[str, tuple[str, bytes]] = {}

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            mode, body = routes.get(self.path, ("404", b""))
            asked = self.headers.get("Range", "")
            if mode in ("resume", "resume elsewhere") and asked.startswith("bytes=") and asked.endswith("-"):
                # the rest from the byte asked for (a 206); "elsewhere" sends it from byte 1 instead
                start = int(asked[6:-1]) if mode == "resume" else 1
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
                self.send_header("Content-Length", str(len(body) - start))
                self.end_headers()
                self.wfile.write(body[start:])
                return
            self.send_response(404 if mode == "404" else 200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[: len(body) // 2] if mode in ("cut", "resume", "resume elsewhere") else body)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    model = Model("m", "text", "o/m", "c", tuple(File(p, len(b), hashlib.sha256(b).hexdigest()) for p, b in files.items()), "echo")
    faults: dict[str, Callable[[bytes], tuple[str, bytes]]] = {
        "ok": lambda b: ("ok", b),
        "one byte flipped": lambda b: ("ok", bytes([b[0] ^ 1]) + b[1:]),
        "one byte more": lambda b: ("ok", b + b"!"),
        "one byte less": lambda b: ("ok", b[:-1]),
        "connection cut": lambda b: ("cut", b),
        "connection cut, then resumed": lambda b: ("resume", b),
        "connection cut, then resumed from another byte": lambda b: ("resume elsewhere", b),
        "HTTP 404": lambda b: ("404", b""),
        # the file system refuses a write (EFBIG): a file may be at most half the file's size
        # (RLIMIT_FSIZE, a per-file cap: the larger graph is refused first whichever file is the
        # target), a real fault of the writes, as a full disk is
        "a write the file system refuses": lambda b: ("ok", b),
    }
    refused = "a write the file system refuses"
    whole = ("ok", "connection cut, then resumed")  # every pinned byte arrives
    earlier_kinds = ("none", "partial", "complete")

    def tree(where: Path) -> dict[str, bytes]:
        return {str(p.relative_to(where)): p.read_bytes() for p in sorted(where.rglob("*")) if p.is_file()}

    def check(agent: Path, case: tuple[str, str, str]) -> bool:
        fault, target, earlier = case
        routes.clear()
        for path, body in files.items():
            routes[f"/o/m/resolve/c/{path}"] = faults[fault if path == target else "ok"](body)
        where = paths.model_dir(agent, "m")
        if earlier != "none":
            where.mkdir(parents=True)
            (where / "tokenizer.json").write_bytes(b"earlier")
            if earlier == "complete":
                (where / "onnx").mkdir()
                (where / "onnx" / "model.onnx").write_bytes(b"old graph")
        before = tree(where) if where.exists() else None
        outcome: list[bool] = []

        def run() -> None:
            try:
                download.download(agent, model, base=base, client=web)
                outcome.append(True)
            except download.DownloadError:
                outcome.append(False)

        if fault == refused:
            escaped = with_limit(resource.RLIMIT_FSIZE, len(files[target]) // 2, run)
            if escaped is not None:  # the refused write is a typed error (S9 download 2), never a bare OSError
                return False
        else:
            run()
        installed = outcome == [True]
        left = sorted(p.name for p in paths.models_dir(agent).iterdir())
        if fault in whole:
            return installed and tree(where) == {**files, "engine.json": b'{"kind": "echo"}'} and left == ["m"]
        after = tree(where) if where.exists() else None
        return not installed and after == before and left == ([] if earlier == "none" else ["m"])

    def holds(case: tuple[str, str, str]) -> bool:
        agent = Path(tempfile.mkdtemp(prefix="eklaw"))
        try:
            return check(agent, case)
        finally:
            shutil.rmtree(agent, ignore_errors=True)

    web = httpx.Client(timeout=60.0)
    try:
        return bounded(
            itertools.product(faults, files, earlier_kinds),
            holds,
            label=f"{len(faults)} transfer and write faults (none included; a write refused with EFBIG) x each of 2 files x no, partial or complete earlier install",
        )
    finally:
        web.close()
        server.shutdown()
        server.server_close()


# ------------------------------------------------------------------ speech and dictation


def _tone(hz: float, seconds: float, rate: int = 16000) -> Any:
    import numpy as np

    t = np.arange(int(seconds * rate)) / rate
    return (0.5 * np.sin(2 * np.pi * hz * t)).astype(np.float32)


@law(
    "tiny_whisper_features",
    "S9 engine (whisper.rs)",
    "Whisper's input features are the reference log-mel spectrogram (loops and an explicit DFT) on every class of audio.",
    BOUNDED,
    derivation="S9 engine: whisper-style transcription needs Whisper's features; judged by the oracle's independent computation",
)
def tiny_whisper_features() -> Evidence:
    import numpy as np

    from eukhe.tiny.whisper import CHUNK_SAMPLES, log_mel_spectrogram, mel_filters

    rng = np.random.default_rng(11)
    audios = {
        "silence": np.zeros(16000, np.float32),
        "no samples": np.zeros(0, np.float32),
        "a 440 Hz tone": _tone(440, 1.0),
        "a tone at the band edge (7900 Hz)": _tone(7900, 0.5),
        "noise past 30 s (cut)": (rng.standard_normal(CHUNK_SAMPLES + 300) * 0.1).astype(np.float32),
        "loud, clipped noise": np.clip(rng.standard_normal(4000) * 10, -1, 1).astype(np.float32),
    }

    def filters_agree(n_mels: int) -> bool:
        return bool(np.allclose(mel_filters(n_mels), oracle.reference_mel_filters(n_mels), rtol=1e-5, atol=1e-7))

    def features_agree(name: str) -> bool:
        got = log_mel_spectrogram(audios[name])
        return got.shape == (80, 3000) and bool(np.allclose(got, oracle.reference_log_mel(audios[name]), atol=2e-4))

    return all_of(
        bounded((80, 128), filters_agree, label="the mel filter banks of 80 and 128 bands (whisper-base/small, large)"),
        bounded(sorted(audios), features_agree, label="6 audio classes: silence, none, tone, band-edge tone, over 30 s, clipped"),
    )


@law(
    "tiny_whisper_transcribe",
    "S9 engine (whisper.rs)",
    "The transcription pipeline's tokens and text are the NumPy reference's, on real graphs of the documented signature.",
    BOUNDED,
    derivation="S9 engine: features, encoder, greedy decoder loop to <|endoftext|>, 30 s chunks; judged by NumPy",
)
def tiny_whisper_transcribe() -> Evidence:
    import json
    import tempfile
    from pathlib import Path

    import numpy as np

    from eukhe.tiny.audio import Audio, resample
    from eukhe.tiny.whisper import CHUNK_SAMPLES, Whisper

    n_mels, dim, eot = 80, 8, 256
    vocab = 256 + len(oracle.WHISPER_SPECIALS)
    prompt = [257, 258, 260, 261]
    where = Path(tempfile.mkdtemp(prefix="eklaw"))
    whispers = {}
    mels = {1: n_mels, 2: n_mels, 3: 128}  # seed 3: 128 mel bands, read from the encoder's input
    for seed in (1, 2, 3):
        oracle.build_whisper(where / str(seed), mels[seed], dim, vocab, eot, seed)
        (where / str(seed) / "tokenizer.json").write_text(json.dumps(oracle.whisper_tokenizer_document()), encoding="utf-8")
        whispers[seed] = Whisper.load(where / str(seed))
    rng = np.random.default_rng(3)
    audios = {
        "a tone at 16 kHz": Audio(_tone(300, 0.7), 16000),
        "noise at 8 kHz (resampled)": Audio((rng.standard_normal(4000) * 0.2).astype(np.float32), 8000),
        "31 s (two chunks)": Audio((rng.standard_normal(CHUNK_SAMPLES + 16000) * 0.2).astype(np.float32), 16000),
    }

    def reference(seed: int, audio: Audio) -> str:
        samples = resample(audio, 16000).samples
        texts = []
        for start in range(0, max(len(samples), 1), CHUNK_SAMPLES):
            features = oracle.reference_log_mel(samples[start : start + CHUNK_SAMPLES], mels[seed])
            texts.append(oracle.reference_bytes_text(oracle.reference_whisper(features, prompt, mels[seed], dim, vocab, eot, seed)))
        return " ".join(t for t in texts if t)

    def agrees(case: tuple[int, str]) -> bool:
        seed, name = case
        return bool(whispers[seed].transcribe(audios[name], "en") == reference(seed, audios[name]))

    cases = [(1, name) for name in sorted(audios)] + [(2, "a tone at 16 kHz"), (3, "a tone at 16 kHz")]
    return bounded(cases, agrees, label="3 weight seeds (one of 128 mel bands); 3 audio classes (16 kHz, resampled 8 kHz, two chunks)")


@law(
    "tiny_kokoro_speech",
    "S9 engine (kokoro.rs)",
    "The speech pipeline's waveform is the NumPy reference's for the lexicon's phonemes, voice row and speed.",
    BOUNDED,
    derivation="S9 engine: misaki lexicon, Kokoro's vocabulary, pieces of at most 510, style row by length; judged by NumPy",
)
def tiny_kokoro_speech() -> Evidence:
    import json
    import shutil
    import tempfile
    from pathlib import Path

    import numpy as np

    from eukhe.tiny.kokoro import VOCAB, Kokoro, SpeechError

    where = Path(tempfile.mkdtemp(prefix="eklaw"))
    oracle.build_kokoro(where / "onnx" / "model.onnx", 5)
    (where / "voices").mkdir()
    # a style row for every piece length up to 510 (row n for n phonemes: 511 rows)
    voice = np.random.default_rng(5).standard_normal((511, 256)).astype("<f4")
    (where / "voices" / "af_heart.bin").write_bytes(voice.tobytes())
    lexicon = {"hello": "həlˈO", "world": "wˈɜɹld", "the": {"DEFAULT": "ðə"}, "Paris": "pˈæɹɪs", "long": "lˈɔŋ" * 60, "longest": "lˈɔŋ" * 130}
    (where / "misaki").mkdir()
    (where / "misaki" / "us_gold.json").write_text(json.dumps(lexicon), encoding="utf-8")
    kokoro = Kokoro.load(where)
    # the oracle's reading of the lexicon: words by table lookup (as written, lower, capitalised)
    # joined by spaces, the vocabulary's punctuation attached to the word before it (with no word
    # before, it has nothing to attach to: dropped), marks that are neither words nor Kokoro's
    # punctuation dropped (no phonemes), cut at spaces into pieces <= 510; a word of more than 510
    # phonemes is cut where it must (after each 510), its rest starting the next piece
    words = {
        "Hello,": "həlˈO,", "the": "ðə", "WORLD!": "wˈɜɹld!", "paris?": "pˈæɹɪs?", "long": "lˈɔŋ" * 60,
        "(hello": "həlˈO", "-": "", "@": "", "'": "", "world.": "wˈɜɹld.", "longest": "lˈɔŋ" * 130,
    }  # fmt: skip

    def expected_pieces(text: str) -> list[list[int]]:
        out: list[list[int]] = []
        for word in text.split():
            ids = [VOCAB[c] for c in words[word]]
            if not ids:
                continue
            if out and len(out[-1]) + 1 + len(ids) <= 510:
                out[-1] += [VOCAB[" "], *ids]
                continue
            while len(ids) > 510:
                out.append(ids[:510])
                ids = ids[510:]
            out.append(ids)
        return out

    def agrees(case: tuple[str, float]) -> bool:
        text, speed = case
        want = [oracle.reference_kokoro(p, voice[len(p)], speed, 5) for p in expected_pieces(text)]
        got = kokoro.speak(text, "af_heart", speed).samples
        return got.shape == (sum(len(w) for w in want),) and bool(np.allclose(got, np.concatenate(want) if want else got, rtol=1e-5, atol=1e-5))

    def refused(text: str) -> bool:
        try:
            kokoro.speak(text, "af_heart", 1.0)
        except SpeechError:
            return True
        return False

    def broken(name: str) -> bool:
        """A model dir or request the speech engine refuses, with an error naming the cause."""
        bad = where.parent / f"{where.name}-{name.replace(' ', '-')}"
        shutil.copytree(where, bad)
        try:
            if name == "a graph that is not ONNX":
                (bad / "onnx" / "model.onnx").write_bytes(b"not a graph")
                Kokoro.load(bad)
            elif name == "a graph of another signature":
                oracle.build(bad / "onnx" / "model.onnx", 16, 4, 5)  # a text model's graph: input_ids alone
                Kokoro.load(bad)
            elif name == "two graphs":
                shutil.copy(bad / "onnx" / "model.onnx", bad / "onnx" / "other.onnx")
                Kokoro.load(bad)
            elif name == "a lexicon that is not JSON":
                (bad / "misaki" / "us_gold.json").write_text("{", encoding="utf-8")
                Kokoro.load(bad)
            elif name == "a lexicon that is not an object":
                (bad / "misaki" / "us_gold.json").write_text("[]", encoding="utf-8")
                Kokoro.load(bad)
            elif name == "a voice file of no whole rows":
                (bad / "voices" / "af_heart.bin").write_bytes(b"\0" * 100)
                Kokoro.load(bad).speak("hello", "af_heart", 1.0)
            elif name == "an absent voice":
                kokoro.speak("hello", "af_nobody", 1.0)
            elif name == "a voice name with a slash":
                kokoro.speak("hello", "../af_heart", 1.0)
            elif name == "a hidden voice name":
                (bad / "voices" / ".af_heart.bin").write_bytes(voice.tobytes())
                Kokoro.load(bad).speak("hello", ".af_heart", 1.0)
            elif name == "speed 0":
                kokoro.speak("hello", "af_heart", 0.0)
            elif name == "more phonemes than the voice has styles":
                (bad / "voices" / "af_heart.bin").write_bytes(voice[:4].tobytes())
                Kokoro.load(bad).speak("hello", "af_heart", 1.0)
            else:
                raise LawFailed(f"no case {name}")
        except SpeechError as error:
            return all(word in str(error) for word in CAUSES[name])
        finally:
            shutil.rmtree(bad, ignore_errors=True)
        return False

    CAUSES = {
        "a graph that is not ONNX": ("model.onnx", "cannot load"),
        "a graph of another signature": ("model.onnx", "not the documented signature", "input_ids"),
        "two graphs": ("2 graphs",),
        "a lexicon that is not JSON": ("us_gold.json", "JSON"),
        "a lexicon that is not an object": ("us_gold.json", "object"),
        "a voice file of no whole rows": ("af_heart.bin", "100 bytes"),
        "an absent voice": ("af_nobody.bin",),
        "a voice name with a slash": ("../af_heart",),
        "a hidden voice name": ("bad voice name", ".af_heart"),
        "speed 0": ("speed", "0"),
        "more phonemes than the voice has styles": ("5 phonemes", "at most 3"),
    }

    texts = ("Hello, the WORLD!", "paris?", "", " ".join(["long"] * 4), "the " * 3, "(hello - the @ ' world.", "longest", "the longest the")
    if [len(p) for p in expected_pieces("the longest the")] != [2, 510, 10 + 1 + 2]:  # what the cut cases are about
        raise LawFailed("the oracle's pieces of a word past 510 phonemes are not a cut word")
    return all_of(
        bounded(
            itertools.product(texts, (1.0, 0.5, 1.7)),
            agrees,
            label="8 text classes (punctuation, leading punctuation and bare marks, case, empty, pieces, a word past 510 phonemes, repeats) x 3 speeds",
        ),
        bounded(("zyzzyva", "hello zyzzyva"), refused, label="words in no lexicon are refused"),
        bounded(sorted(CAUSES), broken, label=f"{len(CAUSES)} broken dirs and requests, each refused naming its cause"),
    )


@law(
    "tiny_text_cached",
    "S9 engine (text.rs)",
    "With key/value and conv caches the text runner's logits and greedy tokens are the no-cache NumPy reference's.",
    BOUNDED,
    derivation="S9 engine: the runner over the documented cache signature (past_key_values.*, past_conv.* -> present*)",
)
def tiny_text_cached() -> Evidence:
    import tempfile
    from pathlib import Path

    import numpy as np

    from eukhe.tiny.text import TextRunner

    vocab, dim = 40, 6
    where = Path(tempfile.mkdtemp(prefix="eklaw"))
    runners = {seed: TextRunner(oracle.build_cached(where / f"{seed}.onnx", vocab, dim, seed)) for seed in (1, 2)}
    prompts = ([0], [3, 3, 3], [1, 2, 3, 4, 5, 6, 7], [vocab - 1])

    def agrees(case: tuple[int, list[int]]) -> bool:
        seed, prompt = case
        runner = runners[seed]
        close = np.allclose(runner.logits(prompt), oracle.reference_logits(prompt, vocab, dim, seed), rtol=1e-4, atol=1e-4)
        _, cache = runner.step(prompt, 0, runner.empty)
        after, _ = runner.step([1], len(prompt), cache)  # one cached step: its logits too
        stepped = np.allclose(after, oracle.reference_logits([*prompt, 1], vocab, dim, seed), rtol=1e-4, atol=1e-4)
        return close and stepped and list(runner.generate(prompt, max_tokens=8).ids) == oracle.reference_greedy(prompt, 8, vocab, dim, seed)

    return bounded(itertools.product(sorted(runners), prompts), agrees, label="2 weight seeds x 4 prompts (edge ids included), 8 cached greedy steps")


@law(
    "tiny_wav_round_trip",
    "S9 Dictation 3, Uses (say --out)",
    "A written WAV reads back as its samples clipped to [-1, 1] within one 16-bit step, NaN as silence, at its rate.",
    BOUNDED,
    derivation="S9: WAV in and out (recorders' 16 kHz mono 16-bit; speech written as WAV)",
)
def tiny_wav_round_trip() -> Evidence:
    import numpy as np

    from eukhe.tiny.audio import Audio, AudioError, read_wav, write_wav

    classes = {
        "empty": [],
        "zeros": [0.0] * 5,
        "full scale": [1.0, -1.0],
        "over full scale": [3.0, -7.5],
        "non-finite": [float("nan"), float("inf"), float("-inf")],
        "small": [1e-6, -1e-6, 0.5 / 32768],
        "a tone": list(_tone(440, 0.01)),
    }

    def agrees(case: tuple[str, int]) -> bool:
        name, rate = case
        values = np.array(classes[name], dtype=np.float64)
        want = np.clip(np.nan_to_num(values, nan=0.0, posinf=1.0, neginf=-1.0), -1, 1) * 32767 / 32768
        back = read_wav(write_wav(Audio(values.astype(np.float32), rate)))
        return back.rate == rate and back.samples.shape == want.shape and bool(np.all(np.abs(back.samples - want) <= 1 / 32768))

    def pcm(width: int, channels: int, frames: list[list[int]]) -> bytes:
        import io
        import wave

        dtype = {1: "u1", 2: "<i2", 4: "<i4"}.get(width, "u1")
        raw = np.array(frames, dtype=dtype).tobytes() if width in (1, 2, 4) else bytes(width * channels * len(frames))
        out = io.BytesIO()
        with wave.open(out, "wb") as w:
            w.setnchannels(channels)
            w.setsampwidth(width)
            w.setframerate(16000)
            w.writeframes(raw)
        return out.getvalue()

    # WAV PCM (unsigned 8-bit with 128 as zero; signed 16 and 32-bit), channels averaged
    full = {1: 128, 2: 32768, 4: 2**31}
    reads = {
        "8-bit stereo": (1, [[128, 255], [0, 128]]),
        "16-bit mono": (2, [[-32768], [16384]]),
        "32-bit stereo": (4, [[2**30, -(2**30)], [-(2**31), 2**31 - 1]]),
    }

    def read_agrees(name: str) -> bool:
        width, frames = reads[name]
        zero = 128 if width == 1 else 0
        want = [sum((v - zero) / full[width] for v in frame) / len(frame) for frame in frames]
        got = read_wav(pcm(width, len(frames[0]), frames))
        return got.rate == 16000 and bool(np.allclose(got.samples, want, atol=1e-6))

    def refused(data: bytes) -> bool:
        try:
            read_wav(data)
        except AudioError:
            return True
        return False

    return all_of(
        bounded(itertools.product(sorted(classes), (8000, 16000, 24000)), agrees, label="7 sample classes x 3 rates"),
        bounded(sorted(reads), read_agrees, label="reads of 8-bit stereo, 16-bit mono, 32-bit stereo PCM"),
        bounded((pcm(3, 1, [[0]] * 2), b"RIFF", b""), refused, label="24-bit PCM, a truncated header and no bytes are refused"),
    )


# ------------------------------------------------------------------- the worker's answers


def _worker_requests(wav: str) -> dict[str, bytes]:
    import json

    def line(message: object) -> bytes:
        return json.dumps(message).encode() + b"\n"

    return {
        "ping": line({"op": "ping"}),
        "load": line({"op": "load"}),
        "chat": line({"op": "chat", "messages": [{"role": "user", "content": "one"}]}),
        "chat without messages": line({"op": "chat"}),
        "chat with a negative max_tokens": line({"op": "chat", "messages": [], "max_tokens": -1}),
        "transcribe a WAV": line({"op": "transcribe", "audio": wav, "language": "en"}),
        "transcribe bytes that are not a WAV": line({"op": "transcribe", "audio": "bm90IGEgd2F2"}),
        "transcribe audio that is not base64": line({"op": "transcribe", "audio": "%%"}),
        "transcribe without audio": line({"op": "transcribe"}),
        "speak": line({"op": "speak", "text": "hi", "voice": "af_heart", "speed": 1.5}),
        "speak at speed 0": line({"op": "speak", "text": "hi", "speed": 0}),
        "speak at a boolean speed": line({"op": "speak", "text": "hi", "speed": True}),
        "speak without text": line({"op": "speak"}),
        "an unknown op": line({"op": "sing"}),
        "a line that is not JSON": b"{not json\n",
        "a JSON line that is not an object": b"[1, 2]\n",
    }


@law(
    "tiny_worker_answers_in_order",
    "S9 worker 6",
    "A worker answers each request line once, in order, with the answer its class has (ok or the error kind).",
    BOUNDED,
    derivation="S9 worker 6 on production (eukhe.tiny.worker serving in this process, the echo engine), judged by the oracle's table",
)
def tiny_worker_answers_in_order() -> Evidence:
    import base64
    import json
    import socket
    import tempfile
    import threading
    from pathlib import Path

    import numpy as np

    from eukhe.tiny import paths, protocol
    from eukhe.tiny.audio import Audio, write_wav
    from eukhe.tiny.worker import Worker

    agent = Path(tempfile.mkdtemp(prefix="ekl", dir="/tmp"))
    where = paths.model_dir(agent, "echo")
    where.mkdir(parents=True)
    (where / "engine.json").write_text(json.dumps({"kind": "echo"}), encoding="utf-8")
    wav = base64.b64encode(write_wav(Audio(np.zeros(160, np.float32), 16000))).decode()
    requests = _worker_requests(wav)
    if set(requests) != set(oracle.WORKER_ANSWERS):
        raise LawFailed("the law's requests are not the oracle's request classes")
    worker = Worker(agent, "echo", "cpu", "q4", 600000)
    if not worker.take_seat():
        raise LawFailed("a fresh run dir had a live worker")
    serving = threading.Thread(target=worker.serve_forever, daemon=True)
    serving.start()

    def kind(answer: dict[str, Any] | None) -> str:
        if answer is None:
            return "none"
        if answer.get("ok") is True:
            return "ok"
        if answer.get("ok") is not False or not isinstance(answer.get("detail"), str) or not answer["detail"]:
            return f"an error without ok false and its detail: {answer!r}"
        return str(answer.get("error"))

    def answers(order: tuple[str, ...]) -> list[str]:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.connect(str(paths.socket_path(agent, "echo")))
            sock.sendall(b"".join(requests[name] for name in order))  # all at once: answered in order
            reader = protocol.LineReader(sock)
            got = []
            for _ in order:
                line = reader.read()
                got.append(kind(protocol.decode(line) if isinstance(line, bytes) else None))
            return got

    names = tuple(sorted(requests))
    orders = [names, names[::-1], tuple(n for n in names if n.startswith(("chat", "speak"))) * 2]

    def agrees(order: tuple[str, ...]) -> bool:
        return answers(order) == [oracle.WORKER_ANSWERS[name] for name in order]

    def names_the_wav(_: object) -> bool:
        """A transcription of bytes that are not a WAV is refused saying so (the detail is the
        reader's own error, never a placeholder)."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.connect(str(paths.socket_path(agent, "echo")))
            sock.sendall(requests["transcribe bytes that are not a WAV"])
            line = protocol.LineReader(sock).read()
        answer = protocol.decode(line) if isinstance(line, bytes) else None
        return answer is not None and "WAV" in str(answer.get("detail")) and "RIFF" in str(answer.get("detail"))

    try:
        classes = bounded(orders, agrees, label=f"{len(names)} request classes on one connection, in 3 orders (sorted, reversed, repeated)")
        classes = all_of(classes, bounded((None,), names_the_wav, label="bytes that are not a WAV: the detail names the WAV's fault"))
        missing = Worker(agent, "absent", "cpu", "q4", 600000)

        def not_installed(op: str) -> bool:
            return bool(missing._run(op, {"op": op})["error"] == "not_installed")

        absent = bounded(("load", "chat", "transcribe", "speak"), not_installed, label="every engine op of a model that is not installed")
        # a model whose engine lacks an op (a speech-to-text model asked to chat or speak) answers
        # unsupported, and still serves the op it has
        hearing = paths.model_dir(agent, "hears")
        oracle.build_whisper(hearing, 80, 4, 262, 256, 1)
        (hearing / "tokenizer.json").write_text(json.dumps(oracle.whisper_tokenizer_document()), encoding="utf-8")
        (hearing / "engine.json").write_text(json.dumps({"kind": "whisper"}), encoding="utf-8")
        hears = Worker(agent, "hears", "cpu", "q4", 600000)
        lacking = {"chat": "unsupported", "speak": "unsupported", "load": "ok", "transcribe": "ok"}

        def engine_ops(op: str) -> bool:
            request = json.loads(requests["transcribe a WAV"]) if op == "transcribe" else {"op": op, "messages": [], "text": "hi"}
            return kind(hears._run(op, request)) == lacking[op]

        unsupported = bounded(sorted(lacking), engine_ops, label="each op of a model whose engine lacks chat and speak")

        def over_limit(after: str) -> bool:
            """S9 worker 6: a request line longer than 256 MiB is answered bad_request, its bytes
            discarded; the next line is answered as usual."""
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.connect(str(paths.socket_path(agent, "echo")))
                reader = protocol.LineReader(sock)
                chunk = b"x" * (1 << 20)
                sent = 0
                while sent <= protocol.LINE_LIMIT:
                    sock.sendall(chunk)
                    sent += len(chunk)
                sock.sendall(b"\n" + requests[after])
                first, second = reader.read(), reader.read()
                decoded = [protocol.decode(x) if isinstance(x, bytes) else None for x in (first, second)]
                return [kind(d) for d in decoded] == ["bad_request", oracle.WORKER_ANSWERS[after]]

        limit = bounded(("ping",), over_limit, label="a line over 256 MiB, then a ping on the same connection")
        early = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        early.connect(str(paths.socket_path(agent, "echo")))
        early.sendall(requests["ping"])
        early_reader = protocol.LineReader(early)
        early_reader.read()
        worker.close()  # as a shutdown does: the socket goes, requests on open connections are refused

        def refused(name: str) -> bool:
            """S9 worker 3: a closing worker refuses new requests (a ping included) with closing."""
            early.sendall(requests[name])
            line = early_reader.read()
            return protocol.decode(line) == {"ok": False, "error": "closing"} if isinstance(line, bytes) else False

        closing = bounded(("ping", "chat", "load"), refused, label="ping, chat and load on a connection opened before the worker began closing")
        early.close()
    finally:
        worker.close()
        serving.join(timeout=60)
    return all_of(classes, absent, unsupported, limit, closing)


# ---------------------------------------------------------------------------- recorders


def _recorder_dir(root: Any, present: tuple[bool, ...], body: str) -> Any:
    where = root / "".join("1" if p else "0" for p in present)
    where.mkdir(parents=True, exist_ok=True)
    for name, here in zip(oracle.RECORDER_ORDER, present):
        if here:
            script = where / name
            script.write_text(f"#!/bin/sh\n{body.replace('NAME', name)}\n", encoding="utf-8")
            script.chmod(0o755)
    return where


PRESENT = tuple(
    Bound(f"{name} in the one directory on PATH", (False, True), bound="one PATH directory of shell scripts")
    for name in ("pw-record", "parec", "arecord")
)


class _Found(Opaque):
    """A path which(1) found: true, passed on, otherwise unread."""

    def __bool__(self) -> bool:
        return True


class _Which:
    """shutil and os for find_recorder, abstracted: which(1) finds exactly the programs of the case
    on the PATH the case gives (any PATH: an opaque token), the environment's PATH when none."""

    def __init__(self) -> None:
        self.path: object = None
        self.found: dict[str, _Found] = {}
        self.environ = self  # os.environ.get

    def get(self, key: str, default: object = None) -> object:
        if key != "PATH":
            raise LawFailed(f"find_recorder read the environment's {key}")
        return self.path

    def which(self, name: str, path: object = None) -> object:
        if path is not self.path:
            raise LawFailed(f"find_recorder looked {name} up on {path!r}, not on its PATH {self.path!r}")
        return self.found.get(name)


FOUND = Finite("what which(1) finds on PATH (each of the 3 programs found or not: every outcome)", tuple(itertools.product((False, True), repeat=3)))
PATHS = Finite("PATH (given, an opaque token: any; or none: the environment's)", ("given", "environment"))


def _find_recorder_proof() -> Evidence:
    """find_recorder's own code for every PATH and every outcome of which(1) (spec.proofs.callees)."""
    from eukhe.tiny import recorder
    from eukhe.tiny.recorder import RecorderError

    find = recorder.find_recorder
    stub = _Which()

    def agrees(present: tuple[bool, ...], given: str) -> bool:
        stub.path = Opaque("a PATH")
        stub.found = {name: _Found(f"{name} found") for name, here in zip(oracle.RECORDER_ORDER, present) if here}
        want = next((n for n, p in zip(oracle.RECORDER_ORDER, present) if p), None)
        with callees(recorder, shutil=stub, os=stub):
            try:
                got = find(cast(Any, stub.path) if given == "given" else None)
            except RecorderError as error:
                return want is None and all(n in str(error) for n in oracle.RECORDER_ORDER)
        program: object = got.argv[0]
        return want is not None and got.program == want and program is stub.found[want]

    return exhaust(domain(FOUND, PATHS), agrees, about=[find])


@law(
    "tiny_recorder_first_on_path",
    "S9 Dictation 3",
    "The recorder is the first of pw-record, parec, arecord on PATH; with none, the take fails and names them.",
    PROVED,
    derivation="S9 Dictation 3 on production (eukhe.tiny.recorder.find_recorder): its own code for every outcome of which(1), and on real PATH directories",
)
def tiny_recorder_first_on_path() -> Evidence:
    import tempfile
    from pathlib import Path

    from eukhe.tiny.recorder import RecorderError, find_recorder

    root = Path(tempfile.mkdtemp(prefix="eklaw"))

    def agrees(*present: bool) -> bool:
        where = _recorder_dir(root, present, "exit 0")
        want = next((n for n, p in zip(oracle.RECORDER_ORDER, present) if p), None)
        try:
            got = find_recorder(str(where))
        except RecorderError as error:
            return want is None and all(n in str(error) for n in oracle.RECORDER_ORDER)
        return got.program == want and got.argv[0] == str(where / want)

    return also(_find_recorder_proof(), exhaust(domain(*PRESENT), agrees))


@law(
    "tiny_recorder_take",
    "S9 Dictation 3",
    "A take's WAV holds the recorder's 16 kHz mono 16-bit output; a failing or silent recorder fails the take with its stderr.",
    BOUNDED,
    derivation="S9 Dictation 3 on production (eukhe.tiny.recorder.Take) with /bin/sh recorders",
)
def tiny_recorder_take() -> Evidence:
    import os
    import signal
    import tempfile
    import time
    import wave
    from pathlib import Path

    from eukhe.tiny.recorder import RecorderError, Take, find_recorder

    root = Path(tempfile.mkdtemp(prefix="eklaw"))
    # (script body, what the take gives: the PCM bytes, or the error's expected words)
    cases = {
        "two samples": ("printf 'abcd'", b"abcd"),
        "an odd byte dropped": ("printf 'abcde'", b"abcd"),
        "a failure with stderr": ("echo 'device busy' >&2; exit 3", "device busy"),
        "no audio": ("echo 'nothing' >&2; exit 0", "recorded no audio"),
        # S9 Dictation 2, 5: a take ends at the key (SIGINT) or is cancelled (Esc stops the recorder)
        "stopped by SIGINT": ("trap 'exit 0' INT; printf 'abcd'; : > UP; while :; do sleep 0.05; done", b"abcd"),
        "a recorder that ignores SIGINT": ("trap '' INT; : > UP; exec sleep 30", "did not end within 0.5 s of SIGINT (killed)"),
        "cancelled mid-take": ("printf 'abcd'; : > UP; exec sleep 30", "cancelled"),
    }

    def agrees(name: str) -> bool:
        body, want = cases[name]
        here = root / name.replace(" ", "-")
        up = here / "up"  # written by the recorder once it records (its SIGINT trap is set)
        where = _recorder_dir(here, (False, True, True), body.replace("UP", str(up)))
        # The stand-in recorders are shell scripts, which cannot trap a signal ignored when they
        # start (as SIGINT is under a run put in the background of a non-interactive shell); real
        # recorders install their own handler. So they start with SIGINT handled here, which exec
        # turns into the default.
        handled = signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            take = Take(find_recorder(str(where)))
        finally:
            signal.signal(signal.SIGINT, handled)
        interrupt = "SIGINT" in name or name.startswith("cancelled")
        if interrupt:
            for _ in range(2000):
                if up.exists():
                    break
                time.sleep(0.005)
        if name.startswith("cancelled"):
            take.cancel()
            return take.process.poll() is not None  # the recorder is stopped and reaped
        try:
            wav = take.stop(interrupt=interrupt, deadline=0.5 if "ignores" in name else 10.0)
        except RecorderError as error:
            return isinstance(want, str) and want in str(error) and "parec" in str(error)  # the first, no next program
        try:
            with wave.open(str(wav), "rb") as read:
                shape = (read.getnchannels(), read.getsampwidth(), read.getframerate())
                return shape == (1, 2, 16000) and read.readframes(read.getnframes()) == want
        finally:
            os.unlink(wav)

    return bounded(
        sorted(cases),
        agrees,
        label="7 recorder behaviours (audio, odd byte, failure with stderr, no audio, stopped by SIGINT, deaf to SIGINT, cancelled)",
    )


# ------------------------------------------------------------------ uses on production


@law(
    "tiny_translate_recipe",
    "S9 Translation",
    "A translation request is the new recipe: the user turn, the <Language>: prefill, one-line text stopping at the first line end.",
    BOUNDED,
    derivation="S9 Translation on production (eukhe.tiny.tasks.translate_request), judged by the oracle's reading of the recipe",
)
def tiny_translate_recipe() -> Evidence:
    from eukhe.tiny import tasks

    languages = (*tasks.EVAL_LANGUAGES, "Ελληνικά", "")
    texts = ("hello", "Where is the station?", "two\nlines", "trailing newline\n", "", "\n", "ünïcødé 🙂", "a\r\nb")

    def agrees(case: tuple[str, str]) -> bool:
        language, text = case
        turn, prefill, one_line = oracle.translation_turn(language, text)
        got = tasks.translate_request(language, text)
        return got.messages == [{"role": "user", "content": turn}] and got.prefill == prefill and (got.stop == ["\n"]) == one_line and (one_line or got.stop == [])

    return bounded(itertools.product(languages, texts), agrees, label="6 language names (eval, Greek, empty) x 8 text classes (lines, empty, unicode, CRLF)")


@law(
    "tiny_eval_scores",
    "S9 Eval",
    "The eval counts replies equal to the input as echoes and scores chrF (0 to 100) against the one reference.",
    BOUNDED,
    derivation="S9 Eval on production (eukhe.tiny.tasks.chrf, eukhe.tiny.uses.run_eval), judged by the oracle's chrF",
)
def tiny_eval_scores() -> Evidence:
    from eukhe.tiny import tasks, uses

    pairs = [(h, r) for r in ("Hallo", "Wo ist der Bahnhof?", "À demain.", "") for h in ("Hallo", "hallo", "Wo ist der Bahnhof", "Où est", "", "x", "Bis morgen.")]

    def chrf_agrees(pair: tuple[str, str]) -> bool:
        return abs(tasks.chrf(*pair) - oracle.reference_chrf(*pair)) < 1e-9

    replies: dict[str, Callable[[str, str], str]] = {
        "the references": lambda lang, s: f"{lang}: {uses.EVAL_REFERENCES[lang][tasks.EVAL_SENTENCES.index(s)]}",
        "echoes with a second line": lambda lang, s: f"{lang}: {s}\nmore",
        "echoes without the prefill": lambda lang, s: s,
        "empty replies": lambda lang, s: "",
        "half echoes": lambda lang, s: s if tasks.EVAL_SENTENCES.index(s) % 2 else "nein",
    }

    def eval_agrees(name: str) -> bool:
        reply_of = replies[name]
        got = uses.run_eval(reply_of)
        for language in tasks.EVAL_LANGUAGES:
            bodies = [reply_of(language, s).removeprefix(f"{language}:").strip().split("\n")[0].strip() for s in tasks.EVAL_SENTENCES]
            echoes = sum(b == s for b, s in zip(bodies, tasks.EVAL_SENTENCES))
            score = sum(oracle.reference_chrf(b, r) for b, r in zip(bodies, uses.EVAL_REFERENCES[language])) / len(bodies)
            if got[language]["echoes"] != echoes or abs(got[language]["chrf"] - score) > 1e-9:
                return False
        return set(got) == set(tasks.EVAL_LANGUAGES)

    def eval_requests(model_id: str) -> bool:
        """The eval on a local model (eukhe.tiny.uses.eval_on_local) against a scripted worker
        that records its requests: 40 greedy chats, each stopping at the first line end."""
        import json
        import socket
        import tempfile
        import threading
        from pathlib import Path

        from eukhe.tiny import paths, protocol
        from eukhe.tiny.worker import launch_tag

        agent = Path(tempfile.mkdtemp(prefix="ekl", dir="/tmp"))
        paths.ensure_run_dir(agent)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(paths.socket_path(agent, model_id)))
        listener.listen(4)
        seen: list[dict[str, Any]] = []

        def serve() -> None:
            conn, _ = listener.accept()
            with conn:
                reader = protocol.LineReader(conn)
                while isinstance(line := reader.read(), bytes):
                    request = protocol.decode(line) or {}
                    answer = {"ok": True, "tag": launch_tag("cpu", "q4"), "pid": 1} if request.get("op") == "ping" else {"ok": True, "text": "Hallo"}
                    if request.get("op") != "ping":
                        seen.append(request)
                    conn.sendall(json.dumps(answer).encode() + b"\n")

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        try:
            uses.eval_on_local(agent, model_id)
        finally:
            thread.join(timeout=60)
            listener.close()
        stops = [r.get("stop") for r in seen]
        return len(seen) == 40 and all(r.get("op") == "chat" for r in seen) and all(isinstance(x, list) and "\n" in x for x in stops)

    return all_of(
        bounded(pairs, chrf_agrees, label="7 hypotheses x 4 references (equal, case, partial, other, empty)"),
        bounded(sorted(replies), eval_agrees, label="5 reply classes over the 10 sentences x 4 languages"),
        bounded(("m",), eval_requests, label="the eval's 40 requests to a local model's worker stop at the first line end"),
    )


@law(
    "tiny_uses_end_to_end",
    "S9 Uses",
    "translate, titles, speech, dictation and the eval reach the role's model through a worker and read its answers.",
    BOUNDED,
    derivation="S9 Uses on production (eukhe.tiny.uses with an in-process worker of the echo engine), judged by the echo engine's stated answers",
)
def tiny_uses_end_to_end() -> Evidence:
    import json
    import tempfile
    import threading
    from pathlib import Path

    from eukhe.tiny import catalog, paths, roles, tasks, uses
    from eukhe.tiny.audio import read_wav
    from eukhe.tiny.settings import TinySettings
    from eukhe.tiny.worker import Worker

    agent = Path(tempfile.mkdtemp(prefix="ekl", dir="/tmp"))
    workers = []
    for model_id in ("lfm2.5-230m", "kokoro", "whisper-base"):
        model = catalog.find(model_id)
        for f in model.files:
            target = paths.model_dir(agent, model_id) / f.path
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "wb") as out:
                out.truncate(f.size or 1)
        (paths.model_dir(agent, model_id) / "engine.json").write_text(json.dumps({"kind": "echo"}), encoding="utf-8")
        worker = Worker(agent, model_id, "cpu", model.dtype, 600000)
        worker.take_seat()
        thread = threading.Thread(target=worker.serve_forever, daemon=True)
        thread.start()
        workers.append((worker, thread))

    def translate_echoes(text: str) -> bool:
        try:
            uses.translate(agent, "German", text, settings=TinySettings())
        except tasks.TranslationError as error:
            return type(error).__name__ == oracle.translation_verdict("German", text, oracle.echo_chat(oracle.translation_turn("German", text)[0], "German:"))
        return oracle.translation_verdict("German", text, oracle.echo_chat(oracle.translation_turn("German", text)[0], "German:")) == "ok"

    def speech_round_trip(text: str) -> bool:
        wav = uses.speak(agent, text, settings=TinySettings())
        audio = read_wav(wav)
        return audio.rate == 24000 and len(audio.samples) == 100 * len(text) and uses.transcribe(agent, wav) == f"{100 * len(text)} samples at 24000 Hz"

    def titled(message: str) -> bool:
        got: list[str | None] = []
        thread = uses.start_title(agent, message, got.append, settings=TinySettings())
        if thread is None:
            return False
        thread.join()
        # the echo engine answers with the prompt: the title is the reply's first line, at most 80
        # characters (judged here on the reply, not through uses.parse_title, the function checked)
        reply = oracle.echo_chat(uses.TITLE_PROMPT + message, "")
        return got == [reply.split("\n", 1)[0][:80]]

    def untitled(case: str) -> bool:
        """S9 Titles: titles.generate false, a scripted session, a child session and a session the
        user named start no title; a failure (here: no model for the role, in an empty agent dir)
        gives none."""
        got: list[str | None] = []
        flags = {
            "titles.generate false": {"generate": False},
            "a scripted session": {"scripted": True},
            "a child session": {"top_level": False},
            "a session the user named": {"named": True},
        }
        if case == "no model for the role":
            empty = Path(tempfile.mkdtemp(prefix="ekl", dir="/tmp"))
            thread = uses.start_title(empty, "fix the build", got.append, settings=TinySettings())
            if thread is None:
                return False
            thread.join()
            return got == [None]
        flag: dict[str, Any] = flags[case]
        return uses.start_title(agent, "fix the build", got.append, settings=TinySettings(), **flag) is None and got == []

    def unavailable(role: str) -> bool:
        try:
            uses.resolve(role, agent, primary="absent", fallback=())
        except roles.Unavailable as error:
            return error.role == role and error.candidates == ("absent",)
        return False

    def explicit_chain(_: object) -> bool:
        """S9 roles 1: an explicit [] fallback is the primary only, also for translate's own
        call (never the installed catalog models)."""
        try:
            uses.translate(agent, "German", "hello", primary="absent", fallback=(), settings=TinySettings())
        except roles.Unavailable as error:
            return error.role == "translate" and error.candidates == ("absent",)
        return False

    def configured(role: str) -> bool:
        """S9 roles 1: the chain is modelRoles.<role>, then retry.fallbackChains.<role>: a chain of
        models that are not installed is Unavailable, naming it."""
        settings = TinySettings(primaries={role: "absent"}, chains={role: ("gone",)})
        try:
            if role == "speech":
                uses.speak(agent, "hi", settings=settings)
            else:
                uses.transcribe(agent, uses.speak(agent, "hi", settings=TinySettings()), settings=settings)
        except roles.Unavailable as error:
            return error.role == role and error.candidates == ("absent", "gone")
        return False

    try:
        evaluated = uses.eval_on_local(agent, "lfm2.5-230m")
        parts = [
            bounded(("hello", "Where is the station?", "1984", "two\nlines"), translate_echoes, label="4 texts (letters, question, letterless, two lines) echoed"),
            bounded(("hi", "Hello, world!", "ünïcødé"), speech_round_trip, label="3 texts spoken and read back"),
            bounded(("fix the build", "\"Title: quoted\"", "line one\nline two"), titled, label="3 first messages titled in the background"),
            bounded(
                ("titles.generate false", "a scripted session", "a child session", "a session the user named", "no model for the role"),
                untitled,
                label="4 sessions that get no title task, and a title that fails (none)",
            ),
            bounded(tuple(sorted(oracle.ROLE_CATALOG)), unavailable, label="every role's Unavailable names the role and the chain"),
            bounded((evaluated,), lambda e: all(e[lang]["echoes"] == 10 for lang in tasks.EVAL_LANGUAGES), label="the eval on the echo model: 40 echoes"),
            bounded((None,), lambda _: uses.judge_model(agent, settings=TinySettings()) == "local/lfm2.5-230m", label="the judge's classifier is the installed local model"),
            bounded(("speech", "dictation"), configured, label="speech and dictation follow modelRoles and fallbackChains of the settings"),
            bounded((None,), explicit_chain, label="translate with an explicit [] fallback is its primary only"),
        ]
    finally:
        for worker, thread in workers:
            worker.close()
            thread.join(timeout=60)
    return all_of(*parts)


@law(
    "tiny_settings_read",
    "S9 roles 1, Uses; control.md S4b",
    "The tiny settings are the settings.json values of modelRoles.<role>, retry.fallbackChains.<role> and titles.generate; malformed values are unset.",
    BOUNDED,
    derivation="S9 roles 1 on production (eukhe.tiny.settings through eukhe.settings), judged by the oracle's reading of the document",
)
def tiny_settings_read() -> Evidence:
    import json
    import tempfile
    from pathlib import Path

    from eukhe.tiny.settings import TinySettings

    root = Path(tempfile.mkdtemp(prefix="eklaw"))
    roles_table = ("tiny", "translate")  # the roles the cvar table declares modelRoles for
    primaries = (None, "", "lfm2.5-350m", 5)
    chains: tuple[object, ...] = (None, [], ["a", "b"], "not a list")
    titles = (None, True, False, "yes")

    def agrees(case: tuple[str, object, object, object]) -> bool:
        role, primary, chain, generate = case
        document: dict[str, Any] = {}
        if primary is not None:
            document["modelRoles"] = {role: primary}
        if chain is not None:
            document["retry"] = {"fallbackChains": {role: chain}}
        if generate is not None:
            document["titles"] = {"generate": generate}
        where = root / str(abs(hash(json.dumps([role, primary, chain, generate]))))
        where.mkdir()
        (where / "settings.json").write_text(json.dumps(document), encoding="utf-8")
        got = TinySettings.load(where)
        want_primary = primary if isinstance(primary, str) and primary else None
        want_chain = tuple(chain) if isinstance(chain, list) else None
        want_titles = generate if isinstance(generate, bool) else True
        return got.primary(role) == want_primary and got.fallback(role) == want_chain and got.titles == want_titles

    return bounded(
        itertools.product(roles_table, primaries, chains, titles),
        agrees,
        label="2 declared roles x 4 primaries (unset, empty, a name, a number) x 4 chains (unset, [], a list, a string) x 4 titles values",
    )


@law(
    "tiny_tokenizer_settings",
    "S9 engine (tokenizer.rs)",
    "The tokenizer loads byte-level BPE with added tokens, a pre-tokenizer regex and ranked merges; any other setting fails to load.",
    BOUNDED,
    derivation="S9 engine: 'other settings → load fails', on production (eukhe.tiny.tokenizer), at every depth of the document",
)
def tiny_tokenizer_settings() -> Evidence:
    from eukhe.tiny.tokenizer import Tokenizer, TokenizerError

    def loads(name: str) -> bool:
        path, value = oracle.TOKENIZER_ACCEPTED[name]
        tokenizer = Tokenizer.from_document(oracle.tokenizer_variant(path, value))
        return tokenizer.decode(tokenizer.encode("ab")) == "ab"

    def refused(name: str) -> bool:
        path, value = oracle.TOKENIZER_REFUSED[name]
        try:
            Tokenizer.from_document(oracle.tokenizer_variant(path, value))
        except TokenizerError:
            return True
        return False

    return all_of(
        bounded(sorted(oracle.TOKENIZER_ACCEPTED), loads, label=f"{len(oracle.TOKENIZER_ACCEPTED)} supported variants load"),
        bounded(sorted(oracle.TOKENIZER_REFUSED), refused, label=f"{len(oracle.TOKENIZER_REFUSED)} other settings at every depth fail to load"),
    )


SOURCE_STATES = ("unset", "file", "missing")


@law(
    "tiny_runtime_library_order",
    "S9 engine",
    "The runtime library is providers.tinyRuntimeLibrary, else ORT_DYLIB_PATH, else libonnxruntime.so; a named file that is absent is refused.",
    BOUNDED,
    derivation="S9 engine's resolution order on production (eukhe.tiny.text.runtime_library) over the states we chose of both sources",
)
def tiny_runtime_library_order() -> Evidence:
    import tempfile
    from pathlib import Path

    from eukhe.tiny.text import DEFAULT_LIBRARY, TextError, runtime_library

    where = Path(tempfile.mkdtemp(prefix="eklaw"))
    present = {"setting": where / "libsetting.so", "env": where / "libenv.so"}
    for f in present.values():
        f.write_bytes(b"")

    def value(source: str, state: str) -> str | None:
        return {"unset": None, "file": str(present[source]), "missing": str(where / f"absent-{source}.so")}[state]

    def agrees(setting: str, env: str) -> bool:
        want = oracle.runtime_library_choice(setting, env)
        environment = {} if env == "unset" else {"ORT_DYLIB_PATH": value("env", env) or ""}
        try:
            got = runtime_library(value("setting", setting), environment)
        except TextError:
            return want == "refused"
        return got == (DEFAULT_LIBRARY if want == "default" else str(present.get(want, "")))

    chosen = "each source unset, naming a file that exists, or naming one that does not (an empty value and the process environment not taken)"
    return exhaust(domain(Bound("providers.tinyRuntimeLibrary", SOURCE_STATES, bound=chosen), Bound("ORT_DYLIB_PATH", SOURCE_STATES, bound=chosen)), agrees)


@law(
    "tiny_engine_kinds",
    "S9 worker 6, engine",
    "An installed model dir loads the engine its engine.json names, answering that kind's ops; anything else fails to load.",
    BOUNDED,
    derivation="S9 on production (eukhe.tiny.engine.load) over every engine kind and every broken dir class",
)
def tiny_engine_kinds() -> Evidence:
    import json
    import shutil
    import tempfile
    from pathlib import Path

    import numpy as np

    from eukhe.tiny import engine

    root = Path(tempfile.mkdtemp(prefix="eklaw"))

    def install(name: str, kind: str, broken: bool) -> Path:
        where = root / name
        where.mkdir()
        (where / "engine.json").write_text(json.dumps({"kind": kind}), encoding="utf-8")
        if kind == "onnx-text":
            tokenizer = oracle.tokenizer_document()
            (where / "tokenizer.json").write_text(json.dumps(tokenizer), encoding="utf-8")
            (where / "onnx").mkdir()
            oracle.build(where / "onnx" / "model_q4.onnx" if not broken else where / "unused.onnx", 4, 4, 1)
        elif kind == "whisper":
            oracle.build_whisper(where, 80, 4, 262, 256, 1)
            if broken:
                (where / "onnx" / "encoder_model.onnx").write_bytes(b"not a graph")
            (where / "tokenizer.json").write_text(json.dumps(oracle.whisper_tokenizer_document()), encoding="utf-8")
        elif kind == "kokoro":
            oracle.build_kokoro(where / "onnx" / "model.onnx", 1)
            (where / "voices").mkdir()
            (where / "voices" / "af_heart.bin").write_bytes(np.zeros((4, 256), "<f4").tobytes())
            if not broken:
                (where / "misaki").mkdir()
                (where / "misaki" / "us_gold.json").write_text("{}", encoding="utf-8")
        return where

    def loads(kind: str) -> bool:
        loaded = engine.load(install(f"ok-{kind}", kind, False))
        ops = {op for op in ("chat", "transcribe", "speak") if hasattr(loaded, op)}
        return ops == oracle.ENGINE_OPS[kind]

    def fails(name: str) -> bool:
        if name in oracle.ENGINE_OPS:
            where = install(f"broken-{name}", name, True)
        else:
            where = root / name.replace(" ", "-")
            where.mkdir()
            if name == "engine.json not JSON":
                (where / "engine.json").write_text("{", encoding="utf-8")
            elif name == "engine.json not an object":
                (where / "engine.json").write_text("[]", encoding="utf-8")
            elif name == "an unknown kind":
                (where / "engine.json").write_text(json.dumps({"kind": "gguf"}), encoding="utf-8")
        try:
            engine.load(where)
        except engine.EngineError:
            return True
        return False

    broken = ("no engine.json", "engine.json not JSON", "engine.json not an object", "an unknown kind", *sorted(k for k in oracle.ENGINE_OPS if k != "echo"))

    # A text model's prompt (S9 worker 6: "client builds prompts"; the BOS the tokenizer config
    # names): what `tokenizers` gives for the ChatML turns, after the BOS id the document's own
    # added tokens give, when tokenizer_config.json asks for one. A config or tokenizer.json that
    # cannot be read fails the load (S9 engine: "other settings → load fails").
    from tokenizers import Tokenizer as Reference

    document = oracle.tokenizer_document()
    end_id = next(int(t["id"]) for t in document["added_tokens"] if t["content"] == "<|end|>")
    loadable = {  # the fields `tokenizers` wants spelled out (encoding reads none of them)
        **document,
        "added_tokens": [{"normalized": False, **token} for token in document["added_tokens"]],
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
    }
    reference = Reference.from_str(json.dumps(loadable))
    configs: dict[str, tuple[object, tuple[int, ...] | None]] = {
        "no tokenizer_config.json": (None, ()),
        "add_bos_token false": ({"add_bos_token": False, "bos_token": "<|end|>"}, ()),
        "add_bos_token true, its bos_token a string": ({"add_bos_token": True, "bos_token": "<|end|>"}, (end_id,)),
        "add_bos_token true, its bos_token an added token": ({"add_bos_token": True, "bos_token": {"content": "<|end|>"}}, (end_id,)),
        "no add_bos_token": ({"bos_token": "<|end|>"}, ()),
        "tokenizer_config.json not JSON": ("{", None),
        "tokenizer_config.json not an object": ([], None),
        "add_bos_token true, its bos_token no token": ({"add_bos_token": True, "bos_token": "<s>"}, None),
        "add_bos_token neither true nor false": ({"add_bos_token": "yes"}, None),
        "tokenizer.json not JSON": (None, None),
    }

    def text_config(name: str) -> bool:
        config, want = configs[name]
        where = install(f"text-{len(list(root.iterdir()))}", "onnx-text", False)
        if config is not None:
            raw = config if isinstance(config, str) else json.dumps(config)
            (where / "tokenizer_config.json").write_text(raw, encoding="utf-8")
        if name == "tokenizer.json not JSON":
            (where / "tokenizer.json").write_text('{"model": ', encoding="utf-8")
        try:
            loaded = engine.load(where)
        except engine.EngineError:
            return want is None
        if want is None:
            return False
        messages = [{"role": "system", "content": "ab"}, {"role": "user", "content": "ba b"}]
        turns = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
        if loaded.prompt(messages, "a") != [*want, *reference.encode(turns + "<|im_start|>assistant\na", add_special_tokens=False).ids]:
            return False
        said = loaded.chat(messages, "a", ["b"], 6)  # the prefill, then the greedy text up to the stop string
        return isinstance(said, str) and said.startswith("a") and "b" not in said[1:]

    # The ops of the ONNX speech engines (S9 worker 6): a request they cannot serve is refused
    # (RequestError: the worker answers bad_request), never a crash; a WAV to transcribe gives text.
    # (Speech that is served is judged by tiny_kokoro_speech.)
    from eukhe.tiny.audio import Audio, write_wav

    silence = write_wav(Audio(np.zeros(1600, np.float32), 16000))
    requests: dict[str, tuple[str, Callable[[Any], object]]] = {
        "transcribe bytes that are not a WAV": ("whisper", lambda e: e.transcribe(b"RIFX not a wav", "en")),
        "transcribe a WAV": ("whisper", lambda e: e.transcribe(silence, "en")),
        "speak with a voice that has no file": ("kokoro", lambda e: e.speak("a", "zz_none", 1.0)),
        "speak a word in no lexicon": ("kokoro", lambda e: e.speak("qqqq", "af_heart", 1.0)),
    }

    # A whisper dir the transcription engine cannot run fails to load (S9 engine: the documented
    # graphs and a tokenizer.json with Whisper's special tokens).
    def whisper_dir(name: str) -> bool:
        where = root / f"whisper-{name.replace(' ', '-')}"
        shutil.copytree(root / "ok-whisper", where)
        onnx_dir, tokenizer_file = where / "onnx", where / "tokenizer.json"
        document = oracle.whisper_tokenizer_document()
        if name == "tokenizer.json not JSON":
            tokenizer_file.write_text("{", encoding="utf-8")
        elif name == "a vocabulary that is not a map of strings to ids":
            tokenizer_file.write_text(json.dumps({**document, "model": {**document["model"], "vocab": {"a": "0"}}}), encoding="utf-8")
        elif name == "a tokenizer without Whisper's special tokens":
            tokenizer_file.write_text(json.dumps({**document, "added_tokens": []}), encoding="utf-8")
        elif name == "an encoder of another signature":
            shutil.copy(root / "ok-kokoro" / "onnx" / "model.onnx", onnx_dir / "encoder_model.onnx")
        elif name == "a decoder of another signature":
            shutil.copy(onnx_dir / "encoder_model.onnx", onnx_dir / "decoder_model.onnx")
        try:
            engine.load(where)
        except engine.EngineError:
            return True
        return False

    whisper_broken = (
        "tokenizer.json not JSON",
        "a vocabulary that is not a map of strings to ids",
        "a tokenizer without Whisper's special tokens",
        "an encoder of another signature",
        "a decoder of another signature",
    )
    requests["transcribe an empty WAV"] = ("whisper", lambda e: e.transcribe(write_wav(Audio(np.zeros(0, np.float32), 16000)), "en"))
    requests["transcribe in a language the tokenizer has no token for"] = ("whisper", lambda e: e.transcribe(silence, "xx-none"))

    def served(name: str) -> bool:
        kind, call = requests[name]
        loaded = engine.load(root / f"ok-{kind}")
        try:
            got = call(loaded)
        except engine.RequestError as error:
            return bool(str(error)) and not name.startswith(("transcribe a WAV", "transcribe an empty"))
        return name.startswith(("transcribe a WAV", "transcribe an empty")) and isinstance(got, str)

    return all_of(
        bounded(sorted(oracle.ENGINE_OPS), loads, label="every engine kind loads with its ops"),
        bounded(broken, fails, label="4 broken engine.json classes and a broken dir of each ONNX kind"),
        bounded(list(configs), text_config, label=f"{len(configs)} tokenizer_config.json and tokenizer.json classes of a text model: its prompt and chat, or a failed load"),
        bounded(list(requests), served, label=f"{len(requests)} requests to the speech engines: served or refused"),
        bounded(whisper_broken, whisper_dir, label=f"{len(whisper_broken)} whisper dirs the engine cannot run"),
    )



def _scripted_seat(backlog: int) -> tuple[Path, socket.socket]:
    """A fresh agent dir and a listener on its worker socket ``m``, where a scripted worker answers."""
    from eukhe.tiny import paths

    agent = Path(tempfile.mkdtemp(prefix="ekl", dir="/tmp"))
    paths.ensure_run_dir(agent)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(paths.socket_path(agent, "m")))
    listener.listen(backlog)
    return agent, listener

@law(
    "tiny_client_answers",
    "S9 worker 6",
    "The client returns an ok answer, and types the rest: a worker gone mid-request is Crashed naming the log, a malformed line OutOfProtocol, "
    "an error WorkerError; a worker gone or closing before the request is elected again.",
    BOUNDED,
    derivation="S9 worker 6 on production (eukhe.tiny.client.TinyClient.request) against a scripted worker on the socket",
)
def tiny_client_answers() -> Evidence:
    import json
    import socket
    import tempfile
    import threading
    from pathlib import Path

    from eukhe.tiny import client as clients
    from eukhe.tiny import paths, protocol
    from eukhe.tiny.worker import launch_tag

    answers = {
        "an ok answer": b'{"ok": true, "text": "fine"}\n',
        "the connection closed": b"",
        "a partial line, then closed": b'{"ok": tr',
        "a line that is not JSON": b"{nope\n",
        "a JSON line that is not an object": b"[true]\n",
        "an error answer": b'{"ok": false, "error": "bad_request", "detail": "no"}\n',
    }
    if set(answers) != set(oracle.CLIENT_ANSWERS):
        raise LawFailed("the law's answer classes are not the oracle's")

    def outcome(name: str) -> bool:
        agent, listener = _scripted_seat(4)
        tag = launch_tag("cpu", "q4")

        def serve() -> None:
            conn, _ = listener.accept()
            with conn:
                reader = protocol.LineReader(conn)
                reader.read()  # the ping
                conn.sendall(json.dumps({"ok": True, "tag": tag, "pid": 1}).encode() + b"\n")
                reader.read()  # the request
                conn.sendall(answers[name])

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        want = oracle.CLIENT_ANSWERS[name]
        try:
            with clients.TinyClient(agent, "m") as client:
                text = client.chat([{"role": "user", "content": "x"}])
            got = "ok" if text == "fine" else f"ok with {text!r}"
        except clients.Crashed as error:
            got = "Crashed" if str(paths.log_path(agent, "m")) in str(error) else "Crashed without the log"
        except clients.OutOfProtocol:
            got = "OutOfProtocol"
        except clients.WorkerError as error:
            got = "WorkerError" if error.kind == "bad_request" else f"WorkerError {error.kind}"
        finally:
            thread.join(timeout=60)
            listener.close()
        return got == want

    return all_of(bounded(sorted(answers), outcome, label=f"{len(answers)} classes of answer line"), _client_faults())


# What the client gives (S9 worker 1-6) when its worker misbehaves, from the seed's words: a worker
# that went away with nothing in flight, or refuses the request as it closes, is elected again and
# the request answered ("replaced ... client starts a new one"); one that dies or refuses every time
# is Crashed naming the log ("Worker dies mid-request → typed Crashed + log path"); a line over the
# limit, or speech that is not base64, is out of protocol ("longer answer → out of protocol"); a
# launch that failed is Crashed (tiny_elect_launch); a worker that never answers within its deadline
# is NoAnswer naming the log; workers of another tag that keep the seat end the election (Contended).
# How a worker goes away does not matter: a reset (it closed with our bytes unread) is gone as an
# orderly close is; before the request it is elected again, after it Crashed; a worker of another tag
# gone at the shutdown is gone, and a start follows (tiny_elect_shutdown: bye, or the connection
# gone); a launch failing after a bye is Crashed (tiny_elect_launch). Answers are read one a request,
# in order (S9 worker 6: "One answer each, in order"): a line the worker wrote unasked is the next
# request's answer, judged as one (a malformed one is out of protocol), never dropped unread.
CLIENT_FAULTS: dict[str, str] = {
    "the worker went away before the request, then a new one answers": "ok",
    "the worker stopped reading before the request, then a new one answers": "ok",
    "every worker stops reading before the request": "Crashed",
    "the worker is closing, then a new one answers": "ok",
    "every worker is closing": "WorkerError closing",
    "no answer within the request deadline": "NoAnswer",
    "an answer over the line limit": "OutOfProtocol",
    "speech that is not base64": "OutOfProtocol",
    "every launch fails to start": "Crashed",
    "the launched worker ends without a line": "Crashed",
    "the launched worker writes nothing": "NoAnswer",
    "workers of another tag keep the seat": "Contended",
    "a closing worker answers the ping, then a started one answers": "ok",
    "a ping answered with something else than a tag, then a started one answers": "ok",
    "a worker of another tag never answers shutdown": "NoAnswer",
    "a worker of another tag says bye, then the launch fails": "Crashed",
    "a worker of another tag goes away at the shutdown, then a started one answers": "ok",
    "the worker reset the connection before the request, then a new one answers": "ok",
    "the worker dies mid-request with the request unread (a reset)": "Crashed",
    "a malformed line nobody asked for, then the worker stops writing": "OutOfProtocol",
}


def _client_faults() -> Evidence:
    """tiny_client_answers over the faults of CLIENT_FAULTS: a scripted worker on a real socket
    (and real launched processes), production's TinyClient, the outcome judged by the table."""
    import json
    import shutil
    import socket
    import subprocess
    import tempfile
    import threading
    from pathlib import Path

    from eukhe.tiny import client as clients
    from eukhe.tiny import paths, protocol
    from eukhe.tiny.worker import launch_tag

    ours = launch_tag("cpu", "q4")
    short = 0.5  # seconds: the deadlines of the cases that wait for nothing

    def outcome(name: str) -> bool:
        agent, listener = _scripted_seat(8)
        listener.settimeout(60)
        pinged = threading.Event()  # the first connection's ping is answered and its fault done
        launched: list[subprocess.Popen[bytes]] = []
        conns: list[socket.socket] = []
        kept: list[socket.socket] = []  # deaf connections, left open until the case ends
        other = name.startswith(("workers of another", "a worker of another"))
        if name.startswith("every launch") or name.startswith("the launched"):
            listener.close()  # no worker: the client launches one

        def answer(conn: socket.socket, reader: protocol.LineReader, index: int) -> bool:
            """One connection: the ping, the fault, then one request; False when it was the last."""
            if name.startswith("the worker reset") and index == 0:
                conn.recv(1, socket.MSG_PEEK)  # the ping has come: it is answered, never read
                conn.sendall(json.dumps({"ok": True, "tag": ours, "pid": 1}).encode() + b"\n")
                conn.close()  # with the ping unread: the client's end is reset
                pinged.set()
                return True
            line = reader.read(60)
            if not isinstance(line, bytes):
                return True
            deaf = "stop" in name and "reading" in name and (index == 0 or name.startswith("every"))
            if deaf:  # it stops reading before it answers the ping: the client's request finds it deaf
                conn.shutdown(socket.SHUT_RD)
                kept.append(conn)
            if name.startswith(("a closing worker", "a ping answered")) and index == 0:
                conn.sendall(b'{"ok": false, "error": "closing"}\n' if name.startswith("a closing") else b'"pong"\n')
                return True  # the client starts a worker: this script answers its check
            # a worker of another tag on the first connection (every one, where they keep the seat)
            other_now = other and (index == 0 or name.startswith("workers of another"))
            if protocol.decode(line) == {"op": "ping"}:
                unasked = b"{nope\n" if name.startswith("a malformed line nobody") else b""  # in the same write
                conn.sendall(json.dumps({"ok": True, "tag": "other|tag" if other_now else ours, "pid": 1}).encode() + b"\n" + unasked)
            if other_now:
                if "goes away at the shutdown" in name:
                    return True  # closed at once: the client's shutdown is refused, or reset unread
                line = reader.read(60)  # the shutdown
                if (name.startswith("workers of another") or "says bye" in name) and isinstance(line, bytes):
                    conn.sendall(b'{"ok": true, "bye": true}\n')
                    return True
                pinged.wait(60)  # never answered: the client's deadline passes
                return False
            if name.startswith("the worker went away") and index == 0:
                conn.close()
                pinged.set()
                return True
            if deaf:
                pinged.set()
                return index == 0  # the client tries twice
            if name.startswith("a malformed line nobody"):
                conn.shutdown(socket.SHUT_WR)  # it writes no more, and still reads
                pinged.set()
                reader.read(60)  # the request, until the client has judged the line and closed
                return False
            pinged.set()
            if name.startswith("the worker dies mid-request"):
                conn.recv(1, socket.MSG_PEEK)  # the request has come: it dies without reading it
                conn.close()
                return False
            if reader.read(60) is None:  # the request
                return True
            if name.startswith("no answer"):
                reader.read(60)  # until the client gives up and closes
                return False
            if "closing" in name and (index == 0 or name.startswith("every")):
                conn.sendall(b'{"ok": false, "error": "closing"}\n')
                return index == 0  # the client tries twice
            if name.startswith("an answer over"):
                chunk = b"x" * (1 << 20)
                for _ in range(protocol.LINE_LIMIT // len(chunk) + 1):
                    conn.sendall(chunk)
                conn.sendall(b"\n")
                return False
            if name.startswith("speech"):
                conn.sendall(b'{"ok": true, "audio": "not base64!"}\n')
                return False
            conn.sendall(b'{"ok": true, "text": "fine"}\n')
            return False

        def serve() -> None:
            index = 0
            try:
                while True:
                    conn, _ = listener.accept()
                    conns.append(conn)
                    going = answer(conn, protocol.LineReader(conn), index)
                    if conn not in kept:
                        conn.close()
                    index += 1
                    if not going:
                        return
            except OSError:
                return

        def launcher(agent_dir: Path, model_id: str, device: str, dtype: str) -> subprocess.Popen[bytes]:
            if name.startswith("every launch") or name.endswith("the launch fails"):
                raise OSError(2, "No such file or directory", "tiny-worker")
            script = {"the launched worker ends without a line": "exit 0", "the launched worker writes nothing": "exec sleep 30"}.get(name, "echo ready")
            process = subprocess.Popen(["/bin/sh", "-c", script], stdout=subprocess.PIPE)
            launched.append(process)
            return process

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        # the answer deadline of the cases that wait for nothing: short; where the same deadline also
        # covers the ping this script answers at once, long enough for a busy machine
        deadline = {"the launched worker writes nothing": short, "a worker of another tag never answers shutdown": 3.0}.get(name, 60.0)
        client = clients.TinyClient(agent, "m", launcher=launcher, answer_deadline=deadline, request_deadline=short if name.startswith("no answer") else 60.0)
        log = str(paths.log_path(agent, "m"))
        try:
            if not name.startswith(("every launch", "the launched", "workers of", "a worker of")):
                client.ensure()
                if not pinged.wait(60):
                    return False
            if name.startswith("speech"):
                client.speak("hi")
                got = "ok"
            else:
                text = client.chat([{"role": "user", "content": "x"}])
                got = "ok" if text == "fine" else f"ok with {text!r}"
        except clients.Crashed as error:
            got = "Crashed" if log in str(error) else "Crashed without the log"
        except clients.NoAnswer as error:
            got = "NoAnswer" if log in str(error) else "NoAnswer without the log"
        except clients.OutOfProtocol:
            got = "OutOfProtocol"
        except clients.Contended:
            got = "Contended"
        except clients.WorkerError as error:
            got = f"WorkerError {error.kind}"
        finally:
            client.close()
            pinged.set()
            try:
                listener.shutdown(socket.SHUT_RDWR)  # wakes the server's accept (Linux)
            except OSError:
                pass
            listener.close()
            for conn in conns:  # a read the client left waiting (it gave up) ends now
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            thread.join(timeout=60)
            for conn in kept:
                conn.close()
            shutil.rmtree(agent, ignore_errors=True)
        ended = True
        for process in launched:
            if name == "the launched worker writes nothing":
                try:
                    process.wait(timeout=10)  # killed by the client (it would sleep 30 s), never left behind
                except subprocess.TimeoutExpired:
                    ended = False
            if process.poll() is None:
                process.kill()
            process.wait()
            if process.stdout is not None:
                process.stdout.close()
        return got == CLIENT_FAULTS[name] and ended

    return bounded(
        sorted(CLIENT_FAULTS),
        outcome,
        label=f"{len(CLIENT_FAULTS)} worker faults: gone (closed or reset), deaf, closing, silent, over-long, not base64, a line unasked, "
        "failed or silent launches, other tags (silent, gone or bye)",
    )


# Directories the kernel keeps as they are, for the download faults of a file system that refuses
# (S9 download 2-3). A mode binds a process without CAP_DAC_OVERRIDE (any user but root); an inode
# flag (chattr +i, +a) binds root too. Each is used only where the kernel enforces it: probed on a
# scratch dir.
_FS_IOC_GETFLAGS, _FS_IOC_SETFLAGS = 0x80086601, 0x40086602
_FS_IMMUTABLE_FL, _FS_APPEND_FL = 0x10, 0x20  # immutable: no entry made, removed or moved; append: made only


def _fs_flag(path: Path, flag: int, on: bool) -> bool:
    """Set (or clear) an inode flag of the dir ``path``; False where the kernel refuses to."""
    import fcntl
    import os

    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        got = bytearray(4)
        fcntl.ioctl(fd, _FS_IOC_GETFLAGS, got)
        flags = int.from_bytes(got, sys.byteorder)
        fcntl.ioctl(fd, _FS_IOC_SETFLAGS, ((flags | flag) if on else (flags & ~flag)).to_bytes(4, sys.byteorder))
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


@cache
def _freezing() -> str | None:
    """How a dir is made one where no entry can be made, removed or renamed, here: "mode" (0555,
    binding a process without CAP_DAC_OVERRIDE), "flag" (immutable, for one with
    CAP_LINUX_IMMUTABLE on a file system with inode flags), or None: neither binds."""
    import shutil

    scratch = Path(tempfile.mkdtemp(prefix="eklaw-freeze"))
    try:
        for way in ("mode", "flag"):
            frozen = scratch / way
            frozen.mkdir()
            if way == "mode":
                frozen.chmod(0o555)
            elif not _fs_flag(frozen, _FS_IMMUTABLE_FL, True):
                continue
            try:
                (frozen / "probe").mkdir()
            except OSError:
                return way
            finally:
                if way == "mode":
                    frozen.chmod(0o755)
                else:
                    _fs_flag(frozen, _FS_IMMUTABLE_FL, False)
        return None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _freeze(path: Path, on: bool) -> None:
    """Make the dir ``path`` one where no entry can be made, removed or renamed (or undo it), the
    way that binds here."""
    if _freezing() == "mode":
        path.chmod(0o555 if on else 0o755)
    elif _freezing() == "flag":
        _fs_flag(path, _FS_IMMUTABLE_FL, on)


@cache
def _appends() -> bool:
    """Whether an append-only dir (entries made, never removed or moved) can be made here: a
    process with CAP_LINUX_IMMUTABLE on a file system with inode flags."""
    import shutil

    scratch = Path(tempfile.mkdtemp(prefix="eklaw-append"))
    try:
        (scratch / "probe").mkdir()
        if not _fs_flag(scratch, _FS_APPEND_FL, True):
            return False
        try:
            (scratch / "probe").rmdir()
            return False
        except OSError:
            return True
        finally:
            _fs_flag(scratch, _FS_APPEND_FL, False)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


@law(
    "tiny_download_cleanup",
    "S9 download 1-3",
    "Unpinned models download nothing; a staging dir that cannot be removed leaves the download's own error and a warning naming it.",
    BOUNDED,
    derivation="S9 download 1-3 on production (eukhe.tiny.download, its removal seam) against a loopback HTTP server",
)
def tiny_download_cleanup() -> Evidence:
    import hashlib
    import http.server
    import os
    import shutil
    import subprocess
    import tempfile
    import threading
    from pathlib import Path

    from eukhe.tiny import download, paths
    from eukhe.tiny.catalog import MISSING, File, Model, Origin, install_state

    body = b"weights" * 100
    lexicon = b'{"hello": "h@l"}'
    routes = {
        "/o/m/resolve/c/w.bin": body,
        "/o/m/resolve/c/bad.bin": body + b"x",
        "/x/lex/resolve/d/data/us.json": lexicon,
        "/cdn/o/m/moved.bin": body,
    }
    # Hugging Face answers a resolve URL with a redirect to its CDN; a broken mirror may loop
    redirects = {"/o/m/resolve/c/moved.bin": "/cdn/o/m/moved.bin", "/o/m/resolve/c/loop.bin": "/o/m/resolve/c/loop.bin"}

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            if self.path in redirects:
                self.send_response(302)
                self.send_header("Location", redirects[self.path])
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            data = routes.get(self.path)
            self.send_response(200 if data is not None else 404)
            self.send_header("Content-Length", str(len(data or b"")))
            self.end_headers()
            self.wfile.write(data or b"")

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    good = Model("m", "text", "o/m", "c", (File("w.bin", len(body), hashlib.sha256(body).hexdigest()),), "echo")
    bad = Model("m", "text", "o/m", "c", (File("w.bin", len(body), "0" * 64),), "echo")
    unpinned = Model("m", "text", "o/m", None, (File("w.bin"),), "echo")
    other_engine = Model("m", "text", "o/m", "c", good.files, "other")  # the same file, another engine: the install is told apart
    moved = Model("m", "text", "o/m", "c", (File("moved.bin", len(body), hashlib.sha256(body).hexdigest()),), "echo")
    looping = Model("m", "text", "o/m", "c", (File("loop.bin", len(body), hashlib.sha256(body).hexdigest()),), "echo")
    freezes, appends = _freezing() is not None, _appends()

    def refuse(path: Path) -> None:
        raise OSError(13, "Permission denied", str(path))

    def tree(where: Path) -> dict[str, bytes]:
        return {str(p.relative_to(where)): p.read_bytes() for p in sorted(where.rglob("*")) if p.is_file()}

    earlier_install = {"w.bin": body, "engine.json": b'{"kind": "echo"}'}

    def refused(agent: Path, model: Model, what: Path | str, warnings: list[str] | None, at_end: Callable[[], object] | None = None) -> bool:
        """The download of ``model`` fails with a typed error naming ``what`` (S9 download 2-3:
        a fault stops it, and the error says what was wrong); ``at_end`` runs as the last byte
        of the file is written; its warnings go to ``warnings`` (None: no one to warn)."""

        def last_byte(path: str, done: int, size: int | None) -> None:
            if done == size and at_end is not None:
                at_end()

        try:
            download.download(agent, model, base=base, warn=None if warnings is None else warnings.append, progress=last_byte)
        except download.DownloadError as error:
            return str(what).lower() in str(error).lower()
        return False

    def case(name: str) -> bool:
        agent = Path(tempfile.mkdtemp(prefix="eklaw"))
        warnings: list[str] = []
        models = paths.models_dir(agent)
        stage = models / f".staging-m-{os.getpid()}"
        target = paths.model_dir(agent, "m")
        try:
            if name == "a redirect to the file":
                # the resolve URL answers 302 to where the bytes are: followed, every pinned byte installed
                where = download.download(agent, moved, base=base)
                return tree(where) == {"moved.bin": body, "engine.json": b'{"kind": "echo"}'} and sorted(os.listdir(models)) == ["m"]
            if name == "a redirect loop":
                # never the file: a typed error, the staging gone, the earlier install untouched
                download.download(agent, good, base=base)
                return refused(agent, looping, "redirect", warnings) and tree(target) == earlier_install and sorted(os.listdir(models)) == ["m"]
            if name == "a file where the staging dir goes":
                # a staging dir that cannot be made: a typed error naming it, the earlier install untouched
                download.download(agent, good, base=base)
                stage.write_bytes(b"not a dir")
                return refused(agent, other_engine, stage, warnings) and tree(target) == earlier_install and stage.read_bytes() == b"not a dir"
            if name == "a models dir that is a file":
                models.parent.mkdir(parents=True)
                models.write_bytes(b"not a dir")
                return refused(agent, good, stage, warnings) and models.read_bytes() == b"not a dir"
            if name == "a models dir where no dir can be made":
                download.download(agent, good, base=base)
                _freeze(models, True)
                try:
                    typed = refused(agent, other_engine, stage, warnings)
                finally:
                    _freeze(models, False)
                return typed and tree(target) == earlier_install and sorted(os.listdir(models)) == ["m"]
            if name in ("a models dir that refuses the rename", "a models dir that refuses the rename, an earlier install there"):
                # verified, then the rename cannot be made (S9 download 3: complete or absent): a typed
                # error naming the install's path, nothing installed or replaced, and the staging dir
                # that cannot be removed either named in one warning (S9 download 2)
                earlier = name.endswith("there")
                if earlier:
                    download.download(agent, good, base=base)
                try:
                    typed = refused(agent, other_engine, target, warnings, at_end=lambda: _freeze(models, True))
                finally:
                    _freeze(models, False)
                as_before = tree(target) == earlier_install if earlier else not target.exists()
                named = len(warnings) == 1 and str(stage) in warnings[0]
                return typed and as_before and named and set(os.listdir(models)) <= {"m", stage.name}
            if name == "a models dir that refuses the rename, no one to warn":
                # the download's own error still (S9 download 2), whether or not a warning can be given
                try:
                    typed = refused(agent, good, target, None, at_end=lambda: _freeze(models, True))
                finally:
                    _freeze(models, False)
                return typed and not target.exists()
            if name in ("a staging dir whose files cannot be moved out", "a staging dir whose files cannot be moved out, an earlier install there"):
                # verified, but the staging dir is append-only (chattr +a): its files can be written,
                # never moved or removed. The rename into place fails: a typed error naming the
                # install's path; an earlier install is untouched (none set aside is left behind),
                # and the staging dir is named in one warning
                earlier = name.endswith("there")
                if earlier:
                    download.download(agent, good, base=base)
                typed = refused(agent, other_engine, target, warnings, at_end=lambda: _fs_flag(stage, _FS_APPEND_FL, True))
                as_before = tree(target) == earlier_install if earlier else not target.exists()
                named = len(warnings) == 1 and str(stage) in warnings[0]
                return typed and as_before and named and sorted(os.listdir(models)) == sorted([stage.name, *(["m"] if earlier else [])])
            if name == "unpinned":
                try:
                    download.download(agent, unpinned, base=base)
                except download.Unpinned:
                    return not paths.models_dir(agent).exists()
                return False
            if name == "a leftover staging dir":
                stage.mkdir(parents=True)
                (stage / "junk").write_bytes(b"old")
                where = download.download(agent, good, base=base)
                return (where / "w.bin").read_bytes() == body and not stage.exists()
            if name == "unremovable staging":
                try:
                    download.download(agent, bad, base=base, remove=refuse, warn=warnings.append)
                except download.WrongHash:
                    return len(warnings) == 1 and str(stage) in warnings[0] and not paths.model_dir(agent, "m").exists()
                return False
            if name == "unremovable staging, no one to warn":
                # the download's own error still (S9 download 2), whether or not a warning can be given
                try:
                    download.download(agent, bad, base=base, remove=refuse)
                except download.WrongHash:
                    return not paths.model_dir(agent, "m").exists()
                return False
            if name == "unremovable earlier install, no one to warn":
                download.download(agent, good, base=base)
                where = download.download(agent, other_engine, base=base, remove=refuse)
                return (where / "w.bin").read_bytes() == body and (where / "engine.json").read_bytes() == b'{"kind": "other"}'
            if name == "no mirror: each file from its own origin":
                # S9 catalog: each file pinned to its Hugging Face repo and commit (the misaki lexicon to
                # its GitHub repository); with no mirror set, or the default one, the URL is the
                # origin's own (the module's two addresses), never a mirror layout of it
                lexicon_file = File("misaki/us.json", len(lexicon), hashlib.sha256(lexicon).hexdigest(), Origin("github", "x/lex", "d", "data/us.json"))
                origin = {
                    good.files[0]: "https://huggingface.co/o/m/resolve/c/w.bin",
                    lexicon_file: "https://raw.githubusercontent.com/x/lex/d/data/us.json",
                }
                return all(
                    download.url_of(mirror, good, f) == url for f, url in origin.items() for mirror in (None, "https://huggingface.co", "https://huggingface.co/")
                ) and download.url_of(base, good, lexicon_file) == f"{base}/x/lex/resolve/d/data/us.json"
            if name == "unremovable earlier install":
                download.download(agent, good, base=base)
                where = download.download(agent, good, base=base, remove=refuse, warn=warnings.append)
                # one rename (S9 download 3): the earlier install is swapped into the staging dir
                swapped = len(warnings) == 1 and "replaced install" in warnings[0] and str(stage) in warnings[0]
                return (where / "w.bin").read_bytes() == body and swapped
            if name == "a failing progress callback":
                def boom(path: str, done: int, size: int | None) -> None:
                    raise OSError(28, "No space left on device")

                try:
                    download.download(agent, good, base=base, progress=boom)
                except download.BrokenTransfer:
                    return not stage.exists() and not paths.model_dir(agent, "m").exists()
                return False
            if name == "leftovers of gone processes":
                # S9 download 1-2 for a download killed (SIGKILL) mid-way: its staging dir, named by
                # its pid, is removed at the next download once that process is gone; a live
                # process's is its own download in progress, left alone, as are names of no leftover
                gone = subprocess.Popen(["/bin/sh", "-c", "exit 0"])
                gone.wait()
                models = paths.models_dir(agent)
                swept = [f".staging-x-{gone.pid}", f".old-m-{gone.pid}", ".staging-m-0"]
                kept = [f".staging-y-{os.getpid()}", ".staging-z-12a", "notes"]
                for leftover in (*swept, *kept):
                    (models / leftover).mkdir(parents=True)
                    (models / leftover / "part").write_bytes(b"old")
                where = download.download(agent, good, base=base)
                left = sorted(p.name for p in models.iterdir())
                return (where / "w.bin").read_bytes() == body and left == sorted([*kept, "m"])
            if name == "leftovers of gone processes that cannot be removed":
                # S9 download 2 ("not removable → ... a warning naming the directory") for the
                # leftovers the sweep finds: one that cannot be removed as a directory tree (a symbolic
                # link, whose target is never followed; a plain file) is named in a warning and the sweep
                # goes on; one another process's sweep removed first is neither reported nor counted;
                # the rest are removed, and the download itself goes on and installs (S9 download 3)
                gone = subprocess.Popen(["/bin/sh", "-c", "exit 0"])
                gone.wait()
                models = paths.models_dir(agent)
                models.mkdir(parents=True)
                outside = agent / "elsewhere"
                outside.mkdir()
                (outside / "keep").write_bytes(b"not the sweep's")
                link, plain, raced, removable = (models / f".staging-{x}-{gone.pid}" for x in "abcd")
                link.symlink_to(outside, target_is_directory=True)
                plain.write_bytes(b"a file, not a staging dir")
                for where in (raced, removable):
                    where.mkdir()
                    (where / "part").write_bytes(b"old")

                def another_sweep(warning: str) -> None:
                    # the first warning comes before the sweep reaches `raced` (names in order): another
                    # process's sweep removes it meanwhile
                    warnings.append(warning)
                    shutil.rmtree(raced, ignore_errors=True)

                sweep_removed = paths.sweep(agent, warn=another_sweep)
                named = len(warnings) == 2 and str(link) in warnings[0] and str(plain) in warnings[1]
                untouched = (outside / "keep").read_bytes() == b"not the sweep's" and link.is_symlink() and plain.is_file()
                if sweep_removed != [removable] or not named or not untouched:
                    return False
                # the download's own sweep meets the same two, warns again, and installs
                warnings.clear()
                where = download.download(agent, good, base=base, warn=warnings.append)
                left = sorted(p.name for p in models.iterdir())
                # and `tiny-models list` (its sweep of model a's leftovers has no one to warn) shows
                # the state of model a, missing, without failing on the link it cannot remove
                listed = install_state(agent, Model("a", "text", "o/a", "c", good.files, "echo"))
                return (
                    (where / "w.bin").read_bytes() == body
                    and left == sorted([link.name, plain.name, "m"])
                    and len(warnings) == 2
                    and str(link) in warnings[0]
                    and str(plain) in warnings[1]
                    and listed == MISSING
                    and link.is_symlink()
                    and (outside / "keep").read_bytes() == b"not the sweep's"
                )
            if name == "a file of another repository, through the mirror":
                # kokoro's misaki lexicon comes from another repository than the model's (S9 catalog:
                # each file pinned); a mirror serves it in the Hugging Face layout of that repository
                other = Origin("github", "x/lex", "d", "data/us.json")
                both = Model("m", "speech", "o/m", "c", (good.files[0], File("misaki/us.json", len(lexicon), hashlib.sha256(lexicon).hexdigest(), other)), "echo")
                where = download.download(agent, both, base=base)
                return (where / "w.bin").read_bytes() == body and (where / "misaki" / "us.json").read_bytes() == lexicon
            if name == "an interrupted download":
                # Ctrl-C mid-transfer: the interrupt goes on, and nothing is installed or left staged
                def interrupt(path: str, done: int, size: int | None) -> None:
                    raise KeyboardInterrupt

                try:
                    download.download(agent, good, base=base, progress=interrupt)
                except KeyboardInterrupt:
                    return not stage.exists() and not paths.model_dir(agent, "m").exists()
                return False
            if name == "progress reports":
                seen: list[tuple[str, int, int | None]] = []
                download.download(agent, good, base=base, progress=lambda p, d, s: seen.append((p, d, s)))
                return bool(seen) and seen[-1] == ("w.bin", len(body), len(body)) and all(d <= len(body) for _, d, _ in seen)
            raise LawFailed(f"no case {name}")
        finally:
            if models.is_dir():  # the kernel's refusals undone, so that the scratch dir goes
                if freezes:
                    _freeze(models, False)
                if appends and stage.is_dir():
                    _fs_flag(stage, _FS_APPEND_FL, False)
            shutil.rmtree(agent, ignore_errors=True)

    # the refusals of a file system that binds here: a frozen dir (read-only, or immutable as
    # root) where the kernel enforces it; an append-only staging dir only for root able to set one
    frozen = (
        (
            "a models dir where no dir can be made",
            "a models dir that refuses the rename",
            "a models dir that refuses the rename, an earlier install there",
            "a models dir that refuses the rename, no one to warn",
        )
        if freezes
        else ()
    )
    appended = ("a staging dir whose files cannot be moved out", "a staging dir whose files cannot be moved out, an earlier install there") if appends else ()
    names = (
        "unpinned",
        "a leftover staging dir",
        "leftovers of gone processes",
        "leftovers of gone processes that cannot be removed",
        "unremovable staging",
        "unremovable staging, no one to warn",
        "unremovable earlier install",
        "unremovable earlier install, no one to warn",
        "no mirror: each file from its own origin",
        "a failing progress callback",
        "an interrupted download",
        "a file of another repository, through the mirror",
        "progress reports",
        "a redirect to the file",
        "a redirect loop",
        "a file where the staging dir goes",
        "a models dir that is a file",
        *frozen,
        *appended,
    )
    try:
        return bounded(
            names,
            case,
            label=f"{len(names)} classes: unpinned, leftover staging, leftovers of gone and live processes (removable or not, or swept by another), "
            "unremovable staging or earlier install (warned or not), a failing writer, an interrupt, a file of another repository, "
            "URLs with no mirror, progress, a redirect followed or looping, a staging dir that cannot be made (a file in its place, "
            f"a models dir that is a file{', or frozen' if freezes else ''}){', a rename refused by a frozen models dir (warned or not)' if freezes else ''}"
            f"{', a rename refused by an append-only staging dir' if appends else ''} (with and without an earlier install)",
        )
    finally:
        server.shutdown()
        server.server_close()
