"""The GUI-R1 action format: ``[{'action': 'click', 'point': [x, y], 'input_text': 'no input text'}]``.

The text is a Python literal or JSON holding one dict (or a one-element list of it); it is read with
``json.loads`` or ``ast.literal_eval`` only. Points are pixels of the resized image by default. Actions that take
no point carry GUI-R1's placeholder ``[-100, -100]`` (any negative point counts as "no point"); actions that take
no text carry ``'no input text'``. Action names are matched case-insensitively.

Mapping (GUI-R1 name -> canonical type); the desktop names follow GUI-R1's desktop prompt, and the names marked
(ext) are this project's extensions so that every canonical type has a form:

- click, long_press -> click, long_press (point)
- doubleclick, rightclick, moveto, dragto (ext) -> double_click, right_click, move_to, drag_to (point)
- swipe (ext) -> swipe (``point`` = start, ``end_point`` = end)
- type, open_app, answer (ext) -> type, open_app, answer (``input_text``)
- scroll -> scroll (``input_text`` = up/down/left/right, the content direction as in ``pyautogui.scroll``;
  a non-negative ``point`` is where to scroll)
- press_back, press_home -> back, home
- enter, press_enter -> press ("enter",) (written "enter", GUI-R1's name); any other ``press_<key>`` -> press
  (key,)
- press, hotkey (ext) -> press, hotkey with ``input_text`` keys joined by "+" (e.g. 'ctrl+c')
- wait (ext) -> wait (``input_text`` seconds, optional)
- complete, impossible -> terminate success, failure (also ``terminate`` with input_text success/failure)
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence
from typing import Any

from .aguvis import format_number, quote
from .coords import coordinate_scale, denormalize_point, to_unit
from .core import DIRECTIONS, STATUSES, Action, answer_text, is_number, wait_action

NO_TEXT = "no input text"
GUIR1_NO_POINT = (-100, -100)  # GUI-R1's point (pixels) for an action without one

_POINT_NAMES = {
    "click": "click",
    "long_press": "long_press",
    "doubleclick": "double_click",
    "double_click": "double_click",
    "rightclick": "right_click",
    "right_click": "right_click",
    "moveto": "move_to",
    "move_to": "move_to",
    "dragto": "drag_to",
    "drag_to": "drag_to",
}
_FORMAT_POINT_NAMES = {
    "click": "click",
    "long_press": "long_press",
    "double_click": "doubleclick",
    "right_click": "rightclick",
    "move_to": "moveto",
    "drag_to": "dragto",
}
_TEXT_NAMES = ("type", "open_app", "answer")
_FIXED = {
    "press_back": Action("back"),
    "press_home": Action("home"),
    "enter": Action("press", keys=("enter",)),
    "complete": Action("terminate", status="success"),
    "impossible": Action("terminate", status="failure"),
}
_SIMPLE_KEY = re.compile(r"\w+")


def read_literal(text: str) -> Any:
    """The JSON or Python-literal value of ``text`` (``json.loads``, then ``ast.literal_eval``; never ``eval``).
    Raises ValueError when it is neither, or not ``answer_text`` (longer than ``MAX_ANSWER_CHARS``).
    Example: ``read_literal("[{'action': 'click'}]") == [{"action": "click"}]``."""
    text = answer_text(text).strip()
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    try:
        return ast.literal_eval(text)
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError, OverflowError) as error:
        raise ValueError(f"not a literal: {error}") from None


def _point(value: Any, scale: tuple[float, float]) -> tuple[float, float] | None:
    if not isinstance(value, (list, tuple)) or len(value) != 2 or not all(is_number(v) for v in value):
        return None
    x, y = to_unit(value[0], scale[0]), to_unit(value[1], scale[1])
    return None if x is None or y is None else (x, y)


def _is_placeholder(value: Any) -> bool:
    """GUI-R1 writes [-100, -100] (or leaves the point out) for actions that take no point."""
    if value is None:
        return True
    return isinstance(value, (list, tuple)) and any(is_number(v) and v < 0 for v in value)


def _split_keys(text: Any) -> tuple[str, ...] | None:
    if not isinstance(text, str):
        return None
    keys = tuple(key.strip() for key in text.split("+"))
    return keys if keys and all(keys) else None


def _build(entry: dict, scale: tuple[float, float]) -> Action | None:
    name = entry.get("action")
    if not isinstance(name, str):
        return None
    name = name.strip()
    lowered = name.lower()
    point, input_text = entry.get("point"), entry.get("input_text")
    if lowered in _POINT_NAMES:
        xy = _point(point, scale)
        return None if xy is None else Action(_POINT_NAMES[lowered], x=xy[0], y=xy[1])
    if lowered == "swipe":
        start, end = _point(point, scale), _point(entry.get("end_point"), scale)
        return None if start is None or end is None else Action("swipe", x=start[0], y=start[1], x2=end[0], y2=end[1])
    if lowered in _TEXT_NAMES:
        return Action(lowered, text=input_text) if isinstance(input_text, str) else None
    if lowered == "scroll":
        direction = input_text.strip().lower() if isinstance(input_text, str) else None
        if direction not in DIRECTIONS:
            return None
        if _is_placeholder(point):
            return Action("scroll", direction=direction)
        xy = _point(point, scale)
        return None if xy is None else Action("scroll", direction=direction, x=xy[0], y=xy[1])
    if lowered in _FIXED:
        return _FIXED[lowered]
    if lowered.startswith("press_"):
        key = name[len("press_") :]
        return Action("press", keys=(key,)) if key else None
    if lowered in ("press", "hotkey"):
        keys = _split_keys(input_text)
        return None if keys is None else Action(lowered, keys=keys)
    if lowered == "wait":
        return _build_wait(input_text)
    if lowered == "terminate":
        status = input_text.strip().lower() if isinstance(input_text, str) else None
        return Action("terminate", status=status) if status in STATUSES else None
    return None


def _build_wait(input_text: Any) -> Action | None:
    if input_text is None or input_text == NO_TEXT:
        return Action("wait")
    if isinstance(input_text, bool) or not isinstance(input_text, (str, int, float)):
        return None
    try:
        seconds = float(input_text)
    except ValueError:
        return None
    return wait_action(seconds)


def parse_guir1(text: str, coordinates: str = "pixels", image_size: Sequence[float] | None = None) -> Action | None:
    """Parse a GUI-R1 answer (see the module docstring); None when it is not exactly one known action."""
    try:
        scale = coordinate_scale(coordinates, image_size)
        entry = read_literal(text)
        if isinstance(entry, list):
            if len(entry) != 1:
                return None
            entry = entry[0]
        return _build(entry, scale) if isinstance(entry, dict) else None
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError, OverflowError):
        return None


def _format_point(x: float, y: float, coordinates: str, image_size: Sequence[float] | None) -> str:
    a, b = denormalize_point(x, y, coordinates, image_size)
    if coordinates == "normalized":
        return f"[{format_number(a)}, {format_number(b)}]"
    return f"[{a}, {b}]"


def guir1_ground_truth(
    action: Action, scale: Sequence[float] | None, bbox: Sequence[float] | None = None
) -> dict[str, Any]:
    """GUI-R1's ground truth for ``action``, as its dataset.py builds the JSON its accuracy reward reads:
    {"action": ``guir1_name``, "gt_bbox": the normalized target box [x1, y1, x2, y2] (``bbox``) or else the point
    [x, y] times ``scale`` (x by its width, y by its height: pixels of the screenshot the model saw for GUI-R1),
    "input_text": the format's text ("no input text" when none; a scroll's direction)}. An action without a point
    or box gets GUI-R1's [-100, -100] placeholder; a swipe its start and end point (this project's extension);
    with ``scale`` None, gt_bbox is None where it needs one. ValueError for an action the format cannot express.
    Example: ``guir1_ground_truth(Action("click", x=0.5, y=0.25), (448, 1036))`` ->
    {"action": "click", "gt_bbox": [224.0, 259.0], "input_text": "no input text"}."""
    name, text = _name_and_text(action)
    if bbox is not None:
        corners = [bbox[0], bbox[1], bbox[2], bbox[3]]
    elif action.type == "swipe":
        corners = [action.x, action.y, action.x2, action.y2]
    elif action.point is not None:
        corners = [action.x, action.y]
    else:
        return {"action": name, "gt_bbox": [float(v) for v in GUIR1_NO_POINT], "input_text": text}
    if scale is None:
        return {"action": name, "gt_bbox": None, "input_text": text}
    gt_bbox = [value * scale[index % 2] for index, value in enumerate(corners)]  # as dataset.py: gt_bbox[0] *= x
    return {"action": name, "gt_bbox": gt_bbox, "input_text": text}


def guir1_name(action: Action) -> str | None:
    """The GUI-R1 action name ``format_guir1`` writes for ``action`` (e.g. "press_back", "complete"), or None when
    the format cannot express it. Example: ``guir1_name(Action("terminate", status="failure")) == "impossible"``."""
    try:
        return _name_and_text(action)[0]
    except ValueError:
        return None


def _name_and_text(action: Action) -> tuple[str, str]:
    kind = action.type
    if kind in _FORMAT_POINT_NAMES:
        return _FORMAT_POINT_NAMES[kind], NO_TEXT
    if kind in _TEXT_NAMES:
        return kind, action.text
    if kind == "swipe":
        return "swipe", NO_TEXT
    if kind == "hotkey":
        return "hotkey", "+".join(action.keys)
    if kind == "scroll":
        return "scroll", action.direction
    if kind in ("back", "home"):
        return f"press_{kind}", NO_TEXT
    if kind == "press":
        (key, *more) = action.keys
        if more or not _SIMPLE_KEY.fullmatch(key) or key.lower() in ("back", "home"):
            return "press", "+".join(action.keys)
        return ("enter" if key.lower() == "enter" else f"press_{key}"), NO_TEXT  # GUI-R1's own name for Enter
    if kind == "terminate":
        return ("complete" if action.status == "success" else "impossible"), NO_TEXT
    if kind == "wait":
        if action.seconds is None:
            return "wait", NO_TEXT
        return "wait", repr(int(action.seconds) if action.seconds.is_integer() else action.seconds)
    raise ValueError(f"guir1 format cannot express a {kind!r} action")


def format_guir1(action: Action, coordinates: str = "pixels", image_size: Sequence[float] | None = None) -> str:
    """The GUI-R1 answer for ``action``; ``parse_guir1`` reads it back to an equal Action."""
    name, text = _name_and_text(action)
    point = "[-100, -100]"
    if action.point is not None:
        point = _format_point(action.x, action.y, coordinates, image_size)
    end = ""
    if action.type == "swipe":
        end = f", 'end_point': {_format_point(action.x2, action.y2, coordinates, image_size)}"
    return f"[{{'action': {quote(name)}, 'point': {point}{end}, 'input_text': {quote(text)}}}]"
