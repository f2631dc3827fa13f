"""GPU step profile: seconds per GRPO step split into generation, reward scoring, log-prob passes and backward.

    python bench/gpu_step_profile.py                      # CUDA: a random Qwen2.5-VL-3B-shaped model, bf16
    python bench/gpu_step_profile.py --device cpu --shape tiny --steps 2   # a smoke test of this script on CPU

The model has Qwen2.5-VL-3B-Instruct's shape (built locally from a config, random weights, no download), the
screenshot is an AITW-sized 1080x2400 synthetic phone screen at max_pixels 501760 (448x1036, 592 image tokens), the
prompt is the aguvis style with Aguvis's system prompt, 8 generations per prompt with HF generate (no vLLM). Random
weights rarely stop, so completions run to --max_completion_length: a worst case for generation. Without CUDA (and
without --device cpu) it says so and exits 0. Prints a table, then one JSON line.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

from r1_gui.tiny import SIZES, ModelSize, build_config, build_tokenizer

TOKENIZER_VOCAB = 1024  # the local BPE tokenizer's size (special tokens come on top)

# Qwen/Qwen2.5-VL-3B-Instruct's config.json shape, as the tiny-model builder's ModelSize plus the fields it does not
# carry: (size, text overrides, vision overrides). "tiny" is r1_gui.tiny's own tiny size.
SHAPES = {
    "3b": (
        ModelSize(
            hidden=2048,
            intermediate=11008,
            layers=36,
            heads=16,
            kv_heads=2,
            vision_dim=1280,
            vision_depth=32,
            vision_heads=16,
            vocab=TOKENIZER_VOCAB,
        ),
        {"vocab_size": 151936},
        {"intermediate_size": 3420, "fullatt_block_indexes": [7, 15, 23, 31]},
    ),
    "tiny": (replace(SIZES["tiny"], vocab=TOKENIZER_VOCAB), {}, {}),
}


def build_model(folder: Path, shape: str, dtype, device: str, attn_implementation: str = "sdpa"):
    """A random Qwen2.5-VL model of the given shape, created on `device`, and its processor (saved in `folder` with
    the config; the weights are not written: 7 GB of random numbers would only cost time)."""
    import torch
    from transformers import AutoModelForImageTextToText
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    from r1_gui.processing import CHAT_TEMPLATE, GUIVLProcessor

    size, text, vision = SHAPES[shape]
    tokenizer = build_tokenizer(size.vocab, CHAT_TEMPLATE)
    # The 3B vocabulary (151936 rows) is kept for the compute and memory it costs; the ids the tokenizer lacks are
    # suppressed during generation (see main), so every sampled token decodes.
    text = {**text, "vocab_size": max(text.get("vocab_size", 0), len(tokenizer)), "max_position_embeddings": 32768}
    config = build_config("qwen2_5_vl", size, tokenizer, text_overrides=text, vision_overrides=vision)
    torch.manual_seed(0)
    with torch.device(device):
        model = AutoModelForImageTextToText.from_config(config, dtype=dtype, attn_implementation=attn_implementation)
    config.save_pretrained(folder)
    processor = GUIVLProcessor(
        image_processor=Qwen2VLImageProcessorPil(size={"shortest_edge": 3136, "longest_edge": 501760}),
        tokenizer=tokenizer,
        chat_template=CHAT_TEMPLATE,
        model_type="qwen2_5_vl",
    )
    processor.save_pretrained(folder)
    return model


def timed(trainer, name: str, phases: dict, sync) -> None:
    """Wrap trainer.<name> to add its wall time (device-synchronized) to phases[name] for the current step."""
    original = getattr(trainer, name)

    def wrapper(*args, **kwargs):
        sync()
        start = time.perf_counter()
        result = original(*args, **kwargs)
        sync()
        phases[name] += time.perf_counter() - start
        return result

    setattr(trainer, name, wrapper)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--shape", choices=tuple(SHAPES), default="3b")
    parser.add_argument("--steps", type=int, default=4, help="measured steps")
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--num_generations", type=int, default=8)
    parser.add_argument("--max_completion_length", type=int, default=128)
    parser.add_argument("--attn_implementation", default="sdpa")
    args = parser.parse_args()

    import torch

    if args.device == "cuda" and not torch.cuda.is_available():
        print("CUDA is not available on this machine: nothing to profile (run on a GPU, or --device cpu)")
        print(json.dumps({"benchmark": "gpu_step_profile", "skipped": True, "reason": "no CUDA"}))
        return

    from transformers import TrainerCallback
    from trl import GRPOConfig

    from r1_gui.builder import build
    from r1_gui.data import add_model_columns, load_gui_dataset
    from r1_gui.processing import load_processor, pixel_bounds
    from r1_gui.prompts import chat_template_kwargs
    from r1_gui.rewards import get_reward_funcs
    from r1_gui.synthetic import generate
    from r1_gui.trainer import GUIGRPOTrainer

    cuda = args.device == "cuda"
    dtype = torch.bfloat16 if cuda else torch.float32
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    total_steps = args.warmup + args.steps
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        generate(tmp / "raw", max(4, total_steps), seed=0, width=1080, height=2400, progress=False)
        build([tmp / "raw" / "synthetic-l1.json"], tmp / "raw" / "images", tmp / "data", test_size=0, progress=False)
        model = build_model(tmp / "model", args.shape, dtype, args.device, args.attn_implementation)
        processor = load_processor(tmp / "model", max_pixels=501760)
        dataset = add_model_columns(
            load_gui_dataset(tmp / "data", "train"), "aguvis", "pixels", pixel_bounds(processor)
        )
        vocab_in_use = len(processor.tokenizer)
        # a sampled image-pad token would break the forward pass; ids beyond the tokenizer would not decode
        suppressed = [model.config.image_token_id, *range(vocab_in_use, model.config.text_config.vocab_size)]
        config = GRPOConfig(
            output_dir=str(tmp / "out"),
            max_steps=total_steps,
            per_device_train_batch_size=args.num_generations,  # one screenshot x num_generations per step
            num_generations=args.num_generations,
            max_completion_length=args.max_completion_length,
            learning_rate=1e-6,
            beta=0.0,
            bf16=cuda,
            gradient_checkpointing=cuda,
            use_cpu=not cuda,
            report_to="none",
            logging_steps=1,
            save_strategy="no",
            seed=0,
            chat_template_kwargs=chat_template_kwargs("aguvis"),
            generation_kwargs={"suppress_tokens": suppressed},
        )
        trainer = GUIGRPOTrainer(
            model=model,
            reward_funcs=get_reward_funcs(["accuracy", "format"], coordinates="pixels", prompt_style="aguvis"),
            args=config,
            train_dataset=dataset,
            processing_class=processor,
            prompt_style="aguvis",
            coordinates="pixels",
            completions_table_steps=0,
        )
        phases = defaultdict(float)
        steps, generated = [], []
        for name in ("_generate", "_calculate_rewards", "_get_per_token_logps_and_entropies"):
            timed(trainer, name, phases, sync)
        backward = trainer.accelerator.backward

        def timed_backward(loss, **kwargs):
            sync()
            start = time.perf_counter()
            backward(loss, **kwargs)
            sync()
            phases["backward"] += time.perf_counter() - start

        trainer.accelerator.backward = timed_backward

        class StepClock(TrainerCallback):
            def on_step_begin(self, *unused, **kwargs):
                phases.clear()
                if cuda:
                    torch.cuda.reset_peak_memory_stats()
                sync()
                self.start = time.perf_counter()

            def on_step_end(self, *unused, **kwargs):
                sync()
                steps.append({"total": time.perf_counter() - self.start, **phases})
                generated.append(trainer._metrics["train"]["completions/mean_length"][-1] * args.num_generations)

        trainer.add_callback(StepClock())
        trainer.train()
        peak_gb = torch.cuda.max_memory_allocated() / 2**30 if cuda else None

    measured = steps[args.warmup :]
    tokens = generated[args.warmup :]

    def median(key):
        return statistics.median(step.get(key, 0.0) for step in measured)

    split = {
        "generation": median("_generate"),
        "reward_scoring": median("_calculate_rewards"),
        "log_prob": median("_get_per_token_logps_and_entropies"),
        "backward": median("backward"),
    }
    total = median("total")
    split["other"] = max(0.0, total - sum(split.values()))
    tokens_per_s = statistics.median(t / step["_generate"] for t, step in zip(tokens, measured, strict=True))
    device_name = torch.cuda.get_device_name() if cuda else "cpu"
    print(f"{args.shape} model on {device_name}, {args.num_generations} generations of <= {args.max_completion_length}")
    print(f"{'phase':<16} {'s/step':>8} {'share':>7}")
    for phase, seconds in split.items():
        print(f"{phase:<16} {seconds:>8.3f} {seconds / total:>7.1%}")
    print(f"{'total':<16} {total:>8.3f}")
    print(f"generated tokens/s: {tokens_per_s:.0f}" + (f"; peak GPU memory {peak_gb:.1f} GiB" if cuda else ""))
    result = {
        "benchmark": "gpu_step_profile",
        "device": device_name,
        "shape": args.shape,
        "seconds_per_step": round(total, 3),
        **{f"{phase}_s": round(seconds, 3) for phase, seconds in split.items()},
        "generated_tokens_per_s": round(tokens_per_s, 1),
        "peak_gpu_memory_gib": round(peak_gb, 2) if peak_gb is not None else None,
        "num_generations": args.num_generations,
        "max_completion_length": args.max_completion_length,
        "image_tokens": 592,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    sys.exit(main())
