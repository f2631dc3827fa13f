"""Trainer overhead: GUIGRPOTrainer vs plain trl.GRPOTrainer doing the same work, side by side on the same tiny model,
data and rewards; and, as a figure of its own, what GUIGRPOTrainer's savings leave out of that work.

    python bench/trainer_overhead.py [--steps 8] [--warmup 2]

Three trainers, each in its own process (so each has its own peak RSS); a coordinator lets them take one training
step at a time, rotating which goes first, so machine noise hits all alike. All use the same random tiny Qwen2-VL
model, synthetic screens, seed, rewards (accuracy + format), think_answer prompts (all stop at <|im_end|>, so all
generate the same number of tokens) and batch (4 prompts x 4 generations):

- "same work": GUIGRPOTrainer with its savings off (--skip_no_signal false, --dedupe_images false), so it runs every
  completion through the loss pass and every screenshot through the image processor and the vision tower, as trl does;
- "defaults": GUIGRPOTrainer as training runs it. A random model's groups all earn the same reward, so the no-signal
  skip leaves nearly every completion out of the loss pass: that saving is this batch's, not a general one;
- "trl": plain trl.GRPOTrainer.

The median step time is taken over the steps after warm-up; GUIGRPOTrainer's completions table is drawn at step 0
(warm-up) and every 50 steps by default, so it is not in the median. Prints a table, then one JSON line: "ratio" (same
work / trl seconds per step: the overhead, target <= 1.05), "savings_ratio" (defaults / same work: what the skip and
the dedupe save on this batch), "rss_ratio" (same work / trl peak RSS).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import tempfile
import time
from pathlib import Path

from child_process import receive, start

KINDS = ("same_work", "defaults", "trl")
LABELS = {"same_work": "ours, same work", "defaults": "ours, defaults", "trl": "trl.GRPOTrainer"}


def prepare(folder: Path) -> tuple[Path, Path]:
    """A tiny model and a synthetic builder dataset, shared by both trainers."""
    from r1_gui.builder import build
    from r1_gui.synthetic import generate
    from r1_gui.tiny import build_tiny_model

    generate(folder / "raw", 20, seed=0, width=224, height=448, progress=False)
    build([folder / "raw" / "synthetic-l1.json"], folder / "raw" / "images", folder / "data", progress=False)
    return build_tiny_model(folder / "model", "qwen2_vl", "tiny"), folder / "data"


def run_trainer(kind: str, model_dir: str, data_dir: str, output_dir: str, max_steps: int, conn) -> None:
    """One trainer in a child process; every step waits for the coordinator's go and reports its duration."""
    import torch
    from transformers import AutoModelForImageTextToText, TrainerCallback
    from transformers.trainer_callback import PrinterCallback, ProgressCallback
    from trl import GRPOConfig, GRPOTrainer

    from r1_gui.gui_datasets import load_gui_dataset
    from r1_gui.processing import CHAT_TEMPLATE, load_processor, pixel_bounds
    from r1_gui.rewards import get_reward_funcs
    from r1_gui.training.data import add_model_columns
    from r1_gui.training.trainer import GUIGRPOTrainer

    torch.manual_seed(0)
    processor = load_processor(model_dir, max_pixels=50176, chat_template=CHAT_TEMPLATE)
    dataset = load_gui_dataset(data_dir, "train")
    dataset = add_model_columns(dataset, "think_answer", "grid1000", pixel_bounds(processor))
    rewards = get_reward_funcs(["accuracy", "format"], coordinates="grid1000", prompt_style="think_answer")
    config = GRPOConfig(
        output_dir=output_dir,
        max_steps=max_steps,
        per_device_train_batch_size=16,
        num_generations=4,
        max_completion_length=32,
        learning_rate=1e-4,
        beta=0.0,
        bf16=False,
        activation_checkpointing=False,
        use_cpu=True,
        report_to="none",
        logging_steps=1,
        save_strategy="no",
        seed=0,
        data_seed=0,
    )

    class Turns(TrainerCallback):
        def on_step_begin(self, args, state, control, **kwargs):
            conn.send("ready")
            conn.recv()
            self.start = time.perf_counter()

        def on_step_end(self, args, state, control, **kwargs):
            conn.send(("step", time.perf_counter() - self.start))

    model = AutoModelForImageTextToText.from_pretrained(model_dir)
    common = dict(model=model, reward_funcs=rewards, args=config, train_dataset=dataset, processing_class=processor)
    if kind == "trl":
        trainer = GRPOTrainer(**common)
    else:  # same_work: every completion and screenshot through every pass, as trl does
        savings = {} if kind == "defaults" else {"skip_no_signal": False, "dedupe_images": False}
        trainer = GUIGRPOTrainer(**common, prompt_style="think_answer", coordinates="grid1000", **savings)
    for quiet in (PrinterCallback, ProgressCallback):  # the children print no per-step logs; the table says it all
        trainer.remove_callback(quiet)
    trainer.add_callback(Turns())
    trainer.train()
    conn.send(("done", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=8, help="measured steps per trainer (after warm-up)")
    parser.add_argument("--warmup", type=int, default=2, help="steps per trainer left out of the median")
    args = parser.parse_args()
    total = args.warmup + args.steps

    with tempfile.TemporaryDirectory() as tmp:
        model_dir, data_dir = prepare(Path(tmp))
        children = {
            kind: start(run_trainer, kind, str(model_dir), str(data_dir), f"{tmp}/{kind}", total) for kind in KINDS
        }
        times = {kind: [] for kind in KINDS}
        for step in range(total):
            for kind in KINDS[step % len(KINDS) :] + KINDS[: step % len(KINDS)]:  # each goes first in turn
                process, conn = children[kind]
                assert receive(process, conn, kind) == "ready"
                conn.send("go")
                _, seconds = receive(process, conn, kind)
                times[kind].append(seconds)
        rss = {kind: receive(*children[kind], kind)[1] for kind in KINDS}
        for process, _ in children.values():
            process.join()

    median = {kind: statistics.median(times[kind][args.warmup :]) for kind in KINDS}
    print(f"{'trainer':<16} {'median s/step':>14} {'min':>8} {'max':>8} {'peak RSS MB':>12}")
    for kind in KINDS:
        measured = times[kind][args.warmup :]
        print(
            f"{LABELS[kind]:<16} {median[kind]:>14.3f} {min(measured):>8.3f} {max(measured):>8.3f} {rss[kind]:>12.0f}"
        )
    result = {
        "benchmark": "trainer_overhead",
        "steps": args.steps,
        "warmup": args.warmup,
        "same_work_s_per_step": round(median["same_work"], 4),
        "defaults_s_per_step": round(median["defaults"], 4),
        "trl_s_per_step": round(median["trl"], 4),
        "ratio": round(median["same_work"] / median["trl"], 4),
        "savings_ratio": round(median["defaults"] / median["same_work"], 4),
        "same_work_rss_mb": round(rss["same_work"], 1),
        "trl_rss_mb": round(rss["trl"], 1),
        "rss_ratio": round(rss["same_work"] / rss["trl"], 4),
        "target_ratio": 1.05,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
