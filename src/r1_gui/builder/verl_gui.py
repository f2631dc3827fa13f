"""The verl GUI-agent recipe's parquet: reading it (``--input_format verl_gui``) and writing it (``--export verl_gui``).

One row per step. Columns: ``images`` (a list of {"bytes", "path"} images; the first is the step's screenshot),
``raw_prompt`` (the chat: a user message with an ``<image>`` and the text), ``extra_info`` (a struct or JSON text
with ``instruction``, ``expected_actions`` (mobile_use arguments, e.g. ``{"action": "click", "coordinate": [500,
300]}``; a list whose first entry is this step's action, or one dict), ``screen_width`` and ``screen_height`` (the
grid the coordinates are on: 999 x 999 for the mobile_use tool, or the screenshot's pixels), and optionally
``episode_id``, ``step``, ``history``), ``ground_truth`` (the expected action as JSON text; read when
``extra_info`` has no ``expected_actions``; also found under ``reward_model.ground_truth``) and ``data_source``.

Written files use the 999 grid, embed the screenshots, and read back to the same actions (tests/test_multi_turn.py),
except scrolls, which mobile_use cannot express: they are written as the equivalent swipe (`r1_gui.actions.mobile_use.scroll_as_swipe`). Their
``raw_prompt`` is the prompt those labels belong to, whatever the source's style: the mobile_use tool's system prompt
on the 999 grid (``prompts.system_prompt("mobile_use", "grid999")``) and the mobile_use user text
(``prompts.mobile_use_task``: the instruction, and the earlier steps where there are any).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from r1_gui.actions import Action, format_action, parse_action
from r1_gui.actions.mobile_use import scroll_as_swipe
from r1_gui.prompts import history_steps, history_text, mobile_use_task, system_prompt

from .guir1 import ImageColumn, ParquetRows, read_parquet_with
from .sources import BadRecord, Example, episode_and_step, in_episode_form

REQUIRED_COLUMNS = ("images", "extra_info")
GRID = 999
DATA_SOURCE = "r1_gui"


def load_verl_gui(path: Path) -> pa.Table:
    """The table of a verl GUI parquet file; ValueError naming the file when it is unreadable or lacks columns."""
    expected = "a verl GUI file has images, raw_prompt, extra_info (instruction, expected_actions, screen_width, ...)"
    return read_parquet_with(path, REQUIRED_COLUMNS, "verl GUI", expected)


def first_images(table: pa.Table) -> ImageColumn:
    """The first image of each row's ``images`` list, as an ImageColumn (a missing or empty list: invalid)."""
    column = table.column("images").combine_chunks()
    if not (pa.types.is_list(column.type) or pa.types.is_large_list(column.type)):
        return ImageColumn(pa.chunked_array([column]))
    lengths = column.value_lengths().fill_null(0).to_pylist()
    offsets = column.offsets.to_pylist()
    values = column.values
    taken = pa.array([offsets[i] if lengths[i] else 0 for i in range(len(column))], pa.int64())
    first = values.take(taken) if len(values) else pa.nulls(len(column), values.type)
    mask = pa.array([not n for n in lengths])
    return ImageColumn(pa.chunked_array([pa.compute.if_else(mask, pa.scalar(None, first.type), first)]))


def _mapping(value: Any) -> dict:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    return value if isinstance(value, dict) else {}


def _expected_action(row: dict, info: dict) -> Any:
    expected = info.get("expected_actions")
    if isinstance(expected, str):
        try:
            expected = json.loads(expected)
        except ValueError:
            expected = None
    if isinstance(expected, list):
        expected = expected[0] if expected else None
    if expected is None:
        truth = row.get("ground_truth") or _mapping(row.get("reward_model")).get("ground_truth")
        expected = _mapping(truth) if truth else None
        if isinstance(expected, dict) and "arguments" in expected:
            expected = expected["arguments"]
    return expected


def verl_action(arguments: Any, screen_width: Any, screen_height: Any) -> Action | None:
    """The canonical action of mobile_use arguments whose coordinates are on a screen_width x screen_height grid."""
    if not isinstance(arguments, dict):
        return None
    try:
        size = (float(screen_width), float(screen_height))
    except (TypeError, ValueError):
        return None
    if size[0] <= 0 or size[1] <= 0:
        return None
    call = json.dumps({"name": "mobile_use", "arguments": arguments})
    return parse_action(call, "mobile_use", coordinates="pixels", image_size=size)


def verl_gui_example(row: dict, index: int, rows: ParquetRows) -> Example:
    """The example of one verl GUI row, or BadRecord. Embedded images get a path under output_images."""
    info = _mapping(row.get("extra_info"))
    instruction = info.get("instruction")
    missing = [] if isinstance(instruction, str) and instruction.strip() else ["extra_info.instruction"]
    missing += [] if rows.images.has_bytes(index) or rows.images.path(index) else ["images"]
    expected = _expected_action(row, info)
    rows.check(missing + ([] if expected is not None else ["extra_info.expected_actions"]))
    episode = info.get("episode_id")
    step = info.get("step")
    numbered = episode is not None and isinstance(step, int)
    stem = f"{episode}_{int(step)}" if numbered else f"{rows.file.stem}_{index:06d}"
    screenshot = rows.screenshot(index, stem)
    size = screenshot[1]
    grid = (info.get("screen_width", size[0]), info.get("screen_height", size[1]))
    action = verl_action(expected, *grid)
    code = format_action(action, "aguvis") if action is not None else ""
    action = parse_action(code, "aguvis") if code else None  # canonical: action_json is what the solution parses to
    if action is None:
        raise BadRecord("unparsable_action", f"expected action {expected!r} on a {grid} grid does not parse")
    history = history_steps(info.get("history"))
    instruction = instruction.strip()
    if numbered:
        episode_id = str(episode)
    elif in_episode_form(stem):
        episode_id, step = episode_and_step(stem)
    else:
        episode_id, step = stem, 0
    return rows.example(stem, screenshot, code, action, instruction, history, episode_id, step)


def mobile_use_arguments(action: Action) -> dict:
    """The mobile_use arguments of an action, coordinates on the 999 grid (a scroll as its swipe)."""
    call = format_action(scroll_as_swipe(action), "mobile_use", coordinates="grid999")
    body = call.split("<tool_call>", 1)[1].rsplit("</tool_call>", 1)[0]
    return json.loads(body)["arguments"]


def verl_gui_row(example: Example, image_bytes: bytes) -> dict:
    """One verl GUI row of an example (999 grid, the screenshot embedded)."""
    arguments = mobile_use_arguments(example.action)
    info = {
        "instruction": example.instruction,
        "expected_actions": json.dumps([arguments]),
        "screen_width": GRID,
        "screen_height": GRID,
        "episode_id": example.episode_id,
        "step": example.step,
        "history": json.dumps(example.history),
    }
    task = mobile_use_task(example.instruction, history_text(example.history) if example.history else None)
    prompt = [
        {"role": "system", "content": system_prompt("mobile_use", "grid999")},  # the tool and grid of the labels
        {"role": "user", "content": "<image>" + task},
    ]
    return {
        "data_source": DATA_SOURCE,
        "images": [{"bytes": image_bytes, "path": None}],
        "raw_prompt": prompt,
        "extra_info": info,
        "ground_truth": json.dumps(arguments),
    }


def export_verl_gui(folder: Path, splits: dict[str, list[Example]], progress: bool = True) -> list[str]:
    """verl GUI parquet files under folder/verl_gui/ (one per split)."""
    from tqdm import tqdm

    target = folder / "verl_gui"
    target.mkdir()
    for split, examples in splits.items():
        if examples:
            shown = tqdm(examples, desc=f"verl_gui {split}", unit="row", disable=not progress)
            rows = [verl_gui_row(example, example.read_image_bytes()) for example in shown]
            pq.write_table(pa.Table.from_pylist(rows), target / f"{split}.parquet")
    return sorted(str(path.relative_to(folder)) for path in target.iterdir())
