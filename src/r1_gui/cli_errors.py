"""How every r1_gui command line reports a mistake: one `error: ...` line on stderr and exit code 2, no traceback.

    from r1_gui.cli_errors import UserError, cli_main, user_errors

    @cli_main                               # the command's entry point
    def main(argv=None):
        with user_errors():                 # argument and data checks: their ValueError/OSError are the user's
            settings = check(argv)
        if not Path(settings.dataset).exists():
            raise UserError(f"--dataset {settings.dataset} does not exist")
        train(settings)                     # an exception in here is a bug and keeps its traceback

What counts as the user's mistake is decided where the error is raised, never by catching every ValueError at the
top: a `UserError`, or a ValueError/OSError raised inside a `user_errors()` block (the checks that run before any
model loads). Anything else keeps its traceback. `R1_GUI_TRACEBACK=1` shows the traceback of user errors too.

Ctrl-C ends a command with one line and exit code 130 instead of a traceback (SIGTERM, which schedulers send, with
143). A command says what an interruption keeps and how to go on by running its long work inside `on_interrupt`;
both are read when the Ctrl-C comes:

        with on_interrupt(kept=lambda: f"{done()} predictions in {path}", resume=lambda: rerun_command()):
            generate_everything()
    # Ctrl-C -> "interrupted: kept 12 predictions in results/x/predictions.jsonl; continue with: python eval/..."

Nested blocks (a command run inside another, as the demo runs GRPO) leave the outermost one's line: it is the
command the user typed. Without a block the line says that nothing was kept. `R1_GUI_TRACEBACK=1` shows the
traceback instead.

On the way in, `cli_main` also sets how many CPU threads torch uses (`cpu_threads`): half the cores this process
may run on unless OMP_NUM_THREADS says otherwise, because OpenMP threads that wait for a descheduled sibling make a
run several times slower on a machine where any other job runs (8x in bench/cpu_threads.py on 2 cores).
"""

from __future__ import annotations

import functools
import os
import shlex
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

TRACEBACK_VARIABLE = "R1_GUI_TRACEBACK"
THREADS_VARIABLE = "OMP_NUM_THREADS"  # the override users know: torch, OpenMP and MKL all read it
EXIT_CODE = 2  # as argparse exits on a bad flag
INTERRUPTED_EXIT_CODE = 130  # 128 + SIGINT, as shells report a Ctrl-C
TERMINATED_EXIT_CODE = 143  # 128 + SIGTERM
_MARK = "_r1_gui_user_error"
_INTERRUPT = "_r1_gui_interrupt"  # on a KeyboardInterrupt: the (kept, resume) of the blocks it went through


class UserError(ValueError):
    """A mistake the user fixes (a flag, a path, a dataset); its message says what to change."""


class Terminated(KeyboardInterrupt):
    """SIGTERM (what a cluster's scheduler, `kill` and torchrun send), raised where the command is, so that it ends as
    a Ctrl-C does: one line saying what was kept and the command that goes on, then exit code 143."""


def _raise_terminated(signum, frame):
    raise Terminated()


class UserExit(SystemExit):
    """SystemExit with code 2 whose text is the `error: ...` line (what `cli_main` raises after printing it)."""

    def __init__(self, message: str):
        super().__init__(EXIT_CODE)
        self.message = message

    def __str__(self) -> str:
        return f"error: {self.message}"


@contextmanager
def user_errors(*types: type[BaseException]) -> Iterator[None]:
    """Mark the ValueError and OSError (or ``types``) raised inside the block as the user's to fix. The exception
    keeps its type, so callers that catch it (and tests) see no difference; only `cli_main` reads the mark."""
    caught = types or (ValueError, OSError)
    try:
        yield
    except caught as error:
        setattr(error, _MARK, True)
        raise


def is_user_error(error: BaseException) -> bool:
    return isinstance(error, UserError) or getattr(error, _MARK, False)


def one_line(error: BaseException) -> str:
    """The error's message on one line (a multi-line message is joined with "; ")."""
    text = str(error).strip() or type(error).__name__
    if isinstance(error, KeyError) and error.args:
        text = str(error.args[0])
    return "; ".join(line.strip() for line in text.splitlines() if line.strip())


def cpu_threads() -> int:
    """Set torch's intra-op CPU threads for this command and return them: OMP_NUM_THREADS where the user set it, else
    half the cores this process may run on (at least 1; os.sched_getaffinity, so a container's or taskset's share).
    torch's own default, every core, collapses under contention: its OpenMP threads meet at a barrier after each op,
    and a thread another job has descheduled holds all of them (bench/cpu_threads.py, 2 cores: 2 threads beside one
    CPU-bound process ran the tiny model's evaluation 7.8x slower than 1). Set in the environment before torch is
    imported (and passed on to the processes a command starts), or with torch.set_num_threads after. torchrun sets
    OMP_NUM_THREADS=1 for its workers when it starts several per node, which this keeps."""
    given = os.environ.get(THREADS_VARIABLE, "").strip()
    threads = int(given) if given.isdigit() and int(given) > 0 else max(1, len(os.sched_getaffinity(0)) // 2)
    os.environ[THREADS_VARIABLE] = str(threads)
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "set_num_threads") and torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    return threads


@contextmanager
def torch_threads(threads: int) -> Iterator[int]:
    """torch's intra-op threads inside the block: `threads`, at most the cores this process may run on, at least 1;
    the count before is back after. For work that nothing else of the command's runs beside (the web demo's sight
    and SFT loops, no browser open), where every core helps on a quiet machine; `cpu_threads` stays the rule
    elsewhere. Yields the count set."""
    import torch

    before = torch.get_num_threads()
    count = max(1, min(threads, len(os.sched_getaffinity(0))))
    torch.set_num_threads(count)
    try:
        yield count
    finally:
        torch.set_num_threads(before)


def busy_cores_of_others(window: float) -> float | None:
    """How many cores other processes kept busy over the last ``window`` seconds (this process's own CPU time taken
    out), from /proc/stat; None where there is no /proc/stat. Sleeps ``window`` seconds."""
    first = _cpu_times()
    if first is None:
        return None
    mine, began = time.process_time(), time.monotonic()
    time.sleep(window)
    return _others_since(first, mine, began)


def _cpu_times() -> tuple[float, float] | None:
    """(busy, total) jiffies of every core, from /proc/stat's first line."""
    try:
        with open("/proc/stat") as stat:
            values = [int(value) for value in stat.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    user, nice, system, idle, iowait, irq, softirq, steal = values
    busy = user + nice + system + irq + softirq + steal
    return busy, busy + idle + iowait


def _others_since(first: tuple[float, float], mine: float, began: float) -> float | None:
    now = _cpu_times()
    wall = time.monotonic() - began
    if now is None or now[1] <= first[1] or wall <= 0:
        return None
    busy = (now[0] - first[0]) / (now[1] - first[1]) * (os.cpu_count() or 1)  # cores busy, this process's too
    return max(0.0, busy - (time.process_time() - mine) / wall)


class SharedCoreThreads:
    """torch's CPU threads for a loop that may use up to ``most`` of this process's cores: as many as other
    processes leave free, measured at the start and again every ``every`` seconds (`adjust`, called once a step).

    A loop's OpenMP threads meet at a barrier after each op, so one thread more than the free cores makes every op
    wait for a descheduled thread: a busy machine then slows the loop by an order of magnitude instead of in
    proportion (bench/sight_stage_load.py measures both). Use it for work nothing of the command runs beside."""

    def __init__(self, most: int, every: float = 5.0, window: float = 0.25):
        self.cores = len(os.sched_getaffinity(0))
        self.most = max(1, min(most, self.cores))
        self.every = every
        self.threads = self._choose(busy_cores_of_others(window)) if self.most > 1 else 1
        self._mark()

    def _mark(self) -> None:
        self._since = (_cpu_times(), time.process_time(), time.monotonic())

    def _choose(self, others: float | None) -> int:
        if others is None:  # nothing to measure with: the most asked for
            return self.most
        share = others * self.cores / (os.cpu_count() or self.cores)  # of the cores this process may use
        return max(1, min(self.most, int(self.cores - share + 0.3)))

    def adjust(self) -> int:
        """The threads to run the next step with, measured again when ``every`` seconds have passed; sets them."""
        first, mine, began = self._since
        if self.most > 1 and first is not None and time.monotonic() - began >= self.every:
            self.threads = self._choose(_others_since(first, mine, began))
            self._mark()
        import torch

        if torch.get_num_threads() != self.threads:
            torch.set_num_threads(self.threads)
        return self.threads


@contextmanager
def shared_core_threads(most: int) -> Iterator[SharedCoreThreads]:
    """`SharedCoreThreads` for the block (call its `adjust` once a step); torch's thread count before is back after."""
    import torch

    before = torch.get_num_threads()
    threads = SharedCoreThreads(most)
    threads.adjust()
    try:
        yield threads
    finally:
        torch.set_num_threads(before)


@contextmanager
def on_interrupt(kept: Callable[[], str], resume: Callable[[], str | None]) -> Iterator[None]:
    """A Ctrl-C inside the block ends the command (under `cli_main`) with one line: ``kept()`` (what the work so far
    left, e.g. "checkpoint-40 in runs/x") and ``resume()`` (the command that goes on, or None). Both are called only
    when the Ctrl-C comes, so they can count what is there by then."""
    try:
        yield
    except KeyboardInterrupt as interrupt:
        setattr(interrupt, _INTERRUPT, (kept, resume))  # set again by each enclosing block: the outermost stays
        raise


def interrupted_line(interrupt: KeyboardInterrupt) -> str:
    """The line a Ctrl-C (or SIGTERM: `Terminated`) ends a command with (see `on_interrupt`)."""
    kept, resume = getattr(interrupt, _INTERRUPT, (lambda: "", lambda: None))
    try:
        what, command = kept(), resume()
    except Exception as error:  # a line, whatever the state of the files the work was writing
        what, command = f"(what was kept could not be read: {one_line(error)})", None
    ended = "terminated (SIGTERM)" if isinstance(interrupt, Terminated) else "interrupted"
    line = f"{ended}: kept {what}" if what else f"{ended}: nothing was kept"
    return line + (f"; continue with: {command}" if command else "")


def close_progress_bars() -> None:
    """Close every tqdm bar still open (a loop left by a Ctrl-C), so that each ends its line now."""
    tqdm = sys.modules.get("tqdm.std")
    for bar in list(getattr(getattr(tqdm, "tqdm", None), "_instances", ())):
        bar.close()


def invoked_as(argv: list[str] | None = None) -> list[str]:
    """How this process's command was started (or ``argv``'s), up to its flags: an installed command's name
    (pyproject's [project.scripts], e.g. `r1-gui-train`), `python -m MODULE`, or `python SCRIPT`."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None) if argv is None else None
    argv = sys.argv if argv is None else argv
    if os.path.basename(argv[0]).startswith("r1-gui-"):
        return [os.path.basename(argv[0])]
    if spec is not None and spec.name != "__main__":
        return ["python", "-m", spec.name.removesuffix(".__main__")]
    return ["python", argv[0]]


def rerun_command(
    drop: Sequence[str] = (), drop_switches: Sequence[str] = (), add: Sequence[str] = (), argv: list[str] | None = None
) -> str:
    """The command line this process was started with (or ``argv``), as a shell line: `python SCRIPT ...` (or
    `python -m MODULE ...`, or `torchrun ...`), without the flags in ``drop`` and their values (``--flag value`` or
    ``--flag=value``), without the value-less switches in ``drop_switches``, and with ``add`` appended."""
    program = invoked_as(argv)
    argv = sys.argv if argv is None else argv
    if "TORCHELASTIC_RUN_ID" in os.environ:  # a torchrun worker: the user typed torchrun
        program = ["torchrun", "--nproc_per_node", os.environ.get("LOCAL_WORLD_SIZE", "1"), *program[1:]]
    kept, skip = [], False
    for arg in argv[1:]:
        name = arg.split("=", 1)[0]
        if skip:
            skip = False
        elif name in drop:
            skip = "=" not in arg
        elif arg not in drop_switches:
            kept.append(arg)
    return shlex.join([*program, *kept, *add])


def cli_main(function: Callable) -> Callable:
    """Decorate a command's entry point: a user error prints `error: <message>` on stderr and raises `UserExit`
    (exit code 2), as argparse does for a bad flag; any other exception propagates with its traceback. With
    R1_GUI_TRACEBACK=1 user errors propagate too. A Ctrl-C prints one line (`interrupted_line`: what was kept and
    the command that continues) and exits with code 130. Before the command runs, `cpu_threads` sets torch's
    CPU threads."""

    @functools.wraps(function)
    def entry(*args, **kwargs):
        traceback = os.environ.get(TRACEBACK_VARIABLE, "") not in ("", "0")
        cpu_threads()
        main_thread = threading.current_thread() is threading.main_thread()  # where Python runs signal handlers
        before = signal.signal(signal.SIGTERM, _raise_terminated) if main_thread else None
        try:
            return function(*args, **kwargs)
        except KeyboardInterrupt as interrupt:
            if traceback:
                raise
            close_progress_bars()  # else they print their last state after the line, at exit
            if os.environ.get("RANK", "0") == "0":  # under torchrun every process gets the Ctrl-C: one line
                print(f"\n{interrupted_line(interrupt)}", file=sys.stderr, flush=True)
            terminated = isinstance(interrupt, Terminated)
            raise SystemExit(TERMINATED_EXIT_CODE if terminated else INTERRUPTED_EXIT_CODE) from None
        except Exception as error:
            if not is_user_error(error) or traceback:
                raise
            message = one_line(error)
            close_progress_bars()  # a mistake found in training (a user's reward): its line starts a line of its own
            print(f"error: {message}", file=sys.stderr)
            raise UserExit(message) from None
        finally:
            if main_thread:
                signal.signal(signal.SIGTERM, signal.SIG_DFL if before is None else before)

    return entry


def installed(main: Callable) -> Callable[[], None]:
    """The function pyproject.toml's [project.scripts] names for a command (``cli = installed(main)`` beside its
    `main`): `main` on the command line, returning nothing. The script pip installs ends with ``sys.exit(cli())``,
    and `sys.exit` of anything but None or a number prints it to stderr and exits 1, so a `main` that returns its
    metrics, report or folder to Python callers would fail every `&&` chain after it succeeded."""

    @functools.wraps(main)
    def cli() -> None:
        main()

    return cli


def command_parser(description: str, prog: str | None = None):
    """The argument parser of an r1_gui command line: its docstring as the help text (kept as written), no
    abbreviated flags (a mistyped `--num_gen` fails instead of silently matching a longer flag), and a mistake is a
    `UserError`, so that under `cli_main` it is one `error:` line with exit code 2 like every other mistake (argparse's
    own way prints its usage line above it)."""
    import argparse

    class Parser(argparse.ArgumentParser):
        def error(self, message: str):
            raise UserError(f"{message}; run with --help")

    installed = invoked_as()[0]  # an installed command's usage line names it (r1-gui-eval), not the script
    return Parser(
        prog=installed if installed.startswith("r1-gui-") else prog,
        description=description,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
