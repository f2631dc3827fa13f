"""Step evaluation (eval/test_aitw.py): the API (`runner`), where a metric is computed (`metrics`), the dataset rows
(`samples`), report.md and the gallery (`report`), the command line (`cli`)."""
