"""GRPO reward functions for GUI actions and their one registry (``REWARD_FUNCS``). Completions are read by
``r1_gui.actions`` (``extract_action``, ``styled_action``) and compared by ``r1_gui.scoring`` (``score_pair`` and
the other pair scores), the functions the evaluation scores with, so a reward and its metric can never disagree
(``r1_gui.scoring.REWARD_METRICS`` names the pairs).

Every reward is called the way ``trl.GRPOTrainer`` calls it: keyword arguments ``prompts``, ``completions``
(strings, or conversational ``[{"role": "assistant", "content": ...}]``), ``completion_ids``, and every dataset
column, notably ``solution`` (the ground truth in aguvis format with normalized coordinates, possibly wrapped in
``<answer>...</answer>``) and optionally ``bbox`` (per row: [x1, y1, x2, y2] normalized, or None). Unused keywords
are ignored. It returns one float in [0, 1] per completion, or None where the reward does not apply, and never
raises: a row that cannot be scored gets 0.0 (None for the rewards that apply only to some ground truths).

Keywords bound by the trainer (``get_reward_funcs``) and accepted by every reward:

- ``coordinates`` (None): the model's coordinate convention for parsing completions (see ``parse_action``).
- ``screen_size`` (None): (width, height) of the resized image the model saw, per row (a list) or for all rows;
  needed for "pixels".
- ``prompt_style`` ("aguvis"): "aguvis", "think_answer" or "mobile_use"; the response style ``format`` checks.

Reward-specific parameters are keyword-only with documented defaults, settable per reward through
``get_reward_funcs(..., reward_kwargs={"click_distance": {"threshold": 0.05}})``.

An episode reward (an ``--env`` run) may also declare per-turn values, which GiGPO's step-level credit adds up turn by
turn: it takes the keyword ``per_turn`` (see ``r1_gui.episode_rewards``); ``turn_values`` reads them.
"""

from __future__ import annotations

import inspect
import logging
import math
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from r1_gui.actions import (
    COORDINATE_SYSTEMS,
    COORDINATE_TOLERANCE,
    coordinate_scale,
    coordinate_tolerance,
    extract_action,
    read_bbox,
)
from r1_gui.actions.completion import (
    completion_text,
    original_call,
    original_format_matches,
    original_solution_call,
    styled_action,
)
from r1_gui.actions.core import is_number
from r1_gui.actions.guir1 import NO_TEXT, guir1_ground_truth
from r1_gui.cli_errors import UserError, one_line
from r1_gui.episode_rewards import (
    EPISODE_REWARDS,
    RewardFunc,
    needs,
    positive_sigma,
    scorer_signature,
    threshold_below_cutoff,
)
from r1_gui.prompts import PROMPT_STYLES
from r1_gui.scoring import click_distance_score, click_gaussian_score, score_pair, text_f1_score
from r1_gui.scoring.guir1 import guir1_accuracy_score, guir1_format_score

logger = logging.getLogger(__name__)

BOUND_KWARGS = ("coordinates", "screen_size", "prompt_style")
PER_TURN = "per_turn"  # the keyword by which an episode reward declares per-turn values (r1_gui.episode_rewards)


# ------------------------------------------------------------------------------------------- row plumbing


def _row_value(column: Any, index: int, single: Callable[[Any], bool]) -> Any:
    """Row ``index`` of a per-row column, or the value itself when it is one value for every row."""
    if column is None or single(column):
        return column
    if isinstance(column, (list, tuple)) and index < len(column):
        return column[index]
    return None


def _is_single_pair(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and bool(value) and is_number(value[0])


def _row_bbox(bbox: Any, index: int) -> tuple[float, float, float, float] | None:
    """Row ``index``'s box by ``read_bbox``'s default rule, None when it has none or it is malformed."""
    box = _row_value(bbox, index, _is_single_pair)
    return None if box is None else read_bbox(box)


def _rows(completions: Any, solution: Any, bbox: Any, coordinates: Any, screen_size: Any):
    """(prediction, ground truth or None, bbox or None, coordinate tolerance) for each completion."""
    if not isinstance(completions, (list, tuple)):
        return
    for index, completion in enumerate(completions):
        try:
            truth = _row_value(solution, index, lambda v: isinstance(v, str))
            gt = extract_action(truth, coordinates="normalized")
            image_size = _row_value(screen_size, index, _is_single_pair)
            pred = extract_action(completion, coordinates=coordinates, image_size=image_size)
            tolerance = coordinate_tolerance(coordinates or "normalized", image_size) if pred else COORDINATE_TOLERANCE
            yield pred, gt, _row_bbox(bbox, index), tolerance
        except Exception:  # one bad row must not sink the batch
            yield None, None, None, COORDINATE_TOLERANCE


def _clean(value: Any, fallback: float | None) -> float | None:
    if value is None:
        return None
    if not is_number(value) or not math.isfinite(value):
        return fallback
    return min(1.0, max(0.0, float(value)))


def _score(rows, scorer: Callable, missing: float | None) -> list[float | None]:
    """Apply ``scorer(pred, gt, bbox, tolerance)`` to every row; ``missing`` for rows without a parseable ground
    truth."""
    scores = []
    for pred, gt, box, tolerance in rows:
        try:
            scores.append(missing if gt is None else _clean(scorer(pred, gt, box, tolerance), missing))
        except Exception:  # "never raises"
            scores.append(missing)
    return scores


# ------------------------------------------------------------------------------------------------ rewards


def step_reward(missing: float | None) -> Callable[[Callable[..., float]], RewardFunc]:
    """Make a reward of a dataset row's single-step answer from a scorer of one row,
    ``scorer(pred, gt, box, tolerance, *, parameter=default, ...) -> float``: the reward takes the keywords every
    reward takes (``completions``, ``solution``, ``bbox``, the bound ``coordinates``, ``screen_size``,
    ``prompt_style``) and the scorer's keyword-only parameters (settable through ``reward_kwargs``), reads each
    completion and its row (``_rows``) and scores it (``_score``): ``missing`` for a row without a parseable ground
    truth, the scorer's value clipped to [0, 1] (None where it returns None), never an exception. The reward keeps
    the scorer's name and docstring."""

    def make(scorer: Callable[..., float]) -> RewardFunc:
        settable = [p for p in inspect.signature(scorer).parameters.values() if p.kind is p.KEYWORD_ONLY]

        def reward(completions=None, solution=None, bbox=None, *, coordinates=None, screen_size=None,
                   prompt_style="aguvis", **kwargs) -> list[float | None]:  # fmt: skip
            values = {p.name: kwargs.get(p.name, p.default) for p in settable}
            rows = _rows(completions, solution, bbox, coordinates, screen_size)
            return _score(rows, lambda pred, gt, box, tolerance: scorer(pred, gt, box, tolerance, **values), missing)

        return scorer_signature(reward, scorer)

    return make


@needs("completion", "solution")
@step_reward(missing=0.0)
def accuracy_reward(pred, gt, box, tolerance, *, type_weight: float = 0.5, argument_weight: float = 0.5) -> float:
    """``type_weight`` for the right action type + ``argument_weight`` for exactly the right arguments
    (``score_pair``'s type_match and param_match). Example: gt ``mobile.back()``, pred ``mobile.back()`` -> 1.0;
    gt click (0.5, 0.5), pred click (0.6, 0.5) -> 0.5."""
    pair = score_pair(pred, gt, box, tolerance=tolerance)
    return type_weight * pair["type_match"] + argument_weight * pair["param_match"]


@needs("completion")
def format_reward(
    completions=None, *, coordinates=None, screen_size=None, prompt_style="aguvis", **kwargs
) -> list[float | None]:
    """1.0 when the completion is written in ``prompt_style`` and its action parses, else 0.0:

    - aguvis: a plan ("Action: ..." or "Thought: ...\\nAction: ...", optionally after "Observation: ...") then
      the os channel (``assistantos`` or ``<|recipient|>os``) holding exactly one aguvis call;
    - think_answer: ``<think>...</think>`` then ``<answer>...</answer>`` holding one action, nothing else;
    - mobile_use: "Thought: ...\\nAction: ...\\n<tool_call>...</tool_call>" with one mobile_use call.

    A type or open_app action whose text is GUI-R1's placeholder ``'no input text'`` has no text: 0.0, as in GUI-R1.
    Example: "Action: tap OK\\nassistantos\\npyautogui.click(x=0.5, y=0.9)" -> 1.0; an empty action -> 0.0.
    """
    if not isinstance(completions, (list, tuple)):
        return []
    scores = []
    for index, completion in enumerate(completions):
        image_size = _row_value(screen_size, index, _is_single_pair)
        action = styled_action(completion, prompt_style, coordinates=coordinates, image_size=image_size)
        placeholder = action is not None and action.type in ("type", "open_app") and action.text == NO_TEXT
        scores.append(0.0 if action is None or placeholder else 1.0)
    return scores


@needs("completion", "solution")
@step_reward(missing=0.0)
def action_type_reward(pred, gt, box, tolerance) -> float:
    """1.0 when the predicted canonical action type equals the ground truth's (``score_pair`` type_match).
    Example: gt click, pred long_press -> 0.0."""
    return float(score_pair(pred, gt, box, tolerance=tolerance)["type_match"])


@needs("completion", "solution")
@step_reward(missing=0.0)
def step_success_reward(pred, gt, box, tolerance) -> float:
    """1.0 when the step succeeds by the AITW rules (``score_pair`` step_success: taps within 0.14 or in the
    enlarged bbox, swipes on the same axis, type ids equal, plus the text match for a type action); the
    evaluation's ``step_success`` metric is its mean. Example: gt click (0.5, 0.5), pred click (0.6, 0.5) -> 1.0
    (distance 0.1 <= 0.14)."""
    return float(score_pair(pred, gt, box, tolerance=tolerance)["step_success"])


@needs("completion", "solution", check=threshold_below_cutoff)
@step_reward(missing=None)
def click_distance_reward(pred, gt, box, tolerance, *, threshold: float = 0.04, cutoff: float = 0.3) -> float | None:
    """Dense point reward, ``click_distance_score``: 1 within ``threshold``, linear to 0 at ``cutoff``
    (normalized Euclidean distance); None when the ground truth has no point. Example: d = 0.17 -> 0.5."""
    return click_distance_score(pred, gt, threshold, cutoff)


@needs("completion", "solution", check=positive_sigma)
@step_reward(missing=None)
def click_gaussian_reward(pred, gt, box, tolerance, *, sigma: float = 0.05) -> float | None:
    """Gaussian point reward (GUI-G2), ``click_gaussian_score``: exp(-((dx/sx)^2 + (dy/sy)^2)/2), s = half the
    bbox size or ``sigma``; None when the ground truth has no point. Example: dx = sigma, dy = 0 -> 0.6065."""
    return click_gaussian_score(pred, gt, box, sigma)


@needs("completion", "solution")
@step_reward(missing=None)
def text_f1_reward(pred, gt, box, tolerance) -> float | None:
    """Token F1 of the text for type / answer / open_app ground truths (``text_f1_score``); None for other
    ground truths. Example: pred "new york city", gt "new york" -> 0.8."""
    return text_f1_score(pred, gt)


# ------------------------------------------------------------------ the peers' own rewards, reproduced exactly

# A reward named after a peer returns what the peer's own function returns on every input, its bugs included
# (tests/test_peer_rewards.py holds values produced by running the peers' code); r1_gui's corrected rewards are
# the ones above. The peers' readings of a completion live in r1_gui.actions.completion (``original_*``,
# ``guir1_*``), their comparisons in r1_gui.scoring.guir1. Where r1_gui's inputs or contract cannot match the peer,
# docs/guide/peers.md lists it: it never raises where the peer would, and it never runs
# model output (``python_value``).


def _r1v_content(completion: Any) -> Any:
    """What R1-V-GUI-Agent's rewards read of a completion: ``completion[0]["content"]`` of a conversational one
    (the first message, whatever its role), or a plain string itself (where the peer, given one, raises)."""
    if isinstance(completion, str):
        return completion
    try:
        return completion[0]["content"]
    except Exception:  # the peer raises here; "never raises" reads no content instead
        return None


@needs("completion", "solution")
def r1v_accuracy_reward(
    completions=None, solution=None, *, coordinates=None, screen_size=None, prompt_style="aguvis", **kwargs
) -> list[float | None]:
    """R1-V-GUI-Agent's accuracy reward (its grpo_gui.py accuracy_reward), bugs included: the first call of the
    output (``original_call``: after the first "assistantos", ``(.+?)\\((.+?)\\)``) against the first call of the
    solution (``original_solution_call``); 0.5 when the name texts are equal, plus 0.5 when the argument texts are
    too, and 0 when the names differ (whatever the arguments) or either side has no call, so argument-less actions
    (``mobile.back()``) always score 0. ``accuracy`` is the fixed version.
    Example: gt ``pyautogui.click(x=0.5, y=0.5)``, pred ``pyautogui.click(x=0.50, y=0.5)`` -> 0.5;
    pred ``mobile.long_press(x=0.5, y=0.5)`` -> 0.0."""
    if not isinstance(completions, (list, tuple)):
        return []
    scores: list[float | None] = []
    for index, completion in enumerate(completions):
        pred = original_call(_r1v_content(completion))
        gt = original_solution_call(_row_value(solution, index, lambda v: isinstance(v, str)))
        if pred is None or gt is None or pred[0] != gt[0]:
            scores.append(0.0)
        else:
            scores.append(1.0 if pred[1] == gt[1] else 0.5)
    return scores


@needs("completion")
def r1v_format_reward(
    completions=None, *, coordinates=None, screen_size=None, prompt_style="aguvis", **kwargs
) -> list[float | None]:
    """R1-V-GUI-Agent's format reward (its grpo_gui.py format_reward): 0.5 when ``original_format_matches`` (the
    output starts with "content:" and holds "Thought:", "Action:", "assistantos" after it, in this order), else 0.
    Decoded Aguvis output never starts with "content:", so in the original run it was always 0. ``format`` is
    r1_gui's. Example: "Thought: t\\nAction: a\\nassistantos\\nmobile.back()" -> 0.0;
    "content: Thought: t\\nAction: a\\nassistantos" -> 0.5."""
    if not isinstance(completions, (list, tuple)):
        return []
    return [0.5 if original_format_matches(_r1v_content(completion)) else 0.0 for completion in completions]


@needs("completion", "solution")
def guir1_accuracy_reward(
    completions=None, solution=None, bbox=None, *, coordinates=None, screen_size=None, prompt_style="aguvis", **kwargs
) -> list[float | None]:
    """GUI-R1's accuracy reward (its r1gui.py r1gui_accuracy_reward, ``guir1_accuracy_score``) on the completion
    and the ground truth GUI-R1's dataset would build from the row (``guir1_ground_truth``: the action's GUI-R1
    name, the row's ``bbox`` or the action's point times ``screen_size``, in the units of ``coordinates``, pixels
    by default; its input text). None for a click ground truth without the size to express it in pixels.
    Example: gt click (0.5, 0.5) on 448x1036, pred
    "<answer>[{'action': 'click', 'point': [300, 518], 'input_text': 'no input text'}]</answer>" -> 1.0 (76 px);
    the same answer in JSON (double quotes) -> 0.0."""
    if not isinstance(completions, (list, tuple)):
        return []
    scores: list[float | None] = []
    for index, completion in enumerate(completions):
        try:
            gt = extract_action(_row_value(solution, index, lambda v: isinstance(v, str)), coordinates="normalized")
            if gt is None:
                scores.append(0.0)
                continue
            truth = guir1_ground_truth(gt, _guir1_scale(coordinates, screen_size, index), _row_bbox(bbox, index))
            if truth["action"] == "click" and truth["gt_bbox"] is None:
                scores.append(None)  # GUI-R1 measures a click in pixels, and there is no screen size
                continue
            scores.append(_clean(guir1_accuracy_score(completion_text(completion), truth), 0.0))
        except Exception:  # "never raises"
            scores.append(0.0)
    return scores


def _guir1_scale(coordinates: str | None, screen_size: Any, index: int) -> tuple[float, float] | None:
    """The units GUI-R1's ground truth is written in for row ``index``: the size of the model's coordinate grid,
    pixels of ``screen_size`` by default; None for pixels without a size."""
    try:
        return coordinate_scale(coordinates or "pixels", _row_value(screen_size, index, _is_single_pair))
    except ValueError:
        return None


@needs("completion")
def guir1_format_reward(
    completions=None, *, coordinates=None, screen_size=None, prompt_style="aguvis", **kwargs
) -> list[float | None]:
    """GUI-R1's format reward (its r1gui.py r1gui_format_reward, ``guir1_format_score``): 1.0 when the whole
    completion is ``<think>...</think>``, whitespace, ``<answer>...</answer>`` and the first answer's content,
    valued as ``eval`` would value it (``python_value``: never run), is a list whose every entry passes GUI-R1's
    checks; else 0.0. Example:
    "<think>t</think><answer>[{'action': 'type', 'point': [-100, -100], 'input_text': 'no input text'}]</answer>"
    -> 0.0 (a type needs real text)."""
    if not isinstance(completions, (list, tuple)):
        return []
    return [guir1_format_score(completion_text(completion)) for completion in completions]


REWARD_FUNCS: dict[str, RewardFunc] = {
    "accuracy": accuracy_reward,
    "format": format_reward,
    "action_type": action_type_reward,
    "step_success": step_success_reward,
    "click_distance": click_distance_reward,
    "click_gaussian": click_gaussian_reward,
    "text_f1": text_f1_reward,
    "r1v_accuracy": r1v_accuracy_reward,
    "r1v_format": r1v_format_reward,
    "guir1_accuracy": guir1_accuracy_reward,
    "guir1_format": guir1_format_reward,
}
# The multi-turn episode rewards (own names, scored per turn against the environment's expert).
REWARD_FUNCS.update(EPISODE_REWARDS)

# What a reward needs to score anything is its `needs` attribute (`r1_gui.episode_rewards.needs`), as for a reward of
# your own; without one, a single-step answer. `check_reward_needs` refuses a reward whose needs the run cannot meet
# before any model loads (it would score 0 or None on every row). A need that is none of these is a dataset column.
DEFAULT_NEEDS = ("completion",)
NEED_MEANINGS = {
    "completion": "a single-step answer to score (a run on a dataset; in an --env run use the episode_* rewards "
    "and task_success)",
    "solution": "the dataset column solution (dataset/raw_load_data.py writes it)",
    "episode": "whole episodes (an --env run)",
    "expert_action": "an environment that gives info['expert_action']",
}
RUN_NEEDS = ("completion", "episode", "expert_action")  # what a run gives that is no column of its rows


# A preset names rewards that go together with fixed weights: ``--reward_funcs guir1`` is GUI-R1's
# 0.8 * accuracy + 0.2 * format. ``expand_reward_presets`` turns it into reward names and weights.
REWARD_PRESETS: dict[str, tuple[tuple[str, float], ...]] = {
    "guir1": (("guir1_accuracy", 0.8), ("guir1_format", 0.2)),
}


# ------------------------------------------------------------------------------------------- configuration


def reward_params(name: str) -> dict[str, Any]:
    """The settable parameters of a registered reward and their defaults, e.g. {"threshold": 0.04, "cutoff": 0.3}."""
    signature = inspect.signature(REWARD_FUNCS[name])
    return {
        p.name: p.default
        for p in signature.parameters.values()
        if p.kind is inspect.Parameter.KEYWORD_ONLY and p.name not in (*BOUND_KWARGS, PER_TURN)
    }


def reward_needs(name: str) -> tuple[str, ...]:
    """What a registered reward needs to score anything: its `needs` attribute (a single name counts as one), else
    ``DEFAULT_NEEDS``."""
    declared = getattr(REWARD_FUNCS[name], "needs", DEFAULT_NEEDS)
    return (declared,) if isinstance(declared, str) else tuple(declared)


def _check_values(name: str, params: dict[str, Any]) -> None:
    """Each parameter a finite number >= 0, then the reward's own check of how they go together (`check_params`)."""
    for key, value in params.items():
        if not is_number(value) or not math.isfinite(value) or value < 0:
            raise ValueError(f"reward {name!r}: parameter {key!r} must be a finite number >= 0, got {value!r}")
    check = getattr(REWARD_FUNCS[name], "check_params", None)
    if check is not None:
        try:
            check(params)
        except ValueError as error:
            raise ValueError(f"reward {name!r}: {error}") from None


class BoundReward:
    """A registry reward with its keywords bound, named by its registry key. Not a functools.partial: trl 1.16
    names a partial after the function it wraps (``accuracy_reward``), this one logs as ``rewards/accuracy/...``.

    A reward of the user's (any not defined in r1_gui) is watched: one that raises, or returns anything but one
    finite number or None per completion, ends the run with a `UserError` naming it, the step and what it did (one
    line from the command; trl's own message comes after a long traceback, once the model has loaded). r1_gui's own
    rewards never raise, so an exception of theirs is a bug and keeps its traceback."""

    def __init__(self, name: str, func: Callable[..., list[float | None]], **kwargs: Any):
        self.__name__ = name
        self.func = func
        self.kwargs = kwargs
        self.users = not getattr(func, "__module__", "").startswith("r1_gui.")

    def __call__(self, *args: Any, **kwargs: Any) -> list[float | None]:
        state = kwargs.get("trainer_state")
        when = f"in step {state.global_step + 1}" if getattr(state, "global_step", None) is not None else ""
        return self.checked_call(when, *args, **kwargs)

    def checked_call(self, when: str, *args: Any, **kwargs: Any) -> list[float | None]:
        """The reward's values, a reward of the user's watched as the class docstring says (``when``: "in step 3")."""
        if not self.users:
            return self.func(*args, **{**self.kwargs, **kwargs})
        try:
            values = self.func(*args, **{**self.kwargs, **kwargs})
        except Exception as error:
            raise UserError(
                f"reward {self.__name__} raised {type(error).__name__}: {one_line(error)} ({_where(error, self.func)}) "
                f"{when}; a reward must score any completion without raising (R1_GUI_TRACEBACK=1 shows the traceback)"
            ) from error
        if not kwargs.get(PER_TURN):  # per-turn values are checked by turn_values
            _check_returned(self.__name__, values, kwargs.get("completions"), when)
        return values

    def __repr__(self) -> str:
        return f"BoundReward({self.__name__!r}, {self.kwargs})"


def _where(error: BaseException, func: Callable) -> str:
    """ "file.py, line N" of the deepest frame of ``error``'s traceback in ``func``'s file (else the deepest frame)."""
    frames = traceback.extract_tb(error.__traceback__)
    try:
        own = inspect.getsourcefile(func)
    except TypeError:  # a callable object or a builtin: no file of its own
        own = None
    frame = next((f for f in reversed(frames) if f.filename == own), frames[-1] if frames else None)
    return f"{Path(frame.filename).name}, line {frame.lineno}" if frame else "where: unknown"


def _check_returned(name: str, values: Any, completions: Any, when: str) -> None:
    """UserError unless ``values`` holds one finite number or None per completion."""
    count = len(completions) if isinstance(completions, (list, tuple)) else None
    fix = "return a list of one number (or None: does not apply) per completion"
    if not isinstance(values, (list, tuple)):
        raise UserError(
            f"reward {name} returned {values!r:.60} (a {type(values).__name__}) for {count} completions {when}; {fix}"
        )
    if count is not None and len(values) != count:
        raise UserError(f"reward {name} returned {len(values)} values for {count} completions {when}; {fix}")
    for index, value in enumerate(values):
        if value is not None and not (is_number(value) and math.isfinite(value)):
            raise UserError(
                f"reward {name} returned {value!r:.60} for completion {index} {when}: give a number or None "
                "(finite; None where the reward does not apply)"
            )


def probe_rewards(rewards: Sequence[Callable], row: dict, where: str) -> None:
    """Call each reward of the user's (a `BoundReward`) the way trl calls it, on one dataset row with two completions
    (the row's own solution and an empty answer), before the model loads: one that raises or returns the wrong
    values is a UserError naming it and ``where`` ("row 0 of the dataset") now rather than after minutes of
    loading. `row`: as trl passes it (its prompt with the images in); trainer_state is a fresh one (step 0)."""
    from transformers import TrainerState

    texts = [str(row.get("solution") or ""), ""]
    kwargs = {key: [value] * len(texts) for key, value in row.items() if key != "prompt"}
    kwargs.update(
        prompts=[row.get("prompt")] * len(texts),
        completions=[[{"role": "assistant", "content": text}] for text in texts],
        completion_ids=[[] for _ in texts],
        trainer_state=TrainerState(),
        log_extra=lambda *args, **kwargs: None,
        log_metric=lambda *args, **kwargs: None,
    )
    for reward in rewards:
        if isinstance(reward, BoundReward) and reward.users:
            reward.checked_call(f"in a probe on {where} before training", **kwargs)


def declares_per_turn(reward: Callable) -> bool:
    """Whether a reward (registered, bound or your own) takes the `per_turn` keyword (`r1_gui.episode_rewards`)."""
    func = reward.func if isinstance(reward, BoundReward) else reward
    try:
        return PER_TURN in inspect.signature(func).parameters
    except (TypeError, ValueError):  # a callable without a signature (a builtin, a reward model) declares nothing
        return False


def carries_env_reward(reward: Callable) -> bool:
    """Whether a reward (registered, bound or your own) stands for the environment's own reward (its attribute
    ``carries_env_reward``, True on `task_success`): GiGPO's per-turn rewards then count its weighted per-turn values
    in place of the environment's step rewards, so that the environment's reward counts once."""
    func = reward.func if isinstance(reward, BoundReward) else reward
    return bool(getattr(func, "carries_env_reward", False))


def turn_values(reward: Callable, episodes: Sequence[Any]) -> list[list[float | None]] | None:
    """A reward's per-turn values for `episodes`, one list per episode with one value per turn (None: does not apply),
    from `reward(episode=episodes, per_turn=True)`; None when the reward declares no per-turn values. What the reward
    returns is checked: ValueError naming the reward when it does not hold one finite number or None per turn."""
    if not declares_per_turn(reward):
        return None
    name = getattr(reward, "__name__", repr(reward))
    values = reward(episode=list(episodes), per_turn=True)
    if not isinstance(values, (list, tuple)) or len(values) != len(episodes):
        raise ValueError(f"reward {name!r} with per_turn=True must return one list per episode ({len(episodes)})")
    for index, (episode, per_turn) in enumerate(zip(episodes, values, strict=True)):
        turns = len(episode.turns)
        if not isinstance(per_turn, (list, tuple)) or len(per_turn) != turns:
            raise ValueError(f"reward {name!r} with per_turn=True gave episode {index} ({turns} turns) {per_turn!r}")
        if any(value is not None and not (is_number(value) and math.isfinite(value)) for value in per_turn):
            raise ValueError(f"reward {name!r} with per_turn=True gave episode {index} a value that is not a number")
    return [list(per_turn) for per_turn in values]


def _split_names(names: Sequence[str] | str) -> list[str]:
    if isinstance(names, str):
        return [name.strip() for name in names.split(",") if name.strip()]
    return list(names)


def expand_reward_presets(
    names: Sequence[str] | str, weights: Sequence[float] | None = None
) -> tuple[list[str], list[float] | None]:
    """(reward names, weights) with every preset of ``REWARD_PRESETS`` replaced, in place, by its rewards.

    Without presets both come back as given. With one, ``weights`` None gives each preset reward its preset weight
    and every other reward 1.0; explicit ``weights`` must have one value per reward *after* expansion and repeat the
    preset's own weights at its place, anything else is a contradiction and raises ValueError saying what to write.
    Example: ``expand_reward_presets(["guir1"]) == (["guir1_accuracy", "guir1_format"], [0.8, 0.2])``;
    ``expand_reward_presets(["guir1", "text_f1"], [0.8, 0.2, 0.5])`` keeps the weights.
    """
    names = _split_names(names)
    if not any(name in REWARD_PRESETS for name in names):
        return names, None if weights is None else list(weights)
    expanded: list[str] = []
    fixed: list[float | None] = []  # the preset's weight, or None where the user's weight is free
    for name in names:
        members = REWARD_PRESETS.get(name, ((name, None),))
        expanded += [member for member, _ in members]
        fixed += [weight for _, weight in members]
    if weights is None:
        return expanded, [1.0 if weight is None else weight for weight in fixed]
    weights = [float(weight) for weight in weights]
    wanted = [f"{name}={'<yours>' if weight is None else weight}" for name, weight in zip(expanded, fixed, strict=True)]
    contradicts = len(weights) != len(expanded) or any(
        weight is not None and not math.isclose(given, weight) for given, weight in zip(weights, fixed, strict=True)
    )
    if contradicts:
        presets = [name for name in names if name in REWARD_PRESETS]
        raise ValueError(
            f"--reward_weights {weights} contradicts the preset(s) {presets}: the rewards are {expanded} and the "
            f"weights must read {', '.join(wanted)}. Leave --reward_weights out to use the preset's weights, or list "
            f"the preset's rewards by name to weight them yourself."
        )
    return expanded, weights


def load_reward(name: str) -> None:
    """Register a reward written as ``module:function`` (your own, in a module on the path or in the working
    directory), the way ``--env module:EnvId`` names an environment. Its needs are the function's ``needs``
    attribute (default: ("completion",), a single-step answer). A name without ":" is left to the registry."""
    if ":" not in name or name in REWARD_FUNCS:
        return
    import importlib
    import os
    import sys

    module_name, _, function_name = name.partition(":")
    if os.getcwd() not in sys.path:
        sys.path.append(os.getcwd())
    try:
        func = getattr(importlib.import_module(module_name), function_name)
    except (ImportError, AttributeError) as error:
        raise ValueError(f"--reward_funcs {name}: {error}; write module:function for a reward of your own") from None
    register_reward(name, func)


def register_reward(name: str, func: Callable[..., list[float | None]], needs: Sequence[str] | None = None) -> None:
    """Add a reward of your own to the registry under ``name`` (then ``--reward_funcs NAME`` selects it). What it
    needs to score anything (``NEED_MEANINGS``' keys or dataset column names) is its ``needs`` attribute, or
    ``needs`` given here (which sets that attribute). Example, in a module imported before training:
    ``register_reward("digits", digits_reward, needs=("completion",))``."""
    if name in REWARD_FUNCS or name in REWARD_PRESETS:
        raise ValueError(f"reward name {name!r} is taken; choose another")
    if needs is not None:
        func.needs = (needs,) if isinstance(needs, str) else tuple(needs)
    REWARD_FUNCS[name] = func


def check_reward_needs(names: Sequence[str], available: set[str], run: str) -> None:
    """Raise ValueError (one line) when a reward needs what this run (`run`, e.g. "--env r1_gui/Web-v0") lacks,
    naming the rewards that would work. ``available``: what the run has, ``NEED_MEANINGS``' keys and the columns of
    its rows; a need that is no key of ``NEED_MEANINGS`` is a column."""
    names = _split_names(names)
    for name in names:
        load_reward(name)
    lacking = {name: [need for need in reward_needs(name) if need not in available] for name in names}
    lacking = {name: missing for name, missing in lacking.items() if missing}
    if not lacking:
        return
    why = "; ".join(
        f"{name} needs {' and '.join(NEED_MEANINGS.get(need, f'the column {need}') for need in missing)}"
        for name, missing in lacking.items()
    )
    columns = sorted(need for need in available if need not in RUN_NEEDS)
    shown = (
        f"its columns: {', '.join(columns) or 'none'}; "
        if any(set(m) - set(NEED_MEANINGS) for m in lacking.values())
        else ""
    )
    fitting = [name for name in REWARD_FUNCS if set(reward_needs(name)) <= available]
    raise ValueError(
        f"--reward_funcs: {why}, which {run} does not have ({shown}it would score nothing). Rewards that fit this "
        f"run: {', '.join(fitting) or 'none'}"
    )


def get_reward_funcs(
    names: Sequence[str] | str, *, reward_kwargs: dict[str, dict[str, Any]] | None = None, **bound_kwargs: Any
) -> list[Callable[..., list[float | None]]]:
    """The named rewards as ``BoundReward`` callables named after their registry key (so TRL logs
    ``rewards/<name>/mean``), with ``bound_kwargs`` (coordinates, screen_size, prompt_style) and each reward's
    ``reward_kwargs[name]`` bound. Raises ValueError for an unknown reward, keyword, or parameter.

    Example: ``get_reward_funcs(["accuracy", "click_distance"], prompt_style="aguvis",
    reward_kwargs={"click_distance": {"threshold": 0.05}})``.
    """
    names = _split_names(names)
    for name in names:
        load_reward(name)
    presets = [name for name in names if name in REWARD_PRESETS]
    if presets:
        raise ValueError(
            f"{presets} are reward presets, which carry weights: expand them first with "
            f"expand_reward_presets(names, weights) (grpo_gui does) and pass the weights to GRPOConfig.reward_weights"
        )
    unknown = [name for name in names if name not in REWARD_FUNCS]
    if unknown:
        raise ValueError(
            f"unknown reward(s) {unknown}; valid names: {sorted(REWARD_FUNCS)}, presets: {sorted(REWARD_PRESETS)}"
        )
    if len(set(names)) != len(names):
        raise ValueError(f"reward names must be unique, got {names}")
    bad_keywords = sorted(set(bound_kwargs) - set(BOUND_KWARGS))
    if bad_keywords:
        raise ValueError(f"unknown reward keyword(s) {bad_keywords}; valid: {list(BOUND_KWARGS)}")
    if bound_kwargs.get("prompt_style", "aguvis") not in PROMPT_STYLES:
        raise ValueError(f"prompt_style must be one of {PROMPT_STYLES}, got {bound_kwargs['prompt_style']!r}")
    if bound_kwargs.get("coordinates") not in (None, *COORDINATE_SYSTEMS):
        raise ValueError(
            f"coordinates must be None or one of {COORDINATE_SYSTEMS}, got {bound_kwargs['coordinates']!r}"
        )
    reward_kwargs = dict(reward_kwargs or {})
    stray = sorted(set(reward_kwargs) - set(names))
    if stray:
        raise ValueError(f"reward_kwargs given for {stray}, which are not among the selected rewards {names}")
    funcs = []
    for name in names:
        defaults = reward_params(name)
        overrides = dict(reward_kwargs.get(name) or {})
        bad = sorted(set(overrides) - set(defaults))
        if bad:
            raise ValueError(f"reward {name!r} has no parameter(s) {bad}; valid: {sorted(defaults) or 'none'}")
        _check_values(name, {**defaults, **overrides})
        funcs.append(BoundReward(name, REWARD_FUNCS[name], **bound_kwargs, **overrides))
    return funcs
