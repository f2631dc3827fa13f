"""Serve any r1_gui environment as an OpenEnv server (`r1-gui-env-serve`, `python -m r1_gui.envs.serve`).

    r1-gui-env-serve r1_gui/Phone-v0 --host 127.0.0.1 --port 8000
    r1-gui-env-serve r1_gui/Web-v0 --env_kwargs '{"task": "click-test-2"}' --max_sessions 4 --session_timeout 120
    python -m r1_gui.envs.serve my_module:MyEnv-v0 --port 8001

The server is openenv-core's own (`openenv.core.env_server.http_server.create_app`, FastAPI under uvicorn), so any
OpenEnv client talks to it: HTTP `POST /reset`, `POST /step`, `GET /state`, `GET /schema`, `GET /health`, and
WebSocket sessions on `/ws`. Each WebSocket session builds its own environment (`contract.make_env`, as a local
pool's worker does), at most `--max_sessions` at once (OpenEnv answers CAPACITY_REACHED beyond); a session ends,
and its environment closes (a browser with it), when its client closes or drops the connection, or after
`--session_timeout` seconds without a message (a client that vanished without closing). OpenEnv's HTTP calls are
stateless: each builds an environment, answers and closes it (a `/step` without a session first resets with seed 0).

- **reset** takes `seed` and `task` (one of the tasks the environment declares);
- **step** takes `{"text": "<r1_gui action text>"}`: the model's raw answer in any style `r1_gui.actions` parses
  (a mobile_use tool call, Aguvis code, GUI-R1 JSON), which the environment reads as it would in this process;
- **observation**: `screenshot` (a base64 PNG), `instruction`, `info` (every key of the contract, `r1_gui.envs.wire`),
  `terminated` and `truncated` (OpenEnv's `done` is either), and OpenEnv's `reward` and `done`;
- **state**: the session's `episode_id` and `step_count`, and what the environment declares (`env_id`, `tasks`,
  `task_presets`, `episode_count`, `has_expert`): what `--env_backend openenv` reads to plan its episodes.

The environment is checked against the contract (`check_env`) before the server starts, so a wrong id or keyword
is one `error:` line, not a server that fails on its first session. openenv-core comes with the `envs` extra
(`pip install -e '.[envs]'`; setup.sh installs it).
"""

from __future__ import annotations

import argparse
import logging
import socket
import sys
from typing import Any

from r1_gui.cli_errors import UserError, cli_main, command_parser, installed, user_errors
from r1_gui.envs import wire
from r1_gui.envs.contract import (
    check_env,
    declared_task_presets,
    declared_tasks,
    episode_count,
    make_env,
    parse_env_kwargs,
    reset_options,
)

logger = logging.getLogger(__name__)

DEFAULT_PORT = 8000
DEFAULT_SESSIONS = 8
DEFAULT_SESSION_TIMEOUT = 300.0  # seconds without a message after which a session is closed (its client is gone)
INSTALL_HINT = "pip install -e '.[envs]' (setup.sh installs it)"


def openenv_server():
    """openenv-core's server pieces (imported here: `import r1_gui` never imports OpenEnv); a missing install is a
    UserError saying how to add it."""
    try:
        from openenv.core.env_server import http_server, interfaces, types
    except ImportError as error:
        raise UserError(f"serving an environment needs openenv-core ({error}): {INSTALL_HINT}") from None
    return http_server, interfaces, types


def declared(env) -> dict:
    """What the environment declares beyond the contract, as JSON (the session state carries it)."""
    return {
        "tasks": list(declared_tasks(env)),
        "task_presets": {name: list(members) for name, members in declared_task_presets(env).items()},
        "episode_count": episode_count(env),
        "has_expert": getattr(env.unwrapped, "has_expert", None),
    }


def build_app(env_id: str, env_kwargs: dict | None = None, *, max_sessions: int = DEFAULT_SESSIONS,
              session_timeout: float | None = DEFAULT_SESSION_TIMEOUT):  # fmt: skip
    """The FastAPI app of openenv-core serving `env_id` (one environment per session)."""
    from pydantic import Field

    http_server, interfaces, types = openenv_server()
    env_kwargs = dict(env_kwargs or {})

    class GUIAction(types.Action):
        text: str = Field(description="The model's answer: an r1_gui action in any style r1_gui.actions parses")

    class GUIObservation(types.Observation):
        screenshot: str = Field(description="The screen as a base64 PNG")
        instruction: str = Field(description="What the agent is asked to do")
        info: dict[str, Any] = Field(default_factory=dict, description="r1_gui's info keys (r1_gui.envs.contract)")
        terminated: bool = Field(default=False, description="The episode ended (success, terminate, an end state)")
        truncated: bool = Field(default=False, description="The environment's step limit ran out")

    class GUIEnvironment(interfaces.Environment):
        """One r1_gui environment per OpenEnv session."""

        SUPPORTS_CONCURRENT_SESSIONS = True
        # BrowserGym drives one playwright per process, which a thread other than its first may not use
        REQUIRES_SINGLE_THREAD_EXECUTOR = env_id.startswith("browsergym/")

        def __init__(self):
            super().__init__()
            self.env = make_env(env_id, env_kwargs)
            self.episode_id: str | None = None
            self.steps, self.started = 0, False

        def reset(self, seed: int | None = None, episode_id: str | None = None, task: str | None = None, **kwargs):
            observation, info = self.env.reset(seed=seed, options=reset_options(task))
            self.episode_id, self.steps, self.started = episode_id, 0, True
            return self._answer(observation, 0.0, False, False, info)

        def step(self, action: GUIAction, timeout_s: float | None = None, **kwargs):
            if not self.started:  # a stateless HTTP /step: the environment was built for this call
                self.reset(seed=0)
            observation, reward, terminated, truncated, info = self.env.step(action.text)
            self.steps += 1
            return self._answer(observation, reward, terminated, truncated, info)

        @property
        def state(self):
            return types.State(episode_id=self.episode_id, step_count=self.steps, env_id=env_id, **declared(self.env))

        def get_metadata(self):
            return types.EnvironmentMetadata(
                name=env_id, description=f"r1_gui's {env_id} served by r1_gui.envs.serve", version="0.1.0"
            )

        def close(self):
            self.env.close()

        @staticmethod
        def _answer(observation, reward, terminated, truncated, info) -> GUIObservation:
            return GUIObservation(
                **wire.encode_observation(observation),
                info=wire.encode_info(info),
                terminated=bool(terminated),
                truncated=bool(truncated),
                reward=float(reward),
                done=bool(terminated or truncated),
            )

    config = types.ConcurrencyConfig(max_concurrent_envs=max_sessions, session_timeout=session_timeout)
    return http_server.create_app(
        GUIEnvironment, GUIAction, GUIObservation, env_name=env_id.replace("/", "_"), concurrency_config=config
    )


def check_port(host: str, port: int) -> None:
    """UserError when `host:port` cannot be listened on (taken, or not this machine's address)."""
    try:
        socket.create_server((host, port)).close()
    except OSError as error:
        raise UserError(f"--host {host} --port {port}: cannot listen there ({error}); pick another --port") from None


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    def env_kwargs(text: str) -> dict:
        try:
            return parse_env_kwargs(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error).removeprefix("--env_kwargs ")) from None

    parser = command_parser(__doc__, prog="r1-gui-env-serve")
    parser.add_argument("env_id", metavar="ENV_ID", help="any id r1_gui makes: r1_gui/Phone-v0, module:EnvId, ...")
    parser.add_argument("--env_kwargs", type=env_kwargs, default={}, help="gymnasium.make keywords as a JSON object")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    parser.add_argument(
        "--max_sessions", type=int, default=DEFAULT_SESSIONS, help="WebSocket sessions (environments) at once"
    )
    parser.add_argument(
        "--session_timeout",
        type=float,
        default=DEFAULT_SESSION_TIMEOUT,
        help="seconds without a message after which a session and its environment are closed (a vanished client)",
    )
    return parser.parse_args(argv)


@cli_main
def main(argv: list[str] | None = None) -> None:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if args.max_sessions < 1:
        raise UserError(f"--max_sessions must be at least 1, got {args.max_sessions}")
    if not args.session_timeout > 0:
        raise UserError(f"--session_timeout must be a positive number of seconds, got {args.session_timeout}")
    check_port(args.host, args.port)
    with user_errors():  # a wrong id or keyword, or an environment off the contract: one line, before serving
        env = make_env(args.env_id, args.env_kwargs)
        try:
            check_env(env)
        finally:
            env.close()
    app = build_app(args.env_id, args.env_kwargs, max_sessions=args.max_sessions, session_timeout=args.session_timeout)
    import uvicorn

    print(
        f"serving {args.env_id} at http://{args.host}:{args.port} (OpenEnv: /reset /step /state /schema /health, "
        f"sessions on /ws, at most {args.max_sessions}); Ctrl-C stops it",
        flush=True,
    )
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


cli = installed(main)  # the installed command (pyproject.toml's [project.scripts]): main, returning nothing

if __name__ == "__main__":
    main()
