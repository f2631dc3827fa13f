"""Old module paths that issue 22 moved, kept importable for user scripts: each name is the new module's, and the
first use of the old path warns (FutureWarning, shown by default) naming the new one.

    # r1_gui/aitw.py
    __getattr__ = forwarder(__name__, "r1_gui.scoring.aitw", renamed={"NO_POINT": "AITW_NO_POINT"})

Only paths that README.md or docs named before the move have such a module (see docs/architecture.md).
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable
from typing import Any


def forwarder(
    old: str, new: str, *, renamed: dict[str, str] | None = None, elsewhere: dict[str, str] | None = None
) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``old`` that returns ``new``'s attribute and warns that ``old`` moved.
    ``renamed`` maps an old attribute name to its new one; ``elsewhere`` maps a name to the module it moved to
    when that is not ``new``."""
    renamed, elsewhere = renamed or {}, elsewhere or {}

    def __getattr__(name: str) -> Any:
        if name.startswith("__"):  # module protocol lookups (__path__, __all__, ...) are not the user's
            raise AttributeError(name)
        target, home = renamed.get(name, name), elsewhere.get(name, new)
        module = importlib.import_module(home)
        if not hasattr(module, target):
            raise AttributeError(f"module {old!r} has no attribute {name!r}")
        warnings.warn(
            f"{old} moved to {home}: import {target} from {home} instead ({old} will be removed)",
            FutureWarning,
            stacklevel=2,
        )
        return getattr(module, target)

    return __getattr__
