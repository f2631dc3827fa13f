"""GRPO training end to end on a tiny model and synthetic screens: metrics, batch alignment, torchrun + ZeRO-1,
resume, wandb offline, and the configuration errors that must come before any model is loaded."""

import json
import os
import re
import struct
import subprocess
import sys
from pathlib import Path
from unittest import mock

import pandas as pd
import pytest
import torch
from PIL import Image
from safetensors.torch import load_file

from r1_gui import rewards
from r1_gui.actions import completion_text
from r1_gui.cli_errors import UserError
from r1_gui.grpo_gui import main
from r1_gui.processing import stock_processor_configs_resolve
from r1_gui.rewards import get_reward_funcs
from r1_gui.training.grpo import parse_grpo_arguments

REPO = Path(__file__).resolve().parents[1]
RECIPE = REPO / "local_scripts" / "tiny_cpu_grpo.yaml"

pytestmark = pytest.mark.slow


def run_grpo(model, dataset, output_dir, *extra):
    """grpo_gui.py in this process, on the tiny CPU recipe."""
    argv = ["--config", str(RECIPE), "--model_name_or_path", str(model), "--dataset_name", str(dataset)]
    main(*parse_grpo_arguments([*argv, "--output_dir", str(output_dir), *extra]))
    return json.loads((Path(output_dir) / "trainer_state.json").read_text())


def logged(state, key):
    return [entry[key] for entry in state["log_history"] if key in entry]


def digit_fraction(completions, **kwargs):
    """A test reward with a learning signal for a random model: the share of digits in the completion."""
    texts = [completion_text(c) for c in completions]
    return [sum(ch.isdigit() for ch in text) / max(1, len(text)) for text in texts]


@pytest.fixture
def signal_reward(monkeypatch):
    monkeypatch.setitem(rewards.REWARD_FUNCS, "digit_fraction", digit_fraction)
    return "digit_fraction"


def test_two_steps_log_every_reward_per_action_type(tiny_qwen2_vl, synthetic_dataset, tmp_path):
    state = run_grpo(tiny_qwen2_vl, synthetic_dataset, tmp_path, "--max_steps", "2", "--completions_table_steps", "1")
    assert state["global_step"] == 2
    keys = {key for entry in state["log_history"] for key in entry}
    assert {"loss", "rewards/accuracy/mean", "rewards/format/mean", "completions/parse_rate"} <= keys
    assert "groups/no_signal_frac" in keys
    per_type = {key for key in keys if key.startswith("rewards/accuracy/") and not key.endswith(("mean", "std"))}
    assert per_type, "no per-action-type reward metric was logged"
    assert all(0.0 <= value <= 1.0 for value in logged(state, "completions/parse_rate"))
    # output_dir holds the model, its processor and the trainer state
    for name in ("model.safetensors", "config.json", "processor_config.json", "tokenizer.json", "trainer_state.json"):
        assert (tmp_path / name).is_file(), name
    assert stock_processor_configs_resolve(tmp_path)  # the stock processor loads it where torchvision works
    # the completions table: screenshots with points drawn, and one JSON line per row
    table = [json.loads(line) for line in (tmp_path / "completions_table" / "completions.jsonl").open()]
    assert table and {"instruction", "completion", "solution", "reward/accuracy", "reward/format"} <= set(table[0])
    assert all(Path(row["image"]).is_file() for row in table)
    assert Image.open(table[0]["image"]).size == (224, 448)


@pytest.mark.parametrize("arch", ["qwen3_vl", "qwen3_vl_moe"])
def test_qwen3_vl_trains_in_its_own_format_logs_per_type_and_its_folder_reloads(
    arch, request, synthetic_dataset, tmp_path, signal_reward, caplog
):
    """--prompt_style auto / --coordinates auto on a Qwen3-VL (dense and MoE): mobile_use on the 999 grid, said at
    start-up; two steps move the weights, every reward is logged per action type, and the output folder reloads
    as a Qwen3-VL with its 16-pixel-patch processor (and resolves for the stock Qwen3VLProcessor)."""
    from transformers import AutoModelForImageTextToText

    from r1_gui.processing import load_processor, resize_factor

    model = request.getfixturevalue(f"tiny_{arch}")
    with caplog.at_level("INFO"):
        state = run_grpo(
            model, synthetic_dataset, tmp_path, *("--max_steps", "2", "--prompt_style", "auto", "--coordinates", "auto"),
            *("--reward_funcs", signal_reward, "format"),
        )  # fmt: skip
    assert f"{arch}: --prompt_style auto -> mobile_use, --coordinates auto -> grid999" in caplog.text
    assert "mobile_use prompts" in caplog.text
    keys = {key for entry in state["log_history"] for key in entry}
    assert {key for key in keys if key.startswith("rewards/format/") and not key.endswith(("mean", "std"))}
    before, after = load_file(model / "model.safetensors"), load_file(tmp_path / "model.safetensors")
    changed = [name for name in before if not torch.equal(before[name], after[name])]
    assert len(changed) > len(before) // 2, f"only {len(changed)} of {len(before)} tensors changed"
    reloaded = AutoModelForImageTextToText.from_pretrained(tmp_path)
    processor = load_processor(tmp_path)
    assert reloaded.config.model_type == arch and resize_factor(processor) == 32
    assert json.loads((tmp_path / "preprocessor_config.json").read_text())["processor_class"] == "Qwen3VLProcessor"
    assert stock_processor_configs_resolve(tmp_path)


def test_parameters_change_when_rewards_differ(tiny_qwen2_vl, synthetic_dataset, tmp_path, signal_reward):
    run_grpo(tiny_qwen2_vl, synthetic_dataset, tmp_path, "--max_steps", "2", "--reward_funcs", signal_reward, "format")
    before = load_file(tiny_qwen2_vl / "model.safetensors")
    after = load_file(tmp_path / "model.safetensors")
    changed = [name for name in before if not torch.equal(before[name], after[name])]
    assert len(changed) > len(before) // 2, f"only {len(changed)} of {len(before)} tensors changed"


def test_each_completion_is_scored_against_its_own_row(tiny_qwen2_vl, synthetic_dataset, tmp_path, monkeypatch):
    """Per-device batch 4 with 2 generations: two different rows per device batch. The original project scored
    completions against the wrong screenshot/solution there; every kwarg a reward sees must belong to its prompt."""
    rows = pd.read_parquet(synthetic_dataset / "train.parquet").set_index("id")
    seen = []

    def recording_reward(prompts, completions, id, image, solution, problem, action, **kwargs):
        for i, prompt in enumerate(prompts):
            user = next(m for m in prompt if m["role"] == "user")
            prompt_image = next(p["image"] for p in user["content"] if p["type"] == "image")
            prompt_text = next(p["text"] for p in user["content"] if p["type"] == "text")
            row = rows.loc[id[i]]
            file_pixels = Image.open(row["image"]).convert("RGB").tobytes()
            seen.append(
                {
                    "id": id[i],
                    "prompt_matches_row": prompt_text == row["problem"] == problem[i],
                    "solution_matches_row": solution[i] == row["solution"],
                    "prompt_image_is_row_image": prompt_image.convert("RGB").tobytes() == file_pixels,
                    "column_image_is_row_image": image[i].convert("RGB").tobytes() == file_pixels,
                }
            )
        return [1.0 if kind == "click" else 0.0 for kind in action]

    monkeypatch.setitem(rewards.REWARD_FUNCS, "click_rows", recording_reward)
    state = run_grpo(
        tiny_qwen2_vl,
        synthetic_dataset,
        tmp_path,
        *("--max_steps", "3", "--per_device_train_batch_size", "4", "--num_generations", "2"),
        *("--reward_funcs", "click_rows"),
    )
    # 3 steps x 4 completions, after the start-up probe's one call on row 0 with two completions (issue 71 item 4),
    # which gets row 0's prompt, screenshot and solution as trl passes them too
    assert len(seen) == 2 + 3 * 4 and seen[0]["id"] == seen[1]["id"]
    assert all(all(v for k, v in record.items() if k != "id") for record in seen), seen
    ids = [record["id"] for record in seen]
    assert all(ids[i] == ids[i + 1] for i in range(0, len(ids), 2)), "a prompt group was split"
    assert len(set(ids[0:4])) == 2, "a device batch of 4 should hold 2 rows x 2 generations"
    # per-type metrics are attributed to the right rows: the reward is 1 exactly on click rows
    keys = {key for entry in state["log_history"] for key in entry}
    for key in keys:
        if key.startswith("rewards/click_rows/") and not key.endswith(("mean", "std")):
            expected = 1.0 if key.endswith("/click") else 0.0
            assert logged(state, key) and all(value == expected for value in logged(state, key)), key


def build_trainer(model_path, dataset_path, output_dir, reward_funcs, **config):
    """A GUIGRPOTrainer on the tiny model and the synthetic train split, for tests that drive its hooks directly."""
    from transformers import AutoModelForImageTextToText
    from trl import GRPOConfig

    from r1_gui.gui_datasets import load_gui_dataset
    from r1_gui.processing import CHAT_TEMPLATE, load_processor, pixel_bounds
    from r1_gui.training.data import add_model_columns
    from r1_gui.training.trainer import GUIGRPOTrainer

    processor = load_processor(model_path, max_pixels=50176, chat_template=CHAT_TEMPLATE)
    dataset = add_model_columns(
        load_gui_dataset(dataset_path, "train"), "aguvis", "normalized", pixel_bounds(processor)
    )
    defaults = {"per_device_train_batch_size": 16, "num_generations": 2, "max_completion_length": 8, "beta": 0.0}
    args = GRPOConfig(
        output_dir=str(output_dir),
        use_cpu=True,
        bf16=False,
        report_to="none",
        chat_template_kwargs={"generation_recipient": "all"},
        **{**defaults, **config},
    )
    model = AutoModelForImageTextToText.from_pretrained(model_path)
    trainer = GUIGRPOTrainer(
        model=model, reward_funcs=reward_funcs, args=args, train_dataset=dataset, processing_class=processor
    )
    return trainer, dataset


def test_image_token_types_line_up_with_left_padded_prompts(tiny_qwen2_vl, synthetic_dataset, tmp_path):
    """trl left-pads prompt ids but takes mm_token_type_ids from a processor call that pads on the tokenizer's side.
    With right padding they disagree whenever prompts in a batch differ in length, and Qwen's rope index then
    crashes or misplaces the image. Every position marked as image must hold an image token, and vice versa."""
    from r1_gui.processing import CHAT_TEMPLATE, load_processor

    processor = load_processor(tiny_qwen2_vl, max_pixels=50176, chat_template=CHAT_TEMPLATE)
    assert processor.tokenizer.padding_side == "right"  # the tiny tokenizer's default, like many Qwen ones
    trainer, dataset = build_trainer(tiny_qwen2_vl, synthetic_dataset, tmp_path, get_reward_funcs(["accuracy"]))
    rows = [dataset[i] for i in range(8) for _ in range(2)]
    assert len({len(row["problem"]) for row in rows}) > 1, "the batch must mix prompt lengths"
    output = trainer._generate_and_score_completions(rows)
    prompt_ids = output["prompt_ids"]
    image_positions = output["mm_token_type_ids"][:, : prompt_ids.shape[1]] == 1
    assert torch.equal(image_positions, prompt_ids == processor.image_token_id)


@pytest.mark.parametrize("arch", ["qwen2_vl", "qwen3_vl"])  # Qwen3-VL: deepstack features copied with the rest
def test_dedupe_images_changes_no_tensor_of_the_step(arch, request, synthetic_dataset, tmp_path):
    """Processing, encoding and prefilling each distinct prompt once must be a pure saving: with the same seed, the
    step's prompts, images, completions and advantages are the same with and without it, the processor saw each
    distinct screenshot once and generation prefilled each distinct prompt once."""
    from r1_gui.training.repeated_prompts import ImageProcessorCache, image_key

    model = request.getfixturevalue(f"tiny_{arch}")
    trainer, dataset = build_trainer(
        model, synthetic_dataset, tmp_path, get_reward_funcs(["accuracy"]), num_generations=4, temperature=1.0
    )
    assert trainer.dedupe_images
    rows = [dataset[i] for i in range(4) for _ in range(4)]
    outputs, caches, passes = [], [], []
    trainer.model.model.language_model.register_forward_pre_hook(
        lambda module, args, kwargs: passes.append(kwargs["inputs_embeds"].shape[0]), with_kwargs=True
    )
    original_init = ImageProcessorCache.__init__

    def record(self, inner):
        original_init(self, inner)
        caches.append(self)

    for dedupe in (False, True):
        trainer.dedupe_images = dedupe
        torch.manual_seed(0)
        passes.append("on" if dedupe else "off")
        with mock.patch.object(ImageProcessorCache, "__init__", record):
            outputs.append(trainer._generate_and_score_completions(rows))
    plain, deduped = outputs
    second = passes.index("on")
    assert (passes[1], passes[second + 1]) == (16, 4)  # the prefill: every row, then each distinct prompt
    assert set(passes[2:second] + passes[second + 2 :]) == {16}  # decoding: every row
    assert plain.keys() == deduped.keys()
    for key, value in plain.items():
        if isinstance(value, torch.Tensor):
            assert torch.equal(value, deduped[key]), key
    distinct = len({image_key(row["image"].convert("RGB")) for row in rows})
    assert [(cache.processed, cache.requested) for cache in caches] == [(distinct, 2 * len(rows))]
    assert plain["completion_ids"].shape[0] == len(rows)


def loss_gradients(trainer, batch) -> dict[str, torch.Tensor]:
    """Every parameter's gradient of one loss pass (trainer._compute_loss) on a generated batch."""
    trainer.model.train()
    trainer.current_gradient_accumulation_steps = 1  # set by the training loop
    trainer.model.zero_grad()
    trainer._compute_loss(trainer.model, batch).backward()
    return {name: p.grad.clone() for name, p in trainer.model.named_parameters() if p.grad is not None}


@pytest.mark.parametrize("arch", ["qwen2_vl", "qwen3_vl"])
def test_dedupe_images_loss_pass_encodes_each_screenshot_once_with_the_same_gradient(
    arch, request, synthetic_dataset, tmp_path
):
    """In the loss pass the vision tower sees each distinct screenshot of the micro-batch once, and the per-token
    log-probs and every parameter's gradient (the vision tower's included; Qwen3-VL's deepstack mergers too) are
    those of the pass that encodes every copy."""
    from helpers.gradients import assert_same_gradient

    from r1_gui.seam.models import image_encoder
    from r1_gui.training.repeated_prompts import image_key

    def alternating(completions, **kwargs):
        return [float(i % 2) for i in range(len(completions))]

    model = request.getfixturevalue(f"tiny_{arch}")
    trainer, dataset = build_trainer(model, synthetic_dataset, tmp_path, [alternating], num_generations=4)
    rows = [dataset[i] for i in range(4) for _ in range(4)]
    batch = trainer._generate_and_score_completions(rows)
    distinct = len({image_key(row["image"].convert("RGB")) for row in rows})
    assert distinct > 1 and bool((batch["advantages"] != 0).all())
    encoded, logps = [], []
    image_encoder(trainer.model).visual.register_forward_pre_hook(lambda module, args: encoded.append(args[0]))
    original = trainer._get_per_token_logps_and_entropies

    def recording(*args, **kwargs):  # the loss pass's per-token log-probs, as the loss receives them
        output = original(*args, **kwargs)
        logps.append(output[0].detach().clone())
        return output

    grads = {}
    with mock.patch.object(trainer, "_get_per_token_logps_and_entropies", recording):
        for dedupe in (False, True):
            trainer.dedupe_images = dedupe
            encoded.clear()
            grads[dedupe] = loss_gradients(trainer, batch)
            images = len(encoded) and encoded[0].shape[0] // int(batch["image_grid_thw"][0].prod())
            assert (len(encoded), images) == (1, distinct if dedupe else len(rows)), dedupe
    plain, deduped = logps
    torch.testing.assert_close(deduped, plain, rtol=0, atol=0)  # the same values: the features are the same tensors
    assert any(name.startswith("model.visual.") for name in grads[False])
    if arch == "qwen3_vl":
        assert any(".deepstack_merger_list." in name for name in grads[False])
    assert grads[True].keys() == grads[False].keys()
    for name, grad in grads[False].items():
        assert_same_gradient(grads[True][name], grad, name)


def test_micro_batches_hold_whole_groups_with_the_same_summed_gradient(tiny_qwen2_vl, synthetic_dataset, tmp_path):
    """With the loss pass in 4 micro-batches (steps_per_generation 4), trl shuffles the generation batch row by row,
    so each micro-batch holds answers to several screenshots and encodes each; with dedupe_images the batch is
    shuffled by whole groups: each micro-batch holds one screenshot's 4 answers and encodes it once, and the
    gradient summed over the micro-batches (dapo: normalised by the whole batch) is the same."""
    from helpers.gradients import assert_same_gradient

    from r1_gui.seam.models import image_encoder

    def alternating(completions, **kwargs):
        return [float(i % 2) for i in range(len(completions))]

    trainer, dataset = build_trainer(
        tiny_qwen2_vl, synthetic_dataset, tmp_path, [alternating],
        per_device_train_batch_size=4, num_generations=4, steps_per_generation=4, loss_type="dapo",
    )  # fmt: skip
    rows = [dataset[i] for i in range(4) for _ in range(4)]
    batch = trainer._generate_and_score_completions(rows)
    encoded = []
    image_encoder(trainer.model).visual.register_forward_pre_hook(lambda module, args: encoded.append(args[0]))
    patches = int(batch["image_grid_thw"][0].prod())
    grads, images = {}, {}
    for dedupe in (False, True):
        trainer.dedupe_images = dedupe
        trainer._step, trainer._buffered_inputs = 0, None
        trainer.model.train()  # the training path buffers the micro-batches
        torch.manual_seed(0)
        with mock.patch.object(trainer, "_generate_and_score_completions", return_value=batch):
            trainer._prepare_inputs(rows)
        micro_batches = trainer._buffered_inputs
        assert [len(micro["prompt_ids"]) for micro in micro_batches] == [4, 4, 4, 4]
        trainer.model.zero_grad()
        trainer.current_gradient_accumulation_steps = 4
        encoded.clear()
        for micro in micro_batches:
            trainer._compute_loss(trainer.model, micro).backward()
        images[dedupe] = [len(pixels) // patches for pixels in encoded]
        grads[dedupe] = {name: p.grad.clone() for name, p in trainer.model.named_parameters() if p.grad is not None}
        if dedupe:  # one prompt group per micro-batch
            for micro in micro_batches:
                assert torch.equal(micro["advantages"] != 0, torch.ones(4, dtype=torch.bool))
                assert len({tuple(row) for row in micro["prompt_ids"].tolist()}) == 1
    assert images[True] == [1, 1, 1, 1]
    assert sum(images[False]) > 4  # the row shuffle scatters the screenshots
    assert grads[True].keys() == grads[False].keys()
    for name, grad in grads[False].items():
        assert_same_gradient(grads[True][name], grad, name)


def test_no_signal_completions_leave_the_gradient_unchanged(tiny_qwen2_vl, synthetic_dataset, tmp_path):
    """Skipping zero-advantage completions must be a pure saving: on a batch where click prompts get equal rewards
    (no signal) and the others do not, the gradient with and without the skip is the same, and the skipped pass
    holds only the rows (and the images) of the completions with signal."""
    from r1_gui.training.trainer import drop_rows_without_signal

    def click_rows_equal(completions, action, **kwargs):
        return [1.0 if kind == "click" else float(i % 2) for i, kind in enumerate(action)]

    trainer, dataset = build_trainer(tiny_qwen2_vl, synthetic_dataset, tmp_path, [click_rows_equal], loss_type="dapo")
    assert trainer.skip_no_signal
    clicks = [i for i in range(len(dataset)) if dataset[i]["action"] == "click"][:4]
    others = [i for i in range(len(dataset)) if dataset[i]["action"] != "click"][:4]
    rows = [
        dataset[i] for i in (clicks[0], others[0], clicks[1], others[1], *clicks[2:], *others[2:]) for _ in range(2)
    ]
    batch = trainer._generate_and_score_completions(rows)
    signal = batch["advantages"] != 0
    assert signal.tolist() == [row["action"] != "click" for row in rows]

    kept = drop_rows_without_signal(batch)
    assert kept["prompt_ids"].shape[0] == kept["completion_ids"].shape[0] == int(signal.sum()) == 8
    assert torch.equal(kept["completion_ids"], batch["completion_ids"][signal])
    patches = batch["image_grid_thw"].prod(-1)
    images = batch["pixel_values"].split(patches.tolist())
    assert torch.equal(kept["pixel_values"], torch.cat([image for image, s in zip(images, signal, strict=True) if s]))
    assert torch.equal(kept["image_grid_thw"], batch["image_grid_thw"][signal])

    grads = {}
    for skip in (False, True):
        trainer.skip_no_signal = skip
        grads[skip] = loss_gradients(trainer, batch)
    assert grads[False] and grads[True].keys() == grads[False].keys()
    assert any(g.abs().sum() > 0 for g in grads[False].values()), "the batch carried no gradient at all"
    for name, grad in grads[False].items():
        torch.testing.assert_close(grads[True][name], grad, rtol=1e-5, atol=1e-8, msg=name)


@pytest.mark.parametrize(
    ("config", "blocker"),
    [
        ({"loss_type": "dapo"}, None),
        ({"loss_type": "cispo"}, None),
        ({"loss_type": "dapo", "beta": 0.04}, "beta=0.04"),
        ({"loss_type": "grpo"}, "loss_type=grpo"),
        ({"loss_type": "bnpo"}, "loss_type=bnpo"),
        ({"loss_type": "dr_grpo"}, "loss_type=dr_grpo"),
        ({"loss_type": "dapo", "top_entropy_quantile": 0.2}, "top_entropy_quantile"),
        ({"loss_type": "dapo", "entropy_coef": 0.01}, "entropy bonus"),
    ],
)
def test_no_signal_skip_only_where_it_is_exact(tiny_qwen2_vl, synthetic_dataset, tmp_path, config, blocker):
    trainer, _ = build_trainer(tiny_qwen2_vl, synthetic_dataset, tmp_path, get_reward_funcs(["accuracy"]), **config)
    assert trainer.skip_no_signal == (blocker is None)
    reason = trainer._no_signal_skip_blocker()
    assert reason is None if blocker is None else blocker in reason


def test_resume_continues_at_the_saved_step(tiny_qwen2_vl, synthetic_dataset, tmp_path):
    common = ("--save_strategy", "steps", "--save_steps", "2")
    run_grpo(tiny_qwen2_vl, synthetic_dataset, tmp_path, "--max_steps", "2", *common)
    assert (tmp_path / "checkpoint-2" / "trainer_state.json").is_file()
    assert stock_processor_configs_resolve(tmp_path / "checkpoint-2")
    state = run_grpo(tiny_qwen2_vl, synthetic_dataset, tmp_path, "--max_steps", "3", "--resume_from_checkpoint", "last")
    steps = [entry["step"] for entry in state["log_history"] if "loss" in entry]
    assert state["global_step"] == 3
    assert steps == [1, 2, 3], "the resumed run repeated or skipped steps"


@pytest.mark.parametrize("lora", [False, True], ids=["full", "lora"])
def test_a_resume_loads_the_checkpoints_weights_and_runs_no_step_past_max_steps(
    lora, tiny_qwen2_vl, synthetic_dataset, tmp_path, signal_reward
):
    """transformers 5.23's resume read model.safetensors without from_pretrained's name conversion: 57 of a tiny
    Qwen2-VL's 58 tensors stayed at the base model's values, silently; and a run resumed from the checkpoint of its
    --max_steps trained one step more. Resumed at its own step, a run now saves exactly the checkpoint's weights."""
    from helpers.resumed import assert_resumed_without_a_step

    common = ("--max_steps", "2", "--save_strategy", "steps", "--save_steps", "2", "--reward_funcs", signal_reward)
    common += ("--use_peft", "--lora_r", "4") if lora else ()
    run_grpo(tiny_qwen2_vl, synthetic_dataset, tmp_path, *common)
    run_grpo(tiny_qwen2_vl, synthetic_dataset, tmp_path, *common, "--resume_from_checkpoint", "last")
    assert_resumed_without_a_step(tmp_path, 2, tiny_qwen2_vl)


def test_a_checkpoint_that_does_not_fit_the_model_is_one_error_naming_its_file(
    tiny_qwen2_vl, tiny_qwen2_5_vl, tmp_path
):
    from transformers import AutoModelForImageTextToText

    from r1_gui.training.resume import load_weights_into

    model = AutoModelForImageTextToText.from_pretrained(tiny_qwen2_vl)
    with pytest.raises(UserError, match=rf"^{re.escape(str(tiny_qwen2_5_vl / 'model.safetensors'))} does not hold this model's weights: "
                       r"\d+ tensors missing .*Resume with the --model_name_or_path the checkpoint was trained from$"):  # fmt: skip
        load_weights_into(model, tiny_qwen2_5_vl)
    cut = tmp_path / "cut"
    cut.mkdir()
    for path in tiny_qwen2_vl.iterdir():
        (cut / path.name).write_bytes(path.read_bytes()[: 4096 if path.name == "model.safetensors" else None])
    with pytest.raises(
        UserError,
        match=rf"^{re.escape(str(cut / 'model.safetensors'))} cannot be read \(.*\): the file is damaged or cut short",
    ):
        load_weights_into(model, cut)


def test_resume_last_takes_the_newest_complete_checkpoint(tiny_qwen2_vl, synthetic_dataset, tmp_path):
    """A kill while saving leaves checkpoint-N without trainer_state.json: `last` was that folder, and the run died
    in a FileNotFoundError traceback. It resumes from the newest complete one and says which, as the user runs it."""
    common = ("--save_strategy", "steps", "--save_steps", "1")
    run_grpo(tiny_qwen2_vl, synthetic_dataset, tmp_path, "--max_steps", "1", *common)
    (tmp_path / "checkpoint-2").mkdir()
    (tmp_path / "checkpoint-2" / "model.safetensors").write_bytes(b"cut short")
    argv = ["--config", RECIPE, "--model_name_or_path", tiny_qwen2_vl, "--dataset_name", synthetic_dataset]
    argv += ["--output_dir", tmp_path, "--max_steps", "2", "--resume_from_checkpoint", "last"]
    done = subprocess.run([sys.executable, "src/r1_gui/grpo_gui.py", *map(str, argv)], cwd=REPO, text=True,
                          capture_output=True, timeout=600, env={**os.environ, "OMP_NUM_THREADS": "1"})  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert (
        f"--resume_from_checkpoint last: resuming from {tmp_path / 'checkpoint-1'}, the newest complete checkpoint; "
        "checkpoint-2 hold(s) no trainer_state.json"
    ) in done.stderr
    state = json.loads((tmp_path / "trainer_state.json").read_text())
    assert state["global_step"] == 2 and [e["step"] for e in state["log_history"] if "loss" in e] == [1, 2]


def read_wandb_records(run_file: Path) -> tuple[set[str], set[str]]:
    """(history keys, record types) of an offline wandb run file (LevelDB-style log: 32 KiB blocks of
    CRC|length|type records)."""
    from wandb.proto import wandb_internal_pb2

    data, block, position, pending, keys, kinds = run_file.read_bytes(), 32768, 7, b"", set(), set()
    while position + 7 <= len(data):
        if block - position % block < 7:
            position += block - position % block
            continue
        _, length, kind = struct.unpack("<IHB", data[position : position + 7])
        chunk, position = data[position + 7 : position + 7 + length], position + 7 + length
        if kind in (1, 4):  # a full record, or the last piece of one
            record = wandb_internal_pb2.Record()
            record.ParseFromString(pending + chunk)
            pending = b""
            kinds.add(record.WhichOneof("record_type"))
            if record.WhichOneof("record_type") == "history":
                keys |= {item.key or "/".join(item.nested_key) for item in record.history.item}
        elif kind in (2, 3):
            pending += chunk
    return keys, kinds


def test_wandb_offline_run_holds_our_metrics_and_the_table(tiny_qwen2_vl, synthetic_dataset, tmp_path, monkeypatch):
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    monkeypatch.setenv("WANDB_DATA_DIR", str(tmp_path / "wandb-data"))
    run_grpo(tiny_qwen2_vl, synthetic_dataset, tmp_path / "out", "--max_steps", "2", "--report_to", "wandb")
    # main() returned: the run is finished and its file written out (finish_wandb_run waits for both), so the file
    # is read at once, with no wait that load could outlast
    (run_file,) = tmp_path.glob("wandb/offline-run-*/run-*.wandb")
    keys, kinds = read_wandb_records(run_file)
    assert "exit" in kinds, kinds  # the record wandb writes when the run finishes
    assert {"train/rewards/accuracy/mean", "train/completions/parse_rate", "train/groups/no_signal_frac"} <= keys
    assert any(k.startswith("train/rewards/accuracy/") and not k.endswith(("mean", "std")) for k in keys)
    assert "completions_table/_type" in keys
    tables = list(run_file.parent.glob("files/media/table/completions_table_*.table.json"))
    assert tables and "screenshot" in json.loads(tables[0].read_text())["columns"]


def test_torchrun_two_processes_with_zero1_end_with_equal_weights(tiny_qwen2_vl, synthetic_dataset, tmp_path):
    command = [
        *(sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_port", "29533"),
        str(REPO / "tests" / "helpers" / "grpo_rank_weights.py"),
        *("--config", str(RECIPE), "--model_name_or_path", str(tiny_qwen2_vl)),
        *("--dataset_name", str(synthetic_dataset), "--output_dir", str(tmp_path)),
        *("--max_steps", "2", "--per_device_train_batch_size", "2", "--reward_funcs", "digit_fraction", "format"),
        *("--deepspeed", str(REPO / "local_scripts" / "zero1_no_optimizer.json")),
    ]
    result = subprocess.run(
        command, capture_output=True, text=True, timeout=900, env={**os.environ, "OMP_NUM_THREADS": "1"}
    )
    assert result.returncode == 0, result.stderr[-4000:]
    ranks = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in (0, 1)]
    assert [r["global_step"] for r in ranks] == [2, 2]
    assert ranks[0]["checksum"] == ranks[1]["checksum"]
    before = load_file(tiny_qwen2_vl / "model.safetensors")
    after = load_file(tmp_path / "model.safetensors")
    assert any(not torch.equal(before[name], after[name]) for name in before), "training changed nothing"


def test_a_zero2_run_on_two_processes_resumes_the_checkpoints_weights(tiny_qwen2_vl, synthetic_dataset, tmp_path):
    from helpers.resumed import assert_resumed_without_a_step

    command = [
        *(sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_port", str(free_port())),
        str(REPO / "tests" / "helpers" / "grpo_rank_weights.py"),
        *("--config", str(RECIPE), "--model_name_or_path", str(tiny_qwen2_vl)),
        *("--dataset_name", str(synthetic_dataset), "--output_dir", str(tmp_path)),
        *("--max_steps", "2", "--per_device_train_batch_size", "2", "--reward_funcs", "digit_fraction", "format"),
        *("--save_strategy", "steps", "--save_steps", "2", "--deepspeed", str(REPO / "local_scripts" / "zero2.json")),
    ]
    for resume in ((), ("--resume_from_checkpoint", "last")):
        result = subprocess.run([*command, *resume], capture_output=True, text=True, timeout=900,
                                env={**os.environ, "OMP_NUM_THREADS": "1"})  # fmt: skip
        assert result.returncode == 0, result.stderr[-4000:]
    assert (tmp_path / "checkpoint-2" / "global_step2").is_dir()  # the DeepSpeed engine's own checkpoint
    assert_resumed_without_a_step(tmp_path, 2, tiny_qwen2_vl)
    assert result.stderr.count("no step to run") == 1  # said once, by the first process


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_two_nodes_as_documented_train_together_and_one_process_writes(tiny_qwen2_vl, synthetic_dataset, tmp_path):
    """README's several-nodes launch, run by hand the way a second node would: two torchrun agents (--nnodes 2,
    node ranks 0 and 1, one process each, rendezvous on 127.0.0.1), gloo, ZeRO-2, 2 steps. Each node has its own
    output folder, as each machine has its own disk: the model is saved by global process 0 alone, and only the
    process that writes says "saved" (node 1 said it too while writing nothing)."""
    port, logs = free_port(), {}
    processes = {}
    for node in (0, 1):
        command = [
            *(sys.executable, "-m", "torch.distributed.run", "--nnodes", "2", "--node_rank", str(node)),
            *("--nproc_per_node", "1", "--master_addr", "127.0.0.1", "--master_port", str(port)),
            str(REPO / "tests" / "helpers" / "grpo_rank_weights.py"),
            *("--config", str(RECIPE), "--model_name_or_path", str(tiny_qwen2_vl)),
            *("--dataset_name", str(synthetic_dataset), "--output_dir", str(tmp_path / f"node{node}")),
            *("--max_steps", "2", "--per_device_train_batch_size", "2", "--reward_funcs", "digit_fraction", "format"),
            *("--deepspeed", str(REPO / "local_scripts" / "zero2.json")),
        ]
        logs[node] = (tmp_path / f"node{node}.log").open("w")
        processes[node] = subprocess.Popen(command, stdout=logs[node], stderr=subprocess.STDOUT, cwd=REPO,
                                           env={**os.environ, "OMP_NUM_THREADS": "1"})  # fmt: skip
    codes = {node: process.wait(timeout=900) for node, process in processes.items()}
    for log in logs.values():
        log.close()
    output = {node: (tmp_path / f"node{node}.log").read_text() for node in (0, 1)}
    assert codes == {0: 0, 1: 0}, output[0][-3000:] + output[1][-3000:]
    ranks = [json.loads((tmp_path / f"node{r}" / f"rank{r}.json").read_text()) for r in (0, 1)]
    assert [r["global_step"] for r in ranks] == [2, 2] and ranks[0]["checksum"] == ranks[1]["checksum"]
    before = load_file(tiny_qwen2_vl / "model.safetensors")
    after = load_file(tmp_path / "node0" / "model.safetensors")
    assert any(not torch.equal(before[name], after[name]) for name in before), "training changed nothing"
    assert sorted(path.name for path in (tmp_path / "node1").iterdir()) == ["rank1.json"]  # the helper's own file
    saved = "saved the model, processor and trainer_state.json to"
    assert output[0].count(saved) == 1 and saved not in output[1]


# ---------------------------------------------------------------------------------------------------------------
# Configuration errors: each must be raised before any model weights are loaded.


@pytest.fixture
def no_model_loading(monkeypatch):
    from transformers import AutoModelForImageTextToText

    def refuse(*args, **kwargs):
        raise AssertionError("the model was loaded before the configuration error was raised")

    monkeypatch.setattr(AutoModelForImageTextToText, "from_pretrained", refuse)


def test_batch_not_divisible_by_generations_names_settings_that_work(tiny_qwen2_vl, synthetic_dataset):
    with pytest.raises(ValueError, match=r"= 3 completions.*num_generations \(2\).*one of \[3\].*one of \[2, 4, 6\]"):
        parse_grpo_arguments(["--config", str(RECIPE), "--per_device_train_batch_size", "3", "--num_generations", "2"])


def test_unknown_argument_fails_with_the_closest_names():
    with pytest.raises(UserError, match="--num_generations"):
        parse_grpo_arguments(["--config", str(RECIPE), "--num_generation", "4"])


def test_unknown_reward_lists_the_valid_ones(tiny_qwen2_vl, synthetic_dataset, tmp_path, no_model_loading):
    with pytest.raises(ValueError, match=r"unknown reward\(s\) \['accurasy'\]; valid names: .*'step_success'"):
        run_grpo(tiny_qwen2_vl, synthetic_dataset, tmp_path, "--reward_funcs", "accurasy")


def test_missing_columns_are_listed(tiny_qwen2_vl, synthetic_dataset, tmp_path, no_model_loading):
    broken = tmp_path / "broken"
    broken.mkdir()
    pd.read_parquet(synthetic_dataset / "train.parquet").drop(columns=["solution", "problem"]).to_parquet(
        broken / "train.parquet"
    )
    with pytest.raises(ValueError, match=r"missing the column\(s\) problem, solution"):
        run_grpo(tiny_qwen2_vl, broken, tmp_path / "out")


def test_missing_image_names_the_row(tiny_qwen2_vl, synthetic_dataset, tmp_path, no_model_loading):
    broken = tmp_path / "broken"
    broken.mkdir()
    frame = pd.read_parquet(synthetic_dataset / "train.parquet")
    frame.loc[3, "image"] = "/nonexistent/screen.png"
    frame.to_parquet(broken / "train.parquet")
    with pytest.raises(FileNotFoundError, match=rf"row 3 \(id '{frame.loc[3, 'id']}'\).*/nonexistent/screen.png"):
        run_grpo(tiny_qwen2_vl, broken, tmp_path / "out")


def test_a_model_that_is_not_qwen_vl_is_refused(synthetic_dataset, tmp_path, no_model_loading):
    (tmp_path / "llama").mkdir()
    (tmp_path / "llama" / "config.json").write_text(json.dumps({"model_type": "llama"}))
    with pytest.raises(ValueError, match="is a 'llama' model; r1_gui trains Qwen2-VL, Qwen2.5-VL, Qwen3-VL and Aguvis"):
        run_grpo(tmp_path / "llama", synthetic_dataset, tmp_path / "out")


@pytest.fixture
def qwen2_vl_config_only(tmp_path) -> Path:
    """A folder with only a Qwen2-VL config.json: enough for the checks that come before any weights."""
    folder = tmp_path / "config-only"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "qwen2_vl"}))
    return folder


def test_reward_preset_expands_to_its_rewards_and_weights(qwen2_vl_config_only, tmp_path, no_model_loading):
    argv = ["--config", str(RECIPE), "--model_name_or_path", str(qwen2_vl_config_only)]
    argv += ["--dataset_name", str(tmp_path / "no-data"), "--output_dir", str(tmp_path / "out")]
    script_args, training_args, model_args = parse_grpo_arguments([*argv, "--reward_funcs", "guir1"])
    with pytest.raises(Exception, match="no-data"):  # the rewards are set up, then the missing data stops the run
        main(script_args, training_args, model_args)
    assert training_args.reward_weights == [0.8, 0.2]


def test_reward_preset_with_contradicting_weights_fails(qwen2_vl_config_only, tmp_path, no_model_loading):
    argv = ["--config", str(RECIPE), "--model_name_or_path", str(qwen2_vl_config_only), "--output_dir", str(tmp_path)]
    argv += ["--dataset_name", str(tmp_path), "--reward_funcs", "guir1", "--reward_weights", "1.0", "1.0"]
    with pytest.raises(ValueError, match=r"contradicts the preset.*guir1_accuracy=0\.8, guir1_format=0\.2"):
        main(*parse_grpo_arguments(argv))


def test_a_second_run_into_the_same_folder_starts_a_fresh_completions_table(tiny_qwen2_vl, synthetic_dataset, tmp_path):
    common = ("--completions_table_steps", "1", "--max_completion_length", "8", "--save_strategy", "steps")
    common = (*common, "--save_steps", "1", "--max_steps", "2")
    run_grpo(tiny_qwen2_vl, synthetic_dataset, tmp_path, *common)
    first = [json.loads(line) for line in (tmp_path / "completions_table" / "completions.jsonl").open()]
    (tmp_path / "completions_table" / "step_000007").mkdir()  # a step the second run never reaches
    run_grpo(tiny_qwen2_vl, synthetic_dataset, tmp_path, *common)
    second = [json.loads(line) for line in (tmp_path / "completions_table" / "completions.jsonl").open()]
    assert len(second) == len(first), "the second run appended to the first run's table"
    assert sorted(p.name for p in (tmp_path / "completions_table").glob("step_*")) == sorted(
        {f"step_{row['step']:06d}" for row in second}
    )
    # resuming keeps the rows of the steps before the checkpoint and rewrites the later ones
    run_grpo(
        tiny_qwen2_vl, synthetic_dataset, tmp_path, *common, "--resume_from_checkpoint", str(tmp_path / "checkpoint-1")
    )
    resumed = [json.loads(line) for line in (tmp_path / "completions_table" / "completions.jsonl").open()]
    steps = [row["step"] for row in resumed]
    assert steps == sorted(steps) and min(steps) == 0 and max(steps) == 1
    assert len([s for s in steps if s == 0]) == len([row for row in second if row["step"] == 0])


NAN = float("nan")


@pytest.mark.parametrize(
    "rewards_per_func, weights, expected",
    [
        # two groups of 2, one reward: the first group all equal, the second not (trl's frac_reward_zero_std: 0.5)
        ([[1.0], [1.0], [0.0], [1.0]], [1.0], 0.5),
        # weights apply before comparing: rewards that differ only in a zero-weighted reward teach nothing
        ([[1.0, 0.0], [1.0, 1.0]], [1.0, 0.0], 1.0),
        # a completion every reward skipped counts as 0: [0, 1] has signal here, while trl's nan-aware std of [1]
        # is 0, so its frac_reward_zero_std says 1.0 and the advantages are indeed all 0: the two metrics differ
        ([[NAN], [1.0]], [1.0], 0.0),
        # a skipped reward (None) among others counts as 0 in the weighted sum, as in the parent's nansum
        ([[NAN, 1.0], [0.0, 1.0]], [1.0, 1.0], 1.0),
    ],
)
def test_no_signal_fraction_is_per_group_of_weighted_sums(rewards_per_func, weights, expected):
    from r1_gui.training.trainer import no_signal_fraction

    fraction = no_signal_fraction(torch.tensor(rewards_per_func), torch.tensor(weights), num_generations=2)
    assert fraction == pytest.approx(expected)


def test_the_command_module_still_exports_its_api():
    """grpo_gui.py and sft.py are the commands: scripts import main, cli and the argument parser from them."""
    from r1_gui import grpo_gui, sft
    from r1_gui.training import grpo
    from r1_gui.training import sft as training_sft

    # the command modules import trl only when these are called (their command lines are checked first)
    assert callable(grpo_gui.main) and callable(grpo_gui.cli) and callable(sft.cli)
    argv = ["--config", str(RECIPE), "--max_steps", "3"]
    assert grpo_gui.parse_grpo_arguments(argv)[1].max_steps == grpo.parse_grpo_arguments(argv)[1].max_steps == 3
    sft_argv = ["--config", str(REPO / "local_scripts" / "tiny_cpu_sft.yaml"), "--max_steps", "3"]
    assert sft.parse_sft_arguments(sft_argv)[1].max_steps == training_sft.parse_sft_arguments(sft_argv)[1].max_steps
    # their log lines keep the command names they always had (a log filter on them still works)
    assert (grpo.logger.name, training_sft.logger.name) == ("r1_gui.grpo_gui", "r1_gui.sft")
