"""The chat memory (memory.md): the pure planner core (view, batched fit, compaction view,
work queue) in ``view`` and ``chat``. Storage, the compactor's model calls, prompts and turns
sit on this core (later).

Constants keep the seed's names (memory.md rules 23, 29, 33, 37-40; D5).
"""

NODE = 512
VIEW_CEILING = 128_000
VIEW_FLOOR = 64_000
COMPACTION_CEILING = 32_000
COMPACTION_FLOOR = 16_000
JOBS = 8
WINDOW = 8
FAILURES = 3
TRIES = 5
BLOCK = 4
PLACEHOLDER = "(not summarized yet: zoom it)"
PLACEHOLDER_BYTES = len(PLACEHOLDER.encode("utf-8"))
