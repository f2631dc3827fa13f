"""One run per output folder: a command that writes into a folder another running r1_gui command holds is refused
when it starts, naming that command, instead of both appending to the same files for minutes and failing at the end.

    with output_folder_lock(args.output_dir):      # training, evaluation (steps and episodes), the demos
        run()

The lock is `fcntl.flock` on OUTPUT_DIR/.r1_gui.lock, which the holder's process id and command line are written
into. The kernel releases it when the holder ends in any way, SIGKILL included, so there is no stale lock to clean
up (a killed run leaves the file, which locks nothing). A run removes the file when it ends, and the folder too when
it created it and wrote nothing else there (a run that failed on its settings leaves no folder). A process may take
the lock of a folder it already holds (a demo's stages run inside it). Under torchrun only the first process takes
it: the others are the same run.
"""

from __future__ import annotations

import fcntl
import os
import shlex
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from r1_gui.cli_errors import UserError

LOCK_FILE = ".r1_gui.lock"
_held: dict[str, int] = {}  # lock files this process holds -> how many blocks hold each


@contextmanager
def output_folder_lock(folder: str | Path, flag: str = "--output_dir") -> Iterator[None]:
    """Hold ``folder`` (created when missing) for the block; a UserError naming ``flag``, the folder and the holder
    when another process holds it."""
    if os.environ.get("RANK", "0") != "0":  # another process of a torchrun job: its first process holds the folder
        yield
        return
    folder = Path(folder)
    created = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    path = (folder / LOCK_FILE).resolve()
    key = str(path)
    if key in _held:
        _held[key] += 1
        try:
            yield
        finally:
            _held[key] -= 1
        return
    handle = _lock(path, flag, folder)
    handle.seek(0)
    handle.truncate()
    handle.write(f"pid {os.getpid()}: {shlex.join(['python', *sys.argv])}\n")
    handle.flush()
    _held[key] = 1
    try:
        yield
    finally:
        del _held[key]
        path.unlink(missing_ok=True)  # before the lock goes: a process that opened the file then finds it gone
        if created and folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()  # a run that stopped before it wrote anything leaves no folder behind
        handle.close()  # releases the lock


def _lock(path: Path, flag: str, folder: Path):
    """The open lock file, locked; a UserError naming the holder when another process holds it. A file its holder
    removed between our open and our lock is no lock: opened again."""
    while True:
        handle = open(path, "a+")  # noqa: SIM115 (held open for the block: the lock lives as long as the descriptor)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "a process that has not written its name yet"
            handle.close()
            raise UserError(
                f"{flag} {folder} is in use by another run ({holder}): wait for it to end, or give another {flag}"
            ) from None
        try:
            if os.stat(path).st_ino == os.fstat(handle.fileno()).st_ino:
                return handle
        except FileNotFoundError:
            pass
        handle.close()
