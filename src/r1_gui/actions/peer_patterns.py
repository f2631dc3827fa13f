"""The regular expressions the peers' rewards and evaluation scripts apply to model output, matched in linear time.

R1-V-GUI-Agent and GUI-R1 read completions with patterns that backtrack: ``(.+?)\\((.+?)\\)`` took 1.7 s on 1,024
``(`` and grows with the cube of the length; ``<answer>(.*?)</answer>`` and ``\\{.*\\[(\\d+),\\s*(\\d+)]\\s*.*\\}``
grow with its square. Each function here returns exactly what Python's ``re`` returns for the pattern it names
(the same first match, the same groups: tests/test_peer_patterns.py checks every one against ``re`` on random
strings of the pattern's own characters) with ``str.find`` scans that look at each character a bounded number of
times. The two peer patterns that are linear already (a literal prefix, then runs that cannot overlap) stay
``re`` patterns: ``GUIR1_ACTION`` and ``GUIR1_INPUT_TEXT``.

Character classes as ``re`` defines them for ``str`` patterns, checked on every code point: ``.`` is any character
but "\\n" (no DOTALL), ``\\s`` is ``str.isspace``, ``\\d`` is ``str.isdecimal``.
"""

from __future__ import annotations

import re

# GUI-R1's r1gui.py: the action name and the input text of an answer. Linear as they are: each match starts at the
# literal key, and the runs a failed start scans (whitespace, a word, the rest of a line without "'") end before
# the next start.
GUIR1_ACTION = re.compile(r"'action':\s*'(\w+)'")
GUIR1_INPUT_TEXT = re.compile(r"'input_text':\s*'(.*?)'")
# Runs that can only be matched one way (anchored, one character class), for the scans below.
_SPACE = re.compile(r"\s*")
_POINT = re.compile(r"\[(\d+),\s*(\d+)]")


def tag_content(text: str, open_tag: str, close_tag: str, *, dotall: bool) -> str | None:
    """group(1) of ``re.search(re.escape(open_tag) + "(.*?)" + re.escape(close_tag), text, re.DOTALL if dotall
    else 0)``, or None. For tags without "\\n" that cannot overlap each other (``<answer>``, ``</answer>``).

    With DOTALL the first ``open_tag`` that has a ``close_tag`` after it wins, and if the first has none no later
    one has; without it, the same holds line by line. Example: ``tag_content("<a>x\\n<a>y</a>", "<a>", "</a>",
    dotall=False) == "y"``."""
    start = text.find(open_tag)
    while start >= 0:
        body = start + len(open_tag)
        line_end = len(text) if dotall else _line_end(text, start)
        end = text.find(close_tag, body, line_end)
        if end >= 0:
            return text[body:end]
        if dotall:
            return None
        start = text.find(open_tag, line_end + 1)
    return None


def first_call(text: str) -> tuple[str, str] | None:
    """The groups of ``re.search(r"(.+?)\\((.+?)\\)", text)``, or None.

    ``.`` does not cross "\\n", so the match lies in one line: the first line whose first "(" after its first
    character has a ")" at least two characters after it. The name is the line up to that "(", the arguments run
    to the first such ")". Example: ``first_call("f(a) (b)") == ("f", "a")``; ``first_call("f()") is None``."""
    position = 0
    while True:
        opening = text.find("(", position)
        if opening < 0:
            return None
        line_start = text.rfind("\n", 0, opening) + 1
        if opening == line_start:  # the name needs a character: the line's next "(" is the one to try
            position = opening + 1
            continue
        line_end = _line_end(text, opening)
        closing = text.find(")", opening + 2, line_end)
        if closing >= 0:
            return text[line_start:opening], text[opening + 1 : closing]
        position = line_end + 1  # no later "(" of this line can have a ")" after it either


def r1v_format_fullmatch(text: str) -> bool:
    """Whether ``re.fullmatch(r"content:\\s*(.*?)\\s*Thought:\\s*(.*?)\\s*Action:\\s*(.*?)\\s*assistantos\\s*(.*)",
    text, re.DOTALL)`` matches (R1-V-GUI-Agent's format reward): "content:" at the start, then "Thought:",
    "Action:" and "assistantos" in this order, anything between and after them. The earliest occurrence of each
    leaves the most room for the next, so taking them in turn decides it."""
    if not text.startswith("content:"):
        return False
    thought = text.find("Thought:", len("content:"))
    action = -1 if thought < 0 else text.find("Action:", thought + len("Thought:"))
    return action >= 0 and text.find("assistantos", action + len("Action:")) >= 0


def guir1_outer_fullmatch(text: str) -> bool:
    """Whether ``re.fullmatch(r"<think>.*?</think>\\s*<answer>.*?</answer>", text, re.DOTALL)`` matches (GUI-R1's
    format reward): "<think>" at the start, "</answer>" at the end, and some "</think>" after the first followed,
    past whitespace only, by an "<answer>" that ends before that last "</answer>" begins. The whitespace runs after
    different "</think>" cannot overlap (each ends at the next "<"), so the scan is linear."""
    think, think_end, answer, answer_end = "<think>", "</think>", "<answer>", "</answer>"
    if not (text.startswith(think) and text.endswith(answer_end)):
        return False
    last_answer_end = len(text) - len(answer_end)
    closing = text.find(think_end, len(think))
    while closing >= 0:
        after = _SPACE.match(text, closing + len(think_end)).end()
        if text.startswith(answer, after) and after + len(answer) <= last_answer_end:
            return True
        closing = text.find(think_end, closing + 1)
    return False


def guir1_point(text: str) -> tuple[str, str] | None:
    """The groups of ``re.search(r"\\{.*\\[(\\d+),\\s*(\\d+)]\\s*.*\\}", text)`` (GUI-R1's point in an
    answer), or None.

    The match starts at the first "{" of the first line that can hold one; the greedy ``.*`` then takes the
    *last* "[" of that line where "[digits,<whitespace>digits]" (``_POINT``; the whitespace may cross lines) is
    followed, past whitespace, by a "}" on the line where the text goes on. A "{" later in a line has only fewer
    "[" after it, so the first "{" of each line is the only start to try there. ``_POINT`` itself is linear: a
    match holds one "[" and its runs end at the next one.
    Example: ``guir1_point("{'point': [3, 4], 'p': [5, 6]}") == ("5", "6")``."""
    line_start = 0
    while True:
        brace = text.find("{", line_start)
        if brace < 0:
            return None
        line_end = _line_end(text, brace)
        last_close = text.rfind("}", brace + 1, line_end)
        # the line's points from the right; only the last "[" of the line can reach past its end
        last_bracket = text.rfind("[", brace + 1, line_end)
        last = _POINT.match(text, last_bracket) if last_bracket >= 0 else None
        crossing = [last] if last is not None and last.end() > line_end else []
        for point in crossing + list(_POINT.finditer(text, brace + 1, line_end))[::-1]:
            rest = _SPACE.match(text, point.end()).end()
            if rest < line_end:
                has_close = last_close >= rest
            else:  # the whitespace crossed into a later line
                has_close = text.find("}", rest, _line_end(text, rest)) >= 0
            if has_close:
                return point.group(1), point.group(2)
        if line_end >= len(text):
            return None
        line_start = line_end + 1


def _line_end(text: str, position: int) -> int:
    end = text.find("\n", position)
    return len(text) if end < 0 else end
