"""Multi-turn GRPO on PhoneEnv episodes: the agent loop (turn limit, terminate, malformed calls, the screenshot
window), the loss mask, the episode rewards and two training steps of a tiny model through grpo_gui.py --env."""

import json
import math
import warnings
from pathlib import Path
from unittest import mock

import pytest
import torch
from PIL import Image
from safetensors.torch import load_file

import r1_gui.envs  # noqa: F401  (registers the environments)
from r1_gui import rewards
from r1_gui.actions import Action, styled_action
from r1_gui.agent.context import OBSERVATION_TOKENS, History, check_token_budget, turn_messages
from r1_gui.agent.loop import Episode, Turn, play_episodes
from r1_gui.envs.runtime.pool import EnvPool
from r1_gui.grpo_gui import main
from r1_gui.multi_turn import trainer as multi_turn_trainer
from r1_gui.multi_turn.episode_row import episode_row
from r1_gui.processing import CHAT_TEMPLATE, load_processor
from r1_gui.training.grpo import parse_grpo_arguments

REPO = Path(__file__).resolve().parents[1]
RECIPE = REPO / "local_scripts" / "tiny_cpu_phone_grpo.yaml"

CLICK_NOWHERE = 'Thought: try.\nAction: tap.\n<tool_call>\n{"name": "mobile_use", "arguments": {"action": "wait", "time": 1}}\n</tool_call>'
TERMINATE = '<tool_call>{"name": "mobile_use", "arguments": {"action": "terminate", "status": "success"}}</tool_call>'
MALFORMED = '<tool_call>{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [5</tool_call>'


@pytest.fixture(scope="module")
def processor(tiny_qwen2_vl):
    return load_processor(tiny_qwen2_vl, min_pixels=3136, max_pixels=12544, chat_template=CHAT_TEMPLATE)


def scripted(processor, texts_per_turn):
    """A policy that writes texts_per_turn[turn] (the same for every episode), as token ids ending in <|im_end|>."""
    tokenizer = processor.tokenizer
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    calls = []

    def policy(inputs, infos):
        text = texts_per_turn[min(len(calls), len(texts_per_turn) - 1)]
        calls.append(inputs)
        return [tokenizer.encode(text, add_special_tokens=False) + [end] for _ in inputs], None

    policy.calls = calls
    return policy


def play(processor, policy, resets, max_turns=4, history_images=2, env_id="r1_gui/Phone-v0", env_kwargs=None):
    with EnvPool(env_id, env_kwargs) as pool:
        return play_episodes(
            pool,
            resets,
            policy,
            processor,
            max_turns=max_turns,
            history_images=history_images,
            decode=lambda ids: processor.tokenizer.decode(ids, skip_special_tokens=True),
        )


# -- the rollout --------------------------------------------------------------------------------------------------


def test_an_episode_reaching_max_turns_is_truncated_and_scored(processor):
    (episode,) = play(processor, scripted(processor, [CLICK_NOWHERE]), [("toggle_setting", 3)], max_turns=3)
    assert len(episode.turns) == 3 and episode.truncated and not episode.terminated and not episode.success
    assert rewards.REWARD_FUNCS["task_success"](episode=[episode]) == [0.0]
    assert rewards.REWARD_FUNCS["episode_format"](episode=[episode]) == [1.0]  # every turn in Thought/Action form
    # the expert never waits on this screen: action type 0 on every turn, and the score is a number, not None
    assert rewards.REWARD_FUNCS["episode_action_type"](episode=[episode]) == [0.0]


def test_terminate_ends_the_episode_at_once(processor):
    policy = scripted(processor, [TERMINATE, CLICK_NOWHERE])
    (episode,) = play(processor, policy, [("go_home", 1)], max_turns=5)
    assert len(episode.turns) == 1 and episode.terminated and not episode.truncated
    assert len(policy.calls) == 1, "no turn may be generated after terminate"
    assert not episode.success  # terminate(success) outside the goal state fails


def test_a_malformed_tool_call_gets_the_error_back_as_the_next_observation(processor):
    policy = scripted(processor, [MALFORMED, CLICK_NOWHERE])
    (episode,) = play(processor, policy, [("go_home", 2)], max_turns=2)
    assert len(episode.turns) == 2, "the episode goes on after a malformed call"
    first = episode.turns[0]
    assert first.action is None and "no action" in first.error
    assert episode.history.responses[0].startswith("<tool_response>step 1: error: the text holds no action")
    second_context = processor.tokenizer.decode(episode.turns[1].context.context_ids)
    assert "step 1: error: the text holds no action" in second_context


def test_the_screenshot_window_holds_exactly_the_last_history_images(processor):
    screens = [Image.new("RGB", (32, 64), (i * 40, 0, 0)) for i in range(5)]
    history = History(
        "Do it",
        screens,
        [f"turn {i}" for i in range(4)],
        [f"<tool_response>step {i + 1}: ok</tool_response>" for i in range(4)],
    )
    for history_images in (1, 2, 3):
        messages = turn_messages(history, history_images)
        shown = [part["image"] for m in messages for part in m["content"] if part["type"] == "image"]
        assert shown == screens[-history_images:]
        texts = [part["text"] for m in messages if m["role"] == "assistant" for part in m["content"]]
        assert texts == [f"turn {i}" for i in range(4)], "dropped screenshots keep their turns as text"
    # in a played episode: turn t's tokenized context carries screenshots t-1 and t, and their image tokens only
    (episode,) = play(processor, scripted(processor, [CLICK_NOWHERE]), [("toggle_setting", 5)], max_turns=4)
    pad_id = processor.tokenizer.convert_tokens_to_ids("<|image_pad|>")
    for t, turn in enumerate(episode.turns):
        assert turn.context.images == episode.history.screenshots[max(0, t - 1) : t + 1]
        per_image = int(turn.context.image_grid_thw[0].prod()) // 4
        assert turn.context.context_ids.count(pad_id) == per_image * len(turn.context.images)


def test_each_turn_keeps_its_step_reward_and_the_state_it_was_generated_from(processor):
    import numpy as np

    from r1_gui.envs.contract import state_key
    from r1_gui.multi_turn.expert import ExpertPolicy

    played = play(processor, ExpertPolicy(processor.tokenizer), [("go_home", 7), ("go_home", 7), ("go_home", 8)],
                  max_turns=8)  # fmt: skip
    for episode in played:
        assert episode.success and episode.terminated
        # the environment's step reward: 1.0 for the action that ended the episode in success, 0 before
        assert [turn.reward for turn in episode.turns] == [0.0] * (len(episode.turns) - 1) + [1.0]
        # each turn's state is the screen (and instruction) its context ended with
        for shown, turn in zip(episode.history.screenshots, episode.turns, strict=False):
            observation = {"screenshot": np.asarray(shown), "instruction": episode.history.instruction}
            assert turn.state_key == state_key(observation, {})
    # the same reset played the same way passes through the same states; another seed starts elsewhere
    assert [t.state_key for t in played[0].turns] == [t.state_key for t in played[1].turns]
    assert played[0].turns[0].state_key != played[2].turns[0].state_key


def test_the_row_mask_excludes_every_tool_response_token(processor):
    (episode,) = play(processor, scripted(processor, [MALFORMED, CLICK_NOWHERE]), [("go_home", 4)], max_turns=3)
    row = episode_row(episode, processor.tokenizer)
    completion, mask = row.completion_ids, row.env_mask
    assert len(completion) == len(mask)
    answer_positions = {
        p
        for offset, turn in zip(row.offsets, episode.turns, strict=True)
        for p in range(offset, offset + len(turn.completion_ids))
    }
    for position, value in enumerate(mask):
        assert value == (1 if position in answer_positions else 0), position
    tool_text = processor.tokenizer.decode([token for token, m in zip(completion, mask, strict=True) if m == 0])
    assert tool_text.count("<tool_response>") == 2 and "error:" in tool_text
    for offset, turn in zip(row.offsets, episode.turns, strict=True):  # each answer lies where its offset says
        assert completion[offset : offset + len(turn.completion_ids)] == turn.completion_ids
    assert row.prompt_ids == episode.turns[0].context.context_ids


def test_replay_episodes_play_semi_online(processor, synthetic_dataset):
    from r1_gui.envs import ReplayEnv
    from r1_gui.envs.contract import reset_plan

    env_kwargs = {"data_dir": str(synthetic_dataset), "split": "train", "patch": "expert"}
    (episode,) = play(
        processor, scripted(processor, [TERMINATE]), [(None, 0)], max_turns=3, env_id="r1_gui/Replay-v0",
        env_kwargs=env_kwargs,
    )  # fmt: skip
    local = ReplayEnv(**env_kwargs)
    local.reset(seed=0)
    recorded = local.steps
    assert episode.task == "replay" and not episode.success
    assert [turn.expert_action for turn in episode.turns] == [
        row["ground_truth"] for row in recorded[: len(episode.turns)]
    ]
    assert [turn.matched for turn in episode.turns] == [
        turn.expert_action.type == "terminate" for turn in episode.turns
    ]
    assert len(episode.turns) == min(3, len(recorded)) and episode.progress == pytest.approx(
        sum(t.matched for t in episode.turns) / len(recorded)
    )
    assert reset_plan([None], 3, 5) == [(None, 5), (None, 6), (None, 7)]  # no declared tasks: the env's own
    assert reset_plan(["a", "b"], 3, 0) == [("a", 0), ("b", 1), ("a", 2)]


def test_the_token_budget_names_settings_that_fit():
    assert check_token_budget(3, 24, 168) == 3 * 24 + 2 * OBSERVATION_TOKENS
    with pytest.raises(ValueError, match="--max_completion_length 240, or --max_turns 3 or less"):
        check_token_budget(4, 24, 200)


# -- episode rewards ----------------------------------------------------------------------------------------------


def _episode(*turns, success=False):
    episode = Episode(task="web_search", seed=0, history=History("x", [], [], []))
    for text, action, expert, *box in turns:  # an optional 4th item: the turn's target box
        episode.turns.append(Turn(None, [], text, expert, action, None, target_box=box[0] if box else None))
    episode.success = success
    return episode


CLICK_GT = Action("click", x=0.5, y=0.5)
TYPE_GT = Action("type", text="new york")
WELL_FORMED = 'Thought: a.\nAction: b.\n<tool_call>\n{"name": "mobile_use", "arguments": {"action": "wait", "time": 1}}\n</tool_call>'

REWARD_CASES = [
    # (reward, turns (text, parsed action, expert action), expected)
    # both turns in Thought/Action/tool_call form; the second is bare code: 1/2
    ("episode_format", [(WELL_FORMED, None, CLICK_GT), ("<tool_call>{}</tool_call>", None, CLICK_GT)], 0.5),
    # right type on the first turn, nothing parsed on the second
    ("episode_action_type", [("", Action("click", x=0.1, y=0.1), CLICK_GT), ("", None, TYPE_GT)], 0.5),
    # exact click (1.0) and a click 0.17 away (0.5); the type turn has no point and does not count
    (
        "episode_click_distance",
        [
            ("", Action("click", x=0.5, y=0.5), CLICK_GT),
            ("", Action("click", x=0.5, y=0.67), CLICK_GT),
            ("", None, TYPE_GT),
        ],
        0.75,
    ),
    # a click one sigma off in x: exp(-0.5)
    ("episode_click_gaussian", [("", Action("click", x=0.55, y=0.5), CLICK_GT)], 0.6065306597),
    # the turn's target box sets the scale: 0.2 x 0.1 (sx 0.1, sy 0.05); 0.1 off in x is one sx: exp(-0.5)
    ("episode_click_gaussian", [("", Action("click", x=0.6, y=0.5), CLICK_GT, (0.4, 0.45, 0.6, 0.55))], 0.6065306597),
    # 0.05 off in y is one sy, 0.05 off in x half an sx: exp(-(0.25 + 1) / 2)
    ("episode_click_gaussian", [("", Action("click", x=0.55, y=0.55), CLICK_GT, (0.4, 0.45, 0.6, 0.55))], 0.5352614285),
    # a flat box (no height) falls back to sigma in y: 0.05 off in y, exp(-0.5)
    ("episode_click_gaussian", [("", Action("click", x=0.5, y=0.55), CLICK_GT, (0.4, 0.5, 0.6, 0.5))], 0.6065306597),
    # mean over turns: a box turn hit at the point (1.0), a turn whose answer did not parse (0.0)
    (
        "episode_click_gaussian",
        [("", Action("click", x=0.5, y=0.5), CLICK_GT, (0.4, 0.45, 0.6, 0.55)), ("", None, CLICK_GT, (0, 0, 1, 1))],
        0.5,
    ),
    # "new york city" vs "new york" -> 0.8; only the type turn counts
    ("episode_text_f1", [("", Action("type", text="new york city"), TYPE_GT), ("", None, CLICK_GT)], 0.8),
    # no turn has a point: None
    ("episode_click_distance", [("", None, TYPE_GT)], None),
]


@pytest.mark.parametrize(("name", "turns", "expected"), REWARD_CASES)
def test_episode_rewards(name, turns, expected):
    (score,) = rewards.REWARD_FUNCS[name](episode=[_episode(*turns)])
    assert score == (None if expected is None else pytest.approx(expected))


def test_task_success_and_registered_names():
    assert rewards.REWARD_FUNCS["task_success"](episode=[_episode(success=True), _episode(), None]) == [1.0, 0.0, None]
    funcs = rewards.get_reward_funcs(
        ["episode_click_distance"], reward_kwargs={"episode_click_distance": {"threshold": 0.1}}
    )
    assert funcs[0](episode=[_episode(("", Action("click", x=0.5, y=0.58), CLICK_GT))]) == [1.0]
    with pytest.raises(ValueError, match="threshold must be below cutoff"):
        rewards.get_reward_funcs(
            ["episode_click_distance"], reward_kwargs={"episode_click_distance": {"threshold": 0.5}}
        )


# -- per-turn values (GiGPO's step rewards) -----------------------------------------------------------------------

PER_TURN_CASES = [
    # (reward, turns (text, parsed action, expert action), success, per-turn values)
    # an exact click (1.0), one 0.17 away (0.5), a type turn the click distance does not apply to
    ("episode_click_distance",
     [("", Action("click", x=0.5, y=0.5), CLICK_GT), ("", Action("click", x=0.5, y=0.67), CLICK_GT),
      ("", None, TYPE_GT)], False, [1.0, 0.5, None]),
    # the success belongs to the last turn, whose action ended the episode
    ("task_success", [("", None, CLICK_GT)] * 3, True, [0.0, 0.0, 1.0]),
    ("task_success", [("", None, CLICK_GT)] * 2, False, [0.0, 0.0]),
    # well formed, then bare code
    ("episode_format", [(WELL_FORMED, None, CLICK_GT), ("<tool_call>{}</tool_call>", None, CLICK_GT)], False,
     [1.0, 0.0]),
    # right type, then nothing parsed
    ("episode_action_type", [("", Action("click", x=0.1, y=0.1), CLICK_GT), ("", None, TYPE_GT)], False, [1.0, 0.0]),
    # typed "new york city" for "new york" (0.8); a click turn has no text to compare
    ("episode_text_f1", [("", Action("type", text="new york city"), TYPE_GT), ("", None, CLICK_GT)], False,
     [0.8, None]),
]  # fmt: skip


@pytest.mark.parametrize(("name", "turns", "success", "expected"), PER_TURN_CASES)
def test_episode_rewards_give_per_turn_values(name, turns, success, expected):
    (reward,) = rewards.get_reward_funcs([name])
    (values,) = rewards.turn_values(reward, [_episode(*turns, success=success)])
    assert values == [None if value is None else pytest.approx(value) for value in expected]
    # the per-turn values are what the episode's score averages (task_success: the last turn's)
    (score,) = reward(episode=[_episode(*turns, success=success)])
    scored = [value for value in values if value is not None]
    assert score == pytest.approx(scored[-1] if name == "task_success" else sum(scored) / len(scored))


def test_a_reward_without_per_turn_values_and_one_that_gives_the_wrong_number():
    def episode_only(completions=None, episode=None, **kwargs):
        return [1.0 for _ in episode]

    def short(completions=None, episode=None, *, per_turn=False, **kwargs):
        return [[1.0] for _ in episode] if per_turn else [1.0 for _ in episode]

    two_turns = _episode(("", None, CLICK_GT), ("", None, CLICK_GT))
    assert rewards.turn_values(episode_only, [two_turns]) is None
    assert not rewards.declares_per_turn(episode_only) and rewards.declares_per_turn(short)
    with pytest.raises(ValueError, match=r"reward 'short' with per_turn=True gave episode 0 \(2 turns\) \[1.0\]"):
        rewards.turn_values(short, [two_turns])
    with pytest.raises(ValueError, match="'episode_click_distance' has no parameter"):  # not a setting
        rewards.get_reward_funcs(["episode_click_distance"], reward_kwargs={"episode_click_distance": {"per_turn": 1}})


# -- training -----------------------------------------------------------------------------------------------------


def turn_digits(completions, episode, **kwargs):
    """A test reward a random model can move: the share of digits in the episode's answers."""
    texts = ["".join(turn.text for turn in item.turns) for item in episode]
    return [sum(ch.isdigit() for ch in text) / max(1, len(text)) for text in texts]


turn_digits.needs = ("episode",)


def run_grpo(model, output_dir, *extra):
    argv = ["--config", str(RECIPE), "--model_name_or_path", str(model), "--output_dir", str(output_dir)]
    main(*parse_grpo_arguments([*argv, *extra]))
    return json.loads((Path(output_dir) / "trainer_state.json").read_text())


@pytest.mark.slow
@pytest.mark.parametrize("arch", ["qwen2_vl", "qwen3_vl"])
def test_two_multi_turn_steps_change_parameters_with_masked_tool_tokens(arch, request, tmp_path, monkeypatch):
    model = request.getfixturevalue(f"tiny_{arch}")
    monkeypatch.setitem(rewards.REWARD_FUNCS, "turn_digits", turn_digits)
    batches = []
    original = multi_turn_trainer.MultiTurnGRPOTrainer._generate_and_score_completions

    def recording(self, inputs):
        output = original(self, inputs)
        batches.append((list(self.book.recorded), output["tool_mask"].clone(), output["completion_mask"].clone()))
        return output

    monkeypatch.setattr(multi_turn_trainer.MultiTurnGRPOTrainer, "_generate_and_score_completions", recording)
    state = run_grpo(
        model,
        tmp_path,
        *("--max_turns", "2", "--max_turn_tokens", "16", "--max_completion_length", "80"),
        *("--per_device_train_batch_size", "4", "--num_generations", "2"),
        *("--reward_funcs", "turn_digits", "task_success", "episode_format"),
    )
    assert state["global_step"] == 2
    before, after = load_file(model / "model.safetensors"), load_file(tmp_path / "model.safetensors")
    changed = [name for name in before if not torch.equal(before[name], after[name])]
    assert len(changed) > len(before) // 2, f"only {len(changed)} of {len(before)} tensors changed"
    keys = {key for entry in state["log_history"] for key in entry}
    assert {
        "rewards/task_success/mean",
        "rewards/episode_format/mean",
        "episodes/success_rate",
        "episodes/turn_parse_rate",
    } <= keys
    assert {"rewards/turn_digits/go_home", "rewards/turn_digits/open_app"} <= keys, "per-task rewards"
    assert "episodes/env_failures" in keys
    assert len(batches) == 2
    for rows, tool_mask, completion_mask in batches:
        episodes = [row.episode for row in rows]
        # groups hold whole episodes of the same reset: rows 0-1 one reset, rows 2-3 another
        assert [(e.task, e.seed) for e in episodes[0::2]] == [(e.task, e.seed) for e in episodes[1::2]]
        assert (episodes[0].task, episodes[0].seed) != (episodes[2].task, episodes[2].seed)
        assert all(
            e.history.screenshots[0] == f.history.screenshots[0]
            for e, f in zip(episodes[0::2], episodes[1::2], strict=True)
        )
        for row, (record, episode) in enumerate(zip(rows, episodes, strict=True)):
            answers = {
                p
                for o, t in zip(record.offsets, episode.turns, strict=True)
                for p in range(o, o + len(t.completion_ids))
            }
            length = int(completion_mask[row].sum())
            expected = [1 if p in answers else 0 for p in range(length)]
            assert tool_mask[row, :length].tolist() == expected, f"row {row}: the tool tokens are not masked"
            assert len(episode.turns) < 2 or 0 in expected
    # the trained folder plays held-out episodes through eval/test_phone.py
    from r1_gui.evaluation.episodes.cli import main as evaluate_phone

    metrics = evaluate_phone(["--model_name_or_path", str(tmp_path), "--output_dir", str(tmp_path / "phone"),
                              "--episodes", "2", "--max_turns", "2", "--max_new_tokens", "16", "--max_pixels", "12544"])  # fmt: skip
    assert metrics["episodes"] == 2 and (tmp_path / "phone" / "episodes.jsonl").is_file()


@pytest.mark.slow
def test_a_multi_turn_run_resumes_the_checkpoints_weights(tiny_qwen2_vl, tmp_path, monkeypatch):
    from helpers.resumed import assert_resumed_without_a_step

    monkeypatch.setitem(rewards.REWARD_FUNCS, "turn_digits", turn_digits)
    common = ("--max_turns", "2", "--max_turn_tokens", "16", "--max_completion_length", "80", "--num_generations", "2",
              "--per_device_train_batch_size", "4", "--reward_funcs", "turn_digits", "task_success",
              "--max_steps", "2", "--save_strategy", "steps", "--save_steps", "2")  # fmt: skip
    run_grpo(tiny_qwen2_vl, tmp_path, *common)
    run_grpo(tiny_qwen2_vl, tmp_path, *common, "--resume_from_checkpoint", "last")
    assert_resumed_without_a_step(tmp_path, 2, tiny_qwen2_vl)
    played = json.loads((tmp_path / "episode_settings.json").read_text())  # what an evaluation compares with
    assert (played["env_id"], played["max_turns"], played["max_turn_tokens"]) == ("r1_gui/Phone-v0", 2, 16)


@pytest.mark.slow
def test_the_expert_term_trains_on_each_distinct_turn_once_and_lowers_its_loss(tiny_qwen2_vl, tmp_path, monkeypatch):
    from r1_gui.multi_turn import expert

    batches = []
    original = expert.answer_loss

    def recording(model, batch, pad_id, image_pad):
        batches.append((list(batch), pad_id, image_pad))
        return original(model, batch, pad_id, image_pad)

    monkeypatch.setattr(expert, "answer_loss", recording)
    # rewards weighted 0: no group has signal, so whatever moves the weights is the expert term
    state = run_grpo(
        tiny_qwen2_vl,
        tmp_path,
        *("--max_turns", "2", "--max_turn_tokens", "16", "--max_completion_length", "80"),
        *("--per_device_train_batch_size", "4", "--num_generations", "2", "--env_tasks", "open_app"),
        *("--reward_funcs", "task_success", "--reward_weights", "0", "--learning_rate", "5e-3"),
        *("--expert_sft_weight", "1.0"),
    )
    assert state["global_step"] == 2 and len(batches) == 2
    assert all("expert_sft_loss" in entry for entry in state["log_history"] if "loss" in entry)
    for batch, _, _ in batches:
        keys = [(tuple(context.context_ids), context.pixel_values.numpy().tobytes()) for context, _ in batch]
        assert len(set(keys)) == len(keys), "a turn two episodes share is trained on once"
        first_turns = [context for context, _ in batch if len(context.images) == 1]
        assert len(first_turns) == 2, "one first turn per reset: a group's episodes start on the same screen"
        for _, answer in batch:
            assert "<tool_call>" in processor_text(tiny_qwen2_vl, answer), "the expert's answer in the mobile_use form"
    # the trained model gives the first step's expert answers a lower loss than the model it started from
    from transformers import AutoModelForImageTextToText

    batch, pad_id, image_pad = batches[0]
    losses = []
    for folder in (tiny_qwen2_vl, tmp_path):
        model = AutoModelForImageTextToText.from_pretrained(folder, dtype=torch.float32).eval()
        with torch.no_grad():
            losses.append(original(model, batch, pad_id, image_pad).item())
    assert losses[1] < 0.9 * losses[0], losses


def processor_text(model_dir, ids) -> str:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(model_dir).decode(ids)


def test_a_pool_lent_for_other_settings_is_refused(tiny_qwen2_vl, tmp_path):
    from r1_gui.evaluation.episodes.run import EpisodeSettings, evaluate_episodes

    argv = ["--config", str(RECIPE), "--model_name_or_path", str(tiny_qwen2_vl), "--output_dir", str(tmp_path)]
    with EnvPool("r1_gui/Phone-v0", {"width": 320}) as pool:  # no worker starts before a call
        with pytest.raises(ValueError, match="the pool lent plays r1_gui/Phone-v0 {'width': 320} \\(step timeout"):
            main(*parse_grpo_arguments(argv), env_pool=pool)
        with pytest.raises(ValueError, match="the pool lent plays r1_gui/Phone-v0 {'width': 320} \\(step timeout"):
            evaluate_episodes(tiny_qwen2_vl, tmp_path / "eval", EpisodeSettings(env_id="r1_gui/Phone-v0"), pool=pool)
        assert not pool.pids  # refused before any environment started
    assert not (tmp_path / "model.safetensors").exists() and not (tmp_path / "eval" / "metrics.json").exists()


def test_an_episode_budget_that_cannot_fit_fails_before_weights_load(tiny_qwen2_vl, tmp_path):
    with (
        mock.patch("r1_gui.training.model.load_training_model") as load,
        pytest.raises(ValueError, match="--max_turns 5 x"),
    ):
        run_grpo(tiny_qwen2_vl, tmp_path, "--max_turns", "5", "--max_completion_length", "100")
    load.assert_not_called()


@pytest.mark.slow
@pytest.mark.parametrize("arch", ["qwen2_vl", "qwen3_vl"])  # Qwen3-VL: deepstack at each turn's image tokens
def test_each_turn_is_scored_in_its_own_context(arch, request, tmp_path):
    """The loss pass's log-probabilities of a row are, turn by turn, those of the turn's answer given the context
    it was generated from (its own screenshots), and 0 on the tool-response tokens."""
    from datasets import Dataset
    from transformers import AutoModelForImageTextToText
    from trl.trainer.utils import pad

    from r1_gui.training.grpo import GUIGRPOConfig

    args = GUIGRPOConfig(
        output_dir=str(tmp_path), use_cpu=True, bf16=False, num_generations=2, per_device_train_batch_size=2,
        max_completion_length=80, report_to="none", temperature=0.7,
    )  # fmt: skip
    folder = request.getfixturevalue(f"tiny_{arch}")
    processor = load_processor(folder, min_pixels=3136, max_pixels=12544, chat_template=CHAT_TEMPLATE)
    model = AutoModelForImageTextToText.from_pretrained(folder, dtype=torch.float32)
    trainer = multi_turn_trainer.MultiTurnGRPOTrainer(
        model=model,
        reward_funcs=rewards.get_reward_funcs(["task_success"]),
        args=args,
        train_dataset=Dataset.from_list([{"prompt": multi_turn_trainer.reset_prompt("go_home", 1)}]),
        processing_class=processor,
        env_pool=EnvPool("r1_gui/Phone-v0"),
        max_turns=2,
        max_turn_tokens=16,
    )
    rows = trainer._rollout([multi_turn_trainer.reset_prompt("go_home", 1)] * 2)
    prompt = pad([torch.tensor(ids) for ids in rows["prompt_ids"]], padding_value=0, padding_side="left")
    completion = pad([torch.tensor(ids) for ids in rows["completion_ids"]], padding_value=0, padding_side="right")
    ids = torch.cat([prompt, completion], dim=1)
    with torch.no_grad():
        logps, _, _ = trainer._get_per_token_logps_and_entropies(
            trainer.model, ids, torch.ones_like(ids), completion.size(1)
        )
        for row, record in enumerate(trainer.book.recorded):
            assert len(record.turns) == 2
            for offset, turn in zip(record.offsets, record.turns, strict=True):
                context = torch.tensor([turn.context.context_ids + turn.completion_ids])
                logits = model(
                    input_ids=context,
                    pixel_values=turn.context.pixel_values,
                    image_grid_thw=turn.context.image_grid_thw,
                    mm_token_type_ids=(context == trainer._image_pad_id).long(),
                ).logits[0]
                n = len(turn.completion_ids)
                expected = torch.log_softmax(logits[-n - 1 : -1] / 0.7, dim=-1)
                expected = expected.gather(1, torch.tensor(turn.completion_ids)[:, None])[:, 0]
                torch.testing.assert_close(logps[row, offset : offset + n], expected, atol=1e-4, rtol=1e-4)
            masked = [p for p, m in enumerate(rows["env_mask"][row]) if m == 0]
            assert masked and bool((logps[row, masked] == 0).all())


@pytest.mark.parametrize(
    "recipe, env_id",
    [
        ("tiny_cpu_phone_grpo.yaml", "r1_gui/Phone-v0"),
        ("qwen25vl3b_phone_grpo.yaml", "r1_gui/Phone-v0"),
        ("qwen3vl8b_phone_grpo.yaml", "r1_gui/Phone-v0"),
        ("tiny_cpu_web_grpo.yaml", "r1_gui/Web-v0"),
        ("qwen25vl3b_web_grpo.yaml", "r1_gui/Web-v0"),
    ],
)
def test_episode_recipes_parse_and_fit_their_token_budget(recipe, env_id):
    from r1_gui.multi_turn.train import check_multi_turn

    on_cpu = ["--bf16", "false", "--use_cpu", "true"]  # the GPU recipes' bf16 check needs a GPU; the rest is read
    script_args, training_args, _ = parse_grpo_arguments(["--config", str(REPO / "local_scripts" / recipe), *on_cpu])
    env_kwargs, budget = check_multi_turn(script_args, training_args)
    assert script_args.env_id == env_id and budget <= training_args.max_completion_length
    assert script_args.prompt_style == "mobile_use" and script_args.coordinates == "grid999"
    if "phone" in recipe and recipe != "tiny_cpu_phone_grpo.yaml":  # the verl recipe's settings
        assert (training_args.num_generations, training_args.beta, script_args.max_turns) == (5, 0.01, 20)
        assert env_kwargs == {"width": 1080, "height": 2400}


# -- the verl GUI data format -----------------------------------------------------------------------------------------


def test_verl_gui_export_reads_back_to_the_same_actions(synthetic_raw, tmp_path):
    import pandas as pd

    from r1_gui.builder import build

    first = tmp_path / "built"
    build([synthetic_raw / "synthetic-l1.json"], synthetic_raw / "images", first, test_size=0.2, seed=0,
          export=["verl_gui"], progress=False)  # fmt: skip
    exported = pd.read_parquet(first / "verl_gui" / "train.parquet")
    assert {"images", "raw_prompt", "extra_info", "ground_truth", "data_source"} <= set(exported.columns)
    info = exported.iloc[0]["extra_info"]
    assert (info["screen_width"], info["screen_height"]) == (999, 999)
    assert json.loads(info["expected_actions"])[0] == json.loads(exported.iloc[0]["ground_truth"])
    back = tmp_path / "back"
    report = build([first / "verl_gui" / "train.parquet"], None, back, input_format="verl_gui", test_size=0.0,
                   progress=False)  # fmt: skip
    assert not any(report["skipped"].values())
    original = pd.read_parquet(first / "train.parquet").set_index(["episode_id", "step"])
    read = pd.read_parquet(back / "train.parquet").set_index(["episode_id", "step"])
    assert len(read) == len(original)
    for key, row in read.iterrows():  # actions agree up to the 999 grid's rounding (one grid unit)
        want, got = json.loads(original.loc[key, "action_json"]), json.loads(row["action_json"])
        if want["type"] == "scroll":  # mobile_use has no scroll: written as the swipe that scrolls the same way
            assert got["type"] == "swipe" and (got["y2"] < got["y"]) == (want["direction"] == "down"), key
            continue
        assert got["type"] == want["type"] and got.get("text") == want.get("text"), key
        for axis in ("x", "y"):
            if want.get(axis) is not None:
                assert got[axis] == pytest.approx(want[axis], abs=1 / 999), key
    assert Image.open(read.iloc[0]["image"]).size == Image.open(original.iloc[0]["image"]).size


def test_verl_gui_rows_on_a_pixel_grid_and_bad_rows(tmp_path):
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    from r1_gui.builder import build

    buffer = io.BytesIO()
    Image.new("RGB", (108, 240)).save(buffer, format="PNG")
    image = {"bytes": buffer.getvalue(), "path": None}

    def row(info, images=(image,)):
        return {
            "images": list(images),
            "raw_prompt": [{"role": "user", "content": "<image>x"}],
            "extra_info": json.dumps(info),
        }

    rows = [
        # a click on the 1080 x 2400 pixel grid: (540, 600) is (0.5, 0.25)
        row({"instruction": "Tap it", "expected_actions": [{"action": "click", "coordinate": [540, 600]}],
             "screen_width": 1080, "screen_height": 2400, "episode_id": "e1", "step": 0}),
        # typing, no coordinates
        row({"instruction": "Tap it", "expected_actions": [{"action": "type", "text": "hello"}],
             "screen_width": 1080, "screen_height": 2400, "episode_id": "e1", "step": 1}),
        row({"instruction": "No action", "episode_id": "e2", "step": 0}),  # missing expected_actions: skipped
        row({"instruction": "Bad", "expected_actions": [{"action": "fly"}], "episode_id": "e3", "step": 0}),
    ]  # fmt: skip
    source = tmp_path / "verl.parquet"
    pq.write_table(pa.Table.from_pylist(rows), source)
    report = build([source], None, tmp_path / "out", input_format="verl_gui", test_size=0.0, progress=False)
    assert {reason: n for reason, n in report["skipped"].items() if n} == {"missing_keys": 1, "unparsable_action": 1}
    import pandas as pd

    table = pd.read_parquet(tmp_path / "out" / "train.parquet").sort_values("step")
    click, typing = (json.loads(text) for text in table["action_json"])
    assert (click["type"], click["x"], click["y"]) == ("click", pytest.approx(0.5), pytest.approx(0.25))
    assert (typing["type"], typing["text"]) == ("type", "hello")
    with pytest.raises(ValueError, match="has no column"):
        pq.write_table(pa.table({"x": [1]}), tmp_path / "bad.parquet")
        build([tmp_path / "bad.parquet"], None, tmp_path / "out2", input_format="verl_gui", progress=False)


# -- the demo -------------------------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("arch", ["qwen2_vl", "qwen3_vl"])  # --arch: the demo's model family
def test_the_fast_multi_turn_demo_writes_its_report(arch, tmp_path, caplog, monkeypatch, capsys):
    from dataclasses import replace

    from r1_gui.envs.runtime import pool as pool_module
    from r1_gui.multi_turn.demo import MultiTurnDemoConfig, expert_examples, run_multi_turn_demo

    pools, build = [], pool_module.EnvPool.__init__

    def counting(self, *args, **kwargs):
        pools.append(self)
        build(self, *args, **kwargs)

    monkeypatch.setattr(pool_module.EnvPool, "__init__", counting)

    with warnings.catch_warnings(record=True) as caught, caplog.at_level("WARNING", logger="r1_gui.demo"):
        warnings.simplefilter("always")
        report = run_multi_turn_demo(tmp_path, seed=0, config=replace(MultiTurnDemoConfig.fast(), arch=arch))
    # issue 34 item 12: no phase timings at WARNING, no trl warning that rollout_func is experimental
    assert not [r for r in caplog.records if r.getMessage().startswith(("sft:", "grpo:", "model:", "eval_"))]
    # issue 54 item 4: each stage says when it starts and how long it took, where the user sees it
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("[")]
    stages = ["model", "sft", "eval_warm_start", "grpo", "eval_grpo"]
    assert [line.split("]")[0][1:] for line in lines if "done in" not in line and " step " not in line] == stages
    assert [line.split("]")[0][1:] for line in lines if "] done in " in line] == stages
    assert all(report["seconds"][stage] == pytest.approx(float(line.split("done in ")[1].split()[0]), abs=0.51)
               for stage, line in zip(stages, [line for line in lines if "] done in " in line], strict=True))  # fmt: skip
    assert not [w for w in caught if "rollout_func" in str(w.message)]
    # one pool from the expert's episodes to the last evaluation (each stage reuses the workers started before it),
    # closed at the end
    assert len(pools) == 1 and pools[0]._closed and pools[0].failures == 0
    assert json.loads((tmp_path / "model" / "config.json").read_text())["model_type"] == arch
    assert not (tmp_path / "sight").exists()  # sight_steps 0: the phone demo's SFT starts from the built model
    saved = json.loads((tmp_path / "report.json").read_text())
    assert saved["warm_start"]["success_rate"] == report["warm_start"]["success_rate"]
    assert {"success_rate", "per_task", "turn_parse_rate"} <= set(saved["grpo"])
    assert saved["success_rate_gain"] == pytest.approx(
        saved["grpo"]["success_rate"] - saved["warm_start"]["success_rate"]
    )
    assert (tmp_path / "reward_curve.png").is_file() and (tmp_path / "report.md").is_file()
    for stage in ("eval_warm_start", "eval_grpo"):
        assert json.loads((tmp_path / stage / "metrics.json").read_text())["episodes"] == 4
        assert list((tmp_path / stage / "episodes").glob("*.png"))
    # the SFT data: the expert's turns, each answer in the mobile_use form the format reward accepts
    processor = load_processor(tmp_path / "sft", chat_template=CHAT_TEMPLATE)
    examples = expert_examples(MultiTurnDemoConfig.fast(), processor, seed=0)
    texts = [processor.tokenizer.decode(answer, skip_special_tokens=True) for _, answer in examples]
    assert texts and all(styled_action(text, "mobile_use", coordinates="grid999") for text in texts)
    assert any("terminate" in text for text in texts)


class _Draws:
    """A stand-in for random.Random: hands out the given draws in order."""

    def __init__(self, draws):
        self.draws = list(draws)

    def random(self):
        return self.draws.pop(0)


def _waiting_episode(*actions):
    from types import SimpleNamespace

    from r1_gui.actions import Action

    fields = {"open_app": {"text": "Clock"}, "terminate": {"status": "success"}}
    turns = [SimpleNamespace(action=None if kind is None else Action(kind, **fields.get(kind, {}))) for kind in actions]
    return SimpleNamespace(turns=turns)


_NOT_WAITS = [(0, 0), (0, 1), (1, 0), (1, 2), (2, 0), (2, 1), (3, 1), (4, 0)]


@pytest.mark.parametrize(
    ("share", "draws", "waits", "left"),
    [
        # share 1: every turn, no draw
        (1.0, [], [(1, 1), (3, 0), (4, 1), (4, 2)], []),
        # share 0: every wait goes (a draw is never below 0); the other turns stay without a draw
        (0.0, [0.0, 0.0, 0.0, 0.0], [], []),
        # one draw per wait, in order; kept when the draw is below the share (0.5 is not)
        (0.5, [0.7, 0.2, 0.5, 0.9, 0.1], [(3, 0)], [0.1]),
        (0.25, [0.1, 0.3, 0.24999, 0.0], [(1, 1), (4, 1), (4, 2)], []),
    ],
)
def test_the_sft_data_keeps_every_turn_and_the_expert_waits_at_its_share(share, draws, waits, left):
    from r1_gui.multi_turn.expert import turns_kept

    # 0 and 2 never wait (2's second turn did not parse), 1 and 3 wait, 4 waits twice
    episodes = [
        _waiting_episode("open_app", "terminate"),
        _waiting_episode("open_app", "wait", "terminate"),
        _waiting_episode("open_app", None),
        _waiting_episode("wait", "home"),
        _waiting_episode("open_app", "wait", "wait"),
    ]
    rng = _Draws(draws)
    got = turns_kept(episodes, share, rng)
    expected = [episodes[e].turns[t] for e, t in sorted(_NOT_WAITS + waits)]
    assert got == expected and rng.draws == left


@pytest.mark.parametrize("share", [-0.1, 1.5])
def test_a_wait_share_outside_0_to_1_is_refused_naming_the_setting(share):
    import random

    from r1_gui.multi_turn.expert import turns_kept

    with pytest.raises(ValueError, match=f"sft_wait_share={share}: .* between 0 and 1"):
        turns_kept([_waiting_episode("wait")], share, random.Random(0))


def _turns_with_contexts(*actions):
    episode = _waiting_episode(*actions)
    for number, turn in enumerate(episode.turns):
        turn.context = f"context {number}"
    return episode


@pytest.mark.parametrize(
    ("share", "draws", "contexts", "left"),
    [
        # share 0: nothing, no draw
        (0.0, [], [], []),
        # one draw per turn right after an open_app that is not a wait, in order; trained to wait when the draw is
        # below the share (0.5 is not)
        (0.5, [0.1, 0.5, 0.9], [(0, 1)], []),
        (0.5, [0.7, 0.2, 0.4, 0.8], [(1, 4), (3, 1)], [0.8]),
        (1.0, [0.0, 0.99, 0.3], [(0, 1), (1, 4), (3, 1)], []),
    ],
)
def test_the_sft_data_trains_a_share_of_idle_turns_after_an_app_opened_to_wait(share, draws, contexts, left):
    from r1_gui.multi_turn.expert import idle_waits

    # 0: the app opened at once; 1: a loading page (the expert waits), then later another app opened at once; 2: the
    # turn after open_app did not parse, and no app is opened after it; 3: the app opened at once, then a wait
    episodes = [
        _turns_with_contexts("open_app", "home", "terminate"),
        _turns_with_contexts("open_app", "wait", "home", "open_app", "terminate"),
        _turns_with_contexts("home", "open_app", None, "terminate"),
        _turns_with_contexts("open_app", "home", "wait"),
    ]
    rng = _Draws(draws)
    got = idle_waits(episodes, share, rng)
    expected = [episodes[episode].turns[turn].context for episode, turn in contexts]
    assert got == expected and rng.draws == left


@pytest.mark.parametrize("share", [-0.5, 2.0])
def test_an_idle_wait_share_outside_0_to_1_is_refused_naming_the_setting(share):
    import random

    from r1_gui.multi_turn.expert import idle_waits

    with pytest.raises(ValueError, match=f"sft_idle_wait_share={share}: .* between 0 and 1"):
        idle_waits([_turns_with_contexts("open_app", "home")], share, random.Random(0))


def test_a_button_page_draws_its_button_where_it_says():
    import random

    import numpy as np

    from r1_gui.synthetic.pages import INSTRUCTION_HEIGHT, PAGE_SIZE, button_page

    rng, grays = random.Random(0), set()
    for _ in range(200):
        page, (x1, y1, x2, y2) = button_page(rng)
        assert page.size == PAGE_SIZE and 0 <= x1 < x2 < PAGE_SIZE[0] and INSTRUCTION_HEIGHT < y1 < y2 < PAGE_SIZE[1]
        pixels = np.asarray(page)
        assert pixels[:INSTRUCTION_HEIGHT].min() < 100  # the instruction is written in the band
        # below the band, everything that is not white is the button (outline, fill and label), and all of it is there
        ys, xs = np.nonzero((pixels[INSTRUCTION_HEIGHT:] != 255).any(axis=2))
        assert (xs.min(), ys.min() + INSTRUCTION_HEIGHT, xs.max(), ys.max() + INSTRUCTION_HEIGHT) == (x1, y1, x2, y2)
        grays.add(int(pixels[y2 - 1, x1 + 1, 0]))
    assert min(grays) < 128 < 200 < max(grays)  # dark buttons and MiniWoB's light ones


def test_a_button_row_page_names_one_of_its_buttons_by_number():
    import random
    import re

    import numpy as np

    from r1_gui.synthetic.pages import INSTRUCTION, INSTRUCTION_HEIGHT, PAGE_SIZE, button_row_page, sight_page

    rng, seen = random.Random(0), set()
    for _ in range(200):
        page, (x1, y1, x2, y2), instruction = button_row_page(rng)
        named = int(re.fullmatch(r"Click button #(\d)\.", instruction).group(1))
        assert page.size == PAGE_SIZE and 0 <= x1 < x2 < PAGE_SIZE[0] and INSTRUCTION_HEIGHT < y1 < y2 < PAGE_SIZE[1]
        # the buttons below the band: columns that are not white, in runs; the named one is the run numbered so
        pixels = np.asarray(page)[INSTRUCTION_HEIGHT:]
        columns = np.nonzero((pixels != 255).any(axis=(0, 2)))[0]
        runs = np.split(columns, np.nonzero(np.diff(columns) > 1)[0] + 1)
        assert len(runs) in (2, 3) and 1 <= named <= len(runs)
        assert (runs[named - 1][0], runs[named - 1][-1]) == (x1, x2)
        rows = np.nonzero((pixels != 255).any(axis=(1, 2)))[0] + INSTRUCTION_HEIGHT
        assert (rows.min(), rows.max()) == (y1, y2)  # one row: every button spans the named one's height
        seen.add((len(runs), named))
    assert seen == {(2, 1), (2, 2), (3, 1), (3, 2), (3, 3)}
    kinds = [sight_page(rng)[2] for _ in range(400)]
    assert 150 < kinds.count(INSTRUCTION) < 250  # the sight stage: one-button pages and rows, one in two


def test_sight_examples_answer_a_click_on_the_named_buttons_centre(tiny_qwen3_vl):
    import random

    from r1_gui.actions import extract_action
    from r1_gui.multi_turn.demo import sight_examples
    from r1_gui.multi_turn.web_demo import WebDemoConfig
    from r1_gui.synthetic.pages import PAGE_SIZE, sight_page

    config = WebDemoConfig()
    processor = load_processor(
        tiny_qwen3_vl, min_pixels=3136, max_pixels=config.max_pixels, chat_template=CHAT_TEMPLATE
    )
    examples = sight_examples(config, processor, random.Random(5), 8)
    rng = random.Random(5)  # the same pages again, from the same seed
    pages = [sight_page(rng) for _ in range(8)]
    assert len({instruction for _, _, instruction in pages}) > 1  # both kinds of page among these 8
    image_pad = processor.tokenizer.convert_tokens_to_ids("<|image_pad|>")
    for (context, answer), (_, (x1, y1, x2, y2), instruction) in zip(examples, pages, strict=True):
        assert image_pad in context.context_ids and context.pixel_values.shape[0] > 0
        assert instruction in processor.tokenizer.decode(context.context_ids)  # the page's own instruction
        text = processor.tokenizer.decode(answer, skip_special_tokens=True)
        click = extract_action(text, coordinates="grid999", image_size=PAGE_SIZE)
        assert click.type == "click" and styled_action(text, "mobile_use", coordinates="grid999")
        # within a pixel of the centre (grid999 rounds to a thousandth of the page)
        assert click.x * PAGE_SIZE[0] == pytest.approx((x1 + x2 + 1) / 2, abs=1)
        assert click.y * PAGE_SIZE[1] == pytest.approx((y1 + y2 + 1) / 2, abs=1)
    assert answer[-1] == processor.tokenizer.convert_tokens_to_ids("<|im_end|>")


def test_the_sight_stage_trains_on_the_plain_loops_batches_in_order(tiny_qwen3_vl, tmp_path, monkeypatch):
    """run_sight draws the next step's pages in a second thread while the SFT trainer trains a step: the batches, and
    their order, are those of drawing each step's pages from the seeded generator one step after another."""
    import random
    from dataclasses import replace

    from r1_gui.multi_turn import demo
    from r1_gui.multi_turn.web_demo import WebDemoConfig
    from r1_gui.training import sft

    config = replace(WebDemoConfig(), sight_steps=4, sft_batch_size=3)
    trained, take = [], sft.DrawnTurns.take
    monkeypatch.setattr(sft.DrawnTurns, "take", lambda self, rows: trained.append(take(self, rows)) or trained[-1])
    out = demo.run_sight(config, tiny_qwen3_vl, tmp_path, seed=7)
    processor = load_processor(
        tiny_qwen3_vl, min_pixels=3136, max_pixels=config.max_pixels, chat_template=CHAT_TEMPLATE
    )
    rng = random.Random(7)
    expected = [demo.sight_examples(config, processor, rng, 3) for _ in range(4)]
    assert [[(c.context_ids, a) for c, a in batch] for batch in trained] == [
        [(c.context_ids, a) for c, a in batch] for batch in expected
    ]
    assert all(
        (got.pixel_values == want.pixel_values).all()
        for batch, wanted in zip(trained, expected, strict=True)
        for (got, _), (want, _) in zip(batch, wanted, strict=True)
    )
    losses = json.loads((out / "sight_losses.json").read_text())["losses"]
    assert len(losses) == 4 and all(math.isfinite(loss) and loss > 0 for loss in losses)


@pytest.mark.parametrize(
    "target, every_parsed, successes, parsed, steps, checked",
    [
        (None, 1, [], [], 8, []),  # no stop: every step, no check
        (0.5, 1, [0.0, 0.6, 0.9], [0.0, 1.0, 1.0], 6, [3, 6]),  # the first check at or above the share stops it
        (0.5, 1, [0.5], [1.0], 3, [3]),  # "reaches": at the share counts
        (0.5, 1, [0.0, 0.2, 0.3, 0.5], [0.0, 0.5, 0.6, 0.8], 8, [3, 6, 7, 8]),  # a won episode: every step from then
        (0.5, 1, [0.0, 0.0, 0.3, 0.5], [0.2, 0.3, 0.6, 0.8], 6, [3, 4, 5, 6]),  # answers that parse: every step too
        (0.5, 1, [0.1, 0.2, 0.2, 0.2, 0.2, 0.2], [0.5] * 6, 8, [3, 4, 5, 6, 7, 8]),  # never reached: all its steps
        (0.5, 2, [0.0, 0.2, 0.5], [0.0, 0.5, 0.8], 8, [3, 6, 8]),  # once answers parse, every sft_check_every_parsed
        (0.5, 3, [0.0, 0.2], [0.3, 0.5], 8, [3, 6]),  # ... which may be the interval before
    ],
)
def test_sft_stops_at_the_first_check_whose_greedy_success_reaches_its_share(
    target, every_parsed, successes, parsed, steps, checked, tiny_qwen2_vl, tmp_path, monkeypatch
):
    from dataclasses import replace

    from transformers import PreTrainedModel

    from r1_gui.multi_turn import demo

    config = replace(
        demo.MultiTurnDemoConfig.fast(), sft_steps=8, sft_check_every=3, sft_check_episodes=3, sft_stop_success=target,
        sft_check_every_parsed=every_parsed,
    )  # fmt: skip
    calls, rates = [], iter(zip(successes, parsed, strict=True))

    def evaluate(config, model_path, output_dir, pool=None, seed_offset=None, episodes=None):
        calls.append((Path(model_path), Path(output_dir).name, seed_offset, episodes))
        assert (Path(model_path) / "config.json").is_file()  # the model so far, saved before it plays
        assert not (Path(model_path) / "sft_losses.json").exists()  # a record is written once, at the end
        success, parse = next(rates)
        return {"success_rate": success, "turn_parse_rate": parse}

    saves, save = [], PreTrainedModel.save_pretrained
    monkeypatch.setattr(
        PreTrainedModel,
        "save_pretrained",
        lambda model, *args, **kwargs: saves.append(1) or save(model, *args, **kwargs),
    )
    monkeypatch.setattr(demo, "evaluate_model", evaluate)
    out = demo.run_sft(config, tiny_qwen2_vl, tmp_path, seed=3)
    # the weights once before each check, and once at the end unless the last check played the last step's
    assert len(saves) == len(checked) + (0 if checked and checked[-1] == steps else 1)
    # each check plays the first 3 of seed 3's training episodes (grpo_gui.py's --env_seed_offset), not held-out ones
    assert calls == [(tmp_path / "sft", f"step_{step}", 30_000, 3) for step in checked]
    record = json.loads((out / "sft_losses.json").read_text())
    assert record["steps"] == steps and len(record["losses"]) == steps
    assert record["checks"] == [
        {"step": step, "success_rate": success, "turn_parse_rate": parse}
        for step, success, parse in zip(checked, successes, parsed, strict=False)
    ]


def test_each_estimator_of_a_demo_trains_with_its_own_advantage_estimator(tmp_path):
    from dataclasses import replace

    from r1_gui.multi_turn.demo import grpo_settings
    from r1_gui.multi_turn.web_demo import MultiStepWebDemoConfig, WebDemoConfig

    assert WebDemoConfig().estimators == ("grpo",) and MultiStepWebDemoConfig().estimators == ("grpo", "gigpo")
    for estimator in ("grpo", "gigpo"):
        config = replace(MultiStepWebDemoConfig(), estimators=("grpo", "gigpo"))
        script_args, _, _ = grpo_settings(config, tmp_path / "w", tmp_path / "o", 0, estimator)
        assert script_args.advantage_estimator == estimator


STAGE_CASES = [
    # (estimators, rollout modes, the GRPO stages (name, estimator, mode), the pairs the report compares)
    (("grpo",), ("sync",), [("grpo", "grpo", "sync")], []),
    (("grpo", "gigpo"), ("sync",), [("grpo", "grpo", "sync"), ("gigpo", "gigpo", "sync")], [("grpo", "gigpo")]),
    (("grpo",), ("async",), [("grpo_async", "grpo", "async")], []),
    (("grpo",), ("sync", "async"), [("grpo", "grpo", "sync"), ("grpo_async", "grpo", "async")],
     [("grpo", "grpo_async")]),
    (("grpo", "gigpo"), ("sync", "async"),
     [("grpo", "grpo", "sync"), ("grpo_async", "grpo", "async"), ("gigpo", "gigpo", "sync"),
      ("gigpo_async", "gigpo", "async")],
     [("grpo", "grpo_async"), ("gigpo", "gigpo_async")]),  # each async stage against its sync twin
]  # fmt: skip


@pytest.mark.parametrize(("estimators", "modes", "stages", "pairs"), STAGE_CASES)
def test_the_demos_grpo_stages_and_what_their_report_compares(estimators, modes, stages, pairs, tmp_path):
    from dataclasses import replace

    from r1_gui.multi_turn.demo import compared_stages, grpo_settings, grpo_stages
    from r1_gui.multi_turn.web_demo import MultiStepWebDemoConfig

    config = replace(MultiStepWebDemoConfig(), estimators=estimators, rollout_modes=modes)
    assert grpo_stages(config) == stages and compared_stages(config) == pairs
    for _, estimator, mode in stages:
        script_args, _, _ = grpo_settings(config, tmp_path / "w", tmp_path / "o", 0, estimator, mode)
        assert (script_args.advantage_estimator, script_args.rollout_mode) == (estimator, mode)
        assert (script_args.rollout_workers, script_args.max_staleness) == (config.async_workers, 1)


@pytest.mark.slow
def test_the_fast_multi_turn_demo_trains_sync_and_async_from_one_warm_start(tmp_path, capsys):
    """`--rollout_mode both`: each GRPO stage sync and async from the same warm start, the async one with rollout
    workers (its async/ keys logged), both evaluated on the same held-out episodes and compared, paired."""
    import json

    from r1_gui.demo import main as demo_main

    demo_main(["--multi_turn", "--fast", "--rollout_mode", "both", "--output_dir", str(tmp_path)])
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["config"]["rollout_modes"] == ["sync", "async"]
    comparison = report["comparisons"]["grpo_async - grpo"]
    assert comparison["a"].endswith("eval_grpo") and comparison["b"].endswith("eval_grpo_async")
    assert report["grpo"]["episodes"] == report["grpo_async"]["episodes"] == comparison["units"]
    logged = json.loads((tmp_path / "grpo_async" / "trainer_state.json").read_text())["log_history"]
    assert any("async/staleness_max" in entry for entry in logged)
    assert "GRPO (async) against GRPO" in (tmp_path / "report.md").read_text()


def test_grpo_beta_reaches_grpo_gui(tmp_path):
    from dataclasses import replace

    from r1_gui.multi_turn.demo import grpo_settings
    from r1_gui.multi_turn.web_demo import WebDemoConfig

    for beta in (0.0, 0.04):
        _, training_args, _ = grpo_settings(replace(WebDemoConfig(), grpo_beta=beta), tmp_path / "w", tmp_path / "o", 0)
        assert training_args.beta == beta


# -- mistakes a user makes with --env: one error line before any weights load (issue 34 items 1 and 2) --------------


@pytest.mark.parametrize(
    "recipe, extra, first_line",
    [
        # a single-step reward in an episode run scored 0 on every episode
        ("tiny_cpu_phone_grpo.yaml", ["--reward_funcs", "accuracy"],
         "error: --reward_funcs: accuracy needs a single-step answer to score"),
        # an episode reward on a dataset: trl's per-step "All reward functions returned None"
        ("tiny_cpu_grpo.yaml", ["--reward_funcs", "task_success"],
         "error: --reward_funcs: task_success needs whole episodes (an --env run)"),
        # a dataset beside --env was silently ignored ("64 rows of data/synthetic" were resets)
        ("tiny_cpu_phone_grpo.yaml", ["--dataset_name", "DATASET"],
         "error: --dataset_name DATASET and --env r1_gui/Phone-v0 both name what to train on"),
        # a reward that compares with the expert, in an environment that has none
        ("tiny_cpu_phone_grpo.yaml", ["--env", "helpers.button_env:Button-v0", "--env_tasks", "left",
                                      "--env_kwargs", '{"expert": false}', "--reward_funcs", "episode_action_type"],
         "error: --reward_funcs: episode_action_type needs an environment that gives info['expert_action']"),
        # the expert term: a negative weight, an environment without an expert, a dataset run
        ("tiny_cpu_phone_grpo.yaml", ["--expert_sft_weight", "-1"],
         "error: --expert_sft_weight must be 0 (off) or more, got -1.0"),
        ("tiny_cpu_phone_grpo.yaml", ["--env", "helpers.button_env:Button-v0", "--env_tasks", "left",
                                      "--env_kwargs", '{"expert": false}', "--reward_funcs", "task_success",
                                      "--expert_sft_weight", "0.5"],
         "error: --expert_sft_weight 0.5: helpers.button_env:Button-v0 has no expert"),
        ("tiny_cpu_grpo.yaml", ["--expert_sft_weight", "0.5"],
         "error: --expert_sft_weight 0.5: it needs --env (a dataset run plays no episodes)"),
        # step-level credit: a name that is no estimator, a discount outside (0, 1], GiGPO on a dataset
        ("tiny_cpu_phone_grpo.yaml", ["--advantage_estimator", "gigpo_v2"],
         "error: --advantage_estimator gigpo_v2: choose grpo or gigpo"),
        ("tiny_cpu_phone_grpo.yaml", ["--advantage_estimator", "gigpo", "--step_gamma", "1.5"],
         "error: --step_gamma must be in (0, 1], got 1.5"),
        ("tiny_cpu_grpo.yaml", ["--advantage_estimator", "gigpo"],
         "error: --advantage_estimator gigpo: it needs --env (a dataset run plays no episodes)"),
    ],
)  # fmt: skip
def test_a_reward_or_dataset_the_run_cannot_use_is_one_error_line(
    recipe, extra, first_line, tiny_qwen2_vl, synthetic_dataset, tmp_path
):
    import os
    import subprocess
    import sys

    extra = [str(synthetic_dataset) if value == "DATASET" else value for value in extra]
    first_line = first_line.replace("DATASET", str(synthetic_dataset))
    data = ["--dataset_name", str(synthetic_dataset)] if recipe == "tiny_cpu_grpo.yaml" else []
    command = [sys.executable, str(REPO / "src" / "r1_gui" / "grpo_gui.py"), "--config", str(REPO / "local_scripts" / recipe),
               "--model_name_or_path", str(tiny_qwen2_vl), "--output_dir", str(tmp_path / "run"), *data, *extra]  # fmt: skip
    path = os.pathsep.join([str(REPO / "tests"), os.environ.get("PYTHONPATH", "")])  # helpers.button_env
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": path})
    assert done.returncode == 2, done.stderr[-2000:]
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert errors and errors[0].startswith(first_line), done.stderr[-2000:]
    assert not (tmp_path / "run" / "model.safetensors").exists()


@pytest.mark.slow
@pytest.mark.parametrize("failure", [{"raise_on_step": 3}, {"hang_on_step": 3}])
def test_a_failing_environment_is_rebuilt_and_counted_and_the_run_completes(failure, tiny_qwen2_vl, tmp_path):
    """Every episode's environment raises (or hangs past --env_step_timeout) on its third step (after the two that
    check_env plays at start-up): each such episode
    ends there, scored as a failure and counted in episodes/env_failures; the pool rebuilds the environment, the
    two steps complete, and no worker outlives the run."""
    from r1_gui.envs.runtime import pool as pool_module

    pools = []
    original_init = pool_module.EnvPool.__init__

    def recording_init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        pools.append(self)

    with mock.patch.object(pool_module.EnvPool, "__init__", recording_init):
        state = run_grpo(
            tiny_qwen2_vl, tmp_path,
            *("--env", "helpers.button_env:Button-v0", "--env_tasks", "left", "right"),
            *("--env_kwargs", json.dumps({**failure, "max_steps": 4}), "--env_step_timeout", "3"),
            *("--reward_funcs", "task_success", "episode_format", "--max_pixels", "3136", "--max_turns", "3"),
        )  # fmt: skip
    assert state["global_step"] == 2
    failures = [entry["episodes/env_failures"] for entry in state["log_history"] if "episodes/env_failures" in entry]
    assert failures and all(count > 0 for count in failures), failures
    (pool,) = pools
    assert pool.failures >= 2 and pool._closed and not pool.pids, "the pool closed with training, its workers gone"
