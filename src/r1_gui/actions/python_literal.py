"""What Python's ``eval`` returns for a model's answer, worked out without running it.

GUI-R1's format reward calls ``eval`` on the model's answer. r1_gui never runs model output: ``python_value``
parses the text with Python's own parser (``ast.parse``: eval's syntax errors and nesting limits), then computes
the value of the expression tree itself, for what can be computed without running anything: literals (numbers,
strings, bytes, lists, tuples, dicts, sets, True, False, None, ...), the unary, binary, boolean and comparison
operators on them, conditional expressions, subscripts and slices, ``*``/``**`` unpacking in displays, and
f-strings without a format spec. Errors those raise (``1/0``, ``[1][5]``, ``{[1]}``)
are raised as ``eval`` raises them. Plain literal text, the usual answer, is read without the tree by
``json.loads`` where JSON and Python agree, else by a tokenizer of its own (both tested against ``eval``).

The documented exceptions, where r1_gui raises ``NotEvaluated`` (which its rewards score as if ``eval`` had
raised) and ``eval`` may return a value:

- names (other than True, False, None), attributes, calls, comprehensions, lambdas and ``:=``: they look up or
  run code (``[dict(a=1)]``, ``json.dumps(1)``, ``[x for x in 'ab']``);
- ``is`` / ``is not``: identity depends on how CPython shares constants, not on the values;
- ``%`` with a str or bytes on the left and f-string format specs (``f'{x:>9}'``): formatting mini-languages;
- results too large to build quickly: integer arithmetic whose result or operand would exceed ``MAX_INT_BITS``
  bits, more than ``MAX_BUILT`` items or characters built in all (``'a' * 10**9``), and repeating a list or tuple
  that holds containers (``[[0] * 10**3] * 10**3``: the copies share the inner list, so the value is built at
  once, yet printing, comparing or hashing it walks a million items), where ``eval`` could take seconds or run out
  of memory;
- text longer than ``MAX_PARSED_CHARS`` characters that is not plain literal text (JSON, or Python strings,
  numbers, True / False / None in lists, tuples, dicts and sets): building Python's syntax tree for it costs about
  a second per megabyte, so it is not parsed (plain literal text of any length is read by two fast paths).

Nesting is evaluated without Python recursion, so an expression as deep as ``eval`` accepts (about 3,000 levels)
has its value; near that depth ``eval``'s own limit depends on how deep its caller's stack already is.
"""

from __future__ import annotations

import ast
import json
import operator
import re
import warnings
from collections.abc import Callable, Generator
from typing import Any

MAX_INT_BITS = 100_000  # about 30,000 decimal digits
MAX_PARSED_CHARS = 100_000  # text longer than this is valued only when it is plain literal text (the fast paths)
MAX_BUILT = 1_000_000  # items and characters built by operators and displays, in all


class NotEvaluated(Exception):
    """The expression needs what r1_gui does not do with model output (see the module docstring)."""


def python_value(text: str) -> Any:
    """``eval(text)``'s value, computed without running the text; raises what ``eval`` would raise, or
    ``NotEvaluated`` for the documented exceptions. Example: ``python_value("[1 + 1, 'a']") == [2, "a"]``."""
    text = text.lstrip(" \t")  # as eval does
    for fast_path in (_json_value, _plain_literal_value):
        value = fast_path(text)
        if value is not _NOT_FAST:
            return value
    if len(text) > MAX_PARSED_CHARS:
        raise NotEvaluated(f"longer than {MAX_PARSED_CHARS} characters and not plain literal text")
    with warnings.catch_warnings():  # SyntaxWarning / DeprecationWarning: eval would only warn
        warnings.simplefilter("ignore")
        tree = ast.parse(text, mode="eval")  # eval's parser: the same syntax errors and nesting limits
    return _Evaluation().run(tree.body)


_NOT_FAST = object()  # a fast path's "not mine: parse it as Python"
MAX_NESTING = 200  # brackets Python's tokenizer accepts inside each other ("too many nested parentheses")


def _json_value(text: str) -> Any:
    """The value by ``json.loads`` (a megabyte list in 0.03 s, where Python's parser takes a second) where it is
    certainly ``eval``'s, else ``_NOT_FAST``: a JSON list or object without backslashes (JSON and Python read
    ``\\/`` and surrogate pairs differently), without true / false / null / NaN / Infinity (names to Python),
    nested at most ``MAX_NESTING`` deep, and encodable as UTF-8 (as eval needs). JSON whitespace is Python's inside
    brackets."""
    if text[:1] not in ("[", "{") or text[-1:] not in ("]", "}") or "\\" in text:
        return _NOT_FAST
    try:
        text.encode("utf-8")
        value = json.loads(text, parse_constant=_refuse_constant)
    except (ValueError, RecursionError, UnicodeError):
        return _NOT_FAST
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if item is None or isinstance(item, bool) or depth > MAX_NESTING:
            return _NOT_FAST
        if isinstance(item, (list, dict)):
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return value


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is a name to Python")


# The tokens of plain literal text: strings without backslashes or line breaks, decimal ints and floats (a "-"
# right before one is its sign, as Python folds it), True / False / None, brackets, "," and ":", each after
# whitespace Python skips inside brackets. A number or name followed by more of one (1e5, 0x1, Truex) fails.
_PLAIN_TOKEN = re.compile(
    r"""[ \t\f\r\n]*(?:
        (?P<end>\Z)
      | (?P<str>'[^'\\\r\n]*'|"[^"\\\r\n]*")
      | (?P<float>-?[0-9]+\.[0-9]+(?![0-9A-Za-z_.]))
      | (?P<int>-?(?:0|[1-9][0-9]{0,3999})(?![0-9A-Za-z_.]))
      | (?P<const>(?:True|False|None)(?!\w))
      | (?P<punct>[][(){},:])
    )""",
    re.VERBOSE,
)
_CONSTANTS = {"True": True, "False": False, "None": None}
_CLOSING = {"[": "]", "(": ")", "{": "}"}
_NOTHING = object()


def _plain_literal_value(text: str) -> Any:
    """The value of plain literal text (``_PLAIN_TOKEN``'s tokens as lists, tuples, dicts, sets and parentheses,
    at most ``MAX_NESTING`` deep, no whitespace at either end), read token by token in about half the time Python's
    parser takes to build its tree, else ``_NOT_FAST``. Anything else (adjacent strings, operators, a lone "-", a
    comma outside brackets) is left to the parser, which alone says what is an error."""
    if not text or text[0].isspace() or text[-1].isspace() or "\x00" in text:
        return _NOT_FAST
    try:
        text.encode("utf-8")
    except UnicodeError:
        return _NOT_FAST
    stack: list[list[Any]] = []  # open brackets: [opener, items, pending dict key, saw a comma, "dict"/"set"/None]
    current, position = _NOTHING, 0  # the value just read and not yet placed; where the next token starts
    while True:
        token = _PLAIN_TOKEN.match(text, position)
        if token is None:
            return _NOT_FAST
        position, kind = token.end(), token.lastgroup
        if kind == "end":
            return _NOT_FAST if stack or current is _NOTHING else current
        word = token.group(kind)
        if kind != "punct" or word in _CLOSING:  # a value or an opening bracket: nothing may stand before it
            if current is not _NOTHING:
                return _NOT_FAST
            if kind == "punct":
                if len(stack) == MAX_NESTING:
                    return _NOT_FAST
                stack.append([word, [], _NOTHING, False, None])
            else:
                current = _token_value(kind, word)
            continue
        if not stack or (current is _NOTHING and word in ",:"):
            return _NOT_FAST
        frame = stack[-1]
        if word == ":":
            if frame[0] != "{" or frame[2] is not _NOTHING or frame[4] == "set":
                return _NOT_FAST
            frame[2], current = current, _NOTHING
        elif word == ",":
            if not _place(frame, current):
                return _NOT_FAST
            frame[3], current = True, _NOTHING
        else:  # a closing bracket
            if _CLOSING[frame[0]] != word or (current is not _NOTHING and not _place(frame, current)):
                return _NOT_FAST
            if frame[2] is not _NOTHING:  # "{1:}"
                return _NOT_FAST
            stack.pop()
            try:
                current = _built(frame)
            except TypeError:  # an unhashable item: eval raises too, but only if the rest of the text parses
                return _NOT_FAST


def _token_value(kind: str, word: str) -> Any:
    if kind == "str":
        return word[1:-1]
    if kind == "const":
        return _CONSTANTS[word]
    return float(word) if kind == "float" else int(word)


def _place(frame: list[Any], value: Any) -> bool:
    """Put a finished value into its open bracket; False where Python would read the text otherwise."""
    if frame[2] is not _NOTHING:  # the value of a dict entry
        if frame[4] == "set":
            return False
        frame[1].append((frame[2], value))
        frame[2], frame[4] = _NOTHING, "dict"
        return True
    if frame[0] == "{":
        if frame[4] == "dict":
            return False
        frame[4] = "set"
    frame[1].append(value)
    return True


def _built(frame: list[Any]) -> Any:
    opener, items, _, comma, kind = frame
    if opener == "[":
        return items
    if opener == "(":
        return items[0] if len(items) == 1 and not comma else tuple(items)
    if kind == "set":
        return set(items)
    result: dict[Any, Any] = {}
    for key, value in items:
        result[key] = value
    return result


_UNARY: dict[type, Callable[[Any], Any]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
    ast.Not: operator.not_,
    ast.Invert: operator.invert,
}
_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
    ast.BitAnd: operator.and_,
    ast.MatMult: operator.matmul,
}
_COMPARE: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda left, right: left in right,
    ast.NotIn: lambda left, right: left not in right,
}
_CONVERSIONS = {-1: format, ord("s"): str, ord("r"): repr, ord("a"): ascii}
_SEQUENCES = (str, bytes, list, tuple)
_CONTAINERS = (list, tuple, dict, set, frozenset)

Steps = Generator[ast.AST, Any, Any]  # a node's evaluation: yields the sub-nodes it needs, returns its value


class _Evaluation:
    """One expression's evaluation: each node is a generator that yields the sub-nodes it needs (in ``eval``'s
    order, lazily where ``eval`` short-circuits) and returns its value; ``run`` drives them with a stack."""

    def __init__(self) -> None:
        self.built = 0

    def run(self, root: ast.AST) -> Any:
        stack, value = [self.steps(root)], None
        while stack:
            try:
                node = stack[-1].send(value)
            except StopIteration as done:
                stack.pop()
                value = done.value
                continue
            stack.append(self.steps(node))
            value = None
        return value

    def steps(self, node: ast.AST) -> Steps:
        method = getattr(self, f"_{type(node).__name__}", None)
        if method is None:
            raise NotEvaluated(f"{type(node).__name__} is not evaluated in model output")
        return method(node)

    def charge(self, value: Any) -> Any:
        """Count a built value's items against ``MAX_BUILT``."""
        self.built += len(value) if isinstance(value, (str, bytes, list, tuple, set, dict)) else 0
        if self.built > MAX_BUILT:
            raise NotEvaluated(f"more than {MAX_BUILT} items built")
        return value

    # ------------------------------------------------------------------------------------ literals, displays

    def _Constant(self, node: ast.Constant) -> Steps:
        return node.value
        yield  # a generator like every other node

    def _items(self, elements: list[ast.expr]) -> Steps:
        if all(type(element) is ast.Constant for element in elements):  # the common case, without a step each
            return self.charge([element.value for element in elements])
        items: list[Any] = []
        for element in elements:
            if isinstance(element, ast.Starred):
                items.extend((yield element.value))
            else:
                items.append((yield element))
        return self.charge(items)

    def _List(self, node: ast.List) -> Steps:
        return (yield from self._items(node.elts))

    def _Tuple(self, node: ast.Tuple) -> Steps:
        return tuple((yield from self._items(node.elts)))

    def _Set(self, node: ast.Set) -> Steps:
        return set((yield from self._items(node.elts)))

    def _Dict(self, node: ast.Dict) -> Steps:
        result: dict[Any, Any] = {}
        for key, value in zip(node.keys, node.values, strict=True):
            if key is None:  # {**mapping}: eval accepts only a mapping here, and of literals only a dict is one
                mapping = yield value
                if not isinstance(mapping, dict):
                    raise TypeError(f"'{type(mapping).__name__}' object is not a mapping")
                result.update(mapping)
            else:
                key = yield key
                result[key] = yield value
        return self.charge(result)

    def _JoinedStr(self, node: ast.JoinedStr) -> Steps:
        parts = []
        for part in node.values:
            parts.append((yield part))
        return self.charge("".join(parts))

    def _FormattedValue(self, node: ast.FormattedValue) -> Steps:
        if node.format_spec is not None:
            raise NotEvaluated("f-string format specs are not evaluated in model output")
        value = yield node.value
        return self.charge(format(_CONVERSIONS[node.conversion](value)))

    # ----------------------------------------------------------------------------------------------- operators

    def _UnaryOp(self, node: ast.UnaryOp) -> Steps:
        return _UNARY[type(node.op)]((yield node.operand))

    def _BinOp(self, node: ast.BinOp) -> Steps:
        left = yield node.left
        right = yield node.right
        self.check_size(node.op, left, right)
        return self.charge(_BINARY[type(node.op)](left, right))

    def check_size(self, op: ast.operator, left: Any, right: Any) -> None:
        """NotEvaluated before an operation that would build more than the limits allow."""
        if isinstance(op, ast.Mod) and isinstance(left, (str, bytes)):
            raise NotEvaluated("%-formatting is not evaluated in model output")
        ints = [value for value in (left, right) if isinstance(value, int)]
        if len(ints) == 2 and max(abs(value).bit_length() for value in ints) > MAX_INT_BITS:
            raise NotEvaluated(f"integer arithmetic beyond {MAX_INT_BITS} bits")
        if len(ints) == 2 and _result_bits(op, left, right) > MAX_INT_BITS:
            raise NotEvaluated(f"an integer result beyond {MAX_INT_BITS} bits")
        if isinstance(op, ast.Mult) and len(ints) == 1:
            sequence, count = (left, right) if isinstance(right, int) else (right, left)
            if isinstance(sequence, (list, tuple)) and any(isinstance(item, _CONTAINERS) for item in sequence):
                raise NotEvaluated("repeating a list or tuple of containers is not evaluated in model output")
            if isinstance(sequence, _SEQUENCES) and self.built + _weight(sequence) * max(count, 0) > MAX_BUILT:
                raise NotEvaluated(f"more than {MAX_BUILT} items built")
        if isinstance(op, ast.Add) and isinstance(left, _SEQUENCES) and isinstance(right, _SEQUENCES):
            if self.built + len(left) + len(right) > MAX_BUILT:
                raise NotEvaluated(f"more than {MAX_BUILT} items built")

    def _BoolOp(self, node: ast.BoolOp) -> Steps:
        value = None
        for operand in node.values:
            value = yield operand
            if bool(value) is isinstance(node.op, ast.Or):  # "or" stops at a true value, "and" at a false one
                return value
        return value

    def _Compare(self, node: ast.Compare) -> Steps:
        if any(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
            raise NotEvaluated("'is' compares object identity, which model output cannot fix")
        left, result = (yield node.left), True
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = yield comparator
            result = _COMPARE[type(op)](left, right)
            if not result:
                return result
            left = right
        return result

    def _IfExp(self, node: ast.IfExp) -> Steps:
        return (yield (node.body if (yield node.test) else node.orelse))

    def _Subscript(self, node: ast.Subscript) -> Steps:
        value = yield node.value
        index = yield node.slice
        return self.charge(value[index]) if isinstance(index, slice) else value[index]

    def _Slice(self, node: ast.Slice) -> Steps:
        bounds = []
        for bound in (node.lower, node.upper, node.step):
            bounds.append(None if bound is None else (yield bound))
        return slice(*bounds)


def _weight(sequence: str | bytes | list | tuple) -> int:
    """What one copy of a repeated sequence costs: its items, and the characters and digits they hold (the copies
    share them, but printing or hashing the result walks every one)."""
    if isinstance(sequence, (str, bytes)):
        return len(sequence)
    weights = (len(item) if isinstance(item, (str, bytes)) else _int_weight(item) for item in sequence)
    return len(sequence) + sum(weights)


def _int_weight(value: Any) -> int:
    return abs(value).bit_length() // 64 if isinstance(value, int) else 0


def _result_bits(op: ast.operator, left: int, right: int) -> int:
    """An upper bound on the bits of ``left <op> right`` for the integer operations that grow numbers."""
    if isinstance(op, ast.Mult):
        return left.bit_length() + right.bit_length()
    if isinstance(op, ast.Pow) and right > 0 and abs(left) > 1:
        return left.bit_length() * right
    if isinstance(op, ast.LShift) and right > 0 and left != 0:
        return left.bit_length() + right
    return 0
