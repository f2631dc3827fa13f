"""Human-readable results: the metric tables (stdout and report.md), the confusion matrix, the unparsed outputs,
and a gallery of screenshots with the ground truth (green) and the prediction (red) under OUTPUT_DIR/gallery/.

The gallery is a deterministic sample: successes and failures (by step_success) ordered by a hash of their id,
half of each when both have enough, so reruns and other checkpoints on the same split show the same rows.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from r1_gui.actions import Action, format_action
from r1_gui.evaluation.metrics import METRICS, STEP_METRICS, UNPARSED
from r1_gui.evaluation.peers.benchmarks import benchmark_tables
from r1_gui.evaluation.run.report_text import (
    OUTPUT_CHARS,
    card_line,
    cell,
    metrics_table,
    one_line,
    protocol_section,
    settings_lines,
    with_interval,
)
from r1_gui.evaluation.run.resume import GALLERY_DIR, REPORT_FILE
from r1_gui.evaluation.steps.samples import Sample, image_reference
from r1_gui.gui_datasets import open_screenshot

logger = logging.getLogger(__name__)

MAX_UNPARSED_LISTED = 200

# The per-type table: its metric keys and their column headers (not a dataset's columns: see builder.DATASET_COLUMNS).
PER_TYPE_TABLE_COLUMNS = {"num_samples": "samples", "parse_rate": "parsed", **{name: name for name in METRICS}}


def _picture_lines(label: str, text: Any, limit: int) -> list[str]:
    """``text`` cut to ``limit`` characters as a picture's caption lines, its own lines kept as lines (the picture's
    font has no glyph for ⏎, which drew as a box), other control characters as spaces; the first after ``label``."""
    lines = one_line(text, limit).split("⏎")
    return [label + lines[0], *lines[1:]]


STEP_METRIC_ROWS = ("num_samples", *(metric.name for metric in STEP_METRICS), "num_errors")


def per_type_table(metrics: dict) -> str:
    """One row per ground-truth action type: samples, parse rate and every metric with its 95% interval."""
    lines = [
        "| ground truth | " + " | ".join(PER_TYPE_TABLE_COLUMNS.values()) + " |",
        "|---" * (len(PER_TYPE_TABLE_COLUMNS) + 1) + "|",
    ]
    for action_type, numbers in metrics["per_type"].items():
        lines.append(
            f"| {action_type} | " + " | ".join(with_interval(numbers, key) for key in PER_TYPE_TABLE_COLUMNS) + " |"
        )
    return "\n".join(lines)


def confusion_table(metrics: dict) -> str:
    """Ground-truth types (rows) against predicted types (columns, "unparsed" last)."""
    matrix = metrics["confusion_matrix"]
    columns = list(next(iter(matrix.values()))) if matrix else [UNPARSED]
    lines = ["| ground truth \\ predicted | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    for action_type, row in matrix.items():
        lines.append(f"| {action_type} | " + " | ".join(str(row[column]) for column in columns) + " |")
    return "\n".join(lines)


def _code(action: dict | None) -> str:
    if action is None:
        return UNPARSED
    try:
        return format_action(Action.from_dict(action), "aguvis")
    except ValueError:
        return str(action)


def unparsed_section(records: Sequence[dict]) -> str:
    """The ids whose output gave no action (or that failed), with the reason or the start of the output."""
    unparsed = [record for record in records if record.get("prediction") is None]
    lines = [f"## Unparsed outputs ({len(unparsed)})", ""]
    if not unparsed:
        return "\n".join([*lines, "Every output parsed."])
    lines += ["| id | reason | output |", "|---|---|---|"]
    for record in unparsed[:MAX_UNPARSED_LISTED]:
        reason = record.get("error") or "no action found"
        lines.append(f"| {cell(record['id'])} | {cell(reason)} | {cell(record.get('output'), OUTPUT_CHARS)} |")
    if len(unparsed) > MAX_UNPARSED_LISTED:
        lines.append(f"\n… and {len(unparsed) - MAX_UNPARSED_LISTED} more (see predictions.jsonl).")
    return "\n".join(lines)


def _ranked(records: Sequence[dict]) -> list[dict]:
    return sorted(records, key=lambda record: hashlib.sha1(record["id"].encode("utf-8")).hexdigest())


def select_gallery(records: Sequence[dict], size: int) -> list[dict]:
    """Up to ``size`` records without an error: successes first, then failures, each ordered by an id hash;
    half of each when both have enough, else the other kind fills up."""
    usable = [record for record in records if not record.get("error")]
    successes = _ranked([record for record in usable if record["scores"]["step_success"]])
    failures = _ranked([record for record in usable if not record["scores"]["step_success"]])
    wanted_successes = min(len(successes), max(size // 2, size - len(failures)))
    return successes[:wanted_successes] + failures[: size - wanted_successes]


def _file_name(number: int, record: dict) -> str:
    safe_id = re.sub(r"[^A-Za-z0-9_.-]+", "_", record["id"])[:80]
    return f"{number:03d}_{'success' if record['scores']['step_success'] else 'failure'}_{safe_id}.png"


def write_gallery(
    output_dir: Path, records: Sequence[dict], samples: Sequence[Sample], rows, size: int
) -> list[tuple[dict, str]]:
    """Draw the selected records into OUTPUT_DIR/gallery/ (old PNGs removed); (record, relative path) pairs."""
    from r1_gui.visualize import draw_actions, with_caption

    gallery = output_dir / GALLERY_DIR
    gallery.mkdir(parents=True, exist_ok=True)
    for old in gallery.glob("*.png"):
        old.unlink()
    by_id = {sample.id: sample for sample in samples}
    written = []
    for record in select_gallery(records, size):
        sample = by_id[record["id"]]
        try:
            screenshot = open_screenshot(image_reference(rows, sample.index))
        except OSError as error:
            logger.warning("gallery: skipping %s (%s)", sample.id, error)
            continue
        prediction = Action.from_dict(record["prediction"]) if record["prediction"] else None
        picture = draw_actions(screenshot, sample.ground_truth, prediction, list(sample.bbox) if sample.bbox else None)
        scores = ", ".join(f"{name}={int(value)}" for name, value in record["scores"].items())
        caption = [
            f"id: {sample.id}",
            f"instruction: {sample.instruction}",
            f"ground truth (green): {_code(record['ground_truth'])}",
            f"prediction (red): {_code(record['prediction'])}",
            *_picture_lines("output: ", record["output"], 300),
            scores,
        ]
        name = _file_name(len(written), record)
        with_caption(picture, caption).save(gallery / name)
        written.append((record, f"{GALLERY_DIR}/{name}"))
    return written


def write_report(
    output_dir: Path,
    metrics: dict,
    records: Sequence[dict],
    samples: Sequence[Sample],
    rows,
    settings: dict,
    gallery_size: int,
) -> Path:
    """OUTPUT_DIR/report.md: the protocol card, settings, metrics, per-type table, confusion matrix, unparsed
    outputs, gallery."""
    pictures = write_gallery(output_dir, records, samples, rows, gallery_size) if gallery_size > 0 else []
    source = settings.get("model_name_or_path") or settings.get("predictions")
    parts = [
        f"# {settings.get('benchmark') or 'AITW'} evaluation: {source}",
        "",
        *([protocol_section(metrics["protocol"]), ""] if "protocol" in metrics else []),
        "## Settings",
        "",
        settings_lines(settings),
        "",
        "## Metrics",
        "",
        metrics_table(metrics, STEP_METRIC_ROWS),
        "",
        "## Per ground-truth action type",
        "",
        per_type_table(metrics),
        "",
        "## Confusion matrix",
        "",
        "Rows: ground-truth type; columns: predicted type (`unparsed`: no action found, or the sample failed).",
        "",
        confusion_table(metrics),
        "",
        unparsed_section(records),
        "",
        *([benchmark_tables(metrics["benchmark"]), ""] if "benchmark" in metrics else []),
        f"## Gallery ({len(pictures)})",
        "",
        "Ground truth in green (circle, and the target box when known), prediction in red (cross).",
    ]
    for record, path in pictures:
        outcome = "success" if record["scores"]["step_success"] else "failure"
        parts += ["", f"### {cell(record['id'])} ({outcome})", "", f"![{cell(record['id'])}]({path})"]
    report = output_dir / REPORT_FILE
    report.write_text("\n".join(parts) + "\n", encoding="utf-8")
    return report


def summary(metrics: dict) -> str:
    """The CLI's closing text: the protocol in one line, the overall table and the per-type table (95% intervals)."""
    text = f"{metrics_table(metrics, STEP_METRIC_ROWS)}\n\n{per_type_table(metrics)}"
    text = (f"{card_line(metrics['protocol'])}\n\n" if "protocol" in metrics else "") + text
    return text + (f"\n\n{benchmark_tables(metrics['benchmark'])}" if "benchmark" in metrics else "")
