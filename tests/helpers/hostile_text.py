"""Hostile completions of any size, and the time each reward and metric takes to score one.

Shared by tests/test_peer_patterns.py (a megabyte of each scores in well under the bound) and
bench/hostile_text.py (the times at two sizes, and their ratio: linear time means 10x the text, about 10x the time).
Each shape targets a pattern that backtracks (or might: GUI-R1's action and input-text regexes stay ``re``, shown
linear here), or a reader that once scanned every line or parsed every candidate.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from r1_gui.actions import Action, styled_action
from r1_gui.episode_rewards import EPISODE_REWARDS
from r1_gui.evaluation.metrics import score_output
from r1_gui.prompts import PROMPT_STYLES
from r1_gui.rewards import REWARD_FUNCS

ENTRY = "{'action': 'click', 'point': [224, 518], 'input_text': 'x'},"


def _repeat(unit: str, size: int, head: str = "", tail: str = "") -> str:
    return head + unit * max(1, (size - len(head) - len(tail)) // len(unit)) + tail


# name -> text of about ``size`` characters
HOSTILE_SHAPES: dict[str, Callable[[int], str]] = {
    "parentheses": lambda size: _repeat("(", size),  # R1-V's (.+?)\((.+?)\): cubic in re
    "a(": lambda size: _repeat("a(", size),
    "closing": lambda size: _repeat(")", size),
    "call lines": lambda size: _repeat("pyautogui.click(x=0.5, y=0.5)\n", size),
    "one long call": lambda size: _repeat("1,", size, "assistantos\npyautogui.click(", ")"),
    "newlines": lambda size: _repeat("\n", size),
    "a)b lines": lambda size: _repeat("a)b\n", size),
    "assistantos": lambda size: _repeat("assistantos", size),
    "content markers": lambda size: _repeat("Thought:Action:", size, "content:"),  # R1-V's format fullmatch
    "open answers": lambda size: _repeat("<answer>", size),  # <answer>(.*?)</answer>: quadratic in re
    "answer lines": lambda size: _repeat("<answer>\n", size),
    "think ends": lambda size: _repeat("</think><answer>", size, "<think>", "</answer>"),  # GUI-R1's fullmatch
    "braces": lambda size: _repeat("{", size, "<answer>", "</answer>"),  # GUI-R1's point: quadratic in re
    "brace points": lambda size: _repeat("[1,2]", size, "<answer>{", "</answer>"),
    "JSON answer": lambda size: _repeat("1,", size, "<think></think><answer>[", "1]</answer>"),
    "tuples answer": lambda size: _repeat("(),", size, "<think></think><answer>[", "]</answer>"),
    "entries answer": lambda size: _repeat(ENTRY, size, "<think></think><answer>[", "]</answer>"),
    "tuples then a name": lambda size: _repeat("(),", size, "<think></think><answer>[", "x]</answer>"),
    "digits": lambda size: _repeat("9", size, "<answer>{'point': [", ", 1]}</answer>"),
    "action keys": lambda size: _repeat("'action': '", size, "<answer>", "</answer>"),  # GUI-R1's action regex
    "open input text": lambda size: _repeat("a", size, "<answer>'input_text': '", "</answer>"),  # its text regex
    "spaces after a key": lambda size: _repeat(" ", size, "<answer>'input_text':", "</answer>"),
    "tool calls": lambda size: _repeat("<tool_call>{}</tool_call>", size),
}
SOLUTION = "<answer>pyautogui.click(x=0.5, y=0.5)</answer>"
GROUND_TRUTH = Action("click", x=0.5, y=0.5)
SCREEN = (448, 1036)


def scorers() -> dict[str, Callable[[str], object]]:
    """Every single-step reward, the format readers of every prompt style (the episode rewards read turns with
    them) and the evaluation's per-sample scores, each as a function of one completion."""
    found: dict[str, Callable[[str], object]] = {}
    for name, reward in REWARD_FUNCS.items():
        if name not in EPISODE_REWARDS:
            found[name] = lambda text, reward=reward: reward(
                completions=[text], solution=[SOLUTION], bbox=[None], screen_size=[SCREEN]
            )
    for style in PROMPT_STYLES:
        found[f"styled_action[{style}]"] = lambda text, style=style: styled_action(text, style)
    found["score_output"] = lambda text: score_output(text, GROUND_TRUTH, solution=SOLUTION)
    return found


def cpu_seconds(scorer: Callable[[str], object], text: str) -> float:
    """CPU seconds of one call (CPU, not wall clock: the machines these run on are shared)."""
    start = time.process_time()
    scorer(text)
    return time.process_time() - start
