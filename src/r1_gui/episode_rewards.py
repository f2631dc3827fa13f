"""Episode rewards for multi-turn GRPO, registered in `r1_gui.rewards.REWARD_FUNCS` under their own names, and how
every reward declares what it needs (`needs`).

Each is called the way trl calls a reward, with the rollout's `episode` column (an `r1_gui.agent.loop.Episode`, one
per completion; read by attribute only, so this module imports nothing above `scoring`). The per-turn ones score each turn's action (as the environment parsed it from the model's
text) against the environment's expert action *on that turn's screen*, with the single-step pair scores of
`r1_gui.scoring`, and average over the turns where the score applies (None when it applies to none):

| name | per turn | parameters |
|---|---|---|
| `episode_format` | 1 when the turn reads "Thought: ...\\nAction: ...\\n<tool_call>{mobile_use call}</tool_call>" | |
| `episode_action_type` | 1 when the action type is the expert's | |
| `episode_click_distance` | `click_distance_score` (expert actions with a point) | threshold 0.04, cutoff 0.3 |
| `episode_click_gaussian` | `click_gaussian_score` (expert actions with a point), scaled by the turn's target box | sigma 0.05 |
| `episode_text_f1` | `text_f1_score` (expert type / open_app / answer actions) | |
| `task_success` | 1 when the environment's final-state check passed (the whole episode) | |

None of them raises: a row without an episode scores None.

**Per-turn values** (for GiGPO's step-level credit, `r1_gui.multi_turn.advantages`): a reward declares them by taking
the keyword `per_turn` (default False); called with `per_turn=True` it returns, per episode, one value per turn (None
where it does not apply to that turn, counted as 0) instead of the episode's score. Every reward above does: the
per-turn ones give each turn's score before the mean, `task_success` gives 0 on every turn but the last, which holds
the episode's success. `r1_gui.rewards.turn_values` reads them. A reward of your own (`module:function`) declares them
the same way; one that does not take `per_turn` counts for the episode-level advantage only. `task_success` also
carries the environment's own reward (the attribute ``carries_env_reward``): with it among the rewards, a turn's
reward holds its weighted values in place of the environment's step reward, which is the same success.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import Any

from r1_gui.actions import styled_action
from r1_gui.scoring import click_distance_score, click_gaussian_score, text_f1_score

RewardFunc = Callable[..., list[float | None]]  # what trl calls: keyword arguments in, a score per completion out


def needs(*names: str, check: Callable[[dict], None] | None = None) -> Callable[[RewardFunc], RewardFunc]:
    """Declare what a reward needs to score anything, the way a user's reward says it (``reward.needs = (...)``):
    "completion" (a single-step answer), dataset column names ("solution"), "episode" (an --env run) or
    "expert_action" (an environment that gives one); `r1_gui.rewards.check_reward_needs` reads it. ``check``: a
    function that raises ValueError on settings of the reward's parameters that cannot work together (each value is
    already a finite number >= 0), read by `r1_gui.rewards.get_reward_funcs` as ``check_params``."""

    def declare(reward: RewardFunc) -> RewardFunc:
        reward.needs = names
        if check is not None:
            reward.check_params = check
        return reward

    return declare


def threshold_below_cutoff(params: dict) -> None:
    """The check of a click-distance reward's parameters: the score falls from 1 at ``threshold`` to 0 at ``cutoff``."""
    if not params["threshold"] < params["cutoff"]:
        raise ValueError(f"threshold must be below cutoff, got {params}")


def positive_sigma(params: dict) -> None:
    """The check of a Gaussian click reward's parameters: ``sigma`` divides."""
    if params["sigma"] <= 0:
        raise ValueError(f"sigma must be > 0, got {params['sigma']}")


def scorer_signature(reward: RewardFunc, scorer: Callable) -> RewardFunc:
    """``reward`` (a reward made from ``scorer``: `turn_reward`, `r1_gui.rewards.step_reward`) shown as the scorer:
    its name and docstring, and its signature with the scorer's keyword-only parameters before ``**kwargs``, where
    `r1_gui.rewards.reward_params` finds what ``reward_kwargs`` may set."""
    shown = inspect.signature(reward)
    common = list(shown.parameters.values())
    settable = [p for p in inspect.signature(scorer).parameters.values() if p.kind is p.KEYWORD_ONLY]
    reward.__signature__ = shown.replace(parameters=[*common[:-1], *settable, common[-1]])
    reward.__name__ = reward.__qualname__ = scorer.__name__
    reward.__doc__, reward.__module__ = scorer.__doc__, scorer.__module__
    return reward


def turn_reward(scorer: Callable[..., float | None]) -> RewardFunc:
    """An episode reward from a scorer of one turn, ``scorer(turn, *, parameter=default, ...) -> float | None``:
    per episode the mean of its turns' scores over the turns where it applies, or with ``per_turn`` the scores
    themselves (see the module docstring); the scorer's keyword-only parameters are settable (``reward_kwargs``)."""
    settable = [p for p in inspect.signature(scorer).parameters.values() if p.kind is p.KEYWORD_ONLY]

    def reward(completions=None, episode=None, *, coordinates=None, screen_size=None, prompt_style=None,
               per_turn=False, **kwargs):  # fmt: skip
        values = {p.name: kwargs.get(p.name, p.default) for p in settable}
        return _per_episode(completions, episode, lambda turn: scorer(turn, **values), per_turn)

    return scorer_signature(reward, scorer)


def _turn_mean(episode: Any, score: Callable[[Any], float | None]) -> float | None:
    values = [value for value in _turn_scores(episode, score) if value is not None]
    return sum(values) / len(values) if values else None


def _no_episodes(completions) -> list[None]:
    """One None per completion: rows without an `episode` column (a single-step batch) are not scored."""
    return [None] * len(completions) if isinstance(completions, (list, tuple)) else []


def _turn_scores(episode: Any, score: Callable[[Any], float | None]) -> list[float | None]:
    """Each turn's score (None where it does not apply or cannot be scored)."""
    values = []
    for turn in getattr(episode, "turns", None) or []:
        try:
            value = score(turn)
        except Exception:  # "never raises": a turn that cannot be scored is left out
            value = None
        values.append(float(value) if value is not None and math.isfinite(value) else None)
    return values


def _per_episode(completions, episode, score: Callable[[Any], float | None], per_turn: bool = False) -> list:
    """Per episode: the mean of its turns' scores, or with `per_turn` the scores themselves (see the module docstring)."""
    if not isinstance(episode, (list, tuple)):
        return _no_episodes(completions)
    if per_turn:
        return [_turn_scores(item, score) if item is not None else None for item in episode]
    return [_turn_mean(item, score) if item is not None else None for item in episode]


@needs("episode")
@turn_reward
def episode_format_reward(turn) -> float:
    """Mean over turns of 1 when the turn is written as Thought -> Action -> one mobile_use `<tool_call>` whose
    action parses (the single-step `format` rule of the mobile_use style), else 0.
    Example: one turn well formed, one bare `<tool_call>` -> 0.5."""
    return float(styled_action(turn.text, "mobile_use", coordinates="grid999") is not None)


@needs("episode", "expert_action")
@turn_reward
def episode_action_type_reward(turn) -> float | None:
    """Mean over turns of 1 when the turn's action type is the expert's (0 when the text did not parse).
    Example: expert click, click then nothing parsed -> 0.5."""
    if turn.expert_action is None:
        return None
    return float(turn.action is not None and turn.action.type == turn.expert_action.type)


@needs("episode", "expert_action", check=threshold_below_cutoff)
@turn_reward
def episode_click_distance_reward(turn, *, threshold: float = 0.04, cutoff: float = 0.3) -> float | None:
    """Mean of `click_distance_score` over the turns whose expert action has a point; None when none has.
    Example: an exact click and one 0.17 away -> (1.0 + 0.5) / 2 = 0.75; per turn -> [1.0, 0.5]."""
    if turn.expert_action is None:
        return None
    return click_distance_score(turn.action, turn.expert_action, threshold, cutoff)


@needs("episode", "expert_action", check=positive_sigma)
@turn_reward
def episode_click_gaussian_reward(turn, *, sigma: float = 0.05) -> float | None:
    """Mean of `click_gaussian_score` over the turns whose expert action has a point: as the single-step
    `click_gaussian` scales by the row's bbox, each turn scales by its `target_box` (the element the expert clicks,
    `info["target_box"]`): sx, sy half its width and height; `sigma` where the turn has no box.
    Example: no box, one click sigma off in x -> exp(-0.5) = 0.6065; box 0.2 wide, 0.1 off in x -> the same."""
    if turn.expert_action is None:
        return None
    return click_gaussian_score(turn.action, turn.expert_action, getattr(turn, "target_box", None), sigma)


@needs("episode", "expert_action")
@turn_reward
def episode_text_f1_reward(turn) -> float | None:
    """Mean of `text_f1_score` over the turns whose expert action carries text (type, open_app, answer).
    Example: typed "new york city" where the expert types "new york" -> 0.8."""
    return None if turn.expert_action is None else text_f1_score(turn.action, turn.expert_action)


@needs("episode")
def task_success_reward(
    completions=None, episode=None, *, coordinates=None, screen_size=None, prompt_style=None, per_turn=False, **kwargs
):
    """1.0 when the episode ended in success (the environment's final-state check), else 0.0; per turn, that value
    at the last turn (whose action ended the episode) and 0 before it.
    Example: the goal state reached and terminate(success) written -> 1.0; per turn, in 3 turns -> [0, 0, 1]."""
    if not isinstance(episode, (list, tuple)):
        return _no_episodes(completions)
    success = [None if item is None else float(bool(getattr(item, "success", False))) for item in episode]
    if per_turn:
        return [
            None if item is None else _at_last_turn(item, value) for item, value in zip(episode, success, strict=True)
        ]
    return success


# task_success is the environment's final-state check, which the environments' step rewards already give (1.0 for the
# action that ends an episode in success): under GiGPO its weighted per-turn values stand in for them
# (`r1_gui.rewards.carries_env_reward`), so a success counts once in a turn's reward.
task_success_reward.carries_env_reward = True


def _at_last_turn(episode: Any, value: float) -> list[float]:
    turns = len(getattr(episode, "turns", None) or [])
    return [0.0] * (turns - 1) + [value] if turns else []


EPISODE_REWARDS: dict[str, Callable[..., list[float | None]]] = {
    "episode_format": episode_format_reward,
    "episode_action_type": episode_action_type_reward,
    "episode_click_distance": episode_click_distance_reward,
    "episode_click_gaussian": episode_click_gaussian_reward,
    "episode_text_f1": episode_text_f1_reward,
    "task_success": task_success_reward,
}
