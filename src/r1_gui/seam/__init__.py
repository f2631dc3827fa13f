"""The seam: the only place in r1_gui that touches trl's and transformers' private internals.

r1_gui's trainers and generation helpers need a few things trl 1.16 and transformers 5.23 do not offer as public API
(hooks GRPOTrainer exposes only as private methods, attributes it keeps private, functions inside their modules, a
private switch of a config). Each such use sits here, once, under an r1_gui name; the rest of r1_gui calls that name.
A trl or transformers upgrade is then checked against this package alone: tests/test_upstream_internals.py guards
every internal named here against the pinned versions, and tests/test_architecture.py fails when a module outside
this package reaches one. docs/architecture.md ("Where r1_gui leans on its dependencies' internals") lists each
internal, what wraps it here and why.

- `r1_gui.seam.grpo`: trl's `GRPOTrainer`. `GRPOSeam` overrides its private hooks once and hands each to a public-
  named method the GUI trainers override (`score_completions`, `generate_and_score`, `shuffle_generation_batch`,
  `policy_loss`, `token_logps_and_entropies`, `generate_turn`), and reads its private attributes under public names
  (`record_metric`, `text_tokenizer`, `weight_sharding`, `entropy_bonus_enabled`); trl's padding and pixel-value
  helpers (`pad_sequences`, `split_images_by_row`, `join_images`).
- `r1_gui.seam.trainer`: transformers' `Trainer` (`TrainerSeam`: how a checkpoint's weights are loaded, and a
  training loop stopped before its first step).
- `r1_gui.seam.models`: transformers' models and generation (the prefill `generate` runs, the vision encoder's
  `get_image_features`, a static cache's layers, `CompileConfig`'s private switch, a config's attention
  implementation, its sdpa attention function). Imports no trl, and torch and transformers only when called, so the
  evaluation's generators can use it.

The modules are apart so that what imports `r1_gui.seam.models` (generation, evaluation) does not import trl.
"""
