"""The peers' benchmarks and numbers, reproduced exactly: their test files and metrics (`benchmarks`), GUI-R1's
eval-script numbers (`guir1_eval`), GUI-R1's own inference output (`guir1_predictions`), the `--protocol` presets."""
