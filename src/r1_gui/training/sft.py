"""Supervised fine-tuning (the warm start before GRPO) of a GUI agent on builder datasets, with TRL's SFTTrainer.

    # 8 GPUs, Qwen2.5-VL-3B taught the think_answer format before GRPO (no SFT recipe ships for it; these flags
    # are the whole setting, every other field keeps its default):
    torchrun --nproc_per_node 8 src/r1_gui/sft.py --model_name_or_path Qwen/Qwen2.5-VL-3B-Instruct \\
        --dtype bfloat16 --bf16 true --prompt_style think_answer --learning_rate 1e-5 \\
        --dataset_name data/aitw-sft --output_dir runs/qwen25vl3b-sft
    # CPU, a tiny local model:
    python src/r1_gui/sft.py --config local_scripts/tiny_cpu_sft.yaml

A model without GUI training that meets GRPO with a format reward learns the format and nothing else (format reward
up, accuracy at zero); a short SFT in the very prompt style and action format GRPO will use is the usual cure.
The loss covers only the assistant's answer (the plan and the action), never the prompt or the screenshot.
Arguments: `GUISFTScriptArguments` (r1_gui.training.flags: data and prompts; with --env, the episodes), every
`trl.SFTConfig` field and every `trl.ModelConfig` field.

The same trainer learns from turns instead of dataset rows (`train_turns`): (context, answer ids) pairs, each context
tokenized as the agent loop shows it, as in a warm start on an environment expert's episodes (`r1-gui-sft --env ID`,
`r1_gui.multi_turn.warm_start`) and the multi-turn demos' sight and SFT stages; the demos' stop at a greedy success
is a callback (`StopAtSuccess`).
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from transformers import TrainerCallback
from trl import ModelConfig, SFTConfig, SFTTrainer

from r1_gui.cli_errors import user_errors
from r1_gui.training.args import (
    CheckpointingUnderItsNewName,
    GUIModelConfig,
    arguments_from,
    parse_arguments,
)
from r1_gui.training.data import load_training_rows
from r1_gui.training.flags import GUIDataArguments, GUISFTScriptArguments, TrainingRunFlags
from r1_gui.training.model import load_training_model, load_training_processor, model_and_coordinates, trainer_inputs
from r1_gui.training.resume import ResumesCheckpoints, interrupt_keeps_checkpoints, resolve_resume
from r1_gui.training.trainer import train_and_save

logger = logging.getLogger("r1_gui.sft")  # the command's name, as its log lines always said

SFT_COLUMNS = ("image", "problem", "solution")


class GUISFTTrainer(ResumesCheckpoints, SFTTrainer):
    """`trl.SFTTrainer`, resuming as `r1_gui.training.resume.ResumesCheckpoints` says. With ``step_batches`` (SFT on
    turns, `train_turns`), each step's batch is the rows that batch sampler names, not trl's shuffled epochs; nothing
    else differs."""

    def __init__(self, *args, step_batches=None, **kwargs):
        self.step_batches = step_batches
        super().__init__(*args, **kwargs)

    def get_train_dataloader(self):
        if self.step_batches is None:
            return super().get_train_dataloader()
        from torch.utils.data import DataLoader

        loader = DataLoader(self.train_dataset, batch_sampler=self.step_batches, collate_fn=self.data_collator)
        return self.accelerator.prepare(loader)


@dataclass
class GUISFTConfig(CheckpointingUnderItsNewName, TrainingRunFlags, SFTConfig):
    """trl.SFTConfig under its own --help heading, with r1_gui's fields (`r1_gui.training.flags.TrainingRunFlags`)."""

    _argument_group_name = "trl.SFTConfig: SFT and training (every transformers.TrainingArguments field too)"


SFT_ARGUMENTS = (GUISFTScriptArguments, GUISFTConfig, GUIModelConfig)


def parse_sft_arguments(argv: list[str] | None = None):
    """(data arguments, SFT config, model config) from a YAML recipe and the command line."""
    return parse_arguments(SFT_ARGUMENTS, argv)


def sft_arguments(**values):
    """(data arguments, SFT config, model config) from Python values named as the flags are (`arguments_from`)."""
    return arguments_from(SFT_ARGUMENTS, values)


def add_sft_columns(dataset, prompt_style: str, coordinates: str, system_prompt: str | None = None):
    """prompt (as GRPO and evaluation build it), completion (the target answer in the same style and coordinates),
    images, and the chat template kwargs that open Aguvis's planning channel."""
    import json

    from r1_gui.actions import Action, extract_action
    from r1_gui.prompts import build_prompt, build_target, chat_template_kwargs

    template_kwargs = chat_template_kwargs(prompt_style)

    def columns(row):
        if row.get("action_json"):
            action = Action.from_dict(json.loads(row["action_json"]))
        else:
            action = extract_action(row["solution"], coordinates="normalized")
        if action is None:
            raise ValueError(f"row {row.get('id')!r}: its solution {row['solution']!r} does not parse")
        screen_size = tuple(row["screen_size"])
        return {
            "prompt": build_prompt(row["problem"], prompt_style, coordinates, screen_size, system_prompt),
            "completion": build_target(action, row.get("thought"), prompt_style, coordinates, screen_size),
            "images": [row["image"]],
            "chat_template_kwargs": template_kwargs,
        }

    return dataset.map(columns, desc=f"building {prompt_style} SFT targets")


def main(script_args: GUIDataArguments, training_args: SFTConfig, model_args: ModelConfig) -> None:
    """SFT, holding the output folder (one run per folder: r1_gui.output_lock)."""
    from r1_gui.output_lock import output_folder_lock

    with output_folder_lock(training_args.output_dir):
        train_sft(script_args, training_args, model_args)


def train_sft(script_args: GUIDataArguments, training_args: SFTConfig, model_args: ModelConfig) -> None:
    import datasets

    from r1_gui.processing import pixel_bounds, resize_factor
    from r1_gui.training.data import add_model_columns
    from r1_gui.training.progress import show_step_lines

    # 1. Settings and data, checked before the model is loaded; their errors are the user's (one line from the CLI).
    with user_errors():
        model_type, coordinates = model_and_coordinates(model_args, script_args)
        resume = resolve_resume(training_args.resume_from_checkpoint, training_args.output_dir)
        dataset = load_training_rows(script_args, SFT_COLUMNS)

    # 2. Processor, prompts and targets.
    processor = load_training_processor(model_args, script_args)
    dataset = add_model_columns(
        dataset, script_args.prompt_style, coordinates, pixel_bounds(processor), factor=resize_factor(processor)
    )
    dataset = add_sft_columns(dataset, script_args.prompt_style, coordinates, script_args.system_prompt)
    dataset = dataset.select_columns(["prompt", "completion", "images", "chat_template_kwargs"])
    dataset = dataset.cast_column("images", datasets.Sequence(datasets.Image()))

    # 3. Model. A VLM prompt must never be truncated (its image tokens would no longer match the image).
    training_args.max_length = None
    training_args.completion_only_loss = True
    trains_on = f"{len(dataset)} rows of {script_args.dataset_name}"

    # 4. Train and save.
    model = load_training_model("SFT", model_args, script_args, model_type, coordinates, trains_on, logger)
    trainer = GUISFTTrainer(**trainer_inputs(model, training_args, dataset, processor, model_args))
    show_step_lines(trainer)  # one short line per logged step instead of the metrics dict
    train_and_save(trainer, resume, logger)


# -- SFT on turns ------------------------------------------------------------------------------------------------------


def answer_batch(examples: Sequence[tuple], pad_id: int, image_pad: int) -> dict:
    """One padded batch of (context, answer ids) pairs, each context as the agent loop tokenizes a turn (its
    `context_ids`, `pixel_values`, `image_grid_thw`: `r1_gui.agent.loop.TurnInput`): input_ids, attention_mask,
    labels (-100 except on the answer), mm_token_type_ids, and the screenshots' pixel values and grids."""
    import torch

    sequences = [context.context_ids + answer for context, answer in examples]
    width = max(len(sequence) for sequence in sequences)
    ids = torch.tensor([sequence + [pad_id] * (width - len(sequence)) for sequence in sequences])
    labels = torch.tensor(
        [[-100] * len(c.context_ids) + a + [-100] * (width - len(c.context_ids) - len(a)) for c, a in examples]
    )
    batch = {
        "input_ids": ids,
        "attention_mask": torch.tensor([[1] * len(s) + [0] * (width - len(s)) for s in sequences]),
        "labels": labels,
        "mm_token_type_ids": (ids == image_pad).long(),
    }
    with_pixels = [context for context, _ in examples if context.pixel_values is not None]
    if with_pixels:
        batch["pixel_values"] = torch.cat([context.pixel_values for context in with_pixels])
        batch["image_grid_thw"] = torch.cat([context.image_grid_thw for context in with_pixels])
    return batch


class Turns:
    """A fixed set of (context, answer ids) pairs (an expert's episodes' turns). Each step trains on `batch_size` of
    them drawn by ``random.Random(seed).sample``, steps drawn independently (a turn may come back a step later): the
    draw the demos' warm starts were tuned with."""

    def __init__(self, examples: Sequence[tuple]):
        if not examples:
            raise ValueError("no turns to train on")
        self.examples = list(examples)

    def __len__(self) -> int:
        return len(self.examples)

    def batches(self, steps: int, batch_size: int, seed: int) -> Iterator[list[int]]:
        rng = random.Random(seed)
        for _ in range(steps):
            yield rng.sample(range(len(self.examples)), min(batch_size, len(self.examples)))

    def take(self, rows: list[int]) -> list[tuple]:
        return [self.examples[row] for row in rows]


class DrawnTurns:
    """Fresh (context, answer ids) pairs every step (synthetic pages), ``draw(count)`` called once a step in order.
    The next step's pairs are drawn in a second thread while a step trains (one thread draws them all, in order, so
    the batches are those of a plain loop's draws)."""

    def __init__(self, draw: Callable[[int], list[tuple]], steps: int, batch_size: int):
        self.draw, self.steps, self.batch_size = draw, steps, batch_size
        self._next: list | None = None
        self._thread: threading.Thread | None = None

    def __len__(self) -> int:
        return self.steps * self.batch_size

    def batches(self, steps: int, batch_size: int, seed: int) -> Iterator[list[int]]:
        for step in range(steps):
            yield list(range(step * batch_size, (step + 1) * batch_size))

    def take(self, rows: list[int]) -> list[tuple]:
        if self._thread is None:
            self._prefetch(len(rows))
        self._thread.join()
        examples, self._thread = self._next, None
        if isinstance(examples, BaseException):  # the draw's own error, raised where the batch was asked for
            raise examples
        if rows[-1] + 1 < len(self):
            self._prefetch(len(rows))
        return examples

    def _prefetch(self, count: int) -> None:
        def draw():
            try:
                self._next = self.draw(count)
            except BaseException as error:
                self._next = error

        self._thread = threading.Thread(target=draw, name="drawn-turns", daemon=True)
        self._thread.start()


class TurnCollator:
    """The trainer's collator for turns: the rows a step names (`{"turn": i}`) as one `answer_batch`."""

    def __init__(self, turns, pad_id: int, image_pad: int):
        self.turns, self.pad_id, self.image_pad = turns, pad_id, image_pad

    def __call__(self, rows: list[dict]) -> dict:
        return answer_batch(self.turns.take([row["turn"] for row in rows]), self.pad_id, self.image_pad)


class StepBatches:
    """A batch sampler: the rows of each of `steps` steps, as ``turns.batches`` draws them."""

    def __init__(self, turns, steps: int, batch_size: int, seed: int):
        self.turns, self.steps, self.batch_size, self.seed = turns, steps, batch_size, seed

    def __iter__(self):
        return self.turns.batches(self.steps, self.batch_size, self.seed)

    def __len__(self) -> int:
        return self.steps


class StopAtSuccess(TrainerCallback):
    """SFT's stop at a greedy success (the demos' warm starts): every `every` steps the model so far is saved to
    `folder` and ``check(folder, step)`` plays it (e.g. greedily, on some of its training episodes) and returns its
    "success_rate" and "turn_parse_rate"; training stops at the first check whose success reaches `share`. Once a
    check's answers parse (or it won an episode), the checks come every `every_parsed` steps: success waits on the
    answer's form, and once answers parse it can jump past the share within a few steps. `checks` holds each check's
    step and rates."""

    def __init__(self, check: Callable[[Path, int], dict], folder: Path, share: float, every: int, every_parsed: int):
        if every < 1 or every_parsed < 1:
            raise ValueError(f"checks come every 1 step or more, got every {every}, every_parsed {every_parsed}")
        self.check, self.folder, self.share = check, Path(folder), share
        self.every, self.every_parsed = every, every_parsed
        self.checks: list[dict] = []

    def on_step_end(self, args, state, control, model=None, processing_class=None, **kwargs):
        if state.global_step % self.every:
            return
        model.save_pretrained(self.folder)
        processing_class.save_pretrained(self.folder)
        played = self.check(self.folder, state.global_step)
        rates = {key: played.get(key) for key in ("success_rate", "turn_parse_rate")}
        self.checks.append({"step": state.global_step, **rates})
        logger.info("sft: step %d, greedy success %.3f", state.global_step, played["success_rate"])
        if played["success_rate"] >= self.share:
            control.should_training_stop = True
        elif played["success_rate"] > 0 or (played.get("turn_parse_rate") or 0) > 0:
            self.every = self.every_parsed


class AdjustThreads(TrainerCallback):
    """torch's threads set again before each step from the cores other processes leave free
    (`r1_gui.cli_errors.SharedCoreThreads`)."""

    def __init__(self, threads):
        self.threads = threads

    def on_step_begin(self, args, state, control, **kwargs):
        self.threads.adjust()


def train_turns(
    model, processor, turns, training_args: SFTConfig, *, callbacks=(), optimizer=None, threads=None, resume=None
):
    """SFT on turns (`Turns` or `DrawnTurns`) with `GUISFTTrainer`: `training_args.max_steps` steps of
    `per_device_train_batch_size` turns, the loss on the answers' tokens only, a line every 30 s; `threads`: torch
    threads adjusted each step to the cores left free (`shared_core_threads`), None: as they are. ``optimizer``:
    the trainer's (default: trl's from the arguments). ``resume``: a checkpoint folder to go on from (its steps'
    batches are drawn again and skipped). Returns the trainer, trained; only its checkpoints are saved."""
    import contextlib

    from datasets import Dataset

    from r1_gui.cli_errors import shared_core_threads
    from r1_gui.training.progress import show_stage_lines

    if training_args.max_steps < 1:
        raise ValueError(f"SFT on turns runs --max_steps steps, got {training_args.max_steps}")
    training_args.remove_unused_columns = False  # the rows are turn numbers; the collator makes the model's inputs
    training_args.dataset_kwargs = {"skip_prepare_dataset": True}
    steps, batch_size = training_args.max_steps, training_args.per_device_train_batch_size
    tokenizer = processor.tokenizer
    trainer = GUISFTTrainer(
        model=model,
        args=training_args,
        train_dataset=Dataset.from_dict({"turn": list(range(len(turns)))}),
        data_collator=TurnCollator(turns, tokenizer.pad_token_id, tokenizer.convert_tokens_to_ids("<|image_pad|>")),
        processing_class=processor,
        callbacks=list(callbacks),
        optimizers=(optimizer, None),
        step_batches=StepBatches(turns, steps, batch_size, training_args.seed),
    )
    with shared_core_threads(threads) if threads else contextlib.nullcontext() as adjusted:
        show_stage_lines(trainer, Path(training_args.output_dir).name, steps, adjusted)
        if adjusted is not None:
            trainer.add_callback(AdjustThreads(adjusted))
        with interrupt_keeps_checkpoints(training_args.output_dir):  # Ctrl-C: what was kept, how to go on
            trainer.train(resume_from_checkpoint=resume)
    return trainer


def step_losses(trainer) -> list[float]:
    """The loss of each step a trainer logged (every step, with logging_steps 1)."""
    return [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
