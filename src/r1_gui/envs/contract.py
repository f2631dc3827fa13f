"""The environment contract: what every r1_gui environment's `reset` and `step` return, written once.

Any `gymnasium.Env` that keeps it trains with `grpo_gui.py --env ID` and evaluates with
`eval/test_phone.py --env ID`, where ID is a registered Gymnasium id or Gymnasium's `module:EnvId` form (the module
is imported first and registers its id; r1_gui looks for it in the working directory too), or `browsergym/<task>`
(BrowserGym's web tasks through `r1_gui.envs.browsergym`). No r1_gui code branches on
an environment's name: what an environment can do beyond the contract it declares (the attributes below).

    observation, info = env.reset(seed=7, options={"task": "open_app"})   # options and "task" are optional
    observation, reward, terminated, truncated, info = env.step('<tool_call>{"name": "mobile_use", ...}</tool_call>')

**Observation**: `{"screenshot": uint8 array (height, width, 3), "instruction": str}`. The same seed (and task) gives
the same first observation, so the episodes of a GRPO group play the same task instance.

**`step(action)`**: `action` is the model's raw text (any style `r1_gui.actions.extract_action` reads) or an
`r1_gui.actions.Action`. It never raises on model output: text that does not parse, points off the screen, NaN,
huge strings and actions the environment does not know are a step that changes nothing, with `info["error"]` saying
why. `reward` is 1.0 when the episode ends in success, else 0.0 (r1_gui's reward functions read `info`; GiGPO adds each
step's `reward` to its turn's per-turn reward).
`terminated`: the episode ended (the agent wrote terminate, or the task reached an end state); `truncated`: the
environment's own step limit (`info["max_steps"]`) ran out.

**`info`** (reset and every step), `INFO_KEYS`:

| key | type | meaning |
|---|---|---|
| `task` | str | the task family (or name) of this episode; metrics are reported per task |
| `instruction` | str | what the agent is asked to do (also in the observation) |
| `success` | bool | the episode has ended in success (False until it ends) |
| `error` | str or None | why the last action did nothing (did not parse, off screen, unknown), else None |
| `action` | Action or None | the action the environment parsed from the last step's input (None at reset) |
| `parsed` | bool or None | the last step's input was an action (None at reset) |
| `screen_size` | (int, int) | (width, height) of the screenshot in pixels: what "pixels" coordinates refer to |
| `step` | int | steps taken in this episode (0 at reset) |
| `max_steps` | int | the step limit after which the environment truncates |

Optional keys (`OPTIONAL_INFO_KEYS`): `expert_action` (the action an expert would take on the current screen; the
rewards that compare with it, `episode_*`, need it and say so at start-up when an environment has none), `progress`
(share of the task done, in [0, 1]), `matched` (the step matched a recorded step: replay), `raw_reward` (the backend's
own reward before r1_gui's 0/1), `target_box` (where the expert's action is a click on an element: that element's box
[x1, y1, x2, y2] normalized to the screenshot, else None; the agent loop keeps it on each turn and the episode
evaluation's `click_hit_rate` counts the clicks that land in it), `state_key` (a str naming the state the observation
shows; GiGPO's anchor groups compare it (`state_key()`, `--advantage_estimator gigpo`). Without it the state is a hash
of the screenshot and the instruction; a backend whose screenshots carry noise, a clock or an animation, names its
state here so that equal states still meet).

**Declared capabilities** (attributes of the unwrapped environment, all optional):

- `tasks`: the task names an episode is drawn from by default, which `reset(options={"task": ...})` accepts;
  `--env_tasks` (training, evaluation and play alike) chooses among them and the rows cycle through them. Without it
  every reset is the environment's own choice (seeded).
- `task_presets`: named groups of further task names `reset` accepts (e.g. the web environment's
  `miniwob_standard`); a preset's name given as a task stands for its members.
- `episode_count`: how many distinct episodes there are (a recorded split); reset seed `i` plays episode
  `i % episode_count`, so evaluation plays each once instead of cycling.
- `has_expert`: True when `info["expert_action"]` is given (default: the key is looked for on the first reset).

`check_env(env)` plays one reset and two steps (unparseable text, then the expert's action or a wait) and raises
`ContractError` naming every key or type that is off; training and evaluation run it on one environment before any
model loads, and tests run it on every backend.
"""

from __future__ import annotations

import hashlib
import math
import os
import string
import sys
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from r1_gui.actions import Action, extract_action, read_bbox
from r1_gui.flags.episodes import parse_env_kwargs  # noqa: F401  (declared with its flag; envs.serve reads it here)

INFO_KEYS = ("task", "instruction", "success", "error", "action", "parsed", "screen_size", "step", "max_steps")
OPTIONAL_INFO_KEYS = ("expert_action", "progress", "matched", "raw_reward", "target_box", "state_key")
MAX_TEXT_CHARS = 65_536  # longer model text is refused unread (a generation cut at max_new_tokens is far shorter)
INSTRUCTION_SPACE = gym.spaces.Text(min_length=1, max_length=512, charset=string.printable)
ACTION_TEXT_SPACE = gym.spaces.Text(min_length=0, max_length=256, charset=string.printable)
NO_ACTION_ERROR = "the text holds no action r1_gui can parse (mobile_use call, Aguvis code or GUI-R1 JSON)"


class ContractError(ValueError):
    """An environment does not keep r1_gui's environment contract; the message names what is off."""


def parse_step_input(
    action: Any, coordinates: str | None, image_size: tuple[int, int]
) -> tuple[Action | None, str | None]:
    """(the action, None) or (None, why it is not one) for what `step` was given. Never raises: every backend reads
    its input through this, so every backend treats bad model output the same way."""
    if isinstance(action, Action):
        return action, None
    if isinstance(action, np.str_):
        action = str(action)
    if not isinstance(action, str):
        return None, f"an action must be an r1_gui Action or the model's text, got {type(action).__name__}"
    if len(action) > MAX_TEXT_CHARS:
        return None, f"the text is {len(action)} characters long; at most {MAX_TEXT_CHARS} are read"
    try:
        parsed = extract_action(action, coordinates=coordinates, image_size=image_size)
    except Exception as error:  # "never raises": a parser bug is a step that did nothing, and says so
        return None, f"the text could not be read: {error!r}"
    if parsed is None:
        return None, NO_ACTION_ERROR
    return parsed, None


def step_info(
    *,
    task: str,
    instruction: str,
    screen_size: tuple[int, int],
    step: int,
    max_steps: int,
    success: bool = False,
    error: str | None = None,
    action: Action | None = None,
    parsed: bool | None = None,
    **optional: Any,
) -> dict:
    """An `info` dict with every contract key (reset: step 0, action and parsed None), plus `optional` keys."""
    return {
        "task": task,
        "instruction": instruction,
        "success": bool(success),
        "error": error,
        "action": action,
        "parsed": parsed,
        "screen_size": (int(screen_size[0]), int(screen_size[1])),
        "step": int(step),
        "max_steps": int(max_steps),
        **optional,
    }


# -------------------------------------------------------------------------------------- declared capabilities


def declared_tasks(env: gym.Env) -> tuple[str, ...]:
    """The task names the environment declares (`tasks`), or () when it chooses its own."""
    tasks = getattr(env.unwrapped, "tasks", None)
    return tuple(str(task) for task in tasks) if tasks else ()


def episode_count(env: gym.Env) -> int | None:
    """How many distinct episodes the environment holds, or None when there is no such bound."""
    count = getattr(env.unwrapped, "episode_count", None)
    return int(count) if count else None


def reset_plan(tasks: Sequence[str | None], episodes: int, seed_offset: int) -> list[tuple[str | None, int]]:
    """(task, seed) of each of ``episodes`` resets: episode i plays task tasks[i % len(tasks)] with seed
    seed_offset + i. The one rule of training's resets, an evaluation's and the demos' expert episodes."""
    return [(tasks[i % len(tasks)], seed_offset + i) for i in range(episodes)]


def has_expert(env: gym.Env, first_info: dict) -> bool:
    """Whether the environment gives `info["expert_action"]`: its `has_expert` attribute where it declares one, else
    whether the info of its first reset (``first_info``) holds the key."""
    declared = getattr(env.unwrapped, "has_expert", None)
    return bool(declared if declared is not None else first_info.get("expert_action") is not None)


def declared_task_presets(env: gym.Env) -> dict[str, tuple[str, ...]]:
    """The named task groups the environment declares (`task_presets`), or {}."""
    presets = getattr(env.unwrapped, "task_presets", None) or {}
    return {str(name): tuple(str(task) for task in members) for name, members in presets.items()}


def choose_tasks(
    env_id: str, declared: tuple[str, ...], wanted: list[str] | None, presets: dict[str, tuple[str, ...]] | None = None
) -> list[str | None]:
    """The tasks to cycle through: `wanted` (each declared, a member of a declared preset, or a preset's name, which
    stands for its members), all declared ones, or [None] (the environment chooses). Raises ValueError naming the
    valid tasks."""
    presets = presets or {}
    if not wanted:
        return list(declared) or [None]
    if not declared and not presets:
        raise ValueError(f"{env_id} declares no tasks (no `tasks` attribute), so --env_tasks cannot choose among them")
    accepted = set(declared).union(*presets.values())
    chosen = [member for task in wanted for member in presets.get(task, (task,))]
    unknown = [task for task in chosen if task not in accepted]
    if unknown:
        groups = f"; presets: {', '.join(presets)}" if presets else ""
        raise ValueError(f"--env_tasks: {env_id} has no task(s) {unknown}; valid: {', '.join(declared)}{groups}")
    return chosen


def reset_options(task: str | None) -> dict | None:
    return {"task": task} if task is not None else None


def state_key(observation: dict, info: dict) -> str:
    """The state an observation shows, as GiGPO's anchor groups compare it: the environment's own
    `info["state_key"]` where it gives one, else a hash of the instruction and the screenshot (its shape and bytes)."""
    named = info.get("state_key")
    if named is not None:
        return f"env:{named}"
    screenshot = np.ascontiguousarray(observation["screenshot"])
    digest = hashlib.blake2b(str(observation["instruction"]).encode(), digest_size=16)
    digest.update(repr(screenshot.shape).encode())
    digest.update(screenshot.tobytes())
    return f"screen:{digest.hexdigest()}"


# ---------------------------------------------------------------------------------------------- making one


def resolve_env_id(env_id: str) -> str:
    """`env_id` as Gymnasium takes it. For the `module:EnvId` form the working directory is put on sys.path (after
    everything else), so a user's environment in a file beside them imports as `python -m` would find it, also in
    worker processes (they inherit sys.path)."""
    if ":" in env_id and os.getcwd() not in sys.path:
        sys.path.append(os.getcwd())
    return env_id


def make_env(env_id: str, env_kwargs: dict | None = None) -> gym.Env:
    """`gymnasium.make(env_id, **env_kwargs)` with r1_gui's environments registered and the `module:EnvId` form
    resolved; a wrong id or keyword raises ValueError naming the flag to fix (not gymnasium's traceback)."""
    import r1_gui.envs.registry  # noqa: F401  (registers r1_gui's own ids)

    env_kwargs = dict(env_kwargs or {})
    if env_id.startswith(r1_gui.envs.registry.BROWSERGYM_PREFIX):  # BrowserGym's tasks, through r1_gui's adapter
        make_browsergym_env = gym.envs.registration.load_env_creator(r1_gui.envs.registry.BROWSERGYM_ENTRY_POINT)
        try:
            return make_browsergym_env(env_id, env_kwargs)
        except TypeError as error:
            raise ValueError(f"--env_kwargs {env_kwargs} does not fit {env_id}: {error}") from None
    try:
        return gym.make(resolve_env_id(env_id), disable_env_checker=True, **env_kwargs)
    except (gym.error.Error, ModuleNotFoundError) as error:
        raise ValueError(
            f"--env {env_id}: {str(error).rstrip('.')}. Give a registered id (r1_gui's: {', '.join(r1_gui_ids())}) or "
            "module:EnvId for an environment in your own module"
        ) from None
    except TypeError as error:
        raise ValueError(f"--env_kwargs {env_kwargs} does not fit {env_id}: {error}") from None


def r1_gui_ids() -> list[str]:
    return sorted(env_id for env_id in gym.registry if env_id.startswith("r1_gui/"))


# ----------------------------------------------------------------------------------------------- the check


def check_info(info: Any, where: str) -> list[str]:
    """What is off in one `info` dict (an empty list when nothing is)."""
    if not isinstance(info, dict):
        return [f"{where}: info is a {type(info).__name__}, not a dict"]
    problems = [f"{where}: info lacks {key!r}" for key in INFO_KEYS if key not in info]
    kinds = {
        "task": str,
        "instruction": str,
        "success": (bool, np.bool_),
        "step": (int, np.integer),
        "max_steps": (int, np.integer),
    }
    for key, kind in kinds.items():
        if key in info and not isinstance(info[key], kind):
            problems.append(
                f"{where}: info[{key!r}] is {type(info[key]).__name__}, not {getattr(kind, '__name__', kind)}"
            )
    if "error" in info and info["error"] is not None and not isinstance(info["error"], str):
        problems.append(f"{where}: info['error'] must be None or a str")
    if "action" in info and info["action"] is not None and not isinstance(info["action"], Action):
        problems.append(f"{where}: info['action'] must be None or an r1_gui Action")
    size = info.get("screen_size")
    if "screen_size" in info and not (
        isinstance(size, (tuple, list)) and len(size) == 2 and all(isinstance(v, (int, np.integer)) for v in size)
    ):
        problems.append(f"{where}: info['screen_size'] must be (width, height) in pixels, got {size!r}")
    expert = info.get("expert_action")
    if expert is not None and not isinstance(expert, Action):
        problems.append(f"{where}: info['expert_action'] must be None or an r1_gui Action")
    box = info.get("target_box")
    if box is not None and read_bbox(box, normalized=True) is None:
        problems.append(f"{where}: info['target_box'] must be None or [x1, y1, x2, y2] in [0, 1], got {box!r}")
    named = info.get("state_key")
    if named is not None and not (isinstance(named, str) and named):
        problems.append(f"{where}: info['state_key'] must be None or a non-empty str, got {named!r}")
    progress = info.get("progress")
    if progress is not None and not (isinstance(progress, (int, float)) and 0 <= progress <= 1):
        problems.append(f"{where}: info['progress'] must be a number in [0, 1], got {progress!r}")
    return problems


def check_observation(observation: Any, where: str) -> list[str]:
    if not isinstance(observation, dict):
        return [f"{where}: the observation is a {type(observation).__name__}, not a dict"]
    problems = []
    screenshot = observation.get("screenshot")
    if not (
        isinstance(screenshot, np.ndarray)
        and screenshot.dtype == np.uint8
        and screenshot.ndim == 3
        and screenshot.shape[2] == 3
    ):
        shape = getattr(screenshot, "shape", None)
        problems.append(f"{where}: observation['screenshot'] must be a uint8 array (height, width, 3), got {shape}")
    if not isinstance(observation.get("instruction"), str):
        problems.append(f"{where}: observation['instruction'] must be a str")
    return problems


def check_env(env: gym.Env, seed: int = 0) -> dict:
    """Play one reset and two steps and check them against the contract; returns the reset's info. Raises
    ContractError naming every problem found (an environment that raises on model output is one)."""
    problems: list[str] = []
    tasks = declared_tasks(env)
    observation, info = env.reset(seed=seed, options=reset_options(tasks[0] if tasks else None))
    problems += check_observation(observation, "reset") + check_info(info, "reset")
    if isinstance(info, dict) and info.get("step") not in (0, None):
        problems.append(f"reset: info['step'] must be 0, got {info.get('step')!r}")
    screenshot = observation.get("screenshot") if isinstance(observation, dict) else None
    if isinstance(info, dict) and isinstance(screenshot, np.ndarray) and screenshot.ndim == 3:
        height, width = screenshot.shape[:2]
        if tuple(info.get("screen_size", ())) != (width, height):
            problems.append(
                f"reset: info['screen_size'] {info.get('screen_size')} is not the screenshot's {(width, height)}"
            )
    try:
        result = env.step("this text holds no action")
    except Exception as error:
        raise ContractError(f"{env_name(env)}: step raised on text that holds no action: {error!r}") from None
    problems += _check_step(result, "step with unparseable text")
    if len(result) == 5 and isinstance(result[4], dict):
        if result[4].get("parsed") is not False or not result[4].get("error"):
            problems.append("step with unparseable text: info['parsed'] must be False and info['error'] say why")
        if not (result[2] or result[3]):
            expert = result[4].get("expert_action")
            try:
                problems += _check_step(env.step(expert or Action("wait", seconds=1.0)), "step with an action")
            except Exception as error:
                problems.append(f"step with an action raised {error!r}")
    if problems:
        raise ContractError(f"{env_name(env)} does not keep r1_gui's environment contract: " + "; ".join(problems))
    return info


def _check_step(result: Any, where: str) -> list[str]:
    if not (isinstance(result, tuple) and len(result) == 5):
        return [f"{where}: step must return (observation, reward, terminated, truncated, info)"]
    observation, reward, terminated, truncated, info = result
    problems = check_observation(observation, where) + check_info(info, where)
    if not (isinstance(reward, (int, float, np.floating, np.integer)) and math.isfinite(float(reward))):
        problems.append(f"{where}: reward must be a finite number, got {reward!r}")
    if not isinstance(terminated, (bool, np.bool_)) or not isinstance(truncated, (bool, np.bool_)):
        problems.append(f"{where}: terminated and truncated must be bools")
    return problems


def env_name(env: gym.Env) -> str:
    spec = getattr(env, "spec", None)
    return spec.id if spec is not None else type(env.unwrapped).__name__
