"""Synthetic message sizes after the note (short user words, replies, tool calls, clipped tool
output) from a fixed seed: the optchat bridge's long scenario and the benchmarks use them. The
synthetic run of the planner (``eukhe memory simulate``) is a command:
``eukhe.commands.memory_simulate``.
"""

from __future__ import annotations

import random
from collections.abc import Iterator


def note_size(r: random.Random) -> int:
    """A message size after the note: short user words, replies, tool calls, clipped tool output."""
    kind = r.random()
    if kind < 0.30:
        return r.randint(20, 400)
    if kind < 0.55:
        return r.randint(300, 2_500)
    if kind < 0.80:
        return r.randint(80, 600)
    return r.randint(1_000, 30_000)


def note_sizes(count: int, seed: int) -> Iterator[int]:
    r = random.Random(seed)
    for _ in range(count):
        yield note_size(r)
