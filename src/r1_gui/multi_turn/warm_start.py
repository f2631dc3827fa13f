"""`r1-gui-sft --env ID`: a warm start on the expert's episodes of any environment that keeps r1_gui's contract and
has an expert (`info["expert_action"]`), before multi-turn GRPO on the same environment.

    python -m r1_gui.sft --env r1_gui/Phone-v0 --env_tasks open_and_return --env_episodes 200 --max_turns 5 \\
        --model_name_or_path runs/tiny --max_steps 800 --learning_rate 5e-4 --output_dir runs/phone-sft
    python -m r1_gui.grpo_gui --env r1_gui/Phone-v0 --model_name_or_path runs/phone-sft ...   # then GRPO from it

The expert plays `--env_episodes` resets (from `--env_seed_offset`) through the agent loop, so each of its turns is
a (context, answer) pair in exactly the context multi-turn GRPO shows (`--max_turns`, `--history_images`, the
mobile_use system prompt or `--system_prompt`), answered in the mobile_use form; SFT then trains on them with the one
SFT trainer (`r1_gui.training.sft.train_turns`, the demos' sight and SFT stages' too): `--max_steps` steps (or
`--num_train_epochs` passes over the turns) of `--per_device_train_batch_size` turns each, drawn at random per step.
"""

from __future__ import annotations

import logging
import math

logger = logging.getLogger("r1_gui.sft")  # the SFT command's logger

EPISODES_AT_ONCE = 8  # the expert's episodes played side by side, each in a worker of the pool


def check_warm_start(script_args) -> dict:
    """The env kwargs, from the settings alone; every error names the flag to change. The flags' checks are their
    declarations' (`r1_gui.training.flags.GUISFTScriptArguments`: the episode and pool flags, a --dataset_name beside
    --env, multi-turn GRPO's own settings refused), run again here on the values as they are now."""
    from r1_gui.flags import FlagProblems
    from r1_gui.flags.episodes import parse_env_kwargs

    problems = script_args.problems()
    if problems:
        raise FlagProblems(problems)
    return parse_env_kwargs(script_args.env_kwargs)


def train_warm_start(script_args, training_args, model_args) -> None:
    """SFT on the expert's episodes of --env, holding the output folder (one run per folder), then the run saved."""
    from r1_gui.output_lock import output_folder_lock

    with output_folder_lock(training_args.output_dir):
        _train(script_args, training_args, model_args)


def _train(script_args, training_args, model_args) -> None:
    from r1_gui.cli_errors import user_errors
    from r1_gui.envs.contract import choose_tasks, reset_plan
    from r1_gui.envs.runtime.backend import make_pool, pool_settings
    from r1_gui.envs.runtime.pool import EnvStartError
    from r1_gui.multi_turn.expert import expert_turns
    from r1_gui.training.model import load_training_model, load_training_processor, model_and_coordinates
    from r1_gui.training.resume import resolve_resume
    from r1_gui.training.sft import Turns, train_turns
    from r1_gui.training.trainer import save_run

    env_id = script_args.env_id
    # 1. Settings and the environment, checked before the model loads; their errors are the user's.
    with user_errors(ValueError, OSError, EnvStartError):
        env_kwargs = check_warm_start(script_args)
        script_args.prompt_style = "mobile_use"  # the expert answers with the mobile_use tool, as --env GRPO does
        model_type, coordinates = model_and_coordinates(model_args, script_args)
        resume = resolve_resume(training_args.resume_from_checkpoint, training_args.output_dir)
        pool = make_pool(env_id, env_kwargs, step_timeout=script_args.env_step_timeout,
                         settings=pool_settings(script_args))  # fmt: skip
    with pool:
        with user_errors(ValueError, EnvStartError):
            described = pool.describe(seed=script_args.env_seed_offset)  # the contract, checked in a worker
            if not described.has_expert:
                raise ValueError(f"--env {env_id} has no expert (info['expert_action']) to learn from")
            tasks = choose_tasks(env_id, described.tasks, script_args.env_tasks, described.task_presets)
        resets = reset_plan(tasks, script_args.env_episodes, script_args.env_seed_offset)
        processor = load_training_processor(model_args, script_args)
        trains_on = f"the expert's turns in {len(resets)} episodes of {env_id}"
        model = load_training_model("SFT", model_args, script_args, model_type, coordinates, trains_on, logger)
        turns = Turns(
            expert_turns(
                pool, resets, processor, max_turns=script_args.max_turns, history_images=script_args.history_images,
                system=script_args.system_prompt, batch_size=EPISODES_AT_ONCE,
            )
        )  # fmt: skip
    logger.info("%d expert turns from %d episodes of %s", len(turns), len(resets), env_id)
    if training_args.max_steps < 1:  # --num_train_epochs passes over the turns
        batch = training_args.per_device_train_batch_size
        training_args.max_steps = math.ceil(training_args.num_train_epochs * len(turns) / batch)
    trainer = train_turns(model, processor, turns, training_args, resume=resume)
    save_run(trainer, logger)
