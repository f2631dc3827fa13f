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
