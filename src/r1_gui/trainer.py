"""Moved to ``r1_gui.training.trainer`` (issue 22): this old path (``from r1_gui.trainer import GUIGRPOTrainer``)
still works and warns."""

from r1_gui._moved import forwarder

__getattr__ = forwarder(__name__, "r1_gui.training.trainer")
