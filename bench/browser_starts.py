"""Many Chromiums started at once, as the asynchronous web demo's rollout workers start theirs: with the launch slots
(`r1_gui.envs.web.browser.launch_slot`, one start at a time per core) and without them.

    python bench/browser_starts.py [--processes 2] [--browsers 20] [--rounds 1]

Each side starts --processes processes, each with --browsers threads, each thread one r1_gui/Web-v0 environment that
resets once (Chromium and chromedriver started, a MiniWoB++ page loaded and captured), all at once; a reset that
fails (`BrowserError`: "Chromium did not start", after the environment's own one retry) is tried again, up to 5
times, as the pools rebuild a slot. The defaults are the multi-step web demo's async stage: 2 workers x 5 groups x 4
episodes = 40 browsers. Per side: seconds until every environment has its page, and the starts that failed. The
sides alternate (without, with, ...) for --rounds rounds. Ends with one JSON line ("with_over_without": the seconds
with the slots over those without; below 1: faster). Run it on an otherwise idle machine: the 1-minute load average
is printed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import os
import queue
import threading
import time

TRIES = 5


def start_all(browsers: int, slots: bool, ready, go, results) -> None:
    """One process: ``browsers`` environments reset at once (after ``go``), each tried up to TRIES times."""
    from r1_gui.envs.contract import make_env
    from r1_gui.envs.web import browser
    from r1_gui.envs.web.browser import BrowserError

    if not slots:
        browser.launch_slot = lambda *args, **kwargs: contextlib.nullcontext(False)
    envs = [make_env("r1_gui/Web-v0", {}) for _ in range(browsers)]
    failed, never, lock = [0], [0], threading.Lock()

    def reset(index: int, env) -> None:
        for _ in range(TRIES):
            try:
                env.reset(seed=index)
                return
            except BrowserError:
                with lock:
                    failed[0] += 1
        with lock:
            never[0] += 1

    threads = [threading.Thread(target=reset, args=(index, env)) for index, env in enumerate(envs)]
    ready.set()
    go.wait()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    results.put((time.perf_counter(), failed[0], never[0]))
    for env in envs:
        env.close()


def side(processes: int, browsers: int, slots: bool) -> dict:
    context = multiprocessing.get_context("spawn")
    go, results = context.Event(), context.Queue()
    readies = [context.Event() for _ in range(processes)]
    workers = [context.Process(target=start_all, args=(browsers, slots, ready, go, results)) for ready in readies]
    for worker in workers:
        worker.start()
    for ready in readies:
        ready.wait()
    start = time.perf_counter()
    go.set()
    ends = []
    while len(ends) < len(workers):
        try:
            ends.append(results.get(timeout=1.0))
        except queue.Empty:
            if any(worker.exitcode not in (None, 0) for worker in workers):  # a process died: its error is above
                raise SystemExit("a process of the bench failed (its traceback is above)") from None
    for worker in workers:
        worker.join()
    return {
        "seconds": round(max(end for end, _, _ in ends) - start, 1),
        "failed_starts": sum(failed for _, failed, _ in ends),
        "never_started": sum(never for _, _, never in ends),  # after TRIES: the side's seconds leave them out
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--browsers", type=int, default=20, help="per process")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    print(f"load average (1 min) at start: {os.getloadavg()[0]:.2f}; cores: {len(os.sched_getaffinity(0))}")
    runs: dict[str, list[dict]] = {"without": [], "with": []}
    for round_ in range(args.rounds):
        for name in ("without", "with"):
            run = side(args.processes, args.browsers, slots=name == "with")
            runs[name].append(run)
            print(f"round {round_ + 1}, {name} launch slots: {args.processes} x {args.browsers} browsers started "
                  f"and a page loaded in {run['seconds']} s, {run['failed_starts']} failed start(s), "
                  f"{run['never_started']} never started", flush=True)  # fmt: skip
    mean = {name: sum(run["seconds"] for run in kept) / len(kept) for name, kept in runs.items()}
    print(json.dumps({"processes": args.processes, "browsers": args.browsers, **runs,
                      "with_over_without": round(mean["with"] / mean["without"], 3)}))  # fmt: skip


if __name__ == "__main__":
    main()
