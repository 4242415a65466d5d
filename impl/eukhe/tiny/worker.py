"""The tiny worker (S9 worker): one process per model and backend, shared by every eukhe
process, started by a client as ``eukhe tiny-worker ID --backend onnx --agent-dir DIR``.

Seat (S9 worker 4, the choice is ``bend.tiny.seat``): holding the bind lock only while it
checks and binds, the worker pings the socket; a live worker answering means this one exits
(its starter uses the live one); a socket file nobody answers on is removed; then it binds and
listens, releases the lock and tells its starter ``ready`` on stdout.

Serve: each connection is read line by line and answered in order; ``ping`` answers the launch
tag ``<build id>|onnx|<device>|<dtype>``; ``shutdown`` removes the socket, answers ``bye``,
refuses new requests (``closing``) and lets the requests in flight finish in full before the
process exits; ``load``, ``chat``, ``transcribe``, ``speak`` run on the engine. Each connection
is answered in order, the connections of several processes side by side: S9 has a worker hold
the in-flight requests of several processes, and none of them waits for another's (the engine
loads once, under a lock; the loaded engines only read their state).
A line over the limit is answered ``bad_request`` and skipped. After ``idle`` with no request
(15 minutes, ``EUKHE_TINY_WORKER_IDLE_MS`` for tests) the worker removes its socket first,
then exits; SIGTERM does the same.
"""

from __future__ import annotations

import base64
import fcntl
import hashlib
import math
import os
import signal
import socket
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bend import tiny as model
from eukhe.tiny import engine as engines
from eukhe.paths import socket_address
from eukhe.tiny import paths, protocol

IDLE_ENV = "EUKHE_TINY_WORKER_IDLE_MS"
IDLE_DEFAULT_MS = 15 * 60 * 1000
DEVICE = "cpu"
READY = "ready"
LIVE = "live"


def build_id() -> str:
    """This build: the installed package's version and a digest of the tiny sources, so a new
    build never joins a worker of an old one."""
    from importlib import metadata

    try:
        version = metadata.version("eukhe")
    except metadata.PackageNotFoundError:  # sources on a path, not installed
        version = "0"
    digest = hashlib.sha256()
    here = Path(__file__).resolve().parent
    for source in sorted(here.glob("*.py")):
        digest.update(source.name.encode() + b"\0" + source.read_bytes())
    return f"{version}+{digest.hexdigest()[:12]}"


def launch_tag(device: str, dtype: str) -> str:
    return f"{build_id()}|{paths.BACKEND}|{device}|{dtype}"


def idle_ms(env: dict[str, str] | None = None) -> int:
    raw = (os.environ if env is None else env).get(IDLE_ENV, "")
    try:
        value = int(raw)
    except ValueError:
        return IDLE_DEFAULT_MS
    return value if value > 0 else IDLE_DEFAULT_MS


@dataclass(frozen=True)
class Probe:
    """A ping's answer: ``kind`` is ``tag`` (a worker answered ``tag``; same or other is the
    caller's to say), ``closing`` or ``none``; ``sock`` is the open connection after a tag."""

    kind: str
    sock: socket.socket | None = None
    tag: str | None = None
    pid: int | None = None
    reader: protocol.LineReader | None = None


def probe(path: Path, timeout: float = 30.0) -> Probe:
    """Connect to ``path`` and ping."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    reader = protocol.LineReader(sock)
    try:
        with socket_address(path.parent, path.name) as address:  # a long agent dir still fits (eukhe.paths)
            sock.connect(address)
        protocol.send(sock, {"op": "ping"})
        line = reader.read()
    except OSError:
        sock.close()
        return Probe(model.NONE)
    answer = protocol.decode(line) if isinstance(line, bytes) else None
    if answer is not None and answer.get("ok") and isinstance(answer.get("tag"), str):
        sock.settimeout(None)
        pid = answer.get("pid")
        return Probe("tag", sock, str(answer["tag"]), pid if isinstance(pid, int) else None, reader)
    sock.close()
    if answer is not None and answer.get("error") == "closing":
        return Probe(model.CLOSING)
    return Probe(model.NONE)


@dataclass
class _State:
    closing: bool = False
    inflight: int = 0
    last_activity: float = 0.0


class Worker:
    def __init__(self, agent_dir: Path, model_id: str, device: str, dtype: str, idle: int) -> None:
        self.agent_dir = agent_dir
        self.model_id = model_id
        self.tag = launch_tag(device, dtype)
        self.idle_s = idle / 1000.0
        self.sock_path = paths.socket_path(agent_dir, model_id)
        self.cond = threading.Condition()
        self.state = _State(last_activity=time.monotonic())
        self.engine: Any = None
        self.engine_lock = threading.Lock()
        self.listener: socket.socket | None = None
        self.bound_ino: int | None = None

    # -- seat -------------------------------------------------------------------------
    def take_seat(self) -> bool:
        """Bind under the bind lock; False when a live worker answered (this one exits)."""
        paths.ensure_run_dir(self.agent_dir)
        with open(paths.lock_path(self.agent_dir, self.model_id), "a+b") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            found = probe(self.sock_path)
            if found.sock is not None:
                found.sock.close()
                probed = model.LIVE
            elif self.sock_path.exists() or self.sock_path.is_symlink():
                probed = model.STALE
            else:
                probed = model.ABSENT
            choice = model.seat(probed)
            if choice == model.EXIT:
                return False
            if choice == model.CLEAR_AND_BIND:
                self.sock_path.unlink(missing_ok=True)
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            with socket_address(self.sock_path.parent, self.sock_path.name) as address:
                listener.bind(address)
            os.chmod(self.sock_path, 0o600)
            listener.listen(64)
            self.bound_ino = os.stat(self.sock_path).st_ino
            self.listener = listener
        return True

    def _remove_socket(self) -> None:
        """Remove our socket file (never a later worker's that took the path since)."""
        try:
            if os.stat(self.sock_path).st_ino == self.bound_ino:
                self.sock_path.unlink()
        except FileNotFoundError:
            pass
        if self.listener is not None:
            try:
                self.listener.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self.listener.close()

    def close(self) -> None:
        """Stop taking requests: socket removed first; requests in flight still finish."""
        with self.cond:
            if self.state.closing:
                return
            self.state.closing = True
            self._remove_socket()
            self.cond.notify_all()

    # -- serve ------------------------------------------------------------------------
    def serve_forever(self) -> None:
        threading.Thread(target=self._accept, daemon=True).start()
        with self.cond:
            while True:
                if self.state.closing and self.state.inflight == 0:
                    return
                if not self.state.closing and self.state.inflight == 0:
                    left = self.state.last_activity + self.idle_s - time.monotonic()
                    if left <= 0:
                        self.state.closing = True
                        self._remove_socket()
                        continue
                    self.cond.wait(min(left, 1.0))
                else:
                    self.cond.wait(1.0)

    def _accept(self) -> None:
        assert self.listener is not None
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._connection, args=(conn,), daemon=True).start()

    def _connection(self, conn: socket.socket) -> None:
        reader = protocol.LineReader(conn)
        try:
            while True:
                line = reader.read()
                if line is None:
                    return
                if line is protocol.OVER_LIMIT:
                    protocol.send(conn, {"ok": False, "error": "bad_request", "detail": f"line over {protocol.LINE_LIMIT} bytes"})
                    continue
                assert isinstance(line, bytes)
                request = protocol.decode(line)
                if request is None:
                    protocol.send(conn, {"ok": False, "error": "bad_request", "detail": "not a JSON object"})
                    continue
                op = request.get("op")
                if op == "ping":
                    with self.cond:
                        closing = self.state.closing
                    protocol.send(conn, {"ok": False, "error": "closing"} if closing else {"ok": True, "tag": self.tag, "pid": os.getpid()})
                    continue
                if op == "shutdown":
                    self.close()
                    protocol.send(conn, {"ok": True, "bye": True})
                    return
                with self.cond:
                    if self.state.closing:
                        refused = True
                    else:
                        refused = False
                        self.state.inflight += 1
                if refused:
                    protocol.send(conn, {"ok": False, "error": "closing"})
                    continue
                try:
                    # the answer is sent before the request stops counting as in flight: a closing
                    # worker whose last request ends may exit at once, and must not take an
                    # answer with it (a client then read "died mid-request")
                    protocol.send(conn, self._run(op, request))
                finally:
                    with self.cond:
                        self.state.inflight -= 1
                        self.state.last_activity = time.monotonic()
                        self.cond.notify_all()
        except OSError:
            return
        finally:
            conn.close()

    def _run(self, op: object, request: dict[str, Any]) -> dict[str, Any]:
        if op not in ("load", "chat", "transcribe", "speak"):
            return {"ok": False, "error": "bad_request", "detail": f"unknown op {op!r}"}
        with self.engine_lock:  # the engine loads once; its requests then run side by side
            try:
                if self.engine is None:
                    self.engine = engines.load(paths.model_dir(self.agent_dir, self.model_id))
            except engines.EngineError as error:
                return {"ok": False, "error": "not_installed", "detail": str(error)}
        if op == "load":
            return {"ok": True}
        if not hasattr(self.engine, str(op)):
            return {"ok": False, "error": "unsupported", "detail": f"{op} is not available for {self.model_id}"}
        try:
            if op == "chat":
                return self._chat(request)
            if op == "transcribe":
                return self._transcribe(request)
            return self._speak(request)
        except engines.RequestError as error:
            return {"ok": False, "error": "bad_request", "detail": str(error)}

    def _transcribe(self, request: dict[str, Any]) -> dict[str, Any]:
        audio = request.get("audio")
        language = request.get("language", "en")
        if not isinstance(audio, str) or not isinstance(language, str) or not language:
            return {"ok": False, "error": "bad_request", "detail": "transcribe wants audio (base64 WAV) and a language"}
        try:
            wav = base64.b64decode(audio, validate=True)
        except ValueError:
            return {"ok": False, "error": "bad_request", "detail": "audio is not base64"}
        return {"ok": True, "text": self.engine.transcribe(wav, language)}

    def _speak(self, request: dict[str, Any]) -> dict[str, Any]:
        text = request.get("text")
        voice = request.get("voice", "af_heart")
        speed = request.get("speed", 1.0)
        if (
            not isinstance(text, str)
            or not isinstance(voice, str)
            or isinstance(speed, bool)
            or not isinstance(speed, (int, float))
            or not math.isfinite(speed)
            or speed <= 0
        ):
            return {"ok": False, "error": "bad_request", "detail": "speak wants text, a voice and a positive speed"}
        wav = self.engine.speak(text, voice, float(speed))
        return {"ok": True, "audio": base64.b64encode(wav).decode("ascii")}

    def _chat(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self.engine is not None
        messages = request.get("messages")
        stop = request.get("stop", [])
        prefill = request.get("prefill", "")
        max_tokens = request.get("max_tokens", 256)
        if (
            not isinstance(messages, list)
            or not all(isinstance(m, dict) for m in messages)
            or not isinstance(stop, list)
            or not all(isinstance(s, str) for s in stop)
            or not isinstance(prefill, str)
            or not isinstance(max_tokens, int)
            or isinstance(max_tokens, bool)
            or max_tokens < 0
        ):
            return {"ok": False, "error": "bad_request", "detail": "chat wants messages, prefill, stop strings, max_tokens"}
        text = self.engine.chat(messages, prefill, stop, max_tokens)
        return {"ok": True, "text": text}


def run(agent_dir: Path, model_id: str, device: str, dtype: str) -> int:
    """The hidden command's body. stdout is the pipe to the starter: one line, ``ready`` or
    ``live``; the log (stderr) was opened by the starter."""
    worker = Worker(agent_dir, model_id, device, dtype, idle_ms())
    try:
        seated = worker.take_seat()
    except OSError as error:
        print(f"tiny worker {model_id}: cannot bind {worker.sock_path}: {error}", file=sys.stderr, flush=True)
        return 1
    print(READY if seated else LIVE, flush=True)
    # fd 1 becomes the log: dup2 closes the pipe to the starter (it reads to its end) while
    # sys.stdout stays an open stream, so the command line's final flush still works
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    if not seated:
        return 0
    print(f"tiny worker {model_id} pid {os.getpid()} serving {worker.sock_path} tag {worker.tag}", file=sys.stderr, flush=True)
    signal.signal(signal.SIGTERM, lambda *_: worker.close())
    worker.serve_forever()
    print(f"tiny worker {model_id} pid {os.getpid()} exits", file=sys.stderr, flush=True)
    return 0

