"""Compare two evaluation runs: is B's number beyond noise of A's?

    python -m r1_gui.evaluation.stats.compare results/base results/grpo [--json] [--allow_protocol_change]

For each metric: A's and B's values, the difference B - A, its 95% interval from a paired bootstrap over the units
both runs scored (steps by id from predictions.jsonl; episodes by "task:seed" from episodes.jsonl, the repeats of
an episode together), and whether it is beyond noise (``significant``: the interval excludes 0). The bootstrap is
``intervals.paired_difference``: 10,000 resamples, seed 0, so the same two runs always give the same answer.

Step runs (eval/test_aitw.py, model runs and predictions files alike) compare every metric of
``metrics.STEP_METRICS`` (for a ``--benchmark`` run these too, not the benchmark's own table); episode runs
(eval/test_phone.py) every metric of ``metrics.EPISODE_METRICS`` where both runs report what it needs (its
denominator above 0: no judged turn, no step_success). Both read the same table of definitions as metrics.json, so a
value here equals metrics.json's when both runs scored the same units.

The two protocol cards (metrics.json, key ``protocol``) must agree in everything that changes what a metric
measures (``METRIC_FIELDS``: the split's rows, the prompt, the coordinates, the image bounds, the history, the
decoding); otherwise the comparison is refused, naming the field, unless ``--allow_protocol_change``. A field one
card does not know (a predictions file's prompt) is reported, not refused. The model, the backend, the seed and the
r1_gui version may differ: they are what is being compared, or noise.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from r1_gui.cli_errors import UserError, cli_main, command_parser, installed
from r1_gui.evaluation.errors import EvaluationError
from r1_gui.evaluation.intervals import RESAMPLES, SEED, interval_text, paired_difference
from r1_gui.evaluation.metrics import EPISODE_METRICS, STEP_METRICS, Metric, episode_units, step_counts
from r1_gui.evaluation.run.predictions_file import PREDICTIONS_FILE, read_records
from r1_gui.evaluation.run.resume import EPISODES_FILE, METRICS_FILE

# The card fields that change what a metric measures: two runs that differ in one are not comparable.
METRIC_FIELDS = (
    ("split", "sha256"), ("split", "rows"), ("split", "episodes"), ("prompt", "style"), ("prompt", "sha256"),
    ("coordinates",), ("image", "min_pixels"), ("image", "max_pixels"), ("history", "format"),
    ("history", "screenshots"), ("history", "max_turns"), ("decoding", "temperature"), ("decoding", "max_new_tokens"),
)  # fmt: skip
# Card fields that may differ without changing what is measured; a difference is said, not refused.
NOTED_FIELDS = (("model", "name_or_path"), ("decoding", "backend"), ("decoding", "seed"), ("r1_gui", "commit"))


class Run:
    """One evaluation output folder: its protocol card and its paired units, {unit id: {metric: (num, den)}}."""

    def __init__(self, folder: str | Path, allow_missing_card: bool):
        self.folder = Path(folder)
        metrics_path = self.folder / METRICS_FILE
        if not metrics_path.is_file():
            raise UserError(f"{metrics_path} does not exist: give an eval/test_aitw.py or eval/test_phone.py "
                            "--output_dir whose run finished")  # fmt: skip
        try:
            metrics = json.loads(metrics_path.read_text())
        except ValueError as error:
            raise UserError(f"{metrics_path} is not valid JSON ({error}); run the evaluation again") from None
        self.card = metrics.get("protocol")
        if self.card is None and not allow_missing_card:
            raise UserError(
                f"{metrics_path} has no protocol card (written by an older r1_gui): rerun the same evaluation command "
                "to add it (it resumes without generating), or pass --allow_protocol_change to compare unchecked"
            )
        try:
            if (self.folder / PREDICTIONS_FILE).is_file():
                self.unit, self.units = "steps", step_units(read_records(self.folder / PREDICTIONS_FILE, repair=False))
            elif (self.folder / EPISODES_FILE).is_file():
                records = read_records(self.folder / EPISODES_FILE, repair=False)
                self.unit, self.units = "episodes", episode_pairs(records)
            else:
                raise UserError(f"{self.folder} holds neither {PREDICTIONS_FILE} nor {EPISODES_FILE}")
        except EvaluationError as error:
            raise UserError(str(error)) from None


def step_units(records: Sequence[dict]) -> dict[str, dict[str, tuple[float, float]]]:
    """Each predictions.jsonl record as one unit: every `STEP_METRICS` ratio as (0 or 1, 1)."""
    return {record["id"]: _pairs(STEP_METRICS, step_counts(record)) for record in records}


def episode_pairs(records: Sequence[dict]) -> dict[str, dict[str, tuple[float, float]]]:
    """Each episode (its repeats together) as one unit: {metric: (numerator, denominator)} of every
    `EPISODE_METRICS` ratio, from the counts metrics.json's values and intervals use (`episode_units`)."""
    return {key: _pairs(EPISODE_METRICS, unit) for key, unit in episode_units(records).items()}


def _pairs(table: Sequence[Metric], counts: dict) -> dict[str, tuple[float, float]]:
    return {metric.name: (float(counts[metric.numerator]), float(counts[metric.denominator])) for metric in table}


def _field(card: dict, path: tuple[str, ...]):
    value = card
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def protocol_differences(card_a: dict | None, card_b: dict | None) -> tuple[list[dict], list[str]]:
    """([{"field", "a", "b"}, ...] of ``METRIC_FIELDS`` that differ, notes on fields unknown to a card or that may
    differ)."""
    if card_a is None or card_b is None:
        missing = "A" if card_a is None else "B"
        return [], [f"run {missing} has no protocol card: the protocols were not checked"]
    changes, notes = [], []
    for path in METRIC_FIELDS:
        a, b = _field(card_a, path), _field(card_b, path)
        name = ".".join(path)
        if a is None and b is None:
            continue
        if a is None or b is None:
            notes.append(f"{name} is unknown in run {'A' if a is None else 'B'} (not checked)")
        elif a != b:
            changes.append({"field": name, "a": a, "b": b})
    for path in NOTED_FIELDS:
        a, b = _field(card_a, path), _field(card_b, path)
        if a != b:
            notes.append(f"{'.'.join(path)} differs: {a} -> {b}")
    return changes, notes


def compare(
    folder_a: str | Path,
    folder_b: str | Path,
    *,
    allow_protocol_change: bool = False,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> dict:
    """The comparison of two run folders (module docstring) as a dict: units, protocol_changes, notes and, per
    metric, {"a", "b", "difference", "ci95", "significant", "units"}. UserError when the cards differ in a metric
    field (unless ``allow_protocol_change``), when the runs are of different kinds or share no unit."""
    run_a, run_b = Run(folder_a, allow_protocol_change), Run(folder_b, allow_protocol_change)
    if run_a.unit != run_b.unit:
        raise UserError(f"{run_a.folder} holds {run_a.unit} and {run_b.folder} {run_b.unit}: only runs of the same "
                        "kind compare (eval/test_aitw.py steps, or eval/test_phone.py episodes)")  # fmt: skip
    changes, notes = protocol_differences(run_a.card, run_b.card)
    if changes and not allow_protocol_change:
        first = changes[0]
        raise UserError(
            f"the protocol cards differ in {', '.join(change['field'] for change in changes)} ({first['field']}: "
            f"{first['a']!r} in {run_a.folder}, {first['b']!r} in {run_b.folder}), which changes what the metrics "
            "measure; evaluate both under the same protocol, or pass --allow_protocol_change to compare anyway"
        )
    shared = [key for key in run_a.units if key in run_b.units]
    if not shared:
        raise UserError(f"{run_a.folder} and {run_b.folder} share no {run_a.unit[:-1]} id: nothing to pair")
    left_out = len(run_a.units) + len(run_b.units) - 2 * len(shared)
    if left_out:
        notes.append(f"{left_out} {run_a.unit} scored by only one run are left out")
    table = STEP_METRICS if run_a.unit == "steps" else EPISODE_METRICS
    # a ratio is compared where both runs report what it needs (its denominator above 0)
    names = [
        metric.name
        for metric in table
        if all(sum(run.units[key][metric.name][1] for key in shared) > 0 for run in (run_a, run_b))
    ]
    metrics = {}
    for name in names:
        pair_a = ([run_a.units[key][name][0] for key in shared], [run_a.units[key][name][1] for key in shared])
        pair_b = ([run_b.units[key][name][0] for key in shared], [run_b.units[key][name][1] for key in shared])
        metrics[name] = paired_difference(pair_a, pair_b, resamples, seed).to_dict()
    return {
        "a": str(run_a.folder),
        "b": str(run_b.folder),
        "unit": run_a.unit,
        "units": len(shared),
        "bootstrap": {"method": "paired percentile", "resamples": resamples, "seed": seed},
        "protocol_changes": changes,
        "notes": notes,
        "metrics": metrics,
    }


def _signed(value: float | None) -> str:
    return "-" if value is None else f"{value:+.4f}"


def comparison_text(result: dict) -> str:
    """The comparison as the console shows it: a table and the notes."""
    lines = [
        f"A: {result['a']}",
        f"B: {result['b']}",
        f"paired over {result['units']} {result['unit']}; {result['bootstrap']['method']} bootstrap, "
        f"{result['bootstrap']['resamples']} resamples, seed {result['bootstrap']['seed']}",
        "",
        "| metric | A | B | B - A | 95% interval | beyond noise |",
        "|---|---|---|---|---|---|",
    ]
    for name, row in result["metrics"].items():
        value = lambda number: "-" if number is None else f"{number:.4f}"  # noqa: E731
        verdict = "yes" if row["significant"] else "no"
        lines.append(f"| {name} | {value(row['a'])} | {value(row['b'])} | {_signed(row['difference'])} | "
                     f"{interval_text(row['ci95'])} | {verdict} |")  # fmt: skip
    for change in result["protocol_changes"]:
        lines.append(f"protocol change (allowed): {change['field']}: {change['a']!r} -> {change['b']!r}")
    lines += [f"note: {note}" for note in result["notes"]]
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = command_parser(__doc__, prog="python -m r1_gui.evaluation.stats.compare")
    parser.add_argument(
        "run_a", help="the baseline's --output_dir (metrics.json and predictions.jsonl or episodes.jsonl)"
    )
    parser.add_argument("run_b", help="the other run's --output_dir")
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON")
    parser.add_argument(
        "--allow_protocol_change",
        action="store_true",
        help="compare even when the protocol cards differ in a field that changes the metrics (listed in the output)",
    )
    return parser.parse_args(argv)


@cli_main
def main(argv: list[str] | None = None) -> dict:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    result = compare(args.run_a, args.run_b, allow_protocol_change=args.allow_protocol_change)
    print(json.dumps(result, indent=2) if args.json else comparison_text(result))
    return result


cli = installed(main)  # the installed command (pyproject.toml's [project.scripts]): main, returning nothing


if __name__ == "__main__":
    main()
