"""The field's benchmarks in GUI-R1's format: hand-computed metrics (r1_gui's and GUI-R1's), malformed files, the
synthetic sets end to end with the tiny model, resume after a kill, and GUI-R1's own inference output."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from r1_gui.evaluation.errors import EvaluationError
from r1_gui.evaluation.intervals import wilson
from r1_gui.evaluation.peers.benchmarks import load_benchmark, navigation_scores
from r1_gui.evaluation.peers.guir1_eval import navigation_hits
from r1_gui.evaluation.steps.cli import main
from r1_gui.evaluation.steps.guir1_predictions import score_guir1_predictions
from r1_gui.synthetic.benchmark_sets import write_benchmark_set

REPO = Path(__file__).resolve().parents[1]
SIZE = [1000, 1000]
NONE = [-100, -100]


def nav(gt_action, gt_bbox, gt_text, pred_action, pred_coord, pred_text, group="high"):
    """One line of GUI-R1's inference output for a navigation set (points in pixels of a 1000x1000 screenshot)."""
    return {
        "image": "",
        "instruction": "do the task",
        "history": "None",
        "gt_action": gt_action,
        "gt_bbox": gt_bbox,
        "gt_input_text": gt_text,
        "group": group,
        "image_size": SIZE,
        "pred_action": pred_action,
        "pred_coord": pred_coord,
        "pred_input_text": pred_text,
    }


NO = "no input text"
# (line, r1_gui's {type, grounding, text, step}, GUI-R1's {type, grounding, text}); None: not that kind of step
NAVIGATION_CASES = [
    # right click on the point: right everywhere
    (nav("click", [500, 500], NO, "click", [500, 500], NO), (True, True, None, True), (True, True, None)),
    # a click exactly 0.14 away: r1_gui's rule is inclusive, GUI-R1's strict (< 0.14)
    (nav("click", [500, 500], NO, "click", [640, 500], NO), (True, True, None, True), (True, False, None)),
    # inside a big box, 0.27 from its centre: a hit for r1_gui; GUI-R1 measures from the box's first corner
    (nav("click", [100, 100, 500, 500], NO, "click", [490, 490], NO), (True, True, None, True), (True, False, None)),
    # long press on the click point: grounding hits in both, the step is wrong (r1_gui checks the type)
    (nav("click", [500, 500], NO, "long_press", [500, 500], NO), (False, True, None, False), (False, True, None)),
    # a wrong type on a back step: r1_gui's step fails; GUI-R1's step never sees this row
    (nav("press_back", NONE, NO, "press_home", [0, 0], NO), (False, None, None, False), (False, None, None)),
    # a one-token text contained in another, under the wrong action: GUI-R1's text hit ignores the type
    (nav("type", NONE, "cat", "open_app", [0, 0], "category"), (False, None, False, False), (False, None, True)),
    # token F1 2/3 >= 0.5 for GUI-R1; neither text contains the other, so not for r1_gui's step rule
    (nav("type", NONE, "new york city", "type", [0, 0], "york city hotels"), (True, None, False, False), (True, None, True)),
    # the opposite scroll direction: wrong for both
    (nav("scroll", NONE, "up", "scroll", [0, 0], "down"), (True, None, False, False), (True, None, False)),
    # no action found (GUI-R1 writes null and [0, 0]): wrong for both
    (nav("click", [500, 500], NO, None, [0, 0], NO), (False, False, None, False), (False, False, None)),
    # a right complete step, in another group
    (nav("complete", NONE, NO, "complete", [0, 0], NO, group="low"), (True, None, None, True), (True, None, None)),
    # the app name inside the predicted text: right for both (substring; token F1 2/3)
    (nav("open_app", NONE, "Clock", "open_app", [0, 0], "clock app", group="low"), (True, None, True, True),
     (True, None, True)),
]  # fmt: skip


def write_lines(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@pytest.mark.parametrize(("line", "ours", "theirs"), NAVIGATION_CASES)
def test_navigation_step_rules(line, ours, theirs, tmp_path):
    (row,) = load_benchmark(write_lines(tmp_path / "one.jsonl", [line]), "androidcontrol_high", with_image=False)
    from r1_gui.actions import Action, parse_action

    gt = Action.from_dict(json.loads(json.dumps(parse_action(row["solution"][8:-9]).to_dict())))
    answer = json.dumps(
        [{"action": line["pred_action"], "point": line["pred_coord"], "input_text": line["pred_input_text"]}]
    )
    pred = parse_action(answer, "guir1", coordinates="pixels", image_size=SIZE)
    scores = navigation_scores(pred, gt, row["bbox"])
    assert (scores["type"], scores["grounding"], scores["text"], scores["step"]) == ours
    hits = navigation_hits(line)
    assert (hits["type"], hits["grounding"], hits["text"]) == theirs


def test_navigation_metrics_of_a_guir1_predictions_file(tmp_path):
    lines = [line for line, _, _ in NAVIGATION_CASES]
    metrics = score_guir1_predictions(
        write_lines(tmp_path / "pred.json", lines), "androidcontrol_high", tmp_path / "out"
    )
    bench = metrics["benchmark"]
    # r1_gui: type 7/11; grounding over the 5 click steps 4/5; text over type/scroll/open_app 1/4; step 5/11
    # GUI-R1, summed over its group-action categories, a category without one hit left out (high-press_back for
    # type, high-scroll-text for text): type 7/10; GR 2/5; text 3/3; step (2 + 3) / (5 + 3) = 5/8; the back and
    # complete rows never count for step (the numbers its eval_omni.py prints for these lines)
    expected = {
        "num_samples": 11,
        "type_accuracy": 7 / 11,
        "grounding_accuracy": 4 / 5,
        "text_accuracy": 1 / 4,
        "step_success": 5 / 11,
        "guir1_type_accuracy": 7 / 10,
        "guir1_grounding_accuracy": 2 / 5,
        "guir1_text_accuracy": 1.0,
        "guir1_step_accuracy": 5 / 8,
    }
    assert {key: bench[key] for key in expected} == pytest.approx(expected)
    # each with its Wilson interval over the rows it counts: r1_gui's type over 11, GUI-R1's over its 10
    assert bench["type_accuracy_ci95"] == wilson(7, 11) and bench["grounding_accuracy_ci95"] == wilson(4, 5)
    assert bench["guir1_type_accuracy_ci95"] == wilson(7, 10) and bench["guir1_step_accuracy_ci95"] == wilson(5, 8)
    # group "low": the complete and open_app rows, both right; no click row, so no grounding number
    low = bench["per_group"]["low"]
    assert (low["num_samples"], low["step_success"], low["grounding_accuracy"], low["guir1_step_accuracy"]) == (
        2, 1.0, None, 1.0,
    )  # fmt: skip
    # group "high": type 5/9, step 3/9; GUI-R1 type 5/8 (no press_back), step (2 grounding + 2 type text) / (5 + 2)
    high = bench["per_group"]["high"]
    assert (high["type_accuracy"], high["step_success"], high["guir1_type_accuracy"], high["guir1_step_accuracy"]) == (
        pytest.approx((5 / 9, 3 / 9, 5 / 8, 4 / 7))
    )
    click = bench["per_type"]["click"]  # the 5 click rows: r1_gui step 3/5, GUI-R1 grounding 2/5
    assert (click["num_samples"], click["step_success"], click["guir1_grounding_accuracy"]) == pytest.approx(
        (5, 3 / 5, 2 / 5)
    )
    assert bench["confusion_matrix"]["click"] == {
        "click": 3, "complete": 0, "long_press": 1, "open_app": 0, "press_home": 0, "scroll": 0, "type": 0,
        "unparsed": 1,
    }  # fmt: skip
    assert bench["confusion_matrix"]["press_back"]["press_home"] == 1
    assert json.loads((tmp_path / "out" / "metrics.json").read_text())["benchmark"] == bench
    report = (tmp_path / "out" / "report.md").read_text()
    assert report.startswith("# androidcontrol_high evaluation:") and "## Benchmark: androidcontrol_high" in report
    assert "| all | 11 | 0.6364 [0.3538, 0.8483] | 0.8000 [0.3755, 0.9638] | 0.2500 [0.0456, 0.6994] |" in report


def ground(box, coord, ui_type, group, **extra):
    """One line of GUI-R1's ScreenSpot inference output on a 1000x500 screenshot (no pred_action, as GUI-R1's)."""
    return {"image": "", "instruction": "the button", "gt_bbox": box, "ui_type": ui_type, "group": group,
            "image_size": [1000, 500], "pred_coord": coord, **extra}  # fmt: skip


GROUNDING_LINES = [
    ground([100, 100, 200, 200], [150, 150], "text", "mobile"),  # inside: a hit for both
    ground([100, 100, 200, 200], [200, 150], "icon", "mobile"),  # on the right edge: r1_gui hit, GUI-R1 miss
    ground([0, 0, 50, 50], [500, 250], "icon", "windows"),  # outside (ScreenSpot's "windows" is desktop)
    ground([300, 300, 400, 400], [350, 350], "text", "web"),  # inside
]


def test_screenspot_metrics(tmp_path):
    metrics = score_guir1_predictions(write_lines(tmp_path / "s.jsonl", GROUNDING_LINES), "screenspot", tmp_path / "o")
    bench = metrics["benchmark"]
    assert (bench["num_samples"], bench["accuracy"], bench["guir1_accuracy"]) == (4, 0.75, 0.5)
    assert {key: value["accuracy"] for key, value in bench["per_platform"].items()} == {
        "desktop": 0.0, "mobile": 1.0, "web": 1.0,
    }  # fmt: skip
    assert {key: value["accuracy"] for key, value in bench["per_ui_type"].items()} == {"icon": 0.5, "text": 1.0}
    assert bench["per_platform_ui_type"]["mobile-icon"] == {
        "num_samples": 1,
        "accuracy": 1.0,
        "accuracy_ci95": wilson(1, 1),
    }
    assert bench["accuracy_ci95"] == wilson(3, 4) and bench["guir1_accuracy_ci95"] == wilson(2, 4)
    # GUI-R1's categories are its raw group and ui_type
    assert bench["guir1_per_category"] == {"mobile-icon": 0.0, "mobile-text": 1.0, "web-text": 1.0, "windows-icon": 0.0}
    assert bench["guir1_per_category_ci95"]["mobile-icon"] == wilson(0, 1)
    assert "per_category" not in bench


def test_screenspot_pro_reports_application_categories(tmp_path):
    lines = [
        ground([0, 0, 100, 100], [50, 50], "icon", "CAD", platform="windows"),  # hit
        ground([0, 0, 100, 100], [150, 50], "text", "CAD", platform="windows"),  # miss
        ground([0, 0, 100, 100], [10, 10], "text", "Office", platform="macos"),  # hit
    ]
    bench = score_guir1_predictions(write_lines(tmp_path / "p.jsonl", lines), "screenspot_pro", tmp_path / "o")[
        "benchmark"
    ]
    assert {key: value["accuracy"] for key, value in bench["per_category"].items()} == {"CAD": 0.5, "Office": 1.0}
    assert bench["per_category_ui_type"]["CAD-icon"]["accuracy"] == 1.0
    assert bench["per_platform"] == {
        "desktop": {"num_samples": 3, "accuracy": pytest.approx(2 / 3), "accuracy_ci95": wilson(2, 3)}
    }


# ------------------------------------------------------------------------------------------ malformed input

MALFORMED = [
    # a column missing from every row: the file and the column are named
    ([{"image": "", "instruction": "x", "gt_action": "click", "gt_input_text": NO, "image_size": SIZE}],
     "has no column 'gt_bbox'"),
    # missing from one row only: that row is named
    ([nav("click", [5, 5], NO, "click", [5, 5], NO), {k: v for k, v in nav("click", [5, 5], NO, None, [0, 0], NO).items()
      if k != "gt_input_text"}], "row 1 has no 'gt_input_text'"),
    # an action r1_gui cannot read
    ([nav("fly", NONE, NO, "click", [5, 5], NO)], "row 0: gt_action 'fly'"),
    # no image_size and no image to read it from
    ([{**nav("click", [5, 5], NO, "click", [5, 5], NO), "image_size": None}], "no image_size and the image cannot"),
]  # fmt: skip


@pytest.mark.parametrize(("lines", "message"), MALFORMED)
def test_malformed_files_name_the_file_and_the_problem(lines, message, tmp_path):
    path = write_lines(tmp_path / "bad.jsonl", lines)
    with pytest.raises(EvaluationError, match="bad.jsonl") as error:
        score_guir1_predictions(path, "androidcontrol_low", tmp_path / "out")
    assert message in str(error.value)


def test_a_parquet_test_file_without_a_column_is_named(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist([{"image": "a.png", "gt_bbox": [1, 2, 3, 4]}]), tmp_path / "t.parquet")
    with pytest.raises(EvaluationError, match=r"t.parquet has no column 'instruction'"):
        load_benchmark(tmp_path / "t.parquet", "screenspot")


def test_a_bad_json_line_is_named(tmp_path):
    (tmp_path / "t.jsonl").write_text('{"image": ""}\n{not json\n')
    with pytest.raises(EvaluationError, match=r"t.jsonl line 2 is not valid JSON"):
        load_benchmark(tmp_path / "t.jsonl", "guiodyssey")


def test_cli_needs_a_dataset_unless_scoring_guir1_predictions(capsys, tmp_path):
    with pytest.raises(SystemExit):
        main(["--predictions", "p.jsonl", "--output_dir", "o"])
    assert "--dataset is required" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--benchmark", "mind2web", "--predictions", "p.jsonl", "--output_dir", "o"])
    assert "invalid choice: 'mind2web'" in capsys.readouterr().err
    # r1_gui's own {"id", "output"} lines with --benchmark: one error line, not a TypeError from load_samples
    write_lines(tmp_path / "p.jsonl", [{"id": "0", "output": "mobile.back()"}])
    with pytest.raises(SystemExit):
        main(["--benchmark", "screenspot", "--predictions", str(tmp_path / "p.jsonl"), "--output_dir", str(tmp_path)])
    assert "--dataset is required: --predictions" in capsys.readouterr().err


# ------------------------------------------------------------------------------- synthetic sets end to end

FAST = ["--max_new_tokens", "16", "--max_pixels", "50176", "--gallery_size", "2", "--batch_size", "2"]
ROWS = 6  # --max_samples: the first rows of each synthetic set


@pytest.fixture(scope="module")
def synthetic_sets(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("benchmark_sets")
    navigation = write_benchmark_set(folder, "guir1", 3, seed=1, width=224, height=448)["file"]
    grounding = write_benchmark_set(folder, "screenspot", 1, seed=1, width=224, height=448)["file"]
    return {"navigation": Path(navigation), "grounding": Path(grounding)}


def test_synthetic_sets_are_in_guir1_format(synthetic_sets):
    import pyarrow.parquet as pq

    navigation = pq.read_table(synthetic_sets["navigation"]).to_pylist()
    assert {"image", "instruction", "history", "gt_action", "gt_bbox", "gt_input_text", "group", "image_size"} <= set(
        navigation[0]
    )
    assert navigation[0]["history"] == "None" and navigation[1]["history"].startswith("Step 1: ")
    clicks = [row for row in navigation if row["gt_action"] == "click"]
    assert clicks and all(len(row["gt_bbox"]) == 4 for row in clicks)  # the target's box
    grounding = pq.read_table(synthetic_sets["grounding"]).to_pylist()
    assert {row["ui_type"] for row in grounding} <= {"text", "icon"} and {row["group"] for row in grounding} == {
        "mobile"
    }
    assert all(row["image"]["bytes"][:4] == b"\x89PNG" for row in grounding)


@pytest.mark.parametrize(
    ("kind", "benchmark", "arch"),
    [
        ("navigation", "guiodyssey", "qwen2_vl"),
        ("grounding", "screenspot_v2", "qwen2_vl"),
        ("navigation", "androidcontrol_high", "qwen3_vl"),  # asked in its mobile_use format, on its 999 grid
    ],
)
def test_tiny_model_on_a_synthetic_set_through_the_cli(kind, benchmark, arch, synthetic_sets, request, tmp_path):
    output_dir = tmp_path / "out"
    model = request.getfixturevalue(f"tiny_{arch}")
    argv = ["--model_name_or_path", str(model), "--benchmark", benchmark, "--dataset"]
    metrics = main([*argv, str(synthetic_sets[kind]), "--output_dir", str(output_dir), *FAST, "--max_samples", "6"])
    bench = metrics["benchmark"]
    assert len(load_benchmark(synthetic_sets[kind], benchmark)) >= ROWS
    rows = ROWS
    assert bench["num_samples"] == metrics["num_samples"] == rows
    report = (output_dir / "report.md").read_text()
    assert f"## Benchmark: {benchmark}" in report and len(list((output_dir / "gallery").glob("*.png"))) == 2
    if kind == "navigation":
        assert sum(group["num_samples"] for group in bench["per_group"].values()) == rows
        assert sum(sum(row.values()) for row in bench["confusion_matrix"].values()) == rows
        assert bench["step_success"] <= bench["type_accuracy"]
    else:
        assert sum(value["num_samples"] for value in bench["per_ui_type"].values()) == rows
    run_config = json.loads((output_dir / "run_config.json").read_text())
    assert run_config["benchmark"] == benchmark
    assert run_config["prompt_style"] == ("mobile_use" if arch == "qwen3_vl" else "aguvis")  # --prompt_style auto


KILL_AFTER_FIRST_BATCH = """
import os, signal, sys
from r1_gui.evaluation.run import predictions_file
write = predictions_file.RecordWriter.write
def write_then_die(self, batch):
    write(self, batch)
    os.kill(os.getpid(), signal.SIGKILL)
predictions_file.RecordWriter.write = write_then_die
from r1_gui.evaluation.steps.cli import main
main(sys.argv[1:])
"""


def test_resume_after_a_kill_gives_the_uninterrupted_metrics(synthetic_sets, tiny_qwen2_vl, tmp_path):
    argv = ["--model_name_or_path", str(tiny_qwen2_vl), "--benchmark", "androidcontrol_low"]
    argv += ["--dataset", str(synthetic_sets["navigation"]), *FAST, "--max_samples", str(ROWS)]
    fresh = main([*argv, "--output_dir", str(tmp_path / "fresh")])
    killed = subprocess.run(
        [sys.executable, "-c", KILL_AFTER_FIRST_BATCH, *argv, "--output_dir", str(tmp_path / "resumed")],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert killed.returncode == -9, killed.stderr
    written = (tmp_path / "resumed" / "predictions.jsonl").read_text().splitlines()
    assert len(written) == 2  # the first batch only
    resumed = main([*argv, "--output_dir", str(tmp_path / "resumed")])
    assert resumed == fresh
    # the benchmark is one of the recorded settings: the same file under another name is not resumed
    other = [arg if arg != "androidcontrol_low" else "guiodyssey" for arg in argv]
    with pytest.raises(SystemExit, match="benchmark: 'androidcontrol_low' -> 'guiodyssey'"):
        main([*other, "--output_dir", str(tmp_path / "resumed")])


def test_guir1_predictions_through_the_cli_without_a_model(tmp_path, capsys):
    lines = [line for line, _, _ in NAVIGATION_CASES]
    path = write_lines(tmp_path / "androidcontrol_high_test.json", lines)
    code = "import sys; from r1_gui.evaluation.steps.cli import main; main(sys.argv[1:]); print(sorted(sys.modules))"
    argv = ["--benchmark", "androidcontrol_high", "--predictions", str(path), "--output_dir", str(tmp_path / "o")]
    done = subprocess.run([sys.executable, "-c", code, *argv], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "'torch'" not in done.stdout and "| all | 11 | 0.6364 [0.3538, 0.8483] | 0.8000 [" in done.stdout


def test_guir1_leaves_out_a_category_without_a_hit():
    """All back steps wrong: r1_gui's type accuracy counts them, GUI-R1's sum never sees the category."""
    from r1_gui.evaluation.peers.guir1_eval import navigation_numbers

    lines = [
        nav("press_back", NONE, NO, "press_home", [0, 0], NO),  # wrong, and the only press_back: no hit
        nav("complete", NONE, NO, "complete", [0, 0], NO),  # right
        nav("scroll", NONE, "up", "scroll", [0, 0], "down"),  # wrong direction, the only scroll: no text hit
        nav("click", [500, 500], NO, "click", [520, 500], NO),  # right
    ]
    numbers = navigation_numbers(lines)
    # type: high-complete 1/1, high-scroll 1/1, high-click 1/1 (high-press_back 0/1 left out) -> 3/3
    # step: high-click-grounding 1/1 (high-scroll-text 0/1 left out) -> 1/1
    assert (numbers["guir1_type_accuracy"], numbers["guir1_step_accuracy"]) == (1.0, 1.0)
    # no hit at all anywhere: GUI-R1's script divides by zero; here None
    assert navigation_numbers(lines[:1])["guir1_type_accuracy"] is None


def test_raw_outputs_in_pixels_of_the_resized_screenshot_score_on_a_benchmark(synthetic_sets, tmp_path):
    """--predictions {"id", "output"} on a benchmark file: ids are row numbers; a Qwen2.5-VL-style think/answer
    output in GUI-R1 JSON, in pixels of the resized screenshot, is read with the coordinates of r1_gui.actions."""
    from r1_gui.actions import format_action, parse_action, resized_size
    from r1_gui.evaluation import evaluate_predictions

    rows = load_benchmark(synthetic_sets["navigation"], "androidcontrol_high")
    screen = resized_size(224, 448, 3136, 50176)  # the synthetic screens, at --max_pixels 50176
    lines = []
    for row in rows:
        truth = parse_action(row["solution"][len("<answer>") : -len("</answer>")])
        answer = format_action(truth, "guir1", coordinates="pixels", image_size=screen)
        lines.append({"id": row["id"], "output": f"<think>it is this.</think><answer>{answer}</answer>"})
    path = write_lines(tmp_path / "outputs.jsonl", lines)
    metrics = evaluate_predictions(
        path, synthetic_sets["navigation"], output_dir=tmp_path / "o", benchmark="androidcontrol_high",
        prompt_style="think_answer", coordinates="pixels", max_pixels=50176, gallery_size=0,
    )  # fmt: skip
    bench = metrics["benchmark"]
    # the ground truth itself, one pixel of rounding away: right on every r1_gui metric and GUI-R1's type and text
    for name in ("type_accuracy", "grounding_accuracy", "text_accuracy", "step_success", "guir1_type_accuracy"):
        assert bench[name] == 1.0, name
    assert bench["guir1_text_accuracy"] in (1.0, None) and bench["num_samples"] == len(rows)


def guir1_output_of(test_file: Path, path: Path, changes: dict | None = None) -> Path:
    """GUI-R1's inference output for a test file, as its scripts write it: every test row's fields with the image
    blanked, and a prediction (the ground-truth action name, pred_coord [0, 0]); ``changes``: {row: {field: value}} made after that."""
    from r1_gui.evaluation.peers.benchmarks import read_table

    lines = []
    for index, row in enumerate(read_table(test_file)):
        line = {**row, "image": "", "pred_action": row["gt_action"], "pred_coord": [0, 0]}
        line["pred_input_text"] = row["gt_input_text"]
        lines.append({**line, **(changes or {}).get(index, {})})
    return write_lines(path, lines)


def run_eval_cli(*argv) -> subprocess.CompletedProcess:
    """`python eval/test_aitw.py ARGV` as a user types it."""
    command = [sys.executable, "eval/test_aitw.py", *map(str, argv)]
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)


def test_guir1_predictions_are_scored_against_the_dataset_given(synthetic_sets, tmp_path):
    """--dataset beside a GUI-R1 inference output: its rows are the ground truth (and the gallery's screenshots),
    and predictions made for another test file are refused, naming the first row that differs."""
    test_file = synthetic_sets["navigation"]
    common = ["--benchmark", "androidcontrol_high", "--dataset", test_file]
    made_for_it = guir1_output_of(test_file, tmp_path / "preds.json")
    done = run_eval_cli(*common, "--predictions", made_for_it, "--output_dir", tmp_path / "o", "--gallery_size", "2")
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "o" / "run_config.json").read_text())["dataset"] == str(test_file)
    alone = score_guir1_predictions(made_for_it, "androidcontrol_high", tmp_path / "alone")  # the same ground truth
    assert json.loads((tmp_path / "o" / "metrics.json").read_text())["benchmark"] == alone["benchmark"]
    assert len(list((tmp_path / "o" / "gallery").glob("*.png"))) == 2  # the test file's screenshots

    made_for_another = guir1_output_of(test_file, tmp_path / "other.json", {2: {"gt_action": "press_home"}})
    refused = run_eval_cli(*common, "--predictions", made_for_another, "--output_dir", tmp_path / "o2")
    assert refused.returncode == 2, refused.stderr
    first = refused.stderr.splitlines()[0]
    assert first.startswith(f"error: --predictions {made_for_another} row 2 has gt_action 'press_home' where "), first
    assert not (tmp_path / "o2").exists()
    shorter = guir1_output_of(test_file, tmp_path / "short.json")
    shorter.write_text("".join(shorter.read_text().splitlines(keepends=True)[:-1]))
    refused = run_eval_cli(*common, "--predictions", shorter, "--output_dir", tmp_path / "o3")
    assert refused.returncode == 2 and " rows and --dataset " in refused.stderr.splitlines()[0], refused.stderr
