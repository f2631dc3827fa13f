"""One headless Chromium, driven through chromedriver by Selenium, that never reaches the network and leaves no
process behind.

    browser = Browser(viewport=(500, 320))
    browser.start()                                   # about 1-4 s: chromedriver, then Chromium
    browser.load("file:///.../click-test-2.html")
    browser.click(80, 120)                            # CSS pixels of the viewport
    image = browser.screenshot((0, 0, 160, 210), scale=2.0)
    browser.close()                                   # chromedriver and every Chromium process gone

Offline: Selenium is given the installed chromedriver (so selenium-manager, which would download a driver and send
usage statistics, never runs; SE_OFFLINE and SE_AVOID_STATS are set as well), and Chromium starts with the flags
of `CHROMIUM_FLAGS` and a fresh `--user-data-dir`, removed on close.

Processes (measured with Debian's Chromium 156 and `--no-sandbox`): chromedriver is a child of this process and
every Chromium process a descendant of chromedriver, all in this process's process group and session (Chromium
calls no setsid), so killing a worker's process group ends the whole browser. What ends it in other ways:

- `close()`: `driver.quit()`, then SIGKILL to whatever of the tree is left: the descendants of chromedriver and any
  process whose command line holds this browser's user-data-dir (Chromium's processes outlive a killed
  chromedriver and are then re-parented, but every one of them carries that flag).
- `--remote-debugging-pipe`: Chromium talks to chromedriver over a pipe and exits when the pipe closes, so a
  chromedriver that dies (SIGKILL included) takes Chromium with it.
- PR_SET_PDEATHSIG on chromedriver when the browser is started from the main thread: a Python process killed by
  SIGKILL takes chromedriver, and through the pipe Chromium, with it. (The signal follows the thread that started
  chromedriver, so a browser started from another thread goes without it: `close()` and atexit still end it.)
- atexit and `__del__` call `close()` as a backstop.
- A process killed before it could close leaves its user-data-dir (about 2 MB); the next browser started on the
  machine removes such dirs when no live process uses them (`remove_stale_profiles`).

A call that fails because the browser is gone (Chromium or chromedriver killed, the session lost) or the page
stopped answering (a script or page load past `command_timeout_s`, 10 s by default) raises `BrowserError`; one the
page refuses while the browser lives (a key chromedriver cannot send) raises the original `WebDriverException`,
which the environment reports as the step's error.
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import ctypes
import fcntl
import io
import logging
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from r1_gui.envs.runtime.processes import descendants, kill_all, process_table

logger = logging.getLogger(__name__)

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",  # root in containers; the sandbox needs user namespaces
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",  # /dev/shm is small in containers
    "--remote-debugging-pipe",  # Chromium exits when chromedriver does
    "--hide-scrollbars",
    "--mute-audio",
    # Raster the whole page each frame, not only what changed: with partial raster, a page that loads under load
    # was now and then drawn in one of two ways (1-level differences along a dialog's edges), so the same seed gave
    # two first screenshots (tests/test_envs_web.py; docs/guide/web.md, "Same seed, same page")
    "--disable-partial-raster",
)
# Before a screenshot: every image the page shows (<img> and CSS backgrounds, such as a dialog's close icon) decoded,
# so the frame captured holds them. Without it, 3 in ~1,000 dialog pages loaded on a busy machine were captured before
# the "x" icon was painted: a screenshot without the target. (Waiting two animation frames as well cost a quarter of
# the steps per second, 10.8 against 14.5 with one browser, and changed nothing measurable.)
PAINTED_SCRIPT = """
const done = arguments[arguments.length - 1];
const urls = new Set();
for (const element of document.querySelectorAll('*')) {
  for (const match of getComputedStyle(element).backgroundImage.matchAll(/url\\(["']?(.*?)["']?\\)/g)) urls.add(match[1]);
}
for (const image of document.images) if (image.src) urls.add(image.src);
const decoded = [...urls].map(url => { const image = new Image(); image.src = url; return image.decode().catch(() => null); });
Promise.all(decoded).then(() => done(urls.size));
"""
INSTALL_HINT = "install them with: apt-get update && apt-get install -y chromium chromium-driver (or: bash setup.sh)"
LONG_PRESS_S = 0.6
DRAG_MOVES = 5
PAGE_TIMEOUT_S = 10.0  # a MiniWoB page loads in well under a second and its scripts take milliseconds
PROFILE_PREFIX = "r1_gui-chromium-"
STALE_PROFILE_AGE_S = 60.0
LAUNCH_LOCK_PREFIX = "r1_gui-launch-"  # not PROFILE_PREFIX: remove_stale_profiles would take the lock files
LAUNCH_WAIT_S = 60.0  # the longest a start waits for a launch slot before it goes ahead anyway
_PR_SET_PDEATHSIG = 1


class BrowserError(RuntimeError):
    """The browser could not be started, or died (killed, crashed, session lost): an environment failure, not the
    model's; the next `start()` builds a fresh one."""


def find_binaries() -> tuple[str, str]:
    """(chromium, chromedriver) paths on PATH; BrowserError saying how to install them when one is missing."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    driver = shutil.which("chromedriver")
    if not chromium or not driver:
        missing = ", ".join(name for name, path in (("chromium", chromium), ("chromedriver", driver)) if not path)
        raise BrowserError(
            f"r1_gui/Web-v0 needs Chromium and chromedriver; not found on PATH: {missing}. {INSTALL_HINT}"
        )
    return chromium, driver


# ------------------------------------------------------------------------------------------------ processes


def remove_stale_profiles(min_age_s: float = STALE_PROFILE_AGE_S) -> list[str]:
    """Remove the user-data-dirs that browsers of processes killed without a close() left in the temporary folder:
    those no live process names on its command line and older than `min_age_s` (so that one a browser is just
    starting with is left alone). Returns the removed paths."""
    folder = tempfile.gettempdir()
    in_use = " ".join(command for _, _, command in process_table().values())
    removed = []
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        if not name.startswith(PROFILE_PREFIX) or f"--user-data-dir={path}" in in_use:
            continue
        try:
            if time.time() - os.stat(path).st_mtime < min_age_s:
                continue
        except OSError:
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


@contextlib.contextmanager
def launch_slot(slots: int | None = None, wait_s: float = LAUNCH_WAIT_S, folder: str | None = None):
    """Hold one of ``slots`` machine-wide places for a Chromium being started (default: one per core this process may
    use), for the block; yields whether a slot was held. Forty browsers started at once on 2 cores (the asynchronous
    web demo's rollout workers) time out at start and are started again; one at a time per core they start. A slot
    is an `fcntl.flock` on a file in ``folder`` (the temporary folder), freed by the kernel when its holder dies; a
    start that waits ``wait_s`` seconds goes ahead without one (a warning says so)."""
    slots = slots or len(os.sched_getaffinity(0))
    folder = folder or tempfile.gettempdir()
    deadline, held = time.monotonic() + wait_s, None
    while held is None:
        for index in range(slots):
            handle = open(os.path.join(folder, f"{LAUNCH_LOCK_PREFIX}{index}.lock"), "a")
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.close()
                continue
            held = handle
            break
        else:
            if time.monotonic() >= deadline:
                logger.warning("no Chromium launch slot of %d came free in %g s: starting without one", slots, wait_s)
                break
            time.sleep(0.05)
    try:
        yield held is not None
    finally:
        if held is not None:
            held.close()  # closing the file frees its lock


def _first_line(error: Exception) -> str:
    return (getattr(error, "msg", None) or str(error) or repr(error)).strip().splitlines()[0]


def _die_with_parent() -> Callable[[], None]:
    """A preexec_fn that makes the child (chromedriver) get SIGKILL when the thread that started it ends. prctl is
    looked up here, before the fork, so that the child only calls it."""
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    return lambda: prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


# -------------------------------------------------------------------------------------------------- browser

_LIVE: weakref.WeakSet[Browser] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for browser in list(_LIVE):
        browser.close()


class Browser:
    """One headless Chromium kept across episodes; see the module docstring.

    Args:
        viewport: (width, height) of the page's viewport in CSS pixels.
        command_timeout_s: how long a page may take to load or a script to run before the call fails.
    """

    def __init__(self, viewport: tuple[int, int] = (500, 320), command_timeout_s: float = PAGE_TIMEOUT_S):
        self.viewport = (int(viewport[0]), int(viewport[1]))
        self.command_timeout_s = float(command_timeout_s)
        self.driver = None
        self.service = None  # selenium's Service: holds the chromedriver Popen, reaped on close
        self.user_data_dir: str | None = None
        self.pointer = (0.0, 0.0)

    # -- life ----------------------------------------------------------------------------------------------------

    @property
    def started(self) -> bool:
        return self.driver is not None

    def start(self) -> None:
        """Start chromedriver and Chromium (closing a previous, possibly dead, browser first)."""
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        self.close()
        chromium, driver_path = find_binaries()
        os.environ.setdefault("SE_OFFLINE", "true")  # selenium-manager: no downloads ...
        os.environ.setdefault("SE_AVOID_STATS", "true")  # ... and no usage statistics
        remove_stale_profiles()
        self.user_data_dir = tempfile.mkdtemp(prefix=PROFILE_PREFIX)
        options = webdriver.ChromeOptions()
        options.binary_location = chromium
        for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={self.user_data_dir}"):
            options.add_argument(flag)
        popen = {"preexec_fn": _die_with_parent()} if threading.current_thread() is threading.main_thread() else {}
        service = self.service = Service(executable_path=driver_path, log_output=subprocess.DEVNULL, popen_kw=popen)
        _LIVE.add(self)
        try:
            with launch_slot():
                self.driver = webdriver.Chrome(service=service, options=options)
                self.driver.set_page_load_timeout(self.command_timeout_s)
                self.driver.set_script_timeout(self.command_timeout_s)
                width, height = self.viewport
                self.driver.execute_cdp_cmd(
                    "Emulation.setDeviceMetricsOverride",
                    {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
                )
        except Exception as error:
            self.close()
            raise BrowserError(f"Chromium did not start: {type(error).__name__}: {_first_line(error)}") from error
        logger.info("started Chromium (chromedriver pid %d, %d processes)", service.process.pid, len(self.pids()))

    def pids(self) -> set[int]:
        """chromedriver and every Chromium process of this browser that is alive now: the descendants of
        chromedriver while it is not reaped (after that its pid may belong to another process), and every process
        whose command line holds this browser's user-data-dir."""
        table = process_table()
        found = set()
        process = getattr(self.service, "process", None)
        if process is not None and process.returncode is None and process.pid in table:
            found |= {process.pid, *descendants(process.pid, table)}
        if self.user_data_dir:
            flag = f"--user-data-dir={self.user_data_dir}"
            found |= {pid for pid, (_, _, command) in table.items() if flag in command}
        return found

    def close(self) -> None:
        """End chromedriver and every Chromium process of this browser, and remove its user-data-dir. Idempotent;
        never raises."""
        if self.driver is None and self.service is None and self.user_data_dir is None:
            return  # never started, or closed already
        driver, self.driver = self.driver, None
        if driver is not None:
            try:
                driver.quit()
            except Exception as error:  # a dead browser: kill what is left below
                logger.debug("driver.quit() failed: %r", error)
            deadline = time.monotonic() + 2.0
            while (left := self.pids()) and time.monotonic() < deadline:
                time.sleep(0.05)
            kill_all(left)
        else:  # a start that failed half-way
            kill_all(self.pids())
        process = getattr(self.service, "process", None)
        if process is not None:  # reap chromedriver, so that no zombie is left either
            with contextlib.suppress(Exception):
                process.wait(timeout=2)
        if self.user_data_dir:
            shutil.rmtree(self.user_data_dir, ignore_errors=True)
        self.user_data_dir = self.service = None
        _LIVE.discard(self)

    def __del__(self):
        # no module global here: at interpreter exit they may be None already (contextlib was, after torch's import)
        try:
            self.close()
        except Exception:
            pass

    def alive(self) -> bool:
        """The session answers a trivial script."""
        if self.driver is None:
            return False
        try:
            return self.driver.execute_script("return 1;") == 1
        except Exception:
            return False

    def call(self, function: Callable[[], Any]) -> Any:
        """`function()` (a Selenium call); BrowserError when it fails because the browser is gone, the original
        exception when the page refused it while the browser lives."""
        if self.driver is None:
            raise BrowserError("the browser is not running; reset() starts it")
        from selenium.common.exceptions import TimeoutException

        try:
            return function()
        except TimeoutException as error:  # the renderer stopped answering (a page stuck in a loop): as good as dead
            raise BrowserError(
                f"the page did not answer in {self.command_timeout_s:g} s: {_first_line(error)}"
            ) from error
        except Exception as error:
            if self.alive():
                raise
            raise BrowserError(f"the browser died: {type(error).__name__}: {_first_line(error)}") from error

    # -- page ----------------------------------------------------------------------------------------------------

    def load(self, url: str) -> None:
        self.call(lambda: self.driver.get(url))

    def run(self, script: str, *args: Any) -> Any:
        """The value of `script` (a JavaScript function body) run in the page."""
        return self.call(lambda: self.driver.execute_script(script, *args))

    def run_async(self, script: str, *args: Any) -> Any:
        """The value `script` passes to its last argument, a callback (Selenium's execute_async_script), within the
        command timeout."""
        return self.call(lambda: self.driver.execute_async_script(script, *args))

    def screenshot(self, clip: tuple[float, float, float, float], scale: float = 1.0) -> np.ndarray:
        """The page's pixels in `clip` = (left, top, width, height) in CSS pixels, rendered at `scale` (crisp, not
        resized): a uint8 array (round(height * scale), round(width * scale), 3). Taken once the page's images are
        decoded (`PAINTED_SCRIPT`)."""
        from PIL import Image

        self.run_async(PAINTED_SCRIPT)

        left, top, width, height = clip
        box = {"x": left, "y": top, "width": width, "height": height, "scale": scale}
        reply = self.call(lambda: self.driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "clip": box}))
        image = Image.open(io.BytesIO(base64.b64decode(reply["data"]))).convert("RGB")
        size = (round(width * scale), round(height * scale))
        if image.size != size:  # rounding of a fractional scale
            image = image.resize(size)
        return np.asarray(image, dtype=np.uint8)

    # -- input (points in CSS pixels of the viewport) -----------------------------------------------------------

    def _pointer(self, steps: Callable[[Any], None], end: tuple[float, float] | None = None) -> None:
        from selenium.webdriver.common.action_chains import ActionChains

        def perform():
            chain = ActionChains(self.driver, duration=0)
            steps(chain.w3c_actions.pointer_action)
            chain.w3c_actions.perform()

        self.call(perform)
        if end is not None:
            self.pointer = end

    def click(self, x: float, y: float, count: int = 1) -> None:
        def steps(pointer):
            pointer.move_to_location(round(x), round(y))
            for _ in range(count):
                pointer.click()

        self._pointer(steps, (x, y))

    def right_click(self, x: float, y: float) -> None:
        self._pointer(lambda pointer: pointer.move_to_location(round(x), round(y)).context_click(), (x, y))

    def long_press(self, x: float, y: float, seconds: float = LONG_PRESS_S) -> None:
        self._pointer(
            lambda pointer: pointer.move_to_location(round(x), round(y)).click_and_hold().pause(seconds).release(),
            (x, y),
        )

    def move(self, x: float, y: float) -> None:
        self._pointer(lambda pointer: pointer.move_to_location(round(x), round(y)), (x, y))

    def drag(self, start: tuple[float, float], end: tuple[float, float]) -> None:
        def steps(pointer):  # pressed, moved in DRAG_MOVES pointermove events (draggable widgets want several)
            pointer.move_to_location(round(start[0]), round(start[1])).click_and_hold()
            for move in range(1, DRAG_MOVES + 1):
                share = move / DRAG_MOVES
                x, y = start[0] + share * (end[0] - start[0]), start[1] + share * (end[1] - start[1])
                pointer.move_to_location(round(x), round(y))
            pointer.release()

        self._pointer(steps, end)

    def scroll(self, x: float, y: float, delta_x: int, delta_y: int) -> None:
        from selenium.webdriver.common.action_chains import ActionChains

        def perform():
            chain = ActionChains(self.driver)
            chain.w3c_actions.wheel_action.scroll(x=round(x), y=round(y), delta_x=delta_x, delta_y=delta_y)
            chain.w3c_actions.perform()

        self.call(perform)

    def keys(self, sequence: Iterable[str], chord: bool = False) -> None:
        """Press each key of `sequence` in turn (WebDriver key values or characters), or all together (`chord`:
        held in order, released in reverse, as a hotkey)."""
        from selenium.webdriver.common.action_chains import ActionChains

        sequence = list(sequence)

        def perform():
            chain = ActionChains(self.driver, duration=0)
            keyboard = chain.w3c_actions.key_action
            if chord:
                for key in sequence:
                    keyboard.key_down(key)
                for key in reversed(sequence):
                    keyboard.key_up(key)
            else:
                for key in sequence:
                    keyboard.key_down(key).key_up(key)
            chain.w3c_actions.perform()

        self.call(perform)
