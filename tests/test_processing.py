"""The one processor loader: tiny and upstream-layout folders, min/max pixels, image-token counts, chat template."""

import json
import math
import shutil
from importlib import resources

import pytest
from PIL import Image
from transformers.image_processing_base import ImageProcessingMixin
from transformers.models.auto.video_processing_auto import video_processor_class_from_name
from transformers.processing_utils import ProcessorMixin
from transformers.video_processing_utils import BaseVideoProcessor

from r1_gui.processing import (
    CHAT_TEMPLATE,
    GUIVLProcessor,
    load_processor,
    pixel_bounds,
    resize_factor,
    stock_processor_configs_resolve,
)


def smart_resize_by_hand(height, width, factor=28, min_pixels=3136, max_pixels=12845056):
    """docs/notes.md, "Coordinates", written out independently of the code under test."""
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
        # the R1-V-GUI setting: docs/notes.md gives 448x1036 (14-pixel patches); Qwen3-VL's 32-pixel tokens give 448x1024
        ((1080, 2400), 501760, {28: (1036, 448), 32: (1024, 448)}),
        ((1080, 2400), 12845056, {28: (2408, 1092), 32: (2400, 1088)}),  # Qwen's default max
        ((1080, 2400), 50176, None),  # a small budget, checked against the formula only
        ((1440, 3120), 1003520, None),  # a taller, larger phone
    ],
)
def test_screenshot_gives_the_smart_resize_number_of_image_tokens(tiny_model, size, max_pixels, expected_hw):
    processor = load_processor(tiny_model, max_pixels=max_pixels)
    patch = processor.image_processor.patch_size
    model_type = json.loads((tiny_model / "config.json").read_text())["model_type"]
    assert resize_factor(processor) == 2 * patch == {"qwen2_vl": 28, "qwen2_5_vl": 28, "qwen3_vl": 32}[model_type]
    width, height = size
    h, w = smart_resize_by_hand(height, width, factor=2 * patch, max_pixels=max_pixels)
    if expected_hw is not None:
        assert (h, w) == expected_hw[2 * patch]
    tokens, grid = image_token_count(processor, Image.new("RGB", size, "gray"))
    assert grid == [1, h // patch, w // patch]
    assert tokens == (h // (2 * patch)) * (w // (2 * patch))


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


QWEN_IMAGE_SETTINGS = {
    "patch_size": 14,
    "temporal_patch_size": 2,
    "merge_size": 2,
    "image_mean": [0.48145466, 0.4578275, 0.40821073],
    "image_std": [0.26862954, 0.26130258, 0.27577711],
}
# Qwen/Qwen3-VL-8B-Instruct's preprocessor_config.json: 16-pixel patches, mean and std 0.5
QWEN3_IMAGE_SETTINGS = {**QWEN_IMAGE_SETTINGS, "patch_size": 16, "image_mean": [0.5] * 3, "image_std": [0.5] * 3}
# per architecture: (image settings, image_processor_type, video_processor_type, stock chat template in trl's wheel)
UPSTREAM = {
    "qwen2_vl": (QWEN_IMAGE_SETTINGS, "Qwen2VLImageProcessor", "Qwen2VLVideoProcessor", "qwen2_5_vl"),
    "qwen2_5_vl": (QWEN_IMAGE_SETTINGS, "Qwen2VLImageProcessor", "Qwen2VLVideoProcessor", "qwen2_5_vl"),
    "qwen3_vl": (QWEN3_IMAGE_SETTINGS, "Qwen2VLImageProcessorFast", "Qwen3VLVideoProcessor", "qwen3_vl"),
}


def make_upstream_layout(
    tiny_folder, out, processor_class, model_type, max_pixels=12845056, video_config=False, template_in="chat_template"
):
    """A folder laid out like Qwen/Qwen2-VL-7B-Instruct, Qwen2.5-VL-3B-Instruct, Qwen3-VL-8B-Instruct or
    xlangai/Aguvis-7B-720P on the Hub (a flat preprocessor_config.json, no processor_config.json). video_config adds
    the video_preprocessor_config.json that later Hub revisions (and every Qwen3-VL one) carry; template_in says where
    the chat template lives (chat_template.json, or tokenizer_config.json as older fine-tunes keep it)."""
    settings, image_type, video_type, template = UPSTREAM[model_type]
    out.mkdir()
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(tiny_folder / name, out / name)
    bounds = {"min_pixels": 3136, "max_pixels": max_pixels}
    (out / "preprocessor_config.json").write_text(
        json.dumps({**bounds, **settings, "image_processor_type": image_type, "processor_class": processor_class})
    )
    if video_config:
        video = {**bounds, **settings, "video_processor_type": video_type}
        (out / "video_preprocessor_config.json").write_text(json.dumps({**video, "processor_class": processor_class}))
    stock = resources.files("trl").joinpath(f"chat_templates/{template}.jinja").read_text()
    if template_in == "chat_template":
        (out / "chat_template.json").write_text(json.dumps({"chat_template": stock}))
    else:
        tokenizer_config = json.loads((out / "tokenizer_config.json").read_text())
        (out / "tokenizer_config.json").write_text(json.dumps({**tokenizer_config, "chat_template": stock}))
    (out / "config.json").write_text(json.dumps({"model_type": model_type, "architectures": ["X"]}))
    return out


def make_stock_saved_layout(tiny_folder, out, processor_class, model_type):
    """A folder as the stock processor saves it under transformers 5 (a checkpoint written on a GPU machine):
    processor_config.json with nested image and video processor settings, chat_template.jinja."""
    out.mkdir()
    for name in ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja", "config.json"):
        shutil.copy(tiny_folder / name, out / name)
    size = {"shortest_edge": 3136, "longest_edge": 501760}
    nested = {
        "image_processor": {**QWEN_IMAGE_SETTINGS, "size": size, "image_processor_type": "Qwen2VLImageProcessor"},
        "video_processor": {**QWEN_IMAGE_SETTINGS, "size": size, "video_processor_type": "Qwen2VLVideoProcessor"},
        "processor_class": processor_class,
    }
    (out / "processor_config.json").write_text(json.dumps(nested))
    config = json.loads((out / "config.json").read_text())
    (out / "config.json").write_text(json.dumps({**config, "model_type": model_type}))
    return out


def make_legacy_r1_gui_layout(tiny_folder, out):
    """A folder r1_gui saved before it wrote preprocessor_config.json: processor_config.json holds the image
    processor only, so the stock processor finds no video processor config (issue 20)."""
    shutil.copytree(tiny_folder, out)
    (out / "preprocessor_config.json").unlink()
    return out


def stock_video_processor_class(folder) -> str | None:
    """The video processor class AutoVideoProcessor would build for the folder: the resolved config's
    video_processor_type, else the one inferred from its image_processor_type (transformers' fallback for
    pre-video folders), provided transformers knows that class."""
    config, _ = BaseVideoProcessor.get_video_processor_dict(str(folder))
    name = config.get("video_processor_type")
    if name is None and config.get("image_processor_type"):
        name = config["image_processor_type"].replace("ImageProcessor", "VideoProcessor")
    return name if name and video_processor_class_from_name(name) is not None else None


def stock_processor_class(folder) -> str | None:
    """The processor class AutoProcessor reads: processor_config.json's, else preprocessor_config.json's."""
    if (folder / "processor_config.json").is_file():
        name = ProcessorMixin.get_processor_dict(str(folder))[0].get("processor_class")
        if name:
            return name
    return ImageProcessingMixin.get_image_processor_dict(str(folder))[0].get("processor_class")


def saved_checkpoint(tiny_folder, out):
    """What trl's trainers write as a checkpoint's processor: load_processor's processor, save_pretrained."""
    processor = load_processor(tiny_folder, max_pixels=501760)
    processor.save_pretrained(out)
    shutil.copy(tiny_folder / "config.json", out / "config.json")  # the trainer's save_model writes it
    return out


# (layout, architecture, expected stock processor class, max_pixels the folder resizes to)
FOLDER_KINDS = [
    # r1_gui.tiny's own folder, as built
    ("tiny", "qwen2_vl", "Qwen2VLProcessor", 200704),
    ("tiny", "qwen2_5_vl", "Qwen2_5_VLProcessor", 200704),
    # a processor saved by a trainer (SFT/GRPO checkpoints, final outputs, the demo's stages)
    ("checkpoint", "qwen2_vl", "Qwen2VLProcessor", 501760),
    ("checkpoint", "qwen2_5_vl", "Qwen2_5_VLProcessor", 501760),
    # Qwen/Qwen2-VL-7B-Instruct, without and with a video processor config
    ("upstream", "qwen2_vl", "Qwen2VLProcessor", 12845056),
    ("upstream+video", "qwen2_vl", "Qwen2VLProcessor", 12845056),
    # Qwen/Qwen2.5-VL-3B-Instruct, without and with a video processor config
    ("upstream", "qwen2_5_vl", "Qwen2_5_VLProcessor", 12845056),
    ("upstream+video", "qwen2_5_vl", "Qwen2_5_VLProcessor", 12845056),
    # xlangai/Aguvis-7B-720P: a Qwen2-VL layout whose chat template sits in tokenizer_config.json (the layout is
    # what is tested; this max_pixels is illustrative, not read from the Hub)
    ("aguvis", "qwen2_vl", "Qwen2VLProcessor", 1003520),
    # a checkpoint the stock processor saved under transformers 5 (nested image and video settings)
    ("stock-saved", "qwen2_5_vl", "Qwen2_5_VLProcessor", 501760),
    # Qwen3-VL: r1_gui's tiny folder, a trainer's checkpoint, Qwen/Qwen3-VL-8B-Instruct's layout (with its video
    # processor config, as every Qwen3-VL revision has one)
    ("tiny", "qwen3_vl", "Qwen3VLProcessor", 200704),
    ("checkpoint", "qwen3_vl", "Qwen3VLProcessor", 501760),
    ("upstream+video", "qwen3_vl", "Qwen3VLProcessor", 16777216),
]


def make_folder(kind, arch, processor_class, max_pixels, tiny_folder, out):
    if kind == "tiny":
        return tiny_folder
    if kind == "checkpoint":
        return saved_checkpoint(tiny_folder, out)
    if kind == "stock-saved":
        return make_stock_saved_layout(tiny_folder, out, processor_class, arch)
    template_in = "tokenizer_config" if kind == "aguvis" else "chat_template"
    video = kind == "upstream+video"
    return make_upstream_layout(tiny_folder, out, processor_class, arch, max_pixels, video, template_in)


@pytest.mark.parametrize("kind, arch, processor_class, max_pixels", FOLDER_KINDS)
def test_every_kind_of_folder_resolves_for_the_stock_processor_and_loads_without_it(
    request, tmp_path, kind, arch, processor_class, max_pixels
):
    """Checked against transformers' own resolution of the image and video processor configs (no torchvision)."""
    folder = make_folder(
        kind, arch, processor_class, max_pixels, request.getfixturevalue("tiny_" + arch), tmp_path / "f"
    )
    settings, image_type, video_type, _ = UPSTREAM[arch]
    image_config, _ = ImageProcessingMixin.get_image_processor_dict(str(folder))
    assert image_config["image_processor_type"] == (
        image_type if kind.startswith("upstream") else "Qwen2VLImageProcessor"
    )
    assert stock_video_processor_class(folder) == video_type
    assert stock_processor_class(folder) == processor_class
    assert stock_processor_configs_resolve(folder)
    processor = load_processor(folder)  # GUIVLProcessor: this machine has no torchvision
    assert isinstance(processor, GUIVLProcessor)
    assert pixel_bounds(processor) == (3136, max_pixels)
    patch = settings["patch_size"]
    image_processor = processor.image_processor
    assert (image_processor.patch_size, list(image_processor.image_mean)) == (patch, settings["image_mean"])
    tokens, grid = image_token_count(processor, Image.new("RGB", (1080, 2400)))
    h, w = smart_resize_by_hand(2400, 1080, factor=2 * patch, max_pixels=max_pixels)
    assert grid == [1, h // patch, w // patch] and tokens == (h // (2 * patch)) * (w // (2 * patch))


def test_saved_folder_gives_the_video_processor_the_image_settings(tiny_qwen2_5_vl, tmp_path):
    """The stock video processor of a saved folder resizes by the same bounds as its image processor."""
    folder = saved_checkpoint(tiny_qwen2_5_vl, tmp_path / "f")
    video_config, _ = BaseVideoProcessor.get_video_processor_dict(str(folder))
    image_config, _ = ImageProcessingMixin.get_image_processor_dict(str(folder))
    assert video_config["size"] == image_config["size"] == {"shortest_edge": 3136, "longest_edge": 501760}
    assert video_config["processor_class"] == "Qwen2_5_VLProcessor"


def test_a_folder_saved_before_the_fix_is_flagged_and_still_loads(tiny_qwen2_vl, tmp_path):
    """Without preprocessor_config.json the stock processor finds no video config (the issue's OSError); such a
    folder is detected, so load_processor takes GUIVLProcessor for it even where torchvision works."""
    folder = make_legacy_r1_gui_layout(tiny_qwen2_vl, tmp_path / "old")
    with pytest.raises(OSError, match="Can't load video processor"):
        BaseVideoProcessor.get_video_processor_dict(str(folder))
    assert not stock_processor_configs_resolve(folder)
    assert isinstance(load_processor(folder), GUIVLProcessor)


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


@pytest.mark.parametrize("arch", ["qwen2_vl", "qwen3_vl"])
def test_our_template_renders_plain_chats_exactly_like_qwens(arch, request):
    """Without Aguvis channels, r1_gui's template is the stock Qwen2.5-VL one, token for token, and Qwen3-VL's for
    every chat that starts with a system message (every prompt r1_gui builds does)."""
    processor = load_processor(request.getfixturevalue(f"tiny_{arch}"))
    stock = resources.files("trl").joinpath(f"chat_templates/{UPSTREAM[arch][3]}.jinja").read_text()
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
            if arch == "qwen3_vl" and chat[0]["role"] != "system":  # Qwen3-VL's template adds no default system
                theirs = "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n" + theirs
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
