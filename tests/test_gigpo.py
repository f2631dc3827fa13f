"""GiGPO (`--advantage_estimator gigpo`): step-level credit on hand-computed tables."""

import math

import pytest

from r1_gui.multi_turn.advantages import (
    check_step_credit,
    discounted_returns,
    step_credit,
    token_advantages,
    turn_advantages,
    turn_rewards,
)

SQRT_1_8 = math.sqrt(0.125)  # the (Bessel) std of two returns 0.5 apart
EPS = 1e-4  # trl's, in the denominator of every normalisation

# -- discounted returns -------------------------------------------------------------------------------------------

RETURN_CASES = [
    # (per-turn rewards, gamma, returns)
    # the success at the last turn reaches back 0.9 per turn, the middle turn's own 0.5 adds in: 1, 0.5 + 0.9, 0.9 * 1.4
    ([0.0, 0.5, 1.0], 0.9, [1.26, 1.4, 1.0]),
    # gamma 1: the plain sum from each turn on
    ([0.0, 0.5, 1.0], 1.0, [1.5, 1.5, 1.0]),
    # one turn: its own reward
    ([0.25], 0.5, [0.25]),
    # no turns (an environment that failed at reset never reaches the trainer, but the function takes it)
    ([], 0.95, []),
]


@pytest.mark.parametrize(("rewards", "gamma", "expected"), RETURN_CASES)
def test_discounted_returns(rewards, gamma, expected):
    assert discounted_returns(rewards, gamma) == pytest.approx(expected)


# -- anchor groups and step advantages ----------------------------------------------------------------------------

STEP_CASES = [
    # (GRPO group of each episode, state keys per turn, per-turn rewards, gamma, scale_rewards, step advantages)
    # two episodes of one reset share their first screen s0: returns 0.5 (0 + 0.5 x 1) and 0 form a group; their
    # second screens differ, so those turns are alone and get 0
    ([0, 0], [["s0", "a"], ["s0", "b"]], [[0.0, 1.0], [0.0, 0.0]], 0.5, "none", [[0.25, 0.0], [-0.25, 0.0]]),
    # the same with the group's std: 0.25 / (std(0.5, 0) + eps)
    ([0, 0], [["s0", "a"], ["s0", "b"]], [[0.0, 1.0], [0.0, 0.0]], 0.5, "group",
     [[0.25 / (SQRT_1_8 + EPS), 0.0], [-0.25 / (SQRT_1_8 + EPS), 0.0]]),
    # the same screen in two resets' groups is two anchor groups of one: nothing to compare, 0 each
    ([0, 1], [["s0"], ["s0"]], [[1.0], [0.0]], 0.9, "group", [[0.0], [0.0]]),
    # equal returns in a group: 0 (not 0/0)
    ([0, 0], [["s0"], ["s0"]], [[1.0], [1.0]], 0.9, "group", [[0.0], [0.0]]),
    # three episodes meet again at s1 after different first moves: at s0 returns 0.5, 0.5, 0 (mean 1/3); at s1
    # returns 1, 1, 0 (mean 2/3); the third episode's last screen c is its own
    ([0, 0, 0], [["s0", "s1"], ["s0", "s1"], ["s0", "s1", "c"]], [[0.0, 1.0], [0.0, 1.0], [0.0, 0.0, 0.0]], 0.5,
     "none", [[1 / 6, 1 / 3], [1 / 6, 1 / 3], [-1 / 3, -2 / 3, 0.0]]),
    # a screen an episode comes back to is one anchor: turns 0 and 2 of one episode (returns 0.25, 1) against
    # turn 0 of the other (0): mean 5/12
    ([0, 0], [["s0", "x", "s0"], ["s0"]], [[0.0, 0.0, 1.0], [0.0]], 0.5, "none",
     [[0.25 - 5 / 12, 0.0, 1 - 5 / 12], [-5 / 12]]),
    # scale_rewards batch: the anchor group's mean, the std of every turn's return in the batch (0.5, 1, 0, 0)
    ([0, 0], [["s0", "a"], ["s0", "b"]], [[0.0, 1.0], [0.0, 0.0]], 0.5, "batch",
     [[0.25 / (math.sqrt(0.6875 / 3) + EPS), 0.0], [-0.25 / (math.sqrt(0.6875 / 3) + EPS), 0.0]]),
]  # fmt: skip


@pytest.mark.parametrize(("groups", "keys", "rewards", "gamma", "scale", "expected"), STEP_CASES)
def test_step_advantages(groups, keys, rewards, gamma, scale, expected):
    credit = step_credit(groups, keys, rewards, gamma, scale)
    assert len(credit.advantages) == len(expected)
    for got, want in zip(credit.advantages, expected, strict=True):
        assert got == pytest.approx(want, abs=1e-9)


def test_the_logged_statistics_of_the_anchor_groups():
    # the three-episode case above: anchor groups s0 (3 turns), s1 (3), c (1)
    credit = step_credit(
        [0, 0, 0], [["s0", "s1"], ["s0", "s1"], ["s0", "s1", "c"]], [[0, 1], [0, 1], [0, 0, 0]], 0.5, "none"
    )
    assert credit.anchor_groups == 3
    assert credit.mean_group_size == pytest.approx(7 / 3)
    assert credit.singleton_frac == pytest.approx(1 / 7)  # of the 7 turns, c is alone
    steps = [1 / 6, 1 / 3, 1 / 6, 1 / 3, -1 / 3, -2 / 3, 0.0]  # the spread: their (population) std
    mean = sum(steps) / 7
    assert credit.spread == pytest.approx(math.sqrt(sum((s - mean) ** 2 for s in steps) / 7))


# -- the two parts together, and on the tokens ----------------------------------------------------------------------

COMBINED_CASES = [
    # (episode advantage, step advantages, omega, each turn's advantage)
    (0.7, [0.5, -0.25, 0.0], 1.0, [1.2, 0.45, 0.7]),
    (0.7, [0.5, -0.25, 0.0], 0.5, [0.95, 0.575, 0.7]),
    # omega 0: GRPO's advantage on every turn
    (-1.1, [0.5, 2.0], 0.0, [-1.1, -1.1]),
]


@pytest.mark.parametrize(("episode", "steps", "omega", "expected"), COMBINED_CASES)
def test_the_episode_and_step_advantages_add_with_omega(episode, steps, omega, expected):
    assert turn_advantages(episode, steps, omega) == pytest.approx(expected)


TOKEN_CASES = [
    # (turn offsets in the row, answer lengths, turn advantages, row width, per-token advantages)
    # answers at 0-2 and 5-6; the tool response between them (3-4) and the padding after get 0
    ([0, 5], [3, 2], [0.4, -0.2], 9, [0.4, 0.4, 0.4, 0.0, 0.0, -0.2, -0.2, 0.0, 0.0]),
    # a row cut at the width: the second answer's last token falls off, as the loss pass cuts it
    ([0, 5], [3, 2], [0.4, -0.2], 6, [0.4, 0.4, 0.4, 0.0, 0.0, -0.2]),
]


@pytest.mark.parametrize(("offsets", "lengths", "advantages", "width", "expected"), TOKEN_CASES)
def test_every_answer_token_gets_its_turns_advantage(offsets, lengths, advantages, width, expected):
    assert token_advantages(offsets, lengths, advantages, width) == pytest.approx(expected)


TURN_REWARD_CASES = [
    # (the environment's step rewards, (weight, per-turn values) of each reward that declares them, per-turn rewards)
    # success at the last step (1.0) plus task_success's own 1.0 there, weighted 2; click distance 0.5 then n/a
    ([0.0, 1.0], [(1.0, [0.5, None]), (2.0, [0.0, 1.0])], [0.5, 3.0]),
    # no reward declares per-turn values: the environment's alone
    ([0.0, 0.0, 1.0], [], [0.0, 0.0, 1.0]),
]


@pytest.mark.parametrize(("env_rewards", "values", "expected"), TURN_REWARD_CASES)
def test_per_turn_rewards_add_the_environments_and_the_weighted_values(env_rewards, values, expected):
    assert turn_rewards(env_rewards, values) == pytest.approx(expected)


# -- malformed input: one ValueError that names what is off ---------------------------------------------------------

MALFORMED_CASES = [
    # (call, message)
    (lambda: check_step_credit("ppo", 1.0, 0.95), "--advantage_estimator ppo: choose grpo or gigpo"),
    (lambda: check_step_credit("gigpo", 1.0, 0.0), r"--step_gamma must be in \(0, 1\], got 0.0"),
    (lambda: check_step_credit("gigpo", 1.0, 1.5), r"--step_gamma must be in \(0, 1\], got 1.5"),
    (lambda: check_step_credit("gigpo", -0.5, 0.95), "--step_advantage_weight must be a number >= 0, got -0.5"),
    (lambda: check_step_credit("gigpo", math.nan, 0.95), "--step_advantage_weight must be a number >= 0, got nan"),
    (lambda: discounted_returns([1.0], 0.0), r"--step_gamma must be in \(0, 1\], got 0.0"),
    # one group id per episode
    (lambda: step_credit([0], [["a"], ["b"]], [[0.0], [0.0]], 0.9, "group"), "1 group ids for 2 episodes"),
    # a state key per turn
    (lambda: step_credit([0, 0], [["a", "b"], ["a"]], [[0.0], [0.0]], 0.9, "group"),
     "episode 0 has 2 state keys for 1 per-turn rewards"),
    (lambda: step_credit([0, 0], [["a"], [None]], [[0.0], [0.0]], 0.9, "group"), "episode 1, turn 0 has no state key"),
    (lambda: step_credit([0, 0], [["a"], ["a"]], [[0.0], [math.inf]], 0.9, "group"),
     "episode 1, turn 0: reward inf is not a finite number"),
    (lambda: step_credit([0, 0], [["a"], ["a"]], [[0.0], [0.0]], 0.9, "sometimes"),
     "scale_rewards must be one of group, batch, none, got 'sometimes'"),
    (lambda: turn_advantages(0.5, [0.1], math.inf), "--step_advantage_weight must be a number >= 0, got inf"),
    (lambda: token_advantages([0, 3], [2], [0.1, 0.2], 8), "2 offsets, 1 answer lengths and 2 advantages"),
    (lambda: turn_rewards([0.0, 1.0], [(1.0, [0.5])]), "2 turns but a reward gave 1 per-turn values"),
]  # fmt: skip


@pytest.mark.parametrize(("call", "message"), MALFORMED_CASES)
def test_malformed_input_is_one_error_naming_it(call, message):
    with pytest.raises(ValueError, match=message):
        call()
