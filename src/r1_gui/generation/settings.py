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
from r1_gui.generation.prompting import COORDINATE_CHOICES, resolve_prompting
from r1_gui.prompts import PROMPT_STYLE_CHOICES, check_style
from r1_gui.vision_attention import VISION_ATTENTION_CHOICES, check_vision_attention

logger = logging.getLogger(__name__)

BACKENDS = ("hf", "vllm")
DEVICES = ("auto", "cpu", "cuda")
DEFAULT_MIN_PIXELS = 3136  # as training (GUIDataArguments): the bounds of a model folder that saved none
DEFAULT_MAX_PIXELS = 501760


@dataclass(frozen=True)
class GenerationSettings:
    """How a checkpoint is asked and where it runs; the fields are the flags of eval/test_aitw.py and play."""

    WHAT = "generation"  # what with_settings' error calls a setting of this kind (not a field: no annotation)

    # -- how the checkpoint is asked (an evaluation records these in run_config.json; a resume must match) -------
    prompt_style: str = field(
        default="auto",
        metadata={"help": "prompt style, as in training; auto: prompts.default_prompt_style(model_type)"},
    )
    system_prompt: str | None = field(
        default=None, metadata={"help": "replace the style's system prompt (give the text training used)"}
    )
    coordinates: str = field(
        default="auto",
        metadata={"help": "how the model writes points; auto: prompts.default_coordinates(model_type, prompt_style)"},
    )
    min_pixels: int | None = field(
        default=None,
        metadata={"help": "smallest screenshot area; None: the checkpoint's saved processor's (training's)"},
    )
    max_pixels: int | None = field(
        default=None,
        metadata={"help": "largest screenshot area; None: the checkpoint's saved processor's (training's)"},
    )
    max_new_tokens: int = field(default=256, metadata={"help": "completion length limit"})
    temperature: float = field(default=0.0, metadata={"help": "0 is greedy; > 0 samples"})
    seed: int = field(default=0, metadata={"help": "sampling seed (matters with temperature > 0)"})
    backend: str = field(default="hf", metadata={"help": "hf (any machine) or vllm (GPU)"})
    # -- where and how the model runs (not recorded: they do not change the outputs) -----------------------------
    device: str = field(default="auto", metadata={"help": "hf backend: auto (cuda when available), cpu or cuda"})
    dtype: str = field(default="auto", metadata={"help": "model weights dtype: auto (the checkpoint's) or a torch one"})
    vision_attention: str = field(
        default="auto",
        metadata={"help": "hf backend: the vision tower's windows batched (as in training; auto: on CUDA)"},
    )
    generation_compile: bool = field(
        default=False,
        metadata={"help": "hf backend: a static KV cache and a compiled decode step (r1_gui.generation.compiled)"},
    )
    vllm_gpu_memory_utilization: float = field(default=0.9, metadata={"help": "vllm backend only"})
    batch_size: int = field(default=16, metadata={"help": "prompts per generate call"})
    images_per_prompt: int = field(
        default=1, metadata={"help": "vllm backend: screenshots one prompt may hold (episodes: --history_images)"}
    )

    def __post_init__(self) -> None:
        if self.prompt_style != "auto":
            try:
                check_style(self.prompt_style)
            except ValueError as error:
                raise UserError(str(error)) from None
        if self.coordinates not in COORDINATE_CHOICES:
            raise UserError(f"--coordinates must be one of {', '.join(COORDINATE_CHOICES)}, got {self.coordinates!r}")
        if self.backend not in BACKENDS:
            raise UserError(f"--backend must be one of {', '.join(BACKENDS)}, got {self.backend!r}")
        if self.device not in DEVICES:
            raise UserError(f"--device must be auto, cpu or cuda, got {self.device!r}")
        try:
            check_vision_attention(self.vision_attention)
        except ValueError as error:
            raise UserError(str(error)) from None
        if self.batch_size < 1:
            raise UserError(f"--batch_size must be at least 1, got {self.batch_size}")
        if self.max_new_tokens < 1:
            raise UserError(f"--max_new_tokens must be at least 1, got {self.max_new_tokens}")
        for bound in ("min_pixels", "max_pixels"):
            if getattr(self, bound) is not None and getattr(self, bound) < 1:
                raise UserError(f"--{bound} must be at least 1 (or left out), got {getattr(self, bound)}")
        if self.temperature < 0:
            raise UserError(f"--temperature must be >= 0 (0 is greedy), got {self.temperature}")
        if self.min_pixels is not None and self.max_pixels is not None:  # None: the checkpoint's, checked there
            try:
                check_pixel_bounds(self.min_pixels, self.max_pixels)
            except ValueError as error:
                raise UserError(str(error)) from None

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

    @classmethod
    def default(cls, name: str) -> Any:
        """A field's default, for the argparse flags that set it (one home for each default)."""
        return next(f.default for f in fields(cls) if f.name == name)


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


def _flag(parser, name: str, help: str, **kwargs) -> None:
    """--NAME with GenerationSettings' default for the field of that name (one home for each default)."""
    parser.add_argument(
        f"--{name}", default=kwargs.pop("default", GenerationSettings.default(name)), help=help, **kwargs
    )


def add_generation_arguments(parser, prompting: bool = True, max_new_tokens: int | None = None) -> None:
    """The flags that say how a checkpoint is asked (decoding, system prompt, screenshot size; with ``prompting``
    also the prompt style and coordinates), with the generators' defaults (``max_new_tokens`` overrides that one);
    eval/test_aitw.py, eval/test_phone.py and ``python -m r1_gui.play`` share them."""
    tokens = max_new_tokens or GenerationSettings.default("max_new_tokens")
    _flag(parser, "max_new_tokens", f"new tokens per answer (default: {tokens})", type=int, default=tokens)
    _flag(parser, "temperature", "0 (default) is greedy; > 0 samples", type=float)
    if prompting:
        _flag(parser, "prompt_style", "as in training; auto (default): the architecture's own (Qwen3-VL: mobile_use; "
              "others: aguvis)", choices=PROMPT_STYLE_CHOICES)  # fmt: skip
        _flag(parser, "coordinates", "how the model writes points; auto: from the architecture and prompt style, "
              "as training", choices=COORDINATE_CHOICES)  # fmt: skip
    _flag(parser, "system_prompt", "replace the style's system prompt, as in training")
    add_pixel_arguments(parser)


def add_backend_arguments(parser) -> None:
    """The flags that say where and how the model runs (backend, device, dtype, vision attention, vLLM's memory
    share) and the sampling seed: eval/test_aitw.py's and eval/test_phone.py's."""
    _flag(parser, "backend", "hf (any machine) or vllm (GPU)", choices=BACKENDS)
    _flag(parser, "device", "hf backend device", choices=DEVICES)
    _flag(parser, "dtype", "weights dtype", choices=("auto", "bfloat16", "float16", "float32"))
    _flag(parser, "vision_attention", "hf backend: batched_windows runs the vision tower's windows (Qwen3-VL: its "
          "equal-size images) as one sdpa call per size (the same output), model as transformers does, auto batched "
          "on CUDA only (default)", choices=VISION_ATTENTION_CHOICES)  # fmt: skip
    _flag(parser, "generation_compile", "hf backend: generate on a static KV cache with a compiled decode step "
          "(the same greedy answers; the first batch pays the compilation; off by default until a GPU measures it "
          "faster)", action=argparse.BooleanOptionalAction)  # fmt: skip
    _flag(parser, "vllm_gpu_memory_utilization", "vllm backend only", type=float)
    _flag(parser, "seed", "sampling seed (matters with --temperature > 0)", type=int)


def add_pixel_arguments(parser) -> None:
    """--min_pixels and --max_pixels: left out, the checkpoint's saved processor's (what training used)."""
    for bound, what in (("min_pixels", "smallest"), ("max_pixels", "largest")):
        parser.add_argument(
            f"--{bound}",
            type=int,
            default=GenerationSettings.default(bound),
            help=f"{what} screenshot area (default: the checkpoint's saved processor's, as in training; a value "
            "that differs from it is warned about and recorded in the protocol card)",
        )
