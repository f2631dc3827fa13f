"""Asynchronous rollouts for multi-turn GRPO (`--rollout_mode async`): rollout workers play episodes all the time
with their own copy of the policy, the trainer takes finished groups from a bounded buffer and publishes new weights.

- `buffer`: finished groups (the episodes of one reset) and the staleness bound (`GroupBuffer`).
- `correction`: the off-policy correction of lagging turns (the decoupled PPO objective, truncated weights).

Used by `r1_gui.multi_turn`, never importing it.
"""
