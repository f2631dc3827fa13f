"""GUI actions: the canonical ``Action``, its three text formats, and coordinate conventions.

Pure Python (no torch / transformers) so that light tools can import it. One parser shared by the data builder,
the rewards and the evaluation:

- ``parse_action(text, format="auto", *, coordinates=None, image_size=None) -> Action | None``
- ``format_action(action, format="aguvis", *, coordinates=None, image_size=None) -> str``
- ``extract_action(completion, *, coordinates=None, image_size=None) -> Action | None``
- ``same_arguments(pred, gt) -> bool``; ``Action.to_dict()`` / ``Action.from_dict(d)``
- ``smart_resize``, ``resized_size`` and point conversions between normalized, 0-1000, 999-grid and pixels.

Formats: ``aguvis`` (pyautogui / mobile code, ``r1_gui.actions.aguvis``), ``guir1`` (GUI-R1 dict lists,
``r1_gui.actions.guir1``), ``mobile_use`` (Qwen3-VL tool calls, ``r1_gui.actions.mobile_use``).
"""

from .coords import (
    COORDINATE_SYSTEMS,
    coordinate_scale,
    coordinate_tolerance,
    denormalize_point,
    normalize_point,
    normalized_to_pixels,
    pixels_to_normalized,
    resized_size,
    smart_resize,
)
from .core import (
    ACTION_TYPES,
    COORDINATE_TOLERANCE,
    DIRECTIONS,
    FIELDS_BY_TYPE,
    POINT_TYPES,
    STATUSES,
    TEXT_TYPES,
    Action,
    same_arguments,
)
from .parse import DEFAULT_COORDINATES, FORMATS, completion_text, extract_action, format_action, parse_action

__all__ = [
    "ACTION_TYPES",
    "COORDINATE_SYSTEMS",
    "COORDINATE_TOLERANCE",
    "DEFAULT_COORDINATES",
    "DIRECTIONS",
    "FIELDS_BY_TYPE",
    "FORMATS",
    "POINT_TYPES",
    "STATUSES",
    "TEXT_TYPES",
    "Action",
    "completion_text",
    "coordinate_scale",
    "coordinate_tolerance",
    "denormalize_point",
    "extract_action",
    "format_action",
    "normalize_point",
    "normalized_to_pixels",
    "parse_action",
    "pixels_to_normalized",
    "resized_size",
    "same_arguments",
    "smart_resize",
]
