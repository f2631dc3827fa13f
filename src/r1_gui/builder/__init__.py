"""The dataset builder: Aguvis stage-2 (AITW) or GUI-R1 records -> train/test parquet for GRPO training.

    python dataset/raw_load_data.py --input aitw-l1.json [more.json ...] --image_dir /data/aguvis/aitw-v1/images \\
        --output_dir data/aitw-2k --num_samples 2000 --test_size 0.1 --seed 42 [--balance_actions] \\
        [--export llamafactory guir1] [--embed_images] [--verify_images] [--strict] [--overwrite]
    python dataset/raw_load_data.py --input_format guir1 --input train.parquet --output_dir data/guir1

    build(inputs, image_dir, output_dir, *, input_format="aguvis", num_samples=None, test_size=0.1, seed=42,
          balance_actions=False, strict=False, embed_images=False, verify_images=False, export=(),
          overwrite=False, progress=True) -> report dict

Output: OUTPUT_DIR/train.parquet, test.parquet (absent when the test split is empty), README.md (its `configs`
make ``datasets.load_dataset(OUTPUT_DIR)`` return exactly train and test), build_report.json, and the exports
(llamafactory/{train,test}.json + dataset_info.json; guir1/{train,test}.parquet). Everything is written into a
temporary folder beside OUTPUT_DIR (``.NAME.partial-HOST-PID-XXXXXXXX``) and renamed into place at the end; the next
build removes those a killed run left (see ``writers.clean_stale_partials``). A non-empty OUTPUT_DIR needs overwrite,
which replaces only an earlier build: a folder holding a file a build does not write is refused, naming it.

Columns, one row per step:
    id           image file name without extension (unique; the first record wins, later ones: duplicate_id)
    image        absolute path of the screenshot (--embed_images: a datasets.Image {"bytes", "path"})
    problem      the human turn without its "<image>\\n" placeholder (the image is its own content part)
    solution     "<answer>{os-turn code}</answer>"; r1_gui.actions.extract_action(solution) == action_json
    instruction  the goal after "Instruction: "
    history      previous step descriptions without "Step N: " ([] for "None")
    thought      the plan turn (recipient "all") verbatim: "Action: ..." (l1), "Thought: ...\\nAction: ..." (l2),
                 "Observation: ...\\nThought: ...\\nAction: ..." (l3); "" for GUI-R1 input
    action       canonical action type (r1_gui.actions.Action.type); action_json: json of Action.to_dict()
    episode_id   "<subset>_<episode>" from "<subset>_<episode>_<step>.<ext>"; step: int (0 for other names)
    source       input file name and level, e.g. "aitw-l1.json (l1)": the plan turn's form decides the level,
                 else an l1/l2/l3 token in the file name; GUI-R1 input: its task_type
    bbox         [x1, y1, x2, y2] normalized or null; only when some usable record has a target box

Rules: bad records are skipped and counted by reason (missing_keys, bad_turns, duplicate_id,
unparsable_action, missing_image, unreadable_image; --strict stops at the first, naming file, index and reason).
Images are only stat()ed unless --verify_images. Sampling (uniform, or --balance_actions: an equal quota per
action type, unused quota passed on) and the split are seeded; the test split takes whole episodes. Image
folder: --image_dir, else each input's sibling images/ folder; GUI-R1 inputs fall back to their own folder, and
their embedded images are written to OUTPUT_DIR/images/<id>.<ext>.
"""

from .cli import build_config, main, parse_args, summary_table
from .core import INPUT_FORMATS, BuildConfig, BuildError, build, build_from
from .sources import SKIP_REASONS, Example
from .writers import DATASET_COLUMNS, EXPORTS

__all__ = [
    "DATASET_COLUMNS",
    "EXPORTS",
    "INPUT_FORMATS",
    "SKIP_REASONS",
    "BuildConfig",
    "BuildError",
    "Example",
    "build",
    "build_from",
    "build_config",
    "main",
    "parse_args",
    "summary_table",
]
