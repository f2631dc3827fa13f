"""Reading a whole model completion: its text, the action in it, and the response styles the rewards check.

Every text -> Action step that starts from a completion lives here, with one table of the markers a completion
may carry (``OS_MARKERS``, ``PLAN_CHANNELS``, ``END_TOKENS`` and the tag pairs). Who reads what:

- ``extract_action`` (rewards, evaluation, builder, environments): the last parseable candidate anywhere, from the
  last os-channel marker of a line on. Every marker of ``OS_MARKERS`` ends in ``<|recipient|>os`` or is
  ``assistantos``, so the long ``<|im_start|>assistant<|recipient|>os`` always ends where its short form does and
  gives the same code: the full table reads exactly as the two short markers alone.
- ``styled_action`` (the ``format`` rewards): the completion written exactly in one prompt style. The Aguvis style
  splits plan from code at the last marker, longest first, so ``<|im_start|>assistant`` never counts as plan.
- ``original_call``, ``original_format_matches`` (R1-V-GUI-Agent's rewards and ``paper_param_match``): the
  original's own reading, quirks included: only ``ORIGINAL_MARKER`` ("assistantos"), and its first occurrence.
- ``answer_content``, ``guir1_answer`` (GUI-R1's rewards, the dataset's ``solution``): the first ``<answer>``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from .core import Action
from .parse import parse_action

# The os channel of Aguvis output as decoded with or without special tokens: the action code follows it.
OS_MARKERS = ("<|im_start|>assistant<|recipient|>os", "<|recipient|>os", "assistantos")
# The plan channel that opens an Aguvis completion (the "Thought: ... Action: ..." part).
PLAN_CHANNELS = ("<|im_start|>assistant<|recipient|>all", "<|recipient|>all", "assistantall")
# End-of-turn tokens stripped from the end of a line or completion (none is a suffix of another: order is free).
END_TOKENS = ("<|im_end|>", "<|endoftext|>", "<|diff_marker|>")
THINK_TAGS = ("<think>", "</think>")
ANSWER_TAGS = ("<answer>", "</answer>")
TOOL_CALL_TAGS = ("<tool_call>", "</tool_call>")
ACTION_TAGS = (TOOL_CALL_TAGS, ANSWER_TAGS)  # tags whose content ``extract_action`` tries as an action
# R1-V-GUI-Agent reads the text after the *first* "assistantos" (the whole output without one).
ORIGINAL_MARKER = "assistantos"
MAX_CANDIDATES = 256  # parse attempts per completion, from its end: bounds the cost of hostile input

_ANSWER = re.compile(re.escape(ANSWER_TAGS[0]) + r"(.*?)" + re.escape(ANSWER_TAGS[1]), re.DOTALL)
_GUIR1_OUTER = re.compile(r"<think>.*?</think>\s*<answer>.*?</answer>", re.DOTALL)
# The original's call regex needs a non-empty argument list; the fixed one lets the argument group be empty.
_ORIGINAL_CALL = re.compile(r"(.+?)\((.+?)\)")
_FIXED_CALL = re.compile(r"(.+?)\((.*?)\)")
_ORIGINAL_FORMAT = re.compile(r"content:\s*.*?Thought:.*?Action:.*?" + ORIGINAL_MARKER)


# ------------------------------------------------------------------------------------------ completion text


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


def strip_end_tokens(text: str) -> str:
    """``text`` stripped of whitespace and of every trailing ``END_TOKENS`` token."""
    text = text.strip()
    while text.endswith(END_TOKENS):
        text = text[: -len(next(token for token in END_TOKENS if text.endswith(token)))].strip()
    return text


# ------------------------------------------------------------------------------------------ extract_action


def _clean_line(line: str) -> str:
    return strip_end_tokens(line).strip("`").strip()


def _line_variants(line: str) -> list[tuple[int, str]]:
    """(priority, text) to try for one line: the code after its last os-channel marker first, then the line."""
    variants = [(0, _clean_line(line))]
    at, marker = max((line.rfind(m), m) for m in OS_MARKERS)
    if at >= 0:
        variants.append((1, _clean_line(line[at + len(marker) :])))
    return [(priority, text) for priority, text in variants if text[-1:] in (")", "]", "}")]


def _candidates(text: str) -> list[tuple[int, int, str]]:
    """(end position, priority, text) of every tag content and every line; str.find only, so linear time."""
    found: list[tuple[int, int, str]] = []
    for open_tag, close_tag in ACTION_TAGS:
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
    (from its last os-channel marker of ``OS_MARKERS`` on, trailing end-of-turn tokens and backticks removed, so the
    code of the Aguvis os channel is found); each is parsed with ``format="auto"`` and the last one that parses
    wins (at most ``MAX_CANDIDATES`` tries, from the end). ``completion`` may be a string or a TRL conversational
    completion. Example: ``extract_action("Action: tap OK\\nassistantos\\npyautogui.click(x=0.5, y=0.9)")`` is a
    click.
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


# ------------------------------------------------------------------------------------------ response styles


def _is_plan(plan: str) -> bool:
    """Aguvis plan: "Action: ..." (l1), "Thought: ...\\nAction: ..." (l2), or "Observation: ...\\n" before (l3)."""
    for channel in PLAN_CHANNELS:
        if plan.startswith(channel):
            plan = plan[len(channel) :].lstrip()
    if plan.startswith("all\n"):
        plan = plan[len("all\n") :].lstrip()
    action_at = plan.rfind("Action:")
    if action_at < 0 or not plan[action_at + len("Action:") :].strip():
        return False
    if action_at == 0:
        return True
    before = plan[:action_at]
    return (
        plan.startswith(("Thought:", "Observation:"))
        and before.rstrip(" \t").endswith("\n")
        and bool(before.split(":", 1)[1].strip())
    )


def _aguvis_style_action(text: str, **parse_kwargs: Any) -> Action | None:
    # The last marker; of markers ending at the same place the longest, so the plan holds no part of it.
    found = [(text.rfind(m) + len(m), len(m), m) for m in OS_MARKERS if m in text]
    if not found:
        return None
    end, _, marker = max(found)
    plan, code = strip_end_tokens(text[: end - len(marker)]), strip_end_tokens(text[end:])
    return parse_action(code, "aguvis", **parse_kwargs) if _is_plan(plan) else None


def _think_answer_style_action(text: str, **parse_kwargs: Any) -> Action | None:
    (think, think_end), (answer, answer_end) = THINK_TAGS, ANSWER_TAGS
    text = strip_end_tokens(text)
    if not text.startswith(think) or any(text.count(tag) != 1 for tag in (think_end, answer, answer_end)):
        return None
    think_at = text.find(think_end)
    if text.count(think) != 1 or not text[len(think) : think_at].strip():
        return None
    rest = text[think_at + len(think_end) :].strip()
    if not (rest.startswith(answer) and rest.endswith(answer_end)):
        return None
    return parse_action(rest[len(answer) : -len(answer_end)], "auto", **parse_kwargs)


def _mobile_use_style_action(text: str, **parse_kwargs: Any) -> Action | None:
    call, call_end = TOOL_CALL_TAGS
    text = strip_end_tokens(text)
    action_at, call_at = text.find("\nAction:"), text.find(call)
    if not text.startswith("Thought:") or action_at < 0 or call_at < action_at or not text.endswith(call_end):
        return None
    if text.count(call) != 1 or text.count(call_end) != 1:
        return None
    if not text[len("Thought:") : action_at].strip() or not text[action_at + len("\nAction:") : call_at].strip():
        return None
    return parse_action(text[call_at:], "mobile_use", **parse_kwargs)


_STYLE_READERS = {
    "aguvis": _aguvis_style_action,
    "think_answer": _think_answer_style_action,
    "mobile_use": _mobile_use_style_action,
}


def styled_action(
    completion: Any, prompt_style: str = "aguvis", *, coordinates: str | None = None, image_size: Any = None
) -> Action | None:
    """The action of a completion written exactly in ``prompt_style``, or None when the style is wrong or the
    action does not parse. Never raises.

    - aguvis: a plan ("Action: ..." or "Thought: ...\\nAction: ...", optionally after "Observation: ...") then
      the os channel (a marker of ``OS_MARKERS``) holding exactly one aguvis call;
    - think_answer: ``<think>...</think>`` then ``<answer>...</answer>`` holding one action, nothing else;
    - mobile_use: "Thought: ...\\nAction: ...\\n<tool_call>...</tool_call>" with one mobile_use call.
    """
    try:
        text = completion_text(completion)
        reader = _STYLE_READERS.get(prompt_style)
        if text is None or reader is None:
            return None
        return reader(text, coordinates=coordinates, image_size=image_size)
    except Exception:  # "never raises"
        return None


# ---------------------------------------------------------------- the original projects' own readings


def answer_content(text: Any, *, whole_without_tags: bool = True) -> str | None:
    """The stripped content of the first ``<answer>...</answer>`` of ``text``; without the tags the whole stripped
    text (a ``solution`` written bare), or None when ``whole_without_tags`` is False.
    Example: ``answer_content("<answer>mobile.back()</answer>") == "mobile.back()"``."""
    if not isinstance(text, str):
        return None
    match = _ANSWER.search(text)
    if match is None:
        return text.strip() if whole_without_tags else None
    return match.group(1).strip()


def guir1_answer(text: Any) -> str | None:
    """GUI-R1's format reading: the first answer's content when the whole ``text`` is ``<think>...</think>`` then
    ``<answer>...</answer>`` (whitespace between them only), else None.
    Example: ``guir1_answer("<think>t</think> <answer>[]</answer>") == "[]"``."""
    if not isinstance(text, str) or _GUIR1_OUTER.fullmatch(text) is None:
        return None
    return answer_content(text)


def original_call(text: Any, *, empty_arguments: bool = False) -> tuple[str, str] | None:
    """(name text, argument text) of the first call in a model output, read exactly as R1-V-GUI-Agent's
    eval/test_aitw.py reads it, or None: the text after the first ``assistantos`` (or all of it), then the first
    match of ``(.+?)\\((.+?)\\)``, both groups as they are (no stripping). ``empty_arguments=True`` is the
    argument-less fix: the argument group may be empty, ``(.+?)\\((.*?)\\)``. This is deliberately not
    ``extract_action``: it reproduces the original's reading, quirks included.

    Examples: ``"Action: tap\\nassistantos\\npyautogui.click( x=0.1 )"`` -> ("pyautogui.click", " x=0.1 ");
    ``"mobile.back()"`` -> None, or ("mobile.back", "") with ``empty_arguments``;
    ``"pyautogui.write(message='smile :) ok ')"`` -> ("pyautogui.write", "message='smile :") (the first ")").
    """
    if not isinstance(text, str):
        return None
    _, marker, after = text.partition(ORIGINAL_MARKER)
    match = (_FIXED_CALL if empty_arguments else _ORIGINAL_CALL).search(after if marker else text)
    return None if match is None else (match.group(1), match.group(2))


def original_format_matches(text: Any) -> bool:
    """R1-V-GUI-Agent's format check, bug included: ``re.match`` of
    ``content:\\s*.*?Thought:.*?Action:.*?assistantos`` (no flags) at the start of ``text``."""
    return isinstance(text, str) and _ORIGINAL_FORMAT.match(text) is not None
