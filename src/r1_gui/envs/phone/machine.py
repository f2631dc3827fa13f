"""The phone as a state machine: `apply(world, state, action)` answers any action the way a phone would.

- click: hit-tests the elements on screen (`screens.*.elements`, plus the navigation bar's back and home buttons);
  a click on nothing changes nothing. With an icon's menu open, a click outside the menu closes it.
- long_press: on a home-screen icon opens its menu; anywhere else it changes nothing.
- back pops the back stack (it first closes an open menu or the keyboard); home shows the home screen.
- type replaces the text of the focused field (AITW's type action sets the field); press enter (or the keyboard's
  Enter key) submits a non-empty query.
- scroll and vertical swipes move the settings list (the other pages fit on the screen and do not move).
- open_app opens an app by name (case-insensitive) from anywhere; wait finishes a loading page, which otherwise
  finishes after `LOADING_STEPS` steps; terminate is handled by the environment.
Actions the phone does not know (desktop clicks, hotkeys, answer) change nothing and say so.
"""

from __future__ import annotations

from dataclasses import replace

from r1_gui.actions import Action
from r1_gui.envs.phone.world import HOME, LOADING_STEPS, SETTINGS_APP, Page, PhoneState, PhoneWorld
from r1_gui.synthetic import screens

PHONE_ACTIONS = (
    "click", "long_press", "swipe", "scroll", "type", "press", "back", "home", "open_app", "wait", "terminate",
)  # fmt: skip
SCROLL_PAGE = 0.5  # a scroll moves the settings list by half its viewport, as the synthetic scripts do


def nav_buttons(size: screens.Size) -> dict[str, screens.Box]:
    """The navigation bar's back and home buttons (drawn by `screens.Canvas.nav_bar`), a quarter screen wide each."""
    top, quarter = size.nav_top, size.width // 8
    return {
        "nav:back": (size.x(0.25) - quarter, top, size.x(0.25) + quarter, size.height),
        "nav:home": (size.x(0.5) - quarter, top, size.x(0.5) + quarter, size.height),
    }


def hit(elements: dict[str, screens.Box], px: float, py: float) -> str | None:
    """The name of the element under the point; menu entries lie above the icons, so they win."""
    found = None
    for name, (x1, y1, x2, y2) in elements.items():
        if x1 <= px <= x2 and y1 <= py <= y2:
            if name.startswith("menu:"):
                return name
            found = found or name
    return found


def apply(world: PhoneWorld, state: PhoneState, action: Action) -> tuple[PhoneState, str | None]:
    """The state after `action` and why nothing happened (None when the action did something, or could have)."""
    after, why = _apply(world, state, action)
    return _note_main_page(state.top, after), why


def _note_main_page(before: Page, state: PhoneState) -> PhoneState:
    """Adds ("app", name) to `visited` when an action brings an app's main page on top (the app that open_two_apps
    and open_and_return need shown first)."""
    top = state.top
    name = SETTINGS_APP if top.kind == "settings" else top.name if top.kind == "list" else None
    if name is None or top == before or ("app", name) in state.visited:
        return state
    return replace(state, visited=state.visited | {("app", name)})


def _apply(world: PhoneWorld, state: PhoneState, action: Action) -> tuple[PhoneState, str | None]:
    if action.type not in PHONE_ACTIONS:
        return state, f"the phone has no {action.type!r} action; it knows {', '.join(PHONE_ACTIONS)}"
    top = state.top
    if action.type == "home":
        return _home(state), None
    if action.type == "back":
        return _back(state), None
    if action.type == "open_app":
        return _open_app(world, state, action.text)
    if top.kind == "loading":
        return _loading_step(state, finish=action.type == "wait"), None
    if action.type == "click":
        return _click(world, state, action)
    if action.type == "long_press":
        name = hit(world.screen(state).elements(world.size), action.x * world.size.width, action.y * world.size.height)
        if top.kind == "home" and state.menu_app is None and name and name.startswith("icon:"):
            return replace(state, menu_app=name.split(":", 1)[1]), None
        return state, None
    if action.type == "type":
        if top.kind == "search" and top.focused:
            return _replace_top(state, replace(top, query=action.text)), None
        return state, "no text field is focused"
    if action.type == "press":
        if tuple(key.lower() for key in action.keys) == ("enter",):
            return _submit(world, state), None
        return state, None
    if action.type in ("scroll", "swipe"):
        return _scroll(world, state, action), None
    return state, None  # wait outside a loading page, and terminate: nothing on the phone changes


def _replace_top(state: PhoneState, page: Page) -> PhoneState:
    return replace(state, stack=state.stack[:-1] + (page,))


def _push(world: PhoneWorld, state: PhoneState, page: Page, slow_key: str | None = None) -> PhoneState:
    """Open `page` on top; through a loading page titled "Search results" when `slow_key` loads slowly."""
    if slow_key is not None and world.opens_slowly(slow_key):
        page = Page("loading", "Search results", then=page, remaining=LOADING_STEPS)
    return replace(state, stack=state.stack + (page,), menu_app=None)


def _home(state: PhoneState) -> PhoneState:
    return replace(state, stack=(HOME,), menu_app=None)


def _back(state: PhoneState) -> PhoneState:
    top = state.top
    if state.menu_app is not None and top.kind == "home":
        return replace(state, menu_app=None)
    if top.kind == "search" and top.focused:  # back first hides the keyboard
        return _replace_top(state, replace(top, focused=False))
    if len(state.stack) == 1:
        return state
    return replace(state, stack=state.stack[:-1])


def _open_app(world: PhoneWorld, state: PhoneState, name: str) -> tuple[PhoneState, str | None]:
    wanted = " ".join(name.split()).lower()
    app = next((app for app in world.app_names if app.lower() == wanted), None)
    if app is None:
        return state, f"no app named {name[:40]!r} is installed"
    return replace(state, stack=(HOME, world.launch(app)), menu_app=None), None


def _loading_step(state: PhoneState, finish: bool) -> PhoneState:
    top = state.top
    if finish or top.remaining <= 1:
        return _replace_top(state, top.then)
    return _replace_top(state, replace(top, remaining=top.remaining - 1))


def _click(world: PhoneWorld, state: PhoneState, action: Action) -> tuple[PhoneState, str | None]:
    size, top = world.size, state.top
    px, py = action.x * size.width, action.y * size.height
    name = hit({**world.screen(state).elements(size), **nav_buttons(size)}, px, py)
    if state.menu_app is not None and top.kind == "home":
        if name and name.startswith("menu:"):
            return _menu_choice(world, state, name.split(":", 1)[1]), None
        return replace(state, menu_app=None), None  # a tap outside a menu closes it
    if name is None:
        return state, None
    kind, _, target = name.partition(":")
    if kind == "nav":
        return (_back(state) if target == "back" else _home(state)), None
    if name == "back_button":
        return _back(state), None
    if kind == "icon":
        return _push(world, state, world.launch(target)), None
    if name == "search_bar":
        return _push(world, state, Page("search", world.engine, focused=True)), None
    if name == "search_field":
        return _replace_top(state, replace(top, focused=True)), None
    if name == "enter_key":
        return _submit(world, state), None
    if kind == "row":
        visited = state.visited | {("item", top.name, target)}
        return replace(_push(world, state, Page("detail", top.name, target)), visited=visited), None
    if kind == "result":
        visited = state.visited | {("site", top.query, target)}
        return replace(_push(world, state, Page("site", target, query=top.query)), visited=visited), None
    if kind == "switch":
        index = world.setting_names.index(target)
        flipped = state.settings[:index] + (not state.settings[index],) + state.settings[index + 1 :]
        return replace(state, settings=flipped), None
    if name == "button:Open" and top.kind == "app_info":
        return _push(world, state, world.launch(top.name)), None
    return state, None  # buttons the phone does not model (Force stop)


def _menu_choice(world: PhoneWorld, state: PhoneState, option: str) -> PhoneState:
    app = state.menu_app
    if option == "Remove":
        return replace(state, slots=tuple(None if slot == app else slot for slot in state.slots), menu_app=None)
    if option == "App info":
        return _push(world, replace(state, menu_app=None), Page("app_info", app))
    return replace(state, menu_app=None)  # the other options (Widgets, Edit, ...) are not modelled: the menu closes


def _submit(world: PhoneWorld, state: PhoneState) -> PhoneState:
    top = state.top
    if top.kind != "search" or not top.focused or not top.query.strip():
        return state
    searched = _replace_top(state, replace(top, focused=False))
    return _push(world, searched, Page("results", query=top.query), slow_key=f"search:{top.query}")


def _scroll(world: PhoneWorld, state: PhoneState, action: Action) -> PhoneState:
    if state.top.kind != "settings":
        return state
    size = world.size
    if action.type == "swipe":
        if abs(action.y2 - action.y) <= abs(action.x2 - action.x):
            return state  # a sideways swipe does not move a list
        shift = round((action.y - action.y2) * size.height)  # the finger moves up: the content moves down
    elif action.direction in ("up", "down"):
        top, bottom = screens.SettingsScreen.viewport(size)
        shift = round(SCROLL_PAGE * (bottom - top)) * (1 if action.direction == "down" else -1)
    else:
        return state
    rows = list(zip(world.setting_names, state.settings, strict=True))
    limit = screens.SettingsScreen(world.theme, world.clock, world.settings_title, rows).max_scroll(size)
    return replace(state, scroll_px=min(limit, max(0, state.scroll_px + shift)))
