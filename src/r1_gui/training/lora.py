"""LoRA for Qwen2-VL / Qwen2.5-VL (Aguvis): the default target modules (adapter folders load with r1_gui.checkpoints).

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

# re.fullmatch against module names such as model.language_model.layers.3.self_attn.q_proj (peft's rule for a str)
LORA_TARGET_MODULES = r".*language_model\.(.*\.)?layers\.\d+\.(self_attn\.(q|k|v|o)_proj|mlp\.(gate|up|down)_proj)"


def lora_config(model_args):
    """trl's get_peft_config (None without --use_peft), with LORA_TARGET_MODULES unless --lora_target_modules."""
    from trl import get_peft_config

    if model_args.use_peft and not model_args.lora_target_modules and not model_args.lora_target_parameters:
        model_args.lora_target_modules = LORA_TARGET_MODULES
    return get_peft_config(model_args)
