"""What every wire API client shares: the HTTP request over httpx (async, streaming), the error
typing, the stream filter hook, the tool-call assembler and the order of the end events.

A client subclass gives ``build`` (the URL, headers and JSON body of a request, spelled from
the plan) and ``reader`` (a fresh per-stream state turning the stream's items into project
events). The items are SSE events unless the client says otherwise: an API that frames its
reply another way (Bedrock's binary event stream) names its content type (``stream_type``) and
reads its own items from the body (``items``); one that signs the bytes it sends (SigV4) builds
its own HTTP request (``request``); one whose errors name their kind elsewhere than the body
types them itself (``http_error``).
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import ssl
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator, Coroutine, Mapping
from contextlib import aclosing, asynccontextmanager
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import httpx

from eukhe import strict_json
from eukhe.inference import quirks
from eukhe.inference.wire.events import (
    REFUSAL,
    ConnectFailed,
    Event,
    MalformedEvent,
    ProviderError,
    Refusal,
    Stop,
    StreamCut,
    StreamFilter,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
    WireError,
    WireTimeout,
)
from eukhe.inference.wire.plan import Plan, Request, WireModel, make_plan
from eukhe.inference.wire.sse import SseEvent, read_sse

if TYPE_CHECKING:
    from eukhe.inference.wire.pool import Pool

DEFAULT_TIMEOUT = 120.0  # seconds without a byte (connect, read, write) before WireTimeout
DRAIN_EVENTS = 16  # events read after the API's end event, at most, to reuse the connection
DRAIN_SECONDS = 1.0  # and the time they may take

T = TypeVar("T")


@dataclass
class _Call:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    signature: str = ""


class Calls:
    """Tool calls assembled from their deltas, keyed by the API's own key (an index, an item
    id, a content block), numbered in order of first appearance."""

    def __init__(self) -> None:
        self._calls: dict[object, _Call] = {}
        self._order: list[object] = []

    def __len__(self) -> int:
        return len(self._order)

    def known(self, key: object) -> bool:
        return key in self._calls

    def delta(self, key: object, id: str | None = None, name: str | None = None, arguments: str = "", signature: str = "") -> ToolCallDelta:
        call = self._calls.get(key)
        if call is None:
            call = self._calls[key] = _Call()
            self._order.append(key)
        if id:
            call.id = id
        if name and not call.name:
            call.name = name
        if arguments:
            call.arguments.append(arguments)
        if signature:
            call.signature = signature
        return ToolCallDelta(self._order.index(key), id or None, name or None, arguments)

    def replace_arguments(self, key: object, arguments: str) -> None:
        """The API's final argument text (a done event) wins over the pieces."""
        if key in self._calls:
            self._calls[key].arguments = [arguments]

    def finished(self) -> list[ToolCall]:
        out = []
        for index, key in enumerate(self._order):
            call = self._calls[key]
            out.append(ToolCall(index, call.id or f"call_{index}", call.name, "".join(call.arguments), call.signature))
        return out


class Reader(ABC):
    """Per-stream state of one API: ``feed`` an item of its stream (an SSE event, or what the
    client's ``items`` reads), get project events; ``done`` once the API's end event arrived;
    ``finish`` gives the end events (calls, usage, stop) or raises StreamCut when the end never
    came."""

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.calls = Calls()
        self.usage: Usage | None = None
        self.stop: Stop | None = None
        self.refusal: list[str] = []  # the refusal text as it came
        self.done = False

    @abstractmethod
    def feed(self, event: Any) -> list[Event]:
        """The project events of one item of the API's stream."""

    def complete(self) -> bool:
        """Whether the body may end here (the end event, or what the API counts as one)."""
        return self.done

    def finish(self) -> list[Event]:
        if not self.complete() or self.stop is None:
            raise StreamCut(self.provider, "the stream ended before its end event (connection closed mid-reply)")
        out: list[Event] = list(self.calls.finished())
        if self.stop.reason == REFUSAL:
            out.append(Refusal("".join(self.refusal)))
        if self.usage is not None:
            out.append(self.usage)
        out.append(self.stop)
        return out

    def json(self, event: SseEvent) -> Any:
        try:
            return strict_json.loads(event.data)  # at most 100 deep, no NaN or Infinity
        except json.JSONDecodeError as error:
            raise MalformedEvent(self.provider, f"event {event.event!r} is not JSON: {error.msg} at column {error.colno}: {event.data[:120]!r}") from None

    def obj(self, event: SseEvent) -> dict[str, Any]:
        value = self.json(event)
        if not isinstance(value, dict):
            raise MalformedEvent(self.provider, f"event {event.event!r} is not a JSON object: {event.data[:120]!r}")
        return value


def as_int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def error_kind(body: str) -> str:
    """The type or code an error body names ({"error": {"type"|"code"|"status": ...}})."""
    try:
        data = strict_json.loads(body)
    except ValueError:
        return ""
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(data, list) and data and isinstance(data[0], dict):  # Google's list of one error
        error = data[0].get("error")
    return kind_of(error)


def kind_of(error: Any) -> str:
    """The type, status or code an error object names, the first that is there and not null."""
    if isinstance(error, dict):
        for name in ("type", "status", "code"):
            if isinstance(error.get(name), (str, int)) and not isinstance(error.get(name), bool) and error[name] != "":
                return str(error[name])
    return ""


@cache
def tls() -> ssl.SSLContext:
    """One TLS context per process (building one reads the CA bundle: slow to do per request)."""
    return ssl.create_default_context()


def retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds of a Retry-After header: a number of seconds, or an HTTP date (seconds from
    ``now``, the epoch time, else the clock); None when it is neither."""
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value.strip())
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            return None
        seconds = max(when.timestamp() - (time.time() if now is None else now), 0.0)
    return seconds if 0 <= seconds < 10**7 else None


def _duration(value: Any) -> float | None:
    """A protobuf Duration as JSON ("30s", "1.5s"), in seconds."""
    if isinstance(value, str) and value.endswith("s"):
        try:
            seconds = float(value[:-1])
        except ValueError:
            return None
        return seconds if 0 <= seconds < 10**7 else None
    return None


def retry_hint(headers: Mapping[str, str], body: str, now: float | None = None) -> float | None:
    """How long the provider asks to wait, in seconds, in whichever form it said it: OpenAI's
    retry-after-ms, Retry-After (seconds or an HTTP date), else Google's RetryInfo.retryDelay in
    the error body's details."""
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            value = float(ms.strip()) / 1000
            if 0 <= value < 10**7:
                return value
        except ValueError:
            pass
    seconds = retry_after(headers.get("retry-after"), now)
    if seconds is not None:
        return seconds
    try:
        data = strict_json.loads(body)
    except ValueError:
        return None
    if isinstance(data, list) and data:
        data = data[0]
    error = data.get("error") if isinstance(data, dict) else None
    details = error.get("details") if isinstance(error, dict) else None
    for detail in details if isinstance(details, list) else []:
        if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("google.rpc.RetryInfo"):
            return _duration(detail.get("retryDelay"))
    return None


def should_retry(error: ProviderError, headers: Mapping[str, str]) -> ProviderError:
    """The error, retryable as the provider's x-should-retry header says when it says
    (Anthropic's and OpenAI's APIs send it; their SDKs obey it), else by its status."""
    said = headers.get("x-should-retry", "").strip().lower()
    if said in ("true", "false"):
        error.retryable = said == "true"
    return error


class WireClient(ABC):
    """One wire API. ``stream`` sends one request and yields its events."""

    api: ClassVar[str] = ""
    stream_type: ClassVar[str] = "event-stream"  # what the content type of a streamed reply contains

    def __init__(
        self,
        model: WireModel,
        *,
        book: quirks.Rulebook | None = None,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT,
        http: httpx.AsyncClient | None = None,
        deadline: float | None = None,
        pool: Pool | None = None,
    ) -> None:
        """``timeout``: seconds without a byte (connect, read, write); ``deadline``: seconds for
        the whole reply (a server that trickles bytes forever still ends), None: no bound;
        ``http``: the HTTP client of every request, else ``pool``'s client of the provider (a
        chat's or an ask's, ``wire.pool``), else a client of the request's own, closed after it."""
        self.model = model
        self.deadline = deadline
        self.book = book if book is not None else quirks.shipped()
        self.timeout = timeout if isinstance(timeout, httpx.Timeout) else httpx.Timeout(timeout)
        self.http = http
        self.pool = pool

    @property
    def provider(self) -> str:
        return self.model.provider

    def plan(self, request: Request) -> Plan:
        return make_plan(self.book, self.model, request)

    @abstractmethod
    def build(self, request: Request, plan: Plan) -> tuple[str, dict[str, str], dict[str, Any]]:
        """The request's URL, headers and JSON body, in the API's own form."""

    @abstractmethod
    def reader(self, plan: Plan) -> Reader:
        """A reader of the reply's stream."""

    def headers(self, own: Mapping[str, str]) -> dict[str, str]:
        out = {"content-type": "application/json", "accept": "text/event-stream", **own}
        out.update(self.model.headers or {})
        return out

    def url(self, path: str) -> str:
        return self.model.base_url.rstrip("/") + path

    def request(self, http: httpx.AsyncClient, url: str, headers: dict[str, str], body: dict[str, Any]) -> httpx.Request:
        """The HTTP request of a built body: a POST of its JSON."""
        return http.build_request("POST", url, headers=headers, json=body, timeout=self.timeout)

    def http_error(self, status: int, headers: httpx.Headers, body: str) -> ProviderError:
        """The error of an HTTP error status: the kind its body names, retryable as the status
        and the provider's x-should-retry say, with the wait it asks for."""
        return should_retry(ProviderError(self.provider, status, body, error_kind(body), retry_hint(headers, body)), headers)

    async def items(self, response: httpx.Response) -> AsyncGenerator[Any, None]:
        """The items of a streamed reply the reader is fed: its SSE events."""
        async with closing(response.aiter_text()) as chunks, aclosing(read_sse(chunks)) as events:
            async for event in events:
                yield event

    async def stream(self, request: Request, filter: StreamFilter | None = None) -> AsyncGenerator[Event, None]:
        """The request's events. Consume it inside ``contextlib.aclosing`` (or ``closing``): a
        consumer that stops early then closes the request on its way out, not at garbage
        collection."""
        plan = self.plan(request)
        url, headers, body = self.build(request, plan)
        shared = self.http if self.http is not None else self.pool.client(self.provider) if self.pool is not None else None
        own = shared is None
        http = httpx.AsyncClient(timeout=self.timeout, verify=tls()) if shared is None else shared
        try:
            async with aclosing(self._send(http, plan, url, headers, body, filter)) as events:
                async for event in events:
                    yield event
        finally:
            if own:
                await _shielded(http.aclose())

    async def _send(
        self, http: httpx.AsyncClient, plan: Plan, url: str, headers: dict[str, str], body: dict[str, Any], filter: StreamFilter | None
    ) -> AsyncGenerator[Event, None]:
        """The request's events; the response is closed (its connection back in the pool) before
        the end events go out, and by a close no cancellation interrupts (``_release``)."""
        name = self.provider
        loop = asyncio.get_running_loop()
        end = None if self.deadline is None else loop.time() + self.deadline
        try:
            response = await http.send(self.request(http, url, headers, body), stream=True)
            items: AsyncGenerator[Any, None] | None = None
            ended = False  # the API's end event came: what follows is read in the release
            try:
                if response.status_code >= 400:
                    text = (await response.aread()).decode("utf-8", errors="replace")
                    raise self.http_error(response.status_code, response.headers, text)
                kind = response.headers.get("content-type", "")
                if self.stream_type not in kind:
                    text = (await response.aread()).decode("utf-8", errors="replace")
                    raise MalformedEvent(name, f"HTTP {response.status_code} answered {kind or 'no content type'}, not an event stream: {text[:200]!r}")
                reader = self.reader(plan)
                items = self.items(response)
                async for item in items:
                    if end is not None and loop.time() > end:
                        raise WireTimeout(name, f"no whole reply from {url} within the deadline ({self.deadline} s)")
                    for event in reader.feed(item):
                        if filter is not None and isinstance(event, (TextDelta, ThinkingDelta)):
                            filter(event)
                        yield event
                    if reader.done:
                        ended = True
                        break
                tail = reader.finish()
            finally:
                await _release(response, items if ended else None, items)
        except httpx.ConnectTimeout as error:
            raise WireTimeout(name, f"no connection to {url} within the timeout ({_said(error)})") from None
        except httpx.TimeoutException as error:
            raise WireTimeout(name, f"no answer from {url} within the read timeout ({_said(error)})") from None
        except httpx.ConnectError as error:
            raise ConnectFailed(name, f"cannot connect to {url}: {_said(error)}") from None
        except (httpx.RemoteProtocolError, httpx.ReadError) as error:
            raise StreamCut(name, f"the connection to {url} was cut mid-reply: {_said(error)}") from None
        except httpx.HTTPError as error:
            raise ConnectFailed(name, f"request to {url} failed: {type(error).__name__}: {_said(error)}") from None
        for event in tail:
            yield event


@asynccontextmanager
async def closing(events: AsyncIterator[T]) -> AsyncGenerator[AsyncIterator[T], None]:
    """``events`` for an ``async for``, closed on the way out when it can be (an async
    generator: a model's ``stream``), whether the loop ended, broke, raised or was cancelled."""
    try:
        yield events
    finally:
        close = getattr(events, "aclose", None)
        if close is not None:
            await close()


async def _drain(items: AsyncIterator[Any]) -> None:
    """Read what follows the API's end event (the body's last chunk; a trailing comment or
    [DONE]), at most ``DRAIN_EVENTS`` items within ``DRAIN_SECONDS``: a body read to its end
    leaves its connection open for the next request; one that goes on is closed instead."""
    try:
        async with asyncio.timeout(DRAIN_SECONDS):
            seen = 0
            async for _item in items:
                seen += 1
                if seen >= DRAIN_EVENTS:
                    return
    except (TimeoutError, httpx.HTTPError, WireError):
        return  # the reply is whole: a tail that does not end (or does not parse) only costs the connection


async def _release(response: httpx.Response, rest: AsyncIterator[Any] | None, *streams: AsyncIterator[Any] | None) -> None:
    """Read the ``rest`` of a body whose end event came (bounded, ``_drain``), close the response
    (its connection goes back to the pool when its body was read to the end, else it is closed),
    then the readers over it. This runs as a task of its own, shielded: a call cancelled
    meanwhile (a compaction the planner stopped, a deadline) still gives its connection back; a
    close cut short by a cancellation left httpcore's pool holding the connection for ever
    (issue 12: PoolTimeout). The call awaits it, so an uncancelled call ends after its close."""

    async def close() -> None:
        if rest is not None:
            await _drain(rest)  # the body's end closes the response inside httpx: here, shielded
        await response.aclose()
        for stream in streams:
            close = getattr(stream, "aclose", None)
            if close is not None:
                await close()

    await _shielded(close())


_closing: set[asyncio.Task[None]] = set()  # the closes under way (a task needs a reference to live)


def _closed(task: asyncio.Task[None]) -> None:
    _closing.discard(task)
    if not task.cancelled():
        task.exception()  # seen: a close that failed after its call was cancelled is not reported


async def _shielded(work: Coroutine[Any, Any, None]) -> None:
    """Run ``work`` to its end even when the caller is cancelled meanwhile."""
    task = asyncio.ensure_future(work)
    _closing.add(task)
    task.add_done_callback(_closed)
    await asyncio.shield(task)


def _said(error: Exception) -> str:
    text = str(error).strip()
    return text or type(error).__name__
