"""The expert: the action that moves the *current* state toward the goal, computed from the state alone, so it
also shows how to recover from the agent's mistakes (a wrong app open: back or home first; a wrong query typed:
type the right one). Taking it from the start state reaches every goal (tests/test_envs.py checks every family).
"""

from __future__ import annotations

from r1_gui.actions import Action
from r1_gui.envs.phone.tasks import Goal
from r1_gui.envs.phone.world import SETTINGS_APP, Page, PhoneState, PhoneWorld
from r1_gui.synthetic import screens

WAIT = Action("wait", seconds=3.0)
BACK, HOME = Action("back"), Action("home")
ENTER = Action("press", keys=("enter",))
SCROLL_DOWN, SCROLL_UP = Action("scroll", direction="down"), Action("scroll", direction="up")


def tap(world: PhoneWorld, state: PhoneState, element: str, kind: str = "click") -> Action:
    """A click (or long press) on the centre of an element of the current screen."""
    x, y = screens.center(world.screen(state).elements(world.size)[element])
    return Action(kind, x=x / world.size.width, y=y / world.size.height)


def expert_action(world: PhoneWorld, state: PhoneState, goal: Goal) -> Action:
    """The next action toward `goal`; terminate(success) once the goal state is reached."""
    if goal.reached(world, state):
        return Action("terminate", status="success")
    top = state.top
    if top.kind == "loading":
        return WAIT
    if top.kind == "home" and state.menu_app is not None and not (goal.option and state.menu_app == goal.app):
        return BACK  # closes a menu the task does not need
    if goal.settings:
        return _settings(world, state, goal)
    if goal.query is not None:
        return _search(world, state, goal)
    if goal.option is not None:
        return _icon_menu(world, state, goal)
    for key in goal.visited:  # go_back: the item must be opened first; open_two_apps, open_and_return: an app
        if key in state.visited:
            continue
        if key[0] == "app":
            return _to_page(world, state, goal, key[1])
        if key[0] == "item":
            _, app, item = key
            return tap(world, state, f"row:{item}") if top == Page("list", app) else _to_page(world, state, goal, app)
    if goal.home_kind_only:
        return HOME
    return _to_page(world, state, goal, goal.app)


def _to_page(world: PhoneWorld, state: PhoneState, goal: Goal, app: str) -> Action:
    """Toward an app's main page: back when it is below on the stack; otherwise open it by name (open_app and
    go_back) or from its home-screen icon (the other tasks, whose instructions say to use the home screen)."""
    page = world.main_page(app)
    if page in state.stack[:-1]:
        return BACK
    if goal.family in ("open_app", "open_two_apps", "open_and_return", "go_back"):
        return Action("open_app", text=app)
    if state.top.kind != "home":
        return HOME
    return tap(world, state, f"icon:{app}") if app in state.slots else Action("open_app", text=app)


def _settings(world: PhoneWorld, state: PhoneState, goal: Goal) -> Action:
    name, _ = next((name, on) for name, on in goal.settings if state.setting(world, name) != on)
    if state.top.kind != "settings":
        if Page("settings") in state.stack[:-1]:
            return BACK
        if state.top.kind != "home":
            return HOME
        return (
            tap(world, state, f"icon:{SETTINGS_APP}")
            if SETTINGS_APP in state.slots
            else Action("open_app", text=SETTINGS_APP)
        )
    screen = world.screen(state)
    visible = screen.visible_settings(world.size)
    if name in visible:
        return tap(world, state, f"switch:{name}")
    above = not visible or world.setting_names.index(name) < world.setting_names.index(visible[0])
    return SCROLL_UP if above and state.scroll_px > 0 else SCROLL_DOWN


def _search(world: PhoneWorld, state: PhoneState, goal: Goal) -> Action:
    query, top = goal.query, state.top
    if top.kind == "site":
        return BACK
    if top.kind == "results":
        if top.query != query:  # the right results page ends search_query before here (goal reached)
            return BACK
        target = next((site for site in goal.sites if ("site", query, site) not in state.visited), goal.sites[-1])
        return tap(world, state, f"result:{target}")
    if top.kind == "search":
        if not top.focused:
            return tap(world, state, "search_field")
        return ENTER if top.query == query else Action("type", text=query)
    if top.kind == "home":
        return tap(world, state, "search_bar")
    return HOME


def _icon_menu(world: PhoneWorld, state: PhoneState, goal: Goal) -> Action:
    top, app = state.top, goal.app
    if top.kind != "home":
        return HOME
    if state.menu_app == app:
        return tap(world, state, f"menu:{goal.option}")
    if app in state.slots:
        return tap(world, state, f"icon:{app}", kind="long_press")
    return Action("terminate", status="failure")  # the icon was removed: its menu can no longer be reached
