"""Supervised fine-tuning (the warm start before GRPO) of a GUI agent on builder datasets, with TRL's SFTTrainer.

    # 8 GPUs, Qwen2.5-VL-3B taught the think_answer format before GRPO (no SFT recipe ships for it; these flags
    # are the whole setting, every other field keeps its default):
    torchrun --nproc_per_node 8 src/r1_gui/sft.py --model_name_or_path Qwen/Qwen2.5-VL-3B-Instruct \\
        --dtype bfloat16 --bf16 true --prompt_style think_answer --learning_rate 1e-5 \\
        --dataset_name data/aitw-sft --output_dir runs/qwen25vl3b-sft
    # CPU, a tiny local model:
    python src/r1_gui/sft.py --config local_scripts/tiny_cpu_sft.yaml

A model without GUI training that meets GRPO with a format reward learns the format and nothing else (format reward
up, accuracy at zero); a short SFT in the very prompt style and action format GRPO will use is the usual cure.
The loss covers only the assistant's answer (the plan and the action), never the prompt or the screenshot.
Arguments: `GUIDataArguments` (r1_gui.training.args), every `trl.SFTConfig` field and every `trl.ModelConfig` field.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from trl import ModelConfig, SFTConfig, SFTTrainer

from r1_gui.cli_errors import user_errors
from r1_gui.training.args import (
    CheckpointingUnderItsNewName,
    GUIModelConfig,
    arguments_from,
    parse_arguments,
)
from r1_gui.training.data import load_training_rows
from r1_gui.training.flags import GUIDataArguments, TrainingRunFlags
from r1_gui.training.model import load_training_model, load_training_processor, model_and_coordinates, trainer_inputs
from r1_gui.training.resume import ResumesCheckpoints, resolve_resume
from r1_gui.training.trainer import train_and_save

logger = logging.getLogger("r1_gui.sft")  # the command's name, as its log lines always said

SFT_COLUMNS = ("image", "problem", "solution")


class GUISFTTrainer(ResumesCheckpoints, SFTTrainer):
    """`trl.SFTTrainer`, resuming as `r1_gui.training.resume.ResumesCheckpoints` says; nothing else differs."""


@dataclass
class GUISFTConfig(CheckpointingUnderItsNewName, TrainingRunFlags, SFTConfig):
    """trl.SFTConfig under its own --help heading, with r1_gui's fields (`r1_gui.training.flags.TrainingRunFlags`)."""

    _argument_group_name = "trl.SFTConfig: SFT and training (every transformers.TrainingArguments field too)"


SFT_ARGUMENTS = (GUIDataArguments, GUISFTConfig, GUIModelConfig)


def parse_sft_arguments(argv: list[str] | None = None):
    """(data arguments, SFT config, model config) from a YAML recipe and the command line."""
    return parse_arguments(SFT_ARGUMENTS, argv)


def sft_arguments(**values):
    """(data arguments, SFT config, model config) from Python values named as the flags are (`arguments_from`)."""
    return arguments_from(SFT_ARGUMENTS, values)


def add_sft_columns(dataset, prompt_style: str, coordinates: str, system_prompt: str | None = None):
    """prompt (as GRPO and evaluation build it), completion (the target answer in the same style and coordinates),
    images, and the chat template kwargs that open Aguvis's planning channel."""
    import json

    from r1_gui.actions import Action, extract_action
    from r1_gui.prompts import build_prompt, build_target, chat_template_kwargs

    template_kwargs = chat_template_kwargs(prompt_style)

    def columns(row):
        if row.get("action_json"):
            action = Action.from_dict(json.loads(row["action_json"]))
        else:
            action = extract_action(row["solution"], coordinates="normalized")
        if action is None:
            raise ValueError(f"row {row.get('id')!r}: its solution {row['solution']!r} does not parse")
        screen_size = tuple(row["screen_size"])
        return {
            "prompt": build_prompt(row["problem"], prompt_style, coordinates, screen_size, system_prompt),
            "completion": build_target(action, row.get("thought"), prompt_style, coordinates, screen_size),
            "images": [row["image"]],
            "chat_template_kwargs": template_kwargs,
        }

    return dataset.map(columns, desc=f"building {prompt_style} SFT targets")


def main(script_args: GUIDataArguments, training_args: SFTConfig, model_args: ModelConfig) -> None:
    """SFT, holding the output folder (one run per folder: r1_gui.output_lock)."""
    from r1_gui.output_lock import output_folder_lock

    with output_folder_lock(training_args.output_dir):
        train_sft(script_args, training_args, model_args)


def train_sft(script_args: GUIDataArguments, training_args: SFTConfig, model_args: ModelConfig) -> None:
    import datasets

    from r1_gui.processing import pixel_bounds, resize_factor
    from r1_gui.training.data import add_model_columns
    from r1_gui.training.progress import show_step_lines

    # 1. Settings and data, checked before the model is loaded; their errors are the user's (one line from the CLI).
    with user_errors():
        model_type, coordinates = model_and_coordinates(model_args, script_args)
        resume = resolve_resume(training_args.resume_from_checkpoint, training_args.output_dir)
        dataset = load_training_rows(script_args, SFT_COLUMNS)

    # 2. Processor, prompts and targets.
    processor = load_training_processor(model_args, script_args)
    dataset = add_model_columns(
        dataset, script_args.prompt_style, coordinates, pixel_bounds(processor), factor=resize_factor(processor)
    )
    dataset = add_sft_columns(dataset, script_args.prompt_style, coordinates, script_args.system_prompt)
    dataset = dataset.select_columns(["prompt", "completion", "images", "chat_template_kwargs"])
    dataset = dataset.cast_column("images", datasets.Sequence(datasets.Image()))

    # 3. Model. A VLM prompt must never be truncated (its image tokens would no longer match the image).
    training_args.max_length = None
    training_args.completion_only_loss = True
    trains_on = f"{len(dataset)} rows of {script_args.dataset_name}"

    # 4. Train and save.
    model = load_training_model("SFT", model_args, script_args, model_type, coordinates, trains_on, logger)
    trainer = GUISFTTrainer(**trainer_inputs(model, training_args, dataset, processor, model_args))
    show_step_lines(trainer)  # one short line per logged step instead of the metrics dict
    train_and_save(trainer, resume, logger)
