"""Score GUI-R1's own inference output (its guir1/inference/*.py files) without a model or the screenshots.

    python eval/test_aitw.py --benchmark androidcontrol_high --predictions androidcontrol_high_test.json \\
        --output_dir results/guir1_ac_high

Such a file holds, per line, a test row's ground-truth fields (``instruction``, ``gt_action``, ``gt_bbox``,
``gt_input_text``, ``group``, ``image_size``; the image blanked) beside ``pred_action``, ``pred_coord`` (original
pixels) and ``pred_input_text``. Each line is read as a test row (``benchmarks.benchmark_row``, id = its line
number from 0) and its prediction as the GUI-R1 answer [{"action": pred_action, "point": pred_coord,
"input_text": pred_input_text}] in pixels of the original screenshot; grounding files without ``pred_action``
are clicks. The same files as any evaluation are written (no gallery: there are no screenshots), and metrics.json
holds both r1_gui's numbers and GUI-R1's (``guir1_*``, from the file's fields exactly as its eval scripts read them).
"""

from __future__ import annotations

import json
from pathlib import Path

from r1_gui.evaluation.benchmarks import REQUIRED_COLUMNS, benchmark_row, check_benchmark, check_columns, read_table
from r1_gui.evaluation.config import EvalConfig
from r1_gui.evaluation.errors import EvaluationError
from r1_gui.evaluation.protocol import protocol_card, step_history, step_split
from r1_gui.evaluation.runner import scored_record, write_scored_run
from r1_gui.evaluation.samples import load_samples

PREDICTION_COLUMNS = ("pred_action", "pred_coord", "pred_input_text")


def is_guir1_predictions(path: str | Path) -> bool:
    """Whether the file's first row carries GUI-R1's ``pred_coord`` (else it is r1_gui's {"id", "output"} lines)."""
    try:
        rows = read_table(path)
    except EvaluationError:
        return False
    return bool(rows) and isinstance(rows[0], dict) and "pred_coord" in rows[0]


def score_guir1_predictions(
    predictions: str | Path,
    benchmark: str,
    output_dir: str | Path,
    *,
    max_samples: int | None = None,
    overwrite: bool = False,
) -> dict:
    """Score a GUI-R1 inference output file for ``benchmark``; returns the metrics (see the module docstring).
    EvaluationError naming the file and column when a ground-truth or prediction column is missing."""
    path, kind = Path(predictions), check_benchmark(benchmark).kind
    raw = read_table(path)
    wanted = PREDICTION_COLUMNS if kind == "navigation" else ("pred_coord",)
    check_columns(raw, (*REQUIRED_COLUMNS[kind][1:], "image_size", *wanted), path, benchmark)
    rows = []
    for index, line in enumerate(raw):
        row = benchmark_row(line, index, benchmark, path, with_image=False)
        row["benchmark"] |= {name: line.get(name) for name in PREDICTION_COLUMNS}
        if kind == "grounding" and "pred_action" not in line:
            row["benchmark"]["pred_action"] = "click"
        rows.append(row)
    samples = load_samples(rows, max_samples=max_samples)
    records = []
    for sample in samples:
        fields = rows[sample.index]["benchmark"]
        answer = {
            "action": fields["pred_action"],
            "point": fields["pred_coord"],
            "input_text": fields["pred_input_text"],
        }
        output = json.dumps([answer])
        records.append(scored_record(sample, output, "pixels", tuple(fields["image_size"])))
    settings = {"predictions": str(path), "dataset": str(path), "benchmark": benchmark, "format": "guir1"}
    return write_scored_run(
        Path(output_dir), rows, samples, records, settings, overwrite, 0, benchmark, guir1_card(rows, samples, path)
    )


def guir1_card(rows: list[dict], samples, path: Path) -> dict:
    """The protocol card of a GUI-R1 inference output: its points are original pixels, its prompt and decoding
    GUI-R1's (unknown here), its rows the file's."""
    made_there = "GUI-R1's inference (not recorded in its output)"
    image = {"min_pixels": None, "max_pixels": None, "min_pixels_from": made_there, "max_pixels_from": made_there,
             "checkpoint": None, "resize": "none here: pred_coord is in pixels of the original screenshot",
             "factor": None}  # fmt: skip
    return protocol_card(
        "guir1_predictions",
        EvalConfig(coordinates="pixels"),
        image=image,
        history=step_history([sample.problem for sample in samples]),
        split=step_split(rows, len(samples), str(path), None),
        prompt_sha256=None,
        prompt={"style": "GUI-R1's inference (pred_action, pred_coord, pred_input_text)", "sha256": None},
        generated=False,
    )
