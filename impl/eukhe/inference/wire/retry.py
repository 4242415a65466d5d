"""Retries of a wire request (inference.md S6; control.md S4, the retry.* settings).

``Retrying`` wraps a wire client: a request that fails with a retryable error (``WireError``
with ``retryable``: HTTP 408, 409, 429, 5xx and 529 overloaded, an error event, no connection,
a timeout, a cut stream) before any of its reply arrived is sent again, at most
``retry.maxRetries`` times, while the session switch ``retry.enabled`` (auto retry) is on.

The wait before retry n (1, 2, ...):

- the provider's hint when it gave one (``retry_after``: Retry-After in seconds or as a date,
  retry-after-ms, Gemini's RetryInfo; ``base.retry_hint``), as it asked;
- else ``retry.baseDelayMs`` * 2^(n-1), at most ``MAX_DELAY_MS``, times a jitter in (0.75, 1]
  (the vendors' SDKs take up to a quarter off, so clients that failed together do not come back
  together).

A hint over ``MAX_DELAY_MS`` is not waited for: the request fails at once with ``WaitTooLong``,
which names the wait the provider asked for (a quota that resets in hours is not a pause).

A stream that already gave part of its reply (text, thinking, a signature, a tool call, a
refusal) and then fails is not sent again: the consumer has shown or kept that part, and a new
reply would not continue it. Its error goes to the consumer as it is. (A reply the repetition
guard cut is the harness's own retry with a note, S6.5, not this one.)

Each retry is announced before its wait (``notify``, a ``Retry``): `eukhe ask` prints it as one
line on stderr, `eukhe chat` as one row. The clock and the random source are injected: tests
record the waits without sleeping.
"""

from __future__ import annotations

import asyncio
import random as randomness
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from eukhe.inference.wire.events import (
    ConnectFailed,
    Event,
    PromptProgress,
    ProviderError,
    StreamCut,
    StreamFilter,
    WireError,
    WireTimeout,
)
from eukhe.inference.wire.plan import Request

# eukhe's own, not in the seeds: the longest wait, in milliseconds, a retry takes (a backoff is
# cut to it; a longer hint of the provider fails the request). Not a setting yet.
MAX_DELAY_MS = 60_000
JITTER = 0.25  # the largest share of a backoff the jitter takes off


class Clock(Protocol):  # pragma: no mutate block
    """What a retry waits with."""

    async def sleep(self, seconds: float) -> None: ...


class SystemClock:
    """The event loop's clock: ``asyncio.sleep`` (a cancelled request stops waiting)."""

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


CLOCK: Clock = SystemClock()  # the clock of a Retrying given none (a test of the commands sets a fake)


class Streaming(Protocol):  # pragma: no mutate block
    """A wire client: ``stream`` sends one request and yields its events."""

    def stream(self, request: Request, filter: StreamFilter | None = None) -> AsyncGenerator[Event, None]: ...


@dataclass(frozen=True)
class Policy:
    """The retry settings: retry.enabled, retry.maxRetries, retry.baseDelayMs (control.md S4)."""

    enabled: bool = True
    max_retries: int = 3
    base_delay_ms: int = 2000
    max_delay_ms: int = MAX_DELAY_MS

    @classmethod
    def from_settings(cls, value: Callable[[str], Any]) -> Policy:
        """The policy of a session's settings (``value(cvar)``: the cvar's value)."""
        return cls(bool(value("retry.enabled")), int(value("retry.maxRetries")), int(value("retry.baseDelayMs")))

    def backoff(self, retry: int, draw: float) -> float:
        """Seconds before retry ``retry`` (1, 2, ...) with no hint: the exponential backoff, at
        most the cap, less the jitter's share (``draw`` in [0, 1))."""
        exponent = min(retry - 1, 64)  # 2^64 ms is past any cap
        delay_ms = min(self.base_delay_ms << exponent, self.max_delay_ms)
        return delay_ms * (1 - JITTER * draw) / 1000

    def wait(self, retry: int, hint: float | None, draw: float) -> float | None:
        """Seconds before retry ``retry``: the provider's ``hint`` when it gave one, else the
        backoff; None when the hint is over the cap (not retried)."""
        if hint is None:
            return self.backoff(retry, draw)
        return hint if hint * 1000 <= self.max_delay_ms else None


class WaitTooLong(WireError):
    """The provider asks to wait longer than a retry waits: the request fails now."""

    def __init__(self, error: WireError, wait: float, cap: float) -> None:
        super().__init__(error.provider, f"{error.reason}; the provider asks to wait {wait:g} s, more than the {cap:g} s a retry waits: not retried")
        self.error = error
        self.wait = wait


def kind_of(error: WireError) -> str:
    """What went wrong, in a few words: HTTP 429 rate_limit_error, stream cut, timeout."""
    if isinstance(error, ProviderError):
        where = f"HTTP {error.status}" if error.status is not None else "error event"
        return f"{where} {error.kind}" if error.kind else where
    if isinstance(error, StreamCut):
        return "stream cut"
    if isinstance(error, WireTimeout):
        return "timeout"
    if isinstance(error, ConnectFailed):
        return "no connection"
    return type(error).__name__


@dataclass(frozen=True)
class Retry:
    """One retry, announced before its wait: retry ``attempt`` of at most ``retries``."""

    attempt: int
    retries: int
    error: WireError
    wait: float  # seconds

    def line(self) -> str:
        """``retry 1/3: loop: HTTP 429 rate_limit_error; waiting 2.0 s``"""
        return f"retry {self.attempt}/{self.retries}: {self.error.provider}: {kind_of(self.error)}; waiting {self.wait:.1f} s"


def _begun(event: Event) -> bool:
    """Whether the event is part of the reply (llama.cpp's prompt progress is not)."""
    return not isinstance(event, PromptProgress)


class Retrying:
    """A wire client whose requests are retried by ``policy`` (the module's docstring)."""

    def __init__(
        self,
        client: Streaming,
        policy: Policy | None = None,
        *,
        clock: Clock | None = None,
        random: Callable[[], float] | None = None,
        notify: Callable[[Retry], None] | None = None,
    ) -> None:
        self.client = client
        self.policy = policy if policy is not None else Policy()
        self.clock: Clock = clock if clock is not None else CLOCK
        self.random = random if random is not None else randomness.random
        self.notify = notify

    async def stream(self, request: Request, filter: StreamFilter | None = None) -> AsyncGenerator[Event, None]:
        """The request's events: the reply's from the attempt that gave it, and before them the
        prompt progress of every attempt as it came (progress is no reply: an attempt cut after it
        alone is retried); a consumer closes it as it closes a wire client's stream."""
        policy = self.policy
        retries = policy.max_retries if policy.enabled else 0
        attempt = 0
        while True:
            begun = False
            try:
                events = self.client.stream(request, filter)
                try:
                    async for event in events:
                        begun = begun or _begun(event)
                        yield event
                finally:
                    await events.aclose()
                return
            except WireError as error:
                if begun or not error.retryable or attempt >= retries:
                    raise
                attempt += 1
                hint = getattr(error, "retry_after", None)
                wait = policy.wait(attempt, hint, self.random())
                if wait is None:
                    assert hint is not None
                    raise WaitTooLong(error, hint, policy.max_delay_ms / 1000) from error
                if self.notify is not None:
                    self.notify(Retry(attempt, retries, error, wait))
                await self.clock.sleep(wait)
