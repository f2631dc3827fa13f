"""Training: the GRPO and SFT entry points and what they share.

- `args`: the r1_gui argument dataclasses, YAML + command-line parsing, checks of settings (coordinates, resume).
- `data`: loading a builder dataset for training, its row checks, the model-specific prompt columns.
- `model`: which models r1_gui trains, loading one.
- `trainer`: `GUIGRPOBase` (what every r1_gui GRPO trainer includes, on `r1_gui.seam.grpo.GRPOSeam`) and
  `GUIGRPOTrainer` (single-step), saving a run and closing its wandb run.
- `completions_table`: the single-step trainer's table of screenshots, answers and rewards.
- `repeated_prompts`: each distinct screenshot (and prompt) processed once per GRPO group.
- `lora`: the default LoRA target modules (adapter folders are read by `r1_gui.checkpoints`).
- `progress`: one short console line per logged step instead of the metrics dict.
- `grpo`, `sft`: the entry points; `src/r1_gui/grpo_gui.py` and `src/r1_gui/sft.py` are their command files.
Multi-turn GRPO on environments builds on these in `r1_gui.multi_turn`.
"""

import warnings

# trl 1.16 calls `is_gradient_checkpointing`, `gradient_checkpointing_disable` and `gradient_checkpointing_enable`
# (deprecated in transformers 5 for their `activation_checkpointing` names) around every generation, and peft reads
# the first when it wraps a model: transformers then warns on every GRPO step, in code r1_gui does not own and with
# nothing for the user to change. Those three FutureWarnings are ignored where transformers raises them (its
# modeling_utils; the TrainingArguments warning about a user's own --gradient_checkpointing stays); drop this filter
# once trl calls the new names.
warnings.filterwarnings(
    "ignore",
    message=r"`(is_gradient_checkpointing|gradient_checkpointing_disable|gradient_checkpointing_enable)` is deprecated",
    category=FutureWarning,
    module=r"transformers\.modeling_utils",
)
