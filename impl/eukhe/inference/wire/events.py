"""The one event type of every wire API (inference.md S6, issue 14): what a provider's stream
turns into, and the typed errors of a request.

A stream is a sequence of ``Event``:

- ``TextDelta`` and ``ThinkingDelta``: output text and reasoning, in arrival order, each with
  the block (content index) it belongs to; ``ThinkingSignature`` keeps a signature or an
  encrypted reasoning blob the provider wants back;
- ``ToolCallDelta``: a piece of a tool call as it streams (id and name when first seen,
  argument text as it arrives);
- ``PromptProgress``: llama.cpp's prompt processing progress (S6.7), before the first token;
- at the end, whatever the stop reason (S6.10), one ``ToolCall`` per call assembled from its
  deltas (raw argument text: reading and repairing it is the tool-call layer's work), then
  ``Refusal`` when the model declined (its text), then ``Usage`` when the provider reported
  token counts, then exactly one ``Stop``.

A stream that ends before its API's end event raises ``StreamCut``; a provider error (an HTTP
status, an error event) raises ``ProviderError``; a connection refused ``ConnectFailed``; a
stall past the read timeout ``WireTimeout``; an event that does not parse ``MalformedEvent``.
Every error names the provider and the reason.

The stream filter hook: a client given ``filter`` calls it on every ``TextDelta`` and
``ThinkingDelta`` before yielding it; the filter may raise (the repetition guard raises its
retryable stream_repeating error, a subclass of ``Retryable``): the client then closes the
response and the error propagates unchanged. A new attempt takes a new filter.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass

# Stop reasons of the project (pi-ai's StopReason): the provider's own value is kept in ``raw``.
STOP = "stop"
LENGTH = "length"
TOOL_USE = "toolUse"
REFUSAL = "refusal"  # a content filter or a refusal stop
STOP_REASONS: tuple[str, ...] = (STOP, LENGTH, TOOL_USE, REFUSAL)


@dataclass(frozen=True)
class TextDelta:
    text: str
    block: int = 0


@dataclass(frozen=True)
class ThinkingDelta:
    text: str
    block: int = 0


@dataclass(frozen=True)
class ThinkingSignature:
    signature: str
    block: int = 0
    redacted: bool = False  # Anthropic's redacted_thinking: ``signature`` is its opaque data
    item: str = ""  # the provider's id of the reasoning item (OpenAI Responses)


@dataclass(frozen=True)
class ToolCallDelta:
    index: int  # the call's place in the reply (0, 1, ...)
    id: str | None = None
    name: str | None = None
    arguments: str = ""


@dataclass(frozen=True)
class ToolCall:
    index: int
    id: str
    name: str
    arguments: str  # the raw argument text, as streamed (JSON when the model wrote it well)
    signature: str = ""  # Gemini's thoughtSignature of the call's part, sent back on that part


@dataclass(frozen=True)
class PromptProgress:
    total: int
    cache: int
    processed: int
    time_ms: float


@dataclass(frozen=True)
class Usage:
    input: int = 0  # prompt tokens not read from cache
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    reasoning: int = 0  # of the output, when the provider says
    service_tier: str | None = None


@dataclass(frozen=True)
class Refusal:
    """The model declined to answer (the REFUSAL stop): ``text`` is what the provider said of it
    (OpenAI's refusal text, Anthropic's stop_details.explanation, Gemini's finishMessage), ""
    when it said nothing (a content filter). It comes with the end events, before ``Usage``,
    on every stream whose ``Stop`` is REFUSAL."""

    text: str


@dataclass(frozen=True)
class Stop:
    reason: str  # one of STOP_REASONS
    raw: str  # the provider's value (finish_reason, stop_reason, status, finishReason)


Event = TextDelta | ThinkingDelta | ThinkingSignature | ToolCallDelta | ToolCall | PromptProgress | Refusal | Usage | Stop
Delta = TextDelta | ThinkingDelta
StreamFilter = Callable[[Delta], None]


def block_key(delta: Delta) -> tuple[str, int]:
    """The block a delta belongs to, text and thinking told apart (each keeps its own partial
    line in the repetition guard; every block shares one run)."""
    return ("thinking" if isinstance(delta, ThinkingDelta) else "text", delta.block)


def filter_of(feed: Callable[[Hashable, str], BaseException | None]) -> StreamFilter:
    """A stream filter from a guard's ``feed(block, text)``, which answers None while the stream
    may go on and its error once it must stop: the error is raised as it is."""

    def watch(delta: Delta) -> None:
        cut = feed(block_key(delta), delta.text)
        if cut is not None:
            raise cut

    return watch


# -- errors -----------------------------------------------------------------------------------------


class Retryable(Exception):
    """Marker: an error the harness may retry (a new attempt, a new filter)."""


class WireError(Exception):
    """A request that did not give a whole reply; ``provider`` and ``reason`` say why."""

    retryable = False

    def __init__(self, provider: str, reason: str) -> None:
        super().__init__(f"{provider}: {reason}")
        self.provider = provider
        self.reason = reason


class ProviderError(WireError):
    """The provider answered with an error: an HTTP status (``status``) or an error event in
    the stream (``status`` None); ``body`` is what it said."""

    def __init__(self, provider: str, status: int | None, body: str, kind: str = "", retry_after: float | None = None) -> None:
        shown = body.strip().replace("\n", " ")
        if len(shown) > 300:
            shown = shown[:300] + "..."
        where = f"HTTP {status}" if status is not None else "error event"
        super().__init__(provider, f"{where}{' ' + kind if kind else ''}: {shown or '(empty body)'}")
        self.status = status
        self.body = body
        self.kind = kind
        self.retry_after = retry_after  # seconds the provider asks to wait (base.retry_hint)
        self.retryable = status is None or status == 408 or status == 409 or status == 429 or status >= 500


class ConnectFailed(WireError):
    """No connection: refused, unknown host, TLS failure."""

    retryable = True


class WireTimeout(WireError):
    """No byte within the timeout (connect, read or write)."""

    retryable = True


class StreamCut(WireError):
    """The connection ended before the stream's end event."""

    retryable = True


class PromptBlocked(WireError):
    """The provider refused the prompt itself before any reply (Gemini's
    promptFeedback.blockReason): the same request gets the same answer, so it is not retried."""

    def __init__(self, provider: str, reason: str, block_reason: str) -> None:
        super().__init__(provider, reason)
        self.block_reason = block_reason


class MalformedEvent(WireError):
    """An event the API's grammar does not allow (not JSON, a wrong shape)."""


class BadRequest(ValueError):
    """A request the wire API cannot send (an unknown API, a message it cannot carry)."""
