"""`OpenEnvPool`: the pool's slots as sessions on OpenEnv servers (`--env_backend openenv --env_url URL[,URL...]`),
so a run trains and evaluates on any OpenEnv GUI environment: r1_gui's own served ones (`r1-gui-env-serve`) or
servers written by others. The same interface and promises as `EnvPool` (`SlotPool`).

    pool = OpenEnvPool("r1_gui/Phone-v0", urls=["http://127.0.0.1:8000"], step_timeout=60)
    pool.describe(); pool.reset([0, 1], [7, 8], [None, None]); pool.step([0, 1], [text, text]); pool.close()

Slot i is a WebSocket session (openenv-core's own `GenericEnvClient`) on server `urls[i % len(urls)]`, opened at its
first call; all the pool's sessions run in one asyncio loop on a thread of their own, and a call goes to every slot at
once and waits for all answers. A slot whose server answered an error, dropped the connection (a server that died),
or did not answer within the step timeout (`--env_step_timeout`; a session's first call gets START_TIMEOUT more) is
closed, counted in `failures` and `failure_log`, and reopened as a new session on its next use; a reset that fails
is retried `reset_retries` times, then `EnvStartError`. `close` (also at exit and on Ctrl-C, which ends the run)
closes every session, so the servers free their environments at once.

What a server sends becomes the contract's observation and info:

- `screenshot`: a base64 PNG or JPEG, or a (height, width, 3) list (`r1_gui.envs.wire`); a server whose observations
  carry none is refused at `describe`, in one line naming the fields they have;
- `instruction` (or `goal`, or `prompt`);
- `info`: r1_gui's served environments send the contract's keys (the expert's action included); for any other
  server they are made here: `task` (the reset's task or the `--env` id), `success` (the episode ended with a
  positive reward), `action` and `parsed` (the text read as r1_gui's action), `error` (the observation's `error` or
  `last_action_error`, else why the text did not parse), `screen_size`, `step`, `max_steps` (the observation's, else
  MAX_STEPS_UNKNOWN);
- the action: the model's text, sent in the one string field of the server's action schema (`GET /schema`: `text`
  for r1_gui's servers; `command`, `message`, ... for others); a schema without a string field is refused.

The tasks and expert a server's environments declare come from `GET /state` (r1_gui's servers put them there);
`--env` names what the servers serve (for an r1_gui server it must be the id it serves), and `--env_kwargs` belong to
the server (`r1-gui-env-serve ID --env_kwargs ...`), not here.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import urllib.request
from collections.abc import Sequence
from typing import Any

from r1_gui.actions import Action, format_action
from r1_gui.envs import wire
from r1_gui.envs.contract import check_info, check_observation, parse_step_input, step_info
from r1_gui.envs.runtime.pool import CLOSE_GRACE, START_TIMEOUT, Outcome, SlotPool

logger = logging.getLogger(__name__)

CONNECT_TIMEOUT = 10.0  # seconds to open a session (a WebSocket) on a server
HTTP_TIMEOUT = 30.0  # seconds for GET /schema and /state (each builds an environment on the server)
MAX_STEPS_UNKNOWN = 100  # info["max_steps"] of a server that does not say
INSTRUCTION_FIELDS = ("instruction", "goal", "prompt")
ERROR_FIELDS = ("error", "last_action_error")
SKIPPED_ACTION_FIELDS = ("metadata",)  # OpenEnv's own field of every action


class ServerError(ValueError):
    """A server is not there, or answers what the contract cannot use; the message says what to change."""


def get_json(url: str, path: str) -> dict:
    with urllib.request.urlopen(url.replace("ws", "http", 1) + path, timeout=HTTP_TIMEOUT) as answer:
        return json.loads(answer.read())


def text_field(schema: dict, url: str) -> str:
    """The action field the model's text goes in: the one string property of the action schema (`text` first)."""
    properties = {k: v for k, v in schema.get("properties", {}).items() if k not in SKIPPED_ACTION_FIELDS}
    strings = [name for name, spec in properties.items() if spec.get("type") == "string"]
    if "text" in strings:
        return "text"
    if len(strings) == 1:
        return strings[0]
    raise ServerError(
        f"--env_url {url}: its action schema has {len(strings)} string fields ({', '.join(properties) or 'none'}); "
        "r1_gui sends the model's text in an action's one string field (r1-gui-env-serve's: text)"
    )


class _Session:
    """One slot's session: its client, the server's action field and the episode's step count."""

    def __init__(self, url: str, field: str):
        from openenv.core.generic_client import GenericEnvClient

        self.url, self.field = url, field
        self.client = GenericEnvClient(base_url=url, connect_timeout_s=CONNECT_TIMEOUT, message_timeout_s=1e9)
        self.opened = False
        self.task: str | None = None
        self.steps, self.screen_size = 0, (0, 0)


class OpenEnvPool(SlotPool):
    """Sessions on OpenEnv servers as the pool's slots; see the module docstring."""

    def __init__(self, env_id: str, env_kwargs: dict | None = None, *, urls: Sequence[str], **settings):
        if env_kwargs:
            raise ValueError(
                f"--env_kwargs {json.dumps(env_kwargs)} make an environment in this process; with --env_backend "
                "openenv the server makes it: give them to the server (r1-gui-env-serve ID --env_kwargs ...)"
            )
        super().__init__(env_id, env_kwargs, **settings)
        self.urls = tuple(str(url).rstrip("/") for url in urls)
        if not self.urls:
            raise ValueError("--env_backend openenv needs --env_url http://HOST:PORT of one or more OpenEnv servers")
        self.max_starting = self.max_starting or len(self.urls) * 64
        self._fields: dict[str, str] = {}
        self._sessions: dict[int, _Session] = {}
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="openenv-pool", daemon=True)
        self._thread.start()

    # -- the backend --------------------------------------------------------------------------------------------

    def _call(
        self, slots: Sequence[int], command: str, payloads: Sequence[Any], allowed: float, count: bool
    ) -> list[Outcome]:
        for slot in slots:  # the servers' action fields, learned once (a GET each, outside the loop)
            self._field(self.urls[slot % len(self.urls)])
        future = asyncio.run_coroutine_threadsafe(self._all(slots, command, payloads, allowed), self._loop)
        answers = future.result()
        outcomes = []
        for slot, answer in zip(slots, answers, strict=True):
            if isinstance(answer, Outcome):
                outcomes.append(answer)
            else:
                outcomes.append(self._fail(slot, answer, count))
        return outcomes

    def close(self) -> None:
        """Close every session (each server frees its environment at once) and stop the pool's loop."""
        if self._closed:
            return
        self._closed = True
        sessions, self._sessions = list(self._sessions.values()), {}
        if sessions and self._loop.is_running():

            async def close_all():  # gathered on the pool's loop (a gather made on this thread never ran its closes)
                closing = asyncio.gather(*(s.client.close() for s in sessions), return_exceptions=True)
                await asyncio.wait_for(closing, CLOSE_GRACE)

            future = asyncio.run_coroutine_threadsafe(close_all(), self._loop)
            try:
                future.result(timeout=CLOSE_GRACE + 1)
            except Exception:  # a server that is gone has nothing to free
                pass
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=CLOSE_GRACE)
        if self.failures:
            logger.info("%s on OpenEnv servers: %d failed slots: %s", self.env_id, self.failures, self.failure_log)
        self._forget()

    # -- the machinery ----------------------------------------------------------------------------------------

    def _field(self, url: str) -> str:
        if url not in self._fields:
            try:
                schema = get_json(url, "/schema")
            except OSError as error:
                raise ServerError(f"--env_url {url}: no OpenEnv server answers GET /schema there ({error})") from None
            self._fields[url] = text_field(schema.get("action", {}), url)
        return self._fields[url]

    def _session(self, slot: int) -> _Session:
        if slot not in self._sessions:
            url = self.urls[slot % len(self.urls)]
            self._sessions[slot] = _Session(url, self._field(url))
        return self._sessions[slot]

    async def _all(self, slots, command, payloads, allowed) -> list:
        async def one(slot: int, payload: Any):
            session = self._session(slot)
            limit = allowed if session.opened else allowed + START_TIMEOUT
            try:
                return await asyncio.wait_for(self._one(session, command, payload), limit)
            except asyncio.TimeoutError:
                return f"{command} did not answer within {allowed:g} s"
            except ServerError as error:
                return f"ValueError: {error}"
            except Exception as error:  # the server answered an error, or the connection broke
                return f"{type(error).__name__}: {str(error).strip() or 'the connection to the server broke'}"

        return await asyncio.gather(*(one(slot, payload) for slot, payload in zip(slots, payloads, strict=True)))

    async def _one(self, session: _Session, command: str, payload: Any) -> Outcome:
        if not session.opened:
            await session.client.connect()
            session.opened = True
        if command == "describe":
            return Outcome(result=await self._describe(session, payload))
        if command == "reset":
            seed, task = payload
            result = await session.client.reset(seed=seed, **({"task": task} if task is not None else {}))
            session.task, session.steps = task, 0
            observation, _, _, _, info = self._contract(session, result, None)
            return Outcome(result=(observation, info))
        if command == "step":
            if isinstance(payload, Action):  # an expert's or a script's action, sent as text as a model's would be
                payload = format_action(payload, "aguvis")
            result = await session.client.step({session.field: str(payload)})
            session.steps += 1
            return Outcome(result=self._contract(session, result, payload))
        raise ValueError(f"unknown command {command!r}")

    async def _describe(self, session: _Session, seed: int) -> dict:
        state = await asyncio.to_thread(get_json, session.url, "/state")
        served = state.get("env_id")
        if served is not None and served != self.env_id:
            raise ServerError(f"--env {self.env_id}: the server at {session.url} serves {served}; pass --env {served}")
        tasks = tuple(state.get("tasks") or ())
        result = await session.client.reset(seed=seed, **({"task": tasks[0]} if tasks else {}))
        session.task, session.steps = (tasks[0] if tasks else None), 0
        observation, _, _, _, info = self._contract(session, result, None)
        problems = check_observation(observation, "reset") + check_info(info, "reset")
        if problems:
            raise ServerError(f"the server at {session.url} does not keep r1_gui's contract: {'; '.join(problems)}")
        declared_expert = state.get("has_expert")
        return {
            "tasks": tasks,
            "task_presets": {str(k): tuple(v) for k, v in (state.get("task_presets") or {}).items()},
            "episode_count": state.get("episode_count"),
            "has_expert": bool(declared_expert if declared_expert is not None else info.get("expert_action")),
            "screen_size": tuple(info["screen_size"]),
            "info": info,
        }

    def _contract(self, session: _Session, result, text: str | None) -> tuple:
        """(observation, reward, terminated, truncated, info) of the contract from an OpenEnv StepResult."""
        fields = result.observation if isinstance(result.observation, dict) else {}
        if "screenshot" not in fields:
            raise ServerError(
                f"the server at {session.url} sends observations without a screenshot (its fields: "
                f"{', '.join(sorted(fields)) or 'none'}); r1_gui needs `screenshot` (a base64 PNG or a (height, "
                "width, 3) list) and an instruction"
            )
        try:
            screenshot = wire.decode_screenshot(fields["screenshot"])
        except ValueError as error:
            raise ServerError(f"the server at {session.url}: {error}") from None
        instruction = next((str(fields[k]) for k in INSTRUCTION_FIELDS if isinstance(fields.get(k), str)), "")
        height, width = screenshot.shape[:2]
        session.screen_size = (width, height)
        reward, done = float(result.reward or 0.0), bool(result.done)
        if isinstance(fields.get("info"), dict):  # an r1_gui server: the contract's own info
            info = wire.decode_info(fields["info"])
            terminated = bool(fields.get("terminated", done and not fields.get("truncated")))
            truncated = bool(fields.get("truncated", False))
        else:
            info, terminated, truncated = self._made_info(session, fields, instruction, text, reward, done), done, False
        return {"screenshot": screenshot, "instruction": instruction}, reward, terminated, truncated, info

    def _made_info(self, session: _Session, fields: dict, instruction: str, text, reward: float, done: bool) -> dict:
        """The contract's info for a server that sends none (see the module docstring)."""
        action = error = None
        if text is not None:
            action, error = parse_step_input(text, None, session.screen_size)
        said = next((str(fields[k]) for k in ERROR_FIELDS if fields.get(k)), None)
        max_steps = fields.get("max_steps")
        return step_info(
            task=session.task or self.env_id,
            instruction=instruction,
            screen_size=session.screen_size,
            step=session.steps,
            max_steps=int(max_steps) if isinstance(max_steps, int) and max_steps > 0 else MAX_STEPS_UNKNOWN,
            success=done and reward > 0,
            error=said or error,
            action=action,
            parsed=None if text is None else action is not None,
        )

    def _fail(self, slot: int, why: str, count: bool) -> Outcome:
        session = self._sessions.pop(slot, None)
        self._last_task.pop(slot, None)
        if session is not None and session.opened:  # the server frees the session's environment
            future = asyncio.run_coroutine_threadsafe(session.client.close(), self._loop)
            try:
                future.result(timeout=CLOSE_GRACE)
            except Exception:
                pass
        if count:
            self.failures += 1
            self.failure_log.append(f"slot {slot}: {why}")
            logger.warning("%s slot %d (a session on %s) failed: %s", self.env_id, slot, self._url(slot), why)
        return Outcome(failure=why)

    def _url(self, slot: int) -> str:
        return self.urls[slot % len(self.urls)]
