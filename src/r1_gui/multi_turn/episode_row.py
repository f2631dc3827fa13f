"""What the multi-turn rollout hands the loss: one `EpisodeRow` per episode, a typed record (as verl's
`AgentLoopOutput` is) instead of keys in trl's untyped batch dict.

A row is the episode's turns laid end to end: each turn's answer tokens, with the tool's response tokens between
them (masked: `env_mask` 0). `offsets[t]` is where turn t's answer starts. The rollout fills the ids and masks; with
`--advantage_estimator gigpo` the trainer then fills each turn's reward and advantage (`r1_gui.multi_turn.advantages`)
before it writes them onto the row's tokens (`token_advantages`), the one thing of the record trl's loss reads.
"""

from __future__ import annotations

from dataclasses import dataclass

from r1_gui.agent.context import observation_ids
from r1_gui.agent.loop import Episode, Turn


@dataclass
class EpisodeRow:
    episode: Episode
    prompt_ids: list[int]  # turn 0's context (trl's prompt; each turn is scored in its own context)
    completion_ids: list[int]  # the answers and the tool responses between them
    env_mask: list[int]  # 1 on answer tokens, 0 on tool-response tokens (trl multiplies it into the loss mask)
    logprobs: list[float]  # the sampler's log-probabilities (0 where it gave none, and on tool tokens)
    offsets: list[int]  # where each turn's answer starts in completion_ids
    # Filled by GiGPO (--advantage_estimator gigpo), per turn unless said otherwise:
    turn_rewards: list[float] | None = None  # the environment's step reward + the rewards' weighted per-turn values
    episode_advantage: float | None = None  # GRPO's group-normalised advantage of the whole episode (trl's)
    step_advantages: list[float] | None = None  # the discounted return normalised in the turn's anchor group
    turn_advantages: list[float] | None = None  # episode_advantage + omega * step_advantages
    # Filled by asynchronous rollouts (--rollout_mode async), per turn: the trainer's step minus the weights version
    # the turn was generated with (0: the current weights)
    turn_lags: list[int] | None = None

    @property
    def turns(self) -> list[Turn]:
        return self.episode.turns

    @property
    def answer_lengths(self) -> list[int]:
        return [len(turn.completion_ids) for turn in self.episode.turns]

    @property
    def state_keys(self) -> list[str | None]:
        return [turn.state_key for turn in self.episode.turns]


def episode_row(episode: Episode, tokenizer) -> EpisodeRow:
    """The episode as one GRPO row (see the module docstring)."""
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
    return EpisodeRow(episode, episode.turns[0].context.context_ids, completion, mask, logprobs, offsets)
