"""--env browsergym/<task>: BrowserGym's MiniWoB++ in a real Chromium (Debian's, through playwright 1.44) keeping
r1_gui's contract. Scripted actions (the DOM expert's, sent as model text) solve two tasks; the tiny model's episode
evaluation writes per-task success with intervals; a bad task id and a page that never loads are one line."""

import asyncio
import importlib.util
import json
import os
import subprocess
import sys

import pytest
from helpers.browser import needs_browser

from r1_gui.actions import Action, format_action
from r1_gui.envs.browsergym.actions import browsergym_action
from r1_gui.envs.contract import check_env, make_env

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
needs_browsergym = pytest.mark.skipif(
    importlib.util.find_spec("browsergym") is None and not os.environ.get("CI"),
    reason="outside CI without BrowserGym (pip install -e '.[envs]')",
)

# (action, BrowserGym's action string on a 498 x 321 screenshot): the mapping, one case a row
MAPPING = [
    (Action("click", x=0.5, y=0.25), "mouse_click(249.0, 80.25)"),  # a point in screenshot pixels
    (Action("right_click", x=0.0, y=1.0), "mouse_click(0.0, 321.0, 'right')"),
    (Action("double_click", x=0.1, y=0.1), "mouse_dblclick(49.8, 32.1)"),
    (Action("type", text="it's"), 'keyboard_type("it\'s")'),  # quoted as Python quotes it
    (Action("press", keys=("enter", "tab")), "keyboard_press('Enter')\nkeyboard_press('Tab')"),  # one after another
    (Action("hotkey", keys=("ctrl", "a")), "keyboard_press('Control+a')"),  # together
    (Action("scroll", direction="down"), "scroll_at(249.0, 160.5, 0, 100)"),  # at the centre without a point
    (Action("swipe", x=0.0, y=0.0, x2=1.0, y2=1.0), "mouse_drag_and_drop(0.0, 0.0, 498.0, 321.0)"),
    (Action("wait", seconds=5.0), "noop(1000)"),  # a wait is at most a second
]


@pytest.mark.parametrize("action, expected", MAPPING, ids=[repr(a) for a, _ in MAPPING])
def test_actions_map_to_browsergym_coordinate_actions(action, expected):
    assert browsergym_action(action, (498, 321)) == (expected, None)


@pytest.mark.parametrize("action", [Action("home"), Action("open_app", text="x"), Action("press", keys=("nokey",))])
def test_actions_with_nothing_to_do_in_a_browser_say_why(action):
    command, why = browsergym_action(action, (498, 321))
    assert command is None and why


@needs_browser
@needs_browsergym
@pytest.mark.parametrize("task, steps", [("click-test", 1), ("enter-text", 3)])
def test_scripted_actions_solve_two_miniwob_tasks(task, steps):
    env = make_env(f"browsergym/miniwob.{task}")
    try:
        observation, info = env.reset(seed=5)
        height, width, _ = observation["screenshot"].shape
        assert (width, height) == info["screen_size"] == (498, 321) and info["instruction"]
        taken, terminated = 0, False
        while not terminated:
            text = format_action(info["expert_action"], "aguvis")  # the DOM expert's move as a model would write it
            observation, reward, terminated, truncated, info = env.step(text)
            taken += 1
            assert info["parsed"] and info["error"] is None and not truncated, info
        assert info["success"] and reward == 1.0 and taken == steps
        check_env(env, seed=6)  # and the adapter keeps the contract
    finally:
        env.close()
    # its playwright stopped with it: no event loop left marked running on this thread (asyncio.run failed after it)
    assert asyncio.run(asyncio.sleep(0, result="ran")) == "ran"


@needs_browser
@needs_browsergym
@pytest.mark.slow
def test_the_tiny_models_evaluation_writes_per_task_success_with_intervals(tiny_qwen2_vl, tmp_path):
    from r1_gui.evaluation.episodes.cli import main as evaluate

    metrics = evaluate(["--model_name_or_path", str(tiny_qwen2_vl), "--output_dir", str(tmp_path),
                        "--env", "browsergym/miniwob.click-test", "--env_episodes", "2", "--batch_size", "2",
                        "--max_turns", "2", "--max_new_tokens", "16", "--max_pixels", "12544"])  # fmt: skip
    written = json.loads((tmp_path / "metrics.json").read_text())
    row = written["per_task"]["click-test"]
    assert written["episodes"] == metrics["episodes"] == 2 and row["episodes"] == 2
    low, high = row["success_rate_ci95"]
    assert 0 <= low <= row["success_rate"] <= high <= 1 and high > low


def one_error_line(argv: list[str], **env: str) -> str:
    done = subprocess.run([sys.executable, *argv], cwd=REPO, capture_output=True, text=True, timeout=240,
                          env={**os.environ, **env})  # fmt: skip
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "), done.stderr[-3000:]
    return lines[0]


@needs_browser
@needs_browsergym
def test_a_bad_task_id_is_one_line(tiny_qwen2_vl, tmp_path):
    line = one_error_line(["eval/test_phone.py", "--model_name_or_path", str(tiny_qwen2_vl), "--output_dir",
                           str(tmp_path), "--env", "browsergym/miniwob.no-such-task"])  # fmt: skip
    assert "BrowserGym has no such miniwob task; valid: ascending-numbers" in line


@needs_browser
@needs_browsergym
def test_a_page_that_never_loads_is_one_line(tiny_qwen2_vl, tmp_path):
    line = one_error_line(["eval/test_phone.py", "--model_name_or_path", str(tiny_qwen2_vl), "--output_dir",
                           str(tmp_path), "--env", "browsergym/miniwob.click-test"],
                          MINIWOB_URL=(tmp_path / "nowhere").as_uri() + "/")  # fmt: skip
    assert "browsergym/miniwob.click-test: the page did not load" in line
