"""The multi-turn demo: `python -m r1_gui.demo --multi_turn --output_dir runs/demo-mt [--seed 0] [--fast]`.

1. a random Qwen2-VL model built locally (r1_gui.tiny; `--arch` picks another architecture), taught to find a
   button on synthetic pages first where the config asks for it (`sight_steps`: 1000 in the web demo's defaults, 0
   in this one's);
2. an SFT warm start on expert episodes of PhoneEnv (`open_and_return`): every turn of the expert's episodes but
   its waits on a slow app's loading page (`sft_wait_share`), and a wait beside half of its answers on an app that
   opened at once (`sft_idle_wait_share`), played by the agent loop
   (`r1_gui.agent.loop.play_episodes`) with an expert policy, in exactly the context multi-turn GRPO shows
   (`r1_gui.agent.context`), answered in the mobile_use form (`build_target`);
3. eval/test_phone.py's evaluation on held-out seeds;
4. multi-turn GRPO from the warm start (`grpo_gui.py --env r1_gui/Phone-v0`), rewarded by task success; then the
   same evaluation again.

OUTPUT_DIR/report.json holds {"warm_start": metrics, "grpo": metrics, ...} (metrics as eval/test_phone.py writes
them, with `success_rate`), report.md the table, reward_curve.png and the episode pictures of both evaluations.

The stages run on any environment the config names (`env_id`, `env_kwargs`): the web demo
(`r1_gui.multi_turn.web_demo`, `python -m r1_gui.demo --web`) is this pipeline with its own config.
"""

from __future__ import annotations

import json
import logging
import os
import random
import resource
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from r1_gui.envs.contract import reset_plan
from r1_gui.envs.runtime.backend import PoolSettings
from r1_gui.envs.runtime.pool import DEFAULT_STEP_TIMEOUT
from r1_gui.evaluation.episodes.run import HELD_OUT_SEED_OFFSET as HELD_OUT_SEEDS  # training seeds start at 0
from r1_gui.training.progress import Stages

logger = logging.getLogger("r1_gui.demo")


@dataclass
class MultiTurnDemoConfig:
    """Everything the multi-turn demo does. Short tasks (two or three expert steps) keep a CPU run in minutes."""

    # one reason per setting; what was measured to choose each: docs/records/multi_turn_demo.md

    title: str = "Multi-turn demo: SFT warm start on expert episodes, then multi-turn GRPO (PhoneEnv)"
    env_id: str = "r1_gui/Phone-v0"
    env_kwargs: dict = field(default_factory=dict)
    env_step_timeout: float = DEFAULT_STEP_TIMEOUT
    # where the environments run (local or Ray)
    env_pool: PoolSettings = field(default_factory=PoolSettings)

    # open an app by name, wait if it loads slowly, go home, terminate: 3 or 4 actions, every decision readable from
    # the instruction and a coarse look at the screen
    tasks: tuple[str, ...] = ("open_and_return",)
    # one line instead of mobile_use's ~700-token tool schema
    system_prompt: str = "You are a GUI agent. Answer with Thought, Action and one mobile_use tool call."
    # 4.7 M parameters, as the single-step demo (the 0.23 M tiny one did not learn the app names)
    model_size: str = "small"
    # --arch; the settings were tuned (and the README's figures measured) on qwen2_vl
    arch: str = "qwen2_vl"
    # the built model's image (mean, std); None: the architecture's
    pixel_norm: tuple[float, float] | None = None
    # 224x448 screens -> 56x112 pixels: 8 image tokens per screenshot
    max_pixels: int = 12544
    history_images: int = 2
    # the expert's 4 actions and one more
    max_turns: int = 5
    # an expert answer is at most 47 tokens of the small tokenizer
    max_turn_tokens: int = 56
    # sight pretraining steps (synthetic button pages); 0 skips the stage
    sight_steps: int = 0
    sight_learning_rate: float = 5e-4
    sft_episodes: int = 200
    # past the seeds' jump to copying the app name (400 steps was not, at some seeds)
    sft_steps: int = 800
    # the share of the expert's wait turns SFT trains on (seeded; the episodes' other turns all): none, so the warm
    # start never sees that a loading page asks for a wait (keeping half the waiting episodes whole, it learned the
    # wait on most slow apps at 2 of 5 seeds, leaving GRPO 12 points and none)
    sft_wait_share: float = 0.0
    # the share of the turns right after an app opened at once that SFT also trains to wait, beside the expert's own
    # answer there: the warm start knows the wait but not when it is needed, and samples it for GRPO to learn when
    sft_idle_wait_share: float = 0.5
    # stop SFT at the first check whose greedy success on `sft_check_episodes` of its training episodes reaches this
    # share; checks every `sft_check_every` steps, then every `sft_check_every_parsed` once a check's answers parse
    # (the web demos' success can jump past the share within 5 steps of that); None: no checks
    sft_stop_success: float | None = None
    sft_check_every: int = 5
    sft_check_every_parsed: int = 1
    sft_check_episodes: int = 40
    sft_batch_size: int = 8
    sft_learning_rate: float = 5e-4
    # 2 resets x 8 episodes a step at temperature 0.7, rewarded by task success alone
    grpo_steps: int = 40
    grpo_resets_per_step: int = 2
    num_generations: int = 8
    grpo_learning_rate: float = 5e-5
    # --beta: the KL term's weight (to the warm start); 0 loads no reference model
    grpo_beta: float = 0.0
    # --average_last_steps: evaluate the mean of the last N steps' weights; 0: the last step's (at one seed of six,
    # the last step's greedy answers dropped terminate's status while its samples succeeded)
    grpo_average_last_steps: int = 5
    temperature: float = 0.7
    # the GRPO stages, each from the same warm start (--advantage_estimator): grpo, and gigpo's step-level credit
    estimators: tuple[str, ...] = ("grpo",)
    # each estimator's rollouts (--rollout_mode): sync, async (rollout workers, `async_*` below), or both from the
    # same warm start (the stage "grpo_async" beside "grpo"), each async stage compared with its sync twin, paired
    rollout_modes: tuple[str, ...] = ("sync",)
    async_workers: int = 2
    async_max_staleness: int = 1
    async_groups_ahead: int = 1
    reward_funcs: tuple[str, ...] = ("task_success",)
    reward_weights: tuple[float, ...] = (1.0,)
    # --reward_kwargs: a reward's parameters, by its name
    reward_kwargs: dict = field(default_factory=dict)
    eval_episodes: int = 100
    eval_batch_size: int = 20
    # one thread: the tiny model's ops are too small to share between threads
    torch_threads: int = 1
    # the sight and SFT loops' threads (no environment plays beside them)
    sight_sft_threads: int = 1

    @classmethod
    def fast(cls) -> MultiTurnDemoConfig:
        return cls(model_size="tiny", sft_episodes=8, sft_steps=2, grpo_steps=1, grpo_resets_per_step=1,
                   num_generations=2, eval_episodes=4, eval_batch_size=4, max_turns=4, max_turn_tokens=24,
                   grpo_average_last_steps=1)  # fmt: skip


def training_seeds(seed: int) -> int:
    """The first environment seed of a demo run's training episodes (SFT's, its checks', GRPO's --env_seed_offset):
    each run seed its own 10,000, all below the held-out seeds for run seeds 0 to 9."""
    return seed * 10_000


def expert_examples(config: MultiTurnDemoConfig, processor, seed: int, pool=None) -> list[tuple]:
    """(context TurnInput, answer ids) for every turn of the expert's episodes on training seeds
    (`r1_gui.multi_turn.expert.expert_turns`, with the config's wait shares), played in `pool` (a pool of the
    config's environment, left open) or in one of its own."""
    from r1_gui.envs.runtime.backend import lent_or_own
    from r1_gui.multi_turn.expert import expert_turns

    resets = reset_plan(config.tasks, config.sft_episodes, training_seeds(seed))
    with lent_or_own(pool, config.env_id, config.env_kwargs, config.env_step_timeout, config.env_pool) as pool:
        return expert_turns(
            pool, resets, processor, max_turns=config.max_turns, history_images=config.history_images,
            system=config.system_prompt, batch_size=config.eval_batch_size, wait_share=config.sft_wait_share,
            idle_wait_share=config.sft_idle_wait_share, seed=seed,
        )  # fmt: skip


def sight_examples(config: MultiTurnDemoConfig, processor, rng: random.Random, count: int) -> list[tuple]:
    """(context TurnInput, answer ids) for `count` fresh synthetic pages (`sight_page`), each answered as the expert
    answers a click: the mobile_use call on the centre of the button its instruction names, in the first turn's
    context (`turn_messages`) with that instruction."""
    from r1_gui.actions import Action
    from r1_gui.agent.context import History, turn_messages
    from r1_gui.agent.loop import tokenize_turn
    from r1_gui.multi_turn.expert import ExpertPolicy
    from r1_gui.synthetic.pages import PAGE_SIZE, sight_page

    answer = ExpertPolicy(processor.tokenizer).answer
    examples = []
    for _ in range(count):
        page, (x1, y1, x2, y2), instruction = sight_page(rng)
        context = tokenize_turn(
            processor, turn_messages(History(instruction, [page], [], []), config.history_images, config.system_prompt)
        )
        click = Action("click", x=(x1 + x2 + 1) / 2 / PAGE_SIZE[0], y=(y1 + y2 + 1) / 2 / PAGE_SIZE[1])
        examples.append((context, answer(click)))
    return examples


def _stage_model(config: MultiTurnDemoConfig, model_dir: Path, seed: int) -> tuple:
    """A training stage's start (sight, SFT): seeded torch, the processor and the model in float32."""
    import torch
    from transformers import AutoModelForImageTextToText

    from r1_gui.processing import CHAT_TEMPLATE, load_processor

    torch.manual_seed(seed)
    processor = load_processor(model_dir, min_pixels=3136, max_pixels=config.max_pixels, chat_template=CHAT_TEMPLATE)
    return processor, AutoModelForImageTextToText.from_pretrained(model_dir, dtype=torch.float32)


def train_stage(config: MultiTurnDemoConfig, model, processor, turns, out: Path, steps: int, learning_rate: float,
                seed: int, schedule: str, callbacks=()):  # fmt: skip
    """A stage's SFT with the one SFT trainer (`r1_gui.training.sft.train_turns`): `steps` steps of
    `sft_batch_size` turns on the CPU, the `schedule` of the learning rate, no gradient clipping, and torch's AdamW
    over every parameter (weight decay 0.01 on each, as the demos' settings were tuned with)."""
    import torch

    from r1_gui.training.sft import sft_arguments, train_turns

    _, arguments, _ = sft_arguments(
        output_dir=str(out), max_steps=steps, per_device_train_batch_size=config.sft_batch_size,
        learning_rate=learning_rate, lr_scheduler_type=schedule, max_grad_norm=0.0, logging_steps=1,
        save_strategy="no", report_to="none", use_cpu=True, bf16=False, activation_checkpointing=False, seed=seed,
    )  # fmt: skip
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    return train_turns(
        model, processor, turns, arguments, callbacks=callbacks, optimizer=optimizer, threads=config.sight_sft_threads
    )


def _save_stage(model, processor, out: Path, record: dict | None, weights: bool = True) -> Path:
    """A training stage's end: model + processor to `out` (unless `weights` is False: `out` holds them already), and
    its record (the losses) as OUT/<name>_losses.json."""
    if weights:
        model.save_pretrained(out)
        processor.save_pretrained(out)
    if record is not None:
        (out / f"{out.name}_losses.json").write_text(json.dumps(record))
    return out


def run_sight(config: MultiTurnDemoConfig, model_dir: Path, output_dir: Path, seed: int) -> Path:
    """Sight pretraining: `sight_steps` steps on fresh synthetic pages (`sight_examples`, drawn from a generator
    seeded by `seed`), the learning rate decaying linearly to 0; saves model + processor to OUTPUT_DIR/sight, which
    the SFT warm start then starts from."""
    from r1_gui.training.sft import DrawnTurns, step_losses

    processor, model = _stage_model(config, model_dir, seed)
    rng = random.Random(seed)
    pages = DrawnTurns(lambda count: sight_examples(config, processor, rng, count), config.sight_steps,
                       config.sft_batch_size)  # fmt: skip
    out = output_dir / "sight"
    trainer = train_stage(config, model, processor, pages, out, config.sight_steps, config.sight_learning_rate, seed,
                          "linear")  # fmt: skip
    return _save_stage(trainer.model, processor, out, {"losses": step_losses(trainer)})


def run_sft(config: MultiTurnDemoConfig, model_dir: Path, output_dir: Path, seed: int, pool=None) -> Path:
    """SFT on the expert's turns (`expert_examples`; the loss on the answer tokens only) at a constant learning rate;
    saves model + processor to OUTPUT_DIR/sft. With `sft_stop_success`, every `sft_check_every` steps the model so
    far plays the first `sft_check_episodes` of its training episodes greedily (as the held-out evaluation plays,
    into OUTPUT_DIR/sft_checks/step_N), and SFT stops at the first check whose success reaches that share; once a
    check's answers parse the checks come every `sft_check_every_parsed` steps (`StopAtSuccess`)."""
    from r1_gui.training.sft import StopAtSuccess, Turns, step_losses

    processor, model = _stage_model(config, model_dir, seed)
    turns = Turns(expert_examples(config, processor, seed, pool))
    out, callbacks = output_dir / "sft", []
    if config.sft_stop_success is not None:
        play = lambda folder, step: evaluate_model(  # noqa: E731
            config, folder, output_dir / "sft_checks" / f"step_{step}", pool, seed_offset=training_seeds(seed),
            episodes=config.sft_check_episodes,
        )  # fmt: skip
        callbacks.append(StopAtSuccess(play, out, config.sft_stop_success, config.sft_check_every,
                                       config.sft_check_every_parsed))  # fmt: skip
    trainer = train_stage(config, model, processor, turns, out, config.sft_steps, config.sft_learning_rate, seed,
                          "constant", callbacks)  # fmt: skip
    checks = callbacks[0].checks if callbacks else []
    steps = trainer.state.global_step
    record = {"examples": len(turns), "steps": steps, "losses": step_losses(trainer), "checks": checks}
    checked_last = bool(checks) and checks[-1]["step"] == steps  # that check saved these weights
    return _save_stage(trainer.model, processor, out, record, weights=not checked_last)


def evaluate_model(
    config: MultiTurnDemoConfig,
    model_path: Path,
    output_dir: Path,
    pool=None,
    seed_offset: int = HELD_OUT_SEEDS,
    episodes: int | None = None,
) -> dict:
    """eval/test_phone.py's evaluation of a stage's model (greedy): `eval_episodes` on the held-out seeds, or
    `episodes` from `seed_offset`."""
    from r1_gui.evaluation.episodes.run import EpisodeSettings, evaluate_episodes

    settings = EpisodeSettings(
        env_id=config.env_id, env_kwargs=config.env_kwargs, env_step_timeout=config.env_step_timeout,
        tasks=config.tasks, episodes=episodes or config.eval_episodes, max_turns=config.max_turns,
        history_images=config.history_images, seed_offset=seed_offset,
    )  # fmt: skip
    return evaluate_episodes(
        model_path, output_dir, settings, min_pixels=3136, max_pixels=config.max_pixels,
        max_new_tokens=config.max_turn_tokens, batch_size=config.eval_batch_size, system_prompt=config.system_prompt,
        dtype="float32", overwrite=True, pool=pool,
    )  # fmt: skip


def grpo_stages(config: MultiTurnDemoConfig) -> list[tuple[str, str, str]]:
    """(stage name, estimator, rollout mode) of each GRPO stage: every estimator in every rollout mode, sync first;
    an async stage is named after its estimator with "_async"."""
    return [
        (estimator if mode == "sync" else f"{estimator}_{mode}", estimator, mode)
        for estimator in config.estimators
        for mode in config.rollout_modes
    ]


def compared_stages(config: MultiTurnDemoConfig) -> list[tuple[str, str]]:
    """(A, B) stage pairs the report compares, paired: each async stage against its sync twin where both ran, else
    the second estimator against the first."""
    stages = [name for name, _, _ in grpo_stages(config)]
    if set(config.rollout_modes) == {"sync", "async"}:
        return [(estimator, f"{estimator}_async") for estimator in config.estimators]
    return [(stages[0], stages[1])] if len(stages) > 1 else []


def run_grpo(
    config: MultiTurnDemoConfig,
    warm_start: Path,
    output_dir: Path,
    seed: int,
    pool=None,
    estimator: str = "grpo",
    rollout_mode: str = "sync",
    name: str | None = None,
) -> Path:
    """Multi-turn GRPO from the warm start with ``--advantage_estimator estimator`` and ``--rollout_mode``, into
    OUTPUT_DIR/<name> (default: the estimator)."""
    from r1_gui.multi_turn.train import train_multi_turn

    out = output_dir / (name or estimator)
    train_multi_turn(*grpo_settings(config, warm_start, out, seed, estimator, rollout_mode), pool=pool)
    return out


def grpo_settings(
    config: MultiTurnDemoConfig,
    warm_start: Path,
    out: Path,
    seed: int,
    estimator: str = "grpo",
    rollout_mode: str = "sync",
) -> tuple:
    """The demo's GRPO stage's argument objects (`grpo_arguments`: `--env` on the config's environment and tasks)."""
    from r1_gui.agent.context import episode_token_budget
    from r1_gui.training.grpo import grpo_arguments

    return grpo_arguments(
        advantage_estimator=estimator,
        rollout_mode=rollout_mode, rollout_workers=config.async_workers, max_staleness=config.async_max_staleness,
        rollout_groups_ahead=config.async_groups_ahead,
        env_id=config.env_id, env_kwargs=dict(config.env_kwargs), env_step_timeout=config.env_step_timeout,
        env_tasks=list(config.tasks), env_seed_offset=training_seeds(seed),
        env_episodes=config.grpo_steps * config.grpo_resets_per_step,
        max_turns=config.max_turns, max_turn_tokens=config.max_turn_tokens, history_images=config.history_images,
        max_completion_length=episode_token_budget(config.max_turns, config.max_turn_tokens),
        model_name_or_path=str(warm_start), output_dir=str(out), dtype="float32",
        prompt_style="mobile_use", coordinates="grid999", min_pixels=3136, max_pixels=config.max_pixels,
        reward_funcs=list(config.reward_funcs), reward_weights=[float(w) for w in config.reward_weights],
        reward_kwargs=dict(config.reward_kwargs), num_generations=config.num_generations,
        per_device_train_batch_size=config.grpo_resets_per_step * config.num_generations,
        max_steps=config.grpo_steps, learning_rate=config.grpo_learning_rate, lr_scheduler_type="constant",
        temperature=config.temperature, beta=config.grpo_beta, average_last_steps=config.grpo_average_last_steps,
        loss_type="dapo", use_cpu=True, bf16=False, activation_checkpointing=False, report_to="none",
        logging_steps=1, save_strategy="no", seed=seed, system_prompt=config.system_prompt,
    )  # fmt: skip


def _rounded(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


ESTIMATOR_NAMES = {"grpo": "GRPO", "gigpo": "GiGPO"}


def stage_title(name: str) -> str:
    """A GRPO stage as the report names it: "GRPO", "GiGPO", "GRPO (async)"."""
    estimator, _, mode = name.partition("_")
    return ESTIMATOR_NAMES.get(estimator, estimator) + (f" ({mode})" if mode else "")


def write_report(output_dir: Path, report: dict) -> None:
    """report.md: the table of the warm start and each GRPO stage (overall and per task), the reward curve, GiGPO
    against GRPO where both ran, and links to every evaluation's episode pictures."""
    config = report["config"]
    stages = [name for name, _, _ in grpo_stages(replace(MultiTurnDemoConfig(), estimators=tuple(config["estimators"]),
                                                         rollout_modes=tuple(config.get("rollout_modes", ["sync"]))))]  # fmt: skip
    warm, after = report["warm_start"], [report[name] for name in stages]
    names = [stage_title(name) for name in stages]
    lines = [
        f"# {report['config']['title']}",
        "",
        f"Seed {report['seed']}, {report['seconds']['total']:.0f} s wall ({report['seconds']['cpu']:.0f} s CPU, load "
        f"average {report['load_average']['start'][0]} at the start), held-out seeds from {HELD_OUT_SEEDS}.",
        "",
    ]
    checks = report["sft"]["checks"]  # empty where SFT ran its fixed steps
    if checks:
        shown = ", ".join(f"{check['success_rate']:.3f} at step {check['step']}" for check in checks)
        lines += [
            f"SFT stopped after {report['sft']['steps']} steps; greedy success on training episodes: {shown}.",
            "",
        ]
    lines += [
        "| metric | warm start (SFT) | " + " | ".join(f"after {name} | change" for name in names) + " |",
        "|---|---|" + "---|---|" * len(names),
    ]
    clicks = any(part.get("click_hit_rate") is not None for part in (warm, *after))
    turns = ("mean_turns",) if len(names) > 1 else ()  # the multi-step demo's: how many actions an episode took
    for key in ("success_rate", "turn_parse_rate", "mean_steps_to_success", *turns) + (
        ("click_hit_rate",) if clicks else ()
    ):
        a, cells = warm.get(key), []
        for part in after:
            b = part.get(key)
            change = f"{b - a:+.3f}" if a is not None and b is not None else "-"
            cells.append(f"{_rounded(b)} | {change}")
        lines.append(f"| {key} | {_rounded(a)} | " + " | ".join(cells) + " |")
    columns = ("success_rate", "click_hit_rate") if clicks else ("success_rate",)
    afters = " | ".join(f"after {name}" for name in names)
    header = " | ".join(f"{key}: warm start | {afters}" for key in columns)
    lines += ["", f"| task | episodes | {header} |", "|---|---|" + "---|" * (len(names) + 1) * len(columns)]
    for task, before in warm["per_task"].items():
        rows = [part["per_task"].get(task, {}) for part in after]
        cells = " | ".join(" | ".join(_rounded(row.get(key)) for row in (before, *rows)) for key in columns)
        lines.append(f"| {task} | {before['episodes']} | {cells} |")
    lines += ["", "![rewards per step](reward_curve.png)", ""]
    for pair, comparison in report.get("comparisons", {}).items():
        from r1_gui.evaluation.stats.compare import comparison_text

        b, a = pair.split(" - ")
        lines += [f"## {stage_title(b)} against {stage_title(a)} (the same held-out episodes, paired)", "",
                  comparison_text(comparison), ""]  # fmt: skip
        wall = report["seconds"]
        if a in wall and b in wall:
            lines += [f"Training wall time: {stage_title(a)} {wall[a]:.0f} s, {stage_title(b)} {wall[b]:.0f} s.", ""]
    links = ", ".join(f"[after {title}](eval_{name}/report.md)" for name, title in zip(stages, names, strict=True))
    lines += [f"Episodes (pictures of successes and failures): [warm start](eval_warm_start/report.md), {links}.", ""]
    (output_dir / "report.md").write_text("\n".join(lines))


def _gain(before: dict, after: dict, key: str) -> float | None:
    return None if before[key] is None or after[key] is None else round(after[key] - before[key], 4)


def run_multi_turn_demo(output_dir: str | Path, seed: int = 0, config: MultiTurnDemoConfig | None = None) -> dict:
    import torch

    from r1_gui.envs.runtime.backend import make_pool
    from r1_gui.tiny import build_tiny_model
    from r1_gui.visualize import reward_curve

    config = config or MultiTurnDemoConfig()
    torch.set_num_threads(config.torch_threads)
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    load_start = [round(x, 2) for x in os.getloadavg()]  # 1, 5 and 15 minutes: other jobs on the same cores
    stages = Stages()
    with stages.stage("model", f"a random {config.arch} ({config.model_size}), built here"):
        model_dir = build_tiny_model(
            output_dir / "model", arch=config.arch, size=config.model_size, seed=seed, pixel_norm=config.pixel_norm
        )
    if config.sight_steps:
        with stages.stage("sight", f"{config.sight_steps} steps on synthetic button pages (where a button is)"):
            model_dir = run_sight(config, model_dir, output_dir, seed)
    # one pool of environments from the expert's episodes to the last evaluation: each stage reuses the workers the
    # stages before it started (a browser takes ~4.5 s to start; the web demo's stages started 46 of them, now 16)
    with make_pool(
        config.env_id, config.env_kwargs, step_timeout=config.env_step_timeout, settings=config.env_pool
    ) as pool:
        steps = f"{config.sft_steps} steps"
        if config.sft_stop_success is not None:
            steps = (f"up to {steps}, to greedy success {config.sft_stop_success} on {config.sft_check_episodes} of "
                     "them")  # fmt: skip
        with stages.stage("sft", f"{config.sft_episodes} expert episodes of {config.env_id}, then {steps}"):
            warm_start = run_sft(config, model_dir, output_dir, seed, pool)
        with stages.stage("eval_warm_start", f"{config.eval_episodes} held-out episodes"):
            warm = evaluate_model(config, warm_start, output_dir / "eval_warm_start", pool)
        trained, after = {}, {}
        for name, estimator, mode in grpo_stages(config):  # each from the same warm start, on the same episodes
            which = "" if estimator == "grpo" else f" (--advantage_estimator {estimator})"
            which += "" if mode == "sync" else f" (--rollout_mode {mode}, {config.async_workers} workers)"
            with stages.stage(name, f"{config.grpo_steps} multi-turn GRPO steps{which}"):
                trained[name] = run_grpo(config, warm_start, output_dir, seed, pool, estimator, mode, name)
            with stages.stage(f"eval_{name}", f"{config.eval_episodes} held-out episodes"):
                after[name] = evaluate_model(config, trained[name], output_dir / f"eval_{name}", pool)
    seconds = stages.finish()
    sft = json.loads((warm_start / "sft_losses.json").read_text())
    usage, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    seconds["cpu"] = round(usage.ru_utime + usage.ru_stime, 1)  # this process's CPU time (the machine is shared)
    # the ended child processes' (the environments' workers, and what they waited for, e.g. a browser's driver)
    seconds["cpu_children"] = round(children.ru_utime + children.ru_stime, 1)
    first = grpo_stages(config)[0][0]
    curves = {
        estimator: reward_curve(
            folder, output_dir / ("reward_curve.png" if estimator == first else f"reward_curve_{estimator}.png")
        )  # fmt: skip
        for estimator, folder in trained.items()
    }
    logged = lambda curve: [  # noqa: E731
        {key: value for key, value in entry.items() if key.startswith(("rewards/", "episodes/")) or key == "step"}
        for entry in curve
    ]
    report = {
        "seed": seed,
        "config": asdict(config),
        "sft": {key: value for key, value in sft.items() if key != "losses"},  # its steps, and its checks
        "warm_start": warm,
        **after,
        "success_rate_gain": _gain(warm, after[first], "success_rate"),
        "click_hit_rate_gain": _gain(warm, after[first], "click_hit_rate"),
        "seconds": seconds,
        "load_average": {"start": load_start, "end": [round(x, 2) for x in os.getloadavg()]},
        "reward_curve": logged(curves[first]),
    }
    if len(after) > 1:  # each stage's gain, its curve, and the compared stages, paired
        from r1_gui.evaluation.stats.compare import compare

        report["gains"] = {
            name: {key: _gain(warm, part, key) for key in ("success_rate", "click_hit_rate", "mean_turns")}
            for name, part in after.items()
        }
        report["reward_curves"] = {name: logged(curve) for name, curve in curves.items()}
        report["comparisons"] = {
            f"{b} - {a}": compare(output_dir / f"eval_{a}", output_dir / f"eval_{b}")
            for a, b in compared_stages(config)
        }
        report["comparison"] = next(iter(report["comparisons"].values()))  # the first pair's, as before
    (output_dir / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    write_report(output_dir, report)
    return report


ROLLOUT_MODES = {"sync": ("sync",), "async": ("async",), "both": ("sync", "async")}  # the demos' --rollout_mode


def main_multi_turn(
    output_dir: str,
    seed: int,
    fast: bool,
    arch: str | None = None,
    kind: type[MultiTurnDemoConfig] | None = None,
    rollout_mode: str = "sync",
) -> dict:
    """`python -m r1_gui.demo --multi_turn` (and `--web`, whose config `kind` is): run, then print the before/after
    table. `rollout_mode`: sync, async, or both (each GRPO stage both ways from the same warm start, compared)."""
    kind = kind or MultiTurnDemoConfig
    config = kind.fast() if fast else kind()
    # --arch, else the demo's own; --rollout_mode
    config = replace(config, arch=arch or config.arch, rollout_modes=ROLLOUT_MODES[rollout_mode])
    report = run_multi_turn_demo(output_dir, seed, config)
    print((Path(output_dir) / "report.md").read_text())
    return report
