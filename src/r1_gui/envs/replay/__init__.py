"""`r1_gui/Replay-v0`: the builder's recorded episodes, played semi-online (`env.ReplayEnv`)."""
