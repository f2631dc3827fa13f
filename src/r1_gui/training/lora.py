"""LoRA for Qwen2-VL / Qwen2.5-VL (Aguvis): the default target modules, and loading an adapter folder as a model.

    python src/r1_gui/grpo_gui.py --config ... --use_peft --lora_r 16 --lora_alpha 32 --output_dir runs/x-lora
    python eval/test_aitw.py --model_name_or_path runs/x-lora ...      # base model + adapter, merged on load
    python -m r1_gui.merge_lora --adapter runs/x-lora --output_dir runs/x-merged    # a plain model folder

peft has no default target modules for qwen2_vl / qwen2_5_vl. Ours are the language model's attention and MLP
projections. The pattern names the language model, because Qwen2.5-VL's vision blocks also have gate_proj, up_proj
and down_proj: a plain list of projection names would put adapters on the vision tower too. The vision tower and
its merger stay frozen unless --lora_target_modules names them.

A training run with --use_peft saves an adapter folder: adapter_config.json (whose base_model_name_or_path is the
--model_name_or_path of the run, as given), adapter_model.safetensors and the processor.
"""

from __future__ import annotations

import json
from pathlib import Path

from r1_gui.cli_errors import UserError
from r1_gui.paths import check_local_or_hub

# re.fullmatch against module names such as model.language_model.layers.3.self_attn.q_proj (peft's rule for a str)
LORA_TARGET_MODULES = r".*language_model\.(.*\.)?layers\.\d+\.(self_attn\.(q|k|v|o)_proj|mlp\.(gate|up|down)_proj)"
ADAPTER_CONFIG = "adapter_config.json"


def lora_config(model_args):
    """trl's get_peft_config (None without --use_peft), with LORA_TARGET_MODULES unless --lora_target_modules."""
    from trl import get_peft_config

    if model_args.use_peft and not model_args.lora_target_modules and not model_args.lora_target_parameters:
        model_args.lora_target_modules = LORA_TARGET_MODULES
    return get_peft_config(model_args)


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
    from r1_gui.processing import resolve_model_path

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
