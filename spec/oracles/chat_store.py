"""The chat memory's log lines as the seed writes them (memory.md rule 1, D1, D2, D3, F1; rules
3-5, 9): the judge of ``eukhe.memory.records`` and ``eukhe.memory.lines``, transcribed as data.
Never imports the code it judges."""

from __future__ import annotations

import json

# memory.md rule 1: main/YYYY-MM-DD.jsonl {i, kind, text, size, date}; D2: a message line may carry key.
MESSAGE_FIELDS = {"i": "natural", "kind": "kind", "text": "text", "size": "natural", "date": "string"}
MESSAGE_OPTIONAL = {"key": "string"}
# rule 1: tree/YYYY-MM-DD.jsonl {l, i, text, size}
NODE_FIELDS = {"l": "natural", "i": "natural", "text": "text", "size": "natural"}
# F1: each batch writes a tree/ line {merge, open, t}
MERGE_FIELDS = {"merge": "pairs", "open": "boolean", "t": "natural"}
# rules 3-5, D3: the kinds; old talk lines read as eukhe
KINDS = ("user", "eukhe", "tool", "echo", "work", "note")
OLD_KINDS = {"talk": "eukhe"}
# rule 9: tool output clipped to head + tail, 30,000 characters in all
CAP = 30_000

# Values of each JSON type, and which field types accept them.
VALUES: dict[str, object] = {
    "null": None,
    "true": True,
    "zero": 0,
    "negative": -1,
    "huge": 10**30,
    "float": 1.5,
    "empty string": "",
    "string": "x",
    "list": [],
    "object": {},
}
ACCEPTS = {
    "natural": {"zero", "huge"},
    "string": {"empty string", "string"},
    "text": {"empty string", "string"},
    "boolean": {"true"},
    "kind": set(),  # only the names in KINDS / OLD_KINDS
    "pairs": {"list"},
}


def size_of(text: str) -> int:
    """UTF-8 bytes (the seed: sizes are UTF-8 bytes, never tokens)."""
    return len(text.encode("utf-8"))


# -- lines as the seed writes them (rule 1; rule 6: one line per record, each ended by a newline) ----
# The law's own writer of day-file lines: a JSON object per line with the fields of rule 1 (D2's key,
# F1's merge line), sizes in UTF-8 bytes. Written with the JSON library's default spacing, not the
# compact form the store writes: a reader of the log reads any JSON object line.


def _line(body: dict[str, object]) -> bytes:
    return (json.dumps(body, ensure_ascii=False) + "\n").encode("utf-8")


def message_line(i: int, kind: str, text: str, date: str, key: str | None = None) -> bytes:
    """Rule 1: a line of main/YYYY-MM-DD.jsonl, {i, kind, text, size, date} (D2: and key)."""
    body: dict[str, object] = {"i": i, "kind": kind, "text": text, "size": size_of(text), "date": date}
    if key is not None:
        body["key"] = key
    return _line(body)


def node_line(level: int, i: int, text: str) -> bytes:
    """Rule 1: a line of tree/YYYY-MM-DD.jsonl, {l, i, text, size}."""
    return _line({"l": level, "i": i, "text": text, "size": size_of(text)})


def merge_line(pairs: list[tuple[int, int]], open_: bool, t: int) -> bytes:
    """F1: a batch's tree/ line, {merge: [[l, i], ...], open, t}."""
    return _line({"merge": [[level, i] for level, i in pairs], "open": open_, "t": t})
