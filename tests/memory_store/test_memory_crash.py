"""The crash campaign of the chat memory on disk (memory.md rules 6, 13, 25, D1, D2, D8; issue 11).

A writer process (memory_writer.py) runs a seeded history of messages and compactor rounds on a
real chat directory and is killed with SIGKILL, at seeded points of three kinds:

- ``line``: inside the write of its N-th log line (a message line, a node line or a merge line),
  after a seeded part of the line's bytes: a torn last line;
- ``view``: while writing its N-th view.json, before the rename;
- ``free``: wherever it is once it has reported a seeded number of events (it runs on meanwhile).

The writer reports each event after it returns (its lines fsynced); the pipes synchronize, no
sleeps. After each kill the chat is reopened and checked:

- nothing acknowledged is lost: every reported message is in the log; none is logged twice (ids
  run 0, 1, 2, ... and every key is logged once, D2); the bytes before the kill are a prefix of
  the bytes after the reopen (nothing rewritten);
- the log on disk is a prefix of the model's log of the same history (``bend.optchat.fold``) and
  the reopened view and shrinking flag are the model's reopen of that prefix;
- the reopened view equals the view of the same history without any crash, except where D8 says
  otherwise (the batch line of a message that passed the ceiling lost: the batch runs at the next
  message). A chat that met D8 ends there and the campaign starts a fresh chat.

Then the next writer goes on from the first event not reported (the interrupted one is retried:
its key keeps its message from being logged twice). ``make test`` runs a small seeded number of
kills; ``EUKHE_HUNT=1`` (``make hunt``) at least 1,000.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from memory_workload import CLOCK, CONFIG, Event, history, line, text

from bend.optchat import chat as C
from bend.optchat.fold import Batch, Log, Msg, logged, reopen
from eukhe.memory.durable import DurableChat
from eukhe.memory.store import Store

HUNT = os.environ.get("EUKHE_HUNT") == "1"
KILLS = 1_000 if HUNT else 24
LENGTH = 160
WRITER = Path(__file__).with_name("memory_writer.py")
MODEL_CONFIG = C.Config(CONFIG.jobs, CONFIG.ceiling, CONFIG.floor, CONFIG.cceiling, CONFIG.cfloor)


@dataclass
class Reference:
    """The model of one chat: its log under the campaign's crashes, and the views of the same
    history without any crash (after each message count)."""

    events: list[Event]
    chat: C.Chat = field(default_factory=lambda: C.Chat(config=MODEL_CONFIG))
    log: Log = ()
    applied: int = 0
    plain: dict[int, tuple[tuple[tuple[int, int], ...], bool]] = field(default_factory=dict)
    batch_at: dict[int, bool] = field(default_factory=dict)  # message count -> its message batched from not open

    def __post_init__(self) -> None:
        chat = C.Chat(config=MODEL_CONFIG)
        self.plain[0] = ((), False)
        for event in self.events:
            before = chat
            chat = self._apply(chat, event, ordinal=chat.t)
            if chat.t > before.t:
                self.plain[chat.t] = (tuple(n for n, _ in chat.view), chat.open)
                self.batch_at[chat.t] = chat.batch >= 0 and not before.open

    @staticmethod
    def _apply(chat: C.Chat, event: Event, ordinal: int) -> C.Chat:
        if event[0] == "m":
            return C.message(chat, text(ordinal, event[1]))
        while chat.running:
            chat = C.done(chat, 0, line(chat.running[0]))
        return chat

    def run_to(self, number: int) -> None:
        """Apply events up to and including ``number`` to the crashed model, logging each."""
        while self.applied <= min(number, len(self.events) - 1):
            event = self.events[self.applied]
            ordinal = sum(1 for e in self.events[: self.applied] if e[0] == "m")
            if not (event[0] == "m" and ordinal < self.chat.t):  # a retried message is logged once
                if event[0] == "m":
                    after = C.message(self.chat, text(ordinal, event[1]))
                    self.log += logged(self.chat, after)
                    self.chat = after
                else:
                    while self.chat.running:
                        after = C.done(self.chat, 0, line(self.chat.running[0]))
                        self.log += logged(self.chat, after)
                        self.chat = after
            self.applied += 1


def _prefix(log: Log, messages: int, tree: int) -> int:
    m = n = 0
    for position, record in enumerate(log):
        if m == messages and n == tree:
            return position
        if isinstance(record, Msg):
            m += 1
        else:
            n += 1
    assert m == messages and n == tree, f"the disk holds {messages} message and {tree} tree lines; the model's log {m} and {n}"
    return len(log)


def _counts(log: Log) -> tuple[int, int]:
    messages = sum(1 for record in log if isinstance(record, Msg))
    return messages, len(log) - messages


def _bytes(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*.jsonl"))}


def _writer(directory: Path, seed: int, start: int, mode: str, target: int, cut: int) -> subprocess.Popen[bytes]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    argv = [sys.executable, str(WRITER), str(directory), str(seed), str(LENGTH), str(start), mode, str(target), str(cut)]
    return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)


def test_a_writer_killed_at_seeded_points_loses_and_doubles_nothing(tmp_path: Path) -> None:
    r = random.Random(11)
    kills = chats = d8 = gaps = torn = 0
    kinds: dict[str, int] = {}
    while kills < KILLS:
        chats += 1
        seed = r.randrange(10**6)
        directory = tmp_path / f"chat{chats}"
        reference = Reference(history(seed, LENGTH))
        start = 0
        before: dict[str, bytes] = {}
        while start < LENGTH and kills < KILLS:
            mode = r.choice(["line", "line", "line", "view", "free"])
            target = r.randint(1, 40)
            child = _writer(directory, seed, start, mode, target, r.randint(0, 999))
            assert child.stdout is not None
            acked = start - 1
            while True:
                said = child.stdout.readline().split()
                assert said, "the writer died on its own"
                if said[0] == b"ack":
                    acked = int(said[1])
                    if mode == "free" and acked - start + 1 >= target:
                        break
                else:
                    break  # "at" (stopped inside a write) or "end"
            child.kill()
            child.wait()
            kills += 1
            kinds[mode] = kinds.get(mode, 0) + 1
            # -- reopen and check
            for name, data in before.items():
                assert (directory / name).read_bytes().startswith(data), f"{name}: bytes before the kill were rewritten"
            store = Store(directory, now=lambda: CLOCK)
            while reference.applied < LENGTH and _counts(reference.log) < (len(store.messages), len(store.tree)):
                reference.run_to(reference.applied)  # the writer may have run past its last report
            torn += any(not data.endswith(b"\n") for data in _bytes(directory).values())
            m_acked = sum(1 for e in reference.events[: acked + 1] if e[0] == "m")
            assert len(store.messages) >= m_acked, "an acknowledged message is lost"
            keys = [m.key for m in store.messages]
            assert len(keys) == len(set(keys)), "a message is logged twice"
            position = _prefix(reference.log, len(store.messages), len(store.tree))
            model, reference.log = reopen(MODEL_CONFIG, reference.log[:position])
            durable = DurableChat.open(CONFIG, store.messages, store.tree, store, lambda: CLOCK)
            view = tuple(durable.chat.view.nodes)
            assert view == tuple(n for n, _ in model.view) and durable.chat.open == model.open
            assert list(durable.chat.running) == list(model.running)
            gaps += any(isinstance(rec, Batch) for rec in reference.log[position:])
            reference.chat = model
            reference.applied = acked + 1  # the next writer goes on from here, as the model does
            t = len(store.messages)
            store.close()
            before = _bytes(directory)
            lost_batch = reference.batch_at.get(t, False) and not any(
                isinstance(rec, Batch) and rec.t == t for rec in reference.log
            )
            if lost_batch:
                d8 += 1
                assert view == reference.plain[t - 1][0] + ((0, t - 1),) and not durable.chat.open
                break  # D8: this chat now differs from the plain history on purpose
            assert (view, durable.chat.open) == reference.plain[t], "the reopened view differs from the history without the crash"
            start = acked + 1
            if kills % 100 == 0:
                print(f"crash campaign: {kills} kills, {chats} chats, D8 {d8}, gaps {gaps}, torn {torn}", file=sys.stderr, flush=True)
    print(f"crash campaign: {kills} kills ({kinds}) over {chats} chats; torn tails {torn}; D8 lost batch lines {d8}; gap batches run at reopen {gaps}")
    assert kills >= KILLS
