"""Model folders: a full checkpoint or a LoRA adapter folder (whose adapter_config.json names its base model).

Training writes them (r1_gui.training); the evaluation, the processor loading and merge_lora read them.
"""

from __future__ import annotations

import json
from pathlib import Path

from r1_gui.cli_errors import UserError
from r1_gui.paths import check_local_or_hub, resolve_model_path

ADAPTER_CONFIG = "adapter_config.json"


def adapter_base(model_name_or_path: str | Path) -> str | None:
    """The base model of a local LoRA adapter folder (its adapter_config.json), or None for anything else."""
    config = Path(model_name_or_path) / ADAPTER_CONFIG
    if not config.is_file():
        return None
    base = json.loads(config.read_text()).get("base_model_name_or_path")
    if not base:
        raise UserError(f"{config} names no base_model_name_or_path; add the base model's folder or Hub id there")
    return base


def config_folder(model_name_or_path: str | Path, flag: str = "--model_name_or_path") -> Path:
    """The folder whose config.json describes the model (for an adapter folder, its base model's), local or from
    the Hub cache; a missing local folder is a UserError naming ``flag``."""
    check_local_or_hub(model_name_or_path, flag)
    base = adapter_base(model_name_or_path)
    if base is None:
        return resolve_model_path(model_name_or_path)
    check_local_or_hub(base, f"the base model of the adapter {model_name_or_path}:")
    return resolve_model_path(base)


def load_model(model_name_or_path: str | Path, **kwargs):
    """AutoModelForImageTextToText.from_pretrained(model_name_or_path, **kwargs); for a LoRA adapter folder, its base
    model with the adapter merged in (generation then runs at the base model's speed)."""
    from transformers import AutoModelForImageTextToText

    base = adapter_base(model_name_or_path)
    if base is None:
        return AutoModelForImageTextToText.from_pretrained(model_name_or_path, **kwargs)
    from peft import PeftModel

    model = AutoModelForImageTextToText.from_pretrained(base, **kwargs)
    return PeftModel.from_pretrained(model, str(model_name_or_path)).merge_and_unload()
