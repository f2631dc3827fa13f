"""The embedded default: the whole product on a CPU in minutes, with nothing downloaded.

    python -m r1_gui.demo --output_dir runs/demo [--seed 0]        # or: bash local_scripts/demo.sh
    python -m r1_gui.demo --output_dir runs/demo-fast --fast        # a few steps of each stage (the test suite's)
    python -m r1_gui.demo --output_dir runs/demo-q3 --arch qwen3_vl  # the same on a Qwen3-VL (settings tuned on qwen2_vl)
    python -m r1_gui.demo --multi_turn --output_dir runs/demo-mt     # whole PhoneEnv episodes (r1_gui.multi_turn.demo)
    python -m r1_gui.demo --web --output_dir runs/demo-web           # clicks on real web pages (r1_gui.multi_turn.web_demo)

1. synthetic phone episodes (r1_gui.synthetic), turned into train/test parquet by the real builder;
2. a random Qwen2-VL model built locally (r1_gui.tiny, the 4.7 M-parameter "small" size by default; --arch picks
   another architecture);
3. a short SFT warm start in the aguvis action format (r1_gui.training.sft), then evaluation on held-out episodes;
4. GRPO from the warm start (r1_gui.training.grpo) with the AITW action-match reward, the very function the evaluation
   scores with, then the same evaluation again.

It writes OUTPUT_DIR/report.json ({"warm_start": metrics, "grpo": metrics, ...}, metric names as in
eval/test_aitw.py), report.md, reward_curve.png (rewards per GRPO step) and every stage's folder, and prints the
before/after table. The held-out test episodes are never trained on.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from r1_gui.cli_errors import UserError, cli_main, command_parser, installed, on_interrupt, rerun_command
from r1_gui.flags import add_flags, flag
from r1_gui.output_lock import output_folder_lock
from r1_gui.paths import check_output_folder
from r1_gui.tiny import ARCHS

logger = logging.getLogger("r1_gui.demo")

SYSTEM_PROMPT = "You are a GUI agent. Output the next action."
# DemoConfig's fields that are the synthetic generator's settings, named as its keywords (r1_gui.synthetic.generate)
SYNTHETIC_SETTINGS = ("width", "height", "grid", "task_mix", "decimals", "apps")
HEADLINE = ("action_match_accuracy", "type_accuracy", "step_success", "param_accuracy", "parse_rate")


@dataclass
class DemoConfig:
    """Everything the demo does, in one place. The defaults are the tuned run the README reports."""

    # one reason per setting; what was measured to choose each: docs/records/demo.md

    # three synthetic tasks whose steps follow from the instruction and the previous actions
    episodes: int = 400
    width: int = 224
    height: int = 448
    grid: tuple[int, int] = (3, 3)
    apps: int = 12
    decimals: int = 1
    task_mix: tuple[str, ...] | None = ("go_back", "go_home", "open_app")
    test_size: float = 0.25
    # 4.7 M parameters (the 0.23 M tiny one never learned an app name or a wait)
    model_size: str = "small"
    # every setting here was tuned (and the README's figures measured) on qwen2_vl
    arch: str = "qwen2_vl"
    max_pixels: int = 50176
    # a short warm start that tells the prompts apart yet still answers some wrongly
    sft_steps: int = 60
    sft_batch_size: int = 16
    sft_learning_rate: float = 5e-4
    sft_lr_scheduler: str = "constant"
    # 16 prompts x 8 answers, temperature 0.5, lr 2e-5: every seed clears +10 by step 60
    grpo_steps: int = 60
    grpo_warmup_steps: int = 5
    grpo_prompts_per_step: int = 16
    num_generations: int = 8
    grpo_learning_rate: float = 2e-5
    temperature: float = 0.5
    beta: float = 0.0
    reward_funcs: tuple[str, ...] = ("step_success",)
    max_completion_length: int = 48
    # evaluation
    eval_batch_size: int = 16
    eval_max_samples: int | None = None

    @classmethod
    def fast(cls) -> DemoConfig:
        """A few steps of every stage: checks the pipeline and its artifacts, learns nothing."""
        return cls(
            episodes=12, sft_steps=3, grpo_steps=2, grpo_prompts_per_step=2, num_generations=2, eval_max_samples=8
        )


def check_rebuilt_folders(output_dir: Path) -> None:
    """Before any stage runs: raw/ and data/, which every run rebuilds (the synthetic writer's and the builder's
    overwrite), must hold only what those wrote; a user's own files there stop the demo, named, and nothing is
    written or removed."""
    from r1_gui.builder.writers import BUILD_FILES, BUILD_MARKER, files_not_written_by_us, some_names
    from r1_gui.synthetic import writer

    for name, marker, ours in (("raw", writer.MARKER, writer.OUTPUT_FILES), ("data", BUILD_MARKER, BUILD_FILES)):
        foreign = files_not_written_by_us(output_dir / name, marker, ours)
        if foreign:
            raise UserError(
                f"--output_dir {output_dir}: {output_dir / name} holds {some_names(foreign)}, which the demo did not write, and "
                "every run rebuilds that folder: move those files away or give another --output_dir (nothing was "
                "changed)"
            )


def build_data(config: DemoConfig, output_dir: Path, seed: int) -> dict:
    from r1_gui.builder import build
    from r1_gui.synthetic import generate

    settings = {name: getattr(config, name) for name in SYNTHETIC_SETTINGS}
    generate(output_dir / "raw", config.episodes, seed=seed, progress=False, overwrite=True, **settings)
    raw = output_dir / "raw"
    return build(
        [raw / "synthetic-l1.json"],
        raw / "images",
        output_dir / "data",
        test_size=config.test_size,
        seed=seed,
        overwrite=True,
        progress=False,
    )


def _training_settings(config: DemoConfig, output_dir: Path, model: Path, out: Path, seed: int) -> dict:
    """The settings SFT and GRPO share: the same prompt format, image budget and CPU settings for both stages."""
    return {
        "model_name_or_path": str(model), "dataset_name": str(output_dir / "data"), "output_dir": str(out),
        "system_prompt": SYSTEM_PROMPT, "prompt_style": "aguvis", "coordinates": "normalized",
        "max_pixels": config.max_pixels, "dtype": "float32", "bf16": False, "activation_checkpointing": False,
        "use_cpu": True, "report_to": "none", "save_strategy": "no", "seed": seed, "disable_tqdm": True,
    }  # fmt: skip


def run_sft(config: DemoConfig, output_dir: Path, seed: int) -> Path:
    from r1_gui.training.sft import main, sft_arguments

    out = output_dir / "sft"
    main(*sft_arguments(
        **_training_settings(config, output_dir, output_dir / "model", out, seed),
        max_steps=config.sft_steps, per_device_train_batch_size=config.sft_batch_size,
        learning_rate=config.sft_learning_rate, lr_scheduler_type=config.sft_lr_scheduler, warmup_steps=2,
        logging_steps=10,
    ))  # fmt: skip
    return out


def run_grpo(config: DemoConfig, output_dir: Path, warm_start: Path, seed: int) -> Path:
    from r1_gui.training.grpo import grpo_arguments, train_single_step

    out = output_dir / "grpo"
    train_single_step(*grpo_arguments(
        **_training_settings(config, output_dir, warm_start, out, seed),
        reward_funcs=list(config.reward_funcs), max_steps=config.grpo_steps, num_generations=config.num_generations,
        per_device_train_batch_size=config.grpo_prompts_per_step * config.num_generations,
        learning_rate=config.grpo_learning_rate, lr_scheduler_type="constant_with_warmup",
        warmup_steps=config.grpo_warmup_steps, temperature=config.temperature, beta=config.beta, loss_type="dapo",
        max_completion_length=config.max_completion_length, logging_steps=1, completions_table_steps=25,
    ))  # fmt: skip
    return out


def evaluate_model(config: DemoConfig, model: Path, output_dir: Path, name: str) -> dict:
    from r1_gui.evaluation import evaluate

    return evaluate(
        str(model),
        str(output_dir / "data"),
        "test",
        str(output_dir / name),
        batch_size=config.eval_batch_size,
        max_samples=config.eval_max_samples,
        max_new_tokens=config.max_completion_length,
        prompt_style="aguvis",
        system_prompt=SYSTEM_PROMPT,
        coordinates="normalized",
        max_pixels=config.max_pixels,
        gallery_size=8,
        overwrite=True,  # every stage before was just rebuilt: an earlier run's predictions never apply
    )


def comparison_table(warm: dict, grpo: dict) -> str:
    lines = ["| metric | warm start (SFT) | after GRPO | change |", "|---|---|---|---|"]
    for key in HEADLINE:
        change = 100 * (grpo[key] - warm[key])
        lines.append(f"| {key} | {100 * warm[key]:.1f} | {100 * grpo[key]:.1f} | {change:+.1f} |")
    return "\n".join(lines)


def per_type_table(warm: dict, grpo: dict) -> str:
    lines = ["| action type | samples | warm start match | GRPO match |", "|---|---|---|---|"]
    for kind, stats in warm["per_type"].items():
        after = grpo["per_type"].get(kind, {}).get("action_match_accuracy", 0.0)
        lines.append(
            f"| {kind} | {stats['num_samples']} | {100 * stats['action_match_accuracy']:.1f} | {100 * after:.1f} |"
        )
    return "\n".join(lines)


def write_report(output_dir: Path, report: dict) -> None:
    (output_dir / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    warm, grpo = report["warm_start"], report["grpo"]
    text = [
        "# r1_gui demo",
        "",
        f"Seed {report['seed']}; {report['data']['train']} training and {report['data']['test']} held-out steps of "
        f"synthetic phone episodes; a {report['model']['parameters'] / 1e6:.1f} M-parameter {report['model']['arch']} "
        "built locally. "
        f"Wall time {report['seconds']['total']:.0f} s.",
        "",
        "## Held-out metrics (percent)",
        "",
        comparison_table(warm, grpo),
        "",
        "## Action match per ground-truth action type",
        "",
        per_type_table(warm, grpo),
        "",
        "## GRPO rewards",
        "",
        "![rewards per step](reward_curve.png)",
        "",
        "Per-sample predictions, confusion matrices and galleries: `eval_warm_start/report.md`, `eval_grpo/report.md`.",
    ]
    (output_dir / "report.md").write_text("\n".join(text) + "\n")


def run_demo(output_dir: str | Path, seed: int = 0, config: DemoConfig | None = None) -> dict:
    """Run every stage into output_dir and return the report (also written as report.json / report.md)."""
    import torch

    from r1_gui.tiny import build_tiny_model

    config = config or DemoConfig()
    output_dir = Path(output_dir)
    check_rebuilt_folders(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    from r1_gui.training.progress import Stages

    stages = Stages(total=6)
    with stages.stage("data", f"synthetic episodes and the dataset builder ({config.episodes} episodes)"):
        build_report = build_data(config, output_dir, seed)
    with stages.stage("model", f"a {config.model_size} {config.arch} model, built locally"):
        build_tiny_model(output_dir / "model", config.arch, config.model_size, seed=seed)
    with stages.stage("sft", f"SFT warm start ({config.sft_steps} steps)"):
        warm_start = run_sft(config, output_dir, seed)
    with stages.stage("eval_warm_start", "evaluating the warm start on held-out episodes"):
        warm_metrics = evaluate_model(config, warm_start, output_dir, "eval_warm_start")
    with stages.stage("grpo", f"GRPO ({config.grpo_steps} steps, {config.num_generations} samples per prompt)"):
        grpo_dir = run_grpo(config, output_dir, warm_start, seed)
    with stages.stage("eval_grpo", "evaluating the GRPO model on the same held-out episodes"):
        grpo_metrics = evaluate_model(config, grpo_dir, output_dir, "eval_grpo")
        from r1_gui.visualize import reward_curve

        curve = reward_curve(grpo_dir, output_dir / "reward_curve.png")
    seconds = stages.finish()

    parameters = sum(p.numel() for p in _load_parameters(output_dir / "model"))
    report = {
        "seed": seed,
        "warm_start": warm_metrics,
        "grpo": grpo_metrics,
        "improvement": {key: grpo_metrics[key] - warm_metrics[key] for key in HEADLINE},
        "reward_curve": [
            {k: v for k, v in row.items() if k == "step" or k.startswith(("rewards/", "completions/parse"))}
            for row in curve
        ],
        "data": {"train": build_report["train"], "test": build_report["test"]},
        "model": {"size": config.model_size, "arch": config.arch, "parameters": parameters},
        "config": asdict(config),
        "seconds": seconds,
    }
    write_report(output_dir, report)
    return report


def _load_parameters(model_dir: Path):
    from safetensors import safe_open

    with safe_open(str(model_dir / "model.safetensors"), "pt") as weights:
        return [weights.get_tensor(name) for name in weights.keys()]  # noqa: SIM118


@dataclass
class DemoFlags:
    """The demo command's flags (each stage's settings are the demo's config, not flags)."""

    output_dir: str | None = flag(None, "Folder for every stage and the report.")
    seed: int = flag(0, "Seed of the data, the model and training.")
    fast: bool = flag(False, "A few steps of each stage (checks, learns nothing).")
    multi_turn: bool = flag(False, "The multi-turn demo on PhoneEnv episodes (r1_gui.multi_turn.demo).")
    web: bool = flag(
        False, "The web demo: click tasks on MiniWoB++ pages in headless Chromium (r1_gui.multi_turn.web_demo)."
    )
    multi_step: bool = flag(
        False,
        "With --web: tasks of 2-5 clicks in order, GRPO and GiGPO from one warm start (docs/records/web_demo.md).",
    )
    arch: str | None = flag(
        None,
        "The model's architecture (default: the demo's own, on which its settings were tuned: qwen2_vl; the web "
        "demo's qwen3_vl).",
        choices=ARCHS,
    )
    rollout_mode: str = flag(
        "sync",
        "With --multi_turn or --web: the GRPO stages' rollouts: sync, async (rollout workers, docs/guide/async.md), or "
        "both from the same warm start, each async stage compared with its sync twin.",
        choices=("sync", "async", "both"),
    )


def command_line() -> argparse.ArgumentParser:
    """The parser of the command line, built from the flags' declarations."""
    parser = command_parser(__doc__, prog="python -m r1_gui.demo")
    add_flags(parser, DemoFlags, ["output_dir", "seed", "fast"], required=["output_dir"])
    add_flags(parser.add_mutually_exclusive_group(), DemoFlags, ["multi_turn", "web"])
    add_flags(parser, DemoFlags, ["multi_step", "arch", "rollout_mode"])
    return parser


@cli_main
def main(argv: list[str] | None = None) -> dict:
    parser = command_line()
    args = parser.parse_args(argv)
    if args.rollout_mode != "sync" and not (args.multi_turn or args.web):
        parser.error("--rollout_mode trains the episode demos' GRPO stages: give --multi_turn or --web with it")
    if args.multi_step and not args.web:
        parser.error("--multi_step is a variant of the web demo: give --web --multi_step")
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    check_output_folder(args.output_dir)
    rebuilt = f"nothing a rerun uses (it rebuilds every stage in {args.output_dir})"
    with output_folder_lock(args.output_dir), on_interrupt(kept=lambda: rebuilt, resume=rerun_command):
        if args.multi_turn:
            from r1_gui.multi_turn.demo import main_multi_turn

            return main_multi_turn(args.output_dir, args.seed, args.fast, args.arch, rollout_mode=args.rollout_mode)
        if args.web:
            from r1_gui.multi_turn.web_demo import main_web

            return main_web(args.output_dir, args.seed, args.fast, args.arch, args.multi_step, args.rollout_mode)
        config = DemoConfig.fast() if args.fast else DemoConfig()
        config = replace(config, arch=args.arch or config.arch)
        report = run_demo(args.output_dir, args.seed, config)
    warm, grpo = report["warm_start"], report["grpo"]
    print()
    seconds, out = report["seconds"]["total"], Path(args.output_dir)
    print(f"Held-out synthetic episodes ({warm['num_samples']} steps), seed {args.seed}, {seconds:.0f} s:")
    print(comparison_table(warm, grpo))
    print(f"\nreport: {out / 'report.md'}; reward curve: {out / 'reward_curve.png'}")
    return report


cli = installed(main)  # the installed command (pyproject.toml's [project.scripts]): main, returning nothing


if __name__ == "__main__":
    main()
