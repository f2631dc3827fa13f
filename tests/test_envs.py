"""PhoneEnv: every transition a task needs (one hand-written row each), the expert on every family and seed, a
random policy, bad inputs, determinism, model text in each style, and the Gymnasium contract."""

import math
import random
import time
from dataclasses import replace

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import r1_gui.envs  # noqa: F401  (registers the environments)
from r1_gui.actions import Action, format_action
from r1_gui.envs import TASKS, PhoneEnv
from r1_gui.envs.phone.env import advance
from r1_gui.envs.phone.expert import expert_action, tap
from r1_gui.envs.phone.machine import apply, nav_buttons
from r1_gui.envs.phone.tasks import MAX_STEPS, new_episode
from r1_gui.envs.phone.world import HOME, LOADING_STEPS, Page
from r1_gui.envs.policies import RandomPolicy
from r1_gui.synthetic import screens

SIZE = screens.Size(224, 448)


def episode(family, seed=0):
    return new_episode(family, seed, SIZE, (3, 3), 12)


def first_episode(family, condition):
    """The first seed's episode whose (world, state, goal) satisfies `condition`."""
    for seed in range(200):
        world, state, goal = episode(family, seed)
        if condition(world, state, goal):
            return world, state, goal
    raise AssertionError(f"no {family} episode satisfies the condition")


def box_of(world, state, element):
    return world.screen(state).elements(world.size)[element]


def point(x_px, y_px):
    return Action("click", x=x_px / SIZE.width, y=y_px / SIZE.height)


def beside_icon(world, state, goal):
    """A point in the icon's grid cell but off the icon (below its label), where nothing is drawn to act on."""
    x1, y1, x2, y2 = box_of(world, state, f"icon:{goal.app}")
    return point((x1 + x2) / 2, y2 + (y2 - y1) * 0.6)


def settings_state(world, state):
    return replace(state, stack=(HOME, Page("settings")))


def search_state(focused, query=""):
    return lambda world, state, goal: replace(
        state, stack=(HOME, Page("search", world.engine, query=query, focused=focused))
    )


def with_menu(world, state, goal):
    return replace(state, menu_app=goal.app)


def first_visible(world, state):
    return world.screen(settings_state(world, state)).visible_settings(world.size)[0]


def unchanged(world, goal, before, after, error):
    return after == before


RESULTS = Page("results", query="pizza")
LOADING_RESULTS = Page("loading", "Search results", then=RESULTS, remaining=LOADING_STEPS)
QUICK = lambda world, state, goal: True  # noqa: E731
TASK_APP_FAST = lambda world, state, goal: goal.app is not None and not world.opens_slowly(goal.app)  # noqa: E731

# (comment, family, which episode, prepare the state, the action, what must hold afterwards)
TRANSITIONS = [
    # a click on an app icon opens the app (its list page, or its loading page when it opens slowly)
    ("click icon opens app", "launch_icon", QUICK, None,
     lambda w, s, g: tap(w, s, f"icon:{g.app}"), lambda w, g, b, a, e: a.top == w.launch(g.app)),
    # the same click on an app that opens fast shows its main page at once
    ("click icon of a fast app shows its page", "launch_icon", TASK_APP_FAST, None,
     lambda w, s, g: tap(w, s, f"icon:{g.app}"), lambda w, g, b, a, e: a.top == w.main_page(g.app)),
    # a click beside the icon (in its cell, below the label) changes nothing
    ("click beside icon does nothing", "launch_icon", QUICK, None, beside_icon, unchanged),
    # a click on the status bar hits nothing
    ("click on status bar does nothing", "launch_icon", QUICK, None, lambda w, s, g: point(5, 2), unchanged),
    # long press on an icon opens its menu
    ("long press icon opens menu", "icon_menu", QUICK, None,
     lambda w, s, g: tap(w, s, f"icon:{g.app}", "long_press"), lambda w, g, b, a, e: a.menu_app is not None),
    # long press on the wallpaper changes nothing
    ("long press on nothing does nothing", "icon_menu", QUICK, None,
     lambda w, s, g: Action("long_press", x=0.02, y=0.5), unchanged),
    # "Remove" in the menu takes the icon off the home screen and closes the menu
    ("menu Remove removes icon", "icon_menu", QUICK, with_menu,
     lambda w, s, g: tap(w, s, "menu:Remove"), lambda w, g, b, a, e: b.menu_app not in a.slots and a.menu_app is None),
    # "App info" in the menu opens the app info page
    ("menu App info opens info page", "icon_menu", QUICK, with_menu,
     lambda w, s, g: tap(w, s, "menu:App info"), lambda w, g, b, a, e: a.top == Page("app_info", b.menu_app)),
    # a tap outside the menu closes it without doing anything else
    ("tap outside menu closes it", "icon_menu", QUICK, with_menu,
     lambda w, s, g: point(3, SIZE.status_bottom + 3), lambda w, g, b, a, e: a == replace(b, menu_app=None)),
    # back closes the menu
    ("back closes menu", "icon_menu", QUICK, with_menu,
     lambda w, s, g: Action("back"), lambda w, g, b, a, e: a == replace(b, menu_app=None)),
    # "Open" on the app info page opens the app
    ("app info Open opens the app", "icon_menu", QUICK,
     lambda w, s, g: replace(s, stack=(HOME, Page("app_info", g.app))),
     lambda w, s, g: tap(w, s, "button:Open"), lambda w, g, b, a, e: a.top == w.launch(g.app)),
    # back from the detail page returns to the list
    ("back from detail returns to list", "go_back", lambda w, s, g: s.top.kind == "detail", None,
     lambda w, s, g: Action("back"), lambda w, g, b, a, e: a.top == Page("list", b.top.name)),
    # the back chevron in the detail page's header does the same
    ("detail back chevron returns to list", "go_back", lambda w, s, g: s.top.kind == "detail", None,
     lambda w, s, g: tap(w, s, "back_button"), lambda w, g, b, a, e: a.top == Page("list", b.top.name)),
    # the navigation bar's back button does the same
    ("nav bar back returns to list", "go_back", lambda w, s, g: s.top.kind == "detail", None,
     lambda w, s, g: point(*screens.center(nav_buttons(SIZE)["nav:back"])),
     lambda w, g, b, a, e: a.top == Page("list", b.top.name)),
    # a click on a list row opens its detail page and marks the item as opened
    ("click row opens detail", "go_back", lambda w, s, g: s.top.kind == "list", None,
     lambda w, s, g: tap(w, s, f"row:{g.visited[0][2]}"),
     lambda w, g, b, a, e: a.top == Page("detail", g.app, g.visited[0][2]) and g.visited[0] in a.visited),
    # home from a detail page shows the home screen with nothing else on the stack
    ("home from detail shows home", "go_home", lambda w, s, g: s.top.kind == "detail", None,
     lambda w, s, g: Action("home"), lambda w, g, b, a, e: a.stack == (HOME,)),
    # the navigation bar's home button does the same
    ("nav bar home shows home", "go_home", QUICK, None,
     lambda w, s, g: point(*screens.center(nav_buttons(SIZE)["nav:home"])), lambda w, g, b, a, e: a.stack == (HOME,)),
    # back on the home screen changes nothing
    ("back on home does nothing", "launch_icon", QUICK, None, lambda w, s, g: Action("back"), unchanged),
    # open_app opens an installed app by name, any case, from anywhere
    ("open_app by name", "go_home", QUICK, None,
     lambda w, s, g: Action("open_app", text="  cLoCk "), lambda w, g, b, a, e: a.stack == (HOME, w.launch("Clock"))),
    # open_app Settings opens the settings page
    ("open_app Settings", "launch_icon", lambda w, s, g: not w.opens_slowly("Settings"), None,
     lambda w, s, g: Action("open_app", text="Settings"), lambda w, g, b, a, e: a.top == Page("settings")),
    # open_app with a name the phone does not have changes nothing and says so
    ("open_app unknown name", "launch_icon", QUICK, None,
     lambda w, s, g: Action("open_app", text="Nope"), lambda w, g, b, a, e: a == b and "no app named" in e),
    # the home screen's search bar opens the search page with the keyboard up
    ("home search bar opens search", "web_search", lambda w, s, g: s.stack == (HOME,), None,
     lambda w, s, g: tap(w, s, "search_bar"), lambda w, g, b, a, e: a.top == Page("search", w.engine, focused=True)),
    # a click on the search field focuses it
    ("click field focuses it", "web_search", QUICK, search_state(False),
     lambda w, s, g: tap(w, s, "search_field"), lambda w, g, b, a, e: a.top.focused),
    # typing goes into the focused field, replacing its text
    ("type into focused field", "web_search", QUICK, search_state(True, "old"),
     lambda w, s, g: Action("type", text="pizza"), lambda w, g, b, a, e: a.top.query == "pizza"),
    # typing with no field focused changes nothing and says so
    ("type without focus", "web_search", QUICK, search_state(False),
     lambda w, s, g: Action("type", text="pizza"), lambda w, g, b, a, e: a == b and "focused" in e),
    # Enter runs the query: the results page (through "Search results" loading when slow)
    ("enter submits query", "web_search", QUICK, search_state(True, "pizza"),
     lambda w, s, g: Action("press", keys=("enter",)),
     lambda w, g, b, a, e: a.top in (RESULTS, LOADING_RESULTS)),
    # the keyboard's Enter key does the same
    ("keyboard enter submits", "web_search", QUICK, search_state(True, "pizza"),
     lambda w, s, g: tap(w, s, "enter_key"), lambda w, g, b, a, e: a.top.kind in ("results", "loading")),
    # Enter on an empty field does nothing
    ("enter with empty query", "web_search", QUICK, search_state(True),
     lambda w, s, g: Action("press", keys=("enter",)), unchanged),
    # back on a focused search page hides the keyboard first
    ("back hides keyboard", "web_search", QUICK, search_state(True, "pizza"),
     lambda w, s, g: Action("back"), lambda w, g, b, a, e: a.top == replace(b.top, focused=False)),
    # a click on a result opens its page and marks it visited
    ("click result opens site", "web_search", QUICK,
     lambda w, s, g: replace(s, stack=(HOME, Page("search", w.engine, query=g.query), Page("results", query=g.query))),
     lambda w, s, g: tap(w, s, f"result:{g.sites[0]}"),
     lambda w, g, b, a, e: a.top.kind == "site" and ("site", b.top.query, a.top.name) in a.visited),
    # back from a result page returns to the results
    ("back from site to results", "web_search", QUICK,
     lambda w, s, g: replace(s, stack=(HOME, Page("results", query=g.query), Page("site", g.sites[0], query=g.query))),
     lambda w, s, g: Action("back"), lambda w, g, b, a, e: a.top == Page("results", query=b.stack[1].query)),
    # a click on a visible switch flips it
    ("click switch flips it", "toggle_setting", QUICK, lambda w, s, g: settings_state(w, s),
     lambda w, s, g: tap(w, s, f"switch:{first_visible(w, s)}"), lambda w, g, b, a, e: a.settings != b.settings),
    # scrolling down moves the settings list by half its viewport
    ("scroll down moves settings", "toggle_setting", QUICK, lambda w, s, g: settings_state(w, s),
     lambda w, s, g: Action("scroll", direction="down"), lambda w, g, b, a, e: a.scroll_px > 0),
    # scrolling up at the top stays at the top
    ("scroll up at top stays", "toggle_setting", QUICK, lambda w, s, g: settings_state(w, s),
     lambda w, s, g: Action("scroll", direction="up"), unchanged),
    # a swipe up moves the list by the finger's distance
    ("swipe up moves settings", "toggle_setting", QUICK, lambda w, s, g: settings_state(w, s),
     lambda w, s, g: Action("swipe", x=0.5, y=0.7, x2=0.5, y2=0.6),
     lambda w, g, b, a, e: a.scroll_px == round(0.1 * SIZE.height)),
    # a sideways swipe does not move the list
    ("sideways swipe does nothing", "toggle_setting", QUICK, lambda w, s, g: settings_state(w, s),
     lambda w, s, g: Action("swipe", x=0.2, y=0.5, x2=0.8, y2=0.52), unchanged),
    # scrolling a page that fits on the screen changes nothing
    ("scroll on list does nothing", "go_back", QUICK, None,
     lambda w, s, g: Action("scroll", direction="down"), unchanged),
    # wait finishes a loading page at once
    ("wait finishes loading", "launch_icon", QUICK,
     lambda w, s, g: replace(s, stack=(HOME, Page("loading", g.app, then=w.main_page(g.app), remaining=2))),
     lambda w, s, g: Action("wait"), lambda w, g, b, a, e: a.top == b.top.then),
    # any other step on a loading page counts down: the page is still loading after one
    ("loading counts down", "launch_icon", QUICK,
     lambda w, s, g: replace(s, stack=(HOME, Page("loading", g.app, then=w.main_page(g.app), remaining=2))),
     lambda w, s, g: Action("click", x=0.5, y=0.5), lambda w, g, b, a, e: a.top == replace(b.top, remaining=1)),
    # ... and finishes after the last one
    ("loading finishes after steps", "launch_icon", QUICK,
     lambda w, s, g: replace(s, stack=(HOME, Page("loading", g.app, then=w.main_page(g.app), remaining=1))),
     lambda w, s, g: Action("press", keys=("enter",)), lambda w, g, b, a, e: a.top == b.top.then),
    # back on a loading page cancels it
    ("back cancels loading", "launch_icon", QUICK,
     lambda w, s, g: replace(s, stack=(HOME, Page("loading", g.app, then=w.main_page(g.app), remaining=2))),
     lambda w, s, g: Action("back"), lambda w, g, b, a, e: a.stack == (HOME,)),
    # a desktop action the phone does not know changes nothing and says so
    ("right_click is unknown", "launch_icon", QUICK, None,
     lambda w, s, g: Action("right_click", x=0.5, y=0.5), lambda w, g, b, a, e: a == b and "right_click" in e),
]  # fmt: skip


@pytest.mark.parametrize(
    ("comment", "family", "which", "prepare", "make_action", "expect"), TRANSITIONS, ids=[r[0] for r in TRANSITIONS]
)
def test_transition(comment, family, which, prepare, make_action, expect):
    world, state, goal = first_episode(family, which)
    if prepare is not None:
        state = prepare(world, state, goal)
    after, error = apply(world, state, make_action(world, state, goal))
    assert expect(world, goal, state, after, error), (comment, state, after, error)


def run(world, state, goal, limit, policy=None):
    """Play the expert (or `policy()`) through the state machine, without drawing; (success, steps)."""
    for number in range(1, limit + 1):
        action = expert_action(world, state, goal) if policy is None else policy()
        state, terminated, success, _ = advance(world, state, goal, action)
        if terminated:
            return success, number
    return False, limit


@pytest.mark.parametrize("family", TASKS)
def test_expert_succeeds_on_every_seed(family):
    steps = []
    for seed in range(300):
        world, state, goal = episode(family, seed)
        success, count = run(world, state, goal, MAX_STEPS[family])
        assert success, (family, seed, goal.instruction)
        steps.append(count)
    if family in ("search_two_results", "toggle_two_settings"):
        assert min(steps) >= 5  # the long tasks need five or more steps on every seed
    if family == "search_query":
        assert min(steps) >= 4  # a tap, the query, Enter and terminate, on every seed
    if family in ("open_two_apps", "open_and_return"):
        assert min(steps) >= 3  # two opens (an open and home) and terminate, on every seed


SEARCH_QUERY_GOALS = [
    # (comment, top page given the goal's query, reached)
    ("its query's results", lambda q: Page("results", query=q), True),
    ("another query's results", lambda q: Page("results", query=q + " now"), False),
    ("still loading", lambda q: Page("loading", "Search results", then=Page("results", query=q), remaining=1), False),
    ("a result opened past the goal", lambda q: Page("site", "yelp.com", query=q), False),
    ("the query typed, not entered", lambda q: Page("search", "Google", query=q, focused=True), False),
]


@pytest.mark.parametrize("comment,top,reached", SEARCH_QUERY_GOALS, ids=[c[0] for c in SEARCH_QUERY_GOALS])
def test_search_query_is_reached_on_its_query_results_page_alone(comment, top, reached):
    world, state, goal = episode("search_query", 5)
    assert goal.instruction == f"Search for '{goal.query}'"
    assert goal.reached(world, replace(state, stack=(HOME, top(goal.query)))) is reached


# The tasks that need an app's page shown first: (family, comment, actions from the start given the goal's apps
# (a: the app to show first; b: open_two_apps' second), reached; "loads": only where the first app opens at once)
SHOWN_FIRST_GOALS = [
    ("open_two_apps", "first, then second", lambda a, b: [("open", a), ("wait",), ("open", b), ("wait",)], True),
    ("open_two_apps", "second alone", lambda a, b: [("open", b), ("wait",)], False),
    ("open_two_apps", "second, then first", lambda a, b: [("open", b), ("wait",), ("open", a), ("wait",)], False),
    ("open_two_apps", "the first left before it loaded", lambda a, b: [("open", a), ("open", b), ("wait",)], "loads"),
    ("open_two_apps", "first, second, first again",
     lambda a, b: [("open", a), ("wait",), ("open", b), ("wait",), ("open", a)], False),
    ("open_two_apps", "back to the second after a detour home",
     lambda a, b: [("open", a), ("wait",), ("open", b), ("wait",), ("home",), ("open", b), ("wait",)], True),
    ("open_and_return", "the app, then home", lambda a, b: [("open", a), ("wait",), ("home",)], True),
    ("open_and_return", "the app, then back", lambda a, b: [("open", a), ("wait",), ("back",)], True),
    ("open_and_return", "home alone", lambda a, b: [("home",)], False),
    ("open_and_return", "the app, still on it", lambda a, b: [("open", a), ("wait",)], False),
    ("open_and_return", "home before it loaded", lambda a, b: [("open", a), ("home",)], "loads"),
    ("open_and_return", "another app, then home",
     lambda a, b: [("open", "Clock" if a != "Clock" else "Camera"), ("wait",), ("home",)], False),
]  # fmt: skip
INSTRUCTIONS_SHOWN_FIRST = {
    "open_two_apps": lambda a, b: f"Open {a}, then open {b}",
    "open_and_return": lambda a, b: f"Open {a}, then go back to the home screen",
}


@pytest.mark.parametrize(
    "family,comment,actions,reached", SHOWN_FIRST_GOALS, ids=[f"{c[0]}: {c[1]}" for c in SHOWN_FIRST_GOALS]
)
def test_app_shown_first_then_the_goal_page(family, comment, actions, reached):
    for seed in range(40):
        world, state, goal = episode(family, seed)
        ((_, first),), second = goal.visited, goal.app
        assert goal.instruction == INSTRUCTIONS_SHOWN_FIRST[family](first, second)
        for name, *app in actions(first, second):
            state, _ = apply(world, state, Action("open_app", text=app[0]) if name == "open" else Action(name))
        # a slow first app left while loading was never shown: reached only where it opens at once
        expected = not world.opens_slowly(first) if reached == "loads" else reached
        assert goal.reached(world, state) is expected, (comment, seed, state)


@pytest.mark.parametrize("family", TASKS)
def test_expert_recovers_after_random_mistakes(family):
    policy = RandomPolicy(seed=1, types=tuple(t for t in RandomPolicy().types if t != "terminate"))
    picker, unrecoverable, mistakes_made = random.Random(family), 0, 0
    for seed in range(300):
        world, state, goal = episode(family, seed)
        mistake_at = set(picker.sample(range(5), 1 + seed % 3))  # steps where a random action replaces the expert's
        success = False
        for number in range(3 * MAX_STEPS[family]):
            action = policy.action() if number in mistake_at else expert_action(world, state, goal)
            mistakes_made += number in mistake_at
            state, terminated, success, _ = advance(world, state, goal, action)
            if terminated:
                break
            if goal.option == "App info" and goal.app not in state.slots:
                break  # a random "Remove" took the icon whose menu the task needs: no way back (expert.py)
        if goal.option == "App info" and goal.app not in state.slots:
            unrecoverable += 1
            continue
        assert success, (family, seed, goal.instruction, state)
    assert unrecoverable <= 3 and mistakes_made >= 300


def test_random_policy_rarely_succeeds():
    policy, wins, episodes = RandomPolicy(seed=0), 0, 0
    for family in TASKS:
        for seed in range(150):
            world, state, goal = episode(family, seed)
            success, _ = run(world, state, goal, MAX_STEPS[family], policy.action)
            wins, episodes = wins + success, episodes + 1
    assert wins / episodes < 0.05


# -- the environment ---------------------------------------------------------------------------------------------


def play(env, seed, family, policy):
    observation, info = env.reset(seed=seed, options={"task": family})
    frames, total = [observation["screenshot"].tobytes()], 0.0
    while True:
        observation, reward, terminated, truncated, info = env.step(policy(observation, info))
        frames.append(observation["screenshot"].tobytes())
        total += reward
        if terminated or truncated:
            return total, info, frames


@pytest.mark.parametrize("family", TASKS)
def test_env_expert_episode_rewards_success(family):
    env = gymnasium.make("r1_gui/Phone-v0")
    for seed in range(3):
        reward, info, _ = play(env, seed, family, lambda o, i: i["expert_action"])
        assert reward == 1.0 and info["success"] and info["task"] == family


def test_terminate_early_or_with_failure_fails():
    env = PhoneEnv(task="toggle_setting")
    _, info = env.reset(seed=0)
    _, reward, terminated, _, info = env.step(Action("terminate", status="success"))  # nothing done yet
    assert (reward, terminated, info["success"]) == (0.0, True, False)
    env.reset(seed=0)
    for _ in range(20):
        if info["expert_action"].type == "terminate":
            break
        _, _, _, _, info = env.step(info["expert_action"])
    _, reward, terminated, _, info = env.step(Action("terminate", status="failure"))  # at the goal, wrong status
    assert (reward, terminated, info["success"]) == (0.0, True, False)


def test_max_steps_overridable_and_truncates():
    env = gymnasium.make("r1_gui/Phone-v0", task="web_search", max_steps=2)
    env.reset(seed=0)
    assert env.step(Action("wait"))[3] is False
    _, reward, terminated, truncated, info = env.step(Action("wait"))
    assert (reward, terminated, truncated, info["step"]) == (0.0, False, True, 2)


BAD_INPUTS = [
    ("no action in the text", "I would like to click the icon"),
    ("aguvis click off the screen", "pyautogui.click(x=1.5, y=0.2)"),
    ("NaN coordinates", "pyautogui.click(x=nan, y=0.2)"),
    (
        "mobile_use point off its grid",
        '{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [5000, 10]}}',
    ),
    ("GUI-R1 point off the screenshot", "[{'action': 'click', 'point': [900, 9000], 'input_text': 'no input text'}]"),
    ("a 1 MB string", "pyautogui.click(x=0.5, y=0.5)" * 40_000),
    ("empty text", ""),
    ("not text at all", 12345),
    ("None", None),
    ("a desktop right click", Action("right_click", x=0.5, y=0.5)),
    ("a desktop hotkey", Action("hotkey", keys=("ctrl", "c"))),
]


@pytest.mark.parametrize(("comment", "bad"), BAD_INPUTS, ids=[b[0] for b in BAD_INPUTS])
def test_bad_input_never_raises_and_changes_nothing(comment, bad):
    env = PhoneEnv(task="launch_icon")
    observation, _ = env.reset(seed=0)
    after, reward, terminated, truncated, info = env.step(bad)
    assert np.array_equal(after["screenshot"], observation["screenshot"])
    assert (reward, terminated, truncated, info["step"]) == (0.0, False, False, 1)
    assert info["error"] and not info["success"]


@pytest.mark.parametrize("style", ["mobile_use", "aguvis", "guir1"])
def test_model_text_in_each_style(style):
    env = PhoneEnv(task="launch_icon")
    _, info = env.reset(seed=0)
    click = info["expert_action"]
    assert click.type == "click"
    text = format_action(click, style, image_size=info["screen_size"])  # each style's own coordinates
    _, _, _, _, after = env.step(text)
    assert after["parsed"] and after["error"] is None and after["action"].type == "click"
    assert env.unwrapped.state.top.kind in ("list", "settings", "loading")


def test_same_seed_same_bytes():
    policy_a, policy_b = RandomPolicy(seed=5), RandomPolicy(seed=5)
    for family in ("web_search", "toggle_two_settings"):
        _, _, frames_a = play(PhoneEnv(), 7, family, lambda o, i: policy_a.action())
        _, _, frames_b = play(PhoneEnv(), 7, family, lambda o, i: policy_b.action())
        assert frames_a == frames_b


def test_check_env_passes():
    check_env(gymnasium.make("r1_gui/Phone-v0", render_mode="rgb_array").unwrapped)


@pytest.mark.parametrize("vector", [gymnasium.vector.SyncVectorEnv, gymnasium.vector.AsyncVectorEnv])
def test_vector_envs(vector):
    envs = vector([lambda: gymnasium.make("r1_gui/Phone-v0", task="go_home") for _ in range(2)])
    try:
        observations, infos = envs.reset(seed=[0, 1])
        assert observations["screenshot"].shape == (2, 448, 224, 3)
        for _ in range(3):
            observations, rewards, terminated, truncated, infos = envs.step(list(infos["expert_action"]))
        assert rewards.shape == (2,)
    finally:
        envs.close()


def test_aitw_screen_size():
    env = PhoneEnv(width=1080, height=2400, task="web_search")
    reward, info, frames = play(env, 0, "web_search", lambda o, i: i["expert_action"])
    assert reward == 1.0 and info["screen_size"] == (1080, 2400) and len(frames[0]) == 1080 * 2400 * 3


def test_unknown_task_and_bad_settings_fail_with_the_valid_values():
    with pytest.raises(ValueError, match="valid tasks: launch_icon"):
        PhoneEnv(task="fly")
    with pytest.raises(ValueError, match="apps must be between"):
        PhoneEnv(apps=3)


# A remote device's delay (Phone-v0's step_latency, for bench/async_rollouts.py): a log-normal draw per step, the same
# for the same episode and step.
@pytest.mark.parametrize(
    ("latency", "message"),
    [
        ({"median": 1.0}, "must be"),  # p95 missing
        ({"median": 1.0, "p95": 5.0, "max": 9}, "must be"),
        ({"median": 0, "p95": 5.0}, "0 < median <= p95"),
        ({"median": 2.0, "p95": 1.0}, "0 < median <= p95"),
        ({"median": "1", "p95": 5.0}, "0 < median <= p95"),
        (1.0, "must be"),
    ],
)
def test_a_step_latency_that_cannot_be_drawn_is_refused(latency, message):
    with pytest.raises(ValueError, match=message):
        PhoneEnv(step_latency=latency)


def test_step_latency_has_its_median_and_95th_percentile_and_repeats_per_episode_and_step():
    from r1_gui.envs.phone.env import check_step_latency, step_delay

    mu, sigma = check_step_latency({"median": 1.0, "p95": 5.0})
    delays = sorted(step_delay(mu, sigma, ("go_home", episode), step) for episode in range(400) for step in range(5))
    assert delays[len(delays) // 2] == pytest.approx(1.0, rel=0.1)
    assert delays[int(0.95 * len(delays))] == pytest.approx(5.0, rel=0.15)
    assert step_delay(mu, sigma, ("go_home", 3), 2) == step_delay(mu, sigma, ("go_home", 3), 2)
    assert check_step_latency({"median": 0.5, "p95": 0.5}) == (pytest.approx(math.log(0.5)), 0.0)  # constant
    env = PhoneEnv(step_latency={"median": 0.05, "p95": 0.05})
    env.reset(seed=0)
    start = time.perf_counter()
    env.step("mobile.home()")
    assert time.perf_counter() - start >= 0.05
