"""Content fingerprints that an evaluation's predictions are keyed on: the model's files and the dataset split's rows.

A run appends to an earlier predictions.jsonl only when the model's files, the split's rows and the generation
settings are those the earlier lines were made with (runner ``_check_resume``); run_config.json records all three.

- Model: the sha256 of every file ``from_pretrained`` and the processor read (``MODEL_FILE_PATTERNS``: weights,
  configs, tokenizer, processor), and one digest over their names and hashes. Hashing reads every byte: a 400 MB
  file took 0.32 s on an idle CPU core and 0.72-0.82 s on a busy 2-core machine (bench/fingerprint_cost.py), so
  about 12-30 s for a 15 GB 7B checkpoint. The per-file hashes are therefore kept in run_config.json with each
  file's size and modification time (ns) and the folder's resolved path: a file of the same folder whose size and
  mtime are unchanged keeps its recorded hash and is not read again (0.6 ms); any other file is hashed again, so a
  copied checkpoint (another folder or new mtimes, same bytes) still matches and a rebuilt one does not.
- Dataset: one sha256 over every row of the split, every column, in order (embedded screenshots by their bytes; a
  screenshot given as a path counts by that path, not by the file's bytes).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

MODEL_FILE_PATTERNS = (
    "*.safetensors", "*.safetensors.index.json", "pytorch_model*.bin", "pytorch_model*.bin.index.json",
    "config.json", "generation_config.json", "adapter_config.json", "tokenizer*", "vocab.json", "merges.txt",
    "special_tokens_map.json", "added_tokens.json", "chat_template*", "*processor_config.json",
    "preprocessor_config.json", "*.model",
)  # fmt: skip


SHOWN_HASH_BYTES = 1 << 30  # hashing this much takes a few seconds: a progress bar says what the wait is


def hash_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def model_files(folder: Path) -> list[Path]:
    """The files of a model folder that loading it reads (not checkpoints, optimizer states or trainer logs)."""
    found = {path for pattern in MODEL_FILE_PATTERNS for path in folder.glob(pattern) if path.is_file()}
    return sorted(found)


def model_fingerprint(folder: Path, recorded: Mapping[str, dict] | None = None) -> dict[str, Any]:
    """{"sha256": digest of the whole model, "files": {name: {"size", "mtime_ns", "sha256"}}}.

    ``recorded``: the "files" of an earlier fingerprint; a file with the same size and mtime keeps its hash there.
    """
    from tqdm import tqdm

    recorded = recorded or {}
    files, to_hash = {}, []
    for path in model_files(folder):
        stat = path.stat()
        entry = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
        earlier = recorded.get(path.name) or {}
        same = all(earlier.get(key) == value for key, value in entry.items()) and earlier.get("sha256")
        files[path.name] = {**entry, "sha256": earlier["sha256"] if same else None}
        to_hash += [] if same else [path]
    total = sum(files[path.name]["size"] for path in to_hash)
    with tqdm(total=total, desc="hashing the model's files", unit="B", unit_scale=True,
              disable=total < SHOWN_HASH_BYTES) as bar:  # fmt: skip
        for path in to_hash:
            files[path.name]["sha256"] = hash_file(path)
            bar.update(files[path.name]["size"])
    digest = hashlib.sha256()
    for name, entry in files.items():
        digest.update(f"{name}\0{entry['sha256']}\n".encode())
    return {"sha256": digest.hexdigest(), "files": files}


def changed_files(before: Mapping[str, dict], after: Mapping[str, dict]) -> list[str]:
    """Names of the files that differ between two fingerprints' "files": changed, added or removed."""
    names = sorted(set(before) | set(after))
    return [name for name in names if (before.get(name) or {}).get("sha256") != (after.get(name) or {}).get("sha256")]


def _encode(value: Any) -> Any:
    """JSON stand-ins for what rows hold besides JSON types: bytes and PIL images by the sha256 of their bytes."""
    if isinstance(value, (bytes, bytearray)):
        return {"sha256": hashlib.sha256(value).hexdigest()}
    if hasattr(value, "tobytes") and hasattr(value, "size"):  # a PIL image
        return {"sha256": hashlib.sha256(value.tobytes()).hexdigest(), "size": list(value.size), "mode": value.mode}
    return str(value)


def dataset_fingerprint(rows: Any) -> str:
    """sha256 over every row of a datasets.Dataset (image column undecoded) or a list of row dicts."""
    digest = hashlib.sha256()
    if hasattr(rows, "column_names"):
        columns = sorted(rows.column_names)
        for batch in rows.iter(batch_size=256):
            for values in zip(*(batch[name] for name in columns), strict=True):
                row = dict(zip(columns, values, strict=True))
                digest.update(json.dumps(row, sort_keys=True, default=_encode).encode() + b"\n")
    else:
        for row in rows:
            digest.update(json.dumps(dict(row), sort_keys=True, default=_encode).encode() + b"\n")
    return digest.hexdigest()
