"""Repeated prompts: GRPO's generation-and-scoring step with and without processing, encoding and prefilling each
distinct prompt once (`--dedupe_images`).

    python bench/repeated_images.py [--size small] [--prompts 16] [--generations 8] [--repeats 3]

The demo's generation batch (its synthetic screens and short system prompt, aguvis prompts, `--prompts` x
`--generations` completions of up to 48 tokens from a random local model): `GUIGRPOTrainer._generate_and_score_
completions` (tokenize the prompts with their screenshots, generate, score, build the training inputs) is timed with
the dedupe off and on, alternating which goes first, each side from the same seed, median of `--repeats`. Every
output tensor of the two sides must be equal (the dedupe hands back the same tensors; the prefill on fewer rows
could round differently on other backends, which this line would show). Prints a table and one JSON
line with "ratio" (on / off seconds), the image processor's work ("processed" of "requested" images per step) and
"outputs_equal". Target: ratio <= 0.85 on the demo batch.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from unittest import mock

from demo_batch import add_batch_arguments, demo_trainer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_batch_arguments(parser, "timed steps per side")
    args = parser.parse_args()

    import torch

    from r1_gui.training.repeated_prompts import ImageProcessorCache

    caches: list[ImageProcessorCache] = []
    original_init = ImageProcessorCache.__init__

    def record(self, inner):
        original_init(self, inner)
        caches.append(self)

    with tempfile.TemporaryDirectory() as tmp:
        trainer, rows = demo_trainer(Path(tmp), args.size, args.prompts, args.generations)

        def step(dedupe: bool) -> tuple[float, dict]:
            trainer.dedupe_images = dedupe
            torch.manual_seed(0)
            start = time.perf_counter()
            with mock.patch.object(ImageProcessorCache, "__init__", record):
                output = trainer._generate_and_score_completions(rows)
            return time.perf_counter() - start, output

        step(True)  # warm-up: first-call allocations and lazy imports
        times, outputs = {False: [], True: []}, {}
        for repeat in range(args.repeats):
            for dedupe in (False, True) if repeat % 2 == 0 else (True, False):
                seconds, outputs[dedupe] = step(dedupe)
                times[dedupe].append(seconds)
    equal = all(
        torch.equal(value, outputs[True][key])
        for key, value in outputs[False].items()
        if isinstance(value, torch.Tensor)
    )
    off, on = statistics.median(times[False]), statistics.median(times[True])
    cache = caches[-1]
    print(
        f"generate and score {args.prompts} x {args.generations} completions ({args.size} model), median of {args.repeats}"
    )
    print(f"{'dedupe off s':>12} {'dedupe on s':>12} {'ratio':>7} {'images processed':>17} {'outputs equal':>14}")
    print(f"{off:>12.3f} {on:>12.3f} {on / off:>7.3f} {f'{cache.processed} of {cache.requested}':>17} {equal!s:>14}")
    summary = {
        "benchmark": "repeated_images",
        "size": args.size,
        "batch": f"{args.prompts}x{args.generations}",
        "off_s": round(off, 3),
        "on_s": round(on, 3),
        "ratio": round(on / off, 3),
        "processed": cache.processed,
        "requested": cache.requested,
        "outputs_equal": equal,
        "target_ratio": 0.85,
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
