"""The environment's expert as training data: its action as the answer tokens multi-turn GRPO would write, and the
SFT loss on such answers in their turns' contexts. The demos' SFT warm start (`r1_gui.multi_turn.demo`) and
multi-turn GRPO's expert term (`--expert_sft_weight`, `MultiTurnGRPOTrainer`) both train on them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from r1_gui.agent.loop import TurnInput


class ExpertPolicy:
    """The agent loop's policy that answers every turn with the environment's expert action, in the mobile_use form
    multi-turn GRPO writes (`build_target`), ended by <|im_end|>."""

    def __init__(self, tokenizer):
        self.tokenizer, self.end = tokenizer, tokenizer.convert_tokens_to_ids("<|im_end|>")

    def __call__(self, inputs, infos):
        return [self.answer(info["expert_action"]) for info in infos], None

    def answer(self, action) -> list[int]:
        from r1_gui.agent.context import GRID
        from r1_gui.prompts import build_target

        text = build_target(action, None, "mobile_use", GRID)[0]["content"]
        return self.tokenizer.encode(text, add_special_tokens=False) + [self.end]


def answer_loss(model, batch: list[tuple[TurnInput, list[int]]], pad_id: int, image_pad: int) -> torch.Tensor:
    """The mean negative log-likelihood of each answer's tokens after its context, over (context, answer ids)
    pairs: one padded forward pass, the loss on the answer tokens only, on the model's device."""
    sequences = [context.context_ids + answer for context, answer in batch]
    width = max(len(s) for s in sequences)
    ids = torch.tensor([s + [pad_id] * (width - len(s)) for s in sequences])
    labels = torch.tensor(
        [[-100] * len(c.context_ids) + a + [-100] * (width - len(c.context_ids) - len(a)) for c, a in batch]
    )
    mask = torch.tensor([[1] * len(s) + [0] * (width - len(s)) for s in sequences])
    device = next(model.parameters()).device
    inputs = {
        "input_ids": ids,
        "attention_mask": mask,
        "labels": labels,
        "mm_token_type_ids": (ids == image_pad).long(),
    }
    with_pixels = [c for c, _ in batch if c.pixel_values is not None]
    if with_pixels:
        inputs["pixel_values"] = torch.cat([c.pixel_values for c in with_pixels])
        inputs["image_grid_thw"] = torch.cat([c.image_grid_thw for c in with_pixels])
    return model(**{key: value.to(device) for key, value in inputs.items()}).loss
