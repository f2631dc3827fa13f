"""What a training command line checks before it imports torch and trl (those imports alone take 5-20 s): unknown
flags and recipe keys, the value of every r1_gui flag (each declaration's own checks, `r1_gui.flags`, and the
command's: `checks`), nothing to train on, a model or dataset folder that does not exist, and `--help`. Every problem
is listed at once, in one line, and a value that came from the --config recipe, or is a default, is said to.

    precheck("grpo", argv)     # in grpo_gui.py's command line, before anything heavy is imported

It reads the commands' flags from `r1_gui.training.command_lines` (r1_gui's from their declarations, trl's from trl's
own parser, cached per installed version). The full parser still checks everything again after the imports; this
only makes the mistakes fast. `--help` prints r1_gui's own flags and the most used trl ones; `--help_trl` prints the
full parser's help.
"""

from __future__ import annotations

import difflib
import logging
import os
import re
import sys
import time
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from r1_gui.cli_errors import UserError, cli_main, invoked_as, one_line
from r1_gui.flags import FlagProblems, default_of, typed
from r1_gui.paths import check_local_or_hub
from r1_gui.training.command_lines import FULL_HELP, command_table, short_help

# What each command needs to have something to train on: (what it says, the flags any one of which is enough).
NEEDS = {
    "grpo": ("a dataset (--dataset_name DATA_FOLDER) or an environment (--env ENV_ID)", ("dataset_name", "env_id")),
    "sft": ("a dataset (--dataset_name DATA_FOLDER) or an environment (--env ENV_ID)", ("dataset_name", "env_id")),
}
SCRIPTS = {"grpo": "src/r1_gui/grpo_gui.py", "sft": "src/r1_gui/sft.py"}
RECIPES = {"grpo": "local_scripts/tiny_cpu_grpo.yaml", "sft": "local_scripts/tiny_cpu_sft.yaml"}
Checks = Callable[[SimpleNamespace], list[str]]


def training_cli(command: str, parse: Callable, main: Callable, checks: Checks | None = None) -> Callable:
    """The command line of a training command (grpo_gui.py, sft.py): INFO log lines, the arguments checked by
    `precheck` before trl is imported (with the command's own ``checks`` of its flags' values), then
    ``main(*parse(argv))``. A user's mistake ends in one `error:` line and exit code 2 (r1_gui.cli_errors)."""

    @cli_main
    def cli(argv: list[str] | None = None) -> None:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
        argv = [str(arg) for arg in (sys.argv[1:] if argv is None else argv)]
        precheck(command, argv, checks)
        main(*parse(argv))

    return cli


def program() -> str:
    """How the user started the command, for its usage line: the installed command (r1-gui-train), `python -m
    r1_gui.grpo_gui`, or `python SCRIPT` as run."""
    return " ".join(invoked_as())


def precheck(command: str, argv: list[str], checks: Checks | None = None) -> None:
    """Print the short help and exit on -h/--help; raise one UserError listing every unknown flag or recipe key, bad
    value, missing model or dataset and local folder that does not exist. Returns when the full parser should run.
    ``checks``: the command's checks of its values that live above training/ (grpo_gui.py's multi-turn ones)."""
    argv = config_flag_checked(argv)
    if FULL_HELP in argv:
        return  # the full parser prints its help
    if "-h" in argv or "--help" in argv:
        print(short_help(command, program()))
        raise SystemExit(0)
    table = command_table(command)
    given, recipe, unknown = read_command_line(argv, table)
    from_recipe = recipe_values(recipe, table["fields"])
    settings = {**from_recipe, **given}
    sources = {name: f"from --config {recipe}" for name in from_recipe if name not in given}
    problems = [f"unknown flag {flag}{_closest(flag.lstrip('-'), table['fields'], '--')}" for flag in unknown]
    values, wrong = flag_values(command, table, settings)
    problems += wrong
    if not settings.get("model_name_or_path"):
        problems.append(
            "--model_name_or_path is missing: give a model folder (`python -m r1_gui.tiny --out models/tiny` builds "
            f"a tiny one) or a Hub id, or a recipe: python {SCRIPTS[command]} --config {RECIPES[command]}"
        )
    what, enough = NEEDS[command]
    if not any(settings.get(name) for name in enough):
        problems.append(f"nothing to train on: give {what}, e.g. python {SCRIPTS[command]} --config {RECIPES[command]}")
    problems += checks(values) if checks else []
    problems += folder_problems(settings)
    if problems:
        sources |= {name: "the default" for name in table["fields"] if name not in settings}
        raise UserError(problem_line([said_where(problem, values, sources) for problem in problems], bool(unknown)))
    if settings.get("deepspeed"):
        check_extension_locks()


def read_command_line(argv: list[str], table: dict) -> tuple[dict, str | None, list[str]]:
    """({field: its value, as typed: one word, or the words of a list}, the --config recipe, the unknown flags) of
    a command line; a --no_X switch gives X False."""
    options, negations = table["options"], set(table["negations"])
    given, recipe, unknown = {}, None, []
    for index, arg in enumerate(argv):
        if not arg.startswith("--") or arg == "--":
            continue
        flag, equals, inline = arg.partition("=")
        if flag == "--config":
            recipe = argv[index + 1]  # config_flag_checked: --config is followed by its path
            continue
        if flag not in options:
            unknown.append(flag)
            continue
        words = []
        for word in argv[index + 1 :]:
            if word.startswith("--"):
                break
            words.append(word)
        value: Any = inline if equals else words[0] if len(words) == 1 else words or "true"
        given[options[flag]] = "false" if flag in negations else value
    return given, recipe, unknown


def flag_values(command: str, table: dict, settings: dict) -> tuple[SimpleNamespace, list[str]]:
    """(every flag's value, typed as declared (r1_gui's) or as trl types it, defaults where not given; the problems of
    r1_gui's values, each declaration's checks run). A --env run's defaults follow it."""
    from r1_gui.training.flags import COMMAND_FLAGS, following_env

    values: dict[str, Any] = dict(table["trl_defaults"])
    problems = []
    for name, value in settings.items():
        kind = {"int": int, "float": float}.get(table["trl_types"].get(name))
        if kind and isinstance(value, str):
            try:
                values[name] = kind(value)
            except ValueError:
                problems.append(f"--{name} {value}: expected {'a whole number' if kind is int else 'a number'}")
        else:
            values[name] = value
    for owner in COMMAND_FLAGS[command]:
        declared = {}
        for field in fields(owner):
            if not field.init:
                continue
            try:
                declared[field.name] = typed(owner, field.name, settings[field.name])
            except KeyError:
                declared[field.name] = default_of(owner, field.name)
            except ValueError as error:
                problems.append(str(error))
                declared[field.name] = default_of(owner, field.name)
        try:
            built = owner(**declared)
            values |= {name: getattr(built, name) for name in declared}  # reward_funcs resolved
        except FlagProblems as error:
            problems += error.problems
            values |= declared
    values |= following_env(values, set(settings))
    return SimpleNamespace(**{name: values.get(name) for name in table["fields"]} | values), problems


def folder_problems(settings: dict) -> list[str]:
    """A local model or dataset folder that does not exist (or a Hub id that cannot be had)."""
    problems = []
    named = [("model_name_or_path", "model")]
    if settings.get("dataset_name") and not settings.get("env_id"):
        named.append(("dataset_name", "dataset"))
    for name, repo_type in named:
        if settings.get(name):
            try:
                check_local_or_hub(str(settings[name]), f"--{name}", repo_type=repo_type)
            except UserError as error:
                problems.append(str(error))
    return problems


def said_where(problem: str, values: SimpleNamespace, sources: dict) -> str:
    """``problem`` with each flag whose value it is about said, where the user did not type the value, to come from
    the recipe or to be the default: a flag shown with its value (`--max_turns 12 (from --config x.yaml) x ...`), or
    the flag a problem starts with (`--vision_attention (from --config x.yaml) must be one of ...`)."""
    for name, source in sources.items():
        value = getattr(values, name, None)
        shown = " ".join(map(str, value)) if isinstance(value, list) else str(value)
        found = re.search(rf"--{name} {re.escape(shown)}(?![\w-]|\.\w)", problem)
        if found is None and value is not None and problem.startswith(f"--{name} "):
            found = re.match(rf"--{name}", problem)
        if found is not None:
            problem = f"{problem[: found.end()]} ({source}){problem[found.end() :]}"
    return problem


def problem_line(problems: list[str], unknown: bool) -> str:
    """One line for every problem: the one alone, or `N problems: (1) ...; (2) ...`."""
    hint = "; run with --help" if unknown else ""
    if len(problems) == 1:
        return problems[0] + hint
    return f"{len(problems)} problems: " + "; ".join(f"({n}) {text}" for n, text in enumerate(problems, 1)) + hint


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
