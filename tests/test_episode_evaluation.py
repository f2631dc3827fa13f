"""Episode evaluation (r1_gui.evaluation.episodes.run, eval/test_phone.py): metrics by hand, resume by content (another
model into the same folder is refused), a torn last line, LoRA adapter folders, any environment by id (module:Id),
and a plain environment in a user's own file through training and evaluation."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from r1_gui.evaluation.episodes.run import EpisodeSettings, evaluate_episodes, planned_resets
from r1_gui.evaluation.errors import EvaluationError
from r1_gui.evaluation.metrics import episode_metrics
from r1_gui.evaluation.run.protocol import episode_prompt_sha256

REPO = Path(__file__).resolve().parents[1]
HELPERS = Path(__file__).parent / "helpers"
TINY_RUN = dict(max_pixels=12544, max_new_tokens=8, batch_size=2)


def _record(task, success, steps, parsed, matched=None, progress=None, env_failure=None, **extra):
    turns = [{"parsed": p, "matched": matched} for p in parsed]
    return {"task": task, "success": success, "steps": steps, "turns": turns, "progress": progress,
            "env_failure": env_failure, **extra}  # fmt: skip


def test_episode_metrics_by_hand():
    records = [
        _record("go_home", True, 2, [True, True]),  # a success in 2 steps
        _record("go_home", False, 3, [True, False, False]),  # a failure, one turn in three parsed
        _record("web_search", True, 6, [True] * 6),  # a success in 6 steps
        _record("web_search", False, 1, [True], env_failure="hung"),  # the environment failed on turn 1
    ]
    metrics = episode_metrics(records)
    assert metrics["success_rate"] == pytest.approx(2 / 4)
    assert metrics["mean_steps_to_success"] == pytest.approx(4.0)
    assert metrics["turn_parse_rate"] == pytest.approx(10 / 12)
    assert metrics["mean_turns"] == pytest.approx(12 / 4)  # every episode's turns, won or lost: 2 + 3 + 6 + 1
    assert metrics["per_task"]["go_home"]["mean_turns"] == pytest.approx(5 / 2)
    assert metrics["env_failures"] == 1
    assert metrics["per_task"]["go_home"]["success_rate"] == 0.5
    assert metrics["per_task"]["web_search"]["mean_steps_to_success"] == 6
    assert "step_success" not in metrics and "episode_progress" not in metrics
    # intervals over the 4 episodes: Wilson for 2 of 4 successes; the mean steps by bootstrap over episodes, whose
    # resamples with a winner average 2 only, 6 only (each with probability 0.27) or a mix: [2, 6]
    assert metrics["success_rate_ci95"] == pytest.approx([0.150039, 0.849961], abs=1e-6)
    assert metrics["mean_steps_to_success_ci95"] == [2.0, 6.0]
    low, high = metrics["mean_turns_ci95"]  # a bootstrap over the 4 episodes' turn counts (1 to 6)
    assert 1.0 <= low < 3.0 < high <= 6.0
    assert metrics["per_task"]["go_home"]["success_rate_ci95"] == pytest.approx([0.094531, 0.905469], abs=1e-6)
    assert "repeats" not in metrics  # one pass: no spread across passes
    # a recorded-episode environment: step success over turns, progress over episodes
    replay = episode_metrics(
        [_record("replay", False, 2, [True, True], True, 0.5), _record("replay", False, 1, [False], False, 0.0)]
    )
    assert replay["step_success"] == pytest.approx(2 / 3) and replay["episode_progress"] == pytest.approx(0.25)


def _aimed(task, *hits):
    """An episode whose turns have these click_hit values (None: the screen had no target box; "-": a line of an
    earlier run, without the key)."""
    turns = [{"parsed": True, "matched": None} | ({} if hit == "-" else {"click_hit": hit}) for hit in hits]
    return {"task": task, "success": False, "steps": len(turns), "turns": turns, "progress": None, "env_failure": None}


@pytest.mark.parametrize(
    "records, rate, interval, per_task",
    [
        # no turn had a target box (the phone): no rate, no interval
        ([_aimed("a", None, None)], None, None, {"a": None}),
        # one episode, a miss then a hit: 1/2; one unit, every resample the same
        ([_aimed("a", False, True)], 0.5, [0.5, 0.5], {"a": 0.5}),
        # two episodes, 2 hits of 3 boxed turns; resamples give 1/2 (first twice, p 0.25), 1 (second twice, p 0.25)
        # or 2/3: the 2.5th and 97.5th percentiles are 1/2 and 1
        ([_aimed("a", False, True), _aimed("b", True)], 2 / 3, [0.5, 1.0], {"a": 0.5, "b": 1.0}),
        # turns on screens without a box, and an earlier run's lines without the key, are not counted
        ([_aimed("a", None, "-"), _aimed("b", True)], 1.0, [1.0, 1.0], {"a": None, "b": 1.0}),
        # an action that is no click (or did not parse) on a boxed screen is a miss
        ([_aimed("a", False), _aimed("b", False)], 0.0, [0.0, 0.0], {"a": 0.0, "b": 0.0}),
    ],
)
def test_click_hit_rate_by_hand(records, rate, interval, per_task):
    metrics = episode_metrics(records)
    assert metrics["click_hit_rate"] == (rate if rate is None else pytest.approx(rate))
    assert metrics["click_hit_rate_ci95"] == (interval if interval is None else pytest.approx(interval))
    assert {task: row["click_hit_rate"] for task, row in metrics["per_task"].items()} == pytest.approx(per_task)


def test_repeats_by_hand():
    records = [
        _record("go_home", True, 2, [True], id="go_home:1", repeat=0),  # succeeds, then fails: a flip
        _record("go_home", False, 3, [True], id="go_home:1#1", repeat=1),
        _record("go_home", True, 2, [True], id="go_home:2", repeat=0),  # succeeds both times
        _record("go_home", True, 2, [True], id="go_home:2#1", repeat=1),
        _record("open_app", False, 3, [False], id="open_app:3", repeat=0),  # fails both times
        _record("open_app", False, 3, [False], id="open_app:3#1", repeat=1),
    ]
    metrics = episode_metrics(records)
    assert (metrics["episodes"], metrics["success_rate"], metrics["repeats"]) == (6, 0.5, 2)
    # pass 0: 2 of 3, pass 1: 1 of 3; mean 0.5, sample standard deviation sqrt(2 (1/6)^2) = 0.2357
    assert [row["success_rate"] for row in metrics["per_repeat"]] == pytest.approx([2 / 3, 1 / 3])
    assert metrics["success_rate_mean"] == pytest.approx(0.5)
    assert metrics["success_rate_std"] == pytest.approx(0.235702, abs=1e-6)
    # one episode of three flips; Wilson 1 of 3
    assert metrics["flip_share"] == pytest.approx(1 / 3)
    assert metrics["flip_share_ci95"] == pytest.approx([0.061492, 0.792340], abs=1e-6)
    # success over the 3 episodes (their repeats together: 1, 2 and 0 wins of 2): a resample of the same episode
    # three times happens with probability 1/27 = 0.037 > 0.025 each way, so the interval is [0, 1]
    assert metrics["success_rate_ci95"] == [0.0, 1.0]
    assert metrics["per_task"]["go_home"]["flip_share"] == 0.5 and metrics["per_task"]["go_home"]["repeats"] == 2


class _Described:
    def __init__(self, tasks=(), episode_count=None, task_presets=None):
        self.tasks, self.episode_count, self.task_presets = tasks, episode_count, task_presets or {}


@pytest.mark.parametrize(
    "settings, described, expected",
    [
        # the declared tasks in turn, seeds from the offset
        (EpisodeSettings(episodes=3, seed_offset=10), _Described(("a", "b")), [("a", 10), ("b", 11), ("a", 12)]),
        # one asked-for task
        (EpisodeSettings(episodes=2, tasks=("b",)), _Described(("a", "b")), [("b", 100000), ("b", 100001)]),
        # a preset's name stands for its members (the web environment's miniwob_standard)
        (
            EpisodeSettings(episodes=3, tasks=("both",)),
            _Described(("a",), None, {"both": ("a", "c")}),
            [("a", 100000), ("c", 100001), ("a", 100002)],
        ),  # fmt: skip
        # a recorded split of 2 episodes: 5 asked, each played once
        (EpisodeSettings(episodes=5, seed_offset=0), _Described((), 2), [(None, 0), (None, 1)]),
    ],
)
def test_planned_resets(settings, described, expected):
    assert planned_resets(settings, described) == expected


def test_an_unknown_task_names_the_flag():
    with pytest.raises(EvaluationError, match=r"--env_tasks: x/E-v0 has no task\(s\) \['c'\]; valid: a, b"):
        planned_resets(EpisodeSettings(env_id="x/E-v0", tasks=("c",)), _Described(("a", "b")))


def test_evaluation_writes_its_files_and_resumes_by_content(tiny_qwen2_vl, tmp_path):
    settings = EpisodeSettings(tasks=("go_home", "open_app"), episodes=2, max_turns=2)
    first = evaluate_episodes(tiny_qwen2_vl, tmp_path, settings, **TINY_RUN)
    assert first["episodes"] == 2 and first["reused_episodes"] == 0
    lines = (tmp_path / "episodes.jsonl").read_text().splitlines()
    assert [json.loads(line)["id"] for line in lines] == ["go_home:100000", "open_app:100001"]
    # a kill -9 in the middle of writing a line leaves a torn last line: dropped, and that episode played again
    with open(tmp_path / "episodes.jsonl", "a") as handle:
        handle.write('{"id": "go_home:100002", "scores": {"succ')
    more = evaluate_episodes(
        tiny_qwen2_vl, tmp_path, EpisodeSettings(**{**settings.__dict__, "episodes": 4}), **TINY_RUN
    )
    assert more["episodes"] == 4 and more["reused_episodes"] == 2
    ids = [json.loads(line)["id"] for line in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    assert ids == ["go_home:100000", "open_app:100001", "go_home:100002", "open_app:100003"]
    assert set(more["per_task"]) == {"go_home", "open_app"}
    assert json.loads((tmp_path / "metrics.json").read_text()) == more
    report = (tmp_path / "report.md").read_text()
    assert report.startswith(f"# r1_gui/Phone-v0 evaluation of {tiny_qwen2_vl}")
    pictures = [line.split("(")[1].rstrip(")") for line in report.splitlines() if line.startswith("![")]
    assert pictures and all((tmp_path / picture).is_file() for picture in pictures)
    config = json.loads((tmp_path / "run_config.json").read_text())
    assert config["env_id"] == "r1_gui/Phone-v0" and config["model_fingerprint"]


def test_repeats_play_the_same_episodes_again_and_resume(tiny_qwen2_vl, tmp_path):
    settings = EpisodeSettings(tasks=("go_home",), episodes=2, max_turns=1, repeats=2)
    sampled = {**TINY_RUN, "temperature": 0.7}
    first = evaluate_episodes(tiny_qwen2_vl, tmp_path, settings, **sampled)
    ids = [json.loads(line)["id"] for line in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    assert ids == ["go_home:100000", "go_home:100001", "go_home:100000#1", "go_home:100001#1"]
    assert (first["episodes"], first["repeats"], len(first["per_repeat"])) == (4, 2, 2)
    assert {"success_rate_mean", "success_rate_std", "flip_share", "flip_share_ci95"} <= set(first)
    card = first["protocol"]
    assert (card["evaluation"], card["split"]["episodes"], card["split"]["repeats"]) == ("episodes", 2, 2)
    assert card["image"]["max_pixels"] == 12544 and card["decoding"]["temperature"] == 0.7
    assert card["prompt"]["sha256"] == episode_prompt_sha256(settings.history_images, None)
    # a third pass resumes the first two
    more = evaluate_episodes(tiny_qwen2_vl, tmp_path, EpisodeSettings(**{**settings.__dict__, "repeats": 3}), **sampled)
    assert (more["episodes"], more["reused_episodes"], more["repeats"]) == (6, 4, 3)
    report = (tmp_path / "report.md").read_text()
    assert "## Protocol" in report and "## Per repeat" in report and "| flip_share |" in report


def test_another_model_into_the_same_folder_is_refused_not_mixed(tiny_qwen2_vl, tiny_qwen2_5_vl, tmp_path):
    """Before: the second model played 0 episodes and wrote a report titled with its name from the first's."""
    out = tmp_path / "phone"
    command = [sys.executable, str(REPO / "eval" / "test_phone.py"), "--output_dir", str(out), "--episodes", "2",
               "--tasks", "go_home", "--max_turns", "1", "--max_new_tokens", "8", "--max_pixels", "12544"]  # fmt: skip
    first = subprocess.run([*command, "--model_name_or_path", str(tiny_qwen2_vl)], capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    report = (out / "report.md").read_text()
    second = subprocess.run([*command, "--model_name_or_path", str(tiny_qwen2_5_vl)], capture_output=True, text=True)
    assert second.returncode == 2
    (line,) = second.stderr.splitlines()
    assert line.startswith(f"error: {out / 'episodes.jsonl'} cannot be resumed by this run: the model's files differ")
    assert (out / "report.md").read_text() == report  # nothing rewritten
    again = subprocess.run(
        [*command, "--model_name_or_path", str(tiny_qwen2_5_vl), "--overwrite"], capture_output=True, text=True
    )
    assert again.returncode == 0, again.stderr
    assert (out / "report.md").read_text().startswith(f"# r1_gui/Phone-v0 evaluation of {tiny_qwen2_5_vl}")


def test_a_lora_adapter_folder_is_evaluated(tiny_qwen2_vl, tmp_path):
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForImageTextToText

    from r1_gui.processing import load_processor

    model = AutoModelForImageTextToText.from_pretrained(tiny_qwen2_vl, dtype=torch.float32)
    adapter = tmp_path / "adapter"
    get_peft_model(model, LoraConfig(r=2, target_modules=["q_proj", "v_proj"])).save_pretrained(adapter)
    load_processor(tiny_qwen2_vl).save_pretrained(adapter)
    assert json.loads((adapter / "adapter_config.json").read_text())["base_model_name_or_path"] == str(tiny_qwen2_vl)
    metrics = evaluate_episodes(adapter, tmp_path / "out", EpisodeSettings(episodes=2, max_turns=1), **TINY_RUN)
    assert metrics["episodes"] == 2


@pytest.mark.parametrize(
    "argv, first_line",
    [
        # a checkpoint folder nothing created
        (["--model_name_or_path", "./runs/phone-grpo"], "error: --model_name_or_path ./runs/phone-grpo"),
        # a misspelt environment keyword
        (["--env_kwargs", '{"widht": 300}'], "error: --env_kwargs {'widht': 300} does not fit r1_gui/Phone-v0"),
        # a replay folder that does not exist
        (["--env", "r1_gui/Replay-v0", "--env_kwargs", '{"data_dir": "/nonexistent"}'], "error: data_dir /nonexistent"),
    ],
)
def test_bad_input_is_one_error_line_and_leaves_no_folder(argv, first_line, tiny_qwen2_vl, tmp_path):
    argv = [*argv] if "--model_name_or_path" in argv else ["--model_name_or_path", str(tiny_qwen2_vl), *argv]
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, str(REPO / "eval" / "test_phone.py"), "--output_dir", str(out), *argv],
        capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines()[0].startswith(first_line) and len(done.stderr.splitlines()) == 1, done.stderr
    assert not out.exists()


@pytest.mark.slow
def test_a_plain_environment_in_a_users_own_file_trains_and_evaluates(tiny_qwen2_vl, tmp_path):
    """The contract's promise: a Gymnasium env in the user's module (here a copy of tests/helpers/button_env.py),
    named `module:Id`, trains two multi-turn GRPO steps and evaluates, with no change to r1_gui."""
    shutil.copy(HELPERS / "button_env.py", tmp_path / "my_buttons.py")
    train = subprocess.run(
        [sys.executable, str(REPO / "src" / "r1_gui" / "grpo_gui.py"),
         "--config", str(REPO / "local_scripts" / "tiny_cpu_phone_grpo.yaml"),
         "--env", "my_buttons:Button-v0", "--env_tasks", "left", "right",
         "--reward_funcs", "task_success", "episode_action_type",
         "--model_name_or_path", str(tiny_qwen2_vl), "--output_dir", "run", "--max_pixels", "3136"],
        capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert train.returncode == 0, train.stderr[-3000:]
    state = json.loads((tmp_path / "run" / "trainer_state.json").read_text())
    assert state["global_step"] == 2
    assert {"rewards/task_success/left", "episodes/env_failures"} <= {k for e in state["log_history"] for k in e}
    evaluate = subprocess.run(
        [sys.executable, str(REPO / "eval" / "test_phone.py"), "--env", "my_buttons:Button-v0",
         "--model_name_or_path", "run", "--output_dir", "eval", "--episodes", "2", "--max_turns", "2",
         "--max_new_tokens", "8", "--max_pixels", "3136"],
        capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert evaluate.returncode == 0, evaluate.stderr[-3000:]
    metrics = json.loads((tmp_path / "eval" / "metrics.json").read_text())
    assert metrics["episodes"] == 2 and set(metrics["per_task"]) == {"left", "right"}


def test_progress_and_the_reuse_are_shown(tiny_qwen2_vl, tmp_path):
    """Issue 34 item 11: a progress bar with counts on the episodes, and the resume said where the user sees it."""
    command = [sys.executable, str(REPO / "eval" / "test_phone.py"), "--model_name_or_path", str(tiny_qwen2_vl),
               "--output_dir", str(tmp_path), "--tasks", "go_home", "--max_turns", "1", "--max_new_tokens", "8",
               "--max_pixels", "12544"]  # fmt: skip
    first = subprocess.run([*command, "--episodes", "2"], capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    assert "episodes: 100%" in first.stderr and "2/2" in first.stderr
    second = subprocess.run([*command, "--episodes", "3"], capture_output=True, text=True)
    assert second.returncode == 0, second.stderr
    assert "2 of 3 episodes already played, 1 to go" in second.stderr and "1/1" in second.stderr


@pytest.mark.parametrize(
    "text, width, lines, expected",
    [
        # words are never cut: the caption wraps at spaces
        ("click(x=0.5, y=0.25) on the search bar", 16, 3, ["click(x=0.5,", "y=0.25) on the", "search bar"]),
        # what does not fit ends the last line with an ellipsis
        ("one two three four five six seven", 9, 2, ["one two", "three …"]),
        # one word longer than a line is split, not dropped
        ("abcdefghijkl", 5, 2, ["abcde", "fghi…"]),
        # runs of spaces and newlines fold into one space
        ("open\n\nthe   app", 20, 3, ["open the app"]),
    ],
)
def test_captions_wrap_at_words(text, width, lines, expected):
    """Issue 34 item 13: episode strips cut captions mid-word and ran words together."""
    from r1_gui.envs.render import wrapped

    assert wrapped(text, width, lines) == expected


def test_a_strip_shows_the_instruction_above_the_screens(tmp_path):
    import numpy as np
    from PIL import Image

    from r1_gui.envs.render import frame, save_episode

    screen = np.full((96, 64, 3), 200, np.uint8)
    plain = Image.open(save_episode([frame(screen, None, "1. back")], tmp_path / "plain.png"))
    titled = Image.open(save_episode([frame(screen, None, "1. back")], tmp_path / "t.png", title="Open the app."))
    assert titled.height > plain.height  # a band above the frames
    band = np.asarray(titled)[: titled.height - plain.height]
    assert (band < 100).any(), "the instruction is drawn in the band"


def test_the_card_warns_where_the_episodes_differ_from_the_training_runs(tmp_path):
    """The README's web evaluation ran 12 turns of 128 tokens on a model trained on 3 of 24, and nothing said so
    (issue 54, item 7): an episode training run records its episodes, and the evaluation of its folder or of one of
    its checkpoints warns on the card for each setting that differs."""
    from r1_gui.checkpoints import write_episode_settings
    from r1_gui.evaluation.config import EvalConfig
    from r1_gui.evaluation.episodes.run import unlike_training

    trained = {"env_id": "r1_gui/Web-v0", "env_kwargs": {"max_steps": 3}, "tasks": ["click-test"], "max_turns": 3,
               "max_turn_tokens": 24, "history_images": 2}  # fmt: skip
    write_episode_settings(tmp_path / "run", trained)
    (tmp_path / "run" / "checkpoint-2").mkdir()
    saved = tmp_path / "run" / "episode_settings.json"
    same = EpisodeSettings(env_id="r1_gui/Web-v0", env_kwargs={"max_steps": 3}, max_turns=3, history_images=2)
    for folder in (tmp_path / "run", tmp_path / "run" / "checkpoint-2"):
        assert unlike_training(folder, same, EvalConfig(max_new_tokens=24)) == []
        other = EpisodeSettings(env_id="r1_gui/Web-v0", max_turns=12, history_images=2)
        assert unlike_training(folder, other, EvalConfig(max_new_tokens=128)) == [
            f"--env_kwargs '{{}}' differs from the training run's '{{\"max_steps\": 3}}' (in {saved}); pass "
            "--env_kwargs '{\"max_steps\": 3}' to play the episodes it was trained on",
            f"--max_turns 12 differs from the training run's 3 (in {saved}); pass --max_turns 3 to play the episodes "
            "it was trained on",
            f"--max_new_tokens 128 differs from the training run's 24 (in {saved}); pass --max_new_tokens 24 to play "
            "the episodes it was trained on",
        ]
    assert unlike_training(tmp_path / "elsewhere", same, EvalConfig(max_new_tokens=128)) == []  # no record: none


def test_the_card_warns_when_the_episodes_play_other_tasks_than_training_did(tmp_path):
    """A checkpoint trained on 2 of the phone's tasks was evaluated on all of them, without a word, while
    --max_turns and --max_new_tokens were warned about (issue 71, item 8)."""
    from r1_gui.checkpoints import write_episode_settings
    from r1_gui.evaluation.episodes.run import tasks_unlike_training

    write_episode_settings(tmp_path, {"env_id": "r1_gui/Phone-v0", "tasks": ["go_home", "open_app"]})
    saved = tmp_path / "episode_settings.json"
    every = EpisodeSettings(env_id="r1_gui/Phone-v0")
    assert tasks_unlike_training(tmp_path, every, ["go_home", "open_app", "go_back"]) == [
        f"--env_tasks (not given: every task r1_gui/Phone-v0 declares) plays go_home, open_app, go_back; the "
        f"training run played go_home, open_app (in {saved}); pass --env_tasks go_home open_app to play the tasks it "
        "was trained on"
    ]
    chosen = EpisodeSettings(env_id="r1_gui/Phone-v0", tasks=("go_back",))
    assert tasks_unlike_training(tmp_path, chosen, ["go_back"])[0].startswith("--env_tasks go_back plays go_back; ")
    assert tasks_unlike_training(tmp_path, every, ["open_app", "go_home"]) == []  # the same tasks, in another order
    web = EpisodeSettings(env_id="r1_gui/Web-v0")  # another environment: its own warning says so (unlike_training)
    assert tasks_unlike_training(tmp_path, web, ["click-test"]) == []


def test_the_commands_that_play_episodes_take_their_settings_under_one_spelling(tiny_qwen2_vl, tmp_path):
    """grpo_gui.py, eval/test_phone.py and python -m r1_gui.play read the same episode flags into the same values
    (issue 52 item 3); evaluation's and play's old names stay as aliases for one release."""
    from r1_gui.evaluation.episodes.cli import parse_args as eval_args
    from r1_gui.play import parse_args as play_args
    from r1_gui.training.grpo import parse_grpo_arguments

    episodes = ["--env", "r1_gui/Phone-v0", "--env_kwargs", '{"width": 224}', "--env_tasks", "go_home",
                "--env_episodes", "3", "--env_seed_offset", "7"]  # fmt: skip
    turns = ["--max_turns", "2", "--history_images", "1", "--env_step_timeout", "30"]
    where = ["--model_name_or_path", str(tiny_qwen2_vl), "--output_dir", str(tmp_path / "out")]
    trained, _, _ = parse_grpo_arguments([*where, *episodes, *turns, "--use_cpu", "true", "--bf16", "false"])
    assert (trained.env_id, json.loads(trained.env_kwargs), trained.env_tasks) == (
        "r1_gui/Phone-v0",
        {"width": 224},
        ["go_home"],
    )
    assert (trained.env_episodes, trained.env_seed_offset, trained.max_turns, trained.history_images) == (3, 7, 2, 1)
    assert trained.env_step_timeout == 30
    evaluated = EpisodeSettings.from_args(eval_args([*where, *episodes, *turns]))
    assert (evaluated.env_id, evaluated.env_kwargs, evaluated.tasks) == (
        "r1_gui/Phone-v0",
        {"width": 224},
        ("go_home",),
    )
    assert (evaluated.episodes, evaluated.seed_offset, evaluated.max_turns, evaluated.history_images) == (3, 7, 2, 1)
    assert evaluated.env_step_timeout == 30
    played = play_args([*episodes])  # read as training reads them: the same names, the JSON as given, a task list
    assert (played.env_id, json.loads(played.env_kwargs), played.env_tasks, played.env_episodes, played.seed) == (
        "r1_gui/Phone-v0", {"width": 224}, ["go_home"], 3, 7
    )  # fmt: skip
    old_eval = eval_args([*where, "--tasks", "go_home", "--episodes", "3", "--seed_offset", "7"])
    assert EpisodeSettings.from_args(old_eval) == EpisodeSettings.from_args(eval_args([*where, *episodes[4:]]))
    old_play = play_args(["--task", "go_home", "--episodes", "3", "--seed", "7"])
    assert (old_play.env_tasks, old_play.env_episodes, old_play.seed) == (["go_home"], 3, 7)
