"""Comparing a predicted action with its ground truth: one home for every score that the rewards and the
evaluation share. Import direction: ``r1_gui.actions`` <- ``r1_gui.scoring`` <- {``r1_gui.rewards``,
``r1_gui.evaluation``}; nothing here imports either of those.

- ``r1_gui.scoring.pairs``: ``score_pair`` (type_match, param_match, action_match, step_success),
  ``click_distance_score``, ``click_gaussian_score``, ``click_hit`` (a click in a target box), ``text_f1_score``, and ``REWARD_METRICS`` (which reward equals
  which metric);
- ``r1_gui.scoring.aitw``: the Android-in-the-Wild matching rules (``actions_match``, ``step_success``,
  ``text_matches``);
- ``r1_gui.scoring.guir1``: GUI-R1's accuracy rule and text F1.
"""

from .pairs import REWARD_METRICS, click_distance_score, click_gaussian_score, click_hit, score_pair, text_f1_score

__all__ = ["REWARD_METRICS", "click_distance_score", "click_gaussian_score", "click_hit", "score_pair", "text_f1_score"]
