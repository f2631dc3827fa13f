"""Gymnasium environments in which a GUI agent acts and sees the next screen. Importing this package registers:

- ``r1_gui/Phone-v0`` (`PhoneEnv`): a simulated phone built on r1_gui.synthetic's screens, with the task families
  of ``TASKS``, an expert (``info["expert_action"]``) and success checked on the final state;
- ``r1_gui/Replay-v0`` (`ReplayEnv`): recorded episodes of the builder's parquet, advanced while the agent's
  actions match the recorded ones under the AITW rule (semi-online, optionally patched by the recorded action);
- ``r1_gui/Web-v0`` (`r1_gui.envs.web.env.WebEnv`): MiniWoB++ task pages in a real headless Chromium (imported only
  when made: it needs selenium, miniwob and Debian's chromium and chromium-driver).

    python -m r1_gui.play --task web_search --policy expert --seed 3 --gif runs/episode.gif

Every environment keeps the contract of `r1_gui.envs.contract`; `r1_gui.envs.runtime.pool.EnvPool` runs many side by side.
"""

from r1_gui.envs.phone.env import PhoneEnv
from r1_gui.envs.phone.expert import expert_action
from r1_gui.envs.phone.tasks import MAX_STEPS, TASKS
from r1_gui.envs.registry import PHONE_ID, REPLAY_ID, WEB_ID
from r1_gui.envs.replay.env import ReplayEnv

__all__ = ["MAX_STEPS", "PHONE_ID", "REPLAY_ID", "TASKS", "WEB_ID", "PhoneEnv", "ReplayEnv", "expert_action"]
