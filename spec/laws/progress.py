"""Laws of the goal progress check (control.md S5.8; LAWS.bend section progress).

Both laws are named in the seed's prose (S5.8, "Laws"). A continuation is one call of the
check of the same run and goal, after the session did some acts. "Acts the session did
before" are acts already in the ledger; they may come back with other call ids, timestamps
and surrounding text, which are no work. The model (bend/progress.py) and the production
ledger and check (impl/eukhe/directors/progress.py) run the same cases: the seed ties them
by the progress bridge, and the law holds on both.

Exhaustive bound: acts from an alphabet of 3 (two calls differing in one key field, one
accepted note); every ledger of a subset of them (in alphabet order); every start count
0..5; every cap 0..4 (0 takes the default 3); every choice, per continuation, of no act or
one act of the ledger repeated (with a fresh call id and timestamp). Hypothesis hunts
beyond: caps 0..8, counts 0..20, ledgers and repeats from an alphabet of 8 acts.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass

from hypothesis import strategies as st

from bend import progress as m
from spec.evidence import Evidence, all_of, also, bounded, examples
from spec.registry import BOUNDED, law


@dataclass(frozen=True)
class Said:
    """One act as the transcript says it: the key fields plus what is no work."""

    act: m.Act
    call_id: str
    at: str


ALPHABET: tuple[m.Act, ...] = (
    m.call_act("bash", '{"cmd":"make"}', "ok", False),
    m.call_act("bash", '{"cmd":"make"}', "ok", True),
    m.note_act("tests pass"),
)
WIDE: tuple[m.Act, ...] = ALPHABET + (
    m.call_act("read", '{"path":"a"}', "text", False),
    m.call_act("read", '{"path":"b"}', "text", False),
    m.call_act("read", '{"path":"a"}', "other", False),
    m.call_act("edit", '{"path":"a"}', "", False),
    m.note_act("step two"),
)
RUN, GOAL = "run-1", "goal-1"


def model_feed(ledger: m.Ledger, said: tuple[Said, ...]) -> m.Ledger:
    for item in said:
        ledger = m.record_act(ledger, item.act)
    return ledger


class Production:
    """The production ledger and check, fed like the model."""

    def __init__(self, acts: tuple[m.Act, ...]) -> None:
        from eukhe.directors.progress import WorkLedger

        self.ledger = WorkLedger()
        for act in acts:
            self.feed(act)

    def feed(self, act: m.Act) -> None:
        import json

        if act.kind == m.CALL:
            self.ledger.call(act.tool, json.loads(act.args), act.result, act.error)
        else:
            self.ledger.note(act.result, accepted=True)


def run_both(
    ledger: m.Ledger, count: int, cap: int, continuations: tuple[tuple[Said, ...], ...]
) -> tuple[list[str], list[str]]:
    """The verdicts of the model and of production over continuations of one run and goal."""
    from eukhe.directors.progress import StallRecord, stall_check

    record: m.Record | None = m.Record(RUN, GOAL, m.work(ledger), count)
    production = Production(ledger)
    p_record: StallRecord | None = StallRecord(RUN, GOAL, production.ledger.work, count)
    model_verdicts: list[str] = []
    production_verdicts: list[str] = []
    for said in continuations:
        ledger = model_feed(ledger, said)
        checked = m.check(record, RUN, GOAL, m.work(ledger), cap)
        record = checked.record
        model_verdicts.append(f"{checked.verdict}{checked.count}")
        for item in said:
            production.feed(item.act)
        p_checked = stall_check(p_record, RUN, GOAL, production.ledger.work, cap)
        p_record = p_checked.record
        production_verdicts.append(f"{p_checked.verdict}{p_checked.count}")
    return model_verdicts, production_verdicts


def ledgers(alphabet: tuple[m.Act, ...]) -> Iterator[m.Ledger]:
    for size in range(len(alphabet) + 1):
        yield from itertools.combinations(alphabet, size)


def repeats(ledger: m.Ledger, number: int, continuations: int) -> Iterator[tuple[tuple[Said, ...], ...]]:
    options: tuple[tuple[Said, ...], ...] = ((),) + tuple((Said(act, f"call-{number}-{i}", f"t{i}"),) for i, act in enumerate(ledger))
    yield from itertools.product(options, repeat=continuations)


COUNTS = range(0, 6)
CAPS = range(0, 5)


@law(
    "goal_stops_without_progress",
    "S5.8",
    "Continuations in a row whose acts the session did before, as many as the cap, pause the goal from any count (model and production).",
    BOUNDED,
)
def goal_stops_without_progress() -> Evidence:
    def cases() -> Iterator[tuple[m.Ledger, int, int, tuple[tuple[Said, ...], ...]]]:
        for ledger in ledgers(ALPHABET):
            for cap in CAPS:
                for count in COUNTS:
                    for continuations in repeats(ledger, count, m.stall_cap(cap)):
                        yield ledger, count, cap, continuations

    def prop(case: tuple[m.Ledger, int, int, tuple[tuple[Said, ...], ...]]) -> bool:
        ledger, count, cap, continuations = case
        model, production = run_both(ledger, count, cap, continuations)
        return model == production and any(v.startswith(m.PAUSE) for v in model)

    proof = bounded(
        cases(),
        prop,
        label=(
            f"every ledger over 3 acts, start counts {COUNTS.start}..{COUNTS.stop - 1}, caps {CAPS.start}..{CAPS.stop - 1} "
            "(0 = default 3), every choice of a repeated act or none per continuation, cap continuations"
        ),
    )

    def hunt(ledger_picks: list[int], count: int, cap: int, picks: list[int]) -> bool:
        ledger: m.Ledger = ()
        for pick in ledger_picks:
            ledger = m.record_act(ledger, WIDE[pick])
        continuations: tuple[tuple[Said, ...], ...] = ()
        for i in range(m.stall_cap(cap)):
            pick = picks[i] if i < len(picks) else -1
            said = () if not ledger or pick < 0 else (Said(ledger[pick % len(ledger)], f"c{i}", f"t{i}"),)
            continuations = continuations + (said,)
        model, production = run_both(ledger, count, cap, continuations)
        return model == production and any(v.startswith(m.PAUSE) for v in model)

    more = examples(
        hunt,
        ledger_picks=st.lists(st.integers(0, len(WIDE) - 1), max_size=8),
        count=st.integers(0, 20),
        cap=st.integers(0, 8),
        picks=st.lists(st.integers(-1, 7), max_size=8),
    )
    return also(proof, more)


@law(
    "goal_progress_continues",
    "S5.8",
    "A continuation with an act the session never did before clears the count and the goal continues, from any count (model and production).",
    BOUNDED,
)
def goal_progress_continues() -> Evidence:
    def cases() -> Iterator[tuple[m.Ledger, m.Act, int, int]]:
        for ledger in ledgers(ALPHABET):
            for act in ALPHABET:
                if act in ledger:
                    continue
                for cap in CAPS:
                    for count in range(0, 8):
                        yield ledger, act, count, cap

    def prop(case: tuple[m.Ledger, m.Act, int, int]) -> bool:
        ledger, act, count, cap = case
        model, production = run_both(ledger, count, cap, ((Said(act, "fresh", "t"),),))
        return model == production == [m.GO_ON + "0"]

    proof = bounded(
        cases(),
        prop,
        label="every ledger over 3 acts, every act not in it, start counts 0..7, caps 0..4 (0 = default 3)",
    )

    def hunt(ledger_picks: list[int], fresh: int, count: int, cap: int) -> bool:
        ledger: m.Ledger = ()
        for pick in ledger_picks:
            if pick != fresh:
                ledger = m.record_act(ledger, WIDE[pick])
        model, production = run_both(ledger, count, cap, ((Said(WIDE[fresh], "x", "y"),),))
        return model == production == [m.GO_ON + "0"]

    more = examples(
        hunt,
        ledger_picks=st.lists(st.integers(0, len(WIDE) - 1), max_size=8),
        fresh=st.integers(0, len(WIDE) - 1),
        count=st.integers(0, 20),
        cap=st.integers(0, 8),
    )
    return also(proof, more)
