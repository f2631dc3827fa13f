"""Training: the GRPO and SFT entry points and what they share.

- `args`: the r1_gui argument dataclasses, YAML + command-line parsing, checks of settings (coordinates, resume).
- `data`: loading a builder dataset for training, its row checks, the model-specific prompt columns.
- `model`: which models r1_gui trains, loading one.
- `trainer`: `GUIGRPOTrainer` (a `trl.GRPOTrainer` subclass), the completions table, closing the wandb run.
- `repeated_prompts`: each distinct screenshot (and prompt) processed once per GRPO group.
- `lora`: the default LoRA target modules (adapter folders are read by `r1_gui.checkpoints`).
- `grpo`, `sft`: the entry points; `src/r1_gui/grpo_gui.py` and `src/r1_gui/sft.py` are their command files.
Multi-turn GRPO on environments builds on these in `r1_gui.multi_turn`.
"""
