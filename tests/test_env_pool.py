"""EnvPool: environments step side by side in worker processes; one that raises, hangs or dies is rebuilt and its
episode reported as failed; nothing a worker started outlives the pool, Ctrl-C or a SIGKILL of its parent."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from r1_gui.envs.runtime.pool import EnvPool, EnvStartError
from r1_gui.envs.runtime.processes import descendants

BUTTON = "helpers.button_env:Button-v0"
HELPERS = str(Path(__file__).parent)


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_gone(pids, seconds=15.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(alive(pid) for pid in pids):
        time.sleep(0.1)
    return [pid for pid in pids if alive(pid)]


def test_describe_reports_the_declared_capabilities():
    with EnvPool(BUTTON) as pool:
        described = pool.describe()
    assert described.tasks == ("left", "right") and described.has_expert and described.screen_size == (64, 96)
    assert described.episode_count is None


def test_steps_of_slow_environments_run_side_by_side():
    with EnvPool(BUTTON, {"sleep": 1.0}, step_timeout=30) as pool:
        pool.reset(range(4), [0] * 4, ["left"] * 4)
        pool.step(range(4), ["mobile.wait(seconds=1)"] * 4)  # warm: every worker has answered once
        start = time.monotonic()
        outcomes = pool.step(range(4), ["pyautogui.click(x=0.28, y=0.5)"] * 4)
        elapsed = time.monotonic() - start
    assert all(outcome.ok for outcome in outcomes)
    assert elapsed < 3.0, f"4 environments sleeping 1 s each took {elapsed:.1f} s (one after another: 4 s)"


def test_at_most_max_starting_environments_start_at_once(tmp_path, monkeypatch):
    """Building an environment (a browser's start) is what overloads a small machine; the rest wait their turn.
    The pool's own count of workers starting when it starts another reaches the limit and never passes it; the
    builds' logged spans never overlap more than that (whether two actually overlap depends on how fast each worker
    process imports, so that is not asked of them)."""
    log = tmp_path / "starts"
    starting_at_each_start = []
    worker = EnvPool._worker

    def counted(pool, slot):
        new = slot not in pool._workers
        built = worker(pool, slot)
        if new:  # this slot's worker starts now: how many are starting, it included
            starting_at_each_start.append(sum(not w.started for w in pool._workers.values()))
        return built

    monkeypatch.setattr(EnvPool, "_worker", counted)
    with EnvPool(BUTTON, {"start_sleep": 0.4, "start_log": str(log)}, max_starting=2) as pool:
        first = pool.reset(range(5), [0] * 5, ["left"] * 5)
        again = pool.reset(range(5), [1] * 5, ["right"] * 5)  # started environments are reused, all at once
    assert all(outcome.ok for outcome in first + again)
    assert len(starting_at_each_start) == 5 and max(starting_at_each_start) == 2, starting_at_each_start
    spans = [tuple(map(float, line.split())) for line in log.read_text().splitlines()]
    assert len(spans) == 5, "each slot's environment is built once"
    most = max(sum(begin <= moment < end for begin, end in spans) for moment, _ in spans)
    assert most <= 2, f"{most} environments were being built at once; max_starting is 2"
    with pytest.raises(ValueError, match="max_starting must be at least 1"):
        EnvPool(BUTTON, max_starting=0)


@pytest.mark.parametrize(
    "last, tasks, expected",
    [
        ({}, ["a", "b", "a"], [0, 1, 2]),  # nothing played yet: slots in order
        ({0: "b", 1: "a"}, ["a", "b"], [1, 0]),  # each to the slot that last played its task
        ({0: "a", 1: "a", 2: "b"}, ["b", "a", "c"], [2, 0, 1]),  # no slot played c: the free one
        ({0: "a", 1: "a"}, ["a", "a", "a"], [0, 1, 2]),  # more episodes of a task than slots that played it
        ({0: None, 1: "a"}, [None, "a"], [0, 1]),  # the environment's own choice matches nothing
        ({3: "a", 0: "b"}, ["a", "a"], [0, 1]),  # slots beyond the batch are never picked
    ],
)
def test_episodes_go_to_slots_that_last_played_their_task(last, tasks, expected):
    pool = EnvPool(BUTTON)  # no worker starts until a call
    pool._last_task.update(last)
    assert pool.slots_for(tasks) == expected
    pool.close()


def test_resets_record_each_slots_task_and_a_failed_slot_forgets_it():
    with EnvPool(BUTTON, {"raise_on_step": 1}) as pool:
        pool.reset([0, 1], [3, 4], ["left", "right"])
        assert pool.slots_for(["right", "left"]) == [1, 0]
        pool.step([0], ["mobile.back()"])  # slot 0 raises and is rebuilt: it has played nothing
        assert pool.slots_for(["right", "left"]) == [1, 0] and pool.slots_for(["left", "left"]) == [0, 1]
        assert pool._last_task == {1: "right"}


def test_a_raising_environment_is_rebuilt_and_its_failure_counted():
    with EnvPool(BUTTON, {"raise_on_step": 2}) as pool:
        pool.reset([0, 1], [3, 3], ["left", "left"])
        first = pool.step([0, 1], ["mobile.back()", "mobile.back()"])
        second = pool.step([0, 1], ["mobile.back()", "mobile.back()"])
        assert all(outcome.ok for outcome in first)
        assert [outcome.ok for outcome in second] == [False, False]
        assert "the backend broke on step 2" in second[0].failure and pool.failures == 2
        again = pool.reset([0, 1], [3, 3], ["left", "left"])  # fresh workers
        assert all(outcome.ok for outcome in again) and again[0].result[1]["step"] == 0


def test_a_hanging_environment_is_killed_with_what_it_started():
    with EnvPool(BUTTON, {"hang_on_step": 1, "child": True}, step_timeout=2) as pool:
        pool.reset([0, 1], [0, 1], ["left", "right"])
        workers = pool.pids
        started = [pid for worker in workers for pid in descendants(worker)]
        assert len(started) == 2  # each environment's `sleep` child
        start = time.monotonic()
        outcomes = pool.step([0, 1], ["mobile.back()"] * 2)
        elapsed = time.monotonic() - start
        assert [outcome.ok for outcome in outcomes] == [False, False] and "within 2 s" in outcomes[0].failure
        assert elapsed < 8, f"the step waited {elapsed:.1f} s for environments that hang"
        assert not wait_gone(workers + started), "a hung worker or its child outlived the kill"
        assert pool.failures == 2


def test_close_ends_every_worker_and_child():
    pool = EnvPool(BUTTON, {"child": True})
    pool.reset([0, 1, 2], [0, 1, 2], [None] * 3)
    pids = pool.pids + [pid for worker in pool.pids for pid in descendants(worker)]
    assert len(pids) == 6
    pool.close()
    assert not wait_gone(pids)


def test_an_environment_that_cannot_start_is_one_clear_error():
    with EnvPool(BUTTON, {"no_such_keyword": 1}) as pool, pytest.raises(ValueError, match="does not fit"):
        pool.describe()
    with EnvPool(BUTTON, {"raise_on_step": 1}, reset_retries=1) as pool:
        pool.reset([0], [0], ["left"])  # resets work; steps raise
    with EnvPool("r1_gui/Replay-v0", {"data_dir": "/nonexistent"}, reset_retries=1) as pool:
        with pytest.raises(EnvStartError, match="could not be reset after 2 tries.*does not exist"):
            pool.reset([0], [0], [None])


@pytest.mark.parametrize("how", ["sigkill", "sigint"])
def test_workers_end_when_the_process_that_built_them_ends(tmp_path, how):
    """A SIGKILL of the training process (PR_SET_PDEATHSIG), or Ctrl-C (the pool closes at exit), ends the workers
    and what their environments started."""
    script = tmp_path / "parent.py"
    script.write_text(
        "import sys, time\n"
        f"sys.path.insert(0, {HELPERS!r})\n"
        "from r1_gui.envs.runtime.pool import EnvPool\nfrom r1_gui.envs.runtime.processes import descendants\n"
        f"pool = EnvPool({BUTTON!r}, {{'child': True}})\n"
        "pool.reset([0, 1], [0, 1], [None, None])\n"
        "print(' '.join(str(p) for w in pool.pids for p in [w, *descendants(w)]), flush=True)\n"
        "time.sleep(600)\n"
    )
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    pids = [int(pid) for pid in parent.stdout.readline().split()]
    assert len(pids) == 4 and all(alive(pid) for pid in pids)
    parent.send_signal(signal.SIGKILL if how == "sigkill" else signal.SIGINT)
    parent.wait(timeout=30)
    assert not wait_gone(pids), f"left behind after {how}: {[pid for pid in pids if alive(pid)]}"
    assert os.getpid()  # the test process itself is untouched
