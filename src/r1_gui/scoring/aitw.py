"""Android-in-the-Wild action matching: the public reference rules (google-research ``android_in_the_wild``
``action_matching.py``), reimplemented in pure Python, and the bridge from ``r1_gui.actions.Action``.

``actions_match`` and ``step_success`` are the single entry points that both the rewards and the evaluation metrics
use (through ``r1_gui.scoring.pairs.score_pair``), so the two can never disagree. Points here are (y, x) in [0, 1], as in AITW.

Arithmetic: the reference runs in JAX, whose default is float32, so every coordinate, box value and threshold is
rounded to float32 and every subtraction, product, sum and square root is rounded to float32 as it happens, in the
reference's order (``_f32``). At exact boundaries this decides: taps at x 0.53 and 0.67 (y 0.7) are
0.14000005 apart in float32, so they do not match (float64 says 0.14, a match).

Rules (``check_actions_match``):

- If either action is not DUAL_POINT, they match iff their type ids are equal (typed text is not compared).
- A dual point is a tap iff ``|touch - lift| <= 0.04`` (Euclidean), else a swipe; a tap never matches a swipe.
- Two taps match iff their touch points are within 0.14 of each other, or both lie in the same annotation box
  after enlarging it: (y, x, h, w) -> (max(0, y - 1.4h/2), max(0, x - 1.4w/2), min(1, h + 1.4h), min(1, w + 1.4w)),
  edges inclusive (0.7 of the size on each side, 2.4 times the size, computed as the reference writes it).
- Two swipes match iff their main axes agree (argmax of ``|lift - touch|`` over (y, x); a tie is the y axis);
  the direction along the axis is not compared.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence

from r1_gui.actions import Action, read_bbox

TYPE = 3
DUAL_POINT = 4
PRESS_BACK = 5
PRESS_HOME = 6
PRESS_ENTER = 7
STATUS_TASK_COMPLETE = 10
STATUS_TASK_IMPOSSIBLE = 11

SWIPE_DISTANCE_THRESHOLD = 0.04  # touch-lift distance up to which a dual point is a tap
TAP_DISTANCE_THRESHOLD = 0.14  # two taps this close match
BOX_AUGMENT = 1.4  # an annotation box grows by 1.4 times its size, half on each side (clipped to the screen)

# to_aitw: a scroll becomes a finger stroke of this length starting at the scroll's point (the screen centre
# when it has none); the finger moves opposite to the scroll direction, as on a phone (scroll down = swipe up).
SCROLL_STROKE = 0.3
SCROLL_START = (0.5, 0.5)
AITW_NO_POINT = (-1.0, -1.0)  # AITW's touch/lift for actions without a point

TAP_TYPES = ("click", "long_press", "double_click", "right_click")
_FINGER_MOVE = {"down": (-1.0, 0.0), "up": (1.0, 0.0), "right": (0.0, -1.0), "left": (0.0, 1.0)}  # (dy, dx)

Point = tuple[float, float]


_FLOAT32_MAX = 3.4028234663852886e38


def _f32(value: float) -> float:
    """``value`` rounded to the nearest float32, as JAX stores it. An operation on float32 values done in float64 and
    then rounded gives the float32 result exactly for +, -, *, / and sqrt, so ``_f32(a - b)`` is float32 ``a - b``."""
    if value != value or abs(value) > _FLOAT32_MAX:  # NaN, or beyond float32: what a float32 cast gives
        return value if value != value else math.copysign(math.inf, value)
    return struct.unpack("f", struct.pack("f", value))[0]


def _yx32(yx: Sequence[float]) -> tuple[float, float]:
    return _f32(float(yx[0])), _f32(float(yx[1]))


def _distance(a: Sequence[float], b: Sequence[float]) -> float:
    """The reference's ``jnp.linalg.norm(a - b)`` in float32: sqrt(dy * dy + dx * dx), each step rounded."""
    (ay, ax), (by, bx) = _yx32(a), _yx32(b)
    dy, dx = _f32(ay - by), _f32(ax - bx)
    return _f32(math.sqrt(_f32(_f32(dy * dy) + _f32(dx * dx))))


def _taps_close(a: Sequence[float], b: Sequence[float]) -> bool:
    return _distance(a, b) <= _f32(TAP_DISTANCE_THRESHOLD)


def is_tap(touch_yx: Sequence[float], lift_yx: Sequence[float]) -> bool:
    """A dual point is a tap when the finger moved at most 0.04 (normalized Euclidean distance, float32)."""
    return _distance(touch_yx, lift_yx) <= _f32(SWIPE_DISTANCE_THRESHOLD)


def enlarge_box(box: Sequence[float]) -> tuple[float, float, float, float]:
    """(y, x, h, w) -> (max(0, y - 1.4h/2), max(0, x - 1.4w/2), min(1, h + 1.4h), min(1, w + 1.4w)) in float32,
    in the reference's order of operations. Example: (0.5, 0.5, 0.1, 0.2) -> about (0.43, 0.36, 0.24, 0.48)."""
    y, x, height, width = (_f32(float(v)) for v in box)
    augment = _f32(BOX_AUGMENT)
    height_change, width_change = _f32(augment * height), _f32(augment * width)
    return (
        max(0.0, _f32(y - _f32(height_change / 2))),
        max(0.0, _f32(x - _f32(width_change / 2))),
        min(1.0, _f32(height + height_change)),
        min(1.0, _f32(width + width_change)),
    )


def _in_box(yx: Sequence[float], box: Sequence[float]) -> bool:
    """Edges inclusive; bottom = top + height and right = left + width in float32, as the reference."""
    top, left, height, width = box
    y, x = _yx32(yx)
    return top <= y <= _f32(top + height) and left <= x <= _f32(left + width)


def _main_axis(touch_yx: Sequence[float], lift_yx: Sequence[float]) -> int:
    """0 (y) or 1 (x): the axis the finger moved most along (float32 deltas); a tie is the y axis, like argmax."""
    (touch_y, touch_x), (lift_y, lift_x) = _yx32(touch_yx), _yx32(lift_yx)
    return 1 if abs(_f32(lift_x - touch_x)) > abs(_f32(lift_y - touch_y)) else 0


def check_actions_match(
    touch_1: Sequence[float],
    lift_1: Sequence[float],
    type_1: int,
    touch_2: Sequence[float],
    lift_2: Sequence[float],
    type_2: int,
    annotation_positions: Sequence[Sequence[float]] | None,
) -> bool:
    """The AITW reference rules (module docstring). ``annotation_positions`` holds (y, x, h, w) boxes; may be empty.

    Example: two taps at (0.5, 0.5) and (0.5, 0.6) match (distance 0.1 <= 0.14).
    """
    if type_1 != DUAL_POINT or type_2 != DUAL_POINT:
        return type_1 == type_2
    tap_1, tap_2 = is_tap(touch_1, lift_1), is_tap(touch_2, lift_2)
    if tap_1 != tap_2:
        return False
    if not tap_1:
        return _main_axis(touch_1, lift_1) == _main_axis(touch_2, lift_2)
    if _taps_close(touch_1, touch_2):
        return True
    for box in annotation_positions or ():
        enlarged = enlarge_box(box)
        if _in_box(touch_1, enlarged) and _in_box(touch_2, enlarged):
            return True
    return False


def to_aitw(action: Action) -> tuple[Point, Point, int] | None:
    """(touch_yx, lift_yx, AITW type id) for ``action``, or None when AITW has no such action.

    Taps (click, long_press, double_click, right_click): touch == lift. swipe: its two points. scroll: a
    ``SCROLL_STROKE`` finger stroke from its point or the screen centre, the finger moving opposite to the scroll
    direction. type: TYPE; back, home: PRESS_BACK, PRESS_HOME; press enter: PRESS_ENTER; terminate success /
    failure: STATUS_TASK_COMPLETE / IMPOSSIBLE. None for open_app, wait, answer, hotkey, other presses, move_to,
    drag_to (pyautogui.dragTo has only the destination, so it is not a two-point gesture).
    Example: ``to_aitw(Action("click", x=0.2, y=0.7)) == ((0.7, 0.2), (0.7, 0.2), DUAL_POINT)``.
    """
    kind = action.type
    if kind in TAP_TYPES:
        return (action.y, action.x), (action.y, action.x), DUAL_POINT
    if kind == "swipe":
        return (action.y, action.x), (action.y2, action.x2), DUAL_POINT
    if kind == "scroll":
        touch = SCROLL_START if action.point is None else (action.y, action.x)
        dy, dx = _FINGER_MOVE[action.direction]
        return touch, (touch[0] + SCROLL_STROKE * dy, touch[1] + SCROLL_STROKE * dx), DUAL_POINT
    type_id = None
    if kind == "type":
        type_id = TYPE
    elif kind == "back":
        type_id = PRESS_BACK
    elif kind == "home":
        type_id = PRESS_HOME
    elif kind == "press" and _folded_keys(action.keys) == ("enter",):
        type_id = PRESS_ENTER
    elif kind == "terminate":
        type_id = STATUS_TASK_COMPLETE if action.status == "success" else STATUS_TASK_IMPOSSIBLE
    return None if type_id is None else (AITW_NO_POINT, AITW_NO_POINT, type_id)


def bbox_to_annotation(bbox: Sequence[float]) -> tuple[float, float, float, float]:
    """The dataset's ``bbox`` [x1, y1, x2, y2] (normalized) as an AITW annotation (y, x, height, width).

    Raises ValueError unless ``r1_gui.actions.read_bbox`` accepts it (4 finite numbers, x1 <= x2, y1 <= y2).
    Example: ``bbox_to_annotation([0.1, 0.2, 0.3, 0.6]) == (0.2, 0.1, 0.4, 0.2)`` (up to float rounding).
    """
    box = read_bbox(bbox)
    if box is None:
        raise ValueError(f"bbox must be [x1, y1, x2, y2], finite, with x1 <= x2 and y1 <= y2, got {bbox!r}")
    x1, y1, x2, y2 = box
    return y1, x1, y2 - y1, x2 - x1


def _folded_text(text: str | None) -> str:
    """Lowercase, whitespace runs collapsed to one space."""
    return " ".join((text or "").lower().split())


def _folded_keys(keys: tuple[str, ...] | None) -> tuple[str, ...]:
    return tuple(_folded_text(key) for key in keys or ())


def _same_non_aitw_action(pred: Action, gt: Action) -> bool:
    """Actions AITW has no id for match when their types, normalized texts and keys agree; those with a point
    (move_to, drag_to) also need the points within the tap distance."""
    if pred.type != gt.type:
        return False
    if _folded_text(pred.text) != _folded_text(gt.text) or _folded_keys(pred.keys) != _folded_keys(gt.keys):
        return False
    if pred.point is not None and gt.point is not None:
        return _taps_close(pred.point, gt.point)
    return True


def actions_match(pred: Action | None, gt: Action, bbox: Sequence[float] | None = None) -> bool:
    """Whether ``pred`` matches ``gt`` by the AITW rules, using the ground truth's ``bbox`` [x1, y1, x2, y2]
    (normalized) as the only annotation box when given. Actions without an AITW id fall back to
    type + normalized text / keys equality. None never matches. Raises ValueError for a malformed bbox.
    Example: ``actions_match(Action("click", x=0.5, y=0.5), Action("click", x=0.55, y=0.5))`` is True.
    """
    if pred is None:
        return False
    pred_aitw, gt_aitw = to_aitw(pred), to_aitw(gt)
    if pred_aitw is None or gt_aitw is None:
        return pred_aitw is None and gt_aitw is None and _same_non_aitw_action(pred, gt)
    annotations = [bbox_to_annotation(bbox)] if bbox is not None else []
    return check_actions_match(*pred_aitw, *gt_aitw, annotations)


def text_matches(pred_text: str | None, gt_text: str | None) -> bool:
    """AITW text accuracy: lowercase, stripped, one a substring of the other; an empty prediction never matches
    a non-empty ground truth. Example: ``text_matches("New York", "new york city")`` is True."""
    pred, gt = (pred_text or "").strip().lower(), (gt_text or "").strip().lower()
    if gt and not pred:
        return False
    return pred in gt or gt in pred


def step_success(pred: Action | None, gt: Action, bbox: Sequence[float] | None = None) -> bool:
    """A step is right when the actions match (``actions_match``) and, for a type action, the text matches."""
    if not actions_match(pred, gt, bbox):
        return False
    if gt.type == "type":
        return pred.type == "type" and text_matches(pred.text, gt.text)
    return True
