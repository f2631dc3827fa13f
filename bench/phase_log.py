"""What a benchmark's child process is doing, printed as it happens: one line when each phase begins, and while a
phase runs long, a line every `heartbeat` seconds with the innermost frames of the main thread once.

A run cut by a time limit then leaves in its log where its time went (the 2026-11-26 lease's 8 x 8 profile was
stopped with nothing in its log but the data set's progress bars: the trainers' own output is switched off, so
nothing said whether it was building the model, generating or in the loss pass).

    log = PhaseLog("ours")                  # t = 0 now
    log.begin("model built")                # [ours +12.3 s] model built
    with log.heartbeats(30, stack_after=60):
        train()                             # [ours +95.0 s] still in step 1 generation (34.9 s) ...
    log.marks                               # {"model built": 12.3, ...}: seconds since t = 0 of every phase
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator


class PhaseLog:
    """Phases of one process, each printed with the seconds since the log was made."""

    def __init__(self, who: str, memory: Callable[[], str] | None = None, out=None):
        self.who = who
        self.start = time.perf_counter()
        self.current = "start"
        self.since = self.start
        self.marks: dict[str, float] = {}
        self.memory = memory  # e.g. the GPU memory held now, added to the heartbeat lines
        self.out = out or sys.stdout
        self._stack_shown = False
        self._main = threading.main_thread().ident

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def say(self, text: str) -> None:
        print(f"[{self.who} +{self.elapsed():.1f} s] {text}", file=self.out, flush=True)

    def begin(self, phase: str) -> None:
        """Phase `phase` begins now: print it and keep its first start in `marks`."""
        now = time.perf_counter()
        self.current, self.since, self._stack_shown = phase, now, False
        self.marks.setdefault(phase, round(now - self.start, 3))
        self.say(phase)

    def beat(self, every: float, stack_after: float) -> None:
        """A heartbeat: a line if the current phase has run `every` seconds, with the main thread's innermost frames
        once it has run `stack_after` seconds."""
        running = time.perf_counter() - self.since
        if running < every:
            return
        memory = f"; {self.memory()}" if self.memory else ""
        self.say(f"still in {self.current} ({running:.1f} s){memory}")
        if running >= stack_after and not self._stack_shown:
            self._stack_shown = True
            frame = sys._current_frames().get(self._main)
            if frame is not None:
                for line in traceback.format_stack(frame)[-6:]:
                    self.say("  " + line.strip().replace("\n", " | "))

    @contextlib.contextmanager
    def heartbeats(self, every: float, stack_after: float) -> Iterator[None]:
        """Within the block, a heartbeat every `every` seconds while a phase runs longer (none when `every` <= 0)."""
        if every <= 0:
            yield
            return
        stop = threading.Event()

        def loop():
            while not stop.wait(every):
                self.beat(every, stack_after)

        thread = threading.Thread(target=loop, name="phase-heartbeat", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()
