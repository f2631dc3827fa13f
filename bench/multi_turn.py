"""One multi-turn GRPO step, split into its parts: generation, environment, tool-response processing (the returned
screenshots through the processor, each turn's context tokenized), log-probabilities, backward.

    .venv/bin/python bench/multi_turn.py [--steps 3] [--size small] [--max_turns 4] [--generations 4]
    .venv/bin/python bench/multi_turn.py --env r1_gui/Web-v0 --tasks click-test click-test-2 click-button click-link

A random tiny Qwen2-VL (r1_gui.tiny) plays episodes (by default PhoneEnv's 224x448 screens; with --env any contract
environment, e.g. MiniWoB++ pages in Chromium) through MultiTurnGRPOTrainer, the episodes of a step side by side in
an EnvPool; each part is timed by wrapping the function that does it ("environment": the pool's resets and steps,
the workers' IPC included). The environment's share of the step must stay under 5% on the phone. Ends with one JSON
line.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

TIMES: dict[str, float] = defaultdict(float)


@contextmanager
def timed(part: str):
    start = time.perf_counter()
    try:
        yield
    finally:
        TIMES[part] += time.perf_counter() - start


def wrap(owner, name: str, part: str):
    original = getattr(owner, name)

    def wrapper(*args, **kwargs):
        with timed(part):
            return original(*args, **kwargs)

    setattr(owner, name, wrapper)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=3, help="measured steps (after one warm-up step)")
    parser.add_argument("--size", default="small", choices=["tiny", "small"])
    parser.add_argument("--max_turns", type=int, default=4)
    parser.add_argument("--max_turn_tokens", type=int, default=32)
    parser.add_argument("--generations", type=int, default=4)
    parser.add_argument("--env", default="r1_gui/Phone-v0", help="the environment (any contract id)")
    parser.add_argument("--env_kwargs", default="{}", help="gymnasium.make keywords as JSON")
    parser.add_argument("--tasks", nargs="+", default=["go_home", "web_search"], help="tasks the resets alternate")
    args = parser.parse_args(argv)

    import os

    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    import torch
    from datasets import Dataset
    from transformers import AutoModelForImageTextToText, TrainerCallback

    from r1_gui.agent import loop
    from r1_gui.agent.context import episode_token_budget
    from r1_gui.envs.runtime.pool import EnvPool
    from r1_gui.multi_turn import trainer as multi_turn_trainer
    from r1_gui.processing import CHAT_TEMPLATE, load_processor
    from r1_gui.rewards import get_reward_funcs
    from r1_gui.tiny import build_tiny_model
    from r1_gui.training.grpo import GUIGRPOConfig

    torch.manual_seed(0)
    folder = Path(tempfile.mkdtemp(prefix="bench-multi-turn-"))
    model_dir = build_tiny_model(folder / "model", arch="qwen2_vl", size=args.size)
    processor = load_processor(model_dir, min_pixels=3136, max_pixels=50176, chat_template=CHAT_TEMPLATE)
    model = AutoModelForImageTextToText.from_pretrained(model_dir, dtype=torch.float32)
    trainer_class = multi_turn_trainer.MultiTurnGRPOTrainer
    resets = [(args.tasks[seed % len(args.tasks)], seed) for seed in range(64)]
    dataset = Dataset.from_list([{"prompt": multi_turn_trainer.reset_prompt(t, s)} for t, s in resets])
    config = GUIGRPOConfig(
        output_dir=str(folder / "run"), use_cpu=True, bf16=False, report_to="none", save_strategy="no",
        num_generations=args.generations, per_device_train_batch_size=2 * args.generations,
        max_completion_length=episode_token_budget(args.max_turns, args.max_turn_tokens),
        max_steps=args.steps + 1, learning_rate=1e-5, beta=0.0, loss_type="dapo", logging_steps=1, seed=0,
    )  # fmt: skip

    # the parts, each timed where it is done
    wrap(trainer_class, "_generate_single_turn", "generation")
    wrap(loop, "tokenize_turn", "tool-response processing")
    wrap(trainer_class, "_get_per_token_logps_and_entropies", "log-prob")
    wrap(EnvPool, "step", "environment")  # the episodes' steps, side by side in worker processes (IPC included)
    wrap(EnvPool, "reset", "environment")
    step_times, tokens = [], []

    class StepTimer(TrainerCallback):
        def on_step_begin(self, *_, **__):
            TIMES.clear()
            self.start = time.perf_counter()

        def on_step_end(self, *_, **__):
            step_times.append((time.perf_counter() - self.start, dict(TIMES)))

    trainer = trainer_class(
        model=model, reward_funcs=get_reward_funcs(["task_success", "episode_format"]), args=config,
        train_dataset=dataset, processing_class=processor, env_pool=EnvPool(args.env, json.loads(args.env_kwargs)), max_turns=args.max_turns,
        max_turn_tokens=args.max_turn_tokens, callbacks=[StepTimer()],
    )  # fmt: skip
    original_backward = trainer.accelerator.backward

    def backward(loss, **kwargs):
        with timed("backward"):
            return original_backward(loss, **kwargs)

    trainer.accelerator.backward = backward
    original_rollout = trainer._rollout

    def counting_rollout(prompts):
        output = original_rollout(prompts)
        rows = zip(output["completion_ids"], output["env_mask"], trainer.book.episodes, strict=True)
        tokens.extend((len(row), sum(mask), len(episode.turns)) for row, mask, episode in rows)
        return output

    trainer._rollout = counting_rollout
    trainer.train()

    measured = step_times[1:]
    parts = ["generation", "environment", "tool-response processing", "log-prob", "backward"]
    step = sum(total for total, _ in measured) / len(measured)
    means = {part: sum(t.get(part, 0.0) for _, t in measured) / len(measured) for part in parts}
    means["other"] = step - sum(means.values())
    episodes = tokens[len(tokens) // (args.steps + 1) :]
    per_episode = {
        "completion_tokens": sum(e[0] for e in episodes) / len(episodes),
        "answer_tokens": sum(e[1] for e in episodes) / len(episodes),
        "turns": sum(e[2] for e in episodes) / len(episodes),
    }
    print(f"{'part':<28}{'s/step':>10}{'share':>10}")
    for part, seconds in means.items():
        print(f"{part:<28}{seconds:>10.3f}{seconds / step:>10.1%}")
    print(f"{'step':<28}{step:>10.3f}")
    print(f"per episode: {per_episode}")
    result = {
        "step_s": round(step, 3),
        **{f"{part}_share": round(seconds / step, 4) for part, seconds in means.items()},
        **{key: round(value, 1) for key, value in per_episode.items()},
        "env_share_ok": means["environment"] / step < 0.05,
    }
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
