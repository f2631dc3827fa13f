"""`grpo_gui.py --env ID`: multi-turn GRPO on episodes of any environment that keeps r1_gui's contract.

    python src/r1_gui/grpo_gui.py --config local_scripts/tiny_cpu_phone_grpo.yaml
    python src/r1_gui/grpo_gui.py --env r1_gui/Phone-v0 --env_tasks go_home open_app --max_turns 8 \\
        --model_name_or_path runs/sft --reward_funcs task_success episode_format --output_dir runs/phone-grpo
    python src/r1_gui/grpo_gui.py --env my_module:MyEnv-v0 ...          # your own environment, in my_module.py

Each dataset row is an environment reset (a task and a seed); trl repeats it `num_generations` times, and each
repeat plays the episode to its end (`MultiTurnGRPOTrainer`). Before any weights load, one environment is built in
a worker and checked against the contract (`r1_gui.envs.contract.check_env`), the tasks and rewards are checked
against what it declares, and the token budget is printed.
"""

from __future__ import annotations

import logging

logger = logging.getLogger("r1_gui.grpo_gui")  # the GRPO command's logger


def episode_problems(script_args, training_args) -> list[str]:
    """What is wrong with an --env run's settings beyond each flag's own checks (`r1_gui.training.flags`): trl's tool
    loop, the step-level credit, the token budget; every problem, each naming its flag (the pre-check runs this too,
    before trl is imported)."""
    from r1_gui.agent.context import check_token_budget
    from r1_gui.multi_turn.advantages import check_step_credit

    problems = []
    if training_args.max_tool_calling_iterations is not None:
        problems.append("--max_tool_calling_iterations bounds trl's own tool loop; with --env set --max_turns")
    try:
        check_step_credit(script_args.advantage_estimator, script_args.step_advantage_weight, script_args.step_gamma)
    except ValueError as error:
        problems.append(str(error))
    if script_args.rollout_mode == "async":  # its checks import torch: only where they apply
        try:
            check_rollout_mode(script_args, training_args)
        except ValueError as error:
            problems.append(str(error))
    if script_args.max_turns >= 1 and script_args.max_turn_tokens >= 1:  # else their own checks name them
        try:
            check_token_budget(script_args.max_turns, script_args.max_turn_tokens, training_args.max_completion_length)
        except ValueError as error:
            problems.append(str(error))
    return problems


def check_multi_turn(script_args, training_args) -> tuple[dict, int]:
    """(env kwargs, episode token budget) from the settings alone; every error names the flag to change."""
    from r1_gui.agent.context import episode_token_budget
    from r1_gui.flags import FlagProblems
    from r1_gui.flags.episodes import parse_env_kwargs

    problems = episode_problems(script_args, training_args)
    if problems:
        raise FlagProblems(problems)
    return parse_env_kwargs(script_args.env_kwargs), episode_token_budget(
        script_args.max_turns, script_args.max_turn_tokens
    )


def async_settings(script_args):
    """The AsyncSettings of --rollout_workers, --max_staleness, --rollout_groups_ahead and --weight_sync_steps; with
    --env_backend ray the workers are Ray actors placed where --env_resources are (beside their environments)."""
    from r1_gui.envs.runtime.backend import pool_settings
    from r1_gui.rollout.engine import AsyncSettings

    pool = pool_settings(script_args)
    return AsyncSettings(
        workers=script_args.rollout_workers,
        max_staleness=script_args.max_staleness,
        groups_ahead=script_args.rollout_groups_ahead,
        weight_sync_steps=script_args.weight_sync_steps,
        ray=pool if pool.backend == "ray" else None,
    )


def check_rollout_mode(script_args, training_args) -> None:
    """--rollout_mode and its settings; ValueError naming the flag."""
    from r1_gui.rollout.correction import check_cap
    from r1_gui.rollout.engine import MODES, check_async_settings

    if script_args.rollout_mode not in MODES:
        raise ValueError(f"--rollout_mode {script_args.rollout_mode}: choose {' or '.join(MODES)}")
    if script_args.rollout_mode == "sync":
        return
    check_async_settings(async_settings(script_args))
    check_cap(script_args.importance_ratio_cap)
    if training_args.use_vllm:
        raise ValueError(
            "--rollout_mode async: the rollout workers generate with transformers, each with its own copy of the "
            "policy; --use_vllm is not supported with it yet: drop one of them"
        )
    if training_args.num_iterations != 1:
        raise ValueError(
            f"--rollout_mode async takes one batch of groups per optimizer step; --num_iterations "
            f"{training_args.num_iterations} trains on one batch for several steps: set it to 1"
        )
    if training_args.steps_per_generation not in (None, training_args.gradient_accumulation_steps):
        raise ValueError(
            f"--rollout_mode async takes one batch of groups per optimizer step; --steps_per_generation "
            f"{training_args.steps_per_generation} differs from --gradient_accumulation_steps "
            f"{training_args.gradient_accumulation_steps}: leave it unset"
        )


def async_rollouts(trainer, script_args, model_args, env_kwargs: dict, resets, seed: int):
    """The AsyncRollouts of --rollout_mode async for `trainer`: its workers build the trainer's model from the same
    files (and LoRA wrapping) and generate as the trainer's own policy does (`MultiTurnGRPOTrainer._policy`)."""
    import copy

    from r1_gui.envs.runtime.backend import pool_settings
    from r1_gui.rollout.engine import AsyncRollouts
    from r1_gui.rollout.worker import WorkerSpec

    model = trainer.accelerator.unwrap_model(trainer.model)
    peft_config = getattr(model, "peft_config", None)
    generation_config = copy.deepcopy(trainer.generation_config)
    generation_config.max_new_tokens = script_args.max_turn_tokens
    args = trainer.args
    rows = args.per_device_train_batch_size * args.gradient_accumulation_steps
    if rows % trainer.num_generations:
        raise ValueError(
            f"--rollout_mode async hands each process whole groups: its {rows} rows a step "
            f"(--per_device_train_batch_size x --gradient_accumulation_steps) do not divide into groups of "
            f"--num_generations {trainer.num_generations}"
        )
    spec = WorkerSpec(
        model_name_or_path=model_args.model_name_or_path,
        dtype=model_args.dtype,
        attn_implementation=model_args.attn_implementation,
        vision_attention=model_args.vision_attention,
        peft_config=None if peft_config is None else peft_config["default"],
        processor=trainer.processing_class,
        generation_config=generation_config,
        eos_token_ids=list(trainer.eos_token_ids),
        pad_token_id=trainer.text_tokenizer.pad_token_id,
        env_id=script_args.env_id,
        env_kwargs=env_kwargs,
        step_timeout=script_args.env_step_timeout,
        play=trainer.play_settings(),
        num_generations=trainer.num_generations,
        # local workers share the trainer's device (each a copy of the model); Ray actors use a GPU of their own if any
        device=str(trainer.accelerator.device) if pool_settings(script_args).backend != "ray" else "auto",
        # a worker's own environments: on its Ray node, or sessions of --env_backend openenv's servers
        pool=pool if (pool := pool_settings(script_args)).backend == "openenv" else None,
    )
    return AsyncRollouts(spec, async_settings(script_args), resets, rows // trainer.num_generations, seed=seed)


def image_tokens(processor, width: int, height: int) -> int:
    """Image tokens of one screenshot of width x height after the processor's resize (a blank one is processed)."""
    from PIL import Image

    grid = processor.image_processor(images=[Image.new("RGB", (width, height))], return_tensors="pt")["image_grid_thw"]
    return int(grid.prod()) // processor.image_processor.merge_size**2


def multi_turn_trainer(script_args, training_args, model_args, pool=None, rollouts=None):
    """(MultiTurnGRPOTrainer on environment resets, checkpoint to resume from or None): grpo_gui.main trains it.
    `rollouts`: asynchronous rollouts to take the episodes from (`r1_gui.rollout.engine.AsyncRollouts` or one
    with its interface); None: those of --rollout_mode async, or with sync each step plays its own.
    `pool`: a pool (`r1_gui.envs.runtime.backend`) of the same environment and keywords to play in (its started environments
    are reused, and it stays open after training: the caller closes it); None: a pool of the run's own on the backend
    --env_backend names, closed when training ends."""
    from datasets import Dataset

    from r1_gui.agent.context import OBSERVATION_TOKENS
    from r1_gui.checkpoints import write_episode_settings
    from r1_gui.cli_errors import user_errors
    from r1_gui.envs.contract import choose_tasks, reset_plan
    from r1_gui.envs.runtime.backend import make_pool, pool_settings
    from r1_gui.envs.runtime.pool import EnvStartError, check_lent
    from r1_gui.multi_turn.trainer import MultiTurnGRPOTrainer, reset_prompt
    from r1_gui.rewards import check_reward_needs, expand_reward_presets
    from r1_gui.training.grpo import build_reward_funcs, grpo_trainer_inputs
    from r1_gui.training.model import load_training_model, load_training_processor, model_and_coordinates
    from r1_gui.training.resume import resolve_resume

    env_id = script_args.env_id
    # 1. Settings that can be checked without a model; their errors are the user's (one line from the CLI), an
    # environment that cannot start too (its module raised on import, its browser is missing).
    with user_errors(ValueError, OSError, EnvStartError):
        env_kwargs, budget = check_multi_turn(script_args, training_args)
        if script_args.prompt_style != "mobile_use":
            logger.info(
                "--env answers with the mobile_use tool: prompt_style %s -> mobile_use", script_args.prompt_style
            )
            script_args.prompt_style = "mobile_use"
        model_type, coordinates = model_and_coordinates(model_args, script_args)
        resume = resolve_resume(training_args.resume_from_checkpoint, training_args.output_dir)
        lent = pool is not None
        timeout = script_args.env_step_timeout
        if lent:
            pool = check_lent(pool, env_id, env_kwargs, timeout)
        else:
            pool = make_pool(env_id, env_kwargs, step_timeout=timeout, settings=pool_settings(script_args))
        described = pool.describe(seed=script_args.env_seed_offset)  # the contract, checked in a worker
        tasks = choose_tasks(env_id, described.tasks, script_args.env_tasks, described.task_presets)
        expert = ("expert_action",) if described.has_expert else ()
        available = {"episode", *expert, "task", "seed"}  # task and seed: the columns of the run's rows (below)
        names, _ = expand_reward_presets(script_args.reward_funcs, training_args.reward_weights)
        check_reward_needs(names, available, f"--env {env_id}")
        if script_args.expert_sft_weight and not described.has_expert:
            raise ValueError(
                f"--expert_sft_weight {script_args.expert_sft_weight}: {env_id} has no expert (info['expert_action']) "
                "to train on; drop the flag or pick an environment with an expert"
            )
        reward_funcs = build_reward_funcs(script_args, training_args, coordinates)
    resets = reset_plan(tasks, script_args.env_episodes, script_args.env_seed_offset)  # one dataset row each
    dataset = Dataset.from_list(
        [{"prompt": reset_prompt(task, seed), "task": task or "", "seed": seed} for task, seed in resets]
    )

    # 2. The token budget, printed before the weights load.
    processor = load_training_processor(model_args, script_args)
    logger.info(
        "token budget: %d turns x (%d answer + %d tool-response tokens) = %d completion tokens per episode "
        "(max_completion_length %d); each turn's context holds %d screenshot(s) x %d image tokens (%dx%d screens)",
        script_args.max_turns,
        script_args.max_turn_tokens,
        OBSERVATION_TOKENS,
        budget,
        training_args.max_completion_length,
        script_args.history_images,
        image_tokens(processor, *described.screen_size),
        *described.screen_size,
    )

    # 3. Model and trainer.
    trains_on = f"{len(dataset)} resets of {env_id} (tasks: {', '.join(t or '(its own)' for t in tasks)})"
    model = load_training_model("GRPO", model_args, script_args, model_type, coordinates, trains_on, logger)
    if training_args.process_index == 0:  # what the episodes were, for an evaluation to compare with (once it trains)
        write_episode_settings(
            training_args.output_dir,
            {"env_id": env_id, "env_kwargs": env_kwargs, "tasks": tasks, "max_turns": script_args.max_turns,
             "max_turn_tokens": script_args.max_turn_tokens, "history_images": script_args.history_images},
        )  # fmt: skip
    trainer = MultiTurnGRPOTrainer(
        **grpo_trainer_inputs(model, training_args, dataset, processor, model_args, script_args, reward_funcs),
        coordinates=coordinates,
        env_pool=pool,
        max_turns=script_args.max_turns,
        history_images=script_args.history_images,
        max_turn_tokens=script_args.max_turn_tokens,
        system=script_args.system_prompt,
        expert_sft_weight=script_args.expert_sft_weight,
        close_pool=not lent,
        advantage_estimator=script_args.advantage_estimator,
        step_advantage_weight=script_args.step_advantage_weight,
        step_gamma=script_args.step_gamma,
        importance_ratio_cap=script_args.importance_ratio_cap,
    )
    if rollouts is None and script_args.rollout_mode == "async":
        with user_errors(ValueError):
            rollouts = async_rollouts(trainer, script_args, model_args, env_kwargs, resets, training_args.seed)
    if rollouts is not None:
        trainer.attach_rollouts(rollouts)
    return trainer, resume


def train_multi_turn(script_args, training_args, model_args, pool=None, rollouts=None) -> None:
    """Multi-turn GRPO on the environment's episodes (`multi_turn_trainer`), holding the output folder (one run per
    folder), then the run saved. `pool`, `rollouts`: as `multi_turn_trainer`'s."""
    from r1_gui.output_lock import output_folder_lock
    from r1_gui.training.trainer import train_and_save

    with output_folder_lock(training_args.output_dir):
        trainer, resume = multi_turn_trainer(script_args, training_args, model_args, pool=pool, rollouts=rollouts)
        train_and_save(trainer, resume, logger)
