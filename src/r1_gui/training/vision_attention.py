"""Moved: the vision tower's batched window attention is model-level code that training and evaluation share, now
``r1_gui.vision_attention``. This old path still works and warns."""

from r1_gui._moved import forwarder

__getattr__ = forwarder(__name__, "r1_gui.vision_attention")
