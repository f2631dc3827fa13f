"""AITW step evaluation of GUI agents: the metrics the rewards use, generation backends, resumable runs, reports.

    from r1_gui.evaluation import evaluate, evaluate_predictions, score_predictions, HFGenerator
    metrics = evaluate("runs/ckpt", "data/aitw-2k", split="test", output_dir="results/ckpt", batch_size=16)

Modules: ``metrics`` (pure per-sample scores and their aggregation), ``predictions_file`` (predictions.jsonl and
other systems' predictions files), ``errors`` (``EvaluationError``), ``config`` (``EvalConfig``: every setting),
``samples`` (dataset rows and screenshots), ``fingerprint`` (the model files and dataset rows a resume is keyed on),
``generate`` (hf / vllm backends), ``report`` (report.md, gallery), ``runner`` (the API above), ``cli``
(``python eval/test_aitw.py``); ``benchmarks`` (AndroidControl, GUI-Odyssey, ScreenSpot test files in GUI-R1's format
and their metrics, ``evaluate(..., benchmark=)``), ``guir1_eval`` (GUI-R1's eval-script numbers) and
``guir1_predictions`` (scoring GUI-R1's own inference output); ``protocol`` (the protocol card every metrics.json
carries, image settings from the checkpoint's saved processor), ``presets`` (``--protocol r1v|guir1|aitw``),
``intervals`` (95% intervals, paired differences) and ``compare`` (``python -m r1_gui.evaluation.compare``).
Importing the package imports neither torch nor transformers; a generator imports them when it is built.
"""

from r1_gui.evaluation.config import EvalConfig
from r1_gui.evaluation.errors import EvaluationError
from r1_gui.evaluation.generate import HFGenerator, VLLMGenerator, make_generator
from r1_gui.evaluation.metrics import METRICS, aggregate, paper_param_match, score_output
from r1_gui.evaluation.runner import evaluate, evaluate_predictions, score_predictions

__all__ = [
    "METRICS",
    "EvalConfig",
    "EvaluationError",
    "HFGenerator",
    "VLLMGenerator",
    "aggregate",
    "evaluate",
    "evaluate_predictions",
    "make_generator",
    "paper_param_match",
    "score_output",
    "score_predictions",
]
