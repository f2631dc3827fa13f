"""bench/gpu_kit.sh, the lease's one command: its plan (--dry_run), its CPU run of every part with tiny shapes, a part
cut by its time limit (marked, what it printed kept, the next part still run), and how its logs are read."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from gpu_kit import CPU_TOTAL, parts  # noqa: E402
from gpu_kit_report import parse_profile, parse_smoke  # noqa: E402

PARTS = ["smoke", "ab_8x8", "static_compile", "vision_attention", "qwen3vl4b_memory"]
ROOM = 4  # the CPU run's test gives each part this many times its --cpu limit (see roomy_limits)


def kit(out: Path, *flags: str, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHON": sys.executable}
    command = ["bash", str(REPO / "bench" / "gpu_kit.sh"), str(out), "--work_dir", str(out.parent / "work"), *flags]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env, cwd=REPO)


def roomy_limits() -> list[str]:
    """--limit and --total at ROOM times the --cpu run's own. The CPU run's test checks what each part measures, not
    how fast a shared 2-core machine runs it: at its own limits the smoke part was cut (150 s) while other tests ran
    beside it. The cut itself has its own test."""
    limits = [f"{part.name}={ROOM * part.limit_cpu:.0f}" for part in parts(Path("work"))]
    return ["--limit", *limits, "--total", f"{ROOM * CPU_TOTAL:.0f}"]


def read(out: Path) -> tuple[dict, str]:
    return json.loads((out / "gpu_kit.json").read_text()), (out / "gpu_kit.md").read_text()


def test_the_dry_run_writes_the_plan(tmp_path):
    done = kit(tmp_path / "kit", "--dry_run", timeout=120)
    assert done.returncode == 0, done.stderr
    report, table = read(tmp_path / "kit")
    assert list(report["parts"]) == PARTS
    assert all(part["status"] == "planned" for part in report["parts"].values())
    assert report["total_limit_s"] == 540  # the 9 minutes a lease has for the kit
    assert report["parts"]["ab_8x8"]["command"].startswith("bench/gpu_step_profile.py")
    assert "--prompts 8" in report["parts"]["ab_8x8"]["command"]
    assert "--generation_compile" in report["parts"]["static_compile"]["command"]
    assert report["parts"]["qwen3vl4b_memory"]["beside"] == "smoke"
    for name in PARTS:
        assert f"| {name}: " in table and f"## {name}" in table
    assert os.listdir(tmp_path / "kit" / "logs") == []  # nothing ran


def test_a_limit_under_the_minimum_is_refused_naming_the_flag(tmp_path):
    done = kit(tmp_path / "kit", "--dry_run", "--limit", "smoke=3", timeout=120)
    assert done.returncode == 2
    assert "--limit smoke=3: a part needs at least 5 s" in done.stderr
    assert not (tmp_path / "kit").exists()  # nothing written


def test_without_a_gpu_the_kit_asks_for_cpu_or_dry_run(tmp_path):
    if subprocess.run(["sh", "-c", "nvidia-smi -L"], capture_output=True).returncode == 0:
        pytest.skip("this machine has a GPU")
    done = kit(tmp_path / "kit", timeout=120)
    assert done.returncode == 2
    assert done.stderr.startswith("error: nvidia-smi finds no GPU here") and "--cpu" in done.stderr
    assert not (tmp_path / "kit").exists()  # nothing written, nothing run


@pytest.mark.slow
def test_the_cpu_run_measures_every_part(tmp_path):
    """Every part on CPU with tiny shapes (minutes: bench/README.md, The GPU kit): both files, every part ok, and
    the figures each part exists for."""
    out = tmp_path / "kit"
    done = kit(out, "--cpu", *roomy_limits(), timeout=ROOM * CPU_TOTAL + 120)
    assert done.returncode == 0, done.stdout + done.stderr
    report, table = read(out)
    assert list(report["parts"]) == PARTS
    assert {name: part["status"] for name, part in report["parts"].items()} == dict.fromkeys(PARTS, "ok")
    smoke = report["parts"]["smoke"]["result"]
    names = [entry["name"] for entry in smoke["entry_points"] if entry["status"] == "PASS"]
    assert names == [
        "tiny_model",
        "synthetic_data",
        "sft",
        "grpo",
        "grpo_torchrun_zero2",
        "eval_test_aitw",
        "demo_fast",
    ]
    for name, sides in (
        ("ab_8x8", ["ours", "plain"]),
        ("static_compile", ["ours", "plain"]),
        ("vision_attention", ["ours"]),
    ):
        result = report["parts"][name]["result"]
        assert list(result["sides"]) == sides, name
        for side in result["sides"].values():
            assert side["steps_done"] == 2 and side["measured_step_s"] > 0 and side["tokens_per_s"] > 0
            assert 0 < side["time_to_first_step_s"] < 120
            compiled = side["compiled_graphs"] > 0
            assert compiled == (name == "static_compile"), name  # only that part compiles its decode step
    assert report["parts"]["ab_8x8"]["result"]["ratio_ours_plain"]["basis"] == "measured step"
    assert report["parts"]["qwen3vl4b_memory"]["result"]["device"] == "cpu"
    assert sorted(os.listdir(out)) == ["gpu_kit.json", "gpu_kit.md", "logs"]
    assert sorted(os.listdir(out / "logs")) == sorted(f"{name}.log" for name in PARTS)  # 7 files: what $OUT returns
    assert "| smoke: smoke run (every command line) | ok |" in table and "| generated tokens/s |" in table


@pytest.mark.slow
def test_a_part_past_its_limit_is_cut_and_the_next_part_still_runs(tmp_path):
    """vision_attention on CPU prints its first phase about 1 s after it starts and ends after about 10 s, run
    alone (slower beside other work): a 6 s limit cuts it between the two. At 12 s it ran to its end, alone."""
    out = tmp_path / "kit"
    done = kit(out, "--cpu", "--only", "vision_attention", "qwen3vl4b_memory", "--limit", "vision_attention=6")
    assert done.returncode == 1, done.stdout + done.stderr  # not every part is ok
    report, table = read(out)
    cut = report["parts"]["vision_attention"]
    assert cut["status"] == "cut" and cut["returncode"] is None and cut["seconds"] < 6 + 25  # the stop's grace
    assert cut["result"]["sides"]["ours"]["last_phase"]  # where it was when stopped
    assert report["parts"]["qwen3vl4b_memory"]["status"] == "ok"
    assert "| vision_attention: ours with --vision_attention model | cut |" in table


def step_line(side, step, total, warmup, generation=2.0, tokens=1024.0):
    record = {"side": side, "step": step, "total": total, "prefill": 0.5, "generation": generation,
              "reward_scoring": 0.0, "log_prob": 1.0, "backward": 2.0, "tokens": tokens, "peak_gib": 30.0,
              "alloc_retries": 0, "compiled_graphs": 0, "warmup": warmup,
              "marks": {"model built; building the trainer": 20.0, "step 1: begins": 25.0}}  # fmt: skip
    return "gpu_step_profile step " + json.dumps(record)


def test_a_profile_log_cut_in_the_second_side_keeps_the_first_steps_of_both():
    log = "\n".join(
        [
            "[ours +0.0 s] process started",
            step_line("ours", 1, 10.0, True),
            step_line("ours", 2, 6.0, False, generation=4.0),
            "[ours +45.0 s] trained",
            step_line("plain", 1, 40.0, True),
            "[plain +70.0 s] step 2: generation: decode",
        ]
    )
    result = parse_profile(log)
    ours, plain = result["sides"]["ours"], result["sides"]["plain"]
    assert (ours["first_step_s"], ours["measured_step_s"], ours["tokens_per_s"]) == (10.0, 6.0, 256.0)
    assert (plain["first_step_s"], plain["measured_step_s"]) == (40.0, None)
    assert plain["last_phase"] == "+70.0 s step 2: generation: decode"  # where the cut found it
    assert ours["time_to_first_step_s"] == 25.0 and ours["peak_gib"] == 30.0
    ratio = result["ratio_ours_plain"]  # plain has no measured step: the first steps are compared
    assert ratio["basis"] == "first step" and ratio["step"] == 0.25


def test_a_side_cut_before_its_first_step_says_where_it_was():
    result = parse_profile("[plain +0.0 s] process started\n[plain +30.2 s] step 1: generation: prefill\n")
    assert result["sides"] == {"plain": {"steps_done": 0, "last_phase": "+30.2 s step 1: generation: prefill"}}
    assert "ratio_ours_plain" not in result


def test_smoke_lines_are_read_and_the_ones_left_out_by_only_dropped():
    log = "\n".join(
        [
            "gpu_smoke: device cuda, work folder /tmp/x",
            "PASS tiny_model                13s",
            "FAIL sft                       25s  (log: /tmp/x/logs/sft.log)",
            "     | Traceback (most recent call last):",
            "SKIP vision_attention             not in --only",
            "SKIP stock_processor              no CPU torchvision",
        ]
    )
    result = parse_smoke(log)
    assert [(e["name"], e["status"], e["seconds"]) for e in result["entry_points"]] == [
        ("tiny_model", "PASS", 13),
        ("sft", "FAIL", 25),
        ("stock_processor", "SKIP", None),
    ]
    assert (result["passed"], result["failed"], result["skipped"]) == (1, 1, 1)
