"""--generation_compile (r1_gui.generation.compiled): a static KV cache with a compiled decode step gives the greedy
answers of the dynamic cache on the tiny Qwen2-VL, Qwen2.5-VL and Qwen3-VL, in evaluation (HFGenerator) and in the
GRPO trainer's generation (with its deduplicated prefill); where it cannot apply it says why and changes nothing.

torch.compile on these CPUs takes tens of seconds per architecture when its cache is cold, so the compiled runs are
marked slow (they still run in CI); the static cache alone, through the same code, runs in the fast tests."""

import logging
from pathlib import Path

import pytest
import torch
from PIL import Image
from transformers import StaticCache

from r1_gui.generation import HFGenerator
from r1_gui.generation import compiled as compiled_generation
from r1_gui.generation.compiled import (
    check_cache_implementation,
    generation_compile_blocker,
    generation_compile_settings,
)

ARCHITECTURES = ["qwen2_vl", "qwen2_5_vl", "qwen3_vl"]


INSTRUCTIONS = ["go back", "open the Clock app", "scroll down to the settings", "tap the search bar"]


def rows(instructions=INSTRUCTIONS) -> list[dict]:
    """Four screenshots of different sizes and colours with different instructions: prompts of different lengths,
    so the batch is left-padded."""
    return [
        {"problem": text, "image": Image.new("RGB", (224 + 56 * i, 448), (60 * i, 120, 200 - 40 * i))}
        for i, text in enumerate(instructions)
    ]


def caches_seen(model) -> list[type]:
    """The type of the KV cache of every language-model pass of `model` from now on."""
    from r1_gui.seam.models import image_encoder

    seen: list[type] = []
    image_encoder(model).language_model.register_forward_pre_hook(
        lambda module, args, kwargs: seen.append(type(kwargs.get("past_key_values"))), with_kwargs=True
    )
    return seen


def static_cache_only(device_type: str) -> dict:
    """generation_compile_settings without the compilation: the static-cache half of the flag, cheap on CPU."""
    settings = generation_compile_settings(device_type)
    return {"cache_implementation": settings["cache_implementation"]}


def compiled_frames() -> int:
    from torch._dynamo.utils import counters

    return counters["stats"]["unique_graphs"]


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_static_cache_gives_the_dynamic_caches_greedy_answers(arch, request, monkeypatch):
    folder = request.getfixturevalue(f"tiny_{arch}")
    expected = HFGenerator(folder, device="cpu", max_new_tokens=12).generate(rows())
    monkeypatch.setattr(compiled_generation, "generation_compile_settings", static_cache_only)
    generator = HFGenerator(folder, device="cpu", max_new_tokens=12, generation_compile=True)
    seen = caches_seen(generator.model)
    assert generator.generate(rows()) == expected
    assert seen and set(seen) == {StaticCache}


@pytest.mark.slow
@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_compiled_decode_gives_the_dynamic_caches_greedy_answers(arch, request):
    folder = request.getfixturevalue(f"tiny_{arch}")
    other = [text + " and then wait for the page to load" for text in INSTRUCTIONS]  # longer prompts
    dynamic = HFGenerator(folder, device="cpu", max_new_tokens=12)
    expected = [dynamic.generate(rows()), dynamic.generate(rows(other))]
    generator = HFGenerator(folder, device="cpu", max_new_tokens=12, generation_compile=True)
    before = compiled_frames()
    assert generator.generate(rows()) == expected[0]
    compiled = compiled_frames()
    assert compiled > before  # the decode step was compiled, not run eagerly
    assert generator.generate(rows(other)) == expected[1]
    assert compiled_frames() == compiled  # a cache of the same bucket: no recompilation


def grpo_trainer(folder, dataset_path, output_dir, generation_compile: bool):
    """A GUIGRPOTrainer decoding greedily (so its completions can be compared across caches), dedupe on."""
    from transformers import AutoModelForImageTextToText
    from trl import GRPOConfig

    from r1_gui.gui_datasets import load_gui_dataset
    from r1_gui.processing import CHAT_TEMPLATE, load_processor, pixel_bounds
    from r1_gui.rewards import get_reward_funcs
    from r1_gui.training.data import add_model_columns
    from r1_gui.training.trainer import GUIGRPOTrainer

    processor = load_processor(folder, max_pixels=50176, chat_template=CHAT_TEMPLATE)
    dataset = add_model_columns(
        load_gui_dataset(dataset_path, "train"), "aguvis", "normalized", pixel_bounds(processor)
    )
    args = GRPOConfig(
        output_dir=str(output_dir),
        use_cpu=True,
        bf16=False,
        report_to="none",
        per_device_train_batch_size=8,
        num_generations=2,
        max_completion_length=8,
        beta=0.0,
        generation_kwargs={"do_sample": False},
        chat_template_kwargs={"generation_recipient": "all"},
    )
    model = AutoModelForImageTextToText.from_pretrained(folder)
    trainer = GUIGRPOTrainer(
        model=model,
        reward_funcs=get_reward_funcs(["accuracy"]),
        args=args,
        train_dataset=dataset,
        processing_class=processor,
        generation_compile=generation_compile,
    )
    return trainer, [dataset[i] for i in range(4) for _ in range(2)]


def test_grpo_generation_on_the_static_cache_gives_the_same_completions(
    tiny_qwen2_5_vl, synthetic_dataset, tmp_path, monkeypatch, caplog
):
    """The trainer's generation (prefilling each distinct prompt once, then copying the cache to its repeats) on the
    flag's static cache: the completions of the dynamic cache, and the copied cache stays a fixed-address one of the
    full batch (what a CUDA graph of the decode step needs)."""
    plain, batch = grpo_trainer(tiny_qwen2_5_vl, synthetic_dataset, tmp_path / "plain", generation_compile=False)
    expected = plain._generate_and_score_completions(batch)["completion_ids"]
    monkeypatch.setattr(compiled_generation, "generation_compile_settings", static_cache_only)
    with caplog.at_level(logging.INFO, logger="r1_gui.generation.compiled"):
        trainer, _ = grpo_trainer(tiny_qwen2_5_vl, synthetic_dataset, tmp_path / "static", generation_compile=True)
    assert "--generation_compile: training's generation runs on a static KV cache" in caplog.text
    assert trainer.generation_config.cache_implementation == "static"
    caches = []
    original = StaticCache.reorder_cache

    def record(cache, beam_idx):
        original(cache, beam_idx)
        caches.append(cache)

    monkeypatch.setattr(StaticCache, "reorder_cache", record)
    got = trainer._generate_and_score_completions(batch)["completion_ids"]
    assert torch.equal(got, expected)
    (cache,) = caches  # one prefill of the 4 distinct prompts, copied to the 8 rows
    for layer in cache.layers:
        assert layer.batch_size == layer.keys.shape[0] == len(batch)
        assert getattr(layer.keys, "_dynamo_static_input_type", None) is not None


@pytest.mark.parametrize(
    "prompt, new, length",
    [
        (1, 1, 256),  # the smallest cache is one bucket
        (128, 128, 256),  # exactly full
        (129, 128, 512),  # one token more: the next bucket
        (750, 128, 1024),  # a 3B GRPO prompt (592 image tokens) and 128 new tokens
    ],
)
def test_static_cache_lengths_come_in_buckets(prompt, new, length):
    assert compiled_generation.static_cache_length(prompt, new) == length


def test_the_trainer_compiles_generation_on_its_device(tiny_qwen2_vl, synthetic_dataset, tmp_path):
    trainer, _ = grpo_trainer(tiny_qwen2_vl, synthetic_dataset, tmp_path, generation_compile=True)
    config = trainer.generation_config
    assert (config.cache_implementation, config.disable_compile) == ("static", False)
    assert config.compile_config._compile_all_devices  # CPU: transformers compiles only on accelerators otherwise


class NotCompilable(torch.nn.Module):
    _can_compile_fullgraph = False


class Compilable(torch.nn.Module):
    _can_compile_fullgraph = True


class PeftWrapper(torch.nn.Module):
    def __init__(self, base):
        super().__init__()
        self.base = base

    def get_base_model(self):
        return self.base


@pytest.mark.parametrize(
    "model, settings, reason",
    [
        (Compilable(), {}, None),  # a model transformers marks compilable, plain generate: applies
        (PeftWrapper(Compilable()), {}, None),  # a LoRA model: its base model decides
        (NotCompilable(), {}, "does not mark NotCompilable as compilable"),
        (PeftWrapper(NotCompilable()), {}, "does not mark NotCompilable as compilable"),
        (Compilable(), {"sharded": "DeepSpeed ZeRO-3"}, "DeepSpeed ZeRO-3 gathers the sharded weights"),
        (Compilable(), {"backend": "vllm"}, "runs on vllm"),
    ],
)
def test_where_the_flag_cannot_apply_it_says_why(model, settings, reason):
    blocker = generation_compile_blocker(model, **settings)
    assert blocker == reason if reason is None else reason in blocker


def test_the_tiny_models_are_compilable(tiny_model):
    from transformers import AutoModelForImageTextToText

    assert generation_compile_blocker(AutoModelForImageTextToText.from_pretrained(tiny_model)) is None


def test_another_cache_implementation_is_refused_with_both_flags_named():
    from r1_gui.training.grpo import GUIGRPOConfig

    check_cache_implementation(None)
    check_cache_implementation("static")
    with pytest.raises(ValueError, match="--generation_compile.*--cache_implementation is 'dynamic'"):
        GUIGRPOConfig(output_dir="unused", use_cpu=True, generation_compile=True, cache_implementation="dynamic")


def test_the_evaluation_flag_reaches_the_config():
    import argparse

    from r1_gui.evaluation.config import EvalConfig
    from r1_gui.generation import add_backend_arguments

    parser = argparse.ArgumentParser()
    add_backend_arguments(parser)
    assert EvalConfig.from_args(parser.parse_args([])).generation_compile is False
    assert EvalConfig.from_args(parser.parse_args(["--generation_compile"])).generation_compile is True


@pytest.mark.slow
def test_multi_turn_turns_on_the_static_cache_give_the_same_episodes(tiny_qwen2_vl, tmp_path, monkeypatch):
    """The multi-turn trainer generates each turn through the parent's generation, so the flag reaches it: its
    greedy turns (batches that shrink as episodes end, contexts that grow) are the dynamic cache's."""
    import r1_gui.envs  # noqa: F401  (registers the environments)
    from r1_gui.grpo_gui import main
    from r1_gui.multi_turn.trainer import MultiTurnGRPOTrainer
    from r1_gui.training.grpo import parse_grpo_arguments

    recipe = Path(__file__).resolve().parents[1] / "local_scripts" / "tiny_cpu_phone_grpo.yaml"
    completions = []
    original = MultiTurnGRPOTrainer._generate_and_score_completions

    def recording(self, inputs):
        output = original(self, inputs)
        completions.append(output["completion_ids"].tolist())
        return output

    monkeypatch.setattr(MultiTurnGRPOTrainer, "_generate_and_score_completions", recording)
    monkeypatch.setattr(compiled_generation, "generation_compile_settings", static_cache_only)
    seen = []
    original_init = StaticCache.__init__

    def record_cache(cache, *args, **kwargs):
        seen.append(kwargs.get("max_cache_len"))
        original_init(cache, *args, **kwargs)

    monkeypatch.setattr(StaticCache, "__init__", record_cache)
    argv = ["--config", str(recipe), "--model_name_or_path", str(tiny_qwen2_vl), "--max_steps", "1"]
    argv += ["--max_turns", "2", "--max_turn_tokens", "8", "--generation_kwargs", '{"do_sample": false}']
    for flag in ("false", "true"):
        main(*parse_grpo_arguments([*argv, "--output_dir", str(tmp_path / flag), "--generation_compile", flag]))
    dynamic, static = completions
    assert static == dynamic
    assert seen and all(length % compiled_generation.CACHE_BUCKET == 0 for length in seen)  # one cache a turn
