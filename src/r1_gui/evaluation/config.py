"""``EvalConfig``: every setting of an evaluation run: how the checkpoint is asked (a ``GenerationSettings``, the
generators' settings, which it extends) and how the run is kept.

eval/test_aitw.py builds it once from its arguments (``EvalConfig.from_args``); ``evaluate``,
``evaluate_predictions``, ``make_generator``, ``HFGenerator`` and ``VLLMGenerator`` take it. The keyword arguments
those functions still accept are the same fields, applied on top of the config (``EvalConfig.with_settings``).
Each field is named as its command-line flag. What is evaluated (model, dataset, split, output folder) is passed
beside the config, not in it. Light: imports neither torch nor transformers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from r1_gui.evaluation.errors import EvaluationError
from r1_gui.evaluation.presets import PRESETS
from r1_gui.flags import flag, flag_of
from r1_gui.generation.settings import GenerationSettings
from r1_gui.gui_datasets import RowLimit


@dataclass(frozen=True)
class EvalConfig(GenerationSettings):
    """How a checkpoint is asked (``GenerationSettings``' fields) and how a run is kept; the fields are the flags of
    eval/test_aitw.py."""

    WHAT = "evaluation"

    protocol: str | None = flag(
        None,
        "The settings a peer's own evaluation used (r1v: R1-V-GUI-Agent's eval/test_aitw.py; guir1: GUI-R1's "
        "inference scripts) or r1_gui's AITW setting (aitw); flags given beside it win. See "
        "r1_gui/evaluation/presets.py for where each value comes from and what is not reproduced.",
        choices=tuple(PRESETS),
    )
    # -- the run -----------------------------------------------------------------------------------------------
    max_samples: int | None = flag_of(RowLimit, "max_samples")
    benchmark: str | None = flag(
        None,
        "Evaluate a GUI-R1-format test file of this benchmark (--dataset) and add its metrics (r1_gui's and GUI-R1's "
        "guir1_*); see r1_gui/evaluation/peers/benchmarks.py.",
    )
    gallery_size: int = flag(16, "Annotated screenshots in the report; 0: none.")
    overwrite: bool = flag(
        False,
        "Start over: delete OUTPUT_DIR's earlier evaluation files (predictions.jsonl or episodes.jsonl, metrics.json, "
        "report.md, run_config.json, its pictures; nothing else) instead of resuming from them. Without it a rerun "
        "resumes only when the model's files, the data and the settings are those recorded, and refuses otherwise.",
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.protocol is not None and self.protocol not in PRESETS:
            raise EvaluationError(f"--protocol must be one of {', '.join(PRESETS)}, got {self.protocol!r}")


@dataclass(frozen=True)
class EvalOutput:
    """Where an evaluation (eval/test_aitw.py, eval/test_phone.py) writes; beside the config, not in it."""

    output_dir: str | None = flag(
        None,
        "Folder for the evaluation's files: predictions.jsonl (eval/test_aitw.py) or episodes.jsonl "
        "(eval/test_phone.py), metrics.json, report.md and run_config.json.",
    )


def eval_config(config: EvalConfig | None = None, **settings: Any) -> EvalConfig:
    """``config`` (default: all defaults) with ``settings`` applied: what every function taking both starts with."""
    return (config or EvalConfig()).with_settings(**settings)
