"""The one processor loader of r1_gui: Qwen-VL processors with or without torchvision, with min/max pixels.

The stock `Qwen2VLProcessor` / `Qwen2_5_VLProcessor` / `Qwen3VLProcessor` require a video processor, and the video processor requires
torchvision, of which there is no CPU build on PyPI. `AutoProcessor.from_pretrained` then raises, or quietly returns
the bare tokenizer, and TRL treats the model as text-only (`KeyError: 'pixel_values'`). `GUIVLProcessor` is the
Qwen-VL processor without the video half: image processor (PIL backend) + tokenizer + chat template. It reads our
tiny folders and upstream Qwen2-VL, Aguvis, Qwen2.5-VL and Qwen3-VL checkpoint folders, and saves folders that
upstream code loads as the stock processor of their architecture. Where torchvision works, `load_processor` uses the
stock one. For images the three stock processors do the same (Qwen3VLProcessor differs in its video half only); the
architectures differ in the image processor's settings, which the folder carries (Qwen3-VL: 16-pixel patches).

    from r1_gui.processing import load_processor
    processor = load_processor("xlangai/Aguvis-7B-720P", max_pixels=501760)
"""

from __future__ import annotations

import functools
import json
import logging
from importlib import resources
from pathlib import Path

from transformers import AutoTokenizer
from transformers.image_processing_base import ImageProcessingMixin
from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil
from transformers.models.qwen2_vl.processing_qwen2_vl import Qwen2VLProcessor
from transformers.processing_utils import ProcessorMixin
from transformers.utils import IMAGE_PROCESSOR_NAME
from transformers.video_processing_utils import BaseVideoProcessor

from r1_gui.actions import check_pixel_bounds
from r1_gui.checkpoints import config_folder
from r1_gui.model_types import MODEL_TYPES, QWEN3_VL_TYPES, folder_model_type
from r1_gui.paths import resolve_model_path

logger = logging.getLogger(__name__)

CHAT_TEMPLATE = resources.files("r1_gui").joinpath("chat_template.jinja").read_text()

# processor_class written into saved folders, so that stock transformers (with torchvision) loads them natively.
STOCK_PROCESSOR_CLASS = {
    "qwen2_vl": "Qwen2VLProcessor",
    "qwen2_5_vl": "Qwen2_5_VLProcessor",
    **dict.fromkeys(QWEN3_VL_TYPES, "Qwen3VLProcessor"),
}
# The stock video processor, where transformers would not infer it from image_processor_type (which gives
# Qwen2VLVideoProcessor, right for Qwen2-VL and Qwen2.5-VL): written into saved folders' preprocessor_config.json.
STOCK_VIDEO_PROCESSOR_CLASS = dict.fromkeys(QWEN3_VL_TYPES, "Qwen3VLVideoProcessor")


class GUIVLProcessor(Qwen2VLProcessor):
    """Qwen2-VL / Qwen2.5-VL / Qwen3-VL processor for images and text only (no video processor, so no torchvision).

    Differs from `Qwen2VLProcessor` only in that it holds no video processor: calling it with `videos=` is an error.
    For images the token expansion and outputs (`input_ids`, `pixel_values`, `image_grid_thw`) are the stock ones.
    """

    def __init__(self, image_processor=None, tokenizer=None, chat_template=None, **kwargs):
        self.model_type = kwargs.pop("model_type", None)
        self.image_token = getattr(tokenizer, "image_token", None) or "<|image_pad|>"
        self.video_token = getattr(tokenizer, "video_token", None) or "<|video_pad|>"
        self.image_token_id = getattr(tokenizer, "image_token_id", None) or tokenizer.convert_tokens_to_ids(
            self.image_token
        )
        self.video_token_id = getattr(tokenizer, "video_token_id", None) or tokenizer.convert_tokens_to_ids(
            self.video_token
        )
        ProcessorMixin.__init__(self, image_processor, tokenizer, chat_template=chat_template, **kwargs)

    def __call__(self, images=None, text=None, videos=None, **kwargs):
        if videos is not None:
            raise ValueError("GUIVLProcessor handles images only; install a CUDA torchvision for video inputs")
        return super().__call__(images=images, text=text, **kwargs)

    def save_pretrained(self, save_directory, *args, **kwargs) -> list[str]:
        """Save as `ProcessorMixin` does, plus the image processor's settings in preprocessor_config.json, where
        upstream Qwen-VL folders keep them. The stock processor finds its video processor there when a folder has no
        video processor config (transformers reads video_preprocessor_config.json, else a `video_processor` entry of
        processor_config.json, else preprocessor_config.json), so every folder r1_gui saves (tiny models,
        checkpoints, final outputs: trl's trainers save through here) loads as the stock processor where torchvision
        works; without it `GUIVLProcessor` reads the same folder. A Qwen3-VL folder also names its video processor
        there (`STOCK_VIDEO_PROCESSOR_CLASS`), which transformers would otherwise infer as Qwen2-VL's."""
        files = super().save_pretrained(save_directory, *args, **kwargs)
        settings = json.loads(self.image_processor.to_json_string())
        settings["processor_class"] = self.to_dict()["processor_class"]
        if self.model_type in STOCK_VIDEO_PROCESSOR_CLASS:
            settings["video_processor_type"] = STOCK_VIDEO_PROCESSOR_CLASS[self.model_type]
        path = Path(save_directory) / IMAGE_PROCESSOR_NAME
        path.write_text(json.dumps(settings, indent=2, sort_keys=True) + "\n")
        return [*files, str(path)]

    def to_dict(self) -> dict:
        output = super().to_dict()
        output["processor_class"] = STOCK_PROCESSOR_CLASS.get(self.model_type, "Qwen2VLProcessor")
        output.pop("model_type", None)
        return output

    @classmethod
    def from_folder(cls, path: str | Path, model_type: str | None = None) -> GUIVLProcessor:
        """Load the image processor, tokenizer and chat template of a local Qwen-VL model folder."""
        path = Path(path)
        image_processor = Qwen2VLImageProcessorPil.from_pretrained(path)
        tokenizer = AutoTokenizer.from_pretrained(path)
        return cls(
            image_processor=image_processor,
            tokenizer=tokenizer,
            chat_template=_read_chat_template(path) or getattr(tokenizer, "chat_template", None),
            model_type=model_type or folder_model_type(path),
        )


def _read_chat_template(path: Path) -> str | None:
    """The chat template a folder ships: chat_template.jinja, chat_template.json, or processor_config.json."""
    if (path / "chat_template.jinja").is_file():
        return (path / "chat_template.jinja").read_text()
    for name in ("chat_template.json", "processor_config.json"):
        if (path / name).is_file():
            template = json.loads((path / name).read_text()).get("chat_template")
            if template:
                return template
    return None


@functools.cache
def torchvision_works() -> bool:
    """True when torchvision imports and its C++ ops load (a CUDA torchvision on CPU torch does not)."""
    try:
        import torchvision  # noqa: F401
        from torchvision.transforms.v2 import functional  # noqa: F401
    except Exception:  # ImportError, or RuntimeError "operator torchvision::nms does not exist"
        return False
    return True


def stock_processor_configs_resolve(path: str | Path) -> bool:
    """True when transformers' own file-resolution rules find both an image and a video processor config in the
    folder, which the stock Qwen-VL processor needs (neither lookup needs torchvision)."""
    try:
        ImageProcessingMixin.get_image_processor_dict(str(path), local_files_only=True)
        BaseVideoProcessor.get_video_processor_dict(str(path), local_files_only=True)
    except OSError:
        return False
    return True


def load_processor(
    model_name_or_path: str | Path,
    min_pixels: int | None = None,
    max_pixels: int | None = None,
    chat_template: str | None = None,
    padding_side: str | None = None,
):
    """Load the processor of a Qwen-VL model folder (or Hub id) with the given min/max pixels.

    min_pixels/max_pixels bound the resized screenshot's area (Qwen smart_resize); None keeps the folder's values.
    chat_template replaces the folder's template (r1_gui's own template is `CHAT_TEMPLATE`). padding_side sets the
    tokenizer's pad side (left for batched generation).
    """
    path = resolve_model_path(model_name_or_path)
    model_type = folder_model_type(config_folder(path))  # a LoRA adapter folder: its base model's type
    if model_type not in MODEL_TYPES:
        raise ValueError(
            f"{model_name_or_path} is not a Qwen-VL model folder: config.json has model_type {model_type!r}, "
            f"expected one of {', '.join(MODEL_TYPES)}"
        )
    if torchvision_works() and stock_processor_configs_resolve(path):
        from transformers import AutoProcessor

        processor = AutoProcessor.from_pretrained(path)
    else:
        if torchvision_works():
            logger.warning(
                "%s has no video processor config the stock processor could load (a folder saved by r1_gui before "
                "preprocessor_config.json was written): using GUIVLProcessor (images only)",
                path,
            )
        processor = GUIVLProcessor.from_folder(path, model_type=model_type)
    set_pixel_bounds(processor, min_pixels, max_pixels)
    if chat_template is not None:
        processor.chat_template = chat_template
    if padding_side is not None:
        processor.tokenizer.padding_side = padding_side
    return processor


def set_pixel_bounds(processor, min_pixels: int | None = None, max_pixels: int | None = None) -> None:
    """Set the image area bounds (the `size` dict the Qwen image processor resizes by) in place."""
    if min_pixels is None and max_pixels is None:
        return
    image_processor = processor.image_processor
    size = dict(image_processor.size)
    if min_pixels is not None:
        size["shortest_edge"] = int(min_pixels)
    if max_pixels is not None:
        size["longest_edge"] = int(max_pixels)
    check_pixel_bounds(size["shortest_edge"], size["longest_edge"])
    image_processor.size = type(image_processor.size)(**size) if not isinstance(image_processor.size, dict) else size
    for name, value in (("min_pixels", size["shortest_edge"]), ("max_pixels", size["longest_edge"])):
        if hasattr(image_processor, name):
            setattr(image_processor, name, value)


def resize_factor(processor) -> int:
    """The side in pixels of one merged image token, which a screenshot's sides are rounded to (smart_resize's
    factor): patch size x merge size, 28 for Qwen2-VL and Qwen2.5-VL (14 x 2), 32 for Qwen3-VL (16 x 2). Takes a
    processor or its image processor."""
    image_processor = getattr(processor, "image_processor", processor)
    return int(image_processor.patch_size) * int(image_processor.merge_size)


def pixel_bounds(processor) -> tuple[int, int]:
    """(min_pixels, max_pixels) the processor resizes screenshots to."""
    size = processor.image_processor.size
    get = size.get if isinstance(size, dict) else lambda key: getattr(size, key)
    return int(get("shortest_edge")), int(get("longest_edge"))
