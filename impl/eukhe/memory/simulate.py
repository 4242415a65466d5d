"""Synthetic message sizes after the note (short user words, replies, tool calls, clipped tool
output) from a fixed seed: the optchat bridge's long scenario and the benchmarks use them. The
synthetic run of the planner (``eukhe memory simulate``) is a command:
``eukhe.commands.memory_simulate``.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

# The note's size classes, in the order ``note_message`` draws them: what each stands for.
CLASSES = ("user", "reply", "call", "output")


def note_message(r: random.Random) -> tuple[str, int]:
    """A message after the note: its class (``CLASSES``: short user words, replies, tool calls,
    clipped tool output) and its size in bytes, the class drawn first."""
    kind = r.random()
    if kind < 0.30:
        return "user", r.randint(20, 400)
    if kind < 0.55:
        return "reply", r.randint(300, 2_500)
    if kind < 0.80:
        return "call", r.randint(80, 600)
    return "output", r.randint(1_000, 30_000)


def note_size(r: random.Random) -> int:
    """A message size after the note: short user words, replies, tool calls, clipped tool output."""
    return note_message(r)[1]


def note_sizes(count: int, seed: int) -> Iterator[int]:
    r = random.Random(seed)
    for _ in range(count):
        yield note_size(r)
