"""The peers' benchmarks and numbers, reproduced exactly: their test files and metrics (`benchmarks`), GUI-R1's
eval-script numbers (`guir1_eval`). Their `--protocol` presets are `r1_gui.evaluation.presets`; scoring GUI-R1's own
inference output is a step evaluation, `r1_gui.evaluation.steps.guir1_predictions`."""
