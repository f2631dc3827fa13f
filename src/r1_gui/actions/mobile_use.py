"""The Qwen3-VL ``mobile_use`` tool call, on a 999 x 999 grid by default:

    <tool_call>
    {"name": "mobile_use", "arguments": {"action": "click", "coordinate": [850, 50]}}
    </tool_call>

Read with ``json.loads`` only; the ``<tool_call>`` tags are optional, and so is the outer
``{"name", "arguments"}`` wrapper (a bare ``{"action": ...}`` object parses too).

Actions (arguments) and the action types they give:

- ``click``, ``long_press`` (coordinate; ``time`` is ignored) -> click, long_press
- ``swipe`` (coordinate, coordinate2) -> swipe
- ``type``, ``answer`` (text) -> type, answer; ``open`` (text) -> open_app
- ``key`` (text) -> press (text,)
- ``system_button`` (button: Back, Home, Enter, Menu; any case) -> back, home, press ("enter",), press ("menu",)
- ``wait`` (time, optional) -> wait (seconds)
- ``terminate`` (status: success, failure; "fail" too) -> terminate

Not expressible here (``format_mobile_use`` raises ValueError): scroll (``scroll_as_swipe`` gives the swipe that
stands for it), the desktop types (double_click, right_click, move_to, drag_to), hotkey, and press with more than
one key.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .coords import coordinate_scale, denormalize_point, to_unit
from .core import Action, answer_text, is_number, wait_action

TOOL_NAME = "mobile_use"

_BUTTONS = {
    "back": Action("back"),
    "home": Action("home"),
    "enter": Action("press", keys=("enter",)),
    "menu": Action("press", keys=("menu",)),
}
_STATUSES = {"success": "success", "failure": "failure", "fail": "failure"}


def _point(value: Any, scale: tuple[float, float]) -> tuple[float, float] | None:
    if not isinstance(value, list) or len(value) != 2 or not all(is_number(v) for v in value):
        return None
    x, y = to_unit(value[0], scale[0]), to_unit(value[1], scale[1])
    return None if x is None or y is None else (x, y)


def _arguments(text: str) -> dict | None:
    text = text.strip()
    if text.startswith("<tool_call>"):
        text = text[len("<tool_call>") :]
    if text.endswith("</tool_call>"):
        text = text[: -len("</tool_call>")]
    call = json.loads(text)
    if not isinstance(call, dict):
        return None
    if "arguments" in call:
        if call.get("name", TOOL_NAME) != TOOL_NAME:
            return None
        arguments = call["arguments"]
        if isinstance(arguments, str):  # some models emit the arguments as a JSON string
            arguments = json.loads(arguments)
        return arguments if isinstance(arguments, dict) else None
    return call if "action" in call else None


def _build(arguments: dict, scale: tuple[float, float]) -> Action | None:
    name = arguments.get("action")
    text = arguments.get("text")
    if name in ("click", "long_press"):
        xy = _point(arguments.get("coordinate"), scale)
        return None if xy is None else Action(name, x=xy[0], y=xy[1])
    if name == "swipe":
        start, end = _point(arguments.get("coordinate"), scale), _point(arguments.get("coordinate2"), scale)
        return None if start is None or end is None else Action("swipe", x=start[0], y=start[1], x2=end[0], y2=end[1])
    if name in ("type", "answer", "open"):
        return Action("open_app" if name == "open" else name, text=text) if isinstance(text, str) else None
    if name == "key":
        return Action("press", keys=(text,)) if isinstance(text, str) and text else None
    if name == "system_button":
        button = arguments.get("button")
        return _BUTTONS.get(button.strip().lower()) if isinstance(button, str) else None
    if name == "wait":
        return wait_action(arguments.get("time"))
    if name == "terminate":
        status = arguments.get("status")
        status = _STATUSES.get(status.strip().lower()) if isinstance(status, str) else None
        return None if status is None else Action("terminate", status=status)
    return None


def parse_mobile_use(
    text: str, coordinates: str = "grid999", image_size: Sequence[float] | None = None
) -> Action | None:
    """Parse one mobile_use tool call (see the module docstring); None when it is not one known action."""
    try:
        scale = coordinate_scale(coordinates, image_size)
        arguments = _arguments(answer_text(text))
        return None if arguments is None else _build(arguments, scale)
    except (ValueError, TypeError, RecursionError, MemoryError, OverflowError):
        return None


def _coordinate(x: float, y: float, coordinates: str, image_size: Sequence[float] | None) -> list:
    a, b = denormalize_point(x, y, coordinates, image_size)
    if coordinates == "normalized":
        return [round(a, 4), round(b, 4)]
    return [a, b]


def _format_arguments(action: Action, coordinates: str, image_size: Sequence[float] | None) -> dict:
    kind = action.type
    if kind in ("click", "long_press"):
        return {"action": kind, "coordinate": _coordinate(action.x, action.y, coordinates, image_size)}
    if kind == "swipe":
        return {
            "action": "swipe",
            "coordinate": _coordinate(action.x, action.y, coordinates, image_size),
            "coordinate2": _coordinate(action.x2, action.y2, coordinates, image_size),
        }
    if kind in ("type", "answer", "open_app"):
        return {"action": "open" if kind == "open_app" else kind, "text": action.text}
    if kind in ("back", "home"):
        return {"action": "system_button", "button": kind.capitalize()}
    if kind == "press" and action.keys == ("enter",):
        return {"action": "system_button", "button": "Enter"}
    if kind == "press" and len(action.keys) == 1:
        return {"action": "key", "text": action.keys[0]}
    if kind == "wait":
        if action.seconds is None:
            return {"action": "wait"}
        return {"action": "wait", "time": int(action.seconds) if action.seconds.is_integer() else action.seconds}
    if kind == "terminate":
        return {"action": "terminate", "status": action.status}
    raise ValueError(f"mobile_use format cannot express {action!r}")


# mobile_use has no scroll: a scroll is written as the swipe through the screen centre that moves the content the
# same way (PhoneEnv reads both alike: a swipe whose finger moves up scrolls down), and reads back as that swipe.
SCROLL_SWIPES = {"down": (0.5, 0.7, 0.5, 0.3), "up": (0.5, 0.3, 0.5, 0.7), "right": (0.7, 0.5, 0.3, 0.5),
                 "left": (0.3, 0.5, 0.7, 0.5)}  # fmt: skip


def scroll_as_swipe(action: Action) -> Action:
    """A scroll as its swipe (``SCROLL_SWIPES``), for writing it in mobile_use; any other action unchanged."""
    if action.type == "scroll" and action.direction in SCROLL_SWIPES:
        x, y, x2, y2 = SCROLL_SWIPES[action.direction]
        return Action("swipe", x=x, y=y, x2=x2, y2=y2)
    return action


def format_mobile_use(action: Action, coordinates: str = "grid999", image_size: Sequence[float] | None = None) -> str:
    """The mobile_use tool call for ``action``; ``parse_mobile_use`` reads it back to an equal Action."""
    call = {"name": TOOL_NAME, "arguments": _format_arguments(action, coordinates, image_size)}
    return f"<tool_call>\n{json.dumps(call, ensure_ascii=False)}\n</tool_call>"
