"""botocore judges the two pieces of the Bedrock wire that are ours by hand: the AWS
event-stream framing (impl/eukhe/inference/wire/eventstream.py) and the SigV4 signer
(impl/eukhe/inference/wire/sigv4.py). Production never imports botocore; these tests do.

1. Framing, both ways: botocore's ``EventStreamBuffer`` parses what our encoder frames (every
   header type, empty and large payloads, unicode), fed in pieces of every size; our decoder
   parses what botocore frames (botocore's own test vectors' encoder: its
   ``EventStreamMessage`` is built from our decoded parts and re-serialized by hand from
   botocore's prelude, so a byte botocore would read differently fails here). A flipped byte in
   the prelude or the message is refused by both.
2. Signing: ``botocore.auth.SigV4Auth`` computes the same Authorization header as our signer for
   the same request (method, URL with a model id that needs percent-encoding, headers, body),
   credentials (with and without a session token), region, service and time (botocore's clock
   ``get_current_datetime`` pinned to ours).
"""

from __future__ import annotations

import random
import struct
import uuid
from datetime import datetime, timezone
from typing import Any

import botocore.auth
import pytest
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials as BotoCredentials
from botocore.eventstream import EventStreamBuffer, ParserError

from eukhe.inference.wire import eventstream, sigv4
from eukhe.inference.wire.eventstream import Decoder, FramingError, Int8, Int16, Int32, encode

WHEN = datetime(2026, 1, 1, 12, 34, 56, tzinfo=timezone.utc)
UUID = uuid.UUID("12345678-1234-5678-1234-567812345678")

MESSAGES: list[tuple[dict[str, Any], bytes]] = [
    ({":event-type": "contentBlockDelta", ":content-type": "application/json", ":message-type": "event"}, b'{"contentBlockIndex":0,"delta":{"text":"Hello"}}'),
    ({":message-type": "exception", ":exception-type": "throttlingException"}, '{"message":"Too many tokens — «slow»"}'.encode()),
    ({}, b""),
    ({"t": True, "f": False, "i8": Int8(-7), "i16": Int16(-300), "i32": Int32(70000), "i64": 2**40, "b": b"\x00\xff", "s": "naïve ✓",
      "ts": WHEN, "u": UUID}, b"x" * 70000),
]


def boto_parse(data: bytes, piece: int) -> list[Any]:
    buffer = EventStreamBuffer()
    out = []
    for at in range(0, len(data), piece):
        buffer.add_data(data[at : at + piece])
        out += list(buffer)
    return out


def plain(value: Any) -> Any:
    """A header value as botocore gives it: an int for every integer width, a timestamp's
    epoch milliseconds, a UUID's 16 bytes."""
    if isinstance(value, (Int8, Int16, Int32)):
        return value.value
    if isinstance(value, datetime):
        return int(value.timestamp() * 1000)
    if isinstance(value, uuid.UUID):
        return value.bytes
    return value


@pytest.mark.parametrize("piece", [1, 7, 4096, 1 << 20])
def test_botocore_parses_what_we_frame(piece: int) -> None:
    data = b"".join(encode(headers, payload) for headers, payload in MESSAGES)
    parsed = boto_parse(data, piece)
    assert len(parsed) == len(MESSAGES)
    for message, (headers, payload) in zip(parsed, MESSAGES):
        assert message.payload == payload
        got = dict(message.headers)
        want = {name: plain(value) for name, value in headers.items()}
        assert got == want


def boto_frame(headers: dict[str, Any], payload: bytes) -> bytes:
    """A message framed as botocore's serializer writes one for Bedrock's tests
    (botocore.eventstream has no encoder: this is the framing its parser and its test suite
    define, written with binascii.crc32 as botocore checks it)."""
    import binascii

    block = b""
    for name, value in headers.items():
        raw = name.encode()
        block += struct.pack("!B", len(raw)) + raw + struct.pack("!BH", 7, len(value.encode())) + value.encode()
    total = 16 + len(block) + len(payload)
    prelude = struct.pack("!II", total, len(block))
    prelude += struct.pack("!I", binascii.crc32(prelude) & 0xFFFFFFFF)
    body = prelude + block + payload
    return body + struct.pack("!I", binascii.crc32(body) & 0xFFFFFFFF)


@pytest.mark.parametrize("piece", [1, 5, 64, 1 << 20])
def test_our_decoder_parses_what_botocore_parses(piece: int) -> None:
    rng = random.Random(5)
    frames = []
    for k in range(40):
        headers = {":event-type": rng.choice(["messageStart", "contentBlockDelta", "metadata"]), ":content-type": "application/json", f"x-{k}": "é" * rng.randrange(0, 40)}
        payload = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 3000)))
        frames.append(boto_frame(headers, payload))
    data = b"".join(frames)
    theirs = boto_parse(data, 1 << 20)
    decoder = Decoder()
    ours = []
    for at in range(0, len(data), piece):
        ours += decoder.feed(data[at : at + piece])
    assert decoder.pending == 0
    assert [(m.headers, m.payload) for m in ours] == [(dict(m.headers), m.payload) for m in theirs]
    assert [encode(m.headers, m.payload) for m in ours] == frames  # string headers: our framing is byte for byte botocore's


@pytest.mark.parametrize("where", [0, 5, 9, 20, -1])
def test_a_flipped_byte_is_refused_by_both(where: int) -> None:
    frame = bytearray(encode({":event-type": "messageStop"}, b'{"stopReason":"end_turn"}'))
    frame[where] ^= 0x01
    with pytest.raises(ParserError):
        boto_parse(bytes(frame), 1 << 20)
    with pytest.raises(FramingError):
        Decoder().feed(bytes(frame))


def test_a_message_past_the_limits_is_refused() -> None:
    with pytest.raises(FramingError):
        encode({}, b"x" * eventstream.MAX_MESSAGE)
    prelude = struct.pack(">II", eventstream.MAX_MESSAGE + 1, 0)
    with pytest.raises(FramingError, match="limits"):
        Decoder().feed(prelude + struct.pack(">I", eventstream._crc(prelude)))


URLS = [
    "https://bedrock-runtime.us-east-1.amazonaws.com/model/us.anthropic.claude-opus-4-6-v1%3A0/converse-stream",
    "https://bedrock-runtime.eu-west-3.amazonaws.com/model/mistral.mistral-large-2407-v1%3A0/converse-stream?b=2&a=1",
    "http://127.0.0.1:8123/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream",
]


@pytest.mark.parametrize("url", URLS)
@pytest.mark.parametrize("token", [None, "FwoGZXIvYXdzEB-session/token+=="])
def test_botocore_signs_as_we_do(url: str, token: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: WHEN.replace(tzinfo=None))
    body = '{"messages":[{"role":"user","content":[{"text":"héllo"}]}]}'.encode()
    headers = {"content-type": "application/json", "accept": "application/vnd.amazon.eventstream", "x-amzn-bedrock-trace": "  a   b  "}
    region = url.split(".")[1] if "amazonaws" in url else "us-west-2"
    ours = sigv4.sign("POST", url, headers, body, sigv4.Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", token), region, "bedrock", WHEN)
    request = AWSRequest(method="POST", url=url, headers=dict(headers), data=body)
    botocore.auth.SigV4Auth(BotoCredentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", token), "bedrock", region).add_auth(request)
    assert ours["authorization"] == request.headers["Authorization"]
    assert ours["x-amz-date"] == request.headers["X-Amz-Date"] == "20260101T123456Z"
    assert ours.get("x-amz-security-token") == request.headers.get("X-Amz-Security-Token")


def test_a_changed_request_changes_the_signature() -> None:
    credentials = sigv4.Credentials("AKID", "secret")
    base = sigv4.sign("POST", URLS[0], {"content-type": "application/json"}, b"{}", credentials, "us-east-1", "bedrock", WHEN)
    assert sigv4.sign("POST", URLS[0], {"content-type": "application/json"}, b"{ }", credentials, "us-east-1", "bedrock", WHEN) != base
    assert sigv4.sign("POST", URLS[0], {"content-type": "application/json"}, b"{}", credentials, "us-west-2", "bedrock", WHEN) != base
    assert sigv4.sign("POST", URLS[0], {"content-type": "application/json"}, b"{}", sigv4.Credentials("AKID", "other"), "us-east-1", "bedrock", WHEN) != base
