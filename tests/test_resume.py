"""Resuming a run (r1_gui.training.resume): which checkpoint `--resume_from_checkpoint` takes, checked before any model
loads, and what the run says when it ends. The trainer side (weights read as from_pretrained reads them, no step past
--max_steps) is tested end to end in tests/test_grpo.py."""

import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import save_file

from r1_gui.cli_errors import UserError
from r1_gui.training.progress import StepLines
from r1_gui.training.resume import resolve_resume


def checkpoint(output_dir: Path, step: int, weights: str = "whole") -> Path:
    """output_dir/checkpoint-<step> as the Trainer leaves it: weights, then trainer_state.json last. ``weights``:
    "whole", "cut" (the file cut short after the state was written: a copy or a disk that failed) or "none"."""
    folder = output_dir / f"checkpoint-{step}"
    folder.mkdir(parents=True)
    if weights != "none":
        save_file({"layer.weight": torch.zeros(64, 64)}, folder / "model.safetensors")
    if weights == "cut":
        data = (folder / "model.safetensors").read_bytes()
        (folder / "model.safetensors").write_bytes(data[: len(data) // 2])
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": step, "log_history": []}))
    return folder


def test_resume_last_skips_nothing_that_reads_and_takes_the_newest(tmp_path):
    checkpoint(tmp_path, 2)
    newest = checkpoint(tmp_path, 10)
    assert resolve_resume("last", str(tmp_path)) == str(newest)  # by step, not by name: 10 after 2


@pytest.mark.parametrize("given", ["last", "folder"])
def test_a_checkpoint_whose_weights_are_cut_short_is_refused_naming_the_previous_readable_one(tmp_path, given):
    """`last` took the newest checkpoint even when its weights did not read, and the run failed after loading the
    model, without a word about the checkpoint before it (issue 71, item 9)."""
    readable = checkpoint(tmp_path, 2)
    checkpoint(tmp_path, 4, weights="cut")
    cut = checkpoint(tmp_path, 6, weights="cut")
    with pytest.raises(UserError) as refused:
        resolve_resume("last" if given == "last" else str(cut), str(tmp_path))
    message = str(refused.value)
    assert message.startswith(
        f"--resume_from_checkpoint {'last' if given == 'last' else cut}: {cut / 'model.safetensors'} cannot be read ("
    )
    assert message.endswith(
        f"the file is damaged or cut short; resume from the newest readable checkpoint: --resume_from_checkpoint "
        f"{readable}"
    )


def test_with_no_readable_checkpoint_left_the_line_says_to_start_over(tmp_path):
    cut = checkpoint(tmp_path, 3, weights="cut")
    with pytest.raises(UserError, match="no checkpoint of .* reads: drop --resume_from_checkpoint to start over"):
        resolve_resume(str(cut), str(tmp_path))


@pytest.mark.parametrize(
    "began, ended, expected",
    [
        (0, 27, "trained 27 steps in 1.5 s"),  # a fresh run
        (25, 27, "trained 2 steps in 1.5 s (resumed at step 25; now at 27)"),  # resumed: this run's steps
        (27, 27, "trained no steps in 1.5 s (resumed at step 27, the last)"),  # resumed at --max_steps
        (26, 27, "trained 1 step in 1.5 s (resumed at step 26; now at 27)"),
    ],
)
def test_the_closing_line_counts_the_steps_this_run_trained(began, ended, expected):
    """After a resume the line counted the whole run's steps: "trained 27 steps in 1.5 s" when 2 ran (issue 71,
    item 9)."""
    lines = StepLines()
    lines.start(began)
    assert lines.line({"train_runtime": 1.5}, ended, 27) == expected
