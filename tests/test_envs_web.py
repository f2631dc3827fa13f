"""r1_gui/Web-v0 in a real headless Chromium: the contract, the expert on every named task, same seed same page,
wrong answers, bad input, a browser killed mid-episode, and no process left behind (walking /proc).

One browser serves the whole module (a module-scoped environment); the tests that need another build their own and
close it. In CI (env var CI set) a missing Chromium fails these tests: setup.sh installs it. Outside CI they are
skipped, saying why.
"""

import logging
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from helpers.browser import needs_browser

from r1_gui.actions import Action, format_action
from r1_gui.envs.contract import INFO_KEYS, check_env, declared_tasks, make_env
from r1_gui.envs.runtime.processes import process_table
from r1_gui.envs.web.browser import BrowserError, remove_stale_profiles
from r1_gui.envs.web.env import MAX_TYPED_CHARS, selenium_key
from r1_gui.envs.web.expert import EXPERT_TASKS, Page, click_uncovered, fill, find, read_page, target_box
from r1_gui.scoring import click_hit

# The tasks issue 31 names; the expert must solve each (docs/records/web_tasks.md lists its rate over 100 seeds).
NAMED_TASKS = (
    "click-test",
    "click-test-2",
    "click-button",
    "click-button-sequence",
    "click-link",
    "click-dialog",
    "click-dialog-2",
    "click-checkboxes",
    "click-tab",
    "click-option",
    "focus-text",
    "focus-text-2",
    "enter-text",
    "enter-password",
    "login-user",
)


@pytest.fixture(scope="module")
def web():
    env = make_env("r1_gui/Web-v0")
    yield env
    env.close()


def alive(pids) -> list[int]:
    table = process_table()
    return sorted(pid for pid in pids if pid in table)


def gone_soon(pids, seconds: float = 5.0) -> list[int]:
    """The pids still alive after waiting up to `seconds` for them to end."""
    deadline = time.monotonic() + seconds
    while (left := alive(pids)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def play_expert(env, task: str, seed: int) -> dict:
    _, info = env.reset(seed=seed, options={"task": task})
    while True:
        assert info["expert_action"] is not None, f"{task} seed {seed}: no expert action at step {info['step']}"
        _, _, terminated, truncated, info = env.step(info["expert_action"])
        assert info["error"] is None, f"{task} seed {seed}: {info['error']}"
        if terminated or truncated:
            return info


# ----------------------------------------------------------------------------------- no browser needed


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"task": "click-nothing"}, "unknown MiniWoB task"),  # a task the wheel does not ship
        ({"tasks": ["click-test", "nope"]}, r"unknown MiniWoB task\(s\) \['nope'\]"),  # one bad name in a list
        ({"task": "click-test", "tasks": ["click-test"]}, "not both"),  # both ways of choosing at once
        ({"scale": 0}, "scale must be"),  # no pixels at all
        ({"scale": float("nan")}, "scale must be"),  # NaN
        ({"scale": 100}, "scale must be"),  # a 16000 x 21000 screenshot
        ({"max_steps": 0}, "max_steps must be"),  # an episode without a step
        ({"page_timeout_s": -1}, "page_timeout_s must be"),  # a timer that already ran out
        ({"coordinates": "grid100"}, "coordinates must be None or one of"),  # a coordinate system r1_gui lacks
    ],
)
def test_wrong_settings_are_refused_before_any_browser(kwargs, message):
    with pytest.raises(ValueError, match=message):
        make_env("r1_gui/Web-v0", kwargs)


@pytest.mark.parametrize("slots, starts, most_at_once", [(1, 4, 1), (2, 4, 2), (3, 2, 2)])
def test_chromium_starts_take_at_most_one_launch_slot_each(slots, starts, most_at_once, tmp_path):
    """`launch_slot`: however many starts come at once, no more than ``slots`` hold a slot together, and each gets
    one in turn (none goes ahead without)."""
    from r1_gui.envs.web.browser import launch_slot

    holding, most, lock, got = [0], [0], threading.Lock(), []

    def start():
        with launch_slot(slots, wait_s=30, folder=str(tmp_path)) as held:
            with lock:
                holding[0] += 1
                most[0] = max(most[0], holding[0])
            time.sleep(0.2)
            with lock:
                holding[0] -= 1
            got.append(held)

    threads = [threading.Thread(target=start) for _ in range(starts)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert most[0] == most_at_once and got == [True] * starts


def test_a_launch_slot_whose_holder_died_is_free_and_one_never_freed_is_waited_for_only_so_long(tmp_path, caplog):
    from r1_gui.envs.web.browser import LAUNCH_LOCK_PREFIX, launch_slot

    hold = (
        "import fcntl, sys, time; f = open(sys.argv[1], 'a'); fcntl.flock(f, fcntl.LOCK_EX); print('held', flush=True); "
        "time.sleep(60)"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", hold, str(tmp_path / f"{LAUNCH_LOCK_PREFIX}0.lock")], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        start = time.monotonic()
        with caplog.at_level(logging.WARNING), launch_slot(1, wait_s=0.5, folder=str(tmp_path)) as held:
            assert not held and 0.5 <= time.monotonic() - start < 5  # the slot taken: waited 0.5 s, then went ahead
        assert "no Chromium launch slot of 1 came free in 0.5 s" in caplog.text
    finally:
        holder.kill()
        holder.wait()
    start = time.monotonic()
    with launch_slot(1, wait_s=30, folder=str(tmp_path)) as held:
        assert held and time.monotonic() - start < 1  # its holder killed: the kernel freed the lock
    assert sorted(os.listdir(tmp_path)) == [f"{LAUNCH_LOCK_PREFIX}0.lock"]


@needs_browser
def test_a_browser_that_does_not_start_is_one_line(monkeypatch):
    """Selenium's errors carry the driver's 20-frame native stack: the BrowserError (logged at every replacement)
    keeps the exception's type and its first line, and nothing of the browser is left running."""
    from selenium import webdriver
    from selenium.common.exceptions import SessionNotCreatedException

    from r1_gui.envs.web.browser import Browser

    stack = "\n".join(f"#{i} 0x55fd7495caae <unknown>" for i in range(23))

    def refuse(**_):
        raise SessionNotCreatedException("timeout: Timed out receiving message from renderer: 10.000", stacktrace=stack)

    monkeypatch.setattr(webdriver, "Chrome", refuse)
    browser = Browser()
    with pytest.raises(BrowserError) as raised:
        browser.start()
    message = str(raised.value)
    assert message.startswith("Chromium did not start: SessionNotCreatedException: timeout: Timed out")
    assert "\n" not in message and "0x55fd" not in message
    assert not browser.pids()


@pytest.mark.parametrize(
    "name, expected",
    [
        ("enter", "\ue007"),  # pyautogui's name for Enter: WebDriver's Enter key
        ("Enter", "\ue007"),  # key names are read case-insensitively
        ("ctrl", "\ue009"),  # a modifier for hotkeys
        ("pagedown", "\ue00f"),  # a long name
        ("a", "a"),  # a single character is typed as is
        ("A", "A"),  # ... upper case too
        ("hyperdrive", None),  # an unknown name: the step reports it
    ],
)
def test_selenium_key(name, expected):
    assert selenium_key(name) == expected


def field(value: str, focused: bool) -> SimpleNamespace:
    return SimpleNamespace(value=value, focused=focused, left=10, top=60, width=100, height=20)


@pytest.mark.parametrize(
    "value, focused, selection, expected",
    [
        ("Kasie", True, (5, 5), None),  # already holds the text: nothing to do
        ("", False, None, Action("click", x=60 / 160, y=70 / 210)),  # not focused: click its centre
        ("", True, (0, 0), Action("type", text="Kasie")),  # empty and focused: type it all
        ("Ka", True, (2, 2), Action("type", text="sie")),  # a prefix, caret at the end: type the rest
        ("Ka", True, (1, 1), Action("hotkey", keys=("ctrl", "a"))),  # a prefix but the caret inside: select all
        ("Kx", True, (2, 2), Action("hotkey", keys=("ctrl", "a"))),  # a wrong text: select all first ...
        ("Kx", True, (0, 2), Action("type", text="Kasie")),  # ... then type over the selection
    ],
)
def test_fill_makes_a_field_hold_the_text(value, focused, selection, expected):
    page = Page("enter-text", {"target": "Kasie"}, [], selection=selection)
    move = fill(page, field(value, focused), "Kasie")
    assert (move and move.action) == expected


def box(left, top, width, height) -> SimpleNamespace:
    return SimpleNamespace(left=left, top=top, width=width, height=height)


@pytest.mark.parametrize(
    "covers, expected",
    [
        ([], (60, 100)),  # nothing over it: the centre
        ([box(100, 0, 40, 40)], (60, 100)),  # a cover elsewhere: still the centre
        ([box(50, 85, 40, 40)], (45, 100)),  # the centre and all but its left strip hidden: the free point nearest it
        ([box(0, 0, 160, 210)], (60, 100)),  # all of it hidden: the centre all the same
    ],
)
def test_click_uncovered_avoids_what_is_painted_over_the_target(covers, expected):
    page = Page("click-test-2", {"target": "ONE"}, [])
    target = box(40, 80, 40, 40)
    move = click_uncovered(page, target, covers)
    assert (move.action.x * 160, move.action.y * 210) == pytest.approx(expected) and move.target is target


@pytest.mark.parametrize(
    "element, expected",
    [
        # inside the task area: its box over 160 x 210, half a pixel up and left (the browser rounds a click's point)
        (box(40, 84, 40, 21), (39.5 / 160, 83.5 / 210, 79.5 / 160, 104.5 / 210)),
        (box(-20, 200, 60, 30), (0.0, 199.5 / 210, 39.5 / 160, 1.0)),  # over the edges: clipped to the task area
        (box(170, 10, 20, 20), None),  # right of the task area: nothing of it there
        (box(40, 80, 0, 20), None),  # no width: no area to hit
        (None, None),  # an action that aims at no element (typing, a hotkey)
    ],
)
def test_target_box_is_the_element_normalized_to_the_task_area(element, expected):
    found = target_box(Page("click-test", {}, []), element)
    assert found == (expected if expected is None else pytest.approx(expected))


# ---------------------------------------------------------------------------------------- in a browser


@needs_browser
def test_web_env_keeps_the_contract(web):
    info = check_env(web)
    assert set(INFO_KEYS) <= set(info) and info["screen_size"] == (160, 210)
    assert isinstance(info["expert_action"], Action) and info["raw_reward"] == 0.0
    assert declared_tasks(web) == EXPERT_TASKS and set(NAMED_TASKS) <= set(EXPERT_TASKS)
    assert web.unwrapped.has_expert


@needs_browser
@pytest.mark.parametrize("task", EXPERT_TASKS)
def test_the_expert_succeeds(web, task):
    for seed in range(3):
        info = play_expert(web, task, seed)
        assert info["success"] and info["raw_reward"] > 0, f"{task} seed {seed}: {info}"


@needs_browser
@pytest.mark.parametrize("task", ["click-test-2", "click-button-sequence"])
def test_the_expert_clicks_a_button_half_hidden_by_another(web, task):
    for seed in (6, 13):  # seeds whose button ONE has its centre under button TWO (found with click-test-2)
        web.reset(seed=seed, options={"task": task})
        page = read_page(web.unwrapped.browser, task)
        one, two = find(page, "button", text="ONE"), find(page, "button", text="TWO")
        centre = (one.left + one.width / 2, one.top + one.height / 2)
        assert two.left <= centre[0] <= two.left + two.width and two.top <= centre[1] <= two.top + two.height
        assert play_expert(web, task, seed)["success"], f"{task} seed {seed}"


@needs_browser
def test_click_collapsible_takes_two_actions_the_section_first(web):
    for seed in (0, 1):
        _, info = web.reset(seed=seed, options={"task": "click-collapsible"})
        header = find(read_page(web.unwrapped.browser, "click-collapsible"), "h3")
        assert "ui-accordion-header-collapsed" in header.classes.split()
        x1, y1, x2, y2 = info["target_box"]  # the expert's first click is on the section's header
        assert x1 <= header.left / 160 < x2 and y1 <= header.top / 210 < y2
        info = play_expert(web, "click-collapsible", seed)
        assert info["success"] and info["step"] == 2
    # Submit while the section is still collapsed: the page ends the episode as a failure
    _, info = web.reset(seed=0, options={"task": "click-collapsible"})
    submit = find(read_page(web.unwrapped.browser, "click-collapsible"), "button", id="subbtn")
    x, y = (submit.left + submit.width / 2) / 160, (submit.top + submit.height / 2) / 210
    _, _, terminated, _, info = web.step(Action("click", x=x, y=y))
    assert terminated and not info["success"]


@needs_browser
def test_circle_center_takes_a_click_inside_the_circle_then_submit(web):
    _, info = web.reset(seed=0, options={"task": "circle-center"})
    ring = find(read_page(web.unwrapped.browser, "circle-center"), "circle")
    centre = ((ring.left + ring.width / 2) / 160, (ring.top + ring.height / 2) / 210)
    assert (info["expert_action"].x, info["expert_action"].y) == pytest.approx(centre)
    # a click outside the circle: the expert clicks the centre again, not Submit
    _, _, terminated, _, info = web.step(Action("click", x=0.02, y=0.3))
    assert not terminated and (info["expert_action"].x, info["expert_action"].y) == pytest.approx(centre)
    info = play_expert(web, "circle-center", 0)
    assert info["success"] and info["step"] == 2
    # Submit before any click in the circle: the page ends the episode as a failure
    _, info = web.reset(seed=1, options={"task": "circle-center"})
    submit = find(read_page(web.unwrapped.browser, "circle-center"), "button", id="subbtn")
    _, _, terminated, _, info = web.step(Action("click", x=(submit.left + 40) / 160, y=(submit.top + 10) / 210))
    assert terminated and not info["success"]


@needs_browser
def test_the_target_box_holds_the_experts_click_and_is_none_for_typing(web):
    for task in ("click-test", "click-tab", "click-dialog", "click-test-2"):
        _, info = web.reset(seed=4, options={"task": task})
        x1, y1, x2, y2 = info["target_box"]
        assert x1 <= info["expert_action"].x <= x2 and y1 <= info["expert_action"].y <= y2, task
        assert 0 < (x2 - x1) * (y2 - y1) < 0.5, task  # an element's box, not the whole task area
    _, info = web.reset(seed=4, options={"task": "enter-text"})
    _, _, _, _, info = web.step(info["expert_action"])  # the field focused: the expert types next
    assert info["expert_action"].type == "type" and info["target_box"] is None


@needs_browser
def test_a_click_ends_click_test_exactly_when_it_is_in_the_target_box(web):
    _, info = web.reset(seed=7, options={"task": "click-test"})
    x1, y1, x2, y2 = info["target_box"]
    middle_x, middle_y, nudge = (x1 + x2) / 2, (y1 + y2) / 2, 0.2 / 210  # a fifth of a CSS pixel
    outside = [(x1 - nudge, middle_y), (x2 + nudge, middle_y), (middle_x, y1 - nudge), (middle_x, y2 + nudge)]
    for x, y in outside:  # just off each edge: the page ignores the click, the episode goes on
        _, _, terminated, _, info = web.step(Action("click", x=x, y=y))
        assert not terminated and click_hit(Action("click", x=x, y=y), info["target_box"]) is False, (x, y)
    _, _, terminated, _, info = web.step(Action("click", x=x1 + nudge, y=y2 - nudge))  # just inside a corner
    assert terminated and info["success"] and click_hit(Action("click", x=x1 + nudge, y=y2 - nudge), (x1, y1, x2, y2))


@needs_browser
def test_the_same_seed_gives_the_same_page_whatever_came_before(web):
    for task in ("click-test-2", "click-checkboxes", "enter-text", "click-dialog", "click-tab"):
        first, info = web.reset(seed=11, options={"task": task})
        web.step(info["expert_action"])  # leave the page changed: clicked, focused or typed into
        web.step(Action("type", text="zz"))
        web.reset(seed=12, options={"task": "login-user"})  # another task's page in between
        web.step(Action("click", x=0.5, y=0.4))
        again, _ = web.reset(seed=11, options={"task": task})
        assert np.array_equal(first["screenshot"], again["screenshot"]), task
        assert first["instruction"] == again["instruction"]
        other, _ = web.reset(seed=13, options={"task": task})
        assert not np.array_equal(first["screenshot"], other["screenshot"]), task


@needs_browser
def test_the_same_seed_gives_the_same_pixels_on_every_load_of_a_busy_machine():
    # Eight browsers reloading dialog pages at once on 2 cores. Before --disable-partial-raster and PAINTED_SCRIPT,
    # about 1 in 100 such loads was captured with the dialog's edges a gray level off or without its "x" icon (this
    # test failed 3 of 3 runs; after, it passed 3 of 3), so two runs of one seed trained different SFT warm starts.
    from r1_gui.envs.runtime.pool import EnvPool

    slots, rounds, seeds = 8, 5, (1, 5, 29)  # seeds whose dialogs were drawn two ways
    screenshots: dict[int, set[bytes]] = {seed: set() for seed in seeds}
    with EnvPool("r1_gui/Web-v0", {"max_steps": 1}, step_timeout=60) as pool:
        for _ in range(rounds):
            for seed in seeds:
                outcomes = pool.reset(list(range(slots)), [seed] * slots, ["click-dialog"] * slots)
                screenshots[seed] |= {outcome.result[0]["screenshot"].tobytes() for outcome in outcomes}
                pool.reset(list(range(slots)), [7] * slots, ["click-test"] * slots)  # the next dialog loads anew
    assert {seed: len(shots) for seed, shots in screenshots.items()} == dict.fromkeys(seeds, 1)


@needs_browser
def test_tasks_are_drawn_per_episode_from_the_seed(web):
    drawn = [web.reset(seed=seed)[1]["task"] for seed in range(8)]
    assert len(set(drawn)) > 1 and set(drawn) <= set(EXPERT_TASKS)
    assert web.reset(seed=5)[1]["task"] == drawn[5]
    assert "book-flight" in web.unwrapped.task_presets["miniwob_standard"]  # reset accepts the preset's tasks too
    with pytest.raises(ValueError, match="unknown task 'no-such-task'; this environment's tasks"):
        web.reset(seed=0, options={"task": "no-such-task"})


@needs_browser
def test_a_wrong_click_does_not_succeed(web):
    _, info = web.reset(seed=4, options={"task": "click-test-2"})
    _, reward, terminated, _, info = web.step(Action("click", x=0.01, y=0.1))  # the instruction bar: no button
    assert (reward, terminated, info["error"]) == (0.0, False, None)
    wrong = find(read_page(web.unwrapped.browser, "click-test-2"), "button", text="TWO")
    point = Action("click", x=(wrong.left + wrong.width / 2) / 160, y=(wrong.top + wrong.height / 2) / 210)
    _, reward, terminated, _, info = web.step(point)
    assert (reward, terminated, info["success"], info["raw_reward"]) == (0.0, True, False, -1.0)


@needs_browser
def test_terminate_before_the_task_is_done_fails(web):
    _, info = web.reset(seed=0, options={"task": "click-test"})
    _, reward, terminated, _, info = web.step(Action("terminate", status="success"))
    assert (reward, terminated, info["success"], info["error"]) == (0.0, True, False, None)
    _, _, terminated, _, info = web.step(info["action"])
    assert terminated and "has ended" in info["error"]


@needs_browser
def test_an_episode_is_truncated_at_max_steps(web):
    web.reset(seed=0, options={"task": "click-test"})
    for step in range(1, 11):
        _, _, terminated, truncated, info = web.step(Action("click", x=0.01, y=0.01))
        assert not terminated and truncated == (step == 10)


@needs_browser
@pytest.mark.parametrize(
    "given, error",
    [
        ("x" * 1_000_000, "at most 65536"),  # 1 MB of model text is refused unread
        ("pyautogui.click(x=nan, y=0.5)", "holds no action"),  # NaN coordinates
        ("pyautogui.click(x=1.7, y=0.5)", "holds no action"),  # a point off the screenshot
        ('{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [-5, 3]}}', "holds no action"),
        ("mobile.fly(to='moon')", "holds no action"),  # an action r1_gui does not know
        (Action("type", text="a" * 100_000), f"at most {MAX_TYPED_CHARS} are typed"),  # an Action with huge text
        (Action("home"), "no home screen"),  # phone actions a page has nothing for
        (Action("back"), "no history"),
        (Action("open_app", text="Chrome"), "no apps"),
        (Action("answer", text="Kasie"), "takes no answer"),
        (Action("press", keys=("hyperdrive",)), "unknown key(s) ['hyperdrive']"),  # a key with no name
        (3.5, "got float"),  # not text at all
        (None, "got NoneType"),
    ],
)
def test_bad_input_never_raises_and_says_why(web, given, error):
    first, _ = web.reset(seed=2, options={"task": "enter-text"})
    observation, reward, terminated, truncated, info = web.step(given)
    assert error in info["error"] and (reward, terminated, truncated) == (0.0, False, False)
    assert observation["screenshot"].shape == first["screenshot"].shape and info["expert_action"] is not None


@needs_browser
def test_typing_and_keys_reach_the_focused_field(web):
    _, info = web.reset(seed=3, options={"task": "enter-text"})
    web.step(info["expert_action"])  # focus the field
    for action in (Action("type", text="héllo 😀"), Action("hotkey", keys=("ctrl", "a")), Action("type", text="ab")):
        _, _, _, _, info = web.step(action)
        assert info["error"] is None
    assert web.unwrapped.browser.run("return document.getElementById('tt').value;") == "ab"


@needs_browser
@pytest.mark.parametrize(
    "style, coordinates",
    [
        ("aguvis", None),  # fractions of the screenshot
        ("mobile_use", None),  # Qwen3-VL's 999 grid
        ("guir1", None),  # pixels of the observed (scaled) screenshot
        ("aguvis", "grid1000"),  # an environment told the model writes on Qwen2-VL's 0-1000 grid
    ],
)
def test_points_in_every_coordinate_system_hit_the_same_button(style, coordinates):
    env = make_env("r1_gui/Web-v0", {"task": "click-test-2", "scale": 2.0, "coordinates": coordinates})
    try:
        for seed in (0, 1):
            observation, info = env.reset(seed=seed)
            assert observation["screenshot"].shape == (420, 320, 3) and info["screen_size"] == (320, 420)
            text = format_action(info["expert_action"], style, coordinates=coordinates, image_size=(320, 420))
            _, reward, terminated, _, info = env.step(text)
            assert (reward, terminated) == (1.0, True), (text, info)
    finally:
        env.close()


@needs_browser
def test_miniwobs_own_page_timer_when_asked_for():
    env = make_env("r1_gui/Web-v0", {"task": "click-test", "page_timeout_s": 0.3})
    try:
        _, info = env.reset(seed=0)
        time.sleep(0.6)  # the page's timer runs out: MiniWoB ends its episode with -1 and shows its START cover
        _, reward, terminated, _, info = env.step(info["expert_action"])
        assert (reward, terminated, info["success"], info["raw_reward"]) == (0.0, True, False, -1.0)
        assert env.unwrapped.browser.run("return WOB_DONE_GLOBAL;")  # the click did not start a new page episode
    finally:
        env.close()


@needs_browser
def test_the_browser_lives_in_the_callers_process_group(web):
    """What a pool's kill of a worker's process group reaches: chromedriver and every Chromium process."""
    web.reset(seed=0, options={"task": "click-test"})
    pids = web.unwrapped.browser.pids()
    assert len(pids) >= 3 and {os.getpgid(pid) for pid in pids} == {os.getpgrp()}


@needs_browser
@pytest.mark.parametrize("victim", ["chromium", "chromedriver"])
def test_a_browser_killed_mid_episode_is_replaced(web, victim):
    _, info = web.reset(seed=1, options={"task": "enter-text"})
    web.step(info["expert_action"])
    browser = web.unwrapped.browser
    old = browser.pids()
    driver = browser.service.process.pid
    target = (
        driver if victim == "chromedriver" else next(p for p, (ppid, _, _) in process_table().items() if ppid == driver)
    )
    os.kill(target, signal.SIGKILL)
    with pytest.raises(BrowserError):
        web.step(Action("type", text="Kasie"))
    assert gone_soon(old) == []  # the dead browser's every process is gone
    info = play_expert(web, "enter-text", 1)  # the next episode starts a fresh browser by itself
    assert info["success"] and not (browser.pids() & old)


@needs_browser
def test_a_page_that_stops_answering_is_a_browser_failure():
    env = make_env("r1_gui/Web-v0", {"task": "click-test"})
    browser = env.unwrapped.browser
    browser.command_timeout_s = 2.0  # (10 s by default) read when a browser starts
    try:
        env.reset(seed=0)
        browser.run("setTimeout(function () { while (true) {} }, 50); return 1;")  # the page's script never ends
        time.sleep(0.2)
        old = browser.pids()
        with pytest.raises(BrowserError, match="did not answer in 2 s"):
            env.step(Action("click", x=0.01, y=0.01))
        assert gone_soon(old) == []
        assert play_expert(env, "click-test", 0)["success"]  # the next reset starts a fresh browser
    finally:
        env.close()


@needs_browser
def test_close_leaves_no_process():
    env = make_env("r1_gui/Web-v0", {"task": "click-test"})
    env.reset(seed=0)
    pids = env.unwrapped.browser.pids()
    folder = env.unwrapped.browser.user_data_dir
    assert len(pids) >= 3 and os.path.isdir(folder)
    env.close()
    assert alive(pids) == [] and not os.path.exists(folder)
    env.close()  # twice is fine


@needs_browser
def test_a_killed_python_leaves_no_browser(tmp_path):
    script = textwrap.dedent(
        """
        import sys, time
        from r1_gui.envs.contract import make_env
        env = make_env("r1_gui/Web-v0", {"task": "click-test"})
        env.reset(seed=0)
        print(" ".join(map(str, sorted(env.unwrapped.browser.pids()))), flush=True)
        time.sleep(120)
        """
    )
    with subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True) as child:
        try:
            pids = [int(pid) for pid in child.stdout.readline().split()]
            assert len(pids) >= 3
            commands = [process_table()[pid][2] for pid in pids]
        finally:
            child.kill()  # SIGKILL: no atexit, no close()
    assert gone_soon(pids) == []
    (folder,) = {
        command.split("--user-data-dir=")[1].split()[0] for command in commands if "--user-data-dir=" in command
    }
    assert os.path.isdir(folder)  # SIGKILL left the profile behind; the next browser's start removes it, once it
    os.utime(folder, (time.time() - 120, time.time() - 120))  # is older than a minute (a young one may be starting)
    assert folder in remove_stale_profiles() and not os.path.exists(folder)


@needs_browser
@pytest.mark.parametrize("closes", [True, False])
def test_a_python_that_exits_prints_no_error(closes):
    # torch's import changes the order of the interpreter's teardown: Browser.__del__ then ran with the module's
    # globals already None and printed "Exception ignored in: <function Browser.__del__ ...>" at every exit
    script = textwrap.dedent(
        f"""
        import torch
        from r1_gui.envs.contract import make_env
        env = make_env("r1_gui/Web-v0", {{"task": "click-test"}})
        env.reset(seed=0)
        if {closes}:
            env.close()
        """
    )
    child = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert child.returncode == 0 and "Exception ignored" not in child.stderr, child.stderr[-2000:]


# -- the web environment in training and evaluation (issue 31: two GRPO steps and an evaluation, in CI) --------------


@needs_browser
@pytest.mark.slow
def test_two_grpo_steps_and_an_episode_evaluation_on_web_pages(tiny_qwen2_vl, tmp_path):
    import json
    import subprocess
    import sys

    from r1_gui.grpo_gui import main
    from r1_gui.training.grpo import parse_grpo_arguments

    repo = Path(__file__).resolve().parents[1]
    recipe = repo / "local_scripts" / "tiny_cpu_web_grpo.yaml"
    run = tmp_path / "run"
    main(*parse_grpo_arguments(["--config", str(recipe), "--model_name_or_path", str(tiny_qwen2_vl),
                                "--output_dir", str(run)]))  # fmt: skip
    state = json.loads((run / "trainer_state.json").read_text())
    assert state["global_step"] == 2
    keys = {key for entry in state["log_history"] for key in entry}
    assert {"episodes/success_rate", "episodes/env_failures", "episodes/turn_parse_rate"} <= keys
    evaluated = subprocess.run(
        [sys.executable, str(repo / "eval" / "test_phone.py"), "--env", "r1_gui/Web-v0", "--tasks", "miniwob_expert",
         "--env_kwargs", '{"max_steps": 2}', "--model_name_or_path", str(run), "--output_dir", str(tmp_path / "eval"),
         "--episodes", "3", "--max_turns", "2", "--max_new_tokens", "16", "--batch_size", "3"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert evaluated.returncode == 0, evaluated.stderr[-3000:]
    metrics = json.loads((tmp_path / "eval" / "metrics.json").read_text())
    assert metrics["episodes"] == 3 and metrics["env_failures"] == 0
    assert set(metrics["per_task"]) == set(EXPERT_TASKS[:3])  # the preset's first three tasks, one episode each
    assert metrics["click_hit_rate"] is not None  # every one of them asks for a click on an element


@needs_browser
@pytest.mark.slow
def test_the_fast_web_demo_writes_its_report(tmp_path):
    import json

    from r1_gui.demo import main

    report = main(["--web", "--fast", "--output_dir", str(tmp_path), "--seed", "1"])
    saved = json.loads((tmp_path / "report.json").read_text())
    assert saved["warm_start"]["success_rate"] == report["warm_start"]["success_rate"]
    assert saved["config"]["env_id"] == "r1_gui/Web-v0" and saved["config"]["model_size"] == "tiny"
    # the web demo's own model: a Qwen3-VL whose processor normalises pixels around the pages' white, kept through SFT
    assert json.loads((tmp_path / "model" / "config.json").read_text())["model_type"] == "qwen3_vl"
    assert saved["config"]["sight_steps"] == 2 and saved["seconds"]["sight"] > 0  # the sight stage ran
    assert saved["config"]["grpo_average_last_steps"] == 1  # the tail average's path (of its one GRPO step)
    for folder in ("model", "sight", "sft", "grpo"):
        image = json.loads((tmp_path / folder / "preprocessor_config.json").read_text())
        assert image["image_mean"] == [0.95] * 3 and image["image_std"] == [0.05] * 3, folder
    for stage in ("warm_start", "grpo"):  # per task, the success and the share of clicks on their target
        part = saved[stage]
        assert set(part["per_task"]) == set(saved["config"]["tasks"]) and part["env_failures"] == 0
        assert 0 <= part["success_rate"] <= 1 and 0 <= part["click_hit_rate"] <= 1
        assert all("click_hit_rate" in row for row in part["per_task"].values())
    assert saved["click_hit_rate_gain"] == pytest.approx(
        saved["grpo"]["click_hit_rate"] - saved["warm_start"]["click_hit_rate"]
    )
    assert len(saved["load_average"]["start"]) == 3 and saved["seconds"]["total"] > 0
    assert "click_hit_rate" in (tmp_path / "report.md").read_text() and (tmp_path / "reward_curve.png").is_file()
    for stage in ("eval_warm_start", "eval_grpo"):  # the episode pictures of both evaluations
        assert list((tmp_path / stage / "episodes").glob("*.png"))
    # every turn of these click tasks had an element to hit (the environment's target box), kept in episodes.jsonl
    episodes = [json.loads(line) for line in (tmp_path / "eval_warm_start" / "episodes.jsonl").read_text().splitlines()]
    assert all(turn["target_box"] is not None for episode in episodes for turn in episode["turns"])


@needs_browser
@pytest.mark.slow
def test_the_fast_multi_step_web_demo_trains_both_estimators_from_one_warm_start(tmp_path):
    """`--web --multi_step --fast`: GRPO and GiGPO, each from the same warm start, each evaluated on the same
    held-out episodes; report.json holds both parts, their gains and the paired comparison (issue 56 item 3)."""
    import json

    from r1_gui.demo import main

    report = main(["--web", "--multi_step", "--fast", "--output_dir", str(tmp_path), "--seed", "0"])
    saved = json.loads((tmp_path / "report.json").read_text())
    assert saved["config"]["estimators"] == ["grpo", "gigpo"] and saved["config"]["max_turns"] == 3
    assert set(saved["config"]["tasks"]) == {"circle-center", "click-collapsible"}
    for part in ("warm_start", "grpo", "gigpo"):
        metrics = saved[part]
        assert set(metrics["per_task"]) == set(saved["config"]["tasks"]) and metrics["env_failures"] == 0
        assert metrics["success_rate_ci95"] and metrics["mean_turns"] >= 1 and metrics["mean_turns_ci95"]
    for estimator in ("grpo", "gigpo"):  # each trained into a folder of its own; only GiGPO logs its anchor groups
        logged = json.loads((tmp_path / estimator / "trainer_state.json").read_text())["log_history"]
        assert any("gigpo/anchor_groups" in entry for entry in logged) == (estimator == "gigpo"), estimator
        assert saved["gains"][estimator]["success_rate"] == pytest.approx(
            saved[estimator]["success_rate"] - saved["warm_start"]["success_rate"]
        )
    comparison = saved["comparison"]  # GiGPO's evaluation against GRPO's, paired over the same episodes
    assert comparison["a"].endswith("eval_grpo") and comparison["b"].endswith("eval_gigpo")
    assert comparison["units"] == saved["grpo"]["episodes"] and "success_rate" in comparison["metrics"]
    # SFT's stop: after each of its steps (fast) the model played 2 training episodes; it stopped at the first check
    # that reached the config's share, or ran all its steps
    checks, target = saved["sft"]["checks"], saved["config"]["sft_stop_success"]
    assert [check["step"] for check in checks] == list(range(1, saved["sft"]["steps"] + 1)) and checks
    assert all(check["success_rate"] < target for check in checks[:-1])
    assert checks[-1]["success_rate"] >= target or saved["sft"]["steps"] == saved["config"]["sft_steps"]
    for check in checks:
        played = json.loads((tmp_path / "sft_checks" / f"step_{check['step']}" / "metrics.json").read_text())
        assert played["episodes"] == 2 and played["protocol"]["split"]["seed_offset"] == 0  # seed 0's training seeds
        assert (check["success_rate"], check["turn_parse_rate"]) == (played["success_rate"], played["turn_parse_rate"])
    text = (tmp_path / "report.md").read_text()
    assert f"SFT stopped after {saved['sft']['steps']} steps" in text
    assert "after GRPO | change | after GiGPO | change" in text and "GiGPO against GRPO" in text
    assert "mean_turns" in text and (tmp_path / "reward_curve_gigpo.png").is_file()
    assert report["gigpo"]["success_rate"] == saved["gigpo"]["success_rate"]


def test_multi_step_is_a_variant_of_the_web_demo(tmp_path, capsys):
    from r1_gui.demo import main

    with pytest.raises(SystemExit) as exit_info:
        main(["--multi_step", "--output_dir", str(tmp_path)])
    assert exit_info.value.code == 2 and "give --web --multi_step" in capsys.readouterr().err


@needs_browser
def test_a_step_returns_the_page_at_rest_after_an_animation(web):
    # click-collapsible's section opens with jQuery UI's animation, pushing Submit down: the step's screenshot and the
    # expert's next click are the page's once it has stopped moving, the same as a second later
    for seed in range(3):
        _, info = web.reset(seed=seed, options={"task": "click-collapsible"})
        observation, _, _, _, info = web.step(info["expert_action"])
        time.sleep(1.0)
        submit = find(read_page(web.unwrapped.browser, "click-collapsible"), "button", id="subbtn")
        x1, y1, x2, y2 = info["target_box"]
        assert (x1, y1) == pytest.approx((submit.left / 160, submit.top / 210), abs=0.01), f"seed {seed}"
        assert (observation["screenshot"] == web.unwrapped._capture()).all(), f"seed {seed}"
