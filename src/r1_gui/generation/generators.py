"""Generation backends: Hugging Face transformers (``HFGenerator``, batched with left padding) and vLLM
(``VLLMGenerator``, GPU only). Both ask the model exactly as training does:

- the prompt: ``build_prompt(problem, style, coordinates, screen_size)`` + ``attach_image`` (the image first in the
  user turn, as TRL puts it), rendered with r1_gui's chat template (``CHAT_TEMPLATE``) and
  ``chat_template_kwargs(style)`` (aguvis opens the planning channel);
- stopping at ``stop_token(style)``: ``<|diff_marker|>`` for aguvis, whose plan ends with ``<|im_end|>`` *before*
  the os-channel code; ``<|im_end|>`` (and the tokenizer's eos) otherwise: ``prompts.stop_token_ids``, the ids
  ``r1_gui.training.trainer.GUIGRPOTrainer`` stops at;
- decoding with special tokens skipped, so an aguvis completion reads "Thought...\\nassistantos\\ncode".

Every setting comes from a ``GenerationSettings`` (``generation.settings``; an evaluation's ``EvalConfig`` is one);
keyword arguments are its fields, applied on top of it. torch, transformers and vllm are imported when a generator
is built, never at import time.

    generator = HFGenerator("runs/ckpt", GenerationSettings(prompt_style="aguvis", max_new_tokens=256))
    generator = HFGenerator("runs/ckpt", max_new_tokens=256)  # the same, from the defaults
    outputs = generator.generate([{"problem": row["problem"], "image": screenshot}, ...], batch_size=16)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from r1_gui.actions.coords import resized_size
from r1_gui.checkpoints import load_model
from r1_gui.cli_errors import UserError
from r1_gui.generation.prompting import model_type_of
from r1_gui.generation.settings import (
    GenerationSettings,
    checked_pixel_bounds,
    generation_settings,
    log_warnings,
    resolve_pixel_bounds,
)
from r1_gui.gui_datasets import open_screenshot
from r1_gui.prompts import attach_image, build_prompt, chat_template_kwargs, stop_token_ids
from r1_gui.vision_attention import apply_vision_attention

VLLM_INSTALL = "pip install vllm==0.31.0 (or R1_GUI_GPU=1 bash setup.sh) on a machine with an NVIDIA GPU"


def require_vllm() -> None:
    """Fail before anything is loaded when vLLM is not importable."""
    try:
        import vllm  # noqa: F401
    except ImportError as error:
        raise UserError(
            f"--backend vllm needs vLLM, which is not importable here ({error}): {VLLM_INSTALL}; or use --backend hf"
        ) from None


class _Generator:
    """What both backends share: the settings (``self.config``, its coordinates resolved), the processor, the stop
    ids and the prompt of a row."""

    def __init__(
        self,
        model_name_or_path: str | Path,
        config: GenerationSettings | None = None,
        *,
        padding_side: str | None = None,
        **settings: Any,
    ):
        from r1_gui.processing import CHAT_TEMPLATE, load_processor

        self.model_name_or_path = str(model_name_or_path)
        self.model_type = model_type_of(model_name_or_path)
        config = generation_settings(config, **settings)
        if config.min_pixels is None or config.max_pixels is None:  # the checkpoint's saved bounds
            bounds, sources, warnings, _ = resolve_pixel_bounds(config, model_name_or_path)
            checked_pixel_bounds(bounds, sources)
            log_warnings(warnings)
            config = config.with_settings(**bounds)
        self.config = config = config.prompting_resolved(self.model_type)
        self.processor = load_processor(
            model_name_or_path,
            config.min_pixels,
            config.max_pixels,
            chat_template=CHAT_TEMPLATE,
            padding_side=padding_side,
        )
        try:
            self.stop_token_ids = stop_token_ids(self.processor.tokenizer, config.prompt_style)
        except ValueError as error:
            raise UserError(str(error)) from None

    @property
    def coordinates(self) -> str:
        return self.config.coordinates

    @property
    def resize_factor(self) -> int:
        """The side of one merged image token in pixels (28 for Qwen2-VL and Qwen2.5-VL, 32 for Qwen3-VL)."""
        from r1_gui.processing import resize_factor

        return resize_factor(self.processor)

    def screen_size(self, image_size: tuple[int, int]) -> tuple[int, int]:
        """(width, height) of the screenshot this model sees, which "pixels" coordinates refer to."""
        return resized_size(*image_size, self.config.min_pixels, self.config.max_pixels, self.resize_factor)

    @property
    def min_pixels(self) -> int:
        return self.config.min_pixels

    @property
    def max_pixels(self) -> int:
        return self.config.max_pixels

    def prompt_text(self, problem: str, image_size: tuple[int, int]) -> str:
        """The rendered prompt of a row, as training builds it, ending with the assistant turn's opening."""
        config = self.config
        size = self.screen_size(image_size)
        prompt = build_prompt(problem, config.prompt_style, config.coordinates, size, config.system_prompt)
        messages = attach_image(prompt)
        return self.processor.apply_chat_template(
            messages, add_generation_prompt=True, tokenize=False, **chat_template_kwargs(config.prompt_style)
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

    def reseed(self, seed: int) -> None:
        """Seed the sampler again (episode evaluation's repeats: pass r samples with seed + r)."""
        raise NotImplementedError

    def generate_turns(self, inputs: Sequence) -> list[list[int]]:
        """The answer token ids (up to and including the stop token) of one episode turn per input, each an
        `r1_gui.agent.loop.TurnInput` (its context already tokenized, or its messages and screenshots)."""
        raise NotImplementedError

    def _cut_at_stop(self, ids: list[int]) -> list[int]:
        end = next((i for i, token in enumerate(ids) if token in self.stop_token_ids), None)
        return list(ids) if end is None else list(ids[: end + 1])


class HFGenerator(_Generator):
    """transformers generation, batched with left padding; greedy unless ``temperature`` > 0.

    ``device``: "auto" (cuda when available, else cpu), "cpu" or "cuda"; ``dtype``: "auto" (the checkpoint's),
    "bfloat16", "float16" or "float32".
    """

    def __init__(self, model_name_or_path: str | Path, config: GenerationSettings | None = None, **settings: Any):
        import torch

        super().__init__(model_name_or_path, config, padding_side="left", **settings)
        device, dtype = self.config.device, self.config.dtype
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        if device == "cuda" and not torch.cuda.is_available():
            raise UserError("--device cuda, but torch sees no CUDA device; use --device cpu")
        self.device = torch.device(device)
        dtype = dtype if dtype == "auto" else getattr(torch, dtype)
        self.model = load_model(model_name_or_path, dtype=dtype).to(self.device)  # a LoRA adapter: base + adapter
        self.model.eval()
        apply_vision_attention(self.model, self.config.vision_attention, self.device.type)
        self.generation_settings = self._compiled_generation_settings()
        tokenizer = self.processor.tokenizer
        self.pad_token_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else self.stop_token_ids[0]
        self.reseed(self.config.seed)

    def reseed(self, seed: int) -> None:
        import torch

        torch.manual_seed(seed)

    def _static_cache(self, prompt_length: int) -> dict:
        """generate()'s keywords for --generation_compile, the cache's length in buckets (fewer recompiles)."""
        from r1_gui.generation.compiled import static_cache_length

        if not self.generation_settings:
            return {}
        length = static_cache_length(prompt_length, self.config.max_new_tokens)
        return {**self.generation_settings, "max_cache_len": length}

    def _compiled_generation_settings(self) -> dict:
        """generate()'s extra keywords for --generation_compile (none when it is off or cannot apply)."""
        from r1_gui.generation.compiled import generation_compile_blocker, generation_compile_settings, report

        if not self.config.generation_compile:
            return {}
        if not report(generation_compile_blocker(self.model), "evaluation's generation"):
            return {}
        return generation_compile_settings(self.device.type)

    def _generate_batch(self, rows: Sequence[dict]) -> list[str]:
        import torch

        texts, screenshots = self._inputs(rows)
        inputs = self.processor(text=texts, images=screenshots, padding=True, return_tensors="pt").to(self.device)
        prompt_length = inputs["input_ids"].shape[1]
        temperature = self.config.temperature
        sampling = {"do_sample": True, "temperature": temperature} if temperature > 0 else {"do_sample": False}
        with torch.inference_mode():
            output_ids = self.model.generate(
                **inputs,
                max_new_tokens=self.config.max_new_tokens,
                eos_token_id=self.stop_token_ids,
                pad_token_id=self.pad_token_id,
                **sampling,
                **self._static_cache(prompt_length),
            )
        completions = output_ids[:, prompt_length:]
        return self.processor.tokenizer.batch_decode(completions, skip_special_tokens=True)

    def generate_turns(self, inputs: Sequence) -> list[list[int]]:
        import torch

        batch = turn_batch(self.model, inputs, self.pad_token_id, self.processor.tokenizer)
        temperature = self.config.temperature
        sampling = {"do_sample": True, "temperature": temperature} if temperature > 0 else {"do_sample": False}
        with torch.inference_mode():
            output = self.model.generate(
                **batch,
                max_new_tokens=self.config.max_new_tokens,
                eos_token_id=self.stop_token_ids,
                pad_token_id=self.pad_token_id,
                **sampling,
                **self._static_cache(batch["input_ids"].size(1)),
            )
        return [self._cut_at_stop(row) for row in output[:, batch["input_ids"].size(1) :].tolist()]


def turn_batch(model, inputs: Sequence, pad_token_id: int, tokenizer) -> dict:
    """generate()'s inputs for episode turns (`r1_gui.agent.loop.TurnInput`: tokenized contexts, their pixel values
    and image grids) on the model's device: the contexts left-padded as trl pads them, the image tokens marked."""
    import torch

    width = max(len(turn.context_ids) for turn in inputs)
    ids = torch.tensor([[pad_token_id] * (width - len(t.context_ids)) + list(t.context_ids) for t in inputs])
    mask = torch.tensor([[0] * (width - len(t.context_ids)) + [1] * len(t.context_ids) for t in inputs])
    image_pad = tokenizer.convert_tokens_to_ids("<|image_pad|>")
    batch = {"input_ids": ids, "attention_mask": mask, "mm_token_type_ids": (ids == image_pad).long()}
    with_pixels = [t for t in inputs if t.pixel_values is not None]
    if with_pixels:
        batch["pixel_values"] = torch.cat([t.pixel_values for t in with_pixels]).to(model.dtype)
        batch["image_grid_thw"] = torch.cat([t.image_grid_thw for t in with_pixels])
    device = next(model.parameters()).device
    return {key: value.to(device) for key, value in batch.items()}


def sampled_logprobs(output, prompt_width: int, temperature: float) -> list[list[float]]:
    """The log-probability of each generated token under the sampling distribution, as trl scores a token (the
    logits divided by the temperature, log-softmax), from generate()'s output with `output_logits=True` and
    `return_dict_in_generate=True`; one list per row, as long as the generated tokens."""
    import torch

    completions = output.sequences[:, prompt_width:]
    logits = torch.stack(output.logits, dim=1).float() / (temperature or 1.0)  # (rows, new tokens, vocab)
    return torch.log_softmax(logits, dim=-1).gather(-1, completions.unsqueeze(-1)).squeeze(-1).tolist()


class VLLMGenerator(_Generator):
    """vLLM generation (GPU): the same rendered prompts, the screenshot as ``multi_modal_data``, the same stop ids.

    For aguvis ``ignore_eos`` is set, as in training, so the ``<|im_end|>`` closing the plan does not end the
    completion before the os-channel code.
    """

    def __init__(self, model_name_or_path: str | Path, config: GenerationSettings | None = None, **settings: Any):
        require_vllm()
        from vllm import LLM, SamplingParams

        from r1_gui.generation.compiled import generation_compile_blocker, report

        super().__init__(model_name_or_path, config, **settings)
        config = self.config
        if config.generation_compile:
            report(generation_compile_blocker(None, backend="vllm"), "evaluation's generation")
        self.llm = LLM(
            model=self.model_name_or_path,
            seed=config.seed,
            dtype=config.dtype,
            gpu_memory_utilization=config.vllm_gpu_memory_utilization,
            limit_mm_per_prompt={"image": config.images_per_prompt},
            mm_processor_kwargs={"min_pixels": config.min_pixels, "max_pixels": config.max_pixels},
        )
        self.sampling_params = SamplingParams(
            temperature=config.temperature,
            max_tokens=config.max_new_tokens,
            stop_token_ids=self.stop_token_ids,
            ignore_eos=config.prompt_style == "aguvis",
            skip_special_tokens=True,
            seed=config.seed,
        )

    def reseed(self, seed: int) -> None:
        self.sampling_params.seed = seed

    def _generate_batch(self, rows: Sequence[dict]) -> list[str]:
        texts, screenshots = self._inputs(rows)
        requests = [
            {"prompt": text, "multi_modal_data": {"image": image}}
            for text, image in zip(texts, screenshots, strict=True)
        ]
        results = self.llm.generate(requests, self.sampling_params, use_tqdm=False)
        return [result.outputs[0].text for result in results]

    def generate_turns(self, inputs: Sequence) -> list[list[int]]:
        """Each turn's messages rendered by the chat template, its screenshots as `multi_modal_data` (vLLM expands
        the image tokens itself); untested here (no vLLM on the machines r1_gui is tested on)."""
        requests = [
            {
                "prompt": self.processor.apply_chat_template(turn.messages, add_generation_prompt=True, tokenize=False),
                "multi_modal_data": {"image": list(turn.images)},
            }
            for turn in inputs
        ]
        results = self.llm.generate(requests, self.sampling_params, use_tqdm=False)
        return [self._cut_at_stop(result.outputs[0].token_ids) for result in results]


def make_generator(
    model_name_or_path: str | Path, config: GenerationSettings | None = None, **settings: Any
) -> _Generator:
    """The generator of ``config.backend`` (with ``settings``, GenerationSettings fields, on top): an
    ``HFGenerator`` or a ``VLLMGenerator``."""
    config = generation_settings(config, **settings)
    generator = HFGenerator if config.backend == "hf" else VLLMGenerator  # the settings allow no other backend
    return generator(model_name_or_path, config)
