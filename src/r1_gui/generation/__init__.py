"""Where generation is done: how a checkpoint is asked, by evaluation, `play`, the benches and (through trl's
generate, `seam/grpo.py`) training.

``settings`` (``GenerationSettings``: prompt, decoding, screenshot bounds, device; the flags that set them),
``prompting`` (``--prompt_style auto`` / ``--coordinates auto`` resolved from the architecture, training's and
evaluation's one resolution; ``model_type_of``), ``generators`` (``HFGenerator``, ``VLLMGenerator``,
``make_generator``) and ``compiled`` (``--generation_compile``: a static KV cache and a compiled decode step, for the
generators and training's trainers). Importing the package imports neither torch nor transformers.

    from r1_gui.generation import HFGenerator
    generator = HFGenerator("runs/ckpt", max_new_tokens=256)
    outputs = generator.generate([{"problem": row["problem"], "image": screenshot}], batch_size=16)
"""

from r1_gui.generation.generators import HFGenerator, VLLMGenerator, make_generator
from r1_gui.generation.prompting import model_type_of, resolve_prompting
from r1_gui.generation.settings import GenerationSettings, add_backend_arguments, add_generation_arguments

__all__ = [
    "GenerationSettings",
    "HFGenerator",
    "VLLMGenerator",
    "add_backend_arguments",
    "add_generation_arguments",
    "make_generator",
    "model_type_of",
    "resolve_prompting",
]
