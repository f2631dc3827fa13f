"""--env_backend ray: the pool's slots as Ray actors on a cluster of two nodes simulated on this machine (a head
without the environment resource, an environment host advertising it). Every node is a process of this machine that
the test starts and stops, Ray is asked for 127.0.0.1 everywhere (RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0: Ray's
single-machine addressing), and its files go to a temporary folder of the test's own, so nothing reaches another
host and no cluster of the user's is touched. The local backend never imports Ray."""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import pytest
from helpers.browser import needs_browser

from r1_gui.envs.runtime.backend import PoolSettings, pool_settings
from r1_gui.envs.runtime.processes import descendants, process_table

BUTTON = "helpers.button_env:Button-v0"
HELPERS = str(Path(__file__).parent)
ENV_RESOURCE = {"envhost": 1}


def with_descendants(pids) -> set[int]:
    return {pid for root in pids for pid in (root, *descendants(root))}


def env_actors(raylet: int) -> set[int]:
    """The EnvHost actor processes of one node (children of its raylet)."""
    table = process_table()
    return {pid for pid, (ppid, _, line) in table.items() if line.startswith("ray::EnvHost") and ppid == raylet}


def alive(pids) -> list[int]:
    living = process_table()
    return sorted(pid for pid in pids if pid in living)


def wait_until(condition, seconds=30.0, step=0.2):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(step)
    return condition()


@pytest.fixture(scope="module")
def ray_env():
    """Environment variables for Ray in this module: 127.0.0.1 addresses, no usage statistics, files in a short
    temporary folder (unix socket paths must stay under 108 characters)."""
    folder = tempfile.mkdtemp(prefix="r1ray")
    values = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0", "RAY_TMPDIR": folder}
    with pytest.MonkeyPatch.context() as patch:
        for name, value in values.items():
            patch.setenv(name, value)
        patch.delenv("RAY_ADDRESS", raising=False)
        yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="class")
def cluster(ray_env):
    """A head node (1 CPU, no environment resource) and an environment host (2 CPUs, `envhost` 16). The head
    checks its nodes every second, so a removed node is known lost in seconds (Ray's default waits longer)."""
    from ray._private.services import get_node_ip_address
    from ray.cluster_utils import Cluster

    assert get_node_ip_address() == "127.0.0.1", "Ray must address this machine as 127.0.0.1 in these tests"
    checks = {"health_check_period_ms": 1000, "health_check_timeout_ms": 2000, "health_check_failure_threshold": 3}
    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "include_dashboard": False, "_system_config": checks},
    )
    cluster.env_node = cluster.add_node(num_cpus=2, resources={"envhost": 16})
    cluster.wait_for_nodes()
    assert cluster.address.startswith("127.0.0.1:"), cluster.address
    yield cluster
    import ray

    if ray.is_initialized():
        ray.shutdown()
    cluster.shutdown()


def ray_pool(cluster, env_kwargs=None, **options):
    from r1_gui.envs.runtime.ray_pool import RayEnvPool

    options.setdefault("resources", ENV_RESOURCE)
    options.setdefault("address", cluster.address)
    return RayEnvPool(BUTTON, env_kwargs, **options)


def raylet_of(node) -> int:
    return node.all_processes["raylet"][0].process.pid


# -- settings (no cluster) ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "given, message",
    [
        ({"backend": "docker"}, "--env_backend must be one of local, ray, openenv, got 'docker'"),
        ({"backend": "ray", "spares": -1}, "--env_spares must be 0 or a positive number"),
        ({"backend": "ray", "resources": '{"browser": "one"}'}, "--env_resources: 'browser' must be a number"),
        ({"backend": "ray", "resources": "[1]"}, "--env_resources must be a JSON object"),
        ({"backend": "ray", "resources": "{browser: 1}"}, "--env_resources is not JSON"),
        ({"resources": {"browser": 1}}, "--env_resources places environments on a Ray cluster: add --env_backend ray"),
        ({"spares": 2}, "--env_spares places environments on a Ray cluster"),
        ({"backend": "ray", "ray_address": " "}, "--ray_address must be auto or HOST:PORT"),
    ],
)
def test_pool_settings_refuse_what_cannot_work(given, message):
    with pytest.raises(ValueError, match=message.replace("(", "\\(").replace("[", "\\[")):
        PoolSettings(**given)


def test_pool_settings_read_the_flags_of_any_command():
    class Flags:  # as argparse, grpo_gui.py's EnvArguments and EpisodeSettings carry them
        env_backend, ray_address, env_resources, env_spares = "ray", "127.0.0.1:6379", '{"browser": 1}', 2

    assert pool_settings(Flags()) == PoolSettings("ray", "127.0.0.1:6379", {"browser": 1}, 2)
    assert pool_settings(object()) == PoolSettings()  # a command without the flags: the local pool


def test_a_local_run_never_imports_ray(tmp_path):
    """The default backend plays episodes in this machine's worker processes and never loads Ray (nor do the
    commands that parse the new flags), so it starts as fast as it did before the choice existed."""
    script = tmp_path / "local.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import sys
            sys.path.insert(0, {HELPERS!r})
            import r1_gui.grpo_gui, r1_gui.play, r1_gui.evaluation.episodes.cli, r1_gui.envs.runtime.backend  # noqa: F401
            from r1_gui.envs.runtime.backend import make_pool, pool_settings
            from r1_gui.evaluation.episodes.cli import parse_args
            args = parse_args(["--model_name_or_path", "m", "--output_dir", "o", "--env", {BUTTON!r}])
            with make_pool(args.env_id, args.env_kwargs, settings=pool_settings(args)) as pool:
                pool.describe()
                assert pool.reset([0, 1], [0, 1], ["left", "right"])[1].ok
                assert all(outcome.ok for outcome in pool.step([0, 1], ["mobile.back()"] * 2))
            print("ray" in sys.modules, any(name.startswith("ray.") for name in sys.modules))
            """
        )
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1].split() == ["False", "False"], "a local run imported Ray"


def a_port_nothing_answers() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize("where", ["RAY_ADDRESS", "ray_current_cluster"])
def test_ray_address_auto_that_finds_an_address_where_nothing_answers_is_one_line_within_seconds(where, tmp_path):
    """--ray_address auto took the address in RAY_ADDRESS, or the one the last `ray start --head` left in
    ray_current_cluster (a head that crashed leaves it), and hung in Ray's retries: 240 s and still waiting (issue 71,
    item 2). Now the address is checked as an explicit one is, and the line says where it came from."""
    address = f"127.0.0.1:{a_port_nothing_answers()}"
    env = {key: value for key, value in os.environ.items() if key != "RAY_ADDRESS"}
    env.update(RAY_TMPDIR=str(tmp_path), RAY_USAGE_STATS_ENABLED="0", PYTHONPATH=HELPERS)
    if where == "RAY_ADDRESS":
        env["RAY_ADDRESS"] = address
        expected = f"error: --ray_address auto: RAY_ADDRESS names {address}, where nothing answers ("
    else:
        heads = [line for _, _, line in process_table().values() if "gcs_server" in line.split(" ", 1)[0]]
        if heads:  # Ray's auto prefers a head process running here to the file's address (Ray not imported here)
            pytest.skip("a Ray head runs on this machine (another test's or job's): auto would join it")
        (tmp_path / "ray").mkdir()
        (tmp_path / "ray" / "ray_current_cluster").write_text(address + "\n")
        expected = (f"error: --ray_address auto: {tmp_path / 'ray' / 'ray_current_cluster'} (the last `ray start` on "
                    f"this machine) names {address}, where nothing answers (")  # fmt: skip
    began = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "r1_gui.play", "--env", BUTTON, "--env_backend", "ray"], env=env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 2, done.stderr[-2000:]
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith(expected), done.stderr[-2000:]
    assert time.monotonic() - began < 30, "the address was not checked before Ray's retries"


@pytest.mark.slow
@pytest.mark.parametrize(
    "command",
    [
        ["src/r1_gui/grpo_gui.py", "--config", "local_scripts/tiny_cpu_phone_grpo.yaml", "--output_dir", "OUT"],
        ["eval/test_phone.py", "--model_name_or_path", "MODEL", "--output_dir", "OUT"],
        ["-m", "r1_gui.play"],
    ],
)
def test_each_command_refuses_pool_flags_that_cannot_work_in_one_line(command, tiny_qwen2_vl, tmp_path):
    """grpo_gui.py, eval/test_phone.py and python -m r1_gui.play read the pool flags alike: spares asked of the
    local backend are one `error:` line naming the flag to add, before anything starts."""
    repo = Path(HELPERS).parent
    argv = [str(repo / part) if part.endswith((".py", ".yaml")) else part for part in command]
    argv = [
        str(tmp_path / "out") if part == "OUT" else str(tiny_qwen2_vl) if part == "MODEL" else part for part in argv
    ]
    if "grpo_gui.py" in argv[0]:
        argv += ["--model_name_or_path", str(tiny_qwen2_vl)]
    done = subprocess.run(
        [sys.executable, *argv, "--env_spares", "2"], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert done.returncode == 2 and errors, done.stderr[-2000:]
    assert errors == ["error: --env_spares places environments on a Ray cluster: add --env_backend ray, or drop "
                      "--env_spares"], done.stderr[-2000:]  # fmt: skip
    assert not (tmp_path / "out").exists()


# -- on a two-node cluster ------------------------------------------------------------------------------------


class TestOnTwoNodes:
    def test_auto_says_which_cluster_it_joined(self, cluster, monkeypatch, caplog):
        """--ray_address auto joined a running cluster without a word (issue 71, item 5)."""
        monkeypatch.setenv("RAY_ADDRESS", cluster.address)
        with (
            caplog.at_level("WARNING", logger="r1_gui.envs.runtime.ray_pool"),
            ray_pool(cluster, address="auto") as pool,
        ):
            assert pool.describe().tasks == ("left", "right")
        joined = [record.getMessage() for record in caplog.records if "joined" in record.getMessage()]
        assert len(joined) == 1 and joined[0].startswith(
            f"--ray_address auto: joined the Ray cluster at {cluster.address} (RAY_ADDRESS names it): 2 nodes; CPU 3, "
        ), joined
        assert "envhost 16" in joined[0]

    @pytest.mark.slow
    def test_every_actor_lands_on_the_node_with_the_resource_and_steps_side_by_side(self, cluster):
        """Four environments sleeping 1 s a step cost about 1 s a turn (not 4 s); every actor runs on the
        environment host (its process a child of that node's raylet), none on the head; close() ends every actor,
        environment worker and what the environments started."""
        env_raylet, head_raylet = raylet_of(cluster.env_node), raylet_of(cluster.head_node)
        with ray_pool(cluster, {"sleep": 1.0, "child": True}, step_timeout=30) as pool:
            described = pool.describe()
            assert described.tasks == ("left", "right") and described.has_expert
            pool.reset(range(4), [0, 1, 2, 3], ["left", "right", "left", "right"])
            pool.step(range(4), ["mobile.wait(seconds=1)"] * 4)  # warm
            start = time.monotonic()
            outcomes = pool.step(range(4), ["pyautogui.click(x=0.28, y=0.5)"] * 4)
            elapsed = time.monotonic() - start
            assert all(outcome.ok for outcome in outcomes)
            screenshot = outcomes[0].result[0]["screenshot"]
            assert screenshot.shape == (96, 64, 3) and screenshot.dtype.name == "uint8"
            assert set(pool.actor_nodes.values()) == {cluster.env_node.node_id}
            actors = env_actors(env_raylet)
            assert len(actors) == 4 and not env_actors(head_raylet)
            started = with_descendants(actors)
            assert len(started) == 12, "each actor: its environment's worker and the environment's `sleep` child"
        assert elapsed < 2.5, f"4 environments sleeping 1 s each took {elapsed:.1f} s a turn (one after another: 4 s)"
        assert wait_until(lambda: not alive(started), 30), f"left after close(): {alive(started)}"

    @pytest.mark.slow
    def test_rollout_workers_are_placed_on_the_environment_host_and_play_there(self, cluster, tiny_qwen2_vl):
        """--rollout_mode async with --env_backend ray (issue 68): each rollout worker is a Ray actor placed where
        --env_resources are (the environment host, never the head); it builds its policy copy there, receives the
        weights through Ray's object store and plays groups in environments of its own node; close() ends it all."""
        from transformers import AutoModelForImageTextToText, GenerationConfig

        from r1_gui.envs.runtime.backend import PoolSettings
        from r1_gui.processing import load_processor
        from r1_gui.rollout.engine import AsyncRollouts, AsyncSettings
        from r1_gui.rollout.worker import WorkerSpec

        model = AutoModelForImageTextToText.from_pretrained(tiny_qwen2_vl)
        processor = load_processor(tiny_qwen2_vl, 3136, 12544)
        tokenizer = processor.tokenizer
        spec = WorkerSpec(
            str(tiny_qwen2_vl), "auto", None, "model", None, processor,
            GenerationConfig(do_sample=True, temperature=1.0, max_new_tokens=8), [tokenizer.eos_token_id],
            tokenizer.pad_token_id, "r1_gui/Phone-v0", {}, 60.0,
            dict(max_turns=2, history_images=2, system=None, chat_template_kwargs=None), num_generations=2,
        )  # fmt: skip
        placed = PoolSettings(backend="ray", ray_address=cluster.address, resources=ENV_RESOURCE)
        settings = AsyncSettings(workers=2, max_staleness=1, groups_ahead=0, ray=placed)
        rollouts = AsyncRollouts(spec, settings, [("go_home", seed) for seed in range(4)], groups_per_step=2)
        env_raylet, head_raylet = raylet_of(cluster.env_node), raylet_of(cluster.head_node)
        try:
            rollouts.start(model, step=0)
            groups = rollouts.take(2, step=0)
            assert {worker.node for worker in rollouts.workers} == {cluster.env_node.node_id}
            hosts = {pid for pid, (ppid, _, line) in process_table().items()
                     if line.startswith("ray::RolloutHost") and ppid == env_raylet}  # fmt: skip
            assert hosts == {worker.pid for worker in rollouts.workers}
            assert not any(
                line.startswith("ray::RolloutHost") and ppid == head_raylet
                for ppid, _, line in process_table().values()
            )
            started = with_descendants(hosts)
            assert len(started) > len(hosts), "each worker's environments are processes below it, on its node"
            assert [len(group.episodes) for group in groups] == [2, 2]
            assert all(version == 0 for group in groups for turns in group.versions for version in turns)
            assert all(turn.logprobs for group in groups for episode in group.episodes for turn in episode.turns)
        finally:
            rollouts.close()
        assert wait_until(lambda: not alive(started), 30), f"left after close(): {alive(started)}"

    @needs_browser
    def test_an_episode_evaluation_of_web_pages_plays_four_browsers_on_the_environment_host(
        self, cluster, tiny_qwen2_vl, tmp_path, monkeypatch
    ):
        """eval/test_phone.py --env r1_gui/Web-v0 --env_backend ray: four episodes side by side, each in a browser
        of its own that runs on the environment host (below its actor there), none on the head; every browser
        process ends with the evaluation."""
        from r1_gui.envs.runtime.ray_pool import RayEnvPool
        from r1_gui.evaluation.episodes.cli import main as evaluate

        env_raylet, head_raylet = raylet_of(cluster.env_node), raylet_of(cluster.head_node)
        browsers, original_step = {}, RayEnvPool.step

        def step(pool, slots, actions):
            for actor in env_actors(env_raylet):
                browsers[actor] = {pid for pid in with_descendants([actor]) if "chrom" in process_table()[pid][2]}
            assert not env_actors(head_raylet), "an environment actor runs on the head"
            return original_step(pool, slots, actions)

        monkeypatch.setattr(RayEnvPool, "step", step)
        metrics = evaluate(
            ["--model_name_or_path", str(tiny_qwen2_vl), "--output_dir", str(tmp_path / "web"),
             "--env", "r1_gui/Web-v0", "--env_kwargs", '{"max_steps": 2}', "--tasks", "miniwob_expert",
             "--episodes", "4", "--batch_size", "4", "--max_turns", "2", "--max_new_tokens", "16",
             "--env_backend", "ray", "--ray_address", cluster.address, "--env_resources", json.dumps(ENV_RESOURCE)]
        )  # fmt: skip
        assert metrics["episodes"] == 4 and metrics["env_failures"] == 0
        assert len(browsers) == 4 and all(browsers.values()), browsers  # each actor its own Chromium
        started = with_descendants(browsers) | {pid for tree in browsers.values() for pid in tree}
        assert wait_until(lambda: not alive(started)), f"left after the evaluation: {alive(started)}"

    @pytest.mark.slow
    def test_play_plays_one_environment_on_the_cluster(self, cluster):
        """python -m r1_gui.play --env_backend ray: the expert's episodes in one actor on the environment host."""
        from r1_gui.play import main

        argv = ["--env", BUTTON, "--task", "right", "--episodes", "2", "--env_backend", "ray"]
        argv += ["--ray_address", cluster.address, "--env_resources", json.dumps(ENV_RESOURCE)]
        results = main(argv)
        assert [(result["task"], result["success"]) for result in results] == [("right", True)] * 2
        raylets = [raylet_of(cluster.env_node), raylet_of(cluster.head_node)]
        assert wait_until(lambda: not any(env_actors(raylet) for raylet in raylets)), "play's actor outlived it"

    @pytest.mark.slow
    def test_a_killed_actor_fails_its_episode_and_a_spare_takes_its_slot_within_the_step(self, cluster):
        """SIGKILL of one actor's process mid-step: that slot answers a failed Outcome (counted, per node), the
        other slots step on, the ready spare takes the slot within the same step (the next reset plays on it, no
        environment built), a new spare is built, and the killed actor's environment worker and child end."""
        with ray_pool(cluster, {"sleep": 0.5, "child": True}, step_timeout=30, spares=1) as pool:
            pool.reset(range(3), [0, 1, 2], ["left", "right", "left"])
            assert wait_until(lambda: pool.stats()["spares_ready"] == 1), pool.stats()
            (spare,) = pool._spare_pool
            victim = with_descendants([pool.actor_pids[1]])
            assert len(victim) == 3  # the actor, its environment's worker, the environment's `sleep` child
            threading.Timer(0.2, os.kill, (pool.actor_pids[1], signal.SIGKILL)).start()
            outcomes = pool.step(range(3), ["mobile.back()"] * 3)
            assert [outcome.ok for outcome in outcomes] == [True, False, True]
            assert "its Ray actor on node" in outcomes[1].failure and "is gone" in outcomes[1].failure
            assert pool.failures == 1 and pool.failures_per_node == {cluster.env_node.node_id[:8]: 1}
            assert pool.spares_used == 1 and pool.actor_pids[1] == spare.pid
            (again,) = pool.reset([1], [7], ["right"])
            assert again.ok and pool.actor_pids[1] == spare.pid, "the slot played on the spare"
            assert wait_until(lambda: not alive(victim)), f"left after the SIGKILL: {alive(victim)}"
            assert wait_until(lambda: pool.stats()["spares_ready"] == 1), "a new spare is built in the background"

    @pytest.mark.slow
    def test_a_raising_or_hanging_environment_is_replaced_and_counted(self, cluster):
        with ray_pool(cluster, {"raise_on_step": 1}) as pool:
            pool.reset([0, 1], [3, 3], ["left", "left"])
            failed = pool.step([0, 1], ["mobile.back()"] * 2)
            assert [outcome.ok for outcome in failed] == [False, False] and pool.failures == 2
            assert "the backend broke on step 1" in failed[0].failure
            again = pool.reset([0, 1], [3, 3], ["left", "left"])  # fresh actors
            assert all(outcome.ok for outcome in again) and again[0].result[1]["step"] == 0
        with ray_pool(cluster, {"hang_on_step": 1, "child": True}, step_timeout=2) as pool:
            pool.reset([0, 1], [0, 1], ["left", "right"])
            started = with_descendants(pool.actor_pids.values())
            start = time.monotonic()
            outcomes = pool.step([0, 1], ["mobile.back()"] * 2)
            elapsed = time.monotonic() - start
            assert [outcome.ok for outcome in outcomes] == [False, False] and "within 2 s" in outcomes[0].failure
            assert elapsed < 8, f"the step waited {elapsed:.1f} s for environments that hang"
            assert wait_until(lambda: not alive(started)), f"a hung actor's processes outlived it: {alive(started)}"

    @pytest.mark.slow
    def test_an_environment_that_cannot_start_anywhere_is_one_clear_error(self, cluster):
        from r1_gui.envs.runtime.pool import EnvStartError
        from r1_gui.envs.runtime.ray_pool import RayEnvPool

        with ray_pool(cluster, resources={"gpu_host": 1}) as pool:
            with pytest.raises(ValueError, match=r'--env_resources \{"gpu_host": 1\}: no live node of the Ray cluster'):
                pool.describe()
        with ray_pool(cluster, {"no_such_keyword": 1}) as pool, pytest.raises(ValueError, match="does not fit"):
            pool.describe()
        replay = RayEnvPool(
            "r1_gui/Replay-v0", {"data_dir": "/nonexistent"}, address=cluster.address, resources=ENV_RESOURCE,
            reset_retries=1,
        )  # fmt: skip
        with replay, pytest.raises(EnvStartError, match="could not be reset after 2 tries.*does not exist"):
            replay.reset([0], [0], [None])
        with ray_pool(cluster, address="127.0.0.1:1") as pool, pytest.raises(ValueError, match="nothing answers"):
            pool.describe()

    @pytest.mark.slow
    def test_at_most_max_starting_actors_start_at_once(self, cluster, tmp_path, monkeypatch):
        from r1_gui.envs.runtime.ray_pool import RayEnvPool

        starting_at_each_start = []
        new_actor = RayEnvPool._new_actor

        def counted(pool, slot):
            actor = new_actor(pool, slot)
            starting_at_each_start.append(pool._starting())
            return actor

        monkeypatch.setattr(RayEnvPool, "_new_actor", counted)
        log = tmp_path / "starts"
        with ray_pool(cluster, {"start_sleep": 0.4, "start_log": str(log)}, max_starting=2) as pool:
            first = pool.reset(range(5), [0] * 5, ["left"] * 5)
            again = pool.reset(range(5), [1] * 5, ["right"] * 5)  # started actors are reused, all at once
        assert all(outcome.ok for outcome in first + again)
        assert len(starting_at_each_start) == 5 and max(starting_at_each_start) == 2, starting_at_each_start
        spans = [tuple(map(float, line.split())) for line in log.read_text().splitlines()]
        assert len(spans) == 5, "each slot's environment is built once"
        assert max(sum(begin <= moment < end for begin, end in spans) for moment, _ in spans) <= 2

    @pytest.mark.slow
    def test_two_grpo_steps_on_the_environment_host_outlive_a_lost_node_and_a_killed_actor(
        self, cluster, tiny_qwen2_vl, tmp_path, monkeypatch
    ):
        """grpo_gui.py --env_backend ray: every environment actor runs on a node advertising the environment
        resource, none on the head. Step 1: the environment host is lost mid-step (its processes killed, as a machine
        that goes away) and a host joins again: the step's episodes are counted as environment failures and the
        slots start again on the new host. Step 2: one actor is killed with SIGKILL mid-step: its episode is counted
        and a spare takes its slot. The run completes; afterwards no actor, environment worker or environment child
        is left, and the cluster (the user's) is still up."""
        from r1_gui.envs.runtime.ray_pool import RayEnvPool
        from r1_gui.grpo_gui import main
        from r1_gui.training.grpo import parse_grpo_arguments

        head_raylet = raylet_of(cluster.head_node)
        placed, started, rollouts, pools = set(), set(), [], []
        original_reset, original_step = RayEnvPool.reset, RayEnvPool.step

        def reset(pool, slots, seeds, tasks):
            pools.append(pool)
            rollouts.append(0)
            return original_reset(pool, slots, seeds, tasks)

        def step(pool, slots, actions):
            rollouts[-1] += 1
            placed.update(pool.actor_nodes.values())
            started.update(with_descendants(pid for pid in pool.actor_pids.values() if pid))
            assert not env_actors(head_raylet), "an environment actor runs on the head"
            if (len(rollouts), rollouts[-1]) == (2, 2):  # the second rollout's second turn
                assert wait_until(lambda: pool.stats()["spares_ready"] == 1, 60), pool.stats()
                threading.Timer(0.3, os.kill, (pool.actor_pids[slots[0]], signal.SIGKILL)).start()
            if (len(rollouts), rollouts[-1]) != (1, 1):
                return original_step(pool, slots, actions)
            # the first rollout's first turn: the host goes away mid-step
            losing = threading.Timer(0.3, cluster.remove_node, (cluster.env_node,), {"allow_graceful": False})
            losing.start()
            outcomes = original_step(pool, slots, actions)
            losing.join()
            cluster.env_node = cluster.add_node(num_cpus=2, resources={"envhost": 16})  # Ray adds nodes from here only
            return outcomes

        monkeypatch.setattr(RayEnvPool, "reset", reset)
        monkeypatch.setattr(RayEnvPool, "step", step)
        argv = [
            "--config", str(Path(HELPERS).parent / "local_scripts" / "tiny_cpu_phone_grpo.yaml"),
            "--model_name_or_path", str(tiny_qwen2_vl), "--output_dir", str(tmp_path),
            "--env", BUTTON, "--env_tasks", "left", "right", "--max_turns", "3", "--max_pixels", "3136",
            "--env_kwargs", json.dumps({"sleep": 1.0, "max_steps": 4, "child": True}), "--env_step_timeout", "30",
            "--reward_funcs", "task_success", "episode_format",
            "--env_backend", "ray", "--ray_address", cluster.address, "--env_resources", json.dumps(ENV_RESOURCE),
            "--env_spares", "1",
        ]  # fmt: skip
        main(*parse_grpo_arguments(argv))
        state = json.loads((tmp_path / "trainer_state.json").read_text())
        assert state["global_step"] == 2
        failures = [
            entry["episodes/env_failures"] for entry in state["log_history"] if "episodes/env_failures" in entry
        ]
        assert failures == [2.0, 1.0], failures  # both episodes on the lost host, then the killed actor's
        (pool,) = set(pools)
        assert pool.spares_used >= 1 and pool._closed
        env_nodes = {node.node_id for node in cluster.worker_nodes} | {node for node in placed if node}
        assert placed - {None} <= env_nodes and cluster.head_node.node_id not in placed
        assert len({node for node in placed if node}) == 2, "the lost host's actors, then the new host's"
        assert wait_until(lambda: not alive(started)), f"left after the run: {alive(started)}"
        assert alive([head_raylet]) == [head_raylet], "the user's cluster stays up"

    @pytest.mark.slow
    def test_a_killed_trainer_leaves_nothing_on_the_users_cluster_which_stays_up(
        self, cluster, tiny_qwen2_vl, tmp_path
    ):
        """The trainer is killed with SIGKILL while its environments play: Ray ends the run's actors, each actor's
        environment worker ends its process tree, and the cluster the user started stays up."""
        env_raylet = raylet_of(cluster.env_node)
        before = env_actors(env_raylet)
        trainer, seen = start_trainer(
            tiny_qwen2_vl, tmp_path, "--ray_address", cluster.address, watch=lambda _: env_actors(env_raylet) - before
        )
        trainer.send_signal(signal.SIGKILL)
        trainer.wait(timeout=60)
        assert seen and wait_until(lambda: not alive(seen)), f"left after the SIGKILL: {alive(seen)}"
        raylets = [raylet_of(cluster.head_node), env_raylet]
        assert alive(raylets) == sorted(raylets), "the user's cluster stays up"


@pytest.mark.slow
def test_a_cluster_that_asks_for_a_token_is_one_line_at_once(ray_env, tmp_path):
    """--ray_address HEAD of a cluster with Ray's token authentication, from a machine without the token: 26 s and
    about 20 lines of Ray's warnings before r1_gui's line (issue 71, item 5). Now the line alone, within seconds. The
    head runs in a process of the test's own (started with the token, so its processes have it), ended by the test."""
    import secrets

    without = {key: value for key, value in os.environ.items() if not key.startswith("RAY_AUTH")}
    head_env = {**without, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(16), "HOME": str(tmp_path)}
    serve = ("import sys; from ray.cluster_utils import Cluster; head = Cluster(initialize_head=True, head_node_args="
             "{'num_cpus': 1, 'include_dashboard': False}); print(head.address, flush=True); sys.stdin.read(); "
             "head.shutdown()")  # fmt: skip
    head = subprocess.Popen([sys.executable, "-c", serve], env=head_env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)  # fmt: skip
    try:
        address = head.stdout.readline().strip()
        assert address.startswith("127.0.0.1:"), address
        began = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "r1_gui.play", "--env", BUTTON, "--env_backend", "ray",
                               "--ray_address", address], env={**without, "HOME": str(tmp_path / "client"),
                               "PYTHONPATH": HELPERS}, cwd=tmp_path, capture_output=True, text=True, timeout=120)  # fmt: skip
        seconds = time.monotonic() - began
    finally:
        head.stdin.close()
        head.wait(timeout=60)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and lines == [
        f"error: --ray_address {address}: the cluster asks for Ray's token authentication: export RAY_AUTH_MODE=token "
        "and give this machine the cluster's token (~/.ray/auth_token or RAY_AUTH_TOKEN)"
    ], done.stderr[-3000:]
    assert seconds < 15, seconds


@pytest.mark.slow
def test_a_local_ray_says_it_advertises_the_resources_here_and_writes_no_token_file(ray_env, tmp_path):
    """The local Ray started for a run advertised whatever --env_resources asks, so the environments ran beside the
    trainer without a word, and Ray printed its token warning and left ~/.ray/auth_token (issue 71, item 5). (Started
    directly: `auto` would join any Ray head another job runs on this machine.)"""
    env = {key: value for key, value in os.environ.items() if not key.startswith("RAY_AUTH")}
    env["HOME"] = str(tmp_path)
    script = ("import logging, os, ray; from r1_gui.envs.runtime.ray_cluster import disconnect, start_local_ray; "
              "logging.basicConfig(level=logging.WARNING); start_local_ray({'envhost': 1}); "
              "print(ray.cluster_resources()['envhost']); disconnect(); print('RAY_AUTH_TOKEN' in os.environ)")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.split() == ["1000.0", "False"], done.stderr[-3000:]
    assert (
        "starting a local Ray for this run (stopped at its end); it advertises envhost here, so the environments run "
        "beside the trainer (on a cluster only the hosts that advertise it take them)"
    ) in done.stderr
    assert "Token authentication" not in done.stderr and not (tmp_path / ".ray").exists(), done.stderr[-3000:]


def start_trainer(model, output_dir, *extra, watch, steps=1000):
    """grpo_gui.py --env_backend ray in a process of its own; returns it and the processes `watch(its pid)` found
    (and their descendants) once an environment's child runs among them (a run of `steps` > 2), or once it ended."""
    recipe = Path(HELPERS).parent / "local_scripts" / "tiny_cpu_phone_grpo.yaml"
    command = [
        sys.executable, str(Path(HELPERS).parent / "src" / "r1_gui" / "grpo_gui.py"), "--config", str(recipe),
        "--model_name_or_path", str(model), "--output_dir", str(output_dir), "--max_steps", str(steps),
        "--env", BUTTON, "--env_tasks", "left", "right", "--max_turns", "2", "--max_pixels", "3136",
        "--env_kwargs", json.dumps({"sleep": 0.2, "max_steps": 4, "child": True}), "--reward_funcs", "task_success",
        "--env_backend", "ray", "--env_resources", json.dumps(ENV_RESOURCE), "--env_spares", "1", *extra,
    ]  # fmt: skip
    path = os.pathsep.join([HELPERS, os.environ.get("PYTHONPATH", "")])
    log = open(Path(output_dir).parent / f"{Path(output_dir).name}.log", "w")  # noqa: SIM115 (the run's own)
    trainer = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONPATH": path})
    seen: set[int] = set()
    deadline = time.monotonic() + 180
    while trainer.poll() is None and time.monotonic() < deadline:
        seen |= with_descendants(watch(trainer.pid))
        table = process_table()
        if steps > 2 and any(table.get(pid, (0, 0, ""))[2].startswith("sleep 1000") for pid in seen):
            break
        time.sleep(0.2)
    return trainer, seen


@pytest.mark.slow
@pytest.mark.parametrize("how", ["end", "ctrl-c", "sigkill"])
def test_a_local_ray_started_for_the_run_ends_with_it(how, ray_env, tiny_qwen2_vl, tmp_path):
    """--ray_address auto with no cluster running: the trainer starts a local Ray for the run (its head, raylet,
    agents and workers) with `envhost` advertised, and nothing of it, of the actors, their environments' workers or
    the environments' children is left after the run ends, after Ctrl-C, and after the trainer is killed with
    SIGKILL."""
    trainer, seen = start_trainer(
        tiny_qwen2_vl, tmp_path / "run", steps=2 if how == "end" else 1000, watch=lambda pid: {pid}
    )
    if how == "ctrl-c":
        trainer.send_signal(signal.SIGINT)
    elif how == "sigkill":
        trainer.send_signal(signal.SIGKILL)
    code = trainer.wait(timeout=120)
    log = (tmp_path / "run.log").read_text()
    assert code == {"end": 0, "ctrl-c": 130, "sigkill": -signal.SIGKILL}[how], log[-3000:]
    assert "starting a local Ray for this run" in log
    seen.discard(trainer.pid)
    assert len(seen) > 10, "the run's Ray: head, raylet, agents, actors, environment workers and children"
    assert wait_until(lambda: not alive(seen), 30), f"left after {how}: {alive(seen)}"
