"""Step evaluation (eval/test_aitw.py): the API (`runner`), the dataset rows (`samples`), report.md and the gallery
(`report`), GUI-R1's own inference output scored (`guir1_predictions`), the command line (`cli`). The metrics it
reports are defined and computed in `r1_gui.evaluation.metrics`."""
