"""The command line of the builder (dataset/raw_load_data.py): arguments, then build(), then a summary table."""

from __future__ import annotations

import argparse
import logging
from dataclasses import fields

from r1_gui.cli_errors import UserError, cli_main, command_parser, installed

from .core import INPUT_FORMATS, BuildConfig, build_from
from .sources import SKIP_REASONS
from .writers import EXPORTS


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = command_parser(
        "Build train/test parquet files for GRPO from Aguvis stage-2 JSON (or GUI-R1 parquet) files."
    )
    parser.add_argument("--input", nargs="+", required=True, metavar="FILE", help="aitw-l1.json [more.json ...]")
    parser.add_argument(
        "--input_format", choices=INPUT_FORMATS, default=_default("input_format"), help="default: aguvis"
    )
    parser.add_argument(
        "--image_dir",
        default=None,
        help="screenshots folder (e.g. aitw-v1/images); default: the images/ folder beside each input file",
    )
    parser.add_argument(
        "--output_dir", required=True, help="folder to create (empty, or an earlier build with --overwrite)"
    )
    parser.add_argument("--num_samples", type=int, default=None, help="rows in train + test (default: all)")
    parser.add_argument(
        "--test_size", type=float, default=_default("test_size"), help="test fraction, whole episodes (default 0.1)"
    )
    parser.add_argument("--seed", type=int, default=_default("seed"))
    parser.add_argument("--balance_actions", action="store_true", help="equal quota per action type")
    parser.add_argument("--strict", action="store_true", help="stop at the first bad record")
    parser.add_argument("--embed_images", action="store_true", help="store image bytes instead of paths (Hub)")
    parser.add_argument("--verify_images", action="store_true", help="open every image with PIL (slower)")
    parser.add_argument(
        "--export", nargs="+", action="extend", choices=EXPORTS, default=[], help="also write these formats"
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an earlier build in output_dir (a folder with build_report.json); a folder holding any file "
        "a build does not write is refused, naming those files (nothing is deleted)",
    )
    parser.add_argument("--no_progress", action="store_true", help="no progress bars")
    return parser.parse_args(argv)


def _default(name: str):
    return next(f.default for f in fields(BuildConfig) if f.name == name)


def build_config(args: argparse.Namespace) -> BuildConfig:
    """The BuildConfig of a command line: each flag sets the field of its name, except --input (``inputs``) and
    --no_progress (``progress``, negated)."""
    names = [f.name for f in fields(BuildConfig) if f.name not in ("inputs", "progress")]
    return BuildConfig(
        inputs=args.input, progress=not args.no_progress, **{name: getattr(args, name) for name in names}
    )


def summary_table(report: dict) -> str:
    """Rows and episodes per split and action type, then the skipped records by reason."""
    actions = sorted(set(report["actions"]["train"]) | set(report["actions"]["test"]))
    lines = [f"{'':14}{'train':>8}{'test':>8}"]
    for name in actions:
        lines.append(
            f"{name:14}{report['actions']['train'].get(name, 0):>8}{report['actions']['test'].get(name, 0):>8}"
        )
    lines.append(f"{'rows':14}{report['train']:>8}{report['test']:>8}")
    lines.append(f"{'episodes':14}{report['episodes']['train']:>8}{report['episodes']['test']:>8}")
    skipped = ", ".join(f"{reason} {report['skipped'][reason]}" for reason in SKIP_REASONS if report["skipped"][reason])
    lines.append(f"skipped: {skipped or 'none'} (of {report['records']} records; {report['kept']} usable)")
    lines.extend(f"note: {note}" for note in report["notes"])
    lines.append(f"wrote {report['output_dir']} in {report['seconds']:.2f} s ({report['records_per_s']:.0f} records/s)")
    return "\n".join(lines)


@cli_main
def main(argv: list[str] | None = None) -> dict:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        report = build_from(build_config(args))
    except (ValueError, OSError) as error:  # bad input, strict stop, existing output: one line, no traceback
        raise UserError(str(error)) from error
    print(summary_table(report))
    return report


cli = installed(main)  # the installed command (pyproject.toml's [project.scripts]): main, returning nothing
