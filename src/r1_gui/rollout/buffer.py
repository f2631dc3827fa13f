"""The bounded buffer between rollout workers and the trainer: finished groups (the episodes of one reset), each
tagged with the weights versions its turns were generated with.

A weights version is the trainer's optimizer step count when the weights were published (0: the weights the run
started from). A group's policy lag, when the trainer takes it at step `step`, is `step` minus the oldest version
among its turns (a worker loads new weights between turns, so one episode may hold several versions).

    buffer = GroupBuffer(capacity=12)
    buffer.add(group)                                      # a worker finished it (blocks while the buffer is full)
    taken = buffer.take(4, step=7, max_staleness=1)        # the 4 oldest groups of lag <= 1; older ones dropped
    buffer.dropped_stale, buffer.groups                    # counted for the log

`take` waits until enough fresh groups are there (the trainer's wait, `waited_s`); groups whose lag is above the
bound are dropped and counted as they are met, never trained on.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Group:
    """One reset's episodes, as a worker finished them. `versions` holds, per episode, the weights version of each
    turn; `started` orders the groups as they were handed out (the oldest first)."""

    task: str | None
    seed: int
    episodes: list[Any]  # r1_gui.agent.loop.Episode, one per generation
    versions: list[list[int]]  # per episode, per turn
    started: int  # the dispatch index (0, 1, 2, ...): the order the groups were started in
    worker: int = -1  # which worker played it
    stats: dict[str, float] = field(default_factory=dict)  # the worker's timings (environment and generation s)

    @property
    def oldest_version(self) -> int:
        """The weights version of the oldest turn (a group without turns is as old as its start says: 0)."""
        turns = [version for episode in self.versions for version in episode]
        return min(turns) if turns else 0

    def lag(self, step: int) -> int:
        return step - self.oldest_version


class BufferClosed(RuntimeError):
    """The buffer was closed while the trainer waited (the rollouts failed or the run ends)."""


class GroupBuffer:
    """Finished groups in a bounded, thread-safe buffer; see the module docstring."""

    def __init__(self, capacity: int):
        if capacity < 1:
            raise ValueError(f"a group buffer holds at least 1 group, got capacity {capacity}")
        self.capacity = capacity
        self._groups: list[Group] = []
        self._condition = threading.Condition()
        self._closed: str | None = None
        self.dropped_stale = 0  # groups dropped for age, since the start
        self.waited_s = 0.0  # seconds the trainer waited in take, since the start

    @property
    def groups(self) -> int:
        with self._condition:
            return len(self._groups)

    def add(self, group: Group, timeout: float | None = None) -> bool:
        """Put a finished group in; waits while the buffer is full (False when `timeout` passed first)."""
        with self._condition:
            if not self._condition.wait_for(lambda: len(self._groups) < self.capacity or self._closed, timeout):
                return False
            if self._closed:
                return False
            self._groups.append(group)
            self._condition.notify_all()
            return True

    def take(
        self,
        count: int,
        step: int,
        max_staleness: int,
        timeout: float | None = None,
        check: Callable[[], None] | None = None,
    ) -> list[Group]:
        """The `count` oldest groups (lowest oldest version, then earliest started) whose lag at `step` is at most
        `max_staleness`, waiting for them; the groups met whose lag is above it are dropped (`dropped_stale`).
        `check()` runs every second while waiting (it raises to stop the wait, e.g. when every worker failed);
        TimeoutError after `timeout` seconds; BufferClosed when the buffer closes."""
        start = time.monotonic()
        deadline = None if timeout is None else start + timeout
        with self._condition:
            try:
                while True:
                    self._drop_stale(step, max_staleness)
                    if len(self._groups) >= count:
                        self._groups.sort(key=lambda group: (group.oldest_version, group.started))
                        taken, self._groups = self._groups[:count], self._groups[count:]
                        self._condition.notify_all()
                        return taken
                    if self._closed:
                        raise BufferClosed(self._closed)
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        raise TimeoutError(
                            f"{len(self._groups)} of the {count} groups a step needs arrived within {timeout:g} s"
                        )
                    self._condition.wait(1.0 if left is None else min(1.0, left))
                    if check is not None:
                        self._condition.release()
                        try:
                            check()
                        finally:
                            self._condition.acquire()
            finally:
                self.waited_s += time.monotonic() - start

    def _drop_stale(self, step: int, max_staleness: int) -> None:
        fresh = [group for group in self._groups if group.lag(step) <= max_staleness]
        if len(fresh) != len(self._groups):
            self.dropped_stale += len(self._groups) - len(fresh)
            self._groups = fresh
            self._condition.notify_all()

    def close(self, why: str = "the rollouts ended") -> None:
        with self._condition:
            self._closed = why
            self._condition.notify_all()

    def clear(self) -> list[Group]:
        """Take every group out (the run ends or resumes)."""
        with self._condition:
            groups, self._groups = self._groups, []
            self._condition.notify_all()
            return groups
