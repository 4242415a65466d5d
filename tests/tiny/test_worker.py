"""The tiny worker with real processes and sockets (S9 worker; the seed's client::tests,
worker::tests and protocol::tests under their names)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

import pytest

from eukhe.tiny import paths, protocol
from eukhe.tiny.client import Crashed, NoAnswer, TinyClient, WorkerError
from eukhe.tiny.worker import launch_tag, probe
from tests.tiny.conftest import LIMIT, MODEL, Holding, alive, hold_dir, install_echo, joined, release, wait_exit

pytestmark = pytest.mark.usefixtures("idle_env")


def test_started_joined_replaced(agent_dir: Path) -> None:
    first = TinyClient(agent_dir, MODEL, dtype="q4")
    assert first.ensure() == "started"
    pid1 = first.worker_pid
    assert pid1 is not None and first.chat([{"role": "user", "content": "hi"}], prefill="> ") == "> hi"
    second = TinyClient(agent_dir, MODEL, dtype="q4")
    assert second.ensure() == "joined" and second.worker_pid == pid1
    third = TinyClient(agent_dir, MODEL, dtype="fp32")
    assert third.ensure() == "replaced"
    assert third.worker_pid != pid1
    wait_exit(pid1)
    found = probe(paths.socket_path(agent_dir, MODEL))
    assert found.tag == launch_tag("cpu", "fp32")
    assert found.sock is not None
    found.sock.close()
    for c in (first, second, third):
        c.close()


def test_idle_exit(agent_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EUKHE_TINY_WORKER_IDLE_MS", "30")
    client = TinyClient(agent_dir, MODEL)
    assert client.ensure() == "started"
    pid = client.worker_pid
    assert pid is not None
    wait_exit(pid)
    assert not paths.socket_path(agent_dir, MODEL).exists()
    log = paths.log_path(agent_dir, MODEL).read_text(encoding="utf-8")
    assert f"pid {pid} exits" in log
    client.close()


def test_crash(agent_dir: Path) -> None:
    client = TinyClient(agent_dir, MODEL)
    with pytest.raises(Crashed) as caught:
        client.chat([{"role": "user", "content": "crash"}])
    assert str(paths.log_path(agent_dir, MODEL)) in str(caught.value)
    assert caught.value.log == paths.log_path(agent_dir, MODEL)


def test_not_installed(agent_dir: Path) -> None:
    client = TinyClient(agent_dir, "absent-model")
    with pytest.raises(WorkerError) as caught:
        client.chat([{"role": "user", "content": "hi"}])
    assert caught.value.kind == "not_installed"
    client.close()


def test_clients_agent_dir_served(agent_dir: Path) -> None:
    """Started on the client's command line without the agent dir variable, other HOME."""
    other = Path(tempfile.mkdtemp(prefix="ekh", dir="/tmp"))
    env = {**os.environ, "HOME": str(other), "EUKHE_AGENT_DIR": str(other / "wrong")}
    code = (
        "import sys; from pathlib import Path; from eukhe.tiny.client import TinyClient\n"
        "c = TinyClient(Path(sys.argv[1]), sys.argv[2]); print(c.ensure(), c.worker_pid)\n"
        "print(c.chat([{'role': 'user', 'content': 'served'}]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(agent_dir), MODEL], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    outcome, pid = done.stdout.split()[:2]
    assert outcome == "started" and done.stdout.splitlines()[1] == "served"
    assert paths.socket_path(agent_dir, MODEL).exists()
    assert not (other / "wrong").exists() and not (other / ".eukhe").exists()
    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    assert str(agent_dir).encode() in cmdline


def test_existing_run_dir_made_0700(agent_dir: Path) -> None:
    run = paths.run_dir(agent_dir)
    run.mkdir(parents=True)
    os.chmod(run, 0o755)
    client = TinyClient(agent_dir, MODEL)
    client.ensure()
    assert stat.S_IMODE(os.stat(run).st_mode) == 0o700
    client.close()


def test_shutdown_lets_another_clients_in_flight_request_finish(agent_dir: Path) -> None:
    holder = TinyClient(agent_dir, MODEL, dtype="q4")
    holder.ensure()
    old = holder.worker_pid
    assert old is not None
    hold = hold_dir()
    holding = Holding(hold)
    answers: list[str] = []
    thread = threading.Thread(target=lambda: answers.append(holder.chat([{"role": "user", "content": f"hold:{hold}"}])))
    thread.start()
    holding.wait()  # the worker holds the request now
    replacer = TinyClient(agent_dir, MODEL, dtype="fp16")
    assert replacer.ensure() == "replaced"
    assert alive(old)
    release(hold)
    joined(thread)
    assert answers == [f"hold:{hold}"]
    wait_exit(old)
    assert replacer.chat([{"role": "user", "content": "after"}]) == "after"
    holder.close()
    replacer.close()


def test_over_limit_line_skipped_next_read() -> None:
    left, right = socket.socketpair()
    reader = protocol.LineReader(right, limit=10)
    left.sendall(b"0123456789ABCDEF" * 1000 + b"\n" + b'{"a":1}\n' + b"0123456789\n")
    assert reader.read() is protocol.OVER_LIMIT
    assert reader.read() == b'{"a":1}'
    assert reader.read() == b"0123456789"
    left.close()
    assert reader.read() is None


def test_worker_answers_bad_request_over_256_mib(agent_dir: Path) -> None:
    client = TinyClient(agent_dir, MODEL)
    client.ensure()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(str(paths.socket_path(agent_dir, MODEL)))
    block = b"x" * (1 << 22)
    for _ in range(protocol.LINE_LIMIT // len(block) + 1):
        sock.sendall(block)
    sock.sendall(b"\n" + protocol.encode({"op": "ping"}))
    reader = protocol.LineReader(sock)
    first = reader.read()
    assert isinstance(first, bytes) and json.loads(first)["error"] == "bad_request"
    second = reader.read()
    assert isinstance(second, bytes) and json.loads(second)["tag"] == client.tag
    sock.close()
    client.close()


def test_requests_answered_in_order(agent_dir: Path) -> None:
    client = TinyClient(agent_dir, MODEL)
    client.ensure()
    assert client.conn is not None and client.conn.sock is not None and client.conn.reader is not None
    for n in range(5):
        protocol.send(client.conn.sock, {"op": "chat", "messages": [{"role": "user", "content": str(n)}]})
    got = [json.loads(client.conn.reader.read())["text"] for _ in range(5)]  # type: ignore[arg-type]
    assert got == ["0", "1", "2", "3", "4"]
    client.close()


def test_second_worker_exits_when_a_live_one_answers(agent_dir: Path) -> None:
    client = TinyClient(agent_dir, MODEL)
    client.ensure()
    cmd = [sys.executable, "-m", "eukhe", "tiny-worker", MODEL, "--backend", "onnx", "--agent-dir", str(agent_dir)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "live"
    client.close()


def test_echo_install_helper_is_used(agent_dir: Path) -> None:
    assert (install_echo(agent_dir) / "engine.json").exists()


# ------------------------------------------------------------ hardening (issue 30, tiny models)


@pytest.mark.parametrize("how", ["idle", "killed", "replaced"])
def test_a_stale_client_reelects_silently(agent_dir: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    """After its worker exited with nothing in flight (idle, killed, replaced), a client's next
    request elects the current worker (or starts one) instead of failing."""
    if how == "idle":
        monkeypatch.setenv("EUKHE_TINY_WORKER_IDLE_MS", "30")
    client = TinyClient(agent_dir, MODEL, dtype="q4")
    if how == "idle":  # a request could meet the 30 ms worker already gone: the connection is enough
        assert client.ensure() == "started"
    else:
        assert client.chat([{"role": "user", "content": "first"}]) == "first"
    old = client.worker_pid
    assert old is not None
    monkeypatch.setenv("EUKHE_TINY_WORKER_IDLE_MS", "600000")  # the next worker stays
    other: TinyClient | None = None
    if how == "killed":
        os.kill(old, signal.SIGKILL)
    elif how == "replaced":
        other = TinyClient(agent_dir, MODEL, dtype="fp16")
        assert other.ensure() == "replaced"
    wait_exit(old)
    assert client.chat([{"role": "user", "content": "again"}]) == "again"
    assert client.worker_pid not in (None, old)
    assert client.outcome == ("replaced" if how == "replaced" else "started")
    client.close()
    if other is not None:
        other.close()


def test_a_request_in_flight_when_the_worker_dies_still_fails(agent_dir: Path) -> None:
    client = TinyClient(agent_dir, MODEL)
    client.ensure()
    pid = client.worker_pid
    assert pid is not None
    hold = hold_dir()
    holding = Holding(hold)
    failed: list[BaseException] = []

    def held() -> None:
        try:
            client.chat([{"role": "user", "content": f"hold:{hold}"}])
        except Crashed as error:
            failed.append(error)

    thread = threading.Thread(target=held)
    thread.start()
    holding.wait()
    os.kill(pid, signal.SIGKILL)
    joined(thread)
    assert len(failed) == 1 and "died mid-request" in str(failed[0])
    client.close()


def _silent_child(agent_dir: Path, model_id: str, device: str, dtype: str) -> subprocess.Popen[bytes]:
    """A launched "worker" that never says ready: it waits for its stdin, a pipe nobody writes."""
    return subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def test_a_launched_worker_that_never_answers_fails_within_its_deadline(agent_dir: Path) -> None:
    launched: list[subprocess.Popen[bytes]] = []

    def launcher(*args: Any) -> subprocess.Popen[bytes]:
        launched.append(_silent_child(*args))
        return launched[-1]

    client = TinyClient(agent_dir, MODEL, launcher=launcher, answer_deadline=0.05)
    with pytest.raises(NoAnswer, match=r"its first line \(ready or live\) .*within 0.05 s") as caught:
        client.ensure()
    assert caught.value.log == paths.log_path(agent_dir, MODEL)
    assert len(launched) == 1
    wait_exit(launched[0].pid)  # the silent child was ended, not left behind
    assert launched[0].wait(timeout=LIMIT) != 0


def test_a_worker_that_never_answers_a_request_fails_within_its_deadline(agent_dir: Path) -> None:
    client = TinyClient(agent_dir, MODEL, request_deadline=0.05)
    client.ensure()
    hold = hold_dir()
    holding = Holding(hold)
    try:
        with pytest.raises(NoAnswer, match=r"the answer to chat .*within 0.05 s"):
            client.chat([{"role": "user", "content": f"hold:{hold}"}])
        assert client.conn is None  # the late answer can never be read as the next one's
    finally:
        holding.wait()
        release(hold)
    assert client.chat([{"role": "user", "content": "next"}]) == "next"
    client.close()


def test_a_worker_that_never_says_bye_fails_within_its_deadline(agent_dir: Path) -> None:
    """A worker of another tag that answers ping but never answers shutdown."""
    run = paths.ensure_run_dir(agent_dir)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(run / f"{MODEL}-onnx.sock"))
    listener.listen(4)
    stop = threading.Event()

    def serve() -> None:
        conns = []
        listener.settimeout(LIMIT)
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        conns.append(conn)
        reader = protocol.LineReader(conn)
        line = reader.read()
        assert isinstance(line, bytes) and json.loads(line)["op"] == "ping"
        protocol.send(conn, {"ok": True, "tag": "another-build|onnx|cpu|q4", "pid": os.getpid()})
        stop.wait(LIMIT)  # never says bye
        conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    client = TinyClient(agent_dir, MODEL, answer_deadline=0.05)
    try:
        with pytest.raises(NoAnswer, match=r"bye .*within 0.05 s"):
            client.ensure()
    finally:
        stop.set()
        joined(thread)
        listener.close()


def test_a_worker_serves_under_an_agent_dir_too_long_for_a_socket_path() -> None:
    """The socket's path under an agent dir of 110 characters is past the Unix socket limit
    (108 bytes): the worker binds and the client connects through eukhe.paths.socket_address."""
    base = Path(tempfile.mkdtemp(prefix="ekt", dir="/tmp"))
    deep = base / ("d" * (110 - len(str(base)) - 1))
    try:
        install_echo(deep)
        assert len(os.fsencode(paths.socket_path(deep, MODEL))) > 108
        client = TinyClient(deep, MODEL, dtype="q4")
        assert client.ensure() == "started"
        assert client.chat([{"role": "user", "content": "hi"}], prefill="> ") == "> hi"
        pid = client.worker_pid
        client.close()
        found = probe(paths.socket_path(deep, MODEL))
        assert found.sock is not None
        found.sock.close()
        assert pid is not None
        os.kill(pid, signal.SIGTERM)
        wait_exit(pid)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_an_answer_goes_out_while_its_request_still_counts_as_in_flight(agent_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A closing worker exits once nothing is in flight, so a request must count as in flight
    until its answer is sent: counted done first, the worker could exit with the answer unsent
    and the client read "died mid-request" (the tiny bridge met it under load)."""
    from eukhe.tiny import worker

    served = worker.Worker(agent_dir, MODEL, "cpu", "q4", 60_000)
    sent: list[tuple[dict[str, Any], int]] = []
    real_send = protocol.send

    def send(conn: socket.socket, message: dict[str, Any]) -> None:
        sent.append((message, served.state.inflight))
        real_send(conn, message)

    monkeypatch.setattr(protocol, "send", send)
    monkeypatch.setattr(served, "_run", lambda op, request: {"ok": True, "text": f"{op} answered"})
    ours, theirs = socket.socketpair()
    with ours:
        ours.sendall(b'{"op": "chat"}\n')
        ours.shutdown(socket.SHUT_WR)
        served._connection(theirs)
        assert json.loads(ours.makefile("rb").readline()) == {"ok": True, "text": "chat answered"}
    assert sent == [({"ok": True, "text": "chat answered"}, 1)] and served.state.inflight == 0
