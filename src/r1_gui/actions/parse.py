"""Format dispatch: ``parse_action`` and ``format_action`` (a whole completion is read in ``completion``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .aguvis import format_aguvis, parse_aguvis
from .coords import COORDINATE_SYSTEMS
from .core import Action
from .guir1 import format_guir1, parse_guir1
from .mobile_use import format_mobile_use, parse_mobile_use

FORMATS = ("aguvis", "guir1", "mobile_use")
# The coordinate convention each format uses when ``coordinates=None``.
DEFAULT_COORDINATES = {"aguvis": "normalized", "guir1": "pixels", "mobile_use": "grid999"}
_PARSERS = {"aguvis": parse_aguvis, "guir1": parse_guir1, "mobile_use": parse_mobile_use}
_FORMATTERS = {"aguvis": format_aguvis, "guir1": format_guir1, "mobile_use": format_mobile_use}


def _formats_to_try(text: str) -> tuple[str, ...]:
    """``format="auto"``: mobile_use for a <tool_call> or a JSON object, GUI-R1 for a list, else Aguvis code.
    An object that is not a mobile_use call is tried as a GUI-R1 dict."""
    start = text.lstrip()[:1]
    if start == "<":
        return ("mobile_use",)
    if start == "{":
        return ("mobile_use", "guir1")
    if start == "[":
        return ("guir1",)
    return ("aguvis",)


def parse_action(
    text: Any,
    format: str = "auto",
    *,
    coordinates: str | None = None,
    image_size: Sequence[float] | None = None,
) -> Action | None:
    """Parse one action written in ``format`` ("aguvis", "guir1", "mobile_use" or "auto").

    ``coordinates`` maps the numbers in the text to [0, 1] (see ``r1_gui.actions.coords``); None means the
    format's default (aguvis: normalized, guir1: pixels, mobile_use: grid999). "pixels" needs ``image_size``,
    the (width, height) of the image the model saw. Never raises: None for anything that is not exactly one
    valid action, including non-finite or out-of-range coordinates and unknown directions or statuses.
    Example: ``parse_action("pyautogui.click(x=0.36, y=0.13)") == Action("click", x=0.36, y=0.13)``.
    """
    try:
        if not isinstance(text, str):
            return None
        if format == "auto":
            formats = _formats_to_try(text)
        elif format in _PARSERS:
            formats = (format,)
        else:
            return None
        for name in formats:
            system = coordinates if coordinates is not None else DEFAULT_COORDINATES[name]
            if system not in COORDINATE_SYSTEMS:
                return None
            action = _PARSERS[name](text, system, image_size)
            if action is not None:
                return action
        return None
    except Exception:  # the contract is "never raises"; the parsers already catch what they expect
        return None


def format_action(
    action: Action,
    format: str = "aguvis",
    *,
    coordinates: str | None = None,
    image_size: Sequence[float] | None = None,
) -> str:
    """Write ``action`` in ``format``; ``parse_action`` with the same arguments reads back an equal Action
    (normalized floats are written with up to 4 decimals, grid and pixel coordinates as ints).

    Raises ValueError for an unknown format or coordinate system, "pixels" without ``image_size``, or an action
    the format cannot express (see each format module). Example:
    ``format_action(Action("click", x=0.36, y=0.13)) == "pyautogui.click(x=0.36, y=0.13)"``.
    """
    if not isinstance(action, Action):
        raise ValueError(f"format_action needs an Action, got {type(action).__name__}")
    if format not in _FORMATTERS:
        raise ValueError(f"unknown action format {format!r}; valid: {list(FORMATS)}")
    system = coordinates if coordinates is not None else DEFAULT_COORDINATES[format]
    if system not in COORDINATE_SYSTEMS:
        raise ValueError(f"unknown coordinates {system!r}; valid: {list(COORDINATE_SYSTEMS)}")
    return _FORMATTERS[format](action, system, image_size)
