"""How an r1_gui observation and `info` travel as JSON between an OpenEnv server and its client: written once for
both ends (`r1_gui.envs.serve` encodes, `r1_gui.envs.runtime.openenv_pool` decodes). It imports no OpenEnv code.

    fields = encode_observation(observation)       # {"screenshot": "<base64 PNG>", "instruction": "..."}
    wire_info = encode_info(info)                  # the contract's info as JSON (actions as dicts)
    screenshot = decode_screenshot(fields["screenshot"])     # uint8 (height, width, 3)
    info = decode_info(wire_info)                  # actions back as r1_gui Actions

A screenshot is a base64 PNG (a `data:image/...;base64,` prefix is accepted, and JPEG too), or a nested list of
(height, width, 3) numbers, as servers written by others send it. `info` keeps every key of the contract; an
`Action` (`action`, `expert_action`) travels as `Action.to_dict()`, tuples as lists, numpy scalars as numbers; a
value that is not JSON is sent as its `repr` (a backend's own key, never one the contract reads).
"""

from __future__ import annotations

import base64
import binascii
import io
import math
from typing import Any

import numpy as np
from PIL import Image

from r1_gui.actions import Action

ACTION_KEYS = ("action", "expert_action")


def encode_screenshot(screenshot: np.ndarray) -> str:
    """A uint8 (height, width, 3) array as a base64 PNG string."""
    buffer = io.BytesIO()
    Image.fromarray(np.asarray(screenshot, dtype=np.uint8)).save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def decode_screenshot(value: Any) -> np.ndarray:
    """A screenshot as sent (base64 PNG or JPEG, or a nested list) as a uint8 (height, width, 3) array; ValueError
    saying what was sent otherwise."""
    if isinstance(value, str):
        encoded = value.split(",", 1)[1] if value.startswith("data:") else value
        try:
            image = Image.open(io.BytesIO(base64.b64decode(encoded, validate=True)))
            return np.asarray(image.convert("RGB"), dtype=np.uint8)
        except (binascii.Error, OSError, ValueError) as error:
            raise ValueError(f"the screenshot is a string but not a base64 PNG or JPEG image ({error})") from None
    array = np.asarray(value)
    if array.ndim == 3 and array.shape[2] in (3, 4) and array.size and np.issubdtype(array.dtype, np.number):
        return np.clip(array[..., :3], 0, 255).astype(np.uint8)
    raise ValueError(f"the screenshot must be a base64 image or a (height, width, 3) list, got {type(value).__name__}")


def encode_observation(observation: dict) -> dict:
    return {"screenshot": encode_screenshot(observation["screenshot"]), "instruction": str(observation["instruction"])}


def to_json(value: Any) -> Any:
    """`value` as JSON: numbers, strings, bools, None, lists and dicts as they are (numpy scalars and tuples
    converted, non-finite floats as None), an Action as its dict, anything else as its repr."""
    if isinstance(value, Action):
        return value.to_dict()
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return [to_json(item) for item in value]
    if isinstance(value, dict):
        return {str(key): to_json(item) for key, item in value.items()}
    return repr(value)


def encode_info(info: dict) -> dict:
    return {str(key): to_json(value) for key, value in info.items()}


def decode_info(wire: dict) -> dict:
    """`encode_info`'s output back as the contract's info: actions rebuilt, screen_size and target_box as tuples. A
    malformed action is dropped (None), so a server's bad key costs that key, never the step."""
    info = dict(wire)
    for key in ACTION_KEYS:
        if isinstance(info.get(key), dict):
            try:
                info[key] = Action.from_dict(info[key])
            except (TypeError, ValueError):
                info[key] = None
    for key in ("screen_size", "target_box"):
        if isinstance(info.get(key), list):
            info[key] = tuple(info[key])
    return info
