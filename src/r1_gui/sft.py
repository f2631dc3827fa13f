"""The SFT warm-start command (its code: r1_gui.training.sft; `--help` lists every flag).

python src/r1_gui/sft.py --config local_scripts/tiny_cpu_sft.yaml
python -m r1_gui.sft --config local_scripts/tiny_cpu_sft.yaml
"""

import logging
import sys

from r1_gui.training.sft import cli, main, parse_sft_arguments  # noqa: F401 (importable from here, as before the move)

if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    cli(sys.argv[1:])
