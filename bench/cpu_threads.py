"""CPU threads: the tiny model's evaluation with torch's default threads (every core) vs r1_gui's choice
(``r1_gui.cli_errors.cpu_threads``: half the cores), alone and beside a CPU-bound process.

    python bench/cpu_threads.py [--samples 16] [--repeats 3] [--max_new_tokens 48]

Each run is a fresh process whose thread count is fixed before torch is imported (OMP_NUM_THREADS), so nothing but
the threads differs: one tiny random Qwen2-VL, one HFGenerator (greedy, CPU, float32), ``generate_records`` (what
eval/test_aitw.py runs) over the same synthetic test rows at batch size 16; the time is that call's, not the
imports'. "Beside a busy process": a second process spinning one core (``while True: pass``) runs throughout, as
another job on a shared machine does. Runs are interleaved (every thread count once per repeat) and the medians
reported, with the 1-minute load average before each run. Prints a table, then one JSON line: "collapse" (torch's
default beside the busy process over alone), "choice_vs_default_busy" and "choice_vs_default_alone" (time with
r1_gui's choice over time with torch's default; below 1 is faster).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORKER = """
import json, sys, time, tempfile
from pathlib import Path
import torch
from r1_gui.generation import HFGenerator
from r1_gui.evaluation.steps.runner import _load_rows, generate_records
from r1_gui.evaluation.steps.samples import load_samples

model, data, samples, max_new_tokens = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rows, _ = _load_rows(data, "test")
chosen = load_samples(rows, max_samples=samples)
generator = HFGenerator(model, max_new_tokens=max_new_tokens, max_pixels=50176, device="cpu", dtype="float32",
                        system_prompt="You are a GUI agent. Output the next action.")
with tempfile.TemporaryDirectory() as folder:
    start = time.perf_counter()
    generate_records(generator, rows, chosen, Path(folder) / "predictions.jsonl", 16)
    seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "threads": torch.get_num_threads()}))
"""


def run_once(model: Path, data: Path, threads: int, samples: int, max_new_tokens: int) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "TOKENIZERS_PARALLELISM": "false"}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parents[1] / "src"), env.get("PYTHONPATH", "")])
    load = os.getloadavg()[0]
    done = subprocess.run(
        [sys.executable, "-c", WORKER, str(model), str(data), str(samples), str(max_new_tokens)],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["threads"] == threads, result
    return {**result, "load": load}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=16, help="test rows generated per run")
    parser.add_argument("--repeats", type=int, default=3, help="runs per setting (medians are reported)")
    parser.add_argument("--max_new_tokens", type=int, default=48)
    args = parser.parse_args()

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from eval_throughput import prepare

    cores = len(os.sched_getaffinity(0))
    saved = os.environ.pop("OMP_NUM_THREADS", None)
    from r1_gui.cli_errors import cpu_threads

    choice = cpu_threads()  # what every command line picks here when OMP_NUM_THREADS is not set
    if saved is not None:
        os.environ["OMP_NUM_THREADS"] = saved
    settings = sorted({cores, choice, 1}, reverse=True)
    results: dict[tuple[str, int], list[dict]] = {}
    with tempfile.TemporaryDirectory() as folder:
        model, data = prepare(Path(folder), episodes=40)
        for contention in ("alone", "busy"):
            busy = None
            if contention == "busy":
                busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
                time.sleep(1)  # let the spinning process take its core before the first run
            try:
                for repeat in range(args.repeats):
                    for threads in settings if repeat % 2 == 0 else settings[::-1]:
                        run = run_once(model, data, threads, args.samples, args.max_new_tokens)
                        results.setdefault((contention, threads), []).append(run)
            finally:
                if busy is not None:
                    busy.kill()
                    busy.wait()

    median = {key: statistics.median(run["seconds"] for run in runs) for key, runs in results.items()}
    print(f"{cores} cores; torch's default: {cores} threads; r1_gui's choice: {choice}; {args.samples} rows")
    print("| setting | threads | median s | runs (s) | load avg before |")
    print("|---|---|---|---|---|")
    for (contention, threads), runs in results.items():
        label = "torch default" if threads == cores else ("r1_gui choice" if threads == choice else "")
        times = ", ".join(f"{run['seconds']:.1f}" for run in runs)
        loads = ", ".join(f"{run['load']:.1f}" for run in runs)
        print(f"| {contention} | {threads} {label} | {median[contention, threads]:.2f} | {times} | {loads} |")
    summary = {
        "cores": cores,
        "choice": choice,
        "seconds": {f"{contention}/{threads}": round(value, 2) for (contention, threads), value in median.items()},
        "collapse": round(median["busy", cores] / median["alone", cores], 2),
        "choice_vs_default_busy": round(median["busy", choice] / median["busy", cores], 3),
        "choice_vs_default_alone": round(median["alone", choice] / median["alone", cores], 3),
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
