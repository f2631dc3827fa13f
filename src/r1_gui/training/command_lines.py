"""Writes `command_lines.json`, the flag table `r1_gui.training.precheck` checks a training command line against
before torch and trl are imported, from the real parsers. After adding or changing a training flag:

    python -m r1_gui.training.command_lines

(tests/test_cli_errors.py fails, saying so, while the table and the parsers differ.)
"""

from __future__ import annotations

import json
import sys
import textwrap

from r1_gui.training.precheck import FULL_HELP, SCRIPTS, TABLE

# trl's and transformers' flags that `--help` shows beside r1_gui's own (the rest: --help_trl).
COMMON_TRL_FLAGS = (
    "model_name_or_path", "output_dir", "max_steps", "num_train_epochs", "learning_rate", "lr_scheduler_type",
    "per_device_train_batch_size", "gradient_accumulation_steps", "num_generations", "max_completion_length",
    "temperature", "beta", "loss_type", "scale_rewards", "reward_weights", "use_vllm", "save_strategy",
    "save_steps", "logging_steps", "report_to", "seed", "bf16", "dtype", "attn_implementation", "use_peft",
    "lora_r", "lora_alpha", "deepspeed", "use_cpu", "max_length",
)  # fmt: skip


def build_table() -> dict:
    """{command: {"options", "fields", "short_help"}} from the real parsers (imports trl: run on --write only)."""
    from r1_gui.training.args import command_parser_for
    from r1_gui.training.grpo import GRPO_ARGUMENTS
    from r1_gui.training.sft import SFT_ARGUMENTS

    table = {}
    for command, dataclass_types in (("grpo", GRPO_ARGUMENTS), ("sft", SFT_ARGUMENTS)):
        parser = command_parser_for(dataclass_types)
        actions = [action for action in parser._actions if action.dest != "help"]
        own = [action for action in actions if _is_own(action.dest, dataclass_types)]
        common = [action for action in actions if action.dest in COMMON_TRL_FLAGS and action not in own]
        table[command] = {
            "options": {option: action.dest for action in actions for option in action.option_strings},
            "fields": sorted({action.dest for action in actions}),
            "short_help": _short_help(command, own, common, len(actions)),
        }
    return table


def _is_own(name: str, dataclass_types) -> bool:
    """Whether r1_gui defines the field (in its own dataclasses, not in a trl or transformers parent)."""
    for cls in dataclass_types:
        for owner in cls.__mro__:
            if name in owner.__dict__.get("__annotations__", {}):
                return owner.__module__.startswith("r1_gui")
    return False


def _short_help(command: str, own, common, total: int) -> str:
    lines = [
        f"usage: python {SCRIPTS[command]} [--config RECIPE.yaml] [--option value ...]",
        "",
        "A YAML recipe (--config) sets defaults; the command line overrides it. r1_gui's own flags, then the most",
        f"used of trl's and transformers'; all {total}: {FULL_HELP}.",
    ]
    for heading, actions in (("r1_gui", own), ("trl and transformers (most used)", common)):
        lines += ["", f"{heading}:"]
        negations = {action.dest for action in actions if action.option_strings[0].startswith("--no_")}
        for action in sorted(actions, key=lambda a: a.dest):
            if action.option_strings[0].startswith("--no_"):
                continue  # said on the flag it negates
            default = "" if action.default in (None, "==SUPPRESS==") else f" (default: {action.default})"
            names = ", ".join(option for option in action.option_strings if "-" not in option[2:])
            text = " ".join((action.help or "").split()).replace("%%", "%") + default
            text += f"; --no_{action.dest} turns it off." if action.dest in negations else ""
            lines.append(f"  {names}")
            lines += textwrap.wrap(text, width=118, initial_indent="      ", subsequent_indent="      ")
    return "\n".join(lines)


if __name__ == "__main__":
    if sys.argv[1:]:
        raise SystemExit("usage: python -m r1_gui.training.command_lines   (rewrites command_lines.json)")
    TABLE.write_text(json.dumps(build_table(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {TABLE}")
