"""``EvalConfig``: every setting of an evaluation run and of the generators, in one place.

eval/test_aitw.py builds it once from its arguments (``EvalConfig.from_args``); ``evaluate``,
``evaluate_predictions``, ``make_generator``, ``HFGenerator`` and ``VLLMGenerator`` take it, and so do the other
programs that ask a checkpoint as the evaluation does (``python -m r1_gui.play --model_name_or_path``). The keyword arguments
those functions still accept are the same fields, applied on top of the config (``EvalConfig.with_settings``).
Each field is named as its command-line flag. What is evaluated (model, dataset, split, output folder) is passed
beside the config, not in it. Light: imports neither torch nor transformers.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field, fields, replace
from typing import Any

from r1_gui.actions import COORDINATE_SYSTEMS, check_pixel_bounds
from r1_gui.evaluation.errors import EvaluationError
from r1_gui.evaluation.peers.presets import PRESETS
from r1_gui.prompts import check_style
from r1_gui.vision_attention import check_vision_attention

BACKENDS = ("hf", "vllm")
DEVICES = ("auto", "cpu", "cuda")
COORDINATE_CHOICES = ("auto", *COORDINATE_SYSTEMS)
DEFAULT_MIN_PIXELS = 3136  # as training (GUIDataArguments): the bounds of a model folder that saved none
DEFAULT_MAX_PIXELS = 501760


@dataclass(frozen=True)
class EvalConfig:
    """How a checkpoint is asked and how a run is kept; the fields are the flags of eval/test_aitw.py."""

    # -- how the checkpoint is asked (the generators; recorded in run_config.json, a resume must match) ---------
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
        metadata={"help": "hf backend: a static KV cache and a compiled decode step (r1_gui.compiled_generation)"},
    )
    vllm_gpu_memory_utilization: float = field(default=0.9, metadata={"help": "vllm backend only"})
    batch_size: int = field(default=16, metadata={"help": "prompts per generate call"})
    images_per_prompt: int = field(
        default=1, metadata={"help": "vllm backend: screenshots one prompt may hold (episodes: --history_images)"}
    )
    protocol: str | None = field(
        default=None, metadata={"help": "the --protocol preset these settings started from (presets.PRESETS)"}
    )
    # -- the run -----------------------------------------------------------------------------------------------
    max_samples: int | None = field(default=None, metadata={"help": "evaluate the first N rows only; None: all"})
    benchmark: str | None = field(
        default=None, metadata={"help": "the dataset is this benchmark's GUI-R1-format test file (benchmarks.py)"}
    )
    gallery_size: int = field(default=16, metadata={"help": "annotated screenshots in the report; 0: none"})
    overwrite: bool = field(
        default=False, metadata={"help": "delete the earlier evaluation files in the output folder and start over"}
    )

    def __post_init__(self) -> None:
        if self.prompt_style != "auto":
            try:
                check_style(self.prompt_style)
            except ValueError as error:
                raise EvaluationError(str(error)) from None
        if self.coordinates not in COORDINATE_CHOICES:
            raise EvaluationError(
                f"--coordinates must be one of {', '.join(COORDINATE_CHOICES)}, got {self.coordinates!r}"
            )
        if self.backend not in BACKENDS:
            raise EvaluationError(f"--backend must be one of {', '.join(BACKENDS)}, got {self.backend!r}")
        if self.device not in DEVICES:
            raise EvaluationError(f"--device must be auto, cpu or cuda, got {self.device!r}")
        try:
            check_vision_attention(self.vision_attention)
        except ValueError as error:
            raise EvaluationError(str(error)) from None
        if self.batch_size < 1:
            raise EvaluationError(f"--batch_size must be at least 1, got {self.batch_size}")
        if self.max_new_tokens < 1:
            raise EvaluationError(f"--max_new_tokens must be at least 1, got {self.max_new_tokens}")
        for bound in ("min_pixels", "max_pixels"):
            if getattr(self, bound) is not None and getattr(self, bound) < 1:
                raise EvaluationError(f"--{bound} must be at least 1 (or left out), got {getattr(self, bound)}")
        if self.protocol is not None and self.protocol not in PRESETS:
            raise EvaluationError(f"--protocol must be one of {', '.join(PRESETS)}, got {self.protocol!r}")
        if self.temperature < 0:
            raise EvaluationError(f"--temperature must be >= 0 (0 is greedy), got {self.temperature}")
        if self.min_pixels is not None and self.max_pixels is not None:  # None: the checkpoint's, checked there
            try:
                check_pixel_bounds(self.min_pixels, self.max_pixels)
            except ValueError as error:
                raise EvaluationError(str(error)) from None

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> EvalConfig:
        """The config of a command line: every field whose flag the parser has (a flag is named as its field)."""
        return cls(**{f.name: getattr(args, f.name) for f in fields(cls) if hasattr(args, f.name)})

    def with_settings(self, **settings: Any) -> EvalConfig:
        """This config with some fields replaced (the keyword front of the API); an unknown name is a TypeError."""
        unknown = sorted(set(settings) - {f.name for f in fields(self)})
        if unknown:
            raise TypeError(f"unknown evaluation setting(s) {', '.join(unknown)}; valid: {', '.join(field_names())}")
        return replace(self, **settings) if settings else self


def field_names() -> list[str]:
    return [f.name for f in fields(EvalConfig)]


def eval_config(config: EvalConfig | None = None, **settings: Any) -> EvalConfig:
    """``config`` (default: all defaults) with ``settings`` applied: what every function taking both starts with."""
    return (config or EvalConfig()).with_settings(**settings)


def default(name: str) -> Any:
    """A field's default, for the argparse flags that set it (one home for each default)."""
    return next(f.default for f in fields(EvalConfig) if f.name == name)
