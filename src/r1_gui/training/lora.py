"""LoRA for Qwen2-VL / Qwen2.5-VL (Aguvis) / Qwen3-VL: the default targets (adapter folders load with r1_gui.checkpoints).

    python src/r1_gui/grpo_gui.py --config ... --use_peft --lora_r 16 --lora_alpha 32 --output_dir runs/x-lora
    python eval/test_aitw.py --model_name_or_path runs/x-lora ...      # base model + adapter, merged on load
    python -m r1_gui.merge_lora --adapter runs/x-lora --output_dir runs/x-merged    # a plain model folder

peft has no default target modules for qwen2_vl / qwen2_5_vl / qwen3_vl. Ours are the language model's attention and
MLP projections (Qwen3-VL's language model has the same seven, beside its q/k norms). The pattern names the language
model, because Qwen2.5-VL's vision blocks also have gate_proj, up_proj and down_proj: a plain list of projection
names would put adapters on the vision tower too. The vision tower, its merger and Qwen3-VL's deepstack mergers stay
frozen unless --lora_target_modules names them. Qwen3-VL MoE (qwen3_vl_moe) has no MLP Linear modules: each layer's
experts hold their projections as two fused 3-D parameters, which peft adapts as parameters
(`MOE_EXPERT_PARAMETERS`, trl's --lora_target_parameters; peft allows no dropout there, so --lora_dropout is set to
0 and logged); the router (mlp.gate) stays frozen.

A training run with --use_peft saves an adapter folder: adapter_config.json (whose base_model_name_or_path is the
--model_name_or_path of the run, as given), adapter_model.safetensors and the processor.
"""

from __future__ import annotations

import logging

logger = logging.getLogger(__name__)

# re.fullmatch against module names such as model.language_model.layers.3.self_attn.q_proj (peft's rule for a str)
LORA_TARGET_MODULES = r".*language_model\.(.*\.)?layers\.\d+\.(self_attn\.(q|k|v|o)_proj|mlp\.(gate|up|down)_proj)"


# peft's target_parameters (names ending so) for Qwen3-VL MoE: every expert's gate/up and down projections
MOE_EXPERT_PARAMETERS = ["mlp.experts.gate_up_proj", "mlp.experts.down_proj"]


def default_lora_targets(model_type: str) -> tuple[str, list[str] | None]:
    """(target modules, target parameters) of the default adapters for a model type."""
    return LORA_TARGET_MODULES, (list(MOE_EXPERT_PARAMETERS) if model_type == "qwen3_vl_moe" else None)


def lora_config(model_args):
    """trl's get_peft_config (None without --use_peft), with the default targets of the model's architecture unless
    --lora_target_modules or --lora_target_parameters name others."""
    from transformers import AutoConfig
    from trl import get_peft_config

    if model_args.use_peft and not model_args.lora_target_modules and not model_args.lora_target_parameters:
        model_type = AutoConfig.from_pretrained(model_args.model_name_or_path).model_type
        model_args.lora_target_modules, model_args.lora_target_parameters = default_lora_targets(model_type)
        if model_args.lora_target_parameters and model_args.lora_dropout:
            # peft applies a parameter's adapter to its weight, not to the input: there is no input to drop out
            logger.info("%s: LoRA on the experts' parameters takes no dropout: --lora_dropout %s -> 0", model_type,
                        model_args.lora_dropout)  # fmt: skip
            model_args.lora_dropout = 0.0
    return get_peft_config(model_args)
