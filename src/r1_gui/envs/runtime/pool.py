"""`EnvPool`: environments side by side, each in its own worker process, so a slow backend costs max(step) per turn
and a failing one costs one episode, never the run.

    pool = EnvPool("r1_gui/Phone-v0", {"width": 224}, step_timeout=60)
    described = pool.describe()                       # check_env in a worker: tasks, episode_count, has_expert
    outcomes = pool.reset([0, 1], seeds=[7, 7], tasks=["open_app", "open_app"])
    outcomes = pool.step([0, 1], ["mobile.back()", "<tool_call>...</tool_call>"])
    pool.close()                                      # also at exit, on Ctrl-C and when the parent dies

Each slot is a worker process (`python -c ... r1_gui.envs.runtime.worker`, in a new session, so its process group holds
everything the environment starts, e.g. a browser) that builds the environment with `contract.make_env` and answers
reset/step/close over a socket. A call goes to every slot at once and waits for all answers until `step_timeout`
seconds have passed. Starting an environment (a worker importing and building it, and its first answer) is the
expensive part, so at most `max_starting` start at once (default: the cores this process may run on), the rest as
those finish: two GRPO runs starting 16 and 32 browsers together on 2 cores made Chromium's first page load miss its
10 s limit on every retry, and the run stopped. A slot whose environment raised, did not answer in time, or whose
process died is killed with its whole process tree, rebuilt on its next use, and reported as a failed `Outcome`
(`pool.failures` counts them); the caller scores that episode as failed and goes on. A reset that fails is retried on
a fresh worker `reset_retries` times, then `EnvStartError` says the environment cannot start. Workers set
PR_SET_PDEATHSIG, so they (and what they started) end when the process that built the pool dies, even by SIGKILL.

`SlotPool` holds what every backend shares (the calls, the reset retries, the task each slot last played, the
failure count); `EnvPool` is the backend of this machine, `r1_gui.envs.runtime.ray_pool.RayEnvPool` the one of a Ray
cluster, and `r1_gui.envs.runtime.backend.make_pool` gives either from the command line's settings.
"""

from __future__ import annotations

import atexit
import logging
import os
import socket
import subprocess
import sys
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any

from r1_gui.envs.runtime.processes import kill_tree
from r1_gui.flags.episodes import DEFAULT_STEP_TIMEOUT  # the --env_step_timeout default

logger = logging.getLogger(__name__)

START_TIMEOUT = 120.0  # seconds for a worker to import and build its environment
RESET_RETRIES = 3
CLOSE_GRACE = 5.0  # seconds a worker gets to close its environment before it is killed
# Errors of building or checking an environment that are the user's to fix (describe raises them as ValueError).
USER_ERRORS = ("ContractError:", "ValueError:", "FileNotFoundError:", "NotADirectoryError:", "PermissionError:")


class EnvStartError(RuntimeError):
    """An environment could not be started or reset even after rebuilding it; the message says why."""


@dataclass
class Outcome:
    """One slot's answer: `result` is what reset returned ((observation, info)) or step returned
    ((observation, reward, terminated, truncated, info)); `failure` says why there is none (the slot was rebuilt)."""

    result: tuple | None = None
    failure: str | None = None

    @property
    def ok(self) -> bool:
        return self.failure is None


@dataclass
class Described:
    """What `describe` found by playing `contract.check_env` in a worker."""

    tasks: tuple[str, ...]
    task_presets: dict[str, tuple[str, ...]]
    episode_count: int | None
    has_expert: bool
    screen_size: tuple[int, int]
    info: dict = field(repr=False)


class _Worker:
    """One worker process and its end of the socket."""

    def __init__(self, env_id: str, env_kwargs: dict):
        parent_end, child_end = socket.socketpair()
        self.process = subprocess.Popen(
            worker_command(f"serve({child_end.fileno()}, {os.getpid()})"),
            pass_fds=(child_end.fileno(),),
            start_new_session=True,  # its own process group: killing it ends what the environment started
            stdin=subprocess.DEVNULL,
        )
        child_end.close()
        self.connection = Connection(parent_end.detach())
        self.connection.send(("make", (env_id, env_kwargs)))
        self.started = False

    def kill(self) -> None:
        kill_tree(self.process.pid)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover (a process SIGKILL did not end)
            logger.warning("worker %d did not end after SIGKILL", self.process.pid)
        self.connection.close()


class SlotPool:
    """What every pool backend shares: the calls (describe, reset with its retries, slots_for, step), the failure
    count and the tasks each slot last reset to. A backend (`EnvPool` here; `r1_gui.envs.runtime.ray_pool.RayEnvPool` on a
    Ray cluster) implements `_call` and `close`; callers see only this interface and never know the backend."""

    def __init__(
        self,
        env_id: str,
        env_kwargs: dict | None = None,
        *,
        step_timeout: float = DEFAULT_STEP_TIMEOUT,
        reset_retries: int = RESET_RETRIES,
        max_starting: int | None = None,
    ):
        if not step_timeout > 0:
            raise ValueError(f"--env_step_timeout must be a positive number of seconds, got {step_timeout}")
        if max_starting is not None and max_starting < 1:
            raise ValueError(f"max_starting must be at least 1 environment starting at once, got {max_starting}")
        self.env_id, self.env_kwargs = env_id, dict(env_kwargs or {})
        self.step_timeout, self.reset_retries = float(step_timeout), int(reset_retries)
        self.max_starting = max_starting
        self.failures = 0  # slots rebuilt after a raise, a timeout or a dead process
        self.failure_log: list[str] = []
        self._last_task: dict[int, str | None] = {}  # the task each slot's environment last reset to
        self._closed = False
        _open_pools.add(self)

    # -- calls ------------------------------------------------------------------------------------------------

    def describe(self, seed: int = 0) -> Described:
        """Check the environment against the contract in slot 0's worker; raises ValueError (a contract problem,
        a wrong id or keyword) or EnvStartError (it did not start)."""
        (outcome,) = self.call([0], "describe", [seed], timeout=max(self.step_timeout, START_TIMEOUT), count=False)
        if not outcome.ok:
            message = outcome.failure
            if message.startswith(USER_ERRORS):  # a wrong id, keyword or path, or a contract problem: the user's
                raise ValueError(message.split(": ", 1)[1])
            raise EnvStartError(f"{self.env_id} could not be started: {message}")
        return Described(**outcome.result)

    def reset(self, slots: Sequence[int], seeds: Sequence[int], tasks: Sequence[str | None]) -> list[Outcome]:
        """Reset the slots at once; a slot that fails is rebuilt and retried (`reset_retries`), then EnvStartError."""
        payloads = [(int(seed), task) for seed, task in zip(seeds, tasks, strict=True)]
        outcomes = self.call(slots, "reset", payloads)
        for attempt in range(self.reset_retries):
            failed = [i for i, outcome in enumerate(outcomes) if not outcome.ok]
            if not failed:
                break
            logger.warning(
                "%s: %d reset(s) failed (%s); rebuilding, attempt %d of %d",
                self.env_id,
                len(failed),
                outcomes[failed[0]].failure,
                attempt + 1,
                self.reset_retries,
            )
            retried = self.call([slots[i] for i in failed], "reset", [payloads[i] for i in failed])
            for i, outcome in zip(failed, retried, strict=True):
                outcomes[i] = outcome
        for slot, task, outcome in zip(slots, tasks, outcomes, strict=True):
            self._last_task[slot] = task if outcome.ok else None
        failed = [outcome.failure for outcome in outcomes if not outcome.ok]
        if failed:
            raise EnvStartError(
                f"{self.env_id} could not be reset after {self.reset_retries + 1} tries: {failed[0]}. Check that it "
                "starts on its own (python -m r1_gui.play --env ...) and its --env_kwargs"
            )
        return outcomes

    def slots_for(self, tasks: Sequence[str | None]) -> list[int]:
        """Slots 0 to len(tasks) - 1 for episodes of these tasks, each where it can be in a slot whose environment
        last reset to the same task (the others in the free slots in order): a browser with the task's page loaded
        resets without loading it (r1_gui/Web-v0: 0.085 s a reset against 0.18 s when the task changes). Which slot
        plays an episode does not change the episode (the contract: the same task and seed give the same start)."""
        free, chosen = list(range(len(tasks))), [None] * len(tasks)
        for i, task in enumerate(tasks):
            match = next((slot for slot in free if task is not None and self._last_task.get(slot) == task), None)
            if match is not None:
                chosen[i] = match
                free.remove(match)
        return [slot if slot is not None else free.pop(0) for slot in chosen]

    def step(self, slots: Sequence[int], actions: Sequence[Any]) -> list[Outcome]:
        """Step the slots at once; a slot that fails answers a failed Outcome and is rebuilt on its next use."""
        return self.call(slots, "step", list(actions))

    def __enter__(self) -> SlotPool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- what a backend implements ----------------------------------------------------------------------------

    def call(
        self, slots: Sequence[int], command: str, payloads: Sequence[Any], timeout: float | None = None,
        count: bool = True,
    ) -> list[Outcome]:  # fmt: skip
        """Send `command` ("describe", "reset" or "step") with each slot's payload to every slot at once and wait
        for all answers, each within `timeout` (default `step_timeout`; an environment that starts first gets
        START_TIMEOUT more); a slot that raised, ran late or died is rebuilt and answers a failed Outcome (counted
        in `failures` when `count`)."""
        if len(set(slots)) != len(slots):
            raise ValueError(f"each slot may be called once per call, got {list(slots)}")
        if self._closed:
            raise RuntimeError("the pool is closed")
        return self._call(slots, command, payloads, timeout or self.step_timeout, count)

    def _call(
        self, slots: Sequence[int], command: str, payloads: Sequence[Any], allowed: float, count: bool
    ) -> list[Outcome]:
        """`call` on this backend: `allowed` seconds for each answer (more for an environment that starts)."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    # `waiting`, a backend's answers awaited: what it waits on (a connection, an ObjectRef) -> (slot, deadline)
    @staticmethod
    def _time_left(waiting: dict) -> float:
        """Seconds to the earliest deadline of the answers awaited (0 when it has passed)."""
        return max(0.0, min(limit for _, limit in waiting.values()) - time.monotonic())

    @staticmethod
    def _overdue(waiting: dict) -> list[int]:
        """The slots whose answer is past its deadline, taken out of `waiting`."""
        late = [key for key, (_, limit) in waiting.items() if limit <= time.monotonic()]
        return [waiting.pop(key)[0] for key in late]

    def _forget(self) -> None:  # a closed pool needs no closing at exit
        _open_pools.discard(self)


class EnvPool(SlotPool):
    """Environments of one id side by side in worker processes of this machine; see the module docstring."""

    def __init__(self, env_id: str, env_kwargs: dict | None = None, **settings):
        super().__init__(env_id, env_kwargs, **settings)
        self.max_starting = self.max_starting or len(os.sched_getaffinity(0))
        self._workers: dict[int, _Worker] = {}

    def close(self) -> None:
        """Close every environment (each gets CLOSE_GRACE seconds) and end every worker and what it started."""
        if self._closed:
            return
        self._closed = True
        workers, self._workers = list(self._workers.values()), {}
        for worker in workers:
            try:
                worker.connection.send(("close", None))
            except OSError:
                pass
        deadline = time.monotonic() + CLOSE_GRACE
        for worker in workers:
            try:
                worker.process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            worker.kill()
        self._forget()

    @property
    def pids(self) -> list[int]:
        return [worker.process.pid for worker in self._workers.values()]

    # -- the machinery ----------------------------------------------------------------------------------------

    def _worker(self, slot: int) -> _Worker:
        if self._closed:
            raise RuntimeError("the pool is closed")
        worker = self._workers.get(slot)
        if worker is None or worker.process.poll() is not None:
            if worker is not None:
                worker.kill()
            worker = self._workers[slot] = _Worker(self.env_id, self.env_kwargs)
        return worker

    def _fail(self, slot: int, why: str, count: bool) -> Outcome:
        worker = self._workers.pop(slot, None)
        self._last_task.pop(slot, None)  # its rebuilt environment has played nothing
        if worker is not None:
            worker.kill()
        if count:
            self.failures += 1
            self.failure_log.append(f"slot {slot}: {why}")
            logger.warning("%s slot %d failed and will be rebuilt: %s", self.env_id, slot, why)
        return Outcome(failure=why)

    def _call(
        self, slots: Sequence[int], command: str, payloads: Sequence[Any], allowed: float, count: bool
    ) -> list[Outcome]:
        outcomes: dict[int, Outcome] = {}
        waiting: dict[Connection, tuple[int, float]] = {}
        # slots whose environment must start first wait in line, so at most `max_starting` start at once
        cold = [(slot, payload) for slot, payload in zip(slots, payloads, strict=True) if not self._started(slot)]
        hot = [(slot, payload) for slot, payload in zip(slots, payloads, strict=True) if self._started(slot)]

        def send(slot: int, payload: Any) -> None:
            try:
                worker = self._worker(slot)
                # the first answer also covers importing and building the environment
                limit = allowed if worker.started else allowed + START_TIMEOUT
                worker.connection.send((command, payload))
                waiting[worker.connection] = (slot, time.monotonic() + limit)
            except OSError as error:
                outcomes[slot] = self._fail(slot, f"the worker could not be reached: {error}", count)

        def start_more() -> None:  # the next cold slots, while fewer than `max_starting` are starting
            while cold and self.max_starting > sum(
                not self._workers[slot].started for slot, _ in waiting.values() if slot in self._workers
            ):
                send(*cold.pop(0))

        for slot, payload in hot:
            send(slot, payload)
        start_more()
        while waiting:
            for connection in wait(list(waiting), timeout=self._time_left(waiting)):
                slot, _ = waiting.pop(connection)
                outcomes[slot] = self._answer(slot, connection, count)
            for slot in self._overdue(waiting):
                outcomes[slot] = self._fail(slot, f"{command} did not answer within {allowed:g} s", count)
            start_more()
        return [outcomes[slot] for slot in slots]

    def _started(self, slot: int) -> bool:
        worker = self._workers.get(slot)
        return worker is not None and worker.started and worker.process.poll() is None

    def _answer(self, slot: int, connection: Connection, count: bool) -> Outcome:
        try:
            status, value = connection.recv()
        except (EOFError, OSError):
            code = self._workers[slot].process.wait(timeout=10)
            return self._fail(slot, f"the worker process ended (exit code {code})", count)
        if status == "ok":
            self._workers[slot].started = True
            return Outcome(result=value)
        return self._fail(slot, value, count)


# ------------------------------------------------------------------------------------------ process trees


def check_lent(pool: SlotPool, env_id: str, env_kwargs: dict | None, step_timeout: float) -> SlotPool:
    """`pool`, a pool a caller lends and goes on using, once it plays `env_id` with `env_kwargs` and `step_timeout`;
    ValueError naming both settings otherwise."""
    asked = (env_id, dict(env_kwargs or {}), float(step_timeout))
    if (pool.env_id, pool.env_kwargs, pool.step_timeout) != asked:
        raise ValueError(
            f"the pool lent plays {pool.env_id} {pool.env_kwargs} (step timeout {pool.step_timeout} s), not "
            f"{asked[0]} {asked[1]} (step timeout {asked[2]} s)"
        )
    return pool


def worker_command(call: str, module: str = "r1_gui.envs.runtime.worker") -> list[str]:
    """The command line of a Python process that runs `call` (a function of `module` with its arguments) with this
    process's sys.path, so it imports what this process imports (a user's environment too)."""
    name = call.split("(", 1)[0]
    return [sys.executable, "-c", f"import sys; sys.path[:0] = {sys.path!r}; from {module} import {name}; {call}"]


_open_pools: weakref.WeakSet[SlotPool] = weakref.WeakSet()


@atexit.register
def _close_open_pools() -> None:
    for pool in list(_open_pools):
        pool.close()
