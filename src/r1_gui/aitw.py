"""Moved to ``r1_gui.scoring.aitw`` (issue 22): this old path still works and warns; ``NO_POINT`` is now
``AITW_NO_POINT``."""

from r1_gui._moved import forwarder

__getattr__ = forwarder(__name__, "r1_gui.scoring.aitw", renamed={"NO_POINT": "AITW_NO_POINT"})
