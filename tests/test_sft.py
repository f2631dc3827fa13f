"""SFT warm start: the loss covers exactly the assistant's answer, in the same prompt style GRPO and eval use."""

import json
from pathlib import Path

import datasets
import pytest
import torch
from safetensors.torch import load_file
from trl.trainer.sft_trainer import DataCollatorForVisionLanguageModeling

from r1_gui.actions import resized_size
from r1_gui.gui_datasets import load_gui_dataset
from r1_gui.processing import CHAT_TEMPLATE, load_processor, pixel_bounds, stock_processor_configs_resolve
from r1_gui.training.data import add_model_columns
from r1_gui.training.sft import add_sft_columns, main, parse_sft_arguments

REPO = Path(__file__).resolve().parents[1]
RECIPE = REPO / "local_scripts" / "tiny_cpu_sft.yaml"


def sft_batch(model, dataset, style, coordinates="normalized", rows=2):
    processor = load_processor(model, max_pixels=50176, chat_template=CHAT_TEMPLATE)
    train = load_gui_dataset(dataset, "train").select(range(rows))
    train = add_model_columns(train, style, coordinates, pixel_bounds(processor))
    train = add_sft_columns(train, style, coordinates).select_columns(
        ["prompt", "completion", "images", "chat_template_kwargs"]
    )
    train = train.cast_column("images", datasets.Sequence(datasets.Image()))
    collator = DataCollatorForVisionLanguageModeling(processor, completion_only_loss=True)
    return processor, train, collator([dict(train[i]) for i in range(rows)])


def test_aguvis_loss_covers_the_plan_and_the_os_channel_code_only(tiny_qwen2_vl, synthetic_dataset):
    processor, train, batch = sft_batch(tiny_qwen2_vl, synthetic_dataset, "aguvis")
    for i in range(2):
        ids, labels = batch["input_ids"][i], batch["labels"][i]
        learned = processor.tokenizer.decode(ids[labels != -100])
        plan = train[i]["completion"][0]["content"]
        code = train[i]["completion"][1]["content"]
        # the prompt ends by opening the planning channel; the model learns everything after it
        assert learned == f"{plan}<|im_end|>\n<|im_start|>assistant<|recipient|>os\n{code}<|diff_marker|>\n"
        context = processor.tokenizer.decode(ids[(labels == -100) & (batch["attention_mask"][i] == 1)])
        assert context.endswith("<|im_start|>assistant<|recipient|>all\n")
        assert "<|image_pad|>" in context and "<|image_pad|>" not in learned


def test_think_answer_targets_use_the_model_coordinates(tiny_qwen2_5_vl, synthetic_dataset):
    processor, train, batch = sft_batch(tiny_qwen2_5_vl, synthetic_dataset, "think_answer", "pixels", rows=1)
    learned = processor.tokenizer.decode(batch["input_ids"][0][batch["labels"][0] != -100])
    assert learned.startswith("<think>\n") and "</think>\n<answer>" in learned
    row = load_gui_dataset(synthetic_dataset, "train")[0]
    action = json.loads(row["action_json"])
    width, _ = resized_size(224, 448, 3136, 50176)  # the screenshot the model sees: 140x308
    assert action["type"] == "click"  # the fixture's first training row (seeded)
    assert f"x={round(action['x'] * width)}" in learned  # pixels of that resized screenshot, as integers


def test_qwen3_vl_learns_mobile_use_calls_on_its_grid_and_a_scroll_as_its_swipe(tiny_qwen3_vl, synthetic_dataset):
    from r1_gui.actions import Action, extract_action

    rows = load_gui_dataset(synthetic_dataset, "train")
    actions = [json.loads(row["action_json"])["type"] for row in rows]
    scroll = actions.index("scroll")  # the fixture holds scrolls, which mobile_use has no action for
    processor, train, batch = sft_batch(tiny_qwen3_vl, synthetic_dataset, "mobile_use", "grid999", rows=scroll + 1)
    for i in (0, scroll):
        learned = processor.tokenizer.decode(batch["input_ids"][i][batch["labels"][i] != -100])
        assert learned.startswith("Thought: ") and learned.endswith("</tool_call><|im_end|>\n")
        taught = extract_action(learned.removesuffix("<|im_end|>\n"), coordinates="grid999")
        expected = Action.from_dict(json.loads(rows[i]["action_json"]))
        if i == scroll:  # taught as the swipe that moves the content the same way
            assert taught.type == "swipe" and expected.type == "scroll"
        else:
            assert taught.type == expected.type


@pytest.mark.slow
@pytest.mark.parametrize("arch", ["qwen2_vl", "qwen3_vl"])
def test_sft_trains_and_saves(arch, request, synthetic_dataset, tmp_path):
    model = request.getfixturevalue(f"tiny_{arch}")
    argv = ["--config", str(RECIPE), "--model_name_or_path", str(model), "--dataset_name", str(synthetic_dataset)]
    if arch == "qwen3_vl":  # its own format: mobile_use calls on the 999 grid (scrolls as swipes)
        argv += ["--prompt_style", "auto", "--coordinates", "auto"]
    main(*parse_sft_arguments([*argv, "--output_dir", str(tmp_path), "--max_steps", "4", "--logging_steps", "1"]))
    state = json.loads((tmp_path / "trainer_state.json").read_text())
    losses = [entry["loss"] for entry in state["log_history"] if "loss" in entry]
    assert len(losses) == 4 and all(loss > 0 for loss in losses)
    assert losses[-1] < losses[0], "a learning rate of 1e-3 on a random model must lower the loss in 4 steps"
    before, after = load_file(model / "model.safetensors"), load_file(tmp_path / "model.safetensors")
    assert any(not torch.equal(before[name], after[name]) for name in before)
    assert (tmp_path / "processor_config.json").is_file() and (tmp_path / "chat_template.jinja").is_file()
    assert stock_processor_configs_resolve(tmp_path)  # the stock processor loads it where torchvision works


@pytest.mark.slow
def test_sft_resumes_from_the_last_checkpoint(tiny_qwen2_vl, synthetic_dataset, tmp_path):
    argv = ["--config", str(RECIPE), "--model_name_or_path", str(tiny_qwen2_vl), "--dataset_name",
            str(synthetic_dataset), "--output_dir", str(tmp_path), "--logging_steps", "1"]  # fmt: skip
    main(*parse_sft_arguments([*argv, "--max_steps", "2", "--save_strategy", "steps", "--save_steps", "2"]))
    assert (tmp_path / "checkpoint-2" / "trainer_state.json").is_file()
    main(*parse_sft_arguments([*argv, "--max_steps", "3", "--resume_from_checkpoint", "last"]))
    state = json.loads((tmp_path / "trainer_state.json").read_text())
    assert state["global_step"] == 3
    assert [entry["step"] for entry in state["log_history"] if "loss" in entry] == [1, 2, 3]


# -- SFT on turns: the warm start on an environment expert's episodes, and the demos' sight and SFT stages -------------


def _sight_turns(model, count, seed=0):
    """(context, answer) pairs of the web demo's sight pages, in a processor of `model`."""
    import random

    from r1_gui.multi_turn.demo import sight_examples
    from r1_gui.multi_turn.web_demo import WebDemoConfig

    config = WebDemoConfig()
    processor = load_processor(model, min_pixels=3136, max_pixels=config.max_pixels, chat_template=CHAT_TEMPLATE)
    return processor, sight_examples(config, processor, random.Random(seed), count)


def test_sft_on_turns_trains_as_the_demos_plain_loop_did(tiny_qwen2_vl, tmp_path):
    """The one SFT trainer on turns (`train_turns`) gives the loop the demos had before (issue 70 item 3): each step
    `rng.sample`s its turns, one AdamW step on the answer tokens' loss, no clipping; the same losses and weights."""
    import random

    from transformers import AutoModelForImageTextToText

    from r1_gui.multi_turn.expert import answer_loss
    from r1_gui.training.sft import Turns, sft_arguments, step_losses, train_turns

    processor, examples = _sight_turns(tiny_qwen2_vl, 10)
    pad, image_pad = processor.tokenizer.pad_token_id, processor.tokenizer.convert_tokens_to_ids("<|image_pad|>")
    load = lambda: AutoModelForImageTextToText.from_pretrained(tiny_qwen2_vl, dtype=torch.float32)  # noqa: E731
    plain = load().train()
    optimizer, rng, plain_losses = torch.optim.AdamW(plain.parameters(), lr=1e-3), random.Random(5), []
    for _ in range(4):
        loss = answer_loss(plain, rng.sample(examples, 3), pad, image_pad)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        plain_losses.append(loss.item())

    model = load()
    _, arguments, _ = sft_arguments(
        output_dir=str(tmp_path), max_steps=4, per_device_train_batch_size=3, learning_rate=1e-3,
        lr_scheduler_type="constant", max_grad_norm=0.0, logging_steps=1, save_strategy="no", report_to="none",
        use_cpu=True, bf16=False, activation_checkpointing=False, seed=5,
    )  # fmt: skip
    trainer = train_turns(
        model, processor, Turns(examples), arguments, optimizer=torch.optim.AdamW(model.parameters(), lr=1e-3)
    )
    assert step_losses(trainer) == pytest.approx(plain_losses, rel=1e-5)
    for (name, trained), (_, reference) in zip(model.named_parameters(), plain.named_parameters(), strict=True):
        assert torch.allclose(trained, reference, atol=1e-5), name


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--rollout_mode", "async", "--max_staleness", "2"], "--rollout_mode, --max_staleness: multi-turn GRPO's"),
        (["--dataset_name", "data/x"], "--dataset_name data/x and --env r1_gui/Phone-v0 both name what to train on"),
        (["--env_episodes", "0"], "--env_episodes must be at least 1, got 0"),
    ],
)
def test_an_env_warm_start_refuses_what_it_cannot_use_in_one_line(argv, message, tiny_qwen2_vl, tmp_path):
    from r1_gui.cli_errors import is_user_error
    from r1_gui.sft import main as command

    base = ["--env", "r1_gui/Phone-v0", "--model_name_or_path", str(tiny_qwen2_vl), "--output_dir", str(tmp_path),
            "--use_cpu", "true", "--bf16", "false"]  # fmt: skip
    with pytest.raises(ValueError, match=message) as raised:
        command(*parse_sft_arguments([*base, *argv]))
    assert is_user_error(raised.value)  # the command prints it as one error line


def test_sfts_episode_flags_are_checked_before_trl_and_its_help_leaves_out_grpos(tiny_qwen2_vl, capsys):
    """sft.py takes GRPO's --env flags as they are declared (training.flags.GUISFTScriptArguments): the pre-check
    names multi-turn GRPO's own, and an episode flag on a dataset run, before trl is imported; --help lists only
    the flags SFT uses."""
    from r1_gui.cli_errors import UserError
    from r1_gui.training.precheck import precheck

    model = ["--model_name_or_path", str(tiny_qwen2_vl)]
    with pytest.raises(UserError, match="--step_gamma, --rollout_mode: multi-turn GRPO's settings"):
        precheck("sft", ["--env", "r1_gui/Phone-v0", *model, "--rollout_mode", "async", "--step_gamma", "0.5"])
    with pytest.raises(UserError, match="--max_turns 3: it needs --env"):
        precheck("sft", ["--dataset_name", str(tiny_qwen2_vl), *model, "--max_turns", "3"])
    with pytest.raises(SystemExit):
        precheck("sft", ["--help"])
    shown = capsys.readouterr().out
    assert "--env_episodes" in shown and "--history_images" in shown and "--rollout_mode" not in shown


@pytest.mark.slow
def test_sft_warm_starts_on_the_expert_episodes_of_an_environment(tiny_qwen2_vl, tmp_path):
    """`r1-gui-sft --env ID` (issue 70 item 3): the expert plays --env_episodes resets through the agent loop, SFT
    trains on its turns' answers in their contexts, and the folder is a model multi-turn GRPO starts from."""
    from r1_gui.actions import styled_action
    from r1_gui.sft import main as command

    argv = ["--env", "r1_gui/Phone-v0", "--env_tasks", "open_and_return", "--env_episodes", "4", "--max_turns", "5",
            "--model_name_or_path", str(tiny_qwen2_vl), "--output_dir", str(tmp_path), "--max_steps", "3",
            "--per_device_train_batch_size", "4", "--learning_rate", "1e-3", "--logging_steps", "1",
            "--max_pixels", "12544", "--use_cpu", "true", "--bf16", "false", "--report_to", "none",
            "--save_strategy", "no"]  # fmt: skip
    command(*parse_sft_arguments(argv))
    state = json.loads((tmp_path / "trainer_state.json").read_text())
    losses = [entry["loss"] for entry in state["log_history"] if "loss" in entry]
    assert state["global_step"] == 3 and len(losses) == 3 and losses[-1] < losses[0]
    before, after = load_file(tiny_qwen2_vl / "model.safetensors"), load_file(tmp_path / "model.safetensors")
    assert any(not torch.equal(before[name], after[name]) for name in before)
    # what it learned from: the expert's answers, in the mobile_use form multi-turn GRPO writes
    from r1_gui.envs.runtime.backend import make_pool
    from r1_gui.multi_turn.expert import expert_turns

    processor = load_processor(tmp_path, chat_template=CHAT_TEMPLATE)
    with make_pool("r1_gui/Phone-v0", {}) as pool:
        turns = expert_turns(pool, [("open_and_return", seed) for seed in range(2)], processor, max_turns=5,
                             history_images=2)  # fmt: skip
    texts = [processor.tokenizer.decode(answer, skip_special_tokens=True) for _, answer in turns]
    assert texts and all(styled_action(text, "mobile_use", coordinates="grid999") for text in texts)


@pytest.mark.slow
def test_an_env_warm_start_resumes_where_its_checkpoint_stopped(tiny_qwen2_vl, tmp_path):
    """Resumed at step 2, an --env warm start trains step 3 on the batch and from the weights and optimizer state an
    uninterrupted run had there: the same step-3 loss."""
    from r1_gui.sft import main as command

    def run(folder, *extra):
        argv = [
            "--env",
            "r1_gui/Phone-v0",
            "--env_tasks",
            "open_and_return",
            "--env_episodes",
            "3",
            "--max_turns",
            "5",
            "--model_name_or_path",
            str(tiny_qwen2_vl),
            "--output_dir",
            str(folder),
            "--per_device_train_batch_size",
            "4",
            "--learning_rate",
            "1e-3",
            "--logging_steps",
            "1",
            "--max_pixels",
            "12544",
            "--use_cpu",
            "true",
            "--bf16",
            "false",
            "--report_to",
            "none",
            "--lr_scheduler_type",
            "constant",
            *extra,
        ]  # fmt: skip  (a schedule over max_steps would differ)
        command(*parse_sft_arguments(argv))
        state = json.loads((folder / "trainer_state.json").read_text())
        return {entry["step"]: entry["loss"] for entry in state["log_history"] if "loss" in entry}

    straight = run(tmp_path / "straight", "--max_steps", "3", "--save_strategy", "no")
    run(tmp_path / "cut", "--max_steps", "2", "--save_strategy", "steps", "--save_steps", "2")
    resumed = run(tmp_path / "cut", "--max_steps", "3", "--resume_from_checkpoint", "last", "--save_strategy", "no")
    assert sorted(resumed) == [1, 2, 3]
    assert resumed[3] == pytest.approx(straight[3], rel=1e-5)
