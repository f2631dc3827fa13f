"""GUI actions: the canonical ``Action``, its three text formats, and coordinate conventions.

Pure Python (no torch / transformers) so that light tools can import it. One parser shared by the data builder,
the rewards and the evaluation:

- ``parse_action(text, format="auto", *, coordinates=None, image_size=None) -> Action | None``
- ``format_action(action, format="aguvis", *, coordinates=None, image_size=None) -> str``
- ``extract_action(completion, *, coordinates=None, image_size=None) -> Action | None``, ``styled_action`` and the
  other readers of a whole completion, with the one table of its markers (``r1_gui.actions.completion``)
- ``same_arguments(pred, gt) -> bool``; ``Action.to_dict()`` / ``Action.from_dict(d)``
- ``smart_resize``, ``resized_size`` and point conversions between normalized, 0-1000, 999-grid and pixels;
  ``read_bbox``, the one rule for a target box [x1, y1, x2, y2].

Formats: ``aguvis`` (pyautogui / mobile code, ``r1_gui.actions.aguvis``), ``guir1`` (GUI-R1 dict lists,
``r1_gui.actions.guir1``), ``mobile_use`` (Qwen3-VL tool calls, ``r1_gui.actions.mobile_use``).
"""

from .completion import (
    OS_MARKERS,
    answer_content,
    completion_text,
    extract_action,
    original_call,
    styled_action,
)
from .coords import (
    COORDINATE_SYSTEMS,
    check_pixel_bounds,
    coordinate_scale,
    coordinate_tolerance,
    denormalize_point,
    normalize_point,
    normalized_to_pixels,
    pixels_to_normalized,
    read_bbox,
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
from .parse import DEFAULT_COORDINATES, FORMATS, format_action, parse_action

__all__ = [
    "ACTION_TYPES",
    "COORDINATE_SYSTEMS",
    "COORDINATE_TOLERANCE",
    "DEFAULT_COORDINATES",
    "DIRECTIONS",
    "FIELDS_BY_TYPE",
    "FORMATS",
    "OS_MARKERS",
    "POINT_TYPES",
    "STATUSES",
    "TEXT_TYPES",
    "Action",
    "answer_content",
    "check_pixel_bounds",
    "completion_text",
    "coordinate_scale",
    "coordinate_tolerance",
    "denormalize_point",
    "extract_action",
    "format_action",
    "normalize_point",
    "normalized_to_pixels",
    "original_call",
    "parse_action",
    "pixels_to_normalized",
    "resized_size",
    "read_bbox",
    "same_arguments",
    "smart_resize",
    "styled_action",
]
