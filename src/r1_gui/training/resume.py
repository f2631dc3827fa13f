"""Resuming a training run, in one place: what a checkpoint is called and when it counts, which one
`--resume_from_checkpoint` takes, what a Ctrl-C keeps, and how a resumed trainer reads the checkpoint's weights and
steps. Every r1_gui trainer (GRPO, multi-turn GRPO, SFT) resumes this way.

    resume = resolve_resume(training_args.resume_from_checkpoint, output_dir)   # before the model loads
    with interrupt_keeps_checkpoints(output_dir):                               # Ctrl-C: what was kept, how to go on
        trainer.train(resume_from_checkpoint=resume)                            # a ResumesCheckpoints trainer

Naming: the Trainer saves output_dir/checkpoint-N (N the optimizer step) and writes its trainer_state.json last, so a
folder without that file is a save cut short (a kill while saving). Such folders are passed over by `last`, with a
warning naming them; a checkpoint whose weights do not read (cut short after the state was written: a copy that
stopped, a disk that failed) is refused, naming the newest checkpoint that reads.

The trainer side (`ResumesCheckpoints`): transformers 5.23's Trainer loads model.safetensors with a plain
`load_state_dict`, without the checkpoint-name conversion `from_pretrained` applies (transformers issue #43701): for
Qwen-VL models every tensor but `lm_head` stays at the base model's value, silently. And its training loop runs one
step before it first checks `max_steps`, so a run resumed from the checkpoint of its last step trains one step more.
Both places are private to the Trainer and reached through `r1_gui.seam.trainer.TrainerSeam`.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from transformers import PreTrainedModel
from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR, get_last_checkpoint

from r1_gui.checkpoints import damaged_weights_named, unreadable_weights
from r1_gui.cli_errors import UserError, on_interrupt, one_line, rerun_command
from r1_gui.seam.trainer import TrainerSeam

logger = logging.getLogger(__name__)

RESUME_LAST = ("last", "true", "True")
CHECKPOINT_STATE = "trainer_state.json"  # the Trainer writes it last: a checkpoint without it was cut short
FULL_WEIGHTS = ("model.safetensors", "model.safetensors.index.json")


# -- naming ---------------------------------------------------------------------------------------------------------


def checkpoint_folders(output_dir: str | Path) -> tuple[list[Path], list[Path]]:
    """(complete, partial) checkpoint-N folders of output_dir, each by step: complete ones hold trainer_state.json."""
    folder = Path(output_dir)
    if not folder.is_dir():
        return [], []
    found = sorted((p for p in folder.glob(f"{PREFIX_CHECKPOINT_DIR}-*") if p.is_dir() and _step(p) >= 0), key=_step)
    complete = [path for path in found if (path / CHECKPOINT_STATE).is_file()]
    return complete, [path for path in found if path not in complete]


def _step(checkpoint: Path) -> int:
    number = checkpoint.name.rsplit("-", 1)[-1]
    return int(number) if number.isdigit() else -1


def checkpoint_step(checkpoint: str | Path) -> int:
    """The step a checkpoint-N folder was saved at (its trainer_state.json's global_step); a UserError naming the
    file when it is not the Trainer's JSON (a disk that filled up while it was written, a hand edit)."""
    path = Path(checkpoint) / CHECKPOINT_STATE
    try:
        step = json.loads(path.read_text())["global_step"]
        if not isinstance(step, int):
            raise ValueError(f"global_step is {step!r}")
    except (ValueError, KeyError, TypeError) as error:
        raise UserError(
            f"{path} is not a trainer state ({one_line(error)}): resume from another checkpoint-N folder"
        ) from None
    return step


# -- resolution -----------------------------------------------------------------------------------------------------


def resolve_resume(resume_from_checkpoint: str | None, output_dir: str) -> str | None:
    """The checkpoint folder to resume from, checked before the model loads: None to start afresh; ``last`` (or
    ``true``) the newest complete output_dir/checkpoint-N (holding trainer_state.json; newer ones without it, which a
    kill during saving leaves, are skipped with a warning naming them), which must exist; otherwise a folder holding
    trainer_state.json. Its state and its weights must read (`check_readable`)."""
    if resume_from_checkpoint in (None, "", "false", "False"):
        return None
    if resume_from_checkpoint in RESUME_LAST:
        complete, partial = checkpoint_folders(output_dir)
        if not complete:
            cut = f" ({', '.join(p.name for p in partial)}: no {CHECKPOINT_STATE}, a save cut short)" if partial else ""
            raise UserError(
                f"--resume_from_checkpoint {resume_from_checkpoint}: {output_dir} holds no "
                f"{'complete ' if partial else ''}checkpoint-N folder to resume from{cut} (a run saves them with "
                "--save_strategy steps --save_steps N); drop the flag to start a new run, or give another --output_dir"
            )
        newer = [folder.name for folder in partial if _step(folder) > _step(complete[-1])]
        if newer:
            logger.warning(
                "--resume_from_checkpoint %s: resuming from %s, the newest complete checkpoint; %s hold(s) no %s (a "
                "save cut short) and is skipped",
                resume_from_checkpoint, complete[-1], ", ".join(newer), CHECKPOINT_STATE,
            )  # fmt: skip
        check_readable(complete[-1], resume_from_checkpoint)
        return str(complete[-1])
    if not (Path(resume_from_checkpoint) / CHECKPOINT_STATE).is_file():
        raise UserError(
            f"--resume_from_checkpoint {resume_from_checkpoint}: no such checkpoint (a checkpoint-N folder holding "
            f"{CHECKPOINT_STATE}), or `last` for the newest one in --output_dir"
        )
    check_readable(Path(resume_from_checkpoint), resume_from_checkpoint)
    return resume_from_checkpoint


def check_readable(checkpoint: Path, given: str) -> None:
    """A UserError unless the checkpoint's trainer state and weights read (their headers: no tensor is loaded); for
    weights that do not, the line names the newest older checkpoint of its run that reads (``given``: the flag's
    value)."""
    checkpoint_step(checkpoint)
    damaged = unreadable_weights(checkpoint)
    if damaged is None:
        return
    older = [folder for folder in checkpoint_folders(checkpoint.parent)[0] if _step(folder) < _step(checkpoint)]
    readable = next((folder for folder in reversed(older) if unreadable_weights(folder) is None), None)
    instead = (
        f"resume from the newest readable checkpoint: --resume_from_checkpoint {readable}"
        if readable
        else f"no checkpoint of {checkpoint.parent} reads: drop --resume_from_checkpoint to start over"
    )
    path, why = damaged
    raise UserError(
        f"--resume_from_checkpoint {given}: {path} cannot be read ({why}): the file is damaged or cut short; {instead}"
    )


def resolve_checkpoint(resume_from_checkpoint, output_dir: str) -> str | None:
    """The checkpoint folder `Trainer.train(resume_from_checkpoint=...)` resumes from: True is the Trainer's own
    spelling of the newest checkpoint-N in output_dir; None or False, none."""
    if resume_from_checkpoint is True:
        return get_last_checkpoint(output_dir)
    return resume_from_checkpoint or None


# -- the interrupt policy -------------------------------------------------------------------------------------------


def interrupt_keeps_checkpoints(output_dir: str):
    """`on_interrupt` of a training run: a Ctrl-C names the newest complete checkpoint in output_dir and the same
    command with `--resume_from_checkpoint last` (or, with none saved yet, the same command, which starts over)."""

    def kept() -> str:
        complete, _ = checkpoint_folders(output_dir)
        if complete:
            return f"{complete[-1]}, the last checkpoint saved"
        return "nothing: no checkpoint was saved yet (--save_strategy steps --save_steps N saves them)"

    def resume() -> str:
        if not checkpoint_folders(output_dir)[0]:
            return rerun_command()
        return rerun_command(drop=("--resume_from_checkpoint",), add=("--resume_from_checkpoint", "last"))

    return on_interrupt(kept, resume)


# -- the trainer ----------------------------------------------------------------------------------------------------


class ResumesCheckpoints(TrainerSeam):
    """A `transformers.Trainer` mixin (put it before the Trainer class). What differs from the Trainer:

    1. Weights (in `load_checkpoint_weights`, the seam's name for the Trainer's private `_load_from_checkpoint`,
       `r1_gui.seam.trainer`): a checkpoint holding the whole model's weights is read by `load_weights_into`, which
       converts names as `from_pretrained` does and fails naming the file when they do not all match. LoRA adapters
       (peft converts their names itself), FSDP and the DeepSpeed engine's own checkpoint (`global_stepN`, written
       under the live names) keep the Trainer's path.
    2. Steps (in `train` and `has_steps_to_run`): a run resumed from a checkpoint at or past `max_steps` draws no
       batch, so it runs no step; it ends as a run that just reached its last step does (saving what it holds).
    """

    _nothing_to_train = False

    def train(self, resume_from_checkpoint=None, *args, **kwargs):
        checkpoint = resolve_checkpoint(resume_from_checkpoint, self.args.output_dir)
        self._nothing_to_train = False
        if checkpoint and self.args.max_steps > 0:
            reached = checkpoint_step(checkpoint)
            if reached >= self.args.max_steps and self.is_world_process_zero():
                logger.warning(
                    "%s is at step %d and --max_steps is %d: no step to run; the run ends with the checkpoint's "
                    "weights (raise --max_steps to train further)", checkpoint, reached, self.args.max_steps,
                )  # fmt: skip
            self._nothing_to_train = reached >= self.args.max_steps
        return super().train(resume_from_checkpoint, *args, **kwargs)

    def has_steps_to_run(self) -> bool:
        return not self._nothing_to_train

    def load_checkpoint_weights(self, checkpoint: str, model=None) -> bool:
        whole_model = isinstance(self.model, PreTrainedModel)  # a peft model loads its adapter by the Trainer's path
        if model is None and whole_model and holds_full_weights(checkpoint) and not self.is_fsdp_enabled:
            logger.info("loading the weights of %s", checkpoint)
            load_weights_into(self.model, checkpoint)
            return True
        return False


def holds_full_weights(folder: str | Path) -> bool:
    """Whether a (checkpoint) folder holds a whole model's weights, as save_pretrained writes them."""
    return (Path(folder) / "config.json").is_file() and any((Path(folder) / name).is_file() for name in FULL_WEIGHTS)


def load_weights_into(model, folder: str | Path) -> None:
    """Copy the weights saved in ``folder`` (save_pretrained's model.safetensors, or its shards) into ``model`` in
    place, read through the same checkpoint-name conversion that ``from_pretrained`` applies.

    transformers 5 saves Qwen-VL weights under their checkpoint names (`model.layers.*`, `visual.*`) while the live
    model's are `model.language_model.*`, `model.visual.*`; a plain `load_state_dict` of the file matches only
    `lm_head` and leaves every other tensor as it was. Here the folder is read by the model's own class, so the names
    are converted exactly as at load time. A UserError names the file when it cannot be read (cut short) or when
    any of the model's tensors is not in it, it holds tensors the model lacks or a shape differs (a checkpoint of
    another model). Memory: one CPU copy of the weights while copying, as the Trainer's own resume takes."""
    folder = Path(folder)
    weights = next((folder / name for name in FULL_WEIGHTS if (folder / name).is_file()), folder / FULL_WEIGHTS[0])
    dtype = next(model.parameters()).dtype
    with damaged_weights_named(folder):  # the live model's config: another model's file shows as mismatches
        saved, info = type(model).from_pretrained(
            folder, config=model.config, dtype=dtype, ignore_mismatched_sizes=True, output_loading_info=True
        )
    mismatched = sorted(info.get("mismatched_keys") or ())  # (name, shape in the file, shape in the model)
    problems = [
        f"{len(info[key])} {what} (e.g. {sorted(info[key])[0]})"
        for key, what in (("missing_keys", "tensors missing"), ("unexpected_keys", "tensors this model lacks"))
        if info.get(key)
    ] + [
        f"{len(mismatched)} tensors of another shape (e.g. {name}: {list(found)} in the file, {list(expected)} in "
        "the model)"
        for name, found, expected in mismatched[:1]
    ]
    if problems:
        raise UserError(
            f"{weights} does not hold this model's weights: {'; '.join(problems)}. Resume with the "
            "--model_name_or_path the checkpoint was trained from"
        )
    incompatible = model.load_state_dict(saved.state_dict(), strict=False)
    if incompatible.missing_keys or incompatible.unexpected_keys:  # the same class reads it, so only a bug gets here
        raise RuntimeError(f"loading {weights}: {incompatible}")
