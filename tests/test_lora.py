"""LoRA from the README: default target modules (the language model only), an adapter folder that evaluation loads,
and a merge command whose folder evaluates the same."""

import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from r1_gui import rewards
from r1_gui.actions import completion_text

REPO = Path(__file__).resolve().parents[1]
RECIPE = REPO / "local_scripts" / "tiny_cpu_grpo.yaml"


def test_default_target_modules_are_the_language_model_projections(tiny_model):
    """Qwen2.5-VL's vision blocks also have gate/up/down_proj: the default must leave the whole vision tower out."""
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForImageTextToText

    from r1_gui.training.lora import LORA_TARGET_MODULES

    model = AutoModelForImageTextToText.from_pretrained(tiny_model)
    layers = model.config.text_config.num_hidden_layers
    wrapped = get_peft_model(model, LoraConfig(r=2, lora_alpha=4, target_modules=LORA_TARGET_MODULES))
    adapted = {name.split(".lora_A")[0] for name, _ in wrapped.named_parameters() if ".lora_A." in name}
    projections = {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}
    assert len(adapted) == 7 * layers
    assert {name.rsplit(".", 1)[1] for name in adapted} == projections
    assert all(".language_model.layers." in name for name in adapted)
    trainable = [name for name, p in wrapped.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in name and "visual" not in name for name in trainable)


def test_qwen3_vl_moe_adapts_every_expert_and_the_attention_but_not_the_router(tiny_qwen3_vl_moe):
    """The MoE language model has no MLP Linear modules: the experts' fused projections are adapted as parameters."""
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForImageTextToText

    from r1_gui.training.lora import default_lora_targets

    modules, parameters = default_lora_targets("qwen3_vl_moe")
    model = AutoModelForImageTextToText.from_pretrained(tiny_qwen3_vl_moe)
    wrapped = get_peft_model(model, LoraConfig(r=2, lora_alpha=4, target_modules=modules, target_parameters=parameters))
    trainable = [name for name, p in wrapped.named_parameters() if p.requires_grad]
    adapted = {name.split(".lora_")[0].removesuffix(".base_layer") for name in trainable}
    layers = model.config.text_config.num_hidden_layers
    attention = {f"self_attn.{p}_proj" for p in "qkvo"}
    assert {name.split(f"layers.{i}.", 1)[1] for i in range(layers) for name in adapted if f"layers.{i}." in name} == (
        attention | {"mlp.experts"}  # the experts' two fused projections are wrapped as one module
    )
    assert len(adapted) == 5 * layers and all(".language_model.layers." in name for name in adapted)
    assert not any("visual" in name or "mlp.gate" in name for name in trainable)
    assert default_lora_targets("qwen3_vl") == (modules, None)  # dense: the seven projections, as Qwen2/2.5-VL


def digit_fraction(completions, **kwargs):
    """A reward with a learning signal for a random model, so the adapter moves away from zero."""
    texts = [completion_text(c) for c in completions]
    return [sum(ch.isdigit() for ch in text) / max(1, len(text)) for text in texts]


@pytest.mark.slow
@pytest.mark.parametrize("arch", ["qwen2_5_vl", "qwen3_vl", "qwen3_vl_moe"])
def test_readme_lora_flags_train_evaluate_and_merge(arch, request, synthetic_dataset, tmp_path, monkeypatch):
    from r1_gui.evaluation.steps.cli import main as evaluate_cli
    from r1_gui.grpo_gui import main
    from r1_gui.training.grpo import parse_grpo_arguments

    base_model = request.getfixturevalue(f"tiny_{arch}")
    monkeypatch.setitem(rewards.REWARD_FUNCS, "digit_fraction", digit_fraction)
    adapter = tmp_path / "lora"
    argv = ["--config", str(RECIPE), "--model_name_or_path", str(base_model), "--dataset_name",
            str(synthetic_dataset), "--output_dir", str(adapter), "--max_steps", "2", "--learning_rate", "0.05",
            "--reward_funcs", "digit_fraction", "--use_peft", "--lora_r", "4", "--lora_alpha", "8"]  # fmt: skip
    main(*parse_grpo_arguments(argv))
    assert (adapter / "adapter_config.json").is_file() and not (adapter / "model.safetensors").exists()

    def evaluate(model: Path, name: str) -> list[str]:
        evaluate_cli(["--model_name_or_path", str(model), "--dataset", str(synthetic_dataset), "--max_samples", "3",
                      "--max_new_tokens", "16", "--max_pixels", "50176", "--gallery_size", "0",
                      "--output_dir", str(tmp_path / name)])  # fmt: skip
        return [json.loads(line)["output"] for line in (tmp_path / name / "predictions.jsonl").open()]

    adapter_outputs = evaluate(adapter, "eval_adapter")
    merged = tmp_path / "merged"
    from r1_gui.merge_lora import main as merge_cli

    merge_cli(["--adapter", str(adapter), "--output_dir", str(merged)])
    assert evaluate(merged, "eval_merged") == adapter_outputs

    base, after = load_file(base_model / "model.safetensors"), load_file(merged / "model.safetensors")
    assert set(base) == set(after)
    changed = {name for name in base if not torch.equal(base[name], after[name])}
    assert changed, "the merged adapter changed no weight"
    # saved in the checkpoint layout: the language model's projections ("model.layers.N..." for Qwen2.5-VL,
    # "model.language_model.layers.N..." for Qwen3-VL; the MoE experts' fused "...mlp.experts.gate_up_proj")
    language_model = "model.layers." if arch == "qwen2_5_vl" else "model.language_model.layers."
    assert all(name.startswith(language_model) and name.endswith(("proj.weight", "_proj")) for name in changed)
    if arch == "qwen3_vl_moe":
        assert any(name.endswith("mlp.experts.gate_up_proj") for name in changed), changed
