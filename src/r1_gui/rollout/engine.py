"""`AsyncRollouts`: the trainer's side of asynchronous rollouts. It starts the rollout workers, hands them resets,
collects their finished groups into the buffer, publishes the trainer's weights to them, restarts a worker that
dies, and gives the trainer each step's groups.

    rollouts = AsyncRollouts(spec, AsyncSettings(workers=2, max_staleness=1), resets, groups_per_step=4)
    rollouts.start(model, step=0)          # publish weights version 0, start the workers (on_train_begin)
    groups = rollouts.take(4, step=0)      # the step's groups (MultiTurnGRPOTrainer._rollout)
    rollouts.publish(model, step=1)        # after the optimizer step (every weight_sync_steps steps)
    rollouts.advance(1)                    # the trainer is at step 1: more groups may start
    rollouts.close()

**How many groups play.** A group may start while the groups that can still be trained on (started, less those lost
or dropped for age) number fewer than (steps since the start + 1 + max_staleness) x groups per step +
groups_ahead: AReaL's bound on off-policyness, counted in groups. At max_staleness 0 and groups_ahead 0 the groups
of step n start only once the weights of step n are published, so every group is played with the weights it is
trained against (the synchronous semantics, with the episodes spread over the workers); at max_staleness 1 the
workers play the next step's groups while the trainer trains; groups_ahead more are in flight so that a straggler
never holds a step (it lands in a later step, or is dropped for age). Each worker plays up to
ceil(((1 + max_staleness) x groups per step + groups_ahead) / workers) groups at once.

**Which resets.** The workers play their own stream of the run's resets (`ResetStream`: every reset once per epoch,
shuffled per epoch from the run's seed), not the order trl's sampler draws; a run resumed at step n starts the stream
n steps in.

**Failures.** A group whose environment could not start is lost and counted (`failed_episodes`); a worker process
that dies is restarted and the groups it was playing are lost and counted (`worker_restarts`, `failed_episodes`); a
worker that dies `max_restarts` times without finishing a group in between ends the run with one error naming it.
Workers die with the trainer's process, even by SIGKILL, and take their environments with them.
"""

from __future__ import annotations

import atexit
import logging
import math
import os
import random
import socket
import subprocess
import threading
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection, wait
from typing import Any

from r1_gui.envs.runtime.pool import worker_command
from r1_gui.envs.runtime.processes import kill_tree
from r1_gui.rollout.buffer import BufferClosed, Group, GroupBuffer
from r1_gui.rollout.weights import SharedWeights, trainable_parameters
from r1_gui.rollout.worker import WorkerSpec, receive_message, send_message

logger = logging.getLogger(__name__)

MODES = ("sync", "async")


@dataclass(frozen=True)
class AsyncSettings:
    """The settings of asynchronous rollouts (their flags: `--rollout_workers`, `--max_staleness`,
    `--rollout_groups_ahead`, `--weight_sync_steps`)."""

    workers: int = 2
    max_staleness: int = 1
    groups_ahead: int = 0
    weight_sync_steps: int = 1
    max_restarts: int = 3  # deaths of one worker in a row (no group finished between) before the run stops
    # where the workers run: None, processes of this machine; a PoolSettings of --env_backend ray: Ray actors placed
    # where its --env_resources are (beside their environments), on the cluster of its --ray_address
    ray: Any = None


def check_async_settings(settings: AsyncSettings) -> None:
    """ValueError naming the flag of a setting that cannot work."""
    if settings.workers < 1:
        raise ValueError(f"--rollout_workers must be at least 1, got {settings.workers}")
    if settings.max_staleness < 0:
        raise ValueError(f"--max_staleness must be 0 (every group played with the current weights) or more, got "
                         f"{settings.max_staleness}")  # fmt: skip
    if settings.groups_ahead < 0:
        raise ValueError(f"--rollout_groups_ahead must be 0 or more, got {settings.groups_ahead}")
    if settings.weight_sync_steps < 1:
        raise ValueError(f"--weight_sync_steps must be at least 1, got {settings.weight_sync_steps}")
    if settings.max_staleness < settings.weight_sync_steps - 1:
        raise ValueError(
            f"--weight_sync_steps {settings.weight_sync_steps} leaves the workers' weights up to "
            f"{settings.weight_sync_steps - 1} steps old, more than --max_staleness {settings.max_staleness}: every "
            f"group would be dropped for age; raise --max_staleness to {settings.weight_sync_steps - 1} or lower "
            "--weight_sync_steps"
        )


class ResetStream:
    """The run's resets, every one once per epoch in an order shuffled per epoch from `seed`, from `position` on."""

    def __init__(self, resets: Sequence[tuple[str | None, int]], seed: int, position: int = 0):
        if not resets:
            raise ValueError("asynchronous rollouts need at least one reset to play")
        self.resets, self.seed, self.position = list(resets), int(seed), int(position)

    def next(self) -> tuple[str | None, int]:
        epoch, index = divmod(self.position, len(self.resets))
        order = list(range(len(self.resets)))
        random.Random(f"resets:{self.seed}:{epoch}").shuffle(order)
        self.position += 1
        return self.resets[order[index]]


class _LocalWorker:
    """A worker process of this machine and its connection; `playing`: the groups it was handed, by start index."""

    def __init__(self, index: int, spec: WorkerSpec):
        parent_end, child_end = socket.socketpair()
        self.index = index
        self.process = subprocess.Popen(
            worker_command(f"serve({child_end.fileno()}, {os.getpid()})", module="r1_gui.rollout.worker"),
            pass_fds=(child_end.fileno(),),
            start_new_session=True,  # its own process group: killing it ends its environments and browsers
            stdin=subprocess.DEVNULL,
        )
        child_end.close()
        self.connection = Connection(parent_end.detach())
        send_message(self.connection, spec)
        self.playing: dict[int, tuple[str | None, int]] = {}
        self.ready = False

    @property
    def pid(self) -> int:
        return self.process.pid

    def play(self, started: int, task: str | None, seed: int) -> None:
        send_message(self.connection, ("play", (started, task, seed)))

    def receive(self) -> tuple[str, Any]:
        """The next message: ("ready", pid), ("group", Group), ("failed", (started, why)) or ("died", why)."""
        try:
            return receive_message(self.connection)
        except (EOFError, OSError):
            return "died", f"exit code {self.process.wait(timeout=10)}"

    def stop(self) -> None:
        try:
            send_message(self.connection, ("close", None))
        except OSError:
            pass

    def wait(self, seconds: float) -> None:
        try:
            self.process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            pass

    def kill(self) -> None:
        kill_tree(self.process.pid)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover (SIGKILL did not end it)
            logger.warning("rollout worker %d did not end after SIGKILL", self.process.pid)
        self.connection.close()


class _RayWorker:
    """A worker as a Ray actor (`r1_gui.rollout.worker.RolloutHost`), placed with the environments' options."""

    def __init__(self, index: int, spec: WorkerSpec, options: dict, weights: tuple[int, Any] | None):
        import sys

        import ray

        from r1_gui.rollout.worker import RolloutHost

        host = ray.remote(RolloutHost).options(**options, max_concurrency=spec.concurrency + 1)
        self.index, self.handle = index, host.remote(spec, list(sys.path))
        self.calls: dict[Any, int | None] = {self.handle.ready.remote(): None}  # ObjectRef -> started (None: ready)
        self.playing: dict[int, tuple[str | None, int]] = {}
        self.ready, self.pid, self.node = False, None, None
        if weights is not None:
            self.set_weights(*weights)

    def set_weights(self, version: int, reference) -> None:
        self.handle.set_weights.remote(version, reference)

    def play(self, started: int, task: str | None, seed: int) -> None:
        self.calls[self.handle.play.remote(started, task, seed)] = started

    def receive(self, reference) -> tuple[str, Any]:
        import ray
        from ray.exceptions import RayActorError, RayError

        started = self.calls.pop(reference)
        try:
            value = ray.get(reference)
        except RayActorError as error:
            return "died", f"its Ray actor is gone: {type(error).__name__}"
        except RayError as error:
            if started is None:
                return "died", f"it could not start: {type(error).__name__}: {error}"
            return "failed", (started, f"{type(error).__name__}: {str(error).strip().splitlines()[-1][:300]}")
        if started is None:
            self.pid, self.node = value
            return "ready", self.pid
        return "group", value

    def stop(self) -> None:
        try:
            self.handle.close.remote()
        except Exception:  # noqa: BLE001 (Ray already shut down)
            pass

    def wait(self, seconds: float) -> None:
        pass

    def kill(self) -> None:
        import ray

        try:
            ray.kill(self.handle, no_restart=True)
        except Exception:  # noqa: BLE001 (gone, or Ray shut down)
            pass


class AsyncRollouts:
    """See the module docstring. `spec`: what each worker builds and plays (its `concurrency` and `weights` are
    set here; None for a subclass that fills the buffer itself); `resets`: the run's resets; `groups_per_step`: the
    groups one trainer process takes a step."""

    def __init__(
        self,
        spec: WorkerSpec,
        settings: AsyncSettings,
        resets: Sequence[tuple[str | None, int]],
        groups_per_step: int,
        seed: int = 0,
    ):
        check_async_settings(settings)
        if groups_per_step < 1:
            raise ValueError(f"a step takes at least 1 group, got {groups_per_step}")
        self.settings, self.groups_per_step, self.seed = settings, groups_per_step, seed
        self.weight_sync_steps, self.max_staleness = settings.weight_sync_steps, settings.max_staleness
        self.capacity = (1 + settings.max_staleness) * groups_per_step + settings.groups_ahead
        concurrency = math.ceil(self.capacity / settings.workers)
        self.spec = None if spec is None else replace(spec, concurrency=concurrency)
        self.resets = list(resets)
        self.buffer = GroupBuffer(self.capacity)
        self.shared: SharedWeights | None = None
        self.workers: list = []  # _LocalWorker or _RayWorker
        self.start_step = self.step = 0
        self.dispatched = self.lost = 0
        self.restarts = self.failed_episodes = 0
        self.sync_s = self.sync_mb = self.wait_s = 0.0
        # each finished group's timings and its episodes' (task, seed, turns): bench/async_rollouts.py reads them
        self.received: list[dict] = []
        self._deaths: dict[int, int] = {}  # worker index -> deaths in a row
        self._fatal: str | None = None
        self._closed = False
        self._wake_r, self._wake_w = socket.socketpair()
        self._collector: threading.Thread | None = None
        _open_rollouts.add(self)

    # -- the trainer's calls ----------------------------------------------------------------------------------
    def start(self, model, step: int) -> None:
        """Publish `model`'s trainable weights as version `step` and start the workers and the collector."""
        self.start_step = self.step = int(step)
        self.stream = ResetStream(self.resets, self.seed, position=self.start_step * self.groups_per_step)
        where = "Ray actors" if self.settings.ray is not None else "processes of this machine"
        if self.settings.ray is None:
            self.shared = SharedWeights.create(trainable_parameters(model))
            self.publish(model, step)
            self.spec = replace(self.spec, weights=self.shared.layout)
        logger.info(
            "asynchronous rollouts: %d worker(s) (%s), up to %d groups at once each, max staleness %d, %d group(s) "
            "ahead; weights: %.1f MB of trainable parameters (%s)",
            self.settings.workers,
            where,
            self.spec.concurrency,
            self.max_staleness,
            self.settings.groups_ahead,
            sum(p.numel() * p.element_size() for p in trainable_parameters(model).values()) / 1e6,
            "Ray's object store" if self.settings.ray is not None else "shared memory",
        )
        if self.settings.ray is not None:
            from r1_gui.envs.runtime.ray_pool import actor_options, join_ray

            join_ray(self, self.settings.ray.ray_address, self.settings.ray.resources)
            self._ray_options = actor_options(self.settings.ray.resources)
            self.publish(model, step)  # into Ray's object store, now that Ray is up
        self.workers = [self._new_worker(index) for index in range(self.settings.workers)]
        self._collector = threading.Thread(target=self._collect, name="rollout-collector", daemon=True)
        self._collector.start()

    def publish(self, model, step: int) -> None:
        """Publish `model`'s trainable weights as version `step`; the workers load them before their next turn."""
        if self.settings.ray is None:
            self.sync_s, self.sync_mb = self.shared.write(trainable_parameters(model), step)
        else:
            import ray

            start = time.perf_counter()
            parameters = {name: p.detach().to("cpu", copy=True) for name, p in trainable_parameters(model).items()}
            self._ray_weights = (int(step), ray.put(parameters))
            for worker in self.workers:
                worker.set_weights(*self._ray_weights)
            self.sync_s = time.perf_counter() - start
            self.sync_mb = sum(p.numel() * p.element_size() for p in parameters.values()) / 1e6
        logger.debug("weights version %d published: %.2f MB in %.4f s", step, self.sync_mb, self.sync_s)

    def advance(self, step: int) -> None:
        """The trainer is at step `step`: more groups may start."""
        self.step = int(step)
        self._wake()

    def take(self, count: int, step: int) -> list[Group]:
        """The step's `count` groups (the oldest of lag at most max_staleness), waiting for them."""
        start = time.monotonic()
        try:
            groups = self.buffer.take(count, step, self.max_staleness, check=self._check)
        except BufferClosed as closed:
            raise RuntimeError(f"asynchronous rollouts stopped: {closed}") from None
        finally:
            self.wait_s = time.monotonic() - start
        self._wake()  # groups dropped for age make room for new ones
        return groups

    def stats(self) -> dict[str, float]:
        """What the trainer logs under async/ each step."""
        return {
            "buffer_groups": self.buffer.groups,
            "dropped_stale": self.buffer.dropped_stale,
            "trainer_wait_s": self.wait_s,
            "weight_sync_s": self.sync_s,
            "weight_sync_mb": self.sync_mb,
            "worker_restarts": self.restarts,
            "failed_episodes": self.failed_episodes,
        }

    def close(self) -> None:
        """End the workers (and their environments) and free the weights' memory."""
        if self._closed:
            return
        self._closed = True
        self.buffer.close("the run ended")
        self._wake()
        if self._collector is not None:
            self._collector.join(timeout=30)
        for worker in self.workers:
            worker.stop()
        deadline = time.monotonic() + 5
        for worker in self.workers:
            worker.wait(max(0.0, deadline - time.monotonic()))
            worker.kill()
        self.workers = []
        if self.shared is not None:
            self.shared.close()
        _open_rollouts.discard(self)
        if self.settings.ray is not None:
            from r1_gui.envs.runtime.ray_pool import leave_ray

            leave_ray(self)

    # -- the collector thread ---------------------------------------------------------------------------------
    def _wake(self) -> None:
        try:
            self._wake_w.send(b"x")
        except OSError:
            pass

    def _check(self) -> None:
        if self._fatal:
            raise RuntimeError(f"asynchronous rollouts stopped: {self._fatal}")

    def _allowed(self) -> int:
        """How many more groups may start now (the module docstring's bound)."""
        useful = self.dispatched - self.lost - self.buffer.dropped_stale
        bound = (self.step - self.start_step + 1 + self.max_staleness) * self.groups_per_step
        return bound + self.settings.groups_ahead - useful

    def _dispatch(self) -> None:
        while self._allowed() > 0:
            free = [w for w in self.workers if w.ready and len(w.playing) < self.spec.concurrency]
            if not free:
                return
            worker = min(free, key=lambda w: len(w.playing))
            task, seed = self.stream.next()
            started = self.dispatched
            try:
                worker.play(started, task, seed)
            except OSError:
                return  # it died: the next round restarts it
            worker.playing[started] = (task, seed)
            self.dispatched += 1

    def _collect(self) -> None:
        try:
            while not self._closed:
                self._dispatch()
                for worker, (kind, value) in self._events(timeout=1.0):
                    self._handle(worker, kind, value)
        except Exception as error:  # noqa: BLE001 (the trainer must hear of it, not a dead thread)
            logger.exception("the rollout collector failed")
            self._fatal = f"the rollout collector failed: {type(error).__name__}: {error}"
            self.buffer.close(self._fatal)

    def _events(self, timeout: float) -> list[tuple[Any, tuple[str, Any]]]:
        """The workers' messages that arrived within `timeout` seconds (or until `_wake`)."""
        if self.settings.ray is not None:
            import ray

            calls = {reference: worker for worker in self.workers for reference in worker.calls}
            if not calls:
                time.sleep(min(timeout, 0.2))
                return []
            done, _ = ray.wait(list(calls), num_returns=1, timeout=min(timeout, 0.2))
            return [(calls[reference], calls[reference].receive(reference)) for reference in done]
        events = []
        connections = {worker.connection: worker for worker in self.workers}
        for ready in wait([*connections, self._wake_r], timeout=timeout):
            if ready is self._wake_r:
                self._wake_r.recv(4096)
            else:
                events.append((connections[ready], connections[ready].receive()))
        events += [(w, ("died", f"exit code {w.process.returncode}")) for w in self.workers if w.process.poll() is not None
                   and all(w is not worker for worker, _ in events)]  # fmt: skip
        return events

    def _handle(self, worker, kind: str, value: Any) -> None:
        if worker not in self.workers:
            return  # a message of a worker already replaced
        if kind == "ready":
            worker.ready = True
        elif kind == "group":
            worker.playing.pop(value.started, None)
            self._deaths[worker.index] = 0
            value.worker = worker.index
            episodes = [(episode.task, episode.seed, len(episode.turns)) for episode in value.episodes]
            self.received.append({**value.stats, "episodes": episodes})
            if not self.buffer.add(value, timeout=60):
                self.lost += 1
        elif kind == "failed":
            started, why = value
            worker.playing.pop(started, None)
            self.lost += 1
            self.failed_episodes += self.spec.num_generations
            logger.warning("rollout worker %d lost a group: %s", worker.index, why)
        elif kind == "died":
            self._restart(worker, value)

    def _new_worker(self, index: int):
        if self.settings.ray is None:
            return _LocalWorker(index, self.spec)
        return _RayWorker(index, self.spec, self._ray_options, getattr(self, "_ray_weights", None))

    def _restart(self, worker, why: str) -> None:
        lost = len(worker.playing)
        self.lost += lost
        self.failed_episodes += lost * self.spec.num_generations
        self.restarts += 1
        deaths = self._deaths[worker.index] = self._deaths.get(worker.index, 0) + 1
        worker.kill()
        if deaths > self.settings.max_restarts:
            self._fatal = (
                f"rollout worker {worker.index} died {deaths} times in a row ({why}; its error is above): the worker "
                "could not build its model or environments"
            )
            self.buffer.close(self._fatal)
            self.workers.remove(worker)
            return
        logger.warning(
            "rollout worker %d died (%s) with %d group(s) in play, counted as failed; restarting it",
            worker.index,
            why,
            lost,
        )
        self.workers[self.workers.index(worker)] = self._new_worker(worker.index)


_open_rollouts: weakref.WeakSet[AsyncRollouts] = weakref.WeakSet()


@atexit.register
def _close_open_rollouts() -> None:  # Ctrl-C or an error ends the run without on_train_end: end the workers here
    for rollouts in list(_open_rollouts):
        rollouts.close()
