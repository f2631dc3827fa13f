"""What a training command line checks before it imports torch and trl (those imports alone take 5-20 s): an unknown
flag or recipe key, nothing to train on, a model or dataset folder that does not exist, and `--help`.

    precheck("grpo", argv)     # in grpo_gui.py's command line, before anything heavy is imported

It reads the commands' flags from `command_lines.json`, which `python -m r1_gui.training.command_lines` writes
from the real parsers (tests/test_cli_errors.py fails when it is out of date and says to run that). The full parser
still checks everything again after the imports; this only makes the common mistakes fast.
`--help` prints r1_gui's own flags and the most used trl ones; `--help_trl` prints the full parser's help.
"""

from __future__ import annotations

import difflib
import json
import logging
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

from r1_gui.cli_errors import UserError, cli_main, one_line
from r1_gui.paths import check_local_or_hub

TABLE = Path(__file__).with_name("command_lines.json")
FULL_HELP = "--help_trl"

# What each command needs to have something to train on: (what it says, the flags any one of which is enough).
NEEDS = {
    "grpo": ("a dataset (--dataset_name DATA_FOLDER) or an environment (--env ENV_ID)", ("dataset_name", "env_id")),
    "sft": ("a dataset (--dataset_name DATA_FOLDER)", ("dataset_name",)),
}
SCRIPTS = {"grpo": "src/r1_gui/grpo_gui.py", "sft": "src/r1_gui/sft.py"}
RECIPES = {"grpo": "local_scripts/tiny_cpu_grpo.yaml", "sft": "local_scripts/tiny_cpu_sft.yaml"}


def training_cli(command: str, parse: Callable, main: Callable) -> Callable:
    """The command line of a training command (grpo_gui.py, sft.py): INFO log lines, the arguments checked by
    `precheck` before trl is imported, then ``main(*parse(argv))``. A user's mistake ends in one `error:` line and
    exit code 2 (r1_gui.cli_errors)."""

    @cli_main
    def cli(argv: list[str] | None = None) -> None:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
        argv = [str(arg) for arg in (sys.argv[1:] if argv is None else argv)]
        precheck(command, argv)
        main(*parse(argv))

    return cli


def precheck(command: str, argv: list[str]) -> None:
    """Print the short help and exit on -h/--help; raise UserError on an unknown flag or recipe key, a missing model
    or dataset, or a local model or dataset folder that does not exist. Returns when the full parser should run."""
    argv = config_flag_checked(argv)
    table = json.loads(TABLE.read_text())[command]
    options = table["options"]  # option string -> field name
    if FULL_HELP in argv:
        return  # the full parser prints its help
    if "-h" in argv or "--help" in argv:
        print(table["short_help"])
        raise SystemExit(0)
    given, recipe = {}, None
    for index, arg in enumerate(argv):
        if not arg.startswith("--") or arg == "--":
            continue
        flag, _, inline = arg.partition("=")
        if flag == "--config":
            recipe = argv[index + 1]  # config_flag_checked: --config is followed by its path
            continue
        if flag not in options:
            raise UserError(f"unknown flag {flag}{_closest(flag.lstrip('-'), table['fields'], '--')}; run with --help")
        following = argv[index + 1] if index + 1 < len(argv) and not argv[index + 1].startswith("--") else ""
        given[options[flag]] = inline or following
    settings = {**recipe_values(recipe, table["fields"]), **given}
    if not settings.get("model_name_or_path"):
        raise UserError(
            "--model_name_or_path is missing: give a model folder (`python -m r1_gui.tiny --out models/tiny` builds "
            f"a tiny one) or a Hub id, or a recipe: python {SCRIPTS[command]} --config {RECIPES[command]}"
        )
    what, enough = NEEDS[command]
    if not any(settings.get(name) for name in enough):
        raise UserError(f"nothing to train on: give {what}, e.g. python {SCRIPTS[command]} --config {RECIPES[command]}")
    check_local_or_hub(settings["model_name_or_path"], "--model_name_or_path")
    if settings.get("dataset_name") and not settings.get("env_id"):
        check_local_or_hub(settings["dataset_name"], "--dataset_name", repo_type="dataset")
    if settings.get("deepspeed"):
        check_extension_locks()


# How old a torch extension build lock may be before it is taken for one a stopped run left: a build holds it for
# seconds to a few minutes, and every later load of that extension waits for it to go, with no end and no output.
STALE_LOCK_S = 15 * 60


def extension_locks_root() -> Path:
    """Where torch builds the C++ extensions DeepSpeed loads at start (its CPU communication op, CPU Adam, ...):
    $TORCH_EXTENSIONS_DIR, else $XDG_CACHE_HOME or ~/.cache, then torch_extensions."""
    if os.environ.get("TORCH_EXTENSIONS_DIR"):
        return Path(os.environ["TORCH_EXTENSIONS_DIR"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "torch_extensions"


def check_extension_locks(now: float | None = None) -> None:
    """Raise UserError on a torch extension lock file older than STALE_LOCK_S: a run stopped while it built or loaded
    an extension leaves it behind, and a DeepSpeed run that loads that extension then waits for it forever."""
    now = time.time() if now is None else now
    root = extension_locks_root()
    ages = {}
    for lock in (*root.glob("*/lock"), *root.glob("*/*/lock")):  # <root>/<name>/lock with TORCH_EXTENSIONS_DIR set
        try:
            ages[lock] = now - lock.stat().st_mtime
        except FileNotFoundError:  # another run's build released it between the listing and this look
            continue
    stale = sorted(lock for lock, age in ages.items() if age > STALE_LOCK_S)
    if stale:
        minutes = round(ages[stale[0]] / 60)
        raise UserError(
            f"{stale[0]} is a torch extension build lock left {minutes} min ago by a run that was stopped while "
            "building or loading the extension: --deepspeed would wait for it forever. If no other run on this "
            f"machine is starting right now, delete it: rm {' '.join(str(lock) for lock in stale)}"
        )


def config_flag_checked(argv) -> list[str]:
    """``argv`` with ``--config=RECIPE`` written as ``--config RECIPE`` (trl's parser reads only that form); a second
    --config, or one without a path, is a UserError (trl would read the first and call the second an unknown flag)."""
    argv = [str(arg) for arg in argv]
    spelled = []
    for arg in argv:
        spelled.extend(["--config", arg.split("=", 1)[1]] if arg.startswith("--config=") else [arg])
    places = [index for index, arg in enumerate(spelled) if arg == "--config"]
    if any(index + 1 >= len(spelled) or spelled[index + 1].startswith("--") for index in places):
        raise UserError("--config needs the path of a YAML recipe, e.g. --config local_scripts/tiny_cpu_grpo.yaml")
    if len(places) > 1:
        recipes = ", ".join(spelled[index + 1] for index in places)
        raise UserError(
            f"--config is given {len(places)} times ({recipes}): one recipe is read; set its other values with "
            "flags, which override the recipe"
        )
    return spelled


def recipe_values(path: str | None, fields: list[str]) -> dict:
    """The keys of a --config recipe that name a field (the rest fails here, with the closest names)."""
    if path is None:
        return {}
    import yaml

    recipe = Path(path)
    if not recipe.is_file():
        raise UserError(f"--config {path}: no such file; give a YAML recipe, e.g. local_scripts/tiny_cpu_grpo.yaml")
    try:
        with recipe.open() as stream:  # read from the file, YAML's error marks name it
            values = yaml.safe_load(stream) or {}
    except yaml.YAMLError as error:
        raise UserError(f"--config {path} is not valid YAML: {one_line(error)}") from None
    if not isinstance(values, dict):
        raise UserError(
            f"--config {path} must hold `name: value` lines (a YAML mapping), not a {type(values).__name__}"
        )
    if "env" in values and not isinstance(values["env"], dict):  # trl reads `env:` as environment variables
        raise UserError(
            f"--config {path}: `env: {values['env']}` is trl's entry for environment variables (a mapping); write "
            f"the environment id as `env_id: {values['env']}`"
        )
    for key in values:
        if key not in fields and key != "env":
            raise UserError(f"--config {path}: unknown key {key!r}{_closest(str(key), fields, '')}; run with --help")
    return {key: value for key, value in values.items() if key in fields}


def _closest(name: str, fields: list[str], prefix: str) -> str:
    matches = difflib.get_close_matches(name, fields, n=3)
    return f" (did you mean {', '.join(prefix + match for match in matches)}?)" if matches else ""
