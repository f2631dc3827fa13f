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

from r1_gui.cli_errors import UserError, cli_main, command_parser, installed, user_errors

logger = logging.getLogger(__name__)

POLICIES = ("expert", "random")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    from r1_gui.envs.contract import add_env_arguments
    from r1_gui.envs.runtime.backend import add_pool_arguments
    from r1_gui.generation import add_generation_arguments

    parser = command_parser(__doc__, prog="python -m r1_gui.play")
    add_env_arguments(parser)
    add_pool_arguments(parser)
    # the episode settings are spelled as grpo_gui.py and eval/test_phone.py spell them; the old names stay aliases
    parser.add_argument(
        "--env_tasks",
        "--task",
        default="all",
        help="a task the environment declares, or all (the environment draws one per episode)",
    )
    parser.add_argument("--policy", choices=POLICIES, default="expert", help="who acts when no model is given")
    parser.add_argument(
        "--model_name_or_path", "--model", default=None, help="a Qwen-VL checkpoint to act instead of --policy"
    )
    parser.add_argument("--env_episodes", "--episodes", type=int, default=1, help="episodes to play (default 1)")
    parser.add_argument(
        "--env_seed_offset",
        "--seed",
        dest="seed",
        type=int,
        default=0,
        help="seed of the first episode, episode i uses seed + i (and of a model's sampling)",
    )
    parser.add_argument("--gif", default=None, help="draw the first episode: a .gif (animated) or .png (strip) path")
    model = parser.add_argument_group("model (--model_name_or_path)")
    add_generation_arguments(model)
    model.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto", help="where the model runs")
    args = parser.parse_args(argv)
    if args.env_episodes < 1:
        parser.error(f"--env_episodes must be at least 1, got {args.env_episodes}")
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
        raise UserError(f"--policy expert: {args.env} gives no info['expert_action']; use --policy random")
    return expert_policy


@cli_main
def main(argv: list[str] | None = None) -> list[dict]:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    from r1_gui.envs.contract import choose_tasks, declared_task_presets, declared_tasks, episode_count
    from r1_gui.envs.render import save_episode
    from r1_gui.envs.runtime.backend import open_env, pool_settings
    from r1_gui.envs.runtime.pool import EnvStartError

    with user_errors():
        try:
            env = open_env(args.env, args.env_kwargs, pool_settings(args), seed=args.seed)
        except EnvStartError as error:
            raise UserError(str(error)) from error
        presets = declared_task_presets(env)
        task = (
            None
            if args.env_tasks == "all"
            else choose_tasks(args.env, declared_tasks(env), [args.env_tasks], presets)[0]
        )
        policy = _policy(args, env, task)
    count = args.env_episodes
    available = episode_count(env)
    if available is not None and args.seed + count > available:
        count = max(1, available - args.seed)
        print(f"{args.env} holds {available} episodes: playing {count} (seeds {args.seed}..{args.seed + count - 1})")
    results = []
    for number in range(count):
        seed = args.seed + number
        draw = bool(args.gif) and number == 0
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
