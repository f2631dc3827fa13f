"""README's "Extending r1_gui", done exactly as written: a reward of your own named module:function, a benchmark
entry, a task family of the phone. (An environment of your own: tests/test_episode_evaluation.py.)"""

import json
import sys

import pytest

from r1_gui import rewards
from r1_gui.actions import Action


def test_a_reward_of_your_own_named_module_function(tmp_path, monkeypatch):
    write_reward_module(tmp_path, "def short_answer(completions, **columns):\n"  # the module beside you, as README says
                                  "    return [1.0 if len(str(c)) < 200 else 0.0 for c in completions]\n"
                                  'short_answer.needs = ("completion",)\n', monkeypatch)  # fmt: skip
    rewards.check_reward_needs(["step_success", "my_rewards:short_answer"], {"completion", "solution"}, "a dataset")
    step, mine = rewards.get_reward_funcs(["step_success", "my_rewards:short_answer"])
    assert mine.__name__ == "my_rewards:short_answer"  # trl logs rewards/my_rewards:short_answer/mean
    assert mine(completions=["mobile.back()", "x" * 300]) == [1.0, 0.0]
    with pytest.raises(ValueError, match="my_rewards:short_answer needs a single-step answer"):
        rewards.check_reward_needs(["my_rewards:short_answer"], {"episode"}, "--env r1_gui/Phone-v0")
    with pytest.raises(ValueError, match="--reward_funcs my_rewards:nothing"):
        rewards.get_reward_funcs(["my_rewards:nothing"])


def test_an_episode_reward_of_your_own_with_per_turn_values(tmp_path, monkeypatch):
    from r1_gui.agent.context import History
    from r1_gui.agent.loop import Episode, Turn

    (tmp_path / "my_turn_rewards.py").write_text(
        "def clicks(completions=None, episode=None, *, per_turn=False, **columns):\n"
        '    per_turn_values = [[float(t.action is not None and t.action.type == "click") for t in e.turns] for e in episode]\n'
        "    return per_turn_values if per_turn else [sum(v) / max(1, len(v)) for v in per_turn_values]\n"
        'clicks.needs = ("episode",)\n'
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(rewards, "REWARD_FUNCS", dict(rewards.REWARD_FUNCS))
    rewards.check_reward_needs(["task_success", "my_turn_rewards:clicks"], {"episode"}, "--env r1_gui/Phone-v0")
    _, mine = rewards.get_reward_funcs(["task_success", "my_turn_rewards:clicks"])
    episode = Episode("go_home", 0, History("x", [], [], []))
    for action in (Action("click", x=0.1, y=0.2), None, Action("wait", seconds=1.0)):  # a click, nothing, a wait
        episode.turns.append(Turn(None, [], "", None, action, None))
    assert mine(episode=[episode]) == [pytest.approx(1 / 3)]
    assert rewards.turn_values(mine, [episode]) == [[1.0, 0.0, 0.0]]


def test_a_benchmark_entry(tmp_path, monkeypatch):
    """One BENCHMARKS entry makes a GUI-R1-format file a benchmark the evaluation reads, scores and reports."""
    from r1_gui.actions import format_action, parse_action
    from r1_gui.evaluation import evaluate_predictions
    from r1_gui.evaluation.peers import benchmarks
    from r1_gui.synthetic.benchmark_sets import write_benchmark_set

    monkeypatch.setitem(benchmarks.BENCHMARKS, "my_bench", benchmarks.Benchmark("navigation", "my test steps"))
    test_file = write_benchmark_set(tmp_path, "guir1", 2, seed=3, width=224, height=448)["file"]
    rows = benchmarks.load_benchmark(test_file, "my_bench")
    lines = [
        {"id": row["id"], "output": format_action(parse_action(row["solution"][len("<answer>") : -len("</answer>")]))}
        for row in rows
    ]
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("".join(json.dumps(line) + "\n" for line in lines))
    metrics = evaluate_predictions(predictions, test_file, output_dir=tmp_path / "out", benchmark="my_bench",
                                   gallery_size=0)  # fmt: skip
    assert metrics["benchmark"]["name"] == "my_bench" and metrics["benchmark"]["step_success"] == 1.0
    assert "my_bench" in (tmp_path / "out" / "report.md").read_text()


def test_a_task_family_of_the_phone(monkeypatch):
    from r1_gui.envs.contract import check_env, declared_tasks
    from r1_gui.envs.phone import tasks
    from r1_gui.envs.phone.env import PhoneEnv
    from r1_gui.envs.phone.world import HOME, SETTINGS_APP

    def open_settings(world, rng):
        goal = tasks.Goal(
            "open_settings", "Open the Settings app.", page=world.main_page(SETTINGS_APP), app=SETTINGS_APP
        )
        return (HOME,), goal, SETTINGS_APP, ()

    monkeypatch.setitem(tasks.FAMILIES, "open_settings", open_settings)
    monkeypatch.setitem(tasks.MAX_STEPS, "open_settings", 6)
    env = PhoneEnv(task="open_settings")
    assert "open_settings" in declared_tasks(env)
    check_env(env)
    for seed in range(5):
        observation, info = env.reset(seed=seed)
        assert observation["instruction"] == "Open the Settings app."
        done = False
        while not done:
            observation, reward, terminated, truncated, info = env.step(info["expert_action"])
            done = terminated or truncated
        assert info["success"] and reward == 1.0, f"seed {seed}: the expert did not reach the new family's goal"


@pytest.mark.slow
def test_training_from_python_as_the_readme_writes_it(tiny_qwen2_vl, synthetic_dataset, tmp_path, monkeypatch):
    """README's "Training from Python" block, run as written from a folder holding models/tiny-qwen2vl and
    data/synthetic: typed settings in, a trained run out."""
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    section = readme.split("**Training from Python.**", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "tiny-qwen2vl").symlink_to(tiny_qwen2_vl)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "synthetic").symlink_to(synthetic_dataset)
    monkeypatch.chdir(tmp_path)
    namespace = {}
    exec(compile(code, "README.md", "exec"), namespace)
    state = json.loads((tmp_path / "runs" / "from-python" / "trainer_state.json").read_text())
    assert state["global_step"] == 2 and (tmp_path / "runs" / "from-python" / "model.safetensors").is_file()
    # answers as short as the tiny recipe's: trl's 512 made each step several times slower (issue 71, item 11)
    assert namespace["settings"][1].max_completion_length <= 48


def write_reward_module(folder, text: str, monkeypatch) -> None:
    """my_rewards.py beside you, importable as README says; the registry restored after the test."""
    (folder / "my_rewards.py").write_text(text)
    monkeypatch.chdir(folder)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delitem(sys.modules, "my_rewards", raising=False)
    monkeypatch.setattr(rewards, "REWARD_FUNCS", dict(rewards.REWARD_FUNCS))


def test_a_reward_that_needs_a_column_the_data_lacks_names_the_reward_the_column_and_the_columns(tmp_path,
                                                                                                   monkeypatch):  # fmt: skip
    """A `needs` entry that is a dataset column the data lacks was a KeyError in check_reward_needs (issue 71,
    item 3): only the four needs of NEED_MEANINGS were known."""
    write_reward_module(tmp_path, 'def hard(completions, difficulty, **columns):\n'
                                  '    return [float(d > 2) for d in difficulty]\n'
                                  'hard.needs = ("completion", "difficulty")\n', monkeypatch)  # fmt: skip
    columns = {"completion", "image", "problem", "solution"}
    with pytest.raises(ValueError) as refused:
        rewards.check_reward_needs(["step_success", "my_rewards:hard"], columns, "--dataset_name data/x")
    assert str(refused.value) == (
        "--reward_funcs: my_rewards:hard needs the column difficulty, which --dataset_name data/x does not have (its "
        "columns: image, problem, solution; it would score nothing). Rewards that fit this run: accuracy, format, "
        "action_type, step_success, click_distance, click_gaussian, text_f1, r1v_accuracy, r1v_format, "
        "guir1_accuracy, guir1_format"
    )
    rewards.check_reward_needs(["my_rewards:hard"], columns | {"difficulty"}, "--dataset_name data/y")  # it fits


def test_every_reward_declares_its_needs_as_a_users_reward_does():
    """One registry (issue 70, item 6): each reward says what it needs in its own `needs` attribute, the way README
    tells a user to, instead of a second dict beside REWARD_FUNCS."""
    assert not hasattr(rewards, "REWARD_NEEDS")
    for name, func in rewards.REWARD_FUNCS.items():
        assert isinstance(func.needs, tuple) and func.needs, name
        assert rewards.reward_needs(name) == func.needs
    assert rewards.reward_needs("accuracy") == ("completion", "solution")
    assert rewards.reward_needs("episode_click_distance") == ("episode", "expert_action")
    assert rewards.reward_needs("task_success") == ("episode",)


@pytest.mark.parametrize(
    "body, said",
    [
        # a reward that raises: its name, the step, the exception and the line of the user's file
        (
            "    return [1 / 0 for c in completions]\n",
            "reward my_rewards:broken raised ZeroDivisionError: division by zero (my_rewards.py, line 2) in step 4",
        ),
        # one value for a batch of two completions
        ("    return [1.0]\n", "reward my_rewards:broken returned 1 values for 2 completions in step 4"),
        # not a list at all
        ("    return 1.0\n", "reward my_rewards:broken returned 1.0 (a float) for 2 completions in step 4"),
        # a value that is no number
        (
            "    return [1.0, 'good']\n",
            "reward my_rewards:broken returned 'good' for completion 1 in step 4: give a number or None",
        ),
    ],
    ids=["raises", "too-few", "not-a-list", "not-a-number"],
)
def test_a_users_reward_that_raises_or_returns_the_wrong_values_is_one_line_naming_it_and_the_step(
    tmp_path, monkeypatch, body, said
):
    """Issue 71, item 4: a 74-80-line traceback after the model loaded."""
    from types import SimpleNamespace

    from r1_gui.cli_errors import UserError

    write_reward_module(tmp_path, "def broken(completions, **columns):\n" + body, monkeypatch)
    (reward,) = rewards.get_reward_funcs(["my_rewards:broken"])
    with pytest.raises(UserError) as refused:
        reward(completions=["a", "b"], trainer_state=SimpleNamespace(global_step=3))
    assert str(refused.value).startswith(said), str(refused.value)
