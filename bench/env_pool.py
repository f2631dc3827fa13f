"""What stepping a group of environments side by side (EnvPool, one worker process each) costs and saves, against
stepping them one after another in the training process; and what the Ray backend (`--env_backend ray`, one actor
each) costs against the local pool.

    python bench/env_pool.py                 # 8 environments: a slow backend (0.2 s a step) and the simulated phone
    python bench/env_pool.py --envs 16 --sleep 0.5
    python bench/env_pool.py --ray           # Ray over local: Phone-v0 (8 environments), Web-v0 (4 browsers)
    python bench/env_pool.py --ray --ray_address HEAD:6379 --env_resources '{"browser": 1}'   # on a cluster

Prints, per backend, the seconds per turn of a group (every environment one step) both ways and their ratio. A
slow backend is `tests/helpers/button_env.py` with `sleep` (a browser steps in 20-200 ms, an emulator in seconds):
side by side a turn costs about one step. The phone steps in well under a millisecond, so there the pool's cost
(pickling each observation across a socket) is what shows.

With --ray both pools are open at once and their turns alternate (local, Ray, local, ...), so a change in the
machine's load falls on both; `--ray_address auto` with no cluster running starts a local Ray on this machine, so
the ratio is Ray's own cost (a call through the actor, the observation through the object store), not other
machines' cores.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # helpers.button_env

ACTIONS = ["mobile.wait(seconds=1)", "pyautogui.click(x=0.3, y=0.5)", "mobile.back()"]
# a browser step that does something (a wait would sleep and a back does nothing on a web page)
CLICKS = ["pyautogui.click(x=0.3, y=0.5)", "pyautogui.click(x=0.6, y=0.4)", "pyautogui.click(x=0.5, y=0.7)"]


def sequential(env_id: str, kwargs: dict, envs: int, turns: int) -> float:
    from r1_gui.envs.contract import make_env

    group = [make_env(env_id, kwargs) for _ in range(envs)]
    for index, env in enumerate(group):
        env.reset(seed=index)
    start = time.perf_counter()
    for turn in range(turns):
        for index, env in enumerate(group):
            _, _, terminated, truncated, _ = env.step(ACTIONS[turn % len(ACTIONS)])
            if terminated or truncated:
                env.reset(seed=index)
    return (time.perf_counter() - start) / turns


def pooled(env_id: str, kwargs: dict, envs: int, turns: int) -> float:
    from r1_gui.envs.runtime.pool import EnvPool

    slots = list(range(envs))
    with EnvPool(env_id, kwargs) as pool:
        pool.reset(slots, slots, [None] * envs)
        pool.step(slots, ["mobile.wait(seconds=1)"] * envs)  # every worker up and warm
        start = time.perf_counter()
        for turn in range(turns):
            outcomes = pool.step(slots, [ACTIONS[turn % len(ACTIONS)]] * envs)
            ended = [slot for slot, o in zip(slots, outcomes, strict=True) if o.result[2] or o.result[3]]
            if ended:
                pool.reset(ended, ended, [None] * len(ended))
        return (time.perf_counter() - start) / turns


def ray_over_local(env_id: str, kwargs: dict, envs: int, turns: int, actions: list[str], ray_settings) -> dict:
    """Seconds per turn of the local pool and of the Ray pool, their turns alternating."""
    from r1_gui.envs.runtime.backend import make_pool

    slots = list(range(envs))
    seconds = {"local": 0.0, "ray": 0.0}
    with make_pool(env_id, kwargs) as local, make_pool(env_id, kwargs, settings=ray_settings) as ray:
        pools = {"local": local, "ray": ray}
        for pool in pools.values():
            pool.reset(slots, slots, [None] * envs)
            pool.step(slots, [actions[0]] * envs)  # every environment up and warm
        for turn in range(turns):
            for name, pool in pools.items():
                start = time.perf_counter()
                outcomes = pool.step(slots, [actions[turn % len(actions)]] * envs)
                seconds[name] += time.perf_counter() - start
                ended = [
                    slot for slot, o in zip(slots, outcomes, strict=True) if not o.ok or o.result[2] or o.result[3]
                ]
                if ended:  # resets are not timed: a turn is what the comparison is about
                    pool.reset(ended, ended, [None] * len(ended))
        failures = {name: pool.failures for name, pool in pools.items()}
    local_s, ray_s = seconds["local"] / turns, seconds["ray"] / turns
    return {"local_s": local_s, "ray_s": ray_s, "ratio": ray_s / local_s, "failures": failures}


def main_ray(args) -> dict:
    from r1_gui.envs.runtime.backend import PoolSettings

    settings = PoolSettings("ray", args.ray_address, args.env_resources or {}, 0)
    backends = {
        "r1_gui/Phone-v0": ({}, 8, args.turns, ACTIONS),
        "r1_gui/Web-v0": ({"max_steps": 5}, 4, args.turns, CLICKS),
    }
    results = {}
    for env_id, (kwargs, envs, turns, actions) in backends.items():
        result = results[env_id] = ray_over_local(env_id, kwargs, envs, turns, actions, settings)
        print(
            f"{env_id}: {envs} environments, {turns} turns: {result['local_s'] * 1000:.1f} ms a turn in the local "
            f"pool, {result['ray_s'] * 1000:.1f} ms through Ray (ray/local {result['ratio']:.3f}); "
            f"environment failures {result['failures']}"
        )
    print(json.dumps({env_id: round(result["ratio"], 3) for env_id, result in results.items()}))
    return results


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--envs", type=int, default=8, help="environments in the group (default 8)")
    parser.add_argument("--sleep", type=float, default=0.2, help="the slow backend's seconds per step")
    parser.add_argument("--turns", type=int, default=30, help="turns measured per backend (default 30)")
    parser.add_argument("--ray", action="store_true", help="Ray over local for Phone-v0 and Web-v0 instead")
    parser.add_argument("--ray_address", default="auto", help="with --ray: the cluster (default: auto)")
    parser.add_argument("--env_resources", type=json.loads, default=None, help="with --ray: what one env asks")
    args = parser.parse_args(argv)
    if args.ray:
        return main_ray(args)
    backends = {
        f"slow backend ({args.sleep:g} s a step)": (
            "helpers.button_env:Button-v0",
            {"sleep": args.sleep, "max_steps": 50},
        ),
        "simulated phone (224x448)": ("r1_gui/Phone-v0", {}),
    }
    results = {}
    for name, (env_id, kwargs) in backends.items():
        turns = max(3, args.turns // 5) if "slow" in name else args.turns
        one_by_one = sequential(env_id, kwargs, args.envs, turns)
        side_by_side = pooled(env_id, kwargs, args.envs, turns)
        results[name] = {"sequential_s": one_by_one, "pool_s": side_by_side, "ratio": side_by_side / one_by_one}
        print(
            f"{name}: {args.envs} environments, one turn: {one_by_one * 1000:.1f} ms one after another, "
            f"{side_by_side * 1000:.1f} ms side by side (pool/sequential {side_by_side / one_by_one:.3f})"
        )
    return results


if __name__ == "__main__":
    main()
