"""Every command README.md shows, accounted for: the short ones run here exactly as typed, in order, in a folder that
holds the repository's scripts and recipes (so their relative paths resolve as in a clone); each of the others is
named with why it does not run here (a GPU or 8 processes, data from outside, minutes of CPU, a file a section
writes first). A README command in neither list fails the test: a command added to the manual is run or excused."""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# Run here, in this order (later ones use what earlier ones wrote: models/tiny-qwen2vl, data/synthetic, ...).
RUN = [
    "python -m r1_gui.tiny --arch qwen2_vl --out models/tiny-qwen2vl",
    "python dataset/make_synthetic.py --output_dir data/synthetic-raw --episodes 40 --seed 0",
    "python dataset/raw_load_data.py --input data/synthetic-raw/synthetic-l1.json --image_dir "
    "data/synthetic-raw/images --output_dir data/synthetic --test_size 0.2",
    "python src/r1_gui/grpo_gui.py --config local_scripts/tiny_cpu_grpo.yaml",
    "python src/r1_gui/grpo_gui.py --config local_scripts/tiny_cpu_grpo.yaml --use_peft --lora_r 16 --lora_alpha 32 "
    "--output_dir runs/tiny-lora",
    "python eval/test_aitw.py --model_name_or_path runs/tiny-lora --dataset data/synthetic --max_pixels 50176 "
    "--output_dir results/tiny-lora",
    "python -m r1_gui.merge_lora --adapter runs/tiny-lora --output_dir runs/tiny-lora-merged",
    "python -m r1_gui.play --env_tasks web_search --policy expert --seed 3 --gif runs/episode.gif",
    "python -m r1_gui.play --env_tasks all --policy random --env_episodes 100",
    "python src/r1_gui/grpo_gui.py --config local_scripts/tiny_cpu_phone_grpo.yaml",
    "python dataset/make_synthetic.py --format guir1 --output_dir data/syn-guir1 --episodes 20 --width 224 --height 448",
    "python dataset/make_synthetic.py --format screenspot --output_dir data/syn-screenspot --episodes 20",
    "python -m r1_gui.tiny --arch qwen2_5_vl --out models/small-qwen25vl --size small",
    "python -m r1_gui.tiny --arch qwen3_vl --out models/tiny-qwen3vl",
    "python -m r1_gui.tiny --arch qwen3_vl_moe --out models/tiny-qwen3vl-moe",
    "python -m r1_gui.tiny --arch qwen3_vl --out models/web-qwen3vl --size small --pixel_norm 0.95 0.05",
]

# Shown but not run here, by the start of the command: why.
NOT_HERE = {
    "bash setup.sh": "the setup CI itself runs (.ci/run)",
    "source .venv/bin/activate": "a shell's own state (this test calls the venv's Python)",
    "python -m pytest": "the test suite itself",
    "python -m r1_gui.demo --output_dir runs/demo": "the whole demo, minutes of CPU (its --fast run is tested)",
    "bash local_scripts/demo.sh": "the demo's minutes of CPU (tests/test_demo.py runs its --fast form)",
    "python -m r1_gui.demo --multi_turn": "minutes of CPU (tests/test_multi_turn.py runs its --fast form)",
    "python -m r1_gui.demo --web": "minutes of CPU and browsers (tests/test_envs_web.py runs its --fast form)",
    "python -m r1_gui.demo --fast": "tests/test_demo.py runs it",
    "python -m r1_gui.play --env_tasks go_home --env_episodes 20 --model_name_or_path runs/demo-fast/grpo": "needs the "
    "--fast demo's model (tests/test_play.py plays a model)",
    "python dataset/raw_load_data.py --input aitw-l1.json": "Aguvis's AITW data, from outside",
    "torchrun --nproc_per_node 8": "8 GPUs",
    "MODEL_PATH=": "several nodes",
    "export RAY_AUTH_MODE=token": "a cluster of machines (tests/test_env_ray.py runs one on two nodes of this machine)",
    "ray get-auth-token": "a cluster of machines",
    "ray start": "a cluster of machines (tests/test_env_ray.py)",
    "python src/r1_gui/grpo_gui.py --config local_scripts/tiny_cpu_web_grpo.yaml --env_backend ray": "a cluster of "
    "machines (tests/test_env_ray.py trains on two nodes of this machine)",
    "python -m r1_gui.play --env r1_gui/Replay-v0": "data/aitw-2k, from outside (tests/test_play.py replays)",
    "python src/r1_gui/grpo_gui.py --env r1_gui/Replay-v0": "data/aitw-2k, from outside",
    "python src/r1_gui/grpo_gui.py --env my_module:MyEnv-v0": "a module of your own (tests/test_episode_evaluation.py)",
    "python bench/web_tasks.py": "100 seeds of every web task: minutes of browsers",
    "python eval/test_phone.py --model_name_or_path runs/tiny-cpu-phone-grpo --env_episodes 200": "200 episodes, minutes",
    "python eval/test_phone.py --model_name_or_path runs/demo-mt/grpo": "the multi-turn demo's model",
    "python src/r1_gui/grpo_gui.py --config local_scripts/tiny_cpu_web_grpo.yaml": "4 browsers (tests/test_envs_web.py "
    "trains on Web-v0)",
    "python eval/test_phone.py --env r1_gui/Web-v0": "190 and 1,300 episodes in browsers: minutes",
    "python eval/test_aitw.py --model_name_or_path runs/aguvis-grpo": "Aguvis-7B",
    "python eval/test_aitw.py --dataset data/aitw-2k": "data/aitw-2k, from outside",
    "python eval/test_aitw.py --benchmark": "the benchmarks' files, from outside (tests/test_benchmarks.py)",
    "python -m r1_gui.evaluation.stats.compare results/base": "two evaluations of your own (tests/test_compare.py)",
    "r1-gui-env-serve": "a server that runs until stopped (tests/test_env_serve.py starts and stops its own)",
    "python src/r1_gui/grpo_gui.py --config local_scripts/tiny_cpu_phone_grpo.yaml --env_backend openenv": "the server "
    "above (tests/test_env_openenv.py trains against one it starts)",
    "python -m r1_gui.play --env browsergym/": "a browser per reset (tests/test_env_browsergym.py plays these tasks)",
    "python eval/test_phone.py --model_name_or_path models/tiny-qwen2vl --env browsergym/": "browsers "
    "(tests/test_env_browsergym.py evaluates the tiny model on browsergym/miniwob.click-test)",
    "python src/r1_gui/grpo_gui.py --config local_scripts/tiny_cpu_grpo.yaml --reward_funcs step_success "
    "my_rewards:short_answer": "the my_rewards.py its section writes (tests/test_extending.py)",
    "python src/r1_gui/grpo_gui.py --config local_scripts/tiny_cpu_phone_grpo.yaml --advantage_estimator gigpo": "the "
    "my_turn_rewards.py its section writes (tests/test_extending.py)",
    "python src/r1_gui/grpo_gui.py --config local_scripts/tiny_cpu_phone_grpo.yaml --rollout_mode async": "the output "
    "folder the recipe's run above wrote (tests/test_async_rollouts.py trains this recipe async)",
}


def readme_commands() -> list[str]:
    """Every command of README.md's ```bash blocks: continuation lines joined, trailing comments and comment lines
    dropped, whitespace folded."""
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", (REPO / "README.md").read_text(), re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = re.sub(r"\s+#\s.*$", "", line).strip()
            if line and not line.startswith("#"):
                commands.extend(" ".join(part.split()) for part in line.split(" && "))
    return commands


def test_every_readme_command_is_run_here_or_said_why_not():
    unaccounted = [
        command
        for command in readme_commands()
        if command not in RUN and not any(command.startswith(prefix) for prefix in NOT_HERE)
    ]
    assert not unaccounted, f"README commands neither run by this test nor excused in NOT_HERE: {unaccounted}"
    missing = [command for command in RUN if command not in readme_commands()]
    assert not missing, f"commands this test runs that README no longer shows: {missing}"


@pytest.mark.slow
def test_the_short_readme_commands_run_as_typed(tmp_path):
    for name in ("src", "dataset", "eval", "local_scripts", "bench"):
        (tmp_path / name).symlink_to(REPO / name)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    for command in RUN:
        argv = shlex.split(command)
        argv[0] = sys.executable if argv[0] == "python" else argv[0]
        done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, f"{command}\n{done.stderr[-3000:]}"
    assert (tmp_path / "runs" / "tiny-cpu-grpo" / "model.safetensors").is_file()
    assert (tmp_path / "results" / "tiny-lora" / "metrics.json").is_file()
    assert (tmp_path / "runs" / "tiny-lora-merged" / "model.safetensors").is_file()
    assert (tmp_path / "runs" / "episode.gif").is_file()
