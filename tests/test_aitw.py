"""Table-driven tests of the AITW action-matching rules and the Action bridge (r1_gui.scoring.aitw)."""

from __future__ import annotations

import pytest

from r1_gui.actions import Action
from r1_gui.scoring.aitw import (
    AITW_NO_POINT,
    DUAL_POINT,
    PRESS_BACK,
    PRESS_ENTER,
    PRESS_HOME,
    STATUS_TASK_COMPLETE,
    STATUS_TASK_IMPOSSIBLE,
    TYPE,
    actions_match,
    bbox_to_annotation,
    check_actions_match,
    enlarge_box,
    step_success,
    text_matches,
    to_aitw,
)

A = Action
BOX = (0.5, 0.5, 0.1, 0.2)  # (y, x, h, w) -> enlarged (0.43, 0.36, 0.24, 0.48): y in [0.43, 0.67], x in [0.36, 0.84]


def tap(y, x):
    return ((y, x), (y, x), DUAL_POINT)


def drag(touch, lift):
    return (touch, lift, DUAL_POINT)


MATCH_CASES = [
    # (id, action 1, action 2, annotation boxes, expected)
    # taps 0.1 apart match (<= 0.14)
    ("taps-near", tap(0.5, 0.5), tap(0.5, 0.6), [], True),
    # taps 0.13 apart still match
    ("taps-0.13", tap(0.5, 0.5), tap(0.5, 0.63), [], True),
    # taps 0.15 apart do not
    ("taps-far", tap(0.5, 0.5), tap(0.5, 0.65), [], False),
    # the distance is Euclidean over (y, x): 0.1 and 0.1 -> 0.141 > 0.14
    ("taps-diagonal", tap(0.5, 0.5), tap(0.6, 0.6), [], False),
    # a touch and lift 0.03 apart is still a tap
    ("tap-with-jitter", ((0.5, 0.5), (0.53, 0.5), DUAL_POINT), tap(0.5, 0.55), [], True),
    # far taps both inside the enlarged box match
    ("box-both-in", tap(0.44, 0.37), tap(0.66, 0.83), [BOX], True),
    # one inside, one outside the box (and far): no match
    ("box-one-out", tap(0.44, 0.37), tap(0.9, 0.9), [BOX], False),
    # the unenlarged box would not contain (0.45, 0.4), the enlarged one does
    ("box-enlarged", tap(0.45, 0.4), tap(0.6, 0.69), [BOX], True),
    # each in a different box: no match
    ("two-boxes", tap(0.05, 0.05), tap(0.9, 0.9), [(0.0, 0.0, 0.1, 0.1), (0.85, 0.85, 0.1, 0.1)], False),
    # the second box holds both
    ("second-box", tap(0.05, 0.05), tap(0.3, 0.3), [(0.8, 0.8, 0.1, 0.1), (0.0, 0.0, 0.15, 0.15)], True),
    # a tap never matches a swipe, even at the same start
    ("tap-vs-swipe", tap(0.5, 0.5), drag((0.5, 0.5), (0.2, 0.5)), [], False),
    # a touch-lift distance of 0.05 makes a swipe
    ("short-swipe-vs-tap", drag((0.5, 0.5), (0.55, 0.5)), tap(0.5, 0.5), [], False),
    # vertical swipes match whatever their direction and length
    ("swipes-vertical", drag((0.8, 0.5), (0.2, 0.5)), drag((0.1, 0.9), (0.3, 0.85)), [], True),
    # vertical vs horizontal
    ("swipes-axes-differ", drag((0.8, 0.5), (0.2, 0.5)), drag((0.5, 0.8), (0.5, 0.2)), [], False),
    # horizontal swipes
    ("swipes-horizontal", drag((0.5, 0.8), (0.5, 0.2)), drag((0.1, 0.1), (0.15, 0.9)), [], True),
    # a tie counts as the y axis: matches a vertical swipe ...
    ("tie-vs-vertical", drag((0.5, 0.5), (0.25, 0.25)), drag((0.8, 0.5), (0.2, 0.5)), [], True),
    # ... and not a horizontal one
    ("tie-vs-horizontal", drag((0.5, 0.5), (0.25, 0.25)), drag((0.5, 0.8), (0.5, 0.2)), [], False),
    # non-dual-point: equal type ids match (text is not compared here)
    ("type-type", (AITW_NO_POINT, AITW_NO_POINT, TYPE), (AITW_NO_POINT, AITW_NO_POINT, TYPE), [], True),
    ("back-home", (AITW_NO_POINT, AITW_NO_POINT, PRESS_BACK), (AITW_NO_POINT, AITW_NO_POINT, PRESS_HOME), [], False),
    ("enter-enter", (AITW_NO_POINT, AITW_NO_POINT, PRESS_ENTER), (AITW_NO_POINT, AITW_NO_POINT, PRESS_ENTER), [], True),
    (
        "complete-impossible",
        (AITW_NO_POINT, AITW_NO_POINT, STATUS_TASK_COMPLETE),
        (AITW_NO_POINT, AITW_NO_POINT, STATUS_TASK_IMPOSSIBLE),
        [],
        False,
    ),
    # a dual point against a non-dual point: type ids differ
    ("tap-vs-type", tap(0.5, 0.5), (AITW_NO_POINT, AITW_NO_POINT, TYPE), [], False),
    # a non-dual point with a point equal to the tap still differs by type
    ("type-at-point", ((0.5, 0.5), (0.5, 0.5), TYPE), tap(0.5, 0.5), [], False),
]


@pytest.mark.parametrize(("case", "first", "second", "boxes", "expected"), MATCH_CASES, ids=[c[0] for c in MATCH_CASES])
def test_check_actions_match(case, first, second, boxes, expected):
    assert check_actions_match(*first, *second, boxes) is expected
    assert check_actions_match(*second, *first, boxes) is expected  # symmetric


FLOAT32_CASES = [
    # (id, action 1, action 2, annotation boxes, expected): boundaries where the reference's float32 (JAX's default)
    # and float64 disagree; the float32 numbers were computed by hand with numpy.float32, in the reference's order
    # the example: f32(0.67) - f32(0.53) = 0.14000005 > f32(0.14) = 0.14 (float64: 0.14, a match)
    ("taps-0.53-0.67", tap(0.7, 0.53), tap(0.7, 0.67), [], False),
    # x 0.412 and 0.552: 0.13999999 <= 0.14 in float32 (float64: 0.14000000000000007, no match)
    ("taps-0.412-0.552", tap(0.1, 0.412), tap(0.1, 0.552), [], True),
    # 3-4-5 triangle: dy 0.084, dx 0.112 -> 0.13999999 in float32 (float64: 0.14000000000000004)
    ("taps-diagonal-0.14", tap(0.1, 0.282), tap(0.184, 0.394), [], True),
    # touch y 0.05, lift y 0.09: 0.040000003 > f32(0.04) = 0.04, a swipe, never a tap (float64: 0.0399..., a tap)
    ("touch-lift-0.05-0.09", ((0.05, 0.5), (0.09, 0.5), DUAL_POINT), tap(0.05, 0.5), [], False),
    # touch y 0.1, lift y 0.14: exactly 0.04 in float32, a tap (float64: 0.04000000000000001, a swipe)
    ("touch-lift-0.1-0.14", ((0.1, 0.5), (0.14, 0.5), DUAL_POINT), tap(0.1, 0.5), [], True),
    # box (0.11, 0.5, 0.1, 0.1): top = f32(0.11) - f32(1.4 * 0.1) / 2 = 0.04 = f32(0.04), on the edge: inside
    # (float64: 0.04000000000000001 > 0.04); (0.27, 0.5) is inside too (bottom 0.28) and 0.23 away
    ("box-top-edge-in", tap(0.04, 0.5), tap(0.27, 0.5), [(0.11, 0.5, 0.1, 0.1)], True),
    # box (0.15, 0.5, 0.1, 0.1): top = 0.08000001 > f32(0.08): just outside (float64: 0.08, inside)
    ("box-top-edge-out", tap(0.08, 0.5), tap(0.3, 0.5), [(0.15, 0.5, 0.1, 0.1)], False),
    # box (0.29, 0.5, 0.1, 0.1): bottom = 0.22 + 0.24000001 = 0.46 = f32(0.46), on the edge: inside
    # (float64: 0.45999999999999996 < 0.46); (0.23, 0.5) is inside and 0.23 away
    ("box-bottom-edge-in", tap(0.46, 0.5), tap(0.23, 0.5), [(0.29, 0.5, 0.1, 0.1)], True),
    # the same on the x axis: box (0.5, 0.29, 0.1, 0.1), right edge 0.46
    ("box-right-edge-in", tap(0.5, 0.46), tap(0.5, 0.23), [(0.5, 0.29, 0.1, 0.1)], True),
    # swipe (0.5, 0.5) -> (0.2, 0.8): float32 deltas (-0.3, 0.3), a tie, so the y axis: matches a vertical swipe
    # (float64: |0.8 - 0.5| = 0.30000000000000004 > 0.3, the x axis)
    ("swipe-tie-vs-vertical", drag((0.5, 0.5), (0.2, 0.8)), drag((0.8, 0.5), (0.2, 0.5)), [], True),
    # ... and not a horizontal one
    ("swipe-tie-vs-horizontal", drag((0.5, 0.5), (0.2, 0.8)), drag((0.5, 0.8), (0.5, 0.2)), [], False),
]


@pytest.mark.parametrize(
    ("case", "first", "second", "boxes", "expected"), FLOAT32_CASES, ids=[c[0] for c in FLOAT32_CASES]
)
def test_check_actions_match_in_float32(case, first, second, boxes, expected):
    assert check_actions_match(*first, *second, boxes) is expected
    assert check_actions_match(*second, *first, boxes) is expected  # symmetric


def test_actions_match_uses_float32_too():
    # the example through the Action bridge, as the metric and the reward call it
    assert not actions_match(Action("click", x=0.53, y=0.7), Action("click", x=0.67, y=0.7))
    # bbox [x1, y1, x2, y2] = [0.45, 0.11, 0.55, 0.21]: h = 0.21 - 0.11 = 0.09999999999999999 in float64, 0.1 in
    # float32; enlarged top 0.04: a click at y 0.04 is on its edge, inside, like the ground truth at y 0.27
    assert actions_match(Action("click", x=0.5, y=0.04), Action("click", x=0.5, y=0.27), [0.45, 0.11, 0.55, 0.21])


def test_box_edges_are_inclusive():
    top, left, height, width = enlarge_box(BOX)
    assert (top, left, height, width) == pytest.approx((0.43, 0.36, 0.24, 0.48))
    corners = [(top, left), (top + height, left + width)]
    # the two opposite corners of the enlarged box are inside it
    assert check_actions_match(*tap(*corners[0]), *tap(*corners[1]), [BOX])
    # a hair outside the top edge is not
    assert not check_actions_match(*tap(top - 1e-6, left), *tap(*corners[1]), [BOX])
    # a hair outside the right edge is not
    assert not check_actions_match(*tap(*corners[0]), *tap(top + height, left + width + 1e-6), [BOX])


ENLARGE_CASES = [
    # (box, enlarged): 0.7 of the size on each side, 2.4 times the size
    ((0.5, 0.5, 0.1, 0.2), (0.43, 0.36, 0.24, 0.48)),
    # clipped at the top-left corner: the size is kept (the reference's own behaviour)
    ((0.02, 0.01, 0.1, 0.1), (0.0, 0.0, 0.24, 0.24)),
    # a big box is clipped to the screen size
    ((0.3, 0.3, 0.5, 0.6), (0.0, 0.0, 1.0, 1.0)),
]


@pytest.mark.parametrize(("box", "expected"), ENLARGE_CASES)
def test_enlarge_box(box, expected):
    assert enlarge_box(box) == pytest.approx(expected)


def test_clipped_box_keeps_its_size():
    # box y=0.02, h=0.1 -> top clipped to 0 but height stays 0.24, so y = 0.23 is inside (not only up to 0.19)
    box = (0.02, 0.4, 0.1, 0.1)
    assert check_actions_match(*tap(0.23, 0.45), *tap(0.0, 0.45), [box])


TO_AITW_CASES = [
    # taps: touch == lift, (y, x) order
    (A("click", x=0.2, y=0.7), ((0.7, 0.2), (0.7, 0.2), DUAL_POINT)),
    (A("long_press", x=0.2, y=0.7), ((0.7, 0.2), (0.7, 0.2), DUAL_POINT)),
    (A("double_click", x=0.2, y=0.7), ((0.7, 0.2), (0.7, 0.2), DUAL_POINT)),
    (A("right_click", x=0.2, y=0.7), ((0.7, 0.2), (0.7, 0.2), DUAL_POINT)),
    # swipe: its two points
    (A("swipe", x=0.5, y=0.8, x2=0.4, y2=0.2), ((0.8, 0.5), (0.2, 0.4), DUAL_POINT)),
    # scroll down: the finger moves up 0.3 from the centre
    (A("scroll", direction="down"), ((0.5, 0.5), (0.2, 0.5), DUAL_POINT)),
    (A("scroll", direction="up"), ((0.5, 0.5), (0.8, 0.5), DUAL_POINT)),
    # scroll right: the finger moves left
    (A("scroll", direction="right"), ((0.5, 0.5), (0.5, 0.2), DUAL_POINT)),
    (A("scroll", direction="left"), ((0.5, 0.5), (0.5, 0.8), DUAL_POINT)),
    # scroll at a point starts there
    (A("scroll", direction="down", x=0.1, y=0.9), ((0.9, 0.1), (0.6, 0.1), DUAL_POINT)),
    (A("type", text="hi"), (AITW_NO_POINT, AITW_NO_POINT, TYPE)),
    (A("back"), (AITW_NO_POINT, AITW_NO_POINT, PRESS_BACK)),
    (A("home"), (AITW_NO_POINT, AITW_NO_POINT, PRESS_HOME)),
    # press enter, in any case
    (A("press", keys=("Enter",)), (AITW_NO_POINT, AITW_NO_POINT, PRESS_ENTER)),
    (A("terminate", status="success"), (AITW_NO_POINT, AITW_NO_POINT, STATUS_TASK_COMPLETE)),
    (A("terminate", status="failure"), (AITW_NO_POINT, AITW_NO_POINT, STATUS_TASK_IMPOSSIBLE)),
    # no AITW id
    (A("press", keys=("tab",)), None),
    (A("press", keys=("enter", "enter")), None),
    (A("hotkey", keys=("ctrl", "c")), None),
    (A("open_app", text="Maps"), None),
    (A("wait"), None),
    (A("answer", text="yes"), None),
    (A("move_to", x=0.1, y=0.1), None),
    (A("drag_to", x=0.1, y=0.1), None),
]


@pytest.mark.parametrize(("action", "expected"), TO_AITW_CASES)
def test_to_aitw(action, expected):
    result = to_aitw(action)
    if expected is None:
        assert result is None
    else:
        assert result[2] == expected[2]
        assert result[0] == pytest.approx(expected[0]) and result[1] == pytest.approx(expected[1])


def test_bbox_to_annotation():
    # [x1, y1, x2, y2] -> (y, x, h, w)
    assert bbox_to_annotation([0.1, 0.2, 0.3, 0.6]) == pytest.approx((0.2, 0.1, 0.4, 0.2))
    for bad in ([0.1, 0.2, 0.3], [0.3, 0.2, 0.1, 0.6], [0.1, float("nan"), 0.3, 0.6], "abcd", None):
        with pytest.raises(ValueError):
            bbox_to_annotation(bad)


ACTIONS_MATCH_CASES = [
    # (id, pred, gt, bbox, expected)
    ("none", None, A("back"), None, False),
    ("click-near", A("click", x=0.55, y=0.5), A("click", x=0.5, y=0.5), None, True),
    ("click-far", A("click", x=0.9, y=0.5), A("click", x=0.5, y=0.5), None, False),
    # a click 0.22 away but inside the gt bbox once enlarged (x in [0.26, 0.74])
    ("click-in-bbox", A("click", x=0.72, y=0.52), A("click", x=0.5, y=0.5), [0.4, 0.45, 0.6, 0.55], True),
    # 0.26 away and outside the enlarged bbox
    ("click-outside-bbox", A("click", x=0.76, y=0.52), A("click", x=0.5, y=0.5), [0.4, 0.45, 0.6, 0.55], False),
    # a long press is a tap too: it matches a click by the AITW rules
    ("long-press-vs-click", A("long_press", x=0.5, y=0.5), A("click", x=0.5, y=0.5), None, True),
    # a scroll down matches a vertical swipe whatever its direction
    ("scroll-vs-swipe", A("scroll", direction="down"), A("swipe", x=0.5, y=0.2, x2=0.5, y2=0.8), None, True),
    ("scroll-vs-hswipe", A("scroll", direction="down"), A("swipe", x=0.2, y=0.5, x2=0.8, y2=0.5), None, False),
    # a type matches a type whatever the text (step_success checks it)
    ("type-any-text", A("type", text="a"), A("type", text="b"), None, True),
    ("enter", A("press", keys=("ENTER",)), A("press", keys=("enter",)), None, True),
    ("enter-vs-type", A("press", keys=("enter",)), A("type", text="a"), None, False),
    # fallbacks: same type and normalized text / keys
    ("open-app", A("open_app", text="  google   MAPS"), A("open_app", text="Google Maps"), None, True),
    ("open-app-other", A("open_app", text="Maps"), A("open_app", text="Chrome"), None, False),
    ("wait", A("wait", seconds=1), A("wait", seconds=5), None, True),
    ("hotkey", A("hotkey", keys=("Ctrl", "C")), A("hotkey", keys=("ctrl", "c")), None, True),
    ("press-tab-vs-esc", A("press", keys=("tab",)), A("press", keys=("esc",)), None, False),
    ("answer-vs-open", A("answer", text="Maps"), A("open_app", text="Maps"), None, False),
    ("move-to-near", A("move_to", x=0.5, y=0.5), A("move_to", x=0.6, y=0.5), None, True),
    ("move-to-far", A("move_to", x=0.1, y=0.5), A("move_to", x=0.6, y=0.5), None, False),
    # an AITW action against one without an id
    ("click-vs-open", A("click", x=0.5, y=0.5), A("open_app", text="Maps"), None, False),
]


@pytest.mark.parametrize(
    ("case", "pred", "gt", "bbox", "expected"), ACTIONS_MATCH_CASES, ids=[c[0] for c in ACTIONS_MATCH_CASES]
)
def test_actions_match(case, pred, gt, bbox, expected):
    assert actions_match(pred, gt, bbox) is expected


TEXT_CASES = [
    # (pred, gt, expected)
    ("New York", "new york city", True),  # pred inside gt
    ("new york city ", "New York", True),  # gt inside pred
    ("boston", "new york", False),
    ("", "new york", False),  # an empty prediction never matches
    (None, "new york", False),
    ("", "", True),
]


@pytest.mark.parametrize(("pred", "gt", "expected"), TEXT_CASES)
def test_text_matches(pred, gt, expected):
    assert text_matches(pred, gt) is expected


STEP_CASES = [
    # (pred, gt, expected)
    (A("type", text="weather"), A("type", text="weather today"), True),
    (A("type", text="sports"), A("type", text="weather today"), False),
    (A("click", x=0.5, y=0.5), A("click", x=0.52, y=0.5), True),
    (A("back"), A("home"), False),
    (None, A("home"), False),
]


@pytest.mark.parametrize(("pred", "gt", "expected"), STEP_CASES)
def test_step_success(pred, gt, expected):
    assert step_success(pred, gt) is expected
