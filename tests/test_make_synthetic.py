"""The synthetic twin (r1_gui.synthetic; CLI dataset/make_synthetic.py): schema, determinism, actions, safety."""

import json
import re
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from r1_gui.actions import Action, format_action, parse_action
from r1_gui.actions.aguvis import format_number, quote
from r1_gui.synthetic import screens
from r1_gui.synthetic.aguvis_records import LEVELS, SYSTEM_PROMPT, box_fraction, make_records
from r1_gui.synthetic.cli import generator_config, main, parse_args
from r1_gui.synthetic.episodes import (
    ACTION_TYPES,
    HALF_PAGE_SCROLL_CODE,
    SyntheticConfig,
    app_colors,
    iter_episodes,
    precise_point_code,
    screen_fraction,
    synthetic_config,
)
from r1_gui.synthetic.writer import GeneratorConfig, generate

WIDTH, HEIGHT = 300, 650  # not the default size, so the size knob is exercised too
HUMAN_PATTERN = re.compile(
    r"<image>\nPlease generate the next move according to the ui screenshot, instruction and previous actions\."
    r"\n\nInstruction: (?P<instruction>[^\n]+)\n\nPrevious actions:\n"
    r"(?P<history>None|Step 1: [^\n]+(?:\nStep \d+: [^\n]+)*)\Z"
)
NUMBER = r"(?:0|1)(?:\.\d{1,4})?"
POINT_PATTERN = re.compile(rf"^(?:pyautogui\.click|mobile\.long_press)\(x=({NUMBER}), y=({NUMBER})\)$")
CODE_PATTERNS = {  # action type -> the exact Aguvis form of its code
    "click": re.compile(rf"^pyautogui\.click\(x={NUMBER}, y={NUMBER}\)$"),
    "long_press": re.compile(rf"^mobile\.long_press\(x={NUMBER}, y={NUMBER}\)$"),
    "type": re.compile(r"^pyautogui\.write\(message='(?:[^'\\]|\\.)*'\)$"),
    "press_enter": re.compile(r"^pyautogui\.press\(keys=\['enter'\]\)$"),
    "scroll": re.compile(r"^pyautogui\.scroll\(page=-0\.5\)$"),
    "swipe": re.compile(rf"^mobile\.swipe\(from_coord=\[{NUMBER}, {NUMBER}\], to_coord=\[{NUMBER}, {NUMBER}\]\)$"),
    "back": re.compile(r"^mobile\.back\(\)$"),
    "home": re.compile(r"^mobile\.home\(\)$"),
    "open_app": re.compile(r"^mobile\.open_app\(app_name='[^']+'\)$"),
    "wait": re.compile(r"^mobile\.wait\(seconds=3\)$"),
    "terminate": re.compile(r"^mobile\.terminate\(status='success'\)$"),
}


def action_type(code: str) -> str:
    matches = [name for name, pattern in CODE_PATTERNS.items() if pattern.match(code)]
    assert len(matches) == 1, f"code {code!r} is not in exactly one Aguvis form: {matches}"
    return matches[0]


def load_levels(folder: Path) -> dict[str, list[dict]]:
    return {level: json.loads((folder / f"synthetic-{level}.json").read_text()) for level in LEVELS}


def by_episode(records: list[dict]) -> dict[str, list[tuple[int, dict]]]:
    episodes = defaultdict(list)
    for record in records:
        subset, episode, step = record["image"].rsplit("_", 2)
        assert subset == "synthetic" and "_" not in episode and step.endswith(".jpg")
        episodes[episode].append((int(step.removesuffix(".jpg")), record))
    return episodes


@pytest.fixture(scope="module")
def small_dataset(tmp_path_factory) -> tuple[Path, dict]:
    folder = tmp_path_factory.mktemp("synthetic") / "out"
    summary = generate(folder, 28, seed=3, width=WIDTH, height=HEIGHT, progress=False)
    return folder, summary


def test_every_record_has_the_aguvis_schema(small_dataset):
    folder, summary = small_dataset
    levels = load_levels(folder)
    assert summary["records"] == len(levels["l1"]) == len(levels["l2"]) == len(levels["l3"]) > 28
    for record in levels["l1"]:
        assert list(record) == ["image", "conversations", "bbox"]
        system, human, plan, code = record["conversations"]
        assert system == {"from": "system", "value": SYSTEM_PROMPT}
        assert set(human) == {"from", "value"} and human["from"] == "human"
        assert HUMAN_PATTERN.match(human["value"]), human["value"]
        assert (plan["from"], plan["recipient"], plan["end_turn"]) == ("gpt", "all", False)
        assert (code["from"], code["recipient"], code["end_turn"]) == ("gpt", "os", True)
        action_type(code["value"])
        with Image.open(folder / "images" / record["image"]) as screenshot:
            assert (screenshot.format, screenshot.size) == ("JPEG", (WIDTH, HEIGHT))


def test_levels_hold_the_same_records_with_their_plan_forms(small_dataset):
    levels = load_levels(small_dataset[0])
    for l1, l2, l3 in zip(levels["l1"], levels["l2"], levels["l3"], strict=True):
        assert l1["image"] == l2["image"] == l3["image"] and l1["bbox"] == l2["bbox"] == l3["bbox"]
        assert [turn for i, turn in enumerate(l1["conversations"]) if i != 2] == [
            turn for i, turn in enumerate(l3["conversations"]) if i != 2
        ]
        action = l1["conversations"][2]["value"]
        assert re.fullmatch(r"Action: [^\n]+", action)
        assert re.fullmatch(r"Thought: [^\n]+\n" + re.escape(action), l2["conversations"][2]["value"])
        assert re.fullmatch(
            r"Observation: [^\n]+\n" + re.escape(l2["conversations"][2]["value"]), l3["conversations"][2]["value"]
        )


def test_steps_are_numbered_and_history_repeats_earlier_actions(small_dataset):
    for steps in by_episode(load_levels(small_dataset[0])["l1"]).values():
        assert [number for number, _ in steps] == list(range(len(steps)))
        actions = [record["conversations"][2]["value"].removeprefix("Action: ") for _, record in steps]
        for number, record in steps:
            history = HUMAN_PATTERN.match(record["conversations"][1]["value"])["history"]
            expected = "\n".join(f"Step {i + 1}: {text}" for i, text in enumerate(actions[:number])) or "None"
            assert history == expected
        instructions = {HUMAN_PATTERN.match(r["conversations"][1]["value"])["instruction"] for _, r in steps}
        assert len(instructions) == 1
        assert action_type(steps[-1][1]["conversations"][3]["value"]) == "terminate"


def test_points_fall_inside_their_bbox_and_boxes_inside_the_screen():
    records = make_records(90, seed=1, click_jitter=0.5)["l1"]
    pointed = 0
    for record in records:
        code, bbox = record["conversations"][3]["value"], record["bbox"]
        point = POINT_PATTERN.match(code)
        if not point:
            assert bbox is None, code
            continue
        x, y = float(point[1]), float(point[2])
        x1, y1, x2, y2 = bbox
        assert 0 <= x1 < x2 <= 1 and 0 <= y1 < y2 <= 1
        assert x1 <= x <= x2 and y1 <= y <= y2, (code, bbox)
        pointed += 1
    assert pointed > 70


def test_every_promised_action_type_appears():
    records = make_records(70, seed=0)["l1"]
    seen = {action_type(record["conversations"][3]["value"]) for record in records}
    assert seen == set(ACTION_TYPES)


def test_targets_are_drawn_where_the_bbox_says(small_dataset):
    folder = small_dataset[0]
    for record in load_levels(folder)["l1"]:
        if record["bbox"]:
            x1, y1, x2, y2 = record["bbox"]
            with Image.open(folder / "images" / record["image"]) as screenshot:
                crop = screenshot.convert("L").crop((x1 * WIDTH, y1 * HEIGHT, x2 * WIDTH, y2 * HEIGHT))
            assert np.asarray(crop).std() > 8, f"nothing drawn at the target of {record['image']}"


def test_target_positions_vary_for_the_same_label():
    records = make_records(120, seed=0, task_mix=["launch_icon"])["l1"]
    boxes = defaultdict(set)
    for record in records:
        if record["bbox"]:
            app = re.search(r"Click on the (.+) app icon", record["conversations"][2]["value"])[1]
            boxes[app].add(tuple(record["bbox"]))
    assert max(len(positions) for positions in boxes.values()) >= 3


def test_same_seed_is_byte_identical_and_other_seeds_differ(tmp_path):
    first = generate(tmp_path / "a", 7, seed=5, width=WIDTH, height=HEIGHT, progress=False)
    generate(tmp_path / "b", 7, seed=5, width=WIDTH, height=HEIGHT, progress=False)
    generate(tmp_path / "c", 7, seed=6, width=WIDTH, height=HEIGHT, progress=False)
    for level in LEVELS:
        name = f"synthetic-{level}.json"
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
        assert (tmp_path / "a" / name).read_bytes() != (tmp_path / "c" / name).read_bytes()
    images = sorted(path.name for path in (tmp_path / "a" / "images").iterdir())
    assert len(images) == first["records"]
    for name in images:
        assert (tmp_path / "a" / "images" / name).read_bytes() == (tmp_path / "b" / "images" / name).read_bytes()


@pytest.mark.parametrize("interruption", [RuntimeError("disk full"), KeyboardInterrupt()])
def test_interrupted_run_leaves_nothing_behind(tmp_path, monkeypatch, interruption):
    render, calls = screens.Screen.render, []

    def render_then_fail(screen, size):
        calls.append(1)
        if len(calls) > 5:
            raise interruption
        return render(screen, size)

    monkeypatch.setattr(screens.Screen, "render", render_then_fail)
    with pytest.raises(type(interruption)):
        generate(tmp_path / "out", 10, width=WIDTH, height=HEIGHT, progress=False)
    assert list(tmp_path.iterdir()) == []


def test_refuses_a_non_empty_output_dir_unless_overwrite(tmp_path):
    """--overwrite replaces an earlier output only: it used to delete keep.txt without a word (issue 24)."""
    output = tmp_path / "out"
    output.mkdir()
    (output / "keep.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="overwrite"):
        generate(output, 2, images="none", progress=False)
    argv = ["--output_dir", str(output), "--episodes", "2", "--no_images", "--overwrite"]
    with pytest.raises(
        SystemExit, match=r"^error: --overwrite replaces only an earlier output .*not one: it holds keep\.txt"
    ):
        main(parse_args(argv))
    assert [path.name for path in output.iterdir()] == ["keep.txt"]
    (output / "keep.txt").unlink()
    generate(output, 2, images="stub", progress=False)
    generate(output, 2, images="none", overwrite=True, progress=False)
    assert sorted(path.name for path in output.iterdir()) == [f"synthetic-{level}.json" for level in ("l1", "l2", "l3")]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["out"]


def test_a_killed_run_leaves_a_partial_folder_that_the_next_run_removes(tmp_path, kill_then_rerun):
    """kill -9 runs no cleanup: its hidden .out.partial-* folder stayed for good (issue 24)."""
    argv = ["--output_dir", str(tmp_path / "out"), "--episodes", "2", "--width", "224", "--height", "448"]
    partial, rerun = kill_then_rerun(
        "r1_gui.synthetic.screens:Screen.render", "dataset/make_synthetic.py", argv, tmp_path
    )
    assert f"removed {tmp_path / partial}, left by an interrupted run" in rerun.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == ["out"]


def test_exact_record_count_with_stub_images_or_none(tmp_path):
    summary = generate(tmp_path / "stub", records=50, seed=2, images="stub", progress=False)
    records = load_levels(tmp_path / "stub")["l1"]
    assert summary["records"] == len(records) == 50
    assert all((tmp_path / "stub" / "images" / record["image"]).is_file() for record in records)
    generate(tmp_path / "json", records=50, seed=2, images="none", progress=False)
    assert not (tmp_path / "json" / "images").exists()
    assert load_levels(tmp_path / "json") == load_levels(tmp_path / "stub") == make_records(records=50, seed=2)


def test_grid_and_task_mix_knobs():
    records = make_records(12, seed=0, grid=(2, 2), task_mix=["launch_icon", "icon_menu"])["l3"]
    first_steps = [r for r in records if r["image"].endswith("_0.jpg")]
    assert all("2x2 app grid" in r["conversations"][2]["value"] for r in first_steps)
    assert {action_type(r["conversations"][3]["value"]) for r in first_steps} == {"click", "long_press"}
    with pytest.raises(ValueError, match="launch_icon"):
        make_records(1, task_mix=["fly_to_moon"])


def test_decimals_knob_shortens_coordinates():
    codes = [r["conversations"][3]["value"] for r in make_records(20, seed=0, decimals=1)["l1"]]
    points = [POINT_PATTERN.match(code) for code in codes]
    assert any(points)
    assert all(len(number.split(".")[1]) == 1 for point in points if point for number in point.groups())
    with pytest.raises(ValueError, match="decimals"):
        make_records(1, decimals=0)


def test_apps_knob_limits_the_app_names_and_each_app_keeps_its_colour():
    records = make_records(40, seed=0, grid=(2, 2), apps=4, task_mix=["launch_icon"])["l1"]
    first_four = set(screens.APP_NAMES[:4])
    named = {r["conversations"][2]["value"].split("the ")[1].split(" app")[0] for r in records if "_0." in r["image"]}
    assert named <= first_four and len(named) > 1
    colors = app_colors()
    assert len({colors[app] for app in first_four}) == 4  # up to 12 apps, every icon colour differs
    with pytest.raises(ValueError, match="apps must be between 4"):
        make_records(1, grid=(2, 2), apps=3)


@pytest.mark.parametrize(
    "value, text",
    [
        (0.5, "0.5"),  # trailing zeros trimmed
        (0.0625, "0.0625"),  # four decimals kept
        (0.123456, "0.1235"),  # rounded to four decimals
        (1.0, "1.0"),  # at least one decimal
        (0.0, "0.0"),
        (1.2, "1.0"),  # clamped to the screen
    ],
)
def test_coordinate_format(value, text):
    assert format_number(screen_fraction(value)) == text


def test_typed_text_is_quoted_safely():
    assert quote("it's a \\ test") == "'it\\'s a \\\\ test'"


def test_cli_writes_json_and_prints_a_summary(tmp_path, capsys):
    args = parse_args(["--output_dir", str(tmp_path / "cli"), "--episodes", "14", "--no_images"])
    summary = main(args)
    assert summary["records"] == len(load_levels(tmp_path / "cli")["l2"])
    assert sum(summary["action_counts"].values()) == summary["records"]
    assert f"{summary['records']} records (14 episodes)" in capsys.readouterr().out


@pytest.mark.parametrize("interruption", [RuntimeError("disk full"), KeyboardInterrupt()])
def test_an_interrupted_overwrite_leaves_the_earlier_output_as_it_was(tmp_path, monkeypatch, interruption):
    output = tmp_path / "out"
    generate(output, 3, seed=1, width=WIDTH, height=HEIGHT, progress=False)
    before = {path: path.read_bytes() for path in output.rglob("*") if path.is_file()}
    render, calls = screens.Screen.render, []

    def render_then_fail(screen, size):
        calls.append(1)
        if len(calls) > 5:  # midway: some images of the new run are written, no JSON yet
            raise interruption
        return render(screen, size)

    monkeypatch.setattr(screens.Screen, "render", render_then_fail)
    with pytest.raises(type(interruption)):
        generate(output, 10, seed=2, width=WIDTH, height=HEIGHT, overwrite=True, progress=False)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["out"]  # no staging folder left beside it
    assert {path: path.read_bytes() for path in output.rglob("*") if path.is_file()} == before


def test_every_step_code_is_its_action_as_format_action_writes_it():
    """One writer of action code: r1_gui.actions; the half-page scroll is the one hand-written call."""
    config = synthetic_config(click_jitter=0.5, decimals=2)
    steps = [step for _, episode in iter_episodes(config, 0, 70, None) for step in episode.steps]
    assert {step.action_type for step in steps} == set(ACTION_TYPES)
    for step in steps:
        assert parse_action(step.code) == step.action, step.code
        if step.action_type == "scroll":
            assert step.code == HALF_PAGE_SCROLL_CODE
        else:
            assert step.code == format_action(step.action)


def test_decimals_five_and_six_write_that_many_as_before_the_package_split():
    """--decimals took 1 to 6 before synthetic/ wrote actions with format_action (4 decimals at most); 5 and 6 still
    write their decimals, and the code parses back to the step's action."""
    assert format_number(screen_fraction(0.123456, 2)) == "0.12"
    for decimals in (5, 6):
        codes = [
            r["conversations"][3]["value"] for r in make_records(30, seed=0, click_jitter=0.5, decimals=decimals)["l1"]
        ]
        clicks = [code for code in codes if code.startswith(("pyautogui.click(", "mobile.long_press("))]
        digits = [len(number.split(".")[1]) for code in clicks for number in re.findall(r"=([0-9.]+)", code)]
        assert clicks and max(digits) == decimals, (decimals, clicks[:3])
        assert all(parse_action(code) is not None for code in clicks)
    assert precise_point_code(Action("click", x=0.123456, y=0.5), 6) == "pyautogui.click(x=0.123456, y=0.5)"
    assert precise_point_code(Action("long_press", x=0.1, y=0.02), 5) == "mobile.long_press(x=0.1, y=0.02)"
    for decimals in (0, 7):
        with pytest.raises(ValueError, match="decimals must be between 1 and 6"):
            make_records(1, decimals=decimals)


def test_box_fraction_divides_by_the_screen_size():
    assert box_fraction((30, 65, 150, 130), screens.Size(300, 650)) == [0.1, 0.1, 0.5, 0.2]
    assert box_fraction(None, screens.Size(300, 650)) is None


def test_the_command_line_builds_the_generator_config_once():
    argv = ["--output_dir", "x", "--records", "9", "--seed", "4", "--width", "224", "--height", "448", "--grid",
            "2x2", "--task_mix", "go_home,go_back", "--click_jitter", "0.2", "--decimals", "2", "--apps", "6",
            "--image_stub", "--jpeg_quality", "70"]  # fmt: skip
    expected = GeneratorConfig(
        records=9,
        seed=4,
        synthetic=SyntheticConfig(224, 448, (2, 2), ("go_home", "go_back"), 0.2, 2, 6),
        images="stub",
        jpeg_quality=70,
    )
    assert generator_config(parse_args(argv)) == expected
    assert generator_config(parse_args(["--output_dir", "x", "--episodes", "3"])) == GeneratorConfig(episodes=3)
    with pytest.raises(ValueError, match="exactly one of episodes"):
        GeneratorConfig()
