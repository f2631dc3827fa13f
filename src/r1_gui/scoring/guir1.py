"""GUI-R1's own scoring rules (its verl/utils/reward_score/r1gui.py and eval scripts), reproduced exactly.

``guir1_accuracy_score`` and ``guir1_format_score`` return what r1gui.py's r1gui_accuracy_reward and
r1gui_format_reward return for the same completion and ground truth, on every input (tests/test_peer_rewards.py
holds values produced by running them); ``guir1_text_f1`` is its text F1, which its eval scripts use too
(``r1_gui.evaluation.peers.guir1_eval``). The completion is read as GUI-R1 reads it (``r1_gui.actions.completion``:
``guir1_prediction``, ``guir1_answer``), in linear time. The one departure: the format's ``eval`` of the answer is
``python_value``, which never runs model output (its module docstring lists what it declines to value; those
answers score as if ``eval`` had raised).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from r1_gui.actions import Action
from r1_gui.actions.completion import guir1_answer, guir1_prediction
from r1_gui.actions.guir1 import NO_TEXT
from r1_gui.actions.python_literal import python_value

GUIR1_CLICK_PIXELS = 140  # a click hits when its squared pixel distance is below 140 ** 2
GUIR1_TEXT_F1 = 0.5  # type / select / scroll need a text F1 of at least this
GUIR1_TEXT_NAMES = ("type", "select", "scroll")  # the names whose text GUI-R1 compares
GUIR1_NEEDS_TEXT = ("type", "select", "open_app")  # the names whose input_text must not be the placeholder
GUIR1_DIRECTIONS = ("left", "right", "up", "down")  # a scroll's input_text, lowercase only


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


def guir1_accuracy_score(completion: Any, ground_truth: Mapping[str, Any]) -> float:
    """GUI-R1's accuracy reward on a completion and its ground truth {"action", "gt_bbox", "input_text"}: 0 unless
    the action read from the answer (``guir1_prediction``) equals the ground truth's, both lowercased; then a click
    hits when the point is strictly inside a 4-value gt_bbox, or its squared distance to a 2-value one is below
    140 ** 2 (any other length: 0); type / select / scroll need ``guir1_text_f1`` >= 0.5 of the input texts; any
    other action scores 1. Anything that raises there scores 0. Example: gt {"action": "click", "gt_bbox": [224, 518],
    ...}, answer point [300, 518] -> 1.0 (76 px); the point missing -> read as (0, 0) -> 0.0."""
    try:
        gt_action = ground_truth["action"].lower()
        gt_bbox, gt_input_text = ground_truth["gt_bbox"], ground_truth["input_text"]
        pred_action, pred_input_text, pred_point = guir1_prediction(completion)
        if pred_action.lower() != gt_action:
            return 0.0
        if gt_action == "click":
            x, y = pred_point[0], pred_point[1]
            if len(gt_bbox) == 2:
                return float((x - gt_bbox[0]) ** 2 + (y - gt_bbox[1]) ** 2 < GUIR1_CLICK_PIXELS**2)
            if len(gt_bbox) == 4:
                return float(gt_bbox[0] < x < gt_bbox[2] and gt_bbox[1] < y < gt_bbox[3])
            return 0.0
        if gt_action in GUIR1_TEXT_NAMES:
            return float(guir1_text_f1(pred_input_text, gt_input_text) >= GUIR1_TEXT_F1)
        return 1.0
    except Exception:  # as GUI-R1's reward: whatever raises scores 0
        return 0.0


def _entry_ok(entry: Any) -> bool:
    """GUI-R1's check of one answer entry, in its order: a dict holding action (a string), point (its first two
    items ints, bools included), input_text (a string, not "no input text" for type / select / open_app, a
    lowercase direction for scroll)."""
    if not isinstance(entry, dict) or any(key not in entry for key in ("action", "point", "input_text")):
        return False
    name, point, text = entry["action"], entry["point"], entry["input_text"]
    if not isinstance(name, str) or not (isinstance(point[0], int) and isinstance(point[1], int)):
        return False
    if not isinstance(text, str) or (name in GUIR1_NEEDS_TEXT and text == NO_TEXT):
        return False
    return name != "scroll" or text in GUIR1_DIRECTIONS


def guir1_format_score(completion: Any) -> float:
    """GUI-R1's format reward: 1.0 when ``guir1_answer`` reads the completion (the whole text is
    ``<think>...</think>``, whitespace, ``<answer>...</answer>``) and the answer's value (``python_value``, what
    ``eval`` returns) is a list, empty or of entries that all pass GUI-R1's checks; else 0.0.
    Example: "<think></think><answer>[{'action': 'fly', 'point': [1, 2], 'input_text': 'x'}]</answer>" -> 1.0 (any
    name passes); the same with 'point': [1.0, 2] -> 0.0."""
    try:
        answer = guir1_answer(completion)
        if answer is None:
            return 0.0
        entries = python_value(answer)
        return float(isinstance(entries, list) and all(_entry_ok(entry) for entry in entries))
    except Exception:  # eval raising, or a check that raises (an unindexable point): 0 as in GUI-R1
        return 0.0
