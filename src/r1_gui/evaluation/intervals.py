"""95% intervals for the evaluation's numbers, and the paired difference of two runs. Pure functions, no I/O.

- ``wilson(hits, count)``: the Wilson score interval of a proportion (hits of count independent units: steps of a
  step evaluation, episodes of an episode evaluation). Unlike the normal ("Wald") interval it stays inside [0, 1]
  and is not empty at 0/n or n/n: 0/10 -> [0, 0.2775], 5/10 -> [0.2366, 0.7634], 1/3 -> [0.0615, 0.7923].
- ``bootstrap_ratio(numerators, denominators)``: a percentile bootstrap interval of sum(numerators) /
  sum(denominators) over units resampled with replacement: numbers that are not a proportion of independent
  units, such as the mean steps to success, or the share of turns that parsed when the units are episodes (the
  turns of one episode are not independent).
- ``paired_difference(a, b)``: run B minus run A on the same units (steps or episodes), with a paired percentile
  bootstrap interval; beyond noise (``significant``) when the interval excludes 0.

Every bootstrap draws ``RESAMPLES`` (10,000) resamples from ``numpy.random.default_rng(SEED)`` (seed 0), so the same
inputs always give the same interval.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

CI_SUFFIX = "_ci95"  # metrics.json: KEY_ci95 is the 95% interval of KEY, in its units
Z95 = NormalDist().inv_cdf(0.975)  # 1.959963984540054
RESAMPLES = 10_000
SEED = 0
_CHUNK = 500  # resamples drawn at once (as distinct-unit counts)
_FEW_DISTINCT = 64  # at most this many distinct units: draw their counts; more: draw indices
_INDICES_AT_ONCE = 2_000_000  # indices drawn at once (16 MB)


def wilson(hits: int, count: int, z: float = Z95) -> list[float] | None:
    """[low, high] of the Wilson score interval of hits/count; None when count is 0 (no units, no interval)."""
    if count <= 0:
        return None
    if not 0 <= hits <= count:
        raise ValueError(f"hits must be between 0 and count ({count}), got {hits}")
    share, z2 = hits / count, z * z
    centre = (share + z2 / (2 * count)) / (1 + z2 / count)
    half = z * math.sqrt(share * (1 - share) / count + z2 / (4 * count * count)) / (1 + z2 / count)
    low = 0.0 if hits == 0 else max(0.0, centre - half)
    high = 1.0 if hits == count else min(1.0, centre + half)
    return [low, high]


def interval_text(interval: Sequence[float] | None) -> str:
    """A 95% interval as the reports print it, "[0.2366, 0.7634]"; "-" when there is none (no units)."""
    return "-" if interval is None else f"[{interval[0]:.4f}, {interval[1]:.4f}]"


def _resampled_ratios(columns: Sequence[tuple[Sequence[float], Sequence[float]]], resamples: int, seed: int):
    """For each (numerators, denominators) pair of ``columns`` (all over the same units), the ratio of sums in each
    of ``resamples`` bootstrap resamples of the units, the same resamples for every column: an array
    (columns, resamples); a resample whose denominator sums to 0 gives NaN.

    A resample draws every unit with replacement; what it sums depends only on how often it drew each *distinct*
    unit (the same numbers in every column), and those counts are multinomial. With few distinct units (4 for two
    runs' 0/1 scores over steps, however many steps) it draws those counts, thousands of times faster than one index
    per unit; with many (a mean of varied values) it draws the indices. The same distribution either way."""
    import numpy as np

    table = np.column_stack([np.asarray(part, dtype=float) for column in columns for part in column])
    distinct, counts = np.unique(table, axis=0, return_counts=True)
    rng = np.random.default_rng(seed)
    ratios = np.empty((len(columns), resamples))
    chunk = _CHUNK if len(distinct) <= _FEW_DISTINCT else max(1, _INDICES_AT_ONCE // len(table))
    for first in range(0, resamples, chunk):
        size = min(chunk, resamples - first)
        if len(distinct) <= _FEW_DISTINCT:
            sums = rng.multinomial(len(table), counts / len(table), size=size) @ distinct  # (size, 2 x columns)
        else:
            picks = rng.integers(0, len(table), size=(size, len(table)))
            sums = np.stack([table[:, j][picks].sum(axis=1) for j in range(table.shape[1])], axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            ratios[:, first : first + size] = np.where(sums[:, 1::2] > 0, sums[:, 0::2] / sums[:, 1::2], np.nan).T
    return ratios


def _percentiles(values) -> list[float] | None:
    import numpy as np

    values = values[~np.isnan(values)]
    if not len(values):
        return None
    low, high = np.quantile(values, [0.025, 0.975])
    return [float(low), float(high)]


def bootstrap_ratio(
    numerators: Sequence[float], denominators: Sequence[float], resamples: int = RESAMPLES, seed: int = SEED
) -> list[float] | None:
    """[low, high]: the 2.5th and 97.5th percentiles of sum(numerators) / sum(denominators) over bootstrap
    resamples of the units (resamples without a unit of positive denominator are left out); None without units or
    without a positive denominator. A mean of per-unit values is the ratio with every denominator 1."""
    if len(numerators) != len(denominators):
        raise ValueError(f"{len(numerators)} numerators but {len(denominators)} denominators")
    if not numerators or sum(denominators) <= 0:
        return None
    return _percentiles(_resampled_ratios([(numerators, denominators)], resamples, seed)[0])


@dataclass(frozen=True)
class Difference:
    """Run B minus run A over the same units: the two values, their difference and its 95% interval."""

    a: float | None
    b: float | None
    difference: float | None
    ci95: list[float] | None
    units: int

    @property
    def significant(self) -> bool:
        """Beyond noise: the interval excludes 0 (an interval touching 0 does not)."""
        return self.ci95 is not None and (self.ci95[0] > 0 or self.ci95[1] < 0)

    def to_dict(self) -> dict:
        return {"a": self.a, "b": self.b, "difference": self.difference, "ci95": self.ci95,
                "significant": self.significant, "units": self.units}  # fmt: skip


def _ratio(numerators: Sequence[float], denominators: Sequence[float]) -> float | None:
    total = sum(denominators)
    return sum(numerators) / total if total > 0 else None


def paired_difference(
    a: tuple[Sequence[float], Sequence[float]],
    b: tuple[Sequence[float], Sequence[float]],
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Difference:
    """B - A of a ratio of sums (``a`` and ``b`` are (numerators, denominators), unit i of A paired with unit i of
    B; a proportion over steps has numerators 0/1 and denominators 1), with the paired bootstrap interval: each
    resample draws the same units for both runs, so what the two runs share (the hard steps) cancels out."""
    units = len(a[0])
    if not (len(a[1]) == len(b[0]) == len(b[1]) == units):
        raise ValueError("a and b must hold the same number of units")
    value_a, value_b = _ratio(*a), _ratio(*b)
    if value_a is None or value_b is None:
        return Difference(value_a, value_b, None, None, units)
    ratios = _resampled_ratios([a, b], resamples, seed)
    return Difference(value_a, value_b, value_b - value_a, _percentiles(ratios[1] - ratios[0]), units)
