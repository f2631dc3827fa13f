"""Resuming a run from a checkpoint-N folder: its weights as from_pretrained reads them, and no step past
--max_steps. Mixed into every r1_gui trainer (GRPO, multi-turn GRPO, SFT).

transformers 5.23's Trainer loads model.safetensors with a plain `load_state_dict`, without the checkpoint-name
conversion `from_pretrained` applies (transformers issue #43701): for Qwen-VL models every tensor but `lm_head` stays
at the base model's value, silently. And its training loop runs one step before it first checks `max_steps`, so a run
resumed from the checkpoint of its last step trains one step more. Both places are private to the Trainer and reached
through `r1_gui.seam.trainer.TrainerSeam`.
"""

from __future__ import annotations

import logging

from transformers import PreTrainedModel
from transformers.trainer_utils import get_last_checkpoint

from r1_gui.checkpoints import holds_full_weights, load_weights_into
from r1_gui.seam.trainer import TrainerSeam
from r1_gui.training.args import checkpoint_step

logger = logging.getLogger(__name__)


class ResumesCheckpoints(TrainerSeam):
    """A `transformers.Trainer` mixin (put it before the Trainer class). What differs from the Trainer:

    1. Weights (in `load_checkpoint_weights`, the seam's name for the Trainer's private `_load_from_checkpoint`,
       `r1_gui.seam.trainer`): a checkpoint holding the whole model's weights is read by
       `r1_gui.checkpoints.load_weights_into`, which converts names as `from_pretrained` does and fails naming the file
       when they do not all match. LoRA adapters (peft converts their names itself), FSDP and the DeepSpeed engine's
       own checkpoint (`global_stepN`, written under the live names) keep the Trainer's path.
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


def resolve_checkpoint(resume_from_checkpoint, output_dir: str) -> str | None:
    """The checkpoint folder `Trainer.train(resume_from_checkpoint=...)` resumes from: True is the Trainer's own
    spelling of the newest checkpoint-N in output_dir; None or False, none."""
    if resume_from_checkpoint is True:
        return get_last_checkpoint(output_dir)
    return resume_from_checkpoint or None
