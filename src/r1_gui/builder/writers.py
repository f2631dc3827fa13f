"""Writing a build: the parquet splits, the dataset card that lets ``datasets.load_dataset(folder)`` find them,
the LLaMA-Factory and GUI-R1 exports, and the staging folder that is renamed into place only at the end."""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import socket
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from fnmatch import fnmatchcase
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from tqdm import tqdm

from .guir1 import guir1_row
from .sources import IMAGE_PLACEHOLDER, Example

DATASET_COLUMNS = (
    "id", "image", "problem", "solution", "instruction", "history", "thought", "action", "action_json",
    "episode_id", "step", "source", "bbox",
)  # fmt: skip
EXPORTS = ("llamafactory", "guir1", "verl_gui")
logger = logging.getLogger(__name__)
EMBED_BATCH_ROWS = 256  # rows per parquet row group when images are embedded: bounds memory on large builds


def write_parquet(path: Path, schema: pa.Schema, batches: Iterable[dict[str, list]]) -> None:
    """Write column batches to one parquet file (one row group each). The single place parquet is written."""
    with pq.ParquetWriter(path, schema) as writer:
        for columns in batches:
            writer.write_table(pa.Table.from_pydict(columns, schema=schema))


def split_schema(embed_images: bool, with_bbox: bool) -> pa.Schema:
    """The output columns; with embed_images, image is a datasets.Image feature ({"bytes", "path"})."""
    text = pa.string()
    types = {"history": pa.list_(text), "step": pa.int64(), "bbox": pa.list_(pa.float64())}
    schema = pa.schema([(name, types.get(name, text)) for name in DATASET_COLUMNS if with_bbox or name != "bbox"])
    if embed_images:
        import datasets  # only here: importing datasets costs about a second

        features = datasets.Features.from_arrow_schema(schema)
        features["image"] = datasets.Image()
        schema = features.arrow_schema
    return schema


def _chunks(examples: list[Example], rows: int) -> Iterator[list[Example]]:
    for start in range(0, len(examples), rows):
        yield examples[start : start + rows]


def _split_columns(examples: list[Example], schema: pa.Schema, embed_images: bool) -> dict[str, list]:
    columns = {
        "id": [e.id for e in examples],
        "image": [
            {"bytes": e.read_image_bytes(), "path": os.path.basename(e.image)} if embed_images else e.image
            for e in examples
        ],
        "problem": [e.problem for e in examples],
        "solution": [e.solution for e in examples],
        "instruction": [e.instruction for e in examples],
        "history": [e.history for e in examples],
        "thought": [e.thought for e in examples],
        "action": [e.action.type for e in examples],
        "action_json": [json.dumps(e.action.to_dict()) for e in examples],
        "episode_id": [e.episode_id for e in examples],
        "step": [e.step for e in examples],
        "source": [e.source for e in examples],
        "bbox": [e.bbox for e in examples],
    }
    return {name: columns[name] for name in schema.names}


def write_split(path: Path, examples: list[Example], schema: pa.Schema, embed_images: bool, progress: bool) -> None:
    rows = EMBED_BATCH_ROWS if embed_images else max(1, len(examples))
    chunks = _chunks(examples, rows)
    if embed_images:
        total = (len(examples) + rows - 1) // rows
        chunks = tqdm(chunks, total=total, desc=f"embedding {path.stem} images", unit="batch", disable=not progress)
    write_parquet(path, schema, (_split_columns(chunk, schema, embed_images) for chunk in chunks))


def write_embedded_images(folder: Path, examples: list[Example]) -> int:
    """GUI-R1 images that came as bytes, written to folder/images so that the image paths stay valid."""
    written = 0
    for example in examples:
        if example.blob is not None:
            (folder / "images").mkdir(exist_ok=True)
            (folder / "images" / os.path.basename(example.image)).write_bytes(example.read_image_bytes())
            written += 1
    return written


def dataset_card(name: str, splits: dict[str, int], inputs: list[str], with_bbox: bool) -> str:
    """README.md whose `configs` tell datasets.load_dataset(folder) that train/test are the two parquet files:
    without it, the parquet files of the guir1 export and the exported JSON would be picked up as well."""
    files = "".join(f"  - split: {split}\n    path: {split}.parquet\n" for split, rows in splits.items() if rows)
    columns = ", ".join(name for name in DATASET_COLUMNS if with_bbox or name != "bbox")
    counts = ", ".join(f"{rows} {split}" for split, rows in splits.items())
    return (
        f"---\nconfigs:\n- config_name: default\n  data_files:\n{files}---\n# {name}\n\n"
        f"GUI agent steps built by r1_gui (`python dataset/raw_load_data.py`) from {', '.join(inputs)}: {counts} "
        "rows. The test split holds whole episodes (no episode is in both splits).\n\n"
        f"Columns: {columns}. See build_report.json for the arguments, skipped records and action counts.\n"
    )


def _messages(example: Example) -> list[dict]:
    system = [{"role": "system", "content": example.system}] if example.system else []
    answer = f"{example.thought}\n{example.code}" if example.thought else example.code
    return system + [
        {"role": "user", "content": IMAGE_PLACEHOLDER + example.problem},
        {"role": "assistant", "content": answer},
    ]


def export_llamafactory(folder: Path, name: str, splits: dict[str, list[Example]]) -> list[str]:
    """ShareGPT-style {"messages", "images"} lists plus dataset_info.json (LLaMA-Factory; ms-swift reads the
    same files). The user turn starts with "<image>", where the screenshot goes."""
    target = folder / "llamafactory"
    target.mkdir()
    info = {}
    for split, examples in splits.items():
        if not examples:
            continue
        rows = [{"messages": _messages(e), "images": [e.image]} for e in examples]
        (target / f"{split}.json").write_text(json.dumps(rows, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        info[f"{name}_{split}"] = {
            "file_name": f"{split}.json",
            "formatting": "sharegpt",
            "columns": {"messages": "messages", "images": "images"},
            "tags": {
                "role_tag": "role",
                "content_tag": "content",
                "user_tag": "user",
                "assistant_tag": "assistant",
                "system_tag": "system",
            },
        }
    (target / "dataset_info.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    return sorted(str(path.relative_to(folder)) for path in target.iterdir())


def export_guir1(folder: Path, splits: dict[str, list[Example]], progress: bool) -> list[str]:
    """GUI-R1 parquet files (see r1_gui.builder.guir1): images embedded, gt_bbox in pixels."""
    import datasets  # for the Image feature metadata GUI-R1's loaders decode

    features = datasets.Features(
        {
            "image": datasets.Image(),
            **{name: datasets.Value("string") for name in ("instruction", "history", "gt_action")},
            "gt_bbox": datasets.List(datasets.Value("float64")),
            **{name: datasets.Value("string") for name in ("gt_input_text", "task_type")},
        }
    )
    target = folder / "guir1"
    target.mkdir()
    for split, examples in splits.items():
        if not examples:
            continue
        chunks = _chunks(examples, EMBED_BATCH_ROWS)
        total = (len(examples) + EMBED_BATCH_ROWS - 1) // EMBED_BATCH_ROWS
        chunks = tqdm(chunks, total=total, desc=f"guir1 {split}", unit="batch", disable=not progress)
        batches = (_rows_to_columns([guir1_row(e, e.read_image_bytes()) for e in chunk]) for chunk in chunks)
        write_parquet(target / f"{split}.parquet", features.arrow_schema, batches)
    return sorted(str(path.relative_to(folder)) for path in target.iterdir())


def _rows_to_columns(rows: list[dict]) -> dict[str, list]:
    return {name: [row[name] for row in rows] for name in rows[0]}


BUILD_MARKER = "build_report.json"  # every build writes it last: a folder holding it is an earlier build
BUILD_FILES = (
    "train.parquet", "test.parquet", "README.md", BUILD_MARKER, "llamafactory/*.json", "guir1/*.parquet",
    "verl_gui/*.parquet", "images/*",
)  # fmt: skip
SHOWN_FILES = 5


def check_output_dir(
    output_dir: Path, overwrite: bool, marker: str = BUILD_MARKER, ours: tuple[str, ...] = BUILD_FILES
) -> None:
    """Refuse a non-empty output_dir unless overwrite, and with overwrite refuse one holding anything but an earlier
    output of this writer (``marker`` present, every file matching a pattern of ``ours``): replacing the folder
    deletes all it holds, and a user's own files there must not go without a word."""
    if output_dir.exists() and not output_dir.is_dir():
        raise FileExistsError(f"{output_dir} exists and is not a folder")
    if not output_dir.is_dir() or not any(output_dir.iterdir()):
        return
    if not overwrite:
        raise FileExistsError(f"{output_dir} is not empty; pass --overwrite (overwrite=True) to replace it")
    foreign = files_not_written_by_us(output_dir, marker, ours)
    if not (output_dir / marker).is_file():
        raise FileExistsError(
            f"--overwrite replaces only an earlier output (a folder with {marker}), and {output_dir} is not one: it "
            f"holds {some_names(foreign)}; move those files away or pick another --output_dir"
        )
    if foreign:
        raise FileExistsError(
            f"--overwrite would delete {len(foreign)} file(s) in {output_dir} that were not written there by this "
            f"tool: {some_names(foreign)}; move them away or pick another --output_dir"
        )


def files_not_written_by_us(
    output_dir: Path, marker: str = BUILD_MARKER, ours: tuple[str, ...] = BUILD_FILES
) -> list[str]:
    """The files under output_dir that overwriting it would delete and that its writer did not write: every file
    when the folder is no earlier output (no ``marker``), else those matching no pattern of ``ours``."""
    if not output_dir.is_dir():
        return []
    files = sorted(path.relative_to(output_dir).as_posix() for path in output_dir.rglob("*") if not path.is_dir())
    if not (output_dir / marker).is_file():
        return files
    return [name for name in files if not any(fnmatchcase(name, pattern) for pattern in ours)]


def some_names(names: list[str]) -> str:
    """The first few names, and how many more there are."""
    more = len(names) - SHOWN_FILES
    return ", ".join(names[:SHOWN_FILES]) + (f" and {more} more" if more > 0 else "")


def _partial_prefix(output_dir: Path) -> str:
    return f".{output_dir.name}.partial-"


PARTIAL_OWNER = re.compile(r"(?P<host>.+)-(?P<pid>\d+)-[a-z0-9_]{8}(?P<old>-old)?")  # mkdtemp: 8 random characters


def _process_is_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # another user's live process
        return False
    return False


def clean_stale_partials(output_dir: Path) -> list[Path]:
    """Remove the staging folders beside output_dir that a killed run left (kill -9, power loss: no ``finally``
    ran), and warn about those it leaves alone; the removed ones are returned.

    A staging folder's name carries the host and process id that made it (``.NAME.partial-HOST-PID-XXXX``). It is
    removed only when it was made on this host by a process that no longer runs. Left alone, with a warning: one of
    a live process (another build into the same folder, or a reused pid), another host's, one in the older unnamed
    form, and a retired ``-old`` folder while output_dir is missing: that one holds the previous output, which a
    run killed between its two renames had moved aside (rename it back to restore it).
    """
    removed: list[Path] = []
    if not output_dir.parent.is_dir():
        return removed
    host, prefix = socket.gethostname(), _partial_prefix(output_dir)
    for folder in sorted(path for path in output_dir.parent.iterdir() if path.name.startswith(prefix)):
        owner = PARTIAL_OWNER.fullmatch(folder.name[len(prefix) :])
        if owner and owner["old"] and not output_dir.exists():
            logger.warning("%s holds the previous %s, moved aside by an interrupted run: rename it to %s to restore "
                           "it, or delete it", folder, output_dir.name, output_dir)  # fmt: skip
        elif owner and owner["host"] == host and _process_is_gone(int(owner["pid"])):
            shutil.rmtree(folder, ignore_errors=True)
            logger.warning("removed %s, left by an interrupted run (process %s is gone)", folder, owner["pid"])
            removed.append(folder)
        else:
            logger.warning("left %s alone: it may be another run's staging folder; delete it if no run is writing "
                           "%s", folder, output_dir)  # fmt: skip
    return removed


@contextmanager
def staging(output_dir: Path) -> Iterator[Path]:
    """A temporary folder beside output_dir, renamed to output_dir when the block succeeds and deleted when it
    fails, so an interrupted build never leaves half a dataset and never touches an existing output_dir. Folders a
    killed run left are cleaned first (``clean_stale_partials``)."""
    output_dir.parent.mkdir(parents=True, exist_ok=True)
    clean_stale_partials(output_dir)
    owner = f"{_partial_prefix(output_dir)}{socket.gethostname()}-{os.getpid()}-"
    folder = Path(tempfile.mkdtemp(prefix=owner, dir=output_dir.parent))
    umask = os.umask(0)
    os.umask(umask)
    folder.chmod(0o777 & ~umask)  # mkdtemp makes it private; the dataset folder should not be
    try:
        yield folder
        _move_into_place(folder, output_dir)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise


def _move_into_place(folder: Path, output_dir: Path) -> None:
    if not output_dir.exists():
        folder.rename(output_dir)
        return
    retired = folder.with_name(folder.name + "-old")
    output_dir.rename(retired)
    try:
        folder.rename(output_dir)
    except BaseException:
        retired.rename(output_dir)
        raise
    shutil.rmtree(retired)
