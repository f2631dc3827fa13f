"""`RayEnvPool`: the pool's slots as Ray actors on a cluster (`--env_backend ray`), so a run's environments use
other machines' cores, memory and emulators; the same interface and semantics as `EnvPool` (`SlotPool`).

    pool = RayEnvPool("r1_gui/Web-v0", {}, step_timeout=60, address="auto", resources={"browser": 1}, spares=2)
    pool.describe(); pool.reset([0, 1], [7, 8], [None, None]); pool.step([0, 1], [text, text]); pool.close()

Each slot is an `EnvHost` actor placed where the cluster has `resources` free (spread over the nodes that do). The
actor plays its environment in a one-slot `EnvPool` on its node: the environment is built with the same
`contract.make_env` in a worker process that dies with the actor (PR_SET_PDEATHSIG ends its process tree, a browser
included), however the actor ends (ray.kill, a SIGKILL, its node lost), and a step that hangs is cut at
`step_timeout` there. Observations come back as Ray objects (screenshots as arrays, not text).

What the local pool promises, on a cluster: a call goes to every slot at once and waits for all answers; a slot
whose actor raised, hung, died or whose node was lost answers a failed `Outcome` (`failures`, `failure_log`, and per
node `failures_per_node`), its actor is killed and the slot replaced; a reset that fails is retried on a fresh actor
`reset_retries` times, then `EnvStartError`; at most `max_starting` actors start at once (default: the CPUs of the
nodes that can hold one); `slots_for` sends an episode to a slot that last reset to its task.

Spares (`spares`): actors built and health-checked (a reset whose observation and info keep the contract) beside the
slots. A failed slot takes a ready spare within the same call, so the next episode there starts without waiting for
an environment to build (a browser takes seconds, an emulator minutes); a spare that fails its check, or whose node
is lost, is replaced in the background. `stats()` says how many spares were used and rebuilt.

Ray (`r1_gui.envs.runtime.ray_cluster`): `address="auto"` connects to the cluster RAY_ADDRESS or `ray start` on this
machine names, else starts a local Ray for the run (advertising the custom resources asked for, so the run can place
its environments) and stops it when the last pool closes; an address is checked before Ray is asked. A cluster the
user started stays up; the run's actors end with the run (closed at exit, on Ctrl-C, and killed by Ray when the
driver dies, even by SIGKILL), and a local Ray started for the run ends with a killed driver too (a guard process,
`r1_gui.envs.runtime.worker.guard`, ends what Ray leaves of it).
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import ray
from ray.exceptions import RayError

from r1_gui.envs.contract import check_info, check_observation
from r1_gui.envs.runtime.pool import CLOSE_GRACE, START_TIMEOUT, EnvPool, Outcome, SlotPool
from r1_gui.envs.runtime.ray_cluster import STANDARD_RESOURCES, connect, disconnect
from r1_gui.envs.runtime.ray_cluster import session as _session

logger = logging.getLogger(__name__)

PLACEMENT_TIMEOUT = 120.0  # seconds for the cluster to place a new actor and start its process (a node may be joining)
RAY_GRACE = 10.0  # seconds an answer may take beyond the actor's own limit (which it enforces on its environment)
HEALTH_SEED = 0


class EnvHost:
    """One slot's environment on a Ray node (the actor class): a one-slot `EnvPool` whose worker process builds the
    environment. `driver_path`: the driver's sys.path, appended to this process's (its own packages win), so an
    environment in the user's module imports here as it does in the local pool's workers."""

    def __init__(self, env_id: str, env_kwargs: dict, step_timeout: float, driver_path: list[str]):
        sys.path.extend(path for path in driver_path if path not in sys.path)
        self.pool = EnvPool(env_id, env_kwargs, step_timeout=step_timeout, reset_retries=0, max_starting=1)
        self.where = (ray.get_runtime_context().get_node_id(), os.getpid())

    def call(self, command: str, payload: Any, timeout: float) -> tuple[tuple[str, int], Outcome]:
        """((this node's id, this process's id), the environment's Outcome); "health" is a reset checked against
        the contract."""
        if command == "health":
            return self.where, self._health()
        (outcome,) = self.pool.call([0], command, [payload], timeout=timeout, count=False)
        return self.where, outcome

    def _health(self) -> Outcome:
        (outcome,) = self.pool.call([0], "reset", [(HEALTH_SEED, None)], count=False)
        if outcome.ok:
            observation, info = outcome.result
            problems = check_observation(observation, "health check") + check_info(info, "health check")
            if problems:
                return Outcome(failure="ContractError: " + "; ".join(problems))
        return outcome

    def close(self) -> None:
        self.pool.close()


_EnvHostActor = ray.remote(EnvHost)  # the actor class; EnvHost itself stays a plain class


@dataclass
class _Actor:
    """An EnvHost actor as the driver tracks it."""

    handle: Any
    started: bool = False  # it has answered once (built its environment)
    node: str | None = None  # where it runs, once it has answered
    pid: int | None = None
    task: str | None = None  # a spare: the task its health check reset to
    check: Any = None  # a spare: its pending health check (an ObjectRef)
    deadline: float = 0.0  # a spare: when its health check counts as failed


class RayEnvPool(SlotPool):
    """Environments of one id as Ray actors; see the module docstring."""

    def __init__(
        self,
        env_id: str,
        env_kwargs: dict | None = None,
        *,
        address: str = "auto",
        resources: dict | None = None,
        spares: int = 0,
        **settings,
    ):
        super().__init__(env_id, env_kwargs, **settings)
        self.address, self.resources, self.spares = address, dict(resources or {}), int(spares)
        self.failures_per_node: Counter[str] = Counter()
        self.spares_used = 0  # failed slots replaced by a ready spare
        self.spares_rebuilt = 0  # spares that failed their health check (or were lost with their node)
        self._actors: dict[int, _Actor] = {}
        self._spare_pool: list[_Actor] = []
        self._connected = False

    # -- the backend --------------------------------------------------------------------------------------------

    def _call(
        self, slots: Sequence[int], command: str, payloads: Sequence[Any], allowed: float, count: bool
    ) -> list[Outcome]:
        self._connect()
        outcomes: dict[int, Outcome] = {}
        waiting: dict[Any, tuple[int, float]] = {}  # ObjectRef -> (slot, deadline)
        pairs = list(zip(slots, payloads, strict=True))
        cold = [(slot, payload) for slot, payload in pairs if not self._started(slot)]

        def send(slot: int, payload: Any) -> None:
            actor = self._actors.get(slot) or self._new_actor(slot)
            limit = allowed + RAY_GRACE + (0 if actor.started else START_TIMEOUT + PLACEMENT_TIMEOUT)
            waiting[actor.handle.call.remote(command, payload, allowed)] = (slot, time.monotonic() + limit)

        def start_more() -> None:  # the next cold slots, then missing spares, while fewer than max_starting start
            self._collect_checks()
            while cold and self._starting() < self.max_starting:
                send(*cold.pop(0))
            if not cold:
                self._tend_spares()

        for slot, payload in pairs:
            if self._started(slot):
                send(slot, payload)
        start_more()
        while waiting:
            checks = [spare.check for spare in self._spare_pool if spare.check is not None]
            refs = list(waiting) + checks
            ready, _ = ray.wait(refs, num_returns=1, timeout=self._time_left(waiting))
            if ready:  # whatever else has answered meanwhile
                ready, _ = ray.wait(refs, num_returns=len(refs), timeout=0)
            for ref in ready:
                if ref in waiting:
                    slot, _ = waiting.pop(ref)
                    outcomes[slot] = self._answer(slot, ref, count)
            for slot in self._overdue(waiting):
                never = not self._actors[slot].started
                why = (
                    f"{command} did not answer within {allowed:g} s"
                    if not never
                    else f"no actor was placed and started within {START_TIMEOUT + PLACEMENT_TIMEOUT:g} s: no live "
                    f"node of the Ray cluster had {json.dumps(self.resources)} free (see `ray status`)"
                )
                outcomes[slot] = self._fail(slot, why, count)
            start_more()
        return [outcomes[slot] for slot in slots]

    def close(self) -> None:
        """Close every environment (each gets CLOSE_GRACE seconds), end every actor, and stop the Ray this run
        started (or disconnect from the user's cluster) when no other pool uses it."""
        if self._closed:
            return
        self._closed = True
        actors = list(self._actors.values()) + self._spare_pool
        self._actors, self._spare_pool = {}, []
        if self._connected and ray.is_initialized():
            closing = []
            for actor in actors:
                try:
                    closing.append(actor.handle.close.remote())
                except RayError:
                    pass
            if closing:
                ray.wait(closing, num_returns=len(closing), timeout=CLOSE_GRACE)
            for actor in actors:
                _kill(actor.handle)
        if self.failures or self.spares_used or self.spares_rebuilt:
            logger.info("%s on Ray: %s", self.env_id, self.stats())
        _release(self)

    def stats(self) -> dict:
        """Failures (and per node), spares used and rebuilt, spares ready now."""
        if self._connected and not self._closed:
            self._collect_checks()
        return {
            "failures": self.failures,
            "failures_per_node": dict(self.failures_per_node),
            "spares_used": self.spares_used,
            "spares_rebuilt": self.spares_rebuilt,
            "spares_ready": sum(spare.check is None for spare in self._spare_pool),
        }

    @property
    def actor_nodes(self) -> dict[int, str | None]:
        """The node id each slot's actor runs on (None: not placed yet)."""
        return {slot: actor.node for slot, actor in self._actors.items()}

    @property
    def actor_pids(self) -> dict[int, int | None]:
        """The process id of each slot's actor on its node (None: not placed yet)."""
        return {slot: actor.pid for slot, actor in self._actors.items()}

    # -- the machinery ----------------------------------------------------------------------------------------

    def _connect(self) -> None:
        if self._connected:
            return
        fitting = join_ray(self, self.address, self.resources)
        self._connected = True
        if self.max_starting is None:
            self.max_starting = max(1, int(sum(node["Resources"].get("CPU", 0) for node in fitting)))

    def _new_actor(self, slot: int | None) -> _Actor:
        """A new EnvHost actor (placed by Ray; it builds its environment at its first call) for `slot`, or a spare."""
        handle = _EnvHostActor.options(**actor_options(self.resources)).remote(
            self.env_id, self.env_kwargs, self.step_timeout, list(sys.path)
        )
        actor = _Actor(handle)
        if slot is not None:
            self._actors[slot] = actor
        return actor

    def _started(self, slot: int) -> bool:
        actor = self._actors.get(slot)
        return actor is not None and actor.started

    def _starting(self) -> int:
        return sum(not actor.started for actor in self._actors.values()) + sum(
            spare.check is not None for spare in self._spare_pool
        )

    def _answer(self, slot: int, ref: Any, count: bool) -> Outcome:
        actor = self._actors[slot]
        try:
            (actor.node, actor.pid), outcome = ray.get(ref)
        except RayError as error:
            why = f"its Ray actor on node {_short(actor.node)} is gone: {type(error).__name__}: {_first_line(error)}"
            self._drop_spares_on_lost_nodes()
            return self._fail(slot, why, count)
        actor.started = True
        return outcome if outcome.ok else self._fail(slot, outcome.failure, count)

    def _fail(self, slot: int, why: str, count: bool) -> Outcome:
        actor = self._actors.pop(slot, None)
        self._last_task.pop(slot, None)  # its replacement has played nothing of this episode
        if actor is not None:
            _kill(actor.handle)
        if count:
            node = _short(actor.node if actor is not None else None)
            self.failures += 1
            self.failures_per_node[node] += 1
            self.failure_log.append(f"slot {slot}: {why}")
            logger.warning("%s slot %d failed on node %s and will be replaced: %s", self.env_id, slot, node, why)
        self._replace_from_spare(slot)
        return Outcome(failure=why)

    def _replace_from_spare(self, slot: int) -> None:
        self._collect_checks()
        ready = next((spare for spare in self._spare_pool if spare.check is None), None)
        if ready is None:
            return
        self._spare_pool.remove(ready)
        self._actors[slot] = ready
        self._last_task[slot] = ready.task
        self.spares_used += 1
        logger.warning(
            "%s slot %d: replaced by a ready spare on node %s (%d spares used so far, %d ready left)",
            self.env_id, slot, _short(ready.node), self.spares_used,
            sum(spare.check is None for spare in self._spare_pool),
        )  # fmt: skip

    def _tend_spares(self) -> None:
        """Collect finished health checks (a failed spare is killed and rebuilt) and start missing spares."""
        self._collect_checks()
        while len(self._spare_pool) < self.spares and self._starting() < self.max_starting:
            spare = self._new_actor(None)
            spare.check = spare.handle.call.remote("health", None, self.step_timeout)
            spare.deadline = time.monotonic() + self.step_timeout + RAY_GRACE + START_TIMEOUT + PLACEMENT_TIMEOUT
            self._spare_pool.append(spare)

    def _collect_checks(self) -> None:
        pending = [spare.check for spare in self._spare_pool if spare.check is not None]
        if not pending:
            return
        done, _ = ray.wait(pending, num_returns=len(pending), timeout=0)
        now = time.monotonic()
        for spare in [s for s in self._spare_pool if s.check is not None and (s.check in done or s.deadline < now)]:
            outcome = Outcome(failure="its health check did not answer in time")  # it hangs, or was never placed
            if spare.check in done:
                try:
                    (spare.node, spare.pid), outcome = ray.get(spare.check)
                except RayError as error:
                    outcome = Outcome(failure=f"{type(error).__name__}: {_first_line(error)}")
            spare.check, spare.started = None, True
            if outcome.ok:
                spare.task = outcome.result[1].get("task")
                continue
            self._spare_pool.remove(spare)
            _kill(spare.handle)
            self.spares_rebuilt += 1
            logger.warning(
                "%s: a spare on node %s failed its health check and is rebuilt (%d so far): %s",
                self.env_id, _short(spare.node), self.spares_rebuilt, outcome.failure,
            )  # fmt: skip

    def _drop_spares_on_lost_nodes(self) -> None:
        """An actor died: the ready spares on nodes the cluster lost are gone too; rebuild them elsewhere."""
        alive = {node["NodeID"] for node in ray.nodes() if node["Alive"]}
        for spare in [spare for spare in self._spare_pool if spare.node is not None and spare.node not in alive]:
            self._spare_pool.remove(spare)
            _kill(spare.handle)
            self.spares_rebuilt += 1
            logger.warning("%s: a spare was lost with node %s and is rebuilt", self.env_id, _short(spare.node))


def actor_options(resources: dict) -> dict:
    """Ray's options for an actor that holds environments where `resources` (--env_resources) are: spread over the
    nodes that have them, never restarted by Ray (the caller replaces it), no CPU of its own unless asked for (a
    browser is its own), and its environments' processes ended by themselves when it ends."""
    options = {STANDARD_RESOURCES[name]: amount for name, amount in resources.items() if name in STANDARD_RESOURCES}
    options.setdefault("num_cpus", 0)
    custom = {name: amount for name, amount in resources.items() if name not in STANDARD_RESOURCES}
    # Ray's own cleanup SIGKILLs an exiting worker's children, which leaves what an environment started (a
    # browser, a `sleep` child) behind; without it the environment's worker gets PR_SET_PDEATHSIG and ends its
    # whole process tree itself
    return {
        "resources": custom,
        "scheduling_strategy": "SPREAD",
        "max_restarts": 0,
        "max_task_retries": 0,
        "runtime_env": {"env_vars": {"RAY_kill_child_processes_on_worker_exit": "false"}},
        **options,
    }


def fits(held: dict, asked: dict) -> bool:
    """Whether a node holding `held` resources (ray.nodes()'s "Resources") can place an actor asking `asked`."""
    return all(held.get(name, 0) >= amount for name, amount in asked.items())


def join_ray(user, address: str, resources: dict) -> list[dict]:
    """Connect to Ray (`connect`) for `user` (a pool, or asynchronous rollouts: anything with `close`, closed at
    exit) and return the live nodes that hold `resources`; ValueError naming --env_resources when none does."""
    connect(address, resources)
    if not _session.exit_handler:
        atexit.register(_close_ray_pools)  # registered after Ray's own exit handler: it runs before Ray shuts down
        _session.exit_handler = True
    _session.pools.add(user)
    nodes = [node for node in ray.nodes() if node["Alive"]]
    fitting = [node for node in nodes if fits(node["Resources"], resources)]
    if not fitting:
        held = "; ".join(f"{node['NodeManagerAddress']} {json.dumps(_rounded(node['Resources']))}" for node in nodes)
        raise ValueError(
            f"--env_resources {json.dumps(resources)}: no live node of the Ray cluster holds that ({held}). "
            "Start environment hosts with: ray start --address=HEAD:6379 --resources='{\"browser\": 8}', "
            "or ask for what a node has"
        )
    return fitting


def leave_ray(user) -> None:
    """`user` is done with Ray: Ray is left (a local Ray started for the run stops) when no other user holds it."""
    _session.pools.discard(user)
    if not _session.pools:
        disconnect()  # a local Ray started for the run stops; a user's cluster stays up, this driver leaves it


def _release(pool: RayEnvPool) -> None:
    """`pool` is closed: Ray is left when no other user holds it (`leave_ray`)."""
    pool._forget()
    leave_ray(pool)


def _close_ray_pools() -> None:
    for pool in list(_session.pools):
        pool.close()


def _kill(handle: Any) -> None:
    try:
        ray.kill(handle, no_restart=True)
    except (RayError, ValueError):  # already gone, or Ray is shut down
        pass


def _short(node: str | None) -> str:
    return node[:8] if node else "(not placed)"


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [""])[0][:300]


def _rounded(resources: dict) -> dict:
    return {name: round(amount, 2) for name, amount in resources.items() if not name.startswith("node:")}
