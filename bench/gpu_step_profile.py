"""GPU step profile: GUIGRPOTrainer against plain trl.GRPOTrainer, one GRPO step split into its phases.

    python bench/gpu_step_profile.py                                   # CUDA: Qwen2.5-VL-3B shape, bf16, 1 x 8
    python bench/gpu_step_profile.py --prompts 8                       # CUDA: the issue's 8 screenshots x 8 answers
    python bench/gpu_step_profile.py --device cpu                      # CPU: tiny shape, 55 image tokens, 4 x 32
    python bench/gpu_step_profile.py --trainer ours --steps 4          # one side only
    python bench/gpu_step_profile.py --vision_attention model          # ours without batched vision windows
    python bench/gpu_step_profile.py --cache_implementation static     # both sides with trl's static KV cache
    python bench/gpu_step_profile.py --shape qwen3vl_8b                # CUDA: Qwen3-VL-8B shape (needs ~80 GB, below)
    python bench/gpu_step_profile.py --device cpu --shape tiny_qwen3vl # CPU: the Qwen3-VL path on a tiny shape

Both trainers get the same model (Qwen2.5-VL-3B-Instruct's shape, built locally from a config with the same seed,
random weights, no download), data (AITW-sized 1080x2400 synthetic phone screens at max_pixels 501760: 448x1036,
592 image tokens; 50176 and 55 tokens on CPU), aguvis prompts with a left-padding processor, GRPOConfig, rewards and HF generate (no vLLM).
`--shape qwen3vl_8b` is Qwen3-VL-8B-Instruct's shape instead (8.77 B parameters; 32-pixel image tokens, so 448x1024
and 448 tokens at 501760; its mobile_use prompts on the 999 grid). Its bf16 weights, gradients and AdamW states
are 8 bytes a parameter, 65 GiB before activations: on an 80 GB GPU keep the batch small (the default 1 x 8
answers of 128 tokens), or run it on a larger GPU.
A batch is `--prompts` screenshots x `--num_generations` answers, one micro-batch. Every answer runs to
`--max_completion_length` tokens: the stop tokens of both trainers (`<|im_end|>`, `<|diff_marker|>`) are suppressed,
so both generate the same number of tokens.

The reward has spread: besides accuracy and format (0 for random weights), `spread_reward` gives each answer a
deterministic score in [0, 1) from a CRC32 of its text, so the answers of a group (different texts) score
differently and every group has signal. Random weights otherwise earn the same reward for every answer, which makes
the loss zero and lets GUIGRPOTrainer skip the loss pass (`--skip_no_signal`): an unfair comparison and not what a
learning model does.

The runs are interleaved: `--rounds` rounds of ours, plain then plain, ours (ABBA), each run in a fresh process
with `--warmup` warm-up steps then `--steps` measured steps; medians over every measured step of a side. Phases:
generation (`_generate`), reward scoring, log-prob (the loss pass's forward, `_get_per_token_logps_and_entropies`),
backward, other (image processing, tokenization, advantages, optimizer step). Peak memory is the GPU's
`max_memory_allocated` on CUDA, the process's peak RSS on CPU. Without CUDA (and without --device cpu) it says so
and exits 0. Prints a table, then one JSON line.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import tempfile
import time
import zlib
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

from child_process import receive, start

from r1_gui.tiny import SIZES, ModelSize, build_config, build_processor, build_tokenizer
from r1_gui.vision_attention import VISION_ATTENTION_CHOICES

TOKENIZER_VOCAB = 1024  # the local BPE tokenizer's size (special tokens come on top)
SCREEN = (1080, 2400)  # an AITW phone screenshot (width, height)
KINDS = ("ours", "plain")
PHASES = ("generation", "reward_scoring", "log_prob", "backward", "other")
TIMED_METHODS = {"_generate": "generation", "_calculate_rewards": "reward_scoring"}
TIMED_METHODS["_get_per_token_logps_and_entropies"] = "log_prob"

# Qwen/Qwen2.5-VL-3B-Instruct's and Qwen/Qwen3-VL-8B-Instruct's config.json shapes, as the tiny-model builder's
# ModelSize plus the fields it does not carry: (architecture, size, text overrides, vision overrides). "tiny" and
# "tiny_qwen3vl" are r1_gui.tiny's own tiny size.
SHAPES = {
    "3b": (
        "qwen2_5_vl",
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
        {"vocab_size": 151936, "tie_word_embeddings": True},  # the 3B ties its embeddings and lm_head
        {"intermediate_size": 3420, "fullatt_block_indexes": [7, 15, 23, 31]},
    ),
    "qwen3vl_8b": (
        "qwen3_vl",
        ModelSize(
            hidden=4096,
            intermediate=12288,
            layers=36,
            heads=32,
            kv_heads=8,
            vision_dim=1152,
            vision_depth=27,
            vision_heads=16,
            vocab=TOKENIZER_VOCAB,
        ),  # head_dim 128: r1_gui.tiny gives it the interleaved rotary sections [24, 20, 20]
        {"vocab_size": 151936},
        {"intermediate_size": 4304, "num_position_embeddings": 2304, "deepstack_visual_indexes": [8, 16, 24]},
    ),
    "tiny": ("qwen2_5_vl", replace(SIZES["tiny"], vocab=TOKENIZER_VOCAB), {}, {}),
    "tiny_qwen3vl": ("qwen3_vl", replace(SIZES["tiny"], vocab=TOKENIZER_VOCAB), {}, {}),
}
# How each architecture is asked in the profile: its own GUI format (prompt style, coordinates)
ASKED = {"qwen2_5_vl": ("aguvis", "pixels"), "qwen3_vl": ("mobile_use", "grid999")}


def build_model(folder: Path, shape: str, dtype, device: str, max_pixels: int, attn_implementation: str = "sdpa"):
    """A random model of the given shape, created on `device`, and its processor (saved in `folder` with the config;
    the weights are not written: 7-17 GB of random numbers would only cost time)."""
    import torch
    from transformers import AutoModelForImageTextToText

    from r1_gui.processing import CHAT_TEMPLATE

    arch, size, text, vision = SHAPES[shape]
    tokenizer = build_tokenizer(size.vocab, CHAT_TEMPLATE)
    # The real vocabulary (151936 rows) is kept for the compute and memory it costs; the ids the tokenizer lacks are
    # suppressed during generation (see main), so every sampled token decodes.
    text = {**text, "vocab_size": max(text.get("vocab_size", 0), len(tokenizer)), "max_position_embeddings": 32768}
    config = build_config(arch, size, tokenizer, text_overrides=text, vision_overrides=vision)
    config.tie_word_embeddings = text.get("tie_word_embeddings", False)
    torch.manual_seed(0)
    with torch.device(device):
        model = AutoModelForImageTextToText.from_config(config, dtype=dtype, attn_implementation=attn_implementation)
    config.save_pretrained(folder)
    build_processor(arch, tokenizer, 3136, max_pixels).save_pretrained(folder)
    return model


def spread_reward(completions, **kwargs) -> list[float]:
    """A deterministic score in [0, 1) per answer text (CRC32 / 2**32): answers that differ score differently, so
    every group of random-weight answers has signal and the loss pass runs on every row, as when a model learns."""
    from r1_gui.actions import completion_text

    return [zlib.crc32(completion_text(c).encode()) / 2**32 for c in completions]


def schedule(trainers: list[str], rounds: int) -> list[str]:
    """The run order: ABBA rounds when both sides run, so drift over time hits both alike."""
    order = []
    for round_index in range(rounds):
        order += trainers if round_index % 2 == 0 else trainers[::-1]
    return order


def timed(owner, name: str, phase: str, phases: dict, sync) -> None:
    """Wrap owner.<name> to add its wall time (device-synchronized) to phases[phase] for the current step."""
    original = getattr(owner, name)

    def wrapper(*args, **kwargs):
        sync()
        start = time.perf_counter()
        result = original(*args, **kwargs)
        sync()
        phases[phase] += time.perf_counter() - start
        return result

    setattr(owner, name, wrapper)


def run_trainer(kind: str, args: argparse.Namespace, data_dir: str, folder: str, conn) -> None:
    """One run in a child process: build the model, train warm-up + measured steps, send each step's phases."""
    import torch
    from transformers import TrainerCallback
    from transformers.trainer_callback import PrinterCallback, ProgressCallback
    from trl import GRPOConfig, GRPOTrainer

    from r1_gui.gui_datasets import load_gui_dataset
    from r1_gui.processing import load_processor, pixel_bounds, resize_factor
    from r1_gui.prompts import chat_template_kwargs
    from r1_gui.rewards import get_reward_funcs
    from r1_gui.training.data import add_model_columns
    from r1_gui.training.trainer import GUIGRPOTrainer

    cuda = args.device == "cuda"
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    folder = Path(folder)
    dtype = torch.bfloat16 if cuda else torch.float32
    model = build_model(folder / "model", args.shape, dtype, args.device, args.max_pixels)
    processor = load_processor(folder / "model", max_pixels=args.max_pixels, padding_side="left")
    style, coordinates = ASKED[SHAPES[args.shape][0]]
    rows = load_gui_dataset(data_dir, "train")
    dataset = add_model_columns(rows, style, coordinates, pixel_bounds(processor), factor=resize_factor(processor))
    tokenizer = processor.tokenizer
    stops = tokenizer.convert_tokens_to_ids(["<|im_end|>", "<|diff_marker|>"])
    # a sampled image-pad token would break the forward pass; ids beyond the tokenizer would not decode
    unused = range(len(tokenizer), model.config.text_config.vocab_size)
    suppressed = [model.config.image_token_id, *stops, *unused]
    config = GRPOConfig(
        output_dir=str(folder / "out"),
        max_steps=args.warmup + args.steps,
        per_device_train_batch_size=args.prompts * args.num_generations,
        num_generations=args.num_generations,
        max_completion_length=args.max_completion_length,
        learning_rate=1e-6,
        beta=0.0,
        loss_type="dapo",
        bf16=cuda,
        activation_checkpointing=cuda,
        use_cpu=not cuda,
        report_to="none",
        logging_steps=1,
        save_strategy="no",
        seed=0,
        data_seed=0,
        chat_template_kwargs=chat_template_kwargs(style),
        generation_kwargs={"suppress_tokens": suppressed},
        cache_implementation=args.cache_implementation,
    )
    rewards = [*get_reward_funcs(["accuracy", "format"], coordinates=coordinates, prompt_style=style), spread_reward]
    common = dict(model=model, reward_funcs=rewards, args=config, train_dataset=dataset, processing_class=processor)
    if kind == "ours":
        from r1_gui.vision_attention import apply_vision_attention

        apply_vision_attention(model, args.vision_attention, args.device)  # as grpo_gui.py's flag applies it
        trainer = GUIGRPOTrainer(**common, prompt_style=style, coordinates=coordinates, completions_table_steps=0)
    else:
        trainer = GRPOTrainer(**common)
    for quiet in (PrinterCallback, ProgressCallback):  # the table says it all
        trainer.remove_callback(quiet)
    phases = defaultdict(float)
    steps = []
    for name, phase in TIMED_METHODS.items():
        timed(trainer, name, phase, phases, sync)
    timed(trainer.accelerator, "backward", "backward", phases, sync)

    class StepClock(TrainerCallback):
        def on_step_begin(self, *unused, **kwargs):
            phases.clear()
            if cuda:
                torch.cuda.reset_peak_memory_stats()
            sync()
            self.start = time.perf_counter()

        def on_step_end(self, *unused, **kwargs):
            sync()
            total = time.perf_counter() - self.start
            mean_length = trainer._metrics["train"]["completions/mean_length"][-1]
            steps.append(
                {
                    "total": total,
                    **phases,
                    "tokens": mean_length * args.prompts * args.num_generations,
                    "peak_gib": torch.cuda.max_memory_allocated() / 2**30 if cuda else None,
                }
            )

    trainer.add_callback(StepClock())
    trainer.train()
    rss_gib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    conn.send({"steps": steps[args.warmup :], "rss_gib": rss_gib})


def summarize(steps: list[dict]) -> dict:
    """Median seconds per phase and total, generated tokens/s and peak memory over a side's measured steps."""

    def median(key):
        return statistics.median(step.get(key, 0.0) for step in steps)

    split = {phase: median(phase) for phase in PHASES if phase != "other"}
    total = median("total")
    split["other"] = max(0.0, total - sum(split.values()))
    return {
        **split,
        "total": total,
        "steps": [round(step["total"], 3) for step in steps],
        "tokens_per_s": statistics.median(step["tokens"] / step["generation"] for step in steps),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--shape", choices=tuple(SHAPES), default=None, help="3b on cuda, tiny on cpu by default")
    parser.add_argument("--trainer", choices=(*KINDS, "both"), default="both", help="ours, plain trl, or both (A/B)")
    parser.add_argument("--prompts", type=int, default=1, help="screenshots per step (each answered num_generations)")
    parser.add_argument("--num_generations", type=int, default=None, help="8 on cuda, 4 on cpu by default")
    parser.add_argument("--max_completion_length", type=int, default=None, help="128 on cuda, 32 on cpu by default")
    parser.add_argument("--max_pixels", type=int, default=None, help="501760 on cuda, 50176 on cpu by default")
    parser.add_argument("--steps", type=int, default=3, help="measured steps per run (after warm-up)")
    parser.add_argument("--warmup", type=int, default=1, help="steps per run left out of the medians")
    parser.add_argument("--rounds", type=int, default=2, help="runs per side, interleaved ABBA")
    parser.add_argument(
        "--vision_attention",
        choices=VISION_ATTENTION_CHOICES,
        default="auto",
        help="ours only, as grpo_gui.py's flag: auto (batched windows on CUDA), batched_windows, model",
    )
    parser.add_argument(
        "--cache_implementation", default=None, help="both sides: trl's --cache_implementation (e.g. static)"
    )
    args = parser.parse_args()
    args.shape = args.shape or ("3b" if args.device == "cuda" else "tiny")
    cuda = args.device == "cuda"
    args.num_generations = args.num_generations or (8 if cuda else 4)
    args.max_completion_length = args.max_completion_length or (128 if cuda else 32)
    args.max_pixels = args.max_pixels or (501760 if cuda else 50176)

    import torch

    if cuda and not torch.cuda.is_available():
        print("CUDA is not available on this machine: nothing to profile (run on a GPU, or --device cpu)")
        print(json.dumps({"benchmark": "gpu_step_profile", "skipped": True, "reason": "no CUDA"}))
        return

    from r1_gui.actions.coords import smart_resize
    from r1_gui.builder import build
    from r1_gui.synthetic import generate

    trainers = list(KINDS) if args.trainer == "both" else [args.trainer]
    measured = {kind: [] for kind in trainers}
    peaks = {kind: 0.0 for kind in trainers}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        records = max(8, args.prompts * (args.warmup + args.steps))
        generate(tmp / "raw", records=records, seed=0, width=SCREEN[0], height=SCREEN[1], progress=False)
        build([tmp / "raw" / "synthetic-l1.json"], tmp / "raw" / "images", tmp / "data", test_size=0, progress=False)
        for run_index, kind in enumerate(schedule(trainers, args.rounds)):
            run_folder = str(tmp / f"run{run_index}-{kind}")
            process, conn = start(run_trainer, kind, args, str(tmp / "data"), run_folder)
            result = receive(process, conn, f"run {run_index + 1} ({kind})")
            process.join()
            measured[kind] += result["steps"]
            gpu_peaks = [step["peak_gib"] for step in result["steps"] if step["peak_gib"] is not None]
            peaks[kind] = max(peaks[kind], max(gpu_peaks) if gpu_peaks else result["rss_gib"])

    summary = {kind: summarize(measured[kind]) for kind in trainers}
    from r1_gui.processing import resize_factor
    from r1_gui.tiny import build_image_processor

    factor = resize_factor(build_image_processor(SHAPES[args.shape][0], 3136, args.max_pixels))
    height, width = smart_resize(SCREEN[1], SCREEN[0], factor=factor, min_pixels=3136, max_pixels=args.max_pixels)
    image_tokens = height * width // factor**2
    device_name = torch.cuda.get_device_name() if args.device == "cuda" else "cpu"
    batch = f"{args.prompts} x {args.num_generations} answers of {args.max_completion_length} tokens"
    batch += f", {image_tokens} image tokens"
    print(f"{args.shape} model on {device_name}, {batch}, {args.rounds} runs x {args.steps} steps per side")
    print(
        f"{'phase':<16}"
        + "".join(f"{kind + ' s':>10}" for kind in trainers)
        + ("   ours/plain" if len(trainers) == 2 else "")
    )
    for phase in (*PHASES, "total"):
        row = f"{phase:<16}" + "".join(f"{summary[kind][phase]:>10.3f}" for kind in trainers)
        if len(trainers) == 2:
            plain = summary["plain"][phase]
            row += f"{summary['ours'][phase] / plain:>13.3f}" if plain > 0 else f"{'-':>13}"
        print(row)
    memory = "peak GPU memory GiB" if args.device == "cuda" else "peak RSS GiB"
    print(f"{'tokens/s':<16}" + "".join(f"{summary[kind]['tokens_per_s']:>10.0f}" for kind in trainers))
    print(f"{memory:<16}" + "".join(f"{peaks[kind]:>10.2f}" for kind in trainers))
    result = {
        "benchmark": "gpu_step_profile",
        "device": device_name,
        "shape": args.shape,
        "prompts": args.prompts,
        "num_generations": args.num_generations,
        "max_completion_length": args.max_completion_length,
        "image_tokens": image_tokens,
        "runs_per_side": args.rounds,
        "vision_attention": args.vision_attention,
        "cache_implementation": args.cache_implementation,
        "measured_steps_per_side": args.rounds * args.steps,
        **{
            kind: {
                **{f"{key}_s": round(value, 3) for key, value in summary[kind].items() if key in (*PHASES, "total")},
                "step_s": summary[kind]["steps"],
                "generated_tokens_per_s": round(summary[kind]["tokens_per_s"], 1),
                "peak_memory_gib": round(peaks[kind], 2),
            }
            for kind in trainers
        },
    }
    if len(trainers) == 2:
        result["ratio_ours_plain"] = {
            key: round(summary["ours"][key] / summary["plain"][key], 3)
            for key in (*PHASES, "total")
            if summary["plain"][key] > 0
        }
    print(json.dumps(result))


if __name__ == "__main__":
    sys.exit(main())
