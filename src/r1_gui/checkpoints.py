"""Model folders: a full checkpoint or a LoRA adapter folder (whose adapter_config.json names its base model).

Training writes them (r1_gui.training); the evaluation, the processor loading and merge_lora read them.
"""

from __future__ import annotations

import json
from pathlib import Path

from r1_gui.cli_errors import UserError, one_line
from r1_gui.paths import check_local_or_hub, offline_reason, resolve_model_path

ADAPTER_CONFIG = "adapter_config.json"


def adapter_base(model_name_or_path: str | Path) -> str | None:
    """The base model of a local LoRA adapter folder (its adapter_config.json), or None for anything else."""
    config = Path(model_name_or_path) / ADAPTER_CONFIG
    if not config.is_file():
        return None
    base = json.loads(config.read_text()).get("base_model_name_or_path")
    if not base:
        raise UserError(f"{config} names no base_model_name_or_path; add the base model's folder or Hub id there")
    return base


def config_folder(model_name_or_path: str | Path, flag: str = "--model_name_or_path") -> Path:
    """The folder whose config.json describes the model (for an adapter folder, its base model's), local or from
    the Hub cache. A UserError naming ``flag`` when a local folder is missing or holds no config.json (nor
    adapter_config.json), and naming the adapter's adapter_config.json when the base model it names cannot be found."""
    check_local_or_hub(model_name_or_path, flag)
    base = adapter_base(model_name_or_path)
    if base is None:
        folder = resolve_model_path(model_name_or_path)
        if not (folder / "config.json").is_file():
            raise UserError(
                f"{flag} {model_name_or_path} holds no config.json (nor {ADAPTER_CONFIG}): it is not a model folder; "
                "give the --output_dir of a training run, a python -m r1_gui.tiny folder or a Hub model id"
            )
        return folder
    return base_model_folder(model_name_or_path, base)


def base_model_folder(adapter: str | Path, base: str) -> Path:
    """The folder of an adapter's base model (a local folder, or a Hub id through the cache or a download). A
    UserError naming the adapter_config.json when it is not there: a relative path is relative to where the
    training ran, so an adapter used from elsewhere does not find it."""
    try:
        check_local_or_hub(base, "")
        return resolve_model_path(base)
    except (OSError, ValueError) as error:  # not here, and the Hub has no such model or cannot be reached
        offline = offline_reason()
        hub = f"the Hub cannot be asked ({offline})" if offline else f"the Hub has no such model ({one_line(error)})"
        found = [p for p in Path(adapter).resolve().parents if (p / base).is_dir()]
        hint = f"it is under {found[0]}: run from there, or" if found else "run from the folder training ran in, or"
        raise UserError(
            f"{Path(adapter) / ADAPTER_CONFIG} names the base model {base!r} (base_model_name_or_path), which is no "
            f"folder under {Path.cwd()}, and {hub}; {hint} write its absolute path or Hub id there"
        ) from None


def load_model(model_name_or_path: str | Path, **kwargs):
    """AutoModelForImageTextToText.from_pretrained(model_name_or_path, **kwargs); for a LoRA adapter folder, its base
    model with the adapter merged in (generation then runs at the base model's speed)."""
    from transformers import AutoModelForImageTextToText

    base = adapter_base(model_name_or_path)
    if base is None:
        return AutoModelForImageTextToText.from_pretrained(model_name_or_path, **kwargs)
    from peft import PeftModel

    model = AutoModelForImageTextToText.from_pretrained(base, **kwargs)
    return PeftModel.from_pretrained(model, str(model_name_or_path)).merge_and_unload()
