"""`MultiTurnGRPOTrainer`: GRPO on whole episodes of an `r1_gui.envs` environment.

Written against trl 1.16.0. Why not trl's own tool loop (`environment_factory` + `max_tool_calling_iterations`):
that loop keeps one growing token sequence per rollout (every screenshot stays in the context, so
`--history_images` cannot drop old ones), it requires a chat template that renders tool calls (r1_gui's Aguvis
ChatML template does not), a malformed `<tool_call>` ends its loop instead of getting an error message back, and
after a tool result it always generates once more, so a `terminate` cannot end the episode at once. So the rollout
is trl's `rollout_func` hook, and generation inside it is trl's own `_generate_single_turn` (HF or vLLM). What
differs from `GUIGRPOTrainer`, and nothing else:

1. Rollout (`rollout_func`, `_rollout`): each prompt of the batch names an environment reset (task family and
   seed); trl's sampler repeats it `num_generations` times in a row, so a group holds whole episodes of the same
   reset. Each rollout plays its episode (`r1_gui.multi_turn.rollout.play_episodes`) and becomes one row: the turns'
   answer tokens with the tool's response tokens between them, and trl's `env_mask` (0 on those tool tokens), which
   trl multiplies into the loss mask.
2. Log-probabilities (`_get_per_token_logps_and_entropies`): a turn was generated from its own context (the
   instruction, the earlier turns as text, the last `history_images` screenshots), which is not a prefix of the
   row. Each turn's answer tokens are scored in that context (the parent's method, on one sequence per turn) and
   written back at the turn's place in the row; tool-response positions get 0 (they are masked). The rows of a
   pass are found by the `episode_index` column added in `_generate_and_score_completions` (trl shuffles and
   splits it with the other tensors) and read in `_compute_loss`.
3. Metrics (`_calculate_rewards`): the parent's, per task family (`rewards/<name>/<family>`) instead of per action
   type, plus `episodes/success_rate`, `episodes/turns`, `episodes/truncated_frac`, `episodes/turn_parse_rate`
   (the share of turns whose action parsed). The screenshot completions table does not apply (no image column).
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Sequence

import gymnasium
import torch
from accelerate.utils import gather_object
from trl import GRPOTrainer
from trl.trainer.utils import pad

from r1_gui.multi_turn.rollout import Episode, TurnInput, episode_row, play_episodes
from r1_gui.training.trainer import GUIGRPOTrainer, drop_rows_without_signal

logger = logging.getLogger(__name__)


def reset_prompt(task: str, seed: int) -> list[dict]:
    """A dataset row's prompt: the environment reset it stands for (the rollout builds the real context)."""
    return [{"role": "user", "content": json.dumps({"task": task, "seed": int(seed)})}]


def read_reset(prompt: list[dict]) -> tuple[str, int]:
    content = prompt[-1]["content"]
    if isinstance(content, list):
        content = next(part["text"] for part in content if part.get("type") == "text")
    reset = json.loads(content)
    return reset["task"], int(reset["seed"])


def multi_turn_rollout(prompts: list, trainer: MultiTurnGRPOTrainer) -> dict:
    """trl's `rollout_func(prompts, trainer)`: see `MultiTurnGRPOTrainer._rollout`."""
    return trainer._rollout(prompts)


class MultiTurnGRPOTrainer(GUIGRPOTrainer):
    """GUIGRPOTrainer on episodes; see the module docstring.

    Args (besides GUIGRPOTrainer's): env_id and env_kwargs (gymnasium.make), max_turns, history_images,
    max_turn_tokens (new tokens per turn), system (replaces the mobile_use system prompt).
    """

    def __init__(
        self,
        *args,
        env_id: str,
        env_kwargs: dict | None = None,
        max_turns: int = 12,
        history_images: int = 2,
        max_turn_tokens: int = 128,
        system: str | None = None,
        **kwargs,
    ):
        import r1_gui.envs  # noqa: F401  (registers the environments)

        kwargs.setdefault("prompt_style", "mobile_use")
        kwargs.update(rollout_func=multi_turn_rollout, dedupe_images=False, completions_table_steps=0)
        super().__init__(*args, **kwargs)
        self.env_id, self.env_kwargs = env_id, dict(env_kwargs or {})
        self.max_turns, self.history_images, self.max_turn_tokens = max_turns, history_images, max_turn_tokens
        self.system = system
        self._envs: list = []
        self._episodes: list[Episode] = []
        self._rows_in_pass: list[int] = []
        self._image_pad_id = self._tokenizer.convert_tokens_to_ids("<|image_pad|>")

    # -- 1. rollout -------------------------------------------------------------------------------------------
    def _environments(self, count: int) -> list:
        while len(self._envs) < count:
            self._envs.append(gymnasium.make(self.env_id, disable_env_checker=True, **self.env_kwargs))
        return self._envs[:count]

    def _rollout(self, prompts: list) -> dict:
        resets = [read_reset(prompt) for prompt in prompts]
        episodes = play_episodes(
            self._environments(len(resets)),
            resets,
            self._policy,
            self.processing_class,
            max_turns=self.max_turns,
            history_images=self.history_images,
            decode=lambda ids: self._tokenizer.decode(ids, skip_special_tokens=True),
            system=self.system,
            chat_template_kwargs=self.chat_template_kwargs,
        )
        rows = [episode_row(episode, self._tokenizer) for episode in episodes]
        self._episodes, self._rows_in_pass = episodes, list(range(len(episodes)))
        vllm = self.use_vllm
        return {
            "prompt_ids": [row["prompt_ids"] for row in rows],
            "completion_ids": [row["completion_ids"] for row in rows],
            "logprobs": [row["logprobs"] for row in rows] if vllm else None,
            "env_mask": [row["env_mask"] for row in rows],
            "episode": episodes,
            "family": [episode.task for episode in episodes],
        }

    def _policy(self, inputs: list[TurnInput]):
        """One turn of every live episode through trl's own generation (HF generate or vLLM)."""
        prompt_ids = [turn.context_ids for turn in inputs]
        fields = {}
        with_pixels = [turn for turn in inputs if turn.pixel_values is not None]
        if with_pixels:
            fields["pixel_values"] = torch.cat([turn.pixel_values for turn in with_pixels])
            fields["image_grid_thw"] = torch.cat([turn.image_grid_thw for turn in with_pixels])
            fields["mm_token_type_ids"] = [[int(t == self._image_pad_id) for t in ids] for ids in prompt_ids]
        images = [turn.images or None for turn in inputs]
        with self._turn_token_limit():
            return self._generate_single_turn(prompt_ids, images, fields, num_generations=1)

    @contextlib.contextmanager
    def _turn_token_limit(self):
        """Generation stops after max_turn_tokens new tokens per turn (trl's limit is max_completion_length)."""
        if self.use_vllm:
            saved = self.vllm_generation.max_completion_length
            self.vllm_generation.max_completion_length = self.max_turn_tokens
        else:
            saved = self.generation_config.max_new_tokens
            self.generation_config.max_new_tokens = self.max_turn_tokens
        try:
            yield
        finally:
            if self.use_vllm:
                self.vllm_generation.max_completion_length = saved
            else:
                self.generation_config.max_new_tokens = saved

    def _generate_and_score_completions(self, inputs):
        output = super()._generate_and_score_completions(inputs)
        output["episode_index"] = torch.arange(len(self._episodes), device=output["completion_ids"].device)
        return output

    def _compute_loss(self, model, inputs):
        if self.skip_no_signal and self.model.training:
            inputs = drop_rows_without_signal(inputs)  # the parent drops the same rows again: a no-op
        self._rows_in_pass = inputs["episode_index"].tolist()
        return super()._compute_loss(model, inputs)

    # -- 2. log-probabilities, each turn in its own context --------------------------------------------------
    def _get_per_token_logps_and_entropies(
        self,
        model,
        input_ids,
        attention_mask,
        logits_to_keep,
        batch_size=None,
        compute_entropy=False,
        compute_aux_loss=False,
        **image_inputs,
    ):
        episodes = [self._episodes[index] for index in self._rows_in_pass]
        if len(episodes) != input_ids.size(0):
            raise RuntimeError(f"{input_ids.size(0)} rows in the pass but {len(episodes)} episodes were recorded")
        device = input_ids.device
        places = [
            (row, offset, turn)
            for row, ep in enumerate(episodes)
            for offset, turn in zip(ep.offsets, ep.turns, strict=True)
        ]
        sequences = [torch.tensor(turn.context.context_ids + turn.completion_ids) for _, _, turn in places]
        longest = max(len(turn.completion_ids) for _, _, turn in places)
        ids = pad(sequences, padding_value=self._tokenizer.pad_token_id, padding_side="left").to(device)
        mask = pad([torch.ones_like(s) for s in sequences], padding_value=0, padding_side="left").to(device)
        turn_inputs = {"mm_token_type_ids": (ids == self._image_pad_id).long()}
        contexts = [turn.context for _, _, turn in places]
        if any(context.pixel_values is not None for context in contexts):
            turn_inputs["pixel_values"] = torch.cat([c.pixel_values for c in contexts if c.pixel_values is not None])
            turn_inputs["image_grid_thw"] = torch.cat(
                [c.image_grid_thw for c in contexts if c.pixel_values is not None]
            )
            turn_inputs["pixel_values"] = turn_inputs["pixel_values"].to(device)
            turn_inputs["image_grid_thw"] = turn_inputs["image_grid_thw"].to(device)
            turn_inputs["num_images"] = [len(c.images) for c in contexts]
        logps, entropies, aux_loss = super()._get_per_token_logps_and_entropies(
            model,
            ids,
            mask,
            longest,
            batch_size=batch_size,
            compute_entropy=compute_entropy,
            compute_aux_loss=compute_aux_loss,
            **turn_inputs,
        )
        row_logps = logps.new_zeros(input_ids.size(0), logits_to_keep)
        row_entropies = None if entropies is None else entropies.new_zeros(input_ids.size(0), logits_to_keep)
        for index, (row, offset, turn) in enumerate(places):
            length = min(len(turn.completion_ids), logits_to_keep - offset)
            if length <= 0:
                continue
            row_logps[row, offset : offset + length] = logps[index, longest - len(turn.completion_ids) :][:length]
            if entropies is not None:
                row_entropies[row, offset : offset + length] = entropies[index, longest - len(turn.completion_ids) :][
                    :length
                ]
        return row_logps, row_entropies, aux_loss

    # -- 3. metrics -------------------------------------------------------------------------------------------
    def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
        rewards_per_func = GRPOTrainer._calculate_rewards(self, inputs, prompts, completions, completion_ids_list)
        mode = "train" if self.model.training else "eval"
        episodes: Sequence[Episode] = [row["episode"] for row in inputs]
        families = gather_object([episode.task for episode in episodes])
        self._log_per_type_rewards(mode, rewards_per_func, families)
        self._log_no_signal_groups(mode, rewards_per_func)
        summary = gather_object(
            [
                (
                    episode.success,
                    len(episode.turns),
                    episode.truncated,
                    [turn.action is not None for turn in episode.turns],
                )
                for episode in episodes
            ]
        )
        turns_parsed = [parsed for *_, per_turn in summary for parsed in per_turn]
        metrics = self._metrics[mode]
        metrics["episodes/success_rate"].append(sum(s[0] for s in summary) / max(1, len(summary)))
        metrics["episodes/turns"].append(sum(s[1] for s in summary) / max(1, len(summary)))
        metrics["episodes/truncated_frac"].append(sum(s[2] for s in summary) / max(1, len(summary)))
        metrics["episodes/turn_parse_rate"].append(sum(turns_parsed) / max(1, len(turns_parsed)))
        return rewards_per_func
