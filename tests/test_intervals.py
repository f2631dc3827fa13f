"""The evaluation's 95% intervals (r1_gui.evaluation.intervals): Wilson by hand, bootstrap ratios, paired differences.

The Wilson values are the formula worked by hand with z = 1.959964: centre (p + z^2/2n) / (1 + z^2/n), half-width
z sqrt(p(1-p)/n + z^2/4n^2) / (1 + z^2/n). The bootstrap values are the binomial quantiles they estimate, worked
with math.comb (the docstring of each case says which).
"""

import pytest

from r1_gui.evaluation.intervals import RESAMPLES, bootstrap_ratio, paired_difference, wilson


@pytest.mark.parametrize(
    "hits, count, expected",
    [
        (0, 10, [0.0, 0.277533]),  # none right: the interval starts at 0 and is not empty
        (10, 10, [0.722467, 1.0]),  # all right: the mirror image
        (5, 10, [0.236593, 0.763407]),  # half right: symmetric about 0.5
        (1, 3, [0.061492, 0.792340]),  # few units: wide, and inside [0, 1] where the normal interval is not
        (50, 100, [0.403832, 0.596168]),  # more units: narrower
        (0, 0, None),  # no units: no interval
    ],
)
def test_wilson_by_hand(hits, count, expected):
    result = wilson(hits, count)
    assert result == (None if expected is None else pytest.approx(expected, abs=1e-6))


def test_wilson_refuses_more_hits_than_units():
    with pytest.raises(ValueError, match="hits must be between 0 and count"):
        wilson(4, 3)


@pytest.mark.parametrize(
    "numerators, denominators, expected",
    [
        ([2, 2, 2, 2], [1, 1, 1, 1], [2.0, 2.0]),  # every unit the same value: no spread
        ([0, 0, 0], [3, 1, 2], [0.0, 0.0]),  # nothing in any unit: 0
        # a 0/1 value over 100 units, half 1: the 2.5th and 97.5th percentiles of Binomial(100, 0.5) / 100 are 40
        # and 60 (P(X <= 39) = 0.018, P(X <= 40) = 0.028; P(X <= 59) = 0.972, P(X <= 60) = 0.982)
        ([1] * 50 + [0] * 50, [1] * 100, [0.40, 0.60]),
        ([], [], None),  # no units
        ([0, 1], [0, 0], None),  # no denominator anywhere: the ratio does not exist
    ],
)
def test_bootstrap_ratio(numerators, denominators, expected):
    assert bootstrap_ratio(numerators, denominators) == expected


def test_bootstrap_ratio_is_the_same_every_time():
    values = [0.5, 1.5, 3.0, 0.0, 2.0]
    assert bootstrap_ratio(values, [1] * 5) == bootstrap_ratio(values, [1] * 5)


def _runs(both_right: int, only_b: int, only_a: int, total: int = 200):
    """(A's and B's per-step scores as (numerators, denominators)) with the given overlaps."""
    neither = total - both_right - only_b - only_a
    a = [1] * both_right + [0] * only_b + [1] * only_a + [0] * neither
    b = [1] * both_right + [1] * only_b + [0] * only_a + [0] * neither
    return (a, [1] * total), (b, [1] * total)


def test_a_one_row_change_of_200_is_not_beyond_noise():
    # The paired difference of a resample is (draws of the one differing step) / 200, Binomial(200, 1/200) / 200:
    # P(X = 0) = 0.367, so the 2.5th percentile is 0; P(X <= 2) = 0.920, P(X <= 3) = 0.981, so the 97.5th is 3/200.
    difference = paired_difference(*_runs(both_right=120, only_b=1, only_a=0))
    assert (difference.a, difference.b) == (pytest.approx(0.600), pytest.approx(0.605))
    assert difference.difference == pytest.approx(0.005)
    assert difference.ci95 == pytest.approx([0.0, 0.015])
    assert difference.significant is False and difference.units == 200


def test_fixing_40_of_200_is_beyond_noise():
    # B is right wherever A is and on 40 more: the resampled difference is Binomial(200, 0.2) / 200, whose 2.5th
    # percentile is 29/200 (P(X <= 28) = 0.019, P(X <= 29) = 0.028) and 97.5th 51/200 (P(X <= 51) = 0.976, so a
    # sample of 10,000 may land on 52).
    difference = paired_difference(*_runs(both_right=60, only_b=40, only_a=0))
    assert difference.difference == pytest.approx(0.2)
    assert difference.ci95[0] == pytest.approx(0.145)
    assert difference.ci95[1] == pytest.approx(0.2575, abs=0.003)
    assert difference.significant is True


def test_pairing_cancels_what_both_runs_share():
    # 40 fixed and 40 broken: the same rate, so the difference is 0 and its interval straddles it (X - Y with X, Y
    # the draws of each group: sd sqrt(80) / 200 = 0.045)
    difference = paired_difference(*_runs(both_right=60, only_b=40, only_a=40))
    assert difference.difference == 0.0
    assert difference.ci95[0] == pytest.approx(-0.0875, abs=0.006) and difference.ci95[1] == pytest.approx(
        0.0875, abs=0.006
    )
    assert difference.significant is False


def test_a_worse_run_is_beyond_noise_below_zero():
    difference = paired_difference(*_runs(both_right=60, only_b=0, only_a=40))
    assert difference.difference == pytest.approx(-0.2) and difference.ci95[1] < 0 and difference.significant


def test_ratios_over_episodes_pair_their_turns():
    # two episodes; A parses 1 of 2 turns then 0 of 1; B parses every turn: 1/3 -> 3/3
    difference = paired_difference(([1, 0], [2, 1]), ([2, 1], [2, 1]), resamples=RESAMPLES)
    assert (difference.a, difference.b, difference.difference) == (pytest.approx(1 / 3), 1.0, pytest.approx(2 / 3))
    # resamples: both episodes (+2/3), the first twice (+1/2), the second twice (+1)
    assert difference.ci95 == pytest.approx([0.5, 1.0])


def test_runs_of_other_lengths_are_refused():
    with pytest.raises(ValueError, match="same number of units"):
        paired_difference(([1], [1]), ([1, 0], [1, 1]))
