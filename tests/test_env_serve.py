"""r1-gui-env-serve: any r1_gui environment behind openenv-core's own server, played with openenv-core's own client
(HTTP and WebSocket sessions), 8 sessions at once, a vanished client's session freed, and bad input in one line.
Every server listens on 127.0.0.1 and is stopped by the test that started it."""

import asyncio
import json
import subprocess
import sys
import time
import urllib.request

import numpy as np
import pytest
from helpers.openenv_server import REPO, children_named, needs_openenv, served

from r1_gui.actions import Action, format_action
from r1_gui.envs.wire import decode_info, decode_screenshot

pytestmark = needs_openenv


def refusal(url: str) -> dict:
    """What the server says first to one more WebSocket session (a full server refuses at once, unasked)."""
    from websockets.sync.client import connect

    with connect(url.replace("http", "ws", 1) + "/ws") as session:
        return json.loads(session.recv(timeout=60))["data"]


def post(url: str, payload: dict) -> dict:
    request = urllib.request.Request(url, json.dumps(payload).encode(), {"Content-Type": "application/json"})
    return json.loads(urllib.request.urlopen(request, timeout=60).read())


@pytest.fixture(scope="module")
def phone_server(tmp_path_factory):
    log = tmp_path_factory.mktemp("serve") / "phone.log"
    with served("r1_gui/Phone-v0", "--max_sessions", "8", log=log) as (url, _):
        yield url


def test_http_reset_and_step_answer_a_screenshot_and_an_instruction(phone_server):
    schema = json.loads(urllib.request.urlopen(f"{phone_server}/schema").read())
    assert schema["action"]["required"] == ["text"]
    state = json.loads(urllib.request.urlopen(f"{phone_server}/state").read())
    assert state["env_id"] == "r1_gui/Phone-v0" and "go_home" in state["tasks"] and state["has_expert"] is True
    reset = post(f"{phone_server}/reset", {"seed": 5, "task": "go_home"})
    screenshot = decode_screenshot(reset["observation"]["screenshot"])
    assert screenshot.dtype == np.uint8 and screenshot.ndim == 3 and screenshot.shape[2] == 3
    info = decode_info(reset["observation"]["info"])
    assert info["task"] == "go_home" and info["instruction"] == reset["observation"]["instruction"] != ""
    assert reset["done"] is False and isinstance(info["expert_action"], Action)
    # a stateless HTTP step builds an environment, resets it with seed 0 and steps it
    step = post(f"{phone_server}/step", {"action": {"text": "no action here"}})
    info = decode_info(step["observation"]["info"])
    assert info["parsed"] is False and "no action" in info["error"] and info["step"] == 1
    assert decode_screenshot(step["observation"]["screenshot"]).shape == screenshot.shape


def test_openenvs_own_client_plays_a_served_phone_episode_with_the_expert_to_success(phone_server):
    from openenv.core.generic_client import GenericEnvClient

    with GenericEnvClient(base_url=phone_server).sync() as client:
        result = client.reset(seed=11, task="open_app")
        info = decode_info(result.observation["info"])
        turns = 0
        while not result.done:
            text = format_action(info["expert_action"], "aguvis")  # the expert's action as model text
            result = client.step({"text": text})
            info = decode_info(result.observation["info"])
            turns += 1
            assert info["parsed"] is True and info["error"] is None, info
        assert info["success"] is True and result.reward == 1.0 and result.observation["terminated"] is True
        assert 1 < turns <= info["max_steps"]


def test_eight_sessions_at_once_are_isolated_and_a_ninth_is_refused(phone_server):
    from openenv.core.generic_client import GenericEnvClient

    async def play() -> tuple[list, list, str]:
        clients = [GenericEnvClient(base_url=phone_server) for _ in range(8)]
        try:
            tasks = ["go_home", "open_app"] * 4
            resets = await asyncio.gather(
                *(c.reset(seed=i, task=t) for i, (c, t) in enumerate(zip(clients, tasks, strict=True)))
            )
            # session 0 steps three times; the others' episodes stay at their first step
            for _ in range(3):
                await clients[0].step({"text": "mobile.wait(seconds=1)"})
            states = await asyncio.gather(*(c.state() for c in clients))
            refused = await asyncio.to_thread(refusal, phone_server)
            return resets, states, refused
        finally:
            await asyncio.gather(*(c.close() for c in clients))

    resets, states, refused = asyncio.run(play())
    assert [r.observation["info"]["task"] for r in resets] == ["go_home", "open_app"] * 4
    assert [r.observation["info"]["step"] for r in resets] == [0] * 8
    assert [s["step_count"] for s in states] == [3, 0, 0, 0, 0, 0, 0, 0]
    assert refused["code"] == "CAPACITY_REACHED" and refused["max_sessions"] == 8


def test_a_vanished_clients_session_and_its_environment_are_freed_after_the_timeout(tmp_path):
    """A client that holds its session open and says nothing (gone without closing) costs its session only until
    --session_timeout: then the session closes its environment (here a `sleep` child it started, as a browser would
    be) and the one-session server takes a new client."""
    from openenv.core.generic_client import GenericEnvClient
    from websockets.sync.client import connect

    flags = ("--env_kwargs", '{"child": true}', "--max_sessions", "1", "--session_timeout", "1")
    with served("helpers.button_env:Button-v0", *flags, log=tmp_path / "serve.log") as (url, server):
        with connect(url.replace("http", "ws", 1) + "/ws") as silent:  # the vanished client: connected, silent
            silent.send(json.dumps({"type": "reset", "data": {"seed": 1}}))
            assert json.loads(silent.recv(timeout=60))["type"] == "observation"
            assert len(children_named(server.pid, "sleep")) == 1
            assert refusal(url)["code"] == "CAPACITY_REACHED"
            began = time.monotonic()
            while children_named(server.pid, "sleep") and time.monotonic() - began < 30:
                time.sleep(0.2)
            assert children_named(server.pid, "sleep") == [], "the session's environment was not closed"
            with GenericEnvClient(base_url=url).sync() as other:
                assert other.reset(seed=2).observation["instruction"] == "Click the red button, then stop."


@pytest.mark.parametrize(
    "argv, message",
    [
        (["no_such/Env-v0"], "--env no_such/Env-v0"),
        (["r1_gui/Phone-v0", "--env_kwargs", '{"no_such_keyword": 1}'], "--env_kwargs"),
        (["r1_gui/Phone-v0", "--max_sessions", "0"], "--max_sessions must be at least 1"),
    ],
)
def test_bad_input_is_one_error_line(argv, message):
    done = subprocess.run(
        [sys.executable, "-m", "r1_gui.envs.serve", *argv], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], done.stderr
