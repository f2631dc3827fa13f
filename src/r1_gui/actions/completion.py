"""Reading a whole model completion: its text, the action in it, and the response styles the rewards check.

Every text -> Action step that starts from a completion lives here, with one table of the markers a completion
may carry (``OS_MARKERS``, ``PLAN_CHANNELS``, ``END_TOKENS`` and the tag pairs). Who reads what:

- ``extract_action`` (rewards, evaluation, builder, environments): the last parseable candidate anywhere, from the
  last os-channel marker of a line on. Every marker of ``OS_MARKERS`` ends in ``<|recipient|>os`` or is
  ``assistantos``, so the long ``<|im_start|>assistant<|recipient|>os`` always ends where its short form does and
  gives the same code: the full table reads exactly as the two short markers alone.
- ``styled_action`` (the ``format`` rewards): the completion written exactly in one prompt style. The Aguvis style
  splits plan from code at the last marker, longest first, so ``<|im_start|>assistant`` never counts as plan.
- ``original_call``, ``original_solution_call``, ``original_format_matches`` (R1-V-GUI-Agent's rewards and
  ``paper_param_match``): the original's own reading, quirks included: only ``ORIGINAL_MARKER`` ("assistantos"),
  its first occurrence, and its regexes (matched in linear time by ``r1_gui.actions.peer_patterns``).
- ``answer_content``, ``guir1_answer``, ``guir1_prediction`` (GUI-R1's rewards): its reading of the first
  ``<answer>``, again with its own regexes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .core import Action
from .parse import parse_action
from .peer_patterns import (
    GUIR1_ACTION,
    GUIR1_INPUT_TEXT,
    first_call,
    guir1_outer_fullmatch,
    guir1_point,
    r1v_format_fullmatch,
    tag_content,
)

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
MAX_PARSED_CHARS = 200_000  # characters parsed per completion, from its end: the same for very long candidates
# What GUI-R1's accuracy reads when the answer has no action, no input text, no point (its r1gui.py).
GUIR1_NO_ACTION, GUIR1_NO_INPUT_TEXT, GUIR1_NO_COORD = "no action", "no input text", (0, 0, 0, 0)


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
    """(end position, priority, text) of every tag content and of the last lines that can hold an action (enough
    for ``MAX_CANDIDATES`` tries); str.find / rfind only, so linear time."""
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
    return found + _line_candidates(text)


_CLOSERS = (")", "]", "}")
_LAST_CHARS = (*_CLOSERS, "`", ">")  # what a line that can hold an action ends with, before cleaning


def _line_candidates(text: str) -> list[tuple[int, int, str]]:
    """(end position, priority, text) of the lines that can hold an action, from the last one back until there are
    ``MAX_CANDIDATES``: only lines holding a ")", "]" or "}" are looked at (the last of each is kept, so each scan
    backwards covers new text only), and a line whose last character is none of ``_LAST_CHARS`` is skipped."""
    found: list[tuple[int, int, str]] = []
    last = {closer: text.rfind(closer) for closer in _CLOSERS}
    while len(found) < MAX_CANDIDATES:
        closing = max(last.values())
        if closing < 0:
            break
        start, end = text.rfind("\n", 0, closing) + 1, text.find("\n", closing)
        end = len(text) if end < 0 else end
        line = text[start:end]
        if line.rstrip()[-1:] in _LAST_CHARS:
            found.extend((end, priority, variant) for priority, variant in _line_variants(line))
        for closer, position in last.items():
            if position >= start:
                last[closer] = text.rfind(closer, 0, start)
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
    wins (at most ``MAX_CANDIDATES`` tries and ``MAX_PARSED_CHARS`` characters, from the end: an action only hostile
    text could hide, in linear time). ``completion`` may be a string or a TRL conversational completion. Example:
    ``extract_action("Action: tap OK\\nassistantos\\npyautogui.click(x=0.5, y=0.9)")`` is a click.
    """
    try:
        text = completion_text(completion)
        if text is None:
            return None
        candidates = sorted(_candidates(text), key=lambda c: (c[0], c[1]), reverse=True)
        parsed = 0
        for _, _, candidate in candidates[:MAX_CANDIDATES]:
            parsed += len(candidate)
            if parsed > MAX_PARSED_CHARS and parsed > len(candidate):  # the first candidate is always tried
                return None
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
    """The stripped content of the first ``<answer>...</answer>`` of ``text`` (GUI-R1's
    ``re.search(r"<answer>(.*?)</answer>", text, re.DOTALL)``); without the tags the whole stripped text (a
    ``solution`` written bare), or None when ``whole_without_tags`` is False.
    Example: ``answer_content("<answer>mobile.back()</answer>") == "mobile.back()"``."""
    if not isinstance(text, str):
        return None
    content = tag_content(text, *ANSWER_TAGS, dotall=True)
    if content is None:
        return text.strip() if whole_without_tags else None
    return content.strip()


def guir1_answer(text: Any) -> str | None:
    """GUI-R1's format reading (its r1gui_format_reward): the first answer's stripped content when the whole
    ``text`` fullmatches ``<think>.*?</think>\\s*<answer>.*?</answer>`` (DOTALL), else None. An end-of-turn token or
    a newline after ``</answer>`` fails, an empty ``<think></think>`` passes, and the first ``<answer>`` may sit inside
    the think part. Example: ``guir1_answer("<think>t</think> <answer>[]</answer>") == "[]"``."""
    if not isinstance(text, str) or not guir1_outer_fullmatch(text):
        return None
    return answer_content(text)


def guir1_prediction(text: Any) -> tuple[str, str, tuple[int, ...]]:
    """(action, input_text, point) as GUI-R1's accuracy reward reads them from a completion (r1gui.py's
    extract_action, extract_input_text, extract_coord), quirks included: in the first answer's stripped content,
    the first ``'action':\\s*'(\\w+)'`` (single quotes only: a JSON answer has no action), the first
    ``'input_text':\\s*'(.*?)'`` (ending at the next quote, an apostrophe included), and the point of
    ``\\{.*\\[(\\d+),\\s*(\\d+)]\\s*.*\\}`` (the last "[x, y]" of the line of the first "{", non-negative
    integers only; more digits than Python's int() reads, 4,300, give none). What is missing reads as
    ``GUIR1_NO_ACTION``, ``GUIR1_NO_INPUT_TEXT``, ``GUIR1_NO_COORD``; a non-string raises TypeError as there.
    Example: ``guir1_prediction("<answer>[{'action': 'click', 'point': [3, 4], 'input_text': 'no input text'}]"
    "</answer>") == ("click", "no input text", (3, 4))``."""
    if not isinstance(text, str):
        raise TypeError(f"expected a string completion, got {type(text).__name__}")
    answer = answer_content(text, whole_without_tags=False)
    if answer is None:
        return GUIR1_NO_ACTION, GUIR1_NO_INPUT_TEXT, GUIR1_NO_COORD
    action, input_text = GUIR1_ACTION.search(answer), GUIR1_INPUT_TEXT.search(answer)
    point = guir1_point(answer)
    try:
        coord = GUIR1_NO_COORD if point is None else (int(point[0]), int(point[1]))
    except ValueError:  # more digits than int() converts
        coord = GUIR1_NO_COORD
    return (
        GUIR1_NO_ACTION if action is None else action.group(1),
        GUIR1_NO_INPUT_TEXT if input_text is None else input_text.group(1),
        coord,
    )


def original_answer(text: Any) -> str | None:
    """R1-V-GUI-Agent's reading of a model output (its accuracy reward and eval/test_aitw.py): the text after the
    first ``ORIGINAL_MARKER``, or all of it without one, stripped. Example: ``original_answer("Action: tap\\n"
    "assistantos pyautogui.click(x=0.1)") == "pyautogui.click(x=0.1)"``."""
    if not isinstance(text, str):
        return None
    _, marker, after = text.partition(ORIGINAL_MARKER)
    return (after if marker else text).strip()


def original_solution(solution: Any) -> str | None:
    """R1-V-GUI-Agent's reading of the dataset's ``solution``: the stripped content of the first
    ``<answer>...</answer>`` held on one line (``re.search`` without DOTALL), else the whole stripped text (where
    its eval script, given no tags, would crash). Example: ``original_solution("<answer>\\nmobile.back()\\n"
    "</answer>")`` is the whole text stripped: the tags span lines."""
    if not isinstance(solution, str):
        return None
    content = tag_content(solution, *ANSWER_TAGS, dotall=False)
    return (solution if content is None else content).strip()


def original_call(text: Any) -> tuple[str, str] | None:
    """(name text, argument text) of the first call in a model output, read exactly as R1-V-GUI-Agent reads it,
    or None: ``original_answer``, then the first match of ``(.+?)\\((.+?)\\)`` (one line; both groups kept as
    they are, spaces included; ``peer_patterns.first_call``). Argument-less calls (``mobile.back()``) never match,
    and the arguments end at the first ")" at least one character after the "(".

    Examples: ``"Action: tap\\nassistantos\\npyautogui.click( x=0.1 )"`` -> ("pyautogui.click", " x=0.1 ");
    ``"mobile.back()"`` -> None; ``"pyautogui.write(message='smile :) ok ')"`` -> ("pyautogui.write",
    "message='smile :"); ``"mobile.back() or home()"`` -> ("mobile.back", ") or home(")."""
    answer = original_answer(text)
    return None if answer is None else first_call(answer)


def original_solution_call(solution: Any) -> tuple[str, str] | None:
    """``original_call``'s reading of the dataset's ``solution`` (``original_solution``, no marker), or None."""
    truth = original_solution(solution)
    return None if truth is None else first_call(truth)


def original_format_matches(text: Any) -> bool:
    """R1-V-GUI-Agent's format check: ``re.fullmatch`` of
    ``content:\\s*(.*?)\\s*Thought:\\s*(.*?)\\s*Action:\\s*(.*?)\\s*assistantos\\s*(.*)`` with DOTALL, i.e. the text
    starts with "content:" and holds "Thought:", "Action:" and "assistantos" after it in this order
    (``peer_patterns.r1v_format_fullmatch``). Decoded Aguvis output never starts with "content:"."""
    return isinstance(text, str) and r1v_format_fullmatch(text)
