"""Import earlier sessions into the chat as note messages (memory.md rule 5, kind note: memories
from before the chat).

Sessions of the session store (``eukhe.session``) come in oldest first (the store's id order,
which starts with the creation time), and within a session its main conversation's entries as
the model saw them, in order. Each entry becomes one note ``[session <id>] <kind>: <text>``
(a long one several consecutive notes, rule 10). No repeated pastes: an entry is known by the
hash of its path from the root (every kind and content up to and including it), so the entries a
forked session shares with the session it came from come in once, while the same words said in
two unrelated sessions both come in. The hash is the message's key (D2): a second import adds
nothing, and an import cut by a crash goes on where it stopped.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass

from eukhe.memory.owner import Memory
from eukhe.memory.records import Kind
from eukhe.session import MAIN, Store


@dataclass(frozen=True)
class Imported:
    sessions: int
    added: int  # messages logged by this import
    known: int  # entries already in the chat (an earlier import, or a shared fork prefix)


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict) and isinstance(block.get("text"), str) and block.get("type") != "thinking":
                parts.append(block["text"])
            elif isinstance(block, str):
                parts.append(block)
        if parts:
            return "\n".join(parts)
    return json.dumps(content, ensure_ascii=False, sort_keys=True)


def import_sessions(memory: Memory, sessions: Store, step: Callable[[int, int], None] | None = None) -> Imported:
    """Every session in, oldest first; ``step`` (if any) gets (sessions done, sessions) after each."""
    added = known = count = 0
    seen: set[str] = set()
    ids = sessions.ids()
    for session_id in ids:
        with sessions.open(session_id, writer=False) as session:
            entries = session.conversation(MAIN).model_view()
        count += 1
        path = hashlib.sha256()
        for entry in entries:
            text = _text(entry.content)
            path.update(json.dumps([entry.kind.value, entry.custom_type, text], ensure_ascii=False).encode("utf-8"))
            key = "import:" + path.hexdigest()
            if key in seen or not text:
                known += 1
                continue
            seen.add(key)
            _, logged = memory.appended(f"[session {session_id}] {entry.kind.value}: {text}", Kind.NOTE, key)
            added += logged  # what this import logged, not what the chat grew by (another import may append too)
            known += logged == 0
        if step is not None:
            step(count, len(ids))
    return Imported(count, added, known)
