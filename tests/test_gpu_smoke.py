"""local_scripts/gpu_smoke.sh on a machine without CUDA: it skips with a clear message and exit code 0; --only runs
the entry points it names (an unknown one is one error line).

Its whole CPU mode (`bash local_scripts/gpu_smoke.sh --cpu`) takes minutes, so it is not part of the suite; the
GPU kit's subset (`--gpu_kit`) runs in tests/test_gpu_kit.py. See docs/guide/gpu.md, "The GPU smoke run"."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

SCRIPT = Path(__file__).resolve().parents[1] / "local_scripts" / "gpu_smoke.sh"


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the behaviour without CUDA")
def test_without_cuda_the_smoke_run_skips_and_says_how_to_run_it_on_cpu(tmp_path):
    env = {key: value for key, value in os.environ.items() if key != "R1_GUI_SMOKE_DEVICE"}
    env.update(PYTHON=sys.executable, SMOKE_DIR=str(tmp_path / "smoke"))
    result = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    assert "SKIP: no CUDA device" in result.stdout
    assert "gpu_smoke.sh --cpu" in result.stdout
    assert "PASS" not in result.stdout and "FAIL" not in result.stdout
    assert not (tmp_path / "smoke").exists()  # nothing ran


def test_an_unknown_entry_point_in_only_is_one_error_line(tmp_path):
    env = {**os.environ, "PYTHON": sys.executable, "SMOKE_DIR": str(tmp_path / "smoke")}
    result = subprocess.run(["bash", str(SCRIPT), "--cpu", "--only", "tiny_model,sftt"], capture_output=True, text=True,
                            timeout=60, env=env)  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.startswith("error: --only: no entry point sftt; valid: tiny_model synthetic_data sft ")
    assert not (tmp_path / "smoke").exists()


def test_only_runs_the_entry_points_named_and_says_so_of_the_others(tmp_path):
    env = {**os.environ, "PYTHON": sys.executable, "SMOKE_DIR": str(tmp_path / "smoke")}
    result = subprocess.run(["bash", str(SCRIPT), "--cpu", "--only", "tiny_model"], capture_output=True, text=True,
                            timeout=300, env=env)  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    lines = [line.split()[:2] for line in result.stdout.splitlines() if line.startswith(("PASS", "FAIL", "SKIP"))]
    assert lines[0] == ["PASS", "tiny_model"]
    assert all(status == "SKIP" for status, _ in lines[1:]) and len(lines) == 16  # every other entry point
    assert "not in --only" in result.stdout and (tmp_path / "smoke" / "models" / "tiny" / "config.json").is_file()
