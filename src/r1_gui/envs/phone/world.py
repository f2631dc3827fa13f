"""The phone's contents and state: `Page` (one screen on the back stack), `PhoneState` (everything an action can
change) and `PhoneWorld` (everything fixed for an episode: colours, apps, list items, search results, settings).

A world is built on `r1_gui.synthetic`: its `episodes.World` draws the theme, clock, date, home layout and app
pages, and `screens` draws every page, so the environment's screenshots look exactly like the synthetic training
data. Content that is only needed when the agent goes there (an app's list, a result page) comes from a generator
keyed by the episode seed and the content's name, so it does not depend on the order in which the agent visits.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from functools import partial

from r1_gui.synthetic import episodes, screens

SETTINGS_APP = "Settings"
LOADING_STEPS = 2  # a loading page finishes after this many steps, or at once on a wait


@dataclass(frozen=True)
class Page:
    """One page on the back stack. kind: home, list (name = app), detail (name = app, item), app_info (name = app),
    search (name = engine, query, focused), results (query), site (name = site, query), settings, loading
    (name = what loads, then = the page it becomes, remaining = steps left)."""

    kind: str
    name: str = ""
    item: str = ""
    query: str = ""
    focused: bool = False
    then: Page | None = None
    remaining: int = 0


HOME = Page("home")


@dataclass(frozen=True)
class PhoneState:
    """Everything an action can change. Hashable, so rendered screens are cached by it."""

    stack: tuple[Page, ...]
    slots: tuple[str | None, ...]  # the home grid, row-major; None is an empty cell
    settings: tuple[bool, ...]  # one switch per PhoneWorld.setting_names
    scroll_px: int = 0  # how far the settings list is scrolled
    menu_app: str | None = None  # the app whose long-press menu is open on the home screen
    # what was opened: ("item", app, item), ("site", query, site), and ("app", name) for each app page shown
    visited: frozenset = field(default_factory=frozenset)

    @property
    def top(self) -> Page:
        return self.stack[-1]

    def setting(self, world: PhoneWorld, name: str) -> bool:
        return self.settings[world.setting_names.index(name)]

    def view_key(self) -> tuple:
        """What the screenshot depends on (the rest of the state is invisible on the current page)."""
        top = self.top
        if top.kind == "home":
            return (top, self.slots, self.menu_app)
        if top.kind == "settings":
            return (top, self.settings, self.scroll_px)
        return (top,)


class PhoneWorld(episodes.World):
    """The fixed contents of one episode, drawn from `seed`; builds the `screens.Screen` of any state."""

    def __init__(
        self,
        seed: int,
        size: screens.Size,
        grid: tuple[int, int],
        apps: int,
    ):
        super().__init__(random.Random(f"r1_gui-env:{seed}:world"), grid, apps)
        self.seed, self.size = seed, size
        # Set by the task that builds the episode (r1_gui.envs.phone.tasks):
        self.base_home: screens.HomeScreen | None = None
        self.setting_names: tuple[str, ...] = ()
        self.settings_title, self.engine = "Settings", "Google"
        self.slow: set[str] = set()  # app names and "search:<query>" keys that open through a loading page
        self._details: dict[tuple, screens.DetailScreen] = {}
        self._results: dict[str, list[tuple[str, str]]] = {}

    def keyed_rng(self, key: str) -> random.Random:
        return random.Random(f"r1_gui-env:{self.seed}:{key}")

    def _with_rng(self, key: str, make):
        """Run one of episodes.World's drawing methods on a generator of its own (visit order does not matter)."""
        saved, self.rng = self.rng, self.keyed_rng(key)
        try:
            return make()
        finally:
            self.rng = saved

    def app_page(self, app: str) -> screens.ListScreen:
        if app not in self.pages:
            self._with_rng(f"app:{app}", partial(super().app_page, app))
        return self.pages[app]

    def detail_page(self, header: str, title: str, buttons: tuple[str, ...] = ()) -> screens.DetailScreen:
        key = (header, title, buttons)
        if key not in self._details:
            self._details[key] = self._with_rng(f"detail:{key}", partial(self.detail, header, title, buttons))
        return self._details[key]

    def menu_options(self, app: str) -> tuple[str, ...]:
        """The long-press menu of an app's icon: always App info and Remove, plus one or two others."""
        rng = self.keyed_rng(f"menu:{app}")
        others = rng.sample([o for o in episodes.MENU_OPTIONS if o not in ("App info", "Remove")], rng.randint(1, 2))
        options = ["App info", "Remove", *others]
        rng.shuffle(options)
        return tuple(options)

    def results(self, query: str) -> list[tuple[str, str]]:
        """The result list of a query: (site, title) pairs, the same every time the query is searched."""
        if query not in self._results:
            rng = self.keyed_rng(f"results:{query}")
            sites = rng.sample(episodes.SITES, rng.randint(3, 5))
            self._results[query] = [(site, episodes.result_title(rng, query, site)) for site in sites]
        return self._results[query]

    def opens_slowly(self, what: str) -> bool:
        return what in self.slow

    def main_page(self, app: str) -> Page:
        return Page("settings") if app == SETTINGS_APP else Page("list", app)

    def launch(self, app: str) -> Page:
        """The page an app opens on (its loading page first when it is slow)."""
        page = self.main_page(app)
        return Page("loading", app, then=page, remaining=LOADING_STEPS) if self.opens_slowly(app) else page

    def screen(self, state: PhoneState) -> screens.Screen:
        """The synthetic screen that shows `state`."""
        top, theme, clock = state.top, self.theme, self.clock
        if top.kind == "home":
            menu = self.menu_options(state.menu_app) if state.menu_app else ()
            return replace(self.base_home, slots=list(state.slots), menu_app=state.menu_app, menu_options=menu)
        if top.kind == "list":
            return self.app_page(top.name)
        if top.kind == "detail":
            return self.detail_page(top.name, top.item)
        if top.kind == "app_info":
            return self.detail_page("App info", top.name, ("Open", "Force stop"))
        if top.kind == "search":
            return screens.SearchScreen(theme, clock, top.name, top.query, top.focused)
        if top.kind == "results":
            return screens.ResultsScreen(theme, clock, top.query, self.results(top.query))
        if top.kind == "site":
            title = dict(self.results(top.query)).get(top.name, top.name)
            return self.detail_page(top.name, title)
        if top.kind == "settings":
            rows = list(zip(self.setting_names, state.settings, strict=True))
            return screens.SettingsScreen(theme, clock, self.settings_title, rows, state.scroll_px)
        if top.kind == "loading":
            return screens.LoadingScreen(theme, clock, top.name, (90 * top.remaining) % 360)
        raise ValueError(f"unknown page kind {top.kind!r}")
