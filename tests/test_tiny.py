"""Tiny offline models: every architecture builds, saves, reloads under HF_HUB_OFFLINE=1 and generates."""

import json
import socket
import subprocess
import sys

import pytest
import torch
from PIL import Image
from transformers import AutoModelForImageTextToText

from r1_gui.processing import load_processor
from r1_gui.tiny import (
    AGUVIS_SPECIAL_TOKENS,
    ARCHS,
    QWEN_SPECIAL_TOKENS,
    SIZES,
    _interleaved_mrope_section,
    _mrope_section,
    build_image_processor,
)

ALL_ARCHS = ["qwen2_vl", "qwen2_5_vl", "qwen3_vl", "qwen3_vl_moe"]


def test_every_architecture_r1_gui_trains_has_a_tiny_builder():
    assert list(ARCHS) == ALL_ARCHS


@pytest.mark.parametrize("arch", ALL_ARCHS)
def test_config_has_the_architecture_and_tokenizer_ids(arch, request):
    folder = request.getfixturevalue(f"tiny_{arch}")
    config = json.loads((folder / "config.json").read_text())
    processor = load_processor(folder)
    tokenizer = processor.tokenizer
    assert config["model_type"] == arch
    assert config["image_token_id"] == tokenizer.convert_tokens_to_ids("<|image_pad|>")
    assert config["vision_start_token_id"] == tokenizer.convert_tokens_to_ids("<|vision_start|>")
    assert config["text_config"]["vocab_size"] == len(tokenizer)


def test_tokenizer_carries_every_qwen_and_aguvis_special_token(tiny_qwen2_vl):
    tokenizer = load_processor(tiny_qwen2_vl).tokenizer
    for token in QWEN_SPECIAL_TOKENS + AGUVIS_SPECIAL_TOKENS + ("<tool_call>", "</tool_call>"):
        ids = tokenizer.encode(token, add_special_tokens=False)
        assert len(ids) == 1, f"{token} is split into {ids}"
    # skip_special_tokens drops the channel tokens and glues the recipient to the role, as with Aguvis-7B.
    text = "Action: back<|im_end|>\n<|im_start|>assistant<|recipient|>os\nmobile.back()<|diff_marker|>"
    decoded = tokenizer.decode(tokenizer.encode(text), skip_special_tokens=True)
    assert decoded == "Action: back\nassistantos\nmobile.back()"


def test_digits_are_single_tokens_like_qwen(tiny_qwen2_vl):
    tokenizer = load_processor(tiny_qwen2_vl).tokenizer
    tokens = tokenizer.tokenize("x=0.963")
    assert tokens[-3:] == ["9", "6", "3"]


@pytest.mark.parametrize("arch", ALL_ARCHS)
def test_reloads_offline_and_generates_from_a_screenshot(arch, request):
    folder = request.getfixturevalue(f"tiny_{arch}")
    model = AutoModelForImageTextToText.from_pretrained(folder)
    processor = load_processor(folder, max_pixels=50176)
    assert model.config.model_type == arch
    messages = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "Open the Clock app"}]}]
    prompt = processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    inputs = processor(images=[Image.new("RGB", (540, 1170), "white")], text=[prompt], return_tensors="pt")
    with torch.no_grad():
        output = model.generate(**inputs, max_new_tokens=8, do_sample=False)
    assert output.shape[1] > inputs["input_ids"].shape[1]
    assert output.shape[1] <= inputs["input_ids"].shape[1] + 8


def test_same_seed_gives_same_weights(tmp_path):
    from r1_gui.tiny import build_tiny_model

    a = AutoModelForImageTextToText.from_pretrained(build_tiny_model(tmp_path / "a", seed=3))
    b = AutoModelForImageTextToText.from_pretrained(build_tiny_model(tmp_path / "b", seed=3))
    for (name, pa), (_, pb) in zip(a.named_parameters(), b.named_parameters(), strict=True):
        assert torch.equal(pa, pb), name


def test_small_size_has_a_few_million_parameters():
    from r1_gui.processing import CHAT_TEMPLATE
    from r1_gui.tiny import build_config, build_tokenizer

    tokenizer = build_tokenizer(SIZES["small"].vocab, CHAT_TEMPLATE)
    for arch in ("qwen2_5_vl", "qwen3_vl"):
        with torch.device("meta"):
            model = AutoModelForImageTextToText.from_config(build_config(arch, SIZES["small"], tokenizer))
        n_params = sum(p.numel() for p in model.parameters())
        assert 2e6 < n_params < 10e6, arch


@pytest.mark.parametrize("head_dim", [16, 64, 128])
def test_mrope_section_sums_to_half_the_head_dim(head_dim):
    assert sum(_mrope_section(head_dim)) == head_dim // 2
    assert _mrope_section(128) == [16, 24, 24]  # Qwen2-VL-7B's split
    # Qwen3-VL interleaves: height and width take every third frequency, so each fits in a third of them
    temporal, height, width = _interleaved_mrope_section(head_dim)
    assert temporal + height + width == head_dim // 2 and height == width and 3 * height <= head_dim // 2
    assert _interleaved_mrope_section(128) == [24, 20, 20]  # Qwen3-VL-8B's split


def test_qwen3_vl_keeps_its_own_traits_at_tiny_scale(tiny_qwen3_vl, tiny_qwen3_vl_moe):
    """Deepstack from every vision block, 16-pixel patches with mean/std 0.5, and (MoE) 2 of 4 experts."""
    config = json.loads((tiny_qwen3_vl / "config.json").read_text())
    assert config["vision_config"]["deepstack_visual_indexes"] == [0, 1]
    assert config["text_config"]["rope_parameters"]["mrope_interleaved"] is True
    processor = load_processor(tiny_qwen3_vl)
    assert processor.image_processor.patch_size == 16 and list(processor.image_processor.image_mean) == [0.5] * 3
    model = AutoModelForImageTextToText.from_pretrained(tiny_qwen3_vl_moe)
    assert (model.config.text_config.num_experts, model.config.text_config.num_experts_per_tok) == (4, 2)


def test_cli_builds_a_folder(tmp_path):
    """One line says what was built and where (it said "built" and "saved" for the same model), and the weights
    file has the mode of the files beside it (safetensors left it 0600: unreadable to other users)."""
    import os

    out = tmp_path / "cli"
    result = subprocess.run(
        [sys.executable, "-m", "r1_gui.tiny", "--arch", "qwen2_5_vl", "--out", str(out)],
        capture_output=True,
        text=True,
        preexec_fn=lambda: os.umask(0o022),
    )
    assert result.returncode == 0, result.stderr
    assert json.loads((out / "config.json").read_text())["model_type"] == "qwen2_5_vl"
    said = [line for line in (result.stdout + result.stderr).splitlines() if str(out) in line]
    assert len(said) == 1 and said[0].startswith("built a tiny qwen2_5_vl model ("), said
    assert said[0].endswith(f"M parameters) and saved it to {out}"), said
    modes = {path.name: path.stat().st_mode & 0o777 for path in out.iterdir()}
    assert modes["model.safetensors"] == modes["config.json"] == 0o644, modes


CLIP_MEAN, CLIP_STD = [0.48145466, 0.4578275, 0.40821073], [0.26862954, 0.26130258, 0.27577711]


@pytest.mark.parametrize(
    "arch, pixel_norm, mean, std",
    [
        ("qwen2_vl", None, CLIP_MEAN, CLIP_STD),  # Qwen2-VL's and Qwen2.5-VL's checkpoints: CLIP's statistics
        ("qwen2_5_vl", None, CLIP_MEAN, CLIP_STD),
        ("qwen3_vl", None, [0.5] * 3, [0.5] * 3),  # Qwen3-VL's: 0.5 and 0.5
        ("qwen2_vl", (0.95, 0.05), [0.95] * 3, [0.05] * 3),  # the web demo's: around a white page
        ("qwen3_vl", (0.95, 0.05), [0.95] * 3, [0.05] * 3),
        ("qwen3_vl", (0, 1), [0.0] * 3, [1.0] * 3),
    ],
)
def test_pixel_norm_replaces_the_architectures_mean_and_std(arch, pixel_norm, mean, std):
    processor = build_image_processor(arch, 3136, 50176, pixel_norm)
    assert processor.image_mean == pytest.approx(mean) and processor.image_std == pytest.approx(std)
    white, gray = Image.new("RGB", (64, 64), "white"), Image.new("RGB", (64, 64), (239, 239, 239))  # a button's gray
    pixels = [processor(images=[image], return_tensors="pt")["pixel_values"] for image in (white, gray)]
    gap = pixels[0] - pixels[1]
    assert gap.abs().mean().item() == pytest.approx((1 - 239 / 255) / std[0], rel=0.02)


def test_pixel_norm_survives_save_and_load(tmp_path):
    from r1_gui.tiny import build_tiny_model

    folder = build_tiny_model(tmp_path / "m", "qwen3_vl", "tiny", pixel_norm=(0.95, 0.05))
    processor = load_processor(folder, min_pixels=3136, max_pixels=50176)
    assert processor.image_processor.image_mean == pytest.approx([0.95] * 3)
    assert processor.image_processor.image_std == pytest.approx([0.05] * 3)


def test_cli_rejects_an_unknown_architecture(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "r1_gui.tiny", "--arch", "llama", "--out", str(tmp_path)], capture_output=True, text=True
    )
    assert result.returncode == 2
    assert "qwen2_vl" in result.stderr


def test_the_network_guard_blocks_outside_connections():
    with pytest.raises(OSError, match="network access blocked"):
        socket.create_connection(("huggingface.co", 443), timeout=1)
