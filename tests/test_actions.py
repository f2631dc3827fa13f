"""Table-driven tests of r1_gui.actions: the three formats, coordinates, extraction, and round trips."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from r1_gui.actions import (
    ACTION_TYPES,
    DIRECTIONS,
    FIELDS_BY_TYPE,
    STATUSES,
    Action,
    denormalize_point,
    extract_action,
    format_action,
    normalize_point,
    normalized_to_pixels,
    parse_action,
    pixels_to_normalized,
    read_bbox,
    resized_size,
    same_arguments,
    smart_resize,
    styled_action,
)
from r1_gui.actions.core import is_number

A = Action

# ------------------------------------------------------------------------------------------------ aguvis

AGUVIS_CASES = [
    # the canonical click, keyword arguments
    ("click", "pyautogui.click(x=0.36, y=0.13)", A("click", x=0.36, y=0.13)),
    # positional arguments and extra spaces
    ("click-positional", "  pyautogui.click( 0.5 ,0.25 )  ", A("click", x=0.5, y=0.25)),
    # integer coordinates at the edges are fine
    ("click-int-edges", "pyautogui.click(x=0, y=1)", A("click", x=0.0, y=1.0)),
    # a trailing comment is not code
    ("click-comment", "pyautogui.click(x=0.1, y=0.2)  # the OK button", A("click", x=0.1, y=0.2)),
    # desktop variants
    ("double-click", "pyautogui.doubleClick(x=0.1, y=0.2)", A("double_click", x=0.1, y=0.2)),
    ("right-click", "pyautogui.rightClick(x=0.1, y=0.2)", A("right_click", x=0.1, y=0.2)),
    ("move-to", "pyautogui.moveTo(x=0.1, y=0.2)", A("move_to", x=0.1, y=0.2)),
    ("drag-to", "pyautogui.dragTo(x=0.1, y=0.2)", A("drag_to", x=0.1, y=0.2)),
    # mobile long press
    ("long-press", "mobile.long_press(x=0.4, y=0.6)", A("long_press", x=0.4, y=0.6)),
    # swipe fills both points
    (
        "swipe",
        "mobile.swipe(from_coord=[0.5, 0.8], to_coord=[0.5, 0.2])",
        A("swipe", x=0.5, y=0.8, x2=0.5, y2=0.2),
    ),
    # swipe with positional tuples
    ("swipe-positional", "mobile.swipe((0.1, 0.2), (0.3, 0.4))", A("swipe", x=0.1, y=0.2, x2=0.3, y2=0.4)),
    # write is a type action; single quotes
    ("write", "pyautogui.write(message='hello world')", A("type", text="hello world")),
    # double quotes and an escaped quote inside
    ("write-escaped", 'pyautogui.write(message="say \\"hi\\" it\'s")', A("type", text='say "hi" it\'s')),
    # an escaped single quote in single quotes, positional
    ("write-positional", "pyautogui.write('it\\'s')", A("type", text="it's")),
    # an empty message is still a type action
    ("write-empty", "pyautogui.write(message='')", A("type", text="")),
    # typewrite alias
    ("typewrite", "pyautogui.typewrite('abc')", A("type", text="abc")),
    # unicode text survives
    ("write-unicode", "pyautogui.write(message='北京 café')", A("type", text="北京 café")),
    # press with a string
    ("press-str", "pyautogui.press(keys='enter')", A("press", keys=("enter",))),
    # press with a list gives the same action
    ("press-list", "pyautogui.press(keys=['enter'])", A("press", keys=("enter",))),
    # press positional
    ("press-positional", 'pyautogui.press("tab")', A("press", keys=("tab",))),
    # hotkey with a list
    ("hotkey-list", "pyautogui.hotkey(keys=['ctrl', 'c'])", A("hotkey", keys=("ctrl", "c"))),
    # hotkey with pyautogui's *args form
    ("hotkey-varargs", "pyautogui.hotkey('ctrl', 'shift', 't')", A("hotkey", keys=("ctrl", "shift", "t"))),
    # scroll(page<0) scrolls down
    ("scroll-down", "pyautogui.scroll(page=-0.1)", A("scroll", direction="down")),
    # scroll(page>0) scrolls up; the magnitude is not kept
    ("scroll-up", "pyautogui.scroll(page=3)", A("scroll", direction="up")),
    # hscroll(page>0) is right
    ("hscroll-right", "pyautogui.hscroll(page=0.1)", A("scroll", direction="right")),
    # hscroll(page<0) is left
    ("hscroll-left", "pyautogui.hscroll(page=-0.5)", A("scroll", direction="left")),
    # scroll at a point
    ("scroll-at", "pyautogui.scroll(page=-0.1, x=0.5, y=0.7)", A("scroll", direction="down", x=0.5, y=0.7)),
    # argument-less mobile calls
    ("home", "mobile.home()", A("home")),
    ("back", "mobile.back()", A("back")),
    # open an app
    ("open-app", "mobile.open_app(app_name='Google Chrome')", A("open_app", text="Google Chrome")),
    # wait with and without seconds
    ("wait-seconds", "mobile.wait(seconds=3)", A("wait", seconds=3.0)),
    ("wait-bare", "mobile.wait()", A("wait")),
    ("wait-positional", "mobile.wait(1.5)", A("wait", seconds=1.5)),
    # terminate, mobile and bare
    ("terminate-success", "mobile.terminate(status='success')", A("terminate", status="success")),
    ("terminate-bare", 'terminate(status="failure")', A("terminate", status="failure")),
    ("terminate-positional", "terminate('success')", A("terminate", status="success")),
    # answer
    ("answer", "answer('The price is $5')", A("answer", text="The price is $5")),
    ("answer-keyword", "answer(text='yes')", A("answer", text="yes")),
    # a tiny float overshoot is clamped
    ("clamp-overshoot", "pyautogui.click(x=1.0000001, y=-0.0000001)", A("click", x=1.0, y=0.0)),
]


@pytest.mark.parametrize(("case", "text", "expected"), AGUVIS_CASES, ids=[c[0] for c in AGUVIS_CASES])
def test_parse_aguvis(case, text, expected):
    assert parse_action(text, "aguvis") == expected
    assert parse_action(text) == expected  # auto-detects aguvis


MALFORMED_AGUVIS = [
    # truncated call
    ("truncated", "pyautogui.click(x=0.5, y="),
    # missing closing parenthesis
    ("unclosed", "pyautogui.click(x=0.5, y=0.5"),
    # unknown function
    ("unknown-function", "pyautogui.tripleClick(x=0.5, y=0.5)"),
    # unknown module
    ("unknown-module", "os.click(x=0.5, y=0.5)"),
    # unknown keyword
    ("unknown-keyword", "pyautogui.click(x=0.5, y=0.5, z=1)"),
    # duplicate argument
    ("duplicate", "pyautogui.click(0.5, 0.5, x=0.1)"),
    # too many positional arguments
    ("too-many", "pyautogui.click(0.1, 0.2, 0.3)"),
    # missing y
    ("missing-y", "pyautogui.click(x=0.5)"),
    # no arguments where a point is needed
    ("no-point", "pyautogui.click()"),
    # out of range
    ("out-of-range", "pyautogui.click(x=1.5, y=0.5)"),
    # negative
    ("negative", "pyautogui.click(x=-0.2, y=0.5)"),
    # NaN is not a literal here: a name
    ("nan-name", "pyautogui.click(x=nan, y=0.5)"),
    # inf via overflowing float literal
    ("inf", "pyautogui.click(x=1e999, y=0.5)"),
    # booleans are not coordinates
    ("bool", "pyautogui.click(x=True, y=0.5)"),
    # strings are not coordinates
    ("str-coordinate", "pyautogui.click(x='0.5', y=0.5)"),
    # a computed coordinate is not a literal
    ("arithmetic", "pyautogui.click(x=0.1+0.2, y=0.5)"),
    # bad scroll direction: page 0
    ("scroll-zero", "pyautogui.scroll(page=0)"),
    # bad terminate status
    ("bad-status", "mobile.terminate(status='done')"),
    # negative wait
    ("negative-wait", "mobile.wait(seconds=-1)"),
    # empty keys
    ("empty-keys", "pyautogui.hotkey(keys=[])"),
    # non-string key
    ("int-key", "pyautogui.press(keys=[13])"),
    # swipe with a 3-element coordinate
    ("swipe-3d", "mobile.swipe(from_coord=[0.1, 0.2, 0.3], to_coord=[0.1, 0.2])"),
    # two statements
    ("two-statements", "pyautogui.click(x=0.1, y=0.2); pyautogui.click(x=0.1, y=0.2)"),
    # two lines of calls
    ("two-lines", "pyautogui.click(x=0.1, y=0.2)\npyautogui.click(x=0.1, y=0.2)"),
    # f-string
    ("f-string", "pyautogui.write(message=f'{secret}')"),
    # bytes
    ("bytes", "pyautogui.write(message=b'abc')"),
    # a name argument
    ("name-argument", "pyautogui.write(message=text)"),
    # star unpacking
    ("starred", "pyautogui.click(*[0.1, 0.2])"),
    # double-star unpacking
    ("double-starred", "pyautogui.click(**{'x': 0.1, 'y': 0.2})"),
    # lambda
    ("lambda", "pyautogui.click(x=(lambda: 0.1)(), y=0.2)"),
    # comprehension
    ("comprehension", "pyautogui.hotkey(keys=[k for k in 'ab'])"),
    # attribute access on an argument
    ("attribute-argument", "pyautogui.write(message=os.environ)"),
    # a call on the function expression itself
    ("called-function", "getattr(pyautogui, 'click')(x=0.1, y=0.2)"),
    # not a call
    ("not-a-call", "pyautogui.click"),
    # natural language
    ("prose", "click on the search bar"),
    # empty
    ("empty", ""),
    # null byte
    ("null-byte", "pyautogui.write(message='a\x00')"),
]


@pytest.mark.parametrize(("case", "text"), MALFORMED_AGUVIS, ids=[c[0] for c in MALFORMED_AGUVIS])
def test_parse_aguvis_malformed(case, text):
    assert parse_action(text, "aguvis") is None


HOSTILE = [
    # the classic: calling into os
    "__import__('os').system('touch {path}')",
    # hidden in an argument
    "pyautogui.click(x=__import__('os').system('touch {path}'), y=0.5)",
    # hidden in the message
    "pyautogui.write(message=__import__('os').system('touch {path}'))",
    # as a GUI-R1 answer
    "[{{'action': __import__('os').system('touch {path}'), 'point': [1, 2]}}]",
    # inside a tool call
    "<tool_call>__import__('os').system('touch {path}')</tool_call>",
    # exec of a string
    "exec(\"open('{path}', 'w')\")",
    # eval in an answer
    "answer(eval(\"open('{path}', 'w')\"))",
]


@pytest.mark.parametrize("template", HOSTILE)
def test_hostile_code_is_never_executed(template, tmp_path):
    target = tmp_path / "pwned"
    text = template.format(path=target)
    for fmt in ("auto", "aguvis", "guir1", "mobile_use"):
        assert parse_action(text, fmt, image_size=(100, 100)) is None
    assert extract_action(text) is None
    assert extract_action(f"<answer>{text}</answer>") is None
    assert not target.exists()


FORMAT_AGUVIS = [
    # floats with up to 4 decimals, trailing zeros trimmed
    ("click", A("click", x=0.36, y=0.13), "pyautogui.click(x=0.36, y=0.13)"),
    # rounding to 4 decimals; an integer keeps one decimal
    ("click-round", A("click", x=0.123456, y=1.0), "pyautogui.click(x=0.1235, y=1.0)"),
    ("double-click", A("double_click", x=0.5, y=0.5), "pyautogui.doubleClick(x=0.5, y=0.5)"),
    ("right-click", A("right_click", x=0.5, y=0.5), "pyautogui.rightClick(x=0.5, y=0.5)"),
    ("move-to", A("move_to", x=0.5, y=0.5), "pyautogui.moveTo(x=0.5, y=0.5)"),
    ("drag-to", A("drag_to", x=0.5, y=0.5), "pyautogui.dragTo(x=0.5, y=0.5)"),
    ("long-press", A("long_press", x=0.5, y=0.5), "mobile.long_press(x=0.5, y=0.5)"),
    (
        "swipe",
        A("swipe", x=0.5, y=0.8, x2=0.5, y2=0.2),
        "mobile.swipe(from_coord=[0.5, 0.8], to_coord=[0.5, 0.2])",
    ),
    # quotes and newlines are escaped, always single-quoted
    ("write", A("type", text='it\'s\n"ok"'), "pyautogui.write(message='it\\'s\\n\"ok\"')"),
    ("press", A("press", keys=("enter",)), "pyautogui.press(keys=['enter'])"),
    ("hotkey", A("hotkey", keys=("ctrl", "c")), "pyautogui.hotkey(keys=['ctrl', 'c'])"),
    ("scroll-down", A("scroll", direction="down"), "pyautogui.scroll(page=-0.1)"),
    ("scroll-up", A("scroll", direction="up"), "pyautogui.scroll(page=0.1)"),
    ("scroll-left", A("scroll", direction="left"), "pyautogui.hscroll(page=-0.1)"),
    ("scroll-right-at", A("scroll", direction="right", x=0.5, y=0.5), "pyautogui.hscroll(page=0.1, x=0.5, y=0.5)"),
    ("home", A("home"), "mobile.home()"),
    ("back", A("back"), "mobile.back()"),
    ("open-app", A("open_app", text="Maps"), "mobile.open_app(app_name='Maps')"),
    ("wait", A("wait", seconds=3), "mobile.wait(seconds=3)"),
    ("wait-fraction", A("wait", seconds=1.5), "mobile.wait(seconds=1.5)"),
    ("wait-bare", A("wait"), "mobile.wait()"),
    ("terminate", A("terminate", status="success"), "mobile.terminate(status='success')"),
    ("answer", A("answer", text="42"), "answer('42')"),
]


@pytest.mark.parametrize(("case", "action", "expected"), FORMAT_AGUVIS, ids=[c[0] for c in FORMAT_AGUVIS])
def test_format_aguvis(case, action, expected):
    assert format_action(action) == expected
    assert parse_action(expected) == parse_action(format_action(action))


def test_format_aguvis_grid_coordinates_are_ints():
    # grid and pixel coordinates are written as ints
    assert format_action(A("click", x=0.5, y=0.25), coordinates="grid1000") == "pyautogui.click(x=500, y=250)"
    assert parse_action("pyautogui.click(x=500, y=250)", coordinates="grid1000") == A("click", x=0.5, y=0.25)


# ------------------------------------------------------------------------------------------------ GUI-R1

SIZE = (1000, 2000)  # (width, height) of the resized image

GUIR1_CASES = [
    # the canonical GUI-R1 click, pixels of a 1000x2000 image
    ("click", "[{'action': 'click', 'point': [123, 300], 'input_text': 'no input text'}]", A("click", x=0.123, y=0.15)),
    # JSON with double quotes, no list around the dict
    (
        "click-json-dict",
        '{"action": "click", "point": [500, 1000], "input_text": "no input text"}',
        A("click", x=0.5, y=0.5),
    ),
    # action names are case-insensitive
    ("click-upper", "[{'action': 'CLICK', 'point': [0, 0]}]", A("click", x=0.0, y=0.0)),
    (
        "long-press",
        "[{'action': 'long_press', 'point': [100, 200], 'input_text': 'no input text'}]",
        A("long_press", x=0.1, y=0.1),
    ),
    (
        "type",
        "[{'action': 'type', 'point': [-100, -100], 'input_text': 'shanghai mall'}]",
        A("type", text="shanghai mall"),
    ),
    # scroll: the direction comes from input_text, the placeholder point is ignored
    ("scroll", "[{'action': 'scroll', 'point': [-100, -100], 'input_text': 'DOWN'}]", A("scroll", direction="down")),
    # scroll at a point
    (
        "scroll-at",
        "[{'action': 'scroll', 'point': [500, 500], 'input_text': 'up'}]",
        A("scroll", direction="up", x=0.5, y=0.25),
    ),
    ("press-back", "[{'action': 'press_back', 'point': [-100, -100], 'input_text': 'no input text'}]", A("back")),
    ("press-home", "[{'action': 'press_home', 'point': [-100, -100], 'input_text': 'no input text'}]", A("home")),
    (
        "enter",
        "[{'action': 'enter', 'point': [-100, -100], 'input_text': 'no input text'}]",
        A("press", keys=("enter",)),
    ),
    ("press-enter", "[{'action': 'press_enter'}]", A("press", keys=("enter",))),
    # any other press_<key>
    ("press-tab", "[{'action': 'press_tab'}]", A("press", keys=("tab",))),
    ("press-generic", "[{'action': 'press', 'input_text': 'back'}]", A("press", keys=("back",))),
    ("hotkey", "[{'action': 'hotkey', 'input_text': 'ctrl + c'}]", A("hotkey", keys=("ctrl", "c"))),
    ("open-app", "[{'action': 'open_app', 'point': [-100, -100], 'input_text': 'Maps'}]", A("open_app", text="Maps")),
    ("answer", "[{'action': 'answer', 'input_text': 'yes'}]", A("answer", text="yes")),
    (
        "complete",
        "[{'action': 'complete', 'point': [-100, -100], 'input_text': 'no input text'}]",
        A("terminate", status="success"),
    ),
    ("impossible", "[{'action': 'impossible'}]", A("terminate", status="failure")),
    ("terminate", "[{'action': 'terminate', 'input_text': 'Failure'}]", A("terminate", status="failure")),
    ("wait", "[{'action': 'wait', 'input_text': 'no input text'}]", A("wait")),
    ("wait-seconds", "[{'action': 'wait', 'input_text': '2'}]", A("wait", seconds=2.0)),
    ("doubleclick", "[{'action': 'doubleclick', 'point': [10, 20]}]", A("double_click", x=0.01, y=0.01)),
    ("rightclick", "[{'action': 'rightclick', 'point': [10, 20]}]", A("right_click", x=0.01, y=0.01)),
    ("moveto", "[{'action': 'moveto', 'point': [10, 20]}]", A("move_to", x=0.01, y=0.01)),
    ("dragto", "[{'action': 'dragto', 'point': [10, 20]}]", A("drag_to", x=0.01, y=0.01)),
    (
        "swipe",
        "[{'action': 'swipe', 'point': [500, 1600], 'end_point': [500, 400]}]",
        A("swipe", x=0.5, y=0.8, x2=0.5, y2=0.2),
    ),
    # the exact right/bottom edge is inside
    ("edge", "[{'action': 'click', 'point': [1000, 2000]}]", A("click", x=1.0, y=1.0)),
]


@pytest.mark.parametrize(("case", "text", "expected"), GUIR1_CASES, ids=[c[0] for c in GUIR1_CASES])
def test_parse_guir1(case, text, expected):
    assert parse_action(text, "guir1", image_size=SIZE) == expected
    assert parse_action(text, image_size=SIZE) == expected  # auto


MALFORMED_GUIR1 = [
    # broken literal
    ("broken", "[{'action': 'click', 'point': [1, 2]"),
    # broken JSON
    ("broken-json", '[{"action": "click", "point": [1, 2],}'),
    # two actions
    ("two-actions", "[{'action': 'click', 'point': [1, 2]}, {'action': 'click', 'point': [1, 2]}]"),
    # empty list
    ("empty-list", "[]"),
    # unknown action
    ("unknown", "[{'action': 'fly', 'point': [1, 2]}]"),
    # a click with the placeholder point
    ("click-placeholder", "[{'action': 'click', 'point': [-100, -100], 'input_text': 'no input text'}]"),
    # a click outside the image
    ("click-outside", "[{'action': 'click', 'point': [1001, 5]}]"),
    # NaN via JSON
    ("nan", '[{"action": "click", "point": [NaN, 5]}]'),
    # Infinity via JSON
    ("inf", '[{"action": "click", "point": [Infinity, 5]}]'),
    # point with one number
    ("short-point", "[{'action': 'click', 'point': [5]}]"),
    # string point
    ("string-point", "[{'action': 'click', 'point': '[5, 5]'}]"),
    # bad scroll direction
    ("bad-direction", "[{'action': 'scroll', 'input_text': 'sideways'}]"),
    # a type without text
    ("type-no-text", "[{'action': 'type', 'point': [-100, -100]}]"),
    # not a dict
    ("not-dict", "['click']"),
    # a set is not an action
    ("set", "{'click'}"),
    # a huge integer
    ("huge-int", "[{'action': 'click', 'point': [" + "9" * 5000 + ", 1]}]"),
]


@pytest.mark.parametrize(("case", "text"), MALFORMED_GUIR1, ids=[c[0] for c in MALFORMED_GUIR1])
def test_parse_guir1_malformed(case, text):
    assert parse_action(text, "guir1", image_size=SIZE) is None


def test_guir1_needs_image_size_for_pixels():
    # pixels without image_size cannot be normalized
    assert parse_action("[{'action': 'click', 'point': [1, 2]}]", "guir1") is None
    # but actions without a point do not need it
    assert parse_action("[{'action': 'press_back'}]", "guir1") is None  # the size is checked first: no guessing
    assert parse_action("[{'action': 'press_back'}]", "guir1", coordinates="grid1000") == A("back")


def test_format_guir1():
    # GUI-R1's own layout, pixel ints, the [-100, -100] placeholder and 'no input text'
    assert format_action(A("click", x=0.123, y=0.15), "guir1", image_size=SIZE) == (
        "[{'action': 'click', 'point': [123, 300], 'input_text': 'no input text'}]"
    )
    assert format_action(A("back"), "guir1", image_size=SIZE) == (
        "[{'action': 'press_back', 'point': [-100, -100], 'input_text': 'no input text'}]"
    )
    assert format_action(A("scroll", direction="down"), "guir1", image_size=SIZE) == (
        "[{'action': 'scroll', 'point': [-100, -100], 'input_text': 'down'}]"
    )


# -------------------------------------------------------------------------------------------- mobile_use


def tool_call(arguments: dict) -> str:
    return "<tool_call>\n" + json.dumps({"name": "mobile_use", "arguments": arguments}) + "\n</tool_call>"


MOBILE_USE_CASES = [
    # the canonical click on the 999 grid
    ("click", tool_call({"action": "click", "coordinate": [999, 0]}), A("click", x=1.0, y=0.0)),
    # without the tool_call tags
    (
        "click-bare",
        '{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [0, 999]}}',
        A("click", x=0.0, y=1.0),
    ),
    # just the arguments object
    ("click-arguments-only", '{"action": "click", "coordinate": [0, 999]}', A("click", x=0.0, y=1.0)),
    # arguments as a JSON string
    (
        "arguments-string",
        '{"name": "mobile_use", "arguments": "{\\"action\\": \\"system_button\\", \\"button\\": \\"Back\\"}"}',
        A("back"),
    ),
    ("long-press", tool_call({"action": "long_press", "coordinate": [0, 0], "time": 2}), A("long_press", x=0.0, y=0.0)),
    (
        "swipe",
        tool_call({"action": "swipe", "coordinate": [0, 999], "coordinate2": [0, 0]}),
        A("swipe", x=0.0, y=1.0, x2=0.0, y2=0.0),
    ),
    ("type", tool_call({"action": "type", "text": "hello"}), A("type", text="hello")),
    ("answer", tool_call({"action": "answer", "text": "42"}), A("answer", text="42")),
    ("back", tool_call({"action": "system_button", "button": "Back"}), A("back")),
    ("home", tool_call({"action": "system_button", "button": "home"}), A("home")),
    ("enter", tool_call({"action": "system_button", "button": "Enter"}), A("press", keys=("enter",))),
    ("menu", tool_call({"action": "system_button", "button": "Menu"}), A("press", keys=("menu",))),
    ("key", tool_call({"action": "key", "text": "volume_up"}), A("press", keys=("volume_up",))),
    ("open", tool_call({"action": "open", "text": "Maps"}), A("open_app", text="Maps")),
    ("wait", tool_call({"action": "wait", "time": 2}), A("wait", seconds=2.0)),
    ("wait-bare", tool_call({"action": "wait"}), A("wait")),
    ("terminate", tool_call({"action": "terminate", "status": "success"}), A("terminate", status="success")),
    ("terminate-fail", tool_call({"action": "terminate", "status": "fail"}), A("terminate", status="failure")),
]


@pytest.mark.parametrize(("case", "text", "expected"), MOBILE_USE_CASES, ids=[c[0] for c in MOBILE_USE_CASES])
def test_parse_mobile_use(case, text, expected):
    assert parse_action(text, "mobile_use") == expected
    assert parse_action(text) == expected  # auto


MALFORMED_MOBILE_USE = [
    # truncated JSON
    ("truncated", '<tool_call>\n{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [1, 2]}'),
    # another tool
    ("other-tool", '{"name": "computer_use", "arguments": {"action": "click", "coordinate": [1, 2]}}'),
    # out of the grid
    ("outside", tool_call({"action": "click", "coordinate": [1000, 2]})),
    # unknown action
    ("unknown", tool_call({"action": "teleport"})),
    # unknown button
    ("unknown-button", tool_call({"action": "system_button", "button": "Power"})),
    # bad status
    ("bad-status", tool_call({"action": "terminate", "status": "maybe"})),
    # swipe without its end
    ("swipe-no-end", tool_call({"action": "swipe", "coordinate": [1, 2]})),
    # an empty key
    ("empty-key", tool_call({"action": "key", "text": ""})),
    # Python literal is not JSON
    ("python-literal", "{'action': 'wait'}"),
    # deeply nested JSON
    ("deep", "[" * 100_000),
]


@pytest.mark.parametrize(("case", "text"), MALFORMED_MOBILE_USE, ids=[c[0] for c in MALFORMED_MOBILE_USE])
def test_parse_mobile_use_malformed(case, text):
    assert parse_action(text, "mobile_use") is None


def test_format_mobile_use():
    # Qwen's layout on the 999 grid
    assert format_action(A("click", x=0.5, y=1.0), "mobile_use") == (
        '<tool_call>\n{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [500, 999]}}\n</tool_call>'
    )
    # actions the tool cannot express are refused
    for action in (A("scroll", direction="up"), A("double_click", x=0.1, y=0.1), A("hotkey", keys=("a", "b"))):
        with pytest.raises(ValueError, match="mobile_use"):
            format_action(action, "mobile_use")


# ------------------------------------------------------------------------------------------- coordinates

COORDINATE_CASES = [
    # (text, format, coordinates, image_size, expected)
    ("pyautogui.click(x=500, y=250)", "aguvis", "grid1000", None, A("click", x=0.5, y=0.25)),
    ("pyautogui.click(x=999, y=0)", "aguvis", "grid999", None, A("click", x=1.0, y=0.0)),
    ("pyautogui.click(x=224, y=518)", "aguvis", "pixels", (448, 1036), A("click", x=0.5, y=0.5)),
    # the image size is required for pixels
    ("pyautogui.click(x=224, y=518)", "aguvis", "pixels", None, None),
    # a bad image size
    ("pyautogui.click(x=1, y=1)", "aguvis", "pixels", (0, 10), None),
    # an unknown coordinate system
    ("pyautogui.click(x=1, y=1)", "aguvis", "grid7", None, None),
    # unknown format
    ("pyautogui.click(x=0.1, y=0.1)", "xml", None, None, None),
    # beyond the grid
    ("pyautogui.click(x=1001, y=1)", "aguvis", "grid1000", None, None),
    # guir1 with normalized coordinates
    ("[{'action': 'click', 'point': [0.5, 0.5]}]", "guir1", "normalized", None, A("click", x=0.5, y=0.5)),
    # mobile_use with pixels
    (
        tool_call({"action": "click", "coordinate": [224, 518]}),
        "mobile_use",
        "pixels",
        (448, 1036),
        A("click", x=0.5, y=0.5),
    ),
]


@pytest.mark.parametrize(("text", "fmt", "coordinates", "size", "expected"), COORDINATE_CASES)
def test_coordinates(text, fmt, coordinates, size, expected):
    assert parse_action(text, fmt, coordinates=coordinates, image_size=size) == expected


SMART_RESIZE_CASES = [
    # (height, width, min_pixels, max_pixels, expected (h, w)); the docs/notes.md "Coordinates" examples first
    (2400, 1080, 3136, 12845056, (2408, 1092)),
    (2400, 1080, 3136, 501760, (1036, 448)),
    # already a multiple of 28
    (224, 224, 3136, 12845056, (224, 224)),
    # too small: scaled up to min_pixels
    (20, 30, 3136, 12845056, (56, 84)),
    # a wide image under a small budget
    (1080, 1920, 3136, 50176, (168, 280)),
]


@pytest.mark.parametrize(("height", "width", "min_pixels", "max_pixels", "expected"), SMART_RESIZE_CASES)
def test_smart_resize(height, width, min_pixels, max_pixels, expected):
    assert smart_resize(height, width, min_pixels=min_pixels, max_pixels=max_pixels) == expected
    assert resized_size(width, height, min_pixels, max_pixels) == expected[::-1]


def test_smart_resize_tiny_side():
    # a side that rounds to 0 multiples of 28 counts as 28 (docs/notes.md "Coordinates", qwen-vl-utils)
    assert smart_resize(14, 720) == (28, 728)


def test_smart_resize_rejects_extreme_aspect_ratio():
    # more than 200:1 is refused, as in transformers
    with pytest.raises(ValueError, match="aspect ratio"):
        smart_resize(28, 28 * 201)


def test_smart_resize_matches_transformers():
    # transformers' copy (the PIL image processor module needs no torchvision); imported here only. Sides of
    # 14 px or less differ on purpose: docs/notes.md / qwen-vl-utils take max(28, round(side / 28) * 28), transformers
    # lets that round to 0 (see test_smart_resize_tiny_side).
    reference = pytest.importorskip("transformers.models.qwen2_vl.image_processing_pil_qwen2_vl").smart_resize
    sides = (15, 27, 28, 41, 56, 100, 719, 720, 1080, 1920, 2400, 3000)
    sizes = [(h, w) for h in sides for w in sides if max(h, w) / min(h, w) <= 200]
    budgets = [(3136, 12845056), (3136, 501760), (3136, 50176), (200704, 1003520)]
    for height, width in sizes:
        for min_pixels, max_pixels in budgets:
            expected = reference(height, width, factor=28, min_pixels=min_pixels, max_pixels=max_pixels)
            assert smart_resize(height, width, 28, min_pixels, max_pixels) == tuple(expected), (height, width)


def test_point_conversions():
    # normalized <-> grid <-> pixels of the resized image
    assert normalize_point(500, 250, "grid1000") == (0.5, 0.25)
    assert normalize_point(1200, 250, "grid1000") is None
    assert normalize_point(float("nan"), 0, "grid1000") is None
    assert denormalize_point(0.5, 0.25, "pixels", (448, 1036)) == (224, 259)
    assert normalized_to_pixels(0.5, 0.5, (1080, 2400), max_pixels=501760) == (224, 518)
    assert pixels_to_normalized(224, 518, (1080, 2400), max_pixels=501760) == (0.5, 0.5)


# -------------------------------------------------------------------------------------------- extraction

EXTRACT_CASES = [
    # Aguvis decoded with skip_special_tokens: the code follows "assistantos"
    (
        "aguvis-skip-special",
        "Thought: I need to search.\nAction: Click the search bar.assistantos\npyautogui.click(x=0.5, y=0.1)",
        A("click", x=0.5, y=0.1),
    ),
    # special tokens kept
    (
        "aguvis-special",
        "Action: go back<|diff_marker|>\n<|im_start|>assistant<|recipient|>os\nmobile.back()<|im_end|>",
        A("back"),
    ),
    # the os channel at the start of the completion
    ("os-channel-start", "os\nmobile.home()", A("home")),
    # rewards' old table had this long marker, the parser's did not: on one line it reads as its short suffix did
    (
        "long-marker-same-line",
        "Action: go back<|im_start|>assistant<|recipient|>os mobile.back()<|im_end|>",
        A("back"),
    ),
    # the long marker twice on a line: the code after the last one
    (
        "long-marker-last-wins",
        "<|im_start|>assistant<|recipient|>os mobile.home()<|im_start|>assistant<|recipient|>os mobile.back()",
        A("back"),
    ),
    # marker glued to the code
    ("glued-marker", "Action: home assistantosmobile.home()", A("home")),
    # a marker inside typed text is text, not a channel
    (
        "marker-in-text",
        "pyautogui.write(message='xassistantos mobile.home()')",
        A("type", text="xassistantos mobile.home()"),
    ),
    # think / answer
    (
        "answer-tag",
        "<think>the button is at the top</think><answer>pyautogui.click(x=0.2, y=0.3)</answer>",
        A("click", x=0.2, y=0.3),
    ),
    # a GUI-R1 answer (pixels by default, so no image size means no action, even without a point)
    (
        "answer-guir1",
        "<think>t</think> <answer>[{'action': 'press_back', 'point': [-100, -100], 'input_text': 'no input text'}]</answer>",
        None,
    ),
    # a tool call spread over lines
    (
        "tool-call",
        'Thought: t\nAction: a\n<tool_call>\n{"name": "mobile_use",\n "arguments": {"action": "system_button", "button": "Home"}}\n</tool_call>',
        A("home"),
    ),
    # a tool call cut before its closing tag
    ("tool-call-unclosed", '<tool_call>\n{"name": "mobile_use", "arguments": {"action": "wait"}}', A("wait")),
    # a bare action line
    ("bare", "pyautogui.write(message='hi')", A("type", text="hi")),
    # in a code fence
    ("fenced", "```python\npyautogui.press(keys=['enter'])\n```", A("press", keys=("enter",))),
    # inline code
    ("inline-code", "`mobile.back()`", A("back")),
    # the last of several actions wins
    (
        "last-wins",
        "pyautogui.click(x=0.1, y=0.1)\nassistantos\npyautogui.click(x=0.9, y=0.9)",
        A("click", x=0.9, y=0.9),
    ),
    # the answer after a thought mentioning another action
    ("answer-after-think", "<think>maybe mobile.home()</think><answer>mobile.back()</answer>", A("back")),
    # an unparseable last action falls back to the previous one
    ("last-broken", "mobile.back()\npyautogui.click(x=0.5, y=", A("back")),
    # TRL conversational completion
    ("conversational", [{"role": "assistant", "content": "mobile.home()"}], A("home")),
    # content as text parts
    ("content-parts", [{"role": "assistant", "content": [{"type": "text", "text": "mobile.back()"}]}], A("back")),
    # a single message dict
    ("message-dict", {"role": "assistant", "content": "mobile.home()"}, A("home")),
    # nothing parseable
    ("prose", "I would click the button.", None),
    # an empty answer
    ("empty-answer", "<think>x</think><answer></answer>", None),
    # not a completion at all
    ("none", None, None),
    ("int", 42, None),
    ("bytes", b"mobile.home()", None),
    ("list-of-ints", [1, 2, 3], None),
    ("message-without-content", [{"role": "assistant"}], None),
]


@pytest.mark.parametrize(("case", "completion", "expected"), EXTRACT_CASES, ids=[c[0] for c in EXTRACT_CASES])
def test_extract_action(case, completion, expected):
    assert extract_action(completion) == expected


def test_extract_action_uses_coordinates():
    # the coordinate convention applies to whatever format is found
    text = "<answer>[{'action': 'click', 'point': [224, 518]}]</answer>"
    assert extract_action(text, image_size=(448, 1036)) == A("click", x=0.5, y=0.5)
    assert extract_action(text) is None  # pixels without a size
    assert extract_action("pyautogui.click(x=500, y=500)", coordinates="grid1000") == A("click", x=0.5, y=0.5)


def every_candidate_action(text: str):
    """The reading extract_action promises, by brute force: every tag content and every line, the last (by end
    position, tag before line) that parses. The oracle for its scan from the end."""
    from r1_gui.actions import completion

    found = [candidate for candidate in completion._candidates(text) if candidate[1] == 2]  # the tag contents
    position = 0
    for line in text.split("\n"):
        position += len(line)
        found += [(position, priority, variant) for priority, variant in completion._line_variants(line)]
        position += 1
    for _, _, candidate in sorted(found, key=lambda c: (c[0], c[1]), reverse=True):
        action = parse_action(candidate, "auto")
        if action is not None:
            return action
    return None


LINE_PIECES = ["pyautogui.click(x=0.5, y=0.5)", "mobile.back()", "a)b", "x", ")", "]", "}", "`", " ", "\n", "\n\n",
               "<|im_end|>", "assistantos", "<answer>", "</answer>", "[{'action': 'press_back'}]", "Action: tap"]  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(LINE_PIECES), max_size=12).map("".join))
def test_extract_action_scans_from_the_end_as_if_it_read_every_line(text):
    assert extract_action(text) == every_candidate_action(text)


def test_extract_action_parses_at_most_a_budget_of_text():
    # an action hidden behind 300,000 characters of candidates that parse as nothing is not looked for
    junk = ("f(" + "1," * 50_000 + "\n") * 3
    assert extract_action("pyautogui.click(x=0.5, y=0.5)\n" + junk.replace("\n", ")\n")) is None
    # the same action behind 100,000 characters is found
    assert extract_action("pyautogui.click(x=0.5, y=0.5)\nf(" + "1," * 50_000 + ")") == A("click", x=0.5, y=0.5)
    # and the last candidate is always tried, however long
    assert extract_action("x\npyautogui.write(message='" + "a" * 90_000 + "')") == A("type", text="a" * 90_000)


@pytest.mark.parametrize(
    "completion",
    [
        "(" * 100_000,
        "[" * 100_000,
        "<answer>" * 20_000,
        "<tool_call>" * 10_000,
        "pyautogui.click(" * 6_000,
        "a()\n" * 25_000,
        "- " * 50_000 + "1)",
        "assistantos" * 10_000,
        "<think>" + "x" * 100_000,
        "pyautogui.write(message='" + "a" * 100_000 + "')",
    ],
    ids=[
        "parens",
        "brackets",
        "answer-tags",
        "tool-call-tags",
        "open-calls",
        "many-lines",
        "unary",
        "markers",
        "think",
        "long-text",
    ],
)
def test_extract_action_is_fast_on_hostile_input(completion):
    start = time.perf_counter()
    extract_action(completion)
    parse_action(completion)
    assert time.perf_counter() - start < 1.0


# ---------------------------------------------------------------------------------- Action and its dicts

INVALID_ACTIONS = [
    # (kwargs, the field the error names)
    ({"type": "fly"}, "type"),
    ({"type": "click", "x": 0.5}, "y"),
    ({"type": "click", "x": 1.5, "y": 0.5}, "x"),
    ({"type": "click", "x": float("nan"), "y": 0.5}, "x"),
    ({"type": "click", "x": True, "y": 0.5}, "x"),
    ({"type": "click", "x": 0.5, "y": 0.5, "text": "a"}, "text"),
    ({"type": "type"}, "text"),
    ({"type": "type", "text": 3}, "text"),
    ({"type": "press", "keys": "enter"}, "keys"),
    ({"type": "press", "keys": ()}, "keys"),
    ({"type": "press", "keys": ("",)}, "keys"),
    ({"type": "scroll", "direction": "north"}, "direction"),
    ({"type": "scroll", "direction": "up", "x": 0.5}, "y"),
    ({"type": "terminate", "status": "done"}, "status"),
    ({"type": "wait", "seconds": -1}, "seconds"),
    ({"type": "swipe", "x": 0.1, "y": 0.1}, "x2"),
    ({"type": "home", "seconds": 1}, "seconds"),
]


@pytest.mark.parametrize(("kwargs", "field"), INVALID_ACTIONS)
def test_invalid_actions_name_the_field(kwargs, field):
    with pytest.raises(ValueError, match=repr(field)):
        Action.from_dict(kwargs)


def test_from_dict_rejects_unknown_fields_and_non_dicts():
    with pytest.raises(ValueError, match="colour"):
        Action.from_dict({"type": "home", "colour": "red"})
    with pytest.raises(ValueError, match="dict"):
        Action.from_dict(["home"])
    with pytest.raises(ValueError, match="'type'"):
        Action.from_dict({})


def test_to_dict_is_json_safe_and_drops_none():
    action = A("hotkey", keys=("ctrl", "c"))
    assert action.to_dict() == {"type": "hotkey", "keys": ["ctrl", "c"]}
    assert Action.from_dict(json.loads(json.dumps(action.to_dict()))) == action
    assert A("wait", seconds=3).to_dict() == {"type": "wait", "seconds": 3.0}


SAME_ARGUMENT_CASES = [
    # (pred, gt, expected)
    # argument-less actions are exact
    (A("back"), A("back"), True),
    (A("home"), A("back"), False),
    # coordinates within 5e-4
    (A("click", x=0.5004, y=0.5), A("click", x=0.5, y=0.5), True),
    (A("click", x=0.5006, y=0.5), A("click", x=0.5, y=0.5), False),
    # same point, different type
    (A("long_press", x=0.5, y=0.5), A("click", x=0.5, y=0.5), False),
    # text stripped, case-sensitive
    (A("type", text=" hello "), A("type", text="hello"), True),
    (A("type", text="Hello"), A("type", text="hello"), False),
    # keys case-insensitive
    (A("press", keys=("Enter",)), A("press", keys=("enter",)), True),
    (A("hotkey", keys=("c", "ctrl")), A("hotkey", keys=("ctrl", "c")), False),
    # direction and status
    (A("scroll", direction="up"), A("scroll", direction="down"), False),
    (A("terminate", status="success"), A("terminate", status="success"), True),
    # seconds
    (A("wait", seconds=3), A("wait", seconds=3.0), True),
    (A("wait"), A("wait", seconds=3), False),
    # a scroll point given on one side only
    (A("scroll", direction="up", x=0.5, y=0.5), A("scroll", direction="up"), False),
    # swipe end point checked too
    (A("swipe", x=0.1, y=0.1, x2=0.1, y2=0.9), A("swipe", x=0.1, y=0.1, x2=0.1, y2=0.8), False),
]


@pytest.mark.parametrize(("pred", "gt", "expected"), SAME_ARGUMENT_CASES)
def test_same_arguments(pred, gt, expected):
    assert same_arguments(pred, gt) is expected


def test_light_import():
    # the action core and its users must not pull in the heavy stack
    code = (
        "import sys, r1_gui.actions, r1_gui.scoring, r1_gui.rewards; "
        "heavy = [m for m in ('torch', 'transformers', 'trl', 'numpy') if m in sys.modules]; "
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# ---------------------------------------------------------------------------------------------- round trips


def _unit(denominator: int):
    return st.integers(0, denominator).map(lambda k: k / denominator)


ANY_TEXT = st.text(st.characters(exclude_categories=()), max_size=30)  # lone surrogates and controls too
ANY_KEY = st.text(min_size=1, max_size=8)
SIMPLE_KEY = st.from_regex(r"[A-Za-z0-9_]{1,8}", fullmatch=True)
SECONDS = st.integers(0, 600).map(float) | st.integers(0, 400).map(lambda k: k / 4)


@st.composite
def actions(draw, types, unit, key=ANY_KEY, max_keys=3):
    kind = draw(st.sampled_from(types))
    required, optional = FIELDS_BY_TYPE[kind]
    names = list(required) + [name for name in optional if draw(st.booleans())]
    if "x" in names or "y" in names:
        names = sorted(set(names) | {"x", "y"})
    values = {}
    for name in names:
        if name in ("x", "y", "x2", "y2"):
            values[name] = draw(unit)
        elif name == "text":
            values[name] = draw(ANY_TEXT)
        elif name == "keys":
            values[name] = tuple(draw(st.lists(key, min_size=1, max_size=max_keys)))
        elif name == "direction":
            values[name] = draw(st.sampled_from(DIRECTIONS))
        elif name == "status":
            values[name] = draw(st.sampled_from(STATUSES))
        elif name == "seconds":
            values[name] = draw(SECONDS)
    return Action(kind, **values)


ROUND_TRIP = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MOBILE_USE_TYPES = [
    t for t in ACTION_TYPES if t not in ("scroll", "double_click", "right_click", "move_to", "drag_to", "hotkey")
]


@ROUND_TRIP
@given(actions(ACTION_TYPES, _unit(10_000)))
def test_round_trip_aguvis(action):
    assert parse_action(format_action(action, "aguvis"), "aguvis") == action
    assert extract_action(format_action(action)) == action


@ROUND_TRIP
@given(actions(ACTION_TYPES, _unit(1000)))
def test_round_trip_aguvis_grid1000(action):
    text = format_action(action, "aguvis", coordinates="grid1000")
    assert parse_action(text, coordinates="grid1000") == action


@ROUND_TRIP
@given(actions(ACTION_TYPES, _unit(1092), key=SIMPLE_KEY))
def test_round_trip_guir1_pixels(action):
    # pixels of a 1092 x 1092 image so that every generated coordinate is a whole pixel
    size = (1092, 1092)
    text = format_action(action, "guir1", image_size=size)
    assert parse_action(text, "guir1", image_size=size) == action
    assert parse_action(text, image_size=size) == action


@ROUND_TRIP
@given(actions(MOBILE_USE_TYPES, _unit(999), max_keys=1))
def test_round_trip_mobile_use(action):
    text = format_action(action, "mobile_use")
    assert parse_action(text, "mobile_use") == action
    assert extract_action("Thought: t\nAction: a\n" + text) == action


@ROUND_TRIP
@given(actions(ACTION_TYPES, st.floats(0, 1)))
def test_round_trip_dict(action):
    assert Action.from_dict(json.loads(json.dumps(action.to_dict()))) == action


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200), st.sampled_from(["auto", "aguvis", "guir1", "mobile_use"]))
def test_parsers_never_raise(text, fmt):
    result = parse_action(text, fmt, image_size=(100, 100))
    assert result is None or isinstance(result, Action)
    if result is not None and result.point is not None:
        assert all(0 <= v <= 1 and math.isfinite(v) for v in result.point)
    assert extract_action(text) is None or isinstance(extract_action(text), Action)


@pytest.mark.parametrize(
    "coordinates, image_size, expected",
    [
        ("normalized", None, 5e-4),  # the Aguvis data's printed precision
        ("grid1000", None, 5e-4),  # half a unit of 1/1000 is exactly that precision
        ("grid999", None, 0.5 / 999),  # slightly coarser
        ("pixels", (448, 1036), 0.5 / 448),  # half a pixel of the narrow side
        ("pixels", (4000, 4000), 5e-4),  # finer than the data: the data's precision wins
    ],
)
def test_coordinate_tolerance(coordinates, image_size, expected):
    from r1_gui.actions import coordinate_tolerance

    assert coordinate_tolerance(coordinates, image_size) == pytest.approx(expected)


# ------------------------------------------------------------------------------------------ completion readers

STYLED_MARKER_CASES = [
    # (id, completion, expected): the Aguvis style splits plan from code at the last marker, longest first
    # the long marker: the plan ends before "<|im_start|>assistant", so it is a plan
    ("long-marker", "Action: go back<|im_end|>\n<|im_start|>assistant<|recipient|>os\nmobile.back()", A("back")),
    # the short marker alone
    ("recipient-marker", "Action: go back\n<|recipient|>os\nmobile.back()", A("back")),
    # skip_special_tokens form
    ("assistantos", "Action: go back\nassistantos\nmobile.back()", A("back")),
    # no marker at all: not the Aguvis style
    ("no-marker", "Action: go back\nmobile.back()", None),
    # a marker but no plan before it
    ("no-plan", "assistantos\nmobile.back()", None),
    # malformed input
    ("not-text", 42, None),
]


@pytest.mark.parametrize(
    ("case", "completion", "expected"), STYLED_MARKER_CASES, ids=[c[0] for c in STYLED_MARKER_CASES]
)
def test_styled_action_aguvis_markers(case, completion, expected):
    assert styled_action(completion, "aguvis") == expected


READ_BBOX_CASES = [
    # (id, value, default rule, normalized=True rule): where the four old validators differed, each caller's kept
    # a normalized box: both rules take it
    ("normalized", [0.1, 0.2, 0.3, 0.4], (0.1, 0.2, 0.3, 0.4), (0.1, 0.2, 0.3, 0.4)),
    # a tuple of ints: both, as floats
    ("ints", (0, 0, 1, 1), (0.0, 0.0, 1.0, 1.0), (0.0, 0.0, 1.0, 1.0)),
    # a flat box (x1 == x2): both
    ("flat", [0.5, 0.2, 0.5, 0.4], (0.5, 0.2, 0.5, 0.4), (0.5, 0.2, 0.5, 0.4)),
    # pixel-scale values: the evaluation / AITW rule takes them, the builder's does not
    ("pixel-scale", [10, 20, 300, 400], (10.0, 20.0, 300.0, 400.0), None),
    # a negative corner: likewise
    ("negative", [-0.1, 0.2, 0.3, 0.4], (-0.1, 0.2, 0.3, 0.4), None),
    # NaN: neither
    ("nan", [float("nan"), 0.2, 0.3, 0.4], None, None),
    # infinity: neither
    ("inf", [0.1, 0.2, float("inf"), 0.4], None, None),
    # x2 < x1: neither
    ("x2-before-x1", [0.3, 0.2, 0.1, 0.4], None, None),
    # y2 < y1: neither
    ("y2-before-y1", [0.1, 0.4, 0.3, 0.2], None, None),
    # three values: neither
    ("short", [0.1, 0.2, 0.3], None, None),
    # five values: neither
    ("long", [0.1, 0.2, 0.3, 0.4, 0.5], None, None),
    # numeric strings: float() takes them (the evaluation's reading), the builder's rule does not
    ("numeric-strings", ["0.1", "0.2", "0.3", "0.4"], (0.1, 0.2, 0.3, 0.4), None),
    # a word: neither
    ("word", ["a", 0.2, 0.3, 0.4], None, None),
    # a string of four digits iterates as four numbers under float(): kept as it was
    ("digit-string", "0011", (0.0, 0.0, 1.0, 1.0), None),
    # bools are ints to float(); the builder's rule refuses them
    ("bools", [False, False, True, True], (0.0, 0.0, 1.0, 1.0), None),
    # None and a number: neither
    ("none", None, None, None),
    ("number", 0.5, None, None),
    # a dict: neither
    ("dict", {"x1": 0.1}, None, None),
]


@pytest.mark.parametrize(
    ("case", "value", "default", "normalized"), READ_BBOX_CASES, ids=[c[0] for c in READ_BBOX_CASES]
)
def test_read_bbox(case, value, default, normalized):
    assert read_bbox(value) == (pytest.approx(default) if default else None)
    assert read_bbox(value, normalized=True) == (pytest.approx(normalized) if normalized else None)


@pytest.mark.parametrize(
    ("value", "expected"), [(1, True), (0.5, True), (float("nan"), True), (True, False), ("1", False), (None, False)]
)
def test_is_number(value, expected):
    assert is_number(value) is expected
