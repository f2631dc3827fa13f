"""``build()``: read the inputs, skip and count bad records, sample, split by episode, write, export, report."""

from __future__ import annotations

import json
import logging
import os
import random
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tqdm import tqdm

from .guir1 import ImageColumn, ParquetRows, guir1_example, load_guir1
from .sampling import select, split_by_episode
from .sources import (
    GUIR1_HINT,
    SKIP_REASONS,
    BadRecord,
    Example,
    aguvis_example,
    is_parquet,
    level_in_name,
    load_aguvis,
)
from .writers import (
    EXPORTS,
    check_output_dir,
    dataset_card,
    export_guir1,
    export_llamafactory,
    split_schema,
    staging,
    write_embedded_images,
    write_split,
)

logger = logging.getLogger(__name__)

INPUT_FORMATS = ("aguvis", "guir1", "verl_gui")
SKIP_EXAMPLES = 3  # per reason, in the report: where to look first


class BuildError(ValueError):
    """A build that cannot go on: a --strict stop, or no usable record at all."""


@dataclass
class BuildConfig:
    """Everything a build depends on; recorded as "arguments" in build_report.json."""

    inputs: list[str]  # Aguvis stage-2 JSON files, or GUI-R1 parquet files with input_format="guir1"
    image_dir: str | None  # screenshots folder; None: each input's sibling images/ folder (see resolve_sources)
    output_dir: str  # created by renaming a temporary folder beside it at the end
    input_format: str = "aguvis"  # "aguvis" or "guir1"
    num_samples: int | None = None  # rows in train + test; None or more than available: all of them
    test_size: float = 0.1  # fraction of the rows in the test split, in [0, 1); whole episodes only
    seed: int = 42  # sampling and splitting; the same seed and inputs give identical files
    balance_actions: bool = False  # equal quota per action type instead of a uniform sample
    strict: bool = False  # stop at the first bad record instead of skipping it
    embed_images: bool = False  # store image bytes (a datasets.Image feature) instead of paths
    verify_images: bool = False  # open every image with PIL (slow) instead of only checking the file
    export: tuple[str, ...] = ()  # extra formats: "llamafactory", "guir1"
    overwrite: bool = False  # replace an earlier build in output_dir (never a folder holding other files)
    progress: bool = True  # tqdm progress bars

    def __post_init__(self) -> None:
        self.inputs = [str(path) for path in ([self.inputs] if isinstance(self.inputs, (str, Path)) else self.inputs)]
        self.image_dir = None if self.image_dir is None else str(self.image_dir)
        self.output_dir = str(self.output_dir)
        self.export = tuple(dict.fromkeys([self.export] if isinstance(self.export, str) else self.export))
        if not self.inputs:
            raise ValueError("no input files: pass --input FILE [FILE ...]")
        if self.input_format not in INPUT_FORMATS:
            raise ValueError(f"input_format must be one of {', '.join(INPUT_FORMATS)}, got {self.input_format!r}")
        if self.num_samples is not None and self.num_samples < 1:
            raise ValueError(f"num_samples must be at least 1 (or None for all), got {self.num_samples}")
        if not 0 <= self.test_size < 1:
            raise ValueError(f"test_size is the test fraction, in [0, 1); got {self.test_size}")
        unknown = [name for name in self.export if name not in EXPORTS]
        if unknown:
            raise ValueError(f"unknown export format(s) {', '.join(unknown)}; valid: {', '.join(EXPORTS)}")


@dataclass
class Source:
    path: Path
    image_dir: str  # absolute
    records: int = 0
    kept: int = 0


@dataclass
class Skips:
    counts: Counter = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def add(self, bad: BadRecord, where: str) -> None:
        self.counts[bad.reason] += 1
        shown = self.examples.setdefault(bad.reason, [])
        if len(shown) < SKIP_EXAMPLES:
            shown.append(f"{where}: {bad.detail}")


def resolve_sources(config: BuildConfig, output_dir: Path) -> list[Source]:
    """Check the inputs exist and pick each one's image folder: --image_dir, else the input's sibling images/
    folder when it exists (the synthetic twin's layout), else (GUI-R1 only) the input's own folder."""
    sources = []
    for name in config.inputs:
        path = Path(name)
        if path.is_dir():
            files = sorted(p.name for p in path.iterdir() if p.suffix in (".json", ".parquet"))[:3]
            example = f" (it holds {', '.join(files)}, ...)" if files else ""
            raise IsADirectoryError(
                f"--input {path} is a folder{example}: give the files themselves, e.g. --input {path}/aitw-l1.json"
            )
        if not path.is_file():
            raise FileNotFoundError(f"input file {path} does not exist")
        if config.input_format == "aguvis" and is_parquet(path):
            raise ValueError(f"{path} is a parquet file, not Aguvis stage-2 JSON ({GUIR1_HINT})")
        if config.image_dir is not None:
            if not Path(config.image_dir).is_dir():
                raise FileNotFoundError(f"--image_dir {config.image_dir} is not a folder")
            image_dir = Path(config.image_dir)
        elif (path.parent / "images").is_dir():
            image_dir = path.parent / "images"
        elif config.input_format in ("guir1", "verl_gui"):
            image_dir = path.parent
        else:
            raise ValueError(
                f"no --image_dir given and {path.parent / 'images'} does not exist: pass --image_dir, the folder of "
                "the screenshots the records name (e.g. aitw-v1/images)"
            )
        sources.append(Source(path, os.path.abspath(image_dir)))
    target = output_dir.resolve()
    for source in sources:
        for inside in (source.path.resolve(), Path(source.image_dir).resolve()):
            if inside == target or target in inside.parents:
                raise ValueError(f"{inside} is inside --output_dir {output_dir}: building would replace it")
    return sources


def _open_source(source: Source, config: BuildConfig, taken: dict[str, str], output_images: str):
    """(records, make): the raw records of one input, and the function that turns one of them into an Example."""
    if config.input_format == "aguvis":
        records, file_level = load_aguvis(source.path), level_in_name(source.path)

        def make(index, record):
            return aguvis_example(record, source.image_dir, source.path.name, file_level, taken, config.verify_images)

        return records, make
    from r1_gui.prompts import AGUVIS_SYSTEM_PROMPT  # the system prompt our problem/solution form goes with

    if config.input_format == "verl_gui":  # parquet with a screenshot column, as GUI-R1's: one row reader each
        from .verl_gui import first_images, load_verl_gui, verl_gui_example

        table, image_column, example = load_verl_gui(source.path), "images", verl_gui_example
        images = first_images(table)
    else:
        table, image_column, example = load_guir1(source.path), "image", guir1_example
        images = ImageColumn(table.column("image"))

    rows = ParquetRows(
        images, source.path, source.image_dir, output_images, taken, config.verify_images, AGUVIS_SYSTEM_PROMPT
    )
    return table.drop_columns([image_column]).to_pylist(), lambda index, record: example(record, index, rows)


def read_examples(sources: list[Source], config: BuildConfig, output_dir: Path, skips: Skips, timings: Counter):
    """Every usable example of every source, in input order; the first of two records with one id wins."""
    taken: dict[str, str] = {}  # id -> the file it was kept from
    examples: list[Example] = []
    output_images = str(output_dir.resolve() / "images")
    for source in sources:
        start, name = time.perf_counter(), source.path.name
        records, make = _open_source(source, config, taken, output_images)
        timings["read"] += time.perf_counter() - start
        start = time.perf_counter()
        for index, record in enumerate(tqdm(records, desc=name, unit="record", disable=not config.progress)):
            try:
                example = make(index, record)
            except BadRecord as bad:
                if config.strict:
                    raise BuildError(f"{source.path}: record {index}: {bad.reason}: {bad.detail}") from None
                skips.add(bad, f"{name}[{index}]")
                continue
            taken[example.id] = name
            examples.append(example)
            source.kept += 1
        source.records = len(records)
        timings["records"] += time.perf_counter() - start
        logger.info("%s: %d records, %d usable", source.path, source.records, source.kept)
    return examples


def _no_examples_error(sources: list[Source], skips: Skips) -> BuildError:
    if not skips.counts:  # not one record was read: nothing was skipped either
        files = ", ".join(str(s.path) for s in sources)
        return BuildError(f"no records in {files}: {'each file is' if len(sources) > 1 else 'the file is'} empty "
                          "(an empty list or table); give the files that hold the records")  # fmt: skip
    reasons = ", ".join(f"{reason} {count}" for reason, count in skips.counts.most_common())
    first = next(iter(skips.examples.values()), ["-"])[0]
    hint = ""
    if skips.counts and skips.counts.most_common(1)[0][0] == "missing_image":
        hint = f"; is --image_dir right? (looked in {', '.join(sorted({s.image_dir for s in sources}))})"
    return BuildError(f"no usable record in {', '.join(str(s.path) for s in sources)} ({reasons}; e.g. {first}){hint}")


def build(
    inputs,
    image_dir,
    output_dir,
    *,
    input_format: str = "aguvis",
    num_samples: int | None = None,
    test_size: float = 0.1,
    seed: int = 42,
    balance_actions: bool = False,
    strict: bool = False,
    embed_images: bool = False,
    verify_images: bool = False,
    export=(),
    overwrite: bool = False,
    progress: bool = True,
) -> dict:
    """Build OUTPUT_DIR/{train,test}.parquet (+ README.md, build_report.json, exports) and return the report.
    See the package docstring for the columns and rules; BuildConfig for each argument. The keyword front of
    ``build_from``."""
    return build_from(
        BuildConfig(
            inputs, image_dir, output_dir, input_format, num_samples, test_size, seed, balance_actions, strict,
            embed_images, verify_images, tuple(export), overwrite, progress,
        )
    )  # fmt: skip


def build_from(config: BuildConfig) -> dict:
    """``build`` of a ``BuildConfig`` (what the command line builds from its arguments)."""
    start = time.perf_counter()
    output = Path(config.output_dir)
    sources = resolve_sources(config, output)
    check_output_dir(output, config.overwrite)
    skips, timings = Skips(), Counter({"read": 0.0, "records": 0.0, "sample": 0.0, "write": 0.0, "export": 0.0})

    examples = read_examples(sources, config, output, skips, timings)
    if not examples:
        raise _no_examples_error(sources, skips)
    for reason, count in skips.counts.most_common():
        logger.warning("skipped %d record(s): %s, e.g. %s", count, reason, skips.examples[reason][0])

    phase = time.perf_counter()
    splits = sample_and_split(examples, config)
    notes = _sampling_notes(config, len(examples), splits)
    timings["sample"] = time.perf_counter() - phase

    with_bbox = any(e.bbox is not None for e in examples)
    with staging(output) as folder:
        write_outputs(folder, output.name, [s.path.name for s in sources], splits, with_bbox, config, timings)
        report = _report(config, sources, skips, examples, splits, with_bbox, notes, timings, start)
        report["files"] = sorted(
            str(path.relative_to(folder))
            for path in folder.rglob("*")
            if path.is_file() and path.parent.name != "images"
        ) + ["build_report.json"]
        (folder / "build_report.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    logger.info(
        "wrote %s: %d train and %d test rows from %d records in %.2f s (%.0f records/s)",
        output, report["train"], report["test"], report["records"], report["seconds"], report["records_per_s"],
    )  # fmt: skip
    return report


def sample_and_split(examples: list[Example], config: BuildConfig) -> dict[str, list[Example]]:
    """The seeded sample (uniform or balanced by action type), split into train and test by whole episodes."""
    sample_rng = random.Random(f"r1_gui.builder:{config.seed}:sample")
    chosen = select([e.action.type for e in examples], config.num_samples, sample_rng, config.balance_actions)
    selected = [examples[index] for index in chosen]
    split_rng = random.Random(f"r1_gui.builder:{config.seed}:split")
    test_episodes = split_by_episode([e.episode_id for e in selected], config.test_size, split_rng)
    return {
        "train": [e for e in selected if e.episode_id not in test_episodes],
        "test": [e for e in selected if e.episode_id in test_episodes],
    }


def write_outputs(
    folder: Path, name: str, inputs: list[str], splits: dict, with_bbox: bool, config: BuildConfig, timings: Counter
) -> None:
    """The parquet splits (an empty split gets no file), README.md, embedded GUI-R1 images and the exports."""
    phase = time.perf_counter()
    for rows in splits.values():
        write_embedded_images(folder, rows)
    schema = split_schema(config.embed_images, with_bbox)
    for split, rows in splits.items():
        if rows:
            write_split(folder / f"{split}.parquet", rows, schema, config.embed_images, config.progress)
    card = dataset_card(name, {split: len(rows) for split, rows in splits.items()}, inputs, with_bbox)
    (folder / "README.md").write_text(card, encoding="utf-8")
    timings["write"] = time.perf_counter() - phase
    phase = time.perf_counter()
    if "llamafactory" in config.export:
        export_llamafactory(folder, name, splits)
    if "guir1" in config.export:
        export_guir1(folder, splits, config.progress)
    if "verl_gui" in config.export:
        from .verl_gui import export_verl_gui

        export_verl_gui(folder, splits, config.progress)
    timings["export"] = time.perf_counter() - phase


def _sampling_notes(config: BuildConfig, available: int, splits: dict[str, list[Example]]) -> list[str]:
    notes = []
    if config.num_samples is not None and config.num_samples > available:
        notes.append(f"asked for {config.num_samples} samples but only {available} records are usable: took all")
    if config.test_size > 0 and not splits["test"]:
        notes.append("the test split is empty: too few rows or episodes for test_size; no test.parquet written")
    for note in notes:
        logger.warning(note)
    return notes


def _actions(examples: list[Example]) -> dict[str, int]:
    return dict(sorted(Counter(e.action.type for e in examples).items()))


def _report(config, sources, skips, examples, splits, with_bbox, notes, timings, start) -> dict:
    records, seconds = sum(source.records for source in sources), time.perf_counter() - start
    return {
        "output_dir": str(Path(config.output_dir).resolve()),
        "inputs": [
            {"path": str(s.path.resolve()), "image_dir": s.image_dir, "records": s.records, "kept": s.kept}
            for s in sources
        ],
        "seed": config.seed,
        "arguments": {**asdict(config), "export": list(config.export)},
        "records": records,
        "skipped": {reason: skips.counts[reason] for reason in SKIP_REASONS},
        "skipped_total": sum(skips.counts.values()),
        "skip_examples": skips.examples,
        "kept": len(examples),
        "requested": config.num_samples,
        "took_all": config.num_samples is None or config.num_samples >= len(examples),
        "selected": sum(len(rows) for rows in splits.values()),
        "train": len(splits["train"]),
        "test": len(splits["test"]),
        "episodes": {split: len({e.episode_id for e in rows}) for split, rows in splits.items()},
        "actions": {split: _actions(rows) for split, rows in splits.items()},
        "actions_kept": _actions(examples),
        "bbox_column": with_bbox,
        "notes": notes,
        "seconds": round(seconds, 3),
        "records_per_s": round(records / seconds, 1) if seconds > 0 else None,
        "timings": {name: round(value, 3) for name, value in timings.items()},
    }
