"""Which models r1_gui trains, and loading one for training (the entry points' step 3).

with settings_only():          # every check before the model loads runs, then SettingsChecked stops the command
    main(*parse_grpo_arguments(argv))
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from r1_gui.training.args import GUIDataArguments, resolve_coordinates


class SettingsChecked(BaseException):
    """Raised where a model would load inside `settings_only`: every check a training command makes before that has
    passed. A BaseException, so that no handler of ordinary errors on the way takes it."""


_SETTINGS_ONLY = [False]


@contextmanager
def settings_only() -> Iterator[None]:
    """Inside the block, `load_training_model` raises `SettingsChecked` instead of loading: a training command's
    main() runs every check it makes before its model loads (flags, the model's architecture, the data, the rewards,
    an --env run's environment, the output folder) and stops there. `r1_gui.settings_check` is its use."""
    _SETTINGS_ONLY[0] = True
    try:
        yield
    finally:
        _SETTINGS_ONLY[0] = False


def check_model(model_name_or_path: str | None) -> str:
    """The checkpoint's model_type, refusing anything but Qwen2-VL, Qwen2.5-VL and Qwen3-VL, dense or MoE (Aguvis is
    a Qwen2-VL model)."""
    from r1_gui.checkpoints import config_folder
    from r1_gui.model_types import MODEL_TYPES, folder_model_type

    if not model_name_or_path:
        raise ValueError("--model_name_or_path is required (a local folder or a Hub id)")
    model_type = folder_model_type(config_folder(model_name_or_path))
    if model_type not in MODEL_TYPES:
        raise ValueError(
            f"{model_name_or_path} is a {model_type!r} model; r1_gui trains Qwen2-VL, Qwen2.5-VL, Qwen3-VL and Aguvis "
            f"(model_type {', '.join(MODEL_TYPES)})"
        )
    return model_type


def model_and_coordinates(model_args, data_args: GUIDataArguments) -> tuple[str, str]:
    """(model_type, coordinates) of a training run, every trainer's first check: the checkpoint (`check_model`), then
    --prompt_style and --coordinates auto resolved from its architecture (`resolve_coordinates`)."""
    model_type = check_model(model_args.model_name_or_path)
    return model_type, resolve_coordinates(data_args, model_type)


def load_training_model(
    stage: str, model_args, data_args: GUIDataArguments, model_type: str, coordinates: str, trains_on: str, logger
):
    """The model of --model_name_or_path (dtype, attention, vision attention and revision from the model arguments)
    that ``stage`` ("GRPO" or "SFT") trains; logs what the run trains on (``trains_on``, e.g. "64 rows of
    data/synthetic" or "64 resets of r1_gui/Phone-v0") through the entry point's ``logger``."""
    if _SETTINGS_ONLY[0]:
        raise SettingsChecked(f"{stage} of {model_args.model_name_or_path} on {trains_on}")
    import torch
    from transformers import AutoModelForImageTextToText

    from r1_gui.checkpoints import damaged_weights_named
    from r1_gui.vision_attention import apply_vision_attention

    with damaged_weights_named(model_args.model_name_or_path):
        model = AutoModelForImageTextToText.from_pretrained(
            model_args.model_name_or_path,
            dtype=model_args.dtype or "auto",
            attn_implementation=model_args.attn_implementation,
            revision=model_args.model_revision,
        )
    batched = apply_vision_attention(model, model_args.vision_attention, "cuda" if torch.cuda.is_available() else "cpu")
    logger.info(
        "%s on %s (%s, %s coordinates, %s prompts%s), %s",
        stage,
        model_args.model_name_or_path,
        model_type,
        coordinates,
        data_args.prompt_style,
        ", vision windows batched" if batched else "",
        trains_on,
    )
    return model


def load_training_processor(model_args, data_args: GUIDataArguments):
    """The processor of --model_name_or_path with r1_gui's chat template and the run's --min_pixels/--max_pixels."""
    from r1_gui.processing import CHAT_TEMPLATE, load_processor

    return load_processor(
        model_args.model_name_or_path,
        min_pixels=data_args.min_pixels,
        max_pixels=data_args.max_pixels,
        chat_template=CHAT_TEMPLATE,
    )


def trainer_inputs(model, training_args, dataset, processor, model_args) -> dict:
    """The keyword arguments every r1_gui trainer is built from: the model (`load_training_model`), the training
    arguments, the rows, the processor and the LoRA config of the model arguments (None without --use_peft)."""
    from r1_gui.training.lora import lora_config

    return {
        "model": model,
        "args": training_args,
        "train_dataset": dataset,
        "processing_class": processor,
        "peft_config": lora_config(model_args),
    }
