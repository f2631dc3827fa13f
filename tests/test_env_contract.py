"""The environment contract (r1_gui.envs.contract): every backend keeps it; a plain Gymnasium env that keeps it is
accepted, one that does not is refused naming what is off; tasks, ids and keywords are checked before any model."""

import gymnasium as gym
import numpy as np
import pytest

from r1_gui.actions import Action
from r1_gui.envs import TASKS
from r1_gui.envs.contract import (
    INFO_KEYS,
    ContractError,
    check_env,
    choose_tasks,
    declared_tasks,
    episode_count,
    make_env,
    parse_step_input,
    state_key,
    step_info,
)


class Plain(gym.Env):
    """The smallest environment that keeps the contract: one button to click, no expert, no tasks."""

    def __init__(self, broken: str | None = None):
        self.broken, self.steps = broken, 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.steps = 0
        return self._observation(), self._info()

    def step(self, action):
        self.steps += 1
        parsed, error = parse_step_input(action, None, (32, 16))
        success = parsed is not None and parsed.type == "click"
        info = self._info(success=success, error=error, action=parsed, parsed=parsed is not None)
        if self.broken == "no_task":
            del info["task"]
        if self.broken == "state_key_number":
            info["state_key"] = 7
        if self.broken == "raises" and parsed is None:
            raise ValueError("cannot read that")
        return self._observation(), float(success), success, self.steps >= 3, info

    def _observation(self):
        shape = (16, 32, 3) if self.broken != "float_screen" else (16, 32)
        return {"screenshot": np.zeros(shape, np.uint8), "instruction": "Click the button."}

    def _info(self, **changes):
        base = {"task": "button", "instruction": "Click the button.", "screen_size": (32, 16), "step": self.steps}
        return step_info(**base, max_steps=3, **changes)


def test_r1_guis_own_environments_keep_the_contract(synthetic_dataset):
    phone = make_env("r1_gui/Phone-v0")
    info = check_env(phone)
    assert set(INFO_KEYS) <= set(info) and info["expert_action"] is not None
    assert declared_tasks(phone) == TASKS and episode_count(phone) is None
    replay = make_env("r1_gui/Replay-v0", {"data_dir": str(synthetic_dataset), "split": "test"})
    check_env(replay)
    assert declared_tasks(replay) == () and episode_count(replay) == len(replay.unwrapped.episode_ids)


def test_a_plain_env_that_keeps_the_contract_passes():
    info = check_env(Plain())
    assert info["action"] is None and info["parsed"] is None and "expert_action" not in info


@pytest.mark.parametrize(
    "broken, named",
    [
        ("no_task", "info lacks 'task'"),  # a key left out of step's info
        ("float_screen", "observation['screenshot'] must be a uint8 array"),  # a grey 2-D screenshot
        ("raises", "step raised on text that holds no action"),  # model output must never raise
        # the optional anchor name must be a str (GiGPO compares it)
        ("state_key_number", "info['state_key'] must be None or a non-empty str, got 7"),
    ],
)
def test_an_env_that_breaks_the_contract_is_refused_naming_what(broken, named):
    with pytest.raises(ContractError, match=named.replace("[", r"\[").replace("(", r"\(")):
        check_env(Plain(broken))


def screen(value: int, shape=(16, 32, 3)) -> np.ndarray:
    return np.full(shape, value, np.uint8)


def one_pixel_changed() -> np.ndarray:
    changed = screen(0)
    changed[0, 0, 0] = 1
    return changed


STATE_KEY_CASES = [
    # (observation a, info a, observation b, info b, the same state?)
    # the same screenshot and instruction: one state (episodes of a reset meet there)
    ({"screenshot": screen(0), "instruction": "Go"}, {}, {"screenshot": screen(0), "instruction": "Go"}, {}, True),
    # one pixel differs: two states
    ({"screenshot": screen(0), "instruction": "Go"}, {},
     {"screenshot": one_pixel_changed(), "instruction": "Go"}, {}, False),
    # the same pixels under another instruction: two states
    ({"screenshot": screen(0), "instruction": "Go"}, {}, {"screenshot": screen(0), "instruction": "Stop"}, {}, False),
    # the same bytes in another shape: two states
    ({"screenshot": screen(0, (32, 16, 3)), "instruction": "Go"}, {},
     {"screenshot": screen(0), "instruction": "Go"}, {}, False),
    # screens that differ (a clock) but the environment names the same state: one state
    ({"screenshot": screen(0), "instruction": "Go"}, {"state_key": "home"},
     {"screenshot": screen(9), "instruction": "Go"}, {"state_key": "home"}, True),
    # the same screen that the environment names as two states: two
    ({"screenshot": screen(0), "instruction": "Go"}, {"state_key": "home"},
     {"screenshot": screen(0), "instruction": "Go"}, {"state_key": "settings"}, False),
]  # fmt: skip


@pytest.mark.parametrize(("first", "first_info", "second", "second_info", "same"), STATE_KEY_CASES)
def test_state_key(first, first_info, second, second_info, same):
    assert (state_key(first, first_info) == state_key(second, second_info)) == same


@pytest.mark.parametrize(
    "declared, wanted, expected",
    [
        (("a", "b"), None, ["a", "b"]),  # all declared tasks
        (("a", "b"), ["b"], ["b"]),  # a chosen one
        ((), None, [None]),  # the environment chooses on reset
        (("a",), ["group", "a"], ["b", "c", "a"]),  # a preset's name stands for its members
        (("a",), ["c"], ["c"]),  # a preset's member that is not a default task
    ],
)
def test_choose_tasks(declared, wanted, expected):
    assert choose_tasks("x/Env-v0", declared, wanted, {"group": ("b", "c")}) == expected


@pytest.mark.parametrize(
    "declared, wanted, message",
    [
        (("a", "b"), ["c"], "has no task(s) ['c']; valid: a, b"),  # a task the environment does not know
        ((), ["a"], "declares no tasks"),  # choosing among tasks of an environment that has none
    ],
)
def test_choose_tasks_refuses(declared, wanted, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        choose_tasks("x/Env-v0", declared, wanted)


@pytest.mark.parametrize(
    "env_id, kwargs, message",
    [
        # an unknown id lists r1_gui's ids (and gymnasium's sentence ends with one period, not two)
        ("r1_gui/Nope-v0", {}, r"--env r1_gui/Nope-v0: .* in namespace r1_gui\. Give a .* r1_gui/Phone-v0"),
        ("no_such_module:Env-v0", {}, "--env no_such_module:Env-v0"),  # a module that does not import
        ("r1_gui/Phone-v0", {"widht": 300}, "--env_kwargs .* does not fit r1_gui/Phone-v0.*widht"),  # a typo
    ],
)
def test_make_env_errors_name_the_flag(env_id, kwargs, message):
    with pytest.raises(ValueError, match=message):
        make_env(env_id, kwargs)


@pytest.mark.parametrize(
    "given, error",
    [
        (Action("back"), None),  # an Action passes through
        ("mobile.back()", None),  # Aguvis code
        ("nothing here", "holds no action"),  # text without an action
        ("x" * 70_000, "at most 65536"),  # a huge text is refused unread
        (3.5, "got float"),  # not text at all
    ],
)
def test_parse_step_input(given, error):
    action, why = parse_step_input(given, None, (100, 200))
    if error is None:
        assert action is not None and why is None
    else:
        assert action is None and error in why
