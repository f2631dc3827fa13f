"""What an evaluation run keeps in its output folder, and when a rerun may continue from it.

Step evaluation (`runner`, predictions.jsonl) and episode evaluation (`episodes`, episodes.jsonl) keep the same
files and the same rule: run_config.json records what the results depend on (`RunFiles.resume_keys`: the model's
file fingerprint, the dataset's rows or the environment, the generation settings), and a rerun appends to the
records only when all of them are this run's; otherwise it stops before loading anything, naming what differs.
`--overwrite` deletes exactly the run's own files (`RunFiles.files`, the pictures' PNGs), nothing else.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path

from r1_gui.evaluation.errors import EvaluationError
from r1_gui.evaluation.run.fingerprint import changed_files, model_fingerprint
from r1_gui.evaluation.run.predictions_file import PREDICTIONS_FILE

logger = logging.getLogger(__name__)

# The files an evaluation run writes into its output folder, named once for every room that reads or writes them.
METRICS_FILE = "metrics.json"
RUN_CONFIG_FILE = "run_config.json"
REPORT_FILE = "report.md"
GALLERY_DIR = "gallery"  # a step evaluation's annotated screenshots
EPISODES_FILE = "episodes.jsonl"  # an episode evaluation's records (a step evaluation's: PREDICTIONS_FILE)
PICTURES_DIR = "episodes"  # an episode evaluation's strips of screenshots
CONTENT_KEYS = ("model_fingerprint", "dataset_fingerprint")
START_OVER = "pass --overwrite to delete them and start over, or write to a new --output_dir"


@dataclass(frozen=True)
class RunFiles:
    """One kind of evaluation run: its records file, its pictures folder and what a resume must match."""

    records: str
    pictures: str
    resume_keys: tuple[str, ...]

    @property
    def files(self) -> tuple[str, ...]:
        """Every file the run writes into OUTPUT_DIR (besides its pictures): what --overwrite deletes."""
        return (self.records, self.records + ".tmp", METRICS_FILE, REPORT_FILE, RUN_CONFIG_FILE)


GENERATION_KEYS = (
    "backend", "prompt_style", "system_prompt", "coordinates", "max_new_tokens", "temperature", "min_pixels",
    "max_pixels", "seed",
)  # fmt: skip
# Step evaluation: what its predictions depend on (see fingerprint.py).
STEP_RUN = RunFiles(
    PREDICTIONS_FILE, GALLERY_DIR, ("model_fingerprint", "dataset_fingerprint", "split", *GENERATION_KEYS, "benchmark")
)


def earlier_run(output_dir: Path, run: RunFiles = STEP_RUN) -> dict | None:
    """The run_config.json of the records already in output_dir ({} when they have none); None: no records."""
    records_path, config_path = output_dir / run.records, output_dir / RUN_CONFIG_FILE
    if not (records_path.is_file() and records_path.stat().st_size):
        return None
    try:
        return json.loads(config_path.read_text()) if config_path.is_file() else {}
    except ValueError:  # cut short or edited: as good as none
        return {}


def _describe(run_config: dict) -> str:
    if "predictions" in run_config:
        return f"scores of the predictions file {run_config['predictions']}"
    if "model_name_or_path" in run_config:
        return f"predictions of the model {run_config['model_name_or_path']}"
    return "predictions without a run_config.json (no record of what made them)"


def check_kind(output_dir: Path, earlier: dict | None, kind: str) -> None:
    """A model run never adds to, and a --predictions run never replaces, the other kind's (or unknown) results."""
    if earlier is None or kind in earlier:
        return
    what = "generate into" if kind == "model_name_or_path" else "score --predictions into"
    raise EvaluationError(
        f"{output_dir} holds the {_describe(earlier)}; this run would {what} the same predictions.jsonl and "
        f"run_config.json: {START_OVER}"
    )


def check_resume(output_dir: Path, earlier: dict | None, settings: dict, run: RunFiles = STEP_RUN) -> None:
    """Refuse to add to records made by other model files, dataset rows (or environment) or settings."""
    if earlier is None:
        return
    check_kind(output_dir, earlier, "model_name_or_path")
    path = output_dir / run.records
    content = [key for key in CONTENT_KEYS if key in run.resume_keys]
    if not all(key in earlier for key in content):
        raise EvaluationError(
            f"{path} was written without the fingerprints of its model and data (an older r1_gui), so it cannot "
            f"be told whether they are this run's: {START_OVER}"
        )
    reasons = []
    if earlier["model_fingerprint"] != settings["model_fingerprint"]:
        files = changed_files(earlier.get("model_files") or {}, settings.get("model_files") or {})
        reasons.append(f"the model's files differ ({', '.join(files) or 'their hashes'}; model was "
                       f"{earlier.get('model_name_or_path')}, now {settings['model_name_or_path']})")  # fmt: skip
    if "dataset_fingerprint" in content and earlier["dataset_fingerprint"] != settings["dataset_fingerprint"]:
        reasons.append(f"the rows of the dataset split differ (dataset was {earlier.get('dataset')} "
                       f"{earlier.get('split')}, now {settings['dataset']} {settings['split']})")  # fmt: skip
    changed = [key for key in run.resume_keys if key not in CONTENT_KEYS and earlier.get(key) != settings.get(key)]
    if changed:
        reasons.append(
            "other settings: " + ", ".join(f"{k}: {earlier.get(k)!r} -> {settings.get(k)!r}" for k in changed)
        )
    if reasons:
        raise EvaluationError(
            f"{path} cannot be resumed by this run: {'; '.join(reasons)}. Resuming would mix its records with "
            f"this run's: {START_OVER}"
        )


def clear_run(output_dir: Path, run: RunFiles = STEP_RUN) -> list[str]:
    """Delete the files an evaluation writes (`run.files` and its pictures' PNGs), nothing else; their names."""
    removed = [name for name in run.files if (output_dir / name).is_file()]
    for name in removed:
        (output_dir / name).unlink()
    pictures_dir = output_dir / run.pictures
    if pictures_dir.is_dir():
        pictures = list(pictures_dir.glob("*.png"))
        for picture in pictures:
            picture.unlink()
        removed += [f"{run.pictures}/ ({len(pictures)} PNG files)"] if pictures else []
        if not any(pictures_dir.iterdir()):
            pictures_dir.rmdir()
    if removed:
        logger.warning("starting over: deleted the earlier evaluation files %s in %s", ", ".join(removed), output_dir)
    return removed


def write_run_config(output_dir: Path, settings: dict) -> None:
    output_dir.mkdir(parents=True, exist_ok=True)
    (output_dir / RUN_CONFIG_FILE).write_text(json.dumps(settings, indent=2) + "\n")


def model_folder(model_name_or_path: str | Path) -> Path:
    path = Path(model_name_or_path)
    if path.is_dir():
        return path
    from r1_gui.paths import resolve_model_path

    return resolve_model_path(model_name_or_path)


def model_record(model_name_or_path: str | Path, earlier: dict | None) -> tuple[str, dict]:
    """(the model's fingerprint, {"model_folder", "model_files"} for run_config.json). The files an earlier run of
    the same folder hashed keep their hash where size and mtime are unchanged (fingerprint.py)."""
    folder = str(model_folder(model_name_or_path).resolve())
    recorded = (earlier or {}).get("model_files") if (earlier or {}).get("model_folder") == folder else None
    model = model_fingerprint(Path(folder), recorded)
    return model["sha256"], {"model_folder": folder, "model_files": model["files"]}
