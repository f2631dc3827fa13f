"""Play episodes of any environment that keeps r1_gui's contract, with the expert, a random policy or a checkpoint
asked one step at a time, and draw them (`python -m r1_gui.play`; before 2026-11-24, `python -m r1_gui.envs`).

    python -m r1_gui.play --env_tasks web_search --policy expert --seed 3 --gif runs/episode.gif
    python -m r1_gui.play --env_tasks all --policy random --env_episodes 20      # success rate of a random policy
    python -m r1_gui.play --env_tasks go_home --model_name_or_path runs/demo-fast/grpo --max_pixels 50176 \\
        --gif runs/m.png
    python -m r1_gui.play --env r1_gui/Replay-v0 --env_kwargs '{"data_dir": "data/aitw-2k", "split": "test",
        "patch": "expert"}' --env_episodes 50

Prints one line per episode (seed, task, success, steps, instruction) and the success rate. --gif draws the first
episode with each action on its screen (the click point, the swipe arrow, the action as code below): an animated GIF
for a .gif path, a PNG strip for any other. The environment is built in this process, or with --env_backend ray on a
Ray cluster (docs/guide/environments.md, "Environments on a cluster"). An environment with a fixed number of episodes (a recorded split)
plays each at most once. A checkpoint (--model_name_or_path) is asked as the step evaluation asks it
(r1_gui.generation.HFGenerator): the screenshot, the instruction and the previous actions in the Aguvis
human-turn wording, one step at a time; eval/test_phone.py evaluates checkpoints trained on whole episodes.
"""

from __future__ import annotations

import argparse
import logging
import sys
from dataclasses import dataclass

from r1_gui.cli_errors import UserError, cli_main, command_parser, installed, user_errors
from r1_gui.flags import add_flags, checked_flags, flag

logger = logging.getLogger(__name__)

POLICIES = ("expert", "random")


@dataclass
class PlayFlags:
    """play's own flags (the episode and model flags are declared where every command shares them)."""

    policy: str = flag("expert", "Who acts when no model is given.", choices=POLICIES)
    gif: str | None = flag(None, "Draw the first episode: a .gif (animated) or .png (strip) path.")


def command_line() -> argparse.ArgumentParser:
    """The parser of the command line, built from the flags' declarations."""
    from r1_gui.flags.episodes import PLAYED_ENV, EnvFlags, PoolFlags
    from r1_gui.generation import add_generation_arguments
    from r1_gui.generation.settings import AskedModel, GenerationSettings

    parser = command_parser(__doc__, prog="python -m r1_gui.play")
    # the episode flags are training's and eval/test_phone.py's; the older names stay as aliases
    add_flags(parser, EnvFlags, ["env_id", "env_kwargs"], defaults={"env_id": PLAYED_ENV})
    add_flags(parser.add_argument_group("where the environments run"), PoolFlags)
    add_flags(parser, EnvFlags, ["env_tasks"], aliases={"env_tasks": ["--task"]})
    add_flags(parser, PlayFlags, ["policy"])
    add_flags(parser, AskedModel, aliases={"model_name_or_path": ["--model"]})
    add_flags(parser, EnvFlags, ["env_episodes", "env_seed_offset"], defaults={"env_episodes": 1},
              aliases={"env_episodes": ["--episodes"], "env_seed_offset": ["--seed"]})  # fmt: skip
    add_flags(parser, PlayFlags, ["gif"])
    model = parser.add_argument_group("model (--model_name_or_path)")
    add_generation_arguments(model)
    add_flags(model, GenerationSettings, ["device"])
    return parser


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    from r1_gui.flags.episodes import EnvFlags, PoolFlags

    parser = command_line()
    args = parser.parse_args(argv)
    checked_flags(args, EnvFlags, PoolFlags)  # every bad value in one line, before anything starts
    args.seed = args.env_seed_offset  # a model's sampling seed is the first episode's
    return args


class ModelPolicy:
    """A checkpoint asked as the step evaluation asks it; returns the parsed action, or its raw text when none
    parses (the environment then reports why)."""

    def __init__(self, args: argparse.Namespace):
        from r1_gui.generation import GenerationSettings, HFGenerator

        settings = GenerationSettings.from_args(args)  # --seed seeds sampling
        self.generator = HFGenerator(args.model_name_or_path, settings)
        self.history: list[str] = []

    def reset(self) -> None:
        self.history = []

    def __call__(self, observation: dict, info: dict):
        from PIL import Image

        from r1_gui.actions import extract_action
        from r1_gui.envs.render import caption
        from r1_gui.prompts import PROBLEM_TEMPLATE, history_text

        problem = PROBLEM_TEMPLATE.format(instruction=observation["instruction"], history=history_text(self.history))
        screenshot = Image.fromarray(observation["screenshot"])
        output = self.generator.generate([{"problem": problem, "image": screenshot}])[0]
        resized = self.generator.screen_size(screenshot.size)
        action = extract_action(output, coordinates=self.generator.coordinates, image_size=resized)
        self.history.append(caption(action) if action is not None else "(no action)")
        return action if action is not None else output


def play_episode(env, policy, seed: int, task: str | None, draw: bool):
    """(info of the last step, steps, frames) of one episode; frames only when `draw`."""
    from r1_gui.envs.contract import reset_options
    from r1_gui.envs.render import caption, frame

    observation, info = env.reset(seed=seed, options=reset_options(task))
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


def _policy(args: argparse.Namespace, env, task: str | None):
    from r1_gui.envs.contract import has_expert, reset_options
    from r1_gui.envs.policies import RandomPolicy, expert_policy

    if args.model_name_or_path:
        from r1_gui.checkpoints import config_folder

        config_folder(args.model_name_or_path)  # a missing folder: one line before anything loads
        return ModelPolicy(args)
    if args.policy == "random":
        return RandomPolicy(args.seed)
    _, first_info = env.reset(seed=args.seed, options=reset_options(task))  # as training and evaluation decide
    if not has_expert(env, first_info):
        raise UserError(f"--policy expert: {args.env_id} gives no info['expert_action']; use --policy random")
    return expert_policy


@cli_main
def main(argv: list[str] | None = None) -> list[dict]:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    from r1_gui.envs.contract import choose_tasks, declared_task_presets, declared_tasks, episode_count
    from r1_gui.envs.render import save_episode
    from r1_gui.envs.runtime.backend import open_env, pool_settings
    from r1_gui.envs.runtime.pool import EnvStartError
    from r1_gui.flags.episodes import parse_env_kwargs

    with user_errors():
        try:
            env = open_env(args.env_id, parse_env_kwargs(args.env_kwargs), pool_settings(args), seed=args.seed)
        except EnvStartError as error:
            raise UserError(str(error)) from error
        presets = declared_task_presets(env)
        every = not args.env_tasks or args.env_tasks == ["all"]  # the environment draws one per episode
        tasks = None if every else choose_tasks(args.env_id, declared_tasks(env), args.env_tasks, presets)
        policy = _policy(args, env, tasks[0] if tasks else None)
    count = args.env_episodes
    available = episode_count(env)
    if available is not None and args.seed + count > available:
        count = max(1, available - args.seed)
        print(f"{args.env_id} holds {available} episodes: playing {count} (seeds {args.seed}..{args.seed + count - 1})")
    results = []
    for number in range(count):
        seed = args.seed + number
        draw = bool(args.gif) and number == 0
        task = tasks[number % len(tasks)] if tasks else None
        info, steps, frames = play_episode(env, policy, seed, task, draw)
        results.append({"seed": seed, "task": info["task"], "success": info["success"], "steps": steps})
        print(f"seed {seed}  {info['task']:<20} success={info['success']!s:<5}  steps={steps:<3} {info['instruction']}")
        if frames:
            logger.info("wrote %s", save_episode(frames, args.gif, title=info["instruction"]))
    wins = sum(result["success"] for result in results)
    print(f"success {wins}/{len(results)} ({100 * wins / len(results):.1f}%)")
    env.close()
    return results


cli = installed(main)  # the installed command (pyproject.toml's [project.scripts]): main, returning nothing


if __name__ == "__main__":
    main()
