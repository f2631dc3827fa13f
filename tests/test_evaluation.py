"""AITW evaluation end to end: scoring a predictions file with known answers, a tiny model run, resuming, batch-size
invariance of greedy generation, failing samples, and the command line (r1_gui.evaluation, eval/test_aitw.py)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import datasets
import pytest
from PIL import Image

from r1_gui.actions import extract_action
from r1_gui.builder import build
from r1_gui.cli_errors import UserError
from r1_gui.evaluation import (
    EvaluationError,
    HFGenerator,
    evaluate,
    evaluate_predictions,
    score_predictions,
)
from r1_gui.evaluation.metrics import METRICS, UNPARSED
from r1_gui.evaluation.run import fingerprint
from r1_gui.evaluation.run.predictions_file import read_records
from r1_gui.evaluation.run.protocol import step_prompt_sha256
from r1_gui.evaluation.steps import runner
from r1_gui.evaluation.steps.cli import main
from r1_gui.synthetic import generate

REPO = Path(__file__).resolve().parents[1]
FAST = {"max_new_tokens": 24, "max_pixels": 50176, "gallery_size": 4}  # a tiny model on small screenshots


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    """The tiny model generates several times faster on one thread (thread start-up costs more than its small
    matrices), and stays fast when other processes compete for the cores."""
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


# --------------------------------------------------------------------------------------------- datasets


def write_dataset(folder: Path, rows: list[dict]) -> Path:
    """A builder-style dataset folder holding test.parquet (the dataset contract's columns)."""
    folder.mkdir(parents=True, exist_ok=True)
    datasets.Dataset.from_list(rows).to_parquet(str(folder / "test.parquet"))
    return folder


def row(identifier: str, code: str, image: Path | str, bbox=None, instruction: str = "Do the task") -> dict:
    action = extract_action(code)
    problem = (
        "Please generate the next move according to the ui screenshot, instruction and previous actions.\n\n"
        f"Instruction: {instruction}\n\nPrevious actions:\nNone"
    )
    return {
        "id": identifier,
        "image": str(image),
        "problem": problem,
        "solution": f"<answer>{code}</answer>",
        "instruction": instruction,
        "history": [],
        "thought": "Action: do it.",
        "action": action.type,
        "action_json": json.dumps(action.to_dict()),
        "episode_id": identifier,
        "step": 0,
        "source": "hand",
        "bbox": bbox,
    }


@pytest.fixture(scope="module")
def eval_dataset(tmp_path_factory) -> Path:
    """A small synthetic test split (224x448 screenshots, l2 plans, target boxes) made by the real builder."""
    folder = tmp_path_factory.mktemp("synthetic")
    generate(folder / "raw", 6, seed=0, width=224, height=448, progress=False)
    build([folder / "raw" / "synthetic-l2.json"], folder / "raw" / "images", folder / "dataset", test_size=0.5,
          seed=0, progress=False)  # fmt: skip
    return folder / "dataset"


def split_rows(dataset: Path) -> list[dict]:
    return datasets.load_dataset("parquet", data_files=str(dataset / "test.parquet"), split="train").to_list()


@pytest.fixture(scope="module")
def full_run(tiny_qwen2_vl, eval_dataset, tmp_path_factory) -> tuple[Path, dict]:
    """A fresh evaluation of the tiny model on every synthetic row, aguvis style: (output_dir, metrics)."""
    output_dir = tmp_path_factory.mktemp("full") / "results"
    metrics = evaluate(tiny_qwen2_vl, eval_dataset, "test", output_dir, batch_size=4, **FAST)
    return output_dir, metrics


def lines_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


# ---------------------------------------------------------------------------------- predictions file mode


@pytest.fixture
def hand_dataset(tmp_path) -> Path:
    """8 hand-made rows on blank 100x200 screenshots, with known right answers."""
    screenshot = tmp_path / "screen.png"
    Image.new("RGB", (100, 200), "white").save(screenshot)
    rows = [
        row("r1", "pyautogui.click(x=0.5, y=0.5)", screenshot),
        row("r2", "pyautogui.click(x=0.2, y=0.8)", screenshot, bbox=[0.1, 0.75, 0.3, 0.85]),
        row("r3", "pyautogui.write(message='hello')", screenshot),
        row("r4", "mobile.back()", screenshot),
        row("r5", "mobile.back()", screenshot),
        row("r6", "mobile.open_app(app_name='Clock')", screenshot),
        row("r7", "mobile.terminate(status='success')", screenshot),
        row("r8", "pyautogui.click(x=0.9, y=0.1)", screenshot),
    ]
    return write_dataset(tmp_path / "hand", rows)


HAND_PREDICTIONS = [
    {"id": "r1", "output": "Action: tap.\nassistantos\npyautogui.click(x=0.5, y=0.5)"},  # all right
    {"id": "r2", "output": "assistantos\npyautogui.click(x=0.25, y=0.8)"},  # 0.05 off: AITW match only
    {"id": "r3", "output": "assistantos\npyautogui.write(message='bye')", "extra": 1},  # type right, text wrong
    {"id": "r4", "output": "assistantos\nmobile.back()"},  # right (argument-less: paper_param, the original's, says no)
    {"id": "r5", "output": "assistantos\nmobile.home()"},  # wrong
    {"id": "r6", "output": "I am not sure."},  # unparsed
    # r7: no prediction -> unparsed, error
    {"id": "r8", "output": "assistantos\nmobile.long_press(x=0.9, y=0.1)"},  # other type, AITW tap match
]


def rates(numbers: dict) -> dict:
    """The numbers without their 95% intervals (tests/test_eval_metrics.py checks those by hand)."""
    return {key: value for key, value in numbers.items() if not key.endswith("_ci95")}


def write_predictions(path: Path, entries: list[dict]) -> Path:
    lines = [json.dumps(entry) for entry in entries]
    lines.insert(3, "")  # a blank line is skipped
    path.write_text("\n".join(lines) + "\n")
    return path


def test_predictions_file_metrics_are_the_hand_computed_ones(hand_dataset, tmp_path):
    predictions = write_predictions(tmp_path / "preds.jsonl", HAND_PREDICTIONS)
    output_dir = tmp_path / "results"
    metrics = evaluate_predictions(predictions, hand_dataset, "test", output_dir, gallery_size=8)

    expected_overall = {
        "num_samples": 8,
        "parse_rate": 6 / 8,  # r6, r7 unparsed
        "type_accuracy": 4 / 8,  # r1 r2 r3 r4
        "param_accuracy": 2 / 8,  # r1 r4
        "paper_param_accuracy": 2 / 8,  # r1 r8 (argument-less calls never match in the original's reading)
        "action_match_accuracy": 5 / 8,  # r1 r2 r3 r4 r8
        "step_success": 4 / 8,  # r1 r2 r4 r8
        "num_errors": 1,  # r7
    }
    assert {key: metrics[key] for key in expected_overall} == pytest.approx(expected_overall)
    assert list(metrics["per_type"]) == ["click", "type", "back", "open_app", "terminate"]
    assert rates(metrics["per_type"]["click"]) == pytest.approx(  # r1 r2 r8
        {
            "num_samples": 3,
            "parse_rate": 1.0,
            "type_accuracy": 2 / 3,
            "param_accuracy": 1 / 3,
            "paper_param_accuracy": 2 / 3,
            "action_match_accuracy": 1.0,
            "step_success": 1.0,
        }
    )
    assert rates(metrics["per_type"]["type"]) == pytest.approx(
        {"num_samples": 1, "parse_rate": 1.0, "type_accuracy": 1.0, "param_accuracy": 0.0,
         "paper_param_accuracy": 0.0, "action_match_accuracy": 1.0, "step_success": 0.0}
    )  # fmt: skip
    assert rates(metrics["per_type"]["back"]) == pytest.approx(
        {"num_samples": 2, "parse_rate": 1.0, "type_accuracy": 0.5, "param_accuracy": 0.5,
         "paper_param_accuracy": 0.0, "action_match_accuracy": 0.5, "step_success": 0.5}
    )  # fmt: skip
    for action_type in ("open_app", "terminate"):
        assert rates(metrics["per_type"][action_type]) == {
            "num_samples": 1,
            "parse_rate": 0.0,
            **dict.fromkeys(METRICS, 0.0),
        }
    # the intervals count the rows: step_success 4 of 8 overall, 3 of 3 clicks (Wilson)
    assert metrics["step_success_ci95"] == pytest.approx([0.215216, 0.784784], abs=1e-6)
    assert metrics["per_type"]["click"]["step_success_ci95"] == pytest.approx([0.438503, 1.0], abs=1e-6)
    columns = ["click", "long_press", "type", "home", "back", UNPARSED]
    expected_confusion = {
        "click": [2, 1, 0, 0, 0, 0],
        "type": [0, 0, 1, 0, 0, 0],
        "back": [0, 0, 0, 1, 1, 0],
        "open_app": [0, 0, 0, 0, 0, 1],
        "terminate": [0, 0, 0, 0, 0, 1],
    }
    assert metrics["confusion_matrix"] == {
        name: dict(zip(columns, counts, strict=True)) for name, counts in expected_confusion.items()
    }
    assert list(metrics["confusion_matrix"]["click"]) == columns

    # metrics.json is what was returned; predictions.jsonl has every row once, r7 with its reason
    assert json.loads((output_dir / "metrics.json").read_text()) == metrics
    records = {record["id"]: record for record in lines_of(output_dir / "predictions.jsonl")}
    assert sorted(records) == [f"r{i}" for i in range(1, 9)]
    assert records["r7"]["error"] == "no prediction for this id" and records["r7"]["prediction"] is None
    assert records["r2"]["prediction"] == {"type": "click", "x": 0.25, "y": 0.8}
    assert records["r2"]["ground_truth"] == {"type": "click", "x": 0.2, "y": 0.8}

    # the report lists the unparsed ids and shows successes and failures in the gallery
    report = (output_dir / "report.md").read_text()
    assert "## Unparsed outputs (2)" in report and "| r6 | no action found | I am not sure. |" in report
    assert "| r7 | no prediction for this id |" in report
    links = re.findall(r"!\[[^\]]*\]\((gallery/[^)]+)\)", report)
    assert len(links) == 7  # every row with a prediction (r7 has none to draw)
    assert all((output_dir / link).is_file() for link in links)
    assert any("_success_" in link for link in links) and any("_failure_" in link for link in links)


def test_in_memory_scoring_matches_the_file_mode(hand_dataset, tmp_path):
    rows = datasets.load_dataset("parquet", data_files=str(hand_dataset / "test.parquet"), split="train")
    in_memory = score_predictions(rows, HAND_PREDICTIONS)
    on_disk = evaluate_predictions(
        write_predictions(tmp_path / "p.jsonl", HAND_PREDICTIONS), hand_dataset, output_dir=tmp_path / "o"
    )
    card = on_disk.pop("protocol")  # the card comes with the files
    assert card["evaluation"] == "predictions"
    assert in_memory == on_disk
    assert score_predictions(rows.to_list(), {p["id"]: p["output"] for p in HAND_PREDICTIONS}) == on_disk


def test_an_r1_gui_predictions_file_can_be_scored_again_in_place(hand_dataset, tmp_path):
    output_dir = tmp_path / "results"
    first = evaluate_predictions(write_predictions(tmp_path / "p.jsonl", HAND_PREDICTIONS), hand_dataset,
                                 output_dir=output_dir, gallery_size=0)  # fmt: skip
    again = evaluate_predictions(output_dir / "predictions.jsonl", hand_dataset, output_dir=output_dir, gallery_size=0)
    assert again == first  # r7's null output is read as missing again, not as an error


BAD_FILES = [
    # (id, lines, the error must say)
    # not JSON
    ("malformed-json", ['{"id": "r1", "output": "x"}', '{"id": "r2", "output": '], "line 2 is not valid JSON"),
    # an id the split does not have
    ("unknown-id", ['{"id": "r1", "output": "x"}', '{"id": "zz", "output": "x"}'], "line 2: id 'zz' is not in the"),
    # the same id twice
    ("duplicate-id", ['{"id": "r1", "output": "x"}', '{"id": "r1", "output": "y"}'], "already appeared on line 1"),
    # output missing: the message names the missing key (it said "must be a string or null", issue 24)
    ("no-output", ['{"id": "r1"}'], "line 1 .id .r1.. has no \"output\" key"),
    # output of another type
    ("output-not-text", ['{"id": "r1", "output": 3}'], "line 1 .id .r1..: \"output\" must be a string or null"),
    # saved as UTF-16 (Windows "Unicode"): json would decode it as UTF-16 and blame that encoding
    ("utf-16", ['{"id": "r1", "output": "x"}'.encode("utf-16")], "line 1 starts with a UTF-16 byte-order mark"),
    # a byte that is not UTF-8 on line 2
    ("latin-1", ['{"id": "r1", "output": "x"}', '{"id": "r2", "output": "caf\xe9"}'.encode("latin-1")],
     "line 2 is not UTF-8 text"),
    # not an object
    ("not-an-object", ['["r1", "x"]'], 'line 1: expected an object with a string "id"'),
]  # fmt: skip


@pytest.mark.parametrize("lines, message", [case[1:] for case in BAD_FILES], ids=[case[0] for case in BAD_FILES])
def test_a_bad_predictions_file_names_the_line(hand_dataset, tmp_path, lines, message):
    predictions = tmp_path / "bad.jsonl"
    predictions.write_bytes(b"\n".join(line if isinstance(line, bytes) else line.encode() for line in lines) + b"\n")
    with pytest.raises(EvaluationError, match=message):
        evaluate_predictions(predictions, hand_dataset, output_dir=tmp_path / "results")


def test_predictions_mode_imports_no_torch(hand_dataset, tmp_path):
    """The CLI's second form, run as a script, scores without importing torch or transformers."""
    predictions = write_predictions(tmp_path / "p.jsonl", HAND_PREDICTIONS)
    argv = ["eval/test_aitw.py", "--dataset", str(hand_dataset), "--predictions", str(predictions),
            "--output_dir", str(tmp_path / "results")]  # fmt: skip
    script = (
        "import runpy, sys\n"
        f"sys.argv = {argv!r}\n"
        "runpy.run_path('eval/test_aitw.py', run_name='__main__')\n"
        "print('heavy imports:', sorted(m for m in ('torch', 'transformers') if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "heavy imports: []" in result.stdout
    assert "| step_success | 0.5000 |" in result.stdout  # the printed table
    assert (tmp_path / "results" / "metrics.json").is_file()


# ------------------------------------------------------------------------------------------ tiny model


def test_tiny_model_end_to_end(full_run, eval_dataset, tiny_qwen2_vl):
    output_dir, metrics = full_run
    count = len(split_rows(eval_dataset))
    assert count >= 6
    for name in ("predictions.jsonl", "metrics.json", "report.md", "run_config.json"):
        assert (output_dir / name).is_file(), name
    assert metrics["num_samples"] == count
    for value in [metrics[name] for name in ("parse_rate", *METRICS)]:
        assert 0.0 <= value <= 1.0
    for numbers in metrics["per_type"].values():
        assert all(0.0 <= numbers[name] <= 1.0 for name in ("parse_rate", *METRICS))
    assert sum(numbers["num_samples"] for numbers in metrics["per_type"].values()) == count
    assert sum(sum(row.values()) for row in metrics["confusion_matrix"].values()) == count
    records = lines_of(output_dir / "predictions.jsonl")
    assert [record["id"] for record in records] == [row["id"] for row in split_rows(eval_dataset)]
    assert all(isinstance(record["output"], str) and record["error"] is None for record in records)
    config = json.loads((output_dir / "run_config.json").read_text())
    assert config["coordinates"] == "normalized" and config["prompt_style"] == "aguvis"  # auto for qwen2_vl + aguvis
    # the protocol card: what was measured, and how
    card = metrics["protocol"]
    assert (card["evaluation"], card["coordinates"], card["preset"]) == ("steps", "normalized", None)
    assert card["prompt"]["sha256"] == step_prompt_sha256("aguvis", "normalized", None)
    assert card["model"] == {"name_or_path": str(tiny_qwen2_vl), "fingerprint": config["model_fingerprint"]}
    assert card["split"] == {"dataset": str(eval_dataset), "split": "test", "rows": count, "of_rows": count,
                             "sha256": config["dataset_fingerprint"]}  # fmt: skip
    assert card["decoding"]["greedy"] and card["decoding"]["max_new_tokens"] == FAST["max_new_tokens"]
    # FAST's --max_pixels 50176 is not what the tiny model's saved processor holds (200704): said, not hidden
    assert (card["image"]["max_pixels"], card["image"]["max_pixels_from"]) == (50176, "flags")
    assert card["image"]["checkpoint"] == {"min_pixels": 3136, "max_pixels": 200704}
    assert card["warnings"] and card["warnings"][0].startswith("--max_pixels 50176 differs from the checkpoint's")

    report = (output_dir / "report.md").read_text()
    for heading in ("## Metrics", "## Per ground-truth action type", "## Confusion matrix", "## Unparsed outputs"):
        assert heading in report
    assert "| type_accuracy |" in report and "| ground truth \\ predicted |" in report
    links = re.findall(r"!\[[^\]]*\]\((gallery/[^)]+)\)", report)
    assert len(links) == FAST["gallery_size"]
    assert all((output_dir / link).is_file() for link in links)
    assert sorted(p.name for p in (output_dir / "gallery").iterdir()) == sorted(Path(link).name for link in links)


def test_resume_gives_the_fresh_run_metrics(full_run, tiny_qwen2_vl, eval_dataset, tmp_path, monkeypatch):
    fresh_dir, fresh = full_run
    output_dir = tmp_path / "resumed"
    evaluate(tiny_qwen2_vl, eval_dataset, "test", output_dir, batch_size=2, max_samples=3, **FAST)
    assert len(lines_of(output_dir / "predictions.jsonl")) == 3
    resumed = evaluate(tiny_qwen2_vl, eval_dataset, "test", output_dir, batch_size=2, **FAST)
    assert resumed == fresh
    records = lines_of(output_dir / "predictions.jsonl")
    assert [r["id"] for r in records] == [r["id"] for r in lines_of(fresh_dir / "predictions.jsonl")]

    # a crash mid-write: the last two records lost and a third cut in half; the rerun drops it and regenerates
    text = (output_dir / "predictions.jsonl").read_text().splitlines(keepends=True)
    (output_dir / "predictions.jsonl").write_text("".join(text[:5]) + text[5][: len(text[5]) // 2])
    assert len(read_records(output_dir / "predictions.jsonl", repair=False)) == 5
    assert evaluate(tiny_qwen2_vl, eval_dataset, "test", output_dir, batch_size=4, **FAST) == fresh
    ids = [r["id"] for r in lines_of(output_dir / "predictions.jsonl")]
    assert len(ids) == len(set(ids)) == fresh["num_samples"]

    # everything done: no model is loaded at all
    monkeypatch.setattr(runner, "make_generator", lambda *a, **k: pytest.fail("loaded a model with nothing to do"))
    assert evaluate(tiny_qwen2_vl, eval_dataset, "test", output_dir, **FAST) == fresh


def test_the_checkpoints_saved_image_settings_are_used_without_flags(
    full_run, tiny_qwen2_vl, eval_dataset, tmp_path, monkeypatch
):
    """A checkpoint whose processor was saved with max_pixels 50176 (as the tiny recipe trains) is evaluated at
    50176 without --max_pixels: the same outputs as full_run's, which passed --max_pixels 50176."""
    model = tmp_path / "ckpt"
    shutil.copytree(tiny_qwen2_vl, model)
    for name in ("preprocessor_config.json", "processor_config.json"):
        config = json.loads((model / name).read_text())
        (config.get("image_processor") or config)["size"]["longest_edge"] = 50176
        (model / name).write_text(json.dumps(config))
    settings = {key: value for key, value in FAST.items() if key != "max_pixels"}
    metrics = evaluate(model, eval_dataset, "test", tmp_path / "r", batch_size=4, max_samples=3, **settings)
    assert (metrics["protocol"]["image"]["max_pixels"], metrics["protocol"]["image"]["max_pixels_from"]) == (
        50176,
        "checkpoint",
    )
    assert metrics["protocol"]["warnings"] == []
    outputs = [record["output"] for record in lines_of(tmp_path / "r" / "predictions.jsonl")]
    assert outputs == [record["output"] for record in lines_of(full_run[0] / "predictions.jsonl")[:3]]
    assert json.loads((tmp_path / "r" / "run_config.json").read_text())["max_pixels"] == 50176
    # the same value given as a flag is the same setting: the run resumes (nothing left to generate)
    monkeypatch.setattr(runner, "make_generator", lambda *a, **k: pytest.fail("regenerated under the same setting"))
    again = evaluate(model, eval_dataset, "test", tmp_path / "r", max_samples=3, **{**settings, "max_pixels": 50176})
    assert again["protocol"]["image"]["max_pixels_from"] == "flags"
    assert {k: v for k, v in again.items() if k != "protocol"} == {k: v for k, v in metrics.items() if k != "protocol"}


def test_resume_refuses_other_settings(full_run, tiny_qwen2_vl, eval_dataset, tmp_path):
    output_dir = tmp_path / "copy"
    shutil.copytree(full_run[0], output_dir)
    with pytest.raises(EvaluationError, match=r"max_new_tokens: 24 -> 8.*new --output_dir"):
        evaluate(tiny_qwen2_vl, eval_dataset, "test", output_dir, **{**FAST, "max_new_tokens": 8})


def cli_argv(model: Path, dataset: Path, output_dir: Path, *extra: str) -> list[str]:
    """eval/test_aitw.py's arguments for a tiny model run with the FAST settings."""
    return ["--model_name_or_path", str(model), "--dataset", str(dataset), "--output_dir", str(output_dir),
            "--max_new_tokens", "24", "--max_pixels", "50176", "--gallery_size", "0", *extra]  # fmt: skip


def test_a_model_retrained_at_the_same_path_is_not_resumed(tiny_qwen2_vl, eval_dataset, tmp_path, caplog, monkeypatch):
    """Issue 24: rebuilding a model at the same path and rerunning logged "0 of N samples to generate" and kept the
    old model's predictions."""
    from safetensors.torch import load_file, save_file

    model = tmp_path / "model"
    shutil.copytree(tiny_qwen2_vl, model)
    argv = cli_argv(model, eval_dataset, tmp_path / "results", "--max_samples", "2")
    main(argv)
    caplog.clear()
    monkeypatch.setattr(fingerprint, "hash_file", lambda path: pytest.fail(f"re-read the unchanged {path}"))
    main(argv)  # unchanged: resumes, and says so where the demo (WARNING level) shows it
    monkeypatch.undo()
    assert any(r.levelname == "WARNING" and "resuming" in r.getMessage() and "2 of 2 samples already there" in
               r.getMessage() for r in caplog.records)  # fmt: skip

    weights = load_file(model / "model.safetensors")  # "retrain": other weights, same file name and size
    weights = {name: tensor + 0.5 if name.endswith("lm_head.weight") else tensor for name, tensor in weights.items()}
    save_file(weights, model / "model.safetensors", metadata={"format": "pt"})
    before = (tmp_path / "results" / "predictions.jsonl").read_bytes()
    with pytest.raises(SystemExit, match=r"^error: .*model's files differ \(model\.safetensors;.*--overwrite"):
        main(argv)
    assert (tmp_path / "results" / "predictions.jsonl").read_bytes() == before  # nothing touched

    (tmp_path / "results" / "notes.txt").write_text("mine")
    main([*argv, "--overwrite"])
    main(cli_argv(model, eval_dataset, tmp_path / "fresh", "--max_samples", "2"))
    assert lines_of(tmp_path / "results" / "predictions.jsonl") == lines_of(tmp_path / "fresh" / "predictions.jsonl")
    assert (tmp_path / "results" / "notes.txt").read_text() == "mine"  # --overwrite deletes only evaluation files


def test_a_dataset_rebuilt_at_the_same_path_is_not_resumed(tiny_qwen2_vl, eval_dataset, tmp_path):
    """Issue 24: after the demo rebuilt its data with another seed, predictions of the old test rows were reused."""
    rows = split_rows(eval_dataset)[:3]
    dataset = write_dataset(tmp_path / "data", rows)
    argv = cli_argv(tiny_qwen2_vl, dataset, tmp_path / "results", "--max_samples", "2")
    main(argv)
    rows[2]["solution"] = "<answer>mobile.home()</answer>"  # a row past --max_samples 2 changed: still another split
    write_dataset(dataset, rows)
    with pytest.raises(SystemExit, match=r"rows of the dataset split differ.*--overwrite.*new --output_dir"):
        main(argv)
    copied = tmp_path / "moved-model"  # the same model files elsewhere resume: content counts, not the path
    shutil.copytree(tiny_qwen2_vl, copied)
    write_dataset(dataset, split_rows(eval_dataset)[:3])
    assert main(cli_argv(copied, dataset, tmp_path / "results", "--max_samples", "2"))["num_samples"] == 2


def test_a_model_run_and_a_predictions_run_never_replace_each_other(full_run, tiny_qwen2_vl, eval_dataset, tmp_path):
    """Issue 24: --predictions pointed at a model run's folder silently replaced its predictions and run_config."""
    model_run = tmp_path / "model-run"
    shutil.copytree(full_run[0], model_run)
    kept = {name: (model_run / name).read_bytes() for name in ("predictions.jsonl", "run_config.json")}
    predictions = tmp_path / "other.jsonl"
    predictions.write_text(json.dumps({"id": split_rows(eval_dataset)[0]["id"], "output": "mobile.back()"}) + "\n")
    scoring = ["--predictions", str(predictions), "--dataset", str(eval_dataset), "--output_dir", str(model_run)]
    with pytest.raises(SystemExit, match=f"holds the predictions of the model {re.escape(str(tiny_qwen2_vl))}"):
        main(scoring)
    assert {name: (model_run / name).read_bytes() for name in kept} == kept

    scored = tmp_path / "scored"
    main([*scoring[:-1], str(scored)])
    kept = (scored / "predictions.jsonl").read_bytes()
    with pytest.raises(SystemExit, match=r"holds the scores of the predictions file .*other\.jsonl.*--overwrite"):
        main(cli_argv(tiny_qwen2_vl, eval_dataset, scored, "--max_samples", "2"))
    assert (scored / "predictions.jsonl").read_bytes() == kept
    main([*scoring, "--overwrite"])  # asked for: the model run's files give way
    assert json.loads((model_run / "run_config.json").read_text())["predictions"] == str(predictions)


def test_a_sample_whose_screenshot_was_missing_is_retried(tiny_qwen2_vl, eval_dataset, tmp_path):
    """Issue 24: a sample that failed on a missing image stayed failed after the image was restored."""
    rows = split_rows(eval_dataset)[:3]
    screenshot = tmp_path / "restored.jpg"
    original, rows[1]["image"] = rows[1]["image"], str(screenshot)
    dataset = write_dataset(tmp_path / "data", rows)
    argv = cli_argv(tiny_qwen2_vl, dataset, tmp_path / "results", "--batch_size", "4")
    assert main(argv)["num_errors"] == 1
    shutil.copy(original, screenshot)
    metrics = main(argv)
    assert metrics["num_errors"] == 0
    records = lines_of(tmp_path / "results" / "predictions.jsonl")
    assert sorted(r["id"] for r in records) == sorted(r["id"] for r in rows)  # each once
    assert all(r["error"] is None and isinstance(r["output"], str) for r in records)


def test_batch_size_does_not_change_greedy_outputs(tiny_qwen2_vl, eval_dataset):
    generator = HFGenerator(tiny_qwen2_vl, max_new_tokens=16, max_pixels=50176, device="cpu")
    rows = [{"problem": r["problem"], "image": r["image"]} for r in split_rows(eval_dataset)][:4]
    prompts = [generator.prompt_text(r["problem"], Image.open(r["image"]).size) for r in rows]
    lengths = {len(generator.processor.tokenizer(p)["input_ids"]) for p in prompts}
    assert len(lengths) > 1, "the prompts must differ in length for padding to matter"
    assert prompts[0].endswith("<|im_start|>assistant<|recipient|>all\n")  # aguvis opens the planning channel
    assert "<|vision_start|><|image_pad|><|vision_end|>Please generate" in prompts[0]  # image first, as TRL
    assert generator.generate(rows, batch_size=4) == generator.generate(rows, batch_size=1)
    assert generator.processor.tokenizer.padding_side == "left"
    assert generator.stop_token_ids == [generator.processor.tokenizer.convert_tokens_to_ids("<|diff_marker|>")]


def test_qwen2_5_vl_mobile_use_asks_in_pixels_of_the_resized_screenshot(tiny_qwen2_5_vl, eval_dataset, tmp_path):
    generator = HFGenerator(tiny_qwen2_5_vl, prompt_style="mobile_use", max_new_tokens=8, max_pixels=50176)
    tokenizer = generator.processor.tokenizer
    assert generator.coordinates == "pixels"  # auto for Qwen2.5-VL
    assert generator.stop_token_ids[0] == tokenizer.convert_tokens_to_ids("<|im_end|>")
    assert tokenizer.eos_token_id in generator.stop_token_ids
    rows = split_rows(eval_dataset)[:2]
    # a 224x448 screenshot resized to at most 50176 pixels is 140x308: the tool declares that resolution
    assert "The screen's resolution is 140x308" in generator.prompt_text(rows[0]["problem"], (224, 448))
    custom = HFGenerator(tiny_qwen2_5_vl, prompt_style="mobile_use", system_prompt="Operate the phone.")
    assert "<|im_start|>system\nOperate the phone.<|im_end|>" in custom.prompt_text(rows[0]["problem"], (224, 448))
    metrics = evaluate(tiny_qwen2_5_vl, eval_dataset, "test", tmp_path / "r", prompt_style="mobile_use",
                       max_samples=2, **FAST)  # fmt: skip
    assert metrics["num_samples"] == 2
    assert json.loads((tmp_path / "r" / "run_config.json").read_text())["coordinates"] == "pixels"


def test_qwen3_vl_is_asked_in_its_mobile_use_format_on_its_grid(tiny_qwen3_vl, eval_dataset, tmp_path, caplog):
    """--prompt_style auto and --coordinates auto (the defaults) on a Qwen3-VL: mobile_use on the 999 grid, logged;
    stops at <|im_end|>; pixel coordinates, when asked for, are of Qwen3-VL's 32-pixel-token resize."""
    from r1_gui.actions import resized_size

    with caplog.at_level("INFO"):
        generator = HFGenerator(tiny_qwen3_vl, max_new_tokens=8, max_pixels=50176)
    assert "qwen3_vl: --prompt_style auto -> mobile_use, --coordinates auto -> grid999" in caplog.text
    assert (generator.config.prompt_style, generator.coordinates) == ("mobile_use", "grid999")
    tokenizer = generator.processor.tokenizer
    assert generator.stop_token_ids == [tokenizer.convert_tokens_to_ids("<|im_end|>")]  # <|im_end|> is its eos
    rows = split_rows(eval_dataset)[:2]
    prompt = generator.prompt_text(rows[0]["problem"], (224, 448))
    assert "The screen's resolution is 999x999" in prompt and prompt.endswith("<|im_start|>assistant\n")
    assert "<|vision_start|><|image_pad|><|vision_end|>Please generate" in prompt
    # pixels: 224x448 at 50176 pixels is 128x288 in 32-pixel tokens (140x308 in Qwen2.5-VL's 28-pixel ones)
    assert resized_size(224, 448, 3136, 50176, factor=32) == generator.screen_size((224, 448)) == (128, 288)
    pixels = HFGenerator(tiny_qwen3_vl, coordinates="pixels", max_pixels=50176)
    assert "The screen's resolution is 128x288" in pixels.prompt_text(rows[0]["problem"], (224, 448))
    metrics = evaluate(tiny_qwen3_vl, eval_dataset, "test", tmp_path / "r", max_samples=2, **FAST)
    assert metrics["num_samples"] == 2
    run_config = json.loads((tmp_path / "r" / "run_config.json").read_text())
    assert (run_config["prompt_style"], run_config["coordinates"]) == ("mobile_use", "grid999")


def test_embedded_screenshots_are_read(tiny_qwen2_vl, tmp_path):
    """A builder folder made with --embed_images (datasets.Image {"bytes", "path"}) evaluates like one with paths."""
    generate(tmp_path / "raw", 2, seed=1, width=224, height=448, progress=False)
    build([tmp_path / "raw" / "synthetic-l1.json"], tmp_path / "raw" / "images", tmp_path / "embedded",
          test_size=0.5, seed=0, embed_images=True, progress=False)  # fmt: skip
    shutil.rmtree(tmp_path / "raw" / "images")  # only the embedded bytes are left
    metrics = evaluate(tiny_qwen2_vl, tmp_path / "embedded", "test", tmp_path / "r", max_samples=2, **FAST)
    assert metrics["num_samples"] == 2 and metrics["num_errors"] == 0
    assert len(list((tmp_path / "r" / "gallery").glob("*.png"))) == 2


def test_a_missing_image_fails_only_its_sample(tiny_qwen2_vl, eval_dataset, tmp_path):
    rows = split_rows(eval_dataset)[:3]
    rows[1]["image"] = str(tmp_path / "gone.jpg")
    dataset = write_dataset(tmp_path / "broken", rows)
    metrics = evaluate(tiny_qwen2_vl, dataset, "test", tmp_path / "results", batch_size=4, **FAST)
    assert metrics["num_samples"] == 3 and metrics["num_errors"] == 1
    records = {r["id"]: r for r in lines_of(tmp_path / "results" / "predictions.jsonl")}
    failed = records[rows[1]["id"]]
    assert failed["error"].startswith("image:") and "gone.jpg" in failed["error"] and failed["prediction"] is None
    assert not any(failed["scores"].values())
    assert [records[rows[i]["id"]]["error"] for i in (0, 2)] == [None, None]
    assert isinstance(records[rows[0]["id"]]["output"], str)
    report = (tmp_path / "results" / "report.md").read_text()
    assert f"| {rows[1]['id']} | image: " in report


# --------------------------------------------------------------------------------------- command line


def test_the_vllm_backend_without_vllm_says_how_to_install(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "vllm", None)  # import vllm -> ImportError
    with pytest.raises(UserError, match=r"pip install vllm==0\.31\.0 \(or R1_GUI_GPU=1 bash setup\.sh\)"):
        evaluate("no/such/model", tmp_path / "no-dataset", output_dir=tmp_path / "o", backend="vllm")
    argv = ["--model_name_or_path", "no/such/model", "--dataset", str(tmp_path / "no-dataset"),
            "--output_dir", str(tmp_path / "o"), "--backend", "vllm"]  # fmt: skip
    with pytest.raises(SystemExit, match="pip install vllm==0.31.0"):
        main(argv)
    assert not (tmp_path / "o").exists()  # nothing was loaded or written


def test_cli_model_run_matches_the_api(full_run, tiny_qwen2_vl, eval_dataset, tmp_path, capsys):
    argv = ["--model_name_or_path", str(tiny_qwen2_vl), "--dataset", str(eval_dataset), "--split", "test",
            "--batch_size", "4", "--max_new_tokens", "24", "--max_pixels", "50176", "--gallery_size", "4",
            "--output_dir", str(tmp_path / "cli"), "--max_samples", "2"]  # fmt: skip
    metrics = main(argv)
    assert metrics["num_samples"] == 2
    expected = [r for r in lines_of(full_run[0] / "predictions.jsonl")][:2]
    assert lines_of(tmp_path / "cli" / "predictions.jsonl") == expected
    assert "| num_samples | 2 |" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--dataset", "d", "--output_dir", "o"], "one of the arguments --model_name_or_path --predictions"),
        (["--model_name_or_path", "m", "--predictions", "p", "--dataset", "d", "--output_dir", "o"], "not allowed"),
        (["--predictions", "p", "--dataset", "d", "--output_dir", "o", "--max_pixel", "1"], "unrecognized"),
    ],
    ids=["no-source", "both-sources", "unknown-flag"],
)
def test_cli_rejects_bad_arguments(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_cli_reports_a_missing_dataset_without_a_traceback(tmp_path):
    result = subprocess.run(
        [sys.executable, "eval/test_aitw.py", "--predictions", str(tmp_path / "p.jsonl"), "--dataset",
         str(tmp_path / "nothing"), "--output_dir", str(tmp_path / "o")],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 2
    assert "error: " in result.stderr and "Traceback" not in result.stderr


def test_the_gallery_keeps_an_outputs_lines_as_lines(hand_dataset, tmp_path, monkeypatch):
    """The gallery wrote newlines as ⏎, which the picture's font draws as a box (issue 54, item 7)."""
    from r1_gui import visualize

    captions = []
    monkeypatch.setattr(visualize, "with_caption", lambda picture, lines: captions.append(lines) or picture)
    entries = [
        dict(entry, output="Thought: the clock\nAction: pyautogui.click(x=0.1,\ty=0.2)") for entry in HAND_PREDICTIONS
    ]
    predictions = write_predictions(tmp_path / "preds.jsonl", entries)
    evaluate_predictions(predictions, hand_dataset, "test", tmp_path / "results", gallery_size=2)
    assert captions and all("⏎" not in line for lines in captions for line in lines)
    output = next(lines for lines in captions)
    at = output.index("output: Thought: the clock")
    assert output[at + 1] == "Action: pyautogui.click(x=0.1, y=0.2)"
