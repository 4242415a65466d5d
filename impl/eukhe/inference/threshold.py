"""The compaction threshold (inference.md S6.6): generation::decide threshold_for and
generation::threshold_compaction.

limit = contextWindow - reserveTokens; threshold = limit - margin (BackgroundMargin: the eukhe
session's 10% of the window, the harness library's default 32,768 tokens). A request over the
threshold starts background compaction; one over the limit blocks until compaction is done. The
check itself runs as the compiled model ``bend.infer.over`` (bend/ffi_infer_threshold: no copy
here); production keeps the byte work: counting requests, counting tokens (the local estimate,
or the provider's count_tokens when compaction.providerTokenCount is on, falling back to the
estimate with a warning), and rounding reserve and margin up to whole tokens (NaN reads 0; past
10^14 saturates), exact for a whole reserve. Compaction keeps the newest keepRecentTokens
(default 40,000), at most half the threshold so history remains.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field

from bend import infer as compiled

log = logging.getLogger(__name__)

NONE, BACKGROUND, BLOCKING = compiled.NO_COMPACTION, compiled.BACKGROUND, compiled.BLOCKING
SATURATE = 10**14
SESSION_PERCENT = 10.0  # eukhe session: 10% of the window
LIBRARY_MARGIN = 32_768  # the harness library's default
KEEP_RECENT_DEFAULT = 40_000
KEEP_CVAR, PROVIDER_COUNT_CVAR, ENABLED_CVAR = "compaction.keepRecentTokens", "compaction.providerTokenCount", "compaction.enabled"


def whole(value: float) -> int:
    """A token amount as whole tokens: rounded up; NaN and negatives read 0; past 10^14 saturates."""
    if math.isnan(value) or value <= 0:
        return 0
    if value >= SATURATE:
        return SATURATE
    return math.ceil(value)


@dataclass(frozen=True)
class BackgroundMargin:
    """The margin below the limit: a percent of the window, or tokens."""

    percent: float | None = None
    tokens: float | None = None

    @classmethod
    def window_percent(cls, percent: float) -> BackgroundMargin:
        return cls(percent=percent)

    @classmethod
    def fixed(cls, tokens: float) -> BackgroundMargin:
        return cls(tokens=tokens)

    def whole_tokens(self, window: int) -> int:
        if self.percent is not None:
            return whole(window * self.percent / 100.0)
        return whole(self.tokens if self.tokens is not None else 0.0)


SESSION_MARGIN = BackgroundMargin.window_percent(SESSION_PERCENT)
LIBRARY_DEFAULT = BackgroundMargin.fixed(LIBRARY_MARGIN)


@dataclass(frozen=True)
class Policy:
    """The compaction policy of a session: on or off, the window, the reserve, the margin, the
    tokens to keep."""

    enabled: bool
    window: int
    reserve: float
    margin: BackgroundMargin = SESSION_MARGIN
    keep_recent: int = KEEP_RECENT_DEFAULT


@dataclass(frozen=True)
class Threshold:
    """The policy in whole tokens: the window, the reserve, the margin, the limit, the
    background threshold and the tokens compaction keeps."""

    window: int
    reserve: int
    margin: int
    limit: int
    background: int
    keep: int


def threshold_for(policy: Policy) -> Threshold:
    window = min(max(policy.window, 0), SATURATE)
    reserve = whole(policy.reserve)
    margin = policy.margin.whole_tokens(window)
    limit = window - reserve
    background = limit - margin
    keep = max(0, min(policy.keep_recent, background // 2))
    return Threshold(window, reserve, margin, limit, background, keep)


def over(policy: Policy, tokens: int) -> str:
    """The verdict of one request of ``tokens`` input tokens: none, background or blocking."""
    t = threshold_for(policy)
    return compiled.over(policy.enabled, t.window, t.reserve, t.margin, max(0, tokens))


class TokenCountError(Exception):
    """The provider's count_tokens failed or answered something that is not a token count."""


def input_tokens(estimate: int, provider_count: Callable[[], int] | None, use_provider: bool) -> tuple[int, str]:
    """The input tokens of a request and where they came from: the provider's count_tokens
    first when compaction.providerTokenCount is on (one request more per generation); no
    counter or a failure: a warning and the local estimate."""
    if not use_provider:
        return estimate, "local"
    if provider_count is None:
        log.warning("compaction.providerTokenCount is on but the provider has no count_tokens: using the local estimate")
        return estimate, "local"
    try:
        counted = provider_count()
        if isinstance(counted, bool) or not isinstance(counted, int) or not 0 <= counted <= compiled.U64:
            raise TokenCountError(f"count_tokens answered {counted!r}, not a token count")
    except Exception as error:  # any failure of the provider falls back (S6.6)
        log.warning("count_tokens failed (%s): using the local estimate", error)
        return estimate, "local"
    return counted, "provider"


@dataclass
class Run:
    """One run's requests: each is checked, and the first request over each threshold is kept."""

    policy: Policy
    requests: int = 0
    first_background: int | None = None
    first_blocking: int | None = None
    verdicts: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.threshold = threshold_for(self.policy)

    def request(self, tokens: int) -> str:
        t = self.threshold
        verdict = compiled.over(self.policy.enabled, t.window, t.reserve, t.margin, max(0, tokens))
        if verdict != NONE and self.first_background is None:
            self.first_background = self.requests
        if verdict == BLOCKING and self.first_blocking is None:
            self.first_blocking = self.requests
        self.verdicts.append(verdict)
        self.requests += 1
        return verdict
