"""The field's GUI benchmarks in GUI-R1's data format: reading their test files, and their metrics.

    python eval/test_aitw.py --benchmark androidcontrol_high --dataset androidcontrol_high_test.parquet \\
        --model_name_or_path runs/ckpt --output_dir results/ac_high

Test files (parquet, a JSON list or JSON lines) hold GUI-R1's row format: ``image`` ({"bytes", "path"} or a path,
relative to the file's folder), ``instruction``, ``history`` (navigation), ``gt_action``, ``gt_bbox`` (original
pixels: a point [x, y], a box [x1, y1, x2, y2], or [-100, -100] for none), ``gt_input_text``, ``group`` or
``task_type``, ``image_size`` ([width, height]; read from the image when absent), and for grounding sets
``ui_type`` (text / icon) and ``group`` (platform; ScreenSpot-Pro: the application category, with ``platform``).
Every row becomes a row of r1_gui's dataset contract (``id``, ``image``, ``problem``, ``solution``, ``bbox``, see
``r1_gui.evaluation.steps.samples``) plus a ``benchmark`` dict of its GUI-R1 fields, so the AITW runner (batched
generation, resume, reports) evaluates it unchanged and ``benchmark_metrics`` adds the numbers below.

Navigation sets (androidcontrol_high, androidcontrol_low, guiodyssey), over the parsed actions:

- type_accuracy: the GUI-R1 action name of the prediction is the ground truth's (press_back, complete, ...);
- grounding_accuracy, over click-like steps (click, long_press, double_click, right_click, move_to): the predicted
  point lies within 0.14 (normalized Euclidean distance, inclusive) of the ground-truth point, or inside its box
  (edges included); the predicted type is not checked (step_success checks it);
- text_accuracy, over type / open_app / select / scroll steps: right type, and for text the AITW rule r1_gui's
  ``step_success`` uses (lowercase, one a substring of the other), for scroll the same direction;
- step_success, over **every** step: right type, plus the grounding rule for click-like steps and the text rule
  for text steps;
- beside them, ``guir1_*``: what GUI-R1's eval_omni.py prints for the same predictions (``guir1_eval``).

Grounding sets (screenspot, screenspot_v2, screenspot_pro): accuracy = the predicted point lies inside the target
box (edges included), overall, per platform (mobile, desktop, web), per element type (text, icon), per platform and
type, and for screenspot_pro per application category; ``guir1_accuracy`` is eval_screenspot.py's (edges excluded).
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from r1_gui.actions import Action, format_action, read_bbox
from r1_gui.actions.guir1 import guir1_name
from r1_gui.actions.guir1_rows import action_and_box, number_list
from r1_gui.evaluation.errors import EvaluationError
from r1_gui.evaluation.intervals import CI_SUFFIX, interval_text
from r1_gui.evaluation.metrics import GROUNDING_METRICS, NAVIGATION_METRICS, metric_values, navigation_counts
from r1_gui.evaluation.peers import guir1_eval
from r1_gui.evaluation.run.predictions_file import json_line
from r1_gui.prompts import PROBLEM_TEMPLATE, history_steps, history_text
from r1_gui.scoring.aitw import text_matches


@dataclass(frozen=True)
class Benchmark:
    kind: str  # "navigation" or "grounding"
    description: str


BENCHMARKS = {
    "androidcontrol_high": Benchmark("navigation", "AndroidControl test steps, high-level (episode goal) instructions"),
    "androidcontrol_low": Benchmark("navigation", "AndroidControl test steps, low-level (step) instructions"),
    "guiodyssey": Benchmark("navigation", "GUI-Odyssey cross-app test steps"),
    "screenspot": Benchmark("grounding", "ScreenSpot: mobile, desktop and web element grounding"),
    "screenspot_v2": Benchmark("grounding", "ScreenSpot-v2: ScreenSpot with corrected annotations"),
    "screenspot_pro": Benchmark("grounding", "ScreenSpot-Pro: professional high-resolution desktop applications"),
}
REQUIRED_COLUMNS = {
    "navigation": ("image", "instruction", "gt_action", "gt_bbox", "gt_input_text"),
    "grounding": ("image", "instruction", "gt_bbox"),
}
CLICK_TYPES = ("click", "long_press", "double_click", "right_click", "move_to")
TEXT_RULE_NAMES = ("type", "open_app", "select")
DISTANCE = guir1_eval.DISTANCE  # GUI-R1's threshold; here inclusive, and from the point (or inside the box)
DISTANCE_SLACK = 1e-9  # "within 0.14, inclusive" must hold for 0.64 - 0.5, which is 0.14000000000000001 in floats
# platform names in ScreenSpot's data sources -> the platform its tables report
PLATFORMS = {"ios": "mobile", "android": "mobile", "windows": "desktop", "macos": "desktop", "linux": "desktop"}
PLATFORMS |= {name: "web" for name in ("shop", "forum", "gitlab", "tool")}


def check_benchmark(name: str) -> Benchmark:
    if name not in BENCHMARKS:
        raise EvaluationError(f"unknown --benchmark {name!r}; valid: {', '.join(BENCHMARKS)}")
    return BENCHMARKS[name]


# ------------------------------------------------------------------------------------------------ reading


def read_table(path: str | Path) -> list[dict]:
    """The rows of a parquet file (.parquet), a JSON list (.json) or JSON lines (.jsonl, or a .json that is not one
    JSON value). EvaluationError naming the file (and the line) when it is missing or unreadable."""
    path = Path(path)
    if not path.is_file():
        raise EvaluationError(f"{path} does not exist (a GUI-R1-format .parquet, .json or .jsonl file)")
    if path.suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            return pq.read_table(path).to_pylist()
        except (pa.ArrowException, OSError) as error:
            raise EvaluationError(f"{path} is not a readable parquet file ({error})") from None
    if path.suffix == ".json":
        try:  # GUI-R1's inference writes JSON lines into a .json file: those are read as lines
            rows = json.loads(path.read_text(encoding="utf-8-sig"))
        except ValueError:
            rows = None
        if rows is not None and not isinstance(rows, list):
            raise EvaluationError(f"{path} must hold a JSON list of rows, or JSON lines")
        if rows is not None:
            return rows
    lines = enumerate(path.read_bytes().splitlines(), start=1)
    return [json_line(raw, path, number) for number, raw in lines if raw.strip()]


def check_columns(rows: Sequence[Any], columns: Sequence[str], path: str | Path, benchmark: str) -> None:
    """EvaluationError naming the file and the column when a required column is absent (from every row: "has no
    column"; from some: the first such row)."""
    if not rows:
        raise EvaluationError(f"{path} has no rows")
    for index, row in enumerate(rows):
        if not isinstance(row, dict):
            raise EvaluationError(f"{path} row {index} is not an object")
    for column in columns:
        lacking = [index for index, row in enumerate(rows) if column not in row]
        if len(lacking) == len(rows):
            raise EvaluationError(
                f"{path} has no column {column!r}; a {benchmark} file needs {', '.join(columns)} (GUI-R1's format)"
            )
        if lacking:
            raise EvaluationError(f"{path} row {lacking[0]} has no {column!r} (a {benchmark} row needs it)")


def _image_size(row: dict, image: Any, where: str) -> tuple[int, int]:
    size = row.get("image_size")
    if isinstance(size, (list, tuple)) and len(size) == 2 and all(isinstance(v, (int, float)) for v in size):
        if all(math.isfinite(v) and v > 0 for v in size):
            return float(size[0]), float(size[1])
    from PIL import Image

    source = image
    if isinstance(image, dict):
        source = io.BytesIO(image["bytes"]) if image.get("bytes") else image.get("path")
    try:
        with Image.open(source) as picture:
            return picture.size
    except Exception as error:  # PIL raises many types for broken files
        raise EvaluationError(f"{where}: no image_size and the image cannot be read ({error})") from None


def _image(value: Any, folder: Path) -> Any:
    """The row's image for the runner: embedded bytes as {"bytes", "path"}, a relative path resolved."""
    if isinstance(value, str) and value and not Path(value).is_absolute():
        return str(folder / value)
    if isinstance(value, dict) and not value.get("bytes") and value.get("path"):
        return _image(value["path"], folder)
    return value


def _grounding_truth(row: dict, size: tuple[float, float]) -> tuple[Action | None, list[float] | None]:
    box = read_bbox(number_list(row.get("gt_bbox")))  # pixels of the original screenshot, inside it
    if box is None or not (0 <= box[0] and box[2] <= size[0] and 0 <= box[1] and box[3] <= size[1]):
        return None, None
    unit = [box[0] / size[0], box[1] / size[1], box[2] / size[0], box[3] / size[1]]
    return Action("click", x=(unit[0] + unit[2]) / 2, y=(unit[1] + unit[3]) / 2), unit


def _platform(row: dict) -> str:
    name = str(row.get("platform") or row.get("group") or "unknown").strip().lower()
    return PLATFORMS.get(name, name)


def benchmark_row(row: dict, index: int, benchmark: str, path: Path, with_image: bool = True) -> dict:
    """One GUI-R1 row as a row of r1_gui's dataset contract plus its ``benchmark`` fields (see the module
    docstring). EvaluationError naming the file and row when its ground truth cannot be read."""
    kind = check_benchmark(benchmark).kind
    where = f"{path} row {index}"
    image = _image(row.get("image"), path.parent) if with_image else None
    size = _image_size(row, image, where)
    instruction = row.get("instruction")
    if not isinstance(instruction, str):
        raise EvaluationError(f"{where}: instruction must be a string, got {instruction!r}")
    if kind == "navigation":
        if not isinstance(row.get("gt_action"), str) or not row["gt_action"].strip():
            raise EvaluationError(f"{where}: gt_action must be a GUI-R1 action name, got {row.get('gt_action')!r}")
        ground_truth, box = action_and_box(row, size)
        history = history_text(history_steps(row.get("history")))
    else:
        (ground_truth, box), history = _grounding_truth(row, size), "None"
    if ground_truth is None:
        raise EvaluationError(
            f"{where}: gt_action {row.get('gt_action')!r} with gt_bbox {row.get('gt_bbox')!r} and gt_input_text "
            f"{row.get('gt_input_text')!r} is not an action r1_gui can read (image size {size[0]}x{size[1]})"
        )
    fields = {name: row.get(name) for name in ("gt_action", "gt_bbox", "gt_input_text", "ui_type")}
    fields |= {"group": row.get("group") or row.get("task_type") or benchmark, "image_size": list(size)}
    fields |= {"platform": _platform(row), "category": row.get("group")}
    return {
        "id": str(row["id"]) if row.get("id") is not None else f"{index:06d}",
        "image": image,
        "problem": PROBLEM_TEMPLATE.format(instruction=instruction.strip(), history=history),
        "solution": f"<answer>{format_action(ground_truth, 'aguvis')}</answer>",
        "instruction": instruction.strip(),
        "bbox": box,
        "benchmark": fields,
    }


def load_benchmark(path: str | Path, benchmark: str, *, with_image: bool = True) -> list[dict]:
    """The rows of a GUI-R1-format test file as runner rows (``benchmark_row``)."""
    path = Path(path)
    kind = check_benchmark(benchmark).kind
    raw = read_table(path)
    check_columns(raw, REQUIRED_COLUMNS[kind] if with_image else REQUIRED_COLUMNS[kind][1:], path, benchmark)
    return [benchmark_row(row, index, benchmark, path, with_image) for index, row in enumerate(raw)]


# ------------------------------------------------------------------------------------------------ metrics


def _name(action: Action | None) -> str | None:
    name = guir1_name(action) if action is not None else None
    return name.lower() if name else None


def point_hit(pred: Action | None, gt: Action, bbox: Sequence[float] | None) -> bool:
    """The predicted point within 0.14 of the ground-truth point (inclusive) or inside ``bbox`` (edges included)."""
    if pred is None or pred.point is None:
        return False
    if math.dist(pred.point, gt.point) <= DISTANCE + DISTANCE_SLACK:
        return True
    return bbox is not None and in_box(pred, bbox)


def in_box(pred: Action | None, bbox: Sequence[float]) -> bool:
    if pred is None or pred.point is None:
        return False
    return bbox[0] <= pred.x <= bbox[2] and bbox[1] <= pred.y <= bbox[3]


def navigation_scores(pred: Action | None, gt: Action, bbox: Sequence[float] | None) -> dict[str, bool | None]:
    """r1_gui's per-step results (module docstring): type, grounding and text (None where the step is not that
    kind), step."""
    type_match = pred is not None and _name(pred) == _name(gt)
    grounding = point_hit(pred, gt, bbox) if gt.type in CLICK_TYPES else None
    text = None
    if gt.type == "scroll":
        text = type_match and pred.direction == gt.direction
    elif _name(gt) in TEXT_RULE_NAMES:
        text = type_match and text_matches(pred.text, gt.text)
    step = type_match and grounding is not False and text is not False
    return {"type": type_match, "grounding": grounding, "text": text, "step": step}


def _action(value: dict | None) -> Action | None:
    return Action.from_dict(value) if value else None


def _gt_fields(record: dict, fields: dict) -> dict:
    """GUI-R1's line for a record: its ground-truth fields, and the prediction's (from the file, or derived)."""
    if "pred_action" in fields:
        return fields
    return fields | guir1_eval.prediction_fields(_action(record.get("prediction")), fields["image_size"])


def _navigation_rates(results: list[dict], lines: list[dict]) -> dict[str, Any]:
    counts = [navigation_counts(result) for result in results]
    return {"num_samples": len(results), **metric_values(NAVIGATION_METRICS, counts)} | guir1_eval.navigation_numbers(
        lines
    )


def _grouped(keys: list[str], items: list[Any]) -> dict[str, list[Any]]:
    groups: dict[str, list[Any]] = {}
    for key, item in zip(keys, items, strict=True):
        groups.setdefault(key, []).append(item)
    return dict(sorted(groups.items()))


def navigation_metrics(records: Sequence[dict], fields: Sequence[dict]) -> dict[str, Any]:
    """Overall, per group and per ground-truth action name; and the confusion matrix of GUI-R1 action names."""
    results, lines = [], [_gt_fields(r, f) for r, f in zip(records, fields, strict=True)]
    for record, meta in zip(records, fields, strict=True):
        box = meta.get("bbox")
        results.append(navigation_scores(_action(record["prediction"]), _action(record["ground_truth"]), box))
    pairs = list(zip(results, lines, strict=True))
    groups = _grouped([str(line["group"]) for line in lines], pairs)
    names = [_name(_action(r["ground_truth"])) or "?" for r in records]
    by_type = _grouped(names, pairs)
    predicted = [_name(_action(r["prediction"])) or "unparsed" for r in records]
    columns = sorted(set(predicted) - {"unparsed"}) + ["unparsed"]
    confusion = {name: dict.fromkeys(columns, 0) for name in sorted(set(names))}
    for name, guess in zip(names, predicted, strict=True):
        confusion[name][guess] += 1
    return {
        **_navigation_rates(results, lines),
        "per_group": {key: _navigation_rates(*map(list, zip(*items, strict=True))) for key, items in groups.items()},
        "per_type": {key: _navigation_rates(*map(list, zip(*items, strict=True))) for key, items in by_type.items()},
        "confusion_matrix": confusion,
    }


def grounding_metrics(records: Sequence[dict], fields: Sequence[dict], pro: bool) -> dict[str, Any]:
    """Accuracy overall, per platform, per element type, per platform and type (pro: per category and type too)."""
    hits = [in_box(_action(r["prediction"]), meta["bbox"]) for r, meta in zip(records, fields, strict=True)]
    lines = [_gt_fields(r, f) for r, f in zip(records, fields, strict=True)]
    ui_types = [str(meta.get("ui_type") or "unknown") for meta in fields]
    platforms = [meta["platform"] for meta in fields]

    def accuracy(samples: list[bool]) -> dict[str, Any]:
        counts = [{"samples": 1, "hits": int(hit)} for hit in samples]
        return {"num_samples": len(samples), **metric_values(GROUNDING_METRICS, counts)}

    def rates(keys: list[str]) -> dict[str, Any]:
        return {key: accuracy(v) for key, v in _grouped(keys, hits).items()}

    metrics: dict[str, Any] = accuracy(hits)
    metrics |= {"per_platform": rates(platforms), "per_ui_type": rates(ui_types)}
    metrics["per_platform_ui_type"] = rates([f"{p}-{u}" for p, u in zip(platforms, ui_types, strict=True)])
    if pro:
        categories = [str(meta.get("category") or "unknown") for meta in fields]
        metrics["per_category"] = rates(categories)
        metrics["per_category_ui_type"] = rates([f"{c}-{u}" for c, u in zip(categories, ui_types, strict=True)])
    return metrics | guir1_eval.grounding_numbers(lines)


def benchmark_metrics(benchmark: str, records: Sequence[dict], rows: Sequence[dict]) -> dict[str, Any]:
    """The benchmark's metrics of scored records (predictions.jsonl lines) for the runner rows they came from."""
    by_id = {str(row["id"]): row for row in rows}
    fields = [by_id[record["id"]]["benchmark"] | {"bbox": by_id[record["id"]]["bbox"]} for record in records]
    kind = check_benchmark(benchmark).kind
    if kind == "navigation":
        metrics = navigation_metrics(records, fields)
    else:
        metrics = grounding_metrics(records, fields, pro=benchmark == "screenspot_pro")
    return {"name": benchmark, "kind": kind, **metrics}


# ------------------------------------------------------------------------------------------------ tables

NAVIGATION_COLUMNS = ("num_samples", "type_accuracy", "grounding_accuracy", "text_accuracy", "step_success")
GUIR1_COLUMNS = ("guir1_type_accuracy", "guir1_grounding_accuracy", "guir1_text_accuracy", "guir1_step_accuracy")


def _number(row: dict, column: str) -> str:
    """A table cell: the value, and its 95% interval where the row has one."""
    value = row[column]
    text = "-" if value is None else f"{value:.4f}" if isinstance(value, float) else str(value)
    return text + (f" {interval_text(row[column + CI_SUFFIX])}" if column + CI_SUFFIX in row else "")


def _table(title: str, rows: dict[str, dict], columns: Sequence[str]) -> list[str]:
    lines = [f"| {title} | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    return lines + [f"| {key} | " + " | ".join(_number(row, c) for c in columns) + " |" for key, row in rows.items()]


def benchmark_tables(metrics: dict) -> str:
    """The benchmark's tables as markdown (report.md and the CLI's summary)."""
    name, parts = metrics["name"], [f"## Benchmark: {metrics['name']} ({BENCHMARKS[metrics['name']].description})"]
    if metrics["kind"] == "navigation":
        parts += [
            "",
            "r1_gui's metrics (step_success over every step) and, named guir1_*, GUI-R1's eval_omni.py's:",
            "",
        ]
        parts += _table(name, {"all": metrics}, NAVIGATION_COLUMNS + GUIR1_COLUMNS)
        for title, key in (("group", "per_group"), ("ground truth", "per_type")):
            parts += ["", *_table(title, metrics[key], NAVIGATION_COLUMNS + GUIR1_COLUMNS)]
        matrix = metrics["confusion_matrix"]
        columns = list(next(iter(matrix.values())))
        parts += ["", "Action names: ground truth (rows) against prediction (columns).", ""]
        parts += _table("ground truth \\ predicted", matrix, columns)
        return "\n".join(parts)
    parts += ["", *_table(name, {"all": metrics}, ("num_samples", "accuracy", "guir1_accuracy"))]
    tables = [("platform", "per_platform"), ("element type", "per_ui_type"), ("platform-type", "per_platform_ui_type")]
    tables += (
        [("category", "per_category"), ("category-type", "per_category_ui_type")] if "per_category" in metrics else []
    )
    for title, key in tables:
        parts += ["", *_table(title, metrics[key], ("num_samples", "accuracy"))]
    intervals = metrics["guir1_per_category" + CI_SUFFIX]
    guir1 = {
        key: {"guir1_accuracy": value, "guir1_accuracy" + CI_SUFFIX: intervals[key]}
        for key, value in metrics["guir1_per_category"].items()
    }
    parts += ["", *_table("GUI-R1 group-ui_type", guir1, ("guir1_accuracy",))]
    return "\n".join(parts)
