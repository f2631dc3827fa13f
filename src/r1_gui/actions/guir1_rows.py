"""GUI-R1's test-file rows (`gt_action`, `gt_bbox`, `gt_input_text`) read as r1_gui Actions, once for the builder
(`--input_format guir1`) and the benchmark evaluation (`--benchmark`), so both read a row the same way."""

from __future__ import annotations

import json
from typing import Any

from .coords import read_bbox
from .guir1 import NO_TEXT
from .parse import parse_action


def number_list(value: Any) -> list[float]:
    """A list of numbers (or its JSON text) as floats, else []. Example: ``number_list("[3, 4.5]") == [3.0, 4.5]``."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return []
    if not isinstance(value, (list, tuple)):
        return []
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        return []
    return [float(v) for v in value]


def action_and_box(row: dict, size: tuple[int, int]):
    """The canonical action of a row (via r1_gui.actions' guir1 parser) and its normalized target box."""
    name = row["gt_action"].strip()
    text = row.get("gt_input_text")
    entry: dict[str, Any] = {"action": name, "input_text": text if isinstance(text, str) else NO_TEXT}
    numbers, box = number_list(row.get("gt_bbox")), None
    if name.lower() == "swipe" and len(numbers) == 4:
        entry["point"], entry["end_point"] = numbers[:2], numbers[2:]
    elif len(numbers) == 4 and min(numbers) >= 0:
        x1, y1, x2, y2 = numbers
        entry["point"] = [(x1 + x2) / 2, (y1 + y2) / 2]
        box = read_bbox([x1 / size[0], y1 / size[1], x2 / size[0], y2 / size[1]], normalized=True)
        box = None if box is None else list(box)
    elif len(numbers) == 2:
        entry["point"] = numbers
    action = parse_action(json.dumps(entry), "guir1", coordinates="pixels", image_size=size)
    return action, box
