"""Arguments and their early checks, shared by the training entry points (grpo_gui.py, sft.py).

The checks run before a model is loaded, so a wrong flag, model folder or dataset fails in seconds.
"""

from __future__ import annotations

import difflib
import logging
import sys
from dataclasses import dataclass, fields

from trl import ModelConfig, TrlParser

from r1_gui.cli_errors import UserError, user_errors
from r1_gui.paths import check_output_folder
from r1_gui.training.flags import GUIDataArguments, ModelFlags, following_env
from r1_gui.vision_attention import check_vision_attention

logger = logging.getLogger(__name__)


@dataclass
class GUIModelConfig(ModelFlags, ModelConfig):
    """trl.ModelConfig under its own --help heading, with r1_gui's flag (`r1_gui.training.flags.ModelFlags`)."""

    _argument_group_name = "trl.ModelConfig: model loading and LoRA (--use_peft; default targets: r1_gui.training.lora)"

    def __post_init__(self):
        super().__post_init__()
        # --vision_attention batched_windows needs sdpa: checked against the model's attention
        check_vision_attention(self.vision_attention, self.attn_implementation)


class CheckpointingUnderItsNewName:
    """Mixed into r1_gui's trl training configs (before `TrainingRunFlags` and the trl class). trl defaults
    gradient_checkpointing to True, and transformers 5, which renamed it activation_checkpointing, warns
    (FutureWarning) whenever the old name holds a value: every run warned, with checkpointing on or off. The old
    name is left unset (None: `TrainingRunFlags`) and trl's default goes under the new name; a user who writes the
    old name still gets transformers' warning, and their value."""

    def __post_init__(self):
        if self.gradient_checkpointing is None and self.activation_checkpointing is None:
            self.activation_checkpointing = True
        super().__post_init__()


def parse_arguments(dataclass_types: tuple, argv: list[str] | None = None):
    """TrlParser over `dataclass_types` (YAML via --config, the command line overriding it); an unknown argument
    fails with the closest valid names. Errors of the settings' own checks (a missing recipe, a batch size) are the
    user's (r1_gui.cli_errors). --help lists each dataclass under its own heading, in the order given."""
    from r1_gui.training.precheck import FULL_HELP, config_flag_checked, read_command_line, recipe_values

    parser = command_parser_for(dataclass_types)
    argv = config_flag_checked(sys.argv[1:] if argv is None else argv)
    options = {option: action.dest for action in parser._actions for option in action.option_strings}
    given, recipe, _ = read_command_line(argv, {"options": options, "negations": []})
    # the recipe's unknown keys named here, not by trl's "set fail_with_unknown_args=False"
    given |= recipe_values(recipe, sorted({f.name for cls in dataclass_types for f in fields(cls)}))
    argv = ["--help" if arg == FULL_HELP else arg for arg in argv]  # the short --help is precheck's
    try:
        with user_errors():
            parsed = parser.parse_args_and_config(args=argv)
    except ValueError as error:
        message = str(error)
        if "not used by the HfArgumentParser" not in message and "Unknown arguments" not in message:
            raise
        valid = sorted({f.name for cls in dataclass_types for f in fields(cls)})
        unknown = [word.strip("[]'\", ") for word in message.split("--")[1:]]
        hints = []
        for name in filter(None, (word.split()[0].strip("[]'\",") for word in unknown if word.split())):
            matches = difflib.get_close_matches(name, valid, n=3)
            hints.append(f"--{name}: did you mean {', '.join('--' + m for m in matches)}" if matches else f"--{name}")
        raise UserError(f"{message}; unknown: {'; '.join(hints)}; run with --help for every valid argument") from None
    check_settings(parsed, set(given))
    return parsed


def arguments_from(dataclass_types: tuple, values: dict) -> tuple:
    """The argument objects of a training command from Python values, each field's value typed as the command line
    parses it into (a number, a list, a dict for --env_kwargs and --reward_kwargs): what a demo or a user's script
    passes instead of a list of flags. A name no dataclass has fails with the closest ones; the settings' own checks
    and `check_settings` run as for the command line."""
    names = {f.name for cls in dataclass_types for f in fields(cls) if f.init}
    unknown = sorted(set(values) - names)
    if unknown:
        hints = [f"{name} (did you mean {', '.join(difflib.get_close_matches(name, sorted(names), n=2)) or '?'})"
                 for name in unknown]  # fmt: skip
        raise UserError(f"unknown settings: {'; '.join(hints)}")
    with user_errors():
        parsed = tuple(
            cls(**{f.name: values[f.name] for f in fields(cls) if f.init and f.name in values})
            for cls in dataclass_types
        )
    check_settings(parsed, set(values))
    return parsed


def check_settings(parsed: tuple, given: set[str]) -> None:
    """The defaults that follow --env set where the user (``given``: the names they set) left them
    (`training.flags.following_env`), then what is checked of a command's settings once they are parsed, before
    anything loads."""
    merged = {name: value for settings in reversed(parsed) for name, value in vars(settings).items()}
    for name, value in following_env(merged, given).items():
        for settings in parsed:
            if hasattr(settings, name):
                setattr(settings, name, value)
    for settings in parsed:
        if getattr(settings, "output_dir", None):
            check_output_folder(settings.output_dir)  # a read-only folder fails now, not after training
        if getattr(settings, "report_to", None):
            check_report_to(settings.report_to)


def check_report_to(report_to: list[str]) -> None:
    """A --report_to integration that is not installed fails now; the Trainer finds out once the model is loaded
    (and, with --env, the environments are started)."""
    from transformers.integrations.integration_utils import get_available_reporting_integrations

    missing = [name for name in report_to if name not in ("all", "none") and name not in
               get_available_reporting_integrations()]  # fmt: skip
    if missing:
        raise UserError(
            f"--report_to {' '.join(report_to)}: {', '.join(missing)} is not installed here; install it (e.g. "
            f"pip install {missing[0].replace('_', '-')}) or report to wandb or none"
        )


class _TrainingParser(TrlParser):
    """TrlParser whose mistakes (a value outside a flag's choices, a word where a number goes) are a UserError: one
    `error:` line under cli_main, as every other mistake, instead of argparse's usage line above its own."""

    def error(self, message: str):
        raise UserError(f"{message}; run with --help")


def command_parser_for(dataclass_types: tuple) -> TrlParser:
    """The TrlParser of a training command over ``dataclass_types``; --help lists each under its own heading."""
    headings = ", then ".join(
        getattr(cls, "_argument_group_name", cls.__name__).split(":")[0] for cls in dataclass_types
    )
    return _TrainingParser(
        dataclass_types,
        allow_abbrev=False,  # "--num_gen 4" must not pass for --num_generations
        usage="%(prog)s [--config RECIPE.yaml] [--option value ...]",
        description=f"Options: {headings}. A YAML recipe (--config) sets defaults; the command line overrides it.",
    )


def resolve_coordinates(data_args: GUIDataArguments, model_type: str) -> str:
    """--coordinates, with auto resolved from the architecture and prompt style; --prompt_style auto is set to the
    architecture's own style first (in ``data_args``, for everything after): ``generation.resolve_prompting``, the
    evaluation's resolution too."""
    from r1_gui.generation.prompting import resolve_prompting

    data_args.prompt_style, coordinates = resolve_prompting(data_args.prompt_style, data_args.coordinates, model_type)
    return coordinates
