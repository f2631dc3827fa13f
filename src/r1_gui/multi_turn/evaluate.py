"""Evaluating an agent on episodes of PhoneEnv (or ReplayEnv): `eval/test_phone.py`.

    python eval/test_phone.py --model_name_or_path runs/phone-grpo --episodes 200 --output_dir results/phone \
        [--tasks go_home open_app] [--max_turns 12] [--history_images 2] [--seed_offset 100000]
    python eval/test_phone.py --env r1_gui/Replay-v0 --env_kwargs '{"data_dir": "data/aitw-2k", "split": "test",
        "patch": "expert"}' --model_name_or_path runs/x --episodes 100 --output_dir results/replay

Episode i is task family tasks[i % len(tasks)] with seed seed_offset + i (keep it apart from the training seeds,
which start at grpo_gui.py's --env_seed_offset, 0 by default). The agent sees exactly what training shows it
(`r1_gui.multi_turn.context`), decodes greedily and stops at <|im_end|>.

OUTPUT_DIR/episodes.jsonl gets one line per finished episode (rerun the same command after an interruption and
it goes on from there); metrics.json: success_rate overall and per family, mean steps to success, the share of
turns whose tool call parsed and, on Replay-v0, step_success (share of turns matching the recorded action) and
episode_progress (UI-S1's semi-online metrics); report.md shows PNG strips of successes and failures.
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

import torch

from r1_gui.multi_turn.rollout import Episode, TurnInput, play_episodes
from r1_gui.prompts import stop_token_ids

logger = logging.getLogger(__name__)

PICTURES_PER_OUTCOME = 3


class HFPolicy:
    """Greedy generation with a transformers model, one turn of a batch of episodes at a time."""

    def __init__(self, model, processor, max_new_tokens: int = 128, do_sample: bool = False, temperature: float = 1.0):
        self.model, self.processor, self.max_new_tokens = model, processor, max_new_tokens
        self.do_sample, self.temperature = do_sample, temperature
        tokenizer = processor.tokenizer
        self.pad_id = tokenizer.pad_token_id
        self.image_pad_id = tokenizer.convert_tokens_to_ids("<|image_pad|>")
        self.stop_ids = stop_token_ids(tokenizer, "mobile_use")  # the prompt style of every turn (multi_turn.context)

    @torch.no_grad()
    def __call__(self, inputs: list[TurnInput]):
        width = max(len(turn.context_ids) for turn in inputs)
        ids = torch.tensor([[self.pad_id] * (width - len(t.context_ids)) + t.context_ids for t in inputs])
        mask = torch.tensor([[0] * (width - len(t.context_ids)) + [1] * len(t.context_ids) for t in inputs])
        extra = {"mm_token_type_ids": (ids == self.image_pad_id).long()}
        with_pixels = [t for t in inputs if t.pixel_values is not None]
        if with_pixels:
            extra["pixel_values"] = torch.cat([t.pixel_values for t in with_pixels]).to(self.model.dtype)
            extra["image_grid_thw"] = torch.cat([t.image_grid_thw for t in with_pixels])
        device = self.model.device
        output = self.model.generate(
            input_ids=ids.to(device),
            attention_mask=mask.to(device),
            **{key: value.to(device) for key, value in extra.items()},
            max_new_tokens=self.max_new_tokens,
            do_sample=self.do_sample,
            temperature=self.temperature if self.do_sample else None,
            eos_token_id=self.stop_ids,
            pad_token_id=self.pad_id,
        )
        answers = []
        for row in output[:, width:].tolist():
            end = next((i for i, token in enumerate(row) if token in self.stop_ids), None)
            answers.append(row if end is None else row[: end + 1])
        return answers, None


def episode_record(episode: Episode, picture: str | None = None) -> dict:
    turns = [
        {
            "text": turn.text,
            "action": None if turn.action is None else repr(turn.action),
            "expert_action": None if turn.expert_action is None else repr(turn.expert_action),
            "error": turn.error,
            "parsed": turn.action is not None,
            "matched": turn.matched,
        }
        for turn in episode.turns
    ]
    return {
        "key": f"{episode.task}:{episode.seed}",
        "task": episode.task,
        "seed": episode.seed,
        "success": episode.success,
        "steps": len(episode.turns),
        "truncated": episode.truncated,
        "progress": episode.progress,
        "picture": picture,
        "turns": turns,
    }


def phone_metrics(records: list[dict]) -> dict:
    """success_rate (overall and per family), mean steps to success, turn parse rate; replay: step success and
    episode progress."""

    def summary(rows: list[dict]) -> dict:
        wins = [row for row in rows if row["success"]]
        turns = [turn for row in rows for turn in row["turns"]]
        result = {
            "episodes": len(rows),
            "success_rate": len(wins) / len(rows) if rows else 0.0,
            "mean_steps_to_success": sum(row["steps"] for row in wins) / len(wins) if wins else None,
            "turn_parse_rate": sum(turn["parsed"] for turn in turns) / len(turns) if turns else 0.0,
        }
        matched = [turn["matched"] for turn in turns if turn["matched"] is not None]
        if matched:
            result["step_success"] = sum(matched) / len(matched)
            result["episode_progress"] = sum(row["progress"] or 0.0 for row in rows) / len(rows)
        return result

    families = sorted({row["task"] for row in records})
    return {**summary(records), "per_family": {f: summary([r for r in records if r["task"] == f]) for f in families}}


def save_picture(episode: Episode, path: Path) -> str:
    """The episode as a PNG strip: each screen with the action taken on it (r1_gui.envs.render)."""
    import numpy as np

    from r1_gui.envs.render import caption, frame, save_episode

    frames = []
    for index, screenshot in enumerate(episode.history.screenshots):
        turn = episode.turns[index] if index < len(episode.turns) else None
        text = "(end: success)" if turn is None and episode.success else "(end)"
        if turn is not None:
            text = caption(turn.action, turn.error)
        frames.append(frame(np.asarray(screenshot), None if turn is None else turn.action, text, width=160))
    return str(save_episode(frames, path))


def write_report(output_dir: Path, metrics: dict, records: list[dict], title: str) -> Path:
    lines = [f"# {title}", "", "| metric | value |", "|---|---|"]
    for key, value in metrics.items():
        if key != "per_family":
            lines.append(f"| {key} | {value if not isinstance(value, float) else f'{value:.3f}'} |")
    lines += [
        "",
        "| family | episodes | success_rate | mean steps to success | turn parse rate |",
        "|---|---|---|---|---|",
    ]
    for family, row in metrics["per_family"].items():
        steps = "-" if row["mean_steps_to_success"] is None else f"{row['mean_steps_to_success']:.1f}"
        lines.append(
            f"| {family} | {row['episodes']} | {row['success_rate']:.3f} | {steps} | {row['turn_parse_rate']:.3f} |"
        )
    for outcome in (True, False):
        shown = [row for row in records if row["success"] == outcome and row["picture"]]
        lines += ["", f"## {'Successes' if outcome else 'Failures'}", ""]
        for row in shown:
            picture = Path(row["picture"]).relative_to(output_dir)
            lines += [f"`{row['key']}`, {row['steps']} steps:", "", f"![{row['key']}]({picture})", ""]
        if not shown:
            lines.append("(none)")
    path = output_dir / "report.md"
    path.write_text("\n".join(lines) + "\n")
    return path


def evaluate_episodes(
    policy,
    processor,
    output_dir: str | Path,
    *,
    episodes: int,
    tasks: list[str],
    env_id: str = "r1_gui/Phone-v0",
    env_kwargs: dict | None = None,
    max_turns: int = 12,
    history_images: int = 2,
    seed_offset: int = 100_000,
    batch_size: int = 8,
    system: str | None = None,
    title: str = "Phone evaluation",
) -> dict:
    """Play `episodes` episodes (resuming from OUTPUT_DIR/episodes.jsonl), write metrics.json and report.md."""
    import gymnasium

    import r1_gui.envs  # noqa: F401  (registers the environments)

    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    path = output_dir / "episodes.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []
    done = {row["key"] for row in records}
    wanted = [(tasks[i % len(tasks)], seed_offset + i) for i in range(episodes)]
    todo = [reset for reset in wanted if f"{reset[0]}:{reset[1]}" not in done]
    if done:
        logger.info("%s: %d episodes already played, %d to go", path, len(wanted) - len(todo), len(todo))
    envs = [gymnasium.make(env_id, disable_env_checker=True, **(env_kwargs or {})) for _ in range(batch_size)]
    decode = lambda ids: processor.tokenizer.decode(ids, skip_special_tokens=True)  # noqa: E731
    with path.open("a") as out:
        for start in range(0, len(todo), batch_size):
            batch = todo[start : start + batch_size]
            played = play_episodes(
                envs[: len(batch)], batch, policy, processor, max_turns=max_turns, history_images=history_images,
                decode=decode, system=system,
            )  # fmt: skip
            for episode in played:
                shown = sum(1 for row in records if row["success"] == episode.success and row["picture"])
                picture = None
                if shown < PICTURES_PER_OUTCOME:
                    name = f"{'success' if episode.success else 'failure'}_{episode.task}_{episode.seed}.png"
                    picture = save_picture(episode, output_dir / "episodes" / name)
                record = episode_record(episode, picture)
                records.append(record)
                out.write(json.dumps(record) + "\n")
                out.flush()
    records = [row for row in records if row["key"] in {f"{t}:{s}" for t, s in wanted}]
    metrics = phone_metrics(records)
    (output_dir / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    write_report(output_dir, metrics, records, title)
    return metrics


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    from r1_gui.envs import TASKS
    from r1_gui.evaluation.config import DEFAULT_MAX_PIXELS, DEFAULT_MIN_PIXELS

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model_name_or_path", required=True)
    parser.add_argument("--output_dir", required=True)
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), choices=list(TASKS))
    parser.add_argument("--env", default="r1_gui/Phone-v0", choices=["r1_gui/Phone-v0", "r1_gui/Replay-v0"])
    parser.add_argument("--env_kwargs", default=None, help="gymnasium.make keywords as JSON")
    parser.add_argument("--max_turns", type=int, default=12)
    parser.add_argument("--history_images", type=int, default=2)
    parser.add_argument("--max_new_tokens", type=int, default=128)
    parser.add_argument("--seed_offset", type=int, default=100_000)
    parser.add_argument("--batch_size", type=int, default=8)
    parser.add_argument("--min_pixels", type=int, default=DEFAULT_MIN_PIXELS)  # the evaluation's (EvalConfig)
    parser.add_argument("--max_pixels", type=int, default=DEFAULT_MAX_PIXELS)
    parser.add_argument("--system_prompt", default=None)
    args = parser.parse_args(argv)
    if args.episodes < 1 or args.max_turns < 1 or args.batch_size < 1:
        parser.error("--episodes, --max_turns and --batch_size must be at least 1")
    try:
        args.env_kwargs = json.loads(args.env_kwargs) if args.env_kwargs else {}
    except json.JSONDecodeError as error:
        parser.error(f"--env_kwargs is not JSON: {error}")
    if args.env == "r1_gui/Replay-v0":
        if "data_dir" not in args.env_kwargs:
            parser.error('--env r1_gui/Replay-v0 needs --env_kwargs \'{"data_dir": "<builder output folder>"}\'')
        args.tasks = ["replay"]
    return args


def main(argv: list[str] | None = None) -> dict:
    from transformers import AutoModelForImageTextToText

    from r1_gui.processing import CHAT_TEMPLATE, load_processor

    args = parse_args(argv)
    processor = load_processor(
        args.model_name_or_path, min_pixels=args.min_pixels, max_pixels=args.max_pixels, chat_template=CHAT_TEMPLATE
    )
    model = AutoModelForImageTextToText.from_pretrained(args.model_name_or_path, dtype="auto").eval()
    metrics = evaluate_episodes(
        HFPolicy(model, processor, args.max_new_tokens),
        processor,
        args.output_dir,
        episodes=args.episodes,
        tasks=args.tasks,
        env_id=args.env,
        env_kwargs=args.env_kwargs,
        max_turns=args.max_turns,
        history_images=args.history_images,
        seed_offset=args.seed_offset,
        batch_size=args.batch_size,
        system=args.system_prompt,
        title=f"{args.env} evaluation of {args.model_name_or_path}",
    )
    print(json.dumps({key: value for key, value in metrics.items() if key != "per_family"}, indent=2))
    return metrics
