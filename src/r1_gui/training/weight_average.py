"""`--average_last_steps N`: a run saves the mean of its trainable weights after each of its last N optimizer steps
(a tail average, as in Polyak-Ruppert averaging and stochastic weight averaging), not the last step's weights alone.

Why: an RL run's last weights are one draw from a noisy walk. In the web demo (docs/records/web_demo.md, 2026-11-26
18:55 UTC, seed 0) single checkpoints of one GRPO run scored 80%, 56%, 76% and 72% held out after steps 60, 75, 85 and 90
(step 75 had lost the answer's form on click-tab), while the mean of its checkpoints every 5 steps from step 60 to 90
scored 81%, and from step 30, 81%. The saved model is the mean; checkpoints saved during the run keep the live
weights (training goes on from those) and carry the running sum (`weight_average.pt`), so a run resumed inside the
tail saves the same mean as one that was never stopped.

The sums are float32 copies of the trainable parameters on their own devices: one more copy of what trains (the
LoRA adapter only, under --use_peft). ZeRO-3 shards the parameters, so the average is refused there.
"""

from __future__ import annotations

import logging
from pathlib import Path

import torch
from transformers import TrainerCallback

from r1_gui.cli_errors import UserError

logger = logging.getLogger(__name__)

SUMS_FILE = "weight_average.pt"


def trainable_parameters(model) -> list[tuple[str, torch.nn.Parameter]]:
    return [(name, p) for name, p in model.named_parameters() if p.requires_grad]


class TailWeightAverage(TrainerCallback):
    """Sums the trainable weights after each of the last `steps` optimizer steps; at the end of training the model
    holds their mean, which the run then saves. `resume_from` is the checkpoint folder the run resumes from (set by
    GUIGRPOBase.train), where a run resumed inside the tail finds the sums so far."""

    def __init__(self, steps: int):
        if steps < 1:
            raise UserError(f"--average_last_steps must be 1 or more to average (0 turns it off), got {steps}")
        self.steps = steps
        self.resume_from: str | None = None
        self.sums: dict[str, torch.Tensor] | None = None
        self.count = 0

    def first_step(self, state) -> int:
        """The first optimizer step whose weights count."""
        return state.max_steps - self.steps + 1

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        from transformers.integrations import is_deepspeed_zero3_enabled

        if is_deepspeed_zero3_enabled():
            raise UserError(
                "--average_last_steps cannot average under DeepSpeed ZeRO-3 (each process holds a shard of the "
                "weights): use ZeRO-1 or ZeRO-2 (local_scripts/zero2.json), or --average_last_steps 0"
            )
        if self.steps > state.max_steps:
            raise UserError(
                f"--average_last_steps {self.steps} is more than the run's {state.max_steps} optimizer steps: "
                f"give at most {state.max_steps}, or 0 to save the last step's weights"
            )
        self.sums, self.count = None, 0
        first = self.first_step(state)
        if state.global_step >= first:  # resumed inside the tail: go on from the sums saved with the checkpoint
            self._load(Path(self.resume_from) / SUMS_FILE if self.resume_from else None, state, first, model)

    def _load(self, path: Path | None, state, first: int, model) -> None:
        if path is None or not path.is_file():
            raise UserError(
                f"this run resumes at step {state.global_step}, inside the last {self.steps} steps whose weights "
                f"--average_last_steps averages (from step {first}), but {path or 'its checkpoint'} is missing: "
                "resume from a checkpoint this setting saved, or from one before the tail"
            )
        saved = torch.load(path, map_location="cpu", weights_only=True)
        expected = state.global_step - first + 1
        if saved["first_step"] != first or saved["count"] != expected:
            raise UserError(
                f"{path} holds the sum of {saved['count']} steps from step {saved['first_step']}, but this run "
                f"averages from step {first} ({expected} steps by step {state.global_step}): resume with the "
                "--max_steps and --average_last_steps the checkpoint was saved with"
            )
        params = dict(trainable_parameters(model))
        if set(saved["sums"]) != set(params):
            raise UserError(f"{path} does not hold the sums of this model's trainable weights: was it another run's?")
        self.sums = {name: total.to(params[name].device) for name, total in saved["sums"].items()}
        self.count = saved["count"]

    def on_step_end(self, args, state, control, model=None, **kwargs):
        if state.global_step < self.first_step(state):
            return
        with torch.no_grad():
            if self.sums is None:
                self.sums = {name: p.detach().float().clone() for name, p in trainable_parameters(model)}
            else:
                for name, p in trainable_parameters(model):
                    self.sums[name].add_(p.detach().float())
        self.count += 1

    def on_save(self, args, state, control, **kwargs):
        if self.sums is None or not args.should_save:
            return
        folder = Path(args.output_dir) / f"checkpoint-{state.global_step}"
        if folder.is_dir():  # the Trainer saved it just before this call
            sums = {name: total.cpu() for name, total in self.sums.items()}
            torch.save({"first_step": self.first_step(state), "count": self.count, "sums": sums}, folder / SUMS_FILE)

    def on_train_end(self, args, state, control, model=None, **kwargs):
        if not self.count:
            return
        with torch.no_grad():
            for name, p in trainable_parameters(model):
                p.copy_((self.sums[name] / self.count).to(p.dtype))
        logger.info(
            "the weights saved are the mean of those after steps %d-%d (--average_last_steps %d)",
            state.global_step - self.count + 1,
            state.global_step,
            self.steps,
        )
