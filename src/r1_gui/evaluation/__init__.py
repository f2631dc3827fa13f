"""AITW step evaluation of GUI agents: the metrics the rewards use, generation backends, resumable runs, reports.

    from r1_gui.evaluation import evaluate, evaluate_predictions, score_predictions, HFGenerator
    metrics = evaluate("runs/ckpt", "data/aitw-2k", split="test", output_dir="results/ckpt", batch_size=16)

Rooms, by what they do: ``steps/`` (step evaluation: ``runner``, the API above; ``metrics``, the per-sample scores
and their aggregation; ``samples``; ``report``, report.md and the gallery; ``cli``, ``python eval/test_aitw.py``),
``episodes/`` (episode evaluation over a pool of any environment: ``run``, ``cli``, ``python eval/test_phone.py``),
``run/`` (the bookkeeping both share: ``protocol``, the card every metrics.json carries; ``resume``;
``fingerprint``; ``predictions_file``), ``peers/`` (the peers' benchmarks and numbers: ``benchmarks``,
``guir1_eval``, ``guir1_predictions``, ``presets`` for ``--protocol``), ``stats/`` (``intervals``, ``compare``:
``python -m r1_gui.evaluation.stats.compare``); at the top ``config`` (``EvalConfig``: every setting, the
generators' ``GenerationSettings`` extended) and ``errors`` (``EvaluationError``). The generators it asks live in
``r1_gui.generation`` (shared with ``play``, the benches and training's prompting); ``HFGenerator``,
``VLLMGenerator`` and ``make_generator`` are exported here too. Importing the package imports neither torch nor
transformers; a generator imports them when it is built.
"""

from r1_gui.evaluation.config import EvalConfig
from r1_gui.evaluation.errors import EvaluationError
from r1_gui.evaluation.metrics import METRICS, aggregate, paper_param_match, score_output
from r1_gui.evaluation.steps.runner import evaluate, evaluate_predictions, score_predictions
from r1_gui.generation import HFGenerator, VLLMGenerator, make_generator

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
