"""r1_gui/Web-v0 task by task: the success rate of the DOM expert and of a random policy on each task that has an
expert, over the same seeds, in a real headless Chromium (the table in docs/records/web_tasks.md).

    python bench/web_tasks.py [--seeds 100] [--browsers 2] [--tasks click-test enter-text ...]

The expert plays `info["expert_action"]` until the episode ends; the random policy plays uniformly random clicks,
short typed texts, Enter and scrolls (`RandomPolicy` with those types), up to the environment's 10 steps. Success is
the environment's: MiniWoB's own reward > 0 when the page ends the episode. `--browsers` environments (one browser
each) play disjoint shares of the tasks in threads. Prints a Markdown table, then one JSON line.
"""

from __future__ import annotations

import argparse
import json
import time
from concurrent.futures import ThreadPoolExecutor

RANDOM_TYPES = ("click", "type", "press", "scroll")


def play(env, task: str, seed: int, policy) -> tuple[bool, int]:
    """(success, steps) of one episode; `policy(info)` gives the action."""
    _, info = env.reset(seed=seed, options={"task": task})
    while True:
        _, _, terminated, truncated, info = env.step(policy(info))
        if terminated or truncated:
            return bool(info["success"]), int(info["step"])


def measure(tasks: list[str], seeds: int) -> dict[str, dict]:
    from r1_gui.envs.contract import make_env
    from r1_gui.envs.policies import RandomPolicy

    env = make_env("r1_gui/Web-v0", {"tasks": tasks})
    results = {}
    try:
        for task in tasks:
            start = time.perf_counter()
            expert = [play(env, task, seed, lambda info: info["expert_action"]) for seed in range(seeds)]
            chooser = RandomPolicy(seed=0, types=RANDOM_TYPES)
            random = [play(env, task, seed, lambda info, chooser=chooser: chooser.action()) for seed in range(seeds)]
            results[task] = {
                "expert_success": sum(ok for ok, _ in expert) / seeds,
                "expert_steps": sum(steps for _, steps in expert) / seeds,
                "random_success": sum(ok for ok, _ in random) / seeds,
                "seconds": round(time.perf_counter() - start, 1),
            }
    finally:
        env.close()
    return results


def main() -> None:
    from r1_gui.envs.web.expert import EXPERT_TASKS

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=100, help="episodes per task and policy (seeds 0..N-1)")
    parser.add_argument("--browsers", type=int, default=2, help="environments playing at once, in threads")
    parser.add_argument("--tasks", nargs="+", default=list(EXPERT_TASKS), choices=EXPERT_TASKS, metavar="TASK")
    args = parser.parse_args()

    shares = [args.tasks[number :: args.browsers] for number in range(args.browsers)]
    with ThreadPoolExecutor(args.browsers) as pool:
        results = {}
        for share in pool.map(lambda tasks: measure(tasks, args.seeds), [share for share in shares if share]):
            results.update(share)
    print(f"| task | expert success ({args.seeds} seeds) | expert steps | random success |")
    print("|---|---|---|---|")
    for task in args.tasks:
        row = results[task]
        print(
            f"| {task} | {100 * row['expert_success']:.0f}% | {row['expert_steps']:.1f} | "
            f"{100 * row['random_success']:.0f}% |"
        )
    print(json.dumps({"seeds": args.seeds, "tasks": results}))


if __name__ == "__main__":
    main()
