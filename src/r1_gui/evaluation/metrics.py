"""Where every evaluation metric is computed: the step metrics of AITW evaluation (eval/test_aitw.py) and the
episode metrics (eval/test_phone.py, `episode_metrics`, each rate with its 95% interval over episodes). Pure
functions, no I/O, no torch.

Every per-sample score comes from the functions the training rewards call (``r1_gui.scoring.score_pair``, which
calls ``r1_gui.actions.same_arguments``, ``r1_gui.scoring.aitw.actions_match`` and ``r1_gui.scoring.aitw.step_success``),
and the prediction is read with the rewards' parser (``r1_gui.actions.extract_action``), so a reward and a metric can
never disagree (``r1_gui.scoring.REWARD_METRICS`` names the rewards that equal a metric). The one metric of its own
is ``paper_param_match``, the original R1-V-GUI-Agent comparison kept for comparing with its published table: it
reads outputs as the original did (``r1_gui.actions.original_call``).

    prediction, scores = score_output(output, ground_truth, solution=row["solution"], bbox=row["bbox"])
    metrics = aggregate(records)  # records: predictions.jsonl lines (see ``r1_gui.evaluation.run.predictions_file``)
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from r1_gui.actions import ACTION_TYPES, Action, extract_action, format_action, original_call
from r1_gui.actions.completion import original_solution_call
from r1_gui.evaluation.stats.intervals import CI_SUFFIX, bootstrap_ratio, wilson
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


# -- episodes (eval/test_phone.py) ------------------------------------------------------------------------------

REPEAT_MARK = "#"


def episode_instance(record: dict, index: int) -> str:
    """The episode a record is a repeat of (its id without the repeat); records without an id stand alone."""
    identifier = record.get("id")
    return str(identifier).split(REPEAT_MARK, 1)[0] if identifier is not None else f"{REPEAT_MARK}{index}"


def episode_units(rows: Sequence[dict]) -> dict[str, dict]:
    """Per episode (its repeats together, by `episode_instance`): plays, wins, steps of the wins, turns, parsed
    turns, matched turns of the turns an expert judged, turns with a target box and the clicks that hit it, progress
    and the plays that report it: the units of the episode metrics' intervals, and of `stats.compare`'s pairs."""
    units: dict[str, dict] = {}
    for index, row in enumerate(rows):
        unit = units.setdefault(episode_instance(row, index), dict.fromkeys(_UNIT_KEYS, 0.0) | {"outcomes": []})
        judged = [turn["matched"] for turn in row["turns"] if turn["matched"] is not None]
        aimed = [turn["click_hit"] for turn in row["turns"] if turn.get("click_hit") is not None]
        unit["plays"] += 1
        unit["wins"] += bool(row["success"])
        unit["win_steps"] += row["steps"] if row["success"] else 0
        unit["turns"] += len(row["turns"])
        unit["parsed"] += sum(bool(turn["parsed"]) for turn in row["turns"])
        unit["judged"] += len(judged)
        unit["matched"] += sum(bool(matched) for matched in judged)
        unit["aimed"] += len(aimed)
        unit["hits"] += sum(bool(hit) for hit in aimed)
        unit["progress"] += row["progress"] or 0.0
        unit["progressed"] += row["progress"] is not None
        unit["outcomes"].append(bool(row["success"]))
    return units


_UNIT_KEYS = (
    "plays", "wins", "win_steps", "turns", "parsed", "judged", "matched", "aimed", "hits", "progress", "progressed",
)  # fmt: skip


def _column(units: list[dict], key: str) -> list[float]:
    return [unit[key] for unit in units]


def _repeat_numbers(rows: Sequence[dict], units: list[dict]) -> dict:
    """Across repeats: each pass's success rate, their mean and standard deviation, and the share of episodes
    (played more than once) whose outcome differs between its repeats."""

    passes = []
    for repeat in sorted({row.get("repeat", 0) for row in rows}):
        played = [row for row in rows if row.get("repeat", 0) == repeat]
        wins = sum(bool(row["success"]) for row in played)
        passes.append({"repeat": repeat, "episodes": len(played), "success_rate": wins / len(played),
                       "success_rate" + CI_SUFFIX: wilson(wins, len(played))})  # fmt: skip
    rates = [numbers["success_rate"] for numbers in passes]
    repeated = [unit for unit in units if len(unit["outcomes"]) > 1]
    flipped = sum(len(set(unit["outcomes"])) > 1 for unit in repeated)
    return {
        "repeats": len(passes),
        "success_rate_mean": statistics.fmean(rates),
        "success_rate_std": statistics.stdev(rates) if len(rates) > 1 else None,
        "flip_share": flipped / len(repeated) if repeated else None,
        "flip_share" + CI_SUFFIX: wilson(flipped, len(repeated)),
        "per_repeat": passes,
    }


def episode_metrics(records: Sequence[dict]) -> dict:
    """success_rate (overall and per task), mean steps to success, mean turns (per episode, won or lost), turn parse
    rate, env_failures; where the
    environment reports them, step_success (turns matching a recorded step) and episode_progress; click_hit_rate:
    of the turns whose screen has a target box (`info["target_box"]`), the share whose action is a click inside it
    (None where no turn has one). Each rate and
    mean has its 95% interval beside it (KEY_ci95) over episodes, the units: Wilson for success_rate when each
    episode was played once, else a bootstrap over episodes (their repeats together), as for the numbers over
    turns (turns of one episode are not independent) and the means. With repeats (records of several passes):
    ``per_repeat`` success rates, success_rate_mean, success_rate_std (sample standard deviation over passes) and
    flip_share (episodes whose outcome differs between repeats, with its Wilson interval)."""

    def summary(rows: Sequence[dict]) -> dict:
        units = list(episode_units(rows).values())
        wins = [row for row in rows if row["success"]]
        turns = [turn for row in rows for turn in row["turns"]]
        once = all(unit["plays"] == 1 for unit in units)
        result = {
            "episodes": len(rows),
            "success_rate": len(wins) / len(rows) if rows else 0.0,
            "success_rate" + CI_SUFFIX: wilson(len(wins), len(rows))
            if once
            else bootstrap_ratio(_column(units, "wins"), _column(units, "plays")),
            "mean_steps_to_success": sum(row["steps"] for row in wins) / len(wins) if wins else None,
            "mean_steps_to_success" + CI_SUFFIX: bootstrap_ratio(_column(units, "win_steps"), _column(units, "wins")),
            "mean_turns": len(turns) / len(rows) if rows else None,  # the actions an episode took, won or lost
            "mean_turns" + CI_SUFFIX: bootstrap_ratio(_column(units, "turns"), _column(units, "plays")),
            "turn_parse_rate": sum(turn["parsed"] for turn in turns) / len(turns) if turns else 0.0,
            "turn_parse_rate" + CI_SUFFIX: bootstrap_ratio(_column(units, "parsed"), _column(units, "turns")),
            "env_failures": sum(row.get("env_failure") is not None for row in rows),
        }
        matched = [turn["matched"] for turn in turns if turn["matched"] is not None]
        if matched:
            result["step_success"] = sum(matched) / len(matched)
            result["step_success" + CI_SUFFIX] = bootstrap_ratio(_column(units, "matched"), _column(units, "judged"))
        aimed = [turn["click_hit"] for turn in turns if turn.get("click_hit") is not None]
        result["click_hit_rate"] = sum(aimed) / len(aimed) if aimed else None
        result["click_hit_rate" + CI_SUFFIX] = bootstrap_ratio(_column(units, "hits"), _column(units, "aimed"))
        if any(row["progress"] is not None for row in rows):
            result["episode_progress"] = sum(row["progress"] or 0.0 for row in rows) / len(rows)
            result["episode_progress" + CI_SUFFIX] = bootstrap_ratio(
                _column(units, "progress"), _column(units, "plays")
            )
        if len({row.get("repeat", 0) for row in rows}) > 1:
            result |= _repeat_numbers(rows, units)
        return result

    tasks = sorted({row["task"] for row in records})
    return {
        **summary(records),
        "per_task": {task: summary([r for r in records if r["task"] == task]) for task in tasks},
    }
