"""Step-level credit for multi-turn GRPO: GiGPO's advantages (Feng et al. 2025, "Group-in-Group Policy Optimization
for LLM Agent Training", arXiv 2505.10978), as pure functions over plain lists.

GRPO gives every turn of an episode the episode's advantage (its reward normalised within its group: the episodes
of one reset). GiGPO adds a step-level part. The turns of a group's episodes that were generated from the same
state (an anchor state: `r1_gui.envs.contract.state_key`, a hash of the screenshot and instruction, or the
environment's own `info["state_key"]`) form an anchor group; each turn's discounted return from that turn on is
normalised within its anchor group, and a turn alone in its group gets 0. A turn's advantage is the episode's plus
omega (`--step_advantage_weight`) times its step advantage.

    returns      R_t = r_t + gamma R_{t+1}                   (`discounted_returns`; r_t from `turn_rewards`: the
                                                             weighted per-turn rewards, plus the environment's step
                                                             reward unless task_success stands for it)
    step         A_t = (R_t - mean_g) / (std_g + 1e-4)       (`step_credit`; g: the turn's anchor group)
    turn         episode advantage + omega A_t               (`turn_advantages`)
    tokens       every answer token of turn t gets turn t's  (`token_advantages`; tool-response tokens 0)

The normalisation follows trl's `scale_rewards`, as the episode part does: "group" divides by the anchor group's std,
"batch" by the std of every turn's return in the batch, "none" only subtracts the mean; stds are Bessel-corrected
and 1e-4 is added to them, as in trl 1.16. The trainer (`r1_gui.multi_turn.trainer`) gathers the turns of every
process first, so an anchor group holds the turns of its reset's episodes wherever they were played.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

ESTIMATORS = ("grpo", "gigpo")
SCALES = ("group", "batch", "none")  # trl's scale_rewards
EPSILON = 1e-4  # trl 1.16's, added to the std in its group normalisation


def check_step_credit(estimator: str, weight: float, gamma: float) -> None:
    """--advantage_estimator, --step_advantage_weight and --step_gamma; ValueError naming the flag."""
    if estimator not in ESTIMATORS:
        raise ValueError(f"--advantage_estimator {estimator}: choose {' or '.join(ESTIMATORS)}")
    _check_weight(weight)
    _check_gamma(gamma)


def _check_weight(weight: float) -> None:
    if not (isinstance(weight, (int, float)) and math.isfinite(weight) and weight >= 0):
        raise ValueError(f"--step_advantage_weight must be a number >= 0, got {weight}")


def _check_gamma(gamma: float) -> None:
    if not (isinstance(gamma, (int, float)) and 0 < gamma <= 1):
        raise ValueError(f"--step_gamma must be in (0, 1], got {gamma}")


def discounted_returns(rewards: Sequence[float], gamma: float) -> list[float]:
    """Each turn's discounted return from that turn on: R_t = r_t + gamma R_{t+1}.
    Example: rewards [0, 0.5, 1], gamma 0.9 -> [1.26, 1.4, 1.0]."""
    _check_gamma(gamma)
    returns, following = [0.0] * len(rewards), 0.0
    for turn in reversed(range(len(rewards))):
        following = float(rewards[turn]) + gamma * following
        returns[turn] = following
    return returns


def turn_rewards(
    env_rewards: Sequence[float],
    reward_values: Sequence[tuple[float, Sequence[float | None]]],
    *,
    env_reward_carried: bool = False,
) -> list[float]:
    """One episode's per-turn rewards: for each reward function that declares per-turn values
    (`r1_gui.rewards.turn_values`), its weight times its value (None: does not apply, 0), plus the environment's
    step reward of each turn unless a reward function carries it already (`env_reward_carried`:
    `r1_gui.rewards.carries_env_reward`, `task_success`), so each reward counts once.
    Examples: env [0, 1], (1.0, [0.5, None]) -> [0.5, 1.0]; with task_success's (2.0, [0, 1]) too, carried ->
    [0.5, 2.0]."""
    totals = [0.0 if env_reward_carried else float(reward) for reward in env_rewards]
    for weight, values in reward_values:
        if len(values) != len(totals):
            raise ValueError(f"{len(totals)} turns but a reward gave {len(values)} per-turn values")
        for turn, value in enumerate(values):
            if value is not None:
                totals[turn] += float(weight) * float(value)
    return totals


@dataclass(frozen=True)
class StepCredit:
    """The step advantages of a batch of episodes and what is logged about their anchor groups."""

    advantages: list[list[float]]  # per episode, per turn
    anchor_groups: int  # distinct (reset group, state) pairs
    mean_group_size: float  # turns per anchor group
    singleton_frac: float  # share of the turns alone in their anchor group (step advantage 0)
    spread: float  # the (population) std of the step advantages over every turn


def step_credit(
    groups: Sequence[int],
    state_keys: Sequence[Sequence[Hashable]],
    rewards: Sequence[Sequence[float]],
    gamma: float,
    scale_rewards: str,
) -> StepCredit:
    """Step advantages of the episodes of a batch: `groups[i]` is episode i's GRPO group (its reset), `state_keys[i]`
    and `rewards[i]` hold one state key and one per-turn reward per turn. See the module docstring; ValueError on
    input that does not fit together."""
    _check_gamma(gamma)
    if scale_rewards not in SCALES:
        raise ValueError(f"scale_rewards must be one of {', '.join(SCALES)}, got {scale_rewards!r}")
    if not len(groups) == len(state_keys) == len(rewards):
        raise ValueError(
            f"{len(groups)} group ids for {len(state_keys)} episodes (state keys) and {len(rewards)} (rewards)"
        )
    members: dict[tuple, list[tuple[int, int]]] = defaultdict(list)  # anchor -> (episode, turn) in it
    returns = []
    for episode, (group, keys, episode_rewards) in enumerate(zip(groups, state_keys, rewards, strict=True)):
        if len(keys) != len(episode_rewards):
            raise ValueError(
                f"episode {episode} has {len(keys)} state keys for {len(episode_rewards)} per-turn rewards"
            )
        for turn, (key, reward) in enumerate(zip(keys, episode_rewards, strict=True)):
            if key is None:
                raise ValueError(f"episode {episode}, turn {turn} has no state key")
            if not math.isfinite(float(reward)):
                raise ValueError(f"episode {episode}, turn {turn}: reward {reward} is not a finite number")
            members[(group, key)].append((episode, turn))
        returns.append(discounted_returns(episode_rewards, gamma))
    batch_std = _std([value for episode in returns for value in episode]) if scale_rewards == "batch" else None
    advantages = [[0.0] * len(episode) for episode in returns]
    for turns in members.values():
        if len(turns) < 2:
            continue  # a turn alone in its group has nothing to be compared with
        values = [returns[episode][turn] for episode, turn in turns]
        mean = sum(values) / len(values)
        scale = {"group": _std(values), "batch": batch_std, "none": None}[scale_rewards]
        for (episode, turn), value in zip(turns, values, strict=True):
            advantages[episode][turn] = (value - mean) if scale is None else (value - mean) / (scale + EPSILON)
    flat = [value for episode in advantages for value in episode]
    turns_total = len(flat)
    mean_advantage = sum(flat) / turns_total if turns_total else 0.0
    return StepCredit(
        advantages=advantages,
        anchor_groups=len(members),
        mean_group_size=turns_total / len(members) if members else 0.0,
        singleton_frac=sum(len(t) == 1 for t in members.values()) / turns_total if turns_total else 0.0,
        spread=math.sqrt(sum((v - mean_advantage) ** 2 for v in flat) / turns_total) if turns_total else 0.0,
    )


def _std(values: Sequence[float]) -> float:
    """Bessel-corrected, as trl's `nanstd`; 0 for fewer than two values."""
    if len(values) < 2:
        return 0.0
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))


def turn_advantages(episode_advantage: float, step_advantages: Sequence[float], weight: float) -> list[float]:
    """Each turn's advantage: the episode's plus `weight` (omega) times the turn's step advantage.
    Example: 0.7, [0.5, -0.25, 0], omega 0.5 -> [0.95, 0.575, 0.7]."""
    _check_weight(weight)
    return [float(episode_advantage) + weight * float(step) for step in step_advantages]


def token_advantages(
    offsets: Sequence[int], lengths: Sequence[int], advantages: Sequence[float], width: int
) -> list[float]:
    """A row's per-token advantages, `width` long: turn t's advantage on its answer tokens (offsets[t], lengths[t]
    long), 0 elsewhere (the tool-response tokens, which the loss masks anyway, and the padding); answer tokens past
    `width` are cut, as the loss pass cuts them."""
    if not len(offsets) == len(lengths) == len(advantages):
        raise ValueError(f"{len(offsets)} offsets, {len(lengths)} answer lengths and {len(advantages)} advantages")
    row = [0.0] * width
    for offset, length, advantage in zip(offsets, lengths, advantages, strict=True):
        for position in range(offset, min(offset + length, width)):
            row[position] = float(advantage)
    return row
