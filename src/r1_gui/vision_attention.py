"""Batched attention for the Qwen-VL vision towers: equal-length windows (and images) as one sdpa call each.

Under sdpa, transformers (5.23) runs the vision tower's attention one window (Qwen2.5-VL) or one image (Qwen2-VL,
Qwen3-VL, and Qwen2.5-VL's full-attention layers) at a time: a batch of 64 AITW screenshots makes tens of thousands of
`scaled_dot_product_attention` calls per forward, and on a GPU the pass is bound by kernel launches (docs/notes.md,
"The vision tower on a GPU"). Only the flash-attention branch hands the whole packed sequence and its boundaries (`cu_seqlens`) to one
attention call, and flash-attn cannot be installed on every machine. `use_batched_window_attention(model)` routes
the vision tower through that branch with an attention function of our own: it gathers the windows of each length
into one batch and runs sdpa once per distinct length (a handful: the full windows, the clipped edge windows), then
scatters the outputs back. Each window still attends to itself only, so the output is the per-window one.

Towers without windows (Qwen2-VL, Qwen3-VL): every layer attends within each whole image, one sdpa call per image
and layer; batched, that is one call per distinct image size (a batch of same-size screenshots: one call a layer).
So `batched_windows` applies to them as it is, with the image as the window; there is no window setting to change.

The attention function is registered under a name containing "flash" because that is what selects the varlen
branch in the model's code (`is_flash_attention_requested` tests for the substring); no flash-attn kernel is used.
Only the vision config changes; the language model keeps its attention implementation.

`apply_vision_attention(model, choice, device_type)` is what the entry points call with their --vision_attention
flag: `auto` (the default) batches the windows on CUDA, where the per-window calls are launch-bound, and leaves the
CPU path as transformers has it (there the batched call measured no faster: 2 screenshots through 8 layers of the
3B tower, forward and backward, 43-57 s per-window vs 50-55 s batched, noise on the 2-core box); `batched_windows`
batches them on any device; `model` keeps the tower's own attention. Under `auto` a tower that does not run sdpa
(loaded with --attn_implementation flash_attention_2, whose varlen kernel already takes the packed windows in one
call, or eager) is left as it is; `batched_windows` asked for where it cannot apply (such a tower, or a model
without a Qwen-VL tower) is refused with one line naming the flag (`check_vision_attention` catches the attention
implementations before any weights load).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from r1_gui.seam.models import attention_implementation, set_attention_implementation

if TYPE_CHECKING:
    import torch

logger = logging.getLogger(__name__)

VISION_ATTENTION_CHOICES = ("auto", "batched_windows", "model")

# "flash" in the name selects the model's cu_seqlens (varlen) branch; the function itself is plain sdpa
BATCHED_WINDOWS = "r1_gui_batched_windows_via_flash_branch"


def batched_window_attention(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None = None,
    scaling: float | None = None,
    dropout: float = 0.0,
    cu_seq_lens_q: torch.Tensor | None = None,
    **kwargs,
) -> tuple[torch.Tensor, None]:
    """Attention within each packed sequence of `query` (1, heads, tokens, dim) given by `cu_seq_lens_q`, one sdpa
    call per distinct sequence length. Returns (1, tokens, heads, dim), as the attention interfaces do."""
    import torch

    from r1_gui.seam.models import sdpa_attention

    tokens = query.shape[2]
    if cu_seq_lens_q is None:
        cu_seq_lens_q = torch.tensor([0, tokens], device=query.device)
    starts = cu_seq_lens_q[:-1].tolist()
    lengths = (cu_seq_lens_q[1:] - cu_seq_lens_q[:-1]).tolist()
    by_length: dict[int, list[int]] = {}
    for start, length in zip(starts, lengths, strict=True):
        if length > 0:
            by_length.setdefault(length, []).append(start)
    output = query.new_empty(tokens, query.shape[1], query.shape[3])
    for length, window_starts in by_length.items():
        offsets = torch.arange(length, device=query.device)
        index = (torch.tensor(window_starts, device=query.device)[:, None] + offsets).flatten()
        # (1, heads, windows * length, dim) -> (windows, heads, length, dim)
        q, k, v = (
            tensor[0][:, index].unflatten(1, (len(window_starts), length)).transpose(0, 1)
            for tensor in (query, key, value)
        )
        attended = sdpa_attention(module, q, k, v, scaling=scaling, dropout=dropout)
        output[index] = attended.flatten(0, 1)  # (windows, length, heads, dim) -> (windows * length, heads, dim)
    return output.unsqueeze(0), None


# class names of the Qwen-VL vision towers: Qwen2-VL / Qwen2.5-VL (windows), Qwen3-VL dense and MoE (no windows)
TOWER_CLASS_SUFFIXES = ("VisionTransformerPretrainedModel", "VLVisionModel", "VLMoeVisionModel")
SDPA = ("sdpa", BATCHED_WINDOWS)  # the implementations a tower can be batched from (or already is)


def _vision_configs(model: torch.nn.Module) -> list:
    """The configs of the model's Qwen-VL vision towers (found through wrappers)."""
    configs = []
    for module in model.modules():
        config = getattr(module, "config", None)
        if type(module).__name__.endswith(TOWER_CLASS_SUFFIXES) and config is not None:
            configs.append(config)
    return configs


def use_batched_window_attention(model: torch.nn.Module) -> bool:
    """Make the model's Qwen-VL vision tower run its attention as one sdpa call per distinct window length.

    Applies where the tower uses sdpa; returns whether it applied (False for other models and implementations)."""
    from transformers import AttentionInterface

    configs = [c for c in _vision_configs(model) if attention_implementation(c) in SDPA]
    if not configs:
        return False
    AttentionInterface.register(BATCHED_WINDOWS, batched_window_attention)
    for config in configs:
        set_attention_implementation(config, BATCHED_WINDOWS)
    logger.info("the vision tower runs one sdpa call per window length (r1_gui.vision_attention)")
    return True


def check_vision_attention(choice: str, attn_implementation: str | None = None) -> None:
    """A ValueError naming the flag unless ``choice`` is one of VISION_ATTENTION_CHOICES and, for
    `batched_windows`, the model is loaded with sdpa (``attn_implementation`` None is transformers' default, sdpa)."""
    if choice not in VISION_ATTENTION_CHOICES:
        raise ValueError(f"--vision_attention must be one of {', '.join(VISION_ATTENTION_CHOICES)}, got {choice!r}")
    if choice == "batched_windows" and attn_implementation not in (None, *SDPA):
        raise ValueError(_not_applicable(f"the model is loaded with --attn_implementation {attn_implementation}"))


def _not_applicable(reason: str) -> str:
    return (
        f"--vision_attention batched_windows does not apply: {reason} (it batches the per-window, or per-image, "
        "sdpa calls of a Qwen-VL vision tower; flash_attention_2 already makes one call); use auto or model"
    )


def apply_vision_attention(model: torch.nn.Module, choice: str, device_type: str) -> bool:
    """Apply a --vision_attention choice to a loaded model that will run on ``device_type`` ("cuda", "cpu", ...):
    batched windows for `batched_windows`, and for `auto` on CUDA; nothing for `model`. Returns whether the vision
    tower now runs batched windows."""
    check_vision_attention(choice)
    if choice == "model" or (choice == "auto" and device_type != "cuda"):
        return False
    if use_batched_window_attention(model):
        return True
    if choice == "batched_windows":  # asked for by name where it cannot act: say so rather than run without it
        from r1_gui.cli_errors import UserError

        towers = {attention_implementation(config) for config in _vision_configs(model)}
        reason = f"the vision tower runs {', '.join(sorted(towers))} attention" if towers else "no Qwen-VL vision tower"
        raise UserError(_not_applicable(reason))
    return False
