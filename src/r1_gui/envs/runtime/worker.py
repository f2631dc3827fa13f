"""The worker process behind one `EnvPool` slot: builds one environment and answers the pool's calls.

Started by `r1_gui.envs.runtime.pool` as `python -c "...; serve(FD, PARENT_PID)"` in a session of its own. It dies with the
process that started it (PR_SET_PDEATHSIG, then SIGTERM kills its own process tree, so a browser it started goes
too) and ignores Ctrl-C (the parent handles that and closes the pool). Every answer is ("ok", value) or
("error", "ExceptionType: message"); an error makes the parent kill and rebuild this worker.

`guard(PARENT_PID)` is the other process this module runs: it ends, when its parent dies, what the parent started
(the local Ray that `r1_gui.envs.runtime.ray_pool` starts for a run).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import time
from multiprocessing.connection import Connection

from r1_gui.envs.runtime.processes import (  # imported before any signal: the handler must not import
    descendants,
    kill_tree,
)

PR_SET_PDEATHSIG = 1


def _die_with(parent_pid: int, on_death=None) -> None:
    """SIGTERM when the parent dies (Linux); the handler (`on_death(signum, frame)`, by default one that ends this
    worker's whole process tree) runs then."""

    def end_tree(signum, frame):
        kill_tree(os.getpid())

    end_tree = on_death or end_tree
    signal.signal(signal.SIGTERM, end_tree)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        except OSError:  # pragma: no cover (no libc.so.6: the parent's atexit close is the only guard)
            pass
    if os.getppid() != parent_pid:  # the parent died before the death signal was armed
        end_tree(signal.SIGTERM, None)


def _describe(env, seed: int) -> dict:
    from r1_gui.envs.contract import check_env, declared_task_presets, declared_tasks, episode_count, has_expert

    info = check_env(env, seed=seed)
    return {
        "tasks": declared_tasks(env),
        "task_presets": declared_task_presets(env),
        "episode_count": episode_count(env),
        "has_expert": has_expert(env, info),
        "screen_size": tuple(info["screen_size"]),
        "info": info,
    }


def serve(fd: int, parent_pid: int) -> None:
    _die_with(parent_pid)
    built: list = []  # the environment, once made
    try:
        _serve(Connection(fd), built)
    finally:  # whatever ends the loop (the parent gone, close, an error), the environment closes
        for env in built:
            try:
                env.close()
            except Exception:  # closing must not hang the exit; the parent kills the tree anyway
                pass


def _serve(connection: Connection, built: list) -> None:
    from r1_gui.envs.contract import make_env, reset_options

    env = None
    while True:
        try:
            command, payload = connection.recv()
        except (EOFError, OSError):  # the parent is gone
            break
        try:
            if command == "make":
                env = make_env(*payload)
                built.append(env)
                continue  # the first real call's answer also says the environment was built
            if command == "close":
                break
            if env is None:
                raise RuntimeError("the environment was not built")
            if command == "describe":
                value = _describe(env, payload)
            elif command == "reset":
                seed, task = payload
                value = env.reset(seed=seed, options=reset_options(task))
            elif command == "step":
                value = env.step(payload)
            else:
                raise ValueError(f"unknown command {command!r}")
            connection.send(("ok", value))
        except Exception as error:
            try:
                connection.send(("error", f"{type(error).__name__}: {error}"))
            except OSError:
                break
            if command == "make":
                break


def guard(parent_pid: int, interval: float = 0.5) -> None:
    """Remember every process below `parent_pid` and SIGKILL, with their trees, those still alive when it dies.
    `RayEnvPool` runs one beside a local Ray it started for the run (`python -c ...; guard(PID)`): Ray stops that
    Ray when its driver exits, but a driver killed with SIGKILL takes only the head's processes with it, and the
    raylet's agents then wait on the dead head for a minute or more."""
    seen: dict[int, int] = {}  # pid -> its start time, so a reused pid is never killed

    def end_all(signum, frame):
        for pid, started in seen.items():
            if start_time(pid) == started:
                kill_tree(pid)
        os._exit(0)

    _die_with(parent_pid, end_all)
    while True:
        for pid in descendants(parent_pid):
            if pid != os.getpid() and pid not in seen:
                seen[pid] = start_time(pid)
        time.sleep(interval)


def start_time(pid: int) -> int | None:
    """When `pid` started (clock ticks after boot), or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return int(stat.read().rsplit(b")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None
