"""The agent loop: episodes played turn by turn over a pool (`r1_gui.envs.runtime.backend`), the one loop that multi-turn GRPO
(`r1_gui.multi_turn.trainer`), episode evaluation (`r1_gui.evaluation.episodes.run`) and the demos' expert play share.

`play_episodes(pool, resets, policy, processor, ...)` runs a batch of episodes in lock step: each episode has its
own pool slot; all resets go out at once, then at each turn every live episode's context (`r1_gui.agent.context`)
is tokenized, the policy answers them in one batch, and every answer (raw model text: a mobile_use `<tool_call>` on
the 999 grid, or any style `r1_gui.actions` parses) goes to its environment's `step`, all at once, so a turn costs
the slowest environment's step, not their sum. An episode ends when the environment terminates it (the model wrote
`terminate`: at once), when the environment truncates it, after `max_turns` turns (truncated), or when its
environment failed (raised, hung past the pool's step timeout, or died): `env_failure` says why, the episode is
scored as a failure and the pool rebuilds the slot. Text that does not parse never raises: the environment reports
why, and the tool's response to that turn carries the message as the next observation.

A policy is `policy(inputs: list[TurnInput], infos: list[dict]) -> (answer ids per input, logprobs or None)`: the
turns' tokenized contexts and the environments' last `info` (the expert's action is there, for an expert policy).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from PIL import Image

from r1_gui.actions import Action
from r1_gui.agent.context import History, tool_response, turn_messages
from r1_gui.envs.contract import state_key


@dataclass
class TurnInput:
    """One turn's context: its chat messages, tokenized (the ids, image tokens expanded), its screenshots and their
    pixel tensors (a backend that renders the messages itself, vLLM, takes the messages and screenshots)."""

    context_ids: list[int]
    images: list[Image.Image]
    pixel_values: torch.Tensor | None
    image_grid_thw: torch.Tensor | None
    messages: list[dict] | None = None


@dataclass
class Turn:
    context: TurnInput
    completion_ids: list[int]
    text: str
    expert_action: Action | None  # what the environment's expert would have done on this screen
    action: Action | None  # what the environment parsed from the text (None: it did not parse)
    error: str | None  # the environment's reason, when the action did nothing or did not parse
    logprobs: list[float] | None = None
    matched: bool | None = None  # a recorded step was matched (the environment's optional `matched` info key)
    target_box: tuple[float, float, float, float] | None = None  # the element the expert would click on this screen
    reward: float = 0.0  # the environment's step reward for this turn's action (0 when the environment failed)
    state_key: str | None = None  # the state the turn was generated from (`r1_gui.envs.contract.state_key`)


@dataclass
class Episode:
    task: str
    seed: int
    history: History
    turns: list[Turn] = field(default_factory=list)
    terminated: bool = False  # the model wrote terminate (or the replay ended)
    truncated: bool = False  # ran out of turns
    success: bool = False
    progress: float | None = None  # share of the task done (the environment's optional `progress` info key)
    env_failure: str | None = None  # why the environment failed during this episode (the pool rebuilt it)

    @property
    def done(self) -> bool:
        return self.terminated or self.truncated or self.env_failure is not None


Policy = Callable[[list[TurnInput], list[dict]], tuple[list[list[int]], list[list[float]] | None]]


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
        messages=messages,
    )


def play_episodes(
    pool,
    resets: Sequence[tuple[str | None, int]],
    policy: Policy,
    processor,
    *,
    max_turns: int,
    history_images: int,
    decode: Callable[[list[int]], str],
    system: str | None = None,
    chat_template_kwargs: dict | None = None,
    slots: Sequence[int] | None = None,
) -> list[Episode]:
    """Play one episode per (task, seed) reset, episode i in pool slot `slots[i]` (default: slots 0 to n - 1, each
    episode where it can be in one that last played its task, `SlotPool.slots_for`), to its end; see the
    module docstring. Raises `r1_gui.envs.runtime.pool.EnvStartError` when an environment cannot be reset at all."""
    if history_images < 1:
        raise ValueError(f"--history_images must be at least 1 (the current screenshot), got {history_images}")
    slots = pool.slots_for([task for task, _ in resets]) if slots is None else list(slots)
    started = pool.reset(slots, [seed for _, seed in resets], [task for task, _ in resets])
    episodes, infos, states = [], [], []
    for (task, seed), outcome in zip(resets, started, strict=True):
        observation, info = outcome.result
        history = History(str(observation["instruction"]), [Image.fromarray(observation["screenshot"])], [], [])
        episodes.append(Episode(str(info.get("task", task)), int(seed), history, progress=info.get("progress")))
        infos.append(info)
        states.append(state_key(observation, info))
    for turn in range(max_turns):
        live = [i for i, episode in enumerate(episodes) if not episode.done]
        if not live:
            break
        inputs = [
            tokenize_turn(processor, turn_messages(episodes[i].history, history_images, system), chat_template_kwargs)
            for i in live
        ]
        answers, logprobs = policy(inputs, [infos[i] for i in live])
        texts = [decode(ids) for ids in answers]
        outcomes = pool.step([slots[i] for i in live], texts)
        for position, (i, outcome) in enumerate(zip(live, outcomes, strict=True)):
            episode, ids = episodes[i], answers[position]
            if not outcome.ok:
                info, observation, reward, terminated, truncated = (
                    {"error": f"environment failure: {outcome.failure}"},
                    None,
                    0.0,
                    False,
                    False,
                )
                episode.env_failure = outcome.failure
            else:
                observation, reward, terminated, truncated, info = outcome.result
            episode.turns.append(
                Turn(
                    context=inputs[position],
                    completion_ids=list(ids),
                    text=texts[position],
                    expert_action=infos[i].get("expert_action"),
                    action=info.get("action"),
                    error=info.get("error"),
                    logprobs=None if logprobs is None else list(logprobs[position]),
                    matched=info.get("matched"),
                    target_box=infos[i].get("target_box"),
                    reward=float(reward),
                    state_key=states[i],
                )
            )
            if observation is None:
                continue
            states[i] = state_key(observation, info)
            episode.history.texts.append(texts[position])
            episode.history.responses.append(tool_response(turn + 1, info.get("error")))
            episode.history.screenshots.append(Image.fromarray(np.asarray(observation["screenshot"])))
            episode.success = bool(info.get("success"))
            episode.progress = info.get("progress", episode.progress)
            episode.terminated = bool(terminated)
            episode.truncated = bool(truncated) or (not terminated and turn + 1 == max_turns)
            infos[i] = info
    return episodes
