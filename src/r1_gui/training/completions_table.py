"""The single-step trainer's completions table: what the model answered on which screenshot, every few steps.

Every `completions_table_steps` steps `GUIGRPOTrainer` keeps the first rows of the step (whole prompt groups of the
main process): the screenshot with the ground-truth point or box in green and the prediction in red, the instruction,
the completion and its rewards. The next log call writes them as PNG + JSON lines under
`output_dir/completions_table/` and, when wandb is on, as a wandb table committed with that step's metrics. trl's own
completion logging crashes under wandb with image prompts (trl 1.16), so the trainer switches that off for image
datasets. One table per run: `start_completions_table` (called before training) removes the table a previous run left
in output_dir, or for a resumed run the rows from its checkpoint's step on.
"""

from __future__ import annotations

import json
import logging
import math
import shutil
from pathlib import Path

from r1_gui.actions import extract_action
from r1_gui.training.resume import checkpoint_step
from r1_gui.visualize import draw_actions

logger = logging.getLogger(__name__)


class CompletionsTable:
    """The table's rows waiting for the next log call, and when the last were taken.

    every: steps between two tables (0: none); rows: completions per table."""

    def __init__(self, every: int, rows: int):
        self.every, self.rows = every, rows
        self.pending: list[dict] = []
        self.last_step = -1

    def due(self, step: int, main_process: bool) -> bool:
        """Whether this step's completions make a table (only the main process keeps one)."""
        if self.every <= 0 or not main_process:
            return False
        return self.last_step < 0 or step - self.last_step >= self.every

    def collect(self, step: int, inputs, texts, parsed, rewards: list[list[float]], reward_names) -> None:
        """Keep the first rows of this process's batch (whole prompt groups) for the next log call; ``rewards``:
        each row's reward per function (NaN where it returned None)."""
        self.last_step = step
        self.pending = []
        for row, text, prediction, values in list(zip(inputs, texts, parsed, rewards, strict=True))[: self.rows]:
            self.pending.append(
                {
                    "row": row,
                    "completion": text,
                    "prediction": prediction,
                    "rewards": {n: (None if math.isnan(r) else r) for n, r in zip(reward_names, values, strict=True)},
                }
            )

    def write_pending(self, output_dir: str, report_to) -> None:
        """Write the rows kept since the last log call (PNG + JSON lines; wandb uncommitted, so it is committed with
        the metrics row the caller logs next)."""
        if self.pending:
            write_table(self.pending, self.last_step, output_dir, report_to)
            self.pending = []


def write_table(table_rows: list[dict], step: int, output_dir: str, report_to) -> None:
    folder = Path(output_dir) / "completions_table" / f"step_{step:06d}"
    folder.mkdir(parents=True, exist_ok=True)
    records, pictures = [], []
    for index, entry in enumerate(table_rows):
        row = entry["row"]
        ground_truth = extract_action(row.get("solution", ""), coordinates="normalized")
        picture = draw_actions(_as_pil(row["image"]), ground_truth, entry["prediction"], row.get("bbox"))
        picture_path = folder / f"{index:02d}.png"
        picture.save(picture_path)
        pictures.append(picture)
        records.append(
            {
                "step": step,
                "id": row.get("id"),
                "image": str(picture_path),
                "instruction": row.get("instruction", row.get("problem", "")),
                "solution": row.get("solution"),
                "completion": entry["completion"],
                "prediction": entry["prediction"].to_dict() if entry["prediction"] else None,
                **{f"reward/{name}": value for name, value in entry["rewards"].items()},
            }
        )
    with open(folder.parent / "completions.jsonl", "a") as handle:
        for record in records:
            handle.write(json.dumps(record) + "\n")
    _log_table_to_wandb(records, pictures, report_to)


def _log_table_to_wandb(records: list[dict], pictures: list, report_to) -> None:
    if not report_to or "wandb" not in report_to:
        return
    import wandb

    if wandb.run is None:
        return
    columns = [key for key in records[0] if key != "image"]
    table = wandb.Table(columns=["screenshot", *columns])
    for record, picture in zip(records, pictures, strict=True):
        table.add_data(wandb.Image(picture), *[_cell(record[c]) for c in columns])
    wandb.log({"completions_table": table}, commit=False)


def start_completions_table(output_dir: str, resume_from_checkpoint: str | None) -> None:
    """Before a run: the completions table of output_dir keeps only the rows before the step the run starts at
    (none for a run from step 0). A run from step 0 into a folder that holds a previous run warns."""
    start = 0 if not resume_from_checkpoint else checkpoint_step(resume_from_checkpoint)
    if start == 0 and _holds_a_run(Path(output_dir)):
        logger.warning(
            "%s holds a previous run; this one starts at step 0, replaces its completions table now and its model "
            "when it ends (its checkpoint-N folders stay; --resume_from_checkpoint continues a run)",
            output_dir,
        )
    keep_table_rows_before(Path(output_dir) / "completions_table", start)


def keep_table_rows_before(folder: Path, step: int) -> None:
    """Remove the completions table's rows and step folders from ``step`` on (all of them for step 0), and a line
    cut short by a crash."""
    table = folder / "completions.jsonl"
    if table.is_file():
        kept = [line for line in table.read_text().splitlines(keepends=True) if _table_row_step(line) < step]
        table.write_text("".join(kept))
    for step_folder in folder.glob("step_*"):
        if step_folder.is_dir() and int(step_folder.name.removeprefix("step_")) >= step:
            shutil.rmtree(step_folder)


def _table_row_step(line: str) -> float:
    try:
        return json.loads(line)["step"]
    except (ValueError, KeyError, TypeError):
        return math.inf


def _holds_a_run(folder: Path) -> bool:
    return (folder / "trainer_state.json").is_file() or any(folder.glob("checkpoint-*"))


def _cell(value):
    """wandb.Table cells must have one type per column: structured values go in as JSON text."""
    return json.dumps(value) if isinstance(value, (dict, list)) else value


def _as_pil(image):
    from PIL import Image

    if isinstance(image, Image.Image):
        return image
    if isinstance(image, dict):
        import io

        return Image.open(image["path"]) if image.get("path") else Image.open(io.BytesIO(image["bytes"]))
    return Image.open(image)
