"""The vision tower's windows batched by length: the per-window attention's output and gradient, fewer sdpa calls."""

from __future__ import annotations

from unittest import mock

import pytest
import torch
import torch.nn.functional as F
from helpers.gradients import assert_same_gradient
from helpers.screens import batch_of, screen

from r1_gui.evaluation.config import EvalConfig
from r1_gui.seam.models import image_encoder
from r1_gui.training.args import GUIModelConfig
from r1_gui.vision_attention import BATCHED_WINDOWS, apply_vision_attention, use_batched_window_attention

# three screenshots, two of one size: full windows, clipped edge windows, and images of equal and unequal length
SIZES = [(56 * 5, 112 * 3), (56 * 3, 56 * 7), (56 * 5, 112 * 3)]


@pytest.fixture(params=["qwen2_vl", "qwen2_5_vl", "qwen3_vl"])  # one image per call, windows, one image per call
def tiny_vision(request):
    from transformers import AutoModelForImageTextToText

    from r1_gui.processing import CHAT_TEMPLATE, load_processor

    path = request.getfixturevalue("tiny_" + request.param)
    model = AutoModelForImageTextToText.from_pretrained(path, attn_implementation="sdpa")
    processor = load_processor(path, max_pixels=50176, chat_template=CHAT_TEMPLATE)
    inputs = batch_of(processor, [screen(i, size) for i, size in enumerate(SIZES)])
    return model, inputs


def encode(model, inputs) -> tuple[torch.Tensor, list[list[int]], int]:
    """The vision tower's output, the sequence lengths each attention layer got, and the sdpa calls it made."""
    encoder = image_encoder(model)
    lengths: list[list[int]] = []
    hooks = [
        block.attn.register_forward_pre_hook(
            lambda module, args, kwargs: lengths.append(kwargs["cu_seqlens"].diff().tolist()), with_kwargs=True
        )
        for block in encoder.visual.blocks
    ]
    real, calls = F.scaled_dot_product_attention, []

    def counted(*args, **kwargs):
        calls.append(args[0].shape[0])
        return real(*args, **kwargs)

    with mock.patch.object(F, "scaled_dot_product_attention", counted):
        output = encoder.get_image_features(inputs["pixel_values"], inputs["image_grid_thw"])
    for hook in hooks:
        hook.remove()
    return torch.cat(output.pooler_output), lengths, len(calls)


def test_batched_windows_give_the_per_window_output_and_gradient_with_one_call_per_length(tiny_vision):
    model, inputs = tiny_vision
    model.train()
    expected, lengths, calls = encode(model, inputs)
    assert calls == sum(len(layer) for layer in lengths)  # transformers: one call per window (or image) and layer
    assert any(len(set(layer)) < len(layer) for layer in lengths)  # some lengths repeat: something to batch
    expected.square().sum().backward()
    expected_grads = {name: p.grad.clone() for name, p in model.named_parameters() if p.grad is not None}

    assert use_batched_window_attention(model)
    assert model.config.text_config._attn_implementation == "sdpa"  # the language model is left alone
    model.zero_grad()
    got, batched_lengths, batched_calls = encode(model, inputs)
    assert batched_lengths == lengths
    assert batched_calls == sum(len(set(layer)) for layer in lengths)
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-6)
    got.square().sum().backward()
    for name, grad in expected_grads.items():
        assert_same_gradient(model.get_parameter(name).grad, grad, name)


def test_batched_windows_give_the_same_logits(tiny_vision):
    model, inputs = tiny_vision
    model.eval()
    with torch.no_grad():
        expected = model(**inputs).logits
        use_batched_window_attention(model)
        got = model(**inputs).logits
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-6)


def test_only_sdpa_vision_towers_are_changed(tiny_qwen2_vl):
    from transformers import AutoModelForImageTextToText

    eager = AutoModelForImageTextToText.from_pretrained(tiny_qwen2_vl, attn_implementation="eager")
    assert not use_batched_window_attention(eager)
    assert eager.config.vision_config._attn_implementation == "eager"
    assert not use_batched_window_attention(torch.nn.Linear(2, 2))


# ---- the --vision_attention flag ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "choice, device_type, batched",
    [
        ("auto", "cuda", True),  # launch-bound per-window calls: batch them
        ("auto", "cpu", False),  # no faster on CPU: transformers' own path
        ("batched_windows", "cpu", True),
        ("batched_windows", "cuda", True),
        ("model", "cuda", False),
        ("model", "cpu", False),
    ],
)
def test_apply_vision_attention(tiny_qwen2_5_vl, choice, device_type, batched):
    from transformers import AutoModelForImageTextToText

    model = AutoModelForImageTextToText.from_pretrained(tiny_qwen2_5_vl, attn_implementation="sdpa")
    assert apply_vision_attention(model, choice, device_type) is batched
    assert model.config.vision_config._attn_implementation == (BATCHED_WINDOWS if batched else "sdpa")
    assert model.config.text_config._attn_implementation == "sdpa"
    if batched:  # a second call (a resumed or wrapped model) finds it applied
        assert apply_vision_attention(model, choice, device_type)


@pytest.mark.parametrize("choice", ["fast", "", "Batched_Windows", None])
def test_unknown_vision_attention_names_the_flag(tiny_qwen2_5_vl, choice):
    with pytest.raises(ValueError, match=r"--vision_attention must be one of auto, batched_windows, model"):
        apply_vision_attention(torch.nn.Linear(2, 2), choice, "cuda")
    with pytest.raises(ValueError, match="--vision_attention"):
        GUIModelConfig(model_name_or_path=str(tiny_qwen2_5_vl), vision_attention=choice)


@pytest.mark.parametrize(
    "attn_implementation, refused",
    [
        (None, False),  # transformers' default: sdpa
        ("sdpa", False),
        ("eager", True),  # no sdpa calls to batch
        ("flash_attention_2", True),  # already one varlen call for all windows
    ],
)
def test_batched_windows_is_refused_before_loading_where_it_cannot_apply(tiny_qwen3_vl, attn_implementation, refused):
    settings = {"model_name_or_path": str(tiny_qwen3_vl), "attn_implementation": attn_implementation}
    if not refused:
        GUIModelConfig(**settings, vision_attention="batched_windows")
        return
    with pytest.raises(ValueError, match=f"batched_windows does not apply: .*{attn_implementation}.*use auto or model"):
        GUIModelConfig(**settings, vision_attention="batched_windows")
    GUIModelConfig(**settings, vision_attention="auto")  # auto leaves such a tower alone


def test_batched_windows_asked_for_on_a_tower_it_cannot_batch_is_one_user_error(tiny_qwen3_vl):
    from transformers import AutoModelForImageTextToText

    from r1_gui.cli_errors import UserError

    eager = AutoModelForImageTextToText.from_pretrained(tiny_qwen3_vl, attn_implementation="eager")
    assert not apply_vision_attention(eager, "auto", "cuda")  # auto: left as it is
    with pytest.raises(UserError, match="batched_windows does not apply: the vision tower runs eager attention"):
        apply_vision_attention(eager, "batched_windows", "cpu")
    with pytest.raises(UserError, match="batched_windows does not apply: no Qwen-VL vision tower"):
        apply_vision_attention(torch.nn.Linear(2, 2), "batched_windows", "cuda")


def test_a_model_saved_with_batched_windows_loads_with_sdpa(tiny_qwen2_5_vl, tmp_path):
    """The attention choice is the run's, not the checkpoint's: the saved folder loads anywhere as transformers' own."""
    from transformers import AutoModelForImageTextToText

    model = AutoModelForImageTextToText.from_pretrained(tiny_qwen2_5_vl, attn_implementation="sdpa")
    assert apply_vision_attention(model, "batched_windows", "cpu")
    model.save_pretrained(tmp_path)
    assert BATCHED_WINDOWS not in (tmp_path / "config.json").read_text()
    reloaded = AutoModelForImageTextToText.from_pretrained(tmp_path, attn_implementation="sdpa")
    assert reloaded.config.vision_config._attn_implementation == "sdpa"


def test_the_evaluation_generator_batches_the_windows_when_asked(tiny_qwen2_5_vl):
    from r1_gui.generation import HFGenerator

    for choice, expected in (("batched_windows", BATCHED_WINDOWS), ("auto", "sdpa")):  # auto: sdpa on the CPU
        generator = HFGenerator(tiny_qwen2_5_vl, EvalConfig(device="cpu", vision_attention=choice, max_new_tokens=4))
        assert generator.model.config.vision_config._attn_implementation == expected
