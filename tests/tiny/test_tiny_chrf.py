"""chrF to the number (S9 Eval: "chrF = mean (0 to 100) vs one reference"; eukhe.tiny.tasks.chrf:
the character n-gram F-score, n = 1..6, spaces removed, beta 2): values worked out by hand from
that definition (each order's precision and recall over the n-grams both strings have, their
means, then F-beta), on strings short enough to count."""

from __future__ import annotations

import pytest

from eukhe.tiny import tasks


def test_a_last_letter_wrong_in_seven_scores_the_mean_of_six_orders() -> None:
    """abcdefg against abcdefh: order k has 8 - k n-grams a side, 7 - k of them shared, so P = R
    = (7 - k) / (8 - k) for k = 1..6 (a 7-gram is no order of chrF): F is their mean."""
    want = 100 * (6 / 7 + 5 / 6 + 4 / 5 + 3 / 4 + 2 / 3 + 1 / 2) / 6
    assert tasks.chrf("abcdefg", "abcdefh") == pytest.approx(want)
    assert tasks.chrf("abc defg", "abcd efh") == pytest.approx(want)  # spaces removed


def test_repeated_n_grams_count_as_often_as_both_sides_have_them() -> None:
    """aaa against aa: order 1, 2 of 3 a's shared (P 2/3, R 1); order 2, 1 of 2 aa's (P 1/2,
    R 1); order 3: the reference has none. P = 7/12, R = 1, F2 = 5PR / (4P + R) = 7/8."""
    assert tasks.chrf("aaa", "aa") == pytest.approx(87.5)
    assert tasks.chrf("aa", "aaa") == pytest.approx(100 * 5 * (7 / 12) / (4 + 7 / 12))


def test_beta_weighs_recall() -> None:
    """ab against abc: P = 1, R = (2/3 + 1/2) / 2 = 7/12; F_beta = (1 + b^2) P R / (b^2 P + R)."""
    assert tasks.chrf("ab", "abc") == pytest.approx(100 * 7 / 11)
    assert tasks.chrf("ab", "abc", beta=1.0) == pytest.approx(100 * 14 / 19)
    assert tasks.chrf("ab", "abc", beta=3.0) == pytest.approx(100 * 10 * (7 / 12) / (9 + 7 / 12))
    assert tasks.chrf("abc", "abc", n=1) == pytest.approx(100.0)
    assert tasks.chrf("abd", "abc", n=1) == pytest.approx(100 * 2 / 3)


def test_nothing_shared_or_nothing_to_share_is_zero() -> None:
    assert tasks.chrf("xyz", "abc") == 0.0
    assert tasks.chrf("", "abc") == 0.0 and tasks.chrf("abc", "") == 0.0 and tasks.chrf(" ", " ") == 0.0
    assert tasks.chrf("a", "abc") == pytest.approx(100 * 5 / 13)  # order 1 only: P 1, R 1/3
