"""The peers' regular expressions, matched in linear time (r1_gui.actions.peer_patterns), and ``eval``'s value of an
answer worked out without running it (r1_gui.actions.python_literal).

Each matcher must give exactly what Python's ``re`` gives for the peer's pattern: a table of hand-written cases,
then random strings over the pattern's own characters (hypothesis). The ``re`` patterns here are the reference:
they are facts about the peers' code, copied as strings.
"""

from __future__ import annotations

import json
import re
import warnings

import pytest
from helpers.hostile_text import HOSTILE_SHAPES, cpu_seconds, scorers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from r1_gui.actions.peer_patterns import (
    first_call,
    guir1_outer_fullmatch,
    guir1_point,
    r1v_format_fullmatch,
    tag_content,
)
from r1_gui.actions.python_literal import MAX_BUILT, MAX_PARSED_CHARS, NotEvaluated, python_value

CALL = re.compile(r"(.+?)\((.+?)\)")
ANSWER = r"<answer>(.*?)</answer>"
R1V_FORMAT = re.compile(r"content:\s*(.*?)\s*Thought:\s*(.*?)\s*Action:\s*(.*?)\s*assistantos\s*(.*)", re.DOTALL)
GUIR1_OUTER = re.compile(r"<think>.*?</think>\s*<answer>.*?</answer>", re.DOTALL)
GUIR1_POINT = re.compile(r"\{.*\[(\d+),\s*(\d+)]\s*.*\}")


def eval_literal(text: str):
    """eval of a text of literals written by these tests (no names to call), its warnings silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return eval(text, {"__builtins__": {}})  # noqa: S307


def groups(match: re.Match | None) -> tuple | None:
    return None if match is None else match.groups()


def first_answer(text: str, dotall: bool) -> str | None:
    match = re.search(ANSWER, text, re.DOTALL if dotall else 0)
    return None if match is None else match.group(1)


# (matcher, reference) pairs, by name
MATCHERS = {
    "first_call": (first_call, lambda text: groups(CALL.search(text))),
    "answer_dotall": (
        lambda text: tag_content(text, "<answer>", "</answer>", dotall=True),
        lambda text: first_answer(text, True),
    ),
    "answer_line": (
        lambda text: tag_content(text, "<answer>", "</answer>", dotall=False),
        lambda text: first_answer(text, False),
    ),
    "r1v_format": (r1v_format_fullmatch, lambda text: R1V_FORMAT.fullmatch(text) is not None),
    "guir1_outer": (guir1_outer_fullmatch, lambda text: GUIR1_OUTER.fullmatch(text) is not None),
    "guir1_point": (guir1_point, lambda text: groups(GUIR1_POINT.search(text))),
}

TABLE = [
    # (matcher, text, expected)
    # the first line with a call; the name is the whole line before its first "("
    ("first_call", "I tap (it)\npyautogui.click(x=1)", ("I tap ", "it")),
    # an argument-less call never matches: the arguments need one character
    ("first_call", "mobile.back()", None),
    # ... and "()" then a later ")" on the line reads up to that one
    ("first_call", "mobile.back() or home()", ("mobile.back", ") or home(")),
    # a "(" first on a line has no name; the line's next "(" is tried
    ("first_call", "(a(b)", ("(a", "b")),
    # the match never crosses a line
    ("first_call", "f(a\n)", None),
    # an unclosed call, then a call on the next line
    ("first_call", "f(a\ng(b)", ("g", "b")),
    # with DOTALL the answer may span lines
    ("answer_dotall", "<answer>\na\n</answer>", "\na\n"),
    # the first <answer> that has a </answer> after it
    ("answer_dotall", "</answer><answer>a</answer><answer>b</answer>", "a"),
    # without DOTALL the first one held on one line
    ("answer_line", "<answer>a\n<answer>b</answer>", "b"),
    # an empty answer
    ("answer_line", "<answer></answer>", ""),
    # "content:" first, then the three markers in order, anything between
    ("r1v_format", "content:Thought:Action:assistantos", True),
    # the markers out of order
    ("r1v_format", "content: Action: a Thought: t assistantos", False),
    # a space before "content:" fails the full match
    ("r1v_format", " content: Thought: Action: assistantos", False),
    # an empty think and whitespace between the parts pass
    ("guir1_outer", "<think></think>\n <answer>x</answer>", True),
    # anything after </answer> fails
    ("guir1_outer", "<think>t</think><answer>x</answer>\n", False),
    # a later </think> can be the one followed by <answer>
    ("guir1_outer", "<think>a</think>b</think><answer>x</answer>", True),
    # "<answer></answer>" needs its own "<answer>" before the last "</answer>"
    ("guir1_outer", "<think></think></answer>", False),
    # the LAST [x, y] of the first "{"'s line that has a "}" after it
    ("guir1_point", "{'point': [1, 2], 'end': [3, 4]}", ("3", "4")),
    # a later [x, y] without a "}" after it on its line does not count
    ("guir1_point", "{'point': [1, 2]} [3, 4]", ("1", "2")),
    # the whitespace after the comma may cross lines, and so may the one after "]"
    ("guir1_point", "{[1,\n 2]\n  }", ("1", "2")),
    # negative numbers are not digits
    ("guir1_point", "{'point': [-1, 2]}", None),
    # Unicode decimal digits are digits to \d
    ("guir1_point", "{'point': [٣, ٤]}", ("٣", "٤")),
    # a line without "{" cannot start a match; the next line can
    ("guir1_point", "[1, 2]}\n{[3, 4]}", ("3", "4")),
]


@pytest.mark.parametrize("name, text, expected", TABLE)
def test_matchers_by_hand(name, text, expected):
    matcher, reference = MATCHERS[name]
    assert reference(text) == expected  # the table itself is right about re
    assert matcher(text) == expected


ALPHABETS = {
    "first_call": ["a", "(", ")", "\n", " "],
    "answer_dotall": ["<answer>", "</answer>", "a", "\n", "<", ">"],
    "answer_line": ["<answer>", "</answer>", "a", "\n", "<", ">"],
    "r1v_format": ["content:", "Thought:", "Action:", "assistantos", "content", "Action", " ", "\n", "a"],
    "guir1_outer": ["<think>", "</think>", "<answer>", "</answer>", " ", "\n", "\t", "a", "<"],
    "guir1_point": ["{", "}", "[", "]", "1", "23", "٣", ",", " ", "\n", "\u00a0", "a", "-"],
}


@pytest.mark.parametrize("name", sorted(MATCHERS))
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_matchers_equal_re_on_random_strings(name, data):
    text = "".join(data.draw(st.lists(st.sampled_from(ALPHABETS[name]), max_size=16)))
    matcher, reference = MATCHERS[name]
    assert matcher(text) == reference(text)


# ----------------------------------------------------------------------------------------- python_value

VALUE_CASES = [
    # (text, expected value): what eval returns
    # a GUI-R1 answer
    ("[{'action': 'click', 'point': [1, 2], 'input_text': 'x'}]",
     [{"action": "click", "point": [1, 2], "input_text": "x"}]),
    # the same in JSON spelling (the fast path)
    ('[{"action": "click", "point": [1, 2]}]', [{"action": "click", "point": [1, 2]}]),
    # arithmetic on literals
    ("[1 + 1, 2 * 3, 7 // 2, -7 % 3, 2 ** 10, 1 / 4]", [2, 6, 3, 2, 1024, 0.25]),
    # the builtin constants
    ("(True, False, None, ...)", (True, False, None, ...)),
    # strings: concatenation, repetition, escapes, implicit joining, f-strings without a spec
    ("'a' + 'b' * 2 + '\\n' 'c' + f'{1}{2!r}'", "abb\nc12"),
    # comparisons chain and short-circuit; and / or return an operand
    ("[1 < 2 < 3, 1 < 2 > 3, 0 or 'x', 1 and 0, 1 in [1], 'a' not in 'b']", [True, False, "x", 0, True, True]),
    # a conditional evaluates only its branch (1/0 is never computed)
    ("1 if True else 1 / 0", 1),
    # subscripts, slices, unpacking
    ("[[1, 2, 3][::-1], 'abc'[1], {'k': 2}['k'], [*'ab'], {**{'a': 1}, 'b': 2}]",
     [[3, 2, 1], "b", 2, ["a", "b"], {"a": 1, "b": 2}]),
    # dict keys: equal keys keep the first key and the last value
    ("{1: 'a', 1.0: 'b'}", {1: "b"}),
    # leading spaces and tabs are stripped, as eval does
    (" \t[1]", [1]),
    # a comment
    ("[1] # note", [1]),
    # -0, big floats
    ("[-0, -0.0, 1e999]", [0, -0.0, float("inf")]),
    # nested 200 deep: the parser's limit
    ("[" * 200 + "]" * 200, eval_literal("[" * 200 + "]" * 200)),
    # plain literal text (the fast reader): parentheses, one-tuples, trailing commas, signs, sets, the whitespace
    # Python skips inside brackets
    ("[(1), (1,), (), (1, 2,), -1, -0.5, {1, True}, {'a': 1, 'a': 2,}, {}, \"b\"]",
     [1, (1,), (), (1, 2), -1, -0.5, {1}, {"a": 2}, {}, "b"]),
    ("[1,\r\n\t\f2]", [1, 2]),
    # a 4,000-digit int is plain; 4,001 digits go to the parser, which still takes up to 4,300
    ("[" + "9" * 4001 + "]", [int("9" * 4001)]),
]  # fmt: skip


@pytest.mark.parametrize("text, expected", VALUE_CASES)
def test_python_value_by_hand(text, expected):
    assert repr(python_value(text)) == repr(expected)  # repr tells 0 from 0.0 and 1 from True


RAISE_CASES = [
    # (text, the exception eval raises)
    # a syntax error
    ("[1, 2", SyntaxError),
    # 201 nested brackets: too many for the parser
    ("[" * 201 + "]" * 201, SyntaxError),
    # an empty answer
    ("", SyntaxError),
    # a lone surrogate cannot be encoded as source
    ("['\ud800']", UnicodeEncodeError),
    # division by zero, a bad index, an unhashable set item, a non-mapping after **
    ("1 / 0", ZeroDivisionError),
    ("[1][5]", IndexError),
    ("{[1]}", TypeError),
    ("{**[(1, 2)]}", TypeError),
    # more digits than int() converts
    ("9" * 4301, SyntaxError),
    # plain text that Python reads otherwise: a vertical tab is no whitespace to it, a set of lists cannot be built
    ("[1\x0b]", SyntaxError),
    ("{[1]}", TypeError),
    ("[1, 2] [0 1]", SyntaxError),
]


@pytest.mark.parametrize("text, error", RAISE_CASES)
def test_python_value_raises_what_eval_raises(text, error):
    with pytest.raises(error):
        python_value(text)


REFUSED_CASES = [
    # text eval would value by running code, or by work too large to do: r1_gui declines (scored as eval raising)
    "dict(a=1)",  # a call
    "json.dumps(1)",  # a name and an attribute
    "[x for x in 'ab']",  # a comprehension
    "lambda: 1",  # a function
    "(y := 1)",  # an assignment
    "1 is 1",  # identity
    "'%s' % 1",  # %-formatting
    "f'{1:>9}'",  # a format spec
    "[[0]] * 2",  # repeating a list of containers
    "'a' * (MAX + 1)".replace("MAX", str(MAX_BUILT)),  # too many characters
    "2 ** 200_000",  # too many bits
    "[" + "(), " * MAX_PARSED_CHARS + "x]",  # long, and not plain literal text: not parsed
]


@pytest.mark.parametrize("text", REFUSED_CASES)
def test_python_value_refuses_what_needs_running(text):
    with pytest.raises(NotEvaluated):
        python_value(text)


def outcome(function, text: str) -> tuple[str, str]:
    """("value", its repr: 0 is not 0.0, 1 is not True), ("raises", the exception's name) or ("refused", "")."""
    try:
        return "value", repr(function(text))
    except NotEvaluated:
        return "refused", ""
    except Exception as error:  # noqa: BLE001
        return "raises", type(error).__name__


def agrees_with_eval(text: str) -> bool:
    """python_value(text) is what eval(text) is, or a documented refusal (a name, "%" on a string)."""
    actual = outcome(python_value, text)
    return actual[0] == "refused" or actual == outcome(eval_literal, text)


LITERAL_PIECES = ["1", "0", "2.5", "-", "+", "/", "%", "(", ")", "[", "]", "{", "}", ",", ":", " ", "'a'", '"b"',
                  "True", "None", " and ", " or ", "not ", " if ", " else ", "==", "<", " in ", "e3", "j",
                  "\n"]  # fmt: skip


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(LITERAL_PIECES), max_size=14).map("".join))
def test_python_value_equals_eval_on_random_expressions(text):
    # the pieces hold no name that could call anything and no "*" (no runaway powers): eval is safe on them here
    assert agrees_with_eval(text)


PLAIN_PIECES = ["1", "0", "-", "-1", "2.5", "(", ")", "[", "]", "{", "}", ",", ":", " ", "\n", "\t", "\f", "\r",
                "\x0b", "'a'", '"b"', "''", "'\t'", "True", "None", "01", "1e5", ".5", "'", "#", "\u2028",
                "é"]  # fmt: skip


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(PLAIN_PIECES), min_size=1, max_size=12).map("".join))
def test_python_value_of_plain_literal_text_equals_eval(text):
    # the pieces of plain literal text and their near misses: the fast reader and the parser must agree with eval
    assert agrees_with_eval(text)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=4),
    max_leaves=12,
)


@settings(max_examples=500, deadline=None)
@given(JSON_VALUES)
def test_python_value_of_json_text_equals_eval(value):
    # JSON text: the JSON reader where JSON and Python agree (true / false / null are names to Python: refused)
    assert agrees_with_eval(json.dumps(value, ensure_ascii=False))


# ------------------------------------------------------------------------------------------------- hostile text


@pytest.mark.parametrize("shape", sorted(HOSTILE_SHAPES))
def test_a_megabyte_of_hostile_text_scores_quickly_through_every_reward_and_metric(shape):
    # linear time everywhere: the slowest scorer takes about 0.8 CPU seconds per megabyte (bench/hostile_text.py);
    # the bound is generous so that a loaded machine cannot fail it, a backtracking pattern would take hours
    text = HOSTILE_SHAPES[shape](1_000_000)
    slow = {name: seconds for name, scorer in scorers().items() if (seconds := cpu_seconds(scorer, text)) > 5.0}
    assert not slow
