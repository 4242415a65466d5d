"""The chat memory's log lines as the seed writes them (memory.md rule 1, D1, D2, D3, F1; rules
3-5, 9): the judge of ``eukhe.memory.records`` and ``eukhe.memory.lines``, transcribed as data.
Never imports the code it judges."""

from __future__ import annotations

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
