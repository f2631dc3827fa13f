"""Table-driven tests of the GRPO rewards (r1_gui.rewards), called the way trl.GRPOTrainer calls them."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from r1_gui.actions import Action
from r1_gui.rewards import (
    PROMPT_STYLES,
    REWARD_FUNCS,
    expand_reward_presets,
    get_reward_funcs,
    reward_params,
)
from r1_gui.scoring import score_pair
from r1_gui.scoring.guir1 import guir1_text_f1

A = Action


def call(name, completions, solutions, **kwargs):
    """One reward call with every keyword GRPOTrainer passes."""
    n = len(completions)
    return REWARD_FUNCS[name](
        prompts=[[{"role": "user", "content": "p"}]] * n,
        completions=completions,
        completion_ids=[[1, 2]] * n,
        solution=solutions,
        image=[None] * n,
        trainer_state=None,
        log_extra=None,
        log_metric=None,
        **kwargs,
    )


def score(name, completion, solution, **kwargs):
    (value,) = call(name, [completion], [solution], **kwargs)
    return value


CLICK = "pyautogui.click(x=0.5, y=0.5)"

# ------------------------------------------------------------------------------------------------ accuracy

ACCURACY_CASES = [
    # (id, completion, solution, kwargs, expected)
    # argument-less actions are exact (the seed scored these 0)
    ("back", "mobile.back()", "mobile.back()", {}, 1.0),
    ("home", "assistantos\nmobile.home()", "<answer>mobile.home()</answer>", {}, 1.0),
    # within the printed precision
    ("click-exact", "pyautogui.click(x=0.5004, y=0.5)", CLICK, {}, 1.0),
    # right type, wrong point
    ("click-off", "pyautogui.click(x=0.6, y=0.5)", CLICK, {}, 0.5),
    # same point, wrong type
    ("long-press", "mobile.long_press(x=0.5, y=0.5)", CLICK, {}, 0.0),
    # both press spellings are the same action
    ("press-spellings", "pyautogui.press(keys='enter')", "pyautogui.press(keys=['enter'])", {}, 1.0),
    # typed text compared after strip
    ("type-same", "pyautogui.write(message='hello ')", "pyautogui.write(message='hello')", {}, 1.0),
    ("type-other", "pyautogui.write(message='bye')", "pyautogui.write(message='hello')", {}, 0.5),
    # scroll direction is the argument
    ("scroll-direction", "pyautogui.scroll(page=0.1)", "pyautogui.scroll(page=-0.1)", {}, 0.5),
    # nothing parseable
    ("garbage", "I will click", CLICK, {}, 0.0),
    # a broken ground truth gives 0, not an error
    ("bad-solution", CLICK, "pyautogui.click(x=", {}, 0.0),
    # weights from the config
    ("weights-type-only", "pyautogui.click(x=0.9, y=0.5)", CLICK, {"type_weight": 0.2, "argument_weight": 0.8}, 0.2),
    ("weights-exact", CLICK, CLICK, {"type_weight": 0.2, "argument_weight": 0.8}, 1.0),
    # the model's coordinate convention: grid1000 completion vs normalized solution
    ("grid1000", "pyautogui.click(x=500, y=500)", CLICK, {"coordinates": "grid1000"}, 1.0),
    # the nearest 999-grid cell to 0.5 is 500/999 = 0.5005: exact within half a grid unit, not within 5e-4
    ("grid999-nearest-cell", "pyautogui.click(x=500, y=500)", CLICK, {"coordinates": "grid999"}, 1.0),
    ("grid999-next-cell", "pyautogui.click(x=501, y=500)", CLICK, {"coordinates": "grid999"}, 0.5),
    # Qwen2.5-VL pixels of the resized image
    ("pixels", "pyautogui.click(x=224, y=518)", CLICK, {"coordinates": "pixels", "screen_size": [(448, 1036)]}, 1.0),
    # pixels without a screen size cannot be scored
    ("pixels-no-size", "pyautogui.click(x=224, y=518)", CLICK, {"coordinates": "pixels"}, 0.0),
]


@pytest.mark.parametrize(
    ("case", "completion", "solution", "kwargs", "expected"), ACCURACY_CASES, ids=[c[0] for c in ACCURACY_CASES]
)
def test_accuracy(case, completion, solution, kwargs, expected):
    assert score("accuracy", completion, solution, **kwargs) == pytest.approx(expected)


# -------------------------------------------------------------------------------------------------- format

TOOL_CALL = (
    '<tool_call>\n{"name": "mobile_use", "arguments": {"action": "system_button", "button": "Back"}}\n</tool_call>'
)

FORMAT_CASES = [
    # (id, prompt style, completion, expected)
    # Aguvis l2 plan then the os channel, decoded with skip_special_tokens
    ("aguvis-l2", "aguvis", "Thought: go back\nAction: press back\nassistantos\nmobile.back()", 1.0),
    # l1 plan, special tokens kept
    (
        "aguvis-l1",
        "aguvis",
        "Action: tap OK<|diff_marker|>\n<|im_start|>assistant<|recipient|>os\npyautogui.click(x=0.1, y=0.2)<|im_end|>",
        1.0,
    ),
    # l3 plan, after the all-channel name
    ("aguvis-l3", "aguvis", "all\nObservation: o\nThought: t\nAction: a\nassistantos\nmobile.home()", 1.0),
    # no plan
    ("aguvis-no-plan", "aguvis", "assistantos\nmobile.back()", 0.0),
    # no os channel
    ("aguvis-no-channel", "aguvis", "Thought: t\nAction: mobile.back()", 0.0),
    # an empty action cannot farm the format reward
    ("aguvis-empty-code", "aguvis", "Thought: t\nAction: a\nassistantos\n", 0.0),
    # a broken action neither
    ("aguvis-broken-code", "aguvis", "Thought: t\nAction: a\nassistantos\npyautogui.click(x=0.5", 0.0),
    # two calls in the channel
    ("aguvis-two-calls", "aguvis", "Action: a\nassistantos\nmobile.back()\nmobile.back()", 0.0),
    # an empty thought
    ("aguvis-empty-thought", "aguvis", "Thought: \nAction: a\nassistantos\nmobile.back()", 0.0),
    # an empty plan action
    ("aguvis-empty-action", "aguvis", "Thought: t\nAction:  \nassistantos\nmobile.back()", 0.0),
    # Thought and Action on one line
    ("aguvis-one-line", "aguvis", "Thought: t Action: a\nassistantos\nmobile.back()", 0.0),
    # think / answer
    ("think-answer", "think_answer", "<think>t</think><answer>mobile.back()</answer>", 1.0),
    (
        "think-answer-spaced",
        "think_answer",
        "<think>\nt\n</think>\n<answer>\npyautogui.click(x=0.1, y=0.2)\n</answer><|im_end|>",
        1.0,
    ),
    ("think-answer-empty", "think_answer", "<think>t</think><answer></answer>", 0.0),
    ("think-answer-no-think", "think_answer", "<answer>mobile.back()</answer>", 0.0),
    ("think-answer-empty-think", "think_answer", "<think> </think><answer>mobile.back()</answer>", 0.0),
    ("think-answer-trailing", "think_answer", "<think>t</think><answer>mobile.back()</answer> and more", 0.0),
    (
        "think-answer-two",
        "think_answer",
        "<think>t</think><answer>mobile.back()</answer><answer>mobile.back()</answer>",
        0.0,
    ),
    ("think-answer-between", "think_answer", "<think>t</think> so <answer>mobile.back()</answer>", 0.0),
    # the Aguvis style under think_answer does not count
    ("think-answer-wrong-style", "think_answer", "Thought: t\nAction: a\nassistantos\nmobile.back()", 0.0),
    # mobile_use
    ("mobile-use", "mobile_use", f"Thought: go back\nAction: press back\n{TOOL_CALL}", 1.0),
    ("mobile-use-no-thought", "mobile_use", f"Action: press back\n{TOOL_CALL}", 0.0),
    ("mobile-use-no-action", "mobile_use", f"Thought: t\n{TOOL_CALL}", 0.0),
    ("mobile-use-broken", "mobile_use", 'Thought: t\nAction: a\n<tool_call>\n{"name": \n</tool_call>', 0.0),
    ("mobile-use-trailing", "mobile_use", f"Thought: t\nAction: a\n{TOOL_CALL}\nthanks", 0.0),
    ("mobile-use-two", "mobile_use", f"Thought: t\nAction: a\n{TOOL_CALL}\n{TOOL_CALL}", 0.0),
    # an unknown style scores nothing
    ("unknown-style", "xml", "<think>t</think><answer>mobile.back()</answer>", 0.0),
]


@pytest.mark.parametrize(("case", "style", "completion", "expected"), FORMAT_CASES, ids=[c[0] for c in FORMAT_CASES])
def test_format(case, style, completion, expected):
    assert score("format", completion, "mobile.back()", prompt_style=style) == expected


PLACEHOLDER_CASES = [
    # (id, prompt style, completion, expected), on a 448x1036 screen so that GUI-R1 pixel answers parse
    # GUI-R1's placeholder is no text: a type or open_app holding it fails the format, as in GUI-R1
    ("guir1-type-placeholder", "think_answer",
     "<think>t</think><answer>[{'action': 'type', 'point': [-100, -100], 'input_text': 'no input text'}]</answer>",
     0.0),
    ("guir1-open-app-placeholder", "think_answer",
     "<think>t</think><answer>[{'action': 'open_app', 'point': [-100, -100], 'input_text': 'no input text'}]</answer>",
     0.0),
    # ... in any action format
    ("aguvis-write-placeholder", "aguvis", "Action: type\nassistantos\npyautogui.write(message='no input text')", 0.0),
    # real text passes
    ("guir1-type-text", "think_answer",
     "<think>t</think><answer>[{'action': 'type', 'point': [-100, -100], 'input_text': 'hello'}]</answer>", 1.0),
    # the placeholder is fine where an action takes no text
    ("guir1-back-placeholder", "think_answer",
     "<think>t</think><answer>[{'action': 'press_back', 'point': [-100, -100], 'input_text': 'no input text'}]"
     "</answer>", 1.0),
]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "style", "completion", "expected"), PLACEHOLDER_CASES, ids=[c[0] for c in PLACEHOLDER_CASES]
)
def test_format_rejects_the_placeholder_text(case, style, completion, expected):
    assert score("format", completion, "mobile.back()", prompt_style=style, screen_size=[(448, 1036)]) == expected


def test_format_parses_with_the_coordinate_convention():
    # a pixel point needs the screen size to count as a parseable action
    completion = "<think>t</think><answer>[{'action': 'click', 'point': [224, 518]}]</answer>"
    assert score("format", completion, CLICK, prompt_style="think_answer", screen_size=[(448, 1036)]) == 1.0
    assert score("format", completion, CLICK, prompt_style="think_answer") == 0.0


# -------------------------------------------------------------------------------- action_type, step_success

TYPE_AND_MATCH_CASES = [
    # (id, completion, solution, bbox, action_type, step_success)
    ("click-near", "pyautogui.click(x=0.6, y=0.5)", CLICK, None, 1.0, 1.0),
    ("click-far", "pyautogui.click(x=0.9, y=0.5)", CLICK, None, 1.0, 0.0),
    # far, but both in the ground truth's enlarged box
    ("click-in-box", "pyautogui.click(x=0.72, y=0.52)", CLICK, [0.4, 0.45, 0.6, 0.55], 1.0, 1.0),
    # a malformed box is ignored, not an error
    ("click-bad-box", "pyautogui.click(x=0.72, y=0.52)", CLICK, [0.6, 0.45, 0.4], 1.0, 0.0),
    # a long press is an AITW tap: step_success 1 though the type differs
    ("long-press", "mobile.long_press(x=0.5, y=0.5)", CLICK, None, 0.0, 1.0),
    # typed text: substring either way
    (
        "type-substring",
        "pyautogui.write(message='weather')",
        "pyautogui.write(message='Weather today')",
        None,
        1.0,
        1.0,
    ),
    ("type-wrong", "pyautogui.write(message='sports')", "pyautogui.write(message='weather')", None, 1.0, 0.0),
    ("back", "mobile.back()", "mobile.back()", None, 1.0, 1.0),
    # a scroll matches a swipe on the same axis
    (
        "scroll-vs-swipe",
        "pyautogui.scroll(page=-0.1)",
        "mobile.swipe(from_coord=[0.5, 0.8], to_coord=[0.5, 0.2])",
        None,
        0.0,
        1.0,
    ),
    ("open-app", "mobile.open_app(app_name='google maps')", "mobile.open_app(app_name='Google Maps')", None, 1.0, 1.0),
    ("none", "nothing", "mobile.home()", None, 0.0, 0.0),
]


@pytest.mark.parametrize(
    ("case", "completion", "solution", "bbox", "type_expected", "match_expected"),
    TYPE_AND_MATCH_CASES,
    ids=[c[0] for c in TYPE_AND_MATCH_CASES],
)
def test_action_type_and_match(case, completion, solution, bbox, type_expected, match_expected):
    assert score("action_type", completion, solution, bbox=[bbox]) == type_expected
    assert score("step_success", completion, solution, bbox=[bbox]) == match_expected


# ---------------------------------------------------------------------------------------- dense rewards

CLICK_DISTANCE_CASES = [
    # (id, completion, solution, kwargs, expected)
    ("within-threshold", "pyautogui.click(x=0.53, y=0.5)", CLICK, {}, 1.0),
    # d = 0.17: (0.3 - 0.17) / (0.3 - 0.04) = 0.5
    ("halfway", "pyautogui.click(x=0.5, y=0.67)", CLICK, {}, 0.5),
    ("beyond-cutoff", "pyautogui.click(x=0.9, y=0.5)", CLICK, {}, 0.0),
    # d = 0.05 with a 0.05 threshold from the config
    ("threshold-override", "pyautogui.click(x=0.55, y=0.5)", CLICK, {"threshold": 0.05}, 1.0),
    # d = 0.2, cutoff 0.4, threshold 0.04: 0.2 / 0.36
    ("cutoff-override", "pyautogui.click(x=0.7, y=0.5)", CLICK, {"cutoff": 0.4}, 0.2 / 0.36),
    # the swipe's start point counts
    ("swipe-start", "mobile.swipe(from_coord=[0.5, 0.5], to_coord=[0.5, 0.1])", CLICK, {}, 1.0),
    # no point in the prediction
    ("pred-no-point", "mobile.back()", CLICK, {}, 0.0),
    # no point in the ground truth: does not apply
    ("gt-no-point", CLICK, "mobile.back()", {}, None),
    ("bad-solution", CLICK, "???", {}, None),
]


@pytest.mark.parametrize(
    ("case", "completion", "solution", "kwargs", "expected"),
    CLICK_DISTANCE_CASES,
    ids=[c[0] for c in CLICK_DISTANCE_CASES],
)
def test_click_distance(case, completion, solution, kwargs, expected):
    assert score("click_distance", completion, solution, **kwargs) == pytest.approx(expected)


CLICK_GAUSSIAN_CASES = [
    # (id, completion, solution, bbox, kwargs, expected)
    ("exact", CLICK, CLICK, None, {}, 1.0),
    # one sigma (0.05) off in x
    ("one-sigma", "pyautogui.click(x=0.55, y=0.5)", CLICK, None, {}, math.exp(-0.5)),
    # one sigma in x and y
    ("diagonal", "pyautogui.click(x=0.55, y=0.55)", CLICK, None, {}, math.exp(-1.0)),
    # the box's half width (0.1) is sigma_x; half height (0.05) is sigma_y
    ("box-x", "pyautogui.click(x=0.6, y=0.5)", CLICK, [0.4, 0.45, 0.6, 0.55], {}, math.exp(-0.5)),
    ("box-y", "pyautogui.click(x=0.5, y=0.55)", CLICK, [0.4, 0.45, 0.6, 0.55], {}, math.exp(-0.5)),
    # a flat box falls back to sigma
    ("flat-box", "pyautogui.click(x=0.55, y=0.5)", CLICK, [0.5, 0.5, 0.5, 0.5], {}, math.exp(-0.5)),
    # sigma from the config
    ("sigma-override", "pyautogui.click(x=0.6, y=0.5)", CLICK, None, {"sigma": 0.1}, math.exp(-0.5)),
    ("pred-no-point", "mobile.back()", CLICK, None, {}, 0.0),
    ("gt-no-point", CLICK, "mobile.home()", None, {}, None),
]


@pytest.mark.parametrize(
    ("case", "completion", "solution", "bbox", "kwargs", "expected"),
    CLICK_GAUSSIAN_CASES,
    ids=[c[0] for c in CLICK_GAUSSIAN_CASES],
)
def test_click_gaussian(case, completion, solution, bbox, kwargs, expected):
    assert score("click_gaussian", completion, solution, bbox=[bbox], **kwargs) == pytest.approx(expected)


TEXT_F1_CASES = [
    # (id, completion, solution, expected)
    ("exact", "pyautogui.write(message='new york')", "pyautogui.write(message='new york')", 1.0),
    # P = 2/3, R = 1 -> 0.8
    ("superset", "pyautogui.write(message='New York city')", "pyautogui.write(message='new york')", 0.8),
    # P = 1, R = 1/3 -> 0.5
    ("subset", "pyautogui.write(message='york')", "pyautogui.write(message='new york city')", 0.5),
    ("disjoint", "pyautogui.write(message='boston')", "pyautogui.write(message='new york')", 0.0),
    ("empty-pred", "pyautogui.write(message='')", "pyautogui.write(message='new york')", 0.0),
    ("both-empty", "pyautogui.write(message='')", "pyautogui.write(message=' ')", 1.0),
    ("open-app", "mobile.open_app(app_name='google maps')", "mobile.open_app(app_name='Google Maps')", 1.0),
    ("answer", "answer('it is 5')", "answer('5')", 0.5),
    # a different type gets nothing
    ("type-vs-answer", "answer('new york')", "pyautogui.write(message='new york')", 0.0),
    ("no-pred", "???", "pyautogui.write(message='new york')", 0.0),
    # no text in the ground truth: does not apply
    ("gt-click", CLICK, CLICK, None),
]


@pytest.mark.parametrize(
    ("case", "completion", "solution", "expected"), TEXT_F1_CASES, ids=[c[0] for c in TEXT_F1_CASES]
)
def test_text_f1(case, completion, solution, expected):
    assert score("text_f1", completion, solution) == pytest.approx(expected)


# ------------------------------------------------------------------------- R1-V-GUI-Agent's rewards, bugs kept

R1V_ACCURACY_CASES = [
    # (id, completion, solution, expected): 0.5 when the name texts are equal, plus 0.5 when the argument texts are
    # the same call after the os marker
    ("exact", "Action: tap\nassistantos\npyautogui.click(x=0.5, y=0.5)", f"<answer>{CLICK}</answer>", 1.0),
    # text, not values: 0.50 is another argument text (accuracy calls it exact)
    ("trailing-zero", "pyautogui.click(x=0.50, y=0.5)", CLICK, 0.5),
    # spaces inside the parentheses are text too
    ("spaces", "pyautogui.click( x=0.5, y=0.5 )", CLICK, 0.5),
    # another name scores 0 whatever the arguments: a long press, a double click or a tap at the right point
    ("other-name", "mobile.long_press(x=0.5, y=0.5)", CLICK, 0.0),
    ("double-click", "pyautogui.doubleClick(x=0.5, y=0.5)", CLICK, 0.0),
    ("tap-for-long-press", "pyautogui.tap(x=0.5, y=0.5)", "mobile.long_press(x=0.5, y=0.5)", 0.0),
    # the original's bug: an argument-less call finds no call, so a right back scores 0
    ("back-bug", "assistantos\nmobile.back()", "<answer>mobile.back()</answer>", 0.0),
    # ... and so does anything against an argument-less ground truth
    ("home-for-back", "mobile.home()", "mobile.back()", 0.0),
    # the first ")" ends the arguments: both read "message='smile :", the texts after it are not compared
    ("smile", "pyautogui.write(message='smile :) no')", "pyautogui.write(message='smile :) ok ')", 1.0),
    # the text after the marker is stripped: a space after it is not part of the name
    ("space-after-marker", "assistantos pyautogui.click(x=0.5, y=0.5)", CLICK, 1.0),
    # ... but a space before "(" is
    ("space-before-parenthesis", "pyautogui.click (x=0.5, y=0.5)", CLICK, 0.0),
    # without a marker the whole output is read: the plan's line comes first and is the name
    ("plan-in-name", "Action: pyautogui.click(x=0.5, y=0.5)", CLICK, 0.0),
    # the first marker counts, not the last
    ("first-marker", "assistantos\nmobile.back(x)\nassistantos\npyautogui.click(x=0.5, y=0.5)", CLICK, 0.0),
    # an <answer> spanning lines is no answer to the original (no DOTALL): the solution is read whole, and its
    # first call is still the click on its own line
    ("solution-lines", CLICK, f"<answer>\n{CLICK}\n</answer>", 1.0),
    # a solution's first one-line answer counts, not a later one
    ("first-solution-answer", CLICK, f"<answer>{CLICK}</answer><answer>mobile.back(x)</answer>", 1.0),
    # prose without a call
    ("prose", "I would tap the clock.", CLICK, 0.0),
    # no ground truth
    ("no-solution", CLICK, None, 0.0),
]  # fmt: skip


@pytest.mark.parametrize(
    "case, completion, solution, expected", R1V_ACCURACY_CASES, ids=[c[0] for c in R1V_ACCURACY_CASES]
)
def test_r1v_accuracy(case, completion, solution, expected):
    assert score("r1v_accuracy", completion, solution) == pytest.approx(expected)


R1V_FORMAT_CASES = [
    # (id, completion, expected)
    # decoded Aguvis output never starts with "content:": 0, which is why the original's format reward stayed 0
    ("aguvis-decoded", "Thought: tap it\nAction: tap\nassistantos\npyautogui.click(x=0.5, y=0.5)", 0.0),
    # "content:" first, then Thought, Action and the marker, on one line ...
    ("content-one-line", "content: Thought: t Action: a assistantos pyautogui.click(x=0.5, y=0.5)", 0.5),
    # ... or on several (re.DOTALL)
    ("content-lines", "content: Thought: t\nAction: a\nassistantos\npyautogui.click(x=0.5, y=0.5)", 0.5),
    # the code after the marker may be anything, even nothing
    ("nothing-after-marker", "content:Thought:Action:assistantos", 0.5),
    # the three in another order
    ("out-of-order", "content: Action: a Thought: t assistantos", 0.0),
    # a full match: only at the start
    ("content-later", "x content: Thought: t Action: a assistantos", 0.0),
    # conversational completions are read by their content
    ("conversational", [{"role": "assistant", "content": "content: Thought: t Action: a assistantos"}], 0.5),
    # the marker is required
    ("no-marker", "content: Thought: t Action: a", 0.0),
]


@pytest.mark.parametrize("case, completion, expected", R1V_FORMAT_CASES, ids=[c[0] for c in R1V_FORMAT_CASES])
def test_r1v_format(case, completion, expected):
    assert call("r1v_format", [completion], [CLICK]) == [expected]


# ------------------------------------------------------------------------------ GUI-R1's rewards, its rules


def guir1_answer(action: str, point: str = "[-100, -100]", text: str = "no input text") -> str:
    """A GUI-R1 completion: think, then one action in GUI-R1's format."""
    return f"<think>t</think><answer>[{{'action': '{action}', 'point': {point}, 'input_text': '{text}'}}]</answer>"


SCREEN = [(448, 1036)]  # the resized screenshot: gt click (0.5, 0.5) is pixel (224, 518)
BOX_PX = [0.4, 0.45, 0.6, 0.55]  # pixels x in (179.2, 268.8), y in (466.2, 569.8)

GUIR1_ACCURACY_CASES = [
    # (id, completion, solution, bbox, screen size, expected)
    # 76 px right of the point: within 140
    ("click-76px", guir1_answer("click", "[300, 518]"), CLICK, None, SCREEN, 1.0),
    # 139 px: still below 140
    ("click-139px", guir1_answer("click", "[363, 518]"), CLICK, None, SCREEN, 1.0),
    # exactly 140 px: the rule is strict (d^2 < 140^2), a miss
    ("click-140px", guir1_answer("click", "[364, 518]"), CLICK, None, SCREEN, 0.0),
    # diagonal 84, 112 -> exactly 140 px: a miss
    ("click-140px-diagonal", guir1_answer("click", "[308, 630]"), CLICK, None, SCREEN, 0.0),
    # with a box the distance no longer counts: strictly inside the box
    ("click-in-box", guir1_answer("click", "[260, 560]"), CLICK, BOX_PX, SCREEN, 1.0),
    # 4 px from the point but outside the box's right edge (268.8)
    ("click-near-outside-box", guir1_answer("click", "[270, 518]"), CLICK, BOX_PX, SCREEN, 0.0),
    # on an edge is outside (strict): box x1 = 0.5 -> 224 px
    ("click-on-box-edge", guir1_answer("click", "[224, 518]"), CLICK, [0.5, 0.45, 0.6, 0.55], SCREEN, 0.0),
    # the name decides first: a long press at the right point is another action
    ("long-press-for-click", guir1_answer("long_press", "[224, 518]"), CLICK, None, SCREEN, 0.0),
    # other names score by name alone: a long press anywhere matches a long press
    ("long-press-anywhere", guir1_answer("long_press", "[10, 10]"), "mobile.long_press(x=0.5, y=0.5)", None,
     SCREEN, 1.0),
    # ... and an open_app of another app matches (GUI-R1 compares no text for it)
    ("open-app-other-app", guir1_answer("open_app", text="Maps"), "mobile.open_app(app_name='Clock')", None,
     SCREEN, 1.0),
    # names are case-insensitive
    ("name-case", guir1_answer("Press_Back"), "mobile.back()", None, SCREEN, 1.0),
    # terminate success and failure are two names (complete / impossible)
    ("complete-for-impossible", guir1_answer("complete"), "mobile.terminate(status='failure')", None, SCREEN, 0.0),
    # type: token-set F1 >= 0.5; "new york" vs "new york city": P 1, R 2/3 -> 0.8
    ("type-f1", guir1_answer("type", text="new york"), "pyautogui.write(message='New York City')", None,
     SCREEN, 1.0),
    # "york" vs "new york city": P 1, R 1/3 -> 0.5: exactly the bar, a hit
    ("type-f1-half", guir1_answer("type", text="york"), "pyautogui.write(message='New York City')", None,
     SCREEN, 1.0),
    # "weather" vs "new york": 0
    ("type-other", guir1_answer("type", text="weather"), "pyautogui.write(message='new york')", None,
     SCREEN, 0.0),
    # two one-token texts, one inside the other: equal
    ("type-contained", guir1_answer("type", text="york"), "pyautogui.write(message='NewYork')", None, SCREEN, 1.0),
    # brackets are removed before the tokens are compared
    ("type-brackets", guir1_answer("type", text="[hello] world"), "pyautogui.write(message='hello world')", None,
     SCREEN, 1.0),
    # scroll: its direction is its text (pyautogui.scroll(page=-0.1) scrolls down)
    ("scroll-same", guir1_answer("scroll", text="down"), "pyautogui.scroll(page=-0.1)", None, SCREEN, 1.0),
    ("scroll-opposite", guir1_answer("scroll", text="up"), "pyautogui.scroll(page=-0.1)", None, SCREEN, 0.0),
    # only the first <answer> is read
    ("first-answer", "<answer>[{'action': 'press_home', 'point': [-100, -100], 'input_text': 'no input text'}]"
     "</answer><answer>[{'action': 'press_back', 'point': [-100, -100], 'input_text': 'no input text'}]</answer>",
     "mobile.back()", None, SCREEN, 0.0),
    # no answer tags: no action
    ("no-answer", "[{'action': 'press_back', 'point': [-100, -100], 'input_text': 'no input text'}]",
     "mobile.back()", None, SCREEN, 0.0),
    # a click ground truth without a screen size: 140 pixels mean nothing, the reward does not apply
    ("click-no-screen", guir1_answer("click", "[300, 518]"), CLICK, None, None, None),
    # an answer that is no literal
    ("garbage", "<answer>click there</answer>", "mobile.back()", None, SCREEN, 0.0),
]  # fmt: skip


@pytest.mark.parametrize(
    "case, completion, solution, bbox, screen_size, expected",
    GUIR1_ACCURACY_CASES,
    ids=[c[0] for c in GUIR1_ACCURACY_CASES],
)
def test_guir1_accuracy(case, completion, solution, bbox, screen_size, expected):
    value = score("guir1_accuracy", completion, solution, bbox=[bbox], screen_size=screen_size)
    assert value == (None if expected is None else pytest.approx(expected))


GUIR1_F1_CASES = [
    # (predicted, truth, expected): GUI-R1's set F1
    ("new york", "new york city", 0.8),  # P 1, R 2/3
    ("new new york", "new york", 1.0),  # sets: repeats do not count
    ("york", "new york", 2 / 3),  # P 1, R 1/2
    ("York", "newyork", 1.0),  # one token each, one inside the other
    ("[a] b", "a b", 1.0),  # brackets removed
    ("", "", 0.0),  # two empty texts: no tokens, 0 (text_f1 says 1)
    ("", "x", 0.0),
]


@pytest.mark.parametrize("predicted, truth, expected", GUIR1_F1_CASES)
def test_guir1_text_f1(predicted, truth, expected):
    assert guir1_text_f1(predicted, truth) == pytest.approx(expected)


GUIR1_FORMAT_CASES = [
    # (id, completion, expected)
    ("click", guir1_answer("click", "[224, 518]"), 1.0),
    # whitespace between the parts is allowed
    ("spaced", "<think>\nt\n</think>\n <answer>[{'action': 'press_back', 'point': [-100, -100], "
     "'input_text': 'no input text'}]</answer>", 1.0),
    # anything after </answer> fails the full match
    ("trailing", guir1_answer("click", "[224, 518]") + "\n", 0.0),
    # any action name passes, GUI-R1 checks the fields only
    ("unknown-name", guir1_answer("fly", "[1, 2]"), 1.0),
    # several entries, each checked
    ("two-entries", "<think>t</think><answer>[{'action': 'click', 'point': [1, 2], 'input_text': 'x'}, "
     "{'action': 'scroll', 'point': [1, 2], 'input_text': 'down'}]</answer>", 1.0),
    # an empty list passes (nothing to check)
    ("empty-list", "<think>t</think><answer>[]</answer>", 1.0),
    # a dict alone is not a list
    ("not-a-list", "<think>t</think><answer>{'action': 'click', 'point': [1, 2], 'input_text': 'x'}</answer>", 0.0),
    # points must be ints
    ("float-point", guir1_answer("click", "[224.5, 518]"), 0.0),
    # a missing key
    ("no-input-text", "<think>t</think><answer>[{'action': 'click', 'point': [1, 2]}]</answer>", 0.0),
    # a point with one number cannot be indexed twice
    ("short-point", guir1_answer("click", "[1]"), 0.0),
    # type, select and open_app need real text
    ("type-placeholder", guir1_answer("type"), 0.0),
    ("select-placeholder", guir1_answer("select"), 0.0),
    ("open-app-placeholder", guir1_answer("open_app"), 0.0),
    ("type-text", guir1_answer("type", text="hi"), 1.0),
    # scroll needs a direction
    ("scroll-direction", guir1_answer("scroll", text="up"), 1.0),
    ("scroll-no-direction", guir1_answer("scroll"), 0.0),
    # JSON spelling is read too
    ("json", '<think>t</think><answer>[{"action": "click", "point": [1, 2], "input_text": "x"}]</answer>', 1.0),
    # r1_gui never runs model output: a call scores as eval raising (GUI-R1's eval runs it: a documented exception)
    ("code-not-run", "<think>t</think><answer>[dict(action='click', point=[1, 2], input_text='x')]</answer>", 0.0),
    # no think
    ("no-think", "<answer>[{'action': 'click', 'point': [1, 2], 'input_text': 'x'}]</answer>", 0.0),
]  # fmt: skip


@pytest.mark.parametrize("case, completion, expected", GUIR1_FORMAT_CASES, ids=[c[0] for c in GUIR1_FORMAT_CASES])
def test_guir1_format(case, completion, expected):
    assert call("guir1_format", [completion], [CLICK]) == [expected]


# ----------------------------------------------------------------------------------------- row plumbing


def test_rows_conversational_and_per_row_columns():
    completions = [
        [{"role": "assistant", "content": "pyautogui.click(x=224, y=518)"}],
        [{"role": "assistant", "content": [{"type": "text", "text": "pyautogui.click(x=100, y=100)"}]}],
    ]
    # per-row screen sizes: each completion is read against its own image
    sizes = [(448, 1036), (200, 200)]
    result = call("accuracy", completions, [CLICK, CLICK], coordinates="pixels", screen_size=sizes)
    assert result == [1.0, 1.0]
    # one size for every row
    assert call("accuracy", completions[:1], [CLICK], coordinates="pixels", screen_size=(448, 1036)) == [1.0]


def test_rows_tolerate_ragged_and_missing_columns():
    # a missing solution row scores 0 (None for the conditional rewards), never an error
    assert call("accuracy", [CLICK, CLICK], [CLICK]) == [1.0, 0.0]
    assert call("click_distance", [CLICK, CLICK], [CLICK]) == [1.0, None]
    assert REWARD_FUNCS["accuracy"](completions=[CLICK]) == [0.0]
    assert REWARD_FUNCS["format"](completions=None) == []
    # one solution string for every row
    assert call("accuracy", [CLICK, "mobile.back()"], CLICK) == [1.0, 0.0]
    # a single bbox for every row
    assert call("step_success", ["pyautogui.click(x=0.72, y=0.52)"], [CLICK], bbox=[0.4, 0.45, 0.6, 0.55]) == [1.0]


SCORE_PAIR_CASES = [
    # (pred, gt, bbox, expected type_match, param_match, action_match, step_success)
    (A("back"), A("back"), None, (True, True, True, True)),
    (A("click", x=0.6, y=0.5), A("click", x=0.5, y=0.5), None, (True, False, True, True)),
    (A("type", text="a"), A("type", text="b"), None, (True, False, True, False)),
    (A("long_press", x=0.5, y=0.5), A("click", x=0.5, y=0.5), None, (False, False, True, True)),
    (None, A("home"), None, (False, False, False, False)),
]


@pytest.mark.parametrize(("pred", "gt", "bbox", "expected"), SCORE_PAIR_CASES)
def test_score_pair(pred, gt, bbox, expected):
    result = score_pair(pred, gt, bbox)
    assert (result["type_match"], result["param_match"], result["action_match"], result["step_success"]) == expected


# ------------------------------------------------------------------------------------------- configuration


def test_get_reward_funcs_names_and_binds():
    funcs = get_reward_funcs(
        ["accuracy", "click_distance"],
        prompt_style="think_answer",
        coordinates="grid1000",
        reward_kwargs={"click_distance": {"threshold": 0.2}},
    )
    assert [f.__name__ for f in funcs] == ["accuracy", "click_distance"]
    # the bound coordinates and threshold are used: 500/1000 vs 0.6 is 0.1 away, within 0.2
    assert funcs[1](completions=["pyautogui.click(x=500, y=500)"], solution=["pyautogui.click(x=0.6, y=0.5)"]) == [1.0]
    assert [f.__name__ for f in get_reward_funcs("format, action_type")] == ["format", "action_type"]


@pytest.mark.parametrize(
    ("names", "kwargs", "message"),
    [
        (["accuracy", "speed"], {}, "valid names"),  # unknown reward, the message lists the valid ones
        (["accuracy", "accuracy"], {}, "unique"),
        (["click_distance"], {"reward_kwargs": {"click_distance": {"treshold": 0.1}}}, "treshold"),  # typo
        (["accuracy"], {"reward_kwargs": {"click_distance": {"threshold": 0.1}}}, "not among"),
        (["accuracy"], {"temperature": 1.0}, "temperature"),  # unknown bound keyword
        (["format"], {"prompt_style": "xml"}, "prompt_style"),
        (["accuracy"], {"coordinates": "inches"}, "coordinates"),
        (["click_distance"], {"reward_kwargs": {"click_distance": {"threshold": 0.5}}}, "below cutoff"),
        (["click_gaussian"], {"reward_kwargs": {"click_gaussian": {"sigma": 0}}}, "sigma"),
        (["accuracy"], {"reward_kwargs": {"accuracy": {"type_weight": "half"}}}, "type_weight"),
    ],
)
def test_get_reward_funcs_rejects_bad_config(names, kwargs, message):
    with pytest.raises(ValueError, match=message):
        get_reward_funcs(names, **kwargs)


PRESET_CASES = [
    # (id, names, weights, expected names, expected weights)
    # the preset alone: its rewards and its weights
    ("guir1", ["guir1"], None, ["guir1_accuracy", "guir1_format"], [0.8, 0.2]),
    # a comma-separated string, as on the command line
    ("string", "guir1", None, ["guir1_accuracy", "guir1_format"], [0.8, 0.2]),
    # expanded in place; other rewards weigh 1.0
    ("with-others", ["text_f1", "guir1"], None, ["text_f1", "guir1_accuracy", "guir1_format"], [1.0, 0.8, 0.2]),
    # explicit weights that repeat the preset's are fine
    ("explicit-agree", ["guir1", "text_f1"], [0.8, 0.2, 0.5], ["guir1_accuracy", "guir1_format", "text_f1"],
     [0.8, 0.2, 0.5]),
    # no preset: names and weights as given
    ("no-preset", ["accuracy", "format"], [1.0, 0.5], ["accuracy", "format"], [1.0, 0.5]),
    ("no-preset-no-weights", ["accuracy"], None, ["accuracy"], None),
]  # fmt: skip


@pytest.mark.parametrize(
    "case, names, weights, expected_names, expected_weights", PRESET_CASES, ids=[c[0] for c in PRESET_CASES]
)
def test_expand_reward_presets(case, names, weights, expected_names, expected_weights):
    assert expand_reward_presets(names, weights) == (expected_names, expected_weights)


@pytest.mark.parametrize(
    ("names", "weights"),
    [
        (["guir1"], [1.0, 1.0]),  # other weights for the preset's rewards
        (["guir1"], [1.0]),  # one weight for the preset as a whole
        (["guir1", "text_f1"], [0.8, 0.2]),  # too few
    ],
)
def test_expand_reward_presets_rejects_contradicting_weights(names, weights):
    with pytest.raises(ValueError, match="contradicts the preset"):
        expand_reward_presets(names, weights)


def test_presets_are_not_reward_names():
    # the preset carries weights, so the function that returns only callables refuses it and says what to do
    with pytest.raises(ValueError, match="expand_reward_presets"):
        get_reward_funcs(["guir1"])
    names, _ = expand_reward_presets(["guir1"])
    assert [f.__name__ for f in get_reward_funcs(names)] == ["guir1_accuracy", "guir1_format"]
    # a preset's reward named beside the preset is a duplicate
    with pytest.raises(ValueError, match="unique"):
        get_reward_funcs(expand_reward_presets(["guir1", "guir1_format"])[0])


def test_registry_params_are_documented_defaults():
    assert reward_params("click_distance") == {"threshold": 0.04, "cutoff": 0.3}
    assert reward_params("click_gaussian") == {"sigma": 0.05}
    assert reward_params("accuracy") == {"type_weight": 0.5, "argument_weight": 0.5}
    assert reward_params("format") == {}
    for name, func in REWARD_FUNCS.items():
        assert func.__doc__ and "Example" in func.__doc__, name


# ---------------------------------------------------------------------------------------------- property

FRAGMENTS = [
    CLICK,
    "mobile.back()",
    "pyautogui.write(message='new york')",
    "pyautogui.click(x=",
    "[{'action': 'click', 'point': [10, 20]}]",
    '{"action": "click", "coordinate": [1e999, 2]}',
    TOOL_CALL,
    "<tool_call>",
    "</tool_call>",
    "<think>",
    "</think>",
    "<answer>",
    "</answer>",
    "assistantos",
    "<|recipient|>os",
    "<|im_end|>",
    "Thought: ",
    "Action: ",
    "\n",
    "NaN",
    "__import__('os')",
]
TEXT = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=12), max_size=8).map("".join)
COMPLETION = TEXT | TEXT.map(lambda t: [{"role": "assistant", "content": t}]) | st.none() | st.integers()
NUMBER = st.floats(allow_nan=True, allow_infinity=True) | st.integers(-5, 5)
BBOX = st.none() | st.lists(NUMBER, max_size=5) | st.text(max_size=4)
SIZE = (
    st.none()
    | st.tuples(NUMBER, NUMBER)
    | st.lists(st.tuples(st.integers(-5, 2000), st.integers(-5, 2000)), max_size=3)
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    completions=st.lists(COMPLETION, min_size=1, max_size=3),
    solutions=st.lists(TEXT | st.none(), max_size=3) | TEXT,
    bbox=st.lists(BBOX, max_size=3) | BBOX,
    screen_size=SIZE,
    coordinates=st.sampled_from([None, "normalized", "grid1000", "grid999", "pixels"]),
    style=st.sampled_from(PROMPT_STYLES),
)
def test_rewards_never_raise_and_stay_in_range(completions, solutions, bbox, screen_size, coordinates, style):
    for name in REWARD_FUNCS:
        result = REWARD_FUNCS[name](
            prompts=None,
            completions=completions,
            completion_ids=None,
            solution=solutions,
            bbox=bbox,
            coordinates=coordinates,
            screen_size=screen_size,
            prompt_style=style,
            trainer_state=None,
        )
        assert len(result) == len(completions), name
        for value in result:
            assert value is None or (isinstance(value, float) and math.isfinite(value) and 0.0 <= value <= 1.0), (
                name,
                value,
            )


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=60), st.text(max_size=60))
def test_rewards_on_arbitrary_text(completion, solution):
    for name in REWARD_FUNCS:
        (value,) = call(name, [completion], [solution])
        assert value is None or 0.0 <= value <= 1.0
    json.dumps(call("accuracy", [completion], [solution]))  # plain floats, loggable
