"""OpenEnv servers for the tests, on 127.0.0.1 only: `served(...)` starts `python -m r1_gui.envs.serve ...` (or any
command that listens on the port it is given) in its own process group, waits until `/health` answers, yields its
URL and ends it (SIGTERM, then SIGKILL of the whole group). `needs_openenv` skips a test outside CI where
openenv-core is not installed (in CI, where setup.sh installs the `envs` extra, a missing one fails it)."""

import contextlib
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT = 120.0  # importing openenv-core (gradio, fastapi) takes 5-20 s on a busy 2-core machine

needs_openenv = pytest.mark.skipif(
    importlib.util.find_spec("openenv") is None and not os.environ.get("CI"),
    reason="outside CI without openenv-core (pip install -e '.[envs]')",
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_healthy(url: str, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the server ended (code {process.returncode}): {log.read_text()[-2000:]}")
        try:
            urllib.request.urlopen(f"{url}/health", timeout=2).read()
            return
        except OSError:
            time.sleep(0.3)
    raise AssertionError(
        f"the server at {url} did not answer /health in {START_TIMEOUT:g} s: {log.read_text()[-2000:]}"
    )


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)  # whatever the server left of its group
    process.wait(timeout=10)


@contextlib.contextmanager
def served(env_id: str, *flags: str, log: Path, command: list[str] | None = None):
    """r1-gui-env-serve ENV_ID *flags on a free port of 127.0.0.1 (or `command` + ["--port", PORT]); yields
    (url, process)."""
    port = free_port()
    argv = command or [sys.executable, "-m", "r1_gui.envs.serve", env_id, *flags]
    with open(log, "w") as out:
        process = subprocess.Popen(
            [*argv, "--host", "127.0.0.1", "--port", str(port)],
            cwd=REPO, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
            env={**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "tests"), os.environ.get("PYTHONPATH", "")])},
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, process, log)
        yield url, process
    finally:
        stop(process)


def children_named(pid: int, name: str) -> list[int]:
    """The descendants of `pid` whose command name is `name` (read from /proc)."""
    from r1_gui.envs.runtime.processes import descendants

    found = []
    for child in descendants(pid):
        with contextlib.suppress(OSError):
            if Path(f"/proc/{child}/comm").read_text().strip() == name:
                found.append(child)
    return found
