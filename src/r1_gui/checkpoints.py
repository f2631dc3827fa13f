"""Model folders: a full checkpoint or a LoRA adapter folder (whose adapter_config.json names its base model).

Training writes them (r1_gui.training; resuming from a checkpoint-N folder: r1_gui.training.resume); the evaluation,
the processor loading and merge_lora read them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
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
    model with the adapter merged in (generation then runs at the base model's speed). A damaged weights file is a
    UserError naming it (`damaged_weights_named`)."""
    from transformers import AutoModelForImageTextToText

    base = adapter_base(model_name_or_path)
    if base is None:
        with damaged_weights_named(model_name_or_path):
            return AutoModelForImageTextToText.from_pretrained(model_name_or_path, **kwargs)
    from peft import PeftModel

    with damaged_weights_named(base):
        model = AutoModelForImageTextToText.from_pretrained(base, **kwargs)
    with damaged_weights_named(model_name_or_path):
        return PeftModel.from_pretrained(model, str(model_name_or_path)).merge_and_unload()


WEIGHT_FILES = ("model.safetensors", "adapter_model.safetensors")


@contextmanager
def damaged_weights_named(folder: str | Path) -> Iterator[None]:
    """Inside the block, an error raised while a model folder's weights are read becomes a UserError naming the file
    when that file itself cannot be read (cut short by a full disk or a kill, or not a safetensors file): transformers
    and safetensors report it without the file's name ("incomplete metadata, file not fully covered"). Any other error
    keeps its type and traceback."""
    try:
        yield
    except Exception as error:
        damaged = unreadable_weights(Path(folder))
        if damaged is None:
            raise
        raise UserError(
            f"{damaged[0]} cannot be read ({one_line(error)}): the file is damaged or cut short; save or copy it again"
        ) from None


def unreadable_weights(folder: str | Path) -> tuple[Path, str] | None:
    """(the first weights file of ``folder``, with its shards, whose header safetensors cannot read, safetensors'
    message), or None when they all read. Reads the headers only: quick for any size of model."""
    from safetensors import safe_open

    folder = Path(folder)
    index = folder / "model.safetensors.index.json"
    shards = sorted(folder.glob("model-*-of-*.safetensors")) if index.is_file() else []
    for path in [*(folder / name for name in WEIGHT_FILES), *shards]:
        if not path.is_file():
            continue
        try:
            with safe_open(str(path), framework="pt") as weights:
                for name in weights.keys():  # noqa: SIM118 (safe_open has no __iter__)
                    weights.get_slice(name)
        except Exception as error:  # noqa: BLE001 (safetensors raises its own error type for every kind of damage)
            return path, one_line(error)
    return None


# Where a saved processor keeps its image settings, in the order transformers reads them: the image_processor entry
# of processor_config.json, else preprocessor_config.json (ImageProcessingMixin.get_image_processor_dict).
PROCESSOR_CONFIGS = (("processor_config.json", "image_processor"), ("preprocessor_config.json", None))


def saved_image_settings(model_name_or_path: str | Path) -> dict:
    """The image settings of the processor saved in a model folder (training saves its own there, so these are the
    training run's): {"min_pixels", "max_pixels", "patch_size", "merge_size", "file"}, each present only when the
    folder says it; {} when it holds no processor config. As the Qwen-VL image processor reads them, a
    ``min_pixels``/``max_pixels`` entry wins over ``size`` {"shortest_edge", "longest_edge"}. Reads JSON only."""
    folder = resolve_model_path(model_name_or_path)
    for name, entry in PROCESSOR_CONFIGS:
        path = folder / name
        if not path.is_file():
            continue
        try:
            saved = json.loads(path.read_text())
        except ValueError:
            continue
        image = saved.get(entry) if entry else saved
        if not isinstance(image, dict):
            continue
        size = image.get("size") if isinstance(image.get("size"), dict) else {}
        found = {
            "min_pixels": image.get("min_pixels", size.get("shortest_edge")),
            "max_pixels": image.get("max_pixels", size.get("longest_edge")),
            "patch_size": image.get("patch_size"),
            "merge_size": image.get("merge_size"),
        }
        found = {key: int(value) for key, value in found.items() if isinstance(value, (int, float))}
        if found:
            return {**found, "file": str(path)}
    return {}


# What an episode (--env) training run played, written into its output folder when it starts (its checkpoint-N
# folders sit inside it): an episode evaluation compares its own settings with these.
EPISODE_SETTINGS = "episode_settings.json"


def write_episode_settings(output_dir: str | Path, settings: dict) -> None:
    folder = Path(output_dir)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / EPISODE_SETTINGS).write_text(json.dumps(settings, indent=1, sort_keys=True) + "\n")


def saved_episode_settings(model_name_or_path: str | Path) -> tuple[dict, Path | None]:
    """(the episode settings a model folder was trained with, their file): from the folder, or for a checkpoint-N
    folder from the run's folder above it; ({}, None) where there are none (a dataset run, a Hub id, an old run)."""
    folder = Path(model_name_or_path)
    for candidate in (folder, folder.parent) if folder.name.startswith("checkpoint-") else (folder,):
        path = candidate / EPISODE_SETTINGS
        if path.is_file():
            try:
                return json.loads(path.read_text()), path
            except ValueError:
                return {}, None
    return {}, None
