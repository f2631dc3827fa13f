"""Table-driven tests of the evaluation's per-sample metrics (r1_gui.evaluation.metrics), hand-computed."""

from __future__ import annotations

import pytest

from r1_gui.actions import Action, extract_action, original_call, read_bbox
from r1_gui.evaluation.metrics import METRICS, UNPARSED, aggregate, paper_param_match, score_output
from r1_gui.rewards import REWARD_FUNCS, accuracy_reward, action_type_reward, step_success_reward
from r1_gui.scoring import REWARD_METRICS, click_hit


def aguvis(code: str) -> str:
    """An Aguvis completion as decoded with special tokens skipped."""
    return f"Thought: the next step.\nAction: do it.\nassistantos\n{code}"


CLICK = "pyautogui.click(x=0.5, y=0.5)"
WRITE = "pyautogui.write(message='New York')"
SCROLL_DOWN = "pyautogui.scroll(page=-0.1)"
# bbox [x1, y1, x2, y2] = [0.3, 0.45, 0.7, 0.55]: the AITW-enlarged box is x in [0.02, 0.98], y in [0.38, 0.62]
BOX = [0.3, 0.45, 0.7, 0.55]

SCORE_CASES = [
    # (id, output, ground-truth code, bbox, expected (type, param, paper_param, action_match, step_success))
    # the exact click: right on every metric
    ("exact-click", aguvis(CLICK), CLICK, None, (1, 1, 1, 1, 1)),
    # 0.1 away: AITW match (<= 0.14), but not the exact arguments
    ("near-click", aguvis("pyautogui.click(x=0.6, y=0.5)"), CLICK, None, (1, 0, 0, 1, 1)),
    # 0.127 away diagonally: still within 0.14
    ("near-click-diagonal", aguvis("pyautogui.click(x=0.59, y=0.59)"), CLICK, None, (1, 0, 0, 1, 1)),
    # 0.57 away: wrong point
    ("far-click", aguvis("pyautogui.click(x=0.9, y=0.9)"), CLICK, None, (1, 0, 0, 0, 0)),
    # 0.3 away but both points inside the enlarged bbox: AITW match
    ("click-in-enlarged-bbox", aguvis("pyautogui.click(x=0.8, y=0.5)"), CLICK, BOX, (1, 0, 0, 1, 1)),
    # the same point without a box: no match
    ("same-point-no-bbox", aguvis("pyautogui.click(x=0.8, y=0.5)"), CLICK, None, (1, 0, 0, 0, 0)),
    # below the enlarged box (y 0.7 > 0.62) and far: no match
    ("click-outside-enlarged-bbox", aguvis("pyautogui.click(x=0.8, y=0.7)"), CLICK, BOX, (1, 0, 0, 0, 0)),
    # 4e-4 off: exact within the data's printed precision, but a different text for the paper metric
    ("click-within-tolerance", aguvis("pyautogui.click(x=0.5004, y=0.5)"), CLICK, None, (1, 1, 0, 1, 1)),
    # a long press where a click was due: another type, same argument text; AITW sees two taps at one point
    ("long-press-for-click", aguvis("mobile.long_press(x=0.5, y=0.5)"), CLICK, None, (0, 0, 1, 1, 1)),
    # the right text
    ("type-same-text", aguvis(WRITE), WRITE, None, (1, 1, 1, 1, 1)),
    # a longer text containing the ground truth (lowercase): AITW text match, not exact
    ("type-superstring", aguvis("pyautogui.write(message='new york city')"), WRITE, None, (1, 0, 0, 1, 1)),
    # another text: AITW matches type actions by type alone, step success needs the text
    ("type-other-text", aguvis("pyautogui.write(message='weather')"), WRITE, None, (1, 0, 0, 1, 0)),
    # argument-less back: exact for param; the paper metric finds no call in "mobile.back()" (its bug, kept): 0
    ("back", aguvis("mobile.back()"), "mobile.back()", None, (1, 1, 0, 1, 1)),
    # argument-less home: the same
    ("home", aguvis("mobile.home()"), "mobile.home()", None, (1, 1, 0, 1, 1)),
    # home for back: wrong everywhere
    ("home-for-back", aguvis("mobile.home()"), "mobile.back()", None, (0, 0, 0, 0, 0)),
    # the same scroll
    ("scroll-same", aguvis(SCROLL_DOWN), SCROLL_DOWN, None, (1, 1, 1, 1, 1)),
    # the opposite direction: same type, other argument; AITW compares the axis only
    ("scroll-opposite-direction", aguvis("pyautogui.scroll(page=0.1)"), SCROLL_DOWN, None, (1, 0, 0, 1, 1)),
    # a horizontal scroll for a vertical one: same canonical type, other axis
    ("scroll-other-axis", aguvis("pyautogui.hscroll(page=0.1)"), SCROLL_DOWN, None, (1, 0, 0, 0, 0)),
    # prose without an action
    ("unparsed-prose", "I would tap the clock.", CLICK, None, (0, 0, 0, 0, 0)),
    # a coordinate out of [0, 1] does not parse
    ("unparsed-out-of-range", aguvis("pyautogui.click(x=1.5, y=0.5)"), CLICK, None, (0, 0, 0, 0, 0)),
    # nothing at all
    ("empty-output", "", CLICK, None, (0, 0, 0, 0, 0)),
    # open_app with the right app
    ("open-app-same", aguvis("mobile.open_app(app_name='Clock')"), "mobile.open_app(app_name='Clock')", None,
     (1, 1, 1, 1, 1)),
    # open_app with another app: AITW has no id for it, the fallback compares the text
    ("open-app-other", aguvis("mobile.open_app(app_name='Camera')"), "mobile.open_app(app_name='Clock')", None,
     (1, 0, 0, 0, 0)),
    # the app name in lowercase: not exact, but the fallback's normalized text matches
    ("open-app-lowercase", aguvis("mobile.open_app(app_name='clock')"), "mobile.open_app(app_name='Clock')", None,
     (1, 0, 0, 1, 1)),
    # keys='enter' and keys=['enter'] are one action, two texts
    ("press-enter-spelling", aguvis("pyautogui.press(keys='enter')"), "pyautogui.press(keys=['enter'])", None,
     (1, 1, 0, 1, 1)),
    # terminate failure for success: AITW task-complete vs task-impossible
    ("terminate-wrong-status", aguvis("mobile.terminate(status='failure')"), "mobile.terminate(status='success')",
     None, (1, 0, 0, 0, 0)),
    # spaces inside the parentheses: the same action for r1_gui, another argument text for the paper metric
    ("paper-spaces", aguvis("pyautogui.click( x=0.5, y=0.5 )"), CLICK, None, (1, 1, 0, 1, 1)),
    # a prose line with parentheses before a bare call: r1_gui reads the call, the paper metric the prose
    ("paper-prose-first", f"I tap it (the clock).\n{CLICK}", CLICK, None, (1, 1, 0, 1, 1)),
    # the text up to the first ")" is equal, so the paper metric counts a wrong text as exact (as the original)
    ("paper-smile", aguvis("pyautogui.write(message='smile :) no')"), "pyautogui.write(message='smile :) ok ')",
     None, (1, 0, 1, 1, 0)),
    # the think_answer style: the action inside <answer>
    ("think-answer-style", f"<think>tap it</think>\n<answer>{CLICK}</answer>", CLICK, None, (1, 1, 1, 1, 1)),
]  # fmt: skip


@pytest.mark.parametrize(
    "output, gt_code, bbox, expected", [case[1:] for case in SCORE_CASES], ids=[case[0] for case in SCORE_CASES]
)
def test_score_output(output, gt_code, bbox, expected):
    ground_truth = extract_action(gt_code)
    _, scores = score_output(output, ground_truth, solution=f"<answer>{gt_code}</answer>", bbox=bbox)
    names = ("type_match", "param_match", "paper_param_match", "action_match", "step_success")
    assert tuple(int(scores[name]) for name in names) == expected


@pytest.mark.parametrize(
    "output, gt_code, bbox, expected", [case[1:] for case in SCORE_CASES], ids=[case[0] for case in SCORE_CASES]
)
def test_metrics_agree_with_the_rewards(output, gt_code, bbox, expected):
    """The rewards score every case as the metrics do: type, type + arguments, step success."""
    solution = [f"<answer>{gt_code}</answer>"]
    kwargs = {"completions": [output], "solution": solution, "bbox": [bbox]}
    assert action_type_reward(**kwargs) == [float(expected[0])]
    assert accuracy_reward(**kwargs) == [pytest.approx(0.5 * expected[0] + 0.5 * expected[1])]
    assert step_success_reward(**kwargs) == [float(expected[4])]


# Cases where a reward and its metric could part: each row is scored by every pair of REWARD_METRICS.
REWARD_METRIC_CASES = [
    # (id, output, ground-truth code, bbox)
    *[case[:4] for case in SCORE_CASES],
    # a type with the right action but other text: AITW action match, yet no step success
    ("type-other-text", aguvis("pyautogui.write(message='paris')"), "pyautogui.write(message='new york')", None),
    # a tap inside the enlarged box but 0.3 from the point: matches through the box
    ("tap-in-box", aguvis("pyautogui.click(x=0.8, y=0.5)"), CLICK, BOX),
    # a malformed box (x2 < x1) is ignored by both: scored as without a box
    ("bad-box", aguvis("pyautogui.click(x=0.8, y=0.5)"), CLICK, [0.7, 0.45, 0.3, 0.55]),
    # no action in the output
    ("prose-only", "I do not know what to do.", CLICK, None),
    # an empty output
    ("empty", "", CLICK, None),
]


@pytest.mark.parametrize("reward, metric", sorted(REWARD_METRICS.items()))
@pytest.mark.parametrize(
    "output, gt_code, bbox", [case[1:] for case in REWARD_METRIC_CASES], ids=[case[0] for case in REWARD_METRIC_CASES]
)
def test_each_reward_equals_its_metric(reward, metric, output, gt_code, bbox):
    """REWARD_METRICS: the reward's value is the metric's per-sample score, case by case."""
    solution = f"<answer>{gt_code}</answer>"
    # the evaluation reads a row's box with read_bbox (r1_gui.evaluation.steps.samples), the rewards too
    _, scores = score_output(output, extract_action(gt_code), solution=solution, bbox=read_bbox(bbox))
    (value,) = REWARD_FUNCS[reward](completions=[output], solution=[solution], bbox=[bbox])
    assert value == float(scores[METRICS[metric]])


def test_reward_metrics_name_real_rewards_and_metrics():
    assert set(REWARD_METRICS) <= set(REWARD_FUNCS)
    assert set(REWARD_METRICS.values()) <= set(METRICS)


PAPER_CASES = [
    # (id, output, solution, expected): the original's reading, bugs included
    # the same text
    ("same", "pyautogui.click(x=0.5, y=0.3)", "pyautogui.click(x=0.5, y=0.3)", True),
    # whitespace inside the parentheses is text like any other (the original compares the argument text as it is)
    ("outer-whitespace", "pyautogui.click( x=0.0852, y=0.1032 )", "pyautogui.click(x=0.0852, y=0.1032)", False),
    # ... so the same spacing on both sides is equal
    ("same-whitespace", "pyautogui.click( x=0.0852, y=0.1032 )", "pyautogui.click( x=0.0852, y=0.1032 )", True),
    # and whitespace inside the text too
    ("inner-whitespace", "pyautogui.click(x=0.5,y=0.3)", "pyautogui.click(x=0.5, y=0.3)", False),
    # text, not numbers: 0.50 is not 0.5
    ("trailing-zero", "pyautogui.click(x=0.50, y=0.3)", "pyautogui.click(x=0.5, y=0.3)", False),
    # the function name is ignored
    ("other-name", "mobile.long_press(x=0.5, y=0.3)", "pyautogui.click(x=0.5, y=0.3)", True),
    # the original's bug, kept: an argument-less call is no call, so a right back is never counted
    ("back-back", "mobile.back()", "mobile.back()", False),
    ("home-back", "mobile.home()", "mobile.back()", False),
    ("empty-vs-args", "mobile.wait()", "mobile.wait(seconds=3)", False),
    # "()" with a later ")" on the line reads up to that one: ") (x"
    ("empty-then-parenthesis", "mobile.back() (x)", "mobile.back() (x)", True),
    # the solution's first one-line <answer> is read
    ("solution-tags", "pyautogui.click(x=0.5, y=0.3)", "<answer>pyautogui.click(x=0.5, y=0.3)</answer>", True),
    # ... and without DOTALL an <answer> spanning lines is none: the solution is read whole, "<answer>" first
    ("solution-tags-lines", "pyautogui.click(x=0.5, y=0.3)", "<answer>\npyautogui.click(x=0.5, y=0.3)\n</answer>",
     True),
    # the arguments end at the first ")": both read "message='smile :", so equal, as in the original
    ("smile-same", "pyautogui.write(message='smile :) ok ')", "pyautogui.write(message='smile :) ok ')", True),
    # ... and equal even where the texts differ after the ")" (the original gives 1 here too)
    ("smile-differs-after", "pyautogui.write(message='smile :) no')", "pyautogui.write(message='smile :) ok ')",
     True),
    # brackets inside the arguments are text up to the first ")"
    ("nested", "mobile.swipe(from_coord=[0.5, 0.8], to_coord=[0.5, 0.2])",
     "mobile.swipe(from_coord=[0.5, 0.8], to_coord=[0.5, 0.2])", True),
    # a prose line without parentheses before the call is skipped (the regex does not cross lines)
    ("prose-line-before", "I will tap the clock.\npyautogui.click(x=0.5, y=0.3)", "pyautogui.click(x=0.5, y=0.3)",
     True),
    # a prose line with parentheses before the call holds the first call: its "arguments" are compared
    ("prose-parentheses-before", "I tap it (the blue one).\npyautogui.click(x=0.5, y=0.3)",
     "pyautogui.click(x=0.5, y=0.3)", False),
    # the plan before the first "assistantos" is skipped, parentheses and all
    ("plan-skipped", "Thought: tap (the clock)\nAction: tap\nassistantos\npyautogui.click(x=0.5, y=0.3)",
     "pyautogui.click(x=0.5, y=0.3)", True),
    # after the FIRST marker: a second os turn does not count
    ("first-marker", "assistantos\npyautogui.click(x=0.1, y=0.2)\nassistantos\npyautogui.click(x=0.5, y=0.3)",
     "pyautogui.click(x=0.5, y=0.3)", False),
    # with special tokens kept there is no "assistantos": the whole output is read, the plan's call comes first
    ("recipient-token-not-a-marker",
     "Action: press(back)<|im_end|>\n<|im_start|>assistant<|recipient|>os\nmobile.back()", "mobile.back()", False),
    # a mobile_use JSON call has no parentheses
    ("json-call", '{"name": "mobile_use", "arguments": {"action": "system_button", "button": "Back"}}',
     "mobile.back()", False),
    # nothing found
    ("none", None, "mobile.back()", False),
    # an unclosed call
    ("unclosed", "pyautogui.click(x=0.5, y=0.3", "pyautogui.click(x=0.5, y=0.3)", False),
]  # fmt: skip


@pytest.mark.parametrize(
    "output, gt_code, expected", [case[1:] for case in PAPER_CASES], ids=[case[0] for case in PAPER_CASES]
)
def test_paper_param_match(output, gt_code, expected):
    assert paper_param_match(output, gt_code) is expected


CALL_CASES = [
    # (id, output, original reading)
    # Aguvis decoded without special tokens: after "assistantos"; the name starts after the newline
    ("aguvis-decoded", aguvis(CLICK), ("pyautogui.click", "x=0.5, y=0.5")),
    # the text after the marker is stripped; spaces inside the parentheses are kept
    ("spaces-kept", "assistantos pyautogui.click( x=0.1 )", ("pyautogui.click", " x=0.1 ")),
    # an argument-less call is none
    ("argument-less", "assistantos\nmobile.back()", None),
    # ... and where a ")" follows later on the line, the arguments run on to it
    ("argument-less-then-more", "mobile.back() or home(x)", ("mobile.back", ") or home(x")),
    # the first ")" ends the arguments
    ("smile", "pyautogui.write(message='smile :) ok ')", ("pyautogui.write", "message='smile :")),
    # the think_answer style: the whole output, the call's line
    ("answer-tag", f"<think>tap it</think>\n<answer>{CLICK}</answer>", ("<answer>pyautogui.click", "x=0.5, y=0.5")),
    # nothing
    ("empty", "", None),
    ("not-a-string", 7, None),
]  # fmt: skip


@pytest.mark.parametrize("output, original", [case[1:] for case in CALL_CASES], ids=[case[0] for case in CALL_CASES])
def test_original_call(output, original):
    assert original_call(output) == original


def _record(gt_type: str, pred_type: str | None, scores: tuple[int, ...], error: str | None = None) -> dict:
    names = ("type_match", "param_match", "paper_param_match", "action_match", "step_success")
    return {
        "id": f"{gt_type}-{pred_type}-{scores}",
        "ground_truth": {"type": gt_type},
        "prediction": None if pred_type is None else {"type": pred_type},
        "scores": dict(zip(names, map(bool, scores), strict=True)),
        "error": error,
    }


def test_aggregate_overall_per_type_and_confusion():
    records = [
        _record("click", "click", (1, 1, 1, 1, 1)),
        _record("click", "long_press", (0, 0, 1, 1, 1)),
        _record("back", "home", (0, 0, 1, 0, 0)),
        _record("back", None, (0, 0, 0, 0, 0), error="image: missing"),
    ]
    metrics = aggregate(records)
    assert metrics["num_samples"] == 4
    assert metrics["parse_rate"] == pytest.approx(0.75)
    assert metrics["type_accuracy"] == pytest.approx(0.25)
    assert metrics["param_accuracy"] == pytest.approx(0.25)
    assert metrics["paper_param_accuracy"] == pytest.approx(0.75)
    assert metrics["action_match_accuracy"] == pytest.approx(0.5)
    assert metrics["step_success"] == pytest.approx(0.5)
    assert metrics["num_errors"] == 1
    assert list(metrics["per_type"]) == ["click", "back"]  # canonical type order
    # each rate with its Wilson interval over the type's samples: 2 of 2 -> [0.3424, 1], 1 of 2 -> [0.0945, 0.9055]
    all_of_two, one_of_two = pytest.approx([0.342380, 1.0], abs=1e-6), pytest.approx([0.094531, 0.905469], abs=1e-6)
    assert metrics["per_type"]["click"] == {
        "num_samples": 2,
        "parse_rate": 1.0,
        "parse_rate_ci95": all_of_two,
        "type_accuracy": 0.5,
        "type_accuracy_ci95": one_of_two,
        "param_accuracy": 0.5,
        "param_accuracy_ci95": one_of_two,
        "paper_param_accuracy": 1.0,
        "paper_param_accuracy_ci95": all_of_two,
        "action_match_accuracy": 1.0,
        "action_match_accuracy_ci95": all_of_two,
        "step_success": 1.0,
        "step_success_ci95": all_of_two,
    }
    # overall, over the 4 samples: 1 of 4 -> [0.0456, 0.6994], 3 of 4 -> [0.3006, 0.9544]
    assert metrics["type_accuracy_ci95"] == pytest.approx([0.045587, 0.699358], abs=1e-6)
    assert metrics["parse_rate_ci95"] == pytest.approx([0.300642, 0.954413], abs=1e-6)
    assert metrics["per_type"]["back"]["parse_rate"] == pytest.approx(0.5)
    assert metrics["confusion_matrix"] == {
        "click": {"click": 1, "long_press": 1, "home": 0, UNPARSED: 0},
        "back": {"click": 0, "long_press": 0, "home": 1, UNPARSED: 1},
    }
    assert list(metrics["confusion_matrix"]["click"]) == ["click", "long_press", "home", UNPARSED]


def test_aggregate_of_no_records_is_empty():
    metrics = aggregate([])
    assert metrics["num_samples"] == 0 and metrics["per_type"] == {} and metrics["confusion_matrix"] == {}
    assert metrics["step_success_ci95"] is None  # no samples, no interval


@pytest.mark.parametrize(
    "pred, box, expected",
    [
        (Action("click", x=0.3, y=0.45), (0.25, 0.4, 0.5, 0.5), True),  # inside the box
        (Action("click", x=0.5, y=0.5), (0.25, 0.4, 0.5, 0.5), True),  # on its corner: edges count
        (Action("click", x=0.51, y=0.45), (0.25, 0.4, 0.5, 0.5), False),  # just right of it
        (Action("click", x=0.3, y=0.39), (0.25, 0.4, 0.5, 0.5), False),  # just above it
        (Action("double_click", x=0.3, y=0.45), (0.25, 0.4, 0.5, 0.5), False),  # there, but not a click
        (Action("type", text="hi"), (0.25, 0.4, 0.5, 0.5), False),  # no point at all
        (None, (0.25, 0.4, 0.5, 0.5), False),  # nothing parsed
        (Action("click", x=0.3, y=0.45), None, None),  # no target: nothing to hit
        (Action("click", x=0.3, y=0.45), [0.5, 0.4, 0.25, 0.5], None),  # x2 < x1: not a box
        (Action("click", x=0.3, y=0.45), ["a", 0.4, 0.5, 0.5], None),  # not numbers: not a box
        (Action("click", x=0.3, y=0.45), [0.25, 0.4, 0.5], None),  # three values: not a box
        (Action("click", x=0.3, y=0.45), [float("nan"), 0.4, 0.5, 0.5], None),  # NaN: not a box
        (Action("click", x=0.3, y=0.45), [0.25, 0.4, float("inf"), 0.5], None),  # infinite: not a box
        (Action("click", x=0.3, y=0.45), "0.25 0.4 0.5 0.5", None),  # a string: not a box
        (Action("click", x=0.2, y=0.4), (0.2, 0.4, 0.2, 0.4), True),  # a box of one point, clicked exactly
        (Action("long_press", x=0.3, y=0.45), (0.25, 0.4, 0.5, 0.5), False),  # a press there is no click
    ],
)
def test_click_hit(pred, box, expected):
    assert click_hit(pred, box) is expected
