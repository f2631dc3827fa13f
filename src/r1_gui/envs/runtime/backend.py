"""Where a pool's environments run: `--env_backend local` (worker processes of this machine, `EnvPool`, the default),
`--env_backend ray` (one Ray actor per slot on a cluster, `r1_gui.envs.runtime.ray_pool.RayEnvPool`) or
`--env_backend openenv` (one session per slot on OpenEnv servers, `--env_url`,
`r1_gui.envs.runtime.openenv_pool.OpenEnvPool`). A command parses the flags once (declared in
`r1_gui.flags.episodes.PoolFlags`; `PoolSettings` is their parsed form) and whatever plays episodes (the agent loop,
training, evaluation, play, the demos) gets its pool from `make_pool` and sees one interface (`SlotPool`), never the
backend.

    settings = PoolSettings(backend="ray", ray_address="auto", resources={"browser": 1}, spares=2)
    with make_pool("r1_gui/Web-v0", {}, step_timeout=60, settings=settings) as pool:
        pool.reset([0, 1], [7, 8], [None, None])

The local backend never imports Ray or openenv-core, so the default starts as fast as it did before there was a
choice.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

from r1_gui.envs.runtime.pool import DEFAULT_STEP_TIMEOUT, EnvPool, EnvStartError, SlotPool, check_lent
from r1_gui.flags.episodes import parse_env_resources, parse_urls, pool_problems


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
        problems = pool_problems(self.backend, self.ray_address, self.resources, self.spares, self.urls)
        if problems:
            raise ValueError("; ".join(problems))
        object.__setattr__(self, "resources", parse_env_resources(self.resources))
        object.__setattr__(self, "urls", parse_urls(self.urls))


def pool_settings(source: Any) -> PoolSettings:
    """The PoolSettings of anything that carries the pool flags (`PoolFlags`) as attributes (an argparse namespace,
    grpo_gui.py's arguments, the episode evaluation's settings); missing ones keep their defaults."""
    names = {
        "backend": "env_backend",
        "ray_address": "ray_address",
        "resources": "env_resources",
        "spares": "env_spares",
        "urls": "env_url",
    }
    given = {key: getattr(source, name) for key, name in names.items() if getattr(source, name, None) is not None}
    return PoolSettings(**given)


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
