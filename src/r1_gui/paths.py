"""Local folder or Hub id? Told apart before anything is loaded, so a mistyped path fails in one line.

    check_local_or_hub("data/aitw-2k", "--dataset_name", repo_type="dataset")   # an existing folder: fine
    check_local_or_hub("data/nope", "--dataset_name", repo_type="dataset")      # UserError naming data/nope
    check_local_or_hub("xlangai/Aguvis-7B-720P", "--model_name_or_path")        # a Hub id: left to the Hub

A name is meant as a local path when it starts with "/", "./", "../" or "~", holds more than one "/" (a Hub id is
"name" or "owner/name"), ends in "/", or its first part is a folder here ("data/nope" when data/ exists). Such a name
that does not exist is an error. Any other name is a Hub id; offline (HF_HUB_OFFLINE set, or the Hub cannot be
reached) one that is not in the local cache is an error too, since it cannot be fetched: "data/nope" in a fresh clone
(no data/ folder) fails at once instead of after the Hub client's retries.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

from r1_gui.cli_errors import UserError


def looks_like_a_path(name: str) -> bool:
    text = str(name)
    if text.startswith(("/", "./", "../", "~", ".\\")) or text in (".", "..") or text.endswith(("/", "\\")):
        return True
    parts = text.replace("\\", "/").split("/")
    return len(parts) > 2 or (len(parts) == 2 and Path(parts[0]).is_dir())


def offline_reason() -> str | None:
    """Why Hub ids cannot be fetched here (HF_HUB_OFFLINE, or no connection to the Hub), or None."""
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE:
        return "HF_HUB_OFFLINE is set"
    host = constants.ENDPOINT.split("://")[-1].split("/")[0]
    try:
        socket.create_connection((host, 443), timeout=2).close()
    except OSError:
        return f"{host} cannot be reached"
    return None


def _in_hub_cache(name: str, repo_type: str) -> bool:
    from huggingface_hub import snapshot_download

    try:
        snapshot_download(name, repo_type=repo_type, local_files_only=True)
        return True
    except Exception:  # not cached, or not a valid repo id
        pass
    if repo_type == "dataset":  # datasets keeps prepared Hub datasets in a cache of its own
        from huggingface_hub import constants

        cache = os.environ.get("HF_DATASETS_CACHE") or os.path.join(constants.HF_HOME, "datasets")  # as datasets'
        return (Path(cache).expanduser() / name.replace("/", "___")).is_dir()
    return False


def check_local_or_hub(name: str | Path | None, flag: str, repo_type: str = "model") -> None:
    """Fail (UserError naming ``flag`` and ``name``) when ``name`` is meant as a local path that does not exist, or
    is a Hub id that cannot be fetched (offline and not cached). An existing path passes, whatever it holds."""
    if name is None or Path(os.path.expanduser(str(name))).exists():
        return
    if looks_like_a_path(str(name)):
        reason = offline_reason()
        hub = f"; offline ({reason}), a Hub id cannot be fetched either" if reason else ""
        raise UserError(f"{flag} {name}: no such local folder ({Path(name).expanduser().absolute()}){hub}")
    reason = offline_reason()
    if reason and not _in_hub_cache(str(name), repo_type):
        raise UserError(
            f"{flag} {name}: no such local folder ({Path(name).absolute()}), and the Hub {repo_type} {name} cannot be "
            f"fetched ({reason}; it is not in the local cache); give an existing folder"
        )


def usual_file_modes(folder: str | Path) -> None:
    """Give the weight files under ``folder`` the mode every other file there gets (0644 under the usual umask):
    safetensors writes them through a private temporary file and leaves them 0600, which other users of a shared
    machine, or a container running as another user, cannot read."""
    umask = os.umask(0)
    os.umask(umask)
    for path in Path(folder).rglob("*.safetensors"):
        if path.is_file() and path.stat().st_mode & 0o777 == 0o600:
            path.chmod(0o666 & ~umask)


def check_output_folder(path: str | Path, flag: str = "--output_dir") -> None:
    """Fail before anything is written when an output folder's path is taken by a file, or when the folder (or, when
    it is missing, the nearest folder above it, where it would be created) cannot be written to: a read-only file
    system or no permission. Tried by creating and removing a file there, which answers for root too."""
    import tempfile

    path = Path(path)
    if path.exists() and not path.is_dir():
        raise UserError(f"{flag} {path} is a file; give a folder (it is created when missing)")
    existing = next(folder for folder in (path.absolute(), *path.absolute().parents) if folder.exists())
    try:
        tempfile.TemporaryFile(dir=existing).close()
    except OSError as error:
        where = "" if existing == path.absolute() else f" ({existing}, where it would be created)"
        raise UserError(
            f"{flag} {path}: cannot write there{where}: {error.strerror or error}; give a folder you can write to"
        ) from None


def resolve_model_path(model_name_or_path: str | Path) -> Path:
    """A local folder as is; a Hub id through the local cache or a download (never in tests)."""
    path = Path(model_name_or_path)
    if path.is_dir():
        return path
    from huggingface_hub import snapshot_download

    return Path(snapshot_download(str(model_name_or_path)))
