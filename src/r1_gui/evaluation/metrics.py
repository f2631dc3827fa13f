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
from dataclasses import dataclass
from typing import Any

from r1_gui.actions import ACTION_TYPES, Action, extract_action, format_action, original_call
from r1_gui.actions.completion import original_solution_call
from r1_gui.evaluation.intervals import CI_SUFFIX, bootstrap_ratio, wilson
from r1_gui.scoring import score_pair

UNPARSED = "unparsed"  # the predicted "type" of an output without an action (and of a failed sample)


@dataclass(frozen=True)
class Metric:
    """One metric: sum(numerator) / sum(denominator) over its units, the counts each unit holds (a step: 0 or 1 of 1;
    an episode: its repeats' counts, `episode_units`). Every consumer reads the tables below: metrics.json
    (`metric_values`), `stats.compare`'s pairs and the reports, so a metric cannot mean two things.

    ``empty``: the value where the denominator sums to 0: "zero", "none", or "omit" (left out of metrics.json, and
    not compared: what the environment does not report). ``proportion``: a share of independent units, whose
    interval is Wilson's where every unit is 0 or 1 of 1 or not counted (a step, an episode played once); else, and for every
    ratio over episodes' turns, the interval is a bootstrap over the units."""

    name: str
    numerator: str
    denominator: str
    empty: str = "none"
    proportion: bool = False


# Step metrics (eval/test_aitw.py; also the step numbers of a --benchmark run): each unit is one sample, whose counts
# are `step_counts`: "samples" 1, "parsed" (an action was read), and each per-sample score of `score_output`.
STEP_METRICS = (
    Metric("parse_rate", "parsed", "samples", "zero", True),
    Metric("type_accuracy", "type_match", "samples", "zero", True),
    Metric("param_accuracy", "param_match", "samples", "zero", True),
    Metric("paper_param_accuracy", "paper_param_match", "samples", "zero", True),
    Metric("action_match_accuracy", "action_match", "samples", "zero", True),
    Metric("step_success", "step_success", "samples", "zero", True),
)
# Episode metrics (eval/test_phone.py): each unit is an episode with its repeats, counts from `episode_units`.
# Each ratio is over the units that report what it needs: step_success over the turns an expert judged,
# click_hit_rate over the turns with a target box, episode_progress over the plays that report progress.
EPISODE_METRICS = (
    Metric("success_rate", "wins", "plays", "zero", True),
    Metric("mean_steps_to_success", "win_steps", "wins"),
    Metric("mean_turns", "turns", "plays"),  # the actions an episode took, won or lost
    Metric("turn_parse_rate", "parsed", "turns", "zero"),
    Metric("step_success", "matched", "judged", "omit"),
    Metric("click_hit_rate", "hits", "aimed"),
    Metric("episode_progress", "progress", "progressed", "omit"),
)
# The benchmarks' own metrics (`peers.benchmarks`): a unit is one sample, counts from `navigation_counts` (navigation
# sets: grounding over click-like steps, text over text steps) or "samples" and "hits" (grounding sets).
NAVIGATION_METRICS = (
    Metric("type_accuracy", "type", "samples", proportion=True),
    Metric("grounding_accuracy", "grounding", "grounding_steps", proportion=True),
    Metric("text_accuracy", "text", "text_steps", proportion=True),
    Metric("step_success", "step", "samples", proportion=True),
)
GROUNDING_METRICS = (Metric("accuracy", "hits", "samples", proportion=True),)

# metric name -> the per-sample score it averages (in this order in metrics.json, the tables and the report)
METRICS = {metric.name: metric.numerator for metric in STEP_METRICS if metric.numerator != "parsed"}
SCORE_NAMES = tuple(METRICS.values())


def metric_values(table: Sequence[Metric], units: Sequence[dict]) -> dict[str, Any]:
    """{name: value, name_ci95: its 95% interval} of every metric of ``table`` over ``units`` (dicts of counts; see
    `Metric`): the one place a metric's value and interval are computed from its definition."""
    values: dict[str, Any] = {}
    for metric in table:
        numerators = [float(unit[metric.numerator]) for unit in units]
        denominators = [float(unit[metric.denominator]) for unit in units]
        total = sum(denominators)
        if total <= 0 and metric.empty == "omit":
            continue
        values[metric.name] = sum(numerators) / total if total > 0 else {"zero": 0.0, "none": None}[metric.empty]
        # each unit 0 or 1 of 1, or not counted (0 of 0: a step the metric does not judge)
        each_once = all((n, d) in ((0, 0), (0, 1), (1, 1)) for n, d in zip(numerators, denominators, strict=True))
        values[metric.name + CI_SUFFIX] = (
            wilson(int(sum(numerators)), int(total))
            if metric.proportion and each_once
            else bootstrap_ratio(numerators, denominators)
        )
    return values


def step_counts(record: dict) -> dict[str, int]:
    """A scored record's (predictions.jsonl line's) counts: samples 1, parsed, and each per-sample score 0 or 1."""
    counts = {"samples": 1, "parsed": int(record.get("prediction") is not None)}
    return counts | {score: int(bool(record["scores"][score])) for score in SCORE_NAMES}


def navigation_counts(result: dict[str, bool | None]) -> dict[str, int]:
    """A navigation benchmark step's counts from its scores (`peers.benchmarks.navigation_scores`: type,
    grounding and text, None where the step is not of that kind, step)."""
    return {
        "samples": 1,
        "type": int(result["type"]),
        "grounding": int(bool(result["grounding"])),
        "grounding_steps": int(result["grounding"] is not None),
        "text": int(bool(result["text"])),
        "text_steps": int(result["text"] is not None),
        "step": int(result["step"]),
    }


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
    return {"num_samples": len(records), **metric_values(STEP_METRICS, [step_counts(record) for record in records])}


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
    """The metrics of `EPISODE_METRICS` (success_rate, mean_steps_to_success, mean_turns, turn_parse_rate; where
    the environment reports what they need, step_success over the turns an expert judged and episode_progress over
    the plays that report progress; click_hit_rate over the turns whose screen has a target box,
    `info["target_box"]`, None where none has), episodes and env_failures, overall and per task. Each has its 95%
    interval beside it (KEY_ci95) over episodes, the units (`metric_values`): Wilson for success_rate when each
    episode was played once, else a bootstrap over episodes (their repeats together), as for the numbers over
    turns (turns of one episode are not independent) and the means. With repeats (records of several passes):
    ``per_repeat`` success rates, success_rate_mean, success_rate_std (sample standard deviation over passes) and
    flip_share (episodes whose outcome differs between repeats, with its Wilson interval)."""

    def summary(rows: Sequence[dict]) -> dict:
        units = list(episode_units(rows).values())
        result = {"episodes": len(rows), **metric_values(EPISODE_METRICS, units)}
        result["env_failures"] = sum(row.get("env_failure") is not None for row in rows)
        if len({row.get("repeat", 0) for row in rows}) > 1:
            result |= _repeat_numbers(rows, units)
        return result

    tasks = sorted({row["task"] for row in records})
    return {
        **summary(records),
        "per_task": {task: summary([r for r in records if r["task"] == task]) for task in tasks},
    }
