"""A hand-written OpenEnv server (openenv-core's create_app, nothing of r1_gui): a grey screen with a red button.
Its action is `{"command": str}`; its observation `screenshot` (a base64 PNG) and `goal`. An episode ends when a
command holds "terminate" or after 3 steps, with reward 1.0 when some command of the episode held "click".
`--no_screenshot` sends `pixels_hash` instead of a screenshot, as a server r1_gui cannot train on.

    python tests/helpers/openenv_button_server.py --host 127.0.0.1 --port 8123 [--no_screenshot]
"""

import argparse
import base64
import io

import numpy as np
import uvicorn
from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State
from PIL import Image


class ButtonAction(Action):
    command: str


class ButtonObservation(Observation):
    screenshot: str = ""
    goal: str = ""


class BlindObservation(Observation):
    pixels_hash: str = ""
    goal: str = ""


def screen() -> str:
    pixels = np.full((96, 64, 3), 200, np.uint8)
    pixels[40:56, 8:28] = (220, 30, 30)
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode()


def app(blind: bool):
    observation_class = BlindObservation if blind else ButtonObservation

    class ButtonEnvironment(Environment):
        SUPPORTS_CONCURRENT_SESSIONS = True

        def __init__(self):
            super().__init__()
            self.steps, self.clicked = 0, False

        def reset(self, seed=None, episode_id=None, **kwargs):
            self.steps, self.clicked = 0, False
            return self._observation(False, 0.0)

        def step(self, action, timeout_s=None, **kwargs):
            self.steps += 1
            self.clicked = self.clicked or "click" in action.command
            done = "terminate" in action.command or self.steps >= 3
            return self._observation(done, 1.0 if done and self.clicked else 0.0)

        @property
        def state(self):
            return State(step_count=self.steps)

        def _observation(self, done, reward):
            seen = {"pixels_hash": "ab12"} if blind else {"screenshot": screen()}
            return observation_class(goal="Click the red button, then stop.", done=done, reward=reward, **seen)

    return create_app(ButtonEnvironment, ButtonAction, observation_class, env_name="button", max_concurrent_envs=8)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--no_screenshot", action="store_true")
    args = parser.parse_args()
    uvicorn.run(app(args.no_screenshot), host=args.host, port=args.port, log_level="warning")
