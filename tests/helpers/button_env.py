"""A plain Gymnasium environment in a user's own file, keeping r1_gui's environment contract in a few dozen lines:
a red button on a grey screen; clicking it (or terminate after it) succeeds. It imports nothing of r1_gui but the
two contract helpers, registers `Button-v0` on import, so `--env button_env:Button-v0` (or
`helpers.button_env:Button-v0`) trains and evaluates it, and can misbehave on purpose for the pool's tests:
`sleep` seconds per step, `raise_on_step` / `hang_on_step` (1-based step numbers), `child` (start a `sleep`
process that must be ended with the environment), `expert=False` (no info["expert_action"])."""

import subprocess
import time

import gymnasium as gym
import numpy as np

from r1_gui.envs.contract import parse_step_input, step_info

WIDTH, HEIGHT = 64, 96


class ButtonEnv(gym.Env):
    tasks = ("left", "right")  # where the button is

    def __init__(
        self, sleep=0.0, raise_on_step=None, hang_on_step=None, child=False, max_steps=4, expert=True,
        start_sleep=0.0, start_log=None,
    ):  # fmt: skip
        began = time.time()
        time.sleep(start_sleep)
        if start_log is not None:
            with open(start_log, "a") as log:
                log.write(f"{began} {time.time()}\n")
        self.sleep, self.raise_on_step, self.hang_on_step = sleep, raise_on_step, hang_on_step
        self.max_steps, self.has_expert = max_steps, expert
        self.child = subprocess.Popen(["sleep", "1000"]) if child else None
        self.task, self.steps, self.clicked = "left", 0, False

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.task = (options or {}).get("task") or self.tasks[int(self.np_random.integers(2))]
        self.steps, self.clicked = 0, False
        return self._observation(), self._info()

    def step(self, action):
        self.steps += 1
        if self.steps == self.raise_on_step:
            raise RuntimeError(f"the backend broke on step {self.steps}")
        if self.steps == self.hang_on_step:
            time.sleep(10_000)
        time.sleep(self.sleep)
        action, error = parse_step_input(action, None, (WIDTH, HEIGHT))
        done = False
        if action is not None and action.type == "click":
            left, right = self._button()
            self.clicked = self.clicked or (left <= action.x * WIDTH <= right and 40 <= action.y * HEIGHT <= 56)
        elif action is not None and action.type == "terminate":
            done = True
        success = done and self.clicked
        truncated = not done and self.steps >= self.max_steps
        info = self._info(success=success, error=error, action=action, parsed=action is not None)
        return self._observation(), float(success), done, truncated, info

    def close(self):
        if self.child is not None:
            self.child.kill()
            self.child.wait()

    def _button(self):
        return (8, 28) if self.task == "left" else (36, 56)

    def _observation(self):
        screen = np.full((HEIGHT, WIDTH, 3), 200, np.uint8)
        left, right = self._button()
        screen[40:56, left:right] = (220, 30, 30)
        return {"screenshot": screen, "instruction": "Click the red button, then stop."}

    def _info(self, **changes):
        left, right = self._button()
        expert = (
            "terminate(status='success')"
            if self.clicked
            else f"pyautogui.click(x={(left + right) / 2 / WIDTH:.3f}, y=0.5)"
        )
        return step_info(
            task=self.task,
            instruction="Click the red button, then stop.",
            screen_size=(WIDTH, HEIGHT),
            step=self.steps,
            max_steps=self.max_steps,
            **({"expert_action": parse_step_input(expert, None, (WIDTH, HEIGHT))[0]} if self.has_expert else {}),
            **changes,
        )


if "Button-v0" not in gym.registry:
    gym.register(id="Button-v0", entry_point=ButtonEnv)
