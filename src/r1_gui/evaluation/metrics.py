"""Step metrics of AITW evaluation: pure functions, no I/O, no torch.

Every per-sample score comes from the functions the training rewards call (``r1_gui.scoring.score_pair``, which
calls ``r1_gui.actions.same_arguments``, ``r1_gui.scoring.aitw.actions_match`` and ``r1_gui.scoring.aitw.step_success``),
and the prediction is read with the rewards' parser (``r1_gui.actions.extract_action``), so a reward and a metric can
never disagree (``r1_gui.scoring.REWARD_METRICS`` names the rewards that equal a metric). The one metric of its own
is ``paper_param_match``, the original R1-V-GUI-Agent comparison kept for comparing with its published table: it
reads outputs as the original did (``r1_gui.actions.original_call``).

    prediction, scores = score_output(output, ground_truth, solution=row["solution"], bbox=row["bbox"])
    metrics = aggregate(records)  # records: predictions.jsonl lines (see ``r1_gui.evaluation.predictions_file``)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from r1_gui.actions import ACTION_TYPES, Action, extract_action, format_action, original_call
from r1_gui.actions.completion import original_solution_call
from r1_gui.evaluation.intervals import CI_SUFFIX, wilson
from r1_gui.scoring import score_pair

UNPARSED = "unparsed"  # the predicted "type" of an output without an action (and of a failed sample)

# metric name -> the per-sample score it averages (in this order in metrics.json, the tables and the report)
METRICS = {
    "type_accuracy": "type_match",
    "param_accuracy": "param_match",
    "paper_param_accuracy": "paper_param_match",
    "action_match_accuracy": "action_match",
    "step_success": "step_success",
}
SCORE_NAMES = tuple(METRICS.values())


def paper_param_match(output: str | None, solution: str | None) -> bool:
    """R1-V-GUI-Agent's "exact parameter" comparison, exactly as its eval/test_aitw.py computes ``para``.

    The output is read with ``r1_gui.actions.original_call`` (the text after the *first* ``assistantos``, or the
    whole output without one, stripped; then the first match of ``(.+?)\\((.+?)\\)``), the solution with
    ``original_solution_call`` (its first one-line ``<answer>...</answer>``, else all of it). True when both have
    a call and the two argument texts are equal as they are, whatever the function names: spaces count, the
    arguments end at the first ")" at least one character after the "(", and argument-less calls
    (``mobile.back()``) never match, so a right back or home scores False, as it did there. ``param_accuracy`` is
    the well-defined metric.

    Examples (output, solution -> result):

    - ``pyautogui.click(x=0.5, y=0.3)``, ``<answer>pyautogui.click(x=0.5, y=0.3)</answer>`` -> True
    - ``pyautogui.click( x=0.5, y=0.3 )``, ``pyautogui.click(x=0.5, y=0.3)`` -> False (text as it is)
    - ``mobile.long_press(x=0.5, y=0.3)``, ``pyautogui.click(x=0.5, y=0.3)`` -> True (the name is ignored)
    - ``mobile.back()``, ``mobile.back()`` -> False (no call is found: the original's bug, kept)
    - ``pyautogui.write(message='smile :) no')``, ``pyautogui.write(message='smile :) ok ')`` -> True (both
      read "message='smile :")
    - "I tap it (the blue one).\\npyautogui.click(x=0.5, y=0.3)", ``pyautogui.click(x=0.5, y=0.3)`` -> False (the
      first call is the prose's)
    """
    pred_call, gt_call = original_call(output), original_solution_call(solution)
    return pred_call is not None and gt_call is not None and pred_call[1] == gt_call[1]


def score_output(
    output: str | None,
    ground_truth: Action,
    *,
    solution: str | None = None,
    bbox: Sequence[float] | None = None,
    coordinates: str = "normalized",
    image_size: Sequence[float] | None = None,
) -> tuple[Action | None, dict[str, bool]]:
    """(the predicted action or None, the per-sample scores) of one raw model output.

    The action is read with ``extract_action(output, coordinates=, image_size=)`` exactly as the rewards read it;
    ``image_size`` is the (width, height) of the resized screenshot the model saw ("pixels" coordinates).
    The scores are ``score_pair(pred, ground_truth, bbox)`` (type_match, param_match, action_match,
    step_success) plus ``paper_param_match`` of the raw output against ``solution`` (the dataset's
    "<answer>code</answer>"; the ground truth written as Aguvis code when absent). A None output scores False
    everywhere.
    """
    prediction = extract_action(output, coordinates=coordinates, image_size=image_size) if output else None
    scores = dict(score_pair(prediction, ground_truth, bbox))
    truth = solution if solution else format_action(ground_truth, "aguvis")
    scores["paper_param_match"] = bool(output) and paper_param_match(output, truth)
    return prediction, {name: bool(scores[name]) for name in SCORE_NAMES}


def _rates(records: Sequence[dict]) -> dict[str, Any]:
    count = len(records)
    hits = {"parse_rate": sum(record.get("prediction") is not None for record in records)}
    hits |= {metric: sum(bool(record["scores"][score]) for record in records) for metric, score in METRICS.items()}
    rates: dict[str, Any] = {"num_samples": count}
    for metric, hit_count in hits.items():
        rates[metric] = hit_count / count if count else 0.0
        rates[metric + CI_SUFFIX] = wilson(hit_count, count)
    return rates


def type_order(types: Iterable[str]) -> list[str]:
    """Action types in canonical order (``ACTION_TYPES``), unknown names after them sorted, "unparsed" last."""
    types = set(types)
    known = [name for name in ACTION_TYPES if name in types]
    others = sorted(name for name in types if name not in ACTION_TYPES and name != UNPARSED)
    return known + others + ([UNPARSED] if UNPARSED in types else [])


def aggregate(records: Sequence[dict]) -> dict[str, Any]:
    """The metrics of scored records (predictions.jsonl lines: "ground_truth", "prediction" dicts and "scores").

    Returns num_samples, parse_rate and every metric of ``METRICS`` as fractions in [0, 1], each with its 95%
    Wilson interval over the samples beside it (``KEY_ci95``: [low, high], None without samples); ``num_errors``
    (samples that failed, e.g. a missing image: counted as wrong); ``per_type``, the same numbers for each
    ground-truth action type; and ``confusion_matrix`` {ground-truth type: {predicted type: count}}, every row
    with the same columns: each predicted type seen, then "unparsed" (outputs without an action, failed samples).
    """
    metrics = _rates(records)
    metrics["num_errors"] = sum(bool(record.get("error")) for record in records)
    by_type: dict[str, list[dict]] = {}
    confusion: dict[str, Counter] = {}
    for record in records:
        gt_type = record["ground_truth"]["type"]
        pred_type = (record.get("prediction") or {}).get("type", UNPARSED)
        by_type.setdefault(gt_type, []).append(record)
        confusion.setdefault(gt_type, Counter())[pred_type] += 1
    metrics["per_type"] = {name: _rates(by_type[name]) for name in type_order(by_type)}
    columns = type_order([UNPARSED, *(name for row in confusion.values() for name in row)])
    metrics["confusion_matrix"] = {
        name: {column: confusion[name][column] for column in columns} for name in type_order(confusion)
    }
    return metrics
