"""The task families: each builds an episode (world, start state, goal) from a seed; `Goal.reached` checks the
final state. The seven synthetic families keep their wording; two more need five or more steps, and three read no
words on the screen: `search_query` (web_search's steps up to the results page, four or five), `open_two_apps` (two
apps opened by name in order, three to five) and `open_and_return` (an app by name, then home, three or four).

Success is a check of the state the agent leaves the phone in, never a comparison with a script: "Turn on Wi-Fi"
is reached when Wi-Fi is on, however the agent got there. (The environment also requires that the agent ends the
episode with ``terminate(status="success")``.)
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from r1_gui.envs.phone.world import HOME, SETTINGS_APP, Page, PhoneState, PhoneWorld
from r1_gui.synthetic import episodes, screens

# Per-family default of max_steps: two to three times the expert's longest episode (gymnasium.make(..., max_steps=N)).
MAX_STEPS = {
    "launch_icon": 8,
    "open_app": 8,
    "open_two_apps": 12,
    "open_and_return": 10,
    "web_search": 16,
    "search_query": 12,
    "toggle_setting": 16,
    "icon_menu": 8,
    "go_back": 8,
    "go_home": 8,
    "search_two_results": 24,
    "toggle_two_settings": 24,
}
TASKS = tuple(MAX_STEPS)


@dataclass(frozen=True)
class Goal:
    """What a task asks for. `page`: the page that must be on top (None: any); `absent_app`: an app that must be
    gone from the home screen; `settings`: (name, on) pairs; `visited`: keys of pages that must have been opened."""

    family: str
    instruction: str
    page: Page | None = None
    home_kind_only: bool = False  # the top page only has to be the home screen (menu or not)
    absent_app: str | None = None
    settings: tuple[tuple[str, bool], ...] = ()
    visited: tuple[tuple, ...] = ()
    # what the expert aims for (not part of the success check)
    app: str | None = None
    query: str | None = None
    sites: tuple[str, ...] = ()
    option: str | None = None

    def reached(self, world: PhoneWorld, state: PhoneState) -> bool:
        if self.home_kind_only and state.top.kind != "home":
            return False
        if self.page is not None and state.top != self.page:
            return False
        if self.absent_app is not None and self.absent_app in state.slots:
            return False
        if any(state.setting(world, name) != on for name, on in self.settings):
            return False
        return all(key in state.visited for key in self.visited)


def new_episode(
    family: str, seed: int, size: screens.Size, grid: tuple[int, int], apps: int
) -> tuple[PhoneWorld, PhoneState, Goal]:
    """Episode `seed` of a family: the world, the start state and the goal."""
    world = PhoneWorld(seed, size, grid, apps)
    rng = random.Random(f"r1_gui-env:{seed}:task")
    names = rng.sample(screens.SETTING_NAMES, rng.randint(12, len(screens.SETTING_NAMES)))
    world.setting_names, world.engine = tuple(names), rng.choice(episodes.ENGINES)
    world.slow = {app for app in world.app_names if rng.random() < 0.3}
    settings = tuple(rng.random() < 0.5 for _ in names)
    stack, goal, containing, excluding = FAMILIES[family](world, rng)
    world.base_home = world.home(containing=containing, excluding=excluding)
    for name, on in goal.settings:  # every switch the task asks to flip starts the other way
        index = names.index(name)
        settings = settings[:index] + (not on,) + settings[index + 1 :]
    return world, PhoneState(stack, tuple(world.base_home.slots), settings), goal


def _launch(world: PhoneWorld, rng: random.Random):
    app = world.other_app()
    instruction = rng.choice(episodes.LAUNCH_WORDING).format(app)
    return (HOME,), Goal("launch_icon", instruction, page=world.main_page(app), app=app), app, ()


def _open_app(world: PhoneWorld, rng: random.Random):
    app = world.other_app()
    goal = Goal("open_app", rng.choice(episodes.LAUNCH_WORDING).format(app), page=world.main_page(app), app=app)
    if rng.random() < 0.5:
        return (HOME,), goal, None, (app,)
    other = world.other_app(app, SETTINGS_APP)
    return (HOME, world.main_page(other)), goal, None, ()


def _open_two(world: PhoneWorld, rng: random.Random):
    first = world.other_app(SETTINGS_APP)
    second = world.other_app(first, SETTINGS_APP)
    instruction = episodes.INSTRUCTIONS["open_two_apps"].format(first=first, second=second)
    goal = Goal("open_two_apps", instruction, page=world.main_page(second), visited=(("app", first),), app=second)
    return _home_or_another_app(world, rng, first, second), goal, None, ()


def _open_and_return(world: PhoneWorld, rng: random.Random):
    app = world.other_app(SETTINGS_APP)
    instruction = episodes.INSTRUCTIONS["open_and_return"].format(app=app)
    goal = Goal("open_and_return", instruction, home_kind_only=True, visited=(("app", app),), app=app)
    return _home_or_another_app(world, rng, app), goal, None, ()


def _home_or_another_app(world: PhoneWorld, rng: random.Random, *apps: str) -> tuple[Page, ...]:
    """The start of a task that opens `apps` by name: the home screen, or (half the time) another app's page on it."""
    if rng.random() < 0.5:
        return (HOME,)
    return (HOME, world.main_page(world.other_app(*apps, SETTINGS_APP)))


def _search_start(world: PhoneWorld, rng: random.Random, query: str) -> tuple[Page, ...]:
    if rng.random() < 0.5:
        world.slow.add(f"search:{query}")
    return (HOME,) if rng.random() < 0.5 else (HOME, Page("search", world.engine))


def _web_search(world: PhoneWorld, rng: random.Random):
    query = rng.choice(episodes.QUERIES)
    site = rng.choice([site for site, _ in world.results(query)])
    stack = _search_start(world, rng, query)
    instruction = episodes.INSTRUCTIONS["web_search"].format(query=query, site=site)
    return (
        stack,
        Goal("web_search", instruction, page=Page("site", site, query=query), query=query, sites=(site,)),
        None,
        (),
    )


def _search_query(world: PhoneWorld, rng: random.Random):
    query = rng.choice(episodes.QUERIES)
    stack = _search_start(world, rng, query)
    instruction = episodes.INSTRUCTIONS["search_query"].format(query=query)
    return stack, Goal("search_query", instruction, page=Page("results", query=query), query=query), None, ()


def _search_two(world: PhoneWorld, rng: random.Random):
    query = rng.choice(episodes.QUERIES)
    first, second = rng.sample([site for site, _ in world.results(query)], 2)
    stack = _search_start(world, rng, query)
    instruction = f"Search for '{query}', open the result from {first}, then go back and open the result from {second}"
    goal = Goal(
        "search_two_results",
        instruction,
        page=Page("site", second, query=query),
        visited=(("site", query, first),),
        query=query,
        sites=(first, second),
    )
    return stack, goal, None, ()


def _below_first_page(world: PhoneWorld) -> list[str]:
    rows = [(name, False) for name in world.setting_names]
    shown = screens.SettingsScreen(world.theme, world.clock, world.settings_title, rows).visible_settings(world.size)
    return [name for name in world.setting_names if name not in shown]


def _toggle(world: PhoneWorld, rng: random.Random):
    from_home = rng.random() < 0.3
    world.settings_title = "Settings" if from_home else rng.choice(episodes.SETTINGS_TITLES)
    below = _below_first_page(world)
    setting = rng.choice(below if below and rng.random() < 0.6 else world.setting_names)
    turn_on = rng.random() < 0.5
    instruction = episodes.INSTRUCTIONS["toggle_setting"].format(state="on" if turn_on else "off", setting=setting)
    goal = Goal("toggle_setting", instruction, settings=((setting, turn_on),))
    return ((HOME,), goal, SETTINGS_APP, ()) if from_home else ((HOME, Page("settings")), goal, None, ())


def _toggle_two(world: PhoneWorld, rng: random.Random):
    below = _below_first_page(world) or list(world.setting_names)
    second = rng.choice(below)
    first = rng.choice([name for name in world.setting_names if name != second])
    wanted = ((first, rng.random() < 0.5), (second, rng.random() < 0.5))
    words = [f"turn {'on' if on else 'off'} {name}" for name, on in wanted]
    instruction = f"{words[0][0].upper()}{words[0][1:]} and {words[1]}"  # keeps the names' case
    return (HOME,), Goal("toggle_two_settings", instruction, settings=wanted), SETTINGS_APP, ()


def _icon_menu(world: PhoneWorld, rng: random.Random):
    app, option = world.other_app(), rng.choice(("Remove", "App info"))
    if option == "Remove":
        instruction = episodes.INSTRUCTIONS["remove_icon"].format(app=app)
        goal = Goal("icon_menu", instruction, absent_app=app, app=app, option=option)
    else:
        instruction = episodes.INSTRUCTIONS["app_info"].format(app=app)
        goal = Goal("icon_menu", instruction, page=Page("app_info", app), app=app, option=option)
    return (HOME,), goal, app, ()


def _go_back(world: PhoneWorld, rng: random.Random):
    app = world.other_app(SETTINGS_APP)
    item = rng.choice(world.app_page(app).items)
    listing = Page("list", app)
    if rng.random() < 0.5:
        instruction = episodes.INSTRUCTIONS["open_item_and_back"].format(item=item, app=app)
        goal = Goal("go_back", instruction, page=listing, visited=(("item", app, item),), app=app)
        return (HOME, listing), goal, None, ()
    goal = Goal("go_back", episodes.INSTRUCTIONS["back_to_list"].format(app=app), page=listing, app=app)
    return (HOME, listing, Page("detail", app, item)), goal, None, ()


def _go_home(world: PhoneWorld, rng: random.Random):
    current = world.other_app(SETTINGS_APP)
    stack = (HOME, Page("list", current))
    if rng.random() < 0.5:
        stack += (Page("detail", current, rng.choice(world.app_page(current).items)),)
    if rng.random() < 0.5:
        instruction = rng.choice(episodes.GO_HOME_WORDING)
        return stack, Goal("go_home", instruction, home_kind_only=True), None, ()
    app = world.other_app(current)
    instruction = episodes.INSTRUCTIONS["home_and_open"].format(app=app)
    return stack, Goal("go_home", instruction, page=world.main_page(app), app=app), app, ()


# Every family: its builder, (world, rng) -> (page stack, Goal, app the home screen must hold, apps it must not).
# A new family is a builder here and its step limit in MAX_STEPS (README, "Extending r1_gui").
FAMILIES = {
    "launch_icon": _launch,
    "open_app": _open_app,
    "open_two_apps": _open_two,
    "open_and_return": _open_and_return,
    "web_search": _web_search,
    "search_query": _search_query,
    "toggle_setting": _toggle,
    "icon_menu": _icon_menu,
    "go_back": _go_back,
    "go_home": _go_home,
    "search_two_results": _search_two,
    "toggle_two_settings": _toggle_two,
}
