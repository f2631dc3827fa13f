"""The flags of playing episodes, declared once for every command that plays them: multi-turn training
(`grpo_gui.py --env`), the episode evaluation (eval/test_phone.py) and `python -m r1_gui.play`.

- `EnvFlags`: which environment, its keywords, tasks, resets and step timeout;
- `PoolFlags`: where the environments run (`r1_gui.envs.runtime.backend.PoolSettings` is their parsed form);
- `TurnFlags`: how long an episode may be and how much of it each turn sees.

Their defaults are the ones training uses; a command with other defaults gives its own (`add_flags(..., defaults=)`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from r1_gui.flags import Flags, at_least, flag, parse_json_object

DEFAULT_STEP_TIMEOUT = 120.0  # seconds; a browser step takes 20-200 ms, an emulator's seconds
DEFAULT_MAX_TURNS = 12  # turns per episode before it is truncated
DEFAULT_HISTORY_IMAGES = 2  # screenshots each turn sees (the newest)
BACKENDS = ("local", "ray", "openenv")  # where a pool's environments run (r1_gui.envs.runtime.backend)
PLAYED_ENV = "r1_gui/Phone-v0"  # what the episode evaluation and play play when --env is left out


@dataclass
class EnvFlags(Flags):
    """Which environment is played, and which of its episodes."""

    env_id: str | None = flag(
        None,
        "The environment whose episodes are played (in training: trained on, instead of a dataset): any Gymnasium id "
        "that keeps r1_gui's environment contract (r1_gui/Phone-v0, r1_gui/Replay-v0, r1_gui/Web-v0, or module:EnvId "
        "for your own; see r1_gui.envs.contract). --env or --env_id; env_id in a YAML recipe.",
        aliases=["--env"],  # `env:` in a YAML recipe is TrlParser's environment variables: write env_id there
    )
    env_kwargs: str | None = flag(
        None, 'gymnasium.make keywords as a JSON object, e.g. \'{"data_dir": "data/aitw-2k", "split": "train"}\'.'
    )
    env_tasks: list[str] | None = flag(
        None, "Tasks to play, among those the environment declares (or a preset of them it names); left out: all."
    )
    env_episodes: int = flag(512, "Episodes: the distinct resets (task, seed) to train on, or the episodes to play.")
    env_seed_offset: int = flag(
        0,
        "The first reset seed: episode i plays seed OFFSET + i. Keep evaluation seeds apart from training's (the "
        "episode evaluation starts at 100000 by default).",
    )
    env_step_timeout: float = flag(
        DEFAULT_STEP_TIMEOUT,
        "Seconds one environment step may take; an environment that runs past it (or raises) is rebuilt and its "
        "episode scored as failed.",
    )

    def problems(self) -> list[str]:
        found = [*super().problems(), *at_least("env_episodes", self.env_episodes, 1)]
        try:
            parse_env_kwargs(self.env_kwargs)
        except ValueError as error:
            found.append(str(error))
        if not self.env_step_timeout > 0:
            found.append(f"--env_step_timeout must be a number of seconds above 0, got {self.env_step_timeout}")
        return found


def parse_env_kwargs(text: str | dict | None) -> dict:
    """--env_kwargs: a JSON object of gymnasium.make keywords ({} when not given); ValueError naming the flag."""
    return parse_json_object(text, "--env_kwargs", "of gymnasium.make keywords")


@dataclass
class PoolFlags(Flags):
    """Where the environments run: this machine's worker processes, or Ray actors on a cluster."""

    env_backend: str = flag(
        "local",
        "Where the environments run: local (worker processes of this machine), ray (one Ray actor per environment "
        "on a cluster; see docs/guide/environments.md, 'Environments on a cluster') or openenv (one session per environment on the "
        "OpenEnv servers of --env_url; see README 'Environments from elsewhere').",
        choices=BACKENDS,
    )
    ray_address: str = flag(
        "auto",
        "With --env_backend ray: HOST:PORT of the cluster's head, or auto: the cluster RAY_ADDRESS or `ray start` on "
        "this machine names, else a local Ray started for this run.",
    )
    env_resources: str | None = flag(
        None,
        "With --env_backend ray: what one environment asks of the cluster, as JSON, e.g. '{\"browser\": 1}' (a "
        "resource only environment hosts advertise, ray start ... --resources='{\"browser\": 8}', keeps environments "
        "off the trainer's node).",
    )
    env_spares: int = flag(
        0,
        "With --env_backend ray: environments kept built and reset-ready beside the slots; a failed slot is replaced "
        "by one within the same step.",
    )

    env_url: str | None = flag(
        None,
        "With --env_backend openenv: http://HOST:PORT of OpenEnv servers (r1-gui-env-serve or any other), "
        "comma-separated; --env names what they serve, and slot i is a session on server i mod their number.",
    )

    def problems(self) -> list[str]:
        return [*super().problems(), *pool_problems(self.env_backend, self.ray_address, self.env_resources,
                                                    self.env_spares, self.env_url)]  # fmt: skip


def parse_env_resources(value: str | dict | None) -> dict:
    """--env_resources: a JSON object (or a dict, from a YAML recipe) of Ray resource names and amounts, e.g.
    {"browser": 1} or {"CPU": 0.5}; ValueError naming the flag."""
    value = parse_json_object(value, "--env_resources", 'of Ray resources and amounts, such as {"browser": 1}')
    for name, amount in value.items():
        if not (
            isinstance(amount, (int, float)) and not isinstance(amount, bool) and math.isfinite(amount) and amount >= 0
        ):
            raise ValueError(f"--env_resources: {name!r} must be a number of 0 or more, got {amount!r}")
    return {str(name): amount for name, amount in value.items()}


def parse_urls(value: str | Sequence[str] | None) -> tuple[str, ...]:
    """--env_url: one or more http(s)://HOST:PORT, comma-separated (or a list, from a YAML recipe); ValueError naming
    the flag."""
    if not value:
        return ()
    items = value.split(",") if isinstance(value, str) else list(value)
    urls = tuple(str(item).strip().rstrip("/") for item in items if str(item).strip())
    bad = [url for url in urls if not url.startswith(("http://", "https://", "ws://", "wss://"))]
    if bad or not urls:
        raise ValueError(f"--env_url takes http://HOST:PORT of OpenEnv servers, comma-separated, got {value!r}")
    return urls


def pool_problems(backend: str, ray_address: Any, resources: Any, spares: Any, urls: Any = None) -> list[str]:
    """What is wrong with the pool flags (an empty list when nothing is): every problem, each naming its flag."""
    found = []
    if backend not in BACKENDS:
        found.append(f"--env_backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    try:
        resources = parse_env_resources(resources)
    except ValueError as error:
        found.append(str(error))
    if isinstance(spares, bool) or not isinstance(spares, int) or spares < 0:
        found.append(f"--env_spares must be 0 or a positive number of spare environments, got {spares!r}")
    if not isinstance(ray_address, str) or not ray_address.strip():
        found.append(f"--ray_address must be auto or HOST:PORT of a Ray cluster, got {ray_address!r}")
    if backend != "ray" and (resources or (isinstance(spares, int) and spares > 0)):
        given = "--env_resources" if resources else "--env_spares"
        found.append(f"{given} places environments on a Ray cluster: add --env_backend ray, or drop {given}")
    try:
        urls = parse_urls(urls)
    except ValueError as error:
        found.append(str(error))
    if backend == "openenv" and not urls:
        found.append("--env_backend openenv needs --env_url http://HOST:PORT of one or more OpenEnv servers")
    if backend != "openenv" and urls:
        found.append("--env_url names OpenEnv servers to play on: add --env_backend openenv, or drop --env_url")
    return found


@dataclass
class TurnFlags(Flags):
    """How long an episode may be, and how much of it each turn sees."""

    max_turns: int = flag(
        DEFAULT_MAX_TURNS,
        "Turns an episode may take before it is cut short (and scored as it stands). trl's "
        "max_tool_calling_iterations bounds trl's own tool loop, which r1_gui's episodes do not use.",
    )
    history_images: int = flag(
        DEFAULT_HISTORY_IMAGES,
        "Screenshots each turn sees (the newest); older ones are dropped, their turns kept as text.",
    )

    def problems(self) -> list[str]:
        return [*super().problems(), *at_least("max_turns", self.max_turns, 1),
                *at_least("history_images", self.history_images, 1)]  # fmt: skip
