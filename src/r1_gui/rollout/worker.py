"""A rollout worker: a copy of the policy, its environments, and groups played with the one agent loop.

`RolloutWorker(spec, weights)` builds the model from the same files as the trainer (the LoRA wrapping too), loads
the trainable parameters the trainer published, and plays groups: `play(started, task, seed)` runs
`r1_gui.agent.loop.play_episodes` on `spec.num_generations` episodes of one reset in an `EnvPool` of its own and
returns a `r1_gui.rollout.buffer.Group` whose turns carry the weights version they were generated with and the
behaviour log-probabilities of their tokens. Between two turns the policy loads the newest weights, so an episode
in progress is never abandoned when the trainer moves on. Several groups play at once in threads (`concurrency`),
each with its own pool; generation and weight loading take turns on the one model.

Generation is trl's HF path as `MultiTurnGRPOTrainer._policy` runs it (left padding, the trainer's
`GenerationConfig`, the completion cut after the first stop token), with the sampled tokens' log-probabilities
under the sampling temperature (the logits / temperature, as trl scores them).

`serve(fd, parent_pid)` is the worker process of `r1_gui.rollout.engine` on this machine (`python -c ...`, as the
environment workers are started): it dies with the trainer (PR_SET_PDEATHSIG, then its whole process tree: its
environment workers and their browsers), takes ("play", (started, task, seed)) and ("close", None), and answers
("ready", pid), ("group", Group) or ("failed", (started, why)).
"""

from __future__ import annotations

import copy
import logging
import os
import pickle
import queue
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from r1_gui.agent.loop import TurnInput, play_episodes
from r1_gui.envs.runtime.backend import make_pool
from r1_gui.rollout.buffer import Group
from r1_gui.rollout.weights import Layout, SharedWeights, trainable_parameters

logger = logging.getLogger(__name__)

WEIGHTS_WAIT = 600.0  # seconds a Ray actor asked to play waits for its first weights before it fails


@dataclass
class WorkerSpec:
    """Everything a worker needs to build its policy copy and play as the trainer would (picklable)."""

    model_name_or_path: str
    dtype: Any  # torch dtype or "auto"
    attn_implementation: str | None
    vision_attention: str
    peft_config: Any  # a peft config when the trainer wraps its model with one
    processor: Any  # the trainer's processor
    generation_config: Any  # the trainer's transformers GenerationConfig, max_new_tokens the per-turn limit
    eos_token_ids: list[int]
    pad_token_id: int
    env_id: str
    env_kwargs: dict
    step_timeout: float
    play: dict  # play_episodes' keywords of the run (max_turns, history_images, system, chat_template_kwargs)
    num_generations: int
    concurrency: int = 1  # groups played at once, each in a thread with its own pool
    torch_threads: int = 1
    weights: Layout | None = None  # the shared block (on this machine); None: weights come by `set_weights`
    device: str = "auto"  # where the policy copy runs: the trainer's device for local workers; auto: cuda if any
    pool: Any = None  # where its environments run (`r1_gui.envs.runtime.backend.PoolSettings`; None: this machine)


def build_policy_model(spec: WorkerSpec):
    """The model as the trainer built it: the same files, dtype, attention and vision attention, the LoRA wrapping
    (its adapter is then overwritten by the published weights), on `spec.device`, in eval mode."""
    import torch
    from transformers import AutoModelForImageTextToText

    from r1_gui.vision_attention import apply_vision_attention

    model = AutoModelForImageTextToText.from_pretrained(
        spec.model_name_or_path, dtype=spec.dtype or "auto", attn_implementation=spec.attn_implementation
    )
    apply_vision_attention(model, spec.vision_attention, "cuda" if torch.cuda.is_available() else "cpu")
    if spec.peft_config is not None:
        from peft import get_peft_model

        model = get_peft_model(model, spec.peft_config)
    device = spec.device if spec.device != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")
    return model.to(device).eval()


class SamplingPolicy:
    """A policy of the agent loop (`r1_gui.agent.loop.Policy`) sampling from the worker's model; it records the
    weights version each call (each turn) used, loading the newest first (`refresh`)."""

    def __init__(self, worker: RolloutWorker):
        self.worker = worker
        self.versions: list[int] = []
        self.generation_s = 0.0

    def __call__(self, inputs: list[TurnInput], infos: list[dict]):
        start = time.perf_counter()
        with self.worker.lock:
            version = self.worker.refresh()
            answers, logprobs = self.worker.generate(inputs)
        self.versions.append(version)
        self.generation_s += time.perf_counter() - start
        return answers, logprobs


class TimedPool:
    """A pool whose reset and step are timed (the environment's share of a group's time)."""

    def __init__(self, pool):
        self.pool, self.busy_s = pool, 0.0

    def __getattr__(self, name):
        return getattr(self.pool, name)

    def reset(self, *args, **kwargs):
        return self._timed(self.pool.reset, *args, **kwargs)

    def step(self, *args, **kwargs):
        return self._timed(self.pool.step, *args, **kwargs)

    def _timed(self, call, *args, **kwargs):
        start = time.perf_counter()
        try:
            return call(*args, **kwargs)
        finally:
            self.busy_s += time.perf_counter() - start


class RolloutWorker:
    """One worker's policy copy and environments; see the module docstring. `weights`: a `SharedWeights` reader, or
    None when the weights arrive through `set_weights` (a Ray actor)."""

    def __init__(self, spec: WorkerSpec, weights: SharedWeights | None = None):
        import torch

        torch.set_num_threads(spec.torch_threads)
        self.spec, self.weights = spec, weights
        self.model = build_policy_model(spec)
        self.parameters = trainable_parameters(self.model)
        self.lock = threading.Lock()
        self.version: int | None = None
        self._pending: tuple[int, dict] | None = None  # weights handed over by set_weights, loaded between turns
        self._published = threading.Event()  # set_weights was called once (a Ray actor may be asked to play first)
        self._pending_lock = threading.Lock()
        self._pools = threading.local()
        self._all_pools: list[TimedPool] = []  # every thread's, to close
        self.generation_config = copy.deepcopy(spec.generation_config)
        self.generation_config.output_logits = self.generation_config.return_dict_in_generate = True

    # -- weights ----------------------------------------------------------------------------------------------
    def set_weights(self, version: int, parameters: dict) -> None:
        """Weights that arrived by message (Ray's object store): loaded before the next turn."""
        with self._pending_lock:
            self._pending = (int(version), parameters)
        self._published.set()

    def refresh(self) -> int:
        """Load the newest published weights (call with `lock` held); the version now in use."""
        if self.weights is not None:
            loaded = self.weights.read_into(self.parameters, self.version)
            if loaded is not None:
                self.version = loaded
        elif self._pending is not None or (self.version is None and self._published.wait(WEIGHTS_WAIT)):
            with self._pending_lock:  # a newer set_weights may arrive meanwhile: take the newest, once
                (version, parameters), self._pending = self._pending, None
            if version != self.version:
                import torch

                with torch.no_grad():
                    for name, tensor in parameters.items():
                        self.parameters[name].copy_(tensor)
                self.version = version
        if self.version is None:
            raise RuntimeError("a rollout worker was asked to play before any weights were published")
        return self.version

    # -- generation -------------------------------------------------------------------------------------------
    def generate(self, inputs: Sequence[TurnInput]) -> tuple[list[list[int]], list[list[float]]]:
        """(answer ids, their log-probabilities) per input: trl's HF generation path (see the module docstring)."""
        import torch

        from r1_gui.generation.generators import sampled_logprobs, turn_batch

        spec = self.spec
        batch = turn_batch(self.model, inputs, spec.pad_token_id, spec.processor.tokenizer)
        with torch.no_grad():
            output = self.model.generate(**batch, generation_config=self.generation_config)
        width = batch["input_ids"].size(1)
        config = self.generation_config
        logprobs = sampled_logprobs(output, width, config.temperature if config.do_sample else 1.0)
        stops = set(spec.eos_token_ids)
        answers, kept = [], []
        for row, row_logps in zip(output.sequences[:, width:].tolist(), logprobs, strict=True):
            end = next((i for i, token in enumerate(row) if token in stops), len(row) - 1)
            answers.append(row[: end + 1])
            kept.append(row_logps[: end + 1])
        return answers, kept

    # -- playing ----------------------------------------------------------------------------------------------
    def _pool(self) -> TimedPool:
        """This thread's pool (environment workers die with the thread that started them: keep one per thread)."""
        pool = getattr(self._pools, "pool", None)
        if pool is None:
            spec = self.spec
            pool = make_pool(spec.env_id, spec.env_kwargs, step_timeout=spec.step_timeout, settings=spec.pool)
            self._pools.pool = pool = TimedPool(pool)
            self._all_pools.append(pool)
        return pool

    def play(self, started: int, task: str | None, seed: int) -> Group:
        """One group: `num_generations` episodes of the reset (task, seed), side by side."""
        spec = self.spec
        pool, policy = self._pool(), SamplingPolicy(self)
        busy, start = pool.busy_s, time.perf_counter()
        tokenizer = spec.processor.tokenizer
        episodes = play_episodes(
            pool,
            [(task, seed)] * spec.num_generations,
            policy,
            spec.processor,
            decode=lambda ids: tokenizer.decode(ids, skip_special_tokens=True),
            **spec.play,
        )
        # call t of the lock-step loop played turn t of every episode still live
        versions = [policy.versions[: len(episode.turns)] for episode in episodes]
        stats = {
            "env_s": pool.busy_s - busy,
            "generation_s": policy.generation_s,
            "wall_s": time.perf_counter() - start,
        }
        return Group(task, int(seed), episodes, versions, started, stats=stats)

    def close(self) -> None:
        for pool in self._all_pools:
            pool.pool.close()


# ---------------------------------------------------------------------------------------- the local process


def serve(fd: int, parent_pid: int) -> None:
    """The worker process on this machine (see the module docstring)."""
    from multiprocessing.connection import Connection

    from r1_gui.envs.runtime.worker import _die_with

    _die_with(parent_pid)
    connection = Connection(fd)
    send_lock = threading.Lock()

    def send(message) -> None:
        with send_lock:
            send_message(connection, message)

    spec: WorkerSpec = receive_message(connection)
    worker = RolloutWorker(spec, SharedWeights.attach(spec.weights))
    send(("ready", os.getpid()))
    work: queue.Queue = queue.Queue()

    def player() -> None:
        while True:
            item = work.get()
            if item is None:
                return
            started, task, seed = item
            try:
                group = worker.play(started, task, seed)
            except Exception as error:  # the group is lost, the worker goes on (its pool rebuilt what failed)
                logger.warning("rollout group %d (%s, seed %d) failed: %s", started, task, seed, error)
                send(("failed", (started, f"{type(error).__name__}: {error}")))
                continue
            send(("group", group))

    players = [threading.Thread(target=player, daemon=True) for _ in range(spec.concurrency)]
    for thread in players:
        thread.start()
    _receive(connection, work, len(players))
    for thread in players:
        thread.join(timeout=30)
    worker.close()


def send_message(connection, message) -> None:
    """Plain pickle over the connection: `Connection.send` pickles tensors by sharing their memory through
    torch's file-descriptor handover, which needs both processes to share an authentication key (only processes
    of `multiprocessing` do), so a tensor in a group is copied instead."""
    connection.send_bytes(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))


def receive_message(connection):
    return pickle.loads(connection.recv_bytes())


def _receive(connection, work: queue.Queue, players: int) -> None:
    while True:
        try:
            command, payload = receive_message(connection)
        except (EOFError, OSError):  # the trainer is gone
            command = "close"
        if command == "play":
            work.put(payload)
            continue
        for _ in range(players):
            work.put(None)
        return


class RolloutHost:
    """A rollout worker as a Ray actor (`r1_gui.rollout.engine` makes it remote, placed where the environments' Ray
    resources are): the same `RolloutWorker`, its weights through `set_weights` (Ray's object store), its groups as
    the return values of `play`. `driver_path`: the driver's sys.path, appended (a user's environment imports)."""

    def __init__(self, spec: WorkerSpec, driver_path: list[str]):
        import sys

        sys.path.extend(path for path in driver_path if path not in sys.path)
        self.worker = RolloutWorker(spec)

    def ready(self) -> tuple[int, str]:
        """(this process's id, its Ray node's id), once the model is built."""
        import ray

        return os.getpid(), ray.get_runtime_context().get_node_id()

    def set_weights(self, version: int, parameters: dict) -> None:
        self.worker.set_weights(version, parameters)

    def play(self, started: int, task: str | None, seed: int) -> Group:
        return self.worker.play(started, task, seed)

    def close(self) -> None:
        self.worker.close()
