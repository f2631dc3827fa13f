"""This process's connection to Ray, for the Ray pools (`r1_gui.envs.runtime.ray_pool`): which cluster, checked before
Ray is asked, said in one line, and left when the last pool closes.

    connect("auto", {"browser": 1})    # the cluster RAY_ADDRESS or `ray start` names, else a local Ray for the run
    connect("10.0.0.1:6379", {})       # that head, or one `error:` line (ValueError) within seconds
    disconnect()                       # a local Ray started for the run stops; a user's cluster stays up

Before Ray connects to an address (given, or found by `auto`), the head is checked: nothing listening there, a head
that does not answer, or a cluster that asks for Ray's token authentication, is one ValueError naming where the
address came from and what to do, within seconds; Ray itself would retry for minutes (an address where nothing
answers) or 20 s (a refused token), printing a warning a second. Joining a cluster is said in one line (its nodes
and resources). A local Ray started for the run advertises the custom resources asked for on this machine (so the
run can place its environments), which the line says; it authenticates with a token made for the run and kept in
this process's environment, so it writes no ~/.ray/auth_token and prints no warning about it.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import ray
from ray.exceptions import AuthenticationError

from r1_gui.envs.runtime.pool import worker_command

logger = logging.getLogger("r1_gui.envs.runtime.ray_pool")  # the pools' lines, under the name they always had

CONNECT_TIMEOUT = 10.0  # seconds to reach a head's port before saying nothing answers there
HEAD_TIMEOUT_MS = 5000  # for the head to answer once its port accepted (Ray's own client gives up after ~13 s)
# the resources Ray takes as options of their own; every other name is a custom resource
STANDARD_RESOURCES = {"CPU": "num_cpus", "GPU": "num_gpus", "memory": "memory"}
TOKEN_HINT = (
    "export RAY_AUTH_MODE=token and give this machine the cluster's token (~/.ray/auth_token or RAY_AUTH_TOKEN)"
)


@dataclass
class Session:
    """This process's connection to Ray, as the Ray pools share it."""

    pools: set = field(default_factory=set)
    connected_here: bool = False  # ray.init was called by a pool (ray.shutdown when the last pool closes)
    exit_handler: bool = False
    guard: subprocess.Popen | None = None  # ends the local Ray's processes if this process is killed (worker.guard)
    environment: dict = field(default_factory=dict)  # variables set for a local Ray, and their values before


session = Session()


def connect(address: str, resources: dict) -> None:
    """Connect this process to Ray once: `address` HOST:PORT, or "auto" (the cluster Ray finds, else a local one
    started for the run, advertising the custom `resources` so the run can place its environments)."""
    if ray.is_initialized():
        return
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # a run never reports to Ray's servers
    if address == "auto":
        found, source, fix = auto_address()
        if found is None:
            start_local_ray(resources)
            return
        check_head(found, f"--ray_address auto: {source} names {found}", fix, joined=", whose")
        address, said = found, f"--ray_address auto: joined the Ray cluster at {found} ({source} names it)"
    else:
        check_head(
            address,
            f"--ray_address {address}",
            "start the head with `ray start --head` and give its address, or leave --ray_address auto",
            joined=": the",
        )
        said = f"--ray_address {address}: joined the Ray cluster there"
    try:
        ray.init(address=address, logging_level=logging.WARNING)
    except (ConnectionError, RuntimeError, AuthenticationError) as error:
        raise ValueError(f"--ray_address {address}: could not connect to a Ray cluster there: {error}") from None
    session.connected_here = True
    logger.warning("%s: %s", said, cluster_summary())


def auto_address() -> tuple[str | None, str, str]:
    """(the address `ray.init(address="auto")` connects to, where it was found, what to do when nothing answers
    there), or (None, "", "") where it finds none and a local Ray is started. Ray looks in this order: RAY_ADDRESS;
    the file the last `ray start --head` on this machine wrote (ray_current_cluster in Ray's temporary folder, which
    `ray stop` clears and a head that crashed leaves); a Ray head process running here."""
    from ray._private.services import get_ray_address_from_environment  # Ray's own search (pyproject pins ray)
    from ray._private.utils import get_ray_address_file, read_ray_address

    try:
        found = get_ray_address_from_environment("auto", None)
    except ConnectionError:  # none
        return None, "", ""
    if os.environ.get("RAY_ADDRESS"):
        return found, "RAY_ADDRESS", "unset it (a local Ray is then started for the run), or start the head there"
    stop = "run `ray stop` to end or clear what is left of it (a local Ray is then started for the run)"
    if read_ray_address(None) == found:
        return found, f"{get_ray_address_file(None)} (the last `ray start` on this machine)", stop
    return found, "a Ray head process on this machine", stop


def check_head(address: str, named: str, fix: str, joined: str) -> None:
    """ValueError unless a Ray head answers at HOST:PORT and lets this machine in, within seconds: ``named`` begins
    the line; ``joined`` (", whose" or ": the") ties it to what the head said; ``fix`` ends a line where nothing
    answers. Ray's own client retries for minutes where nothing answers, and for 20 s on a refused token, printing a
    warning a second."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"--ray_address must be auto or HOST:PORT of a Ray cluster's head, got {address!r}")
    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT).close()
    except OSError as error:
        where = ", where nothing answers" if joined.startswith(",") else ": nothing answers there"
        raise ValueError(f"{named}{where} ({error}); {fix}") from None
    from ray._raylet import InnerGcsClient  # the client Ray's own tools use, with a timeout (pyproject pins ray)

    try:
        with _stderr_silenced():  # the client's own warning lines: the ValueError below says it in one
            InnerGcsClient.standalone(address, None, HEAD_TIMEOUT_MS)
    except AuthenticationError:
        raise ValueError(f"{named}{joined} cluster asks for Ray's token authentication: {TOKEN_HINT}") from None
    except Exception as error:  # noqa: BLE001 (Ray raises its own RpcError and others for a head that hangs)
        first = (str(error).strip().splitlines() or [type(error).__name__])[0][:200]
        raise ValueError(f"{named}{joined} head does not answer ({first}); {fix}") from None


def start_local_ray(resources: dict) -> None:
    """A local Ray for this run (stopped by `disconnect`, or by the guard process when this one is killed): this
    machine stands in for the environment hosts, advertising room for any number of the run's environments."""
    custom = {name: 1_000.0 * amount for name, amount in resources.items() if name not in STANDARD_RESOURCES}
    here = (
        f"; it advertises {', '.join(custom)} here, so the environments run beside the trainer (on a cluster only "
        "the hosts that advertise it take them)"
        if custom
        else ""
    )
    logger.warning(
        "--ray_address auto: no Ray cluster is running; starting a local Ray for this run (stopped at its end)%s", here
    )
    if "RAY_AUTH_MODE" not in os.environ and not ({"RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"} & set(os.environ)):
        # Ray 2.60 turns token authentication on for a local Ray, writes ~/.ray/auth_token and warns; a token made
        # for this run, in the environment its processes inherit, keeps the protection without the file or the line
        session.environment = {"RAY_AUTH_MODE": None, "RAY_AUTH_TOKEN": None}
        os.environ.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=secrets.token_hex(32))
        _reread_auth_settings()
    ray.init(resources=custom, include_dashboard=False, logging_level=logging.WARNING)
    session.connected_here = True
    session.guard = subprocess.Popen(
        worker_command(f"guard({os.getpid()})"), start_new_session=True, stdin=subprocess.DEVNULL
    )


def disconnect() -> None:
    """Leave Ray: a local Ray started for the run stops (its guard with it); a user's cluster stays up."""
    if session.connected_here and ray.is_initialized():
        ray.shutdown()
    session.connected_here = False
    if session.guard is not None:  # nothing left to guard
        session.guard.kill()
        session.guard.wait()
        session.guard = None
    for name, before in session.environment.items():  # the token made for the local Ray goes with it
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before
    if session.environment:
        _reread_auth_settings()
    session.environment = {}


def _reread_auth_settings() -> None:
    """Make Ray read RAY_AUTH_MODE and RAY_AUTH_TOKEN again (it reads them once, when imported), as Ray's own
    ray.init does when it turns token authentication on."""
    from ray._raylet import AuthenticationTokenLoader, Config  # (pyproject pins ray)

    Config.initialize("")
    AuthenticationTokenLoader.instance().reset_cache()


def cluster_summary() -> str:
    """ "N nodes; CPU 3, GPU 0, memory 12.5 GiB, browser 8" of the cluster this process is connected to."""
    nodes = [node for node in ray.nodes() if node["Alive"]]
    totals = ray.cluster_resources()
    shown = []
    for name, amount in sorted(totals.items()):
        if name.startswith("node:") or name == "object_store_memory":
            continue
        shown.append(f"{name} {amount / 2**30:.1f} GiB" if name == "memory" else f"{name} {amount:g}")
    return f"{len(nodes)} node{'s' if len(nodes) != 1 else ''}; {', '.join(shown) or 'no resources'}"


@contextmanager
def _stderr_silenced() -> Iterator[None]:
    """File descriptor 2 to /dev/null inside the block: Ray's C++ client writes its warnings there directly."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
