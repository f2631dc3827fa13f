"""The synthetic episodes as Aguvis stage-2 records (docs/notes.md, "Aguvis stage-2 data"): one record per step.

Each level (l1, l2, l3) holds the same records and differs only in the plan turn: l1 "Action: ...", l2 adds
"Thought:", l3 adds "Observation:". Each record also carries "bbox", the [x1, y1, x2, y2] box of the element the
step acts on as fractions of the screen (null for actions without a target), which the builder keeps as its bbox
column. The system and human turns are plain {"from", "value"} as in the released files; the two gpt turns carry
"recipient" and "end_turn".
"""

from __future__ import annotations

from r1_gui.synthetic import screens
from r1_gui.synthetic.episodes import Episode, Step, check_counts, iter_episodes, synthetic_config

SUBSET = "synthetic"
LEVELS = ("l1", "l2", "l3")
SYSTEM_PROMPT = (
    "You are a GUI agent operating an Android phone. Each turn you receive a screenshot of the current screen, "
    "the user's instruction and the actions taken so far. Decide the single next action and output it as one "
    "line of Python code using the pyautogui and mobile APIs: pyautogui.click(x=, y=), pyautogui.write(message=''), "
    "pyautogui.press(keys=['enter']), pyautogui.scroll(page=), mobile.swipe(from_coord=[x, y], to_coord=[x, y]), "
    "mobile.long_press(x=, y=), mobile.back(), mobile.home(), mobile.open_app(app_name=''), "
    "mobile.wait(seconds=), mobile.terminate(status='success' or 'failure'). Coordinates are fractions of the "
    "screen width and height, between 0 and 1."
)
HUMAN_TEMPLATE = (
    "<image>\nPlease generate the next move according to the ui screenshot, instruction and previous actions."
    "\n\nInstruction: {instruction}\n\nPrevious actions:\n{history}"
)


def image_name(episode_id: str, step: int) -> str:
    return f"{SUBSET}_{episode_id}_{step}.jpg"


def box_fraction(box: screens.Box | None, size: screens.Size) -> list[float] | None:
    """A pixel box as fractions of the screen width and height, 4 decimals; None stays None."""
    if box is None:
        return None
    x1, y1, x2, y2 = box
    return [
        round(x1 / size.width, 4),
        round(y1 / size.height, 4),
        round(x2 / size.width, 4),
        round(y2 / size.height, 4),
    ]


def plan_text(step: Step, level: str, size: screens.Size) -> str:
    """The plan turn: l1 "Action: ...", l2 adds the thought before it, l3 also the observation."""
    text = f"Action: {step.description}"
    if level in ("l2", "l3"):
        text = f"Thought: {step.thought}\n{text}"
    if level == "l3":
        text = f"Observation: {step.screen.describe(size)}\n{text}"
    return text


def episode_records(episode_id: str, episode: Episode, size: screens.Size) -> dict[str, list[dict]]:
    """The episode's records for each level, one per step, in the Aguvis stage-2 schema plus "bbox"."""
    by_level: dict[str, list[dict]] = {level: [] for level in LEVELS}
    for number, step in enumerate(episode.steps):
        history = "\n".join(f"Step {i + 1}: {done.description}" for i, done in enumerate(episode.steps[:number]))
        human = HUMAN_TEMPLATE.format(instruction=episode.instruction, history=history or "None")
        for level in LEVELS:
            conversations = [
                {"from": "system", "value": SYSTEM_PROMPT},
                {"from": "human", "value": human},
                {"from": "gpt", "value": plan_text(step, level, size), "recipient": "all", "end_turn": False},
                {"from": "gpt", "value": step.code, "recipient": "os", "end_turn": True},
            ]
            record = {
                "image": image_name(episode_id, number),
                "conversations": conversations,
                "bbox": box_fraction(step.target, size),
            }
            by_level[level].append(record)
    return by_level


def make_records(
    episodes: int | None = None, seed: int = 0, *, records: int | None = None, **config
) -> dict[str, list[dict]]:
    """All records in memory, no images: {"l1": [...], "l2": [...], "l3": [...]}. `config`: SyntheticConfig fields."""
    settings = synthetic_config(**config)
    by_level: dict[str, list[dict]] = {level: [] for level in LEVELS}
    for episode_id, episode in iter_episodes(settings, seed, *check_counts(episodes, records)):
        for level, level_records in episode_records(episode_id, episode, settings.size).items():
            by_level[level].extend(level_records)
    return by_level
