"""What a training run shows on the console per logged step: one short line, not the whole metrics dict.

transformers prints every logged dict (trl's GRPO dict is some 1,500 characters, with None for metrics a step did
not produce) between the progress bar's redraws. r1_gui's commands show instead

    step 12/60 | reward 0.5312 | success 0.5312 | loss 0.0123 | 6.31 s/step

(reward: trl's weighted reward; success: the episodes' success rate, or the mean of a success reward; loss; the wall
time per step since the last line) and, at the end, one line with the run's time. Every metric stays where it was:
trainer_state.json's log_history, wandb or tensorboard (--report_to), and this module's logger at DEBUG.

    trainer = SFTTrainer(...)
    show_step_lines(trainer)   # r1_gui's GRPO trainers (GUIGRPOBase) call it themselves
"""

from __future__ import annotations

import json
import logging
import time
from contextlib import contextmanager

from transformers.trainer_callback import PrinterCallback, ProgressCallback, TrainerCallback

logger = logging.getLogger(__name__)

# The first of these that a step logged is shown as its "success": multi-turn episodes, then success rewards.
SUCCESS_KEYS = (
    "episodes/success_rate",
    "rewards/task_success/mean",
    "rewards/step_success/mean",
    "rewards/action_match/mean",
)


class Stages:
    """A command's stages, one after the other (the demos'): each says when it starts and how long it took, where
    the user sees it, and its wall seconds go in `seconds` (the report's)::

        stages = Stages(total=6)
        with stages.stage("sft", "SFT warm start (40 steps)"):   # [3/6] SFT warm start (40 steps)
            train()                                              # [3/6] done in 12 s
        report["seconds"] = stages.finish()                      # {"sft": 12.3, ..., "total": 80.1}

    Without ``total`` the lines are headed by the stage's name (`[sft] ...`)."""

    def __init__(self, total: int | None = None, say=print):
        self.total, self.say = total, say
        self.seconds: dict[str, float] = {}
        self.began = time.perf_counter()
        self.count = 0

    @contextmanager
    def stage(self, name: str, what: str):
        self.count += 1
        head = f"[{self.count}/{self.total}]" if self.total else f"[{name}]"
        self.say(f"{head} {what}", flush=True)
        start = time.perf_counter()
        yield
        self.seconds[name] = round(time.perf_counter() - start, 1)
        self.say(f"{head} done in {self.seconds[name]:.0f} s", flush=True)

    def finish(self) -> dict[str, float]:
        """Every stage's seconds and the total since the first began."""
        self.seconds["total"] = round(time.perf_counter() - self.began, 1)
        return self.seconds


class StageProgress:
    """The lines a long loop of a command prints while it runs (a demo's sight and SFT stages): where it is, its time
    per step and about how long is left, the first after at most ``every`` seconds and then every ``every`` seconds,
    so a loop of minutes never runs silent. `step(done, note)` once a step."""

    def __init__(self, name: str, total: int, every: float = 30.0, clock=time.monotonic, say=print):
        self.name, self.total, self.every, self.clock, self.say = name, total, every, clock, say
        self.began = self.last = clock()

    def step(self, done: int, note: str = "") -> None:
        now = self.clock()
        if now - self.last < self.every or done >= self.total:
            return
        self.last = now
        per_step = (now - self.began) / done
        left = per_step * (self.total - done)
        parts = [
            f"[{self.name}] step {done}/{self.total}",
            f"{per_step:.2f} s a step",
            note,
            f"about {left:.0f} s left",
        ]
        self.say(", ".join(part for part in parts if part), flush=True)


class StepLines:
    """The short line of each logged step (see the module docstring), timing the steps between two lines."""

    def __init__(self):
        self.since: tuple[float, int] | None = None
        self.began = 0  # the step training began at: a resumed run's checkpoint step

    def start(self, step: int) -> None:
        self.since = (time.perf_counter(), step)
        self.began = step

    def line(self, logs: dict, step: int, max_steps: int) -> str | None:
        logger.debug("step %d: %s", step, json.dumps(logs, default=str))
        if "train_runtime" in logs:  # the run's last line: the steps this run trained, not the checkpoint's too
            trained = step - self.began
            said = f"trained {trained or 'no'} step{'' if trained == 1 else 's'} in {logs['train_runtime']:.1f} s"
            if not self.began:
                return said
            return (
                f"{said} (resumed at step {self.began}; now at {step})"
                if trained
                else f"{said} (resumed at step {step}, the last)"
            )
        shown = [("reward", "reward"), ("success", next((k for k in SUCCESS_KEYS if k in logs), None))]
        shown += [("token accuracy", "mean_token_accuracy"), ("loss", "loss")]
        parts = [f"{label} {logs[key]:.4g}" for label, key in shown if isinstance(logs.get(key), (int, float))]
        if not parts:  # an evaluation or another kind of log: not a training step's
            return None
        now = time.perf_counter()
        if self.since is not None and step > self.since[1]:
            parts.append(f"{(now - self.since[0]) / (step - self.since[1]):.2f} s/step")
        self.since = (now, step)
        return " | ".join([f"step {step}/{max_steps}", *parts])


class StepLineProgress(ProgressCallback):
    """transformers' progress bar, with `StepLines` written above it instead of each logged dict."""

    def __init__(self):
        super().__init__()
        self.lines = StepLines()

    def on_train_begin(self, args, state, control, **kwargs):
        super().on_train_begin(args, state, control, **kwargs)
        self.lines.start(state.global_step)

    def on_log(self, args, state, control, logs=None, **kwargs):
        line = self.lines.line(logs or {}, state.global_step, state.max_steps)
        if line and state.is_world_process_zero and self.training_bar is not None:
            self.training_bar.write(line)


class StepLinePrinter(PrinterCallback):
    """With --disable_tqdm: `StepLines` printed instead of each logged dict."""

    def __init__(self):
        super().__init__()
        self.lines = StepLines()

    def on_train_begin(self, args, state, control, **kwargs):
        self.lines.start(state.global_step)

    def on_log(self, args, state, control, logs=None, **kwargs):
        line = self.lines.line(logs or {}, state.global_step, state.max_steps)
        if line and state.is_world_process_zero:
            print(line, flush=True)


def show_step_lines(trainer) -> None:
    """Replace the trainer's dict-printing progress callback (the bar, or the printer with --disable_tqdm) by the
    one that shows `StepLines`."""
    for printing, readable in ((ProgressCallback, StepLineProgress), (PrinterCallback, StepLinePrinter)):
        if trainer.pop_callback(printing) is not None:
            trainer.add_callback(readable)


class StageLines(TrainerCallback):
    """`StageProgress` lines for a trainer's steps (SFT on turns, `r1_gui.training.sft.train_turns`): where it is,
    its time per step, torch's threads where they follow the free cores (``threads``, a
    `r1_gui.cli_errors.SharedCoreThreads`), the last loss logged and about how long is left, every 30 s."""

    def __init__(self, name: str, total: int, threads=None):
        self.progress = StageProgress(name, total)
        self.threads = threads
        self.loss: float | None = None

    def on_log(self, args, state, control, logs=None, **kwargs):
        self.loss = (logs or {}).get("loss", self.loss)

    def on_step_end(self, args, state, control, **kwargs):
        said = [f"{self.threads.threads} torch threads" if self.threads is not None else ""]
        said.append("" if self.loss is None else f"loss {self.loss:.3f}")
        self.progress.step(state.global_step, ", ".join(part for part in said if part))


def show_stage_lines(trainer, name: str, total: int, threads=None) -> None:
    """Replace the trainer's progress bar and dict printer by `StageLines` (``threads``: as there): a long stage's
    line every 30 s."""
    for printing in (ProgressCallback, PrinterCallback):
        trainer.pop_callback(printing)
    trainer.add_callback(StageLines(name, total, threads))
