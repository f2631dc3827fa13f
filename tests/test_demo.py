"""The embedded default (python -m r1_gui.demo): its fast variant runs every stage and writes every artifact."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from r1_gui.demo import HEADLINE, DemoConfig, build_data, comparison_table, evaluate_model
from r1_gui.visualize import moving_average

REPO = Path(__file__).resolve().parents[1]
METRICS = ("action_match_accuracy", "type_accuracy", "param_accuracy", "parse_rate", "step_success", "num_samples")


def test_comparison_table_shows_percent_and_signed_change():
    warm = dict.fromkeys(HEADLINE, 0.25)
    grpo = {**warm, "action_match_accuracy": 0.5, "parse_rate": 0.125}
    lines = comparison_table(warm, grpo).splitlines()
    assert lines[0].startswith("| metric | warm start (SFT) | after GRPO | change |")
    assert "| action_match_accuracy | 25.0 | 50.0 | +25.0 |" in lines
    assert "| parse_rate | 25.0 | 12.5 | -12.5 |" in lines


@pytest.mark.parametrize(
    ("values", "window", "expected"),
    [
        ([1.0, 0.0, 1.0, 0.0], 2, [1.0, 0.5, 0.5, 0.5]),
        ([1.0, 0.0, 1.0], 1, [1.0, 0.0, 1.0]),
        ([0.0, 1.0, 1.0], 10, [0.0, 0.5, 2 / 3]),  # fewer values than the window at the start
        ([None, 1.0, None, 0.0], 2, [None, 1.0, None, 0.0]),  # a step that logged no value stays a gap
        ([], 3, []),
    ],
)
def test_moving_average(values, window, expected):
    assert moving_average(values, window) == pytest.approx(expected)


def test_fast_config_is_a_smaller_run_of_the_same_pipeline():
    full, fast = DemoConfig(), DemoConfig.fast()
    assert fast.sft_steps < full.sft_steps and fast.grpo_steps < full.grpo_steps
    assert fast.reward_funcs == full.reward_funcs == ("step_success",)  # the evaluation's own matching rule


def test_a_rerun_with_another_seed_evaluates_its_own_test_split(tiny_qwen2_vl, tmp_path):
    """Issue 24: `bash local_scripts/demo.sh --seed 1` after a seed-0 run into the same folder kept 5 of the 8
    seed-0 predictions (3 with another ground truth). Each run's data is rebuilt; its evaluation starts over."""
    import pyarrow.parquet as pq

    config = DemoConfig.fast()
    for seed in (0, 1):
        build_data(config, tmp_path, seed)
        metrics = evaluate_model(config, tiny_qwen2_vl, tmp_path, "eval_grpo")
        test_rows = pq.read_table(tmp_path / "data" / "test.parquet").to_pylist()[: config.eval_max_samples]
        lines = (tmp_path / "eval_grpo" / "predictions.jsonl").read_text().splitlines()
        records = [json.loads(line) for line in lines]
        assert [r["id"] for r in records] == [row["id"] for row in test_rows], seed
        assert [r["ground_truth"] for r in records] == [json.loads(row["action_json"]) for row in test_rows], seed
        assert metrics["num_samples"] == len(test_rows)


@pytest.mark.slow
def test_fast_demo_writes_every_artifact(tmp_path):
    out = tmp_path / "demo"
    env = {**os.environ, "PYTHON": sys.executable}
    result = subprocess.run(
        ["bash", str(REPO / "local_scripts" / "demo.sh"), "--fast", "--output_dir", str(out), "--seed", "3"],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    for stage in range(1, 7):  # progress is shown stage by stage: when each starts, and how long it took
        assert f"[{stage}/6] " in result.stdout and f"[{stage}/6] done in " in result.stdout
    assert "| action_match_accuracy |" in result.stdout  # the before/after table at the end

    report = json.loads((out / "report.json").read_text())
    assert report["seed"] == 3
    for name in ("warm_start", "grpo"):
        metrics = report[name]
        assert set(METRICS) <= set(metrics)
        assert metrics["num_samples"] == DemoConfig.fast().eval_max_samples
        assert all(0.0 <= metrics[key] <= 1.0 for key in HEADLINE)
        # the same metrics eval/test_aitw.py writes for that model
        assert json.loads((out / f"eval_{name}" / "metrics.json").read_text()) == metrics
    for key in HEADLINE:
        assert report["improvement"][key] == pytest.approx(report["grpo"][key] - report["warm_start"][key])
    assert [row["step"] for row in report["reward_curve"]] == list(range(1, DemoConfig.fast().grpo_steps + 1))
    assert all("rewards/step_success/mean" in row for row in report["reward_curve"])
    assert report["data"]["train"] > 0 and report["data"]["test"] > 0
    assert report["model"]["parameters"] > 0 and report["seconds"]["total"] > 0

    markdown = (out / "report.md").read_text()
    assert "| action_match_accuracy |" in markdown and "reward_curve.png" in markdown
    with Image.open(out / "reward_curve.png") as picture:
        assert picture.format == "PNG" and picture.width > 100 and picture.height > 100


@pytest.mark.parametrize(
    "argv, arch, multi_turn",
    [
        ([], "qwen2_vl", False),  # the default: the model the README's figures were measured on
        (["--arch", "qwen3_vl"], "qwen3_vl", False),
        (["--arch", "qwen3_vl", "--multi_turn"], "qwen3_vl", True),
    ],
)
def test_the_arch_flag_picks_the_demo_models_architecture(argv, arch, multi_turn, tmp_path, monkeypatch):
    from r1_gui import demo
    from r1_gui.multi_turn import demo as multi_turn_demo

    seen = {}

    def single_step(output_dir, seed, config):
        seen["arch"] = config.arch
        metrics = dict.fromkeys(HEADLINE, 0.0) | {"num_samples": 1}
        return {"warm_start": metrics, "grpo": metrics, "seconds": {"total": 1.0}}

    def several_turns(output_dir, seed, config):
        seen["arch"] = config.arch
        Path(output_dir).mkdir(parents=True, exist_ok=True)  # the demo holds it already (r1_gui.output_lock)
        Path(output_dir, "report.md").write_text("table\n")

    monkeypatch.setattr(demo, "run_demo", single_step)
    monkeypatch.setattr(multi_turn_demo, "run_multi_turn_demo", several_turns)
    demo.main(["--output_dir", str(tmp_path / "out"), "--fast", *argv])
    assert seen == {"arch": arch}
    assert (tmp_path / "out" / "report.md").is_file() == multi_turn


def test_demo_script_refuses_without_the_package(tmp_path):
    env = {**os.environ, "PYTHON": str(tmp_path / "no-python")}
    (tmp_path / "no-python").write_text("#!/bin/sh\nexit 1\n")
    (tmp_path / "no-python").chmod(0o755)
    result = subprocess.run(
        ["bash", str(REPO / "local_scripts" / "demo.sh")], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2 and "bash setup.sh" in result.stderr


def test_a_one_step_reward_curve_is_not_empty(tmp_path):
    """Issue 34 item 13: the multi-turn --fast run (one GRPO step) drew an empty reward_curve.png."""
    import numpy as np

    from r1_gui.visualize import reward_curve

    state = {"log_history": [{"step": 1, "reward": 0.5, "rewards/task_success/mean": 0.5,
                              "episodes/turn_parse_rate": 1.0}]}  # fmt: skip
    (tmp_path / "trainer_state.json").write_text(json.dumps(state))
    rows = reward_curve(tmp_path, tmp_path / "curve.png")
    assert len(rows) == 1
    with Image.open(tmp_path / "curve.png") as picture:
        pixels = np.asarray(picture.convert("RGB")).astype(int)
    colored = (pixels.max(axis=2) - pixels.min(axis=2)) > 60  # the series' colors, not white, grey or black
    height, width = colored.shape
    middle = colored[
        height // 2 - 40 : height // 2 + 40, width // 2 - 40 : width // 2 + 40
    ]  # step 1 at 0.5: the middle
    assert middle.sum() > 20, "the one step's point is drawn (the legend alone is not)"


def test_r1_gui_plot_draws_a_runs_reward_and_success_curves(tmp_path, capsys):
    """Only the demos drew reward_curve.png; a normal run had no picture of its rewards and TensorBoard is not
    installed (issue 71, item 12). `r1-gui-plot RUN` draws them from the run's log, a checkpoint's while it trains."""
    from r1_gui.visualize import main

    run = tmp_path / "run"
    (run / "checkpoint-2").mkdir(parents=True)
    rows = [{"step": step, "reward": 0.25 * step, "rewards/task_success/mean": 0.25 * step,
             "episodes/success_rate": 0.25 * step, "episodes/turn_parse_rate": 1.0} for step in (1, 2)]  # fmt: skip
    (run / "checkpoint-2" / "trainer_state.json").write_text(json.dumps({"log_history": [*rows, {"loss": 0.1}]}))
    assert main([str(run)]) == rows  # still training: the newest checkpoint's log
    with Image.open(run / "reward_curve.png") as picture:
        assert picture.size[0] > 400
    assert capsys.readouterr().out.startswith(f"wrote {run / 'reward_curve.png'}: 2 logged steps of ")
    (run / "trainer_state.json").write_text(json.dumps({"log_history": [{"loss": 0.3, "step": 1}]}))  # SFT's log
    for target, said in ((run, "logs no step with a reward"), (tmp_path / "nothing", "holds no trainer_state.json")):
        with pytest.raises(SystemExit) as refused:
            main([str(target)])
        assert refused.value.code == 2 and said in capsys.readouterr().err
