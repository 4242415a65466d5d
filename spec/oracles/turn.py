"""What a turn must send and log, from the seed's text (memory.md rules 1, 10, 11, 14-18, 47,
49-51, 55, D10, D11): the judge of ``eukhe.memory.turn``. It reads the chat from its files on
disk (the log is the truth, rule 1) and never imports the code it judges.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from spec.oracles.optchat import flatten as flatten  # rule 16, one judge for both

# rule 18: the placeholder of a line not summarized yet (a turn's view never shows it: D10)
PLACEHOLDER = "(not summarized yet: zoom it)"
# rule 11: a node is at most 512 bytes; D10: an unsummarized line shows its input cut to 512 bytes
LIMIT = 512
# rules 9, 10: long texts split into messages of at most 30,000 characters
PAGE = 30_000
# D11: the new message is marked "Turn:" (model-only); a subagent's task is not
TURN_MARK = "Turn:"
# rule 58: a subagent's final reply comes back as one work message "[Name] report"
WORK = "work"
LINE = re.compile(r"(\d+)\+(\d+)\|")


def cut_bytes(text: str, limit: int = LIMIT) -> str:
    """D10, rule 36: the longest prefix of whole characters of at most ``limit`` UTF-8 bytes."""
    used = 0
    for k, char in enumerate(text):
        used += len(char.encode("utf-8"))
        if used > limit:
            return text[:k]
    return text


def messages(chat: Path) -> list[tuple[str, str, str]]:
    """The chat's messages on disk, by id: (kind, text, date) (rule 1: <chat>/YYYY-MM-DD.jsonl)."""
    rows: dict[int, tuple[str, str, str]] = {}
    for path in sorted(chat.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").split("\n"):
            if not line:
                continue
            record = json.loads(line)
            if "i" in record:
                rows[record["i"]] = (record["kind"], record["text"], record["date"])
    assert sorted(rows) == list(range(len(rows))), "message ids run 0, 1, 2, ... (rule 2)"
    return [rows[i] for i in range(len(rows))]


def node_lines(chat: Path) -> list[tuple[tuple[int, int], str]]:
    """The built nodes in the order they were logged (rule 1: tree/YYYY-MM-DD.jsonl {l, i, text})."""
    out = []
    for path in sorted((chat / "tree").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").split("\n"):
            if not line:
                continue
            record = json.loads(line)
            if "l" in record:
                out.append(((record["l"], record["i"]), record["text"]))
    return out


def saved_view(chat: Path) -> list[tuple[int, int]]:
    """The view as [l, i] pairs (rule 1: view.json)."""
    return [(pair[0], pair[1]) for pair in json.loads((chat / "view.json").read_text(encoding="utf-8"))]


def view_text(nodes: list[tuple[int, int]], built: dict[tuple[int, int], str], texts: list[str]) -> str:
    """The view a turn sends (rules 15, 16, 18, D10): ``<chat>``, one ``id+n|text`` line per node
    (its summary; a message not summarized yet: its text cut to 512 bytes), ``</chat>``."""
    lines = []
    for level, i in nodes:
        first, n = i << level, 1 << level
        if (level, i) in built:
            text = built[(level, i)]
        else:
            assert level == 0, f"only a message's own line waits for its summary (rule 18), not {first}+{n}"
            text = cut_bytes(texts[first])
        lines.append(f"{first}+{n}|{flatten(text)}")
    return "<chat>\n" + "".join(line + "\n" for line in lines) + "</chat>"


def covered(view: str) -> list[int]:
    """The messages a rendered view covers, in line order (rule 14)."""
    out: list[int] = []
    for line in view.split("\n")[1:-1]:
        head = LINE.match(line)
        assert head is not None, f"a view line is id+n|text, not {line[:60]!r}"
        first, n = int(head.group(1)), int(head.group(2))
        out.extend(range(first, first + n))
    return out


def pages_of(text: str, pages: list[str]) -> bool:
    """Rule 10, 55: a long text is logged as consecutive messages, none longer than a page,
    nothing lost: joined they are the text."""
    return "".join(pages) == text and all(0 < len(p) <= PAGE for p in pages) and len(pages) >= -(-len(text) // PAGE)
