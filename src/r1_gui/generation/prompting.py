"""How a checkpoint is prompted, resolved once for training and evaluation alike: ``--prompt_style auto`` and
``--coordinates auto`` become the architecture's own (``prompts.default_prompt_style``, then
``prompts.default_coordinates``), read from the model folder's config.json without importing torch.

    style, coordinates = resolve_prompting("auto", "auto", model_type_of("runs/ckpt"))
"""

from __future__ import annotations

import logging
from pathlib import Path

from r1_gui.actions import COORDINATE_SYSTEMS
from r1_gui.checkpoints import config_folder
from r1_gui.cli_errors import UserError
from r1_gui.model_types import folder_model_type
from r1_gui.prompts import default_coordinates, resolve_prompt_style

logger = logging.getLogger(__name__)

COORDINATE_CHOICES = ("auto", *COORDINATE_SYSTEMS)


def model_type_of(model_name_or_path: str | Path) -> str | None:
    """config.json's model_type of a local folder (Hub ids go through the cache), read without importing torch."""
    return folder_model_type(config_folder(model_name_or_path))  # a LoRA adapter's: its base model's


def resolve_prompting(prompt_style: str, coordinates: str, model_type: str | None) -> tuple[str, str]:
    """(prompt style, coordinates) with "auto" resolved for ``model_type`` (None: no model, as for a predictions
    file); a resolved value is logged. UserError for a style or coordinate system r1_gui does not have."""
    if coordinates not in COORDINATE_CHOICES:
        raise UserError(f"--coordinates must be one of {', '.join(COORDINATE_CHOICES)}, got {coordinates!r}")
    try:
        style = resolve_prompt_style(prompt_style, model_type)
    except ValueError as error:
        raise UserError(str(error)) from None
    resolved = default_coordinates(model_type or "", style) if coordinates == "auto" else coordinates
    if "auto" in (prompt_style, coordinates):
        logger.info(
            "%s: --prompt_style %s -> %s, --coordinates %s -> %s",
            model_type or "no model",
            *(prompt_style, style),
            *(coordinates, resolved),
        )
    return style, resolved
