"""Format dispatch: ``parse_action``, ``format_action`` and ``extract_action`` (a whole model completion)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .aguvis import format_aguvis, parse_aguvis
from .coords import COORDINATE_SYSTEMS
from .core import Action
from .guir1 import format_guir1, parse_guir1
from .mobile_use import format_mobile_use, parse_mobile_use

FORMATS = ("aguvis", "guir1", "mobile_use")
# The coordinate convention each format uses when ``coordinates=None``.
DEFAULT_COORDINATES = {"aguvis": "normalized", "guir1": "pixels", "mobile_use": "grid999"}
_PARSERS = {"aguvis": parse_aguvis, "guir1": parse_guir1, "mobile_use": parse_mobile_use}
_FORMATTERS = {"aguvis": format_aguvis, "guir1": format_guir1, "mobile_use": format_mobile_use}

# extract_action: the os-channel markers (as decoded with or without special tokens; the code follows the last
# one on a line), end-of-turn tokens stripped from a line's end, and the tags whose content is a candidate action.
_OS_MARKERS = ("<|recipient|>os", "assistantos")
_LINE_SUFFIXES = ("<|im_end|>", "<|diff_marker|>", "<|endoftext|>")
_TAGS = (("<tool_call>", "</tool_call>"), ("<answer>", "</answer>"))
MAX_CANDIDATES = 256  # parse attempts per completion, from its end: bounds the cost of hostile input


def _formats_to_try(text: str) -> tuple[str, ...]:
    """``format="auto"``: mobile_use for a <tool_call> or a JSON object, GUI-R1 for a list, else Aguvis code.
    An object that is not a mobile_use call is tried as a GUI-R1 dict."""
    start = text.lstrip()[:1]
    if start == "<":
        return ("mobile_use",)
    if start == "{":
        return ("mobile_use", "guir1")
    if start == "[":
        return ("guir1",)
    return ("aguvis",)


def parse_action(
    text: Any,
    format: str = "auto",
    *,
    coordinates: str | None = None,
    image_size: Sequence[float] | None = None,
) -> Action | None:
    """Parse one action written in ``format`` ("aguvis", "guir1", "mobile_use" or "auto").

    ``coordinates`` maps the numbers in the text to [0, 1] (see ``r1_gui.actions.coords``); None means the
    format's default (aguvis: normalized, guir1: pixels, mobile_use: grid999). "pixels" needs ``image_size``,
    the (width, height) of the image the model saw. Never raises: None for anything that is not exactly one
    valid action, including non-finite or out-of-range coordinates and unknown directions or statuses.
    Example: ``parse_action("pyautogui.click(x=0.36, y=0.13)") == Action("click", x=0.36, y=0.13)``.
    """
    try:
        if not isinstance(text, str):
            return None
        if format == "auto":
            formats = _formats_to_try(text)
        elif format in _PARSERS:
            formats = (format,)
        else:
            return None
        for name in formats:
            system = coordinates if coordinates is not None else DEFAULT_COORDINATES[name]
            if system not in COORDINATE_SYSTEMS:
                return None
            action = _PARSERS[name](text, system, image_size)
            if action is not None:
                return action
        return None
    except Exception:  # the contract is "never raises"; the parsers already catch what they expect
        return None


def format_action(
    action: Action,
    format: str = "aguvis",
    *,
    coordinates: str | None = None,
    image_size: Sequence[float] | None = None,
) -> str:
    """Write ``action`` in ``format``; ``parse_action`` with the same arguments reads back an equal Action
    (normalized floats are written with up to 4 decimals, grid and pixel coordinates as ints).

    Raises ValueError for an unknown format or coordinate system, "pixels" without ``image_size``, or an action
    the format cannot express (see each format module). Example:
    ``format_action(Action("click", x=0.36, y=0.13)) == "pyautogui.click(x=0.36, y=0.13)"``.
    """
    if not isinstance(action, Action):
        raise ValueError(f"format_action needs an Action, got {type(action).__name__}")
    if format not in _FORMATTERS:
        raise ValueError(f"unknown action format {format!r}; valid: {list(FORMATS)}")
    system = coordinates if coordinates is not None else DEFAULT_COORDINATES[format]
    if system not in COORDINATE_SYSTEMS:
        raise ValueError(f"unknown coordinates {system!r}; valid: {list(COORDINATE_SYSTEMS)}")
    return _FORMATTERS[format](action, system, image_size)


def completion_text(completion: Any) -> str | None:
    """The text of a completion: a string, or a TRL conversational completion (a list of messages, or one
    message) whose assistant contents are strings or lists of {"type": "text", "text": ...} parts."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        completion = [completion]
    if not isinstance(completion, (list, tuple)):
        return None
    messages = [m for m in completion if isinstance(m, dict)]
    assistant = [m for m in messages if m.get("role") == "assistant"] or messages
    texts = [_content_text(m.get("content")) for m in assistant]
    texts = [t for t in texts if t is not None]
    return "\n".join(texts) if texts else None


def _content_text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, (list, tuple)):
        parts = [p if isinstance(p, str) else p.get("text") for p in content if isinstance(p, (str, dict))]
        return "".join(p for p in parts if isinstance(p, str))
    return None


def _clean_line(line: str) -> str:
    line = line.strip()
    while line.endswith(_LINE_SUFFIXES):
        line = line[: -len(next(s for s in _LINE_SUFFIXES if line.endswith(s)))].strip()
    return line.strip("`").strip()


def _line_variants(line: str) -> list[tuple[int, str]]:
    """(priority, text) to try for one line: the code after its last os-channel marker first, then the line."""
    variants = [(0, _clean_line(line))]
    at, marker = max((line.rfind(m), m) for m in _OS_MARKERS)
    if at >= 0:
        variants.append((1, _clean_line(line[at + len(marker) :])))
    return [(priority, text) for priority, text in variants if text[-1:] in (")", "]", "}")]


def _candidates(text: str) -> list[tuple[int, int, str]]:
    """(end position, priority, text) of every tag content and every line; str.find only, so linear time."""
    found: list[tuple[int, int, str]] = []
    for open_tag, close_tag in _TAGS:
        start = text.find(open_tag)
        while start >= 0:
            body = start + len(open_tag)
            end = text.find(close_tag, body)
            if end < 0:  # a generation cut before the closing tag
                found.append((len(text), 2, text[body:]))
                break
            found.append((end + len(close_tag), 2, text[body:end]))
            start = text.find(open_tag, end + len(close_tag))
    position = 0
    for line in text.split("\n"):
        position += len(line)
        found.extend((position, priority, variant) for priority, variant in _line_variants(line))
        position += 1
    return found


def extract_action(
    completion: Any,
    *,
    coordinates: str | None = None,
    image_size: Sequence[float] | None = None,
) -> Action | None:
    """The action in a whole model completion, or None. Never raises.

    Candidates are the contents of ``<tool_call>...</tool_call>`` and ``<answer>...</answer>`` and every line
    (from its last os-channel marker ``assistantos`` / ``<|recipient|>os`` on, trailing end-of-turn tokens and
    backticks removed, so the code of the Aguvis os channel is found); each is parsed with ``format="auto"``
    and the last one that parses wins (at most ``MAX_CANDIDATES`` tries, from the end). ``completion`` may be a string or a TRL conversational completion.
    Example: ``extract_action("Action: tap OK\\nassistantos\\npyautogui.click(x=0.5, y=0.9)")`` is a click.
    """
    try:
        text = completion_text(completion)
        if text is None:
            return None
        candidates = sorted(_candidates(text), key=lambda c: (c[0], c[1]), reverse=True)
        for _, _, candidate in candidates[:MAX_CANDIDATES]:
            action = parse_action(candidate, "auto", coordinates=coordinates, image_size=image_size)
            if action is not None:
                return action
        return None
    except Exception:  # the contract is "never raises"
        return None
