"""``--protocol`` presets: the settings each peer's own evaluation used, so that "reproduce the paper's table" is one
flag, and r1_gui's own AITW defaults. A preset fills the settings not given on the command line; a flag given beside
it wins and the protocol card lists it under ``preset_overrides``. What r1_gui cannot set the way the peer did is
listed in ``gaps`` (and in the card, ``preset_gaps``): the numbers are then close to the peer's setting, not equal.

``None`` for min_pixels/max_pixels means "the checkpoint's saved processor", as both peers' scripts load the
processor of the checkpoint (``AutoProcessor.from_pretrained(MODEL_PATH)``) without setting either bound.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True)
class Preset:
    """One peer's evaluation settings as r1_gui's ``EvalConfig`` fields, where each comes from, and what differs."""

    description: str
    settings: dict[str, Any]
    sources: dict[str, str]
    gaps: tuple[str, ...] = ()


R1V_SCRIPT = "kokolerk/R1-V-GUI-agent eval/test_aitw.py"
GUIR1_SCRIPTS = "ritzz-ai/GUI-R1 guir1/inference/inference_vllm_*.py"

PRESETS = {
    "r1v": Preset(
        "R1-V-GUI-Agent's AITW evaluation of Aguvis-7B (its published action-type / exact-parameter table)",
        {
            "prompt_style": "aguvis",
            "coordinates": "normalized",
            "min_pixels": None,
            "max_pixels": None,
            "max_new_tokens": 1024,
            "temperature": 0.0,
            "dtype": "bfloat16",
        },  # fmt: skip
        {
            "prompt_style": f"{R1V_SCRIPT}: the user turn is the Aguvis stage-2 'problem' text of its AITW file",
            "coordinates": f"{R1V_SCRIPT}: Aguvis code with 0-1 floats, compared as text with the ground truth",
            "min_pixels": f"{R1V_SCRIPT}: AutoProcessor.from_pretrained(MODEL_PATH), no pixel setting",
            "max_pixels": f"{R1V_SCRIPT}: AutoProcessor.from_pretrained(MODEL_PATH), no pixel setting",
            "max_new_tokens": f"{R1V_SCRIPT}: model.generate(..., max_new_tokens=1024, do_sample=False)",
            "temperature": f"{R1V_SCRIPT}: do_sample=False (greedy)",
            "dtype": f"{R1V_SCRIPT}: torch_dtype=torch.bfloat16",
        },
        (
            "its prompt has no system message (Qwen2-VL's chat template then adds 'You are a helpful assistant.'); "
            "r1_gui's aguvis style sends the Aguvis agent system prompt",
            "it appends '<|im_start|>assistant<|recipient|>' after the generation prompt and lets the model choose "
            "the channel; r1_gui opens the planning ('all') channel",
            "its screenshots pass qwen_vl_utils.process_vision_info first (smart_resize within 3,136..12,845,056 "
            "pixels) and then the checkpoint's processor; r1_gui resizes once, with the checkpoint's bounds",
        ),
    ),
    "guir1": Preset(
        "GUI-R1's inference scripts for AndroidControl, GUI-Odyssey and ScreenSpot (Qwen2.5-VL checkpoints)",
        {
            "prompt_style": "think_answer",
            "coordinates": "pixels",
            "min_pixels": None,
            "max_pixels": None,
            "max_new_tokens": 1024,
            "temperature": 0.0,
        },  # fmt: skip
        {
            "prompt_style": f"{GUIR1_SCRIPTS}: <think> ... </think> <answer>[{{'action', 'point', 'input_text'}}]"
            "</answer>",
            "coordinates": f"{GUIR1_SCRIPTS}: 'point' in pixels of the resized screenshot, scaled back by the "
            "original / resized size",
            "min_pixels": f"{GUIR1_SCRIPTS}: AutoProcessor.from_pretrained(MODEL_PATH) ('# processor.max_pixels="
            "1048576' commented out); vLLM's LLM(model=model_path) reads the checkpoint's own processor",
            "max_pixels": f"{GUIR1_SCRIPTS}: as min_pixels (inference_vllm_screenspot.py sets processor.max_pixels="
            "2097152 on the transformers processor it uses for the scale, not on vLLM's)",
            "max_new_tokens": f"{GUIR1_SCRIPTS}: SamplingParams(max_tokens=1024)",
            "temperature": f"{GUIR1_SCRIPTS}: SamplingParams(temperature=0.0, top_p=0.001) (greedy)",
        },
        (
            "its prompt is its own user-turn text ('You are GUI-R1, a reasoning GUI Agent Assistant. In this UI "
            "screenshot <image>, ...') with no system message; r1_gui's think_answer style puts its instructions in "
            "a system message",
            "repetition_penalty=1.05 is not applied: r1_gui's generators have no repetition penalty",
            "its history is the row's history field quoted in the prompt; r1_gui writes it as 'Step N:' lines",
            "it runs vLLM (r1_gui's --backend vllm; the preset leaves the backend to the machine)",
        ),
    ),
    "aitw": Preset(
        "r1_gui's own AITW setting: what local_scripts/aguvis7b_aitw2k_grpo.yaml trains with",
        {
            "prompt_style": "aguvis",
            "coordinates": "auto",
            "min_pixels": 3136,
            "max_pixels": 501760,
            "max_new_tokens": 256,
            "temperature": 0.0,
        },  # fmt: skip
        {
            "prompt_style": "local_scripts/aguvis7b_aitw2k_grpo.yaml: prompt_style aguvis",
            "coordinates": "r1_gui.prompts.default_coordinates: normalized for aguvis, pixels for Qwen2.5-VL",
            "min_pixels": "local_scripts/aguvis7b_aitw2k_grpo.yaml and training's GUIDataArguments: 3136",
            "max_pixels": "local_scripts/aguvis7b_aitw2k_grpo.yaml and training's GUIDataArguments: 501760 (a "
            "1080x2400 screenshot becomes 448x1036)",
            "max_new_tokens": "r1_gui's evaluation default, 256",
            "temperature": "r1_gui's evaluation default, greedy",
        },
    ),
}


def flags_given(argv: Iterable[str]) -> set[str]:
    """The flags written on a command line (``--max_pixels 5`` and ``--max_pixels=5`` both give "max_pixels"). The
    evaluation's parsers take no abbreviations, so a flag is named exactly as its setting."""
    return {token[2:].split("=", 1)[0] for token in argv if token.startswith("--") and len(token) > 2}


def apply_preset(config, name: str, given: Iterable[str] = ()):
    """``config`` (an ``EvalConfig``) with preset ``name``'s settings where no flag in ``given`` set them, and
    ``protocol=name``."""
    preset = PRESETS[name]
    given = set(given)
    return config.with_settings(
        protocol=name, **{key: value for key, value in preset.settings.items() if key not in given}
    )


def preset_overrides(config) -> dict[str, dict]:
    """{setting: {"preset": value, "run": value}} for each setting of ``config.protocol``'s preset that this run
    changed; {} without a preset."""
    if not config.protocol:
        return {}
    names = {field.name for field in fields(config)}
    preset = PRESETS[config.protocol].settings
    return {
        key: {"preset": value, "run": getattr(config, key)}
        for key, value in preset.items()
        if key in names and getattr(config, key) != value
    }
