"""PhoneEnv throughput: steps per second (rendering included) at the demo's screen size and at AITW's 1080 x 2400,
and the cost of one env step against one generation turn of the `small` tiny model on the same screen.

    python bench/env_throughput.py [--steps 4000] [--aitw_steps 300] [--turns 8] [--max_new_tokens 48]

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
    from r1_gui.evaluation.generate import HFGenerator
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=4000, help="env steps per measurement at the demo's size")
    parser.add_argument("--aitw_steps", type=int, default=300, help="env steps per measurement at 1080 x 2400")
    parser.add_argument("--turns", type=int, default=8, help="generation turns timed per screen size")
    parser.add_argument("--max_new_tokens", type=int, default=48, help="generation length (the demo's completions)")
    args = parser.parse_args()

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
