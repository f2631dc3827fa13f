"""trl's GRPOTrainer under r1_gui's names: `GRPOSeam` and trl's batch helpers.

Written against trl 1.16.0 (pyproject.toml pins it; tests/test_upstream_internals.py guards each internal used here).
trl offers the places r1_gui's trainers change only as private methods of GRPOTrainer. `GRPOSeam` overrides each of
them once, here, and hands it to a method with a public name and the same arguments; r1_gui's trainers override those
and call `super()` for trl's own behaviour. With nothing overridden a `GRPOSeam` is a `GRPOTrainer`.

| trl 1.16's private hook                        | r1_gui's name                 |
|------------------------------------------------|-------------------------------|
| `_calculate_rewards`                           | `score_completions`           |
| `_generate_and_score_completions`              | `generate_and_score`          |
| `shuffle_sequence_dict` inside `_prepare_inputs` | `shuffle_generation_batch`  |
| `_compute_loss`                                | `policy_loss`                 |
| `_get_per_token_logps_and_entropies`           | `token_logps_and_entropies`   |
| `_generate_single_turn`                        | `generate_turn`               |

and its private attributes: `_metrics` (`record_metric`), `_tokenizer` (`text_tokenizer`), `_dist`
(`weight_sharding`), `_entropy_bonus_enabled` (`entropy_bonus_enabled`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import torch
from trl import GRPOTrainer
from trl.trainer import grpo_trainer as trl_grpo_module
from trl.trainer.utils import pad, shuffle_sequence_dict, split_pixel_values_by_grid, unsplit_pixel_values_by_grid


class GRPOSeam(GRPOTrainer):
    """`trl.GRPOTrainer` with its private hooks and attributes under public names (see the module docstring). It
    changes nothing: each hook's default is trl's own."""

    # -- trl's private hooks, each handed to its r1_gui name ------------------------------------------------------
    def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
        return self.score_completions(inputs, prompts, completions, completion_ids_list)

    def _generate_and_score_completions(self, inputs):
        return self.generate_and_score(inputs)

    def _prepare_inputs(self, generation_batch):
        # trl has no hook for how it shuffles the generation batch before cutting it into micro-batches; its
        # module-level function is replaced for the duration of the call (trl looks it up there each time)
        with _module_function_replaced(trl_grpo_module, "shuffle_sequence_dict", self.shuffle_generation_batch):
            return super()._prepare_inputs(generation_batch)

    def _compute_loss(self, model, inputs):
        return self.policy_loss(model, inputs)

    def _get_per_token_logps_and_entropies(self, model, input_ids, attention_mask, logits_to_keep, *args, **kwargs):
        return self.token_logps_and_entropies(model, input_ids, attention_mask, logits_to_keep, *args, **kwargs)

    def _generate_single_turn(self, prompt_ids, images, multimodal_fields, num_generations, *args, **kwargs):
        return self.generate_turn(prompt_ids, images, multimodal_fields, num_generations, *args, **kwargs)

    # -- the r1_gui names: trl's behaviour unless a trainer overrides them ----------------------------------------
    def score_completions(self, inputs, prompts, completions, completion_ids_list) -> torch.Tensor:
        """Every reward function on this process's completions, gathered over the processes: a (completions of
        every process, reward functions) tensor, NaN where a function returned None."""
        return super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)

    def generate_and_score(self, inputs: list[dict]) -> dict:
        """The generation batch: completions generated for this process's rows, scored, their advantages (one per
        row, this process's slice of the group-normalised ones) and old log-probs, as trl's batch dict."""
        return super()._generate_and_score_completions(inputs)

    def shuffle_generation_batch(self, batch: dict) -> dict:
        """The generation batch (pixel values split per row) in a random order before it is cut into the loss pass's
        micro-batches: trl shuffles row by row."""
        return shuffle_sequence_dict(batch)

    def policy_loss(self, model, inputs: dict) -> torch.Tensor:
        """trl's GRPO loss of one micro-batch (the log-prob pass, the clipped objective, its metrics)."""
        return super()._compute_loss(model, inputs)

    def token_logps_and_entropies(self, model, input_ids, attention_mask, logits_to_keep, *args, **kwargs):
        """(per-token log-probs, entropies or None, aux loss or None) of the last ``logits_to_keep`` tokens of
        each row; the arguments after ``logits_to_keep`` are trl's (batch_size, compute_entropy, compute_aux_loss,
        then the model's image inputs by keyword)."""
        return super()._get_per_token_logps_and_entropies(
            model, input_ids, attention_mask, logits_to_keep, *args, **kwargs
        )

    def generate_turn(self, prompt_ids, images, multimodal_fields, num_generations, *args, **kwargs):
        """One round of generation from token ids, by trl's backend (HF generate or vLLM): (completion ids per
        prompt and generation, the sampler's log-probs or None)."""
        return super()._generate_single_turn(prompt_ids, images, multimodal_fields, num_generations, *args, **kwargs)

    # -- trl's private attributes -----------------------------------------------------------------------------------
    def record_metric(self, mode: str, name: str, value: float) -> None:
        """Add ``value`` to metric ``name`` for the next log ("train" or "eval"); trl logs each metric's mean over the
        values recorded since the last log."""
        self._metrics[mode][name].append(value)

    @property
    def text_tokenizer(self):
        """The tokenizer of the processing class (the processor's, or the class itself for a text model)."""
        return self._tokenizer

    @property
    def weight_sharding(self) -> str | None:
        """How the weights are sharded over the processes, "DeepSpeed ZeRO-3" or "FSDP" (gathered for every
        generation); None when they are not."""
        return "DeepSpeed ZeRO-3" if self._dist.is_zero3 else "FSDP" if self._dist.is_fsdp else None

    @property
    def entropy_bonus_enabled(self) -> bool:
        """Whether the loss carries an entropy bonus (`entropy_coef` or the adaptive entropy), which acts on every
        completion."""
        return self._entropy_bonus_enabled


def pad_sequences(tensors: list[torch.Tensor], padding_value: int, padding_side: str) -> torch.Tensor:
    """The 1-D tensors stacked into one, padded to the longest on ``padding_side`` ("left" or "right"), as trl pads."""
    return pad(tensors, padding_value=padding_value, padding_side=padding_side)


def split_images_by_row(batch: dict) -> dict:
    """trl's batch with `pixel_values` as a list of one tensor per row (split by `image_grid_thw` and `num_images`);
    unchanged where it holds no such layout."""
    return split_pixel_values_by_grid(batch)


def join_images(batch: dict) -> dict:
    """The inverse of `split_images_by_row`: the rows' pixel values concatenated again."""
    return unsplit_pixel_values_by_grid(batch)


@contextlib.contextmanager
def _module_function_replaced(module, name: str, replacement: Callable) -> Iterator[None]:
    original = getattr(module, name)
    setattr(module, name, replacement)
    try:
        yield
    finally:
        setattr(module, name, original)
