"""The dataset builder (r1_gui.builder; CLI dataset/raw_load_data.py) on the synthetic twin and hand-made records."""

import copy
import io
import json
import os
import random
import socket
import subprocess
import sys
from collections import Counter
from pathlib import Path

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

from r1_gui.actions import Action, extract_action
from r1_gui.builder import SKIP_REASONS, BuildError, build, writers
from r1_gui.builder import main as builder_main
from r1_gui.builder.sampling import balanced_quotas, select, split_by_episode
from r1_gui.builder.sources import episode_and_step, level_in_name, level_of
from r1_gui.prompts import PROBLEM_TEMPLATE, parse_history
from r1_gui.synthetic import aguvis_records as synthetic_records
from r1_gui.synthetic import writer as synthetic

REPO = Path(__file__).resolve().parents[1]
WIDTH, HEIGHT = 224, 448
TEXT = datasets.Value("string")
FEATURES = datasets.Features(
    {
        **dict.fromkeys(("id", "image", "problem", "solution", "instruction"), TEXT),
        "history": datasets.List(TEXT),
        **dict.fromkeys(("thought", "action", "action_json", "episode_id"), TEXT),
        "step": datasets.Value("int64"),
        "source": TEXT,
        "bbox": datasets.List(datasets.Value("float64")),
    }
)


def rows(path: Path) -> list[dict]:
    return pq.read_table(path).to_pylist()


def split_rows(folder: Path) -> dict[str, list[dict]]:
    return {
        split: rows(folder / f"{split}.parquet")
        for split in ("train", "test")
        if (folder / f"{split}.parquet").exists()
    }


@pytest.fixture(scope="module")
def raw(tmp_path_factory) -> Path:
    """Synthetic Aguvis files (l1, l2, l3) of 40 episodes with small rendered screenshots."""
    folder = tmp_path_factory.mktemp("raw") / "synthetic"
    synthetic.generate(folder, 40, seed=1, width=WIDTH, height=HEIGHT, images="jpeg", progress=False)
    return folder


@pytest.fixture(scope="module")
def built(raw, tmp_path_factory) -> tuple[Path, dict]:
    """All l2 records, 20 % test, both exports."""
    out = tmp_path_factory.mktemp("built") / "aitw"
    report = build(
        [raw / "synthetic-l2.json"], None, out, test_size=0.2, seed=0, export=("llamafactory", "guir1"), progress=False
    )
    return out, report


def test_every_column_has_its_type_and_meaning(raw, built, tmp_path, monkeypatch):
    out, report = built
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "cache")  # keep ~/.cache clean
    loaded = datasets.load_dataset(str(out))  # the README's configs make train/test the only splits
    assert set(loaded) == {"train", "test"}
    assert (loaded["train"].num_rows, loaded["test"].num_rows) == (report["train"], report["test"])
    assert loaded["train"].features == loaded["test"].features == FEATURES
    assert list(loaded["train"].features) == list(FEATURES)  # the column order too
    source = {r["image"]: r for r in json.loads((raw / "synthetic-l2.json").read_text())}
    assert report["kept"] == report["records"] == report["train"] + report["test"] == len(source)
    for split_rows_ in split_rows(out).values():
        assert len({row["id"] for row in split_rows_}) == len(split_rows_)
        for row in split_rows_:
            record = source[Path(row["image"]).name]
            system, human, plan, code = record["conversations"]
            assert row["id"] == Path(row["image"]).stem and os.path.isabs(row["image"]) and os.path.isfile(row["image"])
            assert "<image>" not in row["problem"] and row["problem"] == human["value"].removeprefix("<image>\n")
            assert row["solution"] == f"<answer>{code['value']}</answer>"
            action = json.loads(row["action_json"])
            assert extract_action(row["solution"]) == Action.from_dict(action) and action["type"] == row["action"]
            assert f"Instruction: {row['instruction']}\n" in row["problem"] and row["instruction"]
            assert len(row["history"]) == row["step"] and all(not h.startswith("Step") for h in row["history"])
            assert row["thought"] == plan["value"] and row["thought"].startswith("Thought: ")
            assert row["episode_id"] == row["id"].rsplit("_", 1)[0] and isinstance(row["step"], int)
            assert row["source"] == "synthetic-l2.json (l2)"
            assert row["bbox"] == record["bbox"]
    assert sum(r["bbox"] is not None for rows_ in split_rows(out).values() for r in rows_) > 0
    on_disk = json.loads((out / "build_report.json").read_text())
    assert on_disk["skipped"] == dict.fromkeys(SKIP_REASONS, 0) and on_disk["train"] == report["train"]
    assert sum(on_disk["actions"]["train"].values()) == report["train"]


def test_no_episode_is_in_both_splits(built):
    out, report = built
    train, test = (rows(out / f"{split}.parquet") for split in ("train", "test"))
    assert not {r["episode_id"] for r in train} & {r["episode_id"] for r in test}
    assert report["test"] == pytest.approx(0.2 * report["selected"], abs=3)
    assert report["episodes"]["test"] == len({r["episode_id"] for r in test})


def test_llamafactory_export(built):
    out, report = built
    info = json.loads((out / "llamafactory" / "dataset_info.json").read_text())
    assert set(info) == {"aitw_train", "aitw_test"}
    tags = {
        "role_tag": "role",
        "content_tag": "content",
        "user_tag": "user",
        "assistant_tag": "assistant",
        "system_tag": "system",
    }
    for split in ("train", "test"):
        entry = info[f"aitw_{split}"]
        assert entry == {
            "file_name": f"{split}.json",
            "formatting": "sharegpt",
            "columns": {"messages": "messages", "images": "images"},
            "tags": tags,
        }
        exported = json.loads((out / "llamafactory" / entry["file_name"]).read_text())
        by_image = {row["image"]: row for row in rows(out / f"{split}.parquet")}
        assert len(exported) == report[split]
        for item in exported:
            assert set(item) == {"messages", "images"} and len(item["images"]) == 1
            row = by_image[item["images"][0]]
            system, user, assistant = item["messages"]
            assert [m["role"] for m in item["messages"]] == ["system", "user", "assistant"]
            assert system["content"] == synthetic_records.SYSTEM_PROMPT
            assert user["content"] == "<image>" + row["problem"] and user["content"].count("<image>") == 1
            code = row["solution"].removeprefix("<answer>").removesuffix("</answer>")
            assert assistant["content"] == f"{row['thought']}\n{code}"


def test_guir1_export_reads_back_to_the_same_actions(built, tmp_path):
    out, _ = built
    table = pq.read_table(out / "guir1" / "train.parquet")
    assert " ".join(table.column_names) == "image instruction history gt_action gt_bbox gt_input_text task_type"
    first = table.slice(0, 1).to_pylist()[0]
    assert set(first["image"]) == {"bytes", "path"} and Image.open(io.BytesIO(first["image"]["bytes"])).size == (
        WIDTH,
        HEIGHT,
    )
    originals = {r["id"]: r for rows_ in split_rows(out).values() for r in rows_}
    for row in table.to_pylist():  # gt_bbox: pixels of the original screenshot
        action = json.loads(originals[Path(row["image"]["path"]).stem]["action_json"])
        if action["type"] in ("click", "long_press"):
            assert row["gt_bbox"] == pytest.approx([action["x"] * WIDTH, action["y"] * HEIGHT], abs=1e-4)
        assert row["task_type"] == "high"
    again = tmp_path / "again"
    report = build(
        [out / "guir1" / "train.parquet", out / "guir1" / "test.parquet"], None, again,
        input_format="guir1", test_size=0, progress=False,
    )  # fmt: skip
    assert report["skipped_total"] == 0 and not (again / "test.parquet").exists()  # test_size=0: train only
    back = {r["id"]: r for r in rows(again / "train.parquet")}
    assert set(back) == set(originals)
    for name, row in back.items():
        original = originals[name]
        for column in ("action", "action_json", "instruction", "history", "episode_id", "step"):
            assert row[column] == original[column], (name, column)
        # the same action; the code is written canonically (the synthetic scroll(page=-0.5) comes back as -0.1)
        assert extract_action(row["solution"]) == extract_action(original["solution"])
        assert row["problem"] == original["problem"]
        assert Path(row["image"]).parent == again / "images"
        assert Path(row["image"]).read_bytes() == Path(original["image"]).read_bytes()


def png(width=200, height=400) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (10, 20, 30)).save(buffer, "PNG")
    return buffer.getvalue()


def test_guir1_input_hand_made(tmp_path):
    screenshot = tmp_path / "shots" / "web_77_0.png"
    screenshot.parent.mkdir()
    screenshot.write_bytes(png())
    rows_ = [  # (image, instruction, history, gt_action, gt_bbox, gt_input_text)
        (
            {"bytes": png(), "path": "general_123_2.png"},
            "Open maps",
            "Step 1: open app\nStep 2: tap menu",
            "click",
            [20, 40, 60, 80],
            "no input text",
        ),
        ({"bytes": png(), "path": None}, "Open maps", "", "click", [100, 200], "no input text"),
        ({"bytes": None, "path": str(screenshot)}, "Search", "None", "type", [-100, -100], "hello"),
        ({"bytes": png(), "path": "a_1_0.png"}, "Scroll", "", "scroll", [-100, -100], "down"),
        ({"bytes": png(), "path": "a_1_1.png"}, "Go back", "", "press_back", [-100, -100], "no input text"),
        ({"bytes": png(), "path": "a_1_2.png"}, "Done", "", "complete", [-100, -100], "no input text"),
        ({"bytes": png(), "path": "a_1_3.png"}, "Fly", "", "fly", [1, 2], "no input text"),  # unparsable_action
        ({"bytes": png(), "path": "a_1_4.png"}, None, "", "click", [1, 2], "no input text"),  # missing_keys
        ({"bytes": b"not an image", "path": "a_1_5.png"}, "Broken", "", "click", [1, 2], "no input text"),  # unreadable
        ({"bytes": png(), "path": "a_1_0.png"}, "Again", "", "press_home", [-100, -100], "no input text"),  # duplicate
    ]
    names = ("image", "instruction", "history", "gt_action", "gt_bbox", "gt_input_text")
    table = pa.Table.from_pylist([dict(zip(names, row, strict=True)) | {"task_type": "high"} for row in rows_])
    pq.write_table(table, tmp_path / "guir1.parquet")
    report = build(
        [tmp_path / "guir1.parquet"], None, tmp_path / "out", input_format="guir1", test_size=0, progress=False
    )
    skipped = {reason: count for reason, count in report["skipped"].items() if count}
    assert skipped == {"unparsable_action": 1, "missing_keys": 1, "unreadable_image": 1, "duplicate_id": 1}
    out = {row["id"]: row for row in rows(tmp_path / "out" / "train.parquet")}
    assert set(out) == {"general_123_2", "guir1_000001", "web_77_0", "a_1_0", "a_1_1", "a_1_2"}
    box_click = out["general_123_2"]
    assert box_click["solution"] == "<answer>pyautogui.click(x=0.2, y=0.15)</answer>"
    assert box_click["bbox"] == pytest.approx([0.1, 0.1, 0.3, 0.2])
    assert (box_click["episode_id"], box_click["step"]) == ("general_123", 2)
    assert box_click["history"] == ["open app", "tap menu"]
    history = "Step 1: open app\nStep 2: tap menu"
    assert box_click["problem"] == PROBLEM_TEMPLATE.format(instruction="Open maps", history=history)
    assert box_click["source"] == "guir1.parquet (high)" and box_click["thought"] == ""
    assert Path(box_click["image"]) == tmp_path / "out" / "images" / "general_123_2.png"
    assert Path(box_click["image"]).read_bytes() == png()
    point_click = out["guir1_000001"]  # no name: the instruction groups the episode, the history gives the step
    assert json.loads(point_click["action_json"]) == {"type": "click", "x": 0.5, "y": 0.5}
    assert point_click["bbox"] is None
    assert point_click["episode_id"].startswith("guir1_") and point_click["step"] == 0
    assert out["web_77_0"]["image"] == str(screenshot) and out["web_77_0"]["history"] == []
    assert json.loads(out["web_77_0"]["action_json"]) == {"type": "type", "text": "hello"}
    assert [json.loads(out[f"a_1_{i}"]["action_json"]) for i in range(3)] == [
        {"type": "scroll", "direction": "down"},
        {"type": "back"},
        {"type": "terminate", "status": "success"},
    ]


def write_records(path: Path, records: list) -> Path:
    path.write_text(json.dumps(records))
    return path


@pytest.fixture
def bad_records(raw, tmp_path) -> tuple[Path, Path, list]:
    """Four good records and one of each bad kind, in a file beside its own images/ folder."""
    good = json.loads((raw / "synthetic-l1.json").read_text())[:4]
    images = tmp_path / "images"
    images.mkdir()
    for record in good:
        (images / record["image"]).write_bytes((raw / "images" / record["image"]).read_bytes())
    (images / "bad_0_0.jpg").write_bytes(b"")  # empty: unreadable
    (images / "bad_0_1.jpg").write_bytes(b"this is no jpeg")  # only --verify_images sees this one
    no_plan = copy.deepcopy(good[0]) | {"image": "bad_1_0.jpg"}
    del no_plan["conversations"][2]
    unparsable = copy.deepcopy(good[1]) | {"image": "bad_2_0.jpg"}
    unparsable["conversations"][3]["value"] = "pyautogui.fly(x=0.5)"
    records = [
        good[0],
        ["not", "a", "record"],  # missing_keys
        {"image": "bad_3_0.jpg"},  # missing_keys
        no_plan,  # bad_turns
        good[1],
        unparsable,  # unparsable_action
        copy.deepcopy(good[2]) | {"image": "nowhere_0_0.jpg"},  # missing_image
        copy.deepcopy(good[2]) | {"image": "bad_0_0.jpg"},  # unreadable_image
        good[2],
        copy.deepcopy(good[3]) | {"image": "bad_0_1.jpg"},
        good[3],
        good[0],  # duplicate_id
    ]
    return write_records(tmp_path / "mixed-l1.json", records), images, good


def test_each_bad_record_is_counted_by_its_reason(bad_records, tmp_path):
    path, images, good = bad_records
    report = build([path], None, tmp_path / "out", test_size=0, progress=False)
    assert report["skipped"] == dict.fromkeys(SKIP_REASONS, 1) | {"missing_keys": 2}
    assert json.loads((tmp_path / "out" / "build_report.json").read_text())["skipped"] == report["skipped"]
    assert report["records"] == 12 and report["kept"] == 5
    assert report["skip_examples"]["missing_keys"] == [
        "mixed-l1.json[1]: the record is a list, not an object",
        "mixed-l1.json[2]: no usable 'conversations'",
    ]
    assert all(shown[0].startswith("mixed-l1.json[") for shown in report["skip_examples"].values())
    kept = [row["id"] for row in rows(tmp_path / "out" / "train.parquet")]
    assert kept == [Path(r["image"]).stem for r in good[:3]] + ["bad_0_1", Path(good[3]["image"]).stem]
    verified = build([path], None, tmp_path / "verified", test_size=0, verify_images=True, progress=False)
    assert verified["skipped"]["unreadable_image"] == 2 and verified["kept"] == 4


def test_strict_names_the_file_index_and_reason(bad_records, tmp_path):
    path, _, _ = bad_records
    with pytest.raises(BuildError, match=r"mixed-l1\.json: record 1: missing_keys: the record is a list"):
        build([path], None, tmp_path / "out", strict=True, progress=False)
    assert not (tmp_path / "out").exists()


def test_same_record_in_l1_and_l2_keeps_the_first(raw, tmp_path):
    report = build(
        [raw / "synthetic-l1.json", raw / "synthetic-l2.json"], None, tmp_path / "out", test_size=0, progress=False
    )
    assert report["skipped"]["duplicate_id"] == report["kept"] == report["records"] // 2
    assert {row["source"] for row in rows(tmp_path / "out" / "train.parquet")} == {"synthetic-l1.json (l1)"}


def test_same_seed_same_bytes_other_seed_other_rows(raw, tmp_path):
    def run(name, seed):
        build([raw / "synthetic-l3.json"], None, tmp_path / name, num_samples=60, seed=seed, progress=False)
        return [(tmp_path / name / f"{split}.parquet").read_bytes() for split in ("train", "test")]

    first, again, other = run("a", 7), run("b", 7), run("c", 8)
    assert first == again
    assert [row["id"] for row in rows(tmp_path / "a" / "train.parquet")] != [
        row["id"] for row in rows(tmp_path / "c" / "train.parquet")
    ]
    assert other != first


def test_no_bbox_column_without_boxes(raw, tmp_path):
    records = json.loads((raw / "synthetic-l1.json").read_text())[:5]
    path = write_records(tmp_path / "plain.json", [{k: v for k, v in r.items() if k != "bbox"} for r in records])
    build([path], raw / "images", tmp_path / "out", test_size=0, progress=False)
    assert "bbox" not in pq.read_schema(tmp_path / "out" / "train.parquet").names
    assert pq.read_schema(tmp_path / "out" / "train.parquet").names == list(FEATURES)[:-1]


def test_more_samples_than_available_takes_everything(raw, tmp_path):
    report = build([raw / "synthetic-l1.json"], None, tmp_path / "out", num_samples=10**6, progress=False)
    assert report["took_all"] and report["selected"] == report["kept"] == report["records"]
    assert any("took all" in note for note in report["notes"])


def test_balance_actions_evens_out_types(raw, tmp_path):
    uniform = build([raw / "synthetic-l1.json"], None, tmp_path / "u", num_samples=60, test_size=0, progress=False)
    balanced = build(
        [raw / "synthetic-l1.json"],
        None,
        tmp_path / "b",
        num_samples=60,
        test_size=0,
        balance_actions=True,
        progress=False,
    )
    available = balanced["actions_kept"]
    assert balanced["actions"]["train"] == {k: v for k, v in balanced_quotas(available, 60).items() if v}
    assert max(balanced["actions"]["train"].values()) < max(uniform["actions"]["train"].values())
    assert sum(balanced["actions"]["train"].values()) == 60


@pytest.mark.parametrize(
    "available, total, expected",
    [
        (
            {"click": 90, "back": 5, "type": 20},
            30,
            {"back": 5, "type": 12, "click": 13},
        ),  # back's unused share moves on
        ({"click": 10, "type": 10}, 7, {"click": 3, "type": 4}),  # the remainder goes to the last (largest) type
        ({"click": 3, "type": 2}, 10, {"click": 3, "type": 2}),  # not enough records: everything
        ({"a": 4, "b": 4, "c": 4}, 12, {"a": 4, "b": 4, "c": 4}),  # exact
    ],
)
def test_balanced_quotas(available, total, expected):
    assert balanced_quotas(available, total) == expected


def test_select_is_seeded_and_sorted():
    types = ["click"] * 80 + ["back"] * 20
    assert select(types, None, random.Random(0), False) == list(range(100))
    picked = select(types, 30, random.Random(0), True)
    assert picked == sorted(picked) == select(types, 30, random.Random(0), True)
    assert Counter(types[i] for i in picked) == {"click": 15, "back": 15}


@pytest.mark.parametrize(
    "sizes, test_size, expected_test",
    [
        ([3] * 10, 0.2, 6),  # whole episodes of 3: exactly 2 of them
        ([1] * 100, 0.1, 10),
        ([5, 1, 1, 1], 0.25, 2),  # 8 rows, target 2: the big episode is never taken
        ([10], 0.1, 0),  # one episode, target 1: it stays in train
        ([10, 10], 0.1, 10),  # every episode overshoots: the smallest one
        ([4, 4], 0.0, 0),
    ],
)
def test_split_by_episode(sizes, test_size, expected_test):
    episodes = [f"e{index}" for index, size in enumerate(sizes) for _ in range(size)]
    test = split_by_episode(episodes, test_size, random.Random(3))
    assert sum(episodes.count(e) for e in test) == expected_test
    assert len(test) < len(sizes) or not sizes


@pytest.mark.parametrize(
    "stem, expected",
    [
        ("general_1234_5", ("general_1234", 5)),
        ("google_apps_99_0", ("google_apps_99", 0)),  # the subset may hold "_"
        ("screenshot", ("screenshot", 0)),  # not the AITW form: an episode of its own
        ("a_b_c", ("a_b_c", 0)),  # the step is not a number
        ("_1_2", ("_1_2", 0)),  # empty subset
    ],
)
def test_episode_and_step(stem, expected):
    assert episode_and_step(stem) == expected


@pytest.mark.parametrize(
    "plan, file, expected",
    [
        ("Action: tap", "x.json", "l1"),
        ("Thought: t\nAction: tap", "aitw-l1.json", "l2"),  # the plan's form wins over the name
        ("Observation: o\nThought: t\nAction: a", "x.json", "l3"),
        ("tap the icon", "aitw-l3.json", "l3"),  # unknown form: the file name
        ("tap the icon", "aitw.json", None),
    ],
)
def test_level_detection(plan, file, expected):
    assert level_of(plan, level_in_name(Path(file))) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("None", []),
        ("", []),
        ("Step 1: open\nStep 2: tap", ["open", "tap"]),
        ("Step 1: two\nlines\nStep 2: x", ["two\nlines", "x"]),
        ("open\ntap", ["open", "tap"]),
    ],
)
def test_parse_history(text, expected):
    assert parse_history(text) == expected


def test_embedded_images_are_a_datasets_image(raw, tmp_path):
    build([raw / "synthetic-l1.json"], None, tmp_path / "out", num_samples=10, embed_images=True, progress=False)
    loaded = datasets.load_dataset(str(tmp_path / "out"), cache_dir=str(tmp_path / "cache"))
    assert isinstance(loaded["train"].features["image"], datasets.Image)
    raw_row = rows(tmp_path / "out" / "train.parquet")[0]
    assert raw_row["image"]["bytes"] == (raw / "images" / raw_row["image"]["path"]).read_bytes()
    assert loaded["train"][0]["image"].size == (WIDTH, HEIGHT)


def test_interrupted_build_leaves_nothing_and_keeps_the_old_output(raw, tmp_path, monkeypatch):
    old = tmp_path / "out"
    build([raw / "synthetic-l1.json"], None, old, num_samples=5, progress=False)  # an earlier build, to replace
    before = {path.name: path.read_bytes() for path in old.iterdir()}

    def crash(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(writers, "write_parquet", crash)
    for target in (old, tmp_path / "fresh"):
        with pytest.raises(RuntimeError, match="disk full"):
            build([raw / "synthetic-l1.json"], None, target, overwrite=True, progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert {path.name: path.read_bytes() for path in old.iterdir()} == before


def test_existing_output_needs_overwrite(raw, tmp_path):
    """--overwrite replaces an earlier build only: it used to delete whatever the folder held (issue 24)."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "stale.txt").write_text("x")
    with pytest.raises(FileExistsError, match="--overwrite"):
        build([raw / "synthetic-l1.json"], None, out, progress=False)
    argv = ["--input", str(raw / "synthetic-l1.json"), "--output_dir", str(out), "--overwrite", "--no_progress"]
    with pytest.raises(SystemExit, match=r"^error: --overwrite replaces only an earlier output .*it holds stale\.txt"):
        builder_main(argv)
    assert (out / "stale.txt").read_text() == "x"
    (out / "stale.txt").unlink()
    build([raw / "synthetic-l1.json"], None, out, num_samples=5, export=["llamafactory"], progress=False)
    (out / "llamafactory" / "notes.md").write_text("mine")  # a user's file inside an earlier build
    with pytest.raises(FileExistsError, match=r"would delete 1 file.*: llamafactory/notes\.md; move them away"):
        build([raw / "synthetic-l1.json"], None, out, overwrite=True, progress=False)
    assert (out / "llamafactory" / "notes.md").read_text() == "mine"
    (out / "llamafactory" / "notes.md").unlink()
    build([raw / "synthetic-l1.json"], None, out, overwrite=True, progress=False)
    assert (out / "train.parquet").is_file() and not (out / "llamafactory").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


@pytest.mark.parametrize(
    "argv, message",
    [
        # an empty JSON list: the message read "no usable record in empty.json (; e.g. -)"
        (["--input", "{tmp}/empty.json"], r"^error: no records in \S*empty\.json: the file is empty"),
        # a GUI-R1 parquet without --input_format guir1: was told to pass --image_dir
        (
            ["--input", "{tmp}/guir1/train.parquet"],
            r"^error: \S*train\.parquet is a parquet file.*--input_format guir1",
        ),
    ],
    ids=["empty-list", "guir1-without-input-format"],
)
def test_cli_says_what_is_wrong_with_the_input(tmp_path, argv, message):
    (tmp_path / "images").mkdir()
    (tmp_path / "empty.json").write_text("[]\n")
    (tmp_path / "guir1").mkdir()
    pq.write_table(
        pa.table({"instruction": ["Open the clock"], "gt_action": ["click"]}), tmp_path / "guir1" / "train.parquet"
    )
    argv = [arg.format(tmp=tmp_path) for arg in argv]
    with pytest.raises(SystemExit, match=message):
        builder_main([*argv, "--output_dir", str(tmp_path / "out"), "--no_progress"])
    assert not (tmp_path / "out").exists()


def test_a_killed_build_leaves_a_partial_folder_that_the_next_build_removes(raw, tmp_path, kill_then_rerun):
    """kill -9 runs no cleanup: its hidden .out.partial-* folder stayed for good (issue 24)."""
    argv = ["--input", str(raw / "synthetic-l1.json"), "--output_dir", str(tmp_path / "out"), "--num_samples", "5",
            "--no_progress"]  # fmt: skip
    (tmp_path / ".other.partial-abc").mkdir()  # another output's: not this build's business
    partial, rerun = kill_then_rerun("r1_gui.builder.writers:write_parquet", "dataset/raw_load_data.py", argv, tmp_path)
    assert f"removed {tmp_path / partial}, left by an interrupted run" in rerun.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == [".other.partial-abc", "out"]


def test_a_live_or_unknown_partial_folder_is_left_alone_with_a_warning(raw, tmp_path, caplog):
    live = tmp_path / f".out.partial-{socket.gethostname()}-{os.getpid()}-abcd1234"  # this very process: alive
    old_form = tmp_path / ".out.partial-k2j4h5g6"  # made by an older r1_gui: no owner in its name
    for folder in (live, old_form):
        folder.mkdir()
    build([raw / "synthetic-l1.json"], None, tmp_path / "out", num_samples=5, progress=False)
    assert live.is_dir() and old_form.is_dir()
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING" and "left" in r.getMessage()]
    assert any(str(live) in m for m in warned) and any(str(old_form) in m for m in warned)


def test_input_errors_name_the_file(raw, tmp_path):
    broken = tmp_path / "images"
    broken.mkdir()
    (tmp_path / "broken.json").write_text('[{"image": ')
    with pytest.raises(ValueError, match="broken.json is not valid JSON"):
        build([tmp_path / "broken.json"], None, tmp_path / "o", progress=False)
    with pytest.raises(FileNotFoundError, match="missing.json does not exist"):
        build([tmp_path / "missing.json"], None, tmp_path / "o", progress=False)
    alone = tmp_path / "alone" / "a.json"
    alone.parent.mkdir()
    alone.write_text("[]")
    with pytest.raises(ValueError, match="no --image_dir given"):
        build([alone], None, tmp_path / "o", progress=False)
    with pytest.raises(BuildError, match="no usable record.*missing_image.*--image_dir"):
        build([raw / "synthetic-l1.json"], broken, tmp_path / "o", progress=False)
    with pytest.raises(ValueError, match="inside --output_dir"):
        build([raw / "synthetic-l1.json"], None, raw, overwrite=True, progress=False)
    assert not (tmp_path / "o").exists()


def test_cli_end_to_end(raw, tmp_path):
    out = tmp_path / "cli"
    command = [
        sys.executable, "dataset/raw_load_data.py", "--input", str(raw / "synthetic-l1.json"),
        "--image_dir", str(raw / "images"), "--output_dir", str(out), "--num_samples", "50", "--test_size", "0.2",
        "--seed", "5", "--balance_actions", "--export", "llamafactory", "--no_progress",
    ]  # fmt: skip
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads((out / "build_report.json").read_text())
    assert report["train"] + report["test"] == 50 and report["arguments"]["balance_actions"]
    assert "rows" in done.stdout and "skipped: none" in done.stdout and "records/s" in done.stdout
    assert (out / "llamafactory" / "train.json").is_file()
    again = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert again.returncode == 2 and "is not empty; pass --overwrite" in again.stderr


def test_verl_gui_export_prompts_in_the_mobile_use_style_of_its_labels(raw, tmp_path):
    """--export verl_gui labels are mobile_use calls on the 999 grid; the prompt beside them must be the mobile_use
    tool's (it wrote the Aguvis pyautogui system prompt and user wording, whatever the labels)."""
    from r1_gui.prompts import system_prompt

    command = [sys.executable, "dataset/raw_load_data.py", "--input", str(raw / "synthetic-l2.json"),
               "--output_dir", str(tmp_path / "out"), "--export", "verl_gui", "--no_progress"]  # fmt: skip
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    exported = rows(tmp_path / "out" / "verl_gui" / "train.parquet")
    built_rows = {row["id"]: row for row in rows(tmp_path / "out" / "train.parquet")}
    for row in exported:
        (system, user), info = row["raw_prompt"], row["extra_info"]
        step = built_rows[f"{info['episode_id']}_{info['step']}"]
        assert system == {"role": "system", "content": system_prompt("mobile_use", "grid999")}
        history = "".join(f"\nStep {n}: {s}" for n, s in enumerate(step["history"], 1))
        # the first step: what the multi-turn context's first turn says; later ones: the earlier steps after it
        expected = f"<image>Instruction: {step['instruction']}" + (f"\n\nPrevious actions:{history}" if history else "")
        assert user == {"role": "user", "content": expected}
        assert "pyautogui" not in json.dumps(row["raw_prompt"])
    steps = {row["extra_info"]["step"] for row in exported}
    assert 0 in steps and max(steps) > 0  # both kinds of user text were checked
    again = subprocess.run([*command, "--overwrite"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr  # the export is the builder's own: --overwrite replaces it
