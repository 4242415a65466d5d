"""The loopback server's model of Anthropic's prompt cache (spec/loopback.py ``PromptCache``),
checked against the documented rules on hand-built request bodies: an entry per mark keyed by
the whole prefix; a read at the longest prefix whose entry lies within 20 blocks before a mark
(the mark's own block counted first); writes from there to the last mark; plain input after it;
the minimum cacheable length; and the bookkeeping of why a byte was not read."""

from __future__ import annotations

import json
from typing import Any

from spec.loopback import LOOKBACK, PromptCache

API = "anthropic-messages"


def body(n: int, marks: set[int], tag: str = "", end: str | None = None) -> dict[str, Any]:
    """One user message of ``n`` text blocks (block k says ``b{k}``, ``tag`` after the first
    ``len(tag)`` blocks changes them), marks at ``marks``, then an optional last block ``end``."""
    blocks: list[dict[str, Any]] = []
    for k in range(n):
        block: dict[str, Any] = {"type": "text", "text": f"b{k}" + (tag if tag and k >= 5 else "")}
        if k in marks:
            block["cache_control"] = {"type": "ephemeral"}
        blocks.append(block)
    if end is not None:
        blocks.append({"type": "text", "text": end, "cache_control": {"type": "ephemeral"}})
    return {"system": [{"type": "text", "text": "system"}], "messages": [{"role": "user", "content": blocks}]}


def sizes(request: dict[str, Any]) -> list[int]:
    return [len(text.encode()) for text, _marked in PromptCache.blocks(API, request)]


def test_a_mark_writes_its_whole_prefix_and_the_rest_is_plain_input() -> None:
    cache = PromptCache()
    request = body(10, {4})
    s = sizes(request)  # system, then b0..b9: the mark on b4 is block 5
    usage = cache.account(API, request)
    assert (usage.cache_read, usage.cache_write, usage.input) == (0, sum(s[:6]), sum(s[6:]))
    again = cache.account(API, request)
    assert (again.cache_read, again.cache_write, again.input) == (sum(s[:6]), 0, sum(s[6:]))


def test_the_lookback_is_twenty_blocks_counting_the_marks_own() -> None:
    """An entry at block k is read by a mark at k + 19, not by a mark at k + 20."""
    assert LOOKBACK == 20
    for gap, read in ((19, True), (20, False)):
        cache = PromptCache()
        cache.account(API, body(40, {4}))  # entry at block 5 (system is block 0)
        request = body(40, {4 + gap})
        s = sizes(request)
        usage = cache.account(API, request)
        assert usage.cache_read == (sum(s[:6]) if read else 0), gap
        assert usage.cache_read + usage.cache_write + usage.input == sum(s)
        account = cache.accounts[-1]
        assert account.bytes.get(("prefix", "lookback"), 0) == (0 if read else sum(s[:6]))


def test_the_longest_entry_in_reach_of_any_mark_is_read() -> None:
    cache = PromptCache()
    cache.account(API, body(30, {2}))
    cache.account(API, body(30, {20}))
    request = body(30, {10, 25})
    s = sizes(request)
    usage = cache.account(API, request)
    assert usage.cache_read == sum(s[:22])  # the entry at b20 (block 21), from the mark at b25
    assert usage.cache_write == sum(s[22:27])


def test_a_changed_block_breaks_every_later_entry() -> None:
    cache = PromptCache()
    cache.account(API, body(12, {3, 10}))
    request = body(12, {3, 10}, tag="x")  # b5.. differ: the entry at b10 is another prefix
    s = sizes(request)
    usage = cache.account(API, request)
    assert usage.cache_read == sum(s[:5])  # system, b0..b3
    account = cache.accounts[-1]
    # b4 was sent before (same prefix) but no entry ends there on this chain: unmarked
    assert account.bytes[("prefix", "unmarked")] == s[5]
    assert account.bytes[("prefix", "new")] == sum(s[6:12])
    assert account.bytes[("end", "new")] == s[12]


def test_below_the_minimum_a_mark_writes_nothing() -> None:
    request = body(6, {1})
    s = sizes(request)
    cache = PromptCache(minimum=sum(s[:3]) + 1)  # the mark on b1 ends block 2
    assert cache.account(API, request).cache_write == 0
    assert cache.account(API, request).cache_read == 0
    at = PromptCache(minimum=sum(s[:3]))
    at.account(API, request)
    assert at.account(API, request).cache_read == sum(s[:3])


def test_a_request_without_marks_is_all_plain_input() -> None:
    cache = PromptCache()
    request = body(5, set())
    usage = cache.account(API, request)
    assert (usage.cache_read, usage.cache_write, usage.input) == (0, 0, sum(sizes(request)))
    assert cache.accounts[-1].prefix == 0 and cache.accounts[-1].total == sum(sizes(request))


def test_the_end_region_follows_the_last_mark_before_the_final_block() -> None:
    cache = PromptCache(label=lambda b: str(len(json.dumps(b))))
    request = body(8, {3}, end="the message")
    s = sizes(request)
    cache.account(API, request)
    account = cache.accounts[-1]
    assert account.prefix == sum(s[:5]) and account.total == sum(s)
    assert account.label == str(len(json.dumps(request)))
    repeat = body(8, {3}, end="another message")
    cache.account(API, repeat)
    second = cache.accounts[-1]
    assert second.bytes[("prefix", "read")] == sum(s[:5])
    assert second.bytes[("end", "unmarked")] == sum(s[5:9])  # b4..b7 were sent, no entry ends there
    assert ("end", "new") in second.bytes


def test_tools_and_a_plain_system_string_are_blocks_too() -> None:
    request = {"tools": [{"name": "t", "description": "d", "input_schema": {}}], "system": "plain", "messages": [{"role": "user", "content": "hi"}]}
    blocks = PromptCache.blocks(API, request)
    assert len(blocks) == 3 and not any(marked for _t, marked in blocks)
    assert PromptCache.blocks(API, None) == []
    cache = PromptCache(keep=False)
    cache.account(API, request)
    assert cache.accounts == []
