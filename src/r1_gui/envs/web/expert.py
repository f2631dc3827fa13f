"""The expert of `r1_gui/Web-v0`: the next action for a MiniWoB++ page, read from its DOM.

Each expert is a plain function of a `Page` (the task, MiniWoB's own fields parsed from the instruction, the page's
elements as `core.getDOMInfo()` gives them, the focused text field's selection, and a task's own state where the DOM
does not show it) to a `Move`: an `r1_gui.actions.Action` in normalized coordinates of the task area and, for a
click, the element it aims at (whose box is the environment's `target_box`); or None when it has nothing to do. It
reads the page as it is at every step, so it also finishes an episode a policy has started (a box checked by mistake
is unchecked, a wrong text selected and typed over).

    page = read_page(browser, task)          # r1_gui.envs.web.env does this at every step
    move = expert_move(page)                 # e.g. Move(Action("click", x=0.52, y=0.61), <the button>)
    target_box(page, move.target)            # the points that click that button, normalized: (0.41, 0.55, 0.63, 0.67)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from r1_gui.actions import Action

TASK_SIZE = (160, 210)  # MiniWoB's task area in CSS pixels (miniwob.constants.TASK_WIDTH, TASK_HEIGHT)
CLICK_ROUNDING = 0.5  # CSS pixels: a click at x lands on pixel round(x)


@dataclass
class Page:
    """What an expert reads. `elements`: miniwob.dom.DOMElement objects, the whole tree flattened (tag such as
    "button" or "input_text", text, value, focused, id, classes, left/top/width/height in CSS pixels)."""

    task: str
    fields: dict[str, str]
    elements: list[Any]
    selection: tuple[int, int] | None = None  # (start, end) in the focused text field
    state: Any = None  # the task's own script state (STATE_SCRIPTS)
    size: tuple[int, int] = TASK_SIZE


# A task's state that its DOM does not show, read with one script expression.
STATE_SCRIPTS = {"click-button-sequence": "typeof buttonsPushed === 'undefined' ? [] : buttonsPushed"}

PAGE_SCRIPT = """
var active = document.activeElement, selection = null;
try {
  if (active && typeof active.selectionStart === 'number') selection = [active.selectionStart, active.selectionEnd];
} catch (error) {}
return [core.getDOMInfo(), selection, %s, core.getUtterance()];
"""


def read_page(browser, task: str) -> Page:
    """The page of `browser` as the experts read it (one script run)."""
    from miniwob.dom import DOMElement
    from miniwob.fields import get_field_extractor

    dom, selection, state, utterance = browser.run(PAGE_SCRIPT % STATE_SCRIPTS.get(task, "null"))
    try:
        fields = dict(get_field_extractor(task)(utterance))
    except ValueError:  # MiniWoB's extractor does not know this utterance
        fields = {}
    elements = list(DOMElement(dom).subtree_elements)
    return Page(task, fields, elements, tuple(selection) if selection else None, state)


@dataclass(frozen=True)
class Move:
    """An expert's next action, and the page element it clicks (None for an action that aims at no element)."""

    action: Action
    target: Any = None


def target_box(page: Page, element) -> tuple[float, float, float, float] | None:
    """The points of the task area a click on `element` may be given: its box [x1, y1, x2, y2], normalized to the
    task area and clipped to it, or None when it has no area there (None given, or it lies outside). The browser
    clicks at whole CSS pixels (`Browser.click` rounds), so the box is the element's shifted by half a pixel: a
    point that rounds into the element is in it."""
    if element is None:
        return None
    width, height = page.size
    left, top = element.left - CLICK_ROUNDING, element.top - CLICK_ROUNDING
    x1, y1 = max(0.0, left / width), max(0.0, top / height)
    x2, y2 = min(1.0, (left + element.width) / width), min(1.0, (top + element.height) / height)
    return (x1, y1, x2, y2) if x1 < x2 and y1 < y2 else None


# ------------------------------------------------------------------------------------------------ helpers


def centre(element) -> tuple[float, float]:
    """The centre of `element`'s box, in CSS pixels of the task area."""
    return element.left + element.width / 2, element.top + element.height / 2


def click(page: Page, element) -> Move | None:
    """A click on the centre of `element`, or None when that centre lies outside the task area."""
    width, height = page.size
    x, y = centre(element)
    if not (0 <= x < width and 0 <= y < height):
        return None
    return Move(Action("click", x=x / width, y=y / height), element)


def click_uncovered(page: Page, element, covers: list) -> Move | None:
    """A click on the point of `element` nearest its centre that none of `covers` (elements painted over it, such as
    a later absolutely placed button) hides; its centre when every point is hidden."""
    if element is None:
        return None
    width, height = page.size
    shares = sorted((i / 8 for i in range(1, 8)), key=lambda share: abs(share - 0.5))
    points = sorted(
        ((element.left + a * element.width, element.top + b * element.height) for a in shares for b in shares),
        key=lambda point: math.dist(point, centre(element)),
    )
    for x, y in points:
        hidden = any(c.left - 1 <= x <= c.left + c.width + 1 and c.top - 1 <= y <= c.top + c.height + 1 for c in covers)
        if not hidden and 0 <= x < width and 0 <= y < height:
            return Move(Action("click", x=x / width, y=y / height), element)
    return click(page, element)


def later_buttons(page: Page, element) -> list:
    """The buttons after `element` in the page: positioned absolutely (click-test-2), they are painted over it."""
    index = next(i for i, other in enumerate(page.elements) if other is element)
    return [other for other in page.elements[index + 1 :] if other.tag == "button"]


def find(page: Page, tag: str | None = None, *, text: str | None = None, id: str | None = None, classes: str = ""):
    """The first element with this tag (and text, id, class), or None."""
    for element in page.elements:
        if tag is not None and element.tag != tag:
            continue
        if text is not None and (element.text or "").strip() != text:
            continue
        if id is not None and element.id != id:
            continue
        if classes and classes not in (element.classes or "").split():
            continue
        return element
    return None


def labelled(page: Page, tag: str, label: str):
    """The `tag` input inside a <label> whose text is `label` (MiniWoB's checkboxes and radio buttons)."""
    for element in page.elements:
        if element.tag == tag and element.parent is not None:
            texts = [(child.text or "").strip() for child in element.parent.children if child.tag == "t"]
            if label in texts:
                return element
    return None


def fill(page: Page, element, text: str) -> Move | None:
    """The next action that makes `element`'s value `text`: None when it already is; else click it (unfocused),
    type the rest (its value is a prefix of `text` and the caret at the end), type over (all selected), or select
    all (ctrl+a) so that the next step types over it."""
    value = element.value or ""
    if value == text:
        return None
    if not element.focused:
        return click(page, element)
    if text.startswith(value) and page.selection == (len(value), len(value)):
        return Move(Action("type", text=text[len(value) :]))
    if page.selection == (0, len(value)):
        return Move(Action("type", text=text))
    return Move(Action("hotkey", keys=("ctrl", "a")))


def fill_then_click(page: Page, pairs: list[tuple[Any, str]], button) -> Move | None:
    for element, text in pairs:
        if element is None:
            return None
        action = fill(page, element, text)
        if action is not None:
            return action
    return click(page, button) if button is not None else None


# -------------------------------------------------------------------------------------------------- experts


def _click_test(page):
    return click(page, find(page, "button", id="subbtn"))


def _button_named(page):
    return click(page, find(page, "button", text=page.fields.get("target")))


def _button_overlapped(page):  # click-test-2's two buttons are placed at random and may overlap
    button = find(page, "button", text=page.fields.get("target"))
    return click_uncovered(page, button, later_buttons(page, button)) if button is not None else None


def _button_sequence(page):
    button = find(page, "button", id="subbtn2" if "subbtn" in (page.state or []) else "subbtn")
    return click_uncovered(page, button, later_buttons(page, button)) if button is not None else None


def _link(page):
    return click(page, find(page, "span", text=page.fields.get("target"), classes="alink"))


def _dialog(page):
    return click(page, find(page, "button", classes="ui-dialog-titlebar-close"))


def _dialog_2(page):
    target = page.fields.get("target")
    return _dialog(page) if target == "x" else click(page, find(page, "button", text=target))


def _checkboxes(page):
    wanted = {value for key, value in page.fields.items() if key.startswith("target")}
    for element in page.elements:
        if element.tag == "input_checkbox":
            label = next((child.text for child in element.parent.children if child.tag == "t"), None)
            if bool(element.value) != ((label or "").strip() in wanted):
                return click(page, element)
    return click(page, find(page, "button", id="subbtn"))


def _tab(page):
    return click(page, find(page, "a", text=f"Tab #{page.fields.get('target')}"))


def _option(page):
    radio = labelled(page, "input_radio", page.fields.get("target", ""))
    if radio is not None and not radio.value:
        return click(page, radio)
    return click(page, find(page, "button", id="subbtn"))


def _collapsible(page):  # expand the section (its header is collapsed until clicked), then Submit
    header = find(page, "h3", classes="ui-accordion-header")
    if header is not None and "ui-accordion-header-collapsed" in (header.classes or "").split():
        return click(page, header)
    return click(page, find(page, "button", id="subbtn"))


def _circle_center(page):  # a click inside the circle (the page marks it with a dot), then Submit
    circles = [element for element in page.elements if element.tag == "circle"]
    if not circles:
        return None
    ring, dot = circles[0], circles[-1] if len(circles) > 1 else None  # the page keeps one dot, the last click's
    # the page accepts a dot within the radius of the centre; the expert asks for half of it
    if dot is not None and math.dist(centre(ring), centre(dot)) < ring.width / 4:
        return click(page, find(page, "button", id="subbtn"))
    return click(page, ring)


def _focus_text(page):
    return click(page, find(page, "input_text", id="tt"))


def _focus_text_2(page):
    return click(page, find(page, "input_text", id=f"tt{page.fields.get('target')}"))


def _enter_text(page):
    field_ = find(page, "input_text", id="tt")
    return fill_then_click(page, [(field_, page.fields.get("target", ""))], find(page, "button", id="subbtn"))


def _enter_text_2(page):
    text = page.fields.get("text", "")
    text = text.upper() if page.fields.get("case") == "upper" else text.lower()
    return fill_then_click(page, [(find(page, "input_text", id="tt"), text)], find(page, "button", id="subbtn"))


def _enter_password(page):
    password = page.fields.get("target", "")
    pairs = [
        (find(page, "input_password", id="password"), password),
        (find(page, "input_password", id="verify"), password),
    ]
    return fill_then_click(page, pairs, find(page, "button", id="subbtn"))


def _login_user(page):
    pairs = [
        (find(page, "input_text", id="username"), page.fields.get("username", "")),
        (find(page, "input_password", id="password"), page.fields.get("password", "")),
    ]
    return fill_then_click(page, pairs, find(page, "button", id="subbtn"))


EXPERTS: dict[str, Callable[[Page], Move | None]] = {
    "click-test": _click_test,
    "click-test-2": _button_overlapped,
    "click-button": _button_named,
    "click-button-sequence": _button_sequence,
    "click-link": _link,
    "click-dialog": _dialog,
    "click-dialog-2": _dialog_2,
    "click-checkboxes": _checkboxes,
    "click-tab": _tab,
    "click-option": _option,
    "focus-text": _focus_text,
    "focus-text-2": _focus_text_2,
    "enter-text": _enter_text,
    "enter-text-2": _enter_text_2,
    "enter-text-dynamic": _enter_text,
    "enter-password": _enter_password,
    "login-user": _login_user,
    "click-collapsible": _collapsible,
    "circle-center": _circle_center,
}
EXPERT_TASKS = tuple(EXPERTS)


def expert_move(page: Page) -> Move | None:
    """The expert's next move on `page`, or None (no expert for the task, or it sees nothing to do)."""
    expert = EXPERTS.get(page.task)
    if expert is None:
        return None
    try:
        return expert(page)
    except (AttributeError, TypeError, ValueError):  # a page the expert did not expect: no advice, never a crash
        return None
