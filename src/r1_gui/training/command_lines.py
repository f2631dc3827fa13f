"""The flag table of a training command, which `r1_gui.training.precheck` checks a command line against before torch
and trl are imported, and the short `--help`. Nothing in it is written by hand or kept in the repository:

- r1_gui's own flags are read from their declarations (`r1_gui.training.flags.COMMAND_FLAGS`);
- trl's and transformers' (every field of trl's GRPOConfig, SFTConfig and ModelConfig) from trl's own parser, once
  per installed trl and transformers, kept in the user's cache (`trl_table`): `bash setup.sh` writes it, and a command
  line that finds none writes it (it then waits for trl's import once, as the full parser would).

tests/test_cli_errors.py checks that each table is the real parser's.
"""

from __future__ import annotations

import json
import os
import re
import textwrap
from dataclasses import fields
from importlib import metadata
from pathlib import Path

from r1_gui.flags import default_of, value_type

CACHE_FORMAT = 2  # bump when the cached table's layout changes
FULL_HELP = "--help_trl"

# trl's and transformers' flags that `--help` shows beside r1_gui's own (the rest: --help_trl).
COMMON_TRL_FLAGS = (
    "model_name_or_path", "output_dir", "max_steps", "num_train_epochs", "learning_rate", "lr_scheduler_type",
    "per_device_train_batch_size", "gradient_accumulation_steps", "num_generations", "max_completion_length",
    "temperature", "beta", "loss_type", "scale_rewards", "reward_weights", "use_vllm", "save_strategy",
    "save_steps", "logging_steps", "report_to", "seed", "bf16", "dtype", "attn_implementation", "use_peft",
    "lora_r", "lora_alpha", "deepspeed", "use_cpu", "max_length",
)  # fmt: skip


def command_table(command: str) -> dict:
    """{"options": {option string: field}, "negations": [the --no_X options], "fields": [field names],
    "trl_help": {field: (help, default)}, "trl_types": {field: "int" | "float" | "str"}, "trl_defaults": {field:
    default}} of the training command ``command`` ("grpo" or "sft")."""
    from r1_gui.training.flags import COMMAND_FLAGS, TRL_CLASSES

    trl = trl_table()
    options, negations, help_texts, types, defaults = {}, set(), {}, {}, {}
    for name in TRL_CLASSES[command]:
        options.update(trl[name]["options"])
        negations.update(trl[name]["negations"])
        help_texts.update(trl[name]["help"])
        types.update(trl[name]["types"])
        defaults.update(trl[name]["defaults"])
    ours = {field.name: owner for owner in COMMAND_FLAGS[command] for field in fields(owner) if field.init}
    overridden = [option for option, name in options.items() if name in ours]  # r1_gui's declaration decides
    for option in overridden:
        del options[option]
    negations.difference_update(overridden)
    for name, owner in ours.items():
        own, negating = flag_options(owner, name)
        options.update(dict.fromkeys(own + negating, name))
        negations.update(negating)
    return {"options": options, "negations": sorted(negations), "fields": sorted(set(options.values())),
            "trl_help": help_texts, "trl_types": types, "trl_defaults": defaults}  # fmt: skip


def flag_options(owner: type, name: str) -> tuple[list[str], list[str]]:
    """(the option strings of flag ``name``, those that turn it off) as trl's parser (transformers'
    HfArgumentParser) makes them: --name, --name-with-dashes, the declared aliases; --no_name for a bool that is
    on by default."""
    declared = owner.__dataclass_fields__[name]
    dashed = [f"--{name.replace('_', '-')}"] if "_" in name else []
    own = [f"--{name}", *dashed, *declared.metadata.get("aliases", [])]
    kind, _ = value_type(owner, name)
    if kind is bool and default_of(owner, name) is True:
        return own, [f"--no_{name}", f"--no-{name.replace('_', '-')}"]
    return own, []


# ------------------------------------------------------------------------------------------- trl's, cached


def trl_cache_path() -> Path:
    """Where trl's flag table is kept for the installed trl and transformers: $XDG_CACHE_HOME (or ~/.cache)/r1_gui."""
    versions = f"trl{metadata.version('trl')}-transformers{metadata.version('transformers')}-v{CACHE_FORMAT}"
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return root / "r1_gui" / f"trl-flags-{versions}.json"


def trl_table() -> dict:
    """{trl class: {"options", "negations", "help"}} of trl's training and model configs: read from the cache, or
    built from trl's parser (importing trl) and written there. A cache that cannot be written is rebuilt each time."""
    path = trl_cache_path()
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        pass
    table = build_trl_table()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        spare = path.with_name(f"{path.name}.{os.getpid()}")
        spare.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
        spare.replace(path)  # whole or not at all, whoever writes it at the same time
    except OSError:
        pass
    return table


def build_trl_table() -> dict:
    """trl's flags, read from trl's own parser (imports trl: 5 s and more)."""
    import trl
    from transformers import HfArgumentParser

    table = {}
    for name in ("GRPOConfig", "SFTConfig", "ModelConfig"):
        parser = HfArgumentParser([getattr(trl, name)])
        actions = [action for action in parser._actions if action.dest != "help"]
        negating = [action for action in actions if action.option_strings[0] == f"--no_{action.dest}"]
        table[name] = {
            "options": {option: action.dest for action in actions for option in action.option_strings},
            "negations": sorted(option for action in negating for option in action.option_strings),
            "help": {
                action.dest: (" ".join((action.help or "").split()), None if action.default is None else str(action.default))
                for action in actions
                if action not in negating
            },
            # the defaults that JSON keeps as they are (the pre-check's checks read them where a value is not given)
            "defaults": {
                action.dest: action.default
                for action in actions
                if action not in negating and isinstance(action.default, (bool, int, float, str, type(None)))
            },
            # int, float or str where the value is one of those (the pre-check types a given value with it)
            "types": {
                action.dest: action.type.__name__ for action in actions if action.type in (int, float, str)
            },
        }  # fmt: skip
    return table


def write_trl_table() -> Path:
    """Build trl's table afresh and keep it (what `bash setup.sh` runs); returns where."""
    path = trl_cache_path()
    path.unlink(missing_ok=True)
    trl_table()
    return path


# ------------------------------------------------------------------------------------------- the short --help


def short_help(command: str, program: str) -> str:
    """`--help` of a training command: r1_gui's flags by concern, then the most used of trl's and transformers' in a
    line or two each (the first sentences of their help); --help_trl prints every flag with its whole help."""
    from r1_gui.training.flags import COMMAND_FLAGS

    table = command_table(command)
    lines = [
        f"usage: {program} [--config RECIPE.yaml] [--option value ...]",
        "",
        "A YAML recipe (--config) sets defaults; the command line overrides it. r1_gui's own flags, then the most",
        f"used of trl's and transformers' with the start of their help; all {len(table['fields'])} in full: {FULL_HELP}.",
    ]
    own = set()
    for heading, flags in own_flags_by_concern(COMMAND_FLAGS[command]):
        lines += ["", f"{heading}:"]
        for owner, name in flags:
            own.add(name)
            field = owner.__dataclass_fields__[name]
            default = default_of(owner, name)
            shown = "" if default in (None, [], {}) else f" (default: {default})"
            negation = f"; --no_{name} turns it off." if flag_options(owner, name)[1] else ""
            aliases = "".join(f", {alias}" for alias in field.metadata.get("aliases", []))
            lines += _entry(f"--{name}{aliases}", field.metadata.get("help", "") + shown + negation)
    lines += ["", "trl and transformers (most used):"]
    for name in sorted(set(COMMON_TRL_FLAGS) & set(table["trl_help"]) - own):
        text, default = table["trl_help"][name]
        lines += _entry(f"--{name}", first_sentences(text) + ("" if default is None else f" (default: {default})"))
    return "\n".join(lines)


def own_flags_by_concern(owners) -> list[tuple[str, list[tuple[type, str]]]]:
    """[(heading, [(owner, flag)])]: r1_gui's flags of a command grouped by the dataclass that declares each (the
    start of its docstring is the heading), the owners' own first; an owner's ``refused`` flags (accepted only to be
    refused with a message, as SFT refuses multi-turn GRPO's) are left out."""
    groups: dict[type, list[tuple[type, str]]] = {}
    for owner in owners:
        for field in fields(owner):
            if field.init and field.name not in getattr(owner, "refused", ()):  # accepted only to be refused
                declaring = next(cls for cls in owner.__mro__ if field.name in cls.__dict__.get("__annotations__", {}))
                groups.setdefault(declaring, []).append((owner, field.name))
    order = [cls for owner in owners for cls in owner.__mro__]
    return [(_heading(cls), groups[cls]) for cls in sorted(groups, key=order.index)]


def _heading(declaring: type) -> str:
    text = " ".join((declaring.__doc__ or declaring.__name__).split())
    return re.split(r" \(|: |; |\. ", text)[0].rstrip(".")


def first_sentences(text: str, least: int = 40) -> str:
    """The first sentences of a help text, at least ``least`` characters of them where the text has that many."""
    taken = ""
    for sentence in text.replace(". ", ".\n").splitlines():
        taken = f"{taken} {sentence}".strip()
        if len(taken) >= least:
            break
    return taken


NAME_WIDTH = 30  # the column a flag's help starts at


def _entry(names: str, text: str) -> list[str]:
    """A flag's lines: its names, then its help beside them (below them when they are long), wrapped at 118."""
    head = f"  {names}"
    indent = " " * NAME_WIDTH
    wrapped = textwrap.wrap(" ".join(text.split()), width=118, initial_indent=indent, subsequent_indent=indent)
    if len(head) < NAME_WIDTH and wrapped:
        return [head.ljust(NAME_WIDTH) + wrapped[0][NAME_WIDTH:], *wrapped[1:]]
    return [head, *wrapped]


if __name__ == "__main__":
    print(f"wrote {write_trl_table()}")
