"""The Python API of AITW evaluation: run a model (``evaluate``), score a predictions file (``evaluate_predictions``)
or score outputs in memory (``score_predictions``).

    from r1_gui.evaluation import evaluate, evaluate_predictions, score_predictions
    metrics = evaluate("runs/ckpt", "data/aitw-2k", split="test", output_dir="results/ckpt", batch_size=16)
    metrics = evaluate("runs/ckpt", "data/aitw-2k", "test", "results/ckpt", EvalConfig(batch_size=16))  # the same
    metrics = evaluate_predictions("preds.jsonl", "data/aitw-2k", split="test", output_dir="results/other")
    metrics = score_predictions(rows, {"id-1": "Action: ...\\nassistantos\\nmobile.back()", ...})

The settings are an ``EvalConfig`` (``r1_gui.evaluation.config``); keyword arguments are its fields, applied on
top of it. ``evaluate`` appends to OUTPUT_DIR/predictions.jsonl batch by batch and, run again, skips the ids already there
only when the model's files, the dataset split's rows and the generation settings are those recorded in
run_config.json (``fingerprint``); otherwise it refuses and says to pass ``overwrite`` or write elsewhere.
metrics.json, report.md and the gallery are always rebuilt from predictions.jsonl, restricted to the rows of this run
(the first ``max_samples`` rows of the split). A sample whose screenshot is missing fails alone, recorded with its
reason and counted as wrong, and is generated again by the next run. A model run and a predictions-file run never
share an OUTPUT_DIR without ``overwrite``.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from r1_gui.evaluation.config import EvalConfig, eval_config
from r1_gui.evaluation.metrics import SCORE_NAMES, aggregate, score_output
from r1_gui.evaluation.peers.benchmarks import benchmark_metrics, load_benchmark
from r1_gui.evaluation.run.fingerprint import dataset_fingerprint
from r1_gui.evaluation.run.predictions_file import (
    PREDICTIONS_FILE,
    EvaluationError,
    RecordWriter,
    read_predictions_file,
    read_records,
    write_records,
)
from r1_gui.evaluation.run.protocol import (
    protocol_card,
    resolve_image_settings,
    step_history,
    step_prompt_sha256,
    step_split,
)
from r1_gui.evaluation.run.resume import (
    METRICS_FILE,
    check_kind,
    check_resume,
    clear_run,
    earlier_run,
    model_record,
    write_run_config,
)
from r1_gui.evaluation.steps.report import write_report
from r1_gui.evaluation.steps.samples import (
    Sample,
    as_rows,
    image_reference,
    load_samples,
    screen_size,
)
from r1_gui.generation.generators import make_generator, require_vllm
from r1_gui.generation.prompting import model_type_of, resolve_prompting
from r1_gui.generation.settings import DEFAULT_MAX_PIXELS, DEFAULT_MIN_PIXELS, log_warnings
from r1_gui.gui_datasets import open_screenshot

logger = logging.getLogger(__name__)

# ------------------------------------------------------------------------------------------------ records


def scored_record(
    sample: Sample, output: str, coordinates: str, image_size: tuple[int, int] | None = None
) -> dict[str, Any]:
    """The predictions.jsonl line of a sample's raw output (see ``r1_gui.evaluation.run.predictions_file``)."""
    prediction, scores = score_output(
        output,
        sample.ground_truth,
        solution=sample.solution,
        bbox=sample.bbox,
        coordinates=coordinates,
        image_size=image_size,
    )
    return {
        "id": sample.id,
        "output": output,
        "prediction": prediction.to_dict() if prediction is not None else None,
        "ground_truth": sample.ground_truth.to_dict(),
        "scores": scores,
        "error": None,
    }


def failed_record(sample: Sample, reason: str) -> dict[str, Any]:
    """The line of a sample that could not be scored (missing image, no prediction): wrong on every metric."""
    return {
        "id": sample.id,
        "output": None,
        "prediction": None,
        "ground_truth": sample.ground_truth.to_dict(),
        "scores": dict.fromkeys(SCORE_NAMES, False),
        "error": reason,
    }


def _screen_size_of(rows, sample: Sample, min_pixels: int, max_pixels: int) -> tuple[int, int]:
    return screen_size(open_screenshot(image_reference(rows, sample.index)).size, min_pixels, max_pixels)


def _score_outputs(
    rows, samples: Sequence[Sample], outputs: Mapping[str, str], coordinates: str, min_pixels: int, max_pixels: int
) -> list[dict]:
    """Records for already generated outputs; a sample without an output fails with "no prediction"."""
    from tqdm import tqdm

    records = []
    for sample in tqdm(samples, desc="scoring", unit="sample"):
        if sample.id not in outputs:
            records.append(failed_record(sample, "no prediction for this id"))
            continue
        image_size = None
        if coordinates == "pixels":  # points are pixels of the resized screenshot: its size is needed
            try:
                image_size = _screen_size_of(rows, sample, min_pixels, max_pixels)
            except OSError as error:
                records.append(failed_record(sample, f"image: {error}"))
                continue
        records.append(scored_record(sample, outputs[sample.id], coordinates, image_size))
    missing = sum(sample.id not in outputs for sample in samples)
    if missing:
        logger.warning("%d of %d rows have no prediction; they count as unparsed", missing, len(samples))
    return records


# ------------------------------------------------------------------------------------------------ loading


def _load_rows(dataset, split: str, benchmark: str | None = None) -> tuple[Any, str]:
    """(rows, a name for reports) from a builder folder or Hub id, a datasets.Dataset, or a list of row dicts;
    with ``benchmark``, from a GUI-R1-format test file (``benchmarks.load_benchmark``; ``split`` is not used)."""
    if benchmark is not None and isinstance(dataset, (str, Path)):
        return load_benchmark(dataset, benchmark), str(Path(dataset))
    if isinstance(dataset, (str, Path)):
        from r1_gui.gui_datasets import load_gui_dataset

        path = Path(dataset)
        if (path.is_absolute() or str(dataset).startswith(".")) and not path.exists():
            raise EvaluationError(f"--dataset {dataset} does not exist (a dataset/raw_load_data.py output folder)")

        try:
            return as_rows(load_gui_dataset(dataset, split=split, flag="--dataset")), str(path)
        except (FileNotFoundError, ValueError) as error:
            raise EvaluationError(str(error)) from None
    return as_rows(dataset), "<in-memory rows>"


def _all_ids(rows) -> list[str]:
    ids = rows["id"] if hasattr(rows, "column_names") else [row.get("id") for row in rows]
    return [str(identifier) for identifier in ids]


def _finish(
    output_dir: Path,
    rows,
    samples: Sequence[Sample],
    settings: dict,
    gallery_size: int,
    benchmark: str | None,
    card: dict,
) -> dict:
    """Metrics, report and gallery from predictions.jsonl, for this run's samples: the protocol ``card`` first,
    then the metrics (``benchmark``: its metrics too, under "benchmark")."""
    by_id = {record["id"]: record for record in read_records(output_dir / PREDICTIONS_FILE)}
    missing = [sample.id for sample in samples if sample.id not in by_id]
    if missing:
        raise EvaluationError(f"{output_dir / PREDICTIONS_FILE} lacks {len(missing)} samples, e.g. {missing[:3]}")
    records = [by_id[sample.id] for sample in samples]
    metrics = {"protocol": card, **aggregate(records)}
    if benchmark is not None:
        metrics["benchmark"] = benchmark_metrics(benchmark, records, rows)
    (output_dir / METRICS_FILE).write_text(json.dumps(metrics, indent=2) + "\n")
    write_report(output_dir, metrics, records, samples, rows, settings, gallery_size)
    return metrics


# --------------------------------------------------------------------------------------------------- API


def evaluate(
    model_name_or_path: str | Path,
    dataset: Any,
    split: str = "test",
    output_dir: str | Path = "results/eval",
    config: EvalConfig | None = None,
    **overrides: Any,
) -> dict:
    """Generate an action for every row of ``dataset[split]`` (first ``config.max_samples``), score it, and write
    OUTPUT_DIR/{predictions.jsonl, metrics.json, report.md, gallery/, run_config.json}. Returns the metrics.

    ``dataset``: a builder output folder or Hub id, a datasets.Dataset, or a list of row dicts. ``config``: every
    setting (``EvalConfig``; default: its defaults), with ``overrides`` (its fields as keywords) applied on top.
    ``system_prompt`` replaces the style's system prompt (give the text training used). ``prompt_style`` "auto" is
    the architecture's (``prompts.default_prompt_style``), ``coordinates`` "auto"
    ``prompts.default_coordinates(model_type, prompt_style)``. Rows already in predictions.jsonl are not generated
    again (no model is loaded when none is left) when its model files, dataset rows and settings are this run's (see
    ``fingerprint``), else EvaluationError; those that failed on their screenshot are retried. ``overwrite``
    deletes the earlier evaluation files (``RUN_FILES``, the gallery's PNGs) and starts over. ``benchmark``
    (``benchmarks.BENCHMARKS``): ``dataset`` is that benchmark's GUI-R1-format test file, and its metrics are added.
    """
    config = unresolved = eval_config(config, **overrides)
    if config.backend == "vllm":
        require_vllm()
    rows, source = _load_rows(dataset, split, config.benchmark)
    samples = load_samples(rows, max_samples=config.max_samples, required=("id", "image", "problem", "solution"))
    config = config.prompting_resolved(model_type_of(model_name_or_path))
    config, image, warnings = resolve_image_settings(config, model_name_or_path)
    settings = {
        "model_name_or_path": str(Path(model_name_or_path)),
        "dataset": source,
        "split": split,
        "backend": config.backend,
        "prompt_style": config.prompt_style,
        "system_prompt": config.system_prompt,
        "coordinates": config.coordinates,
        "max_new_tokens": config.max_new_tokens,
        "temperature": config.temperature,
        "min_pixels": config.min_pixels,
        "max_pixels": config.max_pixels,
        "seed": config.seed,
        **({"benchmark": config.benchmark} if config.benchmark else {}),  # AITW runs record none, as before
    }
    output_dir = Path(output_dir)
    earlier = None if config.overwrite else earlier_run(output_dir)
    fingerprint, model_files = model_record(model_name_or_path, earlier)
    settings |= {"model_fingerprint": fingerprint, "dataset_fingerprint": dataset_fingerprint(rows)}
    run_config = {**settings, **model_files}
    check_resume(output_dir, earlier, run_config)
    log_warnings(warnings)
    # The model loads before any file is written or cleared: a model that does not load leaves the folder as it was.
    to_generate = config.overwrite or _pending(output_dir / PREDICTIONS_FILE, samples, dry=True)
    generator = make_generator(model_name_or_path, config) if to_generate else None
    if config.overwrite:
        clear_run(output_dir)
    write_run_config(output_dir, run_config)
    pending = _pending(output_dir / PREDICTIONS_FILE, samples)
    if pending:
        generate_records(generator, rows, pending, output_dir / PREDICTIONS_FILE, config.batch_size)
    card = protocol_card(
        "benchmark" if config.benchmark else "steps",
        config,
        image=image,
        history=step_history([sample.problem for sample in samples]),
        split=step_split(
            rows, len(samples), source, None if config.benchmark else split, settings["dataset_fingerprint"]
        ),
        prompt_sha256=step_prompt_sha256(config.prompt_style, config.coordinates, config.system_prompt),
        model={"name_or_path": str(model_name_or_path), "fingerprint": fingerprint},
        unresolved=unresolved,
        warnings=warnings,
    )
    return _finish(output_dir, rows, samples, settings, config.gallery_size, config.benchmark, card)


def _pending(path: Path, samples: Sequence[Sample], dry: bool = False) -> list[Sample]:
    """The samples still to generate: those not in predictions.jsonl, and those whose screenshot failed (their lines
    are removed, so the retry's lines replace them). The resume is said as a warning: the demo shows no INFO.
    ``dry``: only the list; the file is left as it is and nothing is said."""
    records = read_records(path, repair=not dry)
    wanted = {sample.id for sample in samples}
    retry = {r["id"] for r in records if r["id"] in wanted and str(r.get("error") or "").startswith("image:")}
    if dry:
        return [sample for sample in samples if sample.id in retry or sample.id not in {r["id"] for r in records}]
    if retry:
        write_records(path, [record for record in records if record["id"] not in retry])
    done = {record["id"] for record in records} - retry
    pending = [sample for sample in samples if sample.id not in done]
    if len(pending) < len(samples) or retry:
        logger.warning(
            "resuming %s (same model files, dataset rows and settings): %d of %d samples already there, %d to "
            "generate (%d retried after failing on their screenshot); --overwrite starts over",
            path, len(samples) - len(pending), len(samples), len(pending), len(retry),
        )  # fmt: skip
    return pending


def generate_records(generator, rows, samples: Sequence[Sample], path: str | Path, batch_size: int) -> float:
    """Generate, score and append the records of ``samples`` batch by batch; returns samples per second."""
    from tqdm import tqdm

    start = time.perf_counter()
    with RecordWriter(path) as writer, tqdm(total=len(samples), desc="evaluating", unit="sample") as bar:
        for first in range(0, len(samples), batch_size):
            batch = samples[first : first + batch_size]
            records, ready = {}, []
            for sample in batch:
                try:
                    ready.append((sample, open_screenshot(image_reference(rows, sample.index))))
                except OSError as error:
                    logger.warning("sample %s fails: %s", sample.id, error)
                    records[sample.id] = failed_record(sample, f"image: {error}")
            outputs = generator.generate([{"problem": sample.problem, "image": image} for sample, image in ready])
            for (sample, image), output in zip(ready, outputs, strict=True):
                size = generator.screen_size(image.size)
                records[sample.id] = scored_record(sample, output, generator.coordinates, size)
            writer.write(records[sample.id] for sample in batch)
            bar.update(len(batch))
    seconds = time.perf_counter() - start
    speed = len(samples) / seconds if seconds > 0 else float("inf")
    logger.info(
        "generated %d samples in %.1f s: %.2f samples/s at batch size %d", len(samples), seconds, speed, batch_size
    )
    return speed


def evaluate_predictions(
    predictions: str | Path,
    dataset: Any,
    split: str = "test",
    output_dir: str | Path = "results/eval",
    config: EvalConfig | None = None,
    **overrides: Any,
) -> dict:
    """Score an existing predictions file (JSON lines ``{"id", "output"}``) without loading a model, and write the
    same files as ``evaluate`` (predictions.jsonl is rewritten). Returns the metrics. An OUTPUT_DIR holding a model
    run's predictions (or predictions of unknown origin) is refused unless ``overwrite``. Of ``config`` (and
    ``overrides``, its fields as keywords) this uses max_samples, prompt_style, coordinates, min_pixels, max_pixels,
    gallery_size, overwrite and benchmark; the generation settings have nothing to act on.

    Policy: a malformed line, a repeated id or an id not in the split is an EvaluationError naming the line; rows
    without a prediction count as unparsed (error "no prediction for this id", listed in the report); predictions
    for rows beyond ``max_samples`` are ignored. ``prompt_style`` "auto" is aguvis and ``coordinates`` "auto" is
    ``default_coordinates`` for an unknown architecture (aguvis: normalized, think_answer: grid1000, mobile_use: grid999); "pixels" opens each screenshot
    for its size.
    """
    config = unresolved = eval_config(config, **overrides)
    rows, source = _load_rows(dataset, split, config.benchmark)
    samples = load_samples(rows, max_samples=config.max_samples)
    outputs = read_predictions_file(predictions, _all_ids(rows))
    config, image, warnings = resolve_image_settings(config.prompting_resolved(None))
    coordinates = config.coordinates
    min_pixels, max_pixels = config.min_pixels, config.max_pixels
    settings = {
        "predictions": str(Path(predictions)),
        "dataset": source,
        "split": split,
        "prompt_style": config.prompt_style,
        "coordinates": coordinates,
        "min_pixels": min_pixels,
        "max_pixels": max_pixels,
        **({"benchmark": config.benchmark} if config.benchmark else {}),
    }
    output_dir = Path(output_dir)
    log_warnings(warnings)
    records = _score_outputs(rows, samples, outputs, coordinates, min_pixels, max_pixels)
    ignored = len(set(outputs) - {sample.id for sample in samples})
    if ignored:
        logger.info("%d predictions are for rows beyond --max_samples; ignored", ignored)
    card = protocol_card(
        "predictions",
        config,
        image=image,
        history=step_history([sample.problem for sample in samples]),
        split=step_split(rows, len(samples), source, None if config.benchmark else split),
        prompt_sha256=None,  # written by whoever made the predictions
        generated=False,
        unresolved=unresolved,
        warnings=warnings,
    )
    return write_scored_run(
        output_dir, rows, samples, records, settings, config.overwrite, config.gallery_size, config.benchmark, card
    )


def write_scored_run(
    output_dir: Path,
    rows,
    samples: Sequence[Sample],
    records: list[dict],
    settings: dict,
    overwrite: bool,
    gallery_size: int,
    benchmark: str | None,
    card: dict,
) -> dict:
    """Write the scored records of a predictions file as a run into ``output_dir`` (predictions.jsonl rewritten
    atomically, run_config.json, then ``_finish``'s files, with the protocol ``card``); returns the metrics. A folder holding a model run's (or
    unknown) predictions is refused unless ``overwrite``, which first deletes the earlier run's files: so read the
    predictions before calling it, they may be this very folder's predictions.jsonl."""
    if overwrite:
        clear_run(output_dir)
    else:
        check_kind(output_dir, earlier_run(output_dir), "predictions")
    write_records(output_dir / PREDICTIONS_FILE, records)  # atomic: predictions may be this very file
    write_run_config(output_dir, settings)
    return _finish(output_dir, rows, samples, settings, gallery_size, benchmark, card)


def score_predictions(
    dataset_rows: Any,
    predictions: Mapping[str, str] | Iterable[dict],
    *,
    coordinates: str = "normalized",
    min_pixels: int = DEFAULT_MIN_PIXELS,
    max_pixels: int = DEFAULT_MAX_PIXELS,
) -> dict:
    """The metrics of raw outputs against dataset rows, in memory (no files): ``predictions`` is {id: output} or
    ``[{"id", "output"}, ...]``. Rows without an output count as unparsed; an id not among the rows raises."""
    rows = as_rows(dataset_rows)
    samples = load_samples(rows)
    if not isinstance(predictions, Mapping):
        predictions = {str(entry["id"]): entry["output"] for entry in predictions}
    unknown = sorted(set(predictions) - {sample.id for sample in samples})
    if unknown:
        raise EvaluationError(f"{len(unknown)} prediction ids are not among the rows, e.g. {unknown[:3]}")
    coordinates = resolve_prompting("aguvis", coordinates, None)[1]
    return aggregate(_score_outputs(rows, samples, predictions, coordinates, min_pixels, max_pixels))
