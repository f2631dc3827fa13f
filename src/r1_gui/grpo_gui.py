"""The GRPO command: single-step GRPO on a dataset, or multi-turn GRPO on episodes of an environment with --env.

torchrun --nproc_per_node 8 src/r1_gui/grpo_gui.py --config local_scripts/aguvis7b_aitw2k_grpo.yaml ...
python src/r1_gui/grpo_gui.py --config local_scripts/tiny_cpu_grpo.yaml
python src/r1_gui/grpo_gui.py --config local_scripts/tiny_cpu_phone_grpo.yaml      # --env r1_gui/Phone-v0
python -m r1_gui.grpo_gui --config local_scripts/tiny_cpu_grpo.yaml

The arguments and the single-step trainer live in r1_gui.training.grpo, the multi-turn trainer in
r1_gui.multi_turn.train; `--help` lists every flag.
"""

import logging
import sys

from r1_gui.cli_errors import UserError, cli_main
from r1_gui.training.grpo import logger, parse_grpo_arguments
from r1_gui.training.trainer import train_and_save


def main(script_args, training_args, model_args, env_pool=None) -> None:
    """Build the trainer (on a dataset, or on an environment's episodes with --env), train, save. `env_pool`: a
    pool (`r1_gui.envs.backend`) of the --env environment to play in, left open (the demos lend theirs); None: the
    run's own, on the backend --env_backend names."""
    if script_args.env_id:
        from r1_gui.multi_turn.train import multi_turn_trainer

        trainer, resume = multi_turn_trainer(script_args, training_args, model_args, pool=env_pool)
    elif env_pool is not None:
        raise ValueError("an environment pool was lent to a run without --env")
    elif script_args.env_backend != "local" or script_args.env_resources or script_args.env_spares:
        raise UserError(
            "--env_backend, --env_resources and --env_spares say where an environment's episodes play: they need "
            "--env (a dataset run plays none); drop them"
        )
    elif script_args.expert_sft_weight:
        raise UserError(
            f"--expert_sft_weight {script_args.expert_sft_weight} trains on an environment expert's answers: it needs "
            "--env (a dataset run has no expert turns); drop it"
        )
    else:
        from r1_gui.training.grpo import single_step_trainer

        trainer, resume = single_step_trainer(script_args, training_args, model_args)
    train_and_save(trainer, resume, logger)


@cli_main
def cli(argv: list[str] | None = None) -> None:
    """The command line: a user's mistake ends in one `error:` line and exit code 2 (r1_gui.cli_errors)."""
    main(*parse_grpo_arguments(argv))


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    cli(sys.argv[1:])
