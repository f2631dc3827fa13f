"""The GRPO command (its code: r1_gui.training.grpo; `--help` lists every flag).

torchrun --nproc_per_node 8 src/r1_gui/grpo_gui.py --config local_scripts/aguvis7b_aitw2k_grpo.yaml ...
python src/r1_gui/grpo_gui.py --config local_scripts/tiny_cpu_grpo.yaml
python -m r1_gui.grpo_gui --config local_scripts/tiny_cpu_grpo.yaml
"""

import logging
import sys

from r1_gui.training.grpo import cli, main, parse_grpo_arguments  # noqa: F401 (importable from here, as before the move)

if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    cli(sys.argv[1:])
