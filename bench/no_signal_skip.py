"""No-signal skip: the GRPO loss pass with and without the completions whose advantage is 0.

    python bench/no_signal_skip.py [--size small] [--prompts 16] [--generations 8] [--repeats 3]

One generation batch of the demo's shape (its synthetic screens and short system prompt, aguvis prompts, `--prompts` x `--generations`
completions of up to 48 tokens from a random local model) is generated once; then, for each share of prompt groups
without signal (0.25, 0.5, 0.75: the demo's GRPO logs `groups/no_signal_frac` between 0.3 and 0.7), the advantages of
that many groups are set to 0, as GRPO sets them when a group's rewards are all equal, and the loss pass (forward and
backward, `GUIGRPOTrainer._compute_loss`) is timed with the skip off and on, alternating which goes first, median of
`--repeats`. Prints a table and one JSON line with, per share, "ratio" (skip on / off seconds), "step_ratio" (the
same with the batch's generation time added to both sides) and "grad_rel_diff" (largest gradient difference over
the largest gradient: the skip must not change the gradient). Target: ratio <= 0.6 at share 0.5.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from demo_batch import add_batch_arguments, demo_trainer, timed_loss_pass

SHARES = (0.25, 0.5, 0.75)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_batch_arguments(parser, "timed loss passes per side and share")
    args = parser.parse_args()

    import torch

    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as tmp:
        trainer, rows = demo_trainer(Path(tmp), args.size, args.prompts, args.generations)
        start = time.perf_counter()
        batch = trainer._generate_and_score_completions(rows)
        generate_s = time.perf_counter() - start
        # every group gets signal first, so the share without signal is exactly the share zeroed below
        signal = torch.linspace(-1.0, 1.0, args.generations).repeat(args.prompts)

        def loss_pass(inputs: dict, skip: bool) -> tuple[float, dict]:
            trainer.skip_no_signal = skip
            return timed_loss_pass(trainer, inputs)

        results = []
        for share in SHARES:
            silent = round(share * args.prompts) * args.generations
            advantages = signal.clone()
            advantages[:silent] = 0.0
            inputs = {**batch, "advantages": advantages}
            times, grads = {False: [], True: []}, {}
            for repeat in range(args.repeats):
                for skip in (False, True) if repeat % 2 == 0 else (True, False):
                    seconds, grads[skip] = loss_pass(inputs, skip)
                    times[skip].append(seconds)
            full, skipped = statistics.median(times[False]), statistics.median(times[True])
            largest = max(g.abs().max().item() for g in grads[False].values())
            diff = max((grads[True][n] - g).abs().max().item() for n, g in grads[False].items())
            results.append(
                {
                    "share": share,
                    "full_s": round(full, 3),
                    "skip_s": round(skipped, 3),
                    "ratio": round(skipped / full, 3),
                    "step_ratio": round((generate_s + skipped) / (generate_s + full), 3),
                    "grad_rel_diff": float(f"{diff / largest:.2e}") if largest else diff,
                }
            )

    print(f"generation of {args.prompts} x {args.generations} completions: {generate_s:.2f} s ({args.size} model)")
    print(f"{'no-signal share':>15} {'full s':>8} {'skip s':>8} {'ratio':>7} {'step ratio':>11} {'grad rel diff':>14}")
    for r in results:
        print(
            f"{r['share']:>15} {r['full_s']:>8.3f} {r['skip_s']:>8.3f} {r['ratio']:>7.3f} {r['step_ratio']:>11.3f} "
            f"{r['grad_rel_diff']:>14.1e}"
        )
    summary = {
        "benchmark": "no_signal_skip",
        "size": args.size,
        "batch": f"{args.prompts}x{args.generations}",
        "generate_s": round(generate_s, 3),
        "results": results,
        "target_ratio_at_0.5": 0.6,
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
