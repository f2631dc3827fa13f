"""Asynchronous rollouts for multi-turn GRPO (`--rollout_mode async`): rollout workers play episodes all the time
with their own copy of the policy, the trainer takes finished groups from a bounded buffer and publishes new weights.

- `engine`: the trainer's side (`AsyncRollouts`): starts the workers, hands out resets within the staleness bound,
  collects finished groups, publishes the weights, restarts a worker that dies.
- `worker`: a rollout worker (`RolloutWorker`): its policy copy, its environments, groups played with the one agent
  loop, each turn's weights version and behaviour log-probabilities.
- `weights`: the trainable parameters in shared memory (`SharedWeights`).
- `buffer`: finished groups (the episodes of one reset) and the staleness bound (`GroupBuffer`).
- `correction`: the off-policy correction of lagging turns (the decoupled PPO objective, truncated weights).

Used by `r1_gui.multi_turn`, never importing it.
"""
