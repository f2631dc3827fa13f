"""The rewards and the metric named after a peer against the peer's own functions.

tests/data/peer_rewards/cases.jsonl holds completions, ground truths and the values R1-V-GUI-Agent's and GUI-R1's
own functions returned on them (its README says how they were produced). Every case must come out the same in
r1_gui, except the documented ones: answers GUI-R1's ``eval`` would value by running code (marked "exception"),
which r1_gui scores as ``eval`` raising, and R1-V eval rows where the peer's script crashes.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import torch

from r1_gui.actions import coordinate_scale, extract_action, read_bbox
from r1_gui.actions.completion import guir1_answer
from r1_gui.actions.guir1 import guir1_ground_truth
from r1_gui.actions.python_literal import NotEvaluated, python_value
from r1_gui.evaluation.metrics import paper_param_match
from r1_gui.rewards import REWARD_FUNCS, expand_reward_presets
from r1_gui.scoring.guir1 import guir1_accuracy_score, guir1_format_score

DATA = Path(__file__).resolve().parent / "data" / "peer_rewards" / "cases.jsonl"
CASES = [json.loads(line) for line in DATA.open(encoding="utf-8")]
R1V = [case for case in CASES if case["peer"] == "r1v"]
GUIR1 = [case for case in CASES if case["peer"] == "guir1"]
GUIR1_ROWS = [case for case in GUIR1 if case["row"] is not None]


def conversational(text: str) -> list[dict]:
    return [{"role": "assistant", "content": text}]


def reward(name: str, completion, **row) -> float | None:
    (value,) = REWARD_FUNCS[name](completions=[completion], **{key: [value] for key, value in row.items()})
    return value


def differences(cases: list[dict], expected, actual) -> list[str]:
    """A readable line per case where ``actual(case)`` is not ``expected(case)``."""
    found = []
    for case in cases:
        want, got = expected(case), actual(case)
        if want != got:
            found.append(f"case {case['id']}: expected {want!r}, got {got!r}; completion {case['completion'][:120]!r}")
    return found


def test_the_table_holds_hundreds_of_cases_of_every_outcome():
    # a table of one outcome could not catch a reward that returns a constant
    assert len(R1V) >= 500 and len(GUIR1) >= 500
    assert {0.0, 0.5, 1.0} <= set(Counter(case["accuracy"] for case in R1V))
    assert Counter(case["format"] for case in R1V)[0.5] >= 20
    assert Counter(case["accuracy"] for case in GUIR1)[1.0] >= 30
    assert Counter(case["format"] for case in GUIR1)[1.0] >= 100
    # the kinds the issue names are in it: JSON answers, empty think, an end token after </answer>, exceptions
    texts = [case["completion"] for case in GUIR1]
    assert any('"action": "click"' in text for text in texts)
    assert any(text.startswith("<think></think>") for text in texts)
    assert any(text.endswith("<|im_end|>") for text in texts)
    assert 5 <= sum(case["exception"] is not None for case in GUIR1) <= 30


# ------------------------------------------------------------------------------------------ R1-V-GUI-Agent


@pytest.mark.parametrize("name", ["accuracy", "format"])
def test_r1v_rewards_equal_the_peer(name):
    # conversational completions, as trl passes them and the peer reads them (completion[0]["content"]) ...
    found = differences(
        R1V,
        lambda case: case[name],
        lambda case: reward(f"r1v_{name}", conversational(case["completion"]), solution=case["solution"]),
    )
    # ... and plain strings, which the peer cannot take (it indexes them), read as the content
    found += differences(
        R1V,
        lambda case: case[name],
        lambda case: reward(f"r1v_{name}", case["completion"], solution=case["solution"]),
    )
    assert not found, "\n".join(found[:10])


def test_paper_param_match_equals_the_peer_eval():
    # "para" of eval/test_aitw.py, on every row its script can read
    readable = [case for case in R1V if isinstance(case["eval_type_para"], list)]
    found = differences(
        readable,
        lambda case: bool(case["eval_type_para"][1]),
        lambda case: paper_param_match(case["completion"], case["solution"]),
    )
    assert not found, "\n".join(found[:10])
    # a solution without one-line <answer> tags crashes the peer's script; r1_gui reads it whole instead
    crashing = [case for case in R1V if not isinstance(case["eval_type_para"], list)]
    assert crashing and all(case["eval_type_para"] == {"raises": "AttributeError"} for case in crashing)
    assert all(isinstance(paper_param_match(case["completion"], case["solution"]), bool) for case in crashing)


# ---------------------------------------------------------------------------------------------------- GUI-R1


def test_guir1_accuracy_equals_the_peer():
    found = differences(
        GUIR1,
        lambda case: case["accuracy"],
        lambda case: guir1_accuracy_score(case["completion"], case["ground_truth"]),
    )
    assert not found, "\n".join(found[:10])


def expected_format(case: dict) -> float:
    """The peer's format value, or 0 for a documented exception (r1_gui scores it as eval raising)."""
    return 0.0 if case["exception"] else case["format"]


def test_guir1_format_equals_the_peer_but_for_the_documented_exceptions():
    found = differences(GUIR1, expected_format, lambda case: guir1_format_score(case["completion"]))
    assert not found, "\n".join(found[:10])
    for case in GUIR1:
        if case["exception"]:
            # each exception is one r1_gui declines to value, not a value it gets wrong
            with pytest.raises(NotEvaluated):
                python_value(guir1_answer(case["completion"]))


def row_ground_truth(row: dict) -> dict:
    action = extract_action(row["solution"], coordinates="normalized")
    box = None if row["bbox"] is None else read_bbox(row["bbox"])
    return guir1_ground_truth(action, coordinate_scale("pixels", row["screen_size"]), box)


def test_rows_map_to_the_ground_truth_guir1_builds():
    # the JSON GUI-R1's dataset.py would build for the same step: name, gt_bbox times the screen size, text
    found = differences(GUIR1_ROWS, lambda case: case["ground_truth"], lambda case: row_ground_truth(case["row"]))
    assert not found, "\n".join(found[:10])


@pytest.mark.parametrize("shape", [str, conversational], ids=["string", "conversational"])
@pytest.mark.parametrize("name", ["accuracy", "format"])
def test_guir1_rewards_on_rows_equal_the_peer(name, shape):
    expected = (lambda case: case["accuracy"]) if name == "accuracy" else expected_format
    found = differences(
        GUIR1_ROWS,
        expected,
        lambda case: reward(
            f"guir1_{name}",
            shape(case["completion"]),
            solution=case["row"]["solution"],
            bbox=case["row"]["bbox"],
            screen_size=case["row"]["screen_size"],
        ),
    )
    assert not found, "\n".join(found[:10])


def trl_weighted_sum(values: list[float], weights: list[float]) -> torch.Tensor:
    """What trl 1.16 makes of the rewards: float32 values times float32 weights, summed (grpo_trainer.py)."""
    return (torch.tensor([values], dtype=torch.float32) * torch.tensor(weights, dtype=torch.float32)).nansum(dim=1)[0]


def test_guir1_preset_equals_the_peer_overall_in_float32():
    # verl stores GUI-R1's overall (0.8 accuracy + 0.2 format) in a float32 tensor; trl sums in float32
    names, weights = expand_reward_presets(["guir1"])
    found = []
    for case in GUIR1_ROWS:
        row = {
            "solution": case["row"]["solution"],
            "bbox": case["row"]["bbox"],
            "screen_size": case["row"]["screen_size"],
        }
        values = [reward(name, case["completion"], **row) for name in names]
        overall = 0.8 * case["accuracy"] + 0.2 * expected_format(case)
        if trl_weighted_sum(values, weights) != torch.tensor(overall, dtype=torch.float32):
            found.append(f"case {case['id']}: {values} -> {trl_weighted_sum(values, weights)}, peer {overall}")
        if not case["exception"] and overall != case["overall"]:
            found.append(f"case {case['id']}: the table's overall {case['overall']} is not 0.8 acc + 0.2 format")
    assert not found, "\n".join(found[:10])


# ------------------------------------------------------- where r1_gui's own rewards depart from the peers' (guide)

CLICK = "<answer>pyautogui.click(x=0.5, y=0.5)</answer>"
SCREEN = [448, 1036]  # the click's point (0.5, 0.5) is pixel (224, 518)
BOX = [0.5, 0.45, 0.6, 0.55]  # pixels x 224-268.8, y 466.2-569.8


def guir1_answer_text(action: str, point: str = "[224, 518]", text: str = "no input text") -> str:
    return f"<think>t</think><answer>[{{'action': '{action}', 'point': {point}, 'input_text': '{text}'}}]</answer>"


def write(text: str) -> str:
    return f"pyautogui.write(message='{text}')"


def typed(text: str) -> str:
    """The same typing as a GUI-R1 answer (r1_gui's text_f1 reads it too)."""
    return guir1_answer_text("type", "[-100, -100]", text)


DEPARTURES = [
    # (r1_gui reward, its value, peer reward, its value, completion, solution, keywords): the table of
    # docs/guide/peers.md, row by row
    # action identity: the canonical type, not the function's spelling
    ("accuracy", 1.0, "r1v_accuracy", 0.0, "terminate(status='success')",
     "<answer>mobile.terminate(status='success')</answer>", {}),
    ("accuracy", 1.0, "r1v_accuracy", 0.0, "pyautogui.click (x=0.5, y=0.5)", CLICK, {}),
    # argument values, not text
    ("accuracy", 1.0, "r1v_accuracy", 0.5, "pyautogui.click(x=0.50, y=0.5)", CLICK, {}),
    ("accuracy", 1.0, "r1v_accuracy", 0.5, "pyautogui.press(keys='enter')",
     "<answer>pyautogui.press(keys=['enter'])</answer>", {}),
    # argument-less calls
    ("accuracy", 1.0, "r1v_accuracy", 0.0, "mobile.back()", "<answer>mobile.back()</answer>", {}),
    # which call is read: the last action, not the first os turn
    ("accuracy", 1.0, "r1v_accuracy", 0.5,
     "assistantos\npyautogui.click(x=0.1, y=0.1)\nassistantos\npyautogui.click(x=0.5, y=0.5)", CLICK, {}),
    # the Aguvis format against R1-V's content: pattern
    ("format", 1.0, "r1v_format", 0.0, "Thought: t\nAction: tap\nassistantos\npyautogui.click(x=0.5, y=0.5)", CLICK,
     {}),
    ("format", 0.0, "r1v_format", 0.5, "content: Thought: t\nAction: tap\nassistantos\n", CLICK, {}),
    # text F1: counts, brackets, one token inside another, two empty texts, a score against a bar
    ("text_f1", 0.8, "guir1_accuracy", 1.0, typed("new new york"), f"<answer>{write('new york')}</answer>", {}),
    ("text_f1", 0.5, "guir1_accuracy", 1.0, typed("[hello] world"), f"<answer>{write('hello world')}</answer>", {}),
    ("text_f1", 0.0, "guir1_accuracy", 1.0, typed("york"), f"<answer>{write('NewYork')}</answer>", {}),
    ("text_f1", 1.0, "guir1_accuracy", 0.0, typed(""), f"<answer>{write(' ')}</answer>", {}),
    ("text_f1", 2 / 3, "guir1_accuracy", 1.0, typed("York City hotels"), f"<answer>{write('new york city')}</answer>",
     {}),
    # text F1 applies to open_app in r1_gui; GUI-R1 scores an open_app of any app 1
    ("text_f1", 0.0, "guir1_accuracy", 1.0, guir1_answer_text("open_app", "[-100, -100]", "Maps"),
     "<answer>mobile.open_app(app_name='Clock')</answer>", {}),
    # click distance: 140 px down is 0.135 of the screen, within AITW's 0.14; GUI-R1's 140 px is strict
    ("step_success", 1.0, "guir1_accuracy", 0.0, guir1_answer_text("click", "[224, 658]"), CLICK, {}),
    ("click_distance", (0.3 - 140 / 1036) / (0.3 - 0.04), "guir1_accuracy", 0.0,
     guir1_answer_text("click", "[224, 658]"), CLICK, {}),  # linear from 1 at 0.04 to 0 at 0.3
    # a click on the box's left edge
    ("step_success", 1.0, "guir1_accuracy", 0.0, guir1_answer_text("click", "[224, 467]"), CLICK, {"bbox": BOX}),
    # the GUI-R1-style format: empty think, a missing input_text, a newline or end token after </answer>
    ("format", 0.0, "guir1_format", 1.0, guir1_answer_text("click").replace("<think>t</think>", "<think></think>"),
     CLICK, {}),
    ("format", 1.0, "guir1_format", 0.0, "<think>t</think><answer>[{'action': 'click', 'point': [224, 518]}]</answer>",
     CLICK, {}),
    ("format", 1.0, "guir1_format", 0.0, guir1_answer_text("click") + "\n", CLICK, {}),
    ("format", 1.0, "guir1_format", 0.0, guir1_answer_text("click") + "<|im_end|>", CLICK, {}),
    # ... (other text after </answer> fails both)
    ("format", 0.0, "guir1_format", 0.0, guir1_answer_text("click") + " done", CLICK, {}),
    # ... non-integer points, an upper-case scroll direction
    ("format", 1.0, "guir1_format", 0.0, guir1_answer_text("click", "[224.5, 518]"), CLICK, {}),
    ("format", 1.0, "guir1_format", 0.0, guir1_answer_text("scroll", "[-100, -100]", "UP"), CLICK, {}),
    # ... several actions, an empty list, an unknown name
    ("format", 0.0, "guir1_format", 1.0, guir1_answer_text("click").replace("}]", "}, {'action': 'press_back', "
     "'point': [-100, -100], 'input_text': 'no input text'}]"), CLICK, {}),
    ("format", 0.0, "guir1_format", 1.0, "<think>t</think><answer>[]</answer>", CLICK, {}),
    ("format", 0.0, "guir1_format", 1.0, guir1_answer_text("fly"), CLICK, {}),
    # ... a bare dict, a JSON answer holding true, a point off the screen
    ("format", 1.0, "guir1_format", 0.0,
     "<think>t</think><answer>{'action': 'click', 'point': [224, 518], 'input_text': 'no input text'}</answer>",
     CLICK, {}),
    ("format", 1.0, "guir1_format", 0.0, '<think>t</think><answer>[{"action": "click", "point": [224, 518], '
     '"input_text": "no input text", "x": true}]</answer>', CLICK, {}),
    ("format", 0.0, "guir1_format", 1.0, guir1_answer_text("click", "[2000, 518]"), CLICK, {}),
    # the GUI-R1-style accuracy: a JSON answer has no action to GUI-R1
    ("accuracy", 1.0, "guir1_accuracy", 0.0, '<think>t</think><answer>[{"action": "click", "point": [224, 518], '
     '"input_text": "no input text"}]</answer>', CLICK, {}),
]  # fmt: skip


@pytest.mark.parametrize("ours, our_value, peer, peer_value, completion, solution, keywords", DEPARTURES)
def test_the_departures_the_guide_lists(ours, our_value, peer, peer_value, completion, solution, keywords):
    settings = {"screen_size": SCREEN, "bbox": keywords.get("bbox")}
    style = {"prompt_style": "think_answer", "coordinates": "pixels"} if completion.startswith("<think>") else {}
    # r1_gui's own reward (reading the completion in its style and coordinates), then the peer's, on the same row
    rows = {name: [value] for name, value in settings.items()}
    (value,) = REWARD_FUNCS[ours](completions=[completion], solution=[solution], **rows, **style)
    assert value == pytest.approx(our_value)
    assert reward(peer, completion, solution=solution, **settings) == pytest.approx(peer_value)
