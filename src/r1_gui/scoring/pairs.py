"""The comparison of a predicted action with its ground truth: the per-pair scores that the rewards
(``r1_gui.rewards``) and the evaluation metrics (``r1_gui.evaluation.metrics``) both take, so that a reward and its
metric can never disagree.

``REWARD_METRICS`` names each reward whose per-sample value *is* an evaluation metric's per-sample score (the
metric is its mean over samples); tests/test_eval_metrics.py checks every pair on a table of cases.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from r1_gui.actions import COORDINATE_TOLERANCE, TEXT_TYPES, Action, read_bbox, same_arguments
from r1_gui.scoring import aitw

# reward name (``r1_gui.rewards.REWARD_FUNCS``) -> metric name (``r1_gui.evaluation.metrics.METRICS``) it equals,
# sample by sample: the reward is 1.0 exactly where the metric's score is True. ``accuracy`` is not here: it is
# type_weight * type_match + argument_weight * param_match, a mix of two metrics.
REWARD_METRICS = {
    "action_type": "type_accuracy",
    "step_success": "step_success",
}


def score_pair(
    pred: Action | None, gt: Action, bbox: Sequence[float] | None = None, *, tolerance: float = COORDINATE_TOLERANCE
) -> dict[str, bool]:
    """The step metrics of one prediction against its ground truth, shared by rewards and evaluation:

    - ``type_match``: same canonical action type;
    - ``param_match``: exactly the right arguments (``same_arguments``; argument-less actions are exact), with
      coordinates equal within ``tolerance`` (see ``coordinate_tolerance``: the data's printed precision, or half
      a unit of the model's grid or pixel when that is coarser);
    - ``action_match``: the AITW rules (``r1_gui.scoring.aitw.actions_match``, with ``bbox`` [x1, y1, x2, y2] as the box);
    - ``step_success``: ``action_match`` plus the AITW text match for a type action (``r1_gui.scoring.aitw.step_success``).

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


def click_hit(pred: Action | None, box: Sequence[float] | None) -> bool | None:
    """Whether ``pred`` is a click whose point lies in ``box`` [x1, y1, x2, y2] (normalized, edges inclusive); None
    when there is no box to hit (None, or not a box ``read_bbox`` accepts); False for no action or another type.
    Example: click (0.3, 0.45) in box (0.25, 0.4, 0.5, 0.5) -> True; a double click there -> False."""
    bounds = read_bbox(box) if box is not None else None
    if bounds is None:
        return None
    if pred is None or pred.type != "click":
        return False
    x1, y1, x2, y2 = bounds
    return x1 <= pred.x <= x2 and y1 <= pred.y <= y2


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
