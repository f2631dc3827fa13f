"""The GRPO command: single-step GRPO on a dataset, or multi-turn GRPO on episodes of an environment with --env.

torchrun --nproc_per_node 8 src/r1_gui/grpo_gui.py --config local_scripts/aguvis7b_aitw2k_grpo.yaml ...
python src/r1_gui/grpo_gui.py --config local_scripts/tiny_cpu_grpo.yaml
python src/r1_gui/grpo_gui.py --config local_scripts/tiny_cpu_phone_grpo.yaml      # --env r1_gui/Phone-v0
python -m r1_gui.grpo_gui --config local_scripts/tiny_cpu_grpo.yaml

The arguments and the single-step trainer live in r1_gui.training.grpo, the multi-turn trainer in
r1_gui.multi_turn.train; `--help` lists r1_gui's flags and the most used of trl's, `--help_trl` every flag. The
command line is checked (r1_gui.training.precheck) before torch and trl are imported, so a mistake fails at once.
"""

import sys

from r1_gui.training.precheck import training_cli


def main(script_args, training_args, model_args, env_pool=None) -> None:
    """Train and save: multi-turn GRPO on an environment's episodes with --env (`r1_gui.multi_turn.train`), else
    single-step GRPO on the dataset's rows (`r1_gui.training.grpo`). `env_pool`: a pool (`r1_gui.envs.runtime.backend`) of
    the --env environment to play in, left open (the demos lend theirs); None: the run's own, on the backend
    --env_backend names."""
    if script_args.env_id:
        from r1_gui.multi_turn.train import train_multi_turn

        return train_multi_turn(script_args, training_args, model_args, pool=env_pool)
    if env_pool is not None:
        raise ValueError("an environment pool was lent to a run without --env")
    # the episode flags on a run without --env were refused when the settings were made (training.flags)
    from r1_gui.training.grpo import train_single_step

    return train_single_step(script_args, training_args, model_args)


def flag_problems(settings) -> list[str]:
    """The checks of the GRPO flags' values that live above training/ (an --env run's: r1_gui.multi_turn.train), for
    the pre-check to run before trl is imported."""
    if not settings.env_id:
        return []
    from r1_gui.multi_turn.train import episode_problems

    return episode_problems(settings, settings)


def parse_grpo_arguments(argv: list[str] | None = None):
    """r1_gui.training.grpo.parse_grpo_arguments (imported when called: it imports trl)."""
    from r1_gui.training.grpo import parse_grpo_arguments as parse

    return parse(argv)


# the command line (r1_gui.training.precheck.training_cli)
cli = training_cli("grpo", parse_grpo_arguments, main, flag_problems)


if __name__ == "__main__":
    cli(sys.argv[1:])
