"""Asynchronous against synchronous multi-turn GRPO rollouts (issue 68 item 8): the same settings and seeds, each
side a training run in a fresh process, one after the other.

    .venv/bin/python bench/async_rollouts.py                      # the three parts below
    .venv/bin/python bench/async_rollouts.py --only phone --steps 12
    .venv/bin/python bench/async_rollouts.py --only model         # the model alone, on figures given as JSON

1. **phone**: a remote-device stand-in, Phone-v0 with `step_latency` {median 1 s, p95 5 s} (one step in 20 over 5 s,
   log-normal), a random tiny Qwen2-VL; sync against `--rollout_mode async` (max staleness 1, 2 workers).
2. **web**: Web-v0 at the multi-step web demo's settings (circle-center and click-collapsible, 3 turns, 4 resets x 4
   episodes a step, its small Qwen3-VL, random weights): what this 2-core machine gives.
3. **model**: one step at scale, simulated (`simulate`): episodes of `turns` turns, each turn a generation and a step
   of the environment (its latency drawn per step), the learner's training time per step; sync plays a step's
   episodes side by side and trains after the slowest, async plays groups in workers under the engine's bound
   (r1_gui.rollout.engine) while the learner trains. Checked against parts 1 and 2 with their measured costs, then
   run at scale: 8 GPUs, 64 episodes a step.

Per side: steps per hour (over the steps after the first, which also pays the workers' start), the learner's idle
share (sync: the time its rollouts wait on environments, i.e. rollout time less generation; async: the time it waits
for groups), the environment slots' busy share (the environments' own latency, summed over the steps played, over
slots x wall; Phone-v0's delays are drawn from the episode and step, so they are known exactly), staleness. Ends with
one JSON line.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

LATENCY = {"median": 1.0, "p95": 5.0}

CASES = {
    "phone": {
        "arch": "qwen2_vl",
        "size": "tiny",
        "settings": dict(
            env_id="r1_gui/Phone-v0",
            env_kwargs={"step_latency": LATENCY},
            env_tasks=["open_app", "go_home"],
            max_turns=3,
            max_turn_tokens=24,
            max_completion_length=168,
            history_images=2,
            max_pixels=12544,
            num_generations=4,
            per_device_train_batch_size=8,
            temperature=1.0,
            reward_funcs=["task_success", "episode_format"],
        ),
        "async": dict(rollout_workers=2, max_staleness=1, rollout_groups_ahead=0),
        "steps": 12,
    },
    "web": {  # the multi-step web demo's GRPO stage (MultiStepWebDemoConfig), from random weights
        "arch": "qwen3_vl",
        "size": "small",
        "settings": dict(
            env_id="r1_gui/Web-v0",
            env_kwargs={"max_steps": 3},
            env_tasks=["circle-center", "click-collapsible"],
            env_step_timeout=60.0,
            max_turns=3,
            max_turn_tokens=48,
            max_completion_length=240,
            history_images=2,
            max_pixels=20000,
            num_generations=4,
            per_device_train_batch_size=16,
            temperature=0.5,
            reward_funcs=["task_success", "episode_click_distance"],
            beta=0.04,
        ),
        "async": dict(rollout_workers=2, max_staleness=1, rollout_groups_ahead=0),
        "steps": 8,
    },
}


# ------------------------------------------------------------------------------------------------ the measured runs


def run_side(case: str, mode: str, model: str, out: str, steps: int, seed: int, conn) -> None:
    """One training run (in a fresh process): its steps' end times, the learner's wait, the episodes played."""
    import logging

    from transformers import TrainerCallback

    from r1_gui.cli_errors import cpu_threads
    from r1_gui.multi_turn.train import multi_turn_trainer
    from r1_gui.training.grpo import grpo_arguments
    from r1_gui.training.trainer import train_and_save

    spec = CASES[case]
    values = dict(spec["settings"], env_kwargs=json.dumps(spec["settings"]["env_kwargs"]))
    if mode == "async":
        values.update(spec["async"], rollout_mode="async")
    args = grpo_arguments(
        **values, model_name_or_path=model, output_dir=out, max_steps=steps, seed=seed, env_episodes=256,
        env_seed_offset=0, learning_rate=1e-4, lr_scheduler_type="constant", loss_type="dapo", use_cpu=True,
        bf16=False, activation_checkpointing=False, report_to="none", logging_steps=1, save_strategy="no",
        dtype="float32", prompt_style="mobile_use", coordinates="grid999", min_pixels=3136, skip_no_signal=False,
    )  # fmt: skip
    record = {"step_ends": [], "idle_at_step": [], "rollout_at_step": [], "generation_s": 0.0, "rollout_s": 0.0,
              "turn_calls": 0, "episodes": []}  # fmt: skip
    cpu_threads()  # as every command: half the cores for torch
    trainer, resume = multi_turn_trainer(*args)

    class Clock(TrainerCallback):
        def on_train_begin(self, *args, **kwargs):
            record["begin"] = time.perf_counter()

        def on_step_end(self, *args, **kwargs):
            record["step_ends"].append(time.perf_counter())
            record["rollout_at_step"].append(record["rollout_s"])
            if trainer.rollouts is not None:
                record["idle_at_step"].append(trainer.rollouts.buffer.waited_s)
            else:
                record["idle_at_step"].append(record["rollout_s"] - record["generation_s"])

    trainer.add_callback(Clock())
    if trainer.rollouts is None:
        rollout, policy = trainer._rollout, trainer._policy

        def timed_rollout(prompts):
            start = time.perf_counter()
            output = rollout(prompts)
            record["rollout_s"] += time.perf_counter() - start
            record["episodes"] += [(e.task, e.seed, len(e.turns)) for e in trainer.book.episodes]
            return output

        def timed_policy(inputs, infos):
            start = time.perf_counter()
            record["turn_calls"] += 1
            try:
                return policy(inputs, infos)
            finally:
                record["generation_s"] += time.perf_counter() - start

        trainer._rollout, trainer._policy = timed_rollout, timed_policy
    train_and_save(trainer, resume, logging.getLogger("bench"))
    if trainer.rollouts is not None:
        rollouts = trainer.rollouts
        record["episodes"] = [tuple(e) for group in rollouts.received for e in group["episodes"]]
        record["groups"] = [{k: v for k, v in group.items() if k != "episodes"} for group in rollouts.received]
        record["slots"] = rollouts.settings.workers * rollouts.spec.concurrency * rollouts.spec.num_generations
    else:
        record["slots"] = trainer.args.per_device_train_batch_size
    record["log"] = [entry for entry in trainer.state.log_history if "loss" in entry]
    conn.send(record)


def measure(case: str, mode: str, model: Path, folder: Path, steps: int, seed: int) -> dict:
    import child_process

    process, conn = child_process.start(run_side, case, mode, str(model), str(folder / f"{case}-{mode}"), steps, seed)
    record = child_process.receive(process, conn, f"{case} {mode}")
    process.join()
    return summarise(case, mode, record)


def env_busy_seconds(case: str, episodes: list) -> float | None:
    """The environments' own latency summed over every step played (Phone-v0's delays are known from the episode
    and the step); None where the environment's step time is not known (Web-v0)."""
    if case != "phone":
        return None
    from r1_gui.envs.phone.env import check_step_latency, step_delay

    mu, sigma = check_step_latency(LATENCY)
    return sum(
        step_delay(mu, sigma, (task, seed), step) for task, seed, turns in episodes for step in range(1, turns + 1)
    )


def summarise(case: str, mode: str, record: dict) -> dict:
    ends, idle = record["step_ends"], record["idle_at_step"]
    wall = ends[-1] - ends[0]  # the steps after the first (the first also pays the workers' start)
    steps = len(ends) - 1
    busy = env_busy_seconds(case, record["episodes"])
    log = record["log"]
    result = {
        "mode": mode,
        "steps": len(ends),
        "wall_s": round(wall, 1),
        "first_step_s": round(ends[0] - record["begin"], 1),
        "steps_per_hour": round(3600 * steps / wall, 1),
        "learner_idle_share": round((idle[-1] - idle[0]) / wall, 3),
        "slots": record["slots"],
        "episodes_played": len(record["episodes"]),
        "mean_turns": round(sum(t for *_, t in record["episodes"]) / max(1, len(record["episodes"])), 2),
    }
    if busy is not None:  # over the whole run: every step played, by slots over the run's wall from its start
        result["env_busy_share"] = round(busy / (record["slots"] * (ends[-1] - record["begin"])), 3)
    if mode == "async":
        result["staleness_mean"] = round(sum(e["async/staleness_mean"] for e in log) / len(log), 3)
        result["staleness_max"] = max(e["async/staleness_max"] for e in log)
        result["dropped_stale"] = log[-1]["async/dropped_stale"]
        groups = record["groups"]
        turns = max(1, sum(t for *_, t in record["episodes"])) / max(1, len(record["episodes"]))
        result["generation_s_per_turn"] = round(sum(g["generation_s"] for g in groups) / (len(groups) * turns), 4)
    else:
        rollout = record["rollout_at_step"][-1] - record["rollout_at_step"][0]
        result["generation_s_per_turn"] = round(record["generation_s"] / max(1, record["turn_calls"]), 4)
        result["env_s_per_turn"] = round(
            (record["rollout_s"] - record["generation_s"]) / max(1, record["turn_calls"]), 4
        )
        result["train_s_per_step"] = round((wall - rollout) / steps, 3)
    return result


# ------------------------------------------------------------------------------------------------------- the model


def simulate(
    *,
    mode: str,
    steps: int,
    groups_per_step: int,
    generations: int,
    turns: int,
    generation_s: float,
    train_s: float,
    latency,
    workers: int = 2,
    max_staleness: int = 1,
    groups_ahead: int = 1,
    seed: int = 0,
) -> dict:
    """Steps per hour, the learner's idle share and the environment slots' busy share of `steps` steps (see the
    module docstring). `latency()`: one environment step's seconds; `generation_s`: one turn's generation (a
    step's episodes at once in sync, a group's in a worker, whose generations take turns on its model)."""
    rng = random.Random(seed)
    if mode == "sync":
        clock = idle = busy = 0.0
        for _ in range(steps):
            for _ in range(turns):
                delays = [latency(rng) for _ in range(groups_per_step * generations)]
                clock += generation_s + max(delays)
                idle += max(delays)
                busy += sum(delays)
            clock += train_s
        slots = groups_per_step * generations
        return {"steps_per_hour": 3600 * steps / clock, "learner_idle_share": idle / clock,
                "env_busy_share": busy / (slots * clock)}  # fmt: skip
    capacity = (1 + max_staleness) * groups_per_step + groups_ahead
    concurrency = math.ceil(capacity / workers)
    free_at = [0.0] * workers  # when each worker's model is free for the next generation
    playing: list[tuple[float, int, int]] = []  # (finish time, started version, worker)
    finished: list[tuple[float, int]] = []  # (time, version)
    started = dropped = 0
    clock = idle = busy = 0.0
    version = 0

    def play(start: float, worker: int) -> float:
        nonlocal busy
        at = start
        for _ in range(turns):
            at = max(at, free_at[worker]) + generation_s
            free_at[worker] = at
            delays = [latency(rng) for _ in range(generations)]
            busy += sum(delays)
            at += max(delays)
        return at

    def fill(now: float) -> None:
        nonlocal started
        while started - dropped < (version + 1 + max_staleness) * groups_per_step + groups_ahead:
            loads = [sum(1 for _, _, w in playing if w == worker) for worker in range(workers)]
            worker = min(range(workers), key=lambda w: loads[w])
            if loads[worker] >= concurrency:
                return
            playing.append((play(now, worker), version, worker))
            started += 1

    fill(0.0)
    for step in range(steps):
        while True:
            fresh = [item for item in finished if step - item[1] <= max_staleness]
            dropped += len(finished) - len(fresh)
            finished[:] = fresh
            ready = sorted(item for item in finished if item[0] <= clock)
            if len(ready) >= groups_per_step:
                break
            playing.sort()
            done, version_started, _ = playing.pop(0)
            finished.append((done, version_started))
            if done > clock:
                idle += done - clock
                clock = done
            fill(clock)
        taken = sorted(finished, key=lambda item: (item[1], item[0]))[:groups_per_step]
        for item in taken:
            finished.remove(item)
        clock += train_s
        version = step + 1
        while playing and playing[0][0] <= clock:  # what finished while the learner trained
            done, version_started, _ = playing.pop(0)
            finished.append((done, version_started))
        fill(clock)
    slots = workers * concurrency * generations
    return {"steps_per_hour": 3600 * steps / clock, "learner_idle_share": idle / clock,
            "env_busy_share": busy / (slots * clock), "dropped": dropped}  # fmt: skip


def lognormal(median: float, p95: float):
    sigma = math.log(p95 / median) / 1.6448536269514722
    return lambda rng: rng.lognormvariate(math.log(median), sigma)


def constant(seconds: float):
    return lambda rng: seconds


def modelled(case: str, measured: dict, steps: int = 200) -> dict:
    """The model's sync and async figures for a measured case, from its measured costs."""
    spec = CASES[case]
    settings, extra = spec["settings"], spec["async"]
    sync, asynchronous = measured["sync"], measured["async"]
    turns = round(sync["mean_turns"])
    latency = lognormal(**LATENCY) if case == "phone" else constant(sync["env_s_per_turn"])
    common = dict(
        steps=steps, groups_per_step=settings["per_device_train_batch_size"] // settings["num_generations"],
        generations=settings["num_generations"], turns=turns, train_s=sync["train_s_per_step"], latency=latency,
    )  # fmt: skip
    return {
        "sync": simulate(mode="sync", generation_s=sync["generation_s_per_turn"], **common),
        "async": simulate(
            mode="async",
            generation_s=asynchronous["generation_s_per_turn"],
            workers=extra["rollout_workers"],
            max_staleness=extra["max_staleness"],
            groups_ahead=extra["rollout_groups_ahead"],
            **common,
        ),  # fmt: skip
    }


# At scale (8 GPUs, 64 episodes a step): a Qwen2.5-VL-3B-sized policy on H100s, the costs read from NOTES.md section
# 8 (one GPU generates 8 x 8 answers of 128 tokens in 12.5 s: about 1.6 s a turn for its 8 episodes; log-prob and
# backward of 64 sequences 39 s, so about 30 s a step for its share of 64 episodes x 10 turns, as the public
# AndroidWorld recipe's ~30 s of training), 10 turns an episode, the emulator stand-in's latency, and for the
# workers one policy copy per GPU playing its groups (8 workers).
SCALE = dict(groups_per_step=8, generations=8, turns=10, generation_s=1.6, train_s=30.0)


def at_scale(steps: int = 200) -> dict:
    latency = lognormal(**LATENCY)
    rows = {"sync": simulate(mode="sync", steps=steps, latency=latency, **SCALE)}
    for staleness in (1, 2):
        rows[f"async_s{staleness}"] = simulate(
            mode="async", steps=steps, latency=latency, workers=8, max_staleness=staleness, groups_ahead=2, **SCALE
        )
    return rows


# --------------------------------------------------------------------------------------------------------- the command


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=["phone", "web", "model"], action="append", help="some parts (default all)")
    parser.add_argument("--steps", type=int, help="training steps per side (default: the case's own)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--measured", help="with --only model: a JSON file of an earlier run's measured parts")
    args = parser.parse_args(argv)
    parts = args.only or ["phone", "web", "model"]
    result: dict = {"latency": LATENCY}
    if args.measured:
        result.update(json.loads(Path(args.measured).read_text()))
    with tempfile.TemporaryDirectory(prefix="async-bench-") as scratch:
        folder = Path(scratch)
        for case in [part for part in ("phone", "web") if part in parts]:
            from r1_gui.tiny import build_tiny_model

            spec = CASES[case]
            model = build_tiny_model(folder / f"model-{case}", arch=spec["arch"], size=spec["size"], seed=args.seed)
            steps = args.steps or spec["steps"]
            result[case] = {mode: measure(case, mode, model, folder, steps, args.seed) for mode in ("sync", "async")}
            sync, asynchronous = result[case]["sync"], result[case]["async"]
            result[case]["ratio_steps_per_hour"] = round(asynchronous["steps_per_hour"] / sync["steps_per_hour"], 2)
            print(table(case, result[case]), flush=True)
    if "model" in parts:
        result["model"] = {case: modelled(case, result[case]) for case in ("phone", "web") if case in result}
        result["model"]["scale"] = at_scale()
        for name, rows in result["model"].items():
            print(f"\nmodel, {name}:")
            for mode, row in rows.items():
                print(f"  {mode}: " + ", ".join(f"{key} {value:.3g}" for key, value in row.items()))
    print(json.dumps(result))
    return result


def table(case: str, measured: dict) -> str:
    keys = ["steps_per_hour", "learner_idle_share", "env_busy_share", "slots", "staleness_mean", "staleness_max",
            "dropped_stale", "first_step_s", "wall_s", "generation_s_per_turn", "train_s_per_step", "mean_turns"]  # fmt: skip
    lines = [f"\n{case}: async / sync steps per hour {measured['ratio_steps_per_hour']}", "| | sync | async |",
             "|---|---|---|"]  # fmt: skip
    for key in keys:
        a, b = measured["sync"].get(key, "-"), measured["async"].get(key, "-")
        lines.append(f"| {key} | {a} | {b} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
