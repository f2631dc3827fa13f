"""python -m r1_gui.envs: plays episodes with each policy (a tiny model too) and draws them."""

import subprocess
import sys

import pytest
from PIL import Image

from r1_gui.envs.cli import main


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
    results = main(["--env", "replay", "--data_dir", str(synthetic_dataset), "--split", "test", "--episodes", "2"])
    assert all(result["success"] for result in results)


def test_model_policy_runs_a_tiny_checkpoint(tiny_qwen2_vl, capsys):
    results = main(["--task", "go_home", "--model", str(tiny_qwen2_vl), "--max_steps", "2", "--max_new_tokens", "8"])
    assert results[0]["steps"] <= 2  # a random model: it ends by truncation or by a terminate it happens to write


def test_help_explains_every_option():
    out = subprocess.run(
        [sys.executable, "-m", "r1_gui.envs", "--help"], capture_output=True, text=True, check=True
    ).stdout
    for option in ("--env", "--task", "--policy", "--model", "--episodes", "--seed", "--gif", "--width", "--height",
                   "--max_steps", "--data_dir", "--split", "--patch", "--prompt_style", "--coordinates"):  # fmt: skip
        assert option in out


def test_replay_without_data_dir_is_refused():
    with pytest.raises(SystemExit):
        main(["--env", "replay"])
