"""Random-weight Qwen2-VL / Qwen2.5-VL / Qwen3-VL models built offline, for smoke tests, the test suite and the demos.

    python -m r1_gui.tiny --arch qwen2_vl --out /tmp/tiny-qwen2vl
    python -m r1_gui.tiny --arch qwen2_5_vl --out /tmp/small-qwen25vl --size small
    python -m r1_gui.tiny --arch qwen3_vl --out /tmp/tiny-qwen3vl          # also qwen3_vl_moe (Qwen3-VL-30B-A3B's kind)

Nothing is downloaded: the tokenizer is a byte-level BPE trained on built-in GUI-agent text with the Qwen
pre-tokenizer (single digits, so coordinates are spelled digit by digit as in real Qwen models), carrying every Qwen
special token plus Aguvis's `<|recipient|>` and `<|diff_marker|>`; the chat template is r1_gui's (ChatML with
Aguvis channels); the image processor is the PIL Qwen2-VL one with min/max pixels, set up as the architecture's
checkpoints ship it (Qwen3-VL: 16-pixel patches, so 32-pixel merged tokens, and mean/std 0.5). The folder reloads
with `AutoModelForImageTextToText.from_pretrained(DIR)` and `r1_gui.processing.load_processor(DIR)`, offline.

Every architecture gets the same tokenizer and chat template, so the Qwen2-VL and Qwen2.5-VL folders are byte for
byte what they were before Qwen3-VL was added. A Qwen3-VL model keeps its own traits at tiny scale: deepstack
features from every vision block go into the first language-model layers, the rotary sections are interleaved,
the vision position embeddings are a small learned grid, and the MoE variant routes each token to 2 of 4 experts.
"""

from __future__ import annotations

import logging
import math
import random
from dataclasses import dataclass
from pathlib import Path

from r1_gui.cli_errors import UserError, cli_main, command_parser, installed
from r1_gui.model_types import MODEL_TYPES, QWEN3_VL_TYPES
from r1_gui.paths import check_output_folder, usual_file_modes

logger = logging.getLogger(__name__)

ARCHS = MODEL_TYPES  # every architecture r1_gui trains has a tiny builder

# Qwen2-VL's special tokens, in Qwen's id order, then Aguvis's two channel tokens.
QWEN_SPECIAL_TOKENS = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|object_ref_start|>",
    "<|object_ref_end|>",
    "<|box_start|>",
    "<|box_end|>",
    "<|quad_start|>",
    "<|quad_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|vision_pad|>",
    "<|image_pad|>",
    "<|video_pad|>",
)
AGUVIS_SPECIAL_TOKENS = ("<|recipient|>", "<|diff_marker|>")
# Qwen2.5 adds these as ordinary (not skipped on decode) added tokens.
QWEN25_ADDED_TOKENS = ("<tool_call>", "</tool_call>")


@dataclass(frozen=True)
class ModelSize:
    """Shape of a built model. head_dim = hidden / heads; mrope_section sums to head_dim / 2."""

    hidden: int
    intermediate: int
    layers: int
    heads: int
    kv_heads: int
    vision_dim: int
    vision_depth: int
    vision_heads: int
    vocab: int


# fmt: off
SIZES = {
    # ~0.23 M parameters (qwen2_vl): fast enough that tests build and run it in well under a second.
    "tiny": ModelSize(hidden=64, intermediate=128, layers=2, heads=4, kv_heads=2, vision_dim=32, vision_depth=2, vision_heads=2, vocab=600),
    # ~4.7 M parameters (qwen2_vl): the CPU demo's model (r1_gui.demo). A GRPO step of 128 answers takes about 14 s
    # on 2 cores before the no-signal skip (tiny's: 3.2-3.9 s), but only this size learned app names and waits
    # under GRPO.
    "small": ModelSize(hidden=256, intermediate=768, layers=4, heads=4, kv_heads=2, vision_dim=128, vision_depth=4, vision_heads=4, vocab=1024),
}
# fmt: on


def _mrope_section(head_dim: int) -> list[int]:
    """Split head_dim/2 rotary frequencies over (temporal, height, width) as Qwen does (16, 24, 24 for 128)."""
    half = head_dim // 2
    temporal = half // 4
    height = (half - temporal) // 2
    return [temporal, height, half - temporal - height]


def _interleaved_mrope_section(head_dim: int) -> list[int]:
    """Qwen3-VL's interleaved split of head_dim/2 rotary frequencies: height and width each take every third one
    (from the second and third), 20 of 64 in Qwen3-VL-8B ([24, 20, 20]); the temporal axis takes the rest."""
    half = head_dim // 2
    spatial = half * 20 // 64
    return [half - 2 * spatial, spatial, spatial]


def _corpus(n_lines: int = 4000, seed: int = 0) -> list[str]:
    """Built-in text the tokenizer is trained on: prompts, plans and actions in every supported output style."""
    rng = random.Random(seed)
    apps = (
        "Clock Camera Chrome Gmail Maps Photos Settings Calendar Messages Phone Contacts YouTube Play Store Files "
        "Calculator Weather Music Notes Drive Translate News Wallet Fitness Recorder Podcasts Keep Docs Sheets Amazon"
    ).split()
    words = (
        "open the app search for click on tap button icon field text type enter press home back swipe up down "
        "left right scroll screen page list item menu settings turn wifi bluetooth on off show me set an alarm "
        "for at am pm what is the weather in new york restaurants near pizza hotel flight price of buy add to cart "
        "remove delete install update send message call video play pause next select option keyboard done"
    ).split()
    lines = [
        "You are a GUI agent. You are given a task and a screenshot of the screen. You need to perform a series of "
        "pyautogui actions to complete the task.",
        "Please generate the next move according to the ui screenshot, instruction and previous actions.",
        "Instruction: Previous actions: None Step 1: Step 2: Step 3: Thought: Action: Observation:",
        "<think> </think> <answer> </answer> <tool_call> </tool_call>",
        '{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [',
        '"text": "',
        '"status": "success"}',
        "[{'action': 'click', 'point': [",
        "'input_text': 'no input text'}]",
    ]

    def number() -> str:
        return f"{rng.random():.{rng.choice((2, 3, 4))}f}"

    for _ in range(n_lines):
        phrase = " ".join(rng.choice(words) for _ in range(rng.randint(2, 8)))
        app = rng.choice(apps)
        lines += [
            f"Instruction: {phrase.capitalize()} in {app}.",
            f"Thought: I need to {phrase} so I {rng.choice(words)} the {app} icon.\nAction: Click on the {app} icon.",
            f"pyautogui.click(x={number()}, y={number()})",
            f"mobile.long_press(x={number()}, y={number()})",
            f"mobile.swipe(from_coord=[{number()}, {number()}], to_coord=[{number()}, {number()}])",
            f"pyautogui.write(message='{phrase}')",
            f"pyautogui.scroll(page={rng.choice(('-', ''))}0.{rng.randint(1, 9)})",
            f"mobile.open_app(app_name='{app}')",
            "pyautogui.press(keys=['enter']) mobile.home() mobile.back() mobile.wait(seconds=3)",
            "mobile.terminate(status='success') mobile.terminate(status='failure')",
            f"[{rng.randint(0, 999)}, {rng.randint(0, 999)}] ({rng.randint(0, 1000)},{rng.randint(0, 1000)})",
        ]
    return lines


def build_tokenizer(vocab_size: int, chat_template: str):
    """Train a byte-level BPE with Qwen's pre-tokenizer and wrap it as a transformers Qwen2Tokenizer."""
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers
    from transformers import Qwen2Tokenizer
    from transformers.models.qwen2.tokenization_qwen2 import PRETOKENIZE_REGEX

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(PRETOKENIZE_REGEX), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=["<|endoftext|>"],
        show_progress=False,
    )
    bpe.train_from_iterator(_corpus(), trainer=trainer)
    vocab = bpe.get_vocab()
    merges = _merges_of(bpe)
    tokenizer = Qwen2Tokenizer(
        vocab=vocab,
        merges=merges,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=list(QWEN_SPECIAL_TOKENS[1:] + AGUVIS_SPECIAL_TOKENS),
        errors="replace",
        model_max_length=32768,
    )
    tokenizer.add_tokens(list(QWEN25_ADDED_TOKENS))
    tokenizer.chat_template = chat_template
    return tokenizer


def _merges_of(bpe) -> list[tuple[str, str]]:
    """The merge pairs of a trained tokenizers BPE, read from its JSON serialization."""
    import json

    merges = json.loads(bpe.to_str())["model"]["merges"]
    return [tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m) for m in merges]


def build_config(
    arch: str, size: ModelSize, tokenizer, text_overrides: dict | None = None, vision_overrides: dict | None = None
):
    """A Qwen2-VL, Qwen2.5-VL or Qwen3-VL (dense or MoE) config of the given shape whose token ids come from the
    tokenizer.

    text_overrides / vision_overrides replace or add fields a ModelSize does not carry (bench/gpu_step_profile.py
    gives a real 3B's or 8B's vocabulary size and vision blocks this way)."""
    from transformers import AutoConfig

    if arch not in ARCHS:
        raise ValueError(f"--arch must be one of {', '.join(ARCHS)}, got {arch!r}")
    head_dim = size.hidden // size.heads
    ids = tokenizer.convert_tokens_to_ids
    text_config = {
        "vocab_size": len(tokenizer),
        "hidden_size": size.hidden,
        "intermediate_size": size.intermediate,
        "num_hidden_layers": size.layers,
        "num_attention_heads": size.heads,
        "num_key_value_heads": size.kv_heads,
        "max_position_embeddings": 8192,
        "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0, "mrope_section": _mrope_section(head_dim)},
        "bos_token_id": ids("<|endoftext|>"),
        "eos_token_id": ids("<|im_end|>"),
        "pad_token_id": ids("<|endoftext|>"),
        "tie_word_embeddings": False,
    }
    if arch == "qwen2_vl":
        vision_config = {
            "depth": size.vision_depth,
            "embed_dim": size.vision_dim,
            "hidden_size": size.hidden,
            "num_heads": size.vision_heads,
            "mlp_ratio": 2,
        }
    else:  # Qwen2.5-VL and Qwen3-VL: a tower of the same shape, merged to the language model's width
        vision_config = {
            "depth": size.vision_depth,
            "hidden_size": size.vision_dim,
            "intermediate_size": size.vision_dim * 2,
            "num_heads": size.vision_heads,
            "out_hidden_size": size.hidden,
        }
    if arch == "qwen2_5_vl":
        vision_config.update(fullatt_block_indexes=[size.vision_depth - 1], window_size=112)
    elif arch in QWEN3_VL_TYPES:
        text_config["head_dim"] = head_dim
        text_config["rope_parameters"] = {
            "rope_type": "default",
            "rope_theta": 5000000.0,
            "mrope_section": _interleaved_mrope_section(head_dim),
            "mrope_interleaved": True,
        }
        if arch == "qwen3_vl_moe":
            text_config.update(
                num_experts=4,
                num_experts_per_tok=2,
                moe_intermediate_size=size.intermediate // 4,
                decoder_sparse_step=1,
            )
        vision_config.update(
            patch_size=16,
            num_position_embeddings=256,  # a 16 x 16 learned grid, resampled to each image (8B: 48 x 48)
            # deepstack: every vision block feeds a language-model layer, at most one per layer (8B: 8, 16, 24)
            deepstack_visual_indexes=list(range(min(size.vision_depth, size.layers))),
        )
    return AutoConfig.for_model(
        arch,
        text_config={**text_config, **(text_overrides or {})},
        vision_config={**vision_config, **(vision_overrides or {})},
        image_token_id=ids("<|image_pad|>"),
        video_token_id=ids("<|video_pad|>"),
        vision_start_token_id=ids("<|vision_start|>"),
        vision_end_token_id=ids("<|vision_end|>"),
        tie_word_embeddings=False,
    )


def build_image_processor(arch: str, min_pixels: int, max_pixels: int, pixel_norm: tuple[float, float] | None = None):
    """The PIL Qwen-VL image processor of ``arch`` as its checkpoints configure it: Qwen2-VL and Qwen2.5-VL 14-pixel
    patches and CLIP's mean/std, Qwen3-VL 16-pixel patches and mean/std 0.5 (both merge 2 x 2 patches per token).

    ``pixel_norm`` (mean, std), the same for the three channels, replaces the checkpoints' normalisation: a random
    model has no learned filters, so what it can tell apart is what the normalised pixels make far apart."""
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    size = {"shortest_edge": min_pixels, "longest_edge": max_pixels}
    kwargs = {"patch_size": 16, "image_mean": [0.5] * 3, "image_std": [0.5] * 3} if arch in QWEN3_VL_TYPES else {}
    if pixel_norm is not None:
        mean, std = pixel_norm
        if not (math.isfinite(mean) and math.isfinite(std) and std > 0):
            raise UserError(f"--pixel_norm: the mean must be a number and the std one above 0, got {mean} {std}")
        kwargs.update(image_mean=[mean] * 3, image_std=[std] * 3)
    return Qwen2VLImageProcessorPil(size=size, **kwargs)


def build_processor(
    arch: str, tokenizer, min_pixels: int, max_pixels: int, pixel_norm: tuple[float, float] | None = None
):
    """r1_gui's image-only processor of ``arch`` (r1_gui.processing.GUIVLProcessor) with r1_gui's chat template."""
    from r1_gui.processing import CHAT_TEMPLATE, GUIVLProcessor

    image_processor = build_image_processor(arch, min_pixels, max_pixels, pixel_norm)
    return GUIVLProcessor(
        image_processor=image_processor, tokenizer=tokenizer, chat_template=CHAT_TEMPLATE, model_type=arch
    )


def build_tiny_model(
    out_dir: str | Path,
    arch: str = "qwen2_vl",
    size: str = "tiny",
    seed: int = 0,
    min_pixels: int = 3136,
    max_pixels: int = 200704,
    pixel_norm: tuple[float, float] | None = None,
) -> Path:
    """Build, save and return the folder of a random-weight model with its processor.

    max_pixels defaults to 200704 (256 merged image tokens at most), a phone screenshot's cost that a CPU can train on.
    pixel_norm: the image processor's (mean, std), see build_image_processor; None keeps the architecture's.
    """
    import torch
    from transformers import AutoModelForImageTextToText, GenerationConfig

    from r1_gui.processing import CHAT_TEMPLATE

    if arch not in ARCHS:
        raise ValueError(f"--arch must be one of {', '.join(ARCHS)}, got {arch!r}")
    if size not in SIZES:
        raise ValueError(f"--size must be one of {', '.join(SIZES)}, got {size!r}")
    out_dir = Path(out_dir)
    shape = SIZES[size]

    tokenizer = build_tokenizer(shape.vocab, CHAT_TEMPLATE)
    # the processor first: it checks pixel_norm, before the model is built
    processor = build_processor(arch, tokenizer, min_pixels, max_pixels, pixel_norm)
    config = build_config(arch, shape, tokenizer)
    torch.manual_seed(seed)
    model = AutoModelForImageTextToText.from_config(config)
    model.generation_config = GenerationConfig(
        bos_token_id=config.text_config.bos_token_id,
        eos_token_id=config.text_config.eos_token_id,
        pad_token_id=config.text_config.pad_token_id,
        do_sample=False,
    )

    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out_dir)
    processor.save_pretrained(out_dir)
    usual_file_modes(out_dir)
    n_params = sum(p.numel() for p in model.parameters())
    logger.info("built a %s %s model (%.2f M parameters) and saved it to %s", size, arch, n_params / 1e6, out_dir)
    return out_dir


@cli_main
def main(argv: list[str] | None = None) -> None:
    parser = command_parser(__doc__)
    parser.add_argument("--arch", choices=ARCHS, default="qwen2_vl", help="model_type of the built model")
    parser.add_argument("--out", required=True, help="folder to write the model and processor to")
    parser.add_argument("--size", choices=tuple(SIZES), default="tiny", help="tiny (tests) or small (the CPU demo)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random weights")
    parser.add_argument("--min_pixels", type=int, default=3136, help="image processor's smallest image area")
    parser.add_argument("--max_pixels", type=int, default=200704, help="image processor's largest image area")
    parser.add_argument(
        "--pixel_norm",
        type=float,
        nargs=2,
        metavar=("MEAN", "STD"),
        help="image processor's normalisation, all channels (default: the architecture's checkpoints')",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    check_output_folder(args.out, "--out")
    pixel_norm = tuple(args.pixel_norm) if args.pixel_norm else None
    build_tiny_model(args.out, args.arch, args.size, args.seed, args.min_pixels, args.max_pixels, pixel_norm)  # logs


cli = installed(main)  # the installed command (pyproject.toml's [project.scripts]): main, returning nothing


if __name__ == "__main__":
    main()
