"""Asynchronous rollouts (issue 68): the buffer of finished groups and its staleness bound, the off-policy
correction on hand-computed tables."""

import math
import os
import re
import signal
import threading
import time

import pytest
import torch
from test_envs_web import needs_browser

from r1_gui.rollout.buffer import BufferClosed, Group, GroupBuffer
from r1_gui.rollout.correction import behaviour_weights


def group(started: int, versions: list[list[int]]) -> Group:
    return Group(task="t", seed=started, episodes=[None] * len(versions), versions=versions, started=started)


# -- the buffer ------------------------------------------------------------------------------------------------

LAG_CASES = [
    # (per-episode turn versions, step, lag): a group is as old as its oldest turn
    ([[3, 3], [3]], 3, 0),
    ([[2, 3], [3, 3, 3]], 3, 1),  # a worker loaded version 3 after the first turn of the first episode
    ([[0], [5]], 6, 6),
    ([[], []], 4, 4),  # no turn at all (both episodes' environments failed at once): version 0
]


@pytest.mark.parametrize(("versions", "step", "lag"), LAG_CASES)
def test_a_groups_lag_is_that_of_its_oldest_turn(versions, step, lag):
    assert group(0, versions).lag(step) == lag


def test_take_gives_the_oldest_fresh_groups_and_drops_and_counts_the_stale_ones():
    buffer = GroupBuffer(capacity=8)
    for started, version in [(0, 1), (1, 3), (2, 2), (3, 3), (4, 1)]:
        assert buffer.add(group(started, [[version, version]]))
    # at step 3 with bound 1: versions 1 (started 0 and 4) lag 2 -> dropped; the oldest fresh: version 2, then 3s
    taken = buffer.take(2, step=3, max_staleness=1)
    assert [g.started for g in taken] == [2, 1] and buffer.dropped_stale == 2 and buffer.groups == 1
    # at step 4 with bound 0 the last (version 3) lags 1: dropped too; nothing fresh is there, so take waits
    with pytest.raises(TimeoutError, match="0 of the 1 groups"):
        buffer.take(1, step=4, max_staleness=0, timeout=0.1)
    assert buffer.dropped_stale == 3 and buffer.groups == 0


def test_staleness_0_takes_only_groups_of_the_current_weights():
    buffer = GroupBuffer(capacity=4)
    buffer.add(group(0, [[4], [4]]))
    buffer.add(group(1, [[4], [5]]))  # one turn of version 4: lag 1 at step 5
    buffer.add(group(2, [[5], [5]]))
    assert [g.started for g in buffer.take(1, step=5, max_staleness=0)] == [2]
    assert buffer.dropped_stale == 2


def test_take_waits_for_a_worker_and_counts_the_wait():
    buffer = GroupBuffer(capacity=2)
    threading.Timer(0.3, lambda: buffer.add(group(0, [[0]]))).start()
    assert [g.started for g in buffer.take(1, step=0, max_staleness=0, timeout=10)] == [0]
    assert buffer.waited_s >= 0.25


def test_a_full_buffer_holds_the_worker_until_the_trainer_takes():
    buffer = GroupBuffer(capacity=1)
    assert buffer.add(group(0, [[0]]))
    assert not buffer.add(group(1, [[0]]), timeout=0.1)  # full: the worker waits
    threading.Timer(0.2, lambda: buffer.take(1, step=0, max_staleness=0)).start()
    assert buffer.add(group(1, [[0]]), timeout=10)


def test_a_closed_buffer_ends_the_wait_and_a_failing_check_stops_it():
    buffer = GroupBuffer(capacity=2)
    threading.Timer(0.2, lambda: buffer.close("every worker died")).start()
    with pytest.raises(BufferClosed, match="every worker died"):
        buffer.take(1, step=0, max_staleness=0, timeout=10)

    def check():
        raise RuntimeError("rollout worker 1 died 3 times")

    with pytest.raises(RuntimeError, match="died 3 times"):
        GroupBuffer(capacity=2).take(1, step=0, max_staleness=0, timeout=10, check=check)


def test_a_buffer_of_no_groups_is_refused():
    with pytest.raises(ValueError, match="at least 1 group"):
        GroupBuffer(capacity=0)


# -- the correction ----------------------------------------------------------------------------------------------

WEIGHT_CASES = [
    # (prox prob, behaviour prob, lag, answer token, cap, weight): w = min(prox / behaviour, cap) on lagging answers
    (0.5, 0.25, 1, 1, 3.0, 2.0),
    (0.25, 0.5, 1, 1, 3.0, 0.5),  # a token the old policy liked more: weighed down, never cut below
    (0.9, 0.1, 2, 1, 3.0, 3.0),  # 9.0 truncated at the cap
    (0.9, 0.1, 2, 1, 10.0, 9.0),
    (0.9, 0.1, 0, 1, 3.0, 1.0),  # lag 0: sampled from the proximal policy itself, exactly 1
    (0.9, 0.1, 3, 0, 3.0, 1.0),  # a tool-response token (masked): 1
    (0.3, 0.3, 5, 1, 3.0, 1.0),  # the same probability however old
]


@pytest.mark.parametrize(("prox", "behaviour", "lag", "answer", "cap", "weight"), WEIGHT_CASES)
def test_behaviour_weights(prox, behaviour, lag, answer, cap, weight):
    weights, _ = behaviour_weights(
        torch.tensor([[math.log(prox)]]),
        torch.tensor([[math.log(behaviour)]]),
        torch.tensor([[lag]]),
        torch.tensor([[answer]]),
        cap,
    )
    assert weights.item() == pytest.approx(weight, rel=1e-6)


def test_the_logged_ratio_and_clipped_share_are_over_the_lagging_answer_tokens():
    # row 0: two lagging answers (ratios 2 and 9, one clipped) and a tool token; row 1: a lag-0 answer
    prox = torch.log(torch.tensor([[0.5, 0.9, 0.2], [0.4, 0.4, 0.4]]))
    behaviour = torch.log(torch.tensor([[0.25, 0.1, 0.9], [0.1, 0.4, 0.4]]))
    lags = torch.tensor([[1, 1, 1], [0, 0, 0]])
    mask = torch.tensor([[1, 1, 0], [1, 0, 0]])
    weights, stats = behaviour_weights(prox, behaviour, lags, mask, cap=3.0)
    assert weights.flatten().tolist() == pytest.approx([2.0, 3.0, 1.0, 1.0, 1.0, 1.0], rel=1e-6)
    assert stats.ratio_mean == pytest.approx((2.0 + 9.0) / 2, rel=1e-6)
    assert stats.clipped_frac == 0.5 and stats.lagging_frac == pytest.approx(2 / 3)
    # nothing lags: the ratio is 1 by definition and nothing is clipped
    _, fresh = behaviour_weights(prox, behaviour, torch.zeros_like(lags), mask)
    assert (fresh.ratio_mean, fresh.clipped_frac, fresh.lagging_frac) == (1.0, 0.0, 0.0)


@pytest.mark.parametrize(
    "cap",
    [0.5, float("inf"), float("nan")],
)
def test_a_cap_below_1_or_not_finite_is_refused(cap):
    one = torch.zeros(1, 1)
    with pytest.raises(ValueError, match="--importance_ratio_cap must be a number >= 1"):
        behaviour_weights(one, one, one.long(), one.long(), cap)


def test_tensors_of_different_shapes_are_refused():
    with pytest.raises(ValueError, match="shapes differ"):
        behaviour_weights(torch.zeros(1, 2), torch.zeros(1, 3), torch.zeros(1, 2), torch.zeros(1, 2))


def test_the_weight_on_the_advantage_equals_the_weight_on_the_ppo_term():
    """-min(r w A, clip(r) w A) == w * -min(r A, clip(r) A) for w >= 0: the trainer scales the advantages."""
    ratios = torch.tensor([0.5, 0.9, 1.0, 1.1, 1.6])
    for advantage in (-1.3, 0.0, 0.7):
        for weight in (0.0, 0.4, 1.0, 3.0):
            clipped = ratios.clamp(1 - 0.2, 1 + 0.28)
            on_advantage = -torch.min(ratios * weight * advantage, clipped * weight * advantage)
            on_term = weight * -torch.min(ratios * advantage, clipped * advantage)
            assert torch.allclose(on_advantage, on_term)


# -- the settings ---------------------------------------------------------------------------------------------------

SETTING_CASES = [
    # (script settings, training settings, the error's words; None: accepted)
    ({}, {}, None),
    ({"rollout_mode": "sync", "max_staleness": -5}, {}, None),  # sync: the async settings play no part
    ({"rollout_mode": "later"}, {}, "--rollout_mode later: choose sync or async"),
    ({"rollout_workers": 0}, {}, "--rollout_workers must be at least 1"),
    ({"max_staleness": -1}, {}, "--max_staleness must be 0"),
    ({"rollout_groups_ahead": -1}, {}, "--rollout_groups_ahead must be 0 or more"),
    ({"weight_sync_steps": 0}, {}, "--weight_sync_steps must be at least 1"),
    ({"weight_sync_steps": 3, "max_staleness": 1}, {}, "raise --max_staleness to 2"),
    ({"weight_sync_steps": 3, "max_staleness": 2}, {}, None),
    ({"importance_ratio_cap": 0.5}, {}, "--importance_ratio_cap must be a number >= 1"),
    ({}, {"use_vllm": True}, "--use_vllm is not supported with it yet"),
    ({}, {"num_iterations": 2}, "--num_iterations 2"),
    ({}, {"steps_per_generation": 4}, "--steps_per_generation 4"),
]


@pytest.mark.parametrize(("script", "training", "error"), SETTING_CASES)
def test_async_settings_are_checked_naming_the_flag(script, training, error):
    from types import SimpleNamespace

    from r1_gui.multi_turn.train import check_rollout_mode

    script_args = SimpleNamespace(
        **{"rollout_mode": "async", "rollout_workers": 2, "max_staleness": 1, "rollout_groups_ahead": 1,
           "weight_sync_steps": 1, "importance_ratio_cap": 3.0, "env_backend": "local", "ray_address": "auto",
           "env_resources": None, "env_spares": 0, "env_url": None, **script}
    )  # fmt: skip
    training_args = SimpleNamespace(
        **{"use_vllm": False, "num_iterations": 1, "steps_per_generation": None, "gradient_accumulation_steps": 1,
           **training}
    )  # fmt: skip
    if error is None:
        check_rollout_mode(script_args, training_args)
    else:
        with pytest.raises(ValueError, match=re.escape(error)):
            check_rollout_mode(script_args, training_args)


def test_async_rollouts_on_a_dataset_run_are_one_error_line(tiny_qwen2_vl, synthetic_dataset, tmp_path):
    import subprocess
    import sys

    from test_multi_turn import REPO

    done = subprocess.run(
        [sys.executable, str(REPO / "src/r1_gui/grpo_gui.py"), "--config", str(REPO / "local_scripts/tiny_cpu_grpo.yaml"),
         "--model_name_or_path", str(tiny_qwen2_vl), "--dataset_name", str(synthetic_dataset),
         "--rollout_mode", "async", "--output_dir", str(tmp_path / "out")],
        capture_output=True, text=True, cwd=tmp_path, timeout=300,
    )  # fmt: skip
    errors = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and errors[-1:] == [
        "error: --rollout_mode async: it needs --env (a dataset run plays no episodes); drop it or give --env ENV_ID"
    ], done.stderr[-2000:]


# -- the trainer ---------------------------------------------------------------------------------------------------

RUN = (
    *("--max_turns", "2", "--max_turn_tokens", "16", "--max_completion_length", "80"),
    *("--per_device_train_batch_size", "4", "--num_generations", "2"),
    *("--reward_funcs", "turn_digits", "task_success"),
)


def async_args(model, output_dir, recipe="tiny_cpu_phone_grpo.yaml", *extra):
    from test_multi_turn import REPO

    from r1_gui.training.grpo import parse_grpo_arguments

    argv = [
        *("--config", str(REPO / "local_scripts" / recipe), "--model_name_or_path", str(model)),
        *("--output_dir", str(output_dir), *RUN, *extra),
    ]  # fmt: skip
    return parse_grpo_arguments(argv)


@pytest.fixture
def digits_reward(monkeypatch):
    """turn_digits (the share of digits in an episode's answers): a reward a random model moves, so losses are not 0."""
    from test_multi_turn import turn_digits

    from r1_gui import rewards

    monkeypatch.setitem(rewards.REWARD_FUNCS, "turn_digits", turn_digits)


def logged(output_dir) -> list[dict]:
    import json

    return json.loads((output_dir / "trainer_state.json").read_text())["log_history"]


@pytest.mark.slow
def test_the_same_episodes_through_the_buffer_at_staleness_0_train_exactly_as_sync(
    tiny_qwen2_vl, tmp_path, monkeypatch, digits_reward
):
    """One step of sync GRPO records its episodes, its loss and grad norm; the same episodes, as groups of weights
    version 0 in AsyncRollouts' buffer (no worker plays), give the async path's step the same loss and grad norm to
    the bit: the rows, pixel values and image grids the trainer builds are the same, and lag-0 turns are not
    corrected. The torch generator is set to the sync run's state after its rollout, so trl shuffles the batch alike."""
    from r1_gui.multi_turn.train import train_multi_turn
    from r1_gui.multi_turn.trainer import MultiTurnGRPOTrainer
    from r1_gui.rollout.engine import AsyncRollouts, AsyncSettings
    from r1_gui.rollout.weights import SharedWeights, trainable_parameters

    played, state = [], {}
    original = MultiTurnGRPOTrainer._rollout

    def recording(self, prompts):
        output = original(self, prompts)
        played.extend(self.book.episodes)
        state["rng"] = torch.get_rng_state()
        state["pixels"] = [row.turns[0].context.pixel_values.clone() for row in self.book.recorded]
        return output

    with monkeypatch.context() as patch:
        patch.setattr(MultiTurnGRPOTrainer, "_rollout", recording)
        train_multi_turn(*async_args(tiny_qwen2_vl, tmp_path / "sync", "tiny_cpu_phone_grpo.yaml", "--max_steps", "1"))
    sync = logged(tmp_path / "sync")[0]
    assert sync["grad_norm"] > 0, "a step without signal would show nothing"

    class Replayed(AsyncRollouts):
        """The recorded episodes as the buffer's groups, version 0, in the order they played."""

        def start(self, model, step):
            self.shared = SharedWeights.create(trainable_parameters(model))
            self.publish(model, step)
            for index in range(0, len(played), 2):
                episodes = played[index : index + 2]
                versions = [[0] * len(episode.turns) for episode in episodes]
                self.buffer.add(Group(episodes[0].task, episodes[0].seed, episodes, versions, started=index // 2))

    taken = {}
    original_async = MultiTurnGRPOTrainer._rollout_async

    def replaying(self, prompts):
        output = original_async(self, prompts)
        torch.set_rng_state(state["rng"])
        taken["pixels"] = [row.turns[0].context.pixel_values for row in self.book.recorded]
        taken["lags"] = [row.turn_lags for row in self.book.recorded]
        return output

    monkeypatch.setattr(MultiTurnGRPOTrainer, "_rollout_async", replaying)
    script_args, training_args, model_args = async_args(
        tiny_qwen2_vl, tmp_path / "async", "tiny_cpu_phone_grpo.yaml", "--max_steps", "1",
        "--rollout_mode", "async", "--max_staleness", "0", "--rollout_groups_ahead", "0",
    )  # fmt: skip
    rollouts = Replayed(None, AsyncSettings(max_staleness=0, groups_ahead=0), [("go_home", 0)], groups_per_step=2)
    train_multi_turn(script_args, training_args, model_args, rollouts=rollouts)
    entry = logged(tmp_path / "async")[0]
    assert (entry["loss"], entry["grad_norm"]) == (sync["loss"], sync["grad_norm"])
    assert all(torch.equal(a, b) for a, b in zip(taken["pixels"], state["pixels"], strict=True))
    assert all(lag == 0 for lags in taken["lags"] for lag in lags)
    assert entry["async/staleness_max"] == 0 and entry["async/lagging_token_frac"] == 0
    assert entry["async/importance_ratio_mean"] == 1.0 and entry["async/dropped_stale"] == 0


def rows_recorded(monkeypatch) -> list:
    """Every row the async path handed the loss, per step."""
    from r1_gui.multi_turn.trainer import MultiTurnGRPOTrainer

    steps, original = [], MultiTurnGRPOTrainer._rollout_async

    def recording(self, prompts):
        output = original(self, prompts)
        steps.append(list(self.book.recorded))
        return output

    monkeypatch.setattr(MultiTurnGRPOTrainer, "_rollout_async", recording)
    return steps


@pytest.mark.slow
@pytest.mark.parametrize(
    "recipe", ["tiny_cpu_phone_grpo.yaml", pytest.param("tiny_cpu_web_grpo.yaml", marks=needs_browser)]
)
def test_two_async_steps(recipe, tiny_qwen2_vl, tmp_path, monkeypatch, digits_reward):
    """Two multi-turn GRPO steps with rollout workers (Phone-v0, and Web-v0 in a real browser): the weights move,
    every group is within the staleness bound, each turn kept its screenshots' pixel values and the behaviour
    log-probabilities of its tokens, and the async/ keys are logged every step; no worker or environment is left."""
    from test_gigpo import weights_moved

    from r1_gui.envs.runtime.processes import descendants
    from r1_gui.multi_turn.train import train_multi_turn

    steps = rows_recorded(monkeypatch)
    train_multi_turn(*async_args(tiny_qwen2_vl, tmp_path, recipe, "--rollout_mode", "async", "--rollout_workers", "2"))
    assert weights_moved(tiny_qwen2_vl, tmp_path) > 0
    assert len(steps) == 2
    for rows in steps:
        assert len(rows) == 4  # two groups of two episodes
        for row in rows:
            assert all(0 <= lag <= 1 for lag in row.turn_lags)
            for turn in row.turns:
                assert turn.context.pixel_values is not None and turn.context.image_grid_thw is not None
                assert turn.logprobs is not None and len(turn.logprobs) == len(turn.completion_ids)
                assert all(value <= 0 for value in turn.logprobs)
    entries = [entry for entry in logged(tmp_path) if "loss" in entry]
    keys = {"staleness_mean", "staleness_max", "dropped_stale", "buffer_groups", "trainer_wait_s", "weight_sync_s",
            "importance_ratio_mean", "importance_ratio_clipped_frac", "worker_restarts"}  # fmt: skip
    assert all({f"async/{key}" for key in keys} <= set(entry) for entry in entries)
    assert all(entry["async/staleness_max"] <= 1 for entry in entries)
    assert not [pid for pid in descendants(os.getpid()) if "rollout" in process_command(pid)]


def process_command(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


@pytest.mark.slow
def test_a_worker_killed_mid_episode_is_restarted_and_its_groups_counted(
    tiny_qwen2_vl, tmp_path, monkeypatch, digits_reward
):
    """Before the second step's groups are taken, one rollout worker is killed (SIGKILL) while it plays: it is
    restarted, the groups it played are counted as failed episodes, and the run ends its steps."""
    from r1_gui.multi_turn.train import train_multi_turn
    from r1_gui.multi_turn.trainer import MultiTurnGRPOTrainer

    killed, original = [], MultiTurnGRPOTrainer._rollout_async

    def killing(self, prompts):
        if self.state.global_step == 1 and not killed:
            workers = self.rollouts.workers
            assert wait_until(lambda: any(worker.playing for worker in workers), 60)
            victim = next(worker for worker in workers if worker.playing)
            killed.append((victim.pid, len(victim.playing)))
            os.kill(victim.pid, signal.SIGKILL)
        return original(self, prompts)

    monkeypatch.setattr(MultiTurnGRPOTrainer, "_rollout_async", killing)
    slow = '{"step_latency": {"median": 0.3, "p95": 0.6}}'  # episodes last seconds: the kill lands mid-episode
    train_multi_turn(
        *async_args(
            tiny_qwen2_vl, tmp_path, "tiny_cpu_phone_grpo.yaml", "--rollout_mode", "async", "--max_steps", "3",
            "--env_kwargs", slow,
        )
    )  # fmt: skip
    ((pid, playing),) = killed
    assert not os.path.exists(f"/proc/{pid}") or process_command(pid) == ""
    entries = [entry for entry in logged(tmp_path) if "loss" in entry]
    assert len(entries) == 3
    assert entries[-1]["async/worker_restarts"] == 1
    assert entries[-1]["async/failed_episodes"] == 2 * playing


def wait_until(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


DRIVER = """
import sys, time
sys.path[:0] = {paths!r}
from transformers import AutoModelForImageTextToText, GenerationConfig
from r1_gui.processing import load_processor
from r1_gui.envs.runtime.processes import descendants
from r1_gui.rollout.engine import AsyncRollouts, AsyncSettings
from r1_gui.rollout.worker import WorkerSpec
model = AutoModelForImageTextToText.from_pretrained({model!r})
processor = load_processor({model!r}, 3136, 12544)
spec = WorkerSpec({model!r}, "auto", None, "model", None, processor,
                  GenerationConfig(do_sample=True, max_new_tokens=8, temperature=1.0), [processor.tokenizer.eos_token_id],
                  processor.tokenizer.pad_token_id, {env!r}, {kwargs!r}, 60.0,
                  dict(max_turns=3, history_images=2, system=None, chat_template_kwargs=None), 2)
rollouts = AsyncRollouts(spec, AsyncSettings(workers=1), [(None, seed) for seed in range(8)], groups_per_step=2)
rollouts.start(model, 0)
while not all(worker.playing and worker.ready for worker in rollouts.workers):
    time.sleep(0.1)
time.sleep(1.0)  # the environments are up
print(" ".join(str(pid) for pid in descendants(__import__("os").getpid())), flush=True)
time.sleep(600)
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("env", "how"),
    [
        ("r1_gui/Phone-v0", "sigkill"),
        ("r1_gui/Phone-v0", "sigint"),
        ("r1_gui/Phone-v0", "sigterm"),
        pytest.param("r1_gui/Web-v0", "sigkill", marks=needs_browser),
    ],
)
def test_no_worker_environment_or_browser_outlives_the_driver(tiny_qwen2_vl, tmp_path, env, how):
    """The driver (the trainer's process) ends by SIGKILL, Ctrl-C or SIGTERM while its workers play: every rollout
    worker, environment worker and browser below it ends too."""
    import subprocess
    import sys

    kwargs = {"step_latency": {"median": 0.5, "p95": 1.0}} if env == "r1_gui/Phone-v0" else {"max_steps": 3}
    script = tmp_path / "driver.py"
    script.write_text(DRIVER.format(paths=sys.path, model=str(tiny_qwen2_vl), env=env, kwargs=kwargs))
    driver = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    pids = [int(pid) for pid in driver.stdout.readline().split()]
    workers = [pid for pid in pids if "rollout.worker" in process_command(pid)]
    assert len(workers) == 1 and len(pids) > 2, [process_command(pid) for pid in pids]
    driver.send_signal({"sigkill": signal.SIGKILL, "sigint": signal.SIGINT, "sigterm": signal.SIGTERM}[how])
    driver.wait(timeout=60)
    assert wait_until(lambda: not [pid for pid in pids if process_command(pid)], 30), (
        f"left after {how}: {[process_command(pid) for pid in pids if process_command(pid)]}"
    )


@pytest.mark.slow
def test_a_run_resumed_from_a_checkpoint_refills_its_buffer_and_goes_on(
    tiny_qwen2_vl, tmp_path, monkeypatch, digits_reward
):
    """Two async steps save checkpoint-2; the resumed run publishes that checkpoint's weights as version 2 (the
    workers' groups lag at most the bound behind step 2, none dropped for a version 0 that no longer exists), takes
    a fresh buffer's groups and ends at step 3."""
    from transformers import AutoModelForImageTextToText

    from r1_gui.multi_turn.train import train_multi_turn
    from r1_gui.multi_turn.trainer import MultiTurnGRPOTrainer

    published, original = [], MultiTurnGRPOTrainer.attach_rollouts

    def recording(self, rollouts):
        start = rollouts.start

        def recorded_start(model, step):
            published.append((step, {name: p.detach().clone() for name, p in model.named_parameters()}))
            return start(model, step)

        rollouts.start = recorded_start
        return original(self, rollouts)

    monkeypatch.setattr(MultiTurnGRPOTrainer, "attach_rollouts", recording)
    common = ("--rollout_mode", "async", "--save_strategy", "steps", "--save_steps", "2")
    train_multi_turn(*async_args(tiny_qwen2_vl, tmp_path, "tiny_cpu_phone_grpo.yaml", *common, "--max_steps", "2"))
    train_multi_turn(
        *async_args(tiny_qwen2_vl, tmp_path, "tiny_cpu_phone_grpo.yaml", *common, "--max_steps", "3",
                    "--resume_from_checkpoint", "last")
    )  # fmt: skip
    (first, initial), (resumed, weights) = published
    assert (first, resumed) == (0, 2)
    assert any(not torch.equal(initial[name], weights[name]) for name in weights), "two steps moved no weight"
    saved = dict(AutoModelForImageTextToText.from_pretrained(tmp_path / "checkpoint-2").named_parameters())
    assert set(saved) == set(weights) and all(torch.equal(saved[name], weights[name]) for name in saved)
    entries = [entry for entry in logged(tmp_path) if "loss" in entry]
    assert [entry["step"] for entry in entries][-1] == 3
    assert entries[-1]["async/staleness_max"] <= 1 and entries[-1]["async/dropped_stale"] == 0


@pytest.mark.slow
def test_a_lora_run_sends_its_adapter_only(tiny_qwen2_vl, tmp_path, monkeypatch, digits_reward):
    """--use_peft: the workers wrap their copy as the trainer does and receive the adapter's parameters alone."""
    from r1_gui.multi_turn.train import train_multi_turn
    from r1_gui.multi_turn.trainer import MultiTurnGRPOTrainer

    sizes, original = {}, MultiTurnGRPOTrainer.attach_rollouts

    def recording(self, rollouts):
        model = self.accelerator.unwrap_model(self.model)
        sizes["trainable"] = sum(p.numel() * p.element_size() for p in model.parameters() if p.requires_grad) / 1e6
        sizes["all"] = sum(p.numel() * p.element_size() for p in model.parameters()) / 1e6
        return original(self, rollouts)

    monkeypatch.setattr(MultiTurnGRPOTrainer, "attach_rollouts", recording)
    train_multi_turn(
        *async_args(tiny_qwen2_vl, tmp_path, "tiny_cpu_phone_grpo.yaml", "--rollout_mode", "async", "--use_peft",
                    "--lora_r", "4", "--lora_alpha", "8")
    )  # fmt: skip
    entries = [entry for entry in logged(tmp_path) if "loss" in entry]
    assert len(entries) == 2
    assert entries[0]["async/weight_sync_mb"] == pytest.approx(sizes["trainable"], rel=0.01)
    assert sizes["trainable"] < sizes["all"] / 4
