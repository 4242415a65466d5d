"""What a conversation logs (memory.md rules 3, 8, 9, 10): its entries become message lines.

- user text: kind user; the agent's text: kind eukhe; a tool call: kind tool, the tool's name
  and its JSON input; a tool result: kind echo, clipped to head and tail (``cap_text``); a
  subagent's report: kind work, ``[Name] report``; a thought is never logged (rule 8).
- ``cap_text``: tool output longer than ``CAP`` characters keeps its head and its tail with a
  marker between them naming how many characters were cut, ``CAP`` characters in all (rule 9).
- ``split_text``: any other text longer than ``CAP`` characters becomes several consecutive
  messages of at most ``CAP`` characters, cut after a newline where one falls in the second
  half of a piece; joined they give the text back, nothing lost (rule 10).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from eukhe.memory.records import Kind

CAP = 30_000


def cap_text(text: str, cap: int = CAP) -> str:
    """At most ``cap`` characters: the head, a marker, the tail."""
    if len(text) <= cap:
        return text
    clipped = len(text) - cap
    while True:  # the marker's length depends on the number it names: settle it
        marker = f"\n[... {clipped} characters clipped ...]\n"
        settled = len(text) - (cap - len(marker))
        if settled == clipped:
            break
        clipped = settled
    keep = cap - len(marker)
    head = keep - keep // 2
    return text[:head] + marker + text[len(text) - (keep - head) :]


def split_text(text: str, cap: int = CAP) -> list[str]:
    """Consecutive pieces of at most ``cap`` characters whose join is ``text``."""
    pieces: list[str] = []
    start = 0
    while len(text) - start > cap:
        end = start + cap
        newline = text.rfind("\n", start + cap // 2, end)
        if newline >= 0:
            end = newline + 1
        pieces.append(text[start:end])
        start = end
    pieces.append(text[start:])
    return pieces


def entry_lines(block: Mapping[str, object]) -> list[tuple[Kind, str]]:
    """The messages one content block logs: ``{"type": "text"|"thinking"|"tool_use"|
    "tool_result"|"user"|"report", ...}``."""
    kind = block.get("type")
    if kind == "thinking":
        return []
    if kind == "tool_use":
        call = f"{block.get('name')} {json.dumps(block.get('input'), ensure_ascii=False, sort_keys=True)}"
        return [(Kind.TOOL, piece) for piece in split_text(call)]
    if kind == "tool_result":
        return [(Kind.ECHO, cap_text(str(block.get("text", ""))))]
    if kind == "report":
        return [(Kind.WORK, piece) for piece in split_text(f"[{block.get('name')}] {block.get('text', '')}")]
    if kind in ("text", "user"):
        out = Kind.EUKHE if kind == "text" else Kind.USER
        return [(out, piece) for piece in split_text(str(block.get("text", ""))) if piece]
    raise ValueError(f"unknown content block type {kind!r}")


def conversation_lines(blocks: Sequence[Mapping[str, object]]) -> list[tuple[Kind, str]]:
    out: list[tuple[Kind, str]] = []
    for block in blocks:
        out.extend(entry_lines(block))
    return out
