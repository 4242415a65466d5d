"""Item 9: the cache-read shares of turns and compactions against the scripted server (a short
run here; `eukhe memory simulate --messages 3000 --cache` is the measured one)."""

from __future__ import annotations

from eukhe.commands.memory_cache import measure


def test_a_short_chat_reads_most_of_its_turns_from_cache() -> None:
    stats = measure(80, seed=7).stats()
    assert stats["messages"] == 80 and stats["turns"] > 10 and stats["compactions"] > 10
    assert 50.0 < stats["turn_cache_read_percent"] <= 100.0
    assert 50.0 < stats["compaction_cache_read_percent"] <= 100.0
    assert stats["rewritten_lines_per_message"] == 0.0  # 80 messages never pass 128 KB
