"""GRPO reward functions for GUI actions, one registry (``REWARD_FUNCS``), and the per-pair scores the
evaluation reuses (``score_pair``) so that a reward and its metric can never disagree.

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
"""

from __future__ import annotations

import inspect
import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from r1_gui import aitw
from r1_gui.actions import (
    COORDINATE_SYSTEMS,
    COORDINATE_TOLERANCE,
    TEXT_TYPES,
    Action,
    coordinate_tolerance,
    extract_action,
    parse_action,
    same_arguments,
)
from r1_gui.actions.guir1 import NO_TEXT, guir1_name, read_literal
from r1_gui.actions.parse import completion_text
from r1_gui.multi_turn.episode_rewards import EPISODE_REWARDS
from r1_gui.prompts import PROMPT_STYLES

BOUND_KWARGS = ("coordinates", "screen_size", "prompt_style")


# ----------------------------------------------------------------------------------------------- pair scores


def score_pair(
    pred: Action | None, gt: Action, bbox: Sequence[float] | None = None, *, tolerance: float = COORDINATE_TOLERANCE
) -> dict[str, bool]:
    """The step metrics of one prediction against its ground truth, shared by rewards and evaluation:

    - ``type_match``: same canonical action type;
    - ``param_match``: exactly the right arguments (``same_arguments``; argument-less actions are exact), with
      coordinates equal within ``tolerance`` (see ``coordinate_tolerance``: the data's printed precision, or half
      a unit of the model's grid or pixel when that is coarser);
    - ``action_match``: the AITW rules (``aitw.actions_match``, with ``bbox`` [x1, y1, x2, y2] as the box);
    - ``step_success``: ``action_match`` plus the AITW text match for a type action (``aitw.step_success``).

    A None prediction scores False everywhere. Raises ValueError for a malformed ``bbox``.
    """
    return {
        "type_match": pred is not None and pred.type == gt.type,
        "param_match": pred is not None and same_arguments(pred, gt, tolerance=tolerance),
        "action_match": aitw.actions_match(pred, gt, bbox),
        "step_success": aitw.step_success(pred, gt, bbox),
    }


def click_distance_score(pred: Action | None, gt: Action, threshold: float = 0.04, cutoff: float = 0.3) -> float | None:
    """1.0 within ``threshold`` of the ground-truth point (normalized Euclidean distance), linear down to 0 at
    ``cutoff``; None when the ground truth has no point, 0 when the prediction has none (types not compared).
    Example: gt (0.5, 0.5), pred (0.5, 0.67): d = 0.17 -> (0.3 - 0.17) / (0.3 - 0.04) = 0.5.
    """
    if gt.point is None:
        return None
    if pred is None or pred.point is None:
        return 0.0
    distance = math.dist(pred.point, gt.point)
    if distance <= threshold:
        return 1.0
    if distance >= cutoff:
        return 0.0
    return (cutoff - distance) / (cutoff - threshold)


def click_gaussian_score(
    pred: Action | None, gt: Action, bbox: Sequence[float] | None = None, sigma: float = 0.05
) -> float | None:
    """exp(-((dx/sx)^2 + (dy/sy)^2) / 2) with sx, sy half the ``bbox`` width and height (``sigma`` when there is
    no box or it is flat); None when the ground truth has no point, 0 when the prediction has none.
    Example: no box, sigma 0.05, dx = 0.05, dy = 0 -> exp(-0.5) = 0.6065.
    """
    if gt.point is None:
        return None
    if pred is None or pred.point is None:
        return 0.0
    sigma_x = sigma_y = sigma
    if bbox is not None:
        x1, y1, x2, y2 = bbox
        sigma_x = (x2 - x1) / 2 if x2 > x1 else sigma
        sigma_y = (y2 - y1) / 2 if y2 > y1 else sigma
    dx, dy = (pred.x - gt.x) / sigma_x, (pred.y - gt.y) / sigma_y
    return math.exp(-(dx * dx + dy * dy) / 2)


def text_f1_score(pred: Action | None, gt: Action) -> float | None:
    """Token F1 (lowercase whitespace tokens) of the text of a type / answer / open_app action; None when the
    ground truth has no text, 0 when the prediction's type differs. Two empty texts score 1.
    Example: pred "new york city", gt "new york" -> P 2/3, R 1 -> F1 0.8.
    """
    if gt.type not in TEXT_TYPES or gt.text is None:
        return None
    if pred is None or pred.type != gt.type:
        return 0.0
    pred_tokens, gt_tokens = pred.text.lower().split(), gt.text.lower().split()
    if not pred_tokens or not gt_tokens:
        return float(pred_tokens == gt_tokens)
    overlap = sum((Counter(pred_tokens) & Counter(gt_tokens)).values())
    if overlap == 0:
        return 0.0
    precision, recall = overlap / len(pred_tokens), overlap / len(gt_tokens)
    return 2 * precision * recall / (precision + recall)


# ----------------------------------------------------------------------------------------- response styles

_OS_MARKERS = ("<|im_start|>assistant<|recipient|>os", "<|recipient|>os", "assistantos")
_PLAN_CHANNELS = ("<|im_start|>assistant<|recipient|>all", "<|recipient|>all", "assistantall")
_END_TOKENS = ("<|im_end|>", "<|endoftext|>", "<|diff_marker|>")


def _strip_end_tokens(text: str) -> str:
    text = text.strip()
    while text.endswith(_END_TOKENS):
        text = text[: -len(next(token for token in _END_TOKENS if text.endswith(token)))].strip()
    return text


def _is_plan(plan: str) -> bool:
    """Aguvis plan: "Action: ..." (l1), "Thought: ...\\nAction: ..." (l2), or "Observation: ...\\n" before (l3)."""
    for channel in _PLAN_CHANNELS:
        if plan.startswith(channel):
            plan = plan[len(channel) :].lstrip()
    if plan.startswith("all\n"):
        plan = plan[len("all\n") :].lstrip()
    action_at = plan.rfind("Action:")
    if action_at < 0 or not plan[action_at + len("Action:") :].strip():
        return False
    if action_at == 0:
        return True
    before = plan[:action_at]
    return (
        plan.startswith(("Thought:", "Observation:"))
        and before.rstrip(" \t").endswith("\n")
        and bool(before.split(":", 1)[1].strip())
    )


def _aguvis_style_action(text: str, **parse_kwargs: Any) -> Action | None:
    found = [(text.rfind(m) + len(m), len(m), m) for m in _OS_MARKERS if m in text]
    if not found:
        return None
    end, _, marker = max(found)
    plan, code = _strip_end_tokens(text[: end - len(marker)]), _strip_end_tokens(text[end:])
    return parse_action(code, "aguvis", **parse_kwargs) if _is_plan(plan) else None


def _think_answer_style_action(text: str, **parse_kwargs: Any) -> Action | None:
    text = _strip_end_tokens(text)
    if not text.startswith("<think>") or any(text.count(tag) != 1 for tag in ("</think>", "<answer>", "</answer>")):
        return None
    think_end = text.find("</think>")
    if text.count("<think>") != 1 or not text[len("<think>") : think_end].strip():
        return None
    rest = text[think_end + len("</think>") :].strip()
    if not (rest.startswith("<answer>") and rest.endswith("</answer>")):
        return None
    return parse_action(rest[len("<answer>") : -len("</answer>")], "auto", **parse_kwargs)


def _mobile_use_style_action(text: str, **parse_kwargs: Any) -> Action | None:
    text = _strip_end_tokens(text)
    action_at, call_at = text.find("\nAction:"), text.find("<tool_call>")
    if not text.startswith("Thought:") or action_at < 0 or call_at < action_at or not text.endswith("</tool_call>"):
        return None
    if text.count("<tool_call>") != 1 or text.count("</tool_call>") != 1:
        return None
    if not text[len("Thought:") : action_at].strip() or not text[action_at + len("\nAction:") : call_at].strip():
        return None
    return parse_action(text[call_at:], "mobile_use", **parse_kwargs)


_STYLE_CHECKS = {
    "aguvis": _aguvis_style_action,
    "think_answer": _think_answer_style_action,
    "mobile_use": _mobile_use_style_action,
}


def styled_action(
    completion: Any, prompt_style: str = "aguvis", *, coordinates: str | None = None, image_size: Any = None
) -> Action | None:
    """The action of a completion written exactly in ``prompt_style``, or None when the style is wrong or the
    action does not parse. Never raises."""
    try:
        text = completion_text(completion)
        check = _STYLE_CHECKS.get(prompt_style)
        if text is None or check is None:
            return None
        return check(text, coordinates=coordinates, image_size=image_size)
    except Exception:  # "never raises"
        return None


# ------------------------------------------------------------------------------------------- row plumbing


def _row_value(column: Any, index: int, single: Callable[[Any], bool]) -> Any:
    """Row ``index`` of a per-row column, or the value itself when it is one value for every row."""
    if column is None or single(column):
        return column
    if isinstance(column, (list, tuple)) and index < len(column):
        return column[index]
    return None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_single_pair(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and bool(value) and _is_number(value[0])


def _row_bbox(bbox: Any, index: int) -> tuple[float, float, float, float] | None:
    box = _row_value(bbox, index, _is_single_pair)
    if box is None:
        return None
    try:
        aitw.bbox_to_annotation(box)
    except ValueError:
        return None
    return tuple(float(v) for v in box)  # type: ignore[return-value]


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
    if not _is_number(value) or not math.isfinite(value):
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


def accuracy_reward(
    completions=None,
    solution=None,
    bbox=None,
    *,
    coordinates=None,
    screen_size=None,
    prompt_style="aguvis",
    type_weight: float = 0.5,
    argument_weight: float = 0.5,
    **kwargs,
) -> list[float | None]:
    """``type_weight`` for the right action type + ``argument_weight`` for exactly the right arguments
    (``score_pair``'s type_match and param_match). Example: gt ``mobile.back()``, pred ``mobile.back()`` -> 1.0;
    gt click (0.5, 0.5), pred click (0.6, 0.5) -> 0.5."""

    def scorer(pred: Action | None, gt: Action, box: Any, tolerance: float) -> float:
        pair = score_pair(pred, gt, box, tolerance=tolerance)
        return type_weight * pair["type_match"] + argument_weight * pair["param_match"]

    return _score(_rows(completions, solution, bbox, coordinates, screen_size), scorer, missing=0.0)


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


def action_type_reward(
    completions=None, solution=None, bbox=None, *, coordinates=None, screen_size=None, prompt_style="aguvis", **kwargs
) -> list[float | None]:
    """1.0 when the predicted canonical action type equals the ground truth's (``score_pair`` type_match).
    Example: gt click, pred long_press -> 0.0."""
    rows = _rows(completions, solution, bbox, coordinates, screen_size)
    return _score(
        rows,
        lambda pred, gt, box, tolerance: float(score_pair(pred, gt, box, tolerance=tolerance)["type_match"]),
        missing=0.0,
    )


def action_match_reward(
    completions=None, solution=None, bbox=None, *, coordinates=None, screen_size=None, prompt_style="aguvis", **kwargs
) -> list[float | None]:
    """1.0 when the step succeeds by the AITW rules (``score_pair`` step_success: taps within 0.14 or in the
    enlarged bbox, swipes on the same axis, type ids equal, plus the text match for a type action).
    Example: gt click (0.5, 0.5), pred click (0.6, 0.5) -> 1.0 (distance 0.1 <= 0.14)."""
    rows = _rows(completions, solution, bbox, coordinates, screen_size)
    return _score(
        rows,
        lambda pred, gt, box, tolerance: float(score_pair(pred, gt, box, tolerance=tolerance)["step_success"]),
        missing=0.0,
    )


def click_distance_reward(
    completions=None,
    solution=None,
    bbox=None,
    *,
    coordinates=None,
    screen_size=None,
    prompt_style="aguvis",
    threshold: float = 0.04,
    cutoff: float = 0.3,
    **kwargs,
) -> list[float | None]:
    """Dense point reward, ``click_distance_score``: 1 within ``threshold``, linear to 0 at ``cutoff``
    (normalized Euclidean distance); None when the ground truth has no point. Example: d = 0.17 -> 0.5."""
    rows = _rows(completions, solution, bbox, coordinates, screen_size)
    return _score(
        rows, lambda pred, gt, box, tolerance: click_distance_score(pred, gt, threshold, cutoff), missing=None
    )


def click_gaussian_reward(
    completions=None,
    solution=None,
    bbox=None,
    *,
    coordinates=None,
    screen_size=None,
    prompt_style="aguvis",
    sigma: float = 0.05,
    **kwargs,
) -> list[float | None]:
    """Gaussian point reward (GUI-G2), ``click_gaussian_score``: exp(-((dx/sx)^2 + (dy/sy)^2)/2), s = half the
    bbox size or ``sigma``; None when the ground truth has no point. Example: dx = sigma, dy = 0 -> 0.6065."""
    rows = _rows(completions, solution, bbox, coordinates, screen_size)
    return _score(rows, lambda pred, gt, box, tolerance: click_gaussian_score(pred, gt, box, sigma), missing=None)


def text_f1_reward(
    completions=None, solution=None, bbox=None, *, coordinates=None, screen_size=None, prompt_style="aguvis", **kwargs
) -> list[float | None]:
    """Token F1 of the text for type / answer / open_app ground truths (``text_f1_score``); None for other
    ground truths. Example: pred "new york city", gt "new york" -> 0.8."""
    rows = _rows(completions, solution, bbox, coordinates, screen_size)
    return _score(rows, lambda pred, gt, box, tolerance: text_f1_score(pred, gt), missing=None)


# ----------------------------------------------------------- R1-V-GUI-Agent's own rules, reproduced exactly

# The original reads a model output on its own terms, not with r1_gui.actions: the text after the first
# "assistantos" (the whole output when there is none), then the first match of its call regex, line by line (no
# DOTALL). Its regex needs a non-empty argument list; the fixed one lets the argument group be empty.
ORIGINAL_MARKER = "assistantos"
_ORIGINAL_CALL = re.compile(r"(.+?)\((.+?)\)")
_FIXED_CALL = re.compile(r"(.+?)\((.*?)\)")
_ORIGINAL_FORMAT = re.compile(r"content:\s*.*?Thought:.*?Action:.*?assistantos")
_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)


def original_call(text: Any, *, empty_arguments: bool = False) -> tuple[str, str] | None:
    """(name text, argument text) of the first call in a model output, read exactly as R1-V-GUI-Agent's
    eval/test_aitw.py reads it, or None: the text after the first ``assistantos`` (or all of it), then the first
    match of ``(.+?)\\((.+?)\\)``, both groups as they are (no stripping). ``empty_arguments=True`` is the
    argument-less fix: the argument group may be empty, ``(.+?)\\((.*?)\\)``. This is deliberately not
    ``r1_gui.actions.extract_action``: it reproduces the original's reading, quirks included.

    Examples: ``"Action: tap\\nassistantos\\npyautogui.click( x=0.1 )"`` -> ("pyautogui.click", " x=0.1 ");
    ``"mobile.back()"`` -> None, or ("mobile.back", "") with ``empty_arguments``;
    ``"pyautogui.write(message='smile :) ok ')"`` -> ("pyautogui.write", "message='smile :") (the first ")").
    """
    if not isinstance(text, str):
        return None
    _, marker, after = text.partition(ORIGINAL_MARKER)
    match = (_FIXED_CALL if empty_arguments else _ORIGINAL_CALL).search(after if marker else text)
    return None if match is None else (match.group(1), match.group(2))


def answer_content(text: Any, *, whole_without_tags: bool = True) -> str | None:
    """The stripped content of the first ``<answer>...</answer>`` of ``text``; without the tags the whole stripped
    text (a ``solution`` written bare), or None when ``whole_without_tags`` is False.
    Example: ``answer_content("<answer>mobile.back()</answer>") == "mobile.back()"``."""
    if not isinstance(text, str):
        return None
    match = _ANSWER.search(text)
    if match is None:
        return text.strip() if whole_without_tags else None
    return match.group(1).strip()


def r1v_accuracy_reward(
    completions=None, solution=None, *, coordinates=None, screen_size=None, prompt_style="aguvis", **kwargs
) -> list[float | None]:
    """R1-V-GUI-Agent's accuracy reward, bugs included: 0.5 when the call's name text equals the ground truth's
    + 0.5 when its argument text does, both read with ``original_call`` (text, not values); 0 when either side has
    no call, so argument-less actions (``mobile.back()``) always score 0. ``accuracy`` is the fixed version.
    Example: gt ``pyautogui.click(x=0.5, y=0.5)``, pred ``pyautogui.click(x=0.50, y=0.5)`` -> 0.5."""
    if not isinstance(completions, (list, tuple)):
        return []
    scores: list[float | None] = []
    for index, completion in enumerate(completions):
        try:
            truth = answer_content(_row_value(solution, index, lambda v: isinstance(v, str)))
            pred, gt = original_call(completion_text(completion)), original_call(truth)
            scores.append(0.0 if pred is None or gt is None else 0.5 * (pred[0] == gt[0]) + 0.5 * (pred[1] == gt[1]))
        except Exception:  # "never raises"
            scores.append(0.0)
    return scores


def r1v_format_reward(
    completions=None, *, coordinates=None, screen_size=None, prompt_style="aguvis", **kwargs
) -> list[float | None]:
    """R1-V-GUI-Agent's format reward, bug included: 0.5 when ``re.match`` of
    ``content:\\s*.*?Thought:.*?Action:.*?assistantos`` (no flags) finds the output's start, else 0. Decoded
    Aguvis output never starts with "content:", so in the original run it was always 0. ``format`` is r1_gui's.
    Example: "Thought: t\\nAction: a\\nassistantos\\nmobile.back()" -> 0.0."""
    if not isinstance(completions, (list, tuple)):
        return []
    scores: list[float | None] = []
    for completion in completions:
        text = completion_text(completion)
        scores.append(0.5 if isinstance(text, str) and _ORIGINAL_FORMAT.match(text) else 0.0)
    return scores


# ---------------------------------------------------------------------- GUI-R1's own rules, reproduced exactly

GUIR1_CLICK_PIXELS = 140  # a click hits when its squared pixel distance is below 140 ** 2
GUIR1_TEXT_F1 = 0.5  # type / select / scroll need a text F1 of at least this
GUIR1_TEXT_NAMES = ("type", "select", "scroll")  # the names whose text GUI-R1 compares
GUIR1_NEEDS_TEXT = ("type", "select", "open_app")  # the names whose input_text must not be the placeholder
_GUIR1_OUTER = re.compile(r"<think>.*?</think>\s*<answer>.*?</answer>", re.DOTALL)
_PIXEL_DIGITS = 6  # pixel positions are rounded to 1e-6 px so that the trip through [0, 1] cannot cross a boundary


def guir1_text_f1(predicted: str, truth: str) -> float:
    """GUI-R1's text F1: "[" and "]" removed, lowercase whitespace tokens as *sets*; two one-token texts of which one
    contains the other score 1. Unlike ``text_f1_score``: sets not counts, brackets dropped, containment counts, and
    two empty texts score 0. Example: "sign in", "sign-in page" -> 0.0; "york", "new york" -> 2/3."""
    predicted_tokens = set(predicted.replace("[", "").replace("]", "").lower().split())
    truth_tokens = set(truth.replace("[", "").replace("]", "").lower().split())
    if len(predicted_tokens) == 1 and len(truth_tokens) == 1:
        (predicted_token,), (truth_token,) = predicted_tokens, truth_tokens
        if predicted_token in truth_token or truth_token in predicted_token:
            return 1.0
    common = len(predicted_tokens & truth_tokens)
    precision = common / len(predicted_tokens) if predicted_tokens else 0.0
    recall = common / len(truth_tokens) if truth_tokens else 0.0
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


def guir1_text(action: Action) -> str:
    """The text GUI-R1 compares for an action: a scroll's direction, else its text ("" when none)."""
    return action.direction if action.type == "scroll" else action.text or ""


def _pixels(x: float, y: float, size: Sequence[float]) -> tuple[float, float]:
    return round(x * float(size[0]), _PIXEL_DIGITS), round(y * float(size[1]), _PIXEL_DIGITS)


def guir1_accuracy_score(
    pred: Action | None, gt: Action, bbox: Sequence[float] | None, screen_size: Sequence[float] | None
) -> float | None:
    """GUI-R1's accuracy rule on parsed actions: 0 unless the GUI-R1 names agree (case-insensitive); then a click
    needs its point strictly inside ``bbox`` [x1, y1, x2, y2] when there is one, else less than 140 pixels from
    the ground-truth point (pixels of ``screen_size``, the resized screenshot); type / select / scroll need
    ``guir1_text_f1`` >= 0.5 (a scroll's text is its direction); any other name scores 1. None for a click ground
    truth without a screen size (140 pixels of nothing). Example: gt open_app "Clock", pred open_app "Maps" -> 1.0.
    """
    gt_name = guir1_name(gt)
    if gt_name == "click" and screen_size is None:
        return None
    if pred is None or gt_name is None or (guir1_name(pred) or "").lower() != gt_name.lower():
        return 0.0
    if gt_name == "click":
        px, py = _pixels(pred.x, pred.y, screen_size)
        if bbox is not None:
            x1, y1 = _pixels(bbox[0], bbox[1], screen_size)
            x2, y2 = _pixels(bbox[2], bbox[3], screen_size)
            return float(x1 < px < x2 and y1 < py < y2)
        gx, gy = _pixels(gt.x, gt.y, screen_size)
        return float((px - gx) ** 2 + (py - gy) ** 2 < GUIR1_CLICK_PIXELS**2)
    if gt_name in GUIR1_TEXT_NAMES:
        return float(guir1_text_f1(guir1_text(pred), guir1_text(gt)) >= GUIR1_TEXT_F1)
    return 1.0


def guir1_accuracy_reward(
    completions=None, solution=None, bbox=None, *, coordinates=None, screen_size=None, prompt_style="aguvis", **kwargs
) -> list[float | None]:
    """GUI-R1's accuracy reward (``guir1_accuracy_score``) on the content of the completion's first
    ``<answer>...</answer>``, read with r1_gui's GUI-R1 parser (``parse_action(..., "guir1")``, points in
    ``coordinates``, pixels of ``screen_size`` by default) instead of GUI-R1's regexes; the ground truth is the
    row's ``solution`` and ``bbox``. Example: gt click (0.5, 0.5) on 448x1036, pred
    "<answer>[{'action': 'click', 'point': [300, 518], 'input_text': 'no input text'}]</answer>" -> 1.0 (76 px).
    """
    if not isinstance(completions, (list, tuple)):
        return []
    scores: list[float | None] = []
    for index, completion in enumerate(completions):
        try:
            gt = extract_action(_row_value(solution, index, lambda v: isinstance(v, str)), coordinates="normalized")
            size = _row_value(screen_size, index, _is_single_pair)
            answer = answer_content(completion_text(completion), whole_without_tags=False)
            pred = None if answer is None else parse_action(answer, "guir1", coordinates=coordinates, image_size=size)
            score = 0.0 if gt is None else guir1_accuracy_score(pred, gt, _row_bbox(bbox, index), size)
            scores.append(_clean(score, 0.0))
        except Exception:  # "never raises"
            scores.append(0.0)
    return scores


def _guir1_entry_ok(entry: Any) -> bool:
    """GUI-R1's check of one answer entry: a dict with action (a string), point (its first two items ints),
    input_text (a string, not the placeholder for type / select / open_app, a direction for scroll)."""
    if not isinstance(entry, dict) or any(key not in entry for key in ("action", "point", "input_text")):
        return False
    name, point, text = entry["action"], entry["point"], entry["input_text"]
    try:
        first, second = point[0], point[1]
    except Exception:  # GUI-R1 indexes whatever it got; what cannot be indexed fails its check
        return False
    if not isinstance(name, str) or not (isinstance(first, int) and isinstance(second, int)):
        return False
    if not isinstance(text, str) or (name in GUIR1_NEEDS_TEXT and text == NO_TEXT):
        return False
    return name != "scroll" or text in ("left", "right", "up", "down")


def guir1_format_reward(
    completions=None, *, coordinates=None, screen_size=None, prompt_style="aguvis", **kwargs
) -> list[float | None]:
    """GUI-R1's format reward: 1.0 when the whole completion is ``<think>...</think>`` then ``<answer>...</answer>``
    (whitespace between them only) and the first answer's content, read as a literal by r1_gui's reader
    (``read_literal``: JSON or ``ast.literal_eval``, never ``eval``), is a list (empty included) whose every entry
    passes ``_guir1_entry_ok``; else 0.0. Example:
    "<think>t</think><answer>[{'action': 'type', 'point': [-100, -100], 'input_text': 'no input text'}]</answer>"
    -> 0.0 (a type needs real text)."""
    if not isinstance(completions, (list, tuple)):
        return []
    scores: list[float | None] = []
    for completion in completions:
        try:
            text = completion_text(completion)
            ok = isinstance(text, str) and _GUIR1_OUTER.fullmatch(text) is not None
            entries = read_literal(answer_content(text)) if ok else None
            ok = ok and isinstance(entries, list) and all(_guir1_entry_ok(entry) for entry in entries)
            scores.append(1.0 if ok else 0.0)
        except Exception:  # "never raises"; an answer that is not a literal fails GUI-R1's check too
            scores.append(0.0)
    return scores


REWARD_FUNCS: dict[str, Callable[..., list[float | None]]] = {
    "accuracy": accuracy_reward,
    "format": format_reward,
    "action_type": action_type_reward,
    "action_match": action_match_reward,
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
        if p.kind is inspect.Parameter.KEYWORD_ONLY and p.name not in BOUND_KWARGS
    }


def _check_values(name: str, params: dict[str, Any]) -> None:
    for key, value in params.items():
        if not _is_number(value) or not math.isfinite(value) or value < 0:
            raise ValueError(f"reward {name!r}: parameter {key!r} must be a finite number >= 0, got {value!r}")
    if name in ("click_distance", "episode_click_distance") and not params["threshold"] < params["cutoff"]:
        raise ValueError(f"reward {name!r}: threshold must be below cutoff, got {params}")
    if name in ("click_gaussian", "episode_click_gaussian") and params["sigma"] <= 0:
        raise ValueError(f"reward {name!r}: sigma must be > 0, got {params['sigma']}")


class BoundReward:
    """A registry reward with its keywords bound, named by its registry key. Not a functools.partial: trl 1.16
    names a partial after the function it wraps (``accuracy_reward``), this one logs as ``rewards/accuracy/...``."""

    def __init__(self, name: str, func: Callable[..., list[float | None]], **kwargs: Any):
        self.__name__ = name
        self.func = func
        self.kwargs = kwargs

    def __call__(self, *args: Any, **kwargs: Any) -> list[float | None]:
        return self.func(*args, **{**self.kwargs, **kwargs})

    def __repr__(self) -> str:
        return f"BoundReward({self.__name__!r}, {self.kwargs})"


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
