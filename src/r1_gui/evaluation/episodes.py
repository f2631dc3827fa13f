"""Episode evaluation: a checkpoint plays whole episodes of any environment that keeps r1_gui's environment contract
(`eval/test_phone.py`, `r1_gui.evaluation.episode_cli`).

    from r1_gui.evaluation.episodes import EpisodeSettings, evaluate_episodes
    metrics = evaluate_episodes("runs/ckpt", "results/phone", EpisodeSettings(env_id="r1_gui/Phone-v0", episodes=200))

Episode i plays task tasks[i % len(tasks)] (the tasks the environment declares, or those asked for) with reset seed
seed_offset + i; an environment that declares `episode_count` (a recorded split) plays each of its episodes at most
once. The agent sees exactly what multi-turn training shows it (`r1_gui.agent.context`), asked through the step
evaluation's generators (HF or vLLM, LoRA adapter folders, `--vision_attention`: `evaluation.generate`), in batches
of `batch_size` episodes that step side by side in an `EnvPool`.

OUTPUT_DIR/episodes.jsonl gets one line per finished episode (`RecordWriter`: flushed as episodes end; a torn last
line is dropped on the next read), keyed "task:seed". A rerun continues only when the model's files, the
environment and the settings are those in run_config.json (`evaluation.resume`), and says how many episodes it
reused; otherwise it stops naming what differs (`--overwrite` starts over). metrics.json: success_rate overall and
per task, mean steps to success, the share of turns whose action parsed, env_failures, and, where the environment
reports them, step_success (turns matching a recorded step) and episode_progress; report.md shows the settings, the
tables and PNG strips of successes and failures.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from r1_gui.agent.context import DEFAULT_HISTORY_IMAGES, DEFAULT_MAX_TURNS
from r1_gui.envs.pool import DEFAULT_STEP_TIMEOUT, EnvPool
from r1_gui.evaluation.config import EvalConfig, eval_config
from r1_gui.evaluation.errors import EvaluationError
from r1_gui.evaluation.predictions_file import RecordWriter, read_records
from r1_gui.evaluation.report import REPORT_FILE, cell, number_text, settings_lines
from r1_gui.evaluation.resume import (
    GENERATION_KEYS,
    METRICS_FILE,
    RunFiles,
    check_resume,
    clear_run,
    earlier_run,
    model_record,
    write_run_config,
)

logger = logging.getLogger(__name__)

EPISODES_FILE = "episodes.jsonl"
PICTURES_DIR = "episodes"
EPISODE_RUN = RunFiles(
    EPISODES_FILE,
    PICTURES_DIR,
    ("model_fingerprint", "env_id", "env_kwargs", "max_turns", "history_images", *GENERATION_KEYS),
)
HELD_OUT_SEED_OFFSET = 100_000  # evaluation seeds start here; training seeds start at grpo_gui.py's --env_seed_offset


@dataclass(frozen=True)
class EpisodeSettings:
    """What episodes are played, and how; the fields are eval/test_phone.py's flags."""

    env_id: str = "r1_gui/Phone-v0"
    env_kwargs: dict = field(default_factory=dict)
    tasks: tuple[str, ...] | None = None  # None: every task the environment declares (or its own choice)
    episodes: int = 200
    seed_offset: int = HELD_OUT_SEED_OFFSET
    max_turns: int = DEFAULT_MAX_TURNS
    history_images: int = DEFAULT_HISTORY_IMAGES
    env_step_timeout: float = DEFAULT_STEP_TIMEOUT
    pictures: int = 3  # PNG strips per outcome (successes, failures) in the report

    def __post_init__(self) -> None:
        for name in ("episodes", "max_turns", "history_images"):
            if getattr(self, name) < 1:
                raise EvaluationError(f"--{name} must be at least 1, got {getattr(self, name)}")


def episode_key(task: str | None, seed: int) -> str:
    return f"{task}:{seed}" if task else str(seed)


def planned_resets(settings: EpisodeSettings, described) -> list[tuple[str | None, int]]:
    """(task, seed) of every episode to play; an environment with a fixed number of episodes plays each once."""
    from r1_gui.envs.contract import choose_tasks

    try:
        tasks = choose_tasks(settings.env_id, described.tasks, list(settings.tasks or []) or None)
    except ValueError as error:
        raise EvaluationError(str(error).replace("--env_tasks", "--tasks")) from None
    count = settings.episodes
    if described.episode_count is not None and count > described.episode_count:
        logger.warning(
            "%s holds %d distinct episodes; playing each once instead of %d (seeds beyond would repeat them)",
            settings.env_id,
            described.episode_count,
            count,
        )
        count = described.episode_count
    return [(tasks[i % len(tasks)], settings.seed_offset + i) for i in range(count)]


def episode_record(episode, picture: str | None = None) -> dict:
    """The episodes.jsonl line of a played episode (`r1_gui.agent.loop.Episode`)."""
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
        "id": episode_key(episode.task, episode.seed),
        "scores": {"success": bool(episode.success)},
        "task": episode.task,
        "seed": episode.seed,
        "instruction": episode.history.instruction,
        "success": bool(episode.success),
        "steps": len(episode.turns),
        "truncated": episode.truncated,
        "progress": episode.progress,
        "env_failure": episode.env_failure,
        "picture": picture,
        "turns": turns,
    }


def episode_metrics(records: Sequence[dict]) -> dict:
    """success_rate (overall and per task), mean steps to success, turn parse rate, env_failures; where the
    environment reports them, step_success (turns matching a recorded step) and episode_progress."""

    def summary(rows: Sequence[dict]) -> dict:
        wins = [row for row in rows if row["success"]]
        turns = [turn for row in rows for turn in row["turns"]]
        result = {
            "episodes": len(rows),
            "success_rate": len(wins) / len(rows) if rows else 0.0,
            "mean_steps_to_success": sum(row["steps"] for row in wins) / len(wins) if wins else None,
            "turn_parse_rate": sum(turn["parsed"] for turn in turns) / len(turns) if turns else 0.0,
            "env_failures": sum(row.get("env_failure") is not None for row in rows),
        }
        matched = [turn["matched"] for turn in turns if turn["matched"] is not None]
        if matched:
            result["step_success"] = sum(matched) / len(matched)
        if any(row["progress"] is not None for row in rows):
            result["episode_progress"] = sum(row["progress"] or 0.0 for row in rows) / len(rows)
        return result

    tasks = sorted({row["task"] for row in records})
    return {
        **summary(records),
        "per_task": {task: summary([r for r in records if r["task"] == task]) for task in tasks},
    }


def save_picture(episode, path: Path) -> str:
    """The episode as a PNG strip: the instruction above, each screen with the action taken on it below."""
    import numpy as np

    from r1_gui.envs.render import caption, frame, save_episode

    frames = []
    for index, screenshot in enumerate(episode.history.screenshots):
        turn = episode.turns[index] if index < len(episode.turns) else None
        text = f"end: {'success' if episode.success else 'failure'}"
        if turn is not None:
            text = f"{index + 1}. {caption(turn.action, turn.error)}"
        frames.append(frame(np.asarray(screenshot), None if turn is None else turn.action, text, width=160))
    if episode.env_failure:
        frames.append(
            frame(
                np.asarray(episode.history.screenshots[-1]),
                None,
                f"environment failure: {episode.env_failure}",
                width=160,
            )
        )
    return str(
        save_episode(frames, path, title=f"{episode_key(episode.task, episode.seed)}: {episode.history.instruction}")
    )


def write_report(output_dir: Path, metrics: dict, records: Sequence[dict], settings: dict) -> Path:
    lines = [f"# {settings['env_id']} evaluation of {settings['model_name_or_path']}", "", settings_lines(settings), ""]
    lines += ["## Metrics", "", "| metric | value |", "|---|---|"]
    lines += [f"| {key} | {number_text(value)} |" for key, value in metrics.items() if key != "per_task"]
    lines += ["", "## Per task", "", "| task | episodes | success_rate | mean steps to success | turn parse rate |"]
    lines.append("|---|---|---|---|---|")
    for task, row in metrics["per_task"].items():
        steps = "-" if row["mean_steps_to_success"] is None else f"{row['mean_steps_to_success']:.1f}"
        lines.append(
            f"| {cell(task)} | {row['episodes']} | {row['success_rate']:.3f} | {steps} | {row['turn_parse_rate']:.3f} |"
        )
    for outcome in (True, False):
        shown = [row for row in records if row["success"] == outcome and row["picture"]]
        lines += ["", f"## {'Successes' if outcome else 'Failures'}", ""]
        for row in shown:
            lines += [f"`{cell(row['id'])}`, {row['steps']} steps:", "", f"![{cell(row['id'])}]({row['picture']})", ""]
        if not shown:
            lines.append("(none)")
    path = output_dir / REPORT_FILE
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


class GeneratorPolicy:
    """A step evaluation generator (`evaluation.generate`) answering episode turns: the agent loop's policy."""

    def __init__(self, generator):
        self.generator = generator

    def __call__(self, inputs, infos):
        return self.generator.generate_turns(inputs), None


def evaluate_episodes(
    model_name_or_path: str | Path,
    output_dir: str | Path,
    settings: EpisodeSettings | None = None,
    config: EvalConfig | None = None,
    **overrides,
) -> dict:
    """Play the planned episodes (resuming from OUTPUT_DIR/episodes.jsonl), write metrics.json and report.md, and
    return the metrics. ``config``: how the checkpoint is asked (``EvalConfig``; the prompt style is mobile_use, as
    multi-turn training's); ``overrides``: its fields as keywords."""
    from tqdm import tqdm

    from r1_gui.agent.loop import play_episodes
    from r1_gui.evaluation.generate import make_generator

    settings = settings or EpisodeSettings()
    config = eval_config(config, **overrides).with_settings(
        prompt_style="mobile_use", coordinates="grid999", images_per_prompt=settings.history_images
    )
    output_dir = Path(output_dir)
    run = {
        "model_name_or_path": str(model_name_or_path),
        "env_id": settings.env_id,
        "env_kwargs": settings.env_kwargs,
        "max_turns": settings.max_turns,
        "history_images": settings.history_images,
        **{key: getattr(config, key) for key in GENERATION_KEYS},
    }
    earlier = None if config.overwrite else earlier_run(output_dir, EPISODE_RUN)
    fingerprint, model_files = model_record(model_name_or_path, earlier)
    run_config = {**run, "model_fingerprint": fingerprint, **model_files}
    check_resume(output_dir, earlier, run_config, EPISODE_RUN)

    with EnvPool(settings.env_id, settings.env_kwargs, step_timeout=settings.env_step_timeout) as pool:
        try:
            described = pool.describe(seed=settings.seed_offset)
        except ValueError as error:
            raise EvaluationError(str(error)) from None
        wanted = planned_resets(settings, described)
        if config.overwrite:
            clear_run(output_dir, EPISODE_RUN)
        write_run_config(output_dir, run_config)
        path = output_dir / EPISODES_FILE
        records = read_records(path)  # a torn last line (a kill mid-write) is dropped and cut from the file
        done = {row["id"] for row in records}
        todo = [reset for reset in wanted if episode_key(*reset) not in done]
        reused = len(wanted) - len(todo)
        if reused:
            logger.warning(
                "resuming %s (same model files, environment and settings): %d of %d episodes already played, %d to "
                "go; --overwrite starts over", path, reused, len(wanted), len(todo),
            )  # fmt: skip
        if todo:
            generator = make_generator(model_name_or_path, config)
            policy, processor = GeneratorPolicy(generator), generator.processor
            decode = lambda ids: processor.tokenizer.decode(ids, skip_special_tokens=True)  # noqa: E731
            shown = {True: 0, False: 0}
            for row in records:
                shown[row["success"]] += bool(row.get("picture"))
            with RecordWriter(path) as writer, tqdm(total=len(todo), desc="episodes", unit="episode") as bar:
                for start in range(0, len(todo), config.batch_size):
                    batch = todo[start : start + config.batch_size]
                    played = play_episodes(
                        pool, batch, policy, processor, max_turns=settings.max_turns,
                        history_images=settings.history_images, decode=decode, system=config.system_prompt,
                    )  # fmt: skip
                    lines = []
                    for episode in played:
                        picture = None
                        if shown[episode.success] < settings.pictures:
                            shown[episode.success] += 1
                            name = f"{'success' if episode.success else 'failure'}_{episode_key(episode.task, episode.seed)}"
                            picture = save_picture(episode, output_dir / PICTURES_DIR / f"{_safe(name)}.png")
                            picture = str(Path(picture).relative_to(output_dir))
                        lines.append(episode_record(episode, picture))
                    writer.write(lines)
                    records += lines
                    bar.update(len(batch))
                    bar.set_postfix(success=f"{sum(r['success'] for r in records) / len(records):.2f}")
    wanted_keys = {episode_key(*reset) for reset in wanted}
    records = [row for row in records if row["id"] in wanted_keys]
    metrics = episode_metrics(records)
    metrics["reused_episodes"] = reused
    (output_dir / METRICS_FILE).write_text(json.dumps(metrics, indent=2) + "\n")
    write_report(output_dir, metrics, records, {**run, "episodes": len(wanted), "seed_offset": settings.seed_offset})
    return metrics


def _safe(name: str) -> str:
    import re

    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:100]
