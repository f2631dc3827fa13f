"""Process, encode and prefill each distinct prompt once per GRPO step.

GRPO answers every prompt `num_generations` times, and trl (1.16) builds the generation batch by repeating each prompt
that many times. For a vision-language model every copy of the screenshot then goes through the image processor twice
per step (once to tokenize the prompts for generation, once to build the training inputs) and through the vision
tower once more during generation, and `generate` prefills every copy of the prompt, although the copies are the same.
The helpers below do that work once per distinct screenshot or prompt and hand back what the full batch would have:

- `ImageProcessorCache` stands in for a processor's image processor: it processes the distinct images of a call
  (and of earlier calls in the same step) once and assembles `pixel_values` / `image_grid_thw` for the full list.
- `encode_each_image_once(model)` makes the vision encoder of a Qwen-VL model encode each distinct image of a batch
  once while gradients are off (generation); the features of the repeats are copies of the same tensors. With
  `with_gradients=True` it does so in the loss pass too: the repeats index the same features, so autograd sums
  each copy's gradient into the one encoder pass (the gradient of the full batch, up to float summation order).
- `prefill_each_prompt_once(model)` makes `generate` run its prefill on the distinct prompts only and copy their
  cache and first logits to the repeats; every row then decodes (and samples) as before.
- `whole_groups_shuffled(batch, group_size)`: trl shuffles the generation batch row by row before splitting it
  into the loss pass's micro-batches (`--steps_per_generation` > 1), which scatters a screenshot's answers over
  every micro-batch, and each micro-batch then encodes it again. The trainer shuffles whole groups instead
  (`GUIGRPOTrainer.shuffle_generation_batch`), so a micro-batch holds as few screenshots as its size allows. The
  loss of a generation batch is a sum over its micro-batches whichever rows each holds, for every loss type whose
  micro-batch terms are normalised by the whole batch or by equal row counts (dapo, cispo, grpo, dr_grpo, ...);
  bnpo normalises by each micro-batch's token count and `top_entropy_quantile` ranks within it, so there the
  (already random) partition has another law.

The processed pixels and image features are the same values. The prefill is the same computation on fewer rows; a
matrix product over fewer rows may round its last bit differently on some backends (on the CPU machine the demo's
weights after 5 GRPO steps were identical with and without it). All apply to the Qwen-VL layout (patches of all images
concatenated, one `image_grid_thw` row per image, `mm_token_type_ids`); anything else passes through unchanged.
Qwen3-VL's vision tower also returns deepstack features (per feeding vision layer, split by image like the pooled
features), which the language model adds to its first layers' hidden states at the image tokens: they are copied
and selected with the pooled features, image for image, so the language model gets what the full batch gives it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np
import torch
from transformers.feature_extraction_utils import BatchFeature

from r1_gui.seam.models import image_encoder, image_features_wrapped, keep_static_layers_static, prefill_wrapped

QWEN_IMAGE_KEYS = {"pixel_values", "image_grid_thw"}


def _flat_images(images) -> list:
    """The images of a processor call in order: a single image, a list, or a list of per-prompt lists."""
    if isinstance(images, (list, tuple)):
        return [image for item in images for image in _flat_images(item)]
    return [images]


def image_key(image) -> tuple | None:
    """A key equal for images with the same pixels; None for inputs we do not know how to compare."""
    from PIL import Image

    if isinstance(image, Image.Image):
        return ("pil", image.mode, image.size, image.tobytes())
    if isinstance(image, np.ndarray):
        return ("array", image.dtype.str, image.shape, image.tobytes())
    if isinstance(image, torch.Tensor):
        array = image.detach().cpu().contiguous().numpy()
        return ("tensor", array.dtype.str, array.shape, array.tobytes())
    return None


class ImageProcessorCache:
    """An image processor that processes each distinct image once and remembers the result until `clear()`.

    Calls return the same `pixel_values` and `image_grid_thw` as the wrapped processor would for the full list (the
    Qwen-VL processors handle each image on its own, so assembling per-image results changes no value), as torch
    tensors or numpy arrays as asked. Calls whose outputs have other keys, that ask for other tensor types, or whose
    images we cannot compare go to the wrapped processor. Every other attribute is the wrapped processor's.
    """

    def __init__(self, image_processor):
        self.image_processor = image_processor
        self.cache: dict[tuple, tuple[torch.Tensor, torch.Tensor]] = {}
        self.processed = 0  # images the wrapped processor processed, for tests and benchmarks
        self.requested = 0  # images asked for

    def __getattr__(self, name):
        return getattr(self.__dict__["image_processor"], name)

    def clear(self) -> None:
        self.cache.clear()

    def __call__(self, images=None, *args, **kwargs):
        flat = _flat_images(images) if images is not None else []
        keys = [image_key(image) for image in flat]
        wanted = kwargs.get("return_tensors")
        if args or not flat or wanted not in (None, "np", "pt") or any(key is None for key in keys):
            return self.image_processor(images, *args, **kwargs)
        # one cache for numpy and torch outputs: the processor builds numpy arrays and converts them at the end
        options = repr(sorted((name, value) for name, value in kwargs.items() if name != "return_tensors"))
        keys = [(options, key) for key in keys]
        todo: dict[tuple, object] = {}
        for key, image in zip(keys, flat, strict=True):
            if key not in self.cache:
                todo.setdefault(key, image)
        if todo:
            output = self.image_processor(list(todo.values()), **{**kwargs, "return_tensors": "pt"})
            if set(output.keys()) != QWEN_IMAGE_KEYS:
                return self.image_processor(images, **kwargs)
            grids = output["image_grid_thw"]
            chunks = output["pixel_values"].split(grids.prod(-1).tolist())
            for key, chunk, grid in zip(todo, chunks, grids, strict=True):
                self.cache[key] = (chunk, grid)
            self.processed += len(todo)
        self.requested += len(flat)
        pixel_values = torch.cat([self.cache[key][0] for key in keys])
        image_grid_thw = torch.stack([self.cache[key][1] for key in keys])
        if wanted != "pt":
            pixel_values, image_grid_thw = pixel_values.numpy(), image_grid_thw.numpy()
        return BatchFeature({"pixel_values": pixel_values, "image_grid_thw": image_grid_thw}, tensor_type=wanted)


@contextlib.contextmanager
def cached_image_processor(processor) -> Iterator[ImageProcessorCache | None]:
    """Within the block, `processor.image_processor` is an `ImageProcessorCache` (none for a processor without one)."""
    inner = getattr(processor, "image_processor", None)
    if inner is None or isinstance(inner, ImageProcessorCache):
        yield inner
        return
    cache = ImageProcessorCache(inner)
    processor.image_processor = cache
    try:
        yield cache
    finally:
        processor.image_processor = inner


def group_equal(count: int, fingerprints: list, same) -> tuple[list[int], list[int]]:
    """Indices of the distinct items among `count` and every item's position among them. Only items with equal
    fingerprints are compared with `same(i, j)`, so a batch without repeats costs no full comparisons."""
    distinct: list[int] = []
    inverse: list[int] = []
    seen: dict = {}
    for index in range(count):
        candidates = seen.setdefault(fingerprints[index], [])
        match = next((position for position in candidates if same(distinct[position], index)), None)
        if match is None:
            match = len(distinct)
            distinct.append(index)
            candidates.append(match)
        inverse.append(match)
    return distinct, inverse


def distinct_images(pixel_values: torch.Tensor, grid_thw: torch.Tensor) -> tuple[list[int], list[int]]:
    """For the images of a Qwen-VL batch: the indices of the distinct ones and, for every image, the position of
    its copy among them (fingerprint: grid and pixel sum; equal fingerprints are then compared in full)."""
    chunks = pixel_values.split(grid_thw.prod(-1).tolist())
    sums = torch.stack([chunk.float().sum() for chunk in chunks]).tolist() if chunks else []
    fingerprints = [(tuple(grid), total) for grid, total in zip(grid_thw.tolist(), sums, strict=True)]
    return group_equal(len(chunks), fingerprints, lambda i, j: torch.equal(chunks[i], chunks[j]))


def encode_each_image_once(model: torch.nn.Module, with_gradients: bool = False):
    """Within the block (a context manager) the vision tower encodes each distinct image of a batch once: while
    gradients are off, or also while they are on with `with_gradients=True` (the loss pass; each copy's gradient is
    summed into the distinct image's features by autograd, as the full batch's encoder parameters would receive it)."""

    def get_image_features(original, pixel_values, image_grid_thw=None, **kwargs):
        skip = torch.is_grad_enabled() and not with_gradients
        if skip or image_grid_thw is None or kwargs.get("output_hidden_states"):
            return original(pixel_values, image_grid_thw, **kwargs)
        distinct, inverse = distinct_images(pixel_values, image_grid_thw)
        if len(distinct) == len(inverse):
            return original(pixel_values, image_grid_thw, **kwargs)
        chunks = pixel_values.split(image_grid_thw.prod(-1).tolist())
        output = original(torch.cat([chunks[i] for i in distinct]), image_grid_thw[distinct], **kwargs)
        if not isinstance(getattr(output, "pooler_output", None), (tuple, list)):
            return original(pixel_values, image_grid_thw, **kwargs)  # a layout this helper does not know
        output.pooler_output = tuple(output.pooler_output[position] for position in inverse)
        if getattr(output, "deepstack_features", None) is not None:
            # Qwen3-VL: per vision layer that feeds the language model, the features split by image like the pooler's
            output.deepstack_features = [
                tuple(layer[position] for position in inverse) for layer in output.deepstack_features
            ]
        if getattr(output, "last_hidden_state", None) is not None:
            # per patch, images in batch order (Qwen2.5-VL permutes patches within each image only)
            parts = output.last_hidden_state.split(image_grid_thw[distinct].prod(-1).tolist())
            output.last_hidden_state = torch.cat([parts[position] for position in inverse])
        return output

    return image_features_wrapped(model, get_image_features)


# keys generate() passes to a Qwen-VL prefill; any other key leaves the prefill as it is
PREFILL_KEYS = {
    "attention_mask",
    "mm_token_type_ids",
    "position_ids",
    "mm_encoder_outputs",
    "logits_to_keep",
    "past_key_values",
    "use_cache",
}


def _rows_images(mm_token_type_ids: torch.Tensor, images: tuple) -> list[list[int]] | None:
    """Which of the batch's images (in order) each row holds, from its count of image tokens; None if they do not
    add up."""
    counts = (mm_token_type_ids == 1).sum(1).tolist()
    rows, next_image = [], 0
    for count in counts:
        held = []
        while count > 0 and next_image < len(images):
            held.append(next_image)
            count -= images[next_image].shape[0]
            next_image += 1
        if count != 0:
            return None
        rows.append(held)
    return rows if next_image == len(images) else None


def distinct_prompts(
    input_ids: torch.Tensor, model_kwargs: dict
) -> tuple[list[int], list[int], list[list[int]]] | None:
    """For a generation batch about to be prefilled: the distinct rows (same tokens, mask, positions and image
    features), every row's position among them, and each row's images. None where a prefill of the distinct rows
    would not stand for the whole batch (other inputs, a cache that already holds tokens, no repeats)."""
    if set(model_kwargs) - PREFILL_KEYS or model_kwargs.get("mm_token_type_ids") is None:
        return None
    cache = model_kwargs.get("past_key_values")
    if cache is not None and (cache.get_seq_length() != 0 or not hasattr(cache, "reorder_cache")):
        return None
    encoded = model_kwargs.get("mm_encoder_outputs") or {}
    if set(encoded) - {"image"}:
        return None
    images = tuple(encoded["image"].pooler_output) if "image" in encoded else ()
    rows_images = _rows_images(model_kwargs["mm_token_type_ids"], images)
    if rows_images is None:
        return None
    per_row = [model_kwargs.get(key) for key in ("attention_mask", "mm_token_type_ids")]
    per_row = [tensor for tensor in per_row if tensor is not None]
    positions = model_kwargs.get("position_ids")

    def same(i: int, j: int) -> bool:  # rows with the same tokens
        if len(rows_images[i]) != len(rows_images[j]):
            return False
        if any(not torch.equal(tensor[i], tensor[j]) for tensor in per_row):
            return False
        if positions is not None and not torch.equal(positions[:, i], positions[:, j]):
            return False
        return all(torch.equal(images[a], images[b]) for a, b in zip(rows_images[i], rows_images[j], strict=True))

    fingerprints = [tuple(row) for row in input_ids.tolist()]
    distinct, inverse = group_equal(input_ids.shape[0], fingerprints, same)
    if len(distinct) == len(inverse):
        return None
    return distinct, inverse, rows_images


@contextlib.contextmanager
def prefill_each_prompt_once(model: torch.nn.Module) -> Iterator[None]:
    """Within the block, `generate` prefills each distinct prompt of a batch once and copies its cache and first
    logits to the repeats; decoding then runs on every row as before. Applies to Qwen-VL models generating from a
    fresh cache; other calls prefill as usual."""
    if image_encoder(model) is None:
        yield
        return
    with prefill_wrapped(model, prefill_distinct_prompts):
        yield


def prefill_distinct_prompts(prefill, input_ids, generation_config, model_kwargs, *args, **kwargs):
    """`generate`'s prefill (``prefill``, the model's own) on the batch's distinct prompts, its cache and first logits
    copied to the repeats; the whole batch's prefill where `distinct_prompts` finds no plan."""
    plan = distinct_prompts(input_ids, model_kwargs)
    if plan is None:
        return prefill(input_ids, generation_config, model_kwargs, *args, **kwargs)
    distinct, inverse, rows_images = plan
    index = torch.tensor(distinct, device=input_ids.device)
    subset = dict(model_kwargs)
    for key in ("attention_mask", "mm_token_type_ids"):
        if subset.get(key) is not None:
            subset[key] = subset[key].index_select(0, index)
    if subset.get("position_ids") is not None:
        subset["position_ids"] = subset["position_ids"].index_select(1, index)
    if "image" in (subset.get("mm_encoder_outputs") or {}):
        encoded = subset["mm_encoder_outputs"]["image"]
        kept = [i for row in distinct for i in rows_images[row]]
        features = {"pooler_output": tuple(encoded.pooler_output[i] for i in kept)}
        if getattr(encoded, "deepstack_features", None) is not None:  # Qwen3-VL: the same images' deepstack
            features["deepstack_features"] = [tuple(layer[i] for i in kept) for layer in encoded.deepstack_features]
        subset["mm_encoder_outputs"] = {"image": type(encoded)(**features)}
    output = prefill(input_ids.index_select(0, index), generation_config, subset, *args, **kwargs)
    expand = torch.tensor(inverse, device=input_ids.device)
    output.logits = output.logits.index_select(0, expand)
    cache = model_kwargs.get("past_key_values")
    if cache is not None:
        cache.reorder_cache(expand)
        keep_static_layers_static(cache)
    return output


def whole_groups_shuffled(batch: dict, group_size: int) -> dict | None:
    """trl's `shuffle_sequence_dict`, moving whole groups: the batch's rows in blocks of ``group_size`` consecutive
    rows, the blocks in a random order (torch's generator), every sequence value permuted in unison, rows within a
    block kept in order. None where the rows are not such blocks (a batch size that is not a multiple, or a block
    whose rows differ in prompt or images: a process's share of a group split across processes)."""
    sizes = {len(value) for value in batch.values() if value is not None and not _is_scalar(value)}
    if len(sizes) != 1:
        return None
    rows = sizes.pop()
    if group_size < 1 or rows % group_size:
        return None
    for key in ("prompt_ids", "prompt_mask", "pixel_values", "image_grid_thw", "num_images"):
        value = batch.get(key)  # per row (trl split the pixel values and grids by row before shuffling)
        if value is None:
            continue
        for start in range(0, rows, group_size):
            first = value[start]
            if not all(_same(first, value[row]) for row in range(start + 1, start + group_size)):
                return None
    blocks = torch.randperm(rows // group_size)
    permutation = (blocks[:, None] * group_size + torch.arange(group_size)).flatten()

    def permute(value):
        if value is None or _is_scalar(value):
            return value
        if isinstance(value, torch.Tensor):
            return value[permutation]
        return [value[i] for i in permutation]

    return {key: permute(value) for key, value in batch.items()}


def _is_scalar(value) -> bool:
    return isinstance(value, torch.Tensor) and value.ndim == 0


def _same(a, b) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.shape == b.shape and torch.equal(a, b)
    return a == b
