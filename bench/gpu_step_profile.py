"""GPU step profile: GUIGRPOTrainer against plain trl.GRPOTrainer, one GRPO step split into its phases.

    python bench/gpu_step_profile.py                                   # CUDA: Qwen2.5-VL-3B shape, bf16, 1 x 8
    python bench/gpu_step_profile.py --prompts 8                       # CUDA: the issue's 8 screenshots x 8 answers
    python bench/gpu_step_profile.py --device cpu                      # CPU: tiny shape, 55 image tokens, 4 x 32
    python bench/gpu_step_profile.py --trainer ours --steps 4          # one side only
    python bench/gpu_step_profile.py --vision_attention model          # ours without batched vision windows
    python bench/gpu_step_profile.py --cache_implementation static     # both sides with trl's static KV cache
    python bench/gpu_step_profile.py --generation_compile              # both: static cache and a compiled decode
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

Each side's process says what it is doing as it goes: a line when each phase begins, with the seconds since the
process began (`[ours +31.2 s] step 1: generation: decode`; generation is split at the prefill, where a static cache
is allocated, and the decode, whose first step is where `--generation_compile` compiles), a `still in` line while a
phase runs past `--heartbeat` seconds (with the main thread's innermost frames once past `--stack_after`), and a JSON
line per finished step (`gpu_step_profile step {...}`, warm-up steps included and flagged) and per finished side
(`gpu_step_profile side {...}`), so a run stopped from outside keeps everything that finished (bench/gpu_kit.py).
The table adds each side's time to its first step: seconds from its process's start until the model was built and
until step 1 began, and the first step's own time. On CUDA each step also records the caching allocator's retries
(`num_alloc_retries`: a step near the memory limit slows down without failing) and the graphs torch.compile built.
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
from phase_log import PhaseLog

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


def timed(owner, name: str, phase: str, phases: dict, sync, announce=None) -> None:
    """Wrap owner.<name> to add its wall time (device-synchronized) to phases[phase] for the current step;
    `announce(phase)`, if given, is called as it begins."""
    original = getattr(owner, name)

    def wrapper(*args, **kwargs):
        sync()
        if announce:
            announce(phase)
        start = time.perf_counter()
        result = original(*args, **kwargs)
        sync()
        phases[phase] += time.perf_counter() - start
        return result

    setattr(owner, name, wrapper)


def compile_plain_generation(trainer, device: str) -> None:
    """Plain trl's generation with ours' --generation_compile settings and static cache sizes (in buckets, so that
    both sides compile the decode step as often): what a plain trl user would set on trl's GenerationConfig."""
    from r1_gui.generation.compiled import generation_compile_settings, static_cache_length

    for name, value in generation_compile_settings(device).items():
        setattr(trainer.generation_config, name, value)
    generate = trainer._generate_single_turn

    def sized(prompt_ids, *args, **kwargs):
        longest = max(len(ids) for ids in prompt_ids)
        trainer.generation_config.max_cache_len = static_cache_length(longest, trainer.max_completion_length)
        return generate(prompt_ids, *args, **kwargs)

    trainer._generate_single_turn = sized


def cuda_memory_now() -> str:
    import torch

    return f"GPU memory allocated {torch.cuda.memory_allocated() / 2**30:.1f} GiB"


def compiled_graphs() -> int:
    """Graphs torch.compile has built in this process so far (the decode step's, with --generation_compile)."""
    from torch._dynamo.utils import counters

    return int(counters["stats"]["unique_graphs"])


def run_trainer(kind: str, args: argparse.Namespace, data_dir: str, folder: str, conn) -> None:
    """One run in a child process: build the model, train warm-up + measured steps, send each step's phases. Prints
    when each phase begins (seconds since the process began) and, while one runs long, heartbeats (`PhaseLog`)."""
    log = PhaseLog(kind, memory=cuda_memory_now if args.device == "cuda" else None)
    log.begin("process started")
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
    log.begin("imports done; building the model")
    model = build_model(folder / "model", args.shape, dtype, args.device, args.max_pixels)
    sync()
    log.begin("model built; building the trainer")
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
        cache_implementation="static" if args.generation_compile else args.cache_implementation,
    )
    rewards = [*get_reward_funcs(["accuracy", "format"], coordinates=coordinates, prompt_style=style), spread_reward]
    common = dict(model=model, reward_funcs=rewards, args=config, train_dataset=dataset, processing_class=processor)
    if kind == "ours":
        from r1_gui.vision_attention import apply_vision_attention

        apply_vision_attention(model, args.vision_attention, args.device)  # as grpo_gui.py's flag applies it
        trainer = GUIGRPOTrainer(
            **common,
            prompt_style=style,
            coordinates=coordinates,
            completions_table_steps=0,
            generation_compile=args.generation_compile,
        )
    else:
        trainer = GRPOTrainer(**common)
        if args.generation_compile:  # what a plain trl user would set: trl builds it with disable_compile=True
            compile_plain_generation(trainer, args.device)
    for quiet in (PrinterCallback, ProgressCallback):  # the table says it all
        trainer.remove_callback(quiet)
    phases = defaultdict(float)
    steps = []
    step_index = [0]

    def announce(phase: str) -> None:
        log.begin(f"step {step_index[0]}: {phase}")

    for name, phase in TIMED_METHODS.items():
        timed(trainer, name, phase, phases, sync, announce)
    timed(trainer.accelerator, "backward", "backward", phases, sync, announce)
    # generation's prefill apart from its decode: the static cache is allocated in the prefill's first layer, and
    # a compiled decode step is compiled on the first decode step
    generator = next(m for m in trainer.model.modules() if callable(getattr(m, "_prefill", None)))
    prefill = generator._prefill

    def timed_prefill(*args, **kwargs):
        announce("generation: prefill")
        start = time.perf_counter()
        output = prefill(*args, **kwargs)
        sync()
        phases["prefill"] += time.perf_counter() - start
        announce("generation: decode")
        return output

    generator._prefill = timed_prefill

    class StepClock(TrainerCallback):
        def on_step_begin(self, *unused, **kwargs):
            phases.clear()
            step_index[0] += 1
            if cuda:
                torch.cuda.reset_peak_memory_stats()
            sync()
            announce("begins")
            self.start = time.perf_counter()

        def on_step_end(self, *unused, **kwargs):
            sync()
            total = time.perf_counter() - self.start
            mean_length = trainer._metrics["train"]["completions/mean_length"][-1]
            step = {
                "total": total,
                **phases,
                "tokens": mean_length * args.prompts * args.num_generations,
                "peak_gib": torch.cuda.max_memory_allocated() / 2**30 if cuda else None,
                # the caching allocator's retries after a failed cudaMalloc (freeing its cache, synchronizing):
                # a step near the memory limit slows down without failing
                "alloc_retries": torch.cuda.memory_stats().get("num_alloc_retries", 0) if cuda else None,
                "compiled_graphs": compiled_graphs(),
                "warmup": step_index[0] <= args.warmup,
            }
            steps.append(step)
            announce(f"ends ({total:.1f} s)")
            print(step_line(kind, step_index[0], step, log.marks), flush=True)

    trainer.add_callback(StepClock())
    log.begin("trainer built; training")
    with log.heartbeats(args.heartbeat, stack_after=args.stack_after):
        trainer.train()
    log.begin("trained")
    rss_gib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    startup = {
        "model_built_s": log.marks["model built; building the trainer"],
        "trainer_built_s": log.marks["trainer built; training"],
        "first_step_begins_s": log.marks.get("step 1: begins"),
        "first_step_s": round(steps[0]["total"], 3) if steps else None,
    }
    conn.send({"steps": steps, "rss_gib": rss_gib, "startup": startup})


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
        "prefill": median("prefill"),
        "steps": [round(step["total"], 3) for step in steps],
        "tokens_per_s": statistics.median(step["tokens"] / step["generation"] for step in steps),
    }


def rounded(record: dict) -> dict:
    return {key: (round(value, 3) if isinstance(value, float) else value) for key, value in record.items()}


def step_line(kind: str, index: int, step: dict, marks: dict) -> str:
    """One JSON line per step, printed by the side's process as the step ends (with when its phases first began):
    what a caller that stops the run partway (bench/gpu_kit.py's time limits) has of an unfinished side."""
    return "gpu_step_profile step " + json.dumps({"side": kind, "step": index, **rounded(step), "marks": marks})


def side_line(kind: str, run_index: int, result: dict) -> str:
    """One JSON line per finished run (a side's process), printed as soon as it ends: a caller that stops the
    benchmark later (bench/gpu_kit.py's time limits) still has every side that finished."""
    steps = [rounded(step) for step in result["steps"]]
    return "gpu_step_profile side " + json.dumps(
        {"side": kind, "run": run_index, "startup": result["startup"], "steps": steps, "rss_gib": result["rss_gib"]}
    )


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
    parser.add_argument(
        "--generation_compile",
        action="store_true",
        help="both sides: a static KV cache with a compiled decode step (ours: its --generation_compile; plain: the "
        "same settings on trl's GenerationConfig, which trl builds with disable_compile=True)",
    )
    parser.add_argument("--heartbeat", type=float, default=30.0, help="seconds between 'still in' lines; 0: none")
    parser.add_argument(
        "--stack_after", type=float, default=60.0, help="a phase running this long prints where it is, once"
    )
    args = parser.parse_args()
    if args.generation_compile and args.cache_implementation not in (None, "static"):
        parser.error("--generation_compile runs on the static cache: drop --cache_implementation")
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
    startups = {kind: [] for kind in trainers}
    retries = {kind: 0 for kind in trainers}
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
            print(side_line(kind, run_index + 1, result), flush=True)
            measured[kind] += [step for step in result["steps"] if not step["warmup"]]
            startups[kind].append(result["startup"])
            gpu_peaks = [step["peak_gib"] for step in result["steps"] if step["peak_gib"] is not None]
            peaks[kind] = max(peaks[kind], max(gpu_peaks) if gpu_peaks else result["rss_gib"])
            retries[kind] = max([retries[kind], *(step["alloc_retries"] or 0 for step in result["steps"])])

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
    print(f"{'  of it prefill':<16}" + "".join(f"{summary[kind]['prefill']:>10.3f}" for kind in trainers))
    print(f"{'tokens/s':<16}" + "".join(f"{summary[kind]['tokens_per_s']:>10.0f}" for kind in trainers))
    print(f"{memory:<16}" + "".join(f"{peaks[kind]:>10.2f}" for kind in trainers))
    first = {kind: startups[kind][0] for kind in trainers}  # each side's first run
    for label, key in (("model built", "model_built_s"), ("first step at", "first_step_begins_s")):
        print(f"{label + ' s':<16}" + "".join(f"{first[kind][key]:>10.1f}" for kind in trainers))
    print(f"{'first step s':<16}" + "".join(f"{first[kind]['first_step_s']:>10.1f}" for kind in trainers))
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
        "cache_implementation": "static" if args.generation_compile else args.cache_implementation,
        "generation_compile": args.generation_compile,
        "measured_steps_per_side": args.rounds * args.steps,
        **{
            kind: {
                **{
                    f"{key}_s": round(value, 3)
                    for key, value in summary[kind].items()
                    if key in (*PHASES, "total", "prefill")
                },
                "step_s": summary[kind]["steps"],
                "generated_tokens_per_s": round(summary[kind]["tokens_per_s"], 1),
                "peak_memory_gib": round(peaks[kind], 2),
                "startup": first[kind],
                "alloc_retries": retries[kind] if args.device == "cuda" else None,
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
