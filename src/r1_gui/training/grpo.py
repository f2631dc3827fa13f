"""GRPO training of a GUI agent (Qwen2-VL, Qwen2.5-VL, Qwen3-VL, Aguvis) on builder datasets.

    # 8 GPUs, the original R1-V-GUI-Agent run (Aguvis-7B, AITW-2k, ZeRO-1):
    torchrun --nproc_per_node 8 src/r1_gui/grpo_gui.py --config local_scripts/aguvis7b_aitw2k_grpo.yaml \\
        --model_name_or_path xlangai/Aguvis-7B-720P --dataset_name data/aitw-2k --output_dir runs/aguvis-grpo
    # several nodes, or with environment variables instead of flags:
    MODEL_PATH=... DATA_DIR=data/aitw-2k NNODES=2 NODE_RANK=0 MASTER_ADDR=node0 bash local_scripts/run_grpo_gui.sh
    # CPU smoke test on a tiny local model:
    python src/r1_gui/grpo_gui.py --config local_scripts/tiny_cpu_grpo.yaml --model_name_or_path models/tiny \\
        --dataset_name data/synthetic --output_dir runs/tiny

Arguments: r1_gui's flags (`GUIGRPOScriptArguments` and the rest, declared in r1_gui.training.flags), every
`trl.GRPOConfig` field and every `trl.ModelConfig` field (LoRA via --use_peft --lora_r ...). A YAML recipe (--config) sets defaults; the command line overrides it. Unknown arguments,
unknown reward names and impossible batch sizes fail before any model is loaded.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

from trl import GRPOConfig

from r1_gui.cli_errors import user_errors
from r1_gui.training.args import (
    CheckpointingUnderItsNewName,
    GUIModelConfig,
    arguments_from,
    parse_arguments,
)
from r1_gui.training.data import load_training_rows
from r1_gui.training.flags import GRPORunFlags, GUIGRPOScriptArguments, parse_reward_kwargs
from r1_gui.training.model import load_training_model, load_training_processor, model_and_coordinates, trainer_inputs
from r1_gui.training.resume import resolve_resume

logger = logging.getLogger("r1_gui.grpo_gui")  # the command's name, as its log lines always said


@dataclass
class GUIGRPOConfig(CheckpointingUnderItsNewName, GRPORunFlags, GRPOConfig):
    """trl.GRPOConfig with r1_gui's fields (`r1_gui.training.flags.GRPORunFlags`), and the batch-size check made to
    say which settings would work."""

    _argument_group_name = "trl.GRPOConfig: GRPO and training (every transformers.TrainingArguments field too)"

    def __post_init__(self):
        check_generation_batch(self)
        if self.generation_compile:
            from r1_gui.generation.compiled import check_cache_implementation

            check_cache_implementation(self.cache_implementation)
        super().__post_init__()


def check_generation_batch(args: GRPOConfig) -> None:
    """generation batch (per-device batch x processes x steps_per_generation) must hold whole prompt groups."""
    if args.generation_batch_size is not None or args.num_generations is None:
        return
    processes = int(os.environ.get("WORLD_SIZE", "1"))
    steps = args.steps_per_generation or args.gradient_accumulation_steps
    batch = args.per_device_train_batch_size * processes * steps
    generations = args.num_generations
    if generations < 2:
        raise ValueError(f"num_generations must be at least 2 for GRPO (group-relative advantages), got {generations}")
    if batch % generations == 0:
        return
    divisors = [g for g in range(2, batch + 1) if batch % g == 0]
    per_device = [b for b in range(1, 8 * generations + 1) if (b * processes * steps) % generations == 0][:3]
    raise ValueError(
        f"per_device_train_batch_size ({args.per_device_train_batch_size}) x processes ({processes}) x "
        f"steps_per_generation ({steps}) = {batch} completions per generation, which is not divisible by "
        f"num_generations ({generations}). Settings that work: --num_generations one of {divisors or 'none'}, "
        f"or --per_device_train_batch_size one of {per_device}."
    )


GRPO_ARGUMENTS = (GUIGRPOScriptArguments, GUIGRPOConfig, GUIModelConfig)


def parse_grpo_arguments(argv: list[str] | None = None):
    """(script arguments, GRPO config, model config) from a YAML recipe and the command line."""
    return parse_arguments(GRPO_ARGUMENTS, argv)


def grpo_arguments(**values):
    """(script arguments, GRPO config, model config) from Python values, named as the flags are (without --):
    `r1_gui.training.args.arguments_from`. What the demos build; `train_single_step` or, with env_id,
    `r1_gui.multi_turn.train.train_multi_turn` takes them."""
    return arguments_from(GRPO_ARGUMENTS, values)


def as_trl_scores(row: dict) -> dict:
    """A dataset row as trl 1.16 hands it to the reward functions: its conversational prompt with the row's images
    put in (trl's `prepare_multimodal_messages`, as `_generate_and_score_completions` does), so a probe of a user's
    reward sees what training will give it."""
    from trl.data_utils import prepare_multimodal_messages

    images = row.get("images") or ([row["image"]] if row.get("image") is not None else None)
    if not images or not isinstance(row.get("prompt"), list):
        return row
    return {**row, "prompt": prepare_multimodal_messages(row["prompt"], images=images)}


def train_single_step(script_args, training_args, model_args) -> None:
    """Single-step GRPO on the dataset's rows, holding the output folder (one run per folder), then the run saved."""
    from r1_gui.output_lock import output_folder_lock
    from r1_gui.training.trainer import train_and_save

    with output_folder_lock(training_args.output_dir):
        trainer, resume = single_step_trainer(script_args, training_args, model_args)
        train_and_save(trainer, resume, logger)


def grpo_trainer_inputs(model, training_args, dataset, processor, model_args, script_args, reward_funcs) -> dict:
    """`trainer_inputs` and what every r1_gui GRPO trainer (`GUIGRPOBase`: single-step or multi-turn) takes from the
    script arguments."""
    return {
        **trainer_inputs(model, training_args, dataset, processor, model_args),
        "reward_funcs": reward_funcs,
        "prompt_style": script_args.prompt_style,
        "skip_no_signal": script_args.skip_no_signal,
    }


def build_reward_funcs(script_args, training_args, coordinates) -> list:
    """--reward_funcs (presets expanded, --reward_weights set to match) as callables; raises on a bad setting."""
    from r1_gui.rewards import expand_reward_presets, get_reward_funcs

    names, training_args.reward_weights = expand_reward_presets(script_args.reward_funcs, training_args.reward_weights)
    reward_funcs = get_reward_funcs(
        names,
        reward_kwargs=parse_reward_kwargs(script_args.reward_kwargs),
        coordinates=coordinates,
        prompt_style=script_args.prompt_style,
    )
    if training_args.reward_weights is not None and len(training_args.reward_weights) != len(reward_funcs):
        raise ValueError(
            f"--reward_weights has {len(training_args.reward_weights)} values for {len(reward_funcs)} reward "
            f"functions ({', '.join(names)})"
        )
    return reward_funcs


def single_step_trainer(script_args, training_args, model_args):
    """(GUIGRPOTrainer on the dataset's rows, checkpoint to resume from or None)."""
    from r1_gui.processing import pixel_bounds, resize_factor
    from r1_gui.prompts import chat_template_kwargs
    from r1_gui.rewards import check_reward_needs, expand_reward_presets, probe_rewards
    from r1_gui.training.completions_table import start_completions_table
    from r1_gui.training.data import GRPO_COLUMNS, MODEL_COLUMNS, add_model_columns
    from r1_gui.training.trainer import GUIGRPOTrainer

    # 1. Settings that can be checked without a model; their errors are the user's (one line from the CLI).
    with user_errors():
        model_type, coordinates = model_and_coordinates(model_args, script_args)
        reward_funcs = build_reward_funcs(script_args, training_args, coordinates)

        resume = resolve_resume(training_args.resume_from_checkpoint, training_args.output_dir)

        # 2. Data: checked row by row before the model is loaded; every reward must have what it scores with.
        dataset = load_training_rows(script_args, GRPO_COLUMNS)
        names, _ = expand_reward_presets(script_args.reward_funcs, training_args.reward_weights)
        columns = {*dataset.column_names, *MODEL_COLUMNS}
        check_reward_needs(names, {"completion", *columns}, f"--dataset_name {script_args.dataset_name}")

    # 3. Model and processor.
    processor = load_training_processor(model_args, script_args)
    dataset = add_model_columns(
        dataset,
        script_args.prompt_style,
        coordinates,
        pixel_bounds(processor),
        script_args.system_prompt,
        factor=resize_factor(processor),
    )
    training_args.chat_template_kwargs = {
        **(training_args.chat_template_kwargs or {}),
        **chat_template_kwargs(script_args.prompt_style),
    }
    trains_on = f"{len(dataset)} rows of {script_args.dataset_name}"
    probe_rewards(reward_funcs, as_trl_scores(dataset[0]), "row 0 of the dataset")  # a user's reward that fails

    # 4. The trainer.
    model = load_training_model("GRPO", model_args, script_args, model_type, coordinates, trains_on, logger)
    trainer = GUIGRPOTrainer(
        **grpo_trainer_inputs(model, training_args, dataset, processor, model_args, script_args, reward_funcs),
        coordinates=coordinates,
        completions_table_steps=script_args.completions_table_steps,
        dedupe_images=script_args.dedupe_images,
    )
    if training_args.process_index == 0:
        start_completions_table(training_args.output_dir, resume)
    return trainer, resume
