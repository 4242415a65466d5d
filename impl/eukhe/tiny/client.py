"""The client of a tiny worker (S9 worker 1-6): elects a worker for its need, then sends
requests and reads one answer each, in order.

The election: every choice is ``bend.tiny``'s (``elect_step`` over ``on_ping``,
``on_shutdown``, ``on_launch``, ``on_check``); this module connects, pings, shuts down,
launches and reports. The run dir is made 0700 here too. A worker is launched detached, in its
own process group, with the agent dir on its command line (never from the environment), its
stdout a pipe for the one line ``ready``/``live`` and its stderr the log.

No read waits without a deadline: a ping's answer and a shutdown's bye (``answer_deadline``),
the launched worker's first line (the same; the process is then killed) and a request's answer
(``request_deadline``; the connection is then closed, so a late answer is never read as the next
one's). A missed deadline is ``NoAnswer``, naming what was waited for and the log.

A connection whose worker went away while nothing was in flight (it exited idle, was replaced,
or was killed) is stale: the next request finds it ended before sending anything and elects
again, silently (joining or starting the current worker). A request sent and then unanswered
because the worker died is ``Crashed``, as S9 says.
"""

from __future__ import annotations

import base64
import os
import select
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bend import tiny as model
from eukhe.tiny import paths, protocol
from eukhe.tiny.worker import DEVICE, LIVE, READY, Probe, launch_tag, probe


class TinyError(Exception):
    """A tiny model request that could not be served."""


class Crashed(TinyError):
    """The worker died (mid-request, or before it came up): names its log."""

    def __init__(self, model_id: str, log: Path, what: str) -> None:
        self.log = log
        super().__init__(f"tiny worker for {model_id} {what}; log: {log}")


class NoAnswer(TinyError):
    """A worker, or the process launched as one, that did not answer within its deadline: names
    what was waited for and the log."""

    def __init__(self, message: str, log: Path) -> None:
        self.log = log
        super().__init__(f"{message}; log: {log}")


ANSWER_DEADLINE = 60.0  # seconds: a ping's answer, a shutdown's bye, a launched worker's first line
REQUEST_DEADLINE = 1800.0  # seconds: a request's answer (a long transcription takes minutes)


class Contended(TinyError):
    """Other processes kept seating workers of other tags: the election gave up."""


class OutOfProtocol(TinyError):
    """The worker answered a line over the limit, or not a JSON object."""


class WorkerError(TinyError):
    """The worker answered an error (bad_request, not_installed, unsupported)."""

    def __init__(self, kind: str, detail: str) -> None:
        self.kind = kind
        super().__init__(f"{kind}: {detail}" if detail else kind)


Launcher = Callable[[Path, str, str, str], "subprocess.Popen[bytes]"]


def worker_command(agent_dir: Path, model_id: str, device: str, dtype: str) -> list[str]:
    return [
        sys.executable, "-m", "eukhe", "tiny-worker", model_id,
        "--backend", paths.BACKEND, "--agent-dir", str(agent_dir), "--device", device, "--dtype", dtype,
    ]  # fmt: skip


def launch(agent_dir: Path, model_id: str, device: str, dtype: str) -> subprocess.Popen[bytes]:
    """Start a worker: detached (own session and process group), stdout a pipe, stderr the log."""
    env = {k: v for k, v in os.environ.items() if k != "EUKHE_AGENT_DIR"}
    with open(paths.log_path(agent_dir, model_id), "ab") as log:
        process = subprocess.Popen(
            worker_command(agent_dir, model_id, device, dtype),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=log,
            start_new_session=True,
            close_fds=True,
            env=env,
        )
    threading.Thread(target=process.wait, daemon=True).start()  # reap it whenever it exits
    return process


class TinyClient:
    """One process's line to the worker of one model and launch tag."""

    def __init__(
        self,
        agent_dir: Path,
        model_id: str,
        *,
        dtype: str = "q4",
        device: str = DEVICE,
        launcher: Launcher = launch,
        answer_deadline: float = ANSWER_DEADLINE,
        request_deadline: float = REQUEST_DEADLINE,
    ) -> None:
        self.agent_dir = Path(agent_dir)
        self.model_id = model_id
        self.device = device
        self.dtype = dtype
        self.tag = launch_tag(device, dtype)
        self.launcher = launcher
        self.sock_path = paths.socket_path(self.agent_dir, model_id)
        self.log = paths.log_path(self.agent_dir, model_id)
        self.answer_deadline = answer_deadline
        self.request_deadline = request_deadline
        self.conn: Probe | None = None
        self.outcome: str | None = None

    @property
    def worker_pid(self) -> int | None:
        return None if self.conn is None else self.conn.pid

    def _kind(self, found: Probe) -> str:
        if found.kind == "tag":
            return model.SAME if found.tag == self.tag else model.OTHER
        return found.kind

    def ensure(self) -> str:
        """Elect a worker for this need: started, joined or replaced (bend.tiny.elect_step)."""
        paths.ensure_run_dir(self.agent_dir)
        self.close()
        state = model.Election("ping")
        found: Probe | None = None
        while not state.done:
            if state.phase in ("ping", "check"):
                if found is not None and found.sock is not None:
                    found.sock.close()
                found = probe(self.sock_path, self.answer_deadline)
                answer = self._kind(found)
            elif state.phase == "shutdown":
                answer = self._shutdown(found)
            else:
                answer = self._launch()
            after = model.elect_step(state, answer)
            assert after is not None, f"election: {answer} in phase {state.phase}"
            state = after
        if state.phase == model.CRASHED:
            if found is not None and found.sock is not None:
                found.sock.close()
            raise Crashed(self.model_id, self.log, "did not come up")
        if state.phase == model.CONTENDED:
            raise Contended(f"tiny worker for {self.model_id}: other workers kept the seat after {state.launches} launches")
        assert found is not None and found.sock is not None
        self.conn = found
        self.outcome = state.phase
        return state.phase

    def _shutdown(self, found: Probe | None) -> str:
        if found is None or found.sock is None or found.reader is None:
            return model.GONE
        try:
            protocol.send(found.sock, {"op": "shutdown"})
            line = found.reader.read(self.answer_deadline)
        except TimeoutError:
            raise NoAnswer(
                f"tiny worker for {self.model_id} (pid {found.pid}) did not answer shutdown with bye within {self.answer_deadline:g} s",
                self.log,
            ) from None
        except OSError:
            line = None
        finally:
            found.sock.close()
        answer = protocol.decode(line) if isinstance(line, bytes) else None
        return model.BYE if answer is not None and answer.get("bye") else model.GONE

    def _launch(self) -> str:
        try:
            process = self.launcher(self.agent_dir, self.model_id, self.device, self.dtype)
        except OSError:
            return model.FAILED
        assert process.stdout is not None
        try:
            line = _first_line(process.stdout.fileno(), self.answer_deadline)
        finally:
            process.stdout.close()
        if line is None:
            process.kill()  # it never said ready: not left behind
            raise NoAnswer(
                f"tiny worker for {self.model_id}: the launched worker (pid {process.pid}) did not write its first line "
                f"(ready or live) within {self.answer_deadline:g} s (killed)",
                self.log,
            )
        return model.SPAWNED if line.decode("utf-8", "replace").strip() in (READY, LIVE) else model.FAILED

    def _stale(self) -> bool:
        """Whether the connection ended while nothing was in flight (its worker went away)."""
        assert self.conn is not None and self.conn.sock is not None and self.conn.reader is not None
        if self.conn.reader.buffer:
            return False  # bytes nobody asked for: not an end (the answer check will say)
        try:
            if not select.select([self.conn.sock], [], [], 0)[0]:
                return False
            return self.conn.sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
        except BlockingIOError:
            return False
        except (OSError, ValueError):
            return True

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send one request and read its answer; a stale connection (its worker went away
        with nothing in flight) and a worker that is closing are elected again; a worker dying
        mid-request is Crashed; no answer within ``request_deadline`` is NoAnswer."""
        attempt = 0
        while True:
            if self.conn is not None and self._stale():
                self.close()
            if self.conn is None:
                self.ensure()
            assert self.conn is not None and self.conn.sock is not None and self.conn.reader is not None
            try:
                protocol.send(self.conn.sock, message)
            except OSError:  # not delivered (the worker's end is closed): nothing in flight
                self.close()
                if attempt == 0:
                    attempt += 1
                    continue
                raise Crashed(self.model_id, self.log, "closed the connection before the request") from None
            try:
                line = self.conn.reader.read(self.request_deadline)
            except TimeoutError:
                pid = self.conn.pid
                self.close()
                raise NoAnswer(
                    f"tiny worker for {self.model_id} (pid {pid}) did not send the answer to {message.get('op')} "
                    f"within {self.request_deadline:g} s (its connection closed)",
                    self.log,
                ) from None
            except OSError:
                line = None
            if line is None:
                self.close()
                raise Crashed(self.model_id, self.log, "died mid-request")
            if line is protocol.OVER_LIMIT:
                raise OutOfProtocol(f"tiny worker for {self.model_id}: an answer over {protocol.LINE_LIMIT} bytes")
            assert isinstance(line, bytes)
            answer = protocol.decode(line)
            if answer is None:
                raise OutOfProtocol(f"tiny worker for {self.model_id}: an answer that is not a JSON object")
            if answer.get("ok"):
                return answer
            if answer.get("error") == "closing" and attempt == 0:
                attempt += 1
                self.close()
                continue
            raise WorkerError(str(answer.get("error")), str(answer.get("detail", "")))

    def chat(self, messages: list[dict[str, Any]], *, prefill: str = "", stop: list[str] | None = None, max_tokens: int = 256) -> str:
        answer = self.request({"op": "chat", "messages": messages, "prefill": prefill, "stop": stop or [], "max_tokens": max_tokens})
        return str(answer.get("text", ""))

    def transcribe(self, wav: bytes, language: str = "en") -> str:
        """The text of a WAV file's speech (dictation: the worker of a whisper model)."""
        answer = self.request({"op": "transcribe", "audio": base64.b64encode(wav).decode("ascii"), "language": language})
        return str(answer.get("text", ""))

    def speak(self, text: str, *, voice: str = "af_heart", speed: float = 1.0) -> bytes:
        """A WAV file of ``text`` spoken (speech: the worker of a kokoro model)."""
        answer = self.request({"op": "speak", "text": text, "voice": voice, "speed": speed})
        audio = answer.get("audio")
        try:
            return base64.b64decode(audio if isinstance(audio, str) else "", validate=True)
        except ValueError as error:
            raise OutOfProtocol(f"tiny worker for {self.model_id}: speech that is not base64") from error

    def close(self) -> None:
        if self.conn is not None and self.conn.sock is not None:
            self.conn.sock.close()
        self.conn = None

    def __enter__(self) -> TinyClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _first_line(fd: int, deadline: float) -> bytes | None:
    """The first line a launched worker writes on ``fd`` (what it wrote up to its end, if it
    ended first), or None when ``deadline`` seconds pass first."""
    until = time.monotonic() + deadline
    got = b""
    while b"\n" not in got:
        left = until - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        got += chunk
    return got.split(b"\n", 1)[0]
