"""Merge a LoRA adapter folder (a --use_peft training run) into its base model: a plain model folder that
eval/test_aitw.py (either backend), vLLM and transformers load like any checkpoint.

    python -m r1_gui.merge_lora --adapter runs/x-lora --output_dir runs/x-merged

The base model is the adapter's base_model_name_or_path (adapter_config.json); the processor is the adapter
folder's (the one the run trained with). The merged weights keep the base model's dtype.
"""

from __future__ import annotations

import logging
from pathlib import Path

from r1_gui.checkpoints import ADAPTER_CONFIG, adapter_base, config_folder, load_model
from r1_gui.cli_errors import UserError, cli_main, command_parser, installed
from r1_gui.paths import check_output_folder, usual_file_modes

logger = logging.getLogger("r1_gui.merge_lora")


def merge(adapter: str | Path, output_dir: str | Path) -> Path:
    """Write the base model with ``adapter`` merged in, and the adapter folder's processor, to ``output_dir``."""
    from r1_gui.processing import load_processor

    if not Path(adapter).is_dir():
        raise UserError(f"--adapter {adapter}: no such folder; give the output folder of a --use_peft run")
    if not (Path(adapter) / ADAPTER_CONFIG).is_file():
        raise UserError(f"--adapter {adapter} holds no {ADAPTER_CONFIG}: give the output folder of a --use_peft run")
    check_output_folder(output_dir)
    if Path(output_dir).is_dir() and any(Path(output_dir).iterdir()):
        raise UserError(f"--output_dir {output_dir} is not empty; give a new folder")
    config_folder(adapter, "--adapter")  # the base model must be there before anything loads
    model = load_model(adapter, dtype="auto")
    processor = load_processor(adapter)
    model.save_pretrained(output_dir)
    processor.save_pretrained(output_dir)
    usual_file_modes(output_dir)
    logger.info("merged %s into %s: %s", adapter, adapter_base(adapter), output_dir)
    return Path(output_dir)


@cli_main
def main(argv: list[str] | None = None) -> Path:
    parser = command_parser(__doc__)
    parser.add_argument("--adapter", required=True, help="adapter folder (the --output_dir of a --use_peft run)")
    parser.add_argument("--output_dir", required=True, help="new folder for the merged model and its processor")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    out = merge(args.adapter, args.output_dir)
    print(f"merged model written to {out}")
    return out


cli = installed(main)  # the installed command (pyproject.toml's [project.scripts]): main, returning nothing


if __name__ == "__main__":
    main()
