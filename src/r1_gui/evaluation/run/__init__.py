"""An evaluation run's bookkeeping, shared by step and episode evaluation: the protocol card (`protocol`), when a
rerun may continue (`resume`), the content fingerprints it is keyed on (`fingerprint`), predictions.jsonl
(`predictions_file`)."""
