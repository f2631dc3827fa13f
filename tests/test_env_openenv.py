"""--env_backend openenv: a pool whose slots are sessions on OpenEnv servers. Two GRPO steps against r1_gui's own
served Phone-v0 and against a hand-written OpenEnv server; a server without screenshots refused in one line; a step
that hangs cut at the step timeout; a server that dies costing its episodes, counted; Ctrl-C ending every session.
Every server listens on 127.0.0.1 and is stopped by the test that started it."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.openenv_server import REPO, children_named, needs_openenv, served

from r1_gui.envs.runtime import backend
from r1_gui.envs.runtime.backend import PoolSettings, make_pool
from r1_gui.envs.runtime.pool import EnvStartError

pytestmark = needs_openenv
HAND_WRITTEN = [sys.executable, str(REPO / "tests" / "helpers" / "openenv_button_server.py")]
RECIPE = REPO / "local_scripts" / "tiny_cpu_phone_grpo.yaml"


def openenv(*urls: str) -> PoolSettings:
    return PoolSettings(backend="openenv", urls=",".join(urls))


@pytest.fixture(scope="module")
def phone_server(tmp_path_factory):
    with served("r1_gui/Phone-v0", log=tmp_path_factory.mktemp("serve") / "phone.log") as (url, _):
        yield url


@pytest.fixture(scope="module")
def button_server(tmp_path_factory):
    """helpers.button_env served: each session's environment starts a `sleep` child; step 3 of an episode hangs (the
    server's own check at start-up plays two)."""
    flags = ("--env_kwargs", '{"child": true, "hang_on_step": 3}', "--session_timeout", "600")
    with served("helpers.button_env:Button-v0", *flags, log=tmp_path_factory.mktemp("serve") / "b.log") as server:
        yield server


def run_grpo(model: Path, output_dir: Path, *extra: str, recipe: Path = RECIPE) -> dict:
    from r1_gui.grpo_gui import main
    from r1_gui.training.grpo import parse_grpo_arguments

    argv = ["--config", str(recipe), "--model_name_or_path", str(model), "--output_dir", str(output_dir)]
    main(*parse_grpo_arguments([*argv, *extra]))
    return json.loads((output_dir / "trainer_state.json").read_text())


def no_local_workers(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a local worker pool was built: the episodes did not play on the server")

    monkeypatch.setattr(backend, "EnvPool", refuse)


@pytest.mark.slow
def test_two_grpo_steps_against_a_served_phone(phone_server, tiny_qwen2_vl, tmp_path, monkeypatch):
    no_local_workers(monkeypatch)
    state = run_grpo(tiny_qwen2_vl, tmp_path, "--env_backend", "openenv", "--env_url", phone_server)
    assert state["global_step"] == 2
    logged = {key: value for entry in state["log_history"] for key, value in entry.items()}
    assert logged["episodes/env_failures"] == 0 and "rewards/task_success/go_home" in logged
    assert json.loads((tmp_path / "episode_settings.json").read_text())["tasks"] == ["go_home", "open_app"]


@pytest.mark.slow
def test_two_grpo_steps_against_a_hand_written_openenv_server(tiny_qwen2_vl, tmp_path, monkeypatch):
    import yaml

    no_local_workers(monkeypatch)
    recipe = {key: value for key, value in yaml.safe_load(RECIPE.read_text()).items() if key != "env_tasks"}
    (tmp_path / "recipe.yaml").write_text(yaml.safe_dump(recipe))  # the server declares no tasks
    with served("button", log=tmp_path / "serve.log", command=HAND_WRITTEN) as (url, _):
        state = run_grpo(
            tiny_qwen2_vl, tmp_path / "run", "--env", "button", "--env_backend", "openenv", "--env_url", url,
            "--reward_funcs", "task_success", "episode_format", recipe=tmp_path / "recipe.yaml",
        )  # fmt: skip
    assert state["global_step"] == 2
    logged = {key for entry in state["log_history"] for key in entry}
    assert {"episodes/success_rate", "episodes/turn_parse_rate", "rewards/task_success/mean"} <= logged


def test_a_server_without_screenshots_is_refused_in_one_line_naming_its_fields(tmp_path):
    command = [*HAND_WRITTEN, "--no_screenshot"]
    with served("blind", log=tmp_path / "serve.log", command=command) as (url, _):
        with make_pool("blind", {}, settings=openenv(url)) as pool, pytest.raises(ValueError) as refused:
            pool.describe()
        assert "without a screenshot (its fields: goal, pixels_hash)" in str(refused.value)
        done = subprocess.run(
            [sys.executable, "-m", "r1_gui.play", "--env", "blind", "--env_backend", "openenv", "--env_url", url,
             "--policy", "random"], cwd=REPO, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "its fields: goal, pixels_hash" in lines[0], done.stderr


def test_a_served_id_other_than_env_and_env_kwargs_here_are_refused(phone_server):
    with make_pool("r1_gui/Web-v0", {}, settings=openenv(phone_server)) as pool, pytest.raises(ValueError) as wrong:
        pool.describe()
    assert "serves r1_gui/Phone-v0; pass --env r1_gui/Phone-v0" in str(wrong.value)
    with pytest.raises(ValueError, match="give them to the server"):
        make_pool("r1_gui/Phone-v0", {"width": 224}, settings=openenv(phone_server))
    with pytest.raises(ValueError, match="--env_backend openenv needs --env_url"):
        PoolSettings(backend="openenv")
    with pytest.raises(ValueError, match="add --env_backend openenv"):
        PoolSettings(urls="http://127.0.0.1:1")


def test_a_step_that_hangs_is_cut_at_the_step_timeout(button_server):
    url, _ = button_server
    # 8 s: a plain step answers in milliseconds, but on a 2-core machine under other jobs' load now and then in seconds
    with make_pool("helpers.button_env:Button-v0", {}, step_timeout=8, settings=openenv(url)) as pool:
        pool.reset([0], [1], ["left"])
        for step in (1, 2):
            (answer,) = pool.step([0], ["pyautogui.click(x=0.28, y=0.5)"])
            assert answer.ok and answer.result[4]["step"] == step
        began = time.monotonic()
        (hung,) = pool.step([0], ["terminate(status='success')"])
        assert not hung.ok and "did not answer within 8 s" in hung.failure
        assert time.monotonic() - began < 30 and pool.failures == 1
        (again,) = pool.reset([0], [2], ["right"])  # a new session on the same server
        assert again.ok and again.result[1]["task"] == "right"


def test_ctrl_c_ends_every_session(button_server):
    url, server = button_server
    before = len(children_named(server.pid, "sleep"))
    script = (
        "import sys, time\n"
        "from r1_gui.envs.runtime.backend import PoolSettings, make_pool\n"
        f"pool = make_pool('helpers.button_env:Button-v0', {{}}, settings=PoolSettings(backend='openenv', urls={url!r}))\n"
        "pool.reset([0, 1, 2], [1, 2, 3], [None, None, None])\n"
        "print('ready', flush=True)\n"
        "time.sleep(600)\n"
    )
    run = subprocess.Popen([sys.executable, "-c", script], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, env={**os.environ, "PYTHONPATH": str(REPO / "tests")})  # fmt: skip
    assert run.stdout.readline().strip() == "ready", run.stderr.read()
    assert len(children_named(server.pid, "sleep")) == before + 3
    run.send_signal(signal.SIGINT)
    run.wait(timeout=60)
    began = time.monotonic()
    while len(children_named(server.pid, "sleep")) > before and time.monotonic() - began < 20:
        time.sleep(0.2)
    assert len(children_named(server.pid, "sleep")) == before, "sessions outlived the Ctrl-C"


def test_closing_the_pool_ends_its_sessions_while_the_process_lives_on(button_server):
    """close() gathered the sessions' closes on the calling thread's loop, which never ran them: the server kept each
    environment until its session timeout (600 s here) unless the process exited."""
    url, server = button_server
    before = len(children_named(server.pid, "sleep"))
    pool = make_pool("helpers.button_env:Button-v0", {}, settings=openenv(url))
    pool.reset([0, 1, 2], [1, 2, 3], [None, None, None])
    assert len(children_named(server.pid, "sleep")) == before + 3
    pool.close()
    began = time.monotonic()
    while len(children_named(server.pid, "sleep")) > before and time.monotonic() - began < 20:
        time.sleep(0.2)
    assert len(children_named(server.pid, "sleep")) == before, "the closed pool's sessions are still open"


def test_a_server_that_dies_costs_its_episodes_and_is_counted(tmp_path):
    with served("r1_gui/Phone-v0", log=tmp_path / "serve.log") as (url, server):
        pool = make_pool("r1_gui/Phone-v0", {}, step_timeout=30, settings=openenv(url))
        try:
            pool.reset([0, 1], [1, 2], ["go_home", "go_home"])
            server.kill()
            server.wait()
            outcomes = pool.step([0, 1], ["mobile.home()", "mobile.home()"])
            assert [outcome.ok for outcome in outcomes] == [False, False] and pool.failures == 2
            assert all(line.startswith(f"slot {i}: ") for i, line in enumerate(pool.failure_log))
            with pytest.raises(EnvStartError, match="could not be reset"):
                pool.reset([0], [3], ["go_home"])
        finally:
            pool.close()
