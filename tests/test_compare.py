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


def episode(key: str, success: bool, hits: list[bool | None], matched=None, progress=None, repeat: int = 0) -> dict:
    """An episodes.jsonl line: one turn per entry of ``hits`` (True/False: a click in or out of the turn's target box,
    None: a turn without one), each parsed."""
    turns = [{"parsed": True, "matched": matched, "click_hit": hit} for hit in hits]
    return {"id": key + (f"#{repeat}" if repeat else ""), "scores": {"success": success}, "success": success,
            "steps": len(turns), "turns": turns, "progress": progress, "repeat": repeat}  # fmt: skip


def episode_run(folder, records):
    folder.mkdir(parents=True)
    (folder / "episodes.jsonl").write_text("".join(json.dumps(record) + "\n" for record in records))
    (folder / "metrics.json").write_text(json.dumps({"protocol": {"split": {"sha256": "same"}}}))
    return folder


def test_episode_units_pair_each_episode_metric_as_a_ratio_of_its_counts():
    from r1_gui.evaluation.stats.compare import episode_pairs

    pairs = episode_pairs(
        [
            episode("a:1", True, [True, False], matched=True, progress=0.5),
            episode("a:1", False, [None, None, False], matched=False, progress=None, repeat=1),  # its repeat: one unit
            episode("b:2", False, [None]),
        ]
    )
    assert pairs == {
        "a:1": {"success_rate": (1.0, 2.0), "mean_steps_to_success": (2.0, 1.0), "turn_parse_rate": (5.0, 5.0),
                "mean_turns": (5.0, 2.0), "click_hit_rate": (1.0, 3.0), "step_success": (2.0, 5.0),
                "episode_progress": (0.5, 1.0)},
        "b:2": {"success_rate": (0.0, 1.0), "mean_steps_to_success": (0.0, 0.0), "turn_parse_rate": (1.0, 1.0),
                "mean_turns": (1.0, 1.0), "click_hit_rate": (0.0, 0.0), "step_success": (0.0, 0.0),
                "episode_progress": (0.0, 0.0)},
    }  # fmt: skip


def test_episode_runs_compare_turns_and_click_hits_and_leave_out_what_neither_reports(tmp_path):
    # 10 episodes; B wins 4 more, in fewer turns, and hits where A missed
    a = [episode(f"t:{i}", i < 3, [False, False, i < 3]) for i in range(10)]
    b = [episode(f"t:{i}", i < 7, [True, i < 7] if i < 7 else [True, False, False]) for i in range(10)]
    result = compare(episode_run(tmp_path / "a", a), episode_run(tmp_path / "b", b))
    assert result["unit"] == "episodes" and result["units"] == 10
    # no turn was judged against a recorded step and no episode reports progress: those two are not compared
    assert list(result["metrics"]) == [
        "success_rate", "mean_steps_to_success", "mean_turns", "turn_parse_rate", "click_hit_rate"
    ]  # fmt: skip
    metrics = result["metrics"]
    assert (metrics["success_rate"]["a"], metrics["success_rate"]["b"]) == (0.3, 0.7)
    assert (metrics["mean_turns"]["a"], metrics["mean_turns"]["b"]) == (3.0, pytest.approx(2.3))
    assert metrics["click_hit_rate"]["a"] == pytest.approx(3 / 30)
    assert metrics["click_hit_rate"]["b"] == pytest.approx((7 * 2 + 3) / 23)
    assert metrics["mean_turns"]["difference"] == pytest.approx(-0.7) and metrics["mean_turns"]["significant"]


# Issue 70 item 1: each metric is defined once (r1_gui.evaluation.metrics' tables); metrics.json and compare read the
# same definition. Until 9db8b9d, metrics.json's episode_progress divided by every play (an episode that reports no
# progress counted as 0) and compare's by the plays that report progress.
def test_every_episode_metric_is_the_same_in_metrics_json_and_in_compare(tmp_path):
    from r1_gui.evaluation.metrics import episode_metrics

    records = [
        episode("a:1", True, [True, False], matched=True, progress=1.0),
        episode("a:1", False, [None, False, False], matched=False, progress=None, repeat=1),  # reports no progress
        episode("b:2", False, [None], progress=0.5),
        episode("c:3", True, [True], matched=True, progress=None),  # reports no progress
        episode("d:4", False, [False, None], matched=False, progress=0.0),
    ]
    metrics = episode_metrics([record | {"task": "t"} for record in records])
    # by hand: progress 1.0 + 0.5 + 0.0 over the 3 plays that report it (2 of 5 report none)
    assert metrics["episode_progress"] == pytest.approx(1.5 / 3)
    assert metrics["step_success"] == pytest.approx(3 / 8)  # matched turns of the 8 turns judged (b:2's is not)
    assert metrics["click_hit_rate"] == pytest.approx(2 / 6)  # hits of the 6 turns with a target box
    result = compare(episode_run(tmp_path / "a", records), episode_run(tmp_path / "b", records))
    ratios = ["success_rate", "mean_steps_to_success", "mean_turns", "turn_parse_rate", "step_success",
              "click_hit_rate", "episode_progress"]  # fmt: skip
    assert set(ratios) <= set(metrics) and set(result["metrics"]) <= set(ratios)
    for name, row in result["metrics"].items():
        assert row["a"] == pytest.approx(metrics[name]), name
        assert row["difference"] == 0, name


def test_every_step_metric_is_the_same_in_metrics_json_and_in_compare(tmp_path):
    rows = steps(20)
    folder = run(tmp_path / "a", rows, right=set(range(7)))
    metrics = json.loads((folder / "metrics.json").read_text())
    result = compare(folder, run(tmp_path / "b", rows, right=set(range(7))))
    assert list(result["metrics"]) == ["parse_rate", *METRICS]
    assert result["metrics"]["type_accuracy"]["a"] == metrics["type_accuracy"] == pytest.approx(7 / 20)
    for name, row in result["metrics"].items():
        assert row["a"] == pytest.approx(metrics[name]), name
