"""Episode evaluation (eval/test_phone.py): whole episodes of any environment that keeps the contract (`run`), and
its command line (`cli`)."""
