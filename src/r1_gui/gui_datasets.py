"""Reading a GUI dataset: a dataset/raw_load_data.py output folder (train/test parquet) or a Hub dataset id, and
one row's screenshot and ground-truth action.

Training (r1_gui.training.data), the evaluation and the replay environment read datasets through this module. Images are paths
(absolute, or relative to the dataset folder) or embedded bytes; both decode to PIL through `datasets.Image`.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from r1_gui.actions import Action, extract_action
from r1_gui.flags import flag
from r1_gui.paths import check_local_or_hub


@dataclass(frozen=True)
class RowLimit:
    """The flag that trains or evaluates on the first rows of a split only (training's and the evaluation's)."""

    max_samples: int | None = flag(None, "Use the first N rows of the split only (smoke tests); left out: every row.")


def load_gui_dataset(name_or_path: str | Path, split: str | None = None, flag: str = "--dataset_name"):
    """A DatasetDict (or one split) from a builder output folder (train/test parquet) or a Hub dataset id. A name
    meant as a missing local folder, or a Hub id that cannot be fetched, is a UserError naming ``flag``
    (``paths.check_local_or_hub``)."""
    import datasets

    path = Path(name_or_path)
    if path.is_dir():
        files = {
            name: str(path / f"{name}.parquet") for name in ("train", "test") if (path / f"{name}.parquet").is_file()
        }
        if not files:
            raise FileNotFoundError(
                f"{path} holds no train.parquet or test.parquet: build it with `python dataset/raw_load_data.py "
                f"--output_dir {path} ...` (or pass a Hub dataset id)"
            )
        for file in files.values():
            check_parquet(file, flag)
        loaded = datasets.load_dataset("parquet", data_files=files)
        loaded = datasets.DatasetDict({name: _resolve_image_paths(ds, path) for name, ds in loaded.items()})
    elif path.exists():
        raise ValueError(f"{flag} {path} is a file; give the builder's output folder (train/test parquet)")
    else:
        check_local_or_hub(name_or_path, flag, repo_type="dataset")
        loaded = datasets.load_dataset(str(name_or_path))
    if split is None:
        return loaded
    if split not in loaded:
        raise ValueError(f"{name_or_path} has no split {split!r}; it has {', '.join(loaded)}")
    return loaded[split]


def check_parquet(path: str | Path, flag: str) -> None:
    """ValueError naming ``flag`` and the file when it is not a readable parquet file (its footer and schema are
    read, nothing else; datasets would fail later with a DatasetGenerationError that names no file)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pq.read_schema(path)
    except (pa.ArrowException, OSError) as error:
        raise ValueError(
            f"{flag} {Path(path).parent}: {path} is not a readable parquet file ({error}); rebuild the folder with "
            "`python dataset/raw_load_data.py`"
        ) from None


def _resolve_image_paths(dataset, root: Path):
    """Relative image paths are relative to the dataset folder."""
    if not images_are_paths(dataset):
        return dataset
    if all(Path(p).is_absolute() for p in dataset["image"]):
        return dataset
    return dataset.map(
        lambda row: {"image": row["image"] if Path(row["image"]).is_absolute() else str(root / row["image"])},
        desc="resolving image paths",
    )


def images_are_paths(dataset) -> bool:
    """True when the image column holds file paths (strings), False for embedded images or no image column."""
    feature = dataset.features.get("image")
    return getattr(feature, "dtype", None) in ("string", "large_string")


def ground_truth_action(row: dict) -> Action | None:
    """The row's action from ``solution``, read as the rewards read it; ``action_json`` when there is no solution."""
    if row.get("solution"):
        return extract_action(row["solution"], coordinates="normalized")
    if row.get("action_json"):
        try:
            return Action.from_dict(json.loads(row["action_json"]))
        except ValueError:
            return None
    return None


def open_screenshot(reference: Any):
    """The screenshot as an RGB PIL image from a path, an embedded {"bytes", "path"} dict or a PIL image. Raises
    FileNotFoundError (with the path) or OSError (unreadable)."""
    from PIL import Image

    if reference is None:
        raise FileNotFoundError("the row has no image")
    if hasattr(reference, "convert"):
        return reference.convert("RGB")
    if isinstance(reference, dict):
        if reference.get("bytes"):
            return Image.open(io.BytesIO(reference["bytes"])).convert("RGB")
        reference = reference.get("path")
    if not reference or not Path(reference).is_file():
        raise FileNotFoundError(f"image file {reference!r} does not exist")
    with Image.open(reference) as image:
        return image.convert("RGB")
