"""`needs_browser`: a test of r1_gui/Web-v0 is skipped outside CI where Chromium or chromedriver is missing (in CI a
missing browser fails it)."""

import os

import pytest

from r1_gui.envs.web.browser import BrowserError, find_binaries


def _missing_browser() -> str | None:
    try:
        find_binaries()
    except BrowserError as error:
        return str(error)
    return None


needs_browser = pytest.mark.skipif(
    _missing_browser() is not None and not os.environ.get("CI"),
    reason=f"outside CI without a browser: {_missing_browser()}",
)
