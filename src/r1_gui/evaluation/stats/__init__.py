"""Two evaluation runs compared (`compare`, `python -m r1_gui.evaluation.stats.compare`): every metric's paired
difference with its 95% interval. The interval arithmetic it uses is `r1_gui.evaluation.intervals`, a floor below."""
