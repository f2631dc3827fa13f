"""The training commands' own flags (grpo_gui.py's and sft.py's), declared once each, beside trl's and transformers'
(every `trl.GRPOConfig`/`trl.SFTConfig` and `trl.ModelConfig` field). Light: imports neither torch nor trl, so the
pre-check (`r1_gui.training.precheck`) reads and checks them before those load; `r1_gui.training.grpo` and
`r1_gui.training.sft` mix them into trl's classes (GRPO_ARGUMENTS, SFT_ARGUMENTS).

- `GUIDataArguments`: data and prompts (both commands); `EnvArguments`: episodes with --env (GRPO);
  `GUIGRPOScriptArguments`: both, and the rewards; `GUISFTScriptArguments`: both, for SFT (with --env, a warm start
  on the environment expert's episodes, which refuses multi-turn GRPO's own settings);
- `TrainingRunFlags` (both) and `GRPORunFlags` (GRPO): r1_gui's fields of the trl training config;
- `ModelFlags`: r1_gui's field of trl's ModelConfig.

The episode, pool, prompt and screenshot flags are declared where every command that shares them reads them
(`r1_gui.flags.episodes`, `r1_gui.generation.settings`); docs/guide/training.md says how to add one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import ClassVar

from r1_gui.flags import Flags, at_least, default_of, flag, flag_of
from r1_gui.flags.episodes import EnvFlags, PoolFlags, TurnFlags
from r1_gui.generation.settings import GenerationSettings
from r1_gui.gui_datasets import RowLimit
from r1_gui.rewards import REWARD_FUNCS, REWARD_PRESETS

DATASET_REWARDS = ["accuracy", "format"]  # --reward_funcs left out, on a dataset
EPISODE_REWARDS = ["task_success", "episode_format"]  # --reward_funcs left out, with --env
GIGPO = "gigpo"  # the estimator the --step_* flags belong to (r1_gui.multi_turn.advantages)
ROLLOUT_MODES = ("sync", "async")  # r1_gui.rollout.engine.MODES, which imports torch


@dataclass
class GUIDataArguments(Flags):
    """Data and prompt settings of a GUI training run."""

    _argument_group_name = "r1_gui: data and prompts"  # its --help heading (HfArgumentParser)

    dataset_name: str | None = flag(
        None, "A dataset/raw_load_data.py output folder (train.parquet, test.parquet) or a Hub dataset id."
    )
    dataset_train_split: str = flag("train", "Split to train on.")
    max_samples: int | None = flag_of(RowLimit, "max_samples")
    prompt_style: str = flag_of(GenerationSettings, "prompt_style")
    system_prompt: str | None = flag_of(GenerationSettings, "system_prompt")
    coordinates: str = flag_of(GenerationSettings, "coordinates")
    min_pixels: int = flag_of(GenerationSettings, "min_pixels", default=3136)
    max_pixels: int = flag_of(GenerationSettings, "max_pixels", default=501760)

    def problems(self) -> list[str]:
        # the prompt and screenshot flags are GenerationSettings', and so are their checks (the pixel bounds among
        # them, which the processor would refuse only after loading)
        asked = {name: getattr(self, name) for name in ("prompt_style", "coordinates", "min_pixels", "max_pixels")}
        found = super().problems()
        try:
            GenerationSettings(**asked)
        except ValueError as error:
            found.append(str(error))
        return found


@dataclass
class EnvArguments(EnvFlags, TurnFlags, PoolFlags):
    """Multi-turn GRPO with --env: on an environment's episodes instead of a dataset (the environment, pool and turn
    flags are `r1_gui.flags.episodes`', which the episode evaluation and play share)."""

    max_turn_tokens: int = flag(
        128,
        "The most tokens the model may write in one turn. Unless given, --max_completion_length follows: --max_turns x "
        "(this + the tool responses between turns).",
    )
    expert_sft_weight: float = flag(
        0.0,
        "Add this weight times an SFT loss to GRPO's: the mean token loss of the environment expert's answer to every "
        "distinct turn the step's episodes played, in that turn's context (an anchor to what the expert does, as "
        "InstructGPT's PPO-ptx mixes its pretraining loss into PPO). Needs an environment with an expert "
        "(info['expert_action']); 0: off.",
    )
    # Step-level credit (r1_gui.multi_turn.advantages, which checks the values: grpo_gui.py hands its check to the
    # pre-check, r1_gui.multi_turn.train runs it again)
    advantage_estimator: str = flag(
        "grpo",
        "grpo: every token of an episode gets the episode's group-normalised advantage. gigpo (GiGPO, arXiv "
        "2505.10978): plus, per turn, --step_advantage_weight times the turn's discounted return normalised among the "
        "group's turns generated from the same state (a turn alone there: 0).",
    )
    step_advantage_weight: float = flag(
        1.0, "GiGPO's omega: the weight of the step advantage beside the episode's (with --advantage_estimator gigpo)."
    )
    step_gamma: float = flag(
        0.95,
        "GiGPO's discount, in (0, 1]: a turn's return is its reward + step_gamma x the next's (with "
        "--advantage_estimator gigpo).",
    )

    # Asynchronous rollouts (r1_gui.rollout, which checks the values: r1_gui.multi_turn.train.check_rollout_mode)
    rollout_mode: str = flag(
        "sync",
        "sync: each step plays its episodes to the end, then trains. async: rollout workers play episodes all the time "
        "with their own copy of the policy and the trainer takes finished groups from a buffer (docs/guide/async.md).",
        choices=ROLLOUT_MODES,
    )
    rollout_workers: int = flag(2, "With --rollout_mode async: rollout worker processes, each a policy copy.")
    max_staleness: int = flag(
        1,
        "With --rollout_mode async: the most optimizer steps a group's oldest turn may lag behind the weights it "
        "trains; older groups are dropped (async/dropped_stale). 0: every group played with the current weights.",
    )
    rollout_groups_ahead: int = flag(
        0,
        "With --rollout_mode async: groups in play beyond (1 + --max_staleness) x a step's groups, so a straggler holds "
        "no step even at --max_staleness 0; each one not needed for a straggler is dropped for age.",
    )
    weight_sync_steps: int = flag(1, "With --rollout_mode async: publish the weights every N optimizer steps.")
    importance_ratio_cap: float = flag(
        3.0,
        "With --rollout_mode async: the largest weight pi_prox / pi_behav a lagging turn's token gets (the decoupled "
        "PPO objective's behaviour correction, truncated).",
    )

    def problems(self) -> list[str]:
        found = [*super().problems(), *at_least("max_turn_tokens", self.max_turn_tokens, 1)]
        if not self.expert_sft_weight >= 0:
            found.append(f"--expert_sft_weight must be 0 (off) or more, got {self.expert_sft_weight}")
        if self.rollout_mode not in ROLLOUT_MODES:
            found.append(f"--rollout_mode {self.rollout_mode}: choose {' or '.join(ROLLOUT_MODES)}")
        found += doing_nothing(self, "advantage_estimator", GIGPO, ("step_advantage_weight", "step_gamma"), "GiGPO's")
        return found


def doing_nothing(settings: EnvArguments, switch: str, on: str, names: tuple[str, ...], whose: str) -> list[str]:
    """The flags of ``names`` set away from their defaults while ``switch`` is not ``on``, where they do nothing."""
    return [
        f"--{name} {getattr(settings, name)} is {whose}: it does nothing with --{switch} {getattr(settings, switch)}; "
        f"add --{switch} {on}, or drop it"
        for name in names
        if getattr(settings, switch) != on and getattr(settings, name) != default_of(EnvArguments, name)
    ]


def reward_funcs_help() -> str:
    presets = "; ".join(
        f"{name}: " + " + ".join(f"{reward} {weight}" for reward, weight in members)
        for name, members in REWARD_PRESETS.items()
    )
    return (
        f"Reward names, any of: {', '.join(REWARD_FUNCS)}; or a preset, its weights included ({presets}); weights go "
        f"in --reward_weights. Left out: {' '.join(DATASET_REWARDS)} on a dataset, {' '.join(EPISODE_REWARDS)} "
        "with --env."
    )


@dataclass
class GUIGRPOScriptArguments(GUIDataArguments, EnvArguments):
    """Rewards and how a GRPO step is computed; with the data, prompt and episode settings it combines (episode ones
    with --env: r1_gui.multi_turn.train)."""

    _argument_group_name = "r1_gui: data, prompts and rewards"  # its --help heading, listed first

    reward_funcs: list[str] | None = flag(None, reward_funcs_help())
    reward_kwargs: str | None = flag(
        None, 'Per-reward parameters as JSON, e.g. \'{"click_distance": {"threshold": 0.05}}\'.'
    )
    completions_table_steps: int = flag(
        50, "Log the completions table (screenshots with points) every N steps; 0: never."
    )
    skip_no_signal: bool = flag(
        True,
        "Leave completions with advantage 0 (groups whose rewards are all equal) out of the loss pass: the same "
        "gradient for less compute. Applied only where it is exact (beta 0, loss_type dapo or cispo).",
    )
    dedupe_images: bool = flag(
        True,
        "Process each distinct screenshot once per step, encode it and prefill its prompt once per generation batch, "
        "instead of once per generated answer: the same tensors for less compute.",
    )

    def __post_init__(self) -> None:
        if self.reward_funcs is None:  # the defaults follow --env
            self.reward_funcs = list(EPISODE_REWARDS if self.env_id else DATASET_REWARDS)
        super().__post_init__()

    def problems(self) -> list[str]:
        found = super().problems()
        try:
            parse_reward_kwargs(self.reward_kwargs)
        except ValueError as error:
            found.append(str(error))
        found += dataset_and_env(self, "an --env run trains on the environment's episodes")
        if not self.env_id:
            found += episode_flags_without_env(self)
        return found


def dataset_and_env(settings: GUIDataArguments | EnvArguments, trains_on: str) -> list[str]:
    """--dataset_name and --env both given: each names what to train on (``trains_on``: what an --env run does)."""
    if not (settings.env_id and settings.dataset_name):
        return []
    return [f"--dataset_name {settings.dataset_name} and --env {settings.env_id} both name what to train on: "
            f"{trains_on} (--env_episodes resets); drop one of them"]  # fmt: skip


def parse_reward_kwargs(text: str | dict | None) -> dict | None:
    """--reward_kwargs: a JSON object {reward name: {parameter: value}} (from Python, that dict itself)."""
    if isinstance(text, dict):
        return dict(text)
    if not text:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(
            f'--reward_kwargs is not valid JSON ({error}): {text!r}; e.g. \'{{"click_distance": {{"threshold": 0.05}}}}\''
        ) from None


# The flags that only an --env run reads (a dataset run refuses them, rather than ignoring them).
EPISODE_ONLY = ("env_kwargs", "env_tasks", "env_episodes", "env_seed_offset", "env_step_timeout", "max_turns",
                "history_images", "env_backend", "ray_address", "env_resources", "env_spares", "env_url",
                "max_turn_tokens", "expert_sft_weight", "advantage_estimator", "rollout_mode")  # fmt: skip


def changed(settings: EnvArguments, names: tuple[str, ...]) -> list[str]:
    """The flags of ``names`` set away from their EnvArguments defaults."""
    return [name for name in names if getattr(settings, name) != default_of(EnvArguments, name)]


def episode_flags_without_env(settings: EnvArguments, names: tuple[str, ...] = EPISODE_ONLY) -> list[str]:
    """The episode flags (of ``names``) set away from their defaults on a run without --env, which plays no
    episode."""
    given = changed(settings, names)
    if not given:
        return []
    flags = ", ".join(f"--{name} {getattr(settings, name)}" for name in given)
    return [f"{flags}: {'it needs' if len(given) == 1 else 'they need'} --env (a dataset run plays no episodes); "
            f"drop {'it' if len(given) == 1 else 'them'} or give --env ENV_ID"]  # fmt: skip


# The settings of multi-turn GRPO alone, EnvArguments' own fields (the episode flags are its bases'): an SFT run
# (sft.py --env) plays only the expert's episodes.
GRPO_ONLY = tuple(EnvArguments.__annotations__)


@dataclass
class GUISFTScriptArguments(GUIDataArguments, EnvArguments):
    """Data and prompt settings of an SFT run; with --env, the episodes of a warm start on the environment's expert
    (r1_gui.multi_turn.warm_start). Multi-turn GRPO's own settings (GRPO_ONLY) are refused: SFT has no use for them."""

    _argument_group_name = "r1_gui: data and prompts (episodes with --env)"  # its --help heading
    refused: ClassVar[tuple[str, ...]] = GRPO_ONLY  # left out of the short --help (training.command_lines)

    def problems(self) -> list[str]:
        given = changed(self, self.refused)
        found = [f"{', '.join(f'--{name}' for name in given)}: multi-turn GRPO's setting{'s' * (len(given) > 1)} "
                 f"(grpo_gui.py --env), not SFT's; drop {'them' if len(given) > 1 else 'it'}"] if given else []  # fmt: skip
        found += [problem for problem in super().problems() if not problem.startswith(tuple(f"--{n} " for n in given))]
        found += dataset_and_env(self, "an --env warm start trains on the expert's episodes")
        if not self.env_id:
            found += episode_flags_without_env(self, tuple(name for name in EPISODE_ONLY if name not in GRPO_ONLY))
        return found


@dataclass
class TrainingRunFlags(Flags):
    """Resuming and checkpointing: two of trl's training fields with r1_gui's meaning (GRPO's and SFT's)."""

    resume_from_checkpoint: str | None = flag(
        None,
        "A checkpoint-N folder to resume from, or `last` for the newest one in --output_dir (an error when there is "
        "none). Without it a run starts at step 0 (and a GRPO run starts a new completions table).",
    )
    # trl defaults it to True; r1_gui leaves it unset and sets the new name (training.args.CheckpointingUnderItsNewName)
    gradient_checkpointing: bool | None = flag(
        None, "Old name of --activation_checkpointing (transformers 5 warns when it is given; trl's default: on)."
    )


@dataclass
class GRPORunFlags(TrainingRunFlags):
    """GRPO training: r1_gui's fields of trl's GRPOConfig."""

    average_last_steps: int = flag(
        0,
        "Save the mean of the trainable weights after each of the last N optimizer steps instead of the last step's "
        "weights (a tail average: steadier than any one step of a noisy RL run); 0: the last step's. Checkpoints "
        "keep the live weights and the running sum. Not under ZeRO-3.",
    )
    generation_compile: bool = flag_of(GenerationSettings, "generation_compile")

    def problems(self) -> list[str]:
        max_steps = getattr(self, "max_steps", 0)  # trl's field, there when these flags are in its config
        if self.average_last_steps >= 0 and not 0 < max_steps < self.average_last_steps:
            return super().problems()
        steps = f"from 1 to --max_steps ({max_steps})" if max_steps > 0 else "of at least 1"
        return [
            *super().problems(),
            f"--average_last_steps {self.average_last_steps}: give 0 (save the last step's weights) or a number of "
            f"steps {steps}",
        ]


@dataclass
class ModelFlags(Flags):
    """The model: r1_gui's field of trl's ModelConfig."""

    vision_attention: str = flag_of(GenerationSettings, "vision_attention")

    def problems(self) -> list[str]:
        from r1_gui.vision_attention import check_vision_attention

        found = super().problems()
        try:
            check_vision_attention(self.vision_attention)  # with --attn_implementation: GUIModelConfig's check
        except ValueError as error:
            found.append(str(error))
        return found


def following_env(values, given: set[str]) -> dict:
    """The defaults that follow --env, for ``values`` (a dict or the settings' attributes) where the user set none
    (``given``: the names given on the command line, in the recipe or from Python): with --env,
    max_completion_length is the episode's token budget (--max_turns x (--max_turn_tokens + the tool responses
    between turns)) instead of trl's 512. (--reward_funcs follows --env by itself: `GUIGRPOScriptArguments`.)"""
    get = values.get if isinstance(values, dict) else lambda name: getattr(values, name, None)
    if not get("env_id") or "max_completion_length" in given:
        return {}
    turns, tokens = get("max_turns"), get("max_turn_tokens")
    if not (isinstance(turns, int) and isinstance(tokens, int) and turns > 0 and tokens > 0):
        return {}  # a bad value is named by its own check
    from r1_gui.agent.context import episode_token_budget

    return {"max_completion_length": episode_token_budget(turns, tokens)}


# Each training command's r1_gui flags (the pre-check reads them; training.grpo and training.sft mix the last two
# into trl's config classes), and the trl classes that hold the rest.
COMMAND_FLAGS = {
    "grpo": (GUIGRPOScriptArguments, GRPORunFlags, ModelFlags),
    "sft": (GUISFTScriptArguments, TrainingRunFlags, ModelFlags),
}
TRL_CLASSES = {"grpo": ("GRPOConfig", "ModelConfig"), "sft": ("SFTConfig", "ModelConfig")}
