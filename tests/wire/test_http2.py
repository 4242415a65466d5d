"""HTTP/2 on the real wire (issue 27, item 4): a TLS server on loopback that speaks only HTTP/2
(the ``h2`` library's server side, ALPN "h2", a certificate from a throwaway CA made by
``trustme``) answers the chat completions API. The pool's client must negotiate HTTP/2 and send
the calls of one chat or ask as streams of one connection; `eukhe ask`, a real process trusting
the CA through SSL_CERT_FILE, must get its answer over it.

The server counts its TLS connections and records each request's stream, the protocol it came
on (a client that did not offer "h2" is refused the handshake), its path and its body."""

from __future__ import annotations

import asyncio
import json
import socket
import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import h2.config
import h2.connection
import h2.events
import pytest
import trustme
from cli.cli_support import run_process

from eukhe.inference.wire import client_for, collect
from eukhe.inference.wire.base import tls
from eukhe.inference.wire.plan import Message, Request, WireModel
from eukhe.inference.wire.pool import Pool, http2_available
from spec.loopback import Stream, Text, render_chat

pytestmark = pytest.mark.skipif(not http2_available(), reason="httpx[http2] (the h2 package) is not installed")


@dataclass
class H2Request:
    connection: int
    stream: int
    path: str
    body: Any


@dataclass
class H2Server:
    """An HTTP/2-only TLS server on 127.0.0.1 answering every POST with one chat completions
    stream whose text is ``answer`` followed by the request's number."""

    ca: trustme.CA
    answer: str = "over h2"
    requests: list[H2Request] = field(default_factory=list)
    connections: int = 0
    refused: int = 0

    def __post_init__(self) -> None:
        self.context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.ca.issue_cert("127.0.0.1").configure_cert(self.context)
        self.context.set_alpn_protocols(["h2"])
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.sock.close()

    def _accept(self) -> None:
        while True:
            try:
                raw, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(raw,), daemon=True).start()

    def _serve(self, raw: socket.socket) -> None:
        try:
            conn = self.context.wrap_socket(raw, server_side=True)
        except (ssl.SSLError, OSError):
            raw.close()
            return
        with conn:
            if conn.selected_alpn_protocol() != "h2":
                with self.lock:
                    self.refused += 1
                return
            with self.lock:
                self.connections += 1
                number = self.connections
            h2conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False))
            h2conn.initiate_connection()
            conn.sendall(h2conn.data_to_send())
            paths: dict[int, str] = {}
            bodies: dict[int, bytes] = {}
            while True:
                try:
                    data = conn.recv(65536)
                except OSError:
                    return
                if not data:
                    return
                for event in h2conn.receive_data(data):
                    if isinstance(event, h2.events.RequestReceived):
                        headers = {_text(k): _text(v) for k, v in event.headers}
                        paths[event.stream_id] = headers[":path"]
                        bodies[event.stream_id] = b""
                    elif isinstance(event, h2.events.DataReceived):
                        bodies[event.stream_id] += event.data
                        h2conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                    elif isinstance(event, h2.events.StreamEnded):
                        self._answer(h2conn, number, event.stream_id, paths[event.stream_id], bodies.pop(event.stream_id))
                conn.sendall(h2conn.data_to_send())

    def _answer(self, h2conn: h2.connection.H2Connection, connection: int, stream: int, path: str, body: bytes) -> None:
        with self.lock:
            self.requests.append(H2Request(connection, stream, path, json.loads(body)))
            n = len(self.requests)
        frames = render_chat(Stream([Text(f"{self.answer} {n}")]), "h2-model")
        h2conn.send_headers(stream, [(":status", "200"), ("content-type", "text/event-stream")])
        h2conn.send_data(stream, b"".join(f for f in frames if isinstance(f, bytes)), end_stream=True)


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value


@pytest.fixture
def ca(tmp_path: Path) -> trustme.CA:
    return trustme.CA()


@pytest.fixture
def server(ca: trustme.CA) -> Iterator[H2Server]:
    running = H2Server(ca)
    yield running
    running.close()


@pytest.fixture
def trusted(ca: trustme.CA, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """SSL_CERT_FILE names the throwaway CA; the process's one TLS context is made again with it
    (and again after the test, without it)."""
    pem = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(pem))
    monkeypatch.setenv("SSL_CERT_FILE", str(pem))
    tls.cache_clear()
    yield pem
    monkeypatch.delenv("SSL_CERT_FILE")
    tls.cache_clear()


def wire(server: H2Server) -> WireModel:
    return WireModel("loop-h2", "h2-model", "openai-completions", f"https://127.0.0.1:{server.port}/v1", "key-h2")


def test_a_pool_sends_a_chats_calls_as_streams_of_one_http2_connection(server: H2Server, trusted: Path) -> None:
    async def go() -> list[str]:
        async with Pool() as pool:
            client = client_for(wire(server), timeout=10.0, pool=pool)
            return [(await collect(client.stream(Request((Message("user", f"q{k}"),))))).text for k in range(3)]

    assert asyncio.run(go()) == ["over h2 1", "over h2 2", "over h2 3"]
    assert (server.connections, server.refused) == (1, 0)
    assert [(r.connection, r.path) for r in server.requests] == [(1, "/v1/chat/completions")] * 3
    assert len({r.stream for r in server.requests}) == 3, "each call is a stream of its own on the one connection"
    assert [r.body["messages"][-1]["content"] for r in server.requests] == ["q0", "q1", "q2"]


def test_a_pool_without_http2_cannot_reach_an_http2_only_server(server: H2Server, trusted: Path) -> None:
    """The server is strict: the test above passes because HTTP/2 was negotiated, not because
    the server also speaks HTTP/1.1."""

    async def go() -> None:
        async with Pool(http2=False) as pool:
            await collect(client_for(wire(server), timeout=10.0, pool=pool).stream(Request((Message("user", "q"),))))

    with pytest.raises(Exception):
        asyncio.run(go())
    assert server.refused == 1 and server.requests == []


def test_ask_gets_its_answer_over_http2(server: H2Server, trusted: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    models = {"loop-h2": {"baseUrl": f"https://127.0.0.1:{server.port}/v1", "apiKey": "key-h2", "api": "openai-completions", "models": [{"id": "h2-model"}]}}
    (agent / "models.json").write_text(json.dumps({"providers": models}), encoding="utf-8")
    done = run_process(["ask", "--provider", "loop-h2", "hello over h2"], agent, SSL_CERT_FILE=str(trusted))
    assert (done.status, done.out) == (0, "over h2 1\n"), done
    assert server.connections == 1 and server.requests[0].body["messages"][-1]["content"] == "hello over h2"
