"""The demo's GRPO batch for benchmarks: its synthetic screens and short system prompt, aguvis prompts, a random
local model, and a GUIGRPOTrainer whose generation batch is `prompts` x `generations` completions of up to 48 tokens.
Imported by the benchmarks of this folder (run them as `python bench/<name>.py`)."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_batch_arguments(parser: argparse.ArgumentParser, repeats_help: str) -> None:
    """The flags every demo-batch benchmark takes: model size, batch shape, timed repeats."""
    parser.add_argument("--size", default="small", help="local model size (r1_gui.tiny): tiny or small")
    parser.add_argument("--prompts", type=int, default=16, help="prompt groups in the batch")
    parser.add_argument("--generations", type=int, default=8, help="completions per prompt")
    parser.add_argument("--repeats", type=int, default=3, help=repeats_help)


def demo_trainer(folder: Path, size: str, prompts: int, generations: int, **trainer_kwargs):
    """(trainer, rows): rows are the first `prompts` training rows, each repeated `generations` times, as trl's
    sampler repeats them."""
    from transformers import AutoModelForImageTextToText
    from trl import GRPOConfig

    from r1_gui.demo import SYSTEM_PROMPT, DemoConfig, build_data
    from r1_gui.gui_datasets import load_gui_dataset
    from r1_gui.processing import CHAT_TEMPLATE, load_processor, pixel_bounds
    from r1_gui.rewards import get_reward_funcs
    from r1_gui.tiny import build_tiny_model
    from r1_gui.training.data import add_model_columns
    from r1_gui.training.trainer import GUIGRPOTrainer

    build_data(DemoConfig(episodes=40), folder, seed=0)
    model_dir = build_tiny_model(folder / "model", "qwen2_vl", size)
    processor = load_processor(model_dir, max_pixels=50176, chat_template=CHAT_TEMPLATE)
    dataset = load_gui_dataset(folder / "data", "train")
    dataset = add_model_columns(dataset, "aguvis", "normalized", pixel_bounds(processor), SYSTEM_PROMPT)
    config = GRPOConfig(
        output_dir=str(folder / "out"),
        per_device_train_batch_size=prompts * generations,
        num_generations=generations,
        max_completion_length=48,
        temperature=1.0,
        beta=0.0,
        loss_type="dapo",
        bf16=False,
        activation_checkpointing=False,
        use_cpu=True,
        report_to="none",
        chat_template_kwargs={"generation_recipient": "all"},
    )
    trainer = GUIGRPOTrainer(
        model=AutoModelForImageTextToText.from_pretrained(model_dir),
        reward_funcs=get_reward_funcs(["format"]),
        args=config,
        train_dataset=dataset,
        processing_class=processor,
        **trainer_kwargs,
    )
    rows = [dataset[i] for i in range(prompts) for _ in range(generations)]
    return trainer, rows


def timed_loss_pass(trainer, inputs: dict | list[dict]) -> tuple[float, dict]:
    """Seconds of one GRPO loss pass (`trainer._compute_loss` and its backward) over a batch, or over its
    micro-batches with the gradient summed (dapo normalises each by the whole batch), and every parameter's
    gradient."""
    import time

    trainer.model.train()
    trainer.current_gradient_accumulation_steps = 1  # set by the training loop
    trainer.model.zero_grad()
    start = time.perf_counter()
    for micro_batch in [inputs] if isinstance(inputs, dict) else inputs:
        trainer._compute_loss(trainer.model, micro_batch).backward()
    seconds = time.perf_counter() - start
    return seconds, {n: p.grad.clone() for n, p in trainer.model.named_parameters() if p.grad is not None}
