"""``EvalConfig``: every setting of an evaluation run: how the checkpoint is asked (a ``GenerationSettings``, the
generators' settings, which it extends) and how the run is kept.

eval/test_aitw.py builds it once from its arguments (``EvalConfig.from_args``); ``evaluate``,
``evaluate_predictions``, ``make_generator``, ``HFGenerator`` and ``VLLMGenerator`` take it. The keyword arguments
those functions still accept are the same fields, applied on top of the config (``EvalConfig.with_settings``).
Each field is named as its command-line flag. What is evaluated (model, dataset, split, output folder) is passed
beside the config, not in it. Light: imports neither torch nor transformers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from r1_gui.evaluation.errors import EvaluationError
from r1_gui.evaluation.presets import PRESETS
from r1_gui.generation.settings import GenerationSettings


@dataclass(frozen=True)
class EvalConfig(GenerationSettings):
    """How a checkpoint is asked (``GenerationSettings``' fields) and how a run is kept; the fields are the flags of
    eval/test_aitw.py."""

    WHAT = "evaluation"

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
        super().__post_init__()
        if self.protocol is not None and self.protocol not in PRESETS:
            raise EvaluationError(f"--protocol must be one of {', '.join(PRESETS)}, got {self.protocol!r}")


def eval_config(config: EvalConfig | None = None, **settings: Any) -> EvalConfig:
    """``config`` (default: all defaults) with ``settings`` applied: what every function taking both starts with."""
    return (config or EvalConfig()).with_settings(**settings)
