"""The benchmarks that run each side in a fresh process (gpu_step_profile.py, memory_plan.py, trainer_overhead.py):
start one, and read what it sends without waiting forever on a child that died first.

`multiprocessing.Pipe` reports the end of a pipe only when every copy of the writing end is closed; the parent holds
a copy of the child's end unless it closes it, so a child killed before it sends (CUDA out of memory in a C++
allocator, the kernel's OOM killer, a segfault) would leave the parent's `recv()` blocked for good.
"""

from __future__ import annotations

import multiprocessing as mp


def start(target, *args):
    """Run target(*args, conn) in a spawned process; returns (process, conn), the parent's end of the pipe."""
    context = mp.get_context("spawn")
    conn, child_end = context.Pipe()
    process = context.Process(target=target, args=(*args, child_end))
    process.start()
    # the child has its own copy; with the parent's closed, recv() raises EOFError once the child is gone
    child_end.close()
    return process, conn


def receive(process, conn, what: str):
    """The next object the child sends; SystemExit naming `what` and the exit code if it ended before sending."""
    try:
        return conn.recv()
    except EOFError:
        process.join()
        raise SystemExit(
            f"{what}: the child process ended with exit code {process.exitcode} before it sent its result "
            "(its own error, if it printed one, is above)"
        ) from None
