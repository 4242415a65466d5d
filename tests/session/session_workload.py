"""The crash test's workload: operation ``i`` of a run, the same in the writer process and in
the test's model, from a seed and ``i`` alone (no state but the entry ids it picks from)."""

from __future__ import annotations

import random
from dataclasses import dataclass

from eukhe.session import Conversation, Json, Kind, NewEntry, display, row, user

CONVERSATIONS = ("main", "main.worker")
DOC_NAMES = ("eukhe.cvar.agent", "eukhe.directors", "eukhe.goal")


@dataclass(frozen=True)
class Op:
    conversation: str
    entries: tuple[NewEntry, ...]
    documents: dict[str, Json]
    rewind_pick: int | None  # a rewind to the pick-th entry id (mod their count), when there are entries


def op_at(seed: int, index: int) -> Op:
    rng = random.Random(f"session-crash:{seed}:{index}")
    conversation = CONVERSATIONS[0] if rng.random() < 0.75 else CONVERSATIONS[1]
    entries: list[NewEntry] = []
    for n in range(rng.randint(0, 3)):
        roll = rng.random()
        text = f"op {index} entry {n} " + "x" * rng.randint(0, 300)
        if roll < 0.4:
            entries.append(user(text))
        elif roll < 0.7:
            entries.append(NewEntry(rng.choice([Kind.ASSISTANT, Kind.TOOL_CALL, Kind.TOOL_RESULT]), {"text": text}))
        elif roll < 0.85:
            entries.append(display(rng.choice(["eukhe.director", "eukhe.settings_error"]), text))
        else:
            entries.append(row("eukhe.goal_context", text))
    documents: dict[str, Json] = {}
    for name in DOC_NAMES:
        if rng.random() < 0.3:
            documents[name] = {"op": index, "layers": [rng.randint(0, 9) for _ in range(rng.randint(0, 4))]}
    if not entries and not documents:
        entries.append(user(f"op {index}"))
    rewind_pick = rng.randint(0, 10**6) if rng.random() < 0.12 else None
    return Op(conversation, tuple(entries), documents, rewind_pick)


def apply_to_store(op: Op, conversation: Conversation) -> None:
    if op.rewind_pick is not None and conversation.head is not None:
        ids = [e.id for e in conversation.entries()]
        conversation.rewind(ids[op.rewind_pick % len(ids)])
    else:
        conversation.commit(op.entries, op.documents)
