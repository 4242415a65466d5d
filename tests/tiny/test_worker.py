"""The tiny worker with real processes and sockets (S9 worker; the seed's client::tests,
worker::tests and protocol::tests under their names)."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from eukhe.tiny import paths, protocol
from eukhe.tiny.client import Crashed, TinyClient, WorkerError
from eukhe.tiny.worker import launch_tag, probe
from tests.tiny.conftest import MODEL, alive, install_echo, wait_exit

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


def _hold_dir() -> Path:
    where = Path(tempfile.mkdtemp(prefix="ekf", dir="/tmp"))
    os.mkfifo(where / "received")
    os.mkfifo(where / "release")
    return where


def test_shutdown_lets_another_clients_in_flight_request_finish(agent_dir: Path) -> None:
    holder = TinyClient(agent_dir, MODEL, dtype="q4")
    holder.ensure()
    old = holder.worker_pid
    assert old is not None
    hold = _hold_dir()
    answers: list[str] = []
    thread = threading.Thread(target=lambda: answers.append(holder.chat([{"role": "user", "content": f"hold:{hold}"}])))
    thread.start()
    with open(hold / "received", encoding="utf-8") as received:  # the worker holds the request now
        received.read()
    replacer = TinyClient(agent_dir, MODEL, dtype="fp16")
    assert replacer.ensure() == "replaced"
    assert alive(old)
    with open(hold / "release", "w", encoding="utf-8"):
        pass
    thread.join()
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
