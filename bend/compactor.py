"""The compactor's line-building conversation, as a pure model (memory.md rule 37, D9; rules
35, 36; docs/harness.md H1 as the seed uses it: every line is 1-512 bytes).

One node's line is built in one conversation with the model:

1. The first call asks for the line. A reply is a text and, possibly, thinking.
2. A reply whose text (ends stripped) is empty -- nothing, or thinking only -- counts as the
   last try: the conversation ends (D9, a model that thought 12,000 tokens and wrote nothing).
3. A line of at most 512 bytes ends the conversation: it is the line (the first fit).
4. A line over 512 bytes gets a follow-up in the same conversation: the line is N bytes, over
   the limit; the whole line again, cutting the least valuable items; it shows the first 512
   bytes followed by the marker ``| ← LIMIT`` (rule 36). The shortest line so far is kept.
5. A follow-up whose reply is not shorter than the best line so far ends the tries (D9, a
   local model that repeated a 1,300-byte line).
6. At most 5 calls (TRIES, rule 37).

The line is the best (shortest) reply cut to 512 bytes at a character boundary; with no reply
at all, the node's input cut the same way (D9). Every line is 1-512 bytes when the input is
not empty.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

TRIES = 5
NODE = 512
LIMIT_MARK = "| ← LIMIT"


@dataclass(frozen=True)
class Reply:
    """One model reply: its text, and whatever thinking came with it (never logged, rule 8)."""

    text: str
    thinking: str = ""


@dataclass(frozen=True)
class Call:
    """One call of the conversation: the follow-up it sent (empty for the first call) and the
    reply's line (text with its ends stripped)."""

    follow_up: str
    line: str


@dataclass(frozen=True)
class Outcome:
    line: str
    calls: tuple[Call, ...]
    source: str  # "reply" or "input"


def size(text: str) -> int:
    return len(text.encode("utf-8"))


def cut(text: str, limit: int = NODE) -> str:
    """At most ``limit`` bytes of ``text``, never splitting a character (rule 36, D9)."""
    return text.encode("utf-8")[:limit].decode("utf-8", errors="ignore")


def follow_up(line: str) -> str:
    """The follow-up for a line over the limit: its size, and its first 512 bytes followed by
    the marker (rule 36; worded anew)."""
    return f"The line is {size(line)} bytes, over the limit of {NODE}. Write the whole line again, cutting the least valuable items.\n{cut(line)}{LIMIT_MARK}"


def build_line(source: str, replies: Sequence[Reply]) -> Outcome:
    """The conversation for one node whose input is ``source``, the model answering with
    ``replies`` in order (a missing reply counts as an empty one)."""
    calls: tuple[Call, ...] = ()
    best: str | None = None
    asked = ""
    while len(calls) < TRIES:
        reply = replies[len(calls)] if len(calls) < len(replies) else Reply("")
        line = reply.text.strip()
        calls = calls + (Call(asked, line),)
        if line == "":
            break
        if best is not None and size(line) >= size(best):
            break
        best = line
        if size(best) <= NODE:
            break
        asked = follow_up(best)
    if best is None:
        return Outcome(cut(source), calls, "input")
    return Outcome(cut(best), calls, "reply")


def transcript(events: list[dict[str, Any]]) -> list[str]:
    """The compactor bridge's transcript (``bridge/compactor.py``): for each node event, each
    call's follow-up (empty for the first) and the line it answered before, the number of
    calls, then the line with its origin and size."""
    lines: list[str] = []
    for n, event in enumerate(events):
        replies = [Reply(r["text"], r.get("thinking", "")) for r in event["replies"]]
        out = build_line(event["source"], replies)
        for k, call in enumerate(out.calls):
            said = json.dumps(out.calls[k - 1].line, ensure_ascii=False) if k else "-"
            lines.append(f"{n} call {k} said={said} ask={json.dumps(call.follow_up, ensure_ascii=False)}")
        lines.append(f"{n} calls {len(out.calls)}")
        lines.append(f"{n} line {out.source} {size(out.line)} {json.dumps(out.line, ensure_ascii=False)}")
    return lines


if __name__ == "__main__":
    import sys

    from bend import scenario

    raise SystemExit(scenario.main(transcript, sys.argv[1:]))
