"""The Aguvis action format: one pyautogui / mobile call, e.g. ``pyautogui.click(x=0.36, y=0.13)``.

The text is parsed with ``ast.parse`` and only literal arguments (numbers, strings, lists/tuples of them, a sign
on a number) are read: names, calls, attribute access beyond the dotted function name, f-strings, lambdas,
comprehensions and ``*``/``**`` unpacking make the text unparseable. Nothing is ever evaluated.

Calls (keyword or positional arguments, either quoting, any spacing) and the action types they give:

- ``pyautogui.click(x=, y=)`` -> click; ``doubleClick``, ``rightClick``, ``moveTo``, ``dragTo`` -> double_click,
  right_click, move_to, drag_to (``dragTo`` has only the destination)
- ``mobile.long_press(x=, y=)`` -> long_press
- ``mobile.swipe(from_coord=[x, y], to_coord=[x2, y2])`` -> swipe
- ``pyautogui.write(message='...')`` (or ``typewrite``) -> type
- ``pyautogui.press(keys='enter')`` or ``keys=['enter']`` -> press; ``pyautogui.hotkey(keys=['ctrl', 'c'])`` or
  ``hotkey('ctrl', 'c')`` -> hotkey
- ``pyautogui.scroll(page=p)`` / ``pyautogui.hscroll(page=p)``, optionally ``x=, y=`` -> scroll
- ``mobile.home()``, ``mobile.back()`` -> home, back
- ``mobile.open_app(app_name='...')`` -> open_app
- ``mobile.wait(seconds=3)`` or ``mobile.wait()`` -> wait
- ``mobile.terminate(status='success' | 'failure')`` or bare ``terminate(...)`` -> terminate
- ``answer('...')`` -> answer

Scroll sign convention (pyautogui's): ``scroll(page<0)`` = down, ``scroll(page>0)`` = up,
``hscroll(page>0)`` = right, ``hscroll(page<0)`` = left; ``page=0`` is unparseable. Only the direction is kept;
the formatter writes ``page=-0.1`` / ``page=0.1`` (the magnitude of the Aguvis examples).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import Any

from .coords import coordinate_scale, denormalize_point, to_unit
from .core import Action, answer_text, is_number, wait_action

SCROLL_PAGE = 0.1  # magnitude written by the formatter; the parser keeps only the sign

_POINT_CALLS = {
    "pyautogui.click": "click",
    "pyautogui.doubleClick": "double_click",
    "pyautogui.rightClick": "right_click",
    "pyautogui.moveTo": "move_to",
    "pyautogui.dragTo": "drag_to",
    "mobile.long_press": "long_press",
}
# dotted function name -> (action type, positional parameter names)
_SIGNATURES: dict[str, tuple[str, tuple[str, ...]]] = {
    **{name: (action_type, ("x", "y")) for name, action_type in _POINT_CALLS.items()},
    "mobile.swipe": ("swipe", ("from_coord", "to_coord")),
    "pyautogui.write": ("type", ("message",)),
    "pyautogui.typewrite": ("type", ("message",)),
    "pyautogui.press": ("press", ("keys",)),
    "pyautogui.hotkey": ("hotkey", ("keys",)),
    "pyautogui.scroll": ("scroll", ("page", "x", "y")),
    "pyautogui.hscroll": ("scroll", ("page", "x", "y")),
    "mobile.home": ("home", ()),
    "mobile.back": ("back", ()),
    "mobile.open_app": ("open_app", ("app_name",)),
    "mobile.wait": ("wait", ("seconds",)),
    "mobile.terminate": ("terminate", ("status",)),
    "terminate": ("terminate", ("status",)),
    "answer": ("answer", ("text",)),
}
_FORMAT_NAMES = {action_type: name for name, action_type in _POINT_CALLS.items()}


class _NotLiteral(Exception):
    pass


def _literal(node: ast.AST) -> Any:
    """The value of a literal argument node; raises _NotLiteral for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float)):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = node.operand
        if isinstance(operand, ast.Constant) and isinstance(operand.value, (int, float)):
            if isinstance(operand.value, bool):
                raise _NotLiteral
            return -operand.value if isinstance(node.op, ast.USub) else operand.value
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_literal(element) for element in node.elts]
    raise _NotLiteral


def _dotted_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        prefix = _dotted_name(node.value)
        return None if prefix is None else f"{prefix}.{node.attr}"
    return None


def _bind(call: ast.Call, params: tuple[str, ...], varargs: bool) -> dict[str, Any] | None:
    """Positional and keyword literal arguments bound to parameter names; None on any mismatch."""
    positional = [_literal(arg) for arg in call.args if not isinstance(arg, ast.Starred)]
    if len(positional) != len(call.args):
        return None
    if varargs and len(positional) > 1:  # hotkey('ctrl', 'c')
        positional = [positional]
    if len(positional) > len(params):
        return None
    bound = dict(zip(params, positional, strict=False))  # missing trailing arguments stay unbound
    for keyword in call.keywords:
        if keyword.arg is None or keyword.arg not in params or keyword.arg in bound:
            return None
        bound[keyword.arg] = _literal(keyword.value)
    return bound


def _point(x: Any, y: Any, scale: tuple[float, float]) -> tuple[float, float] | None:
    if not (is_number(x) and is_number(y)):
        return None
    unit_x, unit_y = to_unit(x, scale[0]), to_unit(y, scale[1])
    return None if unit_x is None or unit_y is None else (unit_x, unit_y)


def _pair(value: Any, scale: tuple[float, float]) -> tuple[float, float] | None:
    if not isinstance(value, list) or len(value) != 2:
        return None
    return _point(value[0], value[1], scale)


def _keys(value: Any) -> tuple[str, ...] | None:
    keys = [value] if isinstance(value, str) else value
    if not isinstance(keys, list) or not keys or not all(isinstance(key, str) and key for key in keys):
        return None
    return tuple(keys)


def _build(name: str, action_type: str, args: dict[str, Any], scale: tuple[float, float]) -> Action | None:
    if action_type in _FORMAT_NAMES:
        point = _point(args.get("x"), args.get("y"), scale)
        return None if point is None else Action(action_type, x=point[0], y=point[1])
    if action_type == "swipe":
        start, end = _pair(args.get("from_coord"), scale), _pair(args.get("to_coord"), scale)
        if start is None or end is None:
            return None
        return Action("swipe", x=start[0], y=start[1], x2=end[0], y2=end[1])
    if action_type == "scroll":
        return _build_scroll(name, args, scale)
    if action_type in ("press", "hotkey"):
        keys = _keys(args.get("keys"))
        return None if keys is None else Action(action_type, keys=keys)
    text_param = {"type": "message", "open_app": "app_name", "answer": "text"}.get(action_type)
    if text_param is not None:
        text = args.get(text_param)
        return Action(action_type, text=text) if isinstance(text, str) else None
    if action_type == "wait":
        return wait_action(args.get("seconds"))
    if action_type == "terminate":
        status = args.get("status")
        return Action("terminate", status=status) if status in ("success", "failure") else None
    return Action(action_type)  # home, back


def _build_scroll(name: str, args: dict[str, Any], scale: tuple[float, float]) -> Action | None:
    page = args.get("page")
    if not is_number(page) or page != page or page == 0:
        return None
    horizontal = name.endswith("hscroll")
    direction = ("right" if page > 0 else "left") if horizontal else ("up" if page > 0 else "down")
    if "x" not in args and "y" not in args:
        return Action("scroll", direction=direction)
    point = _point(args.get("x"), args.get("y"), scale)
    return None if point is None else Action("scroll", direction=direction, x=point[0], y=point[1])


def parse_aguvis(
    text: str, coordinates: str = "normalized", image_size: Sequence[float] | None = None
) -> Action | None:
    """Parse one Aguvis call (see the module docstring); None when it is not exactly one known literal call."""
    try:
        scale = coordinate_scale(coordinates, image_size)
        tree = ast.parse(answer_text(text).strip(), mode="eval")
        call = tree.body
        if not isinstance(call, ast.Call):
            return None
        name = _dotted_name(call.func)
        if name not in _SIGNATURES:
            return None
        action_type, params = _SIGNATURES[name]
        args = _bind(call, params, varargs=action_type == "hotkey")
        return None if args is None else _build(name, action_type, args, scale)
    except (_NotLiteral, SyntaxError, ValueError, TypeError, RecursionError, MemoryError, OverflowError):
        return None


def format_number(value: float) -> str:
    """Up to 4 decimals, trailing zeros trimmed, at least one decimal: 0.36 -> '0.36', 1.0 -> '1.0'."""
    text = f"{value:.4f}".rstrip("0")
    return text + "0" if text.endswith(".") else text


def quote(text: str) -> str:
    """A single-quoted Python string literal for ``text`` that ``ast`` reads back exactly (any unicode)."""
    out = ["'"]
    for char in text:
        if char == "\\":
            out.append("\\\\")
        elif char == "'":
            out.append("\\'")
        elif char.isprintable():
            out.append(char)
        else:
            out.append(repr(char)[1:-1])  # \n, \t, \x00, \u2028, lone surrogates ...
    out.append("'")
    return "".join(out)


def _coords(x: float, y: float, coordinates: str, image_size: Sequence[float] | None) -> tuple[str, str]:
    a, b = denormalize_point(x, y, coordinates, image_size)
    if coordinates == "normalized":
        return format_number(a), format_number(b)
    return str(a), str(b)


def format_aguvis(action: Action, coordinates: str = "normalized", image_size: Sequence[float] | None = None) -> str:
    """The Aguvis call for ``action``; ``parse_aguvis`` reads it back to an equal Action."""
    kind = action.type
    if kind in _FORMAT_NAMES:
        x, y = _coords(action.x, action.y, coordinates, image_size)
        return f"{_FORMAT_NAMES[kind]}(x={x}, y={y})"
    if kind == "swipe":
        x, y = _coords(action.x, action.y, coordinates, image_size)
        x2, y2 = _coords(action.x2, action.y2, coordinates, image_size)
        return f"mobile.swipe(from_coord=[{x}, {y}], to_coord=[{x2}, {y2}])"
    if kind == "scroll":
        function = "scroll" if action.direction in ("up", "down") else "hscroll"
        page = SCROLL_PAGE if action.direction in ("up", "right") else -SCROLL_PAGE
        where = ""
        if action.point is not None:
            x, y = _coords(action.x, action.y, coordinates, image_size)
            where = f", x={x}, y={y}"
        return f"pyautogui.{function}(page={page}{where})"
    if kind in ("press", "hotkey"):
        return f"pyautogui.{kind}(keys=[{', '.join(quote(key) for key in action.keys)}])"
    if kind == "type":
        return f"pyautogui.write(message={quote(action.text)})"
    if kind == "open_app":
        return f"mobile.open_app(app_name={quote(action.text)})"
    if kind == "answer":
        return f"answer({quote(action.text)})"
    if kind == "wait":
        if action.seconds is None:
            return "mobile.wait()"
        seconds = int(action.seconds) if action.seconds.is_integer() else action.seconds
        return f"mobile.wait(seconds={seconds!r})"
    if kind == "terminate":
        return f"mobile.terminate(status={quote(action.status)})"
    if kind in ("home", "back"):
        return f"mobile.{kind}()"
    raise ValueError(f"aguvis format cannot express a {kind!r} action")
