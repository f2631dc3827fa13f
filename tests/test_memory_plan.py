"""bench/memory_plan.py: the ZeRO model-state formula on hand-computed cases, exact parameter counts on the meta
device against a real model, the --measured JSON read into the table, and the --measure path run on CPU."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

import memory_plan  # noqa: E402
from memory_plan import (  # noqa: E402
    GIB,
    TINY_SPECS,
    ModelStates,
    ParameterCount,
    bf16_adamw_states,
    count_parameters,
    format_table,
    lora_states,
    make_config,
    plan_rows,
    read_measured,
    read_recipe,
    zero_states,
)

# (stage, beta, expected params, grads, optimizer, reference) in bytes for Psi = 1000 parameters on N = 4 GPUs
ZERO_CASES = [
    (0, 0.04, 2000, 2000, 12000, 2000),  # plain data parallel: 16 bytes a parameter + a whole bf16 reference
    (1, 0.04, 2000, 2000, 3000, 2000),  # ZeRO-1: only the 12Psi fp32 master + Adam m, v is split 4 ways
    (2, 0.04, 2000, 500, 3000, 2000),  # ZeRO-2: the bf16 grads too; trl's reference model stays whole (stage 0)
    (3, 0.04, 500, 500, 3000, 500),  # ZeRO-3: everything split, the reference model included
    (1, 0.0, 2000, 2000, 3000, 0),  # beta 0: trl builds no reference model
]


@pytest.mark.parametrize("stage, beta, params, grads, optimizer, reference", ZERO_CASES)
def test_zero_states_by_hand(stage, beta, params, grads, optimizer, reference):
    states = zero_states(1000, 4, stage, beta)
    assert states == ModelStates(params, grads, optimizer, reference)
    assert states.total == params + grads + optimizer + reference


def test_one_gpu_states_by_hand():
    # bf16 weights without DeepSpeed: bf16 params 200 + grads 200 + AdamW m, v in bf16 400; no fp32 master copy
    assert bf16_adamw_states(100, beta=0.0) == ModelStates(200, 200, 400, 0)
    # with beta > 0 a whole bf16 reference model comes on top
    assert bf16_adamw_states(100, beta=0.04).reference == 200
    # LoRA: frozen bf16 base 2 x 1000 + fp32 adapter 4 x 10; fp32 grads 40; Adam m, v 80; no reference model
    assert lora_states(1000, 10) == ModelStates(2040, 40, 80, 0)
    assert lora_states(1000, 10).total == 2160


def test_unknown_zero_stage_fails():
    with pytest.raises(ValueError, match="ZeRO stage must be 0, 1, 2 or 3"):
        zero_states(1000, 8, 4, 0.0)


@pytest.mark.parametrize("name", TINY_SPECS)
def test_meta_count_equals_real_model(name):
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForImageTextToText

    from r1_gui.training.lora import LORA_TARGET_MODULES

    config = make_config(TINY_SPECS[name])
    meta = count_parameters(config, lora_r=4)
    torch.manual_seed(0)
    model = AutoModelForImageTextToText.from_config(make_config(TINY_SPECS[name]))
    real_total = sum(p.numel() for p in model.parameters())
    real_vision = sum(p.numel() for p in model.model.visual.parameters())
    assert meta == ParameterCount(
        total=real_total, vision=real_vision, language=real_total - real_vision, lora=meta.lora
    )
    if TINY_SPECS[name]["tie_word_embeddings"]:  # the lm_head is the embedding, counted once
        assert model.lm_head.weight is model.model.language_model.embed_tokens.weight
    adapted = get_peft_model(model, LoraConfig(r=4, target_modules=LORA_TARGET_MODULES))
    assert meta.lora == sum(p.numel() for p in adapted.parameters() if p.requires_grad) > 0


def test_real_recipes_are_read():
    aguvis = read_recipe(memory_plan.RECIPES["aguvis7b"])
    assert (aguvis["beta"], aguvis["zero_stage"], aguvis["per_device_train_batch_size"]) == (0.04, 1, 1)
    assert aguvis["bf16"] and aguvis["activation_checkpointing"]
    assert read_recipe(memory_plan.RECIPES["qwen25vl3b"])["zero_stage"] == 2
    verl = read_recipe(memory_plan.RECIPES["qwen3vl8b_phone"])  # the verl recipe's settings, on Qwen3-VL-8B
    assert (verl["zero_stage"], verl["beta"], verl["num_generations"], verl["coordinates"]) == (3, 0.01, 5, "grid999")
    assert read_recipe(memory_plan.RECIPES["qwen3vl4b"])["prompt_style"] == "mobile_use"
    assert set(memory_plan.RECIPE_SHAPES) == set(memory_plan.RECIPES)  # every recipe has a row


def test_the_qwen3_vl_shapes_have_their_model_cards_parameter_counts():
    """8.77 B (Qwen3-VL-8B-Instruct) and 4.44 B (Qwen3-VL-4B-Instruct), counted on the meta device."""
    assert count_parameters(make_config(memory_plan.SPECS["qwen3-vl-8b"])).total == 8_767_123_696
    assert count_parameters(make_config(memory_plan.SPECS["qwen3-vl-4b"])).total == 4_437_815_808


def fake_counts():
    """Psi = 2**30 for every shape, so every bf16 term is 2 GiB; a 2**24-parameter adapter (0.25 GiB at 16 B)."""
    return {
        "qwen2-vl-7b": ParameterCount(total=GIB, vision=0, language=GIB, lora=2**24),
        **{
            name: ParameterCount(total=GIB, vision=0, language=GIB, lora=0)
            for name in memory_plan.SPECS
            if "7b" not in name
        },
    }


def recipes():
    return {name: read_recipe(path) for name, path in memory_plan.RECIPES.items()}


def write_measured(tmp_path, runs) -> Path:
    path = tmp_path / "measured.json"
    path.write_text(json.dumps({"device": "H100", "date": "2026-11-23", "runs": runs}))
    return path


def test_measured_json_fills_the_table(tmp_path):
    runs = {
        "7b_lora": {"peak_gib": 14.5, "states_gib": 4.5, "activation_gib": 10.0},
        "3b_full": {"peak_gib": 20.0, "states_gib": 8.5, "activation_gib": 11.5},
    }
    rows = plan_rows(fake_counts(), recipes(), read_measured(write_measured(tmp_path, runs)), n_gpus=8, gpu_gib=20.0)
    by_setup = {row["setup"]: row for row in rows}
    zero1 = by_setup["Aguvis-7B full, ZeRO-1, 8 GPUs"]
    # 2 + 2 + 12/8 + 2 (beta 0.04: whole reference) = 7.5 GiB, + the 7B run's 10 GiB of activations = 17.5
    assert zero1["states_gib"] == pytest.approx(7.5)
    assert zero1["fits"] == "yes (17.5 GiB)"
    assert zero1["activation"] == "10.0 (7b_lora activations)"
    # ZeRO-3: (2 + 2 + 12 + 2) / 8 = 2.25 GiB
    assert by_setup["Aguvis-7B full, ZeRO-3, 8 GPUs"]["states_gib"] == pytest.approx(2.25)
    # 3B, 1 GPU: formula 2 + 2 + 4 = 8 GiB; the measured 8.5 + 11.5 = 20.0 just fits 20 GiB
    three = by_setup["Qwen2.5-VL-3B full, 1 GPU, no DeepSpeed"]
    assert three["states_gib"] == pytest.approx(8.0)
    assert three["fits"] == "yes (20.0 GiB)"
    table = format_table(rows, 20.0)
    assert "| 8.0 (measured 8.5) | 11.5 (measured) | yes (20.0 GiB) |" in table
    # 7B LoRA: 2 GiB base + 16 B x 2**24 = 0.25 GiB; measured 4.5 + 10 = 14.5
    assert by_setup["Qwen2-VL-7B LoRA, 1 GPU"]["states_gib"] == pytest.approx(2.25)
    # the verl recipe on Qwen3-VL-8B: ZeRO-3 with beta 0.01, (2 + 2 + 12 + 2) / 8 = 2.25 GiB; no measured activations
    verl = by_setup["Qwen3-VL-8B full, ZeRO-3, 8 GPUs (qwen3vl8b_phone_grpo.yaml)"]
    assert verl["states_gib"] == pytest.approx(2.25) and verl["activation"] == "not measured"
    # Qwen3-VL-4B on AITW: ZeRO-2, beta 0: 2 + 2/8 + 12/8 = 3.75 GiB; no qwen3vl4b_full run in the file
    assert by_setup["Qwen3-VL-4B full, ZeRO-2, 8 GPUs (qwen3vl4b_aitw2k_grpo.yaml)"]["states_gib"] == pytest.approx(
        3.75
    )


def test_without_measurements_the_activations_say_so():
    rows = plan_rows(fake_counts(), recipes(), None, n_gpus=8, gpu_gib=80.0)
    assert all(row["activation"] == "not measured" for row in rows)
    assert rows[0]["fits"] == "states fit: 72.5 GiB left"  # 80 - 7.5


@pytest.mark.parametrize(
    "text, message",
    [
        ("{not json", "cannot read the measured points"),  # a broken file
        ('{"runs": {}}', 'non-empty "runs" object'),  # nothing measured
        ('{"runs": {"7b_lora": {"peak_gib": 14.5}}}', "run '7b_lora' lacks numbers for states_gib, activation_gib"),
        ('{"runs": {"7b_lora": null}}', "run '7b_lora' lacks numbers"),
    ],
)
def test_malformed_measured_json_names_the_file(tmp_path, text, message):
    path = tmp_path / "broken.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=message) as error:
        read_measured(path)
    assert str(path) in str(error.value)


def test_missing_measured_file_names_it(tmp_path):
    with pytest.raises(ValueError, match="absent.json: cannot read"):
        read_measured(tmp_path / "absent.json")


def test_measure_without_cuda_says_so():
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "memory_plan.py"), "--measure", "--out", "/nonexistent/x.json"],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert done.returncode == 1
    assert "--measure needs CUDA" in done.stdout


@pytest.mark.parametrize("shape, recipe_name", [("qwen2_vl", "qwen25vl3b"), ("qwen3_vl", "qwen3vl4b")])
def test_measure_path_runs_on_cpu(shape, recipe_name):
    """The --measure run's plumbing (recipe -> GRPOConfig, one-GPU accumulation, data, trainer) on a tiny shape: a
    batch of 2 with 8 generations needs 4 accumulation steps on one device."""
    recipe = {**read_recipe(memory_plan.RECIPES[recipe_name]), "max_completion_length": 4, "max_pixels": 50176}
    result = memory_plan.measure_run(TINY_SPECS[shape], recipe, "full", device="cpu", steps=1)
    assert (result["per_device_train_batch_size"], result["gradient_accumulation_steps"]) == (2, 4)
    assert (result["beta"], result["max_completion_length"], result["mode"]) == (0.0, 4, "full")
    assert "peak_gib" not in result  # no memory figures without CUDA
