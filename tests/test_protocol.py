"""The protocol card (r1_gui.evaluation.run.protocol, presets): image settings from the checkpoint's saved processor
unless flags say otherwise, the --protocol presets, the prompt hashes, and the card a predictions run writes."""

import json
import re

import pytest
from PIL import Image

from r1_gui.cli_errors import UserError
from r1_gui.evaluation.config import EvalConfig
from r1_gui.evaluation.presets import PRESETS, apply_preset, flags_given, preset_overrides
from r1_gui.evaluation.run.protocol import (
    episode_prompt_sha256,
    r1_gui_version,
    resolve_image_settings,
    step_prompt_sha256,
)
from r1_gui.evaluation.steps.cli import main


def saved(folder, name="preprocessor_config.json", **image):
    """A model folder whose saved processor config holds ``image`` (nested as transformers 5 saves
    processor_config.json)."""
    folder.mkdir(exist_ok=True)
    content = {"image_processor": image} if name == "processor_config.json" else image
    (folder / name).write_text(json.dumps(content))
    return folder


SIZE_50176 = {"size": {"shortest_edge": 3136, "longest_edge": 50176}, "patch_size": 14, "merge_size": 2}

IMAGE_CASES = [
    # (id, saved configs, flags, expected (min, max, min from, max from, factor), warned)
    # nothing given: the checkpoint's, as training saved them
    ("checkpoint", [("preprocessor_config.json", SIZE_50176)], {}, (3136, 50176, "checkpoint", "checkpoint", 28), 0),
    # a flag that differs from the checkpoint's: kept, and warned about
    ("flag-differs", [("preprocessor_config.json", SIZE_50176)], {"max_pixels": 501760},
     (3136, 501760, "checkpoint", "flags", 28), 1),
    # a flag equal to the checkpoint's: no warning
    ("flag-equal", [("preprocessor_config.json", SIZE_50176)], {"max_pixels": 50176},
     (3136, 50176, "checkpoint", "flags", 28), 0),
    # no processor config in the folder: r1_gui's defaults
    ("nothing-saved", [], {}, (3136, 501760, "defaults", "defaults", 28), 0),
    # processor_config.json's nested image_processor is read first, as transformers does
    ("nested-first", [("preprocessor_config.json", SIZE_50176),
                      ("processor_config.json", {"size": {"shortest_edge": 1024, "longest_edge": 12544}})], {},
     (1024, 12544, "checkpoint", "checkpoint", 28), 0),
    # a min_pixels/max_pixels entry wins over size, as the Qwen-VL image processor reads it
    ("explicit-keys", [("preprocessor_config.json", {**SIZE_50176, "max_pixels": 200704})], {},
     (3136, 200704, "checkpoint", "checkpoint", 28), 0),
    # a --protocol preset's bound is said to come from it (r1_gui's AITW setting: 501760, not the checkpoint's)
    ("preset", [("preprocessor_config.json", SIZE_50176)], {"protocol": "aitw", "min_pixels": 3136, "max_pixels": 501760},
     (3136, 501760, "--protocol aitw", "--protocol aitw", 28), 1),
    # a Qwen3-VL-style processor (patch 16, merge 2): factor 32
    ("factor-32", [("preprocessor_config.json", {**SIZE_50176, "patch_size": 16})], {},
     (3136, 50176, "checkpoint", "checkpoint", 32), 0),
]  # fmt: skip


@pytest.mark.parametrize(
    "configs, flags, expected, warned", [c[1:] for c in IMAGE_CASES], ids=[c[0] for c in IMAGE_CASES]
)
def test_image_settings_come_from_the_checkpoint_unless_flags_say_otherwise(tmp_path, configs, flags, expected, warned):
    folder = tmp_path / "model"
    folder.mkdir()
    for name, image in configs:
        saved(folder, name, **image)
    config, image, warnings = resolve_image_settings(EvalConfig(**flags), folder)
    assert (config.min_pixels, config.max_pixels) == expected[:2]
    assert (image["min_pixels"], image["max_pixels"], image["min_pixels_from"], image["max_pixels_from"]) == expected[
        :4
    ]
    assert image["factor"] == expected[4]
    assert len(warnings) == warned  # logged by the caller once its checks passed (a refused run says one line)
    if warned:
        assert warnings[0].startswith("--max_pixels 501760 differs from the checkpoint's saved processor (50176, in ")


def test_bounds_that_cross_are_refused_naming_both(tmp_path):
    folder = saved(tmp_path / "model", **SIZE_50176)
    message = (
        r"--min_pixels 60000 and --max_pixels 50176 bound .* \(min_pixels from flags, max_pixels from checkpoint\)"
    )
    with pytest.raises(UserError, match=message):  # generation.settings.checked_pixel_bounds: one line in the CLIs
        resolve_image_settings(EvalConfig(min_pixels=60000), folder)


PRESET_CASES = [
    # (preset, flags given, settings expected after it)
    # GUI-R1's scripts: think_answer-style answers in pixels, the checkpoint's bounds, greedy, 1024 tokens
    ("guir1", set(), {"prompt_style": "think_answer", "coordinates": "pixels", "max_pixels": None, "max_new_tokens": 1024}),
    # a flag beside the preset wins
    ("guir1", {"max_new_tokens"}, {"max_new_tokens": 64, "temperature": 0.0}),
    # R1-V-GUI-Agent's script: aguvis, normalized, bf16 weights
    ("r1v", set(), {"prompt_style": "aguvis", "coordinates": "normalized", "dtype": "bfloat16", "max_new_tokens": 1024}),
    # r1_gui's own AITW setting
    ("aitw", set(), {"min_pixels": 3136, "max_pixels": 501760, "max_new_tokens": 256}),
]  # fmt: skip


@pytest.mark.parametrize("name, given, expected", PRESET_CASES)
def test_a_preset_fills_what_no_flag_set(name, given, expected):
    config = apply_preset(EvalConfig(max_new_tokens=64), name, given)
    assert config.protocol == name
    assert {key: getattr(config, key) for key in expected} == expected


def test_the_card_lists_what_a_run_changed_from_its_preset():
    config = apply_preset(EvalConfig(max_new_tokens=64, max_pixels=50176), "guir1", {"max_new_tokens", "max_pixels"})
    assert preset_overrides(config) == {
        "max_pixels": {"preset": None, "run": 50176},
        "max_new_tokens": {"preset": 1024, "run": 64},
    }
    assert preset_overrides(EvalConfig()) == {}  # no preset, nothing to override


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["--max_pixels", "5", "--overwrite"], {"max_pixels", "overwrite"}),  # flag and value, a switch
        (["--max_pixels=5", "-h"], {"max_pixels"}),  # the = form; short options name no setting
        (["--", "x"], set()),  # a bare "--" is no flag
    ],
)
def test_flags_given(argv, expected):
    assert flags_given(argv) == expected


def test_every_preset_says_where_each_value_comes_from():
    for name, preset in PRESETS.items():
        assert set(preset.sources) == set(preset.settings), name
        EvalConfig(**preset.settings)  # every value is a valid setting


def test_the_prompt_hash_changes_with_the_prompt_only():
    base = step_prompt_sha256("aguvis", "normalized", None)
    assert re.fullmatch(r"[0-9a-f]{64}", base) and step_prompt_sha256("aguvis", "normalized", None) == base
    others = [
        step_prompt_sha256("think_answer", "normalized", None),  # another style
        step_prompt_sha256("think_answer", "pixels", None),  # another coordinate sentence in the system prompt
        step_prompt_sha256("aguvis", "normalized", "Operate the phone."),  # --system_prompt
    ]
    assert len({base, *others}) == 4
    assert episode_prompt_sha256(2, None) != episode_prompt_sha256(1, None)  # another screenshot window


def test_the_version_is_the_installed_one_and_the_commit_this_checkout():
    version = r1_gui_version()
    assert version["version"] == "0.1.0"
    assert re.fullmatch(r"[0-9a-f]{40}", version["commit"]) and isinstance(version["dirty"], bool)


@pytest.fixture
def two_rows(tmp_path):
    screenshot = tmp_path / "screen.png"
    Image.new("RGB", (200, 400), "white").save(screenshot)
    problem = "Please generate ...\n\nInstruction: Open it\n\nPrevious actions:\nStep 1: tap\nStep 2: type"
    rows = [{"id": f"r{i}", "image": str(screenshot), "problem": problem, "instruction": "Open it",
             "solution": "<answer>pyautogui.click(x=0.5, y=0.5)</answer>"} for i in range(2)]  # fmt: skip
    folder = tmp_path / "data"
    folder.mkdir()
    import datasets

    datasets.Dataset.from_list(rows).to_parquet(str(folder / "test.parquet"))
    predictions = tmp_path / "p.jsonl"
    answer = (
        "<think>it</think><answer>[{'action': 'click', 'point': [70, 154], 'input_text': 'no input text'}]</answer>"
    )
    predictions.write_text("".join(json.dumps({"id": row["id"], "output": answer}) + "\n" for row in rows))
    return folder, predictions


def test_a_predictions_run_under_a_preset_writes_the_card(two_rows, tmp_path, capsys):
    dataset, predictions = two_rows
    out = tmp_path / "out"
    metrics = main(["--dataset", str(dataset), "--predictions", str(predictions), "--output_dir", str(out),
                    "--protocol", "guir1", "--max_pixels", "50176", "--gallery_size", "0"])  # fmt: skip
    card = metrics["protocol"]
    assert (card["evaluation"], card["preset"], card["coordinates"]) == ("predictions", "guir1", "pixels")
    assert card["preset_overrides"] == {"max_pixels": {"preset": None, "run": 50176}}
    assert card["preset_gaps"] == list(PRESETS["guir1"].gaps)
    assert card["prompt"] == {"style": "think_answer", "system_prompt": "the style's", "sha256": None}  # made elsewhere
    assert (card["image"]["max_pixels"], card["image"]["max_pixels_from"]) == (50176, "flags")
    assert card["history"]["max_steps"] == 2 and card["split"]["rows"] == 2 and card["decoding"] is None
    assert "model" not in card  # a predictions file has no model to fingerprint
    # (70, 154) is the centre of the 200x400 screenshot resized within 50176 pixels (140x308): right on both rows
    assert metrics["step_success"] == 1.0 and metrics["step_success_ci95"] == pytest.approx([0.342380, 1.0], abs=1e-6)
    assert json.loads((out / "metrics.json").read_text())["protocol"] == card
    report = (out / "report.md").read_text()
    assert "## Protocol" in report.split("## Settings")[0] and "- preset: guir1" in report
    printed = capsys.readouterr().out
    assert printed.startswith("protocol: predictions (preset guir1); prompt think_answer; coordinates pixels; pixels")
