"""Write cases.jsonl: inputs for the peers' reward and evaluation functions, and the values those functions return.

    python tests/data/peer_rewards/make_cases.py --peers /tmp/peers

This file holds no peer code. It builds the inputs (hand-written ones, then random combinations of the same
fragments, seeded), imports the peers' own functions from the folder ``--peers`` names (README.md in this folder
says what goes in it), calls them, and writes one JSON line per case. tests/test_peer_rewards.py checks that
r1_gui's rewards return the same values.
"""

from __future__ import annotations

import argparse
import importlib
import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

# ------------------------------------------------------------------------------------------- R1-V-GUI-Agent

R1V_CODES = [
    "pyautogui.click(x=0.5, y=0.5)",
    "pyautogui.click(x=0.50, y=0.5)",
    "pyautogui.click( x=0.5, y=0.5 )",
    "pyautogui.click(x=0.5,y=0.5)",
    "pyautogui.click (x=0.5, y=0.5)",
    "Action: pyautogui.click(x=0.5, y=0.5)",
    "pyautogui.doubleClick(x=0.5, y=0.5)",
    "mobile.long_press(x=0.5, y=0.5)",
    "pyautogui.tap(x=0.5, y=0.5)",
    "mobile.back()",
    "mobile.home()",
    "mobile.back() (x)",
    "mobile.home() or back(x)",
    "pyautogui.write(message='smile :) ok ')",
    "pyautogui.write(message='smile :) no')",
    "pyautogui.write(message='New York')",
    "pyautogui.write(message='café 中文 😀')",
    "pyautogui.press(keys=['enter'])",
    "pyautogui.press(keys='enter')",
    "pyautogui.scroll(page=-0.1)",
    "mobile.swipe(from_coord=[0.5, 0.8], to_coord=[0.5, 0.2])",
    "mobile.open_app(app_name='Clock')",
    "mobile.terminate(status='success')",
    "pyautogui.click(x=0.5,\ny=0.5)",
    "pyautogui.click\n(x=0.5, y=0.5)",
    "(x=0.5, y=0.5)",
    "f((a))",
    "f(()",
    "f())",
    "a(b)c(d)",
    ")(x)",
    "pyautogui.click(x=0.5, y=0.5)<|im_end|>",
    "`pyautogui.click(x=0.5, y=0.5)`",
    '{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [500, 500]}}',
    "",
    "no call here",
]
R1V_PLANS = [
    "",
    "Thought: tap the clock\nAction: tap the clock\n",
    "Action: tap (the blue one)\n",
    "content: Thought: t Action: a ",
    "content:\nThought: t\nAction: a\n",
    "content:Thought:Action:",
    "Content: Thought: t\nAction: a\n",
    "I tap it (the blue one).\n",
    "<think>tap</think>",
    "  ",
]
R1V_MARKERS = ["assistantos\n", "assistantos", "assistantos ", "<|im_start|>assistant<|recipient|>os\n", "", "\n"]
R1V_ENDS = [
    "",
    "",
    "",
    "\n",
    "<|im_end|>",
    "\nassistantos\nmobile.home()",
    " (trailing)",
    "\n\npyautogui.click(x=0.1, y=0.1)",
]
R1V_SOLUTIONS = [
    "<answer>pyautogui.click(x=0.5, y=0.5)</answer>",
    "pyautogui.click(x=0.5, y=0.5)",
    "<answer> pyautogui.click(x=0.5, y=0.5) </answer>",
    "<answer>\npyautogui.click(x=0.5, y=0.5)\n</answer>",
    "<answer>mobile.back()</answer>",
    "<answer>pyautogui.write(message='smile :) ok ')</answer>",
    "<answer>pyautogui.write(message='New York')</answer>",
    "<answer>mobile.long_press(x=0.5, y=0.5)</answer>",
    "<answer>pyautogui.scroll(page=-0.1)</answer>",
    "<answer>mobile.swipe(from_coord=[0.5, 0.8], to_coord=[0.5, 0.2])</answer>",
    "<answer>pyautogui.click(x=0.5, y=0.5)</answer><answer>mobile.back(x)</answer>",
    "<answer>\n</answer><answer>mobile.home(x)</answer>",
    "x <answer>pyautogui.press(keys=['enter'])</answer> y",
    "<answer></answer>",
    "<answer>assistantos pyautogui.click(x=0.5, y=0.5)</answer>",
    "",
]
# Hand-written (output, solution) pairs for the kinds the issue names.
R1V_PAIRS = [
    ("Thought: t\nAction: a\nassistantos\npyautogui.click(x=0.5, y=0.5)", R1V_SOLUTIONS[0]),
    ("assistantos\npyautogui.doubleClick(x=0.5, y=0.5)", R1V_SOLUTIONS[0]),
    ("assistantos\npyautogui.tap(x=0.5, y=0.5)", "<answer>mobile.long_press(x=0.5, y=0.5)</answer>"),
    ("assistantos\nmobile.long_press(x=0.5, y=0.5)", R1V_SOLUTIONS[0]),
    ("assistantos pyautogui.click(x=0.5, y=0.5)", R1V_SOLUTIONS[0]),
    ("assistantos\nmobile.back()", "<answer>mobile.back()</answer>"),
    ("assistantos\nmobile.back() (x)", "<answer>mobile.back() (x)</answer>"),
    ("content: Thought: t\nAction: a\nassistantos", R1V_SOLUTIONS[0]),
    ("content: Thought: t\nAction: a\nassistantos\n", R1V_SOLUTIONS[0]),
    ("content:Thought:Action:assistantos", R1V_SOLUTIONS[0]),
    ("content: Action: a Thought: t assistantos", R1V_SOLUTIONS[0]),
    ("content: Thought: t Action: a", R1V_SOLUTIONS[0]),
    (" content: Thought: t Action: a assistantos", R1V_SOLUTIONS[0]),
    ("content: Thought: Action: assistantos" + "(" * 500, R1V_SOLUTIONS[0]),
    ("(" * 1024, R1V_SOLUTIONS[0]),
    ("a(" * 500 + "x)", R1V_SOLUTIONS[0]),
    ("assistantos" * 50 + "pyautogui.click(x=0.5, y=0.5)", R1V_SOLUTIONS[0]),
    ("pyautogui.click(x=0.5, y=0.5)", "<answer>pyautogui.click(x=0.5, y=0.5)"),
    ("\u00a0assistantos\u00a0pyautogui.click(x=0.5, y=0.5)\u2028", R1V_SOLUTIONS[0]),
    (
        "assistantos\npyautogui.write(message='café 中文 😀')",
        "<answer>pyautogui.write(message='café 中文 😀')</answer>",
    ),
]


def r1v_inputs(rng: random.Random, count: int) -> list[tuple[str, str]]:
    pairs = list(R1V_PAIRS)
    pairs += [(code, solution) for code in R1V_CODES[:12] for solution in R1V_SOLUTIONS[:6]]
    for _ in range(count):
        code = rng.choice(R1V_CODES)
        output = rng.choice(R1V_PLANS) + rng.choice(R1V_MARKERS) + code + rng.choice(R1V_ENDS)
        same = rng.choice([f"<answer>{code}</answer>", code, rng.choice(R1V_CODES)])  # half the time the same code
        pairs.append((output, rng.choice([same, rng.choice(R1V_SOLUTIONS)])))
    return pairs


# ------------------------------------------------------------------------------------------------- GUI-R1

SCREEN = [448, 1036]
BOX = [0.5, 0.45, 0.6, 0.55]  # pixels: x in (224, 268.8), y in (466.2, 569.8)


def gt(action: str, bbox: list[float], text: str = "no input text") -> dict:
    return {"action": action, "gt_bbox": bbox, "input_text": text}


def scaled(values: list[float]) -> list[float]:
    """As GUI-R1's dataset.py scales a normalized gt_bbox: x by the width, y by the height."""
    return [value * SCREEN[index % 2] for index, value in enumerate(values)]


NO_POINT = [-100.0, -100.0]
# (r1_gui row or None, GUI-R1 ground truth). A row's ground truth is what GUI-R1's dataset.py would build from
# the same step: its action name, gt_bbox = the normalized box or point times the screen size, its input text.
GUIR1_TRUTHS = [
    ({"solution": "<answer>pyautogui.click(x=0.5, y=0.5)</answer>", "bbox": None, "screen_size": SCREEN},
     gt("click", scaled([0.5, 0.5]))),
    ({"solution": "<answer>pyautogui.click(x=0.55, y=0.5)</answer>", "bbox": BOX, "screen_size": SCREEN},
     gt("click", scaled(BOX))),
    ({"solution": "<answer>mobile.long_press(x=0.5, y=0.5)</answer>", "bbox": None, "screen_size": SCREEN},
     gt("long_press", scaled([0.5, 0.5]))),
    ({"solution": "<answer>pyautogui.write(message='New York City')</answer>", "bbox": None, "screen_size": SCREEN},
     gt("type", NO_POINT, "New York City")),
    ({"solution": "<answer>pyautogui.scroll(page=-0.1)</answer>", "bbox": None, "screen_size": SCREEN},
     gt("scroll", NO_POINT, "down")),
    ({"solution": "<answer>pyautogui.hscroll(page=-0.1)</answer>", "bbox": None, "screen_size": SCREEN},
     gt("scroll", NO_POINT, "left")),
    ({"solution": "<answer>mobile.back()</answer>", "bbox": None, "screen_size": SCREEN}, gt("press_back", NO_POINT)),
    ({"solution": "<answer>mobile.home()</answer>", "bbox": None, "screen_size": SCREEN}, gt("press_home", NO_POINT)),
    ({"solution": "<answer>pyautogui.press(keys=['enter'])</answer>", "bbox": None, "screen_size": SCREEN},
     gt("enter", NO_POINT)),
    ({"solution": "<answer>mobile.terminate(status='success')</answer>", "bbox": None, "screen_size": SCREEN},
     gt("complete", NO_POINT)),
    ({"solution": "<answer>mobile.terminate(status='failure')</answer>", "bbox": None, "screen_size": SCREEN},
     gt("impossible", NO_POINT)),
    ({"solution": "<answer>mobile.open_app(app_name='Clock')</answer>", "bbox": None, "screen_size": SCREEN},
     gt("open_app", NO_POINT, "Clock")),
    ({"solution": "<answer>mobile.wait()</answer>", "bbox": None, "screen_size": SCREEN}, gt("wait", NO_POINT)),
    ({"solution": "<answer>pyautogui.write(message='hello world')</answer>", "bbox": None, "screen_size": SCREEN},
     gt("type", NO_POINT, "hello world")),
    ({"solution": "<answer>pyautogui.write(message='NewYork')</answer>", "bbox": None, "screen_size": SCREEN},
     gt("type", NO_POINT, "NewYork")),
    # ground truths no r1_gui row expresses: GUI-R1's select, an upper-case direction or name, odd gt_bbox lengths
    (None, gt("select", NO_POINT, "Option A")),
    (None, gt("scroll", NO_POINT, "LEFT")),
    (None, gt("CLICK", [224, 518])),
    (None, gt("click", [224, 518, 300])),
    (None, gt("type", NO_POINT, "")),
]  # fmt: skip

ANSWER_NAMES = ["click", "Click", "CLICK", "long_press", "type", "select", "scroll", "press_back", "press_home",
                "enter", "complete", "impossible", "open_app", "wait", "fly", "no action", "", "click2",
                "clíck"]  # fmt: skip
POINTS = ["[224, 518]", "[300, 518]", "[363, 518]", "[364, 518]", "[308, 630]", "[224, 467]", "[225, 467]",
          "[268, 569]", "[269, 518]", "[-100, -100]", "[224.5, 518]", "[1]", "[]", "'[224, 518]'", "(224, 518)",
          "{0: 224, 1: 518}", "[True, False]", "[100 + 124, 518]", "[0, 0]", "[224,518]", "[224,\n518]",
          "[ 224, 518 ]", "[224, 518, 1, 2]", "None", "[2**3, 1]"]  # fmt: skip
TEXTS = ["no input text", "New York City", "new york", "york", "York City hotels", "down", "up", "UP", "left", "LEFT",
         "it's", "", "[hello] world", "hello", "Clock", "clock app", "Option A", "café", "中文", "A",
         "a b c d"]  # fmt: skip
THINKS = ["<think>t</think>", "<think>t</think>", "<think></think>", "<think>\nreason\n</think>\n",
          "<think>a {'action': 'type'}</think> ", "", "<think>t</think>\n\n", "<think>t<answer>[]</answer></think>",
          "<THINK>t</THINK>"]  # fmt: skip
ENDS = ["", "", "", "", "", "\n", "<|im_end|>", " ", "x", "</answer>"]
LAYOUTS = ["{{'action': {name}, 'point': {point}, 'input_text': {text}}}",
           "{{'action':{name},'point':{point},'input_text':{text}}}",
           "{{'point': {point}, 'input_text': {text}, 'action': {name}}}",
           "{{\n  'action': {name},\n  'point': {point},\n  'input_text': {text}\n}}",
           "{{'action': {name}, 'point': {point}}}",
           "{{'action': {name}, 'input_text': {text}}}"]  # fmt: skip


def quote(text: str, style: str) -> str:
    if style == "json":
        return json.dumps(text, ensure_ascii=False)
    return repr(text) if style == "python" else f"'{text}'"  # "raw": GUI-R1's prompt, quotes not escaped


def entry(rng: random.Random, truth: dict) -> str:
    """One answer entry, half the time written for ``truth`` (its name, its text, a point near its own)."""
    style = rng.choice(["python", "python", "raw", "json"])
    near = rng.random() < 0.5
    name = rng.choice([truth["action"], truth["action"].upper()] if near else ANSWER_NAMES)
    text = rng.choice([truth["input_text"], truth["input_text"].lower()] if near else TEXTS)
    point = rng.choice(POINTS)
    if near and len(truth["gt_bbox"]) in (2, 4) and truth["gt_bbox"][0] >= 0:
        x, y = truth["gt_bbox"][0], truth["gt_bbox"][1]
        point = f"[{round(x) + rng.choice([0, 1, 10, 60, 139, 140])}, {round(y) + rng.choice([0, 1, 99, 100])}]"
    return rng.choice(LAYOUTS).format(name=quote(name, style), point=point, text=quote(text, style))


def answer(rng: random.Random, truth: dict) -> str:
    entries = [entry(rng, truth) for _ in range(rng.choice([1, 1, 1, 1, 2, 3, 0]))]
    shape = rng.choice(["list", "list", "list", "list", "tuple", "bare", "spaced"])
    if shape == "tuple":
        return "(" + ", ".join(entries) + ",)"
    if shape == "bare" and entries:
        return entries[0]
    if shape == "spaced":
        return "\n[\n" + ",\n".join(entries) + "\n]\n"
    return "[" + ", ".join(entries) + "]"


def guir1_completion(think: str, body: str, end: str = "") -> str:
    return f"{think}<answer>{body}</answer>{end}"


ONE = "{'action': 'click', 'point': [224, 518], 'input_text': 'no input text'}"
# Hand-written completions: the kinds the issue names, malformed text, exceptions.
GUIR1_COMPLETIONS = [
    guir1_completion("<think>t</think>", f"[{ONE}]"),
    guir1_completion("<think>t</think>", json.dumps([{"action": "click", "point": [224, 518],
                                                      "input_text": "no input text"}])),
    guir1_completion("<think></think>", f"[{ONE}]"),
    guir1_completion("<think>t</think>", f"[{ONE}]", "<|im_end|>"),
    guir1_completion("<think>t</think>", f"[{ONE}]", "\n"),
    guir1_completion("<think>t</think>", "[{'action': 'click', 'point': [224, 518]}]"),
    guir1_completion("<think>t</think>", "[{'action': 'scroll', 'point': [-100, -100], 'input_text': 'UP'}]"),
    guir1_completion("<think>t</think>", "[{'action': 'scroll', 'point': [-100, -100], 'input_text': 'up'}]"),
    guir1_completion("<think>t</think>", "[{'action': 'type', 'point': [-100, -100], 'input_text': 'no input text'}]"),
    guir1_completion("<think>t</think>", "[{'action': 'type', 'point': [-100, -100], 'input_text': True}]"),
    guir1_completion("<think>t</think>", "[{'action': 'type', 'point': [1+1, 2], 'input_text': 'a' + 'b'}]"),
    guir1_completion("<think>t</think>", "[{'action': 'type', 'point': [1, 2], 'input_text': 'a' * 3}]"),
    guir1_completion("<think>t</think>", "[{'action': 'click', 'point': [1, 2], 'input_text': None}]"),
    guir1_completion("<think>t</think>", f"[{ONE}, {ONE}]"),
    guir1_completion("<think>t</think>", f"[{ONE}] # a comment"),
    guir1_completion("<think>t</think>", f"[{ONE}][0:1]"),
    guir1_completion("<think>t</think>", f"[{ONE}] if True else []"),
    guir1_completion("<think>t</think>", f"[{ONE}] + []"),
    guir1_completion("<think>t</think>", f"[*[{ONE}]]"),
    guir1_completion("<think>t</think>", f"[{{**{ONE}}}]"),
    guir1_completion("<think>t</think>", "[{'action': 'click', 'point': [1, 2], 'input_text': f'{1}'}]"),
    guir1_completion("<think>t</think>", "[{'action': 'click', 'point': [-1, 2], 'input_text': 'x'}]"),
    guir1_completion("<think>t</think>", "[{'action': 'click', 'point': [" + "9" * 4301 + ", 2], 'input_text': 'x'}]"),
    guir1_completion("<think>t</think>", "[{'action': 'click', 'point': [224, ٣], 'input_text': 'x'}]"),
    guir1_completion("<think>t</think>", "{'action': 'click', 'point': [٢٢٤, ٥١٨], 'input_text': 'x'}"),
    guir1_completion("<think>t</think>", "{'action': 'click', 'point': [２２４, ５１８]}"),
    guir1_completion("<think>t</think>", "[{'action': 'click', 'point': [224,\u00a0518], 'input_text': 'x'}]"),
    guir1_completion("<think>t</think>", "[{'action': 'type', 'point': [1, 2], 'input_text': 'café\u2028x'}]"),
    guir1_completion("<think>t</think>", "[{'action': 'click', 'point': [224, 518], 'input_text': 'x'}\n]"),
    guir1_completion("<think>t</think>", "{'action': 'click'} [224, 518]\n}"),
    guir1_completion("<think>t</think>", "{\n'point': [224, 518]}"),
    guir1_completion("<think>t</think>", "{[1, 2] [3, 4] x}"),
    guir1_completion("<think>t</think>", "{'action': 'type', 'input_text': 'it's fine'}"),
    guir1_completion("<think>t</think>", "'action': 'press_back'"),
    guir1_completion("<think>t</think>", "[]"),
    guir1_completion("<think>t</think>", ""),
    guir1_completion("<think>t</think>", "[" * 200 + "]" * 200),
    guir1_completion("<think>t</think>", "[" * 201 + "]" * 201),
    guir1_completion("<think>t</think>", "[1, 2"),
    "<think>t</think><answer>[" + ONE,
    "<answer>[" + ONE + "]</answer>",
    "<think>t</think> <answer>[" + ONE + "]</answer> <answer>[]</answer>",
    "<think>t<answer>[]</answer></think><answer>[" + ONE + "]</answer>",
    "<think>" + "</think><answer>" * 300 + "</answer>",
    "<answer>" * 300,
    "{" * 3000,
    "<think>t</think><answer>{" + "[1,2]" * 500 + "</answer>",
    "",
]  # fmt: skip
# The documented exceptions: answers eval would value by running code or by work r1_gui refuses
# (r1_gui.actions.python_literal). Each is (reason, completion); r1_gui scores its format 0.
GUIR1_EXCEPTIONS = [
    ("calls a function", guir1_completion("<think>t</think>", "[dict(action='click', point=[1, 2], input_text='x')]")),
    ("looks up a module", guir1_completion(
        "<think>t</think>", "[{'action': 'type', 'point': [1, 2], 'input_text': json.dumps('x')}]")),
    ("looks up an attribute", guir1_completion(
        "<think>t</think>", "[{'action': 'type', 'point': [1, 2], 'input_text': 'x'.upper()}]")),
    ("a comprehension", guir1_completion(
        "<think>t</think>", "[{'action': a, 'point': [1, 2], 'input_text': 'x'} for a in ['click']]")),
    ("'is' on literals", guir1_completion(
        "<think>t</think>", "[{'action': 'click', 'point': [1, 2], 'input_text': 'x'}] if 1 is 1 else 0")),
    ("%-formatting", guir1_completion(
        "<think>t</think>", "[{'action': 'click', 'point': [1, 2], 'input_text': '%s' % 'x'}]")),
    ("an f-string format spec", guir1_completion(
        "<think>t</think>", "[{'action': 'click', 'point': [1, 2], 'input_text': f'{1:>3}'}]")),
    ("repeats a list of dicts", guir1_completion("<think>t</think>", f"[{ONE}] * 2")),
    ("builds over a million items", guir1_completion(
        "<think>t</think>", "[{'action': 'click', 'point': [1, 2], 'input_text': 'x' * 2_000_000}]")),
]  # fmt: skip


def typed(action: str, text: str) -> str:
    return guir1_completion(
        "<think>t</think>", f"[{{'action': '{action}', 'point': [-100, -100], 'input_text': '{text}'}}]"
    )


# GUI-R1's text F1 (token sets, brackets removed, one-token containment, empty texts), against chosen truths.
TEXT_CASES = [
    (typed("type", "[hello] world"), 13), (typed("type", "[hello]"), 13), (typed("type", "[hello] [world]"), 13),
    (typed("type", "hello hello"), 13), (typed("type", "world"), 13),
    (typed("type", "hello there you"), 13), (typed("type", "Hello, World"), 13), (typed("type", "york"), 14),
    (typed("type", "newyorkcity"), 14), (typed("type", "new york"), 14), (typed("type", ""), 19),
    (typed("type", "x"), 19), (typed("scroll", "DOWN"), 4), (typed("scroll", "downward"), 4),
    (typed("scroll", "own"), 4),
    (typed("Scroll", "left"), 16), (typed("select", "option"), 15), (typed("select", "Option A B C"), 15),
]  # fmt: skip


def guir1_inputs(rng: random.Random, count: int) -> list[tuple[str, int, str | None]]:
    """(completion, index into GUIR1_TRUTHS, documented exception or None)."""
    cases = [(c, t, None) for c in GUIR1_COMPLETIONS for t in (0, 1, 3, 4, 6, 15)]
    cases += [(c, t, None) for c, t in TEXT_CASES]
    cases += [(c, t, reason) for reason, c in GUIR1_EXCEPTIONS for t in (0, 3)]
    for _ in range(count):
        truth = rng.randrange(len(GUIR1_TRUTHS))
        completion = guir1_completion(rng.choice(THINKS), answer(rng, GUIR1_TRUTHS[truth][1]), rng.choice(ENDS))
        cases.append((completion, truth, None))
    return cases


# -------------------------------------------------------------------------------------------------- running


def load_peers(folder: Path):
    sys.path.insert(0, str(folder))
    return (
        importlib.import_module("grpo_gui_rewards"),
        importlib.import_module("test_aitw_rows"),
        importlib.import_module("r1gui"),
    )


def outcome(function, *args):
    """The value, or {"raises": the exception's name} where the peer's function raises."""
    try:
        return function(*args)
    except Exception as error:
        return {"raises": type(error).__name__}


def first(values):
    return values if isinstance(values, dict) else values[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--peers", type=Path, required=True, help="folder holding the peers' functions (README.md)")
    parser.add_argument("--out", type=Path, default=HERE / "cases.jsonl")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--random", type=int, default=500, help="random cases per peer on top of the fixed ones")
    args = parser.parse_args()
    rewards, eval_rows, r1gui = load_peers(args.peers)
    rng = random.Random(args.seed)
    lines = []
    for output, solution in r1v_inputs(rng, args.random):
        conversation = [[{"role": "assistant", "content": output}]]
        row = outcome(eval_rows.row, output, solution)
        lines.append({
            "peer": "r1v",
            "completion": output,
            "solution": solution,
            "accuracy": first(outcome(rewards.accuracy_reward, conversation, [solution])),
            "format": first(outcome(rewards.format_reward, conversation, [solution])),
            "eval_type_para": row if isinstance(row, dict) else list(row),
        })  # fmt: skip
    for completion, truth, exception in guir1_inputs(rng, args.random):
        row, ground_truth = GUIR1_TRUTHS[truth]
        score = r1gui.r1gui_compute_score(completion, json.dumps(ground_truth))
        lines.append({
            "peer": "guir1",
            "completion": completion,
            "row": row,
            "ground_truth": ground_truth,
            "exception": exception,
            **score,
        })  # fmt: skip
    with args.out.open("w", encoding="utf-8") as out:
        for index, line in enumerate(lines):
            out.write(json.dumps({"id": index, **line}, ensure_ascii=False) + "\n")
    print(f"{len(lines)} cases -> {args.out}")


if __name__ == "__main__":
    main()
