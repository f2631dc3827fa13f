"""Where a pool's environments run: `--env_backend local` (worker processes of this machine, `EnvPool`, the default),
`--env_backend ray` (one Ray actor per slot on a cluster, `r1_gui.envs.runtime.ray_pool.RayEnvPool`) or
`--env_backend openenv` (one session per slot on OpenEnv servers, `--env_url`,
`r1_gui.envs.runtime.openenv_pool.OpenEnvPool`). A command parses
the settings once (`PoolSettings`, `add_pool_arguments`) and whatever plays episodes (the agent loop, training,
evaluation, play, the demos) gets its pool from `make_pool` and sees one interface (`SlotPool`), never the backend.

    settings = PoolSettings(backend="ray", ray_address="auto", resources={"browser": 1}, spares=2)
    with make_pool("r1_gui/Web-v0", {}, step_timeout=60, settings=settings) as pool:
        pool.reset([0, 1], [7, 8], [None, None])

The local backend never imports Ray or openenv-core, so the default starts as fast as it did before there was a
choice.
"""

from __future__ import annotations

import argparse
import contextlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from r1_gui.envs.contract import parse_json_object
from r1_gui.envs.runtime.pool import DEFAULT_STEP_TIMEOUT, EnvPool, EnvStartError, SlotPool, check_lent

BACKENDS = ("local", "ray", "openenv")


@dataclass(frozen=True)
class PoolSettings:
    """How a pool runs its environments; each field is a flag (`--env_backend`, `--ray_address`, `--env_resources`,
    `--env_spares`, `--env_url`)."""

    backend: str = "local"
    # "auto": the cluster RAY_ADDRESS or `ray start` on this machine names, else a local Ray started for the run
    ray_address: str = "auto"
    # what one environment asks of the cluster, e.g. {"browser": 1}: a custom resource that only environment hosts
    # advertise keeps every environment off the trainer's node
    resources: dict = field(default_factory=dict)
    spares: int = 0  # actors built and reset-ready beside the slots, so a failed slot is replaced in the same step
    urls: tuple[str, ...] = ()  # OpenEnv servers whose sessions are the slots (--env_backend openenv)

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ValueError(f"--env_backend must be one of {', '.join(BACKENDS)}, got {self.backend!r}")
        object.__setattr__(self, "resources", parse_env_resources(self.resources))
        if isinstance(self.spares, bool) or not isinstance(self.spares, int) or self.spares < 0:
            raise ValueError(f"--env_spares must be 0 or a positive number of spare environments, got {self.spares!r}")
        if not isinstance(self.ray_address, str) or not self.ray_address.strip():
            raise ValueError(f"--ray_address must be auto or HOST:PORT of a Ray cluster, got {self.ray_address!r}")
        if self.backend != "ray" and (self.resources or self.spares):
            given = "--env_resources" if self.resources else "--env_spares"
            raise ValueError(f"{given} places environments on a Ray cluster: add --env_backend ray, or drop {given}")
        object.__setattr__(self, "urls", parse_urls(self.urls))
        if self.backend == "openenv" and not self.urls:
            raise ValueError("--env_backend openenv needs --env_url http://HOST:PORT of one or more OpenEnv servers")
        if self.backend != "openenv" and self.urls:
            raise ValueError("--env_url names OpenEnv servers to play on: add --env_backend openenv, or drop --env_url")


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


def pool_settings(source: Any) -> PoolSettings:
    """The PoolSettings of anything that carries the four flags as attributes (an argparse namespace, grpo_gui.py's
    arguments, the episode evaluation's settings); missing ones keep their defaults."""
    names = {
        "backend": "env_backend",
        "ray_address": "ray_address",
        "resources": "env_resources",
        "spares": "env_spares",
        "urls": "env_url",
    }
    given = {key: getattr(source, name) for key, name in names.items() if getattr(source, name, None) is not None}
    return PoolSettings(**given)


def add_pool_arguments(parser: argparse.ArgumentParser) -> None:
    """--env_backend, --ray_address, --env_resources, --env_spares and --env_url, for the command lines that play
    episodes."""

    def resources(text: str) -> dict:
        try:
            return parse_env_resources(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error).removeprefix("--env_resources").lstrip(": ")) from None

    group = parser.add_argument_group("where the environments run")
    group.add_argument(
        "--env_backend",
        choices=BACKENDS,
        default="local",
        help="local: worker processes of this machine (default); ray: one Ray actor per environment on a cluster; "
        "openenv: one session per environment on OpenEnv servers (--env_url)",
    )
    group.add_argument(
        "--ray_address",
        default="auto",
        help="with --env_backend ray: HOST:PORT of the cluster's head, or auto (default): the cluster RAY_ADDRESS or "
        "`ray start` on this machine names, else a local Ray started for this run",
    )
    group.add_argument(
        "--env_resources",
        type=resources,
        default={},
        help="with --env_backend ray: what one environment asks of the cluster, as JSON, e.g. '{\"browser\": 1}' (a "
        "resource only environment hosts advertise: ray start ... --resources='{\"browser\": 8}')",
    )
    group.add_argument(
        "--env_spares",
        type=int,
        default=0,
        help="with --env_backend ray: environments kept built and reset-ready beside the slots; a failed slot is "
        "replaced by one within the same step",
    )
    group.add_argument(
        "--env_url",
        default=None,
        help="with --env_backend openenv: http://HOST:PORT of OpenEnv servers (r1-gui-env-serve or any other), "
        "comma-separated; slot i is a session on server i mod their number",
    )


def make_pool(
    env_id: str,
    env_kwargs: dict | None = None,
    *,
    step_timeout: float = DEFAULT_STEP_TIMEOUT,
    settings: PoolSettings | None = None,
    **options: Any,
) -> SlotPool:
    """A pool of `env_id` on the backend `settings` names (default: this machine's worker processes); `options`
    (reset_retries, max_starting) go to the pool as they are."""
    settings = settings or PoolSettings()
    if settings.backend == "local":
        return EnvPool(env_id, env_kwargs, step_timeout=step_timeout, **options)
    if settings.backend == "openenv":
        from r1_gui.envs.runtime.openenv_pool import OpenEnvPool

        return OpenEnvPool(env_id, env_kwargs, urls=settings.urls, step_timeout=step_timeout, **options)
    from r1_gui.envs.runtime.ray_pool import RayEnvPool

    return RayEnvPool(
        env_id,
        env_kwargs,
        step_timeout=step_timeout,
        address=settings.ray_address,
        resources=settings.resources,
        spares=settings.spares,
        **options,
    )


def lent_or_own(
    pool: SlotPool | None,
    env_id: str,
    env_kwargs: dict | None,
    step_timeout: float,
    settings: PoolSettings | None = None,
) -> contextlib.AbstractContextManager[SlotPool]:
    """What to play in: `with lent_or_own(...) as pool:` gives the lent pool (`check_lent`), left open at the end,
    or, for None, a pool of its own on the backend `settings` names, closed at the end."""
    if pool is None:
        return make_pool(env_id, env_kwargs, step_timeout=step_timeout, settings=settings)
    return contextlib.nullcontext(check_lent(pool, env_id, env_kwargs, step_timeout))


def open_env(env_id: str, env_kwargs: dict | None = None, settings: PoolSettings | None = None, seed: int = 0):
    """One environment for code that plays one episode at a time (`python -m r1_gui.play`): built in this process
    for the local backend (as it always was), else slot 0 of a pool on the backend (`PooledEnv`)."""
    settings = settings or PoolSettings()
    if settings.backend == "local":
        from r1_gui.envs.contract import make_env

        return make_env(env_id, env_kwargs)
    return PooledEnv(make_pool(env_id, env_kwargs, settings=settings), seed=seed)


class PooledEnv:
    """Slot 0 of a pool seen as one Gymnasium environment (reset, step, close and the declared capabilities of
    `r1_gui.envs.contract`), for code that plays one episode at a time (`python -m r1_gui.play`). A failed step or
    reset raises EnvStartError with the pool's reason, as the environment's own error would in this process."""

    def __init__(self, pool: SlotPool, seed: int = 0):
        self.pool = pool
        described = pool.describe(seed=seed)
        self.tasks, self.task_presets = described.tasks, described.task_presets
        self.episode_count, self.has_expert = described.episode_count, described.has_expert

    @property
    def unwrapped(self) -> PooledEnv:
        return self

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple:
        (outcome,) = self.pool.reset([0], [0 if seed is None else seed], [(options or {}).get("task")])
        return outcome.result

    def step(self, action: Any) -> tuple:
        (outcome,) = self.pool.step([0], [action])
        if not outcome.ok:
            raise EnvStartError(f"{self.pool.env_id} failed during the episode: {outcome.failure}")
        return outcome.result

    def close(self) -> None:
        self.pool.close()
