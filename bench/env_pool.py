"""What stepping a group of environments side by side (EnvPool, one worker process each) costs and saves, against
stepping them one after another in the training process.

    python bench/env_pool.py                 # 8 environments: a slow backend (0.2 s a step) and the simulated phone
    python bench/env_pool.py --envs 16 --sleep 0.5

Prints, per backend, the seconds per turn of a group (every environment one step) both ways and their ratio. A
slow backend is `tests/helpers/button_env.py` with `sleep` (a browser steps in 20-200 ms, an emulator in seconds):
side by side a turn costs about one step. The phone steps in well under a millisecond, so there the pool's cost
(pickling each observation across a socket) is what shows.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # helpers.button_env

ACTIONS = ["mobile.wait(seconds=1)", "pyautogui.click(x=0.3, y=0.5)", "mobile.back()"]


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
    from r1_gui.envs.pool import EnvPool

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


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--envs", type=int, default=8, help="environments in the group (default 8)")
    parser.add_argument("--sleep", type=float, default=0.2, help="the slow backend's seconds per step")
    parser.add_argument("--turns", type=int, default=30, help="turns measured per backend (default 30)")
    args = parser.parse_args(argv)
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
