"""Episode evaluation: a checkpoint plays whole episodes of any environment that keeps r1_gui's environment contract
(`eval/test_phone.py`, `r1_gui.evaluation.episodes.cli`).

    from r1_gui.evaluation.episodes.run import EpisodeSettings, evaluate_episodes
    metrics = evaluate_episodes("runs/ckpt", "results/phone", EpisodeSettings(env_id="r1_gui/Phone-v0", episodes=200))

Episode i plays task tasks[i % len(tasks)] (the tasks the environment declares, or those asked for) with reset seed
seed_offset + i; an environment that declares `episode_count` (a recorded split) plays each of its episodes at most
once. The agent sees exactly what multi-turn training shows it (`r1_gui.agent.context`), asked through the step
evaluation's generators (HF or vLLM, LoRA adapter folders, `--vision_attention`: `r1_gui.generation`), in batches
of `batch_size` episodes that step side by side in a pool (`r1_gui.envs.runtime.backend`: this machine's worker
processes, or Ray actors on a cluster).

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
from dataclasses import dataclass, field, fields
from pathlib import Path

from r1_gui.checkpoints import saved_episode_settings
from r1_gui.envs.runtime.backend import lent_or_own, pool_settings
from r1_gui.envs.runtime.pool import SlotPool
from r1_gui.evaluation.config import EvalConfig, eval_config
from r1_gui.evaluation.errors import EvaluationError
from r1_gui.evaluation.metrics import EPISODE_METRICS, REPEAT_MARK, episode_metrics
from r1_gui.evaluation.run.predictions_file import RecordWriter, read_records
from r1_gui.evaluation.run.protocol import (
    episode_history,
    episode_prompt_sha256,
    episode_split,
    protocol_card,
    resolve_image_settings,
)
from r1_gui.evaluation.run.report_text import cell, metrics_table, protocol_section, settings_lines, with_interval
from r1_gui.evaluation.run.resume import (
    EPISODES_FILE,
    GENERATION_KEYS,
    METRICS_FILE,
    PICTURES_DIR,
    REPORT_FILE,
    RunFiles,
    check_resume,
    clear_run,
    earlier_run,
    model_record,
    write_run_config,
)
from r1_gui.flags import flag
from r1_gui.flags.episodes import (
    DEFAULT_HISTORY_IMAGES,
    DEFAULT_MAX_TURNS,
    DEFAULT_STEP_TIMEOUT,
    PLAYED_ENV,
    parse_env_kwargs,
    parse_env_resources,
)
from r1_gui.generation.settings import log_warnings
from r1_gui.scoring import click_hit

logger = logging.getLogger(__name__)

EPISODE_RUN = RunFiles(
    EPISODES_FILE,
    PICTURES_DIR,
    ("model_fingerprint", "env_id", "env_kwargs", "max_turns", "history_images", *GENERATION_KEYS),
)
HELD_OUT_SEED_OFFSET = 100_000  # evaluation seeds start here; training seeds start at grpo_gui.py's --env_seed_offset


def unlike_training(model_name_or_path, settings: EpisodeSettings, config: EvalConfig) -> list[str]:
    """Warnings for the card: where the episodes played differ from those the checkpoint was trained on (its run's
    episode_settings.json), so the numbers do not measure what training did. None for a model without that file."""
    trained, path = saved_episode_settings(model_name_or_path)
    played = {"env_id": settings.env_id, "env_kwargs": settings.env_kwargs, "max_turns": settings.max_turns,
              "max_turn_tokens": config.max_new_tokens, "history_images": settings.history_images}  # fmt: skip
    flags = {"env_id": "--env", "env_kwargs": "--env_kwargs", "max_turns": "--max_turns",
             "max_turn_tokens": "--max_new_tokens", "history_images": "--history_images"}  # fmt: skip

    def show(value) -> str:
        return f"'{json.dumps(value)}'" if isinstance(value, dict) else str(value)

    return [
        f"{flags[key]} {show(value)} differs from the training run's {show(trained[key])} (in {path}); pass "
        f"{flags[key]} {show(trained[key])} to play the episodes it was trained on"
        for key, value in played.items()
        if key in trained and trained[key] != value
    ]


def tasks_unlike_training(model_name_or_path, settings: EpisodeSettings, tasks: list[str | None]) -> list[str]:
    """A warning for the card when the tasks played (``tasks``) are not those the checkpoint's run trained on (its
    episode_settings.json); none for a model without that file, or trained on another environment."""
    trained, path = saved_episode_settings(model_name_or_path)
    if trained.get("env_id") != settings.env_id or not trained.get("tasks"):
        return []

    def names(chosen) -> list[str]:
        return [task or "(its own)" for task in chosen]

    played, taught = names(dict.fromkeys(tasks)), names(trained["tasks"])
    if set(played) == set(taught):
        return []
    given = " ".join(settings.tasks) if settings.tasks else f"(not given: every task {settings.env_id} declares)"
    return [
        f"--env_tasks {given} plays {', '.join(played)}; the training run played {', '.join(taught)} (in {path}); "
        f"pass --env_tasks {' '.join(taught)} to play the tasks it was trained on"
    ]


@dataclass(frozen=True)
class EpisodeSettings:
    """What episodes are played, and how: eval/test_phone.py's flags (declared in `r1_gui.flags.episodes`; tasks,
    episodes and seed_offset are --env_tasks, --env_episodes and --env_seed_offset)."""

    env_id: str = PLAYED_ENV
    env_kwargs: dict = field(default_factory=dict)
    tasks: tuple[str, ...] | None = None  # None: every task the environment declares (or its own choice)
    episodes: int = 200
    seed_offset: int = HELD_OUT_SEED_OFFSET
    max_turns: int = DEFAULT_MAX_TURNS
    history_images: int = DEFAULT_HISTORY_IMAGES
    env_step_timeout: float = DEFAULT_STEP_TIMEOUT
    pictures: int = 3  # PNG strips per outcome (successes, failures) in the report
    repeats: int = flag(
        1,
        "Play the same episodes this many times, pass r sampling with --seed + r (give --temperature above 0: greedy "
        "passes differ only by nondeterminism); adds success_rate_mean/_std and flip_share, the share of episodes "
        "whose outcome differs between passes.",
    )
    # where the environments run (r1_gui.envs.runtime.backend.PoolSettings: local worker processes, Ray actors, or
    # sessions on OpenEnv servers)
    env_backend: str = "local"
    ray_address: str = "auto"
    env_resources: dict = field(default_factory=dict)
    env_spares: int = 0
    env_url: str | None = None  # OpenEnv servers (--env_backend openenv)

    @classmethod
    def from_args(cls, args) -> EpisodeSettings:
        """The settings of a command line (eval/test_phone.py): each field is its flag, but tasks, episodes and
        seed_offset are --env_tasks, --env_episodes and --env_seed_offset, and the JSON flags are parsed."""
        given = {f.name: getattr(args, f.name) for f in fields(cls) if hasattr(args, f.name)}
        given |= {"episodes": args.env_episodes, "seed_offset": args.env_seed_offset}
        given["tasks"] = tuple(args.env_tasks) if getattr(args, "env_tasks", None) else None
        given["env_kwargs"] = parse_env_kwargs(args.env_kwargs)
        given["env_resources"] = parse_env_resources(getattr(args, "env_resources", None))
        return cls(**given)

    def __post_init__(self) -> None:
        for name, option in (("episodes", "--env_episodes"), ("max_turns", "--max_turns"),
                           ("history_images", "--history_images"), ("repeats", "--repeats")):  # fmt: skip
            if getattr(self, name) < 1:
                raise EvaluationError(f"{option} must be at least 1, got {getattr(self, name)}")
        try:
            pool_settings(self)
        except ValueError as error:
            raise EvaluationError(str(error)) from None


def episode_key(task: str | None, seed: int, repeat: int = 0) -> str:
    """An episode's id in episodes.jsonl: "task:seed", and "task:seed#r" for repeat r > 0 (repeat 0 keeps the id
    of a run without repeats, so such a run resumes into one with repeats)."""
    return (f"{task}:{seed}" if task else str(seed)) + (f"{REPEAT_MARK}{repeat}" if repeat else "")


def planned_resets(settings: EpisodeSettings, described) -> list[tuple[str | None, int]]:
    """(task, seed) of every episode to play; an environment with a fixed number of episodes plays each once."""
    from r1_gui.envs.contract import choose_tasks, reset_plan

    try:
        wanted = list(settings.tasks or []) or None
        tasks = choose_tasks(settings.env_id, described.tasks, wanted, described.task_presets)
    except ValueError as error:
        raise EvaluationError(str(error)) from None
    count = settings.episodes
    if described.episode_count is not None and count > described.episode_count:
        logger.warning(
            "%s holds %d distinct episodes; playing each once instead of %d (seeds beyond would repeat them)",
            settings.env_id,
            described.episode_count,
            count,
        )
        count = described.episode_count
    return reset_plan(tasks, count, settings.seed_offset)


def episode_record(episode, picture: str | None = None, repeat: int = 0) -> dict:
    """The episodes.jsonl line of a played episode (`r1_gui.agent.loop.Episode`) of pass ``repeat``."""
    turns = [
        {
            "text": turn.text,
            "action": None if turn.action is None else repr(turn.action),
            "expert_action": None if turn.expert_action is None else repr(turn.expert_action),
            "error": turn.error,
            "parsed": turn.action is not None,
            "matched": turn.matched,
            "target_box": None if turn.target_box is None else list(turn.target_box),
            "click_hit": click_hit(turn.action, turn.target_box),
        }
        for turn in episode.turns
    ]
    return {
        "id": episode_key(episode.task, episode.seed, repeat),
        "scores": {"success": bool(episode.success)},
        "task": episode.task,
        "seed": episode.seed,
        "repeat": repeat,
        "instruction": episode.history.instruction,
        "success": bool(episode.success),
        "steps": len(episode.turns),
        "truncated": episode.truncated,
        "progress": episode.progress,
        "env_failure": episode.env_failure,
        "picture": picture,
        "turns": turns,
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


# The overall metrics the report's table lists (with their intervals), in this order; the rest are other tables.
REPORT_METRICS = (
    "episodes", *(metric.name for metric in EPISODE_METRICS),
    "env_failures", "repeats", "success_rate_mean", "success_rate_std", "flip_share", "reused_episodes",
)  # fmt: skip
TASK_COLUMNS = ("episodes", "success_rate", "mean_steps_to_success", "turn_parse_rate", "click_hit_rate")


def write_report(output_dir: Path, metrics: dict, records: Sequence[dict], settings: dict) -> Path:
    lines = [f"# {settings['env_id']} evaluation of {settings['model_name_or_path']}", ""]
    lines += [protocol_section(metrics["protocol"]), "", "## Settings", "", settings_lines(settings), ""]
    lines += ["## Metrics", "", "95% intervals over episodes (see r1_gui.evaluation.episodes.run.episode_metrics).", ""]
    lines.append(metrics_table(metrics, [key for key in REPORT_METRICS if key in metrics]))
    if "per_repeat" in metrics:
        lines += ["", "## Per repeat (pass r samples with seed + r)", "", "| repeat | episodes | success_rate |"]
        lines.append("|---|---|---|")
        for numbers in metrics["per_repeat"]:
            lines.append(f"| {numbers['repeat']} | {numbers['episodes']} | {with_interval(numbers, 'success_rate')} |")
    lines += [
        "",
        "## Per task",
        "",
        "| task | " + " | ".join(TASK_COLUMNS) + " |",
        "|---" * (len(TASK_COLUMNS) + 1) + "|",
    ]
    for task, row in metrics["per_task"].items():
        lines.append(f"| {cell(task)} | " + " | ".join(with_interval(row, key) for key in TASK_COLUMNS) + " |")
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
    """A step evaluation generator (`r1_gui.generation`) answering episode turns: the agent loop's policy."""

    def __init__(self, generator):
        self.generator = generator

    def __call__(self, inputs, infos):
        return self.generator.generate_turns(inputs), None


def evaluate_episodes(
    model_name_or_path: str | Path,
    output_dir: str | Path,
    settings: EpisodeSettings | None = None,
    config: EvalConfig | None = None,
    pool: SlotPool | None = None,
    **overrides,
) -> dict:
    """Play the planned episodes (resuming from OUTPUT_DIR/episodes.jsonl), write metrics.json (the protocol card
    first) and report.md, and return the metrics. ``config``: how the checkpoint is asked (``EvalConfig``; the prompt
    style is mobile_use, as multi-turn training's; min/max pixels left None: the checkpoint's saved processor's);
    ``overrides``: its fields as keywords. ``settings.repeats`` passes play the same episodes, pass r sampling with
    seed + r. ``pool``: a pool (``r1_gui.envs.runtime.backend``) of the settings' environment to play in, left open (its started workers are
    reused); None: one of its own, closed at the end."""
    settings = settings or EpisodeSettings()
    config = eval_config(config, **overrides).with_settings(
        prompt_style="mobile_use", coordinates="grid999", images_per_prompt=settings.history_images
    )
    config, image, warnings = resolve_image_settings(config, model_name_or_path)
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
    warnings = [*warnings, *unlike_training(model_name_or_path, settings, config)]
    log_warnings(warnings)
    if settings.repeats > 1 and config.temperature == 0:
        logger.warning(
            "--repeats %d with greedy decoding (--temperature 0): every pass gives the same answers on the same "
            "episodes, so the repeats show only nondeterminism (batching, GPU kernels); sample (--temperature > 0) "
            "to measure the spread of the model's sampling", settings.repeats,
        )  # fmt: skip

    backend = pool_settings(settings)
    with lent_or_own(pool, settings.env_id, settings.env_kwargs, settings.env_step_timeout, backend) as pool:
        try:
            described = pool.describe(seed=settings.seed_offset)
        except ValueError as error:
            raise EvaluationError(str(error)) from None
        plan = planned_resets(settings, described)
        unlike = tasks_unlike_training(model_name_or_path, settings, [task for task, _ in plan])
        log_warnings(unlike)
        warnings = [*warnings, *unlike]
        wanted = [(task, seed, repeat) for repeat in range(settings.repeats) for task, seed in plan]
        path = output_dir / EPISODES_FILE
        done = set() if config.overwrite else {row["id"] for row in read_records(path, repair=False)}
        todo = [reset for reset in wanted if episode_key(*reset) not in done]
        # The model loads before any file is written or cleared: one that does not load leaves the folder as it was.
        generator = None
        if todo:
            from r1_gui.generation import make_generator

            generator = make_generator(model_name_or_path, config)
        if config.overwrite:
            clear_run(output_dir, EPISODE_RUN)
        write_run_config(output_dir, run_config)
        records = read_records(path)  # a torn last line (a kill mid-write) is dropped and cut from the file
        reused = len(wanted) - len(todo)
        if reused:
            logger.warning(
                "resuming %s (same model files, environment and settings): %d of %d episodes already played, %d to "
                "go; --overwrite starts over", path, reused, len(wanted), len(todo),
            )  # fmt: skip
        if todo:
            _play(pool, todo, generator, settings, output_dir, records)
    wanted_keys = {episode_key(*reset) for reset in wanted}
    records = [row for row in records if row["id"] in wanted_keys]
    card = protocol_card(
        "episodes",
        config,
        image=image,
        history=episode_history(settings.max_turns, settings.history_images),
        split=episode_split(settings.env_id, settings.env_kwargs, plan, settings.seed_offset, settings.repeats),
        prompt_sha256=episode_prompt_sha256(settings.history_images, config.system_prompt),
        model={"name_or_path": str(model_name_or_path), "fingerprint": fingerprint},
        warnings=warnings,
    )
    metrics = {"protocol": card, **episode_metrics(records), "reused_episodes": reused}
    (output_dir / METRICS_FILE).write_text(json.dumps(metrics, indent=2) + "\n")
    report_settings = {**run, "episodes": len(plan), "repeats": settings.repeats, "seed_offset": settings.seed_offset}
    write_report(output_dir, metrics, records, report_settings)
    return metrics


def _play(pool, todo: list[tuple], generator, settings: EpisodeSettings, output_dir: Path, records: list) -> None:
    """Play ``todo`` ((task, seed, repeat) each), pass by pass (the sampler seeded with seed + repeat), in batches
    of the generator's batch_size; append each batch's lines to episodes.jsonl and to ``records``."""
    from tqdm import tqdm

    from r1_gui.agent.loop import play_episodes

    config = generator.config
    policy, processor = GeneratorPolicy(generator), generator.processor
    decode = lambda ids: processor.tokenizer.decode(ids, skip_special_tokens=True)  # noqa: E731
    shown = {True: 0, False: 0}
    for row in records:
        shown[row["success"]] += bool(row.get("picture"))
    path = output_dir / EPISODES_FILE
    with RecordWriter(path) as writer, tqdm(total=len(todo), desc="episodes", unit="episode") as bar:
        for repeat in sorted({reset[2] for reset in todo}):
            generator.reseed(config.seed + repeat)
            this_pass = [(task, seed) for task, seed, pass_ in todo if pass_ == repeat]
            for start in range(0, len(this_pass), config.batch_size):
                batch = this_pass[start : start + config.batch_size]
                played = play_episodes(
                    pool, batch, policy, processor, max_turns=settings.max_turns,
                    history_images=settings.history_images, decode=decode, system=config.system_prompt,
                )  # fmt: skip
                lines = []
                for episode in played:
                    picture = None
                    if shown[episode.success] < settings.pictures:
                        shown[episode.success] += 1
                        key = episode_key(episode.task, episode.seed, repeat)
                        name = f"{'success' if episode.success else 'failure'}_{key}"
                        picture = save_picture(episode, output_dir / PICTURES_DIR / f"{_safe(name)}.png")
                        picture = str(Path(picture).relative_to(output_dir))
                    lines.append(episode_record(episode, picture, repeat))
                writer.write(lines)
                records += lines
                bar.update(len(batch))
                bar.set_postfix(success=f"{sum(r['success'] for r in records) / len(records):.2f}")


def _safe(name: str) -> str:
    import re

    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:100]
