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

With a ``dataset`` (``--dataset``, the benchmark's test file) the predictions are scored against that file's rows:
the file's ground truth, ids and screenshots (so the report has a gallery). GUI-R1's inference copies the test rows
line by line, so line i must be test row i: the two must have as many rows, and each line's ``instruction``,
``gt_action``, ``gt_bbox`` and ``gt_input_text`` must be the row's, or nothing is scored (an EvaluationError naming
the first row that differs).
"""

from __future__ import annotations

import json
from pathlib import Path

from tqdm import tqdm

from r1_gui.actions.guir1_rows import number_list
from r1_gui.evaluation.config import EvalConfig
from r1_gui.evaluation.errors import EvaluationError
from r1_gui.evaluation.peers.benchmarks import (
    REQUIRED_COLUMNS,
    benchmark_row,
    check_benchmark,
    check_columns,
    load_benchmark,
    read_table,
)
from r1_gui.evaluation.run.protocol import protocol_card, step_history, step_split
from r1_gui.evaluation.steps.runner import scored_record, write_scored_run
from r1_gui.evaluation.steps.samples import load_samples

PREDICTION_COLUMNS = ("pred_action", "pred_coord", "pred_input_text")
MATCHED_COLUMNS = ("instruction", "gt_action", "gt_bbox", "gt_input_text")  # a line must carry its test row's


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
    dataset: str | Path | None = None,
    max_samples: int | None = None,
    overwrite: bool = False,
    gallery_size: int = 0,
) -> dict:
    """Score a GUI-R1 inference output file for ``benchmark``, against the test file ``dataset`` when given (else
    against the file's own ground-truth fields); returns the metrics (see the module docstring). EvaluationError
    naming the file and column when a ground-truth or prediction column is missing, and naming the row when
    ``dataset`` is not the file the predictions were made for."""
    path, kind = Path(predictions), check_benchmark(benchmark).kind
    raw = read_table(path)
    wanted = PREDICTION_COLUMNS if kind == "navigation" else ("pred_coord",)
    check_columns(raw, (*REQUIRED_COLUMNS[kind][1:], "image_size", *wanted), path, benchmark)
    if dataset is None:
        rows = [benchmark_row(line, index, benchmark, path, with_image=False) for index, line in enumerate(raw)]
    else:
        rows = load_benchmark(dataset, benchmark)
        check_same_rows(raw, path, read_table(dataset), Path(dataset))
    for row, line in zip(rows, raw, strict=True):
        row["benchmark"] |= {name: line.get(name) for name in PREDICTION_COLUMNS}
        if kind == "grounding" and "pred_action" not in line:
            row["benchmark"]["pred_action"] = "click"
    samples = load_samples(rows, max_samples=max_samples)
    records = []
    for sample in tqdm(samples, desc="scoring", unit="sample"):
        fields = rows[sample.index]["benchmark"]
        answer = {
            "action": fields["pred_action"],
            "point": fields["pred_coord"],
            "input_text": fields["pred_input_text"],
        }
        output = json.dumps([answer])
        records.append(scored_record(sample, output, "pixels", tuple(fields["image_size"])))
    source = str(Path(dataset)) if dataset is not None else str(path)
    settings = {"predictions": str(path), "dataset": source, "benchmark": benchmark, "format": "guir1"}
    gallery_size = gallery_size if dataset is not None else 0  # screenshots come only with the test file
    card = guir1_card(rows, samples, Path(source))
    return write_scored_run(
        Path(output_dir), rows, samples, records, settings, overwrite, gallery_size, benchmark, card
    )


def check_same_rows(lines: list[dict], path: Path, test_rows: list[dict], test_path: Path) -> None:
    """EvaluationError unless line i of the predictions file carries test row i's fields (``MATCHED_COLUMNS``):
    predictions scored against another file's rows would be scored against the wrong ground truth."""
    if len(lines) != len(test_rows):
        raise EvaluationError(
            f"--predictions {path} has {len(lines)} rows and --dataset {test_path} {len(test_rows)}: GUI-R1's "
            "inference writes one line per test row, so these predictions were not made for this test file; give "
            "the test file they were made from, or leave out --dataset to score them against their own fields"
        )
    for index, (line, row) in enumerate(zip(lines, test_rows, strict=True)):
        for name in MATCHED_COLUMNS:
            if name in row and _comparable(line.get(name)) != _comparable(row.get(name)):
                raise EvaluationError(
                    f"--predictions {path} row {index} has {name} {line.get(name)!r} where --dataset {test_path} row "
                    f"{index} has {row.get(name)!r}: these predictions were not made for this test file; give the "
                    "test file they were made from, or leave out --dataset to score them against their own fields"
                )


def _comparable(value):
    """A field as both files may write it: boxes and points as float lists (JSON text or a list), texts stripped."""
    numbers = number_list(value)
    return numbers if numbers else (value.strip() if isinstance(value, str) else value)


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
