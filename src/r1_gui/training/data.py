"""GUI datasets for training: loaded (r1_gui.gui_datasets), checked early, given the model's prompt columns.

    dataset = load_gui_dataset("data/aitw-2k", split="train")
    check_columns(dataset, ("image", "problem", "solution"), "data/aitw-2k[train]")
    check_images(dataset, "data/aitw-2k[train]")
    dataset = add_model_columns(dataset, prompt_style="aguvis", coordinates="normalized", pixel_bounds=(3136, 501760))

Rows come from dataset/raw_load_data.py (see its docstring for the columns). Images are paths (absolute, or relative
to the dataset folder) or embedded bytes; both decode to PIL through `datasets.Image`.
"""

from __future__ import annotations

import logging
from pathlib import Path

from r1_gui.actions import extract_action, resized_size
from r1_gui.actions.coords import IMAGE_FACTOR
from r1_gui.gui_datasets import images_are_paths, load_gui_dataset
from r1_gui.prompts import build_prompt

logger = logging.getLogger(__name__)

GRPO_COLUMNS = ("image", "problem", "solution")
MODEL_COLUMNS = ("screen_size", "action")  # what add_model_columns adds for the rewards (trl passes `prompts` itself)
SHOWN_CHECKS = 5000  # reading this many screenshot headers takes a few seconds: a progress bar says what the wait is


def check_columns(dataset, required: tuple[str, ...], source: str) -> None:
    """Fail before any model is loaded when the dataset lacks a column training needs."""
    missing = [column for column in required if column not in dataset.column_names]
    if missing:
        raise ValueError(
            f"{source} is missing the column(s) {', '.join(missing)} (it has {', '.join(dataset.column_names)}). "
            "Build the dataset with `python dataset/raw_load_data.py`, which writes every column r1_gui needs."
        )


def check_images(dataset, source: str) -> None:
    """Fail early, naming the row and the file, when an image path does not exist or is not an image PIL can read
    (only its header is read; embedded images are always there)."""
    from PIL import Image, UnidentifiedImageError

    if not images_are_paths(dataset):
        return
    from tqdm import tqdm

    ids = dataset["id"] if "id" in dataset.column_names else None
    images = tqdm(dataset["image"], desc="checking screenshots", unit="image", disable=len(dataset) < SHOWN_CHECKS)
    for index, image in enumerate(images):
        row = f"row {index}" + (f" (id {ids[index]!r})" if ids else "")
        if not image or not Path(image).is_file():
            raise FileNotFoundError(
                f"{source} {row}: image file {image!r} does not exist. Fix the path (rebuild with the right "
                "--image_dir) or drop the row."
            )
        try:
            Image.open(image).close()
        except (UnidentifiedImageError, OSError) as error:
            raise ValueError(
                f"{source} {row}: {image!r} is not an image file PIL can read ({error}). Replace the file or drop the "
                "row (`python dataset/raw_load_data.py --verify_images` skips such rows)."
            ) from None


def check_solutions(dataset, source: str, shown: int = 5) -> None:
    """Fail early, naming the rows, when a ground truth (`solution`) does not parse as an action: every reward would
    score those rows 0 whatever the model answers, and SFT would have no target."""
    ids = dataset["id"] if "id" in dataset.column_names else None
    solutions = dataset["solution"]
    bad = [
        index
        for index, solution in enumerate(solutions)
        if not isinstance(solution, str) or extract_action(solution, coordinates="normalized") is None
    ]
    if bad:
        rows = ", ".join(
            f"row {index}" + (f" (id {ids[index]!r})" if ids else "") + f": {solutions[index]!r}"
            for index in bad[:shown]
        )
        raise ValueError(
            f"{source}: the solution of {len(bad)} of {len(solutions)} rows does not parse as an action ({rows}"
            f"{', ...' if len(bad) > shown else ''}). Solutions are aguvis action code with 0-1 coordinates, e.g. "
            '"pyautogui.click(x=0.5, y=0.3)"; rebuild with `python dataset/raw_load_data.py` or drop the rows.'
        )


def image_size_of(image) -> tuple[int, int]:
    """(width, height) of a path, PIL image or datasets-Image dict, reading only the file header."""
    from PIL import Image

    if hasattr(image, "size"):
        return tuple(image.size)
    if isinstance(image, dict):
        if image.get("path") and Path(image["path"]).is_file():
            image = image["path"]
        else:
            import io

            image = io.BytesIO(image["bytes"])
    with Image.open(image) as opened:
        return opened.size


def add_model_columns(
    dataset,
    prompt_style: str,
    coordinates: str,
    pixel_bounds: tuple[int, int],
    system_prompt: str | None = None,
    factor: int = IMAGE_FACTOR,
):
    """Add `prompt` (the conversation for `prompt_style`), `screen_size` (the resized screenshot the model sees,
    which pixel coordinates refer to; its sides are multiples of ``factor``, `processing.resize_factor`) and `action`
    when absent; decode `image` lazily to PIL."""
    import datasets

    min_pixels, max_pixels = pixel_bounds
    raw = dataset.cast_column("image", datasets.Image(decode=False)) if "image" in dataset.column_names else dataset

    def columns(row):
        width, height = image_size_of(row["image"])
        screen_size = list(resized_size(width, height, min_pixels, max_pixels, factor))
        extra = {
            "prompt": build_prompt(row["problem"], prompt_style, coordinates, tuple(screen_size), system_prompt),
            "screen_size": screen_size,
        }
        if "action" not in row:
            action = extract_action(row["solution"], coordinates="normalized")
            extra["action"] = action.type if action else "unknown"
        return extra

    dataset = raw.map(columns, desc=f"building {prompt_style} prompts")
    return dataset.cast_column("image", datasets.Image())


def load_training_rows(data_args, required_columns: tuple[str, ...]):
    """The training split, checked for columns, image files and ground truths before any model is loaded."""
    source = f"{data_args.dataset_name}[{data_args.dataset_train_split}]"
    if not data_args.dataset_name:
        raise ValueError("--dataset_name is required: a dataset/raw_load_data.py output folder or a Hub dataset id")
    dataset = load_gui_dataset(data_args.dataset_name, split=data_args.dataset_train_split)
    if data_args.max_samples:
        dataset = dataset.select(range(min(data_args.max_samples, len(dataset))))
    check_columns(dataset, required_columns, source)
    check_images(dataset, source)
    check_solutions(dataset, source)
    return dataset
