"""r1_gui's environment ids, registered with Gymnasium (lazily: nothing is imported until an id is made)."""

import gymnasium

PHONE_ID = "r1_gui/Phone-v0"
REPLAY_ID = "r1_gui/Replay-v0"
WEB_ID = "r1_gui/Web-v0"
ENTRY_POINTS = {
    PHONE_ID: "r1_gui.envs.phone.env:PhoneEnv",
    REPLAY_ID: "r1_gui.envs.replay.env:ReplayEnv",
    WEB_ID: "r1_gui.envs.web.env:WebEnv",
}

# `browsergym/<benchmark>[.<task>]`: BrowserGym's tasks through r1_gui's adapter (contract.make_env routes them; the
# ids BrowserGym registers itself are its raw environments, which do not keep the contract)
BROWSERGYM_PREFIX = "browsergym/"
BROWSERGYM_ENTRY_POINT = "r1_gui.envs.browsergym.env:make_browsergym_env"

for env_id, entry_point in ENTRY_POINTS.items():
    if env_id not in gymnasium.registry:
        gymnasium.register(id=env_id, entry_point=entry_point)
