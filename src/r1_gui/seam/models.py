"""transformers' models and generation under r1_gui's names.

Written against transformers 5.23.0 (pinned; tests/test_upstream_internals.py guards what is used here). Imports no
trl, and torch and transformers only inside the functions, so the evaluation's generators can use it at no cost.

- `prefill_wrapped(model, wrapper)`: the prefill `generate` runs is `GenerationMixin._prefill`, private; r1_gui's
  `prefill_each_prompt_once` wraps it to prefill each distinct prompt once.
- `image_encoder(model)` / `image_features_wrapped(model, wrapper)`: Qwen-VL's vision encoder is reached through its
  model's `get_image_features`, replaced on the instance for a block (`encode_each_image_once`).
- `keep_static_layers_static(cache)`: a static cache's layers (`keys`, `values`, `batch_size`, `is_initialized`,
  `is_compileable`) after their tensors were copied to a larger batch.
- `compile_config(on_every_device)`: `CompileConfig`'s private `_compile_all_devices`, transformers' own switch to
  compile the decode step off accelerators.
- `attention_implementation(config)` / `set_attention_implementation(config, name)` / `sdpa_attention(...)`: a
  config's private `_attn_implementation`, and the sdpa function of `transformers.integrations.sdpa_attention`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch


@contextlib.contextmanager
def _method_replaced(owner, name: str, replacement) -> Iterator[None]:
    """Within the block, `owner.<name>` is `replacement` (an instance attribute); afterwards it is what it was."""
    shadowed = owner.__dict__.get(name)
    setattr(owner, name, replacement)
    try:
        yield
    finally:
        if shadowed is None:
            delattr(owner, name)
        else:
            setattr(owner, name, shadowed)


def image_encoder(model: torch.nn.Module) -> torch.nn.Module | None:
    """The module whose `get_image_features(pixel_values, image_grid_thw)` runs the vision tower (Qwen-VL's inner
    model), found through wrappers (PEFT, DDP)."""
    for module in model.modules():
        if hasattr(module, "visual") and callable(getattr(module, "get_image_features", None)):
            return module
    return None


@contextlib.contextmanager
def image_features_wrapped(model: torch.nn.Module, wrapper: Callable) -> Iterator[bool]:
    """Within the block, the vision encoder's `get_image_features(pixel_values, image_grid_thw=None, **kwargs)` is
    `wrapper(get_image_features, pixel_values, image_grid_thw, **kwargs)`, the first argument the encoder's own.
    Yields whether the model has such an encoder (nothing changes without one)."""
    encoder = image_encoder(model)
    if encoder is None:
        yield False
        return
    original = encoder.get_image_features

    def get_image_features(pixel_values, image_grid_thw=None, **kwargs):
        return wrapper(original, pixel_values, image_grid_thw, **kwargs)

    with _method_replaced(encoder, "get_image_features", get_image_features):
        yield True


@contextlib.contextmanager
def prefill_wrapped(model: torch.nn.Module, wrapper: Callable) -> Iterator[bool]:
    """Within the block, the prefill `generate` runs first (transformers' private `GenerationMixin._prefill(input_ids,
    generation_config, model_kwargs, ...)`, which returns the first logits and fills the cache) is
    `wrapper(prefill, input_ids, generation_config, model_kwargs, *args, **kwargs)`, the first argument the model's
    own. Yields whether the model has one (nothing changes without it)."""
    generator = next((m for m in model.modules() if callable(getattr(m, "_prefill", None))), None)
    if generator is None:
        yield False
        return
    original = generator._prefill

    def prefill(input_ids, generation_config, model_kwargs, *args, **kwargs):
        return wrapper(original, input_ids, generation_config, model_kwargs, *args, **kwargs)

    with _method_replaced(generator, "_prefill", prefill):
        yield True


def keep_static_layers_static(cache) -> None:
    """After `reorder_cache` copied a static cache's tensors to the full batch: the layers' batch size is the full
    batch's, and the new tensors are marked as fixed addresses as the layer marks the ones it allocates, so a compiled
    decode step (a CUDA graph) can update them in place rather than skip the graph for mutated inputs."""
    import torch

    for layer in getattr(cache, "layers", ()):
        if getattr(layer, "is_compileable", False) and getattr(layer, "is_initialized", False):
            layer.batch_size = layer.keys.shape[0]
            torch._dynamo.mark_static_address(layer.keys)
            torch._dynamo.mark_static_address(layer.values)


def compile_config(on_every_device: bool) -> Any:
    """transformers' default `CompileConfig`; with ``on_every_device`` it compiles on a device other than an
    accelerator too (transformers compiles only on accelerators unless its private switch says so; its own tests set
    it the same way)."""
    from transformers import CompileConfig

    config = CompileConfig()
    if on_every_device:
        config._compile_all_devices = True
    return config


def attention_implementation(config) -> str | None:
    """The attention implementation a model config runs (`sdpa`, `flash_attention_2`, `eager`, a registered name)."""
    return config._attn_implementation


def set_attention_implementation(config, name: str) -> None:
    """Make the modules built from ``config`` run the attention function registered as ``name`` (they read the
    config's private field at each forward)."""
    config._attn_implementation = name


def sdpa_attention(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    scaling: float | None,
    dropout: float,
) -> torch.Tensor:
    """transformers' sdpa attention, unmasked and not causal: (batch, tokens, heads, dim) from (batch, heads, tokens,
    dim) query, key and value."""
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    attended, _ = sdpa_attention_forward(
        module, query, key, value, attention_mask=None, scaling=scaling, dropout=dropout, is_causal=False
    )
    return attended
