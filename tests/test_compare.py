"""Comparing two evaluation runs (r1_gui.evaluation.stats.compare): a one-row change is noise, fixing 40 of 200 is not,
another split is refused naming the field; on real run folders written by evaluate_predictions (no model).

The expected intervals are the binomial quantiles the paired bootstrap estimates (tests/test_intervals.py works
them out): one differing step of 200 -> [0, 0.015]; 40 more right of 200 -> [0.145, about 0.2575].
"""

import json

import pytest

from r1_gui.evaluation import evaluate_predictions
from r1_gui.evaluation.metrics import METRICS
from r1_gui.evaluation.stats.compare import compare, main

RIGHT, WRONG = "Action: go back.\nassistantos\nmobile.back()", "Action: go home.\nassistantos\nmobile.home()"


def steps(count: int = 200, instruction: str = "Go back") -> list[dict]:
    """``count`` steps whose ground truth is mobile.back() (no screenshot is opened: normalized coordinates)."""
    problem = f"Please generate ...\n\nInstruction: {instruction}\n\nPrevious actions:\nNone"
    return [
        {"id": f"s{i:03d}", "image": "unused.png", "problem": problem, "solution": "<answer>mobile.back()</answer>",
         "instruction": instruction}
        for i in range(count)
    ]  # fmt: skip


def run(folder, rows, right: set[int]):
    """Score predictions right on the step numbers in ``right`` (wrong elsewhere) into ``folder``."""
    folder.mkdir(parents=True)
    predictions = folder.parent / f"{folder.name}.jsonl"
    lines = [json.dumps({"id": row["id"], "output": RIGHT if i in right else WRONG}) for i, row in enumerate(rows)]
    predictions.write_text("\n".join(lines) + "\n")
    evaluate_predictions(predictions, rows, output_dir=folder, gallery_size=0)
    return folder


def test_a_one_row_change_is_noise(tmp_path):
    rows = steps()
    a = run(tmp_path / "a", rows, set(range(120)))
    b = run(tmp_path / "b", rows, set(range(121)))  # one more step right
    result = compare(a, b)
    assert (result["unit"], result["units"], result["protocol_changes"]) == ("steps", 200, [])
    step = result["metrics"]["step_success"]
    assert (step["a"], step["b"]) == (pytest.approx(0.6), pytest.approx(0.605))
    assert step["difference"] == pytest.approx(0.005)
    assert step["ci95"] == pytest.approx([0.0, 0.015])  # P(the step is never drawn) = 0.367
    assert step["significant"] is False
    assert result["metrics"]["parse_rate"]["difference"] == 0.0  # both parse every output
    assert set(result["metrics"]) == {"parse_rate", *METRICS}
    # the values are metrics.json's
    assert step["b"] == json.loads((b / "metrics.json").read_text())["step_success"]


def test_fixing_40_of_200_is_beyond_noise(tmp_path, capsys):
    rows = steps()
    a = run(tmp_path / "a", rows, set(range(60)))
    b = run(tmp_path / "b", rows, set(range(100)))  # the same 60, and 40 more
    result = main([str(a), str(b), "--json"])
    printed = json.loads(capsys.readouterr().out)
    assert printed == result
    step = result["metrics"]["step_success"]
    assert step["difference"] == pytest.approx(0.2)
    assert step["ci95"][0] == pytest.approx(0.145) and step["ci95"][1] == pytest.approx(0.2575, abs=0.003)
    assert step["significant"] is True
    # the text form: one row per metric, the verdict last
    main([str(a), str(b)])
    table = capsys.readouterr().out
    assert "| step_success | 0.3000 | 0.5000 | +0.2000 | [0.1450, " in table and table.rstrip().endswith("| yes |")


def test_another_split_is_refused_naming_the_field(tmp_path, capsys):
    a = run(tmp_path / "a", steps(), set(range(60)))
    b = run(tmp_path / "b", steps(instruction="Go back now"), set(range(100)))  # the same ids, other rows
    capsys.readouterr()  # the two runs' own output (their progress bars)
    with pytest.raises(SystemExit) as refused:
        main([str(a), str(b)])
    assert refused.value.code == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("error: the protocol cards differ in split.sha256 (split.sha256: ")
    assert "pass --allow_protocol_change" in line
    allowed = compare(a, b, allow_protocol_change=True)
    assert [change["field"] for change in allowed["protocol_changes"]] == ["split.sha256"]
    assert allowed["metrics"]["step_success"]["significant"] is True


@pytest.mark.parametrize(
    "change, field",
    [
        ({"max_pixels": 50176}, "image.max_pixels"),  # other screenshot bounds: the model saw other images
        ({"coordinates": "grid1000"}, "coordinates"),  # the outputs read in another convention
        ({"prompt_style": "think_answer", "coordinates": "normalized"}, "prompt.style"),  # another prompt style
    ],
)
def test_other_settings_are_refused_too(tmp_path, change, field):
    rows = steps()
    a = run(tmp_path / "a", rows, set(range(60)))
    folder = tmp_path / "b"
    folder.mkdir()
    (tmp_path / "b.jsonl").write_text((tmp_path / "a.jsonl").read_text())
    evaluate_predictions(tmp_path / "b.jsonl", rows, output_dir=folder, gallery_size=0, **change)
    with pytest.raises(ValueError, match=f"the protocol cards differ in {field} "):
        compare(a, folder)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda path: None, r"metrics.json does not exist"),  # an empty folder: no finished run
        (lambda path: (path / "metrics.json").write_text("{"), r"metrics.json is not valid JSON"),  # cut short
        (lambda path: (path / "metrics.json").write_text("{}"), r"has no protocol card .*rerun the same"),  # old
    ],
)
def test_a_folder_that_is_not_a_run_is_named(tmp_path, make, message):
    good = run(tmp_path / "a", steps(10), set(range(5)))
    bad = tmp_path / "bad"
    bad.mkdir()
    make(bad)
    with pytest.raises(ValueError, match=message):
        compare(good, bad)
