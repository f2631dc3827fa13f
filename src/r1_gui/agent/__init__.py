"""The agent loop, shared by multi-turn training, episode evaluation and the demos' expert play:

- `context`: what the model sees at each turn (the instruction, the earlier turns as text, the last
  `history_images` screenshots) and the token budget of an episode;
- `loop`: episodes played turn by turn over a pool of `r1_gui.envs.runtime.backend` (`play_episodes`), each recorded as an
  `Episode` of `Turn`s.
"""
