"""The SFT warm-start command (its code: r1_gui.training.sft; `--help` lists r1_gui's flags, `--help_trl` every one):
on a dataset's rows, or with --env on the expert's episodes of an environment (r1_gui.multi_turn.warm_start).

python src/r1_gui/sft.py --config local_scripts/tiny_cpu_sft.yaml
python -m r1_gui.sft --config local_scripts/tiny_cpu_sft.yaml
python -m r1_gui.sft --env r1_gui/Phone-v0 --env_episodes 200 --model_name_or_path runs/tiny --output_dir runs/sft

The command line is checked (r1_gui.training.precheck) before torch and trl are imported.
"""

import sys

from r1_gui.training.precheck import training_cli


def main(script_args, training_args, model_args) -> None:
    """SFT on the expert's episodes of --env (r1_gui.multi_turn.warm_start), else on the dataset's rows
    (r1_gui.training.sft.main; both imported when called: they import trl)."""
    if script_args.env_id:
        from r1_gui.multi_turn.warm_start import train_warm_start

        return train_warm_start(script_args, training_args, model_args)
    from r1_gui.training.sft import main as train

    train(script_args, training_args, model_args)


def parse_sft_arguments(argv: list[str] | None = None):
    """r1_gui.training.sft.parse_sft_arguments (imported when called: it imports trl)."""
    from r1_gui.training.sft import parse_sft_arguments as parse

    return parse(argv)


cli = training_cli("sft", parse_sft_arguments, main)  # the command line (r1_gui.training.precheck.training_cli)


if __name__ == "__main__":
    cli(sys.argv[1:])
