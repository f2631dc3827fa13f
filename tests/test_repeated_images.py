"""Each distinct screenshot processed and encoded once per GRPO step: same tensors as the full batch, less work."""

from __future__ import annotations

import contextlib
from unittest import mock

import numpy as np
import pytest
import torch
from helpers.gradients import assert_same_gradient
from helpers.screens import batch_of, screen

from r1_gui.training.repeated_prompts import (
    ImageProcessorCache,
    cached_image_processor,
    distinct_images,
    distinct_prompts,
    encode_each_image_once,
    image_encoder,
    image_key,
    prefill_each_prompt_once,
    whole_groups_shuffled,
)


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
    texts = [f"go back {i}" for i in range(len(rows))]
    expected = batch_of(processor, rows, texts)
    with cached_image_processor(processor) as cache:
        got = batch_of(processor, rows, texts)
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
@pytest.fixture(params=["qwen2_vl", "qwen2_5_vl", "qwen3_vl"])
def tiny_with_processor(request):
    from transformers import AutoModelForImageTextToText

    from r1_gui.processing import CHAT_TEMPLATE, load_processor

    path = request.getfixturevalue("tiny_" + request.param)
    model = AutoModelForImageTextToText.from_pretrained(path).eval()
    return model, load_processor(path, max_pixels=50176, chat_template=CHAT_TEMPLATE)


def count_encoded_patches(model) -> list[int]:
    seen: list[int] = []
    encoder = image_encoder(model)
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
    encoder = image_encoder(model)
    with encode_each_image_once(model):
        model(**inputs).logits.sum().backward()
    assert seen == [int(inputs["image_grid_thw"].prod(-1).sum())]
    assert "get_image_features" not in encoder.__dict__  # the model is as it was


def gradients_of(model, inputs, weights) -> dict[str, torch.Tensor]:
    """Every parameter's gradient of a fixed weighted sum of the logits (a stand-in for the GRPO loss)."""
    model.zero_grad()
    (model(**inputs).logits * weights).sum().backward()
    return {name: param.grad.clone() for name, param in model.named_parameters() if param.grad is not None}


@pytest.mark.parametrize(
    "copies",
    [
        (0, 0, 0, 1, 1, 2),  # three screenshots, repeated 3, 2 and 1 times
        (0, 1, 0, 1),  # repeats apart from each other
        (3, 3, 3, 3),  # one screenshot, four answers (a GRPO group)
    ],
)
def test_loss_pass_encodes_each_image_once_with_the_full_batch_gradient(tiny_with_processor, copies):
    """With gradients on and with_gradients=True the repeats share one encoder pass and its gradient is the sum
    of theirs: every parameter's gradient equals the undeduplicated one."""
    model, processor = tiny_with_processor
    model.train()
    inputs = batch_of(processor, [screen(i) for i in copies])
    patches = inputs["image_grid_thw"].prod(-1).tolist()
    plain_logits = model(**inputs).logits
    weights = torch.randn(plain_logits.shape, generator=torch.Generator().manual_seed(0))
    with encode_each_image_once(model, with_gradients=True):  # the log-probs of the loss pass are the same values
        torch.testing.assert_close(model(**inputs).logits, plain_logits, rtol=0, atol=0)
    seen = count_encoded_patches(model)
    expected = gradients_of(model, inputs, weights)
    with encode_each_image_once(model, with_gradients=True):
        got = gradients_of(model, inputs, weights)
    first = {image: index for index, image in reversed(list(enumerate(copies)))}
    assert seen == [sum(patches), sum(patches[index] for index in sorted(first.values()))]
    assert expected.keys() == got.keys()
    assert any(name.startswith(("visual.", "model.visual.")) for name in expected)  # the encoder is in it
    if model.config.model_type == "qwen3_vl":  # the deepstack mergers feed the language model's first layers
        assert any(".deepstack_merger_list." in name for name in expected)
    for name in expected:
        assert_same_gradient(got[name], expected[name], name)


def test_encode_each_image_once_without_a_vision_tower_does_nothing():
    model = torch.nn.Linear(2, 2)
    with encode_each_image_once(model):
        pass
    assert "get_image_features" not in model.__dict__


# ---- the prefill --------------------------------------------------------------------------------------------------
def record_prefill_rows(model) -> list[int]:
    """The batch size of every language-model pass (the first of a generate call is the prefill)."""
    seen: list[int] = []
    encoder = image_encoder(model)
    encoder.language_model.register_forward_pre_hook(
        lambda module, args, kwargs: seen.append(kwargs["inputs_embeds"].shape[0]), with_kwargs=True
    )
    return seen


@pytest.mark.parametrize("cache_implementation", [None, "static"])  # trl's --cache_implementation
def test_prefill_each_prompt_once_generates_the_same_tokens(tiny_with_processor, cache_implementation):
    """Sampling from the same seed, the dedupe'd prefill gives the same tokens, with the default (dynamic) and the
    static KV cache; only the prefill runs on the distinct prompts, decoding runs on every row. The first scores agree to float32 rounding, not always bit for bit: a matrix
    product over 4 rows may round differently from the same rows inside a product over 6 (on this CPU the tiny
    model's first logits differ in the last bit for two rows; the demo's weights after 5 GRPO steps are identical)."""
    model, processor = tiny_with_processor
    processor.tokenizer.padding_side = "left"
    pictures = [screen(0), screen(0), screen(1), screen(1), screen(1), screen(2)]
    texts = ["go back", "go back", "go back", "go back", "open the Clock app", "go back"]
    inputs = batch_of(processor, pictures, texts)
    seen = record_prefill_rows(model)
    options = {"max_new_tokens": 6, "do_sample": True, "temperature": 1.0, "return_dict_in_generate": True}
    options.update(cache_implementation=cache_implementation, disable_compile=True)  # as trl's GRPOTrainer sets it
    runs = []
    for dedupe in (False, True):
        torch.manual_seed(0)
        seen.clear()
        with torch.no_grad(), contextlib.ExitStack() as stack:
            if dedupe:
                stack.enter_context(encode_each_image_once(model))
                stack.enter_context(prefill_each_prompt_once(model))
            runs.append((model.generate(**inputs, output_scores=True, **options), list(seen)))
    (plain, plain_rows), (deduped, deduped_rows) = runs
    assert torch.equal(plain.sequences, deduped.sequences)
    for a, b in zip(plain.scores, deduped.scores, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)
    # rows 0-1, 2-3 repeat; row 4 shares row 2's screenshot but not its text; row 5 is alone
    assert plain_rows[0] == 6 and deduped_rows[0] == 4
    assert all(rows == 6 for rows in deduped_rows[1:])
    assert "_prefill" not in model.__dict__


def prefill_kwargs(texts: list[int], features: list[float], mask_starts: list[int]):
    """A fake prefill batch: rows of 4 tokens, the first two of them an image of 2 features."""
    rows = len(texts)
    input_ids = torch.tensor([[9, 9, t, t] for t in texts])
    attention_mask = torch.ones(rows, 4, dtype=torch.long)
    for row, start in enumerate(mask_starts):
        attention_mask[row, :start] = 0
    encoded = mock.Mock(pooler_output=tuple(torch.full((2, 3), f) for f in features))
    kwargs = {
        "attention_mask": attention_mask,
        "mm_token_type_ids": torch.tensor([[1, 1, 0, 0]] * rows),
        "position_ids": torch.arange(4).expand(4, rows, 4),
        "mm_encoder_outputs": {"image": encoded},
        "use_cache": True,
    }
    return input_ids, kwargs


@pytest.mark.parametrize(
    "texts, features, mask_starts, expected",
    [
        ([1, 1, 2, 2], [0.5, 0.5, 0.5, 0.5], [0, 0, 0, 0], ([0, 2], [0, 0, 1, 1])),
        ([1, 1, 1, 1], [0.5, 0.7, 0.5, 0.7], [0, 0, 0, 0], ([0, 1], [0, 1, 0, 1])),  # same text, other screenshot
        ([1, 1, 1, 1], [0.5, 0.5, 0.5, 0.5], [0, 1, 0, 1], ([0, 1], [0, 1, 0, 1])),  # other padding
        ([1, 2, 3, 4], [0.5, 0.5, 0.5, 0.5], [0, 0, 0, 0], None),  # nothing repeats
    ],
)
@pytest.mark.parametrize("missing", [None, "attention_mask", "position_ids"])
def test_distinct_prompts(texts, features, mask_starts, expected, missing):
    input_ids, kwargs = prefill_kwargs(texts, features, mask_starts)
    if missing:  # generate passes None for inputs the caller did not give
        kwargs[missing] = None
        if missing == "attention_mask" and any(mask_starts):
            expected = ([0], [0, 0, 0, 0])  # the padding was the only difference
    plan = distinct_prompts(input_ids, kwargs)
    assert (plan[:2] if plan else None) == expected
    if plan:
        assert plan[2] == [[0], [1], [2], [3]]


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda kwargs: kwargs.update(inputs_embeds=torch.zeros(1)), id="an input it does not slice"),
        pytest.param(lambda kwargs: kwargs.pop("mm_token_type_ids"), id="no token types"),
        pytest.param(
            lambda kwargs: kwargs.update(past_key_values=mock.Mock(get_seq_length=lambda: 7)), id="a filled cache"
        ),
        pytest.param(
            lambda kwargs: kwargs["mm_token_type_ids"].__setitem__((0, 2), 1), id="image tokens that do not add up"
        ),
    ],
)
def test_distinct_prompts_leaves_other_prefills_alone(change):
    input_ids, kwargs = prefill_kwargs([1, 1, 2, 2], [0.5] * 4, [0] * 4)
    change(kwargs)
    assert distinct_prompts(input_ids, kwargs) is None


# ---- micro-batches of whole groups ----------------------------------------------------------------------------------
def generation_batch(prompts: list[int], images: list[float] | None = None) -> dict:
    """A generation batch as trl holds it before shuffling: one row per answer, pixel values and grids split by row."""
    images = images or [float(p) for p in prompts]
    rows = len(prompts)
    return {
        "prompt_ids": torch.tensor([[7, p] for p in prompts]),
        "prompt_mask": torch.ones(rows, 2, dtype=torch.long),
        "completion_ids": torch.arange(rows)[:, None],  # every answer differs
        "pixel_values": [torch.full((4, 3), value) for value in images],
        "image_grid_thw": [torch.tensor([[1, 2, 2]]) for _ in prompts],
        "num_images": [1] * rows,
        "advantages": torch.arange(rows, dtype=torch.float),
        "num_items_in_batch": torch.tensor(5.0),  # a scalar stays as it is
        "old_per_token_logps": None,
    }


@pytest.mark.parametrize(
    "prompts, images, group_size, whole",
    [
        ([1, 1, 2, 2, 3, 3], None, 2, True),
        ([1, 1, 1, 1, 2, 2, 2, 2], None, 4, True),
        ([1, 1, 1, 1, 2, 2, 2, 2], None, 2, True),  # half groups are still blocks of equal rows
        ([1, 1, 2, 2, 3], None, 2, False),  # not a multiple of the group size
        ([1, 2, 2, 3, 3, 1], None, 2, False),  # a process's share starting inside a group
        ([1, 1, 2, 2], [1.0, 9.0, 2.0, 2.0], 2, False),  # same prompt tokens, other screenshot
        ([1, 1], None, 0, False),
    ],
)
def test_whole_groups_shuffled(prompts, images, group_size, whole):
    batch = generation_batch(prompts, images)
    torch.manual_seed(3)
    shuffled = whole_groups_shuffled(batch, group_size)
    if not whole:
        assert shuffled is None
        return
    order = shuffled["completion_ids"][:, 0].tolist()
    assert sorted(order) == list(range(len(prompts)))
    blocks = [order[i : i + group_size] for i in range(0, len(order), group_size)]
    assert all(block == list(range(block[0], block[0] + group_size)) and block[0] % group_size == 0 for block in blocks)
    for key in ("prompt_ids", "advantages"):  # every row value moved in unison
        assert torch.equal(shuffled[key], batch[key][order])
    for key in ("pixel_values", "image_grid_thw", "num_images"):
        assert all(_same_value(shuffled[key][i], batch[key][row]) for i, row in enumerate(order))
    assert shuffled["num_items_in_batch"] is batch["num_items_in_batch"]
    assert shuffled["old_per_token_logps"] is None


def _same_value(a, b) -> bool:
    return torch.equal(a, b) if isinstance(a, torch.Tensor) else a == b


def test_whole_groups_shuffled_visits_every_order():
    """The blocks' order is random (torch's generator), not fixed: every order of 3 groups turns up."""
    batch = generation_batch([1, 1, 2, 2, 3, 3])
    torch.manual_seed(0)
    orders = {tuple(whole_groups_shuffled(batch, 2)["prompt_ids"][::2, 1].tolist()) for _ in range(200)}
    assert len(orders) == 6
