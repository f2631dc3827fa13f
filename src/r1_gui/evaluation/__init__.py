"""Evaluation of GUI agents, by steps and by episodes: the metrics the rewards use, resumable runs, reports.

    from r1_gui.evaluation import evaluate, evaluate_predictions, score_predictions, HFGenerator
    metrics = evaluate("runs/ckpt", "data/aitw-2k", split="test", output_dir="results/ckpt", batch_size=16)

Rooms on floors, bottom up (each imports only from the floors under it; docs/architecture.md): ``errors``
(``EvaluationError``), ``intervals`` (95% intervals, the paired difference), ``presets`` (``--protocol``); ``metrics``
(every metric, defined once and computed: per-sample scores, step, episode and benchmark tables) and ``config``
(``EvalConfig``: every setting, the generators' ``GenerationSettings`` extended); ``run/`` (the bookkeeping both
evaluations share: ``protocol``, the card every metrics.json carries; ``resume`` and the files' names;
``fingerprint``; ``predictions_file``; ``report_text``); ``stats/`` (``compare``: ``python -m
r1_gui.evaluation.stats.compare``) and ``peers/`` (the peers' benchmarks and numbers: ``benchmarks``,
``guir1_eval``); ``steps/`` (step evaluation: ``runner``, the API above; ``samples``; ``report``, report.md and the
gallery; ``guir1_predictions``; ``cli``, ``python eval/test_aitw.py``) and ``episodes/`` (episode evaluation over a
pool of any environment: ``run``, ``cli``, ``python eval/test_phone.py``). The generators it asks live in
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
