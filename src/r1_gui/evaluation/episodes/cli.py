"""Evaluate a GUI agent on whole episodes of an environment (eval/test_phone.py).

    python eval/test_phone.py --model_name_or_path runs/demo-mt/grpo --env_episodes 200 --output_dir results/phone \\
        [--env_tasks go_home open_app] [--max_turns 12] [--history_images 2] [--env_seed_offset 100000]
    python eval/test_phone.py --env r1_gui/Replay-v0 --env_kwargs '{"data_dir": "data/aitw-2k", "split": "test",
        "patch": "expert"}' --model_name_or_path runs/x --output_dir results/replay
    python eval/test_phone.py --env my_module:MyEnv-v0 --model_name_or_path runs/x --output_dir results/mine

--env takes any Gymnasium id whose environment keeps r1_gui's contract (r1_gui.envs.contract), `module:EnvId` for
your own. Episode i plays task tasks[i % len(tasks)] with seed seed_offset + i (keep it apart from the training
seeds, which start at grpo_gui.py's --env_seed_offset, 0 by default). The agent sees exactly what multi-turn
training shows it and is asked through the step evaluation's generators (hf or vllm; LoRA adapter folders too).
Writes OUTPUT_DIR/episodes.jsonl (rerun the same command after an interruption and it continues), metrics.json
(the protocol card first; every rate with its 95% interval over episodes, KEY_ci95), report.md with PNG strips,
run_config.json; see r1_gui.evaluation.episodes.run. --min_pixels/--max_pixels left out: the checkpoint's saved
processor's, as in training. --repeats K plays the episodes K times (pass r samples with --seed + r) and adds the
spread across passes and the share of episodes whose outcome flips.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys

from r1_gui.cli_errors import UserError, cli_main, command_parser, installed, on_interrupt, rerun_command
from r1_gui.evaluation.config import EvalConfig, EvalOutput
from r1_gui.flags import add_flags, checked_flags
from r1_gui.flags.episodes import PLAYED_ENV, EnvFlags, PoolFlags, TurnFlags
from r1_gui.generation import add_backend_arguments, add_generation_arguments
from r1_gui.generation.settings import AskedModel, GenerationSettings

logger = logging.getLogger("r1_gui.evaluation")


def command_line() -> argparse.ArgumentParser:
    """The parser of the command line, built from the flags' declarations."""
    from r1_gui.evaluation.episodes.run import HELD_OUT_SEED_OFFSET, EpisodeSettings

    parser = command_parser(__doc__, prog="eval/test_phone.py")
    add_flags(parser, AskedModel, required=["model_name_or_path"])
    add_flags(parser, EvalOutput, required=["output_dir"])
    # the episode flags are training's (grpo_gui.py --env); the older names stay as aliases
    add_flags(
        parser,
        EnvFlags,
        defaults={"env_id": PLAYED_ENV, "env_episodes": 200, "env_seed_offset": HELD_OUT_SEED_OFFSET},
        aliases={"env_tasks": ["--tasks"], "env_episodes": ["--episodes"], "env_seed_offset": ["--seed_offset"]},
    )
    add_flags(parser, EpisodeSettings, ["repeats"])
    add_flags(parser, TurnFlags)
    add_flags(parser, GenerationSettings, ["batch_size"], defaults={"batch_size": 8})
    add_flags(parser.add_argument_group("where the environments run"), PoolFlags)
    add_generation_arguments(parser, prompting=False, max_new_tokens=128)
    add_backend_arguments(parser)
    add_flags(parser, EvalConfig, ["overwrite"])
    return parser


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = command_line()
    args = parser.parse_args(argv)
    checked_flags(args, EnvFlags, PoolFlags, TurnFlags)  # every bad value in one line, before anything starts
    return args


@cli_main
def main(argv: list[str] | None = None) -> dict:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    from r1_gui.checkpoints import config_folder
    from r1_gui.envs.runtime.pool import EnvStartError
    from r1_gui.evaluation.episodes.run import EpisodeSettings, evaluate_episodes
    from r1_gui.evaluation.errors import EvaluationError
    from r1_gui.evaluation.run.report_text import card_line
    from r1_gui.output_lock import output_folder_lock
    from r1_gui.paths import check_output_folder

    check_output_folder(args.output_dir)  # a file, or a folder that cannot be written to: one line, before any work
    try:
        config_folder(args.model_name_or_path)  # a missing folder is one line, before anything starts
        settings = EpisodeSettings.from_args(args)
        with (
            output_folder_lock(args.output_dir),
            on_interrupt(
                kept=lambda: episodes_kept(args.output_dir),
                resume=lambda: rerun_command(drop_switches=("--overwrite",)),
            ),
        ):
            metrics = evaluate_episodes(args.model_name_or_path, args.output_dir, settings, EvalConfig.from_args(args))
    except (EvaluationError, EnvStartError) as error:
        raise UserError(str(error)) from error
    print(card_line(metrics["protocol"]))
    hidden = ("protocol", "per_task", "per_repeat")
    print(json.dumps({key: value for key, value in metrics.items() if key not in hidden}, indent=2))
    print(f"\nwrote {args.output_dir}/metrics.json, report.md and episodes.jsonl")
    return metrics


def episodes_kept(output_dir: str) -> str:
    """What a Ctrl-C leaves: the episodes written so far, which the same command reuses."""
    from pathlib import Path

    from r1_gui.evaluation.run.predictions_file import read_records
    from r1_gui.evaluation.run.resume import EPISODES_FILE

    path = Path(output_dir) / EPISODES_FILE
    return f"{len(read_records(path, repair=False))} episodes in {path}"


cli = installed(main)  # the installed command (pyproject.toml's [project.scripts]): main, returning nothing
