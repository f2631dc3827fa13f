"""Arguments and their early checks, shared by the training entry points (grpo_gui.py, sft.py).

The checks run before a model is loaded, so a wrong flag, model folder or dataset fails in seconds.
"""

from __future__ import annotations

import difflib
import logging
import sys
from dataclasses import dataclass, field, fields

from trl import ModelConfig, TrlParser

from r1_gui.agent.context import DEFAULT_HISTORY_IMAGES, DEFAULT_MAX_TURNS
from r1_gui.cli_errors import UserError, user_errors
from r1_gui.envs.runtime.pool import DEFAULT_STEP_TIMEOUT
from r1_gui.paths import check_output_folder
from r1_gui.vision_attention import VISION_ATTENTION_CHOICES, check_vision_attention

logger = logging.getLogger(__name__)


@dataclass
class GUIDataArguments:
    """Data and prompt settings of a GUI training run."""

    _argument_group_name = "r1_gui: data and prompts"  # its --help heading (HfArgumentParser)

    dataset_name: str = field(
        default=None,
        metadata={
            "help": "A dataset/raw_load_data.py output folder (train.parquet, test.parquet) or a Hub dataset id."
        },
    )
    dataset_train_split: str = field(default="train", metadata={"help": "Split to train on."})
    max_samples: int | None = field(default=None, metadata={"help": "Train on the first N rows only (smoke tests)."})
    prompt_style: str = field(
        default="auto",
        metadata={
            "help": "aguvis, think_answer or mobile_use (see r1_gui.prompts), or auto: the architecture's own "
            "(mobile_use for Qwen3-VL, aguvis for Qwen2-VL and Qwen2.5-VL)."
        },
    )
    system_prompt: str | None = field(
        default=None,
        metadata={"help": "Replace the prompt style's system prompt (use the same text for SFT, GRPO and evaluation)."},
    )
    coordinates: str = field(
        default="auto",
        metadata={
            "help": "How the model writes coordinates: normalized (0-1, Aguvis), grid1000 (Qwen2-VL), grid999 "
            "(Qwen3-VL, mobile_use), pixels (Qwen2.5-VL, of the resized screenshot), or auto (from the architecture)."
        },
    )
    min_pixels: int = field(default=3136, metadata={"help": "Smallest area a screenshot is resized to (Qwen)."})
    max_pixels: int = field(default=501760, metadata={"help": "Largest area a screenshot is resized to (Qwen)."})

    def __post_init__(self):
        from r1_gui.actions import check_pixel_bounds

        check_pixel_bounds(self.min_pixels, self.max_pixels)  # the processor would refuse them after loading
        getattr(super(), "__post_init__", lambda: None)()  # a dataclass combined with this one may have its own


@dataclass
class EnvArguments:
    """Episode settings of grpo_gui.py with --env: multi-turn GRPO in an environment instead of a dataset."""

    env_id: str | None = field(
        default=None,
        metadata={
            "aliases": ["--env"],  # `env:` in a YAML recipe is TrlParser's environment variables: write env_id there
            "help": "Train on episodes of this environment instead of a dataset: any Gymnasium id that keeps "
            "r1_gui's environment contract (r1_gui/Phone-v0, r1_gui/Replay-v0, r1_gui/Web-v0, or module:EnvId for "
            "your own; see r1_gui.envs.contract). --env or --env_id; env_id in a YAML recipe.",
        },
    )
    env_kwargs: str | None = field(
        default=None,
        metadata={"help": 'gymnasium.make keywords as JSON, e.g. \'{"data_dir": "data/aitw-2k", "split": "train"}\'.'},
    )
    env_tasks: list[str] | None = field(
        default=None, metadata={"help": "Tasks to train on, among those the environment declares (default: all)."}
    )
    env_episodes: int = field(default=512, metadata={"help": "Distinct resets (task, seed) in the training set."})
    env_seed_offset: int = field(default=0, metadata={"help": "The first reset seed (keep evaluation seeds apart)."})
    env_step_timeout: float = field(
        default=DEFAULT_STEP_TIMEOUT,
        metadata={
            "help": "Seconds one environment step may take; an environment that runs past it (or raises) is "
            "rebuilt and its episode scored as failed (episodes/env_failures)."
        },
    )
    env_backend: str = field(
        default="local",
        metadata={
            "help": "Where the environments run: local (worker processes of this machine), ray (one Ray actor per "
            "environment on a cluster; see docs/guide/environments.md, 'Environments on a cluster') or openenv (one "
            "session per environment on the OpenEnv servers of --env_url; see README 'Environments from elsewhere').",
            "choices": ["local", "ray", "openenv"],
        },
    )
    ray_address: str = field(
        default="auto",
        metadata={
            "help": "With --env_backend ray: HOST:PORT of the cluster's head, or auto: the cluster RAY_ADDRESS or "
            "`ray start` on this machine names, else a local Ray started for this run."
        },
    )
    env_resources: str | None = field(
        default=None,
        metadata={
            "help": "With --env_backend ray: what one environment asks of the cluster, as JSON, e.g. "
            "'{\"browser\": 1}' (a resource only environment hosts advertise keeps environments off the trainer's "
            "node)."
        },
    )
    env_spares: int = field(
        default=0,
        metadata={
            "help": "With --env_backend ray: environments kept built and reset-ready beside the slots; a failed slot "
            "is replaced by one within the same step."
        },
    )
    env_url: str | None = field(
        default=None,
        metadata={
            "help": "With --env_backend openenv: http://HOST:PORT of OpenEnv servers (r1-gui-env-serve or any other), "
            "comma-separated; --env names what they serve."
        },
    )
    max_turns: int = field(
        default=DEFAULT_MAX_TURNS,
        metadata={
            "help": "Turns per episode before it is truncated (and scored). trl's max_tool_calling_iterations "
            "bounds trl's own tool loop, which --env does not use (see r1_gui.multi_turn.trainer)."
        },
    )
    max_turn_tokens: int = field(default=128, metadata={"help": "New tokens the model may write per turn."})
    history_images: int = field(
        default=DEFAULT_HISTORY_IMAGES,
        metadata={"help": "Screenshots each turn sees (the newest); older ones are dropped, their turns kept as text."},
    )
    expert_sft_weight: float = field(
        default=0.0,
        metadata={
            "help": "Add this weight times an SFT loss to GRPO's: the mean token loss of the environment expert's "
            "answer to every distinct turn the step's episodes played, in that turn's context (an anchor to what "
            "the expert does, as InstructGPT's PPO-ptx mixes its pretraining loss into PPO). Needs an environment "
            "with an expert (info['expert_action']); 0: off."
        },
    )
    # Step-level credit (r1_gui.multi_turn.advantages); checked with the other episode settings (multi_turn/train.py)
    advantage_estimator: str = field(
        default="grpo",
        metadata={
            "help": "grpo: every token of an episode gets the episode's group-normalised advantage. gigpo (GiGPO, "
            "arXiv 2505.10978): plus, per turn, --step_advantage_weight times the turn's discounted return "
            "normalised among the group's turns generated from the same state (a turn alone there: 0)."
        },
    )
    step_advantage_weight: float = field(
        default=1.0, metadata={"help": "GiGPO's omega: the weight of the step advantage beside the episode's."}
    )
    step_gamma: float = field(
        default=0.95,
        metadata={"help": "GiGPO's discount, in (0, 1]: a turn's return is its reward + step_gamma x the next's."},
    )
    # Asynchronous rollouts (r1_gui.rollout); checked with the other episode settings (multi_turn/train.py)
    rollout_mode: str = field(
        default="sync",
        metadata={
            "help": "sync: each step plays its episodes to the end, then trains. async: rollout workers play "
            "episodes all the time with their own copy of the policy and the trainer takes finished groups from a "
            "buffer (docs/guide/async.md).",
            "choices": ["sync", "async"],
        },
    )
    rollout_workers: int = field(
        default=2, metadata={"help": "With --rollout_mode async: rollout worker processes, each a policy copy."}
    )
    max_staleness: int = field(
        default=1,
        metadata={
            "help": "With --rollout_mode async: the most optimizer steps a group's oldest turn may lag behind the "
            "weights it trains; older groups are dropped (async/dropped_stale). 0: every group played with the "
            "current weights."
        },
    )
    rollout_groups_ahead: int = field(
        default=0,
        metadata={
            "help": "With --rollout_mode async: groups in play beyond (1 + --max_staleness) x a step's groups, so a "
            "straggler holds no step even at --max_staleness 0; each one not needed for a straggler is dropped for "
            "age."
        },
    )
    weight_sync_steps: int = field(
        default=1, metadata={"help": "With --rollout_mode async: publish the weights every N optimizer steps."}
    )
    importance_ratio_cap: float = field(
        default=3.0,
        metadata={
            "help": "With --rollout_mode async: the largest weight pi_prox / pi_behav a lagging turn's token gets "
            "(the decoupled PPO objective's behaviour correction, truncated)."
        },
    )


@dataclass
class GUIModelConfig(ModelConfig):
    """trl.ModelConfig under its own --help heading."""

    _argument_group_name = "trl.ModelConfig: model loading and LoRA (--use_peft; default targets: r1_gui.training.lora)"

    vision_attention: str = field(
        default="auto",
        metadata={
            "help": "How the vision tower runs its attention under sdpa: batched_windows (one sdpa call per window "
            "length instead of one per window; towers without windows, Qwen2-VL and Qwen3-VL, one per image size "
            "instead of one per image; the same output), model (transformers' per-window or per-image calls), or "
            "auto (batched_windows on CUDA, model on CPU). batched_windows needs sdpa (refused with "
            "--attn_implementation eager or flash_attention_2). See r1_gui.vision_attention.",
            "choices": list(VISION_ATTENTION_CHOICES),
        },
    )

    def __post_init__(self):
        super().__post_init__()
        # a YAML recipe's value does not pass argparse's choices
        check_vision_attention(self.vision_attention, self.attn_implementation)


OLD_CHECKPOINTING_HELP = (
    "Old name of --activation_checkpointing (transformers 5 warns when it is given; trl's default: on)."
)


@dataclass
class CheckpointingUnderItsNewName:
    """Mixed into r1_gui's trl training configs (before the trl class). trl defaults gradient_checkpointing to True,
    and transformers 5, which renamed it activation_checkpointing, warns (FutureWarning) whenever the old name holds
    a value: every run warned, with checkpointing on or off. The old name is left unset (None) and trl's default goes
    under the new name; a user who writes the old name still gets transformers' warning, and their value."""

    gradient_checkpointing: bool | None = field(default=None, metadata={"help": OLD_CHECKPOINTING_HELP})

    def __post_init__(self):
        if self.gradient_checkpointing is None and self.activation_checkpointing is None:
            self.activation_checkpointing = True
        super().__post_init__()


def parse_arguments(dataclass_types: tuple, argv: list[str] | None = None):
    """TrlParser over `dataclass_types` (YAML via --config, the command line overriding it); an unknown argument
    fails with the closest valid names. Errors of the settings' own checks (a missing recipe, a batch size) are the
    user's (r1_gui.cli_errors). --help lists each dataclass under its own heading, in the order given."""
    from r1_gui.training.precheck import FULL_HELP, config_flag_checked, recipe_values

    parser = command_parser_for(dataclass_types)
    argv = config_flag_checked(sys.argv[1:] if argv is None else argv)
    if "--config" in argv:  # its unknown keys named here, not by trl's "set fail_with_unknown_args=False"
        recipe_values(
            argv[argv.index("--config") + 1], sorted({f.name for cls in dataclass_types for f in fields(cls)})
        )
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
    check_settings(parsed)
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
    check_settings(parsed)
    return parsed


def check_settings(parsed: tuple) -> None:
    """What is checked of a command's settings once they are parsed, before anything loads."""
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


def command_parser_for(dataclass_types: tuple) -> TrlParser:
    """The TrlParser of a training command over ``dataclass_types``; --help lists each under its own heading."""
    headings = ", then ".join(
        getattr(cls, "_argument_group_name", cls.__name__).split(":")[0] for cls in dataclass_types
    )
    return TrlParser(
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
