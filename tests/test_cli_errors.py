"""Every command line turns a user's mistake into one `error: ...` line and exit code 2, before any model loads, and
keeps the traceback of a real bug (or of any error with R1_GUI_TRACEBACK=1). Each case is the command a user types."""

import os
import runpy
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from r1_gui import rewards

REPO = Path(__file__).resolve().parents[1]
GRPO_RECIPE = REPO / "local_scripts" / "tiny_cpu_grpo.yaml"
SFT_RECIPE = REPO / "local_scripts" / "tiny_cpu_sft.yaml"


@pytest.fixture
def no_model_loading(monkeypatch):
    from transformers import AutoModelForImageTextToText

    def refuse(*args, **kwargs):
        raise AssertionError("the model was loaded before the user's error was reported")

    monkeypatch.setattr(AutoModelForImageTextToText, "from_pretrained", refuse)


@pytest.fixture
def command(monkeypatch, capsys):
    """`python <script> args...` or `python -m <module> args...`, run in this process (the libraries are already
    imported, so each case takes a moment): returns (exit code, stderr)."""

    def run(target: str, *argv) -> tuple[int, str]:
        monkeypatch.setattr(sys, "argv", [target, *map(str, argv)])
        monkeypatch.delenv("R1_GUI_TRACEBACK", raising=False)
        with pytest.raises(SystemExit) as exit_info:
            if target.endswith(".py"):
                runpy.run_path(str(REPO / target), run_name="__main__")
            else:
                runpy.run_module(target, run_name="__main__", alter_sys=True)
        return exit_info.value.code, capsys.readouterr().err

    return run


def assert_one_error_line(code, stderr, *fragments):
    lines = [line for line in stderr.splitlines() if line.startswith("error: ")]
    assert code == 2, stderr
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


@pytest.fixture
def grpo_argv(tiny_qwen2_vl, synthetic_dataset, tmp_path):
    return [
        *("--config", GRPO_RECIPE, "--model_name_or_path", tiny_qwen2_vl),
        *("--dataset_name", synthetic_dataset, "--output_dir", tmp_path / "out"),
    ]


def broken_dataset(synthetic_dataset, folder: Path, **changes) -> Path:
    """A copy of the synthetic train split with some cells changed: {column: {row: value}}."""
    folder.mkdir()
    frame = pd.read_parquet(synthetic_dataset / "train.parquet")
    for column, rows in changes.items():
        for row, value in rows.items():
            frame.loc[row, column] = value
    frame.to_parquet(folder / "train.parquet")
    return folder


@pytest.mark.parametrize(
    "extra, fragments",
    [
        (["--per_device_train_batch_size", "3", "--num_generations", "2"], ["not divisible by num_generations"]),
        (["--reward_funcs", "accurasy"], ["unknown reward(s) ['accurasy']", "action_match"]),
        (["--reward_weights", "1", "2", "3"], ["--reward_weights has 3 values for 2 reward functions"]),
        (["--reward_kwargs", "{accuracy: 1"], ["--reward_kwargs is not valid JSON"]),
        (["--prompt_style", "nope"], ["unknown prompt style 'nope'"]),
        (["--coordinates", "nope"], ["--coordinates must be auto or one of"]),
        (["--num_generation", "4"], ["--num_generation", "did you mean --num_generations"]),
        (["--config", "local_scripts/nope.yaml"], ["--config is given 2 times", "grpo.yaml, local_scripts/nope"]),
        (["--config=local_scripts/nope.yaml"], ["--config is given 2 times"]),
        (["--config"], ["--config needs the path of a YAML recipe"]),
    ],
    ids=[
        "batch",
        "unknown-reward",
        "reward-weights",
        "reward-kwargs-json",
        "style",
        "coordinates",
        "flag",
        "second-config",
        "second-config-equals",
        "config-without-path",
    ],
)
def test_grpo_setting_errors_are_one_line(command, grpo_argv, no_model_loading, extra, fragments):
    assert_one_error_line(*command("src/r1_gui/grpo_gui.py", *grpo_argv, *extra), *fragments)


def test_a_missing_recipe_is_one_line(command, grpo_argv, no_model_loading):
    argv = ["local_scripts/nope.yaml" if arg == GRPO_RECIPE else arg for arg in grpo_argv]
    assert_one_error_line(*command("src/r1_gui/grpo_gui.py", *argv), "nope.yaml")


def test_config_equals_recipe_is_read_as_the_recipe(grpo_argv):
    from r1_gui.training.grpo import parse_grpo_arguments

    at = grpo_argv.index("--config")
    argv = [*grpo_argv[:at], f"--config={GRPO_RECIPE}", *grpo_argv[at + 2 :]]
    script_args, training_args, _ = parse_grpo_arguments(argv)
    assert training_args.num_generations == 4 and script_args.max_pixels == 50176  # the recipe's values


def test_a_recipe_value_outside_the_choices_is_one_line(command, grpo_argv, tmp_path, no_model_loading):
    """argparse checks a flag's choices; a YAML recipe's value is checked by the settings themselves."""
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(GRPO_RECIPE.read_text() + "vision_attention: fast\n")
    argv = [recipe if arg == GRPO_RECIPE else arg for arg in grpo_argv]
    code, stderr = command("src/r1_gui/grpo_gui.py", *argv)
    assert_one_error_line(code, stderr, "--vision_attention must be one of auto, batched_windows, model, got 'fast'")


def test_grpo_missing_image_is_one_line(command, grpo_argv, synthetic_dataset, tmp_path, no_model_loading):
    broken = broken_dataset(synthetic_dataset, tmp_path / "broken", image={3: "/nonexistent/screen.png"})
    code, stderr = command("src/r1_gui/grpo_gui.py", *grpo_argv, "--dataset_name", broken)
    assert_one_error_line(code, stderr, "row 3", "/nonexistent/screen.png")


def test_sft_setting_errors_are_one_line(command, tiny_qwen2_vl, synthetic_dataset, tmp_path, no_model_loading):
    argv = ["--config", SFT_RECIPE, "--model_name_or_path", tiny_qwen2_vl, "--dataset_name", synthetic_dataset]
    code, stderr = command("src/r1_gui/sft.py", *argv, "--output_dir", tmp_path, "--prompt_style", "nope")
    assert_one_error_line(code, stderr, "unknown prompt style 'nope'")


def test_a_bug_inside_training_keeps_its_traceback(command, grpo_argv, monkeypatch):
    def broken_reward(completions, **kwargs):
        raise ValueError("a bug in a reward")

    monkeypatch.setitem(rewards.REWARD_FUNCS, "broken", broken_reward)
    with pytest.raises(ValueError, match="a bug in a reward"):
        command("src/r1_gui/grpo_gui.py", *grpo_argv, "--reward_funcs", "broken", "--max_steps", "1")


def test_make_synthetic_errors_are_one_line(command, tmp_path):
    code, stderr = command("dataset/make_synthetic.py", "--output_dir", tmp_path / "raw", "--episodes", "1",
                           "--width", "10")  # fmt: skip
    assert_one_error_line(code, stderr, "width and height must be at least 64 pixels")
    (tmp_path / "a-file").write_text("x")
    code, stderr = command("dataset/make_synthetic.py", "--output_dir", tmp_path / "a-file", "--episodes", "1")
    assert_one_error_line(code, stderr, "a-file exists and is not a folder")


def test_demo_output_dir_that_is_a_file_is_one_line(command, tmp_path):
    (tmp_path / "a-file").write_text("x")
    code, stderr = command("r1_gui.demo", "--output_dir", tmp_path / "a-file", "--fast")
    assert_one_error_line(code, stderr, "a-file")


def test_tiny_out_that_is_a_file_is_one_line(command, tmp_path):
    (tmp_path / "a-file").write_text("x")
    code, stderr = command("r1_gui.tiny", "--out", tmp_path / "a-file")
    assert_one_error_line(code, stderr, "a-file")


def test_builder_and_eval_errors_exit_2(command, synthetic_raw, tmp_path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    code, stderr = command("dataset/raw_load_data.py", "--input", synthetic_raw / "synthetic-l1.json",
                           "--output_dir", tmp_path / "full", "--no_progress")  # fmt: skip
    assert_one_error_line(code, stderr, "is not empty; pass --overwrite")
    code, stderr = command("eval/test_aitw.py", "--predictions", tmp_path / "p.jsonl",
                           "--dataset", tmp_path / "nothing", "--output_dir", tmp_path / "o")  # fmt: skip
    assert_one_error_line(code, stderr, "nothing")


def test_as_a_process_and_with_the_traceback_variable(grpo_argv, tmp_path):
    """The real command: exit code 2 and one line; R1_GUI_TRACEBACK=1 shows the traceback instead."""
    argv = [sys.executable, "src/r1_gui/grpo_gui.py", *map(str, grpo_argv), "--reward_funcs", "accurasy"]
    env = {key: value for key, value in os.environ.items() if key != "R1_GUI_TRACEBACK"}
    result = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=300, env=env)
    assert_one_error_line(result.returncode, result.stderr, "unknown reward(s) ['accurasy']")
    shown = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=300,
                           env={**env, "R1_GUI_TRACEBACK": "1"})  # fmt: skip
    assert shown.returncode == 1 and "Traceback" in shown.stderr and "accurasy" in shown.stderr
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------------------------------------------------------
# Local paths and Hub ids (item 5): a name that cannot be loaded is named in one line before anything loads.


@pytest.mark.parametrize("flag", ["--dataset_name", "--model_name_or_path"])
def test_grpo_missing_local_folder_is_named(command, grpo_argv, tmp_path, monkeypatch, no_model_loading, flag):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    (tmp_path / "models").mkdir()
    name = "data/nope" if flag == "--dataset_name" else "models/nope"
    code, stderr = command("src/r1_gui/grpo_gui.py", *grpo_argv, flag, name)
    assert_one_error_line(code, stderr, f"{flag} {name}: no such local folder", "HF_HUB_OFFLINE is set")


@pytest.mark.parametrize("flag", ["--dataset_name", "--model_name_or_path"])
def test_grpo_hub_id_offline_and_not_cached_is_named(command, grpo_argv, tmp_path, monkeypatch, no_model_loading, flag):
    monkeypatch.chdir(tmp_path)  # no data/ or models/ folder here: the names read as Hub ids
    name = "data/nope" if flag == "--dataset_name" else "models/nope"
    code, stderr = command("src/r1_gui/grpo_gui.py", *grpo_argv, flag, name)
    assert_one_error_line(code, stderr, f"{flag} {name}: no such local folder", "cannot be fetched")


def test_sft_missing_dataset_folder_is_named(command, tiny_qwen2_vl, tmp_path, monkeypatch, no_model_loading):
    monkeypatch.chdir(tmp_path)
    argv = ["--config", SFT_RECIPE, "--model_name_or_path", tiny_qwen2_vl, "--output_dir", tmp_path / "out"]
    code, stderr = command("src/r1_gui/sft.py", *argv, "--dataset_name", "./data/nope")
    assert_one_error_line(code, stderr, "--dataset_name ./data/nope: no such local folder")


def test_eval_missing_dataset_and_model_are_named(command, synthetic_dataset, tiny_qwen2_vl, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    (tmp_path / "models").mkdir()
    common = ["--output_dir", tmp_path / "o", "--max_samples", "1"]
    code, stderr = command("eval/test_aitw.py", "--model_name_or_path", tiny_qwen2_vl, "--dataset", "data/nope",
                           *common)  # fmt: skip
    assert_one_error_line(code, stderr, "data/nope: no such local folder", "HF_HUB_OFFLINE is set")
    code, stderr = command("eval/test_aitw.py", "--model_name_or_path", "models/nope", "--dataset",
                           synthetic_dataset, *common)  # fmt: skip
    assert_one_error_line(code, stderr, "--model_name_or_path models/nope: no such local folder")


# ---------------------------------------------------------------------------------------------------------------
# --resume_from_checkpoint (item 4): checked before the model loads; `last` needs a checkpoint.


@pytest.mark.parametrize("script", ["src/r1_gui/grpo_gui.py", "src/r1_gui/sft.py"])
def test_resume_last_without_a_checkpoint_names_the_folder(command, tiny_qwen2_vl, synthetic_dataset, tmp_path,
                                                           no_model_loading, script):  # fmt: skip
    recipe = GRPO_RECIPE if "grpo" in script else SFT_RECIPE
    out = tmp_path / "finished"
    out.mkdir()
    (out / "model.safetensors").write_text("a finished model that a silent fresh run would overwrite")
    argv = ["--config", recipe, "--model_name_or_path", tiny_qwen2_vl, "--dataset_name", synthetic_dataset]
    code, stderr = command(script, *argv, "--output_dir", out, "--resume_from_checkpoint", "last")
    assert_one_error_line(code, stderr, f"--resume_from_checkpoint last: {out} holds no checkpoint")
    code, stderr = command(script, *argv, "--output_dir", out, "--resume_from_checkpoint", out / "checkpoint-20")
    assert_one_error_line(code, stderr, f"--resume_from_checkpoint {out / 'checkpoint-20'}: no such checkpoint")
    (out / "checkpoint-20").mkdir()  # what a kill while saving leaves: the weights, no trainer_state.json
    (out / "checkpoint-20" / "model.safetensors").write_text("half written")
    code, stderr = command(script, *argv, "--output_dir", out, "--resume_from_checkpoint", "last")
    assert_one_error_line(code, stderr, f"--resume_from_checkpoint last: {out} holds no complete checkpoint-N folder",
                          "checkpoint-20: no trainer_state.json, a save cut short")  # fmt: skip


# ---------------------------------------------------------------------------------------------------------------
# Smaller items (7): unparseable ground truths, --help.


def test_solutions_that_do_not_parse_fail_before_training(command, grpo_argv, synthetic_dataset, tmp_path,
                                                          no_model_loading):  # fmt: skip
    """Every reward would score those rows 0 whatever the model says; the run must not start."""
    broken = broken_dataset(synthetic_dataset, tmp_path / "broken", solution={2: "tap the thing", 5: ""})
    ids = pd.read_parquet(broken / "train.parquet")["id"]
    code, stderr = command("src/r1_gui/grpo_gui.py", *grpo_argv, "--dataset_name", broken)
    assert_one_error_line(code, stderr, "2 of", "does not parse", f"row 2 (id {ids[2]!r})", f"row 5 (id {ids[5]!r})")


def option_help(text: str, name: str) -> str:
    """The help paragraph of --name in argparse's --help text, on one line."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"  --{name} "))
    end = next(i for i in range(start + 1, len(lines)) if not lines[i].startswith("   "))
    return " ".join(" ".join(lines[start + 1 : end]).split())


def test_grpo_help_puts_r1_gui_first_with_the_reward_names_and_last(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["grpo_gui.py", "--help"])
    with pytest.raises(SystemExit) as exit_info:
        runpy.run_path(str(REPO / "src/r1_gui/grpo_gui.py"), run_name="__main__")
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    headings = [line for line in text.splitlines() if line and not line[0].isspace() and line.endswith(":")]
    assert headings[0] == "options:" and headings[1].startswith("r1_gui"), headings
    assert [h.split(":")[0] for h in headings[2:]] == ["trl.GRPOConfig", "trl.ModelConfig"], headings
    r1_gui_section = text.split(headings[1])[1].split(headings[2])[0]
    assert "--reward_funcs" in r1_gui_section and "--dataset_name" in r1_gui_section
    assert "--learning_rate" not in r1_gui_section
    reward_help = option_help(r1_gui_section, "reward_funcs")
    assert all(name in reward_help for name in rewards.REWARD_FUNCS), reward_help
    assert "`last`" in option_help(text, "resume_from_checkpoint")
    assert text.index(headings[1]) < 40 * 80, "the usage line lists every option again before the groups"
