"""`grpo_gui.py --env r1_gui/Phone-v0`: multi-turn GRPO on episodes of an r1_gui environment.

    python src/r1_gui/grpo_gui.py --config local_scripts/tiny_cpu_phone_grpo.yaml
    python src/r1_gui/grpo_gui.py --env r1_gui/Phone-v0 --env_tasks go_home open_app --max_turns 8 \\
        --model_name_or_path runs/sft --reward_funcs task_success episode_format --output_dir runs/phone-grpo

Each dataset row is an environment reset (a task family and a seed); trl repeats it `num_generations` times, and
each repeat plays the episode to its end (`MultiTurnGRPOTrainer`). Settings are checked, and the token budget
printed, before any weights are loaded.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field

logger = logging.getLogger("r1_gui.grpo_gui")  # the GRPO command's logger

ENV_IDS = ("r1_gui/Phone-v0", "r1_gui/Replay-v0")


@dataclass
class MultiTurnArguments:
    """Multi-turn settings of grpo_gui.py (used only with --env)."""

    env_id: str | None = field(
        default=None,
        metadata={
            "aliases": ["--env"],  # `env:` in a YAML recipe is TrlParser's environment variables: write env_id there
            "help": "Train on episodes of this environment (r1_gui/Phone-v0 or r1_gui/Replay-v0) instead of a "
            "dataset (--env or --env_id; env_id in a YAML recipe).",
        },
    )
    env_kwargs: str | None = field(
        default=None,
        metadata={"help": 'gymnasium.make keywords as JSON, e.g. \'{"data_dir": "data/aitw-2k", "split": "train"}\'.'},
    )
    env_tasks: list[str] | None = field(
        default=None, metadata={"help": "Phone-v0 task families to train on (default: all of r1_gui.envs.TASKS)."}
    )
    env_episodes: int = field(default=512, metadata={"help": "Distinct resets (family, seed) in the training set."})
    env_seed_offset: int = field(default=0, metadata={"help": "The first reset seed (keep evaluation seeds apart)."})
    max_turns: int = field(
        default=12,
        metadata={
            "help": "Turns per episode before it is truncated (and scored). trl's max_tool_calling_iterations "
            "bounds trl's own tool loop, which --env does not use (see r1_gui.multi_turn.trainer)."
        },
    )
    max_turn_tokens: int = field(default=128, metadata={"help": "New tokens the model may write per turn."})
    history_images: int = field(
        default=2,
        metadata={"help": "Screenshots each turn sees (the newest); older ones are dropped, their turns kept as text."},
    )


def training_resets(args: MultiTurnArguments) -> list[tuple[str, int]]:
    """(task, seed) per dataset row: the families in turn, seeds counting from env_seed_offset."""
    from r1_gui.envs import TASKS

    if args.env_id == "r1_gui/Replay-v0":
        return [("replay", args.env_seed_offset + i) for i in range(args.env_episodes)]
    tasks = list(args.env_tasks or TASKS)
    unknown = [task for task in tasks if task not in TASKS]
    if unknown:
        raise ValueError(f"--env_tasks: unknown task(s) {unknown}; valid: {', '.join(TASKS)}")
    return [(tasks[i % len(tasks)], args.env_seed_offset + i) for i in range(args.env_episodes)]


def check_multi_turn(script_args, training_args) -> tuple[dict, int]:
    """(env kwargs, episode token budget); every error names the flag to change."""
    from r1_gui.multi_turn.context import check_token_budget

    if script_args.env_id not in ENV_IDS:
        raise ValueError(f"--env must be one of {', '.join(ENV_IDS)}, got {script_args.env_id!r}")
    if training_args.max_tool_calling_iterations is not None:
        raise ValueError("--max_tool_calling_iterations bounds trl's own tool loop; with --env set --max_turns")
    if script_args.history_images < 1:
        raise ValueError(f"--history_images must be at least 1, got {script_args.history_images}")
    try:
        env_kwargs = json.loads(script_args.env_kwargs) if script_args.env_kwargs else {}
    except json.JSONDecodeError as error:
        raise ValueError(f"--env_kwargs is not JSON: {error}") from None
    if script_args.env_id == "r1_gui/Replay-v0" and "data_dir" not in env_kwargs:
        raise ValueError('--env r1_gui/Replay-v0 needs --env_kwargs \'{"data_dir": "<builder output folder>"}\'')
    budget = check_token_budget(script_args.max_turns, script_args.max_turn_tokens, training_args.max_completion_length)
    return env_kwargs, budget


def image_tokens(processor, width: int, height: int) -> int:
    """Image tokens of one screenshot of width x height after the processor's resize (a blank one is processed)."""
    from PIL import Image

    grid = processor.image_processor(images=[Image.new("RGB", (width, height))], return_tensors="pt")["image_grid_thw"]
    return int(grid.prod()) // processor.image_processor.merge_size**2


def multi_turn_trainer(script_args, training_args, model_args):
    """(MultiTurnGRPOTrainer on environment resets, checkpoint to resume from or None): grpo_gui.main trains it."""
    from datasets import Dataset

    from r1_gui.cli_errors import user_errors
    from r1_gui.envs.phone_env import DEFAULT_HEIGHT, DEFAULT_WIDTH
    from r1_gui.multi_turn.context import OBSERVATION_TOKENS
    from r1_gui.multi_turn.trainer import MultiTurnGRPOTrainer, reset_prompt
    from r1_gui.training.args import resolve_coordinates, resolve_resume
    from r1_gui.training.grpo import build_reward_funcs
    from r1_gui.training.lora import lora_config
    from r1_gui.training.model import check_model, load_training_model, load_training_processor

    # 1. Settings that can be checked without a model; their errors are the user's (one line from the CLI).
    with user_errors():
        env_kwargs, budget = check_multi_turn(script_args, training_args)
        if script_args.prompt_style != "mobile_use":
            logger.info(
                "--env answers with the mobile_use tool: prompt_style %s -> mobile_use", script_args.prompt_style
            )
            script_args.prompt_style = "mobile_use"
        model_type = check_model(model_args.model_name_or_path)
        coordinates = resolve_coordinates(script_args, model_type)
        reward_funcs = build_reward_funcs(script_args, training_args, coordinates)
        resume = resolve_resume(training_args.resume_from_checkpoint, training_args.output_dir)
        resets = training_resets(script_args)
    dataset = Dataset.from_list(
        [{"prompt": reset_prompt(task, seed), "task": task, "seed": seed} for task, seed in resets]
    )

    # 2. The token budget, printed before the weights load.
    processor = load_training_processor(model_args, script_args)
    per_image = image_tokens(
        processor, env_kwargs.get("width", DEFAULT_WIDTH), env_kwargs.get("height", DEFAULT_HEIGHT)
    )
    logger.info(
        "token budget: %d turns x (%d answer + %d tool-response tokens) = %d completion tokens per episode "
        "(max_completion_length %d); each turn's context holds %d screenshot(s) x %d image tokens",
        script_args.max_turns,
        script_args.max_turn_tokens,
        OBSERVATION_TOKENS,
        budget,
        training_args.max_completion_length,
        script_args.history_images,
        per_image,
    )

    # 3. Model and trainer.
    model = load_training_model("GRPO", model_args, script_args, model_type, coordinates, len(dataset), logger)
    trainer = MultiTurnGRPOTrainer(
        model=model,
        reward_funcs=reward_funcs,
        args=training_args,
        train_dataset=dataset,
        processing_class=processor,
        peft_config=lora_config(model_args),
        prompt_style="mobile_use",
        coordinates=coordinates,
        skip_no_signal=script_args.skip_no_signal,
        env_id=script_args.env_id,
        env_kwargs=env_kwargs,
        max_turns=script_args.max_turns,
        history_images=script_args.history_images,
        max_turn_tokens=script_args.max_turn_tokens,
        system=script_args.system_prompt,
    )
    return trainer, resume
