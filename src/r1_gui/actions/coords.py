"""Coordinate conventions and the Qwen-VL image resize rule (pure Python, no torch).

An ``Action`` stores normalized coordinates in [0, 1]. Model outputs use one of these conventions, named by the
``coordinates`` argument of ``parse_action`` / ``format_action``:

- ``"normalized"``: floats in [0, 1] as is (Aguvis, a Qwen2-VL model).
- ``"grid1000"``: a 0-1000 grid, normalized = value / 1000 (Qwen2-VL).
- ``"grid999"``: a 999 x 999 grid, normalized = value / 999 (the Qwen3-VL ``mobile_use`` tool).
- ``"pixels"``: absolute pixels of the image the model saw, i.e. after ``smart_resize`` (Qwen2.5-VL);
  normalized = x / width, y / height, where ``image_size = (width, height)`` of that resized image.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .core import is_number

COORDINATE_SYSTEMS = ("normalized", "grid1000", "grid999", "pixels")

# Qwen smart_resize defaults (the Qwen2-VL image processor and qwen-vl-utils).
IMAGE_FACTOR = 28
MIN_PIXELS = 3136  # 56 * 56
MAX_PIXELS = 12845056  # 16384 * 28 * 28
MAX_ASPECT_RATIO = 200

# Normalized values may overshoot [0, 1] by float noise; beyond this slack the point is rejected.
RANGE_SLACK = 1e-6


def smart_resize(
    height: int,
    width: int,
    factor: int = IMAGE_FACTOR,
    min_pixels: int = MIN_PIXELS,
    max_pixels: int = MAX_PIXELS,
) -> tuple[int, int]:
    """The (height, width) Qwen-VL resizes an image to: both multiples of ``factor``, area within
    [min_pixels, max_pixels], aspect ratio kept as closely as possible. Same rule as
    ``transformers.models.qwen2_vl.image_processing_qwen2_vl.smart_resize``.

    Example: ``smart_resize(2400, 1080) == (2408, 1092)``; ``smart_resize(2400, 1080, max_pixels=501760) == (1036, 448)``.
    """
    if height <= 0 or width <= 0:
        raise ValueError(f"image height and width must be positive, got {height}x{width}")
    if max(height, width) / min(height, width) > MAX_ASPECT_RATIO:
        raise ValueError(f"absolute aspect ratio must be at most {MAX_ASPECT_RATIO}, got {height}x{width}")
    h_bar = max(factor, round(height / factor) * factor)
    w_bar = max(factor, round(width / factor) * factor)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


def check_pixel_bounds(min_pixels: int, max_pixels: int) -> None:
    """ValueError naming --min_pixels/--max_pixels unless 0 < min_pixels <= max_pixels (the screenshot's area bounds
    of ``smart_resize``; a processor refuses the pair only once the model is loaded)."""
    if min_pixels <= 0 or max_pixels < min_pixels:
        raise ValueError(
            f"--min_pixels {min_pixels} and --max_pixels {max_pixels} bound a screenshot's area in pixels: "
            f"0 < --min_pixels <= --max_pixels is needed (defaults {MIN_PIXELS} and 501760; the tiny recipes use "
            "--max_pixels 50176)"
        )


def resized_size(
    width: int,
    height: int,
    min_pixels: int = MIN_PIXELS,
    max_pixels: int = MAX_PIXELS,
    factor: int = IMAGE_FACTOR,
) -> tuple[int, int]:
    """``smart_resize`` in (width, height) order: the size of the image a Qwen2.5-VL model sees, whose pixels
    its points refer to. Example: ``resized_size(1080, 2400, max_pixels=501760) == (448, 1036)``."""
    resized_height, resized_width = smart_resize(height, width, factor, min_pixels, max_pixels)
    return resized_width, resized_height


def coordinate_scale(coordinates: str, image_size: Sequence[float] | None = None) -> tuple[float, float]:
    """The (x, y) divisors that map a coordinate of the given system to [0, 1].

    Raises ValueError for an unknown system, or for "pixels" without a positive finite (width, height).
    Example: ``coordinate_scale("grid1000") == (1000.0, 1000.0)``.
    """
    if coordinates == "normalized":
        return 1.0, 1.0
    if coordinates == "grid1000":
        return 1000.0, 1000.0
    if coordinates == "grid999":
        return 999.0, 999.0
    if coordinates == "pixels":
        try:
            width, height = (float(v) for v in image_size)  # type: ignore[union-attr]
        except (TypeError, ValueError):
            raise ValueError(f"'pixels' coordinates need image_size=(width, height), got {image_size!r}") from None
        if not (math.isfinite(width) and math.isfinite(height) and width > 0 and height > 0):
            raise ValueError(f"image_size must be positive and finite, got {image_size!r}")
        return width, height
    raise ValueError(f"unknown coordinates {coordinates!r}; valid: {list(COORDINATE_SYSTEMS)}")


def coordinate_tolerance(coordinates: str, image_size: Sequence[float] | None = None) -> float:
    """How far apart two normalized coordinates may be and still count as exactly equal, for a model writing in
    ``coordinates``: the Aguvis data's printed precision (5e-4), or half a unit of the model's grid or pixel when
    that is coarser, so that the cell nearest the truth counts as exact. Example: grid999 -> 0.5/999 = 5.005e-4;
    pixels of a 448-wide screenshot -> 0.5/448 = 1.1e-3."""
    from .core import COORDINATE_TOLERANCE

    if coordinates == "normalized":  # fractions are printed, not counted in units
        return COORDINATE_TOLERANCE
    scale_x, scale_y = coordinate_scale(coordinates, image_size)
    return max(COORDINATE_TOLERANCE, 0.5 / min(scale_x, scale_y))


def to_unit(value: float, scale: float) -> float | None:
    """``value / scale`` checked to lie in [0, 1] (tiny overshoot clamped); None when it does not or is not finite."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    unit = value / scale
    if not math.isfinite(unit) or unit < -RANGE_SLACK or unit > 1.0 + RANGE_SLACK:
        return None
    return min(1.0, max(0.0, unit))


def normalize_point(
    x: float, y: float, coordinates: str, image_size: Sequence[float] | None = None
) -> tuple[float, float] | None:
    """A point of the given system as normalized (x, y), or None when it is out of range or not finite.

    Example: ``normalize_point(500, 250, "grid1000") == (0.5, 0.25)``.
    """
    scale_x, scale_y = coordinate_scale(coordinates, image_size)
    unit_x, unit_y = to_unit(x, scale_x), to_unit(y, scale_y)
    return None if unit_x is None or unit_y is None else (unit_x, unit_y)


def denormalize_point(
    x: float, y: float, coordinates: str, image_size: Sequence[float] | None = None
) -> tuple[float, float] | tuple[int, int]:
    """A normalized point in the given system: unchanged floats for "normalized", rounded ints otherwise.

    Example: ``denormalize_point(0.5, 0.25, "pixels", (448, 1036)) == (224, 259)``.
    """
    scale_x, scale_y = coordinate_scale(coordinates, image_size)
    if coordinates == "normalized":
        return x, y
    return round(x * scale_x), round(y * scale_y)


def pixels_to_normalized(
    x: float,
    y: float,
    original_size: tuple[int, int],
    min_pixels: int = MIN_PIXELS,
    max_pixels: int = MAX_PIXELS,
) -> tuple[float, float] | None:
    """A Qwen2.5-VL point (pixels of the resized image) as normalized (x, y), from the original (width, height)."""
    return normalize_point(x, y, "pixels", resized_size(*original_size, min_pixels, max_pixels))


def normalized_to_pixels(
    x: float,
    y: float,
    original_size: tuple[int, int],
    min_pixels: int = MIN_PIXELS,
    max_pixels: int = MAX_PIXELS,
) -> tuple[int, int]:
    """A normalized point as Qwen2.5-VL pixels of the resized image, from the original (width, height).

    Example: ``normalized_to_pixels(0.5, 0.5, (1080, 2400), max_pixels=501760) == (224, 518)``.
    """
    return denormalize_point(x, y, "pixels", resized_size(*original_size, min_pixels, max_pixels))  # type: ignore[return-value]


def read_bbox(value: Any, *, normalized: bool = False) -> tuple[float, float, float, float] | None:
    """A target box [x1, y1, x2, y2] as four floats, or None when ``value`` is not one (an int too large for a
    float raises OverflowError, as ``float()`` does).

    The one box rule, at two strictnesses:

    - default (dataset rows read by the rewards, the evaluation and AITW matching): any four values ``float()``
      takes (numbers, numeric strings, numpy values), finite, with x1 <= x2 and y1 <= y2. Values outside [0, 1]
      pass: AITW's box enlarging clips to the screen, and a reader of pixel boxes checks its own range.
    - ``normalized=True`` (the builder, which writes the ``bbox`` column): a list or tuple of four real numbers
      (no bools, no strings) with 0 <= x1 <= x2 <= 1 and 0 <= y1 <= y2 <= 1.

    Example: ``read_bbox(["0.1", 0.2, 0.3, 0.4]) == (0.1, 0.2, 0.3, 0.4)``, but None with ``normalized=True``.
    """
    if normalized:
        if not isinstance(value, (list, tuple)) or len(value) != 4 or not all(is_number(v) for v in value):
            return None
        x1, y1, x2, y2 = (float(v) for v in value)
        return (x1, y1, x2, y2) if 0.0 <= x1 <= x2 <= 1.0 and 0.0 <= y1 <= y2 <= 1.0 else None
    try:
        box = tuple(float(v) for v in value)
    except (TypeError, ValueError):
        return None
    if len(box) != 4 or not all(math.isfinite(v) for v in box) or box[2] < box[0] or box[3] < box[1]:
        return None
    return box  # type: ignore[return-value]
