"""--average_last_steps (r1_gui.training.weight_average): the saved weights are the mean of the trainable weights
after each of the last N optimizer steps; a run resumed inside that tail goes on from the sums saved with its
checkpoint; bad settings say which flag to change. Hand-computed tables on a two-parameter model, then grpo_gui.py
on the tiny model."""

import shutil

import pytest
import torch
from safetensors.torch import load_file
from transformers import TrainerControl, TrainerState, TrainingArguments

from r1_gui.cli_errors import UserError
from r1_gui.training.grpo import parse_grpo_arguments
from r1_gui.training.weight_average import SUMS_FILE, TailWeightAverage


class TwoWeights(torch.nn.Module):
    """One trainable weight and one frozen one (a LoRA run's base weights: never averaged)."""

    def __init__(self):
        super().__init__()
        self.trained = torch.nn.Parameter(torch.zeros(2))
        self.frozen = torch.nn.Parameter(torch.full((2,), 7.0), requires_grad=False)


def train(callback, model, values, max_steps, output_dir, start_step=0, save_at=()):
    """Drive the callback as the Trainer does: the weights after step k are values[k - 1] (both elements)."""
    args = TrainingArguments(output_dir=str(output_dir), report_to="none", use_cpu=True)
    state, control = TrainerState(), TrainerControl()
    state.max_steps, state.global_step = max_steps, start_step
    callback.on_train_begin(args, state, control, model=model)
    for step in range(start_step + 1, max_steps + 1):
        with torch.no_grad():
            model.trained.fill_(values[step - 1])
        state.global_step = step
        callback.on_step_end(args, state, control, model=model)
        if step in save_at:
            (output_dir / f"checkpoint-{step}").mkdir(parents=True)
            callback.on_save(args, state, control, model=model)
    callback.on_train_end(args, state, control, model=model)
    return model.trained.tolist()


@pytest.mark.parametrize(
    "steps, values, expected",
    [
        (1, [1.0, 2.0, 3.0, 4.0], 4.0),  # the last step alone: what a run without the flag saves
        (2, [1.0, 2.0, 3.0, 4.0], 3.5),  # steps 3 and 4
        (4, [1.0, 2.0, 3.0, 4.0], 2.5),  # every step
        (3, [9.0, 0.5, -1.0, 2.0], 0.5),  # steps 2-4: (0.5 - 1 + 2) / 3; step 1 left out
        (2, [0.0, 0.0, 1e-8, 3e-8], 2e-8),  # tiny updates are not lost in the float32 sums
    ],
)
def test_the_model_ends_with_the_mean_of_the_last_steps(steps, values, expected, tmp_path):
    model = TwoWeights()
    assert train(TailWeightAverage(steps), model, values, len(values), tmp_path) == pytest.approx([expected] * 2)
    assert model.frozen.tolist() == [7.0, 7.0]  # frozen weights are not averaged


@pytest.mark.parametrize("stop_at", [2, 3, 4])  # before the tail, at its first step, inside it
def test_a_run_resumed_from_a_checkpoint_saves_the_same_mean(stop_at, tmp_path):
    values = [1.0, 2.0, 3.0, 4.0, 5.0]
    whole = train(TailWeightAverage(3), TwoWeights(), values, 5, tmp_path / "whole")  # steps 3-5: 4.0
    first = TailWeightAverage(3)
    args = TrainingArguments(output_dir=str(tmp_path / "cut"), report_to="none", use_cpu=True)
    state, control, model = TrainerState(), TrainerControl(), TwoWeights()
    state.max_steps = 5
    first.on_train_begin(args, state, control, model=model)
    for step in range(1, stop_at + 1):
        model.trained.data.fill_(values[step - 1])
        state.global_step = step
        first.on_step_end(args, state, control, model=model)
    (tmp_path / "cut" / f"checkpoint-{stop_at}").mkdir(parents=True)
    first.on_save(args, state, control, model=model)
    assert (tmp_path / "cut" / f"checkpoint-{stop_at}" / SUMS_FILE).is_file() == (stop_at >= 3)
    resumed = TailWeightAverage(3)
    resumed.resume_from = str(tmp_path / "cut" / f"checkpoint-{stop_at}")
    model = TwoWeights()
    model.trained.data.fill_(values[stop_at - 1])
    assert train(resumed, model, values, 5, tmp_path / "cut", start_step=stop_at) == whole == [4.0, 4.0]


def test_bad_settings_say_which_flag_to_change(tmp_path):
    with pytest.raises(UserError, match=r"--average_last_steps must be 1 or more"):
        TailWeightAverage(0)
    # more steps than the run has (a run whose length comes from epochs, known only when training begins)
    with pytest.raises(UserError, match=r"--average_last_steps 5 is more than the run's 4 optimizer steps"):
        train(TailWeightAverage(5), TwoWeights(), [1.0] * 4, 4, tmp_path)
    # resumed inside the tail from a checkpoint without the sums (saved without the flag)
    callback = TailWeightAverage(2)
    callback.resume_from = str(tmp_path / "checkpoint-3")
    with pytest.raises(
        UserError, match=r"resumes at step 3, inside the last 2 steps .*\(from step 3\), but .* is missing"
    ):
        train(callback, TwoWeights(), [1.0] * 4, 4, tmp_path, start_step=3)
    # the sums of another tail (--average_last_steps changed since the checkpoint was saved)
    saver = TailWeightAverage(3)
    train(saver, TwoWeights(), [1.0, 2.0, 3.0, 4.0], 4, tmp_path / "a", save_at=(3,))
    callback = TailWeightAverage(2)
    callback.resume_from = str(tmp_path / "a" / "checkpoint-3")
    with pytest.raises(UserError, match=r"holds the sum of 2 steps from step 2, but this run averages from step 3"):
        train(callback, TwoWeights(), [1.0] * 4, 4, tmp_path / "b", start_step=3)


@pytest.mark.parametrize("value", ["-1", "4"])
def test_the_config_refuses_a_tail_the_run_cannot_have(value, tmp_path):
    argv = ["--output_dir", str(tmp_path), "--max_steps", "3", "--average_last_steps", value, "--use_cpu", "true"]
    with pytest.raises(ValueError, match=rf"--average_last_steps {value}: give 0 .* from 1 to --max_steps \(3\)"):
        parse_grpo_arguments(argv)


def trained_tensors(folder):
    return load_file(folder / "model.safetensors")


@pytest.mark.slow
def test_grpo_gui_saves_the_mean_of_the_last_checkpoints_and_resumes_into_it(
    tiny_qwen2_vl, synthetic_dataset, tmp_path, monkeypatch
):
    """grpo_gui.py with --average_last_steps 2 over 3 steps, a checkpoint every step: the saved model is the mean
    of checkpoint-2's and checkpoint-3's weights (each the live weights of its step); resumed from checkpoint-2, the
    run saves the mean of that checkpoint and its own step 3."""
    from test_grpo import digit_fraction, run_grpo

    from r1_gui import rewards

    monkeypatch.setitem(rewards.REWARD_FUNCS, "digit_fraction", digit_fraction)  # a reward with spread: weights move
    flags = ("--reward_funcs", "digit_fraction", "--save_strategy", "steps", "--save_steps", "1")
    flags += ("--average_last_steps", "2", "--learning_rate", "1e-3")
    run_grpo(tiny_qwen2_vl, synthetic_dataset, tmp_path, "--max_steps", "3", *flags)
    saved, two, three = (trained_tensors(f) for f in (tmp_path, tmp_path / "checkpoint-2", tmp_path / "checkpoint-3"))
    moved = [name for name in saved if not torch.equal(two[name], three[name])]
    assert moved, "step 3 moved no weight: the test could not tell a mean from the last step"
    for name in saved:
        assert torch.allclose(saved[name], (two[name] + three[name]) / 2, rtol=1e-6, atol=1e-7), name
    assert not all(torch.equal(saved[name], three[name]) for name in moved)
    assert (tmp_path / "checkpoint-2" / SUMS_FILE).is_file() and not (tmp_path / "checkpoint-1" / SUMS_FILE).exists()

    resumed = tmp_path / "resumed"
    resumed.mkdir()
    shutil.copytree(tmp_path / "checkpoint-2", resumed / "checkpoint-2")
    state = run_grpo(tiny_qwen2_vl, synthetic_dataset, resumed, "--max_steps", "3", *flags,
                     "--resume_from_checkpoint", "last")  # fmt: skip
    assert state["global_step"] == 3
    saved, three = trained_tensors(resumed), trained_tensors(resumed / "checkpoint-3")
    for name in saved:
        assert torch.allclose(saved[name], (two[name] + three[name]) / 2, rtol=1e-6, atol=1e-7), name
