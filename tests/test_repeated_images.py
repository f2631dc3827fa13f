"""Each distinct screenshot processed and encoded once per GRPO step: same tensors as the full batch, less work."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PIL import Image

from r1_gui.repeated_images import (
    ImageProcessorCache,
    cached_image_processor,
    distinct_images,
    encode_each_image_once,
    image_key,
)


def screen(seed: int, size=(56, 112)) -> Image.Image:
    pixels = np.random.default_rng(seed).integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)
    return Image.fromarray(pixels)


@pytest.fixture(scope="module")
def processor(tiny_qwen2_vl):
    from r1_gui.processing import CHAT_TEMPLATE, load_processor

    return load_processor(tiny_qwen2_vl, max_pixels=50176, chat_template=CHAT_TEMPLATE)


class CountingProcessor:
    """Wraps an image processor and records how many images each call processed."""

    def __init__(self, inner):
        self.inner = inner
        self.calls: list[int] = []

    def __call__(self, images, **kwargs):
        self.calls.append(len(images) if isinstance(images, list) else 1)
        return self.inner(images, **kwargs)


# ---- image keys ---------------------------------------------------------------------------------------------------
def test_image_key_is_equal_for_equal_pixels_only():
    a, a_copy, b = screen(0), screen(0), screen(1)
    assert image_key(a) == image_key(a_copy)
    assert image_key(a) != image_key(b)
    assert image_key(a) != image_key(a.convert("L"))  # same picture, other mode
    assert image_key(np.asarray(a)) == image_key(np.asarray(a_copy))
    tensor_key, array_key = image_key(torch.from_numpy(np.asarray(a).copy())), image_key(np.asarray(a))
    assert (tensor_key[0], tensor_key[1:]) == ("tensor", array_key[1:])
    assert image_key("screens/a.png") is None  # a path: not compared, the call goes to the wrapped processor


# ---- the image processor ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "layout",
    [
        pytest.param([[0], [0], [1], [1], [2], [2]], id="per-prompt lists, repeats adjacent"),
        pytest.param([0, 1, 0, 1, 2, 0], id="flat list, repeats interleaved"),
        pytest.param([[0], [3], [0], [3]], id="two sizes"),
        pytest.param([0, 1, 2], id="no repeats"),
    ],
)
@pytest.mark.parametrize("tensors", ["pt", "np", None])
def test_cache_returns_what_the_processor_returns_for_the_full_list(processor, layout, tensors):
    pictures = {0: screen(0), 1: screen(1), 2: screen(2), 3: screen(3, size=(112, 56))}

    def images():  # fresh objects every time, as trl's dataset rows are
        return [[pictures[i[0]].copy()] if isinstance(i, list) else pictures[i].copy() for i in layout]

    options = {"return_tensors": tensors} if tensors else {}
    expected = processor.image_processor(images(), **options)
    counting = CountingProcessor(processor.image_processor)
    cache = ImageProcessorCache(counting)
    got = cache(images(), **options)
    assert set(got.keys()) == {"pixel_values", "image_grid_thw"}
    for key in got:
        assert type(got[key]) is type(expected[key]), key
        assert got[key].dtype == expected[key].dtype, key
        np.testing.assert_array_equal(np.asarray(got[key]), np.asarray(expected[key]), strict=True)
    distinct = len({i[0] if isinstance(i, list) else i for i in layout})
    assert counting.calls == [distinct]
    assert (cache.processed, cache.requested) == (distinct, len(layout))
    again = cache(images(), return_tensors="pt")  # the step's second call, in torch: nothing left to process
    assert torch.equal(again["pixel_values"], torch.as_tensor(np.asarray(expected["pixel_values"])))
    assert counting.calls == [distinct]


@pytest.mark.parametrize(
    "kwargs, images",
    [
        pytest.param({"return_tensors": "mlx"}, [screen(0), screen(0)], id="another tensor type"),
        pytest.param({"return_tensors": "pt"}, [], id="no images"),
        pytest.param({"return_tensors": "pt"}, [screen(0), "a.png"], id="an image given by path"),
    ],
)
def test_cache_passes_calls_it_cannot_assemble_to_the_processor(kwargs, images):
    seen = []

    def inner(images, **kwargs):
        seen.append((images, kwargs))
        return "the processor's own output"

    cache = ImageProcessorCache(inner)
    assert cache(images, **kwargs) == "the processor's own output"
    assert seen == [(images, kwargs)]
    assert cache.processed == 0


def test_cache_keeps_results_apart_per_option(processor):
    """A second call with other sizes must not reuse pixels processed under the first call's sizes."""
    cache = ImageProcessorCache(processor.image_processor)
    small = cache([screen(0)], return_tensors="pt", size={"shortest_edge": 56 * 56, "longest_edge": 56 * 56})
    large = cache([screen(0)], return_tensors="pt")
    assert cache.processed == 2
    assert small["pixel_values"].shape[0] < large["pixel_values"].shape[0]


def test_cached_image_processor_is_put_back_even_after_an_error(processor):
    inner = processor.image_processor
    with pytest.raises(RuntimeError, match="boom"):
        with cached_image_processor(processor) as cache:
            assert processor.image_processor is cache
            assert cache.merge_size == inner.merge_size  # other attributes are the wrapped processor's
            raise RuntimeError("boom")
    assert processor.image_processor is inner


def test_processor_call_through_the_cache_gives_the_same_batch(processor):
    """The path trl takes: the processor's chat template call, images inside the messages."""
    rows = [screen(i) for i in (0, 0, 1, 1, 2, 2)]
    conversations = [
        [{"role": "user", "content": [{"type": "image", "image": image}, {"type": "text", "text": f"go back {i}"}]}]
        for i, image in enumerate(rows)
    ]
    options = {"add_generation_prompt": True, "tokenize": True, "return_dict": True, "padding": True}
    expected = processor.apply_chat_template(conversation=conversations, return_tensors="pt", **options)
    with cached_image_processor(processor) as cache:
        got = processor.apply_chat_template(conversation=conversations, return_tensors="pt", **options)
    assert cache.processed == 3
    assert expected.keys() == got.keys()
    for key in expected:
        assert torch.equal(expected[key], got[key]), key


# ---- distinct images in a pixel batch -----------------------------------------------------------------------------
def pixel_batch(contents: list[int], grids: list[tuple[int, int, int]]):
    chunks = [torch.full((t * h * w, 3), float(c)) for c, (t, h, w) in zip(contents, grids, strict=True)]
    return torch.cat(chunks), torch.tensor(grids)


@pytest.mark.parametrize(
    "contents, grids, distinct, inverse",
    [
        ([1, 2, 3], [(1, 2, 2)] * 3, [0, 1, 2], [0, 1, 2]),
        ([1, 1, 1, 1], [(1, 2, 2)] * 4, [0], [0, 0, 0, 0]),
        ([1, 1, 2, 2], [(1, 2, 2)] * 4, [0, 2], [0, 0, 1, 1]),
        ([1, 2, 1, 2], [(1, 2, 2)] * 4, [0, 1], [0, 1, 0, 1]),
        # same number of patches and values, other grid: a different image for the vision tower
        ([1, 1], [(1, 2, 2), (1, 1, 4)], [0, 1], [0, 1]),
        # other sizes
        ([1, 1, 1], [(1, 2, 2), (1, 2, 4), (1, 2, 2)], [0, 1], [0, 1, 0]),
    ],
)
def test_distinct_images(contents, grids, distinct, inverse):
    pixels, grid = pixel_batch(contents, grids)
    assert distinct_images(pixels, grid) == (distinct, inverse)


# ---- the vision tower ---------------------------------------------------------------------------------------------
@pytest.fixture(params=["qwen2_vl", "qwen2_5_vl"])
def tiny_with_processor(request):
    from transformers import AutoModelForImageTextToText

    from r1_gui.processing import CHAT_TEMPLATE, load_processor

    path = request.getfixturevalue("tiny_" + request.param)
    model = AutoModelForImageTextToText.from_pretrained(path).eval()
    return model, load_processor(path, max_pixels=50176, chat_template=CHAT_TEMPLATE)


def batch_of(processor, images):
    conversations = [
        [{"role": "user", "content": [{"type": "image", "image": image}, {"type": "text", "text": "open the app"}]}]
        for image in images
    ]
    return processor.apply_chat_template(
        conversation=conversations,
        add_generation_prompt=True,
        tokenize=True,
        return_dict=True,
        padding=True,
        return_tensors="pt",
    )


def count_encoded_patches(model) -> list[int]:
    seen: list[int] = []
    encoder = next(m for m in model.modules() if hasattr(m, "visual") and hasattr(m, "get_image_features"))
    encoder.visual.register_forward_pre_hook(lambda module, args: seen.append(args[0].shape[0]))
    return seen


def test_encode_each_image_once_gives_the_same_logits(tiny_with_processor):
    model, processor = tiny_with_processor
    inputs = batch_of(processor, [screen(i) for i in (0, 0, 0, 1, 1, 2)])
    patches = inputs["image_grid_thw"].prod(-1).tolist()
    seen = count_encoded_patches(model)
    with torch.no_grad():
        expected = model(**inputs).logits
        with encode_each_image_once(model):
            got = model(**inputs).logits
    assert torch.equal(expected, got)
    assert seen == [sum(patches), patches[0] + patches[3] + patches[5]]


def test_encode_each_image_once_leaves_training_passes_alone(tiny_with_processor):
    """With gradients on, every row keeps its own encoder pass (each copy gets its own gradient path)."""
    model, processor = tiny_with_processor
    inputs = batch_of(processor, [screen(0), screen(0)])
    seen = count_encoded_patches(model)
    encoder = next(m for m in model.modules() if hasattr(m, "visual") and hasattr(m, "get_image_features"))
    with encode_each_image_once(model):
        model(**inputs).logits.sum().backward()
    assert seen == [int(inputs["image_grid_thw"].prod(-1).sum())]
    assert "get_image_features" not in encoder.__dict__  # the model is as it was


def test_encode_each_image_once_without_a_vision_tower_does_nothing():
    model = torch.nn.Linear(2, 2)
    with encode_each_image_once(model):
        pass
    assert "get_image_features" not in model.__dict__
