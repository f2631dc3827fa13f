"""Evaluate a GUI agent on AITW steps, or score another system's predictions with the same metrics.

    # a checkpoint (hf backend: batched, left padded, greedy)
    python eval/test_aitw.py --model_name_or_path runs/ckpt --dataset data/aitw-2k --split test --batch_size 16 \\
        --output_dir results/ckpt [--max_samples N] [--max_new_tokens 256] [--prompt_style aguvis] [--backend vllm]
    # an existing predictions file, JSON lines {"id": ..., "output": "<raw model text>"}; loads no model
    python eval/test_aitw.py --dataset data/aitw-2k --split test --predictions preds.jsonl --output_dir results/other
    # the field's benchmarks in GUI-R1's format (androidcontrol_high/_low, guiodyssey, screenspot, screenspot_v2,
    # screenspot_pro): --dataset is the test file; --predictions may also be GUI-R1's own inference output
    python eval/test_aitw.py --benchmark androidcontrol_high --dataset androidcontrol_high_test.parquet \
        --model_name_or_path runs/ckpt --output_dir results/ac_high [--protocol guir1]
    # compare two runs: each metric's difference, its paired 95% interval, and whether it is beyond noise
    python -m r1_gui.evaluation.stats.compare results/base results/ckpt

A predictions file must use the dataset's ids: a malformed line, a repeated id or an id the split lacks is an error
naming the line; rows without a prediction count as unparsed and are listed in the report.

Writes OUTPUT_DIR/predictions.jsonl (one line per sample, appended batch by batch: a rerun skips finished ids when
the model's files, the dataset split's rows and the settings are unchanged, refuses otherwise; --overwrite restarts),
metrics.json, report.md (tables, unparsed outputs, gallery/ of annotated screenshots) and run_config.json, and
prints the metric tables. Metrics: type_accuracy, param_accuracy, paper_param_accuracy (the original
R1-V-GUI-Agent comparison, exactly, bugs included), action_match_accuracy (AITW rules), step_success, parse_rate,
each with its 95% Wilson interval (KEY_ci95) and per ground-truth action type, and the confusion matrix of action
types. metrics.json and report.md open with the protocol card (r1_gui.evaluation.run.protocol): the prompt and its
hash, coordinates, min/max pixels and where they came from (left out, the checkpoint's saved processor's: what
training used), history, the split's rows and hash, decoding, the model's fingerprint, the r1_gui version.
"""

from __future__ import annotations

import argparse
import logging
import sys
from dataclasses import dataclass

from r1_gui.cli_errors import UserError, cli_main, command_parser, installed, on_interrupt, rerun_command
from r1_gui.evaluation.config import EvalConfig, EvalOutput
from r1_gui.evaluation.errors import EvaluationError
from r1_gui.evaluation.peers.benchmarks import BENCHMARKS
from r1_gui.evaluation.presets import apply_preset, flags_given
from r1_gui.flags import add_flags, flag
from r1_gui.generation import add_backend_arguments, add_generation_arguments
from r1_gui.generation.settings import AskedModel
from r1_gui.output_lock import output_folder_lock
from r1_gui.paths import check_output_folder

logger = logging.getLogger("r1_gui.evaluation")
BENCHMARK_NAMES = tuple(BENCHMARKS)


@dataclass(frozen=True)
class StepData:
    """What eval/test_aitw.py evaluates, beside how (``EvalConfig``): its own flags."""

    predictions: str | None = flag(
        None,
        'JSON lines {"id", "output"} to score instead of generating; with --benchmark also GUI-R1\'s own inference '
        "output (rows with pred_action, pred_coord, pred_input_text).",
    )
    dataset: str | None = flag(
        None,
        "dataset/raw_load_data.py output folder, or a Hub id; with --benchmark: the benchmark's GUI-R1-format test "
        "file (.parquet, .json, .jsonl). With a GUI-R1 inference output (--predictions) it is optional: given, the "
        "predictions are scored against its rows (which they must have been made from, row by row), else against the "
        "fields the output file carries.",
    )
    split: str = flag("test", "The split to evaluate.")


def command_line() -> argparse.ArgumentParser:
    """The parser of the command line, built from the flags' declarations."""
    parser = command_parser(__doc__, prog="eval/test_aitw.py")
    source = parser.add_mutually_exclusive_group(required=True)
    add_flags(source, AskedModel)
    add_flags(source, StepData, ["predictions"])
    add_flags(parser, StepData, ["dataset"])
    add_flags(parser, EvalConfig, ["benchmark"], choices={"benchmark": BENCHMARK_NAMES})
    add_flags(parser, StepData, ["split"])
    add_flags(parser, EvalOutput, required=["output_dir"])
    add_flags(parser, EvalConfig, ["max_samples", "batch_size"])
    add_generation_arguments(parser)
    add_flags(parser, EvalConfig, ["protocol"])
    add_backend_arguments(parser)
    add_flags(parser, EvalConfig, ["gallery_size", "overwrite"])
    return parser


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = command_line()
    args = parser.parse_args(argv)
    if args.dataset is None and not (args.benchmark and args.predictions):
        parser.error("--dataset is required (only --benchmark with a GUI-R1 --predictions file does without)")
    if args.predictions and args.backend == "vllm":
        parser.error("--backend applies to --model_name_or_path runs, not to --predictions")
    return args


@cli_main
def main(argv: list[str] | None = None) -> dict:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    check_output_folder(args.output_dir)  # a read-only folder fails now, not after the first batch
    with (
        output_folder_lock(args.output_dir),  # a second run into the folder is refused now, not after 5 minutes
        interrupt_keeps_predictions(args),  # Ctrl-C: one line, the predictions kept and the command that goes on
    ):
        metrics = run(args, argv)
    from r1_gui.evaluation.steps.report import summary

    print(summary(metrics))
    print(f"\nwrote {args.output_dir}/metrics.json, report.md and predictions.jsonl")
    return metrics


def run(args: argparse.Namespace, argv: list[str]) -> dict:
    """The metrics of the evaluation ``args`` ask for: a model run, a predictions file, or GUI-R1's inference output."""
    # Imported here so that --help and argument errors answer at once.
    from r1_gui.evaluation.steps.guir1_predictions import is_guir1_predictions, score_guir1_predictions
    from r1_gui.evaluation.steps.runner import evaluate, evaluate_predictions

    try:
        config = EvalConfig.from_args(args)  # every setting, once
        if args.protocol:
            config = apply_preset(config, args.protocol, flags_given(argv))
        if args.predictions and args.benchmark and is_guir1_predictions(args.predictions):
            return score_guir1_predictions(
                args.predictions,
                args.benchmark,
                args.output_dir,
                dataset=args.dataset,
                max_samples=config.max_samples,
                overwrite=config.overwrite,
                gallery_size=config.gallery_size,
            )
        if args.predictions:
            if args.dataset is None:  # parse_args let it go for a GUI-R1 inference output, which this file is not
                raise UserError(
                    f"--dataset is required: --predictions {args.predictions} is not a readable GUI-R1 inference "
                    "output (rows with pred_coord), so the test rows must come from --dataset"
                )
            return evaluate_predictions(args.predictions, args.dataset, args.split, args.output_dir, config)
        return evaluate(args.model_name_or_path, args.dataset, args.split, args.output_dir, config)
    except EvaluationError as error:
        raise UserError(str(error)) from error


def interrupt_keeps_predictions(args: argparse.Namespace):
    """`on_interrupt` of an evaluation: a Ctrl-C names the predictions written so far (a model run appends them batch
    by batch) and the command that goes on: the same one, which resumes (without --overwrite, which would delete
    them; a --predictions run keeps it, since it only scores again)."""
    from pathlib import Path

    from r1_gui.evaluation.run.predictions_file import PREDICTIONS_FILE

    path = Path(args.output_dir) / PREDICTIONS_FILE

    def kept() -> str:
        lines = path.read_bytes().count(b"\n") if path.is_file() else 0
        return f"{lines} predictions in {path}" if lines else ""

    def resume() -> str:
        return rerun_command(drop_switches=() if args.predictions else ("--overwrite",))

    return on_interrupt(kept, resume)


cli = installed(main)  # the installed command (pyproject.toml's [project.scripts]): main, returning nothing
