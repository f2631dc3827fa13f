"""Scripted phone episodes: the seven task families, the world whose screens they act on, and the episode order.

Tasks (``SyntheticConfig.task_mix``, default all; episodes cycle through them in this order):
    launch_icon     "Open the Clock app": click the labelled icon (maybe wait for loading), terminate
    open_app        the same wording when no icon is on screen: mobile.open_app, terminate
    web_search      click the search field, type, press enter (maybe wait), click the named result, terminate
    toggle_setting  "Turn on Wi-Fi": scroll or swipe until the row shows, click its switch, terminate
    icon_menu       long press an icon, pick "Remove" or "App info" in its menu, terminate
    go_back         open a list item and go back, or go back from a detail page, terminate
    go_home         press home (then maybe click an icon), terminate
Layouts, colours, grid positions, list contents and wording are drawn from the seed, so a target's position is
never fixed by its label. Each step's action is an ``r1_gui.actions.Action``, written with ``format_action``.
r1_gui.envs builds its environment on ``World`` and words its tasks with ``INSTRUCTIONS``.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from functools import partial

from r1_gui.actions import Action, format_action
from r1_gui.synthetic import screens

ACTION_TYPES = (
    "click", "long_press", "type", "press_enter", "scroll", "swipe", "back", "home", "open_app", "wait", "terminate",
)  # fmt: skip
QUERIES = (
    "pizza near me", "weather tomorrow", "cheap flights to boston", "how to tie a tie", "best hiking trails",
    "python tutorial", "movie times tonight", "banana bread recipe", "nearest gas station", "world cup scores",
    "yoga for beginners", "used cars for sale", "coffee shops open now", "how tall is mount everest",
)  # fmt: skip
SITES = (
    "yelp.com", "wikipedia.org", "tripadvisor.com", "reddit.com", "youtube.com", "nytimes.com", "allrecipes.com",
    "amazon.com", "imdb.com", "weather.com", "bbc.com", "github.com", "quora.com", "espn.com",
)  # fmt: skip
ENGINES = ("Google", "Bing", "DuckDuckGo", "Browser")
LAUNCH_WORDING = ("Open the {} app", "Launch {}", "Start the {} app")  # launch_icon and open_app
SETTINGS_TITLES = ("Settings", "Quick settings", "Connections")  # the settings page's title
# The tasks' instructions, worded once for these episodes and for r1_gui.envs' tasks (str.format fields)
INSTRUCTIONS = {
    "web_search": "Search for '{query}' and open the result from {site}",
    "search_query": "Search for '{query}'",
    "open_two_apps": "Open {first}, then open {second}",
    "open_and_return": "Open {app}, then go back to the home screen",
    "toggle_setting": "Turn {state} {setting}",
    "remove_icon": "Remove the {app} app from the home screen",
    "app_info": "Show the app info of {app}",
    "open_item_and_back": "Open '{item}' in {app}, then go back to the list",
    "back_to_list": "Go back to the {app} list",
    "home_and_open": "Go to the home screen and open the {app} app",
}
GO_HOME_WORDING = ("Go to the home screen", "Return to the home screen")
MENU_OPTIONS = ("App info", "Remove", "Uninstall", "Widgets", "Edit", "Pause app")
WEEKDAYS, MONTHS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"), ("Jan", "Mar", "May", "Jul", "Sep", "Nov")
ALL_APPS = len(screens.APP_NAMES)


def app_colors() -> dict[str, screens.Color]:
    """Each app's fixed icon colour: the palette in order, so the first len(ICON_COLORS) apps all differ."""
    palette = screens.ICON_COLORS
    return {app: palette[index % len(palette)] for index, app in enumerate(screens.APP_NAMES)}


def screen_fraction(value: float, decimals: int = 4) -> float:
    """A screen fraction as the action code gives it: clamped to the screen and rounded to ``decimals`` (Aguvis
    data uses up to 4, all ``format_action`` writes; ``precise_point_code`` writes 5 or 6)."""
    return round(min(1.0, max(0.0, value)), decimals)


FORMAT_ACTION_DECIMALS = 4  # the most decimals format_action writes (Aguvis data's precision)
_POINT_CALLS = {"click": "pyautogui.click", "long_press": "mobile.long_press"}


def precise_point_code(action: Action, decimals: int) -> str:
    """The Aguvis code of a click or long press with ``decimals`` (5 or 6) decimals, trailing zeros trimmed: what
    ``--decimals`` above format_action's 4 wrote before the synthetic package used format_action.
    Example: ``precise_point_code(Action("click", x=0.123456, y=0.5), 6) == "pyautogui.click(x=0.123456, y=0.5)"``."""

    def number(value: float) -> str:
        text = f"{value:.{decimals}f}".rstrip("0")
        return text + "0" if text.endswith(".") else text

    return f"{_POINT_CALLS[action.type]}(x={number(action.x)}, y={number(action.y)})"


# Action keeps only a scroll's direction and format_action writes page=-0.1; these episodes scroll half a page
# (``scroll_settings``), and their code says so. parse_action reads it back as Action("scroll", direction="down").
HALF_PAGE_SCROLL_CODE = "pyautogui.scroll(page=-0.5)"


@dataclass
class Step:
    screen: screens.Screen
    action_type: str  # one of ACTION_TYPES ("press_enter" is a press of Enter)
    action: Action
    code: str  # the action as Aguvis code: format_action(action), except HALF_PAGE_SCROLL_CODE and precise_point_code
    description: str  # the l1 "Action:" text, repeated in later steps' history
    thought: str
    target: screens.Box | None = None  # pixel box of the element acted on


@dataclass
class Episode:
    task: str
    instruction: str = ""
    steps: list[Step] = field(default_factory=list)


class Script:
    """Records one episode's steps, with their actions placed on the screen size."""

    def __init__(
        self, episode: Episode, size: screens.Size, rng: random.Random, click_jitter: float, decimals: int = 4
    ):
        self.episode, self.size, self.rng, self.click_jitter = episode, size, rng, click_jitter
        self.decimals = decimals

    def _point(self, box: screens.Box) -> dict[str, float]:
        x, y = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
        if self.click_jitter:
            x += self.rng.uniform(-1, 1) * self.click_jitter * (box[2] - box[0]) / 2
            y += self.rng.uniform(-1, 1) * self.click_jitter * (box[3] - box[1]) / 2
        width, height = self.size.width, self.size.height
        return {"x": screen_fraction(x / width, self.decimals), "y": screen_fraction(y / height, self.decimals)}

    def act(
        self,
        screen: screens.Screen,
        action_type: str,
        action: Action,
        description: str,
        thought: str,
        target: screens.Box | None = None,
        code: str | None = None,
    ):
        code = format_action(action) if code is None else code
        self.episode.steps.append(Step(screen, action_type, action, code, description, thought, target))

    def click(self, screen: screens.Screen, element: str, description: str, thought: str, long_press: bool = False):
        box = screen.elements(self.size)[element]  # a KeyError here is a scripting bug: the target is not shown
        kind = "long_press" if long_press else "click"
        action = Action(kind, **self._point(box))
        code = precise_point_code(action, self.decimals) if self.decimals > FORMAT_ACTION_DECIMALS else None
        self.act(screen, kind, action, description, thought, box, code=code)

    def type(self, screen: screens.Screen, text: str, thought: str):
        self.act(screen, "type", Action("type", text=text), f"Type '{text}' into the search field.", thought)

    def press_enter(self, screen: screens.Screen, thought: str):
        self.act(screen, "press_enter", Action("press", keys=("enter",)), "Press Enter to search.", thought)

    def wait(self, screen: screens.Screen, thought: str):
        self.act(screen, "wait", Action("wait", seconds=3), "Wait for the page to load.", thought)

    def back(self, screen: screens.Screen, thought: str):
        self.act(screen, "back", Action("back"), "Go back to the previous screen.", thought)

    def home(self, screen: screens.Screen, thought: str):
        self.act(screen, "home", Action("home"), "Go to the home screen.", thought)

    def open_app(self, screen: screens.Screen, app: str, thought: str):
        self.act(screen, "open_app", Action("open_app", text=app), f"Open the {app} app.", thought)

    def terminate(self, screen: screens.Screen, thought: str):
        self.act(screen, "terminate", Action("terminate", status="success"), "The task is complete.", thought)

    def swipe_up(self, screen: screens.Screen, description: str, thought: str):
        """A swipe from 70% to 30% of the screen height, in the middle."""
        self.act(screen, "swipe", Action("swipe", x=0.5, y=0.7, x2=0.5, y2=0.3), description, thought)

    def scroll_half_page_down(self, screen: screens.Screen, description: str, thought: str):
        action = Action("scroll", direction="down")
        self.act(screen, "scroll", action, description, thought, code=HALF_PAGE_SCROLL_CODE)


class World:
    """The screens of one episode, drawn from its random generator so they stay consistent across steps."""

    def __init__(self, rng: random.Random, grid: tuple[int, int], apps: int = ALL_APPS):
        self.rng, (self.rows, self.cols) = rng, grid
        self.app_names = screens.APP_NAMES[:apps]
        self.theme = screens.random_theme(rng)
        self.clock = f"{rng.randint(6, 11)}:{rng.randint(0, 59):02d}"
        self.date = f"{rng.choice(WEEKDAYS)}, {rng.choice(MONTHS)} {rng.randint(1, 28)}"
        # Like real apps, each app keeps its icon colour on every screen and in every episode.
        self.icon_colors = app_colors()
        self.pages: dict[str, screens.ListScreen] = {}

    def home(self, containing: str | None = None, excluding: tuple[str, ...] = ()) -> screens.HomeScreen:
        slots = self.rows * self.cols
        pool = [app for app in self.app_names if app not in excluding and app != containing]
        count = self.rng.randint(max(1, (slots * 3 + 4) // 5), min(slots, len(pool)))
        apps = self.rng.sample(pool, count - (containing is not None)) + ([containing] if containing else [])
        self.rng.shuffle(apps)
        layout: list[str | None] = [None] * slots
        for slot, app in zip(sorted(self.rng.sample(range(slots), len(apps))), apps, strict=True):
            layout[slot] = app
        return screens.HomeScreen(self.theme, self.clock, self.rows, self.cols, layout, self.icon_colors, self.date)

    def app_page(self, app: str) -> screens.ListScreen:
        if app not in self.pages:
            items = self.rng.sample(screens.ITEM_NAMES, self.rng.randint(4, 7))
            colors = [self.rng.choice(screens.ICON_COLORS) for _ in items]
            self.pages[app] = screens.ListScreen(self.theme, self.clock, app, items, colors)
        return self.pages[app]

    def detail(self, header: str, title: str, buttons: tuple[str, ...] = ()) -> screens.DetailScreen:
        lines = [
            f"Updated {self.rng.randint(2, 59)} minutes ago",
            f"{self.rng.randint(2, 40)} comments",
            "Shared with you",
        ]
        return screens.DetailScreen(self.theme, self.clock, header, title, lines[: self.rng.randint(1, 3)], buttons)

    def loading(self, title: str) -> screens.LoadingScreen:
        return screens.LoadingScreen(self.theme, self.clock, title, self.rng.randrange(0, 360, 30))

    def maybe_wait(self, script: Script, title: str) -> None:
        if self.rng.random() < 0.5:
            script.wait(self.loading(title), "The page is still loading, so I wait for it.")

    def other_app(self, *avoid: str) -> str:
        return self.rng.choice([app for app in self.app_names if app not in avoid])


# Tasks: each scripts one episode on the world's screens and returns its instruction.


def launch_icon(world: World, script: Script) -> str:
    app = world.other_app()
    home = world.home(containing=app)
    where = screens.grid_position(home.slots.index(app), home.cols)
    thought = f"The {app} icon is on the home screen at {where}, so I tap it to open the app."
    script.click(home, f"icon:{app}", f"Click on the {app} app icon.", thought)
    world.maybe_wait(script, app)
    script.terminate(world.app_page(app), f"The {app} app is open, so the task is done.")
    return world.rng.choice(LAUNCH_WORDING).format(app)


def open_app(world: World, script: Script) -> str:
    app = world.other_app()
    if world.rng.random() < 0.5:
        start, seen = world.home(excluding=(app,)), f"There is no {app} icon on the home screen"
    else:
        start, seen = world.app_page(world.other_app(app)), f"{app} is not open and no icon for it is visible"
    script.open_app(start, app, f"{seen}, so I launch it directly.")
    world.maybe_wait(script, app)
    script.terminate(world.app_page(app), f"The {app} app is open, so the task is done.")
    return world.rng.choice(LAUNCH_WORDING).format(app)


def web_search(world: World, script: Script) -> str:
    rng, theme, clock = world.rng, world.theme, world.clock
    query, engine = rng.choice(QUERIES), rng.choice(ENGINES)
    results = [(site, result_title(rng, query, site)) for site in rng.sample(SITES, rng.randint(3, 5))]
    site, title = rng.choice(results)
    search_page = partial(screens.SearchScreen, theme, clock, engine)  # (query, focused)
    if rng.random() < 0.5:
        thought = "I need to search, so I tap the search bar on the home screen."
        script.click(world.home(), "search_bar", "Click on the search bar.", thought)
    else:
        thought = "I tap the search field to enter my query."
        script.click(search_page(), "search_field", "Click on the search field.", thought)
    script.type(search_page("", True), query, f"The field is focused, so I type '{query}'.")
    script.press_enter(search_page(query, True), "The query is typed; Enter runs the search.")
    world.maybe_wait(script, "Search results")
    thought = f"The result from {site} is in the list, so I open it."
    listing = screens.ResultsScreen(theme, clock, query, results)
    script.click(listing, f"result:{site}", f"Click on the result from {site}.", thought)
    script.terminate(world.detail(site, title), f"The {site} page is open, so the task is done.")
    return INSTRUCTIONS["web_search"].format(query=query, site=site)


def result_title(rng: random.Random, query: str, site: str) -> str:
    name = site.split(".")[0].capitalize()
    return rng.choice(("{q} - {s}", "Best {q} | {s}", "{q}: what to know - {s}")).format(q=query.capitalize(), s=name)


def toggle_setting(world: World, script: Script) -> str:
    rng, size = world.rng, script.size
    names = rng.sample(screens.SETTING_NAMES, rng.randint(12, len(screens.SETTING_NAMES)))
    turn_on, from_home = rng.random() < 0.5, rng.random() < 0.3
    title = "Settings" if from_home else rng.choice(SETTINGS_TITLES)
    first_page = screens.SettingsScreen(world.theme, world.clock, title, [(name, False) for name in names])
    below = [name for name in names if name not in first_page.visible_settings(size)]
    setting = rng.choice(below if below and rng.random() < 0.6 else names)  # mostly off the first page: scrolls
    rows = [(name, (not turn_on) if name == setting else rng.random() < 0.5) for name in names]
    if from_home:
        thought = "The switches are in the Settings app, so I open it."
        script.click(world.home(containing="Settings"), "icon:Settings", "Click on the Settings app icon.", thought)
    screen = screens.SettingsScreen(world.theme, world.clock, title, rows)
    use_swipe = rng.random() < 0.5
    while setting not in screen.visible_settings(size):
        screen = scroll_settings(script, screen, setting, use_swipe)
    state = "on" if turn_on else "off"
    thought = f"The {setting} switch is visible and {'off' if turn_on else 'on'}, so I tap it to turn it {state}."
    script.click(screen, f"switch:{setting}", f"Click on the {setting} switch to turn it {state}.", thought)
    flipped = [(name, turn_on if name == setting else on) for name, on in rows]
    after = screens.SettingsScreen(world.theme, world.clock, title, flipped, screen.scroll_px)
    script.terminate(after, f"{setting} is now {state}, so the task is done.")
    return INSTRUCTIONS["toggle_setting"].format(state=state, setting=setting)


def scroll_settings(
    script: Script, screen: screens.SettingsScreen, setting: str, use_swipe: bool
) -> screens.SettingsScreen:
    """One scroll (half a list page) or swipe (40% of the screen height) down the list; returns the new screen."""
    size, thought = script.size, f"{setting} is not among the visible settings, so I scroll down to find it."
    if use_swipe:
        shift = round(0.4 * size.height)
        script.swipe_up(screen, "Swipe up to see more settings.", thought)
    else:
        top, bottom = screens.SettingsScreen.viewport(size)
        shift = round(0.5 * (bottom - top))
        script.scroll_half_page_down(screen, "Scroll down to see more settings.", thought)
    scroll_px = min(screen.scroll_px + shift, screen.max_scroll(size))
    return screens.SettingsScreen(screen.theme, screen.clock, screen.title, screen.rows, scroll_px)


def icon_menu(world: World, script: Script) -> str:
    rng = world.rng
    app, option = world.other_app(), rng.choice(("Remove", "App info"))
    home = world.home(containing=app)
    others = rng.sample([o for o in MENU_OPTIONS if o != option], rng.randint(2, 3))
    options = tuple(rng.sample([option, *others], len(others) + 1))
    thought = f"Long pressing the {app} icon opens its menu."
    script.click(home, f"icon:{app}", f"Long press the {app} app icon.", thought, long_press=True)
    thought = f"The menu for {app} is open and lists '{option}', so I tap it."
    menu = replace(home, menu_app=app, menu_options=options)
    script.click(menu, f"menu:{option}", f"Click on '{option}' in the menu.", thought)
    if option == "Remove":
        after = replace(home, slots=[None if slot == app else slot for slot in home.slots])
        script.terminate(after, f"{app} is gone from the home screen, so the task is done.")
        return INSTRUCTIONS["remove_icon"].format(app=app)
    info = world.detail("App info", app, ("Open", "Force stop"))
    script.terminate(info, f"The app info page of {app} is shown, so the task is done.")
    return INSTRUCTIONS["app_info"].format(app=app)


def go_back(world: World, script: Script) -> str:
    app = world.other_app()
    page = world.app_page(app)
    item = world.rng.choice(page.items)
    detail = world.detail(app, item)
    if world.rng.random() < 0.5:
        script.click(page, f"row:{item}", f"Click on '{item}'.", f"'{item}' is in the {app} list, so I open it.")
        instruction = INSTRUCTIONS["open_item_and_back"].format(item=item, app=app)
    else:
        instruction = INSTRUCTIONS["back_to_list"].format(app=app)
    script.back(detail, f"The '{item}' page is open; going back returns to the {app} list.")
    script.terminate(page, f"The {app} list is shown again, so the task is done.")
    return instruction


def go_home(world: World, script: Script) -> str:
    rng = world.rng
    current = world.other_app()
    start = world.app_page(current) if rng.random() < 0.5 else world.detail(current, rng.choice(screens.ITEM_NAMES))
    if rng.random() < 0.5:
        script.home(start, f"{current} is open; the home button leads to the home screen.")
        script.terminate(world.home(), "The home screen is shown, so the task is done.")
        return rng.choice(GO_HOME_WORDING)
    app = world.other_app(current)
    script.home(start, f"I need the home screen to find the {app} icon.")
    home = world.home(containing=app)
    thought = f"The {app} icon is at {screens.grid_position(home.slots.index(app), home.cols)}, so I tap it."
    script.click(home, f"icon:{app}", f"Click on the {app} app icon.", thought)
    script.terminate(world.app_page(app), f"The {app} app is open, so the task is done.")
    return INSTRUCTIONS["home_and_open"].format(app=app)


TASKS = {
    "launch_icon": launch_icon,
    "open_app": open_app,
    "web_search": web_search,
    "toggle_setting": toggle_setting,
    "icon_menu": icon_menu,
    "go_back": go_back,
    "go_home": go_home,
}


@dataclass(frozen=True)
class SyntheticConfig:
    """How screens look and which tasks run (the command line's knobs: r1_gui.synthetic.cli)."""

    width: int = 540
    height: int = 1170
    grid: tuple[int, int] = (5, 4)
    task_mix: tuple[str, ...] = tuple(TASKS)
    click_jitter: float = 0.0
    decimals: int = 4  # digits of the screen fractions in the action code (Aguvis data: up to 4; 1 to 6)
    apps: int = ALL_APPS  # how many app names (the first ones) appear; 12 or fewer have distinct colours

    def __post_init__(self):
        if self.width < 64 or self.height < 64:
            raise ValueError(f"width and height must be at least 64 pixels, got {self.width}x{self.height}")
        rows, cols = self.grid
        if not (1 <= rows <= 8 and 1 <= cols <= 6):
            raise ValueError(f"grid must be between 1x1 and 8x6 (rows x cols), got {rows}x{cols}")
        if not self.task_mix or set(self.task_mix) - set(TASKS):
            raise ValueError(f"task_mix {list(self.task_mix)} must be a non-empty subset of {list(TASKS)}")
        needed = max(1, (rows * cols * 3 + 4) // 5) + 1  # a home screen fills at least 3/5 of its grid
        if not needed <= self.apps <= len(screens.APP_NAMES):
            raise ValueError(f"apps must be between {needed} (for a {rows}x{cols} grid) and {len(screens.APP_NAMES)}")
        if not 1 <= self.decimals <= 6:
            raise ValueError(f"decimals must be between 1 and 6, got {self.decimals}")
        if not 0.0 <= self.click_jitter < 1.0:
            raise ValueError(
                f"click_jitter is a fraction of the element's half-size in [0, 1), got {self.click_jitter}"
            )

    @property
    def size(self) -> screens.Size:
        return screens.Size(self.width, self.height)


def make_episode(config: SyntheticConfig, seed: int, index: int) -> Episode:
    """Episode `index` of a seed: its own generator, so it is the same whatever the episode count."""
    rng = random.Random(f"r1_gui-synthetic:{seed}:{index}")
    task = config.task_mix[index % len(config.task_mix)]
    episode = Episode(task)
    episode.instruction = TASKS[task](
        World(rng, config.grid, config.apps), Script(episode, config.size, rng, config.click_jitter, config.decimals)
    )
    return episode


def iter_episodes(
    config: SyntheticConfig, seed: int, episodes: int | None, records: int | None
) -> Iterator[tuple[str, Episode]]:
    """(episode id, episode) pairs: `episodes` of them, or as many as give exactly `records` steps."""
    index, produced = 0, 0
    while (records is None and index < episodes) or (records is not None and produced < records):
        episode = make_episode(config, seed, index)
        if records is not None:
            del episode.steps[records - produced :]
        produced += len(episode.steps)
        yield f"{index:06d}", episode
        index += 1


def check_counts(episodes: int | None, records: int | None) -> tuple[int | None, int | None]:
    if (episodes is None) == (records is None):
        raise ValueError("pass exactly one of episodes (a number of episodes) or records (a number of records)")
    if (episodes if records is None else records) < 1:
        raise ValueError(f"episodes or records must be at least 1, got {episodes if records is None else records}")
    return episodes, records


def synthetic_config(
    width=540, height=1170, grid=(5, 4), task_mix=None, click_jitter=0.0, decimals=4, apps=ALL_APPS
) -> SyntheticConfig:
    """The SyntheticConfig of these settings, with the defaults ``generate`` uses (``task_mix`` None: every task)."""
    return SyntheticConfig(width, height, tuple(grid), tuple(task_mix or TASKS), click_jitter, decimals, apps)
