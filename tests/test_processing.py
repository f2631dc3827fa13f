"""The one processor loader: tiny and upstream-layout folders, min/max pixels, image-token counts, chat template."""

import json
import math
import shutil
from importlib import resources

import pytest
from PIL import Image

from r1_gui.processing import CHAT_TEMPLATE, GUIVLProcessor, load_processor, pixel_bounds


def smart_resize_by_hand(height, width, factor=28, min_pixels=3136, max_pixels=12845056):
    """NOTES.md section 4, written out independently of the code under test."""
    h, w = max(factor, round(height / factor) * factor), max(factor, round(width / factor) * factor)
    if h * w > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        h, w = math.floor(height / beta / factor) * factor, math.floor(width / beta / factor) * factor
    elif h * w < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h, w = math.ceil(height * beta / factor) * factor, math.ceil(width * beta / factor) * factor
    return h, w


def image_token_count(processor, image):
    messages = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "hi"}]}]
    prompt = processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    inputs = processor(images=[image], text=[prompt], return_tensors="pt")
    return int((inputs["input_ids"] == processor.image_token_id).sum()), inputs["image_grid_thw"][0].tolist()


@pytest.mark.parametrize(
    "size, max_pixels, expected_hw",
    [
        ((1080, 2400), 501760, (1036, 448)),  # the R1-V-GUI setting: NOTES gives 448x1036
        ((1080, 2400), 12845056, (2408, 1092)),  # Qwen's default max: 1092x2408
        ((1080, 2400), 50176, None),  # a small budget, checked against the formula only
        ((1440, 3120), 1003520, None),  # a taller, larger phone
    ],
)
def test_screenshot_gives_the_smart_resize_number_of_image_tokens(tiny_model, size, max_pixels, expected_hw):
    processor = load_processor(tiny_model, max_pixels=max_pixels)
    width, height = size
    h, w = smart_resize_by_hand(height, width, max_pixels=max_pixels)
    if expected_hw is not None:
        assert (h, w) == expected_hw
    tokens, grid = image_token_count(processor, Image.new("RGB", size, "gray"))
    assert grid == [1, h // 14, w // 14]
    assert tokens == (h // 28) * (w // 28)


def test_min_pixels_enlarges_a_tiny_image(tiny_qwen2_vl):
    processor = load_processor(tiny_qwen2_vl, min_pixels=200704, max_pixels=401408)
    h, w = smart_resize_by_hand(100, 60, min_pixels=200704, max_pixels=401408)
    tokens, _ = image_token_count(processor, Image.new("RGB", (60, 100)))
    assert tokens == (h // 28) * (w // 28)
    assert pixel_bounds(processor) == (200704, 401408)


def test_min_above_max_is_refused(tiny_qwen2_vl):
    with pytest.raises(ValueError, match="min_pixels"):
        load_processor(tiny_qwen2_vl, min_pixels=10**6, max_pixels=10**5)


def test_a_folder_that_is_not_qwen_vl_is_refused(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "llama"}))
    with pytest.raises(ValueError, match="not a Qwen-VL model folder.*llama"):
        load_processor(tmp_path)


def make_upstream_layout(tiny_folder, out, processor_class, model_type):
    """A folder laid out like Qwen/Qwen2-VL-7B-Instruct or Qwen2.5-VL-3B-Instruct on the Hub (pre-5.x files)."""
    out.mkdir()
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(tiny_folder / name, out / name)
    (out / "preprocessor_config.json").write_text(
        json.dumps(
            {
                "min_pixels": 3136,
                "max_pixels": 12845056,
                "patch_size": 14,
                "temporal_patch_size": 2,
                "merge_size": 2,
                "image_mean": [0.48145466, 0.4578275, 0.40821073],
                "image_std": [0.26862954, 0.26130258, 0.27577711],
                "image_processor_type": "Qwen2VLImageProcessor",
                "processor_class": processor_class,
            }
        )
    )
    stock = resources.files("trl").joinpath("chat_templates/qwen2_5_vl.jinja").read_text()
    (out / "chat_template.json").write_text(json.dumps({"chat_template": stock}))
    (out / "config.json").write_text(json.dumps({"model_type": model_type, "architectures": ["X"]}))
    return out


@pytest.mark.parametrize(
    "processor_class, model_type", [("Qwen2VLProcessor", "qwen2_vl"), ("Qwen2_5_VLProcessor", "qwen2_5_vl")]
)
def test_loads_an_upstream_checkpoint_layout(tiny_qwen2_vl, tmp_path, processor_class, model_type):
    folder = make_upstream_layout(tiny_qwen2_vl, tmp_path / "upstream", processor_class, model_type)
    processor = load_processor(folder, max_pixels=501760, padding_side="left")
    assert pixel_bounds(processor) == (3136, 501760)
    assert processor.tokenizer.padding_side == "left"
    assert "<|im_start|>" in processor.chat_template  # the checkpoint's own template is kept
    tokens, _ = image_token_count(processor, Image.new("RGB", (1080, 2400)))
    assert tokens == 592  # 448x1036 / 28^2


def test_saved_folder_names_the_stock_processor_and_reloads(tiny_qwen2_5_vl, tmp_path):
    processor = load_processor(tiny_qwen2_5_vl, max_pixels=100352)
    processor.save_pretrained(tmp_path)
    saved = json.loads((tmp_path / "processor_config.json").read_text())
    assert saved["processor_class"] == "Qwen2_5_VLProcessor"
    shutil.copy(tiny_qwen2_5_vl / "config.json", tmp_path / "config.json")  # save_model writes it in training
    reloaded = load_processor(tmp_path)
    assert isinstance(reloaded, GUIVLProcessor)
    assert pixel_bounds(reloaded) == (3136, 100352)


def test_video_inputs_are_refused_with_a_reason(tiny_qwen2_vl):
    processor = load_processor(tiny_qwen2_vl)
    with pytest.raises(ValueError, match="images only"):
        processor(text=["hi"], videos=[[Image.new("RGB", (28, 28))]])


def test_our_template_renders_plain_chats_exactly_like_qwens(tiny_qwen2_vl):
    """Without Aguvis channels, r1_gui's template is the stock Qwen2.5-VL one, token for token."""
    processor = load_processor(tiny_qwen2_vl)
    stock = resources.files("trl").joinpath("chat_templates/qwen2_5_vl.jinja").read_text()
    chats = [
        [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "Open Clock"}]}],
        [
            {"role": "system", "content": "You are a GUI agent."},
            {"role": "user", "content": [{"type": "text", "text": "Step 1"}, {"type": "image"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "pyautogui.click(x=0.5, y=0.5)"}]},
            {"role": "user", "content": "plain string"},
        ],
    ]
    for chat in chats:
        for generation_prompt in (False, True):
            ours = processor.apply_chat_template(chat, tokenize=False, add_generation_prompt=generation_prompt)
            theirs = processor.apply_chat_template(
                chat, tokenize=False, add_generation_prompt=generation_prompt, chat_template=stock
            )
            assert ours == theirs


def test_our_template_renders_aguvis_channels_as_aguvis_does(tiny_qwen2_vl):
    processor = load_processor(tiny_qwen2_vl)
    assert processor.chat_template == CHAT_TEMPLATE
    chat = [
        {"role": "system", "content": "SYS"},
        {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "Go home"}]},
        {"role": "assistant", "recipient": "all", "end_turn": False, "content": "Action: go home"},
        {"role": "assistant", "recipient": "os", "end_turn": True, "content": "mobile.home()"},
    ]
    assert processor.apply_chat_template(chat, tokenize=False) == (
        "<|im_start|>system\nSYS<|im_end|>\n"
        "<|im_start|>user\n<|vision_start|><|image_pad|><|vision_end|>Go home<|im_end|>\n"
        "<|im_start|>assistant<|recipient|>all\nAction: go home<|im_end|>\n"
        "<|im_start|>assistant<|recipient|>os\nmobile.home()<|diff_marker|>\n"
    )
    opened = processor.apply_chat_template(
        chat[:2], tokenize=False, add_generation_prompt=True, generation_recipient="all"
    )
    assert opened.endswith("<|im_end|>\n<|im_start|>assistant<|recipient|>all\n")
