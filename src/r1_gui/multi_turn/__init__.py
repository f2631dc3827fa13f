"""Multi-turn GRPO: the agent plays whole episodes of `r1_gui.envs` (PhoneEnv, ReplayEnv) with the mobile_use tool.

- `context`: what the model sees at each turn (the instruction, the earlier turns as text, the last
  `history_images` screenshots) and the token budget of an episode;
- `rollout`: plays a batch of episodes turn by turn (`play_episodes`) and lays each out as one GRPO row
  (`episode_row`: the turns' tokens, the tool responses between them masked out of the loss);
- `trainer`: `MultiTurnGRPOTrainer`, the trainer hooks that score each turn in its own context;
- `train`: `grpo_gui.py --env r1_gui/Phone-v0` (`multi_turn_trainer`).

The episode rewards live in `r1_gui.multi_turn.episode_rewards` and are registered in `r1_gui.rewards`.
"""
