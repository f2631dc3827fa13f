"""The web demo's sight stage alone and beside a process spinning one core: how much a busy machine slows it.

    python bench/sight_stage_load.py [--steps 100] [--fixed]

Runs `r1_gui.multi_turn.demo.run_sight` (the one SFT trainer, `r1_gui.training.sft.train_turns`, on synthetic pages)
with the web demo's settings (`WebDemoConfig`: its Qwen3-VL, page size and batch) for --steps steps on a model built
here, twice: alone, then beside a second process running `while True: pass` throughout (another job on a shared
machine). The stage chooses its torch threads from the cores
other processes leave free (`r1_gui.cli_errors.shared_core_threads`). With --fixed, a third run beside the spinner
holds 2 threads throughout, as the stage did before (its 2 OpenMP threads then wait on the descheduled one).
Prints each run's seconds a step, then one JSON line with "busy_over_alone" (the goal: at most 2.5) and, with
--fixed, "fixed_busy_over_alone". Run it on an otherwise idle machine: the 1-minute load average is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from unittest import mock


def timed_sight(steps: int, folder: Path, fixed_threads: int | None = None) -> float:
    """Seconds a step of the web demo's sight stage (the model built and loaded, the first batch drawn, before the
    clock starts): `r1_gui.multi_turn.demo.run_sight`, which trains with the one SFT trainer
    (`r1_gui.training.sft.train_turns`)."""
    from r1_gui import cli_errors
    from r1_gui.multi_turn import demo
    from r1_gui.multi_turn.web_demo import WebDemoConfig
    from r1_gui.tiny import build_tiny_model
    from r1_gui.training.sft import GUISFTTrainer

    config = replace(WebDemoConfig(), sight_steps=steps)
    model = build_tiny_model(folder / "model", arch=config.arch, size=config.model_size, seed=0,
                             pixel_norm=config.pixel_norm)  # fmt: skip
    started = {}
    original = GUISFTTrainer.training_step

    def clocked(*args, **kwargs):
        started.setdefault("at", time.perf_counter())  # the first step: the model is loaded, the loop begins
        return original(*args, **kwargs)

    with mock.patch.object(GUISFTTrainer, "training_step", clocked):
        if fixed_threads is not None:  # the stage as it was: a fixed thread count whatever else runs
            from r1_gui.cli_errors import torch_threads

            fixed = lambda most: _Fixed(torch_threads(fixed_threads))  # noqa: E731
            with mock.patch.object(cli_errors, "shared_core_threads", fixed):
                demo.run_sight(config, model, folder, seed=0)
        else:
            demo.run_sight(config, model, folder, seed=0)
    return (time.perf_counter() - started["at"]) / steps


class _Fixed:
    """`shared_core_threads`' shape over `torch_threads`: a fixed count, never adjusted."""

    def __init__(self, block):
        self.block = block

    def __enter__(self):
        self.threads = self.block.__enter__()
        return self

    def __exit__(self, *exc):
        return self.block.__exit__(*exc)

    def adjust(self) -> int:
        return self.threads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--fixed", action="store_true", help="also the old fixed 2 threads beside the spinner")
    args = parser.parse_args()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    print(f"load average before: {os.getloadavg()[0]:.2f}, cores: {len(os.sched_getaffinity(0))}")
    results = {}
    with tempfile.TemporaryDirectory() as folder:
        results["alone"] = timed_sight(args.steps, Path(folder) / "alone")
        print(f"alone: {results['alone']:.3f} s a step", flush=True)
        spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        try:
            time.sleep(1)
            results["busy"] = timed_sight(args.steps, Path(folder) / "busy")
            print(f"beside a spinning process: {results['busy']:.3f} s a step", flush=True)
            if args.fixed:
                results["fixed_busy"] = timed_sight(args.steps, Path(folder) / "fixed", fixed_threads=2)
                print(f"beside it with 2 fixed threads: {results['fixed_busy']:.3f} s a step", flush=True)
        finally:
            spinner.kill()
            spinner.wait()
    ratios = {"busy_over_alone": round(results["busy"] / results["alone"], 2)}
    if args.fixed:
        ratios["fixed_busy_over_alone"] = round(results["fixed_busy"] / results["alone"], 2)
    print(json.dumps({"steps": args.steps, **{k: round(v, 4) for k, v in results.items()}, **ratios}))


if __name__ == "__main__":
    main()
