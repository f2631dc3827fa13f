"""Writing the synthetic dataset: the records of every level as JSON and a screenshot per record.

    DIR/images/synthetic_<episode>_<step>.jpg
    DIR/synthetic-l1.json, DIR/synthetic-l2.json, DIR/synthetic-l3.json

Same seed and settings give byte-identical JSON and images. Everything is written into the builder's staging
folder (``r1_gui.builder.writers.staging``) and renamed into place at the end, so a run that fails or is
interrupted leaves no output folder and no partial files, and an earlier output it was to replace stays as it was.
"""

from __future__ import annotations

import io
import json
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image
from tqdm import tqdm

from r1_gui.builder.writers import check_output_dir, staging
from r1_gui.synthetic.aguvis_records import LEVELS, SUBSET, episode_records, image_name
from r1_gui.synthetic.episodes import (
    ACTION_TYPES,
    ALL_APPS,
    SyntheticConfig,
    check_counts,
    iter_episodes,
    synthetic_config,
)

MARKER = f"{SUBSET}-{LEVELS[0]}.json"  # written by every run: a folder holding it is an earlier output
OUTPUT_FILES = (
    *(f"{SUBSET}-{level}.json" for level in LEVELS),
    f"images/{SUBSET}_*.jpg",
)  # what --overwrite may replace
IMAGE_MODES = ("jpeg", "stub", "none")
STUB_JPEG_SIDE = 8


@dataclass(frozen=True)
class GeneratorConfig:
    """What one run of the generator writes: which episodes, on which screens, with which images."""

    episodes: int | None = field(default=None, metadata={"help": "number of episodes (give this or records)"})
    records: int | None = field(
        default=None, metadata={"help": "stop at exactly this many records (the last episode may end early)"}
    )
    seed: int = field(default=0, metadata={"help": "every episode's generator is drawn from it"})
    synthetic: SyntheticConfig = field(
        default_factory=SyntheticConfig, metadata={"help": "screen size, grid, task mix, click placement, apps"}
    )
    images: str = field(
        default="jpeg",
        metadata={"help": "jpeg renders every screenshot, stub writes an 8x8 placeholder JPEG per record, none none"},
    )
    jpeg_quality: int = field(default=90, metadata={"help": "quality of the rendered JPEG screenshots"})

    def __post_init__(self):
        if self.images not in IMAGE_MODES:
            raise ValueError(f"images must be 'jpeg', 'stub' or 'none', got {self.images!r}")
        check_counts(self.episodes, self.records)


def generate(
    output_dir: str | Path,
    episodes: int | None = None,
    seed: int = 0,
    *,
    records: int | None = None,
    width: int = 540,
    height: int = 1170,
    grid: tuple[int, int] = (5, 4),
    task_mix: list[str] | tuple[str, ...] | None = None,
    click_jitter: float = 0.0,
    decimals: int = 4,
    apps: int = ALL_APPS,
    images: str = "jpeg",
    jpeg_quality: int = 90,
    overwrite: bool = False,
    progress: bool = True,
) -> dict:
    """Write the synthetic dataset into output_dir and return a summary (counts, paths, speed); the settings are
    ``GeneratorConfig``'s (``task_mix`` None: every task), see ``write_dataset``."""
    synthetic = synthetic_config(width, height, grid, task_mix, click_jitter, decimals, apps)
    config = GeneratorConfig(episodes, records, seed, synthetic, images, jpeg_quality)
    return write_dataset(output_dir, config, overwrite=overwrite, progress=progress)


def write_dataset(output_dir: str | Path, config: GeneratorConfig, *, overwrite: bool, progress: bool) -> dict:
    """Write the dataset ``config`` describes into output_dir; a summary (counts, paths, speed).

    A non-empty output_dir is refused unless overwrite=True, and even then unless it holds only an earlier output
    of this generator (``OUTPUT_FILES``). The files are staged (see the module docstring); the staging also removes
    the folders a killed run left.
    """
    output_dir = Path(output_dir)
    check_output_dir(output_dir, overwrite, marker=MARKER, ours=OUTPUT_FILES)
    with staging(output_dir) as folder:
        summary = _write_files(folder, config, progress)
    summary["output_dir"] = str(output_dir)
    summary["files"] = {level: str(output_dir / f"{SUBSET}-{level}.json") for level in LEVELS}
    summary["image_dir"] = str(output_dir / "images")
    return summary


def _write_files(folder: Path, config: GeneratorConfig, progress: bool) -> dict:
    episodes, records, images, size = config.episodes, config.records, config.images, config.synthetic.size
    image_dir = folder / "images"
    if images != "none":
        image_dir.mkdir()
    stub = _stub_jpeg() if images == "stub" else b""
    by_level: dict[str, list[dict]] = {level: [] for level in LEVELS}
    actions, tasks, rendered, start = Counter(), Counter(), 0, time.perf_counter()
    bar = tqdm(
        total=records or episodes, unit="record" if records else "episode", disable=not progress, desc="synthetic"
    )
    for episode_id, episode in iter_episodes(config.synthetic, config.seed, episodes, records):
        for level, level_records in episode_records(episode_id, episode, size).items():
            by_level[level].extend(level_records)
        for number, step in enumerate(episode.steps):
            path = image_dir / image_name(episode_id, number)
            if images == "jpeg":
                step.screen.render(size).save(path, "JPEG", quality=config.jpeg_quality)
                rendered += 1
            elif images == "stub":
                path.write_bytes(stub)
        actions.update(step.action_type for step in episode.steps)
        tasks[episode.task] += 1
        bar.update(len(episode.steps) if records else 1)
    bar.close()
    for level, level_records in by_level.items():
        text = json.dumps(level_records, ensure_ascii=False, indent=1)
        (folder / f"{SUBSET}-{level}.json").write_text(text + "\n", encoding="utf-8")
    seconds = time.perf_counter() - start
    return {
        "episodes": sum(tasks.values()),
        "records": len(by_level["l1"]),
        "images": images,
        "images_rendered": rendered,
        "seconds": round(seconds, 3),
        "images_per_second": round(rendered / seconds, 1) if rendered else None,
        "action_counts": {name: actions[name] for name in ACTION_TYPES if actions[name]},
        "task_counts": dict(tasks),
    }


def _stub_jpeg() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (STUB_JPEG_SIDE, STUB_JPEG_SIDE), (128, 128, 128)).save(buffer, "JPEG", quality=50)
    return buffer.getvalue()
