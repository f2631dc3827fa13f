"""An evaluation run's bookkeeping, shared by step and episode evaluation: the protocol card (`protocol`), when a
rerun may continue and the names of the files a run writes (`resume`), the content fingerprints it is keyed on
(`fingerprint`), predictions.jsonl (`predictions_file`), the text both reports share (`report_text`)."""
