"""Statistics of evaluation numbers: 95% intervals and paired differences (`intervals`), two runs compared
(`compare`, `python -m r1_gui.evaluation.stats.compare`)."""
