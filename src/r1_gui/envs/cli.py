"""Play episodes of r1_gui's environments and draw them.

    python -m r1_gui.envs --task web_search --policy expert --seed 3 --gif runs/episode.gif
    python -m r1_gui.envs --task all --policy random --episodes 20                 # success rate of a random policy
    python -m r1_gui.envs --task go_home --model runs/ckpt --prompt_style aguvis --gif runs/model.png
    python -m r1_gui.envs --env replay --data_dir data/aitw-2k --split test --patch expert --policy expert

Prints one line per episode (seed, task, success, steps, instruction) and the success rate. --gif writes the
screens of the first episode with each action drawn on them (the click point, the swipe arrow, the action as code
below): an animated GIF for a .gif path, a PNG strip for any other. A model (--model, a Qwen-VL checkpoint) is asked
exactly as the evaluation asks it (r1_gui.evaluation.generate.HFGenerator): the screenshot, the instruction and
the previous actions in the Aguvis human-turn wording.
"""

from __future__ import annotations

import argparse
import logging
import sys

logger = logging.getLogger(__name__)

POLICIES = ("expert", "random")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    from r1_gui.envs.tasks import TASKS  # light: no torch
    from r1_gui.evaluation.generate import add_generation_arguments

    parser = argparse.ArgumentParser(
        prog="python -m r1_gui.envs",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    parser.add_argument(
        "--env", choices=("phone", "replay"), default="phone", help="r1_gui/Phone-v0 or r1_gui/Replay-v0"
    )
    parser.add_argument(
        "--task", default="all", help=f"phone task family, or all (one drawn per episode): {', '.join(TASKS)}"
    )
    parser.add_argument("--policy", choices=POLICIES, default="expert", help="who acts when no --model is given")
    parser.add_argument("--model", default=None, help="a Qwen-VL checkpoint folder to act instead of --policy")
    parser.add_argument("--episodes", type=int, default=1, help="episodes to play (default 1)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first episode; episode i uses seed + i")
    parser.add_argument("--gif", default=None, help="draw the first episode: a .gif (animated) or .png (strip) path")
    parser.add_argument("--width", type=int, default=224, help="phone screen width in pixels (default 224)")
    parser.add_argument("--height", type=int, default=448, help="phone screen height in pixels (default 448)")
    parser.add_argument("--max_steps", type=int, default=None, help="phone: steps before truncation (default per task)")
    parser.add_argument("--data_dir", default=None, help="replay: the builder's output folder (train/test.parquet)")
    parser.add_argument("--split", default="test", help="replay: the split to play (default test)")
    parser.add_argument(
        "--patch", choices=("none", "expert"), default="none", help="replay: on a mismatch, end or patch"
    )
    model = parser.add_argument_group("model (--model)")
    add_generation_arguments(model)
    model.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto", help="where the model runs")
    args = parser.parse_args(argv)
    if args.task != "all" and args.task not in TASKS:
        parser.error(f"--task must be all or one of {', '.join(TASKS)}, got {args.task!r}")
    if args.env == "replay" and not args.data_dir:
        parser.error("--env replay needs --data_dir (the folder of train.parquet / test.parquet)")
    if args.episodes < 1:
        parser.error(f"--episodes must be at least 1, got {args.episodes}")
    return args


class ModelPolicy:
    """A checkpoint asked as the evaluation asks it; returns the parsed action, or its raw text when none parses
    (the environment then reports why)."""

    def __init__(self, args: argparse.Namespace):
        from r1_gui.evaluation.config import EvalConfig
        from r1_gui.evaluation.generate import HFGenerator

        self.generator = HFGenerator(args.model, EvalConfig.from_args(args))  # --seed seeds the sampling too
        self.history: list[str] = []
        self.last_output = ""

    def reset(self) -> None:
        self.history = []

    def __call__(self, observation: dict, info: dict):
        from PIL import Image

        from r1_gui.actions import extract_action
        from r1_gui.builder.sources import PROBLEM_TEMPLATE, history_text
        from r1_gui.envs.render import caption
        from r1_gui.evaluation.samples import screen_size

        problem = PROBLEM_TEMPLATE.format(instruction=observation["instruction"], history=history_text(self.history))
        screenshot = Image.fromarray(observation["screenshot"])
        self.last_output = self.generator.generate([{"problem": problem, "image": screenshot}])[0]
        resized = screen_size(screenshot.size, self.generator.min_pixels, self.generator.max_pixels)
        action = extract_action(self.last_output, coordinates=self.generator.coordinates, image_size=resized)
        self.history.append(caption(action) if action is not None else "(no action)")
        return action if action is not None else self.last_output


def make_env(args: argparse.Namespace):
    import gymnasium

    import r1_gui.envs  # noqa: F401  (registers the environments)

    if args.env == "replay":
        return gymnasium.make("r1_gui/Replay-v0", data_dir=args.data_dir, split=args.split, patch=args.patch)
    task = None if args.task == "all" else args.task
    return gymnasium.make("r1_gui/Phone-v0", width=args.width, height=args.height, task=task, max_steps=args.max_steps)


def play_episode(env, policy, seed: int, draw: bool):
    """(info of the last step, steps, frames) of one episode; frames only when `draw`."""
    from r1_gui.envs.render import caption, frame

    observation, info = env.reset(seed=seed)
    if hasattr(policy, "reset"):
        policy.reset()
    frames, steps, done = [], 0, False
    while not done:
        action = policy(observation, info)
        screenshot = observation["screenshot"]
        observation, _, terminated, truncated, info = env.step(action)
        steps, done = steps + 1, terminated or truncated
        if draw:
            frames.append(
                frame(screenshot, info.get("action"), f"{steps}. {caption(info.get('action'), info['error'])}")
            )
    if draw:
        outcome = "success" if info["success"] else "failure"
        frames.append(frame(observation["screenshot"], None, f"end: {outcome} after {steps} steps"))
    return info, steps, frames


def main(argv: list[str] | None = None) -> list[dict]:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    from r1_gui.envs.policies import RandomPolicy, expert_policy
    from r1_gui.envs.render import save_episode

    env = make_env(args)
    if args.model:
        policy = ModelPolicy(args)
    else:
        policy = expert_policy if args.policy == "expert" else RandomPolicy(args.seed)
    results = []
    for number in range(args.episodes):
        seed = args.seed + number
        info, steps, frames = play_episode(env, policy, seed, draw=bool(args.gif) and number == 0)
        results.append({"seed": seed, "task": info["task"], "success": info["success"], "steps": steps})
        print(f"seed {seed}  {info['task']:<20} success={info['success']!s:<5}  steps={steps:<3} {info['instruction']}")
        if frames:
            logger.info("wrote %s", save_episode(frames, args.gif))
    wins = sum(result["success"] for result in results)
    print(f"success {wins}/{len(results)} ({100 * wins / len(results):.1f}%)")
    env.close()
    return results
