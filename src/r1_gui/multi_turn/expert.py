"""The environment's expert as training data: its action as the answer tokens multi-turn GRPO would write, its
episodes' turns as (context, answer) pairs, and the SFT loss on such answers in their turns' contexts. The warm start
on expert episodes (`r1-gui-sft --env`, `r1_gui.multi_turn.warm_start`; the demos' SFT stage) and multi-turn GRPO's
expert term (`--expert_sft_weight`, `MultiTurnGRPOTrainer`) both train on them.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from itertools import pairwise
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
    pairs: one padded forward pass (`r1_gui.training.sft.answer_batch`), the loss on the answer tokens only, on the
    model's device."""
    from r1_gui.training.sft import answer_batch

    device = next(model.parameters()).device
    return model(**{key: value.to(device) for key, value in answer_batch(batch, pad_id, image_pad).items()}).loss


def expert_turns(
    pool,
    resets: Sequence[tuple[str | None, int]],
    processor,
    *,
    max_turns: int,
    history_images: int,
    system: str | None = None,
    batch_size: int = 20,
    wait_share: float = 1.0,
    idle_wait_share: float = 0.0,
    seed: int = 0,
) -> list[tuple]:
    """(context TurnInput, answer ids) for every turn of the expert's episodes of ``resets``, played `batch_size` at a
    time in `pool` by the agent loop, in exactly the context multi-turn GRPO shows: the expert's turns (each `wait`
    kept with probability `wait_share`, `turns_kept`) and, with probability `idle_wait_share`, a `wait` beside the
    expert's answer right after an app opened at once (`idle_waits`), each drawn from a generator seeded by `seed`."""
    from r1_gui.agent.loop import play_episodes

    decode = lambda ids: processor.tokenizer.decode(ids, skip_special_tokens=True)  # noqa: E731
    rng, idle_rng, examples = random.Random(f"keep_wait:{seed}"), random.Random(f"idle_wait:{seed}"), []
    expert = ExpertPolicy(processor.tokenizer)
    for start in range(0, len(resets), batch_size):
        episodes = play_episodes(
            pool, resets[start : start + batch_size], expert, processor, max_turns=max_turns,
            history_images=history_images, decode=decode, system=system,
        )  # fmt: skip
        examples += [(turn.context, turn.completion_ids) for turn in turns_kept(episodes, wait_share, rng)]
        if idle_wait_share:
            from r1_gui.envs.phone.expert import WAIT

            wait = expert.answer(WAIT)
            examples += [(context, wait) for context in idle_waits(episodes, idle_wait_share, idle_rng)]
    return examples


def turns_kept(episodes: list, share: float, rng: random.Random) -> list:
    """The expert's turns SFT trains on (`sft_wait_share`): every turn but a `wait`, and each wait if a draw of `rng`
    falls below `share` (one draw per wait, in order; none at share 1)."""
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"sft_wait_share={share}: the share of the expert's wait turns kept is between 0 and 1")
    return [
        turn
        for episode in episodes
        for turn in episode.turns
        if _kind(turn) != "wait" or share == 1.0 or rng.random() < share
    ]


def idle_waits(episodes: list, share: float, rng: random.Random) -> list:
    """The contexts SFT also trains to wait (`sft_idle_wait_share`): each turn right after an `open_app` turn whose
    own action is not a wait (the app opened at once), if a draw of `rng` falls below `share` (one draw per such
    turn, in order; none at share 0)."""
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"sft_idle_wait_share={share}: the share of idle turns trained to wait is between 0 and 1")
    if share == 0.0:
        return []
    return [
        turn.context
        for episode in episodes
        for before, turn in pairwise(episode.turns)
        if _kind(before) == "open_app" and _kind(turn) not in ("wait", None) and rng.random() < share
    ]


def _kind(turn) -> str | None:
    """A played turn's action type; None where its answer did not parse."""
    return None if turn.action is None else turn.action.type
