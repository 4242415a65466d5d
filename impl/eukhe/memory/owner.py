"""One owner per chat (memory.md rule 7, §7.12): the lock socket in the chat directory.

``open_memory(directory)`` claims the chat: the process that takes an exclusive ``flock`` on
``<chat>/owner`` (the kernel drops it when the holder dies) owns it: it opens the store, folds
the view, and serves the lock socket ``<chat>/lock`` (bound under a temporary name, then renamed
over the path, so a stale socket left by a dead owner is replaced in one step). Any other handle
is a client: it connects to the lock socket and sends each call (append, view, zoom, date,
status) as one JSON line, the owner answering with one JSON line. When the owner dies the
client's connection ends; its next call claims the chat again and, winning the lock, takes over:
it opens the store from disk and carries on. A client's appends carry a key (D2), so a call
retried across a takeover is never logged twice.

Errors: ``MemoryBusy`` (no owner could be reached or claimed), ``StoreError`` from the store,
``ZoomError`` for a zoom that names no node, ``ValueError`` for a bad call.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from eukhe import strict_json
from eukhe.memory.chat import Config, ZoomError
from eukhe.memory.durable import DurableChat
from eukhe.memory.lines import split_text
from eukhe.memory.records import Kind, StoreError, kind_of
from eukhe.memory.store import Store, local_now
from eukhe.memory.view import render_lines
from eukhe.session.private import make_dirs
from eukhe.paths import socket_address

LOCK = "lock"
OWNER = "owner"
CLAIM_SECONDS = 10.0
REPLY_SECONDS = 10.0  # how long a closing owner waits for its replies to reach clients that do not read


class Zoom(list[str]):
    """What zoom(id, n) gives: its lines (a list), and for n = 1 the message's ``images`` (rule 53:
    the files under ``images/<id>/``)."""

    def __init__(self, lines: list[str], images: list[Path]) -> None:
        super().__init__(lines)
        self.images = images


class MemoryBusy(StoreError):
    """The chat has an owner that does not answer, or none could be claimed in time."""


class Core:
    """The owner's chat: the store and the durable planner, one call at a time."""

    def __init__(self, directory: Path, config: Config, now: Callable[[], str] = local_now) -> None:
        self.store = Store(directory, now=now)
        self.chat = DurableChat.open(config, self.store.messages, self.store.tree, self.store, self.store.now)
        self.saved = self.store.check(self.chat.chat.view.nodes)
        self.lock = threading.RLock()  # reentrant: a turn holds it while the compactor it drives logs (eukhe.memory.turn)
        self.sent = threading.Condition(self.lock)
        self.unsent = 0  # replies made for clients and not yet sent: close waits for them
        self.closed = False

    def call(self, request: dict[str, Any]) -> dict[str, Any] | None:
        """The reply to one call; None once the owner has closed (its clients must claim again)."""
        with self.lock:
            if self.closed:
                return None
            try:
                return {"ok": self._call(request)}
            except (ZoomError, ValueError, StoreError) as error:
                # the class a client raises again: a store's error stays one (exit 1 on the command
                # line, not bad input), whichever subclass (CorruptLine, IdGap, LostLines, ...)
                kind = "ZoomError" if isinstance(error, ZoomError) else "StoreError" if isinstance(error, StoreError) else "ValueError"
                return {"error": kind, "kind": type(error).__name__, "message": str(error)}

    def serve(self, request: dict[str, Any]) -> dict[str, Any] | None:
        """``call`` for a client: the reply is counted unsent until ``delivered``, so a close that
        comes between the call and its reply waits for the reply to leave (else a client whose
        append was logged would call again and hear that its key was logged by someone else)."""
        with self.lock:
            reply = self.call(request)
            if reply is not None:
                self.unsent += 1
            return reply

    def delivered(self) -> None:
        with self.lock:
            self.unsent -= 1
            self.sent.notify_all()

    def _call(self, request: dict[str, Any]) -> Any:
        op = request.get("op")
        chat = self.chat.chat
        if op == "append":
            text, key = request.get("text"), request.get("key")
            if not isinstance(text, str) or not text:
                raise ValueError("append needs a text of at least one character")
            kind = kind_of(request.get("kind", "user"))
            pieces = split_text(text)
            ids = []
            before = chat.t
            for number, piece in enumerate(pieces):
                piece_key = None if key is None else (str(key) if len(pieces) == 1 else f"{key}/{number}")
                ids.append(self.chat.message(piece, kind, piece_key))
            if request.get("count"):  # how many of the ids this call logged (a known key logs nothing)
                return {"ids": ids, "added": self.chat.chat.t - before}
            return ids
        if op == "view":
            return render_lines(list(chat.view.nodes), chat.text)
        if op == "zoom":
            ident, n = int(request["id"]), int(request["n"])
            lines = chat.zoom(ident, n)
            images = [str(path) for path in self.store.images(ident)] if n == 1 else []
            return {"lines": lines, "images": images}
        if op == "image":
            ident, name, data = int(request["id"]), request.get("name"), request.get("data")
            if not 0 <= ident < chat.t:
                raise ValueError(f"no message {ident}: the chat has {chat.t}")
            if not isinstance(name, str) or not isinstance(data, str):
                raise ValueError("an image needs a name and its bytes")
            return str(self.store.save_image(ident, name, base64.b64decode(data, validate=True)))
        if op == "date":
            ident = int(request["id"])
            if not 0 <= ident < chat.t:
                raise ValueError(f"no message {ident}: the chat has {chat.t}")
            return self.chat.date(ident)
        if op == "status":
            return {
                "messages": chat.t,
                "nodes": chat.built_count,
                "view_lines": len(chat.view),
                "view_bytes": chat.view.total,
                "ceiling": chat.config.ceiling,
                "shrinking": chat.open,
                "saved_view": self.saved,
                "directory": str(self.store.directory),
            }
        raise ValueError(f"unknown call {op!r}")

    def close(self) -> None:
        with self.lock:
            self.closed = True
            self.sent.wait_for(lambda: self.unsent == 0, timeout=REPLY_SECONDS)
            self.store.close()


class Memory:
    """A handle on one chat: its owner, or a client of the owner."""

    def __init__(self, directory: Path, config: Config = Config(), now: Callable[[], str] = local_now) -> None:
        self.directory = directory
        self.config = config
        self.core: Core | None = None
        self._lock_fd = -1
        self._server: socket.socket | None = None
        self._conn: socket.socket | None = None
        self._reader: Any = None
        self._threads: list[threading.Thread] = []
        self._accepted: set[socket.socket] = set()
        self._closing = False
        self.now = now  # the clock of the messages' dates and day files, when this handle owns the chat
        try:
            make_dirs(directory)  # 0700: the chat's socket and files are the user's alone
        except OSError as error:
            raise StoreError(f"cannot make the chat directory {directory}: {error}") from error
        self._claim()

    @property
    def is_owner(self) -> bool:
        return self.core is not None

    # -- claiming ---------------------------------------------------------------------------------

    def _claim(self) -> None:
        deadline = time.monotonic() + CLAIM_SECONDS
        while True:
            if self._try_own() or self._try_connect():
                return
            if time.monotonic() > deadline:
                raise MemoryBusy(f"{self.directory}: the chat's owner holds its lock but does not answer on {LOCK}")
            time.sleep(0.002)  # the owner is between taking its lock and renaming its socket into place

    def _try_own(self) -> bool:
        fd = os.open(self.directory / OWNER, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"pid {os.getpid()}\n".encode(), 0)
            self.core = Core(self.directory, self.config, self.now)
            server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            temporary = f".{LOCK}.{os.getpid()}.{uuid.uuid4().hex[:8]}"
            with socket_address(self.directory, temporary) as address:
                server.bind(address)
            server.listen(64)
            os.replace(self.directory / temporary, self.directory / LOCK)
        except BaseException:
            if self.core is not None:
                self.core.close()
                self.core = None
            os.close(fd)
            raise
        self._lock_fd = fd
        self._server = server
        thread = threading.Thread(target=self._serve, name="eukhe-memory-owner", daemon=True)
        thread.start()
        self._threads.append(thread)
        return True

    def _try_connect(self) -> bool:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            with socket_address(self.directory, LOCK) as address:
                conn.connect(address)
        except (ConnectionRefusedError, FileNotFoundError):
            conn.close()
            return False
        self._conn = conn
        self._reader = conn.makefile("rb")
        return True

    # -- serving ----------------------------------------------------------------------------------

    def _serve(self) -> None:
        server = self._server
        assert server is not None
        while not self._closing:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            thread = threading.Thread(target=self._answer, args=(conn,), daemon=True)
            thread.start()

    def _answer(self, conn: socket.socket) -> None:
        self._accepted.add(conn)
        with conn, conn.makefile("rb") as reader:
            for line in reader:
                core = self.core
                if core is None:
                    return
                try:
                    request = strict_json.loads(line, limit=strict_json.RECORD_DEPTH, finite=False)
                    refusal = None if isinstance(request, dict) else "a call is a JSON object"
                except ValueError as error:
                    refusal = f"not JSON: {error}"
                if refusal is not None:
                    if not self._send(conn, {"error": "ValueError", "message": refusal}):
                        return
                    continue
                reply = core.serve(request)
                if reply is None:
                    return  # closed: the client sees the end and claims the chat again
                try:
                    sent = self._send(conn, reply)
                finally:
                    core.delivered()
                if not sent:
                    return

    @staticmethod
    def _send(conn: socket.socket, reply: dict[str, Any]) -> bool:
        try:
            conn.sendall((json.dumps(reply, ensure_ascii=False) + "\n").encode("utf-8"))
        except OSError:
            return False
        return True

    # -- calls ------------------------------------------------------------------------------------

    def _call(self, request: dict[str, Any]) -> Any:
        while True:
            if self.core is not None:
                answer = self.core.call(request)
                assert answer is not None, "a closed handle was called"
                reply = answer
            else:
                try:
                    assert self._conn is not None
                    self._conn.sendall((json.dumps(request, ensure_ascii=False) + "\n").encode("utf-8"))
                    line = self._reader.readline()
                    if not line:
                        raise ConnectionResetError("the owner closed the connection")
                    reply = json.loads(line)
                except OSError:
                    self._drop()
                    self._claim()  # the owner died: take over, or reach the new owner
                    continue
            if "error" in reply:
                kind = {"ZoomError": ZoomError, "StoreError": StoreError}.get(reply["error"], ValueError)
                raise kind(reply["message"])
            return reply["ok"]

    def _drop(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def append(self, text: str, kind: Kind | str = Kind.USER, key: str | None = None) -> list[int]:
        """Log ``text`` (several messages when long, rule 10); the ids. A client's append always
        carries a key, so a retry after a takeover is not logged twice."""
        if key is None and self.core is None:
            key = f"client-{uuid.uuid4().hex}"
        value = kind.value if isinstance(kind, Kind) else kind
        return list(self._call({"op": "append", "text": text, "kind": value, "key": key}))

    def appended(self, text: str, kind: Kind | str, key: str) -> tuple[list[int], int]:
        """``append`` with a key, and how many messages this call logged: 0 when the key was logged
        before (by this handle or by another process's), which no count of the chat's messages
        around the call can tell while another process appends too."""
        value = kind.value if isinstance(kind, Kind) else kind
        reply = self._call({"op": "append", "text": text, "kind": value, "key": key, "count": True})
        return list(reply["ids"]), int(reply["added"])

    def view(self) -> list[str]:
        return list(self._call({"op": "view"}))

    def zoom(self, ident: int, n: int) -> Zoom:
        """zoom(id, n): the lines; for n = 1 the message whole with its images (rule 53)."""
        reply = self._call({"op": "zoom", "id": ident, "n": n})
        return Zoom(reply["lines"], [Path(p) for p in reply["images"]])

    def save_image(self, ident: int, name: str, data: bytes) -> Path:
        """Keep an image of message ``ident`` in ``images/<id>/<name>`` (rule 53)."""
        return Path(self._call({"op": "image", "id": ident, "name": name, "data": base64.b64encode(data).decode("ascii")}))

    def date(self, ident: int) -> str:
        return str(self._call({"op": "date", "id": ident}))

    def status(self) -> dict[str, Any]:
        return dict(self._call({"op": "status"}))

    def close(self) -> None:
        self._closing = True
        self._drop()
        if self._server is not None:
            try:
                os.unlink(self.directory / LOCK)
            except FileNotFoundError:
                pass
            try:
                self._server.shutdown(socket.SHUT_RDWR)  # wakes the thread blocked in accept
            except OSError:
                pass
            self._server.close()
            self._server = None
        if self.core is not None:
            core, self.core = self.core, None
            core.close()  # after the replies already made have left: see Core.serve
        for conn in list(self._accepted):
            try:
                conn.shutdown(socket.SHUT_RDWR)  # each client sees the end and claims again
            except OSError:
                pass
        if self._lock_fd >= 0:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            os.close(self._lock_fd)
            self._lock_fd = -1

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def status_line(status: dict[str, Any]) -> str:
    """The status bar's ``mem N/128K`` and the counts."""
    return (
        f"mem {status['view_bytes'] // 1000}K/{status['ceiling'] // 1000}K"
        f"  messages {status['messages']}  nodes {status['nodes']}  view lines {status['view_lines']}"
    )

