"""Memory plan: what Aguvis-7B GRPO full fine-tuning needs per GPU on 8 x 80 GB under ZeRO-1, -2 and -3 (issue 20),
and what each GPU recipe needs per GPU at its own ZeRO stage (Qwen3-VL-8B and -4B included, issue 32).

    python bench/memory_plan.py                                # counts + the model-state table (CPU, ~10 s)
    python bench/memory_plan.py --measure --out memory.json    # CUDA: the two measured points
    python bench/memory_plan.py --measured memory.json         # the table with the measured activation column

Parameters are counted exactly, by building each architecture on the meta device (no memory) from a config that
mirrors the public checkpoint's config.json: Qwen2-VL-7B (Aguvis-7B-720P's base), Qwen2.5-VL-3B, Qwen3-VL-8B and
Qwen3-VL-4B (8,767,123,696 and 4,437,815,808 parameters: the 8.77 B and 4.44 B their model cards give).

Model states per GPU for N GPUs follow the ZeRO paper (bf16 mixed precision, AdamW; Psi parameters): bf16 params
2Psi, bf16 grads 2Psi, fp32 master copy + Adam m + v 12Psi. ZeRO-1 divides the 12Psi by N, ZeRO-2 also the grads,
ZeRO-3 also the params. With beta > 0 GRPO keeps a bf16 reference model: trl 1.16's prepare_deepspeed builds it
with ZeRO stage 0 (a whole copy, 2Psi, on every GPU) unless the run is ZeRO-3, where it is sharded (2Psi/N). With
LoRA trl builds no reference model (it disables the adapter instead); the adapter is fp32 (peft's
autocast_adapter_dtype, which trl turns off only under ZeRO-3), so Phi adapter parameters cost 4 + 4 + 8 = 16Phi.

Activations (and the generation cache, the logits, allocator slack) have no honest formula: `--measure` (CUDA
only) runs one GRPO step per shape at the recipe's batch and records `max_memory_allocated`; the activation term is
that step's peak minus the model states (the memory held when the step began: weights and optimizer states, plus
the trainable parameters' gradients, which the Trainer frees between steps). Without `--measured` the table says
"not measured".
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import platform
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GIB = 2**30
RECIPES = {
    "aguvis7b": REPO / "local_scripts" / "aguvis7b_aitw2k_grpo.yaml",
    "qwen25vl3b": REPO / "local_scripts" / "qwen25vl3b_aitw2k_grpo.yaml",
    "qwen25vl3b_phone": REPO / "local_scripts" / "qwen25vl3b_phone_grpo.yaml",
    "qwen3vl8b_phone": REPO / "local_scripts" / "qwen3vl8b_phone_grpo.yaml",
    "qwen3vl4b": REPO / "local_scripts" / "qwen3vl4b_aitw2k_grpo.yaml",
}
# Each GPU recipe's model shape (a SPECS key) and the measured run whose activations stand for it, if any.
RECIPE_SHAPES = {
    "aguvis7b": ("Aguvis-7B", "qwen2-vl-7b", "7b_lora"),
    "qwen25vl3b": ("Qwen2.5-VL-3B", "qwen2.5-vl-3b", "3b_full"),
    "qwen25vl3b_phone": ("Qwen2.5-VL-3B", "qwen2.5-vl-3b", None),
    "qwen3vl8b_phone": ("Qwen3-VL-8B", "qwen3-vl-8b", None),
    "qwen3vl4b": ("Qwen3-VL-4B", "qwen3-vl-4b", "qwen3vl4b_full"),
}
QWEN3_ROPE = {"rope_type": "default", "rope_theta": 5000000.0, "mrope_section": [24, 20, 20], "mrope_interleaved": True}
# what Qwen3-VL-8B and -4B have in common: 36 layers of 32 heads (8 key/value) of 128, the vocabulary, 16-pixel
# patches on a 48 x 48 learned position grid
QWEN3_TEXT = {"vocab_size": 151936, "num_hidden_layers": 36, "num_attention_heads": 32, "num_key_value_heads": 8,
              "head_dim": 128, "rope_parameters": QWEN3_ROPE}  # fmt: skip
QWEN3_VISION = {"num_heads": 16, "patch_size": 16, "num_position_embeddings": 2304}

# The public config.json shapes, in transformers' Qwen2VLConfig / Qwen2_5_VLConfig / Qwen3VLConfig field names.
SPECS = {
    "qwen2-vl-7b": {
        "arch": "qwen2_vl",
        "tie_word_embeddings": False,
        "text": {
            "vocab_size": 152064,
            "hidden_size": 3584,
            "intermediate_size": 18944,
            "num_hidden_layers": 28,
            "num_attention_heads": 28,
            "num_key_value_heads": 4,
            "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0, "mrope_section": [16, 24, 24]},
        },
        "vision": {
            "depth": 32,
            "embed_dim": 1280,
            "num_heads": 16,
            "mlp_ratio": 4,
            "spatial_merge_size": 2,
            "hidden_size": 3584,
        },
    },
    "qwen2.5-vl-3b": {
        "arch": "qwen2_5_vl",
        "tie_word_embeddings": True,
        "text": {
            "vocab_size": 151936,
            "hidden_size": 2048,
            "intermediate_size": 11008,
            "num_hidden_layers": 36,
            "num_attention_heads": 16,
            "num_key_value_heads": 2,
            "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0, "mrope_section": [16, 24, 24]},
        },
        "vision": {
            "depth": 32,
            "hidden_size": 1280,
            "intermediate_size": 3420,
            "num_heads": 16,
            "out_hidden_size": 2048,
            "fullatt_block_indexes": [7, 15, 23, 31],
            "window_size": 112,
        },
    },
    "qwen3-vl-8b": {
        "arch": "qwen3_vl",
        "tie_word_embeddings": False,
        "text": {**QWEN3_TEXT, "hidden_size": 4096, "intermediate_size": 12288},
        "vision": {
            **QWEN3_VISION,
            "depth": 27,
            "hidden_size": 1152,
            "intermediate_size": 4304,
            "out_hidden_size": 4096,
            "deepstack_visual_indexes": [8, 16, 24],
        },  # fmt: skip
    },
    "qwen3-vl-4b": {
        "arch": "qwen3_vl",
        "tie_word_embeddings": True,
        "text": {**QWEN3_TEXT, "hidden_size": 2560, "intermediate_size": 9728},
        "vision": {
            **QWEN3_VISION,
            "depth": 24,
            "hidden_size": 1024,
            "intermediate_size": 4096,
            "out_hidden_size": 2560,
            "deepstack_visual_indexes": [5, 11, 17],
        },  # fmt: skip
    },
}
TINY_ROPE = {"rope_type": "default", "rope_theta": 1000000.0, "mrope_section": [2, 3, 3]}  # head_dim 16
TINY_TEXT = {
    "vocab_size": 300,
    "hidden_size": 64,
    "intermediate_size": 96,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "rope_parameters": TINY_ROPE,
}
# the Qwen2.5-VL and Qwen3-VL towers' common fields (Qwen2-VL names its tower's fields otherwise)
TINY_TOWER = {"depth": 2, "hidden_size": 32, "intermediate_size": 48, "num_heads": 2, "out_hidden_size": 64}
# Tiny specs of each architecture in the same field names: the tests' exact counts and --device cpu's measure runs
# (which check that a point's run works end to end; a CPU has no memory figure to give).
TINY_SPECS = {
    "qwen2_vl": {
        "arch": "qwen2_vl",
        "tie_word_embeddings": False,
        "text": TINY_TEXT,
        "vision": {
            "depth": 2,
            "embed_dim": 32,
            "num_heads": 2,
            "mlp_ratio": 2,
            "spatial_merge_size": 2,
            "hidden_size": 64,
        },
    },
    "qwen2_5_vl tied": {
        "arch": "qwen2_5_vl",
        "tie_word_embeddings": True,
        "text": TINY_TEXT,
        "vision": {**TINY_TOWER, "fullatt_block_indexes": [1], "window_size": 112},
    },
    "qwen3_vl": {
        "arch": "qwen3_vl",
        "tie_word_embeddings": True,
        "text": {  # the same language model, with Qwen3-VL's explicit head size and interleaved rotary sections
            **{key: value for key, value in TINY_TEXT.items() if key != "rope_parameters"},
            "head_dim": 16,
            "rope_parameters": {**TINY_ROPE, "mrope_section": [4, 2, 2], "mrope_interleaved": True},
        },
        "vision": {**TINY_TOWER, "patch_size": 16, "num_position_embeddings": 64, "deepstack_visual_indexes": [0, 1]},
    },
}

# The measured points: (name, spec, recipe, mode). 3B full on one GPU; 7B with LoRA, the size that fits one GPU;
# Qwen3-VL-4B full on one GPU (its AITW recipe's batch).
RUNS = (
    ("3b_full", "qwen2.5-vl-3b", "qwen25vl3b", "full"),
    ("7b_lora", "qwen2-vl-7b", "aguvis7b", "lora"),
    ("qwen3vl4b_full", "qwen3-vl-4b", "qwen3vl4b", "full"),
)
MEASURED_KEYS = ("peak_gib", "states_gib", "activation_gib")


def make_config(spec: dict, token_ids: dict | None = None):
    """The transformers config of a SPECS entry; token_ids (image_token_id, ...) replace the upstream ids."""
    from transformers import AutoConfig

    tie = spec["tie_word_embeddings"]
    text = {**spec["text"], "tie_word_embeddings": tie, **(token_ids or {}).get("text", {})}
    top = {key: value for key, value in (token_ids or {}).items() if key != "text"}
    return AutoConfig.for_model(
        spec["arch"], text_config=text, vision_config=spec["vision"], tie_word_embeddings=tie, **top
    )


@dataclass(frozen=True)
class ParameterCount:
    total: int
    vision: int
    language: int  # language model, embeddings and lm_head (counted once when tied)
    lora: int  # adapter parameters at the given rank on r1_gui's LORA_TARGET_MODULES


def count_parameters(config, lora_r: int = 16, device: str = "meta") -> ParameterCount:
    """Exact counts from the architecture built on `device` ("meta": shapes only, no memory). A tied lm_head shares
    the embedding tensor, which model.parameters() yields once."""
    import torch
    from transformers import AutoModelForImageTextToText

    from r1_gui.training.lora import LORA_TARGET_MODULES

    with torch.device(device):
        model = AutoModelForImageTextToText.from_config(config)
    total = vision = 0
    for name, parameter in model.named_parameters():
        total += parameter.numel()
        vision += parameter.numel() if ".visual." in f".{name}" else 0
    lora = sum(
        lora_r * (module.in_features + module.out_features)
        for name, module in model.named_modules()
        if isinstance(module, torch.nn.Linear) and re.fullmatch(LORA_TARGET_MODULES, name)
    )
    return ParameterCount(total=total, vision=vision, language=total - vision, lora=lora)


def read_recipe(path: Path) -> dict:
    """The settings of a GRPO recipe that memory depends on, and its DeepSpeed config's ZeRO stage."""
    import yaml

    recipe = yaml.safe_load(Path(path).read_text())
    deepspeed = recipe.get("deepspeed")
    stage = json.loads((REPO / deepspeed).read_text())["zero_optimization"]["stage"] if deepspeed else None
    keys = ("beta", "per_device_train_batch_size", "gradient_accumulation_steps", "num_generations")
    keys += ("max_completion_length", "max_pixels", "bf16", "activation_checkpointing", "prompt_style", "coordinates")
    return {**{key: recipe[key] for key in keys}, "zero_stage": stage, "path": str(Path(path).relative_to(REPO))}


@dataclass(frozen=True)
class ModelStates:
    """Bytes per GPU."""

    params: float
    grads: float
    optimizer: float
    reference: float

    @property
    def total(self) -> float:
        return self.params + self.grads + self.optimizer + self.reference


def zero_states(psi: float, n_gpus: int, stage: int, beta: float) -> ModelStates:
    """Full fine-tuning, bf16 mixed precision with AdamW under DeepSpeed ZeRO `stage` (0 = plain data parallel)."""
    if stage not in (0, 1, 2, 3):
        raise ValueError(f"ZeRO stage must be 0, 1, 2 or 3, got {stage}")
    return ModelStates(
        params=2 * psi / (n_gpus if stage >= 3 else 1),
        grads=2 * psi / (n_gpus if stage >= 2 else 1),
        optimizer=12 * psi / (n_gpus if stage >= 1 else 1),
        reference=(2 * psi / (n_gpus if stage == 3 else 1)) if beta > 0 else 0.0,
    )


def bf16_adamw_states(psi: float, beta: float) -> ModelStates:
    """Full fine-tuning on one GPU without DeepSpeed, weights loaded in bf16 (the recipes' dtype): the Trainer keeps
    no fp32 master copy and torch's AdamW keeps m and v in the parameters' dtype, so 2 + 2 + 4 bytes a parameter."""
    return ModelStates(params=2 * psi, grads=2 * psi, optimizer=4 * psi, reference=2 * psi if beta > 0 else 0.0)


def lora_states(psi_base: float, phi: float) -> ModelStates:
    """LoRA on one GPU: frozen bf16 base (2Psi), fp32 adapter (4Phi) with fp32 grads (4Phi) and Adam m + v (8Phi);
    no reference model (trl disables the adapter to get the reference log-probs)."""
    return ModelStates(params=2 * psi_base + 4 * phi, grads=4 * phi, optimizer=8 * phi, reference=0.0)


def read_measured(path: str | Path) -> dict:
    """The --measure JSON: {"device", "date", "runs": {name: {"peak_gib", "states_gib", "activation_gib", ...}}}."""
    path = Path(path)
    try:
        measured = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as error:
        raise ValueError(f"{path}: cannot read the measured points ({error}); write it with --measure") from None
    runs = measured.get("runs") if isinstance(measured, dict) else None
    if not isinstance(runs, dict) or not runs:
        raise ValueError(f'{path}: expected an object with a non-empty "runs" object (written by --measure)')
    for name, run in runs.items():
        bad = [key for key in MEASURED_KEYS if not isinstance((run or {}).get(key), (int, float))]
        if not isinstance(run, dict) or bad:
            raise ValueError(f"{path}: run {name!r} lacks numbers for {', '.join(bad or MEASURED_KEYS)}")
    return measured


def plan_rows(counts: dict, recipes: dict, measured: dict | None, n_gpus: int, gpu_gib: float) -> list[dict]:
    """The table's rows: Aguvis-7B full fine-tuning under ZeRO-1/2/3 on n_gpus, then the one-GPU points, then every
    other GPU recipe at its own ZeRO stage on n_gpus (activations: the measured run of its shape, if any)."""
    runs = (measured or {}).get("runs", {})
    aguvis, qwen3b = recipes["aguvis7b"], recipes["qwen25vl3b"]
    psi7, psi3 = counts["qwen2-vl-7b"].total, counts["qwen2.5-vl-3b"].total
    activation_7b = runs.get("7b_lora", {}).get("activation_gib")
    rows = []
    for stage in (1, 2, 3):
        states = zero_states(psi7, n_gpus, stage, aguvis["beta"])
        rows.append(
            _row(f"Aguvis-7B full, ZeRO-{stage}, {n_gpus} GPUs", states, activation_7b, "7b_lora activations", gpu_gib)
        )
    for name, label, states in (
        ("3b_full", "Qwen2.5-VL-3B full, 1 GPU, no DeepSpeed", bf16_adamw_states(psi3, qwen3b["beta"])),
        ("7b_lora", "Qwen2-VL-7B LoRA, 1 GPU", lora_states(psi7, counts["qwen2-vl-7b"].lora)),
    ):
        run = runs.get(name, {})
        rows.append(_row(label, states, run.get("activation_gib"), "measured", gpu_gib, run.get("states_gib")))
    for name, (model, spec, run_name) in RECIPE_SHAPES.items():
        recipe = recipes[name]
        if name == "aguvis7b" or recipe["zero_stage"] is None:  # its stages are the rows above
            continue
        states = zero_states(counts[spec].total, n_gpus, recipe["zero_stage"], recipe["beta"])
        label = f"{model} full, ZeRO-{recipe['zero_stage']}, {n_gpus} GPUs ({Path(recipe['path']).name})"
        activation = runs.get(run_name, {}).get("activation_gib") if run_name else None
        rows.append(_row(label, states, activation, f"{run_name} activations", gpu_gib))
    return rows


def _row(label, states, activation_gib, source, gpu_gib, measured_states_gib=None) -> dict:
    state_gib = states.total / GIB
    row = {"setup": label, **{key: getattr(states, key) / GIB for key in ("params", "grads", "optimizer", "reference")}}
    row.update(states_gib=state_gib, measured_states_gib=measured_states_gib, activation_gib=activation_gib)
    if activation_gib is None:
        row["fits"] = f"states {'fit' if state_gib < gpu_gib else 'do not fit'}: {gpu_gib - state_gib:.1f} GiB left"
        row["activation"] = "not measured"
    else:
        need = (state_gib if measured_states_gib is None else measured_states_gib) + activation_gib
        row["fits"] = f"{'yes' if need <= gpu_gib else 'no'} ({need:.1f} GiB)"
        row["activation"] = f"{activation_gib:.1f} ({source})"
    return row


def format_table(rows: list[dict], gpu_gib: float) -> str:
    header = "| setup | params | grads | optimizer | reference | model states | activations | fits in "
    header += f"{gpu_gib:g} GiB? |\n|---|---|---|---|---|---|---|---|"
    lines = [header]
    for row in rows:
        states = f"{row['states_gib']:.1f}"
        if row["measured_states_gib"] is not None:
            states += f" (measured {row['measured_states_gib']:.1f})"
        cells = [f"{row[key]:.1f}" for key in ("params", "grads", "optimizer", "reference")]
        lines.append(f"| {row['setup']} | {' | '.join(cells)} | {states} | {row['activation']} | {row['fits']} |")
    return "\n".join(lines)


def format_counts(counts: dict, lora_r: int) -> str:
    lines = [f"| model | total | vision | language (+ embeddings, lm_head) | LoRA adapter (r={lora_r}) |"]
    lines.append("|---|---|---|---|---|")
    for name, count in counts.items():
        cells = [f"{count.total:,}", f"{count.vision:,}", f"{count.language:,}", f"{count.lora:,}"]
        lines.append(f"| {name} | {' | '.join(cells)} |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------------- measure


def measure_run(spec: dict, recipe: dict, mode: str, device: str = "cuda", steps: int = 2, attn: str = "sdpa") -> dict:
    """One GRPO run of a model of `spec`'s shape (random weights) at the recipe's per-device batch on one device
    ("full" or "lora" fine-tuning); returns the last step's peak (CUDA max_memory_allocated), its model states and
    the difference (activation_gib). On CPU there are no memory figures: it only checks that the run works."""
    import torch
    from gpu_step_profile import SCREEN, TOKENIZER_VOCAB, spread_reward
    from peft import LoraConfig
    from transformers import AutoModelForImageTextToText, TrainerCallback
    from trl import GRPOConfig

    from r1_gui.builder import build
    from r1_gui.gui_datasets import load_gui_dataset
    from r1_gui.processing import CHAT_TEMPLATE, load_processor, pixel_bounds, resize_factor
    from r1_gui.prompts import chat_template_kwargs
    from r1_gui.rewards import get_reward_funcs
    from r1_gui.synthetic import generate
    from r1_gui.tiny import build_processor, build_tokenizer
    from r1_gui.training.lora import LORA_TARGET_MODULES
    from r1_gui.training.trainer import GUIGRPOTrainer

    cuda = device == "cuda"
    style, coordinates = recipe["prompt_style"], recipe["coordinates"]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        tokenizer = build_tokenizer(TOKENIZER_VOCAB, CHAT_TEMPLATE)
        ids = tokenizer.convert_tokens_to_ids
        token_ids = {
            "image_token_id": ids("<|image_pad|>"),
            "video_token_id": ids("<|video_pad|>"),
            "vision_start_token_id": ids("<|vision_start|>"),
            "vision_end_token_id": ids("<|vision_end|>"),
            "text": {
                "bos_token_id": ids("<|endoftext|>"),
                "eos_token_id": ids("<|im_end|>"),
                # the real vocabulary is kept for what it costs; a smaller (test) one must still hold the tokenizer
                "vocab_size": max(spec["text"]["vocab_size"], len(tokenizer)),
            },
        }
        config = make_config(spec, token_ids)
        config.save_pretrained(tmp / "model")
        build_processor(spec["arch"], tokenizer, 3136, recipe["max_pixels"]).save_pretrained(tmp / "model")
        processor = load_processor(tmp / "model", padding_side="left")
        torch.manual_seed(0)
        with torch.device(device):
            model = AutoModelForImageTextToText.from_config(
                config, dtype=torch.bfloat16 if cuda else torch.float32, attn_implementation=attn
            )

        batch, generations = recipe["per_device_train_batch_size"], recipe["num_generations"]
        # one GPU: a generation batch (batch x accumulation steps) must hold whole groups of num_generations
        accumulation = max(recipe["gradient_accumulation_steps"], math.lcm(batch, generations) // batch)
        records = max(8, accumulation * batch * (steps + 1) // generations)
        generate(tmp / "raw", records=records, seed=0, width=SCREEN[0], height=SCREEN[1], progress=False)
        build([tmp / "raw" / "synthetic-l1.json"], tmp / "raw" / "images", tmp / "data", test_size=0, progress=False)
        dataset = load_gui_dataset(tmp / "data", "train")
        from r1_gui.training.data import add_model_columns

        dataset = add_model_columns(
            dataset, style, coordinates, pixel_bounds(processor), factor=resize_factor(processor)
        )
        stops = tokenizer.convert_tokens_to_ids(["<|im_end|>", "<|diff_marker|>"])
        unused = range(len(tokenizer), config.text_config.vocab_size)  # ids the local tokenizer cannot decode
        args = GRPOConfig(
            output_dir=str(tmp / "out"),
            max_steps=steps,
            per_device_train_batch_size=batch,
            gradient_accumulation_steps=accumulation,
            num_generations=generations,
            max_completion_length=recipe["max_completion_length"],
            beta=recipe["beta"],
            learning_rate=1e-6,
            bf16=cuda and recipe["bf16"],
            activation_checkpointing=recipe["activation_checkpointing"],
            use_cpu=not cuda,
            report_to="none",
            save_strategy="no",
            seed=0,
            chat_template_kwargs=chat_template_kwargs(style),
            # every answer runs to max_completion_length: the worst case for the cache and the loss pass
            generation_kwargs={"suppress_tokens": [config.image_token_id, *stops, *unused]},
        )
        rewards = [
            *get_reward_funcs(["accuracy", "format"], coordinates=coordinates, prompt_style=style),
            spread_reward,
        ]
        peft_config = LoraConfig(r=16, lora_alpha=32, target_modules=LORA_TARGET_MODULES) if mode == "lora" else None
        trainer = GUIGRPOTrainer(
            model=model,
            reward_funcs=rewards,
            args=args,
            train_dataset=dataset,
            processing_class=processor,
            peft_config=peft_config,
            prompt_style=style,
            coordinates=coordinates,
            completions_table_steps=0,
        )
        points = []

        class PeakClock(TrainerCallback):
            def on_step_begin(self, *unused_args, **kwargs):
                if cuda:
                    torch.cuda.synchronize()
                    torch.cuda.reset_peak_memory_stats()
                    points.append({"held_gib": torch.cuda.memory_allocated() / GIB})

            def on_step_end(self, *unused_args, **kwargs):
                if cuda:
                    torch.cuda.synchronize()
                    points[-1]["peak_gib"] = torch.cuda.max_memory_allocated() / GIB

        trainer.add_callback(PeakClock())
        trainer.train()
        trainable = [p for p in trainer.model.parameters() if p.requires_grad]
    result = {
        "mode": mode,
        "recipe": recipe["path"],
        "per_device_train_batch_size": batch,
        "gradient_accumulation_steps": accumulation,
        "num_generations": generations,
        "max_completion_length": recipe["max_completion_length"],
        "beta": recipe["beta"],
        "attn_implementation": attn,
        "trainable_parameters": sum(p.numel() for p in trainable),
        "steps": points,
    }
    if points:  # the last step: AdamW's states exist from the first step's update on
        # The Trainer frees the gradients (zero_grad sets them to None) before a step begins: they come back in the
        # backward pass, so they are a model state, not part of the activation term.
        grads_gib = sum(p.numel() * p.element_size() for p in trainable) / GIB
        last = points[-1]
        states_gib = last["held_gib"] + grads_gib
        result.update(peak_gib=last["peak_gib"], held_at_step_begin_gib=last["held_gib"], grads_gib=grads_gib)
        result.update(states_gib=states_gib, activation_gib=last["peak_gib"] - states_gib)
    return result


def _measure_child(run: tuple, recipe: dict, device: str, steps: int, attn: str, conn) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))  # gpu_step_profile, in a spawned process
    name, spec_name, unused_recipe, mode = run
    spec = SPECS[spec_name]
    if device == "cpu":  # the run's plumbing on a tiny model of the same architecture (bench/gpu_kit.py --cpu)
        spec = next(tiny for tiny in TINY_SPECS.values() if tiny["arch"] == spec["arch"])
        recipe = {**recipe, "max_completion_length": 4, "max_pixels": 50176}
    result = measure_run(spec, recipe, mode, device=device, steps=steps, attn=attn)
    conn.send({"shape": spec_name, **result})


def measure(recipes: dict, device: str, steps: int, attn: str, only: list[str]) -> dict:
    """Each run in a fresh process, so one run's cached allocations do not count in the next one's peak."""
    import torch
    from child_process import receive, start

    runs = {}
    for run in RUNS:
        if only and run[0] not in only:
            continue
        process, conn = start(_measure_child, run, recipes[run[2]], device, steps, attn)
        runs[run[0]] = receive(process, conn, f"the {run[0]} point")
        process.join()
    return {
        "device": torch.cuda.get_device_name() if device == "cuda" else "cpu",
        "date": datetime.date.today().isoformat(),
        "torch": torch.__version__,
        "runs": runs,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--measure", action="store_true", help="CUDA: measure the 3B full, 7B LoRA, Qwen3-VL-4B points")
    parser.add_argument("--out", default="memory_measured.json", help="where --measure writes its JSON")
    parser.add_argument("--measured", help="a JSON written by --measure: fills the activation column")
    parser.add_argument("--gpus", type=int, default=8, help="GPUs of the full fine-tuning run")
    parser.add_argument("--gpu_gib", type=float, default=80.0, help="memory per GPU, GiB")
    parser.add_argument("--lora_r", type=int, default=16, help="LoRA rank of the 7B point")
    parser.add_argument("--steps", type=int, default=2, help="--measure: GRPO steps per run (the last one counts)")
    parser.add_argument("--attn_implementation", default="sdpa", help="--measure: sdpa or flash_attention_2")
    parser.add_argument("--only", nargs="*", default=[], choices=[run[0] for run in RUNS], help="--measure: runs")
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda", help=argparse.SUPPRESS)  # cpu: tests
    args = parser.parse_args()
    recipes = {name: read_recipe(path) for name, path in RECIPES.items()}

    if args.measure:
        import torch

        if args.device == "cuda" and not torch.cuda.is_available():
            print("--measure needs CUDA and this machine has none: run it on a GPU machine (nothing written)")
            return 1
        measured = measure(recipes, args.device, args.steps, args.attn_implementation, args.only)
        Path(args.out).write_text(json.dumps(measured, indent=2) + "\n")
        print(f"wrote {args.out}")
        if args.device == "cpu":  # the runs worked; a CPU gives no memory figures for the table
            return 0
        args.measured = args.out

    measured = None
    if args.measured:
        try:
            measured = read_measured(args.measured)
        except ValueError as error:
            print(error, file=sys.stderr)
            return 2
    counts = {name: count_parameters(make_config(spec), args.lora_r) for name, spec in SPECS.items()}
    rows = plan_rows(counts, recipes, measured, args.gpus, args.gpu_gib)
    where = f"measured on {measured['device']} ({measured['date']})" if measured else "activations not measured"
    print(f"{datetime.date.today()} on {platform.node() or 'this machine'}; {where}\n")
    print(format_counts(counts, args.lora_r) + "\n")
    aguvis = recipes["aguvis7b"]
    print(
        f"Model states in GiB per GPU; Aguvis recipe {aguvis['path']}: beta {aguvis['beta']}, ZeRO-{aguvis['zero_stage']}\n"
    )
    print(format_table(rows, args.gpu_gib))
    summary = {"benchmark": "memory_plan", "parameters": {name: c.total for name, c in counts.items()}}
    summary["rows"] = {row["setup"]: round(row["states_gib"], 2) for row in rows}
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
