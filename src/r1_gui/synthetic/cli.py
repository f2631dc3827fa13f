"""Synthetic twin of the Aguvis AITW data: scripted phone episodes rendered with PIL.

    python dataset/make_synthetic.py --output_dir data/synthetic --episodes 200 --seed 0
    python dataset/make_synthetic.py --output_dir data/synthetic_small --episodes 500 --width 224 --height 448 \\
        --grid 2x2 --task_mix launch_icon,open_app
    python dataset/make_synthetic.py --output_dir data/bench --records 19000 --image_stub   # builder benchmark

writes DIR/images/synthetic_<episode>_<step>.jpg and DIR/synthetic-l1.json, -l2.json, -l3.json
(r1_gui.synthetic.writer), in the Aguvis stage-2 schema plus each step's target box (r1_gui.synthetic.aguvis_records).
The tasks (--task_mix, default all) are listed in r1_gui.synthetic.episodes. Same seed and arguments give
byte-identical JSON and images.

Knobs for small models: --width/--height (screens scale with the width), --grid ROWSxCOLS (fewer, larger
icons), --task_mix, --click_jitter (0 clicks element centres; f jitters up to f of the half-size), --decimals
(digits of click coordinates, 1 to 4: 4 as in Aguvis data; 2 is ample for AITW's 0.14 match radius and shorter
to write). Fast record files: --no_images writes only the JSON; --image_stub writes an 8x8 placeholder JPEG per
record (for benchmarks that only check the files exist); --records N stops at exactly N records (the last episode
may end early) instead of --episodes. --format guir1 / screenspot writes a GUI-R1-format test parquet instead
(r1_gui.synthetic.benchmark_sets).
"""

from __future__ import annotations

import argparse
import logging
from dataclasses import fields

from r1_gui.cli_errors import cli_main, command_parser, user_errors
from r1_gui.synthetic.episodes import ALL_APPS, TASKS, SyntheticConfig, synthetic_config
from r1_gui.synthetic.writer import GeneratorConfig, write_dataset

logger = logging.getLogger(__name__)


def parse_grid(text: str) -> tuple[int, int]:
    try:
        rows, cols = (int(part) for part in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"grid must look like 5x4 (rows x cols), got {text!r}") from None
    return rows, cols


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = command_parser(__doc__.split("\n\n")[0])
    parser.add_argument(
        "--output_dir", required=True, help="folder to create (must be empty, or an earlier output with --overwrite)"
    )
    count = parser.add_mutually_exclusive_group(required=True)
    count.add_argument("--episodes", type=int, help="number of episodes (each 2 to 6 records)")
    count.add_argument("--records", type=int, help="stop at exactly this many records instead")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--width", type=int, default=540, help="screenshot width in pixels")
    parser.add_argument("--height", type=int, default=1170, help="screenshot height in pixels")
    parser.add_argument("--grid", type=parse_grid, default=(5, 4), help="home-screen app grid, ROWSxCOLS (default 5x4)")
    parser.add_argument("--task_mix", default=None, help=f"comma-separated tasks, default all: {','.join(TASKS)}")
    parser.add_argument("--click_jitter", type=float, default=0.0, help="click offset, fraction of the half-size")
    parser.add_argument("--decimals", type=int, default=4, help="decimals of click coordinates, 1 to 6 (Aguvis: 4)")
    parser.add_argument("--apps", type=int, default=ALL_APPS, help="app names in use (<= 12: one colour each)")
    images = parser.add_mutually_exclusive_group()
    images.add_argument("--no_images", action="store_true", help="write only the JSON files")
    images.add_argument("--image_stub", action="store_true", help="write an 8x8 placeholder JPEG per record")
    parser.add_argument("--jpeg_quality", type=int, default=90)
    parser.add_argument(
        "--format",
        choices=("aguvis", "guir1", "screenspot"),
        default="aguvis",
        help="aguvis (default): the stage-2 episodes above; guir1 / screenspot: one GUI-R1-format test parquet "
        "(navigation steps / element grounding) for eval/test_aitw.py --benchmark (r1_gui/synthetic/benchmark_sets.py)",
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an earlier output of this command in output_dir; a folder holding any other file is refused, "
        "naming those files (nothing is deleted)",
    )
    return parser.parse_args(argv)


def screen_settings(args: argparse.Namespace, names: tuple[str, ...]) -> dict:
    """The ``names`` settings of SyntheticConfig from the command line (--task_mix split at its commas)."""
    settings = {name: getattr(args, name) for name in names}
    if "task_mix" in settings:
        settings["task_mix"] = args.task_mix.split(",") if args.task_mix else None
    return settings


def generator_config(args: argparse.Namespace) -> GeneratorConfig:
    """The generator's settings, read once from the command line (its flags are named as the fields)."""
    synthetic = synthetic_config(**screen_settings(args, tuple(field.name for field in fields(SyntheticConfig))))
    images = "none" if args.no_images else "stub" if args.image_stub else "jpeg"
    return GeneratorConfig(args.episodes, args.records, args.seed, synthetic, images, args.jpeg_quality)


@cli_main
def main(args: argparse.Namespace) -> dict:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.format != "aguvis":
        with user_errors():
            return _benchmark_set(args)
    # The settings and the output folder are checked before anything is written; their ValueError and OSError
    # (a full disk included) are reported as the user's, in one line.
    with user_errors():
        summary = write_dataset(args.output_dir, generator_config(args), overwrite=args.overwrite, progress=True)
    logger.info(
        "wrote %d records of %d episodes in %.1f s", summary["records"], summary["episodes"], summary["seconds"]
    )
    speed = f", {summary['images_per_second']} images/s" if summary["images_per_second"] else ""
    print(f"{summary['records']} records ({summary['episodes']} episodes) in {summary['output_dir']}{speed}")
    print("actions: " + ", ".join(f"{name} {count}" for name, count in summary["action_counts"].items()))
    return summary


def _benchmark_set(args: argparse.Namespace) -> dict:
    from r1_gui.synthetic.benchmark_sets import SCREEN_SETTINGS, write_benchmark_set

    if args.episodes is None:
        raise SystemExit("error: --format guir1 / screenspot counts --episodes, not --records")
    settings = screen_settings(args, SCREEN_SETTINGS)
    summary = write_benchmark_set(
        args.output_dir, args.format, args.episodes, args.seed, overwrite=args.overwrite, **settings
    )
    print(f"{summary['rows']} rows in {summary['file']}")
    return summary
