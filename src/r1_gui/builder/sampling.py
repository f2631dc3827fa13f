"""Deterministic sampling and the episode-level train/test split.

Both take a ``random.Random`` seeded from the build seed, iterate over sorted keys only, and return indices in
input order, so the same inputs and seed always give the same rows in the same order.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict


def balanced_quotas(available: dict[str, int], total: int) -> dict[str, int]:
    """An equal share of ``total`` per action type; types with fewer records than their share give the rest to
    the others (water-filling, scarcest type first). Example: {"click": 90, "back": 5, "type": 20}, 30 ->
    {"back": 5, "type": 12, "click": 13}."""
    quotas: dict[str, int] = {}
    left = total
    order = sorted(available, key=lambda name: (available[name], name))
    for done, name in enumerate(order):
        quotas[name] = min(available[name], left // (len(order) - done))
        left -= quotas[name]
    return quotas


def select(action_types: list[str], num_samples: int | None, rng: random.Random, balance: bool) -> list[int]:
    """Indices (sorted) of the examples to keep: all of them when num_samples is None or too large; else a
    uniform sample, or with ``balance`` an equal quota per action type (see ``balanced_quotas``)."""
    count = len(action_types)
    if num_samples is None or num_samples >= count:
        return list(range(count))
    if not balance:
        return sorted(rng.sample(range(count), num_samples))
    by_type: dict[str, list[int]] = defaultdict(list)
    for index, name in enumerate(action_types):
        by_type[name].append(index)
    quotas = balanced_quotas({name: len(indices) for name, indices in by_type.items()}, num_samples)
    chosen: list[int] = []
    for name in sorted(by_type):
        chosen.extend(rng.sample(by_type[name], quotas[name]))
    return sorted(chosen)


def target_test_count(count: int, test_size: float) -> int:
    """How many of ``count`` examples the test split aims for (rounded half up)."""
    return int(count * test_size + 0.5)


def split_by_episode(episode_ids: list[str], test_size: float, rng: random.Random) -> set[str]:
    """The episodes of the test split: whole episodes in a seeded random order, each taken while it does not
    overshoot the target count, so the split is close to test_size and no episode is in both splits.
    If every episode is larger than the target, the smallest one is the test split (when one is left for train)."""
    sizes = Counter(episode_ids)
    target = target_test_count(len(episode_ids), test_size)
    order = sorted(sizes)
    rng.shuffle(order)
    test, taken = set(), 0
    for episode in order:
        if taken == target:
            break
        if taken + sizes[episode] <= target:
            test.add(episode)
            taken += sizes[episode]
    if not test and target > 0 and len(order) > 1:
        test.add(min(order, key=lambda episode: (sizes[episode], episode)))
    return test
