"""`WebEnv` (`r1_gui/Web-v0`): MiniWoB++ task pages in a real headless Chromium, keeping r1_gui's environment
contract (r1_gui.envs.contract).

    env = gymnasium.make("r1_gui/Web-v0", task="click-test-2")       # or tasks=[...], one drawn per episode
    observation, info = env.reset(seed=3)           # {"screenshot": 210x160x3 uint8, "instruction": "Click button ONE."}
    observation, reward, terminated, truncated, info = env.step(info["expert_action"])
    env.step('<tool_call>{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [500, 600]}}</tool_call>')
    env.close()                                      # chromedriver and every Chromium process end

The pages are the 130 MiniWoB++ tasks shipped inside the `miniwob` wheel (Farama Foundation), loaded as file:// URLs:
nothing reaches the network. One browser (`r1_gui.envs.web.browser.Browser`) is started at the first reset and kept
across episodes; a new task's page is loaded when the task changes, else a reset restarts the page's episode.

**Observation**: the task area (160 x 210 CSS pixels) rendered at `scale` (2.0 gives 320 x 420, crisp, not resized)
and MiniWoB's instruction. Model points refer to that screenshot, in any r1_gui coordinate system (`coordinates=`
overrides each style's own), and are mapped back to the page's CSS pixels.

**Same seed, same page**: a reset seeds the page's random generator (MiniWoB's `Math.seedrandom`), moves the pointer off
the task area and removes the focus, so the same seed (and task) gives the same first screenshot whatever the browser
played before: the episodes of a GRPO group play the same page. A screenshot is taken once the page's images are decoded
(`r1_gui.envs.web.browser.PAINTED_SCRIPT`), and the browser rasters whole frames (`--disable-partial-raster`): without
either, a page loaded on a busy machine was now and then captured without a dialog's close icon, or with its edges a
gray level off.

**Actions**: click, double_click, right_click, long_press (held `LONG_PRESS_S`), move_to (hover), drag_to (from
the pointer's last point), swipe (a drag), scroll (the wheel, `miniwob.constants.DEFAULT_SCROLL_AMOUNT` pixels a
step, at the point or the task's centre), type (into the focused element; at most `MAX_TYPED_CHARS` characters),
press (keys one after another) and hotkey (together), wait (sleeps at most `MAX_WAIT_S`), terminate. home, back,
open_app and answer have nothing to act on in a page: the step does nothing and `info["error"]` says so, as it
does for text that does not parse, points off the screenshot, NaN, unknown keys and text the browser cannot type.

**Success and "done"**: MiniWoB ends a task's episode itself when the task is answered (a button clicked, a form
submitted), with its own reward: > 0 is success, <= 0 (a wrong answer: usually -1) failure. That ends the r1_gui
episode (`terminated`) with reward 1.0 or 0.0; `info["raw_reward"]` is MiniWoB's reward without its time decay.
`terminate` ends the episode too, and since a task that was done has already ended it, a terminate is always a
failure (whatever its status). MiniWoB's own 10 s page timer is off by default (`page_timeout_s`): `max_steps`
bounds an episode, so a slow model is not failed by the clock.

**Expert**: `info["expert_action"]` is the next action of the task's expert (`r1_gui.envs.web.expert`), read from
the page's DOM; where it is a click on an element, `info["target_box"]` is that element's box [x1, y1, x2, y2]
normalized to the screenshot (else None), which the episode evaluation's `click_hit_rate` tests clicks against.

**The browser dies**: a step or reset that finds it gone (Chromium or chromedriver killed, the session lost)
raises `BrowserError` (an environment failure, not model output: a pool counts it as such), and the next reset
starts a fresh browser. So does a page that stops answering (a script or load past the browser's 10 s command
timeout); a pool's own per-step timeout (r1_gui.envs.runtime.pool) may well be shorter.
"""

from __future__ import annotations

import logging
import math
import time
from functools import cache
from pathlib import Path

import gymnasium as gym
import numpy as np

from r1_gui.actions import COORDINATE_SYSTEMS, Action
from r1_gui.envs.contract import ACTION_TEXT_SPACE, INSTRUCTION_SPACE, parse_step_input, step_info
from r1_gui.envs.web.browser import LONG_PRESS_S, Browser, BrowserError
from r1_gui.envs.web.expert import EXPERT_TASKS, EXPERTS, TASK_SIZE, expert_move, read_page, target_box

logger = logging.getLogger(__name__)

DEFAULT_MAX_STEPS = 10  # the experts need at most 7 (six checkboxes and Submit)
MAX_TYPED_CHARS = 256  # MiniWoB's longest text field value; longer text is refused, not typed for seconds
MAX_WAIT_S = 1.0
MAX_SCALE = 8.0
VIEWPORT = (500, 320)  # MiniWoB's window (miniwob.constants.WINDOW_WIDTH, WINDOW_HEIGHT)
POINTER_REST = (400, 300)  # where a reset parks the pointer: inside the viewport, off the task area
NO_PAGE_TIMER_MS = 2**31 - 1  # setTimeout's largest delay (about 24.8 days): MiniWoB's timer never fires
NOT_ON_A_PAGE = {
    "home": "a web page has no home screen",
    "back": "a MiniWoB page has no history to go back to",
    "open_app": "a web page has no apps to open",
    "answer": "a MiniWoB page takes no answer: type it into the page",
}
KEY_NAMES = {  # r1_gui key names (pyautogui's, lower case) -> attribute of selenium's Keys
    "enter": "ENTER",
    "return": "RETURN",
    "tab": "TAB",
    "backspace": "BACKSPACE",
    "delete": "DELETE",
    "del": "DELETE",
    "escape": "ESCAPE",
    "esc": "ESCAPE",
    "space": "SPACE",
    "up": "ARROW_UP",
    "down": "ARROW_DOWN",
    "left": "ARROW_LEFT",
    "right": "ARROW_RIGHT",
    "home": "HOME",
    "end": "END",
    "pageup": "PAGE_UP",
    "pagedown": "PAGE_DOWN",
    "insert": "INSERT",
    "ctrl": "CONTROL",
    "control": "CONTROL",
    "shift": "SHIFT",
    "alt": "ALT",
    "meta": "META",
    "command": "COMMAND",
    "cmd": "COMMAND",
    "win": "META",
}
START_SCRIPT = """
if (typeof core === 'undefined' || typeof genProblem === 'undefined') return 'not a MiniWoB task page';
core.endEpisode(0);
if (document.activeElement) document.activeElement.blur();
Math.seedrandom(arguments[0]);
core.setDataMode('train');
core.EPISODE_MAX_TIME = arguments[1];
core.startEpisodeReal();
if (document.activeElement && document.activeElement !== document.body) document.activeElement.blur();
return null;
"""
STATE_SCRIPT = "return [WOB_DONE_GLOBAL, WOB_RAW_REWARD_GLOBAL, WOB_TASK_READY, core.getUtterance()];"
# After an action, the page's jQuery animations (click-collapsible's section opening) run out before the screenshot
# and the expert's next action are read: taken mid-way, Submit was still moving and the expert's click missed it
MOVING_SCRIPT = "return window.jQuery ? jQuery(':animated').length : 0;"
SETTLE_S = 2.0


@cache
def miniwob_tasks() -> tuple[str, ...]:
    """The task names of the MiniWoB++ pages in the miniwob wheel (its html/miniwob/*.html)."""
    return tuple(sorted(path.stem for path in task_folder().glob("*.html")))


def task_folder() -> Path:
    from miniwob.selenium_instance import HTML_DIR

    return Path(HTML_DIR) / "miniwob"


def selenium_key(name: str) -> str | None:
    """The WebDriver key value for an r1_gui key name ("enter", "ctrl", "a", "A"), or None for an unknown name."""
    from selenium.webdriver.common.keys import Keys

    if len(name) == 1:
        return name
    attribute = KEY_NAMES.get(name.strip().lower())
    return getattr(Keys, attribute) if attribute else None


class WebEnv(gym.Env):
    """MiniWoB++ pages in a headless Chromium; see the module docstring.

    Args:
        task: one MiniWoB++ task for every episode (e.g. "click-test-2"; all: `miniwob_tasks()`).
        tasks: several tasks, one drawn per episode from the reset's seed (reset's options={"task": ...} picks one);
            neither given: the tasks with an expert (`EXPERT_TASKS`).
        scale: pixels of the screenshot per CSS pixel of the page (1.0: MiniWoB's 160 x 210).
        coordinates: the convention of points in model text (None: each style's own).
        max_steps: steps before truncation.
        page_timeout_s: MiniWoB's own time limit for an episode (its tasks' default is 10 s, after which the page
            gives reward -1); None turns the page's timer off and leaves the bound to max_steps.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 2}

    def __init__(
        self,
        task: str | None = None,
        tasks: list[str] | tuple[str, ...] | None = None,
        scale: float = 1.0,
        coordinates: str | None = None,
        max_steps: int = DEFAULT_MAX_STEPS,
        page_timeout_s: float | None = None,
        render_mode: str | None = None,
    ):
        if task is not None and tasks is not None:
            raise ValueError("give task (one for every episode) or tasks (one drawn per episode), not both")
        chosen = (task,) if task is not None else tuple(tasks) if tasks is not None else EXPERT_TASKS
        known = set(miniwob_tasks())
        unknown = [name for name in chosen if name not in known]
        if unknown or not chosen:
            raise ValueError(f"unknown MiniWoB task(s) {unknown}; valid: {', '.join(miniwob_tasks())}")
        if coordinates is not None and coordinates not in COORDINATE_SYSTEMS:
            raise ValueError(f"coordinates must be None or one of {list(COORDINATE_SYSTEMS)}, got {coordinates!r}")
        if not (isinstance(scale, (int, float)) and math.isfinite(scale) and 0 < scale <= MAX_SCALE):
            raise ValueError(f"scale must be a number in (0, {MAX_SCALE}], got {scale!r}")
        if not isinstance(max_steps, int) or max_steps < 1:
            raise ValueError(f"max_steps must be an integer of at least 1, got {max_steps!r}")
        if page_timeout_s is not None and not (0 < page_timeout_s <= NO_PAGE_TIMER_MS / 1000):
            raise ValueError(f"page_timeout_s must be None or a positive number of seconds, got {page_timeout_s!r}")
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        self.tasks = chosen  # the contract's declared task names
        # the contract's named groups (reset accepts any MiniWoB task): the benchmark as the miniwob wheel ships it,
        # and the tasks with an expert
        self.task_presets = {"miniwob_standard": miniwob_tasks(), "miniwob_expert": EXPERT_TASKS}
        self.scale, self.coordinates, self.max_steps = float(scale), coordinates, max_steps
        self.page_timer_ms = NO_PAGE_TIMER_MS if page_timeout_s is None else round(page_timeout_s * 1000)
        self.render_mode = render_mode
        width, height = self.screen_size = (round(TASK_SIZE[0] * scale), round(TASK_SIZE[1] * scale))
        self.observation_space = gym.spaces.Dict(
            {"screenshot": gym.spaces.Box(0, 255, (height, width, 3), np.uint8), "instruction": INSTRUCTION_SPACE}
        )
        self.action_space = ACTION_TEXT_SPACE  # model text; an r1_gui Action is accepted too
        self.browser = Browser(VIEWPORT)
        self._page_task: str | None = None  # the task whose page the browser shows
        self.task: str | None = None
        self.instruction = ""
        self._screenshot: np.ndarray | None = None
        self._steps, self._ended = 0, True

    @property
    def has_expert(self) -> bool:
        return all(task in EXPERTS for task in self.tasks)

    # -- the episode ---------------------------------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        task = (options or {}).get("task") or self.tasks[int(self.np_random.integers(len(self.tasks)))]
        if task not in self.tasks and task not in miniwob_tasks():
            raise ValueError(f"unknown task {task!r}; this environment's tasks: {', '.join(self.tasks)}")
        episode_seed = seed if seed is not None else int(self.np_random.integers(2**31))
        self._ended = True  # until the new episode has started
        try:
            self._start_episode(task, episode_seed)
        except BrowserError as error:  # died between episodes: one fresh browser, then give up
            logger.warning("the browser was gone at reset (%s); starting a fresh one", error)
            self._discard_browser()
            self._start_episode(task, episode_seed)
        self.task, self._steps, self._ended = task, 0, False
        self._screenshot = self._capture_or_discard()
        return self._observation(), self._info()

    def step(self, action):
        if self.task is None:
            raise RuntimeError("call reset() before step()")
        self._steps += 1
        parsed, error = parse_step_input(action, self.coordinates, self.screen_size)
        terminated = success = False
        raw_reward = 0.0
        if self._ended:
            parsed, error, terminated = None, "the episode has ended; call reset()", True
        elif parsed is not None:
            try:
                done = self.page_timer_ms != NO_PAGE_TIMER_MS and self.browser.run(STATE_SCRIPT)[0]
                if not done:  # (a page whose own timer ran out shows its START cover: a click would start anew)
                    error = self._perform(parsed)
                    self._settle()
                done, raw_reward, _, _ = self.browser.run(STATE_SCRIPT)
            except BrowserError:
                self._discard_browser()
                raise
            raw_reward = float(raw_reward or 0.0)
            terminated = bool(done) or parsed.type == "terminate"
            success = bool(done) and raw_reward > 0
            self._screenshot = self._capture_or_discard()
        truncated = not terminated and self._steps >= self.max_steps
        self._ended = self._ended or terminated or truncated
        info = self._info(success=success, parsed=parsed is not None, error=error, action=parsed, raw_reward=raw_reward)
        return self._observation(), 1.0 if success else 0.0, terminated, truncated, info

    def render(self):
        return None if self.render_mode is None or self._screenshot is None else self._screenshot.copy()

    def close(self):
        self.browser.close()
        self._page_task = None

    # -- the browser ---------------------------------------------------------------------------------------------

    def _start_episode(self, task: str, seed: int) -> None:
        if not self.browser.started:
            self.browser.start()
            self._page_task = None
        if self._page_task != task:
            self.browser.load((task_folder() / f"{task}.html").as_uri())
            self._page_task = task
        refused = self.browser.run(START_SCRIPT, str(seed), self.page_timer_ms)
        if refused:
            raise BrowserError(f"{task}: {refused}")
        self.browser.move(*POINTER_REST)
        for _ in range(40):  # MiniWoB's own wait: WOB_TASK_READY, up to 2 s
            done, _, ready, self.instruction = self.browser.run(STATE_SCRIPT)
            if ready:
                break
            time.sleep(0.05)
        else:
            raise BrowserError(f"{task}: the page did not get ready in 2 s")

    def _settle(self) -> None:
        """Wait (at most `SETTLE_S`) until no jQuery animation runs on the page."""
        deadline = time.monotonic() + SETTLE_S
        while self.browser.run(MOVING_SCRIPT) and time.monotonic() < deadline:
            time.sleep(0.02)

    def _discard_browser(self) -> None:
        self.browser.close()
        self._page_task = None

    def _capture(self) -> np.ndarray:
        return self.browser.screenshot((0, 0, *TASK_SIZE), self.scale)

    def _capture_or_discard(self) -> np.ndarray:
        try:
            return self._capture()
        except BrowserError:
            self._discard_browser()
            raise

    def _perform(self, action: Action) -> str | None:
        """Do `action` on the page; the reason it did nothing (None when it did). BrowserError when the browser is
        gone; a call the page refuses while the browser lives is reported, not raised."""
        if action.type in NOT_ON_A_PAGE:
            return f"{NOT_ON_A_PAGE[action.type]}; the step did nothing"
        try:
            return self._act(action)
        except BrowserError:
            raise
        except Exception as error:  # the browser lives but refused this input (say, a character it cannot type)
            message = getattr(error, "msg", None) or repr(error)
            logger.debug("the page refused %r: %s", action, message)
            return f"the browser refused this {action.type}: {message.splitlines()[0]}"

    def _act(self, action: Action) -> str | None:
        browser, kind = self.browser, action.type
        point = self._page_point(action.x, action.y) if action.point is not None else None
        if kind == "terminate":
            return None
        if kind in ("click", "double_click"):
            browser.click(*point, count=2 if kind == "double_click" else 1)
        elif kind == "right_click":
            browser.right_click(*point)
        elif kind == "long_press":
            browser.long_press(*point, LONG_PRESS_S)
        elif kind == "move_to":
            browser.move(*point)
        elif kind == "drag_to":
            browser.drag(browser.pointer, point)
        elif kind == "swipe":
            browser.drag(point, self._page_point(action.x2, action.y2))
        elif kind == "scroll":
            from miniwob.constants import DEFAULT_SCROLL_AMOUNT

            delta = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}[action.direction]
            at = point or (TASK_SIZE[0] / 2, TASK_SIZE[1] / 2)
            browser.scroll(*at, delta[0] * DEFAULT_SCROLL_AMOUNT, delta[1] * DEFAULT_SCROLL_AMOUNT)
        elif kind == "type":
            if len(action.text) > MAX_TYPED_CHARS:
                return f"the text is {len(action.text)} characters long; at most {MAX_TYPED_CHARS} are typed"
            browser.keys(action.text)
        elif kind in ("press", "hotkey"):
            keys = [selenium_key(name) for name in action.keys]
            if None in keys:
                unknown = [name for name, key in zip(action.keys, keys, strict=True) if key is None]
                return f"unknown key(s) {unknown}; known: single characters and {', '.join(KEY_NAMES)}"
            browser.keys(keys, chord=kind == "hotkey")
        elif kind == "wait":
            time.sleep(min(action.seconds if action.seconds is not None else MAX_WAIT_S, MAX_WAIT_S))
        else:
            return f"{kind} is not an action r1_gui/Web-v0 knows; the step did nothing"
        return None

    @staticmethod
    def _page_point(x: float, y: float) -> tuple[float, float]:
        """A normalized point of the screenshot in CSS pixels of the page (just inside the task area)."""
        width, height = TASK_SIZE
        return min(x * width, width - 1), min(y * height, height - 1)

    # -- observation and info ------------------------------------------------------------------------------------

    def _observation(self) -> dict:
        return {"screenshot": self._screenshot.copy(), "instruction": self.instruction}

    def _info(self, raw_reward: float = 0.0, **outcome) -> dict:
        """`step_info` with this step's ``outcome`` (success, error, action, parsed: none at reset), the DOM expert's
        next click, its target box and the page's own reward."""
        expert = box = None
        if not self._ended and self.task in EXPERTS:
            try:
                page = read_page(self.browser, self.task)
            except BrowserError:
                self._discard_browser()
                raise
            move = expert_move(page)
            if move is not None:
                expert, box = move.action, target_box(page, move.target)
        return step_info(
            task=self.task,
            instruction=self.instruction,
            screen_size=self.screen_size,
            step=self._steps,
            max_steps=self.max_steps,
            expert_action=expert,
            target_box=box,
            raw_reward=raw_reward,
            **outcome,
        )
