"""GUI-R1 parquet files: reading them (``--input_format guir1``) and writing them (``--export guir1``).

GUI-R1's schema: image ({"bytes", "path"} struct, or a path string), instruction, history (a string of
"Step N: ..." lines), gt_action (GUI-R1 action name), gt_bbox (pixels of that image: a point [x, y] or a box
[x1, y1, x2, y2]; [-100, -100] when the action has no point), gt_input_text ("no input text" when none) and
task_type ("high": the goal is the episode's instruction; "low": a step instruction).

Action names and their input text follow ``r1_gui.actions`` (its ``guir1`` format); every record is parsed by
``parse_action(..., "guir1", coordinates="pixels", image_size=(width, height))``. A swipe, which GUI-R1 has no
field for, is written as gt_action "swipe" with gt_bbox [x1, y1, x2, y2] = start and end point (this project's
extension, read back the same way). A 4-value gt_bbox on any other action is a target box: the action's point
is its centre and it becomes the bbox column.
"""

from __future__ import annotations

import hashlib
import io
import os
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image

from r1_gui.actions import Action, format_action, parse_action
from r1_gui.actions.guir1 import guir1_ground_truth
from r1_gui.actions.guir1_rows import action_and_box
from r1_gui.prompts import PROBLEM_TEMPLATE, history_steps, history_text

from .sources import BadRecord, Example, check_image, episode_and_step, in_episode_form

GUIR1_COLUMNS = ("image", "instruction", "history", "gt_action", "gt_bbox", "gt_input_text", "task_type")
REQUIRED_COLUMNS = ("image", "instruction", "gt_action")
TASK_TYPE = "high"  # our instructions are episode goals
_EXTENSIONS = {"PNG": ".png", "JPEG": ".jpg", "WEBP": ".webp", "GIF": ".gif", "BMP": ".bmp"}


def load_guir1(path: Path) -> pa.Table:
    """The table of a GUI-R1 parquet file; ValueError naming the file when it is unreadable or lacks columns."""
    return read_parquet_with(path, REQUIRED_COLUMNS, "GUI-R1", f"a GUI-R1 file has {', '.join(GUIR1_COLUMNS)}")


def read_parquet_with(path: Path, required: tuple[str, ...], kind: str, expected: str) -> pa.Table:
    """The table of a `kind` parquet file; ValueError naming the file when it is unreadable or lacks `required`."""
    try:
        table = pq.read_table(path)
    except (pa.ArrowException, OSError) as error:
        raise ValueError(f"{path} is not a readable parquet file ({error}); expected {kind} columns") from None
    missing = [name for name in required if name not in table.column_names]
    if missing:
        raise ValueError(
            f"{path} has no column(s) {', '.join(missing)} (it has {', '.join(table.column_names)}); {expected}"
        )
    return table


class ImageColumn:
    """The bytes and paths of a GUI-R1 image column: a {"bytes", "path"} struct, a path string or raw bytes."""

    def __init__(self, column: pa.ChunkedArray):
        array = column.combine_chunks()
        rows = len(array)
        self.valid = array.is_valid().to_pylist()
        self.bytes: pa.Array | None = None
        self.paths: list[str | None] = [None] * rows
        if pa.types.is_struct(array.type):
            names = {array.type.field(i).name for i in range(array.type.num_fields)}
            self.bytes = array.field("bytes") if "bytes" in names else None
            self.paths = array.field("path").to_pylist() if "path" in names else self.paths
        elif pa.types.is_string(array.type) or pa.types.is_large_string(array.type):
            self.paths = array.to_pylist()
        elif pa.types.is_binary(array.type) or pa.types.is_large_binary(array.type):
            self.bytes = array

    def has_bytes(self, row: int) -> bool:
        return self.valid[row] and self.bytes is not None and self.bytes[row].is_valid

    def path(self, row: int) -> str | None:
        path = self.paths[row] if self.valid[row] else None
        return path if isinstance(path, str) and path else None


def _open_size(source, label: str, verify: bool) -> tuple[tuple[int, int], str]:
    """(size, PIL format) from the image header; BadRecord("unreadable_image") when it is not an image."""
    try:
        with Image.open(source) as image:
            size, image_format = image.size, image.format or "PNG"
            if verify:
                image.verify()
    except Exception as error:  # PIL raises many types for broken files
        raise BadRecord("unreadable_image", f"image {label}: {error}") from None
    return size, image_format


def row_screenshot(images: ImageColumn, index: int, stem: str, image_dir: str, output_images: str, verify: bool):
    """(path, size, blob) of a row's screenshot: embedded bytes get a path under output_images (written on output),
    a path is taken relative to image_dir; BadRecord when it is missing or unreadable."""
    if images.has_bytes(index):
        size, image_format = _open_size(io.BytesIO(images.bytes[index].as_py()), f"bytes of row {index}", verify)
        return os.path.join(output_images, stem + _EXTENSIONS.get(image_format, ".png")), size, (images.bytes, index)
    image_path = images.path(index)
    path = image_path if os.path.isabs(image_path) else os.path.join(image_dir, image_path)
    check_image(path, verify=False)
    size, _ = _open_size(path, path, verify)
    return path, size, None


@dataclass(frozen=True)
class ParquetRows:
    """One parquet input's rows, as the builder reads them (GUI-R1's and the verl recipe's formats): the screenshot
    column, the file, the folder relative image paths are under, the folder embedded screenshots are written to, the
    ids taken so far (id -> file), whether every screenshot is opened, and the examples' system prompt."""

    images: ImageColumn
    file: Path
    image_dir: str
    output_images: str
    taken: dict[str, str]
    verify: bool
    system: str

    def check(self, missing: list[str]) -> None:
        if missing:
            raise BadRecord("missing_keys", f"no usable {' or '.join(missing)}")

    def screenshot(self, index: int, stem: str):
        """(path, size, blob) of row ``index``'s screenshot, id ``stem``; BadRecord when the id was taken or the
        screenshot is missing or unreadable."""
        if stem in self.taken:
            raise BadRecord("duplicate_id", f"id {stem!r} was already taken from {self.taken[stem]}")
        return row_screenshot(self.images, index, stem, self.image_dir, self.output_images, self.verify)

    def example(self, stem: str, screenshot: tuple, code: str, action: Action, instruction: str, history: list[str],
                episode_id: str, step: int, source: str | None = None, bbox: list[float] | None = None) -> Example:  # fmt: skip
        path, _, blob = screenshot
        return Example(
            id=stem,
            image=path,
            problem=PROBLEM_TEMPLATE.format(instruction=instruction, history=history_text(history)),
            code=code,
            instruction=instruction,
            history=history,
            thought="",
            action=action,
            episode_id=episode_id,
            step=int(step),
            source=source or self.file.name,
            bbox=bbox,
            system=self.system,
            blob=blob,
        )


def guir1_example(row: dict, index: int, rows: ParquetRows) -> Example:
    """The example of one GUI-R1 row, or BadRecord. Embedded images get a path under output_images."""
    instruction, gt_action, image_path = row.get("instruction"), row.get("gt_action"), rows.images.path(index)
    missing = [] if isinstance(instruction, str) else ["'instruction'"]
    missing += [] if isinstance(gt_action, str) and gt_action.strip() else ["'gt_action'"]
    rows.check(missing + ([] if rows.images.has_bytes(index) or image_path else ["'image'"]))
    stem = os.path.splitext(os.path.basename(image_path))[0] if image_path else f"{rows.file.stem}_{index:06d}"
    screenshot = rows.screenshot(index, stem)
    size = screenshot[1]
    action, box = action_and_box(row, size)
    code = format_action(action, "aguvis") if action is not None else ""
    action = parse_action(code, "aguvis")  # canonical: action_json is exactly what the solution parses to
    if action is None:
        raise BadRecord(
            "unparsable_action", f"gt_action {gt_action!r} with gt_bbox {row.get('gt_bbox')!r} does not parse"
        )
    history = history_steps(row.get("history"))
    instruction = instruction.strip()
    if in_episode_form(stem):
        episode_id, step = episode_and_step(stem)
    else:  # no episode in the name: rows with the same instruction form one episode, ordered by history length
        episode_id, step = f"{rows.file.stem}_{hashlib.sha1(instruction.encode()).hexdigest()[:12]}", len(history)
    task_type = row.get("task_type")
    source = f"{rows.file.name} ({task_type})" if isinstance(task_type, str) and task_type else None
    return rows.example(stem, screenshot, code, action, instruction, history, episode_id, step, source, box)


def guir1_row(example: Example, image_bytes: bytes) -> dict:
    """The GUI-R1 export row of an example: gt_bbox in pixels of the original screenshot."""
    try:
        with Image.open(io.BytesIO(image_bytes)) as image:
            width, height = image.size
    except Exception as error:  # PIL raises many types for broken files
        raise ValueError(
            f"GUI-R1 export: cannot read the size of {example.image} ({error}); --verify_images skips such images"
        ) from None
    gt_action, gt_bbox, gt_input_text = guir1_fields(example.action, width, height)
    # 4 decimals of a pixel: reading back divides by the size, far below the 4 decimals of the Aguvis code
    return {
        "image": {"bytes": image_bytes, "path": os.path.basename(example.image)},
        "instruction": example.instruction,
        "history": history_text(example.history),
        "gt_action": gt_action,
        "gt_bbox": [round(value, 4) for value in gt_bbox],
        "gt_input_text": gt_input_text,
        "task_type": TASK_TYPE,
    }


def guir1_fields(action: Action, width: float, height: float) -> tuple[str, list[float], str]:
    """(gt_action, gt_bbox, gt_input_text) of an action as a GUI-R1 row writes them, gt_bbox in pixels of a
    width x height screenshot (``r1_gui.actions.guir1.guir1_ground_truth``, without a target box)."""
    truth = guir1_ground_truth(action, (width, height))
    return truth["action"], truth["gt_bbox"], truth["input_text"]
