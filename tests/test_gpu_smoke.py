"""local_scripts/gpu_smoke.sh on a machine without CUDA: it skips with a clear message and exit code 0.

Its CPU mode (`bash local_scripts/gpu_smoke.sh --cpu`) runs every entry point and takes minutes, so it is not part
of the suite; see README "GPU smoke run"."""

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
