"""How every r1_gui command line reports a mistake: one `error: ...` line on stderr and exit code 2, no traceback.

    from r1_gui.cli_errors import UserError, cli_main, user_errors

    @cli_main                               # the command's entry point
    def main(argv=None):
        with user_errors():                 # argument and data checks: their ValueError/OSError are the user's
            settings = check(argv)
        if not Path(settings.dataset).exists():
            raise UserError(f"--dataset {settings.dataset} does not exist")
        train(settings)                     # an exception in here is a bug and keeps its traceback

What counts as the user's mistake is decided where the error is raised, never by catching every ValueError at the
top: a `UserError`, or a ValueError/OSError raised inside a `user_errors()` block (the checks that run before any
model loads). Anything else keeps its traceback. `R1_GUI_TRACEBACK=1` shows the traceback of user errors too.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

TRACEBACK_VARIABLE = "R1_GUI_TRACEBACK"
EXIT_CODE = 2  # as argparse exits on a bad flag
_MARK = "_r1_gui_user_error"


class UserError(ValueError):
    """A mistake the user fixes (a flag, a path, a dataset); its message says what to change."""


class UserExit(SystemExit):
    """SystemExit with code 2 whose text is the `error: ...` line (what `cli_main` raises after printing it)."""

    def __init__(self, message: str):
        super().__init__(EXIT_CODE)
        self.message = message

    def __str__(self) -> str:
        return f"error: {self.message}"


@contextmanager
def user_errors(*types: type[BaseException]) -> Iterator[None]:
    """Mark the ValueError and OSError (or ``types``) raised inside the block as the user's to fix. The exception
    keeps its type, so callers that catch it (and tests) see no difference; only `cli_main` reads the mark."""
    caught = types or (ValueError, OSError)
    try:
        yield
    except caught as error:
        setattr(error, _MARK, True)
        raise


def is_user_error(error: BaseException) -> bool:
    return isinstance(error, UserError) or getattr(error, _MARK, False)


def one_line(error: BaseException) -> str:
    """The error's message on one line (a multi-line message is joined with "; ")."""
    text = str(error).strip() or type(error).__name__
    if isinstance(error, KeyError) and error.args:
        text = str(error.args[0])
    return "; ".join(line.strip() for line in text.splitlines() if line.strip())


def cli_main(function: Callable) -> Callable:
    """Decorate a command's entry point: a user error prints `error: <message>` on stderr and raises `UserExit`
    (exit code 2), as argparse does for a bad flag; any other exception propagates with its traceback. With
    R1_GUI_TRACEBACK=1 user errors propagate too."""

    @functools.wraps(function)
    def entry(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except Exception as error:
            if not is_user_error(error) or os.environ.get(TRACEBACK_VARIABLE, "") not in ("", "0"):
                raise
            message = one_line(error)
            print(f"error: {message}", file=sys.stderr)
            raise UserExit(message) from None

    return entry
