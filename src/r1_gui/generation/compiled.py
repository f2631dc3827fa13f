"""Static KV cache and a compiled decode step for Hugging Face `generate` (`--generation_compile`).

A GRPO step is mostly generation, and HF `generate` decodes one token at a time: on a GPU each decode step of a
3B model is a few hundred small kernel launches, so with the dynamic cache the step is bound by launches, not by the
GPU. transformers (5.23) compiles the decode step's forward with `torch.compile` when the cache is a static one
(preallocated to the longest sequence, so its shapes do not change from token to token) and the generation config
does not disable compilation; its default `CompileConfig` uses the "reduce-overhead" mode, which replays the decode
step as a CUDA graph. trl (1.16) builds its GenerationConfig with `disable_compile=True`, so its own
`--cache_implementation static` runs the static cache uncompiled.

`generation_compile_settings(device_type)` is what the training trainers (single-step and multi-turn, through their
shared `GUIGRPOBase`) and the evaluation's `HFGenerator` set on their generation config with the flag on: the static
cache, compilation allowed, and on a device other than CUDA transformers' own switch to compile there too (it
compiles only on accelerators unless asked; the CPU path is what the tests check). The prefill is not compiled
(transformers compiles only the decode step), and the first `generate` call pays the compilation.

The static cache's length is rounded up to a multiple of `CACHE_BUCKET` tokens (`static_cache_length`, given to
`generate` as `max_cache_len`): transformers sizes the cache to each call's longest prompt plus the new tokens, so
prompts of other lengths would change the compiled step's shapes, and every new shape is a recompilation and a
CUDA graph of its own. transformers never
shrinks the cache below the longest it made before, so after the first calls the shape stays put.

Where it cannot apply, `generation_compile_blocker` says why in a sentence and generation keeps the dynamic cache
(one log line): a model class transformers does not mark as compilable, DeepSpeed ZeRO-3 or FSDP (weights gathered
for each generation), vLLM or trl's continuous batching (not HF `generate`). Greedy answers are the same token for token as
with the dynamic cache on the tiny Qwen2-VL, Qwen2.5-VL and Qwen3-VL (tests/test_compiled_generation.py).

Off by default: whether it is faster on a GPU has not been measured yet (bench/gpu_kit.sh measures it).
"""

from __future__ import annotations

import logging
from typing import Any

logger = logging.getLogger(__name__)

FLAG = "--generation_compile"


def generation_compile_blocker(model: Any, *, sharded: str | None = None, backend: str = "hf") -> str | None:
    """Why a static cache with a compiled decode step cannot serve ``model``'s generation; None when it can.
    ``sharded``: the name of a scheme that gathers sharded weights for each generation (ZeRO-3, FSDP), if any."""
    if backend != "hf":
        return f"generation runs on {backend}, not transformers' generate"
    if sharded:
        return f"{sharded} gathers the sharded weights for every generation, which a compiled graph would not follow"
    base = model.get_base_model() if callable(getattr(model, "get_base_model", None)) else model  # PEFT
    if not getattr(type(base), "_can_compile_fullgraph", False):
        return f"transformers does not mark {type(base).__name__} as compilable"
    return None


CACHE_BUCKET = 256  # tokens; a 3B GRPO prompt is about 750 tokens with 128 new ones (a cache of 1024)


def static_cache_length(prompt_length: int, max_new_tokens: int) -> int:
    """The static cache's length for a batch whose longest (padded) prompt has ``prompt_length`` tokens: room for
    ``max_new_tokens`` more, rounded up to a multiple of CACHE_BUCKET."""
    return -(-(prompt_length + max_new_tokens) // CACHE_BUCKET) * CACHE_BUCKET


def generation_compile_settings(device_type: str) -> dict[str, Any]:
    """GenerationConfig fields for a static cache and a compiled decode step on ``device_type`` ("cuda", "cpu")."""
    from r1_gui.seam.models import compile_config

    # transformers compiles only on accelerators unless told to compile everywhere (its own switch, used by its tests)
    config = compile_config(on_every_device=device_type != "cuda")
    return {"cache_implementation": "static", "disable_compile": False, "compile_config": config}


def check_cache_implementation(cache_implementation: str | None) -> None:
    """The flag needs the static cache: another explicit `--cache_implementation` is a ValueError naming both."""
    if cache_implementation not in (None, "static"):
        raise ValueError(
            f"{FLAG} runs generation on a static KV cache, but --cache_implementation is {cache_implementation!r}: "
            f"drop --cache_implementation (or give static), or drop {FLAG}"
        )


def report(blocker: str | None, where: str) -> bool:
    """One log line saying whether the flag applies (``where``: which generation); True when it does."""
    if blocker is None:
        logger.info("%s: %s runs on a static KV cache with a compiled decode step", FLAG, where)
        return True
    logger.info("%s: not applied to %s (%s); it keeps the dynamic cache", FLAG, where, blocker)
    return False
