"""AWS Signature Version 4 (the Authorization header Bedrock's runtime requires).

``sign`` returns the headers to add to a request (``x-amz-date``, ``x-amz-security-token`` with
session credentials, ``authorization``) for its method, URL, headers, body, credentials,
region, service and time. The canonical request is AWS's: the URL's path percent-encoded once
more (every service but S3 signs the path encoded twice), the query as the URL has it sorted by
key, the signed headers' names lower-cased and sorted with their values' whitespace collapsed
(the host always among them), and the body's SHA-256.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from urllib.parse import quote, urlsplit

ALGORITHM = "AWS4-HMAC-SHA256"
# headers a proxy or the HTTP client may change or drop on the way: never signed
UNSIGNED = frozenset({
    "authorization", "baggage", "connection", "expect", "keep-alive", "proxy-authenticate", "proxy-authorization", "te",
    "traceparent", "tracestate", "trailer", "transfer-encoding", "upgrade", "user-agent", "x-amzn-trace-id",
})


@dataclass(frozen=True)
class Credentials:
    access_key: str
    secret_key: str
    token: str | None = None


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode("utf-8"), hashlib.sha256).digest()


def _without_dot_segments(path: str) -> str:
    out: list[str] = []
    for segment in path.split("/"):
        if segment == ".":
            continue
        if segment == "..":
            if out and out[-1] != "":
                out.pop()
            continue
        out.append(segment)
    joined = "/".join(out)
    if path.endswith(("/.", "/..")):
        joined += "/"
    return joined if joined.startswith("/") else "/" + joined


def _host(url: str) -> str:
    parts = urlsplit(url)
    default = {"http": 80, "https": 443}.get(parts.scheme)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    return host if parts.port is None or parts.port == default else f"{host}:{parts.port}"


def canonical_request(method: str, url: str, headers: Mapping[str, str], body: bytes) -> tuple[str, str]:
    """The canonical request and its signed header names (``;``-joined)."""
    parts = urlsplit(url)
    signed = {name.lower(): " ".join(value.split()) for name, value in headers.items() if name.lower() not in UNSIGNED}
    signed.setdefault("host", _host(url))
    names = sorted(signed)
    pairs = sorted(pair.partition("=")[::2] for pair in parts.query.split("&")) if parts.query else []
    query = "&".join(f"{key}={value}" for key, value in pairs)
    lines = [
        method.upper(),
        quote(_without_dot_segments(parts.path or "/"), safe="/~"),
        query,
        "".join(f"{name}:{signed[name]}\n" for name in names),
        ";".join(names),
        hashlib.sha256(body).hexdigest(),
    ]
    return "\n".join(lines), ";".join(names)


def sign(method: str, url: str, headers: Mapping[str, str], body: bytes, credentials: Credentials, region: str, service: str, now: datetime | None = None) -> dict[str, str]:
    """The headers that sign the request: add them to ``headers`` as they are."""
    when = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    stamp = when.strftime("%Y%m%dT%H%M%SZ")
    added = {"x-amz-date": stamp}
    if credentials.token:
        added["x-amz-security-token"] = credentials.token
    request, names = canonical_request(method, url, {**{k: v for k, v in headers.items() if k.lower() not in added}, **added}, body)
    scope = f"{stamp[:8]}/{region}/{service}/aws4_request"
    to_sign = "\n".join((ALGORITHM, stamp, scope, hashlib.sha256(request.encode("utf-8")).hexdigest()))
    key = _hmac(_hmac(_hmac(_hmac(("AWS4" + credentials.secret_key).encode("utf-8"), stamp[:8]), region), service), "aws4_request")
    signature = hmac.new(key, to_sign.encode("utf-8"), hashlib.sha256).hexdigest()
    added["authorization"] = f"{ALGORITHM} Credential={credentials.access_key}/{scope}, SignedHeaders={names}, Signature={signature}"
    return added
