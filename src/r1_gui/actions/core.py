"""The canonical GUI action: one frozen dataclass shared by the data builder, the rewards and the evaluation.

Conventions
-----------
- Coordinates ``x``, ``y`` (and ``x2``, ``y2`` for the end of a swipe) are normalized to [0, 1]: ``x`` is a
  fraction of the screenshot width, ``y`` of its height, measured from the top-left corner.
- ``direction`` (scroll only) is the direction the *content view* moves, as in ``pyautogui.scroll``: "down"
  shows what is below (the finger moves up on a phone).
- Every type has a fixed set of required and optional fields (``FIELDS_BY_TYPE``); any other field must be None.
  Construction validates this and raises ValueError naming the offending field, so an ``Action`` that exists is
  always well formed and two equal actions compare equal.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

DIRECTIONS = ("up", "down", "left", "right")
STATUSES = ("success", "failure")

_POINT = ("x", "y")
_END_POINT = ("x2", "y2")

# type -> (required fields, optional fields). Points always come as whole (x, y) / (x2, y2) pairs.
FIELDS_BY_TYPE: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "click": (_POINT, ()),
    "long_press": (_POINT, ()),
    "double_click": (_POINT, ()),
    "right_click": (_POINT, ()),
    "move_to": (_POINT, ()),
    # pyautogui.dragTo drags from the current mouse position, so only the destination is known.
    "drag_to": (_POINT, ()),
    "swipe": (_POINT + _END_POINT, ()),
    "scroll": (("direction",), _POINT),
    "type": (("text",), ()),
    "press": (("keys",), ()),
    "hotkey": (("keys",), ()),
    "home": ((), ()),
    "back": ((), ()),
    "open_app": (("text",), ()),
    "wait": ((), ("seconds",)),
    "terminate": (("status",), ()),
    "answer": (("text",), ()),
}
ACTION_TYPES = tuple(FIELDS_BY_TYPE)
POINT_TYPES = tuple(t for t, (required, _) in FIELDS_BY_TYPE.items() if "x" in required)
TEXT_TYPES = ("type", "open_app", "answer")

# Absolute tolerance on normalized coordinates for "exactly the right arguments": the Aguvis data prints
# coordinates with 3-4 decimals, so two points equal at that precision differ by at most 5e-4.
COORDINATE_TOLERANCE = 5e-4


# A longer answer is refused unread by every action parser (a generation cut at its token limit is far shorter).
MAX_ANSWER_CHARS = 100_000


def answer_text(text: Any) -> str:
    """``text`` when it is a str of at most MAX_ANSWER_CHARS characters, what every action parser agrees to read;
    else ValueError, which each parser turns into its None."""
    if not isinstance(text, str) or len(text) > MAX_ANSWER_CHARS:
        raise ValueError("not a string of at most MAX_ANSWER_CHARS characters")
    return text


def is_number(value: Any) -> bool:
    """An int or float, not a bool (JSON and Python literals both give bools that are ints)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass(frozen=True, repr=False)
class Action:
    """One GUI action in canonical form (see the module docstring for the conventions).

    Example: ``Action("click", x=0.36, y=0.13)``, ``Action("type", text="hello")``,
    ``Action("swipe", x=0.5, y=0.8, x2=0.5, y2=0.2)``, ``Action("press", keys=("enter",))``.
    """

    type: str
    x: float | None = None
    y: float | None = None
    x2: float | None = None
    y2: float | None = None
    text: str | None = None  # typed text, answer, or app name
    keys: tuple[str, ...] | None = None  # press / hotkey key names
    direction: str | None = None  # scroll: up, down, left, right
    status: str | None = None  # terminate: success, failure
    seconds: float | None = None  # wait

    def __post_init__(self) -> None:
        if self.type not in FIELDS_BY_TYPE:
            raise ValueError(f"Action field 'type': unknown action type {self.type!r}; valid: {list(ACTION_TYPES)}")
        for name in ("x", "y", "x2", "y2"):
            value = getattr(self, name)
            if value is None:
                continue
            if not is_number(value) or not math.isfinite(value) or not 0.0 <= value <= 1.0:
                raise ValueError(f"Action field {name!r} must be a finite number in [0, 1], got {value!r}")
            object.__setattr__(self, name, float(value))
        if self.text is not None and not isinstance(self.text, str):
            raise ValueError(f"Action field 'text' must be a string, got {self.text!r}")
        if self.keys is not None:
            keys = self.keys
            if isinstance(keys, str) or not isinstance(keys, (tuple, list)) or not keys:
                raise ValueError(f"Action field 'keys' must be a non-empty tuple of key names, got {keys!r}")
            if not all(isinstance(key, str) and key for key in keys):
                raise ValueError(f"Action field 'keys' must hold non-empty strings, got {keys!r}")
            object.__setattr__(self, "keys", tuple(keys))
        if self.direction is not None and self.direction not in DIRECTIONS:
            raise ValueError(f"Action field 'direction' must be one of {DIRECTIONS}, got {self.direction!r}")
        if self.status is not None and self.status not in STATUSES:
            raise ValueError(f"Action field 'status' must be one of {STATUSES}, got {self.status!r}")
        if self.seconds is not None:
            if not is_number(self.seconds) or not math.isfinite(self.seconds) or self.seconds < 0:
                raise ValueError(f"Action field 'seconds' must be a finite number >= 0, got {self.seconds!r}")
            object.__setattr__(self, "seconds", float(self.seconds))
        self._check_fields_for_type()

    def _check_fields_for_type(self) -> None:
        required, optional = FIELDS_BY_TYPE[self.type]
        for name in required:
            if getattr(self, name) is None:
                raise ValueError(f"Action field {name!r} is required for a {self.type!r} action")
        for field in fields(self):
            if field.name != "type" and field.name not in required + optional and getattr(self, field.name) is not None:
                raise ValueError(f"Action field {field.name!r} does not apply to a {self.type!r} action")
        for first, second in (_POINT, _END_POINT):
            if (getattr(self, first) is None) != (getattr(self, second) is None):
                raise ValueError(f"Action fields {first!r} and {second!r} must be given together")

    def __repr__(self) -> str:
        values = ((field.name, getattr(self, field.name)) for field in fields(self) if field.name != "type")
        set_fields = ", ".join(f"{name}={value!r}" for name, value in values if value is not None)
        return f"Action({self.type!r}{', ' if set_fields else ''}{set_fields})"

    @property
    def point(self) -> tuple[float, float] | None:
        """The (x, y) point, or None for an action without one."""
        return None if self.x is None or self.y is None else (self.x, self.y)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict without the None fields; keys become a list. Inverse of ``from_dict``."""
        result: dict[str, Any] = {}
        for field in fields(self):
            value = getattr(self, field.name)
            if value is not None:
                result[field.name] = list(value) if field.name == "keys" else value
        return result

    @classmethod
    def from_dict(cls, data: Any) -> Action:
        """Build and validate an Action from ``to_dict`` output; ValueError names the bad field."""
        if not isinstance(data, dict):
            raise ValueError(f"an action must be a dict, got {type(data).__name__}")
        known = {field.name for field in fields(cls)}
        unknown = sorted(str(key) for key in data if key not in known)
        if unknown:
            raise ValueError(f"Action has no field(s) {unknown}; valid fields: {sorted(known)}")
        if "type" not in data:
            raise ValueError("Action field 'type' is required")
        return cls(**data)


def wait_action(seconds: Any) -> Action | None:
    """A wait of ``seconds`` (None: of no stated length), or None when ``seconds`` is not a finite number >= 0: the
    one rule every parser reads a wait's length by."""
    if seconds is None:
        return Action("wait")
    return Action("wait", seconds=seconds) if is_number(seconds) and 0 <= seconds < float("inf") else None


def _stripped_text(text: str | None) -> str | None:
    return None if text is None else text.strip()


def _lowercase_keys(keys: tuple[str, ...] | None) -> tuple[str, ...] | None:
    return None if keys is None else tuple(key.strip().lower() for key in keys)


def same_arguments(pred: Action, gt: Action, *, tolerance: float = COORDINATE_TOLERANCE) -> bool:
    """True when ``pred`` has exactly the arguments of ``gt`` ("exact-parameter accuracy").

    The types must be equal. Coordinates match within ``tolerance`` (absolute, on normalized values; the
    Aguvis data's printed precision), and both actions must have or lack each point; text is compared after
    ``strip()``; keys case-insensitively; direction, status and seconds exactly. Argument-less actions
    (``mobile.back()``, ``mobile.home()``, ``mobile.wait()``) are exact as soon as the types agree.
    Example: ``same_arguments(Action("click", x=0.5, y=0.5), Action("click", x=0.5004, y=0.5))`` is True.
    """
    if pred.type != gt.type:
        return False
    for name in ("x", "y", "x2", "y2"):
        a, b = getattr(pred, name), getattr(gt, name)
        if (a is None) != (b is None):
            return False
        if a is not None and abs(a - b) > tolerance + 1e-12:
            return False
    return (
        _stripped_text(pred.text) == _stripped_text(gt.text)
        and _lowercase_keys(pred.keys) == _lowercase_keys(gt.keys)
        and pred.direction == gt.direction
        and pred.status == gt.status
        and pred.seconds == gt.seconds
    )
