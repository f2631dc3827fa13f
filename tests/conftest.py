"""Shared fixtures: offline environment, network guard, tiny models of every architecture (built once a session)."""

import atexit
import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NETGUARD = Path(__file__).resolve().parent / "netguard"

# Set before anything imports huggingface_hub, transformers or wandb, and inherited by every subprocess a test starts.
os.environ.update(
    {
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "WANDB_MODE": "offline",
        "WANDB_SILENT": "true",
        "TOKENIZERS_PARALLELISM": "false",
        "R1_GUI_NO_NETWORK": "1",
        "PYTHONPATH": os.pathsep.join(p for p in (str(NETGUARD), os.environ.get("PYTHONPATH", "")) if p),
    }
)
# DeepSpeed builds its CPU communication op with torch's extension builder, whose lock file a killed run leaves behind
# (every later DeepSpeed start then waits for it forever): the suite builds into a folder of its own, never reused.
os.environ["TORCH_EXTENSIONS_DIR"] = tempfile.mkdtemp(prefix="r1_gui-torch-extensions-")
atexit.register(shutil.rmtree, os.environ["TORCH_EXTENSIONS_DIR"], ignore_errors=True)
sys.path.insert(0, str(NETGUARD))
import sitecustomize  # noqa: E402,F401  (installs the guard in this process too)

from r1_gui.cli_errors import cpu_threads  # noqa: E402

cpu_threads()  # the threads every command line takes (half the cores), for this process and the ones tests start


@pytest.fixture(scope="session", autouse=True)
def trl_flag_table():
    """trl's flag table in the user's cache, as `bash setup.sh` leaves it: the command-line tests time a training
    command's pre-check, which would otherwise build it (importing trl) the first time."""
    from r1_gui.training.command_lines import trl_table

    trl_table()


# A shell without job control (a script's `cmd &`, `nohup ... &`) starts a background job with SIGINT ignored, and a
# child keeps an ignored signal across exec: the subprocesses of the Ctrl-C tests would never see their SIGINT. A
# handler is reset to the default in a child, so installing Python's own here gives every subprocess a live SIGINT.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def _tiny_model_fixture(arch: str, what: str):
    """The session fixture `tiny_<arch>`: a tiny random model folder of ``arch`` (model + processor), built offline
    once per session."""

    def fixture(tmp_path_factory) -> Path:
        from r1_gui.tiny import build_tiny_model

        return build_tiny_model(tmp_path_factory.mktemp("tiny-" + arch.replace("_", "-")), arch=arch, size="tiny")

    fixture.__doc__ = f"A tiny random {what} model folder (model + processor), built offline once per session."
    return pytest.fixture(fixture, scope="session", name=f"tiny_{arch}")


tiny_qwen2_vl = _tiny_model_fixture("qwen2_vl", "Qwen2-VL")
tiny_qwen2_5_vl = _tiny_model_fixture("qwen2_5_vl", "Qwen2.5-VL")
tiny_qwen3_vl = _tiny_model_fixture("qwen3_vl", "Qwen3-VL")
tiny_qwen3_vl_moe = _tiny_model_fixture("qwen3_vl_moe", "Qwen3-VL MoE (2 of 4 experts per token)")


# The three families; the cheap tests that take `tiny_model` run once per family (the slow ones name their own).
ARCHITECTURES = ["qwen2_vl", "qwen2_5_vl", "qwen3_vl"]


@pytest.fixture(params=ARCHITECTURES)
def tiny_model(request) -> Path:
    """Each tiny architecture in turn."""
    return request.getfixturevalue("tiny_" + request.param)


@pytest.fixture(scope="session")
def synthetic_raw(tmp_path_factory) -> Path:
    """Synthetic AITW episodes in the Aguvis stage-2 schema (small 224x448 screens), written once per session."""
    from r1_gui.synthetic import generate

    folder = tmp_path_factory.mktemp("synthetic") / "raw"
    generate(folder, 30, seed=0, width=224, height=448, progress=False)
    return folder


@pytest.fixture(scope="session")
def synthetic_dataset(synthetic_raw, tmp_path_factory) -> Path:
    """A builder output folder (train.parquet, test.parquet) made from the synthetic episodes by the real builder."""
    from r1_gui.builder import build

    out = tmp_path_factory.mktemp("dataset") / "synthetic"
    build([synthetic_raw / "synthetic-l1.json"], synthetic_raw / "images", out, test_size=0.2, seed=0, progress=False)
    return out


@pytest.fixture
def kill_then_rerun():
    """run(target, script, argv, folder): run `python script *argv` killed by SIGKILL at its first call of target
    ("module:attribute"), check it left exactly one new hidden .*.partial-* folder in folder, then run the same
    command plainly; returns (that folder's name, the second run's CompletedProcess)."""
    import subprocess

    def run(target: str, script: str, argv: list[str], folder: Path):
        before = {path.name for path in folder.iterdir()}
        helper = str(REPO / "tests" / "helpers" / "kill_mid_write.py")
        killed = subprocess.run(
            [sys.executable, helper, target, script, *argv], cwd=REPO, capture_output=True, text=True, timeout=120
        )
        assert killed.returncode == -9, killed.stderr
        left = sorted({path.name for path in folder.iterdir()} - before)
        assert len(left) == 1 and ".partial-" in left[0], left
        rerun = subprocess.run([sys.executable, script, *argv], cwd=REPO, capture_output=True, text=True, timeout=120)
        assert rerun.returncode == 0, rerun.stderr
        return left[0], rerun

    return run
