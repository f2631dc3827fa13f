"""Source records: one training example per record, the Aguvis stage-2 reader and the checks shared with GUI-R1
input.

A record that fails a check raises ``BadRecord(reason, detail)``; the builder counts the reason (one of
``SKIP_REASONS``) and moves on, or stops there under ``--strict``. Checks run cheapest first: keys, turns, the
id (duplicates), the action (parsed by ``r1_gui.actions``), then the image file (a stat; PIL only with
``verify_images``).
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image

from r1_gui.actions import Action, parse_action, read_bbox
from r1_gui.prompts import parse_history

SKIP_REASONS = ("missing_keys", "bad_turns", "duplicate_id", "unparsable_action", "missing_image", "unreadable_image")
IMAGE_PLACEHOLDER = "<image>"
LEVELS = ("l1", "l2", "l3")

_LEVEL_IN_NAME = re.compile(r"(?:^|[-_.])(l[123])(?:[-_.]|$)")
_HUMAN_ROLES, _GPT_ROLES = ("human", "user"), ("gpt", "assistant")


class BadRecord(Exception):
    """A record the builder skips: ``reason`` is one of SKIP_REASONS, ``detail`` says what was wrong."""

    def __init__(self, reason: str, detail: str):
        super().__init__(f"{reason}: {detail}")
        self.reason, self.detail = reason, detail


@dataclass(slots=True)
class Example:
    """One row of the output dataset (see the package docstring for the columns), plus what exports need."""

    id: str
    image: str  # absolute path of the screenshot
    problem: str
    code: str  # the os-turn action code, stripped
    instruction: str
    history: list[str]
    thought: str
    action: Action
    episode_id: str
    step: int
    source: str
    bbox: list[float] | None
    system: str = ""  # the system turn, for the exports
    blob: tuple[Any, int] | None = None  # (pyarrow binary array, row): GUI-R1 image bytes, written on output

    @property
    def solution(self) -> str:
        return f"<answer>{self.code}</answer>"

    def read_image_bytes(self) -> bytes:
        if self.blob is not None:
            array, row = self.blob
            return array[row].as_py()
        with open(self.image, "rb") as handle:
            return handle.read()


def episode_and_step(stem: str) -> tuple[str, int]:
    """AITW names are "<subset>_<episode>_<step>": episode id "<subset>_<episode>" and the step number.
    Any other name is an episode of its own at step 0."""
    parts = stem.rsplit("_", 2)
    if len(parts) == 3 and all(parts) and parts[2].isdigit():
        return f"{parts[0]}_{parts[1]}", int(parts[2])
    return stem, 0


def in_episode_form(stem: str) -> bool:
    parts = stem.rsplit("_", 2)
    return len(parts) == 3 and all(parts) and parts[2].isdigit()


def split_problem(human: str) -> tuple[str, str, list[str]]:
    """(problem, instruction, history) from the human turn; the placeholder and its newline are removed."""
    problem = human.replace(IMAGE_PLACEHOLDER + "\n", "").replace(IMAGE_PLACEHOLDER, "").strip()
    at = problem.find("Instruction:")
    if at < 0:
        raise BadRecord("bad_turns", "the human turn has no 'Instruction:'")
    instruction, _, history = problem[at + len("Instruction:") :].partition("Previous actions:")
    return problem, instruction.strip(), parse_history(history)


def level_of(plan: str, file_level: str | None) -> str | None:
    """l3 plans start with "Observation:", l2 with "Thought:", l1 with "Action:"; else the file name's level."""
    head = plan.lstrip()
    if head.startswith("Observation:"):
        return "l3"
    if head.startswith("Thought:"):
        return "l2"
    if head.startswith("Action:"):
        return "l1"
    return file_level


def level_in_name(path: Path) -> str | None:
    match = _LEVEL_IN_NAME.search(path.stem.lower())
    return match.group(1) if match else None


def check_image(path: str, verify: bool) -> None:
    """Raise BadRecord unless the file exists and is a non-empty file (and, with verify, a valid image)."""
    try:
        status = os.stat(path)
    except FileNotFoundError:
        raise BadRecord("missing_image", f"image {path} does not exist") from None
    except OSError as error:
        raise BadRecord("unreadable_image", f"image {path}: {error.strerror or error}") from None
    if not stat.S_ISREG(status.st_mode) or status.st_size == 0:
        raise BadRecord("unreadable_image", f"image {path} is empty or not a file")
    if verify:
        try:
            with Image.open(path) as image:
                image.verify()
        except Exception as error:  # PIL raises many types for broken files
            raise BadRecord("unreadable_image", f"image {path}: {error}") from None


def _turns(conversations: Any) -> tuple[str, str, str, str]:
    """(system, human, plan, code) from the four Aguvis turns; the system turn may be absent."""
    if not isinstance(conversations, list) or not all(isinstance(turn, dict) for turn in conversations):
        raise BadRecord("bad_turns", "'conversations' is not a list of turns")
    for index, turn in enumerate(conversations):
        if not isinstance(turn.get("from"), str) or not isinstance(turn.get("value"), str):
            raise BadRecord("bad_turns", f"turn {index} lacks a string 'from' or 'value'")
    turns = conversations[1:] if conversations and conversations[0]["from"] == "system" else conversations
    shape = [(turn["from"], turn.get("recipient", "os")) for turn in turns]
    if (
        len(turns) != 3
        or shape[0][0] not in _HUMAN_ROLES
        or shape[1] not in [(role, "all") for role in _GPT_ROLES]
        or shape[2] not in [(role, "os") for role in _GPT_ROLES]
    ):
        found = ", ".join(f"{role}" + (f" ({recipient})" if role in _GPT_ROLES else "") for role, recipient in shape)
        raise BadRecord("bad_turns", f"expected turns [system,] human, gpt (all), gpt (os); got {found or 'none'}")
    system = conversations[0]["value"] if len(conversations) == 4 else ""
    return system, turns[0]["value"], turns[1]["value"], turns[2]["value"]


def aguvis_example(
    record: Any, image_dir: str, file_name: str, file_level: str | None, taken: dict[str, str], verify: bool
) -> Example:
    """The example of one Aguvis stage-2 record, or BadRecord. ``taken`` maps the ids kept so far to their file."""
    if not isinstance(record, dict):
        raise BadRecord("missing_keys", f"the record is a {type(record).__name__}, not an object")
    image, conversations = record.get("image"), record.get("conversations")
    missing = [repr("image")] if not isinstance(image, str) or not image else []
    missing += [repr("conversations")] if conversations is None else []
    if missing:
        raise BadRecord("missing_keys", f"no usable {' or '.join(missing)}")
    system, human, plan, code = _turns(conversations)
    problem, instruction, history = split_problem(human)
    name = os.path.basename(image)
    stem = os.path.splitext(name)[0]
    if stem in taken:
        raise BadRecord("duplicate_id", f"id {stem!r} was already taken from {taken[stem]}")
    code = code.strip()
    action = parse_action(code, "aguvis")
    if action is None:
        raise BadRecord("unparsable_action", f"action {code[:200]!r} does not parse")
    path = os.path.join(image_dir, image)
    check_image(path, verify)
    episode_id, step = episode_and_step(stem)
    level = level_of(plan, file_level)
    return Example(
        id=stem,
        image=path,
        problem=problem,
        code=code,
        instruction=instruction,
        history=history,
        thought=plan,
        action=action,
        episode_id=episode_id,
        step=step,
        source=f"{file_name} ({level})" if level else file_name,
        bbox=dataset_bbox(record.get("bbox")),
        system=system,
    )


def dataset_bbox(value: Any) -> list[float] | None:
    """The ``bbox`` column value of a source box: a list by ``read_bbox``'s normalized rule, else None."""
    box = read_bbox(value, normalized=True)
    return None if box is None else list(box)


GUIR1_HINT = "a GUI-R1 parquet file? pass --input_format guir1"


def is_parquet(path: Path) -> bool:
    """By its name or its first bytes (every parquet file starts with PAR1)."""
    with open(path, "rb") as handle:
        return path.suffix == ".parquet" or handle.read(4) == b"PAR1"


def load_aguvis(path: Path) -> list:
    """The records of an Aguvis stage-2 JSON file; ValueError naming the file when it is not a JSON list."""
    hint = f" ({GUIR1_HINT})" if is_parquet(path) else ""
    try:
        with open(path, "rb") as handle:
            records = json.load(handle)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(
            f"{path} is not valid JSON ({error}); expected an Aguvis stage-2 list of records{hint}"
        ) from None
    if not isinstance(records, list):
        raise ValueError(f"{path} holds a JSON {type(records).__name__}; expected a list of Aguvis records")
    return records
