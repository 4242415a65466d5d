"""The optchat_store bridge: the production planner on its store (``eukhe.memory.store`` in a
real directory, fsync per line) and the model (``bend.optchat_store``) run the same scenarios;
``restart`` closes the store and reopens the chat from disk mid-scenario, and the transcript goes
on byte for byte (memory.md rule 25, D1, D7, F1).

Scenarios: 0 and 1 = 250 and 350 messages with a late compactor (calls end, fail, turns wait)
and restarts every 20-120 events; 2..7 = random runs with small budgets and restarts; 8..299 =
short runs (``bridge.optchat.short``: tens of events, every job count, the sizes at the 512-byte
cut) with restarts every 2-24 events, some before any message and some twice in a row, so that
the short runs alone reach every rule case and input class; 300 = a short run whose second
restart finds the store's index (index.bin, a cache: memory.md D1) taken by a directory, so it
can be neither read nor written again: every later start scans the logs whole, and the
transcript goes on as if the index were not there. The directory is made under
/dev/shm when it exists (real files, cheap fsync), else the temp dir.

This printer drives eukhe code only: it never imports the model.
"""

from __future__ import annotations

import random
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from bridge.core import Bridge, Event
from bridge.optchat import Recorded, _late, classes, planner_config, play, short
from eukhe.memory.chat import Chat, Config
from eukhe.memory.durable import DurableChat
from eukhe.memory.store import INDEX_FILE, Store

COUNT = 301
SHORT_FIRST = 8
INDEX_TAKEN = 300  # the scenario whose index.bin a directory takes
CLOCK = "2026-11-30T12:00:00+00:00"


def _restarts(r: random.Random, events: list[Event]) -> list[Event]:
    out: list[Event] = []
    gap = r.randint(20, 120)
    for event in events:
        out.append(event)
        gap -= 1
        if gap == 0 and event.get("e") != "config":
            out.append({"e": "restart"})
            gap = r.randint(20, 120)
    return out


def _random(r: random.Random) -> list[Event]:
    events: list[Event] = [planner_config(r, 9_000)]
    for _ in range(r.randint(200, 400)):
        roll = r.random()
        if roll < 0.45:
            events.append({"e": "m", "size": r.randint(1, 900) if r.random() < 0.5 else r.randint(1, 4_000)})
        elif roll < 0.72:
            events.append({"e": "done", "k": r.randrange(8), "size": r.randint(1, 512)})
        elif roll < 0.80:
            events.append({"e": "fail", "k": r.randrange(8)})
        elif roll < 0.83:
            events.append({"e": "wait"})
        elif roll < 0.86:
            events.append({"e": "tick"})
        elif roll < 0.89:
            events.append({"e": "go"})
        elif roll < 0.93:
            events.append({"e": "idle"})
        else:
            n = 1 << r.randint(0, 4)
            events.append({"e": "zoom", "id": r.randint(0, 30) * n, "n": n})
    events.append({"e": "idle"})
    return events


def _short(r: random.Random, index: int) -> list[Event]:
    """A short run with restarts every 2-24 events, one right after the config at times, and at
    times two in a row."""
    events = short(r, 1 + index % 8)
    out: list[Event] = events[:1] + ([{"e": "restart"}] if r.random() < 0.15 else [])
    gap = r.randint(2, 24)
    for event in events[1:]:
        out.append(event)
        gap -= 1
        if gap == 0:
            out.extend({"e": "restart"} for _ in range(2 if r.random() < 0.15 else 1))
            gap = r.randint(2, 24)
    return out


def generate(index: int) -> list[Event]:
    if index == INDEX_TAKEN:
        events = _short(random.Random(7_100_011 + index), index)
        restarts = [k for k, event in enumerate(events) if event.get("e") == "restart"]
        events[restarts[1]] = {"e": "restart", "index": "directory"}
        return events
    if index >= SHORT_FIRST:
        return _short(random.Random(7_100_011 + index), index)
    r = random.Random(7_000_011 + index)
    if index in (0, 1):
        config: Event = {"e": "config", "jobs": 6 - index, "ceiling": 12_000, "floor": 6_000, "cceiling": 4_000, "cfloor": 2_000}
        return _restarts(r, _late(r, 250 + 100 * index, config))
    return _restarts(r, _random(r))


class _Run:
    """One scenario's chat on its store in a directory of its own (a ``bridge.optchat.Driver``)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.config = Config()
        self.store: Store | None = None
        self.durable = self._open(fresh=True)
        self.cases: set[str] = set()

    @property
    def chat(self) -> Chat:
        return self.durable.chat

    @property
    def act(self) -> DurableChat:
        return self.durable

    def configure(self, config: Config) -> None:
        self.config = config
        self.durable = self._open(fresh=True)

    def _open(self, fresh: bool) -> DurableChat:
        if self.store is not None:
            self.store.close()
        if fresh and self.root.exists():
            shutil.rmtree(self.root)
        self.store = Store(self.root, now=lambda: CLOCK)
        return DurableChat.open(self.config, self.store.messages, self.store.tree, self.store, lambda: CLOCK)

    def other(self, kind: object, event: Event) -> str | None:
        return self.restart(event.get("index")) if kind == "restart" else None

    def restart(self, index: object = None) -> str:
        if index == "directory":  # the index's path taken by a directory: it can be neither read nor replaced
            taken = self.root / INDEX_FILE
            taken.unlink(missing_ok=True)
            taken.mkdir()
            self.cases.add("restart_index_taken")
        chat = self.chat
        if chat.running:
            self.cases.add("restart_running")
        if chat.open:
            self.cases.add("restart_open")
        if chat.waiting:
            self.cases.add("restart_waiting")
        self.cases.add("restart")
        self.durable = self._open(fresh=False)
        if self.chat.merges:
            self.cases.add("restart_ready_merges")
        assert self.store is not None
        if self.store.check(self.chat.view.nodes) == "matches":
            self.cases.add("restart_view_json_matches")
        return f" log={self.store.lines[0]}+{self.store.lines[1]}"


def run(events: Sequence[Event]) -> tuple[list[str], set[str]]:
    root = Path(tempfile.mkdtemp(prefix="eukhe-bridge-", dir="/dev/shm" if Path("/dev/shm").is_dir() else None))
    try:
        state = _Run(root / "chat")
        out = play(events, state, frozenset({"restart"}))
        if state.store is not None:
            state.store.close()
        return out
    finally:
        shutil.rmtree(root, ignore_errors=True)


def store_classes(events: Sequence[Event]) -> set[str]:
    """The input classes of a scenario: the planner's (``bridge.optchat.classes``), a restart
    before any message, and two restarts in a row."""
    found = classes(events)
    messages = 0
    before: object = None
    for event in events:
        kind = event.get("e")
        if kind == "config":
            messages = 0
        elif kind == "m":
            messages += 1
        elif kind == "restart":
            if messages == 0:
                found.add("restart_before_any_message")
            if before == "restart":
                found.add("restart_twice_in_a_row")
        before = kind
    return found


RECORDED = Recorded(run, store_classes)


CASES = frozenset(
    {
        "restart",  # rule 25, D1: the chat reopened from disk mid-scenario
        "restart_open",  # F1: a restart while the view is still shrinking keeps it shrinking
        "restart_running",  # calls running at the restart are gone; their nodes wait again
        "restart_waiting",  # a turn waiting at the restart: no turn waits after it
        "restart_ready_merges",  # ready merges queued again in the order they became ready
        "restart_view_json_matches",  # D1: the folded view equals the saved view.json
        "restart_index_taken",  # D1: an index that can be neither read nor written changes nothing read
        "batch",  # rule 23
        "batch_resumed",  # rule 24, F1
        "free_merge",  # rule 12: free parents logged as node lines
        "fail_cap",  # D5: the cut line is logged as the node's line
        "zoom",
        # input classes (``store_classes``): the 512-byte cut from both sides, huge messages, the
        # shortest and longest compactor lines, every job count, a restart of a chat with no
        # message, restarts in a row
        "message_1_bytes",
        "message_511_bytes",
        "message_512_bytes",
        "message_513_bytes",
        "message_huge",
        "line_1_bytes",
        "line_512_bytes",
        *(f"jobs_{n}" for n in range(1, 9)),
        "restart_before_any_message",
        "restart_twice_in_a_row",
    }
)


def _model(events: Sequence[Event]) -> list[str]:
    from bend.optchat_store import transcript  # the model side, never used by production

    return transcript(events)


BRIDGE = Bridge(
    area="optchat_store",
    count=COUNT,
    generate=generate,
    model=_model,
    production=RECORDED.production,
    cases=CASES,
    reached=RECORDED.reached,
)
