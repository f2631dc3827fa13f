"""Run `grpo_gui.py` under torchrun, then write this rank's weight checksum to OUTPUT_DIR/rank<R>.json.

Used by tests/test_grpo.py to check that every rank ends with the same weights. A test reward (the fraction of
digits in a completion) gives a random tiny model a learning signal, so the weights really change.
"""

import hashlib
import json
import logging
import os
import sys
from pathlib import Path

from r1_gui import rewards
from r1_gui.actions import completion_text
from r1_gui.grpo_gui import main
from r1_gui.training import trainer
from r1_gui.training.grpo import parse_grpo_arguments


def digit_fraction(completions, **kwargs):
    texts = [completion_text(c) for c in completions]
    return [sum(ch.isdigit() for ch in text) / max(1, len(text)) for text in texts]


def weights_checksum(model) -> str:
    digest = hashlib.sha256()
    for name, parameter in sorted(model.state_dict().items()):
        digest.update(name.encode())
        digest.update(parameter.detach().float().cpu().numpy().tobytes())
    return digest.hexdigest()


def train_then_record(self, *args, **kwargs):
    result = original_train(self, *args, **kwargs)
    rank = int(os.environ.get("RANK", "0"))
    model = self.accelerator.unwrap_model(self.model)
    record = {"rank": rank, "checksum": weights_checksum(model), "global_step": self.state.global_step}
    Path(self.args.output_dir).mkdir(parents=True, exist_ok=True)  # a node other than the first writes nothing else
    (Path(self.args.output_dir) / f"rank{rank}.json").write_text(json.dumps(record))
    return result


rewards.REWARD_FUNCS["digit_fraction"] = digit_fraction
original_train = trainer.GUIGRPOTrainer.train
trainer.GUIGRPOTrainer.train = train_then_record

if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")  # as grpo_gui.py
    main(*parse_grpo_arguments(sys.argv[1:]))
