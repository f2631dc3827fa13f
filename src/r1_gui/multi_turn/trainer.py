"""`MultiTurnGRPOTrainer`: GRPO on whole episodes of an `r1_gui.envs` environment.

Written against trl 1.16.0. Why not trl's own tool loop (`environment_factory` + `max_tool_calling_iterations`):
that loop keeps one growing token sequence per rollout (every screenshot stays in the context, so
`--history_images` cannot drop old ones), it requires a chat template that renders tool calls (r1_gui's Aguvis
ChatML template does not), a malformed `<tool_call>` ends its loop instead of getting an error message back, and
after a tool result it always generates once more, so a `terminate` cannot end the episode at once. So the rollout
is trl's `rollout_func` hook, and generation inside it is trl's own (`generate_turn`, HF or vLLM).

`MultiTurnGRPOTrainer` includes everything of `r1_gui.training.trainer.GUIGRPOBase` (stopping, padding, the
no-signal skip, reward metrics, console, saved weights, resuming, compiled generation: `GUIGRPOTrainer` shares them),
and adds, besides the no-signal skip in its `policy_loss`:

1. Rollout (`rollout_func`, `_rollout`): each prompt of the batch names an environment reset (task and seed);
   trl's sampler repeats it `num_generations` times in a row, so a group holds whole episodes of the same reset.
   The episodes play side by side in a pool (`r1_gui.envs.runtime.backend`: a worker process, or a Ray actor, per
   episode of the process's slice, kept for the run; `r1_gui.agent.loop.play_episodes`) and each becomes one row
   (`r1_gui.multi_turn.episode_row.EpisodeRow`): the turns' answer tokens with the tool's response tokens between them,
   and trl's `env_mask` (0 on those tool tokens), which trl multiplies into the loss mask. An episode whose
   environment failed (raised, hung past `--env_step_timeout`, died) is scored as a failure and counted
   (`episodes/env_failures`); the pool rebuilds it.
2. Log-probabilities (`token_logps_and_entropies`): a turn was generated from its own context (the
   instruction, the earlier turns as text, the last `history_images` screenshots), which is not a prefix of the
   row. Each turn's answer tokens are scored in that context (the parent's method, on one sequence per turn) and
   written back at the turn's place in the row; tool-response positions get 0 (they are masked). Which episodes a
   pass scores is kept in one object, `EpisodeBook`, whose docstring gives the order in which trl 1.16 calls the
   hooks; it raises when a call comes out of that order (a trl upgrade that changed it).
3. The expert term (`expert_sft_weight` > 0, `--expert_sft_weight`; `_expert_loss`): the loss of each micro-batch
   gains that weight times the SFT loss (`r1_gui.multi_turn.expert.answer_loss`) of the environment expert's answer
   to every distinct turn its episodes played (`Turn.expert_action`), in that turn's context; logged as
   `expert_sft_loss`.
4. Metrics (`score_completions`, read from the rows the rollout recorded): each reward's mean per task
   (`rewards/<name>/<task>`), `groups/no_signal_frac`, `episodes/success_rate`, `episodes/turns`,
   `episodes/truncated_frac`, `episodes/turn_parse_rate` (the share of turns whose action parsed) and
   `episodes/env_failures` (episodes whose environment failed, summed over processes).
5. Step-level credit (`advantage_estimator="gigpo"`, `--advantage_estimator gigpo`; `_step_credit`, called at the
   end of `generate_and_score`): the advantage becomes one per token instead of one per row: the
   parent's episode advantage plus `step_advantage_weight` times each turn's step advantage
   (`r1_gui.multi_turn.advantages`), over the turns of every process gathered, on each answer token of the turn
   (trl 1.16's loss takes (rows, tokens) advantages as they are). Logged: `gigpo/anchor_groups`,
   `gigpo/mean_group_size`, `gigpo/singleton_frac`, `gigpo/step_advantage_std`. With "grpo" (the default) nothing of
   the parent's advantages changes.

6. Asynchronous rollouts (`rollouts`, `--rollout_mode async`; `_rollout`, `_correct_lagging_turns`): the episodes
   come from rollout workers that play all the time (`r1_gui.rollout`) instead of from `play_episodes` at the start
   of the step: `_rollout` takes the step's groups from their buffer (the oldest whose lag is at most
   `--max_staleness`), and the weights are published to them after every optimizer step (`PublishWeights`). Each
   turn keeps the weights version it was generated with and the behaviour log-probabilities of its tokens; the
   advantages of lagging turns' tokens are multiplied by the truncated behaviour weights of
   `r1_gui.rollout.correction` (the decoupled PPO objective), turns of lag 0 keep theirs exactly. Logged:
   `async/staleness_mean`, `async/staleness_max`, `async/dropped_stale`, `async/buffer_groups`,
   `async/trainer_wait_s`, `async/weight_sync_s`, `async/importance_ratio_mean`, `async/importance_ratio_clipped_frac`,
   `async/lagging_token_frac`, `async/worker_restarts`.

It does not include `GUIGRPOTrainer`'s features for rows of a dataset: the screenshot completions table (episodes
have no image column) and the deduplicated screenshots (each turn has its own context and screenshots).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Sequence

import torch
from accelerate.utils import gather_object
from transformers import TrainerCallback

from r1_gui.agent.context import DEFAULT_HISTORY_IMAGES, DEFAULT_MAX_TURNS
from r1_gui.agent.loop import Episode, TurnInput, play_episodes
from r1_gui.envs.runtime.pool import SlotPool
from r1_gui.multi_turn.advantages import check_step_credit, step_credit, token_advantages, turn_advantages, turn_rewards
from r1_gui.multi_turn.episode_row import EpisodeRow, episode_row
from r1_gui.rewards import carries_env_reward, turn_values
from r1_gui.rollout.correction import DEFAULT_CAP, behaviour_weights, check_cap
from r1_gui.seam.grpo import pad_sequences
from r1_gui.training.trainer import GUIGRPOBase

logger = logging.getLogger(__name__)


def reset_prompt(task: str | None, seed: int) -> list[dict]:
    """A dataset row's prompt: the environment reset it stands for (the rollout builds the real context)."""
    return [{"role": "user", "content": json.dumps({"task": task, "seed": int(seed)})}]


def read_reset(prompt: list[dict]) -> tuple[str | None, int]:
    content = prompt[-1]["content"]
    if isinstance(content, list):
        content = next(part["text"] for part in content if part.get("type") == "text")
    reset = json.loads(content)
    return reset["task"], int(reset["seed"])


class EpisodeBook:
    """The rows (`EpisodeRow`: episodes as GRPO rows) of the generation batch in training, and which of them the
    forward pass in progress scores: the one piece of state the trainer's hooks share. trl 1.16 calls them in this
    order for each generation batch:

    1. `rollout_func` (our `_rollout`) -> `record(rows)`: every row, in rollout order;
    2. inside trl's `_generate_and_score_completions`, the old-policy and reference log-prob passes over every row
       in that order -> `rows_for(n)` (the recorded rows, all of them);
    3. our `generate_and_score` -> `index_column()`: the `episode_index` tensor, which trl shuffles and
       splits into micro-batches with the rest of the batch;
    4. per micro-batch, `policy_loss` -> `select(episode_index)`, then its log-prob pass -> `rows_for(n)`.

    A call out of this order, or a pass whose row count is not that of the rows selected, raises RuntimeError naming
    the step, instead of scoring a turn in another episode's context.
    """

    def __init__(self):
        self.recorded: list[EpisodeRow] = []
        self.selected: list[int] = []
        self.indexed = False

    @property
    def episodes(self) -> list[Episode]:
        return [row.episode for row in self.recorded]

    def record(self, rows: list[EpisodeRow]) -> None:
        self.recorded, self.selected, self.indexed = list(rows), list(range(len(rows))), False

    def index_column(self, device) -> torch.Tensor:
        if not self.recorded or self.indexed:
            raise RuntimeError("EpisodeBook: episode_index asked for before the rollout recorded its episodes")
        self.indexed = True
        return torch.arange(len(self.recorded), device=device)

    def select(self, episode_index: torch.Tensor) -> None:
        if not self.indexed:
            raise RuntimeError("EpisodeBook: a loss pass began before generate_and_score indexed the rows")
        rows = episode_index.tolist()
        if any(not 0 <= row < len(self.recorded) for row in rows):
            raise RuntimeError(f"EpisodeBook: episode_index {rows} outside the {len(self.recorded)} recorded episodes")
        self.selected = rows

    def rows_for(self, count: int) -> list[EpisodeRow]:
        if len(self.selected) != count:
            raise RuntimeError(
                f"EpisodeBook: {count} rows in the pass but {len(self.selected)} episodes selected: trl called the "
                "hooks in an order r1_gui does not expect (see EpisodeBook's docstring; written against trl 1.16)"
            )
        return [self.recorded[row] for row in self.selected]


class ClosePoolAtEnd(TrainerCallback):
    """The environments' workers end with training (they would at exit anyway)."""

    def __init__(self, pool: SlotPool):
        self.pool = pool

    def on_train_end(self, args, state, control, **kwargs):
        self.pool.close()


class PublishWeights(TrainerCallback):
    """The asynchronous rollouts get the trainer's weights: at the start (the weights of the run, or of the checkpoint
    it resumed) and after every `weight_sync_steps` optimizer steps; each publication is a weights version, the
    step count. The rollouts end with training."""

    def __init__(self, trainer: MultiTurnGRPOTrainer):
        self.trainer = trainer

    def on_train_begin(self, args, state, control, **kwargs):
        trainer = self.trainer
        trainer.rollouts.start(trainer.accelerator.unwrap_model(trainer.model), state.global_step)
        if trainer.owns_pool:  # the workers play in pools of their own: free what describe started (a browser)
            trainer.env_pool.close()

    def on_step_end(self, args, state, control, **kwargs):
        rollouts = self.trainer.rollouts
        if state.global_step % rollouts.weight_sync_steps == 0:
            rollouts.publish(self.trainer.accelerator.unwrap_model(self.trainer.model), state.global_step)
        rollouts.advance(state.global_step)

    def on_train_end(self, args, state, control, **kwargs):
        self.trainer.rollouts.close()


def multi_turn_rollout(prompts: list, trainer: MultiTurnGRPOTrainer) -> dict:
    """trl's `rollout_func(prompts, trainer)`: see `MultiTurnGRPOTrainer._rollout`."""
    return trainer._rollout(prompts)


class MultiTurnGRPOTrainer(GUIGRPOBase):
    """GRPO on episodes; what it includes: see the module docstring.

    Args (besides GUIGRPOBase's): env_pool (a pool, `r1_gui.envs.runtime.backend`; the trainer closes it when training
    ends), max_turns,
    history_images, max_turn_tokens (new tokens per turn), system (replaces the mobile_use system prompt),
    expert_sft_weight (the expert term's weight; 0: none), close_pool (close env_pool when training ends; False
    for a pool the caller goes on using), advantage_estimator ("grpo" or "gigpo"), step_advantage_weight (GiGPO's
    omega), step_gamma (its discount) and importance_ratio_cap (the largest behaviour weight of a lagging turn's
    token, with asynchronous rollouts: `attach_rollouts`).
    """

    def __init__(
        self,
        *args,
        env_pool: SlotPool,
        max_turns: int = DEFAULT_MAX_TURNS,
        history_images: int = DEFAULT_HISTORY_IMAGES,
        max_turn_tokens: int = 128,
        system: str | None = None,
        expert_sft_weight: float = 0.0,
        close_pool: bool = True,
        advantage_estimator: str = "grpo",
        step_advantage_weight: float = 1.0,
        step_gamma: float = 0.95,
        importance_ratio_cap: float = DEFAULT_CAP,
        **kwargs,
    ):
        check_step_credit(advantage_estimator, step_advantage_weight, step_gamma)
        check_cap(importance_ratio_cap)
        kwargs.setdefault("prompt_style", "mobile_use")
        kwargs.update(rollout_func=multi_turn_rollout)
        # trl warns on every run that rollout_func is experimental: r1_gui chose it knowingly and pins trl 1.16
        # (its use is checked by tests/test_upstream_internals.py), so the warning is r1_gui's own noise
        os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
        super().__init__(*args, **kwargs)
        self.env_pool, self.owns_pool = env_pool, close_pool
        if close_pool:  # a pool the caller lent (close_pool False) outlives training: the caller closes it
            self.add_callback(ClosePoolAtEnd(env_pool))
        self.max_turns, self.history_images, self.max_turn_tokens = max_turns, history_images, max_turn_tokens
        self.system = system
        self.expert_sft_weight = expert_sft_weight
        self.advantage_estimator = advantage_estimator
        self.step_advantage_weight, self.step_gamma = step_advantage_weight, step_gamma
        self.book = EpisodeBook()
        self._image_pad_id = self.text_tokenizer.convert_tokens_to_ids("<|image_pad|>")
        self.rollouts, self.importance_ratio_cap = None, importance_ratio_cap

    def attach_rollouts(self, rollouts) -> None:
        """Take the episodes from asynchronous rollouts (`r1_gui.rollout.engine.AsyncRollouts`, or an object with its
        `start`, `take`, `publish`, `advance`, `stats`, `close` and `weight_sync_steps`) instead of playing them."""
        self.rollouts = rollouts
        self.add_callback(PublishWeights(self))

    # -- 1. rollout -------------------------------------------------------------------------------------------
    def _rollout(self, prompts: list) -> dict:
        if self.rollouts is not None:
            return self._rollout_async(prompts)
        resets = [read_reset(prompt) for prompt in prompts]
        episodes = play_episodes(
            self.env_pool,
            resets,
            self._policy,
            self.processing_class,
            decode=lambda ids: self.text_tokenizer.decode(ids, skip_special_tokens=True),
            **self.play_settings(),
        )
        rows = [episode_row(episode, self.text_tokenizer) for episode in episodes]
        self.book.record(rows)
        vllm = self.use_vllm
        return {  # trl's rollout_func keys (extra keys are the reward functions' columns); our hooks read the book
            "prompt_ids": [row.prompt_ids for row in rows],
            "completion_ids": [row.completion_ids for row in rows],
            "logprobs": [row.logprobs for row in rows] if vllm else None,
            "env_mask": [row.env_mask for row in rows],
            "episode": episodes,  # the reward functions' column
            "family": [episode.task for episode in episodes],
        }

    def play_settings(self) -> dict:
        """`play_episodes`' keywords of this run: what its own rollout and the asynchronous workers play with."""
        return {"max_turns": self.max_turns, "history_images": self.history_images, "system": self.system,
                "chat_template_kwargs": self.chat_template_kwargs}  # fmt: skip

    def _rollout_async(self, prompts: list) -> dict:
        """The step's episodes from the asynchronous rollouts: as many groups as the step has prompts' groups, the
        oldest whose lag is at most the bound; each row keeps its turns' lags. The dataset's resets only count the
        rows: the rollouts play their own stream of resets, so `task` and `seed` come with the episodes."""
        mode = "train" if self.model.training else "eval"
        num_generations = self.num_generations if mode == "train" else self.num_generations_eval
        if len(prompts) % num_generations:
            raise ValueError(
                f"asynchronous rollouts hand each process whole groups: {len(prompts)} rows of this process do not "
                f"divide into groups of --num_generations {num_generations}; make the per-process rows a multiple"
            )
        step = self.state.global_step
        groups = self.rollouts.take(len(prompts) // num_generations, step)
        episodes, lags = [], []
        for group in groups:
            episodes += group.episodes
            lags += [[step - version for version in versions] for versions in group.versions]
        rows = [episode_row(episode, self.text_tokenizer) for episode in episodes]
        for row, turn_lags in zip(rows, lags, strict=True):
            row.turn_lags = turn_lags
        self.book.record(rows)
        group_lags = [group.lag(step) for group in groups]
        for name, value in self.rollouts.stats().items():
            self.record_metric(mode, f"async/{name}", float(value))
        self.record_metric(mode, "async/staleness_mean", sum(group_lags) / len(group_lags))
        self.record_metric(mode, "async/staleness_max", float(max(group_lags)))
        return {
            "prompt_ids": [row.prompt_ids for row in rows],
            "completion_ids": [row.completion_ids for row in rows],
            "logprobs": None,  # trl's own correction is for vLLM's samples; ours is `_correct_lagging_turns`
            "env_mask": [row.env_mask for row in rows],
            "episode": episodes,
            "family": [episode.task for episode in episodes],
            "task": [episode.task for episode in episodes],
            "seed": [episode.seed for episode in episodes],
        }

    def _policy(self, inputs: list[TurnInput], infos: list[dict]):
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
            return self.generate_turn(prompt_ids, images, fields, num_generations=1)

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

    def generate_and_score(self, inputs):
        output = super().generate_and_score(inputs)
        output["episode_index"] = self.book.index_column(output["completion_ids"].device)
        if self.advantage_estimator == "gigpo":
            output["advantages"] = self._step_credit(output["advantages"], output["completion_ids"].size(1))
        if self.rollouts is not None:
            output["advantages"] = self._correct_lagging_turns(output)
        return output

    def policy_loss(self, model, inputs):
        played = inputs["episode_index"]  # the expert term covers every episode of the micro-batch, signal or not
        inputs = self.rows_with_signal(inputs)
        self.book.select(inputs["episode_index"])
        loss = super().policy_loss(model, inputs)
        if self.expert_sft_weight and self.model.training:
            loss = loss + self.expert_sft_weight * self._expert_loss(model, played)
        return loss

    # -- 2. log-probabilities, each turn in its own context --------------------------------------------------
    def token_logps_and_entropies(
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
        rows = self.book.rows_for(input_ids.size(0))
        device = input_ids.device
        places = [
            (index, offset, turn)
            for index, row in enumerate(rows)
            for offset, turn in zip(row.offsets, row.turns, strict=True)
        ]
        sequences = [torch.tensor(turn.context.context_ids + turn.completion_ids) for _, _, turn in places]
        longest = max(len(turn.completion_ids) for _, _, turn in places)
        ids = pad_sequences(sequences, padding_value=self.text_tokenizer.pad_token_id, padding_side="left").to(device)
        mask = pad_sequences([torch.ones_like(s) for s in sequences], padding_value=0, padding_side="left").to(device)
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
        logps, entropies, aux_loss = super().token_logps_and_entropies(
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

    # -- 3. the expert term -----------------------------------------------------------------------------------
    def _expert_loss(self, model, episode_index: torch.Tensor) -> torch.Tensor:
        """The SFT loss of the expert's answers to the distinct turns the episodes at `episode_index` played: a
        group's episodes share their first screen, so each such turn counts once."""
        from r1_gui.multi_turn.expert import ExpertPolicy, answer_loss

        answer = ExpertPolicy(self.text_tokenizer).answer
        batch, seen = [], set()
        for row in episode_index.tolist():
            episode = self.book.episodes[row]
            for turn in episode.turns:
                if turn.expert_action is None:
                    continue
                context = turn.context
                pixels = None if context.pixel_values is None else context.pixel_values.float().cpu().numpy()
                key = (
                    tuple(context.context_ids),
                    None if pixels is None else pixels.tobytes(),
                    repr(turn.expert_action),
                )
                if key not in seen:
                    seen.add(key)
                    batch.append((context, answer(turn.expert_action)))
        if batch:
            loss = answer_loss(model, batch, self.text_tokenizer.pad_token_id, self._image_pad_id)
        else:  # no expert action on these screens: a zero that keeps the graph (and the processes in step)
            loss = sum(p.sum() for p in model.parameters() if p.requires_grad) * 0.0
        self.record_metric("train", "expert_sft_loss", self.accelerator.gather(loss.detach()).mean().item())
        return loss

    # -- 4. metrics -------------------------------------------------------------------------------------------
    def score_completions(self, inputs, prompts, completions, completion_ids_list):
        rewards_per_func = super().score_completions(inputs, prompts, completions, completion_ids_list)
        mode = "train" if self.model.training else "eval"
        # the typed rows the rollout recorded, this process's rows in the order trl scores them
        episodes: Sequence[Episode] = [row.episode for row in self.book.rows_for(len(inputs))]
        tasks = gather_object([episode.task for episode in episodes])
        self.log_rewards_by(mode, rewards_per_func, tasks)
        self.log_no_signal_groups(mode, rewards_per_func)
        summary = gather_object(
            [
                (
                    episode.success,
                    len(episode.turns),
                    episode.truncated,
                    [turn.action is not None for turn in episode.turns],
                    episode.env_failure is not None,
                )
                for episode in episodes
            ]
        )
        turns_parsed = [parsed for *_, per_turn, _ in summary for parsed in per_turn]
        episodes_count = max(1, len(summary))
        self.record_metric(mode, "episodes/success_rate", sum(s[0] for s in summary) / episodes_count)
        self.record_metric(mode, "episodes/turns", sum(s[1] for s in summary) / episodes_count)
        self.record_metric(mode, "episodes/truncated_frac", sum(s[2] for s in summary) / episodes_count)
        self.record_metric(mode, "episodes/turn_parse_rate", sum(turns_parsed) / max(1, len(turns_parsed)))
        self.record_metric(mode, "episodes/env_failures", float(sum(s[4] for s in summary)))
        return rewards_per_func

    # -- 5. step-level credit (GiGPO) ---------------------------------------------------------------------------
    def _step_credit(self, episode_advantages: torch.Tensor, width: int) -> torch.Tensor:
        """This process's rows' per-token advantages under GiGPO; each row's record gets its turns' rewards and
        advantages. The per-turn rewards and state keys of every process are gathered first: an anchor group holds the
        turns of its reset's episodes wherever they were played, and every process computes the same groups. Groups
        are `num_generations` consecutive rows of the gathered batch, as the parent's episode advantages are."""
        rows = self.book.recorded
        episodes = [row.episode for row in rows]
        weighted = [
            (weight, values)
            for func, weight in zip(self.reward_funcs, self.reward_weights.tolist(), strict=True)
            if (values := turn_values(func, episodes)) is not None
        ]
        carried = any(carries_env_reward(func) for func in self.reward_funcs)
        for index, row in enumerate(rows):
            env_rewards = [turn.reward for turn in row.turns]
            per_func = [(weight, values[index]) for weight, values in weighted]
            row.turn_rewards = turn_rewards(env_rewards, per_func, env_reward_carried=carried)
        gathered = gather_object([(row.state_keys, row.turn_rewards) for row in rows])
        mode = "train" if self.model.training else "eval"
        num_generations = self.num_generations if mode == "train" else self.num_generations_eval
        credit = step_credit(
            [index // num_generations for index in range(len(gathered))],
            [keys for keys, _ in gathered],
            [rewards for _, rewards in gathered],
            self.step_gamma,
            self.scale_rewards,
        )
        start = self.accelerator.process_index * len(rows)  # this process's slice, as the parent slices its own
        local = credit.advantages[start : start + len(rows)]
        for row, episode_advantage, steps in zip(rows, episode_advantages.tolist(), local, strict=True):
            row.episode_advantage, row.step_advantages = episode_advantage, steps
            row.turn_advantages = turn_advantages(episode_advantage, steps, self.step_advantage_weight)
        self.record_metric(mode, "gigpo/anchor_groups", float(credit.anchor_groups))
        self.record_metric(mode, "gigpo/mean_group_size", credit.mean_group_size)
        self.record_metric(mode, "gigpo/singleton_frac", credit.singleton_frac)
        self.record_metric(mode, "gigpo/step_advantage_std", credit.spread)
        tokens = [token_advantages(row.offsets, row.answer_lengths, row.turn_advantages, width) for row in rows]
        return torch.tensor(tokens, dtype=episode_advantages.dtype, device=episode_advantages.device)

    # -- 6. asynchronous rollouts: the correction of lagging turns -----------------------------------------------
    def _correct_lagging_turns(self, output: dict) -> torch.Tensor:
        """This process's advantages with each lagging turn's answer tokens weighted by the truncated behaviour
        weight (`r1_gui.rollout.correction`); unchanged (and no extra forward pass) when no turn lags."""
        advantages = output["advantages"]
        rows = self.book.recorded
        width = output["completion_ids"].size(1)
        mode = "train" if self.model.training else "eval"
        lags = [token_advantages(row.offsets, row.answer_lengths, row.turn_lags, width) for row in rows]
        lags = torch.tensor(lags, device=advantages.device)
        mask = output["completion_mask"] * output["tool_mask"]
        if not bool(((lags > 0) & (mask > 0)).any()):
            stats = behaviour_weights(
                lags.float(), lags.float(), torch.zeros_like(lags), mask, self.importance_ratio_cap
            )[1]
        else:
            ids = torch.cat([output["prompt_ids"], output["completion_ids"]], dim=1)
            attention = torch.cat([output["prompt_mask"], output["completion_mask"]], dim=1)
            with torch.no_grad():
                prox, _, _ = self.token_logps_and_entropies(
                    self.model, ids, attention, width, batch_size=self.args.per_device_train_batch_size
                )
            behaviour = torch.tensor([(row.logprobs + [0.0] * width)[:width] for row in rows], device=prox.device)
            weights, stats = behaviour_weights(prox, behaviour, lags, mask, self.importance_ratio_cap)
            per_token = advantages if advantages.dim() == 2 else advantages.unsqueeze(1).expand(-1, width)
            advantages = per_token * weights.to(per_token.dtype)
        self.record_metric(mode, "async/importance_ratio_mean", stats.ratio_mean)
        self.record_metric(mode, "async/importance_ratio_clipped_frac", stats.clipped_frac)
        self.record_metric(mode, "async/lagging_token_frac", stats.lagging_frac)
        return advantages
