"""The SFT warm-start command (its code: r1_gui.training.sft; `--help` lists r1_gui's flags, `--help_trl` every one).

python src/r1_gui/sft.py --config local_scripts/tiny_cpu_sft.yaml
python -m r1_gui.sft --config local_scripts/tiny_cpu_sft.yaml

The command line is checked (r1_gui.training.precheck) before torch and trl are imported.
"""

import logging
import sys

from r1_gui.cli_errors import cli_main
from r1_gui.training.precheck import precheck


def main(script_args, training_args, model_args) -> None:
    """r1_gui.training.sft.main (imported when called: it imports trl)."""
    from r1_gui.training.sft import main as train

    train(script_args, training_args, model_args)


def parse_sft_arguments(argv: list[str] | None = None):
    """r1_gui.training.sft.parse_sft_arguments (imported when called: it imports trl)."""
    from r1_gui.training.sft import parse_sft_arguments as parse

    return parse(argv)


@cli_main
def cli(argv: list[str] | None = None) -> None:
    """The command line: a user's mistake ends in one `error:` line and exit code 2 (r1_gui.cli_errors)."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    argv = [str(arg) for arg in (sys.argv[1:] if argv is None else argv)]
    precheck("sft", argv)
    main(*parse_sft_arguments(argv))


if __name__ == "__main__":
    cli(sys.argv[1:])
