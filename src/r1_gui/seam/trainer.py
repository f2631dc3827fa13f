"""transformers' Trainer under r1_gui's names: `TrainerSeam`.

Written against transformers 5.23.0 (pinned; tests/test_upstream_internals.py guards what is used here). How the
Trainer loads a checkpoint's weights on resume is its private `_load_from_checkpoint`; and its training loop draws a
batch (`get_batch_samples`) before it first checks `max_steps`, so a loop that should run no step can only be stopped
there, by returning no batch with `control.should_training_stop` set.
"""

from __future__ import annotations


class TrainerSeam:
    """A `transformers.Trainer` mixin (put it before the Trainer class) that hands two places of the Trainer to
    public-named methods a subclass overrides; by default both keep the Trainer's behaviour.

    - `load_checkpoint_weights(checkpoint, model)`: called where the Trainer would load a checkpoint's weights on
      resume (`Trainer._load_from_checkpoint`); True when it loaded them, False to leave it to the Trainer.
    - `has_steps_to_run()`: asked each time the training loop is about to draw a batch; False stops the loop there,
      before the step (the loop ends as one that reached its last step does).
    """

    def load_checkpoint_weights(self, checkpoint: str, model=None) -> bool:
        return False

    def has_steps_to_run(self) -> bool:
        return True

    def _load_from_checkpoint(self, resume_from_checkpoint, model=None):
        if not self.load_checkpoint_weights(resume_from_checkpoint, model):
            super()._load_from_checkpoint(resume_from_checkpoint, model)

    def get_batch_samples(self, epoch_iterator, num_batches, device):
        if not self.has_steps_to_run():
            self.control.should_training_stop = True
            return [], None
        return super().get_batch_samples(epoch_iterator, num_batches, device)
