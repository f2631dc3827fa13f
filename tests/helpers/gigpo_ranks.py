"""Run `grpo_gui.py --env ... --advantage_estimator gigpo` under torchrun; after each generation batch, write what this
rank handed the loss (each row's reset, state keys, per-turn rewards and advantages) to OUTPUT_DIR/rank<R>.jsonl.

Used by tests/test_gigpo.py to check that the advantages of episodes split over two processes are those one process
computes over all of them. The test reward (`turn_digit_share`, per turn) gives a random tiny model a step signal.
"""

import json
import logging
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for test_gigpo's reward

from test_gigpo import turn_digit_share  # noqa: E402

from r1_gui import rewards  # noqa: E402
from r1_gui.grpo_gui import main  # noqa: E402
from r1_gui.multi_turn import trainer  # noqa: E402
from r1_gui.training.grpo import parse_grpo_arguments  # noqa: E402


def generate_then_record(self, inputs):
    output = original(self, inputs)
    rank = int(os.environ.get("RANK", "0"))
    rows = [
        {
            "reset": [row.episode.task, row.episode.seed],
            "state_keys": row.state_keys,
            "turn_rewards": row.turn_rewards,
            "episode_advantage": row.episode_advantage,
            "step_advantages": row.step_advantages,
            "turn_advantages": row.turn_advantages,
        }
        for row in self.book.recorded
    ]
    Path(self.args.output_dir).mkdir(parents=True, exist_ok=True)
    with open(Path(self.args.output_dir) / f"rank{rank}.jsonl", "a") as handle:
        handle.write(json.dumps(rows) + "\n")
    return output


rewards.REWARD_FUNCS["turn_digit_share"] = turn_digit_share
original = trainer.MultiTurnGRPOTrainer._generate_and_score_completions
trainer.MultiTurnGRPOTrainer._generate_and_score_completions = generate_then_record

if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")  # as grpo_gui.py
    main(*parse_grpo_arguments(sys.argv[1:]))
