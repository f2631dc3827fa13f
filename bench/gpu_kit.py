"""The GPU measurements still open, in one command that fits a 15-minute lease: bench/gpu_kit.sh OUT_DIR.

    bash bench/gpu_kit.sh OUT_DIR                  # CUDA: every part, 540 s in all at most (bench/README.md)
    bash bench/gpu_kit.sh OUT_DIR --cpu            # the same parts on CPU with tiny shapes (tests/test_gpu_kit.py)
    bash bench/gpu_kit.sh OUT_DIR --dry_run        # the plan: each part's command and limit, nothing run
    bash bench/gpu_kit.sh OUT_DIR --only ab_8x8 --limit ab_8x8=400 --total 420   # one part, more time

Parts, in this order, each a process of its own under its own time limit (the effective one: its limit or what is
left of `--total`, whichever is smaller):

1. smoke            local_scripts/gpu_smoke.sh --gpu_kit: one PASS/FAIL line per command line of the product
2. ab_8x8           bench/gpu_step_profile.py at 8 screenshots x 8 answers, ours then plain trl (1 warm-up step,
                    1 measured step each): phases, generated tokens/s, peak memory, time to the first step
3. static_compile   the same with --generation_compile (static KV cache, compiled decode) on both sides
4. vision_attention ours at 8 x 8 with --vision_attention model (transformers' per-window attention): against
                    ab_8x8's ours, what the batched windows save
5. qwen3vl4b_memory bench/memory_plan.py --measure --only qwen3vl4b_full: the Qwen3-VL-4B recipe's peak memory.
                    It runs beside the smoke run (its figure is its own process's `max_memory_allocated`, as in the
                    2026-11-26 lease), and is reported last

After each part OUT_DIR/gpu_kit.json and OUT_DIR/gpu_kit.md are written again (bench/gpu_kit_report.py), so a run
stopped from outside still leaves every finished part; each part's output is in OUT_DIR/logs/PART.log. A part that
runs past its limit is stopped (its process group) and marked `cut`, with whatever it printed before (the smoke
lines so far, every step the profile finished: bench/gpu_step_profile.py prints one JSON line per step). Work files
(the smoke run's folders, torch.compile's cache, the memory JSON) go to --work_dir, outside OUT_DIR, so OUT_DIR holds
7 files: what the lent machine's $OUT brings back (at most 8).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from gpu_kit_report import gpu_present, machine, parse_part, write_report

REPO = Path(__file__).resolve().parents[1]
CUDA_TOTAL = 540.0  # 9 minutes of a 15-minute lease: the rest is the machine's start, the wheels, the transfers
CPU_TOTAL = 600.0
MIN_LIMIT_S = 5.0  # a part with less time than this (its --limit, or what --total leaves) is not started


@dataclass
class Part:
    """One measurement: its command (argv, relative to the repository), per mode, and its time limits."""

    name: str
    title: str
    cuda: list[str]
    cpu: list[str]
    limit_cuda: float
    limit_cpu: float
    beside: str | None = None  # the part it runs beside (started together, reported in its own place)
    result: dict = field(default_factory=dict)


PROFILE = ["bench/gpu_step_profile.py", "--rounds", "1", "--warmup", "1", "--steps", "1", "--heartbeat", "20"]
# The 8 x 8 batch on CUDA (the 3B shape, answers of 128 tokens); on CPU a tiny one, to test the kit in minutes
CUDA_BATCH = ["--prompts", "8"]
CPU_BATCH = [
    "--device",
    "cpu",
    "--prompts",
    "2",
    "--num_generations",
    "4",
    "--max_completion_length",
    "8",
    "--max_pixels",
    "12544",
]
MEMORY = ["bench/memory_plan.py", "--measure", "--only", "qwen3vl4b_full", "--steps", "2"]


def parts(work: Path) -> list[Part]:
    memory_out = ["--out", str(work / "memory_qwen3vl4b.json")]
    smoke = ["bash", "local_scripts/gpu_smoke.sh", "--gpu_kit"]
    return [
        Part("smoke", "smoke run (every command line)", smoke, [*smoke, "--cpu"], 170, 150),
        Part("ab_8x8", "8 x 8 step, ours vs plain trl", [*PROFILE, *CUDA_BATCH], [*PROFILE, *CPU_BATCH], 200, 90),
        Part(
            "static_compile",
            "static cache + compiled decode, both sides",
            [*PROFILE, *CUDA_BATCH, "--generation_compile"],
            [*PROFILE, *CPU_BATCH, "--generation_compile"],
            120,
            120,
        ),
        Part(
            "vision_attention",
            "ours with --vision_attention model",
            [*PROFILE, *CUDA_BATCH, "--trainer", "ours", "--vision_attention", "model"],
            [*PROFILE, *CPU_BATCH, "--trainer", "ours", "--vision_attention", "model"],
            70,
            60,
        ),
        Part(
            "qwen3vl4b_memory",
            "Qwen3-VL-4B memory point",
            [*MEMORY, *memory_out],
            [*MEMORY, *memory_out, "--device", "cpu"],
            170,
            150,
            beside="smoke",
        ),
    ]


class Runner:
    """Starts a part's process (its own process group, output to its log) and stops it at its limit."""

    def __init__(self, part: Part, argv: list[str], log: Path, env: dict, limit: float):
        self.part, self.limit, self.log = part, limit, log
        self.start = time.monotonic()
        command = [sys.executable, *argv] if argv[0].endswith(".py") else argv
        self.handle = open(log, "w")  # noqa: SIM115 -- closed in wait()
        self.process = subprocess.Popen(
            command, cwd=REPO, env=env, stdout=self.handle, stderr=subprocess.STDOUT, start_new_session=True
        )
        self.ended: float | None = None  # when the process ended, seen by a thread (a part run beside another
        threading.Thread(target=self._watch, daemon=True).start()  # is waited for after it)

    def _watch(self) -> None:
        self.process.wait()
        self.ended = time.monotonic()

    def wait(self) -> None:
        """Until the process ends or its limit passes (then its process group is stopped)."""
        try:
            self.process.wait(timeout=max(0.0, self.limit - (time.monotonic() - self.start)))
            self.cut = False
        except subprocess.TimeoutExpired:
            self.cut = True
            for sig, grace in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
                try:
                    os.killpg(self.process.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    self.process.wait(timeout=grace)
                    break
                except subprocess.TimeoutExpired:
                    continue
        self.process.wait()
        self.seconds = round((self.ended or time.monotonic()) - self.start, 1)
        self.handle.close()

    def record(self) -> dict:
        status = "cut" if self.cut else ("ok" if self.process.returncode == 0 else "failed")
        text = self.log.read_text(errors="replace")
        return {
            "status": status,
            "seconds": self.seconds,
            "limit_s": round(self.limit, 1),
            "returncode": None if self.cut else self.process.returncode,
            "log": f"logs/{self.log.name}",
            "result": parse_part(self.part.name, text, self.part_files()),
        }

    def part_files(self) -> dict:
        """Files a part writes besides its log (the memory point's JSON)."""
        argv = self.process.args
        return {"out": argv[argv.index("--out") + 1]} if "--out" in argv else {}


def child_environment(work: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "src"), env.get("PYTHONPATH")]))
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHON"] = sys.executable  # gpu_smoke.sh's interpreter: this one (the lent machine's, with its wheels)
    env["SMOKE_DIR"] = str(work / "smoke")
    # one compile cache for the run: the second side of static_compile finds the first side's graphs
    env["TORCHINDUCTOR_CACHE_DIR"] = str(work / "inductor")
    return env


def run_kit(args: argparse.Namespace) -> int:
    out, work = Path(args.out_dir), Path(args.work_dir)
    (out / "logs").mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    mode = "dry_run" if args.dry_run else ("cpu" if args.cpu else "cuda")
    plan = [part for part in parts(work) if not args.only or part.name in args.only]
    limits = {part.name: part.limit_cpu if args.cpu else part.limit_cuda for part in plan}
    limits.update(args.limit)
    total = args.total or (CPU_TOTAL if args.cpu else CUDA_TOTAL)
    report = {
        "kit": "gpu_kit",
        "mode": mode,
        "command": " ".join(["bash bench/gpu_kit.sh", *sys.argv[1:]]),
        "machine": machine(cuda=mode == "cuda"),
        "total_limit_s": total,
        "parts": {
            part.name: {
                "title": part.title,
                "status": "planned" if args.dry_run else "not run",
                "limit_s": limits[part.name],
                "command": " ".join(part.cpu if args.cpu else part.cuda),
                **({"beside": part.beside} if part.beside else {}),
            }
            for part in plan
        },
    }
    write_report(out, report)
    if args.dry_run:
        print(f"gpu_kit: dry run, the plan is in {out}/gpu_kit.md")
        return 0
    env = child_environment(work)
    started = time.monotonic()
    for part in plan:
        if part.beside and part.beside in report["parts"]:
            continue  # started with the part it runs beside
        group = [part, *(other for other in plan if other.beside == part.name)]
        runners = []
        for member in group:
            left = total - (time.monotonic() - started)
            limit = min(limits[member.name], left)
            if limit < MIN_LIMIT_S:
                report["parts"][member.name].update(status="not run", note=f"no time left of --total {total:.0f} s")
                continue
            argv = member.cpu if args.cpu else member.cuda
            print(f"gpu_kit: {member.name} ({member.title}), limit {limit:.0f} s", flush=True)
            runners.append(Runner(member, argv, out / "logs" / f"{member.name}.log", env, limit))
        for runner in runners:
            runner.wait()
            record = runner.record()
            report["parts"][runner.part.name].update(record)
            report["elapsed_s"] = round(time.monotonic() - started, 1)
            write_report(out, report)
            print(f"gpu_kit: {runner.part.name} {record['status']} after {record['seconds']} s", flush=True)
    failed = [name for name, part in report["parts"].items() if part["status"] != "ok"]
    print(f"gpu_kit: done in {report['elapsed_s']} s; " + (f"not ok: {', '.join(failed)}" if failed else "all ok"))
    print(f"gpu_kit: {out}/gpu_kit.md, {out}/gpu_kit.json")
    return 1 if failed else 0


def limit_pair(text: str) -> tuple[str, float]:
    name, _, seconds = text.partition("=")
    try:
        value = float(seconds)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--limit takes PART=SECONDS, got {text!r}") from None
    if value < MIN_LIMIT_S:
        raise argparse.ArgumentTypeError(f"--limit {text}: a part needs at least {MIN_LIMIT_S:.0f} s")
    return name, value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", help="folder for gpu_kit.json, gpu_kit.md and logs/ (e.g. $OUT/kit on the lease)")
    how = parser.add_mutually_exclusive_group()
    how.add_argument("--cpu", action="store_true", help="the same parts on CPU with tiny shapes")
    how.add_argument("--dry_run", action="store_true", help="write the plan (commands, limits), run nothing")
    names = [part.name for part in parts(Path("."))]
    parser.add_argument("--only", nargs="+", choices=names, help="these parts only (in the kit's order)")
    parser.add_argument("--limit", nargs="+", type=limit_pair, default=[], metavar="PART=SECONDS", help="new limits")
    parser.add_argument(
        "--total", type=float, help=f"seconds for all parts (default {CUDA_TOTAL:.0f}; --cpu {CPU_TOTAL:.0f})"
    )
    parser.add_argument("--work_dir", default="/tmp/r1_gui_gpu_kit", help="the parts' work files (outside out_dir)")
    args = parser.parse_args(argv)
    unknown = [name for name, _ in args.limit if name not in names]
    if unknown:
        parser.error(f"--limit: no part {', '.join(unknown)}; parts: {', '.join(names)}")
    args.limit = dict(args.limit)
    if not (args.cpu or args.dry_run or gpu_present()):
        print("error: nvidia-smi finds no GPU here: run the kit on a GPU machine, or add --cpu (tiny shapes) or "
              "--dry_run (the plan)", file=sys.stderr)  # fmt: skip
        return 2
    return run_kit(args)


if __name__ == "__main__":
    sys.exit(main())
