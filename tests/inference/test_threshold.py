"""generation::tests::threshold (inference.md S6 Tests: the policy in whole tokens, the keep window)
and rules::infer_threshold::tests (the compiled core is reached), on production
(eukhe.inference.threshold)."""

from __future__ import annotations

import logging

import pytest

from bend import infer as model
from eukhe.inference import threshold as t
from spec.oracles import infer as oracle


def test_the_policy_in_whole_tokens() -> None:
    policy = t.Policy(True, 200_000, 16_384.0)
    got = t.threshold_for(policy)
    assert (got.window, got.reserve, got.margin) == (200_000, 16_384, 20_000)  # the session's 10% of the window
    assert got.limit == 183_616 and got.background == 163_616
    assert t.SESSION_MARGIN.percent == oracle.SESSION_MARGIN_PERCENT
    library = t.threshold_for(t.Policy(True, 200_000, 16_384.0, t.LIBRARY_DEFAULT))
    assert library.margin == oracle.LIBRARY_MARGIN_TOKENS == 32_768 and library.background == 183_616 - 32_768
    # a fractional reserve and margin round up to whole tokens; NaN reads 0; past 10^14 saturates
    odd = t.threshold_for(t.Policy(True, 1001, 0.5, t.BackgroundMargin.window_percent(10.0)))
    assert (odd.reserve, odd.margin) == (1, 101)
    assert t.whole(float("nan")) == 0 and t.whole(-3.0) == 0 and t.whole(1e300) == 10**14 and t.whole(2.0) == 2
    assert t.threshold_for(t.Policy(True, 10**20, 0.0)).window == 10**14
    assert t.BackgroundMargin().whole_tokens(100) == 0


def test_requests_over_each_threshold() -> None:
    policy = t.Policy(True, 1000, 100.0, t.BackgroundMargin.fixed(50))  # limit 900, threshold 850
    assert [t.over(policy, n) for n in (0, 850, 851, 900, 901)] == ["none", "none", "background", "background", "blocking"]
    assert t.over(t.Policy(False, 1000, 100.0), 10**6) == "none"
    assert t.over(t.Policy(True, 0, 0.0), 10**6) == "none"
    run = t.Run(policy)
    assert [run.request(n) for n in (100, 860, 880, 905, 950)] == ["none", "background", "background", "blocking", "blocking"]
    assert (run.first_background, run.first_blocking, run.requests) == (1, 3, 5)


def test_the_keep_window() -> None:
    assert t.threshold_for(t.Policy(True, 200_000, 16_384.0)).keep == 40_000  # keepRecentTokens default
    small = t.threshold_for(t.Policy(True, 32_000, 4_000.0))  # threshold 24,800: keep at most half
    assert small.background == 24_800 and small.keep == 12_400
    assert t.threshold_for(t.Policy(True, 100, 200.0)).keep == 0
    assert t.KEEP_RECENT_DEFAULT == oracle.KEEP_RECENT_DEFAULT


def test_the_provider_count_comes_first_and_falls_back_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    assert t.input_tokens(10, lambda: 12, False) == (10, "local")
    assert t.input_tokens(10, lambda: 12, True) == (12, "provider")

    def broken() -> int:
        raise ConnectionError("count_tokens: 503")

    with caplog.at_level(logging.WARNING, logger="eukhe.inference.threshold"):
        assert t.input_tokens(10, broken, True) == (10, "local")
        assert t.input_tokens(10, None, True) == (10, "local")
        assert t.input_tokens(10, lambda: -1, True) == (10, "local")
        assert t.input_tokens(10, lambda: True, True) == (10, "local")
        assert t.input_tokens(10, lambda: 2**64, True) == (10, "local")
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 5 and "503" in warnings[0] and "no count_tokens" in warnings[1]


def test_the_compiled_core_is_reached() -> None:
    assert vars(t)["compiled"] is model
    assert model.over(True, 10, 2, 3, 6) == "background" and model.over(True, 10, 2, 3, 9) == "blocking"
    assert model.first_at((1, 5, 9), 5) == 1 and model.first_at((1,), 5) is None
