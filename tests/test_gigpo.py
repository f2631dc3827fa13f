"""GiGPO (`--advantage_estimator gigpo`): step-level credit on hand-computed tables, the per-turn reward values, the
same advantages with the episodes split over two processes, GRPO's losses unchanged, and two training steps on the
phone and web environments."""

import json
import math

import pytest
from test_envs_web import needs_browser

from r1_gui import rewards
from r1_gui.multi_turn.advantages import (
    check_step_credit,
    discounted_returns,
    step_credit,
    token_advantages,
    turn_advantages,
    turn_rewards,
)

SQRT_1_8 = math.sqrt(0.125)  # the (Bessel) std of two returns 0.5 apart
EPS = 1e-4  # trl's, in the denominator of every normalisation

# -- discounted returns -------------------------------------------------------------------------------------------

RETURN_CASES = [
    # (per-turn rewards, gamma, returns)
    # the success at the last turn reaches back 0.9 per turn, the middle turn's own 0.5 adds in: 1, 0.5 + 0.9, 0.9 * 1.4
    ([0.0, 0.5, 1.0], 0.9, [1.26, 1.4, 1.0]),
    # gamma 1: the plain sum from each turn on
    ([0.0, 0.5, 1.0], 1.0, [1.5, 1.5, 1.0]),
    # one turn: its own reward
    ([0.25], 0.5, [0.25]),
    # no turns (an environment that failed at reset never reaches the trainer, but the function takes it)
    ([], 0.95, []),
]


@pytest.mark.parametrize(("rewards", "gamma", "expected"), RETURN_CASES)
def test_discounted_returns(rewards, gamma, expected):
    assert discounted_returns(rewards, gamma) == pytest.approx(expected)


# -- anchor groups and step advantages ----------------------------------------------------------------------------

STEP_CASES = [
    # (GRPO group of each episode, state keys per turn, per-turn rewards, gamma, scale_rewards, step advantages)
    # two episodes of one reset share their first screen s0: returns 0.5 (0 + 0.5 x 1) and 0 form a group; their
    # second screens differ, so those turns are alone and get 0
    ([0, 0], [["s0", "a"], ["s0", "b"]], [[0.0, 1.0], [0.0, 0.0]], 0.5, "none", [[0.25, 0.0], [-0.25, 0.0]]),
    # the same with the group's std: 0.25 / (std(0.5, 0) + eps)
    ([0, 0], [["s0", "a"], ["s0", "b"]], [[0.0, 1.0], [0.0, 0.0]], 0.5, "group",
     [[0.25 / (SQRT_1_8 + EPS), 0.0], [-0.25 / (SQRT_1_8 + EPS), 0.0]]),
    # the same screen in two resets' groups is two anchor groups of one: nothing to compare, 0 each
    ([0, 1], [["s0"], ["s0"]], [[1.0], [0.0]], 0.9, "group", [[0.0], [0.0]]),
    # equal returns in a group: 0 (not 0/0)
    ([0, 0], [["s0"], ["s0"]], [[1.0], [1.0]], 0.9, "group", [[0.0], [0.0]]),
    # three episodes meet again at s1 after different first moves: at s0 returns 0.5, 0.5, 0 (mean 1/3); at s1
    # returns 1, 1, 0 (mean 2/3); the third episode's last screen c is its own
    ([0, 0, 0], [["s0", "s1"], ["s0", "s1"], ["s0", "s1", "c"]], [[0.0, 1.0], [0.0, 1.0], [0.0, 0.0, 0.0]], 0.5,
     "none", [[1 / 6, 1 / 3], [1 / 6, 1 / 3], [-1 / 3, -2 / 3, 0.0]]),
    # a screen an episode comes back to is one anchor: turns 0 and 2 of one episode (returns 0.25, 1) against
    # turn 0 of the other (0): mean 5/12
    ([0, 0], [["s0", "x", "s0"], ["s0"]], [[0.0, 0.0, 1.0], [0.0]], 0.5, "none",
     [[0.25 - 5 / 12, 0.0, 1 - 5 / 12], [-5 / 12]]),
    # scale_rewards batch: the anchor group's mean, the std of every turn's return in the batch (0.5, 1, 0, 0)
    ([0, 0], [["s0", "a"], ["s0", "b"]], [[0.0, 1.0], [0.0, 0.0]], 0.5, "batch",
     [[0.25 / (math.sqrt(0.6875 / 3) + EPS), 0.0], [-0.25 / (math.sqrt(0.6875 / 3) + EPS), 0.0]]),
]  # fmt: skip


@pytest.mark.parametrize(("groups", "keys", "rewards", "gamma", "scale", "expected"), STEP_CASES)
def test_step_advantages(groups, keys, rewards, gamma, scale, expected):
    credit = step_credit(groups, keys, rewards, gamma, scale)
    assert len(credit.advantages) == len(expected)
    for got, want in zip(credit.advantages, expected, strict=True):
        assert got == pytest.approx(want, abs=1e-9)


def test_the_logged_statistics_of_the_anchor_groups():
    # the three-episode case above: anchor groups s0 (3 turns), s1 (3), c (1)
    credit = step_credit(
        [0, 0, 0], [["s0", "s1"], ["s0", "s1"], ["s0", "s1", "c"]], [[0, 1], [0, 1], [0, 0, 0]], 0.5, "none"
    )
    assert credit.anchor_groups == 3
    assert credit.mean_group_size == pytest.approx(7 / 3)
    assert credit.singleton_frac == pytest.approx(1 / 7)  # of the 7 turns, c is alone
    steps = [1 / 6, 1 / 3, 1 / 6, 1 / 3, -1 / 3, -2 / 3, 0.0]  # the spread: their (population) std
    mean = sum(steps) / 7
    assert credit.spread == pytest.approx(math.sqrt(sum((s - mean) ** 2 for s in steps) / 7))


# -- the two parts together, and on the tokens ----------------------------------------------------------------------

COMBINED_CASES = [
    # (episode advantage, step advantages, omega, each turn's advantage)
    (0.7, [0.5, -0.25, 0.0], 1.0, [1.2, 0.45, 0.7]),
    (0.7, [0.5, -0.25, 0.0], 0.5, [0.95, 0.575, 0.7]),
    # omega 0: GRPO's advantage on every turn
    (-1.1, [0.5, 2.0], 0.0, [-1.1, -1.1]),
]


@pytest.mark.parametrize(("episode", "steps", "omega", "expected"), COMBINED_CASES)
def test_the_episode_and_step_advantages_add_with_omega(episode, steps, omega, expected):
    assert turn_advantages(episode, steps, omega) == pytest.approx(expected)


TOKEN_CASES = [
    # (turn offsets in the row, answer lengths, turn advantages, row width, per-token advantages)
    # answers at 0-2 and 5-6; the tool response between them (3-4) and the padding after get 0
    ([0, 5], [3, 2], [0.4, -0.2], 9, [0.4, 0.4, 0.4, 0.0, 0.0, -0.2, -0.2, 0.0, 0.0]),
    # a row cut at the width: the second answer's last token falls off, as the loss pass cuts it
    ([0, 5], [3, 2], [0.4, -0.2], 6, [0.4, 0.4, 0.4, 0.0, 0.0, -0.2]),
]


@pytest.mark.parametrize(("offsets", "lengths", "advantages", "width", "expected"), TOKEN_CASES)
def test_every_answer_token_gets_its_turns_advantage(offsets, lengths, advantages, width, expected):
    assert token_advantages(offsets, lengths, advantages, width) == pytest.approx(expected)


TURN_REWARD_CASES = [
    # (the environment's step rewards, (weight, per-turn values) of each reward that declares them, whether one of
    # them carries the environment's reward (task_success does), per-turn rewards)
    # success at the last step: task_success's 1.0 there, weighted 2, in place of the environment's own 1.0 (issue
    # 70 item 8: until 9db8b9d both counted, 3.0); click distance 0.5 then n/a
    ([0.0, 1.0], [(1.0, [0.5, None]), (2.0, [0.0, 1.0])], True, [0.5, 2.0]),
    # the same rewards without task_success: the environment's step reward and the click distance
    ([0.0, 1.0], [(1.0, [0.5, None])], False, [0.5, 1.0]),
    # task_success alone, weight 1, in a failed episode: nothing but zeros (the environment's 0s not added)
    ([0.0, 0.0, 0.0], [(1.0, [0.0, 0.0, 0.0])], True, [0.0, 0.0, 0.0]),
    # no reward declares per-turn values: the environment's alone
    ([0.0, 0.0, 1.0], [], False, [0.0, 0.0, 1.0]),
]


@pytest.mark.parametrize(("env_rewards", "values", "carried", "expected"), TURN_REWARD_CASES)
def test_per_turn_rewards_count_the_environments_reward_once(env_rewards, values, carried, expected):
    assert turn_rewards(env_rewards, values, env_reward_carried=carried) == pytest.approx(expected)


def test_task_success_carries_the_environments_reward_and_the_shaping_rewards_do_not():
    from r1_gui.rewards import REWARD_FUNCS, carries_env_reward, get_reward_funcs

    assert carries_env_reward(REWARD_FUNCS["task_success"])
    assert carries_env_reward(get_reward_funcs(["task_success"])[0])  # bound too
    assert not any(carries_env_reward(REWARD_FUNCS[name]) for name in REWARD_FUNCS if name != "task_success")


# -- malformed input: one ValueError that names what is off ---------------------------------------------------------

MALFORMED_CASES = [
    # (call, message)
    (lambda: check_step_credit("ppo", 1.0, 0.95), "--advantage_estimator ppo: choose grpo or gigpo"),
    (lambda: check_step_credit("gigpo", 1.0, 0.0), r"--step_gamma must be in \(0, 1\], got 0.0"),
    (lambda: check_step_credit("gigpo", 1.0, 1.5), r"--step_gamma must be in \(0, 1\], got 1.5"),
    (lambda: check_step_credit("gigpo", -0.5, 0.95), "--step_advantage_weight must be a number >= 0, got -0.5"),
    (lambda: check_step_credit("gigpo", math.nan, 0.95), "--step_advantage_weight must be a number >= 0, got nan"),
    (lambda: discounted_returns([1.0], 0.0), r"--step_gamma must be in \(0, 1\], got 0.0"),
    # one group id per episode
    (lambda: step_credit([0], [["a"], ["b"]], [[0.0], [0.0]], 0.9, "group"), "1 group ids for 2 episodes"),
    # a state key per turn
    (lambda: step_credit([0, 0], [["a", "b"], ["a"]], [[0.0], [0.0]], 0.9, "group"),
     "episode 0 has 2 state keys for 1 per-turn rewards"),
    (lambda: step_credit([0, 0], [["a"], [None]], [[0.0], [0.0]], 0.9, "group"), "episode 1, turn 0 has no state key"),
    (lambda: step_credit([0, 0], [["a"], ["a"]], [[0.0], [math.inf]], 0.9, "group"),
     "episode 1, turn 0: reward inf is not a finite number"),
    (lambda: step_credit([0, 0], [["a"], ["a"]], [[0.0], [0.0]], 0.9, "sometimes"),
     "scale_rewards must be one of group, batch, none, got 'sometimes'"),
    (lambda: turn_advantages(0.5, [0.1], math.inf), "--step_advantage_weight must be a number >= 0, got inf"),
    (lambda: token_advantages([0, 3], [2], [0.1, 0.2], 8), "2 offsets, 1 answer lengths and 2 advantages"),
    (lambda: turn_rewards([0.0, 1.0], [(1.0, [0.5])]), "2 turns but a reward gave 1 per-turn values"),
]  # fmt: skip


@pytest.mark.parametrize(("call", "message"), MALFORMED_CASES)
def test_malformed_input_is_one_error_naming_it(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# -- training ---------------------------------------------------------------------------------------------------------


def turn_digit_share(completions=None, episode=None, *, per_turn=False, **kwargs):
    """A test reward a random model moves, turn by turn: the share of digits in each turn's text (per turn), or
    their mean over the episode's turns."""

    def share(turn):
        return sum(ch.isdigit() for ch in turn.text) / max(1, len(turn.text))

    per_episode = [[share(turn) for turn in item.turns] for item in episode]
    return per_episode if per_turn else [sum(values) / max(1, len(values)) for values in per_episode]


turn_digit_share.needs = ("episode",)


def recording_losses(monkeypatch) -> tuple[list, list]:
    """(losses, advantages) of every micro-batch's loss pass, as `_compute_loss` receives and returns them."""
    from r1_gui.multi_turn import trainer as multi_turn_trainer

    losses, advantages = [], []
    original = multi_turn_trainer.MultiTurnGRPOTrainer._compute_loss

    def recording(self, model, inputs):
        loss = original(self, model, inputs)
        losses.append(loss.item())
        mask = inputs["completion_mask"] * inputs["tool_mask"]
        advantages.append((inputs["advantages"].clone(), mask.clone()))
        return loss

    monkeypatch.setattr(multi_turn_trainer.MultiTurnGRPOTrainer, "_compute_loss", recording)
    return losses, advantages


def weights_moved(before_folder, after_folder) -> float:
    from safetensors.torch import load_file

    before, after = load_file(before_folder / "model.safetensors"), load_file(after_folder / "model.safetensors")
    return sum((after[name].double() - before[name].double()).abs().sum().item() for name in sorted(before))


# What main (6b35c58, before --advantage_estimator existed) handed the loss and returned on the run below: the loss of
# each of the 4 optimizer steps (2 generation batches x --num_iterations 2: the second pass of each batch is off
# policy, so its loss is not 0), each micro-batch's per-row advantages, and the summed absolute change of the weights.
# Recorded with one torch thread (the test sets it), by the same recording on that commit, on a machine with AVX-512.
# On another instruction set the same code sums in another order: on an AVX2 AMD EPYC (2026-12-07) main's own code
# gives the first loss (0 up to rounding) as 1.99e-08 and the others within 1e-6 of their value, the advantages to
# the bit. So the recording is matched to float32 rounding, and the two estimators to the bit, on the machine at hand.
RECORDING_ROUNDING = {"rel": 1e-5, "abs": 1e-7}
RECORDED_ON_MAIN = {
    "losses": [1.3659398057086491e-08, -0.006948903203010559, 0.0, -0.006039023399353027],
    "advantages": [
        [-0.7016492486000061, 0.7016492486000061, 0.0, 0.0],
        [-0.7016492486000061, 0.7016492486000061, 0.0, 0.0],
        [-0.6957908272743225, 0.6957908272743225, -0.694534420967102, 0.694534420967102],
        [-0.6957908272743225, 0.6957908272743225, -0.694534420967102, 0.694534420967102],
    ],
    "weights_moved": 55.47985925174901,
}
REGRESSION_RUN = (
    *("--max_turns", "3", "--max_turn_tokens", "16", "--max_completion_length", "144"),
    *("--per_device_train_batch_size", "4", "--num_generations", "2", "--num_iterations", "2", "--max_steps", "4"),
    *("--reward_funcs", "turn_digits", "task_success", "episode_click_distance"),
)


@pytest.mark.slow
def test_grpo_gives_mains_losses_and_gigpo_with_omega_0_the_same(tiny_qwen2_vl, tmp_path, monkeypatch):
    from test_multi_turn import run_grpo, turn_digits

    from r1_gui.cli_errors import torch_threads

    monkeypatch.setitem(rewards.REWARD_FUNCS, "turn_digits", turn_digits)
    runs = []
    for estimator in (
        ("--advantage_estimator", "grpo"),
        ("--advantage_estimator", "gigpo", "--step_advantage_weight", "0"),
    ):
        losses, advantages = recording_losses(monkeypatch)
        out = tmp_path / estimator[1]
        with torch_threads(1):  # as recorded: the sums' order, hence their last bits, depends on the thread count
            run_grpo(tiny_qwen2_vl, out, *REGRESSION_RUN, *estimator)
        assert losses == pytest.approx(RECORDED_ON_MAIN["losses"], **RECORDING_ROUNDING), estimator
        moved = weights_moved(tiny_qwen2_vl, out)
        assert moved == pytest.approx(RECORDED_ON_MAIN["weights_moved"], **RECORDING_ROUNDING), estimator
        runs.append((list(losses), moved))
        for (given, mask), recorded in zip(advantages, RECORDED_ON_MAIN["advantages"], strict=True):
            if given.dim() == 1:  # grpo: one advantage per row, as main gave
                assert given.tolist() == recorded
                continue
            # gigpo, omega 0: every answer token holds its episode's GRPO advantage, every other token 0
            for row, value in enumerate(recorded):
                assert given[row][mask[row] == 1].unique().tolist() == [value], (estimator, row)
                assert not given[row][mask[row] == 0].any()
    assert runs[0] == runs[1]  # gigpo with omega 0 is grpo to the bit


def recording_batches(monkeypatch) -> list[dict]:
    """Per generation batch: the rows' records (`EpisodeRow`), trl's per-row advantages before GiGPO and the per-token
    advantages after, and which tokens the loss counts."""
    from r1_gui.multi_turn import trainer as multi_turn_trainer
    from r1_gui.seam.grpo import GRPOSeam

    batches = []
    parent, ours = (  # trl's batch (the seam's default hook), and what the multi-turn trainer hands the loss
        GRPOSeam.generate_and_score,
        multi_turn_trainer.MultiTurnGRPOTrainer._generate_and_score_completions,
    )

    def parents(self, inputs):
        output = parent(self, inputs)
        batches.append({"episode_advantages": output["advantages"].clone()})
        return output

    def recording(self, inputs):
        output = ours(self, inputs)
        mask = output["completion_mask"] * output["tool_mask"]
        batches[-1].update(rows=list(self.book.recorded), advantages=output["advantages"].clone(), mask=mask)
        return output

    monkeypatch.setattr(GRPOSeam, "generate_and_score", parents)
    monkeypatch.setattr(multi_turn_trainer.MultiTurnGRPOTrainer, "_generate_and_score_completions", recording)
    return batches


def assert_gigpo_batch(batch: dict, omega: float, gamma: float) -> list[float]:
    """What GiGPO handed the loss for one generation batch, checked against what the test computes itself; returns
    the step advantages of the turns that share their anchor state with another turn."""
    rows, shared = batch["rows"], []
    for index, row in enumerate(rows):
        turns = row.turns
        assert all(turn.reward == 0.0 for turn in turns), "a random model does not succeed: no step reward"
        # the per-turn reward is turn_digit_share's value (the one reward that declares per-turn values; task_success
        # does too, and is 0 on every turn of a failed episode)
        shares = [sum(ch.isdigit() for ch in turn.text) / max(1, len(turn.text)) for turn in turns]
        assert row.turn_rewards == pytest.approx(shares)
        # the episode part is trl's GRPO advantage of the row, unchanged
        assert row.episode_advantage == pytest.approx(batch["episode_advantages"][index].item())
        assert row.turn_advantages == pytest.approx([row.episode_advantage + omega * s for s in row.step_advantages])
        # every answer token carries its turn's advantage; the tool-response tokens are masked and carry 0
        tokens, mask = batch["advantages"][index], batch["mask"][index]
        for turn, (offset, length) in enumerate(zip(row.offsets, row.answer_lengths, strict=True)):
            assert tokens[offset : offset + length].tolist() == pytest.approx([row.turn_advantages[turn]] * length)
            assert mask[offset : offset + length].tolist() == [1] * length
        assert not tokens[mask == 0].any()
    # a group's two episodes start on the same screen: their first turns always share an anchor group. Each anchor
    # group's step advantages, computed here from its turns' discounted returns (scale_rewards "group")
    anchors = {}
    for index, row in enumerate(rows):
        assert row.state_keys[0] == rows[index - index % 2].state_keys[0]
        returns = discounted_returns(row.turn_rewards, gamma)
        for turn, key in enumerate(row.state_keys):
            anchors.setdefault((index // 2, key), []).append((row, turn, returns[turn]))
    for members in anchors.values():
        values = [value for _, _, value in members]
        mean = sum(values) / len(values)
        std = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1)) if len(values) > 1 else 0.0
        for row, turn, value in members:
            expected = 0.0 if len(members) == 1 else (value - mean) / (std + EPS)
            assert row.step_advantages[turn] == pytest.approx(expected, abs=1e-9)
            if len(members) > 1:
                shared.append(row.step_advantages[turn])
    return shared


@pytest.mark.slow
@pytest.mark.parametrize(
    "recipe",
    [
        "tiny_cpu_phone_grpo.yaml",
        pytest.param("tiny_cpu_web_grpo.yaml", marks=needs_browser),
    ],
)
def test_two_gigpo_steps(recipe, tiny_qwen2_vl, tmp_path, monkeypatch):
    from test_multi_turn import REPO, main, parse_grpo_arguments

    monkeypatch.setitem(rewards.REWARD_FUNCS, "turn_digit_share", turn_digit_share)
    batches = recording_batches(monkeypatch)
    argv = [
        *("--config", str(REPO / "local_scripts" / recipe), "--model_name_or_path", str(tiny_qwen2_vl)),
        *("--output_dir", str(tmp_path), "--max_turns", "2", "--max_turn_tokens", "16", "--max_completion_length", "80"),
        *("--reward_funcs", "turn_digit_share", "task_success"),
        *("--advantage_estimator", "gigpo", "--step_advantage_weight", "0.5", "--step_gamma", "0.9"),
    ]  # fmt: skip
    main(*parse_grpo_arguments(argv))
    state = json.loads((tmp_path / "trainer_state.json").read_text())
    assert state["global_step"] == 2 and len(batches) == 2
    assert weights_moved(tiny_qwen2_vl, tmp_path) > 0
    shared = [value for batch in batches for value in assert_gigpo_batch(batch, omega=0.5, gamma=0.9)]
    assert any(value != 0 for value in shared), "no anchor group with a step signal: the test shows nothing"
    logged = [entry for entry in state["log_history"] if "gigpo/anchor_groups" in entry]
    assert len(logged) == 2
    for entry, batch in zip(logged, batches, strict=True):
        turns = sum(len(row.turns) for row in batch["rows"])
        groups = len({(index // 2, key) for index, row in enumerate(batch["rows"]) for key in row.state_keys})
        assert entry["gigpo/anchor_groups"] == groups
        assert entry["gigpo/mean_group_size"] == pytest.approx(turns / groups)
        assert 0 <= entry["gigpo/singleton_frac"] < 1  # the first turns are never alone
        steps = [value for row in batch["rows"] for value in row.step_advantages]
        mean = sum(steps) / len(steps)
        assert entry["gigpo/step_advantage_std"] == pytest.approx(
            math.sqrt(sum((value - mean) ** 2 for value in steps) / len(steps)), abs=1e-6
        )


@pytest.mark.slow
def test_episodes_split_over_two_processes_get_the_advantages_of_one(tiny_qwen2_vl, tmp_path):
    """Two processes, one episode each per step: every group (and so every anchor group) spans both. What each
    process handed the loss is what one process computes over the rows of both, in process order."""
    import os
    import subprocess
    import sys

    from test_grpo import free_port
    from test_multi_turn import RECIPE, REPO

    command = [
        *(sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_port", str(free_port())),
        str(REPO / "tests" / "helpers" / "gigpo_ranks.py"),
        *("--config", str(RECIPE), "--model_name_or_path", str(tiny_qwen2_vl), "--output_dir", str(tmp_path)),
        *("--max_turns", "2", "--max_turn_tokens", "16", "--max_completion_length", "80"),
        *("--per_device_train_batch_size", "1", "--num_generations", "2", "--max_steps", "2"),
        *("--reward_funcs", "turn_digit_share", "task_success"),
        *("--advantage_estimator", "gigpo", "--step_advantage_weight", "0.5", "--step_gamma", "0.9"),
    ]  # fmt: skip
    result = subprocess.run(
        command, capture_output=True, text=True, timeout=900, env={**os.environ, "OMP_NUM_THREADS": "1"}
    )
    assert result.returncode == 0, result.stderr[-4000:]
    ranks = [[json.loads(line) for line in (tmp_path / f"rank{r}.jsonl").read_text().splitlines()] for r in (0, 1)]
    assert len(ranks[0]) == len(ranks[1]) == 2  # two generation batches
    signal = False
    for first, second in zip(*ranks, strict=True):
        rows = first + second  # the gathered batch: process 0's rows, then process 1's
        assert len(first) == len(second) == 1 and first[0]["reset"] == second[0]["reset"], "one group, split"
        credit = step_credit([0, 0], [r["state_keys"] for r in rows], [r["turn_rewards"] for r in rows], 0.9, "group")
        for row, steps in zip(rows, credit.advantages, strict=True):
            assert row["step_advantages"] == pytest.approx(steps, abs=1e-12)
            assert row["turn_advantages"] == pytest.approx(turn_advantages(row["episode_advantage"], steps, 0.5))
        # the first screens meet across the processes
        assert first[0]["state_keys"][0] == second[0]["state_keys"][0]
        signal = signal or any(value != 0 for row in rows for value in row["step_advantages"])
    assert signal, "no step advantage but 0: the split shows nothing"
