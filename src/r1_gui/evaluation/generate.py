"""Generation backends: Hugging Face transformers (``HFGenerator``, batched with left padding) and vLLM
(``VLLMGenerator``, GPU only). Both ask the model exactly as training does:

- the prompt: ``build_prompt(problem, style, coordinates, screen_size)`` + ``attach_image`` (the image first in the
  user turn, as TRL puts it), rendered with r1_gui's chat template (``CHAT_TEMPLATE``) and
  ``chat_template_kwargs(style)`` (aguvis opens the planning channel);
- stopping at ``stop_token(style)``: ``<|diff_marker|>`` for aguvis, whose plan ends with ``<|im_end|>`` *before*
  the os-channel code; ``<|im_end|>`` (and the tokenizer's eos) otherwise, as ``GUIGRPOTrainer`` does;
- decoding with special tokens skipped, so an aguvis completion reads "Thought...\\nassistantos\\ncode".

torch, transformers and vllm are imported when a generator is built, never at import time.

    generator = HFGenerator("runs/ckpt", prompt_style="aguvis", max_new_tokens=256)
    outputs = generator.generate([{"problem": row["problem"], "image": screenshot}, ...], batch_size=16)
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from r1_gui.evaluation.errors import EvaluationError
from r1_gui.evaluation.samples import open_screenshot, screen_size
from r1_gui.prompts import (
    PROMPT_STYLES,
    attach_image,
    build_prompt,
    chat_template_kwargs,
    check_style,
    default_coordinates,
    stop_token,
)
from r1_gui.training.lora import config_folder, load_model

logger = logging.getLogger(__name__)

BACKENDS = ("hf", "vllm")
COORDINATE_CHOICES = ("auto", "normalized", "grid1000", "grid999", "pixels")
DEFAULT_MIN_PIXELS = 3136  # as training (GUIScriptArguments)
DEFAULT_MAX_PIXELS = 501760
VLLM_INSTALL = "pip install vllm==0.31.0 (or R1_GUI_GPU=1 bash setup.sh) on a machine with an NVIDIA GPU"


def add_generation_arguments(parser) -> None:
    """The flags that say how a checkpoint is asked (decoding, prompt, coordinates, screenshot size), with the
    generators' defaults; eval/test_aitw.py and ``python -m r1_gui.envs --model`` share them."""
    parser.add_argument("--max_new_tokens", type=int, default=256, help="completion length limit (default: 256)")
    parser.add_argument("--temperature", type=float, default=0.0, help="0 (default) is greedy; > 0 samples")
    parser.add_argument("--prompt_style", choices=PROMPT_STYLES, default="aguvis", help="as in training")
    parser.add_argument("--system_prompt", default=None, help="replace the style's system prompt, as in training")
    parser.add_argument(
        "--coordinates",
        choices=COORDINATE_CHOICES,
        default="auto",
        help="how the model writes points; auto: from the architecture and prompt style, as training",
    )
    parser.add_argument("--min_pixels", type=int, default=DEFAULT_MIN_PIXELS, help="smallest screenshot area")
    parser.add_argument("--max_pixels", type=int, default=DEFAULT_MAX_PIXELS, help="largest screenshot area")


def model_type_of(model_name_or_path: str | Path) -> str | None:
    """config.json's model_type of a local folder (Hub ids go through the cache), read without importing torch."""
    config = config_folder(model_name_or_path) / "config.json"  # a LoRA adapter's: its base model's
    return json.loads(config.read_text()).get("model_type") if config.is_file() else None


def resolve_coordinates(coordinates: str, model_type: str | None, prompt_style: str) -> str:
    """``coordinates``, or for "auto" the convention the checkpoint prints (``prompts.default_coordinates``)."""
    if coordinates not in COORDINATE_CHOICES:
        raise EvaluationError(f"--coordinates must be one of {', '.join(COORDINATE_CHOICES)}, got {coordinates!r}")
    if coordinates != "auto":
        return coordinates
    return default_coordinates(model_type or "", prompt_style)


def require_vllm() -> None:
    """Fail before anything is loaded when vLLM is not importable."""
    try:
        import vllm  # noqa: F401
    except ImportError as error:
        raise EvaluationError(
            f"--backend vllm needs vLLM, which is not importable here ({error}): {VLLM_INSTALL}; or use --backend hf"
        ) from None


def _stop_token_ids(tokenizer, prompt_style: str) -> list[int]:
    """The ids that end a completion, as GUIGRPOTrainer stops: the style's stop token, plus eos except for aguvis."""
    token = stop_token(prompt_style)
    token_id = tokenizer.convert_tokens_to_ids(token)
    if token_id is None or token_id == tokenizer.unk_token_id:
        raise EvaluationError(f"the tokenizer has no {token} token, which the {prompt_style} prompt style needs")
    stop_ids = [token_id]
    if prompt_style != "aguvis" and tokenizer.eos_token_id is not None and tokenizer.eos_token_id not in stop_ids:
        stop_ids.append(tokenizer.eos_token_id)
    return stop_ids


class _Generator:
    """What both backends share: the processor, the coordinate convention and the prompt of a row."""

    def __init__(
        self,
        model_name_or_path: str | Path,
        *,
        prompt_style: str = "aguvis",
        coordinates: str = "auto",
        min_pixels: int = DEFAULT_MIN_PIXELS,
        max_pixels: int = DEFAULT_MAX_PIXELS,
        max_new_tokens: int = 256,
        temperature: float = 0.0,
        seed: int = 0,
        system_prompt: str | None = None,
        padding_side: str | None = None,
    ):
        from r1_gui.processing import CHAT_TEMPLATE, load_processor

        check_style(prompt_style)
        if max_new_tokens < 1:
            raise EvaluationError(f"--max_new_tokens must be at least 1, got {max_new_tokens}")
        if temperature < 0:
            raise EvaluationError(f"--temperature must be >= 0 (0 is greedy), got {temperature}")
        self.model_name_or_path = str(model_name_or_path)
        self.model_type = model_type_of(model_name_or_path)
        self.prompt_style = prompt_style
        self.coordinates = resolve_coordinates(coordinates, self.model_type, prompt_style)
        self.min_pixels, self.max_pixels = min_pixels, max_pixels
        self.max_new_tokens, self.temperature, self.seed = max_new_tokens, temperature, seed
        self.system_prompt = system_prompt  # None: the style's own; else the text training used (--system_prompt)
        self.processor = load_processor(
            model_name_or_path, min_pixels, max_pixels, chat_template=CHAT_TEMPLATE, padding_side=padding_side
        )
        self.stop_token_ids = _stop_token_ids(self.processor.tokenizer, prompt_style)

    def prompt_text(self, problem: str, image_size: tuple[int, int]) -> str:
        """The rendered prompt of a row, as training builds it, ending with the assistant turn's opening."""
        size = screen_size(image_size, self.min_pixels, self.max_pixels)
        prompt = build_prompt(problem, self.prompt_style, self.coordinates, size, self.system_prompt)
        messages = attach_image(prompt)
        return self.processor.apply_chat_template(
            messages, add_generation_prompt=True, tokenize=False, **chat_template_kwargs(self.prompt_style)
        )

    def _inputs(self, rows: Sequence[dict]) -> tuple[list[str], list[Any]]:
        screenshots = [open_screenshot(row["image"]) for row in rows]
        texts = [self.prompt_text(row["problem"], image.size) for row, image in zip(rows, screenshots, strict=True)]
        return texts, screenshots

    def generate(self, rows: Sequence[dict], batch_size: int | None = None) -> list[str]:
        """The raw completion of each row ({"problem": str, "image": PIL image, path or {"bytes", "path"}}), in
        batches of ``batch_size`` rows (None: all rows in one batch)."""
        size = batch_size or max(1, len(rows))
        completions: list[str] = []
        for first in range(0, len(rows), size):
            completions.extend(self._generate_batch(rows[first : first + size]))
        return completions

    def _generate_batch(self, rows: Sequence[dict]) -> list[str]:
        raise NotImplementedError


class HFGenerator(_Generator):
    """transformers generation, batched with left padding; greedy unless ``temperature`` > 0.

    ``device``: "auto" (cuda when available, else cpu), "cpu" or "cuda"; ``dtype``: "auto" (the checkpoint's),
    "bfloat16", "float16" or "float32".
    """

    def __init__(self, model_name_or_path: str | Path, *, device: str = "auto", dtype: str = "auto", **kwargs: Any):
        import torch

        super().__init__(model_name_or_path, padding_side="left", **kwargs)
        if device not in ("auto", "cpu", "cuda"):
            raise EvaluationError(f"--device must be auto, cpu or cuda, got {device!r}")
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        if device == "cuda" and not torch.cuda.is_available():
            raise EvaluationError("--device cuda, but torch sees no CUDA device; use --device cpu")
        self.device = torch.device(device)
        dtype = dtype if dtype == "auto" else getattr(torch, dtype)
        self.model = load_model(model_name_or_path, dtype=dtype).to(self.device)  # a LoRA adapter: base + adapter
        self.model.eval()
        tokenizer = self.processor.tokenizer
        self.pad_token_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else self.stop_token_ids[0]
        torch.manual_seed(self.seed)

    def _generate_batch(self, rows: Sequence[dict]) -> list[str]:
        import torch

        texts, screenshots = self._inputs(rows)
        inputs = self.processor(text=texts, images=screenshots, padding=True, return_tensors="pt").to(self.device)
        sampling = (
            {"do_sample": True, "temperature": self.temperature} if self.temperature > 0 else {"do_sample": False}
        )
        with torch.inference_mode():
            output_ids = self.model.generate(
                **inputs,
                max_new_tokens=self.max_new_tokens,
                eos_token_id=self.stop_token_ids,
                pad_token_id=self.pad_token_id,
                **sampling,
            )
        completions = output_ids[:, inputs["input_ids"].shape[1] :]
        return self.processor.tokenizer.batch_decode(completions, skip_special_tokens=True)


class VLLMGenerator(_Generator):
    """vLLM generation (GPU): the same rendered prompts, the screenshot as ``multi_modal_data``, the same stop ids.

    For aguvis ``ignore_eos`` is set, as in training, so the ``<|im_end|>`` closing the plan does not end the
    completion before the os-channel code.
    """

    def __init__(
        self, model_name_or_path: str | Path, *, gpu_memory_utilization: float = 0.9, dtype: str = "auto", **kwargs: Any
    ):
        require_vllm()
        from vllm import LLM, SamplingParams

        super().__init__(model_name_or_path, **kwargs)
        self.llm = LLM(
            model=self.model_name_or_path,
            seed=self.seed,
            dtype=dtype,
            gpu_memory_utilization=gpu_memory_utilization,
            limit_mm_per_prompt={"image": 1},
            mm_processor_kwargs={"min_pixels": self.min_pixels, "max_pixels": self.max_pixels},
        )
        self.sampling_params = SamplingParams(
            temperature=self.temperature,
            max_tokens=self.max_new_tokens,
            stop_token_ids=self.stop_token_ids,
            ignore_eos=self.prompt_style == "aguvis",
            skip_special_tokens=True,
            seed=self.seed,
        )

    def _generate_batch(self, rows: Sequence[dict]) -> list[str]:
        texts, screenshots = self._inputs(rows)
        requests = [
            {"prompt": text, "multi_modal_data": {"image": image}}
            for text, image in zip(texts, screenshots, strict=True)
        ]
        results = self.llm.generate(requests, self.sampling_params, use_tqdm=False)
        return [result.outputs[0].text for result in results]


def make_generator(backend: str, model_name_or_path: str | Path, **kwargs: Any) -> _Generator:
    """An ``HFGenerator`` or ``VLLMGenerator``; ``device`` goes to hf only, ``gpu_memory_utilization`` to vllm only."""
    if backend == "hf":
        kwargs.pop("gpu_memory_utilization", None)
        return HFGenerator(model_name_or_path, **kwargs)
    if backend == "vllm":
        kwargs.pop("device", None)
        return VLLMGenerator(model_name_or_path, **kwargs)
    raise EvaluationError(f"--backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
