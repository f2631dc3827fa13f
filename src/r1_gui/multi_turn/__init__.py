"""Multi-turn GRPO: the agent plays whole episodes of any environment that keeps r1_gui's contract.

- `trainer`: `MultiTurnGRPOTrainer` (trl's `rollout_func` over the agent loop, `r1_gui.agent.loop`; each turn
  scored in its own context) and `EpisodeBook`, the state its hooks share;
- `rollout`: `EpisodeRow`, the typed record of one episode as a GRPO row (ids, masks, turn offsets, per-turn rewards
  and advantages) that the rollout hands the loss;
- `advantages`: GiGPO's step-level credit (`--advantage_estimator gigpo`), pure functions over plain lists;
- `train`: `grpo_gui.py --env ID` (`multi_turn_trainer`): the environment checked, the tasks and rewards matched to
  it, the token budget printed, before any weights load;
- `demo`: `python -m r1_gui.demo --multi_turn`.

The episode rewards live in `r1_gui.episode_rewards` (registered in `r1_gui.rewards`); episode evaluation in
`r1_gui.evaluation.episodes.run` (`eval/test_phone.py`).
"""
