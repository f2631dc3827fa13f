"""GUI-R1's own comparison of a prediction with its ground truth (its accuracy reward and its evaluation scripts'
text F1), reproduced exactly on parsed actions. ``r1_gui.rewards`` (``guir1_accuracy``) and
``r1_gui.evaluation.guir1_eval`` (the numbers GUI-R1's scripts print) both call it.
"""

from __future__ import annotations

from collections.abc import Sequence

from r1_gui.actions import Action
from r1_gui.actions.guir1 import guir1_name

GUIR1_CLICK_PIXELS = 140  # a click hits when its squared pixel distance is below 140 ** 2
GUIR1_TEXT_F1 = 0.5  # type / select / scroll need a text F1 of at least this
GUIR1_TEXT_NAMES = ("type", "select", "scroll")  # the names whose text GUI-R1 compares
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
