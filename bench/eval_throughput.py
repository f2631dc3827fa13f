"""Evaluation throughput: eval/test_aitw.py's generation at batch size 16 vs 1, on the tiny model and synthetic screens.

    python bench/eval_throughput.py [--samples 64] [--repeats 3] [--max_new_tokens 48]

One tiny random Qwen2-VL model (r1_gui.tiny) and one HFGenerator (greedy, CPU, float32) serve both batch sizes, so
only the batching differs. Each repeat runs generate_records() (the function the CLI runs: open each screenshot,
generate, score, append to predictions.jsonl) over the same synthetic test rows at batch size 1, then 16, or
16 then 1 on odd repeats, so machine noise hits both alike. A random model rarely emits its stop token, so every
sample generates max_new_tokens tokens at both batch sizes; the table shows the tokens actually generated.
Prints a table, then one JSON line with "speedup" (samples/s at 16 over samples/s at 1, medians). Target: >= 3.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

SYSTEM_PROMPT = "You are a GUI agent. Output the next action."


def prepare(folder: Path, episodes: int) -> tuple[Path, Path]:
    """A tiny model and a synthetic builder dataset with a test split."""
    from r1_gui.builder import build
    from r1_gui.synthetic import generate
    from r1_gui.tiny import build_tiny_model

    generate(folder / "raw", episodes, seed=0, width=224, height=448, progress=False)
    build(
        [folder / "raw" / "synthetic-l1.json"],
        folder / "raw" / "images",
        folder / "data",
        test_size=0.5,
        progress=False,
    )
    return build_tiny_model(folder / "model", "qwen2_vl", "tiny"), folder / "data"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=64, help="test rows generated per run")
    parser.add_argument("--repeats", type=int, default=3, help="runs per batch size (medians are reported)")
    parser.add_argument("--batch_size", type=int, default=16)
    parser.add_argument("--max_new_tokens", type=int, default=48)
    args = parser.parse_args()

    from r1_gui.evaluation.run.predictions_file import read_records
    from r1_gui.evaluation.steps.runner import generate_records
    from r1_gui.evaluation.steps.samples import as_rows, load_samples
    from r1_gui.generation import HFGenerator
    from r1_gui.gui_datasets import load_gui_dataset

    sizes = (1, args.batch_size)
    speeds: dict[int, list[float]] = {size: [] for size in sizes}
    tokens: dict[int, list[int]] = {size: [] for size in sizes}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        model, data = prepare(folder, episodes=max(8, args.samples))
        rows = as_rows(load_gui_dataset(data, split="test"))
        samples = load_samples(rows, max_samples=args.samples)
        if len(samples) < args.samples:
            raise SystemExit(f"the synthetic test split has only {len(samples)} rows; lower --samples")
        generator = HFGenerator(
            model,
            prompt_style="aguvis",
            system_prompt=SYSTEM_PROMPT,
            max_new_tokens=args.max_new_tokens,
            max_pixels=50176,
            device="cpu",
            dtype="float32",
        )
        generate_records(generator, rows, samples[: args.batch_size], folder / "warmup.jsonl", args.batch_size)
        tokenizer = generator.processor.tokenizer
        for repeat in range(args.repeats):
            for size in sizes if repeat % 2 == 0 else reversed(sizes):
                path = folder / f"predictions-bs{size}-{repeat}.jsonl"
                speeds[size].append(generate_records(generator, rows, samples, path, size))
                outputs = [record.get("output") or "" for record in read_records(path)]
                tokens[size].append(sum(len(tokenizer(text)["input_ids"]) for text in outputs))

    median = {size: statistics.median(values) for size, values in speeds.items()}
    print(f"{'batch':>6} {'repeat':>7} {'samples/s':>10} {'tokens':>8}")
    for size in sizes:
        for repeat, (speed, count) in enumerate(zip(speeds[size], tokens[size], strict=True)):
            print(f"{size:>6} {repeat:>7} {speed:>10.2f} {count:>8}")
    speedup = median[args.batch_size] / median[1]
    print(
        f"{args.samples} samples per run; median samples/s: bs1 {median[1]:.2f}, bs{args.batch_size} "
        f"{median[args.batch_size]:.2f}; speedup {speedup:.2f}x"
    )
    result = {
        "benchmark": "eval_throughput",
        "samples": args.samples,
        "max_new_tokens": args.max_new_tokens,
        "samples_per_s_bs1": round(median[1], 3),
        f"samples_per_s_bs{args.batch_size}": round(median[args.batch_size], 3),
        "speedup": round(speedup, 2),
        "target_speedup": 3,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
