"""Check a training command line in one process, stopping before its model loads; exit 0 when it would start.

    python -m r1_gui.settings_check grpo --config local_scripts/aguvis7b_aitw2k_grpo.yaml [--flag value ...]
    python -m r1_gui.settings_check sft --config local_scripts/tiny_cpu_sft.yaml [...]

Under torchrun every worker checks the settings itself, so a mistake is each worker's `error:` line followed by about
30 lines of torch's ChildFailedError and exit code 1. local_scripts/run_grpo_gui.sh runs this first: a mistake is then
one line and exit code 2 before torchrun starts, as with the plain command. It runs whatever the command checks before
its model loads (r1_gui.training.model.settings_only): the flags and recipe, the model's architecture, the data row by
row, the rewards and what they need (a reward of your own tried on row 0), the output folder, an --env run's
environment, which it starts and describes.
"""

from __future__ import annotations

import logging
import sys

from r1_gui.cli_errors import UserError, cli_main
from r1_gui.training.precheck import precheck

COMMANDS = ("grpo", "sft")


@cli_main
def main(argv: list[str] | None = None) -> None:
    argv = [str(arg) for arg in (sys.argv[1:] if argv is None else argv)]
    if not argv or argv[0] not in COMMANDS:
        raise UserError(f"give the command to check first: one of {', '.join(COMMANDS)}, then its flags")
    command, argv = argv[0], argv[1:]
    logging.basicConfig(level=logging.WARNING, format="%(name)s %(levelname)s %(message)s")
    precheck(command, argv)
    if command == "grpo":
        from r1_gui.grpo_gui import main as run
        from r1_gui.grpo_gui import parse_grpo_arguments as parse
    else:
        from r1_gui.sft import main as run
        from r1_gui.sft import parse_sft_arguments as parse
    from r1_gui.training.model import SettingsChecked, settings_only

    try:
        with settings_only():
            run(*parse(argv))
    except SettingsChecked as checked:
        print(f"settings checked: {checked} would start", flush=True)
        return
    raise RuntimeError("the command ran to its end without loading a model")  # a bug: settings_only stops it


if __name__ == "__main__":
    main()
