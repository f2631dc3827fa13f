"""The trainer's weights, published to the rollout workers.

Only the trainable parameters travel (a LoRA run's adapter; a frozen vision tower never): every worker builds its
copy of the model from the same files as the trainer and then loads what the trainer published, so the frozen
parameters are the files' and the trainable ones the trainer's.

- One machine (`SharedWeights`): the trainable parameters live in one block of shared memory that the trainer
  writes after an optimizer step and each worker reads between two turns of its episodes. A sequence number around
  each write (odd while writing) lets a reader see a torn copy and read again; the header holds the weights version
  (the trainer's step count). Nothing is pickled or sent: a worker copies from the block into its parameters.
- A Ray cluster (`r1_gui.rollout.engine`): the same parameters as one object in Ray's object store, whose reference
  each worker actor receives.

    shared = SharedWeights.create(trainable_parameters(model))   # the trainer
    seconds, megabytes = shared.write(trainable_parameters(model), version=12)
    reader = SharedWeights.attach(shared.layout)                 # a worker
    version = reader.read_into(trainable_parameters(worker_model), known=11)   # 12 (None: nothing newer)
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from multiprocessing import resource_tracker, shared_memory

import torch

HEADER = 16  # bytes: the version and the write sequence, two int64s
ALIGN = 64


def trainable_parameters(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """{name: parameter} of the parameters that train (requires_grad): what the workers receive."""
    return {name: parameter for name, parameter in model.named_parameters() if parameter.requires_grad}


@dataclass(frozen=True)
class Layout:
    """Where each parameter lies in the block: (name, byte offset, shape, dtype name), and the block's name."""

    name: str
    size: int
    tensors: tuple[tuple[str, int, tuple[int, ...], str], ...]

    @property
    def megabytes(self) -> float:
        return (self.size - HEADER) / 1e6


class SharedWeights:
    """The trainable parameters in one block of shared memory; see the module docstring."""

    def __init__(self, block: shared_memory.SharedMemory, layout: Layout, owner: bool):
        self.block, self.layout, self.owner = block, layout, owner
        self._header = torch.frombuffer(block.buf, dtype=torch.int64, count=2)
        self._views = {
            name: torch.frombuffer(block.buf, dtype=getattr(torch, dtype), count=_count(shape), offset=offset).view(
                shape
            )
            for name, offset, shape, dtype in layout.tensors
        }

    @classmethod
    def create(cls, parameters: Mapping[str, torch.Tensor]) -> SharedWeights:
        """A block sized for `parameters` (the trainer's side; it unlinks the block at `close`)."""
        tensors, offset = [], HEADER
        for name, tensor in parameters.items():
            offset = -(-offset // ALIGN) * ALIGN
            tensors.append((name, offset, tuple(tensor.shape), str(tensor.dtype).removeprefix("torch.")))
            offset += tensor.numel() * tensor.element_size()
        block = shared_memory.SharedMemory(create=True, size=max(offset, HEADER))
        layout = Layout(block.name, offset, tuple(tensors))
        shared = cls(block, layout, owner=True)
        shared._header.zero_()
        return shared

    @classmethod
    def attach(cls, layout: Layout) -> SharedWeights:
        """The block the trainer created (a worker's side; never unlinked from here)."""
        block = shared_memory.SharedMemory(name=layout.name)
        # Python < 3.13 registers an attached block with this process's resource tracker, which would unlink it when
        # this worker exits, under the trainer and the other workers: the block is the trainer's to unlink
        resource_tracker.unregister(block._name, "shared_memory")  # noqa: SLF001 (the documented workaround)
        return cls(block, layout, owner=False)

    @property
    def version(self) -> int:
        return int(self._header[0])

    def write(self, parameters: Mapping[str, torch.Tensor], version: int) -> tuple[float, float]:
        """Copy `parameters` (the layout's names) into the block as weights `version`: (seconds, megabytes)."""
        start = time.perf_counter()
        self._header[1] += 1  # odd: a write is under way
        with torch.no_grad():
            for name, view in self._views.items():
                view.copy_(parameters[name].detach().to("cpu", view.dtype))
        self._header[0] = int(version)
        self._header[1] += 1
        return time.perf_counter() - start, self.layout.megabytes

    def read_into(self, parameters: Mapping[str, torch.Tensor], known: int | None) -> int | None:
        """Copy the block into `parameters` when it holds a version other than `known`: that version, or None when
        there is nothing new. A read that overlapped a write is read again."""
        while True:
            sequence = int(self._header[1])
            version = int(self._header[0])
            if sequence % 2:
                time.sleep(0.001)
                continue
            if version == known:
                return None
            with torch.no_grad():
                for name, view in self._views.items():
                    parameters[name].copy_(view.to(parameters[name].device, parameters[name].dtype))
            if int(self._header[1]) == sequence:
                return version

    def close(self) -> None:
        self._views.clear()
        self._header = None
        try:
            self.block.close()
        except BufferError:  # a view still exported (a tensor of it alive): the block goes at unlink or exit
            pass
        if self.owner:
            try:
                self.block.unlink()
            except FileNotFoundError:
                pass


def _count(shape: tuple[int, ...]) -> int:
    count = 1
    for size in shape:
        count *= size
    return count
