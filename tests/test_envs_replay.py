"""ReplayEnv over the builder's parquet: advances on a match, ends or patches on a mismatch, reports bad episodes."""

import logging

import gymnasium
import pyarrow.parquet as pq
import pytest
from gymnasium.utils.env_checker import check_env

import r1_gui.envs  # noqa: F401  (registers the environments)
from r1_gui.actions import Action, format_action
from r1_gui.envs import ReplayEnv


def long_episode(env):
    """The id of an episode of at least three recorded steps."""
    return next(episode_id for episode_id in env.episode_ids if len(env.episodes[episode_id]) >= 3)


def wrong_action(recorded):
    """An action that never matches the recorded one by the AITW rule."""
    return Action("home") if recorded.type != "home" else Action("back")


def test_recorded_actions_match_every_step(synthetic_dataset):
    env = gymnasium.make("r1_gui/Replay-v0", data_dir=synthetic_dataset, split="train")
    for seed in range(5):
        _, info = env.reset(seed=seed)
        steps = len(env.unwrapped.steps)
        for number in range(1, steps + 1):
            _, reward, terminated, truncated, info = env.step(info["expert_action"])
            assert info["matched"] and info["progress"] == pytest.approx(number / steps)
            assert terminated == (number == steps) and not truncated
        assert reward == 1.0 and info["success"] and info["expert_action"] is None


def test_model_text_of_the_recorded_action_matches(synthetic_dataset):
    env = ReplayEnv(synthetic_dataset, split="train")
    _, info = env.reset(options={"episode_id": long_episode(env)})
    code = format_action(info["expert_action"], "aguvis")  # the recorded action as Aguvis code
    _, _, terminated, _, after = env.step(f"Action: next step\nassistantos\n{code}")
    assert after["matched"] and after["recorded_step"] == 1 and not terminated


def test_mismatch_without_patch_ends_the_episode_as_failure(synthetic_dataset):
    env = ReplayEnv(synthetic_dataset, split="train", patch="none")
    _, info = env.reset(options={"episode_id": long_episode(env)})
    _, reward, terminated, _, info = env.step(wrong_action(info["expert_action"]))
    assert (reward, terminated, info["success"], info["matched"], info["progress"]) == (0.0, True, False, False, 0.0)
    assert "does not match" in info["error"]


def test_mismatch_with_expert_patch_goes_on_and_counts_it(synthetic_dataset):
    env = ReplayEnv(synthetic_dataset, split="train", patch="expert")
    _, info = env.reset(options={"episode_id": long_episode(env)})
    steps = len(env.steps)
    _, _, terminated, _, info = env.step(wrong_action(info["expert_action"]))
    assert not terminated and info["recorded_step"] == 1 and info["mismatches"] == 1
    while not terminated:
        _, reward, terminated, _, info = env.step(info["expert_action"])
    assert reward == 0.0 and not info["success"] and info["progress"] == pytest.approx((steps - 1) / steps)


@pytest.mark.parametrize(
    "bad",
    ["no action here", "pyautogui.click(x=nan, y=0.5)", "pyautogui.click(x=0.5, y=0.5)" * 40_000, None, 7],
    ids=["unparsable", "nan", "1MB", "None", "int"],
)
def test_unparsable_text_is_a_mismatch_and_never_raises(synthetic_dataset, bad):
    env = ReplayEnv(synthetic_dataset, split="train", patch="expert")
    env.reset(seed=0)
    _, reward, _, _, info = env.step(bad)
    assert reward == 0.0 and not info["parsed"] and info["error"] and info["mismatches"] == 1


def test_seed_wraps_around_the_episodes(synthetic_dataset):
    env = ReplayEnv(synthetic_dataset, split="test")
    count = len(env.episode_ids)
    assert env.reset(seed=1)[1]["episode_id"] == env.reset(seed=1 + count)[1]["episode_id"] == env.episode_ids[1]


def test_bad_episodes_are_reported_and_skipped(synthetic_dataset, tmp_path, caplog):
    table = pq.read_table(synthetic_dataset / "train.parquet").to_pylist()
    ids = sorted({row["episode_id"] for row in table})
    gap = next(i for i in ids if sum(row["episode_id"] == i for row in table) >= 3)
    doubled = next(i for i in ids if i != gap)
    rows = [row for row in table if not (row["episode_id"] == gap and row["step"] == 1)]  # a missing step
    rows += [row for row in table if row["episode_id"] == doubled and row["step"] == 0]  # a duplicated step
    pq.write_table(pq.read_table(synthetic_dataset / "train.parquet").from_pylist(rows), tmp_path / "train.parquet")
    with caplog.at_level(logging.WARNING, logger="r1_gui.envs.replay.env"):
        env = ReplayEnv(tmp_path, split="train")
    assert env.bad_episodes == {gap: "missing steps", doubled: "duplicated steps"}
    assert "skipped 2 bad episodes" in caplog.text and gap not in env.episode_ids
    with pytest.raises(ValueError, match="missing steps"):
        env.reset(options={"episode_id": gap})


def test_missing_file_and_column_are_named(synthetic_dataset, tmp_path):
    with pytest.raises(FileNotFoundError, match="validation.parquet"):
        ReplayEnv(synthetic_dataset, split="validation")
    table = pq.read_table(synthetic_dataset / "train.parquet").drop_columns(["episode_id"])
    pq.write_table(table, tmp_path / "train.parquet")
    with pytest.raises(ValueError, match=r"train\.parquet lacks the column\(s\) episode_id"):
        ReplayEnv(tmp_path, split="train")


def test_check_env_passes(synthetic_dataset):
    check_env(gymnasium.make("r1_gui/Replay-v0", data_dir=synthetic_dataset, split="test").unwrapped)


def test_unknown_patch_mode_names_the_choices(synthetic_dataset):
    with pytest.raises(ValueError, match="none, expert"):
        ReplayEnv(synthetic_dataset, patch="always")
