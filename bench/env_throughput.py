"""PhoneEnv throughput: steps per second (rendering included) at the demo's screen size and at AITW's 1080 x 2400,
and the cost of one env step against one generation turn of the `small` tiny model on the same screen.

    python bench/env_throughput.py [--steps 4000] [--aitw_steps 300] [--turns 8] [--max_new_tokens 48]
    python bench/env_throughput.py --web [--web_browsers 1 2 4 8] [--web_resets 20] [--web_steps 40]

One process, one thread for the environment (pure Python + PIL), so the figures are one core's. Two policies:
`random` (uniform random actions: most change nothing, so the screen comes from the cache of rendered states) and
`expert` (every step moves to a new screen: mostly drawing). Steps per second are given per wall second and per CPU
second of the process (what one core delivers when others share the machine). Each policy runs with the render
cache on (64 MB, the default) and off (`cache_mb=0`); the expert also plays each seed 8 times in a row, as a GRPO
group of 8 rollouts would (the later rollouts find their screens cached). Only `env.step` is timed (not resets),
after a warm-up pass (fonts, glyph masks of recurring labels). The environment's share of a rollout turn is the
expert's mean step time over (that + one greedy generation turn): `HFGenerator`, the evaluation's generator, with
the demo's settings (aguvis prompt, max_pixels 50176, up to 48 new tokens, one torch thread) on a screenshot of the
same size. Targets: >= 1000 steps/s at the demo's size; the environment <= 5% of a rollout turn.

`--web` measures r1_gui/Web-v0 instead (MiniWoB++ in headless Chromium): 1, 2, 4 and 8 browsers (one environment
each, in threads of this process, all started before timing) each play resets, then steps, at once; resets/s and
steps/s are totals over all browsers per wall second. A reset restarts the page's episode (same task: the page stays
loaded; "new task": a page load every reset); a step clicks the instruction bar (it never ends a task) and returns
the next screenshot, MiniWoB's state and the expert's next action, all of a real step. Memory per browser: PSS and
RSS of its whole process tree (chromedriver and every Chromium process, /proc/PID/smaps_rollup) after the run.
Prints a table, then one JSON line.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path


def steps_per_second(
    width: int, height: int, policy: str, steps: int, cache_mb: float, group: int = 1, first_seed: int = 0
) -> tuple[float, float, float]:
    """(steps per wall second, steps per CPU second of this process, mean wall seconds per step) of env.step over
    `steps` steps; each episode seed is played `group` times in a row (GRPO's group), the family drawn from the seed."""
    from r1_gui.envs import PhoneEnv
    from r1_gui.envs.policies import RandomPolicy

    env = PhoneEnv(width=width, height=height, cache_mb=cache_mb)
    chooser = RandomPolicy(seed=0)
    elapsed, cpu, done, episode = 0.0, 0.0, 0, 0
    observation, info = env.reset(seed=first_seed)
    while done < steps:
        action = info["expert_action"] if policy == "expert" else chooser.action()
        start, start_cpu = time.perf_counter(), time.process_time()
        observation, _, terminated, truncated, info = env.step(action)
        elapsed, cpu = elapsed + time.perf_counter() - start, cpu + time.process_time() - start_cpu
        done += 1
        if terminated or truncated:
            episode += 1
            observation, info = env.reset(seed=first_seed + episode // group)
    return done / elapsed, done / cpu, elapsed / done


def generation_seconds(width: int, height: int, turns: int, max_new_tokens: int, folder: Path) -> float:
    """Median seconds of one greedy generation turn of the small tiny Qwen2-VL on a PhoneEnv screenshot."""
    import torch
    from PIL import Image

    from r1_gui.envs import PhoneEnv
    from r1_gui.generation import HFGenerator
    from r1_gui.synthetic.aguvis_records import HUMAN_TEMPLATE
    from r1_gui.tiny import build_tiny_model

    torch.set_num_threads(1)  # one core, as the environment
    model = folder / "small"
    if not model.is_dir():
        build_tiny_model(model, arch="qwen2_vl", size="small")
    generator = HFGenerator(
        model, prompt_style="aguvis", max_pixels=50176, max_new_tokens=max_new_tokens, device="cpu", dtype="float32"
    )
    observation, _ = PhoneEnv(width=width, height=height, task="web_search").reset(seed=0)
    problem = HUMAN_TEMPLATE.format(instruction=observation["instruction"], history="None").removeprefix("<image>\n")
    row = {"problem": problem, "image": Image.fromarray(observation["screenshot"])}
    generator.generate([row])  # warm-up
    times = []
    for _ in range(turns):
        start = time.perf_counter()
        generator.generate([row])
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def web_throughput(browsers: int, resets: int, steps: int) -> dict:
    """`browsers` Web-v0 environments in as many threads: start-up seconds, resets/s (same task and a new task
    every reset) and steps/s summed over the browsers per wall second, and each browser tree's PSS and RSS."""
    from concurrent.futures import ThreadPoolExecutor

    from r1_gui.actions import Action
    from r1_gui.envs.runtime.processes import tree_memory
    from r1_gui.envs.web.env import WebEnv
    from r1_gui.envs.web.expert import EXPERT_TASKS

    envs = [WebEnv(max_steps=steps + 1) for _ in range(browsers)]
    bar = Action("click", x=0.5, y=0.05)  # the instruction bar: on every page, never an answer

    def timed(job) -> float:
        with ThreadPoolExecutor(browsers) as pool:
            start = time.perf_counter()
            list(pool.map(job, range(browsers)))
            return time.perf_counter() - start

    def same_task(number):
        for seed in range(resets):
            envs[number].reset(seed=seed, options={"task": "click-test-2"})

    def new_task(number):
        for seed in range(resets):
            envs[number].reset(seed=seed, options={"task": EXPERT_TASKS[(seed + number) % len(EXPERT_TASKS)]})

    def stepping(number):
        envs[number].reset(seed=number, options={"task": "enter-text"})
        for _ in range(steps):
            envs[number].step(bar)

    try:
        startup = timed(lambda number: envs[number].reset(seed=0, options={"task": "click-test-2"}))
        same, new, stepped = timed(same_task), timed(new_task), timed(stepping)
        memory = [tree_memory(env.browser.pids()) for env in envs]
    finally:
        for env in envs:
            env.close()
    return {
        "browsers": browsers,
        "startup_s": round(startup, 2),
        "resets_per_s": round(browsers * resets / same, 1),
        "new_task_resets_per_s": round(browsers * resets / new, 1),
        "steps_per_s": round(browsers * steps / stepped, 1),
        "pss_mb_per_browser": round(sum(pss for pss, _ in memory) / browsers / 2**20, 1),
        "rss_mb_per_browser": round(sum(rss for _, rss in memory) / browsers / 2**20, 1),
    }


def web_main(args) -> None:
    rows = [web_throughput(count, args.web_resets, args.web_steps) for count in args.web_browsers]
    print(
        "| browsers | start-up s | resets/s (same task) | resets/s (new task) | steps/s | PSS MB per browser | RSS MB per browser |"
    )
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        print(
            f"| {row['browsers']} | {row['startup_s']} | {row['resets_per_s']} | {row['new_task_resets_per_s']} | "
            f"{row['steps_per_s']} | {row['pss_mb_per_browser']} | {row['rss_mb_per_browser']} |"
        )
    print(json.dumps({"web": rows}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=4000, help="env steps per measurement at the demo's size")
    parser.add_argument("--aitw_steps", type=int, default=300, help="env steps per measurement at 1080 x 2400")
    parser.add_argument("--turns", type=int, default=8, help="generation turns timed per screen size")
    parser.add_argument("--max_new_tokens", type=int, default=48, help="generation length (the demo's completions)")
    parser.add_argument("--web", action="store_true", help="measure r1_gui/Web-v0 (headless Chromium) instead")
    parser.add_argument("--web_browsers", type=int, nargs="+", default=[1, 2, 4, 8], help="browser counts")
    parser.add_argument("--web_resets", type=int, default=20, help="resets per browser and kind")
    parser.add_argument("--web_steps", type=int, default=40, help="steps per browser")
    args = parser.parse_args()
    if args.web:
        web_main(args)
        return

    sizes = {"demo 224x448": (224, 448, args.steps), "aitw 1080x2400": (1080, 2400, args.aitw_steps)}
    rows, summary = [], {}
    with tempfile.TemporaryDirectory() as folder:
        for label, (width, height, steps) in sizes.items():
            steps_per_second(width, height, "expert", steps // 4, 0, first_seed=10**6)  # warm-up, on other seeds
            measured = {}
            configurations = (
                ("random", 64, 1),
                ("random", 0, 1),
                ("expert", 64, 1),
                ("expert", 0, 1),
                ("expert", 64, 8),
            )
            for number, (policy, cache_mb, group) in enumerate(configurations):
                first_seed = 10_000 * (number + 1)  # seeds of its own: no run finds another's screens or strings
                measured[policy, cache_mb, group] = steps_per_second(
                    width, height, policy, steps, cache_mb, group, first_seed
                )
                name = policy if group == 1 else f"{policy}, each seed {group} times"
                rows.append((label, name, "on" if cache_mb else "off", *measured[policy, cache_mb, group][:2]))
            expert_step = measured["expert", 64, 1][2]
            turn = generation_seconds(width, height, args.turns, args.max_new_tokens, Path(folder))
            summary[label.split()[0]] = {
                "random_steps_per_s": round(measured["random", 64, 1][0], 1),
                "expert_steps_per_s": round(measured["expert", 64, 1][0], 1),
                "expert_group8_steps_per_s": round(measured["expert", 64, 8][0], 1),
                "random_steps_per_cpu_s": round(measured["random", 64, 1][1], 1),
                "expert_steps_per_cpu_s": round(measured["expert", 64, 1][1], 1),
                "env_step_ms": round(1000 * expert_step, 3),
                "generation_turn_ms": round(1000 * turn, 1),
                "env_share_of_turn": round(expert_step / (expert_step + turn), 4),
            }
    print("| screen | policy | render cache | steps/s (wall) | steps per CPU second |")
    print("|---|---|---|---|---|")
    for label, policy, cache, rate, cpu_rate in rows:
        print(f"| {label} | {policy} | {cache} | {rate:,.0f} | {cpu_rate:,.0f} |")
    print()
    print("| screen | env step (expert) ms | generation turn ms | env share of a rollout turn |")
    print("|---|---|---|---|")
    for key, figures in summary.items():
        share = 100 * figures["env_share_of_turn"]
        print(f"| {key} | {figures['env_step_ms']} | {figures['generation_turn_ms']} | {share:.2f}% |")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
