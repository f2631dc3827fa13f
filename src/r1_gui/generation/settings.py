"""``GenerationSettings``: how a checkpoint is asked (prompt, decoding, screenshot size) and where it runs, the flags
that set them, and the screenshot bounds a checkpoint was trained with.

The generators take it; the evaluation's ``EvalConfig`` is a ``GenerationSettings`` with the run's own settings
added, so a config of either kind goes wherever settings do. Each field is named as its command-line flag. A bad
value is a ``UserError`` (the command lines print it as one line). Light: imports neither torch nor transformers.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from r1_gui.actions import check_pixel_bounds
from r1_gui.checkpoints import saved_image_settings
from r1_gui.cli_errors import UserError
from r1_gui.flags import Flags, add_flags, at_least, flag
from r1_gui.generation.prompting import COORDINATE_CHOICES, resolve_prompting
from r1_gui.prompts import PROMPT_STYLE_CHOICES, check_style
from r1_gui.vision_attention import VISION_ATTENTION_CHOICES, check_vision_attention

logger = logging.getLogger(__name__)

BACKENDS = ("hf", "vllm")
DEVICES = ("auto", "cpu", "cuda")
DTYPES = ("auto", "bfloat16", "float16", "float32")
DEFAULT_MIN_PIXELS = 3136  # as training (GUIDataArguments): the bounds of a model folder that saved none
DEFAULT_MAX_PIXELS = 501760


@dataclass(frozen=True)
class AskedModel:
    """The checkpoint an evaluation or `play` asks (its flag; the generators take the path beside the settings)."""

    model_name_or_path: str | None = flag(
        None, "The checkpoint to ask: a model folder, a LoRA adapter folder (its base is loaded with it) or a Hub id."
    )


@dataclass(frozen=True)
class GenerationSettings(Flags):
    """How a checkpoint is asked and where it runs; each field is a flag (declared here once: training's own prompt
    and screenshot flags are these, `r1_gui.training.flags`), of eval/test_aitw.py, eval/test_phone.py and play."""

    WHAT = "generation"  # what with_settings' error calls a setting of this kind (not a field: no annotation)

    # -- how the checkpoint is asked (an evaluation records these in run_config.json; a resume must match) -------
    prompt_style: str = flag(
        "auto",
        "aguvis, think_answer or mobile_use (see r1_gui.prompts), or auto: the architecture's own (mobile_use for "
        "Qwen3-VL, aguvis for Qwen2-VL and Qwen2.5-VL). An evaluation asks in the style training used.",
        choices=PROMPT_STYLE_CHOICES,
    )
    system_prompt: str | None = flag(
        None, "Replace the prompt style's system prompt (use the same text for SFT, GRPO and evaluation)."
    )
    coordinates: str = flag(
        "auto",
        "How the model writes coordinates: normalized (0-1, Aguvis), grid1000 (Qwen2-VL), grid999 (Qwen3-VL, "
        "mobile_use), pixels (Qwen2.5-VL, of the resized screenshot), or auto (from the architecture and prompt "
        "style).",
        choices=COORDINATE_CHOICES,
    )
    min_pixels: int | None = flag(
        None,
        "Smallest area (pixels) a screenshot is resized to (Qwen). An evaluation left without it uses the "
        "checkpoint's saved processor's (what training used); a value that differs from it is warned about and "
        "recorded in the protocol card.",
    )
    max_pixels: int | None = flag(
        None,
        "Largest area (pixels) a screenshot is resized to (Qwen). An evaluation left without it uses the "
        "checkpoint's saved processor's (what training used); a value that differs from it is warned about and "
        "recorded in the protocol card.",
    )
    max_new_tokens: int = flag(256, "New tokens the model may write per answer (in an episode: per turn).")
    temperature: float = flag(0.0, "0 is greedy; above 0 samples.")
    seed: int = flag(0, "Sampling seed (matters with --temperature above 0).")
    backend: str = flag("hf", "hf (transformers, any machine) or vllm (GPU).", choices=BACKENDS)
    # -- where and how the model runs (not recorded: they do not change the outputs) -----------------------------
    device: str = flag("auto", "hf backend: where the model runs: auto (cuda when available), cpu or cuda.",
                       choices=DEVICES)  # fmt: skip
    dtype: str = flag("auto", "The weights' dtype: auto (the checkpoint's) or a torch one.", choices=DTYPES)
    vision_attention: str = flag(
        "auto",
        "How the vision tower runs its attention under sdpa: batched_windows (one sdpa call per window length "
        "instead of one per window; towers without windows, Qwen2-VL and Qwen3-VL, one per image size instead of one "
        "per image; the same output), model (transformers' per-window or per-image calls), or auto (batched_windows "
        "on CUDA, model on CPU). batched_windows needs sdpa (refused with --attn_implementation eager or "
        "flash_attention_2) and the hf backend. See r1_gui.vision_attention.",
        choices=VISION_ATTENTION_CHOICES,
    )
    generation_compile: bool = flag(
        False,
        "Generate on a static KV cache with a compiled decode step (torch.compile; CUDA graphs on a GPU) instead of "
        "the dynamic cache: the same greedy answers; the first step (or batch) pays the compilation. Off by default "
        "until a GPU measures it faster (bench/gpu_kit.sh). Not applied, with one log line saying why, under vLLM, "
        "ZeRO-3 or FSDP. See r1_gui.generation.compiled.",
    )
    vllm_gpu_memory_utilization: float = flag(0.9, "vllm backend only: the share of GPU memory vLLM may take.")
    batch_size: int = flag(
        16, "Prompts per generate call (the episode evaluation: episodes played side by side, one prompt each a turn)."
    )
    # not a flag: the episode evaluation sets it from --history_images
    images_per_prompt: int = field(default=1, metadata={"help": "vllm backend: screenshots one prompt may hold"})

    def problems(self) -> list[str]:
        found = super().problems()
        if self.prompt_style != "auto":
            try:
                check_style(self.prompt_style)
            except ValueError as error:
                found.append(f"--prompt_style: {error}")
        if self.coordinates not in COORDINATE_CHOICES:
            found.append(f"--coordinates must be one of {', '.join(COORDINATE_CHOICES)}, got {self.coordinates!r}")
        if self.backend not in BACKENDS:
            found.append(f"--backend must be one of {', '.join(BACKENDS)}, got {self.backend!r}")
        if self.device not in DEVICES:
            found.append(f"--device must be auto, cpu or cuda, got {self.device!r}")
        try:
            check_vision_attention(self.vision_attention)
        except ValueError as error:
            found.append(str(error))
        found += at_least("batch_size", self.batch_size, 1) + at_least("max_new_tokens", self.max_new_tokens, 1)
        for bound in ("min_pixels", "max_pixels"):
            if getattr(self, bound) is not None and getattr(self, bound) < 1:
                found.append(f"--{bound} must be at least 1 (or left out), got {getattr(self, bound)}")
        if self.temperature < 0:
            found.append(f"--temperature must be >= 0 (0 is greedy), got {self.temperature}")
        if self.min_pixels is not None and self.max_pixels is not None:  # None: the checkpoint's, checked there
            try:
                check_pixel_bounds(self.min_pixels, self.max_pixels)
            except ValueError as error:
                found.append(str(error))
        return found

    def __post_init__(self) -> None:
        problems = self.problems()
        if problems:
            raise UserError("; ".join(problems))

    @classmethod
    def from_args(cls, args: argparse.Namespace):
        """The settings of a command line: every field whose flag the parser has (a flag is named as its field)."""
        return cls(**{f.name: getattr(args, f.name) for f in fields(cls) if hasattr(args, f.name)})

    def with_settings(self, **settings: Any):
        """These settings with some fields replaced (the keyword front of the API); an unknown name is a TypeError."""
        names = [f.name for f in fields(self)]
        unknown = sorted(set(settings) - set(names))
        if unknown:
            raise TypeError(f"unknown {self.WHAT} setting(s) {', '.join(unknown)}; valid: {', '.join(names)}")
        return replace(self, **settings) if settings else self

    def prompting_resolved(self, model_type: str | None):
        """These settings with "auto" prompt style and coordinates resolved for ``model_type`` (None: no model):
        ``prompting.resolve_prompting``."""
        prompt_style, coordinates = resolve_prompting(self.prompt_style, self.coordinates, model_type)
        return self.with_settings(prompt_style=prompt_style, coordinates=coordinates)


def generation_settings(settings: GenerationSettings | None = None, **overrides: Any) -> GenerationSettings:
    """``settings`` (default: all defaults) with ``overrides`` applied: what every function taking both starts with."""
    return (settings or GenerationSettings()).with_settings(**overrides)


# -------------------------------------------------------------------------------- the screenshot's bounds


def resolve_pixel_bounds(settings: GenerationSettings, model_name_or_path: str | Path | None = None):
    """({"min_pixels", "max_pixels"}, where each came from, warnings, the checkpoint's saved image settings). A
    bound the settings leave None comes from the model folder's saved processor (the training run's), else r1_gui's
    default; a bound they set is kept ("flags"), with a warning when the checkpoint saved another value (the model
    then sees other screenshots than in training). UserError when min_pixels ends above max_pixels."""
    saved = saved_image_settings(model_name_or_path) if model_name_or_path is not None else {}
    values, sources, warnings = {}, {}, []
    for bound, fallback in (("min_pixels", DEFAULT_MIN_PIXELS), ("max_pixels", DEFAULT_MAX_PIXELS)):
        given = getattr(settings, bound)
        if given is not None:
            values[bound], sources[bound] = given, "flags"
            if bound in saved and saved[bound] != given:
                warnings.append(
                    f"--{bound} {given} differs from the checkpoint's saved processor ({saved[bound]}, in "
                    f"{saved['file']}: the training run's setting); the model sees other screenshots than in "
                    f"training. Leave --{bound} out to use the checkpoint's"
                )
        elif bound in saved:
            values[bound], sources[bound] = saved[bound], "checkpoint"
        else:
            values[bound], sources[bound] = fallback, "defaults"
    return values, sources, warnings, saved


def checked_pixel_bounds(values: dict, sources: dict) -> None:
    """UserError naming where each bound came from when min_pixels is above max_pixels (one check, the flags' and
    the training's)."""
    try:
        check_pixel_bounds(values["min_pixels"], values["max_pixels"])
    except ValueError as error:
        where = f"min_pixels from {sources['min_pixels']}, max_pixels from {sources['max_pixels']}"
        raise UserError(f"{error} ({where})") from None


def log_warnings(warnings: Sequence[str]) -> None:
    for warning in warnings:
        logger.warning(warning)


# -------------------------------------------------------------------------------- the flags

ASKING = ("max_new_tokens", "temperature", "prompt_style", "coordinates", "system_prompt", "min_pixels", "max_pixels")
RUNNING = (
    "backend",
    "device",
    "dtype",
    "vision_attention",
    "generation_compile",
    "vllm_gpu_memory_utilization",
    "seed",
)


def add_generation_arguments(parser, prompting: bool = True, max_new_tokens: int | None = None) -> None:
    """The flags that say how a checkpoint is asked (decoding, system prompt, screenshot size; with ``prompting``
    also the prompt style and coordinates), as GenerationSettings declares them (``max_new_tokens``: this command's
    default); eval/test_aitw.py, eval/test_phone.py and ``python -m r1_gui.play`` share them."""
    names = [name for name in ASKING if prompting or name not in ("prompt_style", "coordinates")]
    defaults = {"max_new_tokens": max_new_tokens} if max_new_tokens else {}
    add_flags(parser, GenerationSettings, names, defaults=defaults)


def add_backend_arguments(parser) -> None:
    """The flags that say where and how the model runs (backend, device, dtype, vision attention, vLLM's memory
    share) and the sampling seed: eval/test_aitw.py's and eval/test_phone.py's."""
    add_flags(parser, GenerationSettings, RUNNING)
