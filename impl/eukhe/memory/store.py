"""The chat memory on disk (memory.md rules 1, 2, 6, 25, D1, D2): one chat directory,
``<agent dir>/chat/main/`` by default::

    YYYY-MM-DD.jsonl        messages {i, kind, text, size, date} (+ key, D2), split by day
    tree/YYYY-MM-DD.jsonl   node lines {l, i, text, size} and merge lines {merge, open, t}
    view.json               the view as [l, i] pairs, replaced after each change
    images/                 images of messages (zoom(id, 1), rule 53): images/<i>/<name>
    lock, owner             the lock socket and the owner's lock file (eukhe.memory.owner)
    index.bin               what the last full read of the logs found (``eukhe.memory.index``): a
                            cache, never the truth; a start scans only the lines appended since

Private (issue 30): every file here is created 0600 and every directory 0700, with no chmod
after the write (``eukhe.session.private``); the lock socket lives in the 0700 chat directory.

Append only, one write and one fsync per line (``eukhe.memory.daylog``). At open the day files
are scanned (``eukhe.memory.index``): texts stay on disk, read by id when asked for. When
index.bin fits the files (its checksum holds and each covered prefix still has its fingerprint)
only the bytes after the covered prefixes are scanned; any other index is scanned past (``index``
says which: missing, unreadable, stale, used) and the logs are read whole, with the same result. The view is
folded from the messages and the merge lines (``eukhe.memory.fold``) and checked against
view.json: ``saved`` says whether it matched, was stale, missing or unreadable. view.json is
never the truth (D1): it is replaced (a new file renamed over it) without fsync, so a crash may
lose it or leave it stale; the fold gives the identical view either way. A gap in message ids
is an ``IdGap`` naming the file and the line. Lines lost from the logs (a day file deleted, cut or
replaced) are refused as ``eukhe.memory.fold`` says, view.json being one of the witnesses.

The store is the sink of ``eukhe.memory.durable.DurableChat``; one process owns it
(``eukhe.memory.owner``, rule 7).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path

from eukhe import strict_json
from eukhe.memory.daylog import Appender
from eukhe.memory.index import MessageLog, Resume, Stale, TreeLog, index_bytes, parse_index
from eukhe.memory.records import MergeLine, Message, NodeLine, StoreError
from eukhe.memory.view import Node
from eukhe.session.private import create_new, make_dirs, replace

VIEW_FILE = "view.json"
INDEX_FILE = "index.bin"
INDEX_GROWTH = 8 << 20  # bytes scanned past the index that make a start write it again (or a quarter of the logs)
TREE_DIR = "tree"
IMAGES_DIR = "images"


def chat_dir(agent_dir: Path, name: str = "main") -> Path:
    return agent_dir / "chat" / name


def local_now() -> str:
    """The local date and time with its offset, to the second: a message line's ``date``."""
    return datetime.now().astimezone().isoformat(timespec="seconds")


class Store:
    """One chat directory: what is logged, and the open ends of its logs."""

    def __init__(self, directory: Path, *, now: Callable[[], str] = local_now) -> None:
        self.directory = directory
        self.now = now
        try:
            make_dirs(directory)
            make_dirs(directory / IMAGES_DIR)
        except OSError as error:
            raise StoreError(f"cannot make the chat directory {directory}: {error}") from error
        self.index = "missing"  # what the start found of the index: missing, unreadable, stale, used
        self.index_written = False
        self.messages, self.tree = self._scan()
        if self.messages.gap is not None:
            raise self.messages.gap
        self.saved = self._read_view()
        self._main = Appender(directory, self.messages.tail, lambda: self.now()[:10])
        self._tree = Appender(directory / TREE_DIR, self.tree.tail, lambda: self.now()[:10])
        self.view_writes = 0
        self.lines = [len(self.messages), len(self.tree)]  # message lines, tree lines (read or written)

    def _scan(self) -> tuple[MessageLog, TreeLog]:
        """The two logs, read from the end of what the index covers when it fits the files, else
        whole; the index written again when it was not used or the logs grew past it by
        ``INDEX_GROWTH`` bytes or a quarter (a failed write only leaves the next start slower)."""
        path = self.directory / INDEX_FILE
        resumes: tuple[Resume, Resume] | None = None
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            pass
        except OSError:
            self.index = "unreadable"
        else:
            resumes = parse_index(data)
            self.index = "unreadable" if resumes is None else "used"
        if resumes is not None:
            messages: MessageLog | None = None
            try:
                messages = MessageLog(self.directory, resumes[0])
                tree = TreeLog(self.directory / TREE_DIR, len(messages), resumes[1])
            except (Stale, StoreError):
                if messages is not None:
                    messages.close()
                self.index = "stale"
            else:
                if messages.gap is None and tree.problem is None:
                    covered = sum(c.bytes for c in messages.covered + tree.covered if c is not None)
                    grown = covered - sum(c.bytes for r in resumes for c in r.files)
                    if grown > 0 and (grown >= INDEX_GROWTH or 4 * grown >= covered):
                        self._write_index(messages, tree)
                    return messages, tree
                messages.close()
                tree.close()
                self.index = "stale"  # an error: the full scan names it as it would without an index
        messages = MessageLog(self.directory)
        tree = TreeLog(self.directory / TREE_DIR, len(messages))
        self._write_index(messages, tree)
        return messages, tree

    def _write_index(self, messages: MessageLog, tree: TreeLog) -> None:
        data = index_bytes(messages, tree, self.directory, self.directory / TREE_DIR)
        if data is None:
            return
        path = self.directory / INDEX_FILE
        try:
            replace(path, data, self.directory / f".{INDEX_FILE}.tmp")  # a cache: no fsync
        except OSError:
            return
        self.index_written = True

    def _read_view(self) -> list[Node] | str:
        """The saved view, or ``missing`` / ``unreadable``."""
        path = self.directory / VIEW_FILE
        try:
            data = strict_json.loads(path.read_bytes(), limit=strict_json.RECORD_DEPTH, finite=False)
        except FileNotFoundError:
            return "missing"
        except (OSError, ValueError):
            return "unreadable"
        if not isinstance(data, list) or not all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in p) for p in data
        ):
            return "unreadable"
        return [(p[0], p[1]) for p in data]

    def saved_view(self) -> tuple[Path, list[Node]] | None:
        """view.json's path and the view it held at open (None: missing or unreadable), for the
        reopening to check against the log (``eukhe.memory.fold.unreached``)."""
        return None if isinstance(self.saved, str) else (self.directory / VIEW_FILE, list(self.saved))

    def check(self, view: Sequence[Node]) -> str:
        """How the view.json found at open compares with the folded view."""
        if isinstance(self.saved, str):
            return self.saved
        return "matches" if list(self.saved) == list(view) else "stale"

    # -- the sink ---------------------------------------------------------------------------------

    def message(self, record: Message) -> None:
        self._main.append(record)
        self.lines[0] += 1

    def node(self, record: NodeLine) -> None:
        self._tree.append(record)
        self.lines[1] += 1

    def merge(self, record: MergeLine) -> None:
        self._tree.append(record)
        self.lines[1] += 1

    def view(self, nodes: Sequence[Node]) -> None:
        """Replace view.json: a new file renamed over the old one (no fsync: D1, it is a check)."""
        path = self.directory / VIEW_FILE
        data = json.dumps([list(n) for n in nodes], separators=(",", ":")).encode("utf-8")
        try:
            replace(path, data, self.directory / f".{VIEW_FILE}.{os.getpid()}")  # a check (D1): no fsync
        except OSError as error:
            raise StoreError(f"cannot save {path}: {error}") from error
        self.view_writes += 1

    # -- images -----------------------------------------------------------------------------------

    def save_image(self, i: int, name: str, data: bytes) -> Path:
        """Keep an image of message ``i`` (rule 53): 0600, fsynced, its directory too (and a new
        ``images/<i>`` directory's entry)."""
        if not name or "/" in name or name.startswith("."):
            raise StoreError(f"an image name is a plain file name, not {name!r}")
        folder = self.directory / IMAGES_DIR / str(i)
        path = folder / name
        try:
            make_dirs(folder)
            create_new(path, data)
        except FileExistsError:
            raise StoreError(f"message {i} already has an image named {name!r}") from None
        except OSError as error:
            raise StoreError(f"cannot save the image {path}: {error}") from error
        return path

    def images(self, i: int) -> list[Path]:
        folder = self.directory / IMAGES_DIR / str(i)
        return sorted(folder.iterdir()) if folder.is_dir() else []

    def close(self) -> None:
        self._main.close()
        self._tree.close()
        self.messages.close()
        self.tree.close()
