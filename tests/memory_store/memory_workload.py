"""The crash campaign's workload: a seeded history of messages (each with its key, D2) and
compactor rounds (``idle``: every running call ends with its line), shared by the writer process
and the test that checks it."""

from __future__ import annotations

import random

from eukhe.memory.chat import Config

CONFIG = Config(jobs=3, ceiling=3_000, floor=1_500, cceiling=1_200, cfloor=600)
CLOCK = "2026-11-30T12:00:00+00:00"

Event = tuple[str, int, str]


def history(seed: int, length: int) -> list[Event]:
    r = random.Random(seed)
    out: list[Event] = []
    for n in range(length):
        if r.random() < 0.6:
            size = r.randint(20, 500) if r.random() < 0.5 else r.randint(513, 2_500)
            out.append(("m", size, f"k{seed}-{n}"))
        else:
            out.append(("idle", 0, ""))
    return out


def text(ordinal: int, size: int) -> str:
    """The text of the ``ordinal``-th message: exactly ``size`` bytes, some of them multi-byte."""
    body = (f"m{ordinal} ζ " + "word ø " * (size // 4 + 1)).encode("utf-8")[:size].decode("utf-8", "ignore")
    return body + "." * (size - len(body.encode("utf-8")))


def line(node: tuple[int, int]) -> str:
    """The compactor's line for ``node`` (depends on the node alone, so any order builds the same)."""
    return f"line {node[0]}/{node[1]} " + "s" * (100 + (node[1] * 7 + node[0] * 13) % 300)
