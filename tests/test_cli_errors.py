"""Every command line turns a user's mistake into one `error: ...` line and exit code 2, before any model loads, and
keeps the traceback of a real bug (or of any error with R1_GUI_TRACEBACK=1). Each case is the command a user types."""

import json
import os
import re
import runpy
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
from test_extending import write_reward_module

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
        (["--reward_funcs", "accurasy"], ["unknown reward(s) ['accurasy']", "step_success"]),
        (["--reward_weights", "1", "2", "3"], ["--reward_weights has 3 values for 2 reward functions"]),
        (["--reward_kwargs", "{accuracy: 1"], ["--reward_kwargs is not valid JSON"]),
        (["--prompt_style", "nope"], ["unknown prompt style 'nope'"]),
        (["--coordinates", "nope"], ["--coordinates must be one of auto, normalized"]),
        (["--num_generation", "4"], ["--num_generation", "did you mean --num_generations"]),
        (["--config", "local_scripts/nope.yaml"], ["--config is given 2 times", "grpo.yaml, local_scripts/nope"]),
        (["--config=local_scripts/nope.yaml"], ["--config is given 2 times"]),
        (["--config"], ["--config needs the path of a YAML recipe"]),
        (["--average_last_steps", "9"], ["--average_last_steps 9: give 0", "from 1 to --max_steps (4)"]),
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
        "average-more-steps-than-the-run",
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
    """argparse checks a flag's choices; a YAML recipe's value is checked by the settings themselves, and the line
    says where the value came from (issue 71 item 10: it read as if typed)."""
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(GRPO_RECIPE.read_text() + "vision_attention: fast\n")
    argv = [recipe if arg == GRPO_RECIPE else arg for arg in grpo_argv]
    code, stderr = command("src/r1_gui/grpo_gui.py", *argv)
    assert_one_error_line(code, stderr, f"--vision_attention (from --config {recipe}) must be one of auto, "
                          "batched_windows, model, got 'fast'")  # fmt: skip


def test_grpo_missing_image_is_one_line(command, grpo_argv, synthetic_dataset, tmp_path, no_model_loading):
    broken = broken_dataset(synthetic_dataset, tmp_path / "broken", image={3: "/nonexistent/screen.png"})
    code, stderr = command("src/r1_gui/grpo_gui.py", *grpo_argv, "--dataset_name", broken)
    assert_one_error_line(code, stderr, "row 3", "/nonexistent/screen.png")


def test_sft_setting_errors_are_one_line(command, tiny_qwen2_vl, synthetic_dataset, tmp_path, no_model_loading):
    argv = ["--config", SFT_RECIPE, "--model_name_or_path", tiny_qwen2_vl, "--dataset_name", synthetic_dataset]
    code, stderr = command("src/r1_gui/sft.py", *argv, "--output_dir", tmp_path, "--prompt_style", "nope")
    assert_one_error_line(code, stderr, "unknown prompt style 'nope'")


def test_a_bug_inside_training_keeps_its_traceback(command, grpo_argv, monkeypatch):
    """(A reward of the user's that raises is the user's to fix: one line, tests/test_extending.py.)"""
    from r1_gui.training import trainer

    def broken(*args, **kwargs):
        raise ValueError("a bug in the trainer")

    monkeypatch.setattr(trainer, "no_signal_fraction", broken)  # called once a step, after the rewards
    with pytest.raises(ValueError, match="a bug in the trainer"):
        command("src/r1_gui/grpo_gui.py", *grpo_argv, "--max_steps", "1")


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


@pytest.mark.parametrize("mean, std", [("0.9", "0"), ("0.9", "-0.1"), ("nan", "0.1"), ("0.9", "inf")])
def test_tiny_pixel_norm_that_cannot_normalise_is_one_line(command, tmp_path, mean, std):
    code, stderr = command("r1_gui.tiny", "--out", tmp_path / "m", "--pixel_norm", mean, std)
    assert_one_error_line(code, stderr, "--pixel_norm: the mean must be a number and the std one above 0")
    assert not (tmp_path / "m").exists()  # nothing half-written


def test_builder_and_eval_errors_exit_2(command, synthetic_raw, tmp_path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    code, stderr = command("dataset/raw_load_data.py", "--input", synthetic_raw / "synthetic-l1.json",
                           "--output_dir", tmp_path / "full", "--no_progress")  # fmt: skip
    assert_one_error_line(code, stderr, "is not empty; pass --overwrite")
    code, stderr = command("eval/test_aitw.py", "--predictions", tmp_path / "p.jsonl",
                           "--dataset", tmp_path / "nothing", "--output_dir", tmp_path / "o")  # fmt: skip
    assert_one_error_line(code, stderr, "nothing")


def test_a_folder_for_a_file_and_a_missing_adapter_are_named_as_such(command, synthetic_raw, tmp_path):
    """The builder called a folder given as --input missing ("does not exist"); merge_lora said a missing folder
    "holds no adapter_config.json"."""
    code, stderr = command("dataset/raw_load_data.py", "--input", synthetic_raw, "--output_dir", tmp_path / "o")
    assert_first_error(code, stderr, f"--input {synthetic_raw} is a folder (it holds synthetic-l1.json, ")
    code, stderr = command("r1_gui.merge_lora", "--adapter", tmp_path / "nope", "--output_dir", tmp_path / "m")
    assert_first_error(code, stderr, f"--adapter {tmp_path / 'nope'}: no such folder")


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


def test_grpo_full_help_puts_r1_gui_first_with_the_reward_names_and_last(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["grpo_gui.py", "--help_trl"])
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


@pytest.mark.parametrize("script", ["src/r1_gui/grpo_gui.py", "src/r1_gui/sft.py"])
def test_short_help_lists_r1_guis_own_flags_and_says_where_the_rest_are(script):
    done = subprocess.run([sys.executable, script, "--help"], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) < 300 and "--help_trl" in lines[2] + lines[3]
    for flag in ("--dataset_name", "--prompt_style", "--model_name_or_path", "--output_dir", "--learning_rate"):
        assert f"  {flag}" in done.stdout, flag
    assert ("--reward_funcs" in done.stdout) == ("grpo" in script) and "--adam_beta1" not in done.stdout


@pytest.mark.parametrize("command", ["grpo", "sft"])
def test_the_flag_table_is_the_parsers(command):
    """The table the command lines check before importing trl (r1_gui's flags from their declarations, trl's from
    its cached parser) is what the real parser takes: every option string, the field it sets, the --no_X switches."""
    from r1_gui.training.args import command_parser_for
    from r1_gui.training.command_lines import command_table
    from r1_gui.training.grpo import GRPO_ARGUMENTS
    from r1_gui.training.sft import SFT_ARGUMENTS

    parser = command_parser_for({"grpo": GRPO_ARGUMENTS, "sft": SFT_ARGUMENTS}[command])
    actions = [action for action in parser._actions if action.dest != "help"]
    table = command_table(command)
    assert table["options"] == {option: action.dest for action in actions for option in action.option_strings}
    negations = [action for action in actions if action.option_strings[0] == f"--no_{action.dest}"]
    assert table["negations"] == sorted(option for action in negations for option in action.option_strings)


def test_trls_flag_table_is_built_once_per_version_and_again_when_unreadable(monkeypatch, tmp_path):
    """No table is kept in the repository: the first command line builds trl's from trl's parser into the user's
    cache, later ones read it; a cache cut short (a full disk) is built again."""
    from r1_gui.training import command_lines

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    path = command_lines.trl_cache_path()
    assert path.parent == tmp_path / "r1_gui" and "trl1.16.0" in path.name
    built = command_lines.trl_table()
    assert json.loads(path.read_text()) == json.loads(json.dumps(built))
    assert built["GRPOConfig"]["options"]["--num_generations"] == "num_generations"
    monkeypatch.setattr(command_lines, "build_trl_table", lambda: pytest.fail("the cached table was built again"))
    assert command_lines.trl_table() == json.loads(path.read_text())
    path.write_text(path.read_text()[:100])
    monkeypatch.undo()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert command_lines.trl_table() == built and json.loads(path.read_text()) == json.loads(json.dumps(built))


# The mistakes a user makes most, reported before torch or trl is imported (issue 54, items 3 and 5): each took
# 10-46 s (imports, then the Hub client's retries for data/nope) and the no-argument one was trl's bf16 error.
FAST = "import runpy, sys\nsys.argv = sys.argv[1:]\ntry:\n    runpy.run_path(sys.argv[0], run_name='__main__')\nfinally:\n    print('imported:', sorted(set(sys.modules) & {'torch', 'trl', 'transformers', 'datasets'}), file=sys.stderr)"


@pytest.mark.parametrize(
    "argv, first_line",
    [
        ([], "2 problems: (1) --model_name_or_path is missing: give a model folder"),
        (["--bogus", "1"], "3 problems: (1) unknown flag --bogus; (2) --model_name_or_path is missing"),
        (["--config", GRPO_RECIPE, "--learnin_rate", "1"], "3 problems: (1) unknown flag --learnin_rate (did you mean --learning_rate"),
        (["--model_name_or_path", "@MODEL"], "nothing to train on: give a dataset (--dataset_name DATA_FOLDER) or an"),
        (["--model_name_or_path", "@MODEL", "--dataset_name", "data/nope"], "--dataset_name data/nope: no such local folder"),
        (["--model_name_or_path", "models/nope", "--dataset_name", "@DATA"], "--model_name_or_path models/nope: no such local folder"),
        (["--config", "@RECIPE_TYPO"], "--config @RECIPE_TYPO: unknown key 'learnin_rate' (did you mean learning_rate?)"),
        (["--config", "@RECIPE_ENV"], "--config @RECIPE_ENV: `env: r1_gui/Phone-v0` is trl's entry for environment variables"),
    ],
    ids=["nothing", "unknown-flag", "close-flag", "no-data", "dataset-folder", "model-folder", "recipe-key", "recipe-env"],
)  # fmt: skip
def test_grpo_command_line_mistakes_fail_before_torch_is_imported(argv, first_line, tiny_qwen2_vl, synthetic_dataset,
                                                                  tmp_path):  # fmt: skip
    """As a user types them in a fresh clone (no data/ or models/ folder, HF_HUB_OFFLINE not set, the Hub out of
    reach): one error line listing every problem, and neither torch nor trl imported."""
    typo, env_key = tmp_path / "typo.yaml", tmp_path / "env.yaml"
    typo.write_text(GRPO_RECIPE.read_text() + "learnin_rate: 1.0e-4\n")
    env_key.write_text(GRPO_RECIPE.read_text() + "env: r1_gui/Phone-v0\n")
    names = {"@MODEL": tiny_qwen2_vl, "@DATA": synthetic_dataset, "@RECIPE_TYPO": typo, "@RECIPE_ENV": env_key}
    argv = [str(names.get(arg, arg)) for arg in argv]
    first_line = next((first_line.replace(k, str(v)) for k, v in names.items() if k in first_line), first_line)
    offline = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE", "R1_GUI_TRACEBACK")
    env = {key: value for key, value in os.environ.items() if key not in offline}
    done = subprocess.run([sys.executable, "-c", FAST, str(REPO / "src/r1_gui/grpo_gui.py"), *argv], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert_first_error(done.returncode, done.stderr, first_line)
    assert "imported: []" in done.stderr


@pytest.mark.parametrize(
    "layout, age_s, stale",
    [
        ("py311_cpu/deepspeed_shm_comm/lock", 3600, True),  # torch's default root: <root>/<python_device>/<name>
        ("deepspeed_shm_comm/lock", 3600, True),  # with TORCH_EXTENSIONS_DIR: <root>/<name>
        ("py311_cu128/cpu_adam/lock", 16 * 60, True),
        ("py311_cpu/deepspeed_shm_comm/lock", 60, False),  # a build going on now: left alone
        ("py311_cpu/deepspeed_shm_comm/shm.o", 3600, False),  # not a lock
        (None, 0, False),  # no extensions built yet
    ],
)
def test_a_stale_torch_extension_lock_is_named_instead_of_waited_for(monkeypatch, tmp_path, layout, age_s, stale):
    """A run killed while DeepSpeed built or loaded its op leaves `lock`; the next DeepSpeed start waited for it
    forever (three torchrun tests hung 900 s each in CI). The command line names it and says to delete it."""
    from r1_gui.cli_errors import UserError
    from r1_gui.training.precheck import check_extension_locks

    root = tmp_path / "extensions"
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(root))
    now = time.time()
    if layout:
        (root / layout).parent.mkdir(parents=True)
        (root / layout).touch()
        os.utime(root / layout, (now - age_s, now - age_s))
    if not stale:
        check_extension_locks(now)
        return
    with pytest.raises(UserError) as error:
        check_extension_locks(now)
    assert f"rm {root / layout}" in str(error.value) and f"left {round(age_s / 60)} min ago" in str(error.value)


def test_a_lock_released_while_the_check_looks_is_passed_over(monkeypatch, tmp_path):
    """A build of another run can release its lock between the folder's listing and the lock's stat."""
    from r1_gui.training.precheck import check_extension_locks

    lock = tmp_path / "deepspeed_shm_comm" / "lock"
    lock.parent.mkdir()
    lock.touch()
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path))
    listing = Path.glob
    monkeypatch.setattr(Path, "glob", lambda self, pattern: [*listing(self, pattern), tmp_path / "gone" / "lock"])
    check_extension_locks(time.time())  # the fresh lock left alone, the released one passed over


def test_the_default_extension_root_follows_xdg_cache_home(monkeypatch, tmp_path):
    from r1_gui.training.precheck import extension_locks_root

    monkeypatch.delenv("TORCH_EXTENSIONS_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert extension_locks_root() == tmp_path / "torch_extensions"


def test_a_deepspeed_run_with_a_stale_lock_fails_before_torch_is_imported(tiny_qwen2_vl, synthetic_dataset, tmp_path):
    lock = tmp_path / "extensions" / "deepspeed_shm_comm" / "lock"
    lock.parent.mkdir(parents=True)
    lock.touch()
    os.utime(lock, (time.time() - 7200, time.time() - 7200))
    argv = ["--model_name_or_path", tiny_qwen2_vl, "--dataset_name", synthetic_dataset, "--output_dir", tmp_path / "o"]
    argv += ["--deepspeed", REPO / "local_scripts" / "zero2.json"]
    done = subprocess.run([sys.executable, "-c", FAST, str(REPO / "src/r1_gui/grpo_gui.py"), *map(str, argv)],
                          env={**os.environ, "TORCH_EXTENSIONS_DIR": str(lock.parents[1])}, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert_first_error(done.returncode, done.stderr, f"{lock} is a torch extension build lock left 120 min ago")
    assert "imported: []" in done.stderr


def test_an_evaluation_of_a_local_path_that_does_not_exist_fails_at_once_in_a_fresh_clone(tiny_qwen2_vl, tmp_path):
    """eval/test_aitw.py --dataset data/nope where data/ does not exist went to the Hub: 10 retries, 26 s, a
    ConnectionError traceback (issue 54, item 3). Now one line, without asking the Hub (the Hub is out of reach)."""
    offline = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE", "R1_GUI_TRACEBACK")
    env = {key: value for key, value in os.environ.items() if key not in offline}
    done = subprocess.run([sys.executable, str(REPO / "eval" / "test_aitw.py"), "--model_name_or_path",
                           str(tiny_qwen2_vl), "--dataset", "data/nope", "--output_dir", "out"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert_first_error(done.returncode, done.stderr, "--dataset data/nope: no such local folder")
    assert "huggingface.co cannot be reached" in done.stderr and not (tmp_path / "out").exists()


# ---------------------------------------------------------------------------------------------------------------
# What a new user hit on a fresh clone (issue 34, item 7): each was a traceback; each is one `error:` line, exit 2.
# The commands run as the user types them: a process of this Python in the repository.


def run_command(target: str, *argv, cwd: Path = REPO, prefix: tuple = ()) -> tuple[int, str]:
    """(exit code, stderr) of `python <script> argv` (target a .py path relative to the repo) or `python -m target`."""
    script = [str(REPO / target)] if target.endswith(".py") else ["-m", target]
    env = {key: value for key, value in os.environ.items() if key != "R1_GUI_TRACEBACK"}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), env.get("PYTHONPATH", "")])
    done = subprocess.run([*prefix, sys.executable, *script, *map(str, argv)], cwd=cwd, env=env, text=True,
                          capture_output=True, timeout=600)  # fmt: skip
    return done.returncode, done.stderr


def assert_first_error(code: int, stderr: str, start: str) -> None:
    """Exit code 2, one `error:` line and no traceback, and that line starts with ``start``."""
    assert_one_error_line(code, stderr)
    line = next(line for line in stderr.splitlines() if line.startswith("error: "))
    assert line.startswith(f"error: {start}"), line


@pytest.fixture
def lora_adapter(tiny_qwen2_vl, tmp_path, monkeypatch) -> Path:
    """project/runs/lora: a LoRA adapter whose adapter_config.json names its base model as a training run from
    project/ writes it, relative ("models/tiny")."""
    import shutil

    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForImageTextToText

    project = tmp_path / "project"
    shutil.copytree(tiny_qwen2_vl, project / "models" / "tiny")
    monkeypatch.chdir(project)
    model = AutoModelForImageTextToText.from_pretrained("models/tiny")
    get_peft_model(model, LoraConfig(r=2, target_modules=["q_proj"])).save_pretrained("runs/lora")
    assert json.loads(Path("runs/lora/adapter_config.json").read_text())["base_model_name_or_path"] == "models/tiny"
    return project / "runs" / "lora"


def test_malformed_recipe_yaml_is_one_line(tiny_qwen2_vl, tmp_path):
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text("reward_funcs: [accuracy\nmax_steps: 2\n")  # an unclosed list
    code, stderr = run_command("src/r1_gui/grpo_gui.py", "--config", recipe, "--output_dir", tmp_path / "out")
    assert_first_error(code, stderr, f"--config {recipe} is not valid YAML: while parsing a flow sequence")
    assert f'in "{recipe}", line 1' in stderr


def test_eval_on_a_corrupted_parquet_names_the_file(tiny_qwen2_vl, tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "test.parquet").write_bytes(b"not a parquet file")
    code, stderr = run_command("eval/test_aitw.py", "--model_name_or_path", tiny_qwen2_vl, "--dataset",
                               tmp_path / "data", "--output_dir", tmp_path / "o")  # fmt: skip
    data = tmp_path / "data"
    assert_first_error(code, stderr, f"--dataset {data}: {data / 'test.parquet'} is not a readable parquet file")


def test_eval_of_a_folder_that_is_not_a_model_is_one_line(synthetic_dataset, tmp_path):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "readme.txt").write_text("not a model")
    code, stderr = run_command("eval/test_aitw.py", "--model_name_or_path", tmp_path / "notes", "--dataset",
                               synthetic_dataset, "--output_dir", tmp_path / "o")  # fmt: skip
    assert_first_error(code, stderr, f"--model_name_or_path {tmp_path / 'notes'} holds no config.json")


@pytest.mark.parametrize("script", ["eval/test_aitw.py", "src/r1_gui/grpo_gui.py"])
def test_max_pixels_below_min_pixels_fails_before_loading(script, tiny_qwen2_vl, synthetic_dataset, tmp_path):
    if script.startswith("eval"):
        argv = ["--model_name_or_path", tiny_qwen2_vl, "--dataset", synthetic_dataset, "--max_samples", "1"]
    else:
        argv = ["--config", GRPO_RECIPE, "--model_name_or_path", tiny_qwen2_vl, "--dataset_name", synthetic_dataset]
    code, stderr = run_command(script, *argv, "--output_dir", tmp_path / "o", "--max_pixels", "10")
    recipe = "" if script.startswith("eval") else f" (from --config {GRPO_RECIPE})"  # training says where it came from
    assert_first_error(code, stderr, f"--min_pixels 3136{recipe} and --max_pixels 10 bound a screenshot's area")
    assert not (tmp_path / "o" / "predictions.jsonl").exists()


def test_grpo_on_a_file_that_is_not_an_image_names_the_row_and_file(grpo_argv, synthetic_dataset, tmp_path):
    text = tmp_path / "screen.png"
    text.write_text("a text file named like a screenshot")
    broken = broken_dataset(synthetic_dataset, tmp_path / "broken", image={3: str(text)})
    identifier = pd.read_parquet(broken / "train.parquet")["id"][3]
    code, stderr = run_command("src/r1_gui/grpo_gui.py", *grpo_argv, "--dataset_name", broken)
    assert_first_error(code, stderr, f"{broken}[train] row 3 (id {identifier!r}): '{text}' is not an image file")


@pytest.fixture
def read_only(tmp_path):
    """(folder, command prefix): a folder this test's commands cannot write to. As a user: its mode is 0555. As root
    (who writes anyway): a read-only bind mount of it in a mount namespace of the command's own."""
    import shutil

    folder = tmp_path / "read-only"
    folder.mkdir()
    if os.geteuid() != 0:
        folder.chmod(0o555)
        yield folder, ()
        folder.chmod(0o755)
        return
    script = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"'
    prefix = ("unshare", "-m", "sh", "-c", script, str(folder))
    if shutil.which("unshare") is None or subprocess.run([*prefix, "true"], capture_output=True).returncode:
        pytest.skip("running as root without a mount namespace: no way to make a folder read-only")
    yield folder, prefix


def test_a_read_only_output_dir_is_one_line_before_any_work(read_only, tiny_qwen2_vl, synthetic_dataset, lora_adapter):
    folder, prefix = read_only
    cases = [
        ("eval/test_aitw.py", ["--model_name_or_path", tiny_qwen2_vl, "--dataset", synthetic_dataset,
                               "--max_samples", "1", "--output_dir", folder], f"--output_dir {folder}: cannot write"),
        ("src/r1_gui/grpo_gui.py", ["--config", GRPO_RECIPE, "--model_name_or_path", tiny_qwen2_vl, "--dataset_name",
                                    synthetic_dataset, "--output_dir", folder / "run"],
         f"--output_dir {folder / 'run'}: cannot write there ({folder}, where it would be created)"),
        ("r1_gui.tiny", ["--out", folder / "tiny"], f"--out {folder / 'tiny'}: cannot write there"),
        ("r1_gui.merge_lora", ["--adapter", lora_adapter, "--output_dir", folder / "merged"],
         f"--output_dir {folder / 'merged'}: cannot write there"),
        ("eval/test_phone.py", ["--model_name_or_path", tiny_qwen2_vl, "--episodes", "1", "--output_dir", folder],
         f"--output_dir {folder}: cannot write"),
    ]  # fmt: skip
    for target, argv, start in cases:
        code, stderr = run_command(target, *argv, cwd=lora_adapter.parents[1], prefix=prefix)
        assert_first_error(code, stderr, start)
        assert "Read-only file system" in stderr or "Permission denied" in stderr


# Tracebacks a new user still met (issue 54, item 6), each now one `error:` line that names the file or flag.


def test_an_episode_evaluation_into_a_file_is_one_line(tiny_qwen2_vl, tmp_path):
    taken = tmp_path / "taken"
    taken.write_text("a file where the folder would go")
    code, stderr = run_command("eval/test_phone.py", "--model_name_or_path", tiny_qwen2_vl, "--output_dir", taken,
                               "--episodes", "1")  # fmt: skip
    assert_first_error(code, stderr, f"--output_dir {taken} is a file; give a folder")


def test_an_environment_whose_module_raises_on_import_is_one_line(tiny_qwen2_vl, tmp_path):
    (tmp_path / "broken_env.py").write_text('raise RuntimeError("this module is broken")\n')
    recipe = REPO / "local_scripts" / "tiny_cpu_phone_grpo.yaml"
    for script, argv in (("src/r1_gui/grpo_gui.py", ["--config", recipe, "--output_dir", "run"]),
                         ("eval/test_phone.py", ["--output_dir", "eval", "--episodes", "1"])):  # fmt: skip
        code, stderr = run_command(script, "--env", "broken_env:Broken-v0", "--model_name_or_path", tiny_qwen2_vl,
                                   *argv, cwd=tmp_path)  # fmt: skip
        assert_first_error(
            code, stderr, "broken_env:Broken-v0 could not be started: RuntimeError: this module is broken"
        )
    assert not (tmp_path / "eval" / "run_config.json").exists()


@pytest.fixture
def damaged_model(tiny_qwen2_vl, tmp_path) -> Path:
    """A copy of the tiny model whose model.safetensors was cut short (a disk that filled up while it was saved)."""
    folder = tmp_path / "damaged"
    folder.mkdir()
    for path in tiny_qwen2_vl.iterdir():
        data = path.read_bytes()
        (folder / path.name).write_bytes(data[: len(data) // 2] if path.name == "model.safetensors" else data)
    return folder


def test_a_damaged_weights_file_is_named_and_evaluation_writes_nothing(damaged_model, synthetic_dataset, tmp_path):
    weights = damaged_model / "model.safetensors"
    cases = [
        ("eval/test_aitw.py", ["--dataset", synthetic_dataset, "--max_samples", "1", "--output_dir", tmp_path / "steps"]),
        ("eval/test_phone.py", ["--episodes", "1", "--output_dir", tmp_path / "episodes"]),
        ("src/r1_gui/grpo_gui.py", ["--config", GRPO_RECIPE, "--dataset_name", synthetic_dataset,
                                    "--output_dir", tmp_path / "train"]),
    ]  # fmt: skip
    for script, argv in cases:
        code, stderr = run_command(script, "--model_name_or_path", damaged_model, *argv)
        assert_first_error(code, stderr, f"{weights} cannot be read (")
        assert "the file is damaged or cut short" in stderr
    for folder in ("steps", "episodes"):  # no run_config.json or other file left to be mistaken for a run
        assert not (tmp_path / folder).exists(), folder


def test_a_checkpoint_whose_trainer_state_does_not_read_is_named_before_the_model_loads(grpo_argv, tmp_path):
    checkpoint = tmp_path / "out" / "checkpoint-2"
    checkpoint.mkdir(parents=True)
    (checkpoint / "trainer_state.json").write_text('{"global_step": 2, "log_hist')  # cut short
    for resume in ("last", checkpoint):
        code, stderr = run_command("src/r1_gui/grpo_gui.py", *grpo_argv, "--resume_from_checkpoint", resume)
        assert_first_error(code, stderr, f"{checkpoint / 'trainer_state.json'} is not a trainer state (")


def test_report_to_an_integration_that_is_not_installed_fails_before_the_model_loads(command, grpo_argv,
                                                                                      no_model_loading):  # fmt: skip
    code, stderr = command("src/r1_gui/grpo_gui.py", *grpo_argv, "--report_to", "tensorboard")
    assert_one_error_line(code, stderr, "--report_to tensorboard: tensorboard is not installed here")


def test_demo_keeps_a_users_files_in_its_data_folder(tmp_path):
    (tmp_path / "demo" / "data").mkdir(parents=True)
    (tmp_path / "demo" / "data" / "notes.txt").write_text("mine")
    code, stderr = run_command("r1_gui.demo", "--fast", "--output_dir", tmp_path / "demo")
    demo = tmp_path / "demo"
    assert_first_error(code, stderr, f"--output_dir {demo}: {demo / 'data'} holds notes.txt, which the demo did not")
    assert sorted(p.name for p in demo.rglob("*")) == ["data", "notes.txt"]  # nothing written, nothing lost
    assert (demo / "data" / "notes.txt").read_text() == "mine"


@pytest.mark.parametrize("offline", [True, False], ids=["offline", "hub-unreachable"])
def test_an_adapter_used_from_another_folder_names_its_base_model_path(lora_adapter, synthetic_dataset, tmp_path,
                                                                       monkeypatch, offline):  # fmt: skip
    """adapter_config.json holds the base model's path as training was given it (relative): from another folder it
    is not found, and the Hub was asked for "models/tiny" (a 104-line traceback when online)."""
    if not offline:  # as on a machine with no HF_HUB_OFFLINE set; the tests' network guard answers for the Hub
        for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
            monkeypatch.delenv(name)
    project = lora_adapter.parents[1]
    code, stderr = run_command("eval/test_aitw.py", "--model_name_or_path", "project/runs/lora", "--dataset",
                               synthetic_dataset, "--output_dir", tmp_path / "o", cwd=tmp_path)  # fmt: skip
    assert_first_error(code, stderr, "project/runs/lora/adapter_config.json names the base model 'models/tiny' "
                                     f"(base_model_name_or_path), which is no folder under {tmp_path}")  # fmt: skip
    assert f"it is under {project}: run from there" in stderr


# ---------------------------------------------------------------------------------------------------------------
# Ctrl-C (issue 34, item 9): one line saying what was kept and the command that goes on, exit code 130.


@pytest.mark.parametrize(
    "argv, drop, switches, add, expected",
    [
        # nothing to change: the command as typed, quoted for a shell
        (["eval/test_aitw.py", "--dataset", "my data"], (), (), (), "python eval/test_aitw.py --dataset 'my data'"),
        # a switch dropped (--overwrite would delete what the run kept)
        (["e.py", "--overwrite", "--seed", "1"], (), ("--overwrite",), (), "python e.py --seed 1"),
        # a flag and its value dropped, the new value added at the end
        (["g.py", "--resume_from_checkpoint", "runs/x/checkpoint-2", "--max_steps", "9"],
         ("--resume_from_checkpoint",), (), ("--resume_from_checkpoint", "last"),
         "python g.py --max_steps 9 --resume_from_checkpoint last"),
        # the --flag=value form is one word
        (["g.py", "--resume_from_checkpoint=runs/x", "--seed", "0"], ("--resume_from_checkpoint",), (), (),
         "python g.py --seed 0"),
        # a value that only looks like the flag's name is kept
        (["g.py", "--run_name", "--resume_from_checkpoint"], (), ("--overwrite",), (),
         "python g.py --run_name --resume_from_checkpoint"),
    ],
    ids=["as-typed", "switch", "flag-and-value", "flag-equals", "value-like-a-flag"],
)  # fmt: skip
def test_rerun_command(argv, drop, switches, add, expected):
    from r1_gui.cli_errors import rerun_command

    assert rerun_command(drop, switches, add, argv=argv) == expected


def test_interrupted_line_reads_what_was_kept_when_the_ctrl_c_comes():
    from r1_gui.cli_errors import interrupted_line, on_interrupt

    written = []
    with pytest.raises(KeyboardInterrupt) as caught, on_interrupt(lambda: "outer", lambda: "outer command"):
        with on_interrupt(lambda: f"{len(written)} lines", lambda: None):
            written += ["a", "b"]
            raise KeyboardInterrupt
    # the outermost block is the command the user typed: its line stays
    assert interrupted_line(caught.value) == "interrupted: kept outer; continue with: outer command"
    with pytest.raises(KeyboardInterrupt) as caught, on_interrupt(lambda: f"{len(written)} lines", lambda: None):
        raise KeyboardInterrupt
    assert interrupted_line(caught.value) == "interrupted: kept 2 lines"  # counted when the Ctrl-C came
    assert interrupted_line(KeyboardInterrupt()) == "interrupted: nothing was kept"


def interrupt_when(argv: list, ready, timeout: float = 600, signal_number: int = 2) -> subprocess.CompletedProcess:
    """Run `python ARGV` in the repository, send it SIGINT (a Ctrl-C; or ``signal_number``) once ``ready()`` holds
    (polled: the command's loop has started), and return how it ended."""
    import time

    env = {key: value for key, value in os.environ.items() if key != "R1_GUI_TRACEBACK"}
    env |= {"OMP_NUM_THREADS": "1", "PYTHONPATH": os.pathsep.join([str(REPO / "src"), env.get("PYTHONPATH", "")])}
    process = subprocess.Popen([sys.executable, *map(str, argv)], cwd=REPO, env=env, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    deadline = time.monotonic() + timeout
    while not ready():
        assert process.poll() is None, process.communicate()[1][-3000:]
        assert time.monotonic() < deadline, "the command never reached its loop"
        time.sleep(0.05)
    process.send_signal(signal_number)
    stdout, stderr = process.communicate(timeout=300)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def assert_interrupted(done: subprocess.CompletedProcess) -> str:
    """Exit code 130, no traceback, and the `interrupted:` line last; returns that line."""
    assert done.returncode == 130, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and "KeyboardInterrupt" not in done.stderr, done.stderr[-3000:]
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines[-1].startswith("interrupted: kept "), lines[-3:]
    assert sum(line.startswith("interrupted:") for line in lines) == 1
    return lines[-1]


def interrupt_after_first_line(argv: list, kept_file, noun: str) -> tuple[int, str]:
    """Ctrl-C the command once ``kept_file`` (JSON lines) has a line; its last stderr line must name the lines kept,
    the file and the same command without --overwrite. Returns (lines kept, that command)."""
    done = interrupt_when(argv, lambda: kept_file.is_file() and kept_file.read_bytes().count(b"\n") >= 1)
    line = assert_interrupted(done)
    kept = kept_file.read_bytes().count(b"\n")
    assert argv[-1] == "--overwrite"
    command = shlex.join(["python", *map(str, argv[:-1])])
    assert line == f"interrupted: kept {kept} {noun} in {kept_file}; continue with: {command}"
    return kept, command


def test_ctrl_c_in_evaluation_names_the_predictions_kept_and_the_command_that_resumes(tiny_qwen2_vl,
                                                                                      synthetic_dataset, tmp_path):  # fmt: skip
    out = tmp_path / "eval"
    argv = ["eval/test_aitw.py", "--model_name_or_path", tiny_qwen2_vl, "--dataset", synthetic_dataset, "--split",
            "train", "--batch_size", "1", "--max_pixels", "50176", "--gallery_size", "0", "--output_dir", out,
            "--overwrite"]  # fmt: skip
    kept, command = interrupt_after_first_line(argv, out / "predictions.jsonl", "predictions")
    resumed = subprocess.run([sys.executable, *shlex.split(command)[1:], "--max_samples", str(kept + 1)], cwd=REPO,
                             capture_output=True, text=True, timeout=600)  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"{kept} of {kept + 1} samples already there, 1 to generate" in resumed.stderr


def test_ctrl_c_in_training_names_the_last_checkpoint_and_resume_last(grpo_argv, tmp_path):
    out = tmp_path / "out"
    argv = ["src/r1_gui/grpo_gui.py", *grpo_argv, "--max_steps", "500", "--save_strategy", "steps",
            "--save_steps", "1"]  # fmt: skip
    done = interrupt_when(argv, lambda: (out / "checkpoint-1" / "trainer_state.json").is_file())
    line = assert_interrupted(done)
    from r1_gui.training.resume import checkpoint_folders

    last = checkpoint_folders(out)[0][-1]
    command = shlex.join(["python", *map(str, argv), "--resume_from_checkpoint", "last"])
    assert line == f"interrupted: kept {last}, the last checkpoint saved; continue with: {command}"


def test_sigterm_in_training_ends_as_a_ctrl_c_does(grpo_argv, tmp_path):
    """A scheduler's SIGTERM (a preempted job) ended a run silently with -15 (issue 54, item 7)."""
    import signal

    out = tmp_path / "out"
    argv = ["src/r1_gui/grpo_gui.py", *grpo_argv, "--max_steps", "500", "--save_strategy", "steps",
            "--save_steps", "1"]  # fmt: skip
    done = interrupt_when(
        argv, lambda: (out / "checkpoint-1" / "trainer_state.json").is_file(), signal_number=signal.SIGTERM
    )
    assert done.returncode == 143, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    from r1_gui.training.resume import checkpoint_folders

    last = checkpoint_folders(out)[0][-1]
    command = shlex.join(["python", *map(str, argv), "--resume_from_checkpoint", "last"])
    line = [line for line in done.stderr.splitlines() if line.strip()][-1]
    assert line == f"terminated (SIGTERM): kept {last}, the last checkpoint saved; continue with: {command}"


# ---------------------------------------------------------------------------------------------------------------
# CPU threads (issue 34, item 10): half the cores unless OMP_NUM_THREADS says otherwise, set by every command line.


@pytest.mark.parametrize(
    "cores, variable, expected",
    [
        (2, None, 1),  # the 2-core machine: one thread, which no other job can make wait
        (16, None, 8),  # half the cores
        (1, None, 1),  # never fewer than one
        (16, "3", 3),  # the user's OMP_NUM_THREADS wins
        (16, "0", 8),  # not a thread count: the default
        (16, "two", 8),  # not a number: the default
    ],
)
def test_cpu_threads(monkeypatch, cores, variable, expected):
    import torch

    from r1_gui.cli_errors import cpu_threads

    before = torch.get_num_threads()
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cores)))
    if variable is None:
        monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    else:
        monkeypatch.setenv("OMP_NUM_THREADS", variable)
    try:
        assert cpu_threads() == expected
        assert torch.get_num_threads() == expected and os.environ["OMP_NUM_THREADS"] == str(expected)
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("variable", [None, "3"], ids=["default", "OMP_NUM_THREADS=3"])
def test_a_command_runs_torch_on_half_the_cores(variable):
    """torch itself takes every core; a command line under cli_main takes half, or what OMP_NUM_THREADS says."""
    code = ("import os, sys, torch; from r1_gui.cli_errors import cli_main; "
            "cli_main(lambda: print(torch.get_num_threads(), len(os.sched_getaffinity(0))))()")  # fmt: skip
    env = {key: value for key, value in os.environ.items() if key != "OMP_NUM_THREADS"}
    env |= {"OMP_NUM_THREADS": variable} if variable else {}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    threads, cores = map(int, done.stdout.split())
    assert threads == (int(variable) if variable else max(1, cores // 2)), done.stdout


@pytest.mark.parametrize(
    "cores, asked, expected",
    [
        (2, 2, 2),  # the web demo's sight and SFT loops on the 2-core machine: both cores
        (1, 2, 1),  # never more than the cores this process may run on
        (16, 2, 2),  # no more than asked
        (2, 0, 1),  # never fewer than one
    ],
)
def test_torch_threads_sets_the_block_and_restores(monkeypatch, cores, asked, expected):
    import torch

    from r1_gui.cli_errors import torch_threads

    before = torch.get_num_threads()
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cores)))
    with torch_threads(asked) as count:
        assert count == expected and torch.get_num_threads() == expected
    assert torch.get_num_threads() == before
    with pytest.raises(RuntimeError), torch_threads(asked):  # an error in the block restores them too
        raise RuntimeError("inside")
    assert torch.get_num_threads() == before


# Threads on a shared machine (issue 54, item 4): the web demo's sight stage ran 11-25x slower beside one other job,
# its 2 threads fighting for 2 cores; its loops now take the cores other processes leave free, measured as they go.


@pytest.mark.parametrize(
    "cores, machine, most, others, expected",
    [
        (2, 2, 2, 0.0, 2),  # the 2-core machine alone: both cores
        (2, 2, 2, 0.2, 2),  # a little noise (an idle browser, a shell) leaves both
        (2, 2, 2, 0.5, 1),  # half a core taken: one thread, which nothing makes wait
        (2, 2, 2, 1.0, 1),  # a process spinning one core
        (2, 2, 2, 3.0, 1),  # more busy than there are cores: never fewer than one
        (2, 2, 1, 0.0, 1),  # never more than asked
        (4, 8, 4, 4.0, 2),  # 4 of 8 cores this process may use, half the machine busy: half of them taken
        (2, 2, 2, None, 2),  # nothing to measure with (no /proc/stat): what was asked
    ],
)
def test_shared_core_threads_take_the_cores_others_leave(monkeypatch, cores, machine, most, others, expected):
    from r1_gui import cli_errors

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cores)))
    monkeypatch.setattr(os, "cpu_count", lambda: machine)
    monkeypatch.setattr(cli_errors, "busy_cores_of_others", lambda window: others)
    assert cli_errors.SharedCoreThreads(most).threads == expected


def test_shared_core_threads_measure_a_busy_machine_and_restore_torchs_count():
    import torch

    from r1_gui.cli_errors import shared_core_threads

    before = torch.get_num_threads()
    cores = len(os.sched_getaffinity(0))
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(cores)]
    try:
        time.sleep(0.5)  # the spinners running
        with shared_core_threads(2) as threads:
            assert threads.threads == 1 and torch.get_num_threads() == 1  # every core taken: one thread
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
    assert torch.get_num_threads() == before


def test_a_long_stage_says_where_it_is_within_its_first_half_minute_and_then_every_half_minute():
    from r1_gui.training.progress import StageProgress

    now, said = [0.0], []
    progress = StageProgress("sight", 1000, clock=lambda: now[0], say=lambda line, flush: said.append(line))
    for step in range(1, 1001):
        now[0] = step * 0.29  # 0.29 s a step: 290 s in all
        progress.step(step, "2 torch threads")
    assert said[0] == "[sight] step 104/1000, 0.29 s a step, 2 torch threads, about 260 s left"
    assert len(said) == 9  # one every 30 s of a 290 s loop, none at its last step (the stage's end line says it)


@pytest.mark.parametrize(
    "threads, detail", [(None, "loss 0.356"), (SimpleNamespace(threads=2), "2 torch threads, loss 0.356")]
)
def test_an_sft_stages_line_says_its_torch_threads_where_they_follow_the_free_cores(threads, detail):
    from r1_gui.training.progress import StageLines, StageProgress

    lines, now, said = StageLines("sight", 1000, threads=threads), [0.0], []
    lines.progress = StageProgress("sight", 1000, clock=lambda: now[0], say=lambda line, flush: said.append(line))
    lines.on_log(None, None, None, logs={"loss": 0.356})
    for step in range(1, 70):
        now[0] = step * 0.44
        lines.on_step_end(None, SimpleNamespace(global_step=step), None)
    assert said == [f"[sight] step 69/1000, 0.44 s a step, {detail}, about 410 s left"]


# ---------------------------------------------------------------------------------------------------------------
# Progress and noise (issue 34, items 11 and 12): a bar on every loop a user waits on, one line per training step,
# none of the warnings r1_gui's own settings caused.

NOISE = (
    "`gradient_checkpointing` is deprecated",  # r1_gui's recipes used the old name, and trl's default did too
    "`is_gradient_checkpointing` is deprecated",  # trl 1.16 reads the old property every step
    "`gradient_checkpointing_disable` is deprecated",  # and, with checkpointing on, calls the old methods
    "`gradient_checkpointing_enable` is deprecated",
    "Setting accelerator to CPU",  # DeepSpeed at import, on every CPU machine
    "{'loss'",  # transformers printed each step's metrics dict
)


@pytest.mark.parametrize(
    "script, checkpointing",
    [("src/r1_gui/grpo_gui.py", "false"), ("src/r1_gui/grpo_gui.py", "true"), ("src/r1_gui/sft.py", "false")],
)
def test_training_shows_one_line_per_step_and_no_noise(script, checkpointing, tiny_qwen2_vl, synthetic_dataset,
                                                        tmp_path):  # fmt: skip
    recipe = GRPO_RECIPE if "grpo" in script else SFT_RECIPE
    argv = ["--config", recipe, "--model_name_or_path", tiny_qwen2_vl, "--dataset_name", synthetic_dataset,
            "--output_dir", tmp_path / "out", "--max_steps", "2", "--logging_steps", "1",
            "--activation_checkpointing", checkpointing]  # fmt: skip
    argv += ["--reward_funcs", "step_success", "format"] if "grpo" in script else []  # a success reward to show
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": f"{REPO / 'src'}{os.pathsep}{os.environ['PYTHONPATH']}"}
    done = subprocess.run([sys.executable, script, *map(str, argv)], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    console = done.stdout + done.stderr
    assert [noise for noise in NOISE if noise in console] == []
    steps = [line for line in re.split(r"[\r\n]", console) if line.startswith("step ")]
    assert [line.split(" | ")[0] for line in steps] == ["step 1/2", "step 2/2"], steps
    pattern = r"reward \S+ \| success \S+ \| loss \S+" if "grpo" in script else r"token accuracy \S+ \| loss \S+"
    assert all(re.search(pattern, line) for line in steps) and steps[1].endswith(" s/step"), steps
    assert "trained 2 steps in " in console
    history = json.loads((tmp_path / "out" / "trainer_state.json").read_text())["log_history"]
    logged = {key for entry in history for key in entry}  # every metric is still logged
    assert {"loss", "grad_norm", "learning_rate"} <= logged
    assert "grpo" not in script or {"reward", "rewards/step_success/mean", "completions/parse_rate"} <= logged


def test_scoring_a_predictions_file_shows_its_progress(synthetic_dataset, tmp_path):
    ids = pd.read_parquet(synthetic_dataset / "test.parquet")["id"]
    lines = [json.dumps({"id": identifier, "output": "mobile.back()"}) for identifier in ids]
    (tmp_path / "p.jsonl").write_text("\n".join(lines) + "\n")
    done = subprocess.run([sys.executable, "eval/test_aitw.py", "--dataset", synthetic_dataset, "--predictions",
                           tmp_path / "p.jsonl", "--output_dir", tmp_path / "o"], cwd=REPO, capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert re.search(rf"scoring: 100%\|\S*\| {len(ids)}/{len(ids)} \[", done.stderr), done.stderr[-2000:]


def test_ctrl_c_in_episode_evaluation_names_the_episodes_kept_and_the_command_that_resumes(tiny_qwen2_vl, tmp_path):
    out = tmp_path / "phone"
    argv = ["eval/test_phone.py", "--model_name_or_path", tiny_qwen2_vl, "--output_dir", out, "--episodes", "40",
            "--batch_size", "1", "--tasks", "go_home", "--max_turns", "2", "--max_new_tokens", "8",
            "--max_pixels", "12544", "--overwrite"]  # fmt: skip
    kept, command = interrupt_after_first_line(argv, out / "episodes.jsonl", "episodes")


# One run per output folder (issue 54, item 2): two evaluations into one folder both ran 330 s, appended every id
# twice to one predictions.jsonl and both failed at the end; a second run is now refused at start, naming the first.
HOLD = (
    "import sys, time\nfrom r1_gui.output_lock import output_folder_lock\n"
    "with output_folder_lock(sys.argv[1]):\n    print('held', flush=True)\n    time.sleep(600)\n"
)


def test_a_second_evaluation_into_a_folder_in_use_is_refused_naming_the_first(tiny_qwen2_vl, synthetic_dataset,
                                                                              tmp_path):  # fmt: skip
    import signal
    import time

    out = tmp_path / "twice"
    argv = [sys.executable, "eval/test_aitw.py", "--model_name_or_path", str(tiny_qwen2_vl), "--dataset",
            str(synthetic_dataset), "--split", "train", "--batch_size", "1", "--output_dir", str(out)]  # fmt: skip
    first = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        while not (out / "predictions.jsonl").is_file():  # the first is generating
            assert first.poll() is None, first.stderr.read()[-3000:]
            time.sleep(0.05)
        first.send_signal(signal.SIGSTOP)  # held mid-run, however fast this machine generates
        second = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=120)
        assert_first_error(second.returncode, second.stderr, f"--output_dir {out} is in use by another run (pid "
                           f"{first.pid}: python eval/test_aitw.py --model_name_or_path")  # fmt: skip
        assert "wait for it to end, or give another --output_dir" in second.stderr
    finally:
        first.kill()  # SIGKILL ends a stopped process too
        first.wait()
    ids = [json.loads(line)["id"] for line in (out / "predictions.jsonl").read_text().splitlines() if line.strip()]
    assert len(ids) == len(set(ids)), "the second run wrote into the first's predictions"


@pytest.mark.parametrize("script", ["src/r1_gui/grpo_gui.py", "src/r1_gui/sft.py", "eval/test_phone.py",
                                    "r1_gui.demo"])  # fmt: skip
def test_every_command_that_writes_a_folder_refuses_one_in_use(script, tiny_qwen2_vl, synthetic_dataset, tmp_path):
    out = tmp_path / "busy"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(out)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        argv = {
            "src/r1_gui/grpo_gui.py": ["--config", GRPO_RECIPE, "--model_name_or_path", tiny_qwen2_vl,
                                       "--dataset_name", synthetic_dataset],
            "src/r1_gui/sft.py": ["--config", SFT_RECIPE, "--model_name_or_path", tiny_qwen2_vl, "--dataset_name",
                                  synthetic_dataset],
            "eval/test_phone.py": ["--model_name_or_path", tiny_qwen2_vl, "--episodes", "1"],
            "r1_gui.demo": ["--fast"],
        }[script]  # fmt: skip
        code, stderr = run_command(script, *argv, "--output_dir", out)
        assert_first_error(code, stderr, f"--output_dir {out} is in use by another run (pid {holder.pid}: python -c")
    finally:
        holder.kill()
        holder.wait()
    assert not (out / "trainer_state.json").exists() and not (out / "run_config.json").exists()


def test_the_lock_is_released_when_its_holder_is_killed_and_taken_again_inside_one_process(tmp_path):
    from r1_gui.output_lock import output_folder_lock

    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    with pytest.raises(Exception, match="is in use by another run"):
        with output_folder_lock(tmp_path):
            pass
    holder.kill()  # SIGKILL: no code of the holder runs, the kernel drops its lock
    holder.wait()
    assert (tmp_path / ".r1_gui.lock").read_text().startswith(f"pid {holder.pid}: ")  # a killed holder's file stays
    with output_folder_lock(tmp_path), output_folder_lock(tmp_path / "."):  # a demo's stage inside the demo's hold
        assert f"pid {os.getpid()}" in (tmp_path / ".r1_gui.lock").read_text()
    assert not (tmp_path / ".r1_gui.lock").exists() and tmp_path.is_dir()  # released: gone; the folder was there
    with output_folder_lock(tmp_path / "new"):
        pass
    assert not (tmp_path / "new").exists()  # a folder the run made and left empty goes too


def test_every_installed_command_answers_its_help_and_its_errors_name_the_command():
    """pyproject.toml's [project.scripts] (issue 53 item 3): each is installed beside this Python and prints its
    help; a Ctrl-C's "continue with" line names the installed command as the user typed it."""
    import tomllib

    from r1_gui.cli_errors import rerun_command

    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert {"r1-gui-train", "r1-gui-eval", "r1-gui-demo"} <= set(scripts)
    for name in scripts:
        command = Path(sys.executable).parent / name
        done = subprocess.run([str(command), "--help"], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and "usage:" in done.stdout, (name, done.stderr[-2000:])
    argv = [str(Path(sys.executable).parent / "r1-gui-train"), "--config", "x.yaml"]
    assert rerun_command(add=("--resume_from_checkpoint", "last"), argv=argv) == (
        "r1-gui-train --config x.yaml --resume_from_checkpoint last"
    )


@pytest.mark.slow
def test_every_installed_command_exits_0_after_it_succeeds_and_2_with_one_line_on_a_bad_flag(
    tiny_qwen2_vl, synthetic_raw, synthetic_dataset, lora_adapter, tmp_path
):
    """Each [project.scripts] command as pip installed it (the script beside this Python, in a process of its own):
    7 of the 10 printed what their main() returned (a dict, a list, a folder) to stderr and exited 1 after they had
    succeeded, so every `&&` chain or `set -e` script built on them broke (issue 71, item 1)."""
    import tomllib

    from r1_gui.processing import load_processor

    load_processor(tiny_qwen2_vl).save_pretrained(lora_adapter)  # as a --use_peft run saves its processor
    out = tmp_path / "runs"
    commands = {  # in this order: compare reads the two evaluations before it
        "r1-gui-tiny": ["--out", out / "tiny"],
        "r1-gui-build-data": ["--input", synthetic_raw / "synthetic-l1.json", "--num_samples", "8",
                              "--output_dir", out / "data"],
        "r1-gui-eval": ["--model_name_or_path", tiny_qwen2_vl, "--dataset", synthetic_dataset, "--max_samples", "2",
                        "--max_pixels", "50176", "--gallery_size", "0", "--output_dir", out / "eval_a"],
        "r1-gui-eval-episodes": ["--model_name_or_path", tiny_qwen2_vl, "--episodes", "1", "--max_turns", "1",
                                 "--output_dir", out / "episodes"],
        "r1-gui-compare": [out / "eval_a", out / "eval_a"],
        "r1-gui-play": ["--policy", "expert", "--episodes", "1"],
        "r1-gui-merge-lora": ["--adapter", lora_adapter, "--output_dir", out / "merged"],
        "r1-gui-train": ["--config", GRPO_RECIPE, "--model_name_or_path", tiny_qwen2_vl, "--dataset_name",
                         synthetic_dataset, "--max_steps", "1", "--output_dir", out / "grpo"],
        "r1-gui-plot": [out / "grpo"],
        "r1-gui-sft": ["--config", SFT_RECIPE, "--model_name_or_path", tiny_qwen2_vl, "--dataset_name",
                       synthetic_dataset, "--max_steps", "1", "--output_dir", out / "sft"],
        "r1-gui-demo": ["--fast", "--output_dir", out / "demo"],
    }  # fmt: skip
    from test_grpo import free_port

    # the server succeeds by serving until Ctrl-C: it answers /health, then ends with 0 on SIGINT
    server = ["r1_gui/Phone-v0", "--port", str(free_port())]
    assert set(commands) | {"r1-gui-env-serve"} == set(
        tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    )
    env = {key: value for key, value in os.environ.items() if key != "R1_GUI_TRACEBACK"}
    for name, argv in commands.items():
        command = [str(Path(sys.executable).parent / name), *map(str, argv)]
        done = subprocess.run(command, cwd=lora_adapter.parents[1], env=env, capture_output=True, text=True,
                              timeout=600)  # fmt: skip
        assert done.returncode == 0, (name, done.stderr[-3000:])
        printed = [line for line in done.stderr.splitlines() if line.startswith(("{", "[", "PosixPath("))]
        assert not printed and str(out) not in done.stderr.strip().splitlines()[-1:], (name, done.stderr[-2000:])
        refused = subprocess.run([*command, "--no_such_flag"], cwd=lora_adapter.parents[1], env=env,
                                 capture_output=True, text=True, timeout=120)  # fmt: skip
        lines = [line for line in refused.stderr.splitlines() if line.strip()]
        assert refused.returncode == 2 and len(lines) == 1, (name, refused.stderr[-2000:])
        assert lines[0].startswith("error: ") and "--no_such_flag" in lines[0], (name, lines)
    command = [str(Path(sys.executable).parent / "r1-gui-env-serve"), *server]
    serving = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert wait_for_health(int(server[-1]), 120), "r1-gui-env-serve never answered /health"
    finally:
        serving.send_signal(signal.SIGINT)
        _, stderr = serving.communicate(timeout=60)
    assert serving.returncode == 0 and not stderr.strip(), stderr[-2000:]
    refused = subprocess.run([*command, "--no_such_flag"], env=env, capture_output=True, text=True, timeout=120)
    lines = [line for line in refused.stderr.splitlines() if line.strip()]
    assert refused.returncode == 2 and len(lines) == 1 and "--no_such_flag" in lines[0], refused.stderr[-2000:]


def wait_for_health(port: int, seconds: float) -> bool:
    import urllib.request

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1).read()
            return True
        except OSError:
            time.sleep(0.5)
    return False


def test_a_reward_that_needs_a_column_the_data_lacks_is_one_line_before_the_model_loads(command, grpo_argv,
                                                                                         synthetic_dataset, tmp_path,
                                                                                         monkeypatch,
                                                                                         no_model_loading):  # fmt: skip
    """A KeyError traceback in rewards.check_reward_needs (issue 71, item 3)."""
    write_reward_module(tmp_path, 'def hard(completions, **columns):\n    return [0.0] * len(completions)\n'
                                  'hard.needs = ("completion", "difficulty")\n', monkeypatch)  # fmt: skip
    code, stderr = command("src/r1_gui/grpo_gui.py", *grpo_argv, "--reward_funcs", "my_rewards:hard")
    assert_one_error_line(code, stderr, "my_rewards:hard needs the column difficulty, which --dataset_name "
                          f"{synthetic_dataset} does not have (its columns: ")  # fmt: skip


def test_a_users_reward_that_raises_is_one_line_before_the_model_loads(command, grpo_argv, tmp_path, monkeypatch,
                                                                        no_model_loading):  # fmt: skip
    """A reward of the user's that raises on the first row is found by a probe on that row before the model loads
    (issue 71, item 4); it was a 74-80-line traceback after the model had loaded."""
    write_reward_module(tmp_path, "def broken(completions, solution, **columns):\n"
                                  "    return [len(c) / 0 for c in completions]\n", monkeypatch)  # fmt: skip
    code, stderr = command("src/r1_gui/grpo_gui.py", *grpo_argv, "--reward_funcs", "step_success", "my_rewards:broken")
    assert_one_error_line(code, stderr, "reward my_rewards:broken raised ZeroDivisionError: division by zero "
                          "(my_rewards.py, line 2) in a probe on row 0 of the dataset before training")  # fmt: skip


@pytest.mark.slow
def test_a_users_reward_that_fails_during_training_is_one_line_naming_the_step(tiny_qwen2_vl, synthetic_dataset,
                                                                              tmp_path):  # fmt: skip
    """A reward that passes the start-up probe (it scores anything outside training) and returns one value too few
    in training: one line naming it and the step, exit code 2 (issue 71, item 4)."""
    (tmp_path / "my_rewards.py").write_text(
        "def late(completions, trainer_state=None, **columns):\n"
        "    if trainer_state is not None and trainer_state.global_step >= 1:\n"
        "        return [0.5] * (len(completions) - 1)\n"
        "    return [float(i % 2) for i in range(len(completions))]\n"
    )
    code, stderr = run_command("src/r1_gui/grpo_gui.py", "--config", GRPO_RECIPE, "--model_name_or_path", tiny_qwen2_vl,
                               "--dataset_name", synthetic_dataset, "--output_dir", tmp_path / "out", "--max_steps",
                               "3", "--reward_funcs", "my_rewards:late", cwd=tmp_path)  # fmt: skip
    assert_first_error(code, stderr, "reward my_rewards:late returned 3 values for 4 completions in step 2")


def test_the_torchrun_script_checks_the_settings_before_torchrun_starts(tiny_qwen2_vl, synthetic_dataset, tmp_path):
    """local_scripts/run_grpo_gui.sh (the README's GPU path) with a mistake: each worker's error line, then about 30
    lines of torch's ChildFailedError and exit code 1 (issue 71, item 6). Now one line and exit code 2, and no worker
    starts."""
    env = {**os.environ, "PYTHON": sys.executable, "NPROC_PER_NODE": "2", "RECIPE": str(GRPO_RECIPE),
           "MODEL_PATH": str(tiny_qwen2_vl), "DATA_DIR": str(synthetic_dataset), "OUTPUT_DIR": str(tmp_path / "out"),
           "MASTER_PORT": "29731"}  # fmt: skip
    env.pop("R1_GUI_TRACEBACK", None)
    done = subprocess.run(["bash", str(REPO / "local_scripts" / "run_grpo_gui.sh"), "--reward_funcs", "accurasy"],
                          env=env, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert_one_error_line(done.returncode, done.stderr, "unknown reward(s) ['accurasy']")
    assert "ChildFailedError" not in done.stderr and not (tmp_path / "out").exists()


def test_the_settings_check_stops_before_the_model_loads_and_exits_0(grpo_argv, tmp_path):
    done = subprocess.run([sys.executable, "-m", "r1_gui.settings_check", "grpo", *map(str, grpo_argv)],
                          cwd=REPO, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines()[-1].startswith("settings checked: GRPO of "), done.stdout
    assert not (tmp_path / "out").exists()  # nothing written: no model, no checkpoint, the folder's lock released
    code, stderr = run_command("r1_gui.settings_check", "grpo", *grpo_argv, "--num_generations", "3")
    assert_first_error(code, stderr, "")
