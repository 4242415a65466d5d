"""The tiny worker's wire, value by value (S9 worker 6): every field a request may leave out and
what the worker then runs with, every refusal's exact answer, the client's defaults and its
errors' texts, the build id's digest. Written for the classes of the seed-47 survivors (a
default, a message text, a dropped argument): each check here is one value seen from outside,
through a real worker serving on a real Unix socket in this process, or a worker stand-in on a
loopback socket where the worker itself cannot misbehave."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from eukhe.tiny import engine as engines
from eukhe.tiny import paths, protocol, worker
from eukhe.tiny.audio import Audio, write_wav
from eukhe.tiny.client import Crashed, OutOfProtocol, TinyClient, WorkerError
from tests.tiny.conftest import LIMIT, MODEL, joined

WAV = write_wav(Audio(np.zeros(160, dtype=np.float32), 16000))


class Recording:
    """An engine that records what the worker runs it with, and answers fixed values."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []

    def chat(self, messages: list[dict[str, Any]], prefill: str, stop: list[str], max_tokens: int) -> str:
        self.calls.append(("chat", (messages, prefill, stop, max_tokens)))
        return "chatted"

    def transcribe(self, wav: bytes, language: str) -> str:
        self.calls.append(("transcribe", (wav, language)))
        return "heard"

    def speak(self, text: str, voice: str, speed: float) -> bytes:
        self.calls.append(("speak", (text, voice, speed)))
        return b"RIFF-spoken"


class ChatOnly:
    def chat(self, messages: list[dict[str, Any]], prefill: str, stop: list[str], max_tokens: int) -> str:
        return "only chat"


class Refusing:
    def chat(self, messages: list[dict[str, Any]], prefill: str, stop: list[str], max_tokens: int) -> str:
        raise engines.RequestError("a word without phonemes")


@dataclass
class Served:
    """A Worker seated on the agent dir's socket and serving on a thread of this process."""

    agent_dir: Path
    worker: worker.Worker
    thread: threading.Thread
    conns: list[socket.socket] = field(default_factory=list)

    def connect(self) -> tuple[socket.socket, protocol.LineReader]:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(LIMIT)  # a hang guard only
        sock.connect(str(self.worker.sock_path))
        self.conns.append(sock)
        return sock, protocol.LineReader(sock)

    def ask(self, message: dict[str, Any] | bytes) -> dict[str, Any]:
        """One request on a fresh connection, its answer decoded."""
        sock, reader = self.connect()
        sock.sendall(message if isinstance(message, bytes) else protocol.encode(message))
        line = reader.read(LIMIT)
        assert isinstance(line, bytes), line
        answer = json.loads(line)
        assert isinstance(answer, dict)
        return answer


def _seat(agent_dir: Path, engine: Any, dtype: str = "q4") -> Served:
    """A Worker seated and serving on a thread (the caller closes it)."""
    served = worker.Worker(agent_dir, MODEL, "cpu", dtype, 600000)
    served.engine = engine
    assert served.take_seat()
    thread = threading.Thread(target=served.serve_forever, name="tiny-worker", daemon=True)
    thread.start()
    return Served(agent_dir, served, thread)


def _serve(agent_dir: Path, engine: Any, dtype: str = "q4") -> Iterator[Served]:
    running = _seat(agent_dir, engine, dtype)
    served = running.worker
    thread = running.thread
    try:
        yield running
    finally:
        for sock in running.conns:
            sock.close()
        served.close()
        joined(thread)


@pytest.fixture
def recording(agent_dir: Path) -> Iterator[tuple[Served, Recording]]:
    engine = Recording()
    for running in _serve(agent_dir, engine):
        yield running, engine


MESSAGES = [{"role": "user", "content": "hi"}]


# ------------------------------------------------------------------ the worker's defaults


def test_a_request_that_leaves_fields_out_runs_with_the_defaults(recording: tuple[Served, Recording]) -> None:
    """chat: prefill "", no stop strings, 256 tokens; transcribe: English; speak: af_heart at 1.0."""
    served, engine = recording
    audio = base64.b64encode(WAV).decode("ascii")
    assert served.ask({"op": "chat", "messages": MESSAGES}) == {"ok": True, "text": "chatted"}
    assert served.ask({"op": "transcribe", "audio": audio}) == {"ok": True, "text": "heard"}
    assert served.ask({"op": "speak", "text": "hi"}) == {"ok": True, "audio": base64.b64encode(b"RIFF-spoken").decode("ascii")}
    assert engine.calls == [
        ("chat", (MESSAGES, "", [], 256)),
        ("transcribe", (WAV, "en")),
        ("speak", ("hi", "af_heart", 1.0)),
    ]
    assert isinstance(engine.calls[2][1][2], float)


def test_a_request_that_gives_every_field_runs_with_them(recording: tuple[Served, Recording]) -> None:
    """Each given value reaches the engine as given; max_tokens 0 and the smallest positive
    speed are inside the bounds, an integer speed is passed as a float."""
    served, engine = recording
    audio = base64.b64encode(WAV).decode("ascii")
    assert served.ask({"op": "chat", "messages": MESSAGES, "prefill": "P:", "stop": ["\n", "."], "max_tokens": 0})["ok"] is True
    assert served.ask({"op": "transcribe", "audio": audio, "language": "de"})["ok"] is True
    assert served.ask({"op": "speak", "text": "hi", "voice": "bf_emma", "speed": 2})["ok"] is True
    assert served.ask({"op": "speak", "text": "", "voice": "", "speed": 5e-324})["ok"] is True
    assert engine.calls == [
        ("chat", (MESSAGES, "P:", ["\n", "."], 0)),
        ("transcribe", (WAV, "de")),
        ("speak", ("hi", "bf_emma", 2.0)),
        ("speak", ("", "", 5e-324)),
    ]
    assert type(engine.calls[2][1][2]) is float


def test_ping_load_and_shutdown_answer_exactly(recording: tuple[Served, Recording]) -> None:
    served, engine = recording
    assert served.ask({"op": "ping"}) == {"ok": True, "tag": f"{worker.build_id()}|onnx|cpu|q4", "pid": os.getpid()}
    assert served.ask({"op": "load"}) == {"ok": True}
    sock, reader = served.connect()
    protocol.send(sock, {"op": "shutdown"})
    assert reader.read(LIMIT) == b'{"ok":true,"bye":true}'
    assert reader.read(LIMIT) is None  # the shutdown's connection ends with its bye
    assert not served.worker.sock_path.exists()
    assert engine.calls == []


def test_a_closing_worker_refuses_requests_and_pings_on_open_connections(recording: tuple[Served, Recording]) -> None:
    served, engine = recording
    sock, reader = served.connect()
    protocol.send(sock, {"op": "ping"})
    assert isinstance(reader.read(LIMIT), bytes)
    served.worker.close()
    for op in ({"op": "ping"}, {"op": "chat", "messages": MESSAGES}, {"op": "load"}):
        protocol.send(sock, op)
        assert reader.read(LIMIT) == b'{"ok":false,"error":"closing"}'
    assert engine.calls == []


# ------------------------------------------------------------------ the worker's refusals

CHAT_REFUSED = "chat wants messages, prefill, stop strings, max_tokens"
TRANSCRIBE_REFUSED = "transcribe wants audio (base64 WAV) and a language"
SPEAK_REFUSED = "speak wants text, a voice and a positive speed"
AUDIO = base64.b64encode(WAV).decode("ascii")


REFUSALS: list[tuple[dict[str, Any] | bytes, str]] = [
    (b"not json\n", "not a JSON object"),
    (b"[1]\n", "not a JSON object"),
    (b"\xff\n", "not a JSON object"),
    ({"op": "nope"}, "unknown op 'nope'"),
    ({"messages": MESSAGES}, "unknown op None"),
    ({"op": "chat"}, CHAT_REFUSED),
    ({"op": "chat", "messages": {"role": "user"}}, CHAT_REFUSED),
    ({"op": "chat", "messages": ["hi"]}, CHAT_REFUSED),
    ({"op": "chat", "messages": MESSAGES, "stop": "\n"}, CHAT_REFUSED),
    ({"op": "chat", "messages": MESSAGES, "stop": [1]}, CHAT_REFUSED),
    ({"op": "chat", "messages": MESSAGES, "prefill": None}, CHAT_REFUSED),
    ({"op": "chat", "messages": MESSAGES, "max_tokens": "8"}, CHAT_REFUSED),
    ({"op": "chat", "messages": MESSAGES, "max_tokens": 8.0}, CHAT_REFUSED),
    ({"op": "chat", "messages": MESSAGES, "max_tokens": True}, CHAT_REFUSED),
    ({"op": "chat", "messages": MESSAGES, "max_tokens": -1}, CHAT_REFUSED),
    ({"op": "transcribe"}, TRANSCRIBE_REFUSED),
    ({"op": "transcribe", "audio": 1}, TRANSCRIBE_REFUSED),
    ({"op": "transcribe", "audio": AUDIO, "language": ""}, TRANSCRIBE_REFUSED),
    ({"op": "transcribe", "audio": AUDIO, "language": None}, TRANSCRIBE_REFUSED),
    ({"op": "transcribe", "audio": "not base64!"}, "audio is not base64"),
    ({"op": "speak"}, SPEAK_REFUSED),
    ({"op": "speak", "text": 1}, SPEAK_REFUSED),
    ({"op": "speak", "text": "hi", "voice": None}, SPEAK_REFUSED),
    ({"op": "speak", "text": "hi", "speed": True}, SPEAK_REFUSED),
    ({"op": "speak", "text": "hi", "speed": "1"}, SPEAK_REFUSED),
    ({"op": "speak", "text": "hi", "speed": 0}, SPEAK_REFUSED),
    ({"op": "speak", "text": "hi", "speed": 0.0}, SPEAK_REFUSED),
    ({"op": "speak", "text": "hi", "speed": -1.5}, SPEAK_REFUSED),
    (b'{"op":"speak","text":"hi","speed":1e999}\n', "not a JSON object"),  # no infinity in JSON
]


@pytest.mark.parametrize(("request_", "detail"), REFUSALS, ids=[f"refusal{n}" for n in range(len(REFUSALS))])
def test_each_refusal_says_why(recording: tuple[Served, Recording], request_: dict[str, Any] | bytes, detail: str) -> None:
    served, engine = recording
    assert served.ask(request_) == {"ok": False, "error": "bad_request", "detail": detail}
    assert engine.calls == []


@pytest.mark.parametrize("speed", [float("inf"), float("-inf"), float("nan")])
def test_a_speed_that_is_no_finite_number_is_refused(tmp_path: Path, speed: float) -> None:
    """What JSON cannot carry, a request decoded otherwise could: refused all the same."""
    served = worker.Worker(tmp_path, MODEL, "cpu", "q4", 600000)
    served.engine = Recording()
    assert served._speak({"text": "hi", "speed": speed}) == {"ok": False, "error": "bad_request", "detail": SPEAK_REFUSED}
    assert served.engine.calls == []


def test_a_line_over_the_limit_is_refused_naming_the_limit() -> None:
    """The worker's answer to an over-long line names the limit (256 MiB, the seed's), read
    through a reader of a small limit so the test need not send 256 MiB."""
    left, right = socket.socketpair()
    reader = protocol.LineReader(right, limit=4)
    left.sendall(b"12345\n1234\n")
    assert reader.read() is protocol.OVER_LIMIT and reader.read() == b"1234"
    assert protocol.LINE_LIMIT == 256 * 1024 * 1024
    assert repr(protocol.OVER_LIMIT) == "OVER_LIMIT"
    left.close()
    right.close()


def test_an_operation_the_engine_lacks_is_unsupported(agent_dir: Path) -> None:
    for served in _serve(agent_dir, ChatOnly()):
        assert served.ask({"op": "speak", "text": "hi"}) == {"ok": False, "error": "unsupported", "detail": f"speak is not available for {MODEL}"}
        assert served.ask({"op": "transcribe", "audio": AUDIO}) == {"ok": False, "error": "unsupported", "detail": f"transcribe is not available for {MODEL}"}
        assert served.ask({"op": "chat", "messages": MESSAGES}) == {"ok": True, "text": "only chat"}


def test_a_request_the_engine_refuses_is_a_bad_request_saying_why(agent_dir: Path) -> None:
    for served in _serve(agent_dir, Refusing()):
        assert served.ask({"op": "chat", "messages": MESSAGES}) == {"ok": False, "error": "bad_request", "detail": "a word without phonemes"}


def test_a_model_not_installed_is_named_with_its_dir(agent_dir: Path) -> None:
    shutil.rmtree(paths.model_dir(agent_dir, MODEL))
    for served in _serve(agent_dir, None):
        where = paths.model_dir(agent_dir, MODEL)
        want = {"ok": False, "error": "not_installed", "detail": f"{where} is not installed (no engine.json)"}
        assert served.ask({"op": "load"}) == want
        assert served.ask({"op": "chat", "messages": MESSAGES}) == want


# ------------------------------------------------------------------ the client's defaults


def test_the_clients_defaults_reach_the_engine(recording: tuple[Served, Recording]) -> None:
    """TinyClient's own defaults: device cpu and dtype q4 (it joins a worker seated so), chat
    with prefill "", no stop strings, 256 tokens; transcribe in English; speak af_heart at 1.0.
    Its answers are the engine's."""
    served, engine = recording
    with TinyClient(served.agent_dir, MODEL, answer_deadline=LIMIT, request_deadline=LIMIT) as client:
        assert client.ensure() == "joined"
        assert client.tag == f"{worker.build_id()}|onnx|cpu|q4"
        assert client.chat(MESSAGES) == "chatted"
        assert client.chat(MESSAGES, prefill="P:", stop=["."], max_tokens=3) == "chatted"
        assert client.transcribe(WAV) == "heard"
        assert client.speak("hi") == b"RIFF-spoken"
        assert client.speak("hi", voice="bf_emma", speed=1.25) == b"RIFF-spoken"
    assert engine.calls == [
        ("chat", (MESSAGES, "", [], 256)),
        ("chat", (MESSAGES, "P:", ["."], 3)),
        ("transcribe", (WAV, "en")),
        ("speak", ("hi", "af_heart", 1.0)),
        ("speak", ("hi", "bf_emma", 1.25)),
    ]


def test_a_worker_error_names_its_kind_and_detail(agent_dir: Path) -> None:
    for served in _serve(agent_dir, ChatOnly()):
        with TinyClient(served.agent_dir, MODEL, answer_deadline=LIMIT, request_deadline=LIMIT) as client:
            with pytest.raises(WorkerError) as caught:
                client.speak("hi")
            assert caught.value.kind == "unsupported"
            assert str(caught.value) == f"unsupported: speak is not available for {MODEL}"
            with pytest.raises(WorkerError) as bare:
                client.request({"op": "chat", "messages": MESSAGES, "stop": "x"})
            assert str(bare.value) == f"bad_request: {CHAT_REFUSED}"
    assert str(WorkerError("closing", "")) == "closing"


# --------------------------------------------- a worker stand-in that answers out of protocol


def _stand_in(agent_dir: Path, answers: list[bytes | None], tag: str) -> threading.Thread:
    """A stand-in worker on the model's socket: it answers the ping with ``tag``, then each
    request with the next of ``answers`` (raw bytes; None closes the connection unanswered)."""
    paths.ensure_run_dir(agent_dir)
    path = paths.socket_path(agent_dir, MODEL)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)

    def serve() -> None:
        conn, _ = listener.accept()
        listener.close()
        reader = protocol.LineReader(conn)
        with conn:
            assert reader.read(LIMIT) == b'{"op":"ping"}'
            protocol.send(conn, {"ok": True, "tag": tag, "pid": 4242})
            for answer in answers:
                assert isinstance(reader.read(LIMIT), bytes)
                if answer is None:
                    return
                conn.sendall(answer)

    thread = threading.Thread(target=serve, name="stand-in", daemon=True)
    thread.start()
    return thread


def _client(agent_dir: Path) -> TinyClient:
    return TinyClient(agent_dir, MODEL, answer_deadline=LIMIT, request_deadline=LIMIT)


def test_answers_out_of_protocol_say_which(agent_dir: Path) -> None:
    client = _client(agent_dir)
    standing = _stand_in(agent_dir, [b"[1]\n", b"not json\n", b'{"ok":true,"audio":"not base64!"}\n', b'{"ok":true}\n'], client.tag)
    with client:
        with pytest.raises(OutOfProtocol) as listed:
            client.chat(MESSAGES)
        assert str(listed.value) == f"tiny worker for {MODEL}: an answer that is not a JSON object"
        with pytest.raises(OutOfProtocol, match=f"^tiny worker for {MODEL}: an answer that is not a JSON object$"):
            client.chat(MESSAGES)
        with pytest.raises(OutOfProtocol) as speech:
            client.speak("hi")
        assert str(speech.value) == f"tiny worker for {MODEL}: speech that is not base64"
        assert client.speak("hi") == b""  # an answer without audio is no audio
    joined(standing)


def test_an_answer_without_text_is_empty_text(agent_dir: Path) -> None:
    client = _client(agent_dir)
    standing = _stand_in(agent_dir, [b'{"ok":true}\n', b'{"ok":true}\n'], client.tag)
    with client:
        assert client.chat(MESSAGES) == ""
        assert client.transcribe(WAV) == ""
    joined(standing)


def test_a_worker_dying_mid_request_is_crashed_naming_the_log(agent_dir: Path) -> None:
    client = _client(agent_dir)
    standing = _stand_in(agent_dir, [None], client.tag)
    with client:
        with pytest.raises(Crashed) as caught:
            client.chat(MESSAGES)
    log = paths.log_path(agent_dir, MODEL)
    assert str(caught.value) == f"tiny worker for {MODEL} died mid-request; log: {log}"
    assert caught.value.log == log
    joined(standing)


def test_a_worker_error_without_a_detail_is_its_kind(agent_dir: Path) -> None:
    client = _client(agent_dir)
    standing = _stand_in(agent_dir, [b'{"ok":false,"error":"not_installed"}\n'], client.tag)
    with client:
        with pytest.raises(WorkerError) as caught:
            client.chat(MESSAGES)
    assert (caught.value.kind, str(caught.value)) == ("not_installed", "not_installed")
    joined(standing)


# ------------------------------------------------------------------------ the build id


def test_the_build_id_is_the_version_and_a_digest_of_the_tiny_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The digest covers each Python source beside the worker, by name and content, and
    nothing else: a changed, renamed or added source is a new build (S9 worker 3: a new build
    never hits a stale worker); another kind of file is not."""
    version = metadata.version("eukhe")
    here = tmp_path / "tiny"
    here.mkdir()
    (here / "worker.py").write_text("A = 1\n", encoding="utf-8")
    (here / "client.py").write_text("B = 2\n", encoding="utf-8")
    monkeypatch.setattr(worker, "__file__", str(here / "worker.py"))

    def sources() -> str:
        digest = hashlib.sha256()
        for name, body in (("client.py", b"B = 2\n"), ("worker.py", b"A = 1\n")):
            digest.update(name.encode() + b"\0" + body)
        return digest.hexdigest()[:12]

    first = worker.build_id()
    assert first == f"{version}+{sources()}"
    (here / "notes.txt").write_text("not a source", encoding="utf-8")
    (here / "__pycache__").mkdir()
    (here / "__pycache__" / "worker.cpython-311.pyc").write_bytes(b"\0")
    assert worker.build_id() == first
    (here / "client.py").write_text("B = 3\n", encoding="utf-8")
    changed = worker.build_id()
    (here / "client.py").write_text("B = 2\n", encoding="utf-8")
    assert worker.build_id() == first
    (here / "client.py").rename(here / "klient.py")
    renamed = worker.build_id()
    (here / "klient.py").rename(here / "client.py")
    (here / "extra.py").write_text("", encoding="utf-8")
    added = worker.build_id()
    assert len({first, changed, renamed, added}) == 4
    assert all(b.startswith(f"{version}+") and len(b) == len(version) + 13 for b in (changed, renamed, added))


def test_a_build_not_installed_is_version_0(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", missing)
    build = worker.build_id()
    assert build.startswith("0+") and len(build) == 14
    assert worker.launch_tag("cpu", "fp32") == f"{build}|onnx|cpu|fp32"


# ------------------------------------------------------------------------ the launch


def test_the_worker_command_line_is_the_seeds(tmp_path: Path) -> None:
    """S9 worker: hidden ``eukhe tiny-worker <id> --backend onnx --agent-dir <dir>`` (with the
    device and dtype of the launch tag)."""
    from eukhe.tiny.client import worker_command

    assert worker_command(tmp_path, "kokoro", "cpu", "fp32") == [
        sys.executable, "-m", "eukhe", "tiny-worker", "kokoro",
        "--backend", "onnx", "--agent-dir", str(tmp_path), "--device", "cpu", "--dtype", "fp32",
    ]  # fmt: skip


def test_a_launched_worker_is_detached_logged_and_reaped_when_it_exits(agent_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """launch: its own session and process group, stdout the pipe of its first line (``ready``,
    there before the worker turns its stdout into the log, with Python's own buffering: not
    PYTHONUNBUFFERED, which a test environment may set and a user's does not), stderr the log;
    once it exits it is reaped (no zombie is left of it), by a thread launch started."""
    from eukhe.tiny.client import launch

    monkeypatch.delenv("PYTHONUNBUFFERED", raising=False)

    paths.ensure_run_dir(agent_dir)
    before = set(threading.enumerate())
    process = launch(agent_dir, MODEL, "cpu", "q4")
    reapers = set(threading.enumerate()) - before
    assert process.stdout is not None
    assert process.stdout.readline() == b"ready\n" and process.stdout.read() == b""
    process.stdout.close()
    assert os.getsid(process.pid) == process.pid and os.getpgid(process.pid) == process.pid
    found = worker.probe(paths.socket_path(agent_dir, MODEL), LIMIT)
    assert found.sock is not None and found.reader is not None and found.pid == process.pid
    protocol.send(found.sock, {"op": "shutdown"})
    assert found.reader.read(LIMIT) == b'{"ok":true,"bye":true}'
    found.sock.close()
    for reaper in reapers:
        joined(reaper)
    assert process.returncode == 0
    log = paths.log_path(agent_dir, MODEL).read_text(encoding="utf-8")
    assert f"tiny worker {MODEL} pid {process.pid} serving {paths.socket_path(agent_dir, MODEL)} tag {worker.launch_tag('cpu', 'q4')}\n" in log
    assert log.endswith(f"tiny worker {MODEL} pid {process.pid} exits\n")


def test_a_first_line_that_comes_in_pieces_is_read_whole(agent_dir: Path) -> None:
    """The launched worker's first line is read up to its newline however the pipe delivers it
    (a read takes at most 4096 bytes): ``ready`` padded past one read still says ready."""
    seated: list[Served] = []

    def launcher(agent: Path, model_id: str, device: str, dtype: str) -> subprocess.Popen[bytes]:
        seated.append(_seat(agent, Recording(), dtype))
        script = "import sys; sys.stdout.buffer.write(b'ready' + b' ' * 5000 + b'\\n')"
        return subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE)

    client = TinyClient(agent_dir, MODEL, launcher=launcher, answer_deadline=LIMIT, request_deadline=LIMIT)
    try:
        assert client.ensure() == "started"
        assert client.chat(MESSAGES) == "chatted"
    finally:
        client.close()
        for running in seated:
            running.worker.close()
            joined(running.thread)


def test_a_socket_that_never_answers_the_ping_is_given_up_within_the_answer_deadline(agent_dir: Path) -> None:
    """A socket that takes the connection and never answers the ping: the client waits
    ``answer_deadline`` for the answer, hangs up, and starts a worker of its own. The stand-in
    says who ended the connection: the client (within its deadline), or the stand-in itself
    after LIMIT (the client would have waited for ever)."""
    paths.ensure_run_dir(agent_dir)
    path = paths.socket_path(agent_dir, MODEL)
    mute = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    mute.bind(str(path))
    mute.listen(1)
    ended_by: list[str] = []

    def hold() -> None:
        conn, _ = mute.accept()
        conn.settimeout(LIMIT)
        with conn:
            try:
                while conn.recv(4096):
                    pass
                ended_by.append("client")
            except TimeoutError:
                ended_by.append("stand-in")

    holding = threading.Thread(target=hold, daemon=True)
    holding.start()
    seated: list[Served] = []

    def launcher(agent: Path, model_id: str, device: str, dtype: str) -> subprocess.Popen[bytes]:
        joined(holding)
        mute.close()  # its file stays: the new worker finds it stale, removes it and binds
        seated.append(_seat(agent, Recording(), dtype))
        return subprocess.Popen([sys.executable, "-c", "print('ready')"], stdout=subprocess.PIPE)

    client = TinyClient(agent_dir, MODEL, launcher=launcher, answer_deadline=0.2, request_deadline=LIMIT)
    try:
        assert client.ensure() == "started"
        assert ended_by == ["client"]
        assert client.chat(MESSAGES) == "chatted"
    finally:
        client.close()
        for running in seated:
            running.worker.close()
            joined(running.thread)


@pytest.mark.parametrize(
    ("raw", "ms"),
    [("30", 30), ("1", 1), (None, 900000), ("", 900000), ("0", 900000), ("-5", 900000), ("soon", 900000), ("1.5", 900000)],
    ids=["thirty", "one", "unset", "empty", "zero", "negative", "not-a-number", "not-an-integer"],
)
def test_the_idle_time_is_the_variables_positive_milliseconds_else_15_minutes(raw: str | None, ms: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """S9 worker 5: a worker exits after 15 idle minutes (EUKHE_TINY_WORKER_IDLE_MS for tests),
    read from the environment given, else the process's own."""
    env = {} if raw is None else {"EUKHE_TINY_WORKER_IDLE_MS": raw}
    assert worker.idle_ms(env) == ms
    monkeypatch.delenv("EUKHE_TINY_WORKER_IDLE_MS", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert worker.idle_ms() == ms
    assert worker.idle_ms({"EUKHE_TINY_WORKER_IDLE_MS": "7"}) == 7  # the given environment, not the process's
