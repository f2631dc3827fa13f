"""r1_gui's actions as BrowserGym's coordinate actions (`HighLevelActionSet(subsets=["coord"])` plus `noop`), written
in screenshot pixels: BrowserGym maps them back to the page (a MiniWoB++ screenshot is the page at 1.5x).

    browsergym_action(Action("click", x=0.5, y=0.25), (498, 321))      # 'mouse_click(249.0, 80.25)'
    browsergym_action(Action("hotkey", keys=("ctrl", "a")), (498, 321)) # "keyboard_press('Control+a')"

Returns (the action string, None) or (None, why the action has nothing to do in a browser): home, back, open_app and
answer; terminate is the caller's (it ends the episode without touching the page).
"""

from __future__ import annotations

from r1_gui.actions import Action

SCROLL_PIXELS = 100  # one scroll step, in screenshot pixels
LONG_PRESS_MS = 1000
MAX_WAIT_MS = 1000
MAX_TYPED_CHARS = 256
KEYS = {  # r1_gui key names (pyautogui's, lower case) -> playwright's
    "enter": "Enter", "return": "Enter", "tab": "Tab", "backspace": "Backspace", "delete": "Delete", "del": "Delete",
    "escape": "Escape", "esc": "Escape", "space": "Space", "up": "ArrowUp", "down": "ArrowDown", "left": "ArrowLeft",
    "right": "ArrowRight", "home": "Home", "end": "End", "pageup": "PageUp", "pagedown": "PageDown",
    "insert": "Insert", "ctrl": "Control", "control": "Control", "shift": "Shift", "alt": "Alt", "meta": "Meta",
    "command": "Meta", "cmd": "Meta", "win": "Meta",
}  # fmt: skip
NOT_IN_A_BROWSER = {
    "home": "a web page has no home screen",
    "back": "r1_gui's back is a phone's; a BrowserGym page takes clicks and keys",
    "open_app": "a web page has no apps to open",
    "answer": "a BrowserGym page takes no answer: type it into the page",
}
DIRECTIONS = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}


def playwright_key(name: str) -> str | None:
    return name if len(name) == 1 else KEYS.get(name.strip().lower())


def browsergym_action(action: Action, screen_size: tuple[int, int], pointer=None) -> tuple[str | None, str | None]:
    """(BrowserGym's action string, None) or (None, why not); `pointer`: the last point (for drag_to)."""
    width, height = screen_size
    kind = action.type

    def at(x: float, y: float) -> str:
        return f"{round(x * width, 2)}, {round(y * height, 2)}"

    if kind in NOT_IN_A_BROWSER:
        return None, f"{NOT_IN_A_BROWSER[kind]}; the step did nothing"
    if kind == "click":
        return f"mouse_click({at(action.x, action.y)})", None
    if kind == "double_click":
        return f"mouse_dblclick({at(action.x, action.y)})", None
    if kind == "right_click":
        return f"mouse_click({at(action.x, action.y)}, 'right')", None
    if kind == "move_to":
        return f"mouse_move({at(action.x, action.y)})", None
    if kind == "long_press":
        point = at(action.x, action.y)
        return f"mouse_down({point})\nnoop({LONG_PRESS_MS})\nmouse_up({point})", None
    if kind == "swipe":
        return f"mouse_drag_and_drop({at(action.x, action.y)}, {at(action.x2, action.y2)})", None
    if kind == "drag_to":
        start = pointer or (0.5, 0.5)
        return f"mouse_drag_and_drop({at(*start)}, {at(action.x, action.y)})", None
    if kind == "scroll":
        dx, dy = DIRECTIONS[action.direction]
        point = at(action.x, action.y) if action.point is not None else at(0.5, 0.5)
        return f"scroll_at({point}, {dx * SCROLL_PIXELS}, {dy * SCROLL_PIXELS})", None
    if kind == "type":
        if len(action.text) > MAX_TYPED_CHARS:
            return None, f"the text is {len(action.text)} characters long; at most {MAX_TYPED_CHARS} are typed"
        return f"keyboard_type({action.text!r})", None
    if kind in ("press", "hotkey"):
        keys = [playwright_key(name) for name in action.keys]
        if None in keys:
            unknown = [name for name, key in zip(action.keys, keys, strict=True) if key is None]
            return None, f"unknown key(s) {unknown}; known: single characters and {', '.join(KEYS)}"
        if kind == "hotkey":
            return f"keyboard_press({'+'.join(keys)!r})", None
        return "\n".join(f"keyboard_press({key!r})" for key in keys), None
    if kind == "wait":
        seconds = action.seconds if action.seconds is not None else 1.0
        return f"noop({round(min(seconds * 1000, MAX_WAIT_MS))})", None
    return None, f"{kind} is not an action r1_gui maps to BrowserGym; the step did nothing"
