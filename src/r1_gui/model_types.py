"""The architectures r1_gui trains, loads and evaluates: config.json's `model_type` of a checkpoint.

Light (no torch, no transformers), so that command lines can list them before anything heavy is imported. What
each one needs is kept where it is used: the stock processor class (`processing.STOCK_PROCESSOR_CLASS`), the prompt
style and coordinates it was trained with (`prompts.ARCHITECTURE_CONVENTIONS`), its tiny config (`tiny.build_config`),
its LoRA targets (`training.lora.default_lora_targets`).
"""

import json
from pathlib import Path

QWEN3_VL_TYPES = ("qwen3_vl", "qwen3_vl_moe")  # Qwen3-VL, dense and MoE (e.g. Qwen3-VL-30B-A3B)
MODEL_TYPES = ("qwen2_vl", "qwen2_5_vl", *QWEN3_VL_TYPES)  # Aguvis is a qwen2_vl model


def folder_model_type(folder: str | Path) -> str | None:
    """config.json's `model_type` in a model folder, read as JSON; None where the folder has no config.json. The one
    reader of a model's type: training's checks, the processor and the evaluation all ask it (for a LoRA adapter or a
    Hub id, of the folder `r1_gui.checkpoints.config_folder` finds)."""
    config = Path(folder) / "config.json"
    return json.loads(config.read_text()).get("model_type") if config.is_file() else None
