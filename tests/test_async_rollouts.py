"""Asynchronous rollouts (issue 68): the buffer of finished groups and its staleness bound, the off-policy
correction on hand-computed tables."""

import math
import threading

import pytest
import torch

from r1_gui.rollout.buffer import BufferClosed, Group, GroupBuffer
from r1_gui.rollout.correction import behaviour_weights


def group(started: int, versions: list[list[int]]) -> Group:
    return Group(task="t", seed=started, episodes=[None] * len(versions), versions=versions, started=started)


# -- the buffer ------------------------------------------------------------------------------------------------

LAG_CASES = [
    # (per-episode turn versions, step, lag): a group is as old as its oldest turn
    ([[3, 3], [3]], 3, 0),
    ([[2, 3], [3, 3, 3]], 3, 1),  # a worker loaded version 3 after the first turn of the first episode
    ([[0], [5]], 6, 6),
    ([[], []], 4, 4),  # no turn at all (both episodes' environments failed at once): version 0
]


@pytest.mark.parametrize(("versions", "step", "lag"), LAG_CASES)
def test_a_groups_lag_is_that_of_its_oldest_turn(versions, step, lag):
    assert group(0, versions).lag(step) == lag


def test_take_gives_the_oldest_fresh_groups_and_drops_and_counts_the_stale_ones():
    buffer = GroupBuffer(capacity=8)
    for started, version in [(0, 1), (1, 3), (2, 2), (3, 3), (4, 1)]:
        assert buffer.add(group(started, [[version, version]]))
    # at step 3 with bound 1: versions 1 (started 0 and 4) lag 2 -> dropped; the oldest fresh: version 2, then 3s
    taken = buffer.take(2, step=3, max_staleness=1)
    assert [g.started for g in taken] == [2, 1] and buffer.dropped_stale == 2 and buffer.groups == 1
    # at step 4 with bound 0 the last (version 3) lags 1: dropped too; nothing fresh is there, so take waits
    with pytest.raises(TimeoutError, match="0 of the 1 groups"):
        buffer.take(1, step=4, max_staleness=0, timeout=0.1)
    assert buffer.dropped_stale == 3 and buffer.groups == 0


def test_staleness_0_takes_only_groups_of_the_current_weights():
    buffer = GroupBuffer(capacity=4)
    buffer.add(group(0, [[4], [4]]))
    buffer.add(group(1, [[4], [5]]))  # one turn of version 4: lag 1 at step 5
    buffer.add(group(2, [[5], [5]]))
    assert [g.started for g in buffer.take(1, step=5, max_staleness=0)] == [2]
    assert buffer.dropped_stale == 2


def test_take_waits_for_a_worker_and_counts_the_wait():
    buffer = GroupBuffer(capacity=2)
    threading.Timer(0.3, lambda: buffer.add(group(0, [[0]]))).start()
    assert [g.started for g in buffer.take(1, step=0, max_staleness=0, timeout=10)] == [0]
    assert buffer.waited_s >= 0.25


def test_a_full_buffer_holds_the_worker_until_the_trainer_takes():
    buffer = GroupBuffer(capacity=1)
    assert buffer.add(group(0, [[0]]))
    assert not buffer.add(group(1, [[0]]), timeout=0.1)  # full: the worker waits
    threading.Timer(0.2, lambda: buffer.take(1, step=0, max_staleness=0)).start()
    assert buffer.add(group(1, [[0]]), timeout=10)


def test_a_closed_buffer_ends_the_wait_and_a_failing_check_stops_it():
    buffer = GroupBuffer(capacity=2)
    threading.Timer(0.2, lambda: buffer.close("every worker died")).start()
    with pytest.raises(BufferClosed, match="every worker died"):
        buffer.take(1, step=0, max_staleness=0, timeout=10)

    def check():
        raise RuntimeError("rollout worker 1 died 3 times")

    with pytest.raises(RuntimeError, match="died 3 times"):
        GroupBuffer(capacity=2).take(1, step=0, max_staleness=0, timeout=10, check=check)


def test_a_buffer_of_no_groups_is_refused():
    with pytest.raises(ValueError, match="at least 1 group"):
        GroupBuffer(capacity=0)


# -- the correction ----------------------------------------------------------------------------------------------

WEIGHT_CASES = [
    # (prox prob, behaviour prob, lag, answer token, cap, weight): w = min(prox / behaviour, cap) on lagging answers
    (0.5, 0.25, 1, 1, 3.0, 2.0),
    (0.25, 0.5, 1, 1, 3.0, 0.5),  # a token the old policy liked more: weighed down, never cut below
    (0.9, 0.1, 2, 1, 3.0, 3.0),  # 9.0 truncated at the cap
    (0.9, 0.1, 2, 1, 10.0, 9.0),
    (0.9, 0.1, 0, 1, 3.0, 1.0),  # lag 0: sampled from the proximal policy itself, exactly 1
    (0.9, 0.1, 3, 0, 3.0, 1.0),  # a tool-response token (masked): 1
    (0.3, 0.3, 5, 1, 3.0, 1.0),  # the same probability however old
]


@pytest.mark.parametrize(("prox", "behaviour", "lag", "answer", "cap", "weight"), WEIGHT_CASES)
def test_behaviour_weights(prox, behaviour, lag, answer, cap, weight):
    weights, _ = behaviour_weights(
        torch.tensor([[math.log(prox)]]),
        torch.tensor([[math.log(behaviour)]]),
        torch.tensor([[lag]]),
        torch.tensor([[answer]]),
        cap,
    )
    assert weights.item() == pytest.approx(weight, rel=1e-6)


def test_the_logged_ratio_and_clipped_share_are_over_the_lagging_answer_tokens():
    # row 0: two lagging answers (ratios 2 and 9, one clipped) and a tool token; row 1: a lag-0 answer
    prox = torch.log(torch.tensor([[0.5, 0.9, 0.2], [0.4, 0.4, 0.4]]))
    behaviour = torch.log(torch.tensor([[0.25, 0.1, 0.9], [0.1, 0.4, 0.4]]))
    lags = torch.tensor([[1, 1, 1], [0, 0, 0]])
    mask = torch.tensor([[1, 1, 0], [1, 0, 0]])
    weights, stats = behaviour_weights(prox, behaviour, lags, mask, cap=3.0)
    assert weights.flatten().tolist() == pytest.approx([2.0, 3.0, 1.0, 1.0, 1.0, 1.0], rel=1e-6)
    assert stats.ratio_mean == pytest.approx((2.0 + 9.0) / 2, rel=1e-6)
    assert stats.clipped_frac == 0.5 and stats.lagging_frac == pytest.approx(2 / 3)
    # nothing lags: the ratio is 1 by definition and nothing is clipped
    _, fresh = behaviour_weights(prox, behaviour, torch.zeros_like(lags), mask)
    assert (fresh.ratio_mean, fresh.clipped_frac, fresh.lagging_frac) == (1.0, 0.0, 0.0)


@pytest.mark.parametrize(
    "cap",
    [0.5, float("inf"), float("nan")],
)
def test_a_cap_below_1_or_not_finite_is_refused(cap):
    one = torch.zeros(1, 1)
    with pytest.raises(ValueError, match="--importance_ratio_cap must be a number >= 1"):
        behaviour_weights(one, one, one.long(), one.long(), cap)


def test_tensors_of_different_shapes_are_refused():
    with pytest.raises(ValueError, match="shapes differ"):
        behaviour_weights(torch.zeros(1, 2), torch.zeros(1, 3), torch.zeros(1, 2), torch.zeros(1, 2))


def test_the_weight_on_the_advantage_equals_the_weight_on_the_ppo_term():
    """-min(r w A, clip(r) w A) == w * -min(r A, clip(r) A) for w >= 0: the trainer scales the advantages."""
    ratios = torch.tensor([0.5, 0.9, 1.0, 1.1, 1.6])
    for advantage in (-1.3, 0.0, 0.7):
        for weight in (0.0, 0.4, 1.0, 3.0):
            clipped = ratios.clamp(1 - 0.2, 1 + 0.28)
            on_advantage = -torch.min(ratios * weight * advantage, clipped * weight * advantage)
            on_term = weight * -torch.min(ratios * advantage, clipped * advantage)
            assert torch.allclose(on_advantage, on_term)
