"""Laws of the goal progress check (control.md S5.8; LAWS.bend section progress).

Both laws are named in the seed's prose (S5.8, "Laws"). A continuation is one call of the check
of the same run and goal, after the session did some acts.

Strength. The z3 proofs are over unbounded integers and any strings. ``bend.progress.check``'s
encoding is generated from its code (spec.z3gen: the record, of the same run and goal or not,
its work and count, the work now, directors.stallSteps), so goal_stops_without_progress is
proved of the code. ``record_act`` (its loop over the ledger a z3 recursive function) and
``work`` are generated from their code too, so goal_progress_continues is proved of the code.
The claims restate S5.8 (the cap from the oracle's rule, spec/oracles/progress.py), not the
encoding.
- goal_stops_without_progress: induction on the number k of continuations with no new work, each
  a call of check (of="bend.progress.check"): from any count c the count is c + k and the goal
  pauses iff it reaches the cap; the continuation number cap pauses.
- goal_progress_continues: a continuation whose work grew continues with the count 0, from any
  count, record and setting; and an act the ledger does not hold grows the work by exactly 1
  (induction on record_act's loop over the ledger, from its end back to its first act).
The oracle of S5.8 judges the model and production on an enumerated domain beside the proofs.

The work itself is read from REAL transcripts: session entries (an assistant's text and
thinking, tool calls with ids and timestamps, their results with error flags, results that come
back out of order, results of unknown calls, accepted and refused progress notes) committed to an
in-memory conversation tree of eukhe.session and to a real session store, read by production's
``hooks.work_of``; the judge counts the distinct acts of the same transcript by the seed's key
(spec/oracles/progress.py), and the model's ledger is fed the same acts.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Iterator
from typing import Any

import z3
from hypothesis import strategies as st

from bend import progress as m
from spec.evidence import Evidence, LawFailed, all_of, also, bounded, examples, induction
from spec.oracles import progress as oracle
from spec.proofs import prove
from spec.registry import BOUNDED, PROVED, law
from spec.z3gen import Maybe, facts, fresh, generated, item, same, struct

VERDICT_CODES = {verdict: code for code, verdict in enumerate(oracle.VERDICTS)}  # continue 0, note 1, pause 2
CONTINUE, NOTE, PAUSE = (VERDICT_CODES[v] for v in oracle.VERDICTS)


# -- the encodings (z3) of the model's functions: check generated from its code, the ledger's by hand and tied ----


_check = generated(m.check)  # bend.progress.check's encoding, generated from its code (spec.z3gen)
RECORD_RUN, RECORD_GOAL, RUN_NOW, GOAL_NOW = z3.Strings("record.run record.goal run goal")


def check_encoding(has_record: Any, same_run: Any, same_goal: Any, work: Any, count: Any, now: Any, stall_steps: Any) -> tuple[Any, Any]:
    """(verdict code, count after) of one continuation of the run and goal ``RUN_NOW``,
    ``GOAL_NOW`` (any strings): the record (is there one; its run and goal, the same as now's
    where ``same_run`` and ``same_goal`` say so, else any others; its work and count), the work
    now and directors.stallSteps, through the generated encoding of check."""
    run = z3.If(same_run, RUN_NOW, RECORD_RUN)
    goal = z3.If(same_goal, GOAL_NOW, RECORD_GOAL)
    record = Maybe(z3.Not(has_record), struct(m.Record, run, goal, work, count))
    out = _check(record, RUN_NOW, GOAL_NOW, now, stall_steps)
    code = z3.If(out.verdict == z3.StringVal(m.PAUSE), PAUSE, z3.If(out.verdict == z3.StringVal(m.NOTED), NOTE, z3.If(out.verdict == z3.StringVal(m.GO_ON), CONTINUE, -1)))
    return code, out.count


def different_names() -> list[Any]:
    """A record of another run or goal is one whose name differs from now's."""
    return [RECORD_RUN != RUN_NOW, RECORD_GOAL != GOAL_NOW]


_RECORD_ACT, _WORK = generated(m.record_act), generated(m.work)


def new_act_grows_work() -> Evidence:
    """Induction on record_act's loop over the ledger, from its end back to its first act: when
    no act from position i on equals the new one, the ledger record_act gives from there holds
    one act more than the ledger (so an act the ledger does not hold grows the work by 1)."""
    ledger, act = fresh(m.Ledger, "ledger"), fresh(m.Act, "act")
    i, j = z3.Ints("i j")

    def grows_from(start: Any) -> Any:
        absent = z3.ForAll([j], z3.Implies(z3.And(start <= j, j < ledger.length), z3.Not(same(item(ledger, j), act))))
        after = _RECORD_ACT.loop(_index=start, ledger=ledger, act=act)
        return z3.Implies(z3.And(0 <= start, start <= ledger.length, absent), _WORK(after) == _WORK(ledger) + 1)

    ties = [_RECORD_ACT.tie, _WORK.tie]
    base = prove(lambda: grows_from(ledger.length), label="base: past the last act, the act is appended", assumptions=facts(ledger), ties=ties)
    step = prove(
        lambda: z3.Implies(z3.And(i >= 0, i < ledger.length, grows_from(i + 1)), grows_from(i)),
        label="step: an act at position i that is not the new one passes it on to i + 1", assumptions=facts(ledger), ties=ties,
    )
    return induction(base, step, of="bend.progress.record_act", label="record_act's loop over the ledger, from its end back to its first act")


RUN, GOAL = "run-1", "goal-1"
AGREE_COUNTS = range(0, 9)
AGREE_SETTINGS = range(0, 9)


FIRSTS = ("none", "another run", "another goal")  # S5.8: the first continuation of a run, or of a new goal


def agrees(first: bool, grew: bool, count: int, stall_steps: int, work: int = 5, why: str = "none") -> bool:
    """The oracle of S5.8, the model and production give the same verdict and count."""
    from eukhe.directors.progress import StallRecord, stall_check

    want = oracle.verdict(first, grew, count, stall_steps)
    run, goal = ("run-0" if why == "another run" else RUN), ("goal-0" if why == "another goal" else GOAL)
    record = None if first and why == "none" else m.Record(run, goal, work, count)
    now = work + 1 if grew else work
    model = m.check(record, RUN, GOAL, now, stall_steps)
    p_record = None if first and why == "none" else StallRecord(run, goal, work, count)
    production = stall_check(p_record, RUN, GOAL, now, stall_steps)
    got = {
        "model": (model.verdict, model.count),
        "production": (production.verdict, production.count),
    }
    if any(v != want for v in got.values()):
        raise LawFailed(f"first={first} grew={grew} count={count} stallSteps={stall_steps}: oracle {want}, {got}")
    if model.verdict == m.PAUSE and m.pause_reason(model.count) != oracle.pause_reason(model.count):
        raise LawFailed(f"pause reason {m.pause_reason(model.count)!r}")
    return True


@functools.cache
def agreement() -> Evidence:
    cases = [(False, grew, c, s, 5, "none") for grew in (False, True) for c in AGREE_COUNTS for s in AGREE_SETTINGS]
    cases += [(True, grew, c, s, 5, why) for why in FIRSTS for grew in (False, True) for c in AGREE_COUNTS for s in AGREE_SETTINGS]
    return bounded(
        cases,
        lambda case: agrees(*case),
        label=f"oracle = model = production on (first: no record, another run, another goal; or not) x grew x counts {AGREE_COUNTS.start}..{AGREE_COUNTS.stop - 1} x "
        f"directors.stallSteps {AGREE_SETTINGS.start}..{AGREE_SETTINGS.stop - 1}",
    )


# -- real transcripts -------------------------------------------------------------------------------

Said = dict[str, Any]  # one event of a transcript: call, text, note

TOOLS = ("bash", "read", "edit", "", "ツール")
ARGS: tuple[Any, ...] = ({"cmd": "make"}, {"path": "a.py"}, {"path": "a.py", "line": 3}, {"line": 3, "path": "a.py"}, [], {}, "x", None, 10**30, -1)
RESULTS = ("ok", "", "error: no such file", "3 passed", "ok\n", "é")


def random_transcript(rng: random.Random, size: int) -> list[Said]:
    events: list[Said] = []
    calls: list[Said] = []
    for step in range(size):
        roll = rng.random()
        if roll < 0.5:
            if calls and rng.random() < 0.45:
                call = dict(rng.choice(calls))  # the same act again: new id, time, text around
            else:
                call = {"tool": rng.choice(TOOLS), "args": rng.choice(ARGS), "result": rng.choice(RESULTS), "error": rng.random() < 0.3}
                calls.append(call)
            events.append({"op": "call", "id": f"c{step}", "at": 1000 + step, "text": rng.choice(["", "let me run it"]), **call})
        elif roll < 0.62 and len(calls) >= 2:
            pair = [dict(rng.choice(calls)) for _ in range(2)]
            events.append({"op": "calls", "calls": [dict(c, id=f"p{step}-{i}", at=2000 + step) for i, c in enumerate(pair)]})
        elif roll < 0.72:
            events.append({"op": "text", "text": rng.choice(["thinking...", "waiting for the build"])})
        elif roll < 0.80:
            events.append({"op": "orphan", "id": f"none{step}", "result": rng.choice(RESULTS), "error": rng.random() < 0.5})
        else:
            events.append({"op": "note", "text": rng.choice(["tests pass", "step two", ""]), "accepted": rng.random() < 0.6})
    return events


def oracle_acts(events: list[Said]) -> list[tuple[Any, ...]]:
    """The acts of a transcript by the seed's key; results of unknown calls are no act."""
    acts: list[tuple[Any, ...]] = []
    for event in events:
        op = event["op"]
        if op == "call":
            acts.append(oracle.act_key(event["tool"], event["args"], event["result"], event["error"]))
        elif op == "calls":
            acts.extend(oracle.act_key(c["tool"], c["args"], c["result"], c["error"]) for c in reversed(event["calls"]))
        elif op == "note" and event["accepted"]:
            acts.append(oracle.note_key(event["text"]))
    return acts


def model_ledger(events: list[Said]) -> m.Ledger:
    ledger: m.Ledger = ()
    for event in events:
        op = event["op"]
        calls = [event] if op == "call" else list(reversed(event["calls"])) if op == "calls" else []
        for c in calls:
            ledger = m.record_act(ledger, m.call_act(c["tool"], m.canonical(c["args"]), c["result"], c["error"]))
        if op == "note" and event["accepted"]:
            ledger = m.record_act(ledger, m.note_act(event["text"]))
    return ledger


def entries_of(event: Said) -> list[Any]:
    """The session entries of one transcript event, as the agent loop commits them."""
    from eukhe.directors.hooks import PROGRESS_NOTE_CUSTOM_TYPE
    from eukhe.session import assistant, row, tool_call, tool_result

    op = event["op"]
    if op == "call":
        out = [assistant({"text": event["text"], "thinking": "hmm", "at": event["at"]})] if event["text"] else []
        out.append(tool_call({"id": event["id"], "name": event["tool"], "arguments": event["args"], "at": event["at"]}))
        out.append(tool_result({"call_id": event["id"], "text": event["result"], "is_error": event["error"], "at": event["at"] + 1}))
        return out
    if op == "calls":  # parallel calls: the results come back in the other order
        calls = [tool_call({"id": c["id"], "name": c["tool"], "arguments": c["args"], "at": c["at"]}) for c in event["calls"]]
        results = [tool_result({"call_id": c["id"], "text": c["result"], "is_error": c["error"]}) for c in reversed(event["calls"])]
        return calls + results
    if op == "orphan":
        return [tool_result({"call_id": event["id"], "text": event["result"], "is_error": event["error"]})]
    if op == "note":
        return [row(PROGRESS_NOTE_CUSTOM_TYPE, {"text": event["text"], "accepted": event["accepted"]})]
    return [assistant({"text": event["text"], "thinking": "still thinking"})]


class MemoryConversation:
    """An in-memory conversation tree of eukhe.session: real entries, no disk."""

    def __init__(self) -> None:
        from eukhe.session.tree import Tree

        self.tree = Tree("main")

    def commit(self, entries: list[Any]) -> None:
        record = self.tree.plan_commit(entries, {})
        if record is not None:
            self.tree.apply(record)


def production_works(events: list[Said]) -> list[int]:
    """production's work_of over the model view of a real conversation, after each event."""
    from eukhe.directors.hooks import work_of

    conversation = MemoryConversation()
    works = []
    for event in events:
        conversation.commit(entries_of(event))
        works.append(work_of(conversation.tree.model_view()).work)
    return works


def ledger_agrees(events: list[Said]) -> bool:
    works = production_works(events)
    for k in range(len(events) + 1):
        want = oracle.work(oracle_acts(events[:k]))
        got_model = m.work(model_ledger(events[:k]))
        got_production = works[k - 1] if k else 0
        if not want == got_model == got_production:
            raise LawFailed(f"work after {events[:k]!r}: oracle {want}, model {got_model}, production work_of {got_production}")
    return True


TRANSCRIPTS = 160


def transcripts() -> Iterator[list[Said]]:
    for index in range(TRANSCRIPTS):
        rng = random.Random(f"progress-law-{index}")
        yield random_transcript(rng, rng.randint(1, 24))


def store_ledger() -> Evidence:
    """A few transcripts through a real session store, read back after a reopen."""
    import tempfile
    from pathlib import Path

    from eukhe.directors.hooks import work_of
    from eukhe.session import Store

    cases = list(transcripts())[:12]
    fast = "/dev/shm" if Path("/dev/shm").is_dir() else None
    with tempfile.TemporaryDirectory(dir=fast) as root:
        store = Store(Path(root))
        for number, events in enumerate(cases):
            with store.create(f"t{number}") as session:
                main = session.conversation("main")
                for event in events:
                    main.commit(entries_of(event))
            with store.open(f"t{number}", writer=False) as session:
                got = work_of(session.conversation("main").model_view()).work
            if got != oracle.work(oracle_acts(events)):
                raise LawFailed(f"store transcript {number}: work_of {got}, oracle {oracle.work(oracle_acts(events))}")
    return Evidence(BOUNDED, f"store: {len(cases)} transcripts committed to a real session, reopened, read by work_of")



def ledger_evidence() -> Evidence:
    fixed = bounded(
        transcripts(),
        ledger_agrees,
        label=f"{TRANSCRIPTS} seeded transcripts (repeats with new ids, times and text, parallel calls answered out of order, error flags, "
        "results of unknown calls, accepted and refused notes, empty and unicode names, huge and negative arguments): "
        "oracle = model ledger = production work_of on real entries, after every event",
    )
    hunt = examples(lambda seed, size: ledger_agrees(random_transcript(random.Random(seed), size)), seed=st.integers(0, 2**32), size=st.integers(0, 30))
    return all_of(also(fixed, hunt), store_ledger())


# -- the laws ------------------------------------------------------------------------------------------


def oracle_cap(stall_steps: Any) -> Any:
    """S5.8: the cap is directors.stallSteps, 0 taking the default (the oracle's rule, in z3)."""
    return z3.If(stall_steps == 0, oracle.DEFAULT_STALL_STEPS, stall_steps)


@law(
    "goal_stops_without_progress",
    "S5.8",
    "Continuations in a row whose acts the session did before, as many as the cap, pause the goal from any count (model and production).",
    PROVED,
)
def goal_stops_without_progress() -> Evidence:
    c, k, setting, count, work, now = z3.Ints("c k setting count work now")
    same = (z3.BoolVal(True),) * 3  # a continuation of the same run and goal, with a record
    ties = [_check.tie]

    def continuation(before: Any) -> Any:
        """The continuation after ``before`` ones with no new work (work now <= the record's)."""
        verdict, after = check_encoding(*same, work, before, now, setting)
        return z3.And(after == before + 1, (verdict == PAUSE) == (before + 1 >= oracle_cap(setting)), z3.Or(verdict == PAUSE, verdict == NOTE))

    base = prove(
        lambda: z3.Implies(z3.And(c >= 0, setting >= 0, now <= work), continuation(c)),
        label="k = 1: from any count c, a continuation with no new work counts c + 1 and pauses iff c + 1 >= the cap", ties=ties,
    )
    step = prove(
        lambda: z3.Implies(z3.And(c >= 0, k >= 1, setting >= 0, count == c + k, now <= work), continuation(count)),
        label="k to k + 1 continuations with no new work: the count c + k becomes c + k + 1, a pause iff it reaches the cap", ties=ties,
    )
    reaches = prove(
        lambda: z3.Implies(
            z3.And(c >= 0, setting >= 0, now <= work, count == c + oracle_cap(setting) - 1),
            check_encoding(*same, work, count, now, setting)[0] == PAUSE,
        ),
        label="the continuation number k = cap (any directors.stallSteps, 0 the default) from any count c pauses the goal", ties=ties,
    )
    proof = all_of(induction(base, step, of="bend.progress.check", label="the continuations with no new work"), reaches)

    def hunt(seed: int, count: int, setting: int) -> bool:
        """Real transcripts of repeated acts: the work does not grow; the goal pauses within cap."""
        from eukhe.directors.progress import StallRecord, stall_check

        rng = random.Random(seed)
        events = random_transcript(rng, rng.randint(1, 10))
        acts = [e for e in events if e["op"] == "call"]
        works = production_works(events)
        work = works[-1]
        record, p_record = m.Record(RUN, GOAL, work, count), StallRecord(RUN, GOAL, work, count)
        again = [dict(rng.choice(acts), id=f"again{i}", at=9000 + i, text="once more") if acts else {"op": "text", "text": "waiting"} for i in range(m.stall_cap(setting))]
        paused = False
        for number in range(len(again)):
            now = production_works(events + again[: number + 1])[-1]
            if now != work or m.work(model_ledger(events + again[: number + 1])) != work:
                raise LawFailed(f"a repeated act grew the work: {again[number]!r}")
            checked, p_checked = m.check(record, RUN, GOAL, now, setting), stall_check(p_record, RUN, GOAL, now, setting)
            if (checked.verdict, checked.count) != (p_checked.verdict, p_checked.count):
                return False
            record, p_record = checked.record, p_checked.record
            paused = paused or checked.verdict == m.PAUSE
        return paused

    more = examples(hunt, seed=st.integers(0, 2**32), count=st.one_of(st.integers(0, 20), st.integers(0, 2**64)), setting=st.integers(0, 8))
    return also(proof, agreement(), more).with_production(all_of(agreement(), ledger_evidence()))


@law(
    "goal_progress_continues",
    "S5.8",
    "A continuation with an act the session never did before clears the count and the goal continues, from any count (model and production).",
    PROVED,
)
def goal_progress_continues() -> Evidence:
    count, setting, work, now = z3.Ints("count setting work now")
    held, same_run, same_goal = z3.Bools("record same_run same_goal")

    def cleared() -> Any:
        verdict, after = check_encoding(held, same_run, same_goal, work, count, now, setting)
        return z3.Implies(z3.And(count >= 0, setting >= 0, now > work), z3.And(verdict == CONTINUE, after == 0))

    clears = prove(
        cleared, ties=[_check.tie], assumptions=different_names(),
        label="the work grew (now > the record's): continue with the count 0, from any count, record and directors.stallSteps",
    )
    proof = all_of(clears, new_act_grows_work())

    def record_agrees(picks: list[int], fresh: int) -> bool:
        acts = [m.call_act("t", str(p), "r", p % 2 == 0) for p in picks]
        ledger: m.Ledger = ()
        for a in acts:
            ledger = m.record_act(ledger, a)
        new = m.call_act("t", str(fresh), "r", fresh % 2 == 0)
        after_ledger = m.record_act(ledger, new)
        return (len(after_ledger) == len(ledger) + 1) == (new not in ledger) and len(set(after_ledger)) == len(after_ledger)

    def hunt(seed: int, count: int, setting: int) -> bool:
        from eukhe.directors.progress import StallRecord, stall_check

        rng = random.Random(seed)
        events = random_transcript(rng, rng.randint(0, 10))
        work = production_works(events)[-1] if events else 0
        seen = set(oracle_acts(events))
        fresh = {"op": "call", "id": "new", "at": 1, "text": "", "tool": "fresh", "args": {"n": seed}, "result": "new", "error": seed % 2 == 0}
        if oracle.act_key("fresh", {"n": seed}, "new", seed % 2 == 0) in seen:
            return True
        now = production_works(events + [fresh])[-1]
        checked = m.check(m.Record(RUN, GOAL, work, count), RUN, GOAL, now, setting)
        p_checked = stall_check(StallRecord(RUN, GOAL, work, count), RUN, GOAL, now, setting)
        return now == work + 1 and (checked.verdict, checked.count) == (p_checked.verdict, p_checked.count) == (m.GO_ON, 0)

    more = all_of(
        examples(hunt, seed=st.integers(0, 2**32), count=st.one_of(st.integers(0, 20), st.integers(0, 2**64)), setting=st.integers(0, 8)),
        examples(record_agrees, picks=st.lists(st.integers(0, 6), max_size=8), fresh=st.integers(0, 6)),
    )
    return also(proof, agreement(), more).with_production(all_of(agreement(), ledger_evidence()))

