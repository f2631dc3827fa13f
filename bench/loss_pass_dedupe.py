"""Repeated screenshots in the loss pass: GRPO's log-prob forward and backward with the vision tower encoding every
copy of a screenshot (trl) or each distinct screenshot once (`--dedupe_images`, gradient summed over the copies).

    python bench/loss_pass_dedupe.py [--size small] [--prompts 16] [--generations 8] [--repeats 3]
    python bench/loss_pass_dedupe.py --micro_batches 4   # the pass in 4 micro-batches: rows or whole groups shuffled

The demo's batch shape (its synthetic screens at max_pixels 50176 and short system prompt, aguvis prompts,
`--prompts` x `--generations` completions of up to 48 tokens from a random local model): one generation, then
`GUIGRPOTrainer._compute_loss` plus backward timed with `dedupe_images` off and on, alternating which goes first,
median of `--repeats`. Every group is given signal (advantages spread within each group), so the whole batch goes
through the pass. Reports the ratio (on / off seconds), the images the vision tower encoded per pass and the largest
gradient difference relative to the largest gradient element (float32 summation order).

With `--micro_batches N` (a run's `--steps_per_generation N`) both sides have dedupe on and run the pass as N
micro-batches, the gradient summed over them; they differ in how the batch is shuffled before it is split: row by
row (trl's `shuffle_sequence_dict`: each micro-batch holds answers to many screenshots and encodes each) or by whole
groups (GUIGRPOTrainer with `--dedupe_images`: each micro-batch holds whole groups). Same seed per repeat on both
sides; the ratio is groups / rows.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

from demo_batch import add_batch_arguments, demo_trainer, timed_loss_pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_batch_arguments(parser, "timed loss passes per side")
    parser.add_argument("--micro_batches", type=int, default=1, help="run the pass as N micro-batches (see above)")
    args = parser.parse_args()

    import torch

    from r1_gui.seam.models import image_encoder

    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as tmp:
        trainer, rows = demo_trainer(Path(tmp), args.size, args.prompts, args.generations)
        batch = trainer._generate_and_score_completions(rows)
        batch["advantages"] = torch.linspace(-1.0, 1.0, args.generations).repeat(args.prompts)
        encoded: list[int] = []
        visual = image_encoder(trainer.model).visual
        visual.register_forward_pre_hook(lambda module, inputs: encoded.append(inputs[0].shape[0]))
        per_image = int(batch["image_grid_thw"].prod(-1).float().mean())

        def loss_pass(dedupe: bool) -> tuple[float, dict]:
            encoded.clear()
            if args.micro_batches > 1:  # both sides dedupe; "dedupe" here: whole groups shuffled
                return micro_batched_loss_pass(trainer, batch, args, whole_groups=dedupe)
            trainer.dedupe_images = dedupe
            return timed_loss_pass(trainer, batch)

        loss_pass(True)  # warm-up
        times, grads, images = {False: [], True: []}, {}, {}
        for repeat in range(args.repeats):
            for dedupe in (False, True) if repeat % 2 == 0 else (True, False):
                seconds, grads[dedupe] = loss_pass(dedupe)
                times[dedupe].append(seconds)
                images[dedupe] = round(sum(encoded) / per_image)

    off, on = statistics.median(times[False]), statistics.median(times[True])
    largest = max(g.abs().max().item() for g in grads[False].values())
    diff = max((grads[True][n] - g).abs().max().item() for n, g in grads[False].items())
    print(f"loss pass of {args.prompts} x {args.generations} completions ({args.size} model), median of {args.repeats}")
    if args.micro_batches > 1:
        print(f"in {args.micro_batches} micro-batches, dedupe on; off: rows shuffled (trl), on: whole groups")
    print(f"{'dedupe off s':>12} {'dedupe on s':>12} {'ratio':>7} {'images encoded':>15} {'grad rel diff':>14}")
    encoded_text = f"{images[True]} of {images[False]}"
    print(f"{off:>12.3f} {on:>12.3f} {on / off:>7.3f} {encoded_text:>15} {diff / largest:>14.1e}")
    summary = {
        "benchmark": "loss_pass_dedupe",
        "size": args.size,
        "batch": f"{args.prompts}x{args.generations}",
        "micro_batches": args.micro_batches,
        "off_s": round(off, 3),
        "on_s": round(on, 3),
        "ratio": round(on / off, 3),
        "images_encoded_on": images[True],
        "images_encoded_off": images[False],
        "grad_rel_diff": float(f"{diff / largest:.2e}"),
    }
    print(json.dumps(summary))


def micro_batched_loss_pass(trainer, batch: dict, args, whole_groups: bool) -> tuple[float, dict]:
    """Seconds and gradients of the loss pass as `args.micro_batches` micro-batches, the batch shuffled row by row
    (trl) or by whole groups (r1_gui) with the same seed, as trl's `_prepare_inputs` splits it; dedupe on."""
    import torch
    from trl.trainer.utils import (
        shuffle_sequence_dict,
        split_pixel_values_by_grid,
        split_tensor_dict,
        unsplit_pixel_values_by_grid,
    )

    from r1_gui.training.repeated_prompts import whole_groups_shuffled

    trainer.dedupe_images = True
    torch.manual_seed(0)  # the same seed on both sides and in every repeat
    split = split_pixel_values_by_grid(batch)
    # GUIGRPOTrainer.shuffle_generation_batch: whole groups, or rows as trl shuffles them where they are not groups
    shuffled = whole_groups_shuffled(split, args.generations) if whole_groups else None
    if shuffled is None:
        shuffled = shuffle_sequence_dict(split)
    micro_batches = [unsplit_pixel_values_by_grid(part) for part in split_tensor_dict(shuffled, args.micro_batches)]
    return timed_loss_pass(trainer, micro_batches)


if __name__ == "__main__":
    main()
