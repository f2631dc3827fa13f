"""Policies to drive an environment without a model: the expert (from `info`) and a uniformly random one."""

from __future__ import annotations

import string

import numpy as np

from r1_gui.actions import DIRECTIONS, STATUSES, Action
from r1_gui.envs.phone.machine import PHONE_ACTIONS

RANDOM_TEXT_CHARS = string.ascii_lowercase + " "


def expert_policy(observation: dict, info: dict) -> Action:
    return info["expert_action"]


class RandomPolicy:
    """Uniformly random actions of the phone's action space: a random type, random points, short random text
    (typed text and app names alike), a random scroll direction and terminate status."""

    def __init__(self, seed: int | None = None, types: tuple[str, ...] = PHONE_ACTIONS):
        self.rng, self.types = np.random.default_rng(seed), types

    def _text(self) -> str:
        return "".join(self.rng.choice(list(RANDOM_TEXT_CHARS), size=int(self.rng.integers(1, 9))))

    def action(self) -> Action:
        kind, rng = str(self.rng.choice(self.types)), self.rng
        if kind in ("click", "long_press"):
            return Action(kind, x=float(rng.random()), y=float(rng.random()))
        if kind == "swipe":
            return Action(
                "swipe", x=float(rng.random()), y=float(rng.random()), x2=float(rng.random()), y2=float(rng.random())
            )
        if kind == "scroll":
            return Action("scroll", direction=str(rng.choice(DIRECTIONS)))
        if kind in ("type", "open_app"):
            return Action(kind, text=self._text())
        if kind == "press":
            return Action("press", keys=("enter",))
        if kind == "terminate":
            return Action("terminate", status=str(rng.choice(STATUSES)))
        if kind == "wait":
            return Action("wait", seconds=3.0)
        return Action(kind)

    def __call__(self, observation: dict, info: dict) -> Action:
        return self.action()
