"""`PhoneEnv` (`r1_gui/Phone-v0`): a simulated phone as a Gymnasium environment.

    env = gymnasium.make("r1_gui/Phone-v0", task="web_search")          # task None: a family per episode
    observation, info = env.reset(seed=3)                                # {"screenshot": HxWx3 uint8, "instruction"}
    observation, reward, terminated, truncated, info = env.step(info["expert_action"])
    env.step('<tool_call>{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [500, 80]}}</tool_call>')

`step` takes an `r1_gui.actions.Action` or a model's raw text in any style r1_gui parses (`extract_action`):
mobile_use calls on their 999 grid, Aguvis code in fractions, GUI-R1 JSON in pixels of the observed screenshot
(`coordinates=` overrides every style's convention). Text that does not parse, points off the screen, NaN, huge
strings and actions the phone does not know never raise: the state stays, the step counts and `info["error"]`
says why. Rewards: 1.0 when the episode ends in success (the goal state reached and terminate(success)), else 0.0.

Screens are drawn by `r1_gui.synthetic.screens` and cached by episode and what they show (least recently used first
out, `cache_mb` in all), so a step that changes nothing (most random actions) and a screen seen again (GRPO plays
each episode several times) cost no drawing.
"""

from __future__ import annotations

import logging
import math
import random
import time
from collections import OrderedDict
from typing import Any

import gymnasium as gym
import numpy as np

from r1_gui.actions import Action
from r1_gui.envs.contract import ACTION_TEXT_SPACE, INSTRUCTION_SPACE, parse_step_input, step_info
from r1_gui.envs.phone.expert import expert_action
from r1_gui.envs.phone.machine import apply
from r1_gui.envs.phone.tasks import MAX_STEPS, new_episode
from r1_gui.envs.phone.world import SETTINGS_APP
from r1_gui.synthetic import episodes, screens

logger = logging.getLogger(__name__)

DEFAULT_WIDTH, DEFAULT_HEIGHT, DEFAULT_GRID, DEFAULT_APPS = 224, 448, (3, 3), 12  # the demo's screens


def check_screen_settings(width: int, height: int, grid: tuple[int, int], apps: int) -> None:
    """The synthetic data's own checks (size, grid, app count), plus: the Settings app must be installed."""
    episodes.SyntheticConfig(width=width, height=height, grid=grid, apps=apps)
    needed = screens.APP_NAMES.index(SETTINGS_APP) + 1
    if apps < needed:
        raise ValueError(f"apps must be at least {needed}, so that the phone has the Settings app; got {apps}")


def advance(world, state, goal, action: Action) -> tuple[Any, bool, bool, str | None]:
    """One step of the phone without drawing: (next state, terminated, success, error). terminate ends the
    episode, in success only with status success in a goal state; any other action goes to the state machine."""
    if action.type == "terminate":
        return state, True, action.status == "success" and goal.reached(world, state), None
    state, error = apply(world, state, action)
    return state, False, False, error


Z95 = 1.6448536269514722  # the standard normal's 95th percentile


def check_step_latency(latency: dict | None) -> tuple[float, float] | None:
    """(mu, sigma) of the log-normal step delay of `step_latency` (see `PhoneEnv`); ValueError naming the keyword."""
    if latency is None:
        return None
    if not isinstance(latency, dict) or set(latency) != {"median", "p95"}:
        raise ValueError(f'step_latency must be {{"median": seconds, "p95": seconds}}, got {latency!r}')
    median, p95 = latency["median"], latency["p95"]
    if not (isinstance(median, (int, float)) and isinstance(p95, (int, float)) and 0 < median <= p95):
        raise ValueError(f"step_latency needs 0 < median <= p95 (seconds), got median {median!r}, p95 {p95!r}")
    return math.log(median), math.log(p95 / median) / Z95


def step_delay(mu: float, sigma: float, episode_key, step: int) -> float:
    """Seconds step `step` of the episode waits: a log-normal draw seeded by the episode and the step."""
    return random.Random(f"latency:{episode_key}:{step}").lognormvariate(mu, sigma)


class PhoneEnv(gym.Env):
    """A simulated phone on r1_gui.synthetic's screens; see the module docstring.

    Args:
        width, height: screenshot size in pixels (default the demo's 224 x 448; AITW's 1080 x 2400 works).
        grid: home-screen app grid (rows, cols); apps: how many app names (the first ones) the phone has.
        task: a family of `r1_gui.envs.TASKS` for every episode, or None (each reset draws one; reset's
            options={"task": ...} overrides either).
        max_steps: steps before truncation; None: the family's default (`r1_gui.envs.phone.tasks.MAX_STEPS`).
        coordinates: the convention of points in model text (None: each style's own).
        cache_mb: megabytes of rendered screens kept (0: draw every screen).
        step_latency: a remote device's delay before each step answers, {"median": seconds, "p95": seconds}: a
            log-normal draw with that median and 95th percentile, from the episode's seed and the step (the same
            episode waits the same); None: none. {"median": 1.0, "p95": 5.0} stands in for an emulator (one step
            in 20 over 5 s; `bench/async_rollouts.py`).
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 2}
    has_expert = True

    def __init__(
        self,
        width: int = DEFAULT_WIDTH,
        height: int = DEFAULT_HEIGHT,
        grid: tuple[int, int] = DEFAULT_GRID,
        apps: int = DEFAULT_APPS,
        task: str | None = None,
        max_steps: int | None = None,
        coordinates: str | None = None,
        render_mode: str | None = None,
        cache_mb: float = 64.0,
        step_latency: dict | None = None,
    ):
        grid = tuple(grid)
        self.latency = check_step_latency(step_latency)
        check_screen_settings(width, height, grid, apps)
        if task is not None and task not in MAX_STEPS:
            raise ValueError(f"unknown task {task!r}; valid tasks: {', '.join(MAX_STEPS)}")
        if max_steps is not None and max_steps < 1:
            raise ValueError(f"max_steps must be at least 1, got {max_steps}")
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        self.size = screens.Size(width, height)
        self.grid, self.apps, self.task, self.max_steps = grid, apps, task, max_steps
        self.coordinates, self.render_mode, self.cache_bytes = coordinates, render_mode, int(cache_mb * 2**20)
        self.observation_space = gym.spaces.Dict(
            {
                "screenshot": gym.spaces.Box(0, 255, (height, width, 3), np.uint8),
                "instruction": INSTRUCTION_SPACE,
            }
        )
        self.action_space = ACTION_TEXT_SPACE  # model text; an r1_gui Action is accepted too
        self._cache: OrderedDict[tuple, np.ndarray] = OrderedDict()
        self._cached_bytes, self._episode_key = 0, None
        self.world = self.state = self.goal = None
        self._steps, self._limit, self._ended = 0, 0, False

    @property
    def tasks(self) -> tuple[str, ...]:
        """The contract's declared task names: the families of `r1_gui.envs.phone.tasks` (MAX_STEPS' keys)."""
        return tuple(MAX_STEPS)

    # -- the episode ---------------------------------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        options = options or {}
        family = options.get("task") or self.task or self.tasks[int(self.np_random.integers(len(self.tasks)))]
        if family not in MAX_STEPS:
            raise ValueError(f"unknown task {family!r}; valid tasks: {', '.join(self.tasks)}")
        episode_seed = seed if seed is not None else int(self.np_random.integers(2**31))
        self.world, self.state, self.goal = new_episode(family, episode_seed, self.size, self.grid, self.apps)
        self._episode_key = (family, episode_seed)
        self._steps, self._ended = 0, False
        self._limit = self.max_steps or MAX_STEPS[family]
        return self._observation(), self._info()

    def step(self, action):
        if self.world is None:
            raise RuntimeError("call reset() before step()")
        self._steps += 1
        if self.latency is not None:
            time.sleep(step_delay(*self.latency, self._episode_key, self._steps))
        parsed, error = parse_step_input(action, self.coordinates, (self.size.width, self.size.height))
        terminated, success = False, False
        if self._ended:
            parsed, error, terminated = None, "the episode has ended; call reset()", True
        elif parsed is not None:
            try:
                self.state, terminated, success, error = advance(self.world, self.state, self.goal, parsed)
                self._ended = terminated
            except Exception as failure:  # the contract is "never raises"; a bug here must still be seen
                logger.exception("the phone failed on %r", parsed)
                error = f"the phone failed on this action: {failure!r}"
        truncated = not terminated and self._steps >= self._limit
        self._ended = self._ended or truncated
        info = self._info(success=success, parsed=parsed is not None, error=error, action=parsed)
        return self._observation(), 1.0 if success else 0.0, terminated, truncated, info

    def render(self):
        return None if self.render_mode is None or self.world is None else self._screenshot()

    # -- observation and info ------------------------------------------------------------------------------------

    def _screenshot(self) -> np.ndarray:
        key = (self._episode_key, self.state.view_key())
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        image = np.asarray(self.world.screen(self.state).render(self.size), dtype=np.uint8)
        image.flags.writeable = False
        self._cache[key] = image
        self._cached_bytes += image.nbytes
        while self._cached_bytes > self.cache_bytes and self._cache:
            self._cached_bytes -= self._cache.popitem(last=False)[1].nbytes
        return image

    def _observation(self) -> dict:
        return {"screenshot": self._screenshot().copy(), "instruction": self.goal.instruction}

    def _info(self, **outcome) -> dict:
        """`step_info` with this step's ``outcome`` (success, error, action, parsed: none at reset) and the expert's
        next action."""
        return step_info(
            task=self.goal.family,
            instruction=self.goal.instruction,
            screen_size=(self.size.width, self.size.height),
            step=self._steps,
            max_steps=self._limit,
            expert_action=expert_action(self.world, self.state, self.goal),
            **outcome,
        )
