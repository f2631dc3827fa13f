"""The protocol card: what an evaluation's numbers were measured under, written into every metrics.json (key
``protocol``) and at the top of report.md, so two numbers are only set side by side when they are comparable
(``python -m r1_gui.evaluation.stats.compare`` refuses otherwise).

A card holds:

- ``evaluation``: steps, benchmark, predictions (another system's outputs), guir1_predictions, or episodes;
- ``preset``: the ``--protocol`` preset (``presets.PRESETS``), the settings this run changed from it
  (``preset_overrides``) and what r1_gui does not reproduce of the peer's setting (``preset_gaps``);
- ``prompt``: the style, whether the system prompt is the style's or ``--system_prompt``'s, and the sha256 of the
  exact prompt: the messages (the per-row parts left as placeholders: "{problem}", "{width}"x"{height}" for pixel
  coordinates; episodes: "{instruction}" and the tool's answer), the chat template's variables and the chat template
  itself. None for a predictions file: its prompt was written elsewhere;
- ``coordinates``: how points in the outputs are read;
- ``image``: min_pixels and max_pixels, where each came from (``flags``, ``--protocol NAME``, ``checkpoint``: the
  model folder's saved processor, which training wrote with its own settings, or ``defaults``), the checkpoint's own
  values, and the resize rule (Qwen smart_resize with the checkpoint's patch_size x merge_size);
- ``history``: how earlier steps reach the prompt, and how many there are;
- ``split``: the rows evaluated (count and the sha256 of their content; episodes: the environment, its keywords and
  the planned task:seed list);
- ``decoding``: backend, greedy or the temperature, the token limit, the seed, the stop token (None for a
  predictions file);
- ``model``: the model's name and the fingerprint of its files (absent for a predictions file);
- ``r1_gui``: the installed version and the git commit of the code that ran (``dirty`` when it had changes);
- ``warnings``: settings that make the numbers incomparable with the training run's (flags that differ from the
  checkpoint's image settings).
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import subprocess
from collections.abc import Sequence
from importlib import metadata, resources
from pathlib import Path
from typing import Any

from r1_gui.actions.coords import IMAGE_FACTOR
from r1_gui.evaluation.config import EvalConfig
from r1_gui.evaluation.presets import PRESETS, preset_overrides
from r1_gui.evaluation.run.fingerprint import dataset_fingerprint
from r1_gui.generation.settings import checked_pixel_bounds, resolve_pixel_bounds
from r1_gui.prompts import attach_image, build_prompt, chat_template_kwargs, parse_history, stop_token

logger = logging.getLogger(__name__)

RESIZE_RULE = (
    "Qwen smart_resize: each side rounded to a multiple of factor (patch_size x merge_size), the area brought "
    "within [min_pixels, max_pixels] keeping the aspect ratio"
)
HISTORY_MARKER = "Previous actions:\n"


@functools.cache
def r1_gui_version() -> dict[str, Any]:
    """{"version": the installed r1_gui's, "commit": the git commit of the source that runs (None outside a git
    checkout), "dirty": whether tracked files differ from it}. Asks no network."""
    try:
        version = metadata.version("r1_gui")
    except metadata.PackageNotFoundError:
        version = None
    source = Path(__file__).resolve().parent

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", *args], cwd=source, capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    dirty = None if commit is None else bool(git("status", "--porcelain", "--untracked-files=no"))
    return {"version": version, "commit": commit, "dirty": dirty}


def _sha256(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


@functools.cache
def _chat_template() -> str:
    return resources.files("r1_gui").joinpath("chat_template.jinja").read_text()  # processing.CHAT_TEMPLATE's file


def step_prompt_sha256(style: str, coordinates: str, system_prompt: str | None) -> str:
    """The sha256 of a step prompt with its per-row parts as placeholders (see the module docstring)."""
    messages = attach_image(build_prompt("{problem}", style, coordinates, ("{width}", "{height}"), system_prompt))
    return _sha256({"messages": messages, "kwargs": chat_template_kwargs(style), "template": _chat_template()})


def episode_prompt_sha256(history_images: int, system_prompt: str | None) -> str:
    """The sha256 of an episode turn's context with its per-episode parts as placeholders (agent.context)."""
    from r1_gui.agent.context import History, tool_response, turn_messages

    history = History("{instruction}", [None, None], ["{turn 1}"], [tool_response(1, None)])
    messages = turn_messages(history, history_images, system_prompt)
    return _sha256({"messages": messages, "template": _chat_template()})


# ------------------------------------------------------------------------------------------- image settings


def resolve_image_settings(config: EvalConfig, model_name_or_path: str | Path | None = None):
    """(``config`` with min_pixels and max_pixels set, the card's ``image`` part, its warnings). A bound the config
    leaves None comes from the model folder's saved processor (the training run's), else r1_gui's default; a bound
    it sets is kept, with a warning when the checkpoint saved another value (the numbers then differ from what the
    model was trained to see): the caller logs them (``log_warnings``) once its other checks passed, so a refused
    run says one line. UserError when min_pixels ends above max_pixels."""
    values, sources, warnings, saved = resolve_pixel_bounds(config, model_name_or_path)
    preset = PRESETS[config.protocol].settings if config.protocol else {}
    for bound in ("min_pixels", "max_pixels"):
        if sources[bound] == "flags" and preset.get(bound) == values[bound]:
            sources[bound] = f"--protocol {config.protocol}"
    checked_pixel_bounds(values, sources)
    factor = saved["patch_size"] * saved["merge_size"] if {"patch_size", "merge_size"} <= set(saved) else IMAGE_FACTOR
    image = {
        **values,
        "min_pixels_from": sources["min_pixels"],
        "max_pixels_from": sources["max_pixels"],
        "checkpoint": {key: saved[key] for key in ("min_pixels", "max_pixels") if key in saved} or None,
        "resize": RESIZE_RULE,
        "factor": factor,
    }
    return config.with_settings(**values), image, warnings


# ------------------------------------------------------------------------------------------------- the card


def step_history(problems: Sequence[str]) -> dict[str, Any]:
    """How earlier steps reach a step prompt: the dataset's problem text, its "Previous actions:" lines."""
    lengths = [
        len(parse_history(problem.split(HISTORY_MARKER, 1)[1])) if HISTORY_MARKER in problem else 0
        for problem in problems
    ]
    return {
        "format": "the dataset's problem text: 'Previous actions:' then one 'Step N: ...' line per earlier step "
        "(Aguvis stage 2), every earlier step",
        "max_steps": max(lengths, default=0),
        "mean_steps": sum(lengths) / len(lengths) if lengths else 0.0,
    }


def step_split(rows, count: int, source: str, split: str | None, full_sha256: str | None = None) -> dict[str, Any]:
    """The rows a step evaluation scored: the first ``count`` of ``rows``, and the sha256 of their content
    (``fingerprint.dataset_fingerprint``; ``full_sha256``, the whole split's, when it is already known and they are
    all of it)."""
    total = len(rows)
    if count == total and full_sha256 is not None:
        sha256 = full_sha256
    else:
        sha256 = dataset_fingerprint(rows.select(range(count)) if hasattr(rows, "select") else list(rows)[:count])
    return {"dataset": source, "split": split, "rows": count, "of_rows": total, "sha256": sha256}


def episode_history(max_turns: int, history_images: int) -> dict[str, Any]:
    """How earlier turns reach an episode turn's context (r1_gui.agent.context)."""
    return {
        "format": "agent.context: the instruction, then every earlier turn's text and the tool's answer to it; "
        "only the newest screenshots attached",
        "screenshots": history_images,
        "max_turns": max_turns,
    }


def episode_split(env_id: str, env_kwargs: dict, plan: Sequence[tuple], seed_offset: int, repeats: int) -> dict:
    """The episodes an episode evaluation plays: the environment, its keywords and the (task, seed) list, hashed."""
    return {
        "env_id": env_id,
        "env_kwargs": env_kwargs,
        "tasks": sorted({str(task) for task, _ in plan if task}),
        "episodes": len(plan),
        "seed_offset": seed_offset,
        "repeats": repeats,
        "sha256": _sha256({"env_id": env_id, "env_kwargs": env_kwargs, "plan": [list(reset) for reset in plan]}),
    }


def decoding(config: EvalConfig) -> dict[str, Any]:
    return {
        "backend": config.backend,
        "greedy": config.temperature == 0,
        "temperature": config.temperature,
        "max_new_tokens": config.max_new_tokens,
        "seed": config.seed,
        "stop_token": stop_token(config.prompt_style),
        "dtype": config.dtype,
    }


def protocol_card(
    evaluation: str,
    config: EvalConfig,
    *,
    image: dict,
    history: dict,
    split: dict,
    prompt_sha256: str | None,
    prompt: dict | None = None,
    model: dict | None = None,
    generated: bool = True,
    unresolved: EvalConfig | None = None,
    warnings: Sequence[str] = (),
) -> dict[str, Any]:
    """The card of one run (module docstring). ``config``: the settings as run (coordinates and pixels resolved);
    ``unresolved``: as given, before that (what ``preset_overrides`` compares with the preset); ``generated``:
    False for a predictions file (no decoding, no model); ``prompt``: the card's prompt part, where it is not the
    config's (a GUI-R1 inference output)."""
    card: dict[str, Any] = {"evaluation": evaluation, "preset": config.protocol}
    if config.protocol:
        card["preset_overrides"] = preset_overrides(unresolved or config)
        card["preset_gaps"] = list(PRESETS[config.protocol].gaps)
    card["prompt"] = prompt or {
        "style": config.prompt_style,
        "system_prompt": "custom (--system_prompt)" if config.system_prompt is not None else "the style's",
        "sha256": prompt_sha256,
    }
    card |= {"coordinates": config.coordinates, "image": image, "history": history, "split": split}
    card["decoding"] = decoding(config) if generated else None
    if model is not None:
        card["model"] = model
    card["r1_gui"] = r1_gui_version()
    card["warnings"] = list(warnings)
    return card
