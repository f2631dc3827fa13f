"""r1_gui's GRPO trainers for GUI agents: what they share (`GUIGRPOBase`) and the single-step one (`GUIGRPOTrainer`).

Written against trl 1.16.0 (the version pyproject.toml pins). trl's private hooks are reached through
`r1_gui.seam.grpo.GRPOSeam`, under public names; each override below names the hook it overrides. The two trainers,
`GUIGRPOTrainer` (a dataset of screenshots, one answer per row) and `r1_gui.multi_turn.trainer.MultiTurnGRPOTrainer`
(episodes in an environment), are siblings: each includes `GUIGRPOBase`'s features and adds its own, and neither
switches off a feature of the other.
"""

from __future__ import annotations

import logging

import torch
from accelerate.utils import gather_object

from r1_gui.actions import completion_text, extract_action
from r1_gui.paths import usual_file_modes
from r1_gui.prompts import stop_token_ids
from r1_gui.seam.grpo import GRPOSeam, join_images, split_images_by_row
from r1_gui.training.completions_table import CompletionsTable
from r1_gui.training.progress import show_step_lines
from r1_gui.training.repeated_prompts import (
    cached_image_processor,
    encode_each_image_once,
    prefill_each_prompt_once,
    whole_groups_shuffled,
)
from r1_gui.training.resume import ResumesCheckpoints, interrupt_keeps_checkpoints, resolve_checkpoint
from r1_gui.training.weight_average import TailWeightAverage

logger = logging.getLogger(__name__)


class GUIGRPOBase(ResumesCheckpoints, GRPOSeam):
    """What every r1_gui GRPO trainer includes; `GUIGRPOTrainer` and `MultiTurnGRPOTrainer` build on it. What differs
    from `trl.GRPOTrainer`, and nothing else:

    1. Stopping (in `__init__`): the completion ends at the prompt style's stop token. For the aguvis style that is
       `<|diff_marker|>`, which closes the os-channel code; the parent stops at `<|im_end|>`, which in Aguvis closes
       the *plan*, so the action would be cut off. The same ids mask the completion for the loss.
    2. Padding (in `__init__`): the processor's tokenizer pads on the left. trl left-pads the prompt ids itself but
       takes `mm_token_type_ids` from a processor call that pads on the tokenizer's side; with right padding (the
       default of many Qwen tokenizers) those types no longer line up with the prompt ids when prompts in a batch
       differ in length, and Qwen's 3D rope index fails ("shape mismatch") or silently misplaces the image.
    3. No-signal completions (decided in `__init__`; `rows_with_signal`, which each trainer's `policy_loss` calls
       once): completions whose advantage is 0 (their group's rewards are all equal) add nothing to the policy
       gradient, yet the parent runs the forward and backward pass on them. With `skip_no_signal=True` they are left
       out of that pass where the gradient stays exactly the same: beta 0 and a loss whose normalizer counts the
       whole generation batch (`dapo`, `cispo`), with no entropy mask, entropy bonus or MoE load-balancing loss.
       Otherwise every completion is kept and the log says why. The logged `entropy` and `clip_ratio/*` are then
       over the completions that carry signal.
    4. Reward metrics (`log_rewards_by`, `log_no_signal_groups`, which each trainer's `score_completions` calls with
       the rewards the parent computed and gathered across processes, so every process logs the same value): each
       reward's mean per label of the rows (`rewards/<name>/<label>`: the action type, or the episode's task) and the
       fraction of groups whose weighted rewards are all equal (`groups/no_signal_frac`, groups that teach nothing).
       trl's public hook for this, the `log_metric` callable it passes to reward functions, is not used: it averages
       per-process values, which for a per-label mean weights the processes equally rather than the completions, and
       would need every reward function wrapped. trl's `frac_reward_zero_std` is close to `groups/no_signal_frac`
       but not the same: trl's is over the nan-aware reward std (`isclose` to 0) per group with `scale_rewards`
       "group" or "none", but over the whole batch with "batch" or `multi_objective_aggregation="normalize_then_sum"`
       (then 0 or 1); ours is always per group, from the weighted sum with a completion that every reward skipped
       (all None) counted as 0 (`no_signal_fraction`). Both are taken before `skip_no_signal` drops anything.
    5. Console (in `__init__`): one short line per logged step (reward, success, loss, time per step) above the
       progress bar instead of the parent's whole metrics dict (`r1_gui.training.progress`); the metrics themselves
       are logged as before.
    6. Saved weights (in `__init__` and `train`): with `average_last_steps` N > 0 (GUIGRPOConfig) the model holds the
       mean of its trainable weights after each of the last N optimizer steps when training ends, so the run saves
       that mean (`r1_gui.training.weight_average`); `train` tells it which checkpoint a run resumes from.
    7. Resuming (`r1_gui.training.resume.ResumesCheckpoints`, shared with SFT): a checkpoint's weights are read as
       `from_pretrained` reads them, and a run resumed at `max_steps` runs no further step.
    8. Compiled generation (in `__init__`): with `generation_compile=True` (or GUIGRPOConfig's `generation_compile`)
       HF generation runs on a static KV cache with a compiled decode step (`r1_gui.generation.compiled`); the
       parent builds its GenerationConfig with `disable_compile=True`, so its `cache_implementation="static"` alone
       runs uncompiled. Where it cannot apply (vLLM, ZeRO-3, FSDP, a model not marked compilable) one log line says
       why and generation is the parent's. Each generation (in `generate_turn`) sizes the static cache in buckets
       of tokens (`static_cache_length`), so prompts of other lengths do not recompile the decode step.

    Args (besides trl's): prompt_style (whose stop token ends a completion), coordinates (how completions give
    points: normalized or pixel), skip_no_signal, generation_compile (None: GUIGRPOConfig's).
    """

    def __init__(
        self,
        *args,
        prompt_style: str = "aguvis",
        coordinates: str = "normalized",
        skip_no_signal: bool = True,
        generation_compile: bool | None = None,
        **kwargs,
    ):
        super().__init__(*args, **kwargs)
        self.text_tokenizer.padding_side = "left"
        self.prompt_style = prompt_style
        self.coordinates = coordinates
        self._use_style_stop_token()
        self._compiled_generation = False
        if generation_compile is None:
            generation_compile = getattr(self.args, "generation_compile", False)
        if generation_compile:
            self._use_compiled_generation()
        blocker = self._no_signal_skip_blocker() if skip_no_signal else None
        self.skip_no_signal = skip_no_signal and blocker is None
        if blocker:
            logger.info("every completion goes through the loss pass: %s", blocker)
        show_step_lines(self)
        self.weight_average = None
        if getattr(self.args, "average_last_steps", 0):
            self.weight_average = TailWeightAverage(self.args.average_last_steps)
            self.add_callback(self.weight_average)

    # -- 1. stopping --------------------------------------------------------------------------------------------
    def _use_style_stop_token(self) -> None:
        stop_ids = stop_token_ids(self.text_tokenizer, self.prompt_style)
        self.eos_token_ids = stop_ids
        if self.use_vllm:
            extra = {"stop_token_ids": stop_ids, "ignore_eos": self.prompt_style == "aguvis"}
            self.vllm_generation.generation_kwargs = {**(self.vllm_generation.generation_kwargs or {}), **extra}
        else:
            self.generation_config.eos_token_id = stop_ids
            self.generation_kwargs["eos_token_id"] = stop_ids

    # -- 3. no-signal completions -------------------------------------------------------------------------------
    def _no_signal_skip_blocker(self) -> str | None:
        """Why leaving zero-advantage completions out would change the gradient; None when it would not."""
        if self.beta != 0.0:
            return f"beta={self.beta} gives every completion a KL gradient"
        if self.loss_type not in ("dapo", "cispo"):
            return f"loss_type={self.loss_type} normalizes by the completions in the micro-batch"
        if self.top_entropy_quantile < 1.0:
            return "top_entropy_quantile < 1 ranks entropies across the micro-batch"
        if self.entropy_bonus_enabled:
            return "the entropy bonus acts on every completion"
        if self.aux_loss_enabled:
            return "the MoE load-balancing loss averages over the micro-batch"
        return None

    def rows_with_signal(self, inputs: dict) -> dict:
        """The micro-batch the loss pass runs on: without its zero-advantage rows when `skip_no_signal` holds and the
        model trains (`drop_rows_without_signal`), else as it is."""
        if self.skip_no_signal and self.model.training:
            return drop_rows_without_signal(inputs)
        return inputs

    # -- 4. reward metrics --------------------------------------------------------------------------------------
    def log_rewards_by(self, mode: str, rewards_per_func: torch.Tensor, labels: list[str]) -> None:
        """Each reward's mean over the gathered rows of each label (`rewards/<name>/<label>`), NaN (None) left out."""
        rewards = rewards_per_func.cpu()
        for label in sorted(set(labels)):
            rows = torch.tensor([t == label for t in labels])
            for i, name in enumerate(self.reward_func_names):
                values = rewards[rows, i]
                values = values[~torch.isnan(values)]
                if len(values):
                    self.record_metric(mode, f"rewards/{name}/{label}", values.mean().item())

    def log_no_signal_groups(self, mode: str, rewards_per_func: torch.Tensor) -> None:
        num_generations = self.num_generations if mode == "train" else self.num_generations_eval
        fraction = no_signal_fraction(rewards_per_func, self.reward_weights, num_generations)
        self.record_metric(mode, "groups/no_signal_frac", fraction)

    # -- 6. saved weights ---------------------------------------------------------------------------------------
    def train(self, resume_from_checkpoint=None, *args, **kwargs):
        if self.weight_average is not None:
            self.weight_average.resume_from = resolve_checkpoint(resume_from_checkpoint, self.args.output_dir)
        return super().train(resume_from_checkpoint, *args, **kwargs)

    # -- 8. compiled generation ---------------------------------------------------------------------------------
    def _use_compiled_generation(self) -> None:
        from r1_gui.generation.compiled import (
            check_cache_implementation,
            generation_compile_blocker,
            generation_compile_settings,
            report,
        )

        check_cache_implementation(self.args.cache_implementation)
        backend = "vllm" if self.use_vllm else "hf"
        if not self.use_vllm and self.use_transformers_continuous_batching:
            backend = "transformers' continuous batching"
        blocker = generation_compile_blocker(self.model, sharded=self.weight_sharding, backend=backend)
        if report(blocker, "training's generation"):
            settings = generation_compile_settings(self.accelerator.device.type)
            for name, value in settings.items():
                setattr(self.generation_config, name, value)
            self.generation_kwargs.update(settings)
            self._compiled_generation = True

    def generate_turn(self, prompt_ids, *args, **kwargs):
        if self._compiled_generation:  # the static cache's length in buckets (fewer recompiles)
            from r1_gui.generation.compiled import static_cache_length

            multiple = self.pad_to_multiple_of or 1
            longest = -(-max(len(ids) for ids in prompt_ids) // multiple) * multiple
            self.generation_config.max_cache_len = static_cache_length(longest, self.generation_config.max_new_tokens)
        return super().generate_turn(prompt_ids, *args, **kwargs)


class GUIGRPOTrainer(GUIGRPOBase):
    """`trl.GRPOTrainer` on a dataset of screenshots, one answer per row. It includes everything of `GUIGRPOBase`
    (stopping, padding, the no-signal skip, reward metrics, console, saved weights, resuming, compiled generation),
    and adds:

    1. Metrics (in `score_completions`): the reward means per ground-truth action type (`rewards/<name>/<type>`), the
       fraction of completions whose action parses (`completions/parse_rate`) and `groups/no_signal_frac`.
    2. Completions table (`r1_gui.training.completions_table.CompletionsTable`; rows kept in `score_completions`,
       written in `log`): every `completions_table_steps` steps, a table with the screenshot (ground-truth point/box
       in green, prediction in red), the instruction, the completion and its rewards, under
       `output_dir/completions_table/` and to wandb when wandb is on. The parent's own completion logging crashes
       under wandb with image prompts (trl 1.16), so it is switched off for image datasets.
    3. Repeated prompts (with `dedupe_images=True`; in `generate_and_score`, `policy_loss` and
       `shuffle_generation_batch`): the parent repeats each prompt `num_generations` times, so every copy of its
       screenshot goes through the image processor twice per step and through the vision tower in generation, and
       generation prefills every copy. Here each distinct screenshot is processed once per step, encoded once and
       each distinct prompt prefilled once per generation batch (`r1_gui.training.repeated_prompts`); the tensors
       are the same (up to float rounding of the smaller prefill). In the loss pass the vision tower likewise encodes
       each distinct screenshot of the micro-batch once, with gradients: the copies index the same features, so
       autograd sums their gradients (the parent's gradient up to float summation order). And where the loss pass
       runs in several micro-batches (`steps_per_generation` > 1), the generation batch is shuffled by whole groups
       instead of row by row before it is split, so a micro-batch holds few screenshots rather than a scatter of
       every one (`whole_groups_shuffled`; the same summed loss for the loss types whose micro-batch terms are
       normalised by the whole batch or by equal row counts).
    4. The no-signal skip (`GUIGRPOBase` 3) in its `policy_loss`.

    Rewards receive the dataset's columns as TRL passes them: each completion is scored against its own row's
    `image`, `solution`, `bbox` and `screen_size`, whatever the per-device batch size.
    """

    def __init__(
        self,
        *args,
        completions_table_steps: int = 50,
        completions_table_rows: int = 8,
        dedupe_images: bool = True,
        **kwargs,
    ):
        super().__init__(*args, **kwargs)
        self.completions_table = CompletionsTable(completions_table_steps, completions_table_rows)
        self.dedupe_images = dedupe_images
        if self.log_completions and self.train_dataset is not None and "image" in self.train_dataset.column_names:
            logger.info("trl's completion logging is replaced by r1_gui's completions table (it crashes on images)")
            self.log_completions = False

    # -- 1. metrics, 2. the table's rows --------------------------------------------------------------------------
    def score_completions(self, inputs, prompts, completions, completion_ids_list):
        rewards_per_func = super().score_completions(inputs, prompts, completions, completion_ids_list)
        mode = "train" if self.model.training else "eval"
        texts = [completion_text(c) for c in completions]
        parsed = [
            extract_action(text, coordinates=self.coordinates, image_size=row.get("screen_size"))
            for text, row in zip(texts, inputs, strict=True)
        ]
        action_types = gather_object([str(row.get("action", "unknown")) for row in inputs])
        parse_ok = gather_object([action is not None for action in parsed])
        self.record_metric(mode, "completions/parse_rate", sum(parse_ok) / max(1, len(parse_ok)))
        self.log_rewards_by(mode, rewards_per_func, action_types)
        self.log_no_signal_groups(mode, rewards_per_func)
        step = self.state.global_step
        if mode == "train" and self.completions_table.due(step, self.accelerator.is_main_process):
            # this process's rows of the gathered rewards
            local = rewards_per_func[self.accelerator.process_index * len(inputs) :][: len(inputs)].cpu().tolist()
            self.completions_table.collect(step, inputs, texts, parsed, local, self.reward_func_names)
        return rewards_per_func

    # -- 2. the table, written --------------------------------------------------------------------------------
    def log(self, logs: dict[str, float], start_time: float | None = None) -> None:
        # The table goes to wandb uncommitted before the parent logs, so it is committed with this step's metrics
        # row rather than left pending for whatever wandb.log call comes next (none may come before the run ends).
        if self.accelerator.is_main_process:
            self.completions_table.write_pending(self.args.output_dir, self.args.report_to)
        super().log(logs, start_time)

    # -- 3. repeated prompts, 4. no-signal completions -----------------------------------------------------------
    def generate_and_score(self, inputs):
        if not self.dedupe_images:
            return super().generate_and_score(inputs)
        with (
            cached_image_processor(self.processing_class),
            encode_each_image_once(self.model),
            prefill_each_prompt_once(self.model),
        ):
            return super().generate_and_score(inputs)

    def policy_loss(self, model, inputs):
        inputs = self.rows_with_signal(inputs)
        if not self.dedupe_images:
            return super().policy_loss(model, inputs)
        with encode_each_image_once(model, with_gradients=True):
            return super().policy_loss(model, inputs)

    def shuffle_generation_batch(self, batch):
        if not self.dedupe_images or self.args.steps_per_generation == 1:
            return super().shuffle_generation_batch(batch)
        # each micro-batch: as few screenshots as it can; rows as trl shuffles them where the batch is not whole groups
        shuffled = whole_groups_shuffled(batch, self.num_generations)
        return super().shuffle_generation_batch(batch) if shuffled is None else shuffled


def no_signal_fraction(rewards_per_func: torch.Tensor, weights: torch.Tensor, num_generations: int) -> float:
    """The fraction of prompt groups (``num_generations`` consecutive rows) whose weighted reward sums are all
    equal (within 1e-6): `groups/no_signal_frac`. A row whose rewards are all NaN (every reward returned None)
    sums to 0, as the parent's `nansum` makes it before it marks such rows unscorable."""
    total = (rewards_per_func * weights.to(rewards_per_func.device).unsqueeze(0)).nansum(dim=1)
    total = total.view(-1, num_generations)
    spread = total.max(dim=1).values - total.min(dim=1).values
    return (spread.abs() < 1e-6).float().mean().item()


def drop_rows_without_signal(inputs: dict) -> dict:
    """The micro-batch without its zero-advantage rows (at least one row stays, so every process still runs the
    forward and backward pass that distributed training synchronizes on). Unchanged when every row has signal or
    when image rows cannot be attributed to completions (pixel values not split by `image_grid_thw`)."""
    advantages = inputs["advantages"]
    rows = advantages.size(0)
    signal = advantages.reshape(rows, -1).ne(0).any(dim=1)
    if bool(signal.all()):
        return inputs
    keep = signal.nonzero().flatten().tolist() or [0]
    split = split_images_by_row(inputs)
    if "pixel_values" in split and not isinstance(split["pixel_values"], list):
        return inputs
    index = torch.tensor(keep, device=advantages.device)
    kept = {}
    for key, value in split.items():
        if isinstance(value, torch.Tensor) and value.dim() > 0 and value.size(0) == rows:
            kept[key] = value.index_select(0, index.to(value.device))
        elif isinstance(value, list) and len(value) == rows:
            kept[key] = [value[i] for i in keep]
        else:
            kept[key] = value
    return join_images(kept)


def train_and_save(trainer, resume: str | None, logger: logging.Logger) -> None:
    """Train (resuming from ``resume``; Ctrl-C says what was kept and how to go on), then `save_run`: what every
    training command ends with."""
    with interrupt_keeps_checkpoints(trainer.args.output_dir):  # Ctrl-C: one line, what was kept, how to go on
        trainer.train(resume_from_checkpoint=resume)
    save_run(trainer, logger)


def save_run(trainer, logger: logging.Logger) -> None:
    """The end of a training run: the model, its processor and trainer_state.json (with the log history) into
    output_dir, and the wandb run closed. Every process calls it (saving gathers sharded weights); one writes:
    global process 0, or each node's first with --save_on_each_node. Only that one says so, in ``logger`` (the
    command's)."""
    output_dir = trainer.args.output_dir
    trainer.save_model(output_dir)
    trainer.save_state()
    finish_wandb_run()
    if trainer.args.should_save:
        usual_file_modes(output_dir)  # its checkpoint-N folders too
        logger.info("saved the model, processor and trainer_state.json to %s", output_dir)


def finish_wandb_run() -> None:
    """Close the wandb run the Trainer opened and wait until its data is on disk (offline) or sent, when main()
    returns rather than when the interpreter exits: the demo and other programs call main() and then read the run.
    `wandb.finish` waits for the run's exit record to be handled, not for the service process to write out its run
    file (under load a reader found it empty); `wandb.teardown` waits for the service to flush, close and exit (a
    later run in this process starts a new one)."""
    import sys

    wandb = sys.modules.get("wandb")
    if wandb is not None and wandb.run is not None:
        wandb.finish()
        wandb.teardown()
