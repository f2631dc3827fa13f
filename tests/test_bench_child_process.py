"""bench/child_process.py: a benchmark's child that dies before it reports ends the run with a message naming it,
instead of leaving the parent blocked on the pipe for good (what the one-process-per-side benchmarks used to do)."""

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from child_process import receive, start  # noqa: E402


def _send_twice(value, conn) -> None:
    conn.send(value)
    conn.send(value * 2)


def _die(code, conn) -> None:
    os._exit(code)  # no exception, no message: what a C++ allocator's abort or the OOM killer leaves


def test_a_child_that_reports_is_read_in_order():
    process, conn = start(_send_twice, 21)
    assert receive(process, conn, "run 1") == 21
    assert receive(process, conn, "run 1") == 42
    process.join(timeout=60)
    assert process.exitcode == 0


def test_a_child_that_dies_before_reporting_ends_the_run_with_its_name_and_exit_code():
    process, conn = start(_die, 3)
    # the benchmarks' old loops kept the child's end of the pipe bound in the parent: after such a death nothing was
    # ever readable (poll(5) False), so recv() blocked for good
    assert conn.poll(60), "the parent still holds the child's end of the pipe: recv() would block for good"
    with pytest.raises(SystemExit, match=r"run 2 \(ours\): the child process ended with exit code 3"):
        receive(process, conn, "run 2 (ours)")


def test_a_child_that_dies_after_reporting_part_ends_the_run_at_the_missing_part():
    process, conn = start(_send_twice, 1)
    assert receive(process, conn, "plain") == 1
    assert receive(process, conn, "plain") == 2
    with pytest.raises(SystemExit, match="plain: the child process ended with exit code 0"):
        receive(process, conn, "plain")
