"""`BrowserGymEnv`: BrowserGym's web tasks (ServiceNow, PyPI `browsergym-*` 0.14) keeping r1_gui's environment
contract, made from `--env browsergym/<task>` (`r1_gui.envs.contract.make_env`).

    env = make_env("browsergym/miniwob.click-test")          # one task
    env = make_env("browsergym/miniwob")                     # every MiniWoB++ task; --env_tasks pix2act: Pix2Act's
    observation, info = env.reset(seed=3)                    # {"screenshot": 321x498x3, "instruction": "Click ..."}
    env.step('<tool_call>{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [300, 500]}}</tool_call>')

**Observation**: BrowserGym's `screenshot` (MiniWoB++: the 332 x 214 page at 1.5x, 498 x 321) and its goal's text as
the instruction. **Actions**: r1_gui's action, in any style it parses, becomes one of BrowserGym's coordinate actions
in screenshot pixels (`r1_gui.envs.browsergym.actions`: mouse_click, mouse_dblclick, mouse_move, mouse_drag_and_drop,
scroll_at, keyboard_type, keyboard_press, noop); `terminate` ends the episode (a failure: a task that was done has
already ended it); home, back, open_app and answer do nothing and say why. **Reward and success**: BrowserGym's (for
MiniWoB++, 1 when the page's own reward is positive); `info["raw_reward"]` keeps it. **Expert** (MiniWoB++ tasks that
r1_gui/Web-v0's DOM expert knows, `r1_gui.envs.web.expert`): `info["expert_action"]` and `target_box`, read from the
page's DOM as in Web-v0.

The browser is Debian's Chromium (`chromium=`, default `chromium` on PATH) driven by playwright 1.44 (no browser
download): BrowserGym launches it with `pw_chromium_kwargs={"executable_path": ...}`, and its chat window through the
same executable (`_Playwright`). MiniWoB++'s pages come from the `miniwob` package (a file:// MINIWOB_URL, unless
MINIWOB_URL is set). BrowserGym starts a fresh browser at every reset (about 4 s here). Other benchmarks
(`browsergym/webarena.<n>`, `workarena...`) need their package and servers, as BrowserGym documents; a missing package
or an unknown task id is a ValueError naming what to install or the valid ids, and a page that does not load a
`BrowserGymError` in one line.
"""

from __future__ import annotations

import dataclasses
import importlib
import logging
import os
import shutil
from pathlib import Path

import gymnasium as gym
import numpy as np

from r1_gui.actions import COORDINATE_SYSTEMS, Action
from r1_gui.envs.browsergym.actions import browsergym_action
from r1_gui.envs.browsergym.presets import MINIWOB_PRESETS
from r1_gui.envs.contract import ACTION_TEXT_SPACE, parse_step_input, step_info

logger = logging.getLogger(__name__)

PREFIX = "browsergym/"
DEFAULT_MAX_STEPS = 10
PACKAGES = {"miniwob": "browsergym-miniwob", "webarena": "browsergym-webarena", "visualwebarena":
            "browsergym-visualwebarena", "workarena": "browsergym-workarena", "assistantbench":
            "browsergym-assistantbench"}  # fmt: skip
PRESETS = {"miniwob": MINIWOB_PRESETS}


class BrowserGymError(RuntimeError):
    """BrowserGym or its browser failed (a page that does not load, a browser that died); one line."""


class _Launcher:
    """playwright's chromium with Debian's executable and --no-sandbox (root) for every launch, BrowserGym's chat
    window included (it launches without pw_chromium_kwargs)."""

    def __init__(self, chromium, executable: str):
        self._chromium, self._executable = chromium, executable

    def launch(self, **kwargs):
        kwargs.setdefault("executable_path", self._executable)
        kwargs["args"] = [*kwargs.get("args", []), "--no-sandbox"]
        return self._chromium.launch(**kwargs)

    def __getattr__(self, name):
        return getattr(self._chromium, name)


class _Playwright:
    def __init__(self, playwright, executable: str):
        self._playwright, self.chromium = playwright, _Launcher(playwright.chromium, executable)

    def __getattr__(self, name):
        return getattr(self._playwright, name)


_open_envs = 0  # BrowserGym environments open on the process's playwright


def use_chromium(executable: str) -> None:
    """Give BrowserGym one playwright (per process) whose chromium is `executable`."""
    import browsergym.core
    from playwright.sync_api import sync_playwright

    if isinstance(getattr(browsergym.core, "_PLAYWRIGHT", None), _Playwright):
        return
    browsergym.core._set_global_playwright(_Playwright(sync_playwright().start(), executable))


def release_chromium() -> None:
    """The process's last BrowserGym environment closed: stop its playwright. Left running, it keeps its driver
    process, and its sync API leaves this thread's event loop marked running, so a later asyncio.run() in the same
    process failed ("cannot be called from a running event loop")."""
    import browsergym.core

    playwright = getattr(browsergym.core, "_PLAYWRIGHT", None)
    if isinstance(playwright, _Playwright):
        browsergym.core._set_global_playwright(None)
        try:
            playwright.stop()
        except Exception as error:  # a driver already gone has nothing left to stop
            logger.debug("stopping playwright: %s", error)


def find_chromium(chromium: str | None) -> str:
    found = shutil.which(chromium or "chromium")
    if found is None:
        raise ValueError(
            f"BrowserGym needs Chromium ({chromium or 'chromium'} is not on PATH): apt-get install -y chromium, or "
            'pass --env_kwargs \'{"chromium": "/path/to/chromium"}\''
        )
    return found


def benchmark_ids(benchmark: str) -> tuple[str, ...]:
    """The task ids (`miniwob.click-test`, ...) BrowserGym registers for `benchmark`; ValueError naming the package
    to install."""
    if benchmark == "miniwob" and not os.environ.get("MINIWOB_URL"):
        from miniwob.selenium_instance import HTML_DIR

        os.environ["MINIWOB_URL"] = (Path(HTML_DIR) / "miniwob").as_uri() + "/"
    try:
        importlib.import_module(f"browsergym.{benchmark}")
    except ImportError as error:
        package = PACKAGES.get(benchmark, f"browsergym-{benchmark}")
        raise ValueError(f"--env {PREFIX}{benchmark}...: BrowserGym's {benchmark} is not installed ({error}): pip "
                         f"install {package} (and start its servers, as BrowserGym documents)") from None  # fmt: skip
    return tuple(sorted(name[len(PREFIX) :] for name in gym.registry if name.startswith(f"{PREFIX}{benchmark}.")))


class BrowserGymEnv(gym.Env):
    """BrowserGym tasks keeping r1_gui's contract; see the module docstring.

    Args:
        benchmark: BrowserGym's benchmark package (miniwob, webarena, ...).
        task: one task name of it for every episode (e.g. "click-test"); None: every task (`tasks`), one per reset.
        max_steps: steps before truncation.
        coordinates: the convention of points in model text (None: each style's own).
        chromium: the Chromium executable (default: `chromium` on PATH).
    """

    metadata = {"render_modes": []}

    def __init__(self, benchmark: str = "miniwob", task: str | None = None, max_steps: int = DEFAULT_MAX_STEPS,
                 coordinates: str | None = None, chromium: str | None = None):  # fmt: skip
        if coordinates is not None and coordinates not in COORDINATE_SYSTEMS:
            raise ValueError(f"coordinates must be None or one of {list(COORDINATE_SYSTEMS)}, got {coordinates!r}")
        if not isinstance(max_steps, int) or max_steps < 1:
            raise ValueError(f"max_steps must be an integer of at least 1, got {max_steps!r}")
        self.executable = find_chromium(chromium)
        known = benchmark_ids(benchmark)
        names = tuple(name.split(".", 1)[1] for name in known)
        if task is not None and task not in names:
            shown = ", ".join(names[:12]) + (f", ... ({len(names)} in all)" if len(names) > 12 else "")
            raise ValueError(
                f"--env {PREFIX}{benchmark}.{task}: BrowserGym has no such {benchmark} task; valid: {shown}"
            )
        self.benchmark, self.max_steps, self.coordinates = benchmark, max_steps, coordinates
        self.tasks = (task,) if task is not None else names
        self.task_presets = {
            name: tuple(t for t in members if t in names) for name, members in PRESETS.get(benchmark, {}).items()
        }
        self.action_space = ACTION_TEXT_SPACE  # model text (the screenshot's size is BrowserGym's task's)
        self._env, self._env_task = None, None  # BrowserGym's env and the task it was made for
        self.task, self.instruction, self._screenshot = None, "", None
        self._steps, self._ended, self._pointer = 0, True, None

    @property
    def has_expert(self) -> bool:
        from r1_gui.envs.web.expert import EXPERTS

        return self.benchmark == "miniwob" and all(expert_name(task) in EXPERTS for task in self.tasks)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        task = (options or {}).get("task") or self.tasks[int(self.np_random.integers(len(self.tasks)))]
        if task not in self.tasks and not any(task in members for members in self.task_presets.values()):
            raise ValueError(f"unknown task {task!r}; this environment's tasks: {', '.join(self.tasks)}")
        env = self._browsergym(task)
        try:
            observation, _ = env.reset(seed=seed if seed is not None else int(self.np_random.integers(2**31)))
        except Exception as error:
            raise BrowserGymError(
                f"{PREFIX}{self.benchmark}.{task}: the page did not load: {first_line(error)}"
            ) from None
        self.task, self._steps, self._ended, self._pointer = task, 0, False, None
        self._read(observation)
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
        elif parsed is not None and parsed.type == "terminate":
            terminated = True
        elif parsed is not None:
            command, error = browsergym_action(parsed, self.screen_size, self._pointer)
            if command is not None:
                try:
                    observation, raw_reward, terminated, _, _ = self._env.step(command)
                except Exception as failure:  # the browser died: an environment failure, not model output
                    self._close_browsergym()
                    raise BrowserGymError(f"{PREFIX}{self.benchmark}.{self.task}: {first_line(failure)}") from None
                self._read(observation)
                error = observation.get("last_action_error") or None
                raw_reward, terminated = float(raw_reward or 0.0), bool(terminated)
                success = terminated and raw_reward > 0
                if parsed.point is not None:
                    self._pointer = (parsed.x2, parsed.y2) if parsed.x2 is not None else parsed.point
        truncated = not terminated and self._steps >= self.max_steps
        self._ended = self._ended or terminated or truncated
        info = self._info(success=success, parsed=parsed is not None, error=error, action=parsed, raw_reward=raw_reward)
        return self._observation(), 1.0 if success else 0.0, terminated, truncated, info

    def close(self):
        self._close_browsergym()

    # -- BrowserGym ------------------------------------------------------------------------------------------

    def _browsergym(self, task: str):
        if self._env is None or self._env_task != task:
            from browsergym.core.action.functions import noop
            from browsergym.core.action.highlevel import HighLevelActionSet

            self._close_browsergym()
            use_chromium(self.executable)
            actions = HighLevelActionSet(subsets=["coord"], custom_actions=[noop], multiaction=True)
            self._env = gym.make(f"{PREFIX}{self.benchmark}.{task}", headless=True, action_mapping=actions.to_python_code,
                                 pw_chromium_kwargs={"executable_path": self.executable})  # fmt: skip
            self._env_task = task
            global _open_envs
            _open_envs += 1
        return self._env

    def _close_browsergym(self) -> None:
        global _open_envs
        if self._env is not None:
            try:
                self._env.close()
            except Exception as error:  # a browser already gone has nothing left to close
                logger.debug("closing BrowserGym: %s", error)
            _open_envs -= 1
            if _open_envs == 0:
                release_chromium()
        self._env, self._env_task = None, None

    def _read(self, observation: dict) -> None:
        self._screenshot = np.ascontiguousarray(observation["screenshot"][..., :3], dtype=np.uint8)
        goal = observation.get("goal_object") or ()
        self.instruction = " ".join(part["text"] for part in goal if part.get("type") == "text") or str(
            observation.get("goal", "")
        )

    @property
    def screen_size(self) -> tuple[int, int]:
        if self._screenshot is None:
            return (0, 0)
        height, width = self._screenshot.shape[:2]
        return width, height

    def _observation(self) -> dict:
        return {"screenshot": self._screenshot.copy(), "instruction": self.instruction}

    def _info(self, raw_reward: float = 0.0, **outcome) -> dict:
        expert, box = self._expert() if not self._ended else (None, None)
        return step_info(task=self.task, instruction=self.instruction, screen_size=self.screen_size, step=self._steps,
                         max_steps=self.max_steps, expert_action=expert, target_box=box, raw_reward=raw_reward,
                         **outcome)  # fmt: skip

    def _expert(self) -> tuple[Action | None, tuple | None]:
        """The DOM expert's next action on a MiniWoB++ page (r1_gui.envs.web.expert), normalized to the screenshot."""
        from r1_gui.envs.web.expert import EXPERTS, expert_move, read_page, target_box

        name = expert_name(self.task)
        if self.benchmark != "miniwob" or name not in EXPERTS:
            return None, None
        page = self._env.unwrapped.page
        viewport = page.viewport_size
        read = dataclasses.replace(read_page(_PageScripts(page), name), size=(viewport["width"], viewport["height"]))
        move = expert_move(read)
        return (move.action, target_box(read, move.target)) if move is not None else (None, None)


class _PageScripts:
    """A playwright page seen as the web expert's browser: `run(script)` runs a script body that returns a value."""

    def __init__(self, page):
        self.page = page

    def run(self, script: str, *args):
        return self.page.evaluate(f"(arguments) => {{ {script} }}", list(args))


def expert_name(task: str | None) -> str:
    """The Web-v0 expert's name of a MiniWoB++ task: its name without BrowserGym's -nodelay (the same page, no delay)."""
    return (task or "").removesuffix("-nodelay")


def first_line(error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}".strip()
    return (text.splitlines() or [text])[0][:300]


def make_browsergym_env(env_id: str, env_kwargs: dict | None = None) -> BrowserGymEnv:
    """`browsergym/<benchmark>` (every task) or `browsergym/<benchmark>.<task>` as a BrowserGymEnv."""
    name = env_id[len(PREFIX) :]
    benchmark, _, task = name.partition(".")
    if not benchmark:
        raise ValueError(f"--env {env_id}: give browsergym/<benchmark>[.<task>], e.g. browsergym/miniwob.click-test")
    return BrowserGymEnv(benchmark=benchmark, task=task or None, **dict(env_kwargs or {}))
