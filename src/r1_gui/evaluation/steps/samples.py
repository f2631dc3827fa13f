"""Evaluation samples: the dataset rows an evaluation scores, with their ground truth read once, and screenshots.

Rows follow the dataset contract of dataset/raw_load_data.py: ``id``, ``image`` (a path, or embedded
{"bytes", "path"}), ``problem``, ``solution`` ("<answer>{aguvis code}</answer>", normalized coordinates),
``instruction``, ``bbox`` (optional). Screenshots are opened only when needed (generation, pixel coordinates,
the gallery), one batch at a time, so embedded images are never all in memory.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

from r1_gui.actions import Action, read_bbox, resized_size
from r1_gui.actions.coords import IMAGE_FACTOR
from r1_gui.evaluation.errors import EvaluationError
from r1_gui.gui_datasets import ground_truth_action

logger = logging.getLogger(__name__)

_INSTRUCTION = re.compile(r"Instruction:\s*(.*)")


@dataclass(frozen=True)
class Sample:
    """One dataset row as the evaluation sees it; ``index`` is its row number in the dataset."""

    index: int
    id: str
    problem: str
    instruction: str
    solution: str | None
    ground_truth: Action
    bbox: tuple[float, float, float, float] | None


def _instruction(row: dict) -> str:
    if row.get("instruction"):
        return str(row["instruction"])
    found = _INSTRUCTION.search(row.get("problem") or "")
    return found.group(1).strip() if found else ""


def as_rows(dataset) -> Any:
    """A datasets.Dataset with its image column left undecoded (dicts or paths), or a list of row dicts as is."""
    features = getattr(dataset, "features", None)
    if features is not None and "image" in features and type(features["image"]).__name__ == "Image":
        import datasets

        return dataset.cast_column("image", datasets.Image(decode=False))
    return dataset


def load_samples(dataset, *, max_samples: int | None = None, required: tuple[str, ...] = ("id", "solution")):
    """The first ``max_samples`` rows (all when None) of a datasets.Dataset or a list of row dicts as Samples.

    Raises EvaluationError, before any model is loaded, for a missing column, a duplicate id, or a ground truth
    that does not parse (the dataset builder guarantees neither happens).
    """
    rows = as_rows(dataset)
    columns = rows.column_names if hasattr(rows, "column_names") else (list(rows[0]) if len(rows) else [])
    missing = [name for name in required if name not in columns]
    if missing:
        raise EvaluationError(
            f"the dataset lacks the column(s) {', '.join(missing)} (it has {', '.join(columns)}); build it with "
            "`python dataset/raw_load_data.py`, which writes every column the evaluation reads"
        )
    count = len(rows) if max_samples is None else min(max_samples, len(rows))
    if count <= 0:
        raise EvaluationError("nothing to evaluate: the split is empty or --max_samples is 0")
    metadata = [name for name in columns if name != "image"]
    if hasattr(rows, "select_columns"):
        table = rows.select(range(count)).select_columns(metadata).to_list()
    else:
        table = [{name: row.get(name) for name in metadata} for row in rows[:count]]
    samples, seen = [], set()
    for index, row in enumerate(table):
        identifier = str(row["id"]) if row.get("id") is not None else str(index)
        if identifier in seen:
            raise EvaluationError(f"row {index}: id {identifier!r} appears twice in the dataset; ids must be unique")
        seen.add(identifier)
        ground_truth = ground_truth_action(row)
        if ground_truth is None:
            raise EvaluationError(
                f"row {index} (id {identifier!r}): the ground truth {row.get('solution')!r} does not parse as an "
                "action; rebuild the dataset with dataset/raw_load_data.py"
            )
        samples.append(
            Sample(
                index=index,
                id=identifier,
                problem=row.get("problem") or "",
                instruction=_instruction(row),
                solution=row.get("solution"),
                ground_truth=ground_truth,
                bbox=read_bbox(row.get("bbox")),
            )
        )
    return samples


def image_reference(rows, index: int) -> Any:
    """The ``image`` value of row ``index``: a path string, a {"bytes", "path"} dict, or a PIL image."""
    return rows[index].get("image")


def screen_size(
    image_size: tuple[int, int], min_pixels: int, max_pixels: int, factor: int = IMAGE_FACTOR
) -> tuple[int, int]:
    """(width, height) of the resized screenshot the model sees, which "pixels" coordinates refer to; its sides are
    multiples of ``factor`` (28 for Qwen2-VL and Qwen2.5-VL, 32 for Qwen3-VL: `processing.resize_factor`)."""
    return resized_size(image_size[0], image_size[1], min_pixels, max_pixels, factor)
