"""python -m r1_gui.play: plays episodes of any contract environment with each policy (a tiny model too) and draws
them; bad input is one error line."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from r1_gui.play import main


def test_expert_episode_is_drawn_as_a_gif(tmp_path, capsys):
    path = tmp_path / "runs" / "episode.gif"
    results = main(["--task", "web_search", "--policy", "expert", "--seed", "3", "--gif", str(path)])
    assert results == [{"seed": 3, "task": "web_search", "success": True, "steps": results[0]["steps"]}]
    with Image.open(path) as gif:
        assert gif.n_frames == results[0]["steps"] + 1  # one frame per action, one for the end
    assert "success=True" in capsys.readouterr().out


def test_random_policy_and_png_strip(tmp_path, capsys):
    results = main(["--task", "all", "--policy", "random", "--episodes", "5", "--gif", str(tmp_path / "strip.png")])
    assert [result["seed"] for result in results] == [0, 1, 2, 3, 4]
    with Image.open(tmp_path / "strip.png") as strip:
        assert strip.width > strip.height  # frames side by side
    assert "success " in capsys.readouterr().out.splitlines()[-1]


def test_replay_with_the_recorded_actions(synthetic_dataset, capsys):
    kwargs = json.dumps({"data_dir": str(synthetic_dataset), "split": "test", "patch": "expert"})
    results = main(["--env", "r1_gui/Replay-v0", "--env_kwargs", kwargs, "--episodes", "2"])
    assert all(result["success"] for result in results)


def test_replay_plays_each_recorded_episode_once_and_says_so(synthetic_dataset, capsys):
    """Seeds past the split's episode count would replay the same episodes: they are not played."""
    from r1_gui.envs import ReplayEnv

    count = ReplayEnv(str(synthetic_dataset), split="test").episode_count
    kwargs = json.dumps({"data_dir": str(synthetic_dataset), "split": "test"})
    results = main(["--env", "r1_gui/Replay-v0", "--env_kwargs", kwargs, "--episodes", str(count + 40)])
    assert len(results) == count and len({r["seed"] for r in results}) == count
    out = capsys.readouterr().out
    assert f"holds {count} episodes: playing {count}" in out and out.splitlines()[-1].startswith(f"success {count}/")


def test_model_policy_runs_a_tiny_checkpoint(tiny_qwen2_vl, capsys):
    results = main(
        [
            "--task",
            "go_home",
            "--model",
            str(tiny_qwen2_vl),
            "--env_kwargs",
            '{"max_steps": 2}',
            "--max_new_tokens",
            "8",
        ]
    )
    assert results[0]["steps"] <= 2  # a random model: it ends by truncation or by a terminate it happens to write


def test_help_explains_every_option():
    out = subprocess.run(
        [sys.executable, "-m", "r1_gui.play", "--help"], capture_output=True, text=True, check=True
    ).stdout
    for option in ("--env", "--env_kwargs", "--env_tasks", "--policy", "--model_name_or_path", "--env_episodes", "--seed",
                   "--gif", "--prompt_style", "--coordinates"):  # fmt: skip
        assert option in out


@pytest.mark.parametrize(
    "argv, first_line",
    [
        # a checkpoint folder that does not exist (the README once named runs/phone-grpo)
        (["--model_name_or_path", "./runs/phone-grpo"], "error: --model_name_or_path ./runs/phone-grpo"),
        # a misspelt environment keyword
        (["--env_kwargs", '{"widht": 300}'], "error: --env_kwargs {'widht': 300} does not fit r1_gui/Phone-v0"),
        # a replay folder that does not exist
        (["--env", "r1_gui/Replay-v0", "--env_kwargs", '{"data_dir": "/nonexistent"}'], "error: data_dir /nonexistent"),
        # Replay-v0 without its data_dir
        (["--env", "r1_gui/Replay-v0"], "error: --env_kwargs {} does not fit r1_gui/Replay-v0"),
        # a task the phone does not have
        (["--task", "fly"], "error: --env_tasks: r1_gui/Phone-v0 has no task(s) ['fly']"),
    ],
)
def test_bad_input_is_one_error_line(argv, first_line, tmp_path):
    done = subprocess.run([sys.executable, "-m", "r1_gui.play", *argv], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines()[0].startswith(first_line), done.stderr
    assert len(done.stderr.splitlines()) == 1 and not list(tmp_path.iterdir())


def test_a_missing_split_names_the_splits_there(synthetic_dataset):
    kwargs = json.dumps({"data_dir": str(synthetic_dataset), "split": "validation"})
    done = subprocess.run(
        [sys.executable, "-m", "r1_gui.play", "--env", "r1_gui/Replay-v0", "--env_kwargs", kwargs],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 2
    assert "has no split 'validation' (validation.parquet); its splits: test, train" in done.stderr


def test_the_expert_of_an_environment_that_declares_no_has_expert_plays(tmp_path, monkeypatch):
    """The contract makes `has_expert` optional (the first reset's info says): play looked only at the attribute, and
    refused an environment whose info gives the expert's action (issue 54, item 7). Here the helper environment with
    its attribute renamed."""
    source = (Path(__file__).parent / "helpers" / "button_env.py").read_text()
    assert "self.has_expert" in source
    (tmp_path / "undeclared_expert.py").write_text(source.replace("self.has_expert", "self.gives_expert"))
    monkeypatch.syspath_prepend(str(tmp_path))
    results = main(["--env", "undeclared_expert:Button-v0", "--policy", "expert", "--episodes", "2"])
    assert [result["success"] for result in results] == [True, True]
