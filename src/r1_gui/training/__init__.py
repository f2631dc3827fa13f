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
Multi-turn GRPO on environments builds on these in `r1_gui.multi_turn`. The FutureWarnings of trl's and peft's
old checkpointing calls are silenced for every command in `r1_gui/__init__.py`.
"""
