"""Playing episodes turn by turn, and laying each out as one GRPO row.

`play_episodes(envs, resets, policy, ...)` runs a batch of episodes in lock step: at each turn every live episode's
context (`r1_gui.multi_turn.context`) is tokenized, the policy answers them in one batch, and each answer (raw
model text: a mobile_use `<tool_call>` on the 999 grid, or any style `r1_gui.actions` parses) goes to its
environment's `step`. An episode ends when the environment terminates it (the model wrote `terminate`: at once),
when the environment truncates it, or after `max_turns` turns (truncated). Text that does not parse never raises:
the environment reports why, and the tool's response to that turn carries the message as the next observation.

`episode_row` lays an episode out as one row of the GRPO batch: the turns' answer tokens in order with the tool's
response tokens between them, and a mask that is 1 on answer tokens and 0 on tool-response tokens (trl's
`env_mask`, applied to the loss). The turns keep their own contexts for the loss pass
(`r1_gui.multi_turn.trainer`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from PIL import Image

from r1_gui.actions import Action
from r1_gui.multi_turn.context import History, observation_ids, tool_response, turn_messages


@dataclass
class TurnInput:
    """One turn's context, tokenized: the ids (image tokens expanded), its screenshots and their pixel tensors."""

    context_ids: list[int]
    images: list[Image.Image]
    pixel_values: torch.Tensor | None
    image_grid_thw: torch.Tensor | None


@dataclass
class Turn:
    context: TurnInput
    completion_ids: list[int]
    text: str
    expert_action: Action | None  # what the environment's expert would have done on this screen
    action: Action | None  # what the environment parsed from the text (None: it did not parse)
    error: str | None  # the environment's reason, when the action did nothing or did not parse
    logprobs: list[float] | None = None
    matched: bool | None = None  # ReplayEnv: the action matched the recorded one


@dataclass
class Episode:
    task: str
    seed: int
    history: History
    turns: list[Turn] = field(default_factory=list)
    terminated: bool = False  # the model wrote terminate (or the replay ended)
    truncated: bool = False  # ran out of turns
    success: bool = False
    progress: float | None = None  # ReplayEnv: share of recorded steps matched
    offsets: list[int] = field(default_factory=list)  # where each turn's answer starts in the GRPO row

    @property
    def done(self) -> bool:
        return self.terminated or self.truncated


Policy = Callable[[list[TurnInput]], tuple[list[list[int]], list[list[float]] | None]]


def tokenize_turn(processor, messages: list[dict], chat_template_kwargs: dict | None = None) -> TurnInput:
    """A turn's messages through the processor's chat template (the generation prompt opened)."""
    encoded = processor.apply_chat_template(
        [messages],
        tokenize=True,
        return_dict=True,
        add_generation_prompt=True,
        return_tensors="pt",
        **(chat_template_kwargs or {}),
    )
    images = [part["image"] for message in messages for part in message["content"] if part["type"] == "image"]
    return TurnInput(
        context_ids=encoded["input_ids"][0].tolist(),
        images=images,
        pixel_values=encoded.get("pixel_values"),
        image_grid_thw=encoded.get("image_grid_thw"),
    )


def reset_episode(env, task: str | None, seed: int) -> tuple[Episode, dict]:
    options = {"task": task} if task and task != "replay" else None
    observation, info = env.reset(seed=int(seed), options=options)
    history = History(str(observation["instruction"]), [Image.fromarray(observation["screenshot"])], [], [])
    return Episode(
        task=str(info.get("task", task)), seed=int(seed), history=history, progress=info.get("progress")
    ), info


def play_episodes(
    envs: Sequence[Any],
    resets: Sequence[tuple[str | None, int]],
    policy: Policy,
    processor,
    *,
    max_turns: int,
    history_images: int,
    decode: Callable[[list[int]], str],
    system: str | None = None,
    chat_template_kwargs: dict | None = None,
) -> list[Episode]:
    """Play one episode per (env, (task, seed)) to its end; see the module docstring."""
    if history_images < 1:
        raise ValueError(f"--history_images must be at least 1 (the current screenshot), got {history_images}")
    started = [reset_episode(env, task, seed) for env, (task, seed) in zip(envs, resets, strict=True)]
    episodes = [episode for episode, _ in started]
    infos = [info for _, info in started]
    for turn in range(max_turns):
        live = [i for i, episode in enumerate(episodes) if not episode.done]
        if not live:
            break
        inputs = [
            tokenize_turn(processor, turn_messages(episodes[i].history, history_images, system), chat_template_kwargs)
            for i in live
        ]
        answers, logprobs = policy(inputs)
        for position, i in enumerate(live):
            episode, ids = episodes[i], answers[position]
            text = decode(ids)
            observation, _, terminated, truncated, info = envs[i].step(text)
            episode.turns.append(
                Turn(
                    context=inputs[position],
                    completion_ids=list(ids),
                    text=text,
                    expert_action=infos[i].get("expert_action"),
                    action=info.get("action"),
                    error=info.get("error"),
                    logprobs=None if logprobs is None else list(logprobs[position]),
                    matched=info.get("matched"),
                )
            )
            episode.history.texts.append(text)
            episode.history.responses.append(tool_response(turn + 1, info.get("error")))
            episode.history.screenshots.append(Image.fromarray(np.asarray(observation["screenshot"])))
            episode.success = bool(info.get("success"))
            episode.progress = info.get("progress", episode.progress)
            episode.terminated = bool(terminated)
            episode.truncated = bool(truncated) or (not terminated and turn + 1 == max_turns)
            infos[i] = info
    return episodes


def episode_row(episode: Episode, tokenizer) -> dict:
    """One GRPO row: prompt ids (turn 0's context), completion ids, env_mask and logprobs; records each turn's
    offset in the row on the episode (`offsets`)."""
    completion, mask, logprobs, offsets = [], [], [], []
    for index, turn in enumerate(episode.turns):
        offsets.append(len(completion))
        completion += turn.completion_ids
        mask += [1] * len(turn.completion_ids)
        logprobs += turn.logprobs if turn.logprobs is not None else [0.0] * len(turn.completion_ids)
        if index + 1 < len(episode.turns):
            tool = observation_ids(tokenizer, index + 1, turn.error)
            completion += tool
            mask += [0] * len(tool)
            logprobs += [0.0] * len(tool)
    episode.offsets = offsets
    return {
        "prompt_ids": episode.turns[0].context.context_ids,
        "completion_ids": completion,
        "env_mask": mask,
        "logprobs": logprobs,
        "offsets": offsets,
    }
