"""`ReplayEnv` (`r1_gui/Replay-v0`): recorded episodes of the builder's parquet, played semi-online.

    env = gymnasium.make("r1_gui/Replay-v0", data_dir="data/aitw-2k", split="test", patch="expert")
    observation, info = env.reset(seed=0)                      # episode 0 (seeds wrap around the episode count)
    observation, info = env.reset(options={"episode_id": "synthetic_000003"})

The observation is the recorded screenshot of the current step and the instruction. A step *matches* when the
agent's action and the recorded one agree by `r1_gui.scoring.aitw.step_success` (the AITW action match, plus the AITW text
match for typing), the function the evaluation scores `step_success` with. On a match the episode moves to the next
recorded step; on a mismatch, `patch="none"` ends it as a failure, `patch="expert"` takes the recorded action
instead and goes on, counting the mismatch (UI-S1's patch module). The episode succeeds when every step matched
(the last one is the recorded terminate where the data has one). `info["progress"]` is the share of the
episode's steps matched so far; `info["expert_action"]` the recorded action of the current step.

Text that does not parse counts as a mismatch (`info["error"]` says why); nothing raises. Rows are grouped into
episodes by `episode_id` and ordered by `step`; episodes whose steps are not exactly 0..n-1 (missing or
duplicated steps, e.g. after `--num_samples` sampling) or whose recorded action does not parse are reported at load
(`bad_episodes`, and a warning with the count per reason) and skipped. Screenshots of another size than the first
episode's are resized to it, so the observation space has one shape.
"""

from __future__ import annotations

import logging
from collections import Counter, OrderedDict, defaultdict
from pathlib import Path

import gymnasium as gym
import numpy as np

from r1_gui.actions import read_bbox
from r1_gui.envs.contract import ACTION_TEXT_SPACE, parse_step_input, step_info
from r1_gui.gui_datasets import ground_truth_action, open_screenshot  # how the evaluation reads a row
from r1_gui.scoring import aitw

logger = logging.getLogger(__name__)

PATCH_MODES = ("none", "expert")
REQUIRED_COLUMNS = ("episode_id", "step", "image", "instruction")
ACTION_COLUMNS = ("action_json", "solution")  # the recorded action: either one (the evaluation reads both)


def read_split(data_dir: str | Path, split: str) -> list[dict]:
    """The rows of DATA_DIR/<split>.parquet as dicts; errors name the file and the missing column."""
    import pyarrow.parquet as pq

    path = Path(data_dir) / f"{split}.parquet"
    if not Path(data_dir).is_dir():
        raise FileNotFoundError(f"data_dir {data_dir} does not exist; build it with `python dataset/raw_load_data.py`")
    if not path.is_file():
        splits = sorted(found.stem for found in Path(data_dir).glob("*.parquet"))
        raise FileNotFoundError(
            f"{data_dir} has no split {split!r} ({path.name}); its splits: {', '.join(splits) or 'none'}"
        )
    columns = pq.read_schema(path).names
    missing = [name for name in REQUIRED_COLUMNS if name not in columns]
    if not any(name in columns for name in ACTION_COLUMNS):
        missing.append(" or ".join(ACTION_COLUMNS))
    if missing:
        raise ValueError(f"{path} lacks the column(s) {', '.join(missing)} (it has {', '.join(columns)})")
    wanted = [*REQUIRED_COLUMNS, *(name for name in (*ACTION_COLUMNS, "bbox") if name in columns)]
    return pq.read_table(path, columns=wanted).to_pylist()


def group_episodes(rows: list[dict]) -> tuple[dict[str, list[dict]], dict[str, str]]:
    """(episode id -> its rows in step order, each with "ground_truth"; bad episode id -> reason)."""
    by_episode: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        by_episode[str(row["episode_id"])].append(row)
    good, bad = {}, {}
    for episode_id, steps in by_episode.items():
        steps.sort(key=lambda row: row["step"])
        numbers = [row["step"] for row in steps]
        if len(set(numbers)) != len(numbers):
            bad[episode_id] = "duplicated steps"
        elif numbers != list(range(len(numbers))):
            bad[episode_id] = "missing steps"
        else:
            for row in steps:
                row["ground_truth"] = ground_truth_action(row)
            if any(row["ground_truth"] is None for row in steps):
                bad[episode_id] = "unparsable recorded action"
            else:
                good[episode_id] = steps
    return good, bad


class ReplayEnv(gym.Env):
    """Recorded episodes, semi-online; see the module docstring.

    Args:
        data_dir: the builder's output folder (train.parquet, test.parquet).
        split: "train" or "test" (any <split>.parquet in data_dir).
        patch: "none" (a mismatch ends the episode) or "expert" (the recorded action is taken instead).
        coordinates: the convention of points in model text (None: each style's own; "pixels" are pixels of the
            observed screenshot).
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 2}
    has_expert = True  # the recorded action of the current step

    def __init__(
        self,
        data_dir: str | Path,
        split: str = "train",
        patch: str = "none",
        coordinates: str | None = None,
        render_mode: str | None = None,
        cache_size: int = 64,
    ):
        if patch not in PATCH_MODES:
            raise ValueError(f"patch must be one of {', '.join(PATCH_MODES)}, got {patch!r}")
        self.patch, self.coordinates, self.render_mode, self.cache_size = patch, coordinates, render_mode, cache_size
        self.episodes, self.bad_episodes = group_episodes(read_split(data_dir, split))
        self.bad_report = dict(Counter(self.bad_episodes.values()))
        if self.bad_episodes:
            logger.warning(
                "%s/%s.parquet: skipped %d bad episodes %s", data_dir, split, len(self.bad_episodes), self.bad_report
            )
        if not self.episodes:
            raise ValueError(f"{Path(data_dir) / f'{split}.parquet'} holds no complete episode ({self.bad_report})")
        self.episode_ids = sorted(self.episodes)
        self.episode_count = len(self.episode_ids)  # the contract's declared count: seed i plays episode i % count
        first = open_screenshot(self.episodes[self.episode_ids[0]][0]["image"])
        self.screen_size = first.size
        self.observation_space = gym.spaces.Dict(
            {
                "screenshot": gym.spaces.Box(0, 255, (first.height, first.width, 3), np.uint8),
                "instruction": gym.spaces.Text(min_length=0, max_length=4096, charset=_charset(self.episodes)),
            }
        )
        self.action_space = ACTION_TEXT_SPACE  # model text; an r1_gui Action is accepted too
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self.steps: list[dict] = []
        self.episode_id, self._index, self._matched, self._mismatches, self._count, self._ended = (
            None,
            0,
            0,
            0,
            0,
            False,
        )

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        episode_id = (options or {}).get("episode_id")
        if episode_id is None:
            index = seed if seed is not None else int(self.np_random.integers(len(self.episode_ids)))
            episode_id = self.episode_ids[index % len(self.episode_ids)]
        elif episode_id not in self.episodes:
            reason = self.bad_episodes.get(episode_id, "not in this split")
            raise ValueError(f"episode {episode_id!r} cannot be played: {reason}; e.g. {self.episode_ids[:3]}")
        self.episode_id, self.steps = episode_id, self.episodes[episode_id]
        self._index = self._matched = self._mismatches = self._count = 0
        self._ended = False
        return self._observation(), self._info(matched=None, parsed=None, error=None)

    def step(self, action):
        if not self.steps:
            raise RuntimeError("call reset() before step()")
        self._count += 1
        parsed, error = parse_step_input(action, self.coordinates, self.screen_size)
        if self._ended:
            info = self._info(None, parsed is not None, "the episode has ended; call reset()", parsed)
            return self._observation(), 0.0, True, False, info
        recorded = self.steps[self._index]
        matched = parsed is not None and aitw.step_success(
            parsed, recorded["ground_truth"], read_bbox(recorded.get("bbox"))
        )
        if matched:
            self._matched += 1
        else:
            self._mismatches += 1
            error = error or f"does not match the recorded {recorded['ground_truth']!r}"
        if matched or self.patch == "expert":
            self._index += 1
        terminated = self._index >= len(self.steps) or (not matched and self.patch == "none")
        self._ended = terminated
        success = terminated and self._mismatches == 0
        info = self._info(matched=matched, parsed=parsed is not None, error=error, action=parsed, success=success)
        return self._observation(), 1.0 if success else 0.0, terminated, False, info

    def render(self):
        return None if self.render_mode is None or not self.steps else self._screenshot()

    def _screenshot(self) -> np.ndarray:
        row = self.steps[min(self._index, len(self.steps) - 1)]
        key = f"{self.episode_id}:{row['step']}"
        if key not in self._cache:
            image = open_screenshot(row["image"])
            if image.size != self.screen_size:
                image = image.resize(self.screen_size)
            self._cache[key] = np.asarray(image, dtype=np.uint8)
            if len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return self._cache[key]

    def _observation(self) -> dict:
        return {"screenshot": self._screenshot().copy(), "instruction": str(self.steps[0]["instruction"])}

    def _info(self, matched: bool | None, parsed: bool | None, error: str | None, action=None, success=False) -> dict:
        remaining = self._index < len(self.steps) and not self._ended
        return step_info(
            task="replay",
            instruction=str(self.steps[0]["instruction"]),
            screen_size=self.screen_size,
            step=self._count,
            max_steps=len(self.steps),  # each step advances or ends the episode
            success=success,
            error=error,
            action=action,
            parsed=parsed,
            expert_action=self.steps[self._index]["ground_truth"] if remaining else None,
            episode_id=self.episode_id,
            recorded_step=min(self._index, len(self.steps) - 1),
            progress=self._matched / len(self.steps),
            mismatches=self._mismatches,
            matched=matched,
        )


def _charset(episodes: dict[str, list[dict]]) -> str:
    """Every character of the instructions (the Text space must contain each observation)."""
    return "".join(sorted({char for steps in episodes.values() for char in str(steps[0]["instruction"])} | {" "}))
