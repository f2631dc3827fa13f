"""Small test sets in the benchmarks' GUI-R1 format, from the synthetic screens (for tests and users without data).

    python dataset/make_synthetic.py --format guir1 --output_dir data/synthetic-guir1 --episodes 20 --width 224 \\
        --height 448
    python dataset/make_synthetic.py --format screenspot --output_dir data/synthetic-screenspot --episodes 20

``--format guir1`` writes DIR/synthetic_guir1_test.parquet, one row per episode step, in the navigation sets'
format (AndroidControl / GUI-Odyssey as GUI-R1 released them): image ({"bytes", "path"}, PNG), instruction
(the episode goal), history ("Step N: ..." lines, "None" first), gt_action (GUI-R1 name), gt_bbox (original
pixels: the target element's box [x1, y1, x2, y2] for clicks and long presses, whose point is its centre; a swipe's
start and end; [-100, -100] otherwise), gt_input_text, group (the synthetic task), task_type "high", image_size.
``--format screenspot`` writes DIR/synthetic_screenspot_test.parquet, ScreenSpot's grounding format as GUI-R1
released it: image, instruction (the element's label), gt_bbox (its box in pixels), ui_type ("icon" for app icons,
switches and buttons drawn as symbols, else "text"), group "mobile", image_size; up to ``ELEMENTS_PER_SCREEN``
elements of each step's screen. Clicks are written at element centres (``click_jitter`` is not used).
"""

from __future__ import annotations

import io
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from r1_gui.builder.guir1 import TASK_TYPE, guir1_fields
from r1_gui.prompts import history_text
from r1_gui.synthetic.episodes import iter_episodes, synthetic_config

FORMATS = ("guir1", "screenspot")
FILES = {"guir1": "synthetic_guir1_test.parquet", "screenspot": "synthetic_screenspot_test.parquet"}
ELEMENTS_PER_SCREEN = 3
ICON_ELEMENTS = ("icon", "switch", "back_button", "enter_key")
# The SyntheticConfig settings a test set takes: clicks stay at element centres with 4 decimals (no click_jitter,
# no decimals), so a ground-truth point is its element's centre.
SCREEN_SETTINGS = ("width", "height", "grid", "task_mix", "apps")


def _png(screen, size) -> bytes:
    buffer = io.BytesIO()
    screen.render(size).save(buffer, "PNG")
    return buffer.getvalue()


def _label(name: str) -> str:
    """An element's instruction from its name: "icon:Clock" -> "Clock icon", "search_bar" -> "search bar"."""
    kind, _, label = name.partition(":")
    kind = kind.replace("_", " ")
    return f"{label} {kind}" if label else kind


def _navigation_row(episode, number: int, step, size, image_path: str) -> dict:
    action = step.action
    gt_action, gt_bbox, gt_input_text = guir1_fields(action, size.width, size.height)
    if step.target is not None and action.type != "swipe":  # the target element's box, not only its point
        gt_bbox = [float(v) for v in step.target]
    return {
        "image": {"bytes": _png(step.screen, size), "path": image_path},
        "instruction": episode.instruction,
        "history": history_text([done.description for done in episode.steps[:number]]),
        "gt_action": gt_action,
        "gt_bbox": [round(value, 2) for value in gt_bbox],
        "gt_input_text": gt_input_text,
        "group": episode.task,
        "task_type": TASK_TYPE,
        "image_size": [size.width, size.height],
    }


def _grounding_rows(step, size, image_path: str) -> list[dict]:
    elements = sorted(step.screen.elements(size).items())[:ELEMENTS_PER_SCREEN]
    image = _png(step.screen, size) if elements else b""
    return [
        {
            "image": {"bytes": image, "path": image_path},
            "instruction": _label(name),
            "gt_bbox": [float(v) for v in box],
            "ui_type": "icon" if name.split(":")[0] in ICON_ELEMENTS else "text",
            "group": "mobile",
            "image_size": [size.width, size.height],
        }
        for name, box in elements
    ]


def write_benchmark_set(
    output_dir: str | Path, format: str, episodes: int, seed: int = 0, *, overwrite: bool = False, **config
) -> dict:
    """Write the ``format`` test set of ``episodes`` synthetic episodes into output_dir; a summary (rows, file).
    ``config``: the synthetic screens' settings (``SCREEN_SETTINGS``). An existing file is
    replaced only with ``overwrite``."""
    if format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {format!r}")
    settings = synthetic_config(**config)
    path = Path(output_dir) / FILES[format]
    if path.exists() and not overwrite:
        raise FileExistsError(f"{path} exists; pass --overwrite to replace it")
    rows = []
    for episode_id, episode in iter_episodes(settings, seed, episodes, None):
        for number, step in enumerate(episode.steps):
            image_path = f"synthetic_{episode_id}_{number}.png"
            if format == "guir1":
                rows.append(_navigation_row(episode, number, step, settings.size, image_path))
            else:
                rows.extend(_grounding_rows(step, settings.size, image_path))
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.with_name(path.name + ".tmp")
    pq.write_table(pa.Table.from_pylist(rows), staging)
    staging.replace(path)
    return {"rows": len(rows), "file": str(path), "format": format}
