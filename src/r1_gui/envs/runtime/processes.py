"""Process trees, read from /proc: what an environment started (a worker, a browser's chromedriver and Chromium), so
that it can be ended whole however it was left. Written once for every backend (the local pool's workers, the Ray
actors' workers, the browser)."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterable


def process_table() -> dict[int, tuple[int, int, str]]:
    """pid -> (parent pid, process group, command line) of every live (not zombie) process."""
    table = {}
    for name in _pids():
        try:
            with open(f"/proc/{name}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            if fields[0] == "Z":
                continue
            with open(f"/proc/{name}/cmdline", "rb") as cmdline:
                command = cmdline.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # the process ended while we read
            continue
        table[int(name)] = (int(fields[1]), int(fields[2]), command)
    return table


def descendants(root: int, table: dict[int, tuple[int, int, str]] | None = None) -> list[int]:
    """Every living process below `root` (not `root` itself), children before their own children; read from /proc
    (only the parents, unless a `process_table` is given); [] where there is no /proc."""
    children: dict[int, list[int]] = {}
    for pid, parent in _parents(table):
        children.setdefault(parent, []).append(pid)
    found, frontier = [], [root]
    while frontier:
        below = [pid for pid in children.get(frontier.pop(), []) if pid not in found]
        found += below
        frontier += below
    return found


def kill_all(pids: Iterable[int]) -> None:
    """SIGKILL each of `pids` that is still there."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def kill_tree(pid: int) -> None:
    """SIGKILL `pid`, its process group and every descendant (a browser that left the group included)."""
    kill_all(descendants(pid))  # first: `pid` may be the caller itself (a worker ending its own tree)
    for kill, target in ((os.killpg, pid), (os.kill, pid)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            kill(target, signal.SIGKILL)


def tree_memory(pids: Iterable[int]) -> tuple[int, int]:
    """(PSS, RSS) in bytes summed over `pids`, from /proc/PID/smaps_rollup. PSS shares each page among the
    processes that map it, so summed over a tree it counts the tree's memory once."""
    pss = rss = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/smaps_rollup") as rollup:
                for line in rollup:
                    if line.startswith("Pss:"):
                        pss += int(line.split()[1]) * 1024
                    elif line.startswith("Rss:"):
                        rss += int(line.split()[1]) * 1024
        except OSError:
            continue
    return pss, rss


def _pids() -> list[str]:
    try:
        return [name for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []


def _parents(table: dict[int, tuple[int, int, str]] | None) -> Iterable[tuple[int, int]]:
    """(pid, parent pid) of every process: from `table`, else from each /proc/PID/stat alone (a signal handler calls
    this: no command lines, nothing imported)."""
    if table is not None:
        yield from ((pid, parent) for pid, (parent, _, _) in table.items())
        return
    for name in _pids():
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                yield int(name), int(stat.read().rsplit(b")", 1)[1].split()[1])
        except OSError:
            continue
